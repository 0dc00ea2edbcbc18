"""A Wadler/Lindig-style layout engine: documents made of text, breaks, groups and nesting,
laid out within a line width.

A *group* is printed flat (each break as its text, usually a space) when the whole group
fits in what is left of the line, otherwise its own breaks become newlines indented by the
enclosing *nest* levels; groups inside a broken group decide for themselves. Whether a group
fits depends only on the group, not on what follows it on the line (JAX's printer makes the
same choice, and printed olympusprs must match JAX's jaxprs character for character).

Every document knows its flat width when built, so deciding a group costs O(1) and laying
out a document is linear in its size.

A text may count for another width than its length (see `text`). Text may carry an *annotation* (a comment printed at the right of its line, after the
longest line) and a colour (ANSI escapes, used only when asked for). A `mark` is a
zero-width point whose line and column `format_doc` reports when given a `marks` list (how
a printed olympuspr maps its lines back to source, for source maps).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "Doc", "LazyDoc", "nil", "text", "brk", "concat", "group", "nest", "join", "lazy", "color", "keyword",
    "type_annotation", "format_doc", "mark",
    "BLACK", "RED", "GREEN", "YELLOW", "BLUE", "MAGENTA", "CYAN", "WHITE", "RESET",
    "NORMAL", "DIM", "BRIGHT",
]

# ANSI SGR codes: foreground colours (background is +10) and intensities.
BLACK, RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN, WHITE, RESET = 30, 31, 32, 33, 34, 35, 36, 37, 39
NORMAL, DIM, BRIGHT = 22, 2, 1

_DEFAULT_COLORS = (RESET, RESET, NORMAL)
_ANNOTATION_COLORS = (RESET, RESET, DIM)


class Doc:
    """A document; `w` is its width printed flat."""

    __slots__ = ("w",)

    def __add__(self, other: Doc) -> Doc:
        return concat((self, other))

    def __str__(self) -> str:
        return format_doc(self)

    def format(self, width: int = 80, *, use_color: bool = False,
               annotation_prefix: str = " # ") -> str:
        return format_doc(self, width, use_color=use_color,
                          annotation_prefix=annotation_prefix)


class _Text(Doc):
    __slots__ = ("text", "annotation")

    def __init__(self, s: str, annotation: str | None, width: int):
        self.text = s
        self.annotation = annotation
        self.w = width

    def __repr__(self) -> str:
        ann = "" if self.annotation is None else f", annotation={self.annotation!r}"
        return f"text({self.text!r}{ann})"


class _Break(Doc):
    __slots__ = ("text",)

    def __init__(self, s: str):
        self.text = s
        self.w = len(s)

    def __repr__(self) -> str:
        return f"brk({self.text!r})"


class _Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children: tuple[Doc, ...]):
        self.children = children
        self.w = sum([c.w for c in children])

    def __repr__(self) -> str:
        return f"concat({', '.join(map(repr, self.children))})"


class _Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child: Doc):
        self.child = child
        self.w = child.w

    def __repr__(self) -> str:
        return f"group({self.child!r})"


class _Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n: int, child: Doc):
        self.n = n
        self.child = child
        self.w = child.w

    def __repr__(self) -> str:
        return f"nest({self.n}, {self.child!r})"


class _Color(Doc):
    __slots__ = ("child", "foreground", "background", "intensity")

    def __init__(self, child: Doc, foreground, background, intensity):
        self.child = child
        self.foreground = foreground
        self.background = background
        self.intensity = intensity
        self.w = child.w

    def __repr__(self) -> str:
        return (f"color({self.child!r}, {self.foreground}, {self.background}, "
                f"{self.intensity})")


class _Mark(Doc):
    __slots__ = ("tag",)

    def __init__(self, tag):
        self.tag = tag
        self.w = 0

    def __repr__(self) -> str:
        return f"mark({self.tag!r})"


class LazyDoc(Doc):
    __slots__ = ("text", "build")

    def __init__(self, s: str, width: int, build):
        self.text = s
        self.w = width
        self.build = build

    def __repr__(self) -> str:
        return f"lazy({self.text!r})"


_NIL = _Concat(())


def nil() -> Doc:
    """The empty document."""
    return _NIL


def text(s: str, annotation: str | None = None, width: int | None = None) -> Doc:
    """`s` as is (it should hold no newline). `width` is the number of columns it counts
    for in layout decisions (default ``len(s)``)."""
    return _Text(s, annotation, len(s) if width is None else width)


def brk(s: str = " ") -> Doc:
    """`s` when its enclosing group is flat, else a newline and the current indentation."""
    return _Break(s)


def concat(docs: Iterable[Doc]) -> Doc:
    return _Concat(tuple(docs))


def lazy(flat: str, build, width: int | None = None) -> Doc:
    """A document built only if needed: laid out as the text `flat` when that fits on the
    rest of the line (or sits in a flat group), else as ``build()``.

    ``build()`` must lay out as `flat` when flat, and hold no break outside a group (so
    that fitting as a whole means every part fits flat). `width` is as for `text`. Printing
    big olympusprs goes fast this way: most equations fit on their line."""
    return LazyDoc(flat, len(flat) if width is None else width, build)


def mark(tag) -> Doc:
    """A zero-width point tagged `tag`: ``format_doc(..., marks=out)`` appends
    ``(line index, column, tag)`` to `out` where it lands (no effect on the layout)."""
    return _Mark(tag)


def group(doc: Doc) -> Doc:
    """Print `doc` flat if all of it fits on the rest of the line, else break its breaks."""
    return _Group(doc)


def nest(n: int, doc: Doc) -> Doc:
    """Indent the lines that `doc`'s breaks start by `n` more columns."""
    return _Nest(n, doc)


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    """`docs` with `sep` between each two."""
    docs = list(docs)
    if not docs:
        return _NIL
    if len(docs) == 1:
        return docs[0]
    out = [docs[0]]
    for d in docs[1:]:
        out.append(sep)
        out.append(d)
    return _Concat(tuple(out))


def color(doc: Doc, foreground: int | None = None, background: int | None = None,
          intensity: int | None = None) -> Doc:
    """Print `doc` in these ANSI colours (only when formatting with ``use_color=True``)."""
    return _Color(doc, foreground, background, intensity)


def keyword(doc: Doc) -> Doc:
    return _Color(doc, BLUE, None, BRIGHT)


def type_annotation(doc: Doc) -> Doc:
    return _Color(doc, MAGENTA, None, NORMAL)


def _ansi(state: list, update: tuple) -> str:
    """The escape taking the colour `state` (mutated) to `update`; only changed parts."""
    cur = state[0]
    if cur == update:
        return ""
    codes = []
    if cur[0] != update[0]:
        codes.append(str(update[0]))
    if cur[1] != update[1]:
        codes.append(str(update[1] + 10))
    if cur[2] != update[2]:
        codes.append(str(update[2]))
    state[0] = update
    return "\033[" + ";".join(codes) + "m"


def format_doc(doc: Doc, width: int = 80, *, use_color: bool = False,
               annotation_prefix: str = " # ", marks: list | None = None) -> str:
    """Lay `doc` out in `width` columns (see the module docstring); with a `marks` list,
    report where each `mark` lands (columns count characters of the plain text)."""
    if not use_color or marks is not None:
        return _format_plain(doc, width, annotation_prefix, marks)
    return _format_color(doc, width, annotation_prefix)


def _format_plain(doc: Doc, width: int, annotation_prefix: str,
                  marks: list | None = None) -> str:
    """The layout without colours: the common, fast path."""
    lines: list[tuple[str, int, list[str]]] = []
    line: list[str] = []
    annotations: list[str] = []
    any_annotation = False
    k = 0
    # (indent, flat, doc); the top level is not a group, so its breaks are newlines.
    stack: list[tuple[int, bool, Doc]] = [(0, False, doc)]
    pop, push = stack.pop, stack.append
    Text, Break, Concat, Group, Nest, Lazy = _Text, _Break, _Concat, _Group, _Nest, LazyDoc
    while stack:
        indent, flat, d = pop()
        t = type(d)
        if t is Lazy:
            if flat or d.w <= width - k:
                line.append(d.text)
                k += d.w
            else:
                push((indent, flat, d.build()))
        elif t is Text:
            line.append(d.text)
            k += d.w
            if d.annotation is not None:
                annotations.append(d.annotation)
                any_annotation = True
        elif t is Concat:
            for c in reversed(d.children):
                push((indent, flat, c))
        elif t is Break:
            if flat:
                line.append(d.text)
                k += d.w
            else:
                lines.append(("".join(line), k, annotations))
                line = [" " * indent]
                annotations = []
                k = indent
        elif t is Group:
            # Inside a flat group everything is flat; otherwise the group decides alone.
            push((indent, flat or d.w <= width - k, d.child))
        elif t is Nest:
            push((indent + d.n, flat, d.child))
        elif t is _Mark:
            if marks is not None:
                marks.append((len(lines), sum(map(len, line)), d.tag))
        else:  # colour: no effect on the plain layout
            push((indent, flat, d.child))
    lines.append(("".join(line), k, annotations))
    if not any_annotation:
        return "\n".join(s for s, _, _ in lines)
    return _with_annotations(lines, annotation_prefix, None)


def _with_annotations(lines, annotation_prefix: str, state: list | None) -> str:
    """Each line's annotations at the right of the longest line, one per output line."""
    max_width = max(w for _, w, _ in lines)
    out = []
    for s, w, anns in lines:
        parts = [s]
        for j, a in enumerate(anns):
            if j:
                parts.append("\n")
            if state is not None:
                parts.append(_ansi(state, _ANNOTATION_COLORS))
            parts.append(" " * (max_width - w if j == 0 else max_width))
            parts.append(annotation_prefix)
            parts.append(a)
            if state is not None:
                parts.append(_ansi(state, _DEFAULT_COLORS))
        out.append("".join(parts))
    return "\n".join(out)


def _format_color(doc: Doc, width: int, annotation_prefix: str) -> str:
    """The layout with ANSI colours: escapes are emitted where the colour changes."""
    state = [_DEFAULT_COLORS]
    lines: list[tuple[str, int, list[str]]] = []
    line: list[str] = []
    annotations: list[str] = []
    k = 0
    stack: list[tuple[int, bool, Doc, tuple]] = [(0, False, doc, _DEFAULT_COLORS)]
    while stack:
        indent, flat, d, col = stack.pop()
        t = type(d)
        if t is LazyDoc:  # colours need the document
            stack.append((indent, flat, d.build(), col))
        elif t is _Text:
            line.append(_ansi(state, col))
            line.append(d.text)
            k += d.w
            if d.annotation is not None:
                annotations.append(d.annotation)
        elif t is _Concat:
            for c in reversed(d.children):
                stack.append((indent, flat, c, col))
        elif t is _Break:
            if flat:
                line.append(_ansi(state, col))
                line.append(d.text)
                k += d.w
            else:
                if annotations:
                    line.append(_ansi(state, _DEFAULT_COLORS))
                lines.append(("".join(line), k, annotations))
                line = [" " * indent]
                annotations = []
                k = indent
        elif t is _Group:
            stack.append((indent, flat or d.w <= width - k, d.child, col))
        elif t is _Nest:
            stack.append((indent + d.n, flat, d.child, col))
        elif t is _Mark:
            pass
        else:
            col = (col[0] if d.foreground is None else d.foreground,
                   col[1] if d.background is None else d.background,
                   col[2] if d.intensity is None else d.intensity)
            stack.append((indent, flat, d.child, col))
    if annotations:
        line.append(_ansi(state, _DEFAULT_COLORS))
    lines.append(("".join(line), k, annotations))
    out = _with_annotations(lines, annotation_prefix, state)
    return out + _ansi(state, _DEFAULT_COLORS)
