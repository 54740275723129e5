"""Thousands of live edits with redraws in a subprocess: the refcount crash in the stack
notes (PySide6 6.12.0 on Python 3.11) aborts such a loop with status 134."""

import os
import re
import subprocess
import sys

from conftest import HANG_GUARD_S, ROOT


def test_2000_live_edits_with_redraws_exit_cleanly():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--edits", "2000"],
        capture_output=True, text=True, timeout=HANG_GUARD_S, env=env, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    match = re.search(r"soak: (\d+) edits", proc.stdout)
    assert match and int(match.group(1)) == 2000  # (benchmarks/run.py: 10,000, memory too)
    assert "Fatal Python error" not in proc.stderr
