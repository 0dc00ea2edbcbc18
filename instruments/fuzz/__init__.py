"""Differential fuzzing of olympus.numpy / olympus.lax against NumPy, with JAX's type rules
and XLA's integer semantics recorded from reference JAX (see README.md)."""
