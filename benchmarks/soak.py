"""Soak: thousands of live edits with redraws in the real main window.

    python benchmarks/soak.py [--edits N] [--session FILE]

Guards against the PySide6 refcount crash (stack-notes: aborts after a few hundred painted
updates on bad version combinations) and against memory growth. Prints one line:
``soak: N edits, X s, rss start MB -> end MB (+G %)`` and exits 0.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--session", default=None)
    args = parser.parse_args()

    from workbench.io.examples import DEFAULT_EXAMPLE, examples_dir
    from workbench.io.sessions import load_session
    from workbench.ui.app import create_app
    from workbench.ui.main_window import MainWindow

    app = create_app()
    window = MainWindow()
    window.set_session(load_session(args.session or examples_dir() / DEFAULT_EXAMPLE), None)
    window.show()
    app.processEvents()
    doc = window.document
    ops = [e for e in doc.session.operations if "m" in e.operation.params]
    window.workspace.selection.select(ops[0].id)
    start = time.perf_counter()
    warm = max(1, args.edits // 10)
    rss_start = None
    for i in range(args.edits):
        entry = ops[i % len(ops)]
        doc.set_param(entry.id, "m", 1 + (i * 37) % 16384)
        if i % 50 == 49:
            doc.seal()
        window.canvas.update()
        app.processEvents()
        if i == warm:
            rss_start = rss_mb()
    app.processEvents()
    elapsed = time.perf_counter() - start
    rss_end = rss_mb()
    growth = 100 * (rss_end - rss_start) / rss_start if rss_start else 0.0
    print(f"soak: {args.edits} edits, {elapsed:.1f} s, rss {rss_start:.0f} MB -> {rss_end:.0f} MB "
          f"({growth:+.1f} %)")
    window.document.mark_clean()
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
