"""The Export Figure dialog: file (its extension picks PNG, SVG, PDF or HTML), size, DPI, theme,
transparent background. It remembers the last choices (``QSettings``, group ``export``); the
same choices drive Copy Figure.

The dialog only collects choices: :meth:`ExportDialog.options` returns a
:class:`FigureOptions` and the main window renders with :mod:`workbench.ui.figures.export`. Tests
drive it without ``exec()``: set the fields, then :meth:`ExportDialog.accept_path`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from workbench.records import record
from workbench.ui.figures.figure_size import (
    FORMATS,
    MAX_SIDE,
    SIZE_PRESETS,
    ExportError,
    FigureSize,
    format_of,
    resolve_size,
)

__all__ = ["ExportDialog", "FigureOptions", "load_options", "save_options", "FIGURE_FILTER"]

FIGURE_FILTER = ("PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf);;"
                 "Interactive web page (*.html)")
THEME_LABELS = {"light": "Light", "dark": "Dark", "presentation": "Presentation"}
CUSTOM = "custom"


@record(frozen=True)
class FigureOptions:
    """What to draw: a size preset key (or ``custom`` with width × height), DPI, theme."""

    size: str = "slide"
    width: int = 1600
    height: int = 1000
    dpi: float = 144.0
    theme: str = "light"
    transparent: bool = False

    def figure_size(self) -> FigureSize:
        if self.size == CUSTOM:
            return resolve_size(None, self.width, self.height, self.dpi, self.theme)
        return resolve_size(self.size, None, None, self.dpi, self.theme)


def load_options(settings: QSettings) -> FigureOptions:
    """The last choices, or the defaults; values that do not make sense are replaced."""
    default = FigureOptions()

    def get(key, kind, fallback):
        value = settings.value(f"export/{key}", fallback)
        try:
            if kind is bool:
                return value in (True, "true", "1", 1)
            return kind(value)
        except (TypeError, ValueError):
            return fallback

    size = get("size", str, default.size)
    theme = get("theme", str, default.theme)
    options = FigureOptions(
        size=size if size in SIZE_PRESETS or size == CUSTOM else default.size,
        width=get("width", int, default.width),
        height=get("height", int, default.height),
        dpi=get("dpi", float, default.dpi),
        theme=theme if theme in THEME_LABELS else default.theme,
        transparent=get("transparent", bool, default.transparent),
    )
    try:
        options.figure_size()
    except ExportError:
        return default
    return options


def save_options(settings: QSettings, options: FigureOptions) -> None:
    for key in ("size", "width", "height", "dpi", "theme", "transparent"):
        settings.setValue(f"export/{key}", getattr(options, key))


class ExportDialog(QDialog):
    """Choices for Export Figure. ``export_requested(path, options)`` is emitted on OK with
    a valid file name and size; the dialog then closes."""

    #: characters of a file's path the path field shows at least (as wide as an "n" each:
    #: a path's slashes and narrow letters make up for its wider ones)
    PATH_CHARS = 48

    export_requested = Signal(str, object)

    def __init__(self, settings: QSettings, start_path: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("export_dialog")
        self.setWindowTitle("Export Figure")
        self.settings = settings
        options = load_options(settings)

        self.path_edit = QLineEdit(settings.value("export/path", "") or start_path)
        self.path_edit.setObjectName("export_path")
        self.path_edit.setPlaceholderText("figure.png, figure.svg, figure.pdf or figure.html")
        # (wide enough for a folder and a file name: "/home/…/figures/llama_ffn.png" was
        # shown as "mples/llama_ffn.png" in a dialog as narrow as its other rows)
        self.path_edit.setMinimumWidth(
            self.path_edit.fontMetrics().horizontalAdvance("n" * self.PATH_CHARS) + 12)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(browse)

        self.size_combo = QComboBox()
        self.size_combo.setObjectName("export_size")
        for key, preset in SIZE_PRESETS.items():
            self.size_combo.addItem(preset.label, key)
        self.size_combo.addItem("Custom", CUSTOM)
        self.width_spin = QSpinBox()
        self.height_spin = QSpinBox()
        for spin, name in ((self.width_spin, "export_width"), (self.height_spin, "export_height")):
            spin.setObjectName(name)
            spin.setRange(16, MAX_SIDE)
            spin.setSuffix(" px")
        self.dpi_spin = QDoubleSpinBox()
        self.dpi_spin.setObjectName("export_dpi")
        self.dpi_spin.setRange(24, 2400)
        self.dpi_spin.setDecimals(0)
        self.dpi_spin.setSuffix(" dpi")
        self.theme_combo = QComboBox()
        self.theme_combo.setObjectName("export_theme")
        for key, label in THEME_LABELS.items():
            self.theme_combo.addItem(label, key)
        self.transparent_check = QCheckBox("Transparent background")
        self.transparent_check.setObjectName("export_transparent")
        self.summary = QLabel()
        self.summary.setObjectName("export_summary")
        self.summary.setWordWrap(True)

        size_row = QHBoxLayout()
        size_row.addWidget(self.width_spin)
        size_row.addWidget(QLabel("×"))
        size_row.addWidget(self.height_spin)
        size_row.addStretch(1)
        form = QFormLayout()
        form.addRow("File:", path_row)
        form.addRow("Size:", self.size_combo)
        form.addRow("Pixels:", size_row)
        form.addRow("Resolution:", self.dpi_spin)
        form.addRow("Theme:", self.theme_combo)
        form.addRow("", self.transparent_check)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.buttons = buttons
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addWidget(buttons)

        self.set_options(options)
        self.size_combo.currentIndexChanged.connect(self._preset_chosen)
        for signal in (self.size_combo.currentIndexChanged, self.width_spin.valueChanged,
                       self.height_spin.valueChanged, self.dpi_spin.valueChanged,
                       self.theme_combo.currentIndexChanged, self.path_edit.textChanged):
            signal.connect(self._sync)
        self._sync()

    # -- options ---------------------------------------------------------------------------

    def set_options(self, options: FigureOptions) -> None:
        self._updating = True
        self.size_combo.setCurrentIndex(max(0, self.size_combo.findData(options.size)))
        self.width_spin.setValue(options.width)
        self.height_spin.setValue(options.height)
        self.dpi_spin.setValue(options.dpi)
        self.theme_combo.setCurrentIndex(max(0, self.theme_combo.findData(options.theme)))
        self.transparent_check.setChecked(options.transparent)
        self._updating = False
        self._sync()

    def options(self) -> FigureOptions:
        return FigureOptions(size=self.size_combo.currentData(), width=self.width_spin.value(),
                             height=self.height_spin.value(), dpi=self.dpi_spin.value(),
                             theme=self.theme_combo.currentData(),
                             transparent=self.transparent_check.isChecked())

    def _preset_chosen(self, *_args) -> None:
        preset = SIZE_PRESETS.get(self.size_combo.currentData())
        if preset is not None and not self._updating:
            self.dpi_spin.setValue(preset.dpi)  # a paper column at print resolution, …

    def _sync(self, *_args) -> None:
        """Pixels follow a preset (and its DPI); only Custom edits them. The summary says
        what will be written, or what is wrong."""
        if getattr(self, "_updating", False):
            return
        custom = self.size_combo.currentData() == CUSTOM
        self.width_spin.setEnabled(custom)
        self.height_spin.setEnabled(custom)
        options = self.options()
        if not custom:
            w, h, _ = SIZE_PRESETS[options.size].pixels(options.dpi)
            self._updating = True
            self.width_spin.setValue(min(w, MAX_SIDE))
            self.height_spin.setValue(min(h, MAX_SIDE))
            self._updating = False
        problem = self.problem()
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(problem is None)
        if problem:
            self.summary.setText(problem)
            return
        fig = options.figure_size()
        w_in, h_in = fig.inches
        fmt = format_of(self.path_edit.text()).upper()
        grows = "; taller if its key needs the room" if fig.grows else ""
        page = (". One file that opens in any browser, offline: tooltips with each point's "
                "numbers and formulas, a key to hide machines, operations and memory levels, "
                "the Results table, zoom and pan, and the session" if fmt == "HTML" else "")
        self.summary.setText(f"{fmt}: {fig.width} × {fig.height} px at {fig.dpi:g} dpi "
                             f"({w_in:.2f} × {h_in:.2f} in{grows}){page}")

    def problem(self) -> str | None:
        """Why the current choices cannot be exported, or None."""
        text = self.path_edit.text().strip()
        if not text:
            return "Choose a file name ending in .png, .svg, .pdf or .html."
        try:
            format_of(text)
            self.options().figure_size()
        except ExportError as exc:
            return str(exc)
        return None

    # -- actions ---------------------------------------------------------------------------

    def _browse(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, "Export Figure", self.path_edit.text(),
                                                   FIGURE_FILTER)
        if path:
            if Path(path).suffix.lower().lstrip(".") not in FORMATS:
                path += ".html" if "*.html" in chosen else ".png"
            self.path_edit.setText(path)

    def accept_path(self, path: str | Path) -> None:
        """Export to ``path`` with the current choices, as if typed and OK pressed."""
        self.path_edit.setText(str(path))
        self.accept()

    def accept(self) -> None:
        if self.problem() is not None:
            return
        options = self.options()
        path = self.path_edit.text().strip()
        save_options(self.settings, options)
        self.settings.setValue("export/path", path)
        super().accept()
        self.export_requested.emit(path, options)
