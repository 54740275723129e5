"""The canvas's items synced to a :class:`~workbench.model.scene.Scene`: theme, title,
regions, roofs, ridges, the operations' points (one scatter item per machine, and a small
live item for the selected operation's points) and the legend.

Mixed into :class:`~workbench.ui.canvas.RooflineCanvas`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QBrush, QFontMetricsF, QPen

from workbench.model.hardware import roof_name
from workbench.model.layout import wrap_title
from workbench.model.scene import PointMark, Roof, Scene, short_axis_title
from workbench.ui.axes import to_view
from workbench.ui.chart_items import Label
from workbench.ui.theme import Theme, make_brush, make_font, make_pen, qcolor

#: An axis title is never set smaller than this (points on the page).
AXIS_TITLE_MIN_PT = 7.0


class SyncMixin:
    """Syncing the chart's items to the scene (items are pooled and reused)."""


    def _brush(self, color: str) -> QBrush:
        brush = self._brushes.get(color)
        if brush is None:
            brush = self._brushes[color] = make_brush(color)
        return brush

    def _pen(self, color: str, width: float, line: str = "solid") -> QPen:
        key = (color, width, line)
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = make_pen(color, width, line)
        return pen

    def _spot_style(self, point: PointMark) -> tuple[QBrush, QPen]:
        theme = self.theme
        color = theme.point_color(point.color)
        if point.overhead:  # hollow: overhead-bound (see-through: a point beneath stays visible)
            return self._brush("#00000000"), self._pen(color, 2.2)
        return self._brush(color), self._pen(theme.point_outline, 0.9)

    def _apply_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._brushes.clear()
        self._pens.clear()
        self.plot_widget.setBackground(qcolor(theme.background))
        tick_font = make_font(theme, theme.tick_size)
        for axis in (self._x_axis, self._y_axis):
            axis.setPen(self._pen(theme.foreground, 1.0))
            axis.setTextPen(self._pen(theme.foreground, 1.0))
            axis.setTickFont(tick_font)
            axis.setStyle(tickTextOffset=6, tickLength=-6)
        self._plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        self._legend.set_style(make_brush(theme.legend_background),
                               make_pen(theme.legend_border, 1.0), qcolor(theme.text),
                               make_font(theme, theme.legend_size))
        self._legend_key = ()
        fonts = {
            "point": make_font(theme, theme.label_size),
            "roof": make_font(theme, theme.annotation_size),
            "ridge": make_font(theme, theme.annotation_size, bold=True),
            "region": make_font(theme, theme.annotation_size + 1, bold=True),
            "sweep": make_font(theme, theme.annotation_size),
            "crossing": make_font(theme, theme.annotation_size, bold=True),
            "measured": make_font(theme, theme.annotation_size),
            "pair": make_font(theme, theme.annotation_size, bold=True),
        }
        for kind, pool in self._text_pools.items():
            for item in pool.items:
                self._style_label(item, kind, fonts[kind])
        self._fonts = fonts

    def _style_label(self, item: Label, kind: str, font) -> None:
        theme = self.theme
        item.setFont(font)
        if kind in ("point", "ridge"):
            item.setColor(qcolor(theme.text))
        elif kind == "region":
            item.setColor(qcolor(theme.region_text))
        # roof, sweep and crossing labels take their line's colour when placed

    def _take_label(self, kind: str) -> Label:
        pool = self._text_pools[kind]
        fresh = pool.used == len(pool.items)
        item = pool.take()
        if fresh:
            self._style_label(item, kind, self._fonts[kind])
        return item

    def title_lines(self) -> tuple[list[str], float]:
        """The title as set: its lines (one, or two when it is wider than the chart) and
        its size in points (smaller than the theme's when even two lines are too wide)."""
        return self._title_set

    _title_set: tuple[list[str], float] = ([], 0.0)

    def _refit_plot(self) -> None:
        """Lay the plot out again within the view (its least size may have changed: a title
        on two lines, a legend beside the plot); the view only does so when resized."""
        view = self.plot_widget
        pg.GraphicsView.setRange(view, view.range, padding=0, disableAutoPixel=False)
        self._plot.layout.activate()

    def _apply_title(self) -> None:
        """Set the title over the plot: on one line, else on two, then smaller until the
        wider line fits the chart's width, but not below a readable size: on up to four
        lines instead (never cut short)."""
        from html import escape

        theme = self.theme
        title = self.workspace.document.session.title
        if title:
            font = make_font(theme, theme.title_size)
            metrics = QFontMetricsF(font)
            # the title sits over the plot's column: the width less the y axis and margins
            left, _top, right, _bottom = self._plot.getContentsMargins()
            # the y axis's width from its fonts (its geometry lags a layout pass behind)
            axis = (QFontMetricsF(make_font(theme, theme.tick_size)).horizontalAdvance(
                "100 TFLOP/s") + QFontMetricsF(make_font(theme, theme.axis_title_size)).height()
                + 24.0)
            room = max(40.0, self.width() - axis - left - right - 12.0)
            lines = wrap_title(metrics.horizontalAdvance, title, room)
            widest = max(metrics.horizontalAdvance(line) for line in lines)
            size = float(theme.title_size)
            if widest > room:
                size = max(4.0, size * room / widest * 0.97)
                least = min(float(theme.title_size), self._axis_title_min())
                if size < least:  # not smaller than readable: on more lines instead
                    size = least
                    metrics = QFontMetricsF(make_font(theme, size))
                    lines = wrap_title(metrics.horizontalAdvance, title, room / 0.97, lines=4)
                    widest = max(metrics.horizontalAdvance(line) for line in lines)
                    if widest > room:  # a word longer than the chart is wide: never cut
                        size = max(4.0, size * room / widest * 0.97)
            key = (tuple(lines), size, theme.foreground)
            if key != getattr(self, "_title_key", None):
                self._title_key = key
                self._title_set = (lines, size)
                self._plot.setTitle("<br>".join(escape(line, quote=False) for line in lines),
                                    color=theme.foreground, size=f"{size:.2f}pt")
                # pyqtgraph gives the title row one line (30 px): give it what it takes
                label = self._plot.titleLabel
                height = max(30.0, label.item.boundingRect().height() + 2.0)
                label.setMaximumHeight(height)
                label.setMinimumWidth(0)  # it is fitted to the room: it never widens the plot
                self._plot.layout.setRowFixedHeight(0, height)
                self._refit_plot()
        else:
            self._title_key = None
            self._title_set = ([], 0.0)
            self._plot.setTitle(None)
        self._set_axis_titles(self._axis_rooms)

    #: the axis titles as set, per side: (wording, size in points, colour)
    _axis_titles_set: dict | None = None
    #: the axes' lengths the titles were last fitted to (side → pixels)
    _axis_rooms: dict = {}
    #: (font family, size, full title) → widths of the full and the short wording
    _axis_title_widths: dict = {}
    #: how much larger than on screen the chart is drawn (a figure's type scale): an axis
    #: title is never set below :data:`AXIS_TITLE_MIN_PT` at that scale
    figure_type_scale = 1.0

    def _axis_title_choice(self, side: str, room: float | None) -> tuple[str, float]:
        """The wording and size of one axis title for an axis ``room`` pixels long: the
        full title at the theme's size where it fits, else the shorter wording
        (:func:`~workbench.model.scene.short_axis_title`), set smaller only as far as it
        must and never below the least readable size (:meth:`_axis_title_min`)."""
        theme = self.theme
        scene = self._scene
        full = scene.x_title if side == "bottom" else scene.y_title
        size = float(theme.axis_title_size)
        if room is None:
            return full, size
        short = short_axis_title(full)
        # the label item's document adds a margin each side
        key = (theme.font_family, size, full)
        need = self._axis_title_widths.get(key)
        if need is None:
            metrics = QFontMetricsF(make_font(theme, size))
            need = self._axis_title_widths[key] = [
                metrics.horizontalAdvance(text) + 10.0 for text in (full, short)]
        if need[0] <= room:
            return full, size
        if need[1] <= room:
            return short, size
        least = min(size, self._axis_title_min())
        return short, max(least, size * room / need[1] * 0.97)

    def _axis_title_min(self) -> float:
        """The least size of an axis title (points on screen): 0.8 × the tick labels' and
        :data:`AXIS_TITLE_MIN_PT` on the page, whichever is larger."""
        least = max(0.8 * self.theme.tick_size, AXIS_TITLE_MIN_PT / self.figure_type_scale)
        # text is set in whole pixels: round up, never down below the least size
        return math.ceil(least * 96.0 / 72.0 - 1e-6) * 72.0 / 96.0

    def _set_axis_titles(self, rooms: dict | None = None) -> bool:
        """Set both axis titles for the axes' lengths ``rooms`` (the full wording at the
        theme's size without them); True when either changed."""
        theme = self.theme
        scene = self._scene
        if scene is None:
            return False
        rooms = rooms or {}
        current = self._axis_titles_set or {}
        changed = False
        new = {}
        for side in ("bottom", "left"):
            text, size = self._axis_title_choice(side, rooms.get(side))
            key = (text, round(size, 2), theme.foreground)
            new[side] = key
            if current.get(side) != key:
                self._plot.setLabel(side, text, color=theme.foreground,
                                    **{"font-size": f"{size:.2f}pt"})
                # the axis places its title when resized: centre the new one now
                self._plot.getAxis(side).resizeEvent(None)
                changed = True
        self._axis_titles_set = new
        return changed

    def axis_titles(self) -> dict[str, tuple[str, float]]:
        """The axis titles as set: side → (wording, size in points)."""
        return {side: key[:2] for side, key in (self._axis_titles_set or {}).items()}

    def _fit_axis_titles(self) -> bool:
        """Fit each axis title to the room the plot leaves it (see
        :meth:`_axis_title_choice`): the full wording where it fits, never cut by the page
        nor set unreadably small. True when a title changed (the plot is laid out again)."""
        left, top, right, bottom = self._plot.getContentsMargins()
        title = self._plot.titleLabel
        title_h = title.maximumHeight() if title.isVisible() else 0.0
        # the room the plot leaves each title (not the plot's own size: a title longer than
        # the room would widen the plot beyond the figure)
        across = self.width() - self._y_axis.geometry().width() - left - right - 8
        # the y title is centred on the plot's height: no longer than that
        down = min(self._y_axis.geometry().height(),
                   self.height() - title_h - self._x_axis.geometry().height() - top - bottom - 8)
        rooms = {side: length for side, length in (("bottom", across), ("left", down))
                 if length > 0}
        self._axis_rooms = rooms
        changed = self._set_axis_titles(rooms)
        if changed:
            self._refit_plot()
        return changed

    def _set_limits(self, scene: Scene) -> None:
        lo, hi = to_view(np.asarray(scene.extent))
        ylo, yhi = to_view(np.asarray(scene.y_range))
        self._vb.setLimits(xMin=float(lo), xMax=float(hi), yMin=float(ylo) - 6,
                           yMax=float(yhi) + 6, minXRange=0.05, minYRange=0.05,
                           maxXRange=float(hi - lo), maxYRange=float(yhi - ylo) + 12)

    def _sync_regions(self, scene: Scene) -> None:
        theme = self.theme
        pool = self._region_pool
        texts = self._text_pools["region"]
        pool.reset()
        texts.reset()
        self._region_items = []
        for region in scene.regions:
            curve = pool.take()
            color = theme.region_memory if region.kind == "memory" else theme.region_compute
            curve.setData(x=to_view(np.asarray(region.xs)), y=to_view(np.asarray(region.ys)),
                          pen=None, fillLevel=float(to_view(region.floor)),
                          brush=make_brush(color))
            label = self._take_label("region")
            label.setText(region.label)
            self._region_items.append((region, curve, label))
        pool.finish()
        texts.finish()

    def _sync_roofs(self, scene: Scene) -> None:
        theme = self.theme
        pool = self._roof_pool
        texts = self._text_pools["roof"]
        pool.reset()
        texts.reset()
        self._roofs = []
        self._roof_labels = []
        self._roof_rows = frozenset()  # the key names no roof until one finds no place
        for roof in scene.roofs:
            curve = pool.take()
            color = theme.roof_color(roof.style_index)
            width = self._roof_width(roof)
            if roof.emphasis != "main" and not roof.derated and roof.kind != "interconnect":
                color = _fade(color, 0.7)
            curve.setData(x=to_view(np.asarray(roof.xs)), y=to_view(np.asarray(roof.ys)),
                          pen=self._pen(color, width, roof.line))
            curve.setZValue(-3 if roof.derated else (-1 if roof.emphasis == "main" else -2))
            self._roofs.append((roof, curve))
            if roof.label:
                label = self._take_label("roof")
                label.setText(roof.label)
                label.setColor(qcolor(color))
                self._roof_labels.append((roof, label))
        pool.finish()
        texts.finish()

    def _roof_width(self, roof: Roof) -> float:
        theme = self.theme
        return theme.roof_width if roof.emphasis == "main" else theme.minor_roof_width

    def _sync_ridges(self, scene: Scene) -> None:
        theme = self.theme
        texts = self._text_pools["ridge"]
        texts.reset()
        self._ridge_items = []
        floor = float(to_view(scene.y_range[0])) - 8
        xs, ys = [], []
        brushes = []
        for ridge in scene.ridges:
            lx, ly = float(to_view(ridge.x)), float(to_view(ridge.y))
            xs += [lx, lx]
            ys += [floor, ly]
            brushes.append(self._brush(theme.roof_color(ridge.style_index)))
            label = self._take_label("ridge")
            label.setText(ridge.label)
            label.setPos(lx, ly)
            self._ridge_items.append((ridge, label))
        texts.finish()
        self._ridge_lines.setData(x=np.asarray(xs, float), y=np.asarray(ys, float),
                                  pen=self._pen(theme.muted, 1.0, "dotted"))
        marks_x = np.asarray(xs[0::2], float)
        marks_y = np.asarray(ys[1::2], float)
        self._ridge_marks.setData(x=marks_x, y=marks_y, symbol="d", size=theme.ridge_size,
                                  brush=brushes, pen=self._pen(theme.background, 1.2))

    def _sync_points(self, scene: Scene) -> None:
        self._key_tags, self._key_rows = {}, []  # each point carries its own name again
        self._joined, self._key_made = frozenset(), False
        self._points = {}
        self._op_points = {}
        for point in scene.points:
            key = (point.op_id, point.hw_id)
            self._points[key] = point
            self._op_points.setdefault(point.op_id, []).append(key)
        self._machine_marker = {m.hw_id: m.marker for m in scene.machines}
        current = self.workspace.selection.current
        self._live_op = current if current in self._op_points else None
        self._styles_of: dict[tuple[str, bool], tuple[QBrush, QPen]] = {}
        self._scatter_for = {}
        pool = self._scatter_pool
        pool.reset()
        for machine in scene.machines:
            self._scatter_for[machine.hw_id] = pool.take()
        for scatter in pool.items[pool.used:]:
            scatter.setData(x=np.zeros(0), y=np.zeros(0))
        pool.finish()
        self._scatter_keys = {}
        for hw_id in self._scatter_for:
            self._fill_scatter(hw_id)
        self._fill_live()

        self._hover_keys = list(self._points)
        self._hover_row = {key: i for i, key in enumerate(self._hover_keys)}
        self._hover_xy = to_view(np.array(
            [(p.x, p.y) for p in self._points.values()], float).reshape(-1, 2))
        self._hover_key = None
        self._hover_text = ""

        self._usage = {}
        for point in scene.points:
            r = point.result
            self._usage.setdefault(point.op_id, set()).add(
                (point.hw_id, roof_name(r.precision_used, r.unit), r.level))
        self._usage = {k: frozenset(v) for k, v in self._usage.items()}
        self._usage_count = Counter()
        for usage in self._usage.values():
            self._usage_count.update(usage)

        labels = self._text_pools["point"]
        labels.reset()
        self._labels = {}
        for point in scene.points:
            if point.show_label:
                item = self._take_label("point")
                item.setText(point.label)
                self._labels[point.op_id] = item
        labels.finish()

    def _style_of(self, point: PointMark) -> tuple[QBrush, QPen]:
        key = (point.color, point.overhead)
        style = self._styles_of.get(key)
        if style is None:
            style = self._styles_of[key] = self._spot_style(point)
        return style

    def _fill_scatter(self, hw_id: int) -> None:
        """Set machine ``hw_id``'s scatter item to its points, but the live operation's.

        Points that coincide exactly (the same operation in each layer of a model: the same
        place and style) are one spot, drawn where the last of them would be; pyqtgraph
        costs about 3.5 µs a spot on every ``setData`` and each spot is painted."""
        spots: dict[tuple, list[tuple[int, int]]] = {}
        for key, point in self._points.items():
            if key[1] != hw_id or key[0] == self._live_op:
                continue
            spot = (point.x, point.y, point.color, point.bound == "overhead")
            same = spots.pop(spot, None)  # re-inserted: the spot keeps its last place
            if same is None:
                same = []
            same.append(key)
            spots[spot] = same
        points = [self._points[keys[-1]] for keys in spots.values()]
        styles = [self._style_of(p) for p in points]
        self._scatter_keys[hw_id] = list(spots.values())
        self._scatter_for[hw_id].setData(
            x=to_view(np.asarray([p.x for p in points], float)),
            y=to_view(np.asarray([p.y for p in points], float)),
            symbol=self._machine_marker.get(hw_id, "o"), size=self.theme.point_size,
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
            size=self.theme.point_size,
            brush=[s[0] for s in styles], pen=[s[1] for s in styles])

    def _set_live(self, op_id: int | None) -> None:
        """Make ``op_id``'s points the live ones (their machines' items are set once)."""
        if op_id not in self._op_points:
            op_id = None
        if op_id == self._live_op:
            return
        touched = {k[1] for k in self._op_points.get(self._live_op, ())}
        touched |= {k[1] for k in self._op_points.get(op_id, ())}
        self._live_op = op_id
        for hw_id in touched:
            if hw_id in self._scatter_for:
                self._fill_scatter(hw_id)
        self._fill_live()

    def _sync_ring(self) -> None:
        op_id = self.workspace.selection.current
        keys = self._op_points.get(op_id, []) if op_id is not None else []
        theme = self.theme
        xs = np.asarray([to_view(self._points[k].x) for k in keys], float)
        ys = np.asarray([to_view(self._points[k].y) for k in keys], float)
        self._ring_keys = list(keys)
        self._ring_style = (theme, self._ring)
        self._ring.setData(x=xs, y=ys, symbol="o", size=theme.point_size + theme.ring_extra,
                           brush=None, pen=self._pen(theme.selection, 2.0))

    def _sync_legend(self, scene: Scene, force: bool = False) -> None:
        theme = self.theme
        if self._key_tags and self.key_on_screen:  # names told by tags: the legend's key
            scene = replace(scene, legend=tuple(self._keyed_legend(scene.legend)))
        key = (scene.legend, theme.name)
        if key == self._legend_key and not force:
            return
        self._legend_key = key
        # flowing side by side (a long key below a small figure): the machines and the
        # notes, then the key from a new line
        parts = ["key" if e.kind in ("operation", "key", "heading", "roof") else "machine"
                 for e in scene.legend]
        breaks = {i for i in range(1, len(parts)) if parts[i] != parts[i - 1]}
        keyed = [i for i, e in enumerate(scene.legend) if e.kind == "key"
                 or (e.kind == "operation" and e.id in self._key_tags)]
        spare = keyed[0] if keyed and keyed[-1] == len(parts) - 1 else None
        counts = [len(r.ids) for r in self._key_rows if not r.heading]
        self._legend.set_rows([(entry.text, self._legend_sample(entry))
                               for entry in scene.legend], breaks, spare,
                              counts if spare is not None and len(counts) == len(parts) - spare
                              else ())

    def _legend_sample(self, entry) -> tuple | None:
        """How a legend row's sample is drawn: ``(line_pen, symbol, size, pen, brush)``."""
        theme = self.theme
        size = theme.point_size * 0.9
        if entry.kind == "machine":
            color = theme.roof_color(entry.style_index or 0)
            return (self._pen(color, theme.roof_width), entry.marker, size,
                    self._pen(theme.background, 1.0), self._brush(color))
        if entry.kind == "roof":  # a roof named in the key: its line
            color = theme.roof_color(entry.style_index or 0)
            return (self._pen(color, theme.minor_roof_width), None, size, None, None)
        if entry.kind == "operation":
            color = theme.point_color(entry.color or "#000000")
            return (None, "o", size, self._pen(theme.point_outline, 0.9), self._brush(color))
        if entry.kind == "measured" and entry.color:  # (without: how many are drawn)
            return (None, "x", size * 1.15, self._pen(theme.point_outline, 0.6),
                    self._brush(entry.color or theme.text))
        if entry.marker:
            return (None, entry.marker, size, self._pen(theme.text, 2.0),
                    self._brush(theme.background))
        return None


def _fade(color: str, amount: float) -> str:
    """``color`` mixed towards mid-grey by ``1 - amount`` (lighter lines for minor roofs)."""
    c = qcolor(color)
    grey = 150
    r = int(c.red() * amount + grey * (1 - amount))
    g = int(c.green() * amount + grey * (1 - amount))
    b = int(c.blue() * amount + grey * (1 - amount))
    return f"#{r:02X}{g:02X}{b:02X}"
