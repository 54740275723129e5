"""How close ``roofline-workbench measure`` comes to the plainest numpy program on this machine.

    python benchmarks/measure_vs_numpy.py [--quick] [--check]

Runs ``measure`` (``--quick`` profile, or the full one) in a fresh process, with the plain
numpy reference just before and just after it, and prints two ratios, each expected within
0.75–1.25:

- **DRAM**: the machine's main-memory roof over the reference's copy rate (two arrays as large
  as the largest working set measured, each half of it, 16 bytes counted per element, the
  best of several fresh allocations);
- **fp64**: the one-core fp64 GEMM rate over a 4096³ ``np.matmul`` on one core (2·n³ FLOPs).

Both sides are the best of many runs, over the same working set, with the same BLAS thread
setting. Other programs on a shared host take cores and memory bandwidth for tens of seconds
at a time: when the two references disagree by more than 10 % the host changed during the
measurement and the whole experiment is repeated (at most three times); the last one is
reported as unsteady. With ``--check`` the exit status is 1 when a steady run is outside the
expected range (an unsteady one only says so); it is 2 when ``measure`` failed. (Whether the figures are the
bytes and FLOPs counted over the kernels' time is a unit test's question, answered on a fake
machine: ``tests/measure/test_measured_rates.py``.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: measured / reference within this factor either way
EXPECTED = 0.25
#: references before and after that differ by more than this: the host changed
STEADY = 0.10

REFERENCE = r"""
import json, sys, time
import numpy as np

def best(run, times):
    out = []
    for _ in range(times):
        t0 = time.perf_counter(); run(); out.append(time.perf_counter() - t0)
    return min(out)

n = int(sys.argv[1])  # elements of each copied array
copy = 0.0
for _ in range(5):  # fresh arrays each time: huge-page backing differs between allocations
    a = np.ones(n); b = np.zeros(n)
    np.copyto(b, a)
    copy = max(copy, 2 * 8 * n / best(lambda: np.copyto(b, a), 8))
    del a, b
m = 4096
x = np.random.default_rng(0).random((m, m)); y = x.copy(); z = np.empty((m, m))
np.matmul(x, y, out=z)
gemm = 2 * m**3 / best(lambda: np.matmul(x, y, out=z), int(sys.argv[2]))
print(json.dumps({"copy": copy, "gemm": gemm}))
"""


def reference(largest: int) -> dict[str, float]:
    """The plainest numpy measurement with the BLAS on one core."""
    from workbench.measure.system import thread_env

    env = thread_env(1)
    done = subprocess.run([sys.executable, "-c", REFERENCE, str(largest // 16), "3"],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def steady(before: dict[str, float], after: dict[str, float]) -> bool:
    return all(abs(after[k] - before[k]) <= STEADY * before[k] for k in before)


def main() -> int:
    from workbench.io.user_presets import USER_PRESETS_VARIABLE, load_machine_file
    from workbench.measure.runner import PROFILE_VARIABLE, PROFILES, working_sets
    from workbench.measure.system import cache_sizes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the quick measure profile")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a steady run is outside the expected range")
    args = parser.parse_args()
    profile = "quick" if args.quick else "full"
    largest = working_sets(PROFILES[profile], cache_sizes()[0])[-1]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "this-machine.yaml"
        env = {k: v for k, v in os.environ.items() if k != PROFILE_VARIABLE}
        env.update(PYTHONPATH=str(ROOT), **{USER_PRESETS_VARIABLE: str(Path(folder) / "presets")})
        command = [sys.executable, "-m", "workbench", "measure", "-o", str(out)]
        command += ["--quick"] if args.quick else []
        for attempt in range(3):
            before = reference(largest)
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
            after = reference(largest)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 2
            if steady(before, after) or attempt == 2:
                break
        hw, prov = load_machine_file(out)
    fp64 = prov["gemm"]["fp64"]
    one_core = fp64["one_core" if "one_core" in fp64 else "all_cores"]
    plain = {key: max(before[key], after[key]) for key in ("copy", "gemm")}
    ratios = {"DRAM": hw.memory[hw.main_memory] / plain["copy"],
              "fp64": one_core["rate"] / plain["gemm"]}
    held = steady(before, after)
    print(f"measure ({profile}) against plain numpy, host {'steady' if held else 'NOT steady'}"
          f" (references before/after: {json.dumps(before)} / {json.dumps(after)})")
    print(f"DRAM  {hw.memory[hw.main_memory] / 1e9:8.3g} GB/s     numpy copy   "
          f"{plain['copy'] / 1e9:8.3g} GB/s      ratio {ratios['DRAM']:.3f}")
    print(f"fp64  {one_core['rate'] / 1e9:8.3g} GFLOP/s  numpy matmul {plain['gemm'] / 1e9:8.3g}"
          f" GFLOP/s   ratio {ratios['fp64']:.3f}  (one core)")
    outside = [k for k, r in ratios.items() if not 1 - EXPECTED <= r <= 1 + EXPECTED]
    if outside:
        print(f"outside {1 - EXPECTED:.2f}–{1 + EXPECTED:.2f}: {', '.join(outside)}"
              + ("" if held else " (the host changed during the measurement)"))
    return 1 if args.check and outside and held else 0


if __name__ == "__main__":
    sys.exit(main())
