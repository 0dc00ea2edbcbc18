"""`olympus.experimental`: APIs JAX keeps under ``jax.experimental``: `io_callback` and
the `checkify`, `compilation_cache` and `random` modules (imported on first use)."""

from .._src.callbacks import io_callback

__all__ = ["io_callback", "checkify"]


def __getattr__(name: str):
    if name in ("checkify", "compilation_cache"):
        import importlib

        return importlib.import_module(f"{__name__}.checkify")
    if name == "random":
        import importlib

        return importlib.import_module(f"{__name__}.random")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
