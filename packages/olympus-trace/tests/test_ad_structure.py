"""The olympusprs autodiff produces, printed exactly: JVPs, gradients (direct linearization:
the primal computation staged as it runs, then the transposed tangents), symbolic zeros, and
the structure kept for calls and conds.

Only staging is used (no jaxlib, no eager execution): the functions run under
`make_olympuspr`, which drives `ad.jvp_flat` / `ad.vjp_flat` / `ad.linearize_flat`.
"""

from __future__ import annotations

import numpy as np

import olympus_trace.ad_rules  # noqa: F401  (fills the rule tables)
from olympus_ir import dtypes
from olympus_ir import primitives as P
from olympus_ir.avals import ShapeDtypeStruct
from olympus_trace import ad, make_olympuspr
from olympus_trace import lax_ops as lax
from olympus_trace.core import bind, get_aval

f32 = np.float32


def S(*shape):
    return ShapeDtypeStruct(shape, np.dtype(np.float32))


def jvp_of(f, n=1):
    """(x1..xn, t1..tn) -> [primal outputs..., tangent outputs...]"""

    def g(*args):
        out_p, out_t = ad.jvp_flat(lambda *a: [f(*a)], list(args[:n]), list(args[n:]))
        return out_p + out_t

    return g


def grad_of(f, argnums=(0,), value=False):
    """The gradient of scalar `f` w.r.t. `argnums` (with the value first if `value`)."""

    def g(*xs):
        def partial(*d):
            full = list(xs)
            for i, a in zip(argnums, d):
                full[i] = a
            return [f(*full)]

        outs, vjp = ad.vjp_flat(partial, [xs[i] for i in argnums],
                                primal_outputs_needed=value)
        cts = [ad.instantiate(c) for c in vjp([np.ones((), f32)])]
        return (outs + cts) if value else cts

    return g


def check(closed, expected):
    assert str(closed) == expected, "\n" + str(closed)


def test_jvp():
    check(make_olympuspr(jvp_of(lambda x: lax.mul(lax.sin(x), x)))(f32(1), f32(1)), """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[] = cos a
    e:f32[] = mul b d
    f:f32[] = mul c a
    g:f32[] = mul e a
    h:f32[] = mul c b
    i:f32[] = add_any g h
  in (f, i) }""")


def test_grad_stages_the_primal_then_the_transposed_tangents():
    check(make_olympuspr(grad_of(lambda x: lax.mul(lax.sin(x), x)))(f32(1)), """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
    _:f32[] = mul b a
    d:f32[] = mul b 1.0:f32[]
    e:f32[] = mul 1.0:f32[] a
    f:f32[] = mul e c
    g:f32[] = add_any d f
  in (g,) }""")


def test_value_and_grad_keeps_the_primal_output():
    check(make_olympuspr(grad_of(lambda x: lax.mul(lax.sin(x), x), value=True))(f32(1)), """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
    d:f32[] = mul b a
    e:f32[] = mul b 1.0:f32[]
    f:f32[] = mul 1.0:f32[] a
    g:f32[] = mul f c
    h:f32[] = add_any e g
  in (d, h) }""")


def test_unused_input_gets_a_symbolic_zero():
    f = lambda x, y: lax.reduce_sum(lax.exp(x), (0,))  # noqa: E731
    check(make_olympuspr(grad_of(f, argnums=(0, 1)))(S(3), S(3)), """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = exp a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = mul d c
    f:f32[3] = broadcast_in_dim 0.0:f32[]
  in (e, f) }""")

    def probe(x, y):
        _, vjp = ad.vjp_flat(lambda a, b: [lax.reduce_sum(lax.exp(a), (0,))], [x, y])
        cts = vjp([np.ones((), f32)])
        assert isinstance(cts[1], ad.Zero) and cts[1].aval.shape == (3,)
        return cts[:1]

    make_olympuspr(probe)(S(3), S(3))


def test_symbolic_zero_tangent_input_costs_nothing():
    def f(x, y, t):
        zero = ad.Zero(ad.tangent_aval(get_aval(y)))
        out_p, out_t = ad.jvp_flat(lambda a, b: [lax.mul(lax.sin(a), b)], [x, y], [t, zero])
        return out_p + out_t

    check(make_olympuspr(f)(f32(1), f32(2), f32(1)), """\
{ lambda ; a:f32[] b:f32[] c:f32[]. let
    d:f32[] = sin a
    e:f32[] = cos a
    f:f32[] = mul c e
    g:f32[] = mul d b
    h:f32[] = mul f b
  in (g, h) }""")


def test_output_independent_of_input_has_zero_tangent():
    def f(x, t):
        out_p, out_t = ad.jvp_flat(lambda a: [lax.mul(a, f32(2)), f32(3)], [x], [t],
                                   instantiate_zeros=False)
        assert not isinstance(out_t[0], ad.Zero)
        assert isinstance(out_t[1], ad.Zero)
        return out_t[:1]

    check(make_olympuspr(f)(f32(1), f32(1)), """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = mul a 2.0:f32[]
    c:f32[] = mul b 2.0:f32[]
  in (c,) }""")


def test_integer_outputs_get_float0_tangents():
    def f(x, t):
        out_p, out_t = ad.jvp_flat(
            lambda a: [lax.argmax(a, 0, np.int32), lax.mul(lax.floor(a), a)], [x], [t])
        assert out_t[0].dtype == dtypes.float0 and out_t[0].shape == ()
        return [out_p[0], out_p[1], out_t[1]]

    check(make_olympuspr(f)(S(3), S(3)), """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:i32[] = argmax[axes=(0,) index_dtype=int32] a
    d:f32[3] = floor a
    e:f32[3] = mul d a
    f:f32[3] = mul d b
  in (c, e, f) }""")


def test_grad_of_matmul_is_a_transposed_dot_general():
    f = lambda a, b: lax.reduce_sum(lax.dot(a, b), (0, 1))  # noqa: E731
    check(make_olympuspr(grad_of(f))(S(2, 3), S(3, 4)), """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[2,4] = broadcast_in_dim 1.0:f32[]
    e:f32[2,3] = dot_general[dimension_numbers=(([1], [1]), ([], []))] d b
  in (e,) }""")


def test_grad_of_broadcast_sums_over_broadcast_dims():
    f = lambda x: lax.reduce_sum(lax.mul(lax.broadcast_in_dim(x, (2, 3), (1,)), f32(2)),  # noqa
                                 (0, 1))
    check(make_olympuspr(grad_of(f))(S(3)), """\
{ lambda ; a:f32[3]. let
    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    c:f32[2,3] = mul b 2.0:f32[]
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[2,3] = broadcast_in_dim 1.0:f32[]
    e:f32[2,3] = mul d 2.0:f32[]
    f:f32[3] = reduce_sum[axes=(0,) out_sharding=None] e
  in (f,) }""")


def test_grad_of_max_splits_ties():
    check(make_olympuspr(grad_of(lambda x, y: lax.max(x, y), argnums=(0, 1)))(f32(1), f32(2)),
          """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = max a b
    c:bool[] = gt a b
    d:bool[] = eq a b
    e:f32[] = select_n c 0.0:f32[] 1.0:f32[]
    f:f32[] = select_n d e 0.5:f32[]
    g:f32[] = sub 1.0:f32[] f
    h:f32[] = mul 1.0:f32[] g
    i:f32[] = mul 1.0:f32[] f
  in (i, h) }""")


def test_linearize_keeps_only_linear_equations():
    printed = []

    def f(x):
        outs, lin = ad.linearize_flat(lambda a: [lax.mul(lax.sin(a), lax.cos(a))], [x])
        printed.append(str(lin.olympuspr))
        return outs

    make_olympuspr(f)(f32(1))
    assert printed[0] == """\
{ lambda ; a:f32[] b:f32[] c:f32[] d:f32[] e:f32[]. let
    f:f32[] = mul e a
    g:f32[] = mul e b
    h:f32[] = neg g
    i:f32[] = mul f c
    j:f32[] = mul d h
    k:f32[] = add_any i j
  in (k,) }"""


_CALL = None


def _call():
    global _CALL
    if _CALL is None:
        _CALL = make_olympuspr(lambda a: [lax.sin(lax.mul(a, a))])(f32(1))
    return _CALL


def test_jvp_of_closed_call_is_a_closed_call():
    f = lambda x: bind(P.closed_call_p, x, call_olympuspr=_call())[0]  # noqa: E731
    check(make_olympuspr(jvp_of(f))(f32(1), f32(1)), """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] = closed_call[
      call_olympuspr={ lambda ; e:f32[] f:f32[]. let
          g:f32[] = mul e e
          h:f32[] = mul f e
          i:f32[] = mul e f
          j:f32[] = add_any h i
          k:f32[] = sin g
          l:f32[] = cos g
          m:f32[] = mul j l
        in (k, m) }
    ] a b
  in (c, d) }""")


def test_grad_of_closed_call_splits_and_transposes_the_call():
    f = lambda x: bind(P.closed_call_p, x, call_olympuspr=_call())[0]  # noqa: E731
    check(make_olympuspr(grad_of(f))(f32(1)), """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] = closed_call[
      call_olympuspr={ lambda ; c:f32[]. let
          d:f32[] = mul c c
          e:f32[] = sin d
          f:f32[] = cos d
        in (e, f) }
    ] a
    g:f32[] = closed_call[
      call_olympuspr={ lambda ; h:f32[] i:f32[] j:f32[]. let
          k:f32[] = mul j i
          l:f32[] = mul h k
          m:f32[] = mul k h
          n:f32[] = add_any l m
        in (n,) }
    ] a b 1.0:f32[]
  in (g,) }""")


def _branches():
    br0 = make_olympuspr(lambda a: [lax.sin(a)])(f32(1))
    br1 = make_olympuspr(lambda a: [lax.mul(a, f32(3))])(f32(1))
    return (br0, br1)


def test_jvp_of_cond_is_a_cond_of_jvps():
    brs = _branches()

    def f(i, x, t):
        out_p, out_t = ad.jvp_flat(lambda a: bind(P.cond_p, i, a, branches=brs), [x], [t])
        return out_p + out_t

    check(make_olympuspr(f)(np.int32(0), f32(1), f32(1)), """\
{ lambda ; a:i32[] b:f32[] c:f32[]. let
    d:f32[] e:f32[] = cond[
      branches=(
        { lambda ; f:f32[] g:f32[]. let
            h:f32[] = sin f
            i:f32[] = cos f
            j:f32[] = mul g i
          in (h, j) }
        { lambda ; k:f32[] l:f32[]. let
            m:f32[] = mul k 3.0:f32[]
            n:f32[] = mul l 3.0:f32[]
          in (m, n) }
      )
    ] a b c
  in (d, e) }""")


def test_grad_of_cond_is_a_residual_cond_and_a_transposed_cond():
    brs = _branches()

    def f(i, x):
        return grad_of(lambda a: bind(P.cond_p, i, a, branches=brs)[0])(x)

    check(make_olympuspr(f)(np.int32(0), f32(1)), """\
{ lambda ; a:i32[] b:f32[]. let
    _:f32[] c:f32[] = cond[
      branches=(
        { lambda ; d:f32[]. let e:f32[] = sin d; f:f32[] = cos d in (e, f) }
        { lambda ; g:f32[]. let
            h:f32[] = mul g 3.0:f32[]
            i:f32[] = broadcast_in_dim 0.0:f32[]
          in (h, i) }
      )
    ] a b
    j:f32[] = cond[
      branches=(
        { lambda ; k:f32[] l:f32[]. let m:f32[] = mul l k in (m,) }
        { lambda ; n:f32[] o:f32[]. let p:f32[] = mul o 3.0:f32[] in (p,) }
      )
    ] a c 1.0:f32[]
  in (j,) }""")
