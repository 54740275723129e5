"""Start-up imports what the first window shows, and the first full placing works out what is
drawn once for each frame of the plot.

The first window (the built-in example: operations, editor, derivation, chart, results) needs
no whole model, no panel behind another tab and no dialog, and the example has no sweep, no
measurement and no compared pair: their modules are imported when first used. A fresh
interpreter starts the app as ``roofline-workbench`` does and lists what it imported by the
time the window is painted.
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import HANG_GUARD_S, ROOT

_START = r"""
import json, sys
from workbench.ui.window.launch import start
window = start()
from PySide6.QtWidgets import QApplication, QDockWidget
QApplication.processEvents()
window.repaint()
shown = [d.objectName() for d in window.findChildren(QDockWidget)
         if d.isVisible() and not d.visibleRegion().isEmpty()]
session = window.document.session
print(json.dumps({"modules": sorted(sys.modules), "shown": sorted(shown),
                  "operations": len(session.operations),
                  "overlays": [sum(e.sweep is not None for e in session.operations),
                               len(session.measurements), len(session.comparisons)]}))
"""

#: modules the first window does not use, each imported when its feature is first used
NOT_AT_START = (
    "workbench.model.llm.session",  # a whole model (Edit ▸ Add Model…)
    "workbench.model.llm.architecture",
    "workbench.ui.editors.model_editor",
    "workbench.ui.panels.model_panel",  # the Model tab, behind Results
    "workbench.ui.panels.hardware_panel",  # the Hardware tab, behind Editor
    "workbench.ui.panels.measurements_panel",
    "workbench.ui.panels.compare_panel",
    "workbench.ui.panels.sweep_plot",
    "workbench.document.models",
    "workbench.io.model_entries",
    "concurrent.futures",  # the autosave's worker, made by its first background write
    # sweeps, measurements and compared pairs: read, drawn and edited once a session has one
    "workbench.model.sweeps",
    "workbench.model.measured",
    "workbench.model.measured_session",
    "workbench.model.comparison",
    "workbench.model.profile",
)


def _fresh_env(tmp_path) -> dict[str, str]:
    """A started app's environment: offscreen, its settings, data and home in ``tmp_path``."""
    return {"QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


def test_the_first_window_imports_no_model_nor_hidden_panel(tmp_path):
    env = _fresh_env(tmp_path)
    proc = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    # the window is the one a user sees: the example's operations, the default docks
    assert seen["operations"] > 0
    assert {"OperationsDock", "EditorDock", "ResultsDock"} <= set(seen["shown"])
    assert not {"ModelDock", "HardwareDock"} & set(seen["shown"])
    assert seen["overlays"] == [0, 0, 0]  # (no sweep, measurement or pair to draw)
    loaded = set(seen["modules"])
    assert "workbench.ui.chart.canvas" in loaded  # (the list is the started app's)
    assert sorted(loaded & set(NOT_AT_START)) == []


def test_a_full_placing_works_out_each_frames_occupancy_once(open_window, monkeypatch):
    """The first window's placing of the texts: the key's passes each start with the legend
    inside the plot and may move it outside, so the plot's frame goes back and forth; what
    is drawn is the same for each frame, and worked out once for it within one placing."""
    import contextlib

    from workbench.ui.chart.labels import LabelLayer

    placings = [0]
    worked_out: list[tuple] = []
    now, reusing = LabelLayer._occupancy_now, LabelLayer.reusing_occupancy

    def counted(self):
        worked_out.append((placings[0], self._frame(), tuple(self._canvas.view_to_scene())))
        return now(self)

    @contextlib.contextmanager
    def one_placing(self):
        if not self._reuse:
            placings[0] += 1
        with reusing(self):
            yield

    monkeypatch.setattr(LabelLayer, "_occupancy_now", counted)
    monkeypatch.setattr(LabelLayer, "reusing_occupancy", one_placing)
    win = open_window(ROOT / "workbench" / "examples" / "llama_ffn.yaml")
    win.canvas.flush_layout()
    assert win.canvas.labels.text_layout is not None  # (placed)
    assert len({key[1] for key in worked_out}) > 1  # (the legend moved: frames to tell apart)
    assert len(worked_out) == len(set(worked_out))


_IMPORT_ORDER = r"""
import json, sys

order = []


class Recorder:
    "Lists each module as it is first imported (and finds none itself)."

    def find_spec(self, name, path=None, target=None):
        order.append(name)
        return None


sys.meta_path.insert(0, Recorder())
from workbench.ui.window.launch import start
window = start()
from PySide6.QtWidgets import QApplication
QApplication.processEvents()
window.repaint()
print(json.dumps(order))
"""

#: the parts of the product that import no Qt (the import contracts in pyproject.toml)
QT_FREE = ("workbench.model", "workbench.io", "workbench.document", "workbench.records")


def test_start_imports_the_products_qt_free_modules_before_qt(tmp_path):
    """PySide6 reads the source of every module imported after it (to see whether it names
    PySide6): start-up imports the model, document and files it needs first."""
    env = _fresh_env(tmp_path)
    proc = subprocess.run([sys.executable, "-c", _IMPORT_ORDER], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    order = json.loads(proc.stdout.strip().splitlines()[-1])
    qt = order.index("PySide6")
    first = [m for m in order[:qt] if m.startswith(QT_FREE)]
    after = [m for m in order[qt:] if m.startswith(QT_FREE)]
    assert "workbench.model.chart.placement" in first  # (the chart's placing: many modules)
    assert "workbench.ui.chart.canvas" in order[qt:]  # (the window's, after Qt)
    assert after == []
