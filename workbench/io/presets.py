"""What ships with the package: the hardware presets (one YAML file per machine in
``hardware_presets/``) and the example sessions."""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path

from workbench.io.errors import InputError
from workbench.io.schema import Place, parse_hardware
from workbench.io.yamlio import read_yaml
from workbench.model.hardware import Hardware

__all__ = ["presets_dir", "load_presets", "get_preset", "load_preset_file", "is_hand_made",
           "builtin_ids", "examples_dir", "list_examples", "DEFAULT_EXAMPLE"]

#: the example the application opens when given no session
DEFAULT_EXAMPLE = "llama_ffn.yaml"


def examples_dir() -> Path:
    """The example sessions' folder."""
    return Path(__file__).resolve().parent.parent / "examples"


def list_examples() -> list[tuple[str, Path]]:
    """``(title, path)`` for each example, read from the file's ``title:`` line (cheaply)."""
    out = []
    for path in sorted(examples_dir().glob("*.yaml")):
        title = path.stem.replace("_", " ")
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("title:"):
                    title = line.split(":", 1)[1].strip()
                    break
        out.append((title, path))
    return out


def presets_dir() -> Path:
    """Installed wheels carry the presets inside the package; a checkout has them at the top."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_data" / "hardware_presets", here.parent / "hardware_presets"):
        if candidate.is_dir():
            return candidate
    raise InputError("the hardware_presets folder is missing from this installation")


def load_preset_file(path: Path, shipped: bool = False) -> Hardware:
    """The machine of a preset file; ``shipped``: one of the package's own (its parse is
    kept: see :func:`~workbench.io.yamlio.read_yaml`)."""
    doc = read_yaml(path, "preset file", keep=shipped)
    hw = parse_hardware(doc.data, Place(doc))
    if hw.id != path.stem:
        raise doc.error(("id",), f"must match the file name {path.stem!r}, got {hw.id!r}")
    return hw


@lru_cache(maxsize=1)
def _all() -> dict[str, Hardware]:
    out = {}
    for path in sorted(presets_dir().glob("*.yaml")):
        hw = load_preset_file(path, shipped=True)
        out[hw.id] = hw
    return out


def load_presets() -> dict[str, Hardware]:
    """Every preset by id (fresh copies: callers may edit them)."""
    return {key: hw.copy() for key, hw in _all().items()}


def builtin_ids() -> frozenset[str]:
    """The ids of the built-in presets (the user's own are in
    :mod:`workbench.io.user_presets`)."""
    return frozenset(Path(name).stem for name in _file_names())


@lru_cache(maxsize=1)
def _file_names() -> frozenset[str]:
    return frozenset(path.name for path in presets_dir().glob("*.yaml"))


@cache
def _one(preset_id: str) -> Hardware:
    """One preset read alone: opening a session reads only the machines it names, not the
    whole folder (the file name is the id, checked by :func:`load_preset_file`)."""
    if _all.cache_info().currsize:
        return _all()[preset_id]
    name = f"{preset_id}.yaml"
    if name not in _file_names():
        raise KeyError(preset_id)
    return load_preset_file(presets_dir() / name, shipped=True)


def get_preset(preset_id: str) -> Hardware:
    if not isinstance(preset_id, str):
        raise KeyError(preset_id)
    return _one(preset_id).copy()


def is_hand_made(entry) -> bool:
    """Whether a session's machine (a :class:`~workbench.model.session.HardwareEntry`) was
    defined or edited by hand: not from a preset, or with figures that differ from its
    preset's (its name, derating and launch overhead may differ freely)."""
    if not entry.preset:
        return True
    try:
        base = get_preset(entry.preset)
    except KeyError:
        return True
    hw = entry.hardware
    return ((hw.compute, hw.vector_compute, hw.memory, hw.main_memory)
            != (base.compute, base.vector_compute, base.memory, base.main_memory))
