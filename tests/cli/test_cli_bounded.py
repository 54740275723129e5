"""Inputs are bounded before work starts, run as a user runs the command line (a subprocess):
regular files only, bounded JSON, bounded model configs, output failures. Every refusal is one
line on stderr, exit status 2 (1 when the output cannot be written), no traceback; a file that
would block (a FIFO, a device) is refused, not waited on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "workbench" / "examples" / "llama_ffn.yaml"
CONFIG = REPO / "workbench" / "model_configs" / "Llama-3.1-8B.json"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONSAFEPATH", None)
    env.update(extra)
    return env


def run(*args: str, stdout=subprocess.PIPE, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], cwd=REPO,
                          env=env or _env(), stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=HANG_GUARD_S)


def refused(proc: subprocess.CompletedProcess, *fragments: str, status: int = 2) -> str:
    assert proc.returncode == status, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert proc.stderr.endswith("\n") and proc.stderr.count("\n") == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)
    return proc.stderr


# ---------------------------------------------------------------------------------------------
# regular files only


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo.yaml"
    os.mkfifo(path)
    return path


def test_a_fifo_session_is_refused_not_waited_on(fifo):
    refused(run("analyze", fifo), f"{fifo}: is a pipe (FIFO), not a session file")


def test_a_device_session_is_refused_not_read_until_memory_runs_out():
    refused(run("analyze", "/dev/zero"), "/dev/zero: is a device, not a session file")


def test_a_link_to_a_device_is_refused_too(tmp_path):
    link = tmp_path / "s.yaml"
    link.symlink_to("/dev/zero")
    refused(run("render", link, "-o", tmp_path / "f.png"), f"{link}: is a device")
    assert not (tmp_path / "f.png").exists()


def test_an_empty_file_name_is_not_called_a_folder():
    message = refused(run("analyze", ""), "no file name given")
    assert "folder" not in message


def test_a_fifo_or_device_config_is_refused(fifo, tmp_path):
    refused(run("model", fifo, "--phase", "decode", "--batch", "1"), "is a pipe (FIFO)")
    refused(run("model", "/dev/zero", "--phase", "decode", "--batch", "1"), "is a device")


def test_a_fifo_in_the_user_presets_folder_is_left_out_with_a_warning(tmp_path):
    folder = tmp_path / "presets"
    folder.mkdir()
    os.mkfifo(folder / "stuck.yaml")
    (folder / "zero.yaml").symlink_to("/dev/zero")
    proc = run("presets", env=_env(ROOFLINE_WORKBENCH_USER_PRESETS=str(folder)))
    assert proc.returncode == 0, proc.stderr
    assert "h100-sxm" in proc.stdout
    warnings = proc.stderr.splitlines()
    assert len(warnings) == 2, warnings
    assert any("stuck.yaml: is a pipe (FIFO), not a preset file" in w for w in warnings)
    assert any("zero.yaml: is a device, not a preset file" in w for w in warnings)
    assert "session file" not in proc.stderr


def test_a_preset_file_problem_says_preset_file(tmp_path):
    folder = tmp_path / "presets"
    (folder / "big.yaml").mkdir(parents=True)  # a folder named like a preset
    proc = run("presets", env=_env(ROOFLINE_WORKBENCH_USER_PRESETS=str(folder)))
    assert "big.yaml: is a folder, not a preset file" in proc.stderr
    assert "session file" not in proc.stderr


# ---------------------------------------------------------------------------------------------
# JSON bounded


def _config(tmp_path, **changes) -> Path:
    text = CONFIG.read_text(encoding="utf-8")
    data = json.loads(text)
    data.update(changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_5000_digit_number_in_a_config_is_one_line(tmp_path):
    path = _config(tmp_path)
    text = path.read_text().replace('"hidden_size": 4096', '"hidden_size": 1' + "0" * 5000)
    path.write_text(text)
    refused(run("model", path, "--phase", "decode", "--batch", "1"),
            f"{path}: holds a number with more than 400 digits")


def test_deeply_nested_json_is_one_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    refused(run("model", path, "--phase", "decode", "--batch", "1"),
            f"{path}: is not a config: nested more than 64 levels deep")


def test_a_session_whose_model_config_is_deeply_nested_is_one_line(tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    session = tmp_path / "s.yaml"
    session.write_text(f"schema_version: 2\nhardware: [{{preset: h100-sxm}}]\nmodels:\n"
                       f"  - {{config: '{config}', phase: decode, batch: 1, kv_len: 128}}\n")
    refused(run("analyze", session), "nested more than 64 levels deep")


# ---------------------------------------------------------------------------------------------
# model configs bounded before work starts


def test_a_billion_layers_is_refused_at_once(tmp_path):
    path = _config(tmp_path, num_hidden_layers=1_000_000_000)
    refused(run("model", path, "--phase", "decode", "--batch", "1"),
            f"{path}:", "num_hidden_layers: is too large: at most 1,000, got 1,000,000,000")


@pytest.mark.parametrize("key", ["hidden_size", "vocab_size", "num_attention_heads",
                                 "intermediate_size"])
def test_every_config_count_is_bounded(tmp_path, key):
    path = _config(tmp_path, **{key: 10**9})
    refused(run("model", path, "--phase", "decode", "--batch", "1"), f"{key}: is too large")


def test_a_tiny_session_cannot_expand_past_the_operation_limit(tmp_path):
    path = _config(tmp_path, num_hidden_layers=1_000)
    session = tmp_path / "s.yaml"
    session.write_text("schema_version: 2\nhardware: [{preset: h100-sxm}]\nmodels:\n" + "".join(
        f"  - {{config: '{path}', phase: decode, batch: 1, kv_len: 8, view: all, name: m{i}}}\n"
        for i in range(12)))
    refused(run("analyze", session), f"{session}:", "models[", "more than 100,000")


def test_model_lengths_on_the_command_line_are_bounded_as_in_a_session():
    refused(run("model", "Llama-3.1-8B", "--phase", "decode", "--batch", "9" * 24),
            "--batch: must be at most 10,000,000")


# ---------------------------------------------------------------------------------------------
# output failures: one line on stderr, exit 1


@pytest.mark.parametrize("args", [
    ("analyze", str(EXAMPLE)), ("analyze", str(EXAMPLE), "--format", "json"), ("presets",),
    ("model", "Llama-3.1-8B", "--phase", "decode", "--batch", "1"), ("--help",),
    ("--version",), ("analyze", "--help")], ids=lambda a: " ".join(a)[:30])
def test_a_full_disk_on_stdout_is_one_line_and_exit_1(args):
    with open("/dev/full", "w") as full:
        proc = run(*args, stdout=full)
    assert refused(proc, status=1) == (
        "roofline-workbench: cannot write the output: No space left on device\n")


@pytest.mark.parametrize("args", [("presets",), ("--version",),
                                  ("analyze", str(EXAMPLE), "--format", "csv")])
def test_a_stdout_closed_while_running_is_one_line_and_exit_1(args):
    proc = subprocess.run([sys.executable, "-c", "import os, sys, runpy; os.close(1); "
                           "sys.argv = ['workbench', *sys.argv[1:]]; "
                           "runpy.run_module('workbench', run_name='__main__')", *args],
                          cwd=REPO, env=_env(), stderr=subprocess.PIPE, text=True, timeout=HANG_GUARD_S)
    assert refused(proc, status=1) == (
        "roofline-workbench: cannot write the output: standard output is closed\n")


def test_a_reader_that_stops_early_is_not_an_error():
    proc = subprocess.run(f"'{sys.executable}' -m workbench presets | head -1", shell=True,
                          cwd=REPO, env=_env(), capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert proc.stdout.startswith("id ")
    assert proc.stderr == ""


def test_a_stdout_closed_before_the_start_is_one_line_and_exit_1():
    proc = subprocess.run(f"'{sys.executable}' -m workbench presets >&-", shell=True, cwd=REPO,
                          env=_env(), stderr=subprocess.PIPE, text=True, timeout=HANG_GUARD_S)
    assert refused(proc, status=1) == (
        "roofline-workbench: cannot write the output: standard output is closed\n")


# ---------------------------------------------------------------------------------------------
# messages


def test_escape_sequences_in_a_file_name_are_not_sent_to_the_terminal(tmp_path):
    name = tmp_path / "evil\x1b[2J.yaml"
    message = refused(run("analyze", name), "no such file")
    assert "\x1b" not in message
    assert "evil\\x1b[2J.yaml" in message


def test_escape_sequences_in_a_model_name_are_escaped_in_the_table(tmp_path):
    path = _config(tmp_path, _name_or_path="evil\x1b[2J\x07")
    path = path.rename(tmp_path / "evil\x1b[2J.json")
    proc = run("model", path, "--phase", "decode", "--batch", "1")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert proc.stdout.startswith("evil\\x1b[2J: ")


def test_a_right_to_left_override_in_a_name_cannot_reverse_the_numbers_after_it(tmp_path):
    # U+202E in an operation's name, printed as it is, makes a terminal show the rest of the
    # line right to left: the machine, the FLOPs and the times after the name read reversed
    session = tmp_path / "s.yaml"
    session.write_text("schema_version: 1\ntitle: t\nhardware: [{preset: h100-sxm}]\n"
                       "operations:\n  - {kind: gemm, name: \"up\\u202e 8192\", m: 8192, "
                       "n: 8192, k: 8192, dtype: bf16}\n", encoding="utf-8")
    proc = run("analyze", session)
    assert proc.returncode == 0, proc.stderr
    row = proc.stdout.splitlines()[-1]
    assert "\u202e" not in row
    assert row.startswith("up\\u202e 8192  NVIDIA H100")


def test_render_prints_nothing_when_it_succeeds(tmp_path):
    proc = run("render", EXAMPLE, "-o", tmp_path / "f.png")
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert (tmp_path / "f.png").stat().st_size > 10_000


def test_model_takes_a_user_preset_that_presets_lists(tmp_path):
    folder = tmp_path / "presets"
    folder.mkdir()
    (folder / "mine.yaml").write_text(
        "id: mine\nname: My accelerator\ncompute: {bf16: 100 TFLOP/s}\nmemory: {hbm: 1 TB/s}\n",
        encoding="utf-8")
    env = _env(ROOFLINE_WORKBENCH_USER_PRESETS=str(folder))
    listed = run("presets", env=env)
    assert "mine" in listed.stdout.split()
    proc = run("model", "Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--hardware",
               "mine", "--format", "json", env=env)
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert result["hardware"] == "My accelerator"


def test_the_app_refuses_a_fifo_or_a_too_deep_config_before_any_window(fifo, tmp_path):
    refused(run(fifo), f"{fifo}: is a pipe (FIFO), not a session file")
    config = tmp_path / "config.json"
    config.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    session = tmp_path / "s.yaml"
    session.write_text(f"schema_version: 2\nhardware: [{{preset: h100-sxm}}]\nmodels:\n"
                       f"  - {{config: '{config}', phase: decode, batch: 1, kv_len: 128}}\n")
    refused(run(session), f"{session}:", "nested more than 64 levels deep")
