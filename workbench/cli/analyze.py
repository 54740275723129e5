"""``roofline-workbench analyze``: every operation on every machine, as a table, JSON or CSV,
with the sweeps' crossings, the measured points judged and the compared pairs."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from workbench.cli.common import PROG, derivation_json, fail, json_safe, load, positive_whole, say, terminal


def add_parser(sub) -> None:
    analyze = sub.add_parser("analyze", help="evaluate every operation on every machine")
    analyze.add_argument("session", help="session file (.yaml)")
    analyze.add_argument("--format", choices=("table", "json", "csv"), default="table")
    analyze.add_argument("--measurements", metavar="FILE", action="extend", nargs="+",
                         default=[],
                         help="measured points to judge with the session's own: a plain CSV "
                              "or a profiler export as the profiler wrote it (ncu --csv, raw "
                              "or details page); a profile's launches are grouped by kernel "
                              "(one or more, or the option repeated; two files are compared as runs of "
                              "one program)")
    analyze.add_argument("--hardware", metavar="MACHINE",
                         help="the session's machine the imported points ran on (ncu exports "
                              "do not name it; default: every machine)")
    analyze.add_argument("--top", metavar="N", default=None,
                         type=positive_whole("a whole number of kernels", "at least 1",
                                             MAX_TOP),
                         help="keep the N kernels of each imported file with the most GPU time "
                              "(the others are counted as hidden)")
    analyze.add_argument("--level", choices=LEVEL_CHOICES, default="all",
                         help="the memory level(s) whose intensity each imported kernel is "
                              "judged at: l1, l2, dram or all (default)")


MAX_TOP = 100_000
LEVEL_CHOICES = ("l1", "l2", "dram", "all")


def run(args) -> int:
    for option, value in (("--hardware", args.hardware), ("--top", args.top)):
        if value is not None and not args.measurements:  # (it would change nothing)
            return fail(f"{option} applies to --measurements (the imported points); "
                        "none given")
    return _analyze(args.session, args.format, args.measurements, args.hardware,
                    args.top, args.level)


RESULT_KEYS = (
    "operation", "hardware", "precision", "precision_used", "level", "flops", "bytes",
    "intensity", "peak_flops", "bandwidth", "ridge", "attainable_flops", "fraction_of_peak",
    "bound", "t_math_s", "t_mem_s", "t_lower_s", "t_upper_s", "t_predicted_s", "efficiency",
    "launch_overhead_s", "unit", "ceiling_note", "kernels", "latency_s",
)




def _analyze(path: str, fmt: str, measurement_files: Sequence[str] = (),
             hardware: str | None = None, top: int | None = None, level: str = "all") -> int:
    session, error = load(path)
    if error:
        return fail(error)
    imports: list[dict] = []
    if measurement_files:
        error = _attach(session, measurement_files, hardware, top, imports)
        if error:
            return fail(error)
    from workbench.model.analysis import evaluate_session

    pairs = evaluate_session(session)
    results = [p.result for p in pairs if p.result is not None]
    skipped = [p.skipped for p in pairs if p.skipped is not None]
    sweep_rows, crossings = _sweeps(pairs)
    points = _judged(session)
    measured = _measurements(points, level, imports)
    compared = _comparisons(session, pairs)
    warnings = _warnings(session, points)
    if fmt == "json":
        payload = {
            "session": path,
            "title": session.title,
            "results": [{**{k: r.as_dict()[k] for k in RESULT_KEYS}, **_calibrated(r)}
                        for r in results]
            + json_safe(sweep_rows),
            "skipped": [s.__dict__ for s in skipped],
            "operations": [derivation_json(e.operation) for e in session.operations],
            "crossings": json_safe(crossings),
            "measurements": json_safe(measured),
            "comparisons": json_safe(compared),
            "warnings": [w.as_dict() for w in warnings],
            "imports": [{k: v for k, v in i.items() if not k.startswith("_")}
                        for i in imports],
            "runs": _run_changes(session),
        }
        import json  # here, not at the top: the desktop app starts through this module

        # whole, then written: never half a document (and never NaN or Infinity in it)
        sys.stdout.write(json.dumps(json_safe(payload), indent=2, allow_nan=False) + "\n")
    else:
        if fmt == "csv":
            sys.stdout.write(results_csv(results, sweep_rows, skipped))
        else:
            sys.stdout.write(results_table(results, skipped, session.title))
            sys.stdout.write(terminal_lines(_analysis_lines(crossings, measured)))
            sys.stdout.write(terminal_lines(_import_lines(imports, _run_changes(session))))
            sys.stdout.write(terminal_lines(_comparison_lines(compared)))
        for warning in warnings:  # beside the output, which stays machine-readable
            say(f"{PROG}: warning: {terminal(warning.message)}\n")
    return 0


def _calibrated(result) -> dict:
    """The calibrated prediction's parts of a result (JSON only), or nothing."""
    c = result.calibrated
    if c is None:
        return {}
    return {"prediction": {"model": "calibrated", "launches": c.launches,
                           "t_work_s": result.t_work_s, "t_fixed_s": result.t_fixed_s,
                           "math_class": c.math_class, "e_math": c.e_math,
                           "memory_class": c.memory_class, "e_mem": c.e_mem,
                           "launch_s": c.launch, "startup_s": c.startup,
                           "floor_s": c.floor, "assumed": c.assumed, "why": c.reason}}


def _attach(session, files: Sequence[str], hardware: str | None, top: int | None = None,
            imports: list[dict] | None = None) -> str | None:
    """Add the measured points of ``files`` to ``session`` (in memory; the session file is not
    changed); an error's message, or ``None``. With ``top``, each file keeps its ``top``
    kernels by GPU time. ``imports`` receives what each file gave (its totals, what was not
    counted, how many kernels ``top`` hid). Two or more files are runs of one program, named
    by their file names."""

    from workbench.io.errors import InputError
    from workbench.io.measurements import attach_measurements, import_measurements
    from workbench.io.profiles import add_machines, check_vendor, run_name
    from workbench.model.profile import top_kernels

    # (named as the app's import names them: two files of one name are "trace.json" and
    # "trace.json (2)", a run name a session file holds whatever the folders)
    taken = {m.run for m in session.measurements if m.run is not None}
    try:
        for file in files:
            run = run_name(file, taken) if len(files) > 1 else None
            if run is not None:
                taken.add(run)
            result = import_measurements(file, hardware, run=run)
            check_vendor(session, result, hardware)  # (an AMD trace on an H100: refused)
            shown, hidden = (top_kernels(result.measurements, top) if top is not None
                             else (result.measurements, []))
            added = add_machines(session, result)  # the machine a trace or workload names
            if hardware is not None and not session.machines_matching(hardware):
                # (the option is wrong, not the file's first kernel)
                for entry in added:
                    session.hardware.remove(entry)
                machines = ", ".join(repr(e.preset or e.hardware.name) for e in session.hardware)
                return (f"--hardware: no machine {hardware!r} in this session "
                        f"(machines: {machines or 'none'})")
            try:
                attach_measurements(session, shown, file)
            except InputError:
                for entry in added:
                    session.hardware.remove(entry)
                raise
            for note in result.notes:  # beside the output, which stays readable
                say(f"{PROG}: note: {terminal(f'{file}: {note}')}\n")
            if imports is not None:
                imports.append({
                    "file": file, "format": result.format, "run": run,
                    "dispatches": result.dispatches, "kernels": len(result.measurements),
                    "gpu_time_s": result.gpu_time_s, "counted_share": result.counted_share,
                    "summary": result.summary(),
                    "not_counted": [n.as_dict() for n in result.not_counted],
                    "hidden": {"kernels": len(hidden),
                               "time_s": sum(m.total_time_s or 0.0 for m in hidden)},
                    "_points": {id(m) for m in shown},
                })
    except InputError as exc:
        return str(exc)
    return None


def _run_changes(session) -> list[dict]:
    """Before/after of the first two runs among the session's measurements."""
    from workbench.model.profile import run_changes

    return [c.as_dict() for c in run_changes(session.measurements)]


def _import_lines(imports: list[dict], changes: list[dict]) -> str:
    from workbench.model.units import format_quantity

    lines = []
    for i in imports:
        lines.append(f"imported {i['file']}: {i['summary']}")
        for n in i["not_counted"]:
            lines.append(f"  not counted: {n['name']} ({n['count']:,} "
                         f"launch{'es' if n['count'] != 1 else ''}, "
                         f"{format_quantity(n['time_s'], 'time')}): {n['reason']}")
        if i["hidden"]["kernels"]:
            share = i["hidden"]["time_s"] / i["gpu_time_s"] if i["gpu_time_s"] else 0.0
            lines.append(f"  hidden by --top: {i['hidden']['kernels']:,} kernels "
                         f"({100 * share:.1f} % of GPU time)")
    for c in changes:
        speedup = f"{c['speedup']:.3g}x" if c["speedup"] else "?"
        lines.append(f"run change: {c['name']}: {format_quantity(c['before_time_s'], 'time')} "
                     f"-> {format_quantity(c['after_time_s'], 'time')} ({speedup} speed-up)")
    return "".join(line + "\n" for line in lines)


def _judged(session) -> list:
    if not session.measurements:
        return []
    from workbench.model.measured_session import judge_session

    return judge_session(session)


def _warnings(session, points) -> list:
    """Numbers that ask for a check: a measured point above its roof, machines defined or
    edited by hand whose figures look sparse or that lack a main-memory level."""
    from workbench.io.presets import is_hand_made
    from workbench.model.advisories import session_advisories

    return session_advisories(session, points, hand_made=is_hand_made)


def _sweeps(pairs) -> tuple[list[dict], list[dict]]:
    """Per (swept operation, machine): one result per sweep value (the keys of ``results``
    plus ``sweep: {param, value}``), and the exact ridge crossings inside the sweep's span.
    Results of operations without a sweep are untouched; these rows follow them."""
    from workbench.model.sweeps import evaluate_sweep, sweep_crossings

    rows: list[dict] = []
    crossings: list[dict] = []
    for pair in pairs:
        entry = pair.operation
        if entry.sweep is None or pair.result is None:
            continue
        op, hw = entry.operation, pair.hardware.hardware
        swept = evaluate_sweep(op, hw, entry.sweep)
        for i, row in enumerate(swept.rows()):
            out = {k: row[k] for k in RESULT_KEYS}
            out["sweep"] = {"param": swept.param, "value": swept.value(i)}
            rows.append(out)
        for c in sweep_crossings(op, hw, entry.sweep):
            crossings.append({"operation": c.operation, "hardware": c.hardware,
                              "param": c.param, "value": c.value, "integer": c.integer,
                              "direction": c.direction, "ridge": c.ridge, "level": c.level})
    return rows, crossings


def _measurements(points, level: str = "all", imports: Sequence[dict] = ()) -> list[dict]:
    """Every measured point judged against its prediction (fraction and verdict band); a
    profiled kernel also with its launches (``count``, ``total_time_s``, ``share``: of its
    file's GPU time) and its point at each memory level (``levels``; ``level`` picks one)."""
    from workbench.model.profile import level_points

    totals = {p: i["gpu_time_s"] for i in imports for p in i["_points"]}
    out = []
    for point in points:
        m = point.measurement
        item = {"name": m.name, "operation": m.operation,
                "hardware": point.hardware.hardware.label if point.hardware else m.hardware}
        if point.judgement is not None:
            j = point.judgement.as_dict()
            for key in ("measurement", "operation", "hardware"):
                j.pop(key)
            item.update(j)
        else:
            item.update({"fraction": None, "verdict": None, "problem": point.problem})
        if m.count != 1 or m.levels or id(m) in totals or m.run is not None:
            total = totals.get(id(m))
            item.update({"count": m.count, "total_time_s": m.total_time_s, "run": m.run,
                         "share": (m.total_time_s / total if total and m.total_time_s
                                   else None),
                         "precision": m.precision, "unit": m.unit})
            if point.hardware is not None and m.operation is None:
                item["levels"] = [p.as_dict() for p in level_points(m, point.hardware.hardware)
                                  if level in ("all", p.level)]
        out.append(item)
    return out


def _comparisons(session, pairs) -> list[dict]:
    """Every compared pair on every machine where both can be evaluated: first (the
    baseline), second, hardware, bytes_saved, flops_added, speedup (= t_lower(first) /
    t_lower(second)), intensity_ratio, t_first_s, t_second_s."""
    if not session.comparisons:
        return []
    from workbench.model.comparison import compare_session

    return [c.as_dict() for c in compare_session(session, pairs)]


def terminal_lines(text: str) -> str:
    """Lines of text with the control characters inside them escaped."""
    from workbench.io.limits import terminal_text

    return terminal_text(text, keep_lines=True)


def _comparison_lines(compared: list[dict]) -> str:
    from workbench.model.units import format_quantity

    lines = []
    for c in compared:
        lines.append(f"pair: {c['first']} -> {c['second']} on {c['hardware']}: "
                     f"{c['speedup']:.3g}x predicted speed-up "
                     f"({format_quantity(c['t_first_s'], 'time')} -> "
                     f"{format_quantity(c['t_second_s'], 'time')}), "
                     f"bytes saved {format_quantity(c['bytes_saved'], 'bytes')}, "
                     f"FLOPs added {format_quantity(c['flops_added'], 'flops')}")
    return "".join(line + "\n" for line in lines)


def _analysis_lines(crossings: list[dict], measured: list[dict]) -> str:
    from workbench.model.units import format_number, format_quantity

    lines = []
    for c in crossings:
        whole = f" (first whole value: {c['integer']})" if c["integer"] is not None else ""
        turns = "compute" if c["direction"] == "to_compute" else "memory"
        lines.append(f"crossing: {c['operation']} on {c['hardware']}: {c['param']} = "
                     f"{format_number(c['value'], 6)}{whole}, turns {turns}-bound")
    for m in measured:
        if m.get("verdict") is None:
            lines.append(f"measured: {m['name']} on {m['hardware']}: not judged: {m['problem']}")
            continue
        lines.append(f"measured: {m['name']} on {m['hardware']}: "
                     f"{format_quantity(m['measured_time_s'], 'time')}, "
                     f"{format_number(100 * m['fraction'])} % of the predicted ceiling "
                     f"({format_quantity(m['predicted_time_s'], 'time')}): {m['verdict_label']}"
                     + (f"; T_predicted {format_quantity(m['t_predicted_s'], 'time')}, measured "
                        f"{m['measured_time_s'] / m['t_predicted_s']:.2f} × that"
                        if m.get("t_predicted_s") else "")
                     + (f"; {m['count']:,} launch{'es' * (m['count'] != 1)}, "
                        f"{format_number(100 * m['share'])} % of GPU time"
                        if m.get("share") is not None else ""))
        for p in m.get("levels", ()):
            if p["roof"] is None or p["fraction"] is None:
                lines.append(f"  {p['level']}: {format_quantity(p['bytes'], 'bytes')}: "
                             f"{p['problem'] or 'no intensity (no bytes or no FLOPs)'}")
                continue
            lines.append(f"  {p['level']}: {format_quantity(p['bytes'], 'bytes')}, I = "
                         f"{format_number(p['intensity'])} FLOP/B, roof "
                         f"{format_quantity(p['roof'], 'flop_rate')}: "
                         f"{format_number(100 * p['fraction'])} % of it")
    return "".join(line + "\n" for line in lines)


def results_csv(results, sweep_rows=(), skipped=()) -> str:
    """The Results CSV (:mod:`workbench.io.tables`, the app's columns): one row per
    result, then one per skipped pair; with sweep rows (dicts from ``analyze``), two more
    columns, ``sweep_param`` and ``sweep_value``, empty on the operations' own rows."""
    from workbench.io.tables import csv_text, result_cells, result_header, skipped_cells

    extra = ["sweep_param", "sweep_value"] if sweep_rows else []
    rows = [result_header() + extra]
    for r in results:
        rows.append(result_cells(r) + ["" for _ in extra])
    for s in skipped:
        rows.append(skipped_cells(s.operation, s.hardware, s.reason) + ["" for _ in extra])
    for row in sweep_rows:
        rows.append(result_cells(row) + [row["sweep"]["param"], row["sweep"]["value"]])
    return csv_text(rows)


def results_table(results, skipped, title: str = "") -> str:
    from workbench.model.units import format_number, format_quantity

    header = ("operation", "hardware", "FLOPs", "bytes", "I [FLOP/B]", "ceiling", "attainable",
              "% peak", "bound", "T_lower", "T_upper")
    rows: list[tuple[str, ...]] = [header]
    for r in results:
        rows.append((
            r.operation, r.hardware, format_quantity(r.flops, "flops"),
            format_quantity(r.bytes, "bytes"), format_number(r.intensity),
            format_quantity(r.peak_flops, "flop_rate") + f" {r.precision_used}"
            + (" vector" if r.unit == "vector" else "") + (" *" if r.ceiling_note else ""),
            format_quantity(r.attainable_flops, "flop_rate"),
            format_number(100 * r.fraction_of_peak), r.bound,
            format_quantity(r.t_lower_s, "time"), format_quantity(r.t_upper_s, "time"),
        ))
    rows = [tuple(terminal(str(c)) for c in row) for row in rows]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(header))]
    lines = [terminal(title)] if title else []
    for n, row in enumerate(rows):
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    noted = dict.fromkeys((r.hardware, r.ceiling_note) for r in results if r.ceiling_note)
    for hardware, note in noted:
        lines.append(terminal(f"* ceiling on {hardware}: {note}"))
    for s in skipped:
        lines.append(terminal(f"skipped: {s.operation} on {s.hardware}: {s.reason}"))
    return "\n".join(lines) + "\n"
