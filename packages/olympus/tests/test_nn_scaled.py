"""olympus.nn.scaled_matmul / scaled_dot_general / get_scaled_dot_general_config.
scaled_matmul's values against its definition computed in NumPy; shape errors and the
configs recorded from JAX 0.10.2 (whose CPU backend cannot run scaled_matmul at all)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp


def test_scaled_matmul_against_definition():
    a = jnp.array([1, 2, 3]).reshape((1, 1, 3))
    b = jnp.array([4, 5, 6]).reshape((1, 1, 3))
    s = jnp.array([0.5]).reshape((1, 1, 1))
    out = olympus.nn.scaled_matmul(a, b, s, s)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[[8.0]]])  # JAX's documented example
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 8)).astype(np.float32)
    b = rng.standard_normal((2, 4, 8)).astype(np.float32)
    sa = rng.random((2, 3, 2)).astype(np.float32)
    sb = rng.random((2, 4, 2)).astype(np.float32)
    want = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 4, -1), b * np.repeat(sb, 4, -1))
    np.testing.assert_allclose(olympus.nn.scaled_matmul(a, b, sa, sb), want, rtol=1e-5,
                               atol=1e-5)
    out16 = olympus.nn.scaled_matmul(a, b, sa, sb, preferred_element_type=jnp.bfloat16)
    assert out16.dtype == jnp.bfloat16


def test_scaled_matmul_errors():
    a = jnp.ones((2, 3, 8))
    with pytest.raises(ValueError, match="scaled_matmul requires all inputs to be "
                       "3-dimensional arrays"):
        olympus.nn.scaled_matmul(a[0], a, a, a)
    with pytest.raises(ValueError, match=r"matching batch \(B\) and contract \(K\) "
                       r"dimensions, but got shapes \(2, 3, 8\) and \(2, 3, 4\)"):
        olympus.nn.scaled_matmul(a, jnp.ones((2, 3, 4)), a, a)


def test_configs_and_dot_general():
    c = olympus.nn.get_scaled_dot_general_config("mxfp8")
    assert (c.mode, c.block_size, c.data_type, c.scale_type, c.global_scale) == (
        "mxfp8", 32, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu, None)
    n = olympus.nn.get_scaled_dot_general_config("nvfp4")
    assert (n.block_size, n.data_type) == (16, ml_dtypes.float4_e2m1fn)
    np.testing.assert_array_equal(n.global_scale, [1.0])
    with pytest.raises(ValueError, match="Unsupported mode: x"):
        olympus.nn.get_scaled_dot_general_config("x")
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal((3, 4, 6)).astype(np.float32)
    rhs = rng.standard_normal((3, 5, 6)).astype(np.float32)
    out = olympus.nn.scaled_dot_general(lhs, rhs, (((2,), (2,)), ((0,), (0,))))
    np.testing.assert_allclose(out, np.einsum("bmk,bnk->bmn", lhs, rhs), rtol=1e-5, atol=1e-5)
    with pytest.raises(NotImplementedError, match="float8/float4"):
        olympus.nn.scaled_dot_general(lhs, rhs, (((2,), (2,)), ((0,), (0,))), configs=[c] * 3)
