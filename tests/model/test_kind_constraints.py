"""Each kind's rules across its parameters are declared once (``Kind.constraints``) and
checked by the reader, the editor's checks, the sweeps and the model builder alike: an
impossible operation (more experts per token than experts, a causal mask over more
queries than keys) is refused wherever it comes from."""

from __future__ import annotations

import pytest

from workbench.io.errors import InputError
from workbench.io.model_configs import parse_model_config, shipped_configs
from workbench.io.schema import kind_checks
from workbench.io.sessions import loads_session
from workbench.model.operations import KINDS, Operation
from workbench.model.sweeps import Sweep, SweepError


def _load(op: str) -> str:
    with pytest.raises(InputError) as caught:
        loads_session(f"schema_version: 2\noperations:\n- {op}\n", "s.yaml")
    return str(caught.value)


def test_moe_gemm_with_more_experts_per_token_than_experts_is_refused_at_load():
    message = _load("{kind: moe_gemm, tokens: 16, experts: 8, top_k: 9, n: 64, k: 64}")
    assert message.startswith("s.yaml:3: operations[0].top_k:")
    assert "top_k must not exceed experts (8), got 9" in message


def test_causal_latent_attention_with_more_queries_than_keys_is_refused_at_load():
    message = _load("{kind: mla_attention, heads: 8, kv_lora_rank: 512, rope_dim: 64, "
                    "query_len: 8, kv_len: 4, causal: true}")
    assert "operations[0].query_len: a causal mask needs query_len ≤ kv_len (4), got 8" \
        in message
    # the same shape without the mask is possible (decode against a short cache)
    loads_session("schema_version: 2\noperations:\n- {kind: mla_attention, heads: 8, "
                  "kv_lora_rank: 512, rope_dim: 64, query_len: 8, kv_len: 4}\n")


def test_the_editor_checks_and_the_sweeps_use_the_same_rules():
    assert kind_checks("moe_gemm", {"tokens": 16, "experts": 8, "top_k": 8, "n": 1,
                                    "k": 1}) == []
    ((param, problem),) = kind_checks("moe_gemm", {"tokens": 16, "experts": 8, "top_k": 9,
                                                   "n": 1, "k": 1})
    assert param == "top_k" and "got 9" in problem
    op = Operation("mla_attention", {"heads": 8, "kv_lora_rank": 512, "rope_dim": 64,
                                     "query_len": 1, "kv_len": 4, "causal": True})
    with pytest.raises(SweepError, match=r"query_len ≤ kv_len \(4\), got 6"):
        Sweep("query_len", [1, 2, 6]).values_for(op)


def test_every_rule_names_parameters_of_its_kind():
    for spec in KINDS.values():
        for rule in spec.constraints:
            names = spec.param_names
            assert rule.param in names and rule.limit in names
            assert rule.when is None or spec.param(rule.when).type == "bool"


def test_the_model_builder_refuses_a_config_with_more_experts_per_token_than_experts():
    import json

    data = json.loads(shipped_configs()["Mixtral-8x7B"].read_text())
    data["num_experts_per_tok"] = data["num_local_experts"] + 1  # 9 of 8
    with pytest.raises(InputError, match="num_experts_per_tok: 9 is more than "
                                         "num_local_experts \\(8\\)"):
        parse_model_config(data, "config.json")
