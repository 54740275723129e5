"""The chart's paint box: the theme in use, the pens and brushes made for it (cached: a
repaint of a thousand points reuses a handful of objects), the fonts of each kind of text and
the pools of text items by kind.

:class:`ChartStyles` owns these; every other part of the
:class:`~workbench.ui.chart.canvas.RooflineCanvas` takes its pens, brushes and text items here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QPen

from workbench.model.chart.scene import PointMark
from workbench.ui.chart.items import Label, Pool
from workbench.ui.chart.theme import Theme, get_theme, make_brush, make_font, make_pen, qcolor

#: the kinds of text on the chart and the stacking order of their items
TEXT_KINDS = (("region", -15), ("roof", 3), ("ridge", 4), ("point", 20), ("pair", 17),
              ("sweep", 19), ("crossing", 21), ("measured", 22))


def at_z(item, z: float):
    """``item`` with its stacking order set to ``z``."""
    item.setZValue(z)
    return item


class ChartStyles:
    """The theme, pens, brushes, fonts and text pools of one chart (see the module)."""

    def __init__(self, add) -> None:
        """``add`` puts a new item into the chart's view."""
        self._theme: Theme | None = None
        self._brushes: dict[str, QBrush] = {}
        self._no_brush = QBrush(Qt.BrushStyle.NoBrush)
        self._pens: dict[tuple, QPen] = {}
        self._fonts: dict = {}
        self._text_pools = {kind: Pool(lambda z=z: at_z(Label(), z), add)
                            for kind, z in TEXT_KINDS}

    @property
    def theme_set(self) -> Theme | None:
        """The theme last set (None before the first)."""
        return self._theme

    @property
    def theme(self) -> Theme:
        """The theme in use (light before one is set)."""
        return self._theme or get_theme("light")

    def set_theme(self, theme: Theme) -> None:
        """Use ``theme``: pens and brushes are made anew (:meth:`restyle_texts` restyles the
        pooled texts)."""
        self._theme = theme
        self._brushes.clear()
        self._pens.clear()

    def restyle_texts(self) -> None:
        """Give every pooled text item its kind's font and colour for the current theme."""
        theme = self.theme
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

    def no_brush(self) -> QBrush:
        """An empty brush, the same object every time: pyqtgraph's symbol atlas keys a
        spot's look by its brush object, so a new empty brush for each update (what
        ``brush=None`` makes) draws and keeps one more symbol image every time."""
        return self._no_brush

    def brush(self, color: str) -> QBrush:
        brush = self._brushes.get(color)
        if brush is None:
            brush = self._brushes[color] = make_brush(color)
        return brush

    def pen(self, color: str, width: float, line: str = "solid") -> QPen:
        key = (color, width, line)
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = make_pen(color, width, line)
        return pen

    def band_pen(self, color: str, width: float) -> QPen:
        """A pen with flat ends (a measured point's verdict band)."""
        key = (color, width, "band")
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = make_pen(color, width)
            pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        return pen

    def spot_style(self, point: PointMark) -> tuple[QBrush, QPen]:
        """The brush and pen of an operation's marker."""
        theme = self.theme
        color = theme.point_color(point.color)
        if point.overhead:  # hollow: overhead-bound (see-through: a point beneath stays visible)
            return self.brush("#00000000"), self.pen(color, 2.2)
        return self.brush(color), self.pen(theme.point_outline, 0.9)

    def _style_label(self, item: Label, kind: str, font) -> None:
        theme = self.theme
        item.setFont(font)
        if kind in ("point", "ridge"):
            item.setColor(qcolor(theme.text))
        elif kind == "region":
            item.setColor(qcolor(theme.region_text))
        # roof, sweep and crossing labels take their line's colour when placed

    def texts(self, kind: str) -> Pool:
        """The pool of text items of one kind (reset, take, finish)."""
        return self._text_pools[kind]

    def take_label(self, kind: str) -> Label:
        """A shown text item of ``kind`` from its pool, styled when it is new."""
        pool = self._text_pools[kind]
        fresh = pool.used == len(pool.items)
        item = pool.take()
        if fresh:
            self._style_label(item, kind, self._fonts[kind])
        return item

    def dispose(self) -> None:
        """Forget every pooled text item (the chart's items are gone)."""
        for pool in self._text_pools.values():
            pool.items = []
            pool.used = 0
