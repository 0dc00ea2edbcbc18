"""Open divergences found by the corpus, each to be fixed (not acceptable, unlike
`allowlist.ALLOWED`). `nox -s badinput` reports them (with their count) without failing on
them, and fails once one is fixed and its entry not deleted; in the default test command's
subset they are strict xfails, so a fix shows up as a failure asking to delete the entry.

`KNOWN_CRASHES` are the cases that crash Olympus today (a crash is never acceptable: the
session fails on them whatever this file says; only the smoke subset marks them xfail).
"""

from __future__ import annotations

KNOWN_CRASHES: dict[str, str] = {}

KNOWN_OPEN: dict[str, str] = {
    "checkpoint.bad_policy": "JAX returns a value; Olympus raises NotImplementedError",
    "grad.argnums_out_of_range": "message differs from JAX's",
    "grad.jacfwd_scalar_fn_of_tuple": "weak type differs (JAX seq; Olympus seq)",
    "grad.of_pow_zero_base":
        "weak type differs (JAX float32[] ['inf']; Olympus float32[] weak ['inf'])",
    "jit.leaked_tracer_checked": "error type: JAX Exception, Olympus UnexpectedTracerError",
    "jvp.tangent_dtype_mismatch": "message differs from JAX's",
    "jvp.tangent_shape_mismatch": "message differs from JAX's",
    "lax.associative_scan_bad_axis": "missing API (associative_scan)",
    "lax.broadcast_in_dim_bad": "message differs from JAX's",
    "lax.cond_branch_type_mismatch": "message differs from JAX's",
    "lax.conv_bad_padding_string": "error type: JAX RuntimeError, Olympus ValueError",
    "lax.dynamic_slice_size_too_big": "message differs from JAX's",
    "lax.exp_int": "message differs from JAX's",
    "lax.full_negative_shape": "missing API (full)",
    "lax.scan_reverse_unroll0":
        "weak type differs (JAX's stacked ys of a carry started from a Python float stay weak)",
    "lax.slice_negative_start": "JAX returns a value; Olympus raises TypeError",
    "lax.slice_oob": "message differs from JAX's",
    "lax.while_cond_not_scalar": "message differs from JAX's",
    "numpy.array_mixed_arrays_scalars": "error type: JAX TypeError, Olympus ValueError",
    "numpy.broadcast_to_incompatible": "message differs from JAX's",
    "numpy.index_bool_mask_wrong_shape": "message differs from JAX's",
    "numpy.index_slice_tracer_bound":
        "error type: JAX IndexError, Olympus TracerIntegerConversionError",
    "numpy.index_too_many": "message differs from JAX's",
    "numpy.linalg_inv_not_square": "message differs from JAX's",
    "numpy.nonzero_traced": "message differs from JAX's",
    "numpy.split_uneven": "message differs from JAX's",
    "numpy.unravel_index_oob": "weak type differs (JAX seq; Olympus seq)",
    "numpy.zeros_negative_dim": "message differs from JAX's",
    "random.uniform_shape_broadcast_bad": "error type: JAX TypeError, Olympus ValueError",
    "scipy.betainc_bad":
        "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "scipy.gammainc_negative":
        "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "scipy.poch_bad": "missing API (poch)",
    "scipy.zeta_bad": "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "stages.traced_jaxpr_type": "missing API (jaxpr)",
    "vjp.cotangent_float64_numpy": "weak type differs (JAX seq; Olympus seq)",
    "vmap.all_none": "message differs from JAX's",
    "vmap.out_axes_none_but_batched": "message differs from JAX's",
}
