"""olympus.experimental.hijax: user-defined high-level types and primitives.

The programs are JAX 0.10.2's ``tests/hijax_test.py`` cases, with olympus names (the
helper types and primitives below are that module's, restyled; where JAX's test reaches
into ``jax._src`` for `GradAccum`/`NullAccum`/`zeros_like_aval` we use Olympus's
equivalents). The expected values are the ones those tests assert, which reference JAX
0.10.2 produces (checked by running them in its own process).
"""

from __future__ import annotations

import itertools as it
import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import typeof
from olympus.experimental.hijax import (
    AvalMutableQDD,
    AvalQDD,
    HiPrimitive,
    HiPspec,
    HiType,
    ShapedArray,
    VJPHiPrimitive,
    Zero,
    aval_method,
    aval_property,
    instantiate_zeros,
    is_undefined_primal,
    register_hitype,
)
from olympus_ir.prims.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from olympus_trace.ad import zeros_like_aval
from olympus_trace.hi_primitives import GradAccum, NullAccum
from olympus_trace.hitypes import MappingSpec

# --- a quantized array: two low-level arrays --------------------------------------------------


@dataclass(frozen=True)
class QArray:
    arr: Any  # int8[m, k]
    scale: Any  # f32[m]


@dataclass(frozen=True)
class QArrayTy(HiType):
    shape: tuple

    def lo_ty(self):
        m, k = self.shape
        return [ShapedArray((m, k), jnp.dtype("int8")),
                ShapedArray((m,), jnp.dtype("float32"))]

    def lower_val(self, hi_val):
        return [hi_val.arr, hi_val.scale]

    def raise_val(self, arr, scale):
        return QArray(arr, scale)

    def to_tangent_aval(self):
        return self  # not what a pytree would do

    def vspace_zero(self):
        m, k = self.shape
        return QArray(jnp.zeros((m, k), jnp.dtype("int8")), jnp.ones((m,), jnp.dtype("float32")))


register_hitype(QArray, lambda q: QArrayTy(q.arr.shape))


def to_qarray(x):
    return to_qarray_p.bind(x)


def from_qarray(x):
    return from_qarray_p.bind(x)


class ToQ(HiPrimitive):
    def abstract_eval(_, lo_aval):
        return QArrayTy(lo_aval.shape), set()

    def to_lojax(_, lo_val):
        scale = lo_val.max(1) / 32.
        return QArray((lo_val / scale[:, None]).astype("int8"), scale)

    def jvp(_, primals, tangents):
        (x,), (xdot,) = primals, tangents
        return to_qarray(x), to_qarray(xdot)

    def transpose(_, out_bar, __):
        return [from_qarray(out_bar)]


to_qarray_p = ToQ("to_q")


class FromQ(HiPrimitive):
    def abstract_eval(_, hi_aval):
        return ShapedArray(hi_aval.shape, jnp.dtype("float32")), set()

    def to_lojax(_, hi_val):
        return hi_val.arr.astype("float32") * hi_val.scale[:, None]

    def jvp(_, primals, tangents):
        (x,), (xdot,) = primals, tangents
        return from_qarray(x), from_qarray(xdot)

    def transpose(_, out_bar, __):
        return [to_qarray(out_bar)]


from_qarray_p = FromQ("from_q")


# --- a tuple type and new-style primitives on it ------------------------------------------------


@dataclass
class HiTup:
    elts: tuple


@dataclass(frozen=True)
class TupTy(HiType):
    tys: tuple

    def __hash__(self):
        return hash(self.tys)

    def __eq__(self, other):
        return isinstance(other, TupTy) and self.tys == other.tys

    def lo_ty(self):
        return list(self.tys)

    def lower_val(self, hi_val):
        return [lo for ty, elt in zip(self.tys, hi_val.elts) for lo in ty.lower_val(elt)]

    def raise_val(self, *elts_flat):
        elts = iter(elts_flat)
        return HiTup(tuple(ty.raise_val(*it.islice(elts, len(ty.lo_ty()))) for ty in self.tys))

    def to_tangent_aval(self):
        return TupTy(tuple(ty.to_tangent_aval() for ty in self.tys))

    def vspace_add(self, x_tup, y_tup):
        n = len(self.tys)
        xs = [get_tuple_element(x_tup, i) for i in range(n)]
        ys = [get_tuple_element(y_tup, i) for i in range(n)]
        return make_tup(*(x + y for x, y in zip(xs, ys)))


register_hitype(HiTup, lambda t: TupTy(tuple(map(typeof, t.elts))))


class MakeTup(VJPHiPrimitive):
    def __init__(self, in_avals):
        in_avals = tuple(in_avals)
        self.in_avals = in_avals
        self.out_aval = TupTy(in_avals)
        self.params = {}
        super().__init__()

    def expand(self, *elts):
        return HiTup(elts)

    def jvp(self, primals, tangents):
        return make_tup(*primals), make_tup(*map(instantiate_zeros, tangents))

    def transpose(self, ct, *maybe_accums):
        cts = [get_tuple_element(ct, i) for i in range(len(self.out_aval.tys))]
        for ct_, accum in zip(cts, maybe_accums):
            if isinstance(accum, GradAccum):
                accum.accum(ct_)


class GetTupElt(VJPHiPrimitive):
    def __init__(self, in_aval, idx):
        self.in_avals = (in_aval,)
        self.out_aval = in_aval.tys[idx]
        self.params = dict(idx=idx)
        super().__init__()

    def expand(self, tup):
        return tup.elts[self.idx]

    def jvp(self, primals, tangents):
        (tup,), (tup_dot,) = primals, tangents
        return get_tuple_element(tup, self.idx), get_tuple_element(tup_dot, self.idx)

    def transpose(self, g, tup_accum):
        tup_ty, = self.in_avals
        elts = [zeros_like_aval(ty) for ty in tup_ty.tys]
        elts[self.idx] = g
        tup_accum.accum(make_tup(*elts))


@dataclass(frozen=True)
class TupSpec(MappingSpec):
    val: tuple


def _tup_dec_rank(self, size, spec):
    return TupTy(tuple(ty.dec_rank(size, s) for ty, s in zip(self.tys, spec.val)))


def _tup_inc_rank(self, size, spec):
    return TupTy(tuple(ty.inc_rank(size, 0) for ty in self.tys))


TupTy.dec_rank = _tup_dec_rank
TupTy.inc_rank = _tup_inc_rank


def make_tup(*elts):
    return MakeTup(map(typeof, elts))(*elts)


def get_tuple_element(tup, idx):
    return GetTupElt(typeof(tup), idx)(tup)


# --- an immutable box of a pytree, with old-style primitives ----------------------------------


@dataclass(frozen=True)
class ImmutBox:
    _val: Any


def _is_zero(x):
    return isinstance(x, Zero)


def _get_aval(x):
    return x.aval if _is_zero(x) else typeof(x)


@dataclass(frozen=True)
class ImmutBoxTy(HiType):
    leaf_avals: tuple
    treedef: Any

    def lo_ty(self):
        return list(self.leaf_avals)

    def lower_val(self, hi_val):
        leaves, treedef = olympus.tree.flatten(hi_val._val, is_leaf=_is_zero)
        assert treedef == self.treedef
        return leaves

    def raise_val(self, *lo_vals):
        return ImmutBox(olympus.tree.unflatten(self.treedef, lo_vals))

    def to_tangent_aval(self):
        return ImmutBoxTy(tuple(a.to_tangent_aval() for a in self.leaf_avals), self.treedef)


def immutbox_to_aval(box):
    leaves, treedef = olympus.tree.flatten(box._val, is_leaf=_is_zero)
    return ImmutBoxTy(tuple(map(_get_aval, leaves)), treedef)


register_hitype(ImmutBox, immutbox_to_aval)


class ImmutBoxNew(HiPrimitive):
    def abstract_eval(self, *leaves, leaf_avals, treedef):
        return ImmutBoxTy(leaf_avals, treedef), set()

    def to_lojax(self, *leaves, leaf_avals, treedef):
        return ImmutBox(olympus.tree.unflatten(treedef, leaves))

    def jvp(self, primals, tangents, *, leaf_avals, treedef):
        return (immutbox_new_p.bind(*primals, leaf_avals=leaf_avals, treedef=treedef),
                immutbox_new_p.bind(*tangents, leaf_avals=leaf_avals, treedef=treedef))

    def transpose(self, out_bar, *leaves, leaf_avals, treedef):
        leaves, _ = olympus.tree.flatten(out_bar._val, is_leaf=_is_zero)
        return leaves


immutbox_new_p = ImmutBoxNew("immutbox_new")


def immutbox_new(val):
    leaves, treedef = olympus.tree.flatten(val, is_leaf=_is_zero)
    leaf_avals = tuple(map(_get_aval, leaves))
    leaves = [instantiate_zeros(leaf) for leaf in leaves]
    return immutbox_new_p.bind(*leaves, leaf_avals=leaf_avals, treedef=treedef)


class ImmutBoxGet(HiPrimitive):
    multiple_results = True

    def abstract_eval(self, box_aval):
        return list(box_aval.leaf_avals), set()

    def to_lojax(self, box):
        leaves, _ = olympus.tree.flatten(box._val, is_leaf=_is_zero)
        return tuple(leaves)

    def jvp(self, primals, tangents):
        (box,), (box_dot,) = primals, tangents
        return immutbox_get(box), immutbox_get(box_dot)

    def transpose(self, out_bars, box):
        box_aval = box.aval if is_undefined_primal(box) else typeof(box)
        return (immutbox_new(olympus.tree.unflatten(box_aval.treedef, out_bars)),)


immutbox_get_p = ImmutBoxGet("immutbox_get")


def immutbox_get(box):
    leaves = immutbox_get_p.bind(box)
    return olympus.tree.unflatten(typeof(box).treedef, leaves)


# --- a parameterless new-style primitive -----------------------------------------------------


class Square(VJPHiPrimitive):
    _jvp_execution_count = 0

    def __init__(self, in_aval):
        self.in_avals = (in_aval,)
        self.out_aval = in_aval
        self.params = {}
        super().__init__()

    @classmethod
    @contextmanager
    def assert_jvp_rule_called_once(cls):
        initial = cls._jvp_execution_count
        yield
        assert cls._jvp_execution_count == initial + 1

    def expand(self, x):
        return x ** 2

    def jvp(self, primals, tangents):
        type(self)._jvp_execution_count += 1
        (x,), (t,) = primals, tangents
        return self(x), t * 2.0 * x

    def vjp_fwd(self, nzs_in, x):
        return (self(x), x)

    def vjp_bwd_retval(self, res, t):
        return (t * 2.0 * res,)


def square(x):
    return Square(typeof(x))(x)


class RaiseToStaticPower(VJPHiPrimitive):
    def __init__(self, in_aval, *, power):
        self.in_avals = (in_aval,)
        self.out_aval = in_aval
        self.params = dict(power=power)
        super().__init__()

    def expand(self, x):
        return x ** self.power

    def vjp_fwd(self, nzs_in, x):
        return (self(x), x)

    def vjp_bwd(self, res, t, xbar_accum):
        xbar_accum.accum(t * self.power * raise_to_static_power(res, self.power - 1))

    def batch(self, _axis_data, args, in_dims):
        in_dim, = in_dims
        x, = args
        return raise_to_static_power(x, self.power), in_dim

    def jvp(self, primals, tangents):
        (x,), (t,) = primals, tangents
        return self(x), t * self.power * raise_to_static_power(x, self.power - 1)


def raise_to_static_power(x, power):
    return RaiseToStaticPower(typeof(x), power=power)(x)


class RaiseRetval(RaiseToStaticPower):
    """`test_newstyle_hiprimitive_retval`'s primitive: vjp_bwd_retval, no jvp."""

    vjp_bwd = VJPHiPrimitive.vjp_bwd
    jvp = VJPHiPrimitive.jvp

    def vjp_bwd_retval(self, res, t):
        return (t * self.power * RaiseRetval(typeof(res), power=self.power - 1)(res),)

    def batch(self, _axis_data, args, in_dims):
        in_dim, = in_dims
        x, = args
        return RaiseRetval(typeof(x), power=self.power)(x), in_dim


# --- HijaxTest ----------------------------------------------------------------------------------


def test_basic_register():
    @dataclass(frozen=True)
    class QArr:
        arr: Any
        scale: Any
        axis: int

    @dataclass(frozen=True)
    class QArrTy(HiType):
        shape: tuple
        axis: int
        ndim = property(lambda self: len(self.shape))

        def lo_ty(self):
            m, k = self.shape
            return [ShapedArray((m, k), jnp.dtype("int8")),
                    ShapedArray((m,), jnp.dtype("float32"))]

        def lower_val(self, hi_val):
            return [hi_val.arr, hi_val.scale]

        def raise_val(self, arr, scale):
            return QArr(arr, scale, self.axis)

    register_hitype(QArr, lambda q: QArrTy(q.arr.shape, q.axis))
    q = QArr(jnp.zeros((4, 4), "int8"), jnp.ones(4, "float32"), axis=1)
    out = olympus.jit(lambda x: x)(q)
    assert isinstance(out, QArr) and out.axis == 1
    np.testing.assert_array_equal(out.arr, np.zeros((4, 4), np.int8))
    assert typeof(q) == QArrTy((4, 4), 1)


def test_custom_types_and_primitive():
    @dataclass(frozen=True)
    class MyArray:
        arr: Any  # always f32

    @dataclass(frozen=True)
    class MyTy(HiType):
        def to_tangent_aval(self):
            return MyTy()

        def str_short(self, short_dtypes=False):
            return "MyTy"

        def lo_ty(self):
            return [ShapedArray((), jnp.dtype("float32"))]

        def lower_val(self, hi_val):
            return [hi_val.arr]

        def raise_val(self, val):
            return MyArray(val)

        def __eq__(self, other):
            return isinstance(other, MyTy)

        def __hash__(self):
            return hash(MyTy)

        def vspace_zero(self):
            return MyArray(jnp.zeros((), "float32"))

        def vspace_add(self, x, y):
            return add(x, y)

    register_hitype(MyArray, lambda _: MyTy())

    class ToMy(HiPrimitive):
        def abstract_eval(_, lo_aval):
            return MyTy(), set()

        def to_lojax(_, lo):
            return MyArray(lo)

        def jvp(_, primals, tangents):
            x, x_dot = *primals, *tangents
            return to(x), to(x_dot)

        def transpose(self, out_bar, _):
            return from_(out_bar),

    class FromMy(HiPrimitive):
        def abstract_eval(_, hi_aval):
            return hi_aval.lo_ty()[0], set()

        def to_lojax(_, hi):
            return hi.arr

        def jvp(_, primals, tangents):
            x, x_dot = *primals, *tangents
            return from_(x), from_(x_dot)

        def transpose(self, out_bar, _):
            return to(out_bar),

    def to(x):
        return to_p.bind(x)

    def from_(x):
        return from_p.bind(x)

    to_p = ToMy("to_my")
    from_p = FromMy("from_my")

    def mul(x, y):
        return mul_p.bind(x, y)

    def add(x, y):
        return add_p.bind(x, y)

    class MyMul(HiPrimitive):
        def abstract_eval(_, hi_x, hi_y):
            if hi_x != hi_y:
                raise Exception
            return hi_x, set()

        def to_lojax(_, hi_x, hi_y):
            return MyArray(hi_x.arr * hi_y.arr)

        def jvp(_, primals, tangents):
            (x, y), (x_dot, y_dot) = primals, tangents
            return mul(x, y), add(mul(x, y_dot), mul(x_dot, y))

        def transpose(self, out_bar, x, y):
            assert is_undefined_primal(x) ^ is_undefined_primal(y)
            if is_undefined_primal(x):
                return mul(out_bar, y), None
            return None, mul(x, out_bar)

    class MyAdd(HiPrimitive):
        def abstract_eval(_, hi_x, hi_y):
            if hi_x != hi_y:
                raise Exception
            return hi_x, set()

        def to_lojax(_, hi_x, hi_y):
            return MyArray(hi_x.arr + hi_y.arr)

        def transpose(self, out_bar, x, y):
            return out_bar, out_bar

    mul_p = MyMul("my_mul")
    add_p = MyAdd("my_add")

    @olympus.jit
    def f(x):
        return to(from_(x))

    a = MyArray(jnp.ones(()))
    b = f(a)
    assert isinstance(b, MyArray)
    np.testing.assert_allclose(b.arr, 1.0)

    b, b_dot = olympus.jvp(f, (a,), (a,))
    assert isinstance(b, MyArray) and isinstance(b_dot, MyArray)
    np.testing.assert_allclose(b_dot.arr, 1.0)

    @olympus.jit
    def g(x):
        return mul(x, x)

    b, g_vjp = olympus.vjp(g, a)
    a_grad, = g_vjp(b)
    assert isinstance(a_grad, MyArray)
    np.testing.assert_allclose(a_grad.arr, 2.0)
    # The jitted body is one equation of the user's primitive, on the low-level array.
    assert "my_mul" in str(olympus.make_olympuspr(g)(a))


def test_stages():
    @dataclass(frozen=True)
    class ArrayTuple:
        x0: Any
        x1: Any

    @dataclass(frozen=True)
    class ShapedArrayTuple(HiType):
        x0: Any
        x1: Any

        def lo_ty(self):
            return [self.x0, self.x1]

        def lower_val(self, hi_val):
            return [hi_val.x0, hi_val.x1]

        def raise_val(self, x0, x1):
            return ArrayTuple(x0, x1)

    register_hitype(ArrayTuple, lambda q: ShapedArrayTuple(typeof(q.x0), typeof(q.x1)))
    q = ArrayTuple(jnp.zeros((4, 4), "int8"), jnp.ones(4, "float32"))
    assert "tensor<4x4xi8>" in olympus.jit(lambda x: x).lower(q).as_text()
    out = olympus.jit(lambda x: x).lower(q).compile()(q)
    assert isinstance(out, ArrayTuple)
    np.testing.assert_array_equal(out.x1, np.ones(4, np.float32))


@pytest.mark.parametrize("jit", [False, True])
def test_while_loop(jit):
    q = to_qarray(jnp.ones((2, 2), "float32"))

    def f(q1, q2):
        def cond_fun(i_carry):
            return i_carry[0] < 1

        def body_fun(i_carry):
            i, q_carry, _ = i_carry
            return i + 1, to_qarray(from_qarray(q_carry)), q

        n, q_out, _ = olympus.lax.while_loop(cond_fun, body_fun, (0, q1, q2))
        return n, q_out

    if jit:
        f = olympus.jit(f)
    olympus.make_olympuspr(f)(q, q)
    n, q_out = f(q, q)
    assert n == 1
    np.testing.assert_allclose(from_qarray(q_out), from_qarray(to_qarray(from_qarray(q))))


def test_qarray_autodiff():
    """ToQ/FromQ's own rules (not their expansions' derivatives: `astype(int8)` has none)."""
    x = jnp.array([[1., 2.], [3., 4.]], "float32")

    def f(x):
        return from_qarray(to_qarray(x)).sum()

    expected = np.ones((2, 2), np.float32)  # reference JAX's value
    for g in (olympus.grad(f), olympus.jit(olympus.grad(f))):
        np.testing.assert_allclose(g(x), expected, rtol=1e-6)
    _, t = olympus.jvp(lambda x: from_qarray(to_qarray(x)), (x,), (jnp.ones((2, 2)),))
    np.testing.assert_allclose(t, expected, rtol=1e-6)


@pytest.mark.parametrize("jit", [False, True])
def test_tuple_basic(jit):
    def f():
        tup = make_tup(1, 2)
        return get_tuple_element(tup, 1)

    if jit:
        f = olympus.jit(f)
    assert f() == 2


def test_tuple_vmap():
    tup = make_tup(jnp.arange(3.), jnp.arange(3.))
    out = olympus.vmap(lambda x: x, in_axes=TupSpec((0, 0)), out_axes=TupSpec((0, 0)),
                       axis_size=3)(tup)
    assert isinstance(out, HiTup)
    np.testing.assert_array_equal(out.elts[0], np.arange(3.))
    np.testing.assert_array_equal(out.elts[1], np.arange(3.))


def test_tuple_nested_vmap():
    tup = make_tup(jnp.arange(12.).reshape((3, 4)), jnp.arange(12.).reshape((3, 4)))
    map1 = olympus.vmap(lambda x: x, in_axes=TupSpec((0, 0)), out_axes=TupSpec((0, 0)),
                        axis_size=3)
    map2 = olympus.vmap(map1, in_axes=TupSpec((1, 1)), out_axes=TupSpec((1, 1)),
                        axis_size=4)
    out = map2(tup)
    for a, b in zip(out.elts, tup.elts):
        np.testing.assert_array_equal(a, b)


def test_tuple_vmap_primitive():
    tup = make_tup(jnp.arange(3.), 5.)

    def f(tup):
        a, b = get_tuple_element(tup, 0), get_tuple_element(tup, 1)
        return make_tup(b, a)

    out = olympus.vmap(f, in_axes=TupSpec((0, None)), out_axes=TupSpec((None, 0)),
                       axis_size=3)(tup)
    assert float(out.elts[0]) == 5.
    np.testing.assert_array_equal(out.elts[1], np.arange(3.))


def test_tuple_vmap_spec_errors():
    with pytest.raises(TypeError, match="mapping spec"):
        olympus.vmap(lambda x: x, in_axes=(TupSpec((0, 0)),), axis_size=3)(jnp.arange(3.))


@pytest.mark.parametrize("jit", [False, True])
def test_tuple_scan(jit):
    tup = make_tup(jnp.arange(3.), jnp.arange(3. * 4).reshape(3, 4))

    def body(_, x):
        assert typeof(x) == TupTy((typeof(jnp.zeros(())), typeof(jnp.arange(4.))))
        a = get_tuple_element(x, 0)
        b = get_tuple_element(x, 1)
        return (), make_tup(a + 1, b * 2)

    def f():
        return olympus.lax.scan(body, (), tup, length=3)

    if jit:
        f = olympus.jit(f)
    (), tup2 = f()
    np.testing.assert_allclose(get_tuple_element(tup2, 0), np.arange(3.) + 1)
    np.testing.assert_allclose(get_tuple_element(tup2, 1), np.arange(12.).reshape(3, 4) * 2)


def test_tuple_autodiff():
    def f(x, y):
        tup = make_tup(x, y)
        return get_tuple_element(tup, 0) * 3 + get_tuple_element(tup, 1)

    p, t = olympus.jvp(f, (1.0, 2.0), (1.0, 0.0))
    assert (float(p), float(t)) == (5.0, 3.0)
    # Reverse mode needs `vjp_fwd`, which MakeTup lacks: JAX's error.
    for g in (olympus.grad(f, (0, 1)), olympus.jit(olympus.grad(f, (0, 1)))):
        with pytest.raises(NotImplementedError,
                           match="for grad support, subclass .*MakeTup.* must implement "
                                 "`vjp_fwd`"):
            g(1.0, 2.0)


@pytest.mark.parametrize("jit", [False, True])
def test_newstyle_hiprimitive(jit):
    def f(x):
        return raise_to_static_power(x, power=3)

    if jit:
        f = olympus.jit(f)
        assert f.lower(2.0).compile()(2.0) == 8.0
    assert f(2.0) == 8.0
    xs = jnp.arange(3.0)
    np.testing.assert_allclose(olympus.vmap(f)(xs), np.arange(3.0) ** 3)
    assert olympus.grad(f)(2.0) == 12.0
    p, t = olympus.jvp(f, (2.0,), (1.0,))
    assert (float(p), float(t)) == (8.0, 12.0)


@pytest.mark.parametrize("jit", [False, True])
def test_newstyle_hiprimitive_retval(jit):
    def f(x):
        return RaiseRetval(typeof(x), power=3)(x)

    if jit:
        f = olympus.jit(f)
    assert f(2.0) == 8.0
    np.testing.assert_allclose(olympus.vmap(f)(jnp.arange(3.0)), np.arange(3.0) ** 3)
    assert olympus.grad(f)(2.0) == 12.0


def test_newstyle_hiprimitive_defines_both_types_of_vjp_error():
    class Both(RaiseToStaticPower):
        def vjp_bwd_retval(self, res, t):
            return (t,)

    with pytest.raises(AttributeError, match="should not override both"):
        Both(typeof(2.0), power=3)


def test_newstyle_hiprimitive_vmap():
    class Mul(VJPHiPrimitive):
        def __init__(self, aval):
            self.in_avals = (aval, aval)
            self.out_aval = aval
            self.params = {}
            super().__init__()

        def expand(self, x, y):
            return x * y

        def batch_dim_rule(self, axis_data, in_dims):
            return in_dims[1] if in_dims[0] is None else in_dims[0]

    def mul(x, y):
        return Mul(typeof(x))(x, y)

    np.testing.assert_allclose(mul(2.0, 3.0), 6.0)
    x = jnp.arange(3.0)
    y = jnp.arange(3.0) + 1.0
    np.testing.assert_allclose(olympus.vmap(mul)(x, y), x * y)
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(olympus.vmap(mul, in_axes=(0, None))(x, y), x * y[None, :])
    np.testing.assert_allclose(olympus.vmap(mul, in_axes=(None, 0))(y, x), x * y[None, :])
    x = jnp.arange(24.0).reshape(2, 3, 4)
    f = olympus.vmap(mul, in_axes=(0, None))
    f = olympus.vmap(f, in_axes=(2, None), out_axes=2)
    np.testing.assert_allclose(f(x, y), x * y[None, :, None])
    x = jnp.arange(12.0).reshape(3, 4)
    y = jnp.arange(6.0).reshape(2, 3)
    f = olympus.vmap(mul, in_axes=(None, 0))
    f = olympus.vmap(f, in_axes=(1, None), out_axes=2)
    np.testing.assert_allclose(f(x, y), x[None, :, :] * y[:, :, None])


@pytest.mark.parametrize("retval", [False, True])
def test_symbolic_zeros(retval):
    seen = []

    class Mul(VJPHiPrimitive):
        def __init__(self, aval):
            self.in_avals = (aval, aval)
            self.out_aval = aval
            self.params = {}
            super().__init__()

        def expand(self, x, y):
            return x * y

        def vjp_fwd(self, nzs_in, x, y):
            seen.append(list(nzs_in))
            return self(x, y), (x, y)

        if retval:
            def vjp_bwd_retval(self, res, g):
                x, y = res
                return (g * y, x * g)
        else:
            def vjp_bwd(self, res, g, x_acc, y_acc):
                seen.append([not isinstance(x_acc, NullAccum),
                             not isinstance(y_acc, NullAccum)])
                x, y = res
                x_acc.accum(g * y)
                y_acc.accum(x * g)

    def mul(x, y):
        return Mul(typeof(x))(x, y)

    assert float(olympus.grad(mul)(2., 3.)) == 3.
    assert all(s == [True, False] for s in seen)
    seen.clear()
    assert float(olympus.grad(mul, 1)(2., 3.)) == 2.
    assert all(s == [False, True] for s in seen)


def test_hijax_cond_platform_dependent():
    x = jnp.arange(10)
    result = olympus.jit(partial(olympus.lax.platform_dependent, cpu=square,
                                 default=square))(x)
    np.testing.assert_array_equal(result, np.arange(10) ** 2)


def test_hijax_primitive_under_remat():
    x = jnp.arange(10)
    np.testing.assert_array_equal(olympus.remat(square)(x), np.arange(10) ** 2)
    np.testing.assert_array_equal(olympus.jit(olympus.remat(square))(x), np.arange(10) ** 2)
    with Square.assert_jvp_rule_called_once():
        g = olympus.jit(olympus.grad(olympus.remat(square)))(jnp.float32(2.0))
    assert float(g) == 4.0


@pytest.mark.parametrize("jit", [False, True])
def test_linearize_rule(jit):
    class Power(VJPHiPrimitive):
        def __init__(self, in_aval, *, power):
            self.in_avals = (in_aval,)
            self.out_aval = in_aval
            self.params = dict(power=power)
            super().__init__()

        def expand(self, x):
            return x ** self.power

        def lin(self, nzs_in, x):
            nz, = nzs_in
            assert nz
            return self(x), x

        def linearized(self, x, t):
            return t * self.power * Power(typeof(x), power=self.power - 1)(x)

    def f(x):
        return Power(typeof(x), power=3)(x)

    if jit:
        f = olympus.jit(f)
    assert f(2.0) == 8.0
    assert olympus.linearize(f, 2.0)[1](1.0) == 12.0


def test_grad_remat_hitype():
    @olympus.remat
    def f(x, y):
        tup = make_tup(x, y)
        return jnp.sum(get_tuple_element(tup, 0)
                       + jnp.concatenate((get_tuple_element(tup, 1),) * 2))

    x, y = jnp.ones(4), jnp.ones(2)
    assert float(f(x, y)) == 8.0
    gx, gy = olympus.jit(olympus.grad(f, (0, 1)))(x, y)
    np.testing.assert_array_equal(gx, np.ones(4))
    np.testing.assert_array_equal(gy, 2 * np.ones(2))


@pytest.mark.parametrize("jit", [False, True])
def test_ref_prim(jit):
    class SquareRef(VJPHiPrimitive):
        def __init__(self, ref_aval):
            self.in_avals = (ref_aval,)
            self.out_aval = None
            self.params = {}
            super().__init__()

        def expand(self, ref):
            ref[...] = ref[...] ** 2

    x_ref = olympus.new_ref(2.)

    def f(_, x_ref):
        SquareRef(typeof(x_ref))(x_ref)

    if jit:
        f = olympus.jit(f)
    f(0, x_ref)
    assert float(x_ref[...]) == 4.
    # JAX's test checks the program's effect is a write to the ref: Olympus's ref effect.
    traced = olympus.jit(f).trace(0, x_ref).olympuspr
    assert [str(e) for e in traced.effects] == ["Ref"]


def test_lower_arg_names():
    """JAX's test_lower_preserves_arg_names_for_shaped_arrays and
    test_lower_replicates_arg_names_for_hitypes: a high-level argument's arrays all carry
    its name (reference JAX 0.10.2's lowered text: ``loc("x")`` on both)."""
    text = olympus.jit(square).lower(jnp.array(1.0)).as_text(debug_info=True)
    assert 'tensor<f32> loc("x")' in text
    q = to_qarray(jnp.ones((2, 2), "float32"))
    text = olympus.jit(lambda x: from_qarray(x)).lower(q).as_text(debug_info=True)
    assert '%arg0: tensor<2x2xi8> loc("x"), %arg1: tensor<2xf32> loc("x")' in text


# --- HijaxTransformCoverageTest ---------------------------------------------------------------


def test_hitypes_as_grad_args():
    box = immutbox_new((jnp.array(2.0), jnp.array(3.0)))

    def loss_fn(tup):
        return immutbox_get(tup)[0] ** 2

    grads = olympus.grad(loss_fn)(box)
    np.testing.assert_allclose(immutbox_get(grads)[0], 4.0)


def test_hitypes_as_nondiff_grad_args():
    box = immutbox_new((jnp.array(2.0), jnp.array(3.0)))

    def loss_fn(x, box):
        return x ** 2 + immutbox_get(box)[1]

    np.testing.assert_allclose(olympus.grad(loss_fn)(jnp.array(3.0), box), 6.0)


def test_hitypes_as_captured_args():
    box = immutbox_new((jnp.array(2.0), jnp.array(3.0)))

    def loss_fn(x):
        return x ** 2 + immutbox_get(box)[1]

    np.testing.assert_allclose(olympus.grad(loss_fn)(jnp.array(4.0)), 8.0)


def test_hitypes_as_scan_carry():
    box = immutbox_new((jnp.array(1.0), jnp.array(2.0)))

    def body(box, _):
        x, y = immutbox_get(box)
        return immutbox_new((x + 1.0, y + 2.0)), None

    box, _ = olympus.lax.scan(body, box, None, length=5)
    x, y = immutbox_get(box)
    assert (float(x), float(y)) == (6.0, 12.0)


def test_hitypes_as_scan_captured():
    box = immutbox_new((jnp.array(3.0), jnp.array(4.0)))
    xs = jnp.arange(5, dtype=jnp.float32)

    def body(carry, x):
        a, b = immutbox_get(box)
        return a * carry + b, immutbox_new(a * x + b)

    carry, ys_box = olympus.lax.scan(body, jnp.array(1.0), xs)
    assert float(carry) == 727.0
    np.testing.assert_allclose(immutbox_get(ys_box), 3.0 * np.arange(5.) + 4.0)


def test_grad_custom_vjp_optimize_remat_with_hijax():
    @olympus.custom_vjp
    def f(x):
        return square(x)

    def f_fwd(x):
        return square(x), x

    def f_bwd(res, g):
        return (g * 2.0 * res,)

    f.defvjp(f_fwd, f_bwd, optimize_remat=True)
    assert float(olympus.jit(olympus.grad(f))(jnp.float32(3.0))) == 6.0


def _foo_custom_vjp(body):
    @olympus.custom_vjp
    def foo(x):
        return body(x)

    def foo_fwd(x):
        return foo(x), x

    def foo_bwd(res, g):
        return (g * 2.0 * res,)

    foo.defvjp(foo_fwd, foo_bwd)
    return foo


def _foo_custom_jvp(body):
    @olympus.custom_jvp
    def foo(x):
        return body(x)

    @foo.defjvp
    def foo_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return body(x), t * 2.0 * x

    return foo


@pytest.mark.parametrize("make,call_p", [(_foo_custom_vjp, custom_vjp_call_p),
                                         (_foo_custom_jvp, custom_jvp_call_p)])
def test_custom_derivatives_inlined_when_lower(make, call_p):
    """JAX's test_custom_{vjp,jvp}_inlined_when_lower and
    test_custom_{vjp,jvp}_with_hiprimitive_lowered: the low-level form (``Traced.lojax``)
    of a custom-derivative function of a high-level primitive has neither the call nor
    the primitive."""
    foo = make(square)
    traced = olympus.jit(foo).trace(jnp.float32(0.0))
    assert traced.olympuspr.is_high
    lo = traced.lojax.olympuspr
    assert not any(e.primitive is call_p for e in lo.eqns)
    assert not lo.is_high
    assert float(traced.lojax(3.0)) == 9.0
    # A program with no high-level primitive is its own low-level form: the call stays.
    plain = olympus.jit(make(lambda x: x * x)).trace(jnp.float32(0.0))
    assert not plain.olympuspr.is_high
    assert plain.lojax.olympuspr is plain.olympuspr
    assert any(e.primitive is call_p for e in plain.lojax.olympuspr.eqns)


def test_custom_vjp_with_hiprimitive_is_high():
    foo = _foo_custom_vjp(square)
    olympuspr = olympus.make_olympuspr(foo)(jnp.float32(2.0))
    assert olympuspr.olympuspr.is_high


def test_lojax_lowers_inside_control_flow():
    f = olympus.jit(lambda x: olympus.lax.cond(x > 0, square, lambda x: x, x))
    lo = f.trace(1.0).lojax.olympuspr
    assert not lo.is_high
    assert "integer_pow[y=2]" in str(lo)
    assert float(f.trace(1.0).lojax(3.0)) == 9.0


def test_shard_map_cases_on_4_devices():
    """`multidevice/check_hijax_4dev.py` (shard_map with HiPspec specs, shardings of tuple
    elements, a primitive under shard_map) in its own 4-device process."""
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="4")
    here = Path(__file__).resolve().parent
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         str(here / "multidevice" / "check_hijax_4dev.py")],
        capture_output=True, text=True, env=env, timeout=900, cwd=here)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and " failed" not in r.stdout and "skipped" not in r.stdout


# --- errors and names -------------------------------------------------------------------------


def test_missing_signature_error():
    class NoAvals(VJPHiPrimitive):
        def __init__(self):
            self.params = {}
            super().__init__()

    with pytest.raises(AttributeError, match="should set `self.in_avals`"):
        NoAvals()


def test_vjp_only_primitive_under_jvp_errors():
    class Fwd(RaiseRetval):
        pass

    f = lambda x: Fwd(typeof(x), power=2)(x)  # noqa: E731
    for g in (f, olympus.jit(f)):  # JAX's error: forward mode needs the `jvp` method
        with pytest.raises(NotImplementedError, match="must implement `jvp`"):
            olympus.jvp(g, (2.0,), (1.0,))


def test_base_class_methods_must_be_overridden():
    """JAX's bases assert: an AssertionError saying "must override"."""
    class Bare(HiType):
        pass

    class BarePrim(HiPrimitive):
        pass

    with pytest.raises(AssertionError, match="must override"):
        Bare().lo_ty()
    with pytest.raises(AssertionError, match="must override"):
        BarePrim("bare").bind(1.0)
    with pytest.raises(AssertionError, match="must override"):
        HiPspec().to_lo()


def test_aval_method_and_property():
    class Ty(HiType):
        first = aval_property(lambda self: self.tys[0])
        nth = aval_method(lambda self, i: self.tys[i])

        def __init__(self, tys):
            self.tys = tys

    t = Ty(("a", "b"))
    assert t.first == "a" and t.nth(1) == "b"
    assert isinstance(Ty.__dict__["first"], aval_property)
    q = AvalQDD(t, None)
    assert (q.aval, q.qdd) == (t, None) and q == AvalQDD(t, None)
    m = AvalMutableQDD(t, [1])
    assert m.mutable_qdd == [1]


def test_names():
    import olympus.experimental.hijax as h
    from olympus.core import AbstractValue

    assert sorted(h.__all__) == sorted(
        ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive", "HiPspec",
         "HiType", "MutableHiType", "ShapedArray", "TransformedRef", "VJPHiPrimitive", "Zero",
         "aval_method", "aval_property", "control_flow_allowed_effects", "instantiate_zeros",
         "is_undefined_primal", "register_hitype"])
    assert isinstance(TupTy(()), AbstractValue)
    assert h.ShapedArray is olympus.core.ShapedArray
    z = Zero(ShapedArray((2,), jnp.dtype("float32")))
    np.testing.assert_array_equal(instantiate_zeros(z), np.zeros(2, np.float32))
    assert isinstance(instantiate_zeros(Zero(QArrayTy((2, 2)))), QArray)


def test_names_renamed_from_jax():
    """JAX code renamed jax -> olympus throughout imports `olympus.experimental.hiolympus`,
    defines `to_loolympus` and reads `Traced.loolympus`: the same machinery runs it."""
    import numpy as np

    from olympus.experimental import hiolympus

    assert hiolympus.HiPrimitive is HiPrimitive and hiolympus.HiType is HiType

    class Twice(hiolympus.HiPrimitive):
        def abstract_eval(_, aval):
            return aval, set()

        def to_loolympus(_, x):
            return x * 2

        def jvp(_, primals, tangents):
            return twice_p.bind(*primals), twice_p.bind(*tangents)

        def transpose(_, out_bar, __):
            return [twice_p.bind(out_bar)]

    twice_p = Twice("twice")
    x = jnp.arange(3.0)
    np.testing.assert_allclose(twice_p.bind(x), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(olympus.jit(twice_p.bind)(x), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(olympus.grad(lambda v: twice_p.bind(v).sum())(x), [2.0] * 3)
    traced = olympus.jit(twice_p.bind).trace(x)
    assert "twice" in str(traced.olympuspr)
    assert "twice" not in str(traced.loolympus.olympuspr)
    assert "mul" in str(traced.loolympus.olympuspr)
