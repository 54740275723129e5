"""Evaluated sweeps and their crossings, remembered by operation, machine and sweep (plain
data, no Qt): the chart, the sweep plot and the sweep editor ask for the same ones, and a
rebuild of the chart re-evaluates only the sweeps whose operation or machine changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.model.errors import COUNTING_ERRORS

if TYPE_CHECKING:
    from workbench.model.sweeps import Crossing, SweepResult

# (workbench.model.sweeps is imported by the functions that evaluate, when a session has a
# sweep: not at start-up)

__all__ = ["cached_sweep", "cache_sweeps"]

#: Evaluated sweeps and their crossings by (operation, machine, sweep): a rebuild of the chart
#: re-evaluates only the sweeps whose operation or machine changed.
_SWEEP_CACHE: dict[tuple, tuple] = {}
_SWEEP_CACHE_SIZE = 512


def cached_sweep(op, hw, sweep, key: tuple | None = None
                 ) -> tuple[SweepResult, list[Crossing]]:
    """:func:`~workbench.model.sweeps.evaluate_sweep` and
    :func:`~workbench.model.sweeps.sweep_crossings` of ``op`` on ``hw``, remembered for the
    same operation, machine and sweep (the chart and the sweep plot share them). ``key``:
    the one :func:`cache_sweeps` gave for ``hw``, where known."""
    if key is None:
        key = _key(repr(op), hw, sweep)
    found = _SWEEP_CACHE.get(key)
    if found is None:
        from workbench.model.sweeps import evaluate_sweep, sweep_crossings  # (see the imports)

        found = _remember(key, evaluate_sweep(op, hw, sweep), sweep_crossings(op, hw, sweep))
    return found


def cache_sweeps(op, machines: Sequence[Any], sweep) -> list[tuple]:
    """Evaluate the sweep of ``op`` on those of ``machines`` (:class:`Hardware`) not yet
    remembered by :func:`cached_sweep`, all at once: the FLOPs and bytes of each step
    counted once for every machine (:func:`~workbench.model.sweeps.evaluate_sweep_on`,
    :func:`~workbench.model.sweeps.crossings_on`). Where one cannot be evaluated, none is
    remembered here: :func:`cached_sweep` of each says why. Returns the key each machine's
    is remembered by, for :func:`cached_sweep` (a machine's said in full is a few thousand
    characters: worked out once for the caller, not at each look-up)."""
    said = repr(op)
    keys = [_key(said, hw, sweep) for hw in machines]
    todo = [(key, hw) for key, hw in zip(keys, machines, strict=True) if key not in _SWEEP_CACHE]
    if len(todo) < 2:
        return keys  # (one machine: cached_sweep's own search is the same)
    from workbench.model.sweeps import evaluate_sweep_on, sweep_crossings_on

    hws = [hw for _key, hw in todo]
    try:  # (a SweepError is a ValueError)
        evaluated = zip(evaluate_sweep_on(op, hws, sweep), sweep_crossings_on(op, hws, sweep),
                        strict=True)
    except COUNTING_ERRORS:
        return keys
    for (key, _hw), (result, crossings) in zip(todo, evaluated, strict=True):
        _remember(key, result, crossings)
    return keys


def _key(said_op: str, hw, sweep) -> tuple:
    """What a sweep is remembered by: its operation said in full (``said_op``: its
    ``repr``, worked out once for many machines), its machine's and the sweep."""
    return (said_op, repr(hw), sweep)


def _remember(key: tuple, result: SweepResult, crossings: list[Crossing]) -> tuple:
    if len(_SWEEP_CACHE) >= _SWEEP_CACHE_SIZE:
        _SWEEP_CACHE.pop(next(iter(_SWEEP_CACHE)))
    _SWEEP_CACHE[key] = (result, crossings)
    return _SWEEP_CACHE[key]
