"""An edit in instructions, as ``run.py``'s ``sweep_keystroke_cpu_ms`` and
``model_edit_ms.layers`` time it: a keystroke in the critical-batch example (the swept GEMM's
``n`` set, its sweep plot shown) and a batch edit of Llama-3.1-405B's layers on three
machines; and an operation's edit in the real-kernels example (measured kernels, tagged);
each until every view has repainted.

    python benchmarks/edit_instructions.py [--edits 20] [--only sweep|model|kernels]
                                           [--keep DIR]

Counted as ``startup_instructions.per_step`` counts (``edits + 2`` less 2, in fresh
interpreters), the garbage collector off during the edits: unlike the clock (one edit's time
varies by a fifth from run to run on a shared host), the count compares two versions of the
code. Needs valgrind; about a minute of CPU for each edit counted. ``--keep`` keeps the
callgrind files for ``callgrind_annotate``.
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

_HEAD = r"""
import gc, os, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {benchmarks!r})
import run
run._quiet_offscreen_warnings()
from PySide6.QtWidgets import QApplication
"""

#: each edit's window, set up as run.py's benchmark sets it up, and one edit (``value``: a
#: new number each time)
_EDITS = {
    "sweep": (r"""
from workbench.io.presets import examples_dir
from workbench.io.sessions import load_session
app, window = run.shown_window(load_session(examples_dir() / "critical_batch_sweep.yaml"))
window.sweep_dock.raise_()
doc = window.document
target = doc.session.operations[0]
window.workspace.selection.select(target.id)

def edit(value):
    doc.set_param(target.id, "n", 8000 + value)
    QApplication.processEvents()
    QApplication.processEvents()
""", "sweep keystroke"),
    "model": (r"""
from workbench.io.model_configs import read_model_config
from workbench.model.llm.architecture import Setup
from workbench.model.llm.session import ModelEntry
from workbench.model.session import Session
app, window = run.shown_window(Session(title="model", hardware=run.big_session(0).hardware))
doc = window.document
model = ModelEntry("Llama-3.1-405B", read_model_config("Llama-3.1-405B"),
                   Setup("decode", 1, 2048, 2048), view="layers")
window.add_model(model)
window.results_dock.raise_()

def edit(value):
    doc.set_model(model.id, batch=2 + value)
    QApplication.processEvents()
""", "model edit (layers)"),
    # an operation's shape changed in a session of measured kernels (35 operations on two
    # machines, their measurements and tags: about 120 texts, placed as after a zoom)
    "kernels": (r"""
from workbench.io.presets import examples_dir
from workbench.io.sessions import load_session
app, window = run.shown_window(load_session(examples_dir() / "real_kernels_h100_h200.yaml"))
doc = window.document
target = doc.session.operations[5]  # (gemv_4096)

def edit(value):
    doc.set_param(target.id, "n", 4000 + 8 * value)
    QApplication.processEvents()
    QApplication.processEvents()
""", "operation edit among measured kernels"),
}

_TAIL = r"""
# (the autosave writes every 30 s of the run, not at each edit: slowed by valgrind, a run
# wrote it at some edits and not others, and the count moved by a few per cent)
window.autosave_timer.stop()
for _ in range(3):
    app.processEvents()
for value in range(3):  # (warm-up, as the benchmark's)
    edit(100 + value)
gc.collect()
gc.disable()
for value in range({edits}):
    edit(value)
os._exit(0)
"""


def _script(which: str, edits: int) -> str:
    head = _HEAD.format(root=str(ROOT), benchmarks=str(ROOT / "benchmarks"))
    return head + _EDITS[which][0] + _TAIL.format(edits=edits)


def count(which: str, edits: int, keep: Path | None = None) -> float:
    """Instructions of one edit ``which`` (``sweep`` or ``model``): (``edits + 2`` edits
    less 2) / ``edits``."""
    return per_step(lambda n: _script(which, n), edits, f"edit-{which}", keep)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20,
                        help="edits counted (default: 20)")
    parser.add_argument("--only", choices=sorted(_EDITS), help="count this edit alone")
    parser.add_argument("--keep", type=Path, help="keep the callgrind files in this folder")
    args = parser.parse_args()
    problem = ("valgrind is not installed" if shutil.which("valgrind") is None
               else "--edits must be at least 1" if args.edits < 1 else "")
    if problem:
        print(problem, file=sys.stderr)
        return 2
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # (the caches are written)
    for which in [args.only] if args.only else sorted(_EDITS):
        print(f"{_EDITS[which][1]}: {count(which, args.edits, args.keep) / 1e6:.1f} M "
              f"instructions an edit ({args.edits} edits)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
