"""The main window's Help menu: Reading the Chart, Counting Conventions, Show Log and About
(a mixin of :class:`~workbench.ui.window.main_window.MainWindow`)."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from workbench import __version__
from workbench.model.operations import CONVENTIONS
from workbench.model.roofline import FORMULAS
from workbench.ui.window.app import APP_NAME

__all__ = ["HelpMixin", "GUIDE_HTML"]


class HelpMixin:
    # -- help ------------------------------------------------------------------------------

    def show_guide(self) -> None:
        self._info("Reading the Chart", GUIDE_HTML)

    def show_conventions(self) -> None:
        from workbench.ui.widgets import escape_html

        # the texts are plain (they say "T_math < overhead"): escaped, or rich text would
        # take a "<" for the start of a tag and drop the rest
        items = "".join(f"<li>{escape_html(c)}</li>" for c in CONVENTIONS)
        formulas = "".join(f"<li><code>{escape_html(f)}</code></li>" for f in FORMULAS.values())
        self._info("Counting Conventions",
                   f"<h3>Counting</h3><ul>{items}</ul><h3>Roofline formulas</h3><ul>{formulas}</ul>")

    def show_about(self) -> None:
        self._info(f"About {APP_NAME}",
                   f"<h3>{APP_NAME} {__version__}</h3><p>The roofline model as a live, explained "
                   "chart: operations, machines, and every FLOP and byte counted in the open."
                   "</p><p>Sessions are YAML files; hardware presets list their sources.</p>")

    def show_log(self) -> None:
        from workbench.ui.dialogs.log_view import LogDialog
        from workbench.ui.log import log_path

        dialog = LogDialog(log_path(), self)
        dialog.open()
        self._log_dialog = dialog

    def _info(self, title: str, html: str) -> None:
        from workbench.ui.dialogs.info_dialog import InfoDialog

        box = InfoDialog(title, html, self)  # (scrolls: never taller than the screen)
        box.open()
        self._info_box = box

    def open_url(self, url: str) -> None:
        QDesktopServices.openUrl(QUrl(url))



GUIDE_HTML = f"""
<h3>Reading the roofline chart</h3>
<p><b>x</b>: arithmetic intensity, FLOPs per byte moved across the memory level
(main memory unless the operation chooses another). <b>y</b>: attainable FLOP/s.
Both axes are logarithmic.</p>
<ul>
<li>A <b>sloped roof</b> is a memory level: attainable = intensity × bandwidth. The main
memory's roof is drawn heavier.</li>
<li>A <b>flat roof</b> is a compute peak for one precision (dense figures).</li>
<li>The <b>ridge</b> is where they meet: {FORMULAS['ridge']}. Left of it an operation is
<b>memory-bound</b> (move fewer bytes: fuse, quantise, reuse); right of it,
<b>compute-bound</b>.</li>
<li>An operation is <b>overhead-bound</b> when its derated time is below its kernels' launch
overhead ({FORMULAS['t_predicted']}): fuse it or batch it.</li>
<li>Each point is one operation on one machine: colour = operation, shape = machine.
Hover for numbers; click to edit it.</li>
</ul>
<p>Edit any dimension in the editor and watch the point move; the derivation under the form
shows every FLOP term and byte term with its formula.</p>
"""

