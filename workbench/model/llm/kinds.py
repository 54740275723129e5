"""Operation kinds that whole-model expansion needs beyond the basic set: a mixture-of-experts
grouped GEMM, multi-head latent attention (DeepSeek) and a tensor-parallel all-reduce.

They are ordinary kinds (registered in :data:`~workbench.model.operations.KINDS`): their
parameters are declared as data, their counts are named terms with formulas, and they can be
used on their own like any other kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.model.terms import (
    CAUSAL_SHAPE,
    KINDS,
    AtMost,
    Counts,
    Kind,
    Param,
    Sym,
    register,
    symbols,
    tensor,
    term,
)

__all__ = ["expected_experts", "COLLECTIVE_STEPS", "collective_steps"]


def expected_experts(experts, top_k, tokens):
    """Expected number of distinct experts hit when ``tokens`` tokens each pick ``top_k`` of
    ``experts`` uniformly: ``E·(1 − (1 − k/E)^T)``."""
    return experts * (1 - (1 - top_k / experts) ** tokens)


# ---------------------------------------------------------------------------------------
# MoE grouped GEMM

MOE_GEMM_PARAMS = (
    Param("layers", "int", 1, "Layers",
          "Independent MoE layers counted together (each with its own E experts).",
          symbol="L"),
    Param("tokens", "int", 16, "Tokens", "Tokens routed through the layer (T).", symbol="T", required=True),
    Param("experts", "int", 8, "Experts", "Routed experts in the layer (E).", symbol="E", required=True),
    Param("top_k", "int", 2, "Experts per token", "Experts each token is sent to (k).",
          symbol="k", required=True),
    Param("n", "int", 14336, "N", "Output features of each expert's matrix.", symbol="N", required=True),
    Param("k", "int", 4096, "K", "Input features (contraction dimension).", symbol="K", required=True),
    Param("dtype", "dtype", "bf16", "Activation dtype", "Element type of the token rows."),
    Param("w_dtype", "dtype", None, "Weight dtype", "Element type of the expert weights.",
          inherit="dtype", symbol="s_W"),
    Param("compute", "precision", None, "Compute precision",
          "Precision whose peak is the ceiling (default: the activation type).",
          inherit="dtype"),
    Param("local_experts", "int", None, "Experts on this chip",
          "Expert parallelism: the experts this chip holds (E_c of E); it computes the "
          "token-expert pairs routed to them, T·k·E_c/E, and reads those of them hit.",
          inherit="experts", symbol="E_c"),
)


def _count_moe_gemm(p: Mapping[str, Any]) -> Counts:
    L, t, e, k, n, kk = p["layers"], p["tokens"], p["experts"], p["top_k"], p["n"], p["k"]
    local = p.get("local_experts") or e
    if local < e:  # expert parallelism: this chip's share of the pairs and of the hits
        share = local / e
        hit = local * (1 - (1 - min(k, e) / e) ** t)
        s = symbols(KINDS["moe_gemm"], p, hit=("D_c", hit))
        f = "·{local_experts}/{experts}"
        flops = [term("flop", "multiply-adds, the pairs routed to this chip's experts",
                      "2·{layers}·{tokens}·{top_k}" + f + "·{n}·{k}",
                      2 * L * t * k * share * n * kk, s)]
        terms = [
            tensor("read", "X", "token rows routed here", "{layers}·{tokens}·{top_k}" + f
                   + "·{k}", L * t * k * share * kk, p["dtype"], s),
            tensor("read", "W", "this chip's experts hit, D_c = E_c·(1 − (1 − k/E)^T)",
                   "{layers}·{hit}·{k}·{n}", L * hit * kk * n, p["w_dtype"], s),
            tensor("write", "Y", "", "{layers}·{tokens}·{top_k}" + f + "·{n}",
                   L * t * k * share * n, p["dtype"], s),
        ]
        notes = [f"Expert parallelism: this chip holds E_c = {local} of the E = {e} experts "
                 "and computes the token-expert pairs routed to them, T·k·E_c/E on average."]
        return Counts(flops, terms, p["compute"], notes)
    hit = expected_experts(e, min(k, e), t)
    s = symbols(KINDS["moe_gemm"], p, hit=("D", hit))
    flops = [term("flop", "multiply-adds, k experts per token",
                  "2·{layers}·{tokens}·{top_k}·{n}·{k}", 2 * L * t * k * n * kk, s)]
    terms = [
        tensor("read", "X", "token rows, once per expert chosen",
               "{layers}·{tokens}·{top_k}·{k}", L * t * k * kk, p["dtype"], s),
        tensor("read", "W", "experts hit, D = E·(1 − (1 − k/E)^T)", "{layers}·{hit}·{k}·{n}",
               L * hit * kk * n, p["w_dtype"], s),
        tensor("write", "Y", "", "{layers}·{tokens}·{top_k}·{n}", L * t * k * n, p["dtype"],
               s),
    ]
    notes = [
        "Each token is processed by k experts: FLOPs follow k, not E.",
        "Weights read are those of the experts actually hit: with T tokens routed uniformly, "
        "the expected number of distinct experts is D = E·(1 − (1 − k/E)^T) (= k at T = 1, "
        "→ E for large T).",
    ]
    return Counts(flops, terms, p["compute"], notes)


register(Kind("moe_gemm", "MoE grouped GEMM",
              "Y = X·W_e for every token and each of its k routed experts (a mixture-of-"
              "experts layer's gate/up or down projection).",
              MOE_GEMM_PARAMS, _count_moe_gemm, "MoE experts",
              constraints=(
                  AtMost("top_k", "experts", "a token is sent to at most every expert: "
                                             "top_k must not exceed experts ({limit}), got "
                                             "{value}"),
                  AtMost("local_experts", "experts", "a chip holds at most every expert: "
                                                     "must not exceed experts ({limit}), got "
                                                     "{value}"))))


# ---------------------------------------------------------------------------------------
# multi-head latent attention (absorbed form)

MLA_PARAMS = (
    Param("batch", "int", 1, "Batch", "Sequences in the batch.", symbol="b"),
    Param("heads", "int", 128, "Query heads", "Number of query heads.", symbol="h", required=True),
    Param("kv_lora_rank", "int", 512, "Latent rank", "Rank of the compressed KV latent (d_c).",
          symbol="d_c", required=True),
    Param("rope_dim", "int", 64, "RoPE dim", "Dimension of the decoupled RoPE key (d_r).",
          symbol="d_r", required=True),
    Param("query_len", "int", 1, "Query length", "Queries per sequence (1 for decode).",
          symbol="q", required=True),
    Param("kv_len", "int", 4096, "KV length", "Cached positions per sequence.", symbol="k", required=True),
    Param("causal", "bool", False, "Causal",
          "Causal mask: the visible fraction is 1 − q/(2k) (½ for a square mask)."),
    Param("dtype", "dtype", "bf16", "Element type", "Element type of the queries and output."),
    Param("kv_dtype", "dtype", None, "Cache dtype", "Element type of the cached latent.",
          inherit="dtype", symbol="s_kv"),
    Param("compute", "precision", None, "Compute precision",
          "Precision whose peak is the ceiling (default: the element type).", inherit="dtype"),
)


def _count_mla(p: Mapping[str, Any]) -> Counts:
    from workbench.model.terms import causal_fraction

    frac = causal_fraction(p["query_len"], p["kv_len"], p["causal"])
    s = symbols(KINDS["mla_attention"], p, c=("c", frac))
    b, h, dc, dr, q, k = (p[x] for x in ("batch", "heads", "kv_lora_rank", "rope_dim",
                                         "query_len", "kv_len"))
    c = "·{c}" if p["causal"] else ""
    flops = [
        term("flop", "S = Q·Cᵀ (latent and RoPE parts)",
             "2·{batch}·{heads}·{query_len}·{kv_len}·({kv_lora_rank}+{rope_dim})" + c,
             2 * b * h * q * k * (dc + dr) * frac, s),
        term("flop", "O = P·C (latent values)",
             "2·{batch}·{heads}·{query_len}·{kv_len}·{kv_lora_rank}" + c,
             2 * b * h * q * k * dc * frac, s),
    ]
    dt = p["dtype"]
    terms = [
        tensor("read", "Q", "absorbed into the latent space",
               "{batch}·{heads}·{query_len}·({kv_lora_rank}+{rope_dim})",
               b * h * q * (dc + dr), dt, s),
        tensor("read", "C", "cached latent + RoPE key, shared by all heads",
               "{batch}·{kv_len}·({kv_lora_rank}+{rope_dim})", b * k * (dc + dr),
               p["kv_dtype"], s),
        tensor("write", "O", "latent output", "{batch}·{heads}·{query_len}·{kv_lora_rank}",
               b * h * q * dc, dt, s),
    ]
    notes = [
        "Absorbed form (DeepSeek's inference): W_UK is folded into the query and W_UV into the "
        "output, so attention runs on the cached latent directly, like MQA with one shared "
        "key/value head of d_c + d_r (values: the first d_c).",
        "Flash: scores stay on chip; the latent crosses memory once.",
    ]
    if p["causal"]:
        notes.append("Causal: FLOPs scaled by the visible fraction c = 1 − min(q,k)/(2k).")
    return Counts(flops, terms, p["compute"], notes)


register(Kind("mla_attention", "Latent attention (MLA)",
              "Multi-head latent attention on a compressed KV cache (DeepSeek-V2/V3), in the "
              "absorbed form.", MLA_PARAMS, _count_mla, "Latent attention",
              constraints=(CAUSAL_SHAPE,)))


# ---------------------------------------------------------------------------------------
# all-reduce between tensor-parallel chips

ALL_REDUCE_PARAMS = (
    Param("rows", "int", 1, "Rows (tokens)", "Rows of the activation being reduced.",
          symbol="T"),
    Param("hidden", "int", 4096, "Hidden", "Elements per row.", symbol="H", required=True),
    Param("chips", "int", 2, "Chips", "Chips taking part (tensor-parallel degree).", minimum=2,
          symbol="t", required=True),
    Param("dtype", "dtype", "bf16", "Element type", "Element type of the partial sums."),
    Param("compute", "precision", None, "Compute precision",
          "Precision of the additions (default: the element type).", inherit="dtype"),
    Param("collective", "choice", "all_reduce", "Collective",
          "all_reduce: ring, sums the rows across chips. all_to_all: each chip sends each row's "
          "copies to the chips that own them (expert-parallel dispatch and combine), no "
          "additions. send: one chip passes the rows to the next (a pipeline stage boundary).",
          choices=("all_reduce", "all_to_all", "send")),
    Param("copies", "int", 1, "Copies per row",
          "all_to_all: how many chips each row goes to (the experts chosen per token, k).",
          symbol="c", only_if=("collective", "all_to_all")),
)


def _count_all_reduce(p: Mapping[str, Any]) -> Counts:
    if p.get("collective", "all_reduce") != "all_reduce":
        return _count_exchange(p)
    rows, hidden, chips = p["rows"], p["hidden"], p["chips"]
    s = symbols(KINDS["all_reduce"], p)
    s["frac"] = Sym("(t−1)/t", (chips - 1) / chips)
    flops = [term("flop", "additions of the partial sums (per chip)",
                  "({chips}−1)/{chips}·{rows}·{hidden}", (chips - 1) / chips * rows * hidden, s)]
    sent = tensor("write", "partial sums", "sent per chip, ring all-reduce",
                  "2·({chips}−1)/{chips}·{rows}·{hidden}", 2 * (chips - 1) / chips * rows * hidden,
                  p["dtype"], s)
    notes = [
        "Ring all-reduce: reduce-scatter then all-gather; each chip sends 2·(t−1)/t of the "
        "activation. Bytes are counted on the machine's first interconnect.",
        "Latency: the ring takes 2·(t−1) steps, each paying the link's latency at least "
        "(the machine's link_latency, or the default for its kind of link): a floor no "
        "implementation beats, added to T_lower.",
        "In tensor parallelism there are two per layer: after the attention output projection "
        "and after the FFN down projection.",
    ]
    return Counts(flops, [sent], p["compute"], notes, **_steps(p))


def _steps(p: Mapping[str, Any]) -> dict[str, Any]:
    """The latency steps of a collective with parameters ``p`` (see :class:`Counts`)."""
    template, count = COLLECTIVE_STEPS[p.get("collective", "all_reduce")]
    return {"latency_steps": count(p),
            "latency_formula": (template.replace("{chips}", "t"), template.format(**p))}


def _count_exchange(p: Mapping[str, Any]) -> Counts:
    """all_to_all and send: data moved over the links, no arithmetic."""
    rows, hidden, chips = p["rows"], p["hidden"], p["chips"]
    s = symbols(KINDS["all_reduce"], p)
    flops = [term("flop", "none: data movement only", "0·{rows}·{hidden}", 0, s)]
    if p["collective"] == "send":
        sent = tensor("write", "rows", "sent to the next stage", "{rows}·{hidden}",
                      rows * hidden, p["dtype"], s)
        notes = ["Point to point: the activation crosses one link once, in one step (one "
                 "link latency). Between pipeline stages."]
    else:
        copies = p["copies"]
        sent = tensor("write", "row copies", "sent per chip, to the other chips",
                      "{copies}·({chips}−1)/{chips}·{rows}·{hidden}",
                      copies * (chips - 1) / chips * rows * hidden, p["dtype"], s)
        notes = ["All-to-all: each of the rows goes to the c chips owning its experts; a "
                 "share (t−1)/t of them lives on another chip. Pairwise exchange: t−1 steps, "
                 "each paying the link latency.",
                 "Expert parallelism has two per MoE layer: dispatch before the experts and "
                 "combine after them (the weighted sum of the k outputs is not counted)."]
    return Counts(flops, [sent], p["compute"], notes, **_steps(p))


register(Kind("all_reduce", "Collective (communication)",
              "Sum an activation across t tensor-parallel chips (ring all-reduce), exchange "
              "rows between expert-parallel chips (all-to-all) or pass them to the next "
              "pipeline stage (send), over the interconnect.", ALL_REDUCE_PARAMS,
              _count_all_reduce, "All-reduce", default_level="interconnect"))


#: Steps of each collective's algorithm (each pays one link latency): the formula shown and
#: the count from the operation's parameters.
COLLECTIVE_STEPS: dict[str, tuple[str, Any]] = {
    "all_reduce": ("2·({chips}−1)", lambda p: 2 * (p["chips"] - 1)),
    "all_to_all": ("({chips}−1)", lambda p: p["chips"] - 1),
    "send": ("1", lambda p: 1),
}


def collective_steps(kind: str, params: Mapping[str, Any]) -> tuple[int, str] | None:
    """``(steps, formula with values)`` of a collective operation, None for other kinds."""
    if kind != "all_reduce":
        return None
    full = KINDS[kind].resolve(params)
    template, count = COLLECTIVE_STEPS[full["collective"]]
    return int(count(full)), template.format(**full)
