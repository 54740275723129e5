"""The package's classes are where a reader looks for them: at the top of a module, never
made inside a function (each call would make another class, and the class could not be
imported, named in a type or found by the tools that read the sources)."""

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
