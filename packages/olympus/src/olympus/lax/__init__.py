"""`olympus.lax`: the primitive operations, strict about dtypes, plus structured control flow."""

from olympus_trace.lax_ops import *  # noqa: F401,F403
from olympus_trace.lax_ops import (  # noqa: F401
    abs,
    add,
    broadcast,
    broadcast_in_dim,
    broadcasted_iota,
    concatenate,
    convert_element_type,
    cos,
    div,
    dot,
    dot_general,
    dynamic_slice,
    dynamic_update_slice,
    exp,
    iota,
    log,
    max,
    min,
    mul,
    neg,
    pad,
    reduce_max,
    reduce_min,
    reduce_sum,
    reshape,
    rev,
    select,
    select_n,
    sin,
    slice,
    squeeze,
    stop_gradient,
    sub,
    tanh,
    transpose,
)

from . import linalg  # noqa: F401,E402
from ._bessel import bessel_i0e, bessel_i1e  # noqa: F401,E402
from ._extra import *  # noqa: F401,F403,E402  (conv, reduce_window, reduce, top_k, sort, cum*, fft, ...)
from ._gather_scatter import (  # noqa: F401,E402
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather,
    scatter,
    scatter_add,
    scatter_max,
    scatter_min,
    scatter_mul,
    scatter_sub,
)
from ._incomplete_beta import regularized_incomplete_beta  # noqa: F401,E402
from ._incomplete_gamma import igamma, igamma_grad_a, igammac, random_gamma_grad  # noqa: F401,E402
from ._zeta import polygamma, zeta  # noqa: F401,E402
from .collectives import all_gather, axis_index, pmax, pmean, pmin, psum  # noqa: F401
from .control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401
