"""Session files (YAML): load with validation, save atomically, migrate older versions.

Format (``schema_version: 2``)::

    schema_version: 2
    title: Llama FFN, prefill vs decode
    hardware:
      - preset: h100-sxm            # an id from hardware_presets/, with optional overrides
        efficiency: 0.8
      - name: Toy accelerator       # or a machine defined in place
        compute: {fp16: 100 TFLOP/s}          # matrix units (tensor cores, MXU, AMX)
        vector_compute: {fp16: 25 TFLOP/s}    # optional: vector units (elementwise work)
        memory: {hbm: 1 TB/s, l2: 5 TB/s}
        capacity: 16 GiB                      # binary prefixes are powers of two
        measured: [memory.l2]                 # optional: figures measured, not specified
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
        sweep: {param: m, start: 1, stop: 4096, num: 13, scale: log}   # optional
    measurements:                   # optional: measured points (predict, then verify)
      - name: FFN up, cuBLAS
        operation: FFN up, prefill  # an operation of this session, by name; omit: standalone
        hardware: h100-sxm          # a machine's name, preset id or id; omit: every machine
        time: 4.86 ms               # or achieved: 790 TFLOP/s
        bytes: 1.2 GB               # optional measured FLOPs / bytes (required if standalone)
    comparisons:                    # optional: pairs drawn linked (fused vs unfused, …)
      - {first: gelu chain, unfused, second: gelu chain, fused}
    models:                         # optional: whole LLMs from a config.json
      - config: Llama-3.1-8B        # a shipped config by name, or a config.json path
        phase: decode               # prefill | decode
        batch: 8
        kv_len: 4096                # (prompt_len for prefill)
        weights: bf16               # also activations, kv_cache, tp, quantize_embeddings
        view: layers                # layers (one point per layer kind) | all (every op)
    view: {theme: light, legend: true, labels: true, regions: false, derated: false}

Every dimension without a neutral value must be given (GEMM ``m``, ``n``, ``k``; attention
``heads``, ``head_dim``, ``query_len``, ``kv_len``; elementwise ``n`` and ``steps``; norm
``rows``, ``hidden``; softmax ``rows``, ``cols``; reduction ``n``; custom ``flops``,
``bytes``; sharded matmul ``b``, ``d``, ``f``, ``chips``: each kind's
:attr:`~workbench.model.operations.Kind.required`); a missing one is an error naming it.
Parameters with a neutral value (``batch: 1``, ``kv_heads`` = ``heads``, ``causal: false``,
``fused: false``, …) may be left out. A ``schema_version: 1`` file, which filled missing
dimensions with example values, loads as it always did (the derivation lists each value
taken by default) and is saved as version 2, with every required dimension written.

Models (``models:``) keep a whole model by its parameters (every key is described in
:mod:`workbench.io.model_entries`); the operations they expand into are not written but
expanded again on opening, named ``<model name>: <operation>``.

Colours belong to operations: an operation's ``color`` is written whenever it differs from
the palette colour of its place in the list, which is what an operation without one takes on
opening (so a file written before colours moved with their operations reads as it always
did). A model's ``colors`` (``{kind: colour}``) keeps the colour of each kind of its
operations.

Sweeps (``sweep:`` on an operation) and measurements (the top-level ``measurements:`` list)
are optional keys added within ``schema_version: 1``: every file written before them loads
unchanged, and a file without them is written exactly as before. A sweep is
``{param: NAME, values: [v, …]}`` or ``{param: NAME, start: A, stop: B, num: N,
scale: linear|log}`` (scale defaults to linear) for any numeric parameter of the operation's
kind. A measurement needs ``name`` and ``time`` (or ``achieved``); a standalone one (no
``operation``) also needs ``flops`` and ``bytes``, and may give ``precision`` (default bf16)
for its ceiling; ``source`` is free text (the file or profiler it came from). A compared
pair (``comparisons:``) names two operations of the session, ``first`` the baseline.
"""

from __future__ import annotations

import errno
import operator
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.io.atomic import write_atomic
from workbench.io.errors import InputError, ReadProgress, SaveCancelled
from workbench.io.limits import Shape, no_cyclic_gc
from workbench.io.presets import examples_dir, get_preset
from workbench.io.schema import (
    HARDWARE_KEYS,
    Place,
    check_keys,
    check_param,
    expect_bool,
    expect_list,
    expect_mapping,
    expect_quantity,
    expect_str,
    parse_hardware,
    parse_operation,
)
from workbench.io.yamlio import (
    MAX_SESSION_BYTES,
    YamlDocument,
    dump_yaml,
    parse_yaml,
    plain_data,
    read_yaml,
)
from workbench.model.dtypes import PRECISIONS
from workbench.model.hardware import Hardware
from workbench.model.limits import (
    MAX_COMPARISONS,
    MAX_MACHINES,
    MAX_MEASUREMENTS,
    MAX_MODELS,
    MAX_OPERATIONS,
    model_problem,
    sweep_total_problem,
)
from workbench.model.operations import Operation
from workbench.model.session import (
    MARKERS,
    PALETTE,
    THEMES,
    Comparison,
    HardwareEntry,
    OperationEntry,
    Session,
    ViewSettings,
)
from workbench.model.units import BINARY, format_quantity
from workbench.records import record

if TYPE_CHECKING:
    from workbench.model.measured import Measurement
    from workbench.model.sweeps import Sweep

# Sweeps' and measurements' modules are imported by the functions that read or write one,
# when a session has any: the built-in example starts without them.

__all__ = [
    "SCHEMA_VERSION",
    "MIGRATIONS",
    "load_session",
    "loads_session",
    "session_from_document",
    "session_to_data",
    "dumps_session",
    "save_session",
    "save_snapshot",
    "SessionSnapshot",
    "snapshot_session",
    "snapshot_text",
    "PointTexts",
    "PointValues",
    "MAX_OPERATIONS",
]

SCHEMA_VERSION = 2

def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 requires every dimension without a neutral value (GEMM k, attention
    kv_len, …), which version 1 filled with example values. Nothing in a version-1 document
    changes: it is read without that requirement (see :func:`session_from_document`), so it
    loads with the values it always had, and the derivation lists each default taken."""
    return data


#: ``MIGRATIONS[v]`` turns a version-``v`` document (plain dict) into a version ``v + 1`` one.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}

TOP_KEYS = ("schema_version", "title", "notes", "hardware", "operations", "models",
            "measurements", "comparisons", "view", "prediction")
PREDICTION_KEYS = ("model", "launches")
COMPARISON_KEYS = ("first", "second")
SWEEP_KEYS = ("param", "values", "start", "stop", "num", "scale")
MEASUREMENT_KEYS = ("name", "operation", "hardware", "time", "achieved", "flops", "bytes",
                    "precision", "source", "levels", "unit", "count", "run")
#: Measurement fields and the keys they are written under.
_MEASUREMENT_FIELDS = {"name": "name", "operation": "operation", "hardware": "hardware",
                       "time_s": "time", "achieved_flops": "achieved", "flops": "flops",
                       "bytes": "bytes", "precision": "precision", "source": "source",
                       "levels": "levels", "unit": "unit", "count": "count", "run": "run"}
PRESET_OVERRIDES = ("name", "efficiency", "launch_overhead", "calibration", "runtime_reserve")
ENTRY_KEYS = ("visible", "marker")
VIEW_FLAGS = ("legend", "labels", "regions", "derated", "all_precisions", "all_levels",
              "sweeps", "measured", "pairs")
VIEW_KEYS = ("theme", *VIEW_FLAGS, "x_range", "y_range", "level", "top")
VIEW_LEVELS = ("l1", "l2", "dram", "all")
MAX_VIEW_TOP = 100_000


def _session_shape() -> Shape:
    """What a session file may hold, checked as its text streams by, before any object is
    built: its keys (an operation's: those of any kind), the length of its lists, and a
    sweep's values."""
    # (whole models' modules are imported only for a session long enough to be checked, or
    # one that holds a model: not at start-up)
    from workbench.io.model_entries import MODEL_KEYS
    from workbench.io.schema import CALIBRATION_KEYS, OPERATION_KEYS
    from workbench.model.operations import KINDS
    from workbench.model.sweeps import MAX_SWEEP_POINTS

    op_keys = {*OPERATION_KEYS, "sweep"}
    for spec in KINDS.values():
        op_keys.update(spec.param_names)
    sweep = Shape(frozenset(SWEEP_KEYS), children={
        "values": Shape(most=MAX_SWEEP_POINTS, what="values")})
    machine = Shape(frozenset({*HARDWARE_KEYS, "preset", "based_on", *PRESET_OVERRIDES,
                               *ENTRY_KEYS}),
                    children={"calibration": Shape(frozenset(CALIBRATION_KEYS))})
    return Shape(frozenset(TOP_KEYS), children={
        "operations": Shape(most=MAX_OPERATIONS, what="operations",
                            item=Shape(frozenset(op_keys), children={"sweep": sweep})),
        "measurements": Shape(most=MAX_MEASUREMENTS, what="measurements",
                              item=Shape(frozenset(MEASUREMENT_KEYS))),
        "hardware": Shape(most=MAX_MACHINES, what="machines", item=machine),
        "comparisons": Shape(most=MAX_COMPARISONS, what="pairs",
                             item=Shape(frozenset(COMPARISON_KEYS))),
        "models": Shape(most=MAX_MODELS, what="models", item=Shape(frozenset(MODEL_KEYS))),
        "view": Shape(frozenset(VIEW_KEYS)),
        "prediction": Shape(frozenset(PREDICTION_KEYS)),
    })


_SHAPE: list[Shape] = []


def session_shape() -> Shape:
    """The :class:`Shape` of a session file (built once)."""
    if not _SHAPE:
        _SHAPE.append(_session_shape())
    return _SHAPE[0]


def load_session(path: str | os.PathLike[str], warnings: list[str] | None = None,
                 progress: Callable[[float], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> Session:
    """Read and validate a session file; every problem is an :class:`InputError`.
    ``warnings``, when given, receives one line per value the file leaves to a default that
    a current file must give (see :func:`session_from_document`). Unknown keys and lists
    past their limits are refused as the text streams by, before anything is built. An
    example that ships with the package, however it is reached, has its parse kept (see
    :func:`~workbench.io.yamlio.read_yaml`). ``progress(fraction)`` is told how far the
    read has come and ``cancelled()`` asked whether to stop it, every few thousand values
    (:class:`~workbench.io.errors.ReadCancelled`)."""
    shipped = Path(path).resolve().parent == examples_dir()
    steps = (ReadProgress(progress, cancelled, str(path))
             if progress is not None or cancelled is not None else None)
    # (the shares of the steps: their times for a session of many measured points)
    read, built = ((steps.part(0.0, 0.68), steps.part(0.68, 1.0)) if steps is not None
                   else (None, None))
    with no_cyclic_gc():  # (a session of 10⁵ measured points: millions of nodes kept)
        doc = read_yaml(path, limit=MAX_SESSION_BYTES, shape=session_shape, keep=shipped,
                        progress=read)  # (``read`` asks ``cancelled``)
        return session_from_document(doc, warnings, built)


def loads_session(text: str | bytes, name: str | None = None,
                  warnings: list[str] | None = None) -> Session:
    with no_cyclic_gc():
        return session_from_document(parse_yaml(text, name, MAX_SESSION_BYTES,
                                                session_shape), warnings)


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


def session_from_document(doc: YamlDocument, warnings: list[str] | None = None,
                          steps: Callable[[float], None] | None = None) -> Session:
    """The session a document holds. A ``schema_version: 1`` file may leave out a required
    dimension (GEMM ``k``, attention ``kv_len``, …) and get its example value; each such
    value is added to ``warnings`` (when given) as one line naming the file, the line and the
    key: ``old.yaml:12: operations[2].k: not given; k = 4096 assumed …``. ``steps`` is told
    the fraction of the measured points read, every few thousand (see
    :class:`~workbench.io.errors.ReadProgress`)."""
    root = Place(doc)
    if doc.data is None:
        raise root.error("the file is empty (a session needs at least schema_version: 1)")
    data = dict(expect_mapping(doc.data, root, "a session"))
    written_as = data.get("schema_version")
    data = migrate(data, doc)
    # files from before required dimensions fill them with the old example values
    require = not (isinstance(written_as, int) and written_as < 2)
    check_keys(data, TOP_KEYS, root)
    session = Session()
    if data.get("title") is not None:
        session.title = expect_str(data["title"], root.at("title"), allow_empty=True,
                                   limit="title")
    if data.get("notes") is not None:
        session.notes = expect_str(data["notes"], root.at("notes"), allow_empty=True,
                                   limit="notes")
    hardware = data.get("hardware")
    hardware = [] if hardware is None else expect_list(hardware, root.at("hardware"),
                                                       "of machines")
    if len(hardware) > MAX_MACHINES:
        raise root.at("hardware").error(f"has {len(hardware)} machines; at most {MAX_MACHINES}")
    for i, item in enumerate(hardware):
        session.hardware.append(_parse_hardware_entry(item, root.at("hardware", i)))
    _parse_prediction(data.get("prediction") or {}, session, root.at("prediction"))
    operations = data.get("operations")
    operations = [] if operations is None else expect_list(operations, root.at("operations"),
                                                           "of operations")
    if len(operations) > MAX_OPERATIONS:
        raise root.at("operations").error(
            f"has {len(operations)} operations; at most {MAX_OPERATIONS}")
    _check_sweep_total(operations, root.at("operations"))
    checked: dict[tuple, list[tuple[str, str]]] = {}  # (repeated operations counted once)
    for i, item in enumerate(operations):
        place = root.at("operations", i)
        sweep_data = None
        if isinstance(item, dict) and "sweep" in item:
            item = dict(item)
            sweep_data = item.pop("sweep")
        op, style = parse_operation(item, place, require=require, checked=checked)
        if not require and warnings is not None:
            warnings.extend(_assumed(op, place))
        entry = OperationEntry(op, **style)
        if sweep_data is not None:
            entry.sweep = _parse_sweep(sweep_data, op, place.at("sweep"))
        session.operations.append(entry)
    session.give_colors()  # an operation without a colour keeps the one of its place
    models = data.get("models")
    if models is not None:
        from workbench.io.model_entries import parse_model_entry
        from workbench.model.llm.session import expand_in

        models = expect_list(models, root.at("models"), "of models")
        if len(models) > MAX_MODELS:
            raise root.at("models").error(f"has {len(models)} models; at most {MAX_MODELS}")
        for i, item in enumerate(models):
            model = parse_model_entry(item, root.at("models", i))
            expanded = expand_in(session, model)
            problem = model_problem(len(expanded), len(session.operations))
            if problem:
                raise root.at("models", i).error(problem)
            session.models.append(model)
            session.operations.extend(expanded)
    measurements = data.get("measurements")
    measurements = [] if measurements is None else expect_list(
        measurements, root.at("measurements"), "of measured points")
    if len(measurements) > MAX_MEASUREMENTS:
        raise root.at("measurements").error(
            f"has {len(measurements)} measurements; at most {MAX_MEASUREMENTS}")
    for i, item in enumerate(measurements):
        if steps is not None and not i % _POINTS_PER_STEP:
            steps(i / len(measurements))
        session.measurements.append(
            _parse_measurement(item, session, root.at("measurements", i)))
    comparisons = data.get("comparisons")
    comparisons = [] if comparisons is None else expect_list(
        comparisons, root.at("comparisons"), "of compared pairs")
    if len(comparisons) > MAX_COMPARISONS:
        raise root.at("comparisons").error(
            f"has {len(comparisons)} pairs; at most {MAX_COMPARISONS}")
    for i, item in enumerate(comparisons):
        session.comparisons.append(_parse_comparison(item, session, root.at("comparisons", i)))
    if data.get("view") is not None:
        session.view = _parse_view(data["view"], root.at("view"))
    return session


#: how many measured points are read (or written) between two reports of the progress
_POINTS_PER_STEP = 2048


def _check_sweep_total(operations: list[Any], place: Place) -> None:
    """Refuse sweeps of more points in all than a session holds, before any is expanded
    (each point is a row of the results on every machine)."""
    total = 0
    first = None
    for i, item in enumerate(operations):
        sweep = item.get("sweep") if isinstance(item, dict) else None
        if not isinstance(sweep, dict):
            continue
        values, num = sweep.get("values"), sweep.get("num")
        points = (len(values) if isinstance(values, list)
                  else num if isinstance(num, int) and not isinstance(num, bool) and num > 0
                  else 0)
        if points and first is None:
            first = i
        total += points
    problem = sweep_total_problem(total)
    if problem:
        raise place.at(first, "sweep").error(problem)


def _parse_prediction(value: Any, session: Session, place: Place) -> None:
    """``prediction: {model: derated|calibrated, launches: auto|kernel|eager|graph}``: the
    session's choice, given to every machine (see :mod:`workbench.model.prediction`); a
    session that names none predicts calibrated with ``auto`` launches."""
    from workbench.model.prediction import (
        DEFAULT_LAUNCHES,
        DEFAULT_PREDICTION,
        LAUNCHES,
        PREDICTIONS,
    )

    data = expect_mapping(value, place, "model: derated or calibrated, launches: auto, "
                                        "kernel, eager or graph")
    check_keys(data, PREDICTION_KEYS, place)
    model = data.get("model", DEFAULT_PREDICTION)
    if model not in PREDICTIONS:
        raise place.at("model").error(f"must be one of: {', '.join(PREDICTIONS)}, "
                                      f"not {model!r}")
    launches = data.get("launches", DEFAULT_LAUNCHES if model == DEFAULT_PREDICTION else "eager")
    if launches not in LAUNCHES:
        raise place.at("launches").error(f"must be one of: {', '.join(LAUNCHES)}, "
                                         f"not {launches!r}")
    for entry in session.hardware:
        entry.hardware.prediction = model
        entry.hardware.launches = launches


def _assumed(op: Operation, place: Place) -> list[str]:
    """One line per required dimension ``op`` does not give (a version-1 file's)."""
    out = []
    resolved = None
    for param in op.spec.params:
        if not param.required or op.params.get(param.name) is not None:
            continue
        resolved = resolved or op.resolved()
        value = resolved[param.name]
        if param.name == "steps":
            shown = " → ".join(step["op"] for step in value)
        elif param.type == "quantity":
            shown = format_quantity(value, param.unit or "count")
        else:
            shown = str(value)
        out.append(str(place.at(param.name).error(
            f"not given; {param.name} = {shown} assumed (the example value schema_version 1 "
            f"files get; write {param.name}, or save the session to write it)")))
    return out


def _parse_comparison(value: Any, session: Session, place: Place) -> Comparison:
    data = expect_mapping(value, place, "a compared pair: first and second operation names")
    check_keys(data, COMPARISON_KEYS, place)
    names: list[str] = []
    for key in COMPARISON_KEYS:
        if data.get(key) is None:
            raise place.error(f"a compared pair needs {key}: the name of an operation")
        name = expect_str(data[key], place.at(key), limit="operation")
        if session.operation_named(name) is None:
            raise place.at(key).error(f"no operation is named {name!r}")
        names.append(name)
    if names[0] == names[1]:
        raise place.at("second").error("must name a different operation from first")
    return Comparison(names[0], names[1])


def _parse_hardware_entry(item: Any, place: Place) -> HardwareEntry:
    item = expect_mapping(item, place, "a machine: preset: ID, or name, compute and memory")
    entry_opts: dict[str, Any] = {}
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
            hw.name = expect_str(item["name"], place.at("name"), limit="machine")
        if "efficiency" in item:  # null removes the preset's derating
            value = item["efficiency"]
            hw.efficiency = (None if value is None else
                             expect_quantity(value, "count", place.at("efficiency")))
            if hw.efficiency is not None and hw.efficiency > 1:
                raise place.at("efficiency").error("must be a fraction in (0, 1]")
        if "launch_overhead" in item:
            value = item["launch_overhead"]
            hw.launch_overhead = (None if value is None else expect_quantity(
                value, "time", place.at("launch_overhead"), positive=False, minimum=0.0) or None)
        if item.get("runtime_reserve") is not None:
            hw.runtime_reserve = expect_quantity(item["runtime_reserve"], "bytes",
                                                 place.at("runtime_reserve"), positive=False,
                                                 minimum=0.0)
        if item.get("calibration") is not None:  # the preset's figures, some changed
            from workbench.io.schema import parse_calibration

            hw.calibration = parse_calibration(item["calibration"], place.at("calibration"),
                                               hw.calibration)
        return HardwareEntry(hw, preset=hw.id, **entry_opts)
    hw = parse_hardware(item, place, extra_keys=ENTRY_KEYS + ("based_on",))
    based_on = item.get("based_on")
    if based_on is not None:
        based_on = expect_str(based_on, place.at("based_on"), limit=80)
    return HardwareEntry(hw, preset=based_on, **entry_opts)


def _parse_sweep(value: Any, op: Operation, place: Place) -> Sweep:
    from workbench.model.sweeps import MAX_SWEEP_POINTS, SCALES, Range, Sweep, SweepError

    data = expect_mapping(value, place, "a sweep: param and values, or param, start, stop, "
                                        "num and scale")
    check_keys(data, SWEEP_KEYS, place)
    spec = op.spec
    numeric = [p.name for p in spec.params if p.numeric]
    if "param" not in data:
        raise place.error(f"a sweep needs param: one of {', '.join(numeric)}")
    name = data["param"]
    if not isinstance(name, str) or name not in numeric:
        raise place.at("param").error(
            f"must be a numeric parameter of {spec.label}: one of {', '.join(numeric)}; "
            f"got {name!r}")
    param = spec.param(name)
    has_values = "values" in data
    range_keys = [k for k in ("start", "stop", "num", "scale") if k in data]
    if has_values and range_keys:
        raise place.at(range_keys[0]).error("give either values or start/stop/num, not both")
    try:
        if has_values:
            items = expect_list(data["values"], place.at("values"), "of parameter values")
            if not items:
                raise place.at("values").error("needs at least one value")
            if len(items) > MAX_SWEEP_POINTS:
                raise place.at("values").error(f"has more than {MAX_SWEEP_POINTS} values")
            values = [check_param(param, v, place.at("values", j)) for j, v in enumerate(items)]
            sweep = Sweep(name, values)
        else:
            for key in ("start", "stop", "num"):
                if key not in data:
                    raise place.error(f"a sweep needs values, or start, stop and num (missing "
                                      f"{key})")
            unit = param.unit or "count"
            start = expect_quantity(data["start"], unit, place.at("start"), positive=False)
            stop = expect_quantity(data["stop"], unit, place.at("stop"), positive=False)
            num = data["num"]
            if isinstance(num, bool) or not isinstance(num, int) or not 1 <= num \
                    <= MAX_SWEEP_POINTS:
                raise place.at("num").error(
                    f"must be a whole number from 1 to {MAX_SWEEP_POINTS}, got {num!r}")
            scale = data.get("scale", "linear")
            if scale not in SCALES:
                raise place.at("scale").error(f"must be one of: {', '.join(SCALES)}; "
                                              f"got {scale!r}")
            try:
                rng = Range(start, stop, num, scale)
            except SweepError as exc:
                raise place.error(str(exc)) from None
            sweep = Sweep(name, rng)
        sweep.values_for(op)
    except SweepError as exc:
        raise place.error(str(exc)) from None
    return sweep


def _parse_measurement(value: Any, session: Session, place: Place) -> Measurement:
    from workbench.model.measured import MEMORY_LEVELS, Measurement
    from workbench.model.measured_session import measurement_problems

    data = expect_mapping(value, place, "a measurement: name, time or achieved, and "
                                        "operation or flops and bytes")
    check_keys(data, MEASUREMENT_KEYS, place)
    if "name" not in data:
        raise place.error("a measurement needs a name")
    m = Measurement(name=expect_str(data["name"], place.at("name"), limit="measurement"))
    for key in ("operation", "hardware"):
        if data.get(key) is not None:
            setattr(m, key, expect_str(data[key], place.at(key), limit="measurement"))
    if data.get("time") is not None:
        m.time_s = expect_quantity(data["time"], "time", place.at("time"))
    if data.get("achieved") is not None:
        m.achieved_flops = expect_quantity(data["achieved"], "flop_rate", place.at("achieved"))
    for key, unit in (("flops", "flops"), ("bytes", "bytes")):
        if data.get(key) is not None:
            setattr(m, key, expect_quantity(data[key], unit, place.at(key), positive=False,
                                            minimum=0.0))
    if data.get("precision") is not None:
        if data["precision"] not in PRECISIONS:
            raise place.at("precision").error(
                f"unknown precision {data['precision']!r}; one of: {', '.join(PRECISIONS)}")
        m.precision = data["precision"]
    if data.get("source") is not None:
        m.source = expect_str(data["source"], place.at("source"), allow_empty=True,
                              limit="source")
    if data.get("levels") is not None:
        levels = expect_mapping(data["levels"], place.at("levels"),
                                f"bytes per memory level ({', '.join(MEMORY_LEVELS)})")
        check_keys(levels, MEMORY_LEVELS, place.at("levels"))
        m.levels = {key: expect_quantity(levels[key], "bytes", place.at("levels", key),
                                         positive=False, minimum=0.0)
                    for key in MEMORY_LEVELS if levels.get(key) is not None}
    if data.get("unit") is not None:
        if data["unit"] not in ("matrix", "vector"):
            raise place.at("unit").error(f"unknown unit {data['unit']!r}; one of: matrix, vector")
        m.unit = data["unit"]
    if data.get("count") is not None:
        count = data["count"]
        if isinstance(count, bool) or not isinstance(count, int):
            raise place.at("count").error(f"must be a whole number, got {count!r}")
        m.count = count
    if data.get("run") is not None:
        m.run = expect_str(data["run"], place.at("run"), limit="measurement")
    for field_name, problem in measurement_problems(session, m):
        key = _MEASUREMENT_FIELDS.get(field_name, field_name)
        raise (place.at(key) if key in data else place).error(problem)
    return m


def _parse_view(value: Any, place: Place) -> ViewSettings:
    data = expect_mapping(value, place, "view settings")
    check_keys(data, VIEW_KEYS, place)
    view = ViewSettings()
    if "theme" in data:
        if data["theme"] not in THEMES:
            raise place.at("theme").error(f"must be one of: {', '.join(THEMES)}")
        view.theme = data["theme"]
    for key in VIEW_FLAGS:
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
    if "level" in data:
        if data["level"] not in VIEW_LEVELS:
            raise place.at("level").error(f"must be one of: {', '.join(VIEW_LEVELS)}")
        view.level = data["level"]
    if "top" in data:
        top = data["top"]
        if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_VIEW_TOP:
            raise place.at("top").error(f"must be a whole number from 0 (the kernels that make "
                                        f"95 % of the time) to {MAX_VIEW_TOP:,}, got {top!r}")
        view.top = top
    return view


# ---------------------------------------------------------------------------------------------
# writing


def _q(value: float, unit: str) -> str:
    return format_quantity(value, unit, digits=None)  # reads back as exactly the same float


def hardware_to_data(hw: Hardware) -> dict[str, Any]:
    out: dict[str, Any] = {"name": hw.name if hw.name.strip() else (hw.id or "Unnamed machine")}
    if hw.id:
        out["id"] = hw.id
    if hw.vendor:
        out["vendor"] = hw.vendor
    if hw.kind and hw.kind != "custom":
        out["kind"] = hw.kind
    out["compute"] = {k: _q(v, "flop_rate") for k, v in hw.compute.items()}
    if hw.vector_compute:
        out["vector_compute"] = {k: _q(v, "flop_rate") for k, v in hw.vector_compute.items()}
    out["memory"] = {k: _q(v, "bandwidth") for k, v in hw.memory.items()}
    out["main_memory"] = hw.main_memory
    if hw.capacity:
        out["capacity"] = _capacity_text(hw.capacity)
    if hw.interconnect:
        out["interconnect"] = {k: _q(v, "bandwidth") for k, v in hw.interconnect.items()}
    if hw.link_latency:
        out["link_latency"] = {k: _q(v, "time") for k, v in hw.link_latency.items()}
    if hw.price_per_hour is not None:
        out["price_per_hour"] = hw.price_per_hour
    if hw.runtime_reserve is not None:
        out["runtime_reserve"] = _q(hw.runtime_reserve, "bytes")
    if hw.launch_overhead:
        out["launch_overhead"] = _q(hw.launch_overhead, "time")
    if hw.efficiency:
        out["efficiency"] = hw.efficiency
    if hw.sparse_halved:
        out["sparse_halved"] = True
    measured = hw.measured_figures()
    if measured:
        out["measured"] = measured
    if hw.sources:
        out["sources"] = list(hw.sources)
    if hw.notes:
        out["notes"] = hw.notes
    if hw.calibration is not None and not hw.calibration.assumed:
        out["calibration"] = _calibration_data(hw.calibration)
    return out


def _calibration_data(cal) -> dict[str, Any] | None:
    """A machine's ``calibration`` block as written (every figure, so that it reads back
    the same)."""
    if cal is None:
        return None
    block: dict[str, Any] = {}
    if cal.source:
        block["source"] = cal.source
    block["efficiency"] = dict(cal.efficiency)
    block["startup"] = {k: _q(v, "time") for k, v in cal.startup.items()}
    for key in ("launch_alone", "launch_eager", "launch_graph"):
        block[key] = _q(getattr(cal, key), "time")
    block["sustained"] = cal.sustained
    return block


def _capacity_text(capacity: float) -> str:
    """A capacity in binary units when it is a whole number of MiB (``80 GiB``, as memory
    sizes are), else in decimal ones; either reads back as exactly the same float."""
    if capacity % 2.0**20 == 0:
        for prefix in ("Ti", "Gi", "Mi"):
            scale = BINARY[prefix]
            if capacity >= scale:
                text = repr(capacity / scale).removesuffix(".0")
                if len(text) <= 12:
                    return f"{text} {prefix}B"
    return _q(capacity, "bytes")


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
                                 launch_overhead=base.launch_overhead,
                                 prediction=base.prediction, launches=base.launches,
                                 calibration=base.calibration,
                                 runtime_reserve=base.runtime_reserve)
            if comparable == base:
                out = {"preset": entry.preset}
                for key in PRESET_OVERRIDES:
                    mine, theirs = getattr(hw, key), getattr(base, key)
                    if key == "launch_overhead":
                        mine = mine or None  # (0 s reads as none: written so)
                    if key == "name" and not (mine or "").strip():
                        continue  # an empty name falls back to the preset's
                    if mine != theirs:
                        out[key] = (_q(mine, "time") if key == "launch_overhead" and mine
                                    else _calibration_data(mine) if key == "calibration"
                                    else _q(mine, "bytes") if key == "runtime_reserve"
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


def operation_entry_to_data(entry: OperationEntry, index: int | None = None) -> dict[str, Any]:
    """An operation as plain data; ``index`` is its place in the file's list: a colour the
    session gave it is written unless it is the one that place gives on opening."""
    op = entry.operation
    out: dict[str, Any] = {"name": op.name if op.name.strip() else op.spec.default_name,
                           "kind": op.kind}
    resolved = None
    for p in op.spec.params:
        value = op.params.get(p.name)
        if value is None and p.required:  # a file must carry every required dimension
            resolved = resolved or op.resolved()
            value = resolved[p.name]
        if value is not None:
            if p.name == "steps":
                value = [dict(step) for step in value]
            out[p.name] = value
    if op.memory_level:
        out["memory_level"] = op.memory_level
    if entry.sweep is not None:
        out["sweep"] = sweep_to_data(entry.sweep)
    if entry.color:
        out["color"] = entry.color
    elif entry.auto_color and (index is None
                               or entry.auto_color != PALETTE[index % len(PALETTE)]):
        out["color"] = entry.auto_color
    if not entry.visible:
        out["visible"] = False
    if not entry.label:
        out["label"] = False
    return out


def sweep_to_data(sweep: Sweep) -> dict[str, Any]:
    out: dict[str, Any] = {"param": sweep.param}
    if sweep.range is not None:
        r = sweep.range
        out.update(start=r.start, stop=r.stop, num=int(r.num), scale=r.scale)
    else:
        out["values"] = list(sweep.values or ())
    return out


def measurement_to_data(m: Measurement) -> dict[str, Any]:
    out: dict[str, Any] = {"name": m.name}
    if m.operation is not None:
        out["operation"] = m.operation
    if m.hardware is not None:
        out["hardware"] = m.hardware
    if m.time_s is not None:
        out["time"] = _q(m.time_s, "time")
    if m.achieved_flops is not None:
        out["achieved"] = _q(m.achieved_flops, "flop_rate")
    if m.flops is not None:
        out["flops"] = _q(m.flops, "flops")
    if m.bytes is not None:
        out["bytes"] = _q(m.bytes, "bytes")
    if m.precision is not None:
        out["precision"] = m.precision
    if m.source:
        out["source"] = m.source
    if m.levels:
        from workbench.model.measured import MEMORY_LEVELS

        out["levels"] = {key: _q(m.levels[key], "bytes") for key in MEMORY_LEVELS
                         if key in m.levels}
    if m.unit is not None:
        out["unit"] = m.unit
    if m.count != 1:
        out["count"] = m.count
    if m.run is not None:
        out["run"] = m.run
    return out


def session_to_data(session: Session, path: str | os.PathLike[str] | None = None
                    ) -> dict[str, Any]:
    """The session as plain data, for a file at ``path`` (model config paths are written
    relative to its folder)."""
    return _session_data(session, path, lambda points: [measurement_to_data(m) for m in points])


def _session_data(session: Session, path: str | os.PathLike[str] | None,
                  points: Callable[[list[Measurement]], Any]) -> dict[str, Any]:
    """:func:`session_to_data`, with ``points`` making what is written for the measured
    points (when there are any)."""
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if session.title:
        out["title"] = session.title
    if session.notes:
        out["notes"] = session.notes
    out["hardware"] = [_hardware_entry_to_data(e) for e in session.hardware]
    if session.hardware:
        first = session.hardware[0].hardware
        from workbench.model.prediction import DEFAULT_LAUNCHES, DEFAULT_PREDICTION

        if (first.prediction, first.launches) != (DEFAULT_PREDICTION, DEFAULT_LAUNCHES):
            out["prediction"] = {"model": first.prediction, "launches": first.launches}
    expanded = {i for model in session.models for i in model.op_ids}
    out["operations"] = [operation_entry_to_data(e, i) for i, e in enumerate(
        e for e in session.operations if e.id not in expanded)]
    if session.models:
        from workbench.io.model_entries import model_entry_to_data

        out["models"] = [model_entry_to_data(m, path) for m in session.models]
    if session.measurements:
        out["measurements"] = points(session.measurements)
    if session.comparisons:
        out["comparisons"] = [{"first": c.first, "second": c.second}
                              for c in session.comparisons]
    defaults = ViewSettings()
    view = {k: (list(v) if isinstance(v, tuple) else v) for k, v in session.view.as_dict().items()
            if v != getattr(defaults, k)}
    if view:
        out["view"] = view
    return out


@record(frozen=True)
class SessionSnapshot:
    """What a save of a session writes, detached from the session (later edits cannot reach
    it): its data in new plain containers, but for the measured points (``None`` in their
    place), which are kept as the tuples of their values (:func:`_point_values`). Taken on
    the window's thread in a small part of the time the text takes, which
    :func:`snapshot_text` makes on any thread."""
    data: dict[str, Any]
    points: tuple[tuple[Any, ...], ...] = ()


def snapshot_session(session: Session, path: str | os.PathLike[str] | None = None,
                     values: PointValues | None = None) -> SessionSnapshot:
    """A :class:`SessionSnapshot` of ``session``, for a file at ``path``; ``values``: the
    points' values of the last snapshot, taken again for the points it had."""
    points: tuple[tuple[Any, ...], ...] = ()

    def keep(measurements: list[Measurement]) -> None:
        nonlocal points
        points = (values.of(measurements) if values is not None
                  else tuple(map(_point_values, measurements)))

    return SessionSnapshot(plain_data(_session_data(session, path, keep)), points)


class PointValues:
    """The values (:func:`_point_values`) of the measured points of the last snapshot, kept
    by the points themselves. A session's measured point is replaced when it is edited,
    never changed (the document's edits, and the Measurements panel's, put an edited copy
    in its place), so a point that is the same object as one of the last snapshot has the
    same values: the snapshot of a profile's 70,000 points that did not change takes 2 ms
    instead of 0.3 s, and the autosave of a session edited elsewhere does not hold up the
    window. For the window's thread."""

    def __init__(self) -> None:
        self._points: list[Measurement] = []
        self._values: tuple[tuple[Any, ...], ...] = ()

    def of(self, measurements: list[Measurement]) -> tuple[tuple[Any, ...], ...]:
        """The values of ``measurements``, in order."""
        old = self._points
        if len(old) == len(measurements) and all(map(operator.is_, old, measurements)):
            return self._values
        # (by identity: the old points are alive meanwhile, so no new one shares an id)
        known = dict(zip(map(id, old), self._values, strict=True))
        values = tuple(known.get(id(m)) or _point_values(m) for m in measurements)
        self._points, self._values = list(measurements), values
        return values


class PointTexts:
    """The text each measured point was last written as, kept by the point's values: the
    points of a large session (a profile's, of up to 100,000) rarely change between saves, and
    formatting each of their quantities exactly is most of the time of a save. It holds the
    points of the last text made with it only. Shared by threads: each text made replaces
    the whole table at once."""

    def __init__(self) -> None:
        self.texts: dict[tuple[Any, ...], str] = {}

    def missing(self, snapshot: SessionSnapshot) -> int:
        """How many of ``snapshot``'s measured points a text made with this table formats
        (their values are not in it)."""
        kept = self.texts
        return sum(values not in kept for values in snapshot.points)


def snapshot_text(snapshot: SessionSnapshot, texts: PointTexts | None = None,
                  progress: Callable[[float], None] | None = None) -> str:
    """The text of a session file of ``snapshot``, exactly as :func:`dumps_session` writes it;
    the measured points whose values ``texts`` holds are not formatted again.
    ``progress(fraction)`` is told the share of the points written, every few thousand."""
    from workbench.io.yaml_parser import dump_with_items, fast_dump, list_item

    data = dict(snapshot.data)
    if data.get("measurements", ()) is not None:
        return dump_yaml(data)  # (no measured points)
    if fast_dump():  # (else every text is PyYAML's, of the whole document)
        kept = texts.texts if texts is not None else {}
        made: dict[tuple[Any, ...], str] = {}
        written: list[str] = []
        for i, values in enumerate(snapshot.points):
            if progress is not None and not i % _POINTS_PER_STEP:
                progress(i / len(snapshot.points))
            text = kept.get(values)
            if text is None:
                text = list_item(plain_data(measurement_to_data(_point(values))))
                if text is None:
                    break  # (a point that leaves the document open-ended: written whole)
            written.append(text)
            if not _any_zero(values):  # (0.0 and -0.0 are equal keys, and written apart)
                made[values] = text
        else:
            if texts is not None:
                texts.texts = made
            whole = dump_with_items(data, {"measurements": "".join(written)})
            if whole is not None:
                return whole
    data["measurements"] = [measurement_to_data(_point(values)) for values in snapshot.points]
    return dump_yaml(data)


#: the fields of a measured point, in order (:func:`_point_values`), made on first use
_POINT_FIELDS: list[str] = []
_POINT_GET: list[Callable[[Measurement], tuple[Any, ...]]] = []
#: where in those values the levels, the FLOPs and the bytes stand
_AT: dict[str, int] = {}


def _point_values(m: Measurement) -> tuple[Any, ...]:
    """The values of ``m``'s fields, in order, its levels as a tuple of pairs: immutable, and
    equal for points written alike."""
    if not _POINT_GET:
        import dataclasses
        from operator import attrgetter

        from workbench.model.measured import Measurement

        _POINT_FIELDS.extend(f.name for f in dataclasses.fields(Measurement))
        _POINT_GET.append(attrgetter(*_POINT_FIELDS))
        _AT.update((name, _POINT_FIELDS.index(name)) for name in ("levels", "flops", "bytes"))
    values = _POINT_GET[0](m)
    levels = _AT["levels"]
    if values[levels] is not None:
        values = (*values[:levels], tuple(values[levels].items()), *values[levels + 1:])
    return values


def _point(values: tuple[Any, ...]) -> Measurement:
    """The measured point of :func:`_point_values`."""
    from workbench.model.measured import Measurement

    fields = dict(zip(_POINT_FIELDS, values, strict=True))
    if fields["levels"] is not None:
        fields["levels"] = dict(fields["levels"])
    return Measurement(**fields)


def _any_zero(values: tuple[Any, ...]) -> bool:
    """Whether a point's FLOPs, bytes or a level's bytes are 0 (or -0.0)."""
    return (values[_AT["flops"]] == 0 or values[_AT["bytes"]] == 0
            or any(v == 0 for _level, v in values[_AT["levels"]] or ()))


def dumps_session(session: Session, path: str | os.PathLike[str] | None = None,
                  texts: PointTexts | None = None) -> str:
    """The text of ``session``'s file at ``path``; ``texts``: see :class:`PointTexts`."""
    return snapshot_text(snapshot_session(session, path), texts)


def save_session(session: Session, path: str | os.PathLike[str], backup: bool = True,
                 notes: list[str] | None = None, texts: PointTexts | None = None) -> None:
    """Write atomically: a temporary file in the same folder, flushed to disk, then renamed
    over the target. The previous version is kept as ``NAME.bak``. A crash at any moment
    leaves either the old file or the new one, never a mixture. The file keeps its mode,
    owner and links; a read-only file is refused (see :mod:`workbench.io.atomic`). ``notes``
    gets a line for what the user should know: an owner that could not be kept, no backup.
    ``texts``: the points' texts of the last save, see :class:`PointTexts`."""
    save_snapshot(snapshot_session(session, path), path, backup, notes, texts)


def save_snapshot(snapshot: SessionSnapshot, path: str | os.PathLike[str], backup: bool = True,
                  notes: list[str] | None = None, texts: PointTexts | None = None,
                  progress: Callable[[float], None] | None = None,
                  cancelled: Callable[[], bool] | None = None) -> None:
    """:func:`save_session` of a :class:`SessionSnapshot` (of the session for a file at
    ``path``), on any thread; ``progress`` as for :func:`snapshot_text`. Where
    ``cancelled()`` turns true before the file is written (it is asked at each step of the
    formatting and once more before writing), raises :class:`SaveCancelled`, the file as it
    was."""
    step = progress
    if cancelled is not None:
        def step(fraction: float) -> None:
            if cancelled():
                raise SaveCancelled(str(path))
            if progress is not None:
                progress(fraction)

    data = snapshot_text(snapshot, texts, step).encode("utf-8")
    if len(data) > MAX_SESSION_BYTES:  # never a file that would not open again
        raise OSError(errno.EFBIG, f"the session is {len(data) / 2**20:.1f} MB; a session file "
                                   f"holds at most {MAX_SESSION_BYTES // 2**20} MB (keep some "
                                   "measured points or operations in another session)")
    if cancelled is not None and cancelled():  # (the last moment it stops unwritten)
        raise SaveCancelled(str(path))
    write_atomic(Path(path), data, backup=backup, notes=notes)


def ensure_error(exc: Exception, file: str | None) -> InputError:
    if isinstance(exc, InputError):
        return exc
    return InputError(str(exc), file)


_ = HARDWARE_KEYS  # re-exported for the hardware editor
