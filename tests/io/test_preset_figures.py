"""Internal consistency of every hardware preset's figures.

The checks read the YAML files with their own small unit reader (not the application's), so
a wrong figure cannot pass by agreeing with the code that displays it. Each rule states a
vendor convention:

- every real machine has sources (http/https);
- dense ratios between precisions as the vendors state them: on NVIDIA and AMD matrix units
  fp16 = bf16, fp8 = 2 x bf16, int8 = fp8, tf32 = bf16 / 2, fp6 = fp8 and fp4 = 2 x fp8;
  GeForce cards quote 16-bit and 8-bit float figures with FP32 accumulate, which runs at
  half rate, while int8 keeps full rate, so there int8 = 4 x bf16 and fp4 = 8 x bf16; AMD's
  CDNA 3/4 give int8 = fp8 and fp6 = fp4, CDNA 2 int8 = bf16;
- anything above those ratios (int8 or fp8 more than 2 x bf16, 4 x on GeForce) looks like a
  2:4-sparse figure that was not halved;
- ridge points (peak / main-memory bandwidth) lie in 1-2000 FLOP/byte;
- capacities are written in binary units and agree with the size in the machine's name;
- bandwidths are written in decimal units; a cache level is at least as fast as main
  memory; a link is slower than main memory;
- a vector peak never exceeds the matrix peak of the same precision;
- every path listed under ``measured`` names a figure the machine has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from workbench.io.presets import load_preset_file

REPO = Path(__file__).resolve().parents[2]
PRESET_FILES = sorted((REPO / "hardware_presets").glob("*.yaml"))

_DECIMAL = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?) ([kMGTP]?)(FLOP/s|OP/s)$")
_BANDWIDTH = re.compile(r"^([0-9]+(?:\.[0-9]+)?) ([kMGTP]?)B/s$")
_CAPACITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?) (Ki|Mi|Gi|Ti)B$")
_SIZE_IN_NAME = re.compile(r"(\d+)\s?GB\b")
_CACHE_LEVEL = re.compile(r"^(l1|l2|l3|llc|smem|sram|vmem|slc|infinity_cache)")

TOLERANCE = 0.02  # vendors round; 2% covers every printed pair checked by hand
MIN_RIDGE, MAX_RIDGE = 1.0, 2000.0
MIN_CAPACITY, MAX_CAPACITY = 2**30, 2**40


def rate(text: str) -> float:
    match = _RATE.match(str(text))
    if not match:
        raise ValueError(f"not a compute rate '<number> <prefix>FLOP/s|OP/s': {text!r}")
    return float(match.group(1)) * _DECIMAL[match.group(2)]


def bandwidth(text: str) -> float:
    match = _BANDWIDTH.match(str(text))
    if not match:
        raise ValueError(f"not a decimal bandwidth '<number> <k|M|G|T|P>B/s': {text!r}")
    return float(match.group(1)) * _DECIMAL[match.group(2)]


def capacity(text: str) -> float:
    match = _CAPACITY.match(str(text))
    if not match:
        raise ValueError(f"not a binary capacity '<number> <Ki|Mi|Gi|Ti>B': {text!r}")
    return float(match.group(1)) * _BINARY[match.group(2)]


def _close(value: float, expected: float) -> bool:
    return abs(value - expected) <= TOLERANCE * expected


def _table(data: dict, key: str, problems: list[str]) -> dict[str, float]:
    out = {}
    for precision, text in (data.get(key) or {}).items():
        try:
            out[precision] = rate(text)
        except ValueError as exc:
            problems.append(f"{key}.{precision}: {exc}")
    return out


def _ratio_rules(data: dict) -> list[tuple[str, str, float]]:
    """(precision, base, factor): precision = factor x base, as the vendor states it."""
    vendor = data.get("vendor")
    if data.get("kind") not in ("gpu", "accelerator") or vendor not in ("NVIDIA", "AMD"):
        return []
    if "GeForce" in data.get("name", ""):
        return [("fp16", "bf16", 1), ("tf32", "bf16", 0.5), ("fp8", "bf16", 2),
                ("int8", "bf16", 4), ("int4", "bf16", 8), ("fp4", "bf16", 8)]
    if vendor == "AMD":  # CDNA 3/4; CDNA 2 (no fp8) runs int8 at the 16-bit rate
        return [("fp16", "bf16", 1), ("tf32", "bf16", 0.5), ("fp8", "bf16", 2),
                ("int8", "fp8", 1), ("fp4", "fp8", 2), ("fp6", "fp4", 1)]
    return [("fp16", "bf16", 1), ("tf32", "bf16", 0.5), ("fp8", "bf16", 2),
            ("int8", "bf16", 2), ("fp6", "fp8", 1), ("fp4", "fp8", 2), ("int4", "int8", 2)]


def preset_problems(data: dict) -> list[str]:
    """Every inconsistency found in one preset's raw data (an empty list when it is sound)."""
    problems: list[str] = []
    name = str(data.get("name", ""))
    teaching = data.get("kind") == "teaching"

    sources = data.get("sources") or []
    if not teaching and not sources:
        problems.append("sources: none given")
    problems += [f"sources: not a URL: {s!r}" for s in sources
                 if not str(s).startswith(("https://", "http://"))]

    matrix = _table(data, "compute", problems)
    vector = _table(data, "vector_compute", problems)

    memory: dict[str, float] = {}
    for level, text in (data.get("memory") or {}).items():
        try:
            memory[level] = bandwidth(text)
        except ValueError as exc:
            problems.append(f"memory.{level}: {exc}")
    links: dict[str, float] = {}
    for link, text in (data.get("interconnect") or {}).items():
        try:
            links[link] = bandwidth(text)
        except ValueError as exc:
            problems.append(f"interconnect.{link}: {exc}")
    main = memory.get(data.get("main_memory") or next(iter(memory), ""))
    if not main:
        problems.append("memory: no main memory level")
        return problems
    if not 50e9 <= main <= 20e12:
        problems.append(f"memory: main memory bandwidth {main:.3g} B/s is implausible")
    for level, value in memory.items():
        if _CACHE_LEVEL.match(level) and value < main:
            problems.append(f"memory.{level}: a cache level slower than main memory")
    for link, value in links.items():
        if value >= main:
            problems.append(f"interconnect.{link}: a link as fast as main memory")

    for table, peaks in (("compute", matrix), ("vector_compute", vector)):
        for precision, peak in peaks.items():
            ridge = peak / main
            if not MIN_RIDGE <= ridge <= MAX_RIDGE:
                problems.append(f"{table}.{precision}: ridge {ridge:.3g} FLOP/byte is outside "
                                f"{MIN_RIDGE:g}-{MAX_RIDGE:g}")
    for precision, peak in vector.items():
        if precision in matrix and peak > matrix[precision] * (1 + 1e-9):
            problems.append(f"vector_compute.{precision}: above the matrix peak")

    geforce = "GeForce" in name
    bf16 = matrix.get("bf16")
    if bf16:
        limit = 4 if geforce else 2
        for precision in ("int8", "fp8"):
            if precision in matrix and matrix[precision] > limit * bf16 * (1 + TOLERANCE):
                problems.append(f"compute.{precision}: {matrix[precision] / bf16:.2f} x bf16 "
                                f"looks like a sparse figure (dense is at most {limit} x)")
    for precision, base, factor in _ratio_rules(data):
        if (precision in matrix and base in matrix
                and not _close(matrix[precision], factor * matrix[base])):
                problems.append(f"compute.{precision}: {matrix[precision] / matrix[base]:.3f} x "
                                f"{base}, the vendor's dense ratio is {factor:g}")

    if data.get("capacity") is not None:
        try:
            size = capacity(data["capacity"])
        except ValueError as exc:
            problems.append(f"capacity: {exc}")
        else:
            if not MIN_CAPACITY <= size <= MAX_CAPACITY:
                problems.append(f"capacity: {size / 2**30:.3g} GiB is implausible")
            in_name = _SIZE_IN_NAME.search(name)
            if in_name and abs(size / 2**30 - int(in_name.group(1))) > 0.03 * int(in_name.group(1)):
                problems.append(f"capacity: {size / 2**30:.4g} GiB disagrees with the "
                                f"{in_name.group(0)} in the name (read as GiB)")

    figures = {"capacity", "launch_overhead", "efficiency"} & set(data)
    for table in ("compute", "vector_compute", "memory", "interconnect"):
        figures |= {f"{table}.{key}" for key in (data.get(table) or {})}
    measured = data.get("measured") or []
    problems += [f"measured: {path!r} names no figure of this machine" for path in measured
                 if path not in figures]
    if len(set(measured)) != len(measured):
        problems.append("measured: a path is listed twice")

    overhead = str(data.get("launch_overhead") or "0")
    if not overhead.startswith("0") and "rule of thumb" not in str(data.get("notes", "")):
        problems.append("notes: launch_overhead is not called a rule of thumb")
    return problems


def raw(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


# --- the presets --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PRESET_FILES, ids=lambda p: p.stem)
def test_preset_figures_are_consistent(path):
    assert preset_problems(raw(path)) == []


@pytest.mark.parametrize("path", PRESET_FILES, ids=lambda p: p.stem)
def test_capacity_as_written_is_what_the_app_reads(path):
    data = raw(path)
    hw = load_preset_file(path)
    if data.get("capacity") is None:
        assert hw.capacity is None
    else:
        assert hw.capacity == capacity(data["capacity"])


def test_at_least_thirty_machines_including_the_ones_people_own():
    ids = {p.stem for p in PRESET_FILES}
    assert len(ids) >= 30
    assert {"apple-m3-max", "apple-m4-pro", "apple-m4-max", "ryzen-ai-9-hx-370",
            "ryzen-9-9950x", "epyc-9654", "nvidia-grace", "rtx-5090", "rtx-4080", "rtx-4070",
            "rtx-4070-laptop", "rtx-6000-ada", "l40s", "mi325x", "mi355x", "gaudi3", "gb200",
            "jetson-agx-orin", "tpu-v4"} <= ids


def test_apple_gpu_figures_are_marked_measured():
    # Apple publishes no GPU FLOP/s: every Apple compute figure must say it is measured
    for path in PRESET_FILES:
        data = raw(path)
        if data.get("vendor") != "Apple":
            continue
        measured = set(data.get("measured") or [])
        for table in ("compute", "vector_compute"):
            for precision in data.get(table) or {}:
                assert f"{table}.{precision}" in measured, (path.stem, table, precision)


# Figures fixed by hand from the vendors' tables and driver readouts (not from the preset
# files): the binary capacities the driver reports, the dense Hopper TF32 and the one B200 SKU.
@pytest.mark.parametrize(("preset_id", "key", "expected"), [
    ("h100-sxm", "capacity", 81559 * 2**20),
    # nvidia-smi on an "NVIDIA H100 PCIe" (350 W) in NVIDIA's TensorRT-LLM backend docs
    # (triton-inference-server/tensorrtllm_backend, docs/llama.md): "25169MiB / 81559MiB";
    # 81920 MiB is the A100 80GB's figure
    ("h100-pcie", "capacity", 81559 * 2**20),
    # nvidia-smi on an "NVIDIA GH200 480GB" (96 GB HBM3, driver 535.154.05), slitvinov/grace
    # README: "1MiB / 97871MiB"; NVIDIA prints only the nominal 96 GB
    ("gh200", "capacity", 97871 * 2**20),
    ("h200", "capacity", 143771 * 2**20),
    ("b200", "capacity", 183359 * 2**20),
    ("tpu-v5p", "capacity", 95 * 2**30),
    ("h100-sxm", "tf32", 494.7e12),
    ("h200", "tf32", 494.7e12),
    ("gh200", "tf32", 494.7e12),
    ("b200", "tf32", 1.125e15),
    ("b200", "hbm", 7.7e12),
    # Google's Cloud TPU v5e page: "Peak compute per chip (Int8) | 393 TOPs" (not 2 x 197)
    ("tpu-v5e", "int8", 393e12),
    # Google's Cloud TPU v6e page: "HBM bandwidth per chip | 1638 GBps"
    ("tpu-v6e", "hbm", 1638e9),
])
def test_section_four_figures(preset_id, key, expected):
    data = raw(REPO / "hardware_presets" / f"{preset_id}.yaml")
    if key == "capacity":
        assert capacity(data["capacity"]) == expected
    elif key in data["compute"]:
        assert rate(data["compute"][key]) == pytest.approx(expected, rel=1e-9)
    else:
        assert bandwidth(data["memory"][key]) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("preset_id", "fp64_vector"), [
    ("h100-sxm", 34e12), ("a100-40gb", 9.7e12), ("a100-80gb", 9.7e12), ("mi300x", 81.7e12),
    ("mi250x", 47.9e12),
])
def test_fp64_has_both_the_matrix_and_the_vector_peak(preset_id, fp64_vector):
    data = raw(REPO / "hardware_presets" / f"{preset_id}.yaml")
    assert rate(data["vector_compute"]["fp64"]) == pytest.approx(fp64_vector, rel=1e-9)
    assert rate(data["compute"]["fp64"]) == pytest.approx(2 * fp64_vector, rel=0.02)


# --- the checker itself can fail -----------------------------------------------------------------

SOUND = {
    "id": "example", "name": "Example GPU 80GB", "vendor": "NVIDIA", "kind": "gpu",
    "compute": {"fp32": "67 TFLOP/s", "tf32": "494.7 TFLOP/s", "bf16": "989.4 TFLOP/s",
                "fp16": "989.4 TFLOP/s", "fp8": "1979 TFLOP/s", "int8": "1979 TOP/s"},
    "vector_compute": {"fp32": "67 TFLOP/s", "bf16": "133.8 TFLOP/s"},
    "memory": {"hbm": "3.35 TB/s", "l2": "10 TB/s"}, "main_memory": "hbm",
    "capacity": "81559 MiB", "interconnect": {"nvlink": "450 GB/s"},
    "launch_overhead": "8 us", "measured": ["memory.l2"],
    "sources": ["https://example.com/datasheet"],
    "notes": "launch_overhead is a rule of thumb.",
}


def changed(**changes) -> dict:
    data = {key: (dict(value) if isinstance(value, dict) else value)
            for key, value in SOUND.items()}
    for dotted, value in changes.items():
        table, _, key = dotted.partition("__")
        if key:
            data[table][key] = value
        elif value is None:
            data.pop(table)
        else:
            data[table] = value
    return data


def test_the_sound_example_passes():
    assert preset_problems(changed()) == []


@pytest.mark.parametrize(("changes", "expected"), [
    # the vendor's "with sparsity" fp8 and int8 left unhalved beside a dense bf16
    ({"compute__fp8": "3958 TFLOP/s", "compute__int8": "3958 TOP/s"}, "looks like a sparse"),
    ({"compute__int8": "3958 TOP/s"}, "looks like a sparse"),
    # a 494.5 written for a dense 494.7 is fine (rounding); half of the sparse 989 is not
    ({"compute__tf32": "989 TFLOP/s"}, "dense ratio is 0.5"),
    ({"compute__fp16": "1979 TFLOP/s"}, "dense ratio is 1"),
    ({"sources": []}, "sources: none given"),
    ({"sources": ["the datasheet"]}, "not a URL"),
    ({"capacity": "80 GB"}, "not a binary capacity"),
    ({"capacity": "40 GiB"}, "disagrees with the 80GB in the name"),
    ({"capacity": "4 TiB"}, "implausible"),
    ({"memory__hbm": "3.35 TiB/s"}, "not a decimal bandwidth"),
    ({"memory__l2": "1 TB/s"}, "cache level slower than main memory"),
    ({"interconnect__nvlink": "4 TB/s"}, "a link as fast as main memory"),
    ({"vector_compute__bf16": "1979 TFLOP/s"}, "above the matrix peak"),
    ({"memory__hbm": "0.3 TB/s", "memory__l2": "1 TB/s"}, "outside 1-2000"),
    ({"memory__hbm": "20 TB/s", "memory__l2": "30 TB/s", "interconnect__nvlink": "450 GB/s",
      "vector_compute__fp32": "1 TFLOP/s"}, "vector_compute.fp32: ridge"),
    ({"measured": ["memory.l3"]}, "names no figure"),
    ({"measured": ["memory.l2", "memory.l2"]}, "listed twice"),
    ({"notes": "8 us per launch."}, "rule of thumb"),
    ({"memory": {"hbm": "3.35 TB/s"}, "main_memory": "ddr"}, "no main memory level"),
])
def test_the_checker_catches(changes, expected):
    problems = preset_problems(changed(**changes))
    assert any(expected in problem for problem in problems), problems


def test_geforce_ratios_allow_the_half_rate_accumulate_but_not_more():
    geforce = changed(name="NVIDIA GeForce Example", compute={
        "fp32": "82.6 TFLOP/s", "tf32": "82.6 TFLOP/s", "bf16": "165.2 TFLOP/s",
        "fp16": "165.2 TFLOP/s", "fp8": "330.3 TFLOP/s", "int8": "660.6 TOP/s"},
        vector_compute={"fp32": "82.6 TFLOP/s"}, capacity=None)
    assert preset_problems(geforce) == []
    sparse_int8 = changed(name="NVIDIA GeForce Example", compute={
        "bf16": "165.2 TFLOP/s", "int8": "1321.2 TOP/s"}, vector_compute=None, capacity=None)
    assert any("looks like a sparse" in p for p in preset_problems(sparse_int8))
    # the same int8 = 4 x bf16 on a data-centre part is not the vendor's dense ratio
    datacentre = changed(compute={"bf16": "165.2 TFLOP/s", "int8": "660.6 TOP/s"},
                         vector_compute=None)
    assert any("looks like a sparse" in p for p in preset_problems(datacentre))


def test_other_vendors_are_held_only_to_the_sparse_limit():
    # Gaudi 3 runs fp8 at the bf16 rate and TPU v4 int8 at the bf16 rate: both are dense
    for vendor, kind in (("Intel", "accelerator"), ("Google", "tpu")):
        data = changed(vendor=vendor, kind=kind, name="Example",
                       compute={"bf16": "1835 TFLOP/s", "fp8": "1835 TFLOP/s"},
                       vector_compute={"bf16": "28.7 TFLOP/s"}, capacity="128 GiB")
        assert preset_problems(data) == []
        data["compute"]["fp8"] = "7340 TFLOP/s"
        assert any("looks like a sparse" in p for p in preset_problems(data))


def test_unit_readers():
    assert rate("1.125 PFLOP/s") == 1.125e15
    assert rate("85 TOP/s") == 85e12
    assert bandwidth("204.8 GB/s") == pytest.approx(204.8e9)
    assert capacity("81559 MiB") == 85_520_809_984
    assert capacity("95 GiB") == 95 * 1024**3
    for bad in ("80GB", "80 GB", "3.35 TB/s"):
        with pytest.raises(ValueError):
            capacity(bad)
    with pytest.raises(ValueError):
        bandwidth("3 GiB/s")
