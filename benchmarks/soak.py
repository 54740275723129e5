"""Soak: thousands of live edits with redraws in the real main window.

    python benchmarks/soak.py [--edits N] [--session FILE]

Guards against the PySide6 refcount crash (stack-notes: aborts after a few hundred painted
updates on bad version combinations) and against memory growth (the highest RSS of the
first fifth of the run after a warm-up against the highest of the last fifth). Prints one
line:
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


SAMPLE_EVERY = 50  # edits between RSS samples


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

    from workbench.io.presets import DEFAULT_EXAMPLE, examples_dir
    from workbench.io.sessions import load_session
    from workbench.ui.window.app import create_app
    from workbench.ui.window.main_window import MainWindow

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
    # RSS swings by several per cent as the allocator and the garbage collector come and go
    # (146–160 MB over 24,000 edits, with no trend): the growth compares the highest sample
    # of the first fifth after the warm-up with the highest of the last fifth, so a leak
    # shows (it lifts every peak) and a swing caught at one moment does not
    samples: list[float] = []
    for i in range(args.edits):
        entry = ops[i % len(ops)]
        doc.set_param(entry.id, "m", 1 + (i * 37) % 16384)
        if i % 50 == 49:
            doc.seal()
        window.canvas.update()
        app.processEvents()
        if i >= warm and (i - warm) % SAMPLE_EVERY == 0:
            samples.append(rss_mb())
    app.processEvents()
    samples.append(rss_mb())
    elapsed = time.perf_counter() - start
    fifth = max(1, len(samples) // 5)
    rss_start, rss_end = max(samples[:fifth]), max(samples[-fifth:])
    growth = 100 * (rss_end - rss_start) / rss_start
    print(f"soak: {args.edits} edits, {elapsed:.1f} s, rss {rss_start:.0f} MB -> {rss_end:.0f} MB "
          f"({growth:+.1f} %)")
    window.document.mark_clean()
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
