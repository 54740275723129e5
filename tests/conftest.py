"""Test set-up shared by every level: headless Qt, isolated settings, example paths."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any Qt import

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "workbench" / "examples").glob("*.yaml"))
PRESETS = sorted((ROOT / "hardware_presets").glob("*.yaml"))


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory, monkeypatch):
    """Tests never read or write a person's settings or autosaves."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    try:
        from PySide6.QtCore import QStandardPaths
    except ImportError:  # engine-only environments
        return
    QStandardPaths.setTestModeEnabled(True)
