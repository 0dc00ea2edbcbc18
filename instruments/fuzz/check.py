"""Run a fuzzed program eagerly, under jit, under vmap and under grad, and check it.

Every mode returns every step's value, and each step is checked *locally*: its type (dtype
and weak type) against the rule recorded from reference JAX, its shape and values against
the NumPy reference applied to the values this mode produced for the step's arguments. A
rounding difference in one step therefore never cascades into a false mismatch later (an
XLA `exp` one ulp off, then `floor`), and a mismatch names the op that caused it.

- eager: step by step, so an exception names its step.
- jit: the whole function under `jit`; an exception is pinned to a step by jitting
  growing prefixes of the program.
- vmap: the whole function under `vmap` with some array inputs batched (on any axis)
  against a Python loop over the batch: each element's dtypes and shapes must equal the
  loop's, and each element's steps are checked locally (weak types excepted: JAX's own
  vmap is not consistent with its unbatched ops there).
- grad: float64 programs of smooth ops (under `enable_x64`), `grad` of the sum of the last
  step with respect to every array input, against central finite differences of the NumPy
  reference (elements where two step sizes disagree, i.e. the function is not smooth
  there, are skipped).

`lib` is the library module (`olympus`); the same code runs reference JAX programs too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import ops as ops_mod
from . import value_types as vt
from .ops import OPS
from .programs import Program, Step


@dataclass
class Mismatch:
    mode: str  # eager | jit | vmap | grad
    step: int | None  # index into program.steps
    op: str | None
    kind: str  # type | shape | value | error | grad
    detail: str
    error: str | None = None  # exception type name for kind == "error"

    def key(self) -> tuple:
        return (self.mode, self.op, self.kind, self.error)

    def describe(self) -> str:
        where = f"step {self.step} ({self.op})" if self.step is not None else "program"
        return f"[{self.mode}] {where}: {self.kind}: {self.detail}"


def namespace(lib) -> dict:
    return {"np": np, "jnp": lib.numpy, "lax": lib.lax, "olympus": lib}


def make_inputs(prog: Program, lib) -> list:
    jnp = lib.numpy
    out = []
    for i in prog.inputs:
        if vt.is_py(i.key):
            out.append(i.value)
        elif vt.is_weak(i.key):
            out.append(jnp.asarray(np.asarray(i.value).item()))
        else:
            out.append(jnp.asarray(i.value))
    return out


def compile_function(prog: Program, lib, steps=None):
    sub = Program(prog.inputs, prog.steps if steps is None else steps, prog.grad)
    ns = namespace(lib)
    exec(sub.function_source(), ns)  # noqa: S102 - the program is generated source
    return ns["f"]


def actual_key(x) -> str | None:
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        return None
    return vt.make_key(vt.dtype_name(x.dtype), bool(getattr(x, "weak_type", False)))


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"


# ---------------------------------------------------------------- tolerances


def _max_abs(arrays) -> float:
    m = 0.0
    for a in arrays:
        a = np.asarray(a)
        if a.dtype == object or a.size == 0:
            continue
        if a.dtype.kind in "iub":
            a = a.astype(np.float64)
        w = np.abs(ops_mod.widen(a))
        w = w[np.isfinite(w)]
        if w.size:
            m = max(m, float(w.max()))
    return m


def tolerance(step: Step, args: list, dtype: str) -> tuple[float, float]:
    """(rtol, atol) for a float result: one rounding for exact ops; a few ulps (scaled by
    the arguments' magnitude) for XLA's transcendental approximations; error growing with
    the number of terms for reductions, contractions and loops."""
    op = OPS[step.op]
    e = vt.eps(dtype)
    if not op.exact:
        # An argument promoted from a narrower float may be computed on in that precision
        # once XLA fuses the conversion (JAX's jit does the same: hypot(bf16, f32)).
        for a in args:
            name = vt.dtype_name(np.asarray(a).dtype)
            if name in ("float16", "bfloat16"):
                e = max(e, vt.eps(name))
    tiny = float(np.finfo(np.float32).tiny) if dtype != "float64" else 1e-300
    scale = max(1.0, _max_abs(args))
    if op.family == "reduction":
        n = max(1, max((int(np.size(a)) for a in args if np.ndim(a)), default=1))
        if step.op == "prod":
            return 4 * n * e, tiny
        if step.op == "var":
            return 8 * n * e, 8 * n * e * scale**2
        if step.op == "std":
            return 8 * n * e, math.sqrt(8 * n * e) * scale
        return 4 * e, 4 * n * e * scale + tiny
    if op.family == "linalg":
        x, y = args[0], args[1]
        k = max(1, int(np.size(x)))
        return 4 * e, 4 * k * e * max(1.0, _max_abs([x])) * max(1.0, _max_abs([y])) + tiny
    if op.family == "control":
        trips = max(1, int(step.params.get("upper", 0)) - int(step.params.get("lower", 0)),
                    int(step.params.get("trips", 0)),
                    int(np.shape(args[1])[0]) if step.op == "scan" and np.ndim(args[1])
                    else 0)
        return 8 * trips * e, 8 * trips * e * scale + tiny
    if step.op in ("power", "pow_op", "lax.pow"):
        y = _max_abs(args[1:2])
        logx = max(1.0, math.log(max(_max_abs(args[:1]), 1.0)))
        return 8 * e * (1 + y * logx), tiny
    if op.exact:
        return e, tiny
    if step.op in EXP_LIKE:
        # exp(x) turns the argument's rounding (XLA may compute exp2 as exp(x * ln 2) in
        # the narrow dtype) into a relative error of about |x| ulps.
        return 8 * e * scale, tiny
    return 8 * e, 8 * e * scale + tiny


EXP_LIKE = ("exp", "exp2", "expm1", "sinh", "cosh", "lax.exp")


def compare(actual: np.ndarray, expected, dtype: str, rtol: float, atol: float) -> str | None:
    """None if close, else a description of the first bad element."""
    mask = None
    if isinstance(expected, ops_mod.Unspecified):
        mask, expected = expected.mask, expected.value
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != expected {expected.shape}"
    if dtype in vt.FLOATS:
        a = actual.astype(np.float64)
        x = expected.astype(np.float64)
        with np.errstate(all="ignore"):
            ok = (np.isnan(a) & np.isnan(x)) | (a == x) | (np.abs(a - x) <= atol + rtol * np.abs(x))
            if rtol > vt.eps(dtype):  # inexact: a result at the overflow edge may round to inf
                edge = vt.max_finite(dtype) * (1 - 8 * vt.eps(dtype))
                ok |= (np.isinf(x) & (np.abs(a) >= edge) & (np.sign(a) == np.sign(x)))
                ok |= (np.isinf(a) & (np.abs(x) >= edge) & (np.sign(a) == np.sign(x)))
    else:
        ok = actual == expected.astype(actual.dtype)
    if mask is not None:
        ok = ok | np.broadcast_to(mask, ok.shape)
    if np.all(ok):
        return None
    idx = tuple(int(i) for i in np.argwhere(~ok)[0])
    n_bad = int((~ok).sum())
    return (f"{n_bad}/{ok.size} elements differ; at {idx}: got {actual[idx]!r}, "
            f"expected {expected[idx]!r} (rtol={rtol:.3g}, atol={atol:.3g})")


def check_step(mode: str, i: int, step: Step, args: list, actual,
               weak: bool = True) -> Mismatch | None:
    """Type, shape and values of one step's result given the values of its arguments
    (`weak=False`: the dtype only, for the float64 grad programs, whose types are not
    looked up)."""
    key = actual_key(actual)
    if key != step.result.key and (weak or key is None
                                   or key.rstrip("w") != step.result.key.rstrip("w")):
        return Mismatch(mode, i, step.op, "type",
                        f"got {key or type(actual).__name__}, JAX gives {step.result.key}")
    dtype = vt.dtype_of(step.result.key)
    keys = [a.key for a in step.args]
    out = ops_mod.apply(OPS[step.op], args, keys, dtype, step.params)
    rtol, atol = tolerance(step, args, dtype) if dtype in vt.FLOATS else (0.0, 0.0)
    bad = compare(np.asarray(actual), out, dtype, rtol, atol)
    if bad is not None and any(_has_subnormals(a) for a in args):
        # XLA's CPU code may flush subnormal inputs to zero (JAX's results do the same).
        flushed = ops_mod.apply(OPS[step.op], [_flush(a) for a in args], keys, dtype,
                                step.params)
        if compare(np.asarray(actual), flushed, dtype, rtol, atol) is None:
            bad = None
    if bad is not None:
        kind = "shape" if bad.startswith("shape") else "value"
        return Mismatch(mode, i, step.op, kind, bad)
    return None


def _is_float_array(a) -> bool:
    a = np.asarray(a)
    return a.dtype.kind == "f" or a.dtype == vt.np_dtype("bfloat16")


def _has_subnormals(a) -> bool:
    if not _is_float_array(a):
        return False
    a = np.asarray(a)
    tiny = float(np.finfo(np.float32).tiny) if a.dtype.name == "bfloat16" else float(
        np.finfo(a.dtype).tiny)
    w = np.abs(a.astype(np.float64))
    return bool(np.any((w > 0) & (w < tiny)))


def _flush(a):
    if not _has_subnormals(a):
        return a
    a = np.asarray(a)
    tiny = float(np.finfo(np.float32).tiny) if a.dtype.name == "bfloat16" else float(
        np.finfo(a.dtype).tiny)
    return np.where(np.abs(a.astype(np.float64)) < tiny, np.zeros_like(a), a)


def _arg_values(prog: Program, step: Step, env: dict) -> list:
    out = []
    for a in step.args:
        if a.literal:
            out.append(a.ref)
        else:
            v = env[a.name]
            out.append(v if isinstance(v, (bool, int, float)) else np.asarray(v))
    return out


def check_outputs(mode: str, prog: Program, inputs_np: list, outs,
                  weak: bool = True) -> Mismatch | None:
    """The first step whose result (in `outs`, one per step) fails its local check."""
    env = {i.name: v for i, v in zip(prog.inputs, inputs_np)}
    for i, (step, out) in enumerate(zip(prog.steps, outs)):
        m = check_step(mode, i, step, _arg_values(prog, step, env), out,
                       weak and not prog.grad)
        if m is not None:
            return m
        env[step.result.name] = out
    return None


def _inputs_np(prog: Program) -> list:
    return [i.value for i in prog.inputs]


# ---------------------------------------------------------------- modes


def run_eager(prog: Program, lib) -> Mismatch | None:
    ns = namespace(lib)
    for i, v in zip(prog.inputs, make_inputs(prog, lib)):
        ns[i.name] = v
    env = {i.name: v for i, v in zip(prog.inputs, _inputs_np(prog))}
    for k, step in enumerate(prog.steps):
        try:
            val = eval(step.expr(), ns)  # noqa: S307 - generated source
        except Exception as e:  # noqa: BLE001
            return Mismatch("eager", k, step.op, "error", _err(e), type(e).__name__)
        ns[step.result.name] = val
        m = check_step("eager", k, step, _arg_values(prog, step, env), val, not prog.grad)
        if m is not None:
            return m
        env[step.result.name] = val
    return None


def _localize(prog: Program, lib, run) -> int | None:
    """The first step whose prefix program fails with an exception under `run`."""
    for k in range(1, len(prog.steps) + 1):
        try:
            run(compile_function(prog, lib, prog.steps[:k]))
        except Exception:  # noqa: BLE001
            return k - 1
    return None


def run_jit(prog: Program, lib) -> Mismatch | None:
    f = compile_function(prog, lib)
    inputs = make_inputs(prog, lib)
    try:
        outs = lib.jit(f)(*inputs)
    except Exception as e:  # noqa: BLE001
        k = _localize(prog, lib, lambda g: lib.jit(g)(*inputs))
        return Mismatch("jit", k, prog.steps[k].op if k is not None else None, "error",
                        _err(e), type(e).__name__)
    return check_outputs("jit", prog, _inputs_np(prog), outs)


def batched_inputs(prog: Program, lib) -> tuple[list, list]:
    jnp = lib.numpy
    batched, per_example = [], []
    for i, inp, axis in zip(range(len(prog.inputs)), prog.inputs, prog.vmap_axes):
        if axis is None:
            batched.append(make_inputs(Program([inp]), lib)[0])
            per_example.append([inp.value] * prog.vmap_size)
        else:
            values = prog.vmap_values[i]
            batched.append(jnp.asarray(np.stack(values, axis=axis)))
            per_example.append(values)
    return batched, per_example


def run_vmap(prog: Program, lib) -> Mismatch | None:
    if not any(a is not None for a in prog.vmap_axes):
        return None
    f = compile_function(prog, lib)
    batched, per_example = batched_inputs(prog, lib)
    in_axes = tuple(prog.vmap_axes)
    try:
        outs = lib.vmap(f, in_axes=in_axes)(*batched)
    except Exception as e:  # noqa: BLE001
        k = _localize(prog, lib, lambda g: lib.vmap(g, in_axes=in_axes)(*batched))
        return Mismatch("vmap", k, prog.steps[k].op if k is not None else None, "error",
                        _err(e), type(e).__name__)
    for b in range(prog.vmap_size):
        example = [vals[b] for vals in per_example]
        try:
            loop = f(*make_inputs(Program([
                type(i)(i.name, i.key, v) for i, v in zip(prog.inputs, example)]), lib))
        except Exception as e:  # noqa: BLE001
            return Mismatch("vmap", None, None, "error",
                            f"the Python loop (eager) fails on batch element {b}: {_err(e)}",
                            type(e).__name__)
        outs_b = []
        for k, (step, out) in enumerate(zip(prog.steps, outs)):
            ob = out[b] if hasattr(out, "shape") and out.shape else out
            if out.dtype != loop[k].dtype or np.shape(ob) != np.shape(loop[k]):
                return Mismatch("vmap", k, step.op, "type",
                                f"vmap gives {out.dtype}{tuple(np.shape(ob))} per element, "
                                f"the loop {loop[k].dtype}{tuple(np.shape(loop[k]))}")
            outs_b.append(_with_type(np.asarray(ob), out))
        # Weak types are not compared: JAX's own vmap may return a weakly typed result
        # where the unbatched op does not (lax.dynamic_update_slice of a weak operand).
        m = check_outputs("vmap", prog, example, outs_b, weak=False)
        if m is not None:
            m.detail += f" (batch element {b})"
            return m
    return None


class _Typed(np.ndarray):
    """A NumPy view carrying the weak type of the batched array it was sliced from."""

    weak_type = False


def _with_type(a: np.ndarray, src) -> np.ndarray:
    out = a.view(_Typed)
    out.weak_type = bool(getattr(src, "weak_type", False))
    return out


def reference_values(prog: Program, inputs: list) -> list:
    """Every step's NumPy reference value for the given input values (whole program)."""
    env = {i.name: v for i, v in zip(prog.inputs, inputs)}
    out = []
    for step in prog.steps:
        args = [a.ref if a.literal else env[a.name] for a in step.args]
        v = ops_mod.apply(OPS[step.op], args, [a.key for a in step.args],
                          vt.dtype_of(step.result.key), step.params)
        v = v.value if isinstance(v, ops_mod.Unspecified) else v
        env[step.result.name] = v
        out.append(v)
    return out


def _loss_ref(prog: Program, inputs: list) -> float:
    return float(np.sum(reference_values(prog, inputs)[-1]))


def run_grad(prog: Program, lib) -> Mismatch | None:
    """Forward steps checked locally in float64, then grad against finite differences."""
    jnp = lib.numpy
    argnums = tuple(k for k, i in enumerate(prog.inputs) if i.key == "float64")
    if not argnums or not prog.steps:
        return None
    with lib.enable_x64(True):
        m = run_eager(prog, lib)
        if m is not None:
            m.mode = "grad"
            m.detail = "(forward, float64) " + m.detail
            return m
        f = compile_function(prog, lib)

        def loss(*xs):
            return jnp.sum(f(*xs)[-1])

        inputs = make_inputs(prog, lib)
        try:
            grads = lib.grad(loss, argnums=argnums)(*inputs)
        except Exception as e:  # noqa: BLE001
            k = _localize(prog, lib, lambda g: lib.grad(
                lambda *xs: jnp.sum(g(*xs)[-1]), argnums=argnums)(*inputs))
            return Mismatch("grad", k, prog.steps[k].op if k is not None else None, "error",
                            _err(e), type(e).__name__)
    base = [i.value for i in prog.inputs]
    f0 = abs(_loss_ref(prog, base))
    for g, k in zip(grads, argnums):
        g = np.asarray(g)
        if g.dtype != np.float64 or g.shape != np.shape(base[k]):
            return Mismatch("grad", None, None, "type",
                            f"gradient of input {k}: {g.dtype}{g.shape}, expected "
                            f"float64{np.shape(base[k])}")
        for idx in np.ndindex(g.shape):
            fd1 = _central(prog, base, k, idx, 1e-6)
            fd2 = _central(prog, base, k, idx, 2e-6)
            if not (np.isfinite(fd1) and np.isfinite(fd2)):
                continue
            noise = 1e-9 * (1 + f0) / 1e-6
            if abs(fd1 - fd2) > 1e-5 * (1 + abs(fd1)) + 4 * noise:
                continue  # not smooth here (a kink or a jump between the two steps)
            if abs(g[idx] - fd1) > 1e-4 * abs(fd1) + 1e-5 + 4 * noise:
                return Mismatch("grad", None, None, "grad",
                                f"d/d x{k}{list(idx)}: grad gives {g[idx]!r}, finite "
                                f"differences {fd1!r}")
    return None


def _central(prog: Program, base: list, k: int, idx: tuple, rel: float) -> float:
    h = rel * max(1.0, abs(float(base[k][idx])))

    def moved(delta):
        xs = list(base)
        xs[k] = np.array(base[k], copy=True)
        xs[k][idx] += delta
        return _loss_ref(prog, xs)

    with np.errstate(all="ignore"):
        return (moved(h) - moved(-h)) / (2 * h)


def run_all(prog: Program, lib, modes=("eager", "jit", "vmap")) -> list[Mismatch]:
    """Run the program in each mode; the first mismatch of each mode."""
    runners = {"eager": run_eager, "jit": run_jit, "vmap": run_vmap, "grad": run_grad}
    found = []
    for mode in modes:
        m = runners[mode](prog, lib)
        if m is not None:
            found.append(m)
    return found
