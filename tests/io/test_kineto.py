"""PyTorch profiler (Kineto) traces, as the profiler wrote them (tests/fixtures/kineto/, from
Holistic Trace Analysis' test data; see the README there): kernels tied to the operators that
launched them, FLOPs and bytes from the recorded shapes (worked out here by hand), what could
not be counted listed with its share of GPU time, and every bad file refused in one line with
the session left as it was."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io.cells import ImportCancelled
from workbench.io.errors import InputError
from workbench.io.kineto import MAX_TRACE_FILE_BYTES, preset_for_gpu, read_kineto_trace
from workbench.io.measurements import attach_measurements, import_measurements, load_measurements
from workbench.io.presets import load_presets
from workbench.io.profiles import add_machines, import_profile
from workbench.io.sessions import load_session
from workbench.model.opcount import COUNTED_OPERATORS, OpCount, count_operator

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "fixtures" / "kineto"
AMD = TRACES / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"
MM = TRACES / "backward_thread.json"
TRITON = TRACES / "triton_example.json.gz"
CPU_ONLY = TRACES / "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
SAMPLED = TRACES / "sampled_rank-0.json.gz"
ALEXNET = TRACES / "benchmark_result_2869224_1695835535_trace.json.gz"
RANGES = TRACES / "benchmark_result_924719_1679055439_trace.json.gz"
CPU_OPS = REPO / "tests" / "fixtures" / "cpu" / "cpu_ops.json.gz"
RESNET = TRACES / "worker0.1623143089861.pt.trace.json.gz"
TBE_OPS = REPO / "tests" / "fixtures" / "cpu" / "tbe_ops.json.gz"
SESSION = REPO / "workbench" / "examples" / "llama_ffn.yaml"


def _by_operator(trace):
    return {m.source.split(": ", 1)[1].split(" ", 1)[0]: m for m in trace.measurements
            if "fill_" not in m.source}


def test_amd_trace_counts_three_kernels_by_hand():
    trace = read_kineto_trace(AMD)
    ops = _by_operator(trace)
    # aten::addmm(bias [128], x [5,128], w [128,128]) fp32, launched on ROCm as two kernels:
    # a copy of the bias (6.88 µs) and the GEMM Cijk_Alik_Bljk… (17.6 µs)
    addmm = ops["aten::addmm"]
    assert addmm.flops == 2 * 5 * 128 * 128 == 163_840
    # A 5·128 + B 128·128 + C 5·128 elements + bias 128, 4 bytes each
    assert addmm.bytes == (5 * 128 + 128 * 128 + 5 * 128 + 128) * 4 == 71_168
    assert addmm.time_s == pytest.approx((6.88 + 17.6) * 1e-6)
    assert addmm.name.startswith("Cijk_Alik_Bljk_SB") and addmm.name.endswith("(+1 kernel)")
    assert addmm.precision == "fp32"
    # aten::mm([128,5], [5,128]) in the backward pass: 12.64 µs
    mm = ops["aten::mm"]
    assert mm.flops == 2 * 128 * 128 * 5 == 163_840
    assert mm.bytes == (128 * 5 + 5 * 128 + 128 * 128) * 4 == 70_656
    assert mm.time_s == pytest.approx(12.64e-6)
    # aten::relu → aten::clamp_min([5,128], 0): one max per element, x read and y written
    relu = ops["aten::clamp_min"]
    assert relu.flops == 5 * 128 == 640
    assert relu.bytes == 2 * 5 * 128 * 4 == 5120
    assert relu.time_s == pytest.approx(6.72e-6)


def test_amd_gpu_is_explained_and_every_kernel_counted():
    trace = read_kineto_trace(AMD)
    assert trace.gpu == "AMD Radeon Graphics" and trace.preset is None
    assert all(m.hardware is None for m in trace.measurements)
    assert any("matches no preset (ROCm reports AMD GPUs without their model)" in n
               for n in trace.notes)
    # 14 kernels: 6.88 + 17.6 + 6.72 + 8.32 + 11.04 + 3.36 + 2.24 + 5.28 + 5.6 + 12.64
    # + 13.6 + 4.96 + 4.16 + 8.481 = 110.881 µs, each of an operator with a FLOP rule (the
    # last three listed were _foreach_add_ 8.481, mse_loss 8.32 and mse_loss_backward 5.28)
    assert trace.kernels == 14
    assert trace.gpu_time_s == pytest.approx(110.881e-6)
    assert trace.counted_time_s == pytest.approx(110.881e-6)
    assert trace.not_counted == [] and trace.uncounted == []
    assert trace.notes[0] == "counted 100 % of GPU time (14 of 14 kernels, 13 operators)"


def test_amd_trace_counts_its_loss_and_sgd_step_by_hand():
    ops = _by_operator(read_kineto_trace(AMD))
    # mse_loss(x [5,128], t [5,128]) fp32: (x − t)² per element, 2 FLOPs each (the mean is
    # its own aten::mean); x and t read, the 640 squares written
    mse = ops["aten::mse_loss"]
    assert (mse.flops, mse.bytes) == (2 * 640, 3 * 640 * 4) == (1280, 7680)
    assert mse.time_s == pytest.approx(8.32e-6)
    # mse_loss_backward(dy [] , x, t): (2/640)·(x − t)·dy, 3 FLOPs an element; dy (one
    # fp32), x and t read, dx written
    back = ops["aten::mse_loss_backward"]
    assert (back.flops, back.bytes) == (3 * 640, 4 + 3 * 640 * 4) == (1920, 7684)
    assert back.time_s == pytest.approx(5.28e-6)
    # SGD's p += −lr·g over the two parameters (weight [128,128], bias [128]): the lists
    # carry no type; the kernel's BinaryOpListAlphaFunctor<float, …> names fp32. One add an
    # element (as aten::add_ with alpha counts), p and g read, p written
    step = ops["aten::_foreach_add_"]
    n = 128 * 128 + 128
    assert (step.flops, step.bytes, step.precision) == (n, 3 * n * 4, "fp32") == (
        16512, 198144, "fp32")
    assert step.time_s == pytest.approx(8.481e-6)


def test_amd_trace_counts_its_reductions_by_hand():
    ops = _by_operator(read_kineto_trace(AMD))
    # the loss's aten::mean([5,128]) with no dimensions recorded: all 640 elements into one,
    # one add each; x read (640·4 bytes) and the one result written (4)
    mean = ops["aten::mean"]
    assert mean.flops == 640
    assert mean.bytes == 640 * 4 + 4 == 2564
    assert mean.time_s == pytest.approx(11.04e-6)
    # the bias gradient: aten::sum([5,128], dim [0]): 128 sums of 5 elements
    total = ops["aten::sum"]
    assert total.flops == 128 * 5 == 640
    assert total.bytes == 640 * 4 + 128 * 4 == 3072
    assert total.time_s == pytest.approx(13.6e-6)
    assert total.precision == "fp32" and total.unit == "vector"


def test_cutlass_mm_is_tied_to_its_operator_through_the_launch():
    # an older trace: the kernel's "External id" is its correlation, not the operator's;
    # the cudaLaunchKernel inside aten::mm's time span ties them
    (mm,) = read_kineto_trace(MM).measurements
    assert "cutlass_80_tensorop_s1688gemm" in mm.name
    assert mm.flops == 2 * 2048 * 256 * 2048 == 2_147_483_648
    assert mm.bytes == (2048 * 2048 + 2048 * 256 + 2048 * 256) * 4 == 20_971_520
    assert mm.time_s == pytest.approx(45e-6)


def test_device_properties_pick_the_preset():
    trace = read_kineto_trace(TRITON)
    # "NVIDIA A100-PG509-200" with 42,297,524,224 bytes: the 40 GB A100
    assert trace.gpu == "NVIDIA A100-PG509-200" and trace.preset == "a100-40gb"
    assert preset_for_gpu("NVIDIA H100 80GB HBM3") == "h100-sxm"
    assert preset_for_gpu("NVIDIA A100-SXM4-80GB", 84_990_623_744) == "a100-80gb"
    # a V100 by its form and memory as CUDA names it (DGX Station's is the SXM2 part); the
    # V100S and the 150 W FHHL card have no preset
    assert preset_for_gpu("Tesla V100-SXM2-16GB", 16_945_512_448) == "v100-sxm2-16gb"
    assert preset_for_gpu("Tesla V100-DGXS-32GB", 34_084_028_416) == "v100-sxm2-32gb"
    assert preset_for_gpu("Tesla V100-SXM2-32GB", 34_089_730_048) == "v100-sxm2-32gb"
    assert preset_for_gpu("Tesla V100-PCIE-32GB", 34_089_730_048) == "v100-pcie-32gb"
    assert preset_for_gpu("Tesla V100-PCIE-16GB") == "v100-pcie-16gb"
    assert preset_for_gpu("Tesla V100S-PCIE-32GB", 34_089_730_048) is None
    assert preset_for_gpu("Tesla V100-FHHL-16GB", 16_945_512_448) is None
    for preset in ("v100-sxm2-16gb", "v100-pcie-16gb", "v100-pcie-32gb"):
        assert preset in load_presets()


def test_a_generated_kernel_is_listed_not_fatal():
    # a torch.compile'd Triton kernel: its operator is the kernel itself, which says nothing
    # of the operations it fuses
    trace = read_kineto_trace(TRITON)
    assert trace.measurements == []
    assert trace.not_counted == [("a kernel torch.compile generated (Triton): the operations "
                                  "it fuses are not in the trace", 1, pytest.approx(1.76e-6))]
    assert [name for name, _s, _why in trace.uncounted] == ["triton_poi_fused_add_cos_sin_0"]
    assert trace.notes[0].startswith("counted 0 % of GPU time (0 of 1 kernels")


def test_a_real_training_step_lists_what_it_cannot_count():
    trace = read_kineto_trace(SAMPLED)
    assert trace.kernels == 1154
    # every kernel is either in a counted point (its own, or one of the "+N kernels" of its
    # operator) or in the list, and so is every microsecond of GPU time
    in_points = sum(1 + int(m.group(1)) if (m := re.search(r"\(\+(\d+) kernels?\)", p.name))
                    else 1 for p in trace.measurements)
    listed = sum(n for _w, n, _s in trace.not_counted)
    assert in_points + listed == trace.kernels
    assert trace.counted_time_s + sum(s for _w, _n, s in trace.not_counted) == \
        pytest.approx(trace.gpu_time_s)
    # the note names the eight largest reasons and counts the rest
    assert len(trace.not_counted) > 8
    assert trace.notes[0].endswith(f"; and {len(trace.not_counted) - 8} more")
    largest = trace.not_counted[0]
    assert all(largest[2] >= s for _w, _n, s in trace.not_counted)
    # the largest are its ten NCCL kernels (8 under record_param_comms, 2 under
    # c10d::_allgather_base_): collectives, said as such, not as operators without a rule
    assert largest[0].startswith("a collective (NCCL)") and largest[1] == 10
    assert {name[:len("ncclKernel_")] for name, _s, why in trace.uncounted
            if why == largest[0]} == {"ncclKernel_"}
    assert not any(w.startswith(("record_param_comms", "c10d::")) for w, _n, _s in
                   trace.not_counted)
    # no roofline of one GPU sets a collective's time, so the share is also told without
    # them: 111.203 ms counted of 606.519, 18 %; of the 606.519 − 396.199 = 210.32 ms outside
    # the collectives, 53 %. (111.203 = the 80.336 ms of the aten operators counted before
    # FBGEMM's were, + 30.867 ms of FBGEMM's quantizations 15.331, permutations 11.888,
    # bounds checks 2.969 and running sums 0.214, and of nan_to_num, logit, logical_and,
    # linalg_vector_norm and scatter_ 0.465, each summed from the trace's kernels)
    assert trace.gpu_time_s == pytest.approx(606.519e-3)
    assert largest[2] == pytest.approx(396.199e-3)
    assert trace.counted_time_s == pytest.approx(111.203e-3)
    assert trace.notes[0].startswith("counted 18 % of GPU time (53 % of the time outside "
                                     "collectives; 955 of 1,154 kernels, ")
    line = import_profile(SAMPLED, "kineto").summary()
    assert "; counted 18 % of GPU time (53 % of the time outside collectives); 82 % in " in line
    # without collectives the line says nothing of them
    assert "collectives" not in read_kineto_trace(AMD).notes[0]
    # its 34 concatenations were recorded by an older PyTorch, whose tensor lists carry no
    # shapes: said so
    (cat,) = [(w, n) for w, n, _s in trace.not_counted if w.startswith("aten::cat")]
    assert cat == ("aten::cat: its inputs' shapes not recorded (an older PyTorch records a "
                   "tensor list as [])", 34)


def test_a_trace_with_nothing_counted_says_none_and_all_left_out():
    # AlexNet's forward passes on an A100, recorded without shapes: no kernel can be counted.
    # The line said "counted -0 % of GPU time" (the time left out, summed in another order
    # than the whole, exceeded it in its last bits) and "99.99999 % in 79 kernels not
    # counted" (100·x/x rounds below 100 for one x in seven)
    trace = read_kineto_trace(ALEXNET)
    assert trace.kernels == 79 and not trace.measurements
    assert trace.counted_time_s == 0.0
    assert trace.notes[0].startswith("counted 0 % of GPU time (0 of 79 kernels, 0 operators); "
                                     "100 % in 79 kernels not counted: aten::_convolution: no "
                                     "input shapes recorded (profile with record_shapes=True) "
                                     "(30 kernels, 50 %)")
    line = import_profile(ALEXNET, "kineto").summary()
    assert "; counted 0 % of GPU time; 100 % in " in line


def test_kernels_of_a_compiled_graph_with_no_operator_recorded_say_so(tmp_path):
    # torch.compile's AOTAutograd functions (CompiledFunction, CompiledFunctionBackward)
    # launch kernels whose operators the trace does not record (seen in Holistic Trace
    # Analysis' trace_diff test trace): not "no FLOP rule for this operator"
    trace = tmp_path / "compiled.json"
    events = []
    for i, op in enumerate(("CompiledFunction", "CompiledFunctionBackward")):
        ts = 100 * (i + 1)
        events += [
            f'{{"ph": "X", "cat": "cpu_op", "name": "{op}", "pid": 1, "tid": 1, "ts": {ts}, '
            f'"dur": 50, "args": {{"Input Dims": [[8, 8]], "Input type": ["float"]}}}}',
            f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, '
            f'"tid": 1, "ts": {ts + 10}, "dur": 5, "args": {{"correlation": {i + 1}}}}}',
            f'{{"ph": "X", "cat": "kernel", "name": "volta_sgemm_32x128_nt", "pid": 0, '
            f'"tid": 7, "ts": {ts + 20}, "dur": 3, "args": {{"correlation": {i + 1}}}}}']
    trace.write_text('{"traceEvents": [' + ", ".join(events) + "]}", encoding="utf-8")
    got = read_kineto_trace(trace)
    assert got.not_counted == [("launched by a torch.compile'd graph (CompiledFunction): the "
                                "operators it ran are not in the trace", 2, pytest.approx(6e-6))]


def test_cpu_only_trace_says_it_has_no_gpu_kernels():
    with pytest.raises(InputError) as err:
        load_measurements(CPU_ONLY)
    assert str(err.value) == (
        f"{CPU_ONLY}: holds no GPU kernels (4 CPU operator events; a CPU-only trace has "
        "nothing to place on a GPU roofline: profile with ProfilerActivity.CUDA)")


def test_a_trace_without_kernel_records_says_what_it_holds_instead(tmp_path):
    # the CUPTI range profiler's trace (profiler_metrics): launches and per-kernel
    # instruction counts, but no kernel's record or time. It was called a CPU-only trace
    with pytest.raises(InputError) as err:
        read_kineto_trace(RANGES)
    assert str(err.value) == (
        f"{RANGES}: holds no GPU kernels (375 CPU operator events and 1,862 runtime calls, "
        "but no kernel's own record: its 77 cuda_profiler_range events are the CUPTI range "
        "profiler's (profiler_metrics), which counts each kernel's instructions but keeps no "
        "kernel's time: profile without it)")
    # an MTIA trace (its device events mtia_ccp_events, as Holistic Trace Analysis' MTIA
    # test traces have them): another accelerator, not a CPU-only trace
    mtia = tmp_path / "mtia.json"
    mtia.write_text(
        '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, '
        '"tid": 1, "ts": 1, "dur": 5, "args": {}}, {"ph": "X", "cat": "mtia_ccp_events", '
        '"name": "pe_exe", "pid": 17, "tid": 3910, "ts": 2, "dur": 3, "args": {"stream": 112}}'
        ']}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_kineto_trace(mtia)
    assert str(err.value).endswith(
        "holds no GPU kernels (1 CPU operator event; its device events are MTIA's "
        "(mtia_ccp_events), an accelerator with no machine here, not a CUDA or ROCm GPU's "
        "kernels)")


def test_truncated_gzip_is_refused_and_the_session_unchanged(tmp_path):
    data = AMD.read_bytes()
    cut = tmp_path / "cut.pt.trace.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    session = load_session(SESSION)
    before = (list(session.measurements), list(session.hardware))
    with pytest.raises(InputError) as err:
        attach_measurements(session, load_measurements(cut), str(cut))
    line = str(err.value)
    assert line.startswith(f"{cut}: ") and "truncated" in line and "\n" not in line
    assert (session.measurements, session.hardware) == before
    # (the trace is read in 1 MiB pieces: the half cut off ends inside the first, of which
    # nothing is known to be read; "after 0 bytes of JSON" misstated it)
    assert "0 bytes" not in line and line.endswith("gzip stream)")


def test_a_compressed_csv_export_is_told_to_be_decompressed(tmp_path):
    # any gzip file is read as a trace: an Nsight Compute export shared as .csv.gz is not one
    packed = tmp_path / "ncu_raw.csv.gz"
    packed.write_bytes(gzip.compress((REPO / "tests" / "fixtures" / "ncu_raw.csv").read_bytes()))
    with pytest.raises(InputError) as err:
        load_measurements(packed)
    assert str(err.value) == (f"{packed}: at character 0: a compressed file that holds no "
                              "JSON: only a PyTorch trace is read compressed (.json.gz); "
                              "decompress a CSV export first (gunzip) and import the .csv")


def test_text_cut_mid_event_says_where(tmp_path):
    text = gzip.decompress(AMD.read_bytes()).decode()
    cut = tmp_path / "cut.json"
    cut.write_text(text[:30_000], encoding="utf-8")
    with pytest.raises(InputError, match=r"cut\.json: at character [\d,]+: the JSON text "
                                         r"ends"):
        read_kineto_trace(cut)


@pytest.mark.parametrize("where", ["event", "top level"])
def test_a_number_of_thousands_of_digits_is_refused_where_it_is(tmp_path, where):
    # Python converts no integer of more than 4,300 digits: a message, not a traceback
    digits = "1" * 5000
    event = ('{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": '
             + (digits if where == "event" else "2") + "}")
    head = f'{{"schemaVersion": {digits}, ' if where == "top level" else "{"
    trace = tmp_path / "long.json"
    trace.write_text(f'{head}"traceEvents": [{event}, {event}]}}', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "workbench", "analyze", str(SESSION),
                          "--measurements", str(trace)], cwd=REPO, capture_output=True,
                         text=True, timeout=HANG_GUARD_S)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1
    at = 18 if where == "top level" else 17  # the key's value, else the first event
    assert re.fullmatch(rf"roofline-workbench: {re.escape(str(trace))}: at character {at}: "
                        r"holds a number with more than 4,300 digits\n", run.stderr)


def test_two_gigabyte_trace_is_refused_before_reading(tmp_path):
    huge = tmp_path / "huge.pt.trace.json.gz"
    with open(huge, "wb") as f:
        f.truncate(2 * 10**9)  # sparse: no disk used, and never read
    assert os.path.getsize(huge) > MAX_TRACE_FILE_BYTES
    with pytest.raises(InputError) as err:
        load_measurements(huge)
    # 2·10⁹ bytes against 1 GiB = 1024 MB
    assert str(err.value) == f"{huge}: file is 2000.0 MB; a PyTorch trace is limited to 1024 MB"


def _one_kernel_trace(path: Path, devices: str) -> Path:
    """A trace of one bf16 matmul and its kernel on device 0, with ``devices`` as its
    ``deviceProperties``."""
    path.write_text(
        '{"deviceProperties": ' + devices + ', "traceEvents": ['
        '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, '
        '"dur": 50, "args": {"Input Dims": [[64, 32], [32, 16]], '
        '"Input type": ["c10::BFloat16", "c10::BFloat16"]}},'
        '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, '
        '"ts": 120, "dur": 5, "args": {"correlation": 7}},'
        '{"ph": "X", "cat": "kernel", "name": "sm80_gemm", "pid": 0, "tid": 7, "ts": 130, '
        '"dur": 2.5, "args": {"correlation": 7, "device": 0}}]}', encoding="utf-8")
    return path


def test_trace_brings_its_preset_machine_into_the_session(tmp_path):
    # a trace naming an A100 40 GB, into a session without one: the preset joins
    session = load_session(SESSION)
    assert not session.machines_matching("a100-40gb")
    trace = _one_kernel_trace(tmp_path / "one.json",
                              '[{"id": 0, "name": "NVIDIA A100-SXM4-40GB", '
                              '"totalGlobalMem": 42505273344}]')
    result = import_measurements(trace)
    assert [preset for _hw, preset in result.machines] == ["a100-40gb"]
    add_machines(session, result)
    attach_measurements(session, result.measurements, str(trace))
    (_entry,) = session.machines_matching("a100-40gb")
    (m,) = session.measurements[-1:]
    assert m.hardware == "a100-40gb" and m.precision == "bf16"
    assert m.flops == 2 * 64 * 16 * 32 and m.bytes == (64 * 32 + 32 * 16 + 64 * 16) * 2
    assert m.time_s == pytest.approx(2.5e-6)


def test_a_device_entry_without_a_name_is_said_as_such_not_as_no_entry(tmp_path):
    # the trace has deviceProperties, but its device's name is a number: saying "no
    # deviceProperties" sends the user looking for a key that is there
    trace = read_kineto_trace(_one_kernel_trace(tmp_path / "t.json",
                                                '[{"id": 0, "name": 7}]'))
    assert trace.gpu is None
    (line,) = [n for n in trace.notes if "names no GPU" in n]
    assert "no deviceProperties" not in line
    assert "deviceProperties entry of device 0 has no name" in line


def test_a_device_listed_twice_is_named_by_its_first_entry(tmp_path):
    trace = read_kineto_trace(_one_kernel_trace(
        tmp_path / "t.json", '[{"id": 0, "name": "NVIDIA H100 80GB HBM3"}, '
                             '{"id": 0, "name": "NVIDIA A100-SXM4-40GB"}]'))
    assert (trace.gpu, trace.preset) == ("NVIDIA H100 80GB HBM3", "h100-sxm")


def test_reductions_read_the_dimensions_recorded():
    f = count_operator
    # sum over dim [1] of [4, 5] fp32: 4 sums of 5 (one add per element); x read, 4 results
    rows = f("aten::sum", [[4, 5], [], [], []], ["float", "ScalarList", "Scalar", ""],
             ["", "[1]", "False", ""])
    assert (rows.flops, rows.bytes) == (20, 20 * 4 + 4 * 4)
    # amax over [] (every dimension) of bf16: one result
    top = f("aten::amax", [[4, 5], [], []], ["c10::BFloat16", "ScalarList", "Scalar"],
            ["", "[]", "False"])
    assert (top.flops, top.bytes, top.precision) == (20, 20 * 2 + 2, "bf16")
    # sum(x, dtype=…): the lone scalar is a type, not a dimension: all are reduced
    typed = f("aten::sum", [[4, 5], []], ["float", "Scalar"], ["", "6"])
    assert typed.bytes == 20 * 4 + 4 and "not recorded" not in typed.formula
    # an older trace without Concrete Inputs: FLOPs are the same whatever was reduced; the
    # one result taken for the bytes is said
    old = f("aten::sum", [[4, 5], [], [], []], ["float", "", "Scalar", ""])
    assert old.flops == 20 and "dimensions not recorded: taken as all" in old.formula
    # dimensions out of the input are refused, with the reason
    assert "not of an input" in f("aten::mean", [[4, 5], []], ["float", "ScalarList"],
                                  ["", "[2]"])
    # a bool is no dimension (PyTorch records a dimension as an int): refused as the norm's
    # reading refuses it, not taken as dimension 1
    assert "not of an input" in f("aten::sum", [[4, 5], []], ["float", "ScalarList"],
                                  ["", "[True]"])
    # pow: the exponents PyTorch's kernels special-case, as they compute them: x·x, x·x·x,
    # √x, 1/√x, 1/x, 1/(x·x); a general power (exp and log) has no fixed count
    for exponent, per in (("2", 1), ("3", 2), ("0.5", 1), ("-0.5", 1), ("-1", 1), ("-2.", 2)):
        got = f("aten::pow", [[4, 5], []], ["float", "Scalar"], ["", exponent])
        assert (got.flops, got.bytes) == (20 * per, 2 * 20 * 4), exponent
    for exponent in ("2.5", "True", "[2]", ""):
        assert "a general power has no fixed count" in f(
            "aten::pow", [[4, 5], []], ["float", "Scalar"], ["", exponent])


def test_losses_lookups_and_backward_steps_count_what_their_kernels_do():
    f = count_operator
    # silu's backward dy·s·(1 + x·(1 − s)), s = 1/(1 + e⁻ˣ): 4 for s, then 1 − s, x·, 1 +,
    # s·, dy· — 9 an element; dy and x read, dx written (bf16)
    silu = f("aten::silu_backward", [[2, 8], [2, 8]], ["c10::BFloat16"] * 2, ["", ""])
    assert (silu.flops, silu.bytes, silu.precision) == (9 * 16, 3 * 16 * 2, "bf16")
    assert f("aten::tanh_backward", [[16], [16]], ["float"] * 2).flops == 3 * 16
    # gather(x [100, 8], dim 0, index [4, 8]): the 32 elements picked copied out; int64
    # index read, each picked element read and written
    gather = f("aten::gather", [[100, 8], [], [4, 8], []], ["float", "Scalar", "long int",
                                                            "Scalar"], ["", "0", "", "False"])
    assert (gather.flops, gather.bytes) == (0, 32 * (8 + 4 + 4))
    # PyTorch's vectorized_gather_kernel runs only for an index expanded along its last
    # dimension (one index a row of 8): 4 indices in memory, the profiler records [4, 8]
    rows = f("aten::gather", [[100, 8], [], [4, 8], []], ["float", "Scalar", "long int",
                                                          "Scalar"], ["", "0", "", "False"],
             "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, …)")
    assert (rows.flops, rows.bytes) == (0, 4 * 8 + 32 * (4 + 4))
    # embedding_dense_backward(dy [2, 3, 16], indices [2, 3], 1000 words, …): 6 rows of 16
    # added into dW: one add an element; indices (8 bytes), dy, and the 6 rows of dW read
    # and written (the whole 1000-row dW is zeroed by a fill of its own)
    emb = f("aten::embedding_dense_backward", [[2, 3, 16], [2, 3], [], [], []],
            ["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"],
            ["", "", "1000", "-1", "False"])
    assert (emb.flops, emb.bytes) == (6 * 16, 6 * 8 + 6 * 16 * 2 * 3)
    assert "not one row per index" in f("aten::embedding_dense_backward", [[2, 5, 16], [2, 3]],
                                        ["float", "long int"])
    # nll_loss_forward(x [6, 10], target [6], no weight, mean): one add a row; the six
    # targets and the six scores they pick read; the loss and the total weight written
    nll = f("aten::nll_loss_forward", [[6, 10], [6], [], [], []],
            ["float", "long int", "", "Scalar", "Scalar"], ["", "", "", "1", "-100"])
    assert (nll.flops, nll.bytes) == (6, 6 * (4 + 8) + 2 * 4)
    # with a class weight [10]: w·x, the sum and the weights' sum, and the weight each row
    # picks read; reduction none writes a loss per row
    weighted = f("aten::nll_loss_forward", [[6, 10], [6], [10], [], []],
                 ["float", "long int", "float", "Scalar", "Scalar"], ["", "", "", "0", "-100"])
    assert (weighted.flops, weighted.bytes) == (3 * 6, 6 * (4 + 8 + 4) + 6 * 4)
    # its backward: −dy/total_weight into the element each row's target points at: 2 a row
    # for a mean; targets, dy and the six elements written
    back = f("aten::nll_loss_backward", [[], [6, 10], [6], [], [], [], []],
             ["float", "float", "long int", "", "Scalar", "Scalar", "float"],
             ["", "", "", "", "1", "-100", ""])
    assert (back.flops, back.bytes) == (2 * 6, 6 * (8 + 4) + 4)
    assert "expected [N, C] or [C] scores" in f(
        "aten::nll_loss_forward", [[2, 6, 10], [2, 6]], ["float", "long int"])
    # arange(0, 10, 3) into an int64 out tensor: 0, 3, 6, 9 written; what the plain form
    # records (its end alone, no out) says nothing of the type
    rng = f("aten::arange", [[], [], [], [0]], ["Scalar"] * 3 + ["long int"],
            ["0", "10", "3", ""])
    assert (rng.flops, rng.bytes) == (0, 4 * 8)
    assert "out tensor not recorded" in f("aten::arange", [[], [], [], [], []],
                                          ["Scalar", "", "", "", "Scalar"],
                                          ["512", "", "", "", "False"])
    # sizes no tensor has (a JSON number past 2⁶³, a range of 10³⁰⁸ / 10⁻³⁰⁰ values) are said,
    # not an OverflowError out of the import
    assert "no tensor input recorded" in f("aten::add", [[10**400]], ["float"])
    assert f("aten::arange", [[], [], [], [0]], ["Scalar"] * 3 + ["long int"],
             ["0", "1e308", "1e-300", ""]) == "aten::arange: its recorded sizes are past any tensor's"
    # clip_grad_norm_'s _foreach_norm over bf16 [4, 8] and [8] (LpNormFunctor<c10::BFloat16,
    # …>): x·x and its sum per element, a square root per tensor; the 40 elements and the two
    # norms; another order is said, not counted
    lp = ("multi_tensor_apply_kernel<TensorListMetadata<1>, LpNormFunctor<c10::BFloat16, "
          "(NormType)1, float, float>, float*, int>(…)")
    norms = f("aten::_foreach_norm", [[[4, 8], [8]], []], ["TensorList", "Scalar"],
              ["", "2"], lp)
    assert (norms.flops, norms.bytes, norms.precision) == (2 * 40 + 2, (40 + 2) * 2, "bf16")
    assert "2-norm alone" in f("aten::_foreach_norm", [[[4, 8], [8]], []],
                               ["TensorList", "Scalar"], ["", "1"], lp)
    # a list operation: the type is its functor's first argument; mul 1 an element, the two
    # lists read and the first written
    kernel = ("multi_tensor_apply_kernel<TensorListMetadata<2>, BinaryOpListAlphaFunctor<"
              "c10::BFloat16, 2, 2, 0>, std::multiplies<float>, float>(…)")
    lists = [[[4, 8], [8]], [[4, 8], [8]]]
    mul = f("aten::_foreach_mul_", lists, ["TensorList", "TensorList"], ["", ""], kernel)
    assert (mul.flops, mul.bytes, mul.precision) == (40, 3 * 40 * 2, "bf16")
    # copy_ reads the source list alone; zero_ writes only
    assert f("aten::_foreach_copy_", lists, ["TensorList"] * 2, None, kernel).bytes == 2 * 80
    assert f("aten::_foreach_zero_", lists[:1], ["TensorList"], None, kernel).bytes == 80
    assert "lists of tensors differ in size" in f(
        "aten::_foreach_add_", [[[4, 8]], [[4, 9]]], ["TensorList"] * 2, None, kernel)
    assert "not in its kernel's name" in f("aten::_foreach_add_", lists, ["TensorList"] * 2,
                                           None, "multi_tensor_apply_kernel<…>")


def test_a_layer_norms_backward_and_a_models_small_operators_are_counted():
    # the sampled recommendation step's native_layer_norm_backward over fp32 [2048, 742]
    # with γ and β [742] (an older PyTorch: no output_mask recorded, every gradient taken):
    # per element x̂ 2, dy·γ 1, the two row sums 3, dx 5, dγ 2, dβ 1 = 14; dy, x, μ and rstd
    # (one a row), γ read; dx, dγ and dβ written
    trace = read_kineto_trace(SAMPLED)
    norms = [m for m in trace.measurements
             if "aten::native_layer_norm_backward 2048 rows × 742 " in m.source]
    assert norms
    n, rows, hidden = 2048 * 742, 2048, 742
    assert {(m.flops, m.bytes) for m in norms} == {
        (14 * n, 4 * (3 * n + 2 * rows + 3 * hidden))} == {(21_274_624, 18_260_680)}
    assert "output_mask not recorded" in norms[0].source
    assert not [w for w, _n, _s in trace.not_counted if "native_layer_norm_backward" in w]
    f = count_operator
    # dx alone (output_mask [True, False, False]): 2 + 1 + 3 + 5 = 11; γ read, nothing of dγ
    # or dβ written
    dx = f("aten::native_layer_norm_backward",
           [[4, 8], [4, 8], [], [4, 1], [4, 1], [8], [8], []],
           ["float"] * 2 + [""] + ["float"] * 4 + [""],
           ["", "", "[8]", "", "", "", "", "[True, False, False]"])
    assert (dx.flops, dx.bytes) == (11 * 32, 4 * (3 * 32 + 2 * 4 + 8))
    # gelu's backward by its approximate argument: exact (erf) 11 an element, tanh 18
    exact = f("aten::gelu_backward", [[4, 8], [4, 8]], ["c10::BFloat16"] * 2, ["", "", "'none'"])
    tanh = f("aten::gelu_backward", [[4, 8], [4, 8]], ["c10::BFloat16"] * 2, ["", "", "'tanh'"])
    assert (exact.flops, tanh.flops, exact.bytes) == (11 * 32, 18 * 32, 3 * 32 * 2)
    # x ≥ 0.5 over fp32 [2048]: a compare each, x read and 2,048 bools written
    ge = f("aten::ge", [[2048], []], ["float", "Scalar"])
    assert (ge.flops, ge.bytes) == (2048, 2048 * 4 + 2048)
    # where(c [2048] bool, x [2048], y 0-d) fp32: no arithmetic; c, x, y read, out written
    where = f("aten::where", [[2048], [2048], []], ["bool", "float", "float"])
    assert (where.flops, where.bytes) == (0, 2048 + 2048 * 4 + 4 + 2048 * 4)
    assert "expected a bool condition" in f("aten::where", [[4], [4], [4]], ["float"] * 3)
    # masked_fill_(x [2048] fp32, mask [2048] bool, value): x read and written, the mask read
    fill = f("aten::masked_fill_", [[2048], [2048], []], ["float", "bool", "Scalar"])
    assert (fill.flops, fill.bytes) == (0, 2 * 2048 * 4 + 2048)
    # log, log2, log1p: one a value (as exp)
    assert f("aten::log2", [[1, 2048]], ["double"]).flops == 2048
    # the step's scatter_add_ of 8,856,548 fp32 values into 50 bins by an int64 index (an
    # older PyTorch names it "long"): one add each; index and src read, the bins read and
    # written
    n = 8_856_548
    assert {(m.flops, m.bytes) for m in trace.measurements
            if "scatter_add_ of 8856548 " in m.source} == {(n, n * (8 + 4) + 2 * 50 * 4)}
    # index_select of a 1-d int64 [2048] by 6,825 indices: index, picked and output
    assert {(m.flops, m.bytes) for m in trace.measurements
            if "index_select of [2048] by 6825 " in m.source} == {(0, 6825 * 8 * 3)}
    # its cumsum over int64 [2048]: one add an element, x read and y written
    assert {(m.flops, m.bytes) for m in trace.measurements
            if "aten::cumsum [2048] " in m.source} == {(2048, 2 * 2048 * 8)}
    # index_select of a matrix needs the dimension, which an older trace does not record
    assert "dimension selected along not recorded" in f(
        "aten::index_select", [[4, 8], [], [3]], ["float", "Scalar", "long"])
    assert f("aten::index_select", [[4, 8], [], [3]], ["float", "Scalar", "long"],
             ["", "1", ""]).bytes == 3 * 8 + 2 * 4 * 3 * 4


def test_a_recommendation_steps_fbgemm_operators_count_what_their_kernels_do():
    """The sampled step (a recommendation model) spends its time outside the collectives in
    FBGEMM's operators: their arithmetic as FBGEMM's CUDA kernels do it, worked out here
    from the recorded shapes (github.com/pytorch/FBGEMM, fbgemm_gpu/src/quantize_ops and
    sparse_ops)."""
    trace = read_kineto_trace(SAMPLED)

    def counted(head: str) -> set[tuple[float, float]]:
        got = {(m.flops, m.bytes) for m in trace.measurements if head in m.source}
        assert got, head
        return got

    # rowwise FP8 of fp32 [1,492,704, 256]: per element |x| and the row's max, x·scale, the
    # 8-bit conversion's min, compare and rounding add and subtract (7); the scale
    # max_pos/(ε + max) 2 a row; x read, rows of 256 bytes + 8 (the scale) written
    rows, n = 1_492_704, 1_492_704 * 256
    assert counted("fbgemm::FloatToFP8RowwiseQuantized [1492704,256] fp32") == {
        (7 * n + 2 * rows, 4 * n + 264 * rows)} == {(2_677_910_976, 1_922_602_752)}
    # and back: rows of 264 bytes hold 256 values; each ·2^(127 − bias) and ÷ the scale
    n = 1_638_400 * 256
    assert counted("fbgemm::FP8RowwiseQuantizedToFloat [1638400,264] (rows of 264 bytes)") == {
        (2 * n, 1_638_400 * 264 + 4 * n)} == {(838_860_800, 2_110_259_200)}
    # hybrid FP8 element by element: the conversion 4 a value (x read, a byte written); back,
    # one multiply (a byte read, a float written)
    assert counted("fbgemm::FloatToHFP8Quantized [419430400]") == {
        (4 * 419_430_400, 5 * 419_430_400)}
    assert counted("fbgemm::HFP8QuantizedToFloat [382132224]") == {
        (382_132_224, 5 * 382_132_224)}
    # the pooled embeddings [2048, 186,588] fp32 permuted (a copy) with its offsets [1391]
    # and permutation [1390] (int64); its backward permutes the gradient back
    copy = 2 * 2048 * 186_588 * 4
    assert counted("fbgemm::permute_pooled_embs_auto_grad [2048,186588]") == {
        (0, copy + (1391 + 1390) * 8)}
    assert counted("PermutePooledEmbsFunction<&fbgemm_gpu::permute_pooled_embs_gpu> > "
                   "[2048,186588]") == {(0, copy)}
    # 300 sparse features × 2048 permuted: the permutation, the lengths in and out, the
    # 16,334,339 indices in and out (int32); the lengths' running sums in and out, an add
    # each
    assert counted("fbgemm::permute_sparse_features lengths [300,2048] indices [16334339] "
                   "int32, to 300 features") == {
        (600 * 2048, 300 * 4 + 600 * 2048 * 4 + 2 * 16_334_339 * 4)} == {
        (1_228_800, 135_591_112)}
    assert counted("fbgemm::permute_2D_sparse_data lengths [1280,2048] indices [38910814] "
                   "int32, to 1280 features") == {
        (2560 * 2048, 1280 * 4 + 2560 * 2048 * 4 + 2 * 38_910_814 * 4)}
    # 767 features out of 623 repeat some: how many indices come out is not recorded
    assert any(w.startswith("fbgemm::permute_sparse_features: 767 features out of 623: the "
                            "permuted indices' count") for w, _n, _s in trace.not_counted)
    # the indices' bounds: two compares an index and two a bag; the row counts, the
    # 30,111,429 indices and the 2,359,297 offsets read (int64, and said so: counted at the
    # int32 roof, the derivation once named them int32 beside their 8 bytes)
    assert counted("fbgemm::bounds_check_indices indices [30111429] offsets [2359297] int64 "
                   "(2359296 bags)") == {
        (2 * 30_111_429 + 2 * 2_359_296, (9 + 30_111_429 + 2_359_297) * 8)}
    # a running sum of 2,359,296 int32 lengths into 2,359,297 offsets
    assert counted("fbgemm::asynchronous_complete_cumsum [2359296]") == {
        (2_359_296, (2_359_296 + 2_359_297) * 4)}
    # aten's: nan_to_num (x ≠ x, x = ±∞: 3 compares), logit (1 − x, ÷, log: 3, no eps
    # recorded) and its backward dy/(x·(1 − x)) 3, logical_and into a bool out tensor,
    # scatter_ of 2048 values (the index int64, src and the elements written fp32), the
    # 2-norm of fp32 [512, 8192] (x·x and a sum an element, one root)
    assert counted("aten::nan_to_num [2048,96] fp32") == {(3 * 196_608, 8 * 196_608)}
    assert counted("aten::logit [2048,1] fp32") == {(3 * 2048, 8 * 2048)}
    assert counted("aten::logit_backward [2048,1] fp32") == {(3 * 2048, 12 * 2048)}
    assert counted("aten::logical_and [2048]") == {(2048, 3 * 2048)}
    assert counted("aten::scatter_ of 2048 values into [2,2048,1] fp32") == {
        (0, 2048 * (8 + 4 + 4))}
    n = 512 * 8192
    assert counted("aten::linalg_vector_norm [512,8192] fp32") == {(2 * n + 1, 4 * (n + 1))}
    # FBGEMM's table-batched embedding lookup records neither its tables' widths nor how
    # its indices divide among them: said so, not "no rule"
    (lookup,) = [w for w, _n, _s in trace.not_counted
                 if w.startswith("fbgemm::split_embedding_codegen_lookup_rowwise_adagrad")]
    assert "row widths (total_D, D_offsets' values)" in lookup
    assert any(w.startswith("torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>"
                            ": the backward of FBGEMM's table-batched embedding lookup")
               for w, _n, _s in trace.not_counted)

    # what a newer PyTorch records (Concrete Inputs) counts the rest
    f = count_operator
    # logit with eps clamps first: 2 compares more; its backward likewise
    assert f("aten::logit", [[4, 8], []], ["float", "Scalar"], ["", "1e-06"]).flops == 5 * 32
    assert f("aten::logit_backward", [[4, 8], [4, 8], []], ["float", "float", "Scalar"],
             ["", "", "1e-06"]).flops == 5 * 32
    # max of every element; along a dimension (values and int64 indices); of two tensors
    whole = f("aten::max", [[4, 8]], ["c10::BFloat16"])
    assert (whole.flops, whole.bytes) == (32, 33 * 2)
    along = f("aten::min", [[4, 8], [], []], ["float", "Scalar", "Scalar"], ["", "1", "False"])
    assert (along.flops, along.bytes) == (32, 32 * 4 + 4 * (4 + 8))
    pair = f("aten::max", [[4, 8], [8]], ["float", "float"])
    assert (pair.flops, pair.bytes) == (32, 4 * (32 + 8 + 32))
    assert "dimension reduced not recorded" in f("aten::max", [[2, 2048, 1], [], []],
                                                 ["float", "Scalar", "Scalar"])
    # the 1-norm along dimension 1: |x| and a sum, no root; a general order is not counted
    l1 = f("aten::linalg_vector_norm", [[4, 8], [], [], [], []],
           ["float", "Scalar", "", "Scalar", ""], ["", "1", "[1]", "False", ""])
    assert (l1.flops, l1.bytes) == (64, 4 * (32 + 4))
    assert "orders 0, 1, 2 and ±∞ alone" in f(
        "aten::linalg_vector_norm", [[4, 8], [], [], [], []],
        ["float", "Scalar", "", "Scalar", ""], ["", "3", "", "False", ""])
    # repeat_interleave(repeats [5], output_size=12): a running sum of the repeats, the
    # 12 int64 indices written; without output_size, its output's size is unknown
    rep = f("aten::repeat_interleave", [[5], []], ["long", "Scalar"], ["", "12"])
    assert (rep.flops, rep.bytes) == (5, 5 * 8 + 12 * 8)
    assert "output's size" in f("aten::repeat_interleave", [[5], []], ["long", "Scalar"])
    # scatter_ with reduce='add': an add a value, the elements written read first; the
    # out-of-place scatter copies self first
    add = f("aten::scatter_", [[4, 8], [], [2, 8], [2, 8], []],
            ["float", "Scalar", "long", "float", ""], ["", "0", "", "", "'add'"])
    assert (add.flops, add.bytes) == (16, 16 * 8 + 16 * 4 + 2 * 16 * 4)
    out = f("aten::scatter", [[4, 8], [], [2, 8], []], ["float", "Scalar", "long", "Scalar"])
    assert (out.flops, out.bytes) == (0, 16 * 8 + 16 * 4 + 2 * 32 * 4)
    # FP8 rows back to fp16 (output_dtype 1, FBGEMM's SparseType.FP16): 2 bytes a value
    fp16 = f("fbgemm::FP8RowwiseQuantizedToFloat", [[10, 24], [], []],
             ["unsigned char", "Scalar", "Scalar"], ["", "True", "1"])
    assert (fp16.flops, fp16.bytes) == (2 * 10 * 16, 10 * 24 + 10 * 16 * 2)
    # a 2-D permutation that repeats features counts where the indices' total is recorded
    two_d = f("fbgemm::permute_2D_sparse_data", [[3], [2, 4], [20], [], []],
              ["int", "int", "int", "", "Scalar"], ["", "", "", "", "30"])
    assert (two_d.flops, two_d.bytes) == ((2 + 3) * 4, 3 * 4 + 5 * 4 * 4 + (20 + 30) * 4)


def _recorded(name: str, dims: list, trace: Path = CPU_OPS) -> list[OpCount | str]:
    """What each record of operator ``name`` with input shapes ``dims`` in a CPU trace
    (tests/fixtures/cpu: PyTorch 2.14's records, Concrete Inputs and all) counts to."""
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    got = [count_operator(name, e["args"]["Input Dims"], e["args"]["Input type"],
                          e["args"].get("Concrete Inputs")) for e in events
           if e.get("cat") == "cpu_op" and e.get("name") == name
           and e["args"].get("Input Dims") == dims]
    assert got, (name, dims)
    return got


def _counted(name: str, dims: list) -> set[tuple[float, float]]:
    got = _recorded(name, dims)
    assert all(isinstance(g, OpCount) for g in got), got
    return {(g.flops, g.bytes) for g in got}


def test_a_convolutional_networks_training_step_is_counted_from_pytorchs_records():
    """A small CNN's training step as PyTorch 2.14 records it (record_shapes=True): its
    convolutions' backward, batch norms, poolings, counted by hand (fp32: 4 bytes)."""
    # convolution_backward of a 3×3 convolution 8 → 16 channels, stride 2, on [4, 8, 8, 8]
    # (dy [4, 16, 4, 4]); output_mask [True, True, False]: dx and dW, each as many FLOPs as
    # the forward, 2·N·|w|·(output positions) = 2·4·(16·8·3·3)·16 = 147,456; dy and w read
    # for dx, dy and x for dW (dy once), dx and dW written
    forward = 2 * 4 * (16 * 8 * 9) * 16
    assert _counted("aten::convolution_backward",
                    [[4, 16, 4, 4], [4, 8, 8, 8], [16, 8, 3, 3], [], [], [], [], [], [], [], []]
                    ) == {(2 * forward, 4 * (1024 + 1152 + 2048 + 2048 + 1152))}
    # the first convolution's (3 → 8 channels, 16×16 kept): the input needs no gradient
    # (output_mask [False, True, True]): dW and db; dy, x read, dW and db written
    assert _counted("aten::convolution_backward",
                    [[4, 8, 16, 16], [4, 3, 16, 16], [8, 3, 3, 3], [], [], [], [], [], [], [],
                     []]) == {(2 * 4 * 216 * 256, 4 * (8192 + 3072 + 216 + 8))}
    # batch norm in training over [4, 8, 16, 16]: as a layer norm, 8 an element; x read, y
    # written, γ, β and the running statistics (8 each) read
    n = 4 * 8 * 16 * 16
    assert _counted("aten::native_batch_norm",
                    [[4, 8, 16, 16], [8], [8], [8], [8], [], [], []]) == {
        (8 * n, 4 * (2 * n + 4 * 8))}
    # its backward over [4, 16, 4, 4] in training, every gradient: x̂ 2, the channel sums
    # Σdy and Σdy·x̂ 3 (dβ and dγ themselves), dx 5; dy, x read, dx written; γ, the saved
    # mean and invstd read, dγ and dβ written (16 each)
    n = 4 * 16 * 4 * 4
    assert _counted("aten::native_batch_norm_backward",
                    [[4, 16, 4, 4], [4, 16, 4, 4], [16], [16], [16], [16], [16], [], [], []]
                    ) == {(10 * n, 4 * (3 * n + 5 * 16))}
    # 2×2 max pooling of [4, 8, 16, 16] to 8×8: 4 compares an output; x read, the maxima and
    # their int64 indices written; its backward adds each dy at its index (dy and the
    # indices read, dx written)
    outputs = 4 * 8 * 8 * 8
    assert _counted("aten::max_pool2d_with_indices", [[4, 8, 16, 16], [], [], [], [], []]) \
        == {(4 * outputs, 4 * 4 * outputs + 12 * outputs)}
    assert _counted("aten::max_pool2d_with_indices_backward",
                    [[4, 8, 8, 8], [4, 8, 16, 16], [], [], [], [], [], [4, 8, 8, 8]]) == {
        (outputs, 12 * outputs + 4 * 4 * outputs)}
    # adaptive average pooling of [4, 16, 4, 4] to 1×1: 16 adds and a division an output
    assert _counted("aten::adaptive_avg_pool2d", [[4, 16, 4, 4], []]) == {
        (1024 + 64, 4 * (1024 + 64))}
    # the arguments the rules above read, as PyTorch 2.14 records them: logit's eps (a clamp:
    # 5 an element), max along dimension 1 (values and int64 indices), min of every element,
    # the 1-norm along dimension 1 (no root) and the 2-norm of all (one root),
    # repeat_interleave's output_size, and scatter_'s reduce form (its string not recorded:
    # 'add' or 'multiply', one operation a value either way)
    assert _counted("aten::logit", [[4, 8], []]) >= {(5 * 32, 8 * 32)}
    assert _counted("aten::logit_backward", [[4, 8], [4, 8], []]) == {(5 * 32, 12 * 32)}
    assert _counted("aten::max", [[4, 8], [], []]) == {(32, 4 * 32 + 4 * 12)}
    assert _counted("aten::min", [[4, 8]]) == {(32, 4 * 33)}
    assert _counted("aten::linalg_vector_norm", [[4, 8], [], [], [], []]) == {
        (64, 4 * (32 + 4)), (65, 4 * 33)}
    assert _counted("aten::repeat_interleave", [[3], []]) == {(3, 3 * 8 + 6 * 8)}
    assert _counted("aten::scatter_", [[2, 8], [], [1, 8], [1, 8], []]) == {
        (8, 8 * (8 + 4 + 4 + 4))}
    assert _counted("aten::scatter_", [[2, 8], [], [1, 8], [1, 8]]) == {(0, 8 * (8 + 4 + 4))}
    # index_put_ records its values but not its indices (PyTorch 2.14 neither): said so
    (put,) = _recorded("aten::_index_put_impl_", [[2, 8], [], [2, 8], [], []])
    assert put == ("aten::_index_put_impl_: its indices (a list of optional tensors) are not "
                   "recorded, so neither is how many elements it reads and writes")
    # the sum of every element (sum(self, dtype)): its dimensions are not "not recorded"
    (whole,) = _recorded("aten::sum", [[4, 8], []])
    assert isinstance(whole, OpCount) and "not recorded" not in whole.formula

    f = count_operator
    # cuDNN's batch norm backward takes the input first (input, grad_output, weight, …) and
    # computes every gradient in training
    cudnn = f("aten::cudnn_batch_norm_backward",
              [[2, 4, 3, 3], [2, 4, 3, 3], [4], [4], [4], [4], [4], [], []],
              ["c10::BFloat16"] * 7 + ["Scalar", ""])
    assert (cudnn.flops, cudnn.bytes) == (10 * 72, 2 * (3 * 72 + 5 * 4))
    # a batch norm in eval: (x − μ)·rstd·γ + β from the running statistics, 4 an element
    evaluated = f("aten::native_batch_norm", [[2, 4, 3, 3], [4], [4], [4], [4], [], [], []],
                  ["float"] * 5 + ["Scalar"] * 3, ["", "", "", "", "", "False", "0.1", "1e-05"])
    assert evaluated.flops == 4 * 72
    # a transposed convolution's backward counts its input positions, as its forward does
    transposed = f("aten::convolution_backward",
                   [[1, 4, 8, 8], [1, 8, 4, 4], [8, 4, 2, 2]] + [[]] * 8,
                   ["float"] * 3 + ["ScalarList"] * 4 + ["Scalar", "ScalarList", "Scalar",
                                                         "ScalarList"],
                   ["", "", "", "[0]", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1",
                    "[True, True, False]"])
    assert transposed.flops == 2 * (2 * 1 * (8 * 4 * 2 * 2) * 16)
    # a max pool needs its kernel size: an older trace does not record it
    assert "kernel size, stride and padding not recorded" in f(
        "aten::max_pool2d_with_indices", [[4, 8, 16, 16], [], [], [], [], []],
        ["float", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"])
    # 3×3 windows, stride 2, padding 1 over 8×8 with ceil_mode: ⌈(8 + 2 − 2 − 1)/2⌉ + 1 = 5
    # a side (4 without it), as PyTorch makes it
    pooled = f("aten::max_pool2d_with_indices", [[1, 1, 8, 8], [], [], [], [], []],
               ["float", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
               ["", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "True"])
    assert pooled.flops == 9 * 25
    # adaptive pooling of 5 into 3: windows [0, 2), [1, 4), [3, 5): 2 + 3 + 2 = 7 a side
    adaptive = f("aten::_adaptive_avg_pool2d", [[1, 1, 5, 5], []], ["float", "ScalarList"],
                 ["", "[3, 3]"])
    assert adaptive.flops == 7 * 7 + 9


def test_fbgemms_embedding_lookup_is_counted_where_its_record_tells_the_row_width():
    """FBGEMM 1.9's table-batched embedding lookup records its forward with total_D and
    max_D (tests/fixtures/cpu/tbe_ops.json.gz): where they say one width (total_D = T·max_D),
    each of the N indices' rows of D adds into its bag."""
    head = [[4800], [], [], [], [3], [3], [4], [], [], [4], [60], [13], [], []]
    # 3 tables of 100 rows of 16 fp32, 4 bags of 5 a table: 60 rows of 16 added; indices and
    # the 13 offsets (int64) and the 60 rows read, the pooled [4, 48] fp32 written
    pooled = 4 * 48 * 4
    moved = 60 * 8 + 13 * 8 + 60 * 16 * 4 + pooled
    got = {(c.flops, c.bytes) for c in _recorded(
        "fbgemm::split_embedding_codegen_forward_unweighted_pt2_wrapper",
        [*head, [0], [0], [], []], TBE_OPS) if isinstance(c, OpCount)}
    # by sum, and by mean (a division a pooled element more)
    assert got == {(60 * 16, moved), (60 * 16 + 4 * 48, moved)}
    # with a weight an index: a multiply and an add a row element; the weights read
    (weighted,) = _recorded("fbgemm::split_embedding_codegen_forward_weighted_pt2_wrapper",
                            [*head[:13], [60], [0], [0], [], []], TBE_OPS)
    assert isinstance(weighted, OpCount)
    assert (weighted.flops, weighted.bytes) == (2 * 60 * 16, moved + 60 * 4)
    # the pooled output's type is FBGEMM's SparseType code (argument 17): FP16 (1) writes 2
    # bytes a value; a code of no output type this rule knows (INT8, 2) is not counted, as
    # the FP8 dequantization's is not
    with gzip.open(TBE_OPS, "rt", encoding="utf-8") as f:
        record = next(e["args"] for e in json.load(f)["traceEvents"] if e.get("name") ==
                      "fbgemm::split_embedding_codegen_forward_unweighted_pt2_wrapper")
    told = list(record["Concrete Inputs"])
    for code, written in (("1", 4 * 48 * 2), ("2", None)):
        told[17] = code
        got = count_operator("fbgemm::split_embedding_codegen_forward_unweighted_pt2_wrapper",
                             record["Input Dims"], record["Input type"], told)
        if written is None:
            assert isinstance(got, str)
            assert got.endswith(": output type 2 not one of FP32, FP16, BF16")
        else:
            assert isinstance(got, OpCount) and "fp16" in got.formula
            assert got.bytes == moved - pooled + written
    # tables of 8 and 16: how the indices divide between them is not recorded
    (two,) = _recorded("fbgemm::split_embedding_codegen_forward_unweighted_pt2_wrapper",
                       [[2400], [], [], [], [2], [2], [3], [], [], [3], [40], [9], [], [],
                        [0], [0], [], []], TBE_OPS)
    assert two == ("fbgemm::split_embedding_codegen_forward_unweighted_pt2_wrapper: its 2 "
                   "tables' rows differ in width (total_D 24, the widest 16) and how its "
                   "indices divide among them is not recorded")
    # FBGEMM 1.9's other operators, recorded as the sampled step's older FBGEMM records them
    # (the same arguments, Concrete Inputs added): a 2-D permutation of 2 features × 2 that
    # records its indices' count (6), two adds of running sums a length; hybrid FP8 of
    # [2, 4] fp32 (the conversion 4 a value; 4 bytes read, 1 written a value)
    (two_d,) = _recorded("fbgemm::permute_2D_sparse_data", [[2], [2, 2], [6], [], []],
                         TBE_OPS)
    assert isinstance(two_d, OpCount) and "the indices' count recorded" in two_d.formula
    assert (two_d.flops, two_d.bytes) == (8, 4 * (2 + 8 + 12))
    (hfp8,) = _recorded("fbgemm::FloatToHFP8Quantized", [[2, 4], [], [], []], TBE_OPS)
    assert isinstance(hfp8, OpCount) and (hfp8.flops, hfp8.bytes) == (4 * 8, 5 * 8)
    # the backward (and its optimizer's update) is listed: how many distinct rows it updates
    # is not recorded
    assert "how many distinct rows it updates is not recorded" in count_operator(
        "fbgemm::split_embedding_backward_codegen_rowwise_adagrad_unweighted_pt2_wrapper",
        [[4, 48]], ["float"])


def test_a_resnet_training_step_on_a_v100_is_counted_whole():
    """ResNet-50 training steps (batch 32, fp32) on a V100, from Kineto's samples (2021: shapes
    recorded, no Concrete Inputs). cuDNN's convolution backward (dx and dW, its own inner
    operators for each) and the batch norms are counted; a forward convolution, whose stride
    and padding that PyTorch did not record, by its output's shape, which the gradient of its
    backward has in the same trace."""
    trace = read_kineto_trace(RESNET)
    assert trace.kernels == 8772 and trace.gpu == "Tesla V100-DGXS-32GB"
    assert trace.preset == "v100-sxm2-32gb"  # (judged on its own machine)
    # 591.532 ms of GPU time; left out: 6 max pools, 1.420 ms (their kernel size is not
    # recorded), and 636 kernels of no duration: 590.112 ms counted, 99.8 % (32 % before the
    # convolutions were)
    assert trace.gpu_time_s == pytest.approx(591.532e-3)
    assert trace.counted_time_s == pytest.approx((591.532 - 1.420) * 1e-3)
    assert [(w.split(": ")[0], n) for w, n, _s in trace.not_counted] == [
        ("aten::max_pool2d_with_indices", 6), ("kernels of zero duration", 636)]
    assert trace.notes[0].startswith("counted 99.8 % of GPU time (8,130 of 8,772 kernels")

    def counted(head: str) -> set[tuple[float, float]]:
        got = {(m.flops, m.bytes) for m in trace.measurements if head in m.source}
        assert got, head
        return got

    # the last block's 1×1 convolution 512 → 2048 channels at 7×7: dx and dW (output_mask
    # not recorded), each 2·32·(2048·512·1·1)·49; dy, w (for dx) and x (for dW) read, dx and
    # dW written
    forward = 2 * 32 * (2048 * 512) * 49
    assert counted("aten::cudnn_convolution_backward dy [32,2048,7,7] x [32,512,7,7] w "
                   "[2048,512,1,1]") == {
        (2 * forward, 4 * (32 * 2048 * 49 + 2 * 2048 * 512 + 2 * 32 * 512 * 49))}
    # the first convolution, 7×7 of 3 → 64 channels on 224×224: its backward's gradient is
    # [32, 64, 112, 112], so 2·32·(64·3·7·7)·112² FLOPs; x, w and y
    assert counted("aten::_convolution x [32,3,224,224] w [64,3,7,7]") == {
        (2 * 32 * (64 * 3 * 49) * 112 * 112,
         4 * (32 * 3 * 224 * 224 + 64 * 3 * 49 + 32 * 64 * 112 * 112))}
    # the first batch norm, over [32, 64, 112, 112] in training (training not recorded:
    # taken as true): 8 an element; its backward 10
    n = 32 * 64 * 112 * 112
    assert counted("aten::cudnn_batch_norm [32,64,112,112]") == {(8 * n, 4 * (2 * n + 4 * 64))}
    assert counted("aten::cudnn_batch_norm_backward [32,64,112,112]") == {
        (10 * n, 4 * (3 * n + 5 * 64))}
    # two backward records of one input and weight with different gradients (two layers of
    # other strides) tell no forward its output
    from workbench.model.opcount import convolution_outputs
    one = ("aten::convolution_backward", [[1, 8, 4, 4], [1, 3, 8, 8], [8, 3, 3, 3]],
           ["float"] * 3)
    other = ("aten::convolution_backward", [[1, 8, 8, 8], [1, 3, 8, 8], [8, 3, 3, 3]],
             ["float"] * 3)
    assert convolution_outputs([one]) == {((1, 3, 8, 8), (8, 3, 3, 3)): [1, 8, 4, 4]}
    assert convolution_outputs([one, other]) == {}


def test_a_concatenation_reads_its_element_type_from_its_kernel():
    f = count_operator
    dims, types = [[[2, 3], [2, 5]], []], ["TensorList", "Scalar"]
    # an older PyTorch names the type itself: c10::BFloat16, 2 bytes; 2·3 + 2·5 = 16 elements
    # read and 16 written
    named = f("aten::cat", dims, types, ["", "1"],
              "void at::native::CatArrayBatchedCopy<c10::BFloat16, unsigned int, 2, 128, 1>("
              "c10::BFloat16*, at::native::CatArrInputTensorMetadata<c10::BFloat16, "
              "unsigned int, 128, 1>, int, unsigned int)")
    assert (named.flops, named.bytes, named.precision) == (0, 2 * 16 * 2, "bf16")
    # a newer one its size: OpaqueType<8u>, 8 bytes
    sized = f("aten::cat", dims, types, None, "CatArrayBatchedCopy_contig<at::native::("
              "anonymous namespace)::OpaqueType<8u>, unsigned int, 2, 128, 1>(…)")
    assert (sized.bytes, sized.precision) == (2 * 16 * 8, "fp64")
    assert "OpaqueType<8u>" in sized.formula and "[2,3] + [2,5]" in sized.formula
    # a kernel that does not say (a plain copy), or no kernel: listed with the reason
    for kernel in ("void at::native::direct_copy_kernel_cuda(…)", None):
        assert f("aten::cat", dims, types, None, kernel) == (
            "aten::cat: element type not recorded (a TensorList) and not in its kernel's name")
    assert "shapes not recorded" in f("aten::cat", [[2, 3], []], types, None, named.formula)


def test_a_fused_adam_step_counts_what_its_options_add():
    f = count_operator
    lists = [[[4, 8], [8]]] * 6  # params, grads, m, v, v̂ (empty unless amsgrad), steps
    dims = lists + [[]] * 9
    types = ["TensorList"] * 6 + ["Scalar"] * 7 + ["", ""]
    kernel = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::("
              "anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::("
              "anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, "
              "false>, float const*, double>(…)")
    args = ["", "", "", "", "", "", "0.001", "0.9", "0.999", "0.0", "1e-08", "False", "False",
            "", ""]
    n = 4 * 8 + 8
    # Adam without weight decay: m 3, v 4, denominator 3, step 3; p g m v read, p m v written
    plain = f("aten::_fused_adam_", dims, types, args, kernel)
    assert (plain.flops, plain.bytes, plain.precision) == (13 * n, 7 * 4 * n, "fp32")
    # weight decay 2 more; amsgrad's max 1 more and v̂ read and written; a gradient scale
    # (a tensor recorded at grad_scale) 1 more and g written back
    decayed = [*args[:9], "0.01", *args[10:]]
    assert f("aten::_fused_adamw_", dims, types, decayed, kernel).flops == 15 * n
    amsgrad = [*decayed[:11], "True", *decayed[12:]]
    wide = f("aten::_fused_adamw_", dims, types, amsgrad, kernel)
    assert (wide.flops, wide.bytes) == (16 * n, 9 * 4 * n) and "v̂" in wide.formula
    scaled = f("aten::_fused_adamw_", dims, [*types[:13], "float", ""], decayed, kernel)
    assert (scaled.flops, scaled.bytes) == (16 * n, 8 * 4 * n)
    # an element type nowhere to be read is said
    assert f("aten::_fused_adam_", dims, types, args, "multi_tensor_apply_kernel<…>") == (
        "aten::_fused_adam_: element type not recorded (a TensorList) and not in its kernel's "
        "name")


def test_flop_rules_follow_torch_flop_counter():
    f = count_operator
    # bmm [b,m,k]·[b,k,n]: 2·b·m·n·k
    assert f("aten::bmm", [[4, 8, 16], [4, 16, 32]], ["float", "float"]).flops == \
        2 * 4 * 8 * 32 * 16
    # SDPA forward q,k,v [b,h,s,d]: 2·b·h·s_q·s_k·d_q + 2·b·h·s_q·s_k·d_v
    sdpa = f("aten::_scaled_dot_product_flash_attention", [[2, 8, 128, 64]] * 3,
             ["c10::BFloat16"] * 3)
    assert sdpa.flops == 4 * 2 * 8 * 128 * 128 * 64 and sdpa.precision == "bf16"
    assert sdpa.bytes == 4 * 2 * 8 * 128 * 64 * 2  # Q, K, V read, O written
    assert "is_causal not recorded: every score counted" in sdpa.formula
    # causal, as PyTorch 2.1+ records it (q, k, v, dropout_p, is_causal, …): the scores the
    # mask keeps, c = 1 − 128/(2·128) = ½, as the attention kind counts a Flash kernel
    causal = f("aten::_scaled_dot_product_flash_attention", [[2, 8, 128, 64]] * 3 + [[]] * 4,
               ["c10::BFloat16"] * 3 + ["Scalar"] * 4, ["", "", "", "0.", "True", "False", ""])
    assert causal.flops == sdpa.flops / 2 and causal.bytes == sdpa.bytes
    # decode (one query over 128 keys): c = 1 − 1/256
    decode = f("aten::_scaled_dot_product_flash_attention", [[2, 8, 1, 64], [2, 8, 128, 64],
                                                             [2, 8, 128, 64]] + [[]] * 4,
               ["c10::BFloat16"] * 3 + ["Scalar"] * 4, ["", "", "", "0.", "True", "False", ""])
    assert decode.flops == 4 * 2 * 8 * 1 * 128 * 64 * (1 - 1 / 256)
    # backward: five products, 2·b·h·s_q·s_k·(2·d_q + 3·d_v) = 10·b·h·s²·d
    back = f("aten::_scaled_dot_product_flash_attention_backward", [[2, 8, 128, 64]] * 4,
             ["c10::BFloat16"] * 4)
    assert back.flops == 10 * 2 * 8 * 128 * 128 * 64
    # convolution x [8,3,32,32], w [16,3,3,3], stride 1, padding 1: 32×32 outputs,
    # 2·N·|w|·positions = 2·8·432·1024
    conv = f("aten::convolution", [[8, 3, 32, 32], [16, 3, 3, 3], [16], [], [], [], [], [], []],
             ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar",
              "ScalarList", "Scalar"],
             ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"])
    assert conv.flops == 2 * 8 * (16 * 3 * 3 * 3) * 32 * 32
    # without the recorded stride and padding a convolution is listed, not guessed
    assert "stride, padding and dilation not recorded" in f(
        "aten::convolution", [[8, 3, 32, 32], [16, 3, 3, 3]], ["float", "float"])
    # the product's kinds: layer norm 8 FLOPs per element, softmax 5, gelu 9
    assert f("aten::native_layer_norm", [[4, 1024], [1024], [1024], [1024], []],
             ["float"] * 4 + ["Scalar"]).flops == 8 * 4 * 1024
    assert f("aten::_softmax", [[4, 1024], [], []], ["float", "Scalar", "Scalar"]).flops == \
        5 * 4 * 1024
    assert f("aten::gelu", [[4, 1024]], ["c10::Half"]).flops == 9 * 4 * 1024
    assert "no input shapes recorded" in f("aten::mm", [], [])


def test_analyze_reads_a_trace_and_refuses_a_bad_one_in_one_line(tmp_path):
    # the AMD trace is judged on an AMD machine (beside the example's NVIDIA ones)
    session = tmp_path / "s.yaml"
    session.write_text(SESSION.read_text(encoding="utf-8").replace(
        "hardware:\n", "hardware:\n  - preset: mi250x\n", 1), encoding="utf-8")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "workbench", "analyze", str(session),
                               "--measurements", *map(str, args), "--format", "json"],
                              cwd=REPO, capture_output=True, text=True, timeout=HANG_GUARD_S)

    ok = run(AMD)
    assert ok.returncode == 0, ok.stderr
    assert "note: " in ok.stderr and "counted 100 % of GPU time" in ok.stderr
    assert "Cijk_Alik_Bljk_SB" in ok.stdout  # the addmm GEMM, judged
    bad = run(CPU_ONLY)
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "holds no GPU kernels" in bad.stderr


def test_plain_json_with_a_byte_order_mark_reads_like_the_gzip(tmp_path):
    text = gzip.decompress(AMD.read_bytes())
    plain = tmp_path / "trace.json"
    plain.write_bytes(b"\xef\xbb\xbf" + text)
    got = [(m.name, m.flops, m.bytes, m.time_s) for m in read_kineto_trace(plain).measurements]
    assert got == [(m.name, m.flops, m.bytes, m.time_s)
                   for m in read_kineto_trace(AMD).measurements]


def test_cancel_stops_a_trace_between_pieces(tmp_path):
    # about 3 MB of kernel events: read in 1 MiB pieces, Cancel is looked at after each
    event = ('{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, '
             '"dur": 1, "args": {"correlation": 1, "device": 0, "stream": 7}}')
    big = tmp_path / "big.json"
    big.write_text('{"traceEvents": [' + ",\n".join([event] * 25_000) + "]}", encoding="utf-8")
    seen = []
    with pytest.raises(ImportCancelled):
        read_kineto_trace(big, progress=seen.append, cancelled=lambda: bool(seen))
    # one 1 MiB piece read, its share of the file told, then stopped
    assert seen == [pytest.approx((1 << 20) / big.stat().st_size)]


def test_one_value_is_said_as_one():
    """A trace's scalars are tensors of one element: arange(0, 1, 1) writes 1 value (8
    bytes of int64), and its count says so, not "1 values"."""
    one = count_operator("aten::arange", [[], [], [], [1]],
                         ["Scalar", "Scalar", "Scalar", "long int"], ["0", "1", "1", ""])
    assert isinstance(one, OpCount) and (one.flops, one.bytes) == (0.0, 8.0)
    assert one.formula.startswith("aten::arange(0, 1, 1) int64: 1 value written, 0 FLOPs")
    assert one.precision == "int32"  # (the roof it is held against: no int64 peak)
    many = count_operator("aten::arange", [[], [], [], [512]],
                          ["Scalar", "Scalar", "Scalar", "long int"], ["0", "512", "1", ""])
    assert isinstance(many, OpCount) and ": 512 values written" in many.formula


#: What a trace's JSON can hold where the operator's arguments are
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5000) | st.floats(allow_nan=True)
    | st.sampled_from([2**62, 2**63, 10**400])
    | st.sampled_from(["float", "c10::BFloat16", "TensorList", "Scalar", "", "True", "[1]",
                       "2", "0.01", "1e308", "1e-300", "long int"]),
    lambda inner: st.lists(inner, max_size=6), max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(COUNTED_OPERATORS)), dims=st.lists(_JSON, max_size=16),
       types=st.lists(_JSON, max_size=16), concrete=st.none() | st.lists(_JSON, max_size=16),
       kernel=st.none() | st.sampled_from([
           "CatArrayBatchedCopy<OpaqueType<2u>, unsigned int>", "CatArrayBatchedCopy<",
           "FusedAdamMathFunctor<c10::BFloat16, 4>", "FusedAdamMathFunctor<<<(",
           "BinaryOpScalarFunctor<float, 1, 1, 0>", "UnaryOpFunctor<(", "k"]))
def test_any_recorded_arguments_give_a_count_or_a_reason(name, dims, types, concrete, kernel):
    # a trace is a user's file: whatever its argument lists hold (nested lists where a type's
    # name should be, numbers, nothing), an operator is counted or said why not, never a
    # crash (a list among the types raised TypeError: unhashable type)
    got = count_operator(name, dims, types, concrete, kernel)
    assert isinstance(got, OpCount | str)
    if isinstance(got, str):
        assert got.startswith(f"{name}: ")


def test_ids_that_are_not_numbers_join_nothing(tmp_path):
    # correlation, External id, device and thread ids are numbers or texts in every trace a
    # profiler writes; a hand-edited one with lists there was a crash (unhashable type): such
    # a kernel is read, and listed as launched from nowhere the trace recorded
    trace = tmp_path / "odd.json"
    trace.write_text(
        '{"traceEvents": ['
        '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": [1], "tid": 1, "ts": 0, '
        '"dur": 90, "args": {"Input Dims": [[8, 64], [64, 256]], '
        '"Input type": ["float", "float"], "External id": [7]}},'
        '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": [1], "tid": 1,'
        ' "ts": 10, "dur": 4, "args": {"correlation": [3]}},'
        '{"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 20, '
        '"dur": 3, "args": {"correlation": [3], "External id": [7], "device": [0]}},'
        '{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 100, '
        '"dur": 20, "args": {"Input Dims": [[4], [4]], "Input type": ["float", "float"]}},'
        '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, '
        '"ts": 105, "dur": 4, "args": {"correlation": 4}},'
        '{"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 120, '
        '"dur": 1, "args": {"correlation": 4, "device": 0}}]}', encoding="utf-8")
    result = read_kineto_trace(trace)
    assert [m.name for m in result.measurements] == ["add_kernel"]  # (4 + 4 read, 4 written)
    assert result.measurements[0].bytes == 12 * 4
    assert result.not_counted == [("its launch is not in the trace (made before the profiled "
                                   "span)", 1, pytest.approx(3e-6))]


def _operators(path: Path, n: int) -> None:
    """A trace of ``n`` operators as a training loop records them: counted ones with their
    shapes (the same few over and over), one in six launching a GEMM kernel."""
    shapes = ([4, 512], [8, 1024], [16, 4096], [1, 128])
    with path.open("w", encoding="utf-8") as f:
        f.write('{"traceEvents": [\n')
        for i in range(n):
            name = ("aten::mul", "aten::add", "aten::mm", "aten::view", "aten::sum",
                    "aten::relu")[i % 6]
            shape = shapes[(i // 6) % len(shapes)]
            dims = [shape, [shape[1], 2 * shape[0]]] if name == "aten::mm" else [shape, shape]
            ts = 1_700_000_000_000.0 + 11 * i
            f.write(("," if i else "") + json.dumps(
                {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1 + (i % 12 == 0),
                 "ts": ts, "dur": 9.5, "args": {"External id": i + 1, "Input Dims": dims,
                                                "Input type": ["float", "float"]}}) + "\n")
            if name == "aten::mm":
                f.write("," + json.dumps(
                    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                     "tid": 1 + (i % 12 == 0), "ts": ts + 2, "dur": 3.0,
                     "args": {"correlation": i}}))
                f.write("," + json.dumps(
                    {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0,
                     "tid": 7, "ts": ts + 5, "dur": 5.0, "args": {"correlation": i}}) + "\n")
        f.write("]}\n")


def test_a_trace_of_many_operators_is_read_in_little_memory(tmp_path):
    # a PyTorch trace of a million operators (165 MB of JSON) took 900 MB to read, a laptop's
    # spare memory: every operator's decoded shapes and a tuple of Python numbers were kept.
    # Shapes are kept once for all operators that share them, spans in arrays
    import tracemalloc

    trace = tmp_path / "loop.json"
    _operators(trace, 60_000)
    tracemalloc.start()
    try:
        result = read_kineto_trace(trace)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.kernels == 10_000 and len(result.measurements) == 10_000
    assert peak < 60_000 * 300, f"{peak / 60_000:.0f} bytes an operator"


def test_times_no_float_holds_exactly_place_launches_as_written(tmp_path):
    # nanosecond timestamps as integers past 2⁵³, and a NaN: an 8-byte float (256 ns apart
    # there) would round the end of the first aten::mm past the launch made 70 ns after it
    base = 1 << 60
    trace = tmp_path / "ns.json"
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": base,
         "dur": 130, "args": {"Input Dims": [[8, 64], [64, 256]], "Input type": ["float", "float"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": base + 200, "dur": 1, "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": base + 300,
         "dur": 3, "args": {"correlation": 1}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 100,
         "dur": 50, "args": {"Input Dims": [[8, 64], [64, 256]], "Input type": ["float", "float"]}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 2, "ts": float("nan"),
         "dur": 5, "args": {"Input Dims": [[4], [4]], "Input type": ["float", "float"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
         "ts": 120, "dur": 1, "args": {"correlation": 2}},
        {"ph": "X", "cat": "kernel", "name": "sgemm_2", "pid": 0, "tid": 7, "ts": 130,
         "dur": 2, "args": {"correlation": 2}}]
    trace.write_text(json.dumps({"traceEvents": events}), encoding="utf-8")
    result = read_kineto_trace(trace)
    assert [m.name for m in result.measurements] == ["sgemm_2"]
    assert result.not_counted == [("launched outside any recorded operator", 1,
                                   pytest.approx(3e-6))]


@pytest.mark.parametrize("limit, made, told", [
    ("MAX_TRACE_SHAPE_BYTES", 1 << 20, "more than 1 MB of distinct operator shapes (Input Dims, "
                                       "Input type, Concrete Inputs); a trace is limited to that"),
    ("MAX_TRACE_LAUNCHES", 1_000, "more than 1,000 runtime calls (cuda_runtime, cuda_driver); a "
                                  "trace is limited to that")])
def test_a_trace_past_what_its_read_may_hold_is_refused_in_one_line(tmp_path, monkeypatch, limit,
                                                                    made, told):
    # a trace whose operators' shapes all differ (a sequence length per step) kept 600 bytes
    # an operator and runtime calls had no bound: 4 million operators could take 3 GB. Past
    # either limit (here made small) the read stops with one line naming the file
    import workbench.io.kineto as kineto

    monkeypatch.setattr(kineto, limit, made)
    trace = tmp_path / "steps.json"
    events = []
    for i in range(20_000):
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                       "ts": 10 * i, "dur": 5, "args": {"Input Dims": [[i + 1, 64], [64, 256]],
                                                        "Input type": ["float", "float"]}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": 10 * i + 1, "dur": 1, "args": {"correlation": i}})
    events.append({"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 3,
                   "dur": 1, "args": {"correlation": 0}})
    trace.write_text(json.dumps({"traceEvents": events}), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_kineto_trace(trace)
    assert str(refused.value).startswith(f"{trace}: at character ")
    assert told in str(refused.value) and "\n" not in str(refused.value)
    monkeypatch.undo()
    assert read_kineto_trace(trace).kernels == 1  # (within the real limits)
