"""Behaviour of the file formats that a mutation sample (docs/mutation.md) found no test for:
each test here fails on a mutant that survived the rest of the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from workbench.io import atomic, limits, presets, user_presets
from workbench.io.errors import InputError
from workbench.io.examples import DEFAULT_EXAMPLE, list_examples
from workbench.io.limits import read_regular_file, terminal_text
from workbench.io.measurements import parse_measurements_csv, parse_ncu_csv
from workbench.io.model_configs import parse_model_config, shipped_configs
from workbench.io.ncu import import_ncu_text
from workbench.io.presets import get_preset
from workbench.io.sessions import loads_session, session_to_data
from workbench.model import limits as model_limits
from workbench.model.session import HardwareEntry, Session
from workbench.model.units import QuantityError, parse_quantity

ROOT = Path(__file__).resolve().parents[2]
DESCRIPTIVE = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
               "Stream", "Block Size", "Grid Size", "Device", "CC"]


# ---------------------------------------------------------------------------------------------
# saving: another process's temporary file, a file owned by someone else

def test_asking_whether_a_process_runs_leaves_it_running():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert atomic.process_alive(child.pid)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=0.3)  # a probe is signal 0: nothing is delivered
    finally:
        child.kill()
        child.wait()
    assert not atomic.process_alive(child.pid)


def test_saving_over_a_file_whose_owner_cannot_be_kept_still_saves(tmp_path, monkeypatch):
    target = tmp_path / "s.yaml"
    target.write_text("old\n", encoding="utf-8")
    real = target.stat()
    fake = type("Stat", (), {"st_uid": real.st_uid + 1, "st_gid": real.st_gid + 1,
                             "st_mode": real.st_mode})()

    def refuse(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(atomic.os, "fchown", refuse)
    with open(target, "rb+") as handle:
        atomic._keep_owner_and_mode(handle.fileno(), fake)  # not root: keeps what it can
    assert target.read_text(encoding="utf-8") == "old\n"


# ---------------------------------------------------------------------------------------------
# shipped files

def test_the_examples_are_listed_with_the_titles_they_carry():
    examples = dict((path.name, title) for title, path in list_examples())
    assert DEFAULT_EXAMPLE in examples
    assert examples["fusion.yaml"].startswith("Kernel fusion")
    assert all((ROOT / "workbench" / "examples" / name).is_file() for name in examples)


def test_built_in_machine_ids_are_the_preset_file_names():
    ids = presets.builtin_ids()
    assert ids == {p.stem for p in (ROOT / "hardware_presets").glob("*.yaml")}
    assert "h100-sxm" in ids


def test_presets_are_found_beside_the_source_tree_when_not_packaged():
    assert presets.presets_dir().resolve() == (ROOT / "hardware_presets").resolve()


# ---------------------------------------------------------------------------------------------
# user machines

@pytest.mark.parametrize(("platform", "parts"), [
    ("linux", (".local", "share")),
    ("darwin", ("Library", "Application Support")),
])
def test_user_machines_folder_per_platform(monkeypatch, tmp_path, platform, parts):
    monkeypatch.delenv(user_presets.USER_PRESETS_VARIABLE, raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(user_presets.sys, "platform", platform)
    assert user_presets.user_presets_dir() == tmp_path.joinpath(*parts, "roofline-workbench",
                                                                 "presets")


def test_a_measured_machine_keeps_its_provenance_through_a_file(tmp_path):
    hw = get_preset("h100-sxm")
    provenance = {"cpu": "Test CPU", "cores": 8, "curves": {1: [1.5, 2.5]}}
    path = tmp_path / "bench.yaml"
    path.write_text(user_presets.dump_yaml(user_presets.machine_to_data(hw, provenance)),
                    encoding="utf-8")
    loaded, back = user_presets.load_machine_file(path)
    assert loaded.name == hw.name
    assert back == {"cpu": "Test CPU", "cores": 8, "curves": {"1": [1.5, 2.5]}}


# ---------------------------------------------------------------------------------------------
# measurements and terminal text

def test_control_characters_are_escaped_for_the_terminal():
    assert terminal_text("a\x1b[2Jb\u0085") == "a\\x1b[2Jb\\x85"
    assert terminal_text("x\ny", keep_lines=True) == "x\ny"


def test_a_time_too_large_to_be_finite_is_refused_with_a_reason():
    with pytest.raises(InputError) as err:
        parse_measurements_csv("name,time_s\ngemm,1e999\n", "m.csv")
    assert "finite" in str(err.value) and "1e999" in str(err.value)
    assert str(err.value).startswith("m.csv:2:")


def test_bad_csv_names_the_line_of_the_fault_not_where_the_record_began():
    with pytest.raises(InputError) as err:
        parse_measurements_csv('name,time_s\n"gemm\nsecond line"x,1\n', "m.csv")
    assert err.value.line == 3


def test_an_empty_measurements_file_says_so():
    with pytest.raises(InputError) as err:
        parse_measurements_csv("\n\n", "m.csv")
    assert str(err.value).startswith("m.csv: the file is empty (expected a header row: name")


def test_a_file_with_no_nsight_table_is_named():
    with pytest.raises(InputError) as err:
        parse_ncu_csv("==PROF== nothing\n", "run.csv")
    assert str(err.value).startswith("run.csv: no Nsight Compute table")


def test_tensor_flops_of_an_unlisted_type_are_counted_as_fp16():
    header = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes.sum",
                            "sm__ops_path_tensor_src_e4m3.sum"]
    lines = [",".join(f'"{c}"' for c in header),
             ",".join(f'"{c}"' for c in [""] * 11 + ["usecond", "byte", ""]),
             ",".join(f'"{c}"' for c in ["0", "1", "b", "h", "k", "1", "7", "(1, 1, 1)",
                                          "(1, 1, 1)", "0", "9.0", "1", "100", "1000"])]
    (m,) = parse_ncu_csv("\n".join(lines) + "\n", "t.csv")
    assert m.flops == 1000
    assert m.precision == "fp16"


# ---------------------------------------------------------------------------------------------
# sessions

def test_a_version_1_file_missing_a_dimension_is_warned_about():
    warnings: list[str] = []
    loads_session("schema_version: 1\noperations:\n  - name: mm\n    kind: gemm\n"
                  "    m: 64\n    n: 64\n", "old.yaml", warnings=warnings)
    assert len(warnings) == 1
    assert warnings[0].startswith("old.yaml:")
    assert "operations[0].k" in warnings[0]
    assert "assumed" in warnings[0]


def test_a_measurement_that_is_not_a_mapping_is_named_by_its_place():
    with pytest.raises(InputError) as err:
        loads_session("schema_version: 2\noperations: []\nmeasurements:\n  - 5\n", "s.yaml")
    assert "measurements[0]" in str(err.value)
    assert str(err.value).startswith("s.yaml:4:")


# ---------------------------------------------------------------------------------------------
# model configs (config.json)

def _llama(**changes):
    data = json.loads(shipped_configs()["Llama-3.1-8B"].read_text(encoding="utf-8"))
    data.update(changes)
    return data


def test_a_qwen_moe_config_gives_its_experts_and_their_width():
    data = _llama(model_type="qwen2_moe", num_experts=60, num_experts_per_tok=4,
                  moe_intermediate_size=1408, shared_expert_intermediate_size=5632)
    arch = parse_model_config(data, file="q.json")
    assert (arch.moe.experts, arch.moe.top_k, arch.moe.intermediate) == (60, 4, 1408)
    assert arch.moe.shared_intermediate == 5632 and arch.moe.shared_gate


def test_gemmas_hidden_activation_field_is_read():
    arch = parse_model_config(_llama(hidden_activation="gelu_pytorch_tanh", hidden_act=None))
    assert arch.activation == "gelu"


def test_a_wrapped_text_config_keeps_the_outer_architectures():
    inner = _llama()
    del inner["model_type"], inner["architectures"]  # a multimodal config names them outside
    arch = parse_model_config({"architectures": ["LlamaForCausalLM"], "text_config": inner})
    assert arch.layers == 32 and arch.hidden == 4096


def test_a_model_type_that_is_not_text_is_named():
    with pytest.raises(InputError) as err:
        parse_model_config(_llama(model_type=5), file="c.json")
    assert str(err.value).startswith("c.json") and "model_type" in str(err.value)


# ---------------------------------------------------------------------------------------------
# session files: places named, values kept

def _error(text: str) -> str:
    with pytest.raises(InputError) as err:
        loads_session(text, "s.yaml")
    return str(err.value)


CHAIN = ("schema_version: 2\noperations:\n  - name: c\n    kind: elementwise\n    n: 1024\n"
         "    steps:\n")


def test_a_chain_step_without_op_says_what_it_needs():
    message = _error(CHAIN + "      - {inputs: [r]}\n")
    assert "operations[0].steps[0]" in message and "needs op" in message


def test_a_chain_steps_inputs_that_are_not_a_list_are_named():
    message = _error(CHAIN + "      - {op: add, inputs: 5}\n")
    assert "operations[0].steps[0].inputs" in message


def test_a_machines_visible_flag_that_is_not_yes_or_no_is_named():
    message = _error("schema_version: 2\nhardware:\n  - preset: h100-sxm\n    visible: maybe\n"
                     "operations: []\n")
    assert "hardware[0].visible" in message


def test_a_zero_launch_overhead_means_none():
    s = loads_session("schema_version: 2\nhardware:\n  - preset: h100-sxm\n"
                      "    launch_overhead: 0\noperations: []\n", "s.yaml")
    assert s.hardware[0].hardware.launch_overhead is None


def test_an_edited_preset_is_written_as_based_on_it_without_its_id():
    s = Session()
    hw = get_preset("h100-sxm")
    hw.memory = {**hw.memory, "hbm3": 4.0e12}
    s.hardware = [HardwareEntry(hw, preset="h100-sxm")]
    (data,) = session_to_data(s)["hardware"]
    assert data["based_on"] == "h100-sxm"
    assert "id" not in data and "preset" not in data


def test_a_yes_no_value_for_a_quantity_is_shown_in_the_message():
    with pytest.raises(QuantityError, match="got True"):
        parse_quantity(True, "bandwidth")


def test_an_unknown_prefix_lists_the_allowed_ones():
    with pytest.raises(QuantityError, match=r"prefixes for B/s: k, M, G, T"):
        parse_quantity("5 XB/s", "bandwidth")


# ---------------------------------------------------------------------------------------------
# whole models in a session file

def test_a_model_config_path_relative_to_the_working_folder_when_the_text_has_no_file(
        monkeypatch):
    monkeypatch.chdir(ROOT)
    s = loads_session("schema_version: 2\noperations: []\nmodels:\n"
                      "  - config: workbench/model_configs/Llama-3.1-8B.json\n")
    assert s.models[0].arch.layers == 32


def test_a_models_output_length_is_read_and_written_only_when_set():
    s = loads_session("schema_version: 2\noperations: []\nmodels:\n  - config: Llama-3.1-8B\n"
                      "    phase: decode\n    output_len: 128\n  - config: Llama-3.1-8B\n",
                      "s.yaml")
    assert s.models[0].setup.output_len == 128
    first, second = session_to_data(s)["models"]
    assert first["output_len"] == 128
    assert "output_len" not in second


def test_saving_leaves_other_programs_temporary_files_alone(tmp_path):
    other = tmp_path / "notes.tmp"
    swap = tmp_path / ".s.yaml.swp"  # an editor's swap file of the same name
    for path in (other, swap):
        path.write_text("keep\n", encoding="utf-8")
    atomic.write_atomic(tmp_path / "s.yaml", b"a: 1\n")
    assert other.read_text(encoding="utf-8") == swap.read_text(encoding="utf-8") == "keep\n"
    assert (tmp_path / "s.yaml").read_bytes() == b"a: 1\n"


def test_saving_into_a_missing_folder_names_the_file(tmp_path):
    path = tmp_path / "gone" / "s.yaml"
    with pytest.raises(FileNotFoundError) as err:
        atomic.write_atomic(path, b"a: 1\n")
    assert err.value.filename == str(path)
    assert "does not exist" in str(err.value)


def test_a_user_who_may_write_a_file_can_save_over_it(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_is_root", lambda: False)
    path = tmp_path / "s.yaml"
    path.write_bytes(b"old\n")
    atomic.write_atomic(path, b"new\n")
    assert path.read_bytes() == b"new\n"


def test_an_empty_file_name_is_refused_as_such():
    with pytest.raises(InputError, match="no file name given"):
        read_regular_file("  ", 1000, "session file")


def test_a_version_2_file_must_give_every_dimension():
    message = _error("schema_version: 2\noperations:\n  - name: mm\n    kind: gemm\n"
                     "    m: 64\n    n: 64\n")
    assert "operations[0]" in message and "k" in message


def test_empty_notes_are_kept():
    s = loads_session("schema_version: 2\nnotes: ''\noperations: []\n", "s.yaml")
    assert s.notes == ""


def test_a_machine_id_of_eighty_characters_is_the_longest_read():
    base = "schema_version: 2\noperations: []\nhardware:\n  - name: M\n    id: {}\n" \
           "    compute: {{fp32: 1 TFLOP/s}}\n    memory: {{dram: 100 GB/s}}\n"
    assert loads_session(base.format("a" * 80), "s.yaml").hardware[0].hardware.id == "a" * 80
    assert "hardware[0].id" in _error(base.format("a" * 81))


def test_a_chains_tensor_name_of_eighty_characters_is_the_longest_read():
    base = CHAIN + "      - {{op: relu}}\n    input: {}\n"
    s = loads_session(base.format("x" * 80), "s.yaml")
    assert s.operations[0].operation.params["input"] == "x" * 80
    assert "operations[0].input" in _error(base.format("x" * 81))


def test_a_comparison_that_is_not_a_mapping_is_named_by_its_place():
    assert "comparisons[0]" in _error("schema_version: 2\noperations: []\ncomparisons:\n  - 5\n")


def test_a_list_for_a_quantity_is_shown_in_the_message():
    with pytest.raises(QuantityError, match=r"got \[5\]"):
        parse_quantity([5], "bandwidth")


def test_a_model_that_brings_the_session_to_exactly_the_operation_limit_is_read(monkeypatch):
    text = "schema_version: 2\noperations: []\nmodels:\n  - config: Llama-3.1-8B\n"
    size = len(loads_session(text, "s.yaml").operations)
    monkeypatch.setattr(model_limits, "MAX_OPERATIONS", size)
    assert len(loads_session(text, "s.yaml").operations) == size
    monkeypatch.setattr(model_limits, "MAX_OPERATIONS", size - 1)
    assert "models[0]" in _error(text)


def test_a_fifo_swapped_in_after_the_check_is_refused_without_waiting(tmp_path, monkeypatch):
    fifo = tmp_path / "s.yaml"
    os.mkfifo(fifo)
    regular = tmp_path / "regular.yaml"
    regular.write_text("a: 1\n", encoding="utf-8")
    real_stat = os.stat

    def stat_before_the_swap(path, *args, **kwargs):  # the check still saw a regular file
        return real_stat(regular if os.fspath(path) == str(fifo) else path, *args, **kwargs)

    monkeypatch.setattr(limits.os, "stat", stat_before_the_swap)
    outcome: list[BaseException] = []

    def read():
        try:
            read_regular_file(str(fifo), 1000, "session file")
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # opening blocked, waiting for a writer: let it go
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
        pytest.fail("opening the file waited for a writer")
    assert len(outcome) == 1 and isinstance(outcome[0], InputError)
    assert "only regular files are read" in str(outcome[0])


# =============================================================================================
# the second sample (docs/mutation.md): behaviour its survivors showed untested

# ---------------------------------------------------------------------------------------------
# measurements

def test_a_pasted_csv_without_a_file_name_names_its_rows_by_line():
    (m,) = parse_measurements_csv("name,operation,time_us\ngemm,mm,5\n")
    assert m.source == "CSV line 2"  # no file: the rows are still found by their line


def test_an_achieved_rate_out_of_range_names_the_achieved_tflops_column():
    # 10²⁰ TFLOP/s is 10³² FLOP/s, beyond any machine: the column the user wrote is named
    with pytest.raises(InputError) as err:
        parse_measurements_csv("name,achieved_tflops,flops\ngemm,1e20,1e12\n", "m.csv")
    assert err.value.path == ("achieved_tflops",) and err.value.line == 2


def test_a_units_row_with_an_id_is_quoted_from_the_id_column_wherever_it_stands():
    header = ["Kernel Name", "ID", "gpu__time_duration.sum", "dram__bytes.sum",
              "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in (
        header, ["", "7", "usecond", "byte", "inst"], ["k", "0", "1", "8", "1"])) + "\n"
    with pytest.raises(InputError) as err:
        parse_ncu_csv(text, "n.csv")
    assert "got '7'" in str(err.value) and err.value.path == ("ID",)


def test_a_kernel_whose_only_flop_counter_is_unavailable_is_listed_not_counted():
    header = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes.sum",
                            "sm__inst_executed_pipe_tensor.sum"]
    rows = [header, [""] * 11 + ["usecond", "byte", "inst"],
            ["0", "1", "bench", "host", "k", "1", "7", "(256, 1, 1)", "(80, 1, 1)", "0", "8.0",
             "10", "100", "n/a"]]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in rows) + "\n"
    assert parse_ncu_csv(text, "n.csv") == []  # not a point at 0 FLOP/s
    result = import_ncu_text(text, "n.csv")
    assert result.measurements == []
    (left,) = result.not_counted
    assert (left.name, left.count, left.time_s) == ("k", 1, 10e-6)
    assert left.reason == "its FLOP counters are all n/a"
    assert result.counted_share == 0


# ---------------------------------------------------------------------------------------------
# model configs

def test_a_config_nested_too_deep_says_so():
    with pytest.raises(InputError) as err:
        parse_model_config_text("[" * 65 + "]" * 65)
    assert "nested more than 64 levels" in str(err.value)


def parse_model_config_text(text: str):
    from workbench.io.model_configs import loads_json

    return loads_json(text, "c.json")


def test_a_config_json_is_named_after_its_folder(tmp_path):
    folder = tmp_path / "My-Llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_llama(_name_or_path=None)), encoding="utf-8")
    other = tmp_path / "llama-variant.json"
    other.write_text(json.dumps(_llama(_name_or_path=None)), encoding="utf-8")
    from workbench.io.model_configs import read_model_config

    assert read_model_config(folder / "config.json").name == "My-Llama"
    assert read_model_config(other).name == "llama-variant"


def test_a_qwen_moe_config_without_a_shared_expert_has_no_shared_gate():
    data = _llama(model_type="qwen3_moe", num_experts=128, num_experts_per_tok=8,
                  moe_intermediate_size=768, shared_expert_intermediate_size=0)
    arch = parse_model_config(data, file="q.json")  # 0: no shared expert, not an error
    assert arch.moe.shared_intermediate == 0 and not arch.moe.shared_gate


def _deepseek(**changes):
    data = json.loads(shipped_configs()["DeepSeek-V2-Lite"].read_text(encoding="utf-8"))
    data.update(changes)
    return data


def test_a_deepseek_config_without_shared_experts_has_none():
    data = _deepseek()
    del data["n_shared_experts"]
    assert parse_model_config(data, file="d.json").moe.shared_intermediate == 0


def test_a_deepseek_config_with_moe_every_other_layer_says_so():
    assert parse_model_config(_deepseek(moe_layer_freq=2), file="d.json").moe.every == 2


def test_tied_word_embeddings_are_read():
    assert parse_model_config(_llama(tie_word_embeddings=True)).tied
    assert not parse_model_config(_llama(tie_word_embeddings=False)).tied


def test_a_qwen2_moe_config_has_query_key_value_biases_by_default():
    # Qwen2-MoE's attention projections carry biases (as Qwen2's) unless the config says not
    data = _llama(model_type="qwen2_moe", num_experts=60, num_experts_per_tok=4,
                  moe_intermediate_size=1408, shared_expert_intermediate_size=5632)
    data.pop("attention_bias", None)
    assert parse_model_config(data).qkv_bias
    assert not parse_model_config({**data, "attention_bias": False}).qkv_bias


# ---------------------------------------------------------------------------------------------
# session files

def test_a_model_entry_without_visible_is_shown():
    s = loads_session("schema_version: 2\noperations: []\nmodels:\n  - config: Llama-3.1-8B\n",
                      "s.yaml")
    assert s.models[0].visible


def test_a_missing_required_dimension_lists_every_required_one():
    message = _error("schema_version: 2\noperations:\n  - kind: gemm\n    m: 8\n    n: 8\n")
    assert "needs m, n and k (no value is assumed for k" in message
    message = _error("schema_version: 2\noperations:\n  - kind: softmax\n    rows: 8\n")
    assert "needs rows and cols (no value is assumed for cols" in message


def _machine_with_calibration(block: str) -> str:
    return ("schema_version: 2\nhardware:\n  - name: Mine\n    compute: {bf16: 100 TFLOP/s}\n"
            "    memory: {hbm: 1 TB/s}\n    calibration:\n" + block)


def test_a_zero_start_up_time_is_accepted():
    s = loads_session(_machine_with_calibration("      startup: {matrix: 0 s}\n"), "m.yaml")
    assert s.hardware[0].hardware.calibration.startup["matrix"] == 0.0


def test_a_calibration_block_without_a_source_states_none():
    s = loads_session(_machine_with_calibration("      sustained: 0.5\n"), "m.yaml")
    assert s.hardware[0].hardware.calibration.source == ""
    saved = session_to_data(s)["hardware"][0]["calibration"]
    assert "source" not in saved


def test_a_comparison_of_an_operation_with_itself_says_why():
    message = _error("schema_version: 2\noperations:\n  - {kind: gemm, name: a, m: 8, n: 8, k: 8}\n"
                     "comparisons:\n  - {first: a, second: a}\n")
    assert "must name a different operation from first" in message


def test_a_prediction_block_without_a_model_keeps_the_derated_one():
    s = loads_session("schema_version: 2\nprediction: {launches: graph}\n"
                      "hardware:\n  - preset: h100-sxm\noperations: []\n", "s.yaml")
    hw = s.hardware[0].hardware
    assert (hw.prediction, hw.launches) == ("derated", "graph")


def test_a_sweep_with_values_and_a_count_is_refused():
    message = _error("schema_version: 2\noperations:\n  - {kind: gemm, name: a, m: 8, n: 8, k: 8,"
                     " sweep: {param: m, values: [1, 2], num: 5}}\n")
    assert "give either values or start/stop/num, not both" in message


# ---------------------------------------------------------------------------------------------
# user machines and autosaves

def test_a_saved_user_machine_is_found_again(tmp_path, monkeypatch):
    monkeypatch.setenv(user_presets.USER_PRESETS_VARIABLE, str(tmp_path / "presets"))
    hw = get_preset("h100-sxm").copy(id="lab-h100", name="Lab H100")
    path = user_presets.save_machine(hw)
    assert path == tmp_path / "presets" / "lab-h100.yaml"
    found = user_presets.load_user_presets()
    assert list(found) == ["lab-h100"] and found["lab-h100"].name == "Lab H100"


def test_an_autosave_that_is_not_a_file_names_what_it_should_be(tmp_path):
    from workbench.io.autosave import Recoverable

    folder = tmp_path / "autosave-1-1.yaml"
    folder.mkdir()
    with pytest.raises(InputError) as err:
        Recoverable(folder, None, 0.0, 1).load()
    assert "is a folder, not a session file" in str(err.value)


def test_a_version_1_custom_operation_names_its_assumed_sizes_with_units():
    warnings: list[str] = []
    loads_session("schema_version: 1\noperations:\n  - {kind: custom, name: c}\n", "s.yaml",
                  warnings)
    # the example values version-1 files got: 1 TFLOP of work over 1 GB
    assert any("flops = 1 TFLOP assumed" in w for w in warnings), warnings
    assert any("bytes = 1 GB assumed" in w for w in warnings), warnings


def test_reading_a_folder_or_an_oversized_file_says_what_was_expected(tmp_path):
    with pytest.raises(InputError) as err:
        read_regular_file(str(tmp_path), 1000, "session file")
    assert "is a folder, not a session file" in str(err.value)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a" * 100)
    real_stat = os.stat

    def smaller(path, *args, **kwargs):  # the file grows after its size was checked
        info = real_stat(path, *args, **kwargs)
        if os.fspath(path) == str(big):
            return os.stat_result((info.st_mode, *info[1:6], 10, *info[7:]))
        return info

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(limits.os, "stat", smaller)
        with pytest.raises(InputError) as err:
            read_regular_file(str(big), 50, "session file")
    assert "a session file is limited to" in str(err.value)


_MACHINE = ("schema_version: 2\nhardware:\n  - name: Mine\n    compute: {bf16: 100 TFLOP/s}\n"
            "    memory: {hbm: 1 TB/s}\n")


def test_a_misspelt_precision_gets_a_suggestion():
    message = _error(_MACHINE.replace("{bf16: 100 TFLOP/s}", "{bf61: 100 TFLOP/s}"))
    assert "did you mean 'bf16'" in message


def test_a_link_named_like_a_memory_level_names_the_interconnect():
    message = _error(_MACHINE + "    interconnect: {hbm: 900 GB/s}\n")
    assert "hardware[0].interconnect" in message and "already a memory level" in message


def test_a_source_that_is_not_text_names_its_place():
    message = _error(_MACHINE + "    sources: [datasheet, {a: 1}]\n")
    assert "hardware[0].sources[1]" in message


def test_an_unknown_marker_names_the_marker_key():
    message = _error("schema_version: 2\nhardware:\n  - preset: h100-sxm\n    marker: star5\n")
    assert "hardware[0].marker: must be one of" in message


def test_a_bad_upper_end_of_a_view_range_names_it():
    message = _error("schema_version: 2\noperations: []\nview: {x_range: [1, banana]}\n")
    assert "view.x_range[1]" in message


def test_too_many_models_names_the_models_list():
    models = "".join("  - config: Llama-3.1-8B\n" for _ in range(65))  # the limit is 64
    message = _error("schema_version: 2\noperations: []\nmodels:\n" + models)
    assert "models: has 65 models; at most 64" in message


def test_comparisons_that_are_not_a_list_say_what_they_should_hold():
    message = _error("schema_version: 2\noperations: []\ncomparisons: 5\n")
    assert "comparisons: must be a list (of compared pairs)" in message


def test_too_many_aliases_are_refused_with_a_line():
    lines = ["a: &x [1]", "b:"] + ["  - *x"] * 101
    with pytest.raises(InputError) as err:
        loads_session("\n".join(lines) + "\n", "s.yaml")
    assert "more than 100 YAML aliases" in str(err.value)
    assert err.value.line == 1  # where the list they all repeat is written


def test_aliases_expanding_too_far_are_refused_with_a_line():
    ones = ", ".join(["1"] * 100_001)
    text = f"a: &a [{ones}]\nb: *a\nc: *a\n"  # two aliases, 200,002 values repeated
    with pytest.raises(InputError) as err:
        loads_session(text, "s.yaml")
    assert "expand the document by more than 200,000 values" in str(err.value)
    assert err.value.line == 1  # where the values they repeat are written


def test_a_merge_key_is_refused_at_its_line():
    with pytest.raises(InputError) as err:
        loads_session("a: &x {b: 1}\nc:\n  <<: *x\n", "s.yaml")
    assert "merge keys" in str(err.value)
    assert err.value.line == 3 and err.value.path == ("c",)


def test_an_oversized_document_is_refused_naming_its_limit_in_mebibytes():
    from workbench.io.yamlio import parse_yaml

    with pytest.raises(InputError) as err:
        parse_yaml(b"a: 1\n" + b" " * (32 * 1024 * 1024), "s.yaml", limit=32 * 1024 * 1024)
    assert "document is larger than 32 MB" in str(err.value)


# =============================================================================================
# the third sample (docs/mutation.md)

def test_a_model_entrys_lengths_visibility_and_colours_are_read():
    s = loads_session("schema_version: 2\noperations: []\nmodels:\n  - config: Llama-3.1-8B\n"
                      "    phase: prefill\n    prompt_len: 512\n    output_len: 0\n"
                      "    visible: false\n    colors: {gemm: '#123456'}\n", "s.yaml")
    entry = s.models[0]
    assert (entry.setup.prompt_len, entry.setup.output_len) == (512, 0)  # 0: one step only
    assert entry.visible is False and entry.colors["gemm"] == "#123456"  # others: the palette


def test_an_empty_session_title_is_accepted():
    assert loads_session("schema_version: 2\ntitle: ''\noperations: []\n", "s.yaml").title == ""


def test_written_yaml_keeps_the_order_of_its_keys():
    from workbench.io.yamlio import dump_yaml

    assert dump_yaml({"schema_version": 2, "title": "t", "hardware": []}).splitlines()[0] \
        == "schema_version: 2"


def test_a_background_autosave_writes_the_session_and_it_can_be_recovered(tmp_path):
    from workbench.io.autosave import Autosave, Recoverable

    session = Session(title="unsaved work")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    saver = Autosave(tmp_path)
    saver.write_in_background(session, None)
    saver.wait()
    back = Recoverable(saver.path, None, 0.0, 0).load()
    assert back.title == "unsaved work" and back.hardware[0].preset == "h100-sxm"


def test_a_measured_user_machine_gives_its_provenance(tmp_path, monkeypatch):
    monkeypatch.setenv(user_presets.USER_PRESETS_VARIABLE, str(tmp_path))
    hw = get_preset("h100-sxm").copy(id="lab-gpu", name="Lab GPU")
    user_presets.save_machine(hw, {"cpu": "Test CPU", "method": "stream"})
    assert user_presets.measurement_of("lab-gpu") == {"cpu": "Test CPU", "method": "stream"}
    assert user_presets.is_measured("lab-gpu") and not user_presets.is_measured("h100-sxm")


def test_a_broken_user_machine_file_is_reported_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv(user_presets.USER_PRESETS_VARIABLE, str(tmp_path))
    (tmp_path / "broken.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    assert user_presets.load_user_presets() == {}
    (problem,) = user_presets.user_preset_problems()
    assert "broken.yaml" in problem and "must be a mapping" in problem


def test_a_machine_without_a_name_is_written_under_its_id():
    hw = get_preset("h100-sxm").copy(id="lab-gpu", name="  ")
    from workbench.io.sessions import hardware_to_data

    assert hardware_to_data(hw)["name"] == "lab-gpu"


def test_reading_does_not_depend_on_a_non_blocking_flag(tmp_path, monkeypatch):
    # where os has no O_NONBLOCK (Windows) the file is still opened for reading only
    path = tmp_path / "s.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    monkeypatch.delattr(limits.os, "O_NONBLOCK", raising=False)
    assert read_regular_file(str(path), 1000, "session file") == b"a: 1\n"


@pytest.mark.parametrize(("yaml_text", "where", "fragment"), [
    ("  - {kind: elementwise, name: e, n: 8, steps: []}\n", "operations[0].steps",
     "needs at least one step"),
    ("  - {kind: gemm, name: g, m: 8, n: 8, k: 8, color: blue}\n", "operations[0].color",
     "must be a colour like"),
    ("  - {kind: gemm, name: g, m: true, n: 8, k: 8}\n", "operations[0].m", "true (a boolean)"),
])
def test_operation_errors_name_their_place_and_problem(yaml_text, where, fragment):
    message = _error("schema_version: 2\noperations:\n" + yaml_text)
    assert where in message and fragment in message


@pytest.mark.parametrize(("block", "where", "fragment"), [
    ("      startup: {matrixx: 1 us}\n", "calibration.startup.matrixx", "unknown key"),
    ("      launch_graph: 0 s\n", None, None),  # zero launch cost: accepted
    ("      source: 5\n", "calibration.source", "must be"),
])
def test_calibration_block_places(block, where, fragment):
    text = _machine_with_calibration(block)
    if where is None:
        assert loads_session(text, "m.yaml").hardware[0].hardware.calibration.launch_graph == 0
        return
    message = _error(text)
    assert f"hardware[0].{where}" in message and fragment in message


def test_a_machine_naming_a_missing_link_lists_its_links():
    message = _error(_MACHINE + "    interconnect: {nvlink: 900 GB/s}\n"
                     "    link_latency: {pcie: 1 us}\n")
    assert "nvlink" in message


def test_an_efficiency_out_of_range_or_not_a_number_names_it():
    assert "hardware[0].efficiency: must be a fraction" in _error(_MACHINE + "    efficiency: 1.5\n")
    assert "hardware[0].efficiency: expected a plain number" in _error(
        _MACHINE + "    efficiency: fast\n")


def test_an_empty_name_is_refused_with_a_reason():
    message = _error("schema_version: 2\ntitle: t\noperations:\n  - {kind: gemm, name: '', m: 8,"
                     " n: 8, k: 8}\n")
    assert "operations[0].name" in message and "must not be empty" in message


@pytest.mark.parametrize(("text", "fragment"), [
    ("schema_version: 2\nhardware:\n  - name: Mine\n    compute: {bf16: 100 TFLOP/s}\n"
     "    memory: {hbm: 1 TB/s}\n    based_on: 5\n", "hardware[0].based_on"),
    ("schema_version: 2\noperations: []\nmeasurements:\n  - {name: 5, time: 1 ms, flops: 1e9,"
     " bytes: 1e6}\n", "measurements[0].name"),
    ("schema_version: 2\noperations: []\nview: 5\n", "view settings"),
    ("schema_version: 2\noperations: []\nmodels:\n  - config: Llama-3.1-8B\n"
     "    quantize_embeddings: maybe\n", "models[0].quantize_embeddings"),
])
def test_session_errors_name_their_place(text, fragment):
    assert fragment in _error(text)


def test_a_config_missing_head_dim_names_head_dim():
    data = _llama(hidden_size=4100, num_attention_heads=32)  # 4100 is not a multiple of 32
    data.pop("head_dim", None)
    with pytest.raises(InputError) as err:
        parse_model_config(data, file="c.json")
    assert "head_dim: missing" in str(err.value)


def test_an_ncu_kernel_without_a_name_names_the_kernel_name_column():
    header = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes.sum",
                            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    rows = [header, [""] * 11 + ["usecond", "byte", "inst"],
            ["0", "1", "bench", "host", "", "1", "7", "(256, 1, 1)", "(80, 1, 1)", "0", "8.0",
             "10", "100", "5"]]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in rows) + "\n"
    with pytest.raises(InputError) as err:
        parse_ncu_csv(text, "n.csv")
    assert err.value.path == ("Kernel Name",)
