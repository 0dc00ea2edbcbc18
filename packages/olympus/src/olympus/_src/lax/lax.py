"""``olympus._src.lax.lax``: `olympus.lax`'s functions under the module path JAX's
"writing new primitives" page imports them from."""

from olympus.lax import *  # noqa: F403
from olympus.lax import __all__  # noqa: F401
