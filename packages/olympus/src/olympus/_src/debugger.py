"""`olympus.debug.breakpoint`: a pdb-like debugger for traced programs.

When traced, the breakpoint records the user's frames around it (file, line, function,
source) and splits each frame's locals into arrays (passed to a debug callback, so their
values exist when the program runs) and everything else (kept as they are). When the
program reaches the callback, a text debugger reads commands from ``sys.stdin``
(``(jdb)`` prompt, as JAX's):

``p expr`` / ``pp expr`` (or a bare expression) evaluate in the current frame;
``u(p)`` / ``d(own)`` move between frames; ``l(ist)`` shows the source around the line;
``w(here)`` / ``bt`` print the stack; ``c(ont(inue))`` resumes the program;
``q(uit)`` / ``exit`` / end of input exit (``SystemExit``).
"""

from __future__ import annotations

import cmd
import inspect
import linecache
import pprint
import sys
import traceback
from typing import Any

from olympus_trace.core import is_array_like
from olympus_trace.staging import _SKIP_DIRS

__all__ = ["Frame", "Debugger", "breakpoint"]


class Frame:
    """One frame as the debugger shows it: where, its source, and its locals."""

    def __init__(self, filename: str, lineno: int, function: str, source: list[str],
                 offset: int | None, local_vars: dict, global_vars: dict):
        self.filename, self.lineno, self.function = filename, lineno, function
        self.source, self.offset = source, offset
        self.locals, self.globals = local_vars, global_vars


def _frame_source(f) -> tuple[list[str], int | None]:
    """The source lines of frame `f`'s function (the whole file at module level) and the
    index of the current line in them (None without source)."""
    filename = f.f_code.co_filename
    if f.f_code.co_name != "<module>":
        try:
            lines, first = inspect.getsourcelines(f.f_code)
            return [ln.rstrip("\n") for ln in lines], f.f_lineno - max(first, 1)
        except (OSError, TypeError):
            pass
    lines = linecache.getlines(filename)
    if not lines or f.f_lineno > len(lines):
        return [], None
    return [ln.rstrip("\n") for ln in lines], f.f_lineno - 1


class Debugger(cmd.Cmd):
    """The text debugger over a list of frames (innermost first)."""

    prompt = "(jdb) "

    def __init__(self, frames: list[Frame], stdin=None, stdout=None):
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None and sys.stdin.isatty()
        if not self.use_rawinput and stdin is None:
            self.stdin = sys.stdin
        self.frames = frames
        self.index = 0
        self.intro = "Entering jdb:"

    def _out(self, text: str) -> None:
        print(text, file=self.stdout)

    def _eval(self, expr: str) -> Any:
        frame = self.frames[self.index]
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def _error(self) -> None:
        et, ev = sys.exc_info()[:2]
        self._out("*** " + traceback.format_exception_only(et, ev)[-1].strip())

    def _show(self, expr: str, fmt) -> None:
        try:
            self._out(fmt(self._eval(expr)))
        except Exception:
            self._error()

    def default(self, line: str) -> None:
        self._show(line, repr)

    def emptyline(self) -> bool:
        return False

    def do_p(self, arg: str) -> None:
        """p expression: print the value of an expression in the current frame."""
        self._show(arg, repr)

    def do_pp(self, arg: str) -> None:
        """pp expression: pretty-print the value of an expression."""
        self._show(arg, pprint.pformat)

    def context(self, num_lines: int = 2) -> None:
        f = self.frames[self.index]
        out = [f"> {f.filename}({f.lineno})"]
        if f.offset is not None:
            for i, line in enumerate(f.source):
                if f.offset - 1 - num_lines <= i <= f.offset + num_lines:
                    out.append(("->  " if i == f.offset else "    ") + line)
        self._out("\n".join(out))

    def do_up(self, arg: str) -> None:
        """u(p): move to the calling frame."""
        if self.index == len(self.frames) - 1:
            self._out("At topmost frame.")
        else:
            self.index += 1
        self.context()

    do_u = do_up

    def do_down(self, arg: str) -> None:
        """d(own): move to the called frame."""
        if self.index == 0:
            self._out("At bottommost frame.")
        else:
            self.index -= 1
        self.context()

    do_d = do_down

    def do_list(self, arg: str) -> None:
        """l(ist): the source around the current line."""
        self.context(num_lines=5)

    do_l = do_list

    def do_where(self, arg: str) -> None:
        """w(here) / bt: the stack, most recent frame last."""
        out = ["Traceback:"]
        for f in reversed(self.frames):
            out.append(f'  File "{f.filename}", line {f.lineno}')
            out.append("    " + (f.source[f.offset].strip() if f.offset is not None
                                 and 0 <= f.offset < len(f.source) else "<no source>"))
        self._out("\n".join(out))

    do_w = do_bt = do_where

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue)): resume the program."""
        return True

    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> None:
        """q(uit) / exit: leave the debugger and exit the program."""
        sys.exit(0)

    do_q = do_exit = do_EOF = do_quit


def _user_frames(filter_frames: bool, num_frames: int | None):
    f = sys._getframe(2)
    frames = []
    while f is not None:
        internal = any(f.f_code.co_filename.startswith(d) for d in _SKIP_DIRS)
        if not (filter_frames and internal):
            frames.append(f)
            if num_frames is not None and len(frames) >= num_frames:
                break
        f = f.f_back
    return frames


def breakpoint(*, filter_frames: bool = True, num_frames: int | None = None,  # noqa: A001
               ordered: bool = False) -> None:
    """Enter the debugger when the program reaches this point (see the module docstring)."""
    from ..debug import _callback

    records, dyn = [], []
    for f in _user_frames(filter_frames, num_frames):
        arrays, static = {}, {}
        for name, v in f.f_locals.items():
            if is_array_like(v) and not isinstance(v, (bool, int, float, complex)):
                arrays[name] = len(dyn)
                dyn.append(v)
            else:
                static[name] = v
        source, offset = _frame_source(f)
        records.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name, source, offset,
                        arrays, static, f.f_globals))

    def enter(*values):
        frames = [Frame(fn, ln, name, src, off, {**static, **{k: values[i]
                                                                for k, i in arrays.items()}},
                        glob)
                  for fn, ln, name, src, off, arrays, static, glob in records]
        Debugger(frames).cmdloop()

    enter.__name__ = "breakpoint"
    _callback(enter, tuple(dyn), {}, ordered)
