"""``olympus.typing``: annotations for array-accepting APIs, as ``jax.typing``.

``ArrayLike`` is what Olympus functions accept as an array (an `olympus.Array`, which
tracers are instances of, a NumPy array or scalar, or a Python scalar); ``DTypeLike`` what
they accept as a dtype.
"""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from olympus_runtime import ArrayBase as _Array


class SupportsDType(Protocol):
    """Anything with a ``dtype`` attribute (NumPy's and Olympus's scalar types)."""

    @property
    def dtype(self) -> np.dtype: ...


# typing.Union (not ``X | Y``): these are module-level aliases used in annotations and
# instance checks, and print as JAX's do (``typing.Union[...]``).
ArrayLike = Union[_Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]  # noqa: UP007
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]  # noqa: UP007

__all__ = ["ArrayLike", "DTypeLike"]
