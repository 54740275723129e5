"""Save and open times of sessions holding many measured points, as a real profile gives them.

    python benchmarks/session_files.py [--points N ...] [--repeat R]

Builds a session with two machines, a few operations and N measured points as an import
of a profile makes them: kernel names as a PyTorch or rocprof-compute profile writes them
(C++ templates, commas, colons, some past the line width), time, FLOPs, bytes, bytes per
memory level, precision, unit, count, run and source; then reports the seconds of
``dumps_session`` (the text of a save) and of ``loads_session`` (an open, from that text),
the best of R runs each, and the file's size. The defaults are 10,000 and 100,000 points,
the most a session holds.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_KERNELS = [
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::"
    "BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "at::detail::Array<char*, 3>)",
    "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_align8>("
    "cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)",
    "flash_fwd_kernel",
    "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, "
    "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
    "Memcpy DtoD (Device -> Device)",
    "triton_poi_fused_add_mul_0",
]


def big_session(points: int, seed: int = 1):
    """A session of ``points`` measured points, as imports of profiles give them."""
    from workbench.io.presets import get_preset
    from workbench.model.measured import Measurement
    from workbench.model.session import HardwareEntry, Session

    rng = random.Random(seed)
    session = Session(title=f"{points:,} measured points")
    for preset in ("h100-sxm", "mi300x"):
        session.hardware.append(HardwareEntry(get_preset(preset), preset=preset))
    for i in range(points):
        kernel = _KERNELS[i % len(_KERNELS)]
        shape = f"[{rng.choice([1, 8, 512, 4096])}, {rng.choice([1024, 4096, 14336])}]"
        rocprof = i % 3 == 0
        time_s = rng.uniform(2e-6, 5e-3)
        flops = float(rng.randrange(0, 10**12))
        levels = {"l1": rng.uniform(1e5, 1e10), "l2": rng.uniform(1e5, 1e9),
                  "dram": rng.uniform(1e5, 1e9)}
        if rocprof:
            count = rng.randrange(1, 400)
            source = (f"rocprof-compute workloads/step: {count:,} dispatches (#{i}, #{i + 7}, "
                      f"…), per dispatch")
            session.measurements.append(Measurement(
                name=f"{kernel} {i}", hardware="mi300x", time_s=time_s, flops=flops / count,
                bytes=levels["dram"], precision="fp32" if i % 2 else "bf16", source=source,
                levels=levels, unit="vector" if i % 2 else "matrix", count=count,
                run="after"))
        else:
            session.measurements.append(Measurement(
                name=f"{kernel} {shape} #{i}", hardware="h100-sxm", time_s=time_s,
                flops=flops, bytes=levels["dram"], precision="bf16",
                source=f"step.pt.trace.json.gz: aten::addmm {shape} × [4096, 4096]: "
                       f"2·M·N·K", unit="matrix", count=rng.randrange(1, 50),
                run="before"))
    return session


def best(func, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    from workbench.io.sessions import dumps_session, loads_session

    for points in args.points:
        session = big_session(points)
        text = dumps_session(session)
        save = best(lambda s=session: dumps_session(s), args.repeat)
        opened = best(lambda t=text: loads_session(t, "big.yaml"), args.repeat)
        again = dumps_session(loads_session(text, "big.yaml"))
        print(f"{points:>7,} points  {len(text.encode()) / 2**20:6.1f} MB  save {save:7.2f} s  "
              f"open {opened:7.2f} s  save→open→save identical: {again == text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
