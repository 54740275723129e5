"""``roofline-workbench render``: figures checked for real.

Every example is drawn to PNG, SVG and PDF through the command line. The SVG is rasterised
by librsvg (``rsvg-convert``) and the PDF by poppler (``pdftoppm``), renderers that share no
code with Qt, and both are compared with the PNG: the same coloured roofs and points in the
same places, the same ink in the same regions. The PDF must carry its text as text
(``pdftotext``) and no raster images (``pdfimages``); a 300-dpi PNG must have thick roofs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_GUARD_S
from PySide6.QtGui import QImage

from workbench.cli import main
from workbench.io.sessions import load_session
from workbench.model.session import PALETTE
from workbench.ui.chart.theme import get_theme

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "workbench" / "examples").glob("*.yaml"))
LLAMA = REPO / "workbench" / "examples" / "llama_ffn.yaml"
#: Modest figures keep the suite fast; every format at the same size.
W, H, DPI = 720, 450, 96

for tool in ("rsvg-convert", "pdftoppm", "pdftotext", "pdfimages"):
    assert shutil.which(tool), f"{tool} is needed (Debian: librsvg2-bin, poppler-utils)"


def render(*args) -> tuple[int, str]:
    """``main(["render", ...])`` in this process: (exit status, stderr)."""
    import io
    from contextlib import redirect_stderr

    err = io.StringIO()
    with redirect_stderr(err):
        try:
            code = main(["render", *map(str, args)])
        except SystemExit as exc:  # argparse errors
            code = exc.code
    return code, err.getvalue()


def pixels(path: Path) -> np.ndarray:
    image = QImage(str(path))
    assert not image.isNull(), path
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())
    return raw[:, : w * 3].reshape(h, w, 3).astype(int)


def rasterise_svg(svg: Path, width: int, height: int) -> np.ndarray:
    out = svg.with_suffix(".rsvg.png")
    subprocess.run(["rsvg-convert", "-w", str(width), "-h", str(height), "-b", "white",
                    "-o", str(out), str(svg)], check=True, timeout=HANG_GUARD_S)
    return pixels(out)


def rasterise_pdf(pdf: Path, width: int, height: int) -> np.ndarray:
    stem = pdf.with_suffix(".poppler")
    subprocess.run(["pdftoppm", "-png", "-singlefile", "-scale-to-x", str(width),
                    "-scale-to-y", str(height), str(pdf), str(stem)], check=True, timeout=HANG_GUARD_S)
    return pixels(stem.with_suffix(".png"))


def hex_rgb(color: str) -> np.ndarray:
    return np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)])


def colour_mask(img: np.ndarray, color: str, tolerance: int = 24) -> np.ndarray:
    return np.abs(img - hex_rgb(color)).max(axis=2) <= tolerance


def chart_colours(machines: int | None = None) -> list[str]:
    """Point colours and (non-grey) roof colours of the light theme; with ``machines``, the
    roof colours of that many machines only (another machine's colour in a figure is only
    a blend at the edges of others' marks and texts, in a number of pixels that moves with
    the layout)."""
    theme = get_theme("light")
    out = []
    roofs = theme.roof_colors if machines is None else theme.roof_colors[:machines]
    for c in [*PALETTE, *roofs]:
        rgb = hex_rgb(c)
        if rgb.max() - rgb.min() >= 45:  # greys and black are shared with text and axes
            out.append(c)
    return out


def grow(mask: np.ndarray, r: int) -> np.ndarray:
    """``mask`` dilated by a square of half-side ``r`` pixels."""
    out = np.zeros_like(mask)
    h, w = mask.shape
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            out[max(0, dy):h + min(0, dy), max(0, dx):w + min(0, dx)] |= \
                mask[max(0, -dy):h - max(0, dy), max(0, -dx):w - max(0, dx)]
    return out


def compare(reference: np.ndarray, other: np.ndarray, what: str,
            machines: int | None = None) -> int:
    """Same coloured marks (roofs, points, paths) in the same places: nearly every pixel of a
    chart colour in one image lies within 3 pixels of that colour in the other, both ways;
    and the same ink in the same 12-pixel cells. Returns how many colours were compared."""
    assert reference.shape == other.shape, what
    compared = 0
    for color in chart_colours(machines):
        a, b = colour_mask(reference, color), colour_mask(other, color)
        # a colour seen only in antialiased edges is not a mark of its own (the muted roof
        # colours arise as blends; the vivid point colours do not)
        if a.sum() < (60 if color in PALETTE else 150):
            continue
        compared += 1
        assert b.sum() > 0.4 * a.sum(), f"{what}: {color} mostly missing ({b.sum()} vs {a.sum()})"
        near_b = (a & grow(b, 3)).sum() / a.sum()
        near_a = (b & grow(a, 3)).sum() / b.sum()
        assert near_b > 0.9 and near_a > 0.9, \
            f"{what}: {color} not in the same places ({near_b:.2f}, {near_a:.2f})"
    # ink (anything clearly not white) per 12 × 12 cell: the same cells are inked
    cell = 12
    h, w = (reference.shape[0] // cell) * cell, (reference.shape[1] // cell) * cell

    def ink(img):
        dark = (255 - img[:h, :w].min(axis=2)) > 60
        return dark.reshape(h // cell, cell, w // cell, cell).mean(axis=(1, 3)) > 0.04

    ia, ib = ink(reference), ink(other)
    iou = (ia & ib).sum() / max(1, (ia | ib).sum())
    assert iou > 0.85, f"{what}: ink differs (IoU {iou:.2f})"
    return compared


# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    """Every example in every format, rendered once through ``main``."""
    folder = tmp_path_factory.mktemp("figures")
    out = {}
    for example in EXAMPLES:
        for fmt in ("png", "svg", "pdf"):
            path = folder / f"{example.stem}.{fmt}"
            code, err = render(example, "-o", path, "--width", W, "--height", H, "--dpi", DPI)
            assert code == 0 and err == "", (example.name, fmt, err)
            out[example.stem, fmt] = path
    return out


@pytest.mark.parametrize("example", [p.stem for p in EXAMPLES])
def test_svg_and_pdf_draw_what_the_png_draws(figures, example):
    png = pixels(figures[example, "png"])
    assert png.shape == (H, W, 3)
    svg = rasterise_svg(figures[example, "svg"], W, H)
    pdf = rasterise_pdf(figures[example, "pdf"], W, H)
    machines = sum(e.visible for e in load_session(
        REPO / "workbench" / "examples" / f"{example}.yaml").hardware)
    assert compare(png, svg, f"{example} SVG (librsvg)", machines) >= 1
    assert compare(png, pdf, f"{example} PDF (poppler)", machines) >= 1


@pytest.mark.parametrize("example", [p.stem for p in EXAMPLES])
def test_vector_formats_keep_text_as_text(figures, example):
    session = load_session(REPO / "workbench" / "examples" / f"{example}.yaml")
    text = subprocess.run(["pdftotext", str(figures[example, "pdf"]), "-"], check=True,
                          capture_output=True, text=True, timeout=HANG_GUARD_S).stdout
    flat = " ".join(unicodedata.normalize("NFKC", text).split())
    assert "Arithmetic intensity" in flat and "FLOP/s" in flat, flat[:300]
    if session.title:
        assert session.title.split()[0] in flat
    images = subprocess.run(["pdfimages", "-list", str(figures[example, "pdf"])], check=True,
                            capture_output=True, text=True, timeout=HANG_GUARD_S).stdout
    assert len(images.strip().splitlines()) == 2, f"raster images in the PDF:\n{images}"

    root = ET.parse(figures[example, "svg"]).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    texts = ["".join(t.itertext()) for t in root.iter(f"{ns}text")]
    assert any("Arithmetic intensity" in t for t in texts)
    assert any("FLOP/s" in t for t in texts)
    assert not list(root.iter(f"{ns}image"))
    assert len(list(root.iter(f"{ns}path"))) > 5
    # portable: no stroke whose width depends on the renderer's idea of the viewport
    raw = figures[example, "svg"].read_text(encoding="utf-8")
    assert "non-scaling-stroke" not in raw
    assert re.search(r'width="[\d.]+mm"', raw)


def test_png_has_the_requested_size_and_dpi(figures):
    image = QImage(str(figures["llama_ffn", "png"]))
    assert (image.width(), image.height()) == (W, H)
    assert round(image.dotsPerMeterX() * 0.0254) == DPI


def _run_lengths(mask_column: np.ndarray) -> list[int]:
    runs, n = [], 0
    for value in mask_column:
        if value:
            n += 1
        elif n:
            runs.append(n)
            n = 0
    if n:
        runs.append(n)
    return runs


def _roof_thickness(img: np.ndarray, color: str) -> float:
    """Median vertical thickness (pixels) of the flat roof drawn in ``color``, measured on
    columns across the right half of the figure."""
    mask = colour_mask(img, color, 40)
    _h, w = mask.shape
    runs = []
    for x in range(int(w * 0.55), int(w * 0.9), max(1, w // 200)):
        column = _run_lengths(mask[:, x])
        if column:
            runs.append(max(column))
    assert len(runs) > 10, "roof not found"
    return float(np.median(runs))


def test_300_dpi_png_has_thick_roofs_and_proportional_text(tmp_path):
    low, high = tmp_path / "low.png", tmp_path / "high.png"
    assert render(LLAMA, "-o", low, "--size", "double", "--dpi", 96)[0] == 0
    assert render(LLAMA, "-o", high, "--size", "double", "--dpi", 300)[0] == 0
    hi, lo = QImage(str(high)), QImage(str(low))
    # a double column's width; its height at least the default's, taller where its key
    # says more (this example's key says the H100's and A100's ridges), the same page at
    # both resolutions
    assert hi.width() == round(7.16 * 300) and hi.height() >= round(3.6 * 300)
    assert abs(hi.height() / 300 - lo.height() / 96) < 0.02
    assert round(hi.dotsPerMeterX() * 0.0254) == 300
    brown = get_theme("light").roof_colors[1]  # the second machine's roofs
    thick_hi = _roof_thickness(pixels(high), brown)
    thick_lo = _roof_thickness(pixels(low), brown)
    assert thick_hi >= 3, thick_hi
    assert thick_hi > 2 * thick_lo  # lines scale with the DPI, not stuck at screen pixels
    # text scales too: the ink of the whole figure is the same picture, only sharper
    small = pixels(low)
    big = pixels(high)
    ys = (np.arange(small.shape[0]) * big.shape[0] / small.shape[0]).astype(int)
    xs = (np.arange(small.shape[1]) * big.shape[1] / small.shape[1]).astype(int)
    shrunk = big[ys][:, xs]
    ink_small = (255 - small.min(axis=2)) > 90
    ink_big = (255 - shrunk.min(axis=2)) > 90
    assert abs(ink_small.mean() - ink_big.mean()) < 0.35 * ink_small.mean()


def test_presentation_slide_is_large_and_labelled(tmp_path):
    slide, light = tmp_path / "slide.png", tmp_path / "light.png"
    assert render(LLAMA, "-o", slide, "--size", "slide", "--theme", "presentation")[0] == 0
    assert render(LLAMA, "-o", light, "--size", "slide", "--dpi", 96)[0] == 0
    image = QImage(str(slide))
    assert (image.width(), image.height()) == (1920, 1080)
    # thicker roofs than the light theme at screen resolution
    brown = get_theme("presentation").roof_colors[1]
    assert _roof_thickness(pixels(slide), brown) >= 2 * _roof_thickness(pixels(light), brown)
    # every operation is named on the chart (labels on points) in the vector twin
    pdf = tmp_path / "slide.pdf"
    assert render(LLAMA, "-o", pdf, "--size", "slide", "--theme", "presentation")[0] == 0
    text = " ".join(unicodedata.normalize("NFKC", subprocess.run(
        ["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True).stdout).split())
    for entry in load_session(LLAMA).operations:
        assert unicodedata.normalize("NFKC", entry.operation.name) in text


def test_transparent_and_dark(tmp_path):
    clear, dark = tmp_path / "clear.png", tmp_path / "dark.png"
    assert render(LLAMA, "-o", clear, "--width", 400, "--height", 300, "--transparent")[0] == 0
    assert render(LLAMA, "-o", dark, "--width", 400, "--height", 300, "--theme", "dark")[0] == 0
    image = QImage(str(clear))
    assert image.hasAlphaChannel()
    assert image.pixelColor(2, 2).alpha() == 0
    corner = QImage(str(dark)).pixelColor(2, 2)
    assert corner.name() == get_theme("dark").background.lower()
    svg = tmp_path / "clear.svg"
    assert render(LLAMA, "-o", svg, "--transparent")[0] == 0
    assert 'fill="#FFFFFF"' not in svg.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# bad input: one line, exit 2, nothing written


@pytest.mark.parametrize("args, words", [
    (["{missing}", "-o", "{out}.png"], "missing.yaml"),
    (["{broken}", "-o", "{out}.png"], "broken.yaml:"),
    (["{good}", "-o", "{out}.jpg"], ".jpg"),
    (["{good}", "-o", "{out}"], "no extension"),
    (["{good}", "-o", "{out}.png", "--width", "0"], "--width"),
    (["{good}", "-o", "{out}.png", "--height", "-5"], "--height"),
    (["{good}", "-o", "{out}.png", "--dpi", "0"], "--dpi"),
    (["{good}", "-o", "{out}.png", "--dpi", "nan"], "--dpi"),
    (["{good}", "-o", "{out}.png", "--dpi", "100000"], "dpi"),
    (["{good}", "-o", "{out}.png", "--width", "100", "--height", "80", "--dpi", "600"],
     "too small"),
    (["{good}", "-o", "{out}.png", "--width", "90000"], "too large"),
    (["{good}", "-o", "{out}.png", "--size", "poster"], "--size"),
    (["{good}", "-o", "{out}.png", "--theme", "neon"], "--theme"),
    (["{good}", "-o", "{tmp}/no/such/folder/fig.png"], "fig.png"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, args, words):
    broken = tmp_path / "broken.yaml"
    broken.write_text("schema_version: 1\noperations:\n  - kind: gemm\n    m: -5\n")
    names = {"missing": tmp_path / "missing.yaml", "broken": broken, "good": LLAMA,
             "out": tmp_path / "fig", "tmp": tmp_path}
    before = set(tmp_path.iterdir())
    code, err = render(*[a.format(**names) for a in args])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert words in lines[0], lines[0]
    assert set(tmp_path.iterdir()) == before  # no figure, no temporary file


def test_unwritable_target_keeps_the_old_file(tmp_path):
    target = tmp_path / "fig.png"
    target.write_bytes(b"old")
    os.chmod(tmp_path, 0o500)
    try:
        if os.access(tmp_path, os.W_OK):  # running as root: make the target a directory
            os.chmod(tmp_path, 0o700)
            target.unlink()
            target.mkdir()
        code, err = render(LLAMA, "-o", target, "--width", 300, "--height", 200)
    finally:
        os.chmod(tmp_path, 0o700)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "fig.png" in err
    assert target.is_dir() or target.read_bytes() == b"old"


def test_renders_without_a_display(tmp_path):
    """A real subprocess with no DISPLAY, no WAYLAND_DISPLAY and no QT_QPA_PLATFORM."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "fig.svg"
    result = subprocess.run([sys.executable, "-m", "workbench", "render", str(LLAMA), "-o",
                             str(out), "--size", "single"], env=env, capture_output=True,
                            text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 0, result.stderr
    assert "<svg" in out.read_text(encoding="utf-8")
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # an ordinary file, not a private one
