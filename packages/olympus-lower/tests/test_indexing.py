"""dynamic_slice, dynamic_update_slice, gather (CLIP / FILL_OR_DROP / PROMISE_IN_BOUNDS)
and the scatter family."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, bf16, compile_module, execute, run

from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.prims.indexing import GatherDimensionNumbers as GDN
from olympus_ir.prims.indexing import GatherScatterMode as Mode
from olympus_ir.prims.indexing import ScatterDimensionNumbers as SDN
from olympus_lower import lower_olympuspr

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bf16, np.dtype(np.int32),
          np.dtype(np.int8), np.dtype(np.uint32), np.dtype(np.bool_)]
ids = [d.name for d in DTYPES]


def _data(shape, dt):
    n = int(np.prod(shape))
    if dt == np.bool_:
        return (np.arange(n) % 3 == 1).reshape(shape)
    return (np.arange(n) + 1).astype(dt).reshape(shape)


def _eq(got, want, msg=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (msg, got.shape, want.shape)
    if got.dtype == bf16:
        got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(got, want, err_msg=msg)


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_dynamic_slice_and_update(dt):
    x = _data((4, 5), dt)
    u = _data((2, 3), dt)[::-1].copy()
    b = Builder()
    vx, vu = b.arg(x.shape, dt), b.arg(u.shape, dt)
    i, j = b.arg((), np.int32), b.arg((), np.int32)
    k8 = b.arg((), np.int8)
    k64 = b.arg((), np.uint32)
    outs = [
        b.eqn(P.dynamic_slice_p, vx, i, j, slice_sizes=(2, 3)),
        b.eqn(P.dynamic_update_slice_p, vx, vu, i, j),
        b.eqn(P.dynamic_slice_p, vx, k8, k8, slice_sizes=(3, 3)),
        b.eqn(P.dynamic_slice_p, vx, k64, k64, slice_sizes=(1, 2)),
        b.eqn(P.dynamic_update_slice_p, vx, vu, k8, k8),
    ]
    cases = [(1, 1, 0, 1), (3, 4, 7, 9), (-2, -1, -5, 2**31)]  # in bounds, clamped high/low
    lowered = lower_olympuspr(b.build(outs), name="ds")
    exe = compile_module(lowered)
    for ci, cj, c8, c64 in cases:
        ds, dus, ds8, ds64, dus8 = execute(
            lowered, x, u, np.int32(ci), np.int32(cj), np.int8(c8), np.uint32(c64), exe=exe)
        si, sj = np.clip(ci, 0, 2), np.clip(cj, 0, 2)
        _eq(ds, x[si:si + 2, sj:sj + 3], f"ds {ci},{cj}")
        want = x.copy()
        want[si:si + 2, sj:sj + 3] = u
        _eq(dus, want, "dus")
        s8 = int(np.clip(c8, 0, 1)), int(np.clip(c8, 0, 2))
        _eq(ds8, x[s8[0]:s8[0] + 3, s8[1]:s8[1] + 3], "ds int8")
        s64 = int(np.clip(c64, 0, 3)), int(np.clip(c64, 0, 3))
        _eq(ds64, x[s64[0]:s64[0] + 1, s64[1]:s64[1] + 2], "ds uint32")
        want = x.copy()
        t8 = int(np.clip(c8, 0, 2)), int(np.clip(c8, 0, 2))
        want[t8[0]:t8[0] + 2, t8[1]:t8[1] + 3] = u
        _eq(dus8, want, "dus int8")
    text = lowered.as_text()
    assert "stablehlo.dynamic_slice %arg0, %arg2, %arg3, sizes = [2, 3]" in text
    assert "stablehlo.dynamic_update_slice %arg0, %arg1, %arg2, %arg3" in text


def _fill_default(dt):
    dt = np.dtype(dt)
    if dtypes.is_inexact(dt):
        return np.nan
    if dtypes.is_signed_int(dt):
        return np.iinfo(dt).min
    if dtypes.is_unsigned_int(dt):
        return np.iinfo(dt).max
    return True


ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
POINTS = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
WINDOWS = GDN(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
BATCHED = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
              operand_batching_dims=(0,), start_indices_batching_dims=(0,))


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_gather_modes(dt):
    x = _data((5, 3), dt)
    w = _data((6,), dt)
    rows = np.array([[0], [4], [7], [-1], [2]], np.int32)
    pts = np.array([[0, 2], [4, 0], [5, 1], [1, -3]], np.int32)
    wins = np.array([[0], [3], [4], [-2]], np.int32)
    bidx = np.array([[2], [9]], np.int32)
    b = Builder()
    vx, vw = b.arg(x.shape, dt), b.arg(w.shape, dt)
    vr, vp, vwi, vb = (b.arg(a.shape, np.int32) for a in (rows, pts, wins, bidx))
    outs, checks = [], []

    def g(op, idx, dn, sizes, mode, fill=None):
        return b.eqn(P.gather_p, op, idx, dimension_numbers=dn, slice_sizes=sizes,
                     indices_are_sorted=False, unique_indices=False, mode=mode,
                     fill_value=fill)

    fill = _fill_default(dt)
    for mode in (Mode.CLIP, Mode.FILL_OR_DROP, Mode.PROMISE_IN_BOUNDS):
        outs.append(g(vx, vr, ROWS, (1, 3), mode))
        r = rows[:, 0]
        want = x[np.clip(r, 0, 4)]
        if mode == Mode.FILL_OR_DROP:
            want = np.where(((r < 0) | (r > 4))[:, None], np.array(fill).astype(dt), want)
        checks.append((f"rows {mode}", want, mode))
        outs.append(g(vx, vp, POINTS, (1, 1), mode))
        pi, pj = np.clip(pts[:, 0], 0, 4), np.clip(pts[:, 1], 0, 2)
        want = x[pi, pj]
        if mode == Mode.FILL_OR_DROP:
            oob = (pts[:, 0] < 0) | (pts[:, 0] > 4) | (pts[:, 1] < 0) | (pts[:, 1] > 2)
            want = np.where(oob, np.array(fill).astype(dt), want)
        checks.append((f"points {mode}", want, mode))
        outs.append(g(vw, vwi, WINDOWS, (3,), mode))
        s = np.clip(wins[:, 0], 0, 3)
        want = np.stack([w[k:k + 3] for k in s])
        if mode == Mode.FILL_OR_DROP:
            oob = (wins[:, 0] < 0) | (wins[:, 0] > 3)
            want = np.where(oob[:, None], np.array(fill).astype(dt), want)
        checks.append((f"windows {mode}", want, mode))
    # explicit fill value and batching dims
    outs.append(g(vx, vr, ROWS, (1, 3), Mode.FILL_OR_DROP, fill=0))
    r = rows[:, 0]
    checks.append(("rows fill=0", np.where(((r < 0) | (r > 4))[:, None], np.zeros((), dt),
                                           x[np.clip(r, 0, 4)]), None))
    xb = x[:2]
    vxb = b.arg(xb.shape, dt)
    outs.append(g(vxb, vb, BATCHED, (1, 1), Mode.CLIP))
    checks.append(("batched", np.array([xb[0, 2], xb[1, 2]]), None))
    lowered, results = run(b.build(outs), x, w, rows, pts, wins, bidx, xb)
    text = lowered.as_text()
    assert '"stablehlo.gather"' in text
    assert "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], " \
           "index_vector_dim = 1" in text
    assert "operand_batching_dims = [0], start_indices_batching_dims = [0]" in text
    for (name, want, _), got in zip(checks, results, strict=True):
        _eq(got, want, f"{name} {dt}")


def _scatter_ref(kind, x, idx, upd, mode, dim):
    out = x.copy()
    for k, i in enumerate(idx):
        if mode == Mode.CLIP:
            i = int(np.clip(i, 0, dim - 1))
        elif not 0 <= i < dim:
            continue
        if kind == "scatter":
            out[i] = upd[k]
        elif kind == "scatter_add":
            out[i] = out[i] + upd[k] if out.dtype != np.bool_ else out[i] | upd[k]
        elif kind == "scatter_mul":
            out[i] = out[i] * upd[k] if out.dtype != np.bool_ else out[i] & upd[k]
        elif kind == "scatter_min":
            out[i] = np.minimum(out[i], upd[k])
        elif kind == "scatter_max":
            out[i] = np.maximum(out[i], upd[k])
    return out


SCATTERS = ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_scatter_family(dt):
    x = _data((5, 3), dt)
    idx = np.array([[1], [3], [1], [7], [-1]], np.int32)
    uniq = np.array([[4], [0], [9]], np.int32)
    upd = _data((5, 3), dt)[::-1].copy()
    upd_u = upd[:3].copy()
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
             scatter_dims_to_operand_dims=(0,))
    b = Builder()
    vx, vi, vq, vu, vuu = (b.arg(a.shape, a.dtype) for a in (x, idx, uniq, upd, upd_u))
    outs, checks = [], []
    for kind in SCATTERS:
        prim = P.primitive_by_name(kind)
        for mode in (Mode.FILL_OR_DROP, Mode.CLIP):
            if kind == "scatter":
                outs.append(b.eqn(prim, vx, vq, vuu, dimension_numbers=dn,
                                  indices_are_sorted=False, unique_indices=True, mode=mode))
                checks.append((kind, mode, _scatter_ref(kind, x, uniq[:, 0], upd_u, mode, 5)))
            else:
                outs.append(b.eqn(prim, vx, vi, vu, dimension_numbers=dn,
                                  indices_are_sorted=False, unique_indices=False, mode=mode))
                checks.append((kind, mode, _scatter_ref(kind, x, idx[:, 0], upd, mode, 5)))
    lowered, results = run(b.build(outs), x, idx, uniq, upd, upd_u)
    text = lowered.as_text()
    assert '"stablehlo.scatter"' in text and "stablehlo.clamp" in text
    assert "update_window_dims = [1], inserted_window_dims = [0], " \
           "scatter_dims_to_operand_dims = [0], index_vector_dim = 1" in text
    for (kind, mode, want), got in zip(checks, results, strict=True):
        _eq(got, want, f"{kind} {mode} {dt}")


def test_scatter_window_clip_and_batching():
    """A scatter of 2-wide windows: CLIP clamps the start to dim - 2; FILL_OR_DROP drops
    windows that do not fit; batching dims pair operand and index rows."""
    x = np.zeros(6, np.float32)
    idx = np.array([[0], [5], [-3]], np.int32)
    upd = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(),
             scatter_dims_to_operand_dims=(0,))
    xb = np.zeros((2, 4), np.int32)
    bidx = np.array([[1], [3]], np.int32)
    bupd = np.array([10, 20], np.int32)
    bdn = SDN(update_window_dims=(), inserted_window_dims=(1,),
              scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
              scatter_indices_batching_dims=(0,))
    b = Builder()
    vx, vi, vu, vxb, vbi, vbu = (b.arg(a.shape, a.dtype) for a in (x, idx, upd, xb, bidx, bupd))
    outs = [b.eqn(P.scatter_add_p, vx, vi, vu, dimension_numbers=dn, mode=Mode.CLIP),
            b.eqn(P.scatter_add_p, vx, vi, vu, dimension_numbers=dn, mode=Mode.FILL_OR_DROP),
            b.eqn(P.scatter_p, vxb, vbi, vbu, dimension_numbers=bdn,
                  mode=Mode.PROMISE_IN_BOUNDS)]
    lowered, (clip, drop, bat) = run(b.build(outs), x, idx, upd, xb, bidx, bupd)
    np.testing.assert_array_equal(clip, [1 + 5, 2 + 6, 0, 0, 3, 4])
    np.testing.assert_array_equal(drop, [1, 2, 0, 0, 0, 0])
    np.testing.assert_array_equal(bat, [[0, 10, 0, 0], [0, 0, 0, 20]])
    assert "input_batching_dims = [0], scatter_indices_batching_dims = [0]" in \
        lowered.as_text()


def test_gather_mode_strings_and_none():
    x = np.arange(5, dtype=np.float32)
    idx = np.array([[1], [8]], np.int32)
    dn = GDN(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    b = Builder()
    vx, vi = b.arg(x.shape, x.dtype), b.arg(idx.shape, idx.dtype)
    outs = [b.eqn(P.gather_p, vx, vi, dimension_numbers=dn, slice_sizes=(1,), mode=m)
            for m in ("clip", None, "fill")]
    _, (c, n, f) = run(b.build(outs), x, idx)
    np.testing.assert_array_equal(c, [1, 4])
    np.testing.assert_array_equal(n, [1, np.nan])
    np.testing.assert_array_equal(f, [1, np.nan])
