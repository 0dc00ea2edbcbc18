"""Batching rules, one module per primitive family (the families of `olympus_ir.prims`).
Importing this package fills `batching.batching_rules`."""

from . import elementwise  # noqa: F401
