"""Figures: one renderer for PNG, SVG, PDF and the clipboard, shared by the app and the
command line (``roofline-workbench render``).

How a figure is made:

1. an offscreen :class:`~workbench.ui.canvas.RooflineCanvas` on a copy of the session (the
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

import contextlib
import copy
import functools
import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FORMATS", "SIZE_PRESETS", "SizePreset", "FigureSize", "ExportError", "resolve_size",
    "render_figure", "figure_bytes", "figure_image", "figure_svg", "format_of",
    "ensure_gui_app", "MIN_LOGICAL", "MAX_PIXELS",
]

FORMATS = ("png", "svg", "pdf")
#: CSS pixels per inch: the canvas's logical unit.
BASE_DPI = 96.0
#: Default figure: 1600 × 1000 pixels at 160 dpi (laid out like a 960 × 600 window, 10 in wide).
DEFAULT_WIDTH, DEFAULT_HEIGHT, DEFAULT_DPI = 1600, 1000, 160.0
#: Smallest logical size (pixels / (dpi / 96)) that still holds axes and a plot.
MIN_LOGICAL = (160.0, 120.0)
#: Largest figure, in pixels per side and in total.
MAX_SIDE = 20_000
MAX_PIXELS = 80_000_000
DPI_RANGE = (24.0, 2400.0)
#: The presentation theme lays a figure out this much larger again (fonts, lines, markers):
#: on a 16:9 slide its tick labels read at about 19 pt, its title at 23 pt.
THEME_FIGURE_SCALE = {"presentation": 1.2}
#: A figure's legend names at most this many operations (the rest: one line); a figure has
#: less room than a window.
FIGURE_LEGEND_OPERATIONS = 8


class ExportError(ValueError):
    """A figure that cannot be made: the message names the problem (one line)."""


@dataclass(frozen=True)
class SizePreset:
    """A named figure size: fixed pixels (a slide), or a physical width in inches whose
    pixels follow the DPI (a paper column)."""

    key: str
    label: str
    dpi: float
    width_px: int | None = None
    height_px: int | None = None
    width_in: float | None = None
    height_in: float | None = None
    #: type, lines and markers relative to the screen (paper figures use smaller type)
    type_scale: float = 1.0

    def pixels(self, dpi: float | None = None) -> tuple[int, int, float]:
        dpi = float(dpi or self.dpi)
        if self.width_px is not None and self.height_px is not None:
            return self.width_px, self.height_px, dpi
        assert self.width_in is not None and self.height_in is not None
        return round(self.width_in * dpi), round(self.height_in * dpi), dpi


#: Sizes people ask for. The slide is 1920 × 1080 at 144 dpi: 13.33 × 7.5 in, PowerPoint's
#: 16:9 page, so the figure fills a slide at its natural size and fonts read as on the slide.
SIZE_PRESETS: dict[str, SizePreset] = {
    "slide": SizePreset("slide", "16:9 slide (1920 × 1080)", 144.0, width_px=1920,
                        height_px=1080),
    "single": SizePreset("single", "Single column (3.5 in)", 300.0, width_in=3.5,
                         height_in=2.6, type_scale=0.75),
    "double": SizePreset("double", "Double column (7.16 in)", 300.0, width_in=7.16,
                         height_in=3.6, type_scale=0.85),
}


@dataclass(frozen=True)
class FigureSize:
    """Output pixels and DPI; :attr:`scale` = dpi / 96 is how much larger than the screen
    everything is drawn."""

    width: int
    height: int
    dpi: float
    #: extra enlargement of the layout (the presentation theme's), not of the pixels
    boost: float = 1.0

    @property
    def scale(self) -> float:
        return self.dpi / BASE_DPI * self.boost

    @property
    def logical(self) -> tuple[float, float]:
        return self.width / self.scale, self.height / self.scale

    @property
    def inches(self) -> tuple[float, float]:
        return self.width / self.dpi, self.height / self.dpi


def resolve_size(size: str | None = None, width: int | None = None, height: int | None = None,
                 dpi: float | None = None, theme: str = "light") -> FigureSize:
    """The figure size from a preset key and/or explicit pixels and DPI.

    A preset gives the defaults (a paper column's pixels follow ``dpi``); an explicit width
    or height overrides it; a lone width or height keeps the preset's (or the default
    figure's) aspect ratio. Raises :class:`ExportError` for nonsense (zero or negative sizes,
    absurd DPI, a figure too small for its DPI or too large to hold in memory)."""
    if dpi is not None:
        if not isinstance(dpi, int | float) or not math.isfinite(dpi):
            raise ExportError(f"dpi must be a number, got {dpi!r}")
        if not DPI_RANGE[0] <= dpi <= DPI_RANGE[1]:
            raise ExportError(f"dpi must be between {DPI_RANGE[0]:g} and {DPI_RANGE[1]:g}, "
                              f"got {dpi:g}")
    for name, value in (("width", width), ("height", height)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ExportError(f"{name} must be a positive whole number of pixels, got {value!r}")
    if size is not None:
        preset = SIZE_PRESETS.get(size)
        if preset is None:
            raise ExportError(f"unknown size {size!r} (choose from {', '.join(SIZE_PRESETS)})")
        base_w, base_h, base_dpi = preset.pixels(dpi)
        type_scale = preset.type_scale
    else:
        type_scale = 1.0
        base_dpi = float(dpi) if dpi is not None else DEFAULT_DPI
        base_w = round(DEFAULT_WIDTH * base_dpi / DEFAULT_DPI)
        base_h = round(DEFAULT_HEIGHT * base_dpi / DEFAULT_DPI)
    if width is not None and height is None:
        height = max(1, round(width * base_h / base_w))
    elif height is not None and width is None:
        width = max(1, round(height * base_w / base_h))
    fig = FigureSize(int(width or base_w), int(height or base_h), float(base_dpi),
                     THEME_FIGURE_SCALE.get(theme, 1.0) * type_scale)
    if fig.width > MAX_SIDE or fig.height > MAX_SIDE or fig.width * fig.height > MAX_PIXELS:
        raise ExportError(f"figure of {fig.width} × {fig.height} pixels is too large "
                          f"(at most {MAX_SIDE} per side and {MAX_PIXELS // 1_000_000} million "
                          "pixels)")
    lw, lh = fig.logical
    if lw < MIN_LOGICAL[0] or lh < MIN_LOGICAL[1]:
        min_w = math.ceil(MIN_LOGICAL[0] * fig.scale)
        min_h = math.ceil(MIN_LOGICAL[1] * fig.scale)
        raise ExportError(f"figure of {fig.width} × {fig.height} pixels is too small for "
                          f"{fig.dpi:g} dpi (at least {min_w} × {min_h}, or a lower dpi)")
    return fig


def format_of(path: str | os.PathLike[str]) -> str:
    """``png``, ``svg`` or ``pdf`` from a file name; :class:`ExportError` otherwise."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        shown = f".{suffix}" if suffix else "no extension"
        raise ExportError(f"{Path(path).name}: unknown figure format ({shown}); "
                          "use .png, .svg or .pdf")
    return suffix


def ensure_gui_app():
    """The running ``QApplication``, or a new one. Without a display (no ``DISPLAY`` or
    ``WAYLAND_DISPLAY``) Qt's offscreen platform is used, so the command line renders on a
    server."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None:
        return app
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import sys

    import pyqtgraph as pg

    app = QApplication([sys.argv[0] if sys.argv else "roofline-workbench"])
    app.setApplicationName("Roofline Workbench")
    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    return app


# ---------------------------------------------------------------------------------------------
# the renderer


def render_figure(session, path: str | os.PathLike[str], *, size: str | None = None,
                  width: int | None = None, height: int | None = None,
                  dpi: float | None = None, theme: str = "light", transparent: bool = False,
                  view_range=None) -> FigureSize:
    """Write the chart of ``session`` to ``path`` (``.png``, ``.svg`` or ``.pdf``, by its
    extension), atomically. Returns the size used. Raises :class:`ExportError` for a bad
    size or format and ``OSError`` when the file cannot be written."""
    fmt = format_of(path)
    fig = resolve_size(size, width, height, dpi, theme)
    payload = figure_bytes(session, fmt, fig, theme=theme, transparent=transparent,
                           view_range=view_range)
    from workbench.io.sessions import write_atomic

    write_atomic(Path(path), payload, backup=False)
    umask = os.umask(0)
    os.umask(umask)
    with contextlib.suppress(OSError):  # an ordinary file for the umask, not a private one
        os.chmod(path, 0o666 & ~umask)
    return fig


def figure_bytes(session, fmt: str, fig: FigureSize, *, theme: str = "light",
                 transparent: bool = False, view_range=None) -> bytes:
    """The figure as the bytes of a ``png``, ``svg`` or ``pdf`` file."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown figure format {fmt!r}; use png, svg or pdf")
    svg = figure_svg(session, fig, theme=theme, transparent=transparent, view_range=view_range)
    if fmt == "svg":
        return svg
    if fmt == "png":
        return _png_bytes(_rasterise(svg, fig, transparent, _background(theme)), fig)
    return _pdf_bytes(svg, fig, session.title)


def figure_image(session, fig: FigureSize, *, theme: str = "light", transparent: bool = False,
                 view_range=None):
    """The figure as a ``QImage`` (for the clipboard), DPI set."""
    svg = figure_svg(session, fig, theme=theme, transparent=transparent, view_range=view_range)
    return _rasterise(svg, fig, transparent, _background(theme))


def figure_svg(session, fig: FigureSize, *, theme: str = "light", transparent: bool = False,
               view_range=None) -> bytes:
    """The figure as portable SVG 1.1 (logical-pixel user units, physical width and height)."""
    ensure_gui_app()
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    with _offscreen_canvas(session, fig, theme, view_range) as canvas:
        lw, lh = fig.logical
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        # SVG Tiny 1.2 output: Qt's SVG 1.1 clip paths go stale between items; the one clip a
        # chart needs (the plot area) is applied to the geometry by portable_svg instead.
        generator = QSvgGenerator()
        generator.setOutputDevice(buffer)
        generator.setSize(QSize(math.ceil(lw), math.ceil(lh)))
        generator.setViewBox(QRectF(0, 0, lw, lh))
        generator.setResolution(round(BASE_DPI))
        generator.setTitle(session.title or "Roofline chart")
        generator.setDescription("Roofline chart made with Roofline Workbench")
        source = _scene_rect(canvas)
        area = canvas.plot_widget.getPlotItem().getViewBox().sceneBoundingRect()
        area.translate(-source.left(), -source.top())
        painter = QPainter(generator)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        try:
            with canvas.export_mode():
                canvas.plot_widget.scene().render(painter, QRectF(0, 0, lw, lh), source)
        finally:
            painter.end()
        buffer.close()
        families = _font_families(canvas)
    return portable_svg(bytes(data), fig, None if transparent else _background(theme),
                        families, (area.left(), area.top(), area.right(), area.bottom()))


def _background(theme: str) -> str:
    from workbench.ui.theme import get_theme

    return get_theme(theme).background


def _scene_rect(canvas):
    from PySide6.QtCore import QRectF

    view = canvas.plot_widget
    return QRectF(view.mapToScene(view.viewport().rect()).boundingRect())


class _offscreen_canvas:  # noqa: N801 (a context manager used like a function)
    """A canvas on a copy of ``session`` with ``theme`` forced, laid out at the figure's
    logical size, fitted (or showing ``view_range``), labels placed, not shown on screen."""

    def __init__(self, session, fig: FigureSize, theme: str, view_range) -> None:
        from workbench.ui.theme import THEMES

        if theme not in THEMES:
            raise ExportError(f"unknown theme {theme!r} (choose from {', '.join(THEMES)})")
        self.session = copy.deepcopy(session)
        self.session.view.theme = theme
        if theme == "presentation":  # a figure for a room: every point says what it is
            self.session.view.labels = True
        self.fig = fig
        self.view_range = view_range

    def __enter__(self):
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QImage
        from PySide6.QtWidgets import QApplication

        from workbench.document import Document
        from workbench.ui.bridge import Workspace

        skips = self.session.view.theme == "presentation"
        warm = _warm_canvas()
        if warm is None:
            self.workspace = Workspace(Document(self.session))
            canvas = self.canvas = _figure_canvas_class()(self.workspace,
                                                          legend_skips_labelled=skips)
        else:  # the last figure's canvas, its items reused: only the session changes
            self.workspace, canvas = warm
            self.canvas = canvas
            canvas.legend_skips_labelled = skips
            canvas.hold_layout = True
            with canvas.rebuilds_held():  # one rebuild, below, not one per change signal
                self.workspace.selection.select(None)
                self.workspace.document.replace_session(self.session)
        canvas.rebuild(fit=self.view_range is None)
        self._fitted = canvas.plot_widget.getPlotItem().getViewBox().targetRange()
        canvas.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
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
        for _ in range(2):
            app.processEvents()
            self._fit()
            _paint_axes(canvas, scratch)
        app.processEvents()
        if not canvas.legend_skips_labelled and _legend_height_share(canvas) > 0.45:
            canvas.skip_labelled_in_legend()  # a small figure: the labels name the points
            self._fit()
            app.processEvents()
        self._fit()
        canvas.hold_layout = False
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
        if exc_type is None:  # kept for the next figure: its items are made once per session
            _WARM = (self.workspace, self.canvas)
            return
        _WARM = None
        # Destroyed with its workspace: nothing outlives it, so no need to take its items out
        # of the scene one by one first (RooflineCanvas.dispose: a tenth of an export).
        canvas = self.canvas
        canvas.hide()
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


def _paint_axes(canvas, scratch) -> None:
    """Paint the chart's axes (only they: what a paint changes in the layout is the room an
    axis asks for its tick labels) into the image ``scratch``, each where the scene would."""
    from PySide6.QtGui import QPainter

    plot = canvas.plot_widget.getPlotItem()
    painter = QPainter(scratch)
    try:
        for name in ("left", "bottom", "right", "top"):
            axis = plot.getAxis(name)
            # the room for tick labels follows these ticks alone (pyqtgraph keeps the widest
            # seen, so a kept canvas would otherwise remember the last figure's)
            axis.textWidth, axis.textHeight = 30, 18  # pyqtgraph's initial values
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


_CANVAS_CLASS = None


def _figure_canvas_class():
    """The chart canvas with a figure's legend: machines, at most
    :data:`FIGURE_LEGEND_OPERATIONS` operations (none whose point carries its name, with the
    presentation theme: no clutter), then the notes."""
    global _CANVAS_CLASS
    if _CANVAS_CLASS is None:
        from dataclasses import replace

        from workbench.model.scene import LegendEntry
        from workbench.ui.canvas import RooflineCanvas

        class FigureCanvas(RooflineCanvas):
            legend_skips_labelled = False
            #: while True (the constructor), ``rebuild`` does nothing: the figure rebuilds
            #: once it knows its legend, instead of twice
            holding = True
            #: while True, labels are not placed: the figure places them once, at its final
            #: layout (see :class:`_offscreen_canvas`), not after every layout pass
            hold_layout = True

            def __init__(self, workspace, legend_skips_labelled: bool = False) -> None:
                super().__init__(workspace)
                self.holding = False
                self.legend_skips_labelled = legend_skips_labelled

            @contextlib.contextmanager
            def rebuilds_held(self):
                """Within this block ``rebuild`` does nothing (the caller rebuilds once)."""
                self.holding = True
                try:
                    yield
                finally:
                    self.holding = False

            def rebuild(self, *args, **kwargs) -> None:
                if not self.holding:
                    super().rebuild(*args, **kwargs)

            def _layout_annotations(self) -> None:
                if not self.hold_layout:
                    super()._layout_annotations()

            def skip_labelled_in_legend(self) -> None:
                """Leave the operations whose points carry their names out of the legend:
                only the legend changes (no rebuild)."""
                self.legend_skips_labelled = True
                if self.scene_model is not None:
                    self._sync_legend(self.scene_model)

            def _sync_legend(self, scene, *args, **kwargs):
                if scene is not None:
                    scene = replace(scene, legend=self._figure_legend(scene.legend, {
                        p.op_id for p in scene.points if p.show_label}))
                return super()._sync_legend(scene, *args, **kwargs)

            def _figure_legend(self, legend, labelled: set[int]) -> tuple:
                """At most FIGURE_LEGEND_OPERATIONS operations, then one line for the rest;
                none whose point carries its name when ``legend_skips_labelled``."""
                skip = labelled if self.legend_skips_labelled else set()
                more = 0
                for e in legend:  # the scene's own "… and N more operations"
                    found = re.match(r"… and (\d+) more operations", e.text)
                    if e.kind == "note" and found and not self.legend_skips_labelled:
                        more += int(found.group(1))
                keep = [e for e in legend if e.kind == "operation" and e.id not in skip]
                listed = keep[:FIGURE_LEGEND_OPERATIONS]
                more += len(keep) - len(listed)
                out = [e for e in legend if e.kind == "machine"] + listed
                if more:
                    out.append(LegendEntry("note", f"… and {more} more operations"))
                out += [e for e in legend if e.kind not in ("machine", "operation")
                        and not re.match(r"… and \d+ more operations", e.text)]
                return tuple(out)

        _CANVAS_CLASS = FigureCanvas
    return _CANVAS_CLASS


def _font_families(canvas) -> dict[str, str]:
    """Qt's generic family names as the concrete family Qt used, for other renderers."""
    from PySide6.QtGui import QFont, QFontInfo

    out = {}
    for generic in ("Sans Serif", "SansSerif", "Helvetica", "Arial"):
        out[generic] = QFontInfo(QFont(generic)).family()
    out[""] = QFontInfo(canvas.font()).family()
    return out


def _rasterise(svg: bytes, fig: FigureSize, transparent: bool, background: str):
    from PySide6.QtCore import QByteArray, QRectF
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    from workbench.ui.theme import qcolor

    renderer = QSvgRenderer(QByteArray(svg))
    image = QImage(fig.width, fig.height, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor(0, 0, 0, 0) if transparent else qcolor(background))
    dots_per_metre = round(fig.dpi / 0.0254)
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, fig.width, fig.height))
    painter.end()
    return image


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
    writer.setResolution(round(max(fig.dpi, 300)))
    writer.setTitle(title or "Roofline chart")
    writer.setCreator("Roofline Workbench")
    renderer = QSvgRenderer(QByteArray(svg))
    painter = QPainter(writer)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, writer.width(), writer.height()))
    painter.end()
    buffer.close()
    return bytes(data)


# ---------------------------------------------------------------------------------------------
# portable SVG

_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_MATRIX = re.compile(r"^\s*matrix\(([^)]*)\)\s*$")
_PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SHAPES = {"path", "polyline", "polygon", "rect", "line"}
_MAPPED = _SHAPES | {"ellipse", "circle"}  # shapes whose strokes a data transform affects

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # left, top, right, bottom


def _num(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _apply(m: Sequence[float], x: float, y: float) -> Point:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


@functools.lru_cache(maxsize=64)
def _local(tag: str) -> str:
    return tag.split("}")[-1]


def _outlines(element: ET.Element) -> list[tuple[list[Point], bool]] | None:
    """The straight-line outlines of a shape as ``(points, closed)`` runs, in its own
    coordinates; None for anything with curves (left as it is)."""
    tag = _local(element.tag)
    if tag == "path":
        return _path_outlines(element.get("d", ""))
    if tag in ("polyline", "polygon"):
        values = [float(v) for v in _PATH_TOKEN.findall(element.get("points", ""))]
        if len(values) % 2:
            raise ValueError("odd number of coordinates")
        pts = [(values[i], values[i + 1]) for i in range(0, len(values), 2)]
        return [(pts, tag == "polygon")]
    if tag == "line":
        return [([(float(element.get("x1", 0)), float(element.get("y1", 0))),
                  (float(element.get("x2", 0)), float(element.get("y2", 0)))], False)]
    if tag == "rect":
        x, y = float(element.get("x", 0)), float(element.get("y", 0))
        w, h = float(element.get("width", 0)), float(element.get("height", 0))
        if element.get("rx") or element.get("ry"):
            return None
        return [([(x, y), (x + w, y), (x + w, y + h), (x, y + h)], True)]
    return None


@functools.lru_cache(maxsize=256)
def _path_outlines(d: str) -> list[tuple[list[Point], bool]] | None:
    """:func:`_outlines` of path data ``d`` (cached: a chart's markers share a few shapes;
    the result is only read)."""
    runs: list[tuple[list[Point], bool]] = []
    numbers: list[float] = []
    command = ""

    def flush() -> None:
        if not numbers:
            return
        if len(numbers) % 2:
            raise ValueError("odd number of coordinates")
        pts = [(numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2)]
        numbers.clear()
        if command == "M":
            runs.append((pts[:1], False))
            pts = pts[1:]
        if pts:
            if not runs:
                raise ValueError("line before move")
            runs[-1][0].extend(pts)

    for token in _PATH_TOKEN.findall(d):
        if token.isalpha():
            flush()
            if token not in "MLZ":
                return None
            if token == "Z" and runs:
                runs[-1] = (runs[-1][0], True)
            command = token
        else:
            numbers.append(float(token))
    flush()
    return runs


def _clip_segment(p: Point, q: Point, r: Rect) -> tuple[Point, Point, bool, bool] | None:
    """Liang–Barsky: the part of segment ``pq`` inside ``r`` and whether each end moved."""
    (x0, y0), (x1, y1) = p, q
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for edge_p, edge_q in ((-dx, x0 - r[0]), (dx, r[2] - x0), (-dy, y0 - r[1]),
                           (dy, r[3] - y0)):
        if edge_p == 0:
            if edge_q < 0:
                return None
            continue
        t = edge_q / edge_p
        if edge_p < 0:
            if t > t1:
                return None
            t0 = max(t0, t)
        else:
            if t < t0:
                return None
            t1 = min(t1, t)
    return ((x0 + t0 * dx, y0 + t0 * dy), (x0 + t1 * dx, y0 + t1 * dy), t0 > 0, t1 < 1)


def _clip_polyline(points: list[Point], r: Rect) -> list[list[Point]]:
    runs: list[list[Point]] = []
    open_run = False
    for p, q in zip(points, points[1:], strict=False):
        part = _clip_segment(p, q, r)
        if part is None:
            open_run = False
            continue
        a, b, moved_a, moved_b = part
        if open_run and not moved_a:
            runs[-1].append(b)
        else:
            runs.append([a, b])
        open_run = not moved_b
    if len(points) == 1 and r[0] <= points[0][0] <= r[2] and r[1] <= points[0][1] <= r[3]:
        runs.append(list(points))
    return runs


def _clip_polygon(points: list[Point], r: Rect) -> list[Point]:
    """Sutherland–Hodgman against the rectangle ``r``."""
    def inside(p: Point, edge: int) -> bool:
        return (p[0] >= r[0], p[0] <= r[2], p[1] >= r[1], p[1] <= r[3])[edge]

    def cross(p: Point, q: Point, edge: int) -> Point:
        (x0, y0), (x1, y1) = p, q
        if edge < 2:
            x = r[0] if edge == 0 else r[2]
            t = (x - x0) / (x1 - x0)
            return x, y0 + t * (y1 - y0)
        y = r[1] if edge == 2 else r[3]
        t = (y - y0) / (y1 - y0)
        return x0 + t * (x1 - x0), y

    out = list(points)
    for edge in range(4):
        if not out:
            break
        source, out = out, []
        prev = source[-1]
        for cur in source:
            if inside(cur, edge):
                if not inside(prev, edge):
                    out.append(cross(prev, cur, edge))
                out.append(cur)
            elif inside(prev, edge):
                out.append(cross(prev, cur, edge))
            prev = cur
    return out


def _path_data(runs: list[tuple[list[Point], bool]]) -> str:
    parts = []
    for points, closed in runs:
        if not points:
            continue
        parts.append("M" + f"{_num(points[0][0])},{_num(points[0][1])}")
        parts += [f"L{_num(x)},{_num(y)}" for x, y in points[1:]]
        if closed:
            parts.append("Z")
    return " ".join(parts)


def _to_page(element: ET.Element, m: Sequence[float], clip: Rect | None, filled: bool) -> str:
    """Rewrite a shape drawn under the data transform ``m`` as a page-coordinate path cut to
    ``clip`` (the plot area). Returns "done", "empty" (nothing inside: drop it) or "kept"
    (curved: left as it is)."""
    try:
        runs = _outlines(element)
        if runs is None and _local(element.tag) == "path":  # curves (round markers): mapped,
            element.set("d", _transform_path(element.get("d", ""), m))  # not cut
            element.attrib.pop("vector-effect", None)
            return "done"
    except ValueError:
        return "kept"
    if runs is None:
        return "kept"
    page = [([_apply(m, x, y) for x, y in pts], closed) for pts, closed in runs]
    if clip is not None:
        cut: list[tuple[list[Point], bool]] = []
        left, top, right, bottom = clip
        for pts, closed in page:
            if all(left <= x <= right and top <= y <= bottom for x, y in pts):
                # wholly inside (most shapes): what the clippers would return, for less work
                if closed or filled:
                    if len(pts) >= 3:
                        cut.append((pts, True))
                elif pts:  # the clipped segments' ends: x0 + 1.0 * (x1 - x0), as computed there
                    cut.append(([pts[0]] + [(x0 + (x1 - x0), y0 + (y1 - y0)) for (x0, y0), (x1, y1)
                                            in zip(pts, pts[1:], strict=False)], False))
                continue
            if closed or filled:
                polygon = _clip_polygon(pts, clip)
                if len(polygon) >= 3:
                    cut.append((polygon, True))
            else:
                cut += [(run, False) for run in _clip_polyline(pts, clip)]
        page = cut
    if not page:
        return "empty"
    keep = {k: v for k, v in element.attrib.items()
            if k not in ("d", "points", "x", "y", "width", "height", "x1", "y1", "x2", "y2",
                         "vector-effect")}
    element.clear()
    element.tag = f"{{{_SVG}}}path"
    element.attrib.update(keep)
    element.set("d", _path_data(page))
    return "done"


def _transform_path(d: str, m: Sequence[float]) -> str:
    """Absolute ``M``/``L``/``C``/``Q``/``Z`` path data mapped by the affine ``m`` (exact for
    Bézier curves: their control points map with them)."""
    a, b, c, dd, e, f = m
    return " ".join(item if isinstance(item, str)
                    else f"{_num(a * item[0] + c * item[1] + e)},"
                         f"{_num(b * item[0] + dd * item[1] + f)}"
                    for item in _path_items(d))


@functools.lru_cache(maxsize=256)
def _path_items(d: str) -> tuple[str | Point, ...]:
    """Path data as its commands and points, in order (cached: markers share their shape).
    ValueError for what :func:`_transform_path` cannot map."""
    out: list[str | Point] = []
    numbers: list[float] = []

    def flush() -> None:
        if len(numbers) % 2:
            raise ValueError("odd number of coordinates")
        out.extend((numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2))
        numbers.clear()

    for token in _PATH_TOKEN.findall(d):
        if token.isalpha():
            flush()
            if token not in "MLCQZ":
                raise ValueError(f"path command {token} not handled")
            out.append(token)
        else:
            numbers.append(float(token))
    flush()
    return tuple(out)


def _is_rigid(m: Sequence[float]) -> bool:
    """A translation or rotation: strokes keep their width under it."""
    a, b, c, d, _, _ = m
    return abs(a * a + b * b - 1) < 1e-6 and abs(c * c + d * d - 1) < 1e-6 \
        and abs(a * c + b * d) < 1e-6


def portable_svg(raw: bytes, fig: FigureSize, background: str | None,
                 families: dict[str, str] | None = None, plot_area: Rect | None = None
                 ) -> bytes:
    """Qt's SVG made to draw the same in any renderer.

    Shapes drawn under the chart's log-scaled data transform with cosmetic pens
    ("non-scaling-stroke", which renderers treat differently) are rewritten as paths in page
    coordinates, cut to ``plot_area`` (so the file needs no clip paths); generic font names
    become the concrete family Qt used, with a generic fallback; width and height are
    physical; a background rectangle is added unless ``background`` is None."""
    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)
    root = ET.fromstring(_without_empty_groups(raw))
    identity = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    for parent in list(root.iter()):
        for group in [g for g in parent if _local(g.tag) == "g"]:
            match = _MATRIX.match(group.get("transform", ""))
            values = re.split(r"[\s,]+", match.group(1).strip()) if match else []
            m = tuple(float(v) for v in values) if len(values) == 6 else identity
            shapes = [el for el in group if _local(el.tag) in _MAPPED]
            if not shapes:
                continue
            if _is_rigid(m):  # strokes are the same with or without non-scaling-stroke
                for el in shapes:
                    el.attrib.pop("vector-effect", None)
                continue
            done = []
            for el in shapes:
                filled = (el.get("fill") or group.get("fill") or "black") != "none"
                outcome = _to_page(el, m, plot_area, filled)
                if outcome == "empty":
                    group.remove(el)
                elif outcome == "done":
                    done.append(el)
            rest = list(group)
            if not rest:
                parent.remove(group)
            elif len(done) == len(rest):
                group.attrib.pop("transform", None)
            elif done:  # mixed group: undo the group's transform on the rewritten shapes
                inverse = ",".join(repr(float(v)) for v in _inverse(m))
                for el in done:
                    el.set("transform", f"matrix({inverse})")
    families = families or {}
    for el in root.iter():
        family = el.get("font-family")
        if family is not None:
            concrete = families.get(family) or families.get("") or family
            names = [concrete] if concrete == family else [concrete, family]
            el.set("font-family", ", ".join(f"'{n}'" for n in names) + ", sans-serif")
    w_in, h_in = fig.inches
    root.set("width", f"{_num(w_in * 25.4)}mm")
    root.set("height", f"{_num(h_in * 25.4)}mm")
    if background is not None:
        lw, lh = fig.logical
        rect = ET.Element(f"{{{_SVG}}}rect", {"x": "0", "y": "0", "width": _num(lw),
                                             "height": _num(lh), "fill": background[:7],
                                             "stroke": "none"})
        first = next((i for i, el in enumerate(root)
                      if _local(el.tag) not in ("title", "desc", "defs")), len(root))
        root.insert(first, rect)
    for group in [g for g in root.iter() if _local(g.tag) == "g"]:
        for empty in [g for g in group if _local(g.tag) == "g" and len(g) == 0]:
            group.remove(empty)
    return b'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(
        root, encoding="unicode").encode("utf-8", "xmlcharrefreplace")


#: an empty group and the whitespace after it (a ">" inside an attribute value makes this
#: not match: such a group is then left to the tree)
_EMPTY_GROUP = re.compile(rb"<g\b[^>]*>\s*</g>\s*")
_OPEN_TAG = re.compile(rb"<g\b[^>]*>")


def _without_empty_groups(raw: bytes) -> bytes:
    """Qt's SVG less the empty groups inside its outer group (a group for every change of
    painter state: more than half of a chart's elements); removed before parsing, as the
    serialised result drops them anyway, so that little is parsed, walked and written."""
    first = _OPEN_TAG.search(raw)
    if first is None:
        return raw
    return raw[:first.end()] + _EMPTY_GROUP.sub(b"", raw[first.end():])


def _inverse(m: Sequence[float]) -> tuple[float, ...]:
    a, b, c, d, e, f = m
    det = a * d - b * c
    ia, ib, ic, id_ = d / det, -b / det, -c / det, a / det
    return ia, ib, ic, id_, -(ia * e + ic * f), -(ib * e + id_ * f)
