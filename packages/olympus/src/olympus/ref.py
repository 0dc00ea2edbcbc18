"""`olympus.ref`: mutable array references (JAX's ``jax.ref``; see `olympus.new_ref`)."""

from olympus_ir.prims.refs import AbstractRef

from ._src.refs import Ref, addupdate, empty_ref, free_ref, freeze, get, new_ref, set, swap

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
           "new_ref", "set", "swap"]
