"""The key of a chart's tagged points (Qt-free, device pixels): an operation whose name
finds no clean place by its point gets a short tag there ("3", or "A2" for a part of a whole
model) and a row of the key ("3 — name", :func:`figure_key`); markers that touch
(:func:`crowds`) have their tags said together by one text (:func:`crowd_text`), or in
parts (:func:`crowd_parts`) where that text finds no place."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Sequence

from workbench.records import record

__all__ = ["KeyRow", "figure_key", "crowds", "crowd_text", "crowd_parts"]


@record(frozen=True)
class KeyRow:
    """A row of the key: ``text`` as shown; ``ids`` the operations it names (none for a
    heading: a group's name, a line of its own)."""

    text: str
    ids: tuple[Hashable, ...] = ()

    @property
    def heading(self) -> bool:
        return not self.ids


def figure_key(named: Sequence[tuple[Hashable, str]],
               every: Sequence[tuple[Hashable, str]] | None = None
               ) -> tuple[dict[Hashable, str], list[KeyRow]]:
    """Tags and key rows for the operations ``named`` (``(id, name)`` in session order) whose
    names have no place on the chart: ``({id: tag}, rows)``.

    Each operation gets a number, ``"3 — name"`` in the key. Names of the form
    ``"group: part"`` shared by two operations or more (a whole model's: "8B prefill: QKV
    projection ×32") are said once per group: a heading row names the group and its rows name
    the parts, so a model takes one row per kind of operation, not one per name. With two
    groups or more each group has a letter (heading "A — 8B prefill"), its tags are the
    letter and the part's number ("A2"), and a part in several groups keeps one number and
    one row ("2 — QKV projection ×32").

    Groups, their letters and the parts' numbers follow ``every`` (all the chart's
    operations, in session order; default ``named``), not which names found no place: a
    part has the same number in every figure of the session, whatever its size (the parts
    first, by their first operation; then the other operations named, in order)."""
    every = named if every is None else every
    groups: dict[str, list[tuple[Hashable, str]]] = {}
    for key, name in every:
        group, sep, part = name.partition(": ")
        if sep and part.strip():
            groups.setdefault(group, []).append((key, part))
    groups = {g: parts for g, parts in groups.items() if len(parts) >= 2}
    ungrouped = any(name.partition(": ")[0] not in groups or not name.partition(": ")[1]
                    for _key, name in every)
    lettered = len(groups) >= 2 or (groups and ungrouped)
    letters = {g: _letter(i) for i, g in enumerate(groups)} if lettered else {}
    # each part's number: by its first operation among all the groups'
    part_number: dict[str, int] = {}
    for parts in groups.values():
        for _key, part in parts:
            part_number.setdefault(part, 0)
    for i, part in enumerate(sorted(part_number, key=_first_of(every, groups))):
        part_number[part] = i + 1
    tags: dict[Hashable, str] = {}
    numbered: dict[int, tuple[str, list[Hashable]]] = {}
    told_groups: list[str] = []
    plain = len(part_number)
    for key, name in named:
        group, sep, part = name.partition(": ")
        if sep and group in groups:
            n = part_number[part]
            numbered.setdefault(n, (part, []))[1].append(key)
            tags[key] = f"{letters.get(group, '')}{n}"
            if group not in told_groups:
                told_groups.append(group)
        else:
            plain += 1
            numbered[plain] = (name, [key])
            tags[key] = str(plain)
    told_groups.sort(key=list(groups).index)
    rows = [KeyRow(f"{letters[g]} — {g}" if letters else f"{g}:") for g in told_groups]
    rows += [KeyRow(f"{n} — {text}", tuple(keys)) for n, (text, keys) in sorted(numbered.items())]
    return tags, rows


def _first_of(every: Sequence[tuple[Hashable, str]], groups: dict) -> Callable[[str], int]:
    """The place of a part's first operation among ``every`` (a sort key)."""
    first: dict[str, int] = {}
    for i, (_key, name) in enumerate(every):
        group, sep, part = name.partition(": ")
        if sep and group in groups:
            first.setdefault(part, i)
    return lambda part: first.get(part, len(every))


def _letter(i: int) -> str:
    """A, B, … Z, then AA, AB …"""
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("A") + r) + out
    return out


# ---------------------------------------------------------------------------------------
# crowds of markers: one tag text for each


def crowds(xy: Sequence[tuple[float, float]], near: float, reach: float = 2.0
           ) -> list[list[int]]:
    """The indices of the points ``xy`` in crowds: two points whose centres are at most
    ``near`` apart each way (markers that touch or overlap) are in one crowd, and so are
    their neighbours in turn, as far as ``reach`` × ``near`` from the crowd's first point (a
    row of markers along a roof is cut into crowds a tag can stand for, not one crowd the
    length of the line). Crowds are in the order of their first points, each in the order
    of ``xy``; a point that is not finite is a crowd of its own."""
    # points drawn at one place (a model's layers) are in one crowd: the crowds are found
    # among the places, in the order of their first points
    places: dict[tuple[float, float], list[int]] = {}
    alone: list[list[int]] = []
    for i, (x, y) in enumerate(xy):
        if math.isfinite(x) and math.isfinite(y):
            places.setdefault((x, y), []).append(i)
        else:
            alone.append([i])
    if len(places) + len(alone) == len(xy):  # (no two at one place)
        return _crowds(xy, near, reach)
    spots = list(places)
    out = [sorted(i for k in crowd for i in places[spots[k]])
           for crowd in _crowds(spots, near, reach)]
    return sorted(out + alone, key=lambda members: members[0])


def _crowds(xy: Sequence[tuple[float, float]], near: float, reach: float
            ) -> list[list[int]]:
    """:func:`crowds`, each point searched on its own."""
    cells: dict[tuple[int, int], list[int]] = {}
    finite = []
    for i, (x, y) in enumerate(xy):
        ok = math.isfinite(x) and math.isfinite(y)
        finite.append(ok)
        if ok:
            cells.setdefault((int(x // near), int(y // near)), []).append(i)
    crowd_of: dict[int, int] = {}
    out: list[list[int]] = []
    for i, (x, y) in enumerate(xy):
        if i in crowd_of:
            continue
        crowd_of[i] = len(out)
        members = [i]
        out.append(members)
        if not finite[i]:
            continue
        far = reach * near
        queue = [i]
        while queue:
            j = queue.pop()
            jx, jy = xy[j]
            cx, cy = int(jx // near), int(jy // near)
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for k in cells.get((cx + dx, cy + dy), ()):
                        if k in crowd_of:
                            continue
                        kx, ky = xy[k]
                        if (abs(kx - jx) <= near and abs(ky - jy) <= near
                                and abs(kx - x) <= far and abs(ky - y) <= far):
                            crowd_of[k] = crowd_of[i]
                            members.append(k)
                            queue.append(k)
        members.sort()
    return out


def _parts_by_groups(tags: Sequence[str]) -> list[tuple[tuple[str, ...], list[int]]]:
    """``tags`` ("A12", "B3", "7") as ``(groups, numbers)``: each number with the groups
    that have it, those with the most groups first, then by their groups' letters."""
    groups_of: dict[int, set[str]] = {}
    for tag in tags:
        letters = tag.rstrip("0123456789")
        number = tag[len(letters):]
        if number:
            groups_of.setdefault(int(number), set()).add(letters)
    by_groups: dict[tuple[str, ...], list[int]] = {}
    for part in sorted(groups_of):
        key = tuple(sorted(groups_of[part], key=lambda g: (len(g), g)))
        by_groups.setdefault(key, []).append(part)
    return sorted(by_groups.items(),
                  key=lambda item: (-len(item[0]), [(len(g), g) for g in item[0]]))


def crowd_text(tags: Sequence[str], per_line: int = 4) -> str:
    """The tags of a crowd said once: ``"A, B: 1, 3, 6"`` for the parts 1, 3 and 6 of the
    groups A and B (a whole model's prefill and decode: the same kinds of operation lie on
    one another), then ``"B: 2, 5"`` for the parts of B alone; a line per set of groups, at
    most ``per_line`` numbers to a line; a part of a single group in full ("A3"); plain
    numbers as ``"2, 5, 8"``. Each tag of ``tags`` is a group's letters and a number
    ("A12") or a number."""
    # (the same crowds are said again at each placing: a whole model's, of a thousand
    # tags, each time the model is edited)
    return _crowd_text(tuple(tags), per_line)


@functools.lru_cache(maxsize=256)
def _crowd_text(tags: tuple[str, ...], per_line: int) -> str:
    """:func:`crowd_text` of a tuple of tags."""
    lines = []
    for groups, numbers in _parts_by_groups(tags):
        head = ", ".join(groups)
        count = -(-len(numbers) // per_line)  # lines, as even as they can be
        size = -(-len(numbers) // count)
        chunks = [", ".join(str(n) for n in numbers[i:i + size])
                  for i in range(0, len(numbers), size)]
        if head and len(numbers) == 1:  # one part: its tags in full ("A3, B3")
            lines.append(", ".join(f"{g}{numbers[0]}" for g in groups))
        elif head:
            lines.append(f"{head}: {chunks[0]}")
            lines += chunks[1:]
        else:
            lines += chunks
    return "\n".join(lines)


def crowd_parts(tags: Sequence[str]) -> list[list[int]]:
    """A crowd's tags in two or more smaller crowds, as indices into ``tags``: one per set
    of groups of :func:`crowd_text` (its lines), or, when all share one, its first and
    second halves (a crowd whose text found no place is said in parts). One tag: itself."""
    # (a whole model's crowds, of hundreds of tags, are said in parts again at each edit)
    return [list(part) for part in _crowd_parts(tuple(tags))]


@functools.lru_cache(maxsize=256)
def _crowd_parts(tags: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    """:func:`crowd_parts` of a tuple of tags."""
    if len(tags) < 2:
        return (tuple(range(len(tags))),)
    index = {tag: i for i, tag in enumerate(tags)}
    parts = [[index[f"{g}{n}"] for n in numbers for g in groups if f"{g}{n}" in index]
             for groups, numbers in _parts_by_groups(tags)]
    parts = [sorted(p) for p in parts if p]
    if len(parts) < 2:
        half = (len(tags) + 1) // 2
        parts = [list(range(half)), list(range(half, len(tags)))]
    return tuple(tuple(p) for p in parts)
