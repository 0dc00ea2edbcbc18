"""Type promotion, weak types and canonicalization, checked against JAX's documented
promotion table (https://docs.jax.dev/en/latest/type_promotion.html)."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from olympus_ir import dtypes
from olympus_ir.avals import ShapedArray

# The abbreviations of JAX's table. i*, f*, c* are the weak types (Python scalars).
ABBREV = {
    "b1": np.dtype(bool), "u1": np.dtype(np.uint8), "u2": np.dtype(np.uint16),
    "u4": np.dtype(np.uint32), "u8": np.dtype(np.uint64), "i1": np.dtype(np.int8),
    "i2": np.dtype(np.int16), "i4": np.dtype(np.int32), "i8": np.dtype(np.int64),
    "bf": np.dtype(ml_dtypes.bfloat16), "f2": np.dtype(np.float16),
    "f4": np.dtype(np.float32), "f8": np.dtype(np.float64), "c8": np.dtype(np.complex64),
    "c16": np.dtype(np.complex128),
}
WEAK = {"i*": 1, "f*": 1.0, "c*": 1j}  # a Python scalar of each weak type
WEAK_X64 = {"i*": np.dtype(np.int64), "f*": np.dtype(np.float64), "c*": np.dtype(np.complex128)}

# JAX's binary promotion table with x64 enabled: row x column -> result.
TABLE = """
     b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
b1   b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
u1   u1  u1  u2  u4  u8  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 u1  f*  c*
u2   u2  u2  u2  u4  u8  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 u2  f*  c*
u4   u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 u4  f*  c*
u8   u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 u8  f*  c*
i1   i1  i2  i4  i8  f*  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i1  f*  c*
i2   i2  i2  i4  i8  f*  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 i2  f*  c*
i4   i4  i4  i4  i8  f*  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 i4  f*  c*
i8   i8  i8  i8  i8  f*  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 i8  f*  c*
bf   bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  c8  c16 bf  bf  c8
f2   f2  f2  f2  f2  f2  f2  f2  f2  f2  f4  f2  f4  f8  c8  c16 f2  f2  c8
f4   f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  c8  c16 f4  f4  c8
f8   f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  c16 c16 f8  f8  c16
c8   c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c16 c8  c16 c8  c8  c8
c16  c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16
i*   i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
f*   f*  f*  f*  f*  f*  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 f*  f*  c*
c*   c*  c*  c*  c*  c*  c*  c*  c*  c*  c8  c8  c8  c16 c8  c16 c*  c*  c*
"""


def _parse_table():
    lines = [ln.split() for ln in TABLE.strip().splitlines()]
    cols = lines[0]
    return {(row[0], c): v for row in lines[1:] for c, v in zip(cols, row[1:], strict=True)}


PROMOTION = _parse_table()
STRONG = list(ABBREV)
X32 = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
       np.dtype(np.float64): np.dtype(np.float32),
       np.dtype(np.complex128): np.dtype(np.complex64)}


@pytest.fixture
def x64():
    old = dtypes.is_x64_enabled()
    dtypes.config.set_x64(True)
    try:
        yield
    finally:
        dtypes.config.set_x64(old)


@pytest.fixture
def x32():
    old = dtypes.is_x64_enabled()
    dtypes.config.set_x64(False)
    try:
        yield
    finally:
        dtypes.config.set_x64(old)


def _expected(code: str, x64: bool) -> tuple[np.dtype, bool]:
    """The dtype and weak flag a table entry stands for."""
    if code in WEAK_X64:
        dt, weak = WEAK_X64[code], True
    else:
        dt, weak = ABBREV[code], False
    return (dt if x64 else X32.get(dt, dt)), weak


def test_table_is_complete_and_symmetric():
    assert len(PROMOTION) == 18 * 18
    for a, b in itertools.product(list(ABBREV) + list(WEAK), repeat=2):
        assert PROMOTION[a, b] == PROMOTION[b, a], (a, b)
    assert set(ABBREV.values()) == set(dtypes.ALL_DTYPES)


@pytest.mark.parametrize("a", STRONG)
def test_promote_types_x64(x64, a):
    for b in STRONG:
        # promote_types of two strong types is never weak: f* (u64 with a signed int)
        # means the default float, float64 under x64.
        want, _ = _expected(PROMOTION[a, b], True)
        got = dtypes.promote_types(ABBREV[a], ABBREV[b])
        assert got == want, f"promote_types({a}, {b}) = {got}, JAX says {want}"


@pytest.mark.parametrize("a", STRONG)
def test_promote_types_x32_canonicalizes(x32, a):
    for b in STRONG:
        want, _ = _expected(PROMOTION[a, b], False)
        got = dtypes.promote_types(ABBREV[a], ABBREV[b])
        assert got == want, f"promote_types({a}, {b}) = {got}, want {want} with x64 off"
        assert got not in X32  # never a 64-bit type when x64 is off


@pytest.mark.parametrize("enabled", [True, False])
def test_result_type_full_table_with_weak_types(enabled):
    """Every pair of the 18 lattice nodes, with weak types given as Python scalars and as
    weakly typed avals."""
    old = dtypes.is_x64_enabled()
    dtypes.config.set_x64(enabled)
    try:
        def operands(code):
            if code in WEAK:
                dt = WEAK_X64[code] if enabled else X32[WEAK_X64[code]]
                return [WEAK[code], ShapedArray((), dt, weak_type=True)]
            return [ABBREV[code], ShapedArray((2,), ABBREV[code])]

        for a, b in itertools.product(list(ABBREV) + list(WEAK), repeat=2):
            want = _expected(PROMOTION[a, b], enabled)
            for x, y in itertools.product(operands(a), operands(b)):
                got = dtypes.result_type(x, y, return_weak_type_flag=True)
                assert got == want, f"result_type({a}={x!r}, {b}={y!r}) = {got}, want {want}"
    finally:
        dtypes.config.set_x64(old)


def test_weak_type_examples(x32):
    i32 = ShapedArray((3,), np.int32)
    f32 = ShapedArray((3,), np.float32)
    # JAX: i32 (strong) joined with f* is f*: a weak float of the default width.
    assert dtypes.result_type(i32, 1.0, return_weak_type_flag=True) == (np.float32, True)
    # a strong float keeps its width and strength
    assert dtypes.result_type(f32, 1.0, return_weak_type_flag=True) == (np.float32, False)
    assert dtypes.result_type(np.float16, 1.0, return_weak_type_flag=True) == (np.float16, False)
    assert dtypes.result_type(dtypes.bfloat16, 2, return_weak_type_flag=True) == (
        dtypes.bfloat16, False)
    # Python int + Python float -> weak float32
    assert dtypes.result_type(1, 1.0, return_weak_type_flag=True) == (np.float32, True)
    assert dtypes.result_type(1, return_weak_type_flag=True) == (np.int32, True)
    assert dtypes.result_type(2.0, 1j, return_weak_type_flag=True) == (np.complex64, True)
    # a Python int does not widen a small int; a Python bool is a strong bool
    assert dtypes.result_type(np.uint8, 1, return_weak_type_flag=True) == (np.uint8, False)
    assert dtypes.result_type(True, False, return_weak_type_flag=True) == (np.bool_, False)
    assert dtypes.result_type(True, 1, return_weak_type_flag=True) == (np.int32, True)
    # f32 array + Python complex -> complex64 strong
    assert dtypes.result_type(f32, 1j, return_weak_type_flag=True) == (np.complex64, False)


def test_weak_type_examples_x64(x64):
    i32 = ShapedArray((3,), np.int32)
    assert dtypes.result_type(i32, 1.0, return_weak_type_flag=True) == (np.float64, True)
    assert dtypes.result_type(i32, 1, return_weak_type_flag=True) == (np.int32, False)
    assert dtypes.result_type(1, 1.0, return_weak_type_flag=True) == (np.float64, True)
    assert dtypes.result_type(np.float32, 1.0) == np.float32


def test_result_type_of_numpy_dtypes_and_arrays_is_strong(x64):
    # np.dtype('int64') == int is True in numpy; it must still be a strong int64.
    assert dtypes.result_type(np.dtype(np.int64), np.dtype(np.int8),
                              return_weak_type_flag=True) == (np.int64, False)
    assert dtypes.result_type(np.dtype(np.float64), np.dtype(np.int32),
                              return_weak_type_flag=True) == (np.float64, False)
    assert dtypes.result_type(np.zeros(3, np.int16), np.zeros(2, np.uint8)) == np.int16
    assert dtypes.result_type(np.arange(3), 1.0, return_weak_type_flag=True) == (
        np.float64, True)


def test_result_type_requires_an_argument():
    with pytest.raises(ValueError):
        dtypes.result_type()


@pytest.mark.parametrize("dt", dtypes.ALL_DTYPES, ids=lambda d: d.name)
def test_canonicalize_dtype(dt):
    old = dtypes.is_x64_enabled()
    try:
        dtypes.config.set_x64(True)
        assert dtypes.canonicalize_dtype(dt) == dt
        dtypes.config.set_x64(False)
        assert dtypes.canonicalize_dtype(dt) == X32.get(dt, dt)
        assert dtypes.canonicalize_dtype(dt.name) == X32.get(dt, dt)
    finally:
        dtypes.config.set_x64(old)


def test_canonicalize_python_types_and_defaults(x32):
    assert dtypes.canonicalize_dtype(int) == np.int32
    assert dtypes.canonicalize_dtype(float) == np.float32
    assert dtypes.canonicalize_dtype(complex) == np.complex64
    assert dtypes.canonicalize_dtype(bool) == np.bool_
    assert (dtypes.default_int(), dtypes.default_float(), dtypes.default_complex()) == (
        np.int32, np.float32, np.complex64)
    dtypes.config.set_x64(True)
    assert dtypes.canonicalize_dtype(int) == np.int64
    assert (dtypes.default_int(), dtypes.default_float(), dtypes.default_complex()) == (
        np.int64, np.float64, np.complex128)
    assert dtypes.python_scalar_dtype(3) == np.int64


@pytest.mark.parametrize("bad", ["U3", object, np.dtype(np.longdouble)])
def test_canonicalize_rejects_unsupported(bad):
    with pytest.raises(TypeError, match="does not support"):
        dtypes.canonicalize_dtype(bad)


def test_short_names_round_trip():
    names = {dtypes.short_name(dt) for dt in dtypes.ALL_DTYPES}
    assert len(names) == 15
    assert dtypes.short_name(dtypes.bfloat16) == "bf16"
    assert dtypes.short_name(np.int32) == "i32"
    for dt in dtypes.ALL_DTYPES:
        assert dtypes.from_short_name(dtypes.short_name(dt)) == dt
        assert dtypes.dtype(dtypes.short_name(dt)) == dt
    with pytest.raises(ValueError):
        dtypes.from_short_name("f31")


def test_predicates():
    assert dtypes.is_float(dtypes.bfloat16) and dtypes.is_inexact(dtypes.bfloat16)
    assert not dtypes.is_integer(dtypes.bfloat16)
    assert dtypes.is_complex(np.complex64) and not dtypes.is_float(np.complex64)
    assert dtypes.is_signed_int(np.int8) and not dtypes.is_signed_int(np.uint8)
    assert dtypes.is_unsigned_int(np.uint64) and dtypes.is_integer(np.uint64)
    assert dtypes.is_bool(np.bool_) and not dtypes.is_integer(np.bool_)
    assert dtypes.finfo(dtypes.bfloat16).bits == 16
    assert dtypes.iinfo(np.int16).max == 32767


# --- the abstract hierarchy beyond NumPy's (as jax.dtypes places these types) -------------


@pytest.mark.parametrize("t,parent,want", [
    (dtypes.bfloat16, np.floating, True), (dtypes.bfloat16, np.inexact, True),
    (dtypes.bfloat16, np.integer, False), (ml_dtypes.float8_e4m3fn, np.floating, True),
    (ml_dtypes.float8_e5m2, np.number, True), (ml_dtypes.int4, np.signedinteger, True),
    (ml_dtypes.int4, np.unsignedinteger, False), (ml_dtypes.uint4, np.integer, True),
    (ml_dtypes.float4_e2m1fn, np.floating, True), (dtypes.bfloat16, dtypes.bfloat16, True),
    (dtypes.bfloat16, np.float16, False), (np.float32, np.floating, True),
    (np.int32, np.floating, False), (np.float32, dtypes.prng_key, False),
])
def test_issubdtype_places_narrow_types(t, parent, want):
    assert dtypes.issubdtype(t, parent) is want


class _KeyLike:
    """A stand-in extended dtype: any dtype object whose ``type`` subclasses `extended`."""
    type = dtypes.prng_key

    def __eq__(self, other):
        return isinstance(other, _KeyLike)

    __hash__ = object.__hash__


def test_extended_dtypes():
    k = _KeyLike()
    assert dtypes.issubdtype(k, dtypes.prng_key) and dtypes.issubdtype(k, dtypes.extended)
    assert not dtypes.issubdtype(k, np.floating) and not dtypes.issubdtype(k, np.number)
    assert dtypes.issubdtype(k, _KeyLike())
    assert not dtypes.issubdtype(np.float32, dtypes.extended)
    assert issubclass(dtypes.TypePromotionError, ValueError)


@pytest.mark.parametrize("t,bits", [
    (ml_dtypes.int4, 4), (ml_dtypes.uint2, 2), (ml_dtypes.float4_e2m1fn, 4), (np.bool_, 8),
    (np.float32, 32), (dtypes.bfloat16, 16), (np.complex128, 128)])
def test_itemsize_bits(t, bits):
    assert dtypes.itemsize_bits(t) == bits


def test_scalar_type_of():
    assert dtypes.scalar_type_of(np.ones(2, bool)) is bool
    assert dtypes.scalar_type_of(np.int8(3)) is int
    assert dtypes.scalar_type_of(1.5) is float
    assert dtypes.scalar_type_of(np.complex64(1j)) is complex


def test_a_type_too_big_for_xla_is_refused_when_made():
    """Issue 17: a static shape whose byte size does not fit in a signed 64-bit count aborts
    the process inside XLA (JAX 0.10.2 included); the type is refused with a ValueError
    before anything calls into C++. The largest representable size is still a type."""
    import re

    for shape, dt in (((2**62, 2**62), np.float32), ((2**62,), np.float32),
                      ((2**40, 2**40, 2**40), np.float32), ((2**63,), np.bool_)):
        with pytest.raises(ValueError, match=re.escape(
                f"array of shape {shape} and dtype {np.dtype(dt).name} is too big")):
            ShapedArray(shape, dt)
    assert ShapedArray((2**63 - 1,), np.int8).shape == (2**63 - 1,)
    assert ShapedArray((2**61 - 1,), np.float32).size == 2**61 - 1


# --- The narrow dtypes (float8/float6/float4, 1/2/4-bit integers) ----------------------

_DATA = __import__("pathlib").Path(__file__).parent / "data"


def _named(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name) if name in ml_dtypes.__all__ or name in (
        "int1", "uint1") else name)


def test_narrow_promotion_table_is_jaxs():
    """`promote_types` of every narrow dtype with every dtype, against the table recorded
    from reference JAX 0.10.2 (``jnp.promote_types(a, b)`` or the error it raised): the
    narrow types promote only with themselves, bool, and (the floats) every wider integer,
    because they sit right above the weak nodes in the lattice."""
    import json

    table = json.loads((_DATA / "narrow_promotion_jax.json").read_text())
    assert len(table) == 17 * (17 + 15)
    for key, want in table.items():
        a, b = map(_named, key.split(","))
        if want == "TypePromotionError":
            with pytest.raises(dtypes.TypePromotionError):
                dtypes.promote_types(a, b)
            with pytest.raises(dtypes.TypePromotionError):
                dtypes.promote_types(b, a)
        else:
            assert dtypes.promote_types(a, b) == np.dtype(want), key
            assert dtypes.promote_types(b, a) == np.dtype(want), key


@pytest.mark.parametrize("args,want", [
    ((dtypes.float8_e4m3fn, dtypes.float8_e5m2),
     "Input dtypes ('float8_e4m3fn', 'float8_e5m2') have no available implicit dtype "
     "promotion path. To avoid unintended promotion, 8-bit floats do not support implicit "
     "promotion. If you'd like your inputs to be promoted to another type, you can do so "
     "explicitly using e.g. x.astype('float32')"),
    ((dtypes.int4, dtypes.int32),
     "Input dtypes ('int4', 'int32') have no available implicit dtype promotion path. To "
     "avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not support implicit "
     "promotion. If you'd like your inputs to be promoted to another type, you can do so "
     "explicitly using e.g. x.astype('int32')"),
    ((dtypes.float4_e2m1fn, dtypes.float16),
     "Input dtypes ('float4_e2m1fn', 'float16') have no available implicit dtype promotion "
     "path. To avoid unintended promotion, 4-bit floats do not support implicit promotion. "
     "If you'd like your inputs to be promoted to another type, you can do so explicitly "
     "using e.g. x.astype('float32')"),
    ((dtypes.float6_e2m3fn, dtypes.int4),
     "Input dtypes ('float6_e2m3fn', 'int4') have no available implicit dtype promotion "
     "path. To avoid unintended promotion, 6-bit floats do not support implicit promotion. "
     "If you'd like your inputs to be promoted to another type, you can do so explicitly "
     "using e.g. x.astype('float32')"),
    ((dtypes.int4, 1.0),
     "Input dtypes ('int4', \"<class 'float'>\") have no available implicit dtype promotion "
     "path. To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not support "
     "implicit promotion. If you'd like your inputs to be promoted to another type, you can "
     "do so explicitly using e.g. x.astype('int32')"),
    ((dtypes.float8_e4m3fn, 1j),
     "Input dtypes ('float8_e4m3fn', \"<class 'complex'>\") have no available implicit dtype "
     "promotion path. To avoid unintended promotion, 8-bit floats do not support implicit "
     "promotion. If you'd like your inputs to be promoted to another type, you can do so "
     "explicitly using e.g. x.astype('float32')"),
])
def test_narrow_promotion_errors_are_jaxs(args, want):
    """The refusals worded as reference JAX 0.10.2 words them (recorded from
    ``jnp.promote_types`` and from ``x + y`` on arrays of these dtypes)."""
    import re

    with pytest.raises(dtypes.TypePromotionError, match=re.escape(want) + "$"):
        dtypes.result_type(*args)


@pytest.mark.parametrize("dt", dtypes.NARROW_DTYPES, ids=lambda d: d.name)
def test_narrow_dtypes_with_weak_scalars_keep_their_dtype(dt):
    """A Python scalar of the dtype's kind (and bool) adopts the narrow dtype, strongly typed,
    as in JAX (``float8 array + 1.0`` is float8_e..., ``int4 array + 1`` is int4)."""
    scalar = 1.0 if dtypes.is_float(dt) else 1
    assert dtypes.result_type(dt, scalar, return_weak_type_flag=True) == (dt, False)
    assert dtypes.result_type(dt, True) == dt
    assert dtypes.canonicalize_dtype(dt) == dt
    if dtypes.is_float(dt):
        assert dtypes.result_type(dt, 1) == dt  # ints promote up into the floats


@pytest.mark.parametrize("dt,short,mlir", [
    (dtypes.float8_e3m4, "f8_e3m4", "f8E3M4"), (dtypes.float8_e4m3, "f8_e4m3", "f8E4M3"),
    (dtypes.float8_e4m3b11fnuz, "f8_e4m3b11fnuz", "f8E4M3B11FNUZ"),
    (dtypes.float8_e4m3fn, "f8_e4m3fn", "f8E4M3FN"),
    (dtypes.float8_e4m3fnuz, "f8_e4m3fnuz", "f8E4M3FNUZ"),
    (dtypes.float8_e5m2, "f8_e5m2", "f8E5M2"), (dtypes.float8_e5m2fnuz, "f8_e5m2fnuz", "f8E5M2FNUZ"),
    (dtypes.float8_e8m0fnu, "f8_e8m0fnu", "f8E8M0FNU"),
    (dtypes.float6_e2m3fn, "f6_e2m3fn", "f6E2M3FN"), (dtypes.float6_e3m2fn, "f6_e3m2fn", "f6E3M2FN"),
    (dtypes.float4_e2m1fn, "f4_e2m1fn", "f4E2M1FN"),
    (dtypes.int4, "i4", "i4"), (dtypes.uint4, "u4", "ui4"), (dtypes.int2, "i2", "i2"),
    (dtypes.uint2, "u2", "ui2"), (dtypes.int1, "i1", "i1"), (dtypes.uint1, "u1", "ui1"),
])
def test_narrow_short_and_mlir_names(dt, short, mlir):
    """The names JAX 0.10.2 prints in a jaxpr (``f8_e4m3fn[3]``, ``i4[2]``) and in StableHLO
    (``tensor<3xf8E4M3FN>``, ``tensor<2xui4>``), recorded from reference JAX."""
    assert dtypes.short_name(dt) == short
    assert dtypes.from_short_name(short) == dt
    assert dtypes.NARROW_MLIR_NAMES[dt] == mlir


def test_numpy_codes_keep_their_numpy_meaning():
    """``'i4'``, ``'u2'``, ``'i1'`` as dtype-likes are NumPy's int32, uint16 and int8; only the
    printed-IR parser reads them as the narrow integers."""
    assert dtypes.dtype("i4") == np.int32
    assert dtypes.dtype("u2") == np.uint16
    assert dtypes.dtype("i1") == np.int8


def test_narrow_finfo_iinfo():
    """Machine limits (by hand from the formats: e4m3fn's largest is 1.75 * 2**8, e5m2's
    1.75 * 2**15, e2m1fn's 6; e8m0fnu has no sign, no zero and no infinity)."""
    f = dtypes.finfo(dtypes.float8_e4m3fn)
    assert (float(f.max), float(f.eps), f.bits) == (448.0, 0.125, 8)
    assert float(dtypes.finfo(dtypes.float8_e5m2).max) == 57344.0
    assert float(dtypes.finfo(dtypes.float4_e2m1fn).max) == 6.0
    assert dtypes.finfo(dtypes.float4_e2m1fn).bits == 4
    assert float(dtypes.finfo(dtypes.float6_e3m2fn).max) == 28.0
    assert float(dtypes.finfo(dtypes.float8_e8m0fnu).max) == 2.0 ** 127
    for dt, lo, hi, bits in ((dtypes.int4, -8, 7, 4), (dtypes.uint4, 0, 15, 4),
                             (dtypes.int2, -2, 1, 2), (dtypes.uint2, 0, 3, 2),
                             (dtypes.int1, -1, 0, 1), (dtypes.uint1, 0, 1, 1)):
        i = dtypes.iinfo(dt)
        assert (int(i.min), int(i.max), i.bits) == (lo, hi, bits)
        assert dtypes.itemsize_bits(dt) == bits
    assert dtypes.supports_inf(dtypes.float8_e5m2) and dtypes.supports_inf(np.float32)
    assert not dtypes.supports_inf(dtypes.float8_e4m3fn)
    assert not dtypes.supports_inf(dtypes.float8_e8m0fnu)
    assert not dtypes.supports_inf(dtypes.float4_e2m1fn)


@pytest.mark.parametrize("dt,parent", [
    (dtypes.float8_e4m3fn, np.floating), (dtypes.float6_e2m3fn, np.inexact),
    (dtypes.int1, np.signedinteger), (dtypes.uint1, np.unsignedinteger),
    (dtypes.int4, np.integer), (dtypes.float4_e2m1fn, np.number)])
def test_narrow_dtypes_in_the_abstract_hierarchy(dt, parent):
    assert dtypes.issubdtype(dt, parent)
    assert not dtypes.issubdtype(dt, np.complexfloating)


class _Rbg:  # noqa: N801  (stands in for olympus.random's rbg implementation)
    name, tag, key_shape = "rbg", "rbg", (4,)


def test_key_dtype_prints_types_and_holds_data_as_jax():
    """JAX 0.10.2: ``key(0, impl='rbg').dtype`` is ``key<rbg>``, itemsize 16, a subtype of
    prng_key and extended; its avals print ``key<rbg>[3]`` and hold ``u32[3,4]`` data."""
    from olympus_ir.avals import ShapedArray, physical_aval

    dt = dtypes.KeyDType(_Rbg())
    assert str(dt) == dt.name == "key<rbg>" and dt.itemsize == 16 and dt == "rbg"
    assert dt == dtypes.KeyDType(_Rbg()) and hash(dt) == hash(dtypes.KeyDType(_Rbg()))
    assert dt != np.dtype("uint32") and dtypes.is_key_dtype(dt)
    assert not dtypes.is_key_dtype(np.dtype("uint32"))
    assert dtypes.issubdtype(dt, dtypes.prng_key) and dtypes.issubdtype(dt, dtypes.extended)
    assert dtypes.issubdtype(dtypes.prng_key, dtypes.extended)
    assert not dtypes.issubdtype(dt, np.integer) and not dtypes.issubdtype(np.uint32, dt)
    assert dtypes.canonicalize_dtype(dt) is dt and dtypes.dtype(dt) is dt
    aval = ShapedArray((3,), dt)
    assert aval.str_short() == "key<rbg>[3]" and repr(aval) == "ShapedArray(key<rbg>[3])"
    assert physical_aval(aval) == ShapedArray((3, 4), np.dtype("uint32"))
    assert physical_aval(ShapedArray((2,), np.float32)) == ShapedArray((2,), np.float32)


def test_key_typed_programs_refuse_serialization_clearly():
    from olympus_ir import serialize
    from olympus_ir.avals import ShapedArray
    from olympus_ir.core import ClosedOlympuspr, Olympuspr, Var

    v = Var(ShapedArray((2,), dtypes.KeyDType(_Rbg())))
    closed = ClosedOlympuspr(Olympuspr([], [v], [v], []), [])
    with pytest.raises(ValueError, match="cannot serialize dtype key<rbg>: typed PRNG keys"):
        serialize.to_json(closed)


def test_shaped_array_as_part_of_a_high_level_type():
    """An array type lowers to itself (JAX's ShapedArray.lo_ty/lower_val/raise_val) and its
    tangent type keeps an inexact dtype and is float0 otherwise, weak type kept (JAX's
    ShapedArray.to_tangent_aval)."""
    f32 = ShapedArray((2,), np.float32, weak_type=True)
    assert f32.lo_ty() == [f32]
    assert f32.lower_val("v") == ["v"] and f32.raise_val("v") == "v"
    assert f32.to_tangent_aval() == f32
    t = ShapedArray((3,), np.int32, weak_type=True).to_tangent_aval()
    assert (t.shape, t.dtype, t.weak_type) == ((3,), dtypes.float0, True)


def test_control_flow_allowed_effects_registry():
    from olympus_ir.prims.callbacks import EffectTypeSet, control_flow_allowed_effects

    class MyEffect:
        pass

    assert isinstance(control_flow_allowed_effects, EffectTypeSet)
    s = EffectTypeSet()
    assert not s.contains(MyEffect())
    s.add_type(MyEffect)
    e, other = MyEffect(), object()
    assert s.contains(e) and not s.contains(other)
    assert s.filter_in([e, other]) == [e] and s.filter_not_in([e, other]) == [other]


def test_shaped_array_rank_changes_under_vmap():
    """JAX's ShapedArray.dec_rank/inc_rank/leading_axis_spec (mapped/unmapped types)."""
    from olympus_ir.avals import mapped_axes_probe

    a = ShapedArray((3, 4), np.float32)
    assert a.dec_rank(3, 0) == ShapedArray((4,), np.float32)
    assert a.dec_rank(4, -1) == ShapedArray((3,), np.float32)
    assert a.dec_rank(3, None) is a
    assert a.inc_rank(5, 1) == ShapedArray((3, 5, 4), np.float32)
    assert a.inc_rank(5, -1) == ShapedArray((3, 4, 5), np.float32)
    assert a.leading_axis_spec() == 0
    with pytest.raises(ValueError, match="out of bounds"):
        a.dec_rank(3, 2)
    mapped_axes_probe.axes = seen = []
    try:
        assert a.dec_rank(3, 7) is a  # only recorded while probing
    finally:
        mapped_axes_probe.axes = None
    assert seen == [7]
