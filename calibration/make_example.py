"""Write workbench/examples/real_kernels_h100_h200.yaml: the 36 measured operations on an
H100 SXM and an H200 SXM with their measured points, calibrated prediction, kernels timed
alone (as they were measured).

    python calibration/make_example.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from fit import GPUS, measured_time, measurements  # noqa: E402

from workbench.io.presets import get_preset  # noqa: E402
from workbench.io.sessions import dumps_session  # noqa: E402
from workbench.measure.gpu_suite import SUITE  # noqa: E402
from workbench.model.measured import Measurement  # noqa: E402
from workbench.model.operations import Operation  # noqa: E402
from workbench.model.session import HardwareEntry, OperationEntry, Session  # noqa: E402

#: A copy does no FLOPs: no point on a log-log chart (it is in the fit and its test).
LEFT_OUT = ("copy_bf16",)
OUT = HERE.parent / "workbench" / "examples" / "real_kernels_h100_h200.yaml"
CITE = "measured 2026-11-26, PyTorch 2.11.0+cu130, CUDA 13.0, driver 580.159"
NOTES = f"""\
35 of the 36 measured operations of calibration/gpu-measurements/ (all but copy_bf16, which
does no FLOPs and so has no point on the chart) on an H100 SXM and an H200 SXM,
each with its real kernel time attached ({CITE}; CUDA events around one call after an L2
flush, median of 20; attention: the fastest backend). The session predicts with the
calibrated model, kernels timed alone as they were measured: every prediction lands within
±20 % of its measurement and no kernel ran faster than T_lower. The misses of a single 0.78
derating are what the classes explain: PyTorch's softmax reaches 0.27-0.39 of its bandwidth
roof (several passes over each row), causal FlashAttention 0.56 of the bf16 peak (the
diagonal tiles are computed in full), norms 0.66-0.72, and small kernels cost a few
microseconds whatever their bytes. Switch prediction to derated to see the misses."""


def backend(entry: dict) -> str:
    best = measured_time(entry)
    return next(k for k, v in entry.items() if isinstance(v, dict) and v.get("median_s") == best)


def main() -> int:
    session = Session(title="Real kernels on an H100 and an H200 — predicted vs measured",
                      notes=NOTES)
    for gpu in GPUS:
        hw = get_preset(gpu)
        hw.prediction, hw.launches = "calibrated", "kernel"
        session.hardware.append(HardwareEntry(hw, preset=gpu))
    ops = [(oid, kind, params) for oid, (kind, params) in SUITE.items() if oid not in LEFT_OUT]
    for oid, kind, params in ops:
        session.operations.append(OperationEntry(Operation(kind, dict(params), oid)))
    session.view.legend = True  # the machines' lines and markers, and the key of any tags
    for gpu in GPUS:
        data = measurements(gpu)
        for oid, _kind, _params in ops:
            entry = data["ops"][oid]
            which = backend(entry)
            source = CITE + ("" if which == "torch" else f", {which} attention")
            session.measurements.append(Measurement(
                name=f"{oid} ({gpu})", operation=oid, hardware=gpu,
                time_s=measured_time(entry), source=source))
    OUT.write_text(dumps_session(session), encoding="utf-8")
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
