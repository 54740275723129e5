"""Fit the calibrated prediction's figures of a GPU from its measurements, and judge them.

    python calibration/fit.py              # the figures of every measured GPU, as YAML
    python calibration/fit.py --check      # and each operation's and model's measured/predicted

Run from the repository root. The measurements are in calibration/gpu-measurements/
(measured 2026-11-26, PyTorch 2.11.0+cu130, CUDA 13.0, driver 580.159; see its PROVENANCE.md).
The fit is a few medians, in this order, so that a refit gives the same numbers:

1. ``launch_alone``: a tiny elementwise kernel timed alone, less its roofline time (T_lower);
   ``startup`` of matrix and row-wise kernels: the same for their tiny kernels, less
   ``launch_alone``. ``launch_eager`` and ``launch_graph``: the suite's launch timings.
2. the efficiency of each kernel class (``workbench.model.prediction.CLASSES``): the median,
   over the class's operations with T_lower ≥ 20 µs, of the binding roof's time (T_math or
   T_mem) over the measured time less the fixed costs. The class on the compute roof is
   used when T_math ≥ T_mem, the class on the bandwidth roof otherwise.
3. ``sustained``: with the figures of 1 and 2, the whole-model prefill cases (CUDA graph)
   give the fraction of the compute roof that compute-bound kernels keep in a long run
   (median over the cases).

No figure belongs to one operation's name or shape: each comes from a class of kernels.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "gpu-measurements"
sys.path.insert(0, str(HERE.parent))

from workbench.io.model_configs import read_model_config  # noqa: E402
from workbench.io.presets import get_preset  # noqa: E402
from workbench.measure.gpu_suite import MODEL_CASES, SUITE  # noqa: E402
from workbench.model.llm.architecture import Setup, layer_steps  # noqa: E402
from workbench.model.llm.results import model_result  # noqa: E402
from workbench.model.operations import Operation  # noqa: E402
from workbench.model.prediction import Calibration, classify  # noqa: E402
from workbench.model.roofline import evaluate  # noqa: E402

GPUS = ("h100-sxm", "h200")
SOURCE = ("measured 2026-11-26, PyTorch 2.11.0+cu130, CUDA 13.0, driver 580.159: "
          "calibration/fit.py on calibration/gpu-measurements/{file}")
BIG = 20e-6  # operations this long (T_lower) give efficiencies
TINY = 1e-6  # operations this short give fixed costs


def measurements(gpu: str) -> dict:
    return json.loads((DATA / f"{gpu}.json").read_text(encoding="utf-8"))


def measured_time(entry: dict) -> float:
    """The fastest backend's median (attention has one entry per backend)."""
    return min(v["median_s"] for v in entry.values() if isinstance(v, dict) and "median_s" in v)


def bare(gpu: str):
    """The preset with the pure roofline: no derating, no launch floor."""
    hw = get_preset(gpu)
    hw.efficiency = hw.launch_overhead = None
    hw.prediction, hw.launches, hw.calibration = "derated", "kernel", None
    return hw


def operations(gpu: str) -> list[tuple[str, Operation, float]]:
    data = measurements(gpu)
    return [(oid, Operation(kind, dict(params), name=oid), measured_time(data["ops"][oid]))
            for oid, (kind, params) in SUITE.items()]


def _round(value: float, digits: int = 3) -> float:
    return float(f"{value:.{digits}g}")


def fit(gpu: str) -> Calibration:
    data = measurements(gpu)
    hw = bare(gpu)
    rows = []
    for _oid, op, t in operations(gpu):
        kc = classify(op.kind, op.params)
        rows.append((kc, evaluate(op, hw), t))

    def tiny(startup):
        return statistics.median(t - r.t_lower_s for kc, r, t in rows
                                 if kc.startup == startup and r.t_lower_s < TINY)

    launch_alone = _round(tiny(None))
    startup = {unit: _round(tiny(unit) - launch_alone) for unit in ("matrix", "rowwise")}
    samples: dict[str, list[float]] = {}
    for kc, r, t in rows:
        if r.t_lower_s < BIG:
            continue
        work = t - r.kernels * (launch_alone + (startup[kc.startup] if kc.startup else 0.0))
        if kc.math is not None and r.t_math_s >= r.t_mem_s:
            samples.setdefault(kc.math, []).append(r.t_math_s / work)
        else:
            samples.setdefault(kc.memory, []).append(r.t_mem_s / work)
    efficiency = {c: _round(statistics.median(v)) for c, v in sorted(samples.items())}
    cal = Calibration(efficiency, startup, launch_alone=launch_alone,
                      launch_eager=_round(data["launch"]["eager_add_wall_us"] * 1e-6),
                      launch_graph=_round(data["launch"]["graph_add_us"] * 1e-6),
                      sustained=1.0, source=SOURCE.format(file=f"{gpu}.json"))
    fractions = []
    for mid, (phase, batch, length) in MODEL_CASES.items():
        if phase != "prefill":
            continue
        machine = calibrated_machine(gpu, cal, "graph")
        compute = rest = 0.0
        for step in layer_steps(ARCH(), setup(phase, batch, length)):
            r = evaluate(step.operation, machine)
            if r.calibrated is not None and r.bound == "compute":
                compute += r.t_work_s * step.count
                rest += (r.t_predicted_s - r.t_work_s) * step.count
            else:
                rest += r.t_predicted_s * step.count
        fractions.append(compute / (data["lean"][mid]["graph"]["median_s"] - rest))
    return Calibration(efficiency, startup, launch_alone=cal.launch_alone,
                       launch_eager=cal.launch_eager, launch_graph=cal.launch_graph,
                       sustained=_round(min(1.0, statistics.median(fractions))),
                       source=cal.source)


def ARCH():  # noqa: N802 - the model of the whole-model cases
    return read_model_config(DATA / "Llama-3.1-8B.json")


def setup(phase: str, batch: int, length: int) -> Setup:
    if phase == "prefill":
        return Setup(phase=phase, batch=batch, prompt_len=length)
    return Setup(phase=phase, batch=batch, kv_len=length)


def calibrated_machine(gpu: str, calibration: Calibration | None, launches: str):
    hw = get_preset(gpu)
    if calibration is not None:
        hw.calibration = calibration
    hw.prediction, hw.launches = "calibrated", launches
    return hw


def judge_operations(gpu: str, calibration: Calibration | None = None
                     ) -> list[tuple[str, float, float, float]]:
    """(operation, measured s, T_predicted s, T_lower s) for each operation of the suite,
    each kernel timed alone (``launches: kernel``), on the preset's figures unless given."""
    hw = calibrated_machine(gpu, calibration, "kernel")
    out = []
    for oid, op, t in operations(gpu):
        r = evaluate(op, hw)
        out.append((oid, t, r.t_predicted_s, r.t_lower_s))
    return out


def judge_models(gpu: str, calibration: Calibration | None = None
                 ) -> list[tuple[str, float, float]]:
    """(case, measured s, predicted s) for the whole-model cases, lean and replayed from a
    CUDA graph (``launches: graph``)."""
    data = measurements(gpu)
    hw = calibrated_machine(gpu, calibration, "graph")
    out = []
    for mid, (phase, batch, length) in MODEL_CASES.items():
        result = model_result(ARCH(), setup(phase, batch, length), hw)
        out.append((mid, data["lean"][mid]["graph"]["median_s"], result.t_predicted_s))
    return out


def as_yaml(cal: Calibration) -> str:
    lines = ["calibration:", f"  source: {json.dumps(cal.source)}", "  efficiency:"]
    lines += [f"    {k}: {v}" for k, v in cal.efficiency.items()]
    lines.append("  startup:")
    lines += [f"    {k}: {v * 1e6:.3g} us" for k, v in cal.startup.items()]
    for key in ("launch_alone", "launch_eager", "launch_graph"):
        lines.append(f"  {key}: {getattr(cal, key) * 1e6:.3g} us")
    lines.append(f"  sustained: {cal.sustained}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    for gpu in GPUS:
        cal = fit(gpu)
        print(f"# {gpu}\n{as_yaml(cal)}")
        if "--check" in argv:
            ops = judge_operations(gpu, cal)
            inside = sum(abs(t / p - 1) <= 0.20 for _o, t, p, _l in ops)
            print(f"# operations within ±20 %: {inside} of {len(ops)}; T_lower above the "
                  f"measured time: {sum(lo > t for _o, t, _p, lo in ops)}")
            for oid, t, p, _lo in ops:
                print(f"#   {oid:18s} measured / predicted {t / p:.3f}")
            for mid, t, p in judge_models(gpu, cal):
                print(f"#   {mid:22s} measured / predicted {t / p:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
