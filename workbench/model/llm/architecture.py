"""Whole decoder-only language models: the architecture read from a Hugging Face
``config.json``, its parameter count and KV cache, and its expansion into the operations of
one forward pass for a phase (prefill or decode).

Plain data and arithmetic; no Qt, no I/O (:mod:`workbench.io.model_configs` reads the files).

Conventions (also listed in :data:`MODEL_CONVENTIONS` and shown in the app):

* ``params`` counts every weight tensor: both embedding tables when they are not tied,
  norms and biases included (DeepSeek's multi-token-prediction module is not counted).
* ``active_params`` is what one token uses at decode: everything but the routed experts it
  does not select and the input embedding table (of which one row is read).
* Tokens: prefill runs batch × prompt_len tokens with causal attention; decode runs batch
  new tokens (query length 1) against a KV cache of kv_len positions.
* MoE: FLOPs follow k experts per token; weights read are those of the experts hit, expected
  distinct experts E·(1 − (1 − k/E)^T) for T tokens.
* MLA caches the compressed latent (kv_lora_rank + qk_rope_head_dim per layer per token) and
  attends in the absorbed form, as DeepSeek's inference code does.
* Tensor parallel t: heads and FFN columns are sharded (each chip does 1/t of the
  projections, attention and FFN), norms, residual adds, the embedding gather and the
  low-rank MLA down-projections are replicated; two all-reduces per layer, ring 2·(t−1)/t of
  the activation bytes over the interconnect. Counts are per chip.
* lm_head computes the logits of the last position of each sequence only.
* Local (sliding-window) layers attend to at most their window; expert parallelism splits
  the routed experts over chips (all-to-all dispatch and combine when attention is data-
  parallel), pipeline parallelism the layers into stages; every collective pays its link
  latency per step (see :mod:`workbench.model.llm.results`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import field, replace
from typing import Any

from workbench.model.dtypes import DTYPE_BYTES
from workbench.model.llm.kinds import ONE_SHOT_LIMIT, busiest_chip, expected_experts
from workbench.model.operations import Operation
from workbench.records import record

__all__ = [
    "MoE", "MLA", "Architecture", "Setup", "Step", "PHASES", "WEIGHT_DTYPES", "KV_DTYPES",
    "ALL_REDUCE_ALGORITHMS", "ONE_SHOT_LIMIT", "MAX_DRAFT_TOKENS", "SERVING_NUMBERS",
    "ACTIVATION_DTYPES", "VIEWS", "MODEL_CONVENTIONS", "layer_steps", "expand",
    "SetupError",
]

PHASES = ("prefill", "decode")
WEIGHT_DTYPES = ("bf16", "fp16", "fp8", "int8", "int4")
ACTIVATION_DTYPES = ("bf16", "fp16", "fp8", "fp32")
KV_DTYPES = ("bf16", "fp16", "fp8", "int8")
#: All-reduce algorithms: ``auto`` takes one-shot up to :data:`ONE_SHOT_LIMIT` bytes per chip
#: and ring above (as NCCL-like libraries choose).
ALL_REDUCE_ALGORITHMS = ("auto", "ring", "one_shot", "tree")
MAX_DRAFT_TOKENS = 16
#: Serving numbers of a set-up: (field, lowest, highest, what it must be).
SERVING_NUMBERS = (
    ("imbalance", 1.0, 64.0, "a number from 1 (uniform routing) to 64"),
    ("memory_utilization", 0.0, 1.0, "a fraction above 0 and at most 1"),
    ("acceptance", 0.0, 0.999, "a probability from 0 to 0.999"),
)
#: ``all``: every operation of every layer; ``layers``: one point per operation of a layer
#: kind, its FLOPs and bytes summed over the layers of that kind.
VIEWS = ("all", "layers")

MODEL_CONVENTIONS: tuple[str, ...] = (
    "params counts every weight tensor (both embedding tables when untied, norms and biases "
    "included); active_params is what one decode token uses: all but the routed experts it "
    "does not select and the input embedding table (one row of it is read).",
    "Prefill: batch × prompt_len tokens, causal attention. Decode: batch new tokens, query "
    "length 1, against a KV cache of kv_len positions; speculative decoding with k draft "
    "tokens verifies k + 1 positions per sequence a step and yields (1 − a^(k+1))/(1 − a) "
    "tokens on average (acceptance a; the draft's own cost not counted).",
    "KV cache per token = 2 · layers · kv_heads · head_dim · s_kv (head_dim as the config "
    "gives it); MLA caches layers · (kv_lora_rank + qk_rope_head_dim) · s_kv.",
    "MoE: FLOPs for k experts per token; weights read for the expected distinct experts hit, "
    "E·(1 − (1 − k/E)^T).",
    "Tensor parallel t: heads and FFN columns sharded (t divides them, as serving engines "
    "require; with fewer KV heads than t, each is copied onto t/kv_heads chips), norms and "
    "residuals replicated; two "
    "all-reduces per layer on the interconnect (one-shot, (t−1)× the activation bytes, up to "
    "1 MB per chip; ring, 2·(t−1)/t of them, above; or as set), and the lm_head's logits "
    "all-gathered. "
    "Every count is per chip; bytes on the links are reported beside the memory bytes, "
    "never added in.",
    "Every collective pays its link's latency once per step of its algorithm (ring "
    "all-reduce 2·(t−1), one-shot 1, tree 2·⌈log2 t⌉, all-to-all and all-gather t−1, a "
    "stage send 1), part of T_lower: the machine's "
    "link_latency, else 0.6 µs NVLink, 1 µs PCIe, 5 µs InfiniBand, 1 µs ICI.",
    "Local (sliding-window) layers attend to at most their window: FLOPs, K/V bytes and the "
    "KV cache count min(positions, window).",
    "Expert parallel e: each chip holds ⌈E/e⌉ routed experts and computes the token-expert "
    "pairs routed to them; the step waits for the busiest chip: the expected maximum over "
    "the chips of the pairs and of the experts hit (uniform routing, × a set imbalance "
    "factor for skewed routing), each hit expert read whole; with e > t attention is "
    "data-parallel over e/t copies and "
    "all-to-all dispatch and combine move the tokens. Pipeline parallel p: a chip holds "
    "⌈layers/p⌉ layers and one embedding table, p micro-batches in flight, a step takes p "
    "stage times. Chips = max(t, e) × p.",
    "A request: TTFT of the prompt, then one decode step per output token against a KV cache "
    "of prompt + i positions (the predicted step grows at least as its T_lower does). Max "
    "batch: the sequences a server keeps at once, in prefill and decode alike: capacity × "
    "memory utilisation − runtime reserve holds the weights, one prefill chunk's activations "
    "and each sequence's KV cache (prompt + output) in whole paged blocks.",
    "Model time = sum over operations of each one's roofline time (predicted: calibrated by "
    "default, a whole model's kernels replayed from a CUDA graph; derated: the machine's "
    "efficiency and launch-overhead floor per kernel).",
    "Weight-only quantisation keeps the embedding and lm_head in bf16 unless asked.",
)


class SetupError(ValueError):
    """An inference set-up that cannot be expanded (names the field and the problem)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@record(frozen=True)
class MoE:
    """Routed (and shared) experts of the MoE layers."""
    experts: int
    top_k: int
    intermediate: int
    shared_intermediate: int = 0  # total intermediate width of the shared expert(s)
    first_dense: int = 0          # layers before the first MoE layer (first_k_dense_replace)
    every: int = 1                # MoE every n-th layer after those (moe_layer_freq)
    shared_gate: bool = False     # a sigmoid gate on the shared expert (Qwen-MoE): H params
    router_bias: bool = False     # a per-expert routing bias (DeepSeek-V3): E params
    #: Group-limited routing (DeepSeek's ``n_group``, ``topk_group``): the experts form
    #: ``groups`` equal groups and a token picks its k experts among those of
    #: ``topk_groups`` of them; 1 and 1: no group limit.
    groups: int = 1
    topk_groups: int = 1

    def is_moe_layer(self, index: int) -> bool:
        return index >= self.first_dense and (index - self.first_dense) % self.every == 0


@record(frozen=True)
class MLA:
    """Multi-head latent attention dimensions (DeepSeek-V2/V3)."""
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None


@record(frozen=True)
class Architecture:
    """A decoder-only transformer as its config describes it."""
    name: str
    model_type: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool = False
    qk_norm: bool = False        # per-head RMSNorm of q and k (Qwen3)
    qkv_bias: bool = False       # biases on q, k, v (Qwen2)
    norms_per_layer: int = 2     # Gemma-2 has four (pre and post of each block)
    activation: str = "silu"     # gated: silu (SwiGLU), gelu (GeGLU) or relu (ReGLU)
    moe: MoE | None = None
    mla: MLA | None = None
    source: str = ""
    #: Local (sliding-window) attention: the window in positions, and which layers have it
    #: (indexes from 0); 0 / () for none.
    sliding_window: int = 0
    local_layers: tuple[int, ...] = ()
    #: The longest context the model was made for (0: not stated) and where that figure
    #: comes from (``max_position_embeddings``, or the rope scaling's original × factor).
    max_positions: int = 0
    max_positions_source: str = ""

    def context_warning(self, positions: int) -> str:
        """A warning when ``positions`` exceed :attr:`max_positions`, else ``""``."""
        if not self.max_positions or positions <= self.max_positions:
            return ""
        return (f"{positions:,} positions exceed {self.name}'s limit of "
                f"{self.max_positions:,} ({self.max_positions_source}): the model was not "
                "made for this context, its output past the limit is not to be trusted")

    def is_local_layer(self, index: int) -> bool:
        return self.sliding_window > 0 and index in self._local_set

    @functools.cached_property
    def _local_set(self) -> frozenset[int]:
        return frozenset(self.local_layers)

    @functools.cached_property
    def mixed_attention(self) -> bool:
        """Some layers local, some global (Gemma-2): they are separate layer kinds."""
        local = sum(self.is_local_layer(i) for i in range(self.layers))
        return 0 < local < self.layers

    def layer_group(self, index: int) -> str:
        """The layer kind of layer ``index``: ``layer``, ``dense layer`` or ``MoE layer``,
        prefixed ``local``/``global`` when only some layers attend to a sliding window."""
        base = ("layer" if self.moe is None else
                "MoE layer" if self.is_moe_layer(index) else "dense layer")
        if self.mixed_attention:
            return ("local " if self.is_local_layer(index) else "global ") + base
        return base

    def window_of(self, index: int) -> int:
        """The sliding window of layer ``index`` (0: it attends to every position)."""
        return self.sliding_window if self.is_local_layer(index) else 0

    def kv_positions(self, positions: int) -> int:
        """Σ over layers of the positions each layer keeps in its KV cache: ``positions``,
        or its window for a local layer."""
        return sum(min(positions, self.window_of(i) or positions) for i in range(self.layers))

    # -- parameter counts ------------------------------------------------------------------

    def attention_params(self) -> int:
        h, H = self.heads, self.hidden
        if self.mla is not None:
            m = self.mla
            qk = m.qk_nope_head_dim + m.qk_rope_head_dim
            q = H * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * h * qk if m.q_lora_rank else H * h * qk
            kv = H * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
            kv += m.kv_lora_rank * h * (m.qk_nope_head_dim + m.v_head_dim)
            return q + kv + h * m.v_head_dim * H
        d, hk = self.head_dim, self.kv_heads
        n = H * h * d + 2 * H * hk * d + h * d * H
        if self.qkv_bias:
            n += h * d + 2 * hk * d
        if self.qk_norm:
            n += 2 * d
        return n

    def dense_ffn_params(self) -> int:
        return 3 * self.hidden * self.intermediate

    def expert_params(self) -> int:
        """One routed expert's gate, up and down matrices."""
        assert self.moe is not None
        return 3 * self.hidden * self.moe.intermediate

    def moe_layer_params(self) -> int:
        m = self.moe
        assert m is not None
        n = self.hidden * m.experts + m.experts * self.expert_params()
        n += 3 * self.hidden * m.shared_intermediate
        if m.shared_gate:
            n += self.hidden
        if m.router_bias:
            n += m.experts
        return n

    def is_moe_layer(self, index: int) -> bool:
        return self.moe is not None and self.moe.is_moe_layer(index)

    @functools.cached_property
    def moe_layers(self) -> int:
        return sum(self.is_moe_layer(i) for i in range(self.layers))

    @functools.cached_property
    def params(self) -> int:
        per_norms = self.norms_per_layer * self.hidden
        moe = self.moe_layers
        dense = self.layers - moe
        n = self.layers * (self.attention_params() + per_norms)
        n += dense * self.dense_ffn_params()
        if moe:
            n += moe * self.moe_layer_params()
        n += self.hidden  # final norm
        n += self.vocab * self.hidden * (1 if self.tied else 2)
        return n

    @functools.cached_property
    def active_params(self) -> int:
        n = self.params
        if self.moe is not None:
            n -= self.moe_layers * (self.moe.experts - self.moe.top_k) * self.expert_params()
        if not self.tied:
            n -= self.vocab * self.hidden  # the input table: one row of it is read
        return n

    @property
    def embedding_params(self) -> int:
        """Embedding table and lm_head (kept in bf16 by weight-only quantisation)."""
        return self.vocab * self.hidden * (1 if self.tied else 2)

    def weight_bytes(self, weights: str = "bf16", quantize_embeddings: bool = False) -> float:
        emb = self.embedding_params
        emb_dtype = weights if quantize_embeddings else _wider_of(weights, "bf16")
        return (self.params - emb) * DTYPE_BYTES[weights] + emb * DTYPE_BYTES[emb_dtype]

    def replicated_params(self) -> int:
        """Weights every tensor-parallel chip holds whole: norms, the MLA down-projections
        and their norms, the router."""
        H = self.hidden
        n = self.layers * self.norms_per_layer * H + H
        if self.qk_norm:
            n += self.layers * 2 * self.head_dim
        if self.mla is not None:
            m = self.mla
            down = H * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
            if m.q_lora_rank:
                down += H * m.q_lora_rank + m.q_lora_rank
            n += self.layers * down
        if self.moe is not None:
            n += self.moe_layers * (H * self.moe.experts
                                    + (self.moe.experts if self.moe.router_bias else 0)
                                    + (H if self.moe.shared_gate else 0))
        return n

    def routed_expert_params(self) -> int:
        return self.moe_layers * self.moe.experts * self.expert_params() if self.moe else 0

    def weight_bytes_per_chip(self, weights: str = "bf16", quantize_embeddings: bool = False,
                              tp: int = 1, ep: int = 1, pp: int = 1) -> float:
        """Weights one chip holds: under tensor parallelism ``tp`` the embedding table and
        lm_head split by vocabulary, every projection split by heads or columns, the
        :meth:`replicated_params` whole; under expert parallelism ``ep`` the routed experts
        split over ep chips (⌈E/ep⌉ each, themselves split over the max(tp, ep)/ep chips
        sharing them); under pipeline parallelism ``pp`` the layers of one stage,
        ⌈layers/pp⌉, and one embedding table (the first stage's input table or the last
        one's lm_head; both when tied). With fewer KV heads than ``tp`` chips, each chip holds
        the K and V projections of a whole KV head (copied onto tp/kv_heads chips)."""
        s_w = DTYPE_BYTES[weights]
        emb = self.embedding_params
        emb_dtype = weights if quantize_embeddings else _wider_of(weights, "bf16")
        if pp > 1 and not self.tied:
            emb //= 2
        rep = self.replicated_params()
        experts: float = self.routed_expert_params()
        rest = self.params - self.embedding_params - rep - experts
        if experts:
            assert self.moe is not None
            e = self.moe.experts
            experts = experts * math.ceil(e / ep) / e / max(1, max(tp, ep) // ep)
        copies = 0.0  # a KV head's K and V projections, held whole by each chip sharing it
        if self.mla is None and tp > self.kv_heads:
            kv = self.layers * 2 * self.kv_heads * self.head_dim * (self.hidden + self.qkv_bias)
            copies = kv * (math.ceil(self.kv_heads / tp) / self.kv_heads - 1 / tp)
        layers = (rest / tp + copies + rep + experts) * s_w
        if pp > 1:
            layers *= math.ceil(self.layers / pp) / self.layers
        return emb * DTYPE_BYTES[emb_dtype] / tp + layers

    def kv_cache_bytes_per_token(self, kv_dtype: str = "bf16") -> float:
        """Bytes one position adds to the KV cache in every layer (local layers stop adding
        once their window is full: see :meth:`kv_cache_bytes`)."""
        return self.layers * self.kv_bytes_per_layer_token(kv_dtype)

    def kv_bytes_per_layer_token(self, kv_dtype: str = "bf16") -> float:
        s = DTYPE_BYTES[kv_dtype]
        if self.mla is not None:
            return (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim) * s
        return 2 * self.kv_heads * self.head_dim * s

    def kv_cache_bytes(self, positions: int, kv_dtype: str = "bf16") -> float:
        """KV cache of one sequence holding ``positions`` positions: every layer keeps
        ``positions``, a local layer at most its window."""
        return self.kv_positions(positions) * self.kv_bytes_per_layer_token(kv_dtype)

    def summary(self) -> str:
        parts = [f"{self.layers} layers", f"hidden {self.hidden}", f"{self.heads} heads"]
        if self.mla is not None:
            parts.append(f"MLA latent {self.mla.kv_lora_rank}+{self.mla.qk_rope_head_dim}")
        else:
            parts.append(f"{self.kv_heads} KV heads × {self.head_dim}")
        if self.moe is not None:
            parts.append(f"MoE {self.moe.top_k} of {self.moe.experts}")
        local = sum(self.is_local_layer(i) for i in range(self.layers))
        if local:
            parts.append(f"{local} local layers (window {self.sliding_window})")
        return ", ".join(parts)


def _wider_of(a: str, b: str) -> str:
    return a if DTYPE_BYTES[a] >= DTYPE_BYTES[b] else b


@record(frozen=True)
class Setup:
    """How the model is run: phase, batch, lengths, dtypes and tensor-parallel degree."""
    phase: str = "decode"
    batch: int = 1
    prompt_len: int = 2048
    kv_len: int = 2048
    weights: str = "bf16"
    activations: str = "bf16"
    kv_cache: str = "bf16"
    tp: int = 1
    quantize_embeddings: bool = False
    #: Output tokens of a request (0: one step only); the KV cache then holds
    #: prompt_len + output_len positions.
    output_len: int = 0
    #: Expert parallelism: routed experts split over ``ep`` chips (the same chips as the
    #: tensor-parallel group when ep ≤ tp; else attention runs data-parallel over ep/tp).
    ep: int = 1
    #: Pipeline parallelism: layers split into ``pp`` stages, pp micro-batches in flight.
    pp: int = 1
    #: Expert parallelism, skewed routing: the busiest chip gets this many times its share
    #: under uniform routing (1: uniform).
    imbalance: float = 1.0
    #: Serving memory: the fraction of a chip's capacity the server may use (vLLM's
    #: ``gpu_memory_utilization``), the KV cache's block size in tokens (paged attention),
    #: and the prefill chunk in tokens whose activations are held at once.
    memory_utilization: float = 0.9
    kv_block: int = 16
    prefill_chunk: int = 8192
    #: All-reduce algorithm of tensor parallelism (:data:`ALL_REDUCE_ALGORITHMS`).
    all_reduce: str = "auto"
    #: Speculative decoding: draft tokens proposed per step (0: off) and the probability
    #: that each is accepted.
    draft_tokens: int = 0
    acceptance: float = 0.7

    @property
    def group(self) -> int:
        """Chips of one pipeline stage: max(tp, ep)."""
        return max(self.tp, self.ep)

    @property
    def dp(self) -> int:
        """Data-parallel degree of attention within a stage: max(tp, ep) / tp."""
        return self.group // self.tp

    @property
    def chips(self) -> int:
        """Chips the model runs on: max(tp, ep) × pp."""
        return self.group * self.pp

    @property
    def chip_batch(self) -> int:
        """Sequences one chip's attention runs per step: ⌈batch / (dp · pp)⌉ (a micro-batch
        of one pipeline stage, its data-parallel share)."""
        return math.ceil(self.batch / (self.dp * self.pp))

    def check(self) -> None:
        if self.phase not in PHASES:
            raise SetupError("phase", f"must be prefill or decode, got {self.phase!r}")
        for name in ("batch", "prompt_len", "kv_len", "tp", "ep", "pp", "kv_block",
                     "prefill_chunk"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SetupError(name, f"must be a positive integer, got {value!r}")
        if self.group % self.tp or self.group % self.ep:
            raise SetupError("ep", f"tp ({self.tp}) and ep ({self.ep}) must divide one "
                                   "another: expert parallelism spans the tensor-parallel "
                                   "chips, or a whole number of data-parallel copies of them")
        if isinstance(self.output_len, bool) or not isinstance(self.output_len, int) \
                or self.output_len < 0:
            raise SetupError("output_len", f"must be a whole number ≥ 0, got "
                                           f"{self.output_len!r}")
        for name, low, high, what in SERVING_NUMBERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or not low <= value <= high \
                    or (name == "memory_utilization" and value == 0):
                raise SetupError(name, f"must be {what}, got {value!r}")
        if isinstance(self.draft_tokens, bool) or not isinstance(self.draft_tokens, int) \
                or not 0 <= self.draft_tokens <= MAX_DRAFT_TOKENS:
            raise SetupError("draft_tokens", f"must be a whole number from 0 to "
                                             f"{MAX_DRAFT_TOKENS}, got {self.draft_tokens!r}")
        for name, allowed in (("weights", WEIGHT_DTYPES), ("activations", ACTIVATION_DTYPES),
                              ("kv_cache", KV_DTYPES), ("all_reduce", ALL_REDUCE_ALGORITHMS)):
            if getattr(self, name) not in allowed:
                raise SetupError(name, f"must be one of {', '.join(allowed)}, "
                                       f"got {getattr(self, name)!r}")

    @property
    def tokens(self) -> int:
        """Tokens processed in one step: batch × prompt_len (prefill) or batch × the verify
        width (decode: 1, or k + 1 with k draft tokens)."""
        return self.batch * (self.prompt_len if self.phase == "prefill" else self.verify_width)

    @property
    def verify_width(self) -> int:
        """Positions a decode step runs per sequence: 1, or the draft tokens + 1 it verifies."""
        return self.draft_tokens + 1

    @property
    def tokens_per_step(self) -> float:
        """Expected tokens a decode step yields per sequence: with k draft tokens each
        accepted with probability a (until the first rejection), plus the target's own,
        (1 − a^(k+1)) / (1 − a); 1 without speculation."""
        k, a = self.draft_tokens, self.acceptance
        if k == 0:
            return 1.0
        return (1 - a ** (k + 1)) / (1 - a)

    @property
    def context(self) -> int:
        """Positions attended to: the prompt (prefill) or the KV cache (decode)."""
        return self.prompt_len if self.phase == "prefill" else self.kv_len

    def with_(self, **changes: Any) -> Setup:
        return replace(self, **changes)


@record
class Step:
    """One operation of a layer kind: ``count`` copies of ``operation`` per forward pass
    (the layers of that kind), ``role`` its place in the layer (colour and grouping)."""
    role: str
    operation: Operation
    count: int = 1
    group: str = ""  # the layer kind: "layer", "dense layer", "MoE layer", "model"
    notes: list[str] = field(default_factory=list)


def _shard(value: int, tp: int, what: str) -> int:
    """``value / tp`` for a sharded dimension (rounded up: a remainder still costs a slice)."""
    return max(1, math.ceil(value / tp))


def _gemm(m, n, k, s: Setup, weights: str | None = None, batch: int = 1) -> dict[str, Any]:
    params = {"batch": batch, "m": m, "n": n, "k": k, "dtype": s.activations,
              "b_dtype": weights or s.weights}
    if params["b_dtype"] == s.activations:
        del params["b_dtype"]
    else:  # weight-only quantisation: the product runs at the activation precision
        params["compute"] = _wider_of(s.activations, params["b_dtype"])
    return params


def _norm(rows, hidden, s: Setup) -> dict[str, Any]:
    return {"variant": "rmsnorm", "rows": rows, "hidden": hidden, "dtype": s.activations}


def _chain(n, steps, s: Setup, input_name="x", output="y") -> dict[str, Any]:
    return {"n": n, "dtype": s.activations, "input": input_name, "output": output,
            "steps": steps, "fused": True, "write_allocate": False}


def layer_steps(arch: Architecture, setup: Setup) -> list[Step]:
    """The operations of one forward pass, per layer kind, with how many layers have each.

    Every count is per chip under tensor parallelism (``setup.tp``)."""
    setup.check()
    if setup.pp > arch.layers:
        raise SetupError("pp", f"{setup.pp} stages for {arch.layers} layers: at most one "
                               "stage per layer")
    if arch.moe is None and setup.ep > 1:
        raise SetupError("ep", f"{arch.name} has no routed experts to split")
    _check_tensor_parallel(arch, setup.tp, setup.ep)
    full = setup
    # one chip: its data-parallel share of a pipeline micro-batch
    s = setup.with_(batch=setup.chip_batch) if setup.chip_batch != setup.batch else setup
    t = s.tp
    T, H = s.tokens, arch.hidden
    moe_tokens = math.ceil(full.batch / full.pp) * (full.tokens // full.batch)
    steps: list[Step] = []

    def add(role, kind, params, count, group, name=None):
        steps.append(Step(role, Operation(kind, params, name or role), count, group))

    # embedding gather (replicated): T rows of H read from the table, written out
    add("embedding gather", "elementwise",
        _chain(T * H, [{"op": "copy"}], s, "table rows", "h"), 1, "model")

    # layer kinds in order of first appearance: (layers, MoE, sliding window)
    kinds: dict[str, list] = {}
    for index in range(arch.layers):
        group = arch.layer_group(index)
        if group in kinds:
            kinds[group][0] += 1
        else:
            kinds[group] = [1, arch.is_moe_layer(index), arch.window_of(index)]
    if arch.moe is not None and not arch.mixed_attention:
        # dense layers first, as before (DeepSeek's first_k_dense_replace)
        kinds = dict(sorted(kinds.items(), key=lambda kv: kv[1][1]))

    for group, (count, moe, window) in kinds.items():
        count = math.ceil(count / s.pp)  # one stage's layers of this kind
        _attention_block(arch, s, add, group, count, window)
        _ffn_block(arch, s, add, group, count, moe, moe_tokens)

    add("final norm", "norm", _norm(T, H, s), 1, "model")
    emb_dtype = s.weights if s.quantize_embeddings else _wider_of(s.weights, "bf16")
    # the logits of each sequence's last position (its verify width when speculating)
    rows = s.batch * (s.verify_width if s.phase == "decode" else 1)
    add("lm_head", "gemm", _gemm(rows, _shard(arch.vocab, t, "vocab"), H, s, emb_dtype), 1,
        "model")
    if t > 1:  # each chip holds 1/t of the vocabulary's logits: gathered to sample
        add("logits all-gather", "all_reduce",
            {"rows": rows, "hidden": _shard(arch.vocab, t, "vocab") * t, "chips": t,
             "dtype": s.activations, "collective": "all_gather"}, 1, "model")
    if s.pp > 1:
        add("stage send", "all_reduce", {"rows": T, "hidden": H, "chips": 2,
                                         "dtype": s.activations, "collective": "send"}, 1,
            "model")
    return steps


def _tensor_parallel_problem(arch: Architecture, tp: int, ep: int = 1) -> str:
    """What keeps ``tp`` chips from splitting the model as serving engines (vLLM, SGLang,
    TensorRT-LLM) split it, or ``""``: the query heads evenly; the KV heads evenly or, fewer
    KV heads than chips, each copied onto tp/kv_heads chips (MLA's latent is every chip's
    whole); the FFN's columns evenly (the routed experts' over the chips sharing them)."""
    if tp == 1:
        return ""
    its = f"{arch.name}'s"
    if arch.heads % tp:
        return f"does not divide {its} {arch.heads} attention heads"
    kv = arch.kv_heads
    if arch.mla is None and (kv % tp if tp <= kv else tp % kv):
        return (f"neither divides {its} {kv} KV heads nor is a multiple of them (each KV head "
                f"copied onto tp/{kv} chips)")
    widths = [("FFN", arch.intermediate, tp)] if arch.moe_layers < arch.layers else []
    if arch.moe is not None and arch.moe_layers:
        widths.append(("expert", arch.moe.intermediate, max(tp, ep) // ep))
        if arch.moe.shared_intermediate:
            widths.append(("shared-expert", arch.moe.shared_intermediate, tp))
    for what, width, chips in widths:
        if width % chips:
            return f"does not divide {its} {width:,} {what} columns"
    return ""


def _check_tensor_parallel(arch: Architecture, tp: int, ep: int) -> None:
    """Refuses a tensor-parallel degree no serving engine runs the model at: counting its
    busiest chip with ⌈heads/tp⌉ heads would time a split that does not exist."""
    problem = _tensor_parallel_problem(arch, tp, ep)
    if problem:
        fits = ", ".join(str(t) for t in range(1, arch.heads + 1)
                         if not _tensor_parallel_problem(arch, t))
        raise SetupError("tp", f"{tp} {problem}: serving engines split them evenly over the "
                               f"tensor-parallel chips (tp = {fits})")


def _attention_block(arch: Architecture, s: Setup, add, group: str, count: int,
                     window: int = 0) -> None:
    t, T, H = s.tp, s.tokens, arch.hidden
    h = _shard(arch.heads, t, "heads")
    prefill = s.phase == "prefill"
    add("attention norm", "norm", _norm(T, H, s), count, group)
    if arch.mla is not None:
        m = arch.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            add("Q down-projection", "gemm", _gemm(T, m.q_lora_rank, H, s), count, group)
            add("Q latent norm", "norm", _norm(T, m.q_lora_rank, s), count, group)
            add("Q up-projection", "gemm", _gemm(T, h * qk, m.q_lora_rank, s), count, group)
        else:
            add("Q projection", "gemm", _gemm(T, h * qk, H, s), count, group)
        add("KV down-projection", "gemm", _gemm(T, m.kv_lora_rank + m.qk_rope_head_dim, H, s),
            count, group)
        add("KV latent norm", "norm", _norm(T, m.kv_lora_rank, s), count, group)
        add("RoPE", "elementwise",
            _chain(T * (h + 1) * m.qk_rope_head_dim, [{"op": "custom", "flops": 3}], s,
                   "q_rope, k_rope", "rotated"), count, group)
        add("Q absorb (W_UK)", "gemm",
            _gemm(T, m.kv_lora_rank, m.qk_nope_head_dim, s, batch=h), count, group)
        add("attention", "mla_attention",
            {"batch": s.batch, "heads": h, "kv_lora_rank": m.kv_lora_rank,
             "rope_dim": m.qk_rope_head_dim, "query_len": T // s.batch, "kv_len": s.context,
             "causal": prefill, "dtype": s.activations, "kv_dtype": s.kv_cache}, count, group)
        add("V absorb (W_UV)", "gemm", _gemm(T, m.v_head_dim, m.kv_lora_rank, s, batch=h),
            count, group)
        add("output projection", "gemm", _gemm(T, H, h * m.v_head_dim, s), count, group)
    else:
        d = arch.head_dim
        hk = _shard(arch.kv_heads, t, "kv_heads")
        add("QKV projection", "gemm", _gemm(T, (h + 2 * hk) * d, H, s), count, group)
        if arch.qk_norm:
            add("Q/K norm", "norm", _norm(T * (h + hk), d, s), count, group)
        add("RoPE", "elementwise",
            _chain(T * (h + hk) * d, [{"op": "custom", "flops": 3}], s, "q, k", "rotated"),
            count, group)
        params = {"implementation": "flash", "batch": s.batch, "heads": h, "kv_heads": hk,
                  "head_dim": d, "query_len": T // s.batch, "kv_len": s.context,
                  "causal": prefill, "dtype": s.activations}
        if s.kv_cache != s.activations:
            params["kv_dtype"] = s.kv_cache
        if 0 < window < s.context:
            params["window"] = window
        add("attention", "attention", params, count, group)
        add("output projection", "gemm", _gemm(T, H, h * d, s), count, group)
    _block_end(arch, s, add, group, count, "attention")


def _block_end(arch: Architecture, s: Setup, add, group: str, count: int, block: str) -> None:
    """What closes an attention or FFN block: Gemma's post-norm, the tensor-parallel
    all-reduce and the residual add."""
    t, T, H = s.tp, s.tokens, arch.hidden
    if arch.norms_per_layer == 4:
        add(f"post-{block} norm", "norm", _norm(T, H, s), count, group)
    if t > 1:
        add(f"all-reduce ({block})", "all_reduce",
            {"rows": T, "hidden": H, "chips": t, "dtype": s.activations,
             **({"algorithm": s.all_reduce} if s.all_reduce != "auto" else {})}, count, group)
    add(f"residual add ({block})", "elementwise",
        _chain(T * H, [{"op": "add", "inputs": ["residual"]}], s, "h", "h'"), count, group)


def _ffn_block(arch: Architecture, s: Setup, add, group: str, count: int, moe: bool,
               moe_tokens: int | None = None) -> None:
    t, T, H = s.tp, s.tokens, arch.hidden
    act = arch.activation
    add("FFN norm", "norm", _norm(T, H, s), count, group)

    def gated(prefix: str, width: int) -> None:
        i = _shard(width, t, "intermediate")
        add(f"{prefix}gate/up projection", "gemm", _gemm(T, 2 * i, H, s), count, group)
        add(f"{prefix}activation ({act} · up)", "elementwise",
            _chain(T * i, [{"op": act}, {"op": "mul", "inputs": ["up"]}], s, "gate", "a"),
            count, group)
        add(f"{prefix}down projection", "gemm", _gemm(T, H, i, s), count, group)

    if not moe:
        gated("", arch.intermediate)
    else:
        m = arch.moe
        assert m is not None
        ep = s.ep
        # experts whole on each of ep chips, or sharded over the tp/ep chips sharing them
        i = _shard(m.intermediate, max(1, s.group // ep), "moe_intermediate")
        add("router", "gemm", _gemm(T, m.experts, H, s), count, group)
        w = {} if s.weights == s.activations else {"w_dtype": s.weights}
        tokens = moe_tokens or T
        local: dict[str, float] = {} if ep == 1 else {"local_experts": math.ceil(m.experts / ep)}
        if local and s.imbalance != 1:
            local["imbalance"] = s.imbalance
        if local and m.groups > 1:  # the group limit crowds a token's experts on few chips
            local.update(groups=m.groups, topk_groups=m.topk_groups)
        exchange = ep > 1 and s.dp > 1  # tokens live on other chips: all-to-all
        if exchange:
            add("dispatch (all-to-all)", "all_reduce",
                {"rows": math.ceil(T / t), "hidden": H, "chips": ep, "copies": m.top_k,
                 "dtype": s.activations, "collective": "all_to_all"}, count, group)
        add("experts gate/up", "moe_gemm",
            {"tokens": tokens, "experts": m.experts, "top_k": m.top_k, "n": 2 * i, "k": H,
             "dtype": s.activations, **w, **local}, count, group)
        # the busiest chip's pairs (all of them without expert parallelism)
        pairs = tokens * m.top_k if not local else busiest_chip(
            tokens, m.experts, m.top_k, int(local["local_experts"]), s.imbalance, m.groups,
            m.topk_groups).pairs
        add(f"experts activation ({act} · up)", "elementwise",
            _chain(max(1, round(pairs * i)), [{"op": act}, {"op": "mul", "inputs": ["up"]}],
                   s, "gate", "a"), count, group)
        add("experts down", "moe_gemm",
            {"tokens": tokens, "experts": m.experts, "top_k": m.top_k, "n": H, "k": i,
             "dtype": s.activations, **w, **local}, count, group)
        if exchange:
            add("combine (all-to-all)", "all_reduce",
                {"rows": math.ceil(T / t), "hidden": H, "chips": ep, "copies": m.top_k,
                 "dtype": s.activations, "collective": "all_to_all"}, count, group)
        if m.shared_intermediate:
            gated("shared expert ", m.shared_intermediate)
    _block_end(arch, s, add, group, count, "FFN")


#: Parameters multiplied by the layer count when a layer kind is shown as one point: every
#: kind's counts are linear in this parameter.
_SCALE_PARAM = {"gemm": "batch", "attention": "batch", "mla_attention": "batch",
                "norm": "layers", "elementwise": "n", "moe_gemm": "layers", "all_reduce": "rows",
                "softmax": "rows", "reduction": "rows"}


def scaled(op: Operation, factor: int) -> Operation:
    """``op`` repeated ``factor`` times as one operation (its FLOPs and bytes × factor)."""
    out = op.copy()
    if factor == 1:
        return out
    key = _SCALE_PARAM.get(op.kind)
    if key is None:
        raise ValueError(f"cannot aggregate {op.kind}")
    out.params[key] = out.params.get(key, 1) * factor
    return out


def expand(arch: Architecture, setup: Setup, view: str = "all") -> list[tuple[Step, Operation]]:
    """The operations to show: ``all`` gives every operation of every layer (named
    ``L3 QKV projection``), ``layers`` one per role and layer kind with FLOPs and bytes
    summed over its layers (named ``QKV projection ×32``)."""
    if view not in VIEWS:
        raise SetupError("view", f"must be one of {', '.join(VIEWS)}, got {view!r}")
    steps = layer_steps(arch, setup)
    out: list[tuple[Step, Operation]] = []
    if view == "layers":
        for step in steps:
            op = scaled(step.operation, step.count)
            op.name = _layer_name(step)
            out.append((step, op))
        return out
    # every layer, in order: model-level steps before and after the layers
    by_group: dict[str, list[Step]] = {}
    for step in steps:
        by_group.setdefault(step.group, []).append(step)
    head = [st for st in steps if st.group == "model" and st.role == "embedding gather"]
    tail = [st for st in steps if st.group == "model" and st.role != "embedding gather"]
    for step in head:
        out.append((step, _named(step.operation, step.role)))
    left = {group: group_steps[0].count for group, group_steps in by_group.items()}
    for index in range(arch.layers):
        group = arch.layer_group(index)
        if not left.get(group):
            continue  # (pipeline parallel: this chip's stage has no more of this kind)
        left[group] -= 1
        for step in by_group.get(group, ()):
            out.append((step, _named(step.operation, f"L{index} {step.role}")))
    for step in tail:
        out.append((step, _named(step.operation, step.role)))
    return out


def _named(op: Operation, name: str) -> Operation:
    out = op.copy()
    out.name = name
    return out


def _layer_name(step: Step) -> str:
    if step.group == "model":
        return step.role
    if step.group != "layer":
        return f"{step.role} ({step.group}s) ×{step.count}"
    return f"{step.role} ×{step.count}"


__all__ += ["scaled", "expected_experts"]
