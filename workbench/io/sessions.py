"""Session files (YAML): load with validation, save atomically, migrate older versions.

Format (``schema_version: 1``)::

    schema_version: 1
    title: Llama FFN, prefill vs decode
    hardware:
      - preset: h100-sxm            # an id from hardware_presets/, with optional overrides
        efficiency: 0.8
      - name: Toy accelerator       # or a machine defined in place
        compute: {fp16: 100 TFLOP/s}
        memory: {hbm: 1 TB/s}
    operations:
      - name: FFN up, prefill
        kind: gemm
        m: 8192
        n: 28672
        k: 8192
        dtype: bf16
        color: '#0072B2'            # optional display settings
        visible: true
        label: true
    view: {theme: light, legend: true, labels: true, regions: false, derated: false}
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.io.errors import InputError
from workbench.io.presets import get_preset
from workbench.io.schema import (
    HARDWARE_KEYS,
    Place,
    check_keys,
    expect_bool,
    expect_list,
    expect_mapping,
    expect_quantity,
    expect_str,
    parse_hardware,
    parse_operation,
)
from workbench.io.yamlio import YamlDocument, dump_yaml, parse_yaml, read_yaml
from workbench.model.hardware import Hardware
from workbench.model.session import (
    MARKERS,
    THEMES,
    HardwareEntry,
    OperationEntry,
    Session,
    ViewSettings,
)
from workbench.model.units import format_quantity

__all__ = [
    "SCHEMA_VERSION",
    "MIGRATIONS",
    "load_session",
    "loads_session",
    "session_from_document",
    "session_to_data",
    "dumps_session",
    "save_session",
    "MAX_OPERATIONS",
]

SCHEMA_VERSION = 1
MAX_OPERATIONS = 100_000
MAX_HARDWARE = 64

#: ``MIGRATIONS[v]`` turns a version-``v`` document (plain dict) into a version ``v + 1`` one.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

TOP_KEYS = ("schema_version", "title", "notes", "hardware", "operations", "view")
PRESET_OVERRIDES = ("name", "efficiency", "launch_overhead")
ENTRY_KEYS = ("visible", "marker")
VIEW_KEYS = ("theme", "legend", "labels", "regions", "derated", "all_precisions", "x_range",
             "y_range")


def load_session(path: str | os.PathLike[str]) -> Session:
    """Read and validate a session file; every problem is an :class:`InputError`."""
    return session_from_document(read_yaml(path))


def loads_session(text: str | bytes, name: str | None = None) -> Session:
    return session_from_document(parse_yaml(text, name))


def migrate(data: dict[str, Any], doc: YamlDocument) -> dict[str, Any]:
    version = data.get("schema_version")
    if version is None:
        raise doc.error((), "missing schema_version (this version of Roofline Workbench reads "
                            f"schema_version {SCHEMA_VERSION})")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise doc.error(("schema_version",), f"must be a whole number ≥ 1, got {version!r}")
    if version > SCHEMA_VERSION:
        raise doc.error(("schema_version",),
                        f"this file is schema_version {version}, written by a newer Roofline "
                        f"Workbench; this version reads schema_version {SCHEMA_VERSION} and "
                        "older")
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
        data["schema_version"] = version
    return data


def session_from_document(doc: YamlDocument) -> Session:
    root = Place(doc)
    if doc.data is None:
        raise root.error("the file is empty (a session needs at least schema_version: 1)")
    data = dict(expect_mapping(doc.data, root, "a session"))
    data = migrate(data, doc)
    check_keys(data, TOP_KEYS, root)
    session = Session()
    if data.get("title") is not None:
        session.title = expect_str(data["title"], root.at("title"), allow_empty=True, limit=300)
    if data.get("notes") is not None:
        session.notes = expect_str(data["notes"], root.at("notes"), allow_empty=True,
                                   limit=100_000)
    hardware = expect_list(data.get("hardware") or [], root.at("hardware"), "of machines")
    if len(hardware) > MAX_HARDWARE:
        raise root.at("hardware").error(f"has {len(hardware)} machines; at most {MAX_HARDWARE}")
    for i, item in enumerate(hardware):
        session.hardware.append(_parse_hardware_entry(item, root.at("hardware", i)))
    operations = expect_list(data.get("operations") or [], root.at("operations"),
                             "of operations")
    if len(operations) > MAX_OPERATIONS:
        raise root.at("operations").error(
            f"has {len(operations)} operations; at most {MAX_OPERATIONS}")
    for i, item in enumerate(operations):
        op, style = parse_operation(item, root.at("operations", i))
        session.operations.append(OperationEntry(op, **style))
    if data.get("view") is not None:
        session.view = _parse_view(data["view"], root.at("view"))
    return session


def _parse_hardware_entry(item: Any, place: Place) -> HardwareEntry:
    item = expect_mapping(item, place, "a machine: preset: ID, or name, compute and memory")
    entry_opts = {}
    if "visible" in item:
        entry_opts["visible"] = expect_bool(item["visible"], place.at("visible"))
    if item.get("marker") is not None:
        if item["marker"] not in MARKERS:
            raise place.at("marker").error(f"must be one of: {', '.join(MARKERS)}")
        entry_opts["marker"] = item["marker"]
    if "preset" in item:
        check_keys(item, ("preset",) + PRESET_OVERRIDES + ENTRY_KEYS, place)
        preset_id = item["preset"]
        try:
            hw = get_preset(str(preset_id))
        except KeyError:
            from workbench.io.presets import load_presets

            raise place.at("preset").error(
                f"unknown preset {preset_id!r}; presets: {', '.join(load_presets())}") from None
        if item.get("name") is not None:
            hw.name = expect_str(item["name"], place.at("name"), limit=120)
        if item.get("efficiency") is not None:
            hw.efficiency = expect_quantity(item["efficiency"], "count", place.at("efficiency"))
            if hw.efficiency > 1:
                raise place.at("efficiency").error("must be a fraction in (0, 1]")
        if "launch_overhead" in item:
            value = item["launch_overhead"]
            hw.launch_overhead = (None if value is None else expect_quantity(
                value, "time", place.at("launch_overhead"), positive=False, minimum=0.0) or None)
        return HardwareEntry(hw, preset=hw.id, **entry_opts)
    hw = parse_hardware(item, place, extra_keys=ENTRY_KEYS + ("based_on",))
    return HardwareEntry(hw, preset=None, **entry_opts)


def _parse_view(value: Any, place: Place) -> ViewSettings:
    data = expect_mapping(value, place, "view settings")
    check_keys(data, VIEW_KEYS, place)
    view = ViewSettings()
    if "theme" in data:
        if data["theme"] not in THEMES:
            raise place.at("theme").error(f"must be one of: {', '.join(THEMES)}")
        view.theme = data["theme"]
    for key in ("legend", "labels", "regions", "derated", "all_precisions"):
        if key in data:
            setattr(view, key, expect_bool(data[key], place.at(key)))
    for key in ("x_range", "y_range"):
        if data.get(key) is not None:
            pair = expect_list(data[key], place.at(key), "[low, high]")
            if len(pair) != 2:
                raise place.at(key).error("must be [low, high]")
            low = expect_quantity(pair[0], "count", place.at(key, 0))
            high = expect_quantity(pair[1], "count", place.at(key, 1))
            if not low < high:
                raise place.at(key).error("low must be below high")
            setattr(view, key, (low, high))
    return view


# ---------------------------------------------------------------------------------------------
# writing


def _q(value: float, unit: str) -> str:
    return format_quantity(value, unit, digits=12)


def hardware_to_data(hw: Hardware) -> dict[str, Any]:
    out: dict[str, Any] = {"name": hw.name}
    if hw.id:
        out["id"] = hw.id
    if hw.vendor:
        out["vendor"] = hw.vendor
    if hw.kind and hw.kind != "custom":
        out["kind"] = hw.kind
    out["compute"] = {k: _q(v, "flop_rate") for k, v in hw.compute.items()}
    out["memory"] = {k: _q(v, "bandwidth") for k, v in hw.memory.items()}
    out["main_memory"] = hw.main_memory
    if hw.capacity:
        out["capacity"] = _q(hw.capacity, "bytes")
    if hw.interconnect:
        out["interconnect"] = {k: _q(v, "bandwidth") for k, v in hw.interconnect.items()}
    if hw.launch_overhead:
        out["launch_overhead"] = _q(hw.launch_overhead, "time")
    if hw.efficiency:
        out["efficiency"] = hw.efficiency
    if hw.sparse_halved:
        out["sparse_halved"] = True
    if hw.sources:
        out["sources"] = list(hw.sources)
    if hw.notes:
        out["notes"] = hw.notes
    return out


def _hardware_entry_to_data(entry: HardwareEntry) -> dict[str, Any]:
    hw = entry.hardware
    out: dict[str, Any] | None = None
    if entry.preset:
        try:
            base = get_preset(entry.preset)
        except KeyError:
            base = None
        if base is not None:
            comparable = hw.copy(name=base.name, efficiency=base.efficiency,
                                 launch_overhead=base.launch_overhead)
            if comparable == base:
                out = {"preset": entry.preset}
                for key in PRESET_OVERRIDES:
                    mine, theirs = getattr(hw, key), getattr(base, key)
                    if mine != theirs:
                        out[key] = (_q(mine, "time") if key == "launch_overhead" and mine
                                    else mine)
    if out is None:
        out = hardware_to_data(hw)
        if entry.preset:
            out.pop("id", None)
            out["based_on"] = entry.preset
    if not entry.visible:
        out["visible"] = False
    if entry.marker:
        out["marker"] = entry.marker
    return out


def operation_entry_to_data(entry: OperationEntry) -> dict[str, Any]:
    op = entry.operation
    out: dict[str, Any] = {"name": op.name, "kind": op.kind}
    for p in op.spec.params:
        if p.name in op.params and op.params[p.name] is not None:
            value = op.params[p.name]
            if p.name == "steps":
                value = [dict(step) for step in value]
            out[p.name] = value
    if op.memory_level:
        out["memory_level"] = op.memory_level
    if entry.color:
        out["color"] = entry.color
    if not entry.visible:
        out["visible"] = False
    if not entry.label:
        out["label"] = False
    return out


def session_to_data(session: Session) -> dict[str, Any]:
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if session.title:
        out["title"] = session.title
    if session.notes:
        out["notes"] = session.notes
    out["hardware"] = [_hardware_entry_to_data(e) for e in session.hardware]
    out["operations"] = [operation_entry_to_data(e) for e in session.operations]
    defaults = ViewSettings()
    view = {k: (list(v) if isinstance(v, tuple) else v) for k, v in session.view.as_dict().items()
            if v != getattr(defaults, k)}
    if view:
        out["view"] = view
    return out


def dumps_session(session: Session) -> str:
    return dump_yaml(session_to_data(session))


def save_session(session: Session, path: str | os.PathLike[str], backup: bool = True) -> None:
    """Write atomically: a temporary file in the same folder, flushed to disk, then renamed
    over the target. The previous version is kept as ``NAME.bak``. A crash at any moment
    leaves either the old file or the new one, never a mixture."""
    text = dumps_session(session)
    write_atomic(Path(path), text.encode("utf-8"), backup=backup)


def write_atomic(path: Path, payload: bytes, backup: bool = True) -> None:
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    for stale in folder.glob(f".{path.name}.*.tmp"):  # left by a save that was killed
        try:
            stale.unlink()
        except OSError:
            pass
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if backup and path.exists():
            bak = path.with_name(path.name + ".bak")
            try:
                _copy_for_backup(path, bak)
            except OSError:
                pass
        os.replace(tmp_name, path)
        _fsync_dir(folder)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise


def _copy_for_backup(src: Path, dst: Path) -> None:
    # A hard link is instant and leaves ``src`` in place until the atomic rename.
    try:
        if dst.exists():
            dst.unlink()
        os.link(src, dst)
    except OSError:
        import shutil

        shutil.copy2(src, dst)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def ensure_error(exc: Exception, file: str | None) -> InputError:
    if isinstance(exc, InputError):
        return exc
    return InputError(str(exc), file)


_ = HARDWARE_KEYS  # re-exported for the hardware editor
