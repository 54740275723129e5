"""A machine: dense peak FLOP/s per precision, bandwidth per memory level and interconnect."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from workbench.model.dtypes import fallback_chain

__all__ = ["Hardware", "UnsupportedPrecision", "UnknownLevel"]


class UnsupportedPrecision(LookupError):
    """The machine has no peak for a precision nor for any wider one it could fall back to."""


class UnknownLevel(LookupError):
    """A memory level or interconnect the machine does not have."""


@dataclass
class Hardware:
    """All rates in base SI units: FLOP/s (or OP/s), bytes/s, seconds.

    ``compute`` holds *dense* peaks; vendor figures quoted with 2:4 sparsity are halved
    (``sparse_halved`` records that). ``main_memory`` names the level of ``memory`` that
    operations are measured against unless they choose another one.
    """

    name: str
    compute: dict[str, float]
    memory: dict[str, float]
    main_memory: str = ""
    id: str = ""
    vendor: str = ""
    kind: str = "custom"
    capacity: float | None = None
    interconnect: dict[str, float] = field(default_factory=dict)
    launch_overhead: float | None = None
    efficiency: float | None = None
    sparse_halved: bool = False
    sources: list[str] = field(default_factory=list)
    notes: str = ""

    def __post_init__(self) -> None:
        if not self.main_memory and self.memory:
            self.main_memory = next(iter(self.memory))

    @property
    def label(self) -> str:
        return self.name or self.id

    def precision_for(self, precision: str) -> str:
        """The precision whose peak a computation in ``precision`` runs at on this machine."""
        for candidate in fallback_chain(precision):
            if candidate in self.compute:
                return candidate
        raise UnsupportedPrecision(
            f"{self.label} has no {precision} peak (nor a wider precision to run it at)"
        )

    def peak(self, precision: str) -> float:
        return self.compute[self.precision_for(precision)]

    @property
    def levels(self) -> dict[str, float]:
        """Every level bytes can be counted across: memory levels, then interconnects."""
        return {**self.memory, **self.interconnect}

    def bandwidth(self, level: str | None = None) -> float:
        name = level or self.main_memory
        if name in self.interconnect:  # (as in levels: an interconnect wins a shared name)
            return self.interconnect[name]
        if name in self.memory:
            return self.memory[name]
        levels = self.levels
        if name not in levels:
            raise UnknownLevel(
                f"{self.label} has no memory level or interconnect {name!r}"
                f" (it has: {', '.join(levels) or 'none'})"
            )
        return levels[name]

    def level_for(self, level: str | None) -> str:
        """The level actually used: ``level`` if given, else main memory."""
        return level or self.main_memory

    def ridge(self, precision: str, level: str | None = None) -> float:
        """Ridge point in FLOP/byte: peak / bandwidth."""
        return self.peak(precision) / self.bandwidth(level)

    def copy(self, **changes) -> Hardware:
        """A deep copy, with ``changes`` applied (``compute={...}`` replaces the peaks)."""
        fresh = {
            "compute": dict(self.compute),
            "memory": dict(self.memory),
            "interconnect": dict(self.interconnect),
            "sources": list(self.sources),
        }
        fresh.update(changes)
        return replace(self, **fresh)
