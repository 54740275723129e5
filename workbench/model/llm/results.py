"""Model-level results of a whole model on a machine: totals, time (lower bound and predicted,
summed over its kernels), TTFT or TPOT, tokens per second, the share of time per operation
kind, and memory (weights + KV cache + activations) per chip against one chip's capacity.

No Qt. Every figure comes with the formula it was computed by (:func:`derivation`).
"""

from __future__ import annotations

import math
from dataclasses import field
from typing import Any

import numpy as np

from workbench.model.dtypes import DTYPE_BYTES
from workbench.model.hardware import Hardware, UnknownLevel, UnsupportedPrecision
from workbench.model.llm.architecture import Architecture, Setup, Step, layer_steps
from workbench.model.llm.kinds import busiest_chip, collective_steps, grouped
from workbench.model.operations import KINDS
from workbench.model.roofline import evaluate, sweep
from workbench.records import record

__all__ = ["ModelTotals", "MachineResult", "model_totals", "model_result", "derivation",
           "memory_needed", "max_batch", "per_sequence_bytes", "RequestResult",
           "request_result", "decode_times", "request_lines", "SweepPoint", "batch_sweep",
           "sweep_batches", "whole_model", "busiest_chip_data", "expert_read_bytes",
           "usable_capacity", "held_positions", "serving_positions", "kv_per_sequence",
           "stage_share",
           "prefill_activations", "speculation_lines"]


@record
class ModelTotals:
    """FLOPs and bytes of one forward pass and the memory it needs, all per chip: ``bytes``
    cross the chip's memory, ``interconnect_bytes`` its links (never added together)."""
    flops: float
    bytes: float
    weight_bytes: float
    kv_cache_bytes_per_token: float
    kv_cache_bytes: float
    activation_bytes: float
    operations: int
    interconnect_bytes: float = 0.0

    @property
    def memory_needed(self) -> float:
        return self.weight_bytes + self.kv_cache_bytes + self.activation_bytes


@record
class MachineResult:
    """The model on one machine (``skipped`` says why not, when it cannot run there)."""
    hardware: str
    t_lower_s: float = 0.0
    t_predicted_s: float = 0.0
    tokens_per_s: float = 0.0
    share: dict[str, float] = field(default_factory=dict)  # op kind label -> fraction of time
    memory_needed_bytes: float = 0.0
    memory_available_bytes: float | None = None
    fits: bool | None = None
    skipped: str = ""
    #: Link latency of the collectives (in t_lower_s and t_predicted_s), and its parts:
    #: (what, how many, steps formula, steps, seconds per step, where the latency is from).
    latency_s: float = 0.0
    latency_terms: list[tuple[str, int, str, int, float, str]] = field(default_factory=list)
    #: The most sequences a server keeps at once on one chip (:func:`max_batch`; None: no
    #: capacity). ``memory_available_bytes`` is the usable part of ``capacity_bytes``:
    #: capacity × memory utilisation − the runtime reserve.
    max_batch: int | None = None
    capacity_bytes: float | None = None
    reserve_bytes: float = 0.0
    reserve_source: str = ""
    #: Cost of a million tokens produced (the machine's price per chip-hour × chips over
    #: the tokens per second); None without a price.
    cost_per_million_tokens: float | None = None
    price_per_hour: float | None = None
    chips: int = 1
    #: The calibrated prediction's compute fraction in long runs (``None``: derated).
    sustained: float | None = None
    #: The machine's main-memory bandwidth (B/s).
    bandwidth: float = 0.0
    #: One forward pass's T_lower and predicted time; with speculative decoding a step
    #: yields ``tokens_per_step`` tokens per sequence and ``t_lower_s``, ``t_predicted_s``
    #: are per output token (the step's over tokens_per_step). Collective latency is per step.
    step_lower_s: float = 0.0
    step_s: float = 0.0
    tokens_per_step: float = 1.0

    def as_dict(self, phase: str) -> dict[str, Any]:
        key = "ttft_s" if phase == "prefill" else "tpot_s"
        return {"hardware": self.hardware, "t_lower_s": self.t_lower_s,
                "t_predicted_s": self.t_predicted_s, key: self.t_predicted_s,
                **({"step_s": self.step_s, "step_lower_s": self.step_lower_s,
                    "tokens_per_step": self.tokens_per_step}
                   if self.tokens_per_step != 1 else {}),
                "tokens_per_s": self.tokens_per_s,
                "memory_needed_bytes": self.memory_needed_bytes,
                "memory_available_bytes": self.memory_available_bytes,
                "capacity_bytes": self.capacity_bytes, "runtime_reserve_bytes":
                self.reserve_bytes if self.capacity_bytes else None, "fits": self.fits,
                "collective_latency_s": self.latency_s, "max_batch": self.max_batch,
                **({"cost_per_million_tokens": self.cost_per_million_tokens}
                   if self.cost_per_million_tokens is not None else {}),
                "time_share": self.share, **({"skipped": self.skipped} if self.skipped else {})}


def held_positions(setup: Setup, positions: int | None = None) -> int:
    """Positions one sequence's KV cache holds: the prompt (prefill) or kv_len (decode), or
    ``positions``; a whole request's prompt + output; in whole paged blocks of
    ``kv_block`` tokens."""
    held = setup.context if positions is None else positions
    if setup.output_len:  # a whole request: the cache ends holding prompt + output
        held = max(held, setup.prompt_len + setup.output_len)
    return math.ceil(held / setup.kv_block) * setup.kv_block


def memory_needed(arch: Architecture, setup: Setup, positions: int | None = None
                  ) -> tuple[float, float, float]:
    """Weights, KV cache and activation bytes one chip holds.

    Weights: see :meth:`Architecture.weight_bytes_per_chip`. KV cache: batch × positions
    held (:func:`held_positions`: whole blocks of ``kv_block`` tokens) × bytes per token, a
    local layer holding at most its window; under tensor parallelism each chip keeps its
    ⌈kv_heads/t⌉ heads (MLA's latent is shared by the heads: every chip keeps all of it).
    Activations: the largest live tensors of one layer, tokens × (hidden + widest
    projection output / t) in the activation dtype (a floor: frameworks hold more), for
    one chunk of ``prefill_chunk`` tokens (a server prefills in chunks, and keeps room for
    one whatever the step), or a decode step's tokens × (hidden + max(widest, vocabulary)/t)
    when that is more."""
    t = setup.tp
    weights = arch.weight_bytes_per_chip(setup.weights, setup.quantize_embeddings, t,
                                         setup.ep, setup.pp)
    held = held_positions(setup, positions)
    # attention's data-parallel share of the sequences; a stage keeps the cache of its
    # layers for every micro-batch in flight
    sequences = math.ceil(setup.batch / setup.dp)
    kv = sequences * kv_per_sequence(arch, setup, held)
    # a server keeps room for one prefill chunk's activations whatever the step; a decode
    # step of many sequences may need more (its logits)
    act = prefill_activations(arch, setup, setup.prefill_chunk)
    if setup.phase == "decode":
        act = max(act, setup.chip_batch * (arch.hidden + max(_widest(arch), arch.vocab) / t)
                  * DTYPE_BYTES[setup.activations])
    return weights, kv, act


def _widest(arch: Architecture) -> int:
    return 2 * (arch.moe.intermediate * arch.moe.top_k if arch.moe else arch.intermediate)


def prefill_activations(arch: Architecture, setup: Setup, tokens: int) -> float:
    """Activation bytes of ``tokens`` prefill tokens on one chip: tokens × (hidden + widest
    projection output / t) × s_a."""
    return tokens * (arch.hidden + _widest(arch) / setup.tp) * DTYPE_BYTES[setup.activations]


def kv_per_sequence(arch: Architecture, setup: Setup, held: int) -> float:
    """KV cache bytes one sequence of ``held`` positions keeps on one chip (its stage's
    layers, its ⌈kv_heads/t⌉ heads)."""
    return (arch.kv_cache_bytes(held, setup.kv_cache) * kv_share(arch, setup.tp)
            * stage_share(arch, setup))


def stage_share(arch: Architecture, setup: Setup) -> float:
    """The part of the layers one pipeline stage holds: ⌈layers/p⌉ of layers."""
    return math.ceil(arch.layers / setup.pp) / arch.layers if setup.pp > 1 else 1.0


def usable_capacity(hardware: Hardware, setup: Setup) -> float | None:
    """Bytes of one chip a server may fill: capacity × memory utilisation − the machine's
    runtime reserve (``None`` without a capacity)."""
    if not hardware.capacity:
        return None
    return hardware.capacity * setup.memory_utilization - hardware.reserve()[0]


def serving_positions(setup: Setup) -> int:
    """Positions each sequence of a server's batch holds, the same in prefill and decode:
    prompt + output of a request, else the prompt (prefill) or kv_len (decode); in whole
    KV blocks."""
    held = setup.kv_len if setup.phase == "decode" else setup.prompt_len
    return held_positions(setup, held)


def max_batch(arch: Architecture, setup: Setup, capacity: float | None) -> int:
    """The most sequences a server keeps decoding at once on ``capacity`` usable bytes per
    chip (:func:`usable_capacity`), in prefill and decode alike: weights and one prefill
    chunk's activations, then each sequence's KV cache at :func:`serving_positions` in
    whole blocks; a chip keeps the cache of ⌈b/dp⌉ sequences. 0 when not even one fits."""
    if not capacity:
        return 0
    decode = setup.with_(phase="decode", kv_len=serving_positions(setup), output_len=0)
    weights = arch.weight_bytes_per_chip(setup.weights, setup.quantize_embeddings, setup.tp,
                                         setup.ep, setup.pp)
    room = capacity - weights - prefill_activations(arch, setup, setup.prefill_chunk)
    per = per_sequence_bytes(arch, setup)
    if room < per or per <= 0:
        return 0
    b = int(room // per) * setup.dp

    def fits(n: int) -> bool:
        return sum(memory_needed(arch, decode.with_(batch=n))) <= capacity

    # (a decode step's logits may outgrow the chunk's room at very large batches: the
    # largest batch that fits is then found by halving, as the memory needed grows with the
    # batch; a short context on a large chip starts a quarter above it, 10⁵ sequences)
    if b > 0 and not fits(b):
        if not fits(1):
            return 0
        fitting, too_many = 1, b
        while too_many - fitting > 1:
            middle = (fitting + too_many) // 2
            fitting, too_many = (middle, too_many) if fits(middle) else (fitting, middle)
        b = fitting
    return b


def per_sequence_bytes(arch: Architecture, setup: Setup) -> float:
    """KV cache one more sequence adds (per chip), at :func:`serving_positions`."""
    return kv_per_sequence(arch, setup, serving_positions(setup))


def kv_share(arch: Architecture, tp: int) -> float:
    """The part of the KV cache one of ``tp`` chips keeps: ⌈kv_heads/t⌉ of kv_heads (all
    of MLA's shared latent)."""
    if arch.mla is not None or tp == 1:
        return 1.0
    return math.ceil(arch.kv_heads / tp) / arch.kv_heads


def _on_links(step: Step) -> bool:
    return KINDS[step.operation.kind].default_level == "interconnect" \
        and not step.operation.params.get("memory_level")


def model_totals(arch: Architecture, setup: Setup, steps: list[Step] | None = None
                 ) -> ModelTotals:
    steps = steps if steps is not None else layer_steps(arch, setup)
    flops = nbytes = links = 0.0
    for step in steps:
        counts = step.operation.counts()
        flops += float(counts.flops) * step.count
        if _on_links(step):
            links += float(counts.bytes) * step.count
        else:
            nbytes += float(counts.bytes) * step.count
    weights, kv, act = memory_needed(arch, setup)
    per_token = (arch.kv_cache_bytes_per_token(setup.kv_cache) * kv_share(arch, setup.tp)
                 * stage_share(arch, setup))
    return ModelTotals(flops, nbytes, weights, per_token, kv, act,
                       sum(step.count for step in steps), links)


def model_result(arch: Architecture, setup: Setup, hardware: Hardware,
                 steps: list[Step] | None = None) -> MachineResult:
    """Sum each kernel's roofline time on ``hardware`` (each operation of a layer kind is
    evaluated once and multiplied by its layer count: the layers are identical)."""
    steps = steps if steps is not None else layer_steps(arch, setup)
    hardware = whole_model(hardware)
    out = MachineResult(hardware.label)
    out.bandwidth = hardware.bandwidth() if hardware.memory else 0.0
    weights, kv, act = memory_needed(arch, setup)
    out.memory_needed_bytes = weights + kv + act
    available = usable_capacity(hardware, setup)  # None without a capacity
    if available is not None:
        out.capacity_bytes = hardware.capacity
        out.reserve_bytes, out.reserve_source = hardware.reserve()
        out.memory_available_bytes = available
        out.fits = out.memory_needed_bytes <= available
        out.max_batch = max_batch(arch, setup, available)
    by_kind: dict[str, float] = {}
    latency: dict[tuple, int] = {}
    try:
        for step in steps:
            op = step.operation
            r = evaluate(op, hardware)
            if r.calibrated is not None and out.sustained is None:
                from workbench.model.prediction import calibration_of

                out.sustained = calibration_of(hardware).sustained
            out.t_lower_s += r.t_lower_s * step.count
            t = sustained_time(r, hardware) * step.count
            collective = collective_steps(op.kind, op.params)
            if collective is not None and r.latency_s:  # (in r's times: listed here)
                n, text = collective
                alpha, source = hardware.latency_of(r.level)
                key = (collective_name(op.params), text, n, alpha, source)
                latency[key] = latency.get(key, 0) + step.count
            out.t_predicted_s += t
            label = KINDS[op.kind].label
            by_kind[label] = by_kind.get(label, 0.0) + t
    except (UnknownLevel, UnsupportedPrecision) as exc:
        # (what the model needs of the chip's memory and what the chip holds do not depend
        # on its roofs: the capacity the usable memory is a part of is said with it)
        return MachineResult(hardware.label, memory_needed_bytes=out.memory_needed_bytes,
                             memory_available_bytes=out.memory_available_bytes, fits=out.fits,
                             capacity_bytes=out.capacity_bytes, reserve_bytes=out.reserve_bytes,
                             reserve_source=out.reserve_source, max_batch=out.max_batch,
                             skipped=str(exc))
    if setup.pp > 1:
        # pp stages in flight: a token passes every stage, each as long as this chip's
        out.t_lower_s *= setup.pp
        out.t_predicted_s *= setup.pp
        by_kind = {k: v * setup.pp for k, v in by_kind.items()}
        latency = {key: count * setup.pp for key, count in latency.items()}
    out.step_lower_s, out.step_s = out.t_lower_s, out.t_predicted_s
    if setup.phase == "decode" and setup.draft_tokens:
        # speculative decoding: a step yields tokens_per_step tokens per sequence
        out.tokens_per_step = setup.tokens_per_step
        out.t_lower_s /= out.tokens_per_step
        out.t_predicted_s /= out.tokens_per_step
    out.latency_terms = [(what, count, text, n, alpha, source)
                         for (what, text, n, alpha, source), count in latency.items()]
    out.latency_s = sum(count * n * alpha for _, count, _, n, alpha, _ in out.latency_terms)
    total = out.t_predicted_s
    out.share = {k: v / out.step_s for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])} \
        if out.step_s > 0 else {}
    produced = setup.tokens if setup.phase == "prefill" else setup.batch
    out.tokens_per_s = produced / total if total > 0 else 0.0
    out.chips = setup.chips
    if hardware.price_per_hour is not None and out.tokens_per_s > 0:
        out.price_per_hour = hardware.price_per_hour
        out.cost_per_million_tokens = cost_per_million(hardware.price_per_hour, setup.chips,
                                                       out.tokens_per_s)
    return out


def whole_model(hardware: Hardware) -> Hardware:
    """``hardware`` as a whole model's kernels run on it: ``auto`` launches are replayed from
    a CUDA graph (:func:`workbench.model.prediction.model_launches`)."""
    from workbench.model.prediction import model_launches

    launches = model_launches(hardware.launches)
    return hardware if launches == hardware.launches else hardware.copy(launches=launches)


_COLLECTIVE_NAMES = {"all_reduce": "all-reduce", "all_to_all": "all-to-all",
                     "send": "stage send", "all_gather": "logits all-gather"}
_ALGORITHM_NAMES = {"ring": "ring", "one_shot": "one-shot", "tree": "tree"}


def collective_name(params: dict) -> str:
    """``all-reduce (one-shot)``, ``all-to-all``, …: a collective and its algorithm."""
    from workbench.model.llm.kinds import algorithm_of

    collective = params.get("collective", "all_reduce")
    name = _COLLECTIVE_NAMES.get(collective, collective)
    if collective == "all_reduce":
        full = KINDS["all_reduce"].resolve(params)
        name += f" ({_ALGORITHM_NAMES[algorithm_of(full)]})"
    return name


def cost_per_million(price_per_hour: float, chips: int, tokens_per_s: float) -> float:
    """price per chip-hour × chips / 3600 s per hour / tokens per second × 10⁶."""
    return price_per_hour * chips / 3600 / tokens_per_s * 1e6


def sustained_time(result, hardware: Hardware) -> float:
    """A kernel's predicted time inside a whole forward pass: with the calibrated prediction,
    compute-bound work runs at the machine's ``sustained`` fraction of its roof (compute-bound
    kernels back to back for many milliseconds run at a lower clock under the power limit)."""
    if result.calibrated is None or result.bound != "compute":
        return result.t_predicted_s
    from workbench.model.prediction import calibration_of

    sustained = calibration_of(hardware).sustained
    if sustained >= 1:
        return result.t_predicted_s
    return result.t_predicted_s + result.t_work_s * (1 / sustained - 1)


def _si(value: float, unit: str) -> str:
    from workbench.model.units import format_quantity

    return format_quantity(value, unit)


def _kv_line(arch: Architecture, s: Setup, totals: ModelTotals) -> tuple[str, str]:
    """The KV cache one chip holds: its ⌈batch/dp⌉ sequences, each at the positions it
    holds (whole blocks of kv_block), times the bytes per position on this chip."""
    held = held_positions(s)
    seqs, seqs_value = (("⌈batch/dp⌉", f"⌈{s.batch}/{s.dp}⌉") if s.dp > 1
                        else ("batch", f"{s.batch}"))
    positions = ("positions" if held == s.context
                 else f"positions held (in blocks of {s.kv_block})")
    local = sum(arch.is_local_layer(i) for i in range(arch.layers))
    if local and arch.sliding_window < held:
        per = arch.kv_bytes_per_layer_token(s.kv_cache) * kv_share(arch, s.tp)
        stage, stage_value = (("·⌈layers/p⌉/layers",
                               f"·{math.ceil(arch.layers / s.pp)}/{arch.layers}")
                              if s.pp > 1 else ("", ""))
        return ("KV cache", f"{seqs}·(global layers·{positions} + local layers·window)·per "
                            f"layer and token{stage} = {seqs_value}·({arch.layers - local}·"
                            f"{held} + {local}·{arch.sliding_window})·{per:,.0f}{stage_value}"
                            f" = {_si(totals.kv_cache_bytes, 'bytes')}")
    return ("KV cache", f"{seqs}·{positions}·per token = {seqs_value}·{held}·"
                        f"{totals.kv_cache_bytes_per_token:,.0f} = "
                        f"{_si(totals.kv_cache_bytes, 'bytes')}")


def derivation(arch: Architecture, setup: Setup, totals: ModelTotals,
               results: list[MachineResult]) -> list[tuple[str, str]]:
    """``(label, formula with values)`` lines explaining every model-level figure."""
    s = setup
    # a pipeline stage keeps the cache of its own layers
    layers, layers_value, per_chip = (("⌈layers/p⌉", f"{math.ceil(arch.layers / s.pp)}",
                                       " (per chip)") if s.pp > 1
                                      else ("layers", f"{arch.layers}", ""))
    lines: list[tuple[str, str]] = [
        ("params", f"every weight tensor = {arch.params:,}"),
        ("active params", f"params − unselected routed experts − input embedding table = "
                          f"{arch.active_params:,}"),
        ("tokens", f"batch × prompt_len = {s.batch} × {s.prompt_len} = {s.tokens:,}"
         if s.phase == "prefill" else f"batch = {s.batch} (one new token each, kv_len "
                                      f"{s.kv_len:,})"),
        ("FLOPs (per chip)", f"Σ operations × layers = {totals.flops:.4g}"),
        ("bytes (per chip)", f"Σ operations × layers, memory only = {totals.bytes:.4g}"),
        *([("interconnect bytes (per chip)", f"Σ collectives × layers, on the links = "
                                             f"{totals.interconnect_bytes:.4g}")]
          if totals.interconnect_bytes else []),
        ("weights (per chip)", (
            "(params − embeddings)·s_w + embeddings·s_emb = "
            if s.chips == 1 else
            "embeddings·s_emb/t + ((params − embeddings − replicated − routed experts)/t + "
            "replicated + routed experts·⌈E/e⌉/E/(max(t, e)/e)"
            + (" + K/V projections·(1/kv_heads − 1/t), a whole KV head on each chip"
               if arch.mla is None and s.tp > arch.kv_heads else "") + ")·s_w"
            + (", × ⌈layers/p⌉/layers, one embedding table" if s.pp > 1 else "")
            + " = ") + _si(totals.weight_bytes, 'bytes')),
        ("KV cache / token", (
            f"{layers}·(kv_lora_rank + rope_dim)·s_kv{per_chip} = {layers_value}·"
            f"({arch.mla.kv_lora_rank}+{arch.mla.qk_rope_head_dim})·"
            f"{DTYPE_BYTES[s.kv_cache]:g} = {totals.kv_cache_bytes_per_token:,.0f} B"
            if arch.mla is not None else
            f"2·{layers}·kv_heads·head_dim·s_kv{per_chip} = 2·{layers_value}·{arch.kv_heads}·"
            f"{arch.head_dim}·{DTYPE_BYTES[s.kv_cache]:g} = "
            f"{totals.kv_cache_bytes_per_token:,.0f} B"
            if s.tp == 1 else
            f"2·{layers}·⌈kv_heads/t⌉·head_dim·s_kv (per chip) = 2·{layers_value}·"
            f"{math.ceil(arch.kv_heads / s.tp)}·{arch.head_dim}·{DTYPE_BYTES[s.kv_cache]:g} = "
            f"{totals.kv_cache_bytes_per_token:,.0f} B")),
        _kv_line(arch, s, totals),
        ("activations", f"max(prefill chunk of {s.prefill_chunk:,} tokens·(hidden + widest "
                        f"output/t), decode tokens·(hidden + max(widest, vocabulary)/t))·s_a ≈ "
                        f"{_si(totals.activation_bytes, 'bytes')}"
                        if s.phase == "decode" else
                        f"prefill chunk of {s.prefill_chunk:,} tokens·(hidden + widest "
                        f"output/t)·s_a ≈ {_si(totals.activation_bytes, 'bytes')}"),
        ("memory needed (per chip)", f"weights + KV cache + activations = "
                                     f"{_si(totals.memory_needed, 'bytes')}"),
    ]
    busiest = _busiest_lines(arch, s)
    lines += busiest
    warning = arch.context_warning(max(s.context, s.prompt_len + s.output_len))
    if warning:
        lines.insert(0, ("warning", warning))
    what = "TTFT" if s.phase == "prefill" else "TPOT"
    for r in results:
        if r.skipped:
            lines.append((r.hardware, f"skipped: {r.skipped}"))
            continue
        if busiest and r.bandwidth:
            read = expert_read_bytes(arch, s)
            lines.append((f"{r.hardware}: busiest chip's expert read",
                          f"bytes / bandwidth = {_si(read, 'bytes')} / "
                          f"{_si(r.bandwidth, 'bandwidth')} = {_si(read / r.bandwidth, 'time')}"
                          ", in T_lower"))
        for what_, count, text, n, alpha, source in r.latency_terms:
            lines.append((f"{r.hardware}: {what_} latency",
                          f"count·steps·α = {count}·{text}·{alpha * 1e6:g} µs ({source}) = "
                          f"{_si(count * n * alpha, 'time')}"))
        lines.append((f"{r.hardware}: T_lower", (
            "Σ max(T_math, T_mem) over kernels + collective latency = "
            if r.latency_terms else "Σ max(T_math, T_mem) over kernels = ")
            + _si(r.t_lower_s, 'time')))
        if r.sustained is not None:
            lines.append((f"{r.hardware}: {what}",
                          f"Σ (T_fixed + T_work) over kernels, compute-bound work at "
                          f"{r.sustained:g} of its roof (sustained) = "
                          f"{_si(r.t_predicted_s, 'time')}"))
        else:
            lines.append((f"{r.hardware}: {what}", f"Σ max(T_lower/efficiency, launch overhead) = "
                                                   f"{_si(r.t_predicted_s, 'time')}"))
        if r.tokens_per_step != 1:
            lines += speculation_lines(s, r)
        produced = "batch × prompt_len" if s.phase == "prefill" else "batch"
        lines.append((f"{r.hardware}: tokens/s", f"{produced} / {what} = {r.tokens_per_s:,.1f}"))
        if r.cost_per_million_tokens is not None:
            lines.append((f"{r.hardware}: cost per million tokens",
                          f"price per chip-hour · chips / 3600 / tokens/s · 10⁶ = "
                          f"{r.price_per_hour:g} · {r.chips} / 3600 / {r.tokens_per_s:,.1f} · "
                          f"10⁶ = {r.cost_per_million_tokens:,.4g}"))
        if r.memory_available_bytes is not None:
            lines += memory_lines(arch, s, r)
    return lines


def speculation_lines(s: Setup, r: MachineResult) -> list[tuple[str, str]]:
    """Speculative decoding: the verify width, the tokens a step yields, TPOT, tokens/s."""
    k, a = s.draft_tokens, s.acceptance
    hw = r.hardware
    return [
        (f"{hw}: speculative decoding",
         f"verify width k + 1 = {k + 1}; expected tokens per step (1 − a^(k+1))/(1 − a) = "
         f"(1 − {a:g}^{k + 1})/(1 − {a:g}) = {r.tokens_per_step:.3g} (the draft's own cost not "
         "counted)"),
        (f"{hw}: TPOT (speculative)",
         f"step / tokens per step = {_si(r.step_s, 'time')} / {r.tokens_per_step:.3g} = "
         f"{_si(r.t_predicted_s, 'time')} (T_lower {_si(r.step_lower_s, 'time')} / "
         f"{r.tokens_per_step:.3g} = {_si(r.t_lower_s, 'time')})"),
    ]


def memory_lines(arch: Architecture, s: Setup, r: MachineResult) -> list[tuple[str, str]]:
    """How much of a chip a server may use, the most sequences it holds, and the fit."""
    from workbench.model.units import format_capacity

    hw = r.hardware
    capacity, available = r.capacity_bytes, r.memory_available_bytes
    if capacity is None or available is None:  # a machine without a capacity
        return []
    reserve = "runtime reserve" + (" (default)" if r.reserve_source == "default" else "")
    weights = arch.weight_bytes_per_chip(s.weights, s.quantize_embeddings, s.tp, s.ep, s.pp)
    chunk = prefill_activations(arch, s, s.prefill_chunk)
    positions = serving_positions(s)
    verdict = "fits" if r.fits else "does not fit"
    return [
        (f"{hw}: usable memory",
         f"capacity × memory utilisation − {reserve} = {format_capacity(capacity)} × "
         f"{s.memory_utilization:g} − {format_capacity(r.reserve_bytes)} = "
         f"{format_capacity(available)}"),
        (f"{hw}: max batch",
         f"⌊(usable − weights − activations of a {s.prefill_chunk:,}-token prefill chunk) / KV "
         f"cache per sequence ({positions:,} positions in blocks of {s.kv_block})⌋"
         + (f" · dp {s.dp}" if s.dp > 1 else "")
         + f" = ⌊({_si(available, 'bytes')} − {_si(weights, 'bytes')} − "
           f"{_si(chunk, 'bytes')}) / {_si(per_sequence_bytes(arch, s), 'bytes')}⌋"
         + (f" · {s.dp}" if s.dp > 1 else "") + f" = {r.max_batch:,} (prefill and decode "
                                                  "alike)"),
        (f"{hw}: memory", f"{_si(r.memory_needed_bytes, 'bytes')} per chip vs usable "
                          f"{_si(available, 'bytes')}: {verdict}"),
    ]


def _moe_load(arch: Architecture, s: Setup):
    """The busiest chip of expert parallelism in one MoE layer, and its experts' width."""
    m = arch.moe
    if m is None:
        raise ValueError(f"{arch.name} has no mixture of experts")
    tokens = math.ceil(s.batch / s.pp) * (s.tokens // s.batch)
    local = math.ceil(m.experts / s.ep)
    width = max(1, math.ceil(m.intermediate / max(1, s.group // s.ep)))
    load = busiest_chip(tokens, m.experts, m.top_k, local, s.imbalance, m.groups, m.topk_groups)
    return load, tokens, local, width


def expert_read_bytes(arch: Architecture, s: Setup) -> float:
    """Routed-expert weights the busiest chip reads in one forward pass: MoE layers of its
    stage × D_max experts × 3 matrices (gate, up, down) × hidden × width × s_w."""
    load, _tokens, _local, width = _moe_load(arch, s)
    layers = math.ceil(arch.moe_layers / s.pp)
    return layers * load.hit * 3 * arch.hidden * width * DTYPE_BYTES[s.weights]


def busiest_chip_data(arch: Architecture, s: Setup) -> dict[str, float] | None:
    """Expert parallelism's busiest chip as plain numbers (``None`` without it): experts
    hit and token-expert pairs per MoE layer, on average and on the busiest chip, and the
    routed-expert bytes it reads in one forward pass."""
    if arch.moe is None or s.ep < 2:
        return None
    load, _tokens, local, _width = _moe_load(arch, s)
    return {"local_experts": local, "experts_hit_mean": load.mean_hit,
            "experts_hit": load.hit, "pairs_mean": load.mean_pairs, "pairs": load.pairs,
            "imbalance": load.imbalance, "expert_read_bytes": expert_read_bytes(arch, s)}


def _busiest_lines(arch: Architecture, s: Setup) -> list[tuple[str, str]]:
    """Derivation lines of expert parallelism's busiest chip (none without it)."""
    if arch.moe is None or s.ep < 2:
        return []
    m = arch.moe
    load, tokens, local, width = _moe_load(arch, s)
    chips = math.ceil(m.experts / local)
    skew = f", × imbalance {load.imbalance:g}" if load.imbalance != 1 else ""
    if grouped(m.experts, local, m.groups, m.topk_groups):
        skew = f", each token's experts in {m.topk_groups} of {m.groups} groups" + skew
    layers = math.ceil(arch.moe_layers / s.pp)
    return [
        ("experts hit per chip (EP)",
         f"average E_c·(1 − (1 − k/E)^T) = {local}·(1 − (1 − {m.top_k}/{m.experts})^{tokens})"
         f" = {load.mean_hit:.3g}; busiest chip D_max = {load.hit:.3g} of {local} (expected "
         f"maximum over {chips} chips{skew}); a chip that hosts a hit expert reads all of it"),
        ("busiest chip's load (EP)",
         f"token-expert pairs: average T·k·E_c/E = {tokens}·{m.top_k}·{local}/{m.experts} = "
         f"{load.mean_pairs:.3g}; busiest chip P_max = {load.pairs:.3g} (expected maximum over "
         f"{chips} chips of Binomial(T·k, E_c/E){skew})"),
        ("busiest chip's expert read (EP)",
         f"MoE layers·D_max·3·hidden·width·s_w = {layers}·{load.hit:.3g}·3·{arch.hidden}·{width}·"
         f"{DTYPE_BYTES[s.weights]:g} = {_si(expert_read_bytes(arch, s), 'bytes')}"),
    ]


# ---------------------------------------------------------------------------------------
# a request end to end


def _kv_dependent(step: Step) -> bool:
    return step.operation.kind in ("attention", "mla_attention") and step.group != "model"


def decode_times(arch: Architecture, setup: Setup, hardware: Hardware, kv_lens,
                 steps: list[Step] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """T_lower and predicted time of one decode step at each KV length of ``kv_lens`` (an
    array), summed over the kernels like :func:`model_result`: only attention depends on
    the KV length, and it is evaluated once for all of them (a sweep). A local layer's
    attention at k positions is the same as a global one's at min(k, window). The predicted
    time grows at least as T_lower does from the shortest cache on: a launch floor that
    hides a short kernel does not hide the cache's growth."""
    ks = np.asarray(kv_lens, dtype=float)
    hardware = whole_model(hardware)
    decode = setup.with_(phase="decode", kv_len=int(ks.max()) if ks.size else setup.kv_len)
    steps = steps if steps is not None else layer_steps(arch, decode)
    fixed = [st for st in steps if not _kv_dependent(st)]
    lower = np.zeros_like(ks)
    pred = np.zeros_like(ks)
    const = model_result(arch, decode, hardware, fixed)
    if const.skipped:
        raise UnknownLevel(const.skipped)
    lower += const.t_lower_s
    pred += const.t_predicted_s
    for st in steps:
        if not _kv_dependent(st):
            continue
        op = st.operation.copy()
        window = op.params.pop("window", 0) or 0
        k = np.minimum(ks, window) if window else ks
        r = sweep(op, hardware, kv_len=k)
        per_token = st.count * setup.pp / const.tokens_per_step
        lower += np.asarray(r["t_lower_s"], dtype=float) * per_token
        pred += np.asarray(r["t_predicted_s"], dtype=float) * per_token
    if ks.size:  # a launch floor met at the shortest cache hides none of its growth
        first = int(np.argmin(ks))
        pred = np.maximum(pred, pred[first] + (lower - lower[first]))
    return lower, pred


@record
class RequestResult:
    """One request of ``output_len`` tokens after its prompt, for every sequence of the
    batch: TTFT (the prefill), then one decode step per output token with the KV cache
    growing from the prompt length."""
    hardware: str
    output_len: int
    ttft_s: float = 0.0
    decode_s: float = 0.0
    decode_lower_s: float = 0.0
    tpot_first_s: float = 0.0
    tpot_last_s: float = 0.0
    ttft_lower_s: float = 0.0
    tpot_first_lower_s: float = 0.0
    tpot_last_lower_s: float = 0.0
    chips: int = 1
    batch: int = 1
    skipped: str = ""
    price_per_hour: float | None = None

    @property
    def cost_per_million_tokens(self) -> float | None:
        """Cost of a million output tokens at the request's throughput (all its chips)."""
        if self.price_per_hour is None or self.output_tokens_per_s <= 0:
            return None
        return cost_per_million(self.price_per_hour, self.chips,
                                self.batch * self.output_tokens_per_s)

    @property
    def request_s(self) -> float:
        return self.ttft_s + self.decode_s

    @property
    def request_lower_s(self) -> float:
        """The request's lower bound: T_lower of the prefill and of every decode step."""
        return self.ttft_lower_s + self.decode_lower_s

    @property
    def tpot_mean_lower_s(self) -> float:
        return self.decode_lower_s / self.output_len if self.output_len else 0.0

    @property
    def tpot_mean_s(self) -> float:
        return self.decode_s / self.output_len if self.output_len else 0.0

    @property
    def output_tokens_per_s(self) -> float:
        """Per user: output tokens over the whole request's time (TTFT included)."""
        return self.output_len / self.request_s if self.request_s > 0 else 0.0

    @property
    def output_tokens_per_s_per_chip(self) -> float:
        return self.batch * self.output_tokens_per_s / self.chips

    def as_dict(self) -> dict[str, Any]:
        return {"output_len": self.output_len, "ttft_s": self.ttft_s,
                "ttft_lower_s": self.ttft_lower_s, "decode_s": self.decode_s,
                "decode_lower_s": self.decode_lower_s, "request_s": self.request_s,
                "request_lower_s": self.request_lower_s,
                "tpot_mean_s": self.tpot_mean_s, "tpot_mean_lower_s": self.tpot_mean_lower_s,
                "tpot_first_s": self.tpot_first_s, "tpot_first_lower_s":
                self.tpot_first_lower_s, "tpot_last_s": self.tpot_last_s,
                "tpot_last_lower_s": self.tpot_last_lower_s,
                "output_tokens_per_s": self.output_tokens_per_s,
                "output_tokens_per_s_per_chip": self.output_tokens_per_s_per_chip,
                **({"cost_per_million_tokens": self.cost_per_million_tokens}
                   if self.cost_per_million_tokens is not None else {})}


def request_result(arch: Architecture, setup: Setup, hardware: Hardware, output_len: int,
                   ttft: MachineResult | None = None) -> RequestResult:
    """TTFT of batch × prompt_len, then ``output_len`` decode steps, step i (from 1) against
    a KV cache of prompt_len + i positions."""
    out = RequestResult(hardware.label, output_len, chips=setup.chips, batch=setup.batch,
                        price_per_hour=hardware.price_per_hour)
    prefill = setup.with_(phase="prefill")
    first = ttft if ttft is not None else model_result(arch, prefill, hardware)
    if first.skipped:
        out.skipped = first.skipped
        return out
    out.ttft_s = first.t_predicted_s
    out.ttft_lower_s = first.t_lower_s
    if output_len:
        ks = setup.prompt_len + np.arange(1, output_len + 1)
        try:
            lower, pred = decode_times(arch, setup, hardware, ks)
        except (UnknownLevel, UnsupportedPrecision) as exc:
            out.skipped = str(exc)
            return out
        out.decode_s = float(pred.sum())
        out.decode_lower_s = float(lower.sum())
        out.tpot_first_s, out.tpot_last_s = float(pred[0]), float(pred[-1])
        out.tpot_first_lower_s, out.tpot_last_lower_s = float(lower[0]), float(lower[-1])
    return out


def request_lines(setup: Setup, requests: list[RequestResult]) -> list[tuple[str, str]]:
    """Derivation lines of a request on each machine."""
    lines = []
    n, p = (requests[0].output_len if requests else 0), setup.prompt_len
    for r in requests:
        if r.skipped:
            continue
        hw = r.hardware
        lines.append((f"{hw}: request",
                      f"TTFT + Σ TPOT(prompt_len + i) for i from 1 to {n} = "
                      f"{_si(r.ttft_s, 'time')} + {_si(r.decode_s, 'time')} = "
                      f"{_si(r.request_s, 'time')}"))
        lines.append((f"{hw}: request lower bound",
                      f"T_lower(prefill) + Σ T_lower(step i) = {_si(r.ttft_lower_s, 'time')} + "
                      f"{_si(r.decode_lower_s, 'time')} = {_si(r.request_lower_s, 'time')}"))
        lines.append((f"{hw}: TPOT over the request",
                      f"from {_si(r.tpot_first_s, 'time')} at kv_len {p + 1:,} to "
                      f"{_si(r.tpot_last_s, 'time')} at {p + n:,}, mean "
                      f"{_si(r.tpot_mean_s, 'time')} (T_lower from "
                      f"{_si(r.tpot_first_lower_s, 'time')} to "
                      f"{_si(r.tpot_last_lower_s, 'time')}, mean "
                      f"{_si(r.tpot_mean_lower_s, 'time')})"))
        lines.append((f"{hw}: output tokens/s per user",
                      f"output_len / request = {n} / {_si(r.request_s, 'time')} = "
                      f"{r.output_tokens_per_s:,.1f}"))
        lines.append((f"{hw}: output tokens/s per chip",
                      f"batch · per user / chips = {r.batch} · {r.output_tokens_per_s:,.1f} / "
                      f"{r.chips} = {r.output_tokens_per_s_per_chip:,.1f}"))
        if r.cost_per_million_tokens is not None:
            lines.append((f"{hw}: cost per million output tokens",
                          f"price per chip-hour · chips / 3600 / (batch · per user) · 10⁶ = "
                          f"{r.price_per_hour:g} · {r.chips} / 3600 / ({r.batch} · "
                          f"{r.output_tokens_per_s:,.1f}) · 10⁶ = "
                          f"{r.cost_per_million_tokens:,.4g}"))
    return lines


# ---------------------------------------------------------------------------------------
# throughput against latency: a batch sweep


@record
class SweepPoint:
    """One batch size of a sweep: the time per output token and the output tokens per
    second per chip and per user."""
    batch: int
    tpot_s: float
    tokens_per_s_per_chip: float
    tokens_per_s_per_user: float

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def sweep_batches(largest: int) -> list[int]:
    """1, 2, 4, … below ``largest``, then ``largest`` itself."""
    out, b = [], 1
    while b < largest:
        out.append(b)
        b *= 2
    if largest >= 1:
        out.append(largest)
    return out


def batch_sweep(arch: Architecture, setup: Setup, hardware: Hardware,
                batches: list[int] | None = None) -> list[SweepPoint]:
    """Decode at each batch (default: 1 … the largest that fits one chip): TPOT is the mean
    over the request's output tokens when ``setup.output_len`` is set (the KV cache growing
    from the prompt length), else one step at kv_len. Empty when nothing fits or the
    machine cannot run the model."""
    decode = setup.with_(phase="decode")
    if batches is None:
        if not hardware.capacity:
            return []
        batches = sweep_batches(max_batch(arch, decode, usable_capacity(hardware, decode)))
    if setup.output_len:
        ks = setup.prompt_len + np.arange(1, setup.output_len + 1)
    else:
        ks = np.array([decode.kv_len])
    out = []
    for b in batches:
        try:
            _, pred = decode_times(arch, decode.with_(batch=b), hardware, ks)
        except (UnknownLevel, UnsupportedPrecision):
            return []
        tpot = float(pred.mean())
        out.append(SweepPoint(b, tpot, b / tpot / setup.chips, 1 / tpot))
    return out
