"""Where a computation runs (JAX's ``jax.experimental.compute_on``). On the CPU backend the
host and the device are the same processor, so the annotated computations run where
they would anyway; the compute types are checked as JAX checks them."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["compute_on", "compute_on2", "current_compute_type"]

_state = threading.local()


def _check_valid(c_type: str) -> None:
    if (c_type not in {"device_host", "device", "tpu_sparsecore"}
            and not c_type.startswith("gpu_stream:")):
        raise ValueError(f"Invalid compute type {c_type}. Current supported values are "
                         "`device_host`, `device`, `tpu_sparsecore`, and `gpu_stream:#`.")


def current_compute_type() -> str | None:
    """The innermost ``compute_on`` type in effect (None outside any)."""
    stack = getattr(_state, "stack", [])
    return stack[-1] if stack else None


@contextlib.contextmanager
def compute_on(compute_type: str) -> Iterator[None]:
    """Run the operations traced in the block on `compute_type` (``device_host``,
    ``device`` ...)."""
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    _check_valid(compute_type)
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(compute_type)
    try:
        yield
    finally:
        stack.pop()


def compute_on2(f=None, *, compute_type, out_memory_spaces, compiler_options=None):
    """`f` run on `compute_type` with its outputs in `out_memory_spaces` (a decorator when
    `f` is omitted)."""
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    _check_valid(compute_type)

    def wrap(g):
        import functools

        @functools.wraps(g)
        def run(*args, **kwargs):
            with compute_on(compute_type):
                return g(*args, **kwargs)
        return run
    return wrap if f is None else wrap(f)
