"""Mutable array references (``olympus.new_ref``, ``olympus.ref``): the ref type and the
primitives that create, read and write refs.

`AbstractRef` is the type of a ref (printed ``Ref{f32[3]}``), wrapping the type of the
array it holds. The primitives, with JAX's names and printed forms:

* ``new_ref(x; kind, memory_space) -> Ref{x}``, ``freeze(ref) -> array``;
* ``get(ref, *idx; indexer) -> array`` (printed ``b:f32[] <- a[1]``);
* ``swap(ref, val, *idx; indexer) -> old`` (``c:f32[], a[1] <- a[1], v``, or
  ``a[1] <- v`` when the old value is unused);
* ``addupdate(ref, val, *idx; indexer)`` (``a[1] += v``).

An `Indexer` is static: per dimension of the ref, a slice (start, size, stride), or an
integer index whose value is an operand (a scalar or, at the front, an integer array; the
arrays broadcast together and their shape leads the result's, as in JAX's NDIndexer).
Every ref operation has the `ref_effect`; programs that hold refs are "discharged" before
lowering (each ref becomes a value threaded through the program, see
``olympus/_src/ref_discharge.py``), so no lowering rule ever sees one.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..core import Literal, def_shape_rule, new_primitive
from ..pretty import pp_eqn_rules
from .callbacks import Effect, effect_rules

__all__ = ["AbstractRef", "Indexer", "RefEffect", "ref_effect", "new_ref_p", "get_p", "swap_p",
           "addupdate_p", "freeze_p", "REF_PRIMITIVES"]


class AbstractRef:
    """The type of a mutable array reference holding an array of type `inner_aval`."""

    __slots__ = ("inner_aval",)
    array_abstraction_level = 1

    def __init__(self, inner_aval: ShapedArray):
        if isinstance(inner_aval, AbstractRef):
            raise TypeError("a ref cannot hold a ref (no higher-order refs)")
        self.inner_aval = inner_aval

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    memory_space = property(lambda self: self.inner_aval.memory_space)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    ndim = property(lambda self: self.inner_aval.ndim)
    size = property(lambda self: self.inner_aval.size)

    def str_short(self, short_dtypes: bool = True) -> str:
        return f"Ref{{{self.inner_aval.str_short(short_dtypes)}}}"

    def __str__(self) -> str:
        return f"Ref{{{self.inner_aval.str_short(short_dtypes=False)}}}"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractRef and self.inner_aval == other.inner_aval

    def __hash__(self) -> int:
        return hash(("Ref", self.inner_aval))

    def update(self, shape=None, dtype=None, weak_type=None) -> AbstractRef:
        return AbstractRef(self.inner_aval.update(shape, dtype, weak_type))

    def strip_weak_type(self) -> AbstractRef:
        return AbstractRef(self.inner_aval.strip_weak_type())


class RefEffect(Effect):
    """The effect of reading or writing a ref (printed ``Ref``)."""

    __slots__ = ()

    def __reduce__(self):
        return (_the_ref_effect, ())


ref_effect = RefEffect("Ref", ordered=False)


def _the_ref_effect() -> RefEffect:
    return ref_effect


class Indexer:
    """A static indexer of a ref: per dimension ``("slice", start, size, stride)`` or
    ``("int",)`` (its value is the next index operand). Hashable: an equation param."""

    __slots__ = ("dims", "shape")

    def __init__(self, dims: tuple, shape: tuple):
        self.dims = tuple(dims)
        self.shape = tuple(shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Indexer) and (self.dims, self.shape) == (other.dims,
                                                                         other.shape)

    def __hash__(self) -> int:
        return hash((self.dims, self.shape))

    def __repr__(self) -> str:
        return f"Indexer({self.dims}, shape={self.shape})"

    @property
    def num_operands(self) -> int:
        return sum(1 for d in self.dims if d[0] == "int")

    def result_shape(self, idx_avals) -> tuple:
        int_shapes = [a.shape for a in idx_avals]
        lead = np.broadcast_shapes(*int_shapes) if int_shapes else ()
        sizes = tuple(d[2] for d in self.dims if d[0] == "slice")
        return tuple(lead) + sizes

    def is_full(self) -> bool:
        return all(d[0] == "slice" and d[1] == 0 and d[2] == n and d[3] == 1
                   for d, n in zip(self.dims, self.shape))

    def pp(self, names) -> str:
        """``1,:`` / ``...``, with `names` the printed index operands."""
        if self.is_full():
            return "..."
        names = iter(names)
        parts = []
        for d, n in zip(self.dims, self.shape):
            if d[0] == "int":
                parts.append(next(names))
            else:
                start, size = d[1], d[2]
                stop = start + size
                parts.append(f"{start if start else ''}:{'' if stop == n else stop}")
        return ",".join(parts)


def _check_indices(ref, idx_avals, indexer, what):
    if not isinstance(ref, AbstractRef):
        raise TypeError(f"{what} requires a ref operand, got {_short(ref)}.")
    if not isinstance(indexer, Indexer) or indexer.shape != ref.shape:
        raise TypeError(f"{what} indexer {indexer!r} does not index a ref of shape "
                        f"{ref.shape}.")
    if len(idx_avals) != indexer.num_operands:
        raise TypeError(f"{what} takes {indexer.num_operands} index operands, got "
                        f"{len(idx_avals)}.")
    for a in idx_avals:
        if not dtypes.is_integer(a.dtype):
            raise TypeError(f"{what} index operands must be integers, got {a.str_short()}.")
    return ShapedArray(indexer.result_shape(idx_avals), ref.dtype, ref.weak_type)


def _short(a) -> str:
    return a.str_short() if hasattr(a, "str_short") else repr(a)


new_ref_p = new_primitive("new_ref")
get_p = new_primitive("get")
swap_p = new_primitive("swap")
addupdate_p = new_primitive("addupdate", multiple_results=True)
freeze_p = new_primitive("freeze")
REF_PRIMITIVES = (new_ref_p, get_p, swap_p, addupdate_p, freeze_p)


@def_shape_rule(new_ref_p)
def new_ref_shape_rule(x, *, kind=None, memory_space=None):
    if isinstance(x, AbstractRef):
        raise TypeError("new_ref cannot hold a ref (no higher-order refs).")
    return AbstractRef(x)


@def_shape_rule(freeze_p)
def freeze_shape_rule(ref):
    if not isinstance(ref, AbstractRef):
        raise TypeError(f"freeze requires a ref operand, got {_short(ref)}.")
    return ref.inner_aval


@def_shape_rule(get_p)
def get_shape_rule(ref, *idx, indexer):
    return _check_indices(ref, idx, indexer, "get")


def _check_value(ref, val, idx, indexer, what):
    want = _check_indices(ref, idx, indexer, what)
    if isinstance(val, AbstractRef):
        raise TypeError(f"{what} cannot store a ref in a ref (no higher-order refs).")
    if val.shape != want.shape:
        raise ValueError(f"Invalid shape for `{what}`. Ref shape: {ref.shape}. Expected shape: "
                         f"{want.shape}. Value shape: {val.shape}. Indexer: {indexer!r}.")
    if val.dtype != ref.dtype:
        raise ValueError(f"Invalid dtype for `{what}`. Ref dtype: {ref.dtype}. Value dtype: "
                         f"{val.dtype}.")
    return want


@def_shape_rule(swap_p)
def swap_shape_rule(ref, val, *idx, indexer):
    return _check_value(ref, val, idx, indexer, "swap")


@def_shape_rule(addupdate_p)
def addupdate_shape_rule(ref, val, *idx, indexer):
    _check_value(ref, val, idx, indexer, "addupdate")
    return []


for _p in (get_p, swap_p, addupdate_p):
    effect_rules[_p] = lambda eqn: ref_effect


# --- printing, as JAX prints them ---------------------------------------------------------


def _pp_ref_eqn(eqn, context, settings):
    from .. import layout as pp

    def index(v):
        if isinstance(v, Literal):
            return str(np.asarray(v.val)[()]) if np.ndim(v.val) == 0 else context(v)
        return context(v)

    prim = eqn.primitive
    indexer = eqn.params["indexer"]
    if prim is get_p:
        ref, *idx = eqn.invars
        return pp.text(f"{context.binder(eqn.outvars[0])} <- "
                       f"{context(ref)}[{indexer.pp(map(index, idx))}]")
    ref, val, *idx = eqn.invars
    target = f"{context(ref)}[{indexer.pp(map(index, idx))}]"
    if prim is addupdate_p:
        return pp.text(f"{target} += {context(val)}")
    out = eqn.outvars[0]
    if context(out) == "_":
        return pp.text(f"{target} <- {context(val)}")
    return pp.text(f"{context.binder(out)}, {target} <- {target}, {context(val)}")


def _register_printing() -> None:
    for p in (get_p, swap_p, addupdate_p):
        pp_eqn_rules[p] = _pp_ref_eqn


_register_printing()
