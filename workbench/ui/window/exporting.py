"""The main window's exports: File ▸ Export Figure…, Copy Figure and Export Results as CSV
(a mixin of :class:`~workbench.ui.window.main_window.MainWindow`; the figures themselves are
drawn by :mod:`workbench.ui.figures.export`)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

__all__ = ["ExportingMixin"]


class ExportingMixin:
    # -- figures and tables ----------------------------------------------------------------

    def _figure_stem(self) -> str:
        if self.document.path:
            return self.document.path.stem
        return Path(self.example).stem if self.example else "roofline"

    def on_export_figure(self):
        """Open the Export Figure dialog (not modal-blocking: tests reach it as
        ``export_dialog`` and call its ``accept_path``)."""
        from workbench.ui.figures.export_dialog import ExportDialog

        start = str((self.document.path.parent if self.document.path else Path.home())
                    / f"{self._figure_stem()}.png")
        dialog = ExportDialog(self.settings, start, self)
        dialog.export_requested.connect(self.export_figure)
        self.export_dialog = dialog
        dialog.open()
        return dialog

    def export_figure(self, path: str | Path, options=None) -> bool:
        """Draw the chart as shown (same zoom; the chart as fitted is fitted to the figure's
        page, as the command line does) to ``path`` with ``options`` (a
        :class:`~workbench.ui.figures.export_dialog.FigureOptions`; default: the last choices)."""
        from workbench.ui.figures.export import ExportError, render_figure
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)
        try:
            fig = render_figure(self.document.session, path, figure=options.figure_size(),
                                theme=options.theme, transparent=options.transparent,
                                view_range=self.canvas.figure_view_range())
        except ExportError as exc:
            self.show_error("Cannot export figure", str(exc))
            return False
        except OSError as exc:
            self.show_error("Cannot export figure", f"{path}: {exc.strerror or exc}")
            return False
        self.statusBar().showMessage(f"Exported {path} ({fig.width} × {fig.height} px)", 5000)
        return True

    def copy_figure(self, options=None):
        """Put the chart on the clipboard as an image, with the last export choices."""
        from PySide6.QtGui import QGuiApplication

        from workbench.ui.figures.export import ExportError, figure_image
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)
        try:
            fig = options.figure_size()
            image = figure_image(self.document.session, fig, theme=options.theme,
                                 transparent=options.transparent,
                                 view_range=self.canvas.figure_view_range())
        except ExportError as exc:
            self.show_error("Cannot copy figure", str(exc))
            return None
        QGuiApplication.clipboard().setImage(image)
        self.statusBar().showMessage(
            f"Copied the chart ({image.width()} × {image.height()} px)", 4000)
        return image

    def on_export_csv(self) -> bool:
        start = str((self.document.path.parent if self.document.path else Path.home())
                    / f"{self._figure_stem()}-results.csv")
        path, _ = QFileDialog.getSaveFileName(self, "Export Results as CSV", start,
                                              "CSV table (*.csv);;All files (*)")
        return self.export_results_csv(path) if path else False

    def export_results_csv(self, path: str | Path) -> bool:
        """Every operation × machine row, numbers in base SI units, units in the headers."""
        try:
            count = self.results_table.export_csv(path)
        except OSError as exc:
            self.show_error("Cannot export results", f"{path}: {exc.strerror or exc}")
            return False
        self.statusBar().showMessage(f"Exported {count} rows to {path}", 5000)
        return True

