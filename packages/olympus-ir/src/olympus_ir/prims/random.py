"""Random bit generation: XLA's stateless ``rng_bit_generator``, the threefry2x32 hash
(the building block of Olympus's default PRNG), and the typed-key primitives
(``random_seed``, ``random_wrap``, ``random_unwrap``, ``random_split``, ``random_fold_in``,
``random_bits``, ``random_clone``, the Gamma sampler ``random_gamma``, and the key-reuse
checker's identities ``consume`` and ``assert_consumed_value``) whose operands or results
have a key dtype
(`dtypes.KeyDType`, printed ``key<fry>``), as JAX 0.10.2 has them. Their ``impl`` parameter
is the PRNG implementation (an object with ``name``, ``tag`` and ``key_shape``), printed by
its tag."""

from __future__ import annotations

import enum

from .. import dtypes
from ..avals import ShapedArray, canonicalize_shape
from ..core import def_shape_rule, new_primitive
from ..pretty import def_pp_params

__all__ = ["RandomAlgorithm", "rng_bit_generator_p", "threefry2x32_p", "rng_uniform_p",
           "random_seed_p", "random_wrap_p", "random_unwrap_p", "random_split_p",
           "random_fold_in_p", "random_bits_p", "random_clone_p", "random_gamma_p",
           "consume_p", "assert_consumed_value_p", "KEY_PRIMITIVES"]


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


# --- typed keys ------------------------------------------------------------------------------

random_seed_p = new_primitive("random_seed")
random_wrap_p = new_primitive("random_wrap")
random_unwrap_p = new_primitive("random_unwrap")
random_split_p = new_primitive("random_split")
random_fold_in_p = new_primitive("random_fold_in")
random_bits_p = new_primitive("random_bits")
random_clone_p = new_primitive("random_clone")
#: Gamma(a, 1) samples (their logs with ``log_space=True``), one per element of ``a``, from
#: keys whose shape is a prefix of ``a``'s (JAX's ``random_gamma_p``, exported by
#: ``jax.random``): one equation, so its derivative is the implicit one and vmap rebinds it.
random_gamma_p = new_primitive("random_gamma")

#: The key-reuse checker's markers (JAX's ``jax.experimental.key_reuse``): identities on
#: keys; ``consume`` marks its operand consumed, ``assert_consumed_value`` (param ``value``:
#: the expected consumed mask) asserts what the analysis knows at that point.
consume_p = new_primitive("consume")
assert_consumed_value_p = new_primitive("assert_consumed_value")

#: The primitives that take or make typed keys (lowered through the keys' u32 data).
KEY_PRIMITIVES = frozenset({random_seed_p, random_wrap_p, random_unwrap_p, random_split_p,
                            random_fold_in_p, random_bits_p, random_clone_p, random_gamma_p,
                            consume_p, assert_consumed_value_p})


def _key_operand(name: str, keys) -> dtypes.KeyDType:
    if not dtypes.is_key_dtype(keys.dtype):
        raise TypeError(f"{name} accepts PRNG key arrays, got {keys.str_short()}.")
    return keys.dtype


@def_shape_rule(random_seed_p)
def random_seed_shape_rule(seeds, *, impl):
    if not dtypes.is_integer(seeds.dtype):
        raise TypeError(f"random_seed requires integer seeds, got {seeds.str_short()}.")
    return ShapedArray(seeds.shape, dtypes.KeyDType(impl))


@def_shape_rule(random_wrap_p)
def random_wrap_shape_rule(base, *, impl):
    key_shape = tuple(impl.key_shape)
    n = len(key_shape)
    if base.dtype != dtypes.uint32 or base.shape[base.ndim - n:] != key_shape:
        raise TypeError(
            "random_wrap: base array must have dtype uint32 and trailing shape "
            f"{key_shape}, got {base.str_short()}.")
    return ShapedArray(base.shape[:base.ndim - n], dtypes.KeyDType(impl))


@def_shape_rule(random_unwrap_p)
def random_unwrap_shape_rule(keys):
    dt = _key_operand("random_unwrap", keys)
    return ShapedArray(keys.shape + dt.key_shape, dtypes.uint32)


@def_shape_rule(random_split_p)
def random_split_shape_rule(keys, *, shape):
    dt = _key_operand("random_split", keys)
    return ShapedArray(keys.shape + canonicalize_shape(shape, "random_split shape"), dt)


@def_shape_rule(random_fold_in_p)
def random_fold_in_shape_rule(keys, msgs):
    dt = _key_operand("random_fold_in", keys)
    if msgs.dtype != dtypes.uint32:
        raise TypeError(f"random_fold_in requires uint32 messages, got {msgs.str_short()}.")
    if keys.shape != msgs.shape and keys.shape and msgs.shape:
        raise TypeError(f"random_fold_in: keys of shape {keys.shape} and messages of shape "
                        f"{msgs.shape} do not match.")
    return ShapedArray(keys.shape or msgs.shape, dt)


@def_shape_rule(random_bits_p)
def random_bits_shape_rule(keys, *, bit_width, shape):
    _key_operand("random_bits", keys)
    if bit_width not in (8, 16, 32, 64):
        raise TypeError(f"random_bits bit_width must be 8, 16, 32 or 64, got {bit_width}.")
    out_dt = dtypes.dtype(f"uint{bit_width}")
    return ShapedArray(keys.shape + canonicalize_shape(shape, "random_bits shape"), out_dt)


@def_shape_rule(random_clone_p)
def random_clone_shape_rule(keys):
    _key_operand("random_clone", keys)
    return keys


@def_shape_rule(consume_p)
def consume_shape_rule(keys):
    _key_operand("consume", keys)
    return keys


@def_shape_rule(assert_consumed_value_p)
def assert_consumed_value_shape_rule(keys, *, value):
    _key_operand("assert_consumed_value", keys)
    return keys


@def_shape_rule(random_gamma_p)
def random_gamma_shape_rule(keys, a, *, log_space):
    _key_operand("random_gamma", keys)
    if not dtypes.is_float(a.dtype):
        raise TypeError(f"random_gamma requires a floating-point shape parameter, got "
                        f"{a.str_short()}.")
    if a.shape[:keys.ndim] != keys.shape:
        raise TypeError(f"random_gamma: the keys' shape {keys.shape} must be a prefix of the "
                        f"shape parameter's shape {a.shape}.")
    if not isinstance(log_space, bool):
        raise TypeError(f"random_gamma log_space must be a bool, got {log_space!r}.")
    return ShapedArray(a.shape, a.dtype, a.weak_type)


@def_pp_params(random_seed_p, random_wrap_p)
def _impl_printed(eqn):
    """As JAX: the implementation prints by its tag (``impl=fry``)."""
    params = dict(eqn.params)
    params["impl"] = params["impl"].tag
    return params
