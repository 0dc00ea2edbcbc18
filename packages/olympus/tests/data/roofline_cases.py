"""The roofline programs whose costs are compared with reference JAX 0.10.2's.

Written once against a namespace `ns` (``jax``/``olympus``, its ``numpy``, ``lax``,
``roofline`` module, ``P``, ``NamedSharding``, ``AxisType``, ``Primitive``,
``ShapedArray``), so that `scripts/record_roofline.py` runs them with JAX (writing
``roofline_jax.json``) and the tests run the same programs with Olympus. JAX's own test
programs (``tests/roofline_test.py`` at jax-v0.10.2) plus an MLP training step, a small
conv net, scan/while/cond/remat programs and a psum inside shard_map.

`single_device_cases(ns)` and `mesh_cases(ns)` return ``{name: thunk}``; a thunk returns
what the roofline call returned (shapes and one or two `RooflineResult`s)."""

from __future__ import annotations

from functools import partial


def _unary_cases(ns):
    lax, jnp = ns.lax, ns.jnp
    ops = [
        ("abs", lax.abs, float), ("acos", lax.acos, float), ("asin", lax.asin, float),
        ("atan", lax.atan, float), ("cbrt", lax.cbrt, float), ("ceil", lax.ceil, float),
        ("conj", lax.conj, complex), ("cos", lax.cos, float), ("cosh", lax.cosh, float),
        ("exp", lax.exp, float), ("expm1", lax.expm1, float), ("floor", lax.floor, float),
        ("imag", lax.imag, complex), ("integer_pow", lambda a: lax.integer_pow(a, 5), int),
        ("is_finite", lax.is_finite, float), ("log", lax.log, float),
        ("log1p", lax.log1p, float), ("logistic", lax.logistic, float),
        ("neg", lax.neg, float), ("not", lax.bitwise_not, bool), ("real", lax.real, complex),
        ("round", lax.round, float), ("rsqrt", lax.rsqrt, float), ("sign", lax.sign, float),
        ("sin", lax.sin, float), ("sinh", lax.sinh, float), ("sqrt", lax.sqrt, float),
        ("square", lax.square, float), ("tan", lax.tan, float),
        ("bessel_i0e", lax.bessel_i0e, float), ("bessel_i1e", lax.bessel_i1e, float),
        ("digamma", lax.digamma, float), ("erf_inv", lax.erf_inv, float),
        ("erf", lax.erf, float), ("erfc", lax.erfc, float), ("lgamma", lax.lgamma, float),
        ("tanh_has_no_rule", lax.tanh, float),
    ]
    return {f"unary_{name}": (lambda f=f, dt=dt: ns.roofline.roofline(f)(jnp.zeros((3, 8), dt)))
            for name, f, dt in ops}


def _binary_cases(ns):
    jnp = ns.jnp
    ops = {"xor": lambda a, b: a ^ b, "or": lambda a, b: a | b, "and": lambda a, b: a & b,
           "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "div": lambda a, b: a / b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
           "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b,
           "minimum": jnp.minimum, "maximum": jnp.maximum}
    return {f"binary_{name}": (lambda f=f: ns.roofline.roofline(f)(
        jnp.zeros((3, 8), int), jnp.ones((3, 8), int))) for name, f in ops.items()}


def _broadcast_cases(ns):
    jnp = ns.jnp
    pairs = [(lambda: jnp.zeros((3, 8)), lambda: jnp.ones((1, 1))),
             (lambda: jnp.zeros((1, 1)), lambda: jnp.ones((3, 8))),
             (lambda: jnp.zeros((3, 8)), lambda: jnp.ones((3, 8))),
             (lambda: 2.0, lambda: jnp.ones((3, 8))),
             (lambda: jnp.zeros((3, 8)), lambda: 2.0)]
    return {f"broadcast_{i}": (lambda a=a, b=b: ns.roofline.roofline(lambda x, y: x + y)(a(), b()))
            for i, (a, b) in enumerate(pairs)}


def _cumulative_cases(ns):
    lax, jnp = ns.lax, ns.jnp
    out = {}
    for name in ("cummax", "cummin", "cumprod", "cumsum", "cumlogsumexp"):
        for axis in (0, 1, 2):
            dtype = float if name == "cumlogsumexp" else int
            f = getattr(lax, name)
            out[f"{name}_axis{axis}"] = (
                lambda f=f, axis=axis, dtype=dtype: ns.roofline.roofline(
                    lambda x: f(operand=x, axis=axis))(jnp.zeros((3, 8, 15), dtype)))
    return out


def _conv_cases(ns):
    lax, jnp = ns.lax, ns.jnp
    out = {}

    def conv(lhs_shape, rhs_shape, **kw):
        return ns.roofline.roofline(lambda a, b: lax.conv_general_dilated(lhs=a, rhs=b, **kw))(
            jnp.zeros(lhs_shape, int), jnp.ones(rhs_shape, int))

    for strides in ((1, 1), (2, 2)):
        for padding in (((0, 0), (0, 0)), ((1, 2), (3, 4))):
            for batch, bgc, chans, fgc in ((6, 1, 6, 1), (12, 3, 6, 1), (6, 1, 12, 3)):
                outc = bgc if bgc > 1 else (fgc if fgc > 1 else 1)
                name = f"conv_s{strides[0]}_p{padding[0][0]}_b{batch}_bg{bgc}_c{chans}_fg{fgc}"
                out[name] = (lambda strides=strides, padding=padding, batch=batch, bgc=bgc,
                             chans=chans, fgc=fgc, outc=outc: conv(
                                 (batch, chans, 20, 30), (outc, chans // fgc, 7, 7),
                                 window_strides=strides, padding=padding,
                                 batch_group_count=bgc, feature_group_count=fgc))
    for pad in ("SAME", "SAME_LOWER"):
        out[f"conv_padding_{pad}"] = (lambda pad=pad: conv(
            (1, 1, 3, 3), (1, 1, 3, 3), window_strides=(1, 1), padding=pad))
    out["conv_padding_VALID"] = lambda: conv((1, 1, 10, 20), (1, 1, 3, 3),
                                             window_strides=(1, 1), padding="VALID")
    big = 512 * 1024
    out["conv_very_large_padding"] = lambda: conv(
        (1, 1, 1), (1, 1, big), window_strides=[1], padding=[(big - 1, big - 1)],
        lhs_dilation=[1])
    out["conv_very_large_input"] = lambda: conv(
        (1, 1, big), (1, 1, big), window_strides=[big - 1], padding=[(0, 0)],
        lhs_dilation=[big])
    out["conv_feature_group_count"] = lambda: conv(
        (1, 120, 10, 20), (120, 1, 3, 3), window_strides=(1, 1), padding=((0, 0), (0, 0)),
        feature_group_count=120)
    out["conv_batch_group_count"] = lambda: conv(
        (120, 1, 10, 20), (120, 1, 3, 3), window_strides=(1, 1), padding=((0, 0), (0, 0)),
        batch_group_count=120)
    out["conv_dilated_strided"] = lambda: conv(
        (2, 3, 9, 11), (4, 3, 3, 2), window_strides=(2, 3), padding=((1, 1), (2, 0)),
        lhs_dilation=(2, 1), rhs_dilation=(1, 2))
    return out


def _indexing_cases(ns):
    lax, jnp = ns.lax, ns.jnp
    out = {}
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))
    for mode in ("PROMISE_IN_BOUNDS", "CLIP", "FILL_OR_DROP"):
        out[f"gather_{mode}"] = (lambda mode=mode: ns.roofline.roofline(
            lambda x, y: lax.gather(x, y, dimension_numbers=dn, slice_sizes=(1, 3),
                                    mode=getattr(lax.GatherScatterMode, mode)))(
            jnp.zeros((3, 3), jnp.int32), jnp.zeros((2, 1), jnp.int32)))
    bdn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(1,),
                                     start_index_map=(1,), operand_batching_dims=(0,),
                                     start_indices_batching_dims=(0,))
    out["gather_batching_dims"] = lambda: ns.roofline.roofline(
        lambda x, y: lax.gather(x, y, dimension_numbers=bdn, slice_sizes=(1, 1, 3)))(
        jnp.zeros((5, 3, 3), jnp.int32), jnp.zeros((5, 1), jnp.int32))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    for name in ("scatter_add", "scatter_max", "scatter_min", "scatter_mul", "scatter_sub",
                 "scatter"):
        f = getattr(lax, name)
        out[name] = (lambda f=f: ns.roofline.roofline(
            lambda x, y, z: f(x, y, z, dimension_numbers=sdn))(
            jnp.zeros((3, 3), jnp.float32), jnp.zeros((2, 1), jnp.int32),
            jnp.ones((2, 3), jnp.float32)))
    bsdn = lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(1,), operand_batching_dims=(0,),
        scatter_indices_batching_dims=(0,), scatter_dims_to_operand_dims=(1,))
    out["scatter_add_batching_dims"] = lambda: ns.roofline.roofline(
        lambda x, y, z: lax.scatter_add(x, y, z, dimension_numbers=bsdn))(
        jnp.zeros((5, 3, 3), jnp.float32), jnp.zeros((5, 1), jnp.int32),
        jnp.zeros((5, 3), jnp.float32))
    out["scatter_apply"] = lambda: ns.roofline.roofline(
        lambda x, y, z: lax.scatter_apply(
            operand=x, scatter_indices=y, func=lambda v: jnp.sin(v) + v ** 2,
            update_shape=z.shape, dimension_numbers=sdn, indices_are_sorted=True,
            mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS))(
        jnp.zeros((3, 3), jnp.float32), jnp.ones((2, 1), jnp.int32),
        jnp.ones((2, 3), jnp.float32))
    out["jnp_indexing_update"] = lambda: ns.roofline.roofline(
        lambda x, i: x.at[i].add(1.0))(jnp.zeros((6, 4)), 2)
    return out


def _program_cases(ns):
    jax, lax, jnp, rl = ns.jax, ns.lax, ns.jnp, ns.roofline
    out = {}

    def example(x):
        return jnp.sin(x) + x ** 2

    custom = jax.custom_jvp(example)
    custom.defjvp(lambda primals, tangents: (custom(*primals), tangents[0]))

    def nested(x, y):
        g = jax.jit(lambda v: v * y)
        return g(x) + g(y)

    out["nested_jit"] = lambda: rl.roofline(nested)(jnp.zeros((11, 4), int),
                                                    jnp.ones((11, 4), int))
    out["add_int"] = lambda: rl.roofline(lambda a, b: a + b)(jnp.zeros((3, 8), int),
                                                            jnp.ones((3, 8), int))
    out["dot_general"] = lambda: rl.roofline(lambda a, b: a @ b)(jnp.zeros((3, 7), int),
                                                                jnp.ones((7, 5), int))
    out["dot_general_pinned"] = lambda: rl.roofline(
        lambda a, b: jnp.einsum("bij,bjk->bik", a, b), pin_lhs_in_vmem=True)(
        jnp.zeros((2, 3, 7)), jnp.ones((2, 7, 5)))
    out["reduce_sum_all"] = lambda: rl.roofline(lambda x: jnp.sum(x))(jnp.zeros((11, 4)))
    for i, axis in enumerate((0, 1, [0, 1], [])):
        out[f"reduce_sum_axis{i}"] = (lambda axis=axis: rl.roofline(
            lambda x: jnp.sum(x, axis=axis))(jnp.zeros((11, 4))))
    out["example"] = lambda: rl.roofline(example)(jnp.ones((3, 8)))
    out["custom_jvp"] = lambda: rl.roofline(custom)(jnp.ones((3, 8)))
    out["custom_jvp_neg"] = lambda: rl.roofline(lambda x: lax.neg(custom(x)))(jnp.ones((3, 8)))
    out["select_n"] = lambda: rl.roofline(lax.select_n)(
        jnp.zeros((4, 8), int), jnp.zeros((4, 8), int), jnp.zeros((4, 8), int),
        jnp.zeros((4, 8), int))
    out["random_split"] = lambda: rl.roofline(lambda k: jax.random.split(k)[0])(
        jax.random.PRNGKey(0))
    out["pure_callback"] = lambda: rl.roofline(
        lambda x: jax.pure_callback(example, jax.ShapeDtypeStruct(x.shape, x.dtype), x))(
        jnp.zeros((3, 8), jnp.float32))
    out["io_callback"] = lambda: rl.roofline(
        lambda x: ns.io_callback(example, jax.ShapeDtypeStruct(x.shape, x.dtype), x))(
        jnp.zeros((3, 8), jnp.float32))

    def debug_cb(x):
        jax.debug.callback(example, x)
        return x

    out["debug_callback"] = lambda: rl.roofline(debug_cb)(jnp.zeros((3, 8), jnp.float32))

    fake = ns.Primitive("fake_roofline_primitive")
    fake.def_impl(lambda x: x)
    fake.def_abstract_eval(lambda x: ns.ShapedArray(x.shape, x.dtype))
    out["no_rule"] = lambda: rl.roofline(fake.bind)(jnp.zeros((3, 8), jnp.float32))
    out["no_rule_then_abs"] = lambda: rl.roofline(lambda x: lax.abs(fake.bind(x)))(
        jnp.zeros((3, 8), jnp.float32))
    out["abs"] = lambda: rl.roofline(lax.abs)(jnp.zeros((3, 8), jnp.float32))

    # --- beyond JAX's tests: training steps and control flow ---
    def mlp_loss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = jnp.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        return jnp.mean((logits - y) ** 2)

    def mlp_step(params, x, y):
        grads = jax.grad(mlp_loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    def mlp_args():
        return (((jnp.zeros((16, 32)), jnp.zeros((32,))), (jnp.zeros((32, 4)), jnp.zeros((4,)))),
                jnp.zeros((8, 16)), jnp.zeros((8, 4)))

    out["mlp_step"] = lambda: rl.roofline(mlp_step)(*mlp_args())
    out["mlp_loss_vjp"] = lambda: rl.roofline(mlp_loss, vjp=True)(*mlp_args())

    out["vjp_bf16"] = lambda: rl.roofline(lambda x, w: jnp.tanh(x @ w) * x[:, :1], vjp=True)(
        jnp.zeros((4, 8), jnp.bfloat16), jnp.zeros((8, 6), jnp.bfloat16))
    out["and_grad_no_mesh"] = lambda: rl.roofline_and_grad(
        lambda x, w, i: (jnp.tanh(x @ w) * i, jnp.sum(x)), None, None, None)(
        jnp.zeros((4, 8)), jnp.zeros((8, 6)), jnp.zeros((4, 6), jnp.int32))

    def convnet(w, x):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.nn.relu(y)
        return jnp.sum(y, axis=(1, 2))

    out["convnet"] = lambda: rl.roofline(convnet)(jnp.zeros((3, 3, 4, 8)),
                                                  jnp.zeros((2, 10, 10, 4)))
    out["convnet_grad"] = lambda: rl.roofline(jax.grad(lambda w, x: jnp.sum(convnet(w, x))))(
        jnp.zeros((3, 3, 4, 8)), jnp.zeros((2, 10, 10, 4)))

    def scanned(c, xs):
        def body(c, x):
            c = jnp.tanh(c @ x) + c
            return c, jnp.sum(c)
        return lax.scan(body, c, xs)

    out["scan"] = lambda: rl.roofline(scanned)(jnp.zeros((4, 8)), jnp.zeros((5, 8, 8)))
    out["while"] = lambda: rl.roofline(
        lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0),
                                 (0, x)))(jnp.zeros((4, 8)))
    out["cond"] = lambda: rl.roofline(
        lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x) + x)(True, jnp.zeros((4, 8)))
    out["remat"] = lambda: rl.roofline(
        jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)) * x))(jnp.zeros((4, 8)))
    out["remat_grad"] = lambda: rl.roofline(
        jax.grad(lambda x: jnp.sum(jax.checkpoint(lambda v: jnp.sin(jnp.sin(v)))(x))))(
        jnp.zeros((4, 8)))
    out["softmax"] = lambda: rl.roofline(jax.nn.softmax)(jnp.zeros((4, 16)))
    out["gelu"] = lambda: rl.roofline(jax.nn.gelu)(jnp.zeros((4, 16)))
    out["logsumexp"] = lambda: rl.roofline(
        lambda x: jax.nn.logsumexp(x, axis=-1))(jnp.zeros((4, 16)))

    def layer_norm(x, g, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.var(x, axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

    out["layer_norm"] = lambda: rl.roofline(layer_norm)(
        jnp.zeros((4, 16)), jnp.ones((16,)), jnp.zeros((16,)))
    out["layer_norm_grad"] = lambda: rl.roofline(
        jax.grad(lambda x, g, b: jnp.sum(layer_norm(x, g, b)), argnums=(0, 1, 2)))(
        jnp.zeros((4, 16)), jnp.ones((16,)), jnp.zeros((16,)))

    def attention(q, k, v):
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / 8.0
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)

    qkv = lambda: [jnp.zeros((2, 5, 3, 8))] * 3  # noqa: E731
    out["attention"] = lambda: rl.roofline(attention)(*qkv())
    out["attention_grad"] = lambda: rl.roofline(
        jax.grad(lambda q, k, v: jnp.sum(attention(q, k, v)), argnums=(0, 1, 2)))(*qkv())
    out["argmax_where_take"] = lambda: rl.roofline(
        lambda x, i: jnp.where(x > 0, jnp.take(x, i, axis=0), jnp.argmax(x, axis=0)))(
        jnp.zeros((6, 4)), jnp.zeros((6,), jnp.int32))
    out["fori_loop"] = lambda: rl.roofline(
        lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * i, x))(jnp.zeros((4, 8)))
    out["vmap_matmul"] = lambda: rl.roofline(jax.vmap(lambda a, b: a @ b))(
        jnp.zeros((3, 4, 5)), jnp.zeros((3, 5, 6)))
    out["cumsum_jnp"] = lambda: rl.roofline(lambda x: jnp.cumsum(x, axis=1))(
        jnp.zeros((4, 6)))
    out["pin_rhs"] = lambda: rl.roofline(lambda a, b: a @ b, pin_rhs_in_vmem=True)(
        jnp.zeros((4, 6)), jnp.zeros((6, 3)))
    return out


def single_device_cases(ns):
    cases = {}
    for make in (_unary_cases, _binary_cases, _broadcast_cases, _cumulative_cases,
                 _conv_cases, _indexing_cases, _program_cases):
        cases.update(make(ns))
    return cases


def mesh_cases(ns):
    """The programs on a (2, 2, 2) ``('x', 'y', 'z')`` mesh of 8 devices (one (1, 2, 4))."""
    jax, lax, jnp, rl, P = ns.jax, ns.lax, ns.jnp, ns.roofline, ns.P

    def create(*specs, dtype=jnp.float32, mesh_shape=(2, 2, 2)):
        mesh = jax.make_mesh(mesh_shape, ("x", "y", "z"), axis_types=(ns.AxisType.Auto,) * 3)
        return mesh, tuple(jax.ShapeDtypeStruct((8, 8), dtype,
                                                sharding=ns.NamedSharding(mesh, s))
                           for s in specs)

    out = {}

    def scalar_collectives():
        a_spec, b_spec = P("z", ("x", "y")), P(("x", "y"), "z")
        mesh, (a, b) = create(a_spec, b_spec)

        def f(a, b):
            return lax.pmin(a, ("x", "y")), lax.pmax(b, "z")

        return rl.roofline(f, mesh=mesh, in_specs=(a_spec, b_spec),
                           out_specs=(P("z", None), P(("x", "y"), None)))(a, b)

    def collective_matmul():
        a_spec, b_spec, c_spec = P(None, "x"), P(None, "x"), P("x", None)
        mesh, (a, b, c) = create(a_spec, b_spec, c_spec, dtype=jnp.int8)

        def f(a, b, c):
            a = lax.all_gather(a, "x", axis=1, tiled=True)
            a = a[None, :, :]
            b = b[:, None, :]
            ab = jnp.einsum("bij,jbk->ikb", a, b).astype(jnp.int8)[..., 0]
            abc = jnp.einsum("ik,kc->ic", ab, c).astype(jnp.int8)
            return lax.psum_scatter(abc, "x", scatter_dimension=1, tiled=True)

        return rl.roofline(f, mesh=mesh, in_specs=(a_spec, b_spec, c_spec),
                           out_specs=a_spec)(a, b, c)

    def matmul_psum():
        a_spec, b_spec = P("z", ("x", "y")), P(("x", "y"), None)
        mesh, (a, b) = create(a_spec, b_spec)
        return rl.roofline(lambda a, b: lax.psum(a @ b, ("x", "y")), mesh=mesh,
                           in_specs=(a_spec, b_spec), out_specs=P("z", None))(a, b)

    def all_to_all():
        a_spec, b_spec = P("z", ("x", "y")), P(("x", "y"), "z")
        mesh, (a, b) = create(a_spec, b_spec)

        def f(a, b):
            a = lax.all_to_all(a, ("x", "y"), split_axis=0, concat_axis=1, tiled=True)
            b = lax.all_to_all(b, "z", split_axis=0, concat_axis=1, tiled=True)
            return a, b

        return rl.roofline(f, mesh=mesh, in_specs=(a_spec, b_spec),
                           out_specs=(P(("z", "x", "y"), None), P(("x", "y", "z"), None)))(a, b)

    def ppermute():
        a_spec, b_spec = P("z", ("x", "y")), P(("x", "y"), "z")
        mesh, (a, b) = create(a_spec, b_spec)

        def f(a, b):
            a = lax.ppermute(a, ("x", "y"), perm=((0, 3), (3, 0), (1, 2), (2, 1)))
            b = lax.ppermute(b, "z", perm=((1, 0), (0, 1)))
            return a, b

        return rl.roofline(f, mesh=mesh, in_specs=(a_spec, b_spec),
                           out_specs=(a_spec, b_spec))(a, b)

    def grad_matmuls():
        a_spec, b_spec = P(None, "x"), P(None, None)
        mesh, (a, b) = create(a_spec, b_spec, dtype=jnp.int8)

        def f(a, b):
            return lax.all_gather(a, "x", axis=1, tiled=True) @ b

        return rl.roofline_and_grad(f, mesh=mesh, in_specs=(a_spec, b_spec),
                                    out_specs=P("x", None))(a, b)

    def one_sized_axis():
        a_spec = P("x")
        mesh, (a,) = create(a_spec, mesh_shape=(1, 2, 4))

        def f(a):
            a = lax.pmin(a, "x")
            a = lax.all_gather(a, "x", axis=1, tiled=True)
            a = lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True)
            a = lax.psum(a, "x")
            a = lax.all_to_all(a, "x", split_axis=0, concat_axis=1, tiled=True)
            return lax.ppermute(a, "x", perm=((1, 0), (0, 1)))

        return rl.roofline(f, mesh=mesh, in_specs=a_spec, out_specs=a_spec)(a)

    def one_sized_axis_no_ppermute():
        a_spec = P("x")
        mesh, (a,) = create(a_spec, mesh_shape=(1, 2, 4))

        def f(a):
            a = lax.pmin(a, "x")
            a = lax.all_gather(a, "x", axis=1, tiled=True)
            a = lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True)
            a = lax.psum(a, "x")
            return lax.all_to_all(a, "x", split_axis=0, concat_axis=1, tiled=True)

        return rl.roofline(f, mesh=mesh, in_specs=a_spec, out_specs=a_spec)(a)

    def remat():
        a_spec, b_spec = P("x", None), P("x", None)
        mesh, (a, b) = create(a_spec, b_spec)

        def policy(prim, *args, **params):
            return prim is lax.all_gather_p and params["axis_name"] in ("x", ("x",))

        @partial(jax.checkpoint, policy=policy)
        def f(a, b):
            return a @ lax.all_gather(b, "x", axis=0, tiled=True)

        return rl.roofline_and_grad(f, mesh=mesh, in_specs=(a_spec, b_spec),
                                    out_specs=P("x", None))(a, b)

    def layer_psum():
        x_spec, w_spec = P(("x", "y", "z"), None), P(None, None)
        mesh = jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(ns.AxisType.Auto,) * 3)
        x = jax.ShapeDtypeStruct((16, 8), jnp.float32, sharding=ns.NamedSharding(mesh, x_spec))
        w = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=ns.NamedSharding(mesh, w_spec))

        def f(x, w):
            h = jnp.tanh(x @ w)
            return w - 0.1 * lax.psum(jnp.sum(h, axis=0), ("x", "y", "z"))

        return rl.roofline(f, mesh=mesh, in_specs=(x_spec, w_spec), out_specs=w_spec)(x, w)

    for fn in (scalar_collectives, collective_matmul, matmul_psum, all_to_all, ppermute,
               grad_matmuls, one_sized_axis, one_sized_axis_no_ppermute, remat, layer_psum):
        out[fn.__name__] = fn
    return out


def summarize(value):
    """The roofline call's return value as JSON: shapes (shape, dtype, spec) and results."""
    def result(r):
        return {"flops": r.flops, "unfused_flops": r.unfused_flops,
                "ici_bytes": dict(sorted(r.ici_bytes.items())),
                "ici_latency": dict(sorted(r.ici_latency.items())),
                "hbm_bytes": r.hbm_bytes, "peak_hbm_bytes": r.peak_hbm_bytes,
                "unfused_hbm_bytes": r.unfused_hbm_bytes}

    def shape(s):
        sharding = getattr(s, "sharding", None)
        spec = getattr(sharding, "spec", None)
        return {"shape": list(s.shape), "dtype": str(s.dtype),
                "spec": None if spec is None else repr(spec)}

    shapes, *results = value

    def leaves(t):
        if isinstance(t, (tuple, list)):
            return [x for e in t for x in leaves(e)]
        return [t]

    return {"shapes": [shape(s) for s in leaves(shapes)],
            "results": [result(r) for r in results]}

