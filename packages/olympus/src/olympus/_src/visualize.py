"""`debug.visualize_array_sharding` / `visualize_sharding`: a text picture of which
device holds which block of a 1-D or 2-D array, drawn as JAX 0.10.2 draws it with
``rich`` on a terminal without colors (a box-drawn table, one cell per block, each cell
sized by the block's share of the array and labelled with its devices' ids). Drawn here
without ``rich``; the expected pictures in the tests were recorded from JAX.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

import olympus_runtime as rt
from olympus_runtime import Mesh, NamedSharding, PartitionSpec
from olympus_trace import tree_util
from olympus_trace.core import Tracer

__all__ = ["visualize_sharding", "visualize_array_sharding", "inspect_array_sharding",
           "sharding_picture"]


def _chunk(size: int, s: slice) -> tuple[int, int]:
    """(block index, block length) of slice `s` of a dimension of `size`."""
    if s.start is None and s.stop is None:
        return 0, size
    return s.start // (s.stop - s.start), s.stop - s.start


def sharding_picture(shape: Sequence[int], sharding: Any, *, scale: float = 1.0,
                     min_width: int = 9, max_width: int = 80) -> str:
    """The text `visualize_sharding` prints."""
    shape = tuple(shape)
    if not 1 <= len(shape) <= 2:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    base_height = int(10 * scale)
    base_width = int(base_height * ((shape[1] if len(shape) == 2 else 1) / shape[0]))
    kind = next(iter(sharding._internal_device_list)).platform.upper()
    cells: dict[tuple[int, int], list] = {}  # (row, col) -> [ids, width frac, height frac]
    for dev, index in sharding.devices_indices_map(shape).items():
        if len(shape) == 2:
            (r, h), (c, w) = _chunk(shape[0], index[0]), _chunk(shape[1], index[1])
            key, hfrac, wfrac = (r, c), h / shape[0], w / shape[1]
        else:
            c, w = _chunk(shape[0], index[0])
            key, hfrac, wfrac = (0, c), None, w / shape[0]
        cell = cells.setdefault(key, [set(), wfrac, hfrac])
        cell[0].add(dev.id)
    rows = max(k[0] for k in cells) + 1
    cols = max(k[1] for k in cells) + 1
    # Each cell: its label padded on the left/right/top/bottom as JAX pads it.
    layout = {}
    for key, (ids, wfrac, hfrac) in cells.items():
        label = f"{kind} " + ",".join(str(i) for i in sorted(ids))
        width = min(max(int(wfrac * base_width * 2.5), min_width), max_width)
        height = 1 if hfrac is None else int(hfrac * base_height)
        left, extra = divmod(width - len(label) - 2, 2)
        top, vextra = divmod(height - 2, 2)
        layout[key] = (label, max(left, 0), max(left + extra, 0), max(top, 0),
                       max(top + vextra, 0))
    col_w = [max(len(lab) + lp + rp for (r, c), (lab, lp, rp, _, _) in layout.items()
                 if c == j) for j in range(cols)]
    lines = ["┌" + "┬".join("─" * w for w in col_w) + "┐"]
    for i in range(rows):
        blocks = []
        for j in range(cols):
            label, lp, rp, tp, bp = layout[i, j]
            text = " " * lp + label + " " * rp
            pad = col_w[j] - len(text)  # centered in a wider column
            text = " " * (pad // 2) + text + " " * (pad - pad // 2)
            blocks.append([" " * col_w[j]] * tp + [text] + [" " * col_w[j]] * bp)
        height = max(len(b) for b in blocks)
        for j, b in enumerate(blocks):
            b += [" " * col_w[j]] * (height - len(b))
        for k in range(height):
            lines.append("│" + "│".join(b[k] for b in blocks) + "│")
        if i < rows - 1:
            lines.append("├" + "┼".join("─" * w for w in col_w) + "┤")
    lines.append("└" + "┴".join("─" * w for w in col_w) + "┘")
    return "\n".join(lines) + "\n"


def visualize_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool = True,
                       scale: float = 1.0, min_width: int = 9, max_width: int = 80,
                       color_map: Any = None) -> None:
    """Print which device holds which block of an array of `shape` under `sharding`.

    `use_color` and `color_map` are accepted for JAX compatibility; the picture has no
    colors (what JAX prints where ``rich`` finds no color terminal)."""
    sys.stdout.write(sharding_picture(shape, sharding, scale=scale, min_width=min_width,
                                      max_width=max_width))


# --- inside jit: the layout XLA's partitioner chose ---------------------------------------
#
# A traced value's sharding is only known once XLA has partitioned the program: the value
# goes through an ``inspect_sharding`` equation, whose custom call the partitioner calls
# back with the value's HloSharding while the program compiles (at lowering time when the
# program runs on one device). The jit layer says, around lowering and compiling, which
# devices and mesh the program has (`compiling`), so the HloSharding can be reported as JAX
# reports it: a NamedSharding on that mesh (with Auto axes), else a GSPMDSharding.

#: The placements (devices, mesh) of the programs being lowered or compiled, innermost last.
_placements: list = []


@contextlib.contextmanager
def compiling(placement: Any):
    """While a program of `placement` (``.devices``, ``.mesh``) is lowered or compiled."""
    _placements.append(placement)
    try:
        yield
    finally:
        _placements.pop()


def _rank(hlo: Any) -> int:
    """The rank of the values `hlo` (tiled) lays out (0 when it does not say)."""
    if not hlo.is_tiled():
        return 0
    return (len(hlo.tile_assignment_dimensions()) - int(hlo.replicate_on_last_tile_dim())
            - len(hlo.subgroup_types()))


def _reported_sharding(hlo: Any) -> Any:
    """The sharding reported for a value that XLA laid out as `hlo`."""
    placement = _placements[-1] if _placements else None
    mesh = getattr(placement, "mesh", None)
    devices = getattr(placement, "devices", None) or [rt.default_device()]
    if mesh is not None and not mesh.empty:
        mesh = Mesh(mesh.devices, mesh.axis_names)  # JAX reports the axes as Auto
        if hlo.is_manual():  # inside shard_map: each device's block is its own
            return NamedSharding(mesh, PartitionSpec())
        named = rt.named_from_hlo(mesh, hlo, _rank(hlo))
        if named is not None:
            return named
    return rt.GSPMDSharding(devices, hlo)


class _Report:
    """The callback of an ``inspect_sharding`` equation: the user's `callback`, called with
    the sharding of the HloSharding it receives."""

    __slots__ = ("callback",)

    def __init__(self, callback: Callable[[Any], None]):
        self.callback = callback

    def __call__(self, hlo: Any) -> None:
        self.callback(_reported_sharding(hlo))

    def __repr__(self) -> str:
        return repr(self.callback)


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], None]) -> None:
    """Call `callback` with the sharding of each array in the pytree `value`.

    Outside jit it is called at once; inside jit when the program is compiled (with the
    layout XLA's partitioner chose; a cached program does not call it again)."""
    from olympus_trace import lax_ops

    for leaf in tree_util.tree_leaves(value):
        if isinstance(leaf, Tracer):
            lax_ops.inspect_sharding(leaf, _Report(callback))
            continue
        if type(leaf) is not rt.Array:
            raise TypeError(f"inspect_array_sharding expects arrays, got {type(leaf).__name__}")
        callback(leaf.sharding)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print the picture of `arr`'s sharding (see `visualize_sharding`)."""
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(arr.shape, s, **kwargs))
