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
