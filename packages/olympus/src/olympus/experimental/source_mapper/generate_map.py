"""`generate_sourcemaps`: run the chosen passes on one call of a function."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence

from .common import Pass, SourceMapDump

__all__ = ["generate_sourcemaps"]


def generate_sourcemaps(f, passes: Sequence[Pass],
                        **pass_kwargs) -> Callable[..., Sequence[SourceMapDump]]:
    """A function of `f`'s arguments returning one `SourceMapDump` per pass of `passes`
    (in order). Passes that share a ``compile_fn`` share its result; each compile gets a
    fresh directory under a temporary one (removed afterwards). `pass_kwargs` go to
    every pass (e.g. ``xla_compiler_flags`` for ``hlo:optimized``)."""
    passes = list(passes)

    def wrapper(*args, **kwargs) -> Sequence[SourceMapDump]:
        dumps: list[SourceMapDump] = []
        results: dict = {}
        with tempfile.TemporaryDirectory() as work_dir:
            for p in passes:
                if p.compile_fn not in results:
                    pass_dir = os.path.join(work_dir, p.name.replace(":", "__"))
                    os.makedirs(pass_dir, exist_ok=False)
                    results[p.compile_fn] = p.compile_fn(pass_dir, f, args, kwargs,
                                                         **pass_kwargs)
                dumps.append(p.generate_dump(results[p.compile_fn], **pass_kwargs))
        return dumps

    return wrapper
