"""shard_map's type checks over 4 virtual CPU devices (a 2x2 mesh): in_specs against the
shardings of arguments typed on ``Explicit`` axes, and the varying-manual-axes (vma) types
of values inside the body. Run in its own process by `test_sharding.py`
(``OLYMPUS_NUM_CPU_DEVICES=4``). Error messages and printed types were recorded from
reference JAX 0.10.2 (names jax -> olympus)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.sharding import AxisType, NamedSharding
from olympus.sharding import PartitionSpec as P

pytestmark = pytest.mark.skipif(
    olympus.device_count() != 4, reason="needs OLYMPUS_NUM_CPU_DEVICES=4 (see test_sharding.py)")

X = np.arange(16.0, dtype=np.float32).reshape(4, 4)


@pytest.fixture(scope="module")
def explicit_mesh():
    return olympus.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)


def _mismatch(want, have, ty):
    return (f"in_specs passed to shard_map: {want} does not match the specs of the input: "
            f"{have} for arg: {ty}. `in_specs` is an optional argument so you can omit "
            "specifying it and shard_map will infer the in_specs from the arguments. If you "
            "want to reshard your inputs, you can use `olympus.reshard` on the arguments and "
            "then pass those args to shard_map.")


@pytest.mark.parametrize("spec,arg_sharded,msg", [
    (P("x"), False, _mismatch("P('x', None)", "P(None, None)", "float32[4,4]")),
    (P(None, "x"), True, _mismatch("P(None, 'x')", "P('x', None)", "float32[4@x,4]")),
    (P("y"), True, _mismatch("P('y', None)", "P('x', None)", "float32[4@x,4]")),
    (P(("x", "y")), True, _mismatch("P(('x', 'y'), None)", "P('x', None)",
                                    "float32[4@x,4]")),
])
@pytest.mark.parametrize("jitted", [False, True])
def test_in_specs_must_match_explicit_argument_shardings(explicit_mesh, spec, arg_sharded,
                                                         msg, jitted):
    x = olympus.device_put(X, NamedSharding(explicit_mesh, P("x"))) if arg_sharded else X
    f = olympus.shard_map(lambda a: a * 2, mesh=explicit_mesh, in_specs=spec, out_specs=spec)
    with pytest.raises(ValueError) as e:
        (olympus.jit(f) if jitted else f)(x)
    assert str(e.value) == msg


def test_matching_in_specs_on_explicit_mesh_run(explicit_mesh):
    xs = olympus.device_put(X, NamedSharding(explicit_mesh, P("x")))
    for spec in (P("x"), P("x", None)):
        f = olympus.shard_map(lambda a: a * 2, mesh=explicit_mesh, in_specs=spec,
                              out_specs=P("x"))
        np.testing.assert_allclose(np.asarray(f(xs)), X * 2)
        np.testing.assert_allclose(np.asarray(olympus.jit(f)(xs)), X * 2)
    # Under grad (eager and jitted) the differentiated argument keeps its type.
    f = olympus.shard_map(lambda a: a * a, mesh=explicit_mesh, in_specs=P("x"), out_specs=P("x"))
    for g in (olympus.grad(lambda a: f(a).sum()), olympus.jit(olympus.grad(lambda a: f(a).sum()))):
        np.testing.assert_allclose(np.asarray(g(xs)), 2 * X)
    with pytest.raises(ValueError, match="does not match the specs of the input"):
        olympus.grad(lambda a: f(a).sum())(X)
    rep = olympus.shard_map(lambda a: a * 2, mesh=explicit_mesh, in_specs=P(), out_specs=P())
    np.testing.assert_allclose(np.asarray(rep(X)), X * 2)
    # Only when every mesh axis is Explicit and manual: a partly manual map is not checked.
    part = olympus.shard_map(lambda a: a, mesh=explicit_mesh, in_specs=P("y"),
                             out_specs=P("y"), axis_names={"y"})
    np.testing.assert_allclose(np.asarray(part(xs)), X)
    mixed = olympus.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    xm = olympus.device_put(X, NamedSharding(mixed, P("x")))
    out = olympus.shard_map(lambda a: a, mesh=mixed, in_specs=P("y"), out_specs=P("y"))(xm)
    np.testing.assert_allclose(np.asarray(out), X)


# --- varying manual axes ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def mesh():
    return olympus.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


X8 = np.arange(8.0, dtype=np.float32)


def _types_in_body(mesh, fn, check_vma=True):
    seen = {}

    def body(x):
        for name, value in fn(x).items():
            seen[name] = str(olympus.typeof(value))
        return x

    olympus.jit(olympus.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                                  check_vma=check_vma))(X8)
    return seen


def test_typeof_shows_the_varying_manual_axes_as_jax_prints_them(mesh):
    """Recorded from reference JAX 0.10.2 (``jax.typeof`` inside the same shard_map)."""
    y = lambda: lax.pcast(olympus.numpy.ones(4), "y", to="varying")  # noqa: E731
    got = _types_in_body(mesh, lambda x: {
        "x": x, "psum": lax.psum(x, "x"), "axis_index y": lax.axis_index("y"),
        "axis_index xy": lax.axis_index(("x", "y")),
        "all_gather": lax.all_gather(x, "x"), "all_gather tiled": lax.all_gather(x, "x", tiled=True),
        "psum_scatter": lax.psum_scatter(x, "x", tiled=True),
        "ppermute": lax.ppermute(x, "x", [(0, 1), (1, 0)]),
        "all_to_all": lax.all_to_all(x, "x", 0, 0, tiled=True),
        "pcast y": lax.pcast(x, "y", to="varying"), "pmax": lax.pmax(x, "x"),
        "pmean": lax.pmean(x, "x"), "const": olympus.numpy.ones(3), "x+1": x + 1.0,
        "sum": x.sum(), "x+y": x + y(), "all_gather y of pcast": lax.all_gather(y(), "y"),
    })
    assert got == {
        "x": "float32[4]{V:x}", "psum": "float32[4]", "axis_index y": "int32[]{V:y}",
        "axis_index xy": "int32[]{V:(x,y)}", "all_gather": "float32[2,4]{V:x}",
        "all_gather tiled": "float32[8]{V:x}", "psum_scatter": "float32[2]{V:x}",
        "ppermute": "float32[4]{V:x}", "all_to_all": "float32[4]{V:x}",
        "pcast y": "float32[4]{V:(x,y)}", "pmax": "float32[4]", "pmean": "float32[4]",
        "const": "float32[3]", "x+1": "float32[4]{V:x}", "sum": "float32[]{V:x}",
        "x+y": "float32[4]{V:(x,y)}", "all_gather y of pcast": "float32[2,4]{V:y}",
    }
    assert repr(olympus.typeof(olympus.numpy.ones(2))) == "ShapedArray(float32[2])"


def test_no_varying_axes_without_check_vma(mesh):
    assert _types_in_body(mesh, lambda x: {"x": x}, check_vma=False) == {"x": "float32[4]"}


def test_psum_of_an_invariant_value_sums_its_copies(mesh):
    """As JAX 0.10.2: psum over an axis the value does not vary along is allowed (the value
    is made varying first), so it is multiplied by the axis size; pmax leaves it."""
    f = olympus.shard_map(lambda x: lax.psum(x, "y"), mesh=mesh, in_specs=P("x"),
                          out_specs=P("x"))
    np.testing.assert_allclose(np.asarray(f(X8)), 2 * X8)
    g = olympus.shard_map(lambda x: lax.pmax(x, "y"), mesh=mesh, in_specs=P("x"),
                          out_specs=P("x"))
    np.testing.assert_allclose(np.asarray(g(X8)), X8)


HEAD = ("shard_map applied to the function '<lambda>' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\nThe mesh given has "
        "shape (2, 2) with corresponding axis names ('x', 'y').\n\n")
TAIL = ("\n\nCheck if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider disabling "
        "the check by passing the check_vma=False argument to `olympus.shard_map`.")


def _rep_y(path="", spec="P('x',)"):
    return (f"out_specs{path} is {spec} which implies that the corresponding output value is "
            "replicated across mesh axis 'y', but could not infer replication over any axes")


@pytest.mark.parametrize("fn,out_specs,msg", [
    (lambda x: lax.all_gather(x, "y"), P("x"), _rep_y()),
    (lambda x: lax.psum_scatter(x, "y", tiled=True), P("x"), _rep_y()),
    (lambda x: lax.ppermute(x, "y", [(0, 1), (1, 0)]), P("x"), _rep_y()),
    (lambda x: lax.all_to_all(x, "y", 0, 0, tiled=True), P("x"), _rep_y()),
    (lambda x: lax.pcast(x, "y", to="varying"), P("x"), _rep_y()),
    (lambda x: lax.pcast(x, "y", to="varying"), P(),
     "out_specs is P() which implies that the corresponding output value is only varying "
     "across mesh axes {} and not {x,y}, but it was inferred to be possibly varying over "
     "{x,y}"),
    (lambda x: (x, lax.pcast(x, "y", to="varying")), (P(), P(None)),
     "* out_specs[0] is P() which implies that the corresponding output value is only "
     "varying across mesh axes {} and not {x}, but it was inferred to be possibly varying "
     "over {x}\n\n* out_specs[1] is P(None,) which implies that the corresponding output "
     "value is only varying across mesh axes {} and not {x,y}, but it was inferred to be "
     "possibly varying over {x,y}"),
])
def test_out_specs_replication_errors_as_jax_words_them(mesh, fn, out_specs, msg):
    f = olympus.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=out_specs)
    with pytest.raises(ValueError) as e:
        olympus.jit(f)(X8)
    assert str(e.value) == HEAD + msg + TAIL
    unchecked = olympus.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=out_specs,
                                  check_vma=False)
    olympus.jit(unchecked)(X8)  # check_vma=False turns the check off


def test_pcast_checks_the_current_state(mesh):
    """Recorded from reference JAX 0.10.2 (its set of states prints in hash order)."""
    def run(fn):
        f = olympus.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        with pytest.raises(ValueError) as e:
            olympus.jit(f)(X8)
        return str(e.value)

    assert run(lambda x: lax.pcast(x, "x", to="varying")) == (
        "Unsupported pcast from=varying, to='varying'")
    assert run(lambda x: lax.pcast(x, ("x", "y"), to="varying")) == (
        "olympus.lax.pcast can only accept axis_name which corresponds to one of varying, "
        "unreduced, reduced or invarying state of the input. Got input type: "
        "float32[4]{V:x}, axes: ('x', 'y') and input state: {'varying', 'invarying'}")
    assert run(lambda x: lax.pcast(x, "x", to="foo")).startswith(
        "Got unexpected `to` value. Allowed `to` values are: {")
    # Without the checks every value is invariant: pcast to varying is always allowed.
    f = olympus.shard_map(lambda x: lax.pcast(x, "x", to="varying"), mesh=mesh,
                          in_specs=P("x"), out_specs=P("x"), check_vma=False)
    np.testing.assert_allclose(np.asarray(olympus.jit(f)(X8)), X8)


SCAN_ERR = (
    "scan body function carry input and carry output must have equal types, but they differ:"
    "\n\nThe input carry c has type float32[4] but the corresponding output carry component "
    "has type float32[4]{V:x}, so the manual axis types do not match.\n\nThis might be fixed "
    "by applying `olympus.lax.pcast(..., ('x',), to='varying')`, to the initial carry value "
    "corresponding to the input carry c.\nSee "
    "https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information."
    "\n\nRevise the function so that all output types match the corresponding input types.")


def test_scan_carry_must_keep_its_varying_axes(mesh):
    """JAX 0.10.2's error (recorded) for a carry that starts invariant and comes out varying;
    with the initial carry made varying (its hint) the loop runs."""
    def summed(start):
        def fn(x):
            def body(c, _):
                return c + x, None
            return lax.scan(body, start(), None, length=2)[0]
        return olympus.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=P("x"))

    with pytest.raises(TypeError) as e:
        olympus.jit(summed(lambda: olympus.numpy.zeros(4)))(X8)
    assert str(e.value) == SCAN_ERR
    ok = summed(lambda: lax.pcast(olympus.numpy.zeros(4), "x", to="varying"))
    np.testing.assert_allclose(np.asarray(olympus.jit(ok)(X8)), 2 * X8)
    # Without the checks the carry is not typed: the loop runs as written.
    loose = olympus.shard_map(lambda x: lax.scan(lambda c, _: (c + x, None),
                                                 olympus.numpy.zeros(4), None, length=2)[0],
                              mesh=mesh, in_specs=P("x"), out_specs=P("x"), check_vma=False)
    np.testing.assert_allclose(np.asarray(olympus.jit(loose)(X8)), 2 * X8)


def test_cond_branches_must_vary_alike(mesh):
    """JAX 0.10.2's error (recorded; its pcast hint names the axes as "()" here)."""
    true_fun = lambda x: x  # noqa: E731
    false_fun = lambda x: olympus.numpy.zeros(4)  # noqa: E731

    def fn(x):
        return lax.cond(x.sum() > 0, true_fun, false_fun, x)

    f = olympus.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(TypeError) as e:
        olympus.jit(f)(X8)
    src = olympus._src.control_flow_vma.fun_source_info
    assert str(e.value) == (
        "cond branches must have equal output types but they differ.\n\n"
        f"true_fun is {src(true_fun)}\nfalse_fun is {src(false_fun)}\n\n"
        "The output of true_fun has type float32[4]{V:x} but the corresponding output of "
        "false_fun has type float32[4], so the manual axis types do not match.\n\n"
        "This might be fixed by applying `olympus.lax.pcast(..., (), to='varying')` to the "
        "output of true_fun.\nSee https://docs.jax.dev/en/latest/notebooks/shard_map.html"
        "#scan-vma for more information.\n\nRevise true_fun and/or false_fun so that all "
        "output types match.")
    g = olympus.shard_map(lambda x: lax.cond(x.sum() > 0, lambda v: v, lambda v: v * 0, x),
                          mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    np.testing.assert_allclose(np.asarray(olympus.jit(g)(X8)), np.where(
        X8.reshape(2, 4).sum(1, keepdims=True) > 0, X8.reshape(2, 4), 0).ravel())


def test_while_loop_carry_must_keep_its_varying_axes(mesh):
    """JAX 0.10.2's error (recorded), naming the carry component by its path."""
    def fn(a):
        def body(c):
            i, s = c
            return i + 1, s + a
        return lax.while_loop(lambda c: c[0] < 3, body, (0, olympus.numpy.zeros(4)))[1]

    with pytest.raises(TypeError) as e:
        olympus.jit(olympus.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(X8)
    assert str(e.value) == (
        "while_loop body function carry input and carry output must have equal types, but "
        "they differ:\n\nThe input carry component c[1] has type float32[4] but the "
        "corresponding output carry component has type float32[4]{V:x}, so the manual axis "
        "types do not match.\n\nThis might be fixed by applying `olympus.lax.pcast(..., "
        "('x',), to='varying')`, to the initial carry value corresponding to the input carry "
        "component c[1].\nSee https://docs.jax.dev/en/latest/notebooks/shard_map.html"
        "#scan-vma for more information.\n\nRevise the function so that all output types "
        "match the corresponding input types.")


def test_manual_axis_type(mesh):
    """``typeof(x).manual_axis_type`` (JAX's repr recorded: ``ManualAxisType(varying=
    frozenset({'x'}), unreduced=frozenset(), reduced=frozenset())``)."""
    seen = []

    def body(x):
        seen.append(olympus.typeof(x).manual_axis_type)
        seen.append(olympus.typeof(lax.psum(x, "y")).manual_axis_type.varying)
        return x

    olympus.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(X8)
    assert repr(seen[0]) == ("ManualAxisType(varying=frozenset({'x'}), unreduced=frozenset(), "
                             "reduced=frozenset())")
    assert seen[1] == {"x"}


def test_in_specs_inferred_from_explicit_argument_types(explicit_mesh):
    """JAX's data-parallel example: without in_specs, over Explicit axes, each argument's
    type gives its spec (also under jit and grad, where the arguments are traced)."""
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    params = olympus.device_put(w, NamedSharding(explicit_mesh, P()))
    batch = olympus.device_put(X, NamedSharding(explicit_mesh, P(("x", "y"))))

    def loss_dp(params, local_batch):
        return lax.pmean(olympus.numpy.mean((local_batch @ params) ** 2), ("x", "y"))

    f = olympus.shard_map(loss_dp, mesh=explicit_mesh, out_specs=P())
    want = np.mean((X @ w) ** 2)
    np.testing.assert_allclose(np.asarray(f(params, batch)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(olympus.jit(f)(params, batch)), want, rtol=1e-5)
    grad_want = 2 * X.T @ (X @ w) / X.size * 4 / 3
    for g in (olympus.grad(f), olympus.jit(olympus.grad(f))):
        np.testing.assert_allclose(np.asarray(g(params, batch)), grad_want, rtol=1e-4)
    # make_olympuspr types its arguments like jit: the check passes, the spec is inferred.
    closed = olympus.make_olympuspr(f)(params, batch)
    assert "shard_map" in str(closed)


def test_psum_over_axes_in_mixed_states_and_pbroadcast_types(mesh):
    """Recorded from reference JAX 0.10.2: psum (and pmean) over axes the value varies
    along and axes it does not is an error; pmax/pmin are not checked; pbroadcast keeps
    the value varying over its axis."""
    for fn in (lambda x: lax.psum(x, ("x", "y")), lambda x: lax.pmean(x, ("x", "y")),
               lambda x: lax.psum((x, x.sum()), ("y", "x"))):
        f = olympus.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=P())
        with pytest.raises(ValueError, match=(
                r"^olympus.lax.psum can only accept axis_name which corresponds to one of "
                r"varying, unreduced, reduced or invarying state of the input. Got input type: "
                r"float32\[4\]\{V:x\}, axes: \('[xy]', '[xy]'\) and input state: \{'")):
            olympus.jit(f)(X8)
    for fn in (lambda x: lax.pmax(x, ("x", "y")), lambda x: lax.pmin(x, ("y", "x"))):
        f = olympus.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=P())
        olympus.jit(f)(X8)
    got = _types_in_body(mesh, lambda x: {"pbroadcast": lax.pbroadcast(x, "x", 1)})
    assert got == {"pbroadcast": "float32[4]{V:x}"}
    f = olympus.shard_map(lambda x: lax.pbroadcast(x, "x", 1), mesh=mesh, in_specs=P("x"),
                          out_specs=P("x"))
    np.testing.assert_allclose(np.asarray(olympus.jit(f)(X8)), np.tile(X8[4:], 2))


# make_olympuspr of shard_map bodies prints each value's varying manual axes (``{V:x}``)
# when check_vma is on: recorded from reference JAX 0.10.2 (make_jaxpr, run in its own
# process on 4 CPU devices, jaxpr -> olympuspr) on the same programs.
_PRINTED_VMA = {
    'add_sin': "{ lambda ; a:f32[4,4]. let\n    b:f32[4,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x', 'y'),)\n      olympuspr={ lambda ; c:f32[2,2]{V:(x,y)}. let\n          d:f32[2,2]{V:(x,y)} = sin c\n          e:f32[2,2]{V:(x,y)} = add d c\n        in (e,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x', 'y'),)\n    ] a\n  in (b,) }",
    'no_check': "{ lambda ; a:f32[4,4]. let\n    b:f32[4,4] = shard_map[\n      check_vma=False\n      in_specs=(P('x', 'y'),)\n      olympuspr={ lambda ; c:f32[2,2]. let d:f32[2,2] = sin c in (d,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P('x', 'y'),)\n    ] a\n  in (b,) }",
    'psum': "{ lambda ; a:f32[4,4]. let\n    b:f32[2,4] = shard_map[\n      check_vma=True\n      in_specs=(P('x', 'y'),)\n      olympuspr={ lambda ; c:f32[2,2]{V:(x,y)}. let\n          d:f32[2,2]{V:y} = psum_invariant[axes=('x',)] c\n        in (d,) }\n      mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))\n      newly_manual_axes=frozenset({'x', 'y'})\n      out_specs=(P(None, 'y'),)\n    ] a\n  in (b,) }",
}


def _sorted_sets(text):
    """frozenset({'y', 'x'}) printed in sorted order (a set prints in hash order)."""
    import re

    return re.sub(r"frozenset\(\{([^}]*)\}\)",
                  lambda m: "frozenset({" + ", ".join(sorted(m.group(1).split(", "))) + "})",
                  text)


@pytest.mark.parametrize("name", sorted(_PRINTED_VMA))
def test_shard_map_body_prints_varying_axes(name):
    m = olympus.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    programs = {
        "psum": dict(f=lambda v: lax.psum(v, "x"), out_specs=P(None, "y")),
        "add_sin": dict(f=lambda v: jnp.sin(v) + v, out_specs=P("x", "y")),
        "no_check": dict(f=jnp.sin, out_specs=P("x", "y"), check_vma=False),
    }
    kw = dict(programs[name])
    f = olympus.shard_map(kw.pop("f"), mesh=m, in_specs=P("x", "y"), **kw)
    text = olympus.make_olympuspr(f)(x).pretty_print(use_color=False)
    assert _sorted_sets(text) == _sorted_sets(_PRINTED_VMA[name])


EAGER_PRINTED_JAX = 'BEFORE:\n On cpu:0 at mesh coordinates (i, j,) = (0, 0):\n[[0 1]\n [4 5]]\n\nOn cpu:1 at mesh coordinates (i, j,) = (0, 1):\n[[2 3]\n [6 7]]\n\nOn cpu:2 at mesh coordinates (i, j,) = (1, 0):\n[[ 8  9]\n [12 13]]\n\nOn cpu:3 at mesh coordinates (i, j,) = (1, 1):\n[[10 11]\n [14 15]]\n\nint32[2,2]{V:(i,j)}\nint32[2,2]{V:j}\nAFTER:\n On cpu:0 at mesh coordinates (i, j,) = (0, 0):\n[[ 8 10]\n [16 18]]\n\nOn cpu:1 at mesh coordinates (i, j,) = (0, 1):\n[[12 14]\n [20 22]]\n\nOn cpu:2 at mesh coordinates (i, j,) = (1, 0):\n[[ 8 10]\n [16 18]]\n\nOn cpu:3 at mesh coordinates (i, j,) = (1, 1):\n[[12 14]\n [20 22]]\n\n'


def test_eager_shard_map_body_sees_each_devices_block():
    """Called outside jit, the body runs op by op as in JAX: `print` shows every device's
    block, `typeof` the varying axes, and an invariant scalar drives Python control flow.
    The printed text, result and sharding were recorded from reference JAX 0.10.2
    (4 CPU devices, the shard_map page's `f2` with a branch added)."""
    mesh = olympus.make_mesh((2, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)

    @olympus.shard_map(mesh=mesh, in_specs=P("i", "j"), out_specs=P(None, "j"))
    def f(x):
        print("BEFORE:\n", x)
        print(olympus.typeof(x))
        y = lax.psum(x, "i")
        print(olympus.typeof(y))
        print("AFTER:\n", y)
        if jnp.sum(lax.psum(y, "j")) > 100:  # invariant: a value here
            y = y + 1
        return y

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = f(jnp.arange(16).reshape(4, 4))
    assert buf.getvalue() == EAGER_PRINTED_JAX
    np.testing.assert_array_equal(np.asarray(out), [[9, 11, 13, 15], [17, 19, 21, 23]])
    assert out.dtype == np.int32
    assert out.sharding == NamedSharding(mesh, P(None, "j"))


def test_eager_shard_map_varying_value_is_not_concrete():
    """A value that varies over a mesh axis has no single value (JAX's error type)."""
    mesh = olympus.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))

    def f(x):
        if jnp.sum(x) > 0:
            return x
        return -x

    with pytest.raises(olympus.errors.TracerBoolConversionError):
        olympus.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(jnp.arange(8.0))


def test_eager_shard_map_under_disable_jit():
    """Under `disable_jit` the eager body still runs each primitive as a one-primitive
    shard_map (no recursion into the eager path); value as JAX 0.10.2 gives it."""
    mesh = olympus.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    with olympus.disable_jit():
        out = olympus.shard_map(lambda x: lax.psum(x, "i") * 2, mesh=mesh, in_specs=P("i"),
                                out_specs=P())(jnp.arange(8.0))
    np.testing.assert_array_equal(np.asarray(out), [24.0, 32.0])


def test_eager_shard_map_types_without_check_vma():
    """Without check_vma JAX's eager body types show no varying axes (with it, the
    input's); printed types recorded from reference JAX 0.10.2."""
    mesh = olympus.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    seen = []

    def f(x):
        seen.append((str(olympus.typeof(x)), str(olympus.typeof(lax.psum(x, "i")))))
        return x

    for check in (False, True):
        olympus.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P("i"),
                          check_vma=check)(jnp.arange(8.0))
    assert seen == [("float32[2]", "float32[2]"), ("float32[2]{V:i}", "float32[2]")]
