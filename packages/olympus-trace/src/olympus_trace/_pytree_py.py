"""Pure-Python pytree implementation.

This module mirrors the API and observable behaviour of jaxlib's C++ pytree
module (``jaxlib._jax.pytree``) closely enough that :mod:`olympus_trace.tree_util`
can use either one interchangeably: the same leaf order, the same ``PyTreeDef``
repr, the same error messages, the same key-path objects (by repr/str).

It is used when jaxlib is not importable (olympus-trace depends only on numpy and
olympus-ir), or when ``OLYMPUS_PURE_PYTHON_PYTREE=1`` is set.

Representation
--------------
A ``PyTreeDef`` wraps a nested tuple *node*:

* ``None`` is a leaf (``*``).
* Every other node is ``(kind, node_type, aux, children)`` where ``children`` is
  a tuple of nodes.  ``aux`` is the sorted key tuple for dicts, the aux data for
  custom nodes and the tuple of meta-field values for dataclass nodes.

Because nodes are plain tuples, structural equality is Python's tuple equality
(aux data participates, compared with ``==`` like the C++ implementation).  The
hash deliberately ignores aux data and dict keys (again like the C++ one), so
unhashable aux data is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice, repeat
from typing import Any

__all__ = [
    "PyTreeRegistry",
    "PyTreeDef",
    "DictKey",
    "SequenceKey",
    "GetAttrKey",
    "FlattenedIndexKey",
    "default_registry",
    "treedef_tuple",
    "all_leaves",
]

# Node kinds.  A leaf is represented by the node ``None`` and has no kind.
_NONE = 1
_TUPLE = 2
_LIST = 3
_DICT = 4
_NAMEDTUPLE = 5
_CUSTOM = 6
_DATACLASS = 7

_NONE_NODE = (_NONE, None, None, ())

_NONE_PREFIX_NOTE = (
    "\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a "
    "tree-prefix of non-None values. To obtain the previous behavior, you can "
    "usually write:\n"
    "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
    "is_leaf=lambda x: x is None)"
)


# ---------------------------------------------------------------------------
# Key path entries
# ---------------------------------------------------------------------------


class DictKey:
    """Key of a dict entry; prints as ``['a']``."""

    __slots__ = ("_key",)
    __match_args__ = ("key",)

    def __init__(self, key: Any):
        self._key = key

    @property
    def key(self) -> Any:
        return self._key

    def __repr__(self) -> str:
        return f"DictKey(key={self._key!r})"

    def __str__(self) -> str:
        return f"[{self._key!r}]"

    def __eq__(self, other: object) -> bool:
        if type(other) is not DictKey:
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __reduce__(self):
        return (DictKey, (self._key,))


class SequenceKey:
    """Index into a tuple or list; prints as ``[0]``."""

    __slots__ = ("_idx",)
    __match_args__ = ("idx",)

    def __init__(self, idx: int):
        if not isinstance(idx, int):
            raise TypeError(f"SequenceKey index must be an int, got {type(idx).__name__}")
        self._idx = idx

    @property
    def idx(self) -> int:
        return self._idx

    def __repr__(self) -> str:
        return f"SequenceKey(idx={self._idx!r})"

    def __str__(self) -> str:
        return f"[{self._idx!r}]"

    def __eq__(self, other: object) -> bool:
        if type(other) is not SequenceKey:
            return NotImplemented
        return self._idx == other._idx

    def __hash__(self) -> int:
        return hash(("SequenceKey", self._idx))

    def __reduce__(self):
        return (SequenceKey, (self._idx,))


class GetAttrKey:
    """Attribute access (namedtuple fields, dataclass fields); prints as ``.name``."""

    __slots__ = ("_name",)
    __match_args__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"GetAttrKey name must be a str, got {type(name).__name__}")
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"GetAttrKey(name={self._name!r})"

    def __str__(self) -> str:
        return f".{self._name}"

    def __eq__(self, other: object) -> bool:
        if type(other) is not GetAttrKey:
            return NotImplemented
        return self._name == other._name

    def __hash__(self) -> int:
        return hash(self._name)

    def __reduce__(self):
        return (GetAttrKey, (self._name,))


class FlattenedIndexKey:
    """Position among the children of a custom node registered without keys."""

    __slots__ = ("_key",)
    __match_args__ = ("key",)

    def __init__(self, key: int):
        if not isinstance(key, int):
            raise TypeError(f"FlattenedIndexKey key must be an int, got {type(key).__name__}")
        self._key = key

    @property
    def key(self) -> int:
        return self._key

    def __repr__(self) -> str:
        return f"FlattenedIndexKey(key={self._key!r})"

    def __str__(self) -> str:
        return f"[<flat index {self._key}>]"

    def __eq__(self, other: object) -> bool:
        if type(other) is not FlattenedIndexKey:
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(("FlattenedIndexKey", self._key))

    def __reduce__(self):
        return (FlattenedIndexKey, (self._key,))


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------


class _Registration:
    __slots__ = (
        "kind",
        "type",
        "flatten",
        "unflatten",
        "flatten_with_keys",
        "data_fields",
        "meta_fields",
    )

    def __init__(
        self,
        kind,
        typ,
        flatten=None,
        unflatten=None,
        flatten_with_keys=None,
        data_fields=(),
        meta_fields=(),
    ):
        self.kind = kind
        self.type = typ
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        self.data_fields = data_fields
        self.meta_fields = meta_fields


def _is_namedtuple_type(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except Exception as e:  # noqa: BLE001 - mirror the C++ message for any comparator failure
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


def _check_pred(result: Any) -> bool:
    if result is True:
        return True
    if result is False or result is None:
        return False
    raise ValueError(
        f"is_leaf predicate returned a non-boolean value {result!r}; expected a boolean"
    )


def _custom_flatten(reg: _Registration, x: Any):
    res = reg.flatten(x)
    if not isinstance(res, tuple) or len(res) != 2:
        raise ValueError(
            "The to_iterable function for a custom PyTree node should return a "
            f"(children, aux_data) tuple, got {res!r}"
        )
    children = res[0]
    if not isinstance(children, (tuple, list)):
        try:
            children = list(children)
        except TypeError:
            raise ValueError(
                "The to_iterable function for a custom PyTree node should return a "
                f"(children, aux_data) tuple where 'children' is iterable, got {res!r}"
            ) from None
        return children, res[1]
    return res


class PyTreeRegistry:
    """A registry of pytree node types (pure-Python twin of the C++ one)."""

    def __init__(
        self,
        enable_none: bool = True,
        enable_tuple: bool = True,
        enable_namedtuple: bool = True,
        enable_list: bool = True,
        enable_dict: bool = True,
    ):
        self._kind_of: dict[type, int] = {}
        self._custom: dict[type, _Registration] = {}
        self._enable_namedtuple = enable_namedtuple
        if enable_none:
            self._kind_of[type(None)] = _NONE
        if enable_tuple:
            self._kind_of[tuple] = _TUPLE
        if enable_list:
            self._kind_of[list] = _LIST
        if enable_dict:
            self._kind_of[dict] = _DICT
        self._flat, self._flat_pred = _make_flatteners(
            self._kind_of, self._custom, enable_namedtuple
        )

    # -- pickling by reference (set ``__module__``/``__name__`` on the instance) --
    def __reduce__(self):
        return self.__name__

    def __repr__(self) -> str:
        name = self.__dict__.get("__name__")
        return f"<_pytree_py.PyTreeRegistry {name or hex(id(self))}>"

    # -- registration --
    def _check_new(self, t: type, what: str) -> None:
        if t in self._kind_of:
            raise ValueError(f"Duplicate custom {what}PyTreeDef type registration for {t!r}.")

    def register_node(
        self,
        type: type,
        to_iterable: Callable,
        from_iterable: Callable,
        to_iterable_with_keys: Callable | None = None,
    ) -> None:
        self._check_new(type, "")
        self._custom[type] = _Registration(
            _CUSTOM, type, to_iterable, from_iterable, to_iterable_with_keys
        )
        self._kind_of[type] = _CUSTOM

    def register_dataclass_node(
        self, type: type, data_fields: Iterable[str], meta_fields: Iterable[str]
    ) -> None:
        self._check_new(type, "dataclass ")
        self._custom[type] = _Registration(
            _DATACLASS, type, data_fields=tuple(data_fields), meta_fields=tuple(meta_fields)
        )
        self._kind_of[type] = _DATACLASS

    def is_node(self, type: type) -> bool:
        return type in self._kind_of or (self._enable_namedtuple and _is_namedtuple_type(type))

    # -- flattening --
    def flatten(self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None):
        leaves: list = []
        if leaf_predicate is None:
            node = self._flat(tree, leaves)
        else:
            node = self._flat_pred(tree, leaves, leaf_predicate)
        return leaves, PyTreeDef(node, self, len(leaves))

    def flatten_with_path(
        self, tree: Any, leaf_predicate: Callable[[Any, Any], bool] | None = None
    ):
        pairs: list = []
        node = self._flat_path(tree, (), pairs, leaf_predicate)
        return pairs, PyTreeDef(node, self, len(pairs))

    def _flat_path(self, x, path, out, pred):
        if pred is not None and _check_pred(pred(path, x)):
            out.append((path, x))
            return None
        t = type(x)
        k = self._kind_of.get(t)
        if k is None:
            if self._enable_namedtuple and _is_namedtuple_type(t):
                return (
                    _NAMEDTUPLE,
                    t,
                    None,
                    tuple(
                        [
                            self._flat_path(c, path + (GetAttrKey(f),), out, pred)
                            for f, c in zip(t._fields, x, strict=True)
                        ]
                    ),
                )
            out.append((path, x))
            return None
        if k == _TUPLE or k == _LIST:
            return (
                k,
                None,
                None,
                tuple(
                    [
                        self._flat_path(c, path + (SequenceKey(i),), out, pred)
                        for i, c in enumerate(x)
                    ]
                ),
            )
        if k == _DICT:
            keys = _sorted_keys(x)
            return (
                _DICT,
                None,
                tuple(keys),
                tuple([self._flat_path(x[key], path + (DictKey(key),), out, pred) for key in keys]),
            )
        if k == _NONE:
            return _NONE_NODE
        reg = self._custom[t]
        if k == _DATACLASS:
            aux = tuple([getattr(x, f) for f in reg.meta_fields])
            return (
                _DATACLASS,
                t,
                aux,
                tuple(
                    [
                        self._flat_path(getattr(x, f), path + (GetAttrKey(f),), out, pred)
                        for f in reg.data_fields
                    ]
                ),
            )
        if reg.flatten_with_keys is not None:
            res = reg.flatten_with_keys(x)
            if not isinstance(res, tuple) or len(res) != 2:
                raise ValueError(
                    "The to_iterable_with_keys function for a custom PyTree node should return a "
                    f"(key_children, aux_data) tuple, got {res!r}"
                )
            key_children, aux = res
            children = []
            for kc in key_children:
                key, c = kc
                children.append(self._flat_path(c, path + (key,), out, pred))
            return (_CUSTOM, t, aux, tuple(children))
        children, aux = _custom_flatten(reg, x)
        return (
            _CUSTOM,
            t,
            aux,
            tuple(
                [
                    self._flat_path(c, path + (FlattenedIndexKey(i),), out, pred)
                    for i, c in enumerate(children)
                ]
            ),
        )

    def flatten_one_level(self, tree: Any):
        t = type(tree)
        k = self._kind_of.get(t)
        if k is None:
            if self._enable_namedtuple and _is_namedtuple_type(t):
                return list(tree), t
            return None
        if k == _TUPLE or k == _LIST:
            return tree, None
        if k == _DICT:
            keys = _sorted_keys(tree)
            return tuple([tree[key] for key in keys]), tuple(keys)
        if k == _NONE:
            return (), None
        reg = self._custom[t]
        if k == _DATACLASS:
            return (
                [getattr(tree, f) for f in reg.data_fields],
                tuple([getattr(tree, f) for f in reg.meta_fields]),
            )
        return _custom_flatten(reg, tree)

    def flatten_one_level_with_keys(self, tree: Any):
        t = type(tree)
        k = self._kind_of.get(t)
        if k is None:
            if self._enable_namedtuple and _is_namedtuple_type(t):
                return [(GetAttrKey(f), c) for f, c in zip(t._fields, tree, strict=True)], t
            return None
        if k == _TUPLE or k == _LIST:
            return tuple([(SequenceKey(i), c) for i, c in enumerate(tree)]), None
        if k == _DICT:
            keys = _sorted_keys(tree)
            return tuple([(DictKey(key), tree[key]) for key in keys]), tuple(keys)
        if k == _NONE:
            return (), None
        reg = self._custom[t]
        if k == _DATACLASS:
            return (
                [(GetAttrKey(f), getattr(tree, f)) for f in reg.data_fields],
                tuple([getattr(tree, f) for f in reg.meta_fields]),
            )
        if reg.flatten_with_keys is not None:
            key_children, aux = reg.flatten_with_keys(tree)
            return list(key_children), aux
        children, aux = _custom_flatten(reg, tree)
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux


def _make_flatteners(kind_of: dict, custom: dict, enable_namedtuple: bool):
    """Build the recursive flatten functions once per registry.

    They close over the registry's (mutable) dicts so later registrations are
    seen, and avoid attribute lookups on the hot path.
    """
    kind_get = kind_of.get

    def flat(x, leaves):
        t = type(x)
        k = kind_get(t)
        if k is None:
            if enable_namedtuple and issubclass(t, tuple) and hasattr(t, "_fields"):
                return (_NAMEDTUPLE, t, None, tuple([flat(c, leaves) for c in x]))
            leaves.append(x)
            return None
        if k == _TUPLE:
            return (_TUPLE, None, None, tuple([flat(c, leaves) for c in x]))
        if k == _DICT:
            try:
                keys = sorted(x)
            except Exception as e:  # noqa: BLE001
                raise ValueError(
                    "Comparator raised exception while sorting pytree dictionary keys."
                ) from e
            return (
                _DICT,
                None,
                tuple(keys),
                tuple(map(flat, map(x.__getitem__, keys), repeat(leaves))),
            )
        if k == _LIST:
            return (_LIST, None, None, tuple([flat(c, leaves) for c in x]))
        if k == _NONE:
            return _NONE_NODE
        reg = custom[t]
        if k == _CUSTOM:
            children, aux = _custom_flatten(reg, x)
            return (_CUSTOM, t, aux, tuple([flat(c, leaves) for c in children]))
        aux = tuple([getattr(x, f) for f in reg.meta_fields])
        return (_DATACLASS, t, aux, tuple([flat(getattr(x, f), leaves) for f in reg.data_fields]))

    def flat_pred(x, leaves, pred):
        if _check_pred(pred(x)):
            leaves.append(x)
            return None
        t = type(x)
        k = kind_get(t)
        if k is None:
            if enable_namedtuple and issubclass(t, tuple) and hasattr(t, "_fields"):
                return (_NAMEDTUPLE, t, None, tuple([flat_pred(c, leaves, pred) for c in x]))
            leaves.append(x)
            return None
        if k == _TUPLE:
            return (_TUPLE, None, None, tuple([flat_pred(c, leaves, pred) for c in x]))
        if k == _DICT:
            keys = _sorted_keys(x)
            return (
                _DICT,
                None,
                tuple(keys),
                tuple([flat_pred(x[key], leaves, pred) for key in keys]),
            )
        if k == _LIST:
            return (_LIST, None, None, tuple([flat_pred(c, leaves, pred) for c in x]))
        if k == _NONE:
            return _NONE_NODE
        reg = custom[t]
        if k == _CUSTOM:
            children, aux = _custom_flatten(reg, x)
            return (_CUSTOM, t, aux, tuple([flat_pred(c, leaves, pred) for c in children]))
        aux = tuple([getattr(x, f) for f in reg.meta_fields])
        return (
            _DATACLASS,
            t,
            aux,
            tuple([flat_pred(getattr(x, f), leaves, pred) for f in reg.data_fields]),
        )

    return flat, flat_pred


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------


def _unflatten(node, it, custom):
    if node is None:
        return next(it)
    kind, t, aux, children = node
    if kind == _TUPLE:
        return tuple([_unflatten(c, it, custom) for c in children])
    if kind == _DICT:
        return dict(zip(aux, [_unflatten(c, it, custom) for c in children], strict=True))
    if kind == _LIST:
        return [_unflatten(c, it, custom) for c in children]
    if kind == _NONE:
        return None
    if kind == _NAMEDTUPLE:
        return t(*[_unflatten(c, it, custom) for c in children])
    reg = custom[t]
    if kind == _CUSTOM:
        return reg.unflatten(aux, tuple([_unflatten(c, it, custom) for c in children]))
    kwargs = dict(zip(reg.meta_fields, aux, strict=True))
    kwargs.update(zip(reg.data_fields, [_unflatten(c, it, custom) for c in children], strict=True))
    return t(**kwargs)


def _compile(node, custom) -> Callable:
    """Turn a node into a function ``build(leaf_iterator) -> subtree``.

    Unflattening a reused treedef then costs a few closure calls instead of a
    full interpretation of the node tuples."""
    if node is None:
        return next
    kind, t, aux, children = node
    n = len(children)
    if kind == _NONE:
        return lambda it: None
    if all(c is None for c in children):  # only leaf children: slice the iterator
        if kind == _TUPLE:
            return lambda it: tuple(islice(it, n))
        if kind == _LIST:
            return lambda it: list(islice(it, n))
        if kind == _DICT:
            return lambda it: dict(zip(aux, islice(it, n), strict=True))
        if kind == _NAMEDTUPLE:
            return lambda it: t(*islice(it, n))
    builders = [_compile(c, custom) for c in children]
    if kind == _TUPLE:
        return lambda it: tuple([b(it) for b in builders])
    if kind == _LIST:
        return lambda it: [b(it) for b in builders]
    if kind == _DICT:
        return lambda it: dict(zip(aux, [b(it) for b in builders], strict=True))
    if kind == _NAMEDTUPLE:
        return lambda it: t(*[b(it) for b in builders])
    reg = custom[t]
    if kind == _CUSTOM:
        unflatten = reg.unflatten
        return lambda it: unflatten(aux, tuple([b(it) for b in builders]))
    meta = dict(zip(reg.meta_fields, aux, strict=True))
    data_fields = reg.data_fields
    return lambda it: t(**meta, **dict(zip(data_fields, [b(it) for b in builders], strict=True)))


def _count(node) -> tuple[int, int]:
    """(num_leaves, num_nodes) of a node."""
    if node is None:
        return 1, 1
    leaves, nodes = 0, 1
    for c in node[3]:
        lv, nd = _count(c)
        leaves += lv
        nodes += nd
    return leaves, nodes


def _shape(node):
    """Hashable skeleton of a node: everything but aux data / dict keys."""
    if node is None:
        return 0
    kind, t, _aux, children = node
    return (kind, t, len(children), tuple([_shape(c) for c in children]))


def _node_str(node) -> str:
    if node is None:
        return "*"
    kind, t, aux, children = node
    if kind == _NONE:
        return "None"
    parts = [_node_str(c) for c in children]
    if kind == _TUPLE:
        if len(parts) == 1:
            return f"({parts[0]},)"
        return "(" + ", ".join(parts) + ")"
    if kind == _LIST:
        return "[" + ", ".join(parts) + "]"
    if kind == _DICT:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts, strict=True)) + "}"
    if kind == _NAMEDTUPLE:
        return f"CustomNode(namedtuple[{t.__name__}], [" + ", ".join(parts) + "])"
    return f"CustomNode({t.__name__}[{aux!s}], [" + ", ".join(parts) + "])"


def _node_type(kind, t):
    if kind == _NONE:
        return type(None)
    if kind == _TUPLE:
        return tuple
    if kind == _LIST:
        return list
    if kind == _DICT:
        return dict
    return t


def _flatten_up_to(node, x, out, custom):
    """Append the subtrees of ``x`` at the leaves of ``node`` to ``out``, in
    reverse order (the caller reverses).  Children are visited last-to-first so
    that, when a tree has several mismatches, the one reported is the same as
    the C++ implementation's."""
    if node is None:
        out.append(x)
        return
    kind, t, aux, children = node
    if kind == _TUPLE:
        if type(x) is not tuple:
            raise ValueError(f"Expected tuple, got {x!r}.")
        if len(x) != len(children):
            raise ValueError(f"Tuple arity mismatch: {len(x)} != {len(children)}; tuple: {x!r}.")
        values = x
    elif kind == _LIST:
        if type(x) is not list:
            raise ValueError(f"Expected list, got {x!r}.")
        if len(x) != len(children):
            raise ValueError(f"List arity mismatch: {len(x)} != {len(children)}; list: {x!r}.")
        values = x
    elif kind == _DICT:
        if type(x) is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if len(keys) != len(aux) or any(a != b for a, b in zip(keys, aux, strict=True)):
            raise ValueError(
                f"Dict key mismatch; expected keys: {list(aux)!r}; present keys: {keys!r}."
            )
        values = [x[k] for k in keys]
    elif kind == _NONE:
        if x is not None:
            raise ValueError(f"Expected None, got {x!r}.{_NONE_PREFIX_NOTE}")
        return
    elif kind == _NAMEDTUPLE:
        if not (isinstance(x, tuple) and hasattr(x, "_fields")):
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if len(x) != len(children):
            raise ValueError(
                f"Named tuple arity mismatch: {len(x)} != {len(children)}; tuple: {x!r}."
            )
        if type(x) is not t:
            raise ValueError(f"Named tuple type mismatch: expected type: {t!r}, tuple: {x!r}.")
        values = x
    elif kind == _CUSTOM:
        reg = custom.get(type(x))
        if reg is None or reg.type is not t or reg.kind != _CUSTOM:
            raise ValueError(f"Custom node type mismatch: expected type: {t!r}, value: {x!r}.")
        values, new_aux = _custom_flatten(reg, x)
        if aux != new_aux:
            raise ValueError(f"Mismatch custom node data: {aux!r} != {new_aux!r}; value: {x!r}.")
        values = list(values)
        if len(values) != len(children):
            raise ValueError(
                f"Custom type arity mismatch: {len(values)} != {len(children)}; value: {x!r}."
            )
    else:  # _DATACLASS
        reg = custom.get(type(x))
        if reg is None or reg.type is not t or reg.kind != _DATACLASS:
            raise ValueError(
                f"Custom dataclass node type mismatch: expected type: {t!r}, value: {x!r}."
            )
        new_aux = tuple([getattr(x, f) for f in reg.meta_fields])
        if aux != new_aux:
            raise ValueError(
                f"Mismatch custom dataclass node data: {aux!r} != {new_aux!r}; value: {x!r}."
            )
        values = [getattr(x, f) for f in reg.data_fields]
    for c, v in zip(reversed(children), reversed(values), strict=True):
        _flatten_up_to(c, v, out, custom)


def _walk(node, f_node, f_leaf, it):
    if node is None:
        x = next(it)
        return x if f_leaf is None else f_leaf(x)
    kind, t, aux, children = node
    results = tuple([_walk(c, f_node, f_leaf, it) for c in children])
    if kind == _DICT:
        data = list(aux)
    elif kind == _NAMEDTUPLE:
        data = t
    else:
        data = aux
    return f_node(results, data)


def _compose(node, inner):
    if node is None:
        return inner
    kind, t, aux, children = node
    return (kind, t, aux, tuple([_compose(c, inner) for c in children]))


class PyTreeDef:
    """Structure of a pytree (pure-Python twin of the C++ ``PyTreeDef``)."""

    # Lazily computed; instances only store what they have computed.
    _num_nodes: int | None = None
    _hash: int | None = None
    _builder: Callable | None = None  # compiled unflattener, built on second use
    _unflatten_calls = 0

    def __init__(self, node, registry: PyTreeRegistry, num_leaves: int | None = None):
        # Internal: PyTreeDefs are made by flattening (or the helpers below).
        self._node = node
        self._registry = registry
        self._num_leaves = num_leaves

    # -- sizes --
    def _counts(self) -> None:
        self._num_leaves, self._num_nodes = _count(self._node)

    @property
    def num_leaves(self) -> int:
        if self._num_leaves is None:
            self._counts()
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        if self._num_nodes is None:
            self._counts()
        return self._num_nodes

    # -- rebuilding --
    def unflatten(self, leaves: Iterable[Any]) -> Any:
        if type(leaves) is not list:
            if not isinstance(leaves, Iterable):
                raise TypeError(
                    f"unflatten(): expected an iterable of leaves, got {type(leaves).__name__}"
                )
            leaves = list(leaves)
        n = self.num_leaves
        if len(leaves) != n:
            if len(leaves) < n:
                raise ValueError(f"Too few leaves for PyTreeDef; expected {n}, got {len(leaves)}")
            raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
        builder = self._builder
        if builder is not None:
            return builder(iter(leaves))
        node = self._node
        if node is None:
            return leaves[0]
        if self._unflatten_calls:
            # Reused treedef (the common case, e.g. jit outputs): compile it.
            self._builder = builder = _compile(node, self._registry._custom)
            return builder(iter(leaves))
        self._unflatten_calls = 1
        return _unflatten(node, iter(leaves), self._registry._custom)

    def flatten_up_to(self, xs: Any) -> list:
        out: list = []
        _flatten_up_to(self._node, xs, out, self._registry._custom)
        out.reverse()
        return out

    def walk(self, f_node: Callable, f_leaf: Callable | None, leaves: Iterable[Any]) -> Any:
        it = iter(leaves)
        try:
            result = _walk(self._node, f_node, f_leaf, it)
        except StopIteration:
            raise ValueError("Too few leaves for PyTreeDef") from None
        for _ in it:
            raise ValueError("Too many leaves for PyTreeDef")
        return result

    # -- structure --
    def children(self) -> list[PyTreeDef]:
        if self._node is None:
            return []
        return [PyTreeDef(c, self._registry) for c in self._node[3]]

    def node_data(self):
        node = self._node
        if node is None:
            return None
        kind, t, aux, _ = node
        if kind == _DICT:
            aux = list(aux)
        elif kind == _NAMEDTUPLE:
            aux = None
        return (_node_type(kind, t), aux)

    @staticmethod
    def from_node_data_and_children(
        registry: PyTreeRegistry, node_data, children: Iterable[PyTreeDef]
    ) -> PyTreeDef:
        if node_data is None:
            return PyTreeDef(None, registry, 1)
        t, aux = node_data
        child_nodes = tuple([c._node for c in children])
        k = registry._kind_of.get(t)
        if k is None:
            if registry._enable_namedtuple and _is_namedtuple_type(t):
                return PyTreeDef((_NAMEDTUPLE, t, None, child_nodes), registry)
            raise ValueError(f"Unknown pytree node type: {t!r}.")
        if k == _NONE:
            node = _NONE_NODE
        elif k == _DICT:
            node = (_DICT, None, tuple(aux), child_nodes)
        elif k in (_TUPLE, _LIST):
            node = (k, None, None, child_nodes)
        else:
            node = (k, t, aux, child_nodes)
        return PyTreeDef(node, registry)

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        return PyTreeDef(
            _compose(self._node, inner._node), self._registry, self.num_leaves * inner.num_leaves
        )

    # -- comparison --
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        try:
            return self._node == other._node
        except Exception as e:  # noqa: BLE001
            raise ValueError(
                "Exception raised while checking equality of metadata fields of pytree. "
                "Make sure that metadata fields are hashable and have simple equality "
                "semantics. (Note: arrays cannot be passed as metadata fields!)"
            ) from e

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash(_shape(self._node))
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({_node_str(self._node)})"

    __str__ = __repr__

    # -- pickling: the registry is pickled by reference --
    def __reduce__(self):
        return (PyTreeDef, (self._node, self._registry, self._num_leaves))


# ---------------------------------------------------------------------------
# Module-level helpers (same names as jaxlib._jax.pytree)
# ---------------------------------------------------------------------------

_default_registry = PyTreeRegistry()
_default_registry.__module__ = __name__
_default_registry.__name__ = "_default_registry"


def default_registry() -> PyTreeRegistry:
    """This module's process-wide default registry (Olympus keeps its own)."""
    return _default_registry


def treedef_tuple(registry: PyTreeRegistry, treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """A tuple treedef whose children are ``treedefs``."""
    treedefs = list(treedefs)
    node = (_TUPLE, None, None, tuple([t._node for t in treedefs]))
    return PyTreeDef(node, registry, sum(t.num_leaves for t in treedefs))


def all_leaves(registry: PyTreeRegistry, iterable: Iterable[Any]) -> bool:
    """True iff every element of ``iterable`` is a leaf under ``registry``."""
    for x in iterable:
        if registry.is_node(type(x)):
            return False
    return True
