"""Pytree utilities for Olympus (the ``jax.tree_util`` equivalent).

Two interchangeable backends implement the pytree core:

* ``'cpp'``: jaxlib's C++ pytree (``jaxlib._jax.pytree``) with Olympus's *own*
  ``PyTreeRegistry`` (never jaxlib's process-wide ``default_registry()``, which
  is shared with jax).  Used whenever jaxlib is importable; 3-8x faster.
* ``'python'``: :mod:`olympus_trace._pytree_py`, a pure-Python twin with the
  same leaf order, ``PyTreeDef`` repr, key paths and error messages.  Used when
  jaxlib is missing or ``OLYMPUS_PURE_PYTHON_PYTREE=1`` is set.

:data:`BACKEND` names the active backend and :data:`default_registry` (also
``olympus_registry``) is the active registry object; the C++ jit fast path is
given ``olympus_registry``.  Node registrations always go to *both* registries
so code (and tests) may use the Python backend even when the C++ one is active.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import operator
import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from . import _pytree_py

__all__ = [
    "BACKEND",
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "available_backends",
    "cpp_registry",
    "default_registry",
    "keystr",
    "olympus_registry",
    "python_registry",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_is_strict_leaf",
    "treedef_tuple",
]

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type)
Leaf = Any
KeyEntry = Hashable
KeyPath = tuple  # tuple[KeyEntry, ...]

# ---------------------------------------------------------------------------
# Backend selection
# ---------------------------------------------------------------------------

_FORCE_PURE_PYTHON = os.environ.get("OLYMPUS_PURE_PYTHON_PYTREE", "").strip().lower() not in (
    "",
    "0",
    "false",
    "no",
    "off",
)

_cpp_pytree: Any = None
if not _FORCE_PURE_PYTHON:
    try:
        from jaxlib._jax import pytree as _cpp_pytree  # type: ignore[no-redef]

        _cpp_pytree.PyTreeRegistry  # noqa: B018 - make sure the API we need exists
    except (ImportError, AttributeError):
        _cpp_pytree = None


def _new_registry(module, name: str):
    reg = module.PyTreeRegistry(
        enable_none=True,
        enable_tuple=True,
        enable_namedtuple=True,
        enable_list=True,
        enable_dict=True,
    )
    # Lets treedefs pickle: a PyTreeDef pickles its registry by reference.
    reg.__module__ = __name__
    reg.__name__ = name
    return reg


#: The pure-Python registry; always present and always kept in sync.
python_registry = _new_registry(_pytree_py, "python_registry")
#: The C++ registry (Olympus's own), or None without jaxlib.
cpp_registry = _new_registry(_cpp_pytree, "cpp_registry") if _cpp_pytree is not None else None


class _Backend:
    """Everything that differs between the two backends."""

    def __init__(self, name: str, module: Any, registry: Any):
        self.name = name
        self.module = module
        self.registry = registry


_BACKENDS: dict[str, _Backend] = {"python": _Backend("python", _pytree_py, python_registry)}
if cpp_registry is not None:
    _BACKENDS["cpp"] = _Backend("cpp", _cpp_pytree, cpp_registry)


def available_backends() -> tuple[str, ...]:
    """Names of the usable backends, the preferred one first."""
    return tuple(n for n in ("cpp", "python") if n in _BACKENDS)


# Module globals describing the active backend; (re)bound by ``_activate``.
BACKEND: str
default_registry: Any
olympus_registry: Any
PyTreeDef: type
DictKey: type
SequenceKey: type
GetAttrKey: type
FlattenedIndexKey: type
_pt: Any


def _activate(name: str) -> None:
    global BACKEND, default_registry, olympus_registry, PyTreeDef, _pt
    global DictKey, SequenceKey, GetAttrKey, FlattenedIndexKey
    b = _BACKENDS[name]
    BACKEND = b.name
    _pt = b.module
    default_registry = olympus_registry = b.registry
    PyTreeDef = b.module.PyTreeDef
    DictKey = b.module.DictKey
    SequenceKey = b.module.SequenceKey
    GetAttrKey = b.module.GetAttrKey
    FlattenedIndexKey = b.module.FlattenedIndexKey


_activate(available_backends()[0])


@contextlib.contextmanager
def _use_backend(name: str) -> Iterator[None]:
    """Temporarily switch the module-level backend (for tests and benchmarks).

    Not thread-safe: it rebinds this module's globals.
    """
    if name not in _BACKENDS:
        raise ValueError(f"pytree backend {name!r} is not available; have {available_backends()}")
    prev = BACKEND
    _activate(name)
    try:
        yield
    finally:
        _activate(prev)


# ---------------------------------------------------------------------------
# Flattening / unflattening
# ---------------------------------------------------------------------------


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Leaf], Any]:
    """Flatten ``tree`` into ``(leaves, treedef)``.

    ``is_leaf(x)`` may return True to stop recursion at ``x`` (it must return a
    bool).  Dict leaves come in sorted-key order; ``None`` is a node with no
    leaves.
    """
    return default_registry.flatten(tree, is_leaf)


def tree_unflatten(treedef: Any, leaves: Iterable[Leaf]) -> Any:
    """Rebuild a pytree of structure ``treedef`` from ``leaves``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Leaf]:
    """The leaves of ``tree``, in flattening order."""
    return default_registry.flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """The ``PyTreeDef`` of ``tree``."""
    return default_registry.flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs: Iterable[Any]) -> Any:
    """A tuple treedef whose children are ``treedefs``."""
    return _pt.treedef_tuple(default_registry, list(treedefs))


def treedef_children(treedef: Any) -> list:
    """The treedefs of the immediate children of ``treedef``."""
    return treedef.children()


def treedef_is_leaf(treedef: Any) -> bool:
    """True if ``treedef`` has a single node (a leaf, ``None`` or an empty container)."""
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: Any) -> bool:
    """True if ``treedef`` is exactly one leaf (``*``)."""
    return treedef.num_nodes == 1 and treedef.num_leaves == 1


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every element of ``iterable`` is a leaf."""
    if is_leaf is None:
        return _pt.all_leaves(default_registry, iterable)
    items = list(iterable)
    return items == tree_leaves(items, is_leaf)


def _mismatch_error(
    fn_name: str,
    treedef: Any,
    index: int,
    other: Any,
    err: ValueError,
    is_leaf: Callable[[Any], bool] | None,
) -> ValueError:
    try:
        other_structure = repr(tree_structure(other, is_leaf))
    except Exception:  # noqa: BLE001 - best effort, the original error is what matters
        other_structure = f"<unflattenable {type(other).__name__}>"
    label = f"tree argument {index} structure:"
    return ValueError(
        f"{fn_name}: tree argument {index} does not match the structure of the first tree.\n"
        f"  {'first tree structure:':<{len(label)}} {treedef!r}\n"
        f"  {label} {other_structure}\n"
        "Every extra tree must have the first tree's structure, or extend it at the first "
        f"tree's leaves. Mismatch: {err}"
    )


def _flatten_rest(
    fn_name: str, treedef: Any, rest: Sequence[Any], is_leaf: Callable[[Any], bool] | None
) -> list[list]:
    out = []
    for i, r in enumerate(rest, start=1):
        try:
            out.append(treedef.flatten_up_to(r))
        except ValueError as e:
            raise _mismatch_error(fn_name, treedef, i, r, e, is_leaf) from None
    return out


def tree_map(
    f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """Map ``f`` over the leaves of ``tree`` (and the matching subtrees of ``rest``).

    Each tree in ``rest`` must have the structure of ``tree`` or have it as a
    prefix (its subtrees at ``tree``'s leaves are passed whole).
    """
    leaves, treedef = default_registry.flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = _flatten_rest("tree_map", treedef, rest, is_leaf)
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others, strict=True)])


_NO_INITIALIZER = object()


def tree_reduce(
    function: Callable[[T, Any], T],
    tree: Any,
    initializer: Any = _NO_INITIALIZER,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """``functools.reduce`` over the leaves of ``tree``."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """``all()`` over the leaves of ``tree``."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: Any, inner_treedef: Any | None, pytree_to_transpose: Any) -> Any:
    """Turn an outer-of-inner pytree into an inner-of-outer pytree.

    ``inner_treedef=None`` infers the inner structure from the first outer leaf.
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [flat[i * inner_size : (i + 1) * inner_size] for i in range(outer_size)]
    subtrees = [outer_treedef.unflatten(col) for col in zip(*rows, strict=True)]
    return inner_treedef.unflatten(subtrees)


# ---------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------


def _path_pred(is_leaf: Callable | None, is_leaf_takes_path: bool) -> Callable | None:
    if is_leaf is None or is_leaf_takes_path:
        return is_leaf
    return lambda _path, x: is_leaf(x)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable | None = None, *, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], Any]:
    """Like :func:`tree_flatten` but each leaf comes with its key path."""
    return default_registry.flatten_with_path(tree, _path_pred(is_leaf, is_leaf_takes_path))


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable | None = None, *, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """``(key_path, leaf)`` pairs of ``tree``."""
    return default_registry.flatten_with_path(tree, _path_pred(is_leaf, is_leaf_takes_path))[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Like :func:`tree_map` but ``f`` gets the key path first: ``f(path, x, *xs)``."""
    pairs, treedef = default_registry.flatten_with_path(
        tree, _path_pred(is_leaf, is_leaf_takes_path)
    )
    if not rest:
        return treedef.unflatten([f(p, x) for p, x in pairs])
    plain_is_leaf = None if is_leaf is None or is_leaf_takes_path else is_leaf
    others = _flatten_rest("tree_map_with_path", treedef, rest, plain_is_leaf)
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others, strict=True)])


def _key_value_attrs() -> dict[type, str]:
    attrs = {}
    for b in _BACKENDS.values():
        m = b.module
        attrs.update(
            {
                m.DictKey: "key",
                m.SequenceKey: "idx",
                m.GetAttrKey: "name",
                m.FlattenedIndexKey: "key",
            }
        )
    return attrs


_KEY_VALUE_ATTR = _key_value_attrs()


def _simple_key(k: Any) -> str:
    attr = _KEY_VALUE_ATTR.get(type(k))
    return str(k) if attr is None else str(getattr(k, attr))


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path: ``(DictKey('a'), SequenceKey(0), GetAttrKey('x'))`` -> ``"['a'][0].x"``.

    ``simple=True`` renders bare key values joined by ``separator`` (``a/0/x``
    with ``separator='/'``).
    """
    if simple:
        return separator.join(_simple_key(k) for k in keys)
    return separator.join(str(k) for k in keys)


# ---------------------------------------------------------------------------
# Registration (always to both registries)
# ---------------------------------------------------------------------------


def _all_registries() -> list:
    # C++ first: if it refuses a registration, nothing has been half-registered.
    return [_BACKENDS[n].registry for n in available_backends()]


# Types that are already nodes; guards against registering a type twice.
_registered_types: set[type] = {tuple, list, dict, type(None)}


def _claim_type(nodetype: type, what: str = "") -> None:
    if nodetype in _registered_types:
        raise ValueError(f"Duplicate custom {what}PyTreeDef type registration for {nodetype!r}.")
    _registered_types.add(nodetype)


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable, Hashable]],
    unflatten_func: Callable[[Hashable, Iterable], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable, Hashable]] | None = None,
) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux)``; ``unflatten_func(aux, children) -> x``;
    optional ``flatten_with_keys_func(x) -> (((key, child), ...), aux)`` supplies
    key-path entries (otherwise children get ``FlattenedIndexKey(i)``).
    Registering a type twice raises ``ValueError``.
    """
    _claim_type(nodetype)
    for reg in _all_registries():
        reg.register_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable, Hashable]],
    unflatten_func: Callable[[Hashable, Iterable], Any],
    flatten_func: Callable[[Any], tuple[Iterable, Hashable]] | None = None,
) -> None:
    """Register ``nodetype`` with a key-aware flatten function.

    ``flatten_with_keys(x) -> (((key, child), ...), aux)``.  ``flatten_func``
    (children only) is derived from it when not given.
    """
    if flatten_func is None:

        def flatten_func(x):
            key_children, aux = flatten_with_keys(x)
            return [c for _, c in key_children], aux

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: register ``cls`` using its ``tree_flatten()`` method and
    ``tree_unflatten(aux, children)`` classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: like :func:`register_pytree_node_class` but uses
    ``tree_flatten_with_keys()`` (and ``tree_flatten()`` if defined)."""
    flatten_func = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(
        cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten, flatten_func
    )
    return cls


def register_static(cls: Typ) -> Typ:
    """Register ``cls`` as a leafless node: instances live entirely in the treedef
    (so they must be hashable)."""
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _children: obj)
    return cls


def register_dataclass(
    nodetype: Typ,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> Typ:
    """Register a dataclass-like type whose ``data_fields`` are children and
    ``meta_fields`` are static (part of the treedef; must be hashable).

    With neither field list given, ``nodetype`` must be a dataclass: fields with
    ``init=True`` are data fields, except those declared with
    ``field(metadata=dict(static=True))``, which are meta fields.  Usable as a
    decorator.  The type is rebuilt as ``nodetype(**fields)``.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must both be given or both be "
                f"omitted; got data_fields={data_fields!r}, meta_fields={meta_fields!r}."
            )
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when nodetype is "
                f"not a dataclass; got nodetype={nodetype!r}."
            )
        data_fields, meta_fields = [], []
        for f in dataclasses.fields(nodetype):
            if not f.init or f.name in drop_fields:
                continue
            (meta_fields if f.metadata.get("static", False) else data_fields).append(f.name)
    data_fields = tuple(data_fields)
    meta_fields = tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init_fields:
            msg = (
                "register_dataclass: data_fields and meta_fields must together name exactly the "
                "dataclass fields with init=True."
            )
            if missing := init_fields - given:
                msg += (
                    f" Missing fields: {sorted(missing)} (add them to drop_fields to ignore them)."
                )
            if unexpected := given - init_fields:
                msg += f" Unexpected fields: {sorted(unexpected)}."
            raise ValueError(msg)
    _claim_type(nodetype, "dataclass ")
    for reg in _all_registries():
        reg.register_dataclass_node(nodetype, list(data_fields), list(meta_fields))
    return nodetype


# ---------------------------------------------------------------------------
# Standard extra node types
# ---------------------------------------------------------------------------


def _register_std_containers() -> None:
    def flatten_ordereddict(x):
        return tuple(x.values()), tuple(x.keys())

    def unflatten_ordereddict(keys, values):
        return collections.OrderedDict(zip(keys, values, strict=True))

    def flatten_defaultdict(d):
        keys = tuple(sorted(d))
        return tuple(d[k] for k in keys), (d.default_factory, keys)

    def unflatten_defaultdict(aux, values):
        return collections.defaultdict(aux[0], zip(aux[1], values, strict=True))

    _claim_type(collections.OrderedDict)
    _claim_type(collections.defaultdict)
    for name in available_backends():
        b = _BACKENDS[name]
        dict_key = b.module.DictKey  # each backend's paths use its own key class

        def ordereddict_with_keys(x, dict_key=dict_key):
            return tuple((dict_key(k), v) for k, v in x.items()), tuple(x.keys())

        def defaultdict_with_keys(d, dict_key=dict_key):
            keys = tuple(sorted(d))
            return tuple((dict_key(k), d[k]) for k in keys), (d.default_factory, keys)

        b.registry.register_node(
            collections.OrderedDict,
            flatten_ordereddict,
            unflatten_ordereddict,
            ordereddict_with_keys,
        )
        b.registry.register_node(
            collections.defaultdict,
            flatten_defaultdict,
            unflatten_defaultdict,
            defaultdict_with_keys,
        )


_register_std_containers()


class _HashableCallableShim:
    """Wraps a ``functools.partial`` used as a Partial's func so that Python does
    not merge its arguments into the Partial's (which would make them leaves)."""

    def __init__(self, fun: Callable):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self) -> str:
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: the bound positional and keyword
    arguments are children (leaves), the function is static aux data.

    Lets partially-applied functions cross transformation boundaries.
    """

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            inner = func
            func = _HashableCallableShim(inner)
            out = super().__new__(cls, func, *args, **kw)
            func.func = inner.func
            func.args = inner.args
            func.keywords = inner.keywords
            return out
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)
