"""The results table, driven through its real widgets."""

from __future__ import annotations

import csv
import io

import pytest
from conftest import paint_regions
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication
from results_tables import EXAMPLES, SORTING_SESSION, make_table, workspace_from

from workbench.model.roofline import FORMULAS
from workbench.model.units import format_number, format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.panels.results_table import COLUMN_INDEX, COLUMNS, SORT_ROLE, ResultsTable

COL = COLUMN_INDEX


@pytest.fixture
def workspace() -> Workspace:
    return workspace_from("llama_ffn.yaml")


@pytest.fixture
def table(qtbot, workspace) -> ResultsTable:
    return make_table(qtbot, workspace)


def shown(table: ResultsTable, col: int, role=Qt.ItemDataRole.DisplayRole) -> list:
    proxy = table.view.model()
    return [proxy.data(proxy.index(r, col), role) for r in range(proxy.rowCount())]


def source_text(table: ResultsTable, row: int, col: int, role=Qt.ItemDataRole.DisplayRole):
    return table.model.data(table.model.index(row, col), role)


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_one_row_per_operation_and_machine(qtbot, example):
    workspace = workspace_from(example)
    table = make_table(qtbot, workspace)
    session = workspace.document.session
    assert table.view.model().rowCount() == len(session.operations) * len(session.hardware)
    pairs = workspace.results.pairs()
    assert shown(table, COL["operation"]) == [p.operation.operation.name for p in pairs]
    assert shown(table, COL["machine"]) == [p.hardware.hardware.label for p in pairs]


def test_cells_are_formatted_with_si_prefixes(table, workspace):
    pair = workspace.results.pairs()[0]
    r = pair.result
    assert source_text(table, 0, COL["flops"]) == format_quantity(r.flops, "flops")
    assert source_text(table, 0, COL["bytes"]) == format_quantity(r.bytes, "bytes")
    assert source_text(table, 0, COL["intensity"]) == format_number(r.intensity) == "3584"
    assert source_text(table, 0, COL["ceiling"]) == format_quantity(r.peak_flops, "flop_rate")
    assert source_text(table, 0, COL["t_lower"]) == format_quantity(r.t_lower_s, "time")
    assert source_text(table, 0, COL["bound"]) == r.bound
    assert source_text(table, 0, COL["precision"]) == r.precision_used
    alignment = Qt.AlignmentFlag(source_text(table, 0, COL["flops"],
                                             Qt.ItemDataRole.TextAlignmentRole))
    assert alignment & Qt.AlignmentFlag.AlignRight
    colour = source_text(table, 0, COL["bound"], Qt.ItemDataRole.ForegroundRole)
    assert isinstance(colour, QColor)


def test_header_tooltips_give_the_formulas(table):
    model = table.view.model()
    tip = Qt.ItemDataRole.ToolTipRole
    horizontal = Qt.Orientation.Horizontal
    assert model.headerData(COL["intensity"], horizontal, tip) == FORMULAS["intensity"]
    assert model.headerData(COL["ridge"], horizontal, tip) == FORMULAS["ridge"]
    assert model.headerData(COL["attainable"], horizontal, tip) == FORMULAS["attainable"]
    for key in ("t_math", "t_mem", "t_lower", "t_upper"):
        assert model.headerData(COL[key], horizontal, tip) == FORMULAS[key]
    for key in ("t_predicted", "t_predicted_calibrated"):  # the derated and calibrated ones
        assert FORMULAS[key] in model.headerData(COL["t_predicted"], horizontal, tip)
    assert FORMULAS["bound"] in model.headerData(COL["bound"], horizontal, tip)
    assert all(model.headerData(i, horizontal, tip) for i in range(len(COLUMNS)))


#: The columns whose cell is the result of a formula: its tooltip ends with the number shown.
_COMPUTED = ("intensity", "ridge", "attainable", "fraction_of_peak", "t_math", "t_mem",
             "t_lower", "t_upper", "t_predicted", "t_work", "t_fixed")


@pytest.mark.parametrize("prediction", ["calibrated", "derated"])
def test_each_number_says_how_it_is_computed_with_its_own_values(table, workspace,
                                                                 prediction):
    """Hovering a number gives its formula with the row's values: the cells had no tooltip
    (the header's formula only), and the header's T_predicted was the derated one while the
    cells showed the calibrated prediction, 5.06 ms where T_lower / efficiency gave 3.89 ms."""
    workspace.document.set_prediction(model=prediction)
    tip = Qt.ItemDataRole.ToolTipRole
    for key in ("flops", "bytes", "ridge", "attainable", "bound", "t_math", "t_predicted"):
        assert source_text(table, 0, COL[key], tip), key
    for key in _COMPUTED:
        text = source_text(table, 0, COL[key])
        if text == "—":
            assert prediction == "derated" and key in ("t_work", "t_fixed")
            continue
        formula = source_text(table, 0, COL[key], tip).split(" (calibrated")[0]
        assert formula.endswith((f"= {text}", f"= {text} FLOP/B")), (key, text, formula)
    flops, peak = (source_text(table, 0, COL[k]) for k in ("flops", "ceiling"))
    assert f"{flops} / {peak}" in source_text(table, 0, COL["t_math"], tip)
    predicted = source_text(table, 0, COL["t_predicted"], tip)
    raw = {k: source_text(table, 0, COL[k], SORT_ROLE) for k in ("t_predicted", "t_lower")}
    if prediction == "calibrated":  # 6.83 µs + 5.05 ms = 5.06 ms
        work, fixed = (source_text(table, 0, COL[k]) for k in ("t_work", "t_fixed"))
        assert f"{fixed} + {work}" in predicted
        assert raw["t_predicted"] == pytest.approx(
            source_text(table, 0, COL["t_work"], SORT_ROLE)
            + source_text(table, 0, COL["t_fixed"], SORT_ROLE))
    else:  # 3.89 ms / 0.78 = 4.99 ms
        lower = source_text(table, 0, COL["t_lower"])
        efficiency = workspace.document.session.hardware[0].hardware.efficiency
        assert f"{lower} / {efficiency:g}" in predicted
        assert raw["t_predicted"] == pytest.approx(raw["t_lower"] / efficiency)


def test_sorting_is_numeric(qtbot):
    workspace = workspace_from(text=SORTING_SESSION)
    table = make_table(qtbot, workspace)
    machine = "Teaching machine (round numbers)"
    table.set_filter("teaching")
    table.view.sortByColumn(COL["intensity"], Qt.SortOrder.AscendingOrder)
    assert shown(table, COL["intensity"]) == ["0.167", "42.7", "341", "3584"]
    assert set(shown(table, COL["machine"])) == {machine}
    table.view.sortByColumn(COL["intensity"], Qt.SortOrder.DescendingOrder)
    assert shown(table, COL["intensity"]) == ["3584", "341", "42.7", "0.167"]
    # the display text would sort differently
    assert sorted(["0.167", "42.7", "341", "3584"]) != ["0.167", "42.7", "341", "3584"]
    # sorting by a time column uses seconds, whatever the prefix
    table.view.sortByColumn(COL["t_lower"], Qt.SortOrder.AscendingOrder)
    raw = shown(table, COL["t_lower"], SORT_ROLE)
    assert raw == sorted(raw)


def test_skipped_pairs_show_a_dash_and_sort_last(qtbot):
    workspace = workspace_from(text=SORTING_SESSION)
    table = make_table(qtbot, workspace)
    pairs = workspace.results.pairs()
    skipped = [i for i, p in enumerate(pairs) if p.skipped]
    assert len(skipped) == 1  # the fp32 custom operation on the TPU (no fp32 peak)
    row = skipped[0]
    reason = pairs[row].skipped.reason
    assert source_text(table, row, COL["attainable"]) == "—"
    assert source_text(table, row, COL["bound"]) == "skipped"
    assert source_text(table, row, COL["bound"], Qt.ItemDataRole.ToolTipRole) == reason
    assert source_text(table, row, COL["attainable"], Qt.ItemDataRole.ToolTipRole) == reason
    assert source_text(table, row, COL["operation"]) == "low"
    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
        table.view.sortByColumn(COL["attainable"], order)
        texts = shown(table, COL["attainable"])
        assert texts[-1] == "—" and "—" not in texts[:-1]


def test_a_whole_model_edit_updates_its_rows_in_place(qtbot, table, workspace):
    """A model's batch edit (hundreds of rows) announces every cell of the model's rows,
    in runs of rows, and no other row; the table then shows the model's new figures."""
    from workbench.io.model_configs import read_model_config
    from workbench.model.llm.architecture import Setup
    from workbench.model.llm.session import ModelEntry

    document = workspace.document
    model_id = document.add_model(ModelEntry(
        "Llama-3.1-8B", read_model_config("Llama-3.1-8B"), Setup("decode", 1, 4096, 4096),
        view="all"))
    model = next(m for m in document.session.models if m.id == model_id)
    keys = [table.model.key(r) for r in range(table.model.rowCount())]
    mine = {r for r, (op, _hw) in enumerate(keys) if op in set(model.op_ids)}
    assert len(mine) > 64  # (more than are compared cell by cell)
    before = [source_text(table, r, COL["flops"]) for r in range(len(keys))]
    resets, cells = [], set()
    table.model.modelReset.connect(lambda: resets.append(1))
    table.model.dataChanged.connect(lambda a, b, roles=(): cells.update(
        (r, c) for r in range(a.row(), b.row() + 1) for c in range(a.column(), b.column() + 1)))
    document.set_model(model_id, batch=32)
    assert resets == []
    assert cells == {(r, c) for r in mine for c in range(len(COLUMNS))}
    after = [source_text(table, r, COL["flops"]) for r in range(len(keys))]
    for row, (op, hw) in enumerate(keys):
        if row in mine:
            result = workspace.results.pair(op, hw).result
            assert after[row] == format_quantity(result.flops, "flops")
        else:
            assert after[row] == before[row]
    assert sum(after[r] != before[r] for r in mine) > len(mine) / 2  # (32 tokens' work now)


def test_editing_one_operation_updates_only_its_rows(qtbot, table, workspace):
    document = workspace.document
    op = document.session.operations[0]
    n_machines = len(document.session.hardware)
    before = [source_text(table, r, COL["intensity"]) for r in range(table.model.rowCount())]
    assert before[:n_machines] == ["3584"] * n_machines
    assert [source_text(table, r, COL["bound"]) for r in range(n_machines)] == ["compute"] * 3
    resets, changed = [], []
    table.model.modelReset.connect(lambda: resets.append(1))
    table.model.dataChanged.connect(lambda a, b, roles=(): changed.append((a.row(), b.row())))
    document.set_param(op.id, "m", 1)
    assert resets == []
    assert changed and set(changed) == {(0, n_machines - 1)}
    after = [source_text(table, r, COL["intensity"]) for r in range(table.model.rowCount())]
    expected = workspace.results.pair(op.id, document.session.hardware[0].id).result.intensity
    assert after[:n_machines] == [format_number(expected)] * n_machines
    assert after[n_machines:] == before[n_machines:]
    assert [source_text(table, r, COL["bound"]) for r in range(n_machines)] == ["memory"] * 3


def test_an_edit_announces_only_the_cells_that_changed(qtbot, table, workspace):
    """Rows already shown are re-evaluated at once: the cells whose value changed are
    announced (and show the new text), the others keep their text and are not repainted."""
    document = workspace.document
    op = document.session.operations[0]
    n_machines = len(document.session.hardware)
    flops_before = source_text(table, 0, COL["flops"])
    ceiling_before = source_text(table, 0, COL["ceiling"])
    cells = []

    def record(a, b, roles=()):
        cells.extend((r, c) for r in range(a.row(), b.row() + 1)
                     for c in range(a.column(), b.column() + 1))

    table.model.dataChanged.connect(record)
    document.set_param(op.id, "m", 1)
    changed_cols = {c for _, c in cells}
    assert {r for r, _ in cells} == set(range(n_machines))
    assert {COL["flops"], COL["bytes"], COL["intensity"], COL["t_math"]} <= changed_cols
    assert not {COL["operation"], COL["machine"], COL["ceiling"], COL["bandwidth"],
                COL["ridge"]} & changed_cols
    pair = workspace.results.pair(op.id, document.session.hardware[0].id).result
    assert source_text(table, 0, COL["flops"]) == format_quantity(pair.flops, "flops")
    assert source_text(table, 0, COL["flops"]) != flops_before
    assert source_text(table, 0, COL["ceiling"]) == ceiling_before
    assert table.model.data(table.model.index(0, COL["flops"]), SORT_ROLE) == pair.flops
    # a rename: only the operation column; undo brings the old texts back
    cells.clear()
    document.set_operation_field(op.id, "name", "renamed")
    assert {c for _, c in cells} == {COL["operation"]}
    assert source_text(table, 0, COL["operation"]) == "renamed"
    document.undo()
    document.undo()
    assert source_text(table, 0, COL["flops"]) == flops_before
    # an edit that changes no number announces nothing
    cells.clear()
    document.set_operation_field(op.id, "label", "a label")
    assert cells == []


def test_the_view_shows_the_same_cells_through_the_proxy(qtbot, table, workspace):
    """The proxy answers a delegate's roles in one call (multiData): the same values as
    data() role by role, sorted or not; and a cell's flags without mapping it: the
    source's flags of the cell."""
    from PySide6.QtCore import QModelRoleData, QModelRoleDataSpan
    from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

    roles = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole,
             Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole,
             Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.FontRole, SORT_ROLE]
    workspace.selection.select(workspace.document.session.operations[0].id)
    proxy = table.proxy
    delegate = QStyledItemDelegate()
    for sort in (None, COL["attainable"]):
        if sort is not None:
            table.view.sortByColumn(sort, Qt.SortOrder.DescendingOrder)
        for row in range(proxy.rowCount()):
            for col in range(len(COLUMNS)):
                index = proxy.index(row, col)
                assert proxy.flags(index) == table.model.flags(proxy.mapToSource(index))
                for role in roles:
                    item = QModelRoleData(int(role))
                    proxy.multiData(index, QModelRoleDataSpan(item))
                    assert item.data() == proxy.data(index, role)
                option = QStyleOptionViewItem()  # what the view paints: all roles at once
                delegate.initStyleOption(option, index)
                assert option.text == proxy.data(index, Qt.ItemDataRole.DisplayRole)
                assert int(option.displayAlignment) == proxy.data(
                    index, Qt.ItemDataRole.TextAlignmentRole)
                foreground = proxy.data(index, Qt.ItemDataRole.ForegroundRole)
                if foreground is not None:
                    assert option.palette.color(option.palette.ColorRole.Text) == foreground


def test_ctrl_c_copies_selected_rows_as_tsv(qtbot, table, workspace):
    view = table.view
    selection = view.selectionModel()
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    for row in (1, 4):
        selection.select(view.model().index(row, 0), flags)
    view.setFocus()
    QApplication.clipboard().clear()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    lines = QApplication.clipboard().text().splitlines()
    assert len(lines) == 3
    header = lines[0].split("\t")
    assert header[:3] == ["operation", "hardware", "precision"]  # the Results CSV's columns
    assert "intensity [FLOP/B]" in header and "t_math [s]" in header
    assert "attainable_flops [FLOP/s]" in header and "bandwidth [B/s]" in header
    pairs = workspace.results.pairs()
    for line, row in zip(lines[1:], (1, 4), strict=True):
        cells = dict(zip(header, line.split("\t"), strict=True))
        result = pairs[row].result
        assert cells["operation"] == result.operation
        assert float(cells["intensity [FLOP/B]"]) == pytest.approx(result.intensity, rel=1e-12)
        assert float(cells["t_lower [s]"]) == pytest.approx(result.t_lower_s, rel=1e-12)


def test_copy_all_copies_the_rows_shown(qtbot, table, workspace):
    table.set_filter("H100")
    table.copy_all_button.click()
    lines = QApplication.clipboard().text().splitlines()
    assert len(lines) == 1 + len(workspace.document.session.operations)
    assert all("H100" in line.split("\t")[1] for line in lines[1:])


def test_export_csv_matches_the_results(tmp_path, table, workspace):
    table.set_filter("decode")  # export ignores the filter and the sort
    table.view.sortByColumn(COL["flops"], Qt.SortOrder.DescendingOrder)
    path = tmp_path / "results.csv"
    assert table.export_csv(path) == 12
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    pairs = workspace.results.pairs()
    assert len(rows) == len(pairs) == 12
    for row, pair in zip(rows, pairs, strict=True):
        r = pair.result
        assert row["operation"] == r.operation  # names with commas survive CSV quoting
        assert row["hardware"] == r.hardware
        assert row["bound"] == r.bound and row["skipped"] == ""
        for header, value in (("flops [FLOP]", r.flops), ("bytes [B]", r.bytes),
                              ("intensity [FLOP/B]", r.intensity),
                              ("peak_flops [FLOP/s]", r.peak_flops),
                              ("bandwidth [B/s]", r.bandwidth), ("ridge [FLOP/B]", r.ridge),
                              ("attainable_flops [FLOP/s]", r.attainable_flops),
                              ("fraction_of_peak [1]", r.fraction_of_peak),
                              ("t_math [s]", r.t_math_s), ("t_mem [s]", r.t_mem_s),
                              ("t_lower [s]", r.t_lower_s), ("t_upper [s]", r.t_upper_s),
                              ("t_predicted [s]", r.t_predicted_s)):
            assert float(row[header]) == pytest.approx(value, rel=1e-12), header


def test_the_app_and_the_command_line_write_one_results_csv(tmp_path, table, workspace):
    """Export Results as CSV and ``analyze --format csv`` write the same columns under the
    same headers, and the same numbers for the same session."""
    from workbench.cli.analyze import results_csv

    path = tmp_path / "results.csv"
    table.export_csv(path)
    with path.open(newline="", encoding="utf-8") as handle:
        app = list(csv.reader(handle))
    pairs = workspace.results.pairs()
    cli = list(csv.reader(io.StringIO(results_csv([p.result for p in pairs]))))
    assert app[0] == cli[0]
    assert len(app) == len(cli) == 1 + len(pairs)
    assert app[1:] == cli[1:]  # the same cells, numbers written alike


def test_filter_hides_rows(qtbot, table, workspace):
    table.filter_edit.clear()
    qtbot.keyClicks(table.filter_edit, "decode")
    names = shown(table, COL["operation"])
    assert len(names) == 6 and all("decode" in n for n in names)
    table.set_filter("a100")  # case-insensitive, on machine names too
    assert len(shown(table, COL["machine"])) == 4
    assert all("A100" in m for m in shown(table, COL["machine"]))
    assert table.count_label.text() == "4 of 12 rows"
    table.set_filter("no such thing")
    assert table.view.model().rowCount() == 0
    table.set_filter("")
    assert table.view.model().rowCount() == 12


def test_selected_operation_is_highlighted(table, workspace):
    ops = workspace.document.session.operations
    workspace.selection.select(ops[1].id)
    background = [source_text(table, r, 0, Qt.ItemDataRole.BackgroundRole)
                  for r in range(table.model.rowCount())]
    assert [b is not None for b in background] == [False] * 3 + [True] * 3 + [False] * 6


def test_clicking_a_row_selects_its_operation(qtbot, table, workspace):
    ops = workspace.document.session.operations
    index = table.view.model().index(7, COL["machine"])
    rect = table.view.visualRect(index)
    qtbot.mouseClick(table.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert workspace.selection.current == ops[2].id


def test_structural_changes_rebuild(table, workspace):
    document = workspace.document
    document.remove_operations([document.session.operations[0].id])
    assert table.view.model().rowCount() == 9
    document.remove_machine(document.session.hardware[0].id)
    assert table.view.model().rowCount() == 6
    document.undo()
    document.undo()
    assert table.view.model().rowCount() == 12


def test_machine_edit_updates_its_rows(table, workspace):
    document = workspace.document
    machine = document.session.hardware[0]
    old_bandwidth = machine.hardware.bandwidth()
    faster = machine.hardware.copy()
    faster.memory = {k: v * 10 for k, v in faster.memory.items()}
    changed = []
    table.model.dataChanged.connect(lambda a, b, roles=(): changed.extend(range(a.row(),
                                                                                b.row() + 1)))
    document.set_machine(machine.id, faster)
    n_machines = len(document.session.hardware)
    assert sorted(set(changed)) == list(range(0, table.model.rowCount(), n_machines))  # its rows
    expected = workspace.results.pair(document.session.operations[0].id, machine.id).result
    assert expected.bandwidth == pytest.approx(10 * old_bandwidth)
    assert source_text(table, 0, COL["bandwidth"]) == format_quantity(expected.bandwidth,
                                                                      "bandwidth")


def test_adding_removing_and_moving_operations_updates_rows_in_place(table, workspace):
    """Structural edits insert, remove or move rows (no reset), always in session order."""
    from workbench.document import new_operation

    document = workspace.document
    resets = []
    table.model.modelReset.connect(lambda: resets.append(1))

    def check():
        pairs = workspace.results.pairs()
        assert [table.model.key(r) for r in range(table.model.rowCount())] == [
            (p.operation.id, p.hardware.id) for p in pairs]
        assert shown(table, COL["operation"]) == [p.operation.operation.name for p in pairs]
        assert shown(table, COL["intensity"]) == [format_number(p.result.intensity)
                                                  for p in pairs]

    ops = [e.id for e in document.session.operations]
    document.add_operation(new_operation("attention", "new attention"), 1)
    check()
    document.remove_operations([ops[0], ops[2], ops[3]])
    check()
    document.undo()  # three operations come back in two places
    check()
    document.move_operation(ops[3], 0)
    check()
    document.move_operation(ops[3], 4)
    check()
    document.undo()
    document.undo()
    document.undo()
    document.undo()
    check()
    assert len(document.session.operations) == 4
    assert resets == []
    document.remove_operations([e.id for e in document.session.operations])
    check()
    assert table.view.model().rowCount() == 0


def test_structural_edits_keep_a_sorted_view_sorted(table, workspace):
    from workbench.document import new_operation

    document = workspace.document
    table.view.sortByColumn(COL["t_lower"], Qt.SortOrder.DescendingOrder)
    ops = [e.id for e in document.session.operations]
    document.add_operation(new_operation("softmax"), 2)
    document.move_operation(ops[0], 3)
    document.remove_operations([ops[1]])
    raw = shown(table, COL["t_lower"], SORT_ROLE)
    assert raw == sorted(raw, reverse=True)
    assert len(raw) == len(workspace.results.pairs())


def test_focusing_the_table_does_not_change_the_selection(qtbot, table, workspace):
    with qtbot.waitActive(table):
        table.activateWindow()
    chosen = workspace.document.session.operations[2].id
    workspace.selection.select(chosen)
    table.view.setFocus()
    qtbot.waitUntil(table.view.hasFocus)
    assert workspace.selection.current == chosen


def test_a_range_of_changed_cells_repaints_exactly_those_cells(qtbot, table, workspace):
    """Qt's update rectangle for a range is a pixel too large (the next row and column
    would be repainted too): the view repaints the cells of the range only."""
    from PySide6.QtCore import QRect

    view, model = table.view, table.model
    regions = paint_regions(view.viewport())
    qtbot.wait(10)
    regions.clear()
    model.dataChanged.emit(model.index(0, COL["flops"]), model.index(1, COL["intensity"]))
    QApplication.processEvents()
    first = view.visualRect(table.proxy.index(0, COL["flops"]))
    last = view.visualRect(table.proxy.index(1, COL["intensity"]))
    assert [r.boundingRect() for r in regions] == [QRect(first.topLeft(), last.bottomRight())]
    # moved columns: the range covers the columns wherever they are
    view.horizontalHeader().moveSection(COL["bytes"], len(COLUMNS) - 1)
    QApplication.processEvents()
    regions.clear()
    model.dataChanged.emit(model.index(0, COL["flops"]), model.index(0, COL["intensity"]))
    QApplication.processEvents()
    cells = [view.visualRect(table.proxy.index(0, c))
             for c in (COL["flops"], COL["bytes"], COL["intensity"])]
    expected = cells[0].united(cells[1]).united(cells[2]).intersected(view.viewport().rect())
    assert regions and regions[0].boundingRect() == expected


def test_a_new_application_palette_reaches_the_highlight_and_greyed_text(qtbot, table,
                                                                        workspace):
    """The cells' highlight and greyed-text colours are looked up once, not on every paint;
    a palette change (a desktop switching to dark mode) is still followed."""
    from PySide6.QtGui import QPalette

    ops = workspace.document.session.operations
    workspace.selection.select(ops[0].id)
    before = QApplication.palette()
    changed = QPalette(before)
    changed.setColor(QPalette.ColorRole.Highlight, QColor("#12c456"))
    try:
        QApplication.setPalette(changed)
        qtbot.waitUntil(lambda: source_text(table, 0, 0, Qt.ItemDataRole.BackgroundRole)
                        .rgb() == QColor("#12c456").rgb())
        highlight = source_text(table, 0, 0, Qt.ItemDataRole.BackgroundRole)
        assert highlight.alpha() == 45
    finally:
        QApplication.setPalette(before)
    qtbot.waitUntil(lambda: source_text(table, 0, 0, Qt.ItemDataRole.BackgroundRole).rgb()
                    == before.color(QPalette.ColorRole.Highlight).rgb())
