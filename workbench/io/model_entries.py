"""The ``models:`` list of a session file: whole models kept by their parameters.

    models:
      - config: Llama-3.1-8B      # a shipped config by name, or a path to a config.json
        name: Llama-3.1-8B decode # optional; operations are named "<name>: <operation>"
        phase: decode             # prefill | decode
        batch: 8
        prompt_len: 2048          # prefill length (and the default kv_len)
        kv_len: 4096              # decode: KV cache length
        weights: bf16             # bf16 fp16 fp8 int8 int4
        activations: bf16         # bf16 fp16 fp8 fp32
        kv_cache: bf16            # bf16 fp16 fp8 int8
        tp: 1                     # tensor-parallel degree
        quantize_embeddings: false
        imbalance: 1.3            # expert parallelism: the busiest chip's load × this (1)
        memory_utilization: 0.9   # the share of a chip's capacity a server uses (0.9)
        kv_block: 16              # paged KV cache block, tokens (16)
        prefill_chunk: 8192       # tokens of prefill whose activations are held (8192)
        all_reduce: auto          # auto | ring | one_shot | tree
        draft_tokens: 4           # speculative decoding: draft tokens per step (0: off)
        acceptance: 0.7           # the chance each draft token is accepted
        view: layers              # layers: one point per operation of a layer kind;
                                  # all: every operation of every layer
        visible: true
        colors: {gemm: '#0072B2', norm: '#E69F00'}   # optional: each kind's colour

Only ``config`` is required. A relative path is read relative to the session file's folder
and written relative to the folder of the file it is saved to (Save As to another folder
rewrites it); a shipped config is written by name. The
operations a model expands into are not written: they are expanded again on opening.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from workbench.io.errors import InputError
from workbench.io.model_configs import SHIPPED_DIR, read_model_config, shipped_configs
from workbench.io.schema import Place, check_keys, expect_bool, expect_mapping, expect_str
from workbench.model.limits import MAX_MODELS, TEXT_LIMITS
from workbench.model.llm.architecture import (
    ACTIVATION_DTYPES,
    ALL_REDUCE_ALGORITHMS,
    KV_DTYPES,
    PHASES,
    SERVING_NUMBERS,
    VIEWS,
    WEIGHT_DTYPES,
    Setup,
    SetupError,
    layer_steps,
)
from workbench.model.llm.session import SETUP_FIELDS, ModelEntry
from workbench.model.operations import KINDS

__all__ = ["MODEL_KEYS", "parse_model_entry", "model_entry_to_data", "MAX_MODELS", "config_ref"]

MODEL_KEYS = ("config", "name", *SETUP_FIELDS, "view", "visible", "colors")
_CHOICES = {"phase": PHASES, "weights": WEIGHT_DTYPES, "activations": ACTIVATION_DTYPES,
            "kv_cache": KV_DTYPES, "view": VIEWS, "all_reduce": ALL_REDUCE_ALGORITHMS}
#: Serving settings a file may leave out (older readers never saw them): written only when
#: they differ from the set-up's defaults.
_SERVING = ("imbalance", "memory_utilization", "kv_block", "prefill_chunk", "all_reduce",
            "draft_tokens", "acceptance")
MAX_LENGTH = 10_000_000
_DEFAULT = Setup()
_COLOR = re.compile(r"^#[0-9A-Fa-f]{6}$")


def _config_path(ref: str, session_file: str | None) -> str:
    """A relative config path is relative to the session file's folder (kept absolute in
    the open session, so that Save As can write it relative to the new folder); a shipped
    name stays a name, and so does a path into the shipped configs."""
    if ref in shipped_configs() or not session_file:
        return ref
    path = Path(ref)
    if not path.is_absolute() and not (Path(session_file).parent / path).exists():
        for name in shipped_configs():  # a shipped config's name in other letter case
            if name.lower() == ref.lower():
                return name
    if not path.is_absolute():
        path = Path(os.path.abspath(Path(session_file).parent)) / path
    path = Path(os.path.normpath(path))
    return shipped_name(path) or str(path)


def shipped_name(path: Path) -> str | None:
    """The name of the shipped config at ``path``, or ``None``."""
    if path.parent == SHIPPED_DIR and path.suffix == ".json" and path.is_file():
        return path.stem
    return None


def config_ref(config: str, session_file: str | os.PathLike[str] | None) -> str:
    """How a session file at ``session_file`` names a model's config: a shipped config by
    name, a config.json by its path relative to the session's folder (an absolute one
    when no relative path reaches it, as on another drive, or when the relative one is
    longer than a session file's path may be, as from a very deep folder)."""
    if config in shipped_configs():
        return config
    path = Path(config)
    if path.is_absolute():
        shipped = shipped_name(path)
        if shipped is not None:
            return shipped
        if session_file is not None:
            try:
                relative = Path(os.path.relpath(path, os.path.abspath(
                    Path(session_file).parent))).as_posix()
            except ValueError:  # (another drive)
                return config
            return relative if len(relative) <= TEXT_LIMITS["path"] else config
    return config


def parse_model_entry(item: Any, place: Place) -> ModelEntry:
    data = expect_mapping(item, place, "a model")
    check_keys(data, MODEL_KEYS, place)
    if data.get("config") is None:
        raise place.at("config").error("missing: a shipped config's name or a config.json path")
    config = expect_str(data["config"], place.at("config"), limit="path")
    config = _config_path(config, place.doc.file)
    if len(config) > TEXT_LIMITS["path"]:  # (as no session file could name it again)
        raise place.at("config").error(
            f"the config's full path is {len(config):,} characters "
            f"long; a session names a config by a path of at most {TEXT_LIMITS['path']:,} "
            "(move the session or the config to a shorter path)")
    if Path(config).is_absolute() and not Path(config).exists():
        raise place.at("config").error(
            f"no such file: looked for {config!r} (a config path is read relative to the "
            f"session file's folder), nor a shipped model config of that name (shipped: "
            f"{', '.join(shipped_configs())})")
    try:
        arch = read_model_config(config)
    except InputError as exc:
        raise place.at("config").error(str(exc)) from None
    values: dict[str, Any] = {}
    for key, choices in _CHOICES.items():
        if data.get(key) is not None:
            value = data[key]
            if value not in choices:
                raise place.at(key).error(f"must be one of {', '.join(choices)}, got {value!r}")
            values[key] = value
    for key in ("batch", "prompt_len", "kv_len", "tp", "ep", "pp", "kv_block",
                "prefill_chunk"):
        if data.get(key) is not None:
            value = data[key]
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise place.at(key).error(f"must be a positive integer, got {value!r}")
            if value > MAX_LENGTH:
                raise place.at(key).error(f"must be at most {MAX_LENGTH}, got {value}")
            values[key] = value
    for key in ("output_len", "draft_tokens"):
        if data.get(key) is None:
            continue
        value = data[key]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise place.at(key).error(f"must be a whole number ≥ 0, got {value!r}")
        if value > MAX_LENGTH:
            raise place.at(key).error(f"must be at most {MAX_LENGTH}, got {value}")
        values[key] = value
    for key, _low, _high, what in SERVING_NUMBERS:
        if data.get(key) is not None:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise place.at(key).error(f"must be {what}, got {value!r}")
            values[key] = float(value)
    if "kv_len" not in values and "prompt_len" in values:
        values["kv_len"] = values["prompt_len"]
    if data.get("quantize_embeddings") is not None:
        values["quantize_embeddings"] = expect_bool(data["quantize_embeddings"],
                                                    place.at("quantize_embeddings"))
    view = values.pop("view", "layers")
    setup = Setup(**values)
    try:
        layer_steps(arch, setup)  # (refuses a set-up the model cannot take, by name)
    except SetupError as exc:
        raise place.at(exc.field).error(exc.message) from None
    name = expect_str(data["name"], place.at("name"), allow_empty=True, limit="model") \
        if data.get("name") is not None else ""
    visible = expect_bool(data["visible"], place.at("visible")) \
        if data.get("visible") is not None else True
    colors = _parse_colors(data["colors"], place.at("colors")) \
        if data.get("colors") is not None else {}
    return ModelEntry(config, arch, setup, view=view, name=name, visible=visible, colors=colors)


def _parse_colors(value: Any, place: Place) -> dict[str, str]:
    """``{kind: '#RRGGBB'}``: the colour of each kind of operation of the model."""
    data = expect_mapping(value, place, "a mapping of operation kind to colour")
    out: dict[str, str] = {}
    for kind, color in data.items():
        if kind not in KINDS:
            raise place.error(f"unknown operation kind {kind!r} (kinds: {', '.join(KINDS)})")
        if not isinstance(color, str) or not _COLOR.match(color):
            raise place.at(kind).error(f"must be a colour like '#0072B2', got {color!r}")
        out[kind] = color
    return out


def model_entry_to_data(model: ModelEntry, session_file: str | os.PathLike[str] | None = None
                        ) -> dict[str, Any]:
    """A model as plain data; its config named as a session file at ``session_file``
    reads it (see :func:`config_ref`)."""
    out: dict[str, Any] = {"config": config_ref(model.config, session_file)}
    if model.name:
        out["name"] = model.name
    for key in SETUP_FIELDS:
        if key in ("output_len", "ep", "pp") and getattr(model.setup, key) in (0, 1):
            continue  # (the default: older readers never saw the key)
        if key in _SERVING and getattr(model.setup, key) == getattr(_DEFAULT, key):
            continue
        out[key] = getattr(model.setup, key)
    out["view"] = model.view
    if not model.visible:
        out["visible"] = False
    if model.colors:
        out["colors"] = dict(model.colors)
    return out
