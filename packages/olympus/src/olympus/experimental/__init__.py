"""`olympus.experimental`: APIs JAX keeps under ``jax.experimental``."""
