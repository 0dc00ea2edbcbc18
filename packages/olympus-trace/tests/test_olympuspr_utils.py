"""eval_olympuspr / inline_closed, dce_olympuspr / dce_closed and partial_eval_olympuspr,
checked equation by equation (as printed olympusprs)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from olympus_ir import primitives as P
from olympus_trace import lax_ops as lax
from olympus_trace import make_olympuspr, olympuspr_utils
from olympus_trace.olympuspr_utils import (
    dce_closed,
    dce_olympuspr,
    eval_olympuspr,
    inline_closed,
    partial_eval_olympuspr,
)


def J(s: str) -> str:
    return textwrap.dedent(s).strip("\n")


def f32(*shape):
    return np.ones(shape, np.float32)


def g(x, y):
    a = lax.sin(x)
    b = lax.cos(y)
    c = lax.mul(a, 2.0)
    return lax.add(c, b), a


@pytest.fixture
def g_closed():
    return make_olympuspr(g)(1.0, 2.0)


def test_fixture_olympuspr(g_closed):
    assert str(g_closed) == J("""
        { lambda ; a:f32[] b:f32[]. let
            c:f32[] = sin a
            d:f32[] = cos b
            e:f32[] = mul c 2.0:f32[]
            f:f32[] = add e d
          in (f, c) }""")


# --- dce --------------------------------------------------------------------------------------


def test_dce_removes_unused_equations_and_reports_used_inputs(g_closed):
    new, used = dce_olympuspr(g_closed.olympuspr, [False, True])
    assert str(new) == J("""
        { lambda ; a:f32[] b:f32[]. let
            c:f32[] = sin a
          in (c,) }""")
    assert used == [True, False]


def test_dce_prune_invars(g_closed):
    new, used = dce_olympuspr(g_closed.olympuspr, [False, True], prune_invars=True)
    assert str(new) == J("""
        { lambda ; a:f32[]. let
            b:f32[] = sin a
          in (b,) }""")
    assert used == [True, False]


def test_dce_keeps_everything_that_is_used(g_closed):
    new, used = dce_olympuspr(g_closed.olympuspr)
    assert str(new) == str(g_closed)
    assert used == [True, True]


def test_dce_of_dead_intermediate_values():
    def fun(x, y):
        _ = lax.mul(lax.exp(x), 3.0)  # dead
        _ = lax.log(y)  # dead
        return lax.add(x, 1.0)

    closed = make_olympuspr(fun)(1.0, 2.0)
    assert len(closed.eqns) == 4
    new, used = dce_olympuspr(closed.olympuspr)
    assert str(new) == J("""
        { lambda ; a:f32[] b:f32[]. let
            c:f32[] = add a 1.0:f32[]
          in (c,) }""")
    assert used == [True, False]


def test_dce_with_no_outputs_used(g_closed):
    new, used = dce_olympuspr(g_closed.olympuspr, [False, False])
    assert str(new) == "{ lambda ; a:f32[] b:f32[]. let  in () }"
    assert used == [False, False]


def test_dce_keeps_effectful_equations(g_closed, monkeypatch):
    monkeypatch.setattr(olympuspr_utils, "effectful_primitives",
                        {P.cos_p})
    new, used = dce_olympuspr(g_closed.olympuspr, [False, True])
    assert str(new) == J("""
        { lambda ; a:f32[] b:f32[]. let
            c:f32[] = sin a
            d:f32[] = cos b
          in (c,) }""")
    assert used == [True, True]


C = np.array([1.0, 2.0], np.float32)
D = np.array([3.0, 4.0], np.float32)


def test_dce_closed_drops_unused_consts():
    closed = make_olympuspr(lambda x: (lax.mul(x, C), lax.add(x, D)))(f32(2))
    assert str(closed) == J("""
        { lambda a:f32[2] b:f32[2]; c:f32[2]. let
            d:f32[2] = mul c a
            e:f32[2] = add c b
          in (d, e) }""")
    j, _ = dce_olympuspr(closed.olympuspr, [False, True])
    assert str(j) == J("""
        { lambda a:f32[2]; b:f32[2]. let
            c:f32[2] = add b a
          in (c,) }""")
    dced = dce_closed(make_olympuspr(
        lambda x: (lax.add(lax.mul(x, C), lax.mul(0.0, lax.exp(x))), lax.add(x, D))[1])(f32(2)))
    assert str(dced) == J("""
        { lambda a:f32[2]; b:f32[2]. let
            c:f32[2] = add b a
          in (c,) }""")
    assert len(dced.consts) == 1
    np.testing.assert_array_equal(dced.consts[0], D)


# --- partial evaluation -----------------------------------------------------------------------


def test_partial_eval_splits_known_and_unknown_with_residuals(g_closed):
    known, unknown, out_unknowns, num_res = partial_eval_olympuspr(
        g_closed.olympuspr, [False, True])
    # Known: sin and the multiply by a literal; the product is the residual.
    assert str(known) == J("""
        { lambda ; a:f32[]. let
            b:f32[] = sin a
            c:f32[] = mul b 2.0:f32[]
          in (b, c) }""")
    assert str(unknown) == J("""
        { lambda ; a:f32[] b:f32[]. let
            c:f32[] = cos b
            d:f32[] = add a c
          in (d,) }""")
    assert out_unknowns == [True, False]
    assert num_res == 1


def test_partial_eval_first_input_unknown(g_closed):
    known, unknown, out_unknowns, num_res = partial_eval_olympuspr(
        g_closed.olympuspr, [True, False])
    assert str(known) == J("""
        { lambda ; a:f32[]. let
            b:f32[] = cos a
          in (b,) }""")
    assert str(unknown) == J("""
        { lambda ; a:f32[] b:f32[]. let
            c:f32[] = sin b
            d:f32[] = mul c 2.0:f32[]
            e:f32[] = add d a
          in (e, c) }""")
    assert out_unknowns == [True, True]
    assert num_res == 1


def test_partial_eval_all_known_and_all_unknown(g_closed):
    j = g_closed.olympuspr
    known, unknown, out_unknowns, num_res = partial_eval_olympuspr(j, [False, False])
    assert str(known) == str(j)
    assert str(unknown) == "{ lambda ; . let  in () }"
    assert (out_unknowns, num_res) == ([False, False], 0)
    known, unknown, out_unknowns, num_res = partial_eval_olympuspr(j, [True, True])
    assert str(known) == "{ lambda ; . let  in () }"
    assert str(unknown) == str(j)
    assert (out_unknowns, num_res) == ([True, True], 0)


def test_partial_eval_known_input_used_directly_is_a_residual():
    closed = make_olympuspr(lambda x, y: (lax.mul(x, y), lax.exp(x)))(1.0, 2.0)
    known, unknown, out_unknowns, num_res = partial_eval_olympuspr(
        closed.olympuspr, [False, True])
    assert str(known) == J("""
        { lambda ; a:f32[]. let
            b:f32[] = exp a
          in (b, a) }""")
    assert str(unknown) == J("""
        { lambda ; a:f32[] b:f32[]. let
            c:f32[] = mul a b
          in (c,) }""")
    assert (out_unknowns, num_res) == ([True, False], 1)


def test_partial_eval_constvars_are_known_and_become_residuals():
    closed = make_olympuspr(lambda x, y: lax.add(lax.mul(x, C), y))(f32(2), f32(2))
    known, unknown, out_unknowns, num_res = partial_eval_olympuspr(
        closed.olympuspr, [True, False])
    # The known olympuspr keeps every constvar so it closes over the original consts;
    # the residuals are the constant and y, in order of first use by unknown equations.
    assert str(known) == "{ lambda a:f32[2]; b:f32[2]. let  in (a, b) }"
    assert str(unknown) == J("""
        { lambda ; a:f32[2] b:f32[2] c:f32[2]. let
            d:f32[2] = mul c a
            e:f32[2] = add d b
          in (e,) }""")
    assert (out_unknowns, num_res) == ([True], 2)


def test_partial_eval_requires_one_flag_per_input(g_closed):
    with pytest.raises(ValueError, match="one unknowns flag per input"):
        partial_eval_olympuspr(g_closed.olympuspr, [True])


def test_partial_eval_round_trip_numerically(numpy_eval):
    def fun(x, y, z):
        a = lax.mul(lax.sin(x), C)
        b = lax.add(lax.mul(a, y), lax.exp(z))
        return lax.sub(b, a), lax.cos(z)

    x, y, z = np.float32(0.3), np.float32(1.5) * C, np.float32(0.7)
    closed = make_olympuspr(fun)(x, y, z)
    full = eval_olympuspr(closed.olympuspr, closed.consts, x, y, z)
    known, unknown, out_unknowns, num_res = partial_eval_olympuspr(
        closed.olympuspr, [False, True, False])
    assert out_unknowns == [True, False]
    known_outs = eval_olympuspr(known, closed.consts, x, z)
    n_known = len(known_outs) - num_res
    residuals = known_outs[n_known:]
    unknown_outs = eval_olympuspr(unknown, [], *residuals, y)
    np.testing.assert_allclose(unknown_outs[0], full[0], rtol=1e-6)
    np.testing.assert_allclose(known_outs[0], full[1], rtol=1e-6)


# --- eval_olympuspr / inline ------------------------------------------------------------------


def test_eval_olympuspr_under_staging_inlines_equations(g_closed):
    def h(x, y):
        out, s = eval_olympuspr(g_closed.olympuspr, [], x, y)
        return lax.add(lax.exp(out), s)

    assert str(make_olympuspr(h)(1.0, 2.0)) == J("""
        { lambda ; a:f32[] b:f32[]. let
            c:f32[] = sin a
            d:f32[] = cos b
            e:f32[] = mul c 2.0:f32[]
            f:f32[] = add e d
            g:f32[] = exp f
            h:f32[] = add g c
          in (h,) }""")


def test_inline_closed_with_consts_and_literal_args():
    inner = make_olympuspr(lambda x: lax.mul(x, C))(f32(2))
    outer = make_olympuspr(lambda y: inline_closed(inner, lax.add(y, 1.0))[0])(f32(2))
    assert str(outer) == J("""
        { lambda a:f32[2]; b:f32[2]. let
            c:f32[2] = add b 1.0:f32[]
            d:f32[2] = mul c a
          in (d,) }""")
    np.testing.assert_array_equal(outer.consts[0], C)


def test_eval_olympuspr_passes_through_outputs_that_are_inputs():
    closed = make_olympuspr(lambda x, y: (y, x))(1.0, 2.0)
    assert eval_olympuspr(closed.olympuspr, [], "x", "y") == ["y", "x"]


def test_eval_olympuspr_argument_count_is_checked(g_closed):
    with pytest.raises(TypeError, match="olympuspr takes 2 arguments, got 1"):
        eval_olympuspr(g_closed.olympuspr, [], 1.0)


def test_eval_olympuspr_eagerly(g_closed, numpy_eval):
    out, s = eval_olympuspr(g_closed.olympuspr, [], np.float32(1.0), np.float32(2.0))
    np.testing.assert_allclose(s, np.sin(np.float32(1.0)))
    np.testing.assert_allclose(out, 2 * np.sin(np.float32(1.0)) + np.cos(np.float32(2.0)),
                               rtol=1e-6)


def test_eval_olympuspr_multiple_results():
    from olympus_trace import bind

    def sort2(x, y):
        return bind(P.sort_p, x, y, dimension=0, is_stable=True, num_keys=1)

    inner = make_olympuspr(sort2)(f32(3), f32(3))
    expected = J("""
        { lambda ; a:f32[3] b:f32[3]. let
            c:f32[3] d:f32[3] = sort[dimension=0 is_stable=True num_keys=1] a b
          in (c, d) }""")
    assert str(inner) == expected
    outer = make_olympuspr(lambda x, y: inline_closed(inner, x, y))(f32(3), f32(3))
    assert str(outer) == expected
