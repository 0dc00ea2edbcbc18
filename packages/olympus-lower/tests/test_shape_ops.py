"""broadcast_in_dim, reshape, transpose, squeeze, expand_dims, concatenate, pad, rev,
slice, iota: one module per dtype holding every shape op."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, bf16, lit, run, run_one

from olympus_ir import dtypes
from olympus_ir import primitives as P

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bf16, np.dtype(np.int32),
          np.dtype(np.int8), np.dtype(np.uint32), np.dtype(np.bool_)]


def _data(shape, dt):
    n = int(np.prod(shape))
    if dt == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    return (np.arange(n) % 100).astype(dt).reshape(shape)


def _eq(got, want, msg):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (msg, got.shape, want.shape)
    if got.dtype == bf16:
        got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(got, want, err_msg=msg)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
def test_shape_ops(dt):
    x = _data((2, 3, 4), dt)
    y = _data((2, 2, 4), dt)
    s = _data((), dt)
    one = np.array(True if dt == np.bool_ else 1, dt)
    b = Builder()
    vx, vy, vs = b.arg(x.shape, dt), b.arg(y.shape, dt), b.arg((), dt)
    checks = []

    def add(out, want, name):
        checks.append((out, want, name))

    add(b.eqn(P.broadcast_in_dim_p, vs, shape=(2, 3), broadcast_dimensions=()),
        np.broadcast_to(s, (2, 3)), "broadcast scalar")
    add(b.eqn(P.broadcast_in_dim_p, vx, shape=(5, 2, 3, 4), broadcast_dimensions=(1, 2, 3)),
        np.broadcast_to(x, (5, 2, 3, 4)), "broadcast leading")
    v1 = b.eqn(P.reshape_p, vx, new_sizes=(2, 1, 12), dimensions=None)
    add(v1, x.reshape(2, 1, 12), "reshape")
    add(b.eqn(P.broadcast_in_dim_p, v1, shape=(2, 5, 12), broadcast_dimensions=(0, 1, 2)),
        np.broadcast_to(x.reshape(2, 1, 12), (2, 5, 12)), "broadcast size-1 dim")
    add(b.eqn(P.reshape_p, vx, new_sizes=(4, 6), dimensions=(2, 0, 1)),
        x.transpose(2, 0, 1).reshape(4, 6), "reshape with dimensions")
    add(b.eqn(P.transpose_p, vx, permutation=(2, 0, 1)), x.transpose(2, 0, 1), "transpose")
    add(b.eqn(P.squeeze_p, v1, dimensions=(1,)), x.reshape(2, 12), "squeeze")
    add(b.eqn(P.expand_dims_p, vx, dimensions=(0, 3)), x.reshape(1, 2, 3, 1, 4),
        "expand_dims")
    add(b.eqn(P.concatenate_p, vx, vy, vx, dimension=1), np.concatenate([x, y, x], 1),
        "concatenate")
    pv = b.eqn(P.pad_p, vx, lit(one, dt), padding_config=((1, 0, 0), (0, 2, 1), (-1, 1, 0)))
    want = np.full((3, 3 + 2 + 2, 4), one, dt)
    want[1:, 0:5:2, 0:3] = x[:, :, 1:]
    add(pv, want, "pad (negative, interior)")
    add(b.eqn(P.pad_p, vx, vs, padding_config=((0, 0, 0), (2, 0, 0), (0, 0, 0))),
        np.concatenate([np.broadcast_to(s, (2, 2, 4)), x], 1), "pad with operand value")
    add(b.eqn(P.rev_p, vx, dimensions=(0, 2)), x[::-1, :, ::-1], "rev")
    add(b.eqn(P.rev_p, vx, dimensions=()), x, "rev none")
    add(b.eqn(P.slice_p, vx, start_indices=(0, 1, 0), limit_indices=(2, 3, 4),
              strides=None), x[:, 1:3, :], "slice")
    add(b.eqn(P.slice_p, vx, start_indices=(1, 0, 1), limit_indices=(2, 3, 4),
              strides=(1, 2, 2)), x[1:2, 0:3:2, 1:4:2], "strided slice")
    add(b.eqn(P.slice_p, vx, start_indices=(0, 3, 0), limit_indices=(2, 3, 4)),
        x[:, 3:3, :], "empty slice")
    outs = [c[0] for c in checks]
    if dt != np.bool_:
        outs.append(b.eqn(P.iota_p, dtype=dt, shape=(3, 5), dimension=1))
        checks.append((None, np.broadcast_to(np.arange(5, dtype=dt), (3, 5)), "iota"))
        outs.append(b.eqn(P.iota_p, dtype=dt, shape=(4,), dimension=0))
        checks.append((None, np.arange(4, dtype=dt), "iota 1d"))
    lowered, results = run(b.build(outs), x, y, s)
    text = lowered.as_text()
    for op in ("stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.transpose",
               "stablehlo.concatenate", "stablehlo.pad", "stablehlo.reverse",
               "stablehlo.slice"):
        assert op in text, op
    if dt != np.bool_:
        assert "stablehlo.iota dim = 1" in text
    for (_, want, name), got in zip(checks, results, strict=True):
        _eq(got, want, f"{name} {dt}")


def test_shape_op_text_forms():
    b = Builder()
    x = b.arg((2, 3), np.float32)
    outs = [b.eqn(P.transpose_p, x, permutation=(1, 0)),
            b.eqn(P.broadcast_in_dim_p, x, shape=(4, 2, 3), broadcast_dimensions=(1, 2)),
            b.eqn(P.slice_p, x, start_indices=(0, 1), limit_indices=(2, 3), strides=(1, 2))]
    lowered, _ = run(b.build(outs), np.zeros((2, 3), np.float32))
    text = lowered.as_text()
    assert "stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>" \
        in text
    assert ("stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<2x3xf32>) -> "
            "tensor<4x2x3xf32>") in text
    assert "stablehlo.slice %arg0 [0:2, 1:3:2]" in text


def test_zero_sized_arrays():
    b = Builder()
    x = b.arg((0, 3), np.float32)
    outs = [b.eqn(P.transpose_p, x, permutation=(1, 0)),
            b.eqn(P.concatenate_p, x, x, dimension=0),
            b.eqn(P.iota_p, dtype=np.dtype(np.int32), shape=(0,), dimension=0)]
    _, (t, c, i) = run(b.build(outs), np.zeros((0, 3), np.float32))
    assert t.shape == (3, 0) and c.shape == (0, 3) and i.shape == (0,)


def test_iota_64bit(x64):
    b = Builder()
    out = b.eqn(P.iota_p, dtype=np.dtype(np.int64), shape=(3,), dimension=0)
    lowered, (got,) = run(b.build([out]), x64=True)
    assert "tensor<3xi64>" in lowered.as_text()
    np.testing.assert_array_equal(got, [0, 1, 2])
    assert dtypes.is_x64_enabled()


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.bool_)],
                         ids=lambda d: d.name)
def test_tile_split_stack_unstack(dt):
    x = _data((2, 3), dt)
    text, (t,) = run_one(P.tile_p, x, reps=(2, 3))
    _eq(t, np.tile(x, (2, 3)), "tile")
    assert "stablehlo.broadcast_in_dim" in text and "stablehlo.reshape" in text
    text, parts = run_one(P.split_p, x, sizes=(1, 0, 2), axis=1)
    for got, want in zip(parts, np.split(x, [1, 1], axis=1), strict=True):
        _eq(got, want, "split")
    assert "stablehlo.slice" in text
    text, (s,) = run_one(P.stack_p, x, x[::-1], axis=1)
    _eq(s, np.stack([x, x[::-1]], 1), "stack")
    assert "stablehlo.concatenate" in text
    text, rows = run_one(P.unstack_p, x, axis=1)
    for i, got in enumerate(rows):
        _eq(got, x[:, i], "unstack")
