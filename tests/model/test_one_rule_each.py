"""Each rule of the roofline is written once (:mod:`workbench.model.rules`): no module of the
package computes an intensity, a ridge, an attainable rate, the side of the ridge or T_work
itself, nor writes their formula texts out again. Read from the sources with :mod:`ast`."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest

from workbench.model import rules
from workbench.model.operations import CONVENTIONS

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"
RULES = PACKAGE / "model" / "rules.py"

FLOPS = re.compile(r"flop", re.I)
BYTES = re.compile(r"byte", re.I)
PEAK = re.compile(r"peak|\btop\b", re.I)
BANDWIDTH = re.compile(r"bandwidth|\bbw\b|fastest", re.I)
INTENSITY = re.compile(r"intensity|\bx_lo\b|\bx\b", re.I)
T_MATH = re.compile(r"t_math", re.I)
T_MEM = re.compile(r"t_mem", re.I)
RIDGE = re.compile(r"ridge", re.I)


def _sources(package: Path = PACKAGE):
    for path in sorted(package.rglob("*.py")):
        if path != RULES and "measure" not in path.relative_to(package).parts:
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def _restated(package: Path = PACKAGE) -> list[str]:
    """Each rule written out in a module of ``package`` (the product's by default)."""
    found = []
    for path, tree in _sources(package):
        where = f"{path.relative_to(package)}:"
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp):
                left, right = ast.unparse(node.left), ast.unparse(node.right)
                if isinstance(node.op, ast.Div) and FLOPS.search(left) and BYTES.search(right) \
                        and not re.search(r"time|\bt\b|_s\b", right):
                    found.append(f"{where}{node.lineno} intensity: {ast.unparse(node)}")
                if isinstance(node.op, ast.Div) and PEAK.search(left) and BANDWIDTH.search(right):
                    found.append(f"{where}{node.lineno} ridge: {ast.unparse(node)}")
                if isinstance(node.op, ast.Mult) and (
                        (INTENSITY.search(left) and BANDWIDTH.search(right))
                        or (BANDWIDTH.search(left) and INTENSITY.search(right))):
                    found.append(f"{where}{node.lineno} attainable: {ast.unparse(node)}")
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
                    node.ops[0], (ast.GtE, ast.Gt, ast.Lt, ast.LtE)):
                left, right = ast.unparse(node.left), ast.unparse(node.comparators[0])
                if (T_MATH.search(left) and T_MEM.search(right)) or (
                        T_MEM.search(left) and T_MATH.search(right)) or (
                        INTENSITY.search(left) and RIDGE.search(right)) or (
                        RIDGE.search(left) and INTENSITY.search(right)):
                    found.append(f"{where}{node.lineno} side of the ridge: {ast.unparse(node)}")
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("max", "np.maximum") \
                    and len(node.args) == 2 and any("e_math" in ast.unparse(a) for a in node.args):
                found.append(f"{where}{node.lineno} T_work: {ast.unparse(node)}")
    return found


def test_no_module_writes_a_rule_outside_its_function():
    assert _restated() == []


def test_the_check_finds_each_rule_written_again(tmp_path):
    """The check is not blind: each rule written out in a module is found. The module is
    written in a folder of its own, never into the package, which other tests (and other
    test processes) read at the same time."""
    module = tmp_path / "model" / "_rule_copy_probe.py"
    module.parent.mkdir()
    module.write_text("def f(flops, nbytes, peak, bandwidth, intensity, t_math, t_mem, c):\n"
                      "    a = flops / nbytes\n    r = peak / bandwidth\n"
                      "    y = min(peak, intensity * bandwidth)\n    s = intensity < ridge\n"
                      "    w = max(t_math / c.e_math, t_mem / c.e_mem)\n", encoding="utf-8")
    kinds = [line.split(" ", 1)[1].split(":")[0] for line in _restated(tmp_path)
             if line.startswith("model/_rule_copy_probe.py")]
    assert sorted(kinds) == ["T_work", "attainable", "intensity", "ridge", "side of the ridge"]


FORMULA_TEXTS = ["peak / bandwidth", "min(peak, I × bandwidth)",
                 "max(T_math / e_math, T_mem / e_mem)", "kernels × (launch + start-up)"]


def test_no_module_writes_a_formula_text_outside_the_table():
    """The texts the user reads (derivation, conventions, guide, command line) are made from
    :data:`~workbench.model.rules.FORMULAS`."""
    found = []
    for path, tree in _sources():
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docstrings:
                for text in FORMULA_TEXTS:
                    if text in node.value:
                        found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {text}")
    assert found == []


def test_the_conventions_state_the_tables_formulas():
    roofline = next(c for c in CONVENTIONS if c.startswith("Roofline: "))
    for key in ("intensity", "attainable", "ridge", "t_math", "t_mem"):
        assert rules.FORMULAS[key] in roofline
    assert any(rules.FORMULAS["t_predicted"] in c for c in CONVENTIONS)
    assert rules.formula("ridge") == "peak / bandwidth"


# -- the stated answers, by hand


def test_zero_bytes_is_an_infinite_intensity_and_no_work_is_none():
    assert rules.intensity(2e9, 0) == math.inf
    assert math.isnan(rules.intensity(0.0, 0))
    got = rules.intensity(np.array([2e9, 0.0, 6e9]), np.array([0.0, 0.0, 3e9]))
    assert got[0] == math.inf and math.isnan(got[1]) and got[2] == 2.0


@pytest.mark.parametrize("values", [float, np.asarray])
def test_each_rule_by_hand_on_floats_and_arrays(values):
    # an H100 SXM: 989 TFLOP/s bf16, 3.35 TB/s: ridge 989e12 / 3.35e12 = 295.2 FLOP/B
    peak, bandwidth = values(989e12), values(3.35e12)
    assert float(rules.ridge(peak, bandwidth)) == pytest.approx(295.2238806, rel=1e-9)
    # I = 100: 100 × 3.35e12 = 3.35e14 below the peak; I = 1000: the peak
    assert float(rules.attainable(values(100.0), peak, bandwidth)) == pytest.approx(3.35e14)
    assert float(rules.attainable(values(1000.0), peak, bandwidth)) == 989e12
    assert bool(rules.compute_bound(values(2e-6), values(2e-6)))  # at the ridge: compute
    assert not bool(rules.compute_bound(values(1e-6), values(2e-6)))
    # T_work = max(2 µs / 0.8, 3 µs / 0.9) = max(2.5, 3.333…) µs
    assert float(rules.t_work(values(2e-6), values(3e-6), 0.8, 0.9)) == pytest.approx(
        3e-6 / 0.9)
