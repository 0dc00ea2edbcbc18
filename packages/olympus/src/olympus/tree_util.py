"""Utilities for pytrees: nested containers (tuples, lists, dicts, namedtuples, None and
registered node types) of leaves.

Every Olympus transformation flattens its arguments and results with these functions, so
a type registered here (``register_pytree_node``, ``register_dataclass``, ...) can be passed
to ``jit``, ``grad`` and ``vmap``. Olympus keeps its own node registry, separate from the
one jaxlib shares with ``jax``. :mod:`olympus.tree` offers the common functions under
shorter names.

The implementation lives in :mod:`olympus_trace.tree_util`; this module is its public face
with the names of ``jax.tree_util``.
"""

from olympus_trace.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    Partial,
    PyTreeDef,
    SequenceKey,
    all_leaves,
    default_registry,
    flatten_one_level,
    flatten_one_level_with_keys,
    is_tree_node,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
    tree_all,
    tree_broadcast,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_reduce_associative,
    tree_structure,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)

__all__ = [
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
