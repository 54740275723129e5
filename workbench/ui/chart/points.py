"""The operations' points on the chart.

:class:`PointLayer` owns the drawn :class:`~workbench.model.chart.scene.PointMark` of each
``(op_id, hw_id)`` and the items that show them: one scatter item per machine holds the
points of every operation but the selected one, whose points live in a small *live* item of
their own (an edit of the selected operation sets only that item), and the selection ring.
It also owns the points' positions in view coordinates, by row (the arrays hover, picking,
the text layout and the outside-the-view count read), and which roofs each operation's
points use (an edit that changes that set needs a full rebuild).

A part of :class:`~workbench.ui.chart.canvas.RooflineCanvas`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QBrush, QPen

from workbench.model.chart.scene import PointMark, Scene, drawn_pairs, drawn_points
from workbench.model.hardware import roof_name
from workbench.ui.chart.axes import to_data, to_view
from workbench.ui.chart.items import Pool, Spots
from workbench.ui.chart.styles import at_z

#: how many of the other operations drawn at a hovered point its tooltip names
ALSO_NAMED = 3


class PointLayer:
    """The operations' points, their items and positions (see the module)."""

    def __init__(self, canvas, add) -> None:
        self._canvas = canvas
        self._styles = canvas.styles
        self._scatter_pool = Pool(lambda: at_z(Spots(), 10), add)
        #: the selected operation's points: the item an edit changes
        self._live = at_z(Spots(), 10.5)
        self._live_op: int | None = None
        self._live_keys: list[tuple[int, int]] = []
        #: per machine, the keys of the points each spot of its scatter item stands for
        self._scatter_keys: dict[int, list[list[tuple[int, int]]]] = {}
        self._ring = at_z(Spots(), 11)
        self._ring_keys: list[tuple[int, int]] = []
        self._ring_style: tuple = ()
        self._points: dict[tuple[int, int], PointMark] = {}
        #: each operation's :meth:`label_key`, as the points are now
        self._label_keys: dict[int, tuple[int, int]] = {}
        self._op_points: dict[int, list[tuple[int, int]]] = {}
        self._scatter_for: dict[int, pg.ScatterPlotItem] = {}
        self._machine_marker: dict[int, str] = {}
        self._styles_of: dict[tuple[str, bool], tuple[QBrush, QPen]] = {}
        self._usage: dict[int, frozenset] = {}
        #: each usage once (a usage equal to one kept is that object)
        self._usage_kept: dict[frozenset, frozenset] = {}
        self._usage_count: Counter = Counter()
        self._keys: list[tuple[int, int]] = []
        self._xy = np.zeros((0, 2))
        self._row: dict[tuple[int, int], int] = {}

    # -- what is drawn --------------------------------------------------------------------

    def fixed_items(self) -> tuple:
        """The items made once: the selection ring and the live item."""
        return (self._ring, self._live)

    @property
    def ring(self) -> Spots:
        """The selection rings' item."""
        return self._ring

    @property
    def marks(self) -> Mapping[tuple[int, int], PointMark]:
        """Every drawn point by ``(op_id, hw_id)`` (read only)."""
        return self._points

    def keys_of(self, op_id: int | None) -> list[tuple[int, int]]:
        """The keys of an operation's drawn points (``[]`` when it draws none)."""
        return self._op_points.get(op_id, [])

    def label_key(self, op_id: int) -> tuple[int, int]:
        """The key of the point that carries an operation's name (or its tag: the highest
        point of an operation that carries no name)."""
        key = self._label_keys.get(op_id)
        if key is None:  # (asked for each operation in each placing: found once)
            keys = self._op_points[op_id]
            key = self._label_keys[op_id] = next(
                (k for k in keys if self._points[k].show_label),
                None) or max(keys, key=lambda k: self._points[k].y)
        return key

    def label_point(self, op_id: int) -> PointMark:
        """The point that carries an operation's name (see :meth:`label_key`)."""
        return self._points[self.label_key(op_id)]

    @property
    def xy(self) -> np.ndarray:
        """Every point's position in view coordinates, by row (read only)."""
        return self._xy

    @property
    def keys(self) -> list[tuple[int, int]]:
        """The key of each row of :attr:`xy`."""
        return self._keys

    def row_of(self, key) -> int | None:
        return self._row.get(key)

    def rows_of(self, keys: Sequence) -> np.ndarray:
        """The rows of :attr:`xy` of these points."""
        return np.array([self._row[key] for key in keys], dtype=int)

    def pixels(self, t) -> np.ndarray:
        """Every point's position in scene pixels, by row (``t``: the view's transform,
        ``(ax, bx, ay, by)``)."""
        ax, bx, ay, by = t
        if not len(self._xy):
            return np.zeros((0, 2))
        return np.column_stack((self._xy[:, 0] * ax + bx, self._xy[:, 1] * ay + by))

    def outside(self, view_range) -> int:
        """How many points lie outside ``((x0, x1), (y0, y1))`` (view coordinates)."""
        xy = self._xy
        if not len(xy):
            return 0
        (x0, x1), (y0, y1) = view_range
        return int(np.count_nonzero((xy[:, 0] < x0) | (xy[:, 0] > x1)
                                    | (xy[:, 1] < y0) | (xy[:, 1] > y1)))

    def tooltip(self, key: tuple[int, int]) -> str:
        """A point's tooltip; the others drawn exactly there (a model's layers coincide) are
        named, not hidden."""
        point = self._points[key]
        text = point.tooltip
        row = self._row.get(key)
        if row is None:
            return text
        same = np.flatnonzero((self._xy == self._xy[row]).all(axis=1))
        others = [self._points[self._keys[i]] for i in same.tolist() if i != row]
        if not others:
            return text
        names = [p.label if p.hw_id == point.hw_id else f"{p.label} (on {p.machine})"
                 for p in others[:ALSO_NAMED]]
        more = len(others) - len(names)
        listed = ", ".join(names) + (f" and {more} more" if more else "")
        return f"{text}\nAlso at this point ({len(others)}): {listed}"

    # -- read-outs ----------------------------------------------------------------------

    def _drawn(self) -> list:
        drawn = [(self._scatter_for[hw_id], keys) for hw_id, keys in self._scatter_keys.items()
                 if hw_id in self._scatter_for]
        live = [[key] for key in self._live_keys]
        return [*drawn, (self._live, live)]

    def point_items(self) -> list[tuple[int, int, float, float]]:
        """See :meth:`RooflineCanvas.point_items`."""
        out = []
        for scatter, spots in self._drawn():
            xs, ys = scatter.getData()
            if xs is None:
                continue
            for keys, x, y in zip(spots, to_data(xs), to_data(ys), strict=True):
                out.extend((op_id, hw_id, float(x), float(y)) for op_id, hw_id in keys)
        return out

    def point_colors(self) -> dict[tuple[int, int], str]:
        """See :meth:`RooflineCanvas.point_colors`."""
        out = {}
        for scatter, spots in self._drawn():
            for keys, spot in zip(spots, scatter.points(), strict=True):
                color = spot.brush().color()
                name = (color if color.alpha() else spot.pen().color()).name()
                out.update((key, name) for key in keys)
        return out

    def machine_spots(self, hw_id: int) -> int:
        """How many spots machine ``hw_id``'s scatter item draws (points that coincide
        exactly are one spot)."""
        xs, _ys = self._scatter_for[hw_id].getData()
        return 0 if xs is None else len(xs)

    def selected_points(self) -> list[tuple[float, float]]:
        """Data positions of the selection rings shown."""
        if not self._ring.isVisible():
            return []
        data = self._ring.data
        return [(float(x), float(y)) for x, y in zip(to_data(data["x"]), to_data(data["y"]),
                                                     strict=True)]

    # -- syncing ------------------------------------------------------------------------

    def sync(self, scene: Scene) -> None:
        """Draw the scene's points (reusing the items)."""
        self._points = {}
        self._op_points = {}
        self._label_keys = {}
        for point in scene.points:
            key = (point.op_id, point.hw_id)
            self._points[key] = point
            self._op_points.setdefault(point.op_id, []).append(key)
        self._machine_marker = {m.hw_id: m.marker for m in scene.machines}
        current = self._canvas.workspace.selection.current
        self._live_op = current if current in self._op_points else None
        self._styles_of = {}
        self._scatter_for = {}
        pool = self._scatter_pool
        pool.reset()
        for machine in scene.machines:
            self._scatter_for[machine.hw_id] = pool.take()
        for scatter in pool.items[pool.used:]:
            scatter.setData(x=np.zeros(0), y=np.zeros(0))
        pool.finish()
        self._scatter_keys = {}
        self._fill_scatters(list(self._scatter_for))
        self._fill_live()

        self._keys = list(self._points)
        self._row = {key: i for i, key in enumerate(self._keys)}
        self._xy = to_view(np.array(
            [(p.x, p.y) for p in self._points.values()], float).reshape(-1, 2))

        self._usage = {}
        for point in scene.points:
            r = point.result
            self._usage.setdefault(point.op_id, set()).add(
                (point.hw_id, roof_name(r.precision_used, r.unit), r.level))
        kept: dict[frozenset, frozenset] = {}
        self._usage = {k: kept.setdefault(frozenset(v), frozenset(v))
                       for k, v in self._usage.items()}
        self._usage_kept = kept
        self._usage_count = Counter()
        for usage in self._usage.values():
            self._usage_count.update(usage)

    def move(self, op_ids: Sequence[int], scene: Scene):
        """Move these operations' points after a parameter edit, as one batch: every new
        position is computed first, then each machine's scatter item is set once. Returns
        ``(keys, rows, xy, moved)``: the moved points, their rows, their new view positions
        and the operations moved; ``()`` when none moved; None when a full rebuild is needed
        (roofs in use or the set of points changed)."""
        workspace = self._canvas.workspace
        document = workspace.document
        results = workspace.results
        markers = {m.hw_id: m.marker for m in scene.machines}
        hw_ids = [m.hw_id for m in scene.machines]
        show_labels = document.session.view.labels
        updates: dict[int, list] = {}
        entries = []
        # (a model's edit moves thousands: its entries found in one pass over the session)
        operation = ({e.id: e for e in document.session.operations}.__getitem__
                     if len(op_ids) > 16 else document.operation)
        for op_id in op_ids:
            try:
                entry = operation(op_id)
            except KeyError:
                return None
            if entry.visible:
                entries.append(entry)
        # (operations with the same counts, as a model's layers, share one row of pairs)
        shared = results.shared_rows(entries, hw_ids)
        # id of a row → its usage, what its points show, the machine of its highest point,
        # the machines of its points, their x and y
        of_row: dict[int, tuple[frozenset, list, int | None, list, list, list]] = {}
        label_keys = {}
        wants_labels = bool(show_labels and scene.labels_allowed)
        marks, op_points, usage_of = self._points, self._op_points, self._usage
        keys: list[tuple[int, int]] = []
        xs: list[float] = []
        ys: list[float] = []
        for entry in entries:
            op_id = entry.id
            pairs = shared[op_id]
            known = of_row.get(id(pairs))
            if known is None:
                drawn = drawn_pairs(pairs, markers)
                usage = frozenset((p.hardware.id, roof_name(p.result.precision_used,
                                                            p.result.unit), p.result.level)
                                  for p in pairs if p.result is not None)
                known = of_row[id(pairs)] = (
                    self._usage_kept.setdefault(usage, usage), drawn,
                    next((d[0] for d in drawn if d[-1]), None),
                    [d[0] for d in drawn], [d[1] for d in drawn], [d[2] for d in drawn])
            usage, drawn, top, machines, row_xs, row_ys = known
            # (the point that carries its name, or its tag: the highest, see label_key)
            label_keys[op_id] = (op_id, top)
            # (usages are kept once each, as the same object: a model's thousand operations
            # of a few usages are told unchanged without comparing their sets)
            if usage_of.get(op_id) is not usage:
                before = set(self._usage_count)
                self._usage_count.subtract(usage_of.get(op_id, frozenset()))
                self._usage_count.update(usage)
                self._usage_count = +self._usage_count
                usage_of[op_id] = usage
                if set(self._usage_count) != before:
                    return None
            old_keys = op_points.get(op_id)
            # (the same points, on the same machines: else a rebuild)
            if not old_keys or [k[1] for k in old_keys] != machines:
                return None
            points = drawn_points(op_id, entry.operation.name, marks[old_keys[0]].color,
                                  wants_labels and bool(entry.label), drawn)
            updates[op_id] = points
            keys += old_keys
            xs += row_xs
            ys += row_ys
        if not updates:
            return ()
        if len(op_ids) == 1:
            self.set_live(op_ids[0])  # one operation: only its few points are set again
        self._label_keys.update(label_keys)
        for op_id, points in updates.items():
            marks.update(zip(op_points[op_id], points, strict=True))
        rows = self.rows_of(keys)
        xy = to_view(np.array([xs, ys], dtype=float)).T.reshape(-1, 2)
        self._xy[rows] = xy
        refill = {key[1] for key in keys if key[0] != self._live_op}
        self._fill_scatters([h for h in refill if h in self._scatter_for])
        if self._live_op in updates:
            self._fill_live()
        return keys, rows, xy, set(updates)

    def _style_of(self, point: PointMark) -> tuple[QBrush, QPen]:
        key = (point.color, point.overhead)
        style = self._styles_of.get(key)
        if style is None:
            style = self._styles_of[key] = self._styles.spot_style(point)
        return style

    def _fill_scatters(self, hw_ids) -> None:
        """Set the scatter items of the machines ``hw_ids`` to their points, but the live
        operation's (one pass over the points for them all: a whole model's thousands).

        Points that coincide exactly (the same operation in each layer of a model: the same
        place and style) are one spot, drawn where the last of them would be; pyqtgraph
        costs about 3.5 µs a spot on every ``setData`` and each spot is painted."""
        spots_of: dict[int, dict[tuple, list[tuple[int, int]]]] = {h: {} for h in hw_ids}
        live = self._live_op
        # (from the last point back: a spot takes the place of the last of its points, and
        # its keys are put in their order after)
        for key, point in reversed(self._points.items()):
            spots = spots_of.get(key[1])
            if spots is None or key[0] == live:
                continue
            spot = (point.x, point.y, point.color, point.bound == "overhead")
            same = spots.get(spot)
            if same is None:
                spots[spot] = [key]
            else:
                same.append(key)
        for hw_id, spots in spots_of.items():
            for same in spots.values():
                same.reverse()
            self._set_scatter(hw_id, dict(reversed(spots.items())))

    def _set_scatter(self, hw_id: int, spots: dict) -> None:
        """Set machine ``hw_id``'s scatter item to ``spots`` (place and style → the keys of
        the points drawn there)."""
        points = [self._points[keys[-1]] for keys in spots.values()]
        styles = [self._style_of(p) for p in points]
        self._scatter_keys[hw_id] = list(spots.values())
        self._scatter_for[hw_id].setData(
            x=to_view(np.asarray([p.x for p in points], float)),
            y=to_view(np.asarray([p.y for p in points], float)),
            symbol=self._machine_marker.get(hw_id, "o"), size=self._canvas.theme.point_size,
            brush=[s[0] for s in styles], pen=[s[1] for s in styles])

    def _fill_live(self) -> None:
        """Set the live item to the live operation's points (a few: cheap on every edit)."""
        keys = list(self._op_points.get(self._live_op, ())) if self._live_op is not None else []
        points = [self._points[k] for k in keys]
        styles = [self._style_of(p) for p in points]
        self._live_keys = keys
        self._live.setData(
            x=to_view(np.asarray([p.x for p in points], float)),
            y=to_view(np.asarray([p.y for p in points], float)),
            symbol=[self._machine_marker.get(p.hw_id, "o") for p in points],
            size=self._canvas.theme.point_size,
            brush=[s[0] for s in styles], pen=[s[1] for s in styles])

    def set_live(self, op_id: int | None) -> None:
        """Make ``op_id``'s points the live ones (their machines' items are set once)."""
        if op_id not in self._op_points:
            op_id = None
        if op_id == self._live_op:
            return
        touched = {k[1] for k in self._op_points.get(self._live_op, ())}
        touched |= {k[1] for k in self._op_points.get(op_id, ())}
        self._live_op = op_id
        self._fill_scatters([h for h in touched if h in self._scatter_for])
        self._fill_live()

    def sync_ring(self) -> None:
        """Ring the selected operation's points."""
        op_id = self._canvas.workspace.selection.current
        keys = self._op_points.get(op_id, []) if op_id is not None else []
        theme = self._canvas.theme
        xs = np.asarray([to_view(self._points[k].x) for k in keys], float)
        ys = np.asarray([to_view(self._points[k].y) for k in keys], float)
        self._ring_keys = list(keys)
        self._ring_style = (theme, self._ring)
        self._ring.setData(x=xs, y=ys, symbol="o", size=theme.point_size + theme.ring_extra,
                           brush=self._styles.no_brush(),
                           pen=self._styles.pen(theme.selection, 2.0))

    def dispose(self) -> None:
        """Forget every item (the chart's items are gone)."""
        self._scatter_pool.items = []
        self._scatter_pool.used = 0
        self._points, self._op_points, self._scatter_for = {}, {}, {}
        self._label_keys = {}
