"""JVP and transpose rules, one module per primitive family (the same families as
`olympus_ir.prims`). Importing this package fills `ad.jvp_rules` and `ad.transpose_rules`."""

from . import (  # noqa: F401,E402  (conv, LAPACK, fft, top_k, reduce_window)
    callbacks,  # noqa: F401,E402  (debug_callback)
    collectives,  # noqa: F401  (axis_index, all_gather transpose)
    control_flow,  # noqa: F401
    convolution,
    cumulative,  # noqa: F401
    elementwise,  # noqa: F401
    indexing,  # noqa: F401
    linalg,  # noqa: F401
    linalg_lapack,
    loops,  # noqa: F401  (scan and while)
    misc,  # noqa: F401
    reductions,  # noqa: F401
    shape_ops,  # noqa: F401
    sorting,  # noqa: F401
    windowed,
)
