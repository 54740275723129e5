"""Nsight Compute exports at every memory level: bytes at L1, L2 and DRAM, FLOPs per
precision, the kernels whose FLOPs cannot be counted, the details page, streaming with
progress and cancel, and the bounds that replace a file-size cap."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from workbench.io import ncu
from workbench.io.cells import ImportCancelled
from workbench.io.errors import InputError
from workbench.io.measurements import detect_format, import_measurements, load_measurements
from workbench.io.ncu import import_ncu, import_ncu_text, parse_ncu_csv
from workbench.io.presets import get_preset
from workbench.model.profile import level_points, machine_level

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
A100 = FIXTURES / "ncu_details_a100_bert_flashattn.csv"
DESCRIPTIVE = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
               "Stream", "Block Size", "Grid Size", "Device", "CC"]


def raw_text(metrics: list[str], units: list[str], *kernels: tuple[str, list[str]]) -> str:
    def row(cells):
        return ",".join(f'"{c}"' for c in cells)

    lines = [row(DESCRIPTIVE + metrics), row([""] * 11 + units)]
    for i, (name, values) in enumerate(kernels):
        lines.append(row([str(i), "1", "bench", "host", name, "1", "7", "(256, 1, 1)",
                          "(80, 1, 1)", "0", "9.0"] + values))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# a real details-page export with L1, L2 and DRAM bytes (A100, 2023)


def test_the_fixture_is_the_details_page_as_ncu_wrote_it():
    with A100.open(encoding="utf-8", newline="") as f:
        header = next(csv.reader(f))
    assert header[:6] == ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name",
                          "Kernel Time"]
    assert header[8:12] == ["Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    assert detect_format(A100) == "ncu"


def test_real_details_export_three_kernels_by_hand():
    result = import_measurements(A100, "a100-40gb")
    assert result.format == "ncu" and result.dispatches == 10
    assert len(result.measurements) == 10 and result.not_counted == []
    by_id = {m.source.split(" ID ")[1].split(";")[0]: m for m in result.measurements}

    # ID 2, a uniform_ random fill (lines 78–126 of the file): SIMT fp32
    fill = by_id["2"]
    assert fill.levels == {"dram": 128, "l2": 435_040, "l1": 131_072}
    # ffma 327,680 × 2 + hadd 65,536 = 720,896 FLOPs; fp32 (655,360) is the largest class
    assert fill.flops == 2 * 327_680 + 65_536
    assert (fill.precision, fill.unit) == ("fp32", "vector")
    # time = sm__cycles_elapsed.avg / .per_second = 5,468.26 / 982,086,792.25 s
    assert fill.time_s == pytest.approx(5_468.26 / 982_086_792.25, rel=1e-12)

    # ID 5, cutlass_80_wmma_tensorop_f16 GEMM (lines 311–349)
    gemm = by_id["5"]
    assert "cutlass_80_wmma_tensorop_f16_s161616gemm" in gemm.name
    assert gemm.levels == {"dram": 415_488, "l2": 2_319_200, "l1": 1_354_752}
    assert gemm.bytes == 415_488
    # tensor 6,144 inst × 512 + fp32 (2 × 49,152 ffma + 49,152 fmul) + fp16 (49,152 hadd)
    assert gemm.flops == 6_144 * 512 + 2 * 49_152 + 49_152 + 49_152 == 3_342_336
    assert (gemm.precision, gemm.unit) == ("fp16", "matrix")
    assert gemm.time_s == pytest.approx(7_219.93 / 932_325_145.39, rel=1e-12)
    assert "× 512" in gemm.source

    # ID 7, FlashAttention forward (lines 435–472)
    fmha = by_id["7"]
    assert fmha.name.startswith("void fmha_fwd_loop_kernel<")
    assert fmha.levels == {"dram": 61_824, "l2": 708_160, "l1": 341_632}
    # tensor 2,048 × 512 + fp32 (131,072 fadd + 2 × 69,632 ffma + 32,768 fmul) + fp64 4,096 dmul
    assert fmha.flops == 2_048 * 512 + 131_072 + 2 * 69_632 + 32_768 + 4_096 == 1_355_776
    assert fmha.time_s == pytest.approx(7_355.74 / 945_954_313.37, rel=1e-12)


def test_each_level_meets_its_own_roof_on_the_machine():
    gemm = next(m for m in load_measurements(A100) if "s161616gemm_f16_32x32" in m.name)
    a100 = get_preset("a100-40gb")
    points = {p.level: p for p in level_points(gemm, a100)}
    assert list(points) == ["l1", "l2", "dram"]
    flop_rate = 3_342_336 / (7_219.93 / 932_325_145.39)
    for level, nbytes in (("l1", 1_354_752), ("l2", 2_319_200), ("dram", 415_488)):
        p = points[level]
        assert p.achieved_flops == pytest.approx(flop_rate, rel=1e-12)
        assert p.intensity == pytest.approx(3_342_336 / nbytes, rel=1e-12)
    # DRAM: I = 8.04 FLOP/B against the A100's 1,555 GB/s HBM: roof = 8.04 × 1.555e12
    assert points["dram"].machine_level == "hbm"
    assert points["dram"].roof == pytest.approx(3_342_336 / 415_488 * 1555e9, rel=1e-12)
    assert points["dram"].fraction == pytest.approx(flop_rate / points["dram"].roof)
    # L2 against the 5.4 TB/s L2 level, L1 against the 19.1 TB/s L1 level (I = 2.47 FLOP/B:
    # 2.47 × 19.1e12 = 47 TFLOP/s, under the 312 TFLOP/s fp16 tensor peak)
    assert points["l2"].roof == pytest.approx(3_342_336 / 2_319_200 * 5.4e12, rel=1e-12)
    assert machine_level(a100, "l1") == "l1" and points["l1"].problem is None
    assert points["l1"].roof == pytest.approx(3_342_336 / 1_354_752 * 19.1e12, rel=1e-12)
    assert points["l1"].fraction == pytest.approx(flop_rate / points["l1"].roof)


# ---------------------------------------------------------------------------------------------
# the raw page at every level


LEVELS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
          "lts__t_sectors.sum", "l1tex__t_bytes.sum",
          "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
          "sm__ops_path_tensor_src_bf16_dst_fp32.sum"]


def test_raw_export_levels_sectors_and_precisions():
    text = raw_text(LEVELS, ["usecond", "Mbyte", "Mbyte", "sector", "Gbyte", "inst", ""],
                    ("sm90_xmma_gemm_bf16bf16", ["100", "3", "1", "1,000,000", "1.5", "10",
                                                 "2,000,000,000"]),
                    ("vectorized_elementwise_kernel", ["10", "8", "8", "500,000", "0.016",
                                                       "4,000,000", "0"]))
    gemm, add = parse_ncu_csv(text, "levels.csv")
    # L2 from sectors: 1,000,000 × 32 B; DRAM read + write 3 MB + 1 MB; L1 1.5 GB
    assert gemm.levels == {"dram": 4e6, "l2": 32e6, "l1": 1.5e9}
    assert gemm.flops == 2e9 + 2 * 10 and (gemm.precision, gemm.unit) == ("bf16", "matrix")
    assert add.levels == {"dram": 16e6, "l2": 16e6, "l1": 16e6}
    assert add.flops == 8e6 and (add.precision, add.unit) == ("fp32", "vector")


@pytest.mark.parametrize("unit, rate", [("cycle/second", "1,500,000,000"),
                                         ("hz", "1,500,000,000"), ("Ghz", "1.5")])
def test_time_from_cycles_reads_the_clock_rate_as_ncu_writes_it(unit, rate):
    # the H200 exports of tests/fixtures/h200 write the SM clock (this metric) in "hz"
    metrics = ["sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
               "dram__bytes.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    text = raw_text(metrics, ["cycle", unit, "byte", "inst"],
                    ("k", ["3,000", rate, "4,096", "1,024"]))
    (m,) = parse_ncu_csv(text, "cycles.csv")
    assert m.time_s == pytest.approx(3_000 / 1.5e9, rel=1e-12)  # 2 µs


def test_a_tensor_kernel_in_a_file_without_tensor_counters_is_listed_not_drawn():
    metrics = ["gpu__time_duration.sum", "dram__bytes.sum",
               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    text = raw_text(metrics, ["usecond", "Mbyte", "inst"],
                    ("ampere_bf16_s16816gemm_bf16_128x128", ["90", "40", "65,536"]),
                    ("softmax_warp_forward", ["10", "8", "1,000"]),
                    ("ampere_bf16_s16816gemm_bf16_128x128", ["90", "40", "65,536"]))
    result = import_ncu_text(text, "bf16.csv")
    (softmax,) = result.measurements
    assert softmax.flops == 2000
    (gemm,) = result.not_counted
    assert gemm.count == 2 and gemm.time_s == pytest.approx(180e-6)
    assert "tensor cores" in gemm.reason and "sm__ops_path_tensor_src" in gemm.reason
    # 180 µs of 190 µs not counted
    assert result.counted_share == pytest.approx(10 / 190)
    assert result.summary() == ("3 dispatches of 2 kernels; counted 5 % of GPU time; 95 % in 1 "
                                "kernel not counted (ampere_bf16_s16816gemm_bf16_128x128)")


def test_dispatches_group_by_name_and_shape():
    metrics = ["gpu__time_duration.sum", "dram__bytes.sum",
               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    text = raw_text(metrics, ["usecond", "byte", "inst"],
                    ("k", ["10", "100", "5"]), ("k", ["30", "300", "5"]), ("j", ["5", "1", "1"]))
    result = import_ncu_text(text, "g.csv", run="before")
    k, _j = result.measurements
    # k: 2 dispatches, mean time (10 + 30) / 2 µs, mean bytes (100 + 300) / 2, FLOPs 2 × 5
    assert (k.name, k.count, k.time_s, k.bytes, k.flops) == ("k", 2, 20e-6, 200, 10)
    assert k.total_time_s == pytest.approx(40e-6) and k.run == "before"
    assert result.gpu_time_s == pytest.approx(45e-6) and result.dispatches == 3


def test_a_kernel_that_moved_less_than_a_byte_per_launch_is_imported_and_reopens():
    """A small kernel launched 4 times that touched DRAM once (one byte) and ran one FFMA:
    per launch, 0.25 B and 0.5 FLOPs; the profile is imported, and saved it opens again."""
    from workbench.document import Document
    from workbench.io.measurements import attach_measurements
    from workbench.io.sessions import dumps_session, loads_session

    metrics = ["gpu__time_duration.sum", "dram__bytes.sum",
               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    text = raw_text(metrics, ["usecond", "byte", "inst"], ("k", ["2", "1", "1"]),
                    *[("k", ["2", "0", "0"])] * 3)
    session = Document().session
    (k,) = attach_measurements(session, import_ncu_text(text, "small.csv").measurements,
                               "small.csv")
    assert (k.count, k.bytes, k.flops) == (4, 0.25, 0.5)
    (again,) = loads_session(dumps_session(session), "s.yaml").measurements
    assert (again.count, again.bytes, again.flops) == (4, 0.25, 0.5)


# ---------------------------------------------------------------------------------------------
# numbers, streaming and bounds


def test_thousands_separators_are_read_and_other_groupings_refused():
    metrics = ["gpu__time_duration.sum", "dram__bytes.sum",
               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    good = raw_text(metrics, ["nsecond", "byte", "inst"], ("k", ["1,234,567", "2,048.5", "3"]))
    (m,) = parse_ncu_csv(good, "sep.csv")
    assert m.time_s == pytest.approx(1_234_567e-9) and m.bytes == 2048.5
    bad = good.replace('"2,048.5"', '"2.048,5"')
    with pytest.raises(InputError) as info:
        parse_ncu_csv(bad, "sep.csv")
    message = str(info.value)
    assert message.startswith("sep.csv:3: dram__bytes.sum: expected a number, got '2.048,5'")
    assert "thousands separators" in message and "\n" not in message


def test_progress_is_reported_and_cancel_stops_the_read(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu, "_CHUNK", 10)
    metrics = ["gpu__time_duration.sum", "dram__bytes.sum",
               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    path = tmp_path / "many.csv"
    path.write_text(raw_text(metrics, ["usecond", "byte", "inst"],
                             *[(f"k{i % 7}", ["1", "64", "2"]) for i in range(100)]),
                    encoding="utf-8")
    seen: list[float] = []
    result = import_ncu(path, progress=seen.append)
    assert result.dispatches == 100 and len(result.measurements) == 7
    assert seen and seen == sorted(seen) and 0 < seen[-1] <= 1
    asked = []

    def cancel():
        asked.append(1)
        return len(asked) >= 3

    with pytest.raises(ImportCancelled):
        import_ncu(path, cancel=cancel)
    assert len(asked) == 3


def test_a_file_too_big_for_the_bound_is_refused_before_it_is_read(tmp_path):
    metrics = ["gpu__time_duration.sum", "dram__bytes.sum",
               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    path = tmp_path / "huge.csv"
    path.write_text(raw_text(metrics, ["usecond", "byte", "inst"], ("k", ["1", "64", "2"])),
                    encoding="utf-8")
    with path.open("r+b") as f:  # a 2 GB file (sparse): its rows would pass the bound
        f.truncate(2 * 10**9)
    with pytest.raises(InputError) as info:
        import_ncu(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: more than 500,000 kernel launches (about ")
    assert "2.0 GB" in message and "--launch-count" in message


def test_the_dispatch_bound_holds_while_reading(monkeypatch):
    monkeypatch.setattr(ncu, "MAX_DISPATCHES", 3)
    metrics = ["gpu__time_duration.sum", "dram__bytes.sum",
               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    # a first row long enough that the rest of the file looks like fewer than 3 more
    text = raw_text(metrics, ["usecond", "byte", "inst"], ("k" * 400, ["1", "64", "2"]),
                    *[("k", ["1", "64", "2"])] * 3)
    with pytest.raises(InputError, match=r"^b.csv:6: more than 3 kernel launches"):
        import_ncu_text(text, "b.csv")


# ---------------------------------------------------------------------------------------------
# a session keeps a profile's points as they were imported


def test_profiled_points_round_trip_through_the_session_file():
    from workbench.io.sessions import dumps_session, loads_session

    session = loads_session("schema_version: 2\nhardware:\n  - preset: a100-40gb\n"
                            "view:\n  level: l2\n  top: 5\n")
    result = import_measurements(A100, run="bert")
    session.measurements = result.measurements
    again = loads_session(dumps_session(session))
    assert (again.view.level, again.view.top) == ("l2", 5)
    for before, after in zip(result.measurements, again.measurements, strict=True):
        assert (after.levels, after.unit, after.count, after.run) == (
            before.levels, before.unit, before.count, before.run)
        assert after.flops == pytest.approx(before.flops, rel=1e-5)


@pytest.mark.parametrize(("extra", "fragment"), [
    ("    levels: {l3: 1 MB}\n", "l3"),
    ("    count: 0\n", "count"),
    ("    unit: simd\n", "unknown unit 'simd'"),
])
def test_bad_profile_fields_in_a_session_name_the_place(extra, fragment):
    from workbench.io.sessions import loads_session

    text = ("schema_version: 2\nhardware:\n  - preset: a100-40gb\nmeasurements:\n"
            "  - name: k\n    time: 1 us\n    flops: 1 MFLOP\n    bytes: 1 MB\n" + extra)
    with pytest.raises(InputError) as info:
        loads_session(text, "s.yaml")
    assert fragment in str(info.value) and "measurements[0]" in str(info.value)
