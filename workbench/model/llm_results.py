"""Model-level results of a whole model on a machine: totals, time (lower bound and predicted,
summed over its kernels), TTFT or TPOT, tokens per second, the share of time per operation
kind, and memory (weights + KV cache + activations) against capacity × t.

No Qt. Every figure comes with the formula it was computed by (:func:`derivation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.model.dtypes import DTYPE_BYTES
from workbench.model.hardware import Hardware, UnknownLevel, UnsupportedPrecision
from workbench.model.llm import Architecture, Setup, Step, layer_steps
from workbench.model.operations import KINDS
from workbench.model.roofline import evaluate

__all__ = ["ModelTotals", "MachineResult", "model_totals", "model_result", "derivation",
           "memory_needed"]


@dataclass
class ModelTotals:
    """FLOPs and bytes of one forward pass (per chip), and the model's figures."""
    flops: float
    bytes: float
    weight_bytes: float
    kv_cache_bytes_per_token: float
    kv_cache_bytes: float
    activation_bytes: float
    operations: int

    @property
    def memory_needed(self) -> float:
        return self.weight_bytes + self.kv_cache_bytes + self.activation_bytes


@dataclass
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
    #: The calibrated prediction's compute fraction in long runs (``None``: derated).
    sustained: float | None = None

    def as_dict(self, phase: str) -> dict[str, Any]:
        key = "ttft_s" if phase == "prefill" else "tpot_s"
        return {"hardware": self.hardware, "t_lower_s": self.t_lower_s,
                "t_predicted_s": self.t_predicted_s, key: self.t_predicted_s,
                "tokens_per_s": self.tokens_per_s,
                "memory_needed_bytes": self.memory_needed_bytes,
                "memory_available_bytes": self.memory_available_bytes, "fits": self.fits,
                "time_share": self.share, **({"skipped": self.skipped} if self.skipped else {})}


def memory_needed(arch: Architecture, setup: Setup) -> tuple[float, float, float]:
    """Weights, KV cache and activation bytes of the whole model (all chips together).

    KV cache: batch × positions held (prompt_len in prefill, kv_len in decode) × bytes per
    token. Activations: the largest live tensors of one layer, tokens × (hidden + widest
    projection output) in the activation dtype (a floor: frameworks hold more)."""
    weights = arch.weight_bytes(setup.weights, setup.quantize_embeddings)
    kv = setup.batch * setup.context * arch.kv_cache_bytes_per_token(setup.kv_cache)
    wide = 2 * (arch.moe.intermediate * arch.moe.top_k if arch.moe else arch.intermediate)
    act = setup.tokens * (arch.hidden + max(wide, arch.vocab if setup.phase == "decode" else 0))
    return weights, kv, act * DTYPE_BYTES[setup.activations]


def model_totals(arch: Architecture, setup: Setup, steps: list[Step] | None = None
                 ) -> ModelTotals:
    steps = steps if steps is not None else layer_steps(arch, setup)
    flops = nbytes = 0.0
    for step in steps:
        counts = step.operation.counts()
        flops += float(counts.flops) * step.count
        nbytes += float(counts.bytes) * step.count
    weights, kv, act = memory_needed(arch, setup)
    return ModelTotals(flops, nbytes, weights, arch.kv_cache_bytes_per_token(setup.kv_cache),
                       kv, act, sum(step.count for step in steps))


def model_result(arch: Architecture, setup: Setup, hardware: Hardware,
                 steps: list[Step] | None = None) -> MachineResult:
    """Sum each kernel's roofline time on ``hardware`` (each operation of a layer kind is
    evaluated once and multiplied by its layer count: the layers are identical)."""
    steps = steps if steps is not None else layer_steps(arch, setup)
    out = MachineResult(hardware.label)
    weights, kv, act = memory_needed(arch, setup)
    out.memory_needed_bytes = weights + kv + act
    if hardware.capacity:
        out.memory_available_bytes = hardware.capacity * setup.tp
        out.fits = out.memory_needed_bytes <= out.memory_available_bytes
    by_kind: dict[str, float] = {}
    try:
        for step in steps:
            r = evaluate(step.operation, hardware)
            if r.calibrated is not None and out.sustained is None:
                from workbench.model.prediction import calibration_of

                out.sustained = calibration_of(hardware).sustained
            out.t_lower_s += r.t_lower_s * step.count
            t = sustained_time(r, hardware) * step.count
            out.t_predicted_s += t
            label = KINDS[step.operation.kind].label
            by_kind[label] = by_kind.get(label, 0.0) + t
    except (UnknownLevel, UnsupportedPrecision) as exc:
        return MachineResult(hardware.label, memory_needed_bytes=out.memory_needed_bytes,
                             memory_available_bytes=out.memory_available_bytes, fits=out.fits,
                             skipped=str(exc))
    total = out.t_predicted_s
    out.share = {k: v / total for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])} \
        if total > 0 else {}
    produced = setup.tokens if setup.phase == "prefill" else setup.batch
    out.tokens_per_s = produced / total if total > 0 else 0.0
    return out


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


def derivation(arch: Architecture, setup: Setup, totals: ModelTotals,
               results: list[MachineResult]) -> list[tuple[str, str]]:
    """``(label, formula with values)`` lines explaining every model-level figure."""
    s = setup
    lines: list[tuple[str, str]] = [
        ("params", f"every weight tensor = {arch.params:,}"),
        ("active params", f"params − unselected routed experts − input embedding table = "
                          f"{arch.active_params:,}"),
        ("tokens", f"batch × prompt_len = {s.batch} × {s.prompt_len} = {s.tokens:,}"
         if s.phase == "prefill" else f"batch = {s.batch} (one new token each, kv_len "
                                      f"{s.kv_len:,})"),
        ("FLOPs (per chip)", f"Σ operations × layers = {totals.flops:.4g}"),
        ("bytes (per chip)", f"Σ operations × layers = {totals.bytes:.4g}"),
        ("weights", f"(params − embeddings)·s_w + embeddings·s_emb = "
                    f"{_si(totals.weight_bytes, 'bytes')}"),
        ("KV cache / token", (
            f"layers·(kv_lora_rank + rope_dim)·s_kv = {arch.layers}·"
            f"({arch.mla.kv_lora_rank}+{arch.mla.qk_rope_head_dim})·"
            f"{DTYPE_BYTES[s.kv_cache]:g} = {totals.kv_cache_bytes_per_token:,.0f} B"
            if arch.mla is not None else
            f"2·layers·kv_heads·head_dim·s_kv = 2·{arch.layers}·{arch.kv_heads}·"
            f"{arch.head_dim}·{DTYPE_BYTES[s.kv_cache]:g} = "
            f"{totals.kv_cache_bytes_per_token:,.0f} B")),
        ("KV cache", f"batch·positions·per token = {s.batch}·{s.context}·"
                     f"{totals.kv_cache_bytes_per_token:,.0f} = "
                     f"{_si(totals.kv_cache_bytes, 'bytes')}"),
        ("activations", f"tokens·(hidden + widest output)·s_a ≈ "
                        f"{_si(totals.activation_bytes, 'bytes')}"),
        ("memory needed", f"weights + KV cache + activations = "
                          f"{_si(totals.memory_needed, 'bytes')}"),
    ]
    what = "TTFT" if s.phase == "prefill" else "TPOT"
    for r in results:
        if r.skipped:
            lines.append((r.hardware, f"skipped: {r.skipped}"))
            continue
        lines.append((f"{r.hardware}: T_lower", f"Σ max(T_math, T_mem) over kernels = "
                                                 f"{_si(r.t_lower_s, 'time')}"))
        if r.sustained is not None:
            lines.append((f"{r.hardware}: {what}",
                          f"Σ (T_fixed + T_work) over kernels, compute-bound work at "
                          f"{r.sustained:g} of its roof (sustained) = "
                          f"{_si(r.t_predicted_s, 'time')}"))
        else:
            lines.append((f"{r.hardware}: {what}", f"Σ max(T_lower/efficiency, launch overhead) = "
                                                   f"{_si(r.t_predicted_s, 'time')}"))
        produced = "batch × prompt_len" if s.phase == "prefill" else "batch"
        lines.append((f"{r.hardware}: tokens/s", f"{produced} / {what} = {r.tokens_per_s:,.1f}"))
        if r.memory_available_bytes is not None:
            verdict = "fits" if r.fits else "does not fit"
            lines.append((f"{r.hardware}: memory",
                          f"{_si(r.memory_needed_bytes, 'bytes')} vs capacity × t = "
                          f"{_si(r.memory_available_bytes, 'bytes')}: {verdict}"))
    return lines
