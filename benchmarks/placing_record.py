"""Record where every text of the live chart is placed, to compare two versions of the code
that should place them the same.

For every example session, the benchmark's sessions of 10, 100 and 1,000 operations and a
whole model (Llama-3.1-405B, layers and every operation) at 1600 × 1000 and 1024 × 700: each
placed text's item position, box and leader, every name and tag item, the crowds and the
legend, at the start, after three edits that move points (a dimension; the model's batch),
two undos and a full placing. Run it in each tree and compare the two files::

    QT_QPA_PLATFORM=offscreen PYTHONPATH=. python benchmarks/placing_record.py a.json
    (in the other tree, to b.json), then
    python -c "import json; print(json.load(open('a.json')) == json.load(open('b.json')))"

``ONLY=<example stem>`` records that example alone; any second argument: the sessions of
10 and 100 operations only.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run  # (the benchmarks' sessions)

SIZES = ((1600, 1000), (1024, 700))


def record(window) -> dict:
    """Every placed text, name and tag of the window's chart, the crowds and the legend."""
    canvas = window.canvas
    labels = canvas.labels
    layout = labels.text_layout
    placed = {}
    for key, (label, _request) in labels._label_of.items():
        p = layout.placed.get(key) if layout is not None else None
        # (a crossing's key holds an item's id: the same text, another number each run)
        name = repr(key[0]) + (repr(key[1]) if key[0] != "crossing" else "")
        # (a hidden text's position is none: it is set again whenever the text is shown)
        shown = label.isVisible()
        placed[name] = [
            shown, label.toPlainText(), (label.pos().x(), label.pos().y()) if shown else None,
            None if p is None else [[float(v) for v in p.rect],
                                    None if p.leader is None else [float(v) for v in p.leader]]]
    items = sorted((op, item.toPlainText(), item.isVisible(),
                    *((item.pos().x(), item.pos().y()) if item.isVisible() else ()))
                   for op, item in labels.point_labels.items())
    legend = canvas.legend
    return {"placed": placed, "labels": items, "tags": sorted(canvas.key.tags.items()),
            "groups": sorted((k, list(v)) for k, v in canvas.key._groups.items()),
            "legend": [str(legend.choice), str(legend.outside),
                       [legend.item.pos().x(), legend.item.pos().y()],
                       [str(row[0]) for row in legend.item.rows]],
            "frame": list(labels._frame())}


def spin(app) -> None:
    """The event loop, and a queued placing (40 ms on) run the same way in every run."""
    for _ in range(4):
        app.processEvents()
    time.sleep(0.06)
    for _ in range(3):
        app.processEvents()


def first_dimension(doc):
    """An operation's whole-number dimension to edit: ``(op_id, name, value)``."""
    for entry in doc.session.operations:
        for name, value in entry.operation.params.items():
            if (isinstance(value, int) and not isinstance(value, bool) and value > 1
                    and name not in ("heads", "kv_heads")):
                return entry.id, name, value
    return None


def scenario(name: str, session, size, results: dict, model=None) -> None:
    from workbench.ui.window.app import create_app
    from workbench.ui.window.main_window import MainWindow

    app = create_app()
    window = MainWindow()
    window.resize(*size)
    window.set_session(session, None)
    window.show()
    spin(app)
    doc = window.document
    if model is not None:
        window.add_model(model)
        spin(app)
    tag = f"{name}@{size[0]}x{size[1]}"
    window.canvas.relayout()
    spin(app)
    results[tag + ":start"] = record(window)
    if model is not None:
        for batch in (4, 9, 17):
            doc.set_model(model.id, batch=batch)
            spin(app)
            results[tag + f":batch{batch}"] = record(window)
    else:
        edit = first_dimension(doc)
        if edit:
            op_id, param, value = edit
            for step, new in (("x2", value * 2), ("d3", max(1, value // 3)), ("x7", value * 7)):
                doc.set_param(op_id, param, new)
                spin(app)
                results[tag + f":{step}"] = record(window)
    for step in ("undo", "undo2"):
        doc.undo()
        spin(app)
        results[tag + ":" + step] = record(window)
    window.canvas.relayout()
    spin(app)
    results[tag + ":relayout"] = record(window)
    doc.mark_clean()
    window.close()
    window.deleteLater()
    app.processEvents()


def main() -> None:
    from workbench.io.model_configs import read_model_config
    from workbench.io.presets import examples_dir
    from workbench.io.sessions import load_session
    from workbench.model.llm.architecture import Setup
    from workbench.model.llm.session import ModelEntry
    from workbench.model.session import Session

    out, quick, only = sys.argv[1], len(sys.argv) > 2, os.environ.get("ONLY")
    # every window starts from the default layout: the settings (the docks' sizes, saved
    # when a window closes) go to a fresh folder, not the user's, where the last run of the
    # app or of this script left the plot another size
    config = os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="roofline-placing-config-")
    results: dict = {}
    for size in SIZES:
        for path in sorted(examples_dir().glob((only or "*") + ".yaml")):
            scenario(path.stem, load_session(path), size, results)
        if only:
            continue
        for n in ((10, 100) if quick else (10, 100, 1000)):
            scenario(f"big{n}", run.big_session(n), size, results)
        for view in ("layers", "all"):
            model = ModelEntry("Llama-3.1-405B", read_model_config("Llama-3.1-405B"),
                               Setup("decode", 1, 2048, 2048), view=view)
            machines = Session(title="model", hardware=run.big_session(0).hardware)
            scenario(f"model-{view}", machines, size, results, model)
    shutil.rmtree(config, ignore_errors=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=0, sort_keys=True)
    print(len(results), "records")


if __name__ == "__main__":
    main()
