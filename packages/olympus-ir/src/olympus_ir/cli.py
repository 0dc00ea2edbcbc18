"""``olympus-ir`` (or ``python -m olympus_ir``): inspect olympusprs saved as JSON.

    olympus-ir show FILE    pretty-print the olympuspr
    olympus-ir check FILE   type-check it: prints "ok" (exit 0) or the error (exit 1)
    olympus-ir stats FILE   equation counts by primitive and a FLOP estimate
    olympus-ir dot FILE     the dataflow graph in Graphviz DOT

FILE is a document written by `olympus_ir.serialize.to_json` (``-`` reads standard input).
A missing or unreadable file, or one that is not a valid olympuspr document, is reported on
standard error with exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .core import ClosedOlympuspr, Literal, Olympuspr
from .pretty import _literal_text, name_vars, pp_olympuspr
from .serialize import from_json
from .stats import format_stats, sub_olympusprs
from .verify import OlympusprTypeError, check_olympuspr

__all__ = ["main", "to_dot"]


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(j: Olympuspr | ClosedOlympuspr) -> str:
    """The dataflow graph of `j` in Graphviz DOT: a node per invar (constvars dashed), per
    equation (a box labelled with the primitive) and per output; an edge per use of a value,
    labelled with the variable and its type. Literals are plaintext nodes. Sub-olympusprs are not expanded
    (the equation's label says how many it holds)."""
    if isinstance(j, ClosedOlympuspr):
        j = j.olympuspr
    names = name_vars(j)  # name variables as `show` prints them
    lines = ["digraph olympuspr {", "  rankdir=TB;", '  node [fontname="monospace"];']
    producer: dict[int, str] = {}
    n_lit = 0

    def source(x: Any) -> str:
        nonlocal n_lit
        if isinstance(x, Literal):
            node = f"lit{n_lit}"
            n_lit += 1
            lines.append(f"  {node} [label={_quote(_literal_text(x))}, shape=plaintext];")
            return node
        node = producer.get(id(x))
        if node is None:  # used but never defined: show it rather than fail
            node = f"undef{len(producer)}"
            producer[id(x)] = node
            lines.append(f"  {node} [label={_quote(names.binder(x) + ' (undefined)')}, "
                         "shape=ellipse, color=red];")
        return node

    def edge(x: Any, dst: str) -> None:
        src = source(x)
        label = "" if isinstance(x, Literal) else f" [label={_quote(names.binder(x))}]"
        lines.append(f"  {src} -> {dst}{label};")

    for k, v in enumerate(j.constvars):
        node = producer[id(v)] = f"const{k}"
        lines.append(f"  {node} [label={_quote(names.binder(v))}, shape=ellipse, style=dashed];")
    for k, v in enumerate(j.invars):
        node = producer[id(v)] = f"in{k}"
        lines.append(f"  {node} [label={_quote(names.binder(v))}, shape=ellipse];")
    for i, e in enumerate(j.eqns):
        node = f"eqn{i}"
        label = e.primitive.name
        nsub = len(sub_olympusprs(e.params))
        if nsub:
            label += f" ({nsub} sub-olympuspr{'s' if nsub > 1 else ''})"
        lines.append(f"  {node} [label={_quote(label)}, shape=box];")
        for x in e.invars:
            edge(x, node)
        for v in e.outvars:
            producer[id(v)] = node
    for k, x in enumerate(j.outvars):
        node = f"out{k}"
        lines.append(f"  {node} [label={_quote(f'out {k}')}, shape=doublecircle];")
        edge(x, node)
    lines.append("}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    from .__about__ import __version__

    p = argparse.ArgumentParser(
        prog="olympus-ir", description="Inspect olympusprs saved as JSON (olympus_ir.to_json)."
    )
    p.add_argument("--version", action="version", version=f"olympus-ir {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_ in (
        ("show", "pretty-print the olympuspr"),
        ("check", 'type-check the olympuspr; prints "ok" or the error'),
        ("stats", "equation counts by primitive and a FLOP estimate"),
        ("dot", "the dataflow graph in Graphviz DOT"),
    ):
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.add_argument("file", metavar="FILE", help="an olympuspr JSON file ('-' for stdin)")
    return p


class _LoadError(Exception):
    pass


def _load(path: str) -> Olympuspr | ClosedOlympuspr:
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        raise _LoadError(f"olympus-ir: cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise _LoadError(f"olympus-ir: {path} is not UTF-8 text: {e}") from None
    try:
        return from_json(text)
    except ValueError as e:
        raise _LoadError(f"olympus-ir: {path}: {e}") from None


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # --help, --version, or a usage error (argparse printed it)
        return int(e.code) if isinstance(e.code, int) else (0 if e.code is None else 2)
    try:
        j = _load(args.file)
    except _LoadError as e:
        print(e, file=sys.stderr)
        return 2
    if args.command == "show":
        print(pp_olympuspr(j))
    elif args.command == "check":
        try:
            check_olympuspr(j)
        except OlympusprTypeError as e:
            print(e)
            return 1
        print("ok")
    elif args.command == "stats":
        print(format_stats(j))
    elif args.command == "dot":
        print(to_dot(j))
    return 0
