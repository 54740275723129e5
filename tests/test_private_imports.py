"""No module of the package takes another module's private names: a name used elsewhere is public.

A module's underscored names are its own business; whatever another module needs is part of
its interface and is named so (no underscore, in ``__all__`` where the module has one). This
test keeps it so, for every module under ``workbench/``, by reading its source with
:mod:`ast` (imports inside functions and under ``TYPE_CHECKING`` included). Refused:

* importing an underscored name from another module of ours: ``from workbench.x import _y``,
  ``from .x import _y``, or an underscored module (``import workbench._x``);
* an underscored attribute of another module of ours, reached through an import of the
  module: ``import workbench.x`` then ``workbench.x._y``, ``from workbench import x`` then
  ``x._y``, ``getattr(x, "_y")``.

Dunder names (``from workbench import __version__``) are not private, ``__future__`` is not
ours, and a module may name its own underscored names however it likes. Reading another
*class*'s private attributes is :mod:`test_owned_state`'s business; another *library*'s is
:mod:`test_public_api_only`'s.
"""

from __future__ import annotations

import ast

import pytest
from test_import_layers import read_package

PACKAGE_NAME = "workbench"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _ours(dotted: str) -> bool:
    return dotted.split(".")[0] == PACKAGE_NAME


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The dotted name a ``from … import`` reads from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = (module if is_package else module.rpartition(".")[0]).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _module_named(node: ast.AST, names: dict[str, str], modules) -> str | None:
    """The module of ours an expression names (``workbench.x``, ``x``) through the local
    ``names`` of imported modules, if any."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    dotted = ".".join([names[node.id], *reversed(parts)])
    return dotted if dotted in modules else None


def violations(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """Every private name of one module of ours taken by another, as ``module:line: what``."""
    found: list[str] = []
    for module, (source, is_package) in modules.items():
        tree = ast.parse(source)

        def report(node: ast.AST, what: str, module=module) -> None:
            found.append(f"{module}:{node.lineno}: {what}")

        names: dict[str, str] = {}  # local name → the module of ours it names
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if not _ours(alias.name):
                        continue
                    if any(_private(part) for part in alias.name.split(".")):
                        report(alias, f"imports {alias.name}")
                    if alias.asname:
                        names[alias.asname] = alias.name
                    else:
                        names[PACKAGE_NAME] = PACKAGE_NAME
            elif isinstance(node, ast.ImportFrom):
                source_module = _absolute(node, module, is_package)
                if source_module == "__future__" or not _ours(source_module):
                    continue
                for alias in node.names:
                    dotted = f"{source_module}.{alias.name}"
                    if source_module != module and any(_private(part)
                                                       for part in dotted.split(".")):
                        report(alias, f"imports {dotted}")  # the name's own line
                    if dotted in modules:
                        names[alias.asname or alias.name] = dotted

        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                owner = _module_named(node.value, names, modules)
                if owner is not None and owner != module:
                    report(node, f"uses {owner}.{node.attr}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
                  and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                  and isinstance(node.args[1].value, str) and _private(node.args[1].value)):
                owner = _module_named(node.args[0], names, modules)
                if owner is not None and owner != module:
                    report(node, f"{node.func.id}({owner}, {node.args[1].value!r})")
    return sorted(set(found), key=lambda line: (line.split(":")[0], int(line.split(":")[1]), line))


# ---------------------------------------------------------------------------------------------
# the package


def test_the_package_is_read():
    assert {"workbench.model.terms", "workbench.ui.editors.fields"} <= set(read_package())


def test_no_module_takes_another_modules_private_names():
    found = violations(read_package())
    assert not found, (f"{len(found)} private names taken from another module (make them "
                       "public):\n" + "\n".join(found))


# ---------------------------------------------------------------------------------------------
# the check itself, on small made-up packages


def _check(source: str, **others: str) -> list[str]:
    modules = {"workbench.a.x": (source, False), "workbench.a": ("", True),
               "workbench": ("", True)}
    modules.update({name.replace("__", "."): (text, False) for name, text in others.items()})
    return violations(modules)


BAD = {
    "private name imported": ("from workbench.a.y import _y\n", ":1: imports workbench.a.y._y"),
    "private name imported under another": ("from workbench.a.y import _y as y\n",
                                            ":1: imports workbench.a.y._y"),
    "private name imported in a function": ("def f():\n    from workbench.a.y import _Y\n",
                                            ":2: imports workbench.a.y._Y"),
    "private name imported relatively": ("from .y import _y\n", ":1: imports workbench.a.y._y"),
    "private name two levels up": ("from ..b import _z\n", ":1: imports workbench.b._z"),
    "private module imported": ("import workbench.a._y\n", ":1: imports workbench.a._y"),
    "private module imported from": ("from workbench.a import _y\n",
                                     ":1: imports workbench.a._y"),
    "private attribute of an imported module": ("import workbench.a.y\n"
                                                "v = workbench.a.y._y\n",
                                                ":2: uses workbench.a.y._y"),
    "private attribute through an alias": ("import workbench.a.y as m\nm._y()\n",
                                           ":2: uses workbench.a.y._y"),
    "private attribute of a module imported from its package": (
        "from workbench.a import y\ny._y = 1\n", ":2: uses workbench.a.y._y"),
    "private attribute of a relatively imported module": ("from . import y\nv = y._y\n",
                                                          ":2: uses workbench.a.y._y"),
    "private attribute by getattr": ("from workbench.a import y\nv = getattr(y, '_y')\n",
                                     ":2: getattr(workbench.a.y, '_y')"),
}


@pytest.mark.parametrize("what", list(BAD))
def test_the_check_finds_each_kind_of_violation(what):
    source, expected = BAD[what]
    found = _check(source, workbench__a__y="_y = 1\n", workbench__b="_z = 1\n")
    assert len(found) == 1 and found[0].startswith("workbench.a.x") and expected in found[0], found


def test_the_check_names_the_line_of_each_name_imported():
    assert _check("from workbench.a.y import (\n    Public,\n    _y,\n)\n",
                  workbench__a__y="Public = _y = 1\n") == ["workbench.a.x:3: imports workbench.a.y._y"]


def test_the_check_passes_what_is_allowed():
    assert _check(
        "from __future__ import annotations\n"
        "import workbench.a.y\n"
        "import workbench.a.y as m\n"
        "from workbench import __version__\n"
        "from workbench.a.y import Public, public as _public\n"
        "from . import y\n"
        "from workbench.a.x import _own\n"
        "import os\n"
        "_own = 1\n"
        "def f(obj):\n"
        "    from os.path import _get_sep\n"
        "    return (workbench.a.y.Public, m.__name__, y.__doc__, _own, obj._y, os._exit,\n"
        "            getattr(y, 'public'), getattr(obj, '_y'), _public, _get_sep)\n",
        workbench__a__y="Public = public = 1\n",
    ) == []
