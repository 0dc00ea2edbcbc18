"""``r_`` and ``c_``: concatenation by indexing syntax, as NumPy's and JAX's. Slices
become ranges (``arange``, or ``linspace`` for an imaginary step, endpoint included);
a leading string directive ``"axis,ndmin,trans1d"`` (or ``"r"``/``"c"``) sets how items
are stacked."""

from __future__ import annotations

import operator

import numpy as np

from olympus_trace.core import concrete_or_error

__all__ = ["r_", "c_", "RClass", "CClass"]


def _grid_from_slice(s: slice, op_name: str):
    from ._creation import arange, linspace

    def concrete(v, what):
        return concrete_or_error(None, v, f"slice {what} of olympus.numpy.{op_name}")

    start = concrete(s.start, "start") if s.start is not None else None
    stop = concrete(s.stop, "stop")
    step = concrete(s.step, "step") if s.step is not None else None
    if isinstance(step, complex) or np.iscomplexobj(step):
        n = int(abs(step))
        return linspace(0 if start is None else start, stop, n)
    start = 0 if start is None else start
    step = 1 if step is None else step
    return arange(start, stop, step)


class _AxisConcat:
    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key):
        from ._creation import array
        from ._shape import concatenate, expand_dims, transpose

        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive == "r":
                params[3] = 0
            elif directive == "c":
                params[3] = 1
            else:
                parts = directive.split(",")
                parts = parts + params[len(parts):] if len(parts) < 4 else parts[:3] + [-1]
                try:
                    params = [operator.index(int(p)) for p in parts]
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        pieces = []
        for item in items:
            if isinstance(item, slice):
                obj, item_ndim = _grid_from_slice(item, self.op_name), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                obj = array(item, copy=False)
                item_ndim = obj.ndim
            obj = array(obj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                # Move the item's own axes to position trans1d of the ndmin-d result.
                order = tuple(range(ndmin))
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                obj = transpose(obj, order[shift:] + order[:shift])
            pieces.append(obj)
        out = concatenate(tuple(pieces), axis=axis)
        if matrix != -1 and out.ndim == 1:
            out = expand_dims(out, matrix)
        return out

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """Concatenates slices, scalars and arrays along the first axis (``numpy.r_``)."""

    axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"

    def __repr__(self) -> str:
        return "<olympus.numpy.r_>"


class CClass(_AxisConcat):
    """Concatenates along the last axis, upgrading 1-d items to columns (``numpy.c_``)."""

    axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"

    def __repr__(self) -> str:
        return "<olympus.numpy.c_>"


r_ = RClass()
c_ = CClass()
