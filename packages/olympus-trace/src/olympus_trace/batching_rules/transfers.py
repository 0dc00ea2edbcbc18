"""Batching of ``device_put``: a transfer moves whole arrays, so every operand keeps its
batch dimension."""

from __future__ import annotations

from olympus_ir.prims.transfers import device_put_p

from ..batching import batching_rules
from ..core import bind


def _device_put_batch_rule(axis_data, vals, dims, **params):
    return bind(device_put_p, *vals, **params), list(dims)


batching_rules[device_put_p] = _device_put_batch_rule
