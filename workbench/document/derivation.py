"""The derivation of one operation as plain data (no Qt): every FLOP and byte term with its
formula in symbols and in values, the totals, the kind's notes, the roofline on every machine
of the session with its formulas, and the counting conventions.

Public API::

    build_derivation(document, results, op_id) -> [Section]   # the content
    machine_sections(document, results, op_id) -> [Section]   # its sections of each machine
    derivation_to_text(header, sections) -> str                # the same as plain text

The operation editor shows these sections (:mod:`workbench.ui.editors.derivation`); a figure
exported as HTML carries the machines' lines in its tooltips.
"""

from __future__ import annotations

import functools
import math
from dataclasses import field
from typing import Any

from workbench.document.document import Document
from workbench.document.results import ResultCache
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.operations import CONVENTIONS, Counts, Term
from workbench.model.rules import formula
from workbench.model.rules import intensity as intensity_of
from workbench.model.units import format_number, format_quantity
from workbench.records import record

__all__ = ["TermRow", "Section", "NBSP", "build_derivation", "derivation_to_text", "worked_out",
           "machine_sections"]

# =========================================================================================
# derivation: plain data first, rendered to HTML (shown) or text (copied)


@record
class TermRow:
    """One FLOP or byte term of the derivation, as shown."""
    name: str
    direction: str  # "flop", "read" or "write"
    size: str  # "16 777 216 × 2 B" for tensors, "" otherwise
    value: str
    formula: str  # "batch·M·K·2 B [bf16] = 1·4096·4096·2 B [bf16]"


@record
class Section:
    """A titled part of the derivation: term rows, name-value pairs or bullets."""
    title: str
    kind: str  # "terms" | "pairs" | "bullets" | "toggle"
    rows: list[Any] = field(default_factory=list)
    badge: str = ""  # short tag after the title (e.g. "memory-bound")
    badge_kind: str = ""  # "memory" | "compute" | "overhead" | "skipped"
    hw_id: int | None = None  # the machine of a machine's section (the roofline on it)


def _exact(value: Any) -> str:
    """A count in full with thin-space groups (137 438 953 472), or 3 figures if huge."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return format_number(number)
    if number.is_integer() and abs(number) < 1e18:
        return f"{int(number):,}".replace(",", "\u2009")
    return format_number(number, 4)


def _bytes_each(size: float | None) -> str:
    if size is None:
        return ""
    return f"{size:g} B"


def _term_row(term: Term, unit: str) -> TermRow:
    size = ""
    if term.elements is not None and term.element_bytes is not None:
        size = f"{_exact(term.elements)} × {_bytes_each(term.element_bytes)}"
    formula = term.formula
    if term.substituted and term.substituted != term.formula:
        formula = f"{term.formula} = {term.substituted}"
    return TermRow(term.name, term.kind, size, _q(term.value, unit), formula)


NBSP = "\u00a0"


@functools.lru_cache(maxsize=4096)  # peaks, bandwidths and ridges recur on every refresh
def _q(value: float, unit: str) -> str:
    """A quantity whose number and unit never part at a line break."""
    return format_quantity(float(value), unit).replace(" ", NBSP)


def worked_out(key: str, r: Any, q: Any = None) -> str:
    """The right-hand side of formula ``key`` (``ridge``, ``attainable``, ``t_work``,
    ``t_fixed``) with a result's values put in, then its value: ``peak / bandwidth =
    989 TFLOP/s / 3.35 TB/s = 295 FLOP/B``. ``q(value, unit)`` writes a quantity (default:
    one that never breaks between number and unit)."""
    q = _q if q is None else q
    c = r.calibrated
    if key == "ridge":
        put = f"{q(r.peak_flops, 'flop_rate')} / {q(r.bandwidth, 'bandwidth')}"
        value = q(r.ridge, "intensity")
    elif key == "attainable":
        put = (f"min({q(r.peak_flops, 'flop_rate')}, {q(r.intensity, 'intensity')} × "
               f"{q(r.bandwidth, 'bandwidth')})")
        value = q(r.attainable_flops, "flop_rate")
    elif key == "t_work":
        put = f"max({q(r.t_math_s, 'time')} / {c.e_math:g}, {q(r.t_mem_s, 'time')} / {c.e_mem:g})"
        value = q(r.t_work_s, "time")
    else:  # t_fixed
        put = f"{r.kernels} × ({q(c.launch, 'time')} + {q(c.startup, 'time')})"
        value = q(r.t_fixed_s, "time")
    return f"{formula(key)} = {put} = {value}"


def _percent(value: float) -> str:
    return f"{value * 100:.3g} %"


def build_derivation(document: Document, results: ResultCache, op_id: int,
                     conventions_open: bool = False) -> list[Section]:
    """Everything the derivation view shows for one operation, as plain sections (no Qt):
    terms, totals, notes, the roofline on every machine, the conventions."""
    op = document.operation(op_id).operation
    try:
        counts: Counts = results.counts(op_id)
    except COUNTING_ERRORS as exc:  # shown to the user
        return [Section("Cannot count this operation", "bullets", [str(exc)])]
    sections: list[Section] = []
    flop_rows = [_term_row(t, "flops") for t in counts.flop_terms]
    byte_rows = [_term_row(t, "bytes") for t in counts.byte_terms]
    sections.append(Section(f"FLOPs ({len(flop_rows)} term{'s' * (len(flop_rows) != 1)})",
                            "terms", flop_rows))
    sections.append(Section(f"Bytes ({len(byte_rows)} term{'s' * (len(byte_rows) != 1)})",
                            "terms", byte_rows))
    flops, nbytes = float(counts.flops), float(counts.bytes)
    read, written = float(counts.bytes_read), float(counts.bytes_written)
    intensity = intensity_of(flops, nbytes)
    totals = [
        ("FLOPs  F", f"{_q(flops, 'flops')}  ({_exact(flops)})"),
        ("bytes  B", f"{_q(nbytes, 'bytes')} = {_q(read, 'bytes')} read + "
                     f"{_q(written, 'bytes')} written  ({_exact(nbytes)})"),
        ("bytes read", _q(read, "bytes")),
        ("bytes written", _q(written, "bytes")),
        ("intensity  I", f"F / B = {_q(flops, 'flops')} / {_q(nbytes, 'bytes')} = "
                         f"{_q(intensity, 'intensity')}"),
        ("compute precision", counts.precision),
        ("unit", _UNIT_TEXT.get(counts.unit, counts.unit)),
    ]
    if counts.kernels > 1:
        totals.append(("kernels", f"{counts.kernels} (one launch each)"))
    sections.append(Section("Totals", "pairs", totals))
    notes = list(counts.notes)
    if op.memory_level:
        notes.append(f"Bytes are counted across “{op.memory_level}” instead of main memory.")
    if notes:
        sections.append(Section("Notes", "bullets", notes))
    defaults = op.defaults_taken()
    if defaults:
        sections.append(Section(f"Defaults taken ({len(defaults)})", "bullets", defaults))
    sections.extend(_machine_sections(document, results, op_id, counts))
    if not document.session.hardware:
        sections.append(Section("Machines", "bullets",
                                 ["No machine in the session: add one to see the roofline."]))
    sections.append(Section(f"Conventions ({len(CONVENTIONS)})", "toggle",
                            list(CONVENTIONS) if conventions_open else []))
    return sections


def machine_sections(document: Document, results: ResultCache, op_id: int) -> list[Section]:
    """The sections of :func:`build_derivation` that show the roofline on each machine
    (those with a ``hw_id``), without the rest (its terms, totals and notes): none when the
    operation cannot be counted."""
    try:
        counts: Counts = results.counts(op_id)
    except COUNTING_ERRORS:
        return []
    return _machine_sections(document, results, op_id, counts)


def _machine_sections(document: Document, results: ResultCache, op_id: int,
                      counts: Counts) -> list[Section]:
    sections: list[Section] = []
    for hw_entry in document.session.hardware:
        pair = results.pair(op_id, hw_entry.id)
        hw = hw_entry.hardware
        title = hw.label + ("" if hw_entry.visible else "  (hidden on the chart)")
        if pair.result is None:
            reason = pair.skipped.reason if pair.skipped else "not evaluated"
            sections.append(Section(title, "pairs", [("skipped", reason)], "skipped", "skipped",
                                    hw_entry.id))
            continue
        r = pair.result
        vector = "vector " if r.unit == "vector" else ""
        ceiling = (f"{r.precision_used} {vector}peak {_q(r.peak_flops, 'flop_rate')}  "
                   f"({r.unit} units)")
        if r.precision_used != r.precision:
            ceiling += (f"  (no {r.precision} {vector}peak on this machine: its "
                        f"{r.precision_used} peak is used, the next wider precision)")
        if counts.unit == "vector" and r.unit != "vector":
            ceiling += ("  (this machine lists no vector peaks: its matrix peak stands in, an "
                        "optimistic roof)")
        where = ("interconnect" if r.level in hw.interconnect
                 else "main memory" if r.level == hw.main_memory else "memory level")
        rows = [
            ("ceiling", ceiling),
            ("bandwidth", f"{r.level} {_q(r.bandwidth, 'bandwidth')}  ({where})"),
            ("ridge", worked_out("ridge", r)),
            ("attainable", f"{worked_out('attainable', r)}  "
                           f"({_percent(r.fraction_of_peak)} of peak)"),
            ("T_math", f"F / peak = {_q(r.flops, 'flops')} / {_q(r.peak_flops, 'flop_rate')} = "
                       f"{_q(r.t_math_s, 'time')}"),
            ("T_mem", f"B / bandwidth = {_q(r.bytes, 'bytes')} / "
                      f"{_q(r.bandwidth, 'bandwidth')} = {_q(r.t_mem_s, 'time')}"),
        ]
        launch = _launch_text(r, hw)
        if r.calibrated is not None:
            rows.extend(_calibrated_rows(r, hw))
            sections.append(Section(title, "pairs", rows, f"{r.bound}-bound", r.bound,
                                    hw_entry.id))
            continue
        roofline = r.t_lower_s - r.latency_s  # max(T_math, T_mem)
        if r.bound == "overhead":
            eff = f" / {r.efficiency:g}" if r.efficiency else ""
            why = (f"max(T_math, T_mem){eff} = {_q(roofline / (r.efficiency or 1.0), 'time')}"
                   f" < {launch}")
        elif r.bound == "compute":
            why = "T_math ≥ T_mem"
        else:
            why = "T_mem > T_math"
        rows.append(("bound", f"{r.bound} ({why})"))
        plus = ""
        if r.latency_s:  # a collective: its steps each pay the link's latency, a floor
            steps, values = counts.latency_formula
            alpha, source = hw.latency_of(r.level)
            rows.append(("link latency", f"steps·α = {steps}·α = {values}·"
                                         f"{_q(alpha, 'time')} ({source}) = "
                                         f"{_q(r.latency_s, 'time')}"))
            plus = " + latency"
        rows.append(("time bounds", f"max(T_math, T_mem){plus} = {_q(r.t_lower_s, 'time')} "
                                    f"≤ T ≤ T_math + T_mem{plus} = {_q(r.t_upper_s, 'time')}"))
        base = "max(T_math, T_mem)" if r.latency_s else "T_lower"  # (latency not derated)
        if r.efficiency:
            predicted = f"{base} / {r.efficiency:g}"
            if r.launch_overhead_s:
                predicted = f"max({predicted}, {launch})"
            rows.append(("predicted", f"at {_percent(r.efficiency)} efficiency: "
                                      f"{predicted}{plus} = {_q(r.t_predicted_s, 'time')}"))
        elif r.launch_overhead_s:
            rows.append(("predicted", f"max({base}, {launch}){plus} = "
                                      f"{_q(r.t_predicted_s, 'time')}"))
        sections.append(Section(title, "pairs", rows, f"{r.bound}-bound", r.bound,
                                    hw_entry.id))
    return sections


def _calibrated_rows(r: Any, hw: Any) -> list[tuple[str, str]]:
    """The calibrated prediction's lines: which efficiencies applied and why, the work and
    fixed parts, the predicted time (see :mod:`workbench.model.prediction`)."""
    from workbench.model.prediction import LAUNCHES, calibration_of

    c = r.calibrated
    cal = calibration_of(hw)
    origin = cal.source or "the machine's calibration"
    k = r.kernels
    fixed_bound = r.t_work_s < r.t_fixed_s
    if r.bound == "overhead":
        why = (f"T_work {_q(r.t_work_s, 'time')} < T_fixed {_q(r.t_fixed_s, 'time')}"
               if fixed_bound else
               f"T_fixed + T_work {_q(r.t_fixed_s + r.t_work_s, 'time')} < {k} × launch "
               f"floor {_q(c.floor, 'time')}")
    elif r.bound == "compute":
        why = "T_math ≥ T_mem"
    else:
        why = "T_mem > T_math"
    rows = [
        ("bound", f"{r.bound} ({why})"),
        ("time bounds", f"max(T_math, T_mem) = {_q(r.t_lower_s, 'time')} ≤ T ≤ "
                        f"T_math + T_mem = {_q(r.t_upper_s, 'time')}"),
        ("efficiency", f"{c.math_class} {c.e_math:g} on the compute roof, {c.memory_class} "
                       f"{c.e_mem:g} on the bandwidth roof: {c.reason} ({origin})"),
        ("T_work", worked_out("t_work", r)),
        ("T_fixed", f"{worked_out('t_fixed', r)}  ({LAUNCHES.get(c.launches, c.launches)})"),
    ]
    if c.floor > 0:
        rows.append(("predicted", f"max(T_fixed + T_work, kernels × launch floor) = "
                                  f"max({_q(r.t_fixed_s + r.t_work_s, 'time')}, {k} × "
                                  f"{_q(c.floor, 'time')}) = {_q(r.t_predicted_s, 'time')}"))
    else:
        rows.append(("predicted", f"T_fixed + T_work = {_q(r.t_fixed_s, 'time')} + "
                                  f"{_q(r.t_work_s, 'time')} = {_q(r.t_predicted_s, 'time')}"))
    return rows


_UNIT_TEXT = {"matrix": "matrix units (tensor cores, MXU, AMX)",
              "vector": "vector units (CUDA cores, VPU, AVX)"}


def _launch_text(r: Any, hw: Any) -> str:
    """``launch overhead 8 µs (rule of thumb)``, ``3 × launch overhead …`` for several
    kernels; the overhead is a rule of thumb unless the machine lists it as measured."""
    per = _q(r.launch_overhead_s or 0.0, "time")
    status = hw.figure_status("launch_overhead")
    count = f"{r.kernels} × " if r.kernels > 1 else ""
    return f"{count}launch overhead {per} ({status})"


def derivation_to_text(header: str, sections: list[Section]) -> str:
    """Plain text of the derivation (what Copy puts on the clipboard)."""
    lines = [header, ""]
    for section in sections:
        title = section.title + (f"  [{section.badge}]" if section.badge else "")
        lines.append(title)
        if section.kind == "terms":
            for row in section.rows:
                direction = "" if row.direction == "flop" else f"  {row.direction}"
                size = f"  {row.size}" if row.size else ""
                lines.append(f"  {row.name}{direction}{size}  =  {row.value}")
                lines.append(f"      {row.formula}")
        elif section.kind == "pairs":
            width = max((len(label) for label, _ in section.rows), default=0)
            for label, value in section.rows:
                lines.append(f"  {label.ljust(width)}  {value}")
        else:
            lines.extend(f"  • {text}" for text in section.rows)
        lines.append("")
    return "\n".join(lines).rstrip().replace(NBSP, " ") + "\n"
