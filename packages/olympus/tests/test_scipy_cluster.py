"""Tests for `olympus.scipy.cluster.vq.vq` against `scipy.cluster.vq`, and its errors
(recorded from reference JAX 0.10.2)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
from olympus.scipy.cluster.vq import vq

svq = pytest.importorskip("scipy.cluster.vq")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vq(dtype):
    r = np.random.default_rng(0)
    with olympus.enable_x64(dtype == np.float64):
        obs = r.normal(size=(20, 3)).astype(dtype)
        book = r.normal(size=(4, 3)).astype(dtype)
        code, dist = vq(obs, book)
        want_code, want_dist = svq.vq(obs, book)
        np.testing.assert_array_equal(code, want_code)
        np.testing.assert_allclose(dist, want_dist, rtol=1e-6)
        assert dist.dtype == dtype
    code, dist = vq(np.arange(5.0), np.array([1.0, 3.0]))
    np.testing.assert_array_equal(code, [0, 0, 0, 1, 1])
    np.testing.assert_allclose(dist, [1, 0, 1, 0, 1])
    codes = olympus.vmap(lambda o: vq(o, np.eye(3, dtype=np.float32))[0])(
        np.stack([np.eye(3, dtype=np.float32)] * 2))
    np.testing.assert_array_equal(codes, [[0, 1, 2], [0, 1, 2]])


def test_errors():
    with pytest.raises(ValueError, match="Observation and code_book should have the same rank"):
        vq(np.ones((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match="ndim different than 1 or 2 are not supported"):
        vq(np.ones((3, 2, 2)), np.ones((3, 2, 2)))
    with pytest.raises(TypeError, match="scipy.cluster.vq.vq requires ndarray or scalar "
                                        "arguments, got <class 'list'> at position 0."):
        vq([1.0, 2.0], np.array([1.0, 3.0]))
