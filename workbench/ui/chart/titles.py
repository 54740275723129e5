"""The chart's title and axis titles, fitted to the room the chart leaves them.

:class:`ChartTitles` owns what was set (the title's lines and size, each axis title's
wording and size) and the axes' lengths they were fitted to. A part of
:class:`~workbench.ui.chart.canvas.RooflineCanvas`: the title is set again when the chart's width
changes, the axis titles at each placing of the texts.
"""

from __future__ import annotations

import math
from typing import ClassVar

from PySide6.QtGui import QFontMetricsF

from workbench.model.chart.placement import wrap_title
from workbench.model.chart.scene import short_axis_title
from workbench.ui.chart.theme import make_font
from workbench.ui.widgets import escape_html

#: An axis title is never set smaller than this (points on the page).
AXIS_TITLE_MIN_PT = 7.0


class ChartTitles:
    """The title over the plot and the axis titles (see the module)."""

    #: (font family, size, full title) → widths of the full and the short wording and of
    #: the unit alone
    _axis_title_widths: ClassVar[dict] = {}

    def __init__(self, canvas) -> None:
        self._canvas = canvas
        self._title_key = None
        self._title_set: tuple[list[str], float] = ([], 0.0)
        #: the axis titles as set, per side: (wording, size in points, colour)
        self._axis_titles_set: dict | None = None
        #: the axes' lengths the titles were last fitted to, and the longest title each keeps
        #: within the page (side → (pixels, pixels))
        self._axis_rooms: dict = {}

    def title_lines(self) -> tuple[list[str], float]:
        """The title as set: its lines (one, or two when it is wider than the chart) and
        its size in points (smaller than the theme's when even two lines are too wide)."""
        return self._title_set

    def forget_rooms(self) -> None:
        """The axis titles fitted to no room yet (a figure's canvas starting over)."""
        self._axis_rooms = {}

    def apply(self) -> None:
        """Set the title over the plot: on one line, else on two, then smaller until the
        wider line fits the chart's width, but not below a readable size: on up to four
        lines instead (never cut short)."""
        canvas = self._canvas
        plot = canvas.plot_item
        theme = canvas.theme
        title = canvas.workspace.document.session.title
        if title:
            font = make_font(theme, theme.title_size)
            metrics = QFontMetricsF(font)
            # the title sits over the plot's column: the width less the y axis and margins
            left, _top, right, _bottom = plot.getContentsMargins()
            # the y axis's width from its fonts (its geometry lags a layout pass behind)
            axis = (QFontMetricsF(make_font(theme, theme.tick_size)).horizontalAdvance(
                "100 TFLOP/s") + QFontMetricsF(make_font(theme, theme.axis_title_size)).height()
                + 24.0)
            room = max(40.0, canvas.width() - axis - left - right - 12.0)
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
            if key != self._title_key:
                self._title_key = key
                self._title_set = (lines, size)
                plot.setTitle("<br>".join(escape_html(line) for line in lines),
                              color=theme.foreground, size=f"{size:.2f}pt")
                # pyqtgraph gives the title row one line (30 px): give it what it takes
                label = plot.titleLabel
                height = max(30.0, label.item.boundingRect().height() + 2.0)
                label.setMaximumHeight(height)
                label.setMinimumWidth(0)  # it is fitted to the room: it never widens the plot
                plot.layout.setRowFixedHeight(0, height)
                canvas.refit_plot()
        else:
            self._title_key = None
            self._title_set = ([], 0.0)
            plot.setTitle(None)
            # hidden, the label kept the last session's title, and with it that title's width
            # as its least (pyqtgraph sets it from the text at every resize): the plot could
            # not be narrower, and ran past the window's (or a figure's page's) right edge
            plot.titleLabel.setText("")
            plot.titleLabel.setMinimumWidth(0)
        self._set_axis_titles(self._axis_rooms)

    def _axis_title_choice(self, side: str, rooms: tuple[float, float] | None
                           ) -> tuple[str, float]:
        """The wording and size of one axis title for ``rooms``, ``(room, page)``: an axis
        ``room`` pixels long, on which a title centred stays within the page if at most
        ``page`` long. The full title at the theme's size where it fits, else the shorter
        wording (:func:`~workbench.model.chart.scene.short_axis_title`), set smaller only as
        far as it must and never below the least readable size (:meth:`_axis_title_min`);
        where even that would run off the page (a plot a few lines high on a small page),
        its unit alone ("FLOP/s")."""
        theme = self._canvas.theme
        scene = self._canvas.scene_model
        full = scene.x_title if side == "bottom" else scene.y_title
        size = float(theme.axis_title_size)
        if rooms is None:
            return full, size
        room, page = rooms
        short = short_axis_title(full)
        unit = short.partition(" [")[2].removesuffix("]") or short
        # the label item's document adds a margin each side
        key = (theme.font_family, size, full)
        need = self._axis_title_widths.get(key)
        if need is None:
            metrics = QFontMetricsF(make_font(theme, size))
            need = self._axis_title_widths[key] = [
                metrics.horizontalAdvance(text) + 10.0 for text in (full, short, unit)]
        if need[0] <= room:
            return full, size
        if need[1] <= room:
            return short, size
        least = min(size, self._axis_title_min())
        fitted = max(least, size * room / need[1] * 0.97)
        if need[1] * fitted / size > page:  # off the page even so: the unit alone
            return unit, max(least, min(size, size * room / need[2] * 0.97))
        return short, fitted

    def _axis_title_min(self) -> float:
        """The least size of an axis title (points on screen): 0.8 × the tick labels' and
        :data:`AXIS_TITLE_MIN_PT` on the page, whichever is larger."""
        canvas = self._canvas
        least = max(0.8 * canvas.theme.tick_size, AXIS_TITLE_MIN_PT / canvas.figure_type_scale)
        # text is set in whole pixels: round up, never down below the least size
        return math.ceil(least * 96.0 / 72.0 - 1e-6) * 72.0 / 96.0

    def _set_axis_titles(self, rooms: dict | None = None) -> bool:
        """Set both axis titles for the axes' lengths ``rooms`` (the full wording at the
        theme's size without them); True when either changed."""
        theme = self._canvas.theme
        scene = self._canvas.scene_model
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
                plot = self._canvas.plot_item
                plot.setLabel(side, text, color=theme.foreground, **{"font-size": f"{size:.2f}pt"})
                # the axis places its title when resized: centre the new one now
                plot.getAxis(side).resizeEvent(None)
                changed = True
        self._axis_titles_set = new
        return changed

    def axis_titles(self) -> dict[str, tuple[str, float]]:
        """The axis titles as set: side → (wording, size in points)."""
        return {side: key[:2] for side, key in (self._axis_titles_set or {}).items()}

    def fit_axis_titles(self) -> bool:
        """Fit each axis title to the room the plot leaves it (see
        :meth:`_axis_title_choice`): the full wording where it fits, never cut by the page
        nor set unreadably small. True when a title changed (the plot is laid out again)."""
        canvas = self._canvas
        left, top, right, bottom = canvas.plot_item.getContentsMargins()
        title = canvas.plot_item.titleLabel
        title_h = title.maximumHeight() if title.isVisible() else 0.0
        # the room the plot leaves each title (not the plot's own size: a title longer than
        # the room would widen the plot beyond the figure)
        across = canvas.width() - canvas.y_axis.geometry().width() - left - right - 8
        # the y title is centred on the plot's height: no longer than that
        down = min(canvas.y_axis.geometry().height(),
                   canvas.height() - title_h - canvas.x_axis.geometry().height() - top - bottom - 8)
        # a title centred on its axis stays within the page if at most this long
        x_mid = canvas.x_axis.geometry().center().x()
        y_mid = canvas.y_axis.geometry().center().y()
        pages = {"bottom": 2 * min(x_mid, canvas.width() - x_mid) - 8,
                 "left": 2 * min(y_mid, canvas.height() - y_mid) - 8}
        rooms = {side: (length, max(length, pages[side]))
                 for side, length in (("bottom", across), ("left", down)) if length > 0}
        self._axis_rooms = rooms
        changed = self._set_axis_titles(rooms)
        if changed:
            canvas.refit_plot()
        return changed
