"""What a GPU measurement needs from a GPU library: the :class:`GpuBackend` protocol.

A backend lists the devices of one kind (``cuda`` for NVIDIA and AMD through PyTorch or
CuPy, ``mps`` for Apple GPUs through PyTorch) and times a few things on one of them, each
call returning the seconds of every timed run (the plan and the arithmetic on those times
are :mod:`workbench.measure.gpu_runner`'s, the same for every backend):

* a GEMM of a precision and shape (:meth:`GpuBackend.time_gemm`);
* a stream kernel over arrays of a given size (:meth:`GpuBackend.time_stream`): ``copy``
  (y = x), ``read`` (a sum of x, read ``passes`` times in one kernel) and ``triad``
  (a = b + s·c);
* an empty (tiny) kernel launched eagerly from the host, or replayed from a CUDA graph
  (:meth:`GpuBackend.time_launch`);
* an operation of the kernel suite (:data:`workbench.measure.gpu_suite.SUITE`) by its kind
  and parameters (:meth:`GpuBackend.time_kernel`).

The libraries are optional (``pip install ".[gpu]"``): :func:`load_backend` imports one only
when asked, and raises :class:`BackendMissing` with one line saying what to install when
none is there.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Protocol, runtime_checkable

from workbench.measure.gpu_types import BackendMissing, DeviceInfo, NoDevice, Unavailable

__all__ = ["GPU_DEVICES", "DeviceInfo", "GpuBackend", "BackendMissing", "NoDevice",
           "Unavailable", "load_backend", "INSTALL_HINT", "list_gpus"]

#: The ``--device`` values that name a GPU (``cpu`` is the numpy measurement).
GPU_DEVICES = ("cuda", "mps")
INSTALL_HINT = ('install PyTorch for GPU measurements: pip install ".[gpu]" '
                "(or pip install torch; CuPy is used where PyTorch is missing)")


@runtime_checkable
class GpuBackend(Protocol):
    """A GPU library, bound to one device kind (see the module docstring)."""

    name: str  # torch | cupy | a test replay

    def versions(self) -> dict[str, str]:
        """The library's and the driver's versions, for the measurement's provenance."""

    def devices(self) -> list[DeviceInfo]:
        """Every device of the backend's kind (empty when there is none)."""

    def select(self, index: int) -> DeviceInfo:
        """Use device ``index`` from now on."""

    def precisions(self) -> tuple[str, ...]:
        """The GEMM precisions the selected device runs (fp64, fp32, tf32, bf16, fp16, fp8)."""

    def time_gemm(self, precision: str, m: int, n: int, k: int, runs: int,
                  warmup: int) -> list[float]:
        """Seconds of each of ``runs`` (m×k)·(k×n) products in ``precision`` (fp32 without
        TF32; tf32 is fp32 data on the TF32 path; fp8 is e4m3 operands, bf16 output)."""

    def time_stream(self, kernel: str, array_bytes: int, runs: int, warmup: int,
                    passes: int = 1) -> list[float]:
        """Seconds of each run of ``kernel`` (copy, read, triad) over arrays of
        ``array_bytes`` each; ``read`` goes over its array ``passes`` times in one kernel."""

    def time_launch(self, mode: str, launches: int, runs: int) -> list[float]:
        """Seconds per launch of a tiny kernel, ``launches`` back to back from the host
        (``eager``) or replayed from a CUDA graph (``graph``), for each of ``runs``."""

    def time_kernel(self, kind: str, params: dict[str, Any], runs: int, warmup: int,
                    flush: bool = True) -> list[float]:
        """Seconds of each run of one operation of the suite, each after an L2 flush."""

    def release(self) -> None:
        """Free what the measurement allocated."""


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def load_backend(device: str, backend: str | None = None) -> GpuBackend:
    """The backend for ``device`` (``cuda`` or ``mps``): PyTorch, else CuPy (``cuda`` only),
    or the one named. Raises :class:`BackendMissing` (what to install) or :class:`NoDevice`."""
    if device not in GPU_DEVICES:
        raise ValueError(f"unknown GPU device {device!r} (expected one of "
                         f"{', '.join(GPU_DEVICES)})")
    wanted = [backend] if backend else ["torch", "cupy"] if device == "cuda" else ["torch"]
    for name in wanted:
        if name == "torch" and _installed("torch"):
            try:
                from workbench.measure.gpu_torch import TorchBackend
            except ImportError as exc:
                raise BackendMissing(f"PyTorch is installed but does not import ({exc}); "
                                     f"{INSTALL_HINT}") from None
            found = TorchBackend(device)
        elif name == "cupy" and device == "cuda" and _installed("cupy"):
            try:
                from workbench.measure.gpu_cupy import CupyBackend
            except ImportError as exc:
                raise BackendMissing(f"CuPy is installed but does not import ({exc}); "
                                     f"{INSTALL_HINT}") from None
            found = CupyBackend()
        else:
            continue
        if not found.devices():
            raise NoDevice(f"{found.name} finds no {device} device on this computer"
                           + (" (PyTorch's MPS needs an Apple GPU and macOS 12.3 or newer)"
                              if device == "mps" else " (is the driver installed?)"))
        return found
    if device == "mps":
        raise BackendMissing('install PyTorch for Apple GPU measurements: pip install ".[gpu]"')
    raise BackendMissing(INSTALL_HINT)


def list_gpus() -> list[tuple[GpuBackend, DeviceInfo]]:
    """Every GPU a backend finds here, for a device menu: ``[]`` when no library is
    installed or none finds a device (never raises for that)."""
    out: list[tuple[GpuBackend, DeviceInfo]] = []
    for device in GPU_DEVICES:
        try:
            backend = load_backend(device)
        except (BackendMissing, NoDevice):
            continue
        except Exception:  # noqa: BLE001 - a broken driver must not break a menu
            continue
        out.extend((backend, info) for info in backend.devices())
    return out
