"""Functions whose printed olympusprs must equal JAX 0.10.2's printed jaxprs.

Written against a namespace so the same code runs under Olympus (the tests) and under
reference JAX in its own process (``scripts/record_printing_corpus.py``, which writes
``printing_expected.json`` beside this file). `cases(ns)` returns ``[(name, fn, args)]``;
`ns` has ``olympus`` (the library: ``olympus`` or ``jax``), ``jnp``, ``lax``, ``random``,
``custom_jvp``, ``custom_vjp`` and ``np``.

Nested ``jit`` calls print as ``jit[name=... olympuspr=...]`` equations; the last section
calls library functions that JAX jits (``jnp.where``'s ``_where``, ``clip``, ``nn`` ones).
"""

from __future__ import annotations


def cases(ns):  # noqa: C901 (one flat list of small functions)
    olympus, jnp, lax, np = ns.olympus, ns.jnp, ns.lax, ns.np
    f32 = np.float32
    x23 = np.arange(6, dtype=f32).reshape(2, 3)
    x3 = np.arange(3, dtype=f32)
    i3 = np.arange(3, dtype=np.int32)
    out = []

    def case(*args):
        def register(fn):
            out.append((fn.__name__, fn, args))
            return fn
        return register

    # --- elementwise -----------------------------------------------------------------------
    @case(x23)
    def unary_chain(a):
        return lax.tanh(lax.exp(lax.sin(a)) + lax.log1p(a))

    @case(x23, x23)
    def binary_ops(a, b):
        return lax.max(a * b, a - b) / lax.pow(a, b)

    @case(x3)
    def literals_and_weak_types(a):
        return a * 0.1 + 2 - lax.sqrt(a)

    @case(x3)
    def integer_pow_and_square(a):
        return lax.integer_pow(a, 3) + lax.square(a) + lax.rsqrt(a + 1.0)

    @case(x23)
    def comparisons_select(a):
        return lax.select(a > 1.0, a, lax.neg(a))

    @case(i3)
    def convert_and_bitwise(a):
        b = lax.convert_element_type(a, np.float32)
        c = lax.bitwise_and(a, 3) | lax.shift_left(a, 1)
        return b, lax.population_count(c)

    @case(x3)
    def clamp_round_sign(a):
        return lax.clamp(0.0, lax.round(a), 2.0) * lax.sign(a)

    @case(x3)
    def erf_family(a):
        return lax.erf(a) + lax.erfc(a) + lax.lgamma(a + 1.0)

    @case(x3)
    def atan2_rem(a):
        return lax.atan2(a, a + 1.0), lax.rem(a, 2.0)

    @case(x23)
    def iota_and_is_finite(a):
        return lax.iota(np.int32, 4), lax.is_finite(a)

    # --- reductions ------------------------------------------------------------------------
    @case(x23)
    def reduce_sum_max(a):
        return lax.reduce_sum(a, (0,)), lax.reduce_max(a, (0, 1))

    @case(x23)
    def argmax_argmin(a):
        return lax.argmax(a, 1, np.int32), lax.argmin(a, 0, np.int32)

    @case(x23)
    def reduce_and_or(a):
        b = a > 1.0
        return lax.reduce_and(b, (1,)), lax.reduce_or(b, (0,))

    # --- shape ops -------------------------------------------------------------------------
    @case(x3)
    def broadcast_in_dim(a):
        return lax.broadcast_in_dim(a, (4, 3), (1,)), lax.broadcast(a, (2,))

    @case(x23)
    def reshape_transpose(a):
        return lax.transpose(lax.reshape(a, (3, 2)), (1, 0))

    @case(x23)
    def squeeze_expand(a):
        b = lax.expand_dims(a, (0,))
        return lax.squeeze(b, (0,))

    @case(x23, x23)
    def concatenate_pad(a, b):
        c = lax.concatenate([a, b], 0)
        return lax.pad(c, 0.0, ((1, 1, 0), (0, 0, 1)))

    @case(x23)
    def rev_slice(a):
        return lax.slice(lax.rev(a, (1,)), (0, 1), (2, 3), (1, 2))

    # --- indexing --------------------------------------------------------------------------
    @case(x23, np.int32(1))
    def dynamic_slice_update(a, i):
        s = lax.dynamic_slice(a, (i, 0), (1, 3))
        return lax.dynamic_update_slice(a, s * 2.0, (0, i))

    @case(x23)
    def gather_by_index(a):
        idx = np.array([[0], [1]], dtype=np.int32)
        dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                        start_index_map=(0,))
        return lax.gather(a, idx, dn, (1, 3), mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)

    @case(x3, x3)
    def scatter_add(a, u):
        idx = np.array([[0], [2], [1]], dtype=np.int32)
        dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
        return lax.scatter_add(a, idx, u, dn, mode=lax.GatherScatterMode.FILL_OR_DROP)

    @case(x23)
    def dynamic_slice_in_dim(a):
        return lax.dynamic_slice_in_dim(a, 1, 1, axis=1)

    # --- control flow ----------------------------------------------------------------------
    @case(np.float32(1.0), x3)
    def cond_two_branches(p, a):
        return lax.cond(p > 0, lambda v: v + 1.0, lambda v: v - 1.0, a)

    @case(np.int32(1), x3)
    def switch_three(i, a):
        return lax.switch(i, [lambda v: v, lambda v: lax.sin(v), lambda v: v * 2.0], a)

    @case(x3)
    def while_loop(a):
        return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0), (0, a))

    @case(x23)
    def fori_loop(a):
        return lax.fori_loop(0, 3, lambda i, c: c * 2.0, a)

    @case(x3, np.arange(12, dtype=f32).reshape(4, 3))
    def scan_cumulative(c, xs):
        def body(carry, x):
            y = carry + x
            return y, lax.sin(y)
        return lax.scan(body, c, xs)

    @case(np.float32(1.0))
    def scan_long_body(c):
        def body(carry, x):
            for _ in range(11):
                carry = carry * 2.0
            return carry, x
        return lax.scan(body, c, np.arange(3, dtype=f32))

    @case(x3)
    def scan_unused_carry(a):
        def body(carry, x):
            return (carry[0] + 1, carry[1] + x), carry[1]
        (n, _), ys = lax.scan(body, (0, 0.0), a)
        return ys

    @case(x3)
    def scan_reverse_no_xs(a):
        return lax.scan(lambda c, _: (c * 2.0, None), a, None, length=4, reverse=True)[0]

    # --- custom derivatives ----------------------------------------------------------------
    @ns.custom_jvp
    def softplus(v):
        return lax.log1p(lax.exp(v))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (v,), (t,) = primals, tangents
        return softplus(v), t * lax.logistic(v)

    @case(x3)
    def custom_jvp_call(a):
        return softplus(a)

    @case(x3)
    def grad_of_custom_jvp(a):
        return olympus.grad(lambda v: softplus(v).sum())(a)

    @ns.custom_vjp
    def clip_gradient(v):
        return v

    def clip_fwd(v):
        return v, None

    def clip_bwd(_, g):
        return (lax.clamp(-1.0, g, 1.0),)

    clip_gradient.defvjp(clip_fwd, clip_bwd)

    @case(x3)
    def custom_vjp_call(a):
        return clip_gradient(a) * 2.0

    # --- linalg, convolution, cumulative, sorting, random -----------------------------------
    @case(x23, x23)
    def dot_general(a, b):
        return lax.dot_general(a, b, (((1,), (1,)), ((), ())))

    @case(np.ones((2, 3, 4), f32), np.ones((2, 4, 5), f32))
    def batched_dot_preferred(a, b):
        return lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))),
                               preferred_element_type=np.float32)

    @case(np.eye(3, dtype=f32) * 2.0, np.ones((3, 2), f32))
    def triangular_solve(a, b):
        return lax.linalg.triangular_solve(a, b, left_side=True, lower=True)

    @case(np.eye(3, dtype=f32) * 2.0)
    def cholesky(a):
        return lax.linalg.cholesky(a, symmetrize_input=False)

    @case(np.ones((1, 2, 6, 6), f32), np.ones((3, 2, 3, 3), f32))
    def conv(a, w):
        return lax.conv_general_dilated(a, w, (1, 1), "SAME")

    @case(x23)
    def cumulative(a):
        return lax.cumsum(a, axis=1), lax.cummax(a, axis=0, reverse=True)

    @case(x23, x23)
    def sort_two_operands(a, b):
        return lax.sort((a, b), dimension=1, num_keys=1)

    @case(x3)
    def top_k(a):
        return lax.top_k(a, 2)

    @case(np.zeros(4, np.uint32))
    def rng_bit_generator(key):
        return lax.rng_bit_generator(key, (2, 3), dtype=np.uint32)

    # --- typed PRNG keys: key<fry> values and the random_* primitives --------------------
    random = ns.random
    key0 = random.key(0)
    keys3 = random.split(key0, 3)
    raw0 = random.PRNGKey(0)

    @case(key0)
    def random_split_typed(k):
        return random.split(k)

    @case(key0)
    def random_fold_in_bits(k):
        return random.bits(random.fold_in(k, 3), (2,))

    @case()
    def random_key_seed():
        return random.key(1), random.PRNGKey(2)

    @case(key0, raw0)
    def random_key_data_wrap(k, r):
        return random.key_data(k), random.wrap_key_data(r)

    @case(raw0)
    def random_split_raw_key(r):
        return random.split(r, 3)

    @case(keys3)
    def random_key_slices(ks):
        return ks[0], ks[1:]

    @case(key0)
    def random_normal(k):
        return random.normal(k, (3,))

    @case(key0)
    def random_uniform(k):
        return random.uniform(k, (2,))

    @case(keys3)
    def random_vmap_normal(ks):
        return olympus.vmap(lambda k: random.normal(k))(ks)

    @case(key0)
    def random_bernoulli(k):
        return random.bernoulli(k, 0.3, (3,))

    @case(key0)
    def random_scan_split(k):
        def body(c, _):
            c, sub = random.split(c)
            return c, random.bits(sub)
        return lax.scan(body, k, None, length=2)

    @case(x23)
    def reduce_window_max(a):
        return lax.reduce_window(a, -np.inf, lax.max, (1, 2), (1, 1), "VALID")

    m33 = np.eye(3, dtype=f32) * 2.0

    @case(m33)
    def qr(a):
        return lax.linalg.qr(a)

    @case(m33)
    def eigh(a):
        return lax.linalg.eigh(a)

    @case(m33)
    def svd(a):
        return lax.linalg.svd(a, full_matrices=False)

    @case(m33)
    def lu(a):
        return lax.linalg.lu(a)

    @case(m33)
    def eig(a):
        return lax.linalg.eig(a)

    @case(m33, np.ones((2, 3), f32))
    def triangular_solve_right_transposed(a, b):
        return lax.linalg.triangular_solve(a, b, left_side=False, lower=False, transpose_a=True)

    @case(np.ones((1, 2, 5), f32), np.ones((4, 2, 3), f32))
    def conv_dilated_lhs(a, w):
        return lax.conv_general_dilated(a, w, (1,), [(1, 1)], lhs_dilation=(2,))

    @case(x23)
    def reduce_window_sum(a):
        return lax.reduce_window(a, 0.0, lax.add, (1, 2), (1, 1), "VALID")

    @case(x23)
    def cumlogsumexp(a):
        return lax.cumlogsumexp(a, axis=1)

    @case(x23)
    def argsort_by_sort(a):
        return lax.sort((a, lax.broadcasted_iota(np.int32, a.shape, 1)), dimension=1, num_keys=1)

    @case(x23)
    def reduce_precision_nextafter(a):
        return lax.nextafter(lax.reduce_precision(a, 5, 10), a + 1)

    @case(x23)
    def erf_inv_expm1_bitcast(a):
        return lax.bitcast_convert_type(lax.erf_inv(a * 0.1) + lax.expm1(a), np.int32)

    @case(x23)
    def checkpoint(a):
        return olympus.checkpoint(lambda v: lax.sin(v) * 2.0)(a)

    @case(x23, x23)
    def jvp_of_checkpoint(a, t):
        return olympus.jvp(olympus.checkpoint(lambda v: lax.sin(v)), (a,), (t,))

    @case(x23)
    def grad_of_checkpoint(a):
        return olympus.grad(lambda v: olympus.checkpoint(lambda u: lax.sin(u))(v).sum())(a)

    # --- transformations -------------------------------------------------------------------
    @case(np.float32(2.0))
    def grad_of_sin_times(a):
        return olympus.grad(lambda v: lax.sin(v) * v)(a)

    @case(x23)
    def vmap_of_dot(a):
        return olympus.vmap(lambda v: lax.dot_general(v, v, (((0,), (0,)), ((), ()))))(a)

    @case(x3, x3)
    def jvp_of_exp(a, t):
        return olympus.jvp(lax.exp, (a,), (t,))

    @case(x3)
    def grad_of_scan(a):
        def f(v):
            return lax.scan(lambda c, x: (c * x, c), 1.0, v)[0]
        return olympus.grad(f)(a)

    @case(x3)
    def linearize_of_scan(a):
        def f(v):
            return lax.scan(lambda c, x: (c * x, c), 1.0, v)[0]
        return olympus.linearize(f, a)[1](a)

    @case(x3)
    def vjp_of_scan_weak_cotangent(a):
        def f(v):
            return lax.scan(lambda c, x: (c * x, c * 2), 1.0, v)
        return olympus.vjp(f, a)[1]((1.0, a))

    @case(np.float32(2.0), x3)
    def grad_of_scan_with_consts(w, a):
        def f(w, v):
            return lax.scan(lambda c, x: (c * w + x, jnp.sin(c)), 0.0, v)[1].sum()
        return olympus.grad(f, argnums=(0, 1))(w, a)

    @case(x3)
    def noop_convert_and_broadcast(a):
        b = lax.convert_element_type_p.bind(a, new_dtype=np.dtype("float32"),
                                            weak_type=False, sharding=None)
        return lax.broadcast_in_dim_p.bind(b, shape=(3,), broadcast_dimensions=(0,),
                                           sharding=None) + 1

    @case(x3)
    def vmap_of_cond(a):
        return olympus.vmap(lambda v: lax.cond(v > 1.0, lambda u: u * 2.0,
                                               lambda u: u, v))(a)

    # --- olympus.numpy (functions JAX does not wrap in a nested jit) --------------------------
    @case(x23)
    def jnp_sum_mean(a):
        return jnp.sum(a, axis=0) + jnp.exp(a).mean()

    @case(x23)
    def jnp_broadcast_astype(a):
        return jnp.broadcast_to(a[0], (4, 3)).astype(jnp.int32)

    @case(x23, x23)
    def jnp_matmul_transpose(a, b):
        return a @ b.T

    @case(x3)
    def jnp_special_literals(a):
        return a * np.inf - (a > 1.5) + (-3)

    # --- layout ----------------------------------------------------------------------------
    @case(x3, x3)
    def two_scatter_adds_share_update(a, u):
        idx = np.array([[0], [2], [1]], dtype=np.int32)
        dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
        b = lax.scatter_add(a, idx, u, dn, mode=lax.GatherScatterMode.FILL_OR_DROP)
        return lax.scatter_add(b, idx, u, dn, mode=lax.GatherScatterMode.FILL_OR_DROP)

    @case(x3, np.float32(3.0))
    def while_with_consts(a, limit):
        def cond(c):
            return c[0] < limit

        def body(c):
            return c[0] + 1.0, c[1] * limit
        return lax.while_loop(cond, body, (0.0, a))

    @case(x3)
    def short_cond_inline(a):
        return lax.cond(True, lambda v: v, lambda v: -v, a)

    @case(*[x3] * 12)
    def many_arguments(*args):
        out = args[0]
        for a in args[1:]:
            out = out + a
        return out

    @case()
    def no_arguments():
        return lax.iota(np.int32, 3)

    @case(x3)
    def identity(a):
        return a, a

    @case(x3)
    def closed_over_constant(a):
        return a + x3 * 2.0

    @case(x23)
    def unused_result(a):
        s, _ = lax.sort((a, a), num_keys=1)
        return s

    # unread results print as _ at the top level only; nested olympusprs keep their names
    @case(x3)
    def dead_code_top_level(a):
        _ = lax.sin(a)
        b, _ = lax.sort((a, a), num_keys=1)
        return b

    @case(x3)
    def dead_code_in_cond_branch(a):
        return lax.cond(a[0] > 0, lambda v: (lax.sin(v), v * 2.0)[1], lambda v: v, a)

    @case(x3)
    def dead_code_in_while_body(a):
        def body(c):
            _ = lax.exp(c)
            return c + 1.0
        return lax.while_loop(lambda c: c[0] < 3.0, body, a)

    # --- nested jit --------------------------------------------------------------------------
    jsin = olympus.jit(jnp.sin)
    pair = olympus.jit(lambda x, y: (x * 2.0, jnp.cos(y)))
    first = olympus.jit(lambda x, y: x, donate_argnums=0, keep_unused=True)
    s1 = np.float32(1.0)

    @case(s1)
    def nested_jit_call(a):
        return jsin(a) * 2.0

    @case(s1)
    def nested_jit_shared_callee(a):
        return jsin(a) + jsin(a * 2.0) + jsin(3.0)

    @case(s1)
    def nested_jit_unused_result(a):
        return pair(a, a)[0]

    @case(s1)
    def nested_jit_donated_keep_unused(a):
        return first(a, a)

    @case(s1)
    def nested_jit_closure(a):
        return olympus.jit(lambda y: a * y)(2.0)

    @case(x3)
    def nested_jit_constants(a):
        return olympus.jit(lambda y: jnp.sin(y) + x3)(a)

    @case(s1)
    def nested_jit_pytree_result(a):
        return olympus.jit(lambda y: {"a": y, "b": (y, 2 * y)})(a)

    @case(s1)
    def nested_jit_inline(a):
        return olympus.jit(lambda y: y * 3.0, inline=True)(a) + 1.0

    @case(s1)
    def nested_jit_twice(a):
        return olympus.jit(lambda y: jsin(y) + 1.0)(a)

    @case(s1)
    def nested_jit_static_argument(a):
        return olympus.jit(lambda y, n: y * n, static_argnums=1)(a, 3)

    @case(s1)
    def grad_of_nested_jit(a):
        return olympus.grad(lambda x: jsin(x) * 2.0)(a)

    @case(s1)
    def grad_of_nested_jit_square(a):
        return olympus.grad(lambda x: olympus.jit(lambda y: y * y * 3.0)(x))(a)

    @case(x3)
    def vmap_of_nested_jit(a):
        return olympus.vmap(lambda x: jsin(x) * 2.0)(a)

    @case(s1)
    def jvp_of_nested_jit(a):
        return olympus.jvp(jsin, (a,), (a,))

    # --- library functions JAX jits ------------------------------------------------------------
    @case(x23)
    def jnp_where(a):
        return jnp.where(a > 1.0, a, 0.0)

    @case(s1)
    def jnp_where_int_literal(a):
        return jnp.where(a > 0, a, 0)

    @case(x23)
    def jnp_clip(a):
        return jnp.clip(a, 0.0, 1.0)

    @case(s1)
    def grad_of_where(a):
        return olympus.grad(lambda x: jnp.where(x > 0, x, 0))(a)

    @case(x23)
    def nn_silu(a):
        return olympus.nn.silu(a)

    @case(x23)
    def nn_leaky_relu(a):
        return olympus.nn.leaky_relu(a)

    @case(x23)
    def nn_soft_sign(a):
        return olympus.nn.soft_sign(a)

    @case(x23)
    def nn_celu(a):
        return olympus.nn.celu(a)

    @case(x23)
    def nn_elu(a):
        return olympus.nn.elu(a)

    @case(x23)
    def nn_softplus(a):
        return olympus.nn.softplus(a)

    @case(x23)
    def nn_log_softmax(a):
        return olympus.nn.log_softmax(a)

    @case(x23)
    def nn_relu(a):
        return olympus.nn.relu(a)

    @case(x23)
    def nn_relu6(a):
        return olympus.nn.relu6(a)

    @case(i3)
    def nn_relu_int(a):
        return olympus.nn.relu(a)

    @case(s1)
    def grad_of_relu(a):
        return olympus.grad(olympus.nn.relu)(a)

    @case(x3)
    def vmap_grad_of_relu(a):
        return olympus.vmap(olympus.grad(olympus.nn.relu))(a)

    @case(x23)
    def jnp_isclose(a):
        return jnp.isclose(a, 1.0)

    @case(x23)
    def jnp_allclose(a):
        return jnp.allclose(a, 1.0)

    @case(x23)
    def jnp_cumsum(a):
        return jnp.cumsum(a, axis=1)

    @case(x23)
    def jnp_sort(a):
        return jnp.sort(a, axis=1)

    @case(x23)
    def jnp_argsort_descending(a):
        return jnp.argsort(a, axis=0, descending=True)

    @case(x23)
    def nn_hard_tanh(a):
        return olympus.nn.hard_tanh(a)

    @case(x23)
    def nn_log_sigmoid(a):
        return olympus.nn.log_sigmoid(a)

    @case(x23)
    def nn_selu(a):
        return olympus.nn.selu(a)


    @case(x23)
    def vmap_of_expand_dims(a):
        return olympus.vmap(lambda u: lax.expand_dims(u, (0,)))(a)

    @case(x23)
    def grad_of_expand_dims(a):
        return olympus.grad(lambda u: lax.expand_dims(u, (-1, 1)).sum())(a)

    @case(x23)
    def vmap_of_broadcast_in_dim_axis_1(a):
        return olympus.vmap(lambda u: lax.broadcast_in_dim(u, (4, 2), (1,)), in_axes=1)(a)

    @case(np.ones((4, 3), f32), x3)
    def vmap_add_unbatched_vector(a, b):
        return olympus.vmap(lambda u, v: u + v, in_axes=(0, None))(a, b)

    @case(np.ones((3, 4), f32), x3)
    def vmap_mul_batched_axis_1_and_unbatched(a, b):
        return olympus.vmap(lambda u, v: u * v, in_axes=(1, None))(a, b)

    @case(np.ones((4, 3), f32), np.ones((3, 4), f32))
    def vmap_mul_different_batch_axes(a, b):
        return olympus.vmap(lambda u, v: u * v, in_axes=(0, 1))(a, b)

    @case(np.ones((4, 1, 3), f32), np.ones((2, 3), f32))
    def vmap_lax_add_size_one_batched(a, b):
        return olympus.vmap(lax.add, in_axes=(0, None))(a, b)

    @case(np.ones((4, 3), f32))
    def vmap_subtract_per_member_max(a):
        return olympus.vmap(lambda u: u - u.max())(a)

    @case(np.ones((2, 4, 4), f32))
    def cholesky_batched(a):
        return lax.linalg.cholesky(a)

    @case(x23, np.arange(3, dtype=np.int32).reshape(1, 3))
    def jnp_power_integer_exponent_array(a, n):
        return jnp.power(a, n)

    # --- scalars made inside the trace are literals; larger constants constvars ---------
    @case(x3)
    def mul_by_jnp_float32(a):
        return a * jnp.float32(3)

    @case(x3)
    def mul_by_jnp_array_scalar(a):
        return a * jnp.array(3.0)

    @case(x3)
    def mul_by_np_float32(a):
        return a * np.float32(3)

    @case(x3)
    def int_and_bool_scalars(a):
        return a * jnp.array(3) + jnp.array(True) - jnp.ones((), np.int32)

    @case(x3)
    def zeros_and_full_scalars(a):
        return a * jnp.zeros(()) + jnp.full((), 2.0) + jnp.asarray(np.float32(1))

    @case(x3)
    def arithmetic_on_a_made_scalar(a):
        return a * (jnp.array(2.0) + 1)

    @case(x3)
    def bf16_times_weak_made_scalar(a):
        return a.astype(jnp.bfloat16) * jnp.array(2.0)

    @case(x3)
    def complex_made_scalar(a):
        return a * jnp.array(1 + 2j)

    @case(x3)
    def made_vector_is_a_constvar(a):
        return a * jnp.array([3.0, 4.0, 5.0])

    @case()
    def made_scalar_as_output():
        return jnp.array(3.0), jnp.float32(2)

    @case(x3)
    def made_scalar_under_grad(a):
        return olympus.grad(lambda u: (u * jnp.float32(3)).sum())(a)

    @case(x3)
    def made_scalar_under_vmap(a):
        return olympus.vmap(lambda u: u * jnp.float32(3) + jnp.array(1.0))(a)

    # --- broadcasting: lax broadcasts size-1 dims, jnp only adds leading axes -------------
    x13 = np.arange(3, dtype=f32).reshape(1, 3)
    x21 = np.arange(2, dtype=f32).reshape(2, 1)

    @case(x23, x13)
    def jnp_add_size_one_dim(a, b):
        return a + b

    @case(x23, x3)
    def jnp_add_rank_promotion(a, b):
        return a + b

    @case(x21, x3)
    def jnp_mul_rank_promotion_and_size_one(a, b):
        return a * b

    @case(x23, x13)
    def lax_add_size_one_dim(a, b):
        return lax.add(a, b)

    @case(x13, x21)
    def lax_ops_size_one_both_sides(a, b):
        return lax.atan2(lax.max(a, b), lax.mul(a, b)) > a

    @case(x23, x13)
    def jnp_where_size_one_dim(a, b):
        return jnp.where(a > 1, a, b)

    @case(x13, x21)
    def jnp_where_scalar_condition(a, b):
        return jnp.where(True, a, b)

    @case(x13)
    def jnp_broadcast_to_size_one_dim(a):
        return jnp.broadcast_to(a, (4, 2, 3))

    @case(x13, x21)
    def jnp_broadcast_arrays_size_one(a, b):
        return jnp.broadcast_arrays(a, b)

    @case(x23)
    def keepdims_max_then_subtract(a):
        return a - a.max(axis=-1, keepdims=True)

    @case(x23)
    def keepdims_mean_then_divide(a):
        return a / jnp.mean(a, axis=0, keepdims=True)

    @case(x23, x13)
    def grad_of_size_one_operand(a, b):
        return olympus.grad(lambda u, v: (u * v).sum(), argnums=(0, 1))(a, b)

    @case(x13, x21)
    def grad_of_lax_sub_size_one(a, b):
        return olympus.grad(lambda u, v: lax.sub(u, v).sum(), argnums=(0, 1))(a, b)

    @case(x23, x3)
    def matmul_then_add_row(a, b):
        return a @ jnp.ones((3, 3), np.float32) + b

    # --- common programs (a sweep of everyday code; several still differ, see the test) ------
    nn = olympus.nn
    xs = np.linspace(-1, 1, 6, dtype=f32).reshape(2, 3)
    v4 = np.linspace(-1, 1, 4, dtype=f32)
    half = np.float32(0.5)

    @case(xs)
    def common_grad_softmax(a):
        return olympus.grad(lambda x: nn.softmax(x).sum())(a)

    @case(xs)
    def common_grad_relu(a):
        return olympus.grad(lambda x: nn.relu(x).sum())(a)

    @case(xs)
    def common_grad_max(a):
        return olympus.grad(lambda x: jnp.max(x))(a)

    @case(xs)
    def common_grad_abs(a):
        return olympus.grad(lambda x: jnp.abs(x).sum())(a)

    @case(xs.T.copy(), v4[:2])
    def common_grad_mse(w, b):
        return olympus.grad(lambda w, b: ((xs @ w + b - 1.0) ** 2).mean(), argnums=(0, 1))(w, b)

    @case(v4)
    def common_value_and_grad(a):
        return olympus.value_and_grad(lambda x: (x ** 2).sum())(a)

    @case(v4)
    def common_jacfwd_sin(a):
        return olympus.jacfwd(jnp.sin)(a)

    @case(v4)
    def common_hessian(a):
        return olympus.hessian(lambda x: (x ** 3).sum())(a)

    @case(half)
    def common_grad_cond(a):
        return olympus.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(a)

    @case(np.array([0, 2], np.int32))
    def common_one_hot(a):
        return nn.one_hot(a, 3)

    @case(xs)
    def common_take(a):
        return jnp.take(a, np.array([0, 2]), axis=1)

    @case(xs)
    def common_index_update(a):
        return a.at[0, 1].set(5.0)

    @case(xs)
    def common_stack(a):
        return jnp.stack([a, a])

    @case(xs)
    def common_mean_var(a):
        return a.mean(0), a.var(0)

    @case(half)
    def common_eye(a):
        return jnp.eye(3) * a

    @case(xs)
    def common_vmap_scan(a):
        return olympus.vmap(lambda r: lax.scan(lambda c, y: (c + y, c), 0.0, r)[0])(a)

    @case(v4)
    def common_outer(a):
        return jnp.outer(a, a)

    @case(v4)
    def common_grad_prod(a):
        return olympus.grad(lambda x: jnp.prod(x))(a)

    @case(xs)
    def common_flip(a):
        return jnp.flip(a)

    @case(xs)
    def common_round(a):
        return jnp.round(a, 1)

    return out
