"""Real Nsight Compute exports, saved exactly as ``ncu --csv --page raw … > out.csv`` wrote
them (the profiled program's own print and ncu's ``==PROF==`` lines before the table), import
as they are: in the app's importer and through ``analyze SESSION --measurements FILE``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

from workbench.io.errors import InputError
from workbench.io.measurements import is_ncu_csv, load_measurements, parse_ncu_csv

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "calibration" / "gpu-measurements"
EXPORTS = {"h100-sxm": DATA / "ncu-h100-sxm.csv", "h200": DATA / "ncu-h200.csv"}


@pytest.mark.parametrize("gpu", sorted(EXPORTS))
def test_real_export_imports_unchanged(gpu):
    text = EXPORTS[gpu].read_text(encoding="utf-8")
    assert text.startswith("==PROF== Connected")  # the file is as ncu wrote it
    assert "\nok torch.Size" in text
    assert is_ncu_csv(text)
    gemm, add, softmax, sgemm = load_measurements(EXPORTS[gpu], gpu)
    assert gemm.name.startswith("nvjet_sm90")
    assert gemm.flops == 2 * 4096 ** 3
    assert gemm.precision == "bf16"
    assert "vectorized_elementwise_kernel" in add.name and add.precision == "fp32"
    # PyTorch's add (x + alpha · r) runs as 64 Mi FMAs: 67,108,864 ffma, 2 FLOPs each
    assert add.flops == 2 * (64 << 20)
    assert "SoftMax" in softmax.name
    assert "simt_sgemm" in sgemm.name and sgemm.precision == "fp32"
    assert sgemm.flops == pytest.approx(2 * 2048 ** 3, rel=1e-3)
    assert all(m.hardware == gpu for m in (gemm, add, softmax, sgemm))
    assert all(m.time_s > 0 and m.bytes > 0 for m in (gemm, add, softmax, sgemm))


def test_h100_export_numbers():
    gemm, add, _, _ = load_measurements(EXPORTS["h100-sxm"])
    assert gemm.time_s == pytest.approx(204.672e-6, rel=1e-12)  # "204,672" ns
    assert gemm.bytes == 150_452_992 + 28_112_640  # DRAM read + write: 178.6 MB
    assert add.bytes == 536_906_752 + 250_679_552


def test_program_output_and_prof_lines_anywhere_are_skipped():
    text = EXPORTS["h100-sxm"].read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    # a program that prints quotes and commas, and a ==PROF== line inside the table
    noisy = (['step 1, loss "0.5", ok\n', 'x,"y\n'] + lines[header:header + 3]
             + ["==PROF== Disconnected from process 599\n"] + lines[header + 3:])
    before = load_measurements(EXPORTS["h100-sxm"])
    after = parse_ncu_csv("".join(noisy), "noisy.csv")
    assert [(m.name, m.flops, m.bytes, m.time_s) for m in after] == [
        (m.name, m.flops, m.bytes, m.time_s) for m in before]


def test_errors_keep_the_file_line_numbers():
    text = EXPORTS["h200"].read_text(encoding="utf-8").replace('"219,584"', '"abc"')
    with pytest.raises(InputError) as info:
        parse_ncu_csv(text, "ncu-h200.csv")
    assert str(info.value).startswith("ncu-h200.csv:6: ")  # line 6 of the file as written


def test_text_without_a_table_is_still_refused():
    with pytest.raises(InputError, match="no \"Kernel Name\" column"):
        parse_ncu_csv("==PROF== Connected to process 1\nhello\n", "out.csv")


# ---------------------------------------------------------------------------------------------
# analyze SESSION --measurements FILE


def run(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)


SESSION = """\
schema_version: 2
title: GEMM and its kernel
hardware:
  - preset: h100-sxm
operations:
  - name: GEMM 4096
    kind: gemm
    m: 4096
    n: 4096
    k: 4096
    dtype: bf16
"""


def test_analyze_judges_an_ncu_export_as_written(tmp_path):
    session = tmp_path / "s.yaml"
    session.write_text(SESSION, encoding="utf-8")
    before = session.read_bytes()
    proc = run("analyze", session, "--measurements", EXPORTS["h100-sxm"], "--hardware",
               "h100-sxm", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout)["measurements"]
    assert len(measured) == 4
    gemm = measured[0]
    assert gemm["name"].startswith("nvjet_sm90")
    assert gemm["flops"] == 2 * 4096 ** 3
    # 2·4096³ FLOPs in 204.672 µs on a 989.4 TFLOP/s roof
    assert gemm["measured_time_s"] == pytest.approx(204.672e-6)
    assert gemm["fraction"] == pytest.approx(2 * 4096 ** 3 / 989.4e12 / 204.672e-6, rel=1e-6)
    assert not any(m["above_roof"] for m in measured)
    assert session.read_bytes() == before  # the session file is not changed
    table = run("analyze", session, "--measurements", EXPORTS["h100-sxm"])
    assert table.returncode == 0, table.stderr
    assert "nvjet_sm90" in table.stdout


def test_analyze_with_a_bad_measurements_file_exits_2_with_one_line(tmp_path):
    session = tmp_path / "s.yaml"
    session.write_text(SESSION, encoding="utf-8")
    bad = tmp_path / "bad.csv"
    bad.write_text("name,time_us\nk,abc\n", encoding="utf-8")
    proc = run("analyze", session, "--measurements", bad)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "bad.csv:2" in proc.stderr and "abc" in proc.stderr
    proc = run("analyze", session, "--measurements", EXPORTS["h200"], "--hardware", "tpu-v9")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "tpu-v9" in proc.stderr
