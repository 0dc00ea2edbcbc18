"""Reading a single-device array's buffer as a numpy array, without importing jax.

Most dtypes go through the Python buffer protocol jaxlib implements on ``ArrayImpl``
(``np.asarray(memoryview(arr))``): a read-only, zero-copy view of the device buffer.
jaxlib refuses bfloat16 there (``Buffers of type BF16 are not supported by the Python
buffer protocol``) and numpy refuses it over DLPack (``Unsupported dtype in DLTensor``),
so bfloat16 is read from jaxlib's DLPack capsule directly with ctypes: the capsule's
data pointer is exposed through ``__array_interface__`` as uint16 and viewed as
bfloat16. The capsule is kept alive as the view's base; when the view is collected the
capsule's destructor releases jaxlib's external reference. All jaxlib entry points used
here make no ``import jax`` attempt (JAXLIB.md §13).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from jaxlib import _jax

from olympus_ir import dtypes

__all__ = ["to_numpy", "NEEDS_DLPACK"]

#: dtypes the buffer protocol cannot export.
NEEDS_DLPACK = frozenset({dtypes.bfloat16})


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", _DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

_K_DL_CPU = 1
_UINT_OF_SIZE = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8"}


class _CapsuleView:
    """Exposes a DLPack capsule's memory to numpy and keeps the capsule alive."""

    __slots__ = ("__array_interface__", "_capsule")

    def __init__(self, interface: dict, capsule: Any):
        self.__array_interface__ = interface
        self._capsule = capsule


def _dlpack_to_numpy(arr: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    if 0 in shape:
        out = np.empty(shape, dtype)
        out.flags.writeable = False
        return out
    arr.block_until_ready()
    capsule = _jax.buffer_to_dlpack_managed_tensor(arr)
    t = _DLManagedTensor.from_address(_capsule_pointer(capsule, b"dltensor")).dl_tensor
    if t.device.device_type != _K_DL_CPU:  # pragma: no cover - CPU-only runtime
        raise BufferError(f"cannot read a buffer on DLPack device type {t.device.device_type}")
    if t.dtype.bits != dtype.itemsize * 8 or t.ndim != len(shape):
        raise BufferError(  # pragma: no cover - would mean the aval does not match the buffer
            f"device buffer ({t.ndim}-d, {t.dtype.bits}-bit) does not match "
            f"{dtype.name}{list(shape)}"
        )
    strides = None
    if t.strides:
        strides = tuple(int(t.strides[i]) * dtype.itemsize for i in range(t.ndim))
    interface = {
        "version": 3,
        "shape": tuple(shape),
        "typestr": _UINT_OF_SIZE[dtype.itemsize],
        "data": (t.data + t.byte_offset, True),  # True: read-only
        "strides": strides,
    }
    return np.asarray(_CapsuleView(interface, capsule)).view(dtype)


def to_numpy(arr: Any) -> np.ndarray:
    """A read-only numpy view of a live single-device array (the caller checks deletion)."""
    aval = arr.aval
    if aval.dtype in NEEDS_DLPACK:
        return _dlpack_to_numpy(arr, aval.dtype, aval.shape)
    return np.asarray(memoryview(arr))
