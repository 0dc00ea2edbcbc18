"""Random bit generation: XLA's stateless ``rng_bit_generator`` and the threefry2x32 hash
(the building block of Olympus's default PRNG)."""

from __future__ import annotations

import enum

from .. import dtypes
from ..avals import ShapedArray, canonicalize_shape
from ..core import def_shape_rule, new_primitive
from ..pretty import def_pp_params

__all__ = ["RandomAlgorithm", "rng_bit_generator_p", "threefry2x32_p", "rng_uniform_p"]


class RandomAlgorithm(enum.IntEnum):
    """The bit-generation algorithm of ``rng_bit_generator`` (values are XLA's)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return f"RandomAlgorithm.{self.name}"

    __repr__ = __str__


rng_bit_generator_p = new_primitive("rng_bit_generator", multiple_results=True)


@def_shape_rule(rng_bit_generator_p)
def rng_bit_generator_shape_rule(key, *, shape, dtype, algorithm=RandomAlgorithm.RNG_DEFAULT,
                                 out_sharding=None):
    if key.shape != (4,) or key.dtype != dtypes.uint32:
        raise TypeError(f"rng_bit_generator key must be u32[4], got {key.str_short()}.")
    shape = canonicalize_shape(shape, "rng_bit_generator shape")
    dt = dtypes.dtype(dtype)
    if not dtypes.is_unsigned_int(dt):
        raise TypeError(f"rng_bit_generator dtype must be an unsigned integer type, got "
                        f"{dt.name}.")
    if not isinstance(algorithm, RandomAlgorithm):
        raise TypeError(f"rng_bit_generator algorithm must be a RandomAlgorithm, got "
                        f"{algorithm!r}.")
    return [ShapedArray((4,), dtypes.uint32), ShapedArray(shape, dt)]


@def_pp_params(rng_bit_generator_p)
def _rng_bit_generator_printed(eqn):
    """As JAX: the algorithm prints by name (``RNG_DEFAULT``), and `out_sharding` shows
    even when the equation does not hold it."""
    params = dict(eqn.params)
    params["algorithm"] = params.get("algorithm", RandomAlgorithm.RNG_DEFAULT).name
    params.setdefault("out_sharding", None)
    return params


threefry2x32_p = new_primitive("threefry2x32", multiple_results=True)


@def_shape_rule(threefry2x32_p)
def threefry2x32_shape_rule(k1, k2, x1, x2):
    args = (k1, k2, x1, x2)
    if any(a.dtype != dtypes.uint32 for a in args):
        raise TypeError("threefry2x32 requires uint32 arguments, got "
                        + ", ".join(a.str_short() for a in args) + ".")
    if x1.shape != x2.shape:
        raise TypeError(f"threefry2x32 counts must have the same shape, got {x1.shape} and "
                        f"{x2.shape}.")
    for name, k in (("k1", k1), ("k2", k2)):
        if k.shape not in ((), x1.shape):
            raise TypeError(f"threefry2x32 key {name} must be a scalar or have the counts' "
                            f"shape {x1.shape}, got {k.shape}.")
    out = ShapedArray(x1.shape, dtypes.uint32)
    return [out, out]


#: XLA's stateful uniform generator (``stablehlo.rng``, distribution UNIFORM): values in
#: ``[a, b)`` of the scalars' dtype; experimental in JAX, without derivative or batching.
rng_uniform_p = new_primitive("rng_uniform")


@def_shape_rule(rng_uniform_p)
def rng_uniform_shape_rule(a, b, *, shape):
    if a.dtype != b.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got {a.dtype} "
                         f"and {b.dtype}.")
    if a.shape != () or b.shape != ():
        raise ValueError("Arguments to rng_uniform must be scalars; got shapes "
                         f"{a.shape} and {b.shape}.")
    return ShapedArray(canonicalize_shape(shape), a.dtype, a.weak_type and b.weak_type)
