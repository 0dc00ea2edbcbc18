"""`olympus.scipy.spatial.transform`: 3-D rotations stored as unit quaternions (scalar
last, SciPy's convention) and spherical linear interpolation between them. Both classes
are named tuples of arrays, hence pytrees; batches of rotations have a leading axis."""

from __future__ import annotations

import re
import typing

import numpy as np

import olympus
import olympus.numpy as jnp

__all__ = ["Rotation", "Slerp"]

# The conversions are compiled once per shape, dtype and static option (one dispatch per
# call instead of one per operation).


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalize(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """The Hamilton product p q of quaternions (x, y, z, w)."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    vec = pw * qv + qw * pv + jnp.cross(pv, qv)
    w = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
    return jnp.concatenate([vec, w], axis=-1)


def _as_matrix(q):
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    rows = [
        [x * x - y * y - z * z + w * w, 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), -x * x + y * y - z * z + w * w, 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), -x * x - y * y + z * z + w * w],
    ]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m):
    """Shepperd's method: build the quaternion from the largest of the diagonal entries
    and the trace, for stability."""
    tr = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = jnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], tr], axis=-1)
    choice = jnp.argmax(decision, axis=-1)
    cands = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - tr + 2 * m[..., i, i]
        q[j] = m[..., j, i] + m[..., i, j]
        q[k] = m[..., k, i] + m[..., i, k]
        q[3] = m[..., k, j] - m[..., j, k]
        cands.append(jnp.stack(q, axis=-1))
    cands.append(jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                            m[..., 1, 0] - m[..., 0, 1], 1 + tr], axis=-1))
    stacked = jnp.stack(cands, axis=-2)  # (..., 4 choices, 4)
    q = jnp.take_along_axis(stacked, choice[..., None, None], axis=-2)[..., 0, :]
    return _normalize(q)


def _from_rotvec(rv, degrees):
    if degrees:
        rv = jnp.deg2rad(rv)
    angle = _norm(rv)
    a2 = angle * angle
    small = 0.5 - a2 / 48 + a2 * a2 / 3840
    safe = jnp.where(angle <= 1e-3, jnp.ones_like(angle), angle)
    scale = jnp.where(angle <= 1e-3, small, jnp.sin(safe / 2) / safe)
    return jnp.concatenate([scale[..., None] * rv, jnp.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(q, degrees):
    q = jnp.where(q[..., 3:] < 0, -q, q)
    angle = 2.0 * jnp.arctan2(_norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    small = 2 + a2 / 12 + 7 * a2 * a2 / 2880
    safe = jnp.where(angle <= 1e-3, jnp.ones_like(angle), angle)
    scale = jnp.where(angle <= 1e-3, small, safe / jnp.sin(safe / 2))
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * q[..., :3]


def _from_mrp(p):
    sq1 = jnp.sum(p * p, axis=-1, keepdims=True) + 1
    return jnp.concatenate([2 * p, 2 - sq1], axis=-1) / sq1


def _as_mrp(q):
    sign = jnp.where(q[..., 3:] < 0, -1.0, 1.0).astype(q.dtype)
    return sign * q[..., :3] / (1.0 + sign * q[..., 3:])


def _canonical(q):
    neg, zero = q < 0, q == 0
    flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0])
            | (zero[..., 3] & zero[..., 0] & neg[..., 1])
            | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
    return jnp.where(flip[..., None], -q, q)


_AXIS = {"x": 0, "y": 1, "z": 2}


def _check_seq(seq, max_len):
    if len(seq) < 1 or len(seq) > max_len:
        raise ValueError("Expected axis specification to be a non-empty string of upto 3 "
                         f"characters, got {seq}")
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return intrinsic, extrinsic


def _elementary(axis, angle):
    parts = [jnp.zeros_like(angle)] * 3 + [jnp.cos(angle / 2)]
    parts[axis] = jnp.sin(angle / 2)
    return jnp.stack(parts, axis=-1)


def _from_euler(angles, axes, intrinsic, degrees):
    if degrees:
        angles = jnp.deg2rad(angles)
    q = _elementary(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], start=1):
        e = _elementary(axis, angles[..., n])
        q = _compose(q, e) if intrinsic else _compose(e, q)
    return q


def _euler_from_quat(q, axes, extrinsic, degrees):
    """Euler angles by Bernardes and Viollet's (2022) direct quaternion method."""
    if not extrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = float((i - j) * (j - k) * (k - i) // 2)
    qi, qj, qk, qw = q[..., i], q[..., j], q[..., k], q[..., 3]
    if symmetric:
        a, b, c, d = qw, qi, qj, qk * sign
    else:
        a, b, c, d = qw - qj, qi + qk * sign, qj + qw, qk * sign - qi
    theta2 = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    degenerate_zero = jnp.abs(theta2) <= eps
    degenerate_pi = jnp.abs(theta2 - np.pi) <= eps
    regular = ~(degenerate_zero | degenerate_pi)
    first = 0 if extrinsic else 2
    third = 2 if extrinsic else 0
    # Gimbal lock: the third angle is set to zero and the first absorbs the rotation.
    lock = jnp.where(degenerate_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    ang = [None, theta2, None]
    ang[first] = jnp.where(regular, half_sum - half_diff, lock if first == 0 else
                           jnp.zeros_like(lock))
    ang[third] = jnp.where(regular, half_sum + half_diff, lock if third == 0 else
                           jnp.zeros_like(lock))
    if not symmetric:
        ang[third] = ang[third] * sign
        ang[1] = ang[1] - np.pi / 2
    angles = jnp.stack(ang, axis=-1)
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.rad2deg(angles) if degrees else angles


def _apply(q, vectors, inverse):
    m = _as_matrix(q)
    if inverse:
        m = jnp.swapaxes(m, -1, -2)
    return jnp.squeeze(m @ vectors[..., None], -1)


class Rotation(typing.NamedTuple):
    """A rotation (or a batch along the leading axis), stored as unit quaternions
    (x, y, z, w)."""

    quat: olympus.Array

    @classmethod
    def concatenate(cls, rotations: typing.Sequence):
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False):
        """From Euler angles about the axes of `seq` ('xyz' extrinsic, 'XYZ' intrinsic)."""
        intrinsic, _ = _check_seq(seq, 3)
        return cls(_from_euler(jnp.atleast_1d(angles), tuple(_AXIS[a] for a in seq.lower()),
                               intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix):
        return cls(_from_matrix(jnp.asarray(matrix)))

    @classmethod
    def from_mrp(cls, mrp):
        return cls(_from_mrp(jnp.asarray(mrp)))

    @classmethod
    def from_quat(cls, quat):
        return cls(_normalize(jnp.asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False):
        return cls(_from_rotvec(jnp.asarray(rotvec), degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        assert num is None
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key, num: int | None = None):
        raise NotImplementedError()

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> Rotation:
        """The composition: `other` applied first, then `self`."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """Rotate `vectors` (shape (3,) or (N, 3)), or apply the inverse rotation."""
        return _apply(self.quat, jnp.asarray(vectors), inverse)

    def as_euler(self, seq: str, degrees: bool = False):
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        _, extrinsic = _check_seq(seq, 3)
        return _euler_from_quat(self.quat, tuple(_AXIS[a] for a in seq.lower()), extrinsic,
                                degrees)

    def as_matrix(self):
        return _as_matrix(self.quat)

    def as_mrp(self):
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        q = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(q, 1, axis=-1) if scalar_first else q

    def inv(self):
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """The rotation angle(s) in radians, in [0, pi]."""
        return 2.0 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation: the dominant eigenvector of sum_i w_i q_i q_i^T."""
        w = (jnp.ones(self.quat.shape[0], dtype=self.quat.dtype) if weights is None
             else jnp.asarray(weights, dtype=self.quat.dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of "
                             f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
        k = (w[None, :] * self.quat.T) @ self.quat
        _, v = jnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between key rotations at increasing times (build
    it with `Slerp.init(times, rotations)`)."""

    times: olympus.Array
    timedelta: olympus.Array
    rotations: Rotation
    rotvecs: olympus.Array

    @classmethod
    def init(cls, times, rotations: Rotation):
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        starts = Rotation(rotations.as_quat()[:-1])
        steps = (starts.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts, rotvecs=steps)

    def __call__(self, times):
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = jnp.atleast_1d(t)
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        out = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return out[0] if single else out


