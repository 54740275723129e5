"""The tagged operations the legend has no room to list (a whole model's key of hundreds
of rows) follow the legend as it is: the window resized, the model edited, the edit undone.
Their tags are not drawn."""

from __future__ import annotations

from workbench.io.model_configs import read_model_config
from workbench.model.llm.architecture import Setup
from workbench.model.llm.session import ModelEntry


def _left_out(canvas) -> set:
    """The operations of the key's last rows, as many as the legend dropped."""
    dropped = canvas.legend.item.dropped
    rows = [r for r in canvas.key.rows if not r.heading]
    return {i for r in rows[len(rows) - dropped:] for i in r.ids} if dropped else set()


def test_operations_left_out_of_the_key_follow_the_legend(qtbot, gpu_window):
    win = gpu_window
    win.resize(1200, 800)
    qtbot.waitExposed(win)
    model = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup("decode", 1, 4096, 4096), view="all")
    win.add_model(model)
    (model,) = win.document.session.models
    canvas = win.canvas
    seen = []

    def check() -> None:
        qtbot.wait(10)
        canvas.labels.place_all()
        left_out = _left_out(canvas)
        assert canvas.key.unlisted() == left_out
        labels = canvas.labels.point_labels
        assert left_out and not any(labels[op].isVisible() for op in left_out if op in labels)
        seen.append(left_out)

    check()
    for size in ((1600, 1000), (1000, 600)):
        win.resize(*size)
        qtbot.waitUntil(lambda: not canvas.labels.pending)
        check()
    assert seen[0] != seen[1] != seen[2]  # (another size, other rows dropped)
    win.document.set_model(model.id, batch=64)
    check()
    win.undo_action.trigger()
    check()
