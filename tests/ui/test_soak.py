"""Thousands of live edits with redraws in a subprocess: the refcount crash in the stack
notes (PySide6 6.12.0 on Python 3.11) aborts such a loop with status 134."""

import os
import re
import subprocess
import sys

from conftest import ROOT


def test_5000_live_edits_with_redraws_exit_cleanly():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--edits", "5000"],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    match = re.search(r"soak: (\d+) edits", proc.stdout)
    assert match and int(match.group(1)) == 5000
    assert "Fatal Python error" not in proc.stderr
