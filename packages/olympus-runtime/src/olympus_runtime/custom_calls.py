"""Registration of jaxlib's CPU custom-call kernels that are not registered by default.

A fresh jaxlib process knows only the host-callback FFI targets. The LAPACK kernels the
linear-algebra lowerings call (``lapack_spotrf_ffi``, ``lapack_dgetrf_ffi``, ...) live in
``jaxlib.lapack`` and must be registered with XLA once per process, before any module
that calls them is compiled (see ``shared/JAXLIB.md`` §11).
"""

from __future__ import annotations

import threading

__all__ = ["register_lapack_targets", "lapack_targets_registered"]

_lock = threading.Lock()
_registered = False


def register_lapack_targets() -> bool:
    """Register every ``jaxlib.lapack`` CPU target with XLA and initialize the LAPACK
    function table. Idempotent and thread-safe; returns True once the targets are
    registered (False if this jaxlib has no LAPACK module)."""
    global _registered
    if _registered:
        return True
    with _lock:
        if _registered:
            return True
        try:
            import jaxlib.lapack as lapack
            import jaxlib.xla_client as xc
        except ImportError:  # pragma: no cover - every CPU jaxlib ships lapack
            return False
        for name, fn, api_version in lapack.registrations()["cpu"]:
            xc.register_custom_call_target(name, fn, platform="cpu", api_version=api_version)
        lapack._lapack.initialize()
        _registered = True
        return True


def lapack_targets_registered() -> bool:
    return _registered
