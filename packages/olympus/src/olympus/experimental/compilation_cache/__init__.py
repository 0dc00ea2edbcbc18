"""`olympus.experimental.compilation_cache`: the persistent compilation cache's controls."""

from . import compilation_cache  # noqa: E402,F401  (as JAX's package, which imports it)
