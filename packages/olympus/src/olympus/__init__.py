"""Olympus: composable transformations of Python+NumPy programs, compiled with XLA.

jit and the ahead-of-time stages, eager op-by-op execution, olympus.numpy and olympus.lax,
built on the olympus-ir / -trace / -lower / -runtime layers.
"""

import operator as _operator
import os as _os

from olympus_ir.avals import ShapeDtypeStruct
from olympus_runtime import (
    Array,
    block_until_ready,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    local_devices,
)
from olympus_trace import core as _trace_core
from olympus_trace.core import check_tracer_leaks
from olympus_trace.make_olympuspr import make_olympuspr
from olympus_trace.staging import register_internal_dir as _register_internal_dir

from . import errors, stages, tree, tree_util
from .__about__ import __version__
from ._src import eager as _eager
from ._src.api import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    stop_gradient,
    value_and_grad,
    vjp,
    vmap,
)
from ._src.config import config, enable_x64
from ._src.jit import jit

# Source lines of staged equations (StableHLO locations, error messages) name the user's
# code: frames inside the olympus package (numpy, nn, scipy, lax, the eager lanes) are
# skipped, as olympus_trace's own are.
_register_internal_dir(_os.path.join(_os.path.dirname(__file__), ""))

# The tracing layer reads an Array's abstract value from its C++ `aval`; primitives bound
# outside any trace run by the eager rule.
_trace_core.aval_handlers[Array] = _operator.attrgetter("aval")
_eager.install()
config._apply_initial()

from . import lax, numpy  # noqa: E402

checking_leaks = check_tracer_leaks

__all__ = [
    "check_tracer_leaks", "checking_leaks", "grad", "hessian", "jacfwd", "jacrev", "jvp",
    "linearize", "stop_gradient", "value_and_grad", "vjp", "vmap",
    "Array", "ShapeDtypeStruct", "block_until_ready", "config", "device_count", "device_get",
    "enable_x64",
    "device_put", "devices", "default_backend", "errors", "jit", "lax", "local_devices",
    "make_olympuspr", "numpy", "stages", "tree", "tree_util", "__version__",
]
from . import debug  # noqa: E402,F401

__all__ += ["flatten_util", "nn", "random", "scipy", "threefry_partitionable"]
from ._src.custom_derivatives import checkpoint, custom_jvp, custom_vjp, remat  # noqa: E402

__all__ += ["checkpoint", "custom_jvp", "custom_vjp", "remat"]

# Submodules that most programs never touch are imported on first access.
_LAZY_SUBMODULES = {"flatten_util", "nn", "random", "scipy"}


def __getattr__(name: str):
    import importlib

    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "threefry_partitionable":
        from .random import threefry_partitionable

        return threefry_partitionable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES | {"threefry_partitionable"})
