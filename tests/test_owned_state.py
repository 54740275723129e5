"""Every piece of state has one owner: no module reads another's private attributes.

The chart canvas is made of collaborators (points, labels, overlays, hover, legend, …), each
owning its attributes and offering the others a small public interface. This test keeps it
so, for every module under ``workbench/``, by reading its source with :mod:`ast`:

1. **Another object's private attribute.** ``obj._name`` is refused unless ``obj`` is
   ``self``, ``cls`` or ``super()`` (rule 2 judges those) or the module itself defines
   ``_name`` (a function, a class, a class attribute or slot, or an attribute its classes
   set on ``self``): a module may reach into other instances of its own classes, never into
   a class written elsewhere.
2. **A private attribute nobody here defined.** Within a class, ``self._name`` (or
   ``cls._name``, ``super()._name``) is refused unless that class or one of its bases
   *defined in the same module* defines ``_name``: a mixin reading ``self._points`` that
   another module's class sets is shared state in disguise, and so is an override of
   another module's private hook.

Dunder names (``__dict__``, ``__class__``) and the named-tuple API (``_replace``,
``_asdict``, ``_fields``, ``_make``: public despite the underscore) are not private; nor are
the few underscored names of other libraries used knowingly, each with its reason, listed
once in :data:`test_public_api_only.ACCEPTED` (PyTorch's fp8 GEMM, ``torch._scaled_mm``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_public_api_only import ACCEPTED

ROOT = Path(__file__).resolve().parent.parent / "workbench"

#: public despite the leading underscore (collections.namedtuple's API)
NOT_PRIVATE = {"_replace", "_asdict", "_fields", "_make"}


def _private(name: str) -> bool:
    return (name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
            and name not in NOT_PRIVATE)


def _is_own(node: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "super")


def _walk_class(cls: ast.ClassDef):
    """The nodes of a class's body, not descending into nested classes."""
    stack = list(cls.body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if not isinstance(child, ast.ClassDef))


def _targets(node: ast.AST):
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    if isinstance(node, ast.For | ast.AsyncFor):
        return [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars]
    return []


def _flatten(target: ast.expr):
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _flatten(element)
    elif isinstance(target, ast.Starred):
        yield from _flatten(target.value)
    else:
        yield target


def _class_defines(cls: ast.ClassDef) -> set[str]:
    """The names a class defines: its methods, class attributes and ``__slots__``, and what
    its methods set on ``self`` / ``cls``."""
    out = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        for target in _targets(node):
            for t in _flatten(target):
                if isinstance(t, ast.Name):
                    out.add(t.id)
                    if t.id == "__slots__" and isinstance(node.value, ast.Tuple | ast.List):
                        out.update(e.value for e in node.value.elts
                                   if isinstance(e, ast.Constant) and isinstance(e.value, str))
    for node in _walk_class(cls):
        for target in _targets(node):
            for t in _flatten(target):
                if isinstance(t, ast.Attribute) and _is_own(t.value):
                    out.add(t.attr)
    return out


def violations(source: str, name: str = "<module>") -> list[str]:
    """Every breach of the two rules (see the module docstring) in one module's source."""
    tree = ast.parse(source)
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    defines = {cls.name: _class_defines(cls) for cls in classes}
    by_name = {cls.name: cls for cls in classes}
    module_defines: set[str] = set().union(*defines.values()) if defines else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            module_defines.add(node.name)
        for target in _targets(node):
            for t in _flatten(target):
                if isinstance(t, ast.Name):
                    module_defines.add(t.id)

    out = []
    # rule 1: another object's private attribute
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr)
                and not _is_own(node.value) and node.attr not in module_defines
                and node.attr not in ACCEPTED):
            out.append(f"{name}:{node.lineno}: {ast.unparse(node)} reads another's private "
                       "attribute")

    # rule 2: a class's own private attributes are defined by it or a base in this module
    def lineage(cls: ast.ClassDef, seen: set[str]) -> set[str]:
        names = set(defines[cls.name])
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in by_name and base.id not in seen:
                seen.add(base.id)
                names |= lineage(by_name[base.id], seen)
        return names

    for cls in classes:
        own = lineage(cls, {cls.name})
        for node in _walk_class(cls):
            if (isinstance(node, ast.Attribute) and _private(node.attr)
                    and _is_own(node.value) and node.attr not in own):
                out.append(f"{name}:{node.lineno}: {cls.name} uses {ast.unparse(node)}, which "
                           "neither it nor a base class in this module defines")
    return out


def all_violations() -> list[str]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        out += violations(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT.parent)))
    return out


def test_no_module_reads_another_modules_private_attributes():
    found = all_violations()
    assert not found, f"{len(found)} private attributes read across owners:\n" + "\n".join(found)


def test_the_rules_catch_what_they_are_meant_to():
    """Not vacuous: each rule refuses its example, and allows what it should."""
    mixin = (
        "class Points:\n"
        "    def draw(self):\n"
        "        self._points = {}\n"
        "class Labels:\n"
        "    def place(self):\n"
        "        return self._points\n"
    )
    assert len(violations(mixin)) == 1
    reach = "def f(canvas):\n    return canvas._points\n"
    assert len(violations(reach)) == 1
    own = (
        "class A:\n"
        "    _cache = None\n"
        "    def __init__(self):\n"
        "        self._items = []\n"
        "    def merge(self, other: 'A'):\n"
        "        return self._items + other._items + [self._cache, self.__dict__]\n"
        "class B(A):\n"
        "    def first(self):\n"
        "        return super()._items[0], p._replace(x=1)\n"
    )
    assert violations(own) == []
