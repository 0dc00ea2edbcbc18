"""Run one bad-input case in this process and write its outcome as JSON.

    python -m instruments.badinput.child {olympus|jax} CASE_ID OUT.json

Started by the runner in a fresh process per case (a crash must not take the others with
it). The outcome is the value of the case's last expression (summarized: dtype, shape, weak
type and values of arrays; types of other objects) or the exception it raised. A crash or
a hang leaves no file: the runner classifies it from the exit status or the timeout.
"""

from __future__ import annotations

import ast
import json
import math
import os
import sys

MAX_VALUES = 256


def _num(v):
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)  # 'nan', 'inf', '-inf'
    return v


def summarize(v, depth: int = 0):
    """A JSON-able, library-neutral description of a case's value."""
    if depth > 20:
        return {"kind": "deep"}
    if v is None or isinstance(v, (bool, int, str)):
        if isinstance(v, str) and len(v) > 300:
            return {"kind": "str", "len": len(v)}
        return {"kind": "py", "type": type(v).__name__, "value": v}
    if isinstance(v, float):
        return {"kind": "py", "type": "float", "value": _num(v)}
    if isinstance(v, complex):
        return {"kind": "py", "type": "complex", "value": [_num(v.real), _num(v.imag)]}
    if isinstance(v, type):
        return {"kind": "type", "name": v.__name__}
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return _array(v)
    if type(v).__name__ == "dtype" or type(v).__name__.startswith("dtype["):
        return {"kind": "dtype", "value": str(v)}
    if isinstance(v, (tuple, list)):
        return {"kind": "seq", "items": [summarize(x, depth + 1) for x in v][:64]}
    if isinstance(v, dict):
        return {"kind": "dict", "items": {str(k): summarize(x, depth + 1)
                                          for k, x in list(v.items())[:64]}}
    return {"kind": "object", "type": type(v).__name__}


def _array(v):
    import numpy as np

    out = {"kind": "array", "dtype": str(v.dtype), "shape": list(v.shape),
           "weak": bool(getattr(v, "weak_type", False))}
    try:
        a = np.asarray(v)
    except Exception as e:  # noqa: BLE001 - e.g. a key array: values are not comparable
        out["values"] = f"unavailable ({type(e).__name__})"
        return out
    if a.size > MAX_VALUES:
        out["values"] = "too many"
        return out
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
        flat = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64).ravel().tolist()
        out["values"] = [[_num(x.real), _num(x.imag)] if isinstance(x, complex) else _num(x)
                         for x in flat]
    elif a.dtype.kind in "biu":
        out["values"] = [int(x) for x in a.ravel().tolist()]
    else:
        out["values"] = f"unavailable (dtype kind {a.dtype.kind})"
    return out


def _block(value) -> None:
    """Wait for asynchronous results, so a runtime error belongs to this case."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif hasattr(v, "block_until_ready"):
            try:
                v.block_until_ready()
            except AttributeError:
                pass


def run(lib: str, case_id: str) -> dict:
    from .cases import CASES, PRELUDE, translate

    case = {c.id: c for c in CASES}[case_id]
    source = PRELUDE + case.source
    if lib == "jax":
        source = translate(source)
    tree = ast.parse(source)
    ns: dict = {"__name__": "__badinput__"}
    try:
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            head = ast.Module(body=tree.body[:-1], type_ignores=[])
            exec(compile(head, "<case>", "exec"), ns)  # noqa: S102 - the corpus is ours
            value = eval(compile(ast.Expression(tree.body[-1].value), "<case>", "eval"), ns)
        else:
            exec(compile(tree, "<case>", "exec"), ns)  # noqa: S102
            value = None
        _block(value)
        return {"outcome": "value", "value": summarize(value)}
    except BaseException as e:  # noqa: BLE001 - every exception is an outcome
        if isinstance(e, SystemExit):
            raise
        return {"outcome": "error", "type": type(e).__name__, "module": type(e).__module__,
                "message": str(e)[:4000]}


def main() -> None:
    lib, case_id, out = sys.argv[1:4]
    result = run(lib, case_id)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, out)  # atomic: a half-written file never looks like an outcome
    # The interpreter then exits normally: a crash during teardown is a crash too.


if __name__ == "__main__":
    main()
