"""The calibrated prediction: efficiencies by what limits a kernel and what kind of kernel it
is, a fixed start-up cost per kernel, and the launch cost with or without CUDA graphs.

Two ways to predict a time from the roofline (the session's ``prediction``; new sessions,
``model`` and ``analyze`` use :data:`DEFAULT_PREDICTION` with :data:`DEFAULT_LAUNCHES`, a
session that names its prediction keeps it):

* ``derated``: T_predicted = max(T_lower / efficiency, kernels × launch overhead),
  one efficiency per machine (a rule of thumb, 0.78 on the presets).
* ``calibrated``: T_predicted = kernels × (launch + start-up) + max(T_math / e_math,
  T_mem / e_mem), and in ``eager`` launches at least kernels × launch overhead, with

  - ``e_math`` the efficiency of the kernel's class on the compute roof (dense GEMM;
    attention prefill, causal or not) and ``e_mem`` on the bandwidth roof (streaming; decode
    attention; unfused attention; norm; softmax): see :data:`CLASSES` and :func:`classify`;
  - the launch cost per kernel by the session's ``launches``: ``auto`` (the default: a
    whole model replayed from a CUDA graph, as serving engines run it, and an operation on
    its own timed alone), ``kernel`` (each kernel timed alone, as a profiler or CUDA events
    show it), ``eager`` (a stream launched from Python:
    each kernel's GPU time as timed alone, and never faster than the launch overhead) or
    ``graph`` (replayed from a CUDA graph);
  - a start-up cost per kernel beyond a tiny one, by the unit it runs on (matrix kernels,
    row-wise norm and softmax kernels; elementwise kernels have none);
  - ``sustained``: the fraction of the compute roof left when compute-bound kernels run back
    to back for many milliseconds (clocks fall under the power limit), used for whole-model
    predictions only.

The figures of a machine are in its preset's ``calibration`` block, each with where it comes
from; a machine without one gets :data:`ASSUMED` (the H100 SXM's fractions and times, stated
as assumptions). Nothing here depends on an operation's name or shape beyond its kind and
the kind's own parameters (causal, query length 1, naive or fused).
"""

from __future__ import annotations

import functools
from dataclasses import field

from workbench.records import record

__all__ = ["CLASSES", "MATH_CLASSES", "MEMORY_CLASSES", "STARTUP_UNITS", "LAUNCHES",
           "PREDICTIONS", "DEFAULT_PREDICTION", "DEFAULT_LAUNCHES", "model_launches",
           "Calibration", "KernelClass", "ASSUMED", "classify", "calibration_of"]

#: Every kernel class: name → what it covers (shown in the derivation).
CLASSES: dict[str, str] = {
    "gemm": "dense GEMM on the matrix units",
    "attention": "fused attention prefill (full mask)",
    "attention_causal": "fused attention prefill, causal mask (diagonal tiles half wasted)",
    "streaming": "bandwidth-bound streaming (copies, elementwise, reductions, GEMV-like GEMMs)",
    "decode_attention": "decode attention (query length 1: the KV cache streamed)",
    "unfused_attention": "unfused (naive) attention: score matrix written and read in passes",
    "norm": "RMSNorm / LayerNorm kernels",
    "softmax": "softmax kernels",
}
MATH_CLASSES = ("gemm", "attention", "attention_causal")
MEMORY_CLASSES = ("streaming", "decode_attention", "unfused_attention", "norm", "softmax")
#: Start-up cost groups beyond a tiny elementwise kernel.
STARTUP_UNITS: dict[str, str] = {"matrix": "matrix kernels (GEMM, attention)",
                                 "rowwise": "row-wise kernels (norm, softmax)"}
LAUNCHES: dict[str, str] = {
    "auto": "from a CUDA graph for whole models, alone for operations",
    "kernel": "each kernel timed alone (a profiler, CUDA events)",
    "eager": "launched from Python one by one",
    "graph": "replayed from a CUDA graph",
}
PREDICTIONS = ("derated", "calibrated")
#: What a new session, ``model`` and ``analyze`` predict with unless told otherwise.
DEFAULT_PREDICTION = "calibrated"
DEFAULT_LAUNCHES = "auto"


def model_launches(launches: str) -> str:
    """The launches of a whole model's kernels: ``auto`` replays them from a CUDA graph (as
    serving engines do); any other choice holds as it is."""
    return "graph" if launches == "auto" else launches


@record(frozen=True)
class Calibration:
    """A machine's figures for the calibrated prediction (base SI units).

    ``efficiency``: class → fraction of the roof (:data:`CLASSES`); ``startup``: unit →
    seconds per kernel (:data:`STARTUP_UNITS`); ``launch_alone``: one tiny kernel timed
    alone; ``launch_eager``: kernels launched from Python, each; ``launch_graph``: each kernel
    replayed from a CUDA graph; ``sustained``: compute fraction left in long compute-bound
    runs; ``source``: where the figures come from; ``assumed``: figures of another machine."""

    efficiency: dict[str, float]
    startup: dict[str, float] = field(default_factory=dict)
    launch_alone: float = 0.0
    launch_eager: float = 0.0
    launch_graph: float = 0.0
    sustained: float = 1.0
    source: str = ""
    assumed: bool = False

    def launch(self, launches: str) -> float:
        """Seconds each kernel pays on the GPU's timeline for being launched (``auto``: an
        operation on its own, timed alone)."""
        return self.launch_graph if launches == "graph" else self.launch_alone

    def floor(self, launches: str) -> float:
        """Seconds each kernel takes at least (the Python launch rate in ``eager``)."""
        return self.launch_eager if launches == "eager" else 0.0

    def as_data(self) -> dict:
        """Plain numbers, as the preset file's ``calibration`` block holds them."""
        return {"efficiency": dict(self.efficiency), "startup": dict(self.startup),
                "launch_alone": self.launch_alone, "launch_eager": self.launch_eager,
                "launch_graph": self.launch_graph, "sustained": self.sustained,
                "source": self.source}


#: The figures a machine without its own calibration gets: the H100 SXM's (see
#: hardware_presets/h100-sxm.yaml), stated as assumptions wherever they are used.
ASSUMED = Calibration(
    efficiency={"gemm": 0.77, "attention": 0.693, "attention_causal": 0.558,
                "streaming": 0.87, "decode_attention": 0.902, "unfused_attention": 0.533,
                "norm": 0.722, "softmax": 0.39},
    startup={"matrix": 3.0e-6, "rowwise": 4.74e-6},
    launch_alone=3.83e-6, launch_eager=6.76e-6, launch_graph=1.02e-6, sustained=0.841,
    source="assumed: the H100 SXM's calibrated figures (measured 2026-11-26)", assumed=True)


@record(frozen=True)
class KernelClass:
    """Which efficiencies and start-up cost apply to an operation, and why."""

    math: str | None  # class on the compute roof (None: compute never binds it here)
    memory: str  # class on the bandwidth roof
    startup: str | None  # start-up unit (None: an elementwise kernel, no start-up)
    reason: str


def classify(kind: str, params: dict) -> KernelClass | None:
    """The kernel class of an operation of ``kind`` with ``params``; ``None`` for kinds the
    calibration does not cover (communication, custom): they keep the derated prediction."""
    if kind in ("attention", "mla_attention"):
        return _classify(kind, params.get("implementation", "flash") == "naive",
                         int(params.get("query_len", 1) or 1) == 1, bool(params.get("causal")))
    return _classify(kind, False, False, False)


@functools.lru_cache(maxsize=64)
def _classify(kind: str, naive: bool, decode: bool, causal: bool) -> KernelClass | None:
    params = {"implementation": "naive" if naive else "flash", "query_len": 1 if decode else 2,
              "causal": causal}
    if kind in ("gemm", "moe_gemm"):
        return KernelClass("gemm", "streaming", "matrix",
                           "a GEMM: dense-GEMM efficiency on the compute roof, streaming on "
                           "the bandwidth roof")
    if kind in ("attention", "mla_attention"):
        if params.get("implementation", "flash") == "naive":
            return KernelClass("gemm", "unfused_attention", "matrix",
                               "naive attention: the score matrix is written and read in "
                               "passes (unfused-attention efficiency on the bandwidth roof)")
        if int(params.get("query_len", 1) or 1) == 1:
            return KernelClass("attention", "decode_attention", "matrix",
                               "query length 1: decode attention streams the KV cache")
        if params.get("causal"):
            return KernelClass("attention_causal", "streaming", "matrix",
                               "causal prefill: the tiles on the mask's diagonal are computed "
                               "in full and half discarded")
        return KernelClass("attention", "streaming", "matrix", "fused attention prefill")
    if kind == "norm":
        return KernelClass(None, "norm", "rowwise", "a norm kernel (row-wise reductions)")
    if kind == "softmax":
        return KernelClass(None, "softmax", "rowwise", "a softmax kernel (row max, exp, sum)")
    if kind in ("elementwise", "reduction"):
        return KernelClass(None, "streaming", None, "an elementwise or reduction kernel "
                                                    "streams its bytes")
    return None


def calibration_of(hardware) -> Calibration:
    """The machine's own calibration, else :data:`ASSUMED`."""
    return getattr(hardware, "calibration", None) or ASSUMED
