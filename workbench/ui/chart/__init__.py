"""The live roofline chart: a thin pyqtgraph view of :mod:`workbench.model.chart.scene`.

``canvas`` is the widget; it assembles parts that each own their state and talk through
public methods only: ``styles`` (theme, pens, text pools), ``roofs`` (regions, roofs, ridges),
``points`` (the operations' points), ``overlays`` (sweeps, measurements, pairs), ``layout``
(texts placed), ``key`` (tags and key), ``legend``, ``titles``, ``hover`` (the mouse) and
``session_view`` (the session drawn, notes). ``items`` and ``axes`` are the item classes,
``theme`` the colours, fonts and sizes of light, dark and presentation.

May import: :mod:`workbench.ui.bridge`, :mod:`workbench.ui.widgets`, and what lies below the
user interface; no other room of ``workbench.ui``.
"""
