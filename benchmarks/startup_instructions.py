"""Start-up in instructions: the app and the bare-window floor of ``run.py``'s ``startup_s``,
each counted by ``valgrind --tool=callgrind`` from process start to the painted window.

    python benchmarks/startup_instructions.py [--runs N] [--keep DIR]

A count does not depend on the machine's load, so it compares two versions of the code on a
shared host where the clock varies by 2×. Each script is the benchmark's own, ended with
``os._exit`` once painted (tearing the process down is not counted), run once beforehand to
write its byte-code caches, with a fresh settings folder, ``PYTHONHASHSEED=0`` and numpy's
BLAS on one thread (see ``_counted_env``). Needs valgrind; about a minute and a half of CPU
a pair. ``--keep`` keeps the callgrind files for ``callgrind_annotate``.

Counted so, the floor's count is the same in every run (1.951 G on the development
machine; 1.95–2.00 G while BLAS ran its own threads). The app's first count after a change
of the code is about 2 % higher: the example parsed at the first start is parsed again for
the new code (its cache is kept in the user's cache folder). ``--runs`` pairs are taken,
one after the other, and the median of their ratios is what to compare.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # (the benchmark's two scripts)

ROOT = Path(__file__).resolve().parent.parent


def _script(kind: str) -> str:
    code = run._STARTUP_FLOOR if kind == "floor" else run._STARTUP_APP.format(root=str(ROOT))
    marker = 'print("painted", flush=True)'
    assert marker in code
    return code.replace(marker, "import os; os._exit(0)")


def count(kind: str, keep: Path | None = None) -> int:
    """Instructions from the start of a fresh interpreter until ``kind``'s window ("app" or
    "floor") is painted."""
    with tempfile.TemporaryDirectory(prefix="roofline-bench-config-") as config:
        env = _counted_env(config)
        code = _script(kind)
        subprocess.run([sys.executable, "-c", code], env=env, check=True,
                       capture_output=True)  # (byte-code caches written)
        return collected(code, env, Path(config) / f"{kind}.callgrind", keep)


def _counted_env(config: str) -> dict[str, str]:
    """The environment of a counted run: a fresh settings folder ``config``, the hash seed
    fixed (the same set orders every run), and numpy's BLAS on the one thread. Its worker
    threads wait for work by spinning, and valgrind counts each spin; runs slowed by valgrind
    by varying amounts spun for varying times (2–4 M instructions an edit, between two runs of
    the same code)."""
    env = run._child_env(config)
    env["PYTHONHASHSEED"] = "0"
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def per_step(script: Callable[[int], str], steps: int, name: str,
             keep: Path | None = None) -> float:
    """Instructions of one step of ``script(n)`` (a program that sets up, does ``n`` steps
    and ends): a run of ``steps + 2`` less a run of 2, over ``steps``, what setting up costs
    dropping out. Each run is a fresh interpreter with a fresh settings folder and
    ``PYTHONHASHSEED=0`` and BLAS on one thread (``_counted_env``), its byte-code caches
    written beforehand (``name``: of the callgrind files)."""
    with tempfile.TemporaryDirectory(prefix="roofline-bench-config-") as config:
        env = _counted_env(config)
        short, long = script(2), script(steps + 2)
        # (byte-code caches written, of every module the long run imports: else one first
        # imported at a later step is compiled, and counted, within the long run)
        subprocess.run([sys.executable, "-c", long], env=env, check=True, capture_output=True)
        counts = [collected(code, env, Path(config) / f"{name}.{which}.callgrind", keep)
                  for which, code in (("short", short), ("long", long))]
        return (counts[1] - counts[0]) / steps


def collected(code: str, env: dict[str, str], out: Path, keep: Path | None = None) -> int:
    """The instructions ``valgrind --tool=callgrind`` counts running ``code`` in a fresh
    interpreter with the environment ``env`` (its callgrind file written to ``out``, and
    copied into the folder ``keep`` where given)."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                           sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if found is None:
        raise RuntimeError(f"no count in valgrind's output: {proc.stderr[-2000:]}")
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(out, keep / out.name)
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the callgrind files in this folder")
    parser.add_argument("--runs", type=int, default=3,
                        help="pairs of counts to take (default 3): the median ratio is given")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    ratios = []
    for _ in range(max(1, args.runs)):
        floor = count("floor", args.keep)
        app = count("app", args.keep)
        ratios.append(app / floor)
        print(f"floor {floor / 1e9:.3f} G instructions, app {app / 1e9:.3f} G: "
              f"{app / floor:.3f} × the floor", flush=True)
    print(f"median {statistics.median(ratios):.3f} × the floor ({min(ratios):.3f} – "
          f"{max(ratios):.3f} over {len(ratios)} pairs; target ≤ 1.3 ×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
