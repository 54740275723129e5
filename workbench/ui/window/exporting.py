"""The main window's exports: File ▸ Export Figure…, Copy Figure, the sweep plot's Export… and
Copy Plot, the Model tab's Export Chart… and Copy Chart, and Export Results as CSV (a mixin of
:class:`~workbench.ui.window.main_window.MainWindow`; the figures themselves are drawn by
:mod:`workbench.ui.figures.export` and :mod:`workbench.ui.figures.plot_figure`), and
:func:`render_sweep_plot`, which the window and ``render --sweep-plot`` share."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtWidgets import QFileDialog

__all__ = ["ExportingMixin", "render_sweep_plot", "render_throughput_chart",
           "sweep_plot_figure", "throughput_chart_figure"]


def render_sweep_plot(session, op_id: int | None, path: str | Path, fig, *,
                      mode: str = "flops", theme: str | None = None,
                      transparent: bool = False):
    """Write the sweep plot of operation ``op_id`` of ``session`` (see
    :func:`sweep_plot_figure`) to ``path`` (``.png``, ``.svg`` or ``.pdf``), atomically.
    Returns the size drawn; raises as :func:`sweep_plot_figure` does, for another format
    too, and ``OSError`` when the file cannot be written."""
    return _write_figure(path, lambda fmt: sweep_plot_figure(
        session, op_id, fmt, fig, mode=mode, theme=theme, transparent=transparent))


def _write_figure(path: str | Path, draw):
    """Write ``draw(fmt)``'s bytes (with the size drawn) to ``path`` atomically, ``fmt`` its
    extension's: ``png``, ``svg`` or ``pdf`` (else an ``ExportError``). Returns the size."""
    from workbench.io.atomic import write_atomic
    from workbench.ui.figures.export import format_of
    from workbench.ui.figures.figure_size import PLOT_FORMATS

    fmt = format_of(path, PLOT_FORMATS)
    payload, fig = draw(fmt)
    write_atomic(Path(path), payload)
    return fig


def sweep_plot_figure(session, op_id: int | None, fmt: str, fig, *, mode: str = "flops",
                      theme: str | None = None, transparent: bool = False):
    """The sweep plot of operation ``op_id`` of ``session`` (drawn from a copy, in ``theme``
    or the session's own) as the bytes of a ``png``, ``svg`` or ``pdf`` file at the figure
    size ``fig``, its title line above it: attainable FLOP/s (``mode`` "flops") or the
    best-case time ("time") against the swept parameter, on every visible machine; and the
    size drawn (a paper column may have grown to hold the legend). Raises
    :class:`~workbench.ui.figures.export.ExportError` for an operation without a sweep or a
    page too small."""
    import copy

    from workbench.document import Document
    from workbench.ui.bridge import Workspace
    from workbench.ui.chart.theme import get_theme
    from workbench.ui.figures.export import ExportError
    from workbench.ui.figures.plot_figure import plot_figure
    from workbench.ui.panels.sweep_plot import SweepPlot

    session = copy.deepcopy(session)
    if theme is not None:
        session.view.theme = theme
    workspace = Workspace(Document(session))
    workspace.selection.select(op_id)
    plot = SweepPlot(workspace)  # (drawn at the figure's size, never on screen)
    try:
        plot.set_mode(mode)
        if plot.is_empty():
            raise ExportError(" ".join(plot.empty_text().split()))
        plot.bare()
        colours = get_theme(session.view.theme)
        return plot_figure(plot, plot.plot_widget, fmt, fig, title=plot.title_html,
                           foreground=colours.foreground, background=colours.background,
                           transparent=transparent)
    finally:
        plot.deleteLater()
        workspace.deleteLater()


def render_throughput_chart(curves, title: str, path: str | Path, fig, *,
                            theme: str = "light", transparent: bool = False):
    """Write the Model tab's throughput chart (``curves`` under ``title``; see
    :func:`throughput_chart_figure`) to ``path`` (``.png``, ``.svg`` or ``.pdf``). Returns
    the size drawn; raises :class:`~workbench.ui.figures.export.ExportError` for another
    format and ``OSError`` when the file cannot be written."""
    return _write_figure(path, lambda fmt: throughput_chart_figure(
        curves, title, fmt, fig, theme=theme, transparent=transparent))


def throughput_chart_figure(curves, title: str, fmt: str, fig, *, theme: str = "light",
                            transparent: bool = False):
    """The Model tab's throughput chart (``curves`` under ``title``) as the bytes of a
    ``png``, ``svg`` or ``pdf`` file at the figure size ``fig``, dark in the dark theme, and
    the size drawn: as every figure is made, its SVG first (a page of physical inches, tick
    labels sized for it), the PNG and the PDF drawn from it."""
    from PySide6.QtCore import QRectF

    from workbench.ui.figures.export import painting_svg, svg_as
    from workbench.ui.figures.svg_portable import portable_tree, svg_bytes
    from workbench.ui.panels.throughput_chart import chart_background, paint_chart, tick_pt

    dark = theme == "dark"
    width_in, height_in = fig.inches
    w, h = width_in * 96, height_in * 96
    with painting_svg(w, h, title or "Throughput against latency",
                      "Throughput against latency, made with Roofline Workbench") as (
            painter, data):
        paint_chart(painter, QRectF(0, 0, w, h), curves, title, pt=tick_pt(width_in),
                    dark=dark, fill=not transparent)
    svg = svg_bytes(portable_tree(bytes(data), fig, None))  # (its own background painted)
    return svg_as(svg, fmt, fig, title or "Throughput against latency",
                  chart_background(dark), transparent), fig


class ExportingMixin:
    # -- figures and tables ----------------------------------------------------------------

    def _figure_stem(self) -> str:
        if self.document.path:
            return self.document.path.stem
        return Path(self.example).stem if self.example else "roofline"

    def _start_at(self, name: str) -> str:
        """Where a file dialog for ``name`` starts: beside the session's file, else home."""
        return str((self.document.path.parent if self.document.path else Path.home()) / name)

    def on_export_figure(self):
        """Open the Export Figure dialog (not modal-blocking: tests reach it as
        ``export_dialog`` and call its ``accept_path``)."""
        from workbench.ui.figures.export_dialog import ExportDialog

        start = self._start_at(f"{self._figure_stem()}.png")
        dialog = ExportDialog(self.settings, start, self)
        dialog.export_requested.connect(self.export_figure)
        self.export_dialog = dialog
        dialog.open()
        return dialog

    def export_figure(self, path: str | Path, options=None) -> bool:
        """Draw the chart as shown (same zoom; the chart as fitted is fitted to the figure's
        page, as the command line does) to ``path`` with ``options`` (a
        :class:`~workbench.ui.figures.export_dialog.FigureOptions`; default: the last choices)."""
        from workbench.ui.figures.export import render_figure
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)
        return self._exported("figure", path, lambda: render_figure(
            self.document.session, path, figure=options.figure_size(), theme=options.theme,
            transparent=options.transparent, view_range=self.canvas.figure_view_range()))

    def _exported(self, what: str, path: str | Path, draw) -> bool:
        """``draw()`` a figure to ``path``: the size it drew said in the status bar, or why
        it could not (a bad size or format, a file that cannot be written) in a dialog."""
        from workbench.ui.figures.export import ExportError

        try:
            fig = draw()
        except ExportError as exc:
            self.show_error(f"Cannot export {what}", str(exc))
            return False
        except OSError as exc:
            self.show_error(f"Cannot export {what}", f"{path}: {exc.strerror or exc}")
            return False
        self.statusBar().showMessage(f"Exported {path} ({fig.width} × {fig.height} px)", 5000)
        return True

    def copy_figure(self, options=None):
        """Put the chart on the clipboard as an image, with the last export choices."""
        from workbench.ui.figures.export import figure_image
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)
        return self._copied("figure", "chart", lambda: figure_image(
            self.document.session, options.figure_size(), theme=options.theme,
            transparent=options.transparent, view_range=self.canvas.figure_view_range()))

    def _copied(self, what: str, shown_as: str, draw):
        """Put ``draw()``'s image on the clipboard, its size said in the status bar (the
        ``shown_as`` copied), or why it could not be drawn in a dialog (None)."""
        from PySide6.QtGui import QGuiApplication

        from workbench.ui.figures.export import ExportError

        try:
            image = draw()
        except ExportError as exc:
            self.show_error(f"Cannot copy {what}", str(exc))
            return None
        QGuiApplication.clipboard().setImage(image)
        self.statusBar().showMessage(
            f"Copied the {shown_as} ({image.width()} × {image.height()} px)", 4000)
        return image

    def _asked_path(self, caption: str, name: str,
                    filters: str = "PDF (*.pdf);;SVG (*.svg);;PNG (*.png)") -> str:
        """Where the user chooses to write ``name`` (the dialog starts beside the session's
        file), or "" when they cancel. A name typed without an extension takes the one of the
        file type chosen ("plot" with PDF chosen is plot.pdf), as Save As adds .yaml."""
        path, chosen = QFileDialog.getSaveFileName(self, caption, self._start_at(name), filters)
        suffix = re.search(r"\*(\.\w+)", chosen or "")
        if not path or suffix is None or Path(path).suffix:
            return path
        named = self.with_extension(path, suffix.group(1))
        return str(named) if named is not None else ""

    def on_export_sweep_plot(self) -> bool:
        """The sweep plot's Export…: where to write it, then :meth:`export_sweep_plot`."""
        path = self._asked_path("Export Sweep Plot", f"{self._figure_stem()}-sweep.pdf")
        return self.export_sweep_plot(path) if path else False

    def _shown_sweep_plot(self):
        """The sweep plot, when it shows a sweep (else an ``ExportError`` saying why)."""
        from workbench.ui.figures.export import ExportError

        if self.sweep_plot.is_empty():
            raise ExportError("The selected operation has no sweep to plot.")
        return self.sweep_plot

    def export_sweep_plot(self, path: str | Path, options=None) -> bool:
        """Draw the sweep plot of the selected operation (what the plot shows: FLOP/s or
        time) to ``path`` at the size, DPI, theme and background of the figure ``options``
        (default: the last choices), its title line above it: the page ``render
        --sweep-plot`` makes of the session as saved."""
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)

        def draw():
            return render_sweep_plot(
                self.document.session, self.workspace.selection.current, path,
                options.figure_size(), mode=self._shown_sweep_plot().mode,
                theme=options.theme, transparent=options.transparent)

        return self._exported("sweep plot", path, draw)

    def copy_sweep_plot(self, options=None):
        """Put the sweep plot on the clipboard as an image, drawn as its Export… draws it
        (the last figure choices)."""
        from workbench.ui.figures.export import background_of, svg_image
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)

        def draw():
            svg, fig = sweep_plot_figure(
                self.document.session, self.workspace.selection.current, "svg",
                options.figure_size(), mode=self._shown_sweep_plot().mode,
                theme=options.theme, transparent=options.transparent)
            return svg_image(svg, fig, background_of(options.theme), options.transparent)

        return self._copied("sweep plot", "sweep plot", draw)

    def on_export_throughput_chart(self) -> bool:
        """The Model tab's Export Chart…: where to write it, then
        :meth:`export_throughput_chart`."""
        path = self._asked_path("Export Throughput Chart",
                                f"{self._figure_stem()}-throughput.pdf")
        return self.export_throughput_chart(path) if path else False

    def _shown_throughput_chart(self) -> tuple[list, str]:
        """The Model tab's throughput chart's curves and title (an ``ExportError`` when no
        model is shown)."""
        from workbench.ui.figures.export import ExportError

        curves, title = self.model_panel.shown_chart()
        if not curves:
            raise ExportError("No model is shown to chart.")
        return curves, title

    def export_throughput_chart(self, path: str | Path, options=None) -> bool:
        """Draw the Model tab's throughput chart to ``path`` at the size, DPI, theme and
        background of the figure ``options`` (default: the last choices)."""
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)
        return self._exported("throughput chart", path, lambda: render_throughput_chart(
            *self._shown_throughput_chart(), path, options.figure_size(), theme=options.theme,
            transparent=options.transparent))

    def copy_throughput_chart(self, options=None):
        """Put the Model tab's throughput chart on the clipboard as an image, drawn as its
        Export Chart… draws it (the last figure choices)."""
        from workbench.ui.figures.export import svg_image
        from workbench.ui.figures.export_dialog import load_options
        from workbench.ui.panels.throughput_chart import chart_background

        options = options or load_options(self.settings)

        def draw():
            svg, fig = throughput_chart_figure(
                *self._shown_throughput_chart(), "svg", options.figure_size(),
                theme=options.theme, transparent=options.transparent)
            return svg_image(svg, fig, chart_background(options.theme == "dark"),
                             options.transparent)

        return self._copied("throughput chart", "throughput chart", draw)

    def on_export_csv(self) -> bool:
        path = self._asked_path("Export Results as CSV", f"{self._figure_stem()}-results.csv",
                                "CSV table (*.csv);;All files (*)")
        return self.export_results_csv(path) if path else False

    def export_results_csv(self, path: str | Path) -> bool:
        """Every operation × machine row, numbers in base SI units, units in the headers."""
        try:
            count = self.results_table.export_csv(path)
        except OSError as exc:
            self.show_error("Cannot export results", f"{path}: {exc.strerror or exc}")
            return False
        self.statusBar().showMessage(f"Exported {count} row{'s' * (count != 1)} to {path}",
                                     5000)
        return True

