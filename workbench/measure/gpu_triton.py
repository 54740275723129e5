"""The read kernel of the PyTorch backend's L2 sweep, in Triton (which PyTorch's CUDA and
ROCm wheels for Linux bring along).

PyTorch has no kernel that reads a small array many times at the speed of the cache it sits
in: ``x.expand(passes, n).sum()`` ran at 2.7 TB/s on an H100 whatever the working set (the
reduction's own limit, below the L2's 7 TB/s), and a CUDA graph of ``passes`` sums is bound
by its launches. This kernel reads the array ``passes`` times in one launch, every load
``.cg`` (cached in the L2, not in the SMs' L1, which would otherwise hold a small working
set), and keeps its sum only where it is impossible (the array holds ones), so that the
loads stay without a store per block.
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["make_reader"]

BLOCK = 1024  # floats per block and step: 8 a thread in 4 warps, two 16-byte loads
WARPS = 4
BLOCKS_PER_UNIT = 8


@triton.jit
def _read(x_ptr, n, passes, sink_ptr, BLOCK: tl.constexpr):
    step = tl.num_programs(0) * BLOCK
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(passes):
        for start in range(tl.program_id(0) * BLOCK, n, step):
            offsets = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + offsets, mask=offsets < n, other=0.0, cache_modifier=".cg")
    total = tl.sum(acc, axis=0)
    tl.store(sink_ptr, total, mask=total < 0)


def make_reader(sink, units: int):
    """``read(x, n, passes)``: launch the read of the ``n`` float32s of ``x``, ``passes``
    times over, on a grid of at most ``BLOCKS_PER_UNIT`` blocks per SM (``units``); ``sink``
    is a one-float tensor on the same device."""
    most = BLOCKS_PER_UNIT * max(1, units)

    def read(x, n: int, passes: int) -> None:
        grid = (max(1, min(triton.cdiv(n, BLOCK), most)),)
        _read[grid](x, n, passes, sink, BLOCK=BLOCK, num_warps=WARPS)

    return read
