"""The narrow dtypes of ``olympus.numpy`` (float8/float6/float4, 1/2/4-bit integers) through
the public API: creation, printing, promotion, arithmetic under jit, conversions, grad,
finfo/iinfo and the olympusprs they appear in.

Expected values: ``data/jax_narrow_dtypes.json`` holds each expression's output recorded
from reference JAX 0.10.2 (the same expression with ``jax`` names, run in its own process;
``jax`` renamed ``olympus`` in the recorded text). Every value involved is exact in the
narrow formats or rounds by the formats' round-to-nearest-even, so the comparison is exact.
"""

from __future__ import annotations

import json
import pathlib
import re

import ml_dtypes
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import dtypes, grad, jit, lax, vmap  # noqa: F401  (names the expressions use)

pr = olympus.make_olympuspr
RECORDED = json.loads(
    (pathlib.Path(__file__).parent / "data" / "jax_narrow_dtypes.json").read_text())

NARROW = ("float8_e3m4 float8_e4m3 float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz "
          "float8_e5m2 float8_e5m2fnuz float8_e8m0fnu float6_e2m3fn float6_e3m2fn "
          "float4_e2m1fn int4 uint4 int2 uint2 int1 uint1").split()


@pytest.mark.parametrize("expr", list(RECORDED), ids=range(len(RECORDED)))
def test_matches_reference_jax(expr):
    """Recorded errors start with ``!`` and the exception's type name."""
    try:
        got = eval(expr)
    except Exception as e:  # an expected error is compared by type and message
        got = f"!{type(e).__name__}: {e}"
    assert got == RECORDED[expr]


@pytest.mark.parametrize("name", NARROW)
def test_scalar_types_are_the_ml_dtypes(name):
    t = getattr(jnp, name)
    want = np.dtype(getattr(ml_dtypes, name))
    assert t == want and t.dtype == want and jnp.dtype(t) == want
    assert repr(t) == f"<class 'olympus.numpy.{name}'>"
    assert t.__doc__


@pytest.mark.parametrize("x,y,kind", [
    ("float8_e4m3fn", "float8_e5m2", "8-bit floats"),
    ("float8_e4m3fn", "float32", "8-bit floats"),
    ("int4", "int8", "1-bit, 2-bit and 4-bit integers"),
    ("float4_e2m1fn", "float16", "4-bit floats"),
])
def test_implicit_promotion_is_refused(x, y, kind):
    """``a + b`` of two arrays, refused with reference JAX 0.10.2's message (recorded)."""
    a, b = jnp.ones(2, getattr(jnp, x)), jnp.ones(2, getattr(jnp, y))
    target = "int32" if "integers" in kind else "float32"
    want = (f"Input dtypes ('{x}', '{y}') have no available implicit dtype promotion path. "
            f"To avoid unintended promotion, {kind} do not support implicit promotion. If "
            "you'd like your inputs to be promoted to another type, you can do so explicitly "
            f"using e.g. x.astype('{target}')")
    with pytest.raises(dtypes.TypePromotionError, match=re.escape(want)):
        a + b
    with pytest.raises(dtypes.TypePromotionError):
        jit(lambda p, q: p * q)(a, b)


def test_int4_sum_accumulates_in_the_default_int():
    """``sum`` of small integers accumulates in the default integer, as for int8. (Reference
    JAX 0.10.2 raises ``ValueError: Invalid integer data type 'V'.`` here, from
    ``np.iinfo`` inside its reduction: a bug, not a behaviour; Olympus gives NumPy's
    answer.)"""
    y = jnp.array([3, -4, 7, 7], jnp.int4)
    s = y.sum()
    assert s.dtype == jnp.int32 and int(s) == 13


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4",
                                  "uint2"])
def test_device_put_and_back(name):
    dt = np.dtype(getattr(ml_dtypes, name))
    x = np.array([1, 0, 1, 1, 0], dt)
    a = olympus.device_put(x)
    assert a.dtype == dt
    np.testing.assert_array_equal(np.asarray(a).astype(np.float32), x.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)).astype(np.float32),
                                  x.astype(np.float32))


def test_float6_computations_fail_as_in_jax():
    """XLA's CPU client has no float6 type; reference JAX 0.10.2 fails (recorded messages)
    and, for a float6 constant under jit, aborts the process. Olympus raises the same
    error in every case and never reaches XLA with a float6 program."""
    err = olympus.errors.OlympusRuntimeError
    with pytest.raises(err, match=r"Invalid XLA PrimitiveType: 36 \(F6E2M3FN\)"):
        jit(lambda: jnp.ones(2, jnp.float6_e2m3fn))()
    with pytest.raises(err, match=r"Invalid XLA PrimitiveType: 35 \(F6E3M2FN\)"):
        jnp.ones(2, jnp.float32).astype(jnp.float6_e3m2fn)
    # Tracing and lowering work, as in JAX.
    text = jit(lambda x: x.astype(jnp.float6_e2m3fn)).lower(jnp.ones(2)).as_text()
    assert "tensor<2xf6E2M3FN>" in text


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
                                  "float4_e2m1fn"])
def test_reductions_use_the_formats_extremes(name):
    """max/min of formats without infinities start from their largest finite values."""
    dt = getattr(jnp, name)
    vals = [0.5, 2.0, 4.0] if name == "float8_e8m0fnu" else [-1.5, 0.5, 4.0]
    x = jnp.array(vals, dt)
    assert float(x.max()) == max(vals) and float(x.min()) == min(vals)
    assert x.max().dtype == dt


def test_lowered_text_uses_jaxs_element_types():
    """StableHLO as reference JAX 0.10.2 lowers it (recorded: ``tensor<2xf8E4M3FN>``,
    ``tensor<2xi4>``, ``tensor<2xui4>``)."""
    for name, t in (("float8_e4m3fn", "f8E4M3FN"), ("int4", "i4"), ("uint4", "ui4"),
                    ("float8_e8m0fnu", "f8E8M0FNU"), ("float4_e2m1fn", "f4E2M1FN")):
        x = jnp.ones(2, getattr(jnp, name))
        text = jit(lambda a: a + a).lower(x).as_text()
        assert f"stablehlo.add %arg0, %arg0 : tensor<2x{t}>" in text, name
