"""The chart as data (no Qt): roof styles, machine names, the range the view covers, sweep
paths and measured marks on every machine that can draw them."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.model.analysis import evaluate_session
from workbench.model.chart import scene as scene_module
from workbench.model.chart.machine_texts import short_name
from workbench.model.chart.overlay_data import measured_marks, sweep_paths
from workbench.model.chart.scene import build_scene, overlay_extent
from workbench.model.llm.architecture import Setup, expand
from workbench.model.llm.session import ModelEntry, expand_entries
from workbench.model.measured import Measurement
from workbench.model.operations import Operation
from workbench.model.roofline import evaluate, sweep
from workbench.model.session import HardwareEntry, OperationEntry, Session
from workbench.model.sweeps import Sweep


def _gemm(dtype: str = "fp16", name: str = "mm") -> Operation:
    return Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": dtype}, name)




def _scene(ops: list[Operation], **view):
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    session.operations = [OperationEntry(op) for op in ops]
    for key, value in view.items():
        setattr(session.view, key, value)
    return build_scene(session, evaluate_session(session, visible_only=True))


def test_roof_styles_memory_solid_and_only_the_top_compute_roof_emphasised():
    ops = [Operation("custom", {"flops": 1e12, "bytes": 1e9, "precision": p}, p)
           for p in ("fp16", "fp32")]
    scene = _scene(ops)
    (memory,) = [r for r in scene.roofs if r.kind == "memory"]
    assert memory.line == "solid" and memory.emphasis == "main"
    assert memory.label == "hbm 3.35 TB/s"  # the H100 SXM's HBM3: 3.35 TB/s
    compute = [r for r in scene.roofs if r.kind == "compute"]
    assert len(compute) == 2
    assert [r.emphasis for r in compute] == ["main", "minor"]
    assert compute[0].label.startswith("H100 SXM5 80GB: ")
    assert not compute[1].label.startswith("H100")


def test_a_practical_roof_says_its_percentage():
    scene = _scene([_gemm()], derated=True)
    (practical,) = [r for r in scene.roofs if r.kind == "compute" and r.derated]
    assert practical.label.startswith("practical 78 %: ")


def test_a_machines_short_name_drops_vendor_cloud_and_remark():
    assert short_name(get_preset("tpu-v5e")) == "TPU v5e"
    assert short_name(get_preset("h100-sxm")) == "H100 SXM5 80GB"


def test_the_data_range_covers_sweeps_and_measured_points_with_their_predictions():
    sweep = SimpleNamespace(path_xs=(1.0, 2.0), path_ys=(10.0, 20.0))
    mark = SimpleNamespace(x=3.0, y=30.0, px=4.0, py=40.0, level_xs=(("l2", 5.0, ""),))
    assert sorted(overlay_extent([sweep], [mark])) == [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0),
                                                        (4.0, 40.0), (5.0, 30.0)]



def test_a_short_list_sweep_is_described_in_full():
    assert Sweep("m", [1, 2, 4]).describe() == "m ∈ {1, 2, 4}"
    assert Sweep("m", list(range(1, 9))).describe() == "m ∈ {1, 2, 3, 4, 5, 6, …}"


def test_a_sweep_is_drawn_on_every_machine_that_can_run_it():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset(p), preset=p) for p in ("tpu-v5e", "h100-sxm")]
    entry = OperationEntry(Operation("gemm", {"m": 96, "n": 1000, "k": 3000, "dtype": "fp64"},
                                     "fp64 mm"))
    entry.sweep = Sweep("m", [96, 192, 384])
    session.operations = [entry]
    machines = [SimpleNamespace(hw_id=-1, name="gone", marker="o", style_index=0)] + [
        SimpleNamespace(hw_id=h.id, name=h.hardware.label, marker="o", style_index=i)
        for i, h in enumerate(session.hardware)]
    paths, _ = sweep_paths(session, entry, machines, "#0072B2")
    assert [p.hw_id for p in paths] == [session.hardware[1].id]  # the TPU has no fp64
    assert len(paths[0].path_xs) >= 3


def test_a_measurement_that_cannot_be_judged_leaves_the_others_drawn():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    session.measurements = [
        Measurement("lost", hardware="no such machine", time_s=1e-3, flops=1e9, bytes=1e6),
        Measurement("fine", time_s=1e-3, flops=1e9, bytes=1e6)]
    marks, notes = measured_marks(session, [session.hardware[0].id])
    assert [m.name for m in marks] == ["fine"]
    assert len(notes) == 1 and notes[0].startswith("measurement lost")


def _ops(config: str, setup: Setup, view: str = "layers"):
    return expand(read_model_config(config), setup, view=view)


def test_gemmas_post_norms_and_residual_adds_are_counted():
    setup = Setup("decode", batch=4)
    ops = {op.name: (step, op) for step, op in _ops("Gemma-2-9B", setup)}
    hidden, tokens = 3584, 4
    for block in ("attention", "FFN"):
        (step, post), (_, pre) = next((s, o) for n, (s, o) in ops.items()
                                  if n.startswith(f"post-{block} norm")), \
            next((s, o) for n, (s, o) in ops.items() if n.startswith(f"{block} norm"))
        assert post.counts().bytes == pre.counts().bytes > 0
        step, add = next((s, o) for n, (s, o) in ops.items()
                     if n.startswith(f"residual add ({block})"))
        counts = add.counts()
        assert counts.flops == step.count * tokens * hidden  # one addition per element
        assert counts.bytes == step.count * 3 * tokens * hidden * 2  # two bf16 reads, a write


def test_mla_absorbs_the_query_for_every_head():
    setup = Setup("decode", batch=2)
    step, op = next((s, o) for s, o in _ops("DeepSeek-V2-Lite", setup)
                if o.name.startswith("Q absorb"))
    heads, kv_lora_rank, nope_dim, tokens = 16, 512, 128, 2  # DeepSeek-V2-Lite
    assert op.counts().flops == step.count * 2 * heads * tokens * kv_lora_rank * nope_dim


def test_exchanges_and_stage_sends_stay_off_the_chart_but_all_reduces_are_on_it():
    for setup in (Setup("decode", batch=8, tp=1, ep=2), Setup("decode", batch=8, tp=2, pp=2)):
        model = ModelEntry("Mixtral-8x7B", read_model_config("Mixtral-8x7B"), setup)
        shown = {e.operation.name.split(": ", 1)[1].split(" (")[0]: e.visible
                 for e in expand_entries(model) if e.operation.kind == "all_reduce"}
        if setup.ep > 1:
            assert shown == {"dispatch": False, "combine": False}
        else:
            assert shown == {"all-reduce": True, "stage send": False,
                             "logits all-gather": False}



def test_the_chart_leaves_three_times_the_highest_roof_above_a_point_on_it():
    machine = SimpleNamespace(top_peak=8.5e14)
    point = SimpleNamespace(x=1000.0, y=8.5e14)  # compute-bound, on the roof
    _x, (_low, top) = scene_module._data_range([point], [], [machine])
    assert top == pytest.approx(3 * 8.5e14, rel=1e-12)


def test_the_chart_reaches_a_point_above_every_drawn_roof():
    machine = SimpleNamespace(top_peak=1e14)
    point = SimpleNamespace(x=1000.0, y=5e14)  # on a roof of a precision not drawn
    _x, (_low, top) = scene_module._data_range([point], [], [machine])
    assert top == pytest.approx(1.25 * 5e14, rel=1e-12)  # padded, never on the frame


def test_a_views_own_intensity_range_is_the_charts():
    scene = _scene([_gemm()], x_range=(0.5, 5000.0))
    assert scene.x_range == (0.5, 5000.0)


def test_a_measurement_of_zero_bytes_has_a_tooltip():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    session.operations = [OperationEntry(_gemm())]
    session.measurements = [Measurement("k", operation="mm", time_s=1e-3, bytes=0)]
    marks, notes = measured_marks(session, [session.hardware[0].id])
    assert notes == [] and len(marks) == 1
    assert "Measured: k" in marks[0].tooltip and "Intensity: measured" not in marks[0].tooltip


def test_a_precision_falling_back_says_which_peak_it_lacks():
    a100 = get_preset("a100-80gb")  # no fp8 on Ampere: fp8 work runs at the bf16 peak
    assert "(no fp8 peak on this machine;" in a100.ceiling("fp8", "matrix").note
    assert "(no fp8 vector peak on this machine;" in a100.ceiling("fp8", "vector").note


def test_an_unfused_chain_writes_its_last_step_to_the_named_output():
    op = Operation("elementwise", {"n": 1024, "dtype": "bf16", "input": "x", "output": "y",
                                   "steps": [{"op": "gelu"}, {"op": "add", "inputs": ["r"]}]})
    writes = [t.tensor for t in op.counts().byte_terms if t.kind == "write"]
    assert writes == ["t1", "y"]


def test_a_softmax_says_how_often_it_crosses_memory():
    op = Operation("softmax", {"rows": 1024, "cols": 1024, "dtype": "bf16"})
    assert any("read once and written once" in n for n in op.counts().notes)


def test_a_sweep_of_an_operation_past_two_to_the_63_flops_gives_float_arrays():
    # attention over a million positions: 4·b·h·q·k·d = 2.7·10²⁰ FLOPs, past int64; the KV
    # heads change only the bytes, so the FLOPs stay one whole number through the counting
    op = Operation("attention", {"batch": 4096, "heads": 128, "head_dim": 128,
                                 "query_len": 10**6, "kv_len": 10**6})
    out = sweep(op, get_preset("h100-sxm"), kv_heads=np.array([1.0, 8.0]))
    flops = 4 * 4096 * 128 * 10**6 * 10**6 * 128
    for key in ("intensity", "attainable_flops", "fraction_of_peak"):
        assert out[key].dtype == np.float64, key
    np.testing.assert_allclose(out["intensity"], flops / out["bytes"], rtol=1e-12)
    assert np.isfinite(out["attainable_flops"]).all()


def test_the_chart_range_without_machines_covers_the_points():
    point = SimpleNamespace(x=10.0, y=5e12)
    (x_lo, x_hi), (y_lo, y_hi) = scene_module._data_range([point], [], [])
    assert x_lo <= 10.0 / 1.25 and x_hi >= 10.0 * 1.25 and y_lo <= 4e12 and y_hi >= 6.25e12


def test_an_operation_that_moves_no_bytes_is_not_drawn():
    # no bytes: an infinite intensity, at the compute roof; a log chart has no place for it
    result = evaluate(Operation("custom", {"flops": 1e12, "bytes": 0.0, "precision": "bf16"},
                                "c"), get_preset("h100-sxm"))
    assert math.isinf(result.intensity) and result.attainable_flops > 0
    assert not scene_module._drawable(result)
    scene = _scene([Operation("custom", {"flops": 1e12, "bytes": 0.0, "precision": "bf16"},
                              "c")])
    assert scene.points == [] or all(math.isfinite(p.x) for p in scene.points)
