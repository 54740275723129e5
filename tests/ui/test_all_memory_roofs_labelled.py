"""View ▸ All Memory Roofs names every memory roof it draws, and keeps the main memories'
names: a CPU's L1, L2 and L3 lines close together were left unnamed, and the GPUs' HBM
lines lost theirs. A value with no room along its line is said beside it with a leader."""

from __future__ import annotations

from workbench.io.presets import get_preset

#: a one-socket server CPU with its caches (bandwidths in B/s)
LEVELS = {"ddr5": 460.8e9, "l3": 1.6e12, "l2": 4.8e12, "l1": 9.6e12}


def test_every_memory_roof_is_named_with_all_memory_roofs(open_window, qtbot):
    win = open_window(size=(1366, 768))
    assert win.new_session()
    for preset in ("h100-sxm", "a100-80gb"):
        win.document.add_machine(get_preset(preset), preset)
    win.document.add_machine(get_preset("epyc-9654").copy(memory=LEVELS), None)
    win.add_operation("gemm")
    canvas = win.canvas
    canvas.relayout()
    main = set(canvas.roof_labels())
    assert {"hbm 3.35 TB/s", "hbm 2.04 TB/s", "ddr5 461 GB/s"} <= main

    win.view_actions["all_levels"].trigger()
    canvas.relayout()
    drawn = [(hw, name) for hw, kind, name, _xs, _ys in canvas.roof_items() if kind == "memory"]
    assert len(drawn) == 3 + 3 + 4  # hbm, l2 and l1 of each GPU, the CPU's four
    named = canvas.roof_labels()
    # each line's name and bandwidth, as the machine gives it (9.8 and 5.4 TB/s: the GPUs'
    # L2s in their presets; 32.9 and 19.1 TB/s their L1s)
    for text in ("hbm 3.35 TB/s", "l2 9.8 TB/s", "l1 32.9 TB/s", "hbm 2.04 TB/s",
                 "l2 5.4 TB/s", "l1 19.1 TB/s",
                 "ddr5 461 GB/s", "l3 1.6 TB/s", "l2 4.8 TB/s", "l1 9.6 TB/s"):
        assert text in named, (text, named)
