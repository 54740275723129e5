"""Dialogs and what they run: ``preset_dialog`` (choosing hardware presets, and the machine
summary the hardware panel shares), ``measure_dialog`` (Hardware ▸ Measure This Machine…),
``measure_op`` (timing the selected operation here), ``load_warnings`` (what an opened file
left to example values), ``title_dialog`` (Edit ▸ Title and Notes…).

May import: :mod:`workbench.ui.bridge`, :mod:`workbench.ui.widgets`, and what lies below the
user interface; no other room of ``workbench.ui``.
"""
