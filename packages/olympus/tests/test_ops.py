"""olympus.ops segment reductions against NumPy loops (np.add.at & co.), with JAX's
argument semantics: num_segments (inferred when concrete), out-of-range and negative ids
dropped (FILL_OR_DROP) or clipped, bucket_size, identities of empty segments, jit, vmap
and grad; the olympuspr is recorded from reference JAX 0.10.2."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import ops
from olympus.errors import ConcretizationTypeError

rng = np.random.default_rng(0)
DATA = rng.standard_normal((9, 3)).astype(np.float32)
IDS = np.array([0, 0, 1, 3, 3, 3, 5, -1, 7])


def _numpy_segment(ufunc, init, data, ids, n):
    out = np.full((n,) + data.shape[1:], init, data.dtype)
    keep = (ids >= 0) & (ids < n)
    ufunc.at(out, ids[keep], data[keep])
    return out


@pytest.mark.parametrize("name,ufunc,init", [
    ("segment_sum", np.add, 0), ("segment_prod", np.multiply, 1),
    ("segment_max", np.maximum, -np.inf), ("segment_min", np.minimum, np.inf)])
def test_against_numpy(name, ufunc, init):
    fn = getattr(ops, name)
    want = _numpy_segment(ufunc, init, DATA, IDS, 6)
    np.testing.assert_allclose(fn(DATA, IDS, 6), want, rtol=1e-6)
    np.testing.assert_allclose(fn(DATA, IDS, num_segments=6, bucket_size=2), want, rtol=1e-5)
    np.testing.assert_allclose(olympus.jit(fn, static_argnums=2)(DATA, IDS, 6), want,
                               rtol=1e-6)
    # num_segments inferred from the (concrete) ids: max id + 1.
    assert fn(DATA, IDS).shape == (8, 3)


def test_integer_identities_and_dtypes():
    d = np.arange(6, dtype=np.int32)
    s = np.array([0, 0, 1, 1, 3, 5])
    # Recorded from JAX 0.10.2: empty segments hold the dtype's lowest/highest value.
    np.testing.assert_array_equal(ops.segment_max(d, s, 4), [1, 3, np.iinfo(np.int32).min, 4])
    np.testing.assert_array_equal(ops.segment_min(d, s, 4), [0, 2, np.iinfo(np.int32).max, 4])
    assert ops.segment_sum(d.astype(np.uint8), s, 4).dtype == np.uint8
    np.testing.assert_array_equal(ops.segment_sum(np.ones((6, 2)), s, 3, mode="clip"),
                                  [[2, 2], [2, 2], [2, 2]])


def test_olympuspr_matches_jax():
    d, s = jnp.arange(6.0), jnp.array([0, 0, 1, 1, 3, 5])
    text = str(olympus.make_olympuspr(lambda d, s: ops.segment_sum(d, s, 4))(d, s))
    # Recorded from JAX 0.10.2 (jaxpr -> olympuspr): no index normalization.
    assert text == """{ lambda ; a:f32[6] b:i32[6]. let
    c:f32[4] = broadcast_in_dim 0.0:f32[]
    d:i32[6,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    e:f32[4] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_olympuspr={ lambda ; f:f32[] g:f32[]. let h:f32[] = add f g in (h,) }
    ] c d a
  in (e,) }"""  # noqa: E501


def test_grad_and_vmap():
    ids = np.array([0, 1, 1, 2])
    g = olympus.grad(lambda d: (ops.segment_sum(d, ids, 3) ** 2).sum())(np.arange(4.0))
    # d/dd_i of sum_k (sum_{j in k} d_j)^2 = 2 * (sum of i's segment).
    np.testing.assert_allclose(g, [0.0, 6.0, 6.0, 6.0])
    batched = olympus.vmap(lambda d: ops.segment_max(d, ids, 3))(DATA[:4].T)
    np.testing.assert_allclose(
        batched, np.stack([_numpy_segment(np.maximum, -np.inf, r, ids, 3) for r in DATA[:4].T]))


def test_errors():
    with pytest.raises(ValueError, match="num_segments must be non-negative."):
        ops.segment_sum(DATA, IDS, -1)
    with pytest.raises(ConcretizationTypeError, match="segment_sum"):
        olympus.jit(lambda d, s: ops.segment_sum(d, s))(DATA, IDS)
    with pytest.raises(TypeError):
        ops.segment_sum([1.0, 2.0], IDS[:2], 2)
