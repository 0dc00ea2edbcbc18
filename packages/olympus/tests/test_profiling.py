"""`olympus.monitoring` (the compile and cache events go to registered listeners) and
`olympus.profiler` (a trace written to disk and read back: the TensorBoard xplane file,
the Chrome/Perfetto JSON with our annotations and the XLA execution, the Perfetto copy
without metadata; the device memory profile)."""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import monitoring, profiler


@pytest.fixture
def listeners():
    events, durations, spans, scalars = [], [], [], []
    fns = [(monitoring.register_event_listener, monitoring.unregister_event_listener,
            lambda e, **k: events.append((e, k))),
           (monitoring.register_event_duration_secs_listener,
            monitoring.unregister_event_duration_listener,
            lambda e, d, **k: durations.append((e, d, k))),
           (monitoring.register_event_time_span_listener,
            monitoring.unregister_event_time_span_listener,
            lambda e, s, t, **k: spans.append((e, s, t, k))),
           (monitoring.register_scalar_listener, monitoring.unregister_scalar_listener,
            lambda e, v, **k: scalars.append((e, v, k)))]
    for reg, _, fn in fns:
        reg(fn)
    yield events, durations, spans, scalars
    for _, unreg, fn in fns:
        unreg(fn)


def test_compile_and_cache_events_reach_listeners(listeners):
    events, durations, spans, scalars = listeners

    def monitored_fn(x):
        return x * 2

    f = olympus.jit(monitored_fn)
    f(jnp.ones(3))
    f(jnp.ones(3))  # cached: no new events
    mine = [(e, k) for e, k in events if k.get("fun_name") == "monitored_fn"]
    assert mine == [("/olympus/jit/cache_miss", {"fun_name": "monitored_fn"})]
    stages = [(e, d) for e, d, k in durations if k == {"fun_name": "monitored_fn"}]
    assert [e for e, _ in stages] == [
        "/olympus/core/compile/olympuspr_trace_duration",
        "/olympus/core/compile/olympuspr_to_mlir_module_duration",
        "/olympus/core/compile/backend_compile_duration"]
    assert all(d >= 0 for _, d in stages)
    mine_spans = [(s, t) for e, s, t, k in spans if k == {"fun_name": "monitored_fn"}]
    assert len(mine_spans) == 3 and all(s <= t for s, t in mine_spans)
    assert len([1 for e, v, k in scalars if k == {"fun_name": "monitored_fn"}]) == 3
    f(jnp.ones(4))  # a new signature: one more miss
    assert len([1 for e, k in events if k.get("fun_name") == "monitored_fn"]) == 2


def test_record_and_unregister():
    got = []

    def cb(event, **kw):
        got.append((event, kw))

    monitoring.register_event_listener(cb)
    assert cb in monitoring.get_event_listeners()
    monitoring.record_event("/my/event", source="test")
    monitoring.unregister_event_listener(cb)
    monitoring.record_event("/my/event")
    assert got == [("/my/event", {"source": "test"})]
    with pytest.raises(ValueError, match="not a registered event listener"):
        monitoring.unregister_event_listener(cb)
    vals = []
    monitoring.register_scalar_listener(lambda e, v, **k: vals.append(v))
    monitoring.record_scalar("/my/scalar", 3.5)
    monitoring.clear_event_listeners()
    monitoring.record_scalar("/my/scalar", 4.5)
    assert vals == [3.5]
    assert monitoring.get_scalar_listeners() == []


def _events(trace_json):
    return [e for e in trace_json["traceEvents"] if isinstance(e, dict)]


def test_trace_is_written_and_read_back(tmp_path):
    f = olympus.jit(lambda x: jnp.sin(x) @ x.T)
    x = jnp.ones((64, 64))
    f(x).block_until_ready()

    @profiler.annotate_function
    def annotated_step(x):
        return f(x).block_until_ready()

    with profiler.trace(tmp_path, create_perfetto_trace=True):
        with profiler.TraceAnnotation("olympus_test_region", answer=42):
            annotated_step(x)
        for step in range(2):
            with profiler.StepTraceAnnotation("train", step_num=step):
                f(x).block_until_ready()
    runs = list((tmp_path / "plugins" / "profile").iterdir())
    assert len(runs) == 1
    files = sorted(os.listdir(runs[0]))
    assert any(n.endswith(".xplane.pb") for n in files)
    (trace_file,) = [n for n in files if n.endswith(".trace.json.gz")]
    assert "perfetto_trace.json.gz" in files
    with gzip.open(runs[0] / trace_file, "rb") as fh:
        trace_json = json.load(fh)
    names = {e.get("name") for e in _events(trace_json)}
    assert "olympus_test_region" in names
    assert any(n and "annotated_step" in n for n in names)
    assert "train" in names
    region = next(e for e in _events(trace_json) if e.get("name") == "olympus_test_region")
    assert region["ph"] == "X" and region["dur"] > 0
    with gzip.open(runs[0] / "perfetto_trace.json.gz", "rb") as fh:
        perfetto = json.load(fh)
    assert "metadata" not in perfetto
    assert {e.get("name") for e in _events(perfetto)} >= {"olympus_test_region", "train"}
    xplane = profiler.ProfileData.from_file(str(runs[0] / next(
        n for n in files if n.endswith(".xplane.pb"))))
    assert [p.name for p in xplane.planes]


def test_start_stop_errors(tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    profiler.start_trace(str(tmp_path))
    try:
        with pytest.raises(RuntimeError, match="Profile has already been started"):
            profiler.start_trace(str(tmp_path))
    finally:
        profiler.stop_trace()
    assert (tmp_path / "plugins" / "profile").is_dir()
    with pytest.raises(ValueError, match="No active profiler server."):
        profiler.stop_server()


def test_device_memory_profile(tmp_path):
    keep = jnp.ones((256, 256))
    data = profiler.device_memory_profile()
    raw = gzip.decompress(data)
    assert len(raw) > 0 and raw[:1] in (b"\x0a", b"\x12", b"\x1a", b"\x22")  # a proto
    path = tmp_path / "memory.prof"
    profiler.save_device_memory_profile(path)
    assert gzip.decompress(path.read_bytes())[:1] == raw[:1]
    with pytest.raises(ValueError, match="Unknown backend 'tpu'"):
        profiler.device_memory_profile("tpu")
    np.testing.assert_array_equal(keep[0, :2], [1, 1])
