"""Importing measured points: the plain CSV format and Nsight Compute ``--csv --page raw``
exports (a realistic fixture in tests/fixtures/ncu_raw.csv), with errors that name the file,
the line, the column and the problem."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from workbench.io.errors import InputError
from workbench.io.measurements import (
    NCU_TENSOR_INST_FLOPS,
    attach_measurements,
    is_ncu_csv,
    load_measurements,
    parse_measurements_csv,
    parse_ncu_csv,
    read_measurements_csv,
    read_ncu_csv,
)
from workbench.io.presets import get_preset
from workbench.model.measured import judge
from workbench.model.operations import Operation
from workbench.model.roofline import evaluate
from workbench.model.session import HardwareEntry, OperationEntry, Session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NCU = FIXTURES / "ncu_raw.csv"
PLAIN = FIXTURES / "measurements.csv"

DESCRIPTIVE = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
               "Stream", "Block Size", "Grid Size", "Device", "CC"]


# ---------------------------------------------------------------------------------------------
# the fixture is in ncu's format


def test_fixture_has_the_ncu_raw_layout():
    text = NCU.read_text(encoding="utf-8")
    rows = list(csv.reader(text.splitlines()))
    header, units, kernels = rows[0], rows[1], rows[2:]
    assert header[:11] == DESCRIPTIVE
    assert len(kernels) == 3
    assert all(len(r) == len(header) for r in rows)
    # every field is quoted, as ncu writes them
    for line in text.splitlines():
        assert re.fullmatch(r'"[^"]*"(,"[^"]*")*', line), line
    # units row: empty under the descriptive columns, a unit under the metrics
    assert units[:11] == [""] * 11
    unit_of = dict(zip(header, units, strict=True))
    assert unit_of["gpu__time_duration.sum"] == "usecond"
    assert unit_of["dram__bytes_read.sum"] == "Mbyte"
    assert unit_of["dram__bytes_write.sum"] == "Kbyte"
    # numbers with thousands separators, as ncu prints them
    assert '"1,426.37"' in text and '"1,099,511,627,776"' in text
    names = [r[4] for r in kernels]
    assert "gemm" in names[0] and "elementwise" in names[1] and "softmax" in names[2]


# ---------------------------------------------------------------------------------------------
# reading ncu exports


def test_ncu_fixture_import():
    gemm, add, softmax = read_ncu_csv(NCU, hardware="h100-sxm")
    # durations: usecond column
    assert gemm.time_s == pytest.approx(1426.37e-6, rel=1e-15)
    assert add.time_s == pytest.approx(277.63e-6, rel=1e-15)
    assert softmax.time_s == pytest.approx(11.84e-6, rel=1e-15)
    # bytes: read in Mbyte plus write in Kbyte
    assert gemm.bytes == pytest.approx(412.35e6 + 134_217.73e3, rel=1e-15)
    assert add.bytes == pytest.approx(536.87e6 + 268_435.46e3, rel=1e-15)
    assert softmax.bytes == pytest.approx(16.78e6 + 16_777.22e3, rel=1e-15)
    # FLOPs: tensor ops (bf16 source) plus 2·FFMA + FADD + FMUL
    assert gemm.flops == 1_099_511_627_776 + 67_108_864
    assert add.flops == 67_108_864
    assert softmax.flops == 2 * 4_194_304 + 8_388_608 + 4_194_304
    assert [m.precision for m in (gemm, add, softmax)] == ["bf16", "fp32", "fp32"]
    for m in (gemm, add, softmax):
        assert m.standalone and m.hardware == "h100-sxm"
        assert m.problems() == []
        assert "ncu_raw.csv" in m.source
    assert gemm.name.startswith("sm90_xmma_gemm_bf16bf16")
    assert add.name.startswith("void at::native::vectorized_elementwise_kernel<4,")


def test_ncu_gemm_judged_against_a_gemm_prediction_lands_in_production():
    """The fixture's cuBLAS GEMM is 8192³ in bf16: 2·8192³ / 989.4 TFLOP/s = 1.111 ms
    predicted, 1.426 ms measured: 78 % of the ceiling."""
    gemm = read_ncu_csv(NCU)[0]
    op = Operation("gemm", {"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16"}, "8192³")
    gemm.operation = "8192³"
    gemm.flops = None  # judge on the model's counts; the bytes stay measured
    j = judge(gemm, evaluate(op, get_preset("h100-sxm")))
    assert j.fraction == pytest.approx(2 * 8192**3 / 989.4e12 / 1426.37e-6, rel=1e-12)
    assert j.verdict == "production"


def test_ncu_standalone_points_are_judged_on_their_own_counts():
    add = read_ncu_csv(NCU)[1]
    j = judge(add, evaluate(add.as_operation(), get_preset("h100-sxm")))
    expected = (536.87e6 + 268_435.46e3) / 3.35e12 / 277.63e-6
    assert j.fraction == pytest.approx(expected, rel=1e-12)  # ≈ 0.866
    assert j.verdict == "excellent"


HEADER = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]


def ncu_text(units: list[str], *kernels: list[str], header: list[str] = HEADER,
             preamble: str = "") -> str:
    def row(cells):
        return ",".join(f'"{c}"' for c in cells)

    lines = [row(header), row([""] * 11 + units)]
    for i, values in enumerate(kernels):
        lines.append(row([str(i), "1", "bench", "host", f"kernel_{i}", "1", "7", "(256, 1, 1)",
                          "(80, 1, 1)", "0", "8.0"] + values))
    return preamble + "\n".join(lines) + "\n"


@pytest.mark.parametrize(("unit", "value", "seconds"), [
    ("nsecond", "11,840", 11.84e-6), ("usecond", "11.84", 11.84e-6),
    ("msecond", "1.42637", 1.42637e-3), ("second", "4.0e-05", 4e-5),
])
def test_ncu_time_units(unit, value, seconds):
    text = ncu_text([unit, "byte", "byte", "inst"], [value, "100", "0", "5"])
    (m,) = parse_ncu_csv(text, "t.csv")
    assert m.time_s == pytest.approx(seconds, rel=1e-15)
    assert m.flops == 10


@pytest.mark.parametrize(("unit", "factor"), [("byte", 1), ("Kbyte", 1e3), ("Mbyte", 1e6),
                                              ("Gbyte", 1e9), ("Tbyte", 1e12), ("Kibyte", 1024),
                                              ("Mibyte", 1024**2), ("Gibyte", 1024**3),
                                              ("Tibyte", 1024**4)])
def test_ncu_byte_units(unit, factor):
    text = ncu_text(["usecond", unit, unit, "inst"], ["1", "2.5", "1,000", "0"])
    (m,) = parse_ncu_csv(text, "b.csv")
    assert m.bytes == pytest.approx(1002.5 * factor, rel=1e-15)


def test_ncu_preamble_and_trailer_lines_are_skipped():
    text = ncu_text(["usecond", "byte", "byte", "inst"], ["1", "8", "8", "1"],
                    preamble="==PROF== Connected to process 1234 (/usr/bin/python3)\n"
                             '==PROF== Profiling "kernel_0": 0%....50%....100% - 9 passes\n')
    text += "==PROF== Disconnected from process 1234\n"
    assert is_ncu_csv(text)
    (m,) = parse_ncu_csv(text, "p.csv")
    assert m.flops == 2 and m.bytes == 16


def test_ncu_tensor_instruction_fallback_is_an_approximation_and_says_so():
    header = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes.sum",
                            "sm__inst_executed_pipe_tensor.sum"]
    text = ncu_text(["usecond", "Mbyte", "inst"], ["100", "10", "1,000"], header=header)
    (m,) = parse_ncu_csv(text, "tc.csv")
    assert m.flops == 1000 * NCU_TENSOR_INST_FLOPS == 512_000
    assert m.bytes == 10e6
    assert m.precision == "fp16"
    assert "approximated" in m.source and "512" in m.source


def test_ncu_fp64_and_fp16_classes_and_repeated_kernel_names():
    ops = ["dfma", "dadd", "dmul", "hfma", "hadd", "hmul"]
    header = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes_read.sum",
                            "dram__bytes_write.sum"] + [
        f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ops]
    text = ncu_text(["usecond", "byte", "byte"] + ["inst"] * 6,
                    ["1", "1", "1", "10", "1", "1", "0", "0", "0"],
                    ["1", "1", "1", "0", "0", "0", "10", "3", "n/a"], header=header)
    text = text.replace("kernel_1", "kernel_0")
    a, b = parse_ncu_csv(text, "mix.csv")
    assert (a.flops, a.precision) == (22, "fp64")
    assert (b.flops, b.precision) == (23, "fp16")
    assert "n/a counted as 0" in b.source
    assert a.name == "kernel_0 #0" and b.name == "kernel_0 #1"


@pytest.mark.parametrize(("mutate", "line", "fragments"), [
    (lambda t: t.replace('"gpu__time_duration.sum"', '"gpu__time_duration.avg"'), 1,
     ("gpu__time_duration.sum",)),
    (lambda t: t.replace('"dram__bytes_write.sum"', '"dram__bytes_written"'), 1,
     ("dram__bytes_read.sum", "dram__bytes.sum")),
    (lambda t: t.replace('"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"', '"x"'), 1,
     ("FLOP",)),
    (lambda t: t.replace('"usecond"', '"fortnight"'), 2, ("gpu__time_duration.sum",
                                                          "fortnight")),
    (lambda t: t.replace('"12.5"', '"twelve"'), 3, ("gpu__time_duration.sum", "twelve")),
    (lambda t: t.replace('"12.5"', '"n/a"'), 3, ("gpu__time_duration.sum", "n/a")),
    (lambda t: t.replace('"12.5"', '"0"'), 3, ("gpu__time_duration.sum", "positive")),
    (lambda t: t.replace('"64"', '"-64"'), 3, ("dram__bytes_read.sum", "negative")),
    (lambda t: t.replace('"kernel_0"', '""'), 3, ("Kernel Name",)),
    (lambda t: t.replace(',"8.0",', ",") , 3, ("fields",)),
    (lambda t: "\n".join(t.splitlines()[:1]) + "\n", 2, ("units",)),
    (lambda t: "\n".join(t.splitlines()[:2]) + "\n", 2, ("no kernel",)),
    (lambda t: "\n".join([t.splitlines()[0]] + t.splitlines()[2:]) + "\n", 2, ("units",)),
    (lambda t: t.replace('"Kernel Name"', '"Kernel"'), 1, ("Kernel Name",)),
])
def test_bad_ncu_exports_are_refused_with_file_line_and_column(mutate, line, fragments):
    good = ncu_text(["usecond", "byte", "byte", "inst"], ["12.5", "64", "32", "3"])
    parse_ncu_csv(good, "ncu.csv")  # the unmutated text is fine
    with pytest.raises(InputError) as info:
        parse_ncu_csv(mutate(good), "ncu.csv")
    message = str(info.value)
    assert message.startswith(f"ncu.csv:{line}: "), message
    assert info.value.line == line
    for fragment in fragments:
        assert fragment in message, message
    assert "\n" not in message


def test_unreadable_files_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_ncu_csv(tmp_path / "missing.csv")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(InputError, match="NUL"):
        read_ncu_csv(binary)
    latin = tmp_path / "latin.csv"
    latin.write_bytes('"Kernel Name"\n"caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8"):
        read_measurements_csv(latin)
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        read_measurements_csv(empty)
    with pytest.raises(InputError, match="no Nsight Compute table"):
        read_ncu_csv(empty)


def test_broken_quoting_is_an_input_error():
    with pytest.raises(InputError) as info:
        parse_ncu_csv('"ID","Kernel Name\n"0","k"x"\n', "q.csv")
    assert str(info.value).startswith("q.csv:")


# ---------------------------------------------------------------------------------------------
# the plain CSV


def test_plain_csv_fixture():
    ffn, qk, softmax = read_measurements_csv(PLAIN)
    assert (ffn.name, ffn.operation, ffn.hardware) == ("FFN up, cuBLAS", "FFN up, prefill",
                                                       "h100-sxm")
    assert ffn.time_s == pytest.approx(4862e-6, rel=1e-15)
    assert ffn.flops is None and ffn.bytes is None and ffn.precision is None
    assert ffn.source == "measurements.csv line 2"
    assert qk.time_s is None
    assert qk.achieved_flops == pytest.approx(0.121e12, rel=1e-15)
    assert qk.source == "bench.py"
    assert softmax.standalone
    assert softmax.flops == pytest.approx(4.3e9, rel=1e-15)  # "4.3 GFLOP"
    assert softmax.bytes == 35_651_584  # "35,651,584"
    assert softmax.precision == "fp32"


@pytest.mark.parametrize(("column", "value", "seconds"), [
    ("time_s", "0.5", 0.5), ("time_ms", "2.5", 2.5e-3), ("time_us", "35.5", 35.5e-6),
    ("time_ns", '"11,840"', 11.84e-6)])
def test_plain_time_columns(column, value, seconds):
    (m,) = parse_measurements_csv(f"name,operation,{column}\nk,op,{value}\n", "t.csv")
    assert m.time_s == pytest.approx(seconds, rel=1e-15)


def test_plain_header_is_case_insensitive_and_blank_lines_are_skipped():
    (m,) = parse_measurements_csv("Name,Operation,TIME_US\n\nk,op,3\n\n", "c.csv")
    assert (m.name, m.operation, m.time_s) == ("k", "op", 3e-6)


@pytest.mark.parametrize(("text", "line", "fragments"), [
    ("name,operation,time_sec\nk,op,1\n", 1, ("time_sec", "did you mean 'time_s'")),
    ("name,time_s,time_us\nk,1,1\n", 1, ("one time column",)),
    ("operation,time_s\nop,1\n", 1, ("name column",)),
    ("name,operation\nk,op\n", 1, ("time column",)),
    ("name,operation,time_s,time_s\nk,op,1,1\n", 1, ("twice",)),
    ("name,operation,time_us\nk,op,1\nj,op,abc\n", 3, ("time_us", "abc")),
    ("name,operation,time_us\nk,op,1\nj,op\n", 3, ("fields",)),
    ("name,time_us,flops\nk,1,100\n", 2, ("bytes", "standalone")),
    ("name,time_us,flops,bytes\nk,1,1 PB,1\n", 2, ("flops",)),
    ("name,operation,time_us\nk,op,\n", 2, ("time_us", "time")),
    ("name,operation,time_us\n,op,1\n", 2, ("name",)),
    ("name,operation,time_us,precision\nk,op,1,fp12\n", 2, ("precision", "fp12")),
    ("name,operation,time_us\nk,op,-1\n", 2, ("time_us", "positive")),
])
def test_bad_plain_csv_is_refused_with_line_and_column(text, line, fragments):
    with pytest.raises(InputError) as info:
        parse_measurements_csv(text, "m.csv")
    message = str(info.value)
    assert message.startswith(f"m.csv:{line}: "), message
    for fragment in fragments:
        assert fragment in message, message


def test_load_measurements_recognises_both_formats(tmp_path):
    assert len(load_measurements(NCU, hardware="h100-sxm")) == 3
    assert all(m.hardware == "h100-sxm" for m in load_measurements(NCU, hardware="h100-sxm"))
    plain = load_measurements(PLAIN, hardware="a100-80gb")
    assert [m.hardware for m in plain] == ["h100-sxm", "h100-sxm", "h100-sxm"]
    # an ncu export missing a needed metric is still read as one, and says what is missing
    partial = tmp_path / "partial.csv"
    partial.write_text(NCU.read_text(encoding="utf-8").replace("gpu__time_duration.sum", "x"),
                       encoding="utf-8")
    with pytest.raises(InputError, match=r"gpu__time_duration\.sum"):
        load_measurements(partial)
    bare = tmp_path / "bare.csv"
    bare.write_text("name,operation,time_ms\nk,op,1\n", encoding="utf-8")
    assert load_measurements(bare, hardware="a100-80gb")[0].hardware == "a100-80gb"


# ---------------------------------------------------------------------------------------------
# attaching to a session


def _session() -> Session:
    s = Session()
    s.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    s.operations = [OperationEntry(Operation("gemm", {"m": 8192, "n": 28672, "k": 8192,
                                                      "dtype": "fp16"}, "FFN up, prefill"))]
    return s


def test_attach_measurements_checks_references_all_or_nothing():
    s = _session()
    ffn, qk, softmax = read_measurements_csv(PLAIN)
    with pytest.raises(InputError) as info:
        attach_measurements(s, [ffn, qk, softmax], "measurements.csv")
    message = str(info.value)
    assert message.startswith("measurements.csv: operation: ")
    assert "QK scores (Triton)" in message and "attention QK" in message
    assert "bench.py" in message  # the measurement's source
    assert s.measurements == []
    added = attach_measurements(s, [ffn, softmax])
    assert s.measurements == added == [ffn, softmax]
    s.measurements.extend(read_ncu_csv(NCU, hardware="h100-sxm"))
    from workbench.model.measured_session import judge_session

    verdicts = [p.judgement.verdict for p in judge_session(s)]
    assert len(verdicts) == 5 and None not in verdicts
