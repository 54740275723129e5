"""The user's own presets: machines measured on this computer (``roofline-workbench measure``).

They live in one folder, one YAML file per machine, in the same format as the built-in
presets plus a ``measurement:`` mapping that records how the figures were obtained (CPU,
cores, numpy and BLAS versions, date, method, the measured curves). The folder is
``$ROOFLINE_WORKBENCH_USER_PRESETS`` when set, else the platform's data folder:
``$XDG_DATA_HOME/roofline-workbench/presets`` (default ``~/.local/share/…``) on Linux,
``~/Library/Application Support/roofline-workbench/presets`` on macOS,
``%APPDATA%\\roofline-workbench\\presets`` on Windows.

:func:`all_presets` lists them after the built-in ones; a file whose id clashes with a
built-in preset, or that does not parse, is left out and reported by
:func:`user_preset_problems`. A session refers to built-in presets only: a user preset added
to a session is stored in it in full, so that the session file opens on any computer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workbench.io.atomic import user_folder
from workbench.io.errors import InputError
from workbench.io.schema import Place, expect_mapping, parse_hardware
from workbench.io.yamlio import dump_yaml, read_yaml
from workbench.model.hardware import Hardware

__all__ = ["USER_PRESETS_VARIABLE", "user_presets_dir", "load_user_presets", "all_presets",
           "find_preset",
           "user_preset_problems", "measurement_of", "load_machine_file", "save_machine",
           "machine_to_data", "is_measured"]

USER_PRESETS_VARIABLE = "ROOFLINE_WORKBENCH_USER_PRESETS"
PROVENANCE_KEY = "measurement"


def user_presets_dir() -> Path:
    override = os.environ.get(USER_PRESETS_VARIABLE)
    if override:
        return Path(override)
    return user_folder("data") / "presets"


def load_machine_file(path: str | os.PathLike[str]) -> tuple[Hardware, dict[str, Any]]:
    """A machine file (a preset, measured or not) and its provenance (``{}`` if none)."""
    doc = read_yaml(path, "preset file")
    place = Place(doc)
    data = expect_mapping(doc.data, place, "a machine")
    hw = parse_hardware(data, place, extra_keys=(PROVENANCE_KEY,))
    provenance = data.get(PROVENANCE_KEY) or {}
    expect_mapping(provenance, place.at(PROVENANCE_KEY),
                   "how the machine was measured: cpu, cores, date, method, curves")
    return hw, dict(provenance)


def _scan() -> tuple[dict[str, tuple[Hardware, dict[str, Any]]], list[str]]:
    from workbench.io.presets import builtin_ids

    folder = user_presets_dir()
    found: dict[str, tuple[Hardware, dict[str, Any]]] = {}
    problems: list[str] = []
    try:
        paths = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    except OSError as exc:
        return {}, [f"{folder}: cannot read the user presets folder: {exc}"]
    taken = builtin_ids()
    for path in paths:
        try:
            hw, provenance = load_machine_file(path)
        except InputError as exc:
            problems.append(str(exc))
            continue
        if hw.id != path.stem:
            problems.append(f"{path}: id: must match the file name {path.stem!r}, got {hw.id!r}")
        elif hw.id in taken:
            problems.append(f"{path}: id: {hw.id!r} is a built-in preset; rename the file "
                            "and its id")
        else:
            found[hw.id] = (hw, provenance)
    return found, problems


def load_user_presets() -> dict[str, Hardware]:
    """Every valid user preset by id (fresh objects, read from disk each call)."""
    return {key: hw for key, (hw, _) in _scan()[0].items()}


def all_presets() -> dict[str, Hardware]:
    """The built-in presets, then the user's own (fresh copies, read afresh: a machine just
    measured shows at once)."""
    from workbench.io.presets import load_presets

    return {**load_presets(), **load_user_presets()}


def find_preset(preset_id: str) -> Hardware:
    """A built-in preset, else a user preset, by id; ``KeyError`` when neither has it."""
    from workbench.io.presets import get_preset

    try:
        return get_preset(preset_id)
    except KeyError:
        found = load_user_presets().get(preset_id)
        if found is None:
            raise
        return found


def user_preset_problems() -> list[str]:
    """One message per user preset file left out, naming the file, key and problem."""
    return _scan()[1]


def measurement_of(preset_id: str) -> dict[str, Any] | None:
    """The provenance of a measured user preset, or ``None``."""
    path = user_presets_dir() / f"{preset_id}.yaml"
    if not path.is_file():
        return None
    try:
        hw, provenance = load_machine_file(path)
    except InputError:
        return None
    return provenance if hw.id == preset_id and provenance else None


def is_measured(preset_id: str | None) -> bool:
    return preset_id is not None and bool(preset_id) and measurement_of(preset_id) is not None


def machine_to_data(hw: Hardware, provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    from workbench.io.sessions import hardware_to_data  # (sessions imports presets)

    data = hardware_to_data(hw)
    if provenance:
        data[PROVENANCE_KEY] = _plain(provenance)
    return data


def _plain(value: Any) -> Any:
    """Plain YAML data: tuples as lists, numpy numbers as floats, keys as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    return float(value)


def save_machine(hw: Hardware, provenance: dict[str, Any] | None = None,
                 path: str | os.PathLike[str] | None = None) -> Path:
    """Write a machine file atomically; by default ``<id>.yaml`` in the user presets folder
    (created when missing). Returns the path written."""
    from workbench.io.atomic import write_atomic

    if path is None:
        folder = user_presets_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{hw.id}.yaml"
    path = Path(path)
    text = dump_yaml(machine_to_data(hw, provenance))
    write_atomic(path, text.encode("utf-8"))
    return path
