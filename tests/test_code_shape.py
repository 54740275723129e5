"""The package's shape, read from its sources.

Classes are where a reader looks for them: at the top of a module, never made inside a
function (each call would make another class, and the class could not be imported, named in
a type or found by the tools that read the sources). One function makes the QApplication,
configured one way for the window, the command line and the tools. The main window's module
leaves its menus, files and exports to modules of their own."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "workbench"


def classes_in_functions(source: str) -> list[tuple[int, str, str]]:
    found = []
    for func in ast.walk(ast.parse(source)):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [(node.lineno, node.name, func.name) for node in ast.walk(func)
                      if isinstance(node, ast.ClassDef)]
    return found


def test_no_class_is_defined_inside_a_function():
    found = [f"{path.relative_to(PACKAGE)}:{line}: {name} in {func}()"
             for path in sorted(PACKAGE.rglob("*.py"))
             for line, name, func in classes_in_functions(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_check_finds_a_class_made_in_a_function():
    source = "def make():\n    class Made:\n        pass\n    return Made\n\nclass Top:\n    pass\n"
    assert classes_in_functions(source) == [(2, "Made", "make")]


#: Qt's application classes: one instance per process, made in one place
APPLICATIONS = {"QApplication", "QGuiApplication", "QCoreApplication"}


def applications_made(source: str) -> list[tuple[int, str]]:
    """``(line, function)`` of every call that makes a Qt application object (a call of the
    class itself, not of its static methods such as ``QApplication.instance()``)."""
    found = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = (child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                     else function)
            if isinstance(child, ast.Call):
                called = child.func
                name = (called.id if isinstance(called, ast.Name)
                        else called.attr if isinstance(called, ast.Attribute) else "")
                if name in APPLICATIONS:
                    found.append((child.lineno, function))
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return found


def test_one_function_makes_the_qapplication():
    made = [(str(path.relative_to(PACKAGE)), function)
            for path in sorted(PACKAGE.rglob("*.py"))
            for _, function in applications_made(path.read_text(encoding="utf-8"))]
    assert made == [("ui/window/app.py", "create_app")]


def test_the_check_finds_an_application_made_anywhere():
    source = ("from PySide6 import QtWidgets\n"
              "from PySide6.QtWidgets import QApplication\n"
              "def make():\n    return QApplication.instance() or QApplication([])\n"
              "def other():\n    QtWidgets.QApplication([])\n"
              "app = QApplication([])\n")
    assert applications_made(source) == [(4, "make"), (6, "other"), (7, "<module>")]


def test_the_main_window_leaves_its_menus_files_and_exports_to_their_own_modules():
    """The window's module reads in one sitting: its actions and menus, its file work
    (open, save, autosave, recovery) and its exports live in modules of their own."""
    window = PACKAGE / "ui" / "window"
    lines = len((window / "main_window.py").read_text(encoding="utf-8").splitlines())
    assert lines < 600
    defined = {path.name: {node.name for node in ast.walk(ast.parse(path.read_text("utf-8")))
                           if isinstance(node, ast.FunctionDef)}
               for path in window.glob("*.py")}
    assert {"build_menus", "sync_view_actions"} <= defined["menus.py"]
    assert {"open_path", "save_to", "offer_recovery", "autosave_now"} <= defined["files.py"]
    assert {"export_figure", "copy_figure", "export_results_csv"} <= defined["exporting.py"]
