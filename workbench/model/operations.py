"""Operation kinds and their counting: every FLOP term and every byte term, with its formula.

Each kind is declared as data (:class:`Kind`): its parameters (:class:`Param`, which the
session validator, the editor form and sweeps all read) and a counting function that turns
parameters into named terms. Counting functions use plain arithmetic and ``numpy`` so that
any numeric parameter may be an array: a sweep of a million shapes is one call.

Conventions (also shown in the app):

* a multiply-add is 2 FLOPs;
* bytes are traffic across one memory level (main memory unless the operation says
  otherwise), loads and stores both counted, each tensor crossing once in the ideal model
  unless the kind says otherwise (naive attention's score passes, unfused chains).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field
from typing import Any

import numpy as np

from workbench.model.dtypes import DTYPE_BYTES, PRECISIONS, wider
from workbench.model.rules import FORMULAS
from workbench.model.terms import (
    CAUSAL_SHAPE,
    KINDS,
    AtMost,
    Counts,
    Kind,
    Param,
    Sym,
    Term,
    causal_fraction,
    fmt,
    register,
    symbols,
    tensor,
    term,
)
from workbench.records import record

__all__ = [
    "Term",
    "Counts",
    "Param",
    "Kind",
    "Operation",
    "KINDS",
    "STEP_OPS",
    "CONVENTIONS",
    "counts_for",
    "cross_checks",
]

CONVENTIONS: tuple[str, ...] = (
    "A multiply-add counts as 2 FLOPs.",
    "Bytes are traffic across the chosen memory level (main memory by default); "
    "loads and stores both count.",
    "In the ideal model each tensor crosses the memory level once, unless the kind says "
    "otherwise (naive attention's score passes, unfused elementwise steps, write-allocate).",
    "The compute ceiling is the machine's dense peak for the operation's compute precision "
    "on the unit its kind runs on: GEMM and attention matmuls on the matrix units (tensor "
    "cores, MXU, AMX), elementwise chains, norms, softmax and reductions on the vector units; "
    "a machine without vector peaks judges vector work against its matrix peak, and says so.",
    "Where the machine has no peak for a precision, the work runs at the next precision of "
    "its chain that the machine has, and only at one that holds every value: fp32 → fp64; "
    "tf32 → fp32 → fp64; bf16 → fp32 → fp64; fp16 → fp32 → fp64; "
    "fp8 → bf16 → fp16 → fp32 → fp64 (fp6 and fp4 first try the wider fp formats); "
    "int8 → bf16 → fp16 → fp32 → fp64; int4 → int8 → …; int32 → fp64. Else the pair is "
    "skipped with the reason.",
    f"Roofline: {FORMULAS['intensity']}; {FORMULAS['attainable']}; {FORMULAS['ridge']}; "
    f"{FORMULAS['t_math']}; {FORMULAS['t_mem']}; lower bound = max, upper bound = sum.",
    "Launch overhead (a rule of thumb unless measured): each kernel takes at least it; an "
    f"unfused elementwise chain is one kernel per step. {FORMULAS['t_predicted']}, and an "
    "operation is overhead-bound exactly when the second term is the larger one.",
)


# ---------------------------------------------------------------------------------------
# GEMM

_DTYPE_CHOICES = tuple(DTYPE_BYTES)
_PRECISION_CHOICES = PRECISIONS

GEMM_PARAMS = (
    Param("batch", "int", 1, "Batch", "Independent matrix products (each with its own A, B and C).",
          symbol="batch"),
    Param("m", "int", 4096, "M", "Rows of A and C (tokens for a linear layer; 1 for GEMV).",
          symbol="M", required=True),
    Param("n", "int", 4096, "N", "Columns of B and C (output features).", symbol="N",
          required=True),
    Param("k", "int", 4096, "K", "Contraction dimension (input features).", symbol="K",
          required=True),
    Param("dtype", "dtype", "bf16", "Element type", "Default element type of A, B and C."),
    Param("a_dtype", "dtype", None, "A dtype", "Element type of A (activations).", inherit="dtype",
          symbol="s_A"),
    Param("b_dtype", "dtype", None, "B dtype", "Element type of B (weights).", inherit="dtype",
          symbol="s_B"),
    Param("c_dtype", "dtype", None, "C dtype", "Element type of the output C.", inherit="dtype",
          symbol="s_C"),
    Param("compute", "precision", None, "Compute precision",
          "Precision whose peak is the ceiling; by default the wider of A's and B's types "
          "(int8 weights with bf16 activations compute in bf16)."),
)


def _count_gemm(p: Mapping[str, Any]) -> Counts:
    s = symbols(KINDS["gemm"], p)
    batch, m, n, k = p["batch"], p["m"], p["n"], p["k"]
    flops = term("flop", "multiply-adds of A·B", "2·{batch}·{m}·{n}·{k}", 2 * batch * m * n * k, s)
    terms = [
        tensor("read", "A", "M×K", "{batch}·{m}·{k}", batch * m * k, p["a_dtype"], s),
        tensor("read", "B", "K×N", "{batch}·{k}·{n}", batch * k * n, p["b_dtype"], s),
        tensor("write", "C", "M×N", "{batch}·{m}·{n}", batch * m * n, p["c_dtype"], s),
    ]
    precision = p["compute"] or wider(p["a_dtype"], p["b_dtype"])
    return Counts([flops], terms, precision)


# ---------------------------------------------------------------------------------------
# attention

ATTENTION_PARAMS = (
    Param("implementation", "choice", "flash", "Implementation",
          "flash: fused, scores stay on chip. naive: the score matrix S and probabilities P are "
          "materialised in memory.", choices=("flash", "naive")),
    Param("batch", "int", 1, "Batch", "Sequences in the batch.", symbol="b"),
    Param("heads", "int", 32, "Query heads", "Number of query heads.", symbol="h",
          required=True),
    Param("kv_heads", "int", None, "KV heads",
          "Number of key/value heads: = heads for MHA, fewer for GQA, 1 for MQA.",
          inherit="heads", symbol="h_kv"),
    Param("head_dim", "int", 128, "Head dim", "Dimension of each head.", symbol="d",
          required=True),
    Param("query_len", "int", 4096, "Query length", "Queries per sequence (1 for decode).",
          symbol="q", required=True),
    Param("kv_len", "int", None, "KV length", "Keys/values per sequence (the KV cache in decode).",
          inherit="query_len", symbol="k", required=True),
    Param("causal", "bool", False, "Causal",
          "Causal mask: only key positions at or before each query are visible; with queries "
          "at the end of the sequence the visible fraction is 1 − q/(2k) (½ for a square "
          "mask). Flash skips the masked blocks; a naive kernel computes every score and "
          "masks afterwards."),
    Param("dtype", "dtype", "bf16", "Element type", "Element type of Q, K, V and O."),
    Param("kv_dtype", "dtype", None, "KV dtype",
          "Element type of K and V (the KV cache: fp8 or int8 while Q and O stay bf16).",
          inherit="dtype", symbol="s_kv"),
    Param("window", "int", 0, "Sliding window",
          "Flash only: each query attends to at most this many positions up to itself (a "
          "local, sliding-window layer); 0 for none. K and V are read for the "
          "k_w = min(k, w+q−1) positions some query sees.", minimum=0, symbol="w",
          only_if=("implementation", "flash")),
    Param("score_passes", "int", 4, "Score passes",
          "Naive only: passes of the q×k score matrix through memory (write S, read S, write P, "
          "read P = 4).", minimum=0, symbol="passes", only_if=("implementation", "naive")),
    Param("score_dtype", "dtype", None, "Score dtype", "Naive only: element type of S and P.",
          inherit="dtype", only_if=("implementation", "naive")),
    Param("compute", "precision", None, "Compute precision",
          "Precision whose peak is the ceiling (default: the element type).", inherit="dtype"),
)


def _window_fraction(q, k, w):
    """Visible fraction of a q×k score matrix (queries the last q of k positions) when each
    query sees the ``w`` latest positions up to itself: the banded mask's area (continuous,
    like the causal ½) over q·k."""
    if isinstance(q, np.ndarray) or isinstance(k, np.ndarray) or isinstance(w, np.ndarray):
        q = np.minimum(q, k)  # (a sweep: each point as one value)
        a = k - q
        visible = np.where(w <= a, q * w, (w * w - a * a) / 2 + (k - w) * w)
        return visible / (q * k)
    q = min(q, k)
    a = k - q  # positions before the first query
    visible = q * w if w <= a else (w * w - a * a) / 2 + (k - w) * w
    return visible / (q * k)


def _count_attention(p: Mapping[str, Any]) -> Counts:
    naive = p["implementation"] == "naive"
    # a naive kernel computes the whole q×k score matrix and masks afterwards: it executes
    # every FLOP; Flash skips the masked blocks
    skips = p["causal"] and not naive
    b, h, hk, d, q, k = (p[x] for x in ("batch", "heads", "kv_heads", "head_dim", "query_len",
                                        "kv_len"))
    window = p.get("window")
    window = 0 if naive or window is None else window
    inside = (window > 0) & (window < k)
    # (swept, some points may have a window and some none: each is counted as its own)
    windowed = bool(np.any(inside))
    if windowed:
        frac = _window_fraction(q, k, window)
        kw = np.minimum(k, window + q - 1) if np.ndim(inside) else min(k, window + q - 1)
        if np.ndim(inside):
            frac = np.where(inside, frac, causal_fraction(q, k, skips))
            kw = np.where(inside, kw, k)
        s = symbols(KINDS["attention"], p, c=("c", frac), kw=("k_w", kw))
    else:
        frac = causal_fraction(q, k, skips)
        s = symbols(KINDS["attention"], p, c=("c", frac))
    c_factor = "·{c}" if skips or windowed else ""
    kv_elems = "{batch}·{kv_heads}·{kw}·{head_dim}" if windowed else \
        "{batch}·{kv_heads}·{kv_len}·{head_dim}"
    kv_read = kw if windowed else k
    flops = [
        term("flop", "S = Q·Kᵀ", "2·{batch}·{heads}·{query_len}·{kv_len}·{head_dim}" + c_factor,
             2 * b * h * q * k * d * frac, s),
        term("flop", "O = P·V", "2·{batch}·{heads}·{query_len}·{kv_len}·{head_dim}" + c_factor,
             2 * b * h * q * k * d * frac, s),
    ]
    dt = p["dtype"]
    terms = [
        tensor("read", "Q", "", "{batch}·{heads}·{query_len}·{head_dim}", b * h * q * d, dt, s),
        tensor("read", "K", "", kv_elems, b * hk * kv_read * d, p["kv_dtype"], s),
        tensor("read", "V", "", kv_elems, b * hk * kv_read * d, p["kv_dtype"], s),
        tensor("write", "O", "", "{batch}·{heads}·{query_len}·{head_dim}", b * h * q * d, dt, s),
    ]
    notes = []
    if p["implementation"] == "naive":
        passes = p["score_passes"]
        sd = p["score_dtype"]
        size = DTYPE_BYTES[sd]
        writes = (passes + 1) // 2
        reads = passes - writes
        s["writes"] = Sym("⌈passes/2⌉", writes)
        s["reads"] = Sym("⌊passes/2⌋", reads)
        for direction, count in (("write", writes), ("read", reads)):
            terms.append(
                term(direction, f"S/P ({fmt(count)} of {fmt(passes)} passes)",
                     f"{{{direction}s}}·{{batch}}·{{heads}}·{{query_len}}·{{kv_len}}·"
                     f"{fmt(size)} B [{sd}]",
                     count * b * h * q * k * size, s, tensor="S/P",
                     elements=count * b * h * q * k, element_bytes=size, dtype=sd)
            )
        notes.append("Naive: the full q×k score matrix is materialised (the causal mask does not "
                     "shrink it); passes = write S, read S, write P, read P by default.")
    else:
        notes.append("Flash: S and P stay on chip; Q, K, V and O cross memory once each.")
    if windowed:
        notes.append(f"Sliding window w = {window}: each query sees at most the w positions up "
                     "to itself, so FLOPs are scaled by the visible fraction c = (area of the "
                     "banded mask) / (q·k), and K and V are read for the "
                     "k_w = min(k, w+q−1) positions some query sees.")
    elif skips:
        notes.append("Causal, Flash: masked blocks are skipped, so FLOPs are scaled by the "
                     "visible fraction c = 1 − min(q,k)/(2k).")
    elif p["causal"]:
        notes.append("Causal, naive: every score is computed and the mask applied afterwards, "
                     "so all 4·b·h·q·k·d FLOPs are executed (no visible-fraction factor).")
    notes.append("Unit: QKᵀ and P·V run on the matrix units (the softmax between them is not "
                 "counted).")
    return Counts(flops, terms, p["compute"], notes)


# ---------------------------------------------------------------------------------------
# elementwise chains

#: FLOPs per element of each step kind (a multiply-add is 2). ``custom`` takes ``flops``.
STEP_OPS: dict[str, tuple[float, str]] = {
    "add": (1, "a + b"),
    "sub": (1, "a − b"),
    "mul": (1, "a · b"),
    "div": (1, "a / b"),
    "fma": (2, "a·x + b (multiply-add)"),
    "scale": (1, "α·x"),
    "bias": (1, "x + bias"),
    "relu": (1, "max(x, 0)"),
    "square": (1, "x·x"),
    "sqrt": (1, "√x"),
    "exp": (1, "eˣ (counted as 1)"),
    "tanh": (1, "tanh x (counted as 1)"),
    "log": (1, "log x (counted as 1)"),
    "sin": (1, "sin x (counted as 1)"),
    "cos": (1, "cos x (counted as 1)"),
    "sigmoid": (4, "1/(1+e⁻ˣ): neg, exp, add, div"),
    "silu": (5, "x·sigmoid(x)"),
    "gelu": (9, "tanh form: 8 multiply/adds + tanh counted as 1"),
    "max": (1, "max(a, b)"),
    "copy": (0, "copy / cast"),
    "custom": (1, "FLOPs per element as given"),
}


def _count_elementwise(p: Mapping[str, Any]) -> Counts:
    steps = p["steps"] or []
    n = p["n"]
    dt = p["dtype"]
    kind = KINDS["elementwise"]
    s = symbols(kind, p)
    flop_terms = []
    for i, step in enumerate(steps, 1):
        f = step_flops(step)
        flop_terms.append(term("flop", f"step {i}: {step['op']}", f"{fmt(float(f))}·{{n}}",
                               f * n, s))
    byte_terms: list[Term] = []
    wa = p["write_allocate"]
    out_name = p["output"] or "out"

    def rw(direction, name, what):
        byte_terms.append(tensor(direction, name, what, "{n}", n, dt, s))

    def write(name, what):
        rw("write", name, what)
        if wa:
            rw("read", name, "write-allocate")

    if p["fused"]:
        seen = [p["input"]]
        rw("read", p["input"], "input")
        for step in steps:
            for extra in step.get("inputs") or ():
                if extra not in seen:
                    seen.append(extra)
                    rw("read", extra, f"input of {step['op']}")
        write(out_name, "output")
    else:
        current = p["input"]
        for i, step in enumerate(steps, 1):
            last = i == len(steps)
            rw("read", current, f"step {i}")
            for extra in step.get("inputs") or ():
                rw("read", extra, f"step {i}")
            produced = out_name if last else f"t{i}"
            write(produced, f"step {i}")
            current = produced
    notes = [
        "Fused: external inputs read once, the final output written once; temporaries stay "
        "in registers." if p["fused"] else
        "Unfused: every step reads its inputs from memory and writes its output back."
    ]
    if wa:
        notes.append("Write-allocate: every store first reads the line it writes (one extra read).")
    kernels = 1 if p["fused"] or not steps else len(steps)
    if kernels > 1:
        notes.append(f"Unfused: {kernels} kernels, one per step, each paying the launch "
                     "overhead.")
    return Counts(flop_terms, byte_terms, p["compute"], notes, unit="vector", kernels=kernels)


def step_flops(step: Mapping[str, Any]) -> float:
    if step.get("flops") is not None:
        return float(step["flops"])
    return float(STEP_OPS[step["op"]][0])


# ---------------------------------------------------------------------------------------
# norms, softmax, reductions, custom

NORM_FLOPS = {"layernorm": 8, "rmsnorm": 4}


def _count_norm(p: Mapping[str, Any]) -> Counts:
    s = symbols(KINDS["norm"], p)
    per = NORM_FLOPS[p["variant"]]
    rows, hidden, n = p["rows"], p["hidden"], p["layers"]
    # n independent norms (a model's layers counted together) each read their own γ, β
    pre = "{layers}·" if n != 1 else ""
    what = ("mean 1, variance 3, normalise 2, scale and shift 2" if p["variant"] == "layernorm"
            else "square-and-sum 2, normalise 1, scale 1")
    flops = [term("flop", f"{p['variant']} ({what} per element)",
                  f"{per}·{pre}{{rows}}·{{hidden}}", per * n * rows * hidden, s)]
    terms = [
        tensor("read", "x", "", f"{pre}{{rows}}·{{hidden}}", n * rows * hidden, p["dtype"], s),
        tensor("read", "γ", "scale", f"{pre}{{hidden}}", n * hidden, p["weight_dtype"], s),
    ]
    if p["variant"] == "layernorm":
        terms.append(tensor("read", "β", "shift", f"{pre}{{hidden}}", n * hidden,
                            p["weight_dtype"], s))
    terms.append(tensor("write", "y", "", f"{pre}{{rows}}·{{hidden}}", n * rows * hidden,
                        p["dtype"], s))
    return Counts(flops, terms, p["compute"],
                  ["Per-row statistics (1/√var) are negligible next to per-element work."],
                  unit="vector")


def _count_softmax(p: Mapping[str, Any]) -> Counts:
    s = symbols(KINDS["softmax"], p)
    rows, cols = p["rows"], p["cols"]
    flops = [term("flop", "max, subtract, exp, sum, divide (5 per element)", "5·{rows}·{cols}",
                  5 * rows * cols, s)]
    terms = [
        tensor("read", "x", "", "{rows}·{cols}", rows * cols, p["dtype"], s),
        tensor("write", "y", "", "{rows}·{cols}", rows * cols, p["dtype"], s),
    ]
    return Counts(flops, terms, p["compute"],
                  ["One fused pass: the row is read once and written once."], unit="vector")


_REDUCTION_FLOPS = {"sum": (1, "one add per element"), "max": (1, "one compare per element"),
                    "dot": (2, "one multiply-add per element pair")}


def _count_reduction(p: Mapping[str, Any]) -> Counts:
    s = symbols(KINDS["reduction"], p)
    op = p["op"]
    per, what = _REDUCTION_FLOPS[op]
    rows, n = p["rows"], p["n"]
    flops = [term("flop", f"{op} ({what})", f"{per}·{{rows}}·{{n}}", per * rows * n, s)]
    terms = [tensor("read", "x", "", "{rows}·{n}", rows * n, p["dtype"], s)]
    if op == "dot":
        terms.append(tensor("read", "y", "", "{rows}·{n}", rows * n, p["dtype"], s))
    terms.append(tensor("write", "r", "result", "{rows}", rows, p["dtype"], s))
    return Counts(flops, terms, p["compute"],
                  ["N elements need N−1 additions; the model counts N (2N for a dot product)."],
                  unit="vector")


def _count_custom(p: Mapping[str, Any]) -> Counts:
    s = symbols(KINDS["custom"], p)
    flops = [term("flop", "FLOPs as given", "{flops}", p["flops"], s)]
    terms = [term("read", "bytes as given", "{bytes}", p["bytes"], s, tensor="")]
    return Counts(flops, terms, p["precision"], unit=p["unit"])


def _compute_param(inherit: str = "dtype") -> Param:
    return Param("compute", "precision", None, "Compute precision",
                 "Precision whose peak is the ceiling (default: the element type).",
                 inherit=inherit)


#: Default chains for new elementwise operations and presets.
ELEMENTWISE_PRESETS: dict[str, dict[str, Any]] = {
    "saxpy": {"dtype": "fp32", "input": "x", "output": "y",
              "steps": [{"op": "fma", "inputs": ["y"]}], "fused": True},
    "vector add": {"dtype": "fp32", "input": "a", "output": "c",
                   "steps": [{"op": "add", "inputs": ["b"]}], "fused": True},
    "bias + gelu + residual": {"dtype": "fp32", "input": "x", "output": "w",
                               "steps": [{"op": "fma"}, {"op": "gelu"},
                                         {"op": "add", "inputs": ["r"]}], "fused": False},
}

register(Kind("gemm", "GEMM / GEMV",
              "C = A·B with A: M×K, B: K×N, C: M×N, repeated batch times.",
              GEMM_PARAMS, _count_gemm, "GEMM"))
register(Kind("attention", "Attention",
              "Scaled dot-product attention: S = Q·Kᵀ, P = softmax(S), O = P·V.",
              ATTENTION_PARAMS, _count_attention, "Attention",
              constraints=(AtMost("kv_heads", "heads", "must not exceed heads ({limit}), got "
                                                       "{value}"), CAUSAL_SHAPE)))
register(Kind("elementwise", "Elementwise chain",
              "A chain of elementwise steps over n elements, fused into one kernel or not.",
              (
                  Param("n", "int", 1 << 24, "Elements", "Elements in each tensor.", symbol="n",
                        required=True),
                  Param("dtype", "dtype", "fp32", "Element type", "Element type of every tensor."),
                  Param("input", "str", "x", "Input", "Name of the tensor the chain starts from."),
                  Param("output", "str", "out", "Output", "Name of the tensor the chain writes."),
                  Param("steps", "steps",
                        [dict(st) for st in ELEMENTWISE_PRESETS["bias + gelu + residual"]["steps"]],
                        "Steps",
                        "Steps in order; each has op, optional extra inputs and optional flops.",
                        required=True),
                  Param("fused", "bool", False, "Fused",
                        "Fused: one kernel, temporaries in registers."),
                  Param("write_allocate", "bool", False, "Write-allocate",
                        "Every store first reads the cache line (write-back caches)."),
                  _compute_param(),
              ),
              _count_elementwise, "Elementwise chain", unit="vector"))
register(Kind("norm", "Normalisation",
              "LayerNorm or RMSNorm over rows of hidden elements.",
              (
                  Param("variant", "choice", "rmsnorm", "Variant", "layernorm or rmsnorm.",
                        choices=("layernorm", "rmsnorm")),
                  Param("rows", "int", 4096, "Rows", "Rows (tokens).", symbol="rows",
                        required=True),
                  Param("hidden", "int", 8192, "Hidden", "Elements per row.", symbol="hidden",
                        required=True),
                  Param("dtype", "dtype", "bf16", "Element type", "Element type of x and y."),
                  Param("weight_dtype", "dtype", None, "Weight dtype", "Element type of γ, β.",
                        inherit="dtype"),
                  Param("layers", "int", 1, "Layers",
                        "Independent norms counted together, each with its own γ and β (a "
                        "model's layers in one operation).", symbol="L"),
                  _compute_param(),
              ),
              _count_norm, "Norm", unit="vector"))
register(Kind("softmax", "Softmax",
              "Row-wise softmax over rows × cols.",
              (
                  Param("rows", "int", 4096, "Rows", "Rows.", symbol="rows", required=True),
                  Param("cols", "int", 4096, "Columns", "Elements per row.", symbol="cols",
                        required=True),
                  Param("dtype", "dtype", "bf16", "Element type", "Element type of x and y."),
                  _compute_param(),
              ),
              _count_softmax, "Softmax", unit="vector"))
register(Kind("reduction", "Reduction",
              "Sum, max or dot product of vectors of n elements (rows of them).",
              (
                  Param("op", "choice", "sum", "Reduction", "sum, max or dot (product).",
                        choices=("sum", "max", "dot")),
                  Param("n", "int", 1 << 24, "Elements", "Elements per vector.", symbol="n",
                        required=True),
                  Param("rows", "int", 1, "Vectors", "Independent reductions.", symbol="rows"),
                  Param("dtype", "dtype", "fp32", "Element type", "Element type."),
                  _compute_param(),
              ),
              _count_reduction, "Reduction", unit="vector"))
register(Kind("custom", "Custom",
              "FLOPs and bytes typed in, at a precision.",
              (
                  Param("flops", "quantity", 1e12, "FLOPs", "Total FLOPs.", unit="flops",
                        symbol="F", minimum=0, required=True),
                  Param("bytes", "quantity", 1e9, "Bytes", "Total bytes moved (at least 1).",
                        unit="bytes", symbol="B", minimum=1, required=True),
                  Param("precision", "precision", "bf16", "Precision",
                        "Precision whose peak is the ceiling."),
                  Param("unit", "choice", "matrix", "Unit",
                        "Execution unit whose peak is the ceiling: matrix (tensor cores, MXU, "
                        "AMX) or vector (CUDA cores, VPU, AVX: stencils, sparse code).",
                        choices=("matrix", "vector")),
              ),
              _count_custom, "Custom"))


# ---------------------------------------------------------------------------------------
# sharded matmul: a communication roof (bytes over the interconnect, not memory)

SHARDED_MATMUL_PARAMS = (
    Param("b", "int", 256, "B (tokens)", "Rows of X and of the output Z (tokens in the batch).",
          symbol="B", required=True),
    Param("d", "int", 8192, "D (split)",
          "Contraction dimension, split evenly over the chips: each chip holds X[:, D/N] and "
          "Y[D/N, :].", symbol="D", required=True),
    Param("f", "int", 8192, "F", "Columns of Y and of Z (output features).", symbol="F",
          required=True),
    Param("chips", "int", 2, "Chips", "Chips the D dimension is split over.", minimum=2,
          symbol="N", required=True),
    Param("collective", "choice", "all_reduce", "Collective",
          "How the partial sums are combined. all_reduce (ring): every chip ends with the full Z "
          "and sends 2·(N−1)/N of it; reduce_scatter: every chip ends with 1/N of Z and sends "
          "(N−1)/N of it.", choices=("all_reduce", "reduce_scatter")),
    Param("dtype", "dtype", "bf16", "Element type", "Element type of X and Y."),
    Param("sum_dtype", "dtype", None, "Partial-sum dtype",
          "Element type of the partial sums sent between chips.", inherit="dtype", symbol="s"),
    Param("compute", "precision", None, "Compute precision",
          "Precision whose peak is the ceiling (default: the element type).", inherit="dtype"),
)


def _count_sharded_matmul(p: Mapping[str, Any]) -> Counts:
    s = symbols(KINDS["sharded_matmul"], p)
    b, d, f, chips = p["b"], p["d"], p["f"], p["chips"]
    flops = term("flop", "multiply-adds of X·Y on one chip (its D/N slice)",
                 "2·{b}·{d}·{f}/{chips}", 2 * b * d * f / chips, s)
    if p["collective"] == "reduce_scatter":
        template, elements, what = "({chips}−1)/{chips}·{b}·{f}", (chips - 1) / chips * b * f, \
            "reduce-scatter"
    else:
        template, elements, what = "2·({chips}−1)/{chips}·{b}·{f}", \
            2 * (chips - 1) / chips * b * f, "ring all-reduce"
    sent = tensor("write", "Z partial sums", f"sent per chip, {what}", template, elements,
                  p["sum_dtype"], s)
    notes = [
        "Per chip: FLOPs are one chip's share, 2·B·D·F/N; bytes are what one chip sends over its "
        "link while the partial sums are combined. Links are full duplex, so receiving overlaps "
        "with sending at the per-direction bandwidth.",
        "Ring all-reduce sends 2·(N−1)/N·B·F elements per chip (reduce-scatter, then "
        "all-gather); for 2 chips that is one copy of Z, 2·B·F bytes in bf16, as in the "
        "scaling book's two-chip example. Intensity = D/((N−1)·s): the critical size is in D, "
        "not B.",
        "Bytes are counted across the machine's first interconnect unless memory_level names "
        "another. Each chip's HBM traffic for its local GEMM is not counted here (model it as a "
        "GEMM with K = D/N).",
        "The (N−1)/N·B·F additions that reduce the partial sums are ignored (negligible next to "
        "2·B·D·F/N).",
        "Latency: the ring takes 2·(N−1) steps (reduce-scatter N−1), each paying the link's "
        "latency at least: a floor added to T_lower.",
    ]
    steps, formula = ((chips - 1, ("(N−1)", f"({chips}−1)")) if p["collective"] == "reduce_scatter"
                      else (2 * (chips - 1), ("2·(N−1)", f"2·({chips}−1)")))
    return Counts([flops], [sent], p["compute"], notes, latency_steps=steps,
                  latency_formula=formula)


register(Kind("sharded_matmul", "Sharded matmul (communication)",
              "Z[B, F] = X[B, D] · Y[D, F] with D split over N chips: each chip multiplies its "
              "slices, then the B×F partial sums are combined over the interconnect. The roof "
              "is per-chip FLOP/s against the link bandwidth.",
              SHARDED_MATMUL_PARAMS, _count_sharded_matmul, "Sharded matmul",
              default_level="interconnect"))

@record
class Operation:
    """An operation in a session: a kind, its parameters, and how it is shown."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    memory_level: str | None = None

    @property
    def spec(self) -> Kind:
        return KINDS[self.kind]

    def resolved(self) -> dict[str, Any]:
        return self.spec.resolve(self.params)

    def level_on(self, hardware: Any) -> str | None:
        """The level this operation's bytes cross on ``hardware``: its own ``memory_level``
        if set; else, for kinds whose ``default_level`` is ``"interconnect"`` (a sharded
        matmul's partial sums), the machine's first interconnect; else ``None`` (main memory).
        A communication kind on a machine without an interconnect raises
        :class:`~workbench.model.hardware.UnknownLevel` (the pair is skipped, with the reason).
        """
        if self.memory_level:
            return self.memory_level
        if self.spec.default_level == "interconnect":
            links = getattr(hardware, "interconnect", None) or {}
            if not links:
                from workbench.model.hardware import UnknownLevel

                label = getattr(hardware, "label", "this machine")
                raise UnknownLevel(
                    f"{label} has no interconnect for the {self.spec.default_name} exchange (set "
                    "memory_level, or give the machine an interconnect)")
            return next(iter(links))
        return None

    def defaults_taken(self) -> list[str]:
        """Each parameter this operation does not give and takes a default for, in words
        (``"batch = 1"``, ``"kv_heads = heads = 32"``, ``"k = 4096 (required since
        schema_version 2)"``): what the derivation lists under "defaults taken". Tensor
        names, and dtypes and precisions that follow another parameter, are left out."""
        given = self.params
        full = None
        out = []
        for p in self.spec.params:
            if given.get(p.name) is not None or p.type == "str":
                continue
            if p.inherit and p.type in ("dtype", "precision"):
                continue
            if p.type in ("precision",) and p.default is None:
                continue
            if p.only_if is not None:
                full = full or self.resolved()
                key, wanted = p.only_if
                if full[key] != wanted:
                    continue
            full = full or self.resolved()
            value = full[p.name]
            shown = " → ".join(step["op"] for step in value) if p.name == "steps" else fmt(value)
            via = f"{p.inherit} = " if p.inherit else ""
            text = f"{p.name} = {via}{shown}"
            if p.required:
                text += " (an example value: files from schema_version 2 on must give it)"
            out.append(text)
        return out

    def counts(self, **overrides: Any) -> Counts:
        """Counts at these parameters; ``overrides`` may hold numpy arrays (sweeps)."""
        full = self.spec.resolve({**self.params, **overrides})
        return self.spec.count(full)

    def copy(self) -> Operation:
        return Operation(self.kind, _copied(self.params), self.name, self.memory_level)


#: values a copy shares: they cannot change
_IMMUTABLE = (int, float, str, bool, type(None))


def _copied(value: Any) -> Any:
    """A deep copy of a parameter's value: dictionaries and lists (the steps of a chain)
    copied, numbers and words shared, anything else deep-copied (as ``copy.deepcopy``
    copies it all, several times slower: a whole model's edit copies each operation)."""
    kind = type(value)
    if kind is dict:
        return {k: _copied(v) for k, v in value.items()}
    if kind is list:
        return [_copied(v) for v in value]
    if kind in _IMMUTABLE:
        return value
    import copy

    return copy.deepcopy(value)


def cross_checks(kind: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Checks across parameters, ``[(param, problem), …]``: the same for a typed operation,
    a loaded one and every point of a sweep (any parameter may be a numpy array; the first
    offending point is named)."""
    problems: list[tuple[str, str]] = []
    spec = KINDS.get(kind)
    if spec is None or not spec.constraints:
        return problems
    full = spec.resolve(params)
    used = {name for rule in spec.constraints for name in (rule.param, rule.limit)}
    if kind == "attention":
        used.add("heads")
    values = [full[name] for name in sorted(used)]
    swept = any(isinstance(v, np.ndarray) for v in values)
    shape = np.broadcast(*values).shape if swept else ()

    def first(bad) -> int | None:
        bad = np.asarray(bad)
        if not bad.any():
            return None
        return int(np.flatnonzero(np.broadcast_to(bad, shape))[0]) if swept else 0

    def at(value, i):
        return _fmt_int(np.broadcast_to(value, shape)[i] if swept else value)

    where = (lambda i: f" (at the sweep's point {i + 1})") if swept else (lambda i: "")
    refused = set()
    for rule in spec.constraints:
        if rule.when is not None and not full[rule.when]:
            continue
        value, limit = full[rule.param], full[rule.limit]
        i = first(np.asarray(value) > np.asarray(limit))
        if i is not None and rule.param not in refused:
            refused.add(rule.param)
            problems.append((rule.param, rule.message.format(limit=at(limit, i),
                                                             value=at(value, i)) + where(i)))
    if kind == "attention" and "kv_heads" not in refused:
        heads, kv = full["heads"], full["kv_heads"]
        i = first(np.mod(heads, kv) != 0)
        if i is not None:
            problems.insert(0, ("kv_heads", f"must divide heads ({at(heads, i)}) for "
                                            f"grouped-query attention, got {at(kv, i)}{where(i)}"))
    return problems


def _fmt_int(value: Any) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:g}"


def counts_for(kind: str, **params: Any) -> Counts:
    """Shorthand: ``counts_for("gemm", m=1, n=28672, k=8192, dtype="fp16")``."""
    return Operation(kind, params).counts()


def _check_registry() -> None:
    for kind in KINDS.values():
        for p in kind.params:
            assert p.type != "choice" or p.default is None or p.default in p.choices, p
    assert math.isclose(STEP_OPS["fma"][0], 2)


_check_registry()


# kinds whole-model expansion adds (MoE grouped GEMM, latent attention, all-reduce)
from workbench.model.llm import kinds as _llm_kinds  # noqa: E402,F401  (registers them)
