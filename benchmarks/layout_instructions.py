"""A full placing of the chart's texts in instructions, as ``run.py``'s ``layout_full_ms``
times it: the benchmark window on a session of 10 and of 100 operations, each placing after
a pan of a hundredth of the view.

    python benchmarks/layout_instructions.py [--operations 10 100] [--placings 30] [--keep DIR]

A count does not depend on the machine's load, so it compares two versions of the placer on
a shared host where the clock varies by 2×. Each count is the difference between a run of
``placings + 2`` placings and one of 2, divided by ``placings``: what setting up the window
costs drops out. Each run is a fresh interpreter with a fresh settings folder and
``PYTHONHASHSEED=0``, its byte-code caches written beforehand (else the compiling counts
against the shorter run), and the garbage collector off during the placings (else where a
collection falls moves the count by a few per cent). Two counts of the same code with 30
placings agreed within 0.1 %; 10 placings with the user's settings and the collector on
spread 5 %. Needs valgrind; about a minute of CPU for each 10 placings at 100 operations.
``--keep`` keeps the callgrind files for ``callgrind_annotate``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from startup_instructions import per_step

ROOT = Path(__file__).resolve().parent.parent

_PLACINGS = r"""
import gc, os, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {benchmarks!r})
import run
app, window = run.shown_window(run.big_session({operations}))
canvas = window.canvas
canvas.relayout()
box = canvas.view_box
(x0, x1), (y0, y1) = box.viewRange()
gc.collect()
gc.disable()
for i in range({placings}):
    shift = 0.01 * (x1 - x0) * ((i + 1) % 2)
    box.setRange(xRange=(x0 + shift, x1 + shift), yRange=(y0, y1), padding=0)
    canvas.relayout()
os._exit(0)
"""


def _script(operations: int, placings: int) -> str:
    return _PLACINGS.format(root=str(ROOT), benchmarks=str(ROOT / "benchmarks"),
                            operations=operations, placings=placings)


def count(operations: int, placings: int, keep: Path | None = None) -> float:
    """Instructions of one full placing in the benchmark window on ``operations``
    operations: (``placings + 2`` placings less 2) / ``placings``."""
    return per_step(lambda n: _script(operations, n), placings, f"layout{operations}", keep)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, nargs="+", default=[10, 100],
                        help="sessions of these many operations (default: 10 100)")
    parser.add_argument("--placings", type=int, default=30,
                        help="placings counted in each session (default: 30)")
    parser.add_argument("--keep", type=Path, help="keep the callgrind files in this folder")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    if args.placings < 1 or any(n < 1 for n in args.operations):
        print("--placings and --operations must be at least 1", file=sys.stderr)
        return 2
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for n in args.operations:
        per = count(n, args.placings, args.keep)
        print(f"{n} operations: {per / 1e6:.1f} M instructions a full placing "
              f"({args.placings} placings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
