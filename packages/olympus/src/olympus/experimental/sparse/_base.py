"""`OLYMPUSSparse`: the base class of the sparse array formats (JAX's ``JAXSparse``)."""

from __future__ import annotations

import abc
import math

from olympus_trace.core import Tracer

__all__ = ["OLYMPUSSparse"]


class OLYMPUSSparse(abc.ABC):
    """Base class of the sparse array objects: a shape, buffers that are pytree leaves,
    and the array methods each format implements (the rest raise NotImplementedError,
    as in JAX)."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, args, *, shape):
        self.shape = tuple(int(s) for s in shape)

    @property
    def dtype(self):
        """The element dtype (that of ``data``)."""
        return self.data.dtype

    @property
    def nse(self) -> int:
        """The number of specified (stored) elements (per batch, for the batched formats,
        which say so themselves)."""
        return self.data.size

    def __len__(self):
        return self.shape[0]

    @property
    def size(self) -> int:
        """The number of elements of the dense array."""
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    def _repr_extra(self) -> str:
        return ""

    def __repr__(self):
        name = type(self).__name__
        try:
            text = f"{name}({self.dtype}{list(self.shape)}, nse={self.nse}{self._repr_extra()})"
        except Exception:
            text = f"{name}(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    @abc.abstractmethod
    def tree_flatten(self):
        """(buffers, static info), as a pytree node."""

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuild from `tree_flatten`'s parts."""

    @abc.abstractmethod
    def transpose(self, axes=None):
        """The transposed array."""

    @abc.abstractmethod
    def todense(self):
        """The dense array."""

    @property
    def T(self):
        """The transposed array (all axes reversed)."""
        return self.transpose()

    def block_until_ready(self):
        """Wait for every buffer; returns self."""
        for arg in self.tree_flatten()[0]:
            arg.block_until_ready()
        return self

    def _unsupported(self, what):
        raise NotImplementedError(f"{type(self)}.{what}")

    def sum(self, *args, **kwargs):
        """Sum (not supported by every format)."""
        self._unsupported("sum")

    def __neg__(self):
        self._unsupported("__neg__")

    def __pos__(self):
        self._unsupported("__pos__")

    def __matmul__(self, other):
        self._unsupported("__matmul__")

    def __rmatmul__(self, other):
        self._unsupported("__rmatmul__")

    def __mul__(self, other):
        self._unsupported("__mul__")

    def __rmul__(self, other):
        self._unsupported("__rmul__")

    def __add__(self, other):
        self._unsupported("__add__")

    def __radd__(self, other):
        self._unsupported("__radd__")

    def __sub__(self, other):
        self._unsupported("__sub__")

    def __rsub__(self, other):
        self._unsupported("__rsub__")

    def __getitem__(self, item):
        self._unsupported("__getitem__")
