"""Existing JAX code runs unchanged: the names and keywords libraries written for JAX use.

Two recorded lists drive the sweep, both generated once from reference JAX 0.10.2 in its
own virtualenv (never in this process):

* ``data/jax_load_names.json``: every attribute of a public ``jax`` module that optax 0.2.8,
  flax 0.12.8, chex 0.1.92 and equinox 0.13.8 read from their own code while importing
  (``scripts/record_load_names.py``). A single missing one stops a library from importing.
* ``data/jax_signatures.json``: the parameters of the most used functions
  (``scripts/record_jax_signatures.py``); every parameter a caller can pass by keyword in
  JAX must be an explicit parameter here too.

The names left out are listed below with the reason; everything else must resolve.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pathlib

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax

DATA = pathlib.Path(__file__).parent / "data"
LOAD_NAMES = json.loads((DATA / "jax_load_names.json").read_text())
SIGNATURES = json.loads((DATA / "jax_signatures.json").read_text())["signatures"]

# JAX internals and extension points that libraries touch to register their own primitives
# or to reach private state: Olympus's equivalents are its own rule tables and IR, with
# different objects, so aliasing them would be a silent lie.
_INTERNAL_MODULES = {
    "jax.extend": "JAX's extension API for its own IR (Olympus's is olympus_ir/olympus_trace)",
    "jax.extend.core": "JAX's extension API for its own IR",
    "jax.extend.source_info_util": "JAX's extension API for its own IR",
    "jax.interpreters": "JAX's interpreter internals (rule tables keyed by JAX primitives)",
    "jax.interpreters.ad": "JAX's interpreter internals",
    "jax.interpreters.batching": "JAX's interpreter internals",
    "jax.interpreters.mlir": "JAX's interpreter internals",
    "jax.interpreters.partial_eval": "JAX's interpreter internals",
    "jax.experimental.array_serialization.serialization": "tensorstore checkpointing "
                                                          "(not part of Olympus)",
}
_INTERNAL_NAMES = {
    ("jax", "_src"): "JAX's private package",
    ("jax", "extend"): "see _INTERNAL_MODULES",
    ("jax", "interpreters"): "see _INTERNAL_MODULES",
    ("jax.custom_derivatives", "custom_jvp_call_p"): "a JAX-internal primitive object",
}
# Names that other open work adds (each listed in its issue); remove an entry when it lands.
_AWAITING = {
    ("jax.errors", "JaxRuntimeError"): "issue 17 (error classes)",
}


def _olympus_module_name(jax_module: str) -> str:
    return "olympus" + jax_module[len("jax"):]


def _cases():
    for module, names in sorted(LOAD_NAMES.items()):
        if module in _INTERNAL_MODULES:
            continue
        for name in names:
            yield module, name


def _excused(module, name):
    return ((module, name) in _INTERNAL_NAMES or (module, name) in _AWAITING
            or (module, "*") in _AWAITING)


@pytest.mark.parametrize("module,name", [c for c in _cases() if not _excused(*c)])
def test_name_libraries_read_at_import(module, name):
    mod = importlib.import_module(_olympus_module_name(module))
    assert hasattr(mod, name), f"{_olympus_module_name(module)}.{name} is missing"


def test_exclusions_are_still_needed():
    """An excused name that now resolves must leave the exclusion lists."""
    resolved = []
    for module, name in _cases():
        if (module, name) not in _AWAITING and (module, "*") not in _AWAITING:
            continue
        try:
            mod = importlib.import_module(_olympus_module_name(module))
        except ImportError:
            continue
        if hasattr(mod, name):
            resolved.append((module, name))
    assert not resolved, f"remove from _AWAITING: {resolved}"


def test_keyword_exclusions_are_still_needed():
    resolved = [(name, kw) for name, kw in _KEYWORDS_AWAITING
                if kw in inspect.signature(_olympus_function(name)).parameters]
    assert not resolved, f"remove from _KEYWORDS_AWAITING: {resolved}"


def _olympus_function(name):
    module, _, attr = name.rpartition(".")
    base = {"": olympus, "lax": lax, "numpy": jnp,
            "tree_util": importlib.import_module("olympus.tree_util")}[module]
    return getattr(base, {"make_jaxpr": "make_olympuspr"}.get(attr, attr))


# Keywords left out, with the reason (each an open item of the named issue).
_KEYWORDS_AWAITING = {
    ("numpy.einsum", "_dot_general"): "a private hook of JAX's einsum",
}


def _keyword_cases():
    for name, params in sorted(SIGNATURES.items()):
        for pname, kind, _ in params:
            if kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY"):
                yield name, pname


@pytest.mark.parametrize("name,keyword", [
    c for c in _keyword_cases() if c not in _KEYWORDS_AWAITING])
def test_keywords_jax_accepts(name, keyword):
    fn = _olympus_function(name)
    params = inspect.signature(fn).parameters
    assert keyword in params, f"{name} lacks the keyword {keyword!r}: {list(params)}"
    assert params[keyword].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    inspect.Parameter.KEYWORD_ONLY)


# --- modules that must import -----------------------------------------------------------


@pytest.mark.parametrize("module", ["olympus.typing", "olympus.dtypes", "olympus.tree",
                                    "olympus.tree_util", "olympus.flatten_util",
                                    "olympus.test_util", "olympus.scipy.stats",
                                    "olympus.sharding"])
def test_modules_import(module):
    importlib.import_module(module)


def test_import_time_types():
    """The types libraries touch while importing: sharding classes, scipy.stats.norm,
    test_util.check_grads, typeof and eval_shape (their behaviour is tested where they
    live)."""
    import olympus.scipy.stats as stats
    import olympus.sharding as sharding
    import olympus.test_util as test_util

    for name in ("PartitionSpec", "NamedSharding", "Mesh", "SingleDeviceSharding",
                 "Sharding", "AbstractMesh"):
        assert isinstance(getattr(sharding, name), type), name
    assert issubclass(sharding.NamedSharding, sharding.Sharding)
    np.testing.assert_allclose(stats.norm.cdf(0.0), 0.5)
    assert callable(test_util.check_grads)
    assert str(olympus.typeof(jnp.ones(3))) == "float32[3]"
    out = olympus.eval_shape(lambda x: x.sum(0), jnp.ones((2, 3)))
    assert out.shape == (3,) and out.dtype == np.float32


def test_typing_names():
    from olympus.typing import ArrayLike, DTypeLike

    assert olympus.Array in ArrayLike.__args__ and np.ndarray in ArrayLike.__args__
    assert {bool, int, float, complex} <= set(ArrayLike.__args__)
    assert np.dtype in DTypeLike.__args__ and str in DTypeLike.__args__


def test_dtypes_module():
    """``olympus.dtypes`` has exactly the public names ``jax.dtypes`` has in 0.10.2."""
    import olympus.dtypes as d

    assert sorted(n for n in dir(d) if not n.startswith("_")) == [
        "TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
        "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
        "scalar_type_of"]
    assert d.canonicalize_dtype(np.float64) == jnp.zeros((), np.float64).dtype
    assert d.result_type(jnp.int8, 1.0) == jnp.float32
    assert d.finfo(jnp.bfloat16).eps == 0.0078125
    assert d.float0.names == ("float0",)
    key = olympus.random.key(0)
    assert d.issubdtype(key.dtype, d.prng_key) and d.issubdtype(key.dtype, d.extended)
    assert not d.issubdtype(key.dtype, jnp.floating)
    assert d.canonicalize_dtype(key.dtype, allow_extended_dtype=True) == key.dtype
    with pytest.raises(ValueError, match="called on extended dtype key<fry>"):
        d.canonicalize_dtype(key.dtype)


def test_scalar_types_equal_numpy_dtypes():
    """``jnp.float32 == np.dtype('float32')`` as in JAX (``_ScalarMeta.__eq__``)."""
    assert jnp.float32 == np.dtype("float32") and np.dtype("float32") == jnp.float32
    assert jnp.float32 == np.float32 and jnp.int8 == np.dtype(np.int8)
    assert jnp.float32 != np.dtype("float64") and jnp.float32 != "float32"
    assert hash(jnp.float32) == hash(np.dtype("float32"))


# --- tracers are arrays -----------------------------------------------------------------


def test_tracers_are_arrays():
    seen = []

    def probe(x):
        seen.append((isinstance(x, olympus.Array), isinstance(x, jnp.ndarray)))
        return x * 2

    x = jnp.ones(3)
    olympus.jit(probe)(x)
    olympus.grad(lambda v: probe(v).sum())(x)
    olympus.vmap(probe)(x)
    olympus.jvp(probe, (x,), (x,))
    olympus.make_olympuspr(probe)(x)
    assert seen == [(True, True)] * 5
    assert jnp.ndarray is olympus.Array
    assert isinstance(x, olympus.Array) and issubclass(type(x), olympus.Array)
    assert not isinstance(np.ones(3), olympus.Array) and not isinstance(1.0, olympus.Array)
    key = olympus.random.key(0)
    assert isinstance(key, olympus.Array)
    olympus.jit(lambda k: seen.append(isinstance(k, olympus.Array)))(key)
    assert seen[-1] is True


# --- keywords JAX accepts ----------------------------------------------------------------


def test_jit_inline_keyword():
    inner = olympus.jit(lambda x: x + 1, inline=True)
    assert float(inner(1.0)) == 2.0
    printed = str(olympus.make_olympuspr(lambda x: inner(x) * 2)(1.0))
    assert "add" in printed and "mul" in printed
    assert float(olympus.jit(lambda x: inner(x) * 2)(3.0)) == 8.0
    partial_form = olympus.jit(inline=True)(lambda x: x - 1)
    assert float(partial_form(1.0)) == 0.0


def test_jit_compiler_options_device_backend():
    f = olympus.jit(lambda x: x * 2 + 1, compiler_options={"xla_cpu_enable_fast_math": False})
    assert float(f(1.0)) == 3.0
    assert float(f.lower(2.0).compile()(2.0)) == 5.0
    with pytest.raises(Exception, match="No such compile option: 'not_an_option'"):
        olympus.jit(lambda x: x + 1, compiler_options={"not_an_option": 1})(1.0)
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        olympus.jit(lambda x: x, compiler_options=[("a", 1)])
    dev = olympus.devices()[0]
    with pytest.warns(DeprecationWarning, match="backend and device argument on jit is "
                      "deprecated"):
        g = olympus.jit(lambda x: x + 1, device=dev)
    y = g(1.0)
    assert float(y) == 2.0 and y.devices() == {dev}
    with pytest.warns(DeprecationWarning):
        assert float(olympus.jit(lambda x: x - 1, backend="cpu")(1.0)) == 0.0
    with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError, match="tpu"):
        olympus.jit(lambda x: x, backend="tpu")
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="in_shardings"):
        olympus.jit(lambda x: x, device=dev, in_shardings=None,
                    out_shardings=olympus.sharding.SingleDeviceSharding(dev))


def test_cond_and_switch_operand_keyword():
    assert float(lax.cond(True, lambda x: x + 1, lambda x: x, operand=1.0)) == 2.0
    assert float(lax.cond(False, lambda x: x + 1, lambda x: x, operand=1.0)) == 1.0
    assert float(lax.switch(1, [lambda a: a, lambda a: a * 3], operand=2.0)) == 6.0
    f = olympus.jit(lambda p, x: lax.cond(p, lambda v: v * 2, lambda v: -v, operand=x))
    assert float(f(True, 3.0)) == 6.0 and float(f(False, 3.0)) == -3.0
    # JAX 0.10.2's message, recorded from reference JAX:
    with pytest.raises(TypeError, match=r"if 'operand' keyword is passed then no positional "
                       r"operands can be passed, got operand=1.0 and positional operands "
                       r"\(2.0,\)"):
        lax.cond(True, lambda x: x + 1, lambda x: x, 2.0, operand=1.0)


def test_compiler_ir_dialects():
    lowered = olympus.jit(lambda a: a * 2 + 1).lower(jnp.ones((2, 2)))
    hlo = lowered.compiler_ir("hlo")
    text = hlo.as_hlo_text()
    assert text.startswith("HloModule jit__lambda, entry_computation_layout="
                           "{(f32[2,2]{1,0})->f32[2,2]{1,0}}")
    assert "multiply(" in text and "ROOT" in text and "add(" in text
    assert lowered.as_text(dialect="hlo") == text
    assert "stablehlo.multiply" in str(lowered.compiler_ir("stablehlo"))
    assert str(lowered.compiler_ir()) == str(lowered.compiler_ir("stablehlo"))
    # JAX's StableHLO text ends with a newline; Olympus's does not, because the AOT seed
    # page (packages/olympus/docs/stages.md, a doctest that must pass exactly) prints it
    # with no blank line after the module.
    assert lowered.as_text().endswith("}\n}")
    with pytest.raises(ValueError, match="unknown dialect: foo"):
        lowered.compiler_ir("foo")
    with pytest.raises(ValueError, match="unknown dialect: foo"):
        lowered.as_text("foo")


@pytest.mark.parametrize("name,want", [
    ("<lambda>", "jit__lambda"), ("x>", "jit_x"), ("x__", "jit_x"), ("_x", "jit__x"),
    ("x>y", "jit_x_y"), ("a<b>c d", "jit_a_b_c_d")])
def test_module_names_as_jax_sanitizes_them(name, want):
    """Recorded from reference JAX 0.10.2's ``Lowered.as_text()`` for functions so named."""
    def f(x):
        return x

    f.__name__ = name
    first = olympus.jit(f).lower(1.0).as_text().splitlines()[0]
    assert first.startswith(f"module @{want} attributes")


def test_unnamed_callables_name_their_module():
    import functools

    class Callable:
        def __call__(self, x):
            return x

    assert olympus.jit(Callable()).lower(1.0).as_text().startswith(
        "module @jit__unnamed_function ")
    part = functools.partial(lambda a, b: a, 1)
    assert olympus.jit(part).trace(1.0).fun_name == "<lambda>"


def test_reshape_orders():
    x = jnp.arange(6)
    np.testing.assert_array_equal(jnp.reshape(x, (2, 3), order="F"),
                                  np.reshape(np.arange(6), (2, 3), order="F"))
    np.testing.assert_array_equal(x.reshape((2, 3), order="C"), np.arange(6).reshape(2, 3))
    # JAX 0.10.2 accepts the keyword and raises this for order='A' (recorded):
    with pytest.raises(NotImplementedError, match="np.reshape order=A is not implemented."):
        jnp.reshape(x, (2, 3), order="A")


def test_lax_broadcast_shapes():
    assert lax.broadcast_shapes((2, 1), (1, 3)) == (2, 3)
    assert lax.broadcast_shapes((3,)) == (3,)
    assert lax.broadcast_shapes((5, 1, 4), (3, 1), (1,)) == (5, 3, 4)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: "
                       r"shapes=\[\(2,\), \(3,\)\]"):
        lax.broadcast_shapes((2,), (3,))
    with pytest.raises(TypeError):
        lax.broadcast_shapes(3, (2, 1))


@pytest.mark.parametrize("batch_size", [None, 0, 3, 5, 20])
def test_lax_map_batch_size(batch_size):
    """``lax.map(f, xs, batch_size=...)``: same values, and the batched function is traced
    once for the full chunks and once for a remainder (as JAX's docstring shows)."""
    x = jnp.arange(30.0).reshape(10, 3)
    shapes = []

    def f(v):
        shapes.append(v.shape)
        return {"s": v.sum(), "d": v * 2}

    y = lax.map(f, x, batch_size=batch_size)
    np.testing.assert_allclose(y["s"], np.arange(30.0).reshape(10, 3).sum(1))
    np.testing.assert_allclose(y["d"], np.arange(30.0).reshape(10, 3) * 2)
    assert shapes == ([(3,), (3,)] if batch_size == 3 else [(3,)])
    with pytest.raises(TypeError, match="batch_size must be a non-negative int"):
        lax.map(f, x, batch_size=-1)


def test_lax_dot_keywords():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(lax.dot(a, a.T), a @ a.T)
    np.testing.assert_allclose(
        lax.dot(a, a, dimension_numbers=(((1,), (1,)), ((0,), (0,)))), (a * a).sum(1))
    with pytest.raises(ValueError, match="dimension_numbers must be specified"):
        lax.dot(np.ones((2, 2, 2)), np.ones((2, 2)))
    with pytest.raises(TypeError):
        lax.dot(a, a.T, lax.Precision.HIGHEST)  # keyword-only in JAX


# --- lax.Precision accepted by every precision= argument -----------------------------------

_X = np.arange(4.0, dtype=np.float32).reshape(2, 2)
_PRECISION_USERS = {
    "jnp.dot": lambda a, p: jnp.dot(a, a, precision=p),
    "jnp.matmul": lambda a, p: jnp.matmul(a, a, precision=p),
    "jnp.einsum": lambda a, p: jnp.einsum("ij,jk->ik", a, a, precision=p),
    "jnp.tensordot": lambda a, p: jnp.tensordot(a, a, 1, precision=p),
    "jnp.inner": lambda a, p: jnp.inner(a, a, precision=p),
    "jnp.vdot": lambda a, p: jnp.vdot(a, a, precision=p),
    "lax.dot": lambda a, p: lax.dot(a, a, precision=p),
    "lax.dot_general": lambda a, p: lax.dot_general(a, a, (((1,), (0,)), ((), ())),
                                                    precision=p),
    "lax.conv": lambda a, p: lax.conv(a[None, None], a[None, None], (1, 1), "SAME",
                                      precision=p),
    "lax.conv_general_dilated": lambda a, p: lax.conv_general_dilated(
        a[None, None], a[None, None], (1, 1), "VALID", precision=p),
}


@pytest.mark.parametrize("user", sorted(_PRECISION_USERS))
@pytest.mark.parametrize("precision", [lax.Precision.HIGHEST, lax.Precision.DEFAULT, "high",
                                       (lax.Precision.HIGH, lax.Precision.HIGHEST)])
def test_precision_accepted(user, precision):
    fn = _PRECISION_USERS[user]
    want = np.asarray(fn(_X, None))
    np.testing.assert_allclose(np.asarray(fn(_X, precision)), want, rtol=1e-6)
    eqns = [e for e in olympus.make_olympuspr(lambda a: fn(a, precision))(_X).eqns
            if "precision" in e.params]
    assert eqns, user
    expect = (lax.Precision(precision),) * 2 if not isinstance(precision, tuple) \
        else precision
    assert all(e.params["precision"] == expect for e in eqns), user


def test_precision_enum():
    assert [p.name for p in lax.Precision] == ["DEFAULT", "HIGH", "HIGHEST"]
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert repr(lax.Precision.HIGH) == "Precision.HIGH" and str(lax.Precision.HIGH) == "HIGH"
    text = olympus.jit(lambda a: lax.dot(a, a, precision="highest")).lower(_X).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        jnp.dot(_X, _X, precision="ultra")


def test_dot_preferred_element_type():
    i8 = np.ones((2, 2), np.int8)
    assert jnp.dot(i8, i8, preferred_element_type=jnp.int32).dtype == np.int32
    assert jnp.matmul(i8, i8, preferred_element_type=jnp.float32).dtype == np.float32
    out = olympus.make_olympuspr(lambda a: jnp.dot(a, a, preferred_element_type=jnp.int32))(i8)
    assert not out.out_avals[0].weak_type
