"""Colocated Python classes, in this process.

The wrapper records the constructor's arguments; the real object is built at the first
method call (once, by whichever method comes first; a constructor's exception is raised
again by later calls) and is released when the wrapper is: the wrapper's methods are the
only holders of the real object, so deleting the wrapper deletes it (its ``__del__``
runs then).
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from .func import make_callable, spec_of

__all__ = ["wrap_class"]

_NOT_WRAPPED = ("__init__", "__del__", "__reduce__", "__reduce_ex__")


class _Instance:
    """The real object of one wrapper, built on first use."""

    __slots__ = ("cls", "args", "kwargs", "obj", "error", "lock")

    def __init__(self, cls: type, args: tuple, kwargs: dict):
        self.cls, self.args, self.kwargs = cls, args, kwargs
        self.obj = self.error = None
        self.lock = threading.Lock()

    def get(self) -> Any:
        with self.lock:
            if self.error is not None:
                raise self.error
            if self.obj is None:
                try:
                    self.obj = self.cls(*self.args, **self.kwargs)
                except Exception as e:
                    self.error = e
                    raise
                self.args = self.kwargs = None
            return self.obj


def _method(instance: _Instance, name: str, original: Callable[..., Any]):
    def run(*args, **kwargs):
        return getattr(instance.get(), name)(*args, **kwargs)

    functools.update_wrapper(run, original)
    return _method_wrapper(make_callable(run), original)


def _method_wrapper(callable_: Callable[..., Any], original: Callable[..., Any]):
    from ... import tree_util

    @functools.wraps(original)
    def method(*args, **kwargs):
        for x in tree_util.tree_leaves((args, kwargs)):
            spec_of(x)
        return callable_(*args, **kwargs)

    def specialize(*args, **kwargs):
        return _method_wrapper(callable_.specialize(*args, **kwargs), original)

    method.specialize = specialize
    return method


def wrap_class(cls: type) -> type:
    """The wrapper class of `cls` (see the module docstring)."""

    class WrappedClass:
        @functools.wraps(cls.__init__)
        def __init__(self, *init_args, **init_kwargs) -> None:
            instance = _Instance(cls, init_args, init_kwargs)
            for name in dir(cls):
                original = getattr(cls, name)
                if not inspect.isfunction(original) or name in _NOT_WRAPPED:
                    continue
                setattr(self, name, _method(instance, name, original))

    WrappedClass.__name__ = cls.__name__
    WrappedClass.__doc__ = cls.__doc__
    return WrappedClass
