"""Whole models end to end: local attention, collective latency, per-chip counts, a request,
the batch that fits, the batch sweep, expert and pipeline parallelism and cost.

Every expected number is worked out here by hand from the shipped config.json files and the
conventions in the README, not taken from the engine.
"""

from __future__ import annotations

import itertools

import pytest

from workbench.io.model_configs import parse_model_config, read_model_config
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Setup, layer_steps
from workbench.model.llm.results import model_result, model_totals
from workbench.model.operations import Operation

# ---------------------------------------------------------------------------------------
# local (sliding-window) attention


def test_gemma2_kv_cache_counts_the_window_of_its_local_layers():
    arch = read_model_config("Gemma-2-9B")
    setup = Setup(phase="decode", batch=1, prompt_len=32768, kv_len=32768)
    totals = model_totals(arch, setup)
    # 42 layers alternate global and local (window 4096); 2 (K, V) · 8 KV heads · 256 · 2 B
    per_layer_token = 2 * 8 * 256 * 2
    assert per_layer_token == 8192
    expected = (21 * 32768 + 21 * 4096) * 8192
    assert totals.kv_cache_bytes == expected
    assert round(expected / 1e9, 2) == 6.34
    # the bytes read: every global layer reads 32,768 cached positions, every local 4,096
    kv_read = sum(t.value for step in layer_steps(arch, setup) if step.role == "attention"
                  for t in step.operation.counts().byte_terms for _ in range(step.count)
                  if t.tensor in ("K", "V"))
    assert kv_read == expected


def test_window_below_the_context_only():
    arch = read_model_config("Gemma-2-9B")
    short = Setup(phase="decode", batch=2, prompt_len=1000, kv_len=1000)
    # every layer holds all 1,000 positions, in 63 whole blocks of 16 (1,008): the window
    # does not bite
    assert model_totals(arch, short).kv_cache_bytes == 2 * 42 * 1008 * 8192


def test_windowed_prefill_attention_flops_by_hand():
    # square causal prefill of 8,192 tokens, window 4,096: query i sees min(i, 4096)
    # positions; the banded area is 8192·4096 − 4096²/2
    op = Operation("attention", {"heads": 16, "kv_heads": 8, "head_dim": 256,
                                 "query_len": 8192, "kv_len": 8192, "causal": True,
                                 "window": 4096})
    c = op.counts()
    assert c.flops == 4 * 16 * 256 * (8192 * 4096 - 4096 ** 2 / 2)
    # K and V are read for all 8,192 positions once (some query sees each)
    assert sum(t.value for t in c.byte_terms if t.tensor == "K") == 8 * 8192 * 256 * 2
    decode = Operation("attention", {"heads": 16, "kv_heads": 8, "head_dim": 256,
                                     "query_len": 1, "kv_len": 32768, "window": 4096})
    d = decode.counts()
    assert d.flops == 4 * 16 * 4096 * 256
    assert sum(t.value for t in d.byte_terms if t.tensor == "V") == 8 * 4096 * 256 * 2


def test_window_term_texts_read_back():
    from model.test_formula_texts import check_term

    for q, k, causal in ((8192, 8192, True), (1, 32768, False), (16, 20000, True)):
        op = Operation("attention", {"heads": 16, "kv_heads": 8, "head_dim": 256,
                                     "query_len": q, "kv_len": k, "causal": causal,
                                     "window": 4096})
        counts = op.counts()
        for term in (*counts.flop_terms, *counts.byte_terms):
            check_term(op, term)


BASE = {"model_type": "mistral", "hidden_size": 1024, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
        "intermediate_size": 2048}


def test_sliding_window_read_from_each_family():
    mistral = parse_model_config({**BASE, "sliding_window": 512})
    assert mistral.kv_cache_bytes(4096, "bf16") == 4 * 512 * (2 * 2 * 128 * 2)
    none = parse_model_config({**BASE, "sliding_window": None})
    assert none.kv_cache_bytes(4096, "bf16") == 4 * 4096 * (2 * 2 * 128 * 2)
    # Qwen: only with use_sliding_window, from max_window_layers on
    qwen = {**BASE, "model_type": "qwen2", "sliding_window": 512, "max_window_layers": 3}
    assert parse_model_config(qwen).kv_cache_bytes(4096) == 4 * 4096 * 1024
    on = parse_model_config({**qwen, "use_sliding_window": True})
    assert on.kv_cache_bytes(4096) == (3 * 4096 + 512) * 1024
    # layer_types names them one by one
    typed = parse_model_config({**BASE, "sliding_window": 512, "layer_types": [
        "full_attention", "sliding_attention", "sliding_attention", "full_attention"]})
    assert typed.kv_cache_bytes(4096) == (2 * 4096 + 2 * 512) * 1024
    from workbench.io.errors import InputError

    with pytest.raises(InputError, match="layer_types"):
        parse_model_config({**BASE, "sliding_window": 512, "layer_types": ["full_attention"]})


def test_gemma2_kv_cache_line_reads_back():
    from model.test_formula_texts import evaluate_text

    from workbench.model.llm.results import derivation

    arch = read_model_config("Gemma-2-9B")
    setup = Setup(phase="decode", batch=3, prompt_len=32768, kv_len=32768)
    totals = model_totals(arch, setup)
    line = dict(derivation(arch, setup, totals, []))["KV cache"]
    values = line.split(" = ")[1]
    assert values == "3·(21·32768 + 21·4096)·8,192"
    assert evaluate_text(values) == totals.kv_cache_bytes == 3 * (21 * 32768 + 21 * 4096) * 8192


# ---------------------------------------------------------------------------------------
# collective latency


def _machine(**more):
    from workbench.model.hardware import Hardware

    return Hardware(name="m", compute={"bf16": 1e15}, memory={"hbm": 3e12},
                    interconnect={"nvlink": 450e9}, capacity=80e9, **more)


def test_all_reduce_step_latency_by_hand():
    from workbench.model.llm.results import derivation

    arch = read_model_config("Llama-3.1-70B")
    setup = Setup(phase="decode", batch=1, kv_len=2048, tp=8)
    hw = _machine(link_latency={"nvlink": 2e-6})
    with_latency = model_result(arch, setup, hw)
    without = model_result(arch, setup, _machine(link_latency={"nvlink": 0.0}))
    # 80 layers × 2 all-reduces of 8192 bf16 values (16 kB per chip, under 1 MB: one-shot,
    # 1 step of 2 µs each), and the logits all-gathered once in a ring of (8−1) steps
    expected = 80 * 2 * 1 * 2e-6 + 7 * 2e-6
    assert with_latency.latency_s == pytest.approx(expected, rel=1e-12)
    assert with_latency.t_lower_s - without.t_lower_s == pytest.approx(expected, rel=1e-9)
    lines = dict(derivation(arch, setup, model_totals(arch, setup), [with_latency]))
    assert lines["m: all-reduce (one-shot) latency"] == \
        "count·steps·α = 160·1·2 µs (machine) = 320 µs"
    assert lines["m: logits all-gather latency"] == \
        "count·steps·α = 1·(8−1)·2 µs (machine) = 14 µs"
    # the ring, as set: 2·(8−1) = 14 steps of 2 µs each
    ring = setup.with_(all_reduce="ring")
    with_latency = model_result(arch, ring, hw)
    without = model_result(arch, ring, _machine(link_latency={"nvlink": 0.0}))
    expected = 80 * 2 * 14 * 2e-6 + 7 * 2e-6
    assert with_latency.latency_s == pytest.approx(expected, rel=1e-12)
    assert with_latency.t_lower_s - without.t_lower_s == pytest.approx(expected, rel=1e-9)
    assert with_latency.t_predicted_s - without.t_predicted_s == pytest.approx(expected,
                                                                               rel=1e-9)
    lines = dict(derivation(arch, ring, model_totals(arch, ring), [with_latency]))
    line = lines["m: all-reduce (ring) latency"]
    assert line.startswith("count·steps·α = 160·2·(8−1)·2 µs (machine) = ")
    assert line.endswith("= 4.48 ms")
    assert "collective latency" in lines["m: T_lower"]
    # a tree of 8: 2·⌈log2 8⌉ = 6 steps
    tree = model_result(arch, setup.with_(all_reduce="tree"), hw)
    assert tree.latency_s == pytest.approx(80 * 2 * 6 * 2e-6 + 7 * 2e-6, rel=1e-12)


def test_link_latency_defaults_by_kind_of_link():
    from workbench.model.hardware import DEFAULT_LINK_LATENCY

    hw = get_preset("h100-sxm")
    assert hw.latency_of("nvlink") == (DEFAULT_LINK_LATENCY["NVLink"], "default for NVLink")
    assert get_preset("tpu-v5e").latency_of("ici")[1] == "default for ICI"
    assert _machine().latency_of("pcie")[0] == DEFAULT_LINK_LATENCY["PCIe"]
    assert _machine().latency_of("ib0")[1] == "default for InfiniBand"
    # on an H100 preset the TP = 8 decode pays 160 one-shot all-reduces of 1 step and a
    # logits all-gather of 7, each step 0.6 µs
    arch = read_model_config("Llama-3.1-70B")
    r = model_result(arch, Setup(phase="decode", batch=1, kv_len=2048, tp=8), hw)
    assert r.latency_s == pytest.approx((160 * 1 + 7) * 0.6e-6, rel=1e-12)


def test_link_latency_and_price_read_and_written_by_sessions(tmp_path):
    from workbench.io.errors import InputError
    from workbench.io.sessions import load_session, save_session
    from workbench.model.session import HardwareEntry, Session

    path = tmp_path / "s.yaml"
    path.write_text("schema_version: 1\nhardware:\n  - name: Box\n    compute: {bf16: 1 PFLOP/s}\n"
                    "    memory: {hbm: 3 TB/s}\n    interconnect: {nvlink: 450 GB/s}\n"
                    "    link_latency: {nvlink: 1.5 us}\n    price_per_hour: 2.5\n"
                    "operations: []\n", encoding="utf-8")
    hw = load_session(path).hardware[0].hardware
    assert hw.link_latency == {"nvlink": pytest.approx(1.5e-6)}
    assert hw.price_per_hour == 2.5
    out = tmp_path / "t.yaml"
    save_session(Session(hardware=[HardwareEntry(hw)]), out)
    again = load_session(out).hardware[0].hardware
    assert again.link_latency == hw.link_latency and again.price_per_hour == 2.5
    path.write_text(path.read_text().replace("{nvlink: 1.5 us}", "{ib: 1.5 us}"))
    with pytest.raises(InputError, match=r"link_latency.*ib.*names no interconnect"):
        load_session(path)


# ---------------------------------------------------------------------------------------
# per chip


def test_counts_per_chip_and_links_beside_memory():
    arch = read_model_config("Llama-3.1-70B")
    one = Setup(phase="prefill", batch=1, prompt_len=2048, tp=1)
    eight = one.with_(tp=8)
    t1, t8 = model_totals(arch, one), model_totals(arch, eight)
    # the all-reduces: 160 rings (2048 · 8192 · 2 B = 33.5 MB per chip, over 1 MB) of
    # 2·(8−1)/8 · 2048 · 8192 bf16 values each, and the last position's 128,256 logits
    # all-gathered, (8−1)/8 of them sent; on the links only
    links = 160 * 2 * 7 / 8 * 2048 * 8192 * 2 + 7 / 8 * 128256 * 2
    assert t8.interconnect_bytes == pytest.approx(links, rel=1e-12)
    assert round(links / 1e9, 1) == 9.4
    memory_ops = sum(float(st.operation.counts().bytes) * st.count
                     for st in layer_steps(arch, eight) if st.operation.kind != "all_reduce")
    assert t8.bytes == pytest.approx(memory_ops, rel=1e-12)
    assert t1.interconnect_bytes == 0
    # KV cache per chip: 8 KV heads over 8 chips, one each: 2·80·1·128·2 B per token
    assert t8.kv_cache_bytes == 2048 * 2 * 80 * 1 * 128 * 2
    # weights per chip: all but the norms split in 8 (norms: 80·2·8192 + 8192, whole)
    norms = 80 * 2 * 8192 + 8192
    assert t8.weight_bytes == pytest.approx((arch.params - norms) * 2 / 8 + norms * 2,
                                            rel=1e-12)
    r = model_result(arch, eight, get_preset("h100-sxm"))
    # one chip's capacity (not × 8), × 0.9 memory utilisation − 1 GiB runtime reserve
    assert r.memory_available_bytes == pytest.approx(81559 * 2**20 * 0.9 - 2**30, rel=1e-12)
    assert r.memory_needed_bytes == pytest.approx(t8.memory_needed, rel=1e-12)
    assert r.memory_needed_bytes < 20e9


# ---------------------------------------------------------------------------------------
# a request end to end, the batch that fits


def test_request_latency_between_its_bounds():
    from workbench.model.llm.results import request_result

    arch = read_model_config("Llama-3.1-8B")
    hw = get_preset("h100-sxm")
    setup = Setup(phase="decode", batch=8, prompt_len=2048, kv_len=2048)
    n = 256
    r = request_result(arch, setup, hw, n)
    ttft = model_result(arch, setup.with_(phase="prefill"), hw).t_predicted_s
    tpot_prompt = model_result(arch, setup.with_(kv_len=2048), hw).t_predicted_s
    tpot_end = model_result(arch, setup.with_(kv_len=2048 + n), hw).t_predicted_s
    assert r.ttft_s == ttft
    assert ttft + n * tpot_prompt < r.request_s < ttft + n * tpot_end
    # each step evaluated like a single decode step at its KV length
    assert r.tpot_first_s == pytest.approx(
        model_result(arch, setup.with_(kv_len=2049), hw).t_predicted_s, rel=1e-12)
    assert r.tpot_last_s == pytest.approx(tpot_end, rel=1e-12)
    assert r.output_tokens_per_s == pytest.approx(n / r.request_s)
    assert r.output_tokens_per_s_per_chip == pytest.approx(8 * n / r.request_s)
    # local layers: past the window the step time stops growing in those layers
    gemma = read_model_config("Gemma-2-9B")
    g = request_result(gemma, setup.with_(prompt_len=8000, kv_len=8000), hw, 64)
    assert g.tpot_first_s == pytest.approx(model_result(
        gemma, setup.with_(kv_len=8001), hw).t_predicted_s, rel=1e-12)


def test_max_batch_of_llama_8b_on_an_h100_by_hand():
    arch = read_model_config("Llama-3.1-8B")
    hw = get_preset("h100-sxm")
    setup = Setup(phase="decode", batch=1, prompt_len=2048, kv_len=2048, output_len=256)
    capacity = 81559 * 2**20                          # 85,520,809,984 B as the driver reports
    usable = capacity * 0.9 - 2**30                   # memory utilisation, runtime reserve
    weights = 8_030_261_248 * 2                        # every weight tensor in bf16
    kv_per_sequence = (2048 + 256) * 2 * 32 * 8 * 128 * 2  # prompt + output, 128 KiB/token
    chunk = 8192 * (4096 + 2 * 14336) * 2             # one prefill chunk's activations
    expected = (usable - weights - chunk) // kv_per_sequence
    assert expected == 196
    assert model_result(arch, setup, hw).max_batch == expected
    # and it is the largest: one more sequence does not fit
    assert model_result(arch, setup.with_(batch=196), hw).fits
    assert not model_result(arch, setup.with_(batch=197), hw).fits


def test_max_batch_of_a_short_context_on_a_large_chip_is_found_at_once(monkeypatch):
    """Qwen2.5-7B decoding at kv_len 1 on an MI300X holds over 10⁵ sequences, whose logits
    outgrow the first estimate by a quarter: the batch was stepped down one sequence at a
    time, 34,000 evaluations and 6 s on every edit while the Model tab showed it. Now the
    largest batch that fits is found in a few dozen."""
    from workbench.model.llm import results

    arch = read_model_config("Qwen2.5-7B")
    hw = get_preset("mi300x")
    setup = Setup(phase="decode", batch=1, kv_len=1)
    evaluated = []
    needed = results.memory_needed
    monkeypatch.setattr(results, "memory_needed",
                        lambda *args, **kw: evaluated.append(1) or needed(*args, **kw))
    largest = model_result(arch, setup, hw).max_batch
    assert len(evaluated) < 100
    monkeypatch.undo()
    assert largest > 100_000
    assert model_result(arch, setup.with_(batch=largest), hw).fits
    assert not model_result(arch, setup.with_(batch=largest + 1), hw).fits


# ---------------------------------------------------------------------------------------
# throughput against latency


def test_batch_sweep_points_by_definition():
    from workbench.model.llm.results import batch_sweep, request_result

    arch = read_model_config("Llama-3.1-405B")
    setup = Setup(phase="decode", batch=1, prompt_len=2048, kv_len=2048, output_len=256,
                  tp=8, weights="fp8")
    machines = [get_preset(p) for p in ("h100-sxm", "h200", "mi300x")]
    sweeps = [batch_sweep(arch, setup, hw) for hw in machines]
    for hw, points in zip(machines, sweeps, strict=True):
        largest = model_result(arch, setup, hw).max_batch
        assert [p.batch for p in points][:3] == [1, 2, 4]
        assert points[-1].batch == largest and all(p.batch <= largest for p in points)
        for p in points[::4]:
            r = request_result(arch, setup.with_(batch=p.batch), hw, 256)
            assert p.tpot_s == pytest.approx(r.decode_s / 256, rel=1e-12)
            assert p.tokens_per_s_per_chip == pytest.approx(p.batch / p.tpot_s / 8)
        # throughput grows with the batch, and so does the time per token
        assert all(a.tokens_per_s_per_chip < b.tokens_per_s_per_chip
                   for a, b in itertools.pairwise(points))
        assert all(a.tpot_s <= b.tpot_s for a, b in itertools.pairwise(points))


# ---------------------------------------------------------------------------------------
# cost


def test_cost_per_million_output_tokens_by_hand():
    from workbench.model.llm.results import request_result

    arch = read_model_config("Llama-3.1-8B")
    hw = get_preset("h100-sxm").copy(price_per_hour=2.5)
    setup = Setup(phase="decode", batch=8, prompt_len=2048, kv_len=2048)
    step = model_result(arch, setup, hw)
    # one decode step: 8 tokens per TPOT on one chip at 2.5 per hour
    assert step.cost_per_million_tokens == pytest.approx(
        2.5 / 3600 / (8 / step.t_predicted_s) * 1e6, rel=1e-12)
    r = request_result(arch, setup, hw, 256)
    assert r.cost_per_million_tokens == pytest.approx(
        2.5 / 3600 * r.request_s / (8 * 256) * 1e6, rel=1e-12)
    # on 8 chips the same throughput costs 8 times as much
    tp = model_result(arch, setup.with_(tp=8), hw)
    assert tp.cost_per_million_tokens == pytest.approx(
        8 * 2.5 / 3600 / tp.tokens_per_s * 1e6, rel=1e-12)
    assert model_result(arch, setup, get_preset("h100-sxm")).cost_per_million_tokens is None


# ---------------------------------------------------------------------------------------
# expert and pipeline parallelism


def test_deepseek_v3_fp8_fits_8_h200_with_ep_8_per_chip_by_hand():
    import json
    from pathlib import Path

    c = json.loads((Path(__file__).resolve().parents[2] / "workbench" / "model_configs"
                    / "DeepSeek-V3.json").read_text())
    arch = read_model_config("DeepSeek-V3")
    H, E = c["hidden_size"], c["n_routed_experts"]
    moe_layers = c["num_hidden_layers"] - c["first_k_dense_replace"]
    experts = moe_layers * E * 3 * H * c["moe_intermediate_size"]  # gate, up, down each
    embeddings = 2 * c["vocab_size"] * H                              # untied: table + lm_head
    # fp8 weights, embeddings kept in bf16; 8 chips each hold 256/8 = 32 experts per layer,
    # everything else whole (attention data-parallel over the 8 chips)
    per_chip = embeddings * 2 + (arch.params - embeddings - experts) * 1 + experts / 8 * 1
    setup = Setup(phase="decode", batch=64, prompt_len=2048, kv_len=2048, weights="fp8",
                  ep=8)
    assert setup.chips == 8
    totals = model_totals(arch, setup)
    assert totals.weight_bytes == pytest.approx(per_chip, rel=1e-12)
    assert 95e9 < per_chip < 110e9
    # each chip caches the latent of its 64/8 = 8 sequences: 61·(512+64)·2 B per token
    assert totals.kv_cache_bytes == 8 * 2048 * 61 * (512 + 64) * 2
    h200 = get_preset("h200")
    r = model_result(arch, setup, h200)
    assert r.fits and r.memory_needed_bytes < h200.capacity
    # on one chip it does not fit at all, nor with 8 chips of tensor parallelism in bf16
    assert not model_result(arch, setup.with_(ep=1), h200).fits
    # dispatch and combine: each chip sends its 8 tokens' 8 copies, 7/8 of them away,
    # 7 steps each, on the links and not in the memory bytes
    a2a = [st for st in layer_steps(arch, setup)
           if st.operation.params.get("collective") == "all_to_all"]
    assert [st.role for st in a2a] == ["dispatch (all-to-all)", "combine (all-to-all)"]
    sent = 8 * 8 * 7 / 8 * H * 2
    assert all(st.operation.counts().bytes == sent and st.count == moe_layers for st in a2a)
    assert totals.interconnect_bytes == pytest.approx(2 * moe_layers * sent, rel=1e-12)
    assert r.latency_s == pytest.approx(2 * moe_layers * 7 * 0.6e-6, rel=1e-12)


def test_expert_gemm_on_one_chip_of_ep_by_hand():
    """One token, 2 of 8 experts, two chips of 4: both experts on one chip with probability
    C(4,2)·2 / C(8,2) = 12/28, then that chip reads 2 experts, else each chip reads 1; the
    busiest chip reads D_max = 1 + 12/28 experts and gets at least as many pairs."""
    op = Operation("moe_gemm", {"tokens": 1, "experts": 8, "top_k": 2, "n": 4096,
                                "k": 7168, "local_experts": 4})
    c = op.counts()
    busiest = 1 + 12 / 28
    assert sum(t.value for t in c.byte_terms if t.tensor == "W") == pytest.approx(
        busiest * 7168 * 4096 * 2, rel=1e-12)
    assert c.flops == pytest.approx(2 * busiest * 4096 * 7168, rel=1e-12)
    from model.test_formula_texts import check_term

    deepseek = Operation("moe_gemm", {"tokens": 64, "experts": 256, "top_k": 8, "n": 4096,
                                      "k": 7168, "local_experts": 32, "imbalance": 1.3})
    for each in (op, deepseek):
        counts = each.counts()
        for term in (*counts.flop_terms, *counts.byte_terms):
            check_term(each, term)


def test_llama_405b_on_16_gpus_with_two_pipeline_stages():
    arch = read_model_config("Llama-3.1-405B")
    hw = get_preset("h100-sxm")
    tp8 = Setup(phase="decode", batch=16, prompt_len=2048, kv_len=2048, tp=8)
    pp2 = tp8.with_(pp=2)
    assert pp2.chips == 16
    assert not model_result(arch, tp8, hw).fits       # 812 GB over 8 chips: 101 GB each
    r = model_result(arch, pp2, hw)
    assert r.fits
    # a stage holds 63 of the 126 layers and one of the two embedding tables
    emb = arch.vocab * arch.hidden
    norms = 126 * 2 * arch.hidden
    layers = arch.params - 2 * emb - arch.hidden - norms
    expected = emb * 2 / 8 + ((layers + arch.hidden) / 8 + norms + arch.hidden) * 2 * 63 / 126
    assert model_totals(arch, pp2).weight_bytes == pytest.approx(expected, rel=1e-3)
    # one stage runs a micro-batch of 16/2 = 8 sequences; the token passes both stages
    steps = layer_steps(arch, pp2)
    stage = model_result(arch, pp2.with_(pp=1, batch=8), hw,
                         [st for st in steps if st.role != "stage send"])
    sends = [st for st in steps if st.role == "stage send"]
    assert len(sends) == 1 and sends[0].operation.counts().bytes == 8 * arch.hidden * 2
    assert r.t_predicted_s > 2 * stage.t_predicted_s
    assert r.tokens_per_s == pytest.approx(16 / r.t_predicted_s)
