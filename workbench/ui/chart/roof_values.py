"""A compute roof's value or a ridge said on screen without its machine's name where the whole
text finds no place by its line or diamond: "H100 SXM5 80GB: bf16 989 TFLOP/s" → "bf16 989
TFLOP/s", the line's colour, the legend and the line's tooltip naming the machine; "EPYC 9654
Genoa: ridge 32 FLOP/B" → "ridge 32 FLOP/B", by the diamond in the machine's colour on its
line, the text's tooltip naming it. (A figure says such values in its key instead: see
:class:`~workbench.ui.chart.tags.TagsAndKey`.)"""

from __future__ import annotations


def say_values_short(canvas, among=None) -> bool:
    """After a placing on screen, each main compute roof's value and each ridge's text that
    found no place in full (of the keys ``among``, when given) is tried once more in its
    shorter form (:meth:`RoofLayer.shorter`), after every other text, in the texts' order,
    and kept only where it finds a place; else it stays unsaid, asked for as it was. The
    next full placing says each in full again first (:meth:`RoofLayer.lengthen`). True
    where one was placed with a leader (to be drawn)."""
    labels, roofs = canvas.labels, canvas.roofs
    layout = labels.text_layout
    if layout is None or not canvas.key_on_screen:
        return False
    short = {}  # (by label: the words it would say, the labels left as they are)
    wanted: dict[str, list[int]] = {"roof": [], "ridge": []}
    for kind, items in (("roof", roofs.roof_texts), ("ridge", roofs.ridges)):
        for i, (_item, label) in enumerate(items):
            key = (kind, i)
            if (key not in layout.placed and labels.entry(key) is not None
                    and (among is None or key in among)):
                text = roofs.shorter(key)
                if text is not None:
                    short[id(label)] = text
                    wanted[kind].append(i)
    if not short:
        return False
    made = labels.requests_of_chart(wanted["roof"],
                                    lambda label: labels.text_box_of(label, short[id(label)]),
                                    wanted["ridge"])
    led = False
    for key, label, request in sorted(made, key=lambda m: (m[2].priority, m[2].order)):
        placement = layout.place(request)
        if placement is None:  # (no room for it either: unsaid, asked for as it was)
            layout.remove(key)
            layout.requests[key] = labels.entry(key)[1]
            continue
        roofs.shorten(key)
        labels.set_entry(key, label, request)
        labels.apply(label, placement)
        led |= placement.leader is not None
    return led
