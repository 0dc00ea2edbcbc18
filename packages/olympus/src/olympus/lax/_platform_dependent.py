"""`platform_dependent`: the branch of a function for the platform the computation is
lowered for. Olympus lowers for the CPU only, so the choice is made when tracing: the
``cpu`` branch, else ``default``."""

from __future__ import annotations

__all__ = ["platform_dependent"]


def platform_dependent(*args, default=None, **per_platform):
    """``per_platform['cpu'](*args)`` if given, else ``default(*args)``; JAX's errors for
    a branch that is not callable, for ``gpu``, and for no branch that runs on the CPU."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a "
                            "callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    branch = per_platform.get("cpu", default)
    if branch is None:
        platforms = tuple((name,) for name in per_platform)
        raise NotImplementedError(
            f"MLIR translation rule for primitive 'platform_index(platforms={platforms})' "
            "not found for platform cpu")
    return branch(*args)
