"""Pieces of the operations table: a whole model's header row (set-up, operation count, the
model's intensity) and the grouping of its operations under it; the bound tooltip; and the
table's icons (colour swatches, toolbar)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPen, QPixmap

from workbench.model.errors import COUNTING_ERRORS
from workbench.model.rules import intensity as intensity_of
from workbench.model.session import OperationEntry, Session
from workbench.model.units import format_number, format_quantity

if TYPE_CHECKING:  # (imported with the first whole model: not needed before one is added)
    from workbench.model.llm.session import ModelEntry

__all__ = ["group_rows", "is_model", "header_data", "bound_tooltip", "swatch_icon", "plus_icon",
           "duplicate_icon"]

COL_COLOR, COL_VISIBLE, COL_NAME, COL_KIND, COL_INTENSITY, COL_BOUND = range(6)
_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
OP_ID_ROLE = Qt.ItemDataRole.UserRole + 1


def is_model(item: OperationEntry | ModelEntry) -> TypeGuard[ModelEntry]:
    """Whether a row's item is a whole model's header (the rows hold operations and models
    only)."""
    return not isinstance(item, OperationEntry)


def group_rows(session: Session, expanded: set[int]
               ) -> tuple[list[OperationEntry | ModelEntry], dict[int, int]]:
    """Rows of the table: each model's header where its first operation is, followed by its
    operations when it is in ``expanded``; and op id → model id of the grouped operations."""
    grouped = {i: m.id for m in session.models for i in m.op_ids}
    by_id = {m.id: m for m in session.models}
    items: list[OperationEntry | ModelEntry] = []
    seen: set[int] = set()
    members: dict[int, list[OperationEntry]] = {}
    for e in session.operations:
        mid = grouped.get(e.id)
        if mid is None:
            items.append(e)
            continue
        members.setdefault(mid, []).append(e)
        if mid not in seen:
            seen.add(mid)
            items.append(by_id[mid])
    rows: list[OperationEntry | ModelEntry] = []
    for item in items:
        rows.append(item)
        if is_model(item) and item.id in expanded:
            rows.extend(members.get(item.id, ()))
    return rows, grouped


def header_data(table, model: ModelEntry, col: int, role: int) -> Any:
    """The cells of a model's header row in the operations table."""
    R = Qt.ItemDataRole
    if role == OP_ID_ROLE:
        return model.op_ids[0] if model.op_ids else None
    if role == R.FontRole and col in (COL_NAME, COL_KIND):
        font = QFont()
        font.setBold(True)
        return font
    if role == R.ForegroundRole and not model.visible and col in (COL_NAME, COL_KIND):
        return table.dim_color()
    s = model.setup
    lengths = (f"prompt {s.prompt_len}" if s.phase == "prefill" else f"kv {s.kv_len}")
    if col == COL_VISIBLE:
        if role == R.CheckStateRole:
            return Qt.CheckState.Checked if model.visible else Qt.CheckState.Unchecked
        if role == R.ToolTipRole:
            return "Every operation of the model shown on the chart, or none"
        return None
    if col == COL_NAME:
        arrow = "▾" if model.id in table.expanded else "▸"
        if role == R.DisplayRole:  # (the lengths say the phase: prompt or kv)
            return (f"{arrow} {model.label} (batch {s.batch}, {lengths}"
                    + (f", tp {s.tp}" if s.tp > 1 else "") + ")")
        if role == R.EditRole:
            return model.label
        if role == R.ToolTipRole:
            return (f"{model.label}: {model.arch.summary()}\n"
                    f"{s.phase}, batch {s.batch}, {lengths}, weights {s.weights}, "
                    f"activations {s.activations}, KV cache {s.kv_cache}, tp {s.tp}\n"
                    f"{len(model.op_ids)} operations "
                    f"({'every layer' if model.view == 'all' else 'one per layer kind'}); "
                    "click its arrow or double-click to expand or collapse; its set-up is "
                    "edited in the Model tab")
        return None
    if col == COL_KIND:
        if role == R.DisplayRole:
            return "Model"
        if role == R.ToolTipRole:
            return "A whole model from its config.json"
        return None
    if col == COL_INTENSITY:
        if role == R.TextAlignmentRole:
            return _ALIGN_RIGHT
        if role in (R.DisplayRole, R.ToolTipRole):
            key = ("model", model.id)
            texts = table.texts.get(key)
            if texts is None:
                texts = table.texts[key] = _model_intensity(table, model)
            return texts[0] if role == R.DisplayRole else texts[1]
    return None


def bound_tooltip(r, machine: str) -> str:
    """Why an operation is memory-, compute- or overhead-bound on ``machine``."""
    t_math = format_quantity(r.t_math_s, "time")
    t_mem = format_quantity(r.t_mem_s, "time")
    lines = [f"{r.bound}-bound on {machine}",
             f"T_math = {t_math}, T_mem = {t_mem}",
             f"intensity {format_number(r.intensity)} vs ridge {format_number(r.ridge)} "
             f"FLOP/B ({r.precision_used}, {r.level})"]
    if r.bound == "overhead" and r.launch_overhead_s:
        launches = f"{r.kernels} × " if r.kernels > 1 else ""
        lines.append(f"T_lower / efficiency below {launches}the launch overhead of "
                     f"{format_quantity(r.launch_overhead_s, 'time')} (a rule of thumb unless "
                     "the machine marks it measured)")
    return "\n".join(lines)


def _model_intensity(table, model: ModelEntry) -> tuple[str, str]:
    # the layers of a model share their counts (one object each): each is summed once,
    # times the number of operations that have it
    distinct: dict[int, list] = {}
    try:
        for op_id in model.op_ids:
            counts = table.workspace.results.counts(op_id)
            seen = distinct.get(id(counts))
            if seen is None:
                distinct[id(counts)] = [counts, 1]
            else:
                seen[1] += 1
        flops = sum(float(counts.flops) * n for counts, n in distinct.values())
        nbytes = sum(float(counts.bytes) * n for counts, n in distinct.values())
    except COUNTING_ERRORS as exc:
        return "—", f"Cannot count this model: {exc}"
    intensity = intensity_of(flops, nbytes)
    return format_number(intensity), (
        f"Whole model: Σ FLOPs / Σ bytes = {format_quantity(flops, 'flops')} / "
        f"{format_quantity(nbytes, 'bytes')} = {format_number(intensity)} FLOP/B")


def plus_icon(color: QColor, size: int = 16) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(color, 2)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    m = size // 2
    painter.drawLine(m, 3, m, size - 3)
    painter.drawLine(3, m, size - 3, m)
    painter.end()
    return QIcon(pixmap)


def duplicate_icon(color: QColor, size: int = 16) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(color, 1.4))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRoundedRect(1.5, 1.5, 9, 9, 1.5, 1.5)
    painter.setBrush(QColor(color.red(), color.green(), color.blue(), 60))
    painter.drawRoundedRect(5.5, 5.5, 9, 9, 1.5, 1.5)
    painter.end()
    return QIcon(pixmap)


_swatches: dict[tuple[str, int], QIcon] = {}


def swatch_icon(color: str, size: int = 14) -> QIcon:
    """A filled, outlined square of ``color`` (cached per colour and size)."""
    key = (color, size)
    icon = _swatches.get(key)
    if icon is None:
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        fill = QColor(color)
        painter.setBrush(fill)
        painter.setPen(QPen(fill.darker(160), 1))
        painter.drawRoundedRect(QRect(0, 0, size - 1, size - 1), 3, 3)
        painter.end()
        icon = QIcon(pixmap)
        icon.addPixmap(pixmap, QIcon.Mode.Selected)  # no selection tint: the colour is the data
        _swatches[key] = icon
    return icon
