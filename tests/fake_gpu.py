"""A GPU backend that replays the reference H100 SXM and H200 measurements.

The data is calibration/gpu-measurements/{h100-sxm,h200}.json (measured 2026-11-26,
PyTorch 2.11.0+cu130, CUDA 13.0), its operations those of
:data:`workbench.measure.gpu_suite.SUITE`:

* ``time_gemm`` and ``time_kernel`` return the recorded runs of the suite operation of the
  same kind and parameters (its fastest backend for attention, as calibration/fit.py takes
  it), as ``runs`` samples with the recorded fastest, median and slowest times; a shape or
  precision the reference did not time raises ``Unavailable``;
* ``time_launch`` returns the recorded per-launch costs (eager, CUDA graph);
* ``time_stream`` is the one synthesized part: arrays far beyond the L2 move at the recorded
  rates (copy: the 1 GiB copy of ``peaks``; read: ``sum_fp32``; triad: ``add_fp32``), working
  sets within half the L2 at ``l2_rate`` (the datasheet preset's l2 figure, itself a
  gpu-benches measurement), log-linear between, plus the recorded tiny-kernel time
  (``add_tiny``) per kernel. The reference has no working-set sweep to replay.

A virtual clock (``now``) advances by what each call would have taken on the GPU (warm-ups
and runs) plus ``setup_s`` per call, so that time budgets can be checked.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from workbench.measure.gpu_backend import DeviceInfo, Unavailable
from workbench.measure.gpu_suite import SUITE

DATA = Path(__file__).resolve().parents[1] / "calibration" / "gpu-measurements"
MIB = 1024**2
GIB = 1024**3
#: the L2 size PyTorch reports on a GH100 (H100 SXM and H200): 50 MiB
L2_BYTES = 50 * MIB
TRAFFIC = {"copy": 2, "read": 1, "triad": 3}
ARRAYS = {"copy": 2, "read": 1, "triad": 3}


class LibraryVersion(str):
    """A version string of a str subclass, as ``torch.__version__`` (a ``TorchVersion``) is:
    YAML's safe dumper refuses such objects unless they are made plain strings."""


def reference(gpu: str) -> dict:
    return json.loads((DATA / f"{gpu}.json").read_text(encoding="utf-8"))


def suite_ops() -> list[tuple[str, str, dict]]:
    """(id, kind, parameters) of the 36 measured operations."""
    return [(oid, kind, params) for oid, (kind, params) in SUITE.items()]


def fastest(entry: dict) -> dict:
    """The fastest backend's record of an operation (attention has several)."""
    return min((v for v in entry.values() if isinstance(v, dict) and "median_s" in v),
               key=lambda v: v["median_s"])


def samples(record: dict, runs: int, scale: float = 1.0) -> list[float]:
    """``runs`` times with the record's fastest, median and slowest (median exact)."""
    lo, med, hi = record["min_s"] * scale, record["median_s"] * scale, record["max_s"] * scale
    if runs < 3:
        return [med] * runs
    return [lo] + [med] * (runs - 2) + [hi]


class ReplayGpu:
    """The fake device (see the module docstring)."""

    name = "replay"

    def __init__(self, gpu: str = "h100-sxm", *, l2_rate: float = 9.8e12, slow: float = 1.0,
                 setup_s: float = 0.05, l2_bytes: int = L2_BYTES) -> None:
        self.gpu = gpu
        self.data = reference(gpu)
        self.ops = suite_ops()
        self.l2_rate = l2_rate
        self.l2_bytes = l2_bytes
        self.slow = slow  # every time multiplied (a slower device, for budget tests)
        self.setup_s = setup_s
        self.now = 0.0
        self.calls: list[tuple] = []
        self.released = False
        env = self.data["env"]
        self.info = DeviceInfo(0, env["name"], "cuda", "NVIDIA", env["mem"], l2_bytes,
                               env["sms"], "9.0")

    # -- the protocol --------------------------------------------------------------------

    def clock(self) -> float:
        return self.now

    def versions(self) -> dict[str, str]:
        env = self.data["env"]
        return {"torch": LibraryVersion(env["torch"]), "cuda": env["cuda"], "replayed": f"{self.gpu}.json"}

    def devices(self) -> list[DeviceInfo]:
        return [self.info]

    def select(self, index: int) -> DeviceInfo:
        if index != 0:
            raise IndexError(index)
        return self.info

    def precisions(self) -> tuple[str, ...]:
        found = []
        for _oid, kind, p in self.ops:
            if kind == "gemm":
                found.append(self._precision(p))
        return tuple(dict.fromkeys(found))

    def _spend(self, times: list[float], warmup: int) -> list[float]:
        times = [t * self.slow for t in times]
        self.now += sum(times) + warmup * (times[len(times) // 2] if times else 0) + self.setup_s
        return times

    @staticmethod
    def _precision(p: dict) -> str:
        return "tf32" if p.get("compute") == "tf32" else p["dtype"]

    def time_gemm(self, precision, m, n, k, runs, warmup):
        self.calls.append(("gemm", precision, m, n, k))
        for oid, kind, p in self.ops:
            if (kind == "gemm" and p.get("batch", 1) == 1 and self._precision(p) == precision
                    and (p["m"], p["n"], p["k"]) == (m, n, k)):
                return self._spend(samples(fastest(self.data["ops"][oid]), runs), warmup)
        raise Unavailable(f"the {self.gpu} reference has no {precision} GEMM {m}×{n}×{k}")

    def hbm_rate(self, kernel: str) -> tuple[float, dict]:
        """The recorded rate far beyond the L2, and the record whose spread it takes."""
        ops = self.data["ops"]
        if kernel == "copy":
            return self.data["peaks"]["copy_1GiB_tbps_rw"] * 1e12, fastest(ops["copy_bf16"])
        if kernel == "read":
            rec = fastest(ops["sum_fp32"])
            return GIB / rec["median_s"], rec
        rec = fastest(ops["add_fp32"])
        return 3 * 128 * MIB * 4 / rec["median_s"], rec

    def stream_rate(self, kernel: str, footprint: float) -> float:
        hbm, _rec = self.hbm_rate(kernel)
        low, high = self.l2_bytes / 2, 2 * self.l2_bytes
        if footprint <= low:
            return self.l2_rate
        if footprint >= high:
            return hbm
        f = math.log(footprint / low) / math.log(high / low)
        return math.exp((1 - f) * math.log(self.l2_rate) + f * math.log(hbm))

    def kernel_alone(self) -> float:
        return fastest(self.data["ops"]["add_tiny"])["median_s"]

    def time_stream(self, kernel, array_bytes, runs, warmup, passes=1):
        self.calls.append(("stream", kernel, array_bytes, passes))
        _hbm, rec = self.hbm_rate(kernel)
        traffic = TRAFFIC[kernel] * array_bytes * passes
        t = self.kernel_alone() + traffic / self.stream_rate(kernel, ARRAYS[kernel] * array_bytes)
        return self._spend(samples(rec, runs, t / rec["median_s"]), warmup)

    def time_launch(self, mode, launches, runs):
        self.calls.append(("launch", mode))
        key = {"eager": "eager_add_wall_us", "graph": "graph_add_us"}[mode]
        per = self.data["launch"][key] * 1e-6
        self._spend([per * launches] * runs, 1)
        return [per * self.slow] * runs

    def time_kernel(self, kind, params, runs, warmup, flush=True):
        self.calls.append(("kernel", kind))
        for oid, k, p in self.ops:
            if k == kind and p == params:
                return self._spend(samples(fastest(self.data["ops"][oid]), runs), warmup)
        raise Unavailable(f"the {self.gpu} reference has no such {kind}")

    def release(self) -> None:
        self.released = True
