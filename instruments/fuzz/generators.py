"""The step generators: for each family of ops (elementwise, reductions, shapes, indexing,
contractions, control flow), how a random well-typed step is drawn from the values a
program already has; and `build`, which draws a whole program (plus its vmap batch)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops as ops_mod
from . import value_types as vt
from .ops import (
    AXIS_TUPLE_REDUCTIONS,
    COND_BODIES,
    DTYPE_REDUCTIONS,
    LOOP_BODIES,
    OPS,
    REDUCTION_DTYPES,
    WHERE_REDUCTIONS,
)
from .programs import Builder, Program, Value, array_src, dtype_src, py_src

# ---------------------------------------------------------------- shape helpers


def broadcast_partner(b: Builder, shape: tuple) -> tuple:
    """A shape that broadcasts with `shape` (possibly of higher rank)."""
    r = b.integer(0, 2)
    if r == 0:
        return shape
    if r == 1:  # a suffix, some dims set to 1
        k = b.integer(0, len(shape))
        tail = shape[len(shape) - k:]
        return tuple(1 if b.coin(0.3) else d for d in tail)
    if len(shape) < 4:
        return (b.choice((1, 2, 3)),) + tuple(1 if b.coin(0.3) else d for d in shape)
    return shape


def axis_src(axis) -> str:
    return repr(axis)


def random_axis(b: Builder, ndim: int, allow_none=True, allow_tuple=False):
    if ndim == 0:
        return None if allow_none else (() if allow_tuple else None)
    r = b.integer(0, 3)
    if r == 0 and allow_none:
        return None
    if r == 3 and allow_tuple:
        k = b.integer(0, ndim)
        axes = sorted(b.permutation(range(ndim))[:k])
        return tuple(a - ndim if b.coin(0.3) else a for a in axes)
    a = b.integer(0, ndim - 1)
    return a - ndim if b.coin(0.4) else a


# ---------------------------------------------------------------- step generators


def gen_unary(b: Builder) -> Value | None:
    x = b.pick_array()
    names = [n for n, o in OPS.items() if o.family == "unary" and b.usable(n, "", [x.key])]
    if not names:
        return None
    return b.add_step(b.choice(names), "", [x])


def gen_binary(b: Builder) -> Value | None:
    names = [n for n, o in OPS.items() if o.family == "binary" and (not b.grad or o.smooth)]
    op = OPS[b.choice(names)]
    x = b.pick_array()
    # lax's binary ops do not broadcast: operands of one shape (or a Python scalar).
    partner_shape = x.shape if op.name.startswith("lax.") else broadcast_partner(b, x.shape)
    if b.grad:
        keys = ["float64", "py:float"]
    else:
        keys = [k for k in vt.TYPES if b.usable(op.name, "", [x.key, k])
                or b.usable(op.name, "", [k, x.key])]
    if not keys:
        return None
    k = b.choice(keys)
    lit = op.literals.get(1) if vt.is_py(k) else None
    if b.grad and op.name in ("true_divide", "div_op"):
        k, lit = "py:float", (2.0, -3.5)
    y = b.operand_like(k, partner_shape if not vt.is_py(k) else (), lit)
    args = [x, y] if (b.coin() or vt.is_py(y.key) and op.literals) else [y, x]
    if not b.usable(op.name, "", [a.key for a in args]):
        args = args[::-1]
        if not b.usable(op.name, "", [a.key for a in args]):
            return None
    if vt.is_py(args[0].key) and op.literals:
        return None  # literal exponents go second
    return b.add_step(op.name, "", args)


def gen_ternary(b: Builder) -> Value | None:
    x = b.pick_array()
    op = b.choice(("where", "clip", "lax.select"))
    if op == "where":
        ck = b.choice(("bool", "bool", "float32", "py:bool"))
        c = b.operand_like(ck, broadcast_partner(b, x.shape) if ck != "py:bool" else ())
        k = b.choice(vt.TYPES)
        y = b.operand_like(k, broadcast_partner(b, x.shape) if not vt.is_py(k) else ())
        args = [c, x, y] if b.coin() else [c, y, x]
    elif op == "clip":
        lo_k, hi_k = b.choice(("py:int", "py:float", x.key)), b.choice(("py:int", "py:float"))
        lo = (b.literal(lo_k, (0, 1, -1.5, 2.0)) if vt.is_py(lo_k)
              else b.operand_like(x.key, ()))
        hi = b.literal(hi_k, (3, 5.5, 100))
        args = [x, lo, hi]
    else:
        c = b.operand_like("bool", x.shape)
        y = b.operand_like(x.key, x.shape)
        args = [c, x, y]
    if not b.usable(op, "", [a.key for a in args]):
        return None
    return b.add_step(op, "", args)


def gen_reduction(b: Builder) -> Value | None:
    names = [n for n, o in OPS.items() if o.family == "reduction"]
    op = b.choice(names)
    x = b.pick_array()
    nd = len(x.shape)
    params: dict[str, Any] = {}
    src: dict[str, str] = {}
    if op in ("cumsum", "cumprod"):
        axis = random_axis(b, nd)
        params["axis"] = axis
        src["axis"] = None if axis is None else repr(axis)
    else:
        axis = random_axis(b, nd, allow_tuple=op in AXIS_TUPLE_REDUCTIONS)
        params["axis"] = axis
        src["axis"] = None if axis is None else repr(axis)
        keepdims = b.coin(0.3)
        params["keepdims"] = keepdims
        src["keepdims"] = "True" if keepdims else None
    dtype = None
    if op in DTYPE_REDUCTIONS and b.coin(0.3) and not b.grad:
        dtype = b.choice(REDUCTION_DTYPES[1:])
        src["dtype"] = dtype_src(dtype)
    pkey = f"dtype={dtype}" if dtype else ""
    if not b.usable(op, pkey, [x.key]):
        return None
    axes = (tuple(range(nd)) if axis is None else
            tuple(a % nd for a in (axis if isinstance(axis, tuple) else (axis,))))
    reduced = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if op in WHERE_REDUCTIONS and nd and b.coin(0.25) and x.key != "bool":
        mshape = broadcast_partner(b, x.shape)
        while len(mshape) > nd:
            mshape = mshape[1:]
        mask = b.array("bool", mshape) if not b.grad else (
            np.array([b.coin() for _ in range(int(np.prod(mshape)))], bool).reshape(mshape))
        params["where"] = mask
        src["where"] = array_src(mask)
    if op in ("max", "min") and ("where" in params or reduced == 0):
        init = b.choice((0, 1, -3)) if vt.kind(x.key) in "iu" else b.choice((0.5, -2.0))
        if vt.kind(x.key) == "u":
            init = abs(init)
        if vt.kind(x.key) == "b":
            return None
        params["initial"] = init
        src["initial"] = py_src(init)
    if op in ("argmax", "argmin") and (reduced == 0 or 0 in x.shape):
        return None
    if op in ("var", "std"):
        ddof = b.choice((0, 1))
        if ddof:
            params["ddof"] = ddof
            src["ddof"] = "1"
    if b.grad and op in ("var", "std"):
        return None
    return b.add_step(op, pkey, [x], params, src)


def _factor_shape(b: Builder, shape: tuple) -> tuple:
    size = int(np.prod(shape)) if shape else 1
    if size == 0:
        return b.choice(((0,), (0, 2), (2, 0, 1)))
    dims, rest = [], size
    for p in (2, 3, 2, 5, 7):
        while rest % p == 0 and b.coin(0.6):
            dims.append(p)
            rest //= p
    dims.append(rest)
    dims = [d for d in dims if d != 1 or b.coin(0.2)]
    order = b.permutation(dims) if dims else []
    out = tuple(order) if order else ()
    if int(np.prod(out)) != size:
        out = (size,)
    return out


def gen_shape(b: Builder) -> Value | None:
    names = [n for n, o in OPS.items() if o.family == "shape" and (not b.grad or o.smooth)]
    op = b.choice(names)
    x = b.pick_array()
    shape, nd = x.shape, len(x.shape)
    p: dict[str, Any] = {}
    s: dict[str, str] = {}
    args = [x]
    pkey = ""
    if op in ("reshape", "reshape_method", "lax.reshape"):
        new = _factor_shape(b, shape)
        if op != "lax.reshape" and new and 0 not in new and b.coin(0.3):
            i = b.integer(0, len(new) - 1)
            shown = tuple(-1 if j == i else d for j, d in enumerate(new))
        else:
            shown = new
        p["shape" if op != "lax.reshape" else "new_sizes"] = new
        s["shape" if op != "lax.reshape" else "new_sizes"] = repr(shown)
    elif op in ("transpose", "lax.transpose"):
        perm = tuple(b.permutation(range(nd)))
        if op == "transpose":
            if b.coin(0.3):
                perm = None
            p["axes"] = perm
            s["axes"] = None if perm is None else repr(perm)
        else:
            p["permutation"], s["permutation"] = perm, repr(perm)
    elif op in ("swapaxes", "moveaxis"):
        if nd == 0:
            return None
        a1, a2 = random_axis(b, nd, False), random_axis(b, nd, False)
        names_ = ("axis1", "axis2") if op == "swapaxes" else ("source", "destination")
        p[names_[0]], p[names_[1]] = a1, a2
        s[names_[0]], s[names_[1]] = repr(a1), repr(a2)
    elif op in ("expand_dims", "lax.expand_dims"):
        a = b.integer(-(nd + 1), nd)
        if op == "lax.expand_dims":
            a = a % (nd + 1)
            p["dimensions"], s["dimensions"] = (a,), repr((a,))
        else:
            p["axis"], s["axis"] = a, repr(a)
    elif op in ("squeeze", "lax.squeeze"):
        ones = [i for i, d in enumerate(shape) if d == 1]
        axes = tuple(i for i in ones if b.coin())
        if op == "squeeze":
            if b.coin(0.3):
                p["axis"], s["axis"] = None, None
            else:
                p["axis"], s["axis"] = axes, repr(axes)
        else:
            p["dimensions"], s["dimensions"] = axes, repr(axes)
    elif op == "broadcast_to":
        target = tuple(b.choice((2, 3)) if d == 1 and b.coin() else d for d in shape)
        if nd < 4 and b.coin():
            target = (b.choice((1, 2)),) + target
        p["shape"], s["shape"] = target, repr(target)
    elif op == "lax.broadcast_in_dim":
        target = tuple(b.choice((2, 3)) if d == 1 and b.coin() else d for d in shape)
        dims = tuple(range(nd))
        if nd < 4 and b.coin():
            target = (b.choice((1, 2)),) + target
            dims = tuple(d + 1 for d in dims)
        p["shape"], s["shape"] = target, repr(target)
        p["broadcast_dimensions"], s["broadcast_dimensions"] = dims, repr(dims)
    elif op in ("flip", "lax.rev"):
        if op == "flip":
            axis = random_axis(b, nd, allow_tuple=True)
            p["axis"], s["axis"] = axis, None if axis is None else repr(axis)
        else:
            dims = tuple(i for i in range(nd) if b.coin())
            p["dimensions"], s["dimensions"] = dims, repr(dims)
    elif op in ("ravel", "T"):
        pass
    elif op == "roll":
        shift = b.choice((1, -1, 2, 7, -5))
        axis = random_axis(b, nd)
        p["shift"], s["shift"] = shift, repr(shift)
        p["axis"], s["axis"] = axis, None if axis is None else repr(axis)
    elif op == "tile":
        reps = b.choice((2, 1, (2, 1), (1, 2, 1), 0))
        p["reps"], s["reps"] = reps, repr(reps)
    elif op == "repeat":
        reps = b.choice((2, 1, 0, 3))
        axis = random_axis(b, nd)
        p["repeats"], s["repeats"] = reps, repr(reps)
        p["axis"], s["axis"] = axis, None if axis is None else repr(axis)
    elif op == "lax.slice":
        starts, limits, strides = [], [], []
        for d in shape:
            lo = b.integer(0, d)
            hi = b.integer(lo, d)
            starts.append(lo)
            limits.append(hi)
            strides.append(b.choice((1, 1, 2, 3)))
        p["start_indices"], s["start_indices"] = tuple(starts), repr(tuple(starts))
        p["limit_indices"], s["limit_indices"] = tuple(limits), repr(tuple(limits))
        if any(st != 1 for st in strides):
            p["strides"], s["strides"] = tuple(strides), repr(tuple(strides))
    elif op == "lax.pad":
        config = []
        for d in shape:
            lo, hi, interior = b.integer(-1, 2), b.integer(-1, 2), b.integer(0, 2)
            size = d + max(d - 1, 0) * interior
            lo, hi = max(lo, -size), max(hi, -size)
            if size + lo + hi < 0:
                lo, hi = 0, 0
            config.append((lo, hi, interior))
        pv_key = b.choice(("py:int", "py:float", "py:bool", x.key) if not b.grad
                          else ("py:float", x.key))
        pv = b.literal(pv_key) if vt.is_py(pv_key) else b.operand_like(pv_key, ())
        args = [x, pv]
        p["padding_config"], s["padding_config"] = tuple(config), repr(tuple(config))
    elif op in ("concatenate", "stack", "lax.concatenate"):
        if nd == 0:
            return None
        axis = random_axis(b, nd if op != "stack" else nd + 1, allow_none=False)
        if op == "lax.concatenate":
            axis %= nd
        if op == "stack":
            other_shape = shape
        else:
            other_shape = list(shape)
            other_shape[axis % nd] = b.choice((1, 2, 0))
            other_shape = tuple(other_shape)
        keys = [k for k in b.keys(vt.STRONG + vt.WEAK) if b.usable(op, "", [x.key, k])]
        if not keys:
            return None
        y = b.operand_like(b.choice(keys), other_shape)
        args = [x, y] if b.coin() else [y, x]
        p["axis"], s["axis"] = axis, repr(axis)
    elif op in ("astype", "jnp.astype", "lax.convert_element_type"):
        d = b.choice(vt.STRONG)
        pkey = f"dtype={d}"
        name = "new_dtype" if op == "lax.convert_element_type" else "dtype"
        s[name] = dtype_src(d)
    else:
        raise AssertionError(op)
    if not b.usable(op, pkey, [a.key for a in args]):
        return None
    return b.add_step(op, pkey, args, p, s)


# -- indexing


def _index_int(b: Builder, n: int) -> int:
    """An index into a dimension of size `n`, sometimes negative or out of range (reads
    clamp). Grad programs stay in range: JAX's gradient at a clamped read depends on how it
    stages the indexing (a dynamic_slice's transpose clamps too, a gather's drops), which the
    finite-difference reference cannot know."""
    r = b.integer(0, 9 if not b.grad else 7)
    if r < 6:
        return b.integer(0, n - 1)
    if r < 8:
        return -b.integer(1, n)
    return b.choice((n, n + 3, -n - 1, -n - 4))  # out of range: JAX clamps reads


def _index_slice(b: Builder, n: int) -> slice:
    def bound():
        return None if b.coin(0.4) else b.integer(-n - 2, n + 2)

    step = b.choice((None, None, 1, 2, -1, -2, 3))
    return slice(bound(), bound(), step)


def slice_src(sl: slice) -> str:
    parts = ["" if sl.start is None else str(sl.start), "" if sl.stop is None else str(sl.stop)]
    out = ":".join(parts)
    if sl.step is not None:
        out += f":{sl.step}"
    return out


def gen_index(b: Builder, update: str | None = None) -> Value | None:
    """getitem (update None) or .at[...].set/.add (update 'set'/'add')."""
    x = b.pick_array(lambda v: len(v.shape) > 0) if update else b.pick_array()
    if x is None:
        return None
    shape = x.shape
    nd = len(shape)
    comps: list[tuple[str, Any]] = []  # (kind, payload)
    d = 0
    use_arrays = b.coin(0.3)
    use_mask = not use_arrays and not update and b.coin(0.2)
    arr_shape = b.choice(((2,), (1,), (3,), (2, 2)))
    ellipsis_used = False
    traced: list[Value] = []
    while d < nd:
        n = shape[d]
        r = b.integer(0, 9)
        if r == 0 and not update and not ellipsis_used and b.coin(0.5):
            comps.append(("ellipsis", Ellipsis))
            ellipsis_used = True
            d = nd  # the rest of the dims
            # (components after an Ellipsis apply to the last dims; kept simple: none)
            break
        if r == 1 and not update:
            comps.append(("none", None))
            continue
        if r <= 3 and n > 0:
            comps.append(("int", _index_int(b, n)))
        elif r == 4 and n > 0 and not b.grad:  # (a traced index may be out of range)
            iv = b.new_input(b.choice(("int32", "int32", "int8", "py:int")))
            comps.append(("traced", iv))
            traced.append(iv)
        elif r == 5 and use_arrays and n > 0:
            if update:
                k = int(np.prod(arr_shape))
                pool = list(range(n)) + [n, n + 2]
                if k > len(pool):
                    comps.append(("slice", _index_slice(b, n)))
                    d += 1
                    continue
                chosen = [int(v) for v in b.permutation(pool)[:k]]
                chosen = [c - n if c < n and b.coin(0.3) else c for c in chosen]
                arr = np.array(chosen, dtype=np.int32).reshape(arr_shape)
            else:
                arr = np.array([_index_int(b, n) for _ in range(int(np.prod(arr_shape)))],
                               dtype=np.int32).reshape(arr_shape)
            comps.append(("array", arr))
        elif r == 6 and use_mask:
            k = b.integer(1, nd - d)
            mshape = shape[d:d + k]
            mask = np.array([b.coin() for _ in range(int(np.prod(mshape)))], bool).reshape(mshape)
            comps.append(("mask", mask))
            use_mask = False
            d += k
            continue
        else:
            comps.append(("slice", _index_slice(b, n)))
        d += 1
        if b.coin(0.25):
            break  # fewer components than dims
    if not comps:
        comps.append(("slice", slice(None)) if nd else
                     b.choice((("none", None), ("ellipsis", Ellipsis))))
    kinds = {k for k, _ in comps}
    if "traced" in kinds:
        pkey = "traced"
    elif "array" in kinds:
        pkey = "array"
    elif "mask" in kinds:
        pkey = "mask"
    elif kinds & {"none", "ellipsis"}:
        pkey = "none"
    else:
        pkey = "basic"
    # Source and a function from the traced values to the concrete index.
    n_fixed = 1 if not update else 2
    parts, makers = [], []
    t = 0
    for k, pl in comps:
        if k == "int":
            parts.append(str(pl))
            makers.append(lambda tv, pl=pl: pl)
        elif k == "slice":
            parts.append(slice_src(pl))
            makers.append(lambda tv, pl=pl: pl)
        elif k == "none":
            parts.append("None")
            makers.append(lambda tv: None)
        elif k == "ellipsis":
            parts.append("...")
            makers.append(lambda tv: Ellipsis)
        elif k in ("array", "mask"):
            parts.append(array_src(pl))
            makers.append(lambda tv, pl=pl: pl)
        else:
            parts.append(f"{{{n_fixed + t}}}")
            makers.append(lambda tv, t=t: np.asarray(tv[t]).astype(np.int64).item())
            t += 1
    index_src = ", ".join(parts) if len(parts) != 1 or comps[0][0] != "slice" else parts[0]
    if len(parts) == 1 and comps[0][0] in ("int", "traced", "none", "ellipsis"):
        index_src = parts[0]

    def make_index(tv, makers=makers):
        return tuple(m(tv) for m in makers)

    if update:
        probe = make_index([iv.ref for iv in traced])
        vk = b.choice((x.key, "py:int", "py:float", "py:bool")) if not b.grad else x.key
        if vt.is_py(vk):
            val = b.literal(vk)
        else:
            try:
                sel_shape = np.shape(np.asarray(x.ref)[ops_mod._normalize_read(probe, shape)])
            except IndexError:
                return None
            val = b.operand_like(vk, broadcast_partner_suffix(b, sel_shape))
        args = [x, val, *traced]
        op = "at_set" if update == "set" else "at_add"
    else:
        args = [x, *traced]
        op = "getitem"
    if not b.usable(op, pkey, [a.key for a in args[:2 if update else 1]]):
        return None
    params = {"index": make_index}
    params_src = {"index": index_src}
    key = b.type_of(op, pkey, [a.key for a in args[:2 if update else 1]])
    return b.add_step(op, pkey, args, params, params_src, result_key=key)


def broadcast_partner_suffix(b: Builder, shape: tuple) -> tuple:
    """A shape that broadcasts *to* `shape` (never larger)."""
    k = b.integer(0, len(shape))
    tail = shape[len(shape) - k:]
    return tuple(1 if b.coin(0.3) else d for d in tail)


def gen_dynamic(b: Builder) -> Value | None:
    x = b.pick_array(lambda v: len(v.shape) > 0)
    if x is None:
        return None
    shape = x.shape
    update = b.coin(0.4)
    sizes = tuple(b.integer(0, d) for d in shape)
    starts_src, makers, traced = [], [], []
    for _ in shape:
        if b.coin(0.3) and not b.grad:  # (start indices must share one integer type)
            iv = b.new_input("int32")
            traced.append(iv)
            t = len(traced) - 1
            starts_src.append(f"{{{(2 if update else 1) + t}}}")
            makers.append(lambda tv, t=t: int(np.asarray(tv[t])))
        else:
            v = b.choice((0, 1, 2, -1, -3, 5, 9))
            starts_src.append(str(v))
            makers.append(lambda tv, v=v: v)
    src = "(" + "".join(s_ + ", " for s_ in starts_src) + ")"
    params = {"starts": lambda tv, makers=makers: [m(tv) for m in makers]}
    if update:
        keys = [k for k in b.keys(vt.STRONG + vt.WEAK)
                if b.usable("lax.dynamic_update_slice", "", [x.key, k])]
        if not keys:
            return None
        upd = b.operand_like(b.choice(keys), sizes)
        return b.add_step("lax.dynamic_update_slice", "", [x, upd, *traced], params,
                          {"starts": src},
                          result_key=b.type_of("lax.dynamic_update_slice", "",
                                               [x.key, upd.key]))
    params["slice_sizes"] = sizes
    return b.add_step("lax.dynamic_slice", "", [x, *traced], params,
                      {"starts": src, "slice_sizes": repr(sizes)},
                      result_key=b.type_of("lax.dynamic_slice", "", [x.key]))


EINSUM_SPECS = ("ij,jk->ik", "i,i->", "ij,ij->i", "bij,bjk->bik", "ij,kj->ik", "i,j->ij",
                "ijk,k->ij", "ij,j->i")


def gen_linalg(b: Builder) -> Value | None:
    op = b.choice(("dot", "matmul", "matmul_op", "einsum", "lax.dot"))
    m, k, n, batch = b.choice((1, 2, 3)), b.choice((1, 2, 3, 0)), b.choice((1, 2, 3)), \
        b.choice((1, 2))
    params, src = {}, {}
    if op == "einsum":
        spec = b.choice(EINSUM_SPECS)
        sizes = {"i": m, "j": k, "k": n, "b": batch}
        ins = spec.split("->")[0].split(",")
        shapes = [tuple(sizes[c] for c in term) for term in ins]
        params["subscripts"], src["subscripts"] = spec, repr(spec)
    elif op in ("dot", "lax.dot"):
        shapes = b.choice((((k,), (k,)), ((m, k), (k,)), ((m, k), (k, n)), ((k,), (k, n))))
    else:
        shapes = b.choice((((m, k), (k, n)), ((batch, m, k), (k, n)), ((k,), (k, n)),
                           ((m, k), (k,)), ((batch, m, k), (batch, k, n))))
    x = b.pick_array(lambda v: v.shape == shapes[0])
    if x is None or b.coin(0.3):
        x = b.new_input(b.array_key() if not b.grad else "float64", shapes[0])
        if vt.is_weak(x.key):
            return None
    keys = [kk for kk in b.keys(vt.STRONG) if b.usable(op, "", [x.key, kk])]
    if not keys:
        return None
    y = b.operand_like(b.choice(keys), shapes[1])
    return b.add_step(op, "", [x, y], params, src)


def gen_control(b: Builder) -> Value | None:
    op = b.choice(("fori_loop", "while_loop", "scan", "cond") if not b.grad
                  else ("fori_loop", "scan", "cond"))
    if op == "cond":
        x = b.pick_array()
        bodies = [n for n in COND_BODIES if b.usable("cond", f"body={n}", ["py:bool", x.key])
                  and (not b.grad or OPS[n].smooth)]
        if not bodies:
            return None
        t = b.choice(bodies)
        same = [n for n in bodies if b.type_of("cond", f"body={n}", ["py:bool", x.key]) ==
                b.type_of("cond", f"body={t}", ["py:bool", x.key])]
        f = b.choice(same)
        if b.coin(0.5) or b.grad:
            pred = b.literal("py:bool")
        else:
            pred = b.operand_like("bool", ())
        params = {"true_body": t, "false_body": f, "operand_key": x.key}
        src = {"true_src": OPS[t].render(["c"], {}), "false_src": OPS[f].render(["c"], {})}
        key = b.type_of("cond", f"body={t}", ["py:bool", x.key])
        return b.add_step("cond", f"body={t}", [pred, x], params, src, result_key=key)
    bodies = [n for n in LOOP_BODIES if not b.grad or OPS[n].smooth]
    body = b.choice(bodies)
    pkey = f"body={body}"
    if op == "scan":
        xs = b.pick_array(lambda v: len(v.shape) > 0)
        if xs is None:
            return None
        carry_shape = xs.shape[1:]
        keys = [k for k in b.keys(vt.TYPES) if b.usable(op, pkey, [k, xs.key])
                and (carry_shape == () or not vt.is_py(k))]
        if not keys:
            return None
        init = b.operand_like(b.choice(keys), carry_shape)
        if vt.is_weak(init.key) and not vt.is_py(init.key) and carry_shape != ():
            return None
        if not b.usable(op, pkey, [init.key, xs.key]):
            return None
        which = b.choice((0, 1))
        key = b.type_of(op, pkey, [init.key, xs.key])
        if which == 1 and vt.is_weak(init.key) and vt.dtype_of(init.key) == vt.dtype_of(key):
            # The stacked carries keep a weak initial carry's weak type when the body only
            # strengthens it (recorded from JAX 0.10.2: scan(c * x) from a weak float32 over
            # float32 xs gives a strong carry and weak ys).
            key = vt.make_key(vt.dtype_of(key), True)
        params = {"body": body, "operand_key": xs.key if not b.grad else "float64",
                  "which": which}
        src = {"body_src": OPS[body].render(["c", "x"], {}), "which": str(which)}
        return b.add_step(op, pkey, [init, xs], params, src, result_key=key)
    init = b.pick_array() if b.coin(0.6) else b.scalar_operand(
        b.choice(("py:int", "py:float")) if not b.grad else "py:float")
    if init is None:
        return None
    operands = [k for k in (*vt.TYPES, "i") if b.usable(op, pkey, [init.key, k])
                and not (k == "i" and op != "fori_loop")]
    if b.grad:
        operands = ["py:float", "float64"]
    if not operands:
        return None
    ok = b.choice(operands)
    carry_ref = "c" if op == "fori_loop" else "c[1]"
    if ok == "i":
        other_src, args = "i", [init]
    else:
        lit = (0.5, 2.0, -1.5) if b.grad and body == "true_divide" else None
        if b.grad and body == "true_divide":
            ok = "py:float"
        if vt.is_py(ok):
            other = b.literal(ok, lit)
        else:
            other = b.operand_like(ok, broadcast_partner_suffix(b, init.shape)
                                   if not vt.is_py(init.key) else ())
        other_src, args, ok = other.name, [init, other], other.key
    params = {"body": body, "operand_key": ok if not b.grad else "float64", "operand":
              "i" if ok == "i" else None}
    src = {"body_src": OPS[body].render([carry_ref, other_src], {})}
    if op == "fori_loop":
        lo, hi = b.choice(((0, 3), (1, 4), (0, 0), (2, 1), (0, 1)))
        params.update(lower=lo, upper=hi)
        src.update(lower=str(lo), upper=str(hi))
    else:
        trips = b.choice((0, 1, 3))
        params["trips"] = trips
        src["trips"] = str(trips)
    key = b.type_of(op, pkey, [init.key, ok])
    return b.add_step(op, pkey, args, params, src, result_key=key)


FAMILIES = (
    (gen_unary, 14), (gen_binary, 24), (gen_ternary, 5), (gen_reduction, 12),
    (gen_shape, 12), (gen_index, 12), (lambda b: gen_index(b, b.choice(("set", "add"))), 4),
    (gen_dynamic, 4), (gen_linalg, 6), (gen_control, 9),
)
GRAD_FAMILIES = (
    (gen_unary, 14), (gen_binary, 20), (gen_reduction, 10), (gen_shape, 10),
    (gen_index, 10), (lambda b: gen_index(b, b.choice(("set", "add"))), 4), (gen_dynamic, 4),
    (gen_linalg, 6), (gen_control, 8),
)


def draw_vmap(b: Builder) -> None:
    """Choose the batched inputs (strong arrays; at least one if any), their batch axis and
    the batch's values (element 0 is the program's own input)."""
    prog = b.program
    size = b.choice((2, 3))
    prog.vmap_size = size
    candidates = [k for k, i in enumerate(prog.inputs) if not vt.is_py(i.key)
                  and not vt.is_weak(i.key)]
    chosen = {k for k in candidates if b.coin(0.6)}
    if candidates and not chosen:
        chosen.add(b.choice(candidates))
    prog.vmap_axes = []
    for k, inp in enumerate(prog.inputs):
        if k not in chosen:
            prog.vmap_axes.append(None)
            continue
        shape = np.shape(inp.value)
        prog.vmap_axes.append(b.integer(0, len(shape)))
        dtype = vt.dtype_name(np.asarray(inp.value).dtype)
        prog.vmap_values[k] = [np.asarray(inp.value)] + [b.array(dtype, shape)
                                                         for _ in range(size - 1)]


def pick_family(b: Builder, families, total: int):
    """A step generator, drawn with the families' weights."""
    r = b.integer(0, total - 1)
    for gen, w in families:
        if r < w:
            return gen
        r -= w
    raise AssertionError("weights do not add up")


def build(rnd, grad: bool = False, max_steps: int = 4) -> Program:
    """A random program (`rnd`: a `random.Random`)."""
    b = Builder(rnd, grad=grad, max_steps=max_steps)
    families = GRAD_FAMILIES if grad else FAMILIES
    weights = [w for _, w in families]
    total = sum(weights)
    n_inputs = b.integer(1, 2)
    for _ in range(n_inputs):
        key = b.array_key()
        b.new_input(key, b.shape() if not vt.is_weak(key) else ())
    n_steps = b.integer(1, max_steps)
    attempts = 0
    while len(b.program.steps) < n_steps and attempts < 6 * max_steps:
        attempts += 1
        pick_family(b, families, total)(b)
    if not grad:
        draw_vmap(b)
    return b.program
