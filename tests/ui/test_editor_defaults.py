"""The editor shows the value the engine uses, for every field a session leaves out.

For each of the 11 kinds a session gives only the required dimensions; every other field of
the form must show the value the counting takes (checked against the derivation and the
results, not against the form), marked as a default; picking or typing another value must
change the numbers."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit

from tests.conftest import open_editor
from workbench.document import Document
from workbench.io.sessions import loads_session
from workbench.model.dtypes import PRECISIONS
from workbench.model.operations import KINDS
from workbench.ui.bridge import Workspace
from workbench.ui.editors.operation_editor import OperationEditor
from workbench.ui.widgets import BigSpinBox

#: A machine with a different peak for every precision on both units, and a link.
_PEAKS = {name: f"{10 + i} TFLOP/s" for i, name in enumerate(PRECISIONS)}
_VECTOR = {name: f"{1 + i / 10:g} TFLOP/s" for i, name in enumerate(PRECISIONS)}
MACHINE = {"name": "Every precision", "compute": _PEAKS, "vector_compute": _VECTOR,
           "memory": {"hbm": "1 TB/s"}, "interconnect": {"link": "100 GB/s"}}

#: Each kind with its required dimensions only; and naive attention, whose score fields show
#: only for the naive implementation (a naive kernel computes every score, causal or not:
#: that field is tried on Flash).
OPERATIONS = {
    "gemm": {"kind": "gemm", "m": 64, "n": 4096, "k": 4096},
    "attention": {"kind": "attention", "heads": 32, "head_dim": 128, "query_len": 1,
                  "kv_len": 4096},
    "naive attention": {"kind": "attention", "implementation": "naive", "heads": 32,
                        "head_dim": 128, "query_len": 1, "kv_len": 4096, "causal": False},
    "elementwise": {"kind": "elementwise", "n": 1024, "steps": [{"op": "fma"}, {"op": "gelu"}]},
    "norm": {"kind": "norm", "rows": 8, "hidden": 4096},
    "softmax": {"kind": "softmax", "rows": 8, "cols": 4096},
    "reduction": {"kind": "reduction", "n": 1024},
    "custom": {"kind": "custom", "flops": "1 TFLOP", "bytes": "1 GB"},
    "sharded_matmul": {"kind": "sharded_matmul", "b": 256, "d": 8192, "f": 8192, "chips": 4},
    "moe_gemm": {"kind": "moe_gemm", "tokens": 16, "experts": 8, "top_k": 2, "n": 14336,
                 "k": 4096},
    "moe_gemm, expert parallel": {"kind": "moe_gemm", "tokens": 16, "experts": 8, "top_k": 2,
                                  "n": 14336, "k": 4096, "local_experts": 4},
    "moe_gemm, grouped routing": {"kind": "moe_gemm", "tokens": 16, "experts": 8, "top_k": 2,
                                  "n": 14336, "k": 4096, "local_experts": 4, "groups": 4},
    "mla_attention": {"kind": "mla_attention", "heads": 128, "kv_lora_rank": 512,
                      "rope_dim": 64, "query_len": 1, "kv_len": 4096},
    "all_reduce": {"kind": "all_reduce", "hidden": 8192, "chips": 8},
}

#: What to type into a whole-number field instead of its default.
_TYPED = {"kv_heads": "16", "score_passes": "2", "local_experts": "4", "topk_groups": "2"}


def test_every_kind_is_covered():
    assert {op["kind"] for op in OPERATIONS.values()} == set(KINDS)
    assert len(KINDS) == 11


def _open(qtbot, operation: dict):
    import yaml

    text = yaml.safe_dump({"schema_version": 2, "hardware": [MACHINE],
                           "operations": [{"name": "op", **operation}]}, sort_keys=False)
    return open_editor(qtbot, loads_session(text, "defaults.yaml"))


def _shown(editor: OperationEditor, name: str):
    """The value a field shows, read from its text as the user sees it."""
    widget = editor.field(name)
    if isinstance(widget, QComboBox):
        text = widget.currentText()
        follows = re.fullmatch(r"automatic \((\w+)\)", text)
        return follows.group(1) if follows else text.split()[0]
    if isinstance(widget, BigSpinBox):
        return int(widget.lineEdit().text())
    if isinstance(widget, QCheckBox):
        return widget.isChecked()
    if isinstance(widget, QLineEdit):  # a decimal number, or a tensor's name
        try:
            return float(widget.text())
        except ValueError:
            return widget.text()
    raise AssertionError((name, widget))


def _numbers(workspace: Workspace, document: Document, op_id: int) -> tuple:
    hw_id = document.session.hardware[0].id
    result = workspace.results.pair(op_id, hw_id).result
    return (result.flops, result.bytes, result.peak_flops, result.t_lower_s)


def _pick_other(editor: OperationEditor, qtbot, name: str, shown) -> None:
    """Choose another value than ``shown`` the way a user does."""
    widget = editor.field(name)
    if isinstance(widget, QComboBox):
        wanted = "fp64" if shown != "fp64" and widget.findData("fp64") >= 0 else None
        if wanted is None:  # a choice: the last entry that is not the one shown
            wanted = [widget.itemData(i) for i in range(widget.count())
                      if widget.itemData(i) not in (None, shown)][-1]
        widget.setCurrentIndex(widget.findData(wanted))
    elif isinstance(widget, BigSpinBox):
        widget.lineEdit().selectAll()
        qtbot.keyClicks(widget, _TYPED.get(name, str(shown * 2)))
    elif isinstance(widget, QCheckBox):
        widget.click()
    elif isinstance(widget, QLineEdit):
        widget.selectAll()
        qtbot.keyClicks(widget, str(2 * shown) if isinstance(shown, float) else "other")
        qtbot.keyClick(widget, Qt.Key.Key_Return)
    else:
        raise AssertionError((name, widget))


#: Parameters that change nothing until others are given (the routing imbalance and the
#: expert groups: only an expert-parallel chip has a busiest chip to load; the groups picked
#: per token limit nothing until the experts form groups).
_NEEDS = {"imbalance": ("local_experts",), "groups": ("local_experts", "topk_groups"),
          "topk_groups": ("local_experts", "groups")}


def _defaulted(operation: dict) -> list[str]:
    out = []
    for p in KINDS[operation["kind"]].params:
        if p.required or p.name in operation:
            continue
        if p.only_if is not None and operation.get(p.only_if[0]) != p.only_if[1]:
            continue
        if not set(_NEEDS.get(p.name, ())) <= operation.keys():
            continue
        out.append(p.name)
    return out


CASES = [(label, name) for label, operation in OPERATIONS.items()
         for name in _defaulted(operation)]


@pytest.mark.parametrize("label, name", CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_a_field_left_out_shows_the_engines_value_and_another_changes_the_numbers(
        qtbot, label, name):
    operation = OPERATIONS[label]
    document, workspace, editor, op_id = _open(qtbot, operation)
    assert name not in document.operation(op_id).operation.params
    param = KINDS[operation["kind"]].param(name)
    shown = _shown(editor, name)
    derivation = editor.derivation_text()
    counts = workspace.results.counts(op_id)

    # what the engine uses, read from what it reports
    if param.type == "dtype":
        assert f"[{shown}]" in derivation, (name, shown)
        if name == "dtype":  # the element type the kind documents (bf16, or fp32 for vectors)
            assert shown == param.default
    elif param.type == "precision":
        assert counts.precision == shown, (name, shown, counts.precision)
    elif param.type == "str":
        assert f"{shown} " in derivation.replace("(", " ").replace(")", " ")
    elif param.inherit:  # kv_heads: the value of heads, as given in the file
        assert shown == operation[param.inherit], (name, shown)
    else:  # the default the kind documents, which the terms were counted with
        assert shown == param.default, (name, shown)
    if param.default is not None and not param.inherit:  # marked as the default
        label_widget = editor.findChild(QLabel, f"label_{name}")
        assert "(default)" in label_widget.text(), label_widget.text()
        combo = editor.field(name)
        if isinstance(combo, QComboBox):
            assert combo.currentText().endswith("— default"), combo.currentText()
    else:  # following another field, which the field says
        widget = editor.field(name)
        if isinstance(widget, QComboBox):
            assert re.fullmatch(r"\w+ = .+|automatic \(\w+\)", widget.currentText())
        else:
            assert editor.findChild(QCheckBox, f"same_{name}").isChecked()

    before = _numbers(workspace, document, op_id)
    _pick_other(editor, qtbot, name, shown)
    after_params = document.operation(op_id).operation.params
    assert after_params.get(name) is not None and after_params[name] != shown
    assert _shown(editor, name) == after_params[name]
    if param.type == "str":  # a tensor's name: no number changes, its terms are renamed
        assert editor.derivation_text() != derivation
    else:
        assert _numbers(workspace, document, op_id) != before, (name, after_params[name])
    if param.default is not None and not param.inherit:
        assert "(default)" not in editor.findChild(QLabel, f"label_{name}").text()


def test_fp64_picked_over_a_bf16_default_changes_the_bytes(qtbot):
    document, workspace, editor, op_id = _open(qtbot, OPERATIONS["norm"])
    dtype = editor.field("dtype")
    assert dtype.currentText() == "bf16  (2 B) — default"
    variant = editor.field("variant")
    assert variant.currentText() == "rmsnorm — default"
    bytes_before = _numbers(workspace, document, op_id)[1]
    dtype.setCurrentIndex(dtype.findData("fp64"))
    assert document.operation(op_id).operation.params["dtype"] == "fp64"
    assert dtype.currentText() == "fp64  (8 B)"
    # x, γ and y: every byte term four times larger
    assert _numbers(workspace, document, op_id)[1] == 4 * bytes_before
    variant.setCurrentIndex(variant.findData("layernorm"))
    assert "layernorm" in editor.derivation_text()
    document.undo()
    document.undo()  # back to nothing given: the defaults are shown again
    assert "dtype" not in document.operation(op_id).operation.params
    assert dtype.currentText() == "bf16  (2 B) — default"
    assert variant.currentText() == "rmsnorm — default"
    assert "(default)" in editor.findChild(QLabel, "label_dtype").text()


def test_an_older_file_marks_an_assumed_dimension(qtbot):
    text = ("schema_version: 1\nhardware: [{preset: h100-sxm}]\n"
            "operations:\n  - {name: g, kind: gemm, m: 64, n: 4096}\n")
    document = Document(loads_session(text, "old.yaml"))
    workspace = Workspace(document)
    editor = OperationEditor(workspace)
    qtbot.addWidget(editor)
    editor.show()
    workspace.selection.select(document.session.operations[0].id)
    assert editor.field("k").lineEdit().text() == "4096"
    assert "(assumed)" in editor.findChild(QLabel, "label_k").text()
    assert "(default)" not in editor.findChild(QLabel, "label_m").text()
    assert "2·1·64·4096·4096" in editor.derivation_text()
