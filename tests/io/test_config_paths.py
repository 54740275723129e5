"""A model's config.json is named relative to the session file: the session opens from any
folder it is moved or saved to, and a shipped config is named by name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from workbench.document import Document
from workbench.io.errors import InputError
from workbench.io.model_configs import SHIPPED_DIR, shipped_configs
from workbench.io.sessions import load_session, save_session
from workbench.io.yamlio import read_yaml


def _session_with_config(folder):
    (folder / "cfg").mkdir(parents=True)
    (folder / "cfg" / "config.json").write_text(shipped_configs()["Qwen3-8B"].read_text())
    path = folder / "s.yaml"
    path.write_text("schema_version: 2\nmodels:\n  - {config: cfg/config.json, batch: 2}\n")
    return path


def test_save_as_to_another_folder_rewrites_the_config_path(tmp_path):
    session = load_session(_session_with_config(tmp_path / "A"))
    target = tmp_path / "B" / "deeper" / "s.yaml"
    target.parent.mkdir(parents=True)
    save_session(session, target)
    written = read_yaml(target).data["models"][0]["config"]
    assert written == "../../A/cfg/config.json"  # from B/deeper up two folders, then into A
    reopened = load_session(target)
    assert reopened.models[0].arch.kv_heads == 8 and reopened.models[0].setup.batch == 2


def test_a_session_moved_with_its_config_still_opens(tmp_path):
    path = _session_with_config(tmp_path / "A")
    save_session(load_session(path), path)
    assert read_yaml(path).data["models"][0]["config"] == "cfg/config.json"
    os.rename(tmp_path / "A", tmp_path / "moved")
    assert load_session(tmp_path / "moved" / "s.yaml").models[0].arch.kv_heads == 8


def test_a_config_not_found_says_where_it_looked(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("schema_version: 2\nmodels:\n  - {config: cfg/config.json}\n")
    with pytest.raises(InputError) as caught:
        load_session(path)
    message = str(caught.value)
    assert str(tmp_path / "cfg" / "config.json") in message
    assert "models[0].config" in message and "relative to the session file" in message


def test_a_shipped_config_given_by_path_is_written_by_name(tmp_path):
    path = tmp_path / "s.yaml"
    shipped = SHIPPED_DIR / "Llama-3.1-8B.json"
    path.write_text(f"schema_version: 2\nmodels:\n  - {{config: '{shipped}'}}\n")
    save_session(load_session(path), tmp_path / "copy.yaml")
    assert read_yaml(tmp_path / "copy.yaml").data["models"][0]["config"] == "Llama-3.1-8B"


def test_a_config_chosen_in_the_app_is_stored_relative(qtbot, tmp_path, monkeypatch):
    from workbench.ui.editors.model_editor import AddModelDialog

    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.json").write_text(shipped_configs()["Qwen3-8B"].read_text())
    monkeypatch.chdir(tmp_path)
    document = Document()
    dialog = AddModelDialog(document=document)
    qtbot.addWidget(dialog)
    assert dialog.choose_file("cfg/config.json")  # as a file dialog may give it
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    document.add_model(dialog.entry)
    monkeypatch.chdir(SHIPPED_DIR)  # the app's folder is not the session's
    (tmp_path / "work").mkdir()
    save_session(document.session, tmp_path / "work" / "s.yaml")
    assert read_yaml(tmp_path / "work" / "s.yaml").data["models"][0]["config"] == \
        "../cfg/config.json"
    assert load_session(tmp_path / "work" / "s.yaml").models[0].arch.kv_heads == 8


def _add_config_at(qtbot, folder):
    """A model added with the config.json in ``folder`` chosen in the Add Model dialog; the
    dialog's document, or the text it shows when it refuses the file."""
    from workbench.ui.editors.model_editor import AddModelDialog

    folder.mkdir(parents=True)
    (folder / "config.json").write_text(shipped_configs()["Qwen3-8B"].read_text())
    document = Document()
    dialog = AddModelDialog(document=document)
    qtbot.addWidget(dialog)
    if not dialog.choose_file(str(folder / "config.json")):
        return dialog.summary.text()
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    document.add_model(dialog.entry)
    return document


def test_a_config_at_a_long_path_saves_and_opens_again(qtbot, tmp_path):
    # 3 folders of 200 characters: a path of over 600, as deep project trees have
    document = _add_config_at(qtbot, tmp_path.joinpath(*["d" * 200] * 3))
    for target in (tmp_path / "s.yaml", tmp_path / "elsewhere" / "s.yaml"):
        target.parent.mkdir(exist_ok=True)
        save_session(document.session, target)
        assert load_session(target).models[0].arch.kv_heads == 8


def test_a_config_whose_path_holds_a_control_character_is_refused_when_chosen(qtbot,
                                                                             tmp_path):
    said = _add_config_at(qtbot, tmp_path / "a\x01b")
    path = tmp_path / "a\x01b" / "config.json"
    at = len(str(tmp_path)) + 3
    assert said == (f"{path}: the path holds the control character U+0001 at position {at}; "
                    "remove it")



def test_a_session_in_a_very_deep_folder_names_its_config_by_its_absolute_path(tmp_path):
    # a config 3,800 characters deep, and a session 150 folders deep elsewhere: the way from
    # the session up to the config ("../" a folder) and down again is longer than any path a
    # session file names, while the config's own path is not
    long = tmp_path.joinpath("A", *["c" * 250] * 15)
    session = load_session(_session_with_config(long))
    deep = tmp_path.joinpath(*["d"] * 150)
    deep.mkdir(parents=True)
    save_session(session, deep / "s.yaml")
    written = read_yaml(deep / "s.yaml").data["models"][0]["config"]
    assert written == str(long / "cfg" / "config.json")
    reopened = load_session(deep / "s.yaml")
    assert reopened.models[0].arch.kv_heads == 8 and reopened.models[0].setup.batch == 2


def test_a_session_whose_config_lies_past_the_longest_path_is_refused_where_it_names_it(
        tmp_path, monkeypatch):
    """A session in a folder more than 4,096 characters deep, read from there, names its
    config relatively ("cfg/config.json"): no session file could name that config again,
    from anywhere, so it is refused at Open, saying where, rather than opened into a
    session Save would write and Open refuse."""
    monkeypatch.chdir(tmp_path)
    # (each folder made and entered from the one before: the full path is longer than a
    # system takes at once)
    for _ in range(17):
        os.mkdir("d" * 250)
        os.chdir("d" * 250)
    _session_with_config(Path("."))
    with pytest.raises(InputError) as caught:
        load_session("s.yaml")
    said = str(caught.value)
    assert said.startswith("s.yaml:3: models[0].config: the config's full path is ")
    assert "characters long; a session names a config by a path of at most 4,096" in said
