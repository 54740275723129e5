"""The chart and the exporter use their libraries' public API only, import downwards, and
stay in modules of a readable size."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "workbench"
CHART = ["ui/chart/canvas.py", "ui/chart/styles.py", "ui/chart/roofs.py", "ui/chart/points.py",
         "ui/chart/overlay_items.py", "ui/chart/labels.py", "ui/chart/text_requests.py",
         "ui/chart/roof_values.py",
         "ui/chart/tags.py", "ui/chart/legend.py", "ui/chart/drawn_cells.py",
         "ui/chart/titles.py", "ui/chart/hover.py", "ui/chart/session_view.py",
         "ui/chart/items.py", "ui/chart/axes.py", "ui/figures/export.py",
         "ui/figures/figure_size.py", "ui/figures/svg_portable.py", "ui/panels/sweep_plot.py",
         "model/chart/scene.py", "model/chart/placement.py", "model/chart/candidates.py",
         "model/chart/kept_places.py", "model/chart/occupancy.py", "model/chart/held_tables.py",
         "model/chart/overlay_data.py", "model/chart/sweep_cache.py",
         "model/chart/profiled_kernels.py", "model/chart/leader_places.py",
         "model/chart/readouts.py", "model/chart/machine_texts.py",
         "ui/panels/throughput_chart.py", "ui/mnemonics.py",
         "ui/figures/plot_figure.py", "ui/panels/plot_parts.py", "ui/figures/page_marks.py"]
#: what the chart once reached into: pyqtgraph's and shiboken's internals, a canvas flag
#: set from outside, dataclasses built without their __init__
FORBIDDEN = ["wrapInstance", "fragmentAtlas", "_exportOpts", "_updateLabel", "_constructing",
             "object.__new__", "_GraphicsObject__", "_getLineSegments",
             "_shouldUseDrawLineSegments", "drawPixmapFragments"]


@pytest.mark.parametrize("name", CHART)
def test_no_library_internals(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    found = [word for word in FORBIDDEN if word in text]
    assert found == [], f"{name} uses {found}"


@pytest.mark.parametrize("name", CHART)
def test_modules_of_a_readable_size(name):
    lines = (ROOT / name).read_text(encoding="utf-8").count("\n")
    assert lines <= 800, f"{name} has {lines} lines"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_the_exporter_does_not_import_the_application():
    """app → main_window → export → app was a cycle."""
    for name in ("ui/figures/export.py", "ui/figures/figure_size.py", "ui/figures/svg_portable.py"):
        assert "workbench.ui.window.app" not in imports_of(ROOT / name), name


def test_the_text_layout_and_the_scene_are_free_of_qt():
    for name in ("model/chart/placement.py", "model/chart/candidates.py",
                 "model/chart/kept_places.py", "model/chart/occupancy.py",
                 "model/chart/held_tables.py", "model/chart/scene.py",
                 "model/chart/machine_texts.py"):
        qt = {m for m in imports_of(ROOT / name)
              if m.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6")
              or m.startswith("workbench.ui")}
        assert qt == set(), f"{name} imports {qt}"
