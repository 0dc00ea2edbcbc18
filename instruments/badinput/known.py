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
    "debug.print_bad_format_key":
        "issue 17: bad debug.print format key: INTERNAL runtime error instead of KeyError at "
        "trace time",
    "device.make_olympuspr_bad":
        "JAX raises TypeError; Olympus returns a value (TypeError: the first argument must be "
        "callable)",
    "device.put_bad_device": "error type: JAX ValueError, Olympus TypeError",
    "grad.argnums_duplicate":
        "JAX raises TypeError; Olympus returns a value (TypeError: unsupported operand type(s) "
        "for *: 'NoneType' and 'float')",
    "grad.argnums_out_of_range": "message differs from JAX's",
    "grad.jacfwd_scalar_fn_of_tuple": "weak type differs (JAX seq; Olympus seq)",
    "grad.of_abs_at_zero": "issue 17: grad(jnp.abs)(0.) is 0, JAX 1",
    "grad.of_floor_divide":
        "weak type differs (JAX float32[] weak [0.0]; Olympus float32[] [0.0])",
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
    "jit.donate_argnums_out_of_range":
        "issue 17: donate_argnums out of range: the message names static_argnums",
    "jit.item_of_tracer":
        "issue 17: .item() on a tracer: AttributeError instead of ConcretizationTypeError",
    "jit.leaked_tracer_checked": "error type: JAX Exception, Olympus UnexpectedTracerError",
    "jit.not_callable_none":
        "JAX raises TypeError; Olympus returns a value (TypeError: Expected a callable value, "
        "got None)",
    "jit.static_argnums_negative_out_of_range": "message differs from JAX's",
    "jit.static_argnums_out_of_range": "message differs from JAX's",
    "jit.string_arg": "message differs from JAX's",
    "jit.tolist_of_tracer": "error type: JAX ConcretizationTypeError, Olympus AttributeError",
    "jvp.tangent_dtype_mismatch": "message differs from JAX's",
    "jvp.tangent_shape_mismatch": "message differs from JAX's",
    "lax.add_dtype_mismatch": "message differs from JAX's",
    "lax.argmax_axis_oob": "error type: JAX ValueError, Olympus TypeError",
    "lax.associative_scan_bad_axis": "missing API (associative_scan)",
    "lax.broadcast_in_dim_bad": "message differs from JAX's",
    "lax.cond_branch_type_mismatch": "message differs from JAX's",
    "lax.conv_bad_dimension_numbers":
        "issue 17: bad conv dimension_numbers: 'substring not found'",
    "lax.conv_bad_padding_string": "error type: JAX RuntimeError, Olympus ValueError",
    "lax.conv_channel_mismatch": "error type: JAX ValueError, Olympus TypeError",
    "lax.cumsum_axis_oob":
        "JAX raises ValueError; Olympus returns a value (ValueError: axis 3 is out of bounds "
        "for array of shape (3,))",
    "kwargs.cond_operand": "JAX accepts lax.cond(..., operand=x) (deprecated spelling); "
        "Olympus raises TypeError",
    "kwargs.reshape_newshape": "JAX 0.10.2 removed jnp.reshape's newshape keyword "
        "(TypeError); Olympus still accepts it",
    "lax.dot_mixed_dtypes": "issue 17: lax.dot of mixed dtypes raises, JAX promotes",
    "lax.dot_shape_mismatch": "error type: JAX ValueError, Olympus TypeError",
    "lax.dynamic_slice_negative_start":
        "value differs (JAX float32[2] [3.0, 4.0]; Olympus float32[2] [0.0, 1.0])",
    "lax.dynamic_slice_size_too_big": "message differs from JAX's",
    "lax.dynamic_slice_wrong_rank": "error type: JAX ValueError, Olympus TypeError",
    "lax.dynamic_update_slice_negative":
        "value differs (JAX float32[5] [0.0, 0.0, 0.0, 1.0]; Olympus float32[5] [1.0, 1.0, 0.0,"
        " 0.0])",
    "lax.exp_int": "message differs from JAX's",
    "lax.fori_carry_type_change": "issue 17: weak initial carry not promoted (fori_loop)",
    "lax.fori_float_bounds":
        "weak type differs (JAX float32[] weak [3.0]; Olympus float32[] [3.0])",
    "lax.fori_mixed_bound_types":
        "JAX raises TypeError; Olympus returns a value (TypeError: lower and upper arguments to"
        " fori_loop must have equal types...)",
    "lax.fori_traced_bounds": "weak type differs (JAX int32[] weak [6]; Olympus int32[] [6])",
    "lax.full_negative_shape": "missing API (full)",
    "lax.integer_pow_float_exponent":
        "JAX raises TypeError; Olympus returns a value (TypeError: unsupported operand type(s) "
        "for &: 'float' and 'int')",
    "lax.integer_pow_negative_int":
        "JAX raises TypeError; Olympus returns a value (TypeError: Integers cannot be raised to"
        " negative powers, got integer_po...)",
    "lax.pad_negative_interior": "error type: JAX ValueError, Olympus TypeError",
    "lax.pad_too_negative": "error type: JAX ValueError, Olympus TypeError",
    "lax.reduce_axis_out_of_range": "issue 17: out-of-range axis passes silently in lax.reduce",
    "lax.reduce_duplicate_axes": "error type: JAX ValueError, Olympus TypeError",
    "lax.reduce_non_scalar_init":
        "JAX raises ValueError; Olympus returns a value (ValueError: reduce found non-scalar "
        "initial value: [(2,)])",
    "lax.scan_carry_type_change": "issue 17: weak initial carry not promoted (scan)",
    "lax.scan_reverse_unroll0": "JAX returns a value; Olympus raises TypeError",
    "lax.slice_negative_start": "JAX returns a value; Olympus raises TypeError",
    "lax.slice_oob": "message differs from JAX's",
    "lax.sort_dimension_out_of_range":
        "issue 17: out-of-range dimension passes silently in lax.sort",
    "lax.sort_num_keys_zero": "error type: JAX ValueError, Olympus TypeError",
    "lax.squeeze_non_one": "error type: JAX ValueError, Olympus TypeError",
    "lax.while_carry_type_change": "issue 17: weak initial carry not promoted (while_loop)",
    "lax.while_cond_not_scalar": "message differs from JAX's",
    "linearize.call_wrong_shape": "error type: JAX ValueError, Olympus TypeError",
    "linearize.int_input": "value differs (JAX seq; Olympus seq)",
    "nn.one_hot_float_classes": "missing API (_short_repr)",
    "nn.one_hot_traced_classes":
        "error type: JAX ConcretizationTypeError, Olympus TracerIntegerConversionError",
    "numpy.add_list":
        "JAX raises TypeError; Olympus returns a value (TypeError: unsupported operand type(s) "
        "for +: 'ArrayImpl' and 'list')",
    "numpy.add_shape_mismatch": "error type: JAX TypeError, Olympus ValueError",
    "numpy.array_complex_to_float":
        "JAX raises TypeError; Olympus returns a value (TypeError: float() argument must be a "
        "string or a real number, not 'com...)",
    "numpy.array_float_nan_to_int":
        "JAX raises ValueError; Olympus returns a value (ValueError: cannot convert float NaN "
        "to integer)",
    "numpy.array_inf_to_int":
        "JAX raises OverflowError; Olympus returns a value (OverflowError: cannot convert float"
        " infinity to integer)",
    "numpy.array_int8_overflow":
        "issue 17: jnp.array(300, dtype=int8) wraps, JAX raises OverflowError",
    "numpy.array_mixed_arrays_scalars": "error type: JAX TypeError, Olympus ValueError",
    "numpy.array_of_none": "error type: JAX ValueError, Olympus TypeError",
    "numpy.array_uint8_negative":
        "issue 17: jnp.array(-1, dtype=uint8) wraps, JAX raises OverflowError",
    "numpy.asarray_uint32_negative_list":
        "issue 17: jnp.asarray([-1, 2], dtype=uint32) wraps, JAX raises OverflowError",
    "numpy.broadcast_to_incompatible": "message differs from JAX's",
    "numpy.diagonal_bad_axes": "error type: JAX TypeError, Olympus ValueError",
    "numpy.divmod_by_zero": "issue 17: integer divmod by 0 differs from JAX",
    "numpy.fft_empty": "JAX returns a value; Olympus raises ValueError",
    "numpy.index_bool_mask_wrong_shape": "message differs from JAX's",
    "numpy.index_float": "error type: JAX TypeError, Olympus IndexError",
    "numpy.index_float_array": "error type: JAX TypeError, Olympus IndexError",
    "numpy.index_huge_static_int": "error type: JAX OverflowError, Olympus IndexError",
    "numpy.index_list_of_ints":
        "JAX raises TypeError; Olympus returns a value (TypeError: Using a non-tuple sequence "
        "for multidimensional indexing is...)",
    "numpy.index_oob_negative_static":
        "issue 17: static out-of-range index raises IndexError, JAX clamps",
    "numpy.index_oob_static": "issue 17: static out-of-range index raises IndexError, JAX clamps",
    "numpy.index_oob_static_jit":
        "issue 17: static out-of-range index raises IndexError, JAX clamps",
    "numpy.index_slice_tracer_bound":
        "error type: JAX IndexError, Olympus TracerIntegerConversionError",
    "numpy.index_too_many": "message differs from JAX's",
    "numpy.int8_plus_python_int_too_big": "JAX returns a value; Olympus raises OverflowError",
    "numpy.int_floor_divide_by_zero":
        "issue 17: integer // 0 differs from XLA's result JAX returns",
    "numpy.int_power_negative_array":
        "value differs (JAX int32[3] [1, 0, 2111105451]; Olympus int32[3] [1, 0, 0])",
    "numpy.int_power_negative_static": "message differs from JAX's",
    "numpy.int_remainder_by_zero": "issue 17: integer % 0 differs from XLA's result JAX returns",
    "numpy.isclose_shape_mismatch": "error type: JAX TypeError, Olympus ValueError",
    "numpy.linalg_cholesky_not_pd":
        "issue 17: cholesky of a non-positive-definite matrix: all nan, JAX keeps the 0 above "
        "the diagonal",
    "numpy.linalg_inv_not_square": "message differs from JAX's",
    "numpy.linalg_matrix_power_float":
        "JAX raises TypeError; Olympus returns a value (TypeError: exponent must be an integer,"
        " got 1.5)",
    "numpy.moveaxis_duplicate": "error type: JAX TypeError, Olympus ValueError",
    "numpy.nonzero_traced": "message differs from JAX's",
    "numpy.pad_bad_mode": "error type: JAX NotImplementedError, Olympus ValueError",
    "numpy.reshape_tracer_shape":
        "error type: JAX TypeError, Olympus TracerIntegerConversionError",
    "numpy.reshape_two_minus_one": "error type: JAX TypeError, Olympus ValueError",
    "numpy.setitem": "message differs from JAX's",
    "numpy.sort_bad_kind":
        "JAX raises TypeError; Olympus returns a value (TypeError: 'kind' argument to sort is "
        "not supported. Use stable=True or...)",
    "numpy.split_uneven": "message differs from JAX's",
    "numpy.std_ddof_equal_n": "issue 17: jnp.std with ddof == n is inf, JAX nan",
    "numpy.sum_axis_tracer":
        "error type: JAX ConcretizationTypeError, Olympus TracerIntegerConversionError",
    "numpy.swapaxes_oob": "error type: JAX IndexError, Olympus ValueError",
    "numpy.tile_float_reps": "issue 17: jnp.tile with a float count passes",
    "numpy.transpose_bad_perm": "error type: JAX TypeError, Olympus ValueError",
    "numpy.transpose_wrong_len": "error type: JAX TypeError, Olympus ValueError",
    "numpy.uint8_plus_negative_python_int": "JAX returns a value; Olympus raises OverflowError",
    "numpy.unravel_index_oob": "weak type differs (JAX seq; Olympus seq)",
    "numpy.view_bad_itemsize": "missing API (view)",
    "numpy.where_two_args": "error type: JAX TypeError, Olympus ValueError",
    "numpy.zeros_negative_dim": "message differs from JAX's",
    "random.key_in_jit_numpy": "error type: JAX TracerArrayConversionError, Olympus TypeError",
    "random.key_to_numpy": "issue 17: a key array converts to NumPy (object array)",
    "random.uniform_shape_broadcast_bad": "error type: JAX TypeError, Olympus ValueError",
    "scipy.betainc_bad":
        "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "scipy.factorial_negative": "missing API (factorial)",
    "scipy.gammainc_negative":
        "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "scipy.poch_bad": "missing API (poch)",
    "scipy.zeta_bad": "weak type differs (JAX float32[] weak ['nan']; Olympus float32[] ['nan'])",
    "stages.trace_callable": "issue 17: jit(f).trace(x) is not callable",
    "stages.traced_jaxpr_type": "missing API (jaxpr)",
    "vjp.cotangent_float64_numpy": "weak type differs (JAX seq; Olympus seq)",
    "vjp.float0_cotangent_for_int": "missing API (dtypes)",
    "vjp.wrong_cotangent_dtype":
        "issue 17: wrong-dtype cotangent to a vjp function: lax.mul TypeError instead of JAX's "
        "ValueError",
    "vjp.wrong_cotangent_shape": "message differs from JAX's",
    "vmap.all_none": "message differs from JAX's",
    "vmap.out_axes_none_but_batched": "message differs from JAX's",
    "vmap.unhashable_static_under_vmap":
        "issue 17: unhashable static argument passes silently under vmap",
}
