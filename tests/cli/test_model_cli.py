"""``roofline-workbench model``, run as a user runs it (a subprocess).

Expected numbers are worked out here from the shipped config.json files with the counting
conventions of the README, not taken from the engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "workbench" / "model_configs"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONSAFEPATH", None)
    return env


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", "model", *map(str, args)],
                          cwd=REPO, env=_env(), capture_output=True, text=True, timeout=HANG_GUARD_S)


def llama_params(c: dict) -> int:
    """Every weight tensor of a Llama-style config: q, k, v, o, gate, up, down, two norms per
    layer, the final norm, the embedding and (untied) lm_head."""
    H, L, I, V = c["hidden_size"], c["num_hidden_layers"], c["intermediate_size"], c["vocab_size"]  # noqa: E741 - the config's own letters
    h, hk = c["num_attention_heads"], c["num_key_value_heads"]
    d = c.get("head_dim") or H // h
    per_layer = H * h * d + 2 * H * hk * d + h * d * H + 3 * H * I + 2 * H
    return L * per_layer + H + V * H * (1 if c.get("tie_word_embeddings") else 2)


@pytest.fixture(scope="module")
def decode_json():
    out = run("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--kv-len", "1024",
              "--hardware", "teaching-machine", "h100-sxm", "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_decode_json_keys_and_model_figures(decode_json):
    c = json.loads((CONFIGS / "Llama-3.1-8B.json").read_text())
    data = decode_json
    assert set(data) >= {"model", "phase", "batch", "totals", "results", "operations"}
    model = data["model"]
    assert set(model) >= {"name", "params", "active_params", "layers", "weight_bytes",
                          "kv_cache_bytes_per_token"}
    assert model["params"] == llama_params(c)
    assert model["active_params"] == llama_params(c) - c["vocab_size"] * c["hidden_size"]
    assert model["layers"] == 32
    assert model["weight_bytes"] == 2 * llama_params(c)
    assert model["kv_cache_bytes_per_token"] == 2 * 32 * 8 * 128 * 2
    assert data["phase"] == "decode" and data["batch"] == 1
    assert set(data["totals"]) >= {"flops", "bytes"}


def test_decode_on_the_teaching_machine_is_weight_bandwidth_bound(decode_json):
    data = decode_json
    teaching = data["results"][0]
    assert set(teaching) >= {"hardware", "t_lower_s", "t_predicted_s", "tpot_s",
                             "tokens_per_s", "memory_needed_bytes", "fits"}
    assert "ttft_s" not in teaching
    # at batch 1 every kernel is memory-bound on a 100 FLOP/B machine: the time is the bytes
    # over 1 TB/s, and the bytes are the weights read (all but the input table) + KV cache
    weights_read = data["model"]["weight_bytes"] - 128256 * 4096 * 2
    kv = 1024 * data["model"]["kv_cache_bytes_per_token"]
    assert teaching["t_lower_s"] == pytest.approx((weights_read + kv) / 1e12, rel=0.01)
    # derated, the teaching machine has no derating and no launch overhead
    derated = run("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--kv-len", "1024",
                  "--hardware", "teaching-machine", "--format", "json", "--prediction",
                  "derated")
    plain = json.loads(derated.stdout)["results"][0]
    assert plain["t_predicted_s"] == pytest.approx(plain["t_lower_s"])
    # by default (calibrated, the H100's figures assumed, a CUDA graph): above the bound
    assert teaching["t_predicted_s"] > teaching["t_lower_s"]
    assert teaching["tokens_per_s"] == pytest.approx(1 / teaching["tpot_s"])
    assert teaching["fits"] is None  # the teaching machine states no capacity
    h100 = data["results"][1]
    assert h100["fits"] is True
    assert h100["memory_needed_bytes"] >= data["model"]["weight_bytes"] + kv
    # every operation carries its derivation
    for op in data["operations"]:
        assert op["terms"] and all(t["formula"] for t in op["terms"])


def test_prefill_reports_ttft_and_tensor_parallel_memory():
    out = run("Llama-3.1-405B", "--phase", "prefill", "--batch", "1", "--prompt-len", "2048",
              "--tp", "8", "--weights", "fp8", "--hardware", "h100-sxm", "--format", "json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)["results"][0]
    assert "ttft_s" in r and "tpot_s" not in r
    assert r["tokens_per_s"] == pytest.approx(2048 / r["ttft_s"])
    # fp8 weights (embeddings kept in bf16) ≈ 405 GB + 8 GB, against 8 × 80 GB
    assert r["fits"] is True
    one = json.loads(run("Llama-3.1-405B", "--phase", "prefill", "--batch", "1",
                         "--hardware", "h100-sxm", "--format", "json").stdout)["results"][0]
    assert one["fits"] is False


def test_table_says_does_not_fit():
    out = run("Llama-3.1-70B", "--phase", "decode", "--batch", "1", "--hardware", "rtx-4090")
    assert out.returncode == 0, out.stderr
    assert "does not fit" in out.stdout and "TPOT" in out.stdout


def test_config_file_path_and_session_machine(tmp_path):
    session = tmp_path / "s.yaml"
    session.write_text("schema_version: 1\nhardware:\n  - preset: mi300x\n  - preset: l4\n")
    out = run(CONFIGS / "Qwen3-8B.json", "--phase", "decode", "--batch", "8",
              "--hardware", f"{session}:l4", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert len(data["results"]) == 1 and "L4" in data["results"][0]["hardware"]


@pytest.mark.parametrize("args, needle", [
    (("missing.json", "--phase", "decode", "--batch", "1"), "missing.json"),
    (("Llama-3.1-8B", "--phase", "decode", "--batch", "-3"), "--batch"),
    (("Llama-3.1-8B", "--phase", "train", "--batch", "1"), "--phase"),
    (("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--hardware", "nope"), "nope"),
    (("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--weights", "int3"), "--weights"),
    # (values the set-up refuses, not the option's parser, are said by the option too)
    (("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--acceptance", "2"),
     ": --acceptance: must be"),
    (("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--memory-utilization", "2"),
     ": --memory-utilization: must be"),
    (("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--ep", "2"), ": --ep: "),
    # 32 query heads and 8 KV heads: no engine splits them over 3 or 12 chips
    (("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--tp", "3"),
     ": --tp: 3 does not divide Llama-3.1-8B's 32 attention heads"),
    (("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--tp", "12"),
     ": --tp: 12 does not divide Llama-3.1-8B's 32 attention heads"),
])
def test_bad_input_is_one_line_and_exit_two(args, needle):
    out = run(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]


def _mistral_with(folder: Path, **fields) -> Path:
    """Mistral-7B's shipped config.json with ``fields`` changed, written in ``folder``."""
    config = json.loads((CONFIGS / "Mistral-7B-v0.3.json").read_text()) | fields
    path = folder / "config.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def test_bad_config_names_file_and_field(tmp_path):
    path = _mistral_with(tmp_path, model_type="rwkv")
    out = run(path, "--phase", "decode", "--batch", "1")
    assert out.returncode == 2
    line = out.stderr.strip()
    assert str(path) in line and "model_type" in line and "rwkv" in line and "\n" not in line


def test_an_activation_that_cannot_be_counted_is_one_line_naming_it(tmp_path):
    path = _mistral_with(tmp_path, hidden_act="swiglu_foo")
    out = run(path, "--phase", "decode", "--batch", "1")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"roofline-workbench: {path}:")
    assert "hidden_act: unknown activation 'swiglu_foo'" in out.stderr
    assert out.stderr.count("\n") == 1


def test_a_models_folder_or_no_name_is_said_as_such(tmp_path):
    # a model's folder as Hugging Face downloads it is not "no such file"; an empty name
    # (the current folder) is no name at all
    folder = tmp_path / "Llama-3.1-8B-Instruct"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "Llama-3.1-8B.json").read_text())
    out = run(folder, "--phase", "decode", "--batch", "1")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (f"roofline-workbench: {folder}: is a folder, not a model config "
                          "(config.json) (give the config.json it holds)\n")
    out = run("", "--phase", "decode", "--batch", "1")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("roofline-workbench: '': no file name given")
    assert out.stderr.count("\n") == 1


def test_help_names_the_shipped_configs():
    out = run("--help")
    assert out.returncode == 0
    assert "Llama-3.1-8B" in out.stdout and "shipped" in out.stdout
