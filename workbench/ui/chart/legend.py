"""The chart's legend: its rows synced to the scene, its place (a free corner of the plot,
else outside it, right or below) and its size there.

:class:`ChartLegend` owns the legend item and its state: the rows last set, the side of the
plot it was put outside (None: inside), whether the user dragged it, the corner the last
placing chose and the one to try first. A part of
:class:`~workbench.ui.chart.canvas.RooflineCanvas`; the text layout asks it for a place before it
places the texts (:mod:`workbench.ui.chart.labels`), the key of tags
(:mod:`workbench.ui.chart.tags`) gives it rows.
"""

from __future__ import annotations

import math
from dataclasses import replace

from workbench.model.chart.placement import Occupancy, free_corners
from workbench.model.chart.scene import Scene
from workbench.ui.chart.items import Legend
from workbench.ui.chart.theme import Theme, make_brush, make_font, make_pen, qcolor


class ChartLegend:
    """The legend of the chart (see the module)."""

    #: a legend below the plot takes at most this share of the chart's height (smaller
    #: type, down to :attr:`LEAST_LEGEND_PT`, before more)
    LEGEND_BELOW = 0.25
    LEAST_LEGEND_PT = 6.0
    #: … and never smaller than this share of the tick labels' size (a slide's key reads
    #: from the back of the room, as its axes do)
    LEAST_LEGEND_TO_TICKS = 0.55

    def __init__(self, canvas) -> None:
        self._canvas = canvas
        self._legend = Legend(offset=(12, 12))
        self._legend.on_dragged = self._dragged
        self._legend.keep_clear = self._axes_rects
        self._legend.setParentItem(canvas.view_box)
        self._legend_key: tuple = ()
        self._legend_outside: str | None = None
        #: the legend's width when its margin beside the plot was made
        self._outside_width = 0.0
        #: the user dragged the legend: it stays where it was put
        self.user_placed = False
        self._legend_choice: str | None = None
        #: the legend's place to try first (on screen, a placing that keeps the key keeps
        #: the legend where it is when that place is still free: one placing, not two)
        self.kept_choice: str | None = None

    @property
    def item(self) -> Legend:
        """The legend's chart item."""
        return self._legend

    @property
    def outside(self) -> str | None:
        """The side of the plot the legend is outside of (None: inside the plot)."""
        return self._legend_outside

    @property
    def choice(self) -> str | None:
        """Where the last placing put the legend: a corner's name, or ``"outside"``."""
        return self._legend_choice

    def texts(self) -> list[str]:
        """Entries of the legend, or ``[]`` when it is hidden."""
        if not self._legend.isVisible():
            return []
        return [text for text, _ in self._legend.rows]

    def set_visible(self, visible: bool) -> None:
        self._legend.setVisible(visible)

    def set_style(self, theme: Theme) -> None:
        self._legend.set_style(make_brush(theme.legend_background),
                               make_pen(theme.legend_border, 1.0), qcolor(theme.text),
                               make_font(theme, theme.legend_size))
        self._legend_key = ()

    def forget_session(self) -> None:
        """Another session: where the user dragged the legend, or that it was collapsed,
        belonged to the last one."""
        self.user_placed = False
        if self._legend.collapsed:
            self._legend.set_collapsed(False)
        self._legend_key = ()

    def clear(self) -> None:
        """No rows (the chart is disposed of)."""
        self._legend.set_rows([])

    def _axes_rects(self) -> list:
        """Where the chart's axes are drawn, with their numbers and titles (a dragged legend
        keeps off them)."""
        plot = self._canvas.plot_item
        if self._legend.parentItem() is self._canvas.view_box:
            return []  # (within the plot's area it cannot reach them)
        out = []
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            if axis.isVisible():
                out.append(axis.sceneBoundingRect())
                if axis.label.isVisible():
                    out.append(axis.label.sceneBoundingRect())
        return out

    def _dragged(self) -> None:
        self.user_placed = True
        self._canvas.labels.schedule()

    # -- rows -----------------------------------------------------------------------------

    def sync(self, scene: Scene, force: bool = False) -> None:
        """Set the rows to the scene's legend (and the key of tags), unless they are so."""
        canvas = self._canvas
        theme = canvas.theme
        key_tags = canvas.key.tags
        if key_tags and canvas.key_on_screen:  # names told by tags: the legend's key
            scene = replace(scene, legend=tuple(canvas.key.keyed_legend(scene.legend)))
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
                 or (e.kind == "operation" and e.id in key_tags)]
        spare = keyed[0] if keyed and keyed[-1] == len(parts) - 1 else None
        counts = [len(r.ids) for r in canvas.key.rows if not r.heading]
        self._legend.set_rows([(entry.text, self._legend_sample(entry))
                               for entry in scene.legend], breaks, spare,
                              counts if spare is not None and len(counts) == len(parts) - spare
                              else ())

    def _legend_sample(self, entry) -> tuple | None:
        """How a legend row's sample is drawn: ``(line_pen, symbol, size, pen, brush)``."""
        styles = self._canvas.styles
        theme = self._canvas.theme
        size = theme.point_size * 0.9
        if entry.kind == "machine":
            color = theme.roof_color(entry.style_index or 0)
            return (styles.pen(color, theme.roof_width), entry.marker, size,
                    styles.pen(theme.background, 1.0), styles.brush(color))
        if entry.kind == "roof":  # a roof named in the key: its line
            color = theme.roof_color(entry.style_index or 0)
            return (styles.pen(color, theme.minor_roof_width), None, size, None, None)
        if entry.kind == "operation":
            color = theme.point_color(entry.color or "#000000")
            return (None, "o", size, styles.pen(theme.point_outline, 0.9), styles.brush(color))
        if entry.kind == "measured" and entry.color:  # (without: how many are drawn)
            return (None, "x", size * 1.15, styles.pen(theme.point_outline, 0.6),
                    styles.brush(entry.color or theme.text))
        if entry.marker:
            return (None, entry.marker, size, styles.pen(theme.text, 2.0),
                    styles.brush(theme.background))
        return None

    # -- its place ------------------------------------------------------------------------

    def place(self, occ: Occupancy, choice: str | None = None) -> bool:
        """Put the legend in the first corner of the plot where it covers nothing, else
        outside the plot (right of it on a wide chart, below it on a tall one); reserve its
        place. ``choice`` asks for one corner, or ``"outside"``; False when that corner is
        not free. A legend the user dragged stays where it was put."""
        legend = self._legend
        if not legend.isVisible():
            self.set_outside(None)
            return True
        w, h = legend.width(), legend.height()
        if self.user_placed:
            r = legend.sceneBoundingRect()
            occ.add_rect((r.left() - 2, r.top() - 2, r.right() + 2, r.bottom() + 2))
            return True
        if self._legend_outside is None and choice != "outside":
            corners = free_corners(occ, w, h, margin=10.0)
            if choice is not None:
                corners = [c for c in corners if c[0] == choice]
                if not corners:
                    return False
            if corners:
                name, rect = corners[0]
                self._legend_choice = name
                legend.attach_corner(self._canvas.view_box, name, 10.0)
                occ.add_rect((rect[0] - 3, rect[1] - 3, rect[2] + 3, rect[3] + 3))
                return True
        self._legend_choice = "outside"
        if self._legend_outside is None:
            self.set_outside(self._canvas.outside_side())
        else:
            legend.attach_outside(self._canvas.plot_item, self._canvas.view_box,
                                  self._legend_outside)
        return True

    def least_zoom(self) -> float:
        """The legend's least zoom: its type at least :attr:`LEAST_LEGEND_PT` on the page
        (a figure's page has ``0.75 × figure_type_scale`` points to the pixel) and at least
        :attr:`LEAST_LEGEND_TO_TICKS` of the tick labels (the same share on screen and page)."""
        per_pixel = 0.75 * float(getattr(self._canvas, "figure_type_scale", 1.0) or 1.0)
        ticks = self._canvas.theme.tick_size / 0.75  # pixels
        pixels = math.ceil(max(self.LEAST_LEGEND_PT / per_pixel,
                               self.LEAST_LEGEND_TO_TICKS * ticks) - 1e-6)
        return min(1.0, pixels / max(self._legend.base_pixels(), 1e-9))

    def natural_side(self) -> str:
        """Right of a wide chart when the legend takes little of the width, else below."""
        canvas = self._canvas
        w = self._legend.width()
        return ("right" if canvas.width() > 1.25 * canvas.height() and w < 0.28 * canvas.width()
                else "bottom")

    def searches(self, texts: int) -> bool:
        """Whether names left out of a placing of ``texts`` texts send the legend to its other
        places (a figure's, of a few texts: see :meth:`LabelLayer.place_all`)."""
        return (self._canvas.search_legend_places and self._legend.isVisible()
                and not self.user_placed and texts <= 60)

    def set_outside(self, side: str | None) -> None:
        """Make room for the legend right of or below the plot (``None``: no room)."""
        canvas = self._canvas
        if side == "right" and self._legend.height() > 0.8 * canvas.height():
            side = "bottom"  # taller than the chart (a long key): below it, flowing
        # (beside the plot, a legend that grew since (a longer key) needs a wider margin)
        if side == self._legend_outside and (side != "right"
                                             or self._legend.width() <= self._outside_width):
            return
        self._legend_outside = side
        # the legend leaves the place it was painted at, which Qt does not always repaint
        canvas.plot_widget.viewport().update()
        left, top, right, bottom = canvas.base_margins
        legend = self._legend
        legend.max_height = None
        legend.set_zoom(1.0)
        legend.set_columns(1)
        legend.set_flow(None)
        if side == "bottom":
            room = canvas.width() - 12.0
            # below the plot, rows side by side as the width allows: the plot keeps its
            # height (a legend of five rows below a single-column figure took a third)
            rows = len(legend.shown_rows())
            for columns in (3, 2):
                if rows >= 2 * columns - 1 and legend.width_in(columns) <= room:
                    legend.set_columns(columns)
                    break
            tall = legend.height() > self.LEGEND_BELOW * canvas.height() and rows > 3
            if not canvas.search_legend_places and not canvas.key.rows and not tall:
                # on screen: columns, set smaller to fit (a key, or rows that would take
                # more than their share of the chart's height, flow, as in figures)
                if legend.width() > room > 0:
                    legend.set_zoom(room / legend.width())
            elif tall or legend.width() > room > 0:
                # a long key, or one wider than the figure: its rows side by side, as many
                # to a line as fit (a longer one wraps)
                legend.set_columns(1)
                legend.set_flow(room)
            for _ in range(3 if legend.flow is not None else 0):  # (re-flowed at each size)
                if legend.height() <= self.LEGEND_BELOW * canvas.height():
                    break
                # smaller still, to leave the plot its room, but never below a readable size
                least = self.least_zoom()
                zoom = max(legend.zoom * self.LEGEND_BELOW * canvas.height() / legend.height(),
                           least)
                if zoom >= legend.zoom:
                    break
                legend.set_zoom(zoom)
                if legend.flow is not None:
                    legend.set_flow(room)
            if legend.flow is not None:
                # a key too long for the figure even so: as many rows as fit, one line
                # counts the rest (their points keep no tag; the tables list every one)
                legend.set_max_height(canvas.figure_key_share * canvas.height())
        if side == "right":
            right += legend.width() + 12
            self._outside_width = legend.width()
        elif side == "bottom":
            bottom += legend.height() + 10
        plot = canvas.plot_item
        plot.setContentsMargins(left, top, right, bottom)
        canvas.titles.apply()  # (over the plot's column: as wide as the margins leave it)
        canvas.refit_plot()
        plot.layout.activate()
        if side is not None:
            legend.attach_outside(plot, canvas.view_box, side)
