"""The wrappers of ``ffi_call`` and ``buffer_callback`` (`olympus_ir.prims.ffi`), behind
`olympus.ffi.ffi_call` and `olympus.experimental.buffer_callback` (not part of
``jax.lax``)."""

from __future__ import annotations

from olympus_ir import primitives as P

from ..core import bind

__all__ = ["ffi_call", "buffer_callback"]


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


def buffer_callback(*args, callback, result_avals, in_tree, out_tree, vmap_method=None,
                    has_side_effect=False, input_output_aliases=(),
                    command_buffer_compatible=False):
    """Call `callback` on the buffers of `args` and of the results (see
    `olympus_ir.prims.ffi`); returns the list of its results."""
    return bind(P.buffer_callback_p, *args, callback=callback,
                result_avals=tuple(result_avals), in_tree=in_tree, out_tree=out_tree,
                vmap_method=vmap_method, has_side_effect=bool(has_side_effect),
                input_output_aliases=tuple(input_output_aliases),
                command_buffer_compatible=bool(command_buffer_compatible))
