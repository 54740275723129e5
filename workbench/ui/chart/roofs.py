"""The chart's machines: the shaded regions, the roofs and the ridges with their texts.

:class:`RoofLayer` owns these items (pooled and reused) and what each stands for; a part of
:class:`~workbench.ui.chart.canvas.RooflineCanvas`, synced to each rebuilt
:class:`~workbench.model.chart.scene.Scene`. Their texts are placed by the chart's one text layout
(:mod:`workbench.ui.chart.labels`), which reads them here.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from workbench.document.derivation import NBSP
from workbench.model.chart.occupancy import Occupancy
from workbench.model.chart.placement import boxes_stopped, leaders_stopped
from workbench.model.chart.scene import Region, Ridge, Roof, Scene
from workbench.model.units import format_list, format_quantity
from workbench.ui.chart.axes import to_data, to_view
from workbench.ui.chart.items import Label, Pool, Segment, Spots
from workbench.ui.chart.styles import at_z
from workbench.ui.chart.theme import make_brush, qcolor

#: the texts' places kept clear of the lines (see RoofLayer.places_clear_of_lines), at most:
#: a view's ridge texts, in full and short, a few sizes each
PLACES_CLEAR_KEPT = 256


class RoofLayer:
    """Regions, roofs and ridges of the chart (see the module)."""

    def __init__(self, canvas, add, curve) -> None:
        """``add`` puts an item into the view; ``curve(z, **options)`` makes a line item."""
        self._canvas = canvas
        self._styles = canvas.styles
        self._region_pool = Pool(lambda: curve(-20), add)
        self._roof_pool = Pool(lambda: Segment(-1), add)
        # (a line per ridge: an HTML figure hides each with its machine)
        self._ridge_pool = Pool(lambda: Segment(-5), add)
        self._ridge_marks = at_z(Spots(), 2)
        self._roofs: list[tuple[Roof, Segment]] = []
        #: each roof's ends in view units, a row ``(x0, y0, x1, y1)`` per roof drawn
        self._roof_ends = np.zeros((0, 4))
        self._roof_labels: list[tuple[Roof, Label]] = []
        #: for each roof text, every roof whose value it says (its own first: roofs of one
        #: drawn line with the same words share one text)
        self._said_by: list[tuple[Roof, ...]] = []
        #: the roof and ridge texts said for now without their machine's name, by their
        #: keys (see :meth:`shorten`)
        self._shortened: set[tuple] = set()
        self._ridge_items: list[tuple[Ridge, Label]] = []
        self._ridge_lines: list[tuple[Ridge, Segment]] = []
        self._region_items: list[tuple[Region, pg.PlotCurveItem, Label]] = []
        self._cells: tuple | None = None  # (what they were worked out for, the occupancy)
        #: of texts' places, those whose leaders cross none of these lines (see
        #: places_clear_of_lines; None: asked for once), while the lines' cells stay; by the
        #: places' id and the text's size
        self._clear: dict[tuple, tuple[np.ndarray, np.ndarray | None]] = {}

    # -- what is drawn (read by the text layout) --------------------------------------

    @property
    def ridge_lines(self) -> list[tuple[Ridge, Segment]]:
        """Each ridge with its dotted line down to the plot's floor."""
        return self._ridge_lines

    @property
    def ridge_marks(self) -> Spots:
        """The diamond at each ridge."""
        return self._ridge_marks

    def lines(self) -> list[Segment]:
        """Every roof and ridge line item, those hidden too."""
        return self._roof_pool.items + self._ridge_pool.items

    @property
    def roofs(self) -> list[tuple[Roof, Segment]]:
        """Each roof drawn with its line item."""
        return self._roofs

    @property
    def roof_texts(self) -> list[tuple[Roof, Label]]:
        """Each roof that has a text, with its text item."""
        return self._roof_labels

    def says(self, i: int) -> tuple[Roof, ...]:
        """The roofs whose value the text ``i`` (of :attr:`roof_texts`) says: its own, then
        those of other machines drawn as the same line with the same words ("bf16
        989 TFLOP/s" of an H100 and an H200), which have no text of their own."""
        return self._said_by[i]

    def shorter(self, key: tuple) -> str | None:
        """The text of ``key`` (``("roof", i)`` of :attr:`roof_texts`, ``("ridge", i)`` of
        :attr:`ridges`) without its machine's name, as the key of a figure says a roof's
        value after the name ("bf16 989 TFLOP/s": :func:`value_words`; "ridge 295 FLOP/B"):
        the line's colour or the diamond's, on its machine's line, says whose it is. None
        where it has no shorter form (a roof's but a main compute roof's, or one line's of
        several machines, which says no name already) or says it now."""
        item, label = self._entry(key)
        short = value_words(item) if key[0] == "roof" else ridge_words(item)
        return None if key in self._shortened or short == label.toPlainText() else short

    def shorten(self, key: tuple) -> None:
        """Say the text of ``key`` as :meth:`shorter` gives it, until :meth:`lengthen`."""
        short = self.shorter(key)
        if short is not None:
            self._entry(key)[1].setText(short)
            self._shortened.add(key)

    def lengthen(self) -> None:
        """Say each text shortened by :meth:`shorten` in full again."""
        for key in sorted(self._shortened):
            item, label = self._entry(key)
            label.setText(item.label)
        self._shortened = set()

    def _entry(self, key: tuple) -> tuple:
        """The roof or ridge of ``key`` (see :meth:`shorter`) with its text item."""
        kind, i = key
        return (self._roof_labels if kind == "roof" else self._ridge_items)[i]

    def same_line(self, roof: Roof) -> list[Roof]:
        """The roofs drawn as the same line as ``roof`` (itself among them): of the same
        kind and value, over a common stretch (two machines of one peak). A reader cannot
        tell such lines apart, so a text beside them names each."""
        return [other for other, _curve in self._roofs if other is roof or _coincide(roof, other)]

    @property
    def ridges(self) -> list[tuple[Ridge, Label]]:
        """Each ridge with its text item."""
        return self._ridge_items

    @property
    def regions(self) -> list[tuple[Region, pg.PlotCurveItem, Label]]:
        """Each shaded region with its fill and text items."""
        return self._region_items

    def line_color(self, roof: Roof) -> str:
        """The colour of ``roof``'s line and text: its machine's, lighter for a minor roof."""
        color = self._canvas.theme.roof_color(roof.style_index)
        if roof.emphasis != "main" and not roof.derated and roof.kind != "interconnect":
            color = _fade(color, 0.7)
        return color

    def roof_width(self, roof: Roof) -> float:
        theme = self._canvas.theme
        return theme.roof_width if roof.emphasis == "main" else theme.minor_roof_width

    # -- read-outs ----------------------------------------------------------------------

    def roof_items(self) -> list[tuple[int, str, str, list[float], list[float]]]:
        """See :meth:`RooflineCanvas.roof_items`."""
        out = []
        for roof, curve in self._roofs:
            xs, ys = curve.getData()
            kind = f"derated {roof.kind}" if roof.derated else roof.kind
            out.append((roof.hw_id, kind, roof.name, [float(v) for v in to_data(xs)],
                        [float(v) for v in to_data(ys)]))
        return out

    def ridge_labels(self) -> list[str]:
        return [item.toPlainText() for _, item in self._ridge_items if item.isVisible()]

    def roof_labels(self) -> list[str]:
        return [item.toPlainText() for _, item in self._roof_labels if item.isVisible()]

    def nearest_roof(self, scene_pos, radius: float) -> int | None:
        """The index (in :attr:`roofs`) of the roof line nearest ``scene_pos`` if within
        ``radius`` pixels of it."""
        if not len(self._roof_ends):
            return None
        ax, bx, ay, by = self._canvas.view_to_scene()
        ends = self._roof_ends * (ax, ay, ax, ay) + (bx, by, bx, by)
        x0, y0 = ends[:, 0] - scene_pos.x(), ends[:, 1] - scene_pos.y()
        dx, dy = ends[:, 2] - ends[:, 0], ends[:, 3] - ends[:, 1]
        # the nearest place on each segment, 0 at its start and 1 at its end
        t = np.clip(-(x0 * dx + y0 * dy) / np.maximum(dx * dx + dy * dy, 1e-12), 0.0, 1.0)
        d2 = (x0 + t * dx) ** 2 + (y0 + t * dy) ** 2
        d2[[not curve.isVisible() for _roof, curve in self._roofs]] = np.inf
        i = int(np.argmin(d2))
        return i if d2[i] <= radius**2 else None

    def roof_of_text(self, scene_pos) -> int | None:
        """The roof (its index in :attr:`roofs`) whose value's text shown lies under
        ``scene_pos``: hovered, a value said without its machine's name says whose it is."""
        at = _shown_at(self._roof_labels, scene_pos)
        if at is None:
            return None
        roof = self._roof_labels[at][0]
        return next(i for i, (r, _curve) in enumerate(self._roofs) if r is roof)

    def ridge_of_text(self, scene_pos) -> int | None:
        """The ridge (its index in :attr:`ridges`) whose text shown lies under
        ``scene_pos``."""
        return _shown_at(self._ridge_items, scene_pos)

    def ridge_tip(self, i: int) -> str:
        """What the ridge ``i`` (in :attr:`ridges`) is, after its machine's name: "AMD EPYC
        9654 Genoa (1 socket) — ridge 32 FLOP/B"."""
        ridge = self._ridge_items[i][0]
        mark = self._machine(ridge.hw_id)
        return f"{mark.name} — {ridge_words(ridge)}" if mark is not None else ridge.label

    def _machine(self, hw_id: int):
        """The scene's machine ``hw_id`` (None: none drawn)."""
        scene = self._canvas.scene_model
        return next((m for m in scene.machines if m.hw_id == hw_id), None) if scene else None

    def roof_tip(self, i: int) -> str:
        """What the roof ``i`` (in :attr:`roofs`) is, in the words of the plot's roof texts,
        after its machine's name: "NVIDIA H100 SXM5 80GB — bf16 989 TFLOP/s" (after each
        machine's whose roof is drawn as the same line)."""
        roof = self._roofs[i][0]
        scene = self._canvas.scene_model
        mark = self._machine(roof.hw_id)
        text = value_words(roof)
        if not text:  # (a derated memory roof has no text of its own)
            eff = mark.efficiency if mark is not None and mark.efficiency else 1.0
            text = (f"practical {eff * 100:.3g} %: {roof.name} "
                    f"{format_quantity(roof.value, 'bandwidth')}")
        if mark is None:
            return text
        # (machines of one peak draw one line: the tip names each whose it is)
        whose = {r.hw_id for r in self.same_line(roof)}
        names = [m.name for m in scene.machines if m.hw_id in whose]
        return f"{format_list(names)} — {text}"

    def region_items(self) -> list[tuple[str, str]]:
        return [(region.kind, label.toPlainText()) for region, curve, label in self._region_items
                if curve.isVisible()]

    # -- syncing ------------------------------------------------------------------------

    def occupancy(self, px, frame, cell: float, air: float) -> Occupancy:
        """An occupancy (:class:`Occupancy` of ``cell`` pixels) of the plot ``frame`` covered
        by the roofs and the ridges' drop lines alone, each grown by ``air`` (``px(x, y)``:
        view units to pixels), for the text layout to add the rest to: worked out again
        only when the lines or the view changed (an edit of an operation moves neither),
        else a copy of the last (cells are counts: what is added later adds up the same)."""
        lines = []
        for roof, curve in self._roofs:
            if curve.isVisible():
                # a cache level's thin line (View ▸ All Memory Roofs): no text on it, but a
                # leader may cross it to a name beyond (lines close together above the
                # points left the names no place)
                lines.append((*px(*curve.getData()), self.roof_width(roof) / 2 + air,
                              roof.kind == "memory" and roof.emphasis != "main", True))
        for _ridge, curve in self._ridge_lines:
            lines.append((*px(*curve.getData()), 0.5 + air, True, False))
        key = (tuple(frame), cell, [(x.tobytes(), y.tobytes(), *more) for x, y, *more in lines])
        if self._cells is None or self._cells[0] != key:
            occ = Occupancy(frame, cell)
            straight = [ln for ln in lines if len(ln[0]) == 2]  # (all at once)
            if straight:
                occ.add_segments([(x[0], y[0], x[1], y[1]) for x, y, *_ in straight],
                                 [ln[2] for ln in straight], [ln[3] for ln in straight],
                                 [ln[4] for ln in straight])
            for x, y, half, soft, line in lines:
                if len(x) != 2:
                    occ.add_polyline(x, y, half, soft=soft, line=line)
            occ.keep_drawn()  # (shared by its copies until one adds a line)
            occ.hold_copies()  # (the tables of these lines made once: see hold_copies)
            self._cells = (key, occ)
            self._clear = {}
        return self._cells[1].copy()

    def places_clear_of_lines(self, places: np.ndarray, frame: tuple, cell: float,
                              size: tuple[float, float] | None = None) -> np.ndarray:
        """Of ``places`` (rows ``left, top, x0, y0, x1, y1``: a text's places, kept and
        read-only), those whose leader crosses none of the lines of :meth:`occupancy`, last
        worked out for the plot ``frame``, and (given the text's ``size``, ``w, h``) whose
        box lies in the plot clear of them (a place over a roof's or a ridge's line, or
        whose leader crosses one, is refused at every placing: :func:`leaders_stopped`,
        :func:`boxes_stopped`); ``places`` as they are where the lines' cells were worked
        out for another frame."""
        made = self._cells
        if made is None or made[1].frame != tuple(frame) or made[1].cell != cell:
            return places
        key = (id(places), size)
        kept = self._clear.get(key)
        if kept is None or kept[0] is not places:
            # (the first time, as they are: sorted out only when asked for again, for the
            # same lines; a placing for a frame the plot leaves at once, as at start-up,
            # would sort out each text's places for nothing)
            if len(self._clear) >= PLACES_CLEAR_KEPT:  # (texts resized over and over)
                self._clear = {}
            self._clear[key] = (places, None)
            return places
        if kept[1] is None:
            clear = places[~self.places_refused(places, frame, cell, size)]
            clear.setflags(write=False)
            kept = self._clear[key] = (places, clear)
        return kept[1]

    def places_refused(self, places: np.ndarray, frame: tuple, cell: float,
                       size: tuple[float, float] | None = None) -> np.ndarray:
        """Which of ``places`` every placing refuses for the lines of :meth:`occupancy` (see
        :meth:`places_clear_of_lines`), worked out afresh: none where the lines' cells
        were worked out for another frame."""
        made = self._cells
        places = np.asarray(places, dtype=float).reshape(-1, 6)
        if made is None or made[1].frame != tuple(frame) or made[1].cell != cell:
            return np.zeros(len(places), dtype=bool)
        stopped = leaders_stopped(made[1], places)
        if size is not None:
            stopped |= boxes_stopped(made[1], places, *size)
        return stopped

    def fixed_items(self) -> tuple:
        """The items made once (the pools make theirs as needed)."""
        return (self._ridge_marks,)

    def sync_regions(self, scene: Scene) -> None:
        theme = self._canvas.theme
        pool = self._region_pool
        texts = self._styles.texts("region")
        pool.reset()
        texts.reset()
        self._region_items = []
        for region in scene.regions:
            curve = pool.take()
            color = theme.region_memory if region.kind == "memory" else theme.region_compute
            curve.setData(x=to_view(np.asarray(region.xs)), y=to_view(np.asarray(region.ys)),
                          pen=None, fillLevel=float(to_view(region.floor)),
                          brush=make_brush(color))
            label = self._styles.take_label("region")
            label.setText(region.label)
            self._region_items.append((region, curve, label))
        pool.finish()
        texts.finish()

    def sync_roofs(self, scene: Scene) -> None:
        pool = self._roof_pool
        texts = self._styles.texts("roof")
        pool.reset()
        texts.reset()
        self._roofs = []
        self._roof_labels = []
        self._said_by = []
        # (each roof text is set anew below)
        self._shortened = {k for k in self._shortened if k[0] != "roof"}
        for roof in scene.roofs:
            curve = pool.take()
            color = self.line_color(roof)
            width = self.roof_width(roof)
            curve.setData(x=to_view(np.asarray(roof.xs)), y=to_view(np.asarray(roof.ys)),
                          pen=self._styles.pen(color, width, roof.line))
            curve.setZValue(-3 if roof.derated else (-1 if roof.emphasis == "main" else -2))
            self._roofs.append((roof, curve))
            shared = next((i for i, (other, _label) in enumerate(self._roof_labels)
                           if other.name == roof.name and roof.label and _coincide(other, roof)),
                          None)
            if shared is not None:  # (one text for one line, of each machine whose it is)
                self._said_by[shared] += (roof,)
                label = self._roof_labels[shared][1]
                if roof.label != label.toPlainText():  # ("H100 …: bf16 989 TFLOP/s")
                    label.setText(value_words(roof))
            elif roof.label:
                label = self._styles.take_label("roof")
                label.setText(roof.label)
                label.setColor(qcolor(color))
                self._roof_labels.append((roof, label))
                self._said_by.append((roof,))
        self._roof_ends = np.asarray([to_view(np.asarray((r.xs[0], r.ys[0], r.xs[1], r.ys[1])))
                                      for r, _curve in self._roofs], float).reshape(-1, 4)
        pool.finish()
        texts.finish()

    def sync_ridges(self, scene: Scene) -> None:
        theme = self._canvas.theme
        texts = self._styles.texts("ridge")
        texts.reset()
        # (each ridge text is set anew below)
        self._shortened = {k for k in self._shortened if k[0] != "ridge"}
        self._ridge_pool.reset()
        self._ridge_items = []
        self._ridge_lines = []
        floor = float(to_view(scene.y_range[0])) - 8
        xs, ys = [], []
        brushes = []
        pen = self._styles.pen(theme.muted, 1.0, "dotted")
        for ridge in scene.ridges:
            lx, ly = float(to_view(ridge.x)), float(to_view(ridge.y))
            xs.append(lx)
            ys.append(ly)
            curve = self._ridge_pool.take()
            curve.setData(x=np.asarray([lx, lx]), y=np.asarray([floor, ly]), pen=pen)
            self._ridge_lines.append((ridge, curve))
            brushes.append(self._styles.brush(theme.roof_color(ridge.style_index)))
            label = self._styles.take_label("ridge")
            label.setText(ridge.label)
            label.setPos(lx, ly)
            self._ridge_items.append((ridge, label))
        texts.finish()
        self._ridge_pool.finish()
        marks_x = np.asarray(xs, float)
        marks_y = np.asarray(ys, float)
        self._ridge_marks.setData(x=marks_x, y=marks_y, symbol="d", size=theme.ridge_size,
                                  brush=brushes, pen=self._styles.pen(theme.background, 1.2))

    def dispose(self) -> None:
        """Forget every item (the chart's items are gone)."""
        for pool in (self._region_pool, self._roof_pool, self._ridge_pool):
            pool.items = []
            pool.used = 0
        self._roofs, self._roof_labels, self._ridge_items, self._region_items = [], [], [], []
        self._said_by = []
        self._shortened = set()
        self._roof_ends = np.zeros((0, 4))
        self._ridge_lines = []


def value_words(roof: Roof) -> str:
    """``roof``'s text without the machine's name a main compute roof's text begins with
    ("H100 SXM5 80GB: bf16 989 TFLOP/s" → "bf16 989 TFLOP/s"); any other roof's as it is."""
    if roof.kind == "compute" and roof.emphasis == "main" and not roof.derated:
        return roof.label.split(": ", 1)[-1]
    return roof.label


def ridge_words(ridge: Ridge) -> str:
    """``ridge``'s text without the machine's name it begins with ("H100 SXM5 80GB: ridge
    295 FLOP/B" → "ridge 295 FLOP/B")."""
    return ridge.label.split(": ", 1)[-1]


def _unbroken(text: str) -> str:
    """``text`` that a row of the key does not wrap inside: its spaces no-break spaces
    (the legend breaks a long row at plain spaces only)."""
    return text.replace(" ", NBSP)


def key_values(scene: Scene, rows: frozenset) -> tuple[dict[int, str], str | None]:
    """What a figure's key says after each machine's name of the values ``rows`` (pairs
    ``(hw_id, kind)``: ``"memory"`` or ``"compute"`` for its roofs' values, ``"ridge"`` for
    its ridges): each as the chart would say it beside its line or diamond, the memory's
    first, then the compute roofs', highest first, then the ridges. Where every machine's
    compute roofs are said and are the same (an H100 and an H200: one line each, one text
    for both on the chart), they are said once, on a row of their own (the second of the
    pair returned)."""
    said: dict[int, list] = {}
    for machine in scene.machines:
        said[machine.hw_id] = sorted(
            (r for r in scene.roofs if r.hw_id == machine.hw_id and r.label
             and not r.derated and (r.hw_id, r.kind) in rows
             and (r.kind == "compute" or r.sloped)),
            key=lambda r: (r.kind != "memory", -r.value))

    def words(roofs) -> str:
        # (a main roof's text begins with its machine's name, said before it; a long row
        # wraps between the values, not inside one)
        return ", ".join(_unbroken(value_words(r)) for r in roofs)

    computes = {words(r for r in roofs if r.kind == "compute") for roofs in said.values()}
    shared = None
    if len(said) > 1 and len(computes) == 1 and "" not in computes:
        shared = f"{'both' if len(said) == 2 else 'all'} machines: {computes.pop()}"
        said = {hw: [r for r in roofs if r.kind != "compute"] for hw, roofs in said.items()}
    out = {hw: words(roofs) for hw, roofs in said.items() if roofs}
    for ridge in scene.ridges:  # (then its ridges, whose texts found no place by them)
        if (ridge.hw_id, "ridge") in rows:
            text = _unbroken(ridge_words(ridge))
            out[ridge.hw_id] = f"{out[ridge.hw_id]}, {text}" if ridge.hw_id in out else text
    return out, shared


def _shown_at(items: list, scene_pos) -> int | None:
    """The index in ``items`` (pairs of something and its text item) of the first whose
    text is shown under ``scene_pos``."""
    for i, (_item, label) in enumerate(items):
        if label.isVisible() and label.sceneBoundingRect().contains(scene_pos):
            return i
    return None


def _coincide(a: Roof, b: Roof) -> bool:
    """Whether the roofs ``a`` and ``b`` are drawn as one line: of one kind, neither
    derated, the same value (to a part in 10⁹), over a common stretch of intensity."""
    if a.kind != b.kind or a.derated or b.derated or a.sloped != b.sloped:
        return False
    if abs(a.value - b.value) > 1e-9 * max(abs(a.value), abs(b.value)):
        return False
    return max(min(a.xs), min(b.xs)) < min(max(a.xs), max(b.xs))


def _fade(color: str, amount: float) -> str:
    """``color`` mixed towards mid-grey by ``1 - amount`` (lighter lines for minor roofs)."""
    c = qcolor(color)
    grey = 150
    r = int(c.red() * amount + grey * (1 - amount))
    g = int(c.green() * amount + grey * (1 - amount))
    b = int(c.blue() * amount + grey * (1 - amount))
    return f"#{r:02X}{g:02X}{b:02X}"
