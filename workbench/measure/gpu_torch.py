"""The PyTorch backend of the GPU measurement: ``cuda`` (NVIDIA, and AMD through ROCm's
HIP build) and ``mps`` (Apple GPUs).

Imported only when a GPU measurement is asked for (PyTorch is the optional ``gpu`` extra).
Each timing is taken as the reference measurements in calibration/gpu-measurements/ were: GPU time
of one call between two CUDA events, after warm-ups; suite kernels each after a 512 MiB write
that flushes the L2. On MPS, which has no CUDA events here, a call is timed on the host
between two synchronizations.
"""

from __future__ import annotations

import math
import os
import platform
import subprocess
import time
import warnings
from typing import Any

import torch

from workbench.measure.gpu_types import DeviceInfo, Unavailable

__all__ = ["TorchBackend"]

FLUSH_BYTES = 512 * 1024**2
#: why the L2 sweep is left out without Triton: PyTorch's sum of a stride-0 view reads at the
#: reduction's own rate (2.7 TB/s on an H100 for every working set), not at the cache's
READER_MISSING = ("repeated reads of a working set need Triton (pip install triton; "
                  "PyTorch's CUDA wheels for Linux include it)")
DTYPES = {"fp64": torch.float64, "fp32": torch.float32, "tf32": torch.float32,
          "bf16": torch.bfloat16, "fp16": torch.float16}


class TorchBackend:
    """A :class:`~workbench.measure.gpu_backend.GpuBackend` on PyTorch."""

    name = "torch"

    def __init__(self, kind: str = "cuda") -> None:
        self.kind = kind
        self.device = None
        self.info: DeviceInfo | None = None
        self._flush = None
        self._read: Any = False  # not looked for yet; then the read kernel, or None

    # -- devices -------------------------------------------------------------------------

    def versions(self) -> dict[str, str]:
        out = {"torch": torch.__version__}  # (a str subclass: the YAML writer makes it plain)
        if self.kind == "cuda":
            out["cuda"] = torch.version.cuda or ""
            out["hip"] = getattr(torch.version, "hip", None) or ""
            try:
                out["cudnn"] = str(torch.backends.cudnn.version() or "")
            except Exception:  # noqa: BLE001 - the version is provenance, not a need
                out["cudnn"] = ""
            out["driver"] = _nvidia_driver() if not out["hip"] else ""
        else:
            out["macos"] = platform.mac_ver()[0]
        return out

    def devices(self) -> list[DeviceInfo]:
        if self.kind == "mps":
            if not (torch.backends.mps.is_available()):
                return []
            return [DeviceInfo(0, _apple_chip(), "mps", "Apple", _physical_memory(), 0)]
        if not torch.cuda.is_available():
            return []
        hip = bool(getattr(torch.version, "hip", None))
        found = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            arch = getattr(p, "gcnArchName", "") if hip else f"{p.major}.{p.minor}"
            found.append(DeviceInfo(i, p.name, "cuda", "AMD" if hip else "NVIDIA",
                                    int(p.total_memory), int(getattr(p, "L2_cache_size", 0) or 0),
                                    int(p.multi_processor_count), str(arch)))
        return found

    def select(self, index: int) -> DeviceInfo:
        found = self.devices()
        if not 0 <= index < len(found):
            raise Unavailable(f"no {self.kind} device {index} (found {len(found)})")
        self.info = found[index]
        if self.kind == "cuda":
            torch.cuda.set_device(index)
            self.device = torch.device("cuda", index)
        else:
            self.device = torch.device("mps")
        return self.info

    def precisions(self) -> tuple[str, ...]:
        if self.kind == "mps":
            return ("bf16", "fp16", "fp32")
        out = ["fp64", "fp32", "fp16"]
        hip = bool(getattr(torch.version, "hip", None))
        major = int(self.info.arch.split(".")[0]) if self.info and not hip else 0
        if hip or major >= 8:
            out += ["bf16"]
        if not hip and major >= 8:
            out += ["tf32"]
        if _fp8_dtype(self.info) is not None:
            out += ["fp8"]
        return tuple(out)

    # -- timing --------------------------------------------------------------------------

    def _sync(self) -> None:
        if self.kind == "cuda":
            torch.cuda.synchronize()
        else:
            torch.mps.synchronize()

    def _flush_buffer(self):
        if self._flush is None:
            self._flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=self.device)
        return self._flush

    def _time(self, fn, runs: int, warmup: int, flush: bool = False) -> list[float]:
        for _ in range(warmup):
            fn()
        self._sync()
        out = []
        for _ in range(runs):
            if flush:
                self._flush_buffer().zero_()
            if self.kind == "cuda":
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                out.append(start.elapsed_time(end) * 1e-3)
            else:
                self._sync()
                t0 = time.perf_counter()
                fn()
                self._sync()
                out.append(time.perf_counter() - t0)
        return out

    def _guard(self, what: str, make):
        """Run ``make()``; a library error (no kernel, out of memory) becomes Unavailable."""
        try:
            return make()
        except (RuntimeError, TypeError, NotImplementedError, AttributeError) as exc:
            raise Unavailable(f"{what}: {' '.join(str(exc).split())[:200]}") from None
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
            if self.kind == "cuda":
                torch.cuda.empty_cache()

    def time_gemm(self, precision: str, m: int, n: int, k: int, runs: int,
                  warmup: int) -> list[float]:
        def make():
            dev = self.device
            if precision == "fp8":
                f8 = _fp8_dtype(self.info)
                a = torch.randn(m, k, device=dev).to(f8)
                bt = torch.randn(n, k, device=dev).to(f8)
                one = torch.tensor(1.0, device=dev)
                return self._time(lambda: torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one,
                                                           out_dtype=torch.bfloat16),
                                  runs, warmup)
            a = torch.randn(m, k, device=dev, dtype=DTYPES[precision])
            b = torch.randn(k, n, device=dev, dtype=DTYPES[precision])
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
            return self._time(lambda: torch.matmul(a, b), runs, warmup)

        return self._guard(f"{precision} GEMM {m}×{n}×{k}", make)

    def time_stream(self, kernel: str, array_bytes: int, runs: int, warmup: int,
                    passes: int = 1) -> list[float]:
        def make():
            n = max(1, array_bytes // 4)
            x = torch.ones(n, device=self.device)
            if kernel == "copy":
                y = torch.empty_like(x)
                return self._time(lambda: y.copy_(x), runs, warmup)
            if kernel == "read":
                read = self._reader()
                if read is None:  # one pass reads at full speed in PyTorch's own sum
                    if passes > 1:
                        raise Unavailable(READER_MISSING)
                    return self._time(lambda: x.sum(), runs, warmup)
                return self._time(lambda: read(x, n, passes), runs, warmup)
            if kernel == "triad":
                b, c = torch.ones_like(x), torch.ones_like(x)
                return self._time(lambda: torch.add(b, c, alpha=2.0, out=x), runs, warmup)
            raise Unavailable(f"unknown stream kernel {kernel!r}")

        return self._guard(f"{kernel} of {array_bytes} bytes", make)

    def _reader(self):
        """The Triton read kernel (:mod:`workbench.measure.gpu_triton`) on a CUDA or ROCm
        device, or ``None`` where Triton is missing or MPS is measured."""
        if self._read is False:
            self._read = None
            if self.kind == "cuda":
                try:
                    from workbench.measure.gpu_triton import make_reader
                except ImportError:  # no Triton: the bandwidth is read by PyTorch's own copy
                    self._read = None
                else:
                    sink = torch.zeros(1, device=self.device)
                    self._read = make_reader(sink, self.info.units if self.info else 1)
        return self._read

    def time_launch(self, mode: str, launches: int, runs: int) -> list[float]:
        def make():
            xa = torch.randn(4096, device=self.device)
            xb = torch.randn(4096, device=self.device)

            def adds(count: int) -> None:  # ``count`` tiny kernels, back to back
                for _ in range(count):
                    torch.add(xa, xb)

            def per_launch(call, per_call: int) -> list[float]:
                """Host seconds per kernel of ``call`` (``per_call`` kernels), each run
                ended by a synchronization."""
                times = []
                for _ in range(runs):
                    self._sync()
                    start = time.perf_counter()
                    call()
                    self._sync()
                    times.append((time.perf_counter() - start) / per_call)
                return times

            adds(100)
            self._sync()
            if mode == "eager":
                return per_launch(lambda: adds(launches), launches)
            if self.kind != "cuda":
                raise Unavailable("graphs are CUDA's (MPS has none)")
            captured = min(launches, 1000)
            # a capture wants its warm-ups on a stream of their own (PyTorch's CUDA graph notes)
            warm = torch.cuda.Stream()
            warm.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(warm):
                adds(3)
            torch.cuda.current_stream().wait_stream(warm)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                adds(captured)
            graph.replay()
            replays = 5

            def replay() -> None:
                for _ in range(replays):
                    graph.replay()

            return per_launch(replay, replays * captured)

        return self._guard(f"{mode} launches", make)

    def time_kernel(self, kind: str, params: dict[str, Any], runs: int, warmup: int,
                    flush: bool = True) -> list[float]:
        def make():
            variants = _MAKERS[kind](self, params)
            best = None
            for fn in variants:
                try:
                    times = self._time(fn, runs, warmup, flush)
                except (RuntimeError, NotImplementedError):  # a backend without this case
                    continue
                if best is None or sorted(times)[len(times) // 2] < sorted(best)[len(best) // 2]:
                    best = times
            if best is None:
                raise Unavailable(f"no {kind} kernel ran")
            return best

        return self._guard(kind, make)

    def release(self) -> None:
        self._flush = None
        self._read = False
        if self.kind == "cuda" and torch.cuda.is_available():
            torch.cuda.empty_cache()
        elif self.kind == "mps":
            torch.mps.empty_cache()


# -- the suite's operations (workbench.measure.gpu_suite.SUITE) ---------------------------


def _dt(name: str):
    return DTYPES[name]


def _gemm(be: TorchBackend, p):
    dev, b = be.device, p.get("batch", 1)
    m, n, k = p["m"], p["n"], p["k"]
    a = torch.randn(*((b, m, k) if b > 1 else (m, k)), device=dev, dtype=_dt(p["dtype"]))
    bb = torch.randn(*((b, k, n) if b > 1 else (k, n)), device=dev, dtype=_dt(p["dtype"]))
    return [lambda: torch.matmul(a, bb)]


def _attention(be: TorchBackend, p):
    import torch.nn.functional as F  # noqa: N812

    heads, kv_heads = p["heads"], p.get("kv_heads") or p["heads"]
    kv_len = p.get("kv_len") or p["query_len"]

    def tensor(n_heads: int, length: int):  # (batch, heads, length, head_dim), bf16
        return torch.randn(p["batch"], n_heads, length, p["head_dim"], device=be.device,
                           dtype=torch.bfloat16)

    q, k, v = tensor(heads, p["query_len"]), tensor(kv_heads, kv_len), tensor(kv_heads, kv_len)
    causal = p.get("causal", False)
    if p.get("implementation") == "naive":
        scaled_q = q * (1.0 / math.sqrt(p["head_dim"]))  # scaled once, outside the timing

        def naive():  # scores written, softmax read and written, probabilities read
            scores = torch.matmul(scaled_q, k.transpose(-1, -2))
            return torch.matmul(torch.softmax(scores, dim=-1), v)
        return [naive]
    gqa = {"enable_gqa": True} if kv_heads != heads else {}
    if be.kind != "cuda":
        return [lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)]
    from torch.nn.attention import SDPBackend, sdpa_kernel

    fns = []
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION,
                    SDPBackend.EFFICIENT_ATTENTION):
        def run(backend=backend):
            # a backend that cannot take the shape raises (the suite skips it) after warning
            # why at length; the skip is the answer, the warnings are noise on the terminal
            with warnings.catch_warnings(), sdpa_kernel([backend]):
                warnings.simplefilter("ignore", UserWarning)
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)
        fns.append(run)
    return fns


def _elementwise(be: TorchBackend, p):
    import torch.nn.functional as F  # noqa: N812

    x = torch.randn(p["n"], device=be.device, dtype=_dt(p["dtype"]))
    steps = [s["op"] for s in p["steps"]]
    if steps == ["copy"]:
        y = torch.empty_like(x)
        return [lambda: y.copy_(x)]
    if steps == ["add"]:
        r = torch.randn_like(x)
        return [lambda: torch.add(x, r)]
    if steps == ["gelu"]:
        return [lambda: F.gelu(x, approximate="tanh")]
    if steps == ["silu"]:
        return [lambda: F.silu(x)]
    raise Unavailable(f"elementwise {steps} is not in the suite")


def _norm(be: TorchBackend, p):
    import torch.nn.functional as F  # noqa: N812

    dt = _dt(p["dtype"])
    x = torch.randn(p["rows"], p["hidden"], device=be.device, dtype=dt)
    w = torch.randn(p["hidden"], device=be.device, dtype=dt)
    if p["variant"] == "rmsnorm":
        return [lambda: F.rms_norm(x, (p["hidden"],), w)]
    bias = torch.randn(p["hidden"], device=be.device, dtype=dt)
    return [lambda: F.layer_norm(x, (p["hidden"],), w, bias)]


def _softmax(be: TorchBackend, p):
    x = torch.randn(p["rows"], p["cols"], device=be.device, dtype=_dt(p["dtype"]))
    return [lambda: torch.softmax(x, dim=-1)]


def _reduction(be: TorchBackend, p):
    x = torch.randn(p["n"], device=be.device, dtype=_dt(p["dtype"]))
    return [lambda: x.max()] if p.get("op") == "max" else [lambda: x.sum()]


_MAKERS = {"gemm": _gemm, "attention": _attention, "elementwise": _elementwise,
           "norm": _norm, "softmax": _softmax, "reduction": _reduction}


# -- host facts ---------------------------------------------------------------------------


def _fp8_dtype(info: DeviceInfo | None):
    """The fp8 (e4m3) type ``torch._scaled_mm`` takes on this device, or ``None``: NVIDIA
    from compute capability 8.9 (Ada, Hopper, Blackwell), AMD's MI300 family (fnuz)."""
    if info is None or not hasattr(torch, "_scaled_mm"):
        return None
    if info.vendor == "NVIDIA":
        try:
            major, minor = (int(x) for x in info.arch.split(".")[:2])
        except ValueError:
            return None
        return getattr(torch, "float8_e4m3fn", None) if (major, minor) >= (8, 9) else None
    if info.vendor == "AMD" and info.arch.startswith("gfx94"):
        return getattr(torch, "float8_e4m3fnuz", None)
    return None


def _nvidia_driver() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout else ""
    except (OSError, subprocess.SubprocessError, IndexError):
        return ""


def _apple_chip() -> str:
    try:
        out = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True,
                             text=True, timeout=5)
        if out.returncode == 0 and out.stdout.strip():
            return f"{out.stdout.strip()} GPU"
    except (OSError, subprocess.SubprocessError):
        return "Apple GPU (MPS)"  # (no sysctl: the generic name)
    return "Apple GPU (MPS)"


def _physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0
