"""PRNG keys and the threefry-2x32 counter-based generator.

Olympus's default (and only) PRNG is JAX's ``threefry2x32``: a key is two uint32 words and
every derived quantity (split keys, folded keys, random bits) is the Threefry-2x32 hash of
counters under that key. For the same seed the bit streams equal JAX's, in both of JAX's
modes:

* **partitionable** (JAX's default since 0.5, and so the default of jax 0.10.2): counter
  ``i`` of an output of shape ``s`` is the 64-bit flat index ``i`` as two words
  ``(hi, lo)``; ``split`` takes both hash words as the new key, ``bits`` xors them.
* **legacy** (``jax_threefry_partitionable=False``): counters ``0 .. n-1`` are hashed as a
  flat vector split into two halves.

The mode is the config option ``olympus_threefry_partitionable`` (default True, read from the
environment variable ``OLYMPUS_THREEFRY_PARTITIONABLE`` at import) or the context manager
`threefry_partitionable`. It is part of the cache key of every jitted sampler here, but a
user function jitted *before* the mode changes keeps the stream it was traced with.

Keys come in two forms, as in JAX:

* raw keys (`PRNGKey`): ``uint32[..., 2]`` arrays;
* typed keys (`key`): a thin `PRNGKeyArray` wrapper around the same ``uint32[..., 2]`` data
  whose ``shape`` drops the trailing 2 and whose ``dtype`` prints as ``key<fry>``. It is a
  pytree (one leaf, the data), so it passes through `jit`, `vmap`, `grad` and `lax` control
  flow; vmapping over typed keys maps the data's leading axes (``in_axes`` counts from the
  front; a negative axis would count the hidden trailing 2).

Every function takes either form and returns the same form it was given.
"""

from __future__ import annotations

import contextlib
import math
import operator
import threading

import numpy as np

import olympus.numpy as jnp
import olympus_runtime as _rt
from olympus.numpy._indexing import getitem as _getitem
from olympus_ir import dtypes
from olympus_ir.avals import ShapedArray
from olympus_ir.core import abstract_eval
from olympus_ir.prims.random import random_clone_p, random_unwrap_p, random_wrap_p
from olympus_trace import key_reuse as _key_reuse_analysis
from olympus_trace import lax_ops as lax
from olympus_trace import tree_util
from olympus_trace.core import Tracer, get_aval

from .._src import eager as _eager
from .._src.config import config
from .._src.jit import jit

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: _U64}

_FLAG = "olympus_threefry_partitionable"


def _partitionable() -> bool:
    return bool(config._values[_FLAG])


@contextlib.contextmanager
def threefry_partitionable(enabled: bool = True):
    """Temporarily switch between JAX's partitionable (default) and legacy threefry streams."""
    old = config._values[_FLAG]
    config.update(_FLAG, bool(enabled))
    try:
        yield
    finally:
        config.update(_FLAG, old)


def _sampler_jit(static_argnames=(), name=None):
    """`jit` with the given static keyword arguments, named `name` (default: the function's
    name without ``_jit``). The threefry mode and the default implementation are part of
    every jit's cache key (config options with ``jit_key``), so changing them never reuses
    a program lowered under the other."""

    def deco(fun):
        def impl(*args, **kwargs):
            return fun(*args, **kwargs)

        # Named as JAX's jitted samplers (`_uniform`, `_normal`...): the name of the
        # equation in a printed program.
        impl.__name__ = impl.__qualname__ = name or fun.__name__.removesuffix("_jit")
        return jit(impl, static_argnames=tuple(static_argnames))

    return deco


# --- PRNG implementations --------------------------------------------------------------------


class PRNGImpl:
    """A PRNG implementation: how keys of shape `key_shape` are seeded, split, folded and
    turned into random bits (each a function of raw key data), and its `name` and the
    `tag` of its key dtype (``key<tag>``)."""

    __slots__ = ("key_shape", "seed", "split", "random_bits", "fold_in", "name", "tag")

    def __init__(self, key_shape, seed, split, random_bits, fold_in, name, tag):
        self.key_shape = tuple(key_shape)
        self.seed, self.split, self.random_bits, self.fold_in = seed, split, random_bits, \
            fold_in
        self.name, self.tag = name, tag

    def __repr__(self) -> str:
        return (f"PRNGImpl(key_shape={self.key_shape}, seed={self.seed!r}, "
                f"split={self.split!r}, random_bits={self.random_bits!r}, "
                f"fold_in={self.fold_in!r}, name={self.name!r}, tag={self.tag!r})")

    def __str__(self) -> str:
        return self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other) -> bool:
        return isinstance(other, PRNGImpl) and other.name == self.name


#: name -> implementation (threefry2x32 here, rbg and unsafe_rbg in `_rbg`).
_IMPLS: dict[str, PRNGImpl] = {}


def register_prng(impl: PRNGImpl) -> None:
    _IMPLS[impl.name] = impl


class _Active(threading.local):
    """The implementation of the keys being worked on (set by `_to_raw`, and while a
    sampler is traced), so the shared samplers' raw-data helpers dispatch to it."""

    impl: PRNGImpl | None = None


_active = _Active()


def _default_impl() -> PRNGImpl:
    return _IMPLS[config._values["olympus_default_prng_impl"]]


def _resolve_impl(impl) -> PRNGImpl:
    """`impl` (None, a name, a `PRNGImpl` or a key dtype) as a registered `PRNGImpl`."""
    if impl is None:
        return _default_impl()
    if isinstance(impl, PRNGImpl):
        return impl
    if isinstance(impl, KeyDType):
        return impl.impl
    if isinstance(impl, str) and impl in _IMPLS:
        return _IMPLS[impl]
    names = ", ".join(f'"{n}"' for n in _IMPLS)
    raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: '
                     f"{names}?")


# --- typed keys ------------------------------------------------------------------------------


#: The dtype of typed PRNG keys (``key<fry>``, ``key<rbg>``, ``key<urbg>``): the IR's.
KeyDType = dtypes.KeyDType


class PRNGKeyArray(_rt.ArrayBase):
    """An array of typed PRNG keys: a thin wrapper around ``uint32[*shape, 2]`` key data.

    Supports ``shape``/``ndim``/``size``/``dtype``, indexing and iteration over the leading
    (key) dimensions, ``reshape``, ``==``/``!=``, and `len`. Use `key_data` to get the raw
    data back."""

    __slots__ = ("_base", "_impl", "_used", "_used_at")
    __array_priority__ = 100

    def __init__(self, base, impl: PRNGImpl | None = None):
        self._base = base
        self._impl = _IMPLS["threefry2x32"] if impl is None else impl

    @property
    def _consumed(self):
        """Whether (a bool, or per key a boolean array) these keys were consumed, as the
        key-reuse checker (``olympus_debug_key_reuse``, `_key_reuse`) tracks it; unset
        (False) until the checker marks it, so making a key costs nothing extra."""
        try:
            return self._used
        except AttributeError:
            return False

    @_consumed.setter
    def _consumed(self, value):
        self._used = value

    @property
    def shape(self) -> tuple:
        return tuple(get_aval(self._base).shape[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> KeyDType:
        return KeyDType(self._impl)

    @property
    def aval(self) -> ShapedArray:
        """``key<fry>[*shape]``: what a trace sees (the data stays underneath)."""
        return ShapedArray(self.shape, KeyDType(self._impl))

    @property
    def sharding(self):
        return self._base.sharding

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        # Unpacking (``k1, k2 = split(key)``) is not slicing for the key-reuse checker, as
        # in JAX: the keys come out unconsumed and the array is left as it was.
        base = self._base
        for i in range(self.shape[0]):
            yield PRNGKeyArray(_getitem(base, (i, Ellipsis, slice(None))), self._impl)

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if not any(i is Ellipsis for i in idx):
            idx = idx + (Ellipsis,)
        out = PRNGKeyArray(_getitem(self._base, idx + (slice(None),)), self._impl)
        if _key_reuse_analysis.enabled and not isinstance(self._base, Tracer):
            from ._key_reuse import slice_keys

            slice_keys(self, idx, out)
        return out

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = list(shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape[shape.index(-1)] = self.size // max(known, 1)
        out = PRNGKeyArray(jnp.reshape(self._base, tuple(shape) + self._impl.key_shape),
                           self._impl)
        if _key_reuse_analysis.enabled:  # a reshape forwards the keys (and their state)
            out._consumed = self._consumed if np.ndim(self._consumed) == 0 else \
                np.reshape(self._consumed, out.shape)
        return out

    def ravel(self):
        return self.reshape(self.size)

    flatten = ravel

    def _compare(self, other, fn):
        other = other._base if isinstance(other, PRNGKeyArray) else other
        return fn(jnp.equal(self._base, other), axis=-1)

    def __eq__(self, other):
        return self._compare(other, jnp.all)

    def __ne__(self, other):
        return lax.bitwise_not(self.__eq__(other))

    __hash__ = None  # arrays are unhashable

    def __array__(self, dtype=None, copy=None):
        """Key arrays are not numbers: refuse, as JAX does (`key_data` gives the raw data);
        under a trace the tracer's own conversion error."""
        if isinstance(self._base, Tracer):
            return self._base.__array__(dtype) if copy is None else self._base.__array__(
                dtype, copy)
        raise TypeError("OLYMPUS array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use olympus.random.key_data(arr) if you wish to extract the underlying "
                        "integer array.")

    def block_until_ready(self):
        if hasattr(self._base, "block_until_ready"):
            self._base.block_until_ready()
        return self

    def __repr__(self) -> str:
        if isinstance(self._base, Tracer):
            return f"PRNGKeyArray(shape={self.shape}, dtype={self.dtype}, traced)"
        return (f"Array({self.shape}, dtype={self.dtype}) overlaying:\n"
                f"{np.asarray(self._base)}")


# jit's C++ dispatch passes key arrays as their data and rebuilds key results (to users, and
# to `tree_util`'s flatten, a key array is one leaf).
tree_util.register_dispatch_node(
    PRNGKeyArray, lambda k: ((k._base,), k._impl.name),
    lambda name, children: PRNGKeyArray(children[0], _IMPLS[name]))


def _check_key_data(name: str, data, impl: PRNGImpl | None = None):
    aval = get_aval(data)
    n = (impl or _default_impl()).key_shape[-1]
    if aval.dtype != _U32 or aval.ndim < 1 or aval.shape[-1] != n:
        raise TypeError(
            f"{name}: a PRNG key must be a typed key (olympus.random.key) or raw key data of "
            f"dtype uint32 and shape (..., {n}) (olympus.random.PRNGKey); got "
            f"{aval.str_short()}.")


def is_typed_key(x) -> bool:
    """Whether `x` is a typed key array (concrete, or a tracer of a key dtype)."""
    if isinstance(x, PRNGKeyArray):
        return True
    return isinstance(x, Tracer) and dtypes.is_key_dtype(x.aval.dtype)


def _check_key(name: str, key, allow_batched: bool = False):
    """(`key` as a typed key, whether it was raw key data and so got wrapped), as JAX's
    ``_check_prng_key``: raw ``uint32[..., 2]`` keys are wrapped with the default
    implementation (``random_wrap``)."""
    if is_typed_key(key):
        typed, wrapped = key, False
    else:
        if isinstance(key, (Tracer, _rt.Array, np.ndarray)):
            data = key
        elif isinstance(key, (list, tuple)):
            data = np.asarray(key, dtype=_U32)
        else:
            raise TypeError(f"unexpected PRNG key type {type(key)}")
        impl = _default_impl()
        _check_key_data(name, data, impl)
        typed, wrapped = lax.random_wrap(data, impl=impl), True
    if not allow_batched and get_aval(typed).ndim != 0:
        shape = tuple(get_aval(typed).shape)
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{shape} != (). Use olympus.vmap for batching.")
    return typed, wrapped


def _return_keys(keys, wrapped: bool):
    """Keys made from raw key data go back as raw data (``random_unwrap``), as in JAX."""
    return lax.random_unwrap(keys) if wrapped else keys


# --- threefry -------------------------------------------------------------------------------


def _k12(key):
    return _getitem(key, 0), _getitem(key, 1)


def threefry_2x32(key, count):
    """The Threefry-2x32 hash of the uint32 array `count` under the raw key (uint32[2]).

    As JAX's ``threefry_2x32``: the flattened counts (padded with a zero to even length) are
    split into two halves which are hashed as the two words of each block; the result is
    the two hashed halves concatenated (padding removed), in `count`'s shape."""
    k1, k2 = _k12(key)
    shape = tuple(get_aval(count).shape)
    n = math.prod(shape)
    flat = lax.reshape(count, (n,))
    odd = n % 2
    if odd:
        flat = lax.concatenate([flat, np.zeros((1,), _U32)], 0)
    half = (n + odd) // 2
    x0 = lax.slice(flat, (0,), (half,))
    x1 = lax.slice(flat, (half,), (2 * half,))
    y0, y1 = lax.threefry2x32(k1, k2, x0, x1)
    out = lax.concatenate([y0, y1], 0)
    if odd:
        out = lax.slice(out, (0,), (n,))
    return lax.reshape(out, shape)


def _iota_2x32_shape(shape):
    """The row-major flat index of each position of `shape` as 64 bits: (hi, lo) words."""
    n = math.prod(shape)
    if n > 2 ** 32:
        raise NotImplementedError("random bits arrays with more than 2**32 elements")
    lo = lax.reshape(lax.iota(_U32, n), shape) if shape else np.zeros((), _U32)
    hi = lax.broadcast_in_dim(np.zeros((), _U32), shape, ())
    return hi, lo


def _hash_iota(key, shape):
    k1, k2 = _k12(key)
    hi, lo = _iota_2x32_shape(shape)
    return lax.threefry2x32(k1, k2, hi, lo)


def _threefry_split(key, shape: tuple):
    """Split one raw threefry key into keys of `shape` (result uint32[*shape, 2])."""
    shape = tuple(shape)
    if _partitionable():
        b1, b2 = _hash_iota(key, shape)
        nd = len(shape)
        return lax.concatenate([lax.expand_dims(b1, (nd,)), lax.expand_dims(b2, (nd,))], nd)
    num = math.prod(shape)
    counts = lax.iota(_U32, num * 2)
    return lax.reshape(threefry_2x32(key, counts), shape + (2,))


def _split_raw(key, shape: tuple):
    """Split typed keys into keys of `shape` each (``random_split``)."""
    return lax.random_split(key, tuple(shape))


def _split_n(key, num: int = 2):
    """`num` typed keys as a list (for internal use): a split, then each key sliced out."""
    keys = _split_raw(key, (num,))
    return [lax.squeeze(lax.slice(keys, (i,), (i + 1,), (1,)), (0,)) for i in range(num)]


def _fold_in_raw(key, data):
    """Fold uint32 data into typed keys (``random_fold_in``)."""
    return lax.random_fold_in(key, data)


def _threefry_fold_in(key, data):
    """Fold a uint32 scalar into a raw threefry key: hash the counts (0, data)."""
    counts = lax.concatenate([np.zeros((1,), _U32), lax.reshape(data, (1,))], 0)
    return threefry_2x32(key, counts)


def _random_bits(key, bit_width: int, shape: tuple):
    """Uniform random bits of `bit_width` (8, 16, 32 or 64) and `shape` from typed keys
    (``random_bits``)."""
    return lax.random_bits(key, bit_width, tuple(shape))


def _threefry_random_bits(key, bit_width: int, shape: tuple):
    """Uniform random bits of `bit_width` and `shape`, as JAX's ``threefry_random_bits``
    in the current mode."""
    shape = tuple(shape)
    dtype = UINT_DTYPES[bit_width]
    if _partitionable():
        b1, b2 = _hash_iota(key, shape)
        if bit_width == 64:
            hi = lax.convert_element_type(b1, _U64)
            lo = lax.convert_element_type(b2, _U64)
            return lax.bitwise_or(lax.shift_left(hi, np.asarray(32, _U64)), lo)
        bits = lax.bitwise_xor(b1, b2)
        return bits if bit_width == 32 else lax.convert_element_type(bits, dtype)
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    if max_count >= np.iinfo(np.uint32).max:
        raise NotImplementedError("random bits arrays needing more than 2**32 - 1 words")
    bits = threefry_2x32(key, lax.iota(_U32, max_count))
    if bit_width == 64:
        half = max_count // 2
        hi = lax.convert_element_type(lax.slice(bits, (0,), (half,)), _U64)
        lo = lax.convert_element_type(lax.slice(bits, (half,), (max_count,)), _U64)
        bits = lax.bitwise_or(lax.shift_left(hi, np.asarray(32, _U64)), lo)
    elif bit_width in (8, 16):
        # Each word holds 32 // bit_width values, least significant first.
        per = 32 // bit_width
        shifts = lax.broadcasted_iota(_U32, (max_count, per), 1)
        shifts = lax.mul(shifts, np.asarray(bit_width, _U32))
        words = lax.broadcast_in_dim(bits, (max_count, per), (0,))
        parts = lax.bitwise_and(lax.shift_right_logical(words, shifts),
                                np.asarray(np.iinfo(dtype).max, _U32))
        parts = lax.reshape(parts, (max_count * per,))
        bits = lax.slice(lax.convert_element_type(parts, dtype), (0,), (size,))
    return lax.reshape(bits, shape)


# --- public key API ---------------------------------------------------------------------------


def _seed_array(seed):
    """The seed as an integer array: Python ints go through int64 first (so big Python
    hashes are accepted and wrap to 32 bits when x64 is off, as in JAX)."""
    if isinstance(seed, PRNGKeyArray):
        raise TypeError("PRNGKey accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, bool):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if isinstance(seed, int):
        seed = np.asarray(np.int64(seed)).astype(dtypes.canonicalize_dtype(np.int64))
    elif not isinstance(seed, (Tracer, _rt.Array)):
        seed = np.asarray(seed)
        seed = seed.astype(dtypes.canonicalize_dtype(seed.dtype))
    aval = get_aval(seed)
    if aval.ndim:
        raise TypeError(f"PRNGKey accepts a scalar seed, but was given an array of shape "
                        f"{aval.shape} != (). Use olympus.vmap for batching")
    if not dtypes.is_integer(aval.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return seed


def _seed_impl(seed):
    """[high 32 bits, low 32 bits] of the (sign-extended) seed."""
    dt = get_aval(seed).dtype
    if dt.itemsize == 8:
        udt = np.dtype(np.uint64)
        useed = lax.convert_element_type(seed, udt) if dt != udt else seed
        hi = lax.convert_element_type(lax.shift_right_logical(useed, np.asarray(32, udt)), _U32)
    else:
        hi = np.zeros((), _U32)
    lo = lax.convert_element_type(seed, _U32)
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's name
    """A raw (legacy) key from an integer seed: ``uint32[2]`` for threefry2x32 (the
    default), ``uint32[4]`` for rbg and unsafe_rbg.

    A 32-bit seed ``s`` gives ``[0, s]``; a 64-bit seed (x64 on) gives its high and low
    words. Python ints beyond 32 bits wrap when x64 is off, as in JAX."""
    return lax.random_unwrap(key(seed, impl=impl))


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (a scalar `PRNGKeyArray` of dtype ``key<fry>``, ``key<rbg>`` or
    ``key<urbg>``) from an integer seed (``random_seed``)."""
    impl = _resolve_impl(impl if dtype is None else dtype)
    return lax.random_seed(_seed_array(seed), impl=impl)


def key_data(keys):
    """The raw ``uint32[..., n]`` data of a (typed or raw) key array (``random_unwrap``)."""
    typed, _ = _check_key("key_data", keys, allow_batched=True)
    return lax.random_unwrap(typed)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys from raw ``uint32[..., n]`` data (n: the implementation's key size)."""
    impl = _resolve_impl(impl if dtype is None else dtype)
    if not isinstance(key_bits_array, (Tracer, _rt.Array, np.ndarray)):
        key_bits_array = np.asarray(key_bits_array)
    _check_key_data("wrap_key_data", key_bits_array, impl)
    return lax.random_wrap(key_bits_array, impl=impl)


def key_impl(keys) -> str:
    """The name of the implementation of `keys` (``'threefry2x32'``, ``'rbg'``, ...)."""
    typed, _ = _check_key("key_impl", keys, allow_batched=True)
    return get_aval(typed).dtype.impl.name


def key_dtype(impl=None) -> KeyDType:
    """The key dtype of a PRNG implementation (`key<fry>` for threefry2x32)."""
    return KeyDType(_resolve_impl(impl))


def clone(key):
    """A copy of `key` (``random_clone``; keys are immutable, so the same keys)."""
    typed, wrapped = _check_key("clone", key, allow_batched=True)
    return _return_keys(lax.random_clone(typed), wrapped)


def _canonicalize_shape(shape, name="shape") -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None


def split(key, num=2):
    """Split a key into `num` new keys (an int, or a tuple giving the keys' shape)."""
    typed, wrapped = _check_key("split", key)
    shape = tuple(num) if isinstance(num, (tuple, list)) else (operator.index(num),)
    return _return_keys(_split_raw(typed, _canonicalize_shape(shape)), wrapped)


def fold_in(key, data):
    """A new key derived from `key` and the 32-bit integer `data`."""
    typed, wrapped = _check_key("fold_in", key)
    if np.ndim(data) if not isinstance(data, (Tracer, _rt.Array)) else get_aval(data).ndim:
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use olympus.vmap for batching.")
    if type(data) is int and not 0 <= data <= 0xFFFFFFFF:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    if not isinstance(data, (Tracer, _rt.Array)):
        data = np.asarray(data).astype(_U32)
    elif get_aval(data).dtype != _U32:
        data = lax.convert_element_type(data, _U32)
    return _return_keys(_fold_in_raw(typed, data), wrapped)


def bits(key, shape=(), dtype=None):
    """Uniform random bits: an unsigned integer array (default uint32, uint64 with x64)."""
    typed, _ = _check_key("bits", key)
    dt = dtypes.canonicalize_dtype(np.uint64 if dtype is None else dtype)
    if not dtypes.is_unsigned_int(dt):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return _random_bits(typed, dt.itemsize * 8, _canonicalize_shape(shape))


register_prng(PRNGImpl(key_shape=(2,), seed=_seed_impl, split=_threefry_split,
                       random_bits=_threefry_random_bits, fold_in=_threefry_fold_in,
                       name="threefry2x32", tag="fry"))


def _eager_wrap(args, params):
    """``random_wrap`` outside a trace: the data is the key array's, nothing runs."""
    (data,) = args
    aval = get_aval(data)
    abstract_eval(random_wrap_p, aval, **params)  # the shape rule's checks
    if not isinstance(data, _rt.Array):
        data = jnp.asarray(data)
    return PRNGKeyArray(data, _IMPLS[params["impl"].name])


def _eager_unwrap(args, params):
    (keys,) = args
    if not isinstance(keys, PRNGKeyArray):
        raise TypeError(f"random_unwrap accepts PRNG key arrays, got {get_aval(keys).str_short()}.")
    return keys._base


def _eager_clone(args, params):
    """A new key array over the same data: under the key-reuse checker a clone is fresh
    while the original keeps its own state."""
    (keys,) = args
    if not isinstance(keys, PRNGKeyArray):
        raise TypeError(f"random_clone accepts PRNG key arrays, got {get_aval(keys).str_short()}.")
    return PRNGKeyArray(keys._base, keys._impl)


_eager.host_rules[random_wrap_p] = _eager_wrap
_eager.host_rules[random_unwrap_p] = _eager_unwrap
_eager.host_rules[random_clone_p] = _eager_clone


def _install_array_methods() -> None:
    """Key arrays take the array methods and operators tracers have (``T``, ``transpose``,
    ``+``...), except those they define themselves: each runs the NumPy function, which
    moves the key data or refuses key dtypes as JAX does."""
    from olympus.numpy import _array_methods

    skip = set(_array_methods.TRACER_ONLY) | {"__array__", "__hash__"}
    for name, value in _array_methods._entries(for_array=False).items():
        if name not in skip and name not in PRNGKeyArray.__dict__:
            setattr(PRNGKeyArray, name, value)


_install_array_methods()
