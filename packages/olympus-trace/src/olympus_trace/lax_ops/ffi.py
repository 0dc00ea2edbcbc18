"""The wrapper of ``ffi_call`` (`olympus_ir.prims.ffi`), behind `olympus.ffi.ffi_call`
(not part of ``jax.lax``)."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..core import bind

__all__ = ["ffi_call"]


def ffi_call(*args, target_name, result_avals, has_side_effect=False, vmap_method=None,
             input_layouts, output_layouts, input_output_aliases=(),
             custom_call_api_version=4, legacy_backend_config=None, attributes=()):
    """Call the registered FFI handler `target_name`; returns the list of its results."""
    return bind(P.ffi_call_p, *args, result_avals=tuple(result_avals),
                vmap_method=vmap_method, target_name=target_name,
                has_side_effect=bool(has_side_effect), input_layouts=tuple(input_layouts),
                output_layouts=tuple(output_layouts),
                input_output_aliases=tuple(input_output_aliases),
                custom_call_api_version=int(custom_call_api_version),
                legacy_backend_config=legacy_backend_config, attributes=tuple(attributes))
