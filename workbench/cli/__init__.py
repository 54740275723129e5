"""Command line: the desktop app, and the same engine headless.

    roofline-workbench [SESSION.yaml]
    roofline-workbench analyze SESSION.yaml [--format table|json|csv] [--measurements FILE.csv]
    roofline-workbench render SESSION.yaml -o FIG.png|.svg|.pdf [--size slide|single|double]
                       [--width PX] [--height PX] [--dpi N] [--theme NAME] [--transparent]
    roofline-workbench presets [--format table|json]
    roofline-workbench model CONFIG.json --phase prefill|decode --batch B [...]
    roofline-workbench measure [--device cpu|cuda|cuda:N|mps] [--quick] [-o MACHINE.yaml]
                       [--compare PRESET]
    roofline-workbench --version

Bad input prints one line naming the file, the place and the problem, and exits with 2.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence

from workbench import __version__
from workbench.cli.common import (
    EXIT_BAD_INPUT,
    PROG,
    derivation_json,
    fail,
    json_safe,
    positive_whole,
    terminal,
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Roofline Workbench: the roofline model, live.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    analyze = sub.add_parser("analyze", help="evaluate every operation on every machine")
    analyze.add_argument("session", help="session file (.yaml)")
    analyze.add_argument("--format", choices=("table", "json", "csv"), default="table")
    analyze.add_argument("--measurements", metavar="FILE.csv", action="append", default=[],
                         help="measured points to judge with the session's own: a plain CSV "
                              "or an ncu --csv --page raw export as ncu wrote it (repeatable)")
    analyze.add_argument("--hardware", metavar="MACHINE",
                         help="the session's machine the imported points ran on (ncu exports "
                              "do not name it; default: every machine)")
    render = sub.add_parser(
        "render", help="draw the chart to a PNG, SVG or PDF file (no display needed)",
        description="Draw the session's roofline chart to a figure file. The format follows "
                    "the extension of -o. Without a size: 1600 x 1000 pixels at 160 dpi. "
                    "slide = 1920 x 1080 at 144 dpi (13.33 x 7.5 in); single = 3.5 in and "
                    "double = 7.16 in wide at 300 dpi (pixels follow --dpi). --width or "
                    "--height alone keeps the aspect ratio.")
    render.add_argument("session", help="session file (.yaml)")
    render.add_argument("-o", "--output", required=True, metavar="FIG",
                        help="output file: .png, .svg or .pdf")
    render.add_argument("--size", choices=("slide", "single", "double"),
                        help="a preset size (see above)")
    render.add_argument("--width", type=_pixels, metavar="PX", help="width in pixels")
    render.add_argument("--height", type=_pixels, metavar="PX", help="height in pixels")
    render.add_argument("--dpi", type=_dpi, metavar="N",
                        help="dots per inch: fonts, lines and markers scale with it")
    render.add_argument("--theme", choices=("light", "dark", "presentation"), default="light")
    render.add_argument("--transparent", action="store_true",
                        help="no background (PNG, SVG and PDF)")
    presets = sub.add_parser("presets", help="list the hardware presets")
    presets.add_argument("--format", choices=("table", "json"), default="table")
    measure = sub.add_parser(
        "measure", help="measure this machine's roofs (CPU with numpy, GPU with PyTorch) "
                        "and save them as a preset",
        description="Measure the compute (GEMM per precision, all cores and one) and "
                    "bandwidth (read, copy, triad from L1 to DRAM) roofs of this computer "
                    "with numpy, or with --device cuda|mps a GPU's (GEMM peak per precision, "
                    "memory bandwidth, the L2 plateau, launch costs and the kernel-class "
                    "efficiencies of the calibrated prediction; needs PyTorch: "
                    "pip install \".[gpu]\"), and save the machine to the user presets "
                    "folder, where the app lists it with the presets, marked measured.")
    measure.add_argument("--device", default="cpu", metavar="cpu|cuda|cuda:N|mps",
                         help="what to measure: the CPU (numpy, the default), an NVIDIA or "
                              "AMD GPU (cuda, cuda:1 for the second) or an Apple GPU (mps)")
    measure.add_argument("--quick", action="store_true",
                         help="a coarser, shorter run (under 20 s on a laptop, under 30 s "
                              "on an H100)")
    measure.add_argument("-o", "--output", metavar="MACHINE.yaml",
                         help="also write the machine to this file")
    measure.add_argument("--compare", metavar="PRESET",
                         help="label the gap to this preset's datasheet figures")
    from workbench.cli import model as cli_model

    cli_model.add_parser(sub)
    return parser


_pixels = positive_whole("a whole number of pixels", "a positive number of pixels")


def _dpi(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    commands = {"analyze", "presets", "render", "model", "measure", "-h", "--help",
                "--version"}
    if not args or args[0] not in commands:
        if args and args[0].startswith("-") and args[0] not in commands:
            _parser().parse_args(args)  # reports the unknown option
        return _run_app(args[0] if args else None, args[1:])
    real = sys.stdout
    sys.stdout = _Output(real)
    try:
        try:
            status = _command(args)
        except SystemExit:  # --help, --version and argparse's errors: once printed
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return status
    except OutputError as exc:
        _silence_stdout()
        sys.stderr.write(f"{PROG}: cannot write the output: {exc}\n")
        return EXIT_OUTPUT_FAILED
    except BrokenPipeError:
        _silence_stdout()
        return 0
    finally:
        sys.stdout = real


EXIT_OUTPUT_FAILED = 1


class OutputError(Exception):
    """Standard output could not be written (a full disk, a closed stream)."""


class _Output:
    """``sys.stdout`` while a subcommand runs: a write or flush that fails is an
    :class:`OutputError` (a closed pipe stays a BrokenPipeError: the reader has all it wants)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _call(self, name: str, *args):
        if self._stream is None:
            raise OutputError("standard output is closed")
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.errno == errno.EBADF:
                raise OutputError("standard output is closed") from None
            raise OutputError(exc.strerror or str(exc)) from None
        except ValueError as exc:  # "I/O operation on closed file"
            raise OutputError(str(exc)) from None

    def write(self, text: str) -> int:
        return self._call("write", text)

    def flush(self) -> None:
        self._call("flush")

    def __getattr__(self, name: str):
        if self._stream is None:
            raise OutputError("standard output is closed")
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point file descriptor 1 at the null device, so that the interpreter's last flush of
    what is still buffered cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def _command(args: list[str]) -> int:
    parsed = _parser().parse_args(args)
    if parsed.command == "analyze":
        return _analyze(parsed.session, parsed.format, parsed.measurements, parsed.hardware)
    if parsed.command == "presets":
        return _presets(parsed.format)
    if parsed.command == "render":
        return _render(parsed)
    if parsed.command == "model":
        from workbench.cli import model as cli_model

        return cli_model.run(parsed)
    if parsed.command == "measure":
        from workbench.cli.measure import run_measure

        return run_measure(parsed)
    _parser().print_help()
    return EXIT_BAD_INPUT


def _run_app(session: str | None, rest: list[str]) -> int:
    if rest:
        return fail(f"unexpected arguments: {' '.join(rest)} (see --help)")
    from workbench.ui.window.launch import run

    return run(session)


# ---------------------------------------------------------------------------------------------


RESULT_KEYS = (
    "operation", "hardware", "precision", "precision_used", "level", "flops", "bytes",
    "intensity", "peak_flops", "bandwidth", "ridge", "attainable_flops", "fraction_of_peak",
    "bound", "t_math_s", "t_mem_s", "t_lower_s", "t_upper_s", "t_predicted_s", "efficiency",
    "launch_overhead_s", "unit", "ceiling_note", "kernels", "latency_s",
)

CSV_HEADERS = {
    "flops": "flops [FLOP]", "bytes": "bytes [B]", "intensity": "intensity [FLOP/B]",
    "peak_flops": "peak_flops [FLOP/s]", "bandwidth": "bandwidth [B/s]", "ridge": "ridge [FLOP/B]",
    "attainable_flops": "attainable_flops [FLOP/s]", "fraction_of_peak": "fraction_of_peak [1]",
    "t_math_s": "t_math [s]", "t_mem_s": "t_mem [s]", "t_lower_s": "t_lower [s]",
    "t_upper_s": "t_upper [s]", "t_predicted_s": "t_predicted [s]", "efficiency": "efficiency [1]",
    "launch_overhead_s": "launch_overhead [s]", "kernels": "kernels [1]",
    "latency_s": "link_latency [s]",
}


def _load(path: str):
    """The session at ``path`` and no error, or ``None`` and the error's line. A value an
    older file leaves to an example default is a warning on stderr (the output is unchanged,
    the exit status still 0)."""
    from workbench.io.errors import InputError
    from workbench.io.sessions import load_session

    assumed: list[str] = []
    try:
        session = load_session(path, assumed)
    except InputError as exc:
        return None, str(exc)
    for line in assumed:
        sys.stderr.write(f"{PROG}: warning: {line}\n")
    return session, None


def _analyze(path: str, fmt: str, measurement_files: Sequence[str] = (),
             hardware: str | None = None) -> int:
    session, error = _load(path)
    if error:
        return fail(error)
    if measurement_files:
        error = _attach(session, measurement_files, hardware)
        if error:
            return fail(error)
    from workbench.model.analysis import evaluate_session

    pairs = evaluate_session(session)
    results = [p.result for p in pairs if p.result is not None]
    skipped = [p.skipped for p in pairs if p.skipped is not None]
    sweep_rows, crossings = _sweeps(pairs)
    points = _judged(session)
    measured = _measurements(points)
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
        }
        import json  # here, not at the top: the desktop app starts through this module

        # whole, then written: never half a document (and never NaN or Infinity in it)
        sys.stdout.write(json.dumps(json_safe(payload), indent=2, allow_nan=False) + "\n")
    else:
        if fmt == "csv":
            sys.stdout.write(results_csv(results, sweep_rows))
        else:
            sys.stdout.write(results_table(results, skipped, session.title))
            sys.stdout.write(terminal_lines(_analysis_lines(crossings, measured)))
            sys.stdout.write(terminal_lines(_comparison_lines(compared)))
        for warning in warnings:  # beside the output, which stays machine-readable
            sys.stderr.write(f"{PROG}: warning: {terminal(warning.message)}\n")
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


def _attach(session, files: Sequence[str], hardware: str | None) -> str | None:
    """Add the measured points of ``files`` to ``session`` (in memory; the session file is not
    changed); an error's message, or ``None``."""
    from workbench.io.errors import InputError
    from workbench.io.measurements import attach_measurements, load_measurements

    try:
        for file in files:
            attach_measurements(session, load_measurements(file, hardware), file)
    except InputError as exc:
        return str(exc)
    return None


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


def _measurements(points) -> list[dict]:
    """Every measured point judged against its prediction (fraction and verdict band)."""
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
                        if m.get("t_predicted_s") else ""))
    return "".join(line + "\n" for line in lines)


def results_csv(results, sweep_rows=()) -> str:
    """One row per result; with sweep rows (dicts from ``analyze``), two more columns,
    ``sweep_param`` and ``sweep_value``, empty on the operations' own rows."""
    import csv
    import io

    from workbench.io.tables import spreadsheet_cell

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    extra = ["sweep_param", "sweep_value"] if sweep_rows else []
    writer.writerow([CSV_HEADERS.get(k, k) for k in RESULT_KEYS] + extra)
    for r in results:
        row = r.as_dict()
        writer.writerow([spreadsheet_cell("" if row[k] is None else row[k]) for k in RESULT_KEYS]
                        + ["" for _ in extra])
    for row in sweep_rows:
        writer.writerow([spreadsheet_cell("" if row[k] is None else row[k]) for k in RESULT_KEYS]
                        + [spreadsheet_cell(row["sweep"]["param"]), row["sweep"]["value"]])
    return buffer.getvalue()


def results_table(results, skipped, title: str = "") -> str:
    from workbench.model.units import format_number, format_quantity

    header = ("operation", "hardware", "FLOPs", "bytes", "I [FLOP/B]", "ceiling", "attainable",
              "% peak", "bound", "T_lower", "T_upper")
    rows = [header]
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


def _render(args) -> int:
    """Check everything that can be checked without Qt first (size, format, session), so that
    bad input fails fast with one line and no file; then draw."""
    from workbench.ui.figures.export import ExportError, format_of, resolve_size

    try:
        format_of(args.output)
        resolve_size(args.size, args.width, args.height, args.dpi, args.theme)
    except ExportError as exc:
        return fail(str(exc))
    session, error = _load(args.session)
    if error:
        return fail(error)
    from workbench.io.atomic import check_writable

    try:  # a read-only file or folder fails before the drawing
        check_writable(args.output)
    except OSError as exc:
        return fail(f"{args.output}: cannot write: {exc.strerror or exc}")
    from workbench.ui.figures.export import render_figure

    _quiet_platform_notes()
    try:
        render_figure(session, args.output, size=args.size, width=args.width,
                      height=args.height, dpi=args.dpi, theme=args.theme,
                      transparent=args.transparent)
    except ExportError as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"{args.output}: cannot write: {exc.strerror or exc}")
    return 0


#: Qt messages that say nothing to a user of the command line (the offscreen platform has no
#: window manager to pass size hints to).
_QT_NOISE = ("This plugin does not support propagateSizeHints()",)


def _quiet_platform_notes() -> None:
    """Leave out Qt's notes about the headless platform; every other Qt message is printed
    as Qt would print it."""
    from PySide6.QtCore import qFormatLogMessage, qInstallMessageHandler

    def handler(mode, context, message: str) -> None:
        if message in _QT_NOISE:
            return
        sys.stderr.write(qFormatLogMessage(mode, context, message) + "\n")

    qInstallMessageHandler(handler)


def _presets(fmt: str) -> int:
    from workbench.io.errors import InputError
    from workbench.io.user_presets import all_presets, user_preset_problems
    from workbench.model.units import format_number, format_quantity

    try:
        presets = all_presets()
    except InputError as exc:
        return fail(str(exc))
    for problem in user_preset_problems():  # left out of the list, and said so
        sys.stderr.write(f"{PROG}: warning: {terminal(' '.join(problem.split()))}\n")
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
