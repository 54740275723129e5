"""The plain types of the GPU measurement: a device as its library reports it, and the
errors a backend raises (:mod:`workbench.measure.gpu_backend` re-exports them)."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from workbench.records import record

__all__ = ["DeviceInfo", "BackendMissing", "NoDevice", "Unavailable"]


class BackendMissing(RuntimeError):
    """No GPU library is installed for the device asked for."""


class NoDevice(RuntimeError):
    """The library is there, but it finds no device of the kind asked for."""


class Unavailable(RuntimeError):
    """The device or backend cannot run this (a precision it lacks, an operation the library
    has no kernel for); the measurement records why and goes on."""


@record(frozen=True)
class DeviceInfo:
    """One GPU as its library reports it."""

    index: int
    name: str
    kind: str  # cuda | mps
    vendor: str  # NVIDIA | AMD | Apple
    memory: int  # bytes of device memory
    l2: int  # bytes of last-level (L2) cache; 0 when the library does not say
    units: int = 0  # SMs (NVIDIA), CUs (AMD), GPU cores (Apple) where known
    arch: str = ""  # compute capability (8.0, 9.0) or gfx name
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.index} {self.name}"
