"""`olympus.lax.linalg`: matrix decompositions and triangular solves (JAX's
``jax.lax.linalg`` signatures), on batches of matrices in the trailing two dimensions.
On CPU they run LAPACK. The wrappers are olympus-trace's (`olympus_trace.lax_ops.linalg_lapack`)."""

from olympus_trace.lax_ops.linalg_lapack import (
    cholesky,
    eig,
    eigh,
    lu,
    qr,
    svd,
    symmetrize,
    triangular_solve,
)

__all__ = ["cholesky", "triangular_solve", "lu", "qr", "eigh", "eig", "svd", "symmetrize"]
