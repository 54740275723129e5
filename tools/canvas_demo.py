"""Show the roofline canvas alone on an example session and save a screenshot.

    xvfb-run -a -s "-screen 0 1600x1000x24" python tools/canvas_demo.py \
        workbench/examples/llama_ffn.yaml -o /tmp/canvas.png [--theme dark] [--regions]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication

from workbench.document import Document
from workbench.io.sessions import load_session
from workbench.ui.bridge import Workspace
from workbench.ui.chart.canvas import RooflineCanvas


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("session")
    parser.add_argument("-o", "--output", default="")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument("--theme", default="")
    parser.add_argument("--select", type=int, default=-1, help="index of an operation to select")
    for flag in ("regions", "derated", "all-precisions", "no-labels", "no-legend"):
        parser.add_argument(f"--{flag}", action="store_true")
    args = parser.parse_args()

    app = QApplication.instance() or QApplication(sys.argv)
    document = Document()
    document.replace_session(load_session(args.session))
    workspace = Workspace(document)
    canvas = RooflineCanvas(workspace)
    canvas.resize(args.width, args.height)
    canvas.show()
    if args.theme:
        document.set_view("theme", args.theme)
    for flag, name, value in (("regions", "regions", True), ("derated", "derated", True),
                              ("all_precisions", "all_precisions", True),
                              ("no_labels", "labels", False), ("no_legend", "legend", False)):
        if getattr(args, flag):
            document.set_view(name, value)
    if args.select >= 0:
        workspace.selection.select(document.session.operations[args.select].id)
    for _ in range(10):
        app.processEvents()
    canvas.fit_to_data()
    for _ in range(10):
        app.processEvents()
    if args.output:
        canvas.relayout()
        app.processEvents()
        canvas.grab().save(args.output)
        print("saved", args.output)
        return 0
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
