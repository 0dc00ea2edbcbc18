"""Tests for `olympus.scipy.spatial.transform` (`Rotation`, `Slerp`) against
`scipy.spatial.transform`: every constructor and conversion, composition, application,
mean, interpolation, pytree/jit/vmap use, and errors recorded from reference JAX 0.10.2."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.scipy.spatial.transform import Rotation, Slerp

st = pytest.importorskip("scipy.spatial.transform")


def _same_rotation(q, q_ref, tol):
    q = np.asarray(q)
    np.testing.assert_allclose(np.abs(np.sum(q * q_ref, axis=-1)), 1, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conversions(dtype):
    r = np.random.default_rng(0)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    full = dtype == np.float64  # (float32: the same paths, fewer axis sequences)
    with olympus.enable_x64(dtype == np.float64):
        angles = r.uniform(-3, 3, (6, 3)).astype(dtype)
        for seq in ("xyz", "ZYX", "xzx", "YXY", "zy", "X") if full else ("xyz", "YXY"):
            a = angles[:, :len(seq)]
            _same_rotation(Rotation.from_euler(seq, a).quat,
                           st.Rotation.from_euler(seq, a).as_quat(), tol)
        _same_rotation(Rotation.from_euler("xyz", angles, degrees=True).quat,
                       st.Rotation.from_euler("xyz", angles, degrees=True).as_quat(), tol)
        ref = st.Rotation.from_euler("xyz", angles)
        rot = Rotation.from_quat(ref.as_quat().astype(dtype))
        assert rot.quat.dtype == dtype and not rot.single and len(rot) == 6
        for seq in ("xyz", "ZYX", "xzx", "YXY", "XZY") if full else ("ZYX", "xzx"):
            np.testing.assert_allclose(rot.as_euler(seq), ref.as_euler(seq), atol=50 * tol)
        np.testing.assert_allclose(rot.as_euler("zyx", degrees=True),
                                   ref.as_euler("zyx", degrees=True), atol=3000 * tol)
        np.testing.assert_allclose(rot.as_matrix(), ref.as_matrix(), atol=tol)
        _same_rotation(Rotation.from_matrix(ref.as_matrix()).quat, ref.as_quat(), tol)
        np.testing.assert_allclose(rot.as_rotvec(), ref.as_rotvec(), atol=tol)
        np.testing.assert_allclose(rot.as_rotvec(degrees=True), ref.as_rotvec(degrees=True),
                                   atol=100 * tol)
        rv = r.normal(size=(6, 3)).astype(dtype)
        np.testing.assert_allclose(Rotation.from_rotvec(rv).quat,
                                   st.Rotation.from_rotvec(rv).as_quat(), atol=tol)
        np.testing.assert_allclose(Rotation.from_rotvec(1e-4 * rv).quat,
                                   st.Rotation.from_rotvec(1e-4 * rv).as_quat(), atol=tol)
        np.testing.assert_allclose(rot.as_mrp(), ref.as_mrp(), atol=tol)
        np.testing.assert_allclose(Rotation.from_mrp(rv / 4).quat,
                                   st.Rotation.from_mrp(rv / 4).as_quat(), atol=tol)
        np.testing.assert_allclose(rot.as_quat(canonical=True, scalar_first=True),
                                   ref.as_quat(canonical=True, scalar_first=True), atol=tol)
        np.testing.assert_allclose(rot.magnitude(), ref.magnitude(), atol=tol)
        np.testing.assert_allclose(rot.inv().as_matrix(), ref.inv().as_matrix(), atol=tol)
        np.testing.assert_allclose((rot[0] * rot).as_matrix(), (ref[0] * ref).as_matrix(),
                                   atol=10 * tol)
        v = r.normal(size=(6, 3)).astype(dtype)
        np.testing.assert_allclose(rot.apply(v), ref.apply(v), atol=10 * tol)
        np.testing.assert_allclose(rot.apply(v, inverse=True), ref.apply(v, inverse=True),
                                   atol=10 * tol)
        np.testing.assert_allclose(rot[2].apply(v[0]), ref[2].apply(v[0]), atol=10 * tol)
        w = r.uniform(0.1, 1, 6)
        _same_rotation(rot.mean(w).quat, ref.mean(w).as_quat(), 10 * tol)
        both = Rotation.concatenate([rot[:2], rot[2:]])
        np.testing.assert_allclose(both.quat, rot.quat)
        np.testing.assert_array_equal(Rotation.identity().quat, [0, 0, 0, 1])


def test_slerp_pytree_jit_vmap():
    r = np.random.default_rng(1)
    ref = st.Rotation.from_rotvec(r.normal(size=(5, 3)))
    rot = Rotation.from_quat(ref.as_quat().astype(np.float32))
    times = np.arange(5.0)
    slerp = Slerp.init(times, rot)
    want = st.Slerp(times, ref)
    tq = np.array([0.3, 1.5, 3.99, 2.0])
    np.testing.assert_allclose(slerp(tq).as_matrix(), want(tq).as_matrix(), atol=2e-5)
    assert slerp(2.5).single
    np.testing.assert_allclose(olympus.jit(lambda s, t: s(t).quat)(slerp, tq),
                               slerp(tq).quat, atol=1e-6)
    mats = olympus.vmap(lambda q: Rotation.from_quat(q).as_matrix())(rot.quat)
    np.testing.assert_allclose(mats, ref.as_matrix(), atol=2e-5)
    with olympus.enable_x64():
        g = olympus.grad(lambda a: jnp.sum(Rotation.from_euler("z", a).apply(
            jnp.array([1.0, 0.0, 0.0]))))(0.3)
        np.testing.assert_allclose(g, np.cos(0.3) - np.sin(0.3), rtol=1e-12)


def test_errors():
    """Messages recorded from reference JAX 0.10.2."""
    single = Rotation.from_euler("xyz", np.array([0.1, 0.2, 0.3]))
    with pytest.raises(TypeError, match="Single rotation has no len()."):
        len(single)
    with pytest.raises(TypeError, match="Single rotation is not subscriptable."):
        single[0]
    with pytest.raises(ValueError, match="Expected axis specification to be a non-empty "
                                         "string of upto 3 characters, got xyzx"):
        Rotation.from_euler("xyzx", np.ones(4))
    with pytest.raises(ValueError, match=r"Expected axes from `seq` to be from \['x', 'y', "
                                         r"'z'\] or \['X', 'Y', 'Z'\], got xYz"):
        Rotation.from_euler("xYz", np.ones(3))
    with pytest.raises(ValueError, match="Expected consecutive axes to be different, got xxz"):
        Rotation.from_euler("xxz", np.ones(3))
    with pytest.raises(ValueError, match="Expected 3 axes, got xy."):
        single.as_euler("xy")
    with pytest.raises(ValueError, match="`rotations` must be a sequence of at least 2 "
                                         "rotations."):
        Slerp.init(np.arange(2.0), single)
    with pytest.raises(NotImplementedError):
        Rotation.random(None)


def test_rotation_matrix_rounds_as_jax():
    """Recorded from reference JAX 0.10.2 (its Rotation docstring): JAX evaluates the
    quaternion-to-matrix formula op by op, so the diagonal of a 90-degree turn is exactly
    0 in float32 (a fused multiply-add would leave 1.27e-08)."""
    import numpy as np

    from olympus.scipy.spatial.transform import Rotation

    m = np.asarray(Rotation.from_euler("z", 90, degrees=True).as_matrix())
    want = np.array([[0.0, -0.99999994, 0.0], [0.99999994, 0.0, 0.0],
                     [0.0, 0.0, 0.99999994]], np.float32)
    np.testing.assert_array_equal(m, want)
