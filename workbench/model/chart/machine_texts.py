"""Texts of a chart of several machines that name the machine they are of: its short name
(:func:`short_name`, as its roof labels give it) before a measured point's verdicts where they
differ between machines (:func:`whose_measured`; a ridge's value, a sweep's crossing and a
compared pair's figures: :func:`~workbench.model.chart.scene.whose_texts`)."""

from __future__ import annotations

from dataclasses import replace

from workbench.model.chart.overlay_data import MeasuredMark
from workbench.model.chart.profiled_kernels import short_kernel_name
from workbench.model.hardware import Hardware
from workbench.model.session import Session

__all__ = ["machine_namer", "machine_of", "short_name", "whose_measured"]


def whose_measured(session: Session, marks: list[MeasuredMark]) -> list[MeasuredMark]:
    """A measurement judged on several machines is drawn on each at one spot (its measured
    intensity and FLOP/s are the machine's own on none): where the verdicts differ, the spot
    has one text, a line per machine naming it ("A100 SXM4 80GB: 1.1 % · overhead-bound"),
    under the kernel's name for one measured on its own; the same text on every machine is
    said once as it is. Each one's tooltip names the others at its spot, with their verdicts
    (the pointer finds one of them); a figure's tagged kernels keep theirs."""
    groups: dict[tuple[int, float, float], list[MeasuredMark]] = {}
    for mark in marks:
        if mark.index >= 0:  # (a point of no measurement of the session's is its own)
            groups.setdefault((mark.index, mark.x, mark.y), []).append(mark)
    whose = machine_namer(session)
    said: dict[int, MeasuredMark] = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        head = f"{short_kernel_name(group[0].name)}: " if group[0].standalone else ""
        lines = [whose(m.hw_id, m.label.removeprefix(head) if head else m.label)
                 for m in group]
        text = ("\n".join(([head[:-2]] if head else []) + lines)
                if len({m.label for m in group}) > 1 else group[0].label)
        for i, m in enumerate(group):
            others = lines[:i] + lines[i + 1:]
            # (a figure's tag says no verdict: its page's tooltips list what is at a spot)
            said[id(m)] = replace(m, label=text, tooltip=m.tooltip if m.tag else (
                f"{m.tooltip}\nAlso at this point ({len(others)}): " + "; ".join(others)))
    return [said.get(id(m), m) for m in marks]


def machine_namer(session: Session):
    """``whose(hw_id, text)``: ``text`` said of the machine ``hw_id`` (its short name, as its
    roof labels give it)."""
    names: dict[int, str] = {}

    def whose(hw_id: int, text: str) -> str:
        if hw_id not in names:
            names[hw_id] = short_name(machine_of(session, hw_id))
        return f"{names[hw_id]}: {text}"

    return whose


def machine_of(session: Session, hw_id: int) -> Hardware:
    """The session's machine ``hw_id``."""
    return next(e.hardware for e in session.hardware if e.id == hw_id)


def short_name(hw: Hardware) -> str:
    """The machine's name without its vendor in front and without a trailing remark in
    parentheses ("NVIDIA H100 SXM5 80GB" → "H100 SXM5 80GB", "Google Cloud TPU v5e (per
    chip)" → "TPU v5e"): roof labels are coloured per machine and the legend has the full
    name."""
    name = hw.label
    vendor = (hw.vendor or "").strip()
    if vendor and name.lower().startswith(vendor.lower() + " "):
        rest = name[len(vendor) + 1:].strip()
        if rest.startswith("Cloud "):
            rest = rest[len("Cloud "):]
        if rest:
            name = rest
    if name.endswith(")") and " (" in name:
        name = name[: name.rindex(" (")].strip() or name
    return name
