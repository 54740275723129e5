"""Engine behaviour that a mutation sample (docs/mutation.md) found no test for: each test
here fails on a mutant that survived the rest of the suite."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.io.model_configs import parse_model_config, read_model_config, shipped_configs
from workbench.io.presets import get_preset
from workbench.model.advisories import measured_advisories
from workbench.model.analysis import evaluate_session
from workbench.model.chart import overlays
from workbench.model.chart import scene as scene_module
from workbench.model.chart.layout import (
    Candidate,
    Occupancy,
    Placement,
    Request,
    TextLayout,
    clip_segment,
    corner_candidates,
    flat_candidates,
    free_corners,
    legend_corner,
    sloped_candidates,
    wrap_title,
)
from workbench.model.chart.overlays import measured_marks, pair_links, sweep_paths
from workbench.model.chart.scene import build_scene, overlay_extent, short_name, whose_texts
from workbench.model.comparison import across_machines
from workbench.model.dtypes import check_dtype
from workbench.model.llm.architecture import Setup, SetupError, expand, layer_steps
from workbench.model.llm.results import (
    RequestResult,
    decode_times,
    derivation,
    max_batch,
    memory_needed,
    model_result,
    model_totals,
    per_sequence_bytes,
)
from workbench.model.llm.session import ModelEntry, expand_entries, refresh_params
from workbench.model.measured import Measurement, judge
from workbench.model.measured_session import judge_session
from workbench.model.operations import Operation
from workbench.model.roofline import evaluate, sweep
from workbench.model.session import Comparison, HardwareEntry, OperationEntry, Session
from workbench.model.sweeps import Crossing, Sweep


def _gemm(dtype: str = "fp16", name: str = "mm") -> Operation:
    return Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": dtype}, name)


# ---------------------------------------------------------------------------------------------
# measured points

def test_measured_bytes_far_from_the_model_are_noted_as_a_ratio():
    op = _gemm()
    result = evaluate(op, get_preset("h100-sxm"))
    m = Measurement("k", operation="mm", time_s=1e-3, bytes=2 * result.bytes)
    notes = judge(m, result).notes
    # twice the model's bytes: the note gives the ratio to the ideal
    assert any("where 100.7 MB is the ideal: 2.00 ×" in n for n in notes), notes


def test_sizes_at_the_upper_limit_are_accepted():
    m = Measurement("k", time_s=1e9, flops=1e40, bytes=1e40)
    assert m.problems() == []


def test_an_achieved_rate_with_flops_gives_the_time():
    m = Measurement("k", achieved_flops=1e12, flops=1e9, bytes=1e6)
    assert m.problems() == []


def test_a_yes_no_value_is_not_a_time():
    m = Measurement("k", time_s=True, flops=1e9, bytes=1e6)
    assert [key for key, _ in m.problems()] == ["time_s"]


def test_a_standalone_measurement_is_predicted_under_its_own_name():
    m = Measurement("my kernel", time_s=1e-3, flops=1e9, bytes=1e6, precision="fp32")
    op = m.as_operation()
    assert op.name == "my kernel"
    assert op.counts().flops == 1e9


def test_a_measurement_skipped_on_a_machine_keeps_its_operation():
    s = Session()
    s.hardware = [HardwareEntry(get_preset("tpu-v5e"), preset="tpu-v5e")]
    s.operations = [OperationEntry(_gemm("fp64"))]
    s.measurements = [Measurement("k", operation="mm", time_s=1e-3)]
    (point,) = judge_session(s)
    assert point.judgement is None and point.problem
    assert point.operation is s.operations[0]


# ---------------------------------------------------------------------------------------------
# comparing machines, precisions

def test_one_operation_across_machines_fastest_first():
    s = Session()
    s.hardware = [HardwareEntry(get_preset(p), preset=p) for p in ("l4", "h100-sxm", "a100-80gb")]
    s.operations = [OperationEntry(_gemm()), OperationEntry(_gemm(name="other"))]
    pairs = evaluate_session(s)
    results = across_machines(pairs, s.operations[0].id)
    assert len(results) == 3
    times = [r.t_predicted_s for r in results]
    assert times == sorted(times)
    assert results[0].t_predicted_s < results[-1].t_predicted_s


@pytest.mark.parametrize("name", ["fp17", "", "BF16"])
def test_an_unknown_dtype_name_is_refused(name):
    with pytest.raises(ValueError, match="unknown dtype"):
        check_dtype(name)


def test_derating_efficiency_is_a_rule_of_thumb_unless_measured():
    hw = get_preset("h100-sxm")
    assert hw.figure_status("efficiency") == hw.figure_status("launch_overhead") != "specified"


# ---------------------------------------------------------------------------------------------
# whole models

def test_a_moe_router_is_held_whole_by_every_chip():
    arch = read_model_config("Mixtral-8x7B")
    hidden, layers, experts = 4096, 32, 8  # Mixtral 8x7B: two RMSNorms a layer and a final one
    norms = layers * 2 * hidden + hidden
    router = layers * hidden * experts
    assert arch.replicated_params() == norms + router


def test_an_unknown_view_is_refused_naming_the_field():
    with pytest.raises(SetupError) as err:
        expand(read_model_config("Llama-3.1-8B"), Setup("decode"), view="everything")
    assert err.value.field == "view"
    assert "everything" in err.value.message


def test_a_models_time_shares_run_from_the_largest():
    result = model_result(read_model_config("Llama-3.1-8B"), Setup("decode", batch=8),
                          get_preset("h100-sxm"))
    shares = list(result.share.values())
    assert len(shares) > 2
    assert shares == sorted(shares, reverse=True)
    assert sum(shares) == pytest.approx(1.0)


def test_a_models_result_as_data_says_whether_it_fits():
    arch = read_model_config("Llama-3.1-8B")
    small = model_result(arch, Setup("decode", batch=1), get_preset("h100-sxm"))
    assert small.as_dict("decode")["fits"] is True
    assert small.as_dict("decode")["tpot_s"] == small.t_predicted_s


# ---------------------------------------------------------------------------------------------
# the chart as data

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


# ---------------------------------------------------------------------------------------------
# overlays: sweeps and measured points

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
        (step, post), (_, pre) = [(s, o) for n, (s, o) in ops.items()
                                  if n.startswith(f"post-{block} norm")][0], \
            [(s, o) for n, (s, o) in ops.items() if n.startswith(f"{block} norm")][0]
        assert post.counts().bytes == pre.counts().bytes > 0
        step, add = [(s, o) for n, (s, o) in ops.items()
                     if n.startswith(f"residual add ({block})")][0]
        counts = add.counts()
        assert counts.flops == step.count * tokens * hidden  # one addition per element
        assert counts.bytes == step.count * 3 * tokens * hidden * 2  # two bf16 reads, a write


def test_mla_absorbs_the_query_for_every_head():
    setup = Setup("decode", batch=2)
    step, op = [(s, o) for s, o in _ops("DeepSeek-V2-Lite", setup)
                if o.name.startswith("Q absorb")][0]
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
            assert shown == {"all-reduce": True, "stage send": False}


# ---------------------------------------------------------------------------------------------
# text placing (pixels: y grows downwards)

def test_a_segment_is_clipped_to_the_rectangle_on_both_sides():
    assert clip_segment(-5.0, 5.0, 15.0, 5.0, (0.0, 0.0, 10.0, 10.0)) == (0.0, 5.0, 10.0, 5.0)
    assert clip_segment(5.0, 20.0, 5.0, -20.0, (0.0, 0.0, 10.0, 10.0)) == (5.0, 10.0, 5.0, 0.0)
    assert clip_segment(20.0, 20.0, 30.0, 30.0, (0.0, 0.0, 10.0, 10.0)) is None


def test_places_next_to_a_corner_point_go_round_it_then_farther():
    w, h = 20.0, 10.0
    places = [(c.left, c.top) for c in corner_candidates(100.0, 100.0, w, h)]
    assert places == [(105, 105), (75, 85), (75, 105), (105, 85),
                      (115, 115), (65, 75), (65, 115), (115, 75)]


def test_a_box_on_the_frames_edge_is_inside_it():
    occ = Occupancy((0.0, 0.0, 100.0, 50.0))
    assert occ.inside((0.0, 0.0, 100.0, 50.0))
    assert not occ.inside((-1.0, 0.0, 10.0, 10.0))


def test_a_title_that_fits_on_two_lines_is_not_broken_into_three():
    assert wrap_title(len, "aaaa bbbb cccc dddd", 10, lines=3) == ["aaaa bbbb", "cccc dddd"]
    # three lines of 9 would be narrower, but two of 14 fit the room
    assert wrap_title(len, "aaaa bbbb cccc dddd eeee ffff", 14, lines=3) == [
        "aaaa bbbb cccc", "dddd eeee ffff"]


def test_a_title_too_long_for_two_lines_takes_three_balanced_ones():
    text = "aaaa bbbb cccc dddd eeee ffff"
    assert wrap_title(len, text, 10, lines=3) == ["aaaa bbbb", "cccc dddd", "eeee ffff"]
    assert wrap_title(len, text, 10) == ["aaaa bbbb cccc", "dddd eeee ffff"]


def test_a_crossing_to_memory_says_up_to_which_whole_value_it_is_compute_bound():
    crossing = Crossing("op", "H100", "n", 512.4, "to_memory", 512, 295.0, 989.4e12, "hbm")
    lines = overlays._crossing_tooltip("op", "H100", crossing).splitlines()
    assert "Compute-bound up to n = 512" in lines
    crossing = Crossing("op", "H100", "m", 511.6, "to_compute", 512, 295.0, 989.4e12, "hbm")
    assert "Compute-bound from m = 512" in overlays._crossing_tooltip("op", "H100", crossing)


def test_a_measured_points_tooltip_gives_both_intensities_when_they_differ():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    session.operations = [OperationEntry(_gemm())]
    nbytes = session.operations[0].operation.counts().bytes
    session.measurements = [Measurement("k", operation="mm", time_s=1e-3, bytes=2 * nbytes)]
    (mark,), _ = measured_marks(session, [session.hardware[0].id])
    line = [t for t in mark.tooltip.splitlines() if t.startswith("Intensity: measured")]
    assert len(line) == 1 and "FLOP/B" in line[0] and ", predicted " in line[0]


def test_decode_step_times_at_a_kv_length_agree_with_the_model_there():
    arch, hw = read_model_config("Llama-3.1-8B"), get_preset("h100-sxm")
    lower, pred = decode_times(arch, Setup("decode", batch=8, kv_len=4096), hw, [1024, 4096])
    at_4096 = model_result(arch, Setup("decode", batch=8, kv_len=4096), hw)
    at_1024 = model_result(arch, Setup("decode", batch=8, kv_len=1024), hw)
    assert lower == pytest.approx([at_1024.t_lower_s, at_4096.t_lower_s], rel=1e-9)
    assert pred == pytest.approx([at_1024.t_predicted_s, at_4096.t_predicted_s], rel=1e-9)


def test_a_measured_point_above_its_roof_is_held_to_the_roof_at_its_measured_intensity():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    op = Operation("gemm", {"m": 64, "n": 64, "k": 64, "dtype": "fp16"}, "small")
    session.operations = [OperationEntry(op)]
    # 2·64³ FLOPs over half the 3·64²·2 bytes the model counts: 42.7 FLOP/B measured
    # (21.3 predicted); on 3.35 TB/s the roof there is 143 TFLOP/s; achieved 200 TFLOP/s
    session.measurements = [Measurement("k", operation="small", time_s=2 * 64**3 / 200e12,
                                        bytes=3 * 64 * 64)]
    (advisory,) = measured_advisories(judge_session(session))
    assert "42.7 FLOP/B" in advisory.message
    assert "143 TFLOP/s" in advisory.message


@pytest.mark.parametrize(("setup", "field"), [
    (Setup("decode", tp=2, ep=3), "ep"),
    (Setup("decode", pp=40), "pp"),  # Llama 3.1 8B has 32 layers
])
def test_a_set_up_the_model_cannot_take_names_its_field(setup, field):
    with pytest.raises(SetupError) as err:
        expand(read_model_config("Llama-3.1-8B"), setup)
    assert err.value.field == field


def test_a_compared_pairs_tooltip_gives_both_intensities():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    session.operations = [
        OperationEntry(Operation("custom", {"flops": 1e12, "bytes": 4e9, "precision": "fp16"},
                                 "unfused")),
        OperationEntry(Operation("custom", {"flops": 1e12, "bytes": 1e9, "precision": "fp16"},
                                 "fused"))]
    session.comparisons = [Comparison("unfused", "fused")]
    machines = [SimpleNamespace(hw_id=session.hardware[0].id, name="H100", marker="o",
                                style_index=0)]
    (link,) = pair_links(session, evaluate_session(session), machines)
    (line,) = [t for t in link.tooltip.splitlines() if t.startswith("Intensity:")]
    assert line == "Intensity: 250 FLOP/B → 1000 FLOP/B"  # 1e12 FLOPs over 4 GB, then 1 GB


def test_on_two_machines_each_compared_pair_names_its_own_figures_per_machine():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset(p), preset=p) for p in ("h100-sxm", "l4")]

    def op(name: str, flops: float, nbytes: float) -> OperationEntry:
        return OperationEntry(Operation("custom", {"flops": flops, "bytes": nbytes,
                                                   "precision": "fp16"}, name))

    session.operations = [op("a", 1e12, 4e9), op("b", 1e12, 1e9), op("c", 1e9, 1e9),
                          op("d", 1e12, 1e9)]
    session.comparisons = [Comparison("a", "b"), Comparison("c", "d")]
    machines = [SimpleNamespace(hw_id=h.id, name=h.hardware.label, marker="o", style_index=i)
                for i, h in enumerate(session.hardware)]
    links = pair_links(session, evaluate_session(session), machines)
    _, _, named = whose_texts(session, [], [], links)
    assert len(named) == 4
    for link in named:
        lines = link.label.splitlines()
        assert [line.split(": ")[0] for line in lines] == ["H100 SXM5 80GB", "L4 24GB"]
        # a → b moves fewer bytes (faster); c → d does more work on the same bytes (slower)
        word = "faster" if link.first == "a" else "slower"
        assert all(line.endswith(word) for line in lines), lines


def test_dimensions_given_as_numpy_integers_evaluate_like_plain_ones():
    hw = get_preset("h100-sxm")
    plain = evaluate(Operation("gemm", {"m": 64, "n": 64, "k": 64, "dtype": "fp16"}, "x"), hw)
    numpy_ = evaluate(Operation("gemm", {"m": np.int64(64), "n": np.int64(64),
                                         "k": np.int64(64), "dtype": "fp16"}, "x"), hw)
    # 2·64³ FLOPs, 3·64²·2 bytes: memory-bound on 3.35 TB/s
    assert numpy_.t_lower_s == pytest.approx(3 * 64 * 64 * 2 / 3.35e12, rel=1e-12)
    assert numpy_.t_lower_s == plain.t_lower_s and numpy_.bound == plain.bound


def test_a_box_on_a_texts_leader_line_hits_that_text():
    layout = TextLayout(Occupancy((0.0, 0.0, 400.0, 300.0)))
    layout.placed["far"] = Placement("far", (100.0, 100.0, 140.0, 112.0), (50.0, 50.0, 98.0, 98.0))
    layout.placed["near"] = Placement("near", (300.0, 20.0, 340.0, 32.0))
    assert layout.hit_by((60.0, 60.0, 62.0, 62.0)) == ["far"]  # on the leader, off the box
    assert layout.hit_by((105.0, 105.0, 106.0, 106.0)) == ["far"]
    assert layout.hit_by((10.0, 200.0, 20.0, 210.0)) == []


def test_an_all_to_all_exchange_shows_its_bytes_worked_out():
    op = Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 4, "copies": 2,
                                  "dtype": "bf16", "collective": "all_to_all"}, "dispatch")
    (sent,) = op.counts().byte_terms
    # each chip sends its 2 copies of 16 rows × 64 bf16 values to the 3 other chips of 4
    assert sent.value == 2 * 3 / 4 * 16 * 64 * 2
    assert sent.substituted.startswith("2·(4−1)/4·16·64·2 B")
    assert sent.formula.endswith("·2 B [bf16]") and "−1)/" in sent.formula


def test_places_along_a_rising_line_are_above_left_then_below_right_of_it():
    # a line rising from (0, 100) to (100, 0) in device pixels; a 20 × 10 box, gap 8
    places = sloped_candidates(0.0, 100.0, 100.0, 0.0, 20.0, 10.0, (0.0, 0.0, 200.0, 200.0),
                               fractions=(0.5,))
    assert [(c.left, c.top) for c in places] == [(50 - 20 - 4, 50 - 10 - 8), (50 + 4, 50 + 8)]


def test_a_thick_line_covers_both_of_its_sides():
    occ = Occupancy((0.0, 0.0, 100.0, 100.0), cell=2.0)
    occ.add_polyline([10.0, 90.0], [51.0, 51.0], half=4.0)  # texts keep 4 px off the line
    assert occ.count((20.0, 47.5, 80.0, 49.5)) > 0  # 1.5 to 3.5 px above it
    assert occ.count((20.0, 52.5, 80.0, 54.5)) > 0  # 1.5 to 3.5 px below it
    assert occ.count((20.0, 60.0, 80.0, 70.0)) == 0
    assert occ.count((0.0, 47.5, 5.0, 54.5)) == 0  # beyond its end


def test_measured_points_on_a_machine_not_drawn_leave_those_on_the_drawn_one():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset(p), preset=p) for p in ("a100-80gb", "h100-sxm")]
    session.measurements = [Measurement("k", time_s=1e-3, flops=1e9, bytes=1e6)]
    marks, notes = measured_marks(session, [session.hardware[1].id])  # judged on both
    assert [m.hw_id for m in marks] == [session.hardware[1].id] and notes == []


def test_a_free_place_whose_leader_crosses_something_drawn_is_passed_over():
    occ = Occupancy((0.0, 0.0, 200.0, 200.0))
    occ.add_rect((90.0, 0.0, 110.0, 60.0))  # something drawn between the point and the first place
    layout = TextLayout(occ)
    crossing = Candidate(150.0, 20.0, (20.0, 25.0, 150.0, 25.0))
    clear = Candidate(150.0, 150.0, (20.0, 155.0, 150.0, 155.0))
    placed = layout.place(Request("op", "operation", 20.0, 10.0, [crossing, clear]))
    assert placed is not None and placed.rect[:2] == (150.0, 150.0)


# =============================================================================================
# the second sample (docs/mutation.md): behaviour its survivors showed untested

# ---------------------------------------------------------------------------------------------
# label layout

def test_places_over_a_flat_line_sit_a_gap_above_it_then_farther():
    # a roof from x 100 to 400 at y 80; a 80 × 12 box; gap 6, then 12 px clearer
    places = flat_candidates(100.0, 400.0, 80.0, 80.0, 12.0, (0.0, 0.0, 500.0, 300.0))
    first_above = places[0]
    assert (first_above.left, first_above.top) == (400 - 80 - 4, 80 - 12 - 6)
    assert {c.top for c in places} == {80 - 12 - 6, 80 + 6, 80 - 12 - 18, 80 + 18}


def test_a_free_top_left_corner_lies_inside_the_plot_by_the_margin():
    occ = Occupancy((50.0, 20.0, 450.0, 320.0))
    corners = dict(free_corners(occ, 100.0, 40.0, margin=8.0))
    assert corners["top-left"] == (58.0, 28.0, 158.0, 68.0)
    assert corners["bottom-right"] == (342.0, 272.0, 442.0, 312.0)
    assert legend_corner(occ, 100.0, 40.0) == ("bottom-right", corners["bottom-right"])


def test_a_box_on_the_plots_left_edge_covers_the_first_column():
    occ = Occupancy((0.0, 0.0, 100.0, 50.0), cell=2.0)
    occ.add_rect((0.0, 10.0, 2.0, 12.0))
    assert occ.count((0.0, 0.0, 2.0, 50.0)) == 1


def test_a_line_near_the_left_edge_of_a_wide_plot_is_covered():
    # the plot's top (100) is below its left edge (10): the line's clip box is the plot's own
    occ = Occupancy((10.0, 100.0, 410.0, 400.0), cell=2.0)
    occ.add_polyline([12.0, 400.0], [200.0, 200.0], half=2.0)
    assert occ.count((12.0, 198.0, 40.0, 202.0)) > 0


def test_a_thick_diagonal_line_covers_both_of_its_sides():
    occ = Occupancy((0.0, 0.0, 100.0, 100.0), cell=2.0)
    occ.add_polyline([10.0, 90.0], [10.0, 90.0], half=4.0)  # a 45° line
    # 3 px off the line, perpendicular to it: inside its half width of 4 px
    off = 3.0 / math.sqrt(2.0)
    x, y = 50.0 + off, 50.0 - off
    assert occ.count((x - 0.1, y - 0.1, x + 0.1, y + 0.1)) > 0
    x, y = 50.0 - off, 50.0 + off
    assert occ.count((x - 0.1, y - 0.1, x + 0.1, y + 0.1)) > 0


def test_a_place_partly_left_of_the_plot_is_passed_over():
    layout = TextLayout(Occupancy((0.0, 0.0, 200.0, 200.0)))
    placed = layout.place(Request("op", "operation", 20.0, 10.0,
                                  [Candidate(-10.0, 50.0), Candidate(50.0, 50.0)]))
    assert placed is not None and placed.rect[:2] == (50.0, 50.0)


def test_a_leader_crossing_something_drawn_far_along_it_is_passed_over():
    occ = Occupancy((0.0, 0.0, 200.0, 200.0))
    occ.add_rect((120.0, 90.0, 130.0, 110.0))  # drawn across the first leader, near its end
    layout = TextLayout(occ)
    crossing = Candidate(150.0, 95.0, (20.0, 100.0, 150.0, 100.0))
    clear = Candidate(150.0, 150.0, (20.0, 155.0, 150.0, 155.0))
    placed = layout.place(Request("op", "operation", 20.0, 10.0, [crossing, clear]))
    assert placed is not None and placed.rect[:2] == (150.0, 150.0)


def test_rectangles_on_a_texts_leader_line_hit_that_text():
    layout = TextLayout(Occupancy((0.0, 0.0, 400.0, 300.0)))
    layout.placed["far"] = Placement("far", (100.0, 100.0, 140.0, 112.0), (50.0, 50.0, 98.0, 98.0))
    layout.placed["near"] = Placement("near", (300.0, 20.0, 340.0, 32.0))
    assert layout.hit_by_any(np.array([[60.0, 60.0, 62.0, 62.0]])) == {"far"}
    assert layout.hit_by_any(np.array([[10.0, 200.0, 20.0, 210.0]])) == set()


# ---------------------------------------------------------------------------------------------
# whole models

def _steps(arch, setup: Setup) -> dict[str, Operation]:
    return {step.role: step.operation for step in layer_steps(arch, setup)}


def test_mla_attention_runs_on_the_models_own_latent_width():
    data = json.loads(shipped_configs()["DeepSeek-V2-Lite"].read_text(encoding="utf-8"))
    data["kv_lora_rank"] = 256
    arch = parse_model_config(data, file="d.json")
    assert _steps(arch, Setup("decode", batch=2))["attention"].params["kv_lora_rank"] == 256


def test_qwen3_normalises_each_query_and_key_head():
    arch = read_model_config("Qwen3-8B")  # 32 query heads, 8 KV heads of 128
    norm = _steps(arch, Setup("decode", batch=4))["Q/K norm"]
    assert (norm.params["rows"], norm.params["hidden"]) == (4 * (32 + 8), 128)


def test_expert_parallelism_over_two_chips_gives_each_half_the_experts():
    arch = read_model_config("Mixtral-8x7B")  # 8 experts
    ops = _steps(arch, Setup("decode", batch=8, tp=1, ep=2))
    assert ops["experts gate/up"].params["local_experts"] == 4
    assert ops["experts down"].params["local_experts"] == 4


def test_qwen3s_replicated_weights_include_its_query_and_key_norms():
    arch = read_model_config("Qwen3-8B")  # 36 layers, hidden 4096, head_dim 128
    # two norms of 4096 per layer, the final norm, and q_norm + k_norm of 128 per layer
    assert arch.replicated_params() == 36 * 2 * 4096 + 4096 + 36 * 2 * 128


def test_a_models_summary_names_its_experts_only_when_it_has_them():
    assert "MoE 2 of 8" in read_model_config("Mixtral-8x7B").summary()
    assert "MoE" not in read_model_config("Llama-3.1-8B").summary()


@pytest.mark.parametrize("op", [
    Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 4, "dtype": "bf16",
                             "collective": "send"}),
    Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 4, "copies": 2, "dtype": "bf16",
                             "collective": "all_to_all"}),
    Operation("moe_gemm", {"tokens": 64, "experts": 8, "top_k": 2, "n": 256, "k": 128,
                           "dtype": "bf16", "local_experts": 4}),
])
def test_every_term_says_whether_it_counts_flops_reads_or_writes(op):
    counts = op.counts()
    assert {t.kind for t in counts.flop_terms} == {"flop"}
    assert {t.kind for t in counts.byte_terms} <= {"read", "write"}
    assert counts.bytes_read + counts.bytes_written == pytest.approx(counts.bytes, rel=1e-12)


def test_latent_attention_states_its_absorbed_form_and_causal_scaling():
    op = Operation("mla_attention", {"heads": 16, "kv_lora_rank": 512, "rope_dim": 64,
                                     "query_len": 8, "kv_len": 1024, "causal": True})
    notes = " ".join(op.counts().notes)
    assert "Absorbed form" in notes and "visible fraction" in notes


# ---------------------------------------------------------------------------------------------
# whole-model results

def test_the_derivation_gives_the_interconnect_bytes_when_chips_talk():
    arch = read_model_config("Llama-3.1-8B")
    for tp, shown in ((1, False), (2, True)):
        setup = Setup("decode", batch=8, tp=tp)
        totals = model_totals(arch, setup)
        lines = dict(derivation(arch, setup, totals, []))
        assert ("interconnect bytes (per chip)" in lines) is shown


def test_the_kv_cache_per_token_under_tensor_parallelism_is_worked_out_per_chip():
    arch = read_model_config("Llama-3.1-8B")  # 32 layers, 8 KV heads of 128
    setup = Setup("decode", batch=8, tp=2)
    line = next(text for label, text in derivation(arch, setup, model_totals(arch, setup), [])
                if text.startswith("2·layers·"))
    # 4 KV heads per chip: 2·32·4·128·2 B = 65,536 B
    assert "⌈kv_heads/t⌉" in line and line.endswith("= 2·32·4·128·2 = 65,536 B")


def test_a_machine_that_cannot_run_the_model_is_listed_as_skipped_with_its_memory():
    arch = read_model_config("Llama-3.1-8B")
    setup = Setup("decode", batch=1, tp=2)  # needs an interconnect the laptop lacks
    result = model_result(arch, setup, get_preset("apple-m3-max"))
    assert result.skipped and "no interconnect" in result.skipped
    assert result.memory_needed_bytes == pytest.approx(sum(memory_needed(arch, setup)), rel=1e-12)
    lines = derivation(arch, setup, model_totals(arch, setup), [result])
    assert (result.hardware, f"skipped: {result.skipped}") in lines


def test_a_batch_that_exactly_fills_the_memory_fits():
    arch = read_model_config("Llama-3.1-8B")
    setup = Setup("decode", batch=1, kv_len=4096)
    exactly = sum(memory_needed(arch, setup))
    assert max_batch(arch, setup, exactly) == 1
    assert max_batch(arch, setup, exactly - 1) == 0


def test_one_more_sequence_adds_its_kv_cache_and_activations():
    arch = read_model_config("Llama-3.1-8B")
    setup = Setup("decode", batch=1, kv_len=4096)
    grown = sum(memory_needed(arch, setup.with_(batch=2))) - sum(memory_needed(arch, setup))
    assert per_sequence_bytes(arch, setup) == pytest.approx(grown, rel=1e-12)
    # the KV cache alone is 4096 positions × 128 KiB per token
    assert per_sequence_bytes(arch, setup) > 4096 * 128 * 1024


def test_a_models_result_as_data_names_the_memory_needed():
    arch = read_model_config("Llama-3.1-8B")
    result = model_result(arch, Setup("decode", batch=1), get_preset("h100-sxm"))
    assert result.as_dict("decode")["memory_needed_bytes"] == result.memory_needed_bytes


def test_a_request_without_a_price_has_no_cost_in_its_data():
    plain = RequestResult("m", 100, ttft_s=0.1, decode_s=0.9)
    assert "cost_per_million_tokens" not in plain.as_dict()
    priced = RequestResult("m", 100, ttft_s=0.1, decode_s=0.9, price_per_hour=3.6)
    # 3.6 per hour is 0.001 per second; 100 tokens per second: 10 per million tokens
    assert priced.as_dict()["cost_per_million_tokens"] == pytest.approx(10.0, rel=1e-12)


def test_a_model_whose_operations_were_cut_is_expanded_afresh():
    model = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"), Setup("decode"))
    entries = expand_entries(model)
    assert refresh_params(model, entries)
    assert not refresh_params(model, entries[:-1])


# ---------------------------------------------------------------------------------------------
# measured points, collectives, comparisons, machines

def test_measured_flops_far_from_the_model_are_noted_as_a_percentage():
    result = evaluate(_gemm(), get_preset("h100-sxm"))
    for ratio, shown in ((1.5, "+50 %"), (2.0, "+100 %"), (0.75, "-25 %")):
        m = Measurement("k", operation="mm", time_s=1e-3, flops=ratio * result.flops)
        assert f"measured FLOPs differ from the model's by {shown}" in judge(m, result).notes


def test_a_measurement_that_cannot_be_judged_keeps_its_place():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    send = Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 2, "dtype": "bf16",
                                    "collective": "send"}, "send")  # moves data: no FLOPs
    session.operations = [OperationEntry(send)]
    m = Measurement("k", operation="send", achieved_flops=1e12)
    session.measurements = [m]
    (point,) = judge_session(session)
    assert point.measurement is m and point.judgement is None
    assert "needs FLOPs" in point.problem


def test_a_reduce_scatter_takes_one_step_fewer_than_its_chips():
    op = Operation("sharded_matmul", {"b": 64, "d": 4096, "f": 4096, "chips": 8,
                                      "collective": "reduce_scatter"})
    counts = op.counts()
    assert counts.latency_steps == 7  # ring reduce-scatter: N−1 steps
    ring = Operation("sharded_matmul", {"b": 64, "d": 4096, "f": 4096, "chips": 8}).counts()
    assert ring.latency_steps == 14  # ring all-reduce: 2·(N−1)


def test_a_compared_pairs_data_gives_its_intensity_ratio():
    from workbench.model.comparison import compare_session

    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    small = Operation("gemm", {"m": 64, "n": 4096, "k": 4096, "dtype": "bf16"}, "small")
    big = Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"}, "big")
    session.operations = [OperationEntry(small), OperationEntry(big)]
    session.comparisons = [Comparison("small", "big")]
    (pair,) = compare_session(session, evaluate_session(session))
    data = pair.as_dict()
    assert data["intensity_ratio"] == pytest.approx(
        pair.second_result.intensity / pair.first_result.intensity, rel=1e-12)
    assert data["intensity_ratio"] > 1  # the larger GEMM reuses each byte more


def test_a_calibrations_data_keeps_the_efficiency_table():
    from workbench.model.prediction import ASSUMED

    data = ASSUMED.as_data()
    assert data["efficiency"] == dict(ASSUMED.efficiency)
    assert data["startup"] == dict(ASSUMED.startup)


def test_a_collectives_link_latency_is_a_floor_added_to_every_sweep_point():
    from workbench.model.roofline import evaluate_arrays

    flops = np.array([1e9, 1e12])
    nbytes = np.array([1e9, 1e9])
    out = evaluate_arrays(flops, nbytes, 1e15, 1e12, latency=1e-5)
    # memory-bound: 1 GB at 1 TB/s = 1 ms; compute-bound: 1 TFLOP at 1 PFLOP/s = 1 ms
    np.testing.assert_allclose(out["t_lower_s"], [1e-3 + 1e-5, 1e-3 + 1e-5], rtol=1e-12)


def test_a_cache_named_as_main_memory_is_reported_for_that_machine():
    from workbench.model.advisories import machine_advisories

    hw = get_preset("h100-sxm").copy(memory={"l2": 12e12}, main_memory="l2")
    (advice,) = [a for a in machine_advisories(hw) if a.kind == "no-main-memory"]
    assert advice.subject == hw.label


def test_a_sparse_looking_integer_peak_is_given_in_operations_per_second():
    from workbench.model.advisories import machine_advisories

    hw = get_preset("h100-sxm").copy(compute={"bf16": 100e12, "int8": 400e12})
    (advice,) = [a for a in machine_advisories(hw) if a.kind == "sparse-figures"]
    assert "compute.int8 400 TOP/s" in advice.message


# ---------------------------------------------------------------------------------------------
# the chart's range

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


# =============================================================================================
# the third sample (docs/mutation.md): whole-model numbers against published figures

def test_published_parameter_counts_of_qwen_mixtral_and_deepseek_lite():
    # the models' own safetensors: Qwen2.5-7B 7,615,616,512 (Q/K/V biases included),
    # Mixtral-8x7B 46,702,792,704; DeepSeek-V2-Lite 15.7 B (two shared experts per MoE layer)
    assert read_model_config("Qwen2.5-7B").params == 7_615_616_512
    assert read_model_config("Mixtral-8x7B").params == 46_702_792_704
    assert read_model_config("DeepSeek-V2-Lite").params == pytest.approx(15.7e9, rel=0.005)


def test_deepseek_lites_moe_layer_holds_router_routed_and_shared_experts():
    arch = read_model_config("DeepSeek-V2-Lite")  # hidden 2048, 64 experts of 1408, 2 shared
    assert arch.moe.shared_intermediate == 2 * 1408
    expert = 3 * 2048 * 1408  # gate, up and down
    assert arch.moe_layer_params() == 2048 * 64 + 64 * expert + 3 * 2048 * 2 * 1408


def test_deepseek_lites_query_projection_and_rope_work():
    arch = read_model_config("DeepSeek-V2-Lite")  # 16 heads of 128 + 64, no query LoRA
    ops = _steps(arch, Setup("decode", batch=2))
    q = ops["Q projection"]
    assert (q.params["n"], q.params["k"]) == (16 * (128 + 64), 2048)
    # RoPE: 3 FLOPs per rotated element, over the 16 query heads and the one shared key
    assert ops["RoPE"].counts().flops == 3 * 2 * (16 + 1) * 64


def test_one_chip_holds_every_weight():
    arch = read_model_config("Mixtral-8x7B")
    assert arch.weight_bytes_per_chip("bf16") == 2 * 46_702_792_704


def test_gemma_runs_its_ffn_with_gelu():
    ops = _steps(read_model_config("Gemma-2-9B"), Setup("decode"))
    assert "activation (gelu · up)" in ops
    assert ops["activation (gelu · up)"].params["steps"][0]["op"] == "gelu"


def test_expert_weights_are_read_at_the_weights_dtype():
    ops = _steps(read_model_config("Mixtral-8x7B"), Setup("decode", batch=8, weights="int4"))
    assert ops["experts gate/up"].params["w_dtype"] == "int4"
    assert ops["experts down"].params["w_dtype"] == "int4"


def test_a_stage_send_says_it_crosses_one_link():
    op = Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 2, "dtype": "bf16",
                                  "collective": "send"})
    assert any("Point to point" in n for n in op.counts().notes)


def test_a_two_point_range_is_its_two_ends():
    from workbench.model.sweeps import Range

    np.testing.assert_array_equal(Range(1.0, 8.0, 2).expand(), [1.0, 8.0])
    np.testing.assert_array_equal(Range(1.0, 8.0, 1).expand(), [1.0])


def test_a_flat_leader_line_is_hit_along_its_length():
    layout = TextLayout(Occupancy((0.0, 0.0, 400.0, 300.0)))
    layout.placed["far"] = Placement("far", (100.0, 55.0, 140.0, 67.0), (50.0, 60.0, 98.0, 60.0))
    assert layout.hit_by_any(np.array([[70.0, 59.5, 72.0, 60.5]])) == {"far"}


def test_occupancy_counts_many_rectangles_at_once_inside_and_out():
    occ = Occupancy((0.0, 0.0, 100.0, 100.0), cell=2.0)
    occ.add_rects(np.array([[0.0, 0.0, 4.0, 4.0], [10.0, 10.0, 14.0, 14.0]]))
    assert occ.count((0.0, 0.0, 4.0, 4.0)) == 4 and occ.count((10.0, 10.0, 14.0, 14.0)) == 4
    counts = occ.counts_local(np.array([[10.0, 10.0, 14.0, 14.0], [1000.0, 0.0, 1010.0, 10.0]]))
    assert counts.tolist() == [4, 0]  # the second lies right of the plot
    assert occ.counts_local(np.zeros((0, 4))).tolist() == []


def test_a_segment_along_an_edge_just_inside_is_kept():
    assert clip_segment(0.0, 0.5, 10.0, 0.5, (0.0, 0.0, 100.0, 100.0)) == (0.0, 0.5, 10.0, 0.5)
    assert clip_segment(0.0, -0.5, 10.0, -0.5, (0.0, 0.0, 100.0, 100.0)) is None


def test_places_over_a_short_roof_also_reach_left_of_it():
    # a roof of 100 px under an 80 px text: some places hang left of it, over the slope
    places = flat_candidates(300.0, 400.0, 80.0, 80.0, 12.0, (0.0, 0.0, 500.0, 300.0))
    assert any(c.left < 300.0 for c in places)


def test_a_leader_leaving_the_plot_does_not_stop_the_place():
    layout = TextLayout(Occupancy((0.0, 0.0, 200.0, 200.0)))
    placed = layout.place(Request("op", "operation", 20.0, 10.0,
                                  [Candidate(50.0, 50.0, (60.0, 260.0, 60.0, 61.0))]))
    assert placed is not None and placed.rect[:2] == (50.0, 50.0)


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


def test_renaming_a_model_renames_its_operations():
    model = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"), Setup("decode"))
    entries = expand_entries(model)
    model.name = "Mine"
    assert refresh_params(model, entries)
    assert all(e.operation.name.startswith("Mine: ") for e in entries)


def test_a_link_written_with_a_dash_is_known_by_its_kind():
    from workbench.model.hardware import link_kind

    assert link_kind("Infinity-Fabric") == link_kind("infinity fabric") == "Infinity Fabric"


def test_a_causal_mask_with_more_queries_than_keys_names_query_len():
    from workbench.model.operations import cross_checks

    problems = cross_checks("attention", {"heads": 8, "kv_heads": 8, "head_dim": 64,
                                          "query_len": 4096, "kv_len": 1024, "causal": True,
                                          "batch": 1, "implementation": "flash",
                                          "dtype": "bf16", "kv_dtype": "bf16", "compute": None})
    assert [key for key, _ in problems] == ["query_len"]


def test_expert_parallelism_on_a_dense_model_names_ep():
    with pytest.raises(SetupError) as err:
        layer_steps(read_model_config("Llama-3.1-8B"), Setup("decode", ep=2))
    assert str(err.value).startswith("ep: ") and "no routed experts" in str(err.value)


def test_a_compared_pair_and_a_requests_data_use_their_documented_keys():
    from workbench.model.comparison import compare_session

    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    session.operations = [OperationEntry(_gemm(name="a")), OperationEntry(_gemm(name="b"))]
    session.comparisons = [Comparison("a", "b")]
    (pair,) = compare_session(session, evaluate_session(session))
    assert (pair.as_dict()["first"], pair.as_dict()["second"]) == ("a", "b")
    request = RequestResult("m", 100, ttft_s=0.1, decode_s=0.9)
    assert request.as_dict()["tpot_mean_s"] == pytest.approx(0.009, rel=1e-12)  # 0.9 s / 100
