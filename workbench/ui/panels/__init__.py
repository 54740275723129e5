"""The docked panels and their table models: ``operations_panel`` (with ``operations_model``
and ``model_group``), ``results_table`` (with ``results_model``), ``hardware_panel``,
``measurements_panel`` (with ``measurements_model``), ``compare_panel``, ``model_panel`` (with
``model_figures`` and ``throughput_chart``), ``sweep_plot``; ``docked`` is a panel that does no
work while hidden.

May import: :mod:`workbench.ui.chart`, :mod:`workbench.ui.editors`,
:mod:`workbench.ui.dialogs`, :mod:`workbench.ui.bridge`, :mod:`workbench.ui.widgets`, and
what lies below the user interface; not the figures or the window.
"""
