"""Model configs: read a local Hugging Face ``config.json`` (no network, no ``transformers``)
into an :class:`~workbench.model.llm.architecture.Architecture`, with errors that name the file, the field
and the problem; and the configs shipped with the package (``workbench/model_configs``).

Supported ``model_type`` values: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3,
qwen3_moe, gemma, gemma2, deepseek_v2, deepseek_v3. Anything else is refused by name.
"""

from __future__ import annotations

import builtins  # (the reader's own int() method shadows the type in its class)
import json
import os
import re
from pathlib import Path
from typing import Any

from workbench.io.errors import InputError
from workbench.model.llm.architecture import MLA, Architecture, MoE

__all__ = ["SUPPORTED", "read_model_config", "parse_model_config", "shipped_configs",
           "resolve_config", "MAX_CONFIG_BYTES"]

MAX_CONFIG_BYTES = 2_000_000
SUPPORTED = ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
             "gemma2", "deepseek_v2", "deepseek_v3")
#: Architectures (``architectures[0]``) accepted when ``model_type`` is missing.
_ARCH_TYPES = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral",
               "MixtralForCausalLM": "mixtral", "Qwen2ForCausalLM": "qwen2",
               "Qwen2MoeForCausalLM": "qwen2_moe", "Qwen3ForCausalLM": "qwen3",
               "Qwen3MoeForCausalLM": "qwen3_moe", "GemmaForCausalLM": "gemma",
               "Gemma2ForCausalLM": "gemma2", "DeepseekV2ForCausalLM": "deepseek_v2",
               "DeepseekV3ForCausalLM": "deepseek_v3"}
#: tie_word_embeddings when the file does not say (the defaults of each model's config class).
_TIED_DEFAULT = {"gemma": True, "gemma2": True}
#: The gated FFN's activation by its ``hidden_act`` name (as the models' code looks it up) and
#: the step that counts it: GELU's tanh and exact forms alike (9 FLOPs, the tanh form), SiLU
#: (also called swish), ReLU. Any other name is refused: counting it as another would be wrong.
ACTIVATIONS = {"silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_new": "gelu",
               "gelu_pytorch_tanh": "gelu", "gelu_fast": "gelu", "gelu_python": "gelu",
               "gelu_accurate": "gelu", "relu": "relu"}
#: The activation when the file names none (the defaults of each model's config class).
_ACTIVATION_DEFAULT = {"gemma": "gelu_pytorch_tanh", "gemma2": "gelu_pytorch_tanh"}

#: The largest value of each config number (far beyond any published model), checked before any
#: work: the layers are expanded one by one, and every count multiplies the FLOPs and bytes.
CONFIG_MAXIMA = {
    "num_hidden_layers": 1_000,
    "hidden_size": 1 << 20, "intermediate_size": 1 << 20, "moe_intermediate_size": 1 << 20,
    "shared_expert_intermediate_size": 1 << 20,
    "num_attention_heads": 4_096, "num_key_value_heads": 4_096, "head_dim": 65_536,
    "vocab_size": 1 << 24,
    "num_local_experts": 4_096, "num_experts": 4_096, "n_routed_experts": 4_096,
    "num_experts_per_tok": 4_096, "n_shared_experts": 4_096,
    "first_k_dense_replace": 1_000, "decoder_sparse_step": 1_000, "moe_layer_freq": 1_000,
    "kv_lora_rank": 65_536, "q_lora_rank": 65_536, "qk_nope_head_dim": 65_536,
    "qk_rope_head_dim": 65_536, "v_head_dim": 65_536,
}
_DEFAULT_MAXIMUM = 1 << 24

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "model_configs"


def shipped_configs() -> dict[str, Path]:
    """The configs shipped with the package, by name (``Llama-3.1-8B``)."""
    if not SHIPPED_DIR.is_dir():
        return {}
    return {p.stem: p for p in sorted(SHIPPED_DIR.glob("*.json"))}


def resolve_config(ref: str) -> Path:
    """A path to a config file: ``ref`` itself if it is a file, else the shipped config of
    that name (case-insensitive). Raises :class:`InputError` naming the choices."""
    path = Path(ref)
    if path.is_file() or (str(ref).strip() and path.exists() and not path.is_dir()):
        return path  # (a pipe or device is refused by name when read)
    shipped = shipped_configs()
    for name, p in shipped.items():
        if name.lower() == str(ref).lower() or name.lower() == Path(ref).stem.lower():
            return p
    if not str(ref).strip():  # (Path("") is the current folder)
        raise InputError("no file name given (expected a model config: a config.json file or "
                         "a shipped config's name)", repr(str(ref)))
    if path.is_dir():  # a model's folder, as Hugging Face downloads it
        inside = " (give the config.json it holds)" if (path / "config.json").is_file() else ""
        raise InputError(f"is a folder, not a model config (config.json){inside}",
                         file=str(ref))
    raise InputError(f"no such file, nor a shipped model config of that name (shipped: "
                     f"{', '.join(shipped)})", file=str(ref))


def read_model_config(ref: str | os.PathLike[str]) -> Architecture:
    """Read and validate a config file (or a shipped config by name)."""
    from workbench.io.limits import read_regular_file

    path = resolve_config(str(ref))
    shown = str(ref)
    raw = read_regular_file(path, MAX_CONFIG_BYTES, "model config (config.json)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"is not UTF-8 text ({exc.reason})", file=shown) from None
    data = loads_json(text, shown)
    name = path.stem if path.parent == SHIPPED_DIR else (
        path.parent.name if path.name == "config.json" else path.stem)
    return parse_model_config(data, file=shown, text=text, name=name)


#: The deepest nesting of ``[`` and ``{`` and the longest number a config.json may hold.
MAX_JSON_DEPTH = 64
MAX_JSON_DIGITS = 400
_JSON_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET_RE = re.compile(r"[\[\]{}]")


def loads_json(text: str, file: str | None) -> Any:
    """``json.loads`` with bounded nesting and number lengths: one :class:`InputError` for
    any problem, never a RecursionError or a ValueError from a 5,000-digit number."""
    depth = deepest = 0
    for match in _JSON_BRACKET_RE.finditer(_JSON_STRING_RE.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_JSON_DEPTH:
                raise InputError(f"is not a config: nested more than {MAX_JSON_DEPTH} levels "
                                 "deep", file=file)

    def number(kind):
        def parse(literal: str):
            if len(literal) > MAX_JSON_DIGITS:
                raise InputError(f"holds a number with more than {MAX_JSON_DIGITS} digits "
                                 f"({literal[:12]}...)", file=file)
            return kind(literal)
        return parse

    try:
        return json.loads(text, parse_int=number(int), parse_float=number(float))
    except json.JSONDecodeError as exc:
        raise InputError(f"is not valid JSON: {exc.msg} (column {exc.colno})", file=file,
                         line=exc.lineno) from None
    except InputError:
        raise
    except RecursionError:
        raise InputError(f"is not a config: nested more than {MAX_JSON_DEPTH} levels deep",
                         file=file) from None
    except ValueError as exc:
        raise InputError(f"is not valid JSON: {exc}", file=file) from None


def parse_model_config(data: Any, file: str | None = None, text: str = "",
                       name: str = "") -> Architecture:
    """Validate plain config data. Errors name the field (``num_key_value_heads``)."""
    reader = _Reader(data, file, text)
    return reader.architecture(name)


class _Reader:
    def __init__(self, data: Any, file: str | None, text: str) -> None:
        self.file = file
        self.text = text
        if not isinstance(data, dict):
            raise InputError("must be a JSON object of config fields", file=file)
        self.data = data
        if isinstance(data.get("text_config"), dict) and "hidden_size" not in data:
            self.data = {**data["text_config"], **{k: v for k, v in data.items()
                                                   if k in ("model_type", "architectures")}}

    def error(self, key: str, message: str) -> InputError:
        line = None
        if self.text:
            needle = f'"{key}"'
            for number, row in enumerate(self.text.splitlines(), 1):
                if needle in row:
                    line = number
                    break
        return InputError(message, file=self.file, line=line, path=(key,))

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def int(self, key: str, default: int | None = None, minimum: int = 1) -> int:
        value = self.data.get(key)
        if value is None:
            if default is not None:
                return default
            raise self.error(key, "missing (a required field of this architecture)")
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise self.error(key, f"must be a whole number, got {value!r}")
        if value < minimum:
            raise self.error(key, f"must be at least {minimum}, got {value}")
        maximum = CONFIG_MAXIMA.get(key, _DEFAULT_MAXIMUM)
        if value > maximum:
            raise self.error(key, f"is too large: at most {maximum:,}, got {value:,}")
        return value

    def bool(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {value!r}")
        return value

    def model_type(self) -> str:
        mt = self.data.get("model_type")
        if mt is None:
            archs = self.data.get("architectures")
            if isinstance(archs, list) and archs and archs[0] in _ARCH_TYPES:
                return _ARCH_TYPES[archs[0]]
            raise self.error("model_type", "missing (and no known architectures entry)")
        if not isinstance(mt, str):
            raise self.error("model_type", f"must be a string, got {mt!r}")
        if mt not in SUPPORTED:
            raise self.error("model_type", f"unknown architecture {mt!r} (supported: "
                                           f"{', '.join(SUPPORTED)})")
        return mt

    def architecture(self, name: str) -> Architecture:
        mt = self.model_type()
        hidden = self.int("hidden_size")
        layers = self.int("num_hidden_layers")
        heads = self.int("num_attention_heads")
        kv_heads = self.int("num_key_value_heads", heads)
        if heads % kv_heads:
            raise self.error("num_key_value_heads",
                             f"{kv_heads} does not divide num_attention_heads ({heads})")
        head_dim = self.int("head_dim", 0, minimum=0) or 0
        if not head_dim:
            if hidden % heads:
                raise self.error("head_dim", f"missing, and hidden_size ({hidden}) is not a "
                                             f"multiple of num_attention_heads ({heads})")
            head_dim = hidden // heads
        vocab = self.int("vocab_size")
        intermediate = self.int("intermediate_size")
        tied = self.bool("tie_word_embeddings", _TIED_DEFAULT.get(mt, False))
        activation = self._activation(mt)
        moe = self._moe(mt, layers)
        mla = self._mla(mt)
        source = self.data.get("_source")
        from workbench.io.limits import terminal_text

        window, local = self._sliding(mt, layers)
        return Architecture(  # (control characters in a name escaped: they break figures)
            name=terminal_text(name or str(self.data.get("_name_or_path") or mt))[:200],
            model_type=mt, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads,
            head_dim=head_dim, intermediate=intermediate, vocab=vocab, tied=tied,
            qk_norm=mt in ("qwen3", "qwen3_moe"),
            qkv_bias=self.bool("attention_bias", mt in ("qwen2", "qwen2_moe"))
            if mt in ("qwen2", "qwen2_moe") else False,
            norms_per_layer=4 if mt == "gemma2" else 2,
            activation=activation, moe=moe, mla=mla,
            source=terminal_text(source)[:2000] if isinstance(source, str) else "",
            sliding_window=window, local_layers=local, **self._max_positions())

    def _activation(self, mt: str) -> str:
        """The FFN's activation step: ``hidden_activation`` (Gemma's field) or ``hidden_act``,
        one of :data:`ACTIVATIONS`."""
        key = "hidden_activation" if self.has("hidden_activation") else "hidden_act"
        value = self.data.get(key)
        if value is None:
            return ACTIVATIONS[_ACTIVATION_DEFAULT.get(mt, "silu")]
        shown = repr(value if not isinstance(value, str) else value[:80])[:80]
        if not isinstance(value, str):
            raise self.error(key, f"must be the activation's name, got {shown}")
        if value not in ACTIVATIONS:
            raise self.error(key, f"unknown activation {shown}, not counted (known: "
                                  f"{', '.join(ACTIVATIONS)})")
        return ACTIVATIONS[value]

    def _max_positions(self) -> dict[str, Any]:
        """``max_position_embeddings``, or the rope scaling's original length × factor when
        that is longer (YaRN, dynamic NTK: the context the scaling stretches to)."""
        limit = self.int("max_position_embeddings", 0, minimum=0)
        source = "max_position_embeddings" if limit else ""
        scaling = self.data.get("rope_scaling")
        if isinstance(scaling, dict):
            original, factor = (scaling.get("original_max_position_embeddings"),
                                scaling.get("factor"))
            if isinstance(original, int) and not isinstance(original, bool) and original > 0 \
                    and isinstance(factor, int | float) and not isinstance(factor, bool) \
                    and 1 <= factor < 1e6 and original * factor > limit:
                limit = int(original * factor)
                source = (f"rope_scaling: original_max_position_embeddings {original:,} × "
                          f"factor {factor:g}")
        return {"max_positions": limit, "max_positions_source": source}

    def _sliding(self, mt: str, layers: builtins.int
                 ) -> tuple[builtins.int, tuple[builtins.int, ...]]:
        """The sliding window and the layers that use it, as each model's code decides:
        ``layer_types`` when the config lists them; Gemma-2 alternates (even layers local);
        Mistral and Mixtral slide in every layer when ``sliding_window`` is set; Qwen slides
        from ``max_window_layers`` on when ``use_sliding_window`` is true."""
        if self.data.get("sliding_window") is None or mt in ("deepseek_v2", "deepseek_v3",
                                                               "llama", "gemma"):
            return 0, ()
        window = self.int("sliding_window")
        types = self.data.get("layer_types")
        if types is not None:
            if not isinstance(types, list) or len(types) != layers or not all(
                    t in ("sliding_attention", "full_attention") for t in types):
                raise self.error("layer_types", f"must list {layers} entries, each "
                                                "sliding_attention or full_attention")
            return window, tuple(i for i, t in enumerate(types) if t == "sliding_attention")
        if mt == "gemma2":
            return window, tuple(range(0, layers, 2))
        if mt in ("mistral", "mixtral"):
            return window, tuple(range(layers))
        if mt.startswith("qwen"):
            if not self.bool("use_sliding_window", False):
                return 0, ()
            first = self.int("max_window_layers", layers, minimum=0)
            return window, tuple(range(min(first, layers), layers))
        return 0, ()

    def _moe(self, mt: str, layers: builtins.int) -> MoE | None:
        if mt == "mixtral":
            experts = self.int("num_local_experts")
            k = self.int("num_experts_per_tok")
            self._check_k(k, experts, "num_local_experts")
            return MoE(experts, k, self.int("intermediate_size"))
        if mt in ("qwen2_moe", "qwen3_moe"):
            experts = self.int("num_experts")
            k = self.int("num_experts_per_tok")
            self._check_k(k, experts, "num_experts")
            shared = self.int("shared_expert_intermediate_size", 0, minimum=0)
            if self.data.get("mlp_only_layers"):
                raise self.error("mlp_only_layers", "dense layers listed by index are not "
                                                    "supported (use decoder_sparse_step)")
            return MoE(experts, k, self.int("moe_intermediate_size"), shared,
                       every=self.int("decoder_sparse_step", 1), shared_gate=shared > 0)
        if mt in ("deepseek_v2", "deepseek_v3"):
            if not self.has("n_routed_experts"):
                return None
            experts = self.int("n_routed_experts")
            k = self.int("num_experts_per_tok")
            self._check_k(k, experts, "n_routed_experts")
            mi = self.int("moe_intermediate_size")
            shared = self.int("n_shared_experts", 0, minimum=0)
            first = self.int("first_k_dense_replace", 0, minimum=0)
            if first > layers:
                raise self.error("first_k_dense_replace",
                                 f"{first} is more than num_hidden_layers ({layers})")
            groups, topk_groups = self._groups(mt, experts, k)
            return MoE(experts, k, mi, shared * mi, first_dense=first,
                       every=self.int("moe_layer_freq", 1), router_bias=mt == "deepseek_v3",
                       groups=groups, topk_groups=topk_groups)
        return None

    def _groups(self, mt: str, experts: builtins.int, k: builtins.int
                ) -> tuple[builtins.int, builtins.int]:
        """DeepSeek's group-limited routing, as its gate runs it: with ``topk_method``
        ``group_limited_greedy`` (DeepSeek-V2) or ``noaux_tc`` (DeepSeek-V3, its default), a
        token picks ``topk_group`` of the ``n_group`` equal groups of experts, then its k
        experts among theirs; ``greedy`` (DeepSeek-V2's default) picks among all. ``(1, 1)``:
        no group limit."""
        method = self.data.get("topk_method", "noaux_tc" if mt == "deepseek_v3" else "greedy")
        if method not in ("group_limited_greedy", "noaux_tc") or not self.has("n_group"):
            return 1, 1
        groups = self.int("n_group")
        if experts % groups:
            raise self.error("n_group", f"must divide n_routed_experts ({experts}) into equal "
                                        f"groups, got {groups}")
        topk_groups = self.int("topk_group", groups)
        if topk_groups > groups:
            raise self.error("topk_group", f"{topk_groups} is more than n_group ({groups})")
        if k > topk_groups * (experts // groups):
            raise self.error("topk_group", f"{topk_groups} groups of {experts // groups} "
                                           f"experts hold fewer than num_experts_per_tok ({k})")
        return (1, 1) if topk_groups == groups else (groups, topk_groups)

    def _check_k(self, k: builtins.int, experts: builtins.int, field: str) -> None:
        """The MoE GEMM's own rule (top_k ≤ experts), said in the config's words."""
        from workbench.model.operations import cross_checks

        if cross_checks("moe_gemm", {"tokens": 1, "experts": experts, "top_k": k, "n": 1,
                                     "k": 1}):
            raise self.error("num_experts_per_tok", f"{k} is more than {field} ({experts})")

    def _mla(self, mt: str) -> MLA | None:
        if mt not in ("deepseek_v2", "deepseek_v3"):
            return None
        q_lora = self.data.get("q_lora_rank")
        return MLA(kv_lora_rank=self.int("kv_lora_rank"),
                   qk_nope_head_dim=self.int("qk_nope_head_dim"),
                   qk_rope_head_dim=self.int("qk_rope_head_dim"),
                   v_head_dim=self.int("v_head_dim"),
                   q_lora_rank=self.int("q_lora_rank") if q_lora is not None else None)
