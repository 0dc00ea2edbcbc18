"""JVP and transpose of ``ffi_call`` and ``buffer_callback``: a foreign function is opaque,
so differentiating one is JAX's ValueError pointing to ``custom_jvp`` / ``custom_vjp``."""

from __future__ import annotations

from olympus_ir.prims.ffi import buffer_callback_p, ffi_call_p

from ..ad import jvp_rules, transpose_rules


def _not_differentiable(target_name: str) -> ValueError:
    return ValueError(f"The FFI call to `{target_name}` cannot be differentiated. You can use "
                      "`olympus.custom_jvp` or `olympus.custom_jvp` to add support.")


def _ffi_call_jvp(primals, tangents, *, target_name, **params):
    raise _not_differentiable(target_name)


def _ffi_call_transpose(*args, target_name, **params):
    raise _not_differentiable(target_name)


jvp_rules[ffi_call_p] = _ffi_call_jvp
transpose_rules[ffi_call_p] = _ffi_call_transpose


def _buffer_callback_jvp(primals, tangents, **params):
    raise ValueError("Buffer callbacks do not support JVP. Please use `olympus.custom_jvp` to "
                     "use callbacks while taking gradients.")


def _buffer_callback_transpose(*args, **params):
    raise ValueError("Buffer callbacks do not support transpose. Please use "
                     "`olympus.custom_vjp` to use callbacks while taking gradients.")


jvp_rules[buffer_callback_p] = _buffer_callback_jvp
transpose_rules[buffer_callback_p] = _buffer_callback_transpose
