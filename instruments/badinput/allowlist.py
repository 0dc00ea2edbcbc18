"""Reviewed divergences from JAX that are acceptable (kept short).

Each entry: the case id, what JAX does, what Olympus does, and why that is acceptable
(typically: JAX itself crashes or gives a cryptic error, and Olympus's clean error is
better). A crash or hang of Olympus is never acceptable and cannot be listed here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Allowed:
    jax: str
    olympus: str
    why: str


_HUGE = Allowed(
    jax="aborts the process (SIGABRT in XLA: overflow in static extent product)",
    olympus="ValueError: array of shape ... and dtype ... is too big (raised when the type is "
            "made, before calling into XLA)",
    why="JAX crashes; a clean error is what issue 17 asks for")

ALLOWED: dict[str, Allowed] = {
    "config.bad_value_type": Allowed(
        jax="accepts 'maybe' for a boolean option (returns None; the string is kept as the "
            "option's value and read as truthy later)",
        olympus="ValueError: invalid truth value 'maybe' for environment 'olympus_enable_x64'",
        why="JAX silently stores a wrong value; a clean error at the call is what issue 17 "
            "asks for"),
    "numpy.zeros_huge_shape": _HUGE,
    "numpy.zeros_huge_1d": _HUGE,
    "numpy.ones_product_overflows_int64": _HUGE,
    "device.block_until_ready_deleted": Allowed(
        jax="JaxRuntimeError: INVALID_ARGUMENT: BlockHostUntilReady() called on deleted or donated buffer",
        olympus="RuntimeError: Array has been deleted ... (JaxRuntimeError is a RuntimeError)",
        why="both are RuntimeErrors; Olympus's says what happened in Python terms"),
    "grad.argnums_empty_tuple": Allowed(
        jax="ValueError: max() arg is an empty sequence (an internal error)",
        olympus="returns () (the gradient with respect to no argument)",
        why="JAX's error is an accident of its implementation; an empty tuple of gradients is the consistent answer"),
    "lax.conv_zero_stride": Allowed(
        jax="ValueError: Cannot lower jaxpr with verifier errors",
        olympus="TypeError: window_strides must be positive",
        why="JAX's error comes from the MLIR verifier"),
    "lax.reshape_bad": Allowed(
        jax="ValueError: Cannot lower jaxpr with verifier errors",
        olympus="TypeError naming the sizes",
        why="JAX's error comes from the MLIR verifier"),
    "lax.slice_zero_stride": Allowed(
        jax="ZeroDivisionError",
        olympus="TypeError: slice strides must be positive",
        why="JAX's error is an internal arithmetic accident"),
    "nn.glu_odd_axis": Allowed(
        jax="AssertionError: axis size must be divisible by 2",
        olympus="ValueError with the same text and the size",
        why="an assert is not an API error; the value is the argument's fault"),
    "nn.initializers_negative_shape": Allowed(
        jax="MLIRError: Invalid type",
        olympus="TypeError: shape dimensions must be non-negative",
        why="JAX fails inside MLIR"),
    "numpy.histogram_bad_range": Allowed(
        jax="silently returns counts for the reversed range",
        olympus="ValueError: max must be larger than min (NumPy's)",
        why="NumPy raises here; JAX's counts are meaningless"),
    "numpy.histogram_negative_bins": Allowed(
        jax="IndexError: index is out of bounds for axis 0 with size 0",
        olympus="ValueError: bins must be positive",
        why="JAX's error is an internal indexing accident"),
    "numpy.identity_huge": Allowed(
        jax="aborts the process (SIGABRT in XLA: overflow in static extent product)",
        olympus="ValueError: array is too big",
        why="JAX crashes; Olympus raises a Python error, as issue 17 asks"),
    "numpy.median_empty": Allowed(
        jax="TypeError from a gather (slice size out of range)",
        olympus="nan, as NumPy",
        why="JAX's error leaks an internal gather; NumPy's answer (nan) is the documented one"),
    "numpy.repeat_negative": Allowed(
        jax="TypeError from broadcast_in_dim (a negative shape)",
        olympus="ValueError: repeats may not contain negative values (NumPy's)",
        why="JAX's error names an internal op, not the argument"),
    "numpy.reshape_minus_one_zero_size": Allowed(
        jax="ZeroDivisionError: integer modulo by zero",
        olympus="TypeError naming the shapes",
        why="JAX's error is an internal arithmetic accident"),
    "numpy.split_zero": Allowed(
        jax="ZeroDivisionError: integer division or modulo by zero",
        olympus="ValueError: number sections must be larger than 0 (NumPy's)",
        why="JAX's error is an internal arithmetic accident; Olympus's is NumPy's"),
    "numpy.tile_negative_reps": Allowed(
        jax="MLIRError: Invalid type (from the compiler)",
        olympus="ValueError: negative dimensions are not allowed",
        why="JAX fails inside MLIR with no mention of reps"),
    "random.split_negative": Allowed(
        jax="MLIRError: Invalid type",
        olympus="TypeError: shape dimensions must be non-negative",
        why="JAX fails inside MLIR"),
    "random.uniform_negative_shape": Allowed(
        jax="MLIRError: Invalid type",
        olympus="TypeError: shape dimensions must be non-negative",
        why="JAX fails inside MLIR"),
    "stages.shape_dtype_struct_float_dim": Allowed(
        jax="accepts shape (2.5,) silently",
        olympus="TypeError: shape must be a sequence of integers",
        why="JAX builds an unusable struct that fails later, far from the cause"),
    "stages.shape_dtype_struct_negative": Allowed(
        jax="accepts shape (-1,) silently",
        olympus="TypeError: shape dimensions must be non-negative",
        why="JAX builds an unusable struct that fails later, far from the cause"),
}
