"""Editing a whole model: the set-up form (phase, batch, lengths, dtypes, tensor-parallel
degree, view) that edits a model of the session live, and the Add Model dialog that builds
one from a shipped config or a config.json file.

Every change goes through the document (:meth:`Document.set_model`), so it is undoable and a
spin-box drag is one undo step; the whole model's operations move at once.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change
from workbench.document.changes import What
from workbench.document.document import Document
from workbench.document.models import ModelTooLarge, model_room_problem
from workbench.io.errors import InputError
from workbench.io.model_configs import read_model_config, shipped_configs
from workbench.model.limits import text_problem
from workbench.model.llm.architecture import (
    ACTIVATION_DTYPES,
    ALL_REDUCE_ALGORITHMS,
    KV_DTYPES,
    MAX_DRAFT_TOKENS,
    PHASES,
    WEIGHT_DTYPES,
    Setup,
    SetupError,
    layer_steps,
)
from workbench.model.llm.session import ModelEntry
from workbench.ui.bridge import Workspace
from workbench.ui.widgets import document_undo_filter, escape_html

__all__ = ["SetupForm", "ModelEditor", "AddModelDialog", "VIEW_LABELS"]

#: The chart's two views of a model.
VIEW_LABELS = {"layers": "One point per layer kind (FLOPs and bytes summed over layers)",
               "all": "Every operation of every layer"}
MAX_LENGTH = 10_000_000


#: the set-up's numbers: typed, they merge into one undo step until the gesture ends
_NUMBERS = ("batch", "prompt_len", "kv_len", "tp", "output_len", "ep", "pp",
            "memory_utilization", "imbalance", "draft_tokens", "acceptance")


class SetupForm(QWidget):
    """The fields of a :class:`Setup` and the view; ``edited(field, value)`` on each change,
    ``finished()`` when a gesture ends (a spin box loses focus or Enter)."""

    edited = Signal(str, object)
    finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.phase = self._combo("phase", PHASES)
        self.batch = self._spin("batch", 1, 1_000_000, "Sequences in the batch")
        self.prompt_len = self._spin("prompt_len", 1, MAX_LENGTH,
                                     "Prompt length in tokens (the prefill)")
        self.kv_len = self._spin("kv_len", 1, MAX_LENGTH,
                                 "KV cache length at decode (positions attended to)")
        self.weights = self._combo("weights", WEIGHT_DTYPES)
        self.activations = self._combo("activations", ACTIVATION_DTYPES)
        self.kv_cache = self._combo("kv_cache", KV_DTYPES)
        self.tp = self._spin("tp", 1, 1024, "Tensor-parallel degree: chips sharing each layer "
                                            "(heads and FFN columns sharded)")
        self.ep = self._spin("ep", 1, 1024, "Expert parallelism (MoE): routed experts split "
                                            "over this many chips, all-to-all dispatch and "
                                            "combine")
        self.pp = self._spin("pp", 1, 1024, "Pipeline parallelism: layers split into this "
                                            "many stages, as many micro-batches in flight")
        # (made in the form's order: Tab follows the order fields are made in)
        self.output_len = self._spin("output_len", 0, MAX_LENGTH,
                                     "Output tokens of a whole request (0: none): TTFT, then "
                                     "one decode step per token with the KV cache growing "
                                     "from the prompt length")
        self.output_len.setSpecialValueText("none")
        # serving: the memory a server uses, the all-reduce, routing skew, speculation
        self.memory_utilization = self._number(
            "memory_utilization", 0.05, 1.0, 0.01, 2,
            "Memory utilisation: the fraction of each chip's capacity the server may use (as "
            "vLLM's gpu_memory_utilization); the machine's runtime reserve comes off it")
        self.all_reduce = self._combo("all_reduce", ALL_REDUCE_ALGORITHMS)
        self.all_reduce.setToolTip("Tensor-parallel all-reduce: ring (2·(t−1) steps), one_shot "
                                   "(1 step), tree (2·⌈log2 t⌉ steps); auto: one_shot up to "
                                   "1 MB per chip, ring above")
        self.imbalance = self._number(
            "imbalance", 1.0, 64.0, 0.1, 2,
            "Expert parallelism, skewed routing: the busiest chip gets this many times the "
            "pairs and experts hit of uniform routing (1: uniform)")
        self.draft_tokens = self._spin("draft_tokens", 0, MAX_DRAFT_TOKENS,
                                       "Speculative decoding: draft tokens verified per step "
                                       "(0: off); a step runs k + 1 positions per sequence")
        self.draft_tokens.setSpecialValueText("off")
        self.acceptance = self._number(
            "acceptance", 0.0, 0.999, 0.05, 3,
            "Speculative decoding: the chance each draft token is accepted; a step yields "
            "(1 − a^(k+1))/(1 − a) tokens")
        self.quantize = QCheckBox("in the weight dtype too", self)
        self.quantize.setObjectName("quantize_embeddings")
        self.quantize.setToolTip("Embedding table and lm_head in the weight dtype too (else "
                                 "weight-only quantisation keeps them in bf16)")
        self.quantize.toggled.connect(lambda v: self.edited.emit("quantize_embeddings", v))
        self.view = QComboBox(self)
        self.view.setObjectName("view")
        for key, label in VIEW_LABELS.items():
            self.view.addItem(label, key)
            self.view.setItemData(self.view.count() - 1, label, Qt.ItemDataRole.ToolTipRole)
        # the long choices must not make the form wider than a bottom dock's third
        self.view.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.view.setMinimumContentsLength(14)
        self.view.setToolTip("How the chart shows the model")
        self.view.currentIndexChanged.connect(
            lambda i: self.view.setToolTip(f"Chart: {self.view.itemText(i)}"))
        self.view.currentIndexChanged.connect(
            lambda _i: self.edited.emit("view", self.view.currentData()))
        form.addRow("Phase", self.phase)
        form.addRow("Batch", self.batch)
        form.addRow("Prompt length", self.prompt_len)
        form.addRow("KV length", self.kv_len)
        form.addRow("Weights", self.weights)
        form.addRow("Activations", self.activations)
        form.addRow("KV cache", self.kv_cache)
        form.addRow("Tensor parallel", self.tp)
        form.addRow("Expert parallel", self.ep)
        form.addRow("Pipeline stages", self.pp)
        form.addRow("Output tokens", self.output_len)
        form.addRow("Memory use", self.memory_utilization)
        form.addRow("All-reduce", self.all_reduce)
        form.addRow("Imbalance", self.imbalance)
        form.addRow("Draft tokens", self.draft_tokens)
        form.addRow("Acceptance", self.acceptance)
        form.addRow("Embeddings", self.quantize)
        form.addRow("Chart", self.view)
        self.phase.currentIndexChanged.connect(self._enable_lengths)
        self.draft_tokens.valueChanged.connect(self._enable_lengths)

    def _combo(self, name: str, choices) -> QComboBox:
        box = QComboBox(self)
        box.setObjectName(name)
        box.addItems(list(choices))
        box.currentTextChanged.connect(lambda text: self.edited.emit(name, text))
        return box

    def _spin(self, name: str, low: int, high: int, tip: str) -> QSpinBox:
        spin = QSpinBox(self)
        spin.setObjectName(name)
        spin.setRange(low, high)
        spin.setToolTip(tip)
        spin.setKeyboardTracking(True)
        spin.valueChanged.connect(lambda v: self.edited.emit(name, int(v)))
        spin.editingFinished.connect(self.finished.emit)
        return spin

    def _number(self, name: str, low: float, high: float, step: float, decimals: int,
                tip: str) -> QDoubleSpinBox:
        spin = QDoubleSpinBox(self)
        spin.setObjectName(name)
        spin.setDecimals(decimals)
        spin.setRange(low, high)
        spin.setSingleStep(step)
        spin.setToolTip(tip)
        spin.setKeyboardTracking(True)
        spin.valueChanged.connect(lambda v: self.edited.emit(name, float(v)))
        spin.editingFinished.connect(self.finished.emit)
        return spin

    def _enable_lengths(self, *_args) -> None:
        decode = self.phase.currentText() == "decode"
        self.kv_len.setEnabled(decode)
        self.acceptance.setEnabled(self.draft_tokens.value() > 0)

    def set_values(self, setup: Setup, view: str) -> None:
        """Show ``setup`` without emitting edits: each field that shows another value is set
        (a batch edit sets one field of eighteen)."""
        numbers = ((self.batch, setup.batch), (self.prompt_len, setup.prompt_len),
                   (self.kv_len, setup.kv_len), (self.tp, setup.tp),
                   (self.output_len, setup.output_len), (self.ep, setup.ep),
                   (self.pp, setup.pp), (self.memory_utilization, setup.memory_utilization),
                   (self.imbalance, setup.imbalance), (self.draft_tokens, setup.draft_tokens),
                   (self.acceptance, setup.acceptance))
        texts = ((self.phase, setup.phase), (self.weights, setup.weights),
                 (self.activations, setup.activations), (self.kv_cache, setup.kv_cache),
                 (self.all_reduce, setup.all_reduce))
        for spin, value in numbers:
            if spin.value() != value:
                with QSignalBlocker(spin):
                    spin.setValue(value)
        for box, text in texts:
            if box.currentText() != text:
                with QSignalBlocker(box):
                    box.setCurrentText(text)
        if self.quantize.isChecked() != setup.quantize_embeddings:
            with QSignalBlocker(self.quantize):
                self.quantize.setChecked(setup.quantize_embeddings)
        index = max(0, self.view.findData(view))
        if self.view.currentIndex() != index:
            with QSignalBlocker(self.view):
                self.view.setCurrentIndex(index)
        self._enable_lengths()

    def setup(self) -> Setup:
        return Setup(self.phase.currentText(), self.batch.value(), self.prompt_len.value(),
                     self.kv_len.value(), self.weights.currentText(),
                     self.activations.currentText(), self.kv_cache.currentText(),
                     self.tp.value(), self.quantize.isChecked(), self.output_len.value(),
                     self.ep.value(), self.pp.value(), imbalance=self.imbalance.value(),
                     memory_utilization=self.memory_utilization.value(),
                     all_reduce=self.all_reduce.currentText(),
                     draft_tokens=self.draft_tokens.value(),
                     acceptance=self.acceptance.value())


class ModelEditor(QWidget):
    """The form of one model of the session, edited live through the document."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ModelEditor")
        self.workspace = workspace
        self.document = workspace.document
        self.model_id: int | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        #: what the tab holds without a model (in place of the form)
        self.none = QLabel("No model selected: Edit ▸ Add Model… builds one from a "
                           "config.json.", self)
        self.none.setObjectName("modelNone")
        self.none.setWordWrap(True)
        #: the model's name, shape and size, below the form: the fields come first in the
        #: short bottom row of a laptop's screen
        self.title = QLabel(self)
        self.title.setObjectName("modelTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.form = SetupForm(self)
        # hidden without a model, the form keeps its room: the Model tab's column stays as
        # wide as its fields
        policy = self.form.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.form.setSizePolicy(policy)
        for spin in (*self.form.findChildren(QSpinBox), *self.form.findChildren(QDoubleSpinBox)):
            # Ctrl+Z: the document's last edit
            spin.installEventFilter(document_undo_filter())
        self.problem = QLabel(self)
        self.problem.setObjectName("modelProblem")
        self.problem.setStyleSheet("color: #D55E00")
        self.problem.setWordWrap(True)
        layout.addWidget(self.none)
        layout.addWidget(self.form)
        layout.addWidget(self.problem)
        layout.addWidget(self.title)
        layout.addStretch(1)
        #: the numbers applied while a field is typed in ("1", "10" of "100"), and the text
        #: refused, by field: a typed number applies whole or not at all
        self._typed: dict[str, list[tuple[str, object]]] = {}
        self._refused: dict[str, tuple[str, str]] = {}
        self.form.edited.connect(self._on_edit)
        self.form.finished.connect(self._on_finished)
        workspace.signals.changed.connect(self._on_change)
        self.show_model(None)

    def show_model(self, model_id: int | None) -> None:
        self.model_id = model_id
        self._typed.clear()
        self._refused.clear()
        model = self._model()
        self.form.setEnabled(model is not None)
        # without a model the form is hidden, not greyed: its fields would still read the
        # set-up of the model shown before (another session's)
        self.form.setVisible(model is not None)
        self.none.setVisible(model is None)
        self.title.setVisible(model is not None)
        if model is None:
            self.title.clear()
            return
        self._refresh(model)

    def _model(self) -> ModelEntry | None:
        return next((m for m in self.document.session.models if m.id == self.model_id), None)

    def _refresh(self, model: ModelEntry) -> None:
        arch = model.arch
        self.title.setText(f"<b>{escape_html(model.label)}</b><br>{escape_html(arch.summary())}<br>"
                           f"{arch.params / 1e9:.3g} B parameters, "
                           f"{arch.active_params / 1e9:.3g} B active per token; "
                           f"{len(model.op_ids)} operations on the chart")
        self.title.setToolTip(
            f"parameters: every weight tensor (both embedding tables when untied, norms "
            f"included) = {arch.params:,}\n"
            f"active per token: parameters − unselected routed experts − input embedding "
            f"table (one row of it is read) = {arch.active_params:,}\n"
            "operations: " + ("every operation of every layer" if model.view == "all"
                              else "one per layer kind, summed over its layers"))
        self.form.set_values(model.setup, model.view)
        self.problem.clear()

    def _on_edit(self, name: str, value) -> None:
        model = self._model()
        if model is None:
            return
        before = getattr(model.setup, name, None)
        try:
            self.document.set_model(self.model_id, **{name: value})
        except ModelTooLarge as exc:  # the form shows the model as it stays
            model = self._model()
            self.form.set_values(model.setup, model.view)
            self.problem.setText(str(exc))
            return
        except (SetupError, ValueError) as exc:
            self.problem.setText(str(exc))
            if name in _NUMBERS:
                self._refused[name] = (getattr(self.form, name).cleanText(), str(exc))
            return
        self.problem.clear()
        if name in _NUMBERS:
            self._refused.pop(name, None)
            if name not in self._typed:  # (the value from before the gesture first)
                self._typed[name] = [("", before)]
            self._typed[name].append((getattr(self.form, name).cleanText(), value))
        else:
            self.document.seal()  # a choice is one step; a number merges while typed

    def _on_finished(self) -> None:
        """End of a typed number (Return, focus out): one undo step. A number refused at the
        end is not half applied: what the typing applied on the way ("10" of "100" stages)
        is taken back, and the field shows the value the model keeps."""
        typed, refused = self._typed, self._refused
        self._typed, self._refused = {}, {}
        model = self._model()
        if model is not None and refused:
            notes = []
            for name, (text, message) in refused.items():
                # the value from before the gesture, then the last one typed that is not a
                # beginning of the refused text
                keep = [value for shown, value in typed.get(name, [])
                        if not (shown and text.startswith(shown))]
                if len(keep) > 1 or (keep and not self.document.abandon_model_edit(model.id,
                                                                                  name)):
                    self.document.set_model(model.id, **{name: keep[-1]})
                notes.append(f"{message} — kept {name} = "
                             f"{getattr(self._model().setup, name):g}.")
            model = self._model()
            self.form.set_values(model.setup, model.view)
            self.problem.setText("\n".join(notes))
        self.document.seal()

    def _on_change(self, change: Change) -> None:
        if self.model_id is None:
            return
        if change.what == What.OPERATION:
            model = self._model()
            if model is not None and change.ids and change.ids[0] in model.op_ids:
                self._refresh(model)
        elif change.what in (What.OPERATIONS, What.SESSION):
            model = self._model()
            if model is None:
                self.show_model(None)
            else:
                self._refresh(model)


class AddModelDialog(QDialog):
    """Edit ▸ Add Model…: a shipped config or a config.json file, and its set-up."""

    def __init__(self, parent: QWidget | None = None, document: Document | None = None
                 ) -> None:
        super().__init__(parent)
        self.document = document  # (the session the model joins: its room is checked)
        self.setObjectName("AddModelDialog")
        self.setWindowTitle("Add Model")
        self._path: str | None = None
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.config = QComboBox(self)
        self.config.setObjectName("config")
        for name in shipped_configs():
            self.config.addItem(name, name)
        self.browse = QPushButton("config.json File…", self)
        self.browse.setObjectName("browse")
        self.browse.clicked.connect(self._on_browse)
        row.addWidget(QLabel("Model", self))
        row.addWidget(self.config, 1)
        row.addWidget(self.browse)
        layout.addLayout(row)
        self.summary = QLabel(self)
        self.summary.setObjectName("summary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.form = SetupForm(self)
        self.form.set_values(Setup("decode", 1, 2048, 2048), "layers")
        # the dialog has room for the Chart field's whole text (the Model tab keeps it short)
        self.form.view.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        layout.addWidget(self.form)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.buttons.accepted.connect(self._on_accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.config.currentIndexChanged.connect(self._update_summary)
        self.entry: ModelEntry | None = None
        index = self.config.findData("Llama-3.1-8B")
        if index >= 0:
            self.config.setCurrentIndex(index)
        self._update_summary()

    def choose_file(self, path: str) -> bool:
        """Use a config.json file (what the File… button does after its dialog)."""
        path = os.path.abspath(path)  # (a session file names it relative to its folder)
        problem = text_problem(path, "path")  # (the session file names it: it must reopen)
        if problem is not None:
            self.summary.setText(f"{path}: the path {problem}")
            return False
        try:
            arch = read_model_config(path)
        except InputError as exc:
            self.summary.setText(str(exc))
            return False
        self.config.addItem(f"{arch.name} ({path})", path)
        self.config.setCurrentIndex(self.config.count() - 1)
        return True

    def _on_browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Model config", "",
                                              "Model configs (*.json);;All files (*)")
        if path:
            self.choose_file(path)

    def _update_summary(self, *_args) -> None:
        ref = self.config.currentData()
        if ref is None:
            return
        try:
            arch = read_model_config(ref)
        except InputError as exc:
            self.summary.setText(str(exc))
            return
        self.summary.setText(f"{arch.summary()}; {arch.params / 1e9:.3g} B parameters"
                             + (f"\n{arch.source}" if arch.source else ""))

    def _on_accept(self) -> None:
        ref = self.config.currentData()
        try:
            arch = read_model_config(ref)
            setup = self.form.setup()
            if setup.phase == "prefill":
                setup = setup.with_(kv_len=setup.prompt_len)
            layer_steps(arch, setup)  # (refuses a set-up the model cannot take, by name)
        except (InputError, SetupError) as exc:
            self.summary.setText(str(exc))
            return
        entry = ModelEntry(ref, arch, setup, view=self.form.view.currentData())
        problem = model_room_problem(self.document, entry) if self.document else None
        if problem:
            self.summary.setText(problem)
            return
        self.entry = entry
        self.accept()
