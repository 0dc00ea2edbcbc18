"""Record reference JAX's type rules and integer edge semantics for the fuzzer.

Run with reference JAX's interpreter (never in a process that imports olympus), from the
repository root::

    benchmarks/.venv-jax/bin/python -m instruments.fuzz.record_jax_rules

It writes ``instruments/fuzz/jax_rules.json``:

- ``rules``: for every op of `ops.OPS`, parameter key and argument types the fuzzer can
  generate, the result type key (dtype plus ``w`` if weakly typed) or ``!ErrorName`` when
  JAX rejects the combination. Found with ``jax.eval_shape`` (types only; Python scalars
  are closed over as literals, as the fuzzer's programs write them). Identical tables are
  stored once (``tables``) and named by index.
- ``special``: JAX's values where XLA's semantics differ from NumPy's (integer division and
  remainder by zero, shifts out of range, integer powers with negative exponents,
  out-of-range indices, lax.dynamic_slice starts, var/std with ddof >= n): the evidence for
  the rules in `value_types`, checked by ``test_fuzz_harness.py``.
"""

from __future__ import annotations

import itertools
import json
import sys
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from . import ops as ops_mod
from . import value_types as vt
from .ops import COND_BODIES, DTYPE_REDUCTIONS, LOOP_BODIES, REDUCTION_DTYPES

OUT = Path(__file__).resolve().parent / "jax_rules.json"
NAMESPACE = {"jnp": jnp, "lax": jax.lax, "np": np, "olympus": jax}
LITERALS = {"py:bool": True, "py:int": 3, "py:float": 2.5}
ARRAYS = vt.STRONG + vt.WEAK

#: Index expressions by parameter key, for a (2, 2) array (`i` is a traced int32 scalar).
INDEX_KINDS = {
    "basic": "1, ::-1",
    "none": "None, ..., 0",
    "array": "np.array([1, 0])",
    "mask": "np.array([True, False])",
    "traced": "i",
}


def _struct(key: str, shape):
    return jax.ShapeDtypeStruct(shape, vt.np_dtype(vt.dtype_of(key)), weak_type=vt.is_weak(key))


def result_key(source: str, keys: tuple[str, ...], shapes, extra: dict | None = None) -> str:
    """The type key of `source` (an expression over a0, a1, ...; literal Python scalars
    substituted), or "!ErrorName"."""
    names, structs, subst = [], [], {}
    for i, (k, shape) in enumerate(zip(keys, shapes)):
        if vt.is_py(k):
            subst[f"a{i}"] = repr(LITERALS[k])
        else:
            names.append(f"a{i}")
            structs.append(_struct(k, shape))
    for name, lit in subst.items():
        source = source.replace("{" + name + "}", lit)
    for name in names:
        source = source.replace("{" + name + "}", name)
    extra_names = list(extra or {})
    fn = eval(f"lambda {', '.join(names + extra_names)}: {source}", dict(NAMESPACE))
    extra_structs = list((extra or {}).values())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = jax.eval_shape(fn, *structs, *extra_structs)
        except Exception as e:  # noqa: BLE001 - the error type is what is recorded
            return "!" + type(e).__name__
    out = jax.tree_util.tree_leaves(out)[0]
    key = vt.make_key(vt.dtype_name(out.dtype), bool(getattr(out, "weak_type", False)))
    # A combination JAX accepts with a FutureWarning (e.g. an unsafe scatter cast) is marked
    # with "~": the fuzzer does not generate it.
    return key + ("~" if any(issubclass(w.category, (FutureWarning, DeprecationWarning))
                             for w in caught) else "")


def _render(op, n_args: int, params: dict[str, str]) -> str:
    return op.render([f"{{a{i}}}" for i in range(n_args)], params)


def record_rules() -> dict[str, dict[str, str]]:
    rules: dict[str, dict[str, str]] = {}

    def put(op_name, pkey, keys, src, shapes, extra=None):
        if not ops_mod.OPS[op_name].accepts(keys):
            return
        rules.setdefault(f"{op_name}|{pkey}", {})[",".join(keys)] = result_key(
            src, keys, shapes, extra)

    v2 = (2,)
    for op in ops_mod.OPS.values():
        if op.family == "unary":
            for k in vt.TYPES:
                put(op.name, "", (k,), _render(op, 1, {}), [v2])
        elif op.family == "binary":
            for a, b in itertools.product(vt.TYPES, repeat=2):
                put(op.name, "", (a, b), _render(op, 2, {}), [v2, v2])
        elif op.name == "where":
            for c, a, b in itertools.product(("bool", "float32", "py:bool"),
                                             vt.TYPES, vt.TYPES):
                put(op.name, "", (c, a, b), _render(op, 3, {}), [v2] * 3)
        elif op.name == "clip":
            for a in ARRAYS:
                for lo, hi in itertools.product(("py:int", "py:float", a), repeat=2):
                    put(op.name, "", (a, lo, hi), _render(op, 3, {}), [v2, (), ()])
        elif op.name == "lax.select":
            for a in vt.TYPES:
                put(op.name, "", ("bool", a, a), _render(op, 3, {}), [v2] * 3)
        elif op.family == "reduction":
            dtypes = REDUCTION_DTYPES if op.name in DTYPE_REDUCTIONS else (None,)
            for k, d in itertools.product(ARRAYS, dtypes):
                params = {"dtype": None if d is None else f"jnp.{d}"}
                put(op.name, f"dtype={d}" if d else "", (k,), _render(op, 1, params),
                    [(2, 2)])
        elif op.family == "shape":
            _record_shape_op(op, put)
        elif op.family == "index":
            _record_index_op(op, put)
        elif op.family == "linalg":
            params = {"subscripts": repr("ij,jk->ik")}
            for a, b in itertools.product(ARRAYS, repeat=2):
                put(op.name, "", (a, b), _render(op, 2, params), [(2, 2), (2, 2)])
        elif op.family == "control":
            _record_control_op(op, put)
        else:
            raise AssertionError(f"no recording rule for {op.name} ({op.family})")
    return rules


SHAPE_PARAMS = {
    "reshape": {"shape": "(4,)"}, "reshape_method": {"shape": "(4,)"},
    "transpose": {}, "T": {}, "swapaxes": {"axis1": "0", "axis2": "1"},
    "moveaxis": {"source": "0", "destination": "1"}, "expand_dims": {"axis": "0"},
    "squeeze": {}, "broadcast_to": {"shape": "(3, 2, 2)"}, "flip": {}, "ravel": {},
    "roll": {"shift": "1"}, "tile": {"reps": "2"}, "repeat": {"repeats": "2"},
    "lax.reshape": {"new_sizes": "(4,)"}, "lax.transpose": {"permutation": "(1, 0)"},
    "lax.rev": {"dimensions": "(0,)"}, "lax.squeeze": {"dimensions": "()"},
    "lax.expand_dims": {"dimensions": "(0,)"},
    "lax.broadcast_in_dim": {"shape": "(3, 2, 2)", "broadcast_dimensions": "(1, 2)"},
    "lax.slice": {"start_indices": "(0, 0)", "limit_indices": "(1, 2)"},
}


def _record_shape_op(op, put):
    if op.name in SHAPE_PARAMS:
        for k in ARRAYS:
            put(op.name, "", (k,), _render(op, 1, SHAPE_PARAMS[op.name]), [(2, 2)])
    elif op.name == "lax.pad":
        for k in ARRAYS:
            for pv in ("py:int", "py:float", "py:bool", k):
                put(op.name, "", (k, pv), _render(op, 2, {"padding_config":
                                                          "((1, 0, 0), (0, 1, 1))"}),
                    [(2, 2), ()])
    elif op.name in ("concatenate", "stack", "lax.concatenate"):
        for a, b in itertools.product(ARRAYS, repeat=2):
            put(op.name, "", (a, b), _render(op, 2, {"axis": "0"}), [(2, 2), (2, 2)])
    elif op.name in ("astype", "jnp.astype", "lax.convert_element_type"):
        param = "dtype" if op.name != "lax.convert_element_type" else "new_dtype"
        for k, d in itertools.product(ARRAYS, vt.STRONG):
            put(op.name, f"dtype={d}", (k,), _render(op, 1, {param: f"jnp.{d}"}), [(2, 2)])
    else:
        raise AssertionError(f"no recording rule for shape op {op.name}")


def _record_index_op(op, put):
    traced = {"i": jax.ShapeDtypeStruct((), np.int32)}
    if op.name == "getitem":
        for k, (kind, index) in itertools.product(ARRAYS, INDEX_KINDS.items()):
            put(op.name, kind, (k,), _render(op, 1, {"index": index}), [(2, 2)],
                traced if kind == "traced" else None)
    elif op.name in ("at_set", "at_add"):
        for k, v in itertools.product(ARRAYS, vt.TYPES):
            for kind, index in INDEX_KINDS.items():
                if kind in ("none", "mask"):
                    continue
                put(op.name, kind, (k, v), _render(op, 2, {"index": index}), [(2, 2), ()],
                    traced if kind == "traced" else None)
    elif op.name == "lax.dynamic_slice":
        for k in ARRAYS:
            put(op.name, "", (k,), _render(op, 1, {"starts": "(1, 0)",
                                                     "slice_sizes": "(1, 2)"}), [(2, 2)])
    elif op.name == "lax.dynamic_update_slice":
        for a, b in itertools.product(ARRAYS, repeat=2):
            put(op.name, "", (a, b), _render(op, 2, {"starts": "(1, 0)"}), [(2, 2), (1, 2)])
    else:
        raise AssertionError(f"no recording rule for index op {op.name}")


def body_source(body: str, carry: str, other: str) -> str:
    return ops_mod.OPS[body].render([carry, other], {})


def _record_control_op(op, put):
    if op.name == "cond":
        for k, body in itertools.product(vt.TYPES, COND_BODIES):
            src = ops_mod.OPS[body].render(["c"], {})
            put(op.name, f"body={body}", ("py:bool", k),
                _render(op, 2, {"true_src": src, "false_src": src}), [(), (2,)])
        return
    for body in LOOP_BODIES:
        for carry, other in itertools.product(vt.TYPES, (*vt.TYPES, "i")):
            if op.name == "fori_loop":
                params = {"lower": "0", "upper": "2",
                          "body_src": body_source(body, "c", "i" if other == "i" else "{a1}")}
                if other == "i":
                    put(op.name, f"body={body}", (carry, "i"),
                        _render(op, 1, params), [(2,)])
                    continue
            elif other == "i":
                continue
            elif op.name == "while_loop":
                params = {"trips": "2", "body_src": body_source(body, "c[1]", "{a1}")}
            else:  # scan: the operand is xs, whose slices x the body sees
                if vt.is_py(other):
                    continue
                params = {"which": "0", "body_src": body_source(body, "c", "x")}
            shapes = [(2,), (3, 2) if op.name == "scan" else (2,)]
            put(op.name, f"body={body}", (carry, other), _render(op, 2, params), shapes)


def record_special() -> dict:
    """Values of the integer edge cases, by op and dtype: lists of [x, y, result]."""
    special: dict = {}
    for dt in ("int8", "uint8", "int16", "uint16", "int32", "uint32"):
        info = np.iinfo(dt)
        xs = sorted({info.min, info.min + 1, -3, -2, -1, 0, 1, 2, 3, 100, info.max - 1,
                     info.max})
        xs = [v for v in xs if info.min <= v <= info.max]
        ys = [0] + ([-1] if info.min < 0 else [])
        shifts = [-1, 0, 1, info.bits - 1, info.bits, info.bits + 1, 100]
        shifts = [s for s in shifts if info.min <= s <= info.max]
        pairs = [(x, y) for x in xs for y in ys]
        for name, fn, these in (
            ("floor_divide", jnp.floor_divide, pairs), ("remainder", jnp.remainder, pairs),
            ("fmod", jnp.fmod, pairs), ("lax.div", jax.lax.div, pairs),
            ("lax.rem", jax.lax.rem, pairs),
            ("left_shift", jnp.left_shift, [(x, s) for x in xs for s in shifts]),
            ("right_shift", jnp.right_shift, [(x, s) for x in xs for s in shifts]),
            ("power", jnp.power, [(x, e) for x in xs for e in (
                info.min, info.min + 1, -3, -2, -1, 0, 1, 3, 100, info.max - 1, info.max)
                if info.min <= e <= info.max]),
        ):
            a = np.array([p[0] for p in these], dtype=dt)
            b = np.array([p[1] for p in these], dtype=dt)
            out = np.asarray(fn(a, b)).tolist()
            special.setdefault(name, {})[dt] = [[int(x), int(y), int(r)] for (x, y), r in
                                                zip(these, out)]
    x = jnp.arange(5)
    special["getitem"] = [[i, int(x[i])] for i in (-7, -6, -5, -1, 0, 4, 5, 9)]
    special["getitem_traced"] = [[i, int(jax.jit(lambda x, i: x[i])(x, i))]
                                 for i in (-7, -6, -5, -1, 0, 4, 5, 9)]
    special["at_set"] = [[i, np.asarray(x.at[i].set(-1)).tolist()]
                         for i in (-7, -6, -5, -1, 0, 4, 5, 9)]
    special["dynamic_slice"] = [[s, np.asarray(jax.lax.dynamic_slice(x, (s,), (2,))).tolist()]
                                for s in (-9, -6, -5, -2, -1, 0, 3, 4, 7)]
    special["var_ddof"] = [[n, ddof, _nan(jnp.var(jnp.arange(float(n)) + 1, ddof=ddof))]
                           for n in (0, 1, 2, 3) for ddof in (0, 1, 2, 3, 5)]
    return special


def _nan(x):
    v = float(x)
    return "nan" if v != v else v


def main() -> None:
    assert jax.__version__ == "0.10.2", jax.__version__
    assert not jax.config.jax_enable_x64
    rules = record_rules()
    tables, index, names = [], {}, {}
    for name, table in sorted(rules.items()):
        blob = json.dumps(table, sort_keys=True)
        if blob not in index:
            index[blob] = len(tables)
            tables.append(table)
        names[name] = index[blob]
    data = {"jax_version": jax.__version__, "tables": tables, "rules": names,
            "special": record_special()}
    OUT.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")
    n = sum(len(t) for t in rules.values())
    print(f"wrote {OUT}: {len(rules)} rule tables ({len(tables)} distinct), {n} entries",
          file=sys.stderr)


if __name__ == "__main__":
    main()
