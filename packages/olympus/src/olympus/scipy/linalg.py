"""`olympus.scipy.linalg`: SciPy's linear-algebra functions with JAX's semantics (batched
over leading axes where JAX's are; ``overwrite_*``/``check_finite`` accepted and
ignored)."""

from ._linalg_decompositions import (
    cho_factor,
    cho_solve,
    cholesky,
    det,
    eigh,
    hessenberg,
    inv,
    lu,
    lu_factor,
    lu_solve,
    qr,
    qr_multiply,
    rsf2csf,
    schur,
    solve,
    solve_triangular,
    svd,
)
from ._linalg_matrix_functions import (
    expm,
    expm_frechet,
    funm,
    polar,
    solve_sylvester,
    sqrtm,
)
from ._linalg_special_matrices import (
    block_diag,
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)
from ._linalg_tridiagonal import eigh_tridiagonal

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
    "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet",
    "fiedler", "fiedler_companion", "funm", "hadamard", "hankel", "helmert", "hessenberg",
    "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve",
    "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester",
    "solve_triangular", "sqrtm", "svd", "toeplitz",
]
