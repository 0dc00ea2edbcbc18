"""`olympus.experimental.transfer`: array transfers between processes over sockets (JAX's
``jax.experimental.transfer``), through jaxlib's socket transfer server.

A server (`start_transfer_server`) offers arrays under a number (`TransferServer.
await_pull`); a peer connects to its address (`TransferServer.connect`) and pulls them
by that number with the shapes, dtypes and shardings they will have on its side
(`TransferConnection.pull`). `make_error_array` makes an array whose use raises the
given message (a transfer that cannot be fulfilled sends one).

What Olympus adds to jaxlib, which aborts or blocks the process in these cases on CPU
(measured with jaxlib 0.10.2; JAX passes them through):

* a server started without ``transport_addresses`` aborts the process when another
  server pulls from it; Olympus gives it one on the host of its own address (IPv4), or on
  ``127.0.0.1``;
* an IPv6 transport address aborts the process when a peer pulls (the bulk transport's
  ``connect`` fails a check); Olympus refuses one with ValueError;
* a pull whose number is never offered never completes, timeout or not; with a
  ``timeout`` Olympus raises TimeoutError once it passes (the pull itself stays pending
  inside jaxlib).

The arrays jaxlib creates for a pull have no type of their own; Olympus gives them the
requested ones. (jaxlib's C++ tries ``import jax`` once when it creates them, see
``JAXLIB.md`` §13.)
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from typing import Any

from jaxlib import _jax

__all__ = ["TransferConnection", "TransferServer", "start_transfer_server",
           "make_error_array"]


def _host_port(address: str, what: str) -> tuple[str, int]:
    if not isinstance(address, str):
        raise TypeError(f"{what} must be a string 'host:port', got {address!r}")
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{what} must be 'host:port' (IPv6 hosts in brackets), got "
                         f"{address!r}")
    return host, int(port)


def _is_ipv6(host: str) -> bool:
    return host.startswith("[") and host.endswith("]")


def _transports(address: str, transport_addresses: Sequence[str]) -> list[str]:
    out = list(transport_addresses)
    for t in out:
        host, _ = _host_port(t, "transport address")
        if _is_ipv6(host):
            raise ValueError(f"transport address {t!r} is IPv6: jaxlib's bulk transport "
                             "aborts the process when a peer connects to one; use an IPv4 "
                             "address")
    if out:
        return out
    host, _ = _host_port(address, "address")
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        host = "127.0.0.1"
    return [f"{host}:0"]


def _client_of(sharding: Any, what: str):
    if sharding is None:
        raise AttributeError(f"{what}: each ShapeDtypeStruct needs a sharding (it says "
                             "where the arrays go)")
    return next(iter(sharding.device_set)).client


def _as_olympus_array(arr: Any, shape, dtype, sharding) -> Any:
    from olympus_ir import ShapedArray

    from ..numpy import dtype as _dtype

    return arr._rewrap_with_aval_and_sharding(ShapedArray(tuple(shape), _dtype(dtype)),
                                              sharding)


def _deadline(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, datetime.datetime):
        return timeout.timestamp()
    raise TypeError("timeout must be an absolute datetime.datetime (as in JAX), got "
                    f"{timeout!r}")


def _wait_until(arrays: list, deadline: float) -> None:
    """Return once `arrays` are ready; TimeoutError once `deadline` (a UNIX time) passes.
    (Polled: a thread blocked inside jaxlib would abort the process at exit.)"""
    import time

    pause = 0.0005
    while not all(a.is_ready() for a in arrays):
        if time.time() >= deadline:
            raise TimeoutError("transfer pull did not complete before its timeout (nothing "
                               "was offered under that number)")
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


class TransferConnection:
    """A connection to one peer's transfer server (made by `TransferServer.connect`)."""

    __slots__ = ("_conn",)

    def __init__(self, conn: Any):
        self._conn = conn

    def pull(self, uuid: int, xs: Any, timeout: Any = None) -> Any:
        """The arrays the peer offered under `uuid`, shaped as the pytree `xs` of
        ShapeDtypeStruct (each with its sharding here) says. `timeout` is an absolute
        ``datetime.datetime``: past it, TimeoutError."""
        from .. import tree_util

        leaves, tree = tree_util.tree_flatten(xs)
        if not leaves:
            return xs
        client = _client_of(getattr(leaves[0], "sharding", None), "pull")
        for x in leaves:
            _client_of(getattr(x, "sharding", None), "pull")
        deadline = _deadline(timeout)
        if deadline is None:
            flat = self._conn._pull_flat(int(uuid), client, list(leaves))
        else:
            flat = self._conn._pull_flat(int(uuid), client, list(leaves), timeout=timeout)
        out = [_as_olympus_array(a, x.shape, x.dtype, x.sharding)
               for a, x in zip(flat, leaves, strict=True)]
        if deadline is not None:
            _wait_until(out, deadline)
        return tree_util.tree_unflatten(tree, out)


class TransferServer:
    """A socket server that offers arrays to peers (made by `start_transfer_server`)."""

    __slots__ = ("_server",)

    def __init__(self, server: Any):
        self._server = server

    def address(self) -> str:
        """The address peers connect to."""
        return self._server.address()

    def connect(self, address: str) -> TransferConnection:
        """A connection to the transfer server at `address`."""
        _host_port(address, "address")
        return TransferConnection(self._server.connect(address))

    def await_pull(self, uuid: int, arrays: Any, timeout: Any = None) -> None:
        """Offer the pytree of arrays `arrays` under the number `uuid`, for one pull."""
        from .. import Array, tree_util

        leaves = tree_util.tree_leaves(arrays)
        for i, a in enumerate(leaves):
            if not isinstance(a, Array):
                raise TypeError(f"await_pull: leaf {i} of arrays must be an olympus.Array, "
                                f"got {type(a).__name__}")
        if timeout is None:
            self._server._await_pull_flat(int(uuid), leaves)
        else:
            _deadline(timeout)
            self._server._await_pull_flat(int(uuid), leaves, timeout=timeout)


def start_transfer_server(client: Any, address: str = "[::]:0",
                          transport_addresses: Sequence[str] = (),
                          **options: Any) -> TransferServer:
    """Start a transfer server for the device client `client` (e.g.
    ``olympus.devices()[0].client``) listening on `address` (port 0: a free one). Bulk
    data goes over `transport_addresses` (default: see the module docstring); `options`
    are jaxlib's (``max_num_parallel_copies``, ``transfer_size``,
    ``supports_pinned_allocator``, ``use_raw_buffers``)."""
    if not isinstance(client, _jax.Client):
        raise TypeError("start_transfer_server: client must be a device client (e.g. "
                        f"olympus.devices()[0].client), got {client!r}")
    _host_port(address, "address")
    return TransferServer(_jax.start_transfer_server(
        client, address, _transports(address, transport_addresses), **options))


def make_error_array(aval: Any, message: Any) -> Any:
    """An array of `aval`'s shape, dtype and sharding whose use raises `message` (as a
    runtime error)."""
    client = _client_of(getattr(aval, "sharding", None), "make_error_array")
    arr = _jax._make_error_array(client, aval, str(message))
    return _as_olympus_array(arr, aval.shape, aval.dtype, aval.sharding)
