"""Errors leave a trail: counting and evaluation errors are caught by their one name
(``COUNTING_ERRORS``, from the engine), no handler swallows an error without a word, and a
catch-all stands only where a measurement library runs (its faults shown and logged) or
where what was half-made is cleaned up and the error raised again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from workbench.model.errors import COUNTING_ERRORS
from workbench.model.hardware import UnknownLevel, UnsupportedPrecision
from workbench.model.llm.architecture import SetupError
from workbench.model.operations import Operation
from workbench.model.sweeps import SweepError
from workbench.model.units import QuantityError

PACKAGE = Path(__file__).resolve().parent.parent / "workbench"

#: where a catch-all may stand: the code that drives a measurement library (numpy, PyTorch,
#: CuPy, a GPU driver), whose faults are the library's, and the threads and the command that
#: run it, which show them to the user (and log them, in the app)
CATCH_ALL_MODULES = ("measure/", "cli/measure.py", "ui/dialogs/measure_dialog.py",
                     "ui/dialogs/measure_op.py",
                     # the import's reading thread: the error goes to the window, which shows it
                     "ui/panels/measurements_panel.py")


def _handlers():
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(func):
                    if isinstance(node, ast.ExceptHandler):
                        yield path.relative_to(PACKAGE).as_posix(), func.name, node


def _names(node: ast.expr | None) -> set[str]:
    if node is None:
        return {"<bare>"}
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    return {ast.unparse(item) for item in items}


def test_no_handler_swallows_an_error_without_a_word():
    """``except …: pass`` hides a fault from the user and from the log: a handler says
    what it does instead (a value, a message, a log line) or uses contextlib.suppress with
    its reason beside it."""
    silent = [f"{module}:{node.lineno}" for module, _, node in _handlers()
              if len(node.body) == 1 and isinstance(node.body[0], ast.Pass)]
    assert silent == []


def test_catch_alls_stand_only_at_the_measurement_threads():
    broad = [f"{module}:{node.lineno}" for module, _, node in _handlers()
             if _names(node.type) & {"Exception", "BaseException", "<bare>"}
             and not module.startswith(CATCH_ALL_MODULES)
             and not (len(node.body) >= 1 and isinstance(node.body[-1], ast.Raise))]
    assert broad == []



@pytest.mark.parametrize("error", [QuantityError("q"), SetupError("batch", "s"), SweepError("w"),
                                   UnsupportedPrecision("p"), UnknownLevel("l"),
                                   ZeroDivisionError("z"), OverflowError("o"), TypeError("t")])
def test_every_engine_error_of_counting_is_one_of_the_contract(error):
    assert isinstance(error, COUNTING_ERRORS)


@pytest.mark.parametrize("params", [{"m": 4, "n": 8, "k": 8, "dtype": "bf17"},
                                    {"m": "four", "n": 8, "k": 8, "dtype": "bf16"}])
def test_an_operation_with_invalid_parameters_raises_a_counting_error(params):
    with pytest.raises(COUNTING_ERRORS):
        Operation("gemm", params).counts()
