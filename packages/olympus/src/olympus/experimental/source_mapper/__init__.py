"""`olympus.experimental.source_mapper`: source maps (TC39 v3) from the text of a
function's olympuspr, StableHLO, HLO and optimized HLO back to the Python lines that made
each operation (JAX's ``jax.experimental.source_mapper``).

``generate_sourcemaps(f, passes)(*args)`` returns one `SourceMapDump` per pass: the
generated text and its `SourceMap`. The passes registered here are ``olympuspr``,
``hlo:stable-hlo``, ``hlo:original`` and ``hlo:optimized`` (`all_passes`,
`filter_passes`); `register_pass` adds others.
"""

from ..._src.sourcemap import MappingsGenerator, SourceMap
from . import hlo as _hlo  # noqa: F401  (registers the passes)
from .common import Pass, SourceMapDump, all_passes, compile_with_env, filter_passes, register_pass
from .generate_map import generate_sourcemaps
from .mlir import create_mlir_sourcemap
from .olympuspr import canonicalize_filename

__all__ = ["SourceMap", "MappingsGenerator", "Pass", "register_pass", "all_passes",
           "filter_passes", "compile_with_env", "SourceMapDump", "generate_sourcemaps",
           "create_mlir_sourcemap", "canonicalize_filename"]
