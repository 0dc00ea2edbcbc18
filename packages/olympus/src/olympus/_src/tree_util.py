"""``olympus._src.tree_util``: the private path of JAX's pytree module, from which JAX's
own docs import `flatten_one_level`; the same functions as :mod:`olympus.tree_util`."""

from olympus.tree_util import *  # noqa: F403
from olympus.tree_util import __all__  # noqa: F401
