"""The frozen schema_version 2 session loads, with these values, in every future version."""

from __future__ import annotations

import pytest

from workbench.io.sessions import load_session
from workbench.model.analysis import evaluate_session

from ..conftest import ROOT

FROZEN = ROOT / "tests" / "fixtures" / "session_v2_frozen.yaml"


def test_frozen_v2_session_loads_forever():
    s = load_session(FROZEN)
    assert s.title == "Frozen v2 session"
    tpu, hopper = (e.hardware for e in s.hardware)
    assert s.hardware[0].preset == "tpu-v5e"
    assert hopper.vector_compute["bf16"] == 133.8e12
    assert hopper.capacity == 81559 * 2**20
    assert hopper.measured == ["memory.l2", "vector_compute.bf16"]
    results = {(p.operation.operation.name, p.hardware.hardware.name): p
               for p in evaluate_session(s)}
    on = {name: results[(name, "Hopper-like")].result for name, _ in
          [(e.operation.name, None) for e in s.operations]}
    assert on["FFN up"].peak_flops == 989.4e12 and on["FFN up"].unit == "matrix"
    # naive causal attention executes every FLOP: 4·h·q·k·d
    assert on["Prefill causal naive"].flops == 4 * 16 * 2048 * 2048 * 64
    chain = on["bias gelu residual"]
    assert (chain.unit, chain.peak_flops, chain.kernels) == ("vector", 133.8e12, 3)
    assert chain.t_predicted_s == pytest.approx(24e-6) and chain.bound == "overhead"
    assert on["int32 sum"].peak_flops == 33.5e12  # the int32 vector peak, not int8's
    assert on["Stencil"].peak_flops == 33.5e12  # fp64 on the vector units
    # the TPU has no int32 or fp64 peak: those pairs are skipped with the reason
    skipped = results[("int32 sum", tpu.name)]
    assert skipped.result is None and "no int32" in skipped.skipped.reason
