"""``olympus._src.core``: the private path of JAX's core module, from which JAX's export
page imports `Primitive` to define a primitive of its own; the names of
:mod:`olympus.extend.core` (primitives, olympusprs) and of :mod:`olympus.core`."""

from olympus.core import *  # noqa: F403
from olympus.extend.core import *  # noqa: F403
from olympus.extend.core import __all__ as _extend_all

__all__ = list(_extend_all)
