"""The kernel suite a GPU measurement times, and the fit of the calibrated prediction's
figures (kernel-class efficiencies, start-up and launch costs) from its times.

:data:`SUITE` holds the 36 operations of the reference measurements (calibration/
gpu-measurements/, measured on an H100 SXM and an H200 on 2026-11-26) by their ids, each as a
workbench kind and its parameters; :data:`QUICK` and :data:`FULL` are short selections that
cover every kernel class of :data:`workbench.model.prediction.CLASSES` and each start-up unit.
Each is timed the way the reference was: CUDA events around one call, after a 512 MiB write
that flushes the L2, median of the runs.

:func:`fit_calibration` is calibration/fit.py's method, steps 1 and 2 (step 3, the sustained
fraction, needs whole-model runs, which a measurement of the machine does not make):

1. ``launch_alone``: the median over tiny elementwise kernels (T_lower under 1 µs) of the
   measured time less T_lower; ``startup`` of matrix and row-wise kernels: the same for
   their tiny kernels, less ``launch_alone``;
2. each class's efficiency: the median, over the class's operations with T_lower ≥ 20 µs, of
   the binding roof's time (T_math when T_math ≥ T_mem and the class has a compute roof,
   else T_mem) over the measured time less the fixed costs.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from workbench.model.hardware import Hardware
from workbench.model.operations import Operation
from workbench.model.prediction import Calibration, classify
from workbench.model.roofline import evaluate
from workbench.records import record

__all__ = ["SUITE", "MODEL_CASES", "QUICK", "FULL", "BIG", "TINY", "KernelTime", "fit_calibration",
           "bare_machine"]

M = 1 << 20
BIG = 20e-6  # operations this long (T_lower) give efficiencies
TINY = 1e-6  # operations this short give fixed costs

#: id → (kind, parameters) of the 36 operations of the reference measurements, in their order
#: (the ids are the keys of ``ops`` in calibration/gpu-measurements/{h100-sxm,h200}.json)
SUITE: dict[str, tuple[str, dict[str, Any]]] = {
    # GEMMs, bf16 unless noted
    "g_8192": ("gemm", dict(m=8192, n=8192, k=8192, dtype="bf16")),
    "g_4096": ("gemm", dict(m=4096, n=4096, k=4096, dtype="bf16")),
    "g_2048": ("gemm", dict(m=2048, n=2048, k=2048, dtype="bf16")),
    "g_1024": ("gemm", dict(m=1024, n=1024, k=1024, dtype="bf16")),
    "g_512": ("gemm", dict(m=512, n=512, k=512, dtype="bf16")),
    "gemv_4096": ("gemm", dict(m=1, n=4096, k=4096, dtype="bf16")),
    **{f"ffn_m{m}": ("gemm", dict(m=m, n=14336, k=4096, dtype="bf16"))
       for m in (1, 16, 64, 256, 1024, 4096)},
    "lm_head_m1": ("gemm", dict(m=1, n=128256, k=4096, dtype="bf16")),
    "g_fp32_8192": ("gemm", dict(m=8192, n=8192, k=8192, dtype="fp32")),
    "g_tf32_8192": ("gemm", dict(m=8192, n=8192, k=8192, dtype="fp32", compute="tf32")),
    "g_fp8_8192": ("gemm", dict(m=8192, n=8192, k=8192, dtype="fp8", c_dtype="bf16")),
    "bmm_qk": ("gemm", dict(batch=32, m=4096, n=4096, k=128, dtype="bf16")),
    # attention, bf16, head_dim 128
    "fa_prefill_causal": ("attention", dict(implementation="flash", batch=1, heads=32,
                                            head_dim=128, query_len=4096, kv_len=4096,
                                            causal=True, dtype="bf16")),
    "fa_prefill_full": ("attention", dict(implementation="flash", batch=1, heads=32,
                                          head_dim=128, query_len=4096, kv_len=4096,
                                          causal=False, dtype="bf16")),
    "fa_prefill_b8": ("attention", dict(implementation="flash", batch=8, heads=32,
                                        head_dim=128, query_len=2048, kv_len=2048,
                                        causal=True, dtype="bf16")),
    "fa_decode_gqa": ("attention", dict(implementation="flash", batch=8, heads=32,
                                        kv_heads=8, head_dim=128, query_len=1, kv_len=8192,
                                        dtype="bf16")),
    "fa_decode_mha": ("attention", dict(implementation="flash", batch=8, heads=32,
                                        kv_heads=32, head_dim=128, query_len=1, kv_len=8192,
                                        dtype="bf16")),
    "fa_decode_b64": ("attention", dict(implementation="flash", batch=64, heads=32,
                                        kv_heads=8, head_dim=128, query_len=1, kv_len=4096,
                                        dtype="bf16")),
    "naive_prefill": ("attention", dict(implementation="naive", batch=1, heads=32,
                                        head_dim=128, query_len=4096, kv_len=4096,
                                        causal=False, dtype="bf16", score_dtype="bf16",
                                        score_passes=4)),
    # elementwise, norms, softmax, reduction
    "copy_bf16": ("elementwise", dict(n=256 * M, dtype="bf16", steps=[{"op": "copy"}])),
    "add_fp32": ("elementwise", dict(n=128 * M, dtype="fp32",
                                     steps=[{"op": "add", "inputs": ["r"]}])),
    "gelu_bf16": ("elementwise", dict(n=256 * M, dtype="bf16", steps=[{"op": "gelu"}])),
    "silu_bf16": ("elementwise", dict(n=256 * M, dtype="bf16", steps=[{"op": "silu"}])),
    **{f"chain_{'fused' if fused else 'unfused'}": (
        "elementwise", dict(n=64 * M, dtype="fp32", fused=fused,
                            steps=[{"op": "fma"}, {"op": "gelu"},
                                   {"op": "add", "inputs": ["r"]}]))
       for fused in (False, True)},
    "add_tiny": ("elementwise", dict(n=4096, dtype="fp32",
                                     steps=[{"op": "add", "inputs": ["r"]}])),
    "rmsnorm": ("norm", dict(variant="rmsnorm", rows=16384, hidden=4096, dtype="bf16")),
    "layernorm": ("norm", dict(variant="layernorm", rows=16384, hidden=4096, dtype="bf16")),
    "softmax_big": ("softmax", dict(rows=65536, cols=4096, dtype="bf16")),
    "softmax_small": ("softmax", dict(rows=32, cols=1024, dtype="bf16")),
    "sum_fp32": ("reduction", dict(op="sum", n=256 * M, dtype="fp32")),
}

#: the whole-model cases of the reference measurements (Llama-3.1-8B, calibration/
#: gpu-measurements/Llama-3.1-8B.json): id → (phase, batch, prompt length or KV length)
MODEL_CASES: dict[str, tuple[str, int, int]] = {
    "llama8b_prefill_b1": ("prefill", 1, 2048),
    "llama8b_prefill_b4": ("prefill", 4, 2048),
    "llama8b_decode_b1": ("decode", 1, 2048),
    "llama8b_decode_b16": ("decode", 16, 2048),
    "llama8b_decode_b64": ("decode", 64, 2048),
}

#: one operation per kernel class and start-up unit, the tiny ones (the fixed costs) first
QUICK = ("add_tiny", "g_512", "softmax_small", "g_4096", "fa_prefill_full",
         "fa_prefill_causal", "fa_decode_gqa", "naive_prefill", "rmsnorm", "softmax_big",
         "copy_bf16", "sum_fp32")
#: two or more per class where the reference has them
FULL = QUICK + ("g_8192", "ffn_m4096", "ffn_m1024", "lm_head_m1", "bmm_qk", "fa_prefill_b8",
                "fa_decode_mha", "layernorm", "add_fp32", "gelu_bf16", "silu_bf16")


@record(frozen=True)
class KernelTime:
    """One operation of the suite and its measured time (the median of its runs)."""

    id: str
    kind: str
    params: dict[str, Any]
    seconds: float


def bare_machine(hw: Hardware) -> Hardware:
    """The machine with the pure roofline: no derating, no launch floor, no calibration."""
    bare = hw.copy()
    bare.efficiency = bare.launch_overhead = None
    bare.prediction, bare.launches, bare.calibration = "derated", "kernel", None
    return bare


def _round(value: float, digits: int = 3) -> float:
    return float(f"{value:.{digits}g}")


def fit_calibration(times: Iterable[KernelTime], hw: Hardware, *, launch_eager: float,
                    launch_graph: float, sustained: float = 1.0,
                    source: str = "") -> tuple[Calibration, dict[str, Any]]:
    """The calibration of ``hw`` from the suite's times (see the module docstring), and the
    details of the fit (each class's samples, which operations gave the fixed costs)."""
    bare = bare_machine(hw)
    rows = []
    for kt in times:
        kc = classify(kt.kind, kt.params)
        if kc is None:
            continue
        rows.append((kt, kc, evaluate(Operation(kt.kind, dict(kt.params), name=kt.id), bare)))

    def tiny(startup):
        found = [(kt.id, kt.seconds - r.t_lower_s) for kt, kc, r in rows
                 if kc.startup == startup and r.t_lower_s < TINY]
        return found

    alone = tiny(None)
    if not alone:
        raise ValueError("the fit needs a tiny elementwise kernel (T_lower under 1 µs)")
    launch_alone = _round(statistics.median(v for _i, v in alone))
    startup: dict[str, float] = {}
    details: dict[str, Any] = {"launch_alone_from": [i for i, _v in alone], "startup_from": {},
                               "classes": {}}
    for unit in ("matrix", "rowwise"):
        found = tiny(unit)
        if found:
            startup[unit] = max(0.0, _round(statistics.median(v for _i, v in found)
                                            - launch_alone))
            details["startup_from"][unit] = [i for i, _v in found]
    samples: dict[str, list[tuple[str, float]]] = {}
    for kt, kc, r in rows:
        if r.t_lower_s < BIG:
            continue
        fixed = launch_alone + (startup.get(kc.startup, 0.0) if kc.startup else 0.0)
        work = kt.seconds - r.kernels * fixed
        if work <= 0:
            continue
        if kc.math is not None and r.t_math_s >= r.t_mem_s:
            samples.setdefault(kc.math, []).append((kt.id, r.t_math_s / work))
        else:
            samples.setdefault(kc.memory, []).append((kt.id, r.t_mem_s / work))
    efficiency = {c: _round(statistics.median(v for _i, v in s))
                  for c, s in sorted(samples.items())}
    details["classes"] = {c: {op: round(v, 4) for op, v in s} for c, s in sorted(samples.items())}
    cal = Calibration(efficiency, startup, launch_alone=launch_alone,
                      launch_eager=_round(launch_eager), launch_graph=_round(launch_graph),
                      sustained=sustained, source=source)
    return cal, details
