"""`olympus.experimental.hiolympus`: `olympus.experimental.hijax` under the name JAX's
module takes when `jax` is renamed `olympus` throughout (``jax.experimental.hijax``).
The same objects; see `olympus.experimental.hijax`."""

from .hijax import *  # noqa: F403
from .hijax import __all__  # noqa: F401
