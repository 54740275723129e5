"""Imports go one way: model ← io, document ← ui ← cli, and no module imports itself back.

Read from the sources (every import statement, also those inside functions and under
``TYPE_CHECKING``, and ``importlib.import_module("…")`` with a literal name):

* ``workbench.model`` imports nothing else of the package;
* ``workbench.io`` and ``workbench.document`` import only the model: neither imports the
  other (the document holds the open session in memory, reading and writing files is
  io's), nor the UI or the command line;
* ``workbench.ui`` imports no command line;
* the package's ``__init__`` (the version) may be imported from anywhere.

Inside a part, its rooms (subpackages) go one way too (:data:`ROOMS`): the user interface's
shared modules (``bridge``, ``widgets``) ← ``chart``, ``editors``, ``dialogs`` ←
``figures`` (← ``chart``), ``panels`` (← ``chart``, ``editors``, ``dialogs``) ← ``window``;
the model's core ← ``chart``, ``llm``. Rooms of one rank do not import each other, and the
one import against the order is listed with its reason (:data:`AGAINST_THE_ROOMS`). Every
subpackage has its room, and no folder holds more than :data:`MAX_MODULES` modules.

Cycles are looked for among the imports that run: one under ``if TYPE_CHECKING:`` only
names a type and does not tie the import order of two modules.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "workbench"

#: layer of each part of the package; a module may import its own part and lower layers
LAYERS = {"model": 0, "io": 1, "document": 1, "measure": 1, "ui": 2, "cli": 3, "__main__": 4}

#: rank of each room (subpackage) of a part, by the same rule: a module may import its own
#: room and lower ranks of its part; "" is the part's own modules (``workbench.ui.bridge``)
ROOMS = {
    "model": {"": 0, "chart": 1, "llm": 1},
    "ui": {"": 0, "chart": 1, "editors": 1, "dialogs": 1, "figures": 2, "panels": 2, "window": 3},
}

#: imports against the order of the rooms, each with its reason
AGAINST_THE_ROOMS = {
    ("workbench.model.operations", "workbench.model.llm.kinds"):
        "the kinds whole models need are registered with the basic ones",
}

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


def _layer(module: str) -> tuple[str, int] | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package itself
    return parts[1], LAYERS[parts[1]]


def _room(module: str) -> tuple[str, int]:
    """The room of a module inside its part, and its rank there."""
    parts = module.split(".")
    rooms = ROOMS.get(parts[1], {"": 0})
    room = parts[2] if len(parts) > 2 and parts[2] in rooms else ""
    return room, rooms[room]


def layer_violations(modules: dict[str, tuple[str, bool]]) -> list[str]:
    found = []
    for module, targets in import_graph(modules).items():
        mine = _layer(module)
        for target, line in targets.items():
            theirs = _layer(target)
            if mine is None or theirs is None:
                continue
            if mine[0] == theirs[0]:
                my_room, their_room = _room(module), _room(target)
                if (my_room[0] == their_room[0] or their_room[1] < my_room[1]
                        or (module, target) in AGAINST_THE_ROOMS):
                    continue
            elif theirs[1] < mine[1]:
                continue
            found.append(f"{module} (line {line}) imports {target}")
    return found


def import_cycles(modules: dict[str, tuple[str, bool]]) -> list[list[str]]:
    """Each group of modules that import one another (through any chain), as a cycle."""
    graph = import_graph(modules, runtime_only=True)
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
    assert "workbench.ui.figures.export" in graph["workbench.ui.window.main_window"]  # in a method
    assert _room("workbench.ui.chart.canvas") == ("chart", 1)
    assert _room("workbench.ui.bridge") == _room("workbench.model.units") == ("", 0)


def test_layers_import_only_downwards():
    assert layer_violations(MODULES) == []


def test_every_room_is_ranked():
    """Each subpackage of a part is a room of :data:`ROOMS`, none deeper, none left over."""
    packages = {m for m, (_, is_package) in MODULES.items() if is_package and m.count(".") >= 2}
    assert packages == {f"workbench.{part}.{room}" for part, rooms in ROOMS.items()
                        for room in rooms if room}


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


@pytest.mark.parametrize(("importer", "source", "bad"), [
    ("workbench__model__a", "from workbench.io import b", True),
    ("workbench__model__a", "def f():\n    from workbench.ui.b import X", True),
    ("workbench__model__a", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                            "    from workbench.document.b import X", True),
    ("workbench__model__a", "from workbench import cli", True),
    ("workbench__io__a", "from ..document import b", True),
    ("workbench__document__a", "import workbench.io.b", True),
    ("workbench__io__a", "importlib.import_module('workbench.ui.b')", True),
    ("workbench__ui__a", "from workbench.cli import main", True),
    ("workbench__ui__window__a", "from workbench.cli.render import run", True),
    ("workbench__ui__a", "from workbench.io.b import X\nfrom workbench.model.b import Y", False),
    ("workbench__io__a", "from ..model import b\nfrom . import b", False),
    ("workbench__model__a", "from workbench import __version__\nfrom .b import X", False),
    ("workbench__cli", "from workbench.ui.b import X\nfrom workbench.io.b import Y", False),
    # the rooms of a part
    ("workbench__ui__a", "from workbench.ui.chart.b import X", True),
    ("workbench__ui__chart__a", "def f():\n    from workbench.ui.panels.b import X", True),
    ("workbench__ui__editors__a", "from workbench.ui.dialogs.b import X", True),
    ("workbench__ui__figures__a", "from workbench.ui.panels import b", True),
    ("workbench__ui__panels__a", "import workbench.ui.window.b", True),
    ("workbench__ui__figures__a", "from workbench.ui.window.b import create_app", True),
    ("workbench__ui__panels__a", "from workbench.ui.chart.b import X\nfrom workbench.ui.editors.b "
                                 "import Y\nfrom workbench.ui.dialogs.b import Z\n"
                                 "from workbench.ui.b import W\nfrom . import b", False),
    ("workbench__ui__window__a", "from workbench.ui.figures.b import X\n"
                                 "from workbench.ui.panels.b import Y", False),
    ("workbench__model__a", "from workbench.model.chart.b import X", True),
    ("workbench__model__chart__a", "from workbench.model.llm.b import X", True),
    ("workbench__model__chart__a", "from workbench.ui.chart.b import X", True),
    ("workbench__model__llm__a", "from workbench.model.b import X\nfrom .b import Y", False),
    ("workbench__io__a", "from workbench.model.chart.b import X", False),
    ("workbench__model__operations", "from workbench.model.llm.kinds import X", False),
    ("workbench__model__units", "from workbench.model.llm.kinds import X", True),
])
def test_the_layer_check_itself(importer, source, bad):
    others = {f"workbench__{part}__b": "X = Y = 1" for part in ("model", "io", "document", "ui")}
    others |= {f"workbench__{part}__{room}__b": "X = Y = Z = W = 1"
               for part, rooms in ROOMS.items() for room in rooms if room}
    others["workbench__model__llm__kinds"] = "X = 1"
    modules = _package(**{**others, "workbench__cli": "", importer: source})
    modules["workbench"] = ("__version__ = '0'", True)
    assert bool(layer_violations(modules)) is bad


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import():
    modules = _package(
        workbench__ui__app="def start():\n    from workbench.ui.window import Window",
        workbench__ui__window="def export():\n    from workbench.ui import export",
        workbench__ui__export="from workbench.ui.app import create_app",
        workbench__ui__other="import workbench.ui.app",
    )
    assert import_cycles(modules) == [["workbench.ui.app", "workbench.ui.window",
                                       "workbench.ui.export", "workbench.ui.app"]]


def test_the_cycle_check_passes_an_acyclic_package_and_type_only_back_references():
    modules = _package(
        workbench__model__a="from workbench.model import b",
        workbench__model__b="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                            "    from workbench.model.a import A",
    )
    assert import_cycles(modules) == []
    modules["workbench.model.b"] = ("from workbench.model.a import A", False)
    assert import_cycles(modules) == [["workbench.model.a", "workbench.model.b",
                                       "workbench.model.a"]]
