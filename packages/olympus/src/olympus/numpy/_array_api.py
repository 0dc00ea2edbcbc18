"""The Python array API standard's namespace metadata, as JAX 0.10.2 gives it:
``Array.__array_namespace__``, ``olympus.numpy.__array_namespace_info__()`` and
``__array_api_version__`` (2024.12)."""

from __future__ import annotations

from types import ModuleType

from olympus_ir import dtypes

__all__ = ["__array_api_version__", "__array_namespace__", "__array_namespace_info__",
           "ArrayNamespaceInfo"]

__array_api_version__ = "2024.12"


def __array_namespace__(self, *, api_version: str | None = None) -> ModuleType:
    """The array API namespace of an olympus array: ``olympus.numpy``."""
    if api_version is not None and api_version != __array_api_version__:
        raise ValueError(f"api_version={api_version!r} is not available; "
                         f"available versions are: {[__array_api_version__]}")
    import olympus.numpy

    return olympus.numpy


def __array_namespace_info__() -> ArrayNamespaceInfo:
    return ArrayNamespaceInfo()


_X32_NAMES = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32",
              "complex64")
_X64_NAMES = ("int64", "uint64", "float64", "complex128")
_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


class ArrayNamespaceInfo:
    """The standard's inspection object. Dtypes do not depend on the device here (as in
    JAX); the 64-bit ones are listed only with x64 enabled."""

    _capabilities = {
        "boolean indexing": False,  # not inside transformations
        "data-dependent shapes": False,  # not inside transformations
        "max dimensions": 64,  # XLA's limit
    }

    def capabilities(self) -> dict:
        return self._capabilities

    def default_device(self):
        # Arrays are uncommitted by default: placement is left to Olympus.
        return None

    def devices(self) -> list:
        import olympus

        return [None, *olympus.devices()]

    def default_dtypes(self, *, device=None) -> dict:
        del device
        return {
            "real floating": dtypes.default_float(),
            "complex floating": dtypes.default_complex(),
            "integral": dtypes.default_int(),
            "indexing": dtypes.default_int(),
        }

    def dtypes(self, *, device=None, kind: str | tuple[str, ...] | None = None) -> dict:
        del device
        allowed = set(_X32_NAMES) | (set(_X64_NAMES) if dtypes.is_x64_enabled() else set())
        if kind is None:
            names = _KINDS["numeric"] + _KINDS["bool"]
        elif isinstance(kind, tuple):
            names = tuple(n for k in kind for n in _KINDS[k])
        else:
            names = _KINDS[kind]
        import numpy as np

        return {n: np.dtype(n) for n in names if n in allowed}
