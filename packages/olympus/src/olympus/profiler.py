"""`olympus.profiler`: traces of what the program does, for TensorBoard or Perfetto
(``jax.profiler`` on jaxlib's profiler, ``jaxlib._profiler``).

``with olympus.profiler.trace(log_dir):`` (or `start_trace` / `stop_trace`) records host
activity (Python functions, `TraceAnnotation` ranges) and the XLA executions on the CPU
device, and writes ``<log_dir>/plugins/profile/<run>/<host>.xplane.pb`` (TensorBoard's
profile plugin reads it) and ``<host>.trace.json.gz`` (Chrome trace format, which Perfetto
opens); with ``create_perfetto_trace=True`` also ``perfetto_trace.json.gz``, the same
trace without its ``metadata`` field. `device_memory_profile` gives the live device
buffers as a gzipped pprof profile.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import pathlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from jaxlib import _profile_data, _profiler

from .__about__ import __version__

__all__ = [
    "ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane", "StepTraceAnnotation",
    "TraceAnnotation", "annotate_function", "device_memory_profile", "register_subprocess",
    "save_device_memory_profile", "start_server", "start_trace", "stop_server", "stop_trace",
    "trace",
]

ProfileData = _profile_data.ProfileData
ProfileEvent = _profile_data.ProfileEvent
ProfilePlane = _profile_data.ProfilePlane
ProfileOptions = _profiler.ProfileOptions


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.session: Any = None
        self.log_dir: str | None = None
        self.perfetto = False


_state = _State()
_server: Any = None


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Start recording a trace that `stop_trace` writes under `log_dir`. One trace at a
    time: a RuntimeError if one is running. `create_perfetto_link` (JAX serves the file
    to ui.perfetto.dev and blocks until it is fetched) is not supported: it only implies
    `create_perfetto_trace` here."""
    import olympus_runtime as rt

    if not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"start_trace: log_dir must be a path, got {type(log_dir).__name__}")
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        rt.backend.get_client()  # the device exists before the session starts
        _profiler.clear_metadata()
        _profiler.set_metadata("olympus_version", __version__)
        _state.session = _profiler.ProfilerSession(profiler_options or ProfileOptions())
        _state.log_dir = os.fspath(log_dir)
        _state.perfetto = bool(create_perfetto_trace or create_perfetto_link)


def stop_trace() -> None:
    """Stop the running trace and write it to its `log_dir`; RuntimeError if none runs."""
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started")
        session, log_dir, perfetto = _state.session, _state.log_dir, _state.perfetto
        _state.session, _state.log_dir, _state.perfetto = None, None, False
        session.stop_and_export(log_dir)
        _profiler.clear_metadata()
        if perfetto:
            _write_perfetto_trace(log_dir)


def _latest_run(log_dir: str) -> pathlib.Path:
    runs = list((pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir())
    return max(runs, key=os.path.getmtime)


def _write_perfetto_trace(log_dir: str) -> pathlib.Path:
    """``perfetto_trace.json.gz`` beside the run's ``*.trace.json.gz``, without the
    ``metadata`` field Perfetto does not read; written atomically."""
    run = _latest_run(log_dir)
    found = list(run.glob("*.trace.json.gz"))
    if len(found) != 1:
        raise ValueError(f"Invalid trace folder: {run}")
    with gzip.open(found[0], "rb") as f:
        trace_json = json.load(f)
    trace_json.pop("metadata", None)
    out = run / "perfetto_trace.json.gz"
    tmp = run / "perfetto_trace.json.gz.tmp"
    with gzip.open(tmp, "wb") as f:
        f.write(json.dumps(trace_json).encode("utf-8"))
    os.replace(tmp, out)
    return out


@contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False,
          profiler_options: ProfileOptions | None = None) -> Iterator[None]:
    """Record a trace of the block into `log_dir` (`start_trace` ... `stop_trace`)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation(_profiler.TraceMe):
    """``with TraceAnnotation("label"):`` a named range on the trace's host timeline
    (keyword arguments become its metadata)."""


class StepTraceAnnotation(TraceAnnotation):
    """A training step's range: ``StepTraceAnnotation("train", step_num=k)``."""

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable | None = None, name: str | None = None,
                      **decorator_kwargs: Any) -> Callable:
    """Decorator: each call of `func` is a `TraceAnnotation` named `name` (default: its
    qualified name)."""
    if func is None:
        return functools.partial(annotate_function, name=name, **decorator_kwargs)
    label = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


def device_memory_profile(backend: str | None = None) -> bytes:
    """The live device buffers as a gzipped pprof ``Profile`` (read it with ``pprof``)."""
    import olympus_runtime as rt

    if backend not in (None, "cpu"):
        raise ValueError(f"Unknown backend {backend!r}: Olympus runs on 'cpu'")
    return gzip.compress(rt.backend.get_client().heap_profile())


def save_device_memory_profile(filename: os.PathLike | str, backend: str | None = None) -> None:
    """Write `device_memory_profile` to `filename` (atomically)."""
    data = device_memory_profile(backend)
    tmp = f"{os.fspath(filename)}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, filename)


def start_server(port: int, requires_backend: bool = True) -> Any:
    """Serve profiles on `port` (TensorBoard's "capture profile" connects to it)."""
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    if requires_backend:
        import olympus_runtime as rt

        rt.backend.get_client()
    _server = _profiler.start_server(int(port))
    return _server


def stop_server() -> None:
    """Stop the server `start_server` started."""
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Profile the subprocess `pid` (serving on `port`) together with this process;
    returns the function that unregisters it."""
    return _profiler.register_subprocess(int(pid), int(port))
