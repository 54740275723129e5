"""CSV rows end with CR LF (RFC 4180) and a field holding CR or LF is quoted, so that no text
in a name starts a row of its own; text a spreadsheet would run as a formula is written
as text, also after a leading tab, CR or LF. The same rules hold in ``analyze --format
csv``, Export Results as CSV and Copy All."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

from conftest import HANG_GUARD_S
from PySide6.QtWidgets import QApplication

from workbench.document import Document
from workbench.io.sessions import loads_session
from workbench.io.tables import csv_text, spreadsheet_cell, tsv_text
from workbench.ui.bridge import Workspace
from workbench.ui.panels.results_table import ResultsTable

from ..conftest import ROOT

SESSION = """schema_version: 2
hardware: [{preset: h100-sxm}]
operations:
  - {name: "x\\r=1+1", kind: gemm, m: 64, n: 64, k: 64}
  - {name: "\\n=2+2", kind: gemm, m: 32, n: 32, k: 32}
"""


def _rows_of(raw: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))


def _check_rows(raw: bytes, rows: int) -> None:
    """``rows`` rows, each ending with CR LF; no row begins with a formula."""
    assert raw.endswith(b"\r\n")
    assert raw.count(b"\r\n") == rows  # (the CR inside the quoted name is not followed by LF)
    parsed = _rows_of(raw)
    assert len(parsed) == rows
    assert all(not row[0].startswith(("=", "+", "@")) for row in parsed)
    names = [row[0] for row in parsed[1:]]
    assert "x\r=1+1" in names and "'\n=2+2" in names
    assert b'"x\r=1+1"' in raw and b"\"'\n=2+2\"" in raw  # quoted, with the CR or LF kept


def test_the_shared_writer_quotes_cr_and_lf_and_ends_rows_with_crlf():
    raw = csv_text([["name", "flops"], ["x\r=1+1", 1.0], ["\n=2+2", -2]]).encode()
    _check_rows(raw, 3)
    assert _rows_of(raw)[2][1] == "-2"  # a negative number stays a number


def test_formula_starts_after_a_leading_line_feed_are_text():
    assert spreadsheet_cell("\n=1") == "'\n=1"
    assert spreadsheet_cell("\r\n@SUM(A1)") == "'\r\n@SUM(A1)"


def test_tab_separated_text_has_no_line_break_inside_a_cell():
    text = tsv_text([["operation", "machine"], ["x\r=1+1", "h"], ["a\tb\nc", "=h"]])
    assert text.split("\n") == ["operation\tmachine", "x =1+1\th", "a b c\t'=h", ""]


def test_analyze_csv_rows(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SESSION)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "workbench", "analyze", str(path), "--format",
                           "csv"], capture_output=True, cwd=ROOT, env=env, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr
    columns = _rows_of(proc.stdout)[0]
    assert columns.index("operation") == 0
    _check_rows(proc.stdout, 3)


def test_export_results_and_copy_all(qtbot, tmp_path):
    document = Document()
    document.replace_session(loads_session(SESSION))
    table = ResultsTable(Workspace(document))
    qtbot.addWidget(table)
    table.show()
    assert table.export_csv(tmp_path / "r.csv") == 2
    raw = (tmp_path / "r.csv").read_bytes()
    header = _rows_of(raw)[0]
    names = header.index("operation")
    rows = _rows_of(raw)
    assert raw.endswith(b"\r\n") and raw.count(b"\r\n") == 3
    assert sorted(row[names] for row in rows[1:]) == sorted(["x\r=1+1", "'\n=2+2"])
    table.copy_all_button.click()
    copied = QApplication.clipboard().text()
    assert "\r" not in copied and len(copied.splitlines()) == 3
    assert sorted(line.split("\t")[names] for line in copied.splitlines()[1:]) == \
        sorted(["x =1+1", "' =2+2"])
