"""Solves differentiated implicitly rather than through the solver's iterations:
`custom_linear_solve` (the ``custom_linear_solve`` primitive: derivatives are further
solves, reverse mode uses `transpose_solve`) and `custom_root` (the implicit function
theorem, on `custom_jvp`, with the closures of `f`, `solve` and `tangent_solve` converted
so that what they close over is differentiated too, as in JAX)."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes
from olympus_ir.prims.control_flow import LinearSolveTuple
from olympus_trace import lax_ops, tree_util
from olympus_trace.core import get_aval
from olympus_trace.lax_ops.control_flow import linear_solve
from olympus_trace.make_olympuspr import abstractify

from .control_flow import _trace_flat

__all__ = ["custom_linear_solve", "custom_root"]


def _check_tree(func_name, expected_name, actual_tree, expected_tree, has_aux=False):
    if has_aux:
        children = tree_util.treedef_children(actual_tree)
        if len(children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure {actual_tree}, "
                             "but a pair of output pytrees (solution, aux) was expected "
                             "because has_aux=True.")
        actual_tree = children[0]
    if actual_tree != expected_tree:
        raise TypeError(f"{func_name}() output pytree structure must match "
                        f"{expected_name}, got {actual_tree} and {expected_tree}.")


def _zero_tangent(x):
    """A zero tangent for `x` (float0 zeros for integer and boolean values)."""
    a = get_aval(x)
    if dtypes.is_inexact(a.dtype):
        return lax_ops.broadcast_in_dim(np.zeros((), a.dtype), a.shape, ())
    return np.zeros(a.shape, dtypes.float0)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux: bool = False):
    """``solve(f, initial_guess)``, a zero of `f`, with derivatives (with respect to what
    `f` closes over) from the implicit function theorem: at the root x*, ``dx* =
    -tangent_solve(g, df)`` with ``g`` the linearization of ``f`` at x* in x."""
    from .._src.api import jvp, linearize
    from .._src.custom_derivatives import closure_convert, custom_jvp

    guess_tree = tree_util.tree_structure(initial_guess)
    f_conv, f_consts = closure_convert(f, initial_guess)
    _check_tree("f", "initial_guess", tree_util.tree_structure(f(initial_guess)), guess_tree)
    solve_conv, solve_consts = closure_convert(lambda x: solve(f, x), initial_guess)
    _check_tree("solve", "initial_guess",
                tree_util.tree_structure(solve(f, initial_guess)), guess_tree, has_aux)

    def linearize_and_solve(x, b):
        _, f_lin = linearize(f, x)
        return tangent_solve(f_lin, b)

    ls_conv, ls_consts = closure_convert(linearize_and_solve, initial_guess, initial_guess)

    @custom_jvp
    def root(f_consts, solve_consts, ls_consts, guess):
        return solve_conv(guess, *solve_consts)

    @root.defjvp
    def root_jvp(primals, tangents):
        f_c, s_c, l_c, guess = primals
        f_dot = tangents[0]
        out = root(f_c, s_c, l_c, guess)
        solution = out[0] if has_aux else out
        # f(x*(c), c) = 0  =>  (df/dx) dx* = -(df/dc) dc
        _, rhs = jvp(lambda *c: f_conv(solution, *c), tuple(f_c), tuple(f_dot))
        sol_dot = tree_util.tree_map(lambda t: -t, ls_conv(solution, rhs, *l_c))
        if has_aux:
            aux_dot = tree_util.tree_map(_zero_tangent, out[1])
            return out, (sol_dot, aux_dot)
        return out, sol_dot

    return root(list(f_consts), list(solve_consts), list(ls_consts), initial_guess)


def _shape_checked(fun, name, b_avals, has_aux):
    """`fun` with a check that its result (the first of a pair with `has_aux`) has b's
    shapes and dtypes."""

    def checked(*args):
        out = fun(*args)
        x = out[0] if has_aux else out
        leaves = tree_util.tree_leaves(x)
        got = [get_aval(v) for v in leaves]
        if len(got) != len(b_avals) or any(
                (g.shape, g.dtype) != (a.shape, a.dtype) for g, a in zip(got, b_avals)):
            raise ValueError(
                f"{name}() output shapes must match b, got "
                f"{[(g.shape, g.dtype.name) for g in got]} and "
                f"{[(a.shape, a.dtype.name) for a in b_avals]}")
        return out

    return checked


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric: bool = False,
                        has_aux: bool = False):
    """``solve(matvec, b)``, the x with ``matvec(x) == b`` (pytrees like `b`), with
    derivatives defined by further solves instead of by differentiating `solve`: forward
    mode solves for ``db - dA x``, reverse mode uses ``transpose_solve(vecmat, ct)`` (or
    `solve` when `symmetric`), where vecmat is matvec's transpose."""
    from .._src.api import linear_transpose

    b_leaves, b_tree = tree_util.tree_flatten(b)
    b_avals = [abstractify(v) for v in b_leaves]
    in_tree = tree_util.tree_structure((b,))

    matvec_j, matvec_c, out_tree = _trace_flat(
        _shape_checked(matvec, "matvec", b_avals, False), in_tree, b_avals,
        "custom_linear_solve matvec")
    _check_tree("matvec", "b", out_tree, b_tree)
    solve_j, solve_c, out_tree = _trace_flat(
        _shape_checked(lambda x: solve(matvec, x), "solve", b_avals, has_aux), in_tree,
        b_avals, "custom_linear_solve solve")
    _check_tree("solve", "b", out_tree, b_tree, has_aux)
    solve_tree = out_tree
    if transpose_solve is None:
        vecmat_j = tr_solve_j = None
        vecmat_c, tr_solve_c = [], []
    else:
        if symmetric:
            vecmat = matvec
            vecmat_j, vecmat_c = matvec_j, matvec_c
        else:
            transposed = linear_transpose(matvec, b)

            def vecmat(x):
                return transposed(x)[0]

            vecmat_j, vecmat_c, _ = _trace_flat(vecmat, in_tree, b_avals,
                                                "custom_linear_solve vecmat")
        tr_solve_j, tr_solve_c, out_tree = _trace_flat(
            _shape_checked(lambda x: transpose_solve(vecmat, x), "transpose_solve", b_avals,
                           has_aux), in_tree, b_avals, "custom_linear_solve transpose_solve")
        _check_tree("transpose_solve", "b", out_tree, b_tree, has_aux)
    consts = [matvec_c, vecmat_c, solve_c, tr_solve_c]
    outs = linear_solve([c for cs in consts for c in cs], b_leaves,
                        const_lengths=LinearSolveTuple(*(len(c) for c in consts)),
                        jaxprs=LinearSolveTuple(matvec_j, vecmat_j, solve_j, tr_solve_j))
    if has_aux:
        return tree_util.tree_unflatten(solve_tree, list(outs))
    return tree_util.tree_unflatten(b_tree, list(outs))
