"""Property tests of the counting and the roofline, for every operation kind.

Expected totals are the formulas of product.md ("Counting conventions"), written out here
independently of the engine's terms.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.model.dtypes import DTYPE_BYTES, PRECISIONS, wider
from workbench.model.hardware import Hardware
from workbench.model.operations import KINDS, STEP_OPS, Operation
from workbench.model.roofline import BOUND_NAMES, evaluate, evaluate_arrays, sweep

SETTINGS = settings(max_examples=80, deadline=None)
FEW = settings(max_examples=40, deadline=None)

DTYPES = sorted(DTYPE_BYTES)
dtypes = st.sampled_from(DTYPES)
dims = st.integers(1, 8192)

# ---------------------------------------------------------------------------------------
# strategies: one per kind, returning an Operation


@st.composite
def gemm_ops(draw, dtype=None):
    dt = dtype or draw(dtypes)
    return Operation("gemm", {
        "batch": draw(st.integers(1, 8)), "m": draw(dims), "n": draw(dims), "k": draw(dims),
        "dtype": dt,
        "a_dtype": draw(st.none() | dtypes), "b_dtype": draw(st.none() | dtypes),
        "c_dtype": draw(st.none() | dtypes),
    })


@st.composite
def attention_ops(draw, implementation=None):
    kv_heads = draw(st.integers(1, 16))
    group = draw(st.integers(1, 8))
    return Operation("attention", {
        "implementation": implementation or draw(st.sampled_from(["flash", "naive"])),
        "batch": draw(st.integers(1, 4)),
        "heads": kv_heads * group,
        "kv_heads": kv_heads,
        "head_dim": draw(st.integers(1, 256)),
        "query_len": draw(dims),
        "kv_len": draw(dims),
        "causal": draw(st.booleans()),
        "dtype": draw(dtypes),
        "score_passes": draw(st.integers(0, 6)),
        "score_dtype": draw(st.none() | dtypes),
    })


TENSOR_NAMES = ["x", "y", "r", "b", "bias", "t1", "out"]


@st.composite
def chain_steps(draw):
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(sorted(STEP_OPS)))
        step = {"op": op}
        inputs = draw(st.lists(st.sampled_from(TENSOR_NAMES), max_size=3))
        if inputs:
            step["inputs"] = inputs
        if op == "custom" or (draw(st.booleans()) and draw(st.booleans())):
            step["flops"] = float(draw(st.integers(0, 40)))
        steps.append(step)
    return steps


@st.composite
def elementwise_ops(draw, fused=None):
    return Operation("elementwise", {
        "n": draw(st.integers(1, 1 << 28)),
        "dtype": draw(dtypes),
        "input": draw(st.sampled_from(["x", "a"])),
        "output": draw(st.sampled_from(["out", "y", "w"])),
        "steps": draw(chain_steps()),
        "fused": draw(st.booleans()) if fused is None else fused,
        "write_allocate": draw(st.booleans()),
    })


@st.composite
def norm_ops(draw):
    return Operation("norm", {
        "variant": draw(st.sampled_from(["layernorm", "rmsnorm"])),
        "rows": draw(dims), "hidden": draw(dims), "dtype": draw(dtypes),
        "weight_dtype": draw(st.none() | dtypes),
    })


@st.composite
def softmax_ops(draw):
    return Operation("softmax", {"rows": draw(dims), "cols": draw(dims), "dtype": draw(dtypes)})


@st.composite
def reduction_ops(draw):
    return Operation("reduction", {
        "op": draw(st.sampled_from(["sum", "max", "dot"])),
        "n": draw(st.integers(1, 1 << 30)), "rows": draw(st.integers(1, 64)),
        "dtype": draw(dtypes),
    })


@st.composite
def custom_ops(draw):
    return Operation("custom", {
        "flops": draw(st.floats(1.0, 1e18)),
        "bytes": draw(st.floats(1.0, 1e15)),
        "precision": draw(st.sampled_from(PRECISIONS)),
    })


@st.composite
def sharded_matmul_ops(draw):
    return Operation("sharded_matmul", {
        "b": draw(dims), "d": draw(dims), "f": draw(dims), "chips": draw(st.integers(2, 64)),
        "collective": draw(st.sampled_from(["all_reduce", "reduce_scatter"])),
        "dtype": draw(dtypes), "sum_dtype": draw(st.none() | dtypes),
    })


@st.composite
def moe_gemm_ops(draw):
    experts = draw(st.integers(1, 512))
    return Operation("moe_gemm", {
        "layers": draw(st.integers(1, 128)), "tokens": draw(dims), "experts": experts,
        "top_k": draw(st.integers(1, experts)), "n": draw(dims), "k": draw(dims),
        "dtype": draw(dtypes), "w_dtype": draw(st.none() | dtypes),
    })


@st.composite
def mla_attention_ops(draw):
    return Operation("mla_attention", {
        "batch": draw(st.integers(1, 256)), "heads": draw(st.integers(1, 256)),
        "kv_lora_rank": draw(st.integers(1, 2048)), "rope_dim": draw(st.integers(1, 256)),
        "query_len": draw(dims), "kv_len": draw(dims), "causal": draw(st.booleans()),
        "dtype": draw(dtypes), "kv_dtype": draw(st.none() | dtypes),
    })


@st.composite
def all_reduce_ops(draw):
    return Operation("all_reduce", {
        "rows": draw(dims), "hidden": draw(dims), "chips": draw(st.integers(2, 64)),
        "dtype": draw(dtypes),
    })


STRATEGIES = {
    "moe_gemm": moe_gemm_ops(), "mla_attention": mla_attention_ops(),
    "all_reduce": all_reduce_ops(),
    "gemm": gemm_ops(), "attention": attention_ops(), "elementwise": elementwise_ops(),
    "norm": norm_ops(), "softmax": softmax_ops(), "reduction": reduction_ops(),
    "custom": custom_ops(), "sharded_matmul": sharded_matmul_ops(),
}


def test_every_kind_has_a_strategy():
    assert set(STRATEGIES) == set(KINDS)


any_op = st.one_of(*STRATEGIES.values())


@st.composite
def machines(draw, overhead=None):
    """A machine with a (random) peak for every precision and one memory level."""
    compute = {p: draw(st.floats(1e9, 1e16)) for p in PRECISIONS}
    # vector peaks for every precision, or none (vector work then meets the matrix peaks)
    vector = draw(st.just({}) | st.fixed_dictionaries(
        {p: st.floats(1e9, 1e15) for p in PRECISIONS}))
    if overhead is None:
        overhead = draw(st.none() | st.floats(1e-7, 1e-4))
    return Hardware(
        name="hypothetical", compute=compute, vector_compute=vector,
        memory={"hbm": draw(st.floats(1e8, 1e13))},
        interconnect={"link": draw(st.floats(1e8, 1e12))},
        launch_overhead=overhead,
        efficiency=draw(st.none() | st.floats(0.05, 1.0)),
    )


# ---------------------------------------------------------------------------------------
# independent totals from product.md's conventions


def size(dtype):
    return DTYPE_BYTES[dtype]


def expected_totals(op: Operation) -> tuple[float, float, float]:
    """(flops, bytes read, bytes written) from the documented formulas."""
    p = op.resolved()
    if op.kind == "gemm":
        b, m, n, k = p["batch"], p["m"], p["n"], p["k"]
        sa, sb, sc = (size(p[x] or p["dtype"]) for x in ("a_dtype", "b_dtype", "c_dtype"))
        return 2 * b * m * n * k, b * (m * k * sa + k * n * sb), b * m * n * sc
    if op.kind == "attention":
        b, h, hk, d = p["batch"], p["heads"], p["kv_heads"], p["head_dim"]
        q, k = p["query_len"], p["kv_len"]
        # causal, queries at the end of the sequence: visible fraction 1 - q/(2k) for q <= k
        # (the parameter's doc); q > k has no such reading and is clamped to 1/2. Only Flash
        # skips the masked blocks: a naive kernel computes every score, then masks.
        flash = p["implementation"] == "flash"
        c = 1 - min(q, k) / (2 * k) if p["causal"] and flash else 1
        s = size(p["dtype"])
        read = b * h * q * d * s + 2 * b * hk * k * d * size(p["kv_dtype"] or p["dtype"])
        written = b * h * q * d * s
        if p["implementation"] == "naive":
            passes, ss = p["score_passes"], size(p["score_dtype"] or p["dtype"])
            written += math.ceil(passes / 2) * b * h * q * k * ss
            read += (passes // 2) * b * h * q * k * ss
        return 4 * b * h * q * k * d * c, read, written
    if op.kind == "elementwise":
        n, s, wa = p["n"], size(p["dtype"]), p["write_allocate"]
        steps = p["steps"]
        per = sum(st_["flops"] if st_.get("flops") is not None else STEP_OPS[st_["op"]][0]
                  for st_ in steps)
        if p["fused"]:
            external = {p["input"]}
            for st_ in steps:
                external.update(st_.get("inputs") or ())
            stores = 1
            loads = len(external)
        else:
            stores = len(steps)
            loads = sum(1 + len(st_.get("inputs") or ()) for st_ in steps)
        return per * n, (loads + (stores if wa else 0)) * n * s, stores * n * s
    if op.kind == "norm":
        rows, hidden, s = p["rows"], p["hidden"], size(p["dtype"])
        sw = size(p["weight_dtype"] or p["dtype"])
        per, weights = (8, 2) if p["variant"] == "layernorm" else (4, 1)
        return per * rows * hidden, rows * hidden * s + weights * hidden * sw, rows * hidden * s
    if op.kind == "softmax":
        e, s = p["rows"] * p["cols"], size(p["dtype"])
        return 5 * e, e * s, e * s
    if op.kind == "reduction":
        rows, n, s = p["rows"], p["n"], size(p["dtype"])
        vectors = 2 if p["op"] == "dot" else 1
        return (2 if p["op"] == "dot" else 1) * rows * n, vectors * rows * n * s, rows * s
    if op.kind == "custom":
        return p["flops"], p["bytes"], 0.0
    if op.kind == "sharded_matmul":
        # per chip: its D/N share of 2BDF; sends 2(N-1)/N (ring all-reduce) or (N-1)/N
        # (reduce-scatter) of the B x F partial sums
        b, d, f, n = p["b"], p["d"], p["f"], p["chips"]
        share = 2 if p["collective"] == "all_reduce" else 1
        s = size(p["sum_dtype"] or p["dtype"])
        return 2 * b * d * f / n, 0.0, share * (n - 1) / n * b * f * s
    if op.kind == "moe_gemm":
        # FLOPs for k experts per token; weights of the expected distinct experts hit
        L, t, e, k = p["layers"], p["tokens"], p["experts"], p["top_k"]
        n, kk = p["n"], p["k"]
        sa, sw = size(p["dtype"]), size(p["w_dtype"] or p["dtype"])
        hit = e * (1 - (1 - k / e) ** t)
        return 2 * L * t * k * n * kk, L * (t * k * kk * sa + hit * kk * n * sw), L * t * k * n * sa
    if op.kind == "mla_attention":
        b, h, dc, dr, q, k = (p[x] for x in ("batch", "heads", "kv_lora_rank", "rope_dim",
                                             "query_len", "kv_len"))
        c = 1 - min(q, k) / (2 * k) if p["causal"] else 1
        s, skv = size(p["dtype"]), size(p["kv_dtype"] or p["dtype"])
        return (2 * b * h * q * k * (2 * dc + dr) * c, b * h * q * (dc + dr) * s
                + b * k * (dc + dr) * skv, b * h * q * dc * s)
    if op.kind == "all_reduce":
        rows, hidden, n = p["rows"], p["hidden"], p["chips"]
        message = rows * hidden * size(p["dtype"])
        if message <= 1e6:  # auto: one-shot up to 1 MB per chip, every other chip's sums read
            return (n - 1) * rows * hidden, 0.0, (n - 1) * message
        return (n - 1) / n * rows * hidden, 0.0, 2 * (n - 1) / n * message
    raise AssertionError(op.kind)


# ---------------------------------------------------------------------------------------
# counting


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_totals_match_the_documented_formulas(kind, data):
    op = data.draw(STRATEGIES[kind])
    c = op.counts()
    flops, read, written = expected_totals(op)
    assert c.flops == pytest.approx(flops, rel=1e-12)
    assert c.bytes_read == pytest.approx(read, rel=1e-12, abs=1e-12)
    assert c.bytes_written == pytest.approx(written, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_derivation_terms_add_up(kind, data):
    op = data.draw(STRATEGIES[kind])
    c = op.counts()
    assert c.flop_terms and c.byte_terms
    assert all(t.kind == "flop" for t in c.flop_terms)
    assert all(t.kind in ("read", "write") for t in c.byte_terms)
    assert sum(t.value for t in c.flop_terms) == pytest.approx(c.flops, rel=1e-12)
    assert sum(t.value for t in c.byte_terms) == pytest.approx(c.bytes, rel=1e-12)
    assert c.bytes_read + c.bytes_written == pytest.approx(c.bytes, rel=1e-12)
    for t in c.byte_terms:
        assert t.value >= 0
        if t.elements is not None:  # a tensor term: elements x element size
            assert t.value == pytest.approx(t.elements * t.element_bytes, rel=1e-12)
            assert t.element_bytes == DTYPE_BYTES[t.dtype]
        assert t.formula and t.substituted


@SETTINGS
@given(elementwise_ops(fused=False))
def test_fused_never_moves_more_bytes_than_unfused(unfused):
    fused = Operation("elementwise", {**unfused.params, "fused": True})
    cu, cf = unfused.counts(), fused.counts()
    assert cf.bytes <= cu.bytes
    if len(unfused.params["steps"]) >= 2:  # an intermediate is stored and reloaded
        assert cf.bytes < cu.bytes
    assert cf.flops == cu.flops  # fusion changes traffic, never arithmetic
    # the fused chain stores exactly one tensor (plus its write-allocate read)
    assert len([t for t in cf.byte_terms if t.kind == "write"]) == 1


@SETTINGS
@given(attention_ops(implementation="naive"))
def test_flash_never_moves_more_bytes_than_naive(naive):
    flash = Operation("attention", {**naive.params, "implementation": "flash"})
    cn, cf = naive.counts(), flash.counts()
    assert cf.bytes <= cn.bytes
    # the same FLOPs, except that a causal Flash kernel skips the masked blocks (a naive one
    # computes every score and masks afterwards)
    if naive.resolved()["causal"]:
        assert cf.flops < cn.flops
    else:
        assert cf.flops == pytest.approx(cn.flops, rel=1e-12)
    if naive.params["score_passes"] > 0:
        assert cf.bytes < cn.bytes


@SETTINGS
@given(attention_ops(), st.integers(2, 8))
def test_gqa_moves_no_more_bytes_than_mha(op, factor):
    # kv_heads < heads and dividing heads: grouped-query attention
    kv = op.params["kv_heads"]
    gqa = Operation("attention", {**op.params, "heads": kv * factor, "kv_heads": kv})
    mha = Operation("attention", {**op.params, "heads": kv * factor, "kv_heads": kv * factor})
    cg, cm = gqa.counts(), mha.counts()
    assert cg.bytes < cm.bytes
    assert cg.flops == pytest.approx(cm.flops, rel=1e-12)


@SETTINGS
@given(gemm_ops(), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4),
       st.integers(1, 8))
def test_growing_gemm_never_lowers_intensity(op, fm, fn, fk, batch):
    small = op.counts()
    p = op.params
    big = Operation("gemm", {**p, "m": p["m"] * fm, "n": p["n"] * fn, "k": p["k"] * fk,
                             "batch": batch}).counts()
    assert big.flops / big.bytes >= small.flops / small.bytes * (1 - 1e-12)


@SETTINGS
@given(gemm_ops(), st.integers(0, 3))
def test_growing_one_gemm_dimension_raises_intensity(op, which):
    # I = 2 / (s_A/N + s_B/M + s_C/K): strictly increasing in each of M, N, K
    name = ("m", "n", "k", "m")[which]
    p = op.params
    small = op.counts()
    big = Operation("gemm", {**p, name: p[name] + 1}).counts()
    assert big.flops / big.bytes > small.flops / small.bytes


# ---------------------------------------------------------------------------------------
# the roofline


def kernels_of(op: Operation) -> int:
    """Kernels launched: an unfused chain is one kernel per step; everything else is one."""
    p = op.resolved()
    if op.kind == "elementwise" and not p["fused"] and p["steps"]:
        return len(p["steps"])
    return 1


def check_result(r, hw, op):
    op_kind, unit, kernels = op.kind, op.resolved().get("unit"), kernels_of(op)
    tol = 1e-12
    vector_kind = op_kind in ("elementwise", "norm", "softmax", "reduction") or (
        op_kind == "custom" and unit == "vector")
    on_vector = vector_kind and bool(hw.vector_compute)
    assert r.unit == ("vector" if on_vector else "matrix")
    table = hw.vector_compute if on_vector else hw.compute
    assert r.peak_flops == table[r.precision_used]
    assert r.bandwidth == hw.bandwidth(r.level)
    assert r.ridge == pytest.approx(r.peak_flops / r.bandwidth, rel=tol)
    assert r.intensity == pytest.approx(r.flops / r.bytes, rel=tol)
    assert r.attainable_flops <= r.peak_flops * (1 + tol)
    assert r.attainable_flops <= r.intensity * r.bandwidth * (1 + tol)
    # and it is the lower of the two roofs, not merely below both
    assert r.attainable_flops == pytest.approx(min(r.peak_flops, r.intensity * r.bandwidth),
                                               rel=tol)
    assert r.fraction_of_peak <= 1 + tol
    assert r.t_math_s == pytest.approx(r.flops / r.peak_flops, rel=tol)
    assert r.t_mem_s == pytest.approx(r.bytes / r.bandwidth, rel=tol)
    assert r.t_lower_s <= r.t_upper_s <= 2 * r.t_lower_s
    assert r.t_lower_s == max(r.t_math_s, r.t_mem_s)
    assert r.t_upper_s == pytest.approx(r.t_math_s + r.t_mem_s, rel=tol)
    # at the attainable rate the FLOPs take exactly the lower bound
    assert r.flops / r.attainable_flops == pytest.approx(r.t_lower_s, rel=1e-9)
    eff = hw.efficiency or 1.0
    floor = (hw.launch_overhead or 0.0) * kernels
    assert r.t_predicted_s == pytest.approx(max(r.t_lower_s / eff, floor), rel=tol)
    assert r.t_predicted_s >= r.t_lower_s * (1 - tol)


@SETTINGS
@given(any_op, machines())
def test_roofline_invariants_for_every_kind(op, hw):
    c = op.counts()
    assume(c.flops > 0 and c.bytes > 0)
    r = evaluate(op, hw)
    assert r.flops == c.flops and r.bytes == c.bytes
    assert r.precision_used == c.precision  # the machine has a peak for every precision
    check_result(r, hw, op)


@SETTINGS
@given(any_op, machines(overhead=None))
def test_bound_agrees_with_intensity_and_ridge(op, hw):
    c = op.counts()
    assume(c.flops > 0 and c.bytes > 0)
    r = evaluate(op, hw)
    floor = (hw.launch_overhead or 0.0) * kernels_of(op)
    if floor > 0 and r.t_lower_s / (hw.efficiency or 1.0) < floor:
        assert r.bound == "overhead"
        return
    # within rounding of the ridge both answers are defensible; elsewhere they must agree
    if r.intensity >= r.ridge * (1 + 1e-9):
        assert r.bound == "compute"
    elif r.intensity <= r.ridge * (1 - 1e-9):
        assert r.bound == "memory"
    else:
        assert r.bound in ("compute", "memory")


@SETTINGS
@given(any_op, machines(overhead=0.0) | machines(overhead=None).map(
    lambda h: h.copy(launch_overhead=None)))
def test_without_overhead_bound_is_compute_exactly_when_intensity_reaches_ridge(op, hw):
    c = op.counts()
    assume(c.flops > 0 and c.bytes > 0)
    r = evaluate(op, hw)
    assert r.bound != "overhead"
    if abs(r.intensity / r.ridge - 1) > 1e-9:
        assert (r.bound == "compute") == (r.intensity >= r.ridge)


@SETTINGS
@given(st.integers(1, 10**6), st.sampled_from([1.0, 2.0, 10.0, 100.0, 295.0, 1024.0]))
def test_exactly_at_the_ridge_is_compute(nbytes, ridge):
    # exactly representable cases: intensity == ridge, T_math == T_mem -> compute
    hw = Hardware(name="r", compute={"bf16": ridge * 1e12}, memory={"hbm": 1e12})
    r = evaluate(Operation("custom", {"flops": ridge * nbytes, "bytes": float(nbytes),
                                      "precision": "bf16"}), hw)
    assert r.intensity == r.ridge
    assert r.bound == "compute"


@SETTINGS
@given(any_op, machines(overhead=None))
def test_overhead_bound_exactly_below_the_launch_floor(op, hw):
    c = op.counts()
    assume(c.flops > 0 and c.bytes > 0)
    r = evaluate(op, hw)
    # one rule: overhead-bound exactly when the launch floor is the larger term of the
    # predicted time (the derated lower bound is below it)
    floor = (hw.launch_overhead or 0.0) * kernels_of(op)
    derated = r.t_lower_s / (hw.efficiency or 1.0)
    assert (r.bound == "overhead") == (floor > 0 and derated < floor)
    if r.bound == "overhead":
        assert r.t_predicted_s == floor
    else:
        assert r.t_predicted_s == pytest.approx(derated, rel=1e-12)


positive = st.floats(1e-3, 1e18)


@SETTINGS
@given(st.lists(st.tuples(positive, positive, st.floats(1e9, 1e16), st.floats(1e8, 1e13)),
                min_size=1, max_size=20),
       st.none() | st.floats(1e-7, 1e-3), st.none() | st.floats(0.05, 1.0))
def test_evaluate_arrays_matches_scalar_evaluate(rows, overhead, efficiency):
    f, b, p, w = (np.array(col) for col in zip(*rows, strict=True))
    out = evaluate_arrays(f, b, p, w, overhead, efficiency)
    for i, (fi, bi, pi, wi) in enumerate(rows):
        hw = Hardware(name="m", compute={"fp32": pi}, memory={"hbm": wi},
                      launch_overhead=overhead, efficiency=efficiency)
        r = evaluate(Operation("custom", {"flops": fi, "bytes": bi, "precision": "fp32"}), hw)
        assert BOUND_NAMES[int(out["bound"][i])] == r.bound
        for key in ("intensity", "ridge", "attainable_flops", "fraction_of_peak", "t_math_s",
                    "t_mem_s", "t_lower_s", "t_upper_s", "t_predicted_s"):
            assert out[key][i] == pytest.approx(getattr(r, key), rel=1e-12), key
        assert out["flops"][i] == fi and out["bytes"][i] == bi


@FEW
@given(gemm_ops(), machines(), st.lists(st.integers(1, 8192), min_size=1, max_size=12))
def test_sweep_matches_pointwise_evaluate_gemm(op, hw, ms):
    out = sweep(op, hw, m=ms)
    for i, m in enumerate(ms):
        r = evaluate(Operation("gemm", {**op.params, "m": m}), hw)
        assert BOUND_NAMES[int(out["bound"][i])] == r.bound
        for key in ("intensity", "attainable_flops", "t_lower_s", "t_upper_s",
                    "t_predicted_s"):
            assert out[key][i] == pytest.approx(getattr(r, key), rel=1e-12), key


@FEW
@given(attention_ops(), machines(), st.lists(st.integers(1, 8192), min_size=1, max_size=12))
def test_sweep_matches_pointwise_evaluate_attention(op, hw, kv_lens):
    # kv_len swept, causal or not: the causal fraction must vectorise like the scalar one
    out = sweep(op, hw, kv_len=kv_lens)
    for i, k in enumerate(kv_lens):
        r = evaluate(Operation("attention", {**op.params, "kv_len": k}), hw)
        assert out["flops"][i] == pytest.approx(r.flops, rel=1e-12)
        assert out["bytes"][i] == pytest.approx(r.bytes, rel=1e-12)
        assert BOUND_NAMES[int(out["bound"][i])] == r.bound


@FEW
@given(any_op, machines())
def test_scaling_the_machine(op, hw):
    # twice the bandwidth never lowers attainable; twice every peak never lowers it either
    c = op.counts()
    assume(c.flops > 0 and c.bytes > 0)
    base = evaluate(op, hw)
    wider_bw = evaluate(op, replace(hw, memory={"hbm": 2 * hw.memory["hbm"]}))
    faster = evaluate(op, replace(hw, compute={k: 2 * v for k, v in hw.compute.items()}))
    assert wider_bw.attainable_flops >= base.attainable_flops * (1 - 1e-12)
    assert faster.attainable_flops >= base.attainable_flops * (1 - 1e-12)
    assert wider_bw.t_lower_s <= base.t_lower_s * (1 + 1e-12)
    assert faster.t_lower_s <= base.t_lower_s * (1 + 1e-12)


def test_wider_is_symmetric_in_width():
    # the compute precision of a mixed GEMM is the wider operand type, whichever side it is
    for a in DTYPES:
        for b in DTYPES:
            w = wider(a, b)
            assert DTYPE_BYTES[w] == max(DTYPE_BYTES[a], DTYPE_BYTES[b])


def test_hardware_copy_can_change_rates():
    # Hardware.copy(**changes) is the documented way to derive an edited machine; changing
    # the rates themselves must work and must not touch the original.
    hw = Hardware(name="m", compute={"bf16": 1e14}, memory={"hbm": 1e12},
                  interconnect={"ici": 1e10})
    faster = hw.copy(compute={"bf16": 2e14})
    wider_bw = hw.copy(memory={"hbm": 2e12})
    linked = hw.copy(interconnect={"ici": 5e10})
    assert faster.peak("bf16") == 2e14 and faster.bandwidth() == 1e12
    assert wider_bw.bandwidth() == 2e12 and wider_bw.peak("bf16") == 1e14
    assert linked.bandwidth("ici") == 5e10
    assert hw.peak("bf16") == 1e14 and hw.bandwidth() == 1e12 and hw.bandwidth("ici") == 1e10


@given(any_op)
def test_an_operations_copy_is_equal_and_shares_nothing_that_can_change(op):
    # Operation.copy is how a whole model's view derives each layer kind's point: the copy
    # counts as the original, and editing its parameters (a chain's steps included) must
    # leave the original as it was.
    import copy as copying
    before = copying.deepcopy(op.params)
    twin = op.copy()
    assert twin.params == op.params and twin.params is not op.params
    assert twin.counts().flops == op.counts().flops
    for value in twin.params.values():
        if isinstance(value, list):
            for step in value:
                step["op"] = "changed"
            value.append({"op": "added"})
    twin.params["extra"] = 1
    assert op.params == before


def test_communication_kind_needs_an_interconnect():
    from workbench.model.hardware import UnknownLevel

    op = Operation("sharded_matmul", {"b": 256, "d": 8192, "f": 8192})
    bare = Hardware(name="no links", compute={"bf16": 1e14}, memory={"hbm": 1e12})
    with pytest.raises(UnknownLevel, match="interconnect"):
        evaluate(op, bare)
    linked = Hardware(name="links", compute={"bf16": 1e14}, memory={"hbm": 1e12},
                      interconnect={"ici": 4.5e10, "dcn": 1e9})
    r = evaluate(op, linked)
    assert r.level == "ici" and r.bandwidth == 4.5e10  # the first interconnect
    r = evaluate(Operation("sharded_matmul", {"b": 256}, memory_level="dcn"), linked)
    assert r.level == "dcn" and r.bandwidth == 1e9


_EDGE = st.sampled_from([0.0, -0.0, 1.0, 1e-300, 1e300, math.inf, math.nan])
_VALUES = st.one_of(_EDGE, st.floats(min_value=0.0, max_value=1e30, allow_nan=False),
                    st.integers(min_value=0, max_value=10**24))


@given(f=_VALUES, b=_VALUES, p=st.floats(1e-3, 1e18), w=st.floats(1e-3, 1e16),
       overhead=st.one_of(st.none(), st.floats(0.0, 1e-3)),
       efficiency=st.one_of(st.none(), st.floats(0.05, 1.0)))
def test_scalar_evaluation_is_the_array_evaluation(f, b, p, w, overhead, efficiency):
    """One pair is evaluated in plain floats (fast on opening big sessions); it must give
    exactly what the vectorised formulas give, zeros, infinities and nans included."""
    from workbench.model.roofline import evaluate_arrays, evaluate_scalars

    arrays = evaluate_arrays(f, b, p, w, overhead, efficiency)
    scalars = evaluate_scalars(f, b, p, w, overhead, efficiency)
    assert set(scalars) == set(arrays)
    for key, value in scalars.items():
        expected = float(arrays[key])
        if math.isnan(expected):
            assert math.isnan(value), key
        else:
            assert value == expected, key
