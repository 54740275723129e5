"""What the operating system and numpy say about this machine: CPU model, cores, cache
sizes, numpy and BLAS versions. Every probe falls back quietly: a figure that cannot be read
is ``None`` (or empty), never an error."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

from workbench.model.units import BINARY

__all__ = ["cpu_model", "cpu_vendor", "core_count", "cache_sizes", "blas_info",
           "available_memory", "THREAD_VARIABLES", "thread_env"]

#: Environment variables that set how many threads the common BLAS libraries use.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def thread_env(threads: int) -> dict[str, str]:
    """A copy of the environment with every BLAS thread count set to ``threads``."""
    env = dict(os.environ)
    for name in THREAD_VARIABLES:
        env[name] = str(threads)
    return env


def _sysctl(name: str) -> str | None:
    if sys.platform != "darwin":
        return None
    try:
        out = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=2)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _cpuinfo_field(key: str) -> str | None:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return None
    match = re.search(rf"^{key}\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else None


def cpu_model() -> str:
    return (_cpuinfo_field("model name") or _sysctl("machdep.cpu.brand_string")
            or platform.processor() or platform.machine() or "unknown CPU")


def cpu_vendor() -> str:
    vendor = _cpuinfo_field("vendor_id") or _sysctl("machdep.cpu.vendor") or ""
    return {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}.get(vendor, vendor)


def core_count() -> int:
    """Cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        with contextlib.suppress(OSError):  # (then the count of the whole machine)
            return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _parse_size(text: str) -> int | None:
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)B?\s*", text, re.IGNORECASE)
    if not match:
        return None
    prefix = match.group(2).upper()
    return int(match.group(1)) * (BINARY[prefix + "i"] if prefix else 1)  # (sysfs: K = KiB)


def cache_sizes() -> tuple[dict[str, int], str]:
    """``({"L1": bytes, "L2": …, "L3": …}, where they came from)``: data and unified caches
    of CPU 0 as the OS reports them; empty when it reports none."""
    out: dict[str, int] = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        entries = sorted(base.glob("index*"))
    except OSError:
        entries = []
    for entry in entries:
        try:
            kind = (entry / "type").read_text().strip()
            level = int((entry / "level").read_text().strip())
            size = _parse_size((entry / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size and 1 <= level <= 3:
            out[f"L{level}"] = size
    if out:
        return out, str(base)
    for level, name in ((1, "LEVEL1_DCACHE_SIZE"), (2, "LEVEL2_CACHE_SIZE"),
                        (3, "LEVEL3_CACHE_SIZE")):
        key = f"SC_{name}"
        try:
            value = os.sysconf(key) if key in os.sysconf_names else 0
        except (OSError, ValueError):
            value = 0
        if value and value > 0:
            out[f"L{level}"] = int(value)
    if out:
        return out, "os.sysconf"
    for level, name in ((1, "hw.l1dcachesize"), (2, "hw.l2cachesize"), (3, "hw.l3cachesize")):
        value = _sysctl(name)
        if value and value.isdigit() and int(value) > 0:
            out[f"L{level}"] = int(value)
    return out, ("sysctl" if out else "not reported")


def available_memory() -> int | None:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def blas_info() -> dict[str, str]:
    """numpy's version and the BLAS it was built with (name, version, configuration)."""
    import numpy as np

    out = {"numpy": np.__version__, "python": platform.python_version()}
    try:
        config = np.show_config(mode="dicts")
    except (TypeError, ValueError, AttributeError):  # numpy < 1.26 has no mode
        config = None
    if isinstance(config, dict):
        blas = config.get("Build Dependencies", {}).get("blas", {})
        for key in ("name", "version", "openblas configuration"):
            if blas.get(key):
                out[f"blas_{key.split()[0]}" if key != "name" else "blas"] = " ".join(
                    str(blas[key]).split())
    return out
