"""``roofline-workbench render``: the session's chart as a PNG, SVG, PDF or HTML file, no
display needed."""

from __future__ import annotations

import argparse

from workbench.cli.common import fail, load, positive_whole


def add_parser(sub) -> None:
    render = sub.add_parser(
        "render", help="draw the chart to a PNG, SVG, PDF or HTML file (no display needed)",
        description="Draw the session's roofline chart to a figure file. The format follows "
                    "the extension of -o; .html is one self-contained page with tooltips, "
                    "a key, the Results table and the session. Without a size: "
                    "1600 x 1000 pixels at 160 dpi. "
                    "slide = 1920 x 1080 at 144 dpi (13.33 x 7.5 in); single = 3.5 in and "
                    "double = 7.16 in wide at 300 dpi (pixels follow --dpi). --width or "
                    "--height alone keeps the aspect ratio.")
    render.add_argument("session", help="session file (.yaml)")
    render.add_argument("-o", "--output", required=True, metavar="FIG",
                        help="output file: .png, .svg, .pdf or .html")
    render.add_argument("--size", choices=("slide", "single", "double"),
                        help="a preset size (see above)")
    render.add_argument("--width", type=_pixels, metavar="PX", help="width in pixels")
    render.add_argument("--height", type=_pixels, metavar="PX", help="height in pixels")
    render.add_argument("--dpi", type=_dpi, metavar="N",
                        help="dots per inch: fonts, lines and markers scale with it")
    render.add_argument("--theme", choices=("light", "dark", "presentation"), default="light")
    render.add_argument("--transparent", action="store_true",
                        help="no background (PNG, SVG and PDF)")
    render.add_argument("--sweep-plot", nargs="?", const="", metavar="OPERATION",
                        help="draw the sweep plot of OPERATION (named as in the session; "
                             "without a name, the first operation with a sweep) instead of "
                             "the chart, as the app's Sweep Plot ▸ Export… does: .png, .svg "
                             "or .pdf")
    render.add_argument("--sweep-y", choices=("flops", "time"),
                        help="the sweep plot's y axis: attainable FLOP/s (the default) or "
                             "the best-case time T_lower")


_pixels = positive_whole("a whole number of pixels", "a positive number of pixels")


def _dpi(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def run(args) -> int:
    """Check everything that can be checked without Qt first (size, format, session), so that
    bad input fails fast with one line and no file; then draw."""
    from workbench.ui.figures.export import ExportError, format_of, resolve_size
    from workbench.ui.figures.figure_size import PLOT_FORMATS

    try:
        if args.sweep_plot is None:
            format_of(args.output)
        else:
            format_of(args.output, PLOT_FORMATS, "the sweep plot")
        resolve_size(args.size, args.width, args.height, args.dpi, args.theme)
    except ExportError as exc:
        return fail(str(exc))
    session, error = load(args.session)
    if error:
        return fail(error)
    swept = None
    if args.sweep_plot is not None:
        swept, error = _swept(session, args.session, args.sweep_plot)
        if error:
            return fail(error)
    elif args.sweep_y is not None:
        return fail("--sweep-y is the sweep plot's: give --sweep-plot too")
    from workbench.io.atomic import check_writable

    try:  # a read-only file or folder fails before the drawing
        check_writable(args.output)
    except OSError as exc:
        return fail(f"{args.output}: cannot write: {exc.strerror or exc}")
    from workbench.ui.figures.export import render_figure
    from workbench.ui.window.app import create_app, quiet_platform_notes

    quiet_platform_notes()
    create_app(offscreen_without_display=True)
    try:
        if swept is not None:
            from workbench.ui.window.exporting import render_sweep_plot

            fig = resolve_size(args.size, args.width, args.height, args.dpi, args.theme)
            render_sweep_plot(session, swept, args.output, fig, mode=args.sweep_y or "flops",
                              theme=args.theme, transparent=args.transparent)
        else:
            render_figure(session, args.output, size=args.size, width=args.width,
                          height=args.height, dpi=args.dpi, theme=args.theme,
                          transparent=args.transparent)
    except ExportError as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"{args.output}: cannot write: {exc.strerror or exc}")
    return 0


def _swept(session, source: str, name: str) -> tuple[int | None, str]:
    """The id of the operation ``name`` of ``session`` (the first with a sweep when ``name``
    is empty) for the sweep plot, or a message saying why there is none."""
    entries = session.operations
    if not name:
        entry = next((e for e in entries if e.sweep is not None), None)
        if entry is None:
            return None, f"{source}: no operation has a sweep to plot"
        return entry.id, ""
    entry = next((e for e in entries if e.operation.name == name), None)
    if entry is None:
        return None, f"{source}: no operation named {name!r}"
    if entry.sweep is None:
        return None, f"{source}: operation {name!r} has no sweep to plot"
    return entry.id, ""
