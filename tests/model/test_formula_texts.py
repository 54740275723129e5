"""The formulas the user reads are the numbers the engine computes.

Each FLOP and byte term shows a formula in symbols (``2·batch·M·N·K``) and the same formula
with values (``2·1·8192·28672·8192``). These tests evaluate the substituted text with an
arithmetic evaluator of their own and compare it with the term's value, check that the
symbol text and the value text have the same shape (symbol for number, everything else
equal), and that each symbol stands for the parameter value it names. The roofline lines of
the derivation and the model-level lines are read back the same way: the quantities printed
on either side of each "=" must agree with the formula between them.
"""

from __future__ import annotations

import ast
import operator
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model.test_properties import STRATEGIES, machines

from workbench.document.derivation import build_derivation
from workbench.document.document import Document
from workbench.document.results import ResultCache
from workbench.model.dtypes import DTYPE_BYTES
from workbench.model.hardware import Hardware
from workbench.model.llm.architecture import Setup
from workbench.model.operations import KINDS
from workbench.model.session import HardwareEntry, OperationEntry, Session
from workbench.model.units import UNITS, parse_quantity

# ---------------------------------------------------------------------------------------
# a small evaluator for the texts: numbers, + − · × / ^ and parentheses, nothing else

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Pow: operator.pow}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand)
    raise AssertionError(f"not arithmetic: {ast.dump(node)}")


def evaluate_text(text: str) -> float:
    """``2·4·(35−1)/35`` → 7.77…; ``(1 − 0.5)^2`` uses ^ for powers."""
    expr = (text.replace("·", "*").replace("×", "*").replace("−", "-").replace("^", "**")
            .replace(",", ""))
    return _eval(ast.parse(expr, mode="eval"))


_UNIT = re.compile(r"^(?P<expr>.*?)·(?P<size>[\d.]+) B \[(?P<dtype>\w+)\]$")
_NUMBER = r"\d+(?:\.\d+)?(?:e[+-]?\d+)?"
_TOKEN = re.compile(rf"(?P<num>{_NUMBER})|(?P<sym>[⌈⌊][^⌉⌋]*[⌉⌋]|[^\W\d][\w′ᵀ]*)|(?P<other>\S)")


def _tokens(text: str) -> list[tuple[str, str]]:
    return [(m.lastgroup, m.group()) for m in _TOKEN.finditer(text)]


def split_unit(text: str) -> tuple[str, float | None, str | None]:
    """``batch·M·K·2 B [bf16]`` → (``batch·M·K``, 2.0, ``bf16``)."""
    m = _UNIT.match(text)
    if not m:
        return text, None, None
    return m["expr"], float(m["size"]), m["dtype"]


def rounded_numbers(text: str) -> int:
    """How many numbers in ``text`` may be rounded: a value that is not a whole number is
    shown to 4 significant figures (``0.961``, ``5.071e+16``), or as many as tell it from a
    whole number (``110.96``, ``1000.5``); whole numbers are shown exactly."""
    return sum(1 for kind, tok in _tokens(text) if kind == "num" and ("." in tok or "e" in tok))


def check_term(op, term) -> None:
    symbols = KINDS[op.kind].symbols  # parameter -> symbol
    by_symbol = {sym: name for name, sym in symbols.items()}
    params = op.resolved()
    where = f"{op.kind} term {term.name!r}: {term.formula} = {term.substituted}"

    formula, f_size, f_dtype = split_unit(term.formula)
    substituted, s_size, s_dtype = split_unit(term.substituted)
    assert (f_size, f_dtype) == (s_size, s_dtype), where
    factor = 1.0
    if f_dtype is not None:
        assert f_dtype == term.dtype, where
        assert f_size == DTYPE_BYTES[f_dtype], where  # the size printed is the dtype's
        factor = f_size

    # the value text gives the value
    shown = evaluate_text(substituted) * factor
    rounded = rounded_numbers(substituted)
    rel = 1e-9 if not rounded else 6e-4 * rounded
    assert shown == pytest.approx(float(term.value), rel=rel, abs=1e-9), where

    # the symbol text has the same shape: a symbol where the value text has a number,
    # the same operator or literal everywhere else; one symbol always stands for one number
    f_tokens, s_tokens = _tokens(formula), _tokens(substituted)
    assert len(f_tokens) == len(s_tokens), where
    seen: dict[str, str] = {}
    for (fk, ft), (sk, stok) in zip(f_tokens, s_tokens, strict=True):
        if fk == "sym":
            assert sk == "num", where
            assert seen.setdefault(ft, stok) == stok, f"{where}: {ft} stands for two values"
            name = by_symbol.get(ft)
            value = params.get(name) if name else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                assert float(stok) == pytest.approx(float(value), rel=6e-4), \
                    f"{where}: {ft} is {value}, shown as {stok}"
        else:
            assert (fk, ft) == (sk, stok), where


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_term_text_evaluates_to_its_value(kind, data):
    op = data.draw(STRATEGIES[kind])
    counts = op.counts()
    for term in (*counts.flop_terms, *counts.byte_terms):
        check_term(op, term)


def test_a_wrong_coefficient_in_a_formula_is_caught():
    """The check itself: a softmax term whose text says 4·rows·cols while its value is
    5·rows·cols must fail."""
    from workbench.model.operations import Operation

    op = Operation("softmax", {"rows": 1024, "cols": 4096, "dtype": "bf16"})
    term = op.counts().flop_terms[0]
    assert term.formula.startswith("5·")
    wrong = type(term)(term.kind, term.name, "4" + term.formula[1:], "4" + term.substituted[1:],
                       term.value, term.tensor, term.elements, term.element_bytes, term.dtype)
    with pytest.raises(AssertionError):
        check_term(op, wrong)


def test_a_symbol_standing_for_the_wrong_parameter_is_caught():
    """A GEMM term that writes K where it puts in N's value must fail."""
    from workbench.model.operations import Operation

    op = Operation("gemm", {"m": 64, "n": 128, "k": 256, "dtype": "bf16"})
    term = op.counts().byte_terms[0]  # A (M×K): batch·M·K
    wrong = type(term)(term.kind, term.name, term.formula.replace("K", "N"), term.substituted,
                       term.value, term.tensor, term.elements, term.element_bytes, term.dtype)
    with pytest.raises(AssertionError):
        check_term(op, wrong)


# ---------------------------------------------------------------------------------------
# the roofline lines of the derivation

_QTY = re.compile(r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)\s(\S*)")
_SYMBOL_UNIT = {u.symbol: name for name, u in UNITS.items() if u.symbol}


def quantities(text: str) -> list[float]:
    """Every quantity printed in ``text`` ("989 TFLOP/s", "3.35 TB/s", "295 FLOP/B"), in
    base units, in order."""
    out = []
    for number, unit in _QTY.findall(text.replace("\u00a0", " ")):
        unit = unit.rstrip(",)")
        for name, spec in UNITS.items():
            if unit and (unit == spec.symbol or unit.endswith(spec.symbol)) and name != "count":
                try:
                    out.append(parse_quantity(f"{number} {unit}", name))
                    break
                except Exception:  # noqa: BLE001 - another unit with the same ending
                    continue
        else:
            out.append(float(number))
    return out


def _session(op, hw: Hardware) -> Document:
    session = Session(title="t", hardware=[HardwareEntry(hw)], operations=[OperationEntry(op)])
    return Document(session)


SHOWN = 6e-3  # three significant figures, on each side


@pytest.mark.parametrize("kind", ["gemm", "attention", "norm", "elementwise", "custom"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_roofline_lines_agree_with_their_numbers(kind, data):
    op = data.draw(STRATEGIES[kind])
    hw = data.draw(machines())
    doc = _session(op, hw)
    cache = ResultCache(doc)
    op_id = doc.session.operations[0].id
    sections = build_derivation(doc, cache, op_id)
    rows = dict(next(s for s in sections if s.title.startswith(hw.label)).rows)

    peak, bw, ridge = quantities(rows["ridge"])
    assert ridge == pytest.approx(peak / bw, rel=2 * SHOWN)
    peak2, intensity, bw2, attainable = quantities(rows["attainable"])[:4]
    assert (peak2, bw2) == (peak, bw)
    assert attainable == pytest.approx(min(peak, intensity * bw), rel=2 * SHOWN)
    flops, peak3, t_math = quantities(rows["T_math"])
    assert peak3 == peak
    assert t_math == pytest.approx(flops / peak, rel=2 * SHOWN)
    nbytes, bw3, t_mem = quantities(rows["T_mem"])
    assert bw3 == bw
    assert t_mem == pytest.approx(nbytes / bw, rel=2 * SHOWN)
    lower, upper = quantities(rows["time bounds"])
    assert lower == pytest.approx(max(t_math, t_mem), rel=2 * SHOWN)
    assert upper == pytest.approx(t_math + t_mem, rel=2 * SHOWN)
    bound = rows["bound"].split()[0]
    if bound == "compute":
        assert t_math >= t_mem * (1 - 2 * SHOWN)
    elif bound == "memory":
        assert t_mem >= t_math * (1 - 2 * SHOWN)
    totals = dict(next(s for s in sections if s.title == "Totals").rows)
    f_total, b_total, i_total = quantities(totals["intensity  I"])
    assert i_total == pytest.approx(f_total / b_total, rel=2 * SHOWN)
    assert i_total == pytest.approx(intensity, rel=SHOWN)


@pytest.mark.parametrize("kind", ["gemm", "attention", "norm", "softmax", "elementwise"])
@pytest.mark.parametrize("launches", ["kernel", "eager", "graph"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_calibrated_prediction_lines_agree_with_their_numbers(kind, launches, data):
    from workbench.io.presets import get_preset

    op = data.draw(STRATEGIES[kind])
    hw = get_preset(data.draw(st.sampled_from(["h100-sxm", "h200", "a100-80gb"])))
    hw.prediction, hw.launches = "calibrated", launches
    doc = _session(op, hw)
    cache = ResultCache(doc)
    sections = build_derivation(doc, cache, doc.session.operations[0].id)
    rows = dict(next(s for s in sections if s.title.startswith(hw.label)).rows)
    t_math = quantities(rows["T_math"])[-1]
    t_mem = quantities(rows["T_mem"])[-1]
    # efficiency: "<class> e on the compute roof, <class> e on the bandwidth roof: why"
    e_math, e_mem = (float(x) for x in re.findall(r" (\d\.\d+|1) on the", rows["efficiency"]))
    shown_math, shown_mem, t_work = quantities(rows["T_work"])
    e_math2, e_mem2 = (float(x) for x in re.findall(r" / (\d\.\d+|1)[,)]", rows["T_work"]))
    assert (e_math2, e_mem2) == (e_math, e_mem)
    assert shown_math == pytest.approx(t_math, rel=SHOWN)
    assert shown_mem == pytest.approx(t_mem, rel=SHOWN)
    assert t_work == pytest.approx(max(shown_math / e_math, shown_mem / e_mem), rel=2 * SHOWN)
    kernels, launch, startup, t_fixed = quantities(rows["T_fixed"].split("  (")[0])
    assert t_fixed == pytest.approx(kernels * (launch + startup), rel=2 * SHOWN)
    predicted = quantities(rows["predicted"])
    if launches == "eager":
        both, k2, floor, t_pred = predicted
        assert k2 == kernels
        assert both == pytest.approx(t_fixed + t_work, rel=2 * SHOWN)
        assert t_pred == pytest.approx(max(both, kernels * floor), rel=2 * SHOWN)
    else:
        fixed2, work2, t_pred = predicted
        assert (fixed2, work2) == (t_fixed, t_work)
        assert t_pred == pytest.approx(fixed2 + work2, rel=2 * SHOWN)
    result = cache.pair(doc.session.operations[0].id, doc.session.hardware[0].id).result
    assert t_pred == pytest.approx(result.t_predicted_s, rel=SHOWN)


# ---------------------------------------------------------------------------------------
# model-level lines

def test_model_level_lines_agree_with_their_numbers():
    from workbench.io.model_configs import read_model_config
    from workbench.model.llm.results import derivation, model_result, model_totals

    arch = read_model_config("Llama-3.1-8B")
    checked = 0
    for setup in (Setup(phase="prefill", batch=4, prompt_len=512),
                  Setup(phase="decode", batch=16, prompt_len=1024)):
        totals = model_totals(arch, setup)
        hw = Hardware(name="m", compute={"bf16": 1e15}, memory={"hbm": 3e12}, capacity=80e9)
        lines = dict(derivation(arch, setup, totals, [model_result(arch, setup, hw)]))
        kv = lines["KV cache / token"]
        formula, values = kv.split(" = ")[1], kv.split(" = ")[2]
        assert evaluate_text(formula) == pytest.approx(totals.kv_cache_bytes_per_token)
        assert float(values.split()[0].replace(",", "")) == \
            pytest.approx(totals.kv_cache_bytes_per_token, abs=0.5)
        if setup.phase == "prefill":
            _, product, shown = lines["tokens"].split(" = ")
            assert evaluate_text(product) == float(shown.replace(",", "")) == setup.tokens
        checked += 1
    assert checked == 2


def _product(values: str) -> float:
    """``⌈64/8⌉·2048·131,072`` → 8 · 2048 · 131072 (the factors a KV cache line shows)."""
    out = 1.0
    for factor in values.split("·"):
        ceil = re.fullmatch(r"⌈(\d+)/(\d+)⌉", factor)
        out *= -(-int(ceil[1]) // int(ceil[2])) if ceil else float(factor.replace(",", ""))
    return out


@pytest.mark.parametrize("name, changes, per_token, kv", [
    # a pipeline stage holds 126/2 = 63 layers, tp 8 one of the 8 KV heads:
    # 2·63·1·128·2 B = 32,256 B per position; 1·2048·32,256 = 66,060,288 B
    ("Llama-3.1-405B", {"tp": 8, "pp": 2}, 32_256, 66_060_288),
    # ep 8 runs attention on 8 copies: a chip keeps ⌈64/8⌉ = 8 sequences:
    # 8·2048·(2·32·8·128·2 = 131,072) = 2,147,483,648 B
    ("Mixtral-8x7B", {"batch": 64, "ep": 8}, 131_072, 2_147_483_648),
    # kv_len 2050 is held in blocks of 16: ⌈2050/16⌉·16 = 2064; 1·2064·131,072 = 270,532,608
    ("Llama-3.1-8B", {"kv_len": 2050}, 131_072, 270_532_608),
])
def test_the_kv_cache_lines_multiply_out_to_what_a_chip_holds(name, changes, per_token, kv):
    from workbench.io.model_configs import read_model_config
    from workbench.model.llm.results import derivation, model_result, model_totals

    arch = read_model_config(name)
    setup = Setup(phase="decode", batch=1, prompt_len=2048, kv_len=2048).with_(**changes)
    totals = model_totals(arch, setup)
    hw = Hardware(name="m", compute={"bf16": 1e15}, memory={"hbm": 3e12},
                  interconnect={"nvlink": 450e9}, capacity=80e9)
    lines = dict(derivation(arch, setup, totals, [model_result(arch, setup, hw)]))
    assert totals.kv_cache_bytes_per_token == per_token
    _formula, values, shown = lines["KV cache / token"].split(" = ")
    assert _product(values) == per_token == float(shown.removesuffix(" B").replace(",", ""))
    assert totals.kv_cache_bytes == kv
    _formula, values, shown = lines["KV cache"].split(" = ")
    assert _product(values) == kv
    assert _quantity(shown) == pytest.approx(kv, rel=5e-3)


def _quantity(text: str) -> float:
    """``1.34 ms`` → 0.00134; ``6.34 GB`` → 6.34e9 (the units the derivation prints)."""
    value, unit = text.strip().split()
    for name in ("time", "bytes"):
        try:
            return parse_quantity(f"{value} {unit}", name)
        except Exception:  # noqa: BLE001 (another unit)
            continue
    raise AssertionError(text)


def test_model_level_lines_of_latency_requests_batches_and_cost():
    from workbench.io.model_configs import read_model_config
    from workbench.model.llm.results import (
        derivation,
        model_result,
        model_totals,
        request_lines,
        request_result,
    )

    arch = read_model_config("Llama-3.1-70B")
    hw = Hardware(name="m", compute={"bf16": 1e15}, memory={"hbm": 3e12},
                  interconnect={"nvlink": 450e9}, capacity=80e9, price_per_hour=2.5)
    setup = Setup(phase="decode", batch=4, prompt_len=1024, kv_len=1024, tp=8)
    totals = model_totals(arch, setup)
    result = model_result(arch, setup, hw)
    lines = dict(derivation(arch, setup, totals, [result]))

    # the step's own time keeps its name beside the latency lines, with the value computed
    assert _quantity(lines["m: TPOT"].split(" = ")[-1]) == pytest.approx(
        result.t_predicted_s, rel=6e-3)
    # collective latency: count·steps·α, α printed in µs
    latency = lines["m: all-reduce (one-shot) latency"]  # 4 · 8192 · 2 B: under 1 MB
    formula, shown = latency.split(" = ")[1], latency.split(" = ")[2]
    expr = formula.split(" µs")[0]
    gather = lines["m: logits all-gather latency"].split(" = ")[1].split(" µs")[0]
    assert (evaluate_text(expr) + evaluate_text(gather)) * 1e-6 == pytest.approx(
        result.latency_s, rel=1e-12)
    assert _quantity(shown) == pytest.approx(evaluate_text(expr) * 1e-6, rel=6e-3)
    # cost: price · chips / 3600 / tokens/s · 10⁶
    cost = lines["m: cost per million tokens"]
    _, values, shown = cost.split(" = ")
    assert evaluate_text(values.replace("10⁶", "1000000")) == pytest.approx(
        float(shown.replace(",", "")), rel=6e-4 * 2)
    # the largest batch: ⌊(usable − weights − prefill chunk) / per sequence⌋, the quantities
    # as printed
    batch = lines["m: max batch"]
    inside = batch.split(" = ")[1].strip("⌊⌋")
    cap, weights, rest = inside.strip("(").split(" − ")
    chunk, per = rest.split(") / ")
    shown_batch = int(batch.split(" = ")[2].split(" (")[0].replace(",", ""))
    estimate = (_quantity(cap) - _quantity(weights) - _quantity(chunk)) / _quantity(
        per.rstrip("⌋"))
    assert shown_batch == result.max_batch
    assert estimate == pytest.approx(result.max_batch, rel=0.01)

    # a request: TTFT + decode = request; per user = n / request; per chip = batch·user/chips
    req = request_result(arch, setup, hw, 128)
    rl = dict(request_lines(setup, [req]))
    _, parts, total = rl["m: request"].split(" = ")
    ttft, decode = parts.split(" + ")
    assert _quantity(ttft) + _quantity(decode) == pytest.approx(_quantity(total), rel=1e-2)
    _, values, shown = rl["m: output tokens/s per user"].split(" = ")
    n, request = values.split(" / ")
    assert int(n) / _quantity(request) == pytest.approx(float(shown.replace(",", "")),
                                                        rel=1e-2)
    _, values, shown = rl["m: output tokens/s per chip"].split(" = ")
    assert evaluate_text(values) == pytest.approx(float(shown.replace(",", "")), rel=1e-3)


def test_a_collective_pays_its_link_latency_in_its_own_roofline():
    """A stand-alone all-reduce over 8 chips and a 2-chip sharded matmul: T_lower is the
    roofline's max plus steps × the link's latency, by hand; the derivation's latency and
    time-bound lines read back."""
    from workbench.model.operations import Operation

    hw = Hardware(name="m", compute={"bf16": 1e15}, memory={"hbm": 3e12},
                  interconnect={"nvlink": 450e9}, link_latency={"nvlink": 2e-6})
    cases = [
        (Operation("all_reduce", {"rows": 16, "hidden": 8192, "chips": 8, "dtype": "bf16",
                                  "algorithm": "ring"}), 2 * (8 - 1)),
        # 256 kB per chip: auto takes the one-shot all-reduce, one step
        (Operation("all_reduce", {"rows": 16, "hidden": 8192, "chips": 8, "dtype": "bf16"}),
         1),
        (Operation("sharded_matmul", {"b": 256, "d": 16384, "f": 8192, "chips": 2,
                                      "dtype": "bf16"}), 2 * (2 - 1)),
    ]
    for op, steps in cases:
        doc = _session(op, hw)
        op_id = doc.session.operations[0].id
        r = ResultCache(doc).pair(op_id, doc.session.hardware[0].id).result
        assert r.latency_s == pytest.approx(steps * 2e-6, rel=1e-12)
        assert r.t_lower_s == pytest.approx(max(r.t_math_s, r.t_mem_s) + steps * 2e-6, rel=1e-12)
        assert r.t_upper_s == pytest.approx(r.t_math_s + r.t_mem_s + steps * 2e-6, rel=1e-12)
        sections = build_derivation(doc, ResultCache(doc), op_id)
        rows = dict(next(s for s in sections if s.title.startswith("m")).rows)
        line = rows["link latency"]
        _, symbols, values, shown = line.split(" = ")
        assert symbols.endswith("·α")
        count, alpha = values.rsplit("·", 1)  # "2·(8−1)", "2 µs (machine)"
        assert evaluate_text(count) == steps
        assert quantities(alpha)[0] == pytest.approx(2e-6, rel=1e-12)
        assert quantities(shown)[0] == pytest.approx(steps * 2e-6, rel=SHOWN)
        lower, upper = quantities(rows["time bounds"])
        assert lower == pytest.approx(r.t_lower_s, rel=SHOWN)
        assert upper == pytest.approx(r.t_upper_s, rel=SHOWN)
    # other work pays none
    gemm = Operation("gemm", {"m": 64, "n": 64, "k": 64, "dtype": "bf16"})
    doc = _session(gemm, hw)
    assert ResultCache(doc).pair(doc.session.operations[0].id,
                                 doc.session.hardware[0].id).result.latency_s == 0


def test_a_value_just_off_a_whole_number_is_not_shown_as_one():
    """Custom bytes of 1000.5 were shown "B = 1000." (four figures, then a bare point): a
    reader takes it for 1000. The text shows as many figures as tell it from a whole
    number."""
    from workbench.model.operations import counts_for

    counts = counts_for("custom", flops=2001.0, bytes=1000.5, precision="fp32")
    read = next(t for t in counts.byte_terms if t.kind == "read")
    assert read.substituted == "1000.5"
    assert evaluate_text(read.substituted) == 1000.5
