"""The olympuspr pretty-printer: the same text as JAX 0.10.2 prints for the same jaxpr.

    { lambda ; a:i32[] b:i32[]. let
        c:i32[] = mul 2:i32[] a
        d:i32[] = add c b
      in (d,) }

An olympuspr becomes a `layout` document laid out in 80 columns: a short (sub-)olympuspr
stays on one line (``{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }``, equations
separated by ``; ``), an equation's params break onto their own lines when it is too long.
Variables are named a, b, ..., z, ba, ... in order of appearance (an equation's results
before the sub-olympusprs in its params); a result of a top-level equation that nothing
reads prints as ``_`` and takes no name (JAX's printer does the same; the IR keeps the
variable). A sub-olympuspr used more than once, or one with more than 10 equations, is
printed once before the olympuspr as ``let olympuspr = { ... } in`` and referred to by name.

Params print as ``name=value`` sorted by name, where a name holding ``olympuspr`` sorts as
if it said ``jaxpr`` (so the text equals JAX's after renaming). For the same reason a text
holding ``olympus`` counts as JAX's shorter text when deciding where lines break. A
primitive may register a print rule (`pp_eqn_rules`, usually through `def_pp_params`) next
to its definition, to hide params JAX does not show or print them differently.

Most equations fit on their line: each is offered as its one-line text, and its document
is only built when that does not fit (`layout.lazy`), which keeps printing big olympusprs
fast.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import layout as pp
from .core import ClosedOlympuspr, DropVar, Eqn, Literal, Olympuspr, Primitive, Var

__all__ = [
    "PpContext", "PpSettings", "pp_eqn_rules", "def_pp_params", "default_pp_eqn",
    "pp_eqn", "pp_olympuspr", "pp_toplevel", "name_vars", "encode_name",
]


class PpSettings(NamedTuple):
    """What to print (the keyword arguments of `Olympuspr.pretty_print`)."""

    print_shapes: bool = True
    source_info: bool = False
    name_stack: bool = False
    custom_pp_eqn_rules: bool = True
    print_effects: bool = False
    source_map: bool = False  # mark where each equation's text starts and ends


_DEFAULT_SETTINGS = PpSettings()


def encode_name(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba, 27 -> bb (base 26 with a as zero)."""
    if n < len(_NAMES):
        return _NAMES[n]
    s = ""
    while True:
        n, r = divmod(n, 26)
        s = chr(97 + r) + s
        if n == 0:
            return s


_NAMES: list[str] = []
_NAMES.extend(encode_name(i) for i in range(26 * 26 * 4))


class PpContext:
    """Variable names (unique across nested olympusprs) and the shared sub-olympusprs.

    Callable like a naming function: ``ctx(v)`` is `v`'s printed name (a literal prints as
    ``1.0:f32[]``) and ``ctx.binder(v)`` is ``name:type``.
    """

    __slots__ = ("var_names", "shared", "shared_names", "_count", "sharding_types",
                 "vma_types")

    def __init__(self, var_names: dict[Var, str] | None = None):
        self.var_names: dict[Var, str] = dict(var_names) if var_names else {}
        self.shared: dict[Olympuspr, str] = {}
        self.shared_names: set[str] = set()
        self._count = 0
        self.sharding_types: dict[Var, tuple] = {}  # of the olympusprs printed so far
        self.vma_types: dict[Var, tuple] = {}

    def type_text(self, v: Any) -> str:
        """``f32[3]``; ``f32[6@x]`` for a value whose dimension 0 is split over the
        Explicit mesh axis x, ``f32[1]{V:i}`` for one varying over the manual axis i
        (JAX's text for sharding and varying axes in types)."""
        text = self._sharded_text(v)
        vma = self.vma_types.get(v) if self.vma_types else None
        if vma:
            text += "{V:" + (vma[0] if len(vma) == 1 else f"({','.join(vma)})") + "}"
        return text

    def _sharded_text(self, v: Any) -> str:
        spec = self.sharding_types.get(v) if self.sharding_types else None
        text = _aval_text(v.aval)
        if not spec or not any(spec):
            return text
        i = text.find("[")
        j = text.find("]", i)
        dims = []
        for k, d in enumerate(v.aval.shape):
            axes = spec[k] if k < len(spec) else None
            if axes is None or axes == ():
                dims.append(str(d))
            elif isinstance(axes, str):
                dims.append(f"{d}@{axes}")
            else:
                dims.append(f"{d}@({','.join(axes)})" if len(axes) > 1 else f"{d}@{axes[0]}")
        return f"{text[:i + 1]}{','.join(dims)}{text[j:]}"

    def name(self, v: Var) -> str:
        name = self.var_names.get(v)
        if name is None:
            while True:
                name = encode_name(self._count)
                self._count += 1
                if name not in self.shared_names:
                    break
            name = self.var_names[v] = name + v.suffix
        return name

    def __call__(self, v: Any) -> str:
        name = self.var_names.get(v)
        if name is not None:
            return name
        if isinstance(v, Literal):
            return _literal_text(v)
        if isinstance(v, DropVar):
            return "_"
        return self.name(v)

    def binder(self, v: Var) -> str:
        return f"{self(v)}:{self.type_text(v)}"

    def suggest_same_names(self, for_vars: Sequence[Any], like_vars: Sequence[Any]) -> None:
        """Name each still unnamed variable of `for_vars` as its partner in `like_vars`
        (naming that one now if needed), skipping literals and partners already used: a
        call's callee variables print as the caller's operands and results."""
        if len(for_vars) != len(like_vars):
            return
        used: set = set()
        for f, like in zip(for_vars, like_vars):
            if (isinstance(like, Var) and like not in used and isinstance(f, Var)
                    and not isinstance(f, DropVar) and f not in self.var_names):
                used.add(like)
                self.var_names[f] = self(like)


#: primitive -> rule(eqn, context, settings) -> layout document of the equation.
pp_eqn_rules: dict[Primitive, Callable[[Eqn, PpContext, PpSettings], pp.Doc]] = {}


def def_pp_params(*prims: Primitive, name: str | None = None):
    """Register `fn(eqn) -> printed params` as the print rule of `prims`.

    `fn` returns the params to print as a dict (printed sorted by name), or ``(params,
    order)`` to print them in the order of the names in `order`. It must not mutate
    ``eqn.params`` (copy it: ``dict(eqn.params)``). `name` replaces the primitive's name in
    the text. Sub-olympusprs among the printed params count when deciding which are shared.
    """

    def register(fn: Callable[[Eqn], Any]):
        def rule(eqn: Eqn, context: PpContext, settings: PpSettings) -> pp.Doc:
            params, order = _printed(fn, eqn)
            return default_pp_eqn(eqn.replace(params=params), context, settings, order, name)

        rule.printed_params = fn
        for p in prims:
            pp_eqn_rules[p] = rule
        return fn

    return register


def _printed(fn: Callable[[Eqn], Any], eqn: Eqn) -> tuple[dict[str, Any], Any]:
    out = fn(eqn)
    return out if isinstance(out, tuple) else (out, None)


def _literal_text(v: Literal) -> str:
    if v.py is not None:
        return f"{v.py}:{_aval_text(v.aval)}"
    val = v.val
    if isinstance(val, (np.ndarray, np.generic)):
        text = str(val.item()) if val.shape == () else "[...]"
    else:
        text = str(np.asarray(val).item()) if np.shape(val) == () else "[...]"
    return f"{text}:{_aval_text(v.aval)}"


_aval_texts: dict[Any, str] = {}


def _aval_text(aval: Any) -> str:
    """``f32[3]``, memoized (avals are few and their text is asked for often)."""
    try:
        return _aval_texts[aval]
    except KeyError:
        pass
    except TypeError:  # an unhashable aval
        return aval.str_short()
    s = aval.str_short()
    if len(_aval_texts) < 4096:
        _aval_texts[aval] = s
    return s


def _jtext(s: str, annotation: str | None = None) -> pp.Doc:
    """Text that may hold Olympus's names: it counts for the width of JAX's text (jax for
    olympus, jaxpr for olympuspr: 4 columns less each), so that lines break where JAX's
    do and the text equals JAX's after renaming."""
    n = s.count("olympus")
    return pp.text(s, annotation, len(s) - 4 * n if n else None)


def _var_doc(v: Any, context: PpContext) -> pp.Doc:
    if isinstance(v, Literal):
        return pp.text(_literal_text(v))
    if isinstance(v, DropVar):
        return pp.text("_")
    return pp.text(context.name(v))


def pp_vars(vs: Sequence[Any], context: PpContext, *, separator: str = "",
            print_shapes: bool = False) -> pp.Doc:
    """Names (with ``:type`` if `print_shapes`) separated by `separator` and a break, as a
    group: on one line if they fit. Names are given now, in order."""
    flat = _vars_flat(vs, context, separator, print_shapes)
    return pp.lazy(flat, lambda: _vars_doc(vs, context, separator, print_shapes))


def _vars_flat(vs: Sequence[Any], context: PpContext, separator: str,
               print_shapes: bool) -> str:
    if print_shapes:
        return (separator + " ").join([f"{context(v)}:{context.type_text(v)}" for v in vs])
    return (separator + " ").join([context(v) for v in vs])


def _vars_doc(vs: Sequence[Any], context: PpContext, separator: str,
              print_shapes: bool) -> pp.Doc:
    if print_shapes:
        docs = [_var_doc(v, context) + pp.type_annotation(pp.text(":" + context.type_text(v)))
                for v in vs]
    else:
        docs = [_var_doc(v, context) for v in vs]
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), docs)))


_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def _is_olympuspr(x: Any) -> bool:
    return isinstance(x, (Olympuspr, ClosedOlympuspr))


def _param_text(v: Any) -> str:
    t = type(v)
    if t is bool or t is int or v is None:
        return str(v)
    if isinstance(v, frozenset):
        return f"frozenset({{{', '.join(repr(e) for e in sorted(v))}}})"
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name  # a scalar type stands for its dtype
    s = str(v)
    if " at 0x" in s:
        s = _ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), s)
    return s


def pp_kv_pair(k: str, v: Any, context: PpContext, settings: PpSettings) -> pp.Doc:
    if isinstance(v, (tuple, list)) and all(_is_olympuspr(x) for x in v):
        value = pp_olympusprs(v, context, settings)
    elif _is_olympuspr(v):
        value = pp_olympuspr_doc(v, context, settings)
    else:
        value = _jtext(_param_text(v))
    return _jtext(f"{k}=") + value


_OLYMPUSPR_TYPES = frozenset({Olympuspr, ClosedOlympuspr})


def _holds_olympuspr(v: Any) -> bool:
    t = type(v)
    if t in _OLYMPUSPR_TYPES:
        return True
    if t is tuple or t is list:
        types = _OLYMPUSPR_TYPES
        for x in v:
            if type(x) in types:
                return True
    return False


def pp_kv_pairs(pairs: Sequence[tuple[str, Any]], context: PpContext,
                settings: PpSettings) -> pp.Doc:
    """``[k1=v1 k2=v2]`` on one line if it fits, else one pair per line."""
    if not pairs:
        return pp.nil()
    if not any(_holds_olympuspr(v) for _, v in pairs):
        flat = "[" + " ".join([f"{k}={_param_text(v)}" for k, v in pairs]) + "]"
        n = flat.count("olympus")
        return pp.lazy(flat, lambda: _kv_doc(pairs, context, settings),
                       len(flat) - 4 * n if n else None)
    return _kv_doc(pairs, context, settings)


def _kv_doc(pairs: Sequence[tuple[str, Any]], context: PpContext,
            settings: PpSettings) -> pp.Doc:
    items = pp.join(pp.brk(), [
        pp_kv_pair(k, v, context, settings) if _holds_olympuspr(v)
        else _jtext(f"{k}={_param_text(v)}") for k, v in pairs])
    return pp.group(pp.concat([
        pp.nest(2, pp.concat([pp.text("["), pp.brk(""), items])),
        pp.brk(""), pp.text("]"),
    ]))


def param_sort_key(name: str) -> str:
    """Params sort by name, with ``olympuspr`` read as ``jaxpr`` (JAX's order)."""
    return name.replace("olympuspr", "jaxpr")


def _summarize(src: Any) -> str:
    if src is None:
        return "unknown"
    return f"{src.file}:{src.line} ({src.function})"


def default_pp_eqn(eqn: Eqn, context: PpContext, settings: PpSettings,
                   params: Sequence[str] | None = None, name: str | None = None) -> pp.Doc:
    """``outs = prim[params] ins``: the layout of an equation without a print rule.

    `params` gives the names to print and their order (default: all, sorted); `name` the
    printed primitive name (default: the primitive's).
    """
    if params is None:
        params = sorted(eqn.params, key=param_sort_key)
    ps = eqn.params
    pairs = [(p, ps[p]) for p in params]
    prim = eqn.primitive.name if name is None else name
    shapes = settings.print_shapes
    # Results are named before the params' sub-olympusprs, as JAX names them.
    lhs_flat = _vars_flat(eqn.outvars, context, "", shapes)
    if any(_holds_olympuspr(v) for _, v in pairs):
        lhs = pp.lazy(lhs_flat, lambda: _vars_doc(eqn.outvars, context, "", shapes))
        kv = _kv_doc(pairs, context, settings)
        return _eqn_doc(eqn, context, settings, prim, lhs, kv, pp_vars(eqn.invars, context))
    kv_flat = "[" + " ".join([f"{k}={_param_text(v)}" for k, v in pairs]) + "]" if pairs else ""
    ins_flat = _vars_flat(eqn.invars, context, "", False)

    def build() -> pp.Doc:
        lhs = pp.lazy(lhs_flat, lambda: _vars_doc(eqn.outvars, context, "", shapes))
        n = kv_flat.count("olympus")
        kv = pp.lazy(kv_flat, lambda: _kv_doc(pairs, context, settings),
                     len(kv_flat) - 4 * n) if pairs else pp.nil()
        ins = pp.lazy(ins_flat, lambda: _vars_doc(eqn.invars, context, "", False))
        return _eqn_doc(eqn, context, settings, prim, lhs, kv, ins)

    if settings.source_info or settings.name_stack or settings.source_map:
        return build()  # annotated (or marked): no one-line form to offer
    # The whole equation on its line when it fits (most do): its parts are all groups.
    flat = (f"{lhs_flat} = {prim}{kv_flat} {ins_flat}" if eqn.outvars
            else f"{prim}{kv_flat} {ins_flat}")
    n = flat.count("olympus")
    return pp.lazy(flat, build, len(flat) - 4 * n if n else None)


def _eqn_doc(eqn: Eqn, context: PpContext, settings: PpSettings, prim: str, lhs: pp.Doc,
             kv: pp.Doc, ins: pp.Doc) -> pp.Doc:
    annotation = _summarize(eqn.source_info) if settings.source_info else None
    # Olympus records no name stacks: an annotated equation shows the empty one.
    name_stack = "[]" if settings.name_stack else None
    rhs = [_jtext(prim, name_stack), kv, pp.text(" "), ins]
    if eqn.outvars:
        return pp.concat([lhs, pp.text(" = ", annotation), *rhs])
    return pp.concat(rhs)


def pp_eqn_doc(eqn: Eqn, context: PpContext, settings: PpSettings) -> pp.Doc:
    rule = pp_eqn_rules.get(eqn.primitive) if settings.custom_pp_eqn_rules else None
    doc = (rule or default_pp_eqn)(eqn, context, settings)
    if settings.source_map:
        return pp.concat([pp.mark((True, eqn)), doc, pp.mark((False, eqn))])
    return doc


def _skeleton(j: Olympuspr, context: PpContext, settings: PpSettings) -> pp.Doc:
    if j.sharding_types:
        context.sharding_types.update(j.sharding_types)
    if j.vma_types:
        context.vma_types.update(j.vma_types)
    constvars = pp_vars(j.constvars, context, print_shapes=settings.print_shapes)
    invars = pp_vars(j.invars, context, print_shapes=settings.print_shapes)
    eqns = pp.join(pp.brk("; "), [pp_eqn_doc(e, context, settings) for e in j.eqns])
    outvars = pp.concat([
        pp.text("("), pp_vars(j.outvars, context, separator=","),
        pp.text(",)" if len(j.outvars) == 1 else ")"),
    ])
    parts = [
        pp.text("{ "), pp.keyword(pp.text("lambda ")), constvars, pp.text("; "), invars,
        pp.text(". "), pp.keyword(pp.text("let")), pp.nest(2, pp.brk() + eqns), pp.brk(),
        pp.keyword(pp.text("in ")), outvars,
    ]
    if settings.print_effects:
        parts.append(_jtext(" : { " + ", ".join(str(e) for e in j.effects) + " }"))
    return pp.group(pp.nest(2, pp.concat(parts)) + pp.text(" }"))


def pp_olympuspr_doc(j: Olympuspr | ClosedOlympuspr, context: PpContext,
                     settings: PpSettings) -> pp.Doc:
    if isinstance(j, ClosedOlympuspr):
        j = j.olympuspr
    name = context.shared.get(j)
    if name is not None:
        return _jtext(name)
    return _skeleton(j, context, settings)


def pp_olympusprs(js: Sequence[Olympuspr | ClosedOlympuspr], context: PpContext,
                  settings: PpSettings) -> pp.Doc:
    """``(j1 j2 ...)``, one per line unless all fit on the line."""
    docs = [pp_olympuspr_doc(j, context, settings) for j in js]
    return pp.group(pp.concat([
        pp.nest(2, pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), docs)])),
        pp.brk(""), pp.text(")"),
    ]))


def _sub_olympusprs(params: dict[str, Any]) -> list[Olympuspr]:
    out = []
    for v in params.values():
        if _holds_olympuspr(v):
            for x in (v if type(v) is tuple or type(v) is list else (v,)):
                if type(x) is Olympuspr:
                    out.append(x)
                elif type(x) is ClosedOlympuspr:
                    out.append(x.olympuspr)
    return out


def unread_results(j: Olympuspr) -> dict[Var, str]:
    """``{v: "_"}`` for each equation result of `j` that nothing in `j` reads."""
    names: dict[Var, str] = {}
    used = {x for x in j.outvars if isinstance(x, Var)}
    for eqn in reversed(j.eqns):
        for v in eqn.outvars:
            if v not in used:
                names[v] = "_"
        used.update(x for x in eqn.invars if isinstance(x, Var))
    return names


def _shared_olympusprs(top: Olympuspr, context: PpContext,
                       settings: PpSettings) -> list[tuple[str, Olympuspr]]:
    """The sub-olympusprs printed once before `top`: those met more than once on a walk of
    the params, and those with more than 10 equations; named after an equation's ``name``
    param if it has one, else ``olympuspr`` (JAX says ``jaxpr``), numbered when a name repeats."""
    names: dict[Olympuspr, str] = {}
    counts: Counter[Olympuspr] = Counter()
    queue = deque([top])
    while queue:
        j = queue.popleft()
        counts[j] += 1
        if j is not top and len(j.eqns) > 10:
            counts[j] += 1
        for eqn in j.eqns:
            params = eqn.params
            rule = pp_eqn_rules.get(eqn.primitive) if settings.custom_pp_eqn_rules else None
            if rule is not None and hasattr(rule, "printed_params"):
                params = _printed(rule.printed_params, eqn)[0]
            name = eqn.params.get("name")  # a print rule's `name` does not count, as in JAX
            subs = _sub_olympusprs(params)
            queue.extend(subs)
            if isinstance(name, str):
                for s in subs:
                    names.setdefault(s, name.strip("<>"))
    taken: Counter[str] = Counter()
    shared = []
    for j, c in counts.items():
        if c == 1:
            continue
        name = names.get(j, "olympuspr")
        n = taken[name]
        taken[name] += 1
        if n:
            name += str(n)
            taken[name] += 1
        context.shared_names.add(name)
        context.shared[j] = name
        shared.append((name, j))
    return shared


def pp_toplevel(j: Olympuspr | ClosedOlympuspr, settings: PpSettings = _DEFAULT_SETTINGS,
                context: PpContext | None = None) -> pp.Doc:
    """The document of a whole olympuspr, shared sub-olympusprs first."""
    if isinstance(j, ClosedOlympuspr):
        j = j.olympuspr
    if context is None:
        context = PpContext(unread_results(j))
    docs = []
    for name, sub in _shared_olympusprs(j, context, settings):
        docs += [pp.text("let "), _jtext(name), pp.text(" = "),
                 _skeleton(sub, context, settings), pp.text(" in"), pp.brk()]
    docs.append(_skeleton(j, context, settings))
    return pp.concat(docs)


def _detect_color() -> bool:
    """Colours by default in a terminal or a notebook, as JAX (``OLYMPUS_PPRINT_USE_COLOR=0``
    turns them off, like ``JAX_PPRINT_USE_COLOR``)."""
    if os.environ.get("OLYMPUS_PPRINT_USE_COLOR", "1").lower() in ("0", "false", "no", "off"):
        return False
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython else None
    if shell is not None:
        cls = type(shell)
        if cls.__name__ == "ZMQInteractiveShell" or "colab" in str(cls):
            return True
    return hasattr(sys.stdout, "isatty") and sys.stdout.isatty()


_CAN_USE_COLOR = _detect_color()


def pp_olympuspr(j: Olympuspr | ClosedOlympuspr, *, source_info: bool = False,
                 print_shapes: bool = True, custom_pp_eqn_rules: bool = True,
                 name_stack: bool = False, print_effects: bool = False, width: int = 80,
                 use_color: bool | None = None, annotation_prefix: str = " # ",
                 source_map: list | None = None) -> str:
    """The text of `j` (the keyword arguments of JAX's ``Jaxpr.pretty_print``).

    With a `source_map` list (then no colours), it receives one list per printed line of
    ``(start column, end column, source_info)``: the line cut into the regions each
    equation prints itself (the innermost equation wins; a region runs to the next
    equation boundary or the line's end, and an equation spanning lines starts again at
    the indentation of each), as JAX's printer reports them."""
    settings = PpSettings(print_shapes, source_info, name_stack, custom_pp_eqn_rules,
                          print_effects, source_map is not None)
    doc = pp_toplevel(j, settings)
    if source_map is None:
        if use_color is None:
            use_color = _CAN_USE_COLOR
        return pp.format_doc(doc, width, use_color=use_color,
                             annotation_prefix=annotation_prefix)
    marks: list = []
    out = pp.format_doc(doc, width, annotation_prefix=annotation_prefix, marks=marks)
    lines = out.split("\n")
    per_line: list[list] = [[] for _ in lines]
    active: list[Eqn] = []  # the equations whose text is being printed, innermost last
    k = 0
    for i, line in enumerate(lines):
        start = len(line) - len(line.lstrip(" ")) if i else 0
        while k < len(marks) and marks[k][0] == i:
            _, col, (is_start, eqn) = marks[k]
            k += 1
            if active and col != start and active[-1].source_info is not None:
                per_line[i].append((start, col, active[-1].source_info))
            if is_start:
                active.append(eqn)
            else:
                active.pop()
            start = col
        if active and start != len(line) and active[-1].source_info is not None:
            per_line[i].append((start, len(line), active[-1].source_info))
    source_map.extend(per_line)
    return out


def name_vars(j: Olympuspr | ClosedOlympuspr, *, drop_unread: bool = True) -> PpContext:
    """A context naming `j`'s variables as its printed text does (for messages that quote
    its equations); with ``drop_unread=False`` unread results get names too instead of
    ``_`` (a type error may be about one)."""
    top = j.olympuspr if isinstance(j, ClosedOlympuspr) else j
    context = PpContext(unread_results(top) if drop_unread else None)
    pp_toplevel(top, _DEFAULT_SETTINGS, context)
    return context


def pp_eqn(eqn: Eqn, context: PpContext | None = None,
           settings: PpSettings = _DEFAULT_SETTINGS, width: int = 80) -> str:
    """The text of one equation (fresh names unless a `context` names its variables)."""
    doc = pp_eqn_doc(eqn, context if context is not None else PpContext(), settings)
    return pp.format_doc(doc, width).rstrip()
