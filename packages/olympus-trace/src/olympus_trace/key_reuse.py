"""Static key-reuse analysis of olympusprs (what ``olympus.experimental.key_reuse`` checks).

Every primitive has a key-reuse *signature*: which of its key inputs it consumes (`Sink`,
with a boolean mask over the keys of an array), which of its key outputs are fresh
(`Source`), and which outputs are the same keys as an input (`Forward`). An olympuspr's
signature follows by walking its equations: a key consumed twice is an error naming the
primitive ("In random_bits, argument 0 is already consumed."), as JAX 0.10.2's checker
reports it. Control flow is analysed through its sub-olympusprs (cond's branches, scan's and
while's bodies, nested jit, checkpoint, shard_map); primitives without a rule consume every
key they take, as in JAX (custom_jvp_call and custom_vjp_call among them).

This layer holds only the analysis; whether it runs is the caller's choice: `enabled` is
set by ``olympus.config.debug_key_reuse`` (then `trace_fun` checks every olympuspr it
makes), and the eager bookkeeping of which concrete keys are consumed lives with the key
arrays (``olympus.random._key_reuse``).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from olympus_ir import dtypes
from olympus_ir.core import ClosedOlympuspr, Eqn, Literal, Olympuspr, Var, abstract_eval
from olympus_ir.prims import callbacks as _callbacks
from olympus_ir.prims import control_flow as _cf
from olympus_ir.prims import custom_derivatives as _cd
from olympus_ir.prims import elementwise as _ew
from olympus_ir.prims import indexing as _ix
from olympus_ir.prims import random as _rnd
from olympus_ir.prims import shape_ops as _sh
from olympus_ir.prims import sharding as _shd
from olympus_ir.prims import transfers as _tr

from .errors import KeyReuseError

__all__ = ["Sink", "Source", "Forward", "KeyReuseSignature", "DynamicKeyReuseSignature",
           "dynamic_key_reuse_signature", "key_reuse_signatures", "unknown_signature",
           "key_reuse_signature_from_eqn", "key_reuse_signature_from_primitive",
           "olympuspr_type_signature", "check_key_reuse_olympuspr", "enabled", "consume",
           "assert_consumed", "assert_unconsumed", "consume_p", "assert_consumed_value_p",
           "ConsumedMask"]

#: Whether key-reuse checking is on (``olympus_debug_key_reuse``): `trace_fun` then checks
#: every olympuspr it traces. Set only through the config option.
enabled = False


def _freeze_mask(mask) -> bool | np.ndarray:
    """A mask as stored: a bool when all or none of the keys are meant (an empty array
    counts as none: vmap over a zero-sized axis consumes nothing), else a read-only copy."""
    if isinstance(mask, np.bool_):
        return bool(mask)
    if isinstance(mask, bool):
        return mask
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise TypeError(f"a key-reuse mask must be a bool or a boolean array, got {mask!r}")
    if not mask.any():
        return False
    if mask.all():
        return True
    if mask.flags.writeable:
        mask = mask.copy()
        mask.flags.writeable = False
    return mask


@functools.total_ordering
class _Endpoint:
    """A `Sink` or `Source`: an index and a mask; immutable, hashable, ordered by kind and
    index (before every `Forward`)."""

    __slots__ = ("idx", "mask")

    def __init__(self, idx: int, mask: bool | np.bool_ | np.ndarray = True):
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise TypeError(f"{type(self).__name__} index must be an int, got {idx!r}")
        object.__setattr__(self, "idx", idx)
        object.__setattr__(self, "mask", _freeze_mask(mask))

    def __setattr__(self, name, value):
        raise ValueError(f"{type(self).__name__} is immutable")

    def _mask_key(self):
        if isinstance(self.mask, bool):
            return self.mask
        return (self.mask.shape, tuple(self.mask.ravel().tolist()))

    def __eq__(self, other):
        return (type(self) is type(other) and self.idx == other.idx
                and self._mask_key() == other._mask_key())

    def __lt__(self, other):
        if isinstance(other, Forward):
            return True
        if isinstance(other, _Endpoint):
            return (type(self).__name__, self.idx) < (type(other).__name__, other.idx)
        return NotImplemented

    def __hash__(self):
        return hash((type(self), self.idx, self._mask_key()))

    def __repr__(self):
        if self.mask is True:
            return f"{type(self).__name__}({self.idx})"
        return f"{type(self).__name__}({self.idx}, {self.mask})"


class Sink(_Endpoint):
    """Input `idx` is consumed (the keys where `mask` is true)."""

    __slots__ = ()


class Source(_Endpoint):
    """Output `idx` holds fresh, unconsumed keys (where `mask` is true)."""

    __slots__ = ()


class Forward(NamedTuple):
    """Output `out_idx` holds the same keys as input `in_idx` (consumed together)."""

    in_idx: int
    out_idx: int

    def __repr__(self):
        return f"Forward({self.in_idx}, {self.out_idx})"


class KeyReuseSignature:
    """A set of `Sink`, `Source` and `Forward` entries (order does not matter)."""

    __slots__ = ("_args",)

    def __init__(self, *args: Sink | Source | Forward):
        self._args = frozenset(args)

    def __repr__(self):
        return f"KeyReuseSignature{tuple(sorted(self._args))}"

    def __eq__(self, other):
        return isinstance(other, KeyReuseSignature) and self._args == other._args

    def __hash__(self):
        return hash(self._args)

    @property
    def sinks(self) -> Iterator[Sink]:
        return (a for a in self._args if isinstance(a, Sink))

    @property
    def sources(self) -> Iterator[Source]:
        return (a for a in self._args if isinstance(a, Source))

    @property
    def forwards(self) -> Iterator[Forward]:
        return (a for a in self._args if isinstance(a, Forward))


class DynamicKeyReuseSignature(NamedTuple):
    """A signature that depends on the equation (its params or sub-olympusprs)."""

    signature: Callable[[Eqn], KeyReuseSignature]


def dynamic_key_reuse_signature(f: Callable[[Eqn], KeyReuseSignature]
                                ) -> DynamicKeyReuseSignature:
    return DynamicKeyReuseSignature(f)


def _is_key(v) -> bool:
    return dtypes.is_key_dtype(getattr(v.aval, "dtype", None))


def _open(x) -> Olympuspr:
    return x.olympuspr if isinstance(x, ClosedOlympuspr) else x


#: primitive -> its signature (static, or computed from the equation).
key_reuse_signatures: dict[Any, KeyReuseSignature | DynamicKeyReuseSignature] = {}


def unknown_signature(eqn: Eqn) -> KeyReuseSignature:
    """A primitive without a rule consumes every key it takes and makes no fresh keys."""
    return KeyReuseSignature(*(Sink(i) for i, v in enumerate(eqn.invars) if _is_key(v)))


def key_reuse_signature_from_eqn(eqn: Eqn) -> KeyReuseSignature:
    sig = key_reuse_signatures.get(eqn.primitive)
    if sig is None:
        return unknown_signature(eqn)
    if isinstance(sig, KeyReuseSignature):
        return sig
    if isinstance(sig, DynamicKeyReuseSignature):
        return sig.signature(eqn)
    raise TypeError(f"Unrecognized key reuse signature of type {type(sig)}: {sig}")


def key_reuse_signature_from_primitive(prim, avals, params) -> KeyReuseSignature | None:
    """The signature of `prim` applied to values of `avals` (eager evaluation), or None for
    a primitive without a rule (eager evaluation leaves those unchecked, as JAX does)."""
    sig = key_reuse_signatures.get(prim)
    if sig is None or isinstance(sig, KeyReuseSignature):
        return sig
    outs = abstract_eval(prim, *avals, **params)
    if not prim.multiple_results:
        outs = [outs]
    return key_reuse_signature_from_eqn(
        Eqn(prim, [Var(a) for a in avals], [Var(a) for a in outs], dict(params)))


def olympuspr_type_signature(olympuspr: Olympuspr | ClosedOlympuspr) -> KeyReuseSignature:
    """The signature of `olympuspr` (inputs: its invars, then its constvars); raises
    `KeyReuseError` at the first equation that consumes a key already consumed."""
    olympuspr = _open(olympuspr)
    consumed: dict[Var, bool | np.ndarray] = {}
    forwards: dict[Var, Any] = {}  # an output -> the input it forwards

    def resolve(v):
        for _ in range(len(forwards) + 1):
            if isinstance(v, Literal) or v not in forwards:
                return v
            v = forwards[v]
        raise ValueError("forwarding cycle detected")

    def sink(v, mask) -> bool:
        """Consume `v` under `mask`; True if some of it was already consumed."""
        if not _is_key(v):
            return False
        v = resolve(v)
        if isinstance(v, Literal):
            return False
        before = consumed.get(v, False)
        if np.any(np.logical_and(before, mask)):
            return True
        consumed[v] = np.logical_or(before, mask)
        return False

    def source(v, mask) -> None:
        if _is_key(v):
            v = resolve(v)
            if not isinstance(v, Literal):
                consumed[v] = mask

    def is_consumed(v):
        v = resolve(v)
        return False if isinstance(v, Literal) else consumed.get(v, False)

    for eqn in olympuspr.eqns:
        sig = key_reuse_signature_from_eqn(eqn)
        if eqn.primitive is assert_consumed_value_p:
            _check_consumed_value(eqn, is_consumed(eqn.invars[0]))
        for fwd in sig.forwards:
            forwards[eqn.outvars[fwd.out_idx]] = eqn.invars[fwd.in_idx]
        for snk in sig.sinks:
            if not 0 <= snk.idx < len(eqn.invars):
                raise KeyReuseError(f"In {eqn.primitive}, sink {snk.idx} out of range "
                                    f"[0, {len(eqn.invars)}]")
            if sink(eqn.invars[snk.idx], snk.mask):
                raise KeyReuseError(f"In {eqn.primitive}, argument {snk.idx} is already "
                                    "consumed.")
        for v in eqn.outvars:
            if v not in forwards:
                source(v, True)  # consumed, unless a Source below says otherwise
        for src in sig.sources:
            if not 0 <= src.idx < len(eqn.outvars):
                raise KeyReuseError(f"In {eqn.primitive}, source {src.idx} out of range "
                                    f"[0, {len(eqn.outvars)}]")
            source(eqn.outvars[src.idx], False)

    inputs = [*olympuspr.invars, *olympuspr.constvars]
    index = {v: i for i, v in enumerate(inputs)}
    entries: list = []
    for i, v in enumerate(inputs):
        if _is_key(v) and np.any(consumed.get(v, False)):
            entries.append(Sink(i, consumed[v]))
    for j, v in enumerate(olympuspr.outvars):
        if not _is_key(v) or isinstance(v, Literal):
            continue
        r = resolve(v)
        if not isinstance(r, Literal) and r in index:
            entries.append(Forward(index[r], j))
        elif not np.any(consumed.get(v, False)):
            entries.append(Source(j))
    return KeyReuseSignature(*entries)


def check_key_reuse_olympuspr(olympuspr: Olympuspr | ClosedOlympuspr) -> None:
    """Raise `KeyReuseError` if `olympuspr` consumes a key twice."""
    olympuspr_type_signature(olympuspr)


# --- consume / assert_consumed: identity primitives the analysis treats specially --------

consume_p = _rnd.consume_p
assert_consumed_value_p = _rnd.assert_consumed_value_p


class ConsumedMask:
    """The expected consumed mask of ``assert_consumed_value`` (a bool or boolean array),
    hashable so it can be a primitive parameter."""

    __slots__ = ("val",)

    def __init__(self, val):
        self.val = np.array(val, dtype=bool)
        self.val.flags.writeable = False

    def __hash__(self):
        return hash((self.val.shape, self.val.tobytes()))

    def __eq__(self, other):
        return isinstance(other, ConsumedMask) and np.array_equal(self.val, other.val) and \
            self.val.shape == other.val.shape

    def __repr__(self):
        return repr(self.val.tolist()) if self.val.ndim else repr(bool(self.val))


def consume(key):
    """Consume `key` and return it (a consumed copy, as far as the analysis knows)."""
    from .lax_ops.random import consume as _consume

    return _consume(key)


def assert_unconsumed(key) -> None:
    """Make the analysis assert that `key` is not consumed at this point."""
    from .lax_ops.random import assert_consumed_value

    assert_consumed_value(key, ConsumedMask(False))


def assert_consumed(key, value=True) -> None:
    """Make the analysis assert that `key` is consumed (where `value` is true) here."""
    from .lax_ops.random import assert_consumed_value

    assert_consumed_value(key, ConsumedMask(value))


def _check_consumed_value(eqn: Eqn, consumed) -> None:
    expected = np.asarray(eqn.params["value"].val)
    if not np.all(consumed == expected):
        if np.all(expected):
            raise AssertionError(f"Expected key to be consumed in {eqn}")
        if not np.any(expected):
            raise AssertionError(f"Expected key to not be consumed in {eqn}")
        raise AssertionError(f"Expected {expected}, got {consumed} in {eqn}")


# --- the rules ---------------------------------------------------------------------------

_S = key_reuse_signatures
_FWD = KeyReuseSignature(Forward(0, 0))
_S[consume_p] = KeyReuseSignature(Sink(0), Forward(0, 0))
_S[assert_consumed_value_p] = _FWD
_S[_rnd.random_clone_p] = KeyReuseSignature(Source(0))
_S[_rnd.random_bits_p] = KeyReuseSignature(Sink(0))
_S[_rnd.random_fold_in_p] = KeyReuseSignature(Source(0))  # the key stays usable, as in JAX
_S[_rnd.random_seed_p] = KeyReuseSignature(Source(0))
_S[_rnd.random_split_p] = KeyReuseSignature(Sink(0), Source(0))
_S[_rnd.random_gamma_p] = KeyReuseSignature(Sink(0))
_S[_rnd.random_wrap_p] = KeyReuseSignature(Source(0))
_S[_rnd.random_unwrap_p] = KeyReuseSignature()  # reading the data does not consume
for _p in (_sh.broadcast_in_dim_p, _ew.copy_p, _ew.stage_p, _ew.convert_element_type_p,
           _sh.reshape_p, _sh.squeeze_p, _shd.layout_constraint_p, _shd.sharding_constraint_p,
           _ix.dynamic_slice_p, _ix.gather_p):
    _S[_p] = _FWD
_S[_callbacks.debug_callback_p] = KeyReuseSignature()
_S[_ix.dynamic_update_slice_p] = KeyReuseSignature(Sink(1), Forward(0, 0))
_S[_ix.scatter_p] = KeyReuseSignature(Sink(2), Forward(0, 0))
_S[_ew.eq_p] = KeyReuseSignature()  # comparing keys does not consume them
_S[_ew.ne_p] = KeyReuseSignature()


@dynamic_key_reuse_signature
def _slice_signature(eqn: Eqn) -> KeyReuseSignature:
    """A static slice of keys consumes the sliced keys (and gives fresh ones)."""
    aval = eqn.invars[0].aval
    if not dtypes.is_key_dtype(aval.dtype) or not all(isinstance(d, int) for d in aval.shape):
        return _FWD
    start, limit = eqn.params["start_indices"], eqn.params["limit_indices"]
    strides = eqn.params.get("strides") or (1,) * len(start)
    mask = np.zeros(aval.shape, dtype=bool)
    mask[tuple(slice(*t) for t in zip(start, limit, strides, strict=True))] = True
    return KeyReuseSignature(Sink(0, mask), Source(0))


@dynamic_key_reuse_signature
def _concatenate_signature(eqn: Eqn) -> KeyReuseSignature:
    n = len(eqn.invars)
    if n == 1:
        return _FWD
    return KeyReuseSignature(*(Sink(i) for i in range(n)), Source(0))


@dynamic_key_reuse_signature
def _call_signature(eqn: Eqn) -> KeyReuseSignature:
    """A nested jit or shard_map: its body's signature."""
    return olympuspr_type_signature(eqn.params["olympuspr"])


@dynamic_key_reuse_signature
def _cond_signature(eqn: Eqn) -> KeyReuseSignature:
    """Operand i (after the index) is consumed where any branch consumes it; output j is
    fresh where every branch makes it fresh; forwarded if every branch forwards it."""
    sigs = [olympuspr_type_signature(b) for b in eqn.params["branches"]]
    sinks: dict = defaultdict(list)
    sources: dict = defaultdict(list)
    for sig in sigs:
        for s in sig.sinks:
            sinks[s.idx].append(s.mask)
        for s in sig.sources:
            sources[s.idx].append(s.mask)
    fwds = set.intersection(*(set(sig.forwards) for sig in sigs))
    return KeyReuseSignature(
        *(Sink(i + 1, functools.reduce(np.logical_or, m)) for i, m in sinks.items()),
        *(Source(i, functools.reduce(np.logical_and, m)) for i, m in sources.items()),
        *(Forward(f.in_idx + 1, f.out_idx) for f in fwds))


def _any_mask(s) -> bool:
    return bool(np.any(s.mask))


@dynamic_key_reuse_signature
def _scan_signature(eqn: Eqn) -> KeyReuseSignature:
    """A scan body runs repeatedly: it may not consume keys among its constants, and a
    carried key it consumes must come back fresh."""
    body = eqn.params["olympuspr"]
    nconsts, ncarry = eqn.params["num_consts"], eqn.params["num_carry"]
    sig = olympuspr_type_signature(body)
    jaxpr = _open(body)
    if any(_any_mask(s) for s in sig.sinks if s.idx < nconsts):
        raise KeyReuseError("scan body function leads to key reuse when repeatedly executed, "
                            "because key constants are repeatedly consumed:\n"
                            f"  signature={sig!r}\n  eqn={eqn!r}\n  jaxpr={jaxpr}")
    carry_sinks = {s.idx - nconsts for s in sig.sinks
                   if 0 <= s.idx - nconsts < ncarry and _any_mask(s)}
    carry_sources = {s.idx for s in sig.sources if 0 <= s.idx < ncarry and _any_mask(s)}
    if not carry_sinks <= carry_sources:
        raise KeyReuseError("scan body function leads to key reuse when repeatedly executed, "
                            "because consumed inputs don't match sourced outputs:\n"
                            f"  signature={sig!r}\n  eqn={eqn!r}\n  jaxpr={jaxpr}")
    return sig


@dynamic_key_reuse_signature
def _while_signature(eqn: Eqn) -> KeyReuseSignature:
    """A while loop's cond and body run repeatedly: neither may consume a constant key,
    each carried key they consume must come back fresh from the body, and cond and body
    may not both consume the same carried key."""
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond_sig = olympuspr_type_signature(p["cond_olympuspr"])
    body_sig = olympuspr_type_signature(p["body_olympuspr"])
    cond_msg = ("while_loop cond function leads to key reuse when repeatedly executed: "
                f"  cond_signature={cond_sig!r}\n  eqn={eqn!r}")
    body_msg = ("while_loop body function leads to key reuse when repeatedly executed: "
                f"  body_signature={body_sig!r}\n  eqn={eqn!r}")
    if any(_any_mask(s) for s in cond_sig.sinks if s.idx < cn):
        raise KeyReuseError(cond_msg)
    if any(_any_mask(s) for s in body_sig.sinks if s.idx < bn):
        raise KeyReuseError(body_msg)
    body_carry = {s.idx - bn for s in body_sig.sinks if s.idx >= bn}
    cond_carry = {s.idx - cn for s in cond_sig.sinks if s.idx >= cn}
    fresh = {s.idx for s in body_sig.sources}
    if not cond_carry <= fresh:
        raise KeyReuseError(cond_msg)
    if not body_carry <= fresh:
        raise KeyReuseError(body_msg)
    if body_carry & cond_carry:
        raise KeyReuseError("while_loop cond and body functions both use the same key: "
                            f"  cond_signature={cond_sig!r}\n  body_signature={body_sig!r}\n"
                            f"  eqn={eqn!r}")
    return body_sig


@dynamic_key_reuse_signature
def _checkpoint_signature(eqn: Eqn) -> KeyReuseSignature:
    """The undifferentiated pass holds every key use; the differentiated (recomputing) one
    only repeats uses already counted, so it consumes nothing."""
    if eqn.params.get("differentiated"):
        return KeyReuseSignature()
    return olympuspr_type_signature(eqn.params["call_olympuspr"])


@dynamic_key_reuse_signature
def _device_put_signature(eqn: Eqn) -> KeyReuseSignature:
    return KeyReuseSignature(*(Forward(i, i) for i in range(len(eqn.invars))))


_S[_sh.slice_p] = _slice_signature
_S[_sh.concatenate_p] = _concatenate_signature
_S[_cf.jit_p] = _call_signature
_S[_shd.shard_map_p] = _call_signature
_S[_cf.cond_p] = _cond_signature
_S[_cf.scan_p] = _scan_signature
_S[_cf.while_p] = _while_signature
_S[_cd.checkpoint_p] = _checkpoint_signature
_S[_tr.device_put_p] = _device_put_signature
del _S, _p
