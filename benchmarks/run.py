"""Roofline Workbench benchmarks, on the real code paths.

    python benchmarks/run.py [--quick] [--json OUT]

Prints a table (median and spread over repeated runs; seconds unless the key says ms) and,
with --json, writes the same numbers. --quick runs few repetitions and small sizes: a smoke
test for CI that does not judge times (times on shared machines are noise).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGETS = {
    "startup_s": ("<= 1.3 x startup_floor_s", None),
    "edit_to_paint_ms.100": ("<= 8 ms", 8.0),
    "edit_to_paint_ms.1000": ("<= 16 ms", 16.0),
    "model_edit_ms.layers": ("<= 16 ms", 16.0),
    "model_edit_ms.all": ("<= 50 ms", 50.0),
    "sweep_keystroke_cpu_ms": ("<= 16 ms", 16.0),
    "zoom_frame_ms": ("<= 16 ms", 16.0),
    "sweep_eval_s_1e6": ("<= 0.1 s", 0.1),
    "batch_sweep_ms_per_batch": ("<= 50 ms", 50.0),
    "ncu_read_s_40000": ("<= 3 s", 3.0),
    "import_kernels_s_20000": ("<= 15 s", 15.0),
    "open_session_s_1000": ("<= 0.5 s", 0.5),
    "export_s.png": ("<= 0.5 s", 0.5),
    "export_s.svg": ("<= 0.5 s", 0.5),
    "export_s.pdf": ("<= 0.5 s", 0.5),
    "export_s.html": ("<= 0.5 s", 0.5),
    "html_export_s.examples": ("<= 0.5 s (slowest example)", 0.5),
    "html_kb.examples": ("<= 300 KB (largest example)", 300.0),
    "html_kb.1000": ("<= 2048 KB", 2048.0),
    "rss_mb_1000": ("<= 250 MB", 250.0),
    "soak_rss_growth": ("<= 5 %", 5.0),
}


def stats(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)
    return {
        "median": statistics.median(samples),
        "min": samples[0],
        "max": samples[-1],
        "spread": (samples[-1] - samples[0]) if len(samples) > 1 else 0.0,
        "n": len(samples),
    }


def repeat(fn: Callable[[], float], n: int) -> dict[str, float]:
    return stats([fn() for _ in range(n)])


# -- sessions of a given size --------------------------------------------------------------

MACHINES = ("h100-sxm", "a100-80gb", "tpu-v5e")


def big_session(n_ops: int):
    from workbench.io.presets import get_preset
    from workbench.model.operations import Operation
    from workbench.model.session import HardwareEntry, OperationEntry, Session

    session = Session(title=f"{n_ops} operations")
    for preset in MACHINES:
        session.hardware.append(HardwareEntry(get_preset(preset), preset=preset))
    kinds = [
        ("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"}),
        ("attention", {"implementation": "flash", "heads": 32, "kv_heads": 8, "head_dim": 128,
                       "query_len": 1, "kv_len": 8192, "dtype": "bf16"}),
        ("elementwise", {"n": 1 << 24, "dtype": "fp32",
                         "steps": [{"op": "fma"}, {"op": "gelu"}], "fused": False}),
        ("norm", {"variant": "rmsnorm", "rows": 4096, "hidden": 8192, "dtype": "bf16"}),
        ("softmax", {"rows": 4096, "cols": 4096, "dtype": "bf16"}),
    ]
    for i in range(n_ops):
        kind, params = kinds[i % len(kinds)]
        params = dict(params)
        if kind == "gemm":
            params["m"] = 1 + (i * 97) % 8192
        session.operations.append(OperationEntry(Operation(kind, params, f"{kind} {i}")))
    return session


# -- in-process measurements -----------------------------------------------------------------


class _PaintCounter:
    """Counts paint events on widgets (to check that a measured edit really repainted)."""

    def __init__(self, widgets) -> None:
        from PySide6.QtCore import QEvent, QObject

        counter = self

        class Filter(QObject):
            def eventFilter(self, obj, event):
                if event.type() == QEvent.Type.Paint:
                    counter.counts[obj] = counter.counts.get(obj, 0) + 1
                return False

        self.counts: dict = {}
        self._filter = Filter()
        self.widgets = list(widgets)
        for widget in self.widgets:
            widget.installEventFilter(self._filter)

    def painted(self) -> bool:
        return all(self.counts.get(w, 0) > 0 for w in self.widgets)

    def stop(self) -> None:
        """Stop counting (the filter taken off every widget)."""
        for widget in self.widgets:
            widget.removeEventFilter(self._filter)


def shown_window(session):
    """The application and a 1600 × 1000 main window showing ``session``, laid out and
    painted, as each edit benchmark starts."""
    from workbench.ui.window.app import create_app
    from workbench.ui.window.main_window import MainWindow

    app = create_app()
    window = MainWindow()
    window.resize(1600, 1000)
    window.set_session(session, None)
    window.show()
    for _ in range(3):
        app.processEvents()
    return app, window


def bench_edit_to_paint(n_ops: int, reps: int) -> tuple[dict[str, float], dict[str, float]]:
    """Change one dimension through the editor's document path; time until every result is
    recomputed and the repaint has been delivered: ``processEvents`` handles the window's
    update request, which paints every dirty region (canvas, operations list, results
    table, editor form) into the backing store, as the event loop does after an edit. A
    paint counter checks that the canvas and the tables were really repainted.

    The editor's derivation text is updated by an event queued below the repaint's priority
    (the event loop runs it right after that paint); the first timing stops when it is
    delivered, the second (edit to derivation painted) after one more turn of the event
    loop, which paints the text (each edit then starts from an idle window)."""
    from PySide6.QtCore import QObject
    from PySide6.QtWidgets import QApplication

    from workbench.ui.editors.operation_editor import _FLUSH_EVENT

    app, window = shown_window(big_session(n_ops))
    doc = window.document
    target = next(e for e in doc.session.operations if e.operation.kind == "gemm")
    window.workspace.selection.select(target.id)
    app.processEvents()
    watched = [window.canvas.plot_widget.viewport(), window.results_table.view.viewport(),
               window.operations_panel.view.viewport()]
    derivation = window.editor.derivation.viewport()

    class DerivationClock(QObject):
        """Notes when the derivation update is delivered, and whether the views had been
        painted by then."""

        at: float | None = None
        painted_before = False

        def eventFilter(self, obj, event):
            if event.type() == _FLUSH_EVENT and self.at is None:
                self.at = time.perf_counter()
                self.painted_before = all(counter.counts.get(w, 0) for w in watched)
            return False

    clock = DerivationClock()
    window.editor.installEventFilter(clock)  # the derivation update is sent to the editor
    counter: _PaintCounter

    def once(value: int) -> tuple[float, float]:
        nonlocal counter
        counter = _PaintCounter([*watched, derivation])
        clock.at = None
        t0 = time.perf_counter()
        doc.set_param(target.id, "m", value)
        QApplication.processEvents()
        QApplication.processEvents()  # the derivation's own repaint request
        end = time.perf_counter()
        painted = clock.at if clock.at is not None else end
        if not counter.painted() or (clock.at is not None and not clock.painted_before):
            raise RuntimeError(f"an edit did not repaint every view: {counter.counts}")
        counter.stop()
        return (painted - t0) * 1e3, (end - t0) * 1e3

    for v in range(5):  # warm-up
        once(100 + v)
    samples = [once(200 + 13 * i) for i in range(reps)]
    window.editor.removeEventFilter(clock)
    doc.mark_clean()
    window.close()
    window.deleteLater()
    app.processEvents()
    return stats([s[0] for s in samples]), stats([s[1] for s in samples])


def bench_model_edit(view: str, reps: int, config: str = "Llama-3.1-405B") -> dict[str, float]:
    """Edit the batch of a whole model (Llama-3.1-405B: 126 layers) on three machines, as
    the model editor does (one document edit that moves every operation of the model), and
    time until the chart, the operations list and the results table have repainted.
    ``view`` is ``layers`` (one point per operation of a layer kind) or ``all`` (every
    operation of every layer: 1,389 operations)."""
    from PySide6.QtWidgets import QApplication

    from workbench.io.model_configs import read_model_config
    from workbench.model.llm.architecture import Setup
    from workbench.model.llm.session import ModelEntry
    from workbench.model.session import Session
    app, window = shown_window(Session(title="model", hardware=big_session(0).hardware))
    doc = window.document
    model = ModelEntry(config, read_model_config(config), Setup("decode", 1, 2048, 2048),
                       view=view)
    window.add_model(model)
    window.results_dock.raise_()
    for _ in range(3):
        app.processEvents()
    watched = [window.canvas.plot_widget.viewport(), window.results_table.view.viewport()]

    def once(value: int) -> float:
        counter = _PaintCounter(watched)
        t0 = time.perf_counter()
        doc.set_model(model.id, batch=value)
        QApplication.processEvents()
        end = time.perf_counter()
        if not counter.painted():
            raise RuntimeError(f"a model edit did not repaint every view: {counter.counts}")
        counter.stop()
        return (end - t0) * 1e3

    for v in range(3):  # warm-up
        once(2 + v)
    samples = [once(8 + i) for i in range(reps)]
    _close(app, window)
    return stats(samples)


def bench_sweep_keystroke(reps: int) -> tuple[dict[str, float], dict[str, float]]:
    """A keystroke in the critical-batch example (a swept GEMM on two machines, its sweep
    plot shown): one dimension of the selected operation set as the editor sets it, then
    the event loop until every view has repainted. Returns the CPU time of this process
    (milliseconds: what it costs the machine, whatever else runs) and the wall time."""
    from PySide6.QtWidgets import QApplication

    from workbench.io.presets import examples_dir
    from workbench.io.sessions import load_session

    app, window = shown_window(load_session(examples_dir() / "critical_batch_sweep.yaml"))
    window.sweep_dock.raise_()
    doc = window.document
    target = doc.session.operations[0]
    assert target.sweep is not None
    window.workspace.selection.select(target.id)
    for _ in range(3):
        app.processEvents()

    def once(value: int) -> tuple[float, float]:
        cpu, wall = time.process_time(), time.perf_counter()
        doc.set_param(target.id, "n", value)
        QApplication.processEvents()
        QApplication.processEvents()  # (the editor's queued derivation and crossings)
        return (time.process_time() - cpu) * 1e3, (time.perf_counter() - wall) * 1e3

    for v in range(3):  # warm-up
        once(8000 + v)
    samples = [once(8100 + i) for i in range(reps)]
    _close(app, window)
    return stats([s[0] for s in samples]), stats([s[1] for s in samples])


def _close(app, window) -> None:
    """Close a benchmark's window, its edits discarded."""
    window.document.mark_clean()
    window.close()
    window.deleteLater()
    app.processEvents()


def bench_zoom_frame(reps: int) -> dict[str, float]:
    """A frame of a zoom: the built-in example's chart in the 1600 × 1000 window, its view
    scaled by a tenth about its middle (in, then out, as the mouse wheel does), timed until
    the chart has repainted. The axes draw their grid again at every frame; the texts are
    placed again a moment after the zoom ends (``layout_full_ms``), not at each frame."""
    from PySide6.QtWidgets import QApplication

    from workbench.io.presets import DEFAULT_EXAMPLE, examples_dir
    from workbench.io.sessions import load_session

    app, window = shown_window(load_session(examples_dir() / DEFAULT_EXAMPLE))
    box = window.canvas.view_box
    viewport = window.canvas.plot_widget.viewport()
    steps = [0]

    def once() -> float:
        steps[0] += 1
        scale = 0.9 if steps[0] % 2 else 1 / 0.9
        counter = _PaintCounter([viewport])
        t0 = time.perf_counter()
        box.scaleBy((scale, scale))
        QApplication.processEvents()
        end = time.perf_counter()
        if not counter.painted():
            raise RuntimeError("a zoom did not repaint the chart")
        counter.stop()
        return (end - t0) * 1e3

    for _ in range(4):  # warm-up
        once()
    samples = [once() for _ in range(reps)]
    _close(app, window)
    return stats(samples)


def bench_layout(n_ops: int, reps: int) -> tuple[dict[str, float], dict[str, float]]:
    """The chart's text layout on its own, in the window of the edit benchmark: a full
    placing of every text (what a zoom, a pan or a resize costs, a moment after it ends:
    timed after a small pan) and
    the re-placing after an edit of one operation (part of every edit-to-paint time)."""
    from PySide6.QtWidgets import QApplication

    app, window = shown_window(big_session(n_ops))
    canvas = window.canvas
    doc = window.document
    target = next(e for e in doc.session.operations if e.operation.kind == "gemm")
    window.workspace.selection.select(target.id)
    QApplication.processEvents()
    canvas.relayout()

    # each full placing after a pan of a hundredth of the view, one way then back (as after
    # a real pan: nothing the layout keeps for an unchanged view is reused)
    box = canvas.view_box
    (x0, x1), (y0, y1) = box.viewRange()
    pans = [0]

    def full() -> float:
        pans[0] += 1
        shift = 0.01 * (x1 - x0) * (pans[0] % 2)
        box.setRange(xRange=(x0 + shift, x1 + shift), yRange=(y0, y1), padding=0)
        t0 = time.perf_counter()
        canvas.relayout()
        return (time.perf_counter() - t0) * 1e3

    import numpy as np

    keys = canvas.points.keys_of(target.id)  # the moved points, as an edit moves them
    step = [0]

    def moved() -> float:
        step[0] += 1
        shift = 0.01 * (1 if step[0] % 2 else -1)
        rows = np.array([canvas.points.row_of(k) for k in keys], dtype=int)
        xy = canvas.points.xy[rows] + shift
        t0 = time.perf_counter()
        canvas.labels.relayout_moved(keys, rows, xy)
        return (time.perf_counter() - t0) * 1e3

    out = repeat(full, reps), repeat(moved, reps)
    doc.mark_clean()
    window.close()
    window.deleteLater()
    app.processEvents()
    return out


def bench_matplotlib(n_ops: int, reps: int) -> dict[str, float]:
    """The same scene redrawn by matplotlib's Agg canvas after the same change, the way
    roofline scripts do it (update the artists, then draw)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from workbench.model.analysis import evaluate_session

    session = big_session(n_ops)
    fig, ax = plt.subplots(figsize=(16, 10), dpi=100)
    ax.set_xscale("log")
    ax.set_yscale("log")
    import numpy as np

    xs = np.logspace(-2, 5, 2)
    for entry in session.hardware:
        hw = entry.hardware
        for level, bw in hw.memory.items():
            ax.plot(xs, np.minimum(bw * xs, max(hw.compute.values())), label=f"{hw.name} {level}")
        for peak in hw.compute.values():
            ax.axhline(peak, lw=0.8)
    pairs = evaluate_session(session)
    px = [p.result.intensity for p in pairs if p.result]
    py = [p.result.attainable_flops for p in pairs if p.result]
    scatter = ax.scatter(px, py, s=20)
    labels = [ax.annotate(p.operation.operation.name, (p.result.intensity,
                                                        p.result.attainable_flops), fontsize=7)
              for p in pairs if p.result]
    ax.legend(fontsize=7)
    ax.set_xlabel("Arithmetic intensity [FLOP/byte]")
    ax.set_ylabel("Attainable [FLOP/s]")
    fig.canvas.draw()
    target = next(e for e in session.operations if e.operation.kind == "gemm")
    from workbench.model.analysis import evaluate_pair

    def once(value: int) -> float:
        t0 = time.perf_counter()
        target.operation.params["m"] = value
        counts = target.operation.counts()
        for i, hw in enumerate(session.hardware):
            r = evaluate_pair(target, hw, counts).result
            index = session.operations.index(target) * len(session.hardware) + i
            px[index], py[index] = r.intensity, r.attainable_flops
            labels[index].xy = (r.intensity, r.attainable_flops)
        scatter.set_offsets(np.column_stack([px, py]))
        fig.canvas.draw()
        return (time.perf_counter() - t0) * 1e3

    once(50)
    samples = [once(300 + 7 * i) for i in range(reps)]
    plt.close(fig)
    return stats(samples)


def bench_sweep(reps: int, size: int) -> dict[str, float]:
    import numpy as np

    from workbench.io.presets import get_preset
    from workbench.model.operations import Operation
    from workbench.model.roofline import sweep_machines

    machines = [get_preset(p) for p in MACHINES]
    op = Operation("gemm", {"n": 8192, "k": 8192, "dtype": "bf16"})
    values = np.arange(1, size + 1)

    def once() -> float:
        t0 = time.perf_counter()
        sweep_machines(op, machines, m=values)
        return time.perf_counter() - t0

    once()
    return repeat(once, reps)


def bench_batch_sweep(reps: int) -> dict[str, float]:
    """Llama-3.1-405B decoding on 8 chips: throughput against latency over every batch that
    fits, on three machines; milliseconds per batch size."""
    from workbench.io.model_configs import read_model_config
    from workbench.io.presets import get_preset
    from workbench.model.llm.architecture import Setup
    from workbench.model.llm.results import batch_sweep

    arch = read_model_config("Llama-3.1-405B")
    setup = Setup(phase="decode", batch=1, prompt_len=2048, kv_len=2048, output_len=256,
                  tp=8, weights="fp8")
    machines = [get_preset(p) for p in ("h100-sxm", "h200", "mi300x")]

    def once() -> float:
        t0 = time.perf_counter()
        steps = sum(len(batch_sweep(arch, setup, hw)) for hw in machines)
        return 1e3 * (time.perf_counter() - t0) / steps

    return repeat(once, reps)


def _ncu_text(kernels: int, names: int) -> str:
    """An Nsight Compute raw export of ``kernels`` kernels sharing ``names`` names."""
    header = ('"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum",'
              '"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"\n'
              '"","","nsecond","byte","inst"\n')
    return header + "".join(f'"{i}","kernel_{i % names}","{1000 + i}","{1000 + i}000",'
                            f'"{1000 + i}000"\n' for i in range(kernels))


def bench_ncu_read(kernels: int, reps: int) -> dict[str, float]:
    """Read an Nsight Compute export of ``kernels`` kernels with 50 repeated names (each
    named by its ID): linear in the kernels, 41 s at 40,000 when each name was counted per
    kernel."""
    from workbench.io.measurements import parse_ncu_csv

    text = _ncu_text(kernels, 50)

    def once() -> float:
        t0 = time.perf_counter()
        parse_ncu_csv(text, "big.csv")
        return time.perf_counter() - t0

    return repeat(once, reps)


def measure_import(kernels: int, reps: int) -> dict[str, float]:
    """File ▸ Import Measurements… of ``kernels`` Nsight kernels into the real-kernels example
    (two machines), until the window has control again."""
    from PySide6.QtWidgets import QApplication

    from workbench.io.presets import examples_dir
    from workbench.io.sessions import load_session
    from workbench.ui.window.app import create_app
    from workbench.ui.window.main_window import MainWindow

    app = create_app()
    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    samples = []
    with tempfile.TemporaryDirectory(prefix="roofline-bench-") as folder:
        path = Path(folder) / "ncu.csv"
        path.write_text(_ncu_text(kernels, kernels), encoding="utf-8")
        for _ in range(reps):
            example = examples_dir() / "real_kernels_h100_h200.yaml"
            window.set_session(load_session(example), example)
            app.processEvents()
            t0 = time.perf_counter()
            window.import_measurements(path)
            QApplication.processEvents()
            samples.append(time.perf_counter() - t0)
    window.document.replace_session(window.document.session)  # (nothing to ask on close)
    window.close()
    return stats(samples)


def bench_open(n_ops: int, reps: int) -> dict[str, float]:
    """Open a saved session of ``n_ops`` operations in a shown main window, until the chart
    and the tables are painted (in a fresh process, see :func:`_in_child`)."""
    from workbench.io.sessions import save_session

    with tempfile.TemporaryDirectory(prefix="roofline-bench-") as folder:
        path = Path(folder) / "big.yaml"
        save_session(big_session(n_ops), path)
        return _in_child(f"measure_open({str(path)!r}, {reps})")


def measure_open(path: str, reps: int) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from workbench.ui.window.app import create_app
    from workbench.ui.window.main_window import MainWindow

    app = create_app()
    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    app.processEvents()

    def once() -> float:
        t0 = time.perf_counter()
        window.open_path(Path(path))
        QApplication.processEvents()
        for view in (window.canvas, window.operations_panel, window.results_table):
            view.repaint()
        return time.perf_counter() - t0

    samples = [once() for _ in range(reps)]
    window.close()
    return stats(samples)


def bench_export(reps: int) -> dict[str, dict[str, float]]:
    from workbench.ui.figures.export import render_figure
    from workbench.ui.window.app import create_app

    create_app()
    session = big_session(100)
    out = {}
    with tempfile.TemporaryDirectory(prefix="roofline-bench-") as folder:
        for fmt in ("png", "svg", "pdf", "html"):
            def once(fmt=fmt) -> float:
                t0 = time.perf_counter()
                render_figure(session, Path(folder) / f"fig.{fmt}", size="slide")
                return time.perf_counter() - t0

            once()
            out[fmt] = repeat(once, reps)
    return out


def bench_html(reps: int, n_ops: int) -> dict[str, dict[str, float]]:
    """The HTML figure of every example session (default size): the slowest example's export
    time (each after a first export, as in the app) and the largest file; and the file of a
    session of ``n_ops`` operations on three machines."""
    from workbench.io.sessions import load_session
    from workbench.ui.figures.export import render_figure
    from workbench.ui.window.app import create_app

    create_app()
    times: dict[str, list[float]] = {"html": [], "svg": []}
    sizes: list[float] = []
    with tempfile.TemporaryDirectory(prefix="roofline-bench-") as folder:
        for example in sorted((ROOT / "workbench" / "examples").glob("*.yaml")):
            session = load_session(example)
            for fmt, samples in times.items():
                target = Path(folder) / f"fig.{fmt}"

                def once(session=session, target=target) -> float:
                    t0 = time.perf_counter()
                    render_figure(session, target)
                    return time.perf_counter() - t0

                once()
                samples.append(repeat(once, reps)["median"])
            sizes.append((Path(folder) / "fig.html").stat().st_size / 1024)
        target = Path(folder) / "fig.html"
        render_figure(big_session(n_ops), target, size="slide")
        big_kb = target.stat().st_size / 1024
    # (the SVG of the same examples: the part of the time that is the figure itself)
    return {"html_export_s.examples": stats([max(times["html"])]),
            "svg_export_s.examples": stats([max(times["svg"])]),
            "html_kb.examples": stats([max(sizes)]), f"html_kb.{n_ops}": stats([big_kb])}


# -- subprocess measurements -----------------------------------------------------------------

_STARTUP_APP = r"""
import sys
sys.path.insert(0, {root!r})
from workbench.ui.window.launch import start
window = start()  # what `roofline-workbench` does before its event loop
from PySide6.QtWidgets import QApplication
QApplication.processEvents()
window.repaint()
print("painted", flush=True)
"""

_STARTUP_FLOOR = r"""
from PySide6.QtWidgets import QApplication, QMainWindow
import pyqtgraph as pg
app = QApplication([])
w = QMainWindow()
plot = pg.PlotWidget()
plot.getAxis("bottom").setLogMode(True)
plot.getAxis("left").setLogMode(True)
plot.plot([0, 1, 2], [0, 1, 1])
w.setCentralWidget(plot)
w.resize(1600, 1000)
w.show()
app.processEvents()
w.repaint()
print("painted", flush=True)
"""

_RSS = r"""
import os, sys
sys.path.insert(0, {root!r})
sys.argv = ["x"]
from benchmarks.run import big_session
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow
app = create_app()
w = MainWindow(); w.resize(1600, 1000)
w.set_session(big_session({n}), None); w.show(); app.processEvents(); w.repaint()
with open("/proc/self/statm") as f:
    print(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6)
"""


def _child_env(config: str) -> dict[str, str]:
    """Children run as an installed app does: offscreen, with byte-code caches (an
    environment that forbids writing them would time the compiler, not the app), and with
    the settings folder ``config``."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=config)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _compile_sources() -> None:
    import compileall

    compileall.compile_dir(str(ROOT / "workbench"), quiet=1, force=False)


def _run_child(code: str) -> tuple[float, str]:
    """Run ``code`` in a fresh interpreter. Returns the seconds from launch until it printed
    "painted" (or until it exited, for a child that never does) and its output. Start-up
    ends when the window is on screen: tearing the process down is not timed."""
    # Every child starts from the default window layout: its settings (saved dock layout,
    # recent files) go to a fresh folder, never to the user's, and the folder goes with it.
    # stderr goes to a file: a pipe nobody reads while stdout is read line by line would
    # stall a child that writes much to it
    with tempfile.TemporaryDirectory(prefix="roofline-bench-config-") as config, \
            tempfile.TemporaryFile("w+") as errors:
        env = _child_env(config)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                stderr=errors, text=True, env=env)
        lines = []
        elapsed = None
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if elapsed is None and line.strip() == "painted":
                elapsed = time.perf_counter() - t0
        proc.wait(timeout=300)
        if elapsed is None:
            elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            errors.seek(0)
            raise RuntimeError(errors.read()[-2000:])
    return elapsed, "".join(lines)


def bench_startup(reps: int) -> tuple[dict[str, float], dict[str, float]]:
    app, floor = [], []
    _run_child(_STARTUP_FLOOR)  # warm the file cache
    for _ in range(reps):
        floor.append(_run_child(_STARTUP_FLOOR)[0])
        app.append(_run_child(_STARTUP_APP.format(root=str(ROOT)))[0])
    return stats(app), stats(floor)


_CALL = r"""
import json, sys
sys.path.insert(0, {root!r})
sys.argv = ["run.py"]
from benchmarks import run
run._quiet_offscreen_warnings()
print(json.dumps(run.{call}))
"""


def _in_child(call: str):
    """Run ``call`` (a measurement of this module) in a fresh process and return its result:
    the app's timings are taken in a process like the app's, not in this one (which by then
    has imported matplotlib and built and closed other windows)."""
    _, out = _run_child(_CALL.format(root=str(ROOT), call=call))
    return json.loads(out.strip().splitlines()[-1])


def bench_rss(n_ops: int) -> dict[str, float]:
    _, out = _run_child(_RSS.format(root=str(ROOT), n=n_ops))
    return stats([float(out.strip().splitlines()[-1])])


def bench_soak(edits: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="roofline-bench-config-") as config:
        proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--edits",
                               str(edits)], capture_output=True, text=True,
                              env=_child_env(config), timeout=1200)
    if proc.returncode != 0:
        raise RuntimeError(f"soak exited with {proc.returncode}: {proc.stderr[-2000:]}")
    growth = float(proc.stdout.rsplit("(", 1)[1].split("%")[0])
    return stats([growth])


# -------------------------------------------------------------------------------------------


def _quiet_offscreen_warnings() -> None:
    """The offscreen platform warns on every dock layout that it cannot propagate size hints;
    that says nothing about the app, and it would bury the table."""
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_mode, _context, message: str) -> None:
        if "propagateSizeHints" not in message:
            sys.stderr.write(message + "\n")

    qInstallMessageHandler(handler)


def main() -> int:
    # This process too keeps its settings out of the user's folder, in one removed at the end.
    with tempfile.TemporaryDirectory(prefix="roofline-bench-config-") as config:
        os.environ["XDG_CONFIG_HOME"] = config
        return _main()


def _main() -> int:
    _quiet_offscreen_warnings()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke test: few, small runs")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    quick = args.quick
    reps = 3 if quick else 30
    sizes = (10, 100) if quick else (10, 100, 1000)
    results: dict[str, dict[str, float]] = {}
    started = time.perf_counter()

    _compile_sources()
    app_s, floor_s = bench_startup(2 if quick else 7)
    results["startup_s"], results["startup_floor_s"] = app_s, floor_s
    for n in sizes:
        results[f"edit_to_paint_ms.{n}"], results[f"edit_to_derivation_ms.{n}"] = (
            _in_child(f"bench_edit_to_paint({n}, {reps})"))
        results[f"layout_full_ms.{n}"], results[f"layout_edit_ms.{n}"] = (
            _in_child(f"bench_layout({n}, {reps})"))
        # matplotlib takes ~15 s a redraw at 1000 operations: fewer repetitions there
        results[f"matplotlib_redraw_ms.{n}"] = bench_matplotlib(n, 3 if quick or n >= 1000
                                                                else 10)
    for view in ("layers", "all"):
        results[f"model_edit_ms.{view}"] = _in_child(
            f"bench_model_edit({view!r}, {3 if quick else 20})")
    results["sweep_keystroke_cpu_ms"], results["sweep_keystroke_ms"] = _in_child(
        f"bench_sweep_keystroke({3 if quick else 20})")
    results["zoom_frame_ms"] = _in_child(f"bench_zoom_frame({4 if quick else 30})")
    results["sweep_eval_s_1e6"] = bench_sweep(3 if quick else 10, 10_000 if quick else 1_000_000)
    results["batch_sweep_ms_per_batch"] = bench_batch_sweep(1 if quick else 5)
    results["ncu_read_s_40000"] = bench_ncu_read(4000 if quick else 40_000, 2 if quick else 5)
    results["import_kernels_s_20000"] = _in_child(
        f"measure_import({2000 if quick else 20_000}, {1 if quick else 3})")
    results["open_session_s_1000"] = bench_open(100 if quick else 1000, 2 if quick else 5)
    for fmt, s in bench_export(2 if quick else 5).items():
        results[f"export_s.{fmt}"] = s
    results.update(bench_html(1 if quick else 5, 100 if quick else 1000))
    results["rss_mb_1000"] = bench_rss(100 if quick else 1000)
    results["soak_rss_growth"] = bench_soak(500 if quick else 10_000)

    total = time.perf_counter() - started
    print(f"Roofline Workbench benchmarks{' (quick: sizes reduced, times not judged)' if quick else ''}")
    print(f"{platform.node()} · {platform.platform()} · Python {platform.python_version()} · "
          f"{os.cpu_count()} cores · {time.strftime('%Y-%m-%d')}")
    print(f"{'key':28} {'median':>10} {'min':>10} {'max':>10}  target")
    for key, s in results.items():
        target = TARGETS.get(key, ("", None))[0]
        if key == "startup_s":
            ratio = s["median"] / results["startup_floor_s"]["median"]
            target = f"{target} (ratio {ratio:.2f})"
        if key.startswith("matplotlib_redraw_ms."):
            n = key.rsplit(".", 1)[1]
            ours = results.get(f"edit_to_paint_ms.{n}")
            if ours:
                target = f">= 10 x ours at 100 (ratio {s['median'] / ours['median']:.0f}x)"
        print(f"{key:28} {s['median']:10.4g} {s['min']:10.4g} {s['max']:10.4g}  {target}")
    print(f"total {total:.0f} s")
    if args.json:
        payload = {"date": time.strftime("%Y-%m-%d"), "machine": platform.platform(),
                   "python": platform.python_version(), "cores": os.cpu_count(),
                   "quick": quick, "results": results}
        Path(args.json).write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
