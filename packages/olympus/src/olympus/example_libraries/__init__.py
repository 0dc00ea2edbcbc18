"""Small example libraries over olympus (JAX's ``jax.example_libraries``): ``stax`` (neural
network layers as (init_fun, apply_fun) pairs) and ``optimizers`` (first-order optimizers
as (init, update, get_params) triples)."""
