"""A plot of the bottom row (the sweep plot) as a figure file, made as the chart's figures are
(:mod:`workbench.ui.figures.export`): the plot, laid out offscreen at the figure's logical
size, has its scene painted once into an SVG, made portable; the PNG and the PDF are drawn
from that SVG, so the three formats cannot disagree. Its title line goes above the plot."""

from __future__ import annotations

import math
from collections.abc import Callable

from workbench.ui.chart.items import painted_for_figure
from workbench.ui.figures.export import ExportError, font_families, painting_svg, svg_as
from workbench.ui.figures.figure_size import FigureSize
from workbench.ui.figures.svg_portable import portable_tree, svg_bytes

__all__ = ["plot_figure", "plot_figure_bytes", "LEAST_PT"]

#: the least size of the plot's text on the page, points
LEAST_PT = 8.0


class _NoRoom(ExportError):
    """A page too small for the plot, its axes or its legend."""


def plot_figure(panel, plot_widget, fmt: str, fig: FigureSize, *,
                title: Callable[[], str], foreground: str, background: str,
                transparent: bool = False) -> tuple[bytes, FigureSize]:
    """The bytes of a ``png``, ``svg`` or ``pdf`` file of the plot ``plot_widget`` of
    ``panel`` (a widget made for this figure alone, not shown yet: it is laid out offscreen,
    and hidden again), with the title ``title()`` says once the plot is laid out (HTML, in
    ``foreground``) above it, on ``background`` unless ``transparent``; and the size drawn.
    A paper column too short for the legend grows taller, as the chart's figures do for
    their key (:meth:`FigureSize.taller_for_key`); else a page too small for the plot is an
    :class:`ExportError`."""
    while True:
        try:
            return plot_figure_bytes(panel, plot_widget, fmt, fig, title=title,
                                     foreground=foreground, background=background,
                                     transparent=transparent), fig
        except _NoRoom:
            taller = fig.taller_for_key(math.ceil(fig.height * 1.25))
            if taller.height <= fig.height:
                raise
            fig = taller


def plot_figure_bytes(panel, plot_widget, fmt: str, fig: FigureSize, *,
                      title: Callable[[], str], foreground: str, background: str,
                      transparent: bool = False) -> bytes:
    """The bytes of a ``png``, ``svg`` or ``pdf`` file of the plot at ``fig`` (see
    :func:`plot_figure`): the title in ``foreground``, wrapped to the page's width, and the
    plot below it, drawn at the page's logical size less the title's height."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QFontInfo
    from PySide6.QtWidgets import QApplication

    # laid out at the page's logical size, or smaller where its text would be under
    # LEAST_PT on the page, and drawn larger to fill it
    page_w, page_h = fig.logical
    pt = QFontInfo(plot_widget.font()).pixelSize() * 72 / (page_w / fig.inches[0])
    lw, lh = page_w / max(1.0, LEAST_PT / pt), page_h / max(1.0, LEAST_PT / pt)
    panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    panel.setAttribute(Qt.WidgetAttribute.WA_QuitOnClose, False)
    panel.resize(max(1, round(lw)), max(1, round(lh)))
    panel.show()
    try:
        app = QApplication.instance()
        heading = _Heading(plot_widget.font(), foreground, lw)
        for _ in range(3):  # the plot at the page's size less the title's (which says the
            # values that found no room beside their lines: it follows the plot's size)
            app.processEvents()
            heading.set_html(title())
            extra = (panel.width() - plot_widget.width(), panel.height() - plot_widget.height())
            panel.resize(max(1, round(lw) + extra[0]),
                         max(1, round(lh - heading.height) + extra[1]))
        app.processEvents()
        view = plot_widget
        top = heading.height
        source = QRectF(view.mapToScene(view.viewport().rect()).boundingRect())
        # (a legend left out for want of room, as on a small screen, would leave a figure's
        # reader no way to tell its machines apart)
        if source.width() > lw + 1 or source.height() > lh - top + 1 or min(
                source.width(), source.height()) < 1 or _legend_left_out(view):
            raise _NoRoom(f"a plot of {fig.width} × {fig.height} pixels at {fig.dpi:g} dpi is "
                          "too small for its axes and legend: choose a larger size or a "
                          "lower dpi")
        with painting_svg(lw, lh, heading.plain, "Plot made with Roofline Workbench") as (
                painter, data):
            heading.draw(painter)
            with painted_for_figure(view.scene()):
                view.scene().render(painter, QRectF(0, top, source.width(), source.height()),
                                    source)
        # (not cut to the plot's area: the legend's samples are drawn scaled, as data are;
        # the plot's curves and lines lie within its range)
        tree = portable_tree(bytes(data), fig, None if transparent else background,
                             font_families(view))
    finally:
        panel.hide()
    return svg_as(svg_bytes(tree), fmt, fig, heading.plain, background, transparent)


def _legend_left_out(view) -> bool:
    """Whether the plot has a legend with entries that is not shown."""
    import pyqtgraph as pg

    return any(isinstance(item, pg.LegendItem) and item.items and not item.isVisible()
               for item in view.scene().items())


class _Heading:
    """A figure's title: HTML wrapped to the page's width, in one colour but where it says
    its own, with air above and below."""

    AIR = 6.0

    def __init__(self, font, colour: str, width: float) -> None:
        from PySide6.QtGui import QTextDocument

        self._text = QTextDocument()
        self._text.setDefaultFont(font)
        self._text.setDocumentMargin(0)
        self._text.setTextWidth(max(1.0, width - 2 * self.AIR))
        self._colour = colour
        self._html: str | None = None

    def set_html(self, html: str) -> None:
        if html != self._html:
            self._html = html
            self._text.setHtml(f'<div align="center" style="color:{self._colour}">{html}</div>')

    @property
    def plain(self) -> str:
        return self._text.toPlainText()

    @property
    def height(self) -> float:
        """The title's height with its air (none for no title)."""
        return math.ceil(self._text.size().height() + 2 * self.AIR) if self.plain else 0

    def draw(self, painter) -> None:
        if not self.plain:
            return
        painter.save()
        painter.translate(self.AIR, self.AIR)
        self._text.drawContents(painter)
        painter.restore()
