"""Figures: one renderer for PNG, SVG, PDF and the clipboard, shared by the app and the
command line (``roofline-workbench render``).

How a figure is made:

1. an offscreen :class:`~workbench.ui.chart.canvas.RooflineCanvas` on a copy of the session (the
   export theme forced on it), sized to the figure's **logical size** — its pixel size
   divided by ``dpi / 96``. A 3000-pixel-wide figure at 300 dpi is laid out on a canvas 960
   logical pixels wide; every font, line and marker then scales with the DPI, so a print
   figure has the same proportions as the screen, never hairlines and tiny text;
2. the chart's scene is painted once into an **SVG** (``QSvgGenerator``, SVG 1.1 with clip
   paths); the SVG is then made portable: strokes that Qt marks ``non-scaling-stroke``
   (cosmetic pens inside the log-scaled data transform) are rewritten into page
   coordinates, so the file looks the same in every SVG renderer and at every zoom; text
   stays text, curves stay paths;
3. PNG and PDF are drawn from that SVG by ``QSvgRenderer``: a ``QImage`` of the exact pixel
   size (DPI written into the file), or a ``QPdfWriter`` page of the figure's physical size
   (vector: text as text). The three formats cannot disagree.

Sizes: :data:`SIZE_PRESETS` (16:9 slide, single and double paper columns) or any width ×
height in pixels at a DPI. Themes: light (the default for figures), dark, presentation;
any of them with a transparent background. Files are written atomically.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.model.session import number_from_one
from workbench.ui.figures.figure_size import (
    BASE_DPI,
    FIGURE_LEGEND_OPERATIONS,
    FORMATS,
    KEY_SHARE,
    MAX_PIXELS,
    MIN_LOGICAL,
    SIZE_PRESETS,
    ExportError,
    FigureSize,
    SizePreset,
    format_of,
    resolve_size,
)
from workbench.ui.figures.page_marks import page_axes, page_marks
from workbench.ui.figures.svg_portable import portable_svg, portable_tree, svg_bytes

if TYPE_CHECKING:
    from PySide6.QtCore import QByteArray
    from PySide6.QtGui import QPainter

__all__ = [
    "FORMATS", "SIZE_PRESETS", "SizePreset", "FigureSize", "ExportError", "resolve_size",
    "render_figure", "figure_bytes", "figure_image", "figure_svg", "format_of",
    "MIN_LOGICAL", "MAX_PIXELS", "portable_svg", "svg_to_pdf", "svg_as", "background_of",
    "font_families", "painting_svg", "svg_image",
]


def _running_app():
    """The running ``QApplication``: a figure is drawn by Qt's widgets, in the application
    that :func:`workbench.ui.window.app.create_app` made (the window, ``render``)."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        raise RuntimeError("figures are drawn in a running QApplication: make it first with "
                           "workbench.ui.window.app.create_app()")
    return app


# ---------------------------------------------------------------------------------------------
# the renderer


def render_figure(session, path: str | os.PathLike[str], *, size: str | None = None,
                  width: int | None = None, height: int | None = None,
                  dpi: float | None = None, theme: str = "light", transparent: bool = False,
                  view_range=None, figure: FigureSize | None = None) -> FigureSize:
    """Write the chart of ``session`` to ``path`` (``.png``, ``.svg``, ``.pdf`` or ``.html``,
    by its extension), atomically, at ``figure`` (else the size ``size``, ``width``, ``height`` and
    ``dpi`` resolve to). Returns the size used (a paper column may have grown to hold its
    key). Raises :class:`ExportError` for a bad size or format and ``OSError`` when the file
    cannot be written."""
    fmt = format_of(path)
    fig = figure or resolve_size(size, width, height, dpi, theme)
    payload, fig = _figure_payload(session, fmt, fig, theme, transparent, view_range)
    from workbench.io.atomic import write_atomic

    write_atomic(Path(path), payload)  # keeps an existing file's mode; new: the umask
    return fig


def figure_bytes(session, fmt: str, fig: FigureSize, *, theme: str = "light",
                 transparent: bool = False, view_range=None) -> bytes:
    """The figure as the bytes of a ``png``, ``svg``, ``pdf`` or ``html`` file."""
    return _figure_payload(session, fmt, fig, theme, transparent, view_range)[0]


def _figure_payload(session, fmt: str, fig: FigureSize, theme: str, transparent: bool,
                    view_range) -> tuple[bytes, FigureSize]:
    if fmt not in FORMATS:
        raise ExportError(f"unknown figure format {fmt!r}; use png, svg, pdf or html")
    if fmt == "html":
        from workbench.ui.figures.html_page import figure_page

        drawn: dict = {"tree": None}  # (the page rewrites the SVG's tree: never written out)
        _, fig = figure_svg_sized(session, fig, theme=theme, transparent=transparent,
                                  view_range=view_range, drawn=drawn)
        return figure_page(session, drawn["tree"], drawn["scene"], theme,
                           document=drawn["document"], results=drawn["results"]), fig
    svg, fig = figure_svg_sized(session, fig, theme=theme, transparent=transparent,
                                view_range=view_range)
    return svg_as(svg, fmt, fig, session.title, background_of(theme), transparent), fig


def svg_as(svg: bytes, fmt: str, fig: FigureSize, title: str, background: str,
           transparent: bool = False) -> bytes:
    """A figure's portable SVG as the bytes of a ``svg``, ``png`` or ``pdf`` file of size
    ``fig``: the PNG and the PDF are drawn from the SVG, so the three cannot disagree
    (``background``: the PNG's, unless ``transparent``; ``title``: the PDF's)."""
    if fmt == "svg":
        return svg
    if fmt == "png":
        return _png_bytes(_rasterise(svg, fig, transparent, background), fig)
    if fmt == "pdf":
        return _pdf_bytes(svg, fig, title)
    raise ExportError(f"unknown figure format {fmt!r}; use png, svg or pdf")


def svg_image(svg: bytes, fig: FigureSize, background: str, transparent: bool = False):
    """A figure's portable SVG as a ``QImage`` of size ``fig`` (for the clipboard), DPI
    set, on ``background`` unless ``transparent``."""
    return _rasterise(svg, fig, transparent, background)


def svg_to_pdf(svg: bytes, fig: FigureSize, title: str) -> bytes:
    """The PDF page of a figure's SVG (:func:`figure_svg_sized`, with the size it returned):
    the same bytes :func:`figure_bytes` gives for ``pdf``, without laying the chart out again."""
    return _pdf_bytes(svg, fig, title)


def figure_image(session, fig: FigureSize, *, theme: str = "light", transparent: bool = False,
                 view_range=None):
    """The figure as a ``QImage`` (for the clipboard), DPI set."""
    svg, fig = figure_svg_sized(session, fig, theme=theme, transparent=transparent,
                                view_range=view_range)
    return svg_image(svg, fig, background_of(theme), transparent)


def figure_svg(session, fig: FigureSize, *, theme: str = "light", transparent: bool = False,
               view_range=None) -> bytes:
    """The figure as portable SVG 1.1 (logical-pixel user units, physical width and height)."""
    return figure_svg_sized(session, fig, theme=theme, transparent=transparent,
                            view_range=view_range)[0]


def figure_svg_sized(session, fig: FigureSize, *, theme: str = "light",
                     transparent: bool = False, view_range=None,
                     drawn: dict | None = None) -> tuple[bytes, FigureSize]:
    """The figure as portable SVG 1.1, and its size: a paper column's figure
    (:attr:`FigureSize.grows`) is made taller when its key would otherwise leave names out,
    or some of its points' tags found no place. With a ``drawn`` dict, the marks are named
    in the SVG (:func:`~workbench.ui.figures.page_marks.page_marks`), ``drawn["scene"]`` is
    the scene the figure shows and ``drawn["document"]`` and ``drawn["results"]`` the
    session it shows and its pairs. A ``drawn`` dict that holds the key ``"tree"`` gets the
    SVG there as its element tree instead, and the bytes returned are empty."""
    from workbench.ui.chart.canvas import HEADROOM

    _running_app()
    roomier = None  # (a fitted view with room over the top for tags, and what it told)
    kernels = first_kernels(fig)
    shown = None  # (the last pass: the next one lays the same session out again)
    # (the page before it grew for the compute roofs' values or the ridges, once, and the
    # texts it placed; False: grown no more)
    grown_from: tuple | bool | None = None
    seed = None  # (the key a page grown for them starts from)
    for _ in range(6 + KERNEL_TRIES):
        made = _offscreen_canvas(session, fig, theme, roomier[0] if roomier else view_range,
                                 kernels, shown, numbered=drawn is not None, seed=seed)
        with made as canvas:
            shown = made
            taller = _taller_for_key(canvas, fig)
            if taller is None and roomier is None:
                if grown_from is None:
                    taller = _taller_for_values(canvas, fig)
                    grown_from = False
                    if taller is not None:
                        grown_from, seed = (fig, canvas.key.said()), canvas.key.with_values()
                elif grown_from and not grown_from[1] <= canvas.key.said():
                    # (grown in vain: a text lost its place all the same; the page as it
                    # was)
                    taller, grown_from, seed = grown_from[0], False, None
            untold = canvas.key.untold() if taller is None else 0
            if taller is None and untold and view_range is None and roomier is None:
                # the page can grow no more and tags found no place: the fitted view with
                # room above its highest points (the crowded roofs are at the top)
                (x0, x1), (y0, y1) = canvas.view_range()
                roomier = (((x0, x1), (y0, y1 * HEADROOM)), untold)
                continue
            if taller is None:
                fewer = _fewer_kernels(canvas, kernels)
                if fewer is not None:  # (kernels whose tags found no place: fewer drawn)
                    kernels = fewer
                    continue
                if roomier is None or untold < roomier[1]:
                    return _svg_of(canvas, session, fig, theme, transparent, drawn), fig
                break  # (no better with the room: the fitted view, below)
        fig = taller
    # (laid out again: the canvas kept for the next figure is the one this figure shows)
    with _offscreen_canvas(session, fig, theme, view_range, kernels, shown,
                           numbered=drawn is not None, seed=seed) as canvas:
        return _svg_of(canvas, session, fig, theme, transparent, drawn), fig


#: Profiled kernels a figure draws at first for each run, per inch of its width (each is
#: named by a tag by its marker and a row of the key), and how many times it draws fewer
#: where tags found no place
KERNELS_PER_INCH = 4
KERNEL_TRIES = 4


def first_kernels(fig: FigureSize) -> int:
    """The most profiled kernels of a run a figure of this size draws (those with the most
    GPU time): :data:`KERNELS_PER_INCH` per inch of its width, at least 3."""
    return max(3, math.floor(fig.inches[0] * KERNELS_PER_INCH))


def _fewer_kernels(canvas, kernels: int) -> int | None:
    """Where some profiled kernels' tags found no place by their markers, or the key (on a
    page that cannot grow) left rows out: how many of each run to draw instead (no more
    than found a place, nor than the key listed; at least one); None when every kernel
    drawn is named and listed."""
    drawn = [(mark, label) for mark, _link, label in canvas.overlays.measured_texts
             if mark.tag]
    # (a kernel drawn on several machines at one spot is tagged there once: named where
    # one of its tags at the spot is shown)
    shown = {(mark.tag, mark.x, mark.y) for mark, label in drawn if label.isVisible()}
    unnamed = {mark.tag for mark, _label in drawn if (mark.tag, mark.x, mark.y) not in shown}
    legend = canvas.legend_item
    unlisted = legend.dropped if drawn and legend.isVisible() else 0
    if not (unnamed or unlisted) or kernels <= 1:
        return None
    tags = {mark.tag for mark, _label in drawn}  # (a kernel's, on every machine and run)
    return max(1, min(kernels - 1, len(tags - unnamed), len(tags) - unlisted))


def last_figure_canvas():
    """The hidden canvas the last figure of this process was drawn from, as it was drawn
    (its texts, their layout and its markers), or None; kept for the next figure, which
    changes it."""
    return _WARM[1] if _WARM is not None else None


#: a paper column whose points' tags find no place is tried this much taller at a time,
#: and where it can grow no more, its fitted view with the chart's HEADROOM at the top
TALLER_FOR_TAGS = 1.2


def _taller_for_key(canvas, fig: FigureSize) -> FigureSize | None:
    """A taller figure, for a figure that may grow (None: as it is): where its key left rows
    out, the chart keeps its height and the page grows by what the key lacks, and enough
    that the key stays within its share of the page; where every row is listed but tags
    found no place by their points, :data:`TALLER_FOR_TAGS` times taller."""
    legend = canvas.legend_item
    if not fig.grows:
        return None
    if not legend.isVisible() or not legend.dropped:
        # every row listed: taller for the tags that found no place by their points
        if not canvas.key.untold():
            return None
        taller = fig.taller(math.ceil(fig.height * TALLER_FOR_TAGS))
        return taller if taller.height > fig.height else None
    # the least page on which the whole key takes at most the usual share, or where no page
    # of a journal's height is so tall, at most the larger one (the chart keeps 45 %)
    lacking = legend.full_height - legend.height()
    logical = fig.logical[1]
    for share in KEY_SHARE:
        if share < (fig.key_share or KEY_SHARE[0]):
            continue
        need = max(logical + lacking, legend.full_height / share) + 8.0
        taller = fig.taller_for_key(math.ceil(need * fig.scale), share)
        if math.ceil(need * fig.scale) <= taller.height or share == KEY_SHARE[-1]:
            break
    return taller if (taller.height, taller.key_share) != (fig.height, fig.key_share) else None


def _taller_for_values(canvas, fig: FigureSize) -> FigureSize | None:
    """A taller figure, for a figure that may grow, whose key lists every row and whose
    every tag found its place, but that names no compute roof (or, its values said, no
    ridge): their values found no place beside their lines (or diamonds), and their rows
    in the key would have cost a name its place (the chart shorter by them). The page grows
    by those rows, and its key starts as it ends now, with them
    (:meth:`TagsAndKey.with_values`): the chart keeps its height, and its texts their
    places. None: as it is."""
    lacking = canvas.key.values_lacking()
    legend = canvas.legend_item
    if (not fig.grows or not lacking or not legend.isVisible() or legend.dropped
            or canvas.key.untold()):
        return None
    taller = fig.taller_for_key(math.ceil((fig.logical[1] + lacking) * fig.scale))
    return taller if taller.height > fig.height else None


def _svg_of(canvas, session, fig: FigureSize, theme: str, transparent: bool,
            drawn: dict | None = None) -> bytes:
    from PySide6.QtCore import QRectF

    lw, lh = fig.logical
    source = _scene_rect(canvas)
    area = canvas.plot_widget.getPlotItem().getViewBox().sceneBoundingRect()
    area.translate(-source.left(), -source.top())
    with (painting_svg(lw, lh, session.title or "Roofline chart",
                       "Roofline chart made with Roofline Workbench") as (painter, data),
          canvas.export_mode()):
        canvas.plot_widget.scene().render(painter, QRectF(0, 0, lw, lh), source)
    families = font_families(canvas)
    marks = ()
    if drawn is not None:
        marks = page_marks(canvas, source, lw / source.width(), lh / source.height())
        drawn["scene"] = canvas.scene_model
        # (the figure's session and its evaluated pairs, kept with the canvas until the next
        # figure: the page reads the derivations from them)
        drawn["document"], drawn["results"] = canvas.workspace.document, canvas.workspace.results
    tree = portable_tree(bytes(data), fig, None if transparent else background_of(theme),
                         families, (area.left(), area.top(), area.right(), area.bottom()),
                         marks)
    if drawn is not None and "tree" in drawn:
        tree.set("data-axes", page_axes(canvas, source, lw / source.width(),
                                        lh / source.height()))
        drawn["tree"] = tree
        return b""
    return svg_bytes(tree)


@contextmanager
def painting_svg(width: float, height: float, title: str, description: str
                 ) -> Iterator[tuple[QPainter, QByteArray]]:
    """A painter on an SVG page of ``width`` × ``height`` logical pixels (96 a logical
    inch), antialiased, and the bytes it has written once the block ends. SVG Tiny 1.2:
    Qt's SVG 1.1 clip paths go stale between items (the one clip a chart needs, the plot
    area, is applied to the geometry by :func:`portable_svg` instead)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(math.ceil(width), math.ceil(height)))
    generator.setViewBox(QRectF(0, 0, width, height))
    generator.setResolution(round(BASE_DPI))
    generator.setTitle(title)
    generator.setDescription(description)
    painter = QPainter(generator)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    try:
        yield painter, data
    finally:
        painter.end()
        buffer.close()


def background_of(theme: str) -> str:
    """The page colour of figures in ``theme``."""
    from workbench.ui.chart.theme import get_theme

    return get_theme(theme).background


def _scene_rect(canvas):
    from PySide6.QtCore import QRectF

    view = canvas.plot_widget
    return QRectF(view.mapToScene(view.viewport().rect()).boundingRect())


class _offscreen_canvas:  # noqa: N801 (a context manager used like a function)
    """A canvas on a copy of ``session`` with ``theme`` forced, laid out at the figure's
    logical size, fitted (or showing ``view_range``), labels placed, not shown on screen."""

    def __init__(self, session, fig: FigureSize, theme: str, view_range,
                 kernels: int | None = None, shown: _offscreen_canvas | None = None,
                 numbered: bool = False, seed: tuple | None = None) -> None:
        """``numbered``: the copy's entries take the ids 1, 2, … (an HTML page, which names
        its marks by them, is then the same whatever the process made before); ``seed``:
        the key it starts from (:attr:`TagsAndKey.seed`)."""
        self.seed = seed
        from workbench.ui.chart.theme import THEMES

        if theme not in THEMES:
            raise ExportError(f"unknown theme {theme!r} (choose from {', '.join(THEMES)})")
        self.fig = fig
        self.view_range = view_range
        self.kernels = kernels
        #: the canvas of the last pass of this figure (the same session and theme), kept
        self._shown = shown.canvas if shown is not None else None
        if shown is not None:
            self.session = shown.session  # (the copy it shows, unchanged)
            return
        self.session = copy.deepcopy(session)
        if numbered:
            number_from_one(self.session)
        self.session.view.theme = theme
        if theme == "presentation":  # a figure for a room: every point says what it is
            self.session.view.labels = True

    def __enter__(self):
        from workbench.document import Document
        from workbench.ui.bridge import Workspace

        skips = self.session.view.theme == "presentation"
        warm = _warm_canvas()
        # the same session on the canvas kept from the last pass: set again, not replaced
        again = warm is not None and self._shown is not None and warm[1] is self._shown
        if warm is None:
            self.workspace = Workspace(Document(self.session))
            self.canvas = _figure_canvas_class()(self.workspace, legend_skips_labelled=skips)
        else:  # the last figure's canvas, its items reused: only the session changes
            self.workspace, self.canvas = warm
        try:
            return self._prepare(skips, warm is not None, again)
        except BaseException as exc:  # nothing half-made is kept, nor left shown
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise

    def _prepare(self, skips: bool, warm: bool, again: bool = False):
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QImage
        from PySide6.QtWidgets import QApplication

        canvas = self.canvas
        if warm:
            canvas.start_over()
            canvas.legend_skips_labelled = skips
            canvas.legend_operations = FIGURE_LEGEND_OPERATIONS
            canvas.hold_layout = True
            with canvas.rebuilds_held():  # one rebuild, below, not one per change signal
                self.workspace.selection.select(None)
                if again:  # (the scene it drew is drawn again: the document is unchanged)
                    canvas.show_again()
                else:
                    self.workspace.document.replace_session(self.session)
        # axis titles are never set below a readable size on the page
        canvas.figure_type_scale = self.fig.boost
        canvas.figure_key_share = self.fig.key_share or KEY_SHARE[0]
        canvas.figure_kernels = self.kernels if self.kernels is not None else first_kernels(
            self.fig)
        canvas.key.seed = self.seed or (frozenset(),) * 3
        canvas.rebuild(fit=self.view_range is None)
        self._fitted = canvas.plot_widget.getPlotItem().getViewBox().targetRange()
        canvas.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        # never a window the application waits for: quitting closes the main window only
        canvas.setAttribute(Qt.WidgetAttribute.WA_QuitOnClose, False)
        lw, lh = self.fig.logical
        canvas.resize(max(1, round(lw)), max(1, round(lh)))
        # laid out, never painted on screen: the figure is rendered from the scene
        canvas.setUpdatesEnabled(False)
        canvas.show()
        app = QApplication.instance()
        # Axes size themselves to their tick labels when first painted: paint them twice
        # (processing the layout requests in between) before the real render. Labels are
        # placed once, at the end (the canvas holds its label layout until then).
        scratch = QImage(1, 1, QImage.Format.Format_ARGB32)
        _reset_axes(canvas)  # a kept canvas starts where a new one does: same figure
        for _ in range(2):
            app.processEvents()
            self._fit()
            _paint_axes(canvas, scratch)
        app.processEvents()
        if not canvas.legend_skips_labelled and _legend_height_share(canvas) > 0.45:
            canvas.skip_labelled_in_legend()  # a small figure: the labels name the points
            self._fit()
            app.processEvents()
        while _legend_height_share(canvas) > 0.45 and canvas.legend_operations > 0:
            # still a legend taller than half the plot: fewer operations listed (the plot
            # keeps its room; every operation stays in the tooltips and the tables)
            canvas.set_legend_operations(canvas.legend_operations // 2)
            self._fit()
            app.processEvents()
        self._fit()
        canvas.hold_layout = False
        canvas.relayout()
        # placing the texts can move the legend out of the plot, and the smaller plot can
        # show other tick labels (a longer one, drawn over the axis title where the axis
        # kept the room of the last): the axes measured again for the plot as it is now,
        # and the texts placed again where that changes their room
        for _ in range(2):
            before = _axis_rooms(canvas)
            _paint_axes(canvas, scratch)
            if _axis_rooms(canvas) == before:
                break
            app.processEvents()
            self._fit()
            canvas.relayout()
        return canvas

    def _fit(self) -> None:
        """Show the fitted range (or ``view_range``) with room for the edge decades' tick
        labels (the canvas wraps its title to the width itself)."""
        canvas = self.canvas
        vb = canvas.plot_widget.getPlotItem().getViewBox()
        vb.setRange(xRange=self._fitted[0], yRange=self._fitted[1], padding=0.0)
        if self.view_range is not None:
            canvas.set_view_range(*self.view_range)
        if self.view_range is None:
            _room_for_edge_ticks(canvas)

    def __exit__(self, exc_type, *exc) -> None:
        global _WARM
        canvas = self.canvas
        # hidden at once: a figure leaves no window behind (a shown one, even never on
        # screen, is a window the application would wait for before it quits)
        canvas.hide()
        if exc_type is None:  # kept for the next figure: its items are made once per session
            _WARM = (self.workspace, canvas)
            return
        _WARM = None
        # Destroyed with its workspace: nothing outlives it, so no need to take its items out
        # of the scene one by one first (RooflineCanvas.dispose: a tenth of an export).
        canvas.deleteLater()
        self.workspace.deleteLater()
        from PySide6.QtCore import QCoreApplication, QEvent

        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


#: The last figure's (workspace, canvas): hidden, kept for the next export in this process
#: (building a chart's hundred labels and its plot is a third of an export).
_WARM: tuple | None = None


def _warm_canvas():
    """The kept figure canvas, unless Qt has destroyed it (the application went away)."""
    global _WARM
    if _WARM is None:
        return None
    from shiboken6 import isValid

    workspace, canvas = _WARM
    if not (isValid(canvas) and isValid(workspace)):
        _WARM = None
        return None
    _WARM = None  # taken: a failure in this export does not leave it half-used
    return workspace, canvas


def _reset_axes(canvas) -> None:
    """Give every axis pyqtgraph's initial room for its tick labels, to be measured anew."""
    plot = canvas.plot_widget.getPlotItem()
    for name in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(name)
        # the room for tick labels follows these ticks alone (pyqtgraph keeps the widest
        # seen, so a kept canvas would otherwise remember the last figure's)
        axis.textWidth, axis.textHeight = 30, 18  # pyqtgraph's initial values
        # drawn anew, not replayed: an axis replays the picture of its last paint (the
        # previous figure's, with a kept canvas) without measuring its labels again, and
        # would then keep the initial room, too narrow for any label (all dropped)
        axis.setStyle()


def _axis_rooms(canvas) -> tuple:
    """The room each axis keeps for its tick labels (pyqtgraph's measure of them)."""
    plot = canvas.plot_widget.getPlotItem()
    return tuple((plot.getAxis(name).textWidth, plot.getAxis(name).textHeight)
                 for name in ("left", "bottom", "right", "top"))


def _paint_axes(canvas, scratch) -> None:
    """Paint the chart's axes (only they: what a paint changes in the layout is the room an
    axis asks for its tick labels) into the image ``scratch``, each where the scene would,
    each measuring its tick labels anew."""
    from PySide6.QtGui import QPainter

    _reset_axes(canvas)
    plot = canvas.plot_widget.getPlotItem()
    painter = QPainter(scratch)
    try:
        for name in ("left", "bottom", "right", "top"):
            axis = plot.getAxis(name)
            if axis.isVisible():
                painter.setWorldTransform(axis.sceneTransform())
                axis.paint(painter, None, None)
    finally:
        painter.end()


def _legend_height_share(canvas) -> float:
    """How much of the plot's height the legend covers (0 when hidden)."""
    vb = canvas.plot_widget.getPlotItem().getViewBox()
    legend = canvas.legend_item
    if not legend.isVisible() or vb.height() <= 0:
        return 0.0
    return legend.sceneBoundingRect().height() / vb.height()


def _room_for_edge_ticks(canvas) -> None:
    """Widen the fitted range just enough that the decades at its edges keep their tick
    labels (the axes drop a label that would stick out of the plot; large type on a small
    figure needs more room than the screen's fit leaves)."""
    from PySide6.QtGui import QFont, QFontMetricsF

    plot = canvas.plot_widget.getPlotItem()
    vb = plot.getViewBox()
    for _ in range(2):  # the second pass corrects for the scale the first one changed
        (x0, x1), (y0, y1) = vb.viewRange()
        width, height = vb.width(), vb.height()
        if width <= 0 or height <= 0 or x1 <= x0 or y1 <= y0:
            return
        new = []
        for axis_name, lo, hi, pixels in (("bottom", x0, x1, width), ("left", y0, y1, height)):
            axis = plot.getAxis(axis_name)
            metrics = QFontMetricsF(axis.style.get("tickFont") or QFont())
            first, last = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
            if axis_name == "bottom":
                labels = axis.tickStrings([float(first), float(last)], 1.0, 1.0)
                half = max(metrics.horizontalAdvance(t) for t in labels) / 2 + 4
            else:
                half = metrics.height() / 2 + 3
            need = half * (hi - lo) / pixels
            new.append((min(lo, first - need), max(hi, last + need)))
        if new == [(x0, x1), (y0, y1)]:
            return
        vb.setRange(xRange=new[0], yRange=new[1], padding=0.0)


def _figure_canvas_class():
    """:class:`~workbench.ui.figures.figure_canvas.FigureCanvas`, imported when the first
    figure is made (the live chart's modules are not needed before)."""
    from workbench.ui.figures.figure_canvas import FigureCanvas

    return FigureCanvas


def font_families(widget) -> dict[str, str]:
    """Qt's generic family names (and ``widget``'s font, as "") as the concrete family Qt
    used, for other renderers."""
    from PySide6.QtGui import QFont, QFontInfo

    out = {}
    for generic in ("Sans Serif", "SansSerif", "Helvetica", "Arial"):
        out[generic] = QFontInfo(QFont(generic)).family()
    out[""] = QFontInfo(widget.font()).family()
    return out


def _rasterise(svg: bytes, fig: FigureSize, transparent: bool, background: str):
    from PySide6.QtCore import QByteArray, QRectF
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    from workbench.ui.chart.theme import qcolor

    renderer = QSvgRenderer(QByteArray(svg))
    # painted at the screen's resolution (a new image's), scaled by the renderer to the
    # figure's pixels; the figure's DPI is written into the image only afterwards (see
    # :func:`_screen_dpi`)
    image = QImage(fig.width, fig.height, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor(0, 0, 0, 0) if transparent else qcolor(background))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, fig.width, fig.height))
    painter.end()
    dots_per_metre = round(fig.dpi / 0.0254)
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    return image


def _screen_dpi() -> int:
    """The resolution the application's own text is drawn at (a new image's: the screen's
    logical DPI). A figure's text is painted at this resolution only, never at the figure's
    DPI: Qt keeps one font engine per family, style and pixel size for the whole process,
    whatever the resolution it was made for, so text painted on a 300-dpi device would
    leave the menus and combo lists of the running application drawing their text at
    96 / 300 of its size until it quits. The figure's DPI is metadata (PNG) or a page size
    (PDF); vector output and scaled painting lose nothing by it."""
    from PySide6.QtGui import QImage

    return QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied).logicalDpiX()


def _png_bytes(image, fig: FigureSize) -> bytes:
    """``image`` as a PNG file with its DPI (``pHYs``): RGB when every pixel is opaque, else
    RGBA; each row stored as its difference from the row above (PNG filter "Up": a chart is
    mostly areas of one colour) and deflated at zlib level 3. Qt's writer tries every filter
    on every row and compresses harder: five times slower, for a larger file."""
    import struct
    import zlib

    import numpy as np
    from PySide6.QtGui import QImage

    w, h = image.width(), image.height()
    if image.format() != QImage.Format.Format_ARGB32_Premultiplied:
        image = image.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    argb = np.frombuffer(image.constBits(), np.uint32).reshape(h, -1)[:, :w]
    opaque = bool((argb >= 0xFF000000).all())
    if opaque:
        pixels = image.convertToFormat(QImage.Format.Format_RGB888)
        colour_type, depth = 2, 3
    else:  # straight (not premultiplied) alpha, as PNG stores it
        pixels = image.convertToFormat(QImage.Format.Format_RGBA8888)
        colour_type, depth = 6, 4
    rows = np.frombuffer(pixels.constBits(), np.uint8).reshape(h, -1)[:, :w * depth]
    filtered = np.empty((h, w * depth + 1), np.uint8)
    filtered[:, 0] = 2  # "Up" (the first row's "above" is zeros: itself)
    filtered[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=filtered[1:, 1:])

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))

    dpm_x, dpm_y = image.dotsPerMeterX(), image.dotsPerMeterY()
    return b"".join([
        b"\x89PNG\r\n\x1a\n",
        chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour_type, 0, 0, 0)),
        chunk(b"pHYs", struct.pack(">IIB", dpm_x, dpm_y, 1)) if dpm_x > 0 < dpm_y else b"",
        chunk(b"IDAT", zlib.compress(filtered, 3)),
        chunk(b"IEND", b""),
    ])


def _pdf_bytes(svg: bytes, fig: FigureSize, title: str) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter
    from PySide6.QtSvg import QSvgRenderer

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    w_in, h_in = fig.inches
    page = QPageSize(QSizeF(w_in * 72.0, h_in * 72.0), QPageSize.Unit.Point, "figure",
                     QPageSize.SizeMatchPolicy.ExactMatch)
    writer.setPageLayout(QPageLayout(page, QPageLayout.Orientation.Portrait,
                                     QMarginsF(0, 0, 0, 0)))
    writer.setResolution(_screen_dpi())  # the page is vector: its size sets the scale
    writer.setTitle(title or "Roofline chart")
    writer.setCreator("Roofline Workbench")
    renderer = QSvgRenderer(QByteArray(svg))
    painter = QPainter(writer)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, writer.width(), writer.height()))
    painter.end()
    buffer.close()
    return bytes(data)
