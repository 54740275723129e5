"""Access keys for menus: each item of a menu reached by a letter of its own.

Qt activates a menu item when its access key (the letter after ``&``) is pressed, but only
where no other item of the same menu has that key: where two share one, the key moves the
highlight between them and activates neither, and an item without one cannot be reached by a
letter at all. :func:`give_mnemonics` gives every item of a menu (and of its submenus) that has
none a letter no other item of that menu uses; the keys written by hand are kept.
:func:`escaped` keeps a user's ``&`` (a file or an operation named "R&D") from being read as
one.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMenu

__all__ = ["access_key", "escaped", "give_mnemonics", "give_mnemonics_when_shown",
           "shown_text", "with_mnemonic"]


def escaped(text: str) -> str:
    """``text`` shown as it is in a menu item (its ``&`` doubled)."""
    return text.replace("&", "&&")


def shown_text(text: str) -> str:
    """What a menu item of ``text`` shows: its access key's ``&`` gone, ``&&`` one ``&``."""
    return "&".join(part.replace("&", "") for part in text.split("&&"))


def access_key(text: str) -> str | None:
    """The access key of a menu item's ``text`` (lower case), or None."""
    i = 0
    while i < len(text) - 1:
        if text[i] == "&":
            if text[i + 1] != "&":
                return text[i + 1].lower()
            i += 1  # (a literal "&&")
        i += 1
    return None


def with_mnemonic(text: str, taken: set[str]) -> str:
    """``text`` with an access key not ``taken``: the first letter of a word where one is
    free, else any of its letters or digits; ``text`` as it was where none is free (it
    is added to ``taken``)."""
    plain = [(i, c) for i, c in enumerate(text) if c.isalnum()]
    starts = [(i, c) for i, c in plain if i == 0 or not text[i - 1].isalnum()]
    for i, c in starts + plain:
        if c.lower() not in taken:
            taken.add(c.lower())
            return text[:i] + "&" + text[i:]
    return text


def give_mnemonics(menu: QMenu) -> None:
    """Give each item of ``menu`` without an access key one that no other item of it uses
    (its submenus' items likewise, each menu on its own)."""
    actions = [a for a in menu.actions() if not a.isSeparator()]
    taken = {k for a in actions if (k := access_key(a.text())) is not None}
    for action in actions:
        if access_key(action.text()) is None:
            action.setText(with_mnemonic(action.text(), taken))
        if action.menu() is not None:
            give_mnemonics(action.menu())


def give_mnemonics_when_shown(menu: QMenu) -> None:
    """:func:`give_mnemonics` for ``menu`` as it is first about to be shown (its keys are
    only read while it is open), not while the window is being built."""

    def give() -> None:
        menu.aboutToShow.disconnect(give)
        give_mnemonics(menu)

    menu.aboutToShow.connect(give)
