"""Pytree structures (``PyTreeDef``) as plain JSON values, for files: no pickle.

A saved executable must be called with the same pytree structure as the original, in a
process that never saw the original's objects. The structure is written node by node,
each node type by name:

* a leaf is ``"*"``; ``None`` is ``["None"]``;
* ``["tuple", children]``, ``["list", children]``;
* ``["dict", keys, children]`` (keys in the dict's flattening order);
* ``["node", "module:QualName", aux, children]`` for a namedtuple or a registered custom
  node (``OrderedDict``, ``defaultdict``, dataclasses, `register_pytree_node` types).

Keys and auxiliary data are encoded as tagged values (`_encode_value`): ``None``, bools,
ints, floats, strings, tuples and lists of them, and builtin types (a ``defaultdict``'s
factory). Anything else (a function, an arbitrary object) has no portable encoding and is
refused when saving, with the node it belongs to named.

Reading resolves a node type only among modules *already imported* by this process, and
only if it is a namedtuple or a registered pytree node: nothing is imported and no code
runs because a file says so. An unknown type is refused with a clear error.
"""

from __future__ import annotations

import sys
from typing import Any

from . import tree_util

__all__ = ["encode_treedef", "decode_treedef", "TreeEncodingError", "ENCODING_VERSION"]

#: Bumped when the encoding changes; readers refuse other versions.
ENCODING_VERSION = 1
_MAX_DEPTH = 200
_BUILTIN_TYPES = {t.__name__: t for t in (int, float, complex, bool, str, bytes, list,
                                          tuple, dict, set, frozenset)}


class TreeEncodingError(ValueError):
    """A pytree structure that cannot be written, or a written one that cannot be read."""


# ----------------------------------------------------------------- encoding

def encode_treedef(treedef: Any) -> Any:
    """The JSON-able encoding of `treedef` (TreeEncodingError for an unencodable node)."""
    return _encode(treedef, 0)


def _encode(td: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise TreeEncodingError("pytree is nested too deeply to encode")
    if tree_util.treedef_is_strict_leaf(td):
        return "*"
    typ, aux = td.node_data()
    children = [_encode(c, depth + 1) for c in td.children()]
    if typ is type(None):
        return ["None"]
    if typ is tuple or typ is list:
        return [typ.__name__, children]
    if typ is dict:
        return ["dict", [_encode_value(k, "dict key") for k in aux], children]
    name = _type_name(typ)
    if _is_namedtuple(typ):
        aux = list(typ._fields)
    return ["node", name, _encode_value(aux, f"the auxiliary data of pytree node {name}"),
            children]


def _type_name(typ: type) -> str:
    name = f"{typ.__module__}:{typ.__qualname__}"
    if "<locals>" in typ.__qualname__:
        raise TreeEncodingError(
            f"pytree node type {name} is defined inside a function, so it cannot be found "
            "by name when the file is loaded; define it at module level")
    return name


def _is_namedtuple(typ: type) -> bool:
    return isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields")


def _encode_value(v: Any, what: str, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise TreeEncodingError(f"{what} is nested too deeply to encode")
    if v is None or type(v) in (bool, str):
        return v
    if type(v) is int:
        return ["int", str(v)]  # JSON readers may round big ints; a string is exact
    if type(v) is float:
        return ["float", v.hex()]
    if type(v) in (tuple, list):
        return [type(v).__name__, [_encode_value(x, what, depth + 1) for x in v]]
    if isinstance(v, type) and _BUILTIN_TYPES.get(v.__name__) is v:
        return ["type", v.__name__]
    raise TreeEncodingError(
        f"{what} has a value of type {type(v).__name__} ({v!r:.60}), which has no portable "
        "encoding (only None, bool, int, float, str, tuples and lists of them, and "
        "builtin types can be saved)")


# ----------------------------------------------------------------- decoding

def decode_treedef(x: Any) -> Any:
    """The PyTreeDef `encode_treedef` wrote (TreeEncodingError for anything malformed or
    naming a node type this process does not know)."""
    return _decode(x, 0)


def _decode(x: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise TreeEncodingError("encoded pytree is nested too deeply")
    registry = tree_util.default_registry
    if x == "*":
        return tree_util.tree_structure(0)
    if not isinstance(x, list) or not x or not isinstance(x[0], str):
        raise TreeEncodingError(f"malformed pytree node {x!r:.80}")
    tag = x[0]
    if tag == "None" and len(x) == 1:
        return tree_util.tree_structure(None)
    if tag in ("tuple", "list") and len(x) == 2:
        children = _decode_children(x[1], depth)
        return _from_node(registry, (tuple if tag == "tuple" else list, None), children)
    if tag == "dict" and len(x) == 3:
        if not isinstance(x[1], list):
            raise TreeEncodingError(f"malformed dict keys {x[1]!r:.80}")
        keys = [_decode_value(k, "dict key") for k in x[1]]
        children = _decode_children(x[2], depth)
        if len(keys) != len(children) or len(set(map(repr, keys))) != len(keys):
            raise TreeEncodingError("malformed dict node: keys repeated or not one per child")
        return _from_node(registry, (dict, keys), children)
    if tag == "node" and len(x) == 4 and isinstance(x[1], str):
        typ = _resolve_type(x[1])
        aux = _decode_value(x[2], f"the auxiliary data of pytree node {x[1]}")
        children = _decode_children(x[3], depth)
        if _is_namedtuple(typ):
            if list(typ._fields) != aux or len(children) != len(typ._fields):
                raise TreeEncodingError(
                    f"namedtuple {x[1]} has fields {list(typ._fields)} in this process, but "
                    f"the file has {aux}")
            aux = None
        return _from_node(registry, (typ, aux), children)
    raise TreeEncodingError(f"malformed pytree node {x!r:.80}")


def _from_node(registry: Any, node_data: Any, children: list) -> Any:
    treedef_class = type(tree_util.tree_structure(0))  # the active backend's PyTreeDef
    try:
        return treedef_class.from_node_data_and_children(registry, node_data, children)
    except (TypeError, ValueError) as e:
        raise TreeEncodingError(f"cannot rebuild pytree node {node_data[0]}: {e}") from None


def _decode_children(x: Any, depth: int) -> list:
    if not isinstance(x, list):
        raise TreeEncodingError(f"malformed pytree children {x!r:.80}")
    return [_decode(c, depth + 1) for c in x]


def _resolve_type(name: str) -> type:
    """The node type called `name` in an already-imported module, if it is a pytree node."""
    module_name, _, qualname = name.partition(":")
    module = sys.modules.get(module_name)
    obj: Any = module
    for part in qualname.split(".") if module is not None and qualname else ():
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if module is None or not isinstance(obj, type):
        raise TreeEncodingError(
            f"the saved pytree uses node type {name}, which this process does not have "
            f"(import module {module_name!r} and register the type before loading)")
    if not (_is_namedtuple(obj) or obj in tree_util._registered_types):
        raise TreeEncodingError(
            f"the saved pytree uses node type {name}, which is not a registered pytree node "
            "in this process")
    return obj


def _decode_value(v: Any, what: str, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise TreeEncodingError(f"{what} is nested too deeply")
    if v is None or type(v) in (bool, str):
        return v
    if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str):
        tag, body = v
        if tag == "int" and isinstance(body, str) and len(body) <= 4300:
            try:
                return int(body)
            except ValueError:
                pass
        elif tag == "float" and isinstance(body, str):
            try:
                return float.fromhex(body)
            except ValueError:
                pass
        elif tag in ("tuple", "list") and isinstance(body, list):
            items = [_decode_value(b, what, depth + 1) for b in body]
            return tuple(items) if tag == "tuple" else items
        elif tag == "type" and body in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[body]
    raise TreeEncodingError(f"{what}: malformed encoded value {v!r:.80}")

