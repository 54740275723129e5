"""Figure sizes: the presets (16:9 slide, single and double paper columns), any width ×
height at a DPI, and their limits. A figure is laid out at its **logical size** (pixels
divided by ``dpi / 96``), so type, lines and markers scale with the DPI."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from workbench.records import record

__all__ = [
    "FORMATS", "PLOT_FORMATS", "SIZE_PRESETS", "SizePreset", "FigureSize", "ExportError", "resolve_size",
    "format_of", "MIN_LOGICAL", "MAX_PIXELS", "BASE_DPI", "type_boost", "DESIGN_EMS",
    "MIN_TICK_PT", "MOST_GROWTH", "MOST_KEY_HEIGHT_IN", "KEY_SHARE",
]

FORMATS = ("png", "svg", "pdf", "html")
#: what a plot beside the chart (the sweep plot, the throughput plot) is written as
PLOT_FORMATS = ("png", "svg", "pdf")
#: CSS pixels per inch: the canvas's logical unit.
BASE_DPI = 96.0
#: Default figure: 1600 × 1000 pixels at 160 dpi (laid out like a 960 × 600 window, 10 in wide).
DEFAULT_WIDTH, DEFAULT_HEIGHT, DEFAULT_DPI = 1600, 1000, 160.0
#: Smallest logical size (pixels / (dpi / 96)) that still holds axes and a plot.
MIN_LOGICAL = (160.0, 120.0)
#: Largest figure, in pixels per side and in total.
MAX_SIDE = 20_000
MAX_PIXELS = 80_000_000
DPI_RANGE = (24.0, 2400.0)
#: The presentation theme lays a figure out this much larger again (fonts, lines, markers):
#: on a 16:9 slide its tick labels read at about 19 pt, its title at 23 pt.
THEME_FIGURE_SCALE = {"presentation": 1.2}
#: A theme's type is drawn for a figure at least this many tick-label sizes wide and high
#: (a 16:9 slide in the presentation theme is 57 × 32 of them, a single paper column in the
#: light theme 35 × 26). A smaller figure (the presentation theme on a paper column: 20 × 15)
#: has every size (type, lines, markers) scaled down by the tighter of its width over the
#: design width and its height over the design height, never below :data:`MIN_TICK_PT`.
DESIGN_EMS = (30.0, 24.0)
#: Tick labels are never scaled below this size (points on the page).
MIN_TICK_PT = 7.0
#: A paper column's figure grows at most this many times its preset height to give its
#: points' tags room (:data:`MOST_KEY_HEIGHT_IN` for its key).
MOST_GROWTH = 1.8
#: A paper column's figure grows up to a journal page's text height (9 in) rather than
#: leave rows of its key out.
MOST_KEY_HEIGHT_IN = 9.0
#: The key below a figure's plot takes at most this share of the page's height, and when
#: even a page of :data:`MOST_KEY_HEIGHT_IN` cannot hold it so, up to ``KEY_SHARE[1]``: the
#: chart keeps at least 45 % of the page.
KEY_SHARE = (0.35, 0.55)
#: A figure's legend names at most this many operations (the rest: one line); a figure has
#: less room than a window.
FIGURE_LEGEND_OPERATIONS = 8


class ExportError(ValueError):
    """A figure that cannot be made: the message names the problem (one line)."""


@record(frozen=True)
class SizePreset:
    """A named figure size: fixed pixels (a slide), or a physical width in inches whose
    pixels follow the DPI (a paper column)."""

    key: str
    label: str
    dpi: float
    width_px: int | None = None
    height_px: int | None = None
    width_in: float | None = None
    height_in: float | None = None
    #: type, lines and markers relative to the screen (paper figures use smaller type)
    type_scale: float = 1.0

    def pixels(self, dpi: float | None = None) -> tuple[int, int, float]:
        dpi = float(dpi or self.dpi)
        if self.width_px is not None and self.height_px is not None:
            return self.width_px, self.height_px, dpi
        assert self.width_in is not None and self.height_in is not None
        return round(self.width_in * dpi), round(self.height_in * dpi), dpi


#: Sizes people ask for. The slide is 1920 × 1080 at 144 dpi: 13.33 × 7.5 in, PowerPoint's
#: 16:9 page, so the figure fills a slide at its natural size and fonts read as on the slide.
SIZE_PRESETS: dict[str, SizePreset] = {
    "slide": SizePreset("slide", "16:9 slide (1920 × 1080)", 144.0, width_px=1920,
                        height_px=1080),
    "single": SizePreset("single", "Single column (3.5 in)", 300.0, width_in=3.5,
                         height_in=2.6, type_scale=0.75),
    "double": SizePreset("double", "Double column (7.16 in)", 300.0, width_in=7.16,
                         height_in=3.6, type_scale=0.85),
}


@record(frozen=True)
class FigureSize:
    """Output pixels and DPI; :attr:`scale` = dpi / 96 is how much larger than the screen
    everything is drawn."""

    width: int
    height: int
    dpi: float
    #: extra enlargement of the layout (the presentation theme's), not of the pixels
    boost: float = 1.0
    #: a paper column: its width is the journal's, its height may grow up to this many
    #: pixels (:data:`MOST_GROWTH` times its preset's) so that the points have room for
    #: their tags (0: it does not grow) …
    most_height: int = 0
    #: … and up to this many (:data:`MOST_KEY_HEIGHT_IN`) so that the key below the plot
    #: lists every row
    most_key_height: int = 0
    #: the share of the page the key may take (0: :data:`KEY_SHARE`'s first)
    key_share: float = 0.0

    @property
    def grows(self) -> bool:
        """Whether it may be made taller (see :attr:`most_height`)."""
        return max(self.most_height, self.most_key_height) > self.height

    def taller(self, height: int) -> FigureSize:
        """This figure ``height`` pixels high (at most :attr:`most_height`), its type as it
        was."""
        return replace(self, height=min(max(self.height, int(height)),
                                        max(self.most_height, self.height)))

    def taller_for_key(self, height: int, share: float = 0.0) -> FigureSize:
        """This figure ``height`` pixels high (at most :attr:`most_key_height`), its key
        allowed ``share`` of the page (0: as it was)."""
        return replace(self, height=min(max(self.height, int(height)),
                                        max(self.most_key_height, self.height)),
                       key_share=share or self.key_share)

    @property
    def scale(self) -> float:
        return self.dpi / BASE_DPI * self.boost

    @property
    def logical(self) -> tuple[float, float]:
        return self.width / self.scale, self.height / self.scale

    @property
    def inches(self) -> tuple[float, float]:
        return self.width / self.dpi, self.height / self.dpi


def resolve_size(size: str | None = None, width: int | None = None, height: int | None = None,
                 dpi: float | None = None, theme: str = "light") -> FigureSize:
    """The figure size from a preset key and/or explicit pixels and DPI.

    A preset gives the defaults (a paper column's pixels follow ``dpi``); an explicit width
    or height overrides it; a lone width or height keeps the preset's (or the default
    figure's) aspect ratio. Raises :class:`ExportError` for nonsense (zero or negative sizes,
    absurd DPI, a figure too small for its DPI or too large to hold in memory)."""
    if dpi is not None:
        if not isinstance(dpi, int | float) or not math.isfinite(dpi):
            raise ExportError(f"dpi must be a number, got {dpi!r}")
        if not DPI_RANGE[0] <= dpi <= DPI_RANGE[1]:
            raise ExportError(f"dpi must be between {DPI_RANGE[0]:g} and {DPI_RANGE[1]:g}, "
                              f"got {dpi:g}")
    for name, value in (("width", width), ("height", height)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ExportError(f"{name} must be a positive whole number of pixels, got {value!r}")
    grows = False
    if size is not None:
        preset = SIZE_PRESETS.get(size)
        if preset is None:
            raise ExportError(f"unknown size {size!r} (choose from {', '.join(SIZE_PRESETS)})")
        base_w, base_h, base_dpi = preset.pixels(dpi)
        type_scale = preset.type_scale
        grows = preset.height_in is not None and height is None
    else:
        type_scale = 1.0
        base_dpi = float(dpi) if dpi is not None else DEFAULT_DPI
        base_w = round(DEFAULT_WIDTH * base_dpi / DEFAULT_DPI)
        base_h = round(DEFAULT_HEIGHT * base_dpi / DEFAULT_DPI)
    if width is not None and height is None:
        height = max(1, round(width * base_h / base_w))
    elif height is not None and width is None:
        width = max(1, round(height * base_w / base_h))
    w_px, h_px = int(width or base_w), int(height or base_h)
    tallest = min(MAX_SIDE, MAX_PIXELS // max(1, w_px))  # (a grown figure is not too large)
    fig = FigureSize(w_px, h_px, float(base_dpi),
                     type_boost(theme, type_scale, w_px / base_dpi, h_px / base_dpi),
                     min(round(h_px * MOST_GROWTH), tallest) if grows else 0,
                     min(max(round(MOST_KEY_HEIGHT_IN * base_dpi), round(h_px * MOST_GROWTH)),
                         tallest) if grows else 0)
    if fig.width > MAX_SIDE or fig.height > MAX_SIDE or fig.width * fig.height > MAX_PIXELS:
        raise ExportError(f"figure of {fig.width} × {fig.height} pixels is too large "
                          f"(at most {MAX_SIDE} per side and {MAX_PIXELS // 1_000_000} million "
                          "pixels)")
    lw, lh = fig.logical
    if lw < MIN_LOGICAL[0] or lh < MIN_LOGICAL[1]:
        min_w = math.ceil(MIN_LOGICAL[0] * fig.scale)
        min_h = math.ceil(MIN_LOGICAL[1] * fig.scale)
        raise ExportError(f"figure of {fig.width} × {fig.height} pixels is too small for "
                          f"{fig.dpi:g} dpi (at least {min_w} × {min_h}, or a lower dpi)")
    return fig


def type_boost(theme: str, type_scale: float, width_in: float, height_in: float) -> float:
    """How much larger than on screen a figure's type, lines and markers are drawn: the
    theme's enlargement × the size's type scale, less on a figure smaller than the theme's
    design size (:data:`DESIGN_EMS` tick-label sizes each way), never with tick labels
    below :data:`MIN_TICK_PT`."""
    from workbench.ui.chart.theme import get_theme

    boost = THEME_FIGURE_SCALE.get(theme, 1.0) * type_scale
    tick = get_theme(theme).tick_size  # points, on screen
    fits = min(width_in * 72.0 / DESIGN_EMS[0], height_in * 72.0 / DESIGN_EMS[1]) / tick
    if fits >= boost:
        return boost
    return max(fits, min(boost, MIN_TICK_PT / tick))


def format_of(path: str | os.PathLike[str], formats: Sequence[str] = FORMATS,
              figure: str = "this figure") -> str:
    """One of ``formats`` (``png``, ``svg``, ``pdf`` or ``html``: what ``figure`` can be
    written as, :data:`PLOT_FORMATS` for the sweep and throughput plots) from a file name;
    :class:`ExportError` otherwise, naming those (and no other)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in formats:
        listed = ", ".join(f".{f}" for f in formats[:-1]) + f" or .{formats[-1]}"
        if suffix in FORMATS:
            raise ExportError(f"{Path(path).name}: {figure} is not written as .{suffix}; "
                              f"use {listed}")
        shown = f".{suffix}" if suffix else "no extension"
        raise ExportError(f"{Path(path).name}: unknown figure format ({shown}); use {listed}")
    return suffix
