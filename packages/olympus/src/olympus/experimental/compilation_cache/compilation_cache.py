"""The persistent compilation cache's controls, as ``jax.experimental.compilation_cache``
names them. The cache itself is `olympus_runtime.persistent_cache`."""

from __future__ import annotations

import os

from olympus_runtime import persistent_cache

from ..._src.config import config

__all__ = ["set_cache_dir", "reset_cache"]


def set_cache_dir(path: str | os.PathLike) -> None:
    """Save compiled executables under `path` and look there before compiling, in this and
    later processes (same as ``config.update("olympus_compilation_cache_dir", path)``).

    The cache is trusted: whoever can write to `path` can make this process run code. It
    is created with mode 0700; do not share it with users you do not trust.
    """
    config.update("olympus_compilation_cache_dir", path)


def reset_cache() -> None:
    """Back to the state before first use: the directory is checked (and created) again
    when the next executable is compiled. Entries on disk are kept."""
    persistent_cache.reset()
