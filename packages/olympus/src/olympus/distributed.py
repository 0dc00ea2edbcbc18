"""`olympus.distributed`: run one program over several processes (jaxlib's distributed
runtime service and client, gloo CPU collectives). See `olympus_runtime.distributed`."""

from olympus_runtime.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
