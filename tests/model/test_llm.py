"""Whole models from config.json: published figures, counting conventions and properties."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io.errors import InputError
from workbench.io.model_configs import parse_model_config, read_model_config, shipped_configs
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Architecture, Setup, expand, layer_steps
from workbench.model.llm.results import model_result, model_totals

# Published totals, from each model's card (Hugging Face "Model size" or the paper):
# Llama 3.1 8B / 70B / 405B: 8.03 B, 70.6 B, 405.9 B (the 405B page rounds it to 406 B);
# Mistral-7B-v0.3: 7.25 B; Mixtral-8x7B: 46.7 B; Qwen2.5-7B: 7.61 B; Qwen3-8B: 8.2 B;
# Gemma-2-9B: 9.24 B; DeepSeek-V2-Lite: 15.7 B; DeepSeek-V3: 671 B (main model, without
# its multi-token-prediction module).
PUBLISHED = {
    "Llama-3.1-8B": 8.03e9, "Llama-3.1-70B": 70.6e9, "Llama-3.1-405B": 405.9e9,
    "Mistral-7B-v0.3": 7.25e9, "Mixtral-8x7B": 46.7e9, "Qwen2.5-7B": 7.61e9,
    "Qwen3-8B": 8.2e9, "Gemma-2-9B": 9.24e9, "DeepSeek-V2-Lite": 15.7e9,
    "DeepSeek-V3": 671e9,
}


@pytest.fixture(scope="module")
def models() -> dict[str, Architecture]:
    return {name: read_model_config(name) for name in shipped_configs()}


def test_every_shipped_config_has_a_published_total_and_a_source(models):
    assert set(models) == set(PUBLISHED)
    for arch in models.values():
        assert arch.source.startswith("https://huggingface.co/")


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_counts_within_one_percent_of_published(models, name):
    assert models[name].params == pytest.approx(PUBLISHED[name], rel=0.01)


def test_active_parameters_of_moe_models(models):
    # Mixtral's 12.9 B "active" counts the input embedding table; ours leaves it out (one row
    # of it is read), so add it back to compare like with like.
    mix = models["Mixtral-8x7B"]
    assert mix.active_params + mix.vocab * mix.hidden == pytest.approx(12.9e9, rel=0.01)
    # DeepSeek: 37 B (V3) and 2.4 B (V2-Lite) activated per token, quoted to 2 figures.
    assert models["DeepSeek-V3"].active_params == pytest.approx(37e9, rel=0.02)
    assert models["DeepSeek-V2-Lite"].active_params == pytest.approx(2.4e9, rel=0.025)
    # dense models: everything but the input table
    llama = models["Llama-3.1-8B"]
    assert llama.params - llama.active_params == 128256 * 4096


def test_qwen3_moe_total_and_active_parameters_by_hand():
    # https://huggingface.co/Qwen/Qwen3-30B-A3B (config.json; the card: 30.5 B total, 3.3 B
    # activated). Per layer: q 2048·32·128 + k, v 2·2048·4·128 + o 32·128·2048 = 18,874,368,
    # q/k norms 2·128, two norms 2·2048, router 2048·128 = 262,144, 128 experts of
    # 3·2048·768 = 4,718,592 (603,979,776): 623,120,640 × 48 = 29,909,790,720; final norm
    # 2,048; embedding and lm_head 2·151,936·2048 = 622,329,856: 30,532,122,624.
    # Active: 8 experts instead of 128 (−120·4,718,592 per layer) = 3,353,032,704 with the
    # input table, which one token reads one row of: 3,041,867,776 without it.
    config = {"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48,
              "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
              "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
              "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [],
              "vocab_size": 151936, "tie_word_embeddings": False, "hidden_act": "silu"}
    arch = parse_model_config(config, file="config.json")
    assert arch.params == 30_532_122_624
    assert arch.active_params == 3_041_867_776
    assert arch.weight_bytes("bf16") == 2 * 30_532_122_624
    # 2 (K and V) · 48 layers · 4 KV heads · 128 · 2 B
    assert arch.kv_cache_bytes_per_token("bf16") == 98_304


def test_kv_cache_bytes_per_token_exact(models):
    # Llama-3-8B in bf16: 2 (K and V) · 32 layers · 8 KV heads · 128 · 2 B = 128 KiB
    assert models["Llama-3.1-8B"].kv_cache_bytes_per_token("bf16") == 128 * 1024
    # explicit head_dim (Qwen3: 128 although 4096/32 = 128; Gemma-2: 256, not 3584/16 = 224)
    assert models["Qwen3-8B"].kv_cache_bytes_per_token("bf16") == 2 * 36 * 8 * 128 * 2
    assert models["Gemma-2-9B"].kv_cache_bytes_per_token("bf16") == 2 * 42 * 8 * 256 * 2
    # KV heads, not query heads (Qwen2.5-7B: 4 KV heads of 28)
    assert models["Qwen2.5-7B"].kv_cache_bytes_per_token("bf16") == 2 * 28 * 4 * 128 * 2
    # MLA caches the latent: 61 layers · (512 + 64) · 2 B
    assert models["DeepSeek-V3"].kv_cache_bytes_per_token("bf16") == 61 * 576 * 2
    assert models["DeepSeek-V3"].kv_cache_bytes_per_token("fp8") == 61 * 576


def test_scaling_book_llama3_70b_kv_cache_and_memory(models):
    """The JAX scaling book, "Serving LLaMA 3-70B" (applied-inference.md): in int8 the KV
    cache is 2·K·H·L = 2·8·128·80 bytes per token (≈160 kB), 32 sequences of 8192 tokens
    hold ≈41.9e9 bytes of it, and the int8 parameters ≈70e9 bytes: ≈112 GB in all."""
    arch = models["Llama-3.1-70B"]
    assert arch.kv_cache_bytes_per_token("int8") == 2 * 8 * 128 * 80
    setup = Setup("decode", batch=32, kv_len=8192, weights="int8", kv_cache="int8",
                  quantize_embeddings=True)
    totals = model_totals(arch, setup)
    assert totals.kv_cache_bytes == 2 * 8 * 128 * 80 * 8192 * 32
    assert totals.kv_cache_bytes == pytest.approx(41.9e9, rel=0.03)  # they round to 160e3
    assert totals.weight_bytes == pytest.approx(70e9, rel=0.01)
    assert totals.weight_bytes + totals.kv_cache_bytes == pytest.approx(112e9, rel=0.02)


def test_scaling_book_llama3_70b_prefill_flops(models):
    """Same page: a prefill of 8192 tokens costs about 2·70e9·8192 FLOPs."""
    arch = models["Llama-3.1-70B"]
    totals = model_totals(arch, Setup("prefill", batch=1, prompt_len=8192))
    assert totals.flops == pytest.approx(2 * 70e9 * 8192, rel=0.06)


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Qwen3-8B", "Gemma-2-9B", "Mixtral-8x7B",
                                  "DeepSeek-V3"])
def test_decode_at_batch_one_reads_the_active_weights_once(models, name):
    arch = models[name]
    setup = Setup("decode", batch=1, kv_len=16)
    totals = model_totals(arch, setup)
    # bf16: ≈ 2 bytes per active parameter (activations and a 16-token cache are noise);
    assert totals.bytes == pytest.approx(2 * arch.active_params, rel=0.02)
    # and ≈ 2 FLOPs per active parameter
    assert totals.flops == pytest.approx(2 * arch.active_params, rel=0.01)


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Qwen2.5-7B", "Gemma-2-9B"])
def test_prefill_flops_are_two_per_parameter_per_token_plus_attention(models, name):
    arch = models[name]
    b, p = 2, 1024
    totals = model_totals(arch, Setup("prefill", batch=b, prompt_len=p))
    lm_head = arch.vocab * arch.hidden
    # every token goes through every layer; lm_head only for the last token of each sequence
    matmuls = 2 * (arch.active_params - lm_head) * b * p + 2 * lm_head * b
    # causal attention: QKᵀ and PV, 4·b·h·p·p·d, half of it visible
    attention = arch.layers * 4 * b * arch.heads * p * p * arch.head_dim / 2
    assert totals.flops == pytest.approx(matmuls + attention, rel=0.005)


def test_moe_decode_reads_the_expected_experts(models):
    arch = models["Mixtral-8x7B"]
    one = model_totals(arch, Setup("decode", batch=1, kv_len=16)).bytes
    many = model_totals(arch, Setup("decode", batch=64, kv_len=16)).bytes
    # at batch 64 nearly all 8 experts are hit: 8·(1 − (3/4)^64) ≈ 8
    experts = 32 * 3 * 4096 * 14336 * 2
    assert many - one == pytest.approx(experts * (8 - 2), rel=0.05)


def test_every_operation_of_the_expansion_carries_its_derivation(models):
    arch = models["DeepSeek-V2-Lite"]
    setup = Setup("decode", batch=4, kv_len=512)
    ops = expand(arch, setup, "all")
    steps = layer_steps(arch, setup)
    per = {g: sum(s.group == g for s in steps) for g in ("dense layer", "MoE layer", "model")}
    # first_k_dense_replace = 1: one dense layer, 26 MoE layers, plus gather, norm, lm_head
    assert len(ops) == per["dense layer"] + 26 * per["MoE layer"] + per["model"]
    assert per["model"] == 3
    for _, op in ops:
        counts = op.counts()
        assert counts.flop_terms or counts.byte_terms
        for term in counts.byte_terms:
            assert term.formula and term.substituted


@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_aggregated_view_has_the_same_totals_as_every_operation(models, phase):
    """Exactly: an aggregated norm reads each layer's own γ (and β), as every layer does."""
    for name in ("Llama-3.1-8B", "DeepSeek-V2-Lite", "Gemma-2-9B", "Qwen3-8B"):
        arch = models[name]
        setup = Setup(phase, batch=2, prompt_len=256, kv_len=512, tp=2)
        every = expand(arch, setup, "all")
        layers = expand(arch, setup, "layers")
        assert len(layers) < len(every) / 10
        for attr in ("flops", "bytes"):
            a = sum(float(getattr(op.counts(), attr)) for _, op in every)
            b = sum(float(getattr(op.counts(), attr)) for _, op in layers)
            assert b == pytest.approx(a, rel=1e-12), (name, attr)
        norms = [op for _, op in layers if op.kind == "norm" and "×" in op.name]
        assert norms and all(op.params.get("layers", 1) == int(op.name.rsplit("×", 1)[1])
                             for op in norms), [(op.name, op.params) for op in norms]


def test_model_time_is_the_sum_of_kernel_predictions_with_launch_overhead(models):
    arch = models["Llama-3.1-8B"]
    hw = get_preset("h100-sxm")
    setup = Setup("decode", batch=1, kv_len=128)
    result = model_result(arch, setup, hw)
    kernels = len(expand(arch, setup, "all"))
    # every kernel is at least one launch overhead
    assert result.t_predicted_s >= kernels * hw.launch_overhead
    # and at least the weights read (all but the input table) over the bandwidth
    read = arch.weight_bytes("bf16") - arch.vocab * arch.hidden * 2
    assert result.t_lower_s >= read / hw.bandwidth()
    assert result.tokens_per_s == pytest.approx(1 / result.t_predicted_s)
    assert sum(result.share.values()) == pytest.approx(1.0)
    assert result.fits


def test_405b_in_bf16_does_not_fit_one_h100_but_fits_sixteen(models):
    arch = models["Llama-3.1-405B"]
    hw = get_preset("h100-sxm")
    assert model_result(arch, Setup("decode", kv_len=128), hw).fits is False
    assert model_result(arch, Setup("decode", kv_len=128, tp=16), hw).fits is True


# ---------------------------------------------------------------------------------------
# property tests


def _gqa_model(heads, kv_heads, head_dim):
    return Architecture("test", "llama", hidden=heads * head_dim, layers=2, heads=heads,
                        kv_heads=kv_heads, head_dim=head_dim, intermediate=256, vocab=1000)


def _attention_bytes(arch, setup):
    return sum(float(s.operation.counts().bytes) for s in layer_steps(arch, setup)
               if s.operation.kind == "attention")


@settings(max_examples=60, deadline=None)
@given(kv=st.sampled_from([1, 2, 4, 8]), groups=st.sampled_from([1, 2, 4, 8]),
       d=st.sampled_from([64, 128]), batch=st.integers(1, 64), kv_len=st.integers(1, 32768),
       phase=st.sampled_from(["prefill", "decode"]))
def test_gqa_never_reads_more_kv_than_mha(kv, groups, d, batch, kv_len, phase):
    setup = Setup(phase, batch=batch, prompt_len=min(kv_len, 2048), kv_len=kv_len)
    gqa = _gqa_model(kv * groups, kv, d)
    mha = _gqa_model(kv * groups, kv * groups, d)
    assert _attention_bytes(gqa, setup) <= _attention_bytes(mha, setup)
    assert gqa.kv_cache_bytes_per_token() * groups == mha.kv_cache_bytes_per_token()


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(PUBLISHED)), batch=st.integers(1, 256),
       phase=st.sampled_from(["prefill", "decode"]), q=st.booleans())
def test_int4_weights_never_more_bytes_than_bf16(name, batch, phase, q):
    arch = read_model_config(name)
    base = Setup(phase, batch=batch, prompt_len=64, kv_len=512, quantize_embeddings=q)
    bf16 = model_totals(arch, base)
    int4 = model_totals(arch, base.with_(weights="int4"))
    assert int4.bytes <= bf16.bytes
    assert int4.weight_bytes <= bf16.weight_bytes
    assert int4.flops == bf16.flops


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(["Llama-3.1-8B", "Llama-3.1-70B", "Mixtral-8x7B", "Qwen3-8B"]),
       t=st.sampled_from([2, 4, 8]), batch=st.integers(1, 64),
       phase=st.sampled_from(["prefill", "decode"]))
def test_tensor_parallel_divides_sharded_flops_and_adds_all_reduces(name, t, batch, phase):
    arch = read_model_config(name)
    one = Setup(phase, batch=batch, prompt_len=128, kv_len=1024)
    many = one.with_(tp=t)

    def sharded_flops(setup):
        return sum(float(s.operation.counts().flops) * s.count for s in layer_steps(arch, setup)
                   if s.operation.kind in ("gemm", "attention", "moe_gemm")
                   and s.role != "router")

    assert sharded_flops(many) == pytest.approx(sharded_flops(one) / t, rel=1e-9)
    ring = many.with_(all_reduce="ring")
    steps = layer_steps(arch, ring)
    sent = sum(float(s.operation.counts().bytes) * s.count for s in steps
               if s.operation.kind == "all_reduce" and s.role.startswith("all-reduce"))
    activation = one.tokens * arch.hidden * 2
    assert sent == pytest.approx(arch.layers * 2 * 2 * (t - 1) / t * activation)
    # one-shot: every chip reads the t − 1 others' partial sums
    one_shot = sum(float(s.operation.counts().bytes) * s.count
                   for s in layer_steps(arch, many.with_(all_reduce="one_shot"))
                   if s.role.startswith("all-reduce"))
    assert one_shot == pytest.approx(arch.layers * 2 * (t - 1) * activation)
    # and the last positions' logits gathered: (t − 1)/t of batch · vocabulary sent
    (gather,) = [s for s in steps if s.role == "logits all-gather"]
    assert float(gather.operation.counts().bytes) == pytest.approx(
        (t - 1) / t * batch * math.ceil(arch.vocab / t) * t * 2)
    assert not any(s.operation.kind == "all_reduce" for s in layer_steps(arch, one))


# ---------------------------------------------------------------------------------------
# bad configs


def _llama(**changes):
    data = json.loads(shipped_configs()["Llama-3.1-8B"].read_text())
    data.update(changes)
    return data


def test_unknown_architecture_is_refused_by_name():
    with pytest.raises(InputError) as err:
        parse_model_config(_llama(model_type="mamba"), file="c.json")
    assert "model_type" in str(err.value) and "mamba" in str(err.value)
    assert str(err.value).startswith("c.json")


def test_missing_field_is_named_with_its_line(tmp_path):
    data = _llama()
    del data["num_hidden_layers"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(InputError) as err:
        read_model_config(path)
    assert "num_hidden_layers" in str(err.value) and "missing" in str(err.value)


@pytest.mark.parametrize("changes, field", [
    ({"num_key_value_heads": 7}, "num_key_value_heads"),
    ({"hidden_size": -4096}, "hidden_size"),
    ({"vocab_size": "many"}, "vocab_size"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings"),
])
def test_invalid_fields_are_named(tmp_path, changes, field):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_llama(**changes), indent=2))
    with pytest.raises(InputError) as err:
        read_model_config(path)
    text = str(err.value)
    assert field in text and "\n" not in text
    line = err.value.line
    assert line is not None and field in path.read_text().splitlines()[line - 1]


def test_malformed_json_and_missing_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama",')
    with pytest.raises(InputError) as err:
        read_model_config(path)
    assert "JSON" in str(err.value)
    with pytest.raises(InputError) as err:
        read_model_config(tmp_path / "nope.json")
    assert "Llama-3.1-8B" in str(err.value)  # names the shipped configs


def test_moe_top_k_above_expert_count_is_refused():
    data = json.loads(shipped_configs()["Mixtral-8x7B"].read_text())
    data["num_experts_per_tok"] = 9
    with pytest.raises(InputError) as err:
        parse_model_config(data)
    assert "num_experts_per_tok" in str(err.value)


def test_expected_experts_formula():
    from workbench.model.llm.kinds import expected_experts

    assert expected_experts(8, 2, 1) == pytest.approx(2)
    assert expected_experts(256, 8, 10_000) == pytest.approx(256)
    assert expected_experts(64, 6, 4) == pytest.approx(64 * (1 - (1 - 6 / 64) ** 4))
    assert math.isclose(expected_experts(8, 8, 3), 8)
