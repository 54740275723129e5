"""The suite's processes share what is costly to make: every test file that reads the example
exports runs in the process that made them, as one unit of work."""

from __future__ import annotations

import re

from conftest import ROOT, SHARED_EXPORTS, FilesSharingExports


def _readers_of_the_example_exports() -> set[str]:
    uses = re.compile(r"^\s*from figures\.example_figures import", re.MULTILINE)
    return {path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").rglob("test_*.py")
            if uses.search(path.read_text(encoding="utf-8"))}


def test_every_reader_of_the_example_exports_is_scheduled_with_the_others():
    assert set(SHARED_EXPORTS) == _readers_of_the_example_exports()


def test_the_readers_are_one_unit_of_work_and_every_other_file_its_own():
    scheduler = object.__new__(FilesSharingExports)  # (its set-up wants running processes)
    scope = scheduler._split_scope
    assert {scope(f"{path}::test_x[a-b]") for path in SHARED_EXPORTS} == {SHARED_EXPORTS[0]}
    assert scope("tests/ui/test_keyboard.py::test_x") == "tests/ui/test_keyboard.py"
    assert scope("tests/figures/test_small_figures.py::Case::test_y") == (
        "tests/figures/test_small_figures.py")
