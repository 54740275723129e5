"""``roofline-workbench render --sweep-plot``: the sweep plot as a figure from the command line,
the same page as the app's Sweep Plot ▸ Export… for the same session, size and theme.

Hand-checked numbers (critical-batch example: bf16 matmul, D = F = 8192, m swept): the
intensity m·D·F / (m·(D + F) + D·F) meets a machine's ridge R at m* = 8192·R / (8192 − 2R);
the TPU v5e (R = 197e12 / 819e9 = 240.5 FLOP/B) gives m* = 255.5, the H100 SXM
(R = 989.4e12 / 3.35e12 = 295.3), m* = 318.3."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli.test_render import render

from workbench.ui.figures.export_dialog import FigureOptions

REPO = Path(__file__).resolve().parents[2]
SWEEP = REPO / "workbench" / "examples" / "critical_batch_sweep.yaml"
LLAMA = REPO / "workbench" / "examples" / "llama_ffn.yaml"
FIRST = "bf16 matmul, D = F = 8192"


def test_the_command_line_and_the_app_make_the_same_sweep_plot(open_window, qtbot, tmp_path):
    cli = tmp_path / "cli.svg"
    code, err = render(SWEEP, "-o", cli, "--sweep-plot", "--size", "double", "--dpi", "300")
    assert (code, err) == (0, "")
    win = open_window(SWEEP)
    win.sweep_dock.raise_()
    win.workspace.selection.select(win.document.session.operations[0].id)
    qtbot.waitUntil(lambda: not win.sweep_plot.is_empty())
    app = tmp_path / "app.svg"
    assert win.export_sweep_plot(app, FigureOptions(size="double", dpi=300.0))
    assert cli.read_bytes() == app.read_bytes()


def test_the_sweep_plots_pdf_carries_its_numbers_as_text_and_no_pictures(tmp_path):
    out = tmp_path / "sweep.pdf"
    code, err = render(SWEEP, "-o", out, "--sweep-plot", FIRST, "--size", "single")
    assert (code, err) == (0, "")
    text = " ".join(subprocess.run(["pdftotext", str(out), "-"], check=True,
                                   capture_output=True, text=True).stdout.split())
    for expected in (FIRST, "m* = 255.5", "m* = 318.3", "Google Cloud TPU v5e (per chip)",
                     "NVIDIA H100 SXM5 80GB", "Attainable [FLOP/s]", "1 PFLOP/s"):
        assert expected in text, (expected, text)
    images = subprocess.run(["pdfimages", "-list", str(out)], check=True,
                            capture_output=True, text=True).stdout.splitlines()
    assert len(images) == 2, images  # (the header lines alone: no raster image)


def test_the_sweep_plot_of_times(tmp_path):
    out = tmp_path / "sweep.pdf"
    code, err = render(SWEEP, "-o", out, "--sweep-plot", "--sweep-y", "time", "--theme", "dark")
    assert (code, err) == (0, "")
    text = subprocess.run(["pdftotext", str(out), "-"], check=True, capture_output=True,
                          text=True).stdout
    assert "T_lower [s]" in text and "Attainable" not in text


@pytest.mark.parametrize(("session", "args", "message"), [
    (SWEEP, ["--sweep-plot", "bf16"], "critical_batch_sweep.yaml: no operation named 'bf16'"),
    (LLAMA, ["--sweep-plot", "FFN up, decode GEMV"],
     "llama_ffn.yaml: operation 'FFN up, decode GEMV' has no sweep to plot"),
    (LLAMA, ["--sweep-plot"], "llama_ffn.yaml: no operation has a sweep to plot"),
    (SWEEP, ["--sweep-y", "time"], "--sweep-y is the sweep plot's: give --sweep-plot too"),
])
def test_a_sweep_plot_that_cannot_be_drawn_is_one_line_and_no_file(tmp_path, session, args,
                                                                  message):
    out = tmp_path / "sweep.pdf"
    code, err = render(session, "-o", out, *args)
    assert code == 2
    assert err.count("\n") == 1 and message in err, err
    assert not out.exists()


def test_a_sweep_plot_is_not_an_html_page(tmp_path):
    out = tmp_path / "sweep.html"
    code, err = render(SWEEP, "-o", out, "--sweep-plot")
    assert code == 2 and "sweep.html: the sweep plot is not written as .html; use .png, .svg " \
        "or .pdf" in err
    assert not out.exists()
    # (an unknown format lists what the sweep plot is written as: never .html, then refused)
    code, err = render(SWEEP, "-o", tmp_path / "sweep.jpg", "--sweep-plot")
    assert code == 2 and "sweep.jpg: unknown figure format (.jpg); use .png, .svg or .pdf" in err


def test_a_sweep_over_less_than_two_decades_labels_its_twos_and_fives(tmp_path):
    """The sharded example sweeps d = 1024 … 65536 (its attainable from about 23 TFLOP/s up
    to the TPU v5e's 197): its x axis read "10⁴" alone (1000 lay too near the axis's end
    for its label) and its y axis "100 TFLOP/s" alone. Where fewer than two decades are
    labelled, 2 and 5 times each decade are too, where they have room."""
    from figures.figcheck import check_figure, format_defects, read_figure

    sharded = REPO / "workbench" / "examples" / "sharded_matmul.yaml"
    svg, pdf = tmp_path / "sweep.svg", tmp_path / "sweep.pdf"
    for out in (svg, pdf):
        code, err = render(sharded, "-o", out, "--sweep-plot", "--size", "single")
        assert (code, err) == (0, "")
    import xml.etree.ElementTree as ET

    texts = {" ".join("".join(t.itertext()).split())
             for t in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}text")}
    assert {"2000", "5000", "10⁴", "2×10⁴", "5×10⁴"} <= texts, texts
    assert {"20 TFLOP/s", "50 TFLOP/s", "100 TFLOP/s", "200 TFLOP/s"} <= texts, texts
    page = read_figure(pdf)
    defects = [d for d in check_figure(page) if d.kind != "truncation"]  # (the range's "…")
    assert defects == [], format_defects(defects, pdf.name)
