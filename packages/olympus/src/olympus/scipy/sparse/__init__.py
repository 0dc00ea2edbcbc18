"""`olympus.scipy.sparse`: the iterative linear solvers of `linalg` (as JAX has them; no
sparse matrix types)."""

from . import linalg

__all__ = ["linalg"]
