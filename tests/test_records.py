"""A record (``workbench.records.record``) answers as the dataclass of the same class:
equality, hash, text, immutability and the dataclass functions, for each kind of field.

Each class is written once, in a function, and made twice: by ``dataclasses.dataclass`` and by
``record``; the two are then asked the same questions."""

from __future__ import annotations

import dataclasses
import math
import pickle
from dataclasses import FrozenInstanceError, InitVar, field
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.records import record


def _plain(make):
    @make
    class Plain:
        a: int
        b: str = "x"
        c: list = field(default_factory=list)

    return Plain


def _frozen(make):
    @make(frozen=True)
    class Frozen:
        a: float
        b: tuple = ()
        note: str = field(default="", compare=False)
        shown: int = field(default=0, repr=False)
        unhashed: int = field(default=0, hash=False)

    return Frozen


def _single(make, **options):
    """A class of one field, made by ``make(**options)``."""
    @make(**options)
    class One:
        a: float

    return One


def _one(make):
    return _single(make, frozen=True)


def _none(make):
    @make(frozen=True)
    class Nothing:
        pass

    return Nothing


def _own_methods(make):
    @make(frozen=True)
    class Own:
        a: int

        def __repr__(self) -> str:
            return f"own {self.a}"

        def __eq__(self, other) -> bool:
            return isinstance(other, Own) and abs(self.a - other.a) <= 1

        def __hash__(self) -> int:
            return 7

    return Own


def _no_eq(make):
    return _single(make, eq=False)


def _inherited(make):
    @make(frozen=True)
    class Base:
        a: int

    @make(frozen=True)
    class Child(Base):
        b: int = 2

    return Base, Child


def _both(build):
    return build(dataclasses.dataclass), build(record)


def _same_class_name(made_by_dataclass, made_by_record):
    assert made_by_dataclass.__qualname__.split(".")[-1] == made_by_record.__qualname__.split(".")[-1]


def _text(obj) -> str:
    """The repr with the defining function's part of the class name left out."""
    return repr(obj).replace(obj.__class__.__qualname__, obj.__class__.__name__)


@given(a=st.integers(), b=st.text(max_size=5), c=st.lists(st.integers(), max_size=3),
       a2=st.integers(), b2=st.text(max_size=5))
def test_a_mutable_record_compares_and_reads_as_its_dataclass(a, b, c, a2, b2):
    dc, rec = _both(_plain)
    _same_class_name(dc, rec)
    for x, y in ((dc(a, b, c), dc(a2, b2, c)), (rec(a, b, c), rec(a2, b2, c))):
        assert (x == y) == ((a, b) == (a2, b2))
        assert x == type(x)(a, b, list(c))
        assert (x != y) == ((a, b) != (a2, b2))
    assert _text(dc(a, b, c)) == _text(rec(a, b, c))
    with pytest.raises(TypeError):
        hash(rec(a, b, c))  # (mutable and compared: unhashable, as the dataclass)
    moved = rec(a, b, c)
    moved.a = a2  # (mutable)
    assert moved.a == a2


@given(a=st.floats(allow_nan=True), b=st.tuples(st.integers()), note=st.text(max_size=3),
       shown=st.integers(), unhashed=st.integers(), other=st.floats(allow_nan=True))
def test_a_frozen_record_compares_hashes_and_reads_as_its_dataclass(a, b, note, shown, unhashed,
                                                                    other):
    dc, rec = _both(_frozen)
    for make in (dc, rec):
        x = make(a, b, note, shown, unhashed)
        assert x == make(a, b, "other note", shown, unhashed)  # (note: not compared)
        assert (x == make(other, b, note, shown, unhashed)) == (x.a == other or x.a is other)
    x_dc, x_rec = dc(a, b, note, shown, unhashed), rec(a, b, note, shown, unhashed)
    # the same fields hashed (compare=True, less hash=False): the same tuple, the same hash
    assert hash(x_dc) == hash(x_rec) == hash((a, b, shown))
    assert _text(x_dc) == _text(x_rec)  # (shown: left out of the text)
    assert "shown=" not in repr(x_rec) and "note=" in repr(x_rec)
    with pytest.raises(FrozenInstanceError):
        x_rec.a = 1.0
    with pytest.raises(FrozenInstanceError):
        del x_rec.b
    assert dataclasses.replace(x_rec, a=2.0).a == 2.0
    assert dataclasses.asdict(x_rec) == dataclasses.asdict(x_dc)
    assert [f.name for f in dataclasses.fields(x_rec)] == [f.name for f in dataclasses.fields(x_dc)]
    assert rec.__match_args__ == dc.__match_args__


def test_the_same_nan_object_is_equal_to_itself_as_in_a_dataclass_tuple():
    nan = math.nan
    for one in _both(_one):
        assert one(nan) == one(nan)  # (tuples compare the same object as equal)
        assert one(nan) != one(float("nan"))
        assert hash(one(1.5)) == hash((1.5,))


def test_a_record_with_no_fields_equals_every_other_of_its_class():
    for nothing in _both(_none):
        assert nothing() == nothing() and hash(nothing()) == hash(())
    dc, rec = _both(_none)
    assert dc() != rec()  # (another class: not equal)
    assert rec().__eq__(dc()) is NotImplemented


def test_methods_a_class_writes_itself_are_kept():
    for own in _both(_own_methods):
        assert repr(own(1)) == "own 1"
        assert own(1) == own(2) and own(1) != own(5)
        assert hash(own(1)) == hash(own(9)) == 7


def test_eq_false_keeps_identity():
    for identity in _both(_no_eq):
        x = identity(1)
        assert x != identity(1) and x == x
        assert hash(x) == object.__hash__(x)


def test_a_subclass_compares_its_own_fields_and_never_equals_its_base():
    (_, child_dc), (base_rec, child_rec) = _both(_inherited)
    assert child_rec(1, 2) == child_rec(1, 2) and child_rec(1, 2) != child_rec(1, 3)
    assert child_rec(1, 2) != base_rec(1)
    assert hash(child_rec(1, 2)) == hash(child_dc(1, 2)) == hash((1, 2))
    assert _text(child_rec(1, 2)) == _text(child_dc(1, 2))


def test_a_record_that_holds_itself_reads_as_dots():
    for plain in _both(_plain):
        x = plain(1)
        x.c.append(x)
        assert "[...]" in repr(x) or "...)" in repr(x)


@record(frozen=True)
class _Kept:
    a: int
    b: str = "x"


def _built(make):
    """A class of each way a field is given to ``__init__``, and a ``__post_init__``."""
    @make
    class Built:
        a: int
        b: list = field(default_factory=list)
        c: str = "c"
        hidden: int = field(default=5, init=False)
        unset: int = field(init=False, repr=False, compare=False)
        made: dict = field(default_factory=dict, init=False)

        def __post_init__(self) -> None:
            self.seen = (self.a, self.hidden)

    return Built


def _signature(make) -> list[tuple[str, object]]:
    import inspect

    params = inspect.signature(make.__init__).parameters.values()
    return [(p.name, p.kind, "factory" if repr(p.default) == "<factory>" else p.default)
            for p in params]


@given(a=st.integers(), b=st.lists(st.integers(), max_size=3), c=st.text(max_size=3))
def test_a_record_is_built_as_its_dataclass(a, b, c):
    dc, rec = _both(_built)
    assert _signature(dc) == _signature(rec)
    for args, kwargs in (((a,), {}), ((a, b), {}), ((a, b, c), {}), ((), {"a": a, "c": c}),
                         ((a,), {"c": c, "b": b})):
        x_dc, x_rec = dc(*args, **kwargs), rec(*args, **kwargs)
        assert vars(x_dc) == vars(x_rec) and list(vars(x_dc)) == list(vars(x_rec))
        assert x_rec.seen == (a, 5) and not hasattr(x_rec, "unset")
        assert dataclasses.replace(x_rec, a=a + 1).a == a + 1
    assert rec(a).b is not rec(a).b and rec(a).made is not rec(a).made  # (one each)
    for bad_args, bad_kwargs in (((), {}), ((a, b, c, 1), {}), ((a,), {"a": a}),
                                 ((a,), {"hidden": 1}), ((a,), {"z": 1})):
        with pytest.raises(TypeError) as by_dc:
            dc(*bad_args, **bad_kwargs)
        with pytest.raises(TypeError) as by_rec:
            rec(*bad_args, **bad_kwargs)
        assert str(by_rec.value) == str(by_dc.value).replace(dc.__init__.__qualname__,
                                                             rec.__init__.__qualname__)


def test_a_default_before_a_field_without_one_is_refused_as_by_the_dataclass():
    for make in (dataclasses.dataclass, record):
        with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
            @make
            class Wrong:
                a: int = 1
                b: int


def test_a_frozen_record_refuses_its_fields_and_a_subclass_may_add_its_own_attributes():
    (base_dc, child_dc), (base_rec, child_rec) = _both(_inherited)
    for base, child in ((base_dc, child_dc), (base_rec, child_rec)):
        with pytest.raises(FrozenInstanceError, match="cannot assign to field 'z'"):
            base(1).z = 2  # (the class's own instances: nothing at all)
        x = child(1)
        with pytest.raises(FrozenInstanceError, match="cannot delete field 'a'"):
            del x.a
        with pytest.raises(FrozenInstanceError, match="cannot assign to field 'b'"):
            x.b = 3
    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        @record(frozen=True)
        class Guarded:
            a: int

            def __setattr__(self, name, value):
                pass


def test_class_variables_descriptors_and_own_setattr_are_honoured_as_by_the_dataclass():
    def build(make):
        class Doubled:
            def __set_name__(self, owner, name):
                self.name = "_" + name

            def __get__(self, obj, owner=None):
                return 0 if obj is None else getattr(obj, self.name)

            def __set__(self, obj, value):
                object.__setattr__(obj, self.name, 2 * value)

        @make(frozen=True)
        class Counted:
            total: ClassVar[int] = 0
            a: int
            b: int = Doubled()
            self: int = 1  # (a field named self: the instance is named otherwise)

        @make
        class Watched:
            a: int
            b: list = field(default_factory=list)

            def __setattr__(self, name, value):
                object.__setattr__(self, "log", [*getattr(self, "log", []), name])
                object.__setattr__(self, name, value)

        @make
        class Plainly:
            a: int
            c: int = Doubled()

        return Counted, Watched, Plainly

    made = _both(build)
    for counted, watched, plainly in made:
        x = counted(1, 3, self=4)
        assert (x.a, x.b, x.self, counted.total) == (1, 6, 4, 0)
        assert watched(1).log == ["a", "b"]
        assert plainly(1, 4).c == 8 and vars(plainly(1, 4)) == {"a": 1, "_c": 8}
    assert vars(made[0][0](1, 3)) == vars(made[1][0](1, 3))


def test_what_a_record_does_not_take_is_refused():
    with pytest.raises(TypeError, match="no keyword-only fields"):
        @record
        class Named:
            a: int = field(default=1, kw_only=True)
    with pytest.raises(TypeError, match="no InitVar fields"):
        @record
        class Passed:
            a: int
            scale: InitVar[int] = 1


def test_a_record_pickles_and_names_its_methods():
    x = _Kept(3)
    assert pickle.loads(pickle.dumps(x)) == x
    assert _Kept.__eq__.__qualname__ == "_Kept.__eq__"
    assert _Kept.__hash__.__name__ == "__hash__"
    assert _Kept.__init__.__qualname__ == "_Kept.__init__"
    assert _Kept.__init__.__module__ == __name__ == _Kept.__module__
    assert _Kept.__setattr__.__qualname__ == "_Kept.__setattr__"


def test_the_product_makes_its_classes_as_records():
    """Every dataclass of the product is a record: the window's start-up compiles no method
    that a record makes without compiling."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1] / "workbench"
    plain = [str(p.relative_to(root)) for p in root.rglob("*.py")
             if re.search(r"^\s*@(dataclasses\.)?dataclass\b", p.read_text(), re.M)]
    assert plain == []


def test_every_record_of_the_product_has_a_docstring_of_its_own():
    """A dataclass without a docstring gets one made from :func:`inspect.signature` of the
    class, worked out as the class is made: 14 M instructions at start-up for the first one
    (0.5 % of it), which a docstring of its own costs nothing."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "workbench"
    bare = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None
                    and any("record" in ast.unparse(d) for d in node.decorator_list)):
                bare.append(f"{path.relative_to(root)}:{node.lineno} {node.name}")
    assert bare == []
