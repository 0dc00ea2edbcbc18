"""The ahead-of-time stages API: Wrapped -> Traced -> Lowered -> Compiled."""

from ._src.jit import Wrapped
from ._src.saved_compiled import load_compiled
from ._src.stages import ArgInfo, Compiled, Lowered, OutInfo, Traced

#: What ``Lowered.compile(compiler_options=...)`` takes: XLA option names to values.
CompilerOptions = dict[str, str | bool]

__all__ = ["Wrapped", "Traced", "Lowered", "Compiled", "ArgInfo", "OutInfo", "load_compiled",
           "CompilerOptions"]
