"""Imports go one way, and no module imports itself back.

The layer rules (model ← io, document, measure ← ui ← cli; the rooms of the user interface
and of the model; no Qt in the engine) are import-linter contracts in ``pyproject.toml``,
checked by ``lint-imports`` in CI (it reads every import, those inside functions too). What
they cannot say is checked here, from the sources (every import statement, also those inside
functions and under ``TYPE_CHECKING``, and ``importlib.import_module("…")`` with a literal
name):

* no two modules depend on each other, by any chain, not even for a type under
  ``TYPE_CHECKING`` (a two-way dependency hidden in a function or a type hint is a knot all
  the same: name a Protocol where the other side is needed);
* every subpackage is a room of a contract, none deeper, none left over;
* no folder holds more than :data:`MAX_MODULES` modules.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "workbench"

def _contract_rooms() -> dict[str, set[str]]:
    """{part: its rooms} as the layers contracts of ``pyproject.toml`` name them."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    rooms: dict[str, set[str]] = {}
    for contract in config["tool"]["importlinter"]["contracts"]:
        for container in contract.get("containers", []):
            names = {n.strip() for layer in contract["layers"]
                     for n in re.split(r"[|:]", layer)}
            rooms[container.split(".", 1)[1]] = names
    return rooms


ROOMS = _contract_rooms()

#: the most modules (``__init__.py`` included) one folder of the package may hold
MAX_MODULES = 20


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_package(package: Path = PACKAGE) -> dict[str, tuple[str, bool]]:
    """{module name: (source, is a package)} of every module under ``package``."""
    return {module_name(p, package.parent): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
            for p in sorted(package.rglob("*.py"))}


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Line numbers of the statements under ``if TYPE_CHECKING:``."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
            if name == "TYPE_CHECKING":
                for stmt in node.body:
                    lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def imported_names(source: str, module: str, is_package: bool = False):
    """(imported dotted name, line, runs at import or call time) for every import."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    typing_only = _type_checking_lines(tree)
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{alias.name}" for alias in node.names]  # from pkg import module
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names = [first.value]
        for name in names:
            yield name, node.lineno, node.lineno not in typing_only


def _resolve(name: str, modules) -> str | None:
    """The module of ours that importing ``name`` loads last (``pkg.mod.attr`` → ``pkg.mod``)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(modules: dict[str, tuple[str, bool]], runtime_only: bool = False):
    """{module: {imported module of ours: first line}}."""
    graph: dict[str, dict[str, int]] = {m: {} for m in modules}
    for module, (source, is_package) in modules.items():
        for name, line, runs in imported_names(source, module, is_package):
            if runtime_only and not runs:
                continue
            target = _resolve(name, modules)
            if target is not None and target != module:
                graph[module].setdefault(target, line)
    return graph


def import_cycles(modules: dict[str, tuple[str, bool]]) -> list[list[str]]:
    """Each group of modules that import one another (through any chain, type-only imports
    included), as a cycle."""
    graph = import_graph(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in graph:
        if v not in index:
            visit(v)
    return [_cycle_in(sorted(group), graph) for group in groups]


def _cycle_in(group: list[str], graph) -> list[str]:
    """One closed path through ``group``, from its first module back to it."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                return paths[v] + [start]
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                todo.append(w)
    return group


# ---------------------------------------------------------------------------------------------
# the package


MODULES = read_package()


def test_the_package_is_read():
    assert {"workbench.model.roofline", "workbench.io.sessions", "workbench.document",
            "workbench.ui.window.main_window", "workbench.cli", "workbench.cli.render"} \
        <= set(MODULES)
    graph = import_graph(MODULES)
    assert "workbench.io.yamlio" in graph["workbench.io.sessions"]  # an import seen
    assert "workbench.ui.figures.export" in graph["workbench.ui.window.exporting"]  # in a method
    assert "workbench.document.models" in graph["workbench.document.document"]  # in a method


def test_every_room_is_ranked():
    """Each subpackage of a part is a room of a layers contract, none deeper, none left over;
    so is each module beside the rooms of the user interface (its shared layer)."""
    packages = {m for m, (_, is_package) in MODULES.items() if is_package and m.count(".") >= 2}
    named = {f"workbench.{part}.{room}" for part, rooms in ROOMS.items() for room in rooms}
    assert packages <= named
    assert {p for p in packages if p.count(".") == 2} == {
        n for n in named if n in MODULES and MODULES[n][1]}
    shared = {m for m in MODULES if m.count(".") == 2 and not MODULES[m][1]}
    assert {m for m in shared if m.startswith(("workbench.ui.", "workbench.model."))} <= named


def test_no_folder_is_too_big_to_walk_into():
    counts = Counter(path.parent.relative_to(REPO).as_posix() for path in PACKAGE.rglob("*.py"))
    assert counts["workbench/ui/chart"] > 1  # the folders are read
    assert {folder: n for folder, n in counts.items() if n > MAX_MODULES} == {}


def test_no_import_cycles():
    cycles = import_cycles(MODULES)
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)


# ---------------------------------------------------------------------------------------------
# the checks themselves, on small made-up packages


def _package(**sources: str) -> dict[str, tuple[str, bool]]:
    return {name.replace("__", "."): (source, False) for name, source in sources.items()}


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import():
    modules = _package(
        workbench__ui__app="def start():\n    from workbench.ui.window import Window",
        workbench__ui__window="def export():\n    from workbench.ui import export",
        workbench__ui__export="from workbench.ui.app import create_app",
        workbench__ui__other="import workbench.ui.app",
    )
    assert import_cycles(modules) == [["workbench.ui.app", "workbench.ui.window",
                                       "workbench.ui.export", "workbench.ui.app"]]


def test_the_cycle_check_finds_a_back_reference_for_a_type_only():
    modules = _package(
        workbench__model__a="from workbench.model import b",
        workbench__model__b="from workbench.model import c",
        workbench__model__c="",
    )
    assert import_cycles(modules) == []
    modules["workbench.model.b"] = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                    "    from workbench.model.a import A", False)
    assert import_cycles(modules) == [["workbench.model.a", "workbench.model.b",
                                       "workbench.model.a"]]
    modules["workbench.model.b"] = ("from workbench.model.a import A", False)
    assert import_cycles(modules) == [["workbench.model.a", "workbench.model.b",
                                       "workbench.model.a"]]
