"""The texts of the Model tab's figures: each number with its formula and values, for the
cells' tooltips and the summary line (the derivation page lists the same formulas)."""

from __future__ import annotations

import math
import textwrap

from workbench.model.llm.architecture import Architecture, Setup
from workbench.model.llm.results import (
    MachineResult,
    ModelTotals,
    RequestResult,
    held_positions,
    memory_lines,
)
from workbench.model.units import format_capacity, format_number, format_quantity
from workbench.ui.widgets import escape_html

__all__ = ["result_cells", "request_cells", "summary_text", "summary_tooltip"]


def _what(setup: Setup) -> str:
    return "TTFT" if setup.phase == "prefill" else "TPOT"


def _produced(setup: Setup) -> tuple[str, str]:
    """(formula, values) of the tokens one step produces."""
    if setup.phase == "prefill":
        return "batch × prompt_len", f"{setup.batch} × {setup.prompt_len} = {setup.tokens:,}"
    return "batch (one new token per sequence)", f"{setup.batch}"


def summary_text(setup: Setup, totals: ModelTotals) -> str:
    """One line: the step's FLOPs and bytes per chip, the weights and the KV cache."""
    q = format_quantity
    links = (f" + {q(totals.interconnect_bytes, 'bytes')} on the links"
             if totals.interconnect_bytes else "")
    return (f"<b>{escape_html(setup.phase)}</b> step per chip: {q(totals.flops, 'flops')}, "
            f"{q(totals.bytes, 'bytes')}{links} · weights {q(totals.weight_bytes, 'bytes')} · "
            f"KV cache {q(totals.kv_cache_bytes, 'bytes')}")


def summary_tooltip(setup: Setup, totals: ModelTotals) -> str:
    q = format_quantity
    # a chip keeps the cache of its ⌈batch/dp⌉ sequences, each in whole blocks
    held = held_positions(setup)
    sequences, sequences_value = (("⌈batch/dp⌉", f"⌈{setup.batch}/{setup.dp}⌉")
                                  if setup.dp > 1 else ("batch", f"{setup.batch}"))
    positions = ("positions" if held == setup.context
                 else f"positions held (in blocks of {setup.kv_block})")
    return "\n".join((
        f"FLOPs per chip = Σ over operations × layers = {q(totals.flops, 'flops')}",
        f"bytes per chip = Σ over operations × layers (memory) = {q(totals.bytes, 'bytes')}",
        *([f"interconnect bytes per chip = Σ over collectives × layers (links, not memory) = "
           f"{q(totals.interconnect_bytes, 'bytes')}"] if totals.interconnect_bytes else []),
        "weights per chip = (params − embeddings)·s_w + embeddings·s_emb"
        + (f", split over t = {setup.tp} but for the norms (and MLA down-projections, "
           f"router) every chip keeps whole" if setup.tp > 1 else "")
        + f" = {q(totals.weight_bytes, 'bytes')}",
        f"KV cache = {sequences} · {positions} · bytes per token = {sequences_value} · "
        f"{held:,} · {totals.kv_cache_bytes_per_token:,.0f} B = "
        f"{q(totals.kv_cache_bytes, 'bytes')} (per chip)" if totals.kv_cache_bytes
        == math.ceil(setup.batch / setup.dp) * held * totals.kv_cache_bytes_per_token else
        f"KV cache = {sequences} · Σ over layers of min(positions, window) · bytes per layer "
        f"and token = {q(totals.kv_cache_bytes, 'bytes')} (per chip; local layers hold their "
        f"window)",
        "The Derivation page has every formula.",
    ))


def result_cells(r: MachineResult, setup: Setup, totals: ModelTotals
                 ) -> list[tuple[str, str]]:
    """(text, tooltip) of each row of the results table for machine ``r``: T_lower,
    predicted time, tokens/s, memory per chip, capacity, fits, share of time."""
    q = format_quantity
    what = _what(setup)
    hw = r.hardware
    needed = q(r.memory_needed_bytes, "bytes")
    memory = (needed, f"memory needed per chip = weights + KV cache + activations = "
                      f"{q(totals.weight_bytes, 'bytes')} + {q(totals.kv_cache_bytes, 'bytes')}"
                      f" + {q(totals.activation_bytes, 'bytes')} = {needed}")
    if r.memory_available_bytes is not None:
        available = q(r.memory_available_bytes, "bytes")
        capacity = (f"{available} of {format_capacity(r.capacity_bytes)}",
                    f"{hw}: usable memory of one chip = capacity × memory utilisation − "
                    f"runtime reserve = {format_capacity(r.capacity_bytes)} × "
                    f"{setup.memory_utilization:g} − {format_capacity(r.reserve_bytes)} = "
                    f"{available}")
        sign = "≤" if r.fits else ">"
        verdict = "fits" if r.fits else "does not fit"
        fits = (verdict, f"memory needed per chip {needed} {sign} capacity {available}: "
                         f"{verdict}")
    else:
        capacity = ("—", f"{hw} has no memory capacity set: add one to check the fit")
        fits = ("no capacity", f"{hw} has no memory capacity set: the fit is not checked")
    if r.skipped:
        why = f"{hw}: skipped — {r.skipped}"
        # the reason in the cells too, a few words a line (the share row grows to fit)
        reason = r.skipped.removeprefix(f"{hw} ")
        shown = "skipped: " + reason
        return [("skipped", why), ("skipped", why), ("skipped", why), memory, capacity, fits,
                ("\n".join(textwrap.wrap(shown, 34)), why)]
    t_lower = q(r.t_lower_s, "time")
    t_pred = q(r.t_predicted_s, "time")
    formula, values = _produced(setup)
    produced = setup.tokens if setup.phase == "prefill" else setup.batch
    # one kind a line, whole (the row is as tall as its lines)
    share_text = "\n".join(f"{k} {100 * v:.0f} %" for k, v in r.share.items() if v >= 0.005)
    share_tip = "\n".join(
        [f"{hw}: share of {what} per operation kind = Σ its kernels' predicted time / {what}"]
        + [f"{k}: {q(v * r.t_predicted_s, 'time')} / {t_pred} = {100 * v:.0f} %"
           for k, v in r.share.items()])
    return [
        (t_lower, f"{hw}: T_lower = Σ over kernels of max(T_math, T_mem) × layers"
                  + (f" + link latency of the collectives {q(r.latency_s, 'time')}"
                     if r.latency_s else "") + f" = {t_lower}"),
        (t_pred, f"{hw}: {what} = Σ over kernels of (T_fixed + T_work) × layers, calibrated"
                 + (f" (compute-bound work at {r.sustained:g} of its roof)"
                    if r.sustained is not None and r.sustained < 1 else "")
                 + (f", over {r.tokens_per_step:.3g} tokens per speculative step"
                    if r.tokens_per_step != 1 else "") + f" = {t_pred}"
                 if r.sustained is not None else
                 f"{hw}: {what} = Σ over kernels of max(T_lower / efficiency, launch "
                 f"overhead) × layers = {t_pred}"),
        (format_number(r.tokens_per_s),
         f"{hw}: tokens/s = {formula} / {what} = {produced:,} / {t_pred} = "
         f"{format_number(r.tokens_per_s)} ({values})"),
        memory,
        capacity,
        fits,
        (share_text, share_tip),
    ]


def request_cells(r: MachineResult, request: RequestResult | None, setup: Setup,
                  arch: Architecture) -> list[tuple[str, str]]:
    """(text, tooltip) of the rows after the share of time: the largest batch that fits,
    and a whole request's latency and output tokens per second per user and per chip."""
    q = format_quantity
    hw = r.hardware
    if r.max_batch is None:
        batch = ("—", f"{hw} has no memory capacity set: add one to find the largest batch")
    else:
        batch = (f"{r.max_batch:,}", f"{hw}: {memory_lines(arch, setup, r)[1][1]}")
    if request is None:
        none = ("request = TTFT + one decode step per output token: set Output tokens to "
                "run a whole request")
        return [batch, ("—", none), ("—", none), ("—", none)]
    if request.skipped:
        why = f"{hw}: skipped — {request.skipped}"
        return [batch, ("—", why), ("—", why), ("—", why)]
    n = request.output_len
    total = q(request.request_s, "time")
    user = format_number(request.output_tokens_per_s)
    chip = format_number(request.output_tokens_per_s_per_chip)
    return [
        batch,
        (total, f"{hw}: request = TTFT + Σ TPOT(prompt_len + i), i = 1…{n} = "
                f"{q(request.ttft_s, 'time')} + {q(request.decode_s, 'time')} = {total} "
                f"(TPOT from {q(request.tpot_first_s, 'time')} to "
                f"{q(request.tpot_last_s, 'time')})"),
        (user, f"{hw}: output tokens/s per user = output tokens / request = {n} / {total} = "
               f"{user}"),
        (chip, f"{hw}: output tokens/s per chip = batch × per user / chips = {request.batch} × "
               f"{user} / {request.chips} = {chip}"),
    ]
