"""`olympus.dlpack`: importing arrays from other libraries through the DLPack protocol.

jaxlib's own importer (``dlpack_managed_tensor_to_buffer``) attempts ``import jax.core``
(JAXLIB.md §4), so the import-free route is taken: an Olympus array is used as it is (or
copied), and any other producer's tensor is read through NumPy's DLPack consumer and put
on the device. The result is committed to its device and canonicalized as ``device_put``
canonicalizes (float64 -> float32 unless x64), as in JAX. Only CPU producers are
supported: the only backend here is CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import olympus_runtime as rt
from olympus_ir import dtypes

__all__ = ["from_dlpack", "is_supported_dtype", "SUPPORTED_DTYPES"]

SUPPORTED_DTYPES = frozenset({
    dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16,
    dtypes.uint32, dtypes.uint64, dtypes.float16, dtypes.bfloat16, dtypes.float32,
    dtypes.float64, dtypes.complex64, dtypes.complex128, dtypes.bool_})

_K_DL_CPU = 1
_K_DL_CUDA_HOST = 3
_DL_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDAHost", 10: "ROCM"}


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` can be exchanged through DLPack."""
    if dtype is None:
        # np.dtype(None) is float64, which would hide the mistake.
        raise TypeError(f"Expected a string or dtype-like object; got dtype={dtype}")
    return np.dtype(dtype) in SUPPORTED_DTYPES


def _single_device(device: Any) -> Any:
    if device is None or isinstance(device, rt.Device):
        return device
    device_set = getattr(device, "device_set", None)
    if device_set is None:
        raise TypeError(f"from_dlpack: device must be a Device or a Sharding, got {device!r}")
    if len(device_set) > 1:
        raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular device, "
                         f"but a Sharding with {len(device_set)} devices was provided.")
    (d,) = device_set
    return d


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Any:
    """An olympus array holding the values of `external_array`, any object with the
    ``__dlpack__`` and ``__dlpack_device__`` methods (a NumPy array, a torch CPU tensor,
    an olympus array ...), committed to `device` (default: the first CPU device)."""
    device = _single_device(device)
    if not (hasattr(external_array, "__dlpack__")
            and hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    dl_type, dl_id = external_array.__dlpack_device__()
    if int(dl_type) not in (_K_DL_CPU, _K_DL_CUDA_HOST):
        raise TypeError("Array passed to from_dlpack is on unsupported device type "
                        f"(DLDeviceType: {dl_type}, array: {external_array}")
    target = device if device is not None else rt.devices()[0]
    if isinstance(external_array, rt.Array):
        src = next(iter(external_array.devices()))
        if copy is False and src != target:
            raise ValueError(
                f"Specified device={target!r} which requires a copy since the source device "
                f"is {src!r}, however copy=False. Set copy=True or copy=None to perform the "
                "requested operation.")
        if src == target and not copy:
            return rt.device_put(external_array, target)
        return rt.device_put(np.array(external_array), target)
    # NumPy's consumer: a zero-copy view of the producer's memory (strides kept), then
    # one transfer. NumPy cannot consume bfloat16; such a producer is read as uint16.
    try:
        host = np.from_dlpack(external_array)
    except (BufferError, TypeError, RuntimeError) as e:
        raise TypeError(f"from_dlpack: cannot import {type(external_array).__name__}: {e}"
                        ) from e
    return rt.device_put(np.array(host, copy=True), target)
