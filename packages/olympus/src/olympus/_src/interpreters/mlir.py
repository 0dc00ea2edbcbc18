"""``olympus._src.interpreters.mlir``: the private path of JAX's lowering module
(``register_lowering``, ``custom_call`` ...), as :mod:`olympus.interpreters.mlir`."""

from olympus.interpreters.mlir import *  # noqa: F403
from olympus.interpreters.mlir import __all__  # noqa: F401
