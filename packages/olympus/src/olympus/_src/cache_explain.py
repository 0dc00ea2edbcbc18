"""Why a jitted function was traced again: ``olympus_explain_cache_misses`` and
``jit(f).cache_info()``.

With the option on, every trace of a jitted function logs (WARNING, logger
``olympus._src.cache_explain``) where the call came from and why no compiled signature
fit: the first trace of a function; a *new function object* whose code was traced before
(a ``lambda`` or ``functools.partial`` made anew, e.g. in a loop: each is a different
function to the cache); or, against the closest signature held, each argument (by pytree
path) whose shape, dtype or weak type changed, each changed static argument, a changed
argument structure, changed jit options, and changed config options (x64,
``debug_nans``, dtype promotion, ...).

``cache_info()`` reports the function's hits, misses (traces), and the signatures it
holds. Misses and signatures are exact; repeat calls are normally answered by jaxlib's
C++ fast path without Python, so hits are counted exactly while the option is on (a hook
counts the fast path's calls then) and otherwise only for calls that reached Python.
"""

from __future__ import annotations

import functools
import inspect
import logging
import weakref
from typing import Any, NamedTuple

from olympus_trace import tree_util
from olympus_trace.staging import _SKIP_DIRS, user_source_info

from .config import _JIT_KEY_NAMES

__all__ = ["CacheInfo", "explain_miss", "cache_info", "count_fast_path_hit"]

logger = logging.getLogger("olympus._src.cache_explain")

#: (file, first line, name) of a function's code -> [how many function objects with that
#: code were traced, a weak reference to the last one].
_seen: dict[tuple, list] = {}


class CacheInfo(NamedTuple):
    """``jit(f).cache_info()``: `hits`, `misses` (traces), `currsize` (signatures held),
    `maxsize` (the bound shared by every jitted function), `signatures` (one line each)."""

    hits: int
    misses: int
    currsize: int
    maxsize: int
    signatures: tuple[str, ...]


def _underlying(fun):
    f = inspect.unwrap(fun) if callable(fun) else fun
    while isinstance(f, functools.partial):
        f = f.func
    return f


def _code_key(fun) -> tuple | None:
    code = getattr(_underlying(fun), "__code__", None)
    if code is None:
        return None
    return (code.co_filename, code.co_firstlineno, code.co_name)


def _internal(fun) -> bool:
    """A function of Olympus itself (the jits behind eager operations)."""
    code = getattr(_underlying(fun), "__code__", None)
    return code is not None and any(code.co_filename.startswith(d) for d in _SKIP_DIRS)


def _defined_at(fun) -> str:
    f = _underlying(fun)
    name = getattr(fun, "__name__", None) or getattr(f, "__name__", type(fun).__name__)
    if isinstance(inspect.unwrap(fun) if callable(fun) else fun, functools.partial):
        name = f"functools.partial of {name}"
    code = getattr(f, "__code__", None)
    if code is None:
        return name
    return f"{name} defined at {code.co_filename}:{code.co_firstlineno}"


def _parts(jitted, key: tuple) -> dict[str, Any]:
    """A signature key's parts (see `Jitted._signature`)."""
    has_static = bool(jitted._static_argnums or jitted._static_argnames)
    options, x64, device, jit_key, tree = key[:5]
    rest = key[5:]
    mesh = None
    if getattr(jitted, "_mesh_key", False):  # the current mesh ends the key
        rest, mesh = rest[:-1], rest[-1]
    statics = kw_statics = ()
    if has_static:
        statics, kw_statics, rest = rest[0], rest[1], rest[2:]
    return {"options": options, "x64": x64, "device": device, "mesh": mesh,
            "jit_key": jit_key, "tree": tree, "statics": statics, "kw_statics": kw_statics,
            "avals": rest}


def _aval_text(a) -> str:
    return a.str_short(short_dtypes=True) + ("{weak_type=True}" if a.weak_type else "")


def _aval_change(a, b) -> str:
    changes = []
    if a.shape != b.shape:
        changes.append("shape")
    if a.dtype != b.dtype:
        changes.append("dtype")
    if a.weak_type != b.weak_type:
        changes.append("weak type")
    what = " and ".join(changes) or "type"
    note = (" (a Python scalar is weakly typed, an array is not)"
            if changes == ["weak type"] else "")
    return f"{what} changed: now {_aval_text(a)}, before {_aval_text(b)}{note}"


def _tree_change(jitted, now, before) -> str:
    """Where two argument structures ``((args...), {kwargs})`` first differ."""
    try:
        (a_args, a_kw), (b_args, b_kw) = now.children(), before.children()
        for i, (x, y) in enumerate(zip(a_args.children(), b_args.children())):
            if x != y:
                return (f"structure of argument {_positional_name(jitted, i)} changed: now "
                        f"{x}, before {y}")
        if a_args.num_nodes != b_args.num_nodes or len(a_args.children()) != len(
                b_args.children()):
            return (f"number of positional arguments changed: now "
                    f"{len(a_args.children())}, before {len(b_args.children())}")
        if a_kw != b_kw:
            return f"keyword arguments changed: now {a_kw}, before {b_kw}"
    except Exception:  # pragma: no cover - an unusual treedef: show both whole
        pass
    return f"argument structure changed: now {now}, before {before}"


def _differences(jitted, now: dict, before: dict, names: list[str]) -> list[str]:
    out = []
    if now["options"] != before["options"]:
        out.append("jit options (static/donated arguments, keep_unused) changed")
    if now["x64"] != before["x64"]:
        out.append(f"olympus_enable_x64 changed: now {now['x64']}, before {before['x64']}")
    if now["device"] != before["device"]:
        out.append(f"the default device changed: now {now['device']}, before "
                   f"{before['device']}")
    if now["mesh"] != before["mesh"]:
        out.append(f"the current mesh changed: now {now['mesh']}, before {before['mesh']}")
    for name, a, b in zip(_JIT_KEY_NAMES, now["jit_key"], before["jit_key"]):
        if a != b:
            out.append(f"config option {name} changed: now {a!r}, before {b!r}")
    # The jit_key part ends with the current abstract mesh (its axis types shape types).
    if now["jit_key"][-1:] != before["jit_key"][-1:]:
        out.append(f"the current abstract mesh changed: now {now['jit_key'][-1]}, before "
                   f"{before['jit_key'][-1]}")
    for (i, a), (_, b) in zip(now["statics"], before["statics"]):
        if a != b:
            out.append(f"static argument {_positional_name(jitted, i)} changed: now {a!r}, "
                       f"before {b!r}")
    if dict(now["kw_statics"]) != dict(before["kw_statics"]):
        na, nb = dict(now["kw_statics"]), dict(before["kw_statics"])
        for k in sorted(set(na) | set(nb)):
            a = repr(na[k]) if k in na else "not given"
            b = repr(nb[k]) if k in nb else "not given"
            if a != b:
                out.append(f"static argument {k} changed: now {a}, before {b}")
    if now["tree"] != before["tree"]:
        out.append(_tree_change(jitted, now["tree"], before["tree"]))
    else:
        for name, a, b in zip(names, now["avals"], before["avals"]):
            if a != b:
                out.append(f"argument {name}: {_aval_change(a, b)}")
    return out


def _positional_name(jitted, i: int) -> str:
    try:
        params = list(inspect.signature(jitted._fun).parameters)
        return params[i] if 0 <= i < len(params) else f"args[{i}]"
    except (TypeError, ValueError):
        return f"args[{i}]"


def _leaf_names(jitted, args: tuple, kwargs: dict) -> list[str]:
    nums, names = jitted._static_argnums, jitted._static_argnames
    n = len(args)
    nums = {i % n if -n <= i < 0 else i for i in nums}
    try:
        params = list(inspect.signature(jitted._fun).parameters)
    except (TypeError, ValueError):
        params = []
    out = []
    for i, a in enumerate(args):
        if i in nums:
            continue
        base = params[i] if i < len(params) else f"args[{i}]"
        for path, _ in tree_util.tree_flatten_with_path(a)[0]:
            out.append(base + tree_util.keystr(path))
    for k in sorted(k for k in kwargs if k not in names):
        for path, _ in tree_util.tree_flatten_with_path(kwargs[k])[0]:
            out.append(k + tree_util.keystr(path))
    return out


def explain_miss(jitted, key: tuple, args: tuple, kwargs: dict) -> None:
    """Log why `key` missed `jitted`'s signature cache (see the module docstring)."""
    fun = jitted._fun
    if _internal(fun):
        return
    src = user_source_info()
    where = "unknown" if src is None else f"{src.file}:{src.line} ({src.function})"
    lines = [f"TRACING CACHE MISS at {where}:"]
    held = list(jitted._calls)
    if not held:
        ck = _code_key(fun)
        seen = _seen.setdefault(ck, [0, None]) if ck is not None else [0, None]
        last = seen[1]() if seen[1] is not None else None
        same = last is fun
        others = seen[0] - same
        if not same:
            try:
                ref = weakref.ref(fun)
            except TypeError:  # not weakly referenceable: count it each time
                ref = None
            seen[0], seen[1] = seen[0] + 1, ref
        if others:
            lines.append(f"  a new function object: {_defined_at(fun)} (traced before as "
                         f"{others} other function object(s) with the same code).")
            lines.append("  Each new function object (a lambda or functools.partial created "
                         "anew, e.g. inside a loop) is a different function to the cache and "
                         "is traced and compiled again: create it once and reuse it.")
        else:
            lines.append(f"  first trace of {_defined_at(fun)}")
    else:
        now = _parts(jitted, key)
        names = _leaf_names(jitted, args, kwargs)
        best, best_score = None, None
        for old in reversed(held):  # the newest first: it wins ties
            if len(old) != len(key) and _parts(jitted, old)["tree"] == now["tree"]:
                continue
            diffs = _differences(jitted, now, _parts(jitted, old), names)
            score = sum(1 + d.count(" and ") for d in diffs)
            if best is None or score < best_score:
                best, best_score = diffs, score
        lines.append(f"  for {_defined_at(fun)}: none of the {len(held)} signature(s) held "
                     "matches. Against the closest one:")
        lines += [f"  * {d}" for d in (best or ["(no difference found in the signature)"])]
    logger.warning("\n".join(lines))


def signature_text(jitted, call) -> str:
    parts = [f"{n}: {a}" for n, a in zip(call.arg_names, call.in_avals)]
    return f"{call.name}({', '.join(parts)})"


def cache_info(jitted, maxsize: int) -> CacheInfo:
    calls = jitted._calls
    sigs = []
    for key, call in list(calls.items()):
        text = signature_text(jitted, call)
        p = _parts(jitted, key)
        statics = [f"{_positional_name(jitted, i)}={v!r}" for i, v in p["statics"]]
        statics += [f"{k}={v!r}" for k, v in p["kw_statics"]
                    if k not in {_positional_name(jitted, i) for i, _ in p["statics"]}]
        if statics:
            text = text[:-1] + (", " if call.arg_names else "") + ", ".join(statics) + ")"
        sigs.append(text)
    return CacheInfo(calls.hits, calls.misses, len(calls), maxsize, tuple(sigs))


def count_fast_path_hit(fun, args, kwargs, out) -> None:
    """jaxlib's post-call hook (installed while ``olympus_explain_cache_misses`` is on):
    a call the C++ fast path answered is a hit."""
    state = getattr(fun, "_olympus_jit", None)
    if state is not None:
        state._calls.hits += 1
