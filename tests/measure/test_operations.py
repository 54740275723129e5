"""Timing an operation with numpy here: what runs, that it computes what it says, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.document.document import new_operation
from workbench.measure.operations import build, time_operation, timing_problem


def _op(kind, **params):
    op = new_operation(kind)
    op.params.update(params)
    return op


SMALL = {
    "gemm": dict(m=64, n=48, k=32, dtype="fp32"),
    "elementwise": dict(n=4096, dtype="fp64"),
    "reduction": dict(n=4096, rows=3, dtype="fp32", op="dot"),
    "softmax": dict(rows=8, cols=256, dtype="fp64"),
    "norm": dict(rows=8, hidden=256, dtype="fp32", weight_dtype="fp32", variant="layernorm"),
}


@pytest.mark.parametrize("kind", list(SMALL))
def test_each_supported_kind_is_timed_best_of_several(kind):
    op = _op(kind, **SMALL[kind])
    assert timing_problem(op) is None
    timed = time_operation(op, budget_s=0.01)
    assert timed.timing.runs >= 3
    assert timed.time_s == min(timed.timing.times) > 0
    assert timed.timing.work == float(op.counts().flops)


def test_the_numpy_work_computes_what_the_operation_describes():
    run, _, (c, a, b) = build(_op("gemm", **SMALL["gemm"]))
    run()
    assert c.shape == (64, 48) and np.allclose(c, a @ b, rtol=1e-4)
    run, _, (y, x) = build(_op("softmax", **SMALL["softmax"]))
    run()
    assert np.allclose(y.sum(axis=1), 1.0)
    assert np.allclose(y, np.exp(x) / np.exp(x).sum(axis=1, keepdims=True))
    run, _, (y, x, gamma, beta) = build(_op("norm", **SMALL["norm"]))
    run()
    mean, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
    assert np.allclose(y, (x - mean) / np.sqrt(var + 1e-6) * gamma + beta, rtol=1e-4)
    run, _, (r, x, yy) = build(_op("reduction", **SMALL["reduction"]))
    run()
    assert np.allclose(r, (x * yy).sum(axis=1))


def test_an_elementwise_chain_runs_step_by_step():
    op = _op("elementwise", n=16, dtype="fp64", fused=True,
             steps=[{"op": "scale"}, {"op": "gelu"}, {"op": "add", "inputs": ["r"]},
                    {"op": "silu"}])
    run, how, (out, tensors) = build(op)
    run()
    x, r = tensors["x"], tensors["r"]
    v = 1.5 * x
    v = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))
    v = v + r
    v = v / (1 + np.exp(-v))
    assert np.allclose(out, v)
    assert "runs unfused here" in how


@pytest.mark.parametrize(("kind", "params", "reason"), [
    ("gemm", dict(dtype="bf16"), "all fp64 or all fp32"),
    ("gemm", dict(dtype="fp32", c_dtype="fp64"), "A fp32, B fp32, C fp64"),
    ("softmax", dict(dtype="bf16"), "numpy has no bf16 type"),
    ("attention", {}, "cannot run an operation of kind attention"),
    ("custom", {}, "cannot run an operation of kind custom"),
    ("gemm", dict(dtype="fp64", m=65536, n=65536, k=64), "too large to time here"),
    ("gemm", dict(dtype="fp32", m=12000, n=12000, k=12000), "would take too long"),
])
def test_what_numpy_cannot_run_as_written_is_refused(kind, params, reason):
    op = _op(kind, **params)
    assert reason in timing_problem(op)
    with pytest.raises(ValueError, match=reason.split()[0]):
        time_operation(op)
