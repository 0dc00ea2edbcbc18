"""The fuzzer's value types and the XLA integer semantics that differ from NumPy's.

A value's type is a short key: a strong dtype (``"int8"``, ``"bfloat16"``), a weakly typed
array (``"int32w"``, ``"float32w"``: what a Python scalar becomes once it is an array) or a
Python scalar passed as is (``"py:int"``, ``"py:float"``, ``"py:bool"``). JAX's promotion
and weak-type rules over these keys are not re-implemented here: they are recorded from
reference JAX (``record_jax_rules.py`` -> ``jax_rules.json``) and looked up.

This module imports NumPy and ml_dtypes only: the recorder runs it under reference JAX.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

STRONG = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32",
          "float16", "bfloat16", "float32")
WEAK = ("int32w", "float32w")
PY = ("py:bool", "py:int", "py:float")
TYPES = STRONG + WEAK + PY

FLOATS = ("float16", "bfloat16", "float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED

_PY_DTYPE = {"py:bool": "bool", "py:int": "int32", "py:float": "float32"}


def np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def dtype_name(dtype) -> str:
    """The name of a NumPy (or ml_dtypes) dtype as used in type keys."""
    return np.dtype(dtype).name


def dtype_of(key: str) -> str:
    """The dtype a value of this type has (a Python int counts as int32)."""
    if key in _PY_DTYPE:
        return _PY_DTYPE[key]
    return key[:-1] if key.endswith("w") else key


def is_weak(key: str) -> bool:
    return key.endswith("w") or key in ("py:int", "py:float")


def is_py(key: str) -> bool:
    return key.startswith("py:")


def make_key(dtype_name_: str, weak: bool) -> str:
    return dtype_name_ + ("w" if weak else "")


def kind(key: str) -> str:
    """'b', 'i', 'u' or 'f': the NumPy kind of a type's dtype."""
    d = dtype_of(key)
    if d == "bool":
        return "b"
    if d in FLOATS:
        return "f"
    return "u" if d.startswith("uint") else "i"


def eps(dtype: str) -> float:
    return float(ml_dtypes.finfo(np_dtype(dtype)).eps)


def max_finite(dtype: str) -> float:
    return float(ml_dtypes.finfo(np_dtype(dtype)).max)


# ------------------------------------------------ XLA integer semantics (recorded from JAX)
# Reference JAX 0.10.2 returns XLA's results where NumPy raises, warns or differs. The rules
# below were read off reference JAX's outputs (record_jax_rules.py records the evidence in
# jax_rules.json under "special"; test_fuzz_harness.py checks these rules against it).


def _bits(dtype: str) -> int:
    return np.iinfo(np_dtype(dtype)).bits


def wrap(value: int, dtype: str) -> int:
    """A Python int reduced modulo 2**bits into the dtype's range (two's complement)."""
    info = np.iinfo(np_dtype(dtype))
    span = 1 << info.bits
    v = (value - info.min) % span + info.min
    return int(v)


def _elementwise(fn, a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    out = [fn(int(x), int(y)) for x, y in zip(a.ravel().tolist(), b.ravel().tolist())]
    return np.array([wrap(v, dtype) for v in out], dtype=np_dtype(dtype)).reshape(a.shape)


def int_floor_divide(a, b, dtype: str) -> np.ndarray:
    """jnp.floor_divide on integers: by zero gives -1 for 0 // 0 and -2 otherwise (signed),
    all ones (unsigned); MIN // -1 wraps to MIN."""
    unsigned = dtype in UNSIGNED

    def one(x, y):
        if y == 0:
            return -1 if unsigned or x == 0 else -2
        return x // y

    return _elementwise(one, a, b, dtype)


def int_remainder(a, b, dtype: str) -> np.ndarray:
    """jnp.remainder / jnp.fmod on integers: x % 0 == 0 (NumPy agrees, with a warning)."""
    return _elementwise(lambda x, y: 0 if y == 0 else x % y, a, b, dtype)


def int_fmod(a, b, dtype: str) -> np.ndarray:
    def one(x, y):
        if y == 0:
            return 0
        r = abs(x) % abs(y)
        return -r if x < 0 else r

    return _elementwise(one, a, b, dtype)


def int_trunc_divide(a, b, dtype: str) -> np.ndarray:
    """lax.div on integers: rounds toward zero; by zero gives all ones (-1 / max)."""

    def one(x, y):
        if y == 0:
            return -1
        q = abs(x) // abs(y)
        return -q if (x < 0) != (y < 0) else q

    return _elementwise(one, a, b, dtype)


def int_trunc_remainder(a, b, dtype: str) -> np.ndarray:
    """lax.rem on integers: the sign of the dividend; x rem 0 == x."""

    def one(x, y):
        if y == 0:
            return x
        r = abs(x) % abs(y)
        return -r if x < 0 else r

    return _elementwise(one, a, b, dtype)


def int_shift_left(a, b, dtype: str) -> np.ndarray:
    """Shifting by a negative amount or by >= the bit width gives 0."""
    bits = _bits(dtype)
    return _elementwise(lambda x, y: 0 if y < 0 or y >= bits else x << y, a, b, dtype)


def int_shift_right(a, b, dtype: str) -> np.ndarray:
    """Arithmetic for signed types (out-of-range amounts fill with the sign), logical for
    unsigned (out-of-range amounts give 0)."""
    bits = _bits(dtype)

    def one(x, y):
        if y < 0 or y >= bits:
            return -1 if x < 0 else 0
        return x >> y

    return _elementwise(one, a, b, dtype)


def int_power(a, b, dtype: str) -> np.ndarray:
    """Integer power with an integer-array exponent (NumPy raises for negative exponents):
    JAX only looks at the exponent's low six bits (y & 63; larger powers of any base > 1
    overflow anyway), and 0 to any nonzero power is 0 (so 3 ** -1 == 3 ** 63 and
    2 ** 100 == 2 ** 36 in int16)."""

    def one(x, y):
        if x == 0 and y != 0:
            return 0
        return pow(x, y & 63, 1 << 64)  # congruent modulo 2**bits, wrapped below

    return _elementwise(one, a, b, dtype)


def normalize_index(i: int, n: int) -> int:
    """JAX's rule for reading an array at an integer index (static or traced): a negative
    index counts from the end, and the result is clamped into [0, n - 1]."""
    if i < 0:
        i += n
    return min(max(i, 0), n - 1)


def dynamic_start(start: int, dim: int, size: int) -> int:
    """lax.dynamic_slice's start rule: a negative start counts from the end, then the start
    is clamped so that the slice fits."""
    if start < 0:
        start += dim
    return min(max(start, 0), dim - size)
