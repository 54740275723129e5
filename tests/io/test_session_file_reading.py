"""Reading session files: each refusal names its place (key path, line) and the problem, and
what is read is kept as written (models, calibrations, comparisons, sweeps, YAML limits)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from workbench.io import atomic, limits
from workbench.io.errors import InputError
from workbench.io.limits import read_regular_file
from workbench.io.presets import get_preset
from workbench.io.sessions import loads_session, session_to_data
from workbench.model import limits as model_limits
from workbench.model.session import HardwareEntry, Session
from workbench.model.units import QuantityError, parse_quantity

ROOT = Path(__file__).resolve().parents[2]




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


def test_a_prediction_block_without_a_model_takes_the_calibrated_one():
    s = loads_session("schema_version: 2\nprediction: {launches: graph}\n"
                      "hardware:\n  - preset: h100-sxm\noperations: []\n", "s.yaml")
    hw = s.hardware[0].hardware
    assert (hw.prediction, hw.launches) == ("calibrated", "graph")


def test_a_sweep_with_values_and_a_count_is_refused():
    message = _error("schema_version: 2\noperations:\n  - {kind: gemm, name: a, m: 8, n: 8, k: 8,"
                     " sweep: {param: m, values: [1, 2], num: 5}}\n")
    assert "give either values or start/stop/num, not both" in message


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


def test_repeated_operations_of_a_file_are_checked_once_each_and_refused_where_they_stand(
        monkeypatch):
    """A file's operations with the same parameters (a model's layers written out) are
    counted once for the load's checks, and an operation beyond a session's limits is named
    where it stands, as the first of its kind or a repeat."""
    from workbench.io import schema

    asked: list[tuple[str, dict]] = []
    checks = schema.kind_checks

    def counting(kind, params):
        asked.append((kind, dict(params)))
        return checks(kind, params)

    monkeypatch.setattr(schema, "kind_checks", counting)
    gemm = "{{name: g{i}, kind: gemm, m: {m}, n: 64, k: 64}}"
    ops = [gemm.format(i=i, m=512 if i % 10 else 256) for i in range(31)]
    session = loads_session(f"schema_version: 2\noperations: [{', '.join(ops)}]\n", "s.yaml")
    assert len(session.operations) == 31
    assert [(kind, params["m"]) for kind, params in asked] == [("gemm", 256), ("gemm", 512)]

    big = 2**53
    for first in (0, 2):
        ops = [gemm.format(i=i, m=64) for i in range(first)] + [
            f"{{name: h{i}, kind: gemm, m: {big}, n: {big}, k: {big}}}" for i in range(first, 4)]
        with pytest.raises(InputError) as caught:
            loads_session("schema_version: 2\noperations:\n" + "".join(
                f"  - {op}\n" for op in ops), "s.yaml")
        assert str(caught.value).startswith(f"s.yaml:{3 + first}: operations[{first}].")
