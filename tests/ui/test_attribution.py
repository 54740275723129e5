"""Each text names what a reader pairs it with, on screen as in figures: a new user's
session of six kinds of operation on two machines names each point unambiguously in the
window and on the exported slide; every example does so in the window; and the window's
File ▸ Export Figure of a chart as fitted makes the page the command line makes."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest
from figures.figcheck import (
    canvas_attribution,
    check_attribution,
    format_defects,
    pdf_attribution,
    read_figure,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.conftest import EXAMPLES, HANG_GUARD_S, ROOT
from workbench.io.presets import get_preset
from workbench.ui.dialogs.preset_dialog import PresetDialog
from workbench.ui.figures.export import last_figure_canvas, resolve_size
from workbench.ui.figures.export_dialog import FigureOptions
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

#: the screens the defects were seen on
SCREENS = ((1366, 768), (1024, 700))


@contextlib.contextmanager
def _window(qtbot, size=SCREENS[0], path=None):
    """The main window at ``size``, on the session ``path`` (None: a new one), shown;
    closed after, changes discarded."""
    create_app()
    win = MainWindow()
    win.settings.clear()
    win.resize(*size)
    # (a test that left changes meets no prompt when the window closes)
    win.ask_save_changes = lambda: QMessageBox.Discard
    if path is not None:
        win.open_path(path)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()
    win.deleteLater()


def _settled(win) -> None:
    """Every queued placing done, as after the user stops."""
    for _ in range(3):
        QApplication.processEvents()
    win.canvas.relayout()
    QApplication.processEvents()


def _six_kinds(win) -> None:
    """New session, the H100 and M4 Max presets, then GEMM, Attention (grouped-query, 32
    heads over 8 KV heads), Elementwise chain, Softmax, Norm and Reduction with their
    default parameters, each added from the Add Operation menu."""
    assert win.new_session()
    dialog = PresetDialog(win.workspace, win)
    dialog.choose(["h100-sxm", "apple-m4-max"])
    dialog.accept()
    panel = win.operations_panel
    for kind in ("gemm", "attention", "elementwise", "softmax", "norm", "reduction"):
        panel.add_actions[kind].trigger()
        if kind == "attention":
            win.document.set_param(win.workspace.selection.current, "kv_heads", 8)
    names = [e.operation.name for e in win.document.session.operations]
    assert names == ["GEMM", "Attention", "Elementwise chain", "Softmax", "Norm", "Reduction"]
    assert len(win.document.session.hardware) == 2


def _named_by(texts, name: str):
    found = [t for t in texts if t.text == name]
    return found[0] if found else None


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_six_kinds_session_names_each_point_on_screen_and_on_the_slide(qtbot, tmp_path,
                                                                           size):
    """"Softmax" sat right above the Norm point and "Norm" right below the Softmax point,
    with no leader line; now each text's nearest marker is its own (or a leader joins
    them), in the window and on the slide exported from it."""
    with _window(qtbot, size) as win:
        _six_kinds(win)
        _settled(win)
        texts, marks = canvas_attribution(win.canvas)
        defects = check_attribution(texts, marks)
        assert not defects, format_defects(defects, f"the window at {size}")
        # every operation with a marker in view is named, by its name or its tag (one
        # outside is counted by the note over the chart, and named nowhere)
        told = {op for t in texts if t.kind == "marker" for op in t.owners}
        ops = {e.id for e in win.document.session.operations
               if win.canvas.labels.in_view((e.id,))}
        assert len(ops) >= 4
        assert ops <= told | set(win.canvas.key.tags), (ops, told)
        # the slide, exported from the window
        target = tmp_path / "six.pdf"
        assert win.export_figure(target, FigureOptions(size="slide", dpi=144.0))
        fig = read_figure(target.read_bytes())
        canvas = last_figure_canvas()
        defects = (check_attribution(*canvas_attribution(canvas))
                   + check_attribution(*pdf_attribution(fig, canvas)))
        assert not defects, format_defects(defects, "the exported slide")
        # on the slide every name has room: each is said, as the page has it
        page_texts, _marks = pdf_attribution(fig, canvas)
        for name in ("GEMM", "Attention", "Softmax", "Norm"):
            assert _named_by(page_texts, name) is not None, name


@pytest.mark.parametrize("theme", ["light", "presentation"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_names_its_points_in_the_window(qtbot, path, theme):
    """Each example in the window (1366 × 768): every name, tag, roof value, ridge and
    sweep text names what a reader pairs it with."""
    with _window(qtbot, SCREENS[0], path) as win:
        if theme != "light":
            win.document.session.view.theme = theme
            win.canvas.rebuild(fit=True)
        _settled(win)
        defects = check_attribution(*canvas_attribution(win.canvas))
        assert not defects, format_defects(defects, f"{path.name} in the window, {theme}")


def test_the_window_and_the_command_line_make_one_page(qtbot, tmp_path):
    """File ▸ Export Figure of the chart as fitted, at single-column size, makes the page
    `render --size single` makes: the same size (it was 834 px tall from the window, 999
    from the command line) and the same pixels."""
    example = next(p for p in EXAMPLES if p.stem == "llama31_8b_inference")
    cli = tmp_path / "cli.png"
    done = subprocess.run([sys.executable, "-m", "workbench", "render", str(example), "-o",
                           str(cli), "--size", "single"], cwd=ROOT, capture_output=True,
                          text=True, timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    with _window(qtbot, SCREENS[0], example) as win:
        _settled(win)
        assert win.canvas.shows_fit
        app = tmp_path / "app.png"
        win.export_figure_action.trigger()
        dialog = win.export_dialog
        dialog.size_combo.setCurrentIndex(dialog.size_combo.findData("single"))
        dialog.accept_path(app)
        a, b = QImage(str(app)), QImage(str(cli))
        assert (a.width(), a.height()) == (b.width(), b.height())
        assert a == b
        # the interactive page too, byte for byte (its marks named by ids counted from one
        # in both: the window's session had others than the command line's)
        page = tmp_path / "cli.html"
        done = subprocess.run([sys.executable, "-m", "workbench", "render", str(example), "-o",
                               str(page), "--size", "single"], cwd=ROOT, capture_output=True,
                              text=True, timeout=HANG_GUARD_S)
        assert done.returncode == 0, done.stderr
        assert win.export_figure(tmp_path / "app.html", FigureOptions(
            size="single", dpi=resolve_size("single").dpi))
        assert (tmp_path / "app.html").read_bytes() == page.read_bytes()
        # zoomed in, the figure shows what the window shows instead
        (x0, x1), (y0, y1) = win.canvas.view_range()
        win.canvas.set_view_range((x0 * 10, x1), (y0 * 10, y1))
        assert not win.canvas.shows_fit
        zoomed = tmp_path / "zoomed.png"
        assert win.export_figure(zoomed, FigureOptions(size="single", dpi=300.0))
        shown = QImage(str(zoomed))
        assert shown.width() == b.width() and shown != b


@pytest.mark.parametrize("name", ["llama_ffn", "teaching_machine"])
def test_texts_name_their_points_after_each_edit(qtbot, name):
    """An edit re-places only the texts near the markers it moved, at once (no full
    placing follows); a marker moved beside another operation's name, without touching it,
    left that name nearer the moved marker than its own ("FFN up, prefill" 5 px from
    another point, 7 px from its own), and a ridge's "I = 200" as near another point as its
    own. After each edit every text names what a reader pairs it with."""
    path = next(p for p in EXAMPLES if p.stem == name)
    with _window(qtbot, SCREENS[0], path) as win:
        _settled(win)
        gemms = [e.id for e in win.document.session.operations
                 if e.operation.kind == "gemm"]
        assert gemms
        for value in (1024, 2048, 256, 64, 8192):
            for op_id in gemms:
                for param in ("m", "k"):
                    win.document.set_param(op_id, param, value)
                    # (what the edit itself placed, as seen before any queued placing)
                    QApplication.processEvents()
                    defects = check_attribution(*canvas_attribution(win.canvas))
                    assert not defects, format_defects(
                        defects, f"{path.name} after {param} = {value} of operation {op_id}")


def test_a_sweeps_end_beside_another_sweeps_end_is_another_mark(qtbot):
    """In the critical-batch example, with both machines' main memory twice as fast and
    the second GEMM's K set to 1, that GEMM's point (with its sweep's end) lands where the
    first GEMM's sweep starts, their ends half a pixel apart. "m = 1" of the first sweep was
    placed beside them as if that other end were drawn over its own (its room, a pixel
    wider than the dot drawn, met it): 9.7 px from the other end, 8.5 px from its own, no
    leader. Now a mark drawn beside a sweep's end is another mark to its text."""
    path = next(p for p in EXAMPLES if p.stem == "critical_batch_sweep")
    with _window(qtbot, (1600, 1000), path) as win:
        doc = win.document
        for entry in doc.session.hardware:
            hardware = entry.hardware.copy()
            hardware.memory[hardware.main_memory] *= 2.0
            doc.set_machine(entry.id, hardware)
        first, second = doc.session.operations[:2]
        for name, value in (("k", 16), ("m", 256), ("n", 100)):
            doc.set_param(first.id, name, value)
        doc.set_param(second.id, "k", 1)
        _settled(win)
        texts, marks = canvas_attribution(win.canvas)
        assert sum(t.text == "m = 1" for t in texts) == 2, "both machines' sweeps start said"
        defects = check_attribution(texts, marks)
        assert not defects, format_defects(defects, "the edited critical-batch example")


#: an edit of the walk below: ("param", operation, name, value), ("memory", machine,
#: factor), ("machine", preset) added, ("duplicate", operation) or ("undo",)
_EDITS = st.one_of(
    st.tuples(st.just("param"), st.integers(0, 7), st.sampled_from(["m", "n", "k"]),
              st.sampled_from([1, 16, 100, 256, 1000, 4096, 30000])),
    st.tuples(st.just("memory"), st.integers(0, 3), st.sampled_from([0.5, 2.0])),
    st.tuples(st.just("machine"), st.sampled_from(["gb200", "rtx-4080", "tpu-v5e",
                                                   "v100-pcie-16gb"])),
    st.tuples(st.just("duplicate"), st.integers(0, 7)),
    st.tuples(st.just("undo")),
)


@pytest.mark.parametrize("name", ["critical_batch_sweep", "llama_ffn"])
@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(_EDITS, min_size=2, max_size=6))
def test_texts_name_their_marks_through_any_walk_of_edits(qtbot, name, edits):
    """Edits of dimensions, of the machines' main memory, machines added, operations
    duplicated and their undo, in any order: after each, what the window shows (before any
    queued placing) names each mark as a reader pairs it (a walk like this found the
    sweep's "m = 1" above; one adding a machine whose points lay outside the view left every
    text placed for the view before it grew, leaders pointing at nothing, until a moment
    later)."""
    path = next(p for p in EXAMPLES if p.stem == name)
    with _window(qtbot, (1600, 1000), path) as win:
        doc = win.document
        _settled(win)
        done = []
        for edit in edits:
            if edit[0] == "param":
                ops = [e for e in doc.session.operations if edit[2] in e.operation.params]
                if not ops:
                    continue
                entry = ops[edit[1] % len(ops)]
                doc.set_param(entry.id, edit[2], edit[3])
            elif edit[0] == "memory":
                entry = doc.session.hardware[edit[1] % len(doc.session.hardware)]
                hardware = entry.hardware.copy()
                hardware.memory[hardware.main_memory] *= edit[2]
                doc.set_machine(entry.id, hardware)
            elif edit[0] == "machine":  # (its points may lie outside: the view grows)
                doc.add_machine(get_preset(edit[1]), preset=edit[1])
            elif edit[0] == "duplicate":
                ops = doc.session.operations
                doc.duplicate_operation(ops[edit[1] % len(ops)].id)
            else:
                win.undo_action.trigger()
            done.append(edit)
            QApplication.processEvents()
            defects = check_attribution(*canvas_attribution(win.canvas))
            assert not defects, format_defects(defects, f"{name} after {done}")
