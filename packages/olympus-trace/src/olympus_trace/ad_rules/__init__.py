"""JVP and transpose rules, one module per primitive family (the same families as
`olympus_ir.prims`). Importing this package fills `ad.jvp_rules` and `ad.transpose_rules`.

callbacks: debug_callback; collectives: psum, pmax, pmin, all_gather, axis_index;
custom_derivatives: custom_jvp_call, custom_vjp_call, custom_lin, checkpoint; convolution,
linalg_lapack (LAPACK, fft, top_k), windowed (reduce_window); loops: scan and while."""

from . import (  # noqa: F401
    callbacks,
    collectives,
    control_flow,
    convolution,
    cumulative,
    custom_derivatives,
    elementwise,
    indexing,
    linalg,
    linalg_lapack,
    loops,
    misc,
    reductions,
    shape_ops,
    sorting,
    windowed,
)
