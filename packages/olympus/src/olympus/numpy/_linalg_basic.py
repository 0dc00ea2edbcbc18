"""Products and matrix helpers: vdot, inner, outer, tensordot, einsum (+ einsum_path),
trace, diagonal, kron, cross.

`einsum` plans its contraction order in Python like opt_einsum's greedy strategy: labels
used by one operand only are summed first, then the pair of operands whose contraction
removes the most memory (preferring pairs that share a label) is contracted with one
`dot_general`, until one operand is left, which is summed and transposed to the output.
"""

from __future__ import annotations

import builtins
import itertools
import math

import numpy as np

from olympus_ir import dtypes
from olympus_ir.shape_poly import to_dim
from olympus_trace import lax_ops as lax
from olympus_trace import promotion as prom
from olympus_trace.core import get_aval

from .._src.jit import jit
from . import _reductions
from . import _ufuncs as uf
from ._util import arr1 as _arr
from ._util import dtype_of as _dt
from ._util import shape_of as _shape

__all__ = ["vdot", "inner", "outer", "tensordot", "einsum", "einsum_path", "trace",
           "diagonal", "kron", "cross", "vecdot"]


def _promote(*xs):
    xs = prom.promote_dtypes(*xs)
    weak = builtins.all(get_aval(x).weak_type for x in xs)
    return list(xs), _dt(xs[0]), weak


def _dot_general(a, b, dn, out_dt, weak, precision=None, preferred_element_type=None):
    pet = out_dt if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    out = lax.dot_general(a, b, dn, precision=precision, preferred_element_type=pet)
    return lax.convert_element_type(out, pet, weak and preferred_element_type is None)


def _ravel(x):
    return lax.reshape(x, (to_dim(math.prod(_shape(x))),))


# --- simple products ----------------------------------------------------------------------------


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """``sum(conj(a) * b)`` over the flattened arrays."""
    (a, b), dt, weak = _promote(_arr("vdot", a), _arr("vdot", b))
    if dtypes.is_complex(dt):
        a = lax.conj(a)
    a, b = _ravel(a), _ravel(b)
    if _shape(a) != _shape(b):
        raise ValueError(f"vdot requires arrays of the same size, got {_shape(a)} and "
                         f"{_shape(b)}.")
    return _dot_general(a, b, (((0,), (0,)), ((), ())), dt, weak, precision,
                        preferred_element_type)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """``sum(conj(x1) * x2, axis)`` with broadcasting of the other axes (the array API's
    vecdot): one batched dot_general in the operands' promoted dtype, as JAX's (so uint8
    stays uint8, where ``sum`` would widen it)."""
    a, b = _arr("vecdot", x1), _arr("vecdot", x2)
    sa, sb = _shape(a), _shape(b)
    try:
        ka, kb = sa[axis], sb[axis]
    except IndexError:
        raise ValueError(f"axis {axis} is out of bounds for arrays of shapes {sa} and "
                         f"{sb}") from None
    if ka != kb:
        raise ValueError(f"axes must match; got shapes {sa} and {sb} with axis={axis}")
    (a, b), dt, weak = _promote(a, b)
    if dtypes.is_complex(dt):
        a = lax.conj(a)
    a = _reductions_moveaxis(a, axis)
    b = _reductions_moveaxis(b, axis)
    batch = np.broadcast_shapes(_shape(a)[:-1], _shape(b)[:-1])
    a = prom.broadcast_to(a, batch + (ka,))
    b = prom.broadcast_to(b, batch + (ka,))
    nb = len(batch)
    return _dot_general(a, b, (((nb,), (nb,)), (tuple(range(nb)), tuple(range(nb)))), dt,
                        weak, precision, preferred_element_type)


def _reductions_moveaxis(x, axis):
    nd = len(_shape(x))
    ax = axis % nd
    if ax == nd - 1:
        return x
    perm = tuple(i for i in range(nd) if i != ax) + (ax,)
    return lax.transpose(x, perm)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contraction of the last axes of `a` and `b` (a product with scalars)."""
    (a, b), dt, weak = _promote(_arr("inner", a), _arr("inner", b))
    na, nb = len(_shape(a)), len(_shape(b))
    if na == 0 or nb == 0:
        return uf.multiply(a, b)
    if _shape(a)[-1] != _shape(b)[-1]:
        raise ValueError(f"inner: shapes {_shape(a)} and {_shape(b)} are not aligned on "
                         "their last axes.")
    return _dot_general(a, b, (((na - 1,), (nb - 1,)), ((), ())), dt, weak, precision,
                        preferred_element_type)


def outer(a, b, out=None):
    """The outer product of two vectors (flattened first): `out[i, j] = a[i] * b[j]`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to olympus.numpy.outer is not supported.")
    (a, b), dt, weak = _promote(_arr("outer", a), _arr("outer", b))
    a, b = _ravel(a), _ravel(b)
    n, m = _shape(a)[0], _shape(b)[0]
    # As JAX's: a[:, None] * b[None, :], broadcast by the multiplication.
    return uf.multiply(lax.broadcast_in_dim(a, (n, 1), (0,)),
                       lax.broadcast_in_dim(b, (1, m), (1,)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Contract `a` and `b` over `axes`: an integer N (the last N of `a` with the first N of
    `b`) or a pair of axis sequences.
    """
    (a, b), dt, weak = _promote(_arr("tensordot", a), _arr("tensordot", b))
    na, nb = len(_shape(a)), len(_shape(b))
    if isinstance(axes, (int, np.integer)):
        k = int(axes)
        if k < 0 or k > builtins.min(na, nb):
            raise TypeError(f"Number of tensordot axes (axes {k}) exceeds input ranks "
                            f"({na} and {nb})")
        ca, cb = tuple(range(na - k, na)), tuple(range(k))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise TypeError("tensordot axes argument must be an int, a pair of ints, or a "
                            f"pair of lists/tuples of ints, got {axes!r}.") from None
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise TypeError("tensordot requires axes lists to have equal length, got "
                            f"{ax_a} and {ax_b}.")
        ca = tuple(prom.canonicalize_axis(i, na) for i in ax_a)
        cb = tuple(prom.canonicalize_axis(i, nb) for i in ax_b)
    for i, j in zip(ca, cb, strict=False):
        if _shape(a)[i] != _shape(b)[j]:
            raise TypeError(f"tensordot: shape mismatch on contracted axes: {_shape(a)} "
                            f"axis {i} and {_shape(b)} axis {j}.")
    return _dot_general(a, b, ((ca, cb), ((), ())), dt, weak, precision,
                        preferred_element_type)


# --- diagonal / trace ------------------------------------------------------------------------


def _moveaxes_to_end(x, a1, a2):
    nd = len(_shape(x))
    perm = [i for i in range(nd) if i not in (a1, a2)] + [a1, a2]
    return lax.transpose(x, perm)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The `offset` diagonal of the (axis1, axis2) planes, as the last axis."""
    a = _arr("diagonal", a)
    nd = len(_shape(a))
    if nd < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    a1, a2 = prom.canonicalize_axis(axis1, nd), prom.canonicalize_axis(axis2, nd)
    if a1 == a2:  # JAX's error: moving both axes to the end repeats one
        from ._shape import moveaxis

        moveaxis(a, (a1, a2), (-2, -1))
    x = _moveaxes_to_end(a, a1, a2)
    *batch, n, m = _shape(x)
    batch = tuple(batch)
    offset = int(offset)
    if offset >= 0:
        length = builtins.max(0, builtins.min(n, m - offset))
        start = offset
    else:
        length = builtins.max(0, builtins.min(n + offset, m))
        start = -offset * m
    flat = lax.reshape(x, batch + (n * m,))
    nb = len(batch)
    if length == 0:
        return lax.slice(flat, (0,) * (nb + 1), batch + (0,))
    limit = start + (length - 1) * (m + 1) + 1
    return lax.slice(flat, (0,) * nb + (start,), batch + (limit,), (1,) * nb + (m + 1,))


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """The sum along the `offset` diagonal of the `axis1`/`axis2` planes of `a`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to olympus.numpy.trace is not supported.")
    d = diagonal(a, offset, axis1, axis2)
    return _reductions.sum(d, axis=-1, dtype=dtype)


# --- kron / cross -------------------------------------------------------------------------------


def kron(a, b):
    """The Kronecker product of `a` and `b`."""
    (a, b), dt, weak = _promote(_arr("kron", a), _arr("kron", b))
    sa, sb = _shape(a), _shape(b)
    nd = builtins.max(len(sa), len(sb))
    sa = (1,) * (nd - len(sa)) + sa
    sb = (1,) * (nd - len(sb)) + sb
    a = lax.reshape(a, sa)
    b = lax.reshape(b, sb)
    inter = tuple(itertools.chain.from_iterable((x, y) for x, y in zip(sa, sb, strict=False)))
    a_b = lax.broadcast_in_dim(a, inter, tuple(range(0, 2 * nd, 2)))
    b_b = lax.broadcast_in_dim(b, inter, tuple(range(1, 2 * nd, 2)))
    return lax.reshape(uf.multiply(a_b, b_b), tuple(x * y for x, y in zip(sa, sb, strict=False)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    """Cross product of 3-vectors (or 2-vectors, treated as having z = 0)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    (a, b), dt, weak = _promote(_arr("cross", a), _arr("cross", b))
    na, nb = len(_shape(a)), len(_shape(b))
    if na == 0 or nb == 0:
        raise ValueError("cross requires arrays of at least one dimension.")
    a = _move(a, prom.canonicalize_axis(axisa, na), na - 1)
    b = _move(b, prom.canonicalize_axis(axisb, nb), nb - 1)
    da, db = _shape(a)[-1], _shape(b)[-1]
    if da not in (2, 3) or db not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 or 3)")
    batch = prom.broadcast_shapes(_shape(a)[:-1], _shape(b)[:-1])

    def comp(x, i, d):
        if i >= d:
            return lax.broadcast_in_dim(np.zeros((), _dt(x)), batch, ())
        nd = len(_shape(x))
        c = lax.squeeze(lax.slice(x, (0,) * (nd - 1) + (i,), _shape(x)[:-1] + (i + 1,)),
                        (nd - 1,))
        return prom.broadcast_to(c, batch)

    a0, a1, a2 = (comp(a, i, da) for i in range(3))
    b0, b1, b2 = (comp(b, i, db) for i in range(3))
    sub, mul = uf.subtract, uf.multiply
    z = sub(mul(a0, b1), mul(a1, b0))
    if da == 2 and db == 2:
        return z
    x = sub(mul(a1, b2), mul(a2, b1))
    y = sub(mul(a2, b0), mul(a0, b2))
    nd = len(batch)
    out = lax.concatenate([lax.broadcast_in_dim(c, batch + (1,), tuple(range(nd)))
                           for c in (x, y, z)], nd)
    return _move(out, nd, prom.canonicalize_axis(axisc, nd + 1))


def _move(x, src, dst):
    nd = len(_shape(x))
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


# --- einsum -------------------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse(subscripts: str, shapes):
    """(input label lists, output label list) with every '...' expanded to labels of its own
    (right-aligned across operands, as broadcasting does)."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
        explicit = True
    else:
        ins, out, explicit = subscripts, "", False
    in_terms = ins.split(",")
    if len(in_terms) != len(shapes):
        raise ValueError(f"einsum: {len(in_terms)} input subscripts for {len(shapes)} "
                         "operands.")
    used = set(c for c in subscripts if c.isalpha())
    spare = [chr(c) for c in range(0x100, 0x400) if chr(c) not in used]
    n_ell = 0
    for term, shape in zip(in_terms, shapes, strict=False):
        if "..." in term:
            n_named = len(term.replace("...", ""))
            n_ell = builtins.max(n_ell, len(shape) - n_named)
    ell = spare[:n_ell]
    labels = []
    for term, shape in zip(in_terms, shapes, strict=False):
        if term.count("...") > 1:
            raise ValueError("einsum: an operand may contain at most one ellipsis.")
        if "..." in term:
            pre, post = term.split("...")
            k = len(shape) - len(pre) - len(post)
            if k < 0:
                raise ValueError(f"einsum: operand subscripts {term!r} do not match shape "
                                 f"{shape}.")
            lab = list(pre) + ell[n_ell - k:] + list(post)
        else:
            lab = list(term)
        for c in lab:
            if not (c.isalpha() or c in ell):
                raise ValueError(f"einsum: invalid subscript {c!r}.")
        if len(lab) != len(shape):
            raise ValueError(f"einsum: operand subscripts {term!r} do not match the operand's "
                             f"rank {len(shape)} (shape {shape}).")
        labels.append(lab)
    if explicit:
        if "..." in out:
            pre, post = out.split("...")
            out_labels = list(pre) + ell + list(post)
        else:
            out_labels = list(out)
            if ell and builtins.any(c in ell for lab in labels for c in lab):
                # Ellipsis dims not in the output are summed.
                pass
    else:
        counts = {}
        for lab in labels:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        out_labels = ell + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
    if len(set(out_labels)) != len(out_labels):
        raise ValueError(f"einsum: output subscript {out!r} repeats a label.")
    all_in = set(c for lab in labels for c in lab)
    for c in out_labels:
        if c not in all_in:
            raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs.")
    return labels, out_labels


def _label_sizes(labels, shapes):
    sizes = {}
    for lab, shape in zip(labels, shapes, strict=False):
        for c, d in zip(lab, shape, strict=False):
            if c not in sizes or sizes[c] == 1:
                sizes[c] = d
            elif d != 1 and d != sizes[c]:
                raise ValueError(f"einsum: size of label {c!r} is {d} in one operand and "
                                 f"{sizes[c]} in another.")
    return sizes


def _size(labels, sizes):
    return to_dim(math.prod([sizes[c] for c in labels]))


def _greedy_path(labels, out_labels, sizes):
    """A contraction order: list of (i, j) positions in the shrinking operand list."""
    ops_l = [list(lab) for lab in labels]
    path = []
    out_set = set(out_labels)
    while len(ops_l) > 1:
        best = None
        for i, j in itertools.combinations(range(len(ops_l)), 2):
            others = set(c for k, lab in enumerate(ops_l) if k not in (i, j) for c in lab)
            keep = out_set | others
            li, lj = ops_l[i], ops_l[j]
            res = [c for c in dict.fromkeys(li + lj) if c in keep]
            shared = bool(set(li) & set(lj))
            cost = _size(res, sizes) - _size(li, sizes) - _size(lj, sizes)
            key = (not shared, cost, _size(res, sizes), i, j)
            if best is None or key < best[0]:
                best = (key, i, j, res)
        _, i, j, res = best
        path.append((i, j))
        ops_l = [lab for k, lab in enumerate(ops_l) if k not in (i, j)] + [res]
    return path


def _diag_labels(x, lab):
    """Take diagonals for labels repeated within one operand."""
    lab = list(lab)
    while True:
        dup = next((c for c in lab if lab.count(c) > 1), None)
        if dup is None:
            return x, lab
        i = lab.index(dup)
        j = lab.index(dup, i + 1)
        x = diagonal(x, 0, i, j)
        lab = [c for k, c in enumerate(lab) if k not in (i, j)] + [dup]


def _sum_labels(x, lab, drop):
    axes = tuple(k for k, c in enumerate(lab) if c in drop)
    if not axes:
        return x, lab
    return lax.reduce_sum(x, axes), [c for c in lab if c not in drop]


def _contract_pair(x, lx, y, ly, keep, dt, precision, pet):
    # Labels in one operand only and not kept are summed first.
    x, lx = _sum_labels(x, lx, set(lx) - set(ly) - keep)
    y, ly = _sum_labels(y, ly, set(ly) - set(lx) - keep)
    shared = [c for c in lx if c in ly]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    dn = ((tuple(lx.index(c) for c in contract), tuple(ly.index(c) for c in contract)),
          (tuple(lx.index(c) for c in batch), tuple(ly.index(c) for c in batch)))
    out = lax.dot_general(x, y, dn, precision=precision, preferred_element_type=pet)
    lout = batch + [c for c in lx if c not in shared] + [c for c in ly if c not in shared]
    return out, lout


def einsum_path(subscripts, *operands, optimize="greedy"):
    """(``['einsum_path', (i, j), ...]``, a short description) of the greedy plan."""
    shapes = [_shape(_arr("einsum_path", o)) for o in operands]
    labels, out_labels = _parse(subscripts, shapes)
    sizes = _label_sizes(labels, shapes)
    path = _greedy_path(labels, out_labels, sizes)
    return ["einsum_path"] + path, f"  Greedy contraction order: {path}"


def einsum(subscripts, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None):
    """Einstein summation. Supports explicit ('ij,jk->ik') and implicit ('ij,jk') modes,
    ellipses with broadcasting, repeated labels within an operand (diagonals), and the
    interleaved ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` form."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to olympus.numpy.einsum is not "
                                  "supported.")
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved_to_str(subscripts, *operands)
    if not operands:
        raise ValueError("einsum requires at least one operand.")
    ops_in = [_arr("einsum", o) for o in operands]
    path = None
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        path = tuple(tuple(int(i) for i in p) for p in optimize[1:])
    return _einsum_impl(subscripts, path, precision, preferred_element_type, *ops_in)


@jit(static_argnums=(0, 1, 2, 3), inline=True)
def _einsum_impl(subscripts, path, precision, preferred_element_type, *ops_in):
    xs, dt, weak = _promote(*ops_in) if len(ops_in) > 1 else (
        ops_in, _dt(ops_in[0]), get_aval(ops_in[0]).weak_type)
    pet = dt if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    shapes = [_shape(x) for x in xs]
    labels, out_labels = _parse(subscripts, shapes)
    sizes = _label_sizes(labels, shapes)
    # Broadcast size-1 dimensions against the other operands.
    xs = [x if tuple(sizes[c] for c in lab) == _shape(x) else
          prom.broadcast_to(x, tuple(sizes[c] for c in lab)) for x, lab in zip(xs, labels, strict=False)]
    pairs = [_diag_labels(x, lab) for x, lab in zip(xs, labels, strict=False)]
    out_set = set(out_labels)
    # Sum labels that appear in a single operand and not in the output.
    new = []
    for k, (x, lab) in enumerate(pairs):
        others = set(c for m, (_, lb) in enumerate(pairs) if m != k for c in lb)
        new.append(_sum_labels(x, lab, set(lab) - others - out_set))
    pairs = new
    if path is None:
        path = _greedy_path([lab for _, lab in pairs], out_labels, sizes)
    for i, j in path:
        (x, lx), (y, ly) = pairs[i], pairs[j]
        rest = [p for k, p in enumerate(pairs) if k not in (i, j)]
        keep = out_set | set(c for _, lb in rest for c in lb)
        res = _contract_pair(x, lx, y, ly, keep, dt, precision, pet)
        pairs = rest + [res]
    if len(pairs) != 1:
        raise ValueError("einsum: the contraction path does not reduce to one operand.")
    x, lab = pairs[0]
    x, lab = _sum_labels(x, lab, set(lab) - out_set)
    x = lax.transpose(x, tuple(lab.index(c) for c in out_labels))
    return lax.convert_element_type(x, pet, weak and preferred_element_type is None)


def _interleaved_to_str(first, *rest):
    args = [first] + list(rest)
    ops_, subs = [], []
    while len(args) >= 2:
        ops_.append(args.pop(0))
        subs.append(args.pop(0))
    out = args[0] if args else None
    syms = {}

    def name(s):
        if s is Ellipsis:
            return "..."
        if s not in syms:
            syms[s] = _LETTERS[len(syms)]
        return syms[s]

    ins = ",".join("".join(name(s) for s in sub) for sub in subs)
    if out is None:
        return ins, ops_
    return ins + "->" + "".join(name(s) for s in out), ops_
