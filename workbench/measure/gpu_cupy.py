"""The CuPy backend of the GPU measurement, used for ``cuda`` where PyTorch is missing.

CuPy has cuBLAS GEMMs in fp64, fp32 and fp16 (no bf16 or fp8 type, and TF32 only through an
environment variable read at import, so ``tf32`` is not offered), elementwise kernels,
reductions, CUDA events and CUDA graphs (stream capture). It has no attention, norm or
softmax kernels: those operations of the suite are recorded as not measured, and their
kernel classes keep the assumed figures. Timing is the PyTorch backend's: CUDA events
around one call after warm-ups, suite kernels each after a 512 MiB write that flushes the L2.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import cupy
import numpy as np

from workbench.measure.gpu_types import DeviceInfo, Unavailable

__all__ = ["CupyBackend"]

FLUSH_BYTES = 512 * 1024**2
DTYPES = {"fp64": np.float64, "fp32": np.float32, "fp16": np.float16}
READ_THREADS = 256
#: a grid-stride read of ``n4`` float4s, ``passes`` times over; the sum is stored only when it
#: is impossible (the array holds ones), which keeps the loads without a write per thread
READ_SOURCE = r"""
extern "C" __global__ void workbench_read(const float4* __restrict__ x, long long n4,
                                          int passes, float* sink) {
    float acc = 0.0f;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (int p = 0; p < passes; ++p) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
            const float4 v = __ldcg(x + i);
            acc += (v.x + v.y) + (v.z + v.w);
        }
    }
    if (acc < 0.0f) sink[0] = acc;
}
"""


class CupyBackend:
    """A :class:`~workbench.measure.gpu_backend.GpuBackend` on CuPy (``cuda`` only)."""

    name = "cupy"
    kind = "cuda"

    def __init__(self) -> None:
        self.info: DeviceInfo | None = None
        self._flush = None
        self._read: Any = False  # not compiled yet; then the read function, or None
        self._triad = cupy.ElementwiseKernel("T b, T c, T s", "T a", "a = b + s * c",
                                             "workbench_triad")

    def versions(self) -> dict[str, str]:
        rt = cupy.cuda.runtime
        out = {"cupy": cupy.__version__}
        # the versions are provenance, not a need: a runtime that cannot say them is measured
        with contextlib.suppress(Exception):
            out["cuda runtime"] = str(rt.runtimeGetVersion())
            out["driver"] = str(rt.driverGetVersion())
        return out

    def devices(self) -> list[DeviceInfo]:
        rt = cupy.cuda.runtime
        try:
            count = rt.getDeviceCount()
        except Exception:  # noqa: BLE001 - no driver: no device
            return []
        hip = bool(getattr(rt, "is_hip", False))
        found = []
        for i in range(count):
            p = rt.getDeviceProperties(i)
            name = p.get("name", b"")
            name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
            arch = (p.get("gcnArchName", b"") or b"").decode(errors="replace") if hip \
                else f"{p.get('major', 0)}.{p.get('minor', 0)}"
            found.append(DeviceInfo(i, name, "cuda", "AMD" if hip else "NVIDIA",
                                    int(p.get("totalGlobalMem", 0)), int(p.get("l2CacheSize", 0)),
                                    int(p.get("multiProcessorCount", 0)), arch))
        return found

    def select(self, index: int) -> DeviceInfo:
        found = self.devices()
        if not 0 <= index < len(found):
            raise Unavailable(f"no cuda device {index} (found {len(found)})")
        cupy.cuda.Device(index).use()
        self.info = found[index]
        return self.info

    def precisions(self) -> tuple[str, ...]:
        return ("fp64", "fp32", "fp16")

    def _time(self, fn, runs: int, warmup: int, flush: bool = False) -> list[float]:
        for _ in range(warmup):
            fn()
        cupy.cuda.Device().synchronize()
        out = []
        for _ in range(runs):
            if flush:
                if self._flush is None:
                    self._flush = cupy.empty(FLUSH_BYTES // 4, dtype=np.int32)
                self._flush.fill(0)
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            fn()
            end.record()
            end.synchronize()
            out.append(cupy.cuda.get_elapsed_time(start, end) * 1e-3)
        return out

    def _guard(self, what: str, make):
        try:
            return make()
        except (cupy.cuda.memory.OutOfMemoryError, RuntimeError, TypeError, ValueError) as exc:
            raise Unavailable(f"{what}: {' '.join(str(exc).split())[:200]}") from None
        finally:
            cupy.get_default_memory_pool().free_all_blocks()

    def time_gemm(self, precision: str, m: int, n: int, k: int, runs: int,
                  warmup: int) -> list[float]:
        if precision not in DTYPES:
            raise Unavailable(f"CuPy has no {precision} GEMM")

        def make():
            a = cupy.random.standard_normal((m, k), dtype=np.float32).astype(DTYPES[precision])
            b = cupy.random.standard_normal((k, n), dtype=np.float32).astype(DTYPES[precision])
            return self._time(lambda: cupy.matmul(a, b), runs, warmup)

        return self._guard(f"{precision} GEMM {m}×{n}×{k}", make)

    def time_stream(self, kernel: str, array_bytes: int, runs: int, warmup: int,
                    passes: int = 1) -> list[float]:
        def make():
            n = max(1, array_bytes // 4)
            x = cupy.ones(n, dtype=np.float32)
            if kernel == "copy":
                y = cupy.empty_like(x)
                return self._time(lambda: cupy.copyto(y, x), runs, warmup)
            if kernel == "read":
                read = self._read_kernel()
                if read is None:  # no kernel compiler: CUB's sum reads one pass at full speed
                    if passes > 1:
                        raise Unavailable("repeated reads need CuPy's kernel compiler (NVRTC)")
                    return self._time(lambda: x.sum(), runs, warmup)
                return self._time(lambda: read(x, n, passes), runs, warmup)
            if kernel == "triad":
                b, c, s = cupy.ones_like(x), cupy.ones_like(x), np.float32(2.0)
                return self._time(lambda: self._triad(b, c, s, x), runs, warmup)
            raise Unavailable(f"unknown stream kernel {kernel!r}")

        return self._guard(f"{kernel} of {array_bytes} bytes", make)

    def _read_kernel(self):
        """``read(x, n, passes)``: one kernel that reads the ``n`` float32s of ``x`` ``passes`` times
        through the L2 (``ld.global.cg``: a working set small enough for the SMs' L1 caches
        would otherwise be read from them), or ``None`` when CuPy cannot compile kernels.
        (CuPy's own ``sum`` of a stride-0 view of ``passes`` rows runs its generic reduction,
        about 30 GB/s on an H100: a figure of that kernel, not of the L2.)"""
        if self._read is False:
            try:
                kernel = cupy.RawKernel(READ_SOURCE, "workbench_read")
                kernel.compile()
            except Exception:  # noqa: BLE001 - NVRTC missing or failing: the fallback says so
                self._read = None
            else:
                sms = max(1, self.info.units if self.info else 1)
                sink = cupy.zeros(1, dtype=np.float32)

                def read(x, n: int, passes: int) -> None:
                    n4 = n // 4
                    blocks = max(1, min(-(-n4 // READ_THREADS), 8 * sms))
                    kernel((blocks,), (READ_THREADS,), (x, np.int64(n4), np.int32(passes), sink))
                self._read = read
        return self._read

    def time_launch(self, mode: str, launches: int, runs: int) -> list[float]:
        def make():
            xa, xb = cupy.ones(4096, np.float32), cupy.ones(4096, np.float32)
            xc = cupy.empty_like(xa)
            for _ in range(100):
                cupy.add(xa, xb, out=xc)
            device = cupy.cuda.Device()
            device.synchronize()
            out = []
            if mode == "eager":
                for _ in range(runs):
                    device.synchronize()
                    t0 = time.perf_counter()
                    for _ in range(launches):
                        cupy.add(xa, xb, out=xc)
                    device.synchronize()
                    out.append((time.perf_counter() - t0) / launches)
                return out
            captured = min(launches, 1000)
            stream = cupy.cuda.Stream(non_blocking=True)
            with stream:
                stream.begin_capture()
                for _ in range(captured):
                    cupy.add(xa, xb, out=xc)
                graph = stream.end_capture()
            graph.launch(stream)
            stream.synchronize()
            for _ in range(runs):
                t0 = time.perf_counter()
                for _ in range(5):
                    graph.launch(stream)
                stream.synchronize()
                out.append((time.perf_counter() - t0) / (5 * captured))
            return out

        return self._guard(f"{mode} launches", make)

    def time_kernel(self, kind: str, params: dict[str, Any], runs: int, warmup: int,
                    flush: bool = True) -> list[float]:
        dtype = {"fp32": np.float32, "fp16": np.float16}.get(params.get("dtype", ""))
        if dtype is None:
            raise Unavailable(f"CuPy has no {params.get('dtype')} type")
        if kind == "elementwise":
            steps = [s["op"] for s in params["steps"]]
            if steps not in (["copy"], ["add"]):
                raise Unavailable(f"CuPy has no kernel for {steps}")

            def make():
                x = cupy.ones(params["n"], dtype=dtype)
                y = cupy.empty_like(x)
                if steps == ["copy"]:
                    return self._time(lambda: cupy.copyto(y, x), runs, warmup, flush)
                r = cupy.ones_like(x)
                return self._time(lambda: cupy.add(x, r, out=y), runs, warmup, flush)

            return self._guard(kind, make)
        if kind == "reduction" and params.get("op", "sum") == "sum":
            def make():
                x = cupy.ones(params["n"], dtype=dtype)
                return self._time(lambda: x.sum(), runs, warmup, flush)

            return self._guard(kind, make)
        raise Unavailable(f"CuPy has no {kind} kernel")

    def release(self) -> None:
        self._flush = None
        cupy.get_default_memory_pool().free_all_blocks()
