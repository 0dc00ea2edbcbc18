"""Mutable array references: `Ref`, `new_ref`, `freeze`, `empty_ref`, `free_ref`, and the
`olympus.ref` functions (`get`, `set`, `swap`, `addupdate`).

Eagerly a `Ref` wraps a mutable buffer: it holds an `olympus.Array` and a write replaces
it (``ref[idx] = v`` is ``value.at[idx].set(v)``). Under a trace a concrete `Ref` (passed
to, or closed over by, a traced function) is an operand of the ref primitives (`get`,
`swap`, `addupdate`), recorded with the type ``Ref{f32[3]}``; a jitted function whose
program holds refs runs its discharged form (`ref_discharge`) and writes the refs' final
values back.
"""

from __future__ import annotations

import numpy as np

from olympus_ir.avals import ShapedArray
from olympus_ir.prims.refs import AbstractRef
from olympus_trace import core as trace_core
from olympus_trace import lax_ops
from olympus_trace.core import EvalTrace, Tracer, get_aval, trace_ctx

__all__ = ["Ref", "new_ref", "freeze", "empty_ref", "free_ref", "get", "set", "swap",
           "addupdate"]


def _eager() -> bool:
    return type(trace_ctx.trace) is EvalTrace


def _as_array(x):
    import olympus.numpy as jnp

    return jnp.asarray(x)


class Ref:
    """A mutable array reference (``olympus.new_ref``). Index it to read (``ref[...]``,
    ``ref[1:]``) and assign to write (``ref[...] = x``, ``ref[i] += 1``)."""

    __slots__ = ("_value", "_aval", "__weakref__")

    def __init__(self, value):
        self._value = value
        a = get_aval(value)
        if isinstance(a, AbstractRef):
            raise TypeError("a ref cannot hold a ref (no higher-order refs)")
        self._aval = AbstractRef(a)

    @property
    def aval(self) -> AbstractRef:
        return self._aval

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    weak_type = property(lambda self: self._aval.weak_type)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def _live(self):
        if self._value is None:
            raise ValueError("the ref was frozen or freed: it can no longer be read or "
                             "written")
        return self._value

    def __getitem__(self, idx):
        return get(self, idx)

    def __setitem__(self, idx, value):
        swap(self, idx, value)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("A Ref cannot be converted to a NumPy array: read its value first "
                        "(ref[...]).")

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def unsafe_buffer_pointer(self):
        return self._live().unsafe_buffer_pointer()

    def block_until_ready(self):
        self._live().block_until_ready()
        return self

    def __repr__(self) -> str:
        if self._value is None:
            return "Ref(<freed>)"
        # Laid out as JAX lays it out (its Array repr's indentation, under a Ref( prefix).
        text = np.array2string(np.asarray(self._value), separator=", ", prefix="Array(")
        extra = f", dtype={self.dtype.name}"
        if getattr(self._value, "weak_type", False):
            extra += ", weak_type=True"
        return f"Ref({text}{extra})"


trace_core.aval_handlers[Ref] = lambda r: r._aval


class TransformedRef:
    """A view of a ref through a sequence of indexings (`transforms`, each an index as
    ``x[idx]`` takes), what ``ref.at[idx]`` gives on a traced ref: reading it reads the ref
    and applies them in order; writing it writes the viewed part of the ref."""

    __slots__ = ("ref", "transforms")

    def __init__(self, ref, transforms=()):
        self.ref = ref
        self.transforms = tuple(transforms)

    def _view(self, x):
        for t in self.transforms:
            x = x[t]
        return x

    @property
    def shape(self) -> tuple:
        from .jit import jit

        return jit(self._view).eval_shape(self.ref.aval.inner_aval).shape

    @property
    def dtype(self):
        return self.ref.aval.inner_aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def at(self) -> _RefViewIndexer:
        return _RefViewIndexer(self.ref, self.transforms)

    def get(self, idx=...):
        return self[idx]

    def set(self, value, idx=...) -> None:
        self[idx] = value

    def swap(self, value, idx=...):
        old = self[idx]
        self[idx] = value
        return old

    def __getitem__(self, idx):
        return self._view(get(self.ref, ...))[idx]

    def __setitem__(self, idx, value):
        def update(x, path, v):
            if not path:
                return v
            return x.at[path[0]].set(update(x[path[0]], path[1:], v))

        swap(self.ref, ..., update(get(self.ref, ...), (*self.transforms, idx), value))

    def __repr__(self) -> str:
        return f"TransformedRef(ref={self.ref!r}, transforms={self.transforms!r})"


class _RefViewIndexer:
    """``ref.at``: ``ref.at[idx]`` is the view of `ref` through `idx`."""

    __slots__ = ("ref", "transforms")

    def __init__(self, ref, transforms=()):
        self.ref = ref
        self.transforms = transforms

    def __getitem__(self, idx) -> TransformedRef:
        return TransformedRef(self.ref, (*self.transforms, idx))


def _is_ref(x) -> bool:
    return isinstance(x, Ref) or (isinstance(x, Tracer) and isinstance(x.aval, AbstractRef))


def _check_ref(x, what):
    if not _is_ref(x):
        raise TypeError(f"{what} expects a Ref, got {type(x).__name__}")


def new_ref(init, *, memory_space=None, kind=None):
    """A new `Ref` holding `init` (an array or scalar)."""
    if _is_ref(init):
        raise TypeError("new_ref cannot hold a ref (no higher-order refs)")
    if _eager():
        return Ref(_as_array(init))
    return lax_ops.new_ref(init, kind=kind, memory_space=memory_space)


def empty_ref(ty, *, memory_space=None):
    """A new `Ref` of the type of `ty` (anything with ``shape`` and ``dtype``), holding
    zeros (its initial contents are unspecified)."""
    from olympus_ir import dtypes

    aval = ShapedArray(tuple(ty.shape), dtypes.canonicalize_dtype(ty.dtype))
    return new_ref(lax_ops.broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ()),
                   memory_space=memory_space)


def freeze(ref):
    """The final value of `ref`; the ref can no longer be used."""
    _check_ref(ref, "freeze")
    if isinstance(ref, Ref) and _eager():
        value, ref._value = ref._live(), None
        return value
    return lax_ops.freeze(ref)


def free_ref(ref) -> None:
    """Release `ref`'s buffer; the ref can no longer be used."""
    _check_ref(ref, "free_ref")
    if isinstance(ref, Ref):
        ref._value = None


def get(ref, idx=()):
    """``ref[idx]`` (an empty index reads the whole value)."""
    _check_ref(ref, "get")
    if isinstance(ref, Ref) and _eager():
        lax_ops.to_indexer(ref.shape, idx)  # the same index checks as under a trace
        return ref._live()[idx if idx != () else ...]
    return lax_ops.ref_get(ref, idx if idx != () else ...)


def swap(ref, idx, value):
    """``old, ref[idx] = ref[idx], value``; returns `old`."""
    _check_ref(ref, "swap")
    if isinstance(ref, Ref) and _eager():
        return _eager_write(ref, idx, value, add=False)
    return lax_ops.ref_swap(ref, idx if idx != () else ..., value)


def set(ref, idx, value) -> None:  # noqa: A001 - JAX's name
    """``ref[idx] = value``."""
    swap(ref, idx, value)


def addupdate(ref, idx, value) -> None:
    """``ref[idx] += value``."""
    _check_ref(ref, "addupdate")
    if isinstance(ref, Ref) and _eager():
        _eager_write(ref, idx, value, add=True)
        return
    lax_ops.ref_addupdate(ref, idx if idx != () else ..., value)


def _eager_write(ref, idx, value, add: bool):
    current = ref._live()
    idx = idx if idx != () else ...
    indexer, operands = lax_ops.to_indexer(ref.shape, idx)
    value = _as_array(value).astype(ref.dtype)
    want = indexer.result_shape([get_aval(i) for i in operands])
    if tuple(value.shape) != tuple(want):
        raise ValueError(f"Invalid shape for `{'addupdate' if add else 'swap'}`. Ref shape: "
                         f"{ref.shape}. Expected shape: {tuple(want)}. Value shape: "
                         f"{tuple(value.shape)}.")
    old = current[idx]
    new = current.at[idx].add(value) if add else current.at[idx].set(value)
    # A set value is strongly typed; an add keeps the ref's weak type (as in JAX).
    weak = add and bool(getattr(current, "weak_type", False))
    ref._value = lax_ops.convert_element_type(_as_array(new), ref.dtype, weak_type=weak)
    return None if add else old


# --- eager evaluation of the ref primitives (bound outside any trace, e.g. by a JVP rule) -


def _install_eager_rules() -> None:
    from olympus_ir.prims import refs as R

    from . import eager
    from .ref_discharge import _np_index

    def new(args, params):
        return Ref(_as_array(args[0]))

    def read(args, params):
        ref, *idx = args
        return _as_array(ref._live())[_np_index(params["indexer"], idx)]

    def write(add):
        def rule(args, params):
            ref, val, *idx = args
            index = _np_index(params["indexer"], idx)
            cur = _as_array(ref._live())
            old = cur[index]
            new = cur.at[index].add(val) if add else cur.at[index].set(val)
            weak = add and bool(getattr(cur, "weak_type", False))
            ref._value = lax_ops.convert_element_type(new, ref.dtype, weak_type=weak)
            return [] if add else old
        return rule

    def frozen(args, params):
        value, args[0]._value = args[0]._live(), None
        return value

    eager.host_rules.update({R.new_ref_p: new, R.get_p: read, R.swap_p: write(False),
                             R.addupdate_p: write(True), R.freeze_p: frozen})


_install_eager_rules()
