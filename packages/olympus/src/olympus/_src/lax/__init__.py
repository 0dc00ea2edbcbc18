"""``olympus._src.lax``: the path JAX's documentation imports ``lax`` from
(``from jax._src.lax import lax``); the functions are `olympus.lax`'s."""
