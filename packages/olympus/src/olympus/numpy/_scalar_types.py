"""Scalar type objects (`olympus.numpy.float32` ...): usable as dtypes and callable to make
0-d (or n-d) arrays of that dtype, as in JAX."""

from __future__ import annotations

import numpy as np

from olympus_ir import dtypes


class _ScalarType:
    def __init__(self, dt: np.dtype, name: str):
        self.dtype = np.dtype(dt)
        self.__name__ = name
        self.__doc__ = (f"The `{name}` scalar type of olympus.numpy (dtype {self.dtype.name}): "
                        f"`{name}(x)` is `asarray(x, {self.dtype.name})`; it compares equal to "
                        f"NumPy's type and dtype.")

    def __call__(self, x):
        from . import asarray

        return asarray(x, self.dtype)

    def __repr__(self) -> str:
        return f"<class 'olympus.numpy.{self.__name__}'>"

    def __eq__(self, other):
        # Equal to itself, to NumPy's scalar type and to the NumPy dtype, as JAX's are
        # (array-API code compares ``x.dtype == xp.float32``); never to strings.
        if isinstance(other, _ScalarType):
            return other.dtype == self.dtype
        if isinstance(other, np.dtype):
            return other == self.dtype
        return other is self.dtype.type

    def __hash__(self):
        return hash(self.dtype)


bool_ = _ScalarType(dtypes.bool_, "bool_")
int8 = _ScalarType(dtypes.int8, "int8")
int16 = _ScalarType(dtypes.int16, "int16")
int32 = _ScalarType(dtypes.int32, "int32")
int64 = _ScalarType(dtypes.int64, "int64")
uint8 = _ScalarType(dtypes.uint8, "uint8")
uint16 = _ScalarType(dtypes.uint16, "uint16")
uint32 = _ScalarType(dtypes.uint32, "uint32")
uint64 = _ScalarType(dtypes.uint64, "uint64")
float16 = _ScalarType(dtypes.float16, "float16")
bfloat16 = _ScalarType(dtypes.bfloat16, "bfloat16")
float32 = _ScalarType(dtypes.float32, "float32")
float64 = _ScalarType(dtypes.float64, "float64")
complex64 = _ScalarType(dtypes.complex64, "complex64")
complex128 = _ScalarType(dtypes.complex128, "complex128")

# The narrow types (ml_dtypes' float8/float6/float4 and 1/2/4-bit integers), as JAX exports
# them from jax.numpy.
float8_e3m4 = _ScalarType(dtypes.float8_e3m4, "float8_e3m4")
float8_e4m3 = _ScalarType(dtypes.float8_e4m3, "float8_e4m3")
float8_e4m3b11fnuz = _ScalarType(dtypes.float8_e4m3b11fnuz, "float8_e4m3b11fnuz")
float8_e4m3fn = _ScalarType(dtypes.float8_e4m3fn, "float8_e4m3fn")
float8_e4m3fnuz = _ScalarType(dtypes.float8_e4m3fnuz, "float8_e4m3fnuz")
float8_e5m2 = _ScalarType(dtypes.float8_e5m2, "float8_e5m2")
float8_e5m2fnuz = _ScalarType(dtypes.float8_e5m2fnuz, "float8_e5m2fnuz")
float8_e8m0fnu = _ScalarType(dtypes.float8_e8m0fnu, "float8_e8m0fnu")
float6_e2m3fn = _ScalarType(dtypes.float6_e2m3fn, "float6_e2m3fn")
float6_e3m2fn = _ScalarType(dtypes.float6_e3m2fn, "float6_e3m2fn")
float4_e2m1fn = _ScalarType(dtypes.float4_e2m1fn, "float4_e2m1fn")
int4 = _ScalarType(dtypes.int4, "int4")
uint4 = _ScalarType(dtypes.uint4, "uint4")
int2 = _ScalarType(dtypes.int2, "int2")
uint2 = _ScalarType(dtypes.uint2, "uint2")
int1 = _ScalarType(dtypes.int1, "int1")
uint1 = _ScalarType(dtypes.uint1, "uint1")
