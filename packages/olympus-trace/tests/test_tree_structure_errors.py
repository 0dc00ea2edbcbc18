"""Errors for pytrees that do not fit: mismatched structures (tree_map, tree_broadcast,
flatten_axes), bad custom nodes, register_dataclass misuse.

Every expected message here was recorded by running reference JAX 0.10.2 (in its own
process, with ``jax.tree_util`` and ``jax._src.api_util.flatten_axes``) on the same trees;
the only edits are class paths (``__main__.`` for classes defined in the recording script,
JAX's ``PytreeLeaf`` for its placeholder class) and one case where JAX itself crashes
(noted below). Each test runs once per pytree backend (C++ when jaxlib is importable, and
the pure-Python one).
"""

from __future__ import annotations

import collections
import dataclasses

import pytest

from olympus_trace import tree_util as tu

HAVE_CPP = "cpp" in tu.available_backends()
BACKENDS = [
    pytest.param("cpp", marks=pytest.mark.skipif(not HAVE_CPP, reason="jaxlib not importable")),
    "python",
]


@pytest.fixture(params=BACKENDS)
def backend(request):
    with tu._use_backend(request.param):
        yield request.param


def here(message: str) -> str:
    """A recorded message with the recording script's module name replaced by this one's."""
    return message.replace("__main__.", f"{__name__}.")


Point = collections.namedtuple("Point", "x y")
Point3 = collections.namedtuple("Point", "x y z")  # same name, different class


class Box:
    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag


tu.register_pytree_node(Box, lambda x: ((x.a, x.b), x.tag), lambda tag, ch: Box(*ch, tag=tag))


class Keyed:
    """A keyed custom node whose children carry GetAttrKey entries f0, f1, ..."""

    def __init__(self, *vals):
        self.vals = vals


tu.register_pytree_with_keys(
    Keyed,
    lambda k: (tuple((tu.GetAttrKey(f"f{i}"), v) for i, v in enumerate(k.vals)), None),
    lambda _, ch: Keyed(*ch),
)


class Named:
    """A keyed custom node whose children carry DictKey entries."""

    def __init__(self, d):
        self.d = d


tu.register_pytree_with_keys(
    Named,
    lambda k: (tuple((tu.DictKey(n), v) for n, v in sorted(k.d.items())), len(k.d)),
    lambda n, ch: Named(dict(zip(range(n), ch))),
)


@tu.register_dataclass
@dataclasses.dataclass
class DC:
    x: object
    y: object
    s: str = dataclasses.field(default="a", metadata=dict(static=True))


def first(*xs):
    return xs[0]


# (first tree, other tree, JAX's message for tree_map(first, first_tree, other_tree))
TREE_MAP_MISMATCHES = {
    "list_len": (
        [1, 2],
        [1, 2, 3],
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type list of "
        "length 2, but the full pytree has a subtree of the same type but of length 3.",
    ),
    "types": (
        [1, 2],
        (1, 2),
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'list'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'tuple'>.",
    ),
    "dict_keys": (
        {"a": 1, "b": 2},
        {"a": 1, "c": 2},
        "pytree structure error: different pytree metadata at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\n"
        "with metadata\n"
        "    ('a', 'b')\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        "    ('a', 'c')\n"
        "so the diff in the metadata at these pytree nodes is\n"
        "    - ('a', 'b')\n"
        "    ?        ^\n"
        "\n"
        "    + ('a', 'c')\n"
        "    ?        ^\n",
    ),
    "dict_nkeys": (
        {"a": 1, "b": 2},
        {"a": 1},
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\n"
        "with 2 child keys\n"
        "    a b\n"
        "but at the same key path the full pytree has a subtree of the same type but with 1 "
        "child keys\n"
        "    a\n"
        "so the symmetric difference on key sets is\n"
        "    b",
    ),
    "nested_len": (
        {"a": [1, (2, 3)]},
        {"a": [1, (2, 3, 4)]},
        "pytree structure error: different lengths of tuple at key path\n"
        "    tree_map tree['a'][1]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type tuple of "
        "length 2, but the full pytree has a subtree of the same type but of length 3.",
    ),
    "nested_types": (
        {"a": [1, (2, 3)]},
        {"a": [1, [2, 3]]},
        "pytree structure error: different types at key path\n"
        "    tree_map tree['a'][1]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'tuple'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'list'>.",
    ),
    "none_vs_leaf": (
        [None, 1],
        [1, 1],
        "pytree structure error: different types at key path\n"
        "    tree_map tree[0]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'NoneType'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'int'>.",
    ),
    "deep_leaf": (
        {"a": (1, 2), "b": [3]},
        {"a": (1, 2), "b": 3},
        "pytree structure error: different types at key path\n"
        "    tree_map tree['b']\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'list'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'int'>.",
    ),
    "custom_vs_namedtuple": (
        Box(1, 2),
        Point(1, 2),
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class '__main__.Box'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class '__main__.Point'>.",
    ),
    "custom_meta": (
        Box(1, 2, tag="x"),
        Box(1, 2, tag="y"),
        "pytree structure error: different pytree metadata at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class '__main__.Box'>\n"
        "with metadata\n"
        "    x\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        "    y\n"
        "so the diff in the metadata at these pytree nodes is\n"
        "    - x\n"
        "    + y",
    ),
    "dataclass_meta": (
        DC(1, 2),
        DC(1, 2, "b"),
        "pytree structure error: different pytree metadata at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class '__main__.DC'>\n"
        "with metadata\n"
        "    ('a',)\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        "    ('b',)\n"
        "so the diff in the metadata at these pytree nodes is\n"
        "    - ('a',)\n"
        "    ?   ^\n"
        "\n"
        "    + ('b',)\n"
        "    ?   ^\n",
    ),
    "ordereddict_order": (
        collections.OrderedDict(a=1, b=2),
        collections.OrderedDict(b=1, a=2),
        "pytree structure error: different pytree metadata at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'collections.OrderedDict'>\n"
        "with metadata\n"
        "    ('a', 'b')\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        "    ('b', 'a')\n"
        "so the diff in the metadata at these pytree nodes is\n"
        "    - ('a', 'b')\n"
        "    + ('b', 'a')",
    ),
    "namedtuple_same_name": (
        Point(1, 2),
        Point3(1, 2, 3),
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class '__main__.Point'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class '__main__.Point'>.",
    ),
    "dictkeyed_children": (
        Named({"a": 1, "b": 2}),
        Named({"a": 1}),
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class '__main__.Named'>\n"
        "with 2 child keys\n"
        "    a b\n"
        "but at the same key path the full pytree has a subtree of the same type but with 1 "
        "child keys\n"
        "    a\n"
        "so the symmetric difference on key sets is\n"
        "    b",
    ),
    # JAX 0.10.2 raises AttributeError("'GetAttrKey' object has no attribute 'key'") here
    # while building its message; Olympus lists the attribute names instead.
    "getattrkeyed_children": (
        Keyed(1, 2),
        Keyed(1, 2, 3),
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class '__main__.Keyed'>\n"
        "with 2 child keys\n"
        "    f0 f1\n"
        "but at the same key path the full pytree has a subtree of the same type but with 3 "
        "child keys\n"
        "    f0 f1 f2\n"
        "so the symmetric difference on key sets is\n"
        "    f2",
    ),
    "inside_namedtuple": (
        Point((1, 2), 3),
        Point((1, 2, 3), 3),
        "pytree structure error: different lengths of tuple at key path\n"
        "    tree_map tree.x\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type tuple of "
        "length 2, but the full pytree has a subtree of the same type but of length 3.",
    ),
    "first_of_two": (
        {"a": [1], "b": (2,)},
        {"a": [1, 2], "b": (2, 3)},
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map tree['a']\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type list of "
        "length 1, but the full pytree has a subtree of the same type but of length 2.",
    ),
    "none_root": (
        None,
        1,
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'NoneType'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'int'>.",
    ),
}


@pytest.mark.parametrize("case", list(TREE_MAP_MISMATCHES))
def test_tree_map_mismatch_message(backend, case):
    tree, other, message = TREE_MAP_MISMATCHES[case]
    with pytest.raises(ValueError) as info:
        tu.tree_map(first, tree, other)
    assert str(info.value) == here(message)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_tree_map_mismatch_in_a_later_tree(backend):
    """The message is about the tree that does not fit, whichever argument it is."""
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda *x: 0, [1, 2], [1, 2], [1, 2, 3])
    assert str(info.value) == (
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type list of "
        "length 2, but the full pytree has a subtree of the same type but of length 3."
    )


def test_tree_map_with_path_mismatch(backend):
    with pytest.raises(ValueError) as info:
        tu.tree_map_with_path(lambda p, *x: 0, {"a": [1]}, {"a": [1, 2]})
    assert str(info.value) == (
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map_with_path tree['a']\n"
        "At that key path, the prefix pytree tree_map_with_path tree has a subtree of type "
        "list of length 1, but the full pytree has a subtree of the same type but of length 2."
    )
    # a path-taking is_leaf is asked about the root, with the root's (empty) path
    with pytest.raises(ValueError, match="tree_map_with_path tree\\['a'\\]"):
        tu.tree_map_with_path(
            lambda p, *x: 0, {"a": [1]}, {"a": [1, 2]},
            is_leaf=lambda p, x: False, is_leaf_takes_path=True,
        )


def test_tree_map_mismatch_with_is_leaf(backend):
    with pytest.raises(ValueError) as info:
        tu.tree_map(first, [[1, 2]], [[1, 2, 3]], is_leaf=lambda x: False)
    assert "    tree_map tree[0]\n" in str(info.value)
    # is_leaf turning the mismatching subtree into a leaf: nothing to report
    out = tu.tree_map(
        first, [[1, 2], 3], [[1, 2, 3], 3],
        is_leaf=lambda x: isinstance(x, list) and len(x) == 2 and x[0] == 1,
    )
    assert out == [[1, 2], 3]


def test_tree_map_keeps_a_mismatch_it_cannot_explain(backend):
    """A custom flatten that fails on the other tree: its own exception comes through."""

    class Fussy:
        def __init__(self, v, ok=True):
            self.v, self.ok = v, ok

    def flatten(x):
        if not x.ok:
            raise RuntimeError("cannot flatten this one")
        return (x.v,), None

    tu.register_pytree_node(Fussy, flatten, lambda _, ch: Fussy(*ch))
    with pytest.raises(RuntimeError, match="cannot flatten this one"):
        tu.tree_map(first, [Fussy(1)], [Fussy(1, ok=False)])


BROADCAST_MISMATCHES = [
    (
        (1, 2),
        (0, 1, 2),
        "pytree structure error: different lengths of tuple at key path\n"
        "    broadcast_prefix prefix_tree\n"
        "At that key path, the prefix pytree broadcast_prefix prefix_tree has a subtree of "
        "type tuple of length 2, but the full pytree has a subtree of the same type but of "
        "length 3.",
    ),
    (
        [1, 2],
        (0, 1),
        "pytree structure error: different types at key path\n"
        "    broadcast_prefix prefix_tree\n"
        "At that key path, the prefix pytree broadcast_prefix prefix_tree has a subtree of type\n"
        "    <class 'list'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'tuple'>.",
    ),
    (
        {"a": [1, 2]},
        {"a": [0, 0, 0]},
        "pytree structure error: different lengths of list at key path\n"
        "    broadcast_prefix prefix_tree['a']\n"
        "At that key path, the prefix pytree broadcast_prefix prefix_tree has a subtree of "
        "type list of length 2, but the full pytree has a subtree of the same type but of "
        "length 3.",
    ),
]


@pytest.mark.parametrize("prefix,full,message", BROADCAST_MISMATCHES)
def test_tree_broadcast_mismatch(backend, prefix, full, message):
    with pytest.raises(ValueError) as info:
        tu.tree_broadcast(prefix, full)
    assert str(info.value) == message


def test_prefix_errors_lists_every_mismatch(backend):
    errors = tu.prefix_errors({"a": [1], "b": (2,)}, {"a": [1, 2], "b": (2, 3)})
    assert [type(e("in_axes")) for e in errors] == [ValueError, ValueError]
    assert "\n--\n".join(e("in_axes").args[0] for e in errors) == (
        "pytree structure error: different lengths of list at key path\n"
        "    in_axes['a']\n"
        "At that key path, the prefix pytree in_axes has a subtree of type list of length 1, "
        "but the full pytree has a subtree of the same type but of length 2.\n"
        "--\n"
        "pytree structure error: different lengths of tuple at key path\n"
        "    in_axes['b']\n"
        "At that key path, the prefix pytree in_axes has a subtree of type tuple of length 1, "
        "but the full pytree has a subtree of the same type but of length 2."
    )
    assert tu.prefix_errors(0, {"a": [1, 2]}) == []
    assert tu.prefix_errors({"a": None, "b": 0}, {"a": None, "b": [1, 2]}) == []


# --- flatten_axes (vmap in_axes / out_axes against the argument structure) ------------------


def test_flatten_axes_broadcasts_without_unflattening(backend):
    class Picky:
        """Its unflatten refuses anything but ints: flatten_axes must not call it."""

        def __init__(self, a, b):
            if not all(isinstance(v, int) for v in (a, b)):
                raise TypeError("Picky wants ints")
            self.a, self.b = a, b

    tu.register_pytree_node(Picky, lambda p: ((p.a, p.b), None), lambda _, ch: Picky(*ch))
    td = tu.tree_structure(({"a": 1, "b": (2, 3)}, [1, None], Picky(4, 5)))
    spec = ({"a": None, "b": 1}, [2, None], Picky(0, 1))
    assert tu.flatten_axes("vmap in_axes", td, spec) == [None, 1, 1, 2, 0, 1]
    assert tu.flatten_axes("vmap in_axes", td, (0, None, 1)) == [0, 0, 0, None, 1, 1]
    assert tu.flatten_axes("vmap in_axes", td, 0) == [0] * 6
    assert tu.flatten_axes("vmap in_axes", tu.tree_structure([None, 2]), [1, 0]) == [0]


def test_flatten_axes_dict_mismatch(backend):
    td = tu.tree_structure(({"a": 1, "b": 2},))
    with pytest.raises(ValueError) as info:
        tu.flatten_axes("vmap in_axes", td, ({"a": 0, "c": None},))
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


def test_flatten_axes_reports_every_mismatch(backend):
    td = tu.tree_structure(({"a": 1, "b": (2, 3)}, None, Box(4, 5)))
    with pytest.raises(ValueError) as info:
        tu.flatten_axes("vmap in_axes", td, (0, {"x": 1}, None))
    assert str(info.value) == here(
        "vmap in_axes specification must be a tree prefix of the corresponding value; \n"
        "  Mismatch details (2 found):\n"
        "  pytree structure error: different types at key path\n"
        "    vmap in_axes[1]\n"
        "At that key path, the prefix pytree vmap in_axes has a subtree of type\n"
        "    <class 'dict'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'NoneType'>.\n"
        "  pytree structure error: different types at key path\n"
        "    vmap in_axes[2]\n"
        "At that key path, the prefix pytree vmap in_axes has a subtree of type\n"
        "    <class 'NoneType'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class '__main__.Box'>."
    )
    with pytest.raises(ValueError) as info:
        tu.flatten_axes("vmap in_axes", tu.tree_structure(([1, 2], 3)), ([0, 0, 0], None))
    assert str(info.value) == (
        "vmap in_axes specification must be a tree prefix of the corresponding value; \n"
        "  Mismatch details (2 found):\n"
        "  pytree structure error: different lengths of list at key path\n"
        "    vmap in_axes[0]\n"
        "At that key path, the prefix pytree vmap in_axes has a subtree of type list of "
        "length 3, but the full pytree has a subtree of the same type but of length 2.\n"
        "  pytree structure error: different types at key path\n"
        "    vmap in_axes[1]\n"
        "At that key path, the prefix pytree vmap in_axes has a subtree of type\n"
        "    <class 'NoneType'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        f"    {tu._PytreeLeaf}."  # JAX: <class 'jax._src.api_util.PytreeLeaf'>
    )


# --- bad custom nodes -----------------------------------------------------------------------


def test_flatten_must_return_a_pair(backend):
    class NotPair:
        pass

    class ThreeParts:
        pass

    class NotIterable:
        pass

    tu.register_pytree_node(NotPair, lambda x: [1, 2], lambda a, c: NotPair())
    tu.register_pytree_node(ThreeParts, lambda x: ((1,), None, 3), lambda a, c: ThreeParts())
    tu.register_pytree_node(NotIterable, lambda x: (1, None), lambda a, c: NotIterable())
    prefix = "The to_iterable function for a custom PyTree node should return a "
    with pytest.raises(ValueError) as info:
        tu.tree_leaves(NotPair())
    assert str(info.value) == prefix + "(children, aux_data) tuple, got [1, 2]"
    for fn in (tu.tree_leaves, tu.tree_leaves_with_path):
        with pytest.raises(ValueError) as info:
            fn(ThreeParts())
        assert str(info.value) == prefix + "(children, aux_data) tuple, got ((1,), None, 3)"
    with pytest.raises(ValueError) as info:
        tu.tree_leaves(NotIterable())
    assert str(info.value) == (
        prefix + "(children, aux_data) tuple where 'children' is iterable, got (1, None)"
    )


def test_flatten_may_return_any_iterable(backend):
    class Gen:
        def __init__(self, *v):
            self.v = v

    tu.register_pytree_node(Gen, lambda g: ((x for x in g.v), None), lambda _, ch: Gen(*ch))
    leaves, td = tu.tree_flatten([Gen(1, 2), Gen()])
    assert leaves == [1, 2]
    assert repr(td) == "PyTreeDef([CustomNode(Gen[None], [*, *]), CustomNode(Gen[None], [])])"
    assert td.unflatten([3, 4])[0].v == (3, 4)


def test_unflatten_errors_propagate(backend):
    class Fragile:
        pass

    tu.register_pytree_node(Fragile, lambda f: ((1,), None), lambda a, c: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        tu.tree_map(lambda x: x, Fragile())


def test_leaf_count_errors(backend):
    td = tu.tree_structure([1, 2, 3])
    with pytest.raises(ValueError, match="^Too few leaves for PyTreeDef; expected 3, got 2$"):
        tu.tree_unflatten(td, [1, 2])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 3\.$"):
        tu.tree_unflatten(td, [1, 2, 3, 4])
    with pytest.raises(TypeError):
        tu.tree_unflatten(td, 5)
    assert tu.tree_unflatten(td, (i for i in range(3))) == [0, 1, 2]


def test_duplicate_registration(backend):
    with pytest.raises(ValueError) as info:
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)
    assert str(info.value) == here(
        "Duplicate custom PyTreeDef type registration for <class '__main__.Box'>."
    )
    with pytest.raises(ValueError) as info:
        tu.register_pytree_node(list, lambda b: ((), None), lambda a, c: None)
    assert str(info.value) == "Duplicate custom PyTreeDef type registration for <class 'list'>."
    with pytest.raises(ValueError) as info:
        tu.register_dataclass(DC)
    assert str(info.value) == here(
        "Duplicate custom dataclass PyTreeDef type registration for <class '__main__.DC'>."
    )
    with pytest.raises(TypeError, match="nodetype must be a type, got 5"):
        tu.register_pytree_node(5, lambda b: ((), None), lambda a, c: None)


def test_unsortable_dict_keys_and_bad_is_leaf(backend):
    with pytest.raises(
        ValueError, match="^Comparator raised exception while sorting pytree dictionary keys.$"
    ):
        tu.tree_map(lambda x: x + 1, {1: 7, "y": 42})
    with pytest.raises(
        ValueError, match="^is_leaf predicate returned a non-boolean value 1; expected a boolean$"
    ):
        tu.tree_leaves([1, 2], is_leaf=lambda x: 1)
    assert tu.tree_leaves([1, 2], is_leaf=lambda x: None) == [1, 2]


def test_flatten_one_level_of_a_leaf(backend):
    for fn in (tu.flatten_one_level, tu.flatten_one_level_with_keys):
        with pytest.raises(ValueError) as info:
            fn(1)
        assert str(info.value) == "can't tree-flatten type: <class 'int'>"


# --- register_dataclass misuse --------------------------------------------------------------


def test_register_dataclass_needs_both_field_lists():
    @dataclasses.dataclass
    class Pair:
        a: int
        b: int

    with pytest.raises(TypeError) as info:
        tu.register_dataclass(Pair, data_fields=["a"])
    assert str(info.value) == (
        "register_dataclass: data_fields and meta_fields must both be specified when either "
        "is specified. Got data_fields=['a'] meta_fields=None."
    )

    class Plain:
        pass

    with pytest.raises(TypeError) as info:
        tu.register_dataclass(Plain)
    assert str(info.value) == (
        "register_dataclass: data_fields and meta_fields are required when nodetype is not a "
        f"dataclass. Got nodetype={Plain!r}."
    )
    assert tu.tree_leaves(Pair(1, 2)) == [Pair(1, 2)]  # nothing was registered


def test_register_dataclass_field_checks():
    @dataclasses.dataclass
    class Pair:
        x: int
        y: int

    head = (
        "data_fields and meta_fields must include all dataclass fields with ``init=True`` "
        "and only them."
    )
    with pytest.raises(ValueError) as info:
        tu.register_dataclass(Pair, data_fields=["x"], meta_fields=[])
    assert str(info.value) == head + (
        " Missing fields: {'y'}. Add them to drop_fields to suppress this error."
    )
    with pytest.raises(ValueError) as info:
        tu.register_dataclass(Pair, data_fields=["x", "y", "w"], meta_fields=[])
    assert str(info.value) == head + " Unexpected fields: {'w'}."
    with pytest.raises(ValueError) as info:
        tu.register_dataclass(Pair, data_fields=["x", "y"], meta_fields=["y"])
    assert str(info.value) == (
        "data_fields and meta_fields must not overlap. Overlapping fields: {'y'}."
    )
    assert tu.tree_leaves(Pair(1, 2)) == [Pair(1, 2)]

    @dataclasses.dataclass
    class WithInitFalse:
        x: int
        z: int = dataclasses.field(default=0, init=False)

    # Like JAX, inference takes every field, so an init=False field is "unexpected" ...
    with pytest.raises(ValueError) as info:
        tu.register_dataclass(WithInitFalse)
    assert str(info.value) == head + " Unexpected fields: {'z'}."

    @dataclasses.dataclass
    class WithDropped:
        x: int
        w: int = 0

    # ... and so is a dropped one; drop_fields works with explicit field lists.
    with pytest.raises(ValueError) as info:
        tu.register_dataclass(WithDropped, drop_fields=["w"])
    assert str(info.value) == head + " Unexpected fields: {'w'}."
    tu.register_dataclass(WithDropped, data_fields=["x"], meta_fields=[], drop_fields=["w"])
    leaves, td = tu.tree_flatten(WithDropped(3, w=7))
    assert leaves == [3]
    assert td.unflatten([4]) == WithDropped(4, w=0)  # a dropped field is not carried over
