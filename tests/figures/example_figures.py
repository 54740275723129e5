"""The example sessions exported to PDF once per test run, for every test that reads them.

The figure checks read the same exports again and again: an example at a size and a theme is
checked for clean text, for every operation named, for tags and for names read as one, each
by its own test. An export is a few seconds of layout for the larger examples and the same
bytes each time (``tests/ui/test_export.py`` holds that an export is deterministic and that
an earlier export changes nothing in a later one), so it is made once and its bytes kept;
each test reads its own :class:`~figures.figcheck.Figure` from them. What the chart canvas
said about the export (which texts name the wrong thing) is read at once, while that canvas
is still the one the figure was drawn from.

The exports are kept by the test process that made them. The suite runs in several processes
(pytest-xdist, ``--dist loadfile``: each test file whole in one of them), and the files that
read these exports run in one process together (``SHARED_EXPORTS`` in ``tests/conftest.py``),
so each export is made once in the run.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

from conftest import EXAMPLES
from figures.figcheck import (
    Defect,
    Figure,
    canvas_attribution,
    check_attribution,
    pdf_attribution,
    read_figure,
    read_svg,
)

from workbench.io.sessions import load_session
from workbench.ui.figures.export import (
    figure_svg_sized,
    last_figure_canvas,
    resolve_size,
    svg_to_pdf,
)


@dataclass(frozen=True)
class ExampleFigure:
    """One example's PDF and SVG exports at one size and theme (the PDF is the SVG's page)."""

    stem: str
    size: str | None
    theme: str
    pdf: bytes
    svg: bytes
    #: texts that name the wrong thing: as the figure's canvas placed them, then as the file
    #: has them (see :func:`figures.figcheck.check_attribution`)
    attribution: tuple[Defect, ...]
    #: the same of the SVG file, read as XML (:func:`figures.figcheck.read_svg`)
    svg_attribution: tuple[Defect, ...]
    #: the lines of the PDF page and the names it pairs with their points that the SVG
    #: reader did not find in the SVG file
    svg_unread: tuple[str, ...]

    def figure(self) -> Figure:
        """The page read back from the file (a new object each call: a test may keep it)."""
        return read_figure(self.pdf)


def example_path(stem: str):
    return next(p for p in EXAMPLES if p.stem == stem)


@functools.cache
def example_figure(stem: str, size: str | None, theme: str = "light") -> ExampleFigure:
    """The example ``stem`` exported to PDF and SVG at ``size`` in ``theme`` (made on first
    use, from one layout)."""
    session = load_session(example_path(stem))
    svg, fig_size = figure_svg_sized(session, resolve_size(size, theme=theme), theme=theme)
    pdf = svg_to_pdf(svg, fig_size, session.title)
    canvas = last_figure_canvas()
    page, drawing = read_figure(pdf), read_svg(svg)
    on_page, on_svg = pdf_attribution(page, canvas), pdf_attribution(drawing, canvas)
    attribution = check_attribution(*canvas_attribution(canvas)) + check_attribution(*on_page)
    # what the PDF says that the SVG, read as XML, does not
    said = {_said(t.text) for t in drawing.texts}
    named = {t.text for t in on_svg[0]}
    unread = ([t.text for t in page.texts if _said(t.text) not in said]
              + [t.text for t in on_page[0] if t.text not in named])
    return ExampleFigure(stem, size, theme, pdf, svg, tuple(attribution),
                         tuple(check_attribution(*on_svg)), tuple(unread))


def _said(text: str) -> str:
    """A line's words (the PDF sets "fi" as one glyph, the SVG as two letters)."""
    return unicodedata.normalize("NFKC", text).strip()
