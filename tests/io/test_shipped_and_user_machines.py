"""The files the product ships (examples, presets) and the user's own machines: where they are
found on each platform, their ids, their provenance through a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.io import atomic, presets, user_presets
from workbench.io.presets import DEFAULT_EXAMPLE, get_preset, list_examples

ROOT = Path(__file__).resolve().parents[2]




def test_the_examples_are_listed_with_the_titles_they_carry():
    examples = {path.name: title for title, path in list_examples()}
    assert DEFAULT_EXAMPLE in examples
    assert examples["fusion.yaml"].startswith("Kernel fusion")
    assert all((ROOT / "workbench" / "examples" / name).is_file() for name in examples)


def test_built_in_machine_ids_are_the_preset_file_names():
    ids = presets.builtin_ids()
    assert ids == {p.stem for p in (ROOT / "hardware_presets").glob("*.yaml")}
    assert "h100-sxm" in ids


def test_presets_are_found_beside_the_source_tree_when_not_packaged():
    assert presets.presets_dir().resolve() == (ROOT / "hardware_presets").resolve()



@pytest.mark.parametrize(("platform", "data", "cache"), [
    ("linux", (".local", "share"), (".cache",)),
    ("darwin", ("Library", "Application Support"), ("Library", "Caches")),
    ("win32", ("AppData", "Roaming"), ("AppData", "Local")),
])
def test_user_folders_per_platform(monkeypatch, tmp_path, platform, data, cache):
    for name in (user_presets.USER_PRESETS_VARIABLE, "XDG_DATA_HOME", "XDG_CACHE_HOME",
                 "APPDATA", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(atomic.sys, "platform", platform)
    assert user_presets.user_presets_dir() == tmp_path.joinpath(*data, "roofline-workbench",
                                                                 "presets")
    assert atomic.user_folder("cache") == tmp_path.joinpath(*cache, "roofline-workbench")


def test_user_folders_follow_the_platform_variables(monkeypatch, tmp_path):
    monkeypatch.setattr(atomic.sys, "platform", "linux")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "d"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert atomic.user_folder("data") == tmp_path / "d" / "roofline-workbench"
    assert atomic.user_folder("cache") == tmp_path / "c" / "roofline-workbench"
    monkeypatch.setattr(atomic.sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "roaming"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert atomic.user_folder("data") == tmp_path / "roaming" / "roofline-workbench"
    assert atomic.user_folder("cache") == tmp_path / "local" / "roofline-workbench"
    with pytest.raises(ValueError, match="no user folder"):
        atomic.user_folder("config")


def test_a_measured_machine_keeps_its_provenance_through_a_file(tmp_path):
    hw = get_preset("h100-sxm")
    provenance = {"cpu": "Test CPU", "cores": 8, "curves": {1: [1.5, 2.5]}}
    path = tmp_path / "bench.yaml"
    path.write_text(user_presets.dump_yaml(user_presets.machine_to_data(hw, provenance)),
                    encoding="utf-8")
    loaded, back = user_presets.load_machine_file(path)
    assert loaded.name == hw.name
    assert back == {"cpu": "Test CPU", "cores": 8, "curves": {"1": [1.5, 2.5]}}



def test_a_saved_user_machine_is_found_again(tmp_path, monkeypatch):
    monkeypatch.setenv(user_presets.USER_PRESETS_VARIABLE, str(tmp_path / "presets"))
    hw = get_preset("h100-sxm").copy(id="lab-h100", name="Lab H100")
    path = user_presets.save_machine(hw)
    assert path == tmp_path / "presets" / "lab-h100.yaml"
    found = user_presets.load_user_presets()
    assert list(found) == ["lab-h100"] and found["lab-h100"].name == "Lab H100"


def test_a_measured_user_machine_gives_its_provenance(tmp_path, monkeypatch):
    monkeypatch.setenv(user_presets.USER_PRESETS_VARIABLE, str(tmp_path))
    hw = get_preset("h100-sxm").copy(id="lab-gpu", name="Lab GPU")
    user_presets.save_machine(hw, {"cpu": "Test CPU", "method": "stream"})
    assert user_presets.measurement_of("lab-gpu") == {"cpu": "Test CPU", "method": "stream"}
    assert user_presets.is_measured("lab-gpu") and not user_presets.is_measured("h100-sxm")


def test_a_broken_user_machine_file_is_reported_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv(user_presets.USER_PRESETS_VARIABLE, str(tmp_path))
    (tmp_path / "broken.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    assert user_presets.load_user_presets() == {}
    (problem,) = user_presets.user_preset_problems()
    assert "broken.yaml" in problem and "must be a mapping" in problem
