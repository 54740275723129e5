"""An edit in instructions, as ``run.py``'s ``sweep_keystroke_cpu_ms`` and
``model_edit_ms.layers`` time it: a keystroke in the critical-batch example (the swept GEMM's
``n`` set, its sweep plot shown) and a batch edit of Llama-3.1-405B's layers on three
machines, each until every view has repainted.

    python benchmarks/edit_instructions.py [--edits 20] [--only sweep|model] [--keep DIR]

A count does not depend on the machine's load, so it compares two versions of the code on a
shared host where the clock of one edit varies by a fifth from run to run. Each count is the
difference between a run of ``edits + 2`` edits and one of 2, divided by ``edits``: setting up
the window drops out. Each run is a fresh interpreter with a fresh settings folder and
``PYTHONHASHSEED=0``, its byte-code caches written beforehand, and the garbage collector off
during the edits. Needs valgrind; about a minute of CPU for each.
``--keep`` keeps the callgrind files for ``callgrind_annotate``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # (the benchmark's window and sessions)
from startup_instructions import collected

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
}

_TAIL = r"""
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
    with tempfile.TemporaryDirectory(prefix="roofline-bench-config-") as config:
        env = run._child_env(config)
        env["PYTHONHASHSEED"] = "0"
        short, long = _script(which, 2), _script(which, edits + 2)
        subprocess.run([sys.executable, "-c", short], env=env, check=True,
                       capture_output=True)  # (byte-code caches written)
        counts = []
        for name, code in (("short", short), ("long", long)):
            out = Path(config) / f"edit-{which}.{name}.callgrind"
            counts.append(collected(code, env, out, keep))
        return (counts[1] - counts[0]) / edits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20,
                        help="edits counted (default: 20)")
    parser.add_argument("--only", choices=sorted(_EDITS), help="count this edit alone")
    parser.add_argument("--keep", type=Path, help="keep the callgrind files in this folder")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    if args.edits < 1:
        print("--edits must be at least 1", file=sys.stderr)
        return 2
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for which in [args.only] if args.only else sorted(_EDITS):
        per = count(which, args.edits, args.keep)
        print(f"{_EDITS[which][1]}: {per / 1e6:.1f} M instructions an edit "
              f"({args.edits} edits)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
