"""How fast and in how much memory a session file past the limits is refused.

    python benchmarks/refusals.py [--quick]

Each file is written to a temporary folder and opened with ``load_session`` in a fresh
interpreter, which reports the seconds until the refusal and its peak resident memory.
Targets: each refused in <= 2 s with <= 200 MB.

- ``unknown_key_31mb``: a 31 MB session whose one unknown top-level key holds a long list;
- ``operations_100001``: 100,001 operations (7 MB), one past the limit;
- ``sweeps_10x100000``: ten GEMMs, each swept over 100,000 points (1.1 KB).

--quick writes smaller files (a smoke test; times on shared machines are noise).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import resource, sys, time
sys.path.insert(0, {root!r})
from workbench.io.errors import InputError
from workbench.io.sessions import load_session
start = time.perf_counter()
try:
    load_session({path!r})
    message = "opened"
except InputError as exc:
    message = str(exc)
seconds = time.perf_counter() - start
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, message[:160])
"""


def files(folder: Path, quick: bool) -> dict[str, Path]:
    scale = 10 if quick else 1
    out = {}
    path = folder / "unknown_key.yaml"
    with path.open("w") as handle:
        handle.write("schema_version: 2\ntitle: long list under an unknown key\nextra_points:\n")
        handle.write("- 1234567890\n" * (2_480_000 // scale))
    out["unknown_key_31mb"] = path
    path = folder / "operations.yaml"
    with path.open("w") as handle:
        handle.write("schema_version: 2\noperations:\n")
        for i in range(100_001):
            handle.write(f"- name: op {i}\n  kind: gemm\n  m: 8192\n  n: 28672\n  k: 8192\n"
                         "  dtype: bf16\n")
    out["operations_100001"] = path
    path = folder / "sweeps.yaml"
    path.write_text("schema_version: 2\noperations:\n" + "".join(
        f"- {{name: g{i}, kind: gemm, m: 1, n: 4096, k: 4096, sweep: {{param: m, start: 1, "
        f"stop: 65536, num: 100000, scale: log}}}}\n" for i in range(10)))
    out["sweeps_10x100000"] = path
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for key, path in files(Path(folder), args.quick).items():
            code = _CHILD.format(root=str(ROOT), path=str(path))
            line = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout.strip()
            seconds, rss, message = line.split(" ", 2)
            results[key] = {"bytes": path.stat().st_size, "seconds": float(seconds),
                            "rss_mb": float(rss), "message": message}
            print(f"{key:20s} {path.stat().st_size / 2**20:7.1f} MB  {float(seconds):6.2f} s  "
                  f"{float(rss):6.0f} MB  {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
