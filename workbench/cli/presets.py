"""``roofline-workbench presets``: the hardware presets, shipped and the user's own, as a table
or JSON."""

from __future__ import annotations

import sys

from workbench.cli.common import PROG, fail, json_safe, say, terminal


def add_parser(sub) -> None:
    presets = sub.add_parser("presets", help="list the hardware presets")
    presets.add_argument("--format", choices=("table", "json"), default="table")


def run(args) -> int:
    return _presets(args.format)


def _presets(fmt: str) -> int:
    from workbench.io.errors import InputError
    from workbench.io.user_presets import all_presets, user_preset_problems
    from workbench.model.units import format_number, format_quantity

    try:
        presets = all_presets()
    except InputError as exc:
        return fail(str(exc))
    for problem in user_preset_problems():  # left out of the list, and said so
        say(f"{PROG}: warning: {terminal(' '.join(problem.split()))}\n")
    from workbench.io.user_presets import is_measured

    measured = {key for key in presets if key.startswith("measured-") and is_measured(key)}
    if fmt == "json":
        from workbench.io.sessions import hardware_to_data

        out = []
        for hw in presets.values():
            data = hardware_to_data(hw)
            data["compute_flops"] = hw.compute
            data["memory_bandwidth"] = hw.memory
            data["measured"] = hw.id in measured
            out.append(data)
        import json

        sys.stdout.write(json.dumps(json_safe({"presets": out}), indent=2, allow_nan=False)
                         + "\n")
        return 0
    rows = [("id", "name", "main memory", "peaks (dense)", "ridge (widest 16-bit)")]
    for hw in presets.values():
        precision = next((p for p in ("bf16", "fp16", "fp32") if p in hw.compute), None)
        ridge = format_number(hw.ridge(precision)) + f" ({precision})" if precision else "—"
        peaks = ", ".join(f"{k} {format_quantity(v, 'flop_rate')}" for k, v in hw.compute.items())
        rows.append((terminal(hw.id), terminal(hw.name) + (" [measured]" if hw.id in measured
                                                            else ""),
                     f"{hw.main_memory} {format_quantity(hw.bandwidth(), 'bandwidth')}", peaks,
                     ridge))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for n, r in enumerate(rows):
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True))
                         + "  " + r[4] + "\n")
        if n == 0:
            sys.stdout.write("  ".join("-" * w for w in widths) + "  " + "-" * 20 + "\n")
    return 0
