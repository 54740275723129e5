"""Screenshots of the main window on each example session, as a user sees it.

    xvfb-run -a -s "-screen 0 1920x1200x24" python tools/screenshot.py [--out docs]

Writes ``docs/screenshot.png`` (the default example, used by the README) and
``docs/screenshots/<example>.png`` for every example.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# the default window layout, whatever this machine's saved one is
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="roofline-screenshot-config-")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "docs"))
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--height", type=int, default=1000)
    parser.add_argument("--only", help="one example (its file name without .yaml)")
    args = parser.parse_args()
    out = Path(args.out)
    (out / "screenshots").mkdir(parents=True, exist_ok=True)

    from PySide6.QtCore import QSettings, Qt

    from workbench.io.presets import DEFAULT_EXAMPLE, list_examples
    from workbench.io.sessions import load_session
    from workbench.ui.window.app import create_app
    from workbench.ui.window.main_window import MainWindow

    app = create_app()
    for _, path in list_examples():
        if args.only and path.stem != args.only:
            continue
        QSettings().clear()  # each example in the default layout, not the previous one's
        window = MainWindow()
        window.resize(args.width, args.height)
        window.set_session(load_session(path), path)
        ops = [e for e in window.document.session.operations if e.visible]
        if ops:
            window.workspace.selection.select(ops[0].id)
        if window.document.session.models:  # a whole model: show its results, roomier
            window.show_model(window.document.session.models[-1].id)
            window.sweep_dock.hide()
            window.resizeDocks([window.model_dock], [330], Qt.Orientation.Vertical)
        window.show()
        for _ in range(5):
            app.processEvents()
        window.canvas.fit_to_data()
        app.processEvents()
        image = window.grab()
        target = out / "screenshots" / f"{path.stem}.png"
        image.save(str(target))
        if path.name == DEFAULT_EXAMPLE:
            image.save(str(out / "screenshot.png"))
        print(target)
        window.document.mark_clean()
        window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
