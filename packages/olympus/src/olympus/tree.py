"""The common pytree functions under short names: ``olympus.tree.map`` for
``olympus.tree_util.tree_map`` and so on (the names of ``jax.tree``).

Each function takes the same arguments as its ``tree_util`` counterpart and behaves
the same; :func:`static` marks a dataclass field as static for ``register_dataclass``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from olympus_trace import tree_util as _tu

__all__ = [
    "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose",
    "unflatten",
]

T = TypeVar("T")
_NO_VALUE = _tu._NO_INITIALIZER


def all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every leaf of ``tree`` is truthy.

    >>> import olympus
    >>> olympus.tree.all([True, {'a': True, 'b': (True, True)}])
    True
    >>> olympus.tree.all([False, (True, False)])
    False
    """
    return _tu.tree_all(tree, is_leaf=is_leaf)


def flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], _tu.PyTreeDef]:
    """``(leaves, treedef)`` of ``tree``; ``unflatten(treedef, leaves)`` rebuilds it.

    >>> import olympus
    >>> vals, treedef = olympus.tree.flatten([1, (2, 3), [4, 5]])
    >>> vals
    [1, 2, 3, 4, 5]
    >>> treedef
    PyTreeDef([*, (*, *), [*, *]])
    """
    return _tu.tree_flatten(tree, is_leaf)


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in flattening order (dict entries by sorted key).

    >>> import olympus
    >>> olympus.tree.leaves([1, (2, 3), [4, 5]])
    [1, 2, 3, 4, 5]
    """
    return _tu.tree_leaves(tree, is_leaf)


def map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Apply ``f`` to each leaf of ``tree`` (with the matching subtrees of ``rest``).

    >>> import olympus
    >>> olympus.tree.map(lambda x: x + 1, {"x": 7, "y": 42})
    {'x': 8, 'y': 43}
    >>> olympus.tree.map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]])
    [[5, 7, 9], [6, 1, 2]]
    """
    return _tu.tree_map(f, tree, *rest, is_leaf=is_leaf)


def reduce(
    function: Callable[[T, Any], T],
    tree: Any,
    initializer: Any = _NO_VALUE,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """``functools.reduce(function, leaves(tree)[, initializer])``.

    >>> import olympus, operator
    >>> olympus.tree.reduce(operator.add, [1, (2, 3), [4, 5, 6]])
    21
    """
    return _tu.tree_reduce(function, tree, initializer, is_leaf)


def reduce_associative(
    operation: Callable[[T, T], T],
    tree: Any,
    *,
    identity: Any = _NO_VALUE,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """Reduce the leaves with an associative ``operation`` in a balanced tree of calls.

    >>> import olympus, operator
    >>> olympus.tree.reduce_associative(operator.add, [1, (2, 3), [4, 5, 6]])
    21
    """
    return _tu.tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> _tu.PyTreeDef:
    """The ``PyTreeDef`` of ``tree``.

    >>> import olympus
    >>> olympus.tree.structure([1, (2, 3), [4, 5]])
    PyTreeDef([*, (*, *), [*, *]])
    """
    return _tu.tree_structure(tree, is_leaf)


def transpose(
    outer_treedef: _tu.PyTreeDef, inner_treedef: _tu.PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turn an outer tree of inner trees into an inner tree of outer trees.

    >>> import olympus
    >>> tree = [(1, 2, 3), (4, 5, 6)]
    >>> inner = olympus.tree.structure(('*', '*', '*'))
    >>> outer = olympus.tree.structure(['*', '*'])
    >>> olympus.tree.transpose(outer, inner, tree)
    ([1, 4], [2, 5], [3, 6])
    >>> olympus.tree.transpose(outer, None, tree)
    ([1, 4], [2, 5], [3, 6])
    """
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def unflatten(treedef: _tu.PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a tree of structure ``treedef`` from ``leaves``.

    >>> import olympus
    >>> vals, treedef = olympus.tree.flatten([1, (2, 3), [4, 5]])
    >>> olympus.tree.unflatten(treedef, [100, 200, 300, 400, 500])
    [100, (200, 300), [400, 500]]
    """
    return _tu.tree_unflatten(treedef, leaves)


def flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[_tu.KeyPath, Any]], _tu.PyTreeDef]:
    """Like :func:`flatten`, each leaf paired with its key path.

    >>> import olympus
    >>> path_vals, treedef = olympus.tree.flatten_with_path([1, {'x': 3}])
    >>> path_vals
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='x')), 3)]
    >>> treedef
    PyTreeDef([*, {'x': *}])
    """
    return _tu.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)


def leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[_tu.KeyPath, Any]]:
    """``(key_path, leaf)`` pairs of ``tree``.

    >>> import olympus
    >>> olympus.tree.leaves_with_path([1, {'x': 3}])
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='x')), 3)]
    """
    return _tu.tree_leaves_with_path(tree, is_leaf, is_leaf_takes_path)


def map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Like :func:`map`, with each leaf's key path as ``f``'s first argument.

    >>> import olympus
    >>> olympus.tree.map_with_path(lambda path, x: x + path[0].idx, [1, 2, 3])
    [1, 3, 5]
    """
    return _tu.tree_map_with_path(
        f, tree, *rest, is_leaf=is_leaf, is_leaf_takes_path=is_leaf_takes_path
    )


def broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """Repeat each leaf of ``prefix_tree`` over the subtree of ``full_tree`` below it.

    >>> import olympus
    >>> olympus.tree.broadcast((1, 2, 3), (0, {'a': 0, 'b': 0}, (0, 0)))
    (1, {'a': 2, 'b': 2}, (3, 3))
    """
    return _tu.tree_broadcast(prefix_tree, full_tree, is_leaf)


def static(**kwargs):
    """A ``dataclasses.field`` marked static (``metadata={'static': True}``), so that
    ``olympus.tree_util.register_dataclass`` makes it part of the treedef, not a leaf.

    Takes the arguments of :func:`dataclasses.field`; a given ``metadata`` is kept.
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
