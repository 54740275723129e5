"""Hardware presets: every file loads, ids match file names, numbers are dense and sourced."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from workbench.io.presets import get_preset, load_preset_file, load_presets

REPO = Path(__file__).resolve().parents[2]
PRESET_FILES = sorted((REPO / "hardware_presets").glob("*.yaml"))

_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9}
_QUANTITY = re.compile(r"^\s*([0-9.eE+-]+)\s*([kMGTPEmuµn]?)(FLOP/s|OP/s|B/s|B|s)\s*$")


def si(text) -> float:
    """A tiny independent reader for the preset files' '<number> <prefix><unit>' values."""
    if isinstance(text, int | float):
        return float(text)
    match = _QUANTITY.match(text)
    assert match, f"not a quantity: {text!r}"
    return float(match.group(1)) * _PREFIX[match.group(2)]


def raw(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_the_required_machines_are_there():
    ids = {p.stem for p in PRESET_FILES}
    required = {"h100-sxm", "h100-pcie", "h200", "b200", "a100-40gb", "a100-80gb", "mi300x",
                "tpu-v5e", "tpu-v5p", "tpu-v6e", "l4", "rtx-4090", "teaching-machine"}
    assert required <= ids
    assert any(raw(p).get("kind") == "cpu" for p in PRESET_FILES)  # a server CPU


@pytest.mark.parametrize("path", PRESET_FILES, ids=lambda p: p.stem)
def test_preset_file_loads_and_id_matches_file_name(path):
    hw = load_preset_file(path)
    data = raw(path)
    assert hw.id == path.stem == data["id"]
    assert hw.name == data["name"]
    # every number as written in the file, read independently
    assert set(hw.compute) == set(data["compute"])
    for key, value in data["compute"].items():
        assert hw.compute[key] == pytest.approx(si(value), rel=1e-12), key
    assert set(hw.memory) == set(data["memory"])
    for key, value in data["memory"].items():
        assert hw.memory[key] == pytest.approx(si(value), rel=1e-12), key
    for key, value in (data.get("interconnect") or {}).items():
        assert hw.interconnect[key] == pytest.approx(si(value), rel=1e-12), key
    if data.get("launch_overhead") is not None and si(data["launch_overhead"]) > 0:
        assert hw.launch_overhead == pytest.approx(si(data["launch_overhead"]), rel=1e-12)
    else:
        assert not hw.launch_overhead
    if data.get("efficiency") is not None:
        assert hw.efficiency == data["efficiency"]
        assert 0 < hw.efficiency <= 1


def test_load_presets_has_every_file():
    presets = load_presets()
    assert sorted(presets) == sorted(p.stem for p in PRESET_FILES)
    for key, hw in presets.items():
        assert hw.id == key


def test_presets_are_copies():
    first = get_preset("h100-sxm")
    first.compute["bf16"] = 1.0
    first.name = "changed"
    second = get_preset("h100-sxm")
    assert second.compute["bf16"] > 1e14
    assert second.name != "changed"
    assert load_presets()["h100-sxm"].compute["bf16"] > 1e14


@pytest.mark.parametrize("path", PRESET_FILES, ids=lambda p: p.stem)
def test_preset_is_sourced_unless_teaching(path):
    hw = load_preset_file(path)
    if hw.kind == "teaching":
        return
    assert hw.sources, f"{path.stem} has no sources"
    for source in hw.sources:
        assert source.startswith(("https://", "http://")), source


def test_only_the_teaching_machine_is_unsourced():
    unsourced = [p.stem for p in PRESET_FILES if not raw(p).get("sources")]
    assert unsourced == ["teaching-machine"]


@pytest.mark.parametrize("path", PRESET_FILES, ids=lambda p: p.stem)
def test_main_memory_exists(path):
    hw = load_preset_file(path)
    assert hw.main_memory in hw.memory
    assert raw(path).get("main_memory") in raw(path)["memory"]
    assert hw.bandwidth() == hw.memory[hw.main_memory] > 0


@pytest.mark.parametrize("path", PRESET_FILES, ids=lambda p: p.stem)
def test_sparse_halved_is_explained(path):
    hw = load_preset_file(path)
    if hw.sparse_halved:
        # the notes quote the vendor's "with sparsity" figures and say they were halved
        notes = hw.notes.lower()
        assert "sparse" in notes or "sparsity" in notes
        assert "halved" in notes
    assert isinstance(raw(path).get("sparse_halved", False), bool)


# Public dense and "with sparsity" 16-bit tensor figures (TFLOP/s) from the vendors' datasheets
# and whitepapers, written here from those documents, not from the preset files.
DENSE_SPARSE_16BIT = {
    "h100-sxm": (989.4, 1979),
    "h100-pcie": (756, 1513),
    "h200": (989.4, 1979),
    "gh200": (989.4, 1979),
    "b200": (2250, 4500),
    "a100-40gb": (312, 624),
    "a100-80gb": (312, 624),
    "mi300x": (1307.4, 2614.9),
    "l4": (121, 242),
    "rtx-4090": (165.2, 330.4),  # FP32-accumulate; FP16-accumulate is 330.3 dense
}


@pytest.mark.parametrize("preset_id", sorted(DENSE_SPARSE_16BIT))
def test_16bit_peaks_are_dense_not_sparse(preset_id):
    dense, sparse = DENSE_SPARSE_16BIT[preset_id]
    hw = get_preset(preset_id)
    for precision in ("bf16", "fp16"):
        peak = hw.compute[precision] / 1e12
        assert peak == pytest.approx(dense, rel=0.01), precision
        assert peak < 0.75 * sparse


@pytest.mark.parametrize(
    ("preset_id", "bf16_tflops", "bandwidth_tbs"),
    [("tpu-v5e", 197, 0.819), ("tpu-v5p", 459, 2.765), ("tpu-v6e", 918, 1.64),
     ("teaching-machine", 100, 1.0)],
)
def test_tpu_and_teaching_peaks(preset_id, bf16_tflops, bandwidth_tbs):
    hw = get_preset(preset_id)
    assert hw.compute["bf16"] == pytest.approx(bf16_tflops * 1e12, rel=0.01)
    assert hw.bandwidth() == pytest.approx(bandwidth_tbs * 1e12, rel=0.01)


def test_h100_sxm_ridge():
    hw = get_preset("h100-sxm")
    assert hw.compute["bf16"] == pytest.approx(989e12, rel=0.002)
    assert hw.bandwidth() == pytest.approx(3.35e12, rel=0.001)
    assert abs(hw.ridge("bf16") - 295) <= 1
    assert hw.sparse_halved is True


def test_teaching_machine_ridge_is_exactly_100():
    hw = get_preset("teaching-machine")
    assert hw.ridge("fp16") == pytest.approx(100, rel=1e-12)
    assert hw.kind == "teaching"
    assert not hw.launch_overhead


def test_presets_dir_has_no_stray_files():
    stray = [p.name for p in (REPO / "hardware_presets").iterdir()
             if p.suffix not in (".yaml", ".md")]
    assert stray == []
