"""The "Just-in-time compilation" page (a MyST notebook): every code cell runs in order."""

from __future__ import annotations

import contextlib
import io
import re
import time

import pytest
from seeds import JIT_PAGE, seed_text

import olympus
from olympus._src import jit as jit_mod

_CELL = re.compile(r"```\{code-cell\}\n(.*?)```", re.S)


def _cells(text):
    out = []
    for body in _CELL.findall(text):
        tags = re.findall(r":tags: \[(.*?)\]", body)
        tags = {t.strip() for t in tags[0].split(",")} if tags else set()
        code = "\n".join(line for line in body.splitlines() if not line.startswith(":tags:"))
        out.append((tags, code))
    return out


def _timeit(expr: str, ns: dict, n: int = 3) -> float:
    """Stand-in for %timeit: a few runs, returning the best time in seconds."""
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        eval(expr, ns)
        best = min(best, time.perf_counter() - t0)
    print(f"{best * 1e6:.1f} us per loop (best of {n})")
    return best


def _translate(code: str) -> str:
    lines = []
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("%xmode"):
            continue
        m = re.match(r"(\s*)%timeit (.*)", line)
        if m:
            line = f"{m.group(1)}_timeit({m.group(2)!r}, globals())"
        lines.append(line)
    return "\n".join(lines)


@pytest.fixture(scope="module")
def page():
    cells = _cells(seed_text(JIT_PAGE))
    assert len(cells) >= 12
    ns: dict = {"_timeit": _timeit, "__name__": "jit_page"}
    results = []
    for tags, code in cells:
        src = _translate(code)
        buf = io.StringIO()
        before = dict(jit_mod.counters)
        err = None
        with contextlib.redirect_stdout(buf):
            try:
                exec(compile(src, "<jit-page-cell>", "exec"), ns)
            except Exception as e:  # noqa: BLE001 - checked per cell below
                err = e
        delta = {k: jit_mod.counters[k] - before[k] for k in before}
        results.append((tags, code, buf.getvalue(), err, delta))
    _NS.update(ns)
    return results


_NS: dict = {}


def _cell(page, needle):
    for r in page:
        if needle in r[1]:
            return r
    raise AssertionError(f"no cell containing {needle!r}")


def test_every_cell_without_raises_tag_runs(page):
    for tags, code, _out, err, _ in page:
        if "raises-exception" not in tags:
            assert err is None, f"cell failed:\n{code}\n{type(err).__name__}: {err}"


def test_make_olympuspr_prints(page):
    _, _, out, _, _ = _cell(page, "print(olympus.make_olympuspr(log2)(3.0))")
    assert out == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = log a\n"
        "    c:f32[] = log 2.0:f32[]\n"
        "    d:f32[] = div b c\n"
        "  in (d,) }\n"
    )


def test_side_effect_print_happens_at_trace_time_only(page):
    _, _, out, _, _ = _cell(page, "print(olympus.make_olympuspr(log2_with_print)(3.))")
    first, *rest = out.splitlines()
    assert first.startswith("printed x: JitTracer(")
    assert "\n".join(rest) + "\n" == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = log a\n"
        "    c:f32[] = log 2.0:f32[]\n"
        "    d:f32[] = div b c\n"
        "  in (d,) }\n"
    )


def test_only_taken_branch_recorded(page):
    _, _, out, _, _ = _cell(page, "log2_if_rank_2")
    assert out == "{ lambda ; a:i32[3]. let  in (a,) }\n"


def test_raises_exception_cells(page):
    raising = [r for r in page if "raises-exception" in r[0]]
    assert len(raising) == 2
    for _, code, _, err, _ in raising:
        assert isinstance(err, olympus.errors.TracerBoolConversionError), (code, err)
        assert "Attempted boolean conversion of traced array with shape bool[]" in str(err)


def test_static_arguments_print_documented_values(page):
    assert _cell(page, "f_jit_correct = olympus.jit(f, static_argnums=0)")[2] == "10\n"
    assert _cell(page, "g_jit_correct = olympus.jit(g, static_argnames=['n'])")[2] == "30\n"
    assert _cell(page, "def g_jit_decorated")[2] == "30\n"


def test_inner_jitted_loop_value(page):
    ns_cell = _cell(page, "g_inner_jitted(10, 20)")
    assert ns_cell[3] is None


def test_cache_friendly_loop_compiles_once_while_partial_and_lambda_retrace(page):
    # The cell defines three loops and times each; count traces per loop directly.
    import types

    _, code, _, _, _ = _cell(page, "g_inner_jitted_normal")
    ns: dict = {"_timeit": lambda *a, **k: None, "olympus": olympus}
    exec(compile(_translate(code), "<cell>", "exec"), ns)
    for name, expected_min in (("g_inner_jitted_partial", 20), ("g_inner_jitted_lambda", 20)):
        before = jit_mod.counters["trace"]
        assert int(ns[name](10, 20)) == 30
        assert jit_mod.counters["trace"] - before >= expected_min, name
    ns["g_inner_jitted_normal"](10, 20)  # warm
    before = dict(jit_mod.counters)
    assert int(ns["g_inner_jitted_normal"](10, 20)) == 30
    assert jit_mod.counters["trace"] == before["trace"]
    assert jit_mod.counters["compile"] == before["compile"]
    assert isinstance(ns["unjitted_loop_body"], types.FunctionType)


def test_selu_jit_matches_op_by_op_and_numpy(page):
    import numpy as np

    selu, selu_jit = _NS["selu"], _NS["selu_jit"]
    x = olympus.numpy.arange(1000, dtype=olympus.numpy.float32) / 100 - 5
    xn = np.asarray(x)
    expected = 1.05 * np.where(xn > 0, xn, 1.67 * np.exp(xn) - 1.67)
    np.testing.assert_allclose(np.asarray(selu_jit(x)), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(selu(x)), expected, rtol=1e-5, atol=1e-6)
    big = _NS["x"]
    assert big.shape == (1000000,) and big.dtype == np.int32
    np.testing.assert_allclose(np.asarray(selu_jit(big))[:5], [0, 1.05, 2.1, 3.15, 4.2],
                               rtol=1e-6)
