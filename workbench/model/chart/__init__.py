"""What the roofline chart shows, Qt-free: ``scene`` (roofs, points, legend, axis titles in
data units), ``overlays`` (sweep paths, measured points, compared pairs), ``layout`` (where
each text goes, in device pixels) and ``key`` (the tags and key of points without a clean
place). The live canvas (:mod:`workbench.ui.chart`) and every figure draw from these.

May import the rest of :mod:`workbench.model`, not :mod:`workbench.model.llm`.
"""
