"""`olympus.scipy`: SciPy-compatible functions with JAX's semantics.

Each submodule is imported on first access (``olympus.scipy.linalg`` or
``import olympus.scipy.linalg``), so that importing `olympus.scipy` stays cheap."""

import importlib as _importlib

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "spatial", "special", "stats"]

_SUBMODULES = frozenset(__all__)


def __getattr__(name: str):
    if name in _SUBMODULES:
        module = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
