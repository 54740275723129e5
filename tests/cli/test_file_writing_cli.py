"""The command line writes files the way the app does: read-only files refused with one line
and exit 2 (before any long work), modes and links kept; its CSV never carries a formula."""

from __future__ import annotations

import csv
import io
import os
import stat
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from conftest import HANG_GUARD_S

from workbench.cli import main
from workbench.io.user_presets import USER_PRESETS_VARIABLE

REPO = Path(__file__).resolve().parents[2]
LLAMA = REPO / "workbench" / "examples" / "llama_ffn.yaml"

SESSION = """\
schema_version: 2
hardware:
  - name: "+rig"
    compute: {fp16: 100 TFLOP/s, fp32: 20 TFLOP/s}
    memory: {hbm: 1 TB/s}
operations:
  - name: "=cmd|' /C calc'!A0"
    kind: gemm
    m: 64
    n: 64
    k: 64
    dtype: fp16
  - name: "@SUM(A1:A9)"
    kind: custom
    flops: 1e9
    bytes: 1e8
  - name: FFN up
    kind: gemm
    m: 512
    n: 512
    k: 512
    dtype: fp16
"""


def run(*args) -> tuple[int, str, str]:
    """``main([...])`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_analyze_csv_makes_formulas_text_and_keeps_numbers(tmp_path):
    session = tmp_path / "s.yaml"
    session.write_text(SESSION, encoding="utf-8")
    code, out, err = run("analyze", session, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["operation"] for r in rows] == ["'=cmd|' /C calc'!A0", "'@SUM(A1:A9)", "FFN up"]
    assert {r["hardware"] for r in rows} == {"'+rig"}
    assert all(float(r["flops [FLOP]"]) > 0 and float(r["t_lower [s]"]) > 0 for r in rows)
    assert not any(cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r.values()
                   if cell and not _number(cell))


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_render_refuses_a_read_only_figure_with_one_line(tmp_path):
    target = tmp_path / "fig.png"
    target.write_bytes(b"the figure in the paper")
    os.chmod(target, 0o444)
    code, out, err = run("render", LLAMA, "-o", target, "--width", 300, "--height", 200)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert "fig.png" in lines[0] and "read-only" in lines[0]
    assert target.read_bytes() == b"the figure in the paper" and _mode(target) == 0o444
    assert [p.name for p in tmp_path.iterdir()] == ["fig.png"]


def test_render_keeps_the_figures_mode_and_link(tmp_path):
    real = tmp_path / "paper" / "fig.svg"
    real.parent.mkdir()
    real.write_text("old", encoding="utf-8")
    os.chmod(real, 0o640)
    link = tmp_path / "fig.svg"
    link.symlink_to(real)
    code, _, err = run("render", LLAMA, "-o", link, "--width", 300, "--height", 200)
    assert code == 0, err
    assert link.is_symlink() and _mode(real) == 0o640
    assert "<svg" in real.read_text(encoding="utf-8")


def test_measure_refuses_a_read_only_output_before_measuring(tmp_path):
    target = tmp_path / "m.yaml"
    target.write_text("id: kept\n", encoding="utf-8")
    os.chmod(target, 0o444)
    presets = tmp_path / "presets"
    env = {**os.environ, "PYTHONPATH": str(REPO), USER_PRESETS_VARIABLE: str(presets)}
    env.pop("ROOFLINE_WORKBENCH_MEASURE_PROFILE", None)
    done = subprocess.run([sys.executable, "-m", "workbench", "measure", "--quick", "-o",
                           str(target)], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=HANG_GUARD_S)
    assert not presets.exists()  # refused before measuring: no machine was saved
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith(f"roofline-workbench: {target}: cannot write: ")
    assert "read-only" in lines[0] and ".tmp" not in lines[0]
    assert target.read_text(encoding="utf-8") == "id: kept\n" and _mode(target) == 0o444
    assert not presets.exists() or not list(presets.iterdir())  # no preset saved either
