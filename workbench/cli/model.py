"""``roofline-workbench model``: a whole model from a config.json, per machine.

    roofline-workbench model CONFIG.json --phase prefill|decode --batch B [--prompt-len N]
        [--kv-len N] [--weights DTYPE] [--activations DTYPE] [--kv-cache DTYPE] [--tp T]
        [--ep E] [--pp P] [--imbalance F] [--memory-utilization U] [--kv-block N]
        [--prefill-chunk N] [--all-reduce auto|ring|one_shot|tree] [--draft-tokens K]
        [--acceptance A] [--output-len N] [--sweep-batch]
        [--hardware PRESET_OR_SESSION_MACHINE ...]
        [--format table|json] [--prediction derated|calibrated]
        [--launches auto|kernel|eager|graph]

JSON: ``{"model": {"name", "params", "active_params", "layers", "weight_bytes",
"kv_cache_bytes_per_token"}, "phase", "batch", "totals": {"flops", "bytes",
"interconnect_bytes", "weight_bytes", …}, "serving": {"memory_utilization", "kv_block",
"prefill_chunk", "all_reduce", "imbalance", "draft_tokens", …}, "warnings": [...],
"busiest_chip": {…} (expert parallelism), "results": [{"hardware", "t_lower_s",
"t_predicted_s", "ttft_s" | "tpot_s", "tokens_per_s", "memory_needed_bytes",
"memory_available_bytes" (usable), "capacity_bytes", "runtime_reserve_bytes", "fits",
"max_batch", …; with --output-len "ttft_lower_s", "request_lower_s", …}],
"operations": [...]}``. ``model`` describes the whole model; ``totals`` and ``results`` are
per chip (``bytes`` cross memory, ``interconnect_bytes`` the links).
"""

from __future__ import annotations

import sys

from workbench.cli.common import positive_whole
from workbench.model.llm.architecture import (
    ACTIVATION_DTYPES,
    ALL_REDUCE_ALGORITHMS,
    KV_DTYPES,
    MAX_DRAFT_TOKENS,
    PHASES,
    WEIGHT_DTYPES,
)
from workbench.model.prediction import (
    DEFAULT_LAUNCHES,
    DEFAULT_PREDICTION,
    LAUNCHES,
    PREDICTIONS,
)

__all__ = ["add_parser", "run"]

DEFAULT_HARDWARE = "h100-sxm"


def add_parser(sub) -> None:
    from workbench.io.model_configs import shipped_configs

    names = ", ".join(shipped_configs())
    model = sub.add_parser(
        "model", help="a whole LLM from its config.json: time, tokens/s and memory per machine",
        description="Expand a Hugging Face config.json into every operation of one forward "
                    "pass (prefill: batch × prompt_len tokens; decode: batch new tokens against "
                    "a KV cache of kv_len) and evaluate it on each machine. CONFIG.json may "
                    f"also be the name of a shipped config: {names}.")
    model.add_argument("config", metavar="CONFIG.json",
                       help="a config.json file, or the name of a shipped config")
    model.add_argument("--phase", choices=PHASES, required=True)
    model.add_argument("--batch", type=_positive, required=True, metavar="B",
                       help="sequences in the batch")
    model.add_argument("--prompt-len", type=_positive, default=2048, metavar="N",
                       help="prompt length in tokens (prefill; default 2048)")
    model.add_argument("--kv-len", type=_positive, default=None, metavar="N",
                       help="KV cache length in decode (default: the prompt length)")
    model.add_argument("--weights", choices=WEIGHT_DTYPES, default="bf16",
                       help="weight dtype (weight-only quantisation keeps the embedding and "
                            "lm_head in bf16 unless --quantize-embeddings)")
    model.add_argument("--quantize-embeddings", action="store_true",
                       help="store the embedding and lm_head in the weight dtype too")
    model.add_argument("--activations", choices=ACTIVATION_DTYPES, default="bf16")
    model.add_argument("--kv-cache", choices=KV_DTYPES, default="bf16")
    model.add_argument("--tp", type=_positive, default=1, metavar="T",
                       help="tensor-parallel degree (counts are per chip)")
    model.add_argument("--ep", type=_positive, default=1, metavar="E",
                       help="expert parallelism (MoE): routed experts split over E chips, "
                            "all-to-all dispatch and combine; with E > tp attention runs "
                            "data-parallel over E/tp copies")
    model.add_argument("--pp", type=_positive, default=1, metavar="P",
                       help="pipeline parallelism: layers split into P stages, P micro-"
                            "batches in flight, the stage boundary sent over the link")
    model.add_argument("--imbalance", type=_number, default=1.0, metavar="F",
                       help="expert parallelism, skewed routing: the busiest chip gets F × "
                            "the pairs and experts hit of uniform routing (default 1; e.g. 1.3)")
    model.add_argument("--memory-utilization", type=_number, default=0.9, metavar="U",
                       help="the fraction of each chip's capacity the server may use, as "
                            "vLLM's gpu_memory_utilization (default 0.9)")
    model.add_argument("--kv-block", type=_positive, default=16, metavar="N",
                       help="paged KV cache: a sequence holds whole blocks of N tokens "
                            "(default 16)")
    model.add_argument("--prefill-chunk", type=_positive, default=8192, metavar="N",
                       help="chunked prefill: the activations of at most N tokens are held "
                            "at once (default 8192)")
    model.add_argument("--all-reduce", choices=ALL_REDUCE_ALGORITHMS, default="auto",
                       help="tensor-parallel all-reduce: ring (2·(t−1) steps), one_shot (1 "
                            "step, each chip reads every other's partial sums), tree "
                            "(2·⌈log2 t⌉ steps); auto: one_shot up to 1 MB per chip, ring "
                            "above (default)")
    model.add_argument("--draft-tokens", type=_whole, default=0, metavar="K",
                       help="speculative decoding: K draft tokens verified per step (the "
                            "target model runs K + 1 positions); default 0, off")
    model.add_argument("--acceptance", type=_number, default=0.7, metavar="A",
                       help="speculative decoding: the chance each draft token is accepted "
                            "(default 0.7)")
    model.add_argument("--output-len", type=_positive, default=None, metavar="N",
                       help="a whole request: TTFT of the prompt, then N output tokens with "
                            "the KV cache growing from the prompt length (request latency, "
                            "output tokens/s per user and per chip)")
    model.add_argument("--sweep-batch", action="store_true",
                       help="throughput against latency: decode at batch 1, 2, 4, … up to the "
                            "largest that fits each machine (TPOT: the mean over the request "
                            "with --output-len), tokens/s per chip and per user")
    model.add_argument("--hardware", nargs="+", metavar="PRESET_OR_SESSION_MACHINE",
                       help="preset ids (h100-sxm, mi300x, …), a session file (all its "
                            "machines) or SESSION.yaml:NAME (one of them); default "
                            f"{DEFAULT_HARDWARE}")
    model.add_argument("--format", choices=("table", "json"), default="table")
    model.add_argument("--prediction", choices=PREDICTIONS, default=None,
                       help="derated: one efficiency per machine; calibrated: efficiencies by "
                            "kernel class fitted on real kernels (default: the session's "
                            f"choice, else {DEFAULT_PREDICTION})")
    model.add_argument("--launches", choices=tuple(LAUNCHES), default=None,
                       help="calibrated prediction: auto (a whole model replayed from a CUDA "
                            "graph, as serving engines run it), kernels timed alone, launched "
                            "from Python, or replayed from a CUDA graph (default: the "
                            f"session's choice, else {DEFAULT_LAUNCHES})")


_positive = positive_whole("a positive whole number", "a positive whole number",
                           maximum=10_000_000)  # as in a session (model_entries.MAX_LENGTH)


_whole = positive_whole("a whole number", "0 or more", maximum=MAX_DRAFT_TOKENS, minimum=0)


def _number(text: str) -> float:
    """A finite decimal number (argparse ``type``); its range is the set-up's to check."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def machines(refs: list[str] | None):
    """Machines named on the command line. Raises InputError naming the bad reference."""
    from pathlib import Path

    from workbench.io.errors import InputError
    from workbench.io.sessions import load_session
    from workbench.io.user_presets import all_presets, find_preset, user_preset_problems

    out = []
    for ref in refs or [DEFAULT_HARDWARE]:
        path, _, name = _split(ref)
        if path and Path(path).suffix in (".yaml", ".yml"):
            session = load_session(path)
            entries = session.machines_matching(name) if name else session.hardware
            if not entries:
                raise InputError(f"no machine {name!r} in this session (it has: "
                                 f"{', '.join(e.hardware.label for e in session.hardware)})",
                                 file=path)
            out += [e.hardware for e in entries]
            continue
        try:
            preset = find_preset(ref)  # a built-in preset, else one of the user's own
            preset.prediction, preset.launches = DEFAULT_PREDICTION, DEFAULT_LAUNCHES
            out.append(preset)
        except (KeyError, LookupError, ValueError):
            skipped = user_preset_problems()  # (the one meant may be among them)
            left_out = (f"; user presets left out: {'; '.join(skipped)}" if skipped else "")
            raise InputError(f"--hardware: {ref!r} is neither a preset (one of: "
                             f"{', '.join(sorted(all_presets()))}) nor a session file"
                             f"{left_out}") from None
    return out


def _split(ref: str) -> tuple[str, str, str]:
    for ext in (".yaml:", ".yml:"):
        if ext in ref:
            i = ref.index(ext) + len(ext) - 1
            return ref[:i], ":", ref[i + 1:]
    return ref, "", ""


def run(args) -> int:
    from workbench.cli.common import derivation_json, fail, json_safe
    from workbench.io.errors import InputError
    from workbench.io.model_configs import read_model_config
    from workbench.model.llm.architecture import Setup, SetupError, layer_steps
    from workbench.model.llm.results import model_result, model_totals

    try:
        arch = read_model_config(args.config)
        hardware = machines(args.hardware)
        setup = Setup(args.phase, args.batch, args.prompt_len,
                      args.kv_len if args.kv_len is not None else args.prompt_len,
                      args.weights, args.activations, args.kv_cache, args.tp,
                      args.quantize_embeddings, args.output_len or 0, args.ep, args.pp,
                      imbalance=args.imbalance, memory_utilization=args.memory_utilization,
                      kv_block=args.kv_block, prefill_chunk=args.prefill_chunk,
                      all_reduce=args.all_reduce, draft_tokens=args.draft_tokens,
                      acceptance=args.acceptance)
        setup.check()
        layer_steps(arch, setup)  # (refuses a set-up the model cannot take, by name)
    except SetupError as exc:  # (named by its option where it is one)
        option = f"--{exc.field.replace('_', '-')}" if hasattr(args, exc.field) else exc.field
        return fail(f"{option}: {exc.message}")
    except InputError as exc:
        return fail(str(exc))
    for hw in hardware:
        if args.prediction is not None:
            hw.prediction = args.prediction
        if args.launches is not None:
            hw.launches = args.launches
    warning = arch.context_warning(max(setup.context, setup.prompt_len + setup.output_len))
    if warning:
        from workbench.cli.common import PROG, terminal

        sys.stderr.write(f"{PROG}: warning: {terminal(warning)}\n")
    steps = layer_steps(arch, setup)
    totals = model_totals(arch, setup, steps)
    results = [model_result(arch, setup, hw, steps) for hw in hardware]
    sweeps = None
    if args.sweep_batch:
        from workbench.model.llm.results import batch_sweep

        sweeps = [batch_sweep(arch, setup, hw) for hw in hardware]
    requests: list | None = None
    if setup.output_len:
        from workbench.model.llm.results import request_result

        requests = [request_result(arch, setup, hw, setup.output_len,
                                   r if setup.phase == "prefill" else None)
                    for hw, r in zip(hardware, results, strict=True)]
    if args.format == "json":
        import json

        from workbench.model.llm.results import busiest_chip_data

        busiest = busiest_chip_data(arch, setup)

        payload = {
            "model": {"name": arch.name, "params": arch.params,
                      "active_params": arch.active_params, "layers": arch.layers,
                      "weight_bytes": arch.weight_bytes(setup.weights,
                                                        setup.quantize_embeddings),
                      "kv_cache_bytes_per_token": arch.kv_cache_bytes_per_token(
                          setup.kv_cache),
                      "source": arch.source},
            "phase": setup.phase, "batch": setup.batch, "prompt_len": setup.prompt_len,
            "kv_len": setup.kv_len, "tp": setup.tp, "ep": setup.ep, "pp": setup.pp,
            "chips": setup.chips,
            "dtypes": {"weights": setup.weights, "activations": setup.activations,
                       "kv_cache": setup.kv_cache},
            "totals": {"flops": totals.flops, "bytes": totals.bytes,
                       "interconnect_bytes": totals.interconnect_bytes,
                       "weight_bytes": totals.weight_bytes,
                       "kv_cache_bytes_per_token": totals.kv_cache_bytes_per_token,
                       "kv_cache_bytes": totals.kv_cache_bytes,
                       "activation_bytes": totals.activation_bytes,
                       "memory_needed_bytes": totals.memory_needed},
            "output_len": setup.output_len or None,
            "serving": {"memory_utilization": setup.memory_utilization,
                        "kv_block": setup.kv_block, "prefill_chunk": setup.prefill_chunk,
                        "all_reduce": setup.all_reduce, "imbalance": setup.imbalance,
                        "draft_tokens": setup.draft_tokens,
                        **({"acceptance": setup.acceptance} if setup.draft_tokens else {})},
            "warnings": [warning] if warning else [],
            **({"busiest_chip": busiest} if busiest is not None else {}),
            "results": [{**r.as_dict(setup.phase),
                         **(q.as_dict() if q is not None and not q.skipped else {})}
                        for r, q in zip(results, requests or [None] * len(results),
                                        strict=True)],
            **({"sweep": [{"hardware": hw.label, "points": [p.as_dict() for p in points]}
                          for hw, points in zip(hardware, sweeps, strict=True)]}
               if sweeps is not None else {}),
            "operations": [{**derivation_json(op), "layers": step.count if step.count > 1 else 1,
                            "group": step.group}
                           for step, op in ((s, s.operation) for s in steps)],
        }
        sys.stdout.write(json.dumps(json_safe(payload), indent=2, allow_nan=False) + "\n")
        return 0
    from workbench.io.limits import terminal_text

    sys.stdout.write(terminal_text(table(arch, setup, totals, results, requests), keep_lines=True))
    if sweeps is not None:
        sys.stdout.write(terminal_text(sweep_table(setup, hardware, sweeps), keep_lines=True))
    return 0


def sweep_table(setup, hardware, sweeps) -> str:
    from workbench.model.units import format_number, format_quantity

    what = (f"TPOT: mean over {setup.output_len} output tokens after a {setup.prompt_len}-token "
            f"prompt" if setup.output_len else f"TPOT at kv_len {setup.kv_len}")
    lines = ["", f"batch sweep (decode; {what}; tokens/s per chip over {setup.chips} "
                 f"chip{'s' if setup.chips > 1 else ''})"]
    rows = [("hardware", "batch", "TPOT", "tokens/s/chip", "tokens/s/user")]
    for hw, points in zip(hardware, sweeps, strict=True):
        if not points:
            rows.append((hw.label, "—", "nothing fits" if hw.capacity else "no capacity", "",
                         ""))
        for i, p in enumerate(points):
            rows.append((hw.label if i == 0 else "", f"{p.batch:,}",
                         format_quantity(p.tpot_s, "time"),
                         format_number(p.tokens_per_s_per_chip),
                         format_number(p.tokens_per_s_per_user)))
    _columns(lines, rows)
    return "\n".join(lines) + "\n"


def table(arch, setup, totals, results, requests=None) -> str:
    from workbench.model.llm.results import busiest_chip_data, memory_lines, speculation_lines
    from workbench.model.units import format_capacity, format_number, format_quantity

    q = format_quantity
    what = "TTFT" if setup.phase == "prefill" else "TPOT"
    weights = arch.weight_bytes(setup.weights, setup.quantize_embeddings)
    per_token = arch.kv_cache_bytes_per_token(setup.kv_cache)
    chips = setup.chips
    links = (f" + {q(totals.interconnect_bytes, 'bytes')} on the links"
             if totals.interconnect_bytes else "")
    lines = [
        f"{arch.name}: {arch.summary()}",
        f"params {format_number(arch.params / 1e9, 4)} B, active "
        f"{format_number(arch.active_params / 1e9, 4)} B, weights "
        f"{q(weights, 'bytes')} ({setup.weights}"
        + (f"; {q(totals.weight_bytes, 'bytes')} per chip" if chips > 1 else "")
        + f"), KV cache {format_number(per_token)} B/token ({setup.kv_cache}"
        + (f"; {format_number(totals.kv_cache_bytes_per_token)} per chip"
           if chips > 1 and totals.kv_cache_bytes_per_token != per_token else "") + ")",
        f"{setup.phase}: batch {setup.batch}, "
        + (f"prompt {setup.prompt_len}" if setup.phase == "prefill" else f"kv_len {setup.kv_len}")
        + f", tp {setup.tp}"
        + (f", ep {setup.ep}" if setup.ep > 1 else "")
        + (f", pp {setup.pp}" if setup.pp > 1 else "")
        + (f" ({setup.chips} chips)" if setup.chips != setup.tp else "")
        + f": {q(totals.flops, 'flops')}, {q(totals.bytes, 'bytes')}{links} "
          f"per chip; KV cache {q(totals.kv_cache_bytes, 'bytes')} per chip",
        "",
    ]
    header = ("hardware", "T_lower", what, "tokens/s", "memory/chip", "usable", "capacity",
              "fits", "max batch")
    rows: list[tuple[str, ...]] = [header]
    for r in results:
        if r.skipped:
            rows.append((r.hardware, "skipped: " + r.skipped, "", "", "", "", "", "", ""))
            continue
        rows.append((r.hardware, q(r.t_lower_s, "time"), q(r.t_predicted_s, "time"),
                     format_number(r.tokens_per_s), q(r.memory_needed_bytes, "bytes"),
                     q(r.memory_available_bytes, "bytes")
                     if r.memory_available_bytes is not None else "?",
                     format_capacity(r.capacity_bytes) if r.capacity_bytes else "?",
                     "yes" if r.fits else "does not fit" if r.fits is False else "?",
                     f"{r.max_batch:,}" if r.max_batch is not None else "?"))
    _columns(lines, rows)
    for r in results:
        if r.memory_available_bytes is not None and not r.skipped:
            usable, batch = (text for _, text in memory_lines(arch, setup, r)[:2])
            lines.append(f"usable on {r.hardware}: {usable}")
            lines.append(f"max batch on {r.hardware}: {batch}")
    if requests:
        n = setup.output_len
        lines += ["", f"request: prompt {setup.prompt_len} + {n} output tokens, batch "
                      f"{setup.batch}, on {setup.chips} chip{'s' if setup.chips > 1 else ''} "
                      "(predicted, then ≥ its lower bound)"]
        rows = [("hardware", "TTFT", "≥", f"TPOT {setup.prompt_len + 1}…{setup.prompt_len + n}",
                 "≥", "request", "≥", "tokens/s/user", "tokens/s/chip")]
        priced = any(r.cost_per_million_tokens is not None for r in requests)
        if priced:
            rows[0] += ("cost/M tokens",)
        for r in requests:
            if r.skipped:
                rows.append((r.hardware, "skipped: " + r.skipped, "", "", "", "", "", "", "")
                            + (("",) if priced else ()))
                continue
            rows.append((r.hardware, q(r.ttft_s, "time"), q(r.ttft_lower_s, "time"),
                         f"{q(r.tpot_first_s, 'time')}…{q(r.tpot_last_s, 'time')}",
                         f"{q(r.tpot_first_lower_s, 'time')}…{q(r.tpot_last_lower_s, 'time')}",
                         q(r.request_s, "time"), q(r.request_lower_s, "time"),
                         format_number(r.output_tokens_per_s),
                         format_number(r.output_tokens_per_s_per_chip))
                        + ((format_number(r.cost_per_million_tokens)
                            if r.cost_per_million_tokens is not None else "no price",)
                           if priced else ()))
        _columns(lines, rows)
    for r in results:
        if r.cost_per_million_tokens is not None:
            lines.append(f"cost on {r.hardware}: {r.price_per_hour:g} per chip-hour × "
                         f"{r.chips} chip{'s' if r.chips > 1 else ''} / "
                         f"{format_number(r.tokens_per_s)} tokens/s = "
                         f"{format_number(r.cost_per_million_tokens)} per million tokens")
        for what, count, text, n, alpha, source in r.latency_terms:
            lines.append(f"link latency on {r.hardware}: {count} × {what} of {text} = {n} "
                         f"step{'s' if n != 1 else ''} × {alpha * 1e6:g} µs ({source}) = "
                         f"{q(count * n * alpha, 'time')}, in T_lower")
    for r in results:
        if r.tokens_per_step != 1 and not r.skipped:
            for label, text in speculation_lines(setup, r):
                lines.append(f"{label.removeprefix(r.hardware + ': ')} on {r.hardware}: {text}")
    busiest = busiest_chip_data(arch, setup)
    if busiest is not None:
        b = busiest
        lines.append(f"busiest chip (ep {setup.ep}): {b['experts_hit']:.3g} of its "
                     f"{b['local_experts']} experts hit per MoE layer (average "
                     f"{b['experts_hit_mean']:.3g}), {b['pairs']:.3g} token-expert pairs "
                     f"(average {b['pairs_mean']:.3g})"
                     + (f", imbalance {b['imbalance']:g}" if b["imbalance"] != 1 else "")
                     + f"; it reads {q(b['expert_read_bytes'], 'bytes')} of experts")
        for r in results:
            if r.bandwidth and not r.skipped:
                lines.append(f"busiest chip's expert read on {r.hardware}: "
                             f"{q(b['expert_read_bytes'], 'bytes')} / "
                             f"{q(r.bandwidth, 'bandwidth')} = "
                             f"{q(b['expert_read_bytes'] / r.bandwidth, 'time')}, in T_lower")
    for r in results:
        if r.share:
            parts = ", ".join(f"{k} {100 * v:.0f} %" for k, v in r.share.items() if v >= 0.005)
            lines.append(f"time share on {r.hardware}: {parts}")
    return "\n".join(lines) + "\n"


def _columns(lines: list[str], rows: list[tuple]) -> None:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
                     .rstrip())
