"""Bounded inputs in the app: a large measurement file is imported with a progress dialog that
names each step, large Nsight Compute exports keep every kernel apart, the autosave of a
large session is written off the window's thread, and a config.json that is too deep or
holds a huge number is a message, not a traceback. (How fast each of these runs is measured
in benchmarks/run.py.)"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QProgressDialog, QPushButton

from workbench.io.autosave import Recoverable
from workbench.io.measurements import parse_ncu_csv

EXAMPLES = Path(__file__).resolve().parents[2] / "workbench" / "examples"
NCU_HEADER = ('"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum",'
              '"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"\n'
              '"","","nsecond","byte","inst"\n')


@pytest.fixture
def window(open_window):
    return open_window()


def _every_turn(look) -> QTimer:
    """A started timer that calls ``look`` at every turn of the event loop (also inside a
    dialog's own event processing)."""
    timer = QTimer()
    timer.setInterval(0)
    timer.timeout.connect(look)
    timer.start()
    return timer


def _watch_progress(seen: list[tuple[str, bool]]) -> QTimer:
    """Record the label of every progress dialog on screen while the import runs (the timer
    fires inside the dialog's own event processing)."""
    def look() -> None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QProgressDialog) and widget.isVisible():
                entry = (widget.labelText(), widget.windowTitle() == "Import Measurements")
                if entry not in seen:
                    seen.append(entry)

    return _every_turn(look)


def test_a_large_csv_shows_each_step_of_its_import(qtbot, window, tmp_path):
    path = tmp_path / "kernels.csv"
    rows = "".join(f"kernel number {i},{1 + i % 7}.25,{i + 1}e9,{i + 1}e6\n"
                   for i in range(40_000))
    path.write_text("name,time_us,flops,bytes\n" + rows, encoding="utf-8")
    assert path.stat().st_size > 1_000_000
    seen: list[tuple[str, bool]] = []
    timer = _watch_progress(seen)
    try:
        assert window.import_measurements(path)
    finally:
        timer.stop()
    assert ("Reading kernels.csv…", True) in seen
    assert ("Checking 40,000 measured points…", True) in seen
    assert ("Drawing 40,000 measured points…", True) in seen
    assert not any(isinstance(w, QProgressDialog) and w.isVisible()
                   for w in QApplication.topLevelWidgets())
    assert len(window.document.session.measurements) == 40_000
    # (the counts as the progress steps write them, with their thousands separated)
    assert window.document.undo_text().startswith("Import 40,000 measurements")
    assert window.statusBar().currentMessage().startswith(
        "Imported 40,000 measured points from kernels.csv")


def test_a_small_csv_is_imported_without_a_dialog(qtbot, window, tmp_path):
    path = tmp_path / "few.csv"
    path.write_text("name,time_us,flops,bytes\nk,1,1e9,1e6\n", encoding="utf-8")
    seen: list[tuple[str, bool]] = []
    timer = _watch_progress(seen)
    try:
        assert window.import_measurements(path)
    finally:
        timer.stop()
    assert seen == []
    assert [m.name for m in window.document.session.measurements] == ["k"]


def test_40000_nsight_kernels_with_repeated_names_are_told_apart_by_their_id():
    rows = "".join(f'"{i}","kernel_{i % 50}","{1000 + i}","{1000 + i}","{1000 + i}"\n'
                   for i in range(40_000))
    measurements = parse_ncu_csv(NCU_HEADER + rows, "big.csv")
    assert len(measurements) == 40_000
    assert measurements[7].name == "kernel_7 #7"  # repeated names get their ID
    assert measurements[39_999].name == "kernel_49 #39999"
    assert len({m.name for m in measurements}) == 40_000


# -- bounded config.json in the app: a dialog, not a traceback


def _deep_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    return path


def test_opening_a_session_with_a_deeply_nested_config_shows_a_dialog(qtbot, window, tmp_path):
    config = _deep_config(tmp_path)
    session = tmp_path / "s.yaml"
    session.write_text("schema_version: 2\nhardware: [{preset: h100-sxm}]\nmodels:\n"
                       f"  - {{config: '{config}', phase: decode, batch: 1, kv_len: 64}}\n",
                       encoding="utf-8")
    before = window.document.session
    assert not window.open_path(session)
    box = window._error_box
    assert box.isVisible()
    assert "models[0].config" in box.text() and "nested more than 64 levels deep" in box.text()
    assert window.document.session is before
    box.close()


def test_add_model_with_a_5000_digit_number_says_so(qtbot, window, tmp_path):
    from workbench.ui.editors.model_editor import AddModelDialog

    config = tmp_path / "config.json"
    config.write_text('{"model_type": "llama", "hidden_size": 1' + "0" * 5000 + "}",
                      encoding="utf-8")
    dialog = AddModelDialog(window)
    qtbot.addWidget(dialog)
    assert not dialog.choose_file(str(config))
    assert dialog.summary.text() == (f"{config}: holds a number with more than 400 digits "
                                     "(100000000000...)")


def _nsight_csv(path, count: int) -> None:
    rows = "".join(f'"{i}","kernel_{i}","{1000 + i}","{1000 + i}000","{1000 + i}000"\n'
                   for i in range(count))
    path.write_text(NCU_HEADER + rows, encoding="utf-8")


def test_thousands_of_kernels_imported_into_two_machines_are_drawn_bounded_and_all_listed(
        qtbot, open_window, tmp_path):
    from workbench.model.chart.overlay_data import MAX_MEASURED_DRAWN

    window = open_window(EXAMPLES / "real_kernels_h100_h200.yaml", size=(1400, 900))
    before = len(window.document.session.measurements)
    assert len(window.canvas.measured_items()) == before  # (each on its machine; all drawn)
    assert not any("measured points drawn" in t for t in window.canvas.legend_texts())
    path = tmp_path / "ncu.csv"
    kernels = 3_000  # on two machines: six times the points drawn (MAX_MEASURED_DRAWN)
    _nsight_csv(path, kernels)
    assert window.import_measurements(path)
    QApplication.processEvents()
    assert len(window.document.session.measurements) == before + kernels
    total = before + 2 * kernels  # the kernels name no machine: judged on both
    # the chart draws the first thousand measured points and says so in its legend
    drawn = window.canvas.measured_items()
    assert len(drawn) == MAX_MEASURED_DRAWN
    notes = [t for t in window.canvas.legend_texts()
             if t.startswith(f"{MAX_MEASURED_DRAWN:,} of ")
             and t.endswith(" measured points drawn — the Measurements table lists all")]
    assert len(notes) == 1, window.canvas.legend_texts()
    shown = int(notes[0].split(" of ")[1].split(" ")[0].replace(",", ""))
    # (the kernels the import hides for their small share of GPU time are not counted)
    assert MAX_MEASURED_DRAWN < shown <= total
    # the Measurements table lists every one (a row per machine)
    window.measurements_dock.show()
    window.measurements_dock.raise_()
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == total, timeout=HANG_GUARD_S * 1000)


def test_the_autosave_of_a_large_session_is_written_off_the_window(qtbot, open_window,
                                                                  tmp_path, monkeypatch):
    window = open_window(EXAMPLES / "real_kernels_h100_h200.yaml")
    path = tmp_path / "ncu.csv"
    _nsight_csv(path, 60)  # (the write is held below: its size decides nothing)
    assert window.import_measurements(path)
    slot = window.autosave.path
    window.autosave.remove()
    window.document.set_title("Many kernels")
    # the write is held until the tick has returned: a write on the window's thread would
    # have to finish inside the tick, so the tick returning with no file proves it is not
    from workbench.io import autosave

    write = autosave.write_atomic
    writers: list[threading.Thread] = []
    release = threading.Event()

    def held_write(*args, **kwargs):
        writers.append(threading.current_thread())
        if threading.current_thread() is not threading.main_thread():
            release.wait()
        return write(*args, **kwargs)

    monkeypatch.setattr(autosave, "write_atomic", held_write)
    window.autosave_timer.timeout.emit()
    assert not slot.exists()  # the tick returned while the file is still being written
    release.set()
    window.autosave.wait()
    assert slot.exists()
    assert writers and threading.main_thread() not in writers
    recovered = Recoverable(slot, None, 0.0, 0).load()  # (what recovery reads)
    assert recovered.title == "Many kernels"
    assert len(recovered.measurements) == len(window.document.session.measurements)
    # nothing changed since: the next tick writes nothing
    written = slot.stat().st_mtime_ns
    window.autosave_timer.timeout.emit()
    window.autosave.wait()
    assert slot.stat().st_mtime_ns == written


def test_a_profile_too_large_to_save_is_refused_before_it_joins_the_session(window, tmp_path):
    """Each point of a profile is written with its bytes at L1, L2 and DRAM, its unit and
    its run (the file's name): 48,000 kernels of a file with a long name take about 36 MB as
    a session file, past the 32 MB a session file holds. The import is refused with the
    numbers (the session is not left holding what it could not save)."""
    name = ("llama-3.1-8b-instruct-prefill-batch8-seq4096-tp1-bf16-h100-sxm5-80gb-cuda12.4-"
            "torch2.4-ncu2024.3-raw-page-gpu-time-dram-lts-l1tex-bytes-ffma-counters-"
            "every-kernel-of-one-training-step-after-warmup-replay-kernel-run-7.csv")
    path = tmp_path / name
    metrics = ("gpu__time_duration.sum", "dram__bytes.sum", "lts__t_bytes.sum",
               "l1tex__t_bytes.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")
    with path.open("w", encoding="utf-8") as f:
        f.write(",".join(f'"{c}"' for c in ("ID", "Kernel Name", *metrics)) + "\n")
        f.write('"","","nsecond","byte","byte","byte","inst"\n')
        for i in range(48_000):
            f.write(f'"{i}","k{i}","{1_000_000 + 37 * i}","{10**14 + 7919 * i}",'
                    f'"{3 * 10**14 + 104_729 * i}","{6 * 10**14 + 1_299_709 * i}",'
                    f'"{10**13 + 15_485_863 * i}"\n')
    document = window.document
    before = list(document.session.measurements)
    assert not window.import_measurements(path)
    message = window.last_error
    assert message.startswith(f"{path}: importing 48,000 measured points: the session file "
                              "would take about "), message
    assert message.endswith("a session file holds at most 32 MB; nothing was imported")
    assert document.session.measurements == before
    assert not document.modified and not document.can_undo()


def _large_session_file(path: Path) -> Path:
    """A session file of 4,000 measured points, past the size opened with progress."""
    from workbench.io.sessions import save_session
    from workbench.model.measured import Measurement
    from workbench.model.session import Session

    session = Session(title="A large profile")
    session.measurements = [Measurement(name=f"kernel number {i} " + "x" * 200,
                                        time_s=(i + 1) * 1e-6, flops=1e9, bytes=1e6)
                            for i in range(4_000)]
    save_session(session, path)
    assert path.stat().st_size > 1_000_000
    return path


def test_a_large_session_file_opens_under_a_progress_dialog(qtbot, window, tmp_path):
    path = _large_session_file(tmp_path / "profile.yaml")
    seen: list[tuple[str, bool]] = []
    timer = _watch_progress(seen)
    try:
        assert window.open_path(path)
    finally:
        timer.stop()
    assert [label for label, _ in seen] == ["Opening profile.yaml…"]
    assert window.document.session.title == "A large profile"
    assert len(window.document.session.measurements) == 4_000
    assert not window.document.modified


def test_cancelling_the_open_of_a_large_session_keeps_the_session_shown(
        qtbot, window, tmp_path, monkeypatch):
    from workbench.ui.window import files

    path = _large_session_file(tmp_path / "profile.yaml")
    shown = window.document.session
    title = window.windowTitle()
    release = threading.Event()
    read = files.load_session

    def held(*args, **kwargs):  # (a read that takes long)
        assert release.wait(HANG_GUARD_S)
        return read(*args, **kwargs)

    monkeypatch.setattr(files, "load_session", held)

    def cancel() -> None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QProgressDialog) and widget.isVisible():
                widget.findChild(QPushButton).click()  # (as the user does)

    timer = _every_turn(cancel)
    try:
        assert not window.open_path(path)
    finally:
        timer.stop()
        release.set()
    assert window.document.session is shown
    assert window.windowTitle() == title and not window.document.modified
    assert str(path) not in window.recent_files()


def _progress_dialogs() -> list[QProgressDialog]:
    return [widget for widget in QApplication.topLevelWidgets()
            if isinstance(widget, QProgressDialog) and widget.isVisible()]


def _read_in_steps(monkeypatch, step):
    """Each step of a session file's read (its progress told) waits for ``step(fraction)``
    on the window's thread; ``(fractions, ended, timer)``: the fractions told, how the read
    ended ("read" or the exception it ended with), and the timer that calls ``step``."""
    from workbench.ui.window import files

    read = files.load_session
    fractions: list[float] = []
    ended: list[object] = []
    calls: list[float] = []
    asked = threading.Event()

    def stepped(path, found, progress=None, cancelled=None):
        def told(fraction: float) -> None:
            progress(fraction)
            fractions.append(fraction)
            asked.clear()
            calls.append(fraction)
            assert asked.wait(HANG_GUARD_S)  # the window has looked at it

        try:
            session = (read(path, found, told, cancelled) if progress
                       else read(path, found))
        except BaseException as exc:
            ended.append(exc)
            raise
        ended.append("read")
        return session

    def look() -> None:
        if calls and not asked.is_set():
            step(calls[-1])
            asked.set()

    monkeypatch.setattr(files, "load_session", stepped)
    timer = _every_turn(look)
    return fractions, ended, timer


def test_the_open_of_a_large_session_shows_how_far_it_has_come(
        qtbot, window, tmp_path, monkeypatch):
    path = _large_session_file(tmp_path / "profile.yaml")
    shown: list[int] = []

    def step(fraction: float) -> None:
        # the bar shows the fraction told once the window has painted it
        qtbot.waitUntil(lambda: [d.value() for d in _progress_dialogs()]
                        == [round(100 * fraction)], timeout=HANG_GUARD_S * 1000)
        if not shown or shown[-1] != round(100 * fraction):
            shown.append(round(100 * fraction))

    _fractions, ended, timer = _read_in_steps(monkeypatch, step)
    try:
        assert window.open_path(path)
    finally:
        timer.stop()
    assert ended == ["read"]
    assert len(shown) > 10 and shown == sorted(shown)
    assert shown[0] < 20 and shown[-1] > 80
    assert len(window.document.session.measurements) == 4_000


def test_cancel_stops_the_read_of_a_large_session(qtbot, window, tmp_path, monkeypatch):
    path = _large_session_file(tmp_path / "profile.yaml")
    shown = window.document.session

    def step(fraction: float) -> None:
        for dialog in _progress_dialogs():
            if fraction > 0.3:
                dialog.findChild(QPushButton).click()  # (as the user does)

    fractions, ended, timer = _read_in_steps(monkeypatch, step)
    try:
        assert not window.open_path(path)
        reading = [t for t in threading.enumerate() if t.name.startswith("roofline-open")]
        for thread in reading:
            thread.join(HANG_GUARD_S)
    finally:
        timer.stop()
    # the read stopped at its next step after the Cancel, long before the file's end
    assert len(ended) == 1 and ended[0] != "read"
    assert 0.3 < fractions[-1] < 0.5
    from workbench.io.errors import ReadCancelled

    assert isinstance(ended[0], ReadCancelled)
    assert window.document.session is shown and not window.document.modified
    assert str(path) not in window.recent_files()


def test_revert_to_saved_reads_a_large_session_under_progress(
        qtbot, window, tmp_path, monkeypatch):
    path = _large_session_file(tmp_path / "profile.yaml")
    assert window.open_path(path)
    saved = window.document.session.measurements
    window.document.set_title("Edited here")
    window.document.set_measurements(saved[:10])
    monkeypatch.setattr(window, "confirm_revert", lambda _path: True)
    seen: list[tuple[str, bool]] = []
    timer = _watch_progress(seen)
    try:
        assert window.revert_to_saved()
    finally:
        timer.stop()
    assert [label for label, _ in seen] == ["Reading profile.yaml again…"]
    assert window.document.session.title == "A large profile"
    assert window.document.session.measurements == saved
    assert not window.document.modified
    assert window.windowTitle().startswith("profile.yaml")


def _many_kernels(open_window, tmp_path):
    """A window on a session of some 60 imported kernels, edited (so it is autosaved), with
    no autosave written yet. (An autosave formats its measured points off the window
    however many they are: more would only make the chart's layout longer.)"""
    window = open_window(EXAMPLES / "real_kernels_h100_h200.yaml")
    path = tmp_path / "ncu.csv"
    _nsight_csv(path, 60)
    assert window.import_measurements(path)
    window.autosave.remove()
    window.document.set_title("Many kernels")
    return window


def _record_formatting(monkeypatch, hold: threading.Event | None = None):
    """The ``(thread, value)`` of every quantity a session file is written with; with
    ``hold``, a quantity formatted off the window's thread waits for it."""
    from workbench.io import sessions

    formatted: list[tuple[threading.Thread, float]] = []
    started = threading.Event()
    real = sessions.format_quantity

    def recorded(value, *args, **kwargs):
        formatted.append((threading.current_thread(), value))
        if hold is not None and threading.current_thread() is not threading.main_thread():
            started.set()
            assert hold.wait(HANG_GUARD_S)
        return real(value, *args, **kwargs)

    monkeypatch.setattr(sessions, "format_quantity", recorded)
    return formatted, started


def _autosaved_text(path: Path) -> str:
    """An autosave file's session text (what follows its header line)."""
    return path.read_text(encoding="utf-8").split("\n", 1)[1]


def test_the_measured_points_of_an_autosave_are_formatted_off_the_window(
        qtbot, open_window, tmp_path, monkeypatch):
    window = _many_kernels(open_window, tmp_path)
    times = {m.time_s for m in window.document.session.measurements}
    formatted, _ = _record_formatting(monkeypatch)
    window.autosave_timer.timeout.emit()
    window.autosave.wait()
    on_window = [value for thread, value in formatted
                 if thread is threading.main_thread() and value in times]
    elsewhere = [value for thread, value in formatted
                 if thread is not threading.main_thread() and value in times]
    assert not on_window, f"{len(on_window)} measured times formatted on the window's thread"
    assert set(elsewhere) == times
    # the next autosave, after an edit that leaves the points as they were, formats none
    formatted.clear()
    window.document.set_title("Many kernels, renamed")
    window.autosave_timer.timeout.emit()
    window.autosave.wait()
    assert not [value for _thread, value in formatted if value in times]
    # what the autosave holds is what Save writes (every point formatted afresh), byte for
    # byte, and what it reopens as is the session
    autosaved = _autosaved_text(window.autosave.path)
    recovered = Recoverable(window.autosave.path, None, 0.0, 0).load()
    from workbench.io.sessions import PointTexts

    window.autosave.texts = PointTexts()
    assert window.save_to(tmp_path / "saved.yaml")
    assert (tmp_path / "saved.yaml").read_text(encoding="utf-8") == autosaved
    assert recovered.title == "Many kernels, renamed"
    assert recovered.measurements == window.document.session.measurements


def test_an_autosave_after_an_edit_elsewhere_looks_at_no_measured_point_again(
        qtbot, open_window, tmp_path, monkeypatch):
    import dataclasses

    from workbench.io import sessions

    window = _many_kernels(open_window, tmp_path)
    window.autosave_timer.timeout.emit()
    window.autosave.wait()
    looked: list[object] = []
    values_of = sessions._point_values

    def counted(m):
        looked.append(m)
        return values_of(m)

    monkeypatch.setattr(sessions, "_point_values", counted)
    # an edit that leaves the points as they were: the snapshot on the window's thread
    # takes their values from the last one
    window.document.set_title("Many kernels, renamed")
    window.autosave_timer.timeout.emit()
    window.autosave.wait()
    assert looked == []
    # one point edited: that one alone is looked at, and the autosave holds the edit
    points = list(window.document.session.measurements)
    points[1] = dataclasses.replace(points[1], name="renamed kernel")
    window.document.set_measurements(points, "Rename a kernel")
    window.autosave_timer.timeout.emit()
    window.autosave.wait()
    assert looked == [points[1]]
    recovered = Recoverable(window.autosave.path, None, 0.0, 0).load()
    assert recovered.measurements == window.document.session.measurements
    assert recovered.measurements[1].name == "renamed kernel"


def test_edits_while_an_autosave_is_being_written_do_not_reach_it(
        qtbot, open_window, tmp_path, monkeypatch):
    from workbench.io.sessions import save_session

    window = _many_kernels(open_window, tmp_path)
    session = window.document.session
    save_session(session, tmp_path / "before.yaml")  # (what Save writes of it as it is)
    before = (tmp_path / "before.yaml").read_text(encoding="utf-8")
    points = list(session.measurements)
    hold = threading.Event()
    _formatted, started = _record_formatting(monkeypatch, hold)
    window.autosave_timer.timeout.emit()
    try:
        assert started.wait(HANG_GUARD_S)  # the autosave is formatting the points
        # meanwhile the user renames the session and deletes most of the points
        window.document.set_title("Edited meanwhile")
        window.document.set_measurements(points[:10])
        window.document.set_measurements(
            [dataclasses.replace(points[0], name="renamed meanwhile"), *points[1:10]])
    finally:
        hold.set()
    window.autosave.wait()
    assert _autosaved_text(window.autosave.path) == before
    # the next autosave writes the session as it is now
    window.autosave_timer.timeout.emit()
    window.autosave.wait()
    recovered = Recoverable(window.autosave.path, None, 0.0, 0).load()
    assert recovered.title == "Edited meanwhile"
    assert [m.name for m in recovered.measurements][:2] == ["renamed meanwhile", points[1].name]
    assert len(recovered.measurements) == 10


def _watch_saving(seen: list[tuple[str, str, bool]]) -> QTimer:
    """Record each progress dialog on screen (its text, its title, whether it takes the
    window's input) while the window saves."""
    def look() -> None:
        for dialog in _progress_dialogs():
            entry = (dialog.labelText(), dialog.windowTitle(),
                     QApplication.activeModalWidget() is dialog)
            if entry not in seen:
                seen.append(entry)

    return _every_turn(look)


def _opened_large_session(window, tmp_path):
    """``window`` on a session file of 4,000 measured points, its title edited."""
    path = _large_session_file(tmp_path / "profile.yaml")
    assert window.open_path(path)
    window.document.set_title("Saved with many points")
    return path


def test_saving_a_large_session_formats_its_points_off_the_window_under_progress(
        qtbot, window, tmp_path, monkeypatch):
    from workbench.io.sessions import dumps_session

    path = _opened_large_session(window, tmp_path)
    times = {m.time_s for m in window.document.session.measurements}
    expected = dumps_session(window.document.session, path)
    formatted, _ = _record_formatting(monkeypatch)
    seen: list[tuple[str, str, bool]] = []
    timer = _watch_saving(seen)
    try:
        assert window.on_save()
    finally:
        timer.stop()
    on_window = [value for thread, value in formatted
                 if thread is threading.main_thread() and value in times]
    assert not on_window, f"{len(on_window)} measured times formatted on the window's thread"
    assert {value for _thread, value in formatted} >= times
    assert seen == [("Saving profile.yaml…", "Save Session", True)]
    assert not _progress_dialogs()
    assert path.read_text(encoding="utf-8") == expected
    assert path.with_name("profile.yaml.bak").exists()
    assert not window.document.modified and not window.isWindowModified()
    assert window.recent_files()[0] == str(path.resolve())
    assert window.statusBar().currentMessage() == f"Saved {path}"
    # a second save, the points unchanged, formats none of them again and shows no dialog
    formatted.clear()
    seen.clear()
    window.document.set_title("Saved again")
    timer = _watch_saving(seen)
    try:
        assert window.on_save()
    finally:
        timer.stop()
    assert not [value for _thread, value in formatted if value in times] and not seen
    assert path.read_text(encoding="utf-8") == dumps_session(window.document.session, path)


def test_cancel_stops_a_large_save_before_its_file_is_written(
        qtbot, window, tmp_path, monkeypatch):
    from workbench.io.errors import SaveCancelled
    from workbench.io.sessions import dumps_session
    from workbench.ui.window import files

    path = _opened_large_session(window, tmp_path)
    before = path.read_bytes()
    write = files.save_snapshot
    ended: list[object] = []
    waiting, clicked = threading.Event(), threading.Event()

    def stepped(snapshot, target, progress=None, cancelled=None, **kwargs):
        def told(fraction: float) -> None:
            progress(fraction)
            if not clicked.is_set():  # (the user presses Cancel while the points are formatted)
                waiting.set()
                assert clicked.wait(HANG_GUARD_S)

        try:
            write(snapshot, target, progress=told, cancelled=cancelled, **kwargs)
        except BaseException as exc:
            ended.append(exc)
            raise
        ended.append("written")

    def look() -> None:
        for dialog in _progress_dialogs():
            if waiting.is_set() and not clicked.is_set():
                dialog.findChild(QPushButton).click()  # (as the user does)
                clicked.set()

    monkeypatch.setattr(files, "save_snapshot", stepped)
    timer = _every_turn(look)
    try:
        assert not window.on_save()
    finally:
        timer.stop()
    # the save stopped at its next step after the Cancel: nothing written, nothing lost
    assert len(ended) == 1 and isinstance(ended[0], SaveCancelled)
    assert path.read_bytes() == before
    assert not path.with_name("profile.yaml.bak").exists()
    assert window.document.modified and window.isWindowModified()
    assert window.statusBar().currentMessage() == f"Save cancelled: {path} was not written"
    assert not _progress_dialogs()
    # saved again without a Cancel, the file is written whole
    assert window.on_save()
    assert ended[-1] == "written"
    assert path.read_text(encoding="utf-8") == dumps_session(window.document.session, path)
    assert not window.document.modified


def test_a_large_session_saved_on_close_is_written_before_the_window_closes(
        qtbot, open_window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from workbench.io.sessions import dumps_session

    window = open_window()
    path = _opened_large_session(window, tmp_path)
    expected = dumps_session(window.document.session, path)
    window.ask_save_changes = lambda: QMessageBox.Save
    seen: list[tuple[str, str, bool]] = []
    timer = _watch_saving(seen)
    try:
        assert window.close()
    finally:
        timer.stop()
    assert seen == [("Saving profile.yaml…", "Save Session", True)]
    assert not window.isVisible()
    assert path.read_text(encoding="utf-8") == expected


def test_a_large_session_that_cannot_be_saved_says_why_and_stays_modified(
        qtbot, window, tmp_path, monkeypatch):
    path = _opened_large_session(window, tmp_path)
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(window, "show_error", lambda title, text: shown.append((title, text)))
    before = path.read_bytes()
    path.chmod(0o444)
    try:
        assert not window.on_save()
    finally:
        path.chmod(0o644)
    assert len(shown) == 1 and shown[0][0] == "Cannot save session"
    assert shown[0][1].startswith(f"{path}: ")
    assert path.read_bytes() == before
    assert window.document.modified and window.document.session.title == "Saved with many points"
