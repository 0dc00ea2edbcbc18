"""Several processes as one program: jaxlib's distributed runtime and gloo collectives.

`initialize` connects this process to the coordinator (process 0 also runs the
coordination service, at `coordinator_address`); the CPU client then created by
`backend.get_client` spans every process's devices (process p's device ids start at
``p * 2048`` on CPU), runs XLA's cross-process collectives over TCP with gloo, and each
process holds only its own devices' shards. It must run before anything creates the CPU
client. `shutdown` disconnects (the coordinator last).
"""

from __future__ import annotations

import threading
from typing import Any

from jaxlib import _jax

from . import config

__all__ = ["initialize", "is_initialized", "shutdown", "client_options"]

_lock = threading.Lock()
_state: dict[str, Any] = {}
#: ``olympus_cpu_collectives_implementation``: "gloo" (TCP) or "mpi".
collectives_implementation = "gloo"


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: Any = None, *,
               coordinator_bind_address: str | None = None,
               initialization_timeout: int = 300, heartbeat_timeout_seconds: int = 100,
               shutdown_timeout_seconds: int = 300) -> None:
    """Join (process 0: start) the distributed runtime; see the module docstring."""
    if coordinator_address is None:
        raise ValueError("coordinator_address should be defined.")
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if isinstance(process_id, bool) or not isinstance(process_id, int):
        raise TypeError("process_id must be a nonnegative int. "
                        f"Got process_id={process_id} of type {type(process_id)}.")
    if isinstance(num_processes, bool) or not isinstance(num_processes, int):
        raise TypeError("num_processes must be a positive int. "
                        f"Got num_processes={num_processes} of type {type(num_processes)}.")
    if not 0 <= process_id < num_processes:
        raise ValueError(
            "process_id and num_processes must be nonnegative, with process_id < "
            f"num_processes. Got process_id={process_id}, num_processes={num_processes}.")
    if not isinstance(coordinator_address, str) or ":" not in coordinator_address:
        raise ValueError(f"coordinator_address must be 'host:port', got {coordinator_address!r}")
    if local_device_ids is not None:
        raise NotImplementedError(
            "local_device_ids selects accelerators; on CPU every process uses its "
            "olympus_num_cpu_devices virtual devices")
    with _lock:
        if _state:
            raise RuntimeError("distributed.initialize should only be called once.")
        with config._lock:
            if config._client_created:
                raise RuntimeError(
                    "olympus.distributed.initialize() must be called before any Olympus "
                    "calls that might initialise the XLA backend. This includes any "
                    "computation, but also calls to olympus.devices, olympus.device_put, "
                    "and others.")
        service = None
        if process_id == 0:
            bind = coordinator_bind_address or "[::]:" + coordinator_address.rsplit(":", 1)[1]
            service = _jax.get_distributed_runtime_service(
                bind, num_processes, heartbeat_timeout=heartbeat_timeout_seconds,
                shutdown_timeout=shutdown_timeout_seconds)
        client = _jax.get_distributed_runtime_client(
            coordinator_address, process_id, init_timeout=initialization_timeout,
            heartbeat_timeout=heartbeat_timeout_seconds,
            shutdown_timeout=shutdown_timeout_seconds, use_compression=True)
        try:
            client.connect()
        except Exception:
            if service is not None:
                service.shutdown()
            raise
        _state.update(service=service, client=client, process_id=process_id,
                      num_processes=num_processes, address=coordinator_address)


def is_initialized() -> bool:
    """Whether `olympus.distributed.initialize` has run in this process (and not `shutdown`)."""
    return bool(_state)


def client_options() -> dict:
    """Extra ``make_cpu_client`` arguments when the distributed runtime is up."""
    if not _state:
        return {}
    client = _state["client"]
    if collectives_implementation == "mpi":
        collectives = _jax.make_mpi_collectives()
    elif collectives_implementation == "gloo":
        collectives = _jax.make_gloo_tcp_collectives(distributed_client=client)
    else:
        raise ValueError("olympus_cpu_collectives_implementation must be 'gloo' or 'mpi', got "
                         f"{collectives_implementation!r}")
    return dict(distributed_client=client, node_id=_state["process_id"],
                num_nodes=_state["num_processes"], collectives=collectives)


def shutdown() -> None:
    """Leave the distributed runtime (a no-op when not initialized)."""
    with _lock:
        if not _state:
            return
        client, service = _state["client"], _state["service"]
        _state.clear()
        client.shutdown()
        if service is not None:
            service.shutdown()
