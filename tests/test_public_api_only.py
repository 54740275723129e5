"""The package uses only the public API of PySide6, shiboken6, pyqtgraph and PyYAML.

Read from the sources of every module under ``workbench/``. Refused:

* an underscored name of those libraries: ``yaml._x``, ``pg.graphicsItems.X._y``,
  ``from pyqtgraph.x import _y``, ``getattr(item, "_x")``, anything of PySide6's internal
  ``shibokensupport`` package (also named in a string, as in ``sys.modules[…]``);
* an underscored attribute of an object that no code of ours defines (``item._exportOpts``,
  ``feature._mod_uses_pyside = …``), and, in a class derived from one of those libraries, an
  underscored attribute of ``self`` or ``super()`` that the class and its bases of ours do
  not define, or that the library's class has (``def _updateLabel`` in an ``AxisItem``);
* ``shiboken6.wrapInstance`` (memory aliased as a Qt object) and ``object.__new__`` (an
  instance built without its ``__init__``).

Dunder names (``__init__``, ``__name__``) are not underscored names in this sense.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "workbench"
LIBRARIES = ("PySide6", "shiboken6", "shibokensupport", "pyqtgraph", "yaml")
INTERNAL = ("shibokensupport",)  # no public API at all
#: underscored names of other libraries used knowingly, each with why
ACCEPTED = {
    "_scaled_mm": "PyTorch's fp8 GEMM has no public name (torch._scaled_mm, as the reference "
                  "GPU measurements call it); workbench.measure.gpu_torch looks it up at run "
                  "time and leaves fp8 unmeasured without it",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _library(dotted: str) -> bool:
    return dotted.split(".")[0] in LIBRARIES


@dataclass
class _Class:
    module: str
    node: ast.ClassDef
    defined: set[str] = field(default_factory=set)  # underscored names it defines itself
    ours: list[_Class] = field(default_factory=list)  # its bases of ours
    theirs: list[str] = field(default_factory=list)  # its library bases, dotted


class _Module:
    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self.tree = ast.parse(source)
        self.aliases: dict[str, str] = {}  # local name → dotted name it was imported as
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.aliases[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def dotted(self, node: ast.AST) -> str | None:
        """``pg.AxisItem`` → ``pyqtgraph.AxisItem``, through the module's imports."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.aliases.get(node.id)
        return ".".join([base or node.id, *reversed(parts)]) if base or parts else node.id


def _defined_by(node: ast.AST) -> set[str]:
    """Underscored names a statement tree defines: functions, classes, assigned names,
    attributes assigned on ``self`` or ``cls``, and ``__slots__`` entries."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(sub.name)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)
              and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls")):
            names.add(sub.attr)
        elif isinstance(sub, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in sub.targets):
            names.update(c.value for c in ast.walk(sub.value)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return {n for n in names if _private(n)}


def _class_defines(node: ast.ClassDef) -> set[str]:
    """Underscored names a class defines: in its body, and as attributes of ``self``/``cls``."""
    names: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets) \
                    and stmt.value is not None:
                names.update(c.value for c in ast.walk(stmt.value)
                             if isinstance(c, ast.Constant) and isinstance(c.value, str))
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)
                and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls")):
            names.add(sub.attr)
    return {n for n in names if _private(n)}


def _library_object(dotted: str):
    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        try:
            return importlib.import_module(dotted)
        except ImportError:
            return None


def violations(sources: dict[str, str]) -> list[str]:
    """Every use of a library's internals in ``sources`` ({module name: source})."""
    modules = {name: _Module(name, source) for name, source in sources.items()}
    ours: set[str] = set(ACCEPTED)  # underscored names any module of ours defines
    for m in modules.values():
        ours |= _defined_by(m.tree)

    classes: dict[tuple[str, str], _Class] = {}
    for m in modules.values():
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ClassDef):
                classes[(m.name, node.name)] = _Class(m.name, node, _class_defines(node))
    for c in classes.values():
        m = modules[c.module]
        for base in c.node.bases:
            dotted = m.dotted(base)
            if dotted is None:
                continue
            if _library(dotted):
                c.theirs.append(dotted)
            elif (c.module, dotted) in classes:
                c.ours.append(classes[(c.module, dotted)])
            else:
                module, _, name = dotted.rpartition(".")
                if (module, name) in classes:
                    c.ours.append(classes[(module, name)])

    def lineage(c: _Class, seen=None) -> tuple[set[str], list[str]]:
        """Underscored names defined along the class and its bases of ours; library bases."""
        seen = seen if seen is not None else set()
        if id(c) in seen:
            return set(), []
        seen.add(id(c))
        defined, theirs = set(c.defined), list(c.theirs)
        for base in c.ours:
            more, their = lineage(base, seen)
            defined |= more
            theirs += their
        return defined, theirs

    found: list[str] = []
    for m in modules.values():
        def report(node: ast.AST, what: str, m=m) -> None:
            found.append(f"{m.name}:{node.lineno}: {what}")

        class_of: dict[int, _Class] = {}  # node → the innermost class it is in
        for c in sorted((c for c in classes.values() if c.module == m.name),
                        key=lambda c: c.node.lineno):
            for sub in ast.walk(c.node):
                class_of[id(sub)] = c

        for node in ast.walk(m.tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                if isinstance(node, ast.ImportFrom) and node.level:
                    continue  # a module of ours
                base = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
                for alias in node.names:
                    dotted = f"{base}.{alias.name}" if base else alias.name
                    if _library(dotted) and (any(_private(p) for p in dotted.split("."))
                                             or dotted.split(".")[0] in INTERNAL):
                        report(node, f"imports {dotted}")
                    if alias.name == "wrapInstance":
                        report(node, "imports shiboken6.wrapInstance")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value.split(".")[0] in INTERNAL:
                    report(node, f"names {node.value!r}")
            elif isinstance(node, ast.Attribute):
                if isinstance(node.value, ast.Name) and node.value.id == "object" \
                        and node.attr == "__new__":
                    report(node, "object.__new__ (an instance without its __init__)")
                    continue
                if node.attr == "wrapInstance":
                    report(node, "shiboken6.wrapInstance")
                    continue
                dotted = m.dotted(node)
                if dotted is not None and _library(dotted):
                    if any(_private(p) for p in dotted.split(".")) \
                            or dotted.split(".")[0] in INTERNAL:
                        report(node, f"uses {dotted}")
                    continue
                if not _private(node.attr):
                    continue
                target = node.value
                is_super = (isinstance(target, ast.Call) and isinstance(target.func, ast.Name)
                            and target.func.id == "super")
                owner = class_of.get(id(node))
                if owner is not None and (is_super or (isinstance(target, ast.Name)
                                                       and target.id in ("self", "cls"))):
                    defined, theirs = lineage(owner)
                    if not theirs:
                        continue  # a class of ours alone: its own business
                    if node.attr not in defined or (is_super and any(
                            hasattr(_library_object(t), node.attr) for t in theirs)):
                        report(node, f"{node.attr} of {', '.join(theirs)}")
                    continue
                if node.attr not in ours:
                    report(node, f"{node.attr}, which no code of ours defines")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "setattr", "hasattr", "delattr") \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str) and _private(node.args[1].value) \
                    and node.args[1].value not in ours:
                report(node, f"{node.func.id}(…, {node.args[1].value!r}), which no code of "
                             "ours defines")

        # overrides: an underscored method or attribute the library's class already has
        for c in classes.values():
            if c.module != m.name:
                continue
            _, theirs = lineage(c)
            if not theirs:
                continue
            bases = [_library_object(t) for t in theirs]
            for name in sorted(c.defined):
                owners = [t for t, b in zip(theirs, bases, strict=True)
                          if b is not None and hasattr(b, name)]
                if owners:
                    report(c.node, f"class {c.node.name} overrides {name} of {owners[0]}")
    return sorted(set(found))


# ---------------------------------------------------------------------------------------------
# the package


def _sources() -> dict[str, str]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path.read_text(encoding="utf-8")
    return out


def test_the_package_is_read():
    sources = _sources()
    assert {"workbench.ui.chart.canvas", "workbench.io.yamlio", "workbench.model.roofline"} \
        <= set(sources)


def test_the_package_uses_only_public_library_api():
    found = violations(_sources())
    assert found == [], "\n".join(found)


# ---------------------------------------------------------------------------------------------
# the check itself, on small made-up modules


def _check(source: str, **others: str) -> list[str]:
    return violations({"workbench.x": source, **{k.replace("__", "."): v
                                                 for k, v in others.items()}})


BAD = {
    "private module attribute": "import yaml\nyaml._x()\n",
    "private attribute down a chain": "import pyqtgraph as pg\n"
                                      "pg.graphicsItems.ScatterPlotItem._y\n",
    "private name imported": "from pyqtgraph.graphicsItems.ScatterPlotItem import _mkPen\n",
    "private module imported": "import yaml._yaml\n",
    "internal package imported": "import shibokensupport.feature\n",
    "internal package by name": "import sys\n"
                                "feature = sys.modules.get('shibokensupport.feature')\n",
    "unknown private attribute set": "def f(feature, hook):\n"
                                     "    feature._mod_uses_pyside = hook\n",
    "unknown private attribute read": "def f(item):\n    return item._exportOpts\n",
    "getattr of an unknown private name": "def f(item):\n"
                                          "    return getattr(item, '_exportOpts', None)\n",
    "wrapInstance imported": "from shiboken6 import wrapInstance\n",
    "wrapInstance called": "import shiboken6\nshiboken6.wrapInstance(0, object)\n",
    "object.__new__ kept": "_new = object.__new__\n",
    "object.__new__ called": "class R:\n    pass\nr = object.__new__(R)\n",
    "override of a private method": "import pyqtgraph as pg\n"
                                    "class LogAxis(pg.AxisItem):\n"
                                    "    def _updateLabel(self):\n        pass\n",
    "override through a base of ours": "from PySide6.QtWidgets import QWidget\n"
                                       "class A(QWidget):\n    pass\n"
                                       "class B(A):\n"
                                       "    def _updateLabel(self):\n        pass\n"
                                       "import pyqtgraph\n"
                                       "class C(pyqtgraph.AxisItem):\n    pass\n"
                                       "class D(C):\n"
                                       "    def _updateLabel(self):\n        pass\n",
    "inherited private attribute read": "import pyqtgraph as pg\n"
                                        "class Spots(pg.ScatterPlotItem):\n"
                                        "    def paint(self, p, *args):\n"
                                        "        return self._exportOpts\n",
    "private method of the base called": "import pyqtgraph as pg\n"
                                         "class Axis(pg.AxisItem):\n"
                                         "    def _updateLabel(self):\n"
                                         "        super()._updateLabel()\n",
}

#: what the check says about each (a part of its line)
EXPECTED = {
    "private module attribute": "uses yaml._x",
    "private attribute down a chain": "uses pyqtgraph.graphicsItems.ScatterPlotItem._y",
    "private name imported": "imports pyqtgraph.graphicsItems.ScatterPlotItem._mkPen",
    "private module imported": "imports yaml._yaml",
    "internal package imported": "imports shibokensupport.feature",
    "internal package by name": "names 'shibokensupport.feature'",
    "unknown private attribute set": ":2: _mod_uses_pyside, which no code of ours defines",
    "unknown private attribute read": ":2: _exportOpts, which no code of ours defines",
    "getattr of an unknown private name": "getattr(…, '_exportOpts')",
    "wrapInstance imported": ":1: imports shiboken6.wrapInstance",
    "wrapInstance called": ":2: shiboken6.wrapInstance",
    "object.__new__ kept": ":1: object.__new__",
    "object.__new__ called": ":3: object.__new__",
    "override of a private method": ":2: class LogAxis overrides _updateLabel of pyqtgraph.AxisItem",
    "override through a base of ours": ":10: class D overrides _updateLabel of pyqtgraph.AxisItem",
    "inherited private attribute read": ":4: _exportOpts of pyqtgraph.ScatterPlotItem",
    "private method of the base called": ":4: _updateLabel of pyqtgraph.AxisItem",
}


@pytest.mark.parametrize("what", list(BAD))
def test_the_check_finds_each_kind_of_violation(what):
    found = _check(BAD[what])
    assert any(EXPECTED[what] in line for line in found), found


def test_the_check_finds_a_violation_through_a_class_of_another_module():
    found = _check("from workbench.y import Axis\n"
                   "class Mine(Axis):\n    def _updateLabel(self):\n        pass\n",
                   workbench__y="import pyqtgraph as pg\nclass Axis(pg.AxisItem):\n    pass\n")
    assert found == ["workbench.x:2: class Mine overrides _updateLabel of pyqtgraph.AxisItem"]


def test_the_check_passes_what_is_ours():
    assert _check(
        "from PySide6.QtWidgets import QWidget\n"
        "import yaml\n"
        "class Panel(QWidget):\n"
        "    _shown = False\n"
        "    def __init__(self, parent=None):\n"
        "        super().__init__(parent)\n"
        "        self._rows = []\n"
        "    def _refresh(self):\n"
        "        return self._rows, self._shown, self.__class__.__name__\n"
        "class Plain:\n"
        "    __slots__ = ('_a',)\n"
        "    def f(self, other):\n"
        "        return self._b, other._a, other._rows\n"
        "def g(panel):\n"
        "    panel._refresh()\n"
        "    return yaml.safe_load('a: 1'), getattr(panel, '_shown')\n"
    ) == []
