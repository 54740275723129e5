"""The measured figures as lines of text (the command line's output and the dialog's)."""

from __future__ import annotations

from workbench.measure.runner import MeasuredMachine, format_bytes
from workbench.model.units import format_quantity

__all__ = ["summary_lines"]


def summary_lines(measured: MeasuredMachine) -> list[str]:
    """The measured figures, one line each: peaks (all cores, one core), then levels."""
    hw, prov = measured.hardware, measured.provenance
    lines = [f"{hw.name}: {prov['profile']} measurement in {prov['duration_s']:.1f} s"]
    for precision, runs in prov["gemm"].items():
        parts = ", ".join(f"{key.replace('_', ' ')} {format_quantity(r['rate'], 'flop_rate')}"
                          f" (n = {r['n']}, spread {100 * r['spread']:.0f} %)"
                          for key, r in runs.items())
        lines.append(f"  {precision:5} {format_quantity(hw.compute[precision], 'flop_rate'):>14}"
                     f"   {parts}")
    caches = prov.get("caches") or {}
    for name, rate in hw.memory.items():
        cache = f", cache {format_bytes(caches[name])}" if name in caches else ""
        level = prov["levels"][name]
        lines.append(f"  {name:5} {format_quantity(rate, 'bandwidth'):>14}   copy over "
                     f"{format_bytes(level['from'])}–{format_bytes(level['to'])}{cache}")
    if prov.get("gap_text"):
        lines.append("  " + prov["gap_text"])
    return lines
