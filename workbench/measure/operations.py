"""Time an operation of the session on this machine with numpy, as written.

Only operations numpy can execute as they are described are timed: GEMM/GEMV (batched or
not) with A, B and C all fp64 or all fp32 (numpy's BLAS types); elementwise chains, step by
step (numpy writes every step's result to memory, so a chain described as fused runs
unfused here, and the measurement says so); reductions (sum, max, dot); softmax; layernorm
and rmsnorm, in fp64, fp32 or fp16. Attention and custom operations are refused with the
reason. Each timing is the best of repeated runs (at least 3, up to ``budget_s``), as in
:mod:`workbench.measure.analysis`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from workbench.measure.analysis import BestOf, best_of
from workbench.measure.kernels import time_runs
from workbench.model.operations import KINDS, Operation
from workbench.records import record

__all__ = ["timing_problem", "time_operation", "TimedOperation", "MAX_BYTES", "MAX_FLOPS"]

_DTYPES = {"fp64": np.float64, "fp32": np.float32, "fp16": np.float16}
_BLAS = ("fp64", "fp32")
#: What may be timed here without minutes of waiting or gigabytes of arrays.
MAX_BYTES = 2 * 1024**3
MAX_FLOPS = 2e12


@record(frozen=True)
class TimedOperation:
    """One operation timed as numpy runs it: its best time, and ``how`` it ran."""

    timing: BestOf  # work = the operation's FLOPs as the engine counts them (≥ 1)
    how: str  # what numpy ran

    @property
    def time_s(self) -> float:
        return self.timing.best_time


def _params(op: Operation) -> dict:
    return KINDS[op.kind].resolve(op.params)


def timing_problem(op: Operation) -> str | None:
    """Why ``op`` cannot be timed here as written, or ``None`` when it can."""
    p = _params(op)
    if op.kind == "gemm":
        types = {p["a_dtype"], p["b_dtype"], p["c_dtype"]}
        if len(types) != 1 or next(iter(types)) not in _BLAS:
            return ("numpy multiplies matrices with BLAS only when A, B and C are all fp64 or "
                    f"all fp32 (this one: A {p['a_dtype']}, B {p['b_dtype']}, C {p['c_dtype']})")
    elif op.kind in ("elementwise", "reduction", "softmax", "norm"):
        if p["dtype"] not in _DTYPES:
            return f"numpy has no {p['dtype']} type (fp64, fp32 and fp16 can be timed)"
        if op.kind == "elementwise":
            custom = [s["op"] for s in p["steps"] or [] if s["op"] == "custom"]
            if custom:
                return "a custom step has no numpy counterpart"
        if op.kind == "norm" and p["weight_dtype"] not in _DTYPES:
            return f"numpy has no {p['weight_dtype']} type for the norm's weights"
    else:
        return f"numpy cannot run an operation of kind {op.kind} as written"
    counts = op.counts()
    if float(counts.bytes) > MAX_BYTES:
        return (f"its tensors ({float(counts.bytes) / 1e9:.3g} GB) are too large to time here "
                f"(at most {MAX_BYTES / 1e9:.3g} GB)")
    if float(counts.flops) > MAX_FLOPS:
        return (f"its {float(counts.flops):.3g} FLOPs would take too long to time here "
                f"(at most {MAX_FLOPS:.0e})")
    return None


def _gemm(p):
    dt = _DTYPES[p["a_dtype"]]
    shape = (p["batch"],) if p["batch"] > 1 else ()
    rng = np.random.default_rng(0)
    a = rng.random(shape + (p["m"], p["k"])).astype(dt)
    b = rng.random(shape + (p["k"], p["n"])).astype(dt)
    c = np.empty(shape + (p["m"], p["n"]), dt)
    return (lambda: np.matmul(a, b, out=c)), "np.matmul(A, B, out=C)", (c, a, b)


_SQRT_2_PI = math.sqrt(2 / math.pi)


def _step(op: str, x, other, out):
    """One elementwise step into ``out`` (a new array, as every unfused step writes)."""
    if op in ("add", "bias"):
        np.add(x, other, out=out)
    elif op == "sub":
        np.subtract(x, other, out=out)
    elif op == "mul":
        np.multiply(x, other, out=out)
    elif op == "div":
        np.divide(x, other, out=out)
    elif op == "max":
        np.maximum(x, other, out=out)
    elif op == "fma":
        np.multiply(x, 1.5, out=out)
        np.add(out, other, out=out)
    elif op == "scale":
        np.multiply(x, 1.5, out=out)
    elif op == "relu":
        np.maximum(x, 0, out=out)
    elif op == "square":
        np.multiply(x, x, out=out)
    elif op == "sqrt":
        np.sqrt(x, out=out)
    elif op == "exp":
        np.exp(x, out=out)
    elif op == "tanh":
        np.tanh(x, out=out)
    elif op in ("sigmoid", "silu"):
        np.negative(x, out=out)
        np.exp(out, out=out)
        np.add(out, 1, out=out)
        np.divide(x if op == "silu" else 1, out, out=out)
    elif op == "gelu":  # tanh form
        np.multiply(x, x, out=out)
        np.multiply(out, x, out=out)
        np.multiply(out, 0.044715, out=out)
        np.add(out, x, out=out)
        np.multiply(out, _SQRT_2_PI, out=out)
        np.tanh(out, out=out)
        np.add(out, 1, out=out)
        np.multiply(out, x, out=out)
        np.multiply(out, 0.5, out=out)
    elif op == "copy":
        np.copyto(out, x)
    else:  # pragma: no cover - refused by timing_problem
        raise ValueError(op)


def _elementwise(p):
    dt = _DTYPES[p["dtype"]]
    n = p["n"]
    tensors: dict[str, np.ndarray] = {p["input"]: np.full(n, 0.5, dt)}
    steps = p["steps"] or []
    for step in steps:
        for name in step.get("inputs") or ():
            tensors.setdefault(name, np.full(n, 0.25, dt))
    outs = [np.empty(n, dt) for _ in steps]

    def run():
        current = tensors[p["input"]]
        for step, out in zip(steps, outs, strict=True):
            extra = step.get("inputs") or ()
            _step(step["op"], current, tensors[extra[0]] if extra else current, out)
            current = out

    how = "numpy ufuncs step by step, each into its own array"
    if p["fused"]:
        how += " (numpy cannot fuse: the fused chain runs unfused here)"
    return run, how, (outs[-1] if outs else tensors[p["input"]], tensors)


def _reduction(p):
    dt = _DTYPES[p["dtype"]]
    x = np.full((p["rows"], p["n"]), 0.5, dt)
    r = np.empty(p["rows"], dt)
    if p["op"] == "sum":
        return (lambda: np.add.reduce(x, axis=1, out=r)), "np.add.reduce(x, axis=1)", (r, x)
    if p["op"] == "max":
        return ((lambda: np.maximum.reduce(x, axis=1, out=r)), "np.maximum.reduce(x, axis=1)",
                (r, x))
    y = np.full_like(x, 0.25)
    return (lambda: np.einsum("ij,ij->i", x, y, out=r)), "np.einsum('ij,ij->i', x, y)", (r, x, y)


def _softmax(p):
    dt = _DTYPES[p["dtype"]]
    x = np.random.default_rng(0).random((p["rows"], p["cols"])).astype(dt)
    y = np.empty_like(x)
    m = np.empty((p["rows"], 1), dt)
    s = np.empty((p["rows"], 1), dt)

    def run():
        np.maximum.reduce(x, axis=1, out=m, keepdims=True)
        np.subtract(x, m, out=y)
        np.exp(y, out=y)
        np.add.reduce(y, axis=1, out=s, keepdims=True)
        np.divide(y, s, out=y)

    return run, "max, subtract, exp, sum, divide: numpy ufuncs with out=", (y, x)


def _norm(p):
    dt, wt = _DTYPES[p["dtype"]], _DTYPES[p["weight_dtype"]]
    rows, hidden = p["rows"], p["hidden"]
    x = np.random.default_rng(0).random((rows, hidden)).astype(dt)
    gamma, beta = np.full(hidden, 1.1, wt), np.full(hidden, 0.1, wt)
    y, t = np.empty_like(x), np.empty_like(x)
    stat = np.empty((rows, 1), dt)
    layer = p["variant"] == "layernorm"

    def run():
        if layer:  # mean, centre, variance, normalise
            np.add.reduce(x, axis=1, out=stat, keepdims=True)
            np.multiply(stat, 1 / hidden, out=stat)
            np.subtract(x, stat, out=y)
            np.multiply(y, y, out=t)
        else:  # mean square, normalise
            np.copyto(y, x)
            np.multiply(x, x, out=t)
        np.add.reduce(t, axis=1, out=stat, keepdims=True)
        np.multiply(stat, 1 / hidden, out=stat)
        np.add(stat, 1e-6, out=stat)
        np.sqrt(stat, out=stat)
        np.divide(y, stat, out=y)
        np.multiply(y, gamma, out=y)
        if layer:
            np.add(y, beta, out=y)

    return run, f"{p['variant']} with numpy ufuncs and reductions (out=)", (y, x, gamma, beta)


_BUILDERS: dict[str, Callable] = {"gemm": _gemm, "elementwise": _elementwise,
                                  "reduction": _reduction, "softmax": _softmax, "norm": _norm}


def build(op: Operation):
    """``(run, how, (result, *inputs))``: the numpy work of ``op`` on fresh arrays."""
    return _BUILDERS[op.kind](_params(op))


def time_operation(op: Operation, budget_s: float = 1.0, min_runs: int = 3,
                   max_runs: int = 50, cancelled: Callable[[], bool] = lambda: False
                   ) -> TimedOperation:
    """Best-of timing of ``op`` run with numpy here; raises ``ValueError`` with the reason
    when it cannot be run as written."""
    problem = timing_problem(op)
    if problem:
        raise ValueError(f"{op.name}: {problem}")
    run, how, _ = build(op)
    run()  # warm: pages touched, BLAS threads started
    times = time_runs(run, budget_s, min_runs, max_runs, cancelled)
    return TimedOperation(best_of(times, max(1.0, float(op.counts().flops))), how)
