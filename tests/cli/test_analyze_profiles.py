"""``analyze SESSION --measurements FILE`` with profiles: each kernel's point at every memory
level, its launches and share of GPU time, ``--top N``, ``--level``, what was not counted,
and two runs of one program compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
A100 = FIXTURES / "ncu_details_a100_bert_flashattn.csv"
SESSION = "schema_version: 2\ntitle: profile\nhardware:\n  - preset: a100-40gb\noperations: []\n"
DESCRIPTIVE = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
               "Stream", "Block Size", "Grid Size", "Device", "CC"]
METRICS = ["gpu__time_duration.sum", "dram__bytes.sum", "lts__t_bytes.sum",
           "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]


def export(path: Path, *kernels: tuple[str, str, str]) -> Path:
    """A raw export: (name, time in µs, FFMA count) per launch; DRAM 1 MB, L2 4 MB each."""
    def row(cells):
        return ",".join(f'"{c}"' for c in cells)

    lines = [row(DESCRIPTIVE + METRICS), row([""] * 11 + ["usecond", "Mbyte", "Mbyte", "inst"])]
    for i, (name, time, ffma) in enumerate(kernels):
        lines.append(row([str(i), "1", "p", "h", name, "1", "7", "(256, 1, 1)", "(80, 1, 1)",
                          "0", "8.0", time, "1", "4", ffma]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def analyze(capsys, tmp_path, *args) -> tuple[int, str, str]:
    session = tmp_path / "s.yaml"
    session.write_text(SESSION, encoding="utf-8")
    status = main(["analyze", str(session), *map(str, args)])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_json_gives_each_kernel_at_its_levels_with_its_share(capsys, tmp_path):
    status, out, err = analyze(capsys, tmp_path, "--measurements", A100, "--hardware",
                               "a100-40gb", "--top", 3, "--level", "l2", "--format", "json")
    assert status == 0, err
    data = json.loads(out)
    (imported,) = data["imports"]
    assert (imported["dispatches"], imported["kernels"]) == (10, 10)
    assert imported["hidden"]["kernels"] == 7 and imported["not_counted"] == []
    measured = data["measurements"]
    assert len(measured) == 3
    shares = [m["share"] for m in measured]
    assert shares == sorted(shares, reverse=True)  # the top 3 by GPU time
    assert sum(shares) + imported["hidden"]["time_s"] / imported["gpu_time_s"] == \
        pytest.approx(1.0)
    gemm = next(m for m in measured if "s161616gemm_f16_32x32" in m["name"])
    (l2,) = gemm["levels"]  # --level l2: that level only
    # 3,342,336 FLOPs over 2,319,200 B of L2 traffic, against the A100's 5.4 TB/s L2
    assert l2["level"] == "l2" and l2["intensity"] == pytest.approx(3_342_336 / 2_319_200)
    assert l2["roof"] == pytest.approx(3_342_336 / 2_319_200 * 5.4e12)
    time = 7_219.93 / 932_325_145.39
    assert l2["fraction"] == pytest.approx(3_342_336 / time / l2["roof"])
    assert (gemm["count"], gemm["precision"], gemm["unit"]) == (1, "fp16", "matrix")


def test_table_lists_levels_and_what_was_not_counted(capsys, tmp_path):
    path = export(tmp_path / "run.csv", ("ampere_bf16_s16816gemm", "90", "100"),
                  ("softmax", "10", "1,000"), ("softmax", "30", "1,000"))
    status, out, err = analyze(capsys, tmp_path, "--measurements", path)
    assert status == 0, err
    assert f"imported {path}: 3 dispatches of 2 kernels; counted 31 % of GPU time; 69 % in 1 " \
           "kernel not counted (ampere_bf16_s16816gemm)" in out
    assert "  not counted: ampere_bf16_s16816gemm (1 launch, 90 µs): runs on tensor cores" in out
    # softmax: 2 launches, mean 20 µs, 40 of 130 µs of GPU time
    assert "2 launches, 30.8 % of GPU time" in out
    # 2 × 1,000 FFMA = 2,000 FLOPs over 4 MB of L2: I = 5e-4, roof 5e-4 × 5.4 TB/s = 2.7 GFLOP/s
    assert "  l2: 4 MB, I = 5.00e-4 FLOP/B, roof 2.7 GFLOP/s: " in out
    # one launch is one launch (an A100 export: each of its 10 kernels ran once)
    status, out, err = analyze(capsys, tmp_path, "--measurements", A100, "--hardware",
                               "a100-40gb", "--top", 3)
    assert status == 0, err
    assert "; 1 launch, " in out and "1 launches" not in out


def test_two_runs_are_compared_kernel_by_kernel(capsys, tmp_path):
    before = export(tmp_path / "before.csv", ("softmax", "40", "8"), ("gemm_sgemm", "100", "9"))
    after = export(tmp_path / "after.csv", ("softmax", "10", "8"), ("other", "5", "1"))
    status, out, err = analyze(capsys, tmp_path, "--measurements", before, "--measurements",
                               after, "--format", "json")
    assert status == 0, err
    (change,) = json.loads(out)["runs"]
    assert (change["name"], change["before_run"], change["after_run"]) == (
        "softmax", "before.csv", "after.csv")
    assert change["speedup"] == pytest.approx(40 / 10)
    status, out, _ = analyze(capsys, tmp_path, "--measurements", before, "--measurements", after)
    assert "run change: softmax: 40 µs -> 10 µs (4x speed-up)" in out
    # (as the usage writes it, "--measurements FILE ...": the two files after one option)
    status, out, err = analyze(capsys, tmp_path, "--measurements", before, after)
    assert status == 0, err
    assert "run change: softmax: 40 µs -> 10 µs (4x speed-up)" in out


def test_options_that_need_measurements_say_so_without_them(capsys, tmp_path):
    # --hardware and --top choose among imported points: alone they would change nothing
    for option, value in (("--hardware", "h100-sxm"), ("--top", 3)):
        status, out, err = analyze(capsys, tmp_path, option, value)
        assert status == 2 and out == ""
        assert err.count("\n") == 1 and f"{option} applies to --measurements" in err


def test_a_bad_number_is_one_line_and_exit_2(capsys, tmp_path):
    path = export(tmp_path / "bad.csv", ("softmax", "1.234,5", "8"))
    status, out, err = analyze(capsys, tmp_path, "--measurements", path)
    assert status == 2 and out == ""
    assert err.count("\n") == 1
    assert f"{path}:3: gpu__time_duration.sum: expected a number, got '1.234,5'" in err


def test_a_machine_the_session_lacks_names_the_option_not_the_file(capsys, tmp_path):
    # the file is fine: the refusal points at --hardware, whatever the first kernel is named
    path = export(tmp_path / "run.csv", ("softmax", "12", "8"))
    status, out, err = analyze(capsys, tmp_path, "--measurements", path, "--hardware", "a100")
    assert status == 2 and out == ""
    assert err == ("roofline-workbench: --hardware: no machine 'a100' in this session "
                   "(machines: 'a100-40gb')\n")


def test_two_runs_of_one_file_name_in_deep_folders_are_named_as_the_app_names_them(
        capsys, tmp_path):
    # two exports both named run.csv, in folders whose paths are over 300 characters (the
    # longest a run's name may be): compared, named by the file name and a number
    folders = [tmp_path.joinpath(*[f"{side}" * 200] * 2) for side in "ab"]
    for folder in folders:
        folder.mkdir(parents=True)
    before = export(folders[0] / "run.csv", ("softmax", "40", "8"))
    after = export(folders[1] / "run.csv", ("softmax", "10", "8"))
    assert len(str(after)) > 300
    status, out, err = analyze(capsys, tmp_path, "--measurements", before, after,
                               "--format", "json")
    assert status == 0, err
    (change,) = json.loads(out)["runs"]
    assert (change["name"], change["before_run"], change["after_run"]) == (
        "softmax", "run.csv", "run.csv (2)")
