"""olympus.export: shape polymorphism (symbolic shapes).

The names here are the symbolic-shape part of JAX's ``jax.export``; `Exported`,
serialization and ``call`` come with the export module itself.
"""

from olympus_ir.shape_poly import SymbolicScope, is_symbolic_dim, symbolic_shape

from .._src.shape_poly import symbolic_args_specs

__all__ = ["symbolic_shape", "symbolic_args_specs", "SymbolicScope", "is_symbolic_dim"]
