"""The timed kernels: bandwidth (read, copy, triad) in this process, GEMM in a child process.

**Bandwidth kernels** (float64, numpy ufuncs writing into preallocated arrays with ``out=``):

========= ============================================ ======== ==========================
kernel    numpy                                        arrays   bytes counted per element
========= ============================================ ======== ==========================
read      ``np.add.reduce(a)``                         1        8 (one load)
copy      ``np.copyto(c, a)``                          2        16 (load + store)
triad     ``np.multiply(b, s, out=c)``;                3        40 (the two passes: load b,
          ``np.add(c, a, out=c)``                                store c; load c, a, store c)
========= ============================================ ======== ==========================

Loads and stores both count; the read-for-ownership a cache may add before a store is not
counted. The **working set** is the bytes of all the kernel's arrays. A small working set is
swept many times within ONE numpy call (the arrays are viewed ``R`` times over with a zero
stride, ``np.broadcast_to``), so that the few microseconds numpy spends per call do not hide
the speed of the L1 and L2 caches.

**GEMM** runs ``np.matmul(a, b, out=c)`` on square n×n matrices (2·n³ FLOPs) in a child
Python process whose BLAS thread count is fixed by environment variables, so that "all cores"
and "one core" are both measured whatever the parent's BLAS was started with. The child prints
one JSON line per size and stops once the rate has levelled off.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from workbench.measure.analysis import BestOf, best_of
from workbench.measure.system import thread_env

__all__ = ["BANDWIDTH_KERNELS", "Buffers", "time_bandwidth", "run_gemm_child", "Cancelled", "time_runs"]

#: kernel → (arrays in the working set, bytes counted per element of one array)
BANDWIDTH_KERNELS = {"read": (1, 8.0), "copy": (2, 16.0), "triad": (3, 40.0)}
#: bytes one call should move at least, so that the per-call overhead stays below ~1 %
_BYTES_PER_CALL = 8 * 1024 * 1024


class Cancelled(Exception):
    """The measurement was cancelled."""


def time_runs(run: Callable[[], object], budget_s: float, min_runs: int, max_runs: int,
              cancelled: Callable[[], bool] = lambda: False) -> list[float]:
    """Time ``run`` at least ``min_runs`` times, then again while within ``budget_s``."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < max_runs:
        if cancelled():
            raise Cancelled
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
        if len(times) >= min_runs and time.perf_counter() - start >= budget_s:
            break
    return times


class Buffers:
    """Preallocated, touched arrays for every working set up to ``largest`` bytes: each
    working set is a view of them, so that no timing pays for allocation or page faults."""

    def __init__(self, largest: int) -> None:
        n = max(64, largest // 8)
        self.a = np.full(n, 1.0)
        self.b = np.full(n // 2 + 1, 2.0)
        self.c = np.zeros(n // 2 + 1)


def time_bandwidth(kernel: str, working_set: int, budget_s: float, min_runs: int = 3,
                   max_runs: int = 50, cancelled: Callable[[], bool] = lambda: False,
                   buffers: Buffers | None = None) -> BestOf:
    """Best-of timing of one bandwidth kernel at one working set (bytes); ``work`` is the
    bytes counted per call."""
    arrays, per_element = BANDWIDTH_KERNELS[kernel]
    n = max(64, working_set // (8 * arrays))
    moved = per_element * n
    sweeps = max(1, int(_BYTES_PER_CALL // moved))
    if buffers is None or buffers.a.size < n or buffers.b.size < n:
        a = np.full(n, 1.0)  # (arrays of their own, the way a plain numpy program has them)
        b = np.full(n, 2.0) if arrays >= 3 else None
        c = np.zeros(n) if arrays >= 2 else None
    else:
        a = buffers.a[:n]
        b = buffers.b[:n] if arrays >= 3 else None
        c = buffers.c[:n] if arrays >= 2 else None
    if sweeps > 1:
        a_in = np.broadcast_to(a, (sweeps, n))
        b_in = np.broadcast_to(b, (sweeps, n)) if b is not None else None
        c_out = (np.lib.stride_tricks.as_strided(c, (sweeps, n), (0, c.itemsize))
                 if c is not None else None)
    else:
        a_in, b_in, c_out = a, b, c
    if kernel == "read":
        sums = np.empty(sweeps) if sweeps > 1 else None

        def run():
            return np.add.reduce(a_in, axis=-1, out=sums)
    elif kernel == "copy":
        def run():
            np.copyto(c_out, a_in)
    else:
        def run():
            np.multiply(b_in, 1.000001, out=c_out)
            np.add(c_out, a_in, out=c_out)
    run()  # warm: pages touched, code paths loaded
    times = time_runs(run, budget_s, min_runs, max_runs, cancelled)
    return best_of(times, moved * sweeps)


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent.parent)


def run_gemm_child(dtype: str, threads: int, sizes: list[int], budget_s: float,
                   min_runs: int, max_runs: int, min_n: int, tol: float,
                   on_size: Callable[[dict], None] = lambda row: None,
                   cancelled: Callable[[], bool] = lambda: False,
                   timeout_s: float = 600.0, peak_budget_s: float | None = None,
                   sample_s: float = 0.0) -> list[dict]:
    """GEMM rates for rising sizes in a child process with ``threads`` BLAS threads.

    Sizes from ``min_n`` on (where the peak is read) are timed for ``peak_budget_s``, each
    timed sample repeating the product for at least ``sample_s`` (the time per product is
    reported).
    Returns one row per size measured: ``{"n", "times", "flops"}``. Cancelling kills the
    child at once.
    """
    import os

    config = {"dtype": dtype, "sizes": sizes, "budget_s": budget_s, "min_runs": min_runs,
              "max_runs": max_runs, "min_n": min_n, "tol": tol,
              "peak_budget_s": budget_s if peak_budget_s is None else peak_budget_s,
              "sample_s": sample_s}
    env = thread_env(threads)
    env["PYTHONPATH"] = os.pathsep.join(
        [_package_root()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    child = subprocess.Popen(
        [sys.executable, "-m", "workbench.measure.gemm_child", json.dumps(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump():
        for line in child.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    rows: list[dict] = []
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            if cancelled():
                raise Cancelled
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {dtype} GEMM measurement took longer than "
                                   f"{timeout_s:.0f} s")
            try:
                line = lines.get(timeout=0.05)
            except queue.Empty:
                continue
            if line is None:
                break
            row = json.loads(line)
            rows.append(row)
            on_size(row)
        child.wait(timeout=10)
        if child.returncode != 0:
            err = (child.stderr.read() or "").strip().splitlines()
            raise RuntimeError(f"the {dtype} GEMM child process failed: "
                               f"{err[-1] if err else f'exit status {child.returncode}'}")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    return rows
