"""A record (``workbench.records.record``) answers as the dataclass of the same class:
equality, hash, text, immutability and the dataclass functions, for each kind of field.

Each class is written once, in a function, and made twice: by ``dataclasses.dataclass`` and by
``record``; the two are then asked the same questions."""

from __future__ import annotations

import dataclasses
import math
import pickle
from dataclasses import FrozenInstanceError, field

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


def test_a_record_pickles_and_names_its_methods():
    x = _Kept(3)
    assert pickle.loads(pickle.dumps(x)) == x
    assert _Kept.__eq__.__qualname__ == "_Kept.__eq__"
    assert _Kept.__hash__.__name__ == "__hash__"


def test_the_product_makes_its_classes_as_records():
    """Every dataclass of the product is a record: the window's start-up compiles no method
    that a record makes without compiling."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1] / "workbench"
    plain = [str(p.relative_to(root)) for p in root.rglob("*.py")
             if re.search(r"^\s*@(dataclasses\.)?dataclass\b", p.read_text(), re.M)]
    assert plain == []
