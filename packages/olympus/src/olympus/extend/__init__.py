"""`olympus.extend`: access to Olympus's internal machinery for extensions (JAX's
``jax.extend``; like JAX's, with no compatibility guarantee across releases).

Only ``core`` is provided: the IR types, primitives and helpers an interpreter written
against ``jax.extend.core`` uses (for example JAX's "Writing custom interpreters" guide).
"""

from olympus.extend import core as core

__all__ = ["core"]
