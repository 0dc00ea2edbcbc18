"""`olympus.experimental.transfer`: jaxlib's socket transfer server on CPU, in one process
and between two (loopback only, free ports, every pull bounded by a timeout, the child
process killed at the end). Expected messages were recorded from reference JAX 0.10.2
run in its own process; the cases where jaxlib aborts or blocks (and JAX with it) are
checked to raise instead."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.experimental import transfer

SDS = olympus.ShapeDtypeStruct


def _soon(seconds=20.0):
    return datetime.datetime.now() + datetime.timedelta(seconds=seconds)


@pytest.fixture(scope="module")
def client():
    return olympus.devices()[0].client


def _spec(x):
    return SDS(x.shape, x.dtype, sharding=x.sharding)


def test_pull_a_pytree_between_two_servers(client):
    server = transfer.start_transfer_server(client, "127.0.0.1:0")
    peer = transfer.start_transfer_server(client, "127.0.0.1:0")
    assert server.address().startswith("127.0.0.1:") and not server.address().endswith(":0")
    x = jnp.arange(12.0).reshape(3, 4)
    tree = {"a": x, "b": (jnp.int32(5), jnp.array([True, False]))}
    server.await_pull(7, tree)
    conn = peer.connect(server.address())
    assert isinstance(conn, transfer.TransferConnection)
    out = conn.pull(7, olympus.tree.map(_spec, tree), timeout=_soon())
    np.testing.assert_array_equal(np.asarray(out["a"]), np.arange(12.0).reshape(3, 4))
    assert int(out["b"][0]) == 5 and out["b"][1].tolist() == [True, False]
    assert repr(out["b"][0]) == "Array(5, dtype=int32)"
    assert out["a"].dtype == np.float32 and out["a"].sharding == x.sharding
    assert float((out["a"] * 2).sum()) == 132.0  # usable in computations
    assert conn.pull(8, [], timeout=_soon()) == []


def test_default_address_and_transport(client):
    """JAX's default address ``[::]:0``; without transport addresses jaxlib aborts when a
    second server pulls, so Olympus gives the server one (127.0.0.1 here)."""
    server = transfer.start_transfer_server(client)
    assert server.address().startswith("[::]:")
    peer = transfer.start_transfer_server(client, "127.0.0.1:0")
    x = jnp.arange(5, dtype=jnp.int32)
    server.await_pull(1, [x])
    (y,) = peer.connect(server.address()).pull(1, [_spec(x)], timeout=_soon())
    assert y.tolist() == [0, 1, 2, 3, 4]


def test_pull_never_offered_times_out(client):
    server = transfer.start_transfer_server(client, "127.0.0.1:0")
    peer = transfer.start_transfer_server(client, "127.0.0.1:0")
    conn = peer.connect(server.address())
    x = jnp.zeros(3)
    with pytest.raises(TimeoutError, match="did not complete before its timeout"):
        conn.pull(99, [_spec(x)], timeout=_soon(0.3))


def test_error_arrays(client):
    x = jnp.zeros(2)
    err = transfer.make_error_array(SDS((2,), jnp.float32, sharding=x.sharding), "bad thing")
    assert err.shape == (2,) and err.dtype == np.float32
    for use in (err.block_until_ready, lambda: np.asarray(err)):
        with pytest.raises(Exception, match="INTERNAL: bad thing"):
            use()
    # JAX raises this when ``err + 1`` dispatches; Olympus when its result is read.
    with pytest.raises(Exception, match="INTERNAL: Error dispatching computation: bad thing"):
        np.asarray(err + 1)
    server = transfer.start_transfer_server(client, "127.0.0.1:0")
    peer = transfer.start_transfer_server(client, "127.0.0.1:0")
    server.await_pull(1, [err])
    (got,) = peer.connect(server.address()).pull(1, [_spec(x)], timeout=_soon())
    with pytest.raises(Exception, match="INTERNAL: Error while transferring: bad thing"):
        np.asarray(got)


def test_errors(client):
    with pytest.raises(ValueError, match="address must be 'host:port'"):
        transfer.start_transfer_server(client, "notanaddress")
    with pytest.raises(TypeError, match="client must be a device client"):
        transfer.start_transfer_server(None)
    with pytest.raises(ValueError, match="is IPv6: jaxlib's bulk transport aborts"):
        transfer.start_transfer_server(client, "127.0.0.1:0", ["[::1]:0"])
    with pytest.raises(Exception, match="could not parse '99999' as a valid port"):
        transfer.start_transfer_server(client, "127.0.0.1:99999")  # jaxlib's own message
    server = transfer.start_transfer_server(client, "127.0.0.1:0")
    with pytest.raises(TypeError, match="leaf 0 of arrays must be an olympus.Array, got "
                       "ndarray"):
        server.await_pull(1, [np.arange(3.0)])
    conn = server.connect(server.address())
    with pytest.raises(AttributeError, match="needs a sharding"):
        conn.pull(1, [SDS((3,), jnp.float32)])
    with pytest.raises(TypeError, match="absolute datetime"):
        conn.pull(1, [_spec(jnp.zeros(3))], timeout=5)


_CHILD = textwrap.dedent("""
    import sys
    import olympus, olympus.numpy as jnp
    from olympus.experimental import transfer
    server = transfer.start_transfer_server(olympus.devices()[0].client, "127.0.0.1:0")
    server.await_pull(3, {"w": jnp.arange(6.0).reshape(2, 3) * 1.5, "n": jnp.int32(-4)})
    print(server.address(), flush=True)
    sys.stdin.readline()  # keep serving until the parent is done
""")


def test_pull_from_another_process(client):
    env = dict(os.environ)
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
    try:
        address = child.stdout.readline().strip()
        assert address.startswith("127.0.0.1:"), child.stderr.read() if child.poll() else address
        peer = transfer.start_transfer_server(client, "127.0.0.1:0")
        x = jnp.zeros((2, 3))
        out = peer.connect(address).pull(
            3, {"w": _spec(x), "n": SDS((), jnp.int32, sharding=x.sharding)}, timeout=_soon())
        np.testing.assert_array_equal(np.asarray(out["w"]),
                                      np.arange(6.0).reshape(2, 3) * 1.5)
        assert int(out["n"]) == -4
        child.stdin.write("done\n")
        child.stdin.flush()
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
