"""A compute roof's value said on screen without its machine's name where the whole text finds
no place beside its line: "H100 SXM5 80GB: bf16 989 TFLOP/s" → "bf16 989 TFLOP/s", the line's
colour, the legend and the line's tooltip naming the machine. (A figure says such values in
its key instead: see :class:`~workbench.ui.chart.tags.TagsAndKey`.)"""

from __future__ import annotations


def say_values_short(canvas, among=None) -> None:
    """After a placing on screen, each main compute roof's value that found no place in
    full (of the keys ``among``, when given) is tried once more in its shorter form
    (:meth:`RoofLayer.shorter`), after every other text, and kept only where it finds a
    place; else it stays unsaid, asked for as it was. The next full placing says each in
    full again first (:meth:`RoofLayer.lengthen`)."""
    labels, roofs = canvas.labels, canvas.roofs
    layout = labels.text_layout
    if layout is None or not canvas.key_on_screen:
        return
    short = {}  # (by label: the box each would have, the labels left as they are)
    for i, (_roof, label) in enumerate(roofs.roof_texts):
        key = ("roof", i)
        if (key not in layout.placed and labels.entry(key) is not None
                and (among is None or key in among)):
            text = roofs.shorter(i)
            if text is not None:
                short[id(label)] = (i, text)
    if not short:
        return
    for key, label, request in labels.requests_of_chart(
            [i for i, _text in short.values()],
            lambda label: labels.text_box_of(label, short[id(label)][1])):
        placement = layout.place(request)
        if placement is None:  # (no room for it either: unsaid, asked for as it was)
            layout.remove(key)
            layout.requests[key] = labels.entry(key)[1]
            continue
        roofs.shorten(key[1])
        labels.set_entry(key, label, request)
        labels.apply(label, placement)
