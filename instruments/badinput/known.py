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
    "checkpoint.static_argnums_oob":
        "JAX raises ValueError; Olympus returns a value (ValueError: the `static_argnums` "
        "argument to `jax.checkpoint` / `jax.rem...)",
    "config.debug_nans": "error type: JAX FloatingPointError, Olympus AttributeError",
    "config.default_matmul_precision_bad": "error type: JAX ValueError, Olympus AttributeError",
    "config.disable_jit_context": "missing API (disable_jit)",
    "config.numpy_dtype_promotion_strict":
        "error type: JAX TypePromotionError, Olympus AttributeError",
    "config.numpy_rank_promotion_raise": "error type: JAX ValueError, Olympus AttributeError",
    "device.put_bad_device": "error type: JAX ValueError, Olympus TypeError",
    "grad.argnums_duplicate":
        "JAX raises TypeError; Olympus returns a value (TypeError: unsupported operand type(s) "
        "for *: 'NoneType' and 'float')",
    "grad.argnums_out_of_range": "message differs from JAX's",
    "grad.jacfwd_scalar_fn_of_tuple": "weak type differs (JAX seq; Olympus seq)",
    "grad.of_integer_pow_zero":
        "weak type differs (JAX float32[] weak [0.0]; Olympus float32[] [0.0])",
    "grad.of_pow_zero_base":
        "weak type differs (JAX float32[] ['inf']; Olympus float32[] weak ['inf'])",
    "grad.of_round": "weak type differs (JAX float32[] weak [0.0]; Olympus float32[] [0.0])",
    "jit.backend_unknown": "error type: JAX RuntimeError, Olympus TypeError",
    "jit.deleted_array_repr":
        "JAX raises RuntimeError; Olympus returns a value (RuntimeError: Array has been deleted"
        " with shape=float32[3].)",
    "jit.donate_and_static_same":
        "JAX raises ValueError; Olympus returns a value (ValueError: static_argnames and "
        "donate_argnames cannot intersect. Argume...)",
    "jit.leaked_tracer_checked": "error type: JAX Exception, Olympus UnexpectedTracerError",
    "jit.string_arg": "message differs from JAX's",
    "jvp.tangent_dtype_mismatch": "message differs from JAX's",
    "jvp.tangent_shape_mismatch": "message differs from JAX's",
    "lax.add_dtype_mismatch": "message differs from JAX's",
    "lax.argmax_axis_oob": "error type: JAX ValueError, Olympus TypeError",
    "lax.associative_scan_bad_axis": "missing API (associative_scan)",
    "lax.broadcast_in_dim_bad": "message differs from JAX's",
    "lax.cond_branch_type_mismatch": "message differs from JAX's",
    "lax.conv_bad_padding_string": "error type: JAX RuntimeError, Olympus ValueError",
    "lax.conv_channel_mismatch": "error type: JAX ValueError, Olympus TypeError",
    "kwargs.cond_operand": "JAX accepts lax.cond(..., operand=x) (deprecated spelling); "
        "Olympus raises TypeError",
    "kwargs.reshape_newshape": "JAX 0.10.2 removed jnp.reshape's newshape keyword "
        "(TypeError); Olympus still accepts it",
    "lax.dot_shape_mismatch": "error type: JAX ValueError, Olympus TypeError",
    "lax.dynamic_slice_size_too_big": "message differs from JAX's",
    "lax.dynamic_slice_wrong_rank": "error type: JAX ValueError, Olympus TypeError",
    "lax.exp_int": "message differs from JAX's",
    "lax.full_negative_shape": "missing API (full)",
    "lax.pad_negative_interior": "error type: JAX ValueError, Olympus TypeError",
    "lax.pad_too_negative": "error type: JAX ValueError, Olympus TypeError",
    "lax.scan_reverse_unroll0": "JAX returns a value; Olympus raises TypeError",
    "lax.slice_negative_start": "JAX returns a value; Olympus raises TypeError",
    "lax.slice_oob": "message differs from JAX's",
    "lax.sort_num_keys_zero": "error type: JAX ValueError, Olympus TypeError",
    "lax.squeeze_non_one": "error type: JAX ValueError, Olympus TypeError",
    "lax.while_cond_not_scalar": "message differs from JAX's",
    "linearize.call_wrong_shape": "error type: JAX ValueError, Olympus TypeError",
    "linearize.int_input": "value differs (JAX seq; Olympus seq)",
    "nn.one_hot_float_classes": "missing API (_short_repr)",
    "nn.one_hot_traced_classes":
        "error type: JAX ConcretizationTypeError, Olympus TracerIntegerConversionError",
    "numpy.add_shape_mismatch": "error type: JAX TypeError, Olympus ValueError",
    "numpy.array_mixed_arrays_scalars": "error type: JAX TypeError, Olympus ValueError",
    "numpy.array_of_none": "error type: JAX ValueError, Olympus TypeError",
    "numpy.broadcast_to_incompatible": "message differs from JAX's",
    "numpy.diagonal_bad_axes": "error type: JAX TypeError, Olympus ValueError",
    "numpy.fft_empty": "JAX returns a value; Olympus raises ValueError",
    "numpy.index_bool_mask_wrong_shape": "message differs from JAX's",
    "numpy.index_float": "error type: JAX TypeError, Olympus IndexError",
    "numpy.index_float_array": "error type: JAX TypeError, Olympus IndexError",
    "numpy.index_huge_static_int": "error type: JAX OverflowError, Olympus IndexError",
    "numpy.index_list_of_ints":
        "JAX raises TypeError; Olympus returns a value (TypeError: Using a non-tuple sequence "
        "for multidimensional indexing is...)",
    "numpy.index_slice_tracer_bound":
        "error type: JAX IndexError, Olympus TracerIntegerConversionError",
    "numpy.index_too_many": "message differs from JAX's",
    "numpy.int_power_negative_static": "message differs from JAX's",
    "numpy.isclose_shape_mismatch": "error type: JAX TypeError, Olympus ValueError",
    "numpy.linalg_inv_not_square": "message differs from JAX's",
    "numpy.linalg_matrix_power_float":
        "JAX raises TypeError; Olympus returns a value (TypeError: exponent must be an integer,"
        " got 1.5)",
    "numpy.moveaxis_duplicate": "error type: JAX TypeError, Olympus ValueError",
    "numpy.nonzero_traced": "message differs from JAX's",
    "numpy.pad_bad_mode": "error type: JAX NotImplementedError, Olympus ValueError",
    "numpy.reshape_two_minus_one": "error type: JAX TypeError, Olympus ValueError",
    "numpy.setitem": "message differs from JAX's",
    "numpy.sort_bad_kind":
        "JAX raises TypeError; Olympus returns a value (TypeError: 'kind' argument to sort is "
        "not supported. Use stable=True or...)",
    "numpy.split_uneven": "message differs from JAX's",
    "numpy.sum_axis_tracer":
        "error type: JAX ConcretizationTypeError, Olympus TracerIntegerConversionError",
    "numpy.swapaxes_oob": "error type: JAX IndexError, Olympus ValueError",
    "numpy.transpose_bad_perm": "error type: JAX TypeError, Olympus ValueError",
    "numpy.transpose_wrong_len": "error type: JAX TypeError, Olympus ValueError",
    "numpy.unravel_index_oob": "weak type differs (JAX seq; Olympus seq)",
    "numpy.where_two_args": "error type: JAX TypeError, Olympus ValueError",
    "numpy.zeros_negative_dim": "message differs from JAX's",
    "random.uniform_shape_broadcast_bad": "error type: JAX TypeError, Olympus ValueError",
    "scipy.betainc_bad":
        "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "scipy.factorial_negative": "missing API (factorial)",
    "scipy.gammainc_negative":
        "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "scipy.poch_bad": "missing API (poch)",
    "scipy.zeta_bad": "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "stages.traced_jaxpr_type": "missing API (jaxpr)",
    "vjp.cotangent_float64_numpy": "weak type differs (JAX seq; Olympus seq)",
    "vjp.float0_cotangent_for_int": "missing API (dtypes)",
    "vmap.all_none": "message differs from JAX's",
    "vmap.out_axes_none_but_batched": "message differs from JAX's",
}
