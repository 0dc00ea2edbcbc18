"""Reading arrays that live on several devices back to the host, without importing jax.

jaxlib's per-shard accessors (``arr._arrays``, ``disassemble_into_single_device_arrays``)
create single-device arrays in C++, which tries ``import jax.core`` (JAXLIB.md §13). The
import-free route: DLPack exports the first shard. For a replicated array that is the
whole value; a split array is first gathered by a tiny compiled identity program whose
output is replicated (a Shardy module, built here from text and cached per layout).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from jaxlib.mlir import ir

from ._host import _dlpack_to_numpy, to_numpy

__all__ = ["value_of", "make_mlir_context", "sdy_mesh_and_sharding"]

# The context does not keep its thread pool alive; compiling a module whose context's
# pool was collected crashes the process. One pool, kept for the process's lifetime.
_THREAD_POOL: Any = None
_local = threading.local()
_gathers: dict[tuple, Any] = {}
_gathers_lock = threading.Lock()


def make_mlir_context() -> ir.Context:
    """An MLIR context with the StableHLO-family dialects (JAXLIB.md §1)."""
    # Imported here, not at module level: the dialect modules cost ~80 ms of import time
    # and only compiling needs them.
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import chlo, mhlo, sdy
    from jaxlib.mlir.dialects import stablehlo as hlo

    global _THREAD_POOL
    if _THREAD_POOL is None:
        _THREAD_POOL = ir.ThreadPool()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context.__new__(ir.Context)
    super(ir.Context, ctx).__init__()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    ctx.set_thread_pool(_THREAD_POOL)
    sdy.register_dialect(ctx)
    mhlo.register_mhlo_dialect(ctx)
    chlo.register_dialect(ctx)
    hlo.register_dialect(ctx)
    return ctx


def _context() -> ir.Context:
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = make_mlir_context()
    return ctx


def sdy_mesh_and_sharding(sharding: Any, ndim: int) -> tuple[str, str]:
    """Shardy text for a tiled `GSPMDSharding`: (``sdy.mesh`` op, ``#sdy.sharding`` attr).

    Mesh axis ``a<i>`` splits array dimension i; ``r`` is the replicated tile dimension.
    Device ids are the logical ids (positions in the sharding's device list).
    """
    dims, tile_devices = sharding._tiles(ndim)
    axes = []
    dim_axes = []
    for i in range(ndim):
        if dims[i] > 1:
            axes.append(f'"a{i}"={dims[i]}')
            dim_axes.append(f'{{"a{i}"}}')
        else:
            dim_axes.append("{}")
    if len(dims) > ndim and dims[ndim] > 1:
        axes.append(f'"r"={dims[ndim]}')
    ids = "" if tile_devices == list(range(len(tile_devices))) else (
        f", device_ids=[{', '.join(map(str, tile_devices))}]"
    )
    mesh = f"sdy.mesh @mesh = <[{', '.join(axes)}]{ids}>"
    return mesh, f"#sdy.sharding<@mesh, [{', '.join(dim_axes)}]>"


def _gather_executable(aval: Any, sharding: Any) -> Any:
    from jaxlib.mlir import ir

    from .compiler import _MLIR_ELEMENT_TYPES, compile

    key = (aval.shape, aval.dtype, sharding)
    exe = _gathers.get(key)
    if exe is not None:
        return exe
    ndim = len(aval.shape)
    n = len(sharding._internal_device_list)
    mesh, split = sdy_mesh_and_sharding(sharding, ndim)
    replicated = f"#sdy.sharding<@mesh, [{', '.join(['{}'] * ndim)}]>"
    t = f"tensor<{''.join(f'{d}x' for d in aval.shape)}{_MLIR_ELEMENT_TYPES[aval.dtype]}>"
    text = f"""
module @olympus_gather attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{
  {mesh}
  func.func public @main(%a: {t} {{sdy.sharding = {split}}}) -> ({t} {{sdy.sharding = {replicated}}}) {{
    return %a : {t}
  }}
}}"""
    with _context(), ir.Location.unknown():
        module = ir.Module.parse(text)
    exe = compile(module, devices=list(sharding._internal_device_list), num_partitions=n,
                  in_avals=[aval], out_avals=[aval])
    with _gathers_lock:
        return _gathers.setdefault(key, exe)


def value_of(arr: Any) -> np.ndarray:
    """The value of a live array as a read-only numpy array (the caller checks deletion)."""
    device_list = arr._sharding._internal_device_list
    if len(device_list) == 1:
        return to_numpy(arr)
    aval = arr.aval
    ndim = len(aval.shape)
    if not arr._sharding._to_xla_hlo_sharding(ndim).is_replicated():
        arr = _gather_executable(aval, arr._sharding).execute([arr])[0]
    return _dlpack_to_numpy(arr, aval.dtype, tuple(aval.shape))
