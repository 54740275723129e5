"""The Hardware panel shows each machine's figures whole and as the presets write them: at
a laptop's 1366 × 768 the values' column was cut ("67 TFL…") and a capacity of 24 GiB read
"25.769803776 GB"."""

from __future__ import annotations

from conftest import EXAMPLES
from PySide6.QtWidgets import QLineEdit

LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")
#: as hardware_presets/h100-sxm.yaml, mi300x.yaml and rtx-4090.yaml write them
CAPACITY = {"NVIDIA H100 SXM5 80GB": "81559 MiB", "AMD Instinct MI300X 192GB": "192 GiB",
            "NVIDIA GeForce RTX 4090": "24 GiB"}


def test_every_machines_values_are_shown_whole(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 768))
    win.hardware_dock.raise_()
    panel = win.hardware_panel
    qtbot.waitUntil(panel.isVisible)
    for entry in win.document.session.hardware:
        panel.select_machine(entry.id)
        qtbot.wait(20)
        edits = [e for e in panel.findChildren(QLineEdit) if e.isVisible() and e.text()]
        values = [e for e in edits if e.objectName().startswith("value_")]
        assert len(values) >= 3, entry.hardware.label
        for edit in edits:
            # the text within the field (a line edit keeps 2 pixels each side)
            room = edit.contentsRect().width() - 4
            assert edit.fontMetrics().horizontalAdvance(edit.text()) <= room, (
                entry.hardware.label, edit.objectName(), edit.text(), room)
        capacity = next(e for e in edits if e.objectName() == "capacity")
        assert capacity.text() == CAPACITY[entry.hardware.label]
