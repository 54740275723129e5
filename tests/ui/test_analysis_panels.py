"""Sweeps in the editor, measured points and compared pairs, driven through real widgets.

Expected numbers are worked out here from the counting rules and the preset figures (H100 SXM:
989.4 TFLOP/s bf16/fp16, 67 TFLOP/s fp32, 3.35 TB/s, 8 µs launch overhead, efficiency 0.78;
the teaching machine: 100 TFLOP/s, 1 TB/s, no overhead, no derating), not read back from the
engine.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, open_editor
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from workbench.io.sessions import load_session, save_session
from workbench.model.units import format_quantity
from workbench.ui.panels.measurements_model import MEASURED_COLUMNS
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FUSION = next(p for p in EXAMPLES if p.name == "fusion.yaml")

H100_BF16, H100_FP32, H100_BW, H100_OVERHEAD, H100_EFF = 989.4e12, 67e12, 3.35e12, 8e-6, 0.78
TEACH_PEAK, TEACH_BW = 100e12, 1e12

GEMM_SESSION = """\
schema_version: 1
title: sweeps and machines
prediction: {model: derated}
hardware:
  - preset: teaching-machine
  - preset: h100-sxm
operations:
  - name: square GEMM
    kind: gemm
    m: 4096
    n: 8192
    k: 8192
    dtype: bf16
"""

MEASURED_SESSION = """\
schema_version: 1
title: measured
prediction: {model: derated}
hardware:
  - preset: h100-sxm
operations:
  - name: FFN up, prefill
    kind: gemm
    m: 8192
    n: 28672
    k: 8192
    dtype: bf16
  - name: attention QK
    kind: gemm
    m: 4096
    n: 4096
    k: 128
    dtype: fp16
"""


def _session_file(tmp_path: Path, text: str, name: str = "session.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def window(qtbot):
    create_app()
    win = MainWindow()
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.ask_save_changes = lambda: QMessageBox.Discard
    box = getattr(win, "_error_box", None)
    if box is not None:
        box.close()
    win.close()
    win.deleteLater()


# =========================================================================================
# sweeps in the editor


def _editor(qtbot, tmp_path):
    document, _workspace, editor, op_id = open_editor(
        qtbot, load_session(_session_file(tmp_path, GEMM_SESSION)), size=(560, 1100))
    return document, editor, op_id


def _crossing_m(ridge: float, n: int, k: int) -> float:
    """M where a bf16 GEMM's intensity MNK / (MK + KN + MN) equals ``ridge``."""
    return ridge * n * k / (n * k - ridge * k - ridge * n)


def _type(qtbot, edit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def test_sweep_typed_in_the_editor_applies_and_shows_crossings(qtbot, tmp_path):
    document, editor, op_id = _editor(qtbot, tmp_path)
    section = editor.sweep_section
    assert section is not None and document.operation(op_id).sweep is None
    params = [section.param_combo.itemData(i) for i in range(section.param_combo.count())]
    assert params == ["batch", "m", "n", "k"]  # the numeric parameters of a GEMM

    box = section.enable_box
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(6, box.height() // 2))
    assert document.operation(op_id).sweep is not None
    section.param_combo.setCurrentIndex(params.index("m"))
    section.mode_combo.setCurrentIndex(section.mode_combo.findData("list"))
    before = document.operation(op_id).sweep
    assert before.param == "m"

    _type(qtbot, section.values_edit, "1, 16, 256, 4096")
    qtbot.keyClick(section.values_edit, Qt.Key.Key_Return)

    sweep = document.operation(op_id).sweep
    assert sweep.param == "m" and sweep.values == (1.0, 16.0, 256.0, 4096.0)
    assert section.points_text().startswith("4 points")
    text = section.crossings_text()
    # teaching machine: ridge 100 FLOP/B; H100: 989.4 / 3.35 FLOP/B
    for ridge, label in ((TEACH_PEAK / TEACH_BW, "Teaching"), (H100_BF16 / H100_BW, "H100")):
        m_star = _crossing_m(ridge, 8192, 8192)
        assert 1 < m_star < 4096
        line = next(line for line in text.splitlines() if label in line)
        assert f"m = {m_star:.6g}" in line, line
        assert "turns compute-bound" in line
        assert f"first compute-bound whole value: {math.ceil(m_star)}" in line
    assert math.isclose(_crossing_m(100, 8192, 8192), 819200 / 7992)  # 102.50…

    # the whole typed list was one undo step
    document.undo()
    assert document.operation(op_id).sweep == before
    assert section.values_edit.text() != "1, 16, 256, 4096"  # the form follows the undo
    document.redo()
    assert document.operation(op_id).sweep.values == (1.0, 16.0, 256.0, 4096.0)
    assert section.values_edit.text() == "1, 16, 256, 4096"


def test_log_range_sweep_and_disabling(qtbot, tmp_path):
    document, editor, op_id = _editor(qtbot, tmp_path)
    section = editor.sweep_section
    section.enable_box.setChecked(True)
    section.param_combo.setCurrentIndex(section.param_combo.findData("m"))
    section.mode_combo.setCurrentIndex(section.mode_combo.findData("log"))
    for edit, text in ((section.start_edit, "1"), (section.stop_edit, "4096"),
                       (section.num_edit, "13")):
        _type(qtbot, edit, text)
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    sweep = document.operation(op_id).sweep
    rng = sweep.range
    assert (sweep.param, rng.start, rng.stop, rng.num, rng.scale) == ("m", 1, 4096, 13, "log")
    # powers of two from 2^0 to 2^12: 13 distinct whole values
    assert section.points_text().startswith("13 points")
    saved = tmp_path / "saved.yaml"  # sweeps are saved in the session
    save_session(document.session, saved)
    assert load_session(saved).operations[0].sweep == sweep
    section.enable_box.setChecked(False)
    assert document.operation(op_id).sweep is None
    assert section.crossings_text() == ""
    document.undo()
    assert document.operation(op_id).sweep == sweep
    assert section.enable_box.isChecked()


@pytest.mark.parametrize("text, words", [
    ("1, abc, 16", "'abc' is not a number"),
    ("0, 16", "at least 1"),
    ("", "at least one value"),
    # a count's sweep of 1.5 was taken (drawn at 2) and the session saved could not be
    # opened again ("must be a positive integer, got 1.5")
    ("1.5, 16", "M takes whole numbers, got 1.5"),
])
def test_invalid_sweep_text_is_refused_in_place(qtbot, tmp_path, text, words):
    document, editor, op_id = _editor(qtbot, tmp_path)
    section = editor.sweep_section
    section.enable_box.setChecked(True)
    section.param_combo.setCurrentIndex(section.param_combo.findData("m"))
    _type(qtbot, section.values_edit, "2, 4")
    document.seal()
    applied = document.operation(op_id).sweep
    assert applied.values == (2.0, 4.0)
    undo_depth = len(document._undo)

    section.values_edit.selectAll()
    if text:  # pasted: one edit, no valid prefix applied on the way
        QApplication.clipboard().setText(text)
        qtbot.keyClick(section.values_edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    else:
        qtbot.keyClick(section.values_edit, Qt.Key.Key_Delete)
    assert document.operation(op_id).sweep == applied  # never applied
    assert words in section.error()
    assert section.values_edit.property("invalid") is True
    assert words in section.values_edit.toolTip()
    assert section.hint.isVisible() and words in section.hint.text()
    assert len(document._undo) == undo_depth

    qtbot.keyClick(section.values_edit, Qt.Key.Key_Return)  # end of the gesture: put back
    assert section.values_edit.text() == "2, 4"
    assert not section.values_edit.property("invalid")
    assert "kept" in section.hint.text()
    assert document.operation(op_id).sweep == applied


def test_reversed_log_range_below_zero_is_refused(qtbot, tmp_path):
    document, editor, op_id = _editor(qtbot, tmp_path)
    section = editor.sweep_section
    section.enable_box.setChecked(True)
    section.param_combo.setCurrentIndex(section.param_combo.findData("k"))
    section.mode_combo.setCurrentIndex(section.mode_combo.findData("log"))
    applied = document.operation(op_id).sweep
    _type(qtbot, section.start_edit, "-5")
    assert "positive" in section.error()
    assert section.start_edit.property("invalid") is True
    assert document.operation(op_id).sweep == applied


# =========================================================================================
# measured points


def _gemm_times(m, n, k, peak, bw=H100_BW, size=2):
    flops = 2 * m * n * k
    nbytes = size * (m * k + k * n + m * n)
    return flops, nbytes, max(flops / peak, nbytes / bw)


def _rows(panel):
    model = panel.model
    keys = ("name", "operation", "machine", "time", "achieved", "ceiling", "predicted",
            "fraction", "verdict")
    return [{k: model.text(r, k) for k in keys} for r in range(model.rowCount())]


def test_import_plain_csv_links_points_and_judges_them(qtbot, window, tmp_path):
    assert window.open_path(_session_file(tmp_path, MEASURED_SESSION))
    window.measurements_dock.show()
    window.measurements_dock.raise_()
    panel = window.measurements_panel
    assert panel.model.rowCount() == 0

    assert window.import_measurements(FIXTURES / "measurements.csv")
    session = window.document.session
    assert [m.name for m in session.measurements] == ["FFN up, cuBLAS", "QK scores (Triton)",
                                                      "my softmax"]
    assert window.document.undo_text().startswith("Import 3 measurements")
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3)
    rows = {r["name"]: r for r in _rows(panel)}

    # FFN up: 2·8192·28672·8192 FLOPs, compute-bound; measured 4862 µs
    _f, _b, t_lower = _gemm_times(8192, 28672, 8192, H100_BF16)
    fraction = t_lower / 4862e-6
    assert 0.65 <= fraction < 0.85
    ffn = rows["FFN up, cuBLAS"]
    assert ffn["operation"] == "FFN up, prefill"  # linked to the operation
    assert ffn["fraction"] == f"{100 * fraction:.1f} %"
    # the verdict: measured / T_predicted = 4862 µs / (T_lower / 0.78) = 0.975
    assert 0.8 <= 4862e-6 / (t_lower / H100_EFF) <= 1.2
    assert "as predicted" in ffn["verdict"]
    assert ffn["time"] == format_quantity(4862e-6, "time")

    # QK scores: achieved 0.121 TFLOP/s only: time = FLOPs / achieved
    flops, _b, t_lower = _gemm_times(4096, 4096, 128, H100_BF16)
    fraction = t_lower / (flops / 0.121e12)
    assert fraction < 0.5
    qk = rows["QK scores (Triton)"]
    assert qk["operation"] == "attention QK"
    assert qk["fraction"] == f"{100 * fraction:.1f} %"
    assert flops / 0.121e12 / (t_lower / H100_EFF) > 2  # 2.6 × T_predicted
    assert "likely a bug" in qk["verdict"]
    assert "(from achieved)" in qk["time"]

    # my softmax: standalone, 4.3 GFLOP at fp32 and 35,651,584 B in 35.5 µs
    t_lower = max(4.3e9 / H100_FP32, 35_651_584 / H100_BW)
    fraction = t_lower / 35.5e-6
    assert fraction >= 0.9
    soft = rows["my softmax"]
    assert soft["operation"] == "standalone"
    assert soft["fraction"] == f"{100 * fraction:.1f} %"
    assert 35.5e-6 / (t_lower / H100_EFF) < 0.8  # faster than predicted
    assert "re-measure" in soft["verdict"]

    # the verdict cell is coloured by band
    model = panel.model
    col = 8
    colours = {model.data(model.index(r, col), Qt.ItemDataRole.BackgroundRole).name()
               for r in range(3)}
    assert len(colours) == 3

    window.document.undo()  # the import was one step
    assert window.document.session.measurements == []
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0)


def test_import_ncu_export(qtbot, window, tmp_path):
    assert window.open_path(_session_file(tmp_path, MEASURED_SESSION))
    window.measurements_dock.raise_()
    assert window.import_measurements(FIXTURES / "ncu_raw.csv")
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3)
    rows = _rows(panel)
    gemm = rows[0]
    assert gemm["operation"] == "standalone"
    # tensor bf16 FLOPs plus 2·FFMA; DRAM read (Mbyte) + write (Kbyte); 1,426.37 µs
    # tensor bf16 ops, plus CUDA-core fp32: 2·FFMA (0) + FADD (0) + FMUL (67,108,864)
    flops = 1_099_511_627_776 + 67_108_864
    nbytes = 412.35e6 + 134_217.73e3
    t_lower = max(flops / H100_BF16, nbytes / H100_BW)
    fraction = t_lower / 1426.37e-6
    assert gemm["fraction"] == f"{100 * fraction:.1f} %"
    assert 1426.37e-6 / (t_lower / H100_EFF) == pytest.approx(1.0, abs=0.01)
    assert "as predicted" in gemm["verdict"]


def test_import_real_ncu_export_as_ncu_wrote_it(qtbot, window, tmp_path):
    # ncu … python3 prog.py > out.csv: the program's print and ==PROF== lines precede the table
    export = Path(__file__).resolve().parents[2] / "calibration/gpu-measurements/ncu-h100-sxm.csv"
    assert export.read_text(encoding="utf-8").startswith("==PROF==")
    assert window.open_path(_session_file(tmp_path, MEASURED_SESSION))
    window.measurements_dock.raise_()
    assert window.import_measurements(export)
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 4)
    rows = _rows(panel)
    assert rows[0]["name"].startswith("nvjet_sm90")
    # 2·4096³ bf16 FLOPs in 204.672 µs, 178.6 MB of DRAM traffic
    t_lower = max(2 * 4096 ** 3 / H100_BF16, 178_565_632 / H100_BW)
    assert rows[0]["fraction"] == f"{100 * t_lower / 204.672e-6:.1f} %"


KERNEL_SESSION = """\
schema_version: 2
title: A GEMM and its kernel
hardware:
  - preset: h100-sxm
operations:
  - name: GEMM 4096
    kind: gemm
    m: 4096
    n: 4096
    k: 4096
    dtype: bf16
"""


def test_attached_kernel_shows_its_traffic_against_the_ideal_bytes(qtbot, window, tmp_path):
    export = Path(__file__).resolve().parents[2] / "calibration/gpu-measurements/ncu-h100-sxm.csv"
    assert window.open_path(_session_file(tmp_path, KERNEL_SESSION))
    window.measurements_dock.raise_()
    assert window.import_measurements(export)
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 4)
    points = [m.copy() for m in window.document.session.measurements]
    points[0].operation = "GEMM 4096"
    window.document.set_measurements(points, "Attach the GEMM kernel")
    model = panel.model
    column = [key for key, _t, _tip in MEASURED_COLUMNS].index("traffic")
    qtbot.waitUntil(lambda: model.data(model.index(0, 1)) == "GEMM 4096")
    # 178,565,632 B of DRAM traffic; ideal 3 · 4096² · 2 B = 100,663,296 B
    assert model.data(model.index(0, column)) == "1.77 × (178.6 MB of 100.7 MB)"
    tip = model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert "measured bytes: moved 178.6 MB where 100.7 MB is the ideal: 1.77 ×" in tip
    assert "achieved 672 TFLOP/s of the 989 TFLOP/s attainable (68 %)" in tip
    # a standalone kernel has no ideal to compare with
    assert model.data(model.index(1, column)) == ""


def test_bad_csv_keeps_the_session_and_shows_the_error(qtbot, window, tmp_path):
    assert window.open_path(_session_file(tmp_path, MEASURED_SESSION))
    window.import_measurements(FIXTURES / "measurements.csv")
    before = list(window.document.session.measurements)
    undo_text = window.document.undo_text()
    bad = tmp_path / "bad.csv"
    bad.write_text("name,operation,time_ms\nfirst,FFN up, prefill,1.5\n"
                   "second,,abc\n", encoding="utf-8")
    assert not window.import_measurements(bad)
    assert window.document.session.measurements == before
    assert window.document.undo_text() == undo_text
    assert "bad.csv:2" in window.last_error  # the loader's file:line
    box = window._error_box
    assert box.isVisible() and "bad.csv:2" in box.text()
    box.close()

    bad.write_text("name,operation,time_ms\nfirst,,abc\n", encoding="utf-8")
    assert not window.import_measurements(bad)
    assert "bad.csv:2" in window.last_error and "abc" in window.last_error
    assert window.document.session.measurements == before


def test_measurement_edits_are_undoable_and_tables_follow(qtbot, window, tmp_path):
    assert window.open_path(_session_file(tmp_path, MEASURED_SESSION))
    window.measurements_dock.raise_()
    window.import_measurements(FIXTURES / "measurements.csv")
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3)
    panel.select_row(0)
    edit = panel.field("time")
    assert edit.text() == "4.862 ms"

    _type(qtbot, edit, "3.9 ms")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert window.document.session.measurements[0].time_s == pytest.approx(3.9e-3)
    _f, _b, t_lower = _gemm_times(8192, 28672, 8192, H100_BF16)
    assert panel.model.text(0, "fraction") == f"{100 * t_lower / 3.9e-3:.1f} %"
    assert t_lower / 3.9e-3 >= 0.9  # 3.89 ms of 3.9 ms
    # faster than the derated prediction (3.89 ms / 0.78 = 4.99 ms) by more than 20 %
    assert 3.9e-3 / (t_lower / H100_EFF) < 0.8
    assert "re-measure" in panel.model.text(0, "verdict")
    window.document.undo()
    assert window.document.session.measurements[0].time_s == pytest.approx(4862e-6)
    assert panel.model.text(0, "fraction") == f"{100 * t_lower / 4862e-6:.1f} %"

    _type(qtbot, edit, "4.8 parsecs")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert window.document.session.measurements[0].time_s == pytest.approx(4862e-6)
    assert "time" in panel.hint_text()

    # an edit of the linked operation re-judges its row without rebuilding the table
    rebuilds = panel.model.rebuilds
    op = window.document.session.operation_named("FFN up, prefill")
    window.document.set_param(op.id, "m", 4096)
    _f, _b, t_lower = _gemm_times(4096, 28672, 8192, H100_BF16)
    assert panel.model.text(0, "fraction") == f"{100 * t_lower / 4862e-6:.1f} %"
    assert panel.model.rebuilds == rebuilds

    # add one attached to the selected operation, then delete it; both undoable
    window.workspace.selection.select(op.id)
    index = panel.add_for_operation()
    assert window.document.session.measurements[index].operation == "FFN up, prefill"
    assert len(window.document.session.measurements) == 4
    panel.delete_selected()
    assert len(window.document.session.measurements) == 3
    window.document.undo()
    assert len(window.document.session.measurements) == 4
    index = panel.add_standalone()
    assert window.document.session.measurements[index].operation is None
    qtbot.waitUntil(lambda: panel.model.rowCount() == 5)
    assert panel.model.text(4, "operation") == "standalone"


def test_hidden_measurements_panel_does_no_work(qtbot, window, tmp_path):
    assert window.open_path(_session_file(tmp_path, MEASURED_SESSION))
    window.measurements_dock.raise_()
    window.import_measurements(FIXTURES / "measurements.csv")
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3)
    window.results_dock.raise_()  # tabbed over the measurements
    qtbot.waitUntil(lambda: not panel.is_shown())
    rebuilds = panel.model.rebuilds
    op = window.document.session.operation_named("FFN up, prefill")
    for m in (1024, 2048, 4096):
        window.document.set_param(op.id, "m", m)
    window.document.set_measurements([])
    assert panel.model.rebuilds == rebuilds and panel.model.rowCount() == 3
    window.measurements_dock.raise_()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0)


def test_imported_points_are_judged_once_for_the_chart_and_the_table(qtbot, window, tmp_path,
                                                                  monkeypatch):
    """The chart and the Measurements table show the same judgements, made once: an import
    predicts each kernel once on each machine, and an edit predicts again only what it
    changed (a machine's figures: its points; undone: none, the old figures were judged)."""
    from workbench.model import analysis

    predicted: dict[tuple[str, str], int] = {}
    evaluate = analysis.evaluate_counts

    def counting(counts, hardware, level=None, name="", calibrated=None):
        predicted[name, hardware.label] = predicted.get((name, hardware.label), 0) + 1
        return evaluate(counts, hardware, level, name, calibrated)

    monkeypatch.setattr(analysis, "evaluate_counts", counting)
    assert window.open_path(_session_file(tmp_path, GEMM_SESSION))
    teaching, h100 = window.document.session.hardware
    # 2 MB in 10 µs: 2 µs on the teaching machine's 1 TB/s, 20 % of its roof
    kernels = [f"kernel {i}" for i in range(40)]
    path = tmp_path / "kernels.csv"
    path.write_text("name,time_us,flops,bytes,source\n" + "".join(
        f"{name},10,1e6,2e6,{tmp_path.name}\n" for name in kernels), encoding="utf-8")
    assert window.import_measurements(path)
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2 * len(kernels))
    QApplication.processEvents()
    machines = (teaching.hardware.label, h100.hardware.label)
    assert {k: predicted.get(k) for k in predicted if k[0] in kernels} == {
        (name, machine): 1 for name in kernels for machine in machines}

    def shown(name: str) -> tuple[str, float]:
        """The fraction the table shows for kernel ``name`` on the teaching machine, and the
        height of the prediction the chart links its point there to (FLOP/s)."""
        row = next(r for r in range(panel.model.rowCount())
                   if panel.model.text(r, "name") == name
                   and panel.model.text(r, "machine") == teaching.hardware.label)
        item = next(m for m in window.canvas.measured_items()
                    if m["name"] == name and m["hw_id"] == teaching.id)
        (_x0, _x1), (y0, _y1) = item["link"]
        return panel.model.text(row, "fraction"), y0

    # (at 0.5 FLOP/B the roof is half the bandwidth)
    assert shown("kernel 7") == ("20.0 %", pytest.approx(0.5 * TEACH_BW))
    predicted.clear()
    op = window.document.session.operations[0]
    window.document.set_param(op.id, "m", 2048)  # (no kernel is attached to it)
    window.document.seal()
    QApplication.processEvents()
    assert not any(name in kernels for name, _machine in predicted)

    # twice the bandwidth: 1 µs of 10 µs, each kernel judged again on that machine alone
    faster = teaching.hardware.copy(memory={k: 2 * v for k, v in
                                            teaching.hardware.memory.items()})
    window.document.set_machine(teaching.id, faster)
    window.document.seal()
    QApplication.processEvents()
    teaching_label = window.document.machine(teaching.id).hardware.label
    assert {k: predicted.get(k) for k in predicted if k[0] in kernels} == {
        (name, teaching_label): 1 for name in kernels}
    assert shown("kernel 7") == ("10.0 %", pytest.approx(TEACH_BW))
    predicted.clear()
    window.document.undo()  # the figures judged before: nothing is predicted again
    QApplication.processEvents()
    assert shown("kernel 7") == ("20.0 %", pytest.approx(0.5 * TEACH_BW))
    window.document.undo()
    window.document.undo()  # the import
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0)
    window.document.redo()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2 * len(kernels))
    QApplication.processEvents()
    assert shown("kernel 7") == ("20.0 %", pytest.approx(0.5 * TEACH_BW))
    assert not any(name in kernels for name, _machine in predicted)


# =========================================================================================
# compared pairs and across machines


def _fusion_without_pairs(tmp_path: Path) -> Path:
    data = yaml.safe_load(FUSION.read_text(encoding="utf-8"))
    data.pop("comparisons", None)
    path = tmp_path / "fusion.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_compare_with_makes_a_pair_with_the_speedup(qtbot, window, tmp_path):
    assert window.open_path(_fusion_without_pairs(tmp_path))
    assert window.document.session.comparisons == []
    ops = window.document.session.operations
    unfused, fused = ops[0], ops[1]
    assert "unfused" in unfused.operation.name and "fused" in fused.operation.name
    window.workspace.selection.select(unfused.id)
    window.compare_action.trigger()
    dialog = window.compare_dialog
    assert dialog.isVisible()
    dialog.other_combo.setCurrentIndex(dialog.other_combo.findData(fused.id))
    assert dialog.baseline_box.isChecked()
    dialog.accept()

    pairs = window.document.session.comparisons
    assert [(c.first, c.second) for c in pairs] == [(unfused.operation.name,
                                                     fused.operation.name)]
    panel = window.compare_panel
    qtbot.waitUntil(lambda: panel.is_shown())
    assert len(panel.pair_rows()) == 1  # one machine
    # 16M fp32 elements: unfused 28 B/element in three kernels, fused 12 B/element in one,
    # both memory-bound; the example names no prediction: calibrated, each kernel timed
    # alone (3.83 µs launch, streaming at 0.87 of 3.35 TB/s)
    n = 16_777_216
    bw = 0.87 * H100_BW
    speedup = (3 * 3.83e-6 + 28 * n / bw) / (3.83e-6 + 12 * n / bw)
    assert panel.cell(panel.pairs_table, 0, "speedup") == f"{speedup:.3g}×" == "2.37×"
    assert panel.cell(panel.pairs_table, 0, "bytes_saved") == format_quantity(16 * n, "bytes")
    assert panel.cell(panel.pairs_table, 0, "flops_added") == format_quantity(0, "flops")
    tip = panel.pairs_table.item(0, 5).toolTip()
    assert "T_predicted(first) / T_predicted(second)" in tip

    # again the same pair: refused, nothing added
    window.workspace.selection.select(fused.id)
    window.compare_action.trigger()
    window.compare_dialog.accept()
    assert len(window.document.session.comparisons) == 1

    # swap and remove are undoable
    panel.pairs_table.selectRow(0)
    panel.swap_selected_pair()
    assert panel.cell(panel.pairs_table, 0, "speedup") == f"{1 / speedup:.3g}×"
    panel.remove_selected_pair()
    assert window.document.session.comparisons == []
    assert panel.pair_rows() == []
    window.document.undo()
    window.document.undo()
    assert panel.cell(panel.pairs_table, 0, "speedup") == "2.37×"


def test_pair_view_toggles(qtbot, window, tmp_path):
    assert window.open_path(_fusion_without_pairs(tmp_path))
    ops = window.document.session.operations
    assert window.compare_with(ops[0].id, ops[1].id)
    panel = window.compare_panel
    qtbot.waitUntil(lambda: panel.is_shown())
    assert window.document.session.view.pairs is True
    assert panel.show_pairs_box.isChecked()
    box = panel.show_pairs_box
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(6, box.height() // 2))
    assert window.document.session.view.pairs is False
    window.document.undo()
    assert window.document.session.view.pairs is True and panel.show_pairs_box.isChecked()

    # the dock toggles; hidden, it does no work; shown again, it catches up
    toggle = window.compare_dock.toggleViewAction()
    toggle.trigger()
    qtbot.waitUntil(lambda: not panel.is_shown())
    rebuilds = panel.pair_rebuilds
    window.document.set_comparisons([])
    assert panel.pair_rebuilds == rebuilds
    toggle.trigger()
    qtbot.waitUntil(lambda: panel.is_shown())
    assert panel.pair_rows() == []


def test_across_machines_table(qtbot, window, tmp_path):
    assert window.open_path(_session_file(tmp_path, GEMM_SESSION.replace("m: 4096",
                                                                          "m: 8192")))
    op = window.document.session.operations[0]
    window.workspace.selection.select(op.id)
    window.compare_dock.show()
    window.compare_dock.raise_()
    panel = window.compare_panel
    qtbot.waitUntil(lambda: panel.is_shown())
    table = panel.machines_table
    assert table.rowCount() == 2
    flops = 2 * 8192**3
    nbytes = 2 * 3 * 8192**2
    teach = max(flops / TEACH_PEAK, nbytes / TEACH_BW)  # no derating, no overhead
    h100_lower = max(flops / H100_BF16, nbytes / H100_BW)
    h100 = max(h100_lower / H100_EFF, H100_OVERHEAD)
    assert h100 < teach
    assert "H100" in panel.cell(table, 0, "machine")  # fastest first
    assert panel.cell(table, 0, "bound") == "compute"
    assert panel.cell(table, 0, "t_lower") == format_quantity(h100_lower, "time")
    assert panel.cell(table, 0, "t_predicted") == format_quantity(h100, "time")
    assert panel.cell(table, 0, "overhead") == format_quantity(8e-6, "time")
    assert panel.cell(table, 0, "relative") == "fastest"
    assert "Teaching" in panel.cell(table, 1, "machine")
    assert panel.cell(table, 1, "t_predicted") == format_quantity(teach, "time")
    assert panel.cell(table, 1, "relative") == f"{teach / h100:.3g}× slower"
    # an edit of the operation updates the table
    window.document.set_param(op.id, "m", 1024)
    flops = 2 * 1024 * 8192 * 8192
    nbytes = 2 * (1024 * 8192 * 2 + 8192 * 8192)
    assert panel.cell(table, 0, "t_lower") == format_quantity(
        max(flops / H100_BF16, nbytes / H100_BW), "time")


def test_results_table_shows_efficiency_and_overhead_floor(qtbot, window, tmp_path):
    from workbench.ui.panels.results_table import COLUMN_INDEX

    assert window.open_path(_session_file(tmp_path, GEMM_SESSION))
    model = window.results_table.model
    texts = {}
    for row in range(model.rowCount()):
        machine = model.row_data(row).text_of(COLUMN_INDEX["machine"])
        texts[machine] = (model.row_data(row).text_of(COLUMN_INDEX["efficiency"]),
                          model.row_data(row).text_of(COLUMN_INDEX["overhead"]))
    h100 = next(v for k, v in texts.items() if "H100" in k)
    assert h100 == ("78 %", format_quantity(8e-6, "time"))
    teach = next(v for k, v in texts.items() if "Teaching" in k)
    assert teach[0] == "—"
