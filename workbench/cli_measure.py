"""``roofline-workbench measure``: measure this machine from the command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path

PROG = "roofline-workbench"


def _fail(message: str) -> int:
    sys.stderr.write(f"{PROG}: {' '.join(str(message).split())}\n")
    return 2


def run_measure(args) -> int:
    from workbench.io.errors import InputError
    from workbench.io.user_presets import find_preset, save_machine
    from workbench.measure import Cancelled, compare_to_datasheet, measure_machine, profile_from_env
    from workbench.measure.summary import summary_lines

    output = Path(args.output) if args.output else None
    if output is not None:
        if output.suffix.lower() not in (".yaml", ".yml"):
            return _fail(f"{output}: the machine file must end in .yaml or .yml")
        if not (output.parent if str(output.parent) else Path(".")).is_dir():
            return _fail(f"{output}: the folder {output.parent} does not exist")
        from workbench.io.atomic import check_writable

        try:  # before minutes of measuring: a read-only file or folder fails now
            check_writable(output)
        except OSError as exc:
            return _fail(f"{output}: cannot write: {exc.strerror or exc}")
    datasheet = None
    if args.compare:
        try:
            datasheet = find_preset(args.compare)
        except KeyError:
            return _fail(f"--compare: unknown preset {args.compare!r} (see "
                         f"`{PROG} presets`)")
        except InputError as exc:
            return _fail(str(exc))
    profile = profile_from_env("quick" if args.quick else "full")
    shown = [0.0]

    def progress(p) -> None:
        now = time.monotonic()
        if now - shown[0] >= 1.0 and sys.stderr.isatty():
            shown[0] = now
            sys.stderr.write(f"\r{100 * p.fraction:3.0f} %  about {p.remaining_s:.0f} s left"
                             f"  {p.stage[:60]:60}")
            sys.stderr.flush()

    try:
        measured = measure_machine(profile, progress)
    except (Cancelled, KeyboardInterrupt):
        sys.stderr.write(f"\n{PROG}: measurement cancelled; nothing was saved\n")
        return 130
    except (RuntimeError, MemoryError, OSError) as exc:
        return _fail(f"the measurement failed: {exc}")
    if sys.stderr.isatty():
        sys.stderr.write("\r" + " " * 80 + "\r")
    if datasheet is not None:
        compare_to_datasheet(measured, datasheet, args.compare)
    try:
        saved = save_machine(measured.hardware, measured.provenance)
        if output is not None:
            save_machine(measured.hardware, measured.provenance, output)
    except OSError as exc:
        return _fail(f"{getattr(exc, 'filename', None) or output}: cannot write: "
                     f"{exc.strerror or exc}")
    sys.stdout.write("\n".join(summary_lines(measured)) + "\n")
    sys.stdout.write(f"saved as preset {measured.hardware.id}: {saved}\n")
    if output is not None:
        sys.stdout.write(f"wrote {output}\n")
    return 0
