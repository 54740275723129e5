"""The PyTorch and CuPy backends' control flow, run through stand-ins for the parts of the
libraries they call (shapes only, no arithmetic), since neither library nor a GPU is here.

This checks that every path of workbench/measure/gpu_torch.py and gpu_cupy.py runs (devices,
precisions, each timing, every operation of the suite, graphs, fp8, errors becoming
``Unavailable``) and that the measurement built on it is whole; it cannot check the
libraries' real behaviour or the figures, which need a GPU."""

from __future__ import annotations

import contextlib
import enum
import importlib
import sys
import time
import types

import pytest

from workbench.measure.gpu_backend import Unavailable
from workbench.measure.gpu_suite import FULL, SUITE


class Tensor:
    def __init__(self, *shape, dtype="float32"):
        self.shape, self.dtype = tuple(shape), dtype

    def __getattr__(self, name):  # every method returns a tensor (sum, t, to, zero_, …)
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: self

    def unsqueeze(self, dim):
        return Tensor(1, *self.shape, dtype=self.dtype)

    def expand(self, *shape):
        return Tensor(*shape, dtype=self.dtype)

    def __mul__(self, other):
        return self


def _stub_torch(calls: list, cuda: bool = True, fail: tuple = ()):
    torch = types.ModuleType("torch")
    torch.__version__ = "2.11.0+stub"
    for name in ("float64", "float32", "bfloat16", "float16", "int32", "float8_e4m3fn",
                 "uint8"):
        setattr(torch, name, name)
    torch.version = types.SimpleNamespace(cuda="13.0", hip=None)

    def make(*shape, device=None, dtype="float32"):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        return Tensor(*shape, dtype=dtype)

    def op(name):
        def run(*args, **kw):
            calls.append(name)
            if name in fail:
                raise RuntimeError(f"{name}: no kernel")
            return Tensor()
        return run

    torch.empty = torch.randn = torch.ones = torch.zeros = make
    torch.empty_like = torch.ones_like = torch.randn_like = lambda x, **k: x
    torch.tensor = lambda value, device=None: Tensor()
    torch.device = lambda *a: ("device", *a)
    torch.matmul, torch.add, torch.softmax = op("matmul"), op("add"), op("softmax")
    torch._scaled_mm = op("scaled_mm")

    class Event:
        def __init__(self, enable_timing=False):
            self.t = 0.0

        def record(self):
            self.t = time.perf_counter()

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            return max(1e-6, (end.t - self.t) * 1e3) + 1e-3

    class Graph:
        def replay(self):
            calls.append("replay")

    props = types.SimpleNamespace(name="NVIDIA H100 80GB HBM3", total_memory=85 * 2**30,
                                  L2_cache_size=50 * 2**20, multi_processor_count=132,
                                  major=9, minor=0)
    torch.cuda = types.SimpleNamespace(
        is_available=lambda: cuda, device_count=lambda: 1,
        get_device_properties=lambda i: props, set_device=lambda i: None,
        synchronize=lambda: None, empty_cache=lambda: None, Event=Event, CUDAGraph=Graph,
        Stream=lambda: types.SimpleNamespace(wait_stream=lambda s: None),
        current_stream=lambda: types.SimpleNamespace(wait_stream=lambda s: None),
        stream=lambda s: contextlib.nullcontext(), graph=lambda g: contextlib.nullcontext())
    torch.mps = types.SimpleNamespace(synchronize=lambda: None, empty_cache=lambda: None)
    torch.backends = types.SimpleNamespace(
        cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)),
        cudnn=types.SimpleNamespace(version=lambda: 91000),
        mps=types.SimpleNamespace(is_available=lambda: not cuda))

    nn = types.ModuleType("torch.nn")
    functional = types.ModuleType("torch.nn.functional")
    for name in ("gelu", "silu", "rms_norm", "layer_norm"):
        setattr(functional, name, op(name))
    functional.scaled_dot_product_attention = op("sdpa")
    attention = types.ModuleType("torch.nn.attention")
    attention.SDPBackend = enum.Enum("SDPBackend", "FLASH_ATTENTION CUDNN_ATTENTION "
                                                   "EFFICIENT_ATTENTION")
    attention.sdpa_kernel = lambda backends: contextlib.nullcontext()
    nn.functional, nn.attention, torch.nn = functional, attention, nn
    return {"torch": torch, "torch.nn": nn, "torch.nn.functional": functional,
            "torch.nn.attention": attention}


def _stub_triton_reader(calls: list):
    """workbench.measure.gpu_triton as it is where Triton imports: a reader that records the
    launches (Triton itself is not needed: it needs a GPU to compile)."""
    module = types.ModuleType("workbench.measure.gpu_triton")

    def make_reader(sink, units):
        calls.append(("reader", units))
        return lambda x, n, passes: calls.append(("read", n, passes))

    module.make_reader = make_reader
    return module


@pytest.fixture
def backend_module(monkeypatch):
    def load(calls, triton: bool = True, **kw):
        for name, module in _stub_torch(calls, **kw).items():
            monkeypatch.setitem(sys.modules, name, module)
        if triton:
            monkeypatch.setitem(sys.modules, "workbench.measure.gpu_triton",
                                _stub_triton_reader(calls))
        else:  # an import of it fails, as where Triton is missing
            monkeypatch.setitem(sys.modules, "workbench.measure.gpu_triton", None)
        monkeypatch.delitem(sys.modules, "workbench.measure.gpu_torch", raising=False)
        return importlib.import_module("workbench.measure.gpu_torch")

    yield load
    sys.modules.pop("workbench.measure.gpu_torch", None)


def test_a_cuda_device_runs_every_stage_and_suite_operation(backend_module, monkeypatch):
    from workbench.io.presets import get_preset
    from workbench.measure.gpu_runner import GPU_PROFILES, measure_gpu

    calls: list = []
    gpu_torch = backend_module(calls)
    monkeypatch.setattr(gpu_torch, "_nvidia_driver", lambda: "580.159.04")
    backend = gpu_torch.TorchBackend("cuda")
    [info] = backend.devices()
    assert info.name == "NVIDIA H100 80GB HBM3" and info.l2 == 50 * 2**20
    assert info.vendor == "NVIDIA" and info.arch == "9.0"
    backend.select(0)
    assert backend.precisions() == ("fp64", "fp32", "fp16", "bf16", "tf32", "fp8")
    profile = GPU_PROFILES["tiny"]
    full = type(profile)(**{**profile.__dict__, "suite": FULL})
    measured = measure_gpu(backend, 0, full, datasheet=get_preset("h100-sxm"),
                           datasheet_id="h100-sxm")
    prov = measured.provenance
    assert set(prov["gemm"]) == {"fp64", "fp32", "fp16", "bf16", "tf32", "fp8"}
    assert set(prov["stream"]) == {"copy", "read", "triad"}
    assert set(prov["launch"]) == {"eager", "graph"}
    assert prov["l2_sweep"] and not [k for k, v in prov["kernels"].items() if "error" in v]
    assert set(prov["kernels"]) == set(FULL)
    assert prov["versions"]["driver"] == "580.159.04"
    for name in ("matmul", "scaled_mm", "add", "softmax", "sdpa", "gelu", "silu", "rms_norm",
                 "layer_norm", "replay"):
        assert name in calls, name
    assert measured.hardware.calibration is not None
    # every read is the Triton kernel's, made once for the device's 132 SMs: the sweep's
    # many passes over small working sets, the main-memory figure's one pass
    assert calls.count(("reader", 132)) == 1
    reads = [c for c in calls if isinstance(c, tuple) and c[0] == "read"]
    assert {p for _, _n, p in reads} > {1} and (2**20 // 4) in {n for _, n, _p in reads}
    assert "sum" not in calls
    backend.release()


def test_without_triton_the_l2_sweep_is_left_out_and_says_why(backend_module):
    """PyTorch's own sum over a stride-0 view read at 2.7 TB/s on an H100 for every working
    set, and the sweep then said the L2 was no faster than memory: without the read kernel
    the sweep is left out, and the note names what to install."""
    from workbench.measure.gpu_runner import measure_gpu

    calls: list = []
    gpu_torch = backend_module(calls, triton=False)
    backend = gpu_torch.TorchBackend("cuda")
    measured = measure_gpu(backend, 0, "tiny")
    prov = measured.provenance
    assert "read" in prov["stream"]  # one pass: PyTorch's sum
    assert prov["l2_sweep"] == [] and "memory.l2" not in measured.hardware.measured
    [note] = [n for n in prov["notes"] if n.startswith("L2 sweep")]
    assert "Triton" in note and "pip install triton" in note
    assert not any("no L2 plateau" in n for n in prov["notes"])


def test_library_errors_become_unavailable_and_the_run_goes_on(backend_module):
    from workbench.measure.gpu_runner import measure_gpu

    calls: list = []
    gpu_torch = backend_module(calls, fail=("scaled_mm", "sdpa"))
    backend = gpu_torch.TorchBackend("cuda")
    backend.select(0)
    with pytest.raises(Unavailable, match="fp8 GEMM"):
        backend.time_gemm("fp8", 256, 256, 256, 2, 1)
    with pytest.raises(Unavailable, match="no attention kernel ran"):
        backend.time_kernel(*SUITE["fa_prefill_full"], 2, 1)
    measured = measure_gpu(backend, 0, "tiny")
    assert "fp8" not in measured.provenance["gemm"]
    assert any(n.startswith("fp8: not measured") for n in measured.provenance["notes"])
    assert "error" in measured.provenance["kernels"]["fa_prefill_full"]


def test_an_apple_gpu_has_no_graphs_and_no_fp64(backend_module, monkeypatch):
    from workbench.measure.gpu_runner import measure_gpu

    calls: list = []
    gpu_torch = backend_module(calls, cuda=False)
    monkeypatch.setattr(gpu_torch, "_apple_chip", lambda: "Apple M4 Max GPU")
    backend = gpu_torch.TorchBackend("mps")
    [info] = backend.devices()
    assert info.kind == "mps" and info.vendor == "Apple"
    backend.select(0)
    assert "fp64" not in backend.precisions()
    with pytest.raises(Unavailable, match="MPS has none"):
        backend.time_launch("graph", 10, 2)
    measured = measure_gpu(backend, 0, "tiny")
    assert set(measured.provenance["launch"]) == {"eager"}
    assert gpu_torch.TorchBackend("cuda").devices() == []  # no CUDA on this stand-in


# -- the CuPy backend, through a stand-in for CuPy -----------------------------------------


def _stub_cupy(calls: list):
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "13.6.0+stub"

    def make(shape, dtype="float32", **kw):
        shape = shape if isinstance(shape, tuple) else (shape,)
        return Tensor(*shape, dtype=dtype)

    def op(name):
        def run(*args, **kw):
            calls.append(name)
            return Tensor()
        return run

    cupy.empty = cupy.ones = make
    cupy.empty_like = cupy.ones_like = lambda x, **k: x
    cupy.copyto, cupy.matmul, cupy.add = op("copyto"), op("matmul"), op("add")
    cupy.broadcast_to = lambda x, shape: Tensor(*shape)
    cupy.random = types.SimpleNamespace(standard_normal=lambda shape, dtype=None: make(shape))
    cupy.ElementwiseKernel = lambda *a: op("triad")

    class RawKernel:  # records each launch's grid and passes
        def __init__(self, source, name):
            assert "__ldcg" in source and name in source
            self.name = name

        def compile(self):
            calls.append(f"compile {self.name}")

        def __call__(self, grid, block, args):
            _x, n4, passes, _sink = args
            calls.append(("read", grid[0], block[0], int(n4), int(passes)))

    cupy.RawKernel = RawKernel
    cupy.zeros = make
    cupy.get_default_memory_pool = lambda: types.SimpleNamespace(free_all_blocks=lambda: None)

    class Event:
        def record(self):
            self.t = time.perf_counter()

        def synchronize(self):
            pass

    class Stream(contextlib.nullcontext):
        def __init__(self, non_blocking=False):
            super().__init__()

        def begin_capture(self):
            calls.append("capture")

        def end_capture(self):
            return types.SimpleNamespace(launch=lambda stream: calls.append("launch graph"))

        def synchronize(self):
            pass

    props = {"name": b"NVIDIA H200", "totalGlobalMem": 140 * 2**30, "l2CacheSize": 50 * 2**20,
             "multiProcessorCount": 132, "major": 9, "minor": 0}
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000,
                                    getDeviceCount=lambda: 1, getDeviceProperties=lambda i: props,
                                    is_hip=False)
    cupy.cuda = types.SimpleNamespace(
        runtime=runtime, Event=Event, Stream=Stream,
        Device=lambda i=0: types.SimpleNamespace(use=lambda: None, synchronize=lambda: None),
        get_elapsed_time=lambda s, e: max(1e-3, (e.t - s.t) * 1e3),
        memory=types.SimpleNamespace(OutOfMemoryError=MemoryError))
    return cupy


def test_the_cupy_backend_runs_what_cupy_has(monkeypatch):
    from workbench.io.presets import get_preset
    from workbench.measure import gpu_backend
    from workbench.measure.gpu_runner import measure_gpu

    calls: list = []
    monkeypatch.setitem(sys.modules, "cupy", _stub_cupy(calls))
    monkeypatch.delitem(sys.modules, "workbench.measure.gpu_cupy", raising=False)
    monkeypatch.setattr(gpu_backend, "_installed", lambda module: module == "cupy")
    try:
        backend = gpu_backend.load_backend("cuda")  # PyTorch missing: CuPy
        assert backend.name == "cupy"
        [info] = backend.devices()
        assert info.name == "NVIDIA H200" and info.l2 == 50 * 2**20
        measured = measure_gpu(backend, 0, "tiny", datasheet=get_preset("h200"),
                               datasheet_id="h200")
    finally:
        sys.modules.pop("workbench.measure.gpu_cupy", None)
    prov = measured.provenance
    assert set(prov["gemm"]) == {"fp64", "fp32", "fp16"}
    assert set(prov["stream"]) == {"copy", "read", "triad"}
    assert set(prov["launch"]) == {"eager", "graph"}
    ran = {k for k, v in prov["kernels"].items() if "median_s" in v}
    assert ran == {"add_tiny", "sum_fp32"}  # the suite's fp32 elementwise and reduction
    assert "compute.bf16" not in measured.hardware.measured  # CuPy has no bf16
    assert {"capture", "launch graph", "triad", "copyto", "matmul"} <= set(calls)
    assert measured.hardware.calibration is not None
    # the L2 sweep reads with its own kernel (compiled once), many passes over small sets;
    # CuPy's sum of a stride-0 view ran at 32 GB/s on an H100, a figure of nothing
    assert calls.count("compile workbench_read") == 1
    reads = [c for c in calls if isinstance(c, tuple) and c[0] == "read"]
    assert max(c[4] for c in reads) > 1 and len(prov["l2_sweep"]) > 1
    assert all(1 <= grid <= 8 * 132 and block == 256 for _, grid, block, _n, _p in reads)
    smallest = min(prov["l2_sweep"], key=lambda r: r["working_set"])
    assert smallest["working_set"] == 2**20 and smallest["passes"] > 1
    assert any(n4 == 2**20 // 16 for _, _g, _b, n4, _p in reads)  # float4s of 1 MiB


def test_without_a_kernel_compiler_cupy_reads_once_and_leaves_the_l2_out(monkeypatch):
    from workbench.measure import gpu_backend
    from workbench.measure.gpu_runner import measure_gpu

    calls: list = []
    cupy = _stub_cupy(calls)

    class NoCompiler:
        def __init__(self, *a):
            raise RuntimeError("nvrtc: cannot load libnvrtc.so")

    cupy.RawKernel = NoCompiler
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.delitem(sys.modules, "workbench.measure.gpu_cupy", raising=False)
    monkeypatch.setattr(gpu_backend, "_installed", lambda module: module == "cupy")
    try:
        measured = measure_gpu(gpu_backend.load_backend("cuda"), 0, "tiny")
    finally:
        sys.modules.pop("workbench.measure.gpu_cupy", None)
    prov = measured.provenance
    assert set(prov["stream"]) == {"copy", "read", "triad"}  # one pass: CUB's sum
    assert prov["l2_sweep"] == [] and "memory.l2" not in measured.hardware.measured
    assert any("kernel compiler" in note for note in prov["notes"])
