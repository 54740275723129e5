"""A machine: dense peak FLOP/s per precision, bandwidth per memory level and interconnect."""

from __future__ import annotations

from dataclasses import field, replace
from typing import Any

from workbench.model.dtypes import fallback_chain
from workbench.model.rules import ridge
from workbench.records import record

__all__ = ["Hardware", "Ceiling", "roof_name", "UnsupportedPrecision", "UnknownLevel", "UNITS_OF_WORK",
           "FIGURE_TABLES", "SINGLE_FIGURES", "RULE_OF_THUMB", "DEFAULT_LINK_LATENCY",
           "link_kind", "DEFAULT_RUNTIME_RESERVE"]

#: The execution units a computation can run on: ``matrix`` (tensor cores, MXU, AMX: the
#: ``compute`` table) and ``vector`` (CUDA cores, VPU, AVX/NEON: the ``vector_compute`` table).
UNITS_OF_WORK: tuple[str, ...] = ("matrix", "vector")

#: The tables of figures a ``measured:`` path may name (``memory.l2``, ``compute.fp32``, …),
#: and the single figures (``capacity``, ``launch_overhead``, ``efficiency``).
FIGURE_TABLES: tuple[str, ...] = ("compute", "vector_compute", "memory", "interconnect")
SINGLE_FIGURES: tuple[str, ...] = ("capacity", "launch_overhead", "efficiency")

#: How the launch overhead and the derating efficiency are described unless listed as
#: measured: they are rules of thumb, not hardware figures.
RULE_OF_THUMB = "rule of thumb"


#: Memory a serving runtime holds on each chip beyond the model where a machine states none:
#: 1 GiB (a CUDA context and cuBLAS/NCCL workspaces take 0.5-1.5 GiB).
DEFAULT_RUNTIME_RESERVE = 1024 ** 3

#: One step's latency on each kind of link, used where a machine lists none (seconds): the
#: per-hop latencies of NCCL's tuning model for its low-latency protocol (src/graph/tuning.cc,
#: hwLat: NVLink 0.6 µs, PCIe 1 µs, network 5 µs); ICI and Infinity Fabric are assumed
#: NVLink-like at 1 µs. A collective of n steps pays at least n of them.
DEFAULT_LINK_LATENCY: dict[str, float] = {
    "NVLink": 0.6e-6, "PCIe": 1.0e-6, "InfiniBand": 5.0e-6, "ICI": 1.0e-6,
    "Infinity Fabric": 1.0e-6,
}

_LINK_KINDS = (("nvlink", "NVLink"), ("pcie", "PCIe"), ("infiniband", "InfiniBand"),
               ("ib", "InfiniBand"), ("roce", "InfiniBand"), ("ethernet", "InfiniBand"),
               ("ici", "ICI"), ("infinity_fabric", "Infinity Fabric"),
               ("xgmi", "Infinity Fabric"))


def link_kind(link: str) -> str:
    """The kind of a link from its name (``nvlink``, ``nvlink_c2c`` → NVLink; ``ib0``,
    ``roce`` → InfiniBand, …); ``""`` when unknown."""
    name = link.lower().replace("-", "_").replace(" ", "_")
    for prefix, kind in _LINK_KINDS:
        if name.startswith(prefix):
            return kind
    return ""


class UnsupportedPrecision(LookupError):
    """The machine has no peak for a precision nor for any wider one it could fall back to."""


class UnknownLevel(LookupError):
    """A memory level or interconnect the machine does not have."""


@record(frozen=True)
class Ceiling:
    """The compute roof an operation meets on a machine.

    ``unit`` is the unit whose peak is used (``matrix`` or ``vector``), ``wanted`` the unit
    the operation's kind runs on; they differ only when a machine lists no vector peaks.
    ``note`` says in words what was chosen when it is not the obvious figure (a precision
    fallback, or the matrix peak standing in for vector work).
    """

    peak: float
    precision: str
    unit: str
    wanted: str
    note: str = ""

    @property
    def table(self) -> str:
        return "vector_compute" if self.unit == "vector" else "compute"

    @property
    def roof(self) -> str:
        """The name of the flat roof this ceiling is drawn as (see :func:`roof_name`)."""
        return roof_name(self.precision, self.unit)


def roof_name(precision: str, unit: str = "matrix") -> str:
    """A compute roof's name on the chart: ``bf16`` for a matrix peak, ``bf16 vector`` for
    a vector one."""
    return f"{precision} vector" if unit == "vector" else precision


@record
class Hardware:
    """All rates in base SI units: FLOP/s (or OP/s), bytes/s, seconds.

    ``compute`` holds *dense* peaks of the matrix units (tensor cores, MXU, AMX) per
    precision; vendor figures quoted with 2:4 sparsity are halved (``sparse_halved`` records
    that). ``vector_compute`` holds the peaks of the vector units (CUDA cores, VPU, AVX)
    that elementwise work, norms, softmax and reductions run on; a machine without it
    judges that work against ``compute``, and says so. ``main_memory`` names the level of
    ``memory`` that operations are measured against unless they choose another one.
    ``measured`` lists the figures (``memory.l2``, ``vector_compute.fp32``, ``capacity``,
    ``launch_overhead``, …) that are measurements rather than vendor specifications.
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
    vector_compute: dict[str, float] = field(default_factory=dict)
    measured: list[str] = field(default_factory=list)
    #: Figures of the calibrated prediction (:class:`workbench.model.prediction.Calibration`),
    #: from the preset's ``calibration`` block; ``None``: the stated assumptions are used.
    calibration: Any = None
    #: The session's choices, the same on every machine of a session: ``derated`` or
    #: ``calibrated`` prediction, and ``auto``, ``kernel``, ``eager`` or ``graph`` launches.
    #: A bare machine predicts with the plain derated formula; sessions, ``model`` and
    #: ``analyze`` give their machines :data:`workbench.model.prediction.DEFAULT_PREDICTION`
    #: unless the session names its own.
    prediction: str = "derated"
    launches: str = "eager"
    #: Seconds per step of a collective on each interconnect (one hop's latency); a link
    #: not listed takes :data:`DEFAULT_LINK_LATENCY` for its kind.
    link_latency: dict[str, float] = field(default_factory=dict)
    #: Price of one chip for one hour (any currency), for cost per token; None: unknown.
    price_per_hour: float | None = None
    #: Bytes of each chip's memory a serving runtime holds beyond the model (CUDA context,
    #: library workspaces, communication buffers); None: :data:`DEFAULT_RUNTIME_RESERVE`.
    runtime_reserve: float | None = None

    def reserve(self) -> tuple[float, str]:
        """The runtime reserve per chip and where the figure comes from."""
        if self.runtime_reserve is not None:
            return self.runtime_reserve, "machine"
        return DEFAULT_RUNTIME_RESERVE, "default"

    def latency_of(self, link: str) -> tuple[float, str]:
        """One step's latency on ``link`` and where the figure comes from (``machine``, or
        the default for its kind of link; ``0`` and ``unknown`` when there is none)."""
        if link in self.link_latency:
            return self.link_latency[link], "machine"
        kind = link_kind(link)
        if kind:
            return DEFAULT_LINK_LATENCY[kind], f"default for {kind}"
        return 0.0, "unknown"

    def __post_init__(self) -> None:
        if not self.main_memory and self.memory:
            self.main_memory = next(iter(self.memory))

    @property
    def label(self) -> str:
        return self.name or self.id

    def precision_for(self, precision: str, unit: str = "matrix") -> str:
        """The precision whose peak a computation in ``precision`` runs at on this machine."""
        return self.ceiling(precision, unit).precision

    def ceiling(self, precision: str, unit: str = "matrix") -> Ceiling:
        """The compute roof of work in ``precision`` on ``unit`` (``matrix`` or ``vector``).

        The precision falls back only along :func:`~workbench.model.dtypes.fallback_chain`
        (to a precision that holds every value of the requested one); vector work looks in
        ``vector_compute`` and, on a machine that lists no vector peaks at all, in
        ``compute`` with a note saying so. Raises :class:`UnsupportedPrecision` when no
        precision of the chain has a peak.
        """
        wanted = "vector" if unit == "vector" else "matrix"
        used = wanted
        table = self.compute
        if wanted == "vector":
            if self.vector_compute:
                table = self.vector_compute
            else:
                used = "matrix"
        chain = fallback_chain(precision)
        found = next((c for c in chain if c in table), None)
        if found is None:
            where = "vector" if used == "vector" else ""
            wider = ", ".join(chain[1:])
            also = f" (nor a wider precision it could run at: {wider})" if wider else \
                " (and no wider precision holds its values)"
            raise UnsupportedPrecision(
                f"{self.label} has no {precision} {where + ' ' if where else ''}peak{also}")
        notes = []
        if found != precision:
            notes.append(f"{precision} runs at the {found} peak (no {precision} "
                         f"{'vector ' if used == 'vector' else ''}peak on this machine; "
                         f"{found} is the next wider precision it has)")
        if wanted == "vector" and used == "matrix":
            notes.append("this machine lists no vector peaks: vector work is judged against "
                         "the matrix peak, an optimistic roof")
        return Ceiling(table[found], found, used, wanted, "; ".join(notes))

    def roof_peaks(self) -> dict[str, float]:
        """Every compute roof by :func:`roof_name`: matrix peaks (``bf16``), then vector ones
        (``bf16 vector``): what the chart can draw for this machine."""
        out = dict(self.compute)
        out.update((roof_name(p, "vector"), v) for p, v in self.vector_compute.items())
        return out

    def peak(self, precision: str, unit: str = "matrix") -> float:
        return self.ceiling(precision, unit).peak

    def is_measured(self, path: str) -> bool:
        """Whether the figure at ``path`` (``memory.l2``, ``compute.fp32``, ``capacity``) is
        listed as measured rather than specified by the vendor."""
        return path in self.measured

    def measured_figures(self) -> list[str]:
        """The ``measured`` paths that still name a figure of this machine (a level removed
        in the editor takes its mark with it)."""
        return [path for path in self.measured if self._names_figure(path)]

    def _names_figure(self, path: str) -> bool:
        """Whether the ``measured`` path ``path`` names a figure this machine has."""
        table, dot, key = path.partition(".")
        return bool((dot and table in FIGURE_TABLES and key in getattr(self, table))
                    or (not dot and path in SINGLE_FIGURES and getattr(self, path) is not None))

    def figure_status(self, path: str) -> str:
        """``measured``, ``rule of thumb`` (launch overhead and derating efficiency unless
        listed as measured) or ``specified``."""
        if path in self.measured and self._names_figure(path):
            return "measured"
        if path in ("launch_overhead", "efficiency"):
            return RULE_OF_THUMB
        return "specified"

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

    def ridge(self, precision: str, level: str | None = None, unit: str = "matrix") -> float:
        """Ridge point in FLOP/byte (:func:`~workbench.model.rules.ridge`)."""
        return ridge(self.peak(precision, unit), self.bandwidth(level))

    def copy(self, **changes) -> Hardware:
        """A deep copy, with ``changes`` applied (``compute={...}`` replaces the peaks)."""
        fresh: dict[str, Any] = {
            "compute": dict(self.compute),
            "vector_compute": dict(self.vector_compute),
            "measured": list(self.measured),
            "memory": dict(self.memory),
            "interconnect": dict(self.interconnect),
            "link_latency": dict(self.link_latency),
            "sources": list(self.sources),
        }
        fresh.update(changes)
        return replace(self, **fresh)
