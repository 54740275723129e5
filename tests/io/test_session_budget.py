"""One budget for the whole session (operations, measured points, sweep points of all sweeps
together, the size of its file), checked before the work on every path in: an import that
would pass it is refused whole with the numbers, a sweep that would pass it is refused, and
the autosave never writes a file that recovery would refuse."""

from __future__ import annotations

import errno

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.document import Document, OverBudget, new_operation
from workbench.io import autosave as autosave_module
from workbench.io.autosave import Autosave
from workbench.io.errors import InputError
from workbench.io.sessions import dumps_session, loads_session
from workbench.model.limits import MAX_MEASUREMENTS, MAX_SESSION_BYTES, MAX_SWEEP_TOTAL
from workbench.model.measured import Measurement
from workbench.model.sweeps import Range, Sweep
from workbench.ui.panels.measurements_panel import import_measurements

HEADER = "name,operation,hardware,time_us,achieved_tflops,flops,bytes,precision,source\n"


def _csv(tmp_path, rows: int, source: str = "") -> str:
    path = tmp_path / f"rows{rows}.csv"
    path.write_text(HEADER + "".join(f"k{i},,,10,,1 GFLOP,1 MB,bf16,{source}\n"
                                     for i in range(rows)))
    return str(path)


def _standalone(count: int, source: str = "") -> list[Measurement]:
    return [Measurement(name=f"m{i}", time_s=1e-3, flops=1e9, bytes=1e6, source=source)
            for i in range(count)]


def test_an_import_past_the_measured_point_limit_is_refused_whole_with_the_numbers(tmp_path):
    doc = Document()
    doc.session.measurements = _standalone(MAX_MEASUREMENTS - 1)
    with pytest.raises(InputError) as caught:
        import_measurements(doc, _csv(tmp_path, 2))
    message = str(caught.value)
    assert "rows2.csv" in message and "nothing was imported" in message
    # 99,999 + 2 = 100,001
    assert "100,001 measured points (adding 2); at most 100,000" in message
    assert len(doc.session.measurements) == MAX_MEASUREMENTS - 1 and not doc.can_undo()
    # exactly at the limit: imported
    assert import_measurements(doc, _csv(tmp_path, 1)) == 1
    assert len(doc.session.measurements) == MAX_MEASUREMENTS


def test_an_import_that_would_make_the_file_too_large_is_refused(tmp_path):
    doc = Document()
    source = "s" * 1990
    # 14,000 points of 1,990-character sources: about 28 MB written, under 32 MB
    doc.session.measurements = _standalone(14_000, source)
    assert doc.measurements_problem(doc.session.measurements) is None
    with pytest.raises(InputError) as caught:
        import_measurements(doc, _csv(tmp_path, 2000, source))  # about 4 MB more
    message = str(caught.value)
    assert "session file would take about" in message and "at most 32 MB" in message
    assert len(doc.session.measurements) == 14_000


def test_what_the_budget_accepts_is_written_under_the_file_limit():
    session = Document().session
    session.measurements = _standalone(2_000, "quoted 'text' \t with: colons # " * 60)
    from workbench.model.limits import session_totals

    written = len(dumps_session(session).encode("utf-8"))
    assert written <= session_totals(session).bytes  # the estimate is from above


def test_sweeps_past_the_total_are_refused_in_the_document():
    doc = Document()
    first = doc.add_operation(new_operation("gemm", "a"))
    second = doc.add_operation(new_operation("gemm", "b"))
    doc.set_sweep(first, Sweep("m", Range(1, 4096, MAX_SWEEP_TOTAL - 10)))
    doc.set_sweep(second, Sweep("m", Range(1, 4096, 10)))  # exactly the total: kept
    with pytest.raises(OverBudget, match="100,001 points in total; at most 100,000"):
        doc.set_sweep(second, Sweep("m", Range(1, 4096, 11)))
    assert doc.operation(second).sweep.points == 10


def test_ten_sweeps_of_100000_points_are_refused_at_load_with_the_total():
    ops = "".join(f"  - {{name: g{i}, kind: gemm, m: 1, n: 1, k: 1, sweep: {{param: m, "
                  f"start: 1, stop: 4096, num: 100000, scale: log}}}}\n" for i in range(10))
    text = f"schema_version: 2\noperations:\n{ops}"
    with pytest.raises(InputError) as caught:
        loads_session(text, "sweeps.yaml")
    # 10 × 100,000 = 1,000,000
    assert "sweeps.yaml:3: operations[0].sweep: the session's sweeps have 1,000,000 points " \
           "in total; at most 100,000" in str(caught.value)


def test_the_autosave_never_writes_what_recovery_would_refuse(tmp_path, monkeypatch):
    session = Document().session
    session.measurements = _standalone(100, "x" * 200)
    size = len(dumps_session(session).encode())
    monkeypatch.setattr(autosave_module, "MAX_SESSION_BYTES", size - 1)  # a smaller limit
    slot = Autosave(tmp_path)
    with pytest.raises(OSError) as caught:
        slot.write(session, None)
    assert caught.value.errno == errno.EFBIG and "not written" in str(caught.value)
    assert not slot.path.exists()
    monkeypatch.setattr(autosave_module, "MAX_SESSION_BYTES", MAX_SESSION_BYTES)
    slot.write(session, None)
    assert len(autosave_module.find_recoverable(tmp_path)) == 0  # (this process is alive)
    assert len(autosave_module.Recoverable(slot.path, None, 0, 0).load().measurements) == 100


def test_adding_operations_stops_at_the_limit():
    from workbench.model.limits import MAX_OPERATIONS
    from workbench.model.session import OperationEntry

    doc = Document()
    gemm = new_operation("gemm", "g")
    doc.session.operations = [OperationEntry(gemm.copy()) for _ in range(MAX_OPERATIONS - 1)]
    doc.add_operation(new_operation("gemm", "last"))  # the 100,000th: kept
    with pytest.raises(OverBudget, match="holds 100,000 operations; at most 100,000"):
        doc.add_operation(new_operation("gemm", "one more"))
    assert len(doc.session.operations) == MAX_OPERATIONS


def test_a_csv_of_more_points_than_a_session_holds_is_refused_where_it_passes_them():
    # a 64 MB file of short rows holds millions: it is refused at the first row past the
    # limit, not read to its end (the last row's fault is never reached)
    from workbench.io.measurements import parse_measurements_csv

    text = HEADER + "k,,,10,,1,1,,\n" * (MAX_MEASUREMENTS + 1) + "k,,,ten,,1,1,,\n"
    with pytest.raises(InputError) as err:
        parse_measurements_csv(text, "many.csv")
    assert str(err.value) == (f"many.csv:{MAX_MEASUREMENTS + 2}: holds more than 100,000 "
                              "measured points; a session holds at most 100,000")


def test_the_command_lines_import_holds_to_the_same_budget():
    """``analyze --measurements`` attaches points as the app's import does."""
    from workbench.io.measurements import attach_measurements

    session = Document().session
    session.measurements = _standalone(MAX_MEASUREMENTS)
    with pytest.raises(InputError, match="100,001 measured points \\(adding 1\\); at most "
                                         "100,000; nothing was imported"):
        attach_measurements(session, _standalone(1), "more.csv")
    assert len(session.measurements) == MAX_MEASUREMENTS


# any text a measured point may hold: printable characters of every width, quotes and
# backslashes, tabs and line breaks, and characters YAML writes as escapes (U+FEFF, U+1F600)
_TEXTS = st.text(st.sampled_from(list("ab :#-'\"\\\t\n\r{},&*!|>%@`?é中\u2028\ufeff😀")
                                 + ["\xa0", "\u3000"]), max_size=300)


@st.composite
def _measured_points(draw) -> Measurement:
    def maybe(strategy):
        return draw(st.none() | strategy)

    sizes = st.just(0.0) | st.floats(1.0, 1e30)
    m = Measurement(name=draw(_TEXTS.filter(str.strip)),
                    operation=maybe(_TEXTS), hardware=maybe(_TEXTS),
                    time_s=draw(st.floats(1e-12, 1e9)), achieved_flops=maybe(st.floats(1.0, 1e30)),
                    flops=draw(sizes), bytes=draw(sizes),
                    precision=maybe(st.sampled_from(["bf16", "fp32", "int32"])),
                    source=draw(st.lists(_TEXTS, max_size=6).map("".join)),
                    levels=maybe(st.dictionaries(st.sampled_from(["l1", "l2", "dram"]),
                                                 sizes | st.floats(1e-30, 1.0), min_size=1)),
                    unit=maybe(st.sampled_from(["matrix", "vector"])),
                    count=draw(st.integers(1, 10**9)), run=maybe(_TEXTS))
    assert m.problems() == [], m.problems()
    return m


@settings(max_examples=300, deadline=None)
@given(_measured_points())
def test_a_measured_points_estimate_is_never_below_what_save_writes_for_it(m):
    """Every field of a measured point the file holds counts: its bytes at each memory level,
    unit, count and run, texts that YAML writes quoted, escaped or folded, long numbers."""
    from workbench.model.limits import measurement_bytes
    from workbench.model.session import Session

    session = Session(measurements=[m])
    written = len(dumps_session(session).encode("utf-8"))
    empty = len(dumps_session(Session()).encode("utf-8")) + len("measurements:\n")
    assert written - empty <= measurement_bytes(m)


def test_a_whole_step_of_100000_distinct_kernels_is_within_the_budget():
    """The points of an Nsight Compute export of 100,000 distinct kernels (as
    benchmarks/import_window.py imports it, its kernels named as ncu names them) fit a
    session file, and the estimate says so."""
    from workbench.io.measurements import attach_measurements

    name = "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_"
    points = [Measurement(name=f"{name}{i}", hardware="h100-sxm", time_s=2.04672e-4 + i * 1e-9,
                          flops=137438953472.0 + i, bytes=178565632.0 + i, precision="bf16",
                          source=f"ncu ncu-distinct.csv ID {i}", unit="matrix",
                          run="ncu-distinct.csv") for i in range(100_000)]
    from workbench.io.presets import get_preset
    from workbench.model.session import HardwareEntry

    session = Document().session
    session.hardware.append(HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm"))
    attach_measurements(session, points, "ncu-distinct.csv")
    assert len(session.measurements) == 100_000


_LEVEL_NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_\-]{0,3000}", fullmatch=True)


@st.composite
def _machines(draw):
    """A machine as the hardware form, a preset file or a session defines it: notes, sources
    and a name of any text it may hold, and peaks, levels and links with long names, some
    marked measured."""
    from workbench.io.presets import get_preset

    hw = get_preset("h100-sxm").copy(name=draw(_TEXTS.filter(str.strip)).strip()[:120],
                                     notes=draw(st.lists(_TEXTS, max_size=80).map("".join)),
                                     sources=draw(st.lists(_TEXTS, max_size=40)))
    for table in ("memory", "interconnect"):
        for name in draw(st.lists(_LEVEL_NAMES, max_size=6, unique=True)):
            if name not in hw.memory and name not in hw.interconnect:
                getattr(hw, table)[name] = draw(st.floats(1.0, 1e30))
                if draw(st.booleans()):
                    hw.measured.append(f"{table}.{name}")
    for name in hw.interconnect:
        hw.link_latency[name] = draw(st.floats(1e-9, 1e-3))
    hw.main_memory = draw(st.sampled_from(sorted(hw.memory)))
    return hw


@settings(max_examples=150, deadline=None)
@given(_machines())
def test_the_estimate_of_a_session_is_never_below_what_save_writes_for_its_machines(hw):
    """A machine is written whole once edited: its notes, every source, and each named
    ceiling count, so that an import judged to fit is one Save can write."""
    from workbench.model.limits import session_totals
    from workbench.model.session import HardwareEntry, Session

    session = Session(hardware=[HardwareEntry(hw)])
    assert len(dumps_session(session).encode("utf-8")) <= session_totals(session).bytes


def test_a_machine_with_long_notes_sources_and_level_names_is_counted_whole():
    """The largest a machine's texts may be (20,000 characters of notes, sources of 500),
    and levels with long names: the estimate holds what Save writes for it."""
    from workbench.io.presets import get_preset
    from workbench.model.limits import session_totals
    from workbench.model.session import HardwareEntry, Session

    hw = get_preset("h100-sxm").copy(name="edited", notes="n" * 20_000, sources=["s" * 500] * 40)
    hw.memory.update({f"l{i}" + "x" * 2000: 1e12 for i in range(10)})
    session = Session(hardware=[HardwareEntry(hw)])
    assert len(dumps_session(session).encode("utf-8")) <= session_totals(session).bytes


def test_adding_operations_of_long_names_stops_before_the_file_passes_what_save_writes():
    """100,000 operations of 300-character names take more than 32 MB: adding them is
    refused, with the size, before the session would be one that Save refuses."""
    from workbench.model.limits import session_totals
    from workbench.model.session import OperationEntry

    doc = Document()
    name = "n" * 290
    ops = [OperationEntry(new_operation("gemm", f"{name}{i}")) for i in range(60_000)]
    doc.session.operations = ops
    each = session_totals(doc.session).bytes // len(ops)  # (filled to a few below the limit)
    ops += [OperationEntry(new_operation("gemm", f"{name}{i}"))
            for i in range(60_000, MAX_SESSION_BYTES // each - 3)]
    with pytest.raises(OverBudget) as caught:
        for i in range(20):
            doc.add_operation(new_operation("gemm", f"{name}+{i}"))
    assert "the session file would take about 32." in str(caught.value)
    assert "a session file holds at most 32 MB" in str(caught.value)
    count = len(doc.session.operations)
    assert count < len(ops) + 20 and doc.session.operations[-1].operation.name != f"{name}+{i}"
    assert len(dumps_session(doc.session).encode("utf-8")) <= MAX_SESSION_BYTES  # Save writes it


def _near_the_limit(monkeypatch, doc: Document, room: int = 200) -> None:
    """A file limit ``room`` bytes beyond what ``doc``'s session takes now."""
    from workbench.model import limits

    monkeypatch.setattr(limits, "MAX_SESSION_BYTES", limits.session_totals(doc.session).bytes
                        + room)


def _edits():
    from workbench.document.models import ModelTooLarge
    from workbench.io.model_configs import read_model_config, shipped_configs
    from workbench.io.presets import get_preset
    from workbench.model.llm.session import ModelEntry
    from workbench.model.session import Comparison

    def model():
        config = "Qwen3-8B"
        return ModelEntry(config, read_model_config(shipped_configs()[config]))

    long = "x" * 300
    return {
        "add operation": (OverBudget, lambda doc, op, m: doc.add_operation(
            new_operation("gemm", long))),
        "rename operation": (OverBudget, lambda doc, op, m: doc.set_operation_field(
            op, "name", long)),
        "sweep": (OverBudget, lambda doc, op, m: doc.set_sweep(
            op, Sweep("m", list(range(1, 200))))),
        "title and notes": (OverBudget, lambda doc, op, m: doc.set_title_and_notes(
            "t", "notes " * 100)),
        "add machine": (OverBudget, lambda doc, op, m: doc.add_machine(get_preset("a100-80gb"))),
        "machine notes": (OverBudget, lambda doc, op, m: doc.set_machine(
            doc.session.hardware[0].id, doc.session.hardware[0].hardware.copy(
                notes=doc.session.hardware[0].hardware.notes + " more" * 500))),
        "add model": (ModelTooLarge, lambda doc, op, m: doc.add_model(model())),
        "rename model": (ModelTooLarge, lambda doc, op, m: doc.set_model(m, name="m" * 200)),
        "compare": (OverBudget, lambda doc, op, m: doc.set_comparisons(
            [Comparison(long[:-1], doc.operation(op).operation.name)])),
    }


@pytest.mark.parametrize("edit", list(_edits()))
def test_every_edit_that_grows_the_session_is_refused_before_it_would_pass_the_file_limit(
        monkeypatch, edit):
    from workbench.document.models import ModelTooLarge
    from workbench.io.model_configs import read_model_config, shipped_configs
    from workbench.io.presets import get_preset
    from workbench.model.llm.session import ModelEntry

    doc = Document()
    doc.add_machine(get_preset("h100-sxm"), preset="h100-sxm")
    op = doc.add_operation(new_operation("gemm", "g"))
    doc.add_operation(new_operation("gemm", "x" * 299))
    model = doc.add_model(ModelEntry("Llama-3.1-8B",
                                     read_model_config(shipped_configs()["Llama-3.1-8B"])))
    before = dumps_session(doc.session)
    steps = doc.undo_text()
    _near_the_limit(monkeypatch, doc)
    error, do = _edits()[edit]
    with pytest.raises(error) as caught:
        do(doc, op, model)
    assert isinstance(caught.value, OverBudget | ModelTooLarge)
    assert "session file would take about" in str(caught.value)
    assert dumps_session(doc.session) == before and doc.undo_text() == steps  # nothing changed


def test_models_whose_configs_lie_at_long_paths_are_counted_with_their_paths(tmp_path):
    """A model names its config.json by a path of up to 4,096 characters: the estimate holds
    what Save writes for eight such models, relative to a folder elsewhere."""
    from workbench.io.model_configs import read_model_config, shipped_configs
    from workbench.model.limits import session_totals
    from workbench.model.llm.session import ModelEntry

    folder = tmp_path.joinpath(*["c" * 250] * 15)
    folder.mkdir(parents=True)
    config = folder / "config.json"
    config.write_text(shipped_configs()["Qwen3-8B"].read_text())
    doc = Document()
    for i in range(8):
        doc.add_model(ModelEntry(str(config), read_model_config(str(config)), name=f"q{i}"))
    (tmp_path / "s").mkdir()
    written = len(dumps_session(doc.session, tmp_path / "s" / "s.yaml").encode("utf-8"))
    assert written > 8 * 3750
    assert written <= session_totals(doc.session).bytes


def test_the_totals_kept_through_edits_undo_and_redo_are_the_totals_counted_anew():
    from workbench.io.presets import get_preset
    from workbench.model.limits import session_totals

    doc = Document()
    doc.add_machine(get_preset("h100-sxm"), preset="h100-sxm")
    op = doc.add_operation(new_operation("gemm", "g"))
    assert doc.totals() == session_totals(doc.session)
    doc.set_operation_field(op, "name", "a longer name")
    doc.set_param(op, "m", 123456)
    doc.set_sweep(op, Sweep("n", [1, 2, 4, 8]))
    doc.duplicate_operation(op)
    doc.set_title_and_notes("title", "notes")
    for step in (lambda: None, doc.undo, doc.undo, doc.redo, doc.undo, doc.undo, doc.redo):
        step()
        assert doc.totals() == session_totals(doc.session)


def _counted_adds():
    from workbench.io.model_configs import read_model_config, shipped_configs
    from workbench.io.presets import get_preset
    from workbench.model.llm.session import ModelEntry
    from workbench.model.session import Comparison, HardwareEntry, OperationEntry

    def machines(doc):
        doc.session.hardware = [HardwareEntry(get_preset("h100-sxm").copy(name=f"m{i}"))
                                for i in range(64)]

    def models(doc):
        config = read_model_config(shipped_configs()["Qwen3-8B"])
        for i in range(64):
            doc.session.models.append(ModelEntry("Qwen3-8B", config, name=f"q{i}"))

    def pairs(doc):
        doc.session.operations = [OperationEntry(new_operation("gemm", f"g{i}"))
                                  for i in range(1001)]
        doc.session.comparisons = [Comparison("g0", f"g{i}") for i in range(1, 1001)]

    def model():
        return ModelEntry("Qwen3-8B", read_model_config(shipped_configs()["Qwen3-8B"]),
                          name="one more")

    return {
        "machine": (machines, lambda doc: doc.add_machine(get_preset("a100-80gb")),
                    "65 machines (adding 1); at most 64"),
        "model": (models, lambda doc: doc.add_model(model()),
                  "65 models (adding 1); at most 64"),
        "compared pair": (pairs, lambda doc: doc.set_comparisons(
            [*doc.session.comparisons, Comparison("g1", "g2")]),
            "1,001 compared pairs (adding 1); at most 1,000"),
    }


@pytest.mark.parametrize("kind", list(_counted_adds()))
def test_adding_past_the_machines_models_or_pairs_a_session_file_holds_is_refused(kind):
    """A session file holds at most 64 machines, 64 models and 1,000 compared pairs: one
    more is refused when added, with the numbers, rather than saved in a file that would
    not open."""
    from workbench.document.models import ModelTooLarge

    fill, add, said = _counted_adds()[kind]
    doc = Document()
    fill(doc)
    before = dumps_session(doc.session)
    steps = doc.undo_text()
    loads_session(before)  # (as full as a session file may be)
    with pytest.raises((OverBudget, ModelTooLarge)) as caught:
        add(doc)
    assert said in str(caught.value)
    assert dumps_session(doc.session) == before and doc.undo_text() == steps
