"""Two runs of one program imported into the app: kernels grouped with their launches and
share of GPU time in the Measurements panel, a speed-up per kernel present in both, an arrow
from its old point to its new one on the chart and in an exported PDF, the top-N rule with
what it hides, and the View's choice of memory level."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from workbench.cli import main

DESCRIPTIVE = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
               "Stream", "Block Size", "Grid Size", "Device", "CC"]
METRICS = ["gpu__time_duration.sum", "dram__bytes.sum", "lts__t_bytes.sum",
           "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]


def export(path: Path, *launches: tuple[str, str]) -> Path:
    """(kernel, time in µs) per launch; each moves 40 MB of DRAM, 80 MB of L2 and does
    2 × 10⁹ FLOPs (10⁹ FFMA)."""
    def row(cells):
        return ",".join(f'"{c}"' for c in cells)

    lines = [row(DESCRIPTIVE + METRICS), row([""] * 11 + ["usecond", "Mbyte", "Mbyte", "inst"])]
    for i, (name, time) in enumerate(launches):
        lines.append(row([str(i), "1", "p", "h", name, "1", "7", "(256, 1, 1)", "(80, 1, 1)",
                          "0", "9.0", time, "40", "80", "1,000,000,000"]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


SESSION = "schema_version: 2\ntitle: step\nhardware:\n  - preset: h100-sxm\noperations: []\n"


@pytest.fixture
def runs(open_window, tmp_path):
    session = tmp_path / "s.yaml"
    session.write_text(SESSION, encoding="utf-8")
    window = open_window(session, size=(1400, 900))
    before = export(tmp_path / "before.csv", ("attn", "400"), ("attn", "200"), ("mlp", "100"),
                    ("norm", "2"))
    after = export(tmp_path / "after.csv", ("attn", "100"), ("attn", "100"), ("mlp", "80"))
    assert window.import_measurements(before)
    assert window.import_measurements(after)
    return window


def test_the_panel_shows_launches_share_and_speed_up(qtbot, runs):
    window = runs
    window.measurements_dock.show()
    window.measurements_dock.raise_()
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 5)
    rows = {(panel.model.text(r, "name"), panel.model.row(r).measurement.run): r
            for r in range(panel.model.rowCount())}
    attn = rows[("attn", "before.csv")]
    # attn before: 2 launches, mean (400 + 200) / 2 = 300 µs, 600 of 702 µs of the run
    assert panel.model.text(attn, "launches") == "2"
    assert panel.model.text(attn, "total") == "600 µs"
    assert panel.model.text(attn, "share") == f"{100 * 600 / 702:.1f} %"
    # after: mean 100 µs: speed-up 300 / 100
    assert panel.model.text(rows[("attn", "after.csv")], "speedup") == "3.00 ×"
    assert panel.model.text(rows[("mlp", "after.csv")], "speedup") == "1.25 ×"  # 100 / 80
    assert panel.model.text(rows[("norm", "before.csv")], "speedup") == ""
    tip = panel.model.tooltip(rows[("attn", "after.csv")], "name")
    assert "2 launches, 200 µs in all, 71.4 % of the GPU time of after.csv" in tip  # 200/280
    assert "speed-up 3.00 ×: attn: 300 µs in before.csv → 100 µs in after.csv" in tip


def test_arrows_top_n_and_level_on_the_chart_and_in_the_pdf(qtbot, runs, tmp_path):
    window = runs
    canvas = window.canvas
    arrows = [p for p in canvas.pair_items() if p["first"] == "before.csv"]
    assert sorted(p["label"] for p in arrows) == ["1.25×", "3.00×"]
    # norm (2 of 702 µs) is outside the kernels that make 95 % of the first run's time
    names = [m["name"] for m in canvas.measured_items()]
    assert "norm" not in names and names.count("attn") == 2
    assert any("before.csv: the 2 that make 95 % of GPU time drawn; 1 kernel hidden (0.3 % "
               "of the time)" in t for t in canvas.legend_texts())
    window.top_actions[100_000].trigger()
    assert "norm" in [m["name"] for m in canvas.measured_items()]
    # the View's level: L2 intensity is 2e9 FLOP / 80 MB = 25 FLOP/B, DRAM 2e9 / 40 MB = 50
    assert [m["x"] for m in canvas.measured_items()] == pytest.approx([50.0] * 5)
    window.level_actions["l2"].trigger()
    assert window.document.session.view.level == "l2"
    assert [m["x"] for m in canvas.measured_items()] == pytest.approx([25.0] * 5)
    # each linked to the L2 roof right above it: min(67 TFLOP/s fp32 vector, 25 × 9.8 TB/s)
    for item in canvas.measured_items():
        xs, ys = item["link"]
        assert xs == pytest.approx([25.0, 25.0]) and ys[0] == pytest.approx(67e12)
    # saved, the session draws the same arrows in an exported PDF
    saved = tmp_path / "runs.yaml"
    assert window.save_to(saved)
    pdf = tmp_path / "runs.pdf"
    assert main(["render", str(saved), "-o", str(pdf), "--size", "double"]) == 0
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "3.00×" in text and "1.25×" in text
    # and File ▸ Export Figure draws them too, at a paper column's size, each kernel
    # named by its tag in the key
    from workbench.ui.figures.export_dialog import FigureOptions

    exported = tmp_path / "runs-app.pdf"
    assert window.export_figure(exported, FigureOptions(size="single", dpi=300.0))
    text = " ".join(subprocess.run(["pdftotext", str(exported), "-"], capture_output=True,
                                   text=True, check=True).stdout.split())
    assert "3.00×" in text and "1.25×" in text
    assert "K1 — attn" in text and "K2 — mlp" in text


def test_two_kernels_with_one_speed_up_each_label_their_own_arrow(qtbot, open_window,
                                                                    tmp_path):
    """attn 300 → 100 µs and mlp 90 → 30 µs are both 3.00× faster: each arrow carries its
    own label (one pair of runs, two kernels), not one label for both, the other arrow
    left bare."""
    session = tmp_path / "s.yaml"
    session.write_text(SESSION, encoding="utf-8")
    window = open_window(session, size=(1400, 900))
    assert window.import_measurements(export(tmp_path / "before.csv", ("attn", "300"),
                                             ("mlp", "90")))
    assert window.import_measurements(export(tmp_path / "after.csv", ("attn", "100"),
                                             ("mlp", "30")))
    window.canvas.flush_layout()
    arrows = [(link.tooltip.split("\n")[0], label) for link, _curve, _arrow, label
              in window.canvas.overlays.pair_texts]
    assert sorted(name for name, _label in arrows) == ["attn", "mlp"]
    assert [label.toPlainText() for _name, label in arrows] == ["3.00×", "3.00×"]
    assert all(label.isVisible() for _name, label in arrows)


def test_kernels_not_counted_are_listed_in_the_panel(qtbot, open_window, tmp_path):
    window = open_window()
    path = export(tmp_path / "bf16.csv", ("ampere_bf16_s16816gemm", "90"),
                  ("ampere_bf16_s16816gemm", "90"), ("softmax", "20"))
    assert window.import_measurements(path)
    assert [m.name for m in window.document.session.measurements] == ["softmax"]
    label = window.measurements_panel.import_label
    assert label.isVisible()
    # 180 of 200 µs in the GEMM, whose bf16 work the FFMA counter cannot count
    assert label.text().splitlines() == [
        "bf16.csv: 3 dispatches of 2 kernels; counted 10 % of GPU time; 90 % in 1 kernel not "
        "counted (ampere_bf16_s16816gemm)",
        "not counted: ampere_bf16_s16816gemm (2 launches, 180 µs): runs on tensor cores (by "
        "its name) but the file has no tensor-core counters (sm__ops_path_tensor_src_*.sum or "
        "sm__inst_executed_pipe_tensor.sum): only its CUDA-core FLOPs would be counted"]


def test_the_l1_view_draws_the_l1_roof_and_each_kernel_under_it(qtbot, open_window, tmp_path):
    """The real A100 export has L1 bytes for every kernel, and the A100 preset an L1
    bandwidth (19.1 TB/s): View ▸ L1 places each kernel at its L1 intensity, under the L1
    roof drawn on the chart."""
    session = tmp_path / "a100.yaml"
    session.write_text(SESSION.replace("h100-sxm", "a100-40gb"), encoding="utf-8")
    window = open_window(session, size=(1400, 900))
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / \
        "ncu_details_a100_bert_flashattn.csv"
    assert window.import_measurements(fixture)
    window.top_actions[100_000].trigger()  # every kernel
    window.level_actions["l1"].trigger()
    canvas = window.canvas
    roofs = [(kind, name) for _hw, kind, name, _xs, ys in canvas.roof_items()]
    assert ("memory", "l1") in roofs, roofs
    (_hw, _kind, _name, xs, ys) = next(r for r in canvas.roof_items() if r[1:3] == ("memory", "l1"))
    # the L1 line: y = 19.1e12 × x on its slope
    assert ys[0] / xs[0] == pytest.approx(19.1e12, rel=1e-9)
    items = {m["name"]: m for m in canvas.measured_items()}
    gemm = next(m for name, m in items.items() if "s161616gemm_f16_32x32" in name)
    # 3,342,336 FLOPs over 1,354,752 L1 bytes = 2.467 FLOP/B; roof 2.467 × 19.1 TB/s
    intensity = 3_342_336 / 1_354_752
    assert gemm["x"] == pytest.approx(intensity)
    lx, ly = gemm["link"]
    assert lx == pytest.approx([intensity, intensity])
    assert ly[0] == pytest.approx(intensity * 19.1e12)
    # and no kernel of the file is left without its L1 point
    assert len(items) == 10
