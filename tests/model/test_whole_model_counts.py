"""Whole models from config.json: the operations a forward pass expands into, their counts
against published figures, the memory a batch needs and the request a model serves."""

from __future__ import annotations

import json

import pytest

from workbench.io.model_configs import parse_model_config, read_model_config, shipped_configs
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Setup, SetupError, expand, layer_steps
from workbench.model.llm.results import (
    RequestResult,
    derivation,
    max_batch,
    memory_needed,
    model_result,
    model_totals,
    per_sequence_bytes,
)
from workbench.model.llm.session import ModelEntry, expand_entries, refresh_params
from workbench.model.operations import Operation


def test_a_moe_router_is_held_whole_by_every_chip():
    arch = read_model_config("Mixtral-8x7B")
    hidden, layers, experts = 4096, 32, 8  # Mixtral 8x7B: two RMSNorms a layer and a final one
    norms = layers * 2 * hidden + hidden
    router = layers * hidden * experts
    assert arch.replicated_params() == norms + router


def test_an_unknown_view_is_refused_naming_the_field():
    with pytest.raises(SetupError) as err:
        expand(read_model_config("Llama-3.1-8B"), Setup("decode"), view="everything")
    assert err.value.field == "view"
    assert "everything" in err.value.message


def test_a_models_time_shares_run_from_the_largest():
    result = model_result(read_model_config("Llama-3.1-8B"), Setup("decode", batch=8),
                          get_preset("h100-sxm"))
    shares = list(result.share.values())
    assert len(shares) > 2
    assert shares == sorted(shares, reverse=True)
    assert sum(shares) == pytest.approx(1.0)


def test_a_models_result_as_data_says_whether_it_fits():
    arch = read_model_config("Llama-3.1-8B")
    small = model_result(arch, Setup("decode", batch=1), get_preset("h100-sxm"))
    assert small.as_dict("decode")["fits"] is True
    assert small.as_dict("decode")["tpot_s"] == small.t_predicted_s



def _steps(arch, setup: Setup) -> dict[str, Operation]:
    return {step.role: step.operation for step in layer_steps(arch, setup)}


def test_mla_attention_runs_on_the_models_own_latent_width():
    data = json.loads(shipped_configs()["DeepSeek-V2-Lite"].read_text(encoding="utf-8"))
    data["kv_lora_rank"] = 256
    arch = parse_model_config(data, file="d.json")
    assert _steps(arch, Setup("decode", batch=2))["attention"].params["kv_lora_rank"] == 256


def test_qwen3_normalises_each_query_and_key_head():
    arch = read_model_config("Qwen3-8B")  # 32 query heads, 8 KV heads of 128
    norm = _steps(arch, Setup("decode", batch=4))["Q/K norm"]
    assert (norm.params["rows"], norm.params["hidden"]) == (4 * (32 + 8), 128)


@pytest.mark.parametrize("name, tp, problem", [
    # Llama-3.1-8B: 32 query heads, 8 KV heads; 3 splits neither
    ("Llama-3.1-8B", 3, "3 does not divide Llama-3.1-8B's 32 attention heads"),
    # Qwen2.5-7B: 28 query heads, 4 KV heads, FFN 18,944 wide: 7 and 14 divide the 28 query
    # heads, but neither divides the 4 KV heads nor is a multiple of 4; 28 is a multiple of 4
    # (each KV head on 7 chips) but 18,944 / 28 = 676.6 FFN columns
    ("Qwen2.5-7B", 7, "7 neither divides Qwen2.5-7B's 4 KV heads nor is a multiple of them"),
    ("Qwen2.5-7B", 14, "14 neither divides Qwen2.5-7B's 4 KV heads"),
    ("Qwen2.5-7B", 28, "28 does not divide Qwen2.5-7B's 18,944 FFN columns"),
    ("DeepSeek-V3", 6, "6 does not divide DeepSeek-V3's 128 attention heads"),
])
def test_a_tensor_parallel_degree_no_serving_engine_runs_is_refused(name, tp, problem):
    # (the busiest chip was counted with ⌈heads/tp⌉ heads, a split no engine makes)
    with pytest.raises(SetupError) as err:
        layer_steps(read_model_config(name), Setup("decode", batch=1, tp=tp))
    assert err.value.field == "tp"
    assert err.value.message.startswith(problem)


@pytest.mark.parametrize("name, tp, kv_heads_per_chip", [
    ("Llama-3.1-8B", 8, 1),    # 8 KV heads, one a chip
    ("Llama-3.1-8B", 16, 1),   # 8 KV heads, each copied onto 16/8 = 2 chips (as vLLM does)
    ("Llama-3.1-70B", 32, 1),  # 64 query heads, 8 KV heads each on 4 chips
    ("Qwen2.5-7B", 2, 2),      # 28 query heads, 4 KV heads
])
def test_a_tensor_parallel_degree_the_engines_run_is_counted_per_chip(name, tp,
                                                                       kv_heads_per_chip):
    arch = read_model_config(name)
    attention = _steps(arch, Setup("decode", batch=1, tp=tp))["attention"]
    assert attention.params["heads"] == arch.heads // tp
    assert attention.params["kv_heads"] == kv_heads_per_chip


def test_kv_heads_copied_onto_several_chips_are_held_whole_by_each():
    # Llama-3.1-8B over 16 chips (hidden 4096, 32 layers, 32 query heads and 8 KV heads of
    # 128, FFN 14,336, vocabulary 128,256): each chip holds per layer
    #   q 4096·2·128 = 1,048,576, k and v of one whole KV head 2·4096·128 = 1,048,576,
    #   o 2·128·4096 = 1,048,576, FFN 3·4096·14336/16 = 11,010,048, norms 2·4096 = 8,192
    #   = 14,163,968 → ×32 = 453,246,976; final norm 4,096;
    #   embedding and lm_head 2·128256·4096/16 = 65,667,072
    #   = 518,918,144 parameters, 1,037,836,288 B in bf16 (not the 1,004,281,856 of k and v
    #   split 16 ways: 8 heads cannot be)
    arch = read_model_config("Llama-3.1-8B")
    setup = Setup("decode", batch=1, tp=16)
    totals = model_totals(arch, setup)
    assert totals.weight_bytes == 1_037_836_288
    shown = dict(derivation(arch, setup, totals, []))["weights (per chip)"]
    assert "K/V projections" in shown and shown.endswith("= 1.04 GB")


def test_latent_attention_splits_its_heads_whatever_its_kv_heads():
    # DeepSeek-V3: 128 heads over 16 chips, the 512 + 64 latent whole on each
    attention = _steps(read_model_config("DeepSeek-V3"), Setup("decode", batch=1, tp=16))[
        "attention"]
    assert attention.params["heads"] == 8 and attention.params["kv_lora_rank"] == 512


def test_expert_parallelism_over_two_chips_gives_each_half_the_experts():
    arch = read_model_config("Mixtral-8x7B")  # 8 experts
    ops = _steps(arch, Setup("decode", batch=8, tp=1, ep=2))
    assert ops["experts gate/up"].params["local_experts"] == 4
    assert ops["experts down"].params["local_experts"] == 4


def test_qwen3s_replicated_weights_include_its_query_and_key_norms():
    arch = read_model_config("Qwen3-8B")  # 36 layers, hidden 4096, head_dim 128
    # two norms of 4096 per layer, the final norm, and q_norm + k_norm of 128 per layer
    assert arch.replicated_params() == 36 * 2 * 4096 + 4096 + 36 * 2 * 128


def test_a_models_summary_names_its_experts_only_when_it_has_them():
    assert "MoE 2 of 8" in read_model_config("Mixtral-8x7B").summary()
    assert "MoE" not in read_model_config("Llama-3.1-8B").summary()


@pytest.mark.parametrize("op", [
    Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 4, "dtype": "bf16",
                             "collective": "send"}),
    Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 4, "copies": 2, "dtype": "bf16",
                             "collective": "all_to_all"}),
    Operation("moe_gemm", {"tokens": 64, "experts": 8, "top_k": 2, "n": 256, "k": 128,
                           "dtype": "bf16", "local_experts": 4}),
])
def test_every_term_says_whether_it_counts_flops_reads_or_writes(op):
    counts = op.counts()
    assert {t.kind for t in counts.flop_terms} == {"flop"}
    assert {t.kind for t in counts.byte_terms} <= {"read", "write"}
    assert counts.bytes_read + counts.bytes_written == pytest.approx(counts.bytes, rel=1e-12)


def test_latent_attention_states_its_absorbed_form_and_causal_scaling():
    op = Operation("mla_attention", {"heads": 16, "kv_lora_rank": 512, "rope_dim": 64,
                                     "query_len": 8, "kv_len": 1024, "causal": True})
    notes = " ".join(op.counts().notes)
    assert "Absorbed form" in notes and "visible fraction" in notes



def test_the_derivation_gives_the_interconnect_bytes_when_chips_talk():
    arch = read_model_config("Llama-3.1-8B")
    for tp, shown in ((1, False), (2, True)):
        setup = Setup("decode", batch=8, tp=tp)
        totals = model_totals(arch, setup)
        lines = dict(derivation(arch, setup, totals, []))
        assert ("interconnect bytes (per chip)" in lines) is shown


def test_the_kv_cache_per_token_under_tensor_parallelism_is_worked_out_per_chip():
    arch = read_model_config("Llama-3.1-8B")  # 32 layers, 8 KV heads of 128
    setup = Setup("decode", batch=8, tp=2)
    line = next(text for label, text in derivation(arch, setup, model_totals(arch, setup), [])
                if text.startswith("2·layers·"))
    # 4 KV heads per chip: 2·32·4·128·2 B = 65,536 B
    assert "⌈kv_heads/t⌉" in line and line.endswith("= 2·32·4·128·2 = 65,536 B")


def test_a_machine_that_cannot_run_the_model_is_listed_as_skipped_with_its_memory():
    arch = read_model_config("Llama-3.1-8B")
    setup = Setup("decode", batch=1, tp=2)  # needs an interconnect the laptop lacks
    result = model_result(arch, setup, get_preset("apple-m3-max"))
    assert result.skipped and "no interconnect" in result.skipped
    assert result.memory_needed_bytes == pytest.approx(sum(memory_needed(arch, setup)), rel=1e-12)
    lines = derivation(arch, setup, model_totals(arch, setup), [result])
    assert (result.hardware, f"skipped: {result.skipped}") in lines


def test_a_batch_that_exactly_fills_the_memory_fits():
    arch = read_model_config("Llama-3.1-8B")
    setup = Setup("decode", batch=1, kv_len=4096)
    exactly = sum(memory_needed(arch, setup))
    assert max_batch(arch, setup, exactly) == 1
    assert max_batch(arch, setup, exactly - 1) == 0


def test_one_more_sequence_adds_its_kv_cache():
    arch = read_model_config("Llama-3.1-8B")
    setup = Setup("decode", batch=1, kv_len=4096)
    grown = sum(memory_needed(arch, setup.with_(batch=2))) - sum(memory_needed(arch, setup))
    assert per_sequence_bytes(arch, setup) == pytest.approx(grown, rel=1e-12)
    # its KV cache: 4096 positions × 128 KiB per token (the activations a server keeps
    # room for are one prefill chunk's, whatever the batch)
    assert per_sequence_bytes(arch, setup) == 4096 * 128 * 1024


def test_a_models_result_as_data_names_the_memory_needed():
    arch = read_model_config("Llama-3.1-8B")
    result = model_result(arch, Setup("decode", batch=1), get_preset("h100-sxm"))
    assert result.as_dict("decode")["memory_needed_bytes"] == result.memory_needed_bytes


def test_a_request_without_a_price_has_no_cost_in_its_data():
    plain = RequestResult("m", 100, ttft_s=0.1, decode_s=0.9)
    assert "cost_per_million_tokens" not in plain.as_dict()
    priced = RequestResult("m", 100, ttft_s=0.1, decode_s=0.9, price_per_hour=3.6)
    # 3.6 per hour is 0.001 per second; 100 tokens per second: 10 per million tokens
    assert priced.as_dict()["cost_per_million_tokens"] == pytest.approx(10.0, rel=1e-12)


def test_a_model_whose_operations_were_cut_is_expanded_afresh():
    model = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"), Setup("decode"))
    entries = expand_entries(model)
    assert refresh_params(model, entries)
    assert not refresh_params(model, entries[:-1])



def test_published_parameter_counts_of_qwen_mixtral_and_deepseek_lite():
    # the models' own safetensors: Qwen2.5-7B 7,615,616,512 (Q/K/V biases included),
    # Mixtral-8x7B 46,702,792,704; DeepSeek-V2-Lite 15.7 B (two shared experts per MoE layer)
    assert read_model_config("Qwen2.5-7B").params == 7_615_616_512
    assert read_model_config("Mixtral-8x7B").params == 46_702_792_704
    assert read_model_config("DeepSeek-V2-Lite").params == pytest.approx(15.7e9, rel=0.005)


def test_deepseek_lites_moe_layer_holds_router_routed_and_shared_experts():
    arch = read_model_config("DeepSeek-V2-Lite")  # hidden 2048, 64 experts of 1408, 2 shared
    assert arch.moe.shared_intermediate == 2 * 1408
    expert = 3 * 2048 * 1408  # gate, up and down
    assert arch.moe_layer_params() == 2048 * 64 + 64 * expert + 3 * 2048 * 2 * 1408


def test_deepseek_lites_query_projection_and_rope_work():
    arch = read_model_config("DeepSeek-V2-Lite")  # 16 heads of 128 + 64, no query LoRA
    ops = _steps(arch, Setup("decode", batch=2))
    q = ops["Q projection"]
    assert (q.params["n"], q.params["k"]) == (16 * (128 + 64), 2048)
    # RoPE: 3 FLOPs per rotated element, over the 16 query heads and the one shared key
    assert ops["RoPE"].counts().flops == 3 * 2 * (16 + 1) * 64


def test_one_chip_holds_every_weight():
    arch = read_model_config("Mixtral-8x7B")
    assert arch.weight_bytes_per_chip("bf16") == 2 * 46_702_792_704


def test_gemma_runs_its_ffn_with_gelu():
    ops = _steps(read_model_config("Gemma-2-9B"), Setup("decode"))
    assert "activation (gelu · up)" in ops
    assert ops["activation (gelu · up)"].params["steps"][0]["op"] == "gelu"


def test_expert_weights_are_read_at_the_weights_dtype():
    ops = _steps(read_model_config("Mixtral-8x7B"), Setup("decode", batch=8, weights="int4"))
    assert ops["experts gate/up"].params["w_dtype"] == "int4"
    assert ops["experts down"].params["w_dtype"] == "int4"


def test_a_stage_send_says_it_crosses_one_link():
    op = Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 2, "dtype": "bf16",
                                  "collective": "send"})
    assert any("Point to point" in n for n in op.counts().notes)


def test_renaming_a_model_renames_its_operations():
    model = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"), Setup("decode"))
    entries = expand_entries(model)
    model.name = "Mine"
    assert refresh_params(model, entries)
    assert all(e.operation.name.startswith("Mine: ") for e in entries)


def test_a_causal_mask_with_more_queries_than_keys_names_query_len():
    from workbench.model.operations import cross_checks

    problems = cross_checks("attention", {"heads": 8, "kv_heads": 8, "head_dim": 64,
                                          "query_len": 4096, "kv_len": 1024, "causal": True,
                                          "batch": 1, "implementation": "flash",
                                          "dtype": "bf16", "kv_dtype": "bf16", "compute": None})
    assert [key for key, _ in problems] == ["query_len"]


def test_expert_parallelism_on_a_dense_model_names_ep():
    with pytest.raises(SetupError) as err:
        layer_steps(read_model_config("Llama-3.1-8B"), Setup("decode", ep=2))
    assert str(err.value).startswith("ep: ") and "no routed experts" in str(err.value)
