"""Chart themes: colours, fonts, line widths and marker sizes for light, dark and presentation.

A :class:`Theme` is plain data (hex colours, point sizes, pixel widths) so that the live
canvas and the exporter read the same numbers; :meth:`Theme.scaled` enlarges every size for a
high-DPI export. The small helpers at the bottom turn a theme's values into Qt objects
(``QColor``, ``QPen``, ``QFont``, pyqtgraph brushes).

Operation colours come from :data:`workbench.model.session.PALETTE` (Okabe–Ito, safe for the
common colour-vision deficiencies); a theme may only swap colours that would vanish on its
background (:meth:`Theme.point_color`: black points become light grey on the dark theme).
"""

from __future__ import annotations

from dataclasses import field, replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPen

from workbench.records import record

__all__ = ["Theme", "THEMES", "get_theme", "qcolor", "make_pen", "make_brush", "make_font",
           "LINE_STYLES"]


@record(frozen=True)
class Theme:
    """Every visual constant of the chart.

    Colours are ``#RRGGBB`` or ``#RRGGBBAA``; font sizes in points; line widths and marker
    sizes in device-independent pixels.
    """

    name: str
    background: str
    foreground: str  # axis lines, tick labels, titles
    text: str  # annotation text (point, roof and ridge labels)
    muted: str  # secondary annotation text (minor roofs, notes)
    grid_alpha: float  # 0..1, for the decade grid
    roof_colors: tuple[str, ...]  # one per visible machine, in order
    region_memory: str
    region_compute: str
    region_text: str
    point_outline: str
    selection: str
    legend_background: str
    legend_border: str
    font_family: str = ""
    tick_size: float = 9.5
    axis_title_size: float = 10.5
    title_size: float = 12.0
    label_size: float = 9.0  # point labels
    annotation_size: float = 8.5  # roof and ridge labels
    legend_size: float = 9.0
    roof_width: float = 2.0  # main roofs
    minor_roof_width: float = 1.2  # other memory levels, other precisions, derated, interconnect
    point_size: float = 11.0
    ring_extra: float = 9.0  # the selection ring is this much larger than a point
    ridge_size: float = 7.0
    color_swaps: dict[str, str] = field(default_factory=dict)

    def roof_color(self, index: int) -> str:
        return self.roof_colors[index % len(self.roof_colors)]

    def point_color(self, color: str) -> str:
        """An operation's colour as drawn on this theme (colours that would vanish on the
        background are swapped; everything else is left as the session says)."""
        return self.color_swaps.get(color.upper(), color)

    def scaled(self, factor: float) -> Theme:
        """Every size multiplied by ``factor`` (an export at 2× or at 300 dpi)."""
        return replace(
            self,
            tick_size=self.tick_size * factor,
            axis_title_size=self.axis_title_size * factor,
            title_size=self.title_size * factor,
            label_size=self.label_size * factor,
            annotation_size=self.annotation_size * factor,
            legend_size=self.legend_size * factor,
            roof_width=self.roof_width * factor,
            minor_roof_width=self.minor_roof_width * factor,
            point_size=self.point_size * factor,
            ring_extra=self.ring_extra * factor,
            ridge_size=self.ridge_size * factor,
        )


_LIGHT = Theme(
    name="light",
    background="#FFFFFF",
    foreground="#202020",
    text="#1A1A1A",
    muted="#5A5A5A",
    grid_alpha=0.16,
    roof_colors=("#1F1F1F", "#7A4E2D", "#3E5C76", "#6B3F6B", "#4F6B3A", "#8A8A8A"),
    region_memory="#0072B21C",
    region_compute="#D55E0018",
    region_text="#00000070",
    point_outline="#1A1A1A",
    selection="#000000",
    legend_background="#FFFFFFE6",
    legend_border="#C8C8C8",
)

_DARK = Theme(
    name="dark",
    background="#16181D",
    foreground="#D8DCE2",
    text="#E6E9ED",
    muted="#A0A7B0",
    grid_alpha=0.20,
    roof_colors=("#E8E8E8", "#D9A070", "#8DB3D6", "#C9A0DC", "#A8C98A", "#9A9A9A"),
    region_memory="#56B4E924",
    region_compute="#E69F001E",
    region_text="#FFFFFF70",
    point_outline="#101010",
    selection="#FFFFFF",
    legend_background="#202329E6",
    legend_border="#4A4F57",
    color_swaps={"#000000": "#E0E0E0"},
)

#: White, large type and thick lines: a figure for a slide or a paper.
_PRESENTATION = replace(
    _LIGHT,
    name="presentation",
    foreground="#000000",
    text="#000000",
    muted="#404040",
    grid_alpha=0.14,
    tick_size=14.0,
    axis_title_size=15.0,
    title_size=17.0,
    label_size=13.0,
    annotation_size=12.0,
    legend_size=12.5,
    roof_width=3.2,
    minor_roof_width=1.8,
    point_size=16.0,
    ring_extra=12.0,
    ridge_size=10.0,
)

THEMES: dict[str, Theme] = {t.name: t for t in (_LIGHT, _DARK, _PRESENTATION)}


def get_theme(name: str) -> Theme:
    """The theme called ``name``; unknown names fall back to ``light``."""
    return THEMES.get(name, _LIGHT)


# ---------------------------------------------------------------------------------------
# Qt helpers

#: Scene line styles (:attr:`workbench.model.chart.scene.Roof.line`) as dash patterns (in pen widths).
LINE_STYLES: dict[str, list[float] | None] = {
    "solid": None,
    "dashed": [5.0, 3.0],
    "dashdot": [6.0, 2.5, 1.2, 2.5],
    "dotted": [1.0, 2.5],
}


def qcolor(value: str, alpha: float | None = None) -> QColor:
    """``#RRGGBB`` or ``#RRGGBBAA`` (alpha last, unlike Qt's ``#AARRGGBB``) → QColor;
    ``alpha`` (0..1) overrides."""
    text = value.strip()
    if len(text) == 9 and text.startswith("#"):
        color = QColor(text[:7])
        color.setAlpha(int(text[7:9], 16))
    else:
        color = QColor(text)
    if alpha is not None:
        color.setAlphaF(max(0.0, min(1.0, alpha)))
    return color


def make_pen(color: str, width: float = 1.0, line: str = "solid") -> QPen:
    """A cosmetic pen (its width in pixels whatever the zoom) with a scene line style."""
    pen = QPen(qcolor(color))
    pen.setWidthF(width)
    pen.setCosmetic(True)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap if line != "solid" else Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    pattern = LINE_STYLES.get(line)
    if pattern:
        pen.setDashPattern(pattern)
    return pen


def make_brush(color: str) -> QBrush:
    return QBrush(qcolor(color))


def make_font(theme: Theme, size: float, bold: bool = False) -> QFont:
    font = QFont(theme.font_family) if theme.font_family else QFont()
    font.setPointSizeF(size)
    font.setBold(bold)
    return font
