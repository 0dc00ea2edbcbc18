"""`olympus.tree_util` and `olympus.tree` as public modules, and pytrees through `jit`, `grad`,
`vmap` and `lax.scan`.

The trace-level behaviour (flattening, key paths, registration, structure errors) is tested
in olympus-trace's `test_tree_util.py` and `test_tree_structure_errors.py`; this file checks
what a user of the `olympus` package sees. Expected names, outputs and messages were recorded
from reference JAX 0.10.2 run in its own process (with `jax` -> `olympus`); numeric results
are checked against NumPy or by hand.
"""

from __future__ import annotations

import collections
import dataclasses
import doctest
import functools
import importlib
import operator
import pickle
import subprocess
import sys
import types

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus._src import jit as jit_mod

# The public names of jax.tree_util and jax.tree in JAX 0.10.2 (dir() without underscores).
JAX_TREE_UTIL_NAMES = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
    "PyTreeDef", "SequenceKey", "all_leaves", "default_registry", "flatten_one_level",
    "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
    "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
    "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
    "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]
JAX_TREE_NAMES = [
    "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose",
    "unflatten",
]


def check(x, expected, dtype=None):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(expected))
    if dtype is not None:
        assert x.dtype == np.dtype(dtype), (x.dtype, dtype)


def traces():
    return jit_mod.counters["trace"]


# --- the modules themselves -------------------------------------------------------------------


def test_import_forms():
    import olympus.flatten_util
    import olympus.tree
    import olympus.tree_util
    from olympus.flatten_util import ravel_pytree
    from olympus.tree_util import PyTreeDef, register_pytree_node, tree_map

    for name in ("tree_util", "tree", "flatten_util"):
        mod = importlib.import_module(f"olympus.{name}")
        assert isinstance(mod, types.ModuleType) and mod.__name__ == f"olympus.{name}"
        assert getattr(olympus, name) is mod
        assert name in olympus.__all__ and name in dir(olympus)
    assert tree_map is olympus.tree_util.tree_map
    assert register_pytree_node is olympus.tree_util.register_pytree_node
    assert isinstance(olympus.tree.structure([1]), PyTreeDef)
    assert ravel_pytree is olympus.flatten_util.ravel_pytree


def test_public_names_match_jax():
    assert sorted(olympus.tree_util.__all__) == sorted(JAX_TREE_UTIL_NAMES)
    assert sorted(olympus.tree.__all__) == sorted(JAX_TREE_NAMES)
    for name in JAX_TREE_UTIL_NAMES:
        assert hasattr(olympus.tree_util, name), name
    for name in JAX_TREE_NAMES:
        assert callable(getattr(olympus.tree, name)), name
    assert olympus.flatten_util.__all__ == ["ravel_pytree"]


def test_import_in_a_fresh_process():
    """`import olympus.tree_util` and friends work as a program's first import, and
    `olympus.flatten_util` is not loaded until asked for."""
    code = (
        "import sys\n"
        "import olympus.tree_util as tu\n"
        "from olympus.tree import map as tree_map\n"
        "print(tree_map(lambda x: x * 2, {'a': [1, 2]}))\n"
        "print('olympus.flatten_util' in sys.modules)\n"
        "from olympus.flatten_util import ravel_pytree\n"
        "print(ravel_pytree([1.0, 2.0])[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["{'a': [2, 4]}", "False", "[1. 2.]"]


def test_own_registry():
    """Olympus registers nodes in its own registry, never in jaxlib's process-wide one."""
    from jaxlib._jax import pytree as cpp

    class Mine:
        def __init__(self, v):
            self.v = v

    olympus.tree_util.register_pytree_node(Mine, lambda m: ((m.v,), None),
                                           lambda _, ch: Mine(*ch))
    assert olympus.tree_util.default_registry is not cpp.default_registry()
    assert olympus.tree_util.is_tree_node(Mine)
    assert not cpp.default_registry().is_node(Mine)
    td = olympus.tree.structure({"a": [1, (2, None)]})
    assert pickle.loads(pickle.dumps(td)) == td


def test_tree_docstring_examples():
    """The examples in olympus.tree's docstrings (JAX's jax.tree examples, renamed) run and
    print what they show."""
    failures, tried = doctest.testmod(olympus.tree, optionflags=doctest.ELLIPSIS)
    assert tried >= 20 and failures == 0


def test_tree_aliases_agree_with_tree_util():
    tree = {"b": [1, (2, None)], "a": 3}
    tu, tr = olympus.tree_util, olympus.tree
    assert tr.leaves(tree) == tu.tree_leaves(tree) == [3, 1, 2]
    assert tr.structure(tree) == tu.tree_structure(tree)
    assert tr.flatten(tree) == tu.tree_flatten(tree)
    assert tr.map(lambda x, y: x - y, tree, tree) == {"b": [0, (0, None)], "a": 0}
    assert tr.leaves_with_path(tree) == tu.tree_leaves_with_path(tree)
    assert tr.flatten_with_path(tree) == tu.tree_flatten_with_path(tree)
    assert tr.map_with_path(lambda p, x: len(p), tree) == {"b": [2, (3, None)], "a": 1}
    assert tr.reduce(operator.add, tree, 10) == 16
    assert tr.reduce_associative(operator.mul, tree) == 6
    assert tr.reduce_associative(operator.mul, [], identity=1) == 1
    assert tr.all(tree) and not tr.all([1, 0])
    assert tr.unflatten(tr.structure(tree), [7, 8, 9]) == {"b": [8, (9, None)], "a": 7}
    assert tr.broadcast({"a": 0, "b": 1}, tree) == {"a": 0, "b": [1, (1, None)]}
    assert tr.transpose(tr.structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    is_list = lambda x: isinstance(x, list)  # noqa: E731
    assert tr.leaves(tree, is_leaf=is_list) == [3, [1, (2, None)]]
    assert tr.leaves_with_path(tree, lambda p, x: len(p) == 1, True) == [
        ((olympus.tree_util.DictKey("a"),), 3), ((olympus.tree_util.DictKey("b"),), [1, (2, None)])
    ]


def test_tree_static_field():
    field = olympus.tree.static(default="add", metadata={"doc": "the op"})
    assert dict(field.metadata) == {"static": True, "doc": "the op"}
    assert field.default == "add"

    @olympus.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        kind: str = olympus.tree.static(default="add")
        scale: float = dataclasses.field(default=1.0, metadata=dict(static=True))

    leaves, td = olympus.tree.flatten(Op(jnp.ones(2)))
    assert len(leaves) == 1
    assert repr(td) == "PyTreeDef(CustomNode(Op[('add', 1.0)], [*]))"


# --- pytrees through transformations ----------------------------------------------------------


def test_register_pytree_node_makes_jit_accept_a_class():
    """jax.tree_util.register_pytree_node's docstring example: rejected before, compiled
    after (JAX prints Array([1., 2., 3., 4., 5.], dtype=float32))."""

    class MyContainer:
        def __init__(self, size):
            self.x = jnp.zeros(size)
            self.y = jnp.ones(size)
            self.size = size

    def f(m):
        return m.x + m.y + jnp.arange(m.size)

    m = MyContainer(size=5)
    with pytest.raises(TypeError):
        olympus.jit(f)(m)

    def flatten_func(obj):
        return (obj.x, obj.y), (obj.size,)

    def unflatten_func(aux_data, children):
        obj = object.__new__(MyContainer)
        obj.x, obj.y = children
        (obj.size,) = aux_data
        return obj

    olympus.tree_util.register_pytree_node(MyContainer, flatten_func, unflatten_func)
    check(olympus.jit(f)(m), [1.0, 2.0, 3.0, 4.0, 5.0], np.float32)


def test_dataclass_meta_fields_are_static_under_jit():
    @functools.partial(olympus.tree_util.register_dataclass, data_fields=["x", "y"],
                       meta_fields=["op"])
    @dataclasses.dataclass
    class MyStruct:
        x: object
        y: object
        op: str

    calls = []

    @olympus.jit
    def compiled_func(m):
        calls.append(m.op)
        if m.op == "add":
            return m.x + m.y
        return m.x - m.y

    m = MyStruct(x=jnp.ones(3), y=jnp.arange(3), op="add")
    check(compiled_func(m), [1.0, 2.0, 3.0], np.float32)
    check(compiled_func(MyStruct(jnp.zeros(3), jnp.arange(3), "add")), [0.0, 1.0, 2.0])
    check(compiled_func(MyStruct(jnp.zeros(3), jnp.arange(3), "sub")), [0.0, -1.0, -2.0])
    assert calls == ["add", "sub"]  # a new meta value retraces; new data does not


def test_grad_and_vmap_of_a_dataclass():
    @olympus.tree_util.register_dataclass
    @dataclasses.dataclass
    class Linear:
        w: object
        b: object
        act: str = olympus.tree.static(default="id")

    def loss(p, x):
        return jnp.sum((x @ p.w + p.b) ** 2)

    p = Linear(jnp.array([[1.0], [2.0]]), jnp.array([0.5]))
    x = jnp.array([[1.0, 1.0], [0.0, 2.0]])
    g = olympus.grad(loss)(p, x)
    assert type(g) is Linear and g.act == "id"
    r = np.asarray(x) @ np.asarray(p.w) + np.asarray(p.b)  # residuals [[3.5], [4.5]]
    check(g.w, 2 * np.asarray(x).T @ r, np.float32)
    check(g.b, 2 * r.sum(axis=0), np.float32)

    batched = Linear(jnp.arange(6.0).reshape(3, 2, 1), jnp.zeros(1))
    out = olympus.vmap(lambda q: q.w[:, 0] * 2 + q.b, in_axes=(Linear(0, None),))(batched)
    check(out, np.arange(6.0).reshape(3, 2) * 2, np.float32)


def test_namedtuple_string_leaf_is_refused_by_jit():
    """A namedtuple's fields are all leaves, so a str field is not a valid jit argument
    (JAX raises TypeError too)."""

    class MyOtherContainer(collections.namedtuple("MyOtherContainer", "name a b c")):
        pass

    with pytest.raises(TypeError):
        olympus.jit(lambda x: x.a + x.b)(MyOtherContainer("moc", 1, 2, 3))


def test_register_static_and_partial_under_jit():
    @olympus.tree_util.register_static
    class StaticStr(str):
        pass

    @olympus.jit
    def f(x, y, s):
        return x + y if s == "add" else x - y

    out = f(1, 2, StaticStr("add"))
    check(out, 3, np.int32)
    assert out.weak_type  # JAX: Array(3, dtype=int32, weak_type=True)
    check(f(1, 2, StaticStr("sub")), -1)

    add_one = olympus.tree_util.Partial(jnp.add, 1)
    check(add_one(2), 3)

    @olympus.jit
    def call_func(fn, *args):
        return fn(*args)

    before = traces()
    out = call_func(add_one, 2)
    check(out, 3, np.int32)
    assert out.weak_type
    check(call_func(olympus.tree_util.Partial(jnp.add, 5), 2), 7)  # same structure: cached
    assert traces() - before == 1
    check(call_func(olympus.tree_util.Partial(jnp.add), 1, 2), 3)


def test_custom_node_through_vmap_does_not_rebuild_with_placeholders():
    """JAX's custom-pytrees guide: a class whose __init__ converts its argument still
    works under vmap, because in_axes are matched on the structure alone."""

    class MyTree:
        def __init__(self, a):
            self.a = jnp.asarray(a)

    olympus.tree_util.register_pytree_node(MyTree, lambda t: ((t.a,), None),
                                           lambda _, args: MyTree(*args))
    tree = MyTree(jnp.arange(5.0))
    out = olympus.vmap(lambda t: t)(tree)
    assert type(out) is MyTree
    check(out.a, np.arange(5.0), np.float32)
    out = olympus.vmap(lambda t, k: t.a * k, in_axes=(0, None))(tree, 3.0)
    check(out, np.arange(5.0) * 3, np.float32)


def test_vmap_in_axes_mismatch_message():
    """Recorded from reference JAX 0.10.2 (jax.vmap with the same arguments)."""

    def f(t):
        return t["a"] * t["b"]

    with pytest.raises(ValueError) as info:
        olympus.vmap(f, in_axes=({"a": 0, "c": None},))({"a": jnp.arange(3.0), "b": 2.0})
    assert str(info.value) == (
        "vmap in_axes specification must be a tree prefix of the corresponding value; \n"
        "  Mismatch details (1 found):\n"
        "  pytree structure error: different pytree metadata at key path\n"
        "    vmap in_axes[0]\n"
        "At that key path, the prefix pytree vmap in_axes has a subtree of type\n"
        "    <class 'dict'>\n"
        "with metadata\n"
        "    ('a', 'c')\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        "    ('a', 'b')\n"
        "so the diff in the metadata at these pytree nodes is\n"
        "    - ('a', 'c')\n"
        "    ?        ^\n"
        "\n"
        "    + ('a', 'b')\n"
        "    ?        ^\n"
    )
    check(olympus.vmap(f, in_axes=({"a": 0, "b": None},))({"a": jnp.arange(3.0), "b": 2.0}),
          [0.0, 2.0, 4.0], np.float32)


def test_vmap_out_axes_pytree():
    out = olympus.vmap(lambda x: {"col": x, "row": x * 2}, out_axes={"col": 1, "row": 0})(
        jnp.arange(6.0).reshape(2, 3))
    check(out["col"], np.arange(6.0).reshape(2, 3).T)
    check(out["row"], np.arange(6.0).reshape(2, 3) * 2)


def test_tree_map_on_tracers_and_scan_over_a_dataclass_carry():
    @olympus.tree_util.register_dataclass
    @dataclasses.dataclass
    class State:
        total: object
        count: object

    def step(state, x):
        new = olympus.tree.map(operator.add, state, State(x, jnp.int32(1)))
        return new, olympus.tree.reduce(operator.add, olympus.tree.leaves(new.total))

    xs = jnp.arange(4.0)
    final, partial_sums = olympus.jit(lambda s: lax.scan(step, s, xs))(
        State(jnp.float32(0.0), jnp.int32(0)))
    check(final.total, 6.0, np.float32)
    check(final.count, 4, np.int32)
    check(partial_sums, [0.0, 1.0, 3.0, 6.0])


def test_key_paths_inside_jit():
    seen = []

    @olympus.jit
    def f(params):
        for path, leaf in olympus.tree_util.tree_leaves_with_path(params):
            seen.append((olympus.tree_util.keystr(path), leaf.shape))
        return olympus.tree.map_with_path(lambda p, x: x * len(p), params)

    out = f({"dense": {"w": jnp.ones((2, 2)), "b": jnp.ones(2)}, "scale": jnp.ones(())})
    assert seen == [("['dense']['b']", (2,)), ("['dense']['w']", (2, 2)), ("['scale']", ())]
    check(out["dense"]["w"], np.full((2, 2), 2.0))
    check(out["scale"], 1.0)


def test_private_tree_util_path_of_jax_docs():
    """JAX's `flatten_one_level` docstring imports it from ``jax._src.tree_util``; the
    same import works here, with its recorded output (reference JAX 0.10.2)."""
    from olympus._src.tree_util import flatten_one_level

    flattened, meta = flatten_one_level({"a": [1, 2], "b": {"c": 3}})
    assert flattened == ([1, 2], {"c": 3}) and type(flattened) is tuple
    assert meta == ("a", "b")
