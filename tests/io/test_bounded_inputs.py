"""Every reader is bounded before work starts: regular files only, bounded JSON, and the
messages say which kind of file is wrong."""

from __future__ import annotations

import os
import threading

import pytest
from conftest import HANG_GUARD_S

from workbench.io.errors import InputError
from workbench.io.measurements import load_measurements
from workbench.io.model_configs import read_model_config
from workbench.io.sessions import load_session


def _unless_hung(call):
    """``call()``'s exception; a call still blocked after :data:`HANG_GUARD_S` fails."""
    outcome = {}

    def target():
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - the exception is the result
            outcome["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(HANG_GUARD_S)
    assert not worker.is_alive(), "the reader blocked"
    return outcome.get("error")


@pytest.mark.parametrize("reader, what", [
    (load_session, "session file"), (load_measurements, "CSV file"),
    (read_model_config, "model config")])
def test_every_reader_refuses_a_fifo_without_blocking(tmp_path, reader, what):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    error = _unless_hung(lambda: reader(str(fifo)))
    assert isinstance(error, InputError)
    assert str(error) == f"{fifo}: is a pipe (FIFO), not a {what}" + (
        " (config.json)" if what == "model config" else "") + ": only regular files are read"


@pytest.mark.parametrize("reader", [load_session, load_measurements, read_model_config])
def test_every_reader_refuses_a_device(tmp_path, reader):
    link = tmp_path / "link"
    link.symlink_to("/dev/zero")
    error = _unless_hung(lambda: reader(str(link)))
    assert isinstance(error, InputError)
    assert f"{link}: is a device" in str(error)


def test_a_recovered_autosave_is_read_with_the_same_limits(tmp_path):
    from workbench.io.autosave import find_recoverable

    os.mkfifo(tmp_path / "autosave-1-1.yaml")
    assert _unless_hung(lambda: find_recoverable(tmp_path)) is None
