"""The functions exchanged between JAX and Olympus by `nox -s export_interop`.

Written once against a namespace (`ns.jit`, `ns.numpy`, `ns.lax`, `ns.ShapeDtypeStruct`),
so the JAX process passes ``jax`` and the Olympus process passes ``olympus``; this module
imports neither. Each case gives the function, its example arguments (numpy, made from a
fixed seed), export options, and whether the exchange also checks the gradient through the
serialized VJP.
"""

from __future__ import annotations

import collections
from typing import Any, NamedTuple

import numpy as np

#: A namedtuple both sides register under the same serialized name.
Pair = collections.namedtuple("Pair", ["left", "right"])
PAIR_NAME = "export_interop.Pair"


class Case(NamedTuple):
    fun: Any  # ns -> the Python function (to be jitted)
    args: Any  # rng -> (args tuple, kwargs dict) of numpy values; rng, n -> with poly
    platforms: tuple | None = None
    grad: bool = False  # also exchange d(sum of float outputs)/d(first argument)
    #: Shape polymorphism: the ``shapes_specs`` of ``export.symbolic_args_specs`` (one
    #: string per positional argument, ``None`` for a static one) and `constraints`; the
    #: function is exported once and called with the arguments of every size in `sizes`.
    poly: tuple | None = None
    constraints: tuple = ()
    sizes: tuple = ()


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _spd(rng, n):
    a = rng.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


def cases() -> dict[str, Case]:
    return {
        "sin": Case(lambda ns: ns.numpy.sin, lambda r: ((_f32(r, 4),), {}), grad=True),
        "mlp": Case(
            lambda ns: lambda p, x: ns.numpy.tanh(x @ p["w"] + p["b"]) @ p["v"],
            lambda r: (({"w": _f32(r, 5, 8), "b": _f32(r, 8), "v": _f32(r, 8, 2)},
                        _f32(r, 3, 5)), {}), grad=True),
        "pytree": Case(
            lambda ns: lambda t: {"sum": t[0] + t[1][0], "list": [t[1][1] * 2.0, None],
                                  "tup": (t[0].sum(),)},
            lambda r: (((_f32(r, 3), [_f32(r, 3), _f32(r, 2, 2)]),), {})),
        "kwargs": Case(
            lambda ns: lambda x, *, scale, shift: x * scale + shift,
            lambda r: ((_f32(r, 2, 3),), {"scale": np.float32(1.5), "shift": _f32(r, 3)}),
            grad=True),
        "integers": Case(
            lambda ns: lambda a, b: (ns.numpy.argmax(a, axis=1), (a * b) // 3, a > b),
            lambda r: ((r.integers(-50, 50, (3, 4)).astype(np.int32),
                        r.integers(1, 9, (3, 4)).astype(np.int32)), {})),
        "reductions": Case(
            lambda ns: lambda x: (x.sum(axis=0), x.max(axis=1), ns.numpy.mean(x),
                                  ns.numpy.cumsum(x, axis=1)),
            lambda r: ((_f32(r, 4, 5),), {}), grad=True),
        "unused_arg": Case(
            lambda ns: lambda x, unused, y: x * y,
            lambda r: ((_f32(r, 3), _f32(r, 7), _f32(r, 3)), {}), grad=True),
        "while_loop": Case(
            lambda ns: lambda x: ns.lax.fori_loop(0, 5, lambda i, c: c * 0.5 + i, x),
            lambda r: ((_f32(r, 3),), {})),
        "cond": Case(
            lambda ns: lambda p, x: ns.lax.cond(p > 0, lambda v: v * 2.0,
                                                lambda v: v - 1.0, x),
            lambda r: ((np.int32(1), _f32(r, 4)), {})),
        "scan": Case(
            lambda ns: lambda xs: ns.lax.scan(lambda c, x: (c + x, c * x), 0.0 * xs[0],
                                              xs),
            lambda r: ((_f32(r, 5, 2),), {})),
        "dtypes": Case(
            lambda ns: lambda a, b, c: (a.astype(ns.numpy.float32) * 2,
                                        (b + b).astype(ns.numpy.int8), c * 2),
            lambda r: ((r.integers(-9, 9, (3,)).astype(np.int8),
                        r.integers(0, 9, (3,)).astype(np.uint8),
                        r.standard_normal(3).astype(np.float16)), {})),
        "namedtuple": Case(
            lambda ns: lambda p: Pair(p.right, p.left * p.right),
            lambda r: ((Pair(_f32(r, 2), _f32(r, 2)),), {}), grad=True),
        "multi_platform": Case(
            lambda ns: lambda x: ns.numpy.cos(x) + 1.0, lambda r: ((_f32(r, 3),), {}),
            platforms=("cpu", "cuda", "tpu")),
        "cholesky_solve": Case(
            lambda ns: lambda a, b: ns.numpy.linalg.solve(a, b) + ns.numpy.linalg.cholesky(a)[0],
            lambda r: ((_spd(r, 4), _f32(r, 4)), {})),
        "poly_sin": Case(
            lambda ns: lambda x: ns.numpy.sin(x) * 2.0,
            lambda r, n: ((_f32(r, n, 4),), {}), grad=True, poly=("b, 4",), sizes=(3, 7)),
        "poly_mlp": Case(
            lambda ns: lambda p, x: ns.numpy.tanh(x @ p["w"] + p["b"]) @ p["v"],
            lambda r, n: (({"w": _f32(r, 5, 8), "b": _f32(r, 8), "v": _f32(r, 8, 2)},
                           _f32(r, n, 5)), {}),
            grad=True, poly=(None, "batch, 5"), sizes=(1, 6)),
        "poly_shape_ops": Case(
            lambda ns: lambda x: (ns.numpy.concatenate([x, 2.0 * x]).reshape(-1),
                                  x.sum(axis=0), x[:2] * x.shape[0],
                                  ns.numpy.arange(x.shape[0], dtype=ns.numpy.int32)),
            lambda r, n: ((_f32(r, n, 3),), {}), poly=("b, ...",),
            constraints=("b >= 2",), sizes=(2, 5)),
        "poly_two_dims": Case(
            lambda ns: lambda x, y: (x @ y, ns.numpy.max(x, axis=1)),
            lambda r, n: ((_f32(r, n, n + 1), _f32(r, n + 1)), {}), grad=True,
            poly=("b, c", "c"), sizes=(2, 4)),
        "poly_integers": Case(
            lambda ns: lambda x, k: (x * k.astype(ns.numpy.float32), k + 1,
                                     ns.numpy.argmax(x)),
            lambda r, n: ((_f32(r, n), r.integers(-5, 5, (n,)).astype(np.int32)), {}),
            grad=True, poly=("b", "b"), sizes=(2, 6)),
        "poly_multi_platform": Case(
            lambda ns: lambda x: ns.numpy.cos(x).sum(axis=-1) + 1.0,
            lambda r, n: ((_f32(r, 2, n),), {}), platforms=("cpu", "cuda", "tpu"),
            poly=("2, n",), sizes=(1, 5)),
        "matmul_transcendental": Case(
            lambda ns: lambda x, y: ns.numpy.exp(x @ y) / (1.0 + ns.numpy.log1p(x @ y * x @ y)),
            lambda r: ((0.3 * _f32(r, 3, 3), 0.3 * _f32(r, 3, 3)), {}), grad=True),
    }


def flat_float_sum(ns, out) -> Any:
    """The scalar whose gradient the exchange compares: the sum of every float output."""
    total = 0.0
    for leaf in ns.tree_util.tree_leaves(out):
        if np.issubdtype(np.dtype(leaf.dtype), np.floating):
            total = total + leaf.astype(np.float32).sum()
    return total
