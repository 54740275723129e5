"""Reading Hugging Face config.json files: wrapped text configs, MoE and MLA fields, limits on
nesting and size, and the messages that name what is missing."""

from __future__ import annotations

import json

import pytest

from workbench.io.errors import InputError
from workbench.io.model_configs import parse_model_config, read_model_config, shipped_configs
from workbench.model.llm.architecture import Setup, layer_steps


def _llama(**changes):
    data = json.loads(shipped_configs()["Llama-3.1-8B"].read_text(encoding="utf-8"))
    data.update(changes)
    return data


def test_a_qwen_moe_config_gives_its_experts_and_their_width():
    data = _llama(model_type="qwen2_moe", num_experts=60, num_experts_per_tok=4,
                  moe_intermediate_size=1408, shared_expert_intermediate_size=5632)
    arch = parse_model_config(data, file="q.json")
    assert (arch.moe.experts, arch.moe.top_k, arch.moe.intermediate) == (60, 4, 1408)
    assert arch.moe.shared_intermediate == 5632 and arch.moe.shared_gate


def test_gemmas_hidden_activation_field_is_read():
    arch = parse_model_config(_llama(hidden_activation="gelu_pytorch_tanh", hidden_act=None))
    assert arch.activation == "gelu"


@pytest.mark.parametrize("value, problem", [
    ("swiglu_foo", "unknown activation 'swiglu_foo'"),
    (5, "must be the activation's name, got 5"),
    (["silu"], "must be the activation's name, got ['silu']"),
])
def test_an_activation_the_product_cannot_count_is_refused_by_name(tmp_path, value, problem):
    # (it was counted as SiLU whatever it said)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_llama(hidden_act=value), indent=2), encoding="utf-8")
    line = 1 + next(i for i, row in enumerate(path.read_text().splitlines())
                    if '"hidden_act"' in row)
    with pytest.raises(InputError) as err:
        read_model_config(path)
    assert str(err.value).startswith(f"{path}:{line}: hidden_act: {problem}")


@pytest.mark.parametrize("value, step, flops", [
    ("silu", "silu", 5), ("swish", "silu", 5), ("gelu_new", "gelu", 9), ("relu", "relu", 1),
])
def test_each_known_activation_is_counted_as_itself(value, step, flops):
    arch = parse_model_config(_llama(hidden_act=value), file="c.json")
    (act,) = [s.operation for s in layer_steps(arch, Setup("decode", batch=1))
              if s.role.startswith("activation")]
    assert act.name == f"activation ({step} · up)"
    # per element of the FFN's 14,336 columns: the activation, then · up (1)
    assert float(act.counts().flops) == (flops + 1) * 14336


def test_a_wrapped_text_config_keeps_the_outer_architectures():
    inner = _llama()
    del inner["model_type"], inner["architectures"]  # a multimodal config names them outside
    arch = parse_model_config({"architectures": ["LlamaForCausalLM"], "text_config": inner})
    assert arch.layers == 32 and arch.hidden == 4096


def test_a_model_type_that_is_not_text_is_named():
    with pytest.raises(InputError) as err:
        parse_model_config(_llama(model_type=5), file="c.json")
    assert str(err.value).startswith("c.json") and "model_type" in str(err.value)



def test_a_config_nested_too_deep_says_so():
    with pytest.raises(InputError) as err:
        parse_model_config_text("[" * 65 + "]" * 65)
    assert "nested more than 64 levels" in str(err.value)


def parse_model_config_text(text: str):
    from workbench.io.model_configs import loads_json

    return loads_json(text, "c.json")


def test_a_config_json_is_named_after_its_folder(tmp_path):
    folder = tmp_path / "My-Llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_llama(_name_or_path=None)), encoding="utf-8")
    other = tmp_path / "llama-variant.json"
    other.write_text(json.dumps(_llama(_name_or_path=None)), encoding="utf-8")
    from workbench.io.model_configs import read_model_config

    assert read_model_config(folder / "config.json").name == "My-Llama"
    assert read_model_config(other).name == "llama-variant"


def test_a_qwen_moe_config_without_a_shared_expert_has_no_shared_gate():
    data = _llama(model_type="qwen3_moe", num_experts=128, num_experts_per_tok=8,
                  moe_intermediate_size=768, shared_expert_intermediate_size=0)
    arch = parse_model_config(data, file="q.json")  # 0: no shared expert, not an error
    assert arch.moe.shared_intermediate == 0 and not arch.moe.shared_gate


def _deepseek(**changes):
    data = json.loads(shipped_configs()["DeepSeek-V2-Lite"].read_text(encoding="utf-8"))
    data.update(changes)
    return data


def test_a_deepseek_config_without_shared_experts_has_none():
    data = _deepseek()
    del data["n_shared_experts"]
    assert parse_model_config(data, file="d.json").moe.shared_intermediate == 0


def test_a_deepseek_config_with_moe_every_other_layer_says_so():
    assert parse_model_config(_deepseek(moe_layer_freq=2), file="d.json").moe.every == 2


def test_tied_word_embeddings_are_read():
    assert parse_model_config(_llama(tie_word_embeddings=True)).tied
    assert not parse_model_config(_llama(tie_word_embeddings=False)).tied


def test_a_qwen2_moe_config_has_query_key_value_biases_by_default():
    # Qwen2-MoE's attention projections carry biases (as Qwen2's) unless the config says not
    data = _llama(model_type="qwen2_moe", num_experts=60, num_experts_per_tok=4,
                  moe_intermediate_size=1408, shared_expert_intermediate_size=5632)
    data.pop("attention_bias", None)
    assert parse_model_config(data).qkv_bias
    assert not parse_model_config({**data, "attention_bias": False}).qkv_bias


def test_a_config_missing_head_dim_names_head_dim():
    data = _llama(hidden_size=4100, num_attention_heads=32)  # 4100 is not a multiple of 32
    data.pop("head_dim", None)
    with pytest.raises(InputError) as err:
        parse_model_config(data, file="c.json")
    assert "head_dim: missing" in str(err.value)


def test_deepseeks_group_limited_routing_is_kept_as_its_gate_runs_it():
    # DeepSeek-V3: a token picks 4 of 8 groups (noaux_tc), then its 8 experts among them
    v3 = read_model_config("DeepSeek-V3").moe
    assert (v3.groups, v3.topk_groups) == (8, 4)
    # DeepSeek-V2's gate: group_limited_greedy uses the groups, greedy (its default) does not
    limited = _deepseek(n_routed_experts=160, num_experts_per_tok=6, n_group=8, topk_group=3,
                        topk_method="group_limited_greedy")
    moe = parse_model_config(limited, file="d.json").moe
    assert (moe.groups, moe.topk_groups) == (8, 3)
    for greedy in ({**limited, "topk_method": "greedy"},
                   {k: v for k, v in limited.items() if k != "topk_method"}):
        moe = parse_model_config(greedy, file="d.json").moe
        assert (moe.groups, moe.topk_groups) == (1, 1)
    # V2-Lite: one group, no limit
    lite = read_model_config("DeepSeek-V2-Lite").moe
    assert (lite.groups, lite.topk_groups) == (1, 1)


@pytest.mark.parametrize("changes, field, problem", [
    ({"n_group": 5}, "n_group", "must divide n_routed_experts (64) into equal groups, got 5"),
    ({"topk_group": 9}, "topk_group", "9 is more than n_group (8)"),
    ({"topk_group": 1, "num_experts_per_tok": 9}, "topk_group",
     "1 groups of 8 experts hold fewer than num_experts_per_tok (9)"),
])
def test_groups_that_cannot_hold_a_tokens_experts_are_refused(changes, field, problem):
    data = _deepseek(**{"n_group": 8, "topk_group": 4, "topk_method": "group_limited_greedy",
                        **changes})
    with pytest.raises(InputError) as caught:
        parse_model_config(data, file="d.json")
    assert problem in str(caught.value) and field in str(caught.value)
