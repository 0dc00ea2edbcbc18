"""
Experimental key-reuse checking
-------------------------------

Detects a random key used more than once in an Olympus program. Experimental, as JAX's
``jax.experimental.key_reuse``: the interface may change.

Turn the check on everywhere with the ``olympus_debug_key_reuse`` option::

  >>> olympus.config.update('olympus_debug_key_reuse', True)  # doctest: +SKIP

or for a block with the :func:`olympus.debug_key_reuse` context manager. A typed key (one
made by :func:`olympus.random.key`) used a second time then raises
:class:`~olympus.errors.KeyReuseError`::

  >>> import olympus
  >>> with olympus.debug_key_reuse(True):
  ...   key = olympus.random.key(0)
  ...   val1 = olympus.random.normal(key)
  ...   val2 = olympus.random.normal(key)  # doctest: +IGNORE_EXCEPTION_DETAIL
  Traceback (most recent call last):
   ...
  KeyReuseError: Previously-consumed key passed to jit-compiled function at index 0

Under ``jit`` the whole program is checked when it is traced (the error names the
primitive that consumed a consumed key); outside a trace each call checks the concrete keys
it is given. Splitting a key consumes it, folding data into it does not, and
:func:`olympus.random.clone` gives a fresh copy that may be used again.
"""
