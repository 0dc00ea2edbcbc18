"""Tests for olympus_trace.tree_util and its two pytree backends.

Most tests take the ``backend`` fixture and run once per backend: ``cpp``
(jaxlib's C++ pytree with Olympus's own registry) and ``python``
(``olympus_trace._pytree_py``).  The ``cpp`` half is skipped, with a reason,
when jaxlib is not importable.  The parity tests further down flatten the same
trees with both registries and compare leaves, reprs, paths and error messages
exactly.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from olympus_trace import _pytree_py
from olympus_trace import tree_util as tu

HAVE_CPP = "cpp" in tu.available_backends()
NO_CPP_REASON = (
    "C++ pytree backend disabled by OLYMPUS_PURE_PYTHON_PYTREE"
    if tu._FORCE_PURE_PYTHON
    else "jaxlib C++ pytree (jaxlib._jax.pytree) is not importable"
)
needs_cpp = pytest.mark.skipif(not HAVE_CPP, reason=NO_CPP_REASON)
BACKENDS = [pytest.param("cpp", marks=needs_cpp), "python"]
SRC_DIR = Path(tu.__file__).resolve().parent


@pytest.fixture(params=BACKENDS)
def backend(request):
    with tu._use_backend(request.param):
        assert tu.BACKEND == request.param
        yield request.param


def assert_same(a, b):
    """Exact structural equality: same types all the way down, equal leaves.
    (Dict key *order* is checked separately where it matters.)"""
    assert type(a) is type(b), (a, b)
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), (a, b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    else:
        assert a == b, (a, b)


# ---------------------------------------------------------------------------
# Node types used throughout (registered once, into both registries)
# ---------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")
Point3 = collections.namedtuple("Point3", "x y z")
OtherPoint = collections.namedtuple("OtherPoint", "x y")


class Box:
    """Custom node registered with register_pytree_node (no keys)."""

    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other):
        return type(other) is Box and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r}, tag={self.tag!r})"


tu.register_pytree_node(Box, lambda x: ((x.a, x.b), x.tag), lambda tag, ch: Box(*ch, tag=tag))


class Keyed:
    """Custom node registered with keys (GetAttrKey/DictKey entries)."""

    def __init__(self, left, right):
        self.left, self.right = left, right

    def __eq__(self, other):
        return type(other) is Keyed and (self.left, self.right) == (other.left, other.right)

    def __repr__(self):
        return f"Keyed({self.left!r}, {self.right!r})"


tu.register_pytree_with_keys(
    Keyed,
    # Look the key classes up at call time: they belong to the active backend.
    lambda k: (((tu.GetAttrKey("left"), k.left), (tu.DictKey("right"), k.right)), None),
    lambda _, ch: Keyed(*ch),
)


@tu.register_pytree_node_class
class Pair:
    def __init__(self, first, second, label=None):
        self.first, self.second, self.label = first, second, label

    def tree_flatten(self):
        return (self.first, self.second), self.label

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, label=aux)

    def __eq__(self, other):
        return type(other) is Pair and (self.first, self.second, self.label) == (
            other.first,
            other.second,
            other.label,
        )

    def __repr__(self):
        return f"Pair({self.first!r}, {self.second!r}, label={self.label!r})"


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata=dict(static=True))


@functools.partial(tu.register_dataclass, data_fields=["x"], meta_fields=["mode"])
@dataclasses.dataclass(frozen=True)
class Explicit:
    x: object
    mode: str


@tu.register_static
@dataclasses.dataclass(frozen=True)
class StaticCfg:
    n: int


# A corpus of trees with their expected leaves and treedef reprs.
CASES = [
    ("leaf", 1.5, [1.5], "PyTreeDef(*)"),
    ("none", None, [], "PyTreeDef(None)"),
    ("empty_tuple", (), [], "PyTreeDef(())"),
    ("empty_list", [], [], "PyTreeDef([])"),
    ("empty_dict", {}, [], "PyTreeDef({})"),
    ("one_tuple", (7,), [7], "PyTreeDef((*,))"),
    ("nested_tuple", (1, (2, (3,)), 4), [1, 2, 3, 4], "PyTreeDef((*, (*, (*,)), *))"),
    ("list", [1, [2, 3], []], [1, 2, 3], "PyTreeDef([*, [*, *], []])"),
    (
        "dict_sorted",
        {"b": 1, "a": 2, "c": (3, None)},
        [2, 1, 3],
        "PyTreeDef({'a': *, 'b': *, 'c': (*, None)})",
    ),
    (
        "brief_example",
        (1, {"a": 2, "b": [3, None]}),
        [1, 2, 3],
        "PyTreeDef((*, {'a': *, 'b': [*, None]}))",
    ),
    ("int_keys", {2: "x", 1: "y", -5: None}, ["y", "x"], "PyTreeDef({-5: None, 1: *, 2: *})"),
    ("tuple_keys", {(1, 2): 3}, [3], "PyTreeDef({(1, 2): *})"),
    ("quoted_keys", {"a'b": 1, 'c"d': 2}, [1, 2], "PyTreeDef({\"a'b\": *, 'c\"d': *})"),
    (
        "namedtuple",
        Point(1, [2, None]),
        [1, 2],
        "PyTreeDef(CustomNode(namedtuple[Point], [*, [*, None]]))",
    ),
    ("custom", Box(1, {"k": 2}, tag="hi"), [1, 2], "PyTreeDef(CustomNode(Box[hi], [*, {'k': *}]))"),
    ("custom_keys", Keyed(1, (2, 3)), [1, 2, 3], "PyTreeDef(CustomNode(Keyed[None], [*, (*, *)]))"),
    (
        "node_class",
        Pair(1, 2, label=("l", 1)),
        [1, 2],
        "PyTreeDef(CustomNode(Pair[('l', 1)], [*, *]))",
    ),
    (
        "dataclass",
        Params(w=[1, 2], b=3, name="lin"),
        [1, 2, 3],
        "PyTreeDef(CustomNode(Params[('lin',)], [[*, *], *]))",
    ),
    (
        "dataclass_explicit",
        Explicit(x=(1,), mode="m"),
        [1],
        "PyTreeDef(CustomNode(Explicit[('m',)], [(*,)]))",
    ),
    ("static", [StaticCfg(3), 1], [1], "PyTreeDef([CustomNode(StaticCfg[StaticCfg(n=3)], []), *])"),
    (
        "ordereddict",
        collections.OrderedDict([("b", 1), ("a", 2)]),
        [1, 2],
        "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))",
    ),
    (
        "defaultdict",
        collections.defaultdict(int, {"b": 1, "a": 2}),
        [2, 1],
        "PyTreeDef(CustomNode(defaultdict[(<class 'int'>, ('a', 'b'))], [*, *]))",
    ),
    (
        "numpy_leaves",
        {"w": np.arange(3.0), "s": np.float32(2)},
        None,
        "PyTreeDef({'s': *, 'w': *})",
    ),
    (
        "mixed",
        [Params(w=Point(1, 2), b=None), {"z": Box(Pair(3, 4), (5,))}],
        [1, 2, 3, 4, 5],
        "PyTreeDef([CustomNode(Params[('p',)], [CustomNode(namedtuple[Point], [*, *]), None]), "
        "{'z': CustomNode(Box[t], [CustomNode(Pair[None], [*, *]), (*,)])}])",
    ),
]
CASE_IDS = [c[0] for c in CASES]


# ---------------------------------------------------------------------------
# Backend selection
# ---------------------------------------------------------------------------


def test_backend_choice():
    forced = os.environ.get("OLYMPUS_PURE_PYTHON_PYTREE", "") not in ("", "0")
    assert tu.BACKEND == ("cpp" if HAVE_CPP and not forced else "python")
    assert tu.default_registry is tu.olympus_registry
    assert tu.python_registry.__name__ == "python_registry"
    assert tu.python_registry.__module__ == "olympus_trace.tree_util"


@needs_cpp
def test_cpp_backend_uses_own_registry():
    from jaxlib._jax import pytree as cpp

    with tu._use_backend("cpp"):
        assert isinstance(tu.olympus_registry, cpp.PyTreeRegistry)
        assert tu.olympus_registry is not cpp.default_registry()
        assert tu.PyTreeDef is cpp.PyTreeDef
        assert tu.DictKey is cpp.DictKey
        assert tu.olympus_registry.__module__ == "olympus_trace.tree_util"
        assert tu.olympus_registry.__name__ == "cpp_registry"
        # Olympus registrations must not leak into jaxlib's (jax-shared) default registry.
        assert not cpp.default_registry().is_node(Box)
        assert tu.olympus_registry.is_node(Box)


def test_python_backend_types(backend):
    if backend == "python":
        assert tu.PyTreeDef is _pytree_py.PyTreeDef
        assert tu.DictKey is _pytree_py.DictKey
        assert tu.olympus_registry is tu.python_registry
    assert isinstance(tu.tree_structure(1), tu.PyTreeDef)


def _run_isolated(code: str, env_extra: dict | None = None) -> str:
    """Run ``code`` in a fresh interpreter with olympus_trace importable without
    executing the package ``__init__`` (which other work may be changing)."""
    prelude = textwrap.dedent(f"""
        import sys, types
        pkg = types.ModuleType("olympus_trace")
        pkg.__path__ = [{str(SRC_DIR)!r}]
        sys.modules["olympus_trace"] = pkg
    """)
    env = dict(os.environ)
    env.pop("OLYMPUS_PURE_PYTHON_PYTREE", None)
    env.update(env_extra or {})
    out = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_env_var_forces_python_backend():
    code = """
        from olympus_trace import tree_util as tu
        print(tu.BACKEND, type(tu.olympus_registry).__module__, tu.tree_structure((1, {'a': None})))
    """
    assert _run_isolated(code, {"OLYMPUS_PURE_PYTHON_PYTREE": "1"}) == (
        "python olympus_trace._pytree_py PyTreeDef((*, {'a': None}))"
    )


def test_works_without_jaxlib():
    code = """
        import sys
        sys.modules["jaxlib"] = None  # any 'import jaxlib...' now raises ImportError
        from olympus_trace import tree_util as tu
        import pickle
        leaves, td = tu.tree_flatten({'b': [1, 2], 'a': tu.Partial(max, 3)})
        assert pickle.loads(pickle.dumps(td)) == td
        print(tu.BACKEND, tu.available_backends(), leaves, td)
        assert "jaxlib._jax" not in sys.modules
    """
    assert _run_isolated(code) == (
        "python ('python',) [3, 1, 2] "
        "PyTreeDef({'a': CustomNode(Partial[<built-in function max>], [(*,), {}]), 'b': [*, *]})"
    )


@needs_cpp
def test_default_backend_in_fresh_process_is_cpp():
    assert _run_isolated("from olympus_trace import tree_util as tu; print(tu.BACKEND)") == "cpp"


# ---------------------------------------------------------------------------
# Flatten / unflatten round trips
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name,tree,leaves,rep", CASES, ids=CASE_IDS)
def test_flatten_roundtrip(backend, name, tree, leaves, rep):
    got_leaves, treedef = tu.tree_flatten(tree)
    if leaves is not None:
        assert_same(got_leaves, leaves)
    assert repr(treedef) == rep
    assert str(treedef) == rep
    assert treedef.num_leaves == len(got_leaves)
    rebuilt = tu.tree_unflatten(treedef, got_leaves)
    if name == "numpy_leaves":
        assert_same(rebuilt, {"s": tree["s"], "w": tree["w"]})
    elif name == "defaultdict":
        assert type(rebuilt) is collections.defaultdict and rebuilt.default_factory is int
        assert rebuilt == tree and list(rebuilt) == ["a", "b"]
    else:
        assert rebuilt == tree
        if not isinstance(tree, (Box, Keyed, Pair, Params, Explicit)) and name != "mixed":
            assert_same(rebuilt, tree)
    # A reused treedef takes the compiled path in the python backend: same result.
    for _ in range(3):
        again = treedef.unflatten(iter(got_leaves))
        assert tu.tree_structure(again) == treedef
        assert tu.tree_leaves(again) == got_leaves or name == "numpy_leaves"


def test_unflatten_new_leaves(backend):
    treedef = tu.tree_structure({"b": (0, None), "a": [0, Point(0, 0)]})
    assert_same(
        treedef.unflatten(["A", "B", "C", "D"]), {"a": ["A", Point("B", "C")], "b": ("D", None)}
    )
    assert_same(tu.tree_unflatten(treedef, range(4)), {"a": [0, Point(1, 2)], "b": (3, None)})
    leaf = tu.tree_structure(5)
    assert leaf.unflatten(["x"]) == "x"
    assert tu.tree_structure(None).unflatten([]) is None


def test_unflatten_leaf_count_errors(backend):
    treedef = tu.tree_structure({"a": 1, "b": (2, 3), "c": None})
    with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; expected 3, got 1$"):
        treedef.unflatten([1])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 3\.$"):
        treedef.unflatten([1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; expected 1, got 0$"):
        tu.tree_structure(1).unflatten([])


def test_dict_keys_sorted_and_insertion_independent(backend):
    d1 = {"b": 1, "a": 2, "c": 3}
    d2 = {"c": 3, "a": 2, "b": 1}
    l1, t1 = tu.tree_flatten(d1)
    l2, t2 = tu.tree_flatten(d2)
    assert l1 == l2 == [2, 1, 3]
    assert t1 == t2 and hash(t1) == hash(t2)
    assert repr(t1) == "PyTreeDef({'a': *, 'b': *, 'c': *})"
    assert list(t1.unflatten([10, 20, 30]).items()) == [("a", 10), ("b", 20), ("c", 30)]


def test_unsortable_dict_keys(backend):
    with pytest.raises(
        ValueError, match="Comparator raised exception while sorting pytree dictionary keys"
    ):
        tu.tree_flatten({1: "a", "x": "b"})


def test_none_is_an_empty_node(backend):
    leaves, treedef = tu.tree_flatten([None, 1, (None,)])
    assert leaves == [1]
    assert treedef.num_leaves == 1 and treedef.num_nodes == 5
    assert tu.tree_leaves(None) == []


def test_dict_and_list_subclasses_are_leaves(backend):
    class L(list):
        pass

    class T(tuple):
        pass

    x = [L([1, 2]), T((3,))]
    leaves, treedef = tu.tree_flatten(x)
    assert leaves == x and type(leaves[0]) is L
    assert repr(treedef) == "PyTreeDef([*, *])"


def test_strings_and_arrays_are_leaves(backend):
    arr = np.ones((2, 2), np.float32)
    leaves = tu.tree_leaves(["abc", b"xy", arr, 3j])
    assert leaves[0] == "abc" and leaves[1] == b"xy" and leaves[2] is arr and leaves[3] == 3j


def test_leaves_are_the_same_objects(backend):
    a, b = object(), np.zeros(3)
    leaves = tu.tree_leaves({"a": a, "b": [b]})
    assert leaves[0] is a and leaves[1] is b


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------


def test_treedef_equality_and_hash(backend):
    s = tu.tree_structure
    assert s((1, [2, {"a": 3}])) == s(("x", ["y", {"a": 0.5}]))
    assert hash(s((1, [2, {"a": 3}]))) == hash(s(("x", ["y", {"a": 0.5}])))
    assert s((1, 2)) != s([1, 2])
    assert s((1, 2)) != s((1, 2, 3))
    assert s({"a": 1}) != s({"b": 1})
    assert s(None) != s(1)
    assert s(()) != s(None)
    assert s(Point(1, 2)) != s(OtherPoint(1, 2))
    assert s(Point(1, 2)) != s((1, 2))
    # aux data participates in equality
    assert s(Box(1, 2, tag="x")) == s(Box(3, 4, tag="x"))
    assert s(Box(1, 2, tag="x")) != s(Box(1, 2, tag="y"))
    assert s(Params(1, 2, name="a")) != s(Params(1, 2, name="b"))
    assert s(Params(1, 2, name="a")) == s(Params(3, 4, name="a"))
    assert s(collections.OrderedDict(a=1, b=2)) != s(collections.OrderedDict(b=2, a=1))
    assert (s((1, 2)) == 5) is False
    # usable as a dict key
    cache = {s({"x": 1, "y": (2, 3)}): "hit"}
    assert cache[s({"y": (0, 0), "x": 0})] == "hit"
    assert s([1]) not in cache
    assert len({s((1, 2)), s((3, 4)), s([1, 2])}) == 2


def test_treedef_hash_ignores_unhashable_aux(backend):
    t1 = tu.tree_structure(Box(1, 2, tag=[1]))
    t2 = tu.tree_structure(Box(1, 2, tag=[2]))
    assert hash(t1) == hash(t2)
    assert t1 != t2
    assert t1 == tu.tree_structure(Box(5, 6, tag=[1]))


def test_treedef_equality_with_array_aux_raises(backend):
    t1 = tu.tree_structure(Box(1, 2, tag=np.arange(2)))
    t2 = tu.tree_structure(Box(1, 2, tag=np.arange(2)))
    with pytest.raises(
        ValueError, match="Exception raised while checking equality of metadata fields"
    ):
        _ = t1 == t2


def test_treedef_not_orderable(backend):
    with pytest.raises(TypeError):
        _ = tu.tree_structure((1,)) < tu.tree_structure((1,))


def test_num_leaves_num_nodes(backend):
    td = tu.tree_structure((1, {"a": 3, "b": [2, None]}))
    assert (td.num_leaves, td.num_nodes) == (3, 7)
    assert (tu.tree_structure(1).num_leaves, tu.tree_structure(1).num_nodes) == (1, 1)
    assert (tu.tree_structure(None).num_leaves, tu.tree_structure(None).num_nodes) == (0, 1)
    td = tu.tree_structure(Params(w=(1, 2), b=None))
    assert (td.num_leaves, td.num_nodes) == (2, 5)


def test_children_and_node_data(backend):
    td = tu.tree_structure((1, {"b": [2, None], "a": 3}))
    children = td.children()
    assert [repr(c) for c in children] == ["PyTreeDef(*)", "PyTreeDef({'a': *, 'b': [*, None]})"]
    assert tu.treedef_children(td) == children
    assert td.node_data() == (tuple, None)
    assert children[1].node_data() == (dict, ["a", "b"])
    assert children[0].node_data() is None
    assert children[0].children() == []
    assert tu.tree_structure(None).node_data() == (type(None), None)
    assert tu.tree_structure(Point(1, 2)).node_data() == (Point, None)
    assert tu.tree_structure(Box(1, 2, tag="q")).node_data() == (Box, "q")
    assert tu.tree_structure(Params(1, 2, name="n")).node_data() == (Params, ("n",))
    assert [c.num_leaves for c in tu.tree_structure((1, None, Params((1, 2), 3))).children()] == [
        1,
        0,
        3,
    ]


def test_from_node_data_and_children(backend):
    leaf = tu.tree_structure(1)
    reg = tu.default_registry
    build = tu.PyTreeDef.from_node_data_and_children
    assert build(reg, (dict, ["a", "b"]), [leaf, leaf]) == tu.tree_structure({"a": 1, "b": 2})
    assert build(reg, (Box, "zz"), [leaf, leaf]) == tu.tree_structure(Box(1, 2, tag="zz"))
    assert build(reg, (Point, None), [leaf, leaf]) == tu.tree_structure(Point(1, 2))
    assert build(reg, None, []) == leaf
    td = tu.tree_structure([Params(1, (2, 3), name="k"), None])
    assert build(reg, td.node_data(), td.children()) == td


def test_treedef_tuple_and_is_leaf(backend):
    x_def = tu.tree_structure([1, 2, 3])
    y_def = tu.tree_structure({"a": 4, "b": 5})
    xy = tu.treedef_tuple([x_def, y_def])
    assert xy == tu.tree_structure(([1, 2, 3], {"a": 4, "b": 5}))
    assert xy.num_leaves == 5
    assert tu.treedef_tuple([]) == tu.tree_structure(())
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert not tu.treedef_is_leaf(tu.tree_structure([1]))
    assert tu.treedef_is_strict_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_strict_leaf(tu.tree_structure(None))


def test_compose_and_transpose(backend):
    outer = tu.tree_structure({"a": 0, "b": 0})
    inner = tu.tree_structure((0, 0, 0))
    composed = outer.compose(inner)
    assert composed == tu.tree_structure({"a": (1, 2, 3), "b": (4, 5, 6)})
    assert composed.num_leaves == 6
    tree = {"a": (1, 2, 3), "b": (4, 5, 6)}
    assert_same(
        tu.tree_transpose(outer, inner, tree),
        ({"a": 1, "b": 4}, {"a": 2, "b": 5}, {"a": 3, "b": 6}),
    )
    assert_same(
        tu.tree_transpose(outer, None, tree), ({"a": 1, "b": 4}, {"a": 2, "b": 5}, {"a": 3, "b": 6})
    )
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(outer, inner, {"a": (1, 2), "b": (3, 4)})


def test_walk(backend):
    td = tu.tree_structure((1, (2, 3)))
    assert td.walk(lambda children, _aux: sum(children), lambda x: x * 10, [1, 2, 3]) == 60
    td = tu.tree_structure({"b": [0, 0], "a": 0})
    out = td.walk(lambda ch, aux: (ch, aux), lambda x: x, [1, 2, 3])
    assert out == ((1, ((2, 3), None)), ["a", "b"])


# ---------------------------------------------------------------------------
# flatten_up_to
# ---------------------------------------------------------------------------


def test_flatten_up_to(backend):
    td = tu.tree_structure((1, {"a": 2, "b": None}))
    assert_same(td.flatten_up_to((["x"], {"a": {"q": 1}, "b": None})), [["x"], {"q": 1}])
    td = tu.tree_structure(Params(w=0, b=(0, 0)))
    assert_same(td.flatten_up_to(Params(w=[1], b=((2,), 3))), [[1], (2,), 3])
    assert tu.tree_structure(1).flatten_up_to({"anything": [1, 2]}) == [{"anything": [1, 2]}]


FLATTEN_UP_TO_ERRORS = [
    ({"a": 1, "b": (2, 3), "c": None}, [1, 2], "Expected dict, got [1, 2]."),
    (
        {"a": 1, "b": (2, 3), "c": None},
        {"a": 1, "b": [2, 3], "c": None},
        "Expected tuple, got [2, 3].",
    ),
    (
        {"a": 1, "b": (2, 3), "c": None},
        {"a": 1, "b": (2, 3)},
        "Dict key mismatch; expected keys: ['a', 'b', 'c']; present keys: ['a', 'b'].",
    ),
    (
        {"b": 1, "a": 2, "c": 3},
        {"z": 1, "c": 2, "y": 3},
        "Dict key mismatch; expected keys: ['a', 'b', 'c']; present keys: ['c', 'y', 'z'].",
    ),
    ((2, 3), (2, 3, 4), "Tuple arity mismatch: 3 != 2; tuple: (2, 3, 4)."),
    ([1, 2], [1, 2, 3], "List arity mismatch: 3 != 2; list: [1, 2, 3]."),
    ([1, 2], (1, 2), "Expected list, got (1, 2)."),
    ((1, 2), Point(1, 2), "Expected tuple, got Point(x=1, y=2)."),
    ({"a": 1}, collections.OrderedDict(a=1), "Expected dict, got OrderedDict([('a', 1)])."),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (
        Point(1, 2),
        OtherPoint(1, 2),
        f"Named tuple type mismatch: expected type: {Point!r}, tuple: OtherPoint(x=1, y=2).",
    ),
    (
        Point(1, 2),
        Point3(1, 2, 3),
        "Named tuple arity mismatch: 3 != 2; tuple: Point3(x=1, y=2, z=3).",
    ),
    (Box(1, 2), (1, 2), f"Custom node type mismatch: expected type: {Box!r}, value: (1, 2)."),
    (
        Box(1, 2, tag="aux"),
        Box(1, 2, tag="other"),
        "Mismatch custom node data: 'aux' != 'other'; value: Box(1, 2, tag='other').",
    ),
    (
        Params(1, 2, name="a"),
        Params(1, 2, name="b"),
        "Mismatch custom dataclass node data: ('a',) != ('b',); value: "
        "Params(w=1, b=2, name='b').",
    ),
    (
        Params(1, 2),
        Explicit(1, "m"),
        f"Custom dataclass node type mismatch: expected type: {Params!r}, value: "
        "Explicit(x=1, mode='m').",
    ),
    # two mismatches: both backends report the same (last) one
    ((1, [2], (3,)), (1, [2, 2], (3, 3)), "Tuple arity mismatch: 2 != 1; tuple: (3, 3)."),
]


@pytest.mark.parametrize("prefix,tree,message", FLATTEN_UP_TO_ERRORS)
def test_flatten_up_to_errors(backend, prefix, tree, message):
    td = tu.tree_structure(prefix)
    with pytest.raises(ValueError) as info:
        td.flatten_up_to(tree)
    assert str(info.value) == message


def test_flatten_up_to_none_error(backend):
    td = tu.tree_structure((1, None))
    with pytest.raises(ValueError) as info:
        td.flatten_up_to((1, 5))
    assert str(info.value).startswith("Expected None, got 5.\n\n")
    assert "is_leaf=lambda x: x is None" in str(info.value)


# ---------------------------------------------------------------------------
# tree_map and friends
# ---------------------------------------------------------------------------


def test_tree_map_single(backend):
    tree = {"b": [1, 2], "a": (3, None), "c": Point(4, Box(5, 6))}
    out = tu.tree_map(lambda x: x * 10, tree)
    assert_same(out["b"], [10, 20])
    assert_same(out["a"], (30, None))
    assert out["c"] == Point(40, Box(50, 60))
    assert list(out) == ["a", "b", "c"]


def test_tree_map_multi(backend):
    a = {"x": (1, 2), "y": [3]}
    b = {"y": [30], "x": (10, 20)}
    c = {"x": (100, 200), "y": [300]}
    assert_same(tu.tree_map(lambda p, q, r: p + q + r, a, b, c), {"x": (111, 222), "y": [333]})


def test_tree_map_prefix_semantics(backend):
    # rest trees may be deeper than the first tree: subtrees are passed whole
    out = tu.tree_map(lambda axis, sub: (axis, sub), {"a": 0, "b": 1}, {"a": [1, 2], "b": {"c": 3}})
    assert_same(out, {"a": (0, [1, 2]), "b": (1, {"c": 3})})


def test_tree_map_is_leaf(backend):
    tree = {"a": (1, 2), "b": [(3, 4)], "c": None}
    out = tu.tree_map(lambda x: ("leaf", x), tree, is_leaf=lambda x: isinstance(x, tuple))
    assert_same(out, {"a": ("leaf", (1, 2)), "b": [("leaf", (3, 4))], "c": None})
    out = tu.tree_map(lambda x: 0 if x is None else x, tree, is_leaf=lambda x: x is None)
    assert_same(out, {"a": (1, 2), "b": [(3, 4)], "c": 0})


def test_is_leaf(backend):
    tree = {"a": (1, 2), "b": None, "c": [Point(3, 4)]}
    leaves, td = tu.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert_same(leaves, [(1, 2), Point(3, 4)])
    assert repr(td) == "PyTreeDef({'a': *, 'b': None, 'c': [*]})"
    leaves, td = tu.tree_flatten(tree, is_leaf=lambda x: x is None)
    assert_same(leaves, [1, 2, None, 3, 4])
    assert (
        repr(td) == "PyTreeDef({'a': (*, *), 'b': *, 'c': [CustomNode(namedtuple[Point], [*, *])]})"
    )
    assert tu.tree_leaves(None, is_leaf=lambda x: True) == [None]
    assert tu.tree_structure(tree, is_leaf=lambda x: x is tree) == tu.tree_structure(0)


def test_is_leaf_must_return_bool(backend):
    with pytest.raises(
        ValueError, match="is_leaf predicate returned a non-boolean value 1; expected a boolean"
    ):
        tu.tree_flatten([1, 2], is_leaf=lambda x: 1)


def test_tree_reduce_all_leaves(backend):
    tree = {"a": [1, 2], "b": (3, None)}
    assert tu.tree_reduce(operator.add, tree) == 6
    assert tu.tree_reduce(operator.add, tree, 100) == 106
    assert tu.tree_reduce(lambda acc, x: acc + [x], tree, []) == [1, 2, 3]
    assert tu.tree_all({"a": [True, 1], "b": (2,)})
    assert not tu.tree_all({"a": [True, 0]})
    assert tu.tree_all(None)
    assert tu.all_leaves([1, 2, "x"])
    assert not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([1, None])
    assert tu.all_leaves([(1, 2)], is_leaf=lambda x: isinstance(x, tuple))


# ---------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------


def test_key_classes(backend):
    k = tu.DictKey("a")
    assert (repr(k), str(k), k.key) == ("DictKey(key='a')", "['a']", "a")
    s = tu.SequenceKey(0)
    assert (repr(s), str(s), s.idx) == ("SequenceKey(idx=0)", "[0]", 0)
    g = tu.GetAttrKey("name")
    assert (repr(g), str(g), g.name) == ("GetAttrKey(name='name')", ".name", "name")
    f = tu.FlattenedIndexKey(3)
    assert (repr(f), str(f), f.key) == ("FlattenedIndexKey(key=3)", "[<flat index 3>]", 3)
    assert k == tu.DictKey("a") and hash(k) == hash(tu.DictKey("a"))
    assert k != tu.DictKey("b") and k != "a"
    assert tu.DictKey(0) != tu.SequenceKey(0)
    assert tu.SequenceKey(1) != tu.FlattenedIndexKey(1)
    assert len({tu.GetAttrKey("x"), tu.GetAttrKey("x"), tu.GetAttrKey("y")}) == 2
    for key in (k, s, g, f):
        assert pickle.loads(pickle.dumps(key)) == key
    with pytest.raises(AttributeError):
        k.key = "b"
    with pytest.raises(TypeError):
        tu.SequenceKey("a")

    match tu.DictKey("m"):
        case tu.DictKey(key):
            assert key == "m"


def test_flatten_with_path(backend):
    tree = {"a": [1, Point(2, 3)], "b": (Box(4, 5), Keyed(6, 7)), "c": Params(w=8, b=None)}
    pairs, td = tu.tree_flatten_with_path(tree)
    assert td == tu.tree_structure(tree)
    assert [x for _, x in pairs] == tu.tree_leaves(tree)
    assert [tu.keystr(p) for p, _ in pairs] == [
        "['a'][0]",
        "['a'][1].x",
        "['a'][1].y",
        "['b'][0][<flat index 0>]",
        "['b'][0][<flat index 1>]",
        "['b'][1].left",
        "['b'][1]['right']",
        "['c'].w",
    ]
    path = pairs[1][0]
    assert path == (tu.DictKey("a"), tu.SequenceKey(1), tu.GetAttrKey("x"))
    assert [type(k).__name__ for k in pairs[3][0]] == [
        "DictKey",
        "SequenceKey",
        "FlattenedIndexKey",
    ]
    assert tu.tree_leaves_with_path(tree) == pairs


def test_flatten_with_path_edge_cases(backend):
    assert tu.tree_flatten_with_path(1)[0] == [((), 1)]
    assert tu.tree_flatten_with_path(None)[0] == []
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(od)] == ["['z']", "['a']"]
    dd = collections.defaultdict(list, {"z": 1, "a": 2})
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(dd)] == ["['a']", "['z']"]
    part = tu.Partial(max, 1, key=2)
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(part)] == [
        "[<flat index 0>][0]",
        "[<flat index 1>]['key']",
    ]


def test_flatten_with_path_is_leaf(backend):
    tree = {"b": [1], "a": None}
    pairs, td = tu.tree_flatten_with_path(tree, is_leaf=lambda x: x is None)
    assert [(tu.keystr(p), x) for p, x in pairs] == [("['a']", None), ("['b'][0]", 1)]
    pairs, _ = tu.tree_flatten_with_path(
        tree, is_leaf=lambda p, x: len(p) == 1, is_leaf_takes_path=True
    )
    assert [(tu.keystr(p), x) for p, x in pairs] == [("['a']", None), ("['b']", [1])]


def test_is_leaf_takes_path_is_positional(backend):
    """JAX 0.10.2's signature: (tree, is_leaf=None, is_leaf_takes_path=False), all positional."""
    tree = [1, [2, 3]]

    def pred(p, x):
        return len(p) == 1 and p[0].idx == 1

    expected = [((tu.SequenceKey(0),), 1), ((tu.SequenceKey(1),), [2, 3])]
    assert tu.tree_leaves_with_path(tree, pred, True) == expected
    pairs, td = tu.tree_flatten_with_path(tree, pred, True)
    assert pairs == expected and repr(td) == "PyTreeDef([*, *])"
    out = tu.tree_map_with_path(lambda p, x: len(x) if isinstance(x, list) else x, tree,
                                is_leaf=pred, is_leaf_takes_path=True)
    assert out == [1, 2]
    assert tu.tree_leaves_with_path(tree, lambda x: isinstance(x, list) and len(x) == 2) == [
        ((), [1, [2, 3]])
    ]


def test_keystr(backend):
    path = (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("x"), tu.FlattenedIndexKey(2))
    assert tu.keystr(path) == "['a'][0].x[<flat index 2>]"
    assert tu.keystr(path, simple=True, separator="/") == "a/0/x/2"
    assert tu.keystr(()) == ""
    assert tu.keystr((0, "b")) == "0b"


def test_tree_map_with_path(backend):
    tree = {"w": [1, 2], "b": Point(3, 4)}
    out = tu.tree_map_with_path(lambda p, x: f"{tu.keystr(p)}={x}", tree)
    assert_same(out, {"b": Point("['b'].x=3", "['b'].y=4"), "w": ["['w'][0]=1", "['w'][1]=2"]})
    out = tu.tree_map_with_path(
        lambda p, x, y: (len(p), x + y), tree, tu.tree_map(lambda x: 10 * x, tree)
    )
    assert_same(out, {"b": Point((2, 33), (2, 44)), "w": [(2, 11), (2, 22)]})
    with pytest.raises(ValueError, match="different lengths of list at key path\n    "
                       "tree_map_with_path tree\n"):
        tu.tree_map_with_path(lambda p, x, y: x, [1], [1, 2])


# ---------------------------------------------------------------------------
# One-level flattening, node queries, reductions, broadcasting
# ---------------------------------------------------------------------------


def test_flatten_one_level(backend):
    """Expected values recorded from reference JAX 0.10.2 (jax.tree_util)."""
    children, meta = tu.flatten_one_level({"a": [1, 2], "b": {"c": 3}})
    assert (tuple(children), meta) == (([1, 2], {"c": 3}), ("a", "b"))
    assert tu.flatten_one_level(None) == ((), None)
    children, meta = tu.flatten_one_level([1, 2])
    assert (list(children), meta) == ([1, 2], None)
    children, meta = tu.flatten_one_level(Point(1, 2))
    assert (list(children), meta) == ([1, 2], Point)
    children, meta = tu.flatten_one_level(Box(1, [2], tag="tg"))
    assert (tuple(children), meta) == ((1, [2]), "tg")
    children, meta = tu.flatten_one_level(Params(w=1, b=2, name="n"))
    assert (list(children), meta) == ([1, 2], ("n",))
    children, meta = tu.flatten_one_level(StaticCfg(2))
    assert (list(children), meta) == ([], StaticCfg(2))


def test_flatten_one_level_with_keys(backend):
    """Expected values recorded from reference JAX 0.10.2 (jax.tree_util)."""
    pairs, meta = tu.flatten_one_level_with_keys({"a": [1, 2], "b": {"c": 3}})
    assert tuple(pairs) == ((tu.DictKey("a"), [1, 2]), (tu.DictKey("b"), {"c": 3}))
    assert meta == ("a", "b")
    pairs, meta = tu.flatten_one_level_with_keys((5, 6))
    assert (tuple(pairs), meta) == (((tu.SequenceKey(0), 5), (tu.SequenceKey(1), 6)), None)
    pairs, meta = tu.flatten_one_level_with_keys(Box(1, 2, tag="tg"))
    assert (list(pairs), meta) == ([(tu.FlattenedIndexKey(0), 1), (tu.FlattenedIndexKey(1), 2)],
                                   "tg")
    pairs, _ = tu.flatten_one_level_with_keys(Keyed(1, 2))
    assert list(pairs) == [(tu.GetAttrKey("left"), 1), (tu.DictKey("right"), 2)]
    pairs, meta = tu.flatten_one_level_with_keys(Params(w=1, b=2))
    assert (list(pairs), meta) == ([(tu.GetAttrKey("w"), 1), (tu.GetAttrKey("b"), 2)], ("p",))


def test_is_tree_node(backend):
    """Expected values recorded from reference JAX 0.10.2 (jax.tree_util.is_tree_node)."""
    nodes = [list, tuple, dict, type(None), Point, Box, Params, StaticCfg,
             collections.OrderedDict, collections.defaultdict, tu.Partial]
    assert all(tu.is_tree_node(t) for t in nodes)
    for t in (int, str, np.ndarray, object, Pair.__mro__[1], set):
        assert not tu.is_tree_node(t), t
    assert tu.is_tree_node(Pair)


def test_all_leaves_is_leaf_compares_identity(backend):
    """With is_leaf, JAX checks the flattened items are the very items given (``is``), so
    arrays (whose == is elementwise) are fine."""
    arrays = [np.arange(3), np.ones(2)]
    assert tu.all_leaves(arrays, is_leaf=lambda x: False)
    assert tu.all_leaves([(1,)], is_leaf=lambda x: x == (1,))
    # the list given is itself a leaf here, so its item is not among the leaves
    assert not tu.all_leaves([[1]], is_leaf=lambda x: isinstance(x, list))
    assert not tu.all_leaves([[1]], is_leaf=lambda x: False)
    assert not tu.all_leaves([None])
    assert tu.all_leaves([None], is_leaf=lambda x: x is None)
    assert tu.all_leaves(iter([1, 2]))


def test_tree_reduce_associative(backend):
    """Pairing and errors as reference JAX 0.10.2 (jax.tree.reduce_associative)."""
    assert tu.tree_reduce_associative(operator.add, [1, (2, 3), [4, 5, 6]]) == 21
    shape = tu.tree_reduce_associative(lambda a, b: f"({a}+{b})", [1, 2, 3, 4, 5])
    assert shape == "((1+2)+(3+(4+5)))"
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    assert tu.tree_reduce_associative(operator.add, {"only": 7}) == 7
    with pytest.raises(TypeError) as info:
        tu.tree_reduce_associative(operator.add, [None])
    assert str(info.value) == "Must specify identity for parallel reduction of empty sequence."
    out = tu.tree_reduce_associative(
        operator.add, [[1, 2], [3]], is_leaf=lambda x: isinstance(x, list) and x != [[1, 2], [3]]
    )
    assert out == [1, 2, 3]
    with pytest.raises(TypeError):
        tu.tree_reduce_associative(operator.add, [1], 0)  # identity is keyword-only


def test_tree_reduce_initializer_and_is_leaf(backend):
    assert tu.tree_reduce(operator.add, [1, (2, 3)], 100) == 106
    out = tu.tree_reduce(
        lambda acc, x: acc + [x], [[1, 2], [3]], [],
        is_leaf=lambda x: isinstance(x, list) and all(isinstance(y, int) for y in x),
    )
    assert out == [[1, 2], [3]]
    with pytest.raises(TypeError, match="reduce\\(\\) of empty iterable with no initial value"):
        tu.tree_reduce(operator.add, [])


def test_tree_broadcast(backend):
    """Expected values recorded from reference JAX 0.10.2 (jax.tree.broadcast)."""
    assert_same(
        tu.tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))),
        (1, {"a": 2, "b": 2}, (3, 3)),
    )
    out = tu.tree_broadcast(
        [[1, 2], 3], [[0, 0], [4, 5]],
        is_leaf=lambda x: isinstance(x, list) and len(x) == 2 and x[0] == 1,
    )
    assert_same(out, [[[1, 2], [1, 2]], [3, 3]])
    assert_same(tu.tree_broadcast(7, {"a": [1, None], "b": Box(1, 2)}),
                {"a": [7, None], "b": Box(7, 7)})
    assert tu.broadcast_prefix({"a": 1, "b": 2}, {"a": (0, 0), "b": {"x": 0}}) == [1, 1, 2]


def test_key_type_aliases():
    assert tu.KeyPath == tuple[tu.KeyEntry, ...]
    assert isinstance(tu.KeyEntry, __import__("typing").TypeVar)


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


def test_register_goes_to_both_registries():
    class Late:
        def __init__(self, v):
            self.v = v

    tu.register_pytree_node(Late, lambda x: ((x.v,), None), lambda _, ch: Late(*ch))
    for name in tu.available_backends():
        with tu._use_backend(name):
            leaves, td = tu.tree_flatten([Late(3)])
            assert leaves == [3]
            assert repr(td) == "PyTreeDef([CustomNode(Late[None], [*])])"
            assert td.unflatten([4])[0].v == 4


def test_duplicate_registration_raises():
    for typ in (Box, tuple, dict, type(None), collections.OrderedDict, tu.Partial):
        with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
            tu.register_pytree_node(typ, lambda x: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="Duplicate custom dataclass PyTreeDef type registration"):
        tu.register_dataclass(Params)
    # the failed attempts changed nothing
    assert tu.tree_leaves(Box(1, 2)) == [1, 2]


def test_namedtuple_can_be_registered_as_custom():
    NT = collections.namedtuple("NT", "a b")
    tu.register_pytree_node(NT, lambda x: ((x.b,), x.a), lambda a, ch: NT(a, *ch))
    for name in tu.available_backends():
        with tu._use_backend(name):
            leaves, td = tu.tree_flatten(NT("static", 2))
            assert leaves == [2]
            assert repr(td) == "PyTreeDef(CustomNode(NT[static], [*]))"


def test_register_dataclass_inference():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Layer:
        kernel: object
        act: str = dataclasses.field(default="relu", metadata=dict(static=True))
        bias: object = None

    for name in tu.available_backends():
        with tu._use_backend(name):
            layer = Layer(kernel=np.ones(2), bias=(1.0,), act="tanh")
            leaves, td = tu.tree_flatten(layer)
            assert len(leaves) == 2 and leaves[0] is layer.kernel and leaves[1] == 1.0
            assert repr(td) == "PyTreeDef(CustomNode(Layer[('tanh',)], [*, (*,)]))"
            out = td.unflatten([5, 6])
            assert (out.kernel, out.act, out.bias) == (5, "tanh", (6,))
            assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(layer)] == [
                ".kernel",
                ".bias[0]",
            ]


def test_register_dataclass_non_dataclass_with_fields():
    class Plain:
        def __init__(self, x, mode):
            self.x, self.mode = x, mode

    tu.register_dataclass(Plain, data_fields=["x"], meta_fields=["mode"])
    for name in tu.available_backends():
        with tu._use_backend(name):
            leaves, td = tu.tree_flatten(Plain([1, 2], "m"))
            assert leaves == [1, 2]
            out = td.unflatten([3, 4])
            assert type(out) is Plain and out.x == [3, 4] and out.mode == "m"


def test_register_pytree_with_keys_class():
    @tu.register_pytree_with_keys_class
    class Special:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("x"), self.x), (tu.GetAttrKey("y"), self.y)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    for name in tu.available_backends():
        with tu._use_backend(name):
            s = Special(1, [2])
            assert tu.tree_leaves(s) == [1, 2]
            assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(s)] == [".x", ".y[0]"]
            out = tu.tree_map(lambda v: v + 1, s)
            assert (out.x, out.y) == (2, [3])


def test_register_static(backend):
    leaves, td = tu.tree_flatten({"cfg": StaticCfg(4), "x": 1})
    assert leaves == [1]
    assert td != tu.tree_structure({"cfg": StaticCfg(5), "x": 1})
    assert td.unflatten([2]) == {"cfg": StaticCfg(4), "x": 2}


def test_custom_flatten_must_return_pair():
    class Bad:
        pass

    tu.register_pytree_node(Bad, lambda x: [1, 2], lambda a, c: Bad())
    for name in tu.available_backends():
        with tu._use_backend(name):
            with pytest.raises(
                ValueError, match=r"should return a \(children, aux_data\) tuple, got \[1, 2\]"
            ):
                tu.tree_flatten(Bad())


def test_node_class_roundtrip(backend):
    p = Pair({"a": 1}, [2, 3], label="lab")
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    assert repr(td) == "PyTreeDef(CustomNode(Pair[lab], [{'a': *}, [*, *]]))"
    out = td.unflatten([4, 5, 6])
    assert out == Pair({"a": 4}, [5, 6], label="lab")


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------


def test_partial(backend):
    def f(a, b, *, c):
        return (a, b, c)

    p = tu.Partial(f, 1, c=3)
    assert p(2) == (1, 2, 3)
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 3]
    assert td == tu.tree_structure(tu.Partial(f, 10, c=30))
    assert td != tu.tree_structure(tu.Partial(f, 10, 20, c=30))
    assert td != tu.tree_structure(tu.Partial(max, 10, c=30))
    doubled = tu.tree_map(lambda x: x * 2, p)
    assert isinstance(doubled, tu.Partial) and doubled.func is f
    assert doubled(0) == (2, 0, 6)
    # no bound arguments: still a pytree with no leaves
    assert tu.tree_leaves(tu.Partial(f)) == []
    assert tu.tree_unflatten(tu.tree_structure(tu.Partial(f)), [])(1, 2, c=3) == (1, 2, 3)


def test_partial_of_partial_keeps_inner_args_static(backend):
    inner = functools.partial(lambda a, b, c: a + b + c, 100)
    p = tu.Partial(inner, 10)
    assert tu.tree_leaves(p) == [10]  # the inner partial's 100 is part of the func
    assert p(1) == 111
    assert tu.tree_map(lambda x: x + 1, p)(1) == 112


# ---------------------------------------------------------------------------
# Pickling
# ---------------------------------------------------------------------------


PICKLE_TREES = [
    (1, {"a": [2, None], "b": ()}),
    Point(1, (2, 3)),
    Box(1, 2, tag=("t", 1)),
    Params(w=1, b=[2], name="x"),
    collections.OrderedDict(b=1, a=2),
]


@needs_cpp
@pytest.mark.parametrize("tree", PICKLE_TREES, ids=lambda t: type(t).__name__)
def test_treedef_pickle_cpp(tree):
    with tu._use_backend("cpp"):
        td = tu.tree_structure(tree)
        td2 = pickle.loads(pickle.dumps(td))
        assert type(td2) is type(td)
        assert td2 == td and repr(td2) == repr(td)
        assert td2.unflatten(tu.tree_leaves(tree)) == tree


@pytest.mark.parametrize("tree", PICKLE_TREES, ids=lambda t: type(t).__name__)
def test_treedef_pickle_python(tree):
    with tu._use_backend("python"):
        td = tu.tree_structure(tree)
        td2 = pickle.loads(pickle.dumps(td))
        assert type(td2) is _pytree_py.PyTreeDef
        assert td2 == td and repr(td2) == repr(td)
        assert td2._registry is tu.python_registry
        assert td2.unflatten(tu.tree_leaves(tree)) == tree


def test_registry_without_name_does_not_pickle():
    reg = _pytree_py.PyTreeRegistry()
    td = reg.flatten((1, 2))[1]
    with pytest.raises((AttributeError, pickle.PicklingError)):
        pickle.dumps(td)


# ---------------------------------------------------------------------------
# Parity: the pure-Python registry against the C++ one, leaf by leaf
# ---------------------------------------------------------------------------


def _both():
    if not HAVE_CPP:
        pytest.skip(NO_CPP_REASON)
    return tu.cpp_registry, tu.python_registry


def _describe(reg, tree, is_leaf=None):
    leaves, td = reg.flatten(tree, is_leaf)
    pred = None if is_leaf is None else (lambda _p, x: is_leaf(x))
    pairs, td2 = reg.flatten_with_path(tree, pred)
    one = reg.flatten_one_level(tree)
    return {
        "leaves": [(type(x), id(x)) for x in leaves],
        "repr": repr(td),
        "num": (td.num_leaves, td.num_nodes),
        "paths": [(repr(p), str(p), "".join(map(str, p)), id(x)) for p, x in pairs],
        "path_treedef": repr(td2),
        "children": [repr(c) for c in td.children()],
        "node_data": repr(td.node_data()),
        "unflatten": repr(td.unflatten(leaves)),
        "up_to": [(type(x), id(x)) for x in td.flatten_up_to(tree)],
        "one_level": None if one is None else (repr(list(one[0])), repr(one[1])),
        "is_node": reg.is_node(type(tree)),
    }


PARITY_TREES = [c[1] for c in CASES] + [
    [1, (2, [3, {"k": (4, None)}]), Point((), [5])],
    {"params": [{"w": 1.0, "b": 2.0} for _ in range(4)], "opt": (Point(1, 2), None, {"m": [3, 4]})},
    Keyed({"x": [1, 2]}, Point(None, 3)),
    tu.Partial(max, 1, 2, key=len),
    {i: [i] * (i % 3) for i in range(7)},
]


@pytest.mark.parametrize("tree", PARITY_TREES, ids=[f"t{i}" for i in range(len(PARITY_TREES))])
def test_parity_with_cpp(tree):
    cpp_reg, py_reg = _both()
    with tu._use_backend("cpp"):  # user key functions create the active backend's keys
        cpp = _describe(cpp_reg, tree)
    with tu._use_backend("python"):
        py = _describe(py_reg, tree)
    assert py == cpp


@pytest.mark.parametrize(
    "is_leaf",
    [
        lambda x: isinstance(x, tuple),
        lambda x: x is None,
        lambda x: isinstance(x, list) and len(x) == 1,
    ],
    ids=["tuples", "none", "singleton_lists"],
)
def test_parity_is_leaf(is_leaf):
    cpp_reg, py_reg = _both()
    for tree in PARITY_TREES:
        assert _describe(py_reg, tree, is_leaf) == _describe(cpp_reg, tree, is_leaf)


def test_parity_flatten_up_to_errors():
    cpp_reg, py_reg = _both()
    for prefix, tree, _ in FLATTEN_UP_TO_ERRORS + [((1, None), (1, 5), None)]:
        msgs = []
        for reg in (cpp_reg, py_reg):
            with pytest.raises(ValueError) as info:
                reg.flatten(prefix)[1].flatten_up_to(tree)
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]


def test_parity_equality_and_hash_semantics():
    cpp_reg, py_reg = _both()
    trees = [
        (1, 2),
        [1, 2],
        (1, (2,)),
        {"a": 1},
        {"b": 1},
        Point(1, 2),
        OtherPoint(1, 2),
        None,
        1,
        Box(1, 2, tag="x"),
        Box(1, 2, tag="y"),
        Params(1, 2, name="a"),
        Params(1, 2, name="b"),
    ]
    for reg in (cpp_reg, py_reg):
        defs = [reg.flatten(t)[1] for t in trees]
        table = [[a == b for b in defs] for a in defs]
        assert table == [[i == j for j in range(len(trees))] for i in range(len(trees))]
    # the two backends' treedefs are different types and never compare equal
    assert (cpp_reg.flatten((1,))[1] == py_reg.flatten((1,))[1]) is False


def test_parity_treedef_tuple_all_leaves():
    cpp_reg, py_reg = _both()
    from jaxlib._jax import pytree as cpp

    for mod, reg in ((cpp, cpp_reg), (_pytree_py, py_reg)):
        defs = [reg.flatten(t)[1] for t in (1, [2, 3], {"a": None})]
        assert repr(mod.treedef_tuple(reg, defs)) == "PyTreeDef((*, [*, *], {'a': None}))"
        assert mod.all_leaves(reg, [1, "a", np.ones(2)]) is True
        assert mod.all_leaves(reg, [1, None]) is False
        assert mod.all_leaves(reg, [1, Point(1, 2)]) is False
