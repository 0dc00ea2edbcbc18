"""Random well-typed programs over `olympus.numpy` / `olympus.lax`, as Python source.

A program is a list of inputs and a list of steps; each step applies one op of `ops.OPS`
to earlier values (inputs, step results or Python literals) and names its result. A step
is generated (generators.py) only where reference JAX accepts its argument types (the
recorded rules), so every program is well typed. While building, each step's reference value is computed with
NumPy (so shapes are known for the next step), and its expected type is looked up.

`Program.source()` is the program as a runnable script: the reproducer of a mismatch.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import ops as ops_mod
from . import value_types as vt
from .ops import OPS

RULES_FILE = Path(__file__).resolve().parent / "jax_rules.json"


def load_rules() -> tuple[dict, dict]:
    """(op|param key -> {argument keys: result key}, the recorded special values)."""
    data = json.loads(RULES_FILE.read_text())
    rules: dict[str, dict[str, dict[str, str]]] = {}
    for name, idx in data["rules"].items():
        op, pkey = name.split("|", 1)
        rules.setdefault(op, {})[pkey] = data["tables"][idx]
    return rules, data["special"]


RULES, SPECIAL = load_rules()
#: Steps dropped while generating because the NumPy reference raised (a generator gap).
REFERENCE_SKIPS: Counter = Counter()
ops_mod.RULES.update(RULES)


def rule(op: str, pkey: str, keys) -> str | None:
    """The recorded result type, or None where JAX rejects (or warns about) the types."""
    out = RULES.get(op, {}).get(pkey, {}).get(",".join(keys))
    if out is None or out.startswith("!") or out.endswith("~"):
        return None
    return out


# ---------------------------------------------------------------- source rendering


def dtype_src(name: str) -> str:
    return f"jnp.{name}"


def _scalar_src(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return repr(bool(v))
    if isinstance(v, (int, np.integer)):
        return repr(int(v))
    f = float(v)
    if f != f:
        return "float('nan')"
    if f in (float("inf"), float("-inf")):
        return "float('inf')" if f > 0 else "-float('inf')"
    return repr(f)


def array_src(a: np.ndarray) -> str:
    """NumPy source that rebuilds `a` exactly (dtype included)."""
    a = np.asarray(a)
    dt = vt.dtype_name(a.dtype)
    dts = "jnp.bfloat16" if dt == "bfloat16" else f"np.{dt}"
    if a.size == 0:
        return f"np.zeros({a.shape!r}, dtype={dts})"

    def nest(x):
        if x.ndim == 0:
            return _scalar_src(x.item() if dt != "bfloat16" else float(x))
        return "[" + ", ".join(nest(y) for y in x) + "]"

    return f"np.array({nest(a)}, dtype={dts})"


def py_src(v) -> str:
    return _scalar_src(v)


# ---------------------------------------------------------------- program model


@dataclass
class Value:
    name: str  # source: a variable name, or a literal's source
    key: str  # type key
    ref: Any  # NumPy array (0-d for scalars), or the Python scalar of a literal
    literal: bool = False

    @property
    def shape(self) -> tuple:
        return tuple(np.shape(self.ref))

    @property
    def is_array(self) -> bool:
        return not vt.is_py(self.key)


@dataclass
class Input:
    name: str
    key: str
    value: Any  # NumPy array or Python scalar


@dataclass
class Step:
    op: str
    pkey: str  # parameter key of the type rules
    args: list[Value]
    params: dict[str, Any]  # what the reference needs
    params_src: dict[str, str]  # what the source says
    result: Value

    def expr(self) -> str:
        names = [a.name for a in self.args]
        # Parameter sources may name traced arguments by position ("{2}").
        params = {k: (v.format(*names) if v is not None and "{" in v else v)
                  for k, v in self.params_src.items()}
        return OPS[self.op].render(names, params)


@dataclass
class Program:
    inputs: list[Input] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    grad: bool = False  # built for the grad check (float64, smooth ops)
    # vmap: per input, the batched axis (None: not batched) and the batch's values.
    vmap_axes: list = field(default_factory=list)
    vmap_values: dict = field(default_factory=dict)
    vmap_size: int = 0

    def function_source(self, name: str = "f") -> str:
        lines = [f"def {name}({', '.join(i.name for i in self.inputs)}):"]
        for s in self.steps:
            lines.append(f"    {s.result.name} = {s.expr()}")
        lines.append(f"    return ({''.join(s.result.name + ', ' for s in self.steps)})")
        return "\n".join(lines)

    def input_source(self, i: Input) -> str:
        if vt.is_py(i.key):
            return py_src(i.value)
        if vt.is_weak(i.key):
            return f"jnp.asarray({py_src(np.asarray(i.value).item())})"
        return f"jnp.asarray({array_src(i.value)})"

    def source(self, mode: str = "eager") -> str:
        """A runnable script: imports, inputs, the function, and the call of `mode`."""
        head = ["import numpy as np", "import olympus", "import olympus.numpy as jnp",
                "from olympus import lax", ""]
        if self.grad:
            head.insert(4, "olympus.config.update('olympus_enable_x64', True)")
        body = [f"{i.name} = {self.input_source(i)}" for i in self.inputs]
        args = ", ".join(i.name for i in self.inputs)
        call = {"eager": f"f({args})", "jit": f"olympus.jit(f)({args})"}.get(mode)
        if mode == "vmap":
            for k, (i, axis) in enumerate(zip(self.inputs, self.vmap_axes)):
                if axis is not None:
                    stacked = np.stack(self.vmap_values[k], axis=axis)
                    body.append(f"{i.name} = jnp.asarray({array_src(stacked)})  # batched")
            call = f"olympus.vmap(f, in_axes={tuple(self.vmap_axes)!r})({args})"
        elif mode == "grad":
            nums = tuple(k for k, i in enumerate(self.inputs) if i.key == "float64")
            call = (f"olympus.grad(lambda *xs: jnp.sum(f(*xs)[-1]), argnums={nums!r})"
                    f"({args})")
        return "\n".join(head + body + ["", self.function_source(), "", f"print({call})", ""])

    def size(self) -> int:
        return len(self.steps) * 1000 + sum(int(np.size(i.value)) for i in self.inputs)

    def op_names(self) -> list[str]:
        return [s.op for s in self.steps]


# ---------------------------------------------------------------- value strategies

NICE_FLOATS = (0.0, 1.0, -1.0, 0.5, -2.5, 2.0, 3.0, 0.25, -0.75, 8.0, 1.5, -4.0)
SPECIAL_FLOATS = (float("nan"), float("inf"), -float("inf"), -0.0, 1e4, -3e4, 1e-3, 123.456,
                  65504.0, 7.0e-6)
PY_LITERALS = {
    "py:int": (0, 1, 2, 3, 7, 100),
    "py:float": (0.5, -1.5, 2.0, 3.25, 0.0, 1e3),
    "py:bool": (True, False),
}


class Builder:
    """Draws a program step by step. Every choice comes from `rnd`, a `random.Random` that
    hypothesis seeds (so a run is reproducible from its seed): choices are uniform, where
    hypothesis's own integer draws lean strongly to the first option."""

    def __init__(self, rnd, grad: bool = False, max_steps: int = 4):
        self.rnd, self.grad = rnd, grad
        self.program = Program(grad=grad)
        self.values: list[Value] = []
        self.max_steps = max_steps

    # -- choices
    def choice(self, seq):
        seq = list(seq)
        return seq[self.rnd.randrange(len(seq))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rnd.randint(lo, hi)

    def permutation(self, seq) -> list:
        seq = list(seq)
        return self.rnd.sample(seq, len(seq))

    def coin(self, p: float = 0.5) -> bool:
        return self.rnd.random() < p

    # -- values
    def element(self, dtype: str):
        if self.grad and dtype in vt.FLOATS:
            return self.rnd.uniform(-2.0, 2.0)
        if dtype == "bool":
            return self.coin()
        if dtype in vt.INTS:
            info = np.iinfo(vt.np_dtype(dtype))
            if self.coin(0.85):
                return self.integer(max(info.min, -5), min(info.max, 9))
            return self.choice((int(info.min), int(info.max), int(info.max) // 2 + 1,
                                int(info.min) + 1))
        r = self.integer(0, 99)
        if r < 60:
            return self.choice(NICE_FLOATS)
        if r < 90:
            return float(np.float32(self.rnd.uniform(-100, 100)))
        return self.choice(SPECIAL_FLOATS)

    def array(self, dtype: str, shape: tuple) -> np.ndarray:
        n = int(np.prod(shape)) if shape else 1
        flat = [self.element(dtype) for _ in range(n)]
        with np.errstate(all="ignore"):
            return np.array(flat, dtype=vt.np_dtype(dtype)).reshape(shape)

    def shape(self, max_rank: int = 3) -> tuple:
        rank = self.integer(0, max_rank)
        return tuple(self.choice((1, 2, 3, 2, 4, 0) if self.coin(0.1) else (1, 2, 3, 2, 4))
                     for _ in range(rank))

    def new_input(self, key: str, shape: tuple = ()) -> Value:
        name = f"x{len(self.program.inputs)}"
        if vt.is_py(key):
            value = self.choice(PY_LITERALS[key])
            ref = value
        elif vt.is_weak(key):
            value = self.element(vt.dtype_of(key))
            if vt.kind(key) == "i":
                value = int(value)
            ref = np.asarray(value, dtype=vt.np_dtype(vt.dtype_of(key)))
            value = ref
        else:
            value = self.array(vt.dtype_of(key), shape)
            ref = value
        self.program.inputs.append(Input(name, key, value))
        v = Value(name, key, ref)
        self.values.append(v)
        return v

    def literal(self, key: str, choices=None) -> Value:
        v = self.choice(choices or PY_LITERALS[key])
        key = {bool: "py:bool", int: "py:int", float: "py:float"}[type(v)]
        return Value(py_src(v), key, v, literal=True)

    def scalar_operand(self, key: str, choices=None) -> Value:
        """A Python scalar: a literal in the source, or sometimes a program input (traced
        as a weakly typed scalar under jit)."""
        if self.coin(0.25) and choices is None:
            return self.new_input(key)
        return self.literal(key, choices)

    def array_key(self) -> str:
        if self.grad:
            return "float64"
        return self.choice(vt.STRONG + vt.STRONG[1:] + vt.WEAK)

    def keys(self, candidates) -> list[str]:
        """Candidate type keys (a grad program's arrays are all float64)."""
        return ["float64"] if self.grad else list(candidates)

    def pick_array(self, pred=lambda v: True) -> Value | None:
        found = [v for v in self.values if v.is_array and pred(v)
                 and (not self.grad or v.key == "float64")]
        if not found:
            return None
        return self.choice(found)

    def operand_like(self, key: str, shape: tuple, choices=None, fresh_p: float = 0.5) -> Value:
        """A value of type `key` and exactly `shape`: an existing one or a new input."""
        if vt.is_py(key):
            return self.scalar_operand(key, choices)
        if vt.is_weak(key) and shape != ():
            key = vt.dtype_of(key)  # a weak input is a scalar
        if not self.coin(fresh_p):
            v = self.pick_array(lambda v: v.key == key and v.shape == shape)
            if v is not None:
                return v
        return self.new_input(key, shape)

    # -- steps
    def add_step(self, op: str, pkey: str, args: list[Value], params=None, params_src=None,
                 result_key: str | None = None) -> Value | None:
        keys = [a.key for a in args]
        if result_key is None:
            result_key = self.type_of(op, pkey, keys)
        if result_key is None:
            return None
        if (op in ops_mod.WEAK_FOR_SCALARS and not self.grad
                and all(vt.is_weak(k) for k in keys)
                and all(np.ndim(a.ref) == 0 for a in args)):
            # The recorded rules come from (2,)-shaped operands; on rank-0 weak operands
            # JAX 0.10.2 keeps these functions' results weak (recorded by hand).
            result_key = vt.make_key(vt.dtype_of(result_key), True)
        params, params_src = params or {}, params_src or {}
        refs = [a.ref for a in args]
        try:
            out = ops_mod.apply(OPS[op], refs, keys, vt.dtype_of(result_key), params)
        except Exception as e:  # noqa: BLE001 - counted, shown by the fuzz report
            REFERENCE_SKIPS[f"{op}: {type(e).__name__}: {e}"[:200]] += 1
            return None
        ref = out.value if isinstance(out, ops_mod.Unspecified) else out
        name = f"v{len(self.program.inputs) + len(self.program.steps)}"
        result = Value(name, result_key, np.asarray(ref))
        self.program.steps.append(Step(op, pkey, list(args), params, params_src, result))
        self.values.append(result)
        return result

    def type_of(self, op: str, pkey: str, keys) -> str | None:
        if self.grad:
            return "float64"
        return rule(op, pkey, keys)

    def usable(self, op: str, pkey: str, keys) -> bool:
        o = OPS[op]
        if self.grad and not o.smooth:
            return False
        return o.accepts(tuple(keys)) and self.type_of(op, pkey, keys) is not None
