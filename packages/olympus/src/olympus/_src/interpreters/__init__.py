"""``olympus._src.interpreters``: the private path of JAX's interpreters package, which
JAX's export page imports `mlir` from (see :mod:`olympus.interpreters`)."""
