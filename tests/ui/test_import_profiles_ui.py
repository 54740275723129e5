"""File ▸ Import Measurements… with a PyTorch profiler trace and a rocprof-compute
pmc_perf.csv, driven through the real window: the points join the Measurements panel, the
machine the file names joins the session, the status bar says what was counted, and a bad
file changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui import test_analysis_panels

window = test_analysis_panels.window  # the shown main window, closed after each test

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSION = Path(__file__).resolve().parents[2] / "workbench" / "examples" / "llama_ffn.yaml"


def _bmm_trace(folder: Path, device: str, more: str = "") -> Path:
    """``step.json`` in ``folder``: a trace of one fp16 bmm (8 × 256 × 64 by 64 × 256) and
    its 3 µs kernel on the GPU ``device`` (a deviceProperties entry), then the events
    ``more``."""
    trace = folder / "step.json"
    trace.write_text(
        '{"deviceProperties": [' + device + '], "traceEvents": ['
        '{"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": 1, "ts": 0, '
        '"dur": 90, "args": {"Input Dims": [[8, 256, 64], [8, 64, 256]], '
        '"Input type": ["c10::Half", "c10::Half"]}},'
        '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, '
        '"ts": 10, "dur": 4, "args": {"correlation": 3}},'
        '{"ph": "X", "cat": "kernel", "name": "sm90_hgemm", "pid": 0, "tid": 7, "ts": 20, '
        '"dur": 3, "args": {"correlation": 3, "device": 0}}' + ("," + more if more else "")
        + ']}', encoding="utf-8")
    return trace


def test_trace_import_adds_its_gpu_and_says_what_was_counted(qtbot, window, tmp_path):
    assert window.open_path(SESSION)
    machines = [e.hardware.name for e in window.document.session.hardware]
    # (and an index_select whose kernel is not counted)
    trace = _bmm_trace(tmp_path, '{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150e9}',
                       '{"ph": "X", "cat": "cpu_op", "name": "aten::index_select", "pid": 1, '
                       '"tid": 1, "ts": 100, "dur": 20, "args": {}},'
                       '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", '
                       '"pid": 1, "tid": 1, "ts": 105, "dur": 4, "args": {"correlation": 4}},'
                       '{"ph": "X", "cat": "kernel", "name": "indexSelectLargeIndex", "pid": 0, '
                       '"tid": 7, "ts": 120, "dur": 1, "args": {"correlation": 4, "device": 0}}')
    assert window.import_measurements(trace)
    session = window.document.session
    # the H200 preset joined; the one counted kernel is judged on it
    assert [e.hardware.name for e in session.hardware][:len(machines)] == machines
    assert session.machines_matching("h200")
    (m,) = session.measurements
    assert m.name == "sm90_hgemm" and m.hardware == "h200"
    assert m.flops == 2 * 8 * 256 * 256 * 64  # bmm: 2·b·m·n·k
    # 3 of 4 µs counted: 75 %; indexSelect's 1 µs listed
    message = window.statusBar().currentMessage()
    assert "Imported 1 measured point from step.json" in message
    assert "counted 75 % of GPU time; 25 % in 1 kernel not counted (indexSelectLargeIndex)" \
        in message
    panel = window.measurements_panel
    window.measurements_dock.show()
    qtbot.waitUntil(lambda: panel.model.rowCount() >= 1)
    assert any(panel.model.row(i).measurement.name == "sm90_hgemm"
               for i in range(panel.model.rowCount()))
    # undo takes the points back, then the machine
    window.document.undo()
    assert session.measurements == []
    window.document.undo()
    assert not session.machines_matching("h200")


def test_the_panel_names_the_traces_gpu_and_the_machines_its_points_are_judged_on(
        qtbot, window, tmp_path):
    """What the command line notes beside an import is said in the app too: the GPU the
    trace ran on, and that a GPU without a preset leaves the points judged on every
    machine of the session."""
    assert window.open_path(SESSION)
    trace = _bmm_trace(tmp_path, '{"id": 0, "name": "NVIDIA RTX PRO 9000 Blackwell"}')
    assert window.import_measurements(trace)
    window.measurements_dock.show()
    label = window.measurements_panel.import_label
    qtbot.waitUntil(label.isVisible)
    said = label.text()
    assert "'NVIDIA RTX PRO 9000 Blackwell'" in said
    assert "judged on every machine of the session" in said


def test_workload_counters_import_with_their_roofline_machine(qtbot, window):
    assert window.open_path(SESSION)
    assert window.import_measurements(FIXTURES / "rocprof" / "vcopy-mi200" / "pmc_perf.csv")
    session = window.document.session
    (mi200,) = session.machines_matching("MI200 GPU 2 (rocprof-compute roofline)")
    assert mi200.hardware.memory["l1"] == 9263.2725e9
    (point,) = session.measurements
    assert set(point.levels) == {"l1", "l2", "dram"} and point.count == 3
    assert point.hardware == "MI200 GPU 2 (rocprof-compute roofline)"


def test_truncated_trace_shows_one_line_and_changes_nothing(qtbot, window, tmp_path):
    assert window.open_path(SESSION)
    before = (list(window.document.session.measurements),
              [e.hardware.name for e in window.document.session.hardware])
    data = (FIXTURES / "kineto" / "triton_example.json.gz").read_bytes()
    cut = tmp_path / "cut.pt.trace.json.gz"
    cut.write_bytes(data[:1000])
    assert not window.import_measurements(cut)
    assert "cut.pt.trace.json.gz" in window.last_error and "truncated" in window.last_error
    assert "\n" not in window.last_error
    assert (window.document.session.measurements,
            [e.hardware.name for e in window.document.session.hardware]) == before
    assert not window.document.modified


def test_compressed_traces_and_workloads_are_read_under_the_progress_dialog(qtbot, window):
    """A .gz trace's size on disk says little of what it holds (the sampled rank's 124 KB
    are megabytes of JSON), and a workload folder has no size of its own: both are read off
    the window's thread under the progress dialog with Cancel, as a large CSV is."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication, QProgressDialog

    seen: list[str] = []

    class Shown(QObject):
        """The text of each progress dialog as it is shown (however fast the read: a
        dialog looked for now and then may be missed, or found at a later step)."""

        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Show and isinstance(obj, QProgressDialog):
                seen.append(obj.labelText())
            return False

    shown = Shown()
    QApplication.instance().installEventFilter(shown)
    try:
        assert window.import_measurements(FIXTURES / "kineto" / "sampled_rank-0.json.gz")
        assert window.import_measurements(FIXTURES / "rocprof" / "vcopy-mi200")
    finally:
        QApplication.instance().removeEventFilter(shown)
    assert any("sampled_rank-0.json.gz" in text for text in seen)
    assert any("vcopy-mi200" in text for text in seen)


H200 = FIXTURES / "h200" / "ncu_ops_raw.csv"


def _h200_session(window, tmp_path):
    session = tmp_path / "h200.yaml"
    session.write_text("schema_version: 2\ntitle: H200 profile\nhardware:\n  - preset: h200\n"
                       "operations: []\n", encoding="utf-8")
    assert window.open_path(session)


def _inside(window, m) -> bool:
    (x0, x1), (y0, y1) = window.canvas.view_range()
    intensity, achieved = m.flops / m.bytes, m.flops / m.time_s
    return x0 < intensity < x1 and y0 < achieved < y1


def test_an_import_into_a_fitted_chart_shows_the_new_points(qtbot, window, tmp_path):
    # a new H200 session shows its roofs from 0.1 to 10⁴ FLOP/B; the profile's add kernel
    # lies at 2·2²⁶ FLOPs over 786 MB: 0.17 FLOP/B, its 4096³ product at 780
    _h200_session(window, tmp_path)
    assert window.canvas.shows_fit
    assert window.import_measurements(H200)
    qtbot.wait(10)
    add = next(m for m in window.document.session.measurements if "CUDAFunctor_add" in m.name)
    product = next(m for m in window.document.session.measurements
                   if m.name.startswith("nvjet_sm90_tst_256x128"))
    assert add.flops / add.bytes == pytest.approx(0.17, abs=0.01)
    assert _inside(window, add) and _inside(window, product)
    assert window.canvas.shows_fit


def test_an_import_into_a_zoomed_chart_keeps_its_view(qtbot, window, tmp_path):
    _h200_session(window, tmp_path)
    window.canvas.view_box.setRange(xRange=(1.5, 3.5), yRange=(13.5, 15.5), padding=0)
    before = window.canvas.view_range()
    assert window.import_measurements(H200)
    qtbot.wait(10)
    assert window.canvas.view_range() == before
    add = next(m for m in window.document.session.measurements if "CUDAFunctor_add" in m.name)
    assert not _inside(window, add)


def test_the_measurements_table_tells_library_kernels_apart(qtbot, window, tmp_path):
    """A C++ kernel name starts with what every kernel of its library shares ("void
    at::native::vectorized_elementwise_kernel<…"): cut to its column, every row read
    "void …". A row shows the kernel as the figure key names it, with the operator its
    trace counted it by; the whole name is the first line of its tooltip."""
    from PySide6.QtCore import Qt

    session = tmp_path / "h200.yaml"
    session.write_text("schema_version: 2\ntitle: step\nhardware:\n  - preset: h200\n"
                       "operations: []\n", encoding="utf-8")
    assert window.open_path(session)
    assert window.import_measurements(FIXTURES / "h200" / "kineto_train.json.gz")
    window.measurements_dock.show()
    window.measurements_dock.raise_()
    panel = window.measurements_panel
    # one row a kernel: 83 (73 before the embedding's and silu's backward, the loss's two
    # kernels, the gather, sin, cos, x³, the position ids and the step counters were counted)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 83)
    model = panel.model
    column = next(c for c in range(model.columnCount())
                  if model.headerData(c, Qt.Orientation.Horizontal) == "Measured point")
    shown = {model.row(r).measurement.name: (
        model.data(model.index(r, column)),
        model.data(model.index(r, column), Qt.ItemDataRole.ToolTipRole)) for r in
        range(model.rowCount())}
    adam = next(n for n in shown if "FusedAdamMathFunctor" in n)
    assert adam.startswith("void at::native::(anonymous namespace)::multi_tensor_apply_kernel")
    text, tip = shown[adam]
    assert text == "multi_tensor_apply_kernel (fused_adamw)"
    assert tip.split("\n")[0] == adam  # (the whole name, then the verdict and the source)
    # no two library kernels read the same start, as "void …" did
    texts = [t for n, (t, _tip) in shown.items() if n.startswith("void ")]
    assert len(texts) > 30 and not any(t.startswith("void ") for t in texts)
    # a name already short is shown whole
    short = [n for n in shown if len(n) <= 40]
    assert short and all(shown[n][0] == n for n in short)


def test_a_tall_legend_below_the_chart_flows_and_leaves_the_chart_its_height(
        qtbot, open_window, tmp_path):
    """At 1366 × 768, a trace's legend (the machine, four verdicts and a long line on what
    is drawn) found no corner: below the chart in one column it took six rows, more than a
    quarter of the chart's height. Its rows now go side by side, as in a figure."""
    session = tmp_path / "h200.yaml"
    session.write_text("schema_version: 2\ntitle: step\nhardware:\n  - preset: h200\n"
                       "operations: []\n", encoding="utf-8")
    window = open_window(session, (1366, 768))
    assert window.import_measurements(FIXTURES / "h200" / "kineto_train.json.gz")
    canvas = window.canvas
    legend = canvas.legend_item
    qtbot.waitUntil(lambda: canvas.legend.choice == "outside" and legend.isVisible())
    rows = [text for text, _sample in legend.rows]
    assert len(rows) >= 5 and any("95 % of GPU time drawn" in text for text in rows)
    # every row said, in at most a quarter of the chart's height, and the plot keeps its room
    assert legend.shown_rows() == legend.rows and legend.dropped == 0
    assert legend.height() <= 0.25 * canvas.height()
    view = canvas.view_box.sceneBoundingRect()
    assert view.height() >= 0.6 * canvas.height()
    # the legend under the plot, not over it
    assert legend.sceneBoundingRect().top() >= view.bottom()


def test_a_trace_whose_gpu_the_session_has_no_room_for_is_refused_and_changes_nothing(
        qtbot, window, tmp_path, monkeypatch):
    """The trace's GPU joins the session as a machine: where the session already holds as
    many machines as a session file may, the import is refused with the numbers, and the
    session keeps its machines and points."""
    from workbench.model import limits

    assert window.open_path(SESSION)
    session = window.document.session
    before = (list(session.measurements), [e.hardware.name for e in session.hardware])
    monkeypatch.setattr(limits, "MAX_MACHINES", len(session.hardware))
    trace = _bmm_trace(tmp_path, '{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150e9}')
    assert not window.import_measurements(trace)
    assert "step.json" in window.last_error
    assert (f"the session would hold {len(session.hardware) + 1} machines (adding 1); at most "
            f"{len(session.hardware)}") in window.last_error
    assert "\n" not in window.last_error
    assert (session.measurements, [e.hardware.name for e in session.hardware]) == before
    assert not window.document.modified
