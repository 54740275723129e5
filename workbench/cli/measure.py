"""``roofline-workbench measure``: measure this machine from the command line."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

from workbench.cli.common import PROG, fail, terminal


def add_parser(sub) -> None:
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


def _progress_writer():
    shown = [0.0]

    def progress(p) -> None:
        now = time.monotonic()
        if now - shown[0] >= 1.0 and sys.stderr.isatty():
            shown[0] = now
            sys.stderr.write(f"\r{100 * p.fraction:3.0f} %  about {p.remaining_s:.0f} s left"
                             f"  {p.stage[:60]:60}")
            sys.stderr.flush()
    return progress


def _run_gpu(kind: str, index: int, args, output: Path | None, datasheet) -> int:
    """``measure --device cuda|mps``: the GPU measurement (PyTorch, else CuPy)."""
    from workbench.io.presets import builtin_ids, get_preset
    from workbench.measure import Cancelled, gpu_backend
    from workbench.measure.gpu_runner import (
        datasheet_for,
        gpu_profile_from_env,
        gpu_summary_lines,
        measure_gpu,
    )

    try:
        backend = gpu_backend.load_backend(kind)
        devices = backend.devices()
    except (gpu_backend.BackendMissing, gpu_backend.NoDevice) as exc:
        return fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - a broken driver or library: one line, no trace
        return fail(f"the {kind} backend failed to start: {type(exc).__name__}: {exc}")
    if index >= len(devices):
        return fail(f"--device: there is no {kind}:{index}; found "
                     + ", ".join(d.label for d in devices))
    datasheet_id = args.compare
    if datasheet is None:
        datasheet_id = datasheet_for(devices[index].name, builtin_ids())
        datasheet = get_preset(datasheet_id) if datasheet_id else None
    profile = gpu_profile_from_env("quick" if args.quick else "full")
    try:
        measured = measure_gpu(backend, index, profile, _progress_writer(),
                               datasheet=datasheet, datasheet_id=datasheet_id)
    except (Cancelled, KeyboardInterrupt):
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        return fail("the measurement was cancelled; nothing was saved")
    except (RuntimeError, MemoryError, OSError, ValueError) as exc:
        return fail(f"the measurement failed: {exc}")
    finally:
        with contextlib.suppress(Exception):  # freeing memory must not hide the result
            backend.release()
    return _save_and_report(measured, output, gpu_summary_lines(measured))


def run(args) -> int:
    from workbench.io.errors import InputError
    from workbench.io.user_presets import find_preset
    from workbench.measure import Cancelled, compare_to_datasheet, measure_machine, profile_from_env
    from workbench.measure.summary import summary_lines

    device = getattr(args, "device", None)
    device = "cpu" if device is None else device.strip().lower()  # ("" names no device)
    kind, _, index = device.partition(":")
    if kind not in ("cpu", "cuda", "mps") or (index and not (kind == "cuda" and index.isdigit())):
        return fail(f"--device: unknown device {device!r}; expected cpu, cuda, cuda:N "
                     "(the N-th GPU) or mps (an Apple GPU)")
    output = Path(args.output) if args.output else None
    if output is not None:
        if output.suffix.lower() not in (".yaml", ".yml"):
            return fail(f"{output}: the machine file must end in .yaml or .yml")
        if not (output.parent if str(output.parent) else Path(".")).is_dir():
            return fail(f"{output}: the folder {output.parent} does not exist")
        from workbench.io.atomic import check_writable

        try:  # before minutes of measuring: a read-only file or folder fails now
            check_writable(output)
        except OSError as exc:
            return fail(f"{output}: cannot write: {exc.strerror or exc}")
    datasheet = None
    if args.compare:
        try:
            datasheet = find_preset(args.compare)
        except KeyError:
            return fail(f"--compare: unknown preset {args.compare!r} (see "
                         f"`{PROG} presets`)")
        except InputError as exc:
            return fail(str(exc))
    if kind != "cpu":
        return _run_gpu(kind, int(index or 0), args, output, datasheet)
    profile = profile_from_env("quick" if args.quick else "full")
    try:
        measured = measure_machine(profile, _progress_writer())
    except (Cancelled, KeyboardInterrupt):
        sys.stderr.write(f"\n{PROG}: measurement cancelled; nothing was saved\n")
        return 130
    except (RuntimeError, MemoryError, OSError) as exc:
        return fail(f"the measurement failed: {exc}")
    if datasheet is not None:
        compare_to_datasheet(measured, datasheet, args.compare)
    return _save_and_report(measured, output, summary_lines(measured))


def _save_and_report(measured, output: Path | None, lines: list[str]) -> int:
    """Save a measured machine to the user presets (and to ``output``), print ``lines``
    and where it went: 0, or 2 with one line when it cannot be written."""
    from workbench.io.user_presets import save_machine

    if sys.stderr.isatty():  # (the progress line goes)
        sys.stderr.write("\r" + " " * 80 + "\r")
    sys.stdout.write("\n".join(lines) + "\n")  # first: a failed save keeps the figures
    sys.stdout.flush()
    try:
        saved = save_machine(measured.hardware, measured.provenance)
        if output is not None:
            save_machine(measured.hardware, measured.provenance, output)
    except OSError as exc:
        return fail(f"{getattr(exc, 'filename', None) or output}: cannot write: "
                     f"{exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - a value the file cannot hold: one line, no trace
        return fail(f"the measured machine could not be saved: {type(exc).__name__}: {exc}")
    sys.stdout.write(f"saved as preset {terminal(str(measured.hardware.id))}: "
                     f"{terminal(str(saved))}\n")
    if output is not None:
        sys.stdout.write(f"wrote {terminal(str(output))}\n")
    return 0
