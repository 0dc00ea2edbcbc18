"""Host-callback lowering (rules/callbacks.py): ``debug_callback``, ``pure_callback`` and
``io_callback`` as the host-callback custom call, the module's host-callback list, the
order token threaded through callbacks and control flow, the host-side checks of a
callback's results, and running the result on the CPU client with ``host_callbacks``."""

from __future__ import annotations

import numpy as np
import pytest
from _lower_util import Builder, _Cpu, closed_fn, execute
from jaxlib import xla_client as xc

from olympus_ir import ShapedArray, check_olympuspr
from olympus_ir import primitives as P
from olympus_ir.prims.callbacks import TOKEN_AVAL, debug_effect
from olympus_lower import lower_olympuspr
from olympus_lower.rules.callbacks import (
    check_callback_results,
    host_callback_wrapper,
    take_callback_error,
    thread_effect_tokens,
)

F32, I32 = np.dtype(np.float32), np.dtype(np.int32)


def A(shape, dt=F32):
    return ShapedArray(shape, dt)


def run_with_callbacks(lowered, *args):
    cpu = _Cpu.get()
    exe = cpu.client.compile_and_load(lowered.module, cpu.devices, xc.CompileOptions(),
                                      host_callbacks=list(lowered.host_callbacks))
    return execute(lowered, *args, exe=exe)


def recorder(log, tag):
    def cb(*vals):
        log.append((tag, *[v.tolist() for v in vals]))

    cb.__name__ = f"cb_{tag}"
    return cb


def test_lowers_to_ffi_custom_call_and_runs():
    log = []
    b = Builder()
    x = b.arg((3,), F32)
    n = b.arg((), I32)
    b.eqn(P.debug_callback_p, x, n, callback=recorder(log, "a"), effect=debug_effect)
    closed = b.build([x])
    lowered = lower_olympuspr(closed, name="cb")
    text = lowered.as_text()
    assert ("stablehlo.custom_call @xla_ffi_python_cpu_callback(%c, %arg0, %arg1) "
            '{backend_config = "", has_side_effect = true, mhlo.backend_config = '
            "{index = 0 : ui64}} : (tensor<i1>, tensor<3xf32>, tensor<i32>) -> tensor<i1>"
            ) in text
    assert len(lowered.host_callbacks) == 1
    (out,) = run_with_callbacks(lowered, np.arange(3, dtype=np.float32), np.int32(7))
    np.testing.assert_array_equal(out, [0, 1, 2])
    assert log == [("a", [0.0, 1.0, 2.0], 7)]


def test_indices_follow_the_host_callback_list():
    log = []
    b = Builder()
    x = b.arg((), F32)
    for tag in "abc":
        b.eqn(P.debug_callback_p, x, callback=recorder(log, tag), effect=debug_effect)
    lowered = lower_olympuspr(b.build([x]), name="three")
    for k in range(3):
        assert f"mhlo.backend_config = {{index = {k} : ui64}}" in lowered.as_text()
    run_with_callbacks(lowered, np.float32(2))
    assert log == [("a", 2.0), ("b", 2.0), ("c", 2.0)]


def test_no_callbacks_no_change():
    closed = closed_fn([A(())], lambda b, x: [b.eqn(P.neg_p, x)])
    assert thread_effect_tokens(closed) is closed
    assert lower_olympuspr(closed, name="plain").host_callbacks == ()


def test_token_threaded_through_scan_while_and_cond():
    log = []
    cb = recorder(log, "s")
    # scan body: print the carry, carry + x
    body = closed_fn([A(()), A(())], lambda b, c, x: (
        b.eqn(P.debug_callback_p, c, callback=cb, effect=debug_effect),
        [b.eqn(P.add_p, c, x), c])[1])
    # cond branch 1 prints, branch 0 does not
    br0 = closed_fn([A(())], lambda b, v: [v])
    br1 = closed_fn([A(())], lambda b, v: (
        b.eqn(P.debug_callback_p, v, callback=recorder(log, "t"), effect=debug_effect),
        [v])[1])
    # while: count to 2, printing in cond and body
    wcond = closed_fn([A((), I32)], lambda b, i: (
        b.eqn(P.debug_callback_p, i, callback=recorder(log, "wc"), effect=debug_effect),
        [b.eqn(P.lt_p, i, b.const(2, I32))])[1])
    wbody = closed_fn([A((), I32)], lambda b, i: [b.eqn(P.add_p, i, b.const(1, I32))])

    b = Builder()
    c0 = b.arg((), F32)
    xs = b.arg((3,), F32)
    idx = b.arg((), I32)
    c, ys = b.eqn(P.scan_p, c0, xs, olympuspr=body, length=3, reverse=False, num_consts=0,
                  num_carry=1, linear=(False, False), unroll=1)
    (r,) = b.eqn(P.cond_p, idx, c, branches=(br0, br1))
    (i,) = b.eqn(P.while_p, idx, cond_olympuspr=wcond, body_olympuspr=wbody,
                 cond_nconsts=0, body_nconsts=0)
    closed = b.build([r, ys, i])

    threaded = thread_effect_tokens(closed)
    check_olympuspr(threaded)  # the rewritten program is well typed
    # the while's cond prints: its predicate is computed first (a closed_call), then
    # carried by the loop, whose body computes it again after each step
    scan_eqn, cond_eqn, first_pred, while_eqn = threaded.eqns
    assert scan_eqn.params["num_carry"] == 2 and scan_eqn.invars[0].aval == TOKEN_AVAL
    assert scan_eqn.params["linear"] == (False, False, False)
    assert cond_eqn.invars[1] is scan_eqn.outvars[0]  # the token flows scan -> cond
    assert first_pred.primitive is P.closed_call_p
    assert first_pred.invars[0] is cond_eqn.outvars[0]  # ... -> the first predicate
    assert while_eqn.invars[:2] == first_pred.outvars  # ... -> the loop's carry
    assert while_eqn.params["cond_olympuspr"].eqns == []
    assert all(e.params.get("token") for e in scan_eqn.params["olympuspr"].eqns
               if e.primitive is P.debug_callback_p)

    lowered = lower_olympuspr(closed, name="flow")
    assert len(lowered.host_callbacks) == 4  # the while cond is lowered twice
    r, ys, i = run_with_callbacks(lowered, np.float32(1), np.array([1, 2, 3], np.float32),
                                  np.int32(1))
    assert float(r) == 7.0 and int(i) == 2
    np.testing.assert_array_equal(ys, [1, 2, 4])
    assert log == [("s", 1.0), ("s", 2.0), ("s", 4.0), ("t", 7.0), ("wc", 1), ("wc", 2)]


def test_closed_call_is_threaded():
    log = []
    callee = closed_fn([A(())], lambda b, v: (
        b.eqn(P.debug_callback_p, v, callback=recorder(log, "in"), effect=debug_effect),
        [b.eqn(P.neg_p, v)])[1])
    b = Builder()
    x = b.arg((), F32)
    b.eqn(P.debug_callback_p, x, callback=recorder(log, "before"), effect=debug_effect)
    (y,) = b.eqn(P.closed_call_p, x, call_olympuspr=callee)
    b.eqn(P.debug_callback_p, y, callback=recorder(log, "after"), effect=debug_effect)
    closed = b.build([y])
    check_olympuspr(thread_effect_tokens(closed))
    (out,) = run_with_callbacks(lower_olympuspr(closed, name="call"), np.float32(3))
    assert float(out) == -3.0
    assert log == [("before", 3.0), ("in", 3.0), ("after", -3.0)]


def test_host_wrapper_copies_and_returns_token():
    kept = []
    w = host_callback_wrapper(kept.append, [A((2,))], token=True)
    buf = np.array([1.0, 2.0], np.float32)
    buf.flags.writeable = False
    out = w(None, buf)
    assert len(out) == 1 and out[0].dtype == np.bool_
    assert kept[0] is not buf and kept[0].flags.writeable
    assert host_callback_wrapper(kept.append, [A((2,))])(buf) == ()


def test_exception_surfaces_as_runtime_error():
    def bad(x):
        raise ValueError("bad value")

    b = Builder()
    x = b.arg((), F32)
    b.eqn(P.debug_callback_p, x, callback=bad, effect=debug_effect)
    lowered = lower_olympuspr(b.build([x]), name="bad")
    with pytest.raises(Exception, match="ValueError: bad value"):
        run_with_callbacks(lowered, np.float32(1))


def test_while_cond_callback_survives_a_known_trip_count():
    # With a constant initial carry XLA knows the trip count and never runs the cond
    # computation; the rewritten loop computes the predicate in its body instead.
    log = []
    wcond = closed_fn([A((), I32)], lambda b, i: (
        b.eqn(P.debug_callback_p, i, callback=recorder(log, "c"), effect=debug_effect),
        [b.eqn(P.lt_p, i, b.const(3, I32))])[1])
    wbody = closed_fn([A((), I32)], lambda b, i: (
        b.eqn(P.debug_callback_p, i, callback=recorder(log, "b"), effect=debug_effect),
        [b.eqn(P.add_p, i, b.const(1, I32))])[1])
    b = Builder()
    zero = b.const(0, I32)
    (i,) = b.eqn(P.while_p, zero, cond_olympuspr=wcond, body_olympuspr=wbody, cond_nconsts=0,
                 body_nconsts=0)
    (out,) = run_with_callbacks(lower_olympuspr(b.build([i]), name="trip"))
    assert int(out) == 3
    assert log == [("c", 0), ("b", 0), ("c", 1), ("b", 1), ("c", 2), ("b", 2), ("c", 3)]


def test_while_body_callback_only():
    log = []
    wcond = closed_fn([A((), I32)], lambda b, i: [b.eqn(P.lt_p, i, b.const(2, I32))])
    wbody = closed_fn([A((), I32)], lambda b, i: (
        b.eqn(P.debug_callback_p, i, callback=recorder(log, "b"), effect=debug_effect),
        [b.eqn(P.add_p, i, b.const(1, I32))])[1])
    b = Builder()
    x = b.arg((), I32)
    (i,) = b.eqn(P.while_p, x, cond_olympuspr=wcond, body_olympuspr=wbody, cond_nconsts=0,
                 body_nconsts=0)
    b.eqn(P.debug_callback_p, i, callback=recorder(log, "after"), effect=debug_effect)
    closed = b.build([i])
    (loop, after) = thread_effect_tokens(closed).eqns
    assert loop.params["cond_olympuspr"].in_avals == [TOKEN_AVAL, A((), I32)]
    assert after.invars[0] is loop.outvars[0]
    (out,) = run_with_callbacks(lower_olympuspr(closed, name="body_only"), np.int32(0))
    assert int(out) == 2 and log == [("b", 0), ("b", 1), ("after", 2)]


def test_pure_and_io_callbacks_return_values_and_io_is_ordered():
    log = []

    def double(v):
        log.append(("pure", v.tolist()))
        return [v * 2]

    def record(v):
        log.append(("io", v.tolist()))
        return [v + 1]

    b = Builder()
    x = b.arg((2,), F32)
    (y,) = b.eqn(P.pure_callback_p, x, callback=double, result_avals=(A((2,)),),
                 vmap_method=None, sharding=None)
    (z,) = b.eqn(P.io_callback_p, y, callback=record, result_avals=(A((2,)),), ordered=True,
                 sharding=None)
    (w,) = b.eqn(P.io_callback_p, z, callback=record, result_avals=(A((2,)),),
                 ordered=False, sharding=None)
    closed = b.build([w])
    assert {str(e) for e in P.olympuspr_effects(closed)} == {"OrderedIO", "IO"}
    threaded = thread_effect_tokens(closed)
    check_olympuspr(threaded)
    io_eqns = [e for e in threaded.eqns if e.primitive is P.io_callback_p]
    assert all(e.params["token"] for e in io_eqns)
    assert io_eqns[1].invars[0] is io_eqns[0].outvars[0]  # the token orders them
    lowered = lower_olympuspr(closed, name="cbs")
    assert len(lowered.host_callbacks) == 3
    (out,) = run_with_callbacks(lowered, np.array([1, 2], np.float32))
    np.testing.assert_array_equal(out, [4, 6])
    assert log == [("pure", [1.0, 2.0]), ("io", [2.0, 4.0]), ("io", [3.0, 5.0])]


def test_callback_results_are_checked():
    avals = (A((2,)), A((), I32))
    ok = check_callback_results([np.ones(2, np.float64), 3], avals)  # canonicalized
    assert [v.dtype for v in ok] == [F32, I32]
    with pytest.raises(RuntimeError, match=r"Incorrect output shape for return value #0: "
                                           r"Expected: \(2,\), Actual: \(3,\)"):
        check_callback_results([np.ones(3, F32), np.int32(1)], avals)
    with pytest.raises(RuntimeError, match="Incorrect output dtype for return value #1: "
                                           "Expected: int32, Actual: float32"):
        check_callback_results([np.ones(2, F32), np.float32(1)], avals)
    with pytest.raises(RuntimeError, match="Mismatched number of outputs from callback. "
                                           "Expected: 2, Actual: 1"):
        check_callback_results([np.ones(2, F32)], avals)


def test_wrong_result_fails_the_execution_and_is_kept():
    b = Builder()
    x = b.arg((2,), F32)
    (y,) = b.eqn(P.pure_callback_p, x, callback=lambda v: [np.ones(5, F32)],
                 result_avals=(A((2,)),), vmap_method=None, sharding=None)
    lowered = lower_olympuspr(b.build([y]), name="bad")
    with pytest.raises(Exception, match="Incorrect output shape"):
        run_with_callbacks(lowered, np.ones(2, F32))
    err = take_callback_error()
    assert isinstance(err, RuntimeError) and "Incorrect output shape" in str(err)
    assert take_callback_error() is None

