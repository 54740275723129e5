"""The results table as the tests make it: a session of its own (an example, or text) in a
workspace, the table shown beside no window."""

from __future__ import annotations

from pathlib import Path

from workbench.document import Document
from workbench.io.sessions import load_session, loads_session
from workbench.ui.bridge import Workspace
from workbench.ui.panels.results_table import ResultsTable

EXAMPLES = Path(__file__).resolve().parents[1] / "workbench" / "examples"

#: Four operations whose intensities sort differently as numbers and as text:
#: 0.167 < 42.7 < 341 < 3584, but "0.167" < "341" < "3584" < "42.7"; the fp32 one has no
#: peak on the TPU (a skipped row).
SORTING_SESSION = """\
schema_version: 1
hardware:
  - preset: teaching-machine
  - preset: tpu-v5e
operations:
  - {name: big GEMM, kind: gemm, m: 8192, n: 28672, k: 8192, dtype: bf16}
  - {name: low, kind: custom, flops: 1 GFLOP, bytes: 6 GB, precision: fp32}
  - {name: cube, kind: gemm, m: 1024, n: 1024, k: 1024, dtype: bf16}
  - {name: mid, kind: custom, flops: 42.7 GFLOP, bytes: 1 GB, precision: bf16}
"""


def workspace_from(example: str | None = None, text: str | None = None) -> Workspace:
    """A workspace on the example ``example`` (a file name) or the session ``text``."""
    workspace = Workspace(Document())
    session = load_session(EXAMPLES / example) if example else loads_session(text)
    workspace.document.replace_session(session)
    return workspace


def make_table(qtbot, workspace: Workspace, size: tuple[int, int] = (1400, 500)
               ) -> ResultsTable:
    """The results table of ``workspace``, shown at ``size``."""
    table = ResultsTable(workspace)
    qtbot.addWidget(table)
    table.resize(*size)
    table.show()
    qtbot.waitExposed(table)
    return table
