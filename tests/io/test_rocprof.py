"""rocprof-compute workload folders as the tool wrote them (tests/fixtures/rocprof/, AMD's own
test workloads; see the README there): ``roofline.csv`` becomes a machine with its measured
roofs, ``pmc_perf.csv`` one point per kernel per memory level, the bytes worked out here by
hand from AMD's counter formulas."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

from workbench.io.cells import ImportCancelled
from workbench.io.errors import InputError
from workbench.io.measurements import attach_measurements, import_measurements, load_measurements
from workbench.io.profiles import add_machines
from workbench.io.rocprof import read_pmc_perf, read_roofline_csv, read_workload
from workbench.io.sessions import load_session, save_session
from workbench.model.measured_session import judge_session
from workbench.model.profile import level_points

REPO = Path(__file__).resolve().parents[2]
MI200 = REPO / "tests" / "fixtures" / "rocprof" / "vcopy-mi200"
MI300X = REPO / "tests" / "fixtures" / "rocprof" / "vcopy-mi300x"
MULTI = REPO / "tests" / "fixtures" / "rocprof" / "multikernel-mi200"
SESSION = REPO / "workbench" / "examples" / "llama_ffn.yaml"
KERNEL = "vecCopy(double*, double*, double*, int, int) [clone .kd]"


def test_roofline_csv_becomes_a_machine():
    # the kernels ran on GPU_ID 2: its row, GB/s and GFLOP/s as written
    hw = read_roofline_csv(MI200 / "roofline.csv", device=2, gpu_model="MI200")
    assert hw.name == "MI200 GPU 2 (rocprof-compute roofline)"
    assert hw.memory == {"hbm": 1389.0227e9, "l2": 5036.6968e9, "l1": 9263.2725e9,
                         "lds": 18220.432e9}
    assert hw.main_memory == "hbm"
    assert hw.compute == {"bf16": 171150.41e9, "fp16": 165537.12e9, "fp32": 41587.383e9,
                          "fp64": 41645.191e9, "int8": 166970.84e9}
    assert hw.vector_compute == {"fp32": 21053.373e9, "fp64": 20354.846e9}
    assert "memory.l1" in hw.measured and "compute.bf16" in hw.measured


def test_dispatches_of_one_kernel_make_one_point_with_its_levels_by_hand():
    work = read_workload(MI200)
    assert work.machine.name == "MI200 GPU 2 (rocprof-compute roofline)"
    assert work.dispatches == 3
    (point,) = work.measurements
    assert point.name == KERNEL and point.count == 3
    # vecCopy moves doubles without arithmetic and without LDS: no FLOPs, no LDS bytes
    assert point.flops == 0 and point.unit == "vector"
    # per dispatch, End − Start: 1411551767656192 − 1411551767635712 = 20480 ns,
    # 1411551767765792 − 1411551767749472 = 16320 ns, 1411551767802112 − 1411551767786592
    # = 15520 ns; the point is the mean per dispatch, 52320 / 3 = 17440 ns
    assert point.time_s == pytest.approx(17440e-9)
    # L1: 64·TCP_TOTAL_CACHE_ACCESSES_sum = 64·524288 in each dispatch
    assert point.levels["l1"] == 64 * 524288 == 33_554_432
    # L2: 64·(read 131072 + write 131072 + atomics 0 + 0) in each dispatch
    assert point.levels["l2"] == 64 * (131072 + 131072) == 16_777_216
    # HBM (MI200): 32·RDREQ_32B + 64·(RDREQ − RDREQ_32B) + 64·WRREQ_64B + 32·(WRREQ − WRREQ_64B)
    d0 = 32 * 0 + 64 * (131086 - 0) + 64 * 131072 + 32 * (131072 - 131072)  # 16,778,112
    d1 = 64 * 131086 + 64 * 91072 + 32 * (91072 - 91072)                     # 14,218,112
    d2 = 64 * 131087 + 64 * 91113 + 32 * (91113 - 91113)                     # 14,220,800
    assert (d0, d1, d2) == (16_778_112, 14_218_112, 14_220_800)
    assert point.levels["dram"] == point.bytes == pytest.approx((d0 + d1 + d2) / 3)
    assert "3 dispatches (#0, #1, #2), per dispatch" in point.source


def test_seven_kernels_of_a_multi_kernel_workload_by_hand():
    # AMD's test workload has the same counter values on every dispatch (only the
    # timestamps differ), so every kernel moves the same bytes in a different time
    work = read_workload(MULTI)
    assert work.dispatches == 7
    points = {m.name: m for m in work.measurements}
    assert len(points) == 7
    fill = "__amd_rocclr_fillBufferAligned.kd"
    write = "global_write(int*, int) [clone .kd]"
    atomic = "generic_atomic(int*, int, int) [clone .kd]"
    # times: 9595697588067 − 9595697581667 = 6400 ns; 9595697983585 − 9595697981345 = 2240;
    # 9595698080065 − 9595698076225 = 3840
    for kernel, ns in ((fill, 6400), (write, 2240), (atomic, 3840)):
        m = points[kernel]
        assert m.time_s == pytest.approx(ns * 1e-9) and m.count == 1
        # L1 64·971473; L2 64·(read 971473 + write 131072 + atomic-with-return 131072 + 0)
        assert m.levels["l1"] == 64 * 971473 == 62_174_272
        assert m.levels["l2"] == 64 * (971473 + 131072 + 131072) == 78_951_488
        # HBM: 32·29353105 + 64·(33551804 − 29353105) + 64·33551804 + 32·(0 − 33551804)
        assert m.levels["dram"] == (32 * 29353105 + 64 * (33551804 - 29353105)
                                    + 64 * 33551804 + 32 * (0 - 33551804)) == 2_281_673_824
    # 2.28 GB in 6.4 µs is 356 TB/s against GPU 2's measured 1383.8199 GB/s: the point
    # is judged "re-measure" (257 × its bound) instead of taken on trust
    session = load_session(SESSION)
    result = import_measurements(MULTI)
    add_machines(session, result)
    attach_measurements(session, result.measurements, str(MULTI))
    (judged,) = [p for p in judge_session(session) if p.measurement.name == fill]
    assert judged.judgement.fraction == pytest.approx(2_281_673_824 / 1383.8199e9 / 6400e-9)
    assert judged.judgement.verdict == "re-measure"


def test_each_level_has_its_own_roof_and_the_point_survives_a_save(tmp_path):
    session = load_session(SESSION)
    result = import_measurements(MI200)
    (entry,) = add_machines(session, result)
    attach_measurements(session, result.measurements, str(MI200))
    (point,) = [p for p in judge_session(session) if p.measurement.name == KERNEL]
    # the main point: T_lower = HBM bytes / GPU 2's measured HBM bandwidth
    hbm_bytes = (16_778_112 + 14_218_112 + 14_220_800) / 3
    assert point.judgement.predicted_time_s == pytest.approx(hbm_bytes / 1389.0227e9)
    assert point.judgement.fraction == pytest.approx(hbm_bytes / 1389.0227e9 / 17440e-9)
    levels = {lp.level: lp for lp in level_points(point.measurement, entry.hardware)}
    assert levels["l1"].bandwidth == 9263.2725e9 and levels["l2"].bandwidth == 5036.6968e9
    assert levels["dram"].bandwidth == 1389.0227e9
    path = tmp_path / "s.yaml"
    save_session(session, path)
    (again,) = [m for m in load_session(path).measurements if m.name == KERNEL]
    assert again.levels == pytest.approx(point.measurement.levels) and again.count == 3


def test_pmc_perf_alone_is_judged_on_a_named_machine(tmp_path):
    alone = tmp_path / "pmc_perf.csv"
    shutil.copy(MI200 / "pmc_perf.csv", alone)
    result = import_measurements(alone, hardware="mi300x")
    assert {m.hardware for m in result.measurements} == {"mi300x"}
    assert result.machines == []


def test_valu_and_mfma_flops_follow_amds_formulas(tmp_path):
    # a constructed row (the real test workloads copy data without arithmetic):
    # VALU fp32 64·(ADD 10 + MUL 20 + 2·FMA 30 + TRANS 5) = 64·95 = 6080
    # MFMA f16 512·7 = 3584, bf16 512·100 = 51200 (the largest class: bf16 on the matrix unit)
    # MI300 HBM: 128·BUBBLE 2 + 32·RD32 4 + 64·(RD 10 − 2 − 4) + 32·(WR 8 − WR64 6) + 64·6
    header = ("Dispatch_ID,Kernel_Name,GPU_ID,Start_Timestamp,End_Timestamp,"
              "SQ_INSTS_VALU_ADD_F32,SQ_INSTS_VALU_MUL_F32,SQ_INSTS_VALU_FMA_F32,"
              "SQ_INSTS_VALU_TRANS_F32,SQ_INSTS_VALU_MFMA_MOPS_F16,SQ_INSTS_VALU_MFMA_MOPS_BF16,"
              "TCC_BUBBLE_sum,TCC_EA0_RDREQ_32B_sum,TCC_EA0_RDREQ_sum,TCC_EA0_WRREQ_64B_sum,"
              "TCC_EA0_WRREQ_sum,SQ_LDS_IDX_ACTIVE,SQ_LDS_BANK_CONFLICT")
    path = tmp_path / "pmc_perf.csv"
    path.write_text(f"{header}\n0,gemm,0,1000,3000,10,20,30,5,7,100,2,4,10,6,8,50,10\n",
                    encoding="utf-8")
    points, skipped, _gpus, count = read_pmc_perf(path, lds_banks=32)
    assert count == 1 and skipped == []
    (m,) = points
    assert m.flops == 64 * 95 + 512 * 7 + 512 * 100 == 60_864
    assert m.precision == "bf16" and m.unit == "matrix"
    assert m.bytes == 128 * 2 + 32 * 4 + 64 * (10 - 2 - 4) + 32 * (8 - 6) + 64 * 6 == 1088
    # LDS: (IDX_ACTIVE 50 − BANK_CONFLICT 10)·4·32 banks, named in the source
    assert f"LDS {(50 - 10) * 4 * 32} B per dispatch" in m.source
    assert m.time_s == pytest.approx(2000e-9)


def _workload_with(tmp_path: Path, name: str, row: int, column: str, cell: str) -> Path:
    """A copy of the MI200 workload whose CSV ``name`` holds ``cell`` in ``column`` of row
    ``row`` (0 is the header)."""
    folder = tmp_path / "w"
    shutil.copytree(MI200, folder)
    with open(folder / name, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    rows[row][rows[0].index(column)] = cell
    with open(folder / name, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return folder


@pytest.mark.parametrize("cell", ["12x", "524,288"])  # a typo; a thousands separator
def test_bad_cells_are_refused_in_one_line(tmp_path, cell):
    # (row 2: the second dispatch)
    folder = _workload_with(tmp_path, "pmc_perf.csv", 2, "TCP_TOTAL_CACHE_ACCESSES_sum", cell)
    session = load_session(SESSION)
    before = list(session.hardware)
    with pytest.raises(InputError) as err:
        attach_measurements(session, load_measurements(folder), str(folder))
    assert str(err.value) == (f"{folder / 'pmc_perf.csv'}:3: TCP_TOTAL_CACHE_ACCESSES_sum: "
                              f"expected a number, got {cell!r}")
    assert session.hardware == before and session.measurements == []


@pytest.mark.parametrize("column", ["TCC_EA_RDREQ_sum", "SQ_INSTS_VALU_FMA_F32"])
def test_a_negative_counter_is_refused_where_it_is(tmp_path, column):
    # HBM bytes sum several counters: one read request count of -5 was taken, the writes
    # keeping the sum positive
    folder = _workload_with(tmp_path, "pmc_perf.csv", 2, column, "-5")  # the second dispatch
    with pytest.raises(InputError) as err:
        load_measurements(folder)
    assert str(err.value) == (f"{folder / 'pmc_perf.csv'}:3: {column}: must not be negative, "
                              "got '-5'")


@pytest.mark.parametrize("column", ["FP32Flops", "HBMBw"])
def test_a_zero_roof_of_the_kernels_gpu_is_refused_in_one_line(tmp_path, column):
    # the kernels ran on GPU 2: a roof of 0 there is neither taken (FP32Flops shares fp32 with
    # MFMAF32Flops) nor passed over for GPU 0's row
    folder = _workload_with(tmp_path, "roofline.csv", 3, column, "0")  # device 2
    session = load_session(SESSION)
    before = list(session.hardware)
    with pytest.raises(InputError) as err:
        attach_measurements(session, load_measurements(folder), str(folder))
    assert str(err.value) == (f"{folder / 'roofline.csv'}:4: {column}: the measured roof must "
                              "be positive, got 0")
    assert session.hardware == before and session.measurements == []


@pytest.mark.parametrize("column, cell, bound", [
    ("LDSBw", "1e25", "at most 1e+21"),  # 10³⁴ B/s
    ("LDSBw", "1e308", "at most 1e+21"),  # infinite once in B/s
    ("HBMBw", "1e-40", "at least 1e-39"),  # 10⁻³¹ B/s
    ("HBMBw", "5e-324", "at least 1e-39"),  # 0 once in B/s
])
def test_a_roof_outside_any_machines_figure_is_refused_in_one_line(tmp_path, column, cell,
                                                                   bound):
    # a machine with such a figure could not be saved in a session and opened again
    folder = _workload_with(tmp_path, "roofline.csv", 3, column, cell)  # device 2
    with pytest.raises(InputError) as err:
        load_measurements(folder)
    assert str(err.value) == (f"{folder / 'roofline.csv'}:4: {column}: the measured roof "
                              f"{cell} is out of range: {bound} (GB/s or GFLOP/s, as written)")


def test_a_two_gigabyte_pmc_perf_is_refused_before_reading(tmp_path):
    huge = tmp_path / "big" / "pmc_perf.csv"
    huge.parent.mkdir()
    with open(huge, "wb") as f:
        f.truncate(2 * 10**9)
    with pytest.raises(InputError, match=r"file is 2000\.0 MB; a pmc_perf\.csv is limited "
                                         r"to 1024 MB"):
        load_measurements(huge.parent)


def test_analyze_takes_a_workload_folder():
    done = subprocess.run([sys.executable, "-m", "workbench", "analyze", str(SESSION),
                           "--measurements", str(MI200)], cwd=REPO, capture_output=True,
                          text=True, timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    assert "machine 'MI200 GPU 2 (rocprof-compute roofline)' from roofline.csv" in done.stderr
    assert f"measured: {KERNEL} on MI200 GPU 2 (rocprof-compute roofline)" in done.stdout


def test_cancel_stops_the_read_and_adds_nothing(tmp_path):
    folder = tmp_path / "w"
    folder.mkdir()
    with open(MI200 / "pmc_perf.csv", newline="", encoding="utf-8") as f:
        header, row = list(csv.reader(f))[:2]
    with open(folder / "pmc_perf.csv", "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(header)
        out.writerows([row] * 10_000)  # 4,096 rows between two looks at Cancel
    looks = []
    with pytest.raises(ImportCancelled):
        import_measurements(folder, cancel=lambda: looks.append(1) or True)
    assert looks == [1]  # stopped at the first look, after 4,096 rows
