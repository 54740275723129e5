"""The suite's two processes share what is costly to make and end together: every test file
that reads the example exports runs in the process that made them, as one unit of work, and
the long files are handed out first."""

from __future__ import annotations

import re

from conftest import LONG_FIRST, ROOT, SHARED_EXPORTS, SuiteScheduling


def _readers_of_the_example_exports() -> set[str]:
    uses = re.compile(r"^\s*from figures\.example_figures import", re.MULTILINE)
    return {path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").rglob("test_*.py")
            if uses.search(path.read_text(encoding="utf-8"))}


def test_every_reader_of_the_example_exports_is_scheduled_with_the_others():
    assert set(SHARED_EXPORTS) == _readers_of_the_example_exports()


def test_the_readers_are_one_unit_of_work_and_every_other_file_its_own():
    scheduler = object.__new__(SuiteScheduling)  # (its set-up wants running processes)
    scope = scheduler._split_scope
    assert {scope(f"{path}::test_x[a-b]") for path in SHARED_EXPORTS} == {SHARED_EXPORTS[0]}
    assert scope("tests/ui/test_keyboard.py::test_x") == "tests/ui/test_keyboard.py"
    assert scope("tests/figures/test_small_figures.py::Case::test_y") == (
        "tests/figures/test_small_figures.py")


def test_the_long_files_are_handed_out_first():
    """The soak is one test of some 40 s: handed out last (a file of one test comes last),
    one process ran it alone for all that time while the other had finished."""
    from collections import OrderedDict

    assert all((ROOT / path).is_file() for path in LONG_FIRST)

    class Node:
        def __init__(self):
            self.sent: list[list[int]] = []

        def send_runtest_some(self, indexes):
            self.sent.append(indexes)

    node = Node()
    collection = ["tests/a.py::t1", "tests/a.py::t2", f"{LONG_FIRST[0]}::t", "tests/b.py::t"]
    scheduler = object.__new__(SuiteScheduling)
    scheduler.workqueue = OrderedDict((path, {f"{path}::{t}": False for t in tests})
                                      for path, tests in (("tests/a.py", ("t1", "t2")),
                                                          ("tests/b.py", ("t",)),
                                                          (LONG_FIRST[0], ("t",))))
    scheduler.assigned_work, scheduler.registered_collections = {}, {node: collection}
    scheduler._assign_work_unit(node)
    scheduler._assign_work_unit(node)
    assert node.sent == [[2], [0, 1]]
