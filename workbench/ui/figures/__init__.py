"""Figures: ``export`` (one renderer for PNG, SVG, PDF and the clipboard, shared by the app and
``roofline-workbench render``), ``figure_size`` (presets and limits), ``svg_portable`` (SVG
that draws the same in every renderer) and ``export_dialog`` (File ▸ Export Figure…).

May import: :mod:`workbench.ui.chart`, :mod:`workbench.ui.bridge`,
:mod:`workbench.ui.widgets`, and what lies below the user interface; not the panels, editors,
dialogs or window (nor the QApplication: an export needs only a running one).
"""
