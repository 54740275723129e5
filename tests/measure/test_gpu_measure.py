"""The GPU measurement's backend-free parts, run on a device that replays the reference H100
SXM and H200 measurements (tests/fake_gpu.py; calibration/gpu-measurements/*.json).

Expected figures are derived here from the replayed JSON and the documented methods (2·n³
FLOPs over the median time, bytes read + written, the fit of calibration/fit.py), never
copied from the code's output."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S
from fake_gpu import GIB, L2_BYTES, MIB, ReplayGpu, fastest, reference, suite_ops

from workbench.io.presets import builtin_ids, get_preset
from workbench.io.user_presets import load_machine_file, save_machine
from workbench.measure import Cancelled, gpu_backend
from workbench.measure.gpu_runner import (
    GPU_PROFILES,
    comparison_rows,
    datasheet_for,
    l2_plateau,
    measure_gpu,
)
from workbench.measure.gpu_suite import QUICK, KernelTime, fit_calibration
from workbench.model.operations import Operation
from workbench.model.roofline import evaluate

REPO = Path(__file__).resolve().parents[2]
GPUS = ("h100-sxm", "h200")


def _replay(gpu: str, **kw) -> ReplayGpu:
    return ReplayGpu(gpu, l2_rate=get_preset(gpu).memory["l2"], **kw)


def _measure(gpu: str, profile: str = "quick", **kw):
    fake = _replay(gpu)
    measured = measure_gpu(fake, 0, profile, datasheet=get_preset(gpu), datasheet_id=gpu,
                           clock=fake.clock, **kw)
    return fake, measured


@pytest.fixture(scope="module", params=GPUS)
def quick(request):
    return request.param, *_measure(request.param)


# -- the fit -------------------------------------------------------------------------------


@pytest.mark.parametrize("gpu", GPUS)
def test_the_fit_on_all_36_replayed_operations_gives_the_presets_calibration(gpu):
    """calibration/fit.py produced the presets' calibration blocks from the same data: the
    measurement's fit, given every operation and the datasheet preset, must agree."""
    data = reference(gpu)
    times = [KernelTime(oid, kind, params, fastest(data["ops"][oid])["median_s"])
             for oid, kind, params in suite_ops()]
    preset = get_preset(gpu)
    cal, details = fit_calibration(times, preset, launch_eager=data["launch"]["eager_add_wall_us"]
                                   * 1e-6, launch_graph=data["launch"]["graph_add_us"] * 1e-6)
    assert cal.efficiency == preset.calibration.efficiency
    assert cal.startup == pytest.approx(preset.calibration.startup)
    assert cal.launch_alone == pytest.approx(preset.calibration.launch_alone)
    assert cal.launch_eager == pytest.approx(preset.calibration.launch_eager)
    assert cal.launch_graph == pytest.approx(preset.calibration.launch_graph)
    assert details["launch_alone_from"] == ["add_tiny"]
    assert "g_8192" in details["classes"]["gemm"]


def test_a_fit_without_a_tiny_kernel_is_refused():
    data = reference("h100-sxm")
    times = [KernelTime("g_4096", "gemm", dict(m=4096, n=4096, k=4096, dtype="bf16"),
                        fastest(data["ops"]["g_4096"])["median_s"])]
    with pytest.raises(ValueError, match="tiny elementwise kernel"):
        fit_calibration(times, get_preset("h100-sxm"), launch_eager=7e-6, launch_graph=1e-6)


# -- the figures ---------------------------------------------------------------------------


def test_gemm_peaks_are_two_n_cubed_over_the_replayed_median(quick):
    gpu, _fake, measured = quick
    data = reference(gpu)
    hw, prov = measured.hardware, measured.provenance
    ops = {"bf16": "g_8192", "fp32": "g_fp32_8192", "tf32": "g_tf32_8192", "fp8": "g_fp8_8192"}
    for precision, oid in ops.items():
        rec = data["ops"][oid]["torch"]
        assert hw.compute[precision] == pytest.approx(2 * 8192**3 / rec["median_s"], rel=1e-12)
        g = prov["gemm"][precision]
        assert g["n"] == 8192
        assert g["spread"] == pytest.approx((rec["max_s"] - rec["min_s"]) / rec["median_s"],
                                            abs=1e-4)
        assert f"compute.{precision}" in hw.measured
    # the reference's own peak run (a separate 8192³ bf16 timing) agrees within 2 %
    assert hw.compute["bf16"] / 1e12 == pytest.approx(data["peaks"]["bf16_gemm_8192_tflops"],
                                                      rel=0.02)
    # bf16 at 4096 and 2048 was timed too, and is slower than at 8192
    curve = {row["n"]: row["rate"] for row in prov["gemm"]["bf16"]["curve"]}
    assert curve[4096] == pytest.approx(2 * 4096**3 / data["ops"]["g_4096"]["torch"]["median_s"])
    assert curve[2048] < curve[4096] < curve[8192]


def test_precisions_the_device_did_not_run_are_the_datasheets_and_not_marked(quick):
    gpu, _fake, measured = quick
    hw, sheet = measured.hardware, get_preset(gpu)
    for precision in ("fp16", "fp64"):  # the reference timed no fp16 or fp64 GEMM
        assert precision not in measured.provenance["gemm"]
        assert hw.compute[precision] == sheet.compute[precision]
        assert f"compute.{precision}" not in hw.measured
    assert any("not measured, taken from the" in n and "compute.fp16" in n
               for n in measured.provenance["notes"])


def test_memory_roof_counts_bytes_read_and_written_beyond_the_l2(quick):
    gpu, _fake, measured = quick
    data = reference(gpu)
    stream = measured.provenance["stream"]
    array = stream["copy"]["array_bytes"]
    assert array >= 8 * L2_BYTES  # far beyond the L2
    tiny = fastest(data["ops"]["add_tiny"])["median_s"]
    copy_rate = data["peaks"]["copy_1GiB_tbps_rw"] * 1e12
    expected_copy = 2 * array / (tiny + 2 * array / copy_rate)
    assert stream["copy"]["rate"] == pytest.approx(expected_copy, rel=1e-9)
    assert stream["copy"]["rate"] == pytest.approx(copy_rate, rel=0.02)
    read_rate = GIB / fastest(data["ops"]["sum_fp32"])["median_s"]
    assert stream["read"]["rate"] == pytest.approx(array / (tiny + array / read_rate), rel=1e-9)
    assert stream["read"]["rate"] == pytest.approx(read_rate, rel=0.03)
    triad_rate = 3 * 128 * MIB * 4 / fastest(data["ops"]["add_fp32"])["median_s"]
    assert stream["triad"]["rate"] == pytest.approx(3 * array / (tiny + 3 * array / triad_rate),
                                                    rel=1e-9)
    assert stream["triad"]["rate"] == pytest.approx(triad_rate, rel=0.03)
    hw = measured.hardware
    assert hw.main_memory == get_preset(gpu).main_memory == "hbm"
    best = max(stream.values(), key=lambda s: s["rate"])
    assert hw.memory["hbm"] == best["rate"]
    assert measured.provenance["roof_kernel"] in ("copy", "read", "triad")


def test_the_l2_plateau_is_found_from_one_mib_and_ends_before_the_l2_size(quick):
    gpu, _fake, measured = quick
    l2_rate = get_preset(gpu).memory["l2"]
    level = measured.provenance["levels"]["l2"]
    sweep = measured.provenance["l2_sweep"]
    assert sweep[0]["working_set"] == MIB
    assert sweep[-1]["working_set"] >= 4 * L2_BYTES
    assert level["from"] == MIB and level["to"] <= 0.75 * L2_BYTES
    assert level["points"] >= 4
    # each read moved ≥ 1 GiB, so the replayed tiny-kernel time (≈ 4 µs) costs under 4 %
    assert measured.hardware.memory["l2"] == pytest.approx(l2_rate, rel=0.04)
    assert measured.hardware.memory["l2"] < l2_rate
    beyond = measured.provenance["levels"]["beyond_l2"]
    read_rate = GIB / fastest(reference(gpu)["ops"]["sum_fp32"])["median_s"]
    assert beyond["rate"] == pytest.approx(read_rate, rel=0.03)
    assert beyond["from"] >= 2 * L2_BYTES
    assert "memory.l2" in measured.hardware.measured


def test_launch_costs_are_the_replayed_ones(quick):
    gpu, _fake, measured = quick
    launch = reference(gpu)["launch"]
    hw = measured.hardware
    assert hw.launch_overhead == pytest.approx(launch["eager_add_wall_us"] * 1e-6)
    assert "launch_overhead" in hw.measured
    assert hw.calibration.launch_eager == pytest.approx(launch["eager_add_wall_us"] * 1e-6,
                                                        rel=0.005)
    assert hw.calibration.launch_graph == pytest.approx(launch["graph_add_us"] * 1e-6,
                                                        rel=0.005)


def test_fitted_efficiencies_predict_the_suite_times_they_came_from(quick):
    """Quick runs one operation per class: the calibrated prediction of that operation on the
    measured machine must give its replayed time back (the fit's definition), to the 3
    digits the figures are rounded to."""
    gpu, _fake, measured = quick
    data = reference(gpu)
    hw = measured.hardware.copy()
    hw.prediction, hw.launches = "calibrated", "kernel"
    by_id = {oid: (kind, params) for oid, kind, params in suite_ops()}
    checked = 0
    for oid in QUICK:
        kind, params = by_id[oid]
        r = evaluate(Operation(kind, dict(params), name=oid), hw)
        measured_s = fastest(data["ops"][oid])["median_s"]
        if oid in ("g_512", "softmax_small", "add_tiny") or r.t_lower_s >= 20e-6:
            assert r.t_predicted_s == pytest.approx(measured_s, rel=0.01), oid
            checked += 1
    assert checked == len(QUICK)
    assert set(hw.calibration.efficiency) == {"gemm", "attention", "attention_causal",
                                               "streaming", "decode_attention",
                                               "unfused_attention", "norm", "softmax"}
    assert all(0 < e <= 1 for e in hw.calibration.efficiency.values())


def test_the_comparison_with_the_datasheet(quick):
    gpu, _fake, measured = quick
    sheet = get_preset(gpu)
    rows = {r["figure"]: r for r in measured.provenance["comparison"]}
    hw = measured.hardware
    assert rows["bf16 peak"]["ratio"] == pytest.approx(hw.compute["bf16"] / sheet.compute["bf16"])
    assert 0.7 < rows["bf16 peak"]["ratio"] < 0.9  # large GEMMs 0.72–0.85 of the dense peak
    assert rows["hbm bandwidth"]["ratio"] == pytest.approx(hw.memory["hbm"] / sheet.memory["hbm"])
    assert 0.84 <= rows["hbm bandwidth"]["ratio"] <= 0.91  # the README's streaming range
    assert rows["launch (eager)"]["datasheet"] == sheet.launch_overhead
    assert rows["efficiency gemm"]["datasheet"] == sheet.calibration.efficiency["gemm"]
    # restated against the datasheet's bf16 roof: e × measured peak / datasheet peak
    assert rows["efficiency gemm"]["measured"] == pytest.approx(
        hw.calibration.efficiency["gemm"] * hw.compute["bf16"] / sheet.compute["bf16"])
    assert rows["efficiency norm"]["measured"] == pytest.approx(
        hw.calibration.efficiency["norm"] * hw.memory["hbm"] / sheet.memory["hbm"])
    assert "fp16 peak" not in rows  # not measured, so not compared
    assert f"bf16 {rows['bf16 peak']['ratio']:.2f}×" in hw.name
    assert comparison_rows(hw, sheet) == measured.provenance["comparison"]


def test_the_measured_preset_saves_and_reads_back_with_its_provenance(quick, tmp_path):
    gpu, _fake, measured = quick
    path = save_machine(measured.hardware, measured.provenance, tmp_path / "m.yaml")
    hw, prov = load_machine_file(path)
    assert hw.id.startswith(f"measured-{gpu}-") and hw.kind == "gpu"
    assert hw.compute == pytest.approx(measured.hardware.compute, rel=1e-12)
    assert hw.memory == pytest.approx(measured.hardware.memory, rel=1e-12)
    assert hw.calibration.efficiency == measured.hardware.calibration.efficiency
    assert "measured" in hw.calibration.source and "replay backend" in hw.calibration.source
    assert set(hw.measured) >= {"compute.bf16", "memory.hbm", "memory.l2", "launch_overhead"}
    for key in ("method", "date", "device", "versions", "gemm", "stream", "launch", "l2_sweep",
                "kernels", "comparison"):
        assert key in prov, key
    assert prov["versions"]["torch"] == reference(gpu)["env"]["torch"]
    first = hw.notes.splitlines()[0]  # the backend named once, then its library versions
    assert f"replay backend: torch {reference(gpu)['env']['torch']}, cuda " in first
    assert prov["device"]["name"] == reference(gpu)["env"]["name"]
    assert "median" in prov["method"] and "spread" in prov["method"]


# -- time, progress, cancel ----------------------------------------------------------------


@pytest.mark.parametrize(("profile", "limit"), [("quick", 30.0), ("full", 120.0)])
def test_each_mode_fits_its_time_on_the_replayed_h100(profile, limit):
    """The replayed device's clock adds up every warm-up and run at the H100's recorded
    times, plus 50 ms per call for allocating and filling the operands."""
    fake, measured = _measure("h100-sxm", profile)
    assert fake.now < limit
    assert measured.provenance["duration_s"] == pytest.approx(fake.now, abs=0.01)
    assert not [s for s in measured.provenance["skipped"] if "left out" in s]


def test_a_slow_device_keeps_to_the_budget_and_says_what_it_left_out():
    fake = _replay("h100-sxm", slow=400.0)  # a device 400 times slower
    measured = measure_gpu(fake, 0, "quick", datasheet=get_preset("h100-sxm"),
                           datasheet_id="h100-sxm", clock=fake.clock)
    skipped = measured.provenance["skipped"]
    assert any("left out" in s for s in skipped)
    assert "bf16" in measured.hardware.compute and "copy" in measured.provenance["stream"]
    # bounded: the budget, plus at most the stage running when it ran out
    assert fake.now < 2 * GPU_PROFILES["quick"].budget_s


def test_progress_rises_to_the_end_with_an_estimate():
    seen = []
    _measure("h200", progress=seen.append)
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert all(p.remaining_s >= 0 for p in seen)
    stages = " ".join(p.stage for p in seen)
    for word in ("GEMM bf16", "bandwidth: copy", "launch", "L2 sweep", "kernel suite"):
        assert word in stages


def test_cancel_stops_at_once():
    fake = _replay("h100-sxm")
    asked = []

    def cancelled():
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(Cancelled):
        measure_gpu(fake, 0, "quick", cancelled=cancelled, clock=fake.clock)
    assert len(fake.calls) <= 3


# -- plateaus on made-up curves ------------------------------------------------------------


def test_plateau_finder_on_a_launch_bound_rise_an_l2_plateau_and_a_fall():
    l2 = 40 * MIB
    sizes = [MIB * 2**i for i in range(10)]  # 1 MiB … 512 MiB

    def rate(ws):
        if ws <= l2 / 2:
            return 6e12
        return 6e12 if ws < l2 else 2e12

    rates = [rate(ws) for ws in sizes]
    rates[0] = 3e12  # the smallest set is launch-bound
    cache, beyond, notes = l2_plateau(sizes, rates, l2)
    assert cache["rate"] == 6e12 and cache["from"] == 2 * MIB and cache["to"] == 16 * MIB
    assert beyond["rate"] == 2e12 and beyond["from"] >= 2 * l2
    assert notes == []


def test_no_l2_plateau_when_the_cache_is_no_faster():
    sizes = [MIB * 2**i for i in range(10)]
    cache, beyond, notes = l2_plateau(sizes, [2e12] * 10, 40 * MIB)
    assert cache is None and beyond["rate"] == 2e12
    assert any("no L2 plateau" in n for n in notes)


def test_plateaus_without_a_reported_l2_size_are_named_by_order():
    sizes = [MIB * 2**i for i in range(10)]
    rates = [7e12] * 5 + [1.5e12] * 5
    cache, beyond, _notes = l2_plateau(sizes, rates, 0)
    assert cache["rate"] == 7e12 and beyond["rate"] == 1.5e12


# -- naming and loading --------------------------------------------------------------------


@pytest.mark.parametrize(("name", "preset"), [
    ("NVIDIA H100 80GB HBM3", "h100-sxm"), ("NVIDIA H200", "h200"),
    ("NVIDIA H100 PCIe", "h100-pcie"), ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb"), ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("NVIDIA L4", "l4"), ("NVIDIA L40S", "l40s"), ("AMD Instinct MI300X", "mi300x"),
    ("Apple M4 Max GPU", "apple-m4-max"), ("NVIDIA GeForce GTX 1080", None),
])
def test_a_device_name_finds_its_datasheet_preset(name, preset):
    assert datasheet_for(name, builtin_ids()) == preset
    if preset:
        assert preset in builtin_ids()


def test_without_a_gpu_library_load_backend_says_what_to_install(monkeypatch):
    monkeypatch.setattr(gpu_backend, "_installed", lambda module: False)
    for device in ("cuda", "mps"):
        with pytest.raises(gpu_backend.BackendMissing, match=r'pip install "\.\[gpu\]"'):
            gpu_backend.load_backend(device)
    assert gpu_backend.list_gpus() == []
    with pytest.raises(ValueError, match="unknown GPU device"):
        gpu_backend.load_backend("tpu")


def test_the_replay_device_is_a_gpu_backend():
    assert isinstance(_replay("h200"), gpu_backend.GpuBackend)


def test_measuring_imports_no_gpu_library_until_asked():
    code = ("import sys, workbench.cli.measure, workbench.measure.gpu_runner, "
            "workbench.measure.gpu_backend; "
            "print(sorted(m for m in ('torch', 'cupy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=HANG_GUARD_S)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_timings_are_medians_with_their_spread():
    from workbench.measure.gpu_runner import timing

    t = timing([3.0, 1.0, 2.0, 10.0, 2.0], 20.0)
    assert t.median == 2.0 and t.rate == 10.0
    assert t.spread == pytest.approx((10.0 - 1.0) / 2.0)
    with pytest.raises(ValueError):
        timing([0.0, math.nan], 1.0)


@pytest.mark.parametrize("gpu", GPUS)
def test_the_full_runs_efficiencies_agree_with_the_presets_calibration(gpu):
    """The presets' calibration came from all 36 reference operations against the datasheet
    roofs; the full run fits 23 of the same against its measured roofs. Restated against the
    datasheet's roofs, every class agrees within 10 %, and a class fitted from the very same
    operations (attention, naive attention, softmax: one or two each, all in both) within
    1 %."""
    _fake, measured = _measure(gpu, "full")
    sheet = get_preset(gpu)
    rows = {r["figure"]: r for r in measured.provenance["comparison"]}
    for cls, theirs in sheet.calibration.efficiency.items():
        row = rows[f"efficiency {cls}"]
        assert row["datasheet"] == theirs
        assert row["ratio"] == pytest.approx(1.0, abs=0.10), cls
    for cls in ("attention", "unfused_attention", "softmax"):
        assert rows[f"efficiency {cls}"]["ratio"] == pytest.approx(1.0, abs=0.01), cls


@pytest.mark.parametrize("gpu", ["h100-sxm", "h200"])
def test_the_suite_describes_every_measured_operation_and_model_case(gpu):
    """The product's own description of the reference measurements (gpu_suite.SUITE and
    MODEL_CASES) names exactly the operations and whole-model cases the data holds, so the
    fit, the example session and the replayed GPU read every record and invent none."""
    from workbench.measure.gpu_suite import MODEL_CASES, SUITE

    data = reference(gpu)
    assert list(SUITE) == list(data["ops"])  # 36, in the order they were measured
    assert len(SUITE) == 36
    assert set(MODEL_CASES) == set(data["lean"]) == set(data["models"])
    # a case's id spells its phase and batch: llama8b_<phase>_b<batch>
    for case, (phase, batch, length) in MODEL_CASES.items():
        assert case == f"llama8b_{phase}_b{batch}" and length == 2048
