"""Import time and peak memory of profiler files at real sizes.

    python benchmarks/profiles.py [--kernels N] [--json OUT]

Generates, in a temporary folder:

* a PyTorch profiler trace (``.pt.trace.json.gz``) of N GPU kernels as Kineto writes them:
  per kernel an ``aten::linear`` holding an ``aten::addmm`` with recorded shapes (300
  distinct shapes), the ``cudaLaunchKernel`` inside it, the kernel and the two flow events
  that join them: 6 events per kernel;
* a rocprof-compute ``pmc_perf.csv`` of N dispatches with the 286 columns of AMD's MI200
  test workload that are not per-channel (``[n]``) counters, the roofline's among them,
  and a ``roofline.csv`` beside it;

then imports each with ``load_measurements`` in a fresh process and reports the wall time
of the import and the process's peak resident memory, beside the time the standard library
alone takes to parse the same file whole (on a shared machine the ratio is the steadier
figure). Targets: ≤ 5 s and ≤ 500 MB each for
N = 100,000.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "rocprof" / "vcopy-mi200"
TARGET_S, TARGET_MB = 5.0, 500.0


def write_trace(path: Path, kernels: int) -> None:
    rng = random.Random(1)
    shapes = [(rng.choice([1, 8, 64, 512, 4096]), rng.choice([256, 1024, 4096, 8192]),
               rng.choice([256, 1024, 4096, 14336])) for _ in range(300)]
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        out.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": '
                  '"NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912, "computeMajor": 9, '
                  '"computeMinor": 0, "numSms": 132}], "record_shapes": 1, "traceEvents": [\n')
        ts = 1_700_000_000_000.0
        gpu = ts
        first = True
        for i in range(kernels):
            m, k, n = shapes[i % len(shapes)]
            corr = 1000 + i
            events = [
                {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 10, "tid": 10,
                 "ts": ts, "dur": 30.5, "args": {"External id": 2 * i, "Record function id": 0,
                                                  "Sequence number": i, "Fwd thread id": 0,
                                                  "Ev Idx": 3 * i}},
                {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 10, "tid": 10,
                 "ts": ts + 5, "dur": 20.25,
                 "args": {"External id": 2 * i + 1, "Record function id": 0,
                          "Concrete Inputs": ["", "", "", "1", "1"],
                          "Input type": ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"],
                          "Input Strides": [[1], [k, 1], [1, k], [], []],
                          "Input Dims": [[n], [m, k], [k, n], [], []], "Ev Idx": 3 * i + 1}},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10,
                 "tid": 10, "ts": ts + 10, "dur": 6.5,
                 "args": {"External id": 2 * i + 1, "cbid": 211, "correlation": corr}},
                {"ph": "s", "id": corr, "pid": 10, "tid": 10, "ts": ts + 10, "cat": "ac2g",
                 "name": "ac2g"},
                {"ph": "X", "cat": "kernel",
                 "name": f"nvjet_tst_{m}x{n}_64x8_2x1_v_bz_coopA_TNT_{i % 300}",
                 "pid": 0, "tid": 7, "ts": gpu, "dur": 3.0 + (m * n * k) / 2e8,
                 "args": {"External id": 2 * i + 1, "device": 0, "stream": 7,
                          "correlation": corr, "registers per thread": 168,
                          "shared memory": 213248, "grid": [132, 1, 1], "block": [384, 1, 1],
                          "est. achieved occupancy %": 0}},
                {"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": gpu, "cat": "ac2g",
                 "name": "ac2g", "bp": "e"},
            ]
            for event in events:
                out.write(("" if first else ",\n") + json.dumps(event))
                first = False
            ts += 40.0
            gpu += 50.0
        out.write('\n], "traceName": "bench", "displayTimeUnit": "ms"}\n')


def write_pmc(folder: Path, dispatches: int) -> None:
    with open(FIXTURE / "pmc_perf.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    keep = [i for i, h in enumerate(rows[0]) if "[" not in h]
    header = [rows[0][i] for i in keep]
    template = [rows[1][i] for i in keep]
    at = {h: i for i, h in enumerate(header)}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "roofline.csv").write_bytes((FIXTURE / "roofline.csv").read_bytes())
    (folder / "sysinfo.csv").write_bytes((FIXTURE / "sysinfo.csv").read_bytes())
    with open(folder / "pmc_perf.csv", "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(header)
        start = 1411551767635712
        for i in range(dispatches):
            row = list(template)
            row[at["Dispatch_ID"]] = str(i)
            row[at["Kernel_Name"]] = f"kernel_{i % 400}(float*, float*, int) [clone .kd]"
            row[at["Start_Timestamp"]] = str(start)
            row[at["End_Timestamp"]] = str(start + 15000 + 7 * (i % 1000))
            row[at["SQ_INSTS_VALU_FMA_F32"]] = str(1000 + i % 977)
            row[at["SQ_INSTS_VALU_MFMA_MOPS_BF16"]] = str(i % 5003)
            start += 40000
            out.writerow(row)


def measure(path: Path) -> dict[str, float]:
    """The import in a fresh process (time, peak RSS), then, in another, the standard
    library alone parsing the same file whole (``json.loads`` of the decompressed text, or
    ``csv.reader`` over every row): on a shared machine the ratio says more than the time."""
    code = (
        "import resource, sys, time\n"
        "t = time.perf_counter()\n"
        "from workbench.io.measurements import load_measurements\n"
        "points = load_measurements(sys.argv[1])\n"
        "t = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "print(t, rss, len(points))\n")
    baseline = (
        "import csv, gc, gzip, json, sys, time\n"
        "from pathlib import Path\n"
        "gc.disable()\n"
        "p = Path(sys.argv[1])\n"
        "t = time.perf_counter()\n"
        "if p.is_dir():\n"
        "    with open(p / 'pmc_perf.csv', newline='') as f:\n"
        "        sum(1 for _ in csv.reader(f))\n"
        "else:\n"
        "    json.loads(gzip.open(p).read())\n"
        "print(time.perf_counter() - t)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, env=env, check=True)
    seconds, rss, points = done.stdout.split()
    base = subprocess.run([sys.executable, "-c", baseline, str(path)], capture_output=True,
                          text=True, env=env, check=True)
    return {"import_s": float(seconds), "peak_rss_mb": float(rss), "points": int(points),
            "file_mb": _size(path) / 1e6, "stdlib_parse_s": float(base.stdout)}


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.iterdir())
    return path.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=100_000)
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    results = {}
    files = (("kineto", "step.pt.trace.json.gz", write_trace),
             ("rocprof", "workload", write_pmc))
    with tempfile.TemporaryDirectory() as tmp:
        for kind, name, write in files:
            path = Path(tmp) / name
            t = time.perf_counter()
            write(path, args.kernels)
            print(f"generated {name} ({_size(path) / 1e6:.0f} MB) in "
                  f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
            results[kind] = measure(path)
    print(f"{'file':<10} {'kernels':>8} {'file MB':>8} {'points':>8} {'import s':>9} "
          f"{'stdlib parse s':>15} {'peak RSS MB':>12}  target")
    for kind, r in results.items():
        ok = r["import_s"] <= TARGET_S and r["peak_rss_mb"] <= TARGET_MB
        print(f"{kind:<10} {args.kernels:>8,} {r['file_mb']:>8.0f} {r['points']:>8,} "
              f"{r['import_s']:>9.2f} {r['stdlib_parse_s']:>15.2f} {r['peak_rss_mb']:>12.0f}  "
              f"≤ {TARGET_S:g} s, ≤ {TARGET_MB:g} MB: {'met' if ok else 'MISSED'}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
