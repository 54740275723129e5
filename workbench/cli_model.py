"""``roofline-workbench model``: a whole model from a config.json, per machine.

    roofline-workbench model CONFIG.json --phase prefill|decode --batch B [--prompt-len N]
        [--kv-len N] [--weights DTYPE] [--activations DTYPE] [--kv-cache DTYPE] [--tp T]
        [--hardware PRESET_OR_SESSION_MACHINE ...] [--format table|json]
        [--prediction derated|calibrated] [--launches kernel|eager|graph]

JSON: ``{"model": {"name", "params", "active_params", "layers", "weight_bytes",
"kv_cache_bytes_per_token"}, "phase", "batch", "totals": {"flops", "bytes"}, "results":
[{"hardware", "t_lower_s", "t_predicted_s", "ttft_s" | "tpot_s", "tokens_per_s",
"memory_needed_bytes", "fits", …}], "operations": [...]}``.
"""

from __future__ import annotations

import sys

from workbench.cli_common import positive_whole
from workbench.model.llm import ACTIVATION_DTYPES, KV_DTYPES, PHASES, WEIGHT_DTYPES

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
    model.add_argument("--hardware", nargs="+", metavar="PRESET_OR_SESSION_MACHINE",
                       help="preset ids (h100-sxm, mi300x, …), a session file (all its "
                            "machines) or SESSION.yaml:NAME (one of them); default "
                            f"{DEFAULT_HARDWARE}")
    model.add_argument("--format", choices=("table", "json"), default="table")
    model.add_argument("--prediction", choices=("derated", "calibrated"), default=None,
                       help="derated: one efficiency per machine; calibrated: efficiencies by "
                            "kernel class fitted on real kernels (default: the session's "
                            "choice, else derated)")
    model.add_argument("--launches", choices=("kernel", "eager", "graph"), default=None,
                       help="calibrated prediction: kernels timed alone, launched from "
                            "Python, or replayed from a CUDA graph (default eager)")


_positive = positive_whole("a positive whole number", "a positive whole number")


def machines(refs: list[str] | None):
    """Machines named on the command line. Raises InputError naming the bad reference."""
    from pathlib import Path

    from workbench.io.errors import InputError
    from workbench.io.presets import get_preset, load_presets
    from workbench.io.sessions import load_session

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
            out.append(get_preset(ref))
        except (KeyError, LookupError, ValueError):
            raise InputError(f"--hardware: {ref!r} is neither a preset (one of: "
                             f"{', '.join(sorted(load_presets()))}) nor a session file") \
                from None
    return out


def _split(ref: str) -> tuple[str, str, str]:
    for ext in (".yaml:", ".yml:"):
        if ext in ref:
            i = ref.index(ext) + len(ext) - 1
            return ref[:i], ":", ref[i + 1:]
    return ref, "", ""


def run(args) -> int:
    from workbench.cli_common import derivation_json, fail, json_safe
    from workbench.io.errors import InputError
    from workbench.io.model_configs import read_model_config
    from workbench.model.llm import Setup, SetupError, layer_steps
    from workbench.model.llm_results import model_result, model_totals

    try:
        arch = read_model_config(args.config)
        hardware = machines(args.hardware)
        setup = Setup(args.phase, args.batch, args.prompt_len,
                      args.kv_len if args.kv_len is not None else args.prompt_len,
                      args.weights, args.activations, args.kv_cache, args.tp,
                      args.quantize_embeddings)
        setup.check()
    except (InputError, SetupError) as exc:
        return fail(str(exc))
    for hw in hardware:
        if args.prediction is not None:
            hw.prediction = args.prediction
        if args.launches is not None:
            hw.launches = args.launches
    steps = layer_steps(arch, setup)
    totals = model_totals(arch, setup, steps)
    results = [model_result(arch, setup, hw, steps) for hw in hardware]
    if args.format == "json":
        import json

        payload = {
            "model": {"name": arch.name, "params": arch.params,
                      "active_params": arch.active_params, "layers": arch.layers,
                      "weight_bytes": totals.weight_bytes,
                      "kv_cache_bytes_per_token": totals.kv_cache_bytes_per_token,
                      "source": arch.source},
            "phase": setup.phase, "batch": setup.batch, "prompt_len": setup.prompt_len,
            "kv_len": setup.kv_len, "tp": setup.tp,
            "dtypes": {"weights": setup.weights, "activations": setup.activations,
                       "kv_cache": setup.kv_cache},
            "totals": {"flops": totals.flops, "bytes": totals.bytes,
                       "kv_cache_bytes": totals.kv_cache_bytes,
                       "activation_bytes": totals.activation_bytes,
                       "memory_needed_bytes": totals.memory_needed},
            "results": [r.as_dict(setup.phase) for r in results],
            "operations": [{**derivation_json(op), "layers": step.count if step.count > 1 else 1,
                            "group": step.group}
                           for step, op in ((s, s.operation) for s in steps)],
        }
        json.dump(json_safe(payload), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(table(arch, setup, totals, results))
    return 0


def table(arch, setup, totals, results) -> str:
    from workbench.model.units import format_number, format_quantity

    q = format_quantity
    what = "TTFT" if setup.phase == "prefill" else "TPOT"
    lines = [
        f"{arch.name}: {arch.summary()}",
        f"params {format_number(arch.params / 1e9, 4)} B, active "
        f"{format_number(arch.active_params / 1e9, 4)} B, weights "
        f"{q(totals.weight_bytes, 'bytes')} ({setup.weights}), KV cache "
        f"{format_number(totals.kv_cache_bytes_per_token)} B/token ({setup.kv_cache})",
        f"{setup.phase}: batch {setup.batch}, "
        + (f"prompt {setup.prompt_len}" if setup.phase == "prefill" else f"kv_len {setup.kv_len}")
        + f", tp {setup.tp}: {q(totals.flops, 'flops')}, {q(totals.bytes, 'bytes')} per chip",
        "",
    ]
    header = ("hardware", "T_lower", what, "tokens/s", "memory", "capacity×t", "fits")
    rows = [header]
    for r in results:
        if r.skipped:
            rows.append((r.hardware, "skipped: " + r.skipped, "", "", "", "", ""))
            continue
        rows.append((r.hardware, q(r.t_lower_s, "time"), q(r.t_predicted_s, "time"),
                     format_number(r.tokens_per_s), q(r.memory_needed_bytes, "bytes"),
                     q(r.memory_available_bytes, "bytes")
                     if r.memory_available_bytes is not None else "?",
                     "yes" if r.fits else "does not fit" if r.fits is False else "?"))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(header))]
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
                     .rstrip())
    for r in results:
        if r.share:
            parts = ", ".join(f"{k} {100 * v:.0f} %" for k, v in r.share.items() if v >= 0.005)
            lines.append(f"time share on {r.hardware}: {parts}")
    return "\n".join(lines) + "\n"
