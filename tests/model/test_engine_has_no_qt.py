"""The engine (model, io, command line) runs without Qt: nothing it imports pulls in PySide6,
shiboken6, pyqtgraph or PyQt, and no engine source file imports the UI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S
from test_import_layers import imported_names, module_name

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "workbench"
EXAMPLE = sorted((PACKAGE / "examples").glob("*.yaml"))[0]
QT_PREFIXES = ("PySide6", "shiboken6", "pyqtgraph", "PyQt")
ENGINE_DIRS = ("model", "io", "document", "measure")
FORBIDDEN = ("workbench.ui", "PySide6", "pyqtgraph", "shiboken6", "PyQt5", "PyQt6")

SCRIPT = r"""
import contextlib, importlib, io, json, pkgutil, sys

preload = sys.argv[2]
if preload:
    importlib.import_module(preload)

import workbench.model, workbench.io
imported = []
for package in (workbench.model, workbench.io):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
        imported.append(info.name)
import workbench.cli

out = io.StringIO()
with contextlib.redirect_stdout(out):
    status = workbench.cli.main(["analyze", sys.argv[1], "--format", "json"])
results = json.loads(out.getvalue())["results"]

prefixes = ("PySide6", "shiboken6", "pyqtgraph", "PyQt")
qt = sorted(name for name in sys.modules if name.startswith(prefixes))
print(json.dumps({"status": status, "results": len(results), "imported": imported, "qt": qt}))
"""


def _run_engine(preload: str = "") -> dict:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(EXAMPLE), preload], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_engine_and_cli_analyze_without_qt():
    report = _run_engine()
    assert report["status"] == 0
    assert report["results"] > 0
    # the walk really imported the engine's modules
    for module in ("workbench.model.roofline", "workbench.model.operations",
                   "workbench.io.sessions", "workbench.io.yamlio", "workbench.io.presets"):
        assert module in report["imported"]
    assert report["qt"] == []


def test_the_qt_check_sees_qt_when_it_is_there():
    pytest.importorskip("PySide6.QtCore")
    report = _run_engine(preload="PySide6.QtCore")
    assert "PySide6.QtCore" in report["qt"]


# ---------------------------------------------------------------------------------------------
# import direction, read from the source


def forbidden_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Every import in ``source`` (of ``module``) that reaches the UI or a Qt binding, read
    the way the import-direction test reads them (relative imports resolved, imports inside
    functions and ``importlib.import_module`` with a literal name included)."""
    return [f"line {line}: {name}" for name, line, _runs in imported_names(source, module, is_package)
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)]


ENGINE_FILES = sorted(p for d in ENGINE_DIRS for p in (PACKAGE / d).rglob("*.py"))


def test_engine_files_are_found():
    names = {p.relative_to(PACKAGE).as_posix() for p in ENGINE_FILES}
    assert {"model/roofline.py", "io/sessions.py", "document/__init__.py"} <= names


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_engine_file_does_not_import_the_ui_or_qt(path):
    source = path.read_text(encoding="utf-8")
    found = forbidden_imports(source, module_name(path), path.name == "__init__.py")
    assert found == [], f"{path.relative_to(REPO)} imports {found}"


@pytest.mark.parametrize(
    ("source", "module", "bad"),
    [
        ("from PySide6 import QtCore", "workbench.model.x", True),
        ("import pyqtgraph as pg", "workbench.io.x", True),
        ("import shiboken6", "workbench.io.x", True),
        ("from ..ui.canvas import Canvas", "workbench.io.x", True),
        ("from .. import ui", "workbench.document.x", True),
        ("from workbench import ui", "workbench.model.x", True),
        ("import workbench.ui.window.app", "workbench.model.x", True),
        ("def f():\n    from PySide6.QtWidgets import QWidget", "workbench.model.x", True),
        ("importlib.import_module('PySide6.QtGui')", "workbench.model.x", True),
        ("from ..model import units", "workbench.io.x", False),
        ("from . import errors", "workbench.io.x", False),
        ("import workbench.uikit_free", "workbench.io.x", False),
        ("import numpy, yaml", "workbench.model.x", False),
    ],
)
def test_the_import_check_itself(source, module, bad):
    assert bool(forbidden_imports(source, module)) is bad
