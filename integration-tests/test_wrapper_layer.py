"""One lax wrapper layer: outside it, only the rule modules and the transformation
machinery bind a primitive.

`olympus_trace.lax_ops` holds one module of thin, strict wrappers per IR family; everything
else (olympus.numpy, olympus.random, olympus.debug, olympus.lax's composites, ...) calls
those wrappers. This test scans every package's source for calls of olympus-trace's `bind`
(however it was imported) and fails on one outside the places listed in ALLOWED. It also
checks that `olympus.lax` exports exactly its public API: names ``jax.lax`` has, and no
leaked helpers (`P`, `np`, `bind`, ...).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = REPO / "packages"

#: Where binding a primitive is allowed, as paths relative to packages/ (a trailing "/" is
#: a directory), each with the reason.
ALLOWED = {
    "olympus-trace/src/olympus_trace/lax_ops/": "the wrapper layer itself",
    "olympus-trace/src/olympus_trace/ad_rules/": "JVP/transpose rules re-bind their primitive",
    "olympus-trace/src/olympus_trace/batching_rules/": "batching rules re-bind their primitive",
    "olympus-trace/src/olympus_trace/core.py": "defines bind",
    "olympus-trace/src/olympus_trace/ad.py": "the JVP trace and transposition",
    "olympus-trace/src/olympus_trace/batching.py": "the batch trace",
    "olympus-trace/src/olympus_trace/hi_primitives.py":
        "a user's high-level primitive binds its equation on the low-level arrays, and its "
        "reverse mode binds the linearized equation (machinery, as custom_vjp's)",
    "olympus-trace/src/olympus_trace/olympuspr_utils.py":
        "eval_olympuspr re-binds each equation's primitive",
    "olympus/src/olympus/_src/eager.py":
        "the eager rule for a primitive bound outside any trace jits the one-primitive "
        "function, which re-binds it with its params (machinery)",
    "olympus/src/olympus/_src/custom_derivatives.py":
        "custom_jvp/custom_vjp/checkpoint trace the user's function and bind their call "
        "primitives (machinery, not a wrapper of one primitive)",
    "olympus/src/olympus/experimental/checkify.py":
        "checkify evaluates a traced olympuspr equation by equation, re-binding each "
        "equation's primitive with its params (an interpreter, like eval_olympuspr)",
    "olympus/src/olympus/_src/nested_jit.py":
        "a jitted function called under a trace binds the jit primitive with its traced "
        "olympuspr (machinery, not a wrapper of one primitive)",
    "olympus/src/olympus/_src/ref_discharge.py":
        "the ref discharge re-evaluates an olympuspr equation by equation, re-binding each "
        "ref-free equation's primitive with its params (an interpreter, like eval_olympuspr)",
    "olympus/src/olympus/experimental/sparse/transform.py":
        "sparsify evaluates a traced olympuspr equation by equation, re-binding each "
        "equation without a sparse operand (an interpreter, like eval_olympuspr)",
    "olympus/src/olympus/random/_physical.py":
        "key programs are rewritten to their key data before lowering by re-evaluating the "
        "olympuspr equation by equation, re-binding each primitive with key-data operands "
        "(an interpreter, like eval_olympuspr)",
    "olympus/src/olympus/experimental/jet.py":
        "the jet trace (Taylor mode) is a transformation: its rules re-bind each primitive "
        "on primals and Taylor coefficients, as the JVP and batch traces do",
    "olympus/src/olympus/_src/shard_map_eager.py":
        "the eager shard_map trace applies each primitive of the body to every device's "
        "block by re-binding it inside a one-primitive shard_map (a trace, like the batch "
        "trace)",
    "olympus/src/olympus/lax/control_flow.py":
        "cond/while_loop/scan trace the user's bodies into sub-olympusprs and bind the "
        "control-flow primitives (machinery, not a wrapper of one primitive)",
}

#: The modules that define olympus-trace's `bind`.
CORE_MODULES = {"olympus_trace", "olympus_trace.core"}


def python_files(root: Path) -> list[Path]:
    skip = {"__pycache__", "build", "dist"}
    return [p for p in sorted(root.rglob("*.py"))
            if not any(part.startswith(".") or part in skip
                       for part in p.relative_to(root).parts[:-1])]


def _module_name(path: Path) -> str | None:
    """`olympus_trace.ad_rules.elementwise` for .../src/olympus_trace/ad_rules/elementwise.py."""
    parts = path.parts
    if "src" not in parts:
        return None
    rel = list(parts[parts.index("src") + 1:])
    rel[-1] = rel[-1][:-3]
    if rel[-1] == "__init__":
        rel.pop()
    return ".".join(rel)


def _resolve(module: str | None, level: int, here: str | None, is_package: bool) -> str:
    """The absolute module of ``from <level dots><module> import ...`` written in `here`."""
    if level == 0 or here is None:
        return module or ""
    base = here.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([module] if module else []))


def bind_calls(source: str, module: str | None = None, is_package: bool = False) -> list[int]:
    """Line numbers of the calls of olympus-trace's `bind` in `source` (the code of
    `module`): `bind(...)` after ``from olympus_trace[.core] import bind [as b]``, and
    ``core.bind(...)`` / ``olympus_trace.bind(...)`` on an imported core module. Other
    methods called `bind` (``inspect.Signature.bind``) are not counted."""
    tree = ast.parse(source)
    bind_names: set[str] = set()
    core_aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            src = _resolve(node.module, node.level, module, is_package)
            for alias in node.names:
                if src in CORE_MODULES and alias.name == "bind":
                    bind_names.add(alias.asname or "bind")
                if f"{src}.{alias.name}" in CORE_MODULES:
                    core_aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in CORE_MODULES:
                    core_aliases.add(alias.asname or alias.name.split(".")[0])
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in bind_names:
            lines.append(node.lineno)
        elif isinstance(f, ast.Attribute) and f.attr == "bind":
            root = f.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in core_aliases:
                lines.append(node.lineno)
    return sorted(lines)


def _allowed(rel: str) -> bool:
    return any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in ALLOWED)


def violations(packages: Path = PACKAGES) -> list[str]:
    found = []
    for path in python_files(packages):
        rel = path.relative_to(packages).as_posix()
        if "/src/" not in rel or _allowed(rel):
            continue
        module = _module_name(path)
        for line in bind_calls(path.read_text(encoding="utf-8"), module,
                               path.name == "__init__.py"):
            found.append(f"{rel}:{line}")
    return found


def test_no_primitive_is_bound_outside_the_wrapper_layer():
    found = violations()
    assert not found, (
        "bind() of a primitive outside the lax wrapper layer; call the wrapper in "
        "olympus_trace.lax_ops.<family> instead (or, for new machinery, add the file to "
        "ALLOWED with the reason):\n" + "\n".join(found))


def test_allowed_places_exist():
    for rel in ALLOWED:
        assert (PACKAGES / rel).exists(), rel


# --- the scanner flags what it should (planted sources) -------------------------------------

PLANTED = '''
from olympus_ir import primitives as P
from olympus_trace.core import bind
from olympus_trace import core as C
import olympus_trace.core
from olympus_trace.core import bind as b2
import inspect

def f(x):
    sig = inspect.signature(f).bind(x)      # not a primitive bind
    y = bind(P.sin_p, x)                    # line 11
    z = C.bind(P.cos_p, y)                  # line 12
    w = olympus_trace.core.bind(P.exp_p, z) # line 13
    return b2(P.neg_p, w)                   # line 14
'''


def test_scanner_flags_planted_binds():
    assert bind_calls(PLANTED) == [11, 12, 13, 14]


def test_scanner_resolves_relative_imports():
    src = "from ..core import bind\n\ndef g(x):\n    return bind(P.sin_p, x)\n"
    assert bind_calls(src, "olympus_trace.lax_ops.elementwise") == [4]
    assert bind_calls(src, "olympus_trace.lax_ops", is_package=True) == [4]
    # the same relative import elsewhere is not olympus-trace's core
    assert bind_calls(src, "olympus.numpy._sorting") == []
    assert bind_calls("import inspect\ninspect.signature(len).bind([])\n") == []


def test_violations_reports_a_planted_file(tmp_path):
    pkg = tmp_path / "olympus" / "src" / "olympus" / "numpy"
    pkg.mkdir(parents=True)
    (pkg / "_planted.py").write_text(
        "from olympus_ir import primitives as P\nfrom olympus_trace.core import bind\n\n\n"
        "def f(x):\n    return bind(P.sort_p, x, dimension=0, is_stable=True, num_keys=1)\n")
    (pkg / "_clean.py").write_text("from olympus_trace import lax_ops as lax\n\n\n"
                                   "def f(x):\n    return lax.sort(x)\n")
    allowed = tmp_path / "olympus-trace" / "src" / "olympus_trace" / "ad_rules"
    allowed.mkdir(parents=True)
    (allowed / "x.py").write_text("from ..core import bind\n\n\ndef r(x):\n"
                                  "    return bind(P.sin_p, x)\n")
    assert violations(tmp_path) == ["olympus/src/olympus/numpy/_planted.py:6"]


# --- olympus.lax exports its API and nothing else --------------------------------------------

#: The public names of ``jax.lax`` in jax 0.10.2 (recorded from the reference install:
#: ``sorted(n for n in dir(jax.lax) if not n.startswith("_"))``).
JAX_LAX_NAMES = set("""
AccuracyMode ConvDimensionNumbers ConvGeneralDilatedDimensionNumbers DotAlgorithm
DotAlgorithmPreset DotDimensionNumbers FftType GatherDimensionNumbers GatherScatterMode
Precision PrecisionLike RaggedDotDimensionNumbers RandomAlgorithm RoundingMethod
ScatterDimensionNumbers Tolerance abs abs_p acos acos_p acosh acosh_p add add_p after_all
after_all_p all_gather all_gather_p all_to_all all_to_all_p and_p approx_max_k approx_min_k
approx_top_k_p argmax argmax_p argmin argmin_p asin asin_p asinh asinh_p associative_scan
atan atan2 atan2_p atan_p atanh atanh_p axis_index axis_index_p axis_size batch_matmul
bessel_i0e bessel_i0e_p bessel_i1e bessel_i1e_p betainc bitcast_convert_type
bitcast_convert_type_p bitwise_and bitwise_not bitwise_or bitwise_xor broadcast
broadcast_in_dim broadcast_in_dim_p broadcast_like broadcast_shapes broadcast_to_rank
broadcasted_iota cbrt cbrt_p ceil ceil_p clamp clamp_p clz clz_p collapse complex complex_p
composite concatenate concatenate_p cond cond_p conj conj_p conv conv_dimension_numbers
conv_general_dilated conv_general_dilated_local conv_general_dilated_p
conv_general_dilated_patches conv_general_permutations conv_general_shape_tuple
conv_shape_tuple conv_transpose conv_transpose_shape_tuple conv_with_general_padding
convert_element_type convert_element_type_p copy_p cos cos_p cosh cosh_p create_token
create_token_p cumlogsumexp cumlogsumexp_p cummax cummax_p cummin cummin_p cumprod cumprod_p
cumsum cumsum_p custom_linear_solve custom_root dce_sink dce_sink_p device_put_p digamma
digamma_p div div_p dot dot_general dot_general_p dtype dynamic_index_in_dim dynamic_slice
dynamic_slice_in_dim dynamic_slice_p dynamic_update_index_in_dim dynamic_update_slice
dynamic_update_slice_in_dim dynamic_update_slice_p empty eq eq_p eq_to_p erf erf_inv
erf_inv_p erf_p erfc erfc_p exp exp2 exp2_p exp_p expand_dims expm1 expm1_p fft fft_p floor
floor_p fori_loop full full_like gather gather_p ge ge_p gt gt_p igamma igamma_grad_a
igamma_grad_a_p igamma_p igammac igammac_p imag imag_p index_in_dim index_take integer_pow
integer_pow_p iota iota_p is_finite is_finite_p le le_p le_to_p lgamma lgamma_p linalg
linear_solve_p log log1p log1p_p log_p logistic logistic_p lt lt_p lt_to_p map max max_p min
min_p mul mul_p mulhi mulhi_p ne ne_p neg neg_p nextafter nextafter_p not_p
optimization_barrier optimization_barrier_p or_p pad pad_p padtype_to_pads pbroadcast pcast
platform_dependent pmax pmax_p pmean pmin pmin_p polygamma polygamma_p population_count
population_count_p pow pow_p ppermute ppermute_p precv psend pshuffle psum psum_p
psum_scatter pswapaxes ragged_all_to_all ragged_all_to_all_p ragged_dot ragged_dot_general
random_gamma_grad real real_p reciprocal reduce reduce_and reduce_and_p reduce_max
reduce_max_p reduce_min reduce_min_p reduce_or reduce_or_p reduce_p reduce_precision
reduce_precision_p reduce_prod reduce_prod_p reduce_sum reduce_sum_p reduce_window
reduce_window_max_p reduce_window_min_p reduce_window_p reduce_window_shape_tuple
reduce_window_sum_p reduce_xor reduce_xor_p regularized_incomplete_beta_p rem rem_p reshape
reshape_p rev rev_p rng_bit_generator rng_bit_generator_p rng_uniform rng_uniform_p round
round_p rsqrt rsqrt_p scaled_dot scan scan_p scatter scatter_add scatter_add_p scatter_apply
scatter_max scatter_max_p scatter_min scatter_min_p scatter_mul scatter_mul_p scatter_p
scatter_sub scatter_sub_p select select_and_gather_add_p select_and_scatter_add_p
select_and_scatter_p select_n select_n_p shape_as_value sharding_constraint_p shift_left
shift_left_p shift_right_arithmetic shift_right_arithmetic_p shift_right_logical
shift_right_logical_p sign sign_p sin sin_p sinh sinh_p slice slice_in_dim slice_p sort
sort_key_val sort_p split split_p sqrt sqrt_p square square_p squeeze squeeze_p stack
stack_p stage stage_p stop_gradient stop_gradient_p sub sub_p switch tan tan_p tanh tanh_p
tile tile_p top_k top_k_p transpose transpose_p unstack unstack_p while_loop while_p
with_sharding_constraint xor_p zeta zeta_p
""".split())

#: olympus.lax names jax.lax does not have, with the reason.
OLYMPUS_ONLY = {
    "regularized_incomplete_beta": "JAX's betainc under the name of its primitive; kept "
                                   "for existing users",
}


def test_olympus_lax_exports_public_wrappers_only():
    import olympus.lax as lax

    names = set(lax.__all__)
    assert len(names) == len(lax.__all__), "duplicates in olympus.lax.__all__"
    assert names - JAX_LAX_NAMES == set(OLYMPUS_ONLY)
    for name in names:
        assert hasattr(lax, name), name
    public = {n for n in dir(lax) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(lax, n)).__name__ == "module"}
    assert public - modules == names - {"linalg"}, sorted((public - modules) ^ (names - {"linalg"}))
    for leak in ("P", "np", "bind", "stop_gradient_p_bind", "builtins", "dtypes", "get_aval",
                 "Tracer", "Any", "annotations"):
        assert not hasattr(lax, leak), leak


#: The public names of ``jax.lax.linalg`` in jax 0.10.2 (recorded from the reference
#: install: ``sorted(n for n in dir(jax.lax.linalg) if not n.startswith("_"))``).
JAX_LAX_LINALG_NAMES = set("""
EigImplementation EighImplementation SvdAlgorithm cholesky cholesky_p cholesky_update
cholesky_update_p eig eig_p eigh eigh_p hessenberg hessenberg_p householder_product
householder_product_p lu lu_p lu_pivots_to_permutation lu_pivots_to_permutation_p ormqr
ormqr_p qdwh qr qr_p schur schur_p svd svd_p symmetric_product symmetric_product_p
triangular_solve triangular_solve_p tridiagonal tridiagonal_p tridiagonal_solve
tridiagonal_solve_p
""".split())


def test_olympus_lax_linalg_exports_its_api_only():
    import olympus.lax.linalg as linalg

    public = {n for n in dir(linalg) if not n.startswith("_")}
    assert public == set(linalg.__all__)
    assert set(linalg.__all__) - {"symmetrize"} <= JAX_LAX_LINALG_NAMES


@pytest.mark.parametrize("family", [
    "callbacks", "checks", "collectives", "convolution", "cumulative", "elementwise",
    "indexing", "linalg", "linalg_lapack", "random", "reductions", "shape_ops", "sharding",
    "sorting", "sparse", "windowed"])
def test_each_wrapper_module_is_an_ir_family_with_an_explicit_all(family):
    import importlib
    import importlib.util

    mod = importlib.import_module(f"olympus_trace.lax_ops.{family}")
    assert isinstance(mod.__all__, list) and mod.__all__
    for name in mod.__all__:
        assert hasattr(mod, name), (family, name)
    assert importlib.util.find_spec(f"olympus_ir.prims.{family}") is not None


def test_wrapper_modules_cover_the_families_with_wrappers():
    import pkgutil

    import olympus_trace.lax_ops as lax_ops

    modules = {m.name for m in pkgutil.iter_modules(lax_ops.__path__)}
    # control flow and the custom-derivative calls trace Python functions: their API lives
    # in olympus.lax.control_flow and olympus's custom_derivatives (see ALLOWED); the
    # control_flow wrapper module holds call_exported (olympus.export's call), which traces
    # nothing, and the family's body-less primitives (optimization_barrier).
    assert modules == {"callbacks", "checks", "collectives", "composite", "control_flow",
                       "convolution", "cumulative", "dce_sink", "elementwise", "ffi",
                       "indexing", "linalg", "linalg_lapack", "random", "reductions", "refs",
                       "shape_ops", "sharding", "sorting", "sparse", "special", "tokens",
                       "transfers", "windowed", "xla_metadata"}
