"""Image resampling (`olympus.image`): ``resize`` and ``scale_and_translate``, with the
kernels and sampling conventions JAX 0.10.2 uses (those of TensorFlow's
``ScaleAndTranslate``): pixel centres at ``i + 0.5``, the inverse map
``(out + 0.5 - translation) / scale - 0.5`` gives each output sample's position in the
input, a kernel (widened by ``1/scale`` when antialiasing a downscale) weights the input
pixels, the weights of each output pixel are normalized to sum to one, and samples outside
the input get zero weight. One weight matrix per resized dimension, contracted with the
image in one einsum. ``nearest`` is a gather of ``floor((out + 0.5) * in / out)``."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence

import numpy as np

from olympus_trace.core import concrete_or_error

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resize method: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys' kernel),
    CUBIC_PYTORCH (OpenCV/PyTorch's a=-0.75 kernel with edge padding when not
    antialiasing) or AREA (box average)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        try:
            return _NAMES[s]
        except (KeyError, TypeError):
            raise ValueError(f'Unknown resize method "{s}"') from None


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    **dict.fromkeys(("linear", "bilinear", "trilinear", "triangle"), ResizeMethod.LINEAR),
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    **dict.fromkeys(("cubic", "bicubic", "tricubic"), ResizeMethod.CUBIC),
    **dict.fromkeys(("cubic-pytorch", "bicubic-pytorch"), ResizeMethod.CUBIC_PYTORCH),
    "area": ResizeMethod.AREA,
}


def _jnp():
    import olympus.numpy as jnp

    return jnp


def _lanczos(radius: float) -> Callable:
    def kernel(x):
        jnp = _jnp()
        num = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        # Near 0 the kernel is 1 (the limit of the ratio).
        val = jnp.where(x > 1e-3, num / jnp.where(x != 0, np.pi ** 2 * x * x, 1), 1)
        return jnp.where(x > radius, 0.0, val)
    return kernel


def _keys_cubic(x):
    jnp = _jnp()
    inner = ((1.5 * x - 2.5) * x) * x + 1.0
    outer = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, outer, inner))


def _opencv_cubic(x):
    jnp = _jnp()
    a = -0.75
    inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    outer = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, outer, inner))


def _triangle(x):
    jnp = _jnp()
    return jnp.maximum(0, 1 - jnp.abs(x))


_AREA = "area"
#: method -> (kernel radius, kernel of |distance|)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

_MIN_TOTAL_WEIGHT = 1000.0 * float(np.finfo(np.float32).eps)


def _normalize(w):
    jnp = _jnp()
    total = jnp.sum(w, axis=0, keepdims=True)
    return jnp.where(jnp.abs(total) > _MIN_TOTAL_WEIGHT,
                     w / jnp.where(total != 0, total, 1), 0)


def _weights(in_size: int, out_size: int, scale, translation, kernel, antialias: bool,
             edge_padding: bool, radius: int):
    """The (in_size, out_size) matrix whose column j holds output pixel j's weights."""
    jnp = _jnp()
    dt = jnp.result_type(scale, translation)
    inv = 1.0 / scale
    kscale = jnp.maximum(inv, 1.0) if antialias else 1.0
    sample = (jnp.arange(out_size, dtype=dt) + 0.5) * inv - translation * inv - 0.5
    if edge_padding:
        if antialias:
            s = concrete_or_error(None, scale, "Antialiasing with edge padding requires a "
                                  "static scale.")
            pad = math.ceil(radius * max(1.0 / float(s), 1.0))
        else:
            pad = radius
    else:
        pad = 0
    taps = jnp.arange(-pad, in_size + pad, dtype=dt)
    if kernel is _AREA:
        left = jnp.arange(out_size, dtype=dt) * inv - translation * inv
        right = left + inv
        lo = jnp.arange(in_size, dtype=dt)
        w = jnp.maximum(0.0, jnp.minimum(right[None, :], lo[:, None] + 1.0)
                        - jnp.maximum(left[None, :], lo[:, None]))
    else:
        w = kernel(jnp.abs(sample[None, :] - taps[:, None]) / kscale)
    if edge_padding:
        # Taps beyond the edges repeat the edge pixels: fold their weights onto them.
        rows = jnp.clip(taps.astype(np.int32), 0, in_size - 1)
        cols = jnp.broadcast_to(jnp.arange(out_size)[None, :], (taps.shape[0], out_size))
        w = jnp.zeros((in_size, out_size), dt).at[rows[:, None], cols].add(w)
        return _normalize(w)
    w = _normalize(w)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return jnp.where(inside[None, :], w, 0)


def _apply(x, out_shape, spatial_dims, scales, translations, kernel, antialias, precision,
           edge_padding, radius):
    jnp = _jnp()
    if not spatial_dims:
        return x
    nd = x.ndim
    operands: list = [x, list(range(nd))]
    out_labels = list(range(nd))
    for i, d in enumerate(spatial_dims):
        d = d % nd if -nd <= d < nd else d
        w = _weights(x.shape[d], out_shape[d], scales[i], translations[i], kernel,
                     antialias, edge_padding, radius).astype(x.dtype)
        operands += [w, [d, nd + i]]
        out_labels[d] = nd + i
    return jnp.einsum(*operands, out_labels, precision=precision)


def _method(method) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a ResizeMethod or a string, got {method!r}")
    return method


def _check_shape(shape, image):
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")


def scale_and_translate(image, shape, spatial_dims: Sequence[int], scale, translation,
                        method, antialias: bool = True, precision=None):
    """Resample `image` to `shape`, mapping input location ``x`` of each dimension in
    `spatial_dims` to ``x * scale + translation`` (half-centred pixels); output pixels
    whose sample falls outside the input are zero."""
    jnp = _jnp()
    from olympus_ir.avals import canonicalize_shape

    from ..lax import Precision

    precision = Precision.HIGHEST if precision is None else precision
    image = jnp.asarray(image)
    shape = canonicalize_shape(shape)
    _check_shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    k = len(spatial_dims)
    scale, translation = jnp.asarray(scale), jnp.asarray(translation)
    for name, v in (("scale", scale), ("translation", translation)):
        if v.shape != (k,):
            raise ValueError(f"{name} must have one entry per spatial dimension ({k}), got "
                             f"shape {v.shape}")
    return _jitted("scale_and_translate")(image, shape, tuple(spatial_dims), scale,
                                          translation, kernel, antialias, precision,
                                          edge_padding, radius)


def _scale_and_translate_impl(image, shape, spatial_dims, scale, translation, kernel,
                              antialias, precision, edge_padding, radius):
    from olympus_trace.promotion import promote_dtypes_inexact

    image = _inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    k = len(spatial_dims)
    return _apply(image, shape, spatial_dims, [scale[i] for i in range(k)],
                  [translation[i] for i in range(k)], kernel, antialias, precision,
                  edge_padding, radius)


_JITTED: dict = {}


def _jitted(name: str):
    """The jitted implementation (one compile per static configuration, as JAX's)."""
    fn = _JITTED.get(name)
    if fn is None:
        from .jit import jit

        if name == "resize":
            fn = jit(_resize_impl, static_argnums=(1, 2, 3, 4))
        else:
            fn = jit(_scale_and_translate_impl, static_argnums=(1, 2, 5, 6, 7, 8, 9))
        _JITTED[name] = fn
    return fn


def _inexact(x):
    jnp = _jnp()
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    return x.astype(jnp.result_type(x.dtype, 1.0) if x.dtype != bool else jnp.float32)


def _resize_nearest(x, shape):
    jnp = _jnp()
    for d in range(x.ndim):
        m, n = x.shape[d], shape[d]
        if m == n:
            continue
        pos = (jnp.arange(n, dtype=np.float32) + 0.5) * np.float32(m) / np.float32(n)
        idx = jnp.floor(pos).astype(np.int32)
        x = jnp.take(x, idx, axis=d, mode="clip") if m else x[(slice(None),) * d + (idx,)]
    return x


def _resize_impl(image, shape, method, antialias, precision):
    _check_shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _apply(image, shape, dims, scales, [0.0] * len(dims), kernel, antialias,
                  precision, method == ResizeMethod.CUBIC_PYTORCH and not antialias, radius)


def resize(image, shape, method, antialias: bool = True, precision=None):
    """`image` resampled to `shape` by `method` (a ResizeMethod or its name: "nearest",
    "linear"/"bilinear"/"trilinear"/"triangle", "cubic"/"bicubic"/"tricubic",
    "cubic-pytorch", "lanczos3", "lanczos5", "area"). With `antialias`, downscaling widens
    the kernel so that it averages over the pixels it covers."""
    from olympus_ir.avals import canonicalize_shape

    from ..lax import Precision

    precision = Precision.HIGHEST if precision is None else precision
    shape = canonicalize_shape(shape)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    return _jitted("resize")(image, shape, method, bool(antialias), precision)
