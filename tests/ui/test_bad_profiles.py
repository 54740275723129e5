"""Bad profiles, on the command line and in the app: a trace of operators with no FLOP rule,
a truncated ``.gz``, 2 GB files (sparse: refused by a memory bound before they are read), a
trace of another maker's GPU, and CSVs with thousands separators. Each gives one line that
names the file, the place and the problem (``analyze`` exits 2; the app shows it in its
error dialog) and changes nothing in the session."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from workbench.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSION = "schema_version: 2\ntitle: step\nhardware:\n  - preset: h100-sxm\noperations: []\n"
NCU_HEAD = ['"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","gpu__time_duration.sum",'
            '"dram__bytes.sum","smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"',
            '"","","","","","","","","","","","nsecond","byte","inst"']


def unknown_operators(tmp: Path) -> Path:
    # a torch.compile'd Triton kernel: its operator is the kernel, which names no operation
    return FIXTURES / "kineto" / "triton_example.json.gz"


def truncated_gzip(tmp: Path) -> Path:
    path = tmp / "cut.pt.trace.json.gz"
    path.write_bytes((FIXTURES / "kineto" / "sampled_rank-0.json.gz").read_bytes()[:3000])
    return path


def huge_trace(tmp: Path) -> Path:
    path = tmp / "huge.pt.trace.json.gz"
    with path.open("wb") as f:
        f.truncate(2 * 10**9)  # sparse: no disk used
    return path


def huge_ncu_export(tmp: Path) -> Path:
    path = tmp / "huge-ncu.csv"
    path.write_text("\n".join([*NCU_HEAD, '"0","1","p","h","k","1","7","(256, 1, 1)",'
                               '"(80, 1, 1)","0","9.0","1000","64","2"']) + "\n",
                    encoding="utf-8")
    with path.open("r+b") as f:
        f.truncate(2 * 10**9)
    return path


def huge_workload(tmp: Path) -> Path:
    folder = tmp / "workload"
    folder.mkdir()
    (folder / "roofline.csv").write_bytes(
        (FIXTURES / "rocprof" / "vcopy-mi200" / "roofline.csv").read_bytes())
    with (folder / "pmc_perf.csv").open("wb") as f:
        f.truncate(2 * 10**9)
    return folder


def amd_trace(tmp: Path) -> Path:
    # PyTorch on an MI250 under ROCm: the session has only an H100 to judge it on
    return FIXTURES / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"


def ncu_european_grouping(tmp: Path) -> Path:
    path = tmp / "sep.csv"
    path.write_text("\n".join([*NCU_HEAD, '"0","1","p","h","k","1","7","(256, 1, 1)",'
                               '"(80, 1, 1)","0","9.0","1,234,567","2.048,5","3"']) + "\n",
                    encoding="utf-8")
    return path


def ncu_sections_alone(tmp: Path) -> Path:
    # what `ncu --csv python3 ops.py` wrote on an H200 (tests/fixtures/h200): its default
    # sections, in percentages and durations, no byte or FLOP counters
    return FIXTURES / "h200" / "ncu_ops_sections.csv"


def ncu_roofline_set_alone(tmp: Path) -> Path:
    # `ncu --csv --set roofline` without --metrics: the chart is not written to CSV
    return FIXTURES / "h200" / "ncu_ops_roofline_set.csv"


def plain_unquoted_thousands(tmp: Path) -> Path:
    path = tmp / "plain.csv"
    path.write_text("name,hardware,time_us,flops,bytes\nk,h100-sxm,4862,1,234,567,100\n",
                    encoding="utf-8")
    return path


def plain_flops_beyond_a_session_file(tmp: Path) -> Path:
    path = tmp / "big.csv"
    path.write_text("name,time_us,flops,bytes,precision\nbig,10,1e35,1e6,bf16\n",
                    encoding="utf-8")
    return path


def ncu_level_below_a_session_file(tmp: Path) -> Path:
    # L2 bytes of 1e-300 (and L1 bytes of 1e35): no session file holds such a number
    head = NCU_HEAD[0].replace('"dram__bytes.sum"',
                               '"dram__bytes.sum","lts__t_bytes.sum","l1tex__t_bytes.sum"')
    units = NCU_HEAD[1].replace('"byte"', '"byte","byte","byte"')
    path = tmp / "levels.csv"
    row = '"0","1","p","h","k","1","7","(256, 1, 1)","(80, 1, 1)","0","9.0","1000","64",'
    path.write_text(f'{head}\n{units}\n{row}"1e-300","1e35","2"\n', encoding="utf-8")
    return path


def trace_of_a_matmul_beyond_a_session_file(tmp: Path) -> Path:
    # a matmul recorded as 10¹² × 10¹² by 10¹² × 10¹²: 2·10³⁶ FLOPs
    path = tmp / "huge-dims.json"
    path.write_text(
        '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, '
        '"tid": 1, "ts": 100, "dur": 50, "args": {"Input Dims": [[1000000000000, '
        '1000000000000], [1000000000000, 1000000000000]], "Input type": ["c10::BFloat16", '
        '"c10::BFloat16"]}}, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", '
        '"pid": 1, "tid": 1, "ts": 120, "dur": 5, "args": {"correlation": 7}}, {"ph": "X", '
        '"cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 130, "dur": 2.5, '
        '"args": {"correlation": 7, "device": 0}}]}', encoding="utf-8")
    return path


def workload_with_l1_bytes_beyond_a_session_file(tmp: Path) -> Path:
    folder = tmp / "workload"
    shutil.copytree(FIXTURES / "rocprof" / "vcopy-mi200", folder)
    with (folder / "pmc_perf.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    column = rows[0].index("TCP_TOTAL_CACHE_ACCESSES_sum")
    for row in rows[1:]:
        row[column] = "1e34"  # (10³⁴ cache lines of 64 B)
    with (folder / "pmc_perf.csv").open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return folder


#: (file maker, what the line must say besides the file's name)
CASES = [
    (unknown_operators, ("triton_poi_fused_add_cos_sin_0", "torch.compile generated",
                         "could not be counted")),
    (truncated_gzip, ("truncated",)),
    (huge_trace, ("2000.0 MB", "limited to 1024 MB")),
    (huge_ncu_export, (":3: more than 500,000 kernel launches", "2.0 GB")),
    (huge_workload, ("pmc_perf.csv", "2000.0 MB", "limited to")),
    (amd_trace, ("'AMD Radeon Graphics', an AMD GPU", "no AMD machine",
                 "NVIDIA H100 SXM5 80GB")),
    (ncu_european_grouping, ("sep.csv:3: dram__bytes.sum", "'2.048,5'",
                             "thousands separators")),
    (ncu_sections_alone, ("ncu_ops_sections.csv:6: kernel ID 0", "sections alone",
                          "--page raw --metrics gpu__time_duration.sum")),
    (ncu_roofline_set_alone, ("ncu_ops_roofline_set.csv:6:", "chart is not written to CSV",
                              "the FLOP counters")),
    (plain_unquoted_thousands, ("plain.csv:2: has 7 fields; the header has 5",
                                "thousands separators must be quoted")),
    # numbers a session file could not hold: refused at import, not at the next Open
    (plain_flops_beyond_a_session_file, ("big.csv:2: flops: must be 0 or between 1e-30 and "
                                         "1e+30 FLOP, got 1e+35",)),
    (ncu_level_below_a_session_file, ("measurement 'k' (ncu levels.csv ID 0)",
                                      "l2: 1e-300 is out of range", "1e-30 … 1e30")),
    (trace_of_a_matmul_beyond_a_session_file, ("measurement 'sm90_gemm'", "flops",
                                               "1e+30 FLOP, got 2e+36")),
    (workload_with_l1_bytes_beyond_a_session_file, ("vecCopy", "l1: 6.4e+35 is out of range",
                                                    "1e-30 … 1e30")),
]
IDS = [make.__name__ for make, _said in CASES]


@pytest.mark.parametrize(("make", "said"), CASES, ids=IDS)
def test_analyze_says_one_line_and_exits_2(make, said, tmp_path, capsys):
    session = tmp_path / "s.yaml"
    session.write_text(SESSION, encoding="utf-8")
    bad = make(tmp_path)
    assert main(["analyze", str(session), "--measurements", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"roofline-workbench: {bad}"), line
    for words in said:
        assert words in line, (words, line)
    assert session.read_text(encoding="utf-8") == SESSION  # (the file is never written)


@pytest.mark.parametrize(("make", "said"), CASES, ids=IDS)
def test_the_app_shows_one_line_and_changes_nothing(make, said, tmp_path, qtbot, open_window):
    session = tmp_path / "s.yaml"
    session.write_text(SESSION, encoding="utf-8")
    window = open_window(session)
    document = window.document
    before = ([e.hardware.name for e in document.session.hardware],
              list(document.session.measurements))
    bad = make(tmp_path)
    assert not window.import_measurements(bad)
    # the error dialog the user sees says the one line
    from PySide6.QtWidgets import QMessageBox

    box = window.findChild(QMessageBox, "error_dialog")
    assert box is not None and box.isVisible()
    message = box.text()
    assert message == window.last_error
    assert "\n" not in message and message.startswith(f"{bad}"), message
    for words in said:
        assert words in message, (words, message)
    assert ([e.hardware.name for e in document.session.hardware],
            list(document.session.measurements)) == before
    assert not document.modified and not document.can_undo()


def test_a_trace_of_one_makers_gpu_is_judged_on_that_makers_machine(tmp_path, capsys):
    """Beside the H100, an MI250X: the AMD trace (its GPU matches no preset) is judged on
    the session's one AMD machine, not on the H100."""
    import json

    session = tmp_path / "s.yaml"
    session.write_text(SESSION.replace("  - preset: h100-sxm\n",
                                       "  - preset: h100-sxm\n  - preset: mi250x\n"),
                       encoding="utf-8")
    assert main(["analyze", str(session), "--measurements", str(amd_trace(tmp_path)),
                 "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["measurements"]
    # the trace's 13 operators, each once: addmm (its two kernels as one), relu, its
    # backward, mm, two fills, two add_, the sum and mean (reductions), the loss and its
    # backward, and the optimizer's _foreach_add_
    assert len(points) == 13
    assert {p["hardware"] for p in points} == {"AMD Instinct MI250X 128GB"}


@pytest.mark.parametrize(("name", "vendor"), [
    ("NVIDIA H100 80GB HBM3", "NVIDIA"), ("NVIDIA A100-PG509-200", "NVIDIA"),
    ("Tesla V100-SXM2-16GB", "NVIDIA"), ("AMD Radeon Graphics", "AMD"),
    ("AMD Instinct MI300X", "AMD"), ("Some Accelerator", None), (None, None)])
def test_the_maker_is_read_from_the_gpu_name(name, vendor):
    from workbench.io.profiles import gpu_vendor

    assert gpu_vendor(name) == vendor
