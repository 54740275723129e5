"""Child process of the GEMM measurement: ``python -m workbench.measure.gemm_child CONFIG``.

CONFIG is JSON: dtype (a numpy type name), sizes (rising n), budget_s (time per size;
peak_budget_s from min_n on, where each timed sample repeats the product for at least
sample_s),
min_runs, max_runs, min_n (the smallest n that may end the sweep) and tol (how little a size
may gain over the best before it for the rate to count as levelled off). The BLAS thread
count comes from the environment the parent sets. Prints ``{"n", "times", "flops"}`` per size.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np

from workbench.measure.analysis import leveled_off
from workbench.measure.kernels import time_runs


def main(argv: list[str]) -> int:
    config = json.loads(argv[0])
    dtype = np.dtype(config["dtype"])
    rng = np.random.default_rng(0)
    rates: list[float] = []
    for n in config["sizes"]:
        if rates and 2.0 * n**3 / rates[-1] > max(5 * config["budget_s"], 2.0):
            break  # one run would take far longer than the budget: a slow (non-BLAS) path
        a = rng.random((n, n)).astype(dtype)
        b = rng.random((n, n)).astype(dtype)
        c = np.empty((n, n), dtype)
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)  # warm: threads started, pages touched
        once = max(time.perf_counter() - t0, 1e-6)
        peak = n >= config["min_n"]
        budget = config["peak_budget_s"] if peak else config["budget_s"]
        # where the peak is read, one timed sample repeats the product for at least
        # sample_s: a sustained rate, not a burst between other programs' time slices
        repeat = max(1, math.ceil(config.get("sample_s", 0.0) / once)) if peak else 1

        def run(a=a, b=b, c=c, repeat=repeat):
            for _ in range(repeat):
                np.matmul(a, b, out=c)

        times = [t / repeat for t in time_runs(run, budget, config["min_runs"],
                                               config["max_runs"])]
        flops = 2.0 * n**3
        rates.append(flops / min(times))
        print(json.dumps({"n": n, "times": times, "flops": flops}), flush=True)
        if n >= config["min_n"] and leveled_off(rates, config["tol"]):
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
