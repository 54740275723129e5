"""Operation kinds that whole-model expansion needs beyond the basic set: a mixture-of-experts
grouped GEMM, multi-head latent attention (DeepSeek) and a tensor-parallel all-reduce.

They are ordinary kinds (registered in :data:`~workbench.model.operations.KINDS`): their
parameters are declared as data, their counts are named terms with formulas, and they can be
used on their own like any other kind.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from workbench.model.dtypes import DTYPE_BYTES
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
from workbench.records import record

__all__ = ["expected_experts", "COLLECTIVE_STEPS", "collective_steps", "busiest_chip",
           "grouped", "grouped_busiest",
           "BusiestChip", "algorithm_of", "step_key", "ONE_SHOT_LIMIT"]


def expected_experts(experts, top_k, tokens):
    """Expected number of distinct experts hit when ``tokens`` tokens each pick ``top_k`` of
    ``experts`` uniformly: ``E·(1 − (1 − k/E)^T)``."""
    return experts * (1 - (1 - top_k / experts) ** tokens)


#: Up to this many experts the busiest chip's experts hit are counted exactly.
EXACT_EXPERTS = 512


@record(frozen=True)
class BusiestChip:
    """What the busiest chip of expert parallelism does in one MoE layer: the step waits
    for it. ``pairs``: token-expert pairs routed to it; ``hit``: its experts hit (each read
    whole); ``mean_pairs`` and ``mean_hit``: the same on an average chip."""
    pairs: float
    hit: float
    mean_pairs: float
    mean_hit: float
    imbalance: float = 1.0


def busiest_chip(tokens: int, experts: int, top_k: int, local: int,
                 imbalance: float = 1.0, groups: int = 1, topk_groups: int = 1) -> BusiestChip:
    """The busiest of the chips that hold ``local`` experts each of ``experts``, when
    ``tokens`` tokens each pick ``top_k`` distinct experts uniformly:

    * pairs: the expected maximum over the chips of Binomial(T·k, E_c/E) (each pair lands on
      a chip's experts with probability E_c/E), at most T·min(k, E_c);
    * experts hit: the expected maximum over the chips of the experts hit on one chip when
      D = E·(1 − (1 − k/E)^T) distinct experts are hit in all, drawn without replacement
      (exact for whole D — at one token the k experts hit are on at most k chips, and each
      of those reads a whole expert — and interpolated between);
      past :data:`EXACT_EXPERTS` experts, the maximum of Binomial(E_c, D/E) over the chips;
    * group-limited routing (``groups`` G, ``topk_groups`` M < G): a token's k experts
      lie in M of the G groups, so they crowd on the chips of those groups: both counts
      from :func:`grouped_busiest` where it applies (chips and groups aligned, up to
      :data:`GROUPED_CELLS`), past it the pairs' spread about their mean scaled by the
      grouped routing's standard deviation (the experts hit no longer depend on the groups);
    * ``imbalance`` f ≥ 1 (skewed routing): both × f, at most all the pairs and all E_c
      experts; never fewer pairs than experts hit (each hit expert has a pair)."""
    k = min(top_k, experts)
    local = min(local, experts)
    chips = max(1, math.ceil(experts / local))
    share = local / experts
    mean_pairs = tokens * k * share
    hit_all = expected_experts(experts, k, tokens)
    mean_hit = local * (1 - (1 - k / experts) ** tokens)
    pairs = _max_binomial(tokens * k, share, chips) if chips > 1 else mean_pairs
    if experts > EXACT_EXPERTS:  # each chip's hits as Binomial(E_c, D/E), its maximum
        hit = _max_binomial(local, hit_all / experts, chips) if chips > 1 else mean_hit
    else:
        lo = math.floor(hit_all)
        frac = hit_all - lo
        hit = _max_hit(experts, local, lo)
        if frac > 1e-12 and lo < experts:
            hit += frac * (_max_hit(experts, local, lo + 1) - hit)
    if grouped(experts, local, groups, topk_groups):
        exact = grouped_busiest(tokens, experts, k, groups, topk_groups, local)
        if exact is not None:
            pairs, hit = exact
        else:  # many tokens: the pairs spread more, the experts hit as without groups
            pairs = mean_pairs + (pairs - mean_pairs) * _spread(experts, k, groups, topk_groups,
                                                                local)
    hit = float(min(hit * imbalance, local))
    pairs = float(max(min(pairs * imbalance, tokens * min(k, local)), hit))
    return BusiestChip(pairs, hit, mean_pairs, mean_hit, imbalance)


def grouped(experts: int, local: int, groups: int, topk_groups: int) -> bool:
    """Whether group-limited routing changes the busiest chip's counts and they are counted
    with it: fewer groups picked than there are (M < G), equal groups, and chips that each
    hold part of one group or whole groups (E_c divides E/G or E/G divides E_c, all chips
    alike)."""
    if groups <= 1 or not 1 <= topk_groups < groups or experts % groups or experts % local:
        return False
    size = experts // groups
    return size % local == 0 or local % size == 0


#: Past this many cells of the table of selections × load, :func:`grouped_busiest` gives way
#: to the scaled spread (a few milliseconds at most below it).
GROUPED_CELLS = 1 << 17


def _binomial(n, x, p) -> np.ndarray:
    """P(Binomial(n, p) = x), element-wise over broadcast integer ``n``, ``x`` and ``p``
    (0 where x > n)."""
    n, x, p = np.broadcast_arrays(np.asarray(n), np.asarray(x), np.asarray(p, dtype=float))
    ok = x <= n
    xs, ns = np.where(ok, x, 0), np.where(ok, n, 0)
    logfact = _log_factorials(int(ns.max(initial=0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        log = (logfact[ns] - logfact[xs] - logfact[ns - xs] + xs * np.log(p)
               + (ns - xs) * np.log1p(-p))
    log = np.where((xs == 0) & (p == 0) | (xs == ns) & (p == 1), logfact[ns] * 0, log)
    return np.where(ok, np.exp(log), 0.0)


@functools.lru_cache(maxsize=8)
def _log_factorials(n: int) -> np.ndarray:
    """log(i!) for i = 0 … n (at least 1,024 of them)."""
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, max(n, 1024) + 1)))))


@functools.lru_cache(maxsize=512)
def grouped_busiest(tokens: int, experts: int, top_k: int, groups: int, topk_groups: int,
                    local: int) -> tuple[float, float] | None:
    """The busiest chip's expected pairs and experts hit under group-limited routing, or
    ``None`` when the table would exceed :data:`GROUPED_CELLS` (many tokens).

    Each token picks M of the G groups (g = E/G experts each) and k experts among their
    M·g. Counted as: the groups' selections n_j independent Binomial(T, M/G) conditioned on
    their total T·M (exactly the M-of-G choice at one token), each selection picking each
    of its group's experts with probability p = k/(M·g); a chip's block of b experts of
    one group (b = min(E_c, g)) then gets Binomial(n·b, p) pairs and Binomial(b, 1 − (1 −
    p)^n) experts hit. A chip is u = g/E_c blocks of one group (sharing its n) or r =
    E_c/g whole groups; the expected maximum is Σ_{m ≥ 0} 1 − P(every chip ≤ m), P the
    coefficient of w^{T·M} in (Σ_n P(n, the unit's chips ≤ m) wⁿ)^units over that of
    (Σ_n P(n) wⁿ)^units, a unit being a group (u chips) or a chip (r groups)."""
    G, M, E, k, T = groups, topk_groups, experts, top_k, tokens
    size = E // G
    u, r = (size // local, 1) if size % local == 0 else (1, local // size)
    block = min(local, size)
    units = G // r
    top = T * min(k, local)  # most pairs a chip can get
    if (r * T + 1) * (max(top, local) + 1) > GROUPED_CELLS:
        return None
    if T == 1 and r == 1:  # the k experts: any k of the M·u chips' M·g, alike
        one = _max_hit(M * size, local, min(k, M * size))
        return one, one
    p, q = k / (M * size), M / G
    total = T * M

    def expected_max(cells: np.ndarray) -> float:
        """Σ_m 1 − [w^{T·M}] (Σ_n cells[n, m] wⁿ)^units / [w^{T·M}] (Σ_n cells[n, -1] wⁿ)^units,
        every m at once (the powers by FFT: no wrap-around reaches w^{T·M})."""
        length = max(total, cells.shape[0] * units - 1 - total) + 1
        spectrum = np.fft.rfft(cells, n=length, axis=0) ** units
        at = np.fft.irfft(spectrum, n=length, axis=0)[total]
        return float(np.sum(1 - np.clip(at[:-1] / at[-1], 0.0, 1.0)))

    n = np.arange(r * T + 1)[:, None]
    chosen = _binomial(r * T, n, q)  # P(n selections of the unit's r groups)
    # pairs: a chip's Binomial(n·b, p) up to m, for each m; the u chips of a unit share n
    cdf = np.minimum(np.cumsum(_binomial(n * block, np.arange(top + 1), p), axis=1), 1.0)
    pairs = expected_max(chosen * cdf ** u)
    # experts hit: a block's Binomial(b, 1 − (1 − p)^n), n ≤ T; a chip of r groups adds its
    # r blocks, each with its own selections (a 2-D convolution over selections and hits)
    n = np.arange(T + 1)[:, None]
    hits = _binomial(block, np.arange(block + 1), 1 - (1 - p) ** n)
    if r == 1:
        cells = _binomial(T, n, q) * np.minimum(np.cumsum(hits, axis=1), 1.0) ** u
    else:
        shape = (r * T + 1, local + 1)
        chip = np.fft.irfft2(np.fft.rfft2(_binomial(T, n, q) * hits, shape) ** r, shape)
        cells = np.cumsum(np.maximum(chip, 0.0), axis=1)
    return pairs, expected_max(cells)


def _spread(experts: int, top_k: int, groups: int, topk_groups: int, local: int) -> float:
    """How much wider one chip's pairs per token spread under group-limited routing than
    uniformly: the ratio of standard deviations, √(Var_grouped / (k·s·(1 − s))), s = E_c/E.
    A chip's a of the M groups picked (hypergeometric, of its r groups, or its one group's
    share) hold a·b of the M·g experts the k are drawn from."""
    G, M, E, k = groups, topk_groups, experts, top_k
    size = E // G
    r = max(1, local // size)
    block = min(local, size)
    pool = M * size
    var = mean = 0.0
    for a in range(min(r, M) + 1):
        pa = math.comb(r, a) * math.comb(G - r, M - a) / math.comb(G, M)
        f = a * block / pool
        var += pa * (k * f * (1 - f) * (pool - k) / max(1, pool - 1) + (k * f) ** 2)
        mean += pa * k * f
    share = local / E
    return math.sqrt((var - mean ** 2) / (k * share * (1 - share)))


@functools.lru_cache(maxsize=256)
def _max_binomial(n: int, p: float, chips: int) -> float:
    """E[max of ``chips`` Binomial(n, p)] (taken as independent): Σ_{x ≥ 1} 1 − F(x − 1)^c;
    the normal approximation μ + σ·Φ⁻¹((c − 0.375)/(c + 0.25)) past 20,000 pairs."""
    if n == 0 or p <= 0:
        return 0.0
    if p >= 1:
        return float(n)
    if n > 20_000:
        from statistics import NormalDist

        z = NormalDist().inv_cdf((chips - 0.375) / (chips + 0.25))
        return min(float(n), n * p + z * math.sqrt(n * p * (1 - p)))
    x = np.arange(n, dtype=float)
    steps = np.log((n - x) / (x + 1)) + math.log(p / (1 - p))
    logpmf = n * math.log1p(-p) + np.concatenate(([0.0], np.cumsum(steps)))
    cdf = np.minimum(np.cumsum(np.exp(logpmf)), 1.0)
    return float(np.sum(1 - cdf[:-1] ** chips))


@functools.lru_cache(maxsize=1024)
def _max_hit(experts: int, local: int, hit: int) -> float:
    """E[max over chips of the experts hit on one chip] when ``hit`` of ``experts`` are hit
    (all subsets alike) and the chips hold ``local`` each (the last one the rest):
    Σ_{m ≥ 0} 1 − P(every chip ≤ m), P = [z^D] Π_chips (Σ_{j ≤ m} C(E_c, j) z^j) / C(E, D)."""
    if hit <= 0:
        return 0.0
    sizes = [local] * (experts // local) + ([experts % local] if experts % local else [])
    total = math.comb(experts, hit)
    out = 0.0
    for m in range(local):
        poly = np.array([1.0])
        for size in sizes:
            poly = np.convolve(poly, [math.comb(size, j) for j in range(min(m, size) + 1)])
        ways = poly[hit] if hit < poly.size else 0.0
        out += 1 - ways / total
    return out


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
          "token-expert pairs routed to them, and reads those of them hit: the busiest "
          "chip's share sets the step (the expected maximum over the chips).",
          inherit="experts", symbol="E_c"),
    Param("imbalance", "float", 1.0, "Routing imbalance",
          "Expert parallelism, skewed routing: the busiest chip gets this many times the "
          "pairs and experts hit it would get under uniform routing (1: uniform; e.g. 1.3).",
          symbol="f"),
    Param("groups", "int", 1, "Expert groups",
          "Group-limited routing (DeepSeek's n_group): the experts form G equal groups "
          "(1: no groups).", symbol="G"),
    Param("topk_groups", "int", None, "Groups per token",
          "Group-limited routing (topk_group): each token picks its k experts among those of "
          "M of the G groups, so they crowd on fewer chips (default: all G, no limit).",
          symbol="M", inherit="groups"),
)


def _count_moe_gemm(p: Mapping[str, Any]) -> Counts:
    L, t, e, k, n, kk = p["layers"], p["tokens"], p["experts"], p["top_k"], p["n"], p["k"]
    local = p.get("local_experts") or e
    if local < e:  # expert parallelism: the busiest chip's pairs and experts hit
        G = p.get("groups") or 1
        M = p.get("topk_groups") or G
        b = busiest_chip(t, e, k, local, p.get("imbalance") or 1.0, G, M)
        limit = grouped(e, local, G, M)
        s = symbols(KINDS["moe_gemm"], p, pairs=("P_max", b.pairs), hit=("D_max", b.hit))
        flops = [term("flop", "multiply-adds, the pairs routed to the busiest chip's experts",
                      "2·{layers}·{pairs}·{n}·{k}", 2 * L * b.pairs * n * kk, s)]
        terms = [
            tensor("read", "X", "token rows routed to the busiest chip", "{layers}·{pairs}·{k}",
                   L * b.pairs * kk, p["dtype"], s),
            tensor("read", "W", "the busiest chip's experts hit, each read whole",
                   "{layers}·{hit}·{k}·{n}", L * b.hit * kk * n, p["w_dtype"], s),
            tensor("write", "Y", "", "{layers}·{pairs}·{n}", L * b.pairs * n, p["dtype"], s),
        ]
        skew = (f" × f = {b.imbalance:g} (skewed routing)" if b.imbalance != 1 else "")
        grouping = (f"; each token's k experts lie in M = {M} of the G = {G} groups, so they "
                    "crowd on those groups' chips: the maxima count the group limit"
                    if limit else "")
        notes = [f"Expert parallelism: each chip holds E_c = {local} of the E = {e} experts; "
                 "the step waits for the busiest chip, which is charged here.",
                 f"Pairs: an average chip gets T·k·E_c/E = {b.mean_pairs:.4g}; the busiest "
                 f"P_max = {b.pairs:.4g}, the expected maximum over the chips of "
                 f"Binomial(T·k, E_c/E){skew}{grouping}.",
                 f"Experts hit: an average chip E_c·(1 − (1 − k/E)^T) = {b.mean_hit:.4g}; the "
                 f"busiest D_max = {b.hit:.4g} of its {local} (the expected maximum over the chips "
                 "when E·(1 − (1 − k/E)^T) experts are hit in all){skew}. A chip that hosts a "
                 "hit expert reads all of its weights."]
        if limit:
            notes.append(f"Group limit: {M} of {G} groups per token; the busiest chip's pairs "
                         "and experts hit are the expected maxima with each token's groups "
                         "drawn uniformly, then its k experts among theirs.")
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
                                                     "{value}"),
                  AtMost("groups", "experts", "the experts form at most one group each: "
                                              "groups must not exceed experts ({limit}), got "
                                              "{value}"),
                  AtMost("topk_groups", "groups", "a token picks among at most every group: "
                                                  "topk_groups must not exceed groups "
                                                  "({limit}), got {value}"))))


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
          "all_reduce: sums the rows across chips. all_to_all: each chip sends each row's "
          "copies to the chips that own them (expert-parallel dispatch and combine), no "
          "additions. send: one chip passes the rows to the next (a pipeline stage boundary). "
          "all_gather: each chip's 1/t of every row is gathered by all (the lm_head's logits "
          "under tensor parallelism).",
          choices=("all_reduce", "all_to_all", "send", "all_gather")),
    Param("algorithm", "choice", "auto", "All-reduce algorithm",
          "ring: reduce-scatter then all-gather, 2·(t−1) steps, 2·(t−1)/t of the rows sent; "
          "one_shot: each chip reads every other's partial sums, 1 step, (t−1)× the rows; "
          "tree: a double binary tree, 2·⌈log2 t⌉ steps, 2·(t−1)/t of the rows; auto: "
          "one_shot up to 1 MB per chip, ring above (as NCCL-like libraries choose).",
          choices=("auto", "ring", "one_shot", "tree"), only_if=("collective", "all_reduce")),
    Param("copies", "int", 1, "Copies per row",
          "all_to_all: how many chips each row goes to (the experts chosen per token, k).",
          symbol="c", only_if=("collective", "all_to_all")),
)


#: ``auto`` takes the one-shot all-reduce up to this many bytes per chip, ring above.
ONE_SHOT_LIMIT = 1_000_000


def algorithm_of(p: Mapping[str, Any]) -> str:
    """The all-reduce algorithm of resolved parameters ``p``: ``auto`` is one_shot when the
    rows are at most :data:`ONE_SHOT_LIMIT` bytes per chip, else ring."""
    algorithm = p.get("algorithm") or "auto"
    if algorithm != "auto":
        return algorithm
    size = p["rows"] * p["hidden"] * DTYPE_BYTES[p.get("dtype") or "bf16"]
    return "one_shot" if size <= ONE_SHOT_LIMIT else "ring"


def _count_all_reduce(p: Mapping[str, Any]) -> Counts:
    if p.get("collective", "all_reduce") != "all_reduce":
        return _count_exchange(p)
    rows, hidden, chips = p["rows"], p["hidden"], p["chips"]
    algorithm = algorithm_of(p)
    s = symbols(KINDS["all_reduce"], p)
    s["frac"] = Sym("(t−1)/t", (chips - 1) / chips)
    chose = (f" (auto: {rows * hidden * DTYPE_BYTES[p['dtype']]:,.0f} B per chip, "
             f"{'at most' if algorithm == 'one_shot' else 'above'} 1 MB)"
             if (p.get("algorithm") or "auto") == "auto" else "")
    if algorithm == "one_shot":
        flops = [term("flop", "additions of every chip's partial sums (per chip)",
                      "({chips}−1)·{rows}·{hidden}", (chips - 1) * rows * hidden, s)]
        sent = tensor("write", "partial sums", "read from every other chip, one-shot "
                      "all-reduce", "({chips}−1)·{rows}·{hidden}", (chips - 1) * rows * hidden,
                      p["dtype"], s)
        how = ("One-shot all-reduce" + chose + ": each chip reads the t−1 other chips' "
               "partial sums and adds them itself, in one step: (t−1)× the rows cross its "
               "links, one link latency (TensorRT-LLM's and vLLM's custom all-reduce for "
               "small messages).")
    else:
        flops = [term("flop", "additions of the partial sums (per chip)",
                      "({chips}−1)/{chips}·{rows}·{hidden}", (chips - 1) / chips * rows * hidden,
                      s)]
        sent = tensor("write", "partial sums", f"sent per chip, {algorithm} all-reduce",
                      "2·({chips}−1)/{chips}·{rows}·{hidden}",
                      2 * (chips - 1) / chips * rows * hidden, p["dtype"], s)
        how = ("Ring all-reduce" + chose + ": reduce-scatter then all-gather; each chip "
               "sends 2·(t−1)/t of the activation in 2·(t−1) steps." if algorithm == "ring"
               else "Tree all-reduce" + chose + ": a double binary tree reduces up and "
               "broadcasts down; each chip sends about 2·(t−1)/t of the activation in "
               "2·⌈log2 t⌉ steps.")
    notes = [
        how + " Bytes are counted on the machine's first interconnect.",
        "Latency: each step of the algorithm pays the link's latency at least (the "
        "machine's link_latency, or the default for its kind of link): a floor no "
        "implementation beats, added to T_lower.",
        "In tensor parallelism there are two per layer: after the attention output projection "
        "and after the FFN down projection.",
    ]
    return Counts(flops, [sent], p["compute"], notes, **_steps(p))


def _steps(p: Mapping[str, Any]) -> dict[str, Any]:
    """The latency steps of a collective with parameters ``p`` (see :class:`Counts`)."""
    template, count = COLLECTIVE_STEPS[step_key(p)]
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
    elif p["collective"] == "all_gather":
        sent = tensor("write", "row slices", "sent per chip, ring all-gather",
                      "({chips}−1)/{chips}·{rows}·{hidden}", (chips - 1) / chips * rows * hidden,
                      p["dtype"], s)
        notes = ["Ring all-gather: each chip holds 1/t of every row and passes the slices "
                 "round the ring until all hold all: (t−1)/t of the rows sent per chip, t−1 "
                 "steps. Under tensor parallelism the lm_head's logits, split by vocabulary, "
                 "are gathered so that every chip can sample."]
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
              "Sum an activation across t tensor-parallel chips (all-reduce), exchange "
              "rows between expert-parallel chips (all-to-all) or pass them to the next "
              "pipeline stage (send), over the interconnect.", ALL_REDUCE_PARAMS,
              _count_all_reduce, "All-reduce", default_level="interconnect"))


#: Steps of each collective's algorithm (each pays one link latency): the formula shown and
#: the count from the operation's parameters.
COLLECTIVE_STEPS: dict[str, tuple[str, Any]] = {
    "ring": ("2·({chips}−1)", lambda p: 2 * (p["chips"] - 1)),
    "one_shot": ("1", lambda p: 1),
    "tree": ("2·⌈log2 {chips}⌉", lambda p: 2 * math.ceil(math.log2(p["chips"]))),
    "all_to_all": ("({chips}−1)", lambda p: p["chips"] - 1),
    "all_gather": ("({chips}−1)", lambda p: p["chips"] - 1),
    "send": ("1", lambda p: 1),
}


def step_key(p: Mapping[str, Any]) -> str:
    """The :data:`COLLECTIVE_STEPS` entry of resolved parameters ``p``: the all-reduce's
    algorithm, else the collective."""
    collective = p.get("collective", "all_reduce")
    return algorithm_of(p) if collective == "all_reduce" else collective


def collective_steps(kind: str, params: Mapping[str, Any]) -> tuple[int, str] | None:
    """``(steps, formula with values)`` of a collective operation, None for other kinds."""
    if kind != "all_reduce":
        return None
    full = KINDS[kind].resolve(params)
    template, count = COLLECTIVE_STEPS[step_key(full)]
    return int(count(full)), template.format(**full)
