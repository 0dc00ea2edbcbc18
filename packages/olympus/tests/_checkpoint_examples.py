"""The examples of JAX's gradient-checkpointing guide, written against a library handed in
by `use` (olympus in the tests; reference JAX only when recording expected output in a
separate process), so that both run the very same source lines and print the same source
locations."""

lib = jnp = checkpoint_name = None


def use(library, numpy_module, name_fn):
    global lib, jnp, checkpoint_name
    lib, jnp, checkpoint_name = library, numpy_module, name_fn


def g(W, x):
  y = jnp.dot(W, x)
  return jnp.sin(y)


def f(W1, W2, W3, x):
  x = g(W1, x)
  x = g(W2, x)
  x = g(W3, x)
  return x


def f2(W1, W2, W3, x):
  x = lib.checkpoint(g)(W1, x)
  x = lib.checkpoint(g)(W2, x)
  x = lib.checkpoint(g)(W3, x)
  return x


def f4(W1, W2, W3, x):
  x = checkpoint_name(g(W1, x), name='a')
  x = checkpoint_name(g(W2, x), name='b')
  x = checkpoint_name(g(W3, x), name='c')
  return x


def loss(params, x, y):
  return jnp.sum((predict(params, x) - y)**2)


def predict(params, x):
  *Ws, Wlast = params
  for W in Ws:
    x = layer(W, x)
  x = jnp.dot(Wlast, x)
  return x


def predict_named(params, x):
  *Ws, Wlast = params
  for i, W in enumerate(Ws):
    x = layer(W, x)
    x = checkpoint_name(x, name=f'layer{i}_output')
  x = jnp.dot(Wlast, x)
  return x


def loss_named(params, x, y):
  return jnp.sum((predict_named(params, x) - y)**2)


def layer(W, x):
  return jnp.sin(jnp.dot(W, x))


def chain_compose(funs):
  def f(x):
    for fun in funs:
      x = fun(x)
    return x
  return f


def recursive_checkpoint(funs):
  if len(funs) == 1:
    return funs[0]
  elif len(funs) == 2:
    f1, f2 = funs
    return lambda x: f1(f2(x))
  else:
    f1 = recursive_checkpoint(funs[:len(funs)//2])
    f2 = recursive_checkpoint(funs[len(funs)//2:])
    return lambda x: f1(lib.checkpoint(f2)(x))


def cases():
    """(title, function, arguments) of each `print_saved_residuals` example."""
    pol = lib.checkpoint_policies
    W1, W2, W3 = jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones((7, 6))
    x = jnp.ones(4)
    V = jnp.ones((4, 4))
    params, y = [V, V, V], jnp.ones(4)
    return [
        ("f", f, (W1, W2, W3, x)),
        ("f2", f2, (W1, W2, W3, x)),
        ("f3", lib.checkpoint(f, policy=pol.dots_with_no_batch_dims_saveable), (W1, W2, W3, x)),
        ("f4", lib.checkpoint(f4, policy=pol.save_only_these_names('a')), (W1, W2, W3, x)),
        ("loss", loss, (params, x, y)),
        ("loss_checkpoint", lib.checkpoint(loss, policy=pol.dots_with_no_batch_dims_saveable),
         (params, x, y)),
        ("loss_named", loss_named, (params, x, y)),
        ("loss_checkpoint2",
         lib.checkpoint(loss_named, policy=pol.save_any_names_but_these('layer1_output')),
         (params, x, y)),
        ("chain8", chain_compose([jnp.sin] * 8), (3.,)),
        ("recursive8", recursive_checkpoint([jnp.sin] * 8), (3.,)),
        ("everything", lib.checkpoint(f, policy=pol.everything_saveable), (W1, W2, W3, x)),
        ("nothing", lib.checkpoint(f, policy=pol.nothing_saveable), (W1, W2, W3, x)),
        ("both", lib.checkpoint(f4, policy=pol.save_from_both_policies(
            pol.save_only_these_names('a'), pol.dots_saveable)), (W1, W2, W3, x)),
    ]
