"""The pieces every source-map pass shares: `SourceMapDump`, `Pass` and the registry of
passes (`register_pass`, `all_passes`, `filter_passes`), and `compile_with_env`."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from ..._src.sourcemap import SourceMap

__all__ = ["SourceMapDump", "Pass", "register_pass", "all_passes", "filter_passes",
           "compile_with_env", "CompileFn", "GenerateDumpFn"]


@dataclasses.dataclass(frozen=True, slots=True)
class SourceMapDump:
    """What one pass produced: the generated text and the map of its lines."""

    source_map: SourceMap
    generated_code: str
    pass_name: str


class CompileFn(Protocol):
    """``compile_fn(work_dir, f, args, kwargs, **pass_kwargs)``: what a pass's dump is
    made from (passes with the same function share one result)."""

    def __call__(self, work_dir, fn, f_args, f_kwargs, /, **kwargs) -> Any: ...


class GenerateDumpFn(Protocol):
    """``generate_dump(compile_result, **pass_kwargs)`` -> `SourceMapDump`."""

    def __call__(self, compile_result: Any, /, **kwargs) -> SourceMapDump: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Pass:
    """A named way to turn a function into generated text and its source map."""

    name: str
    compile_fn: CompileFn
    generate_dump: GenerateDumpFn


_passes: dict[str, Pass] = {}


def register_pass(pass_: Pass) -> None:
    """Add `pass_` to the registry (its name must be new)."""
    if pass_.name in _passes:
        raise ValueError(f"Pass {pass_.name} already registered")
    _passes[pass_.name] = pass_


def all_passes() -> Sequence[Pass]:
    """Every registered pass, in registration order."""
    return list(_passes.values())


def filter_passes(regex: str) -> Sequence[Pass]:
    """The registered passes whose name matches `regex` (from its start)."""
    return [p for p in _passes.values() if re.match(regex, p.name)]


@contextlib.contextmanager
def _config_env(values: dict[str, Any]) -> Iterator[None]:
    """Set Olympus config options (by name) for the duration of the block."""
    from ... import config

    old = {}
    try:
        for name, value in values.items():
            old[name] = getattr(config, name)
            config.update(name, value)
        yield
    finally:
        for name, value in old.items():
            config.update(name, value)


def compile_with_env(f, f_args, f_kwargs, env_flags, compiler_flags) -> None:
    """Lower and compile ``f(*f_args, **f_kwargs)`` with the config options `env_flags`
    set for the duration (JAX sets absl flags; Olympus's flags are its config options)
    and the XLA options `compiler_flags`."""
    from ... import jit

    with _config_env(dict(env_flags or {})):
        jit(lambda *args, **kwargs: f(*args, **kwargs)).lower(
            *f_args, **f_kwargs).compile(compiler_flags)
