"""Every worked example and exercise of the five domain documents, reproduced by the engine.

The seeds live in ``/work/shared/seeds/``; each class below names the file it follows.
Expected values are derived by hand from the seed's own formulas (the arithmetic is written
out in the test or its comment). Where a seed prints a wrong answer, the test asserts the
correct value and a comment says why the printed one differs.

Conventions used throughout (product.md): a multiply-add is 2 FLOPs; bytes are traffic
across the chosen memory level, loads and stores both counted, each tensor crossing once.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.io.presets import get_preset
from workbench.model.hardware import Hardware
from workbench.model.operations import Operation
from workbench.model.roofline import evaluate, sweep

# ---------------------------------------------------------------------------------------
# helpers


def machine(name: str, peak: float, bandwidth: float, precision: str = "fp16",
            **extra) -> Hardware:
    """An ad-hoc machine with one compute peak and one memory level."""
    compute = extra.pop("compute", {precision: peak})
    return Hardware(name=name, compute=compute, memory={"hbm": bandwidth}, **extra)


def gemm(m, n, k, dtype="fp16", **params) -> Operation:
    return Operation("gemm", {"m": m, "n": n, "k": k, "dtype": dtype, **params})


def custom(flops, nbytes, precision="fp16", **kw) -> Operation:
    return Operation("custom", {"flops": flops, "bytes": nbytes, "precision": precision}, **kw)


def attention(q, k, d, *, heads=1, kv_heads=None, batch=1, implementation="flash",
              dtype="fp16", **params) -> Operation:
    return Operation("attention", {
        "implementation": implementation, "batch": batch, "heads": heads,
        "kv_heads": kv_heads, "head_dim": d, "query_len": q, "kv_len": k, "dtype": dtype,
        **params,
    })


def elementwise(n, steps, *, dtype="fp32", input="x", output="out", fused=False,
                write_allocate=False) -> Operation:
    return Operation("elementwise", {
        "n": n, "dtype": dtype, "input": input, "output": output, "steps": steps,
        "fused": fused, "write_allocate": write_allocate,
    })


def first_compute_bound(bound: np.ndarray, values: np.ndarray):
    """The first swept value whose bound is compute (1), or None."""
    idx = np.nonzero(np.asarray(bound) == 1)[0]
    return None if idx.size == 0 else values[idx[0]]


TEACHING = "teaching-machine"


# =======================================================================================
class TestSeed000WhyThisMatters:
    """Seed 000_d16bf48d6b766816.txt — "Why This Matters": bytes before FLOPs, SAXPY,
    elementwise fusion, GEMM reuse, attention on the roofline, three exercises.

    The seed's symbols and many numbers were lost in extraction ("Take and ."). Where a lost
    number can be recovered from the surviving ones, the test recovers it and says how;
    where it cannot, the test chooses a sensible value and says so.
    """

    def test_teaching_machine_ridge_is_100(self):
        # "100 TFLOP/s of peak FP16 ... 1 TB/s ... ridge point of 100 FLOP per byte"
        hw = get_preset(TEACHING)
        assert hw.ridge("fp16") == pytest.approx(100.0, rel=1e-12)
        r = evaluate(custom(1e12, 1e12), hw)
        assert r.ridge == pytest.approx(100.0, rel=1e-12)
        assert r.peak_flops == pytest.approx(100e12, rel=1e-12)
        assert r.bandwidth == pytest.approx(1e12, rel=1e-12)

    def test_one_flop_per_byte_caps_at_one_tflops(self):
        # "A kernel doing 1 FLOP per byte cannot exceed 1 TFLOP/s on that machine"
        r = evaluate(custom(5e12, 5e12), get_preset(TEACHING))
        assert r.intensity == pytest.approx(1.0)
        assert r.attainable_flops == pytest.approx(1e12, rel=1e-12)
        assert r.bound == "memory"
        # "even if every arithmetic unit is idle most of the time": 1 % of peak
        assert r.fraction_of_peak == pytest.approx(0.01, rel=1e-12)

    @pytest.mark.parametrize(
        "intensity, cap, bound",
        [(0.25, 0.25e12, "memory"), (20.0, 20e12, "memory"), (200.0, 100e12, "compute")],
    )
    def test_performance_caps(self, intensity, cap, bound):
        # "0.25 FLOP/byte is capped at 0.25 TFLOP/s ... 20 at 20 ... 200 at 100 TFLOP/s"
        nbytes = 1e9
        r = evaluate(custom(intensity * nbytes, nbytes), get_preset(TEACHING))
        assert r.intensity == pytest.approx(intensity, rel=1e-12)
        assert r.attainable_flops == pytest.approx(cap, rel=1e-12)
        assert r.bound == bound

    def _saxpy(self, n, write_allocate=False):
        # y[i] = a * x[i] + y[i]: one multiply-add per element, x read, y read and written
        return elementwise(n, [{"op": "fma", "inputs": ["y"]}], dtype="fp32", input="x",
                           output="y", fused=True, write_allocate=write_allocate)

    def test_saxpy_per_cache_line(self):
        # 16 FP32 elements = one 64-byte line each of x load, y load, y store:
        # 32 FLOPs / 192 B = 0.167 FLOP/B
        c = self._saxpy(16).counts()
        assert c.flops == 32
        assert c.bytes == 192
        assert c.bytes_read == 128
        assert c.bytes_written == 64
        assert c.flops / c.bytes == pytest.approx(0.167, abs=5e-4)
        reads = sorted(t.tensor for t in c.byte_terms if t.kind == "read")
        writes = [t.tensor for t in c.byte_terms if t.kind == "write"]
        assert reads == ["x", "y"] and writes == ["y"]

    def test_saxpy_per_element_and_left_of_ridge(self):
        # "2 FLOPs ... The traffic is 12 bytes": far left of the ridge (100)
        r = evaluate(self._saxpy(1 << 20), get_preset(TEACHING))
        assert r.flops == 2 * (1 << 20)
        assert r.bytes == 12 * (1 << 20)
        assert r.intensity == pytest.approx(2 / 12, rel=1e-12)
        assert r.bound == "memory"

    def test_saxpy_write_allocate(self):
        # "traffic can rise to 256 bytes per 16 elements, dropping intensity to 0.125"
        c = self._saxpy(16, write_allocate=True).counts()
        assert c.bytes == 256
        assert c.flops / c.bytes == pytest.approx(0.125, rel=1e-12)

    def _gelu_chain(self, n, fused):
        # t = a*x + b (fma: a and b are scalars, no extra tensor), g = gelu(t), w = g + r
        steps = [{"op": "fma"}, {"op": "gelu"}, {"op": "add", "inputs": ["r"]}]
        return elementwise(n, steps, dtype="fp32", input="x", output="w", fused=fused)

    def test_fused_gelu_chain_saves_temporaries(self):
        n = 1000
        unfused = self._gelu_chain(n, fused=False).counts()
        fused = self._gelu_chain(n, fused=True).counts()
        # Unfused, three kernels in FP32: (read x, write t) 8 B + (read t, write g) 8 B +
        # (read g, read r, write w) 12 B = 28 B/element. Fused: read x, read r, write w = 12 B.
        assert unfused.bytes == 28 * n
        assert fused.bytes == 12 * n
        # "That saves 8 or more bytes per element for FP32 temporaries": here 16
        saved = (unfused.bytes - fused.bytes) / n
        assert saved == 16 and saved >= 8
        # "The fused version still loads x and r and stores w"
        assert sorted(t.tensor for t in fused.byte_terms if t.kind == "read") == ["r", "x"]
        assert [t.tensor for t in fused.byte_terms if t.kind == "write"] == ["w"]
        # FLOPs are unchanged by fusion. Counting the seed's kernel: a*x+b is 2; the tanh
        # gelu 0.5f*t*(1+tanhf(0.797*(t+0.0447*t*t*t))) is t*t*t 2, 0.0447* 1, t+ 1,
        # 0.797* 1, tanh 1, 1+ 1, 0.5f*t 1, final * 1 = 9; g + r is 1: 12 per element.
        assert fused.flops == unfused.flops == 12 * n

    @pytest.mark.parametrize("size, intensity, bound", [(1024, 341.3, "compute"),
                                                        (128, 42.7, "memory")])
    def test_ideal_square_gemm(self, size, intensity, bound):
        # Ideal FP16 square GEMM: 2N^3 FLOPs over 3 N^2 elements x 2 B = 6 N^2 B -> N/3.
        # The N values were lost; "about 341 FLOP/byte" recovers N = 1024 (1023/3 = 341)
        # and "about 42.7 FLOP/byte" recovers N = 128 (128/3 = 42.67).
        r = evaluate(gemm(size, size, size, "fp16"), get_preset(TEACHING))
        assert r.flops == 2 * size**3
        assert r.bytes == 6 * size**2
        assert r.intensity == pytest.approx(size / 3, rel=1e-12)
        assert r.intensity == pytest.approx(intensity, abs=0.05)
        assert r.bound == bound

    # Attention: "The Q, K, V, and output tensors together are only about 4.19 MB in FP16"
    # is 4 * n * d * 2 B = 4.19e6 B, so n * d = 524,288 = 2^19; with the usual head
    # dimension d = 128 this recovers n = 4096 (one head).
    N_SEQ, D_HEAD = 4096, 128

    def test_recovered_attention_sizes(self):
        flash = attention(self.N_SEQ, self.N_SEQ, self.D_HEAD).counts()
        assert flash.bytes == 4 * self.N_SEQ * self.D_HEAD * 2
        assert flash.bytes / 1e6 == pytest.approx(4.19, abs=0.005)

    def test_decode_token_intensity_about_one(self):
        # One decode token: about 4 n d FLOPs, reads about 2 n d FP16 elements (K and V),
        # "So the intensity is about 1 FLOP/byte", far below the ridge of 100.
        n, d = self.N_SEQ, self.D_HEAD
        r = evaluate(attention(1, n, d), get_preset(TEACHING))
        assert r.flops == 4 * n * d
        kv = [t for t in attention(1, n, d).counts().byte_terms if t.tensor in ("K", "V")]
        assert sum(t.value for t in kv) == 2 * n * d * 2
        # the engine also counts q (d elements) and o (d elements): I = 4nd / (4nd + 4d)
        assert r.intensity == pytest.approx(n / (n + 1), rel=1e-12)
        assert r.intensity == pytest.approx(1.0, abs=0.01)
        assert r.bound == "memory"

    def test_prefill_flops_and_materialised_scores(self):
        n, d = self.N_SEQ, self.D_HEAD
        flash = evaluate(attention(n, n, d), get_preset(TEACHING))
        # "For full prefill attention ... much larger": 4 n^2 d = 8.59e9 FLOPs
        assert flash.flops == 4 * n * n * d
        assert flash.flops == pytest.approx(8.59e9, rel=1e-3)
        # "Two FP16 matrices cost" 2 * n^2 * 2 B = 67.1 MB (S written once and read once)
        naive2 = attention(n, n, d, implementation="naive", score_passes=2).counts()
        extra = naive2.bytes - flash.bytes
        assert extra == 2 * n * n * 2
        assert extra / 1e6 == pytest.approx(67.1, abs=0.05)

    def test_prefill_materialisation_pushes_toward_bandwidth_side(self):
        # Flash: each of Q, K, V, O once: I = 4 n^2 d / (8 n d) = n / 2 = 2048 -> compute.
        # Naive with S and P both written and read (4 passes): bytes 4.19 MB + 4*2 n^2 B
        # = 138.4 MB, I = 8.59e9 / 138.4e6 = 62.06 -> memory-bound on the ridge of 100.
        n, d = self.N_SEQ, self.D_HEAD
        hw = get_preset(TEACHING)
        flash = evaluate(attention(n, n, d), hw)
        naive = evaluate(attention(n, n, d, implementation="naive", score_passes=4), hw)
        assert flash.intensity == pytest.approx(n / 2, rel=1e-12)
        assert flash.bound == "compute"
        assert naive.bytes == 4 * n * d * 2 + 4 * n * n * 2
        assert naive.intensity == pytest.approx(62.06, abs=0.005)
        assert naive.bound == "memory"
        assert naive.flops == flash.flops  # "The FLOP count stays close to standard"

    def test_exercise_saxpy_runtime_bounds(self):
        # 100 M FP32 elements, 2 FLOPs and 12 B each, on 20 TFLOP/s and 800 GB/s:
        # T_math = 2e8 / 2e13 = 10 us; T_mem = 1.2e9 / 8e11 = 1.5 ms -> memory-bound.
        hw = machine("exercise", 20e12, 800e9, "fp32")
        r = evaluate(self._saxpy(100_000_000), hw)
        assert r.flops == 2e8 and r.bytes == 1.2e9
        assert r.t_math_s == pytest.approx(10e-6, rel=1e-9)
        assert r.t_mem_s == pytest.approx(1.5e-3, rel=1e-9)
        assert r.t_lower_s == pytest.approx(1.5e-3, rel=1e-9)
        assert r.t_upper_s == pytest.approx(1.51e-3, rel=1e-9)
        assert r.bound == "memory"

    def test_exercise_gemm_classification(self):
        # 120 TFLOP/s, 1.5 TB/s: ridge = 80 FLOP/byte. The two N values to classify were
        # lost; the section's own sizes are used: N = 128 (I = 42.7, memory) and
        # N = 1024 (I = 341.3, compute). The crossing is N = 3 * 80 = 240.
        hw = machine("exercise", 120e12, 1.5e12)
        assert hw.ridge("fp16") == pytest.approx(80.0, rel=1e-12)
        assert evaluate(gemm(128, 128, 128), hw).bound == "memory"
        assert evaluate(gemm(1024, 1024, 1024), hw).bound == "compute"
        assert evaluate(gemm(239, 239, 239), hw).bound == "memory"
        assert evaluate(gemm(241, 241, 241), hw).bound == "compute"

    def test_exercise_decode_step(self):
        # n and d were lost and cannot be recovered (the exercise is independent of the
        # text); chosen: a 32K-token KV cache, d = 128. Approximation from the seed:
        # 4 n d FLOPs, 2 n d FP16 elements read -> 4 n d bytes, I ~ 1.
        n, d = 32768, 128
        c = attention(1, n, d).counts()
        assert c.flops == 4 * n * d  # 16.8 MFLOP
        assert c.bytes_read == 2 * n * d * 2 + d * 2  # K, V (16.8 MB) and the one query
        assert c.bytes_written == d * 2  # the one output row
        assert c.flops / c.bytes == pytest.approx(1.0, abs=1e-3)


# =======================================================================================
class TestSeed001ThinkingInBandwidth:
    """Seed 001_51928b22c9ae11dc.txt — "5 Thinking in Bandwidth": the roofline explorer,
    H100 vs CPU ratios, the intensity table, naive attention, the matmul transition table.
    """

    def test_explorer_defaults(self):
        # intensity 10, peak 1000 TFLOPS, bandwidth 3000 GB/s:
        # ridge = 1000e12 / 3000e9 = 333.3; achieved = min(1000, 3000*10/1000) = 30 TFLOPS;
        # 3.0 % of peak; memory-bound (10 < 333.3).
        hw = machine("explorer", 1000e12, 3000e9)
        r = evaluate(custom(10e9, 1e9), hw)
        assert r.ridge == pytest.approx(333.3, abs=0.05)
        assert r.attainable_flops == pytest.approx(30e12, rel=1e-12)
        assert round(100 * r.fraction_of_peak, 1) == 3.0
        assert r.bound == "memory"

    def test_opening_ratio(self):
        # "2,000 trillion operations per second ... 3 trillion bytes per second ... 667"
        assert machine("opening", 2000e12, 3e12).ridge("fp16") == pytest.approx(667, abs=0.5)

    def test_h100_table_ratio_is_the_fp8_ridge(self):
        # The seed's "Peak FP16 compute 1,979 TFLOPS / 3.35 TB/s = 590" uses NVIDIA's
        # sparse FP16 figure, which equals the dense FP8 peak. The dense FP16 ridge is
        # 989.4 / 3.35 = 295.3; 1979 / 3.35 = 590.7 is the FP8 ridge.
        h100 = get_preset("h100-sxm")
        assert h100.sparse_halved is True
        assert 2 * h100.compute["fp16"] == pytest.approx(1979e12, rel=1e-3)
        assert h100.ridge("fp16") == pytest.approx(295.3, abs=0.05)
        assert h100.ridge("fp8") == pytest.approx(590, abs=1)
        assert evaluate(custom(1e12, 1e9, "fp8"), h100).ridge == pytest.approx(590.7, abs=0.05)

    def test_cpu_ratio_and_gpu_cpu_factor(self):
        # CPU: ~3 TFLOPS FP32, ~300 GB/s -> 10 FLOPS/byte; "The GPU ratio is 60x higher"
        # (590 / 10 = 59 with the seed's own GPU ratio).
        cpu = machine("32-core Xeon", 3e12, 300e9, "fp32")
        assert cpu.ridge("fp32") == pytest.approx(10.0, rel=1e-12)
        gpu_as_printed = machine("H100 per seed 001", 1979e12, 3.35e12)
        assert gpu_as_printed.ridge("fp16") / cpu.ridge("fp32") == pytest.approx(60, rel=0.03)

    # The intensity table, in FP32 (4-byte elements), for large n.
    N = 1 << 20

    def test_table_vector_add(self):
        # n FLOPs, 3n x 4 = 12n bytes -> 0.083 ("0.08")
        c = elementwise(self.N, [{"op": "add", "inputs": ["b"]}], dtype="fp32", input="a",
                        output="c", fused=True).counts()
        assert c.flops == self.N and c.bytes == 12 * self.N
        assert c.flops / c.bytes == pytest.approx(0.08, abs=0.005)

    def test_table_dot_product(self):
        # 2n FLOPs, 2n x 4 = 8n bytes -> 0.25 (the engine also writes the 4-byte result)
        c = Operation("reduction", {"op": "dot", "n": self.N, "dtype": "fp32"}).counts()
        assert c.flops == 2 * self.N
        assert c.bytes == 8 * self.N + 4
        assert c.flops / c.bytes == pytest.approx(0.25, rel=1e-5)

    def test_table_matrix_vector(self):
        # Ax: 2n^2 FLOPs, n^2 x 4 + n x 4 ~ 4n^2 bytes -> 0.5. As a GEMM: A (n x n) times
        # x (n x 1) into y (n x 1); the engine also counts the store of y (4n bytes).
        n = 4096
        c = gemm(n, 1, n, "fp32").counts()
        assert c.flops == 2 * n * n
        assert c.bytes == 4 * n * n + 4 * n + 4 * n
        assert c.flops / c.bytes == pytest.approx(0.5, rel=1e-3)

    def test_table_matrix_matrix(self):
        # 2n^3 FLOPs, 3n^2 x 4 = 12n^2 bytes -> n/6; "For n=1000, that's ~167"
        r = evaluate(gemm(1000, 1000, 1000, "fp32"), get_preset("h100-sxm"))
        assert r.bytes == 12 * 1000**2
        assert r.intensity == pytest.approx(166.7, abs=0.05)

    def test_naive_attention_n2048_d64(self):
        # The seed's own byte list: read Q, K, V (3nd x 2), write S (n^2 x 2), read S
        # (n^2 x 2), write O (nd x 2) totals 8nd + 4n^2, not the printed 6nd + 4n^2 (the
        # printed total drops the output write). I = 4n^2 d / (8nd + 4n^2)
        # = 524,288 / 8,704 = 60.24, not the printed 61 (524,288 / 8,576 = 61.1).
        n, d = 2048, 64
        op = attention(n, n, d, implementation="naive", score_passes=2)
        r = evaluate(op, machine("H100 per seed 001", 1979e12, 3.35e12))
        assert r.flops == 4 * n * n * d
        assert r.bytes == 8 * n * d + 4 * n * n
        assert r.intensity == pytest.approx(60.24, abs=0.005)
        assert r.intensity != pytest.approx(61, abs=0.5)
        # "well below the H100's ridge point of 590. Attention is memory-bound"
        assert r.bound == "memory"
        # also below the real dense fp16 ridge (295), for all heads of a batch: one head
        # alone (17.8 MB, 5.3 us) would fall under the preset's 8 us launch floor.
        many = attention(n, n, d, batch=8, heads=32, implementation="naive", score_passes=2)
        preset = evaluate(many, get_preset("h100-sxm"))
        assert preset.intensity == pytest.approx(r.intensity, rel=1e-12)
        assert preset.bound == "memory"
        assert evaluate(op, get_preset("h100-sxm")).bound == "overhead"
        score = [t for t in op.counts().byte_terms if t.tensor == "S/P"]
        assert sum(t.value for t in score) == 4 * n * n  # "most of those bytes"
        assert 4 * n * n / r.bytes > 0.9

    @pytest.mark.parametrize("n, printed, bound", [
        (32, 5.3, "memory"), (64, 10.7, "memory"), (256, 42.7, "memory"),
        (1024, 170.7, "memory"), (4096, 682.7, "compute"),
    ])
    def test_transition_table_as_printed(self, n, printed, bound):
        # The table uses n/6, i.e. 4-byte elements, against the 590 ridge (1979 / 3.35).
        # Reproduced with FP32 counts on a machine with the seed's figures.
        seed_h100 = machine("H100 per seed 001", 1979e12, 3.35e12, "fp32")
        r = evaluate(gemm(n, n, n, "fp32"), seed_h100)
        assert r.intensity == pytest.approx(printed, abs=0.05)
        assert r.bound == bound

    def test_transition_crossing_as_printed(self):
        # "Only at n ~ 3500 does matrix multiply cross the ridge": n/6 > 590.7 -> n > 3544.5
        seed_h100 = machine("H100 per seed 001", 1979e12, 3.35e12, "fp32")
        sizes = np.arange(3000, 4001)
        res = sweep(gemm(1, 1, 1, "fp32"), seed_h100, m=sizes, n=sizes, k=sizes)
        assert first_compute_bound(res["bound"], sizes) == 3545

    def test_transition_for_fp16_on_real_h100(self):
        # The chapter's benchmark is FP16: its own code computes intensity
        # 2n^3 / (3 n^2 x 2) = n/3, and the dense FP16 ridge is 295.3. So the crossing is
        # at n = 887 (886/3 = 295.33 < 295.34 < 887/3), and n = 1024 (I = 341.3) is
        # compute-bound on a real H100, unlike the table's "Memory-bound". (The preset's
        # 8 us launch floor is taken off: these GEMMs take only ~1-2 us, so on the preset
        # itself they are overhead-bound, seed 003's third regime.)
        assert evaluate(gemm(1024, 1024, 1024, "fp16"), get_preset("h100-sxm")).bound == \
            "overhead"  # T_math = 2 x 1024^3 / 989.4e12 = 2.2 us < 8 us
        h100 = get_preset("h100-sxm").copy(launch_overhead=None)
        for n, expected in [(64, 21.33), (256, 85.33), (1024, 341.33), (4096, 1365.33),
                            (8192, 2730.67)]:
            assert evaluate(gemm(n, n, n, "fp16"), h100).intensity == pytest.approx(
                expected, abs=0.005)
        assert evaluate(gemm(1024, 1024, 1024, "fp16"), h100).bound == "compute"
        sizes = np.arange(800, 1001)
        res = sweep(gemm(1, 1, 1, "fp16"), h100, m=sizes, n=sizes, k=sizes)
        assert first_compute_bound(res["bound"], sizes) == 887


# =======================================================================================
class TestSeed002RooflineModel:
    """Seed 002_a3c2d13ad5606a91.txt — the roofline chapter (section 3.7): Code 3.7.1
    (matmul vs elementwise add on a 989 TFLOP/s, 3.35 TB/s accelerator) and its exercises.
    """

    def hw(self):
        return machine("H100-class (Code 3.7.1)", 9.89e14, 3.35e12, "bf16")

    def test_code_ridge(self):
        # ridge point I : 295.2 FLOP/byte
        assert round(self.hw().ridge("bf16"), 1) == 295.2

    def test_code_matmul(self):
        # matmul 8192^3 bf16: I = 2n^3 / (3 n^2 x 2) = n/3 = 2730.7, 989.0 TF,
        # compute-bound, 100.0 %
        n = 8192
        r = evaluate(gemm(n, n, n, "bf16"), self.hw())
        assert r.flops == 2.0 * n**3
        assert r.bytes == 3.0 * n * n * 2.0
        assert round(r.intensity, 1) == 2730.7
        assert round(r.attainable_flops / 1e12, 1) == 989.0
        assert r.bound == "compute"
        assert round(100 * r.fraction_of_peak, 1) == 100.0
        # "clears it by nearly a factor of ten": 2730.7 / 295.2 = 9.25
        assert r.intensity / r.ridge == pytest.approx(9.25, abs=0.01)

    def test_code_elementwise_add(self):
        # elementwise add over n^2 bf16 elements: 1 FLOP / (3 x 2 B) = 0.167 ("0.2"),
        # attainable 0.167 x 3.35 TB/s = 0.558 TF ("0.6 TF"), memory-bound,
        # 0.056 % of peak (printed "0.1%" at one decimal)
        n = 8192
        op = elementwise(n * n, [{"op": "add", "inputs": ["b"]}], dtype="bf16", input="a",
                         output="y", fused=True)
        r = evaluate(op, self.hw())
        assert r.flops == n * n * 1.0
        assert r.bytes == 3.0 * n * n * 2.0
        assert r.intensity == pytest.approx(1 / 6, rel=1e-12)
        assert round(r.intensity, 1) == 0.2
        assert r.attainable_flops == pytest.approx(3.35e12 / 6, rel=1e-12)
        assert round(r.attainable_flops / 1e12, 1) == 0.6
        assert r.bound == "memory"
        assert round(100 * r.fraction_of_peak, 1) == 0.1
        assert r.fraction_of_peak == pytest.approx(3.35e12 / 6 / 9.89e14, rel=1e-12)

    def test_exercise_ridge_and_layernorm(self):
        # 312 TFLOP/s and 2.0 TB/s: (a) ridge 156; (b) layernorm at ~3 FLOP/byte is
        # memory-bound, attainable min(312, 3 x 2.0) = 6 TFLOP/s.
        hw = machine("exercise 3.7.1", 312e12, 2.0e12, "bf16")
        assert hw.ridge("bf16") == pytest.approx(156.0, rel=1e-12)
        ln = custom(3e9, 1e9, "bf16")
        r = evaluate(ln, hw)
        assert r.bound == "memory"
        assert r.attainable_flops == pytest.approx(6e12, rel=1e-12)
        # (c) twice the FLOP/s at the same bandwidth: not one bit faster.
        faster = evaluate(ln, machine("2x FLOP/s", 624e12, 2.0e12, "bf16"))
        assert faster.attainable_flops == pytest.approx(r.attainable_flops, rel=1e-12)
        assert faster.t_lower_s == pytest.approx(r.t_lower_s, rel=1e-12)
        assert faster.t_math_s == pytest.approx(r.t_math_s / 2, rel=1e-12)

    def _chain(self, n, fused):
        # add (a second n x n tensor, like Code 3.7.1's add), then an activation (gelu), then
        # a scale, over n x n bf16 elements.
        steps = [{"op": "add", "inputs": ["b"]}, {"op": "gelu"}, {"op": "scale"}]
        return elementwise(n * n, steps, dtype="bf16", input="x", output="y", fused=fused)

    def test_exercise_fused_vs_unfused_chain(self):
        n = 8192
        e = n * n
        unfused = evaluate(self._chain(n, False), self.hw())
        fused = evaluate(self._chain(n, True), self.hw())
        # Unfused, three round trips: (read x, read b, write t1) + (read t1, write t2)
        # + (read t2, write y) = 7 tensors x 2 B = 14 B/element.
        # Fused, one round trip: read x, read b, write y = 6 B/element.
        assert unfused.bytes == 14 * e
        assert fused.bytes == 6 * e
        # FLOPs unchanged: add 1 + gelu 9 (tanh form, as counted for seed 000) + scale 1
        assert unfused.flops == fused.flops == 11 * e
        assert unfused.intensity == pytest.approx(11 / 14, rel=1e-12)
        assert fused.intensity == pytest.approx(11 / 6, rel=1e-12)
        assert unfused.bound == fused.bound == "memory"
        assert fused.attainable_flops == pytest.approx(11 / 6 * 3.35e12, rel=1e-12)
        # Speedup bought by fusion (memory-bound both ways): 14 / 6 = 2.33
        assert unfused.t_lower_s / fused.t_lower_s == pytest.approx(14 / 6, rel=1e-12)
        # torch.compile "removing two of the three memory round trips": 3 stores -> 1
        def writes(op):
            return [t for t in op.counts().byte_terms if t.kind == "write"]

        assert len(writes(self._chain(n, False))) == 3
        assert len(writes(self._chain(n, True))) == 1

    def test_exercise_naive_attention_intensity_saturates(self):
        # One head, length L, head dim d (d = 128 chosen; the seed leaves it symbolic),
        # bf16. Naive: Q, K, V, O once (8Ld B) plus S and P written and read (4 passes of
        # L^2 x 2 B = 8L^2 B). FLOPs 2L^2 d + 2L^2 d. I = 4L^2 d / (8Ld + 8L^2)
        # = L d / (2(L + d)), which tends to d/2 = 64 and never grows past it.
        d = 128
        values = []
        for L in (512, 4096, 65536):
            r = evaluate(attention(L, L, d, implementation="naive", score_passes=4,
                                   dtype="bf16"), self.hw())
            assert r.intensity == pytest.approx(L * d / (2 * (L + d)), rel=1e-12)
            values.append(r.intensity)
        assert values == sorted(values) and values[-1] < d / 2
        assert values[-1] == pytest.approx(d / 2, rel=0.01)

    def test_exercise_fused_attention_and_which_roof(self):
        # (b) never writing the L x L matrix: I = 4L^2 d / (8Ld) = L/2 grows with L.
        # (c) on the 312 TF / 2.0 TB/s accelerator (ridge 156) naive attention (I < 64)
        # hits the memory roof at every length; fused becomes compute-bound at L >= 312.
        hw = machine("exercise 3.7.1", 312e12, 2.0e12, "bf16")
        d = 128
        for L in (1024, 8192, 131072):
            naive = evaluate(attention(L, L, d, implementation="naive", dtype="bf16"), hw)
            flash = evaluate(attention(L, L, d, dtype="bf16"), hw)
            assert naive.bound == "memory"
            assert flash.intensity == pytest.approx(L / 2, rel=1e-12)
            assert flash.bound == "compute"
        assert evaluate(attention(310, 310, d, dtype="bf16"), hw).bound == "memory"
        assert evaluate(attention(314, 314, d, dtype="bf16"), hw).bound == "compute"


# =======================================================================================
class TestSeed003PredictiveRoofline:
    """Seed 003_37f5929ac86080f0.txt — "Roofline as a Predictive Tool": H100 constants,
    three worked GEMM shapes, the overhead regime, predict_matmul, the AI tables.
    """

    EFF = 0.78

    def h100(self):
        return get_preset("h100-sxm")

    def seed_h100(self, **extra):
        # the seed's predict_matmul constants: 989 TFLOP/s, 3.35 TB/s
        return machine("H100 per seed 003", 989e12, 3.35e12, "fp16", **extra)

    def test_memorised_constants(self):
        h = self.h100()
        assert h.bandwidth() == pytest.approx(3.35e12, rel=1e-12)
        assert h.compute["fp16"] == pytest.approx(989e12, rel=1e-3)
        assert h.compute["bf16"] == pytest.approx(989e12, rel=1e-3)
        assert h.compute["fp8"] == pytest.approx(1979e12, rel=1e-3)
        assert h.compute["fp32"] == pytest.approx(67e12, rel=1e-3)
        assert h.ridge("fp16") == pytest.approx(295, abs=0.5)
        assert h.ridge("fp8") == pytest.approx(590, abs=1)
        # "Marketing peaks (fp16: 1979 TFLOPs) include 2:4 sparsity ... use 989"
        assert h.sparse_halved is True
        # "PCIe variant peaks ~25% lower": 1 - 756 / 989.4 = 23.6 %
        pcie = get_preset("h100-pcie")
        assert 1 - pcie.compute["fp16"] / h.compute["fp16"] == pytest.approx(0.25, abs=0.02)

    def test_shape1_llama_ffn_training(self):
        # M = 8192, N = 28672, K = 8192, fp16.
        M, N, K = 8192, 28672, 8192
        op = gemm(M, N, K, "fp16")
        c = op.counts()
        # flops = 2 x 8192 x 28672 x 8192 = 3.85e12
        assert c.flops == 2 * M * N * K
        assert c.flops == pytest.approx(3.85e12, rel=1e-3)
        # Its own breakdown (67M + 235M + 235M) x 2 is 1.074e9 bytes; the printed
        # "1.41e9" does not follow from it. Exactly: (M K + K N + M N) x 2 = 2^30.
        terms = {t.tensor: t for t in c.byte_terms}
        assert terms["A"].elements == M * K == pytest.approx(67e6, rel=0.01)
        assert terms["B"].elements == K * N == pytest.approx(235e6, rel=0.001)
        assert terms["C"].elements == M * N == pytest.approx(235e6, rel=0.001)
        assert c.bytes == 2**30
        assert c.bytes == pytest.approx(1.074e9, rel=1e-3)
        # AI = M N K / (M K + K N + M N) = 3584 exactly, not the printed 2725 (which is
        # 3.85e12 / 1.41e9, the wrong byte total).
        r = evaluate(op, self.seed_h100())
        assert r.intensity == 3584
        assert r.bound == "compute"
        # "AI is 9x the ridge point": with the right AI it is 3584 / 295.2 = 12.1x
        assert r.intensity / r.ridge == pytest.approx(12.14, abs=0.01)
        # "Time = 3.85e12 / 8e14 ~ 4.8 ms" at ~800 TFLOP/s sustained
        assert c.flops / 8e14 == pytest.approx(4.8e-3, rel=0.01)

    def test_shape1_predicted_time_at_078(self):
        # predict_matmul: compute-bound, time = flops / (989e12 x 0.78)
        # = 3.848e12 / 7.714e14 = 4.99 ms. The printed "4858 us" / "~4860 us" is off (it
        # corresponds to an efficiency of about 0.80, not the 0.78 the code uses).
        r = evaluate(gemm(8192, 28672, 8192, "fp16"), self.seed_h100(efficiency=self.EFF))
        assert r.t_predicted_s == pytest.approx(4.99e-3, rel=1e-3)
        assert r.t_predicted_s == pytest.approx(4988.6e-6, abs=0.1e-6)
        # the preset (989.4 TFLOP/s, efficiency 0.78) agrees to 0.05 %: 4.99 ms
        preset = evaluate(gemm(8192, 28672, 8192, "fp16"), self.h100())
        assert preset.t_predicted_s == pytest.approx(4.99e-3, rel=1e-3)
        assert preset.bound == "compute"

    def test_shape2_attention_qk(self):
        # M = N = 4096, K = 128, fp16: flops 4.3e9, bytes 35.6e6, AI ~ 121, memory-bound
        op = gemm(4096, 4096, 128, "fp16")
        r = evaluate(op, self.seed_h100(efficiency=self.EFF))
        assert r.flops == pytest.approx(4.3e9, rel=0.01)
        assert r.bytes == (4096 * 128 + 128 * 4096 + 4096 * 4096) * 2
        assert r.bytes == pytest.approx(35.6e6, rel=0.002)
        assert r.intensity == pytest.approx(121, abs=0.6)  # 120.47
        assert r.bound == "memory"
        # "AI is 40% of the ridge point": 120.47 / 295.2 = 40.8 %
        assert r.intensity / r.ridge == pytest.approx(0.40, abs=0.01)
        # "Time = 35.6e6 / (3.35e12 x 0.55) ~ 19 us"
        assert r.t_mem_s / 0.55 == pytest.approx(19e-6, rel=0.02)
        # predict_matmul at 0.78: 35.65e6 / (3.35e12 x 0.78) = 13.6 us ("14 us")
        assert r.t_predicted_s == pytest.approx(13.64e-6, rel=1e-3)
        # on the preset the 10.6 us lower bound is above the 8 us floor: not overhead
        preset = evaluate(op, self.h100())
        assert preset.t_lower_s == pytest.approx(10.64e-6, rel=1e-3)
        assert preset.bound == "memory"

    def test_shape2_as_32_heads(self):
        # "32 heads, batch 1": the same shape batched 32 times keeps the AI
        one = evaluate(gemm(4096, 4096, 128), self.h100())
        heads = evaluate(gemm(4096, 4096, 128, batch=32), self.h100())
        assert heads.flops == 32 * one.flops and heads.bytes == 32 * one.bytes
        assert heads.intensity == pytest.approx(one.intensity, rel=1e-12)

    def test_shape3_decode_gemv(self):
        # M = 1, N = 28672, K = 8192, fp16 weights: flops 4.7e8, bytes ~ 470e6, AI ~ 1.0
        op = gemm(1, 28672, 8192, "fp16")
        r = evaluate(op, self.h100())
        assert r.flops == 2 * 28672 * 8192
        assert r.flops == pytest.approx(4.7e8, rel=0.001)
        assert r.bytes == (8192 + 8192 * 28672 + 28672) * 2
        assert r.bytes == pytest.approx(470e6, rel=0.001)
        assert r.intensity == pytest.approx(1.0, abs=0.001)
        assert r.bound == "memory"
        # "0.3% of the ridge point": 1.0 / 295.3 = 0.34 %. (The later "ten thousand times
        # below the ridge" is wrong: the ridge is 295x the AI.)
        assert r.intensity / r.ridge == pytest.approx(0.0034, abs=0.0001)
        assert r.ridge / r.intensity == pytest.approx(295.4, abs=0.1)
        # 470e6 / 3.35e12 = 140 us at 100 % of HBM
        assert r.t_mem_s == pytest.approx(140.2e-6, abs=0.1e-6)
        # predict_matmul at 0.78: 180 us; the preset's efficiency is 0.78
        assert r.t_predicted_s == pytest.approx(180e-6, rel=0.002)
        # "production kernels hit ~70% of HBM, so expect ~200 us ... ~5,000 tokens/s"
        at70 = r.t_mem_s / 0.70
        assert at70 == pytest.approx(200e-6, rel=0.005)
        assert 1 / at70 == pytest.approx(5000, rel=0.005)

    def test_shape3_int4_weights(self):
        # INT4 weights (0.5 B) with fp16 activations: weight bytes drop 4x, total
        # 8192 x 2 + 234,881,024 x 0.5 + 28672 x 2 = 117.5e6 B, a 4.0x cut.
        # The seed says "AI stays at ~1.0, but bytes moved drops 4x": with the same FLOPs
        # and 4x fewer bytes the AI rises 4x, to 4.0 (the Marlin table's "1.1" is wrong
        # the same way). It is still deep in the memory-bound regime.
        fp16 = gemm(1, 28672, 8192, "fp16")
        int4 = gemm(1, 28672, 8192, "fp16", b_dtype="int4")
        r16, r4 = evaluate(fp16, self.h100()), evaluate(int4, self.h100())
        assert r4.bytes == 8192 * 2 + 8192 * 28672 * 0.5 + 28672 * 2
        assert r16.bytes / r4.bytes == pytest.approx(4.0, rel=0.001)
        assert r4.flops == r16.flops
        assert r4.intensity == pytest.approx(4.0, rel=0.001)
        assert r4.bound == "memory"
        assert r4.precision_used == "fp16"  # compute in the activations' precision
        # "a 4x speedup almost mechanically": 35.1 us at 100 % of HBM
        assert r16.t_mem_s / r4.t_mem_s == pytest.approx(4.0, rel=0.001)
        assert r4.t_mem_s == pytest.approx(35.08e-6, rel=1e-3)

    def test_overhead_regime_tiny_softmax(self):
        # "The tiny softmax slice trips the overhead floor": 32 rows x 1024 fp16 moves
        # 32 x 1024 x 2 x 2 = 131 kB, 39 ns of HBM time, far under the 8 us cut-off.
        op = Operation("softmax", {"rows": 32, "cols": 1024, "dtype": "fp16"})
        r = evaluate(op, self.h100())
        assert r.bytes == 32 * 1024 * 2 * 2
        assert r.t_lower_s == pytest.approx(39.1e-9, rel=0.01)
        assert r.bound == "overhead"
        assert r.t_predicted_s == pytest.approx(8e-6, rel=1e-12)

    def test_overhead_needs_a_launch_overhead(self):
        # the same tiny kernel on a machine without a launch floor is plainly memory-bound
        op = Operation("softmax", {"rows": 32, "cols": 1024, "dtype": "fp16"})
        assert evaluate(op, get_preset(TEACHING)).bound == "memory"
        assert evaluate(op, self.seed_h100()).bound == "memory"

    def test_predict_matmul_overhead_cutoff(self):
        # the second predict(): "if time_us < 8: regime = 'overhead'". A GEMM whose lower
        # bound is ~5.5 us is overhead-bound on the preset; one at ~10.6 us is not.
        h = self.h100()
        small = evaluate(gemm(4096, 2048, 128), h)  # (0.5M + 0.26M + 8.4M) x 2 B: 5.5 us
        assert small.t_lower_s == pytest.approx(
            (4096 * 128 + 128 * 2048 + 4096 * 2048) * 2 / 3.35e12, rel=1e-12)
        assert small.t_lower_s < 8e-6
        assert small.bound == "overhead"
        assert evaluate(gemm(4096, 4096, 128), h).bound == "memory"

    def test_gemm_rule_of_thumb_vs_exact(self):
        # Table: "cuBLAS GEMM (M=N=K=8192) AI 4096" comes from the min(M,N,K)/2 rule of
        # thumb; the exact fp16 AI of a square GEMM is N/3 = 2730.7.
        r = evaluate(gemm(8192, 8192, 8192, "fp16"), self.h100())
        assert r.intensity == pytest.approx(2730.7, abs=0.05)
        assert r.intensity != pytest.approx(4096, rel=0.1)
        assert r.bound == "compute"
        # cuBLAS at 78 % of TC peak: predicted time = T_math / 0.78
        assert r.t_predicted_s == pytest.approx(2 * 8192**3 / (989.4e12 * 0.78), rel=1e-9)

    def test_ai_table_rows(self):
        h = self.h100()
        rows, width = 4096, 8192
        # Softmax (per row) ~ 1: 5 FLOPs over 2 + 2 B per element = 1.25
        sm = evaluate(Operation("softmax", {"rows": rows, "cols": width, "dtype": "fp16"}), h)
        assert sm.intensity == pytest.approx(1.25, rel=1e-12)
        assert sm.bound == "memory"
        # RMSNorm (per row) ~ 1: 4 FLOPs over 4 B per element, plus the weight vector
        rms = evaluate(Operation("norm", {"variant": "rmsnorm", "rows": rows,
                                          "hidden": width, "dtype": "fp16"}), h)
        assert rms.intensity == pytest.approx(4 * rows / (4 * rows + 2), rel=1e-12)
        assert rms.bound == "memory"
        # Elementwise unary/binary: the table's 0.5 and 0.33 are twice what one FLOP per
        # element gives in fp16 (1/4 and 1/6); either way far left of the ridge.
        unary = evaluate(elementwise(1 << 26, [{"op": "relu"}], dtype="fp16", fused=True), h)
        binary = evaluate(elementwise(1 << 26, [{"op": "add", "inputs": ["y"]}],
                                      dtype="fp16", fused=True), h)
        assert unary.intensity == pytest.approx(0.25, rel=1e-12)
        assert binary.intensity == pytest.approx(1 / 6, rel=1e-12)
        assert unary.bound == binary.bound == "memory"

    def test_flash_attention_ideal_intensity(self):
        # The table's "FlashAttention ~ d_head/2" describes a tiled kernel that re-reads K
        # and V per query block. The ideal model (each tensor crossing once) gives
        # 4 q k d / (2 d (2q + 2k)) = q k / (q + k): L/2 for self-attention, whatever d is.
        h = self.h100()
        L = 4096
        for d in (64, 128):
            r = evaluate(attention(L, L, d, heads=32), h)
            assert r.intensity == pytest.approx(L / 2, rel=1e-12)
            assert r.bound == "compute"


# =======================================================================================
class TestSeed004AllAboutRooflines:
    """Seed 004_82b9d23e9441acf7.txt — "All About Rooflines" (scaling book, part 1):
    T_math / T_comms, TPU v5e critical intensity, dot product, matmul critical batch,
    a two-chip network roofline, Questions 1-4 and Problem 5.
    """

    V5E = 1.97e14
    V5E_HBM = 8.2e11
    ICI = 4.5e10

    def v5e(self, **extra):
        return machine("TPU v5e (seed 004)", self.V5E, self.V5E_HBM, "bf16", **extra)

    def test_one_teraflop_h100_vs_v6e(self):
        # 1e12 / 9.89e14 = 1.01 ms; 1e12 / 9.1e14 = 1.1 ms
        op = custom(1e12, 1.0, "bf16")
        h100 = evaluate(op, machine("H100", 9.89e14, 3.35e12, "bf16"))
        v6e = evaluate(op, machine("TPU v6e", 9.1e14, 1.6e12, "bf16"))
        assert h100.t_math_s == pytest.approx(1.01e-3, abs=0.005e-3)
        assert v6e.t_math_s == pytest.approx(1.1e-3, abs=0.005e-3)
        # the presets (989.4 and 918 TFLOP/s) give the same to the seed's precision
        assert evaluate(op, get_preset("h100-sxm")).t_lower_s == pytest.approx(1.01e-3,
                                                                              abs=0.005e-3)
        assert evaluate(op, get_preset("tpu-v6e")).t_lower_s == pytest.approx(1.1e-3,
                                                                             abs=0.015e-3)

    def test_hbm_bandwidths(self):
        assert get_preset("h100-sxm").bandwidth() == pytest.approx(3.35e12, rel=1e-12)
        assert get_preset("tpu-v6e").bandwidth() == pytest.approx(1.6e12, rel=0.03)

    def test_lower_and_upper_bounds(self):
        # T_lower = max(T_math, T_comms), T_upper = sum, within a factor 2; equal at balance
        hw = get_preset(TEACHING)
        r = evaluate(custom(3e12, 1e10), hw)  # T_math 30 ms, T_comms 10 ms
        assert r.t_math_s == pytest.approx(0.03) and r.t_mem_s == pytest.approx(0.01)
        assert r.t_lower_s == pytest.approx(0.03) and r.t_upper_s == pytest.approx(0.04)
        balanced = evaluate(custom(1e14, 1e12), hw)  # 1 s and 1 s
        assert balanced.t_upper_s == pytest.approx(2 * balanced.t_lower_s, rel=1e-12)
        # at exact balance the operation is at the ridge; compute-bound counts it as such
        # (seed 002's code: compute-bound when intensity >= ridge)
        assert balanced.intensity == pytest.approx(balanced.ridge, rel=1e-12)
        assert balanced.bound == "compute"

    def test_v5e_critical_intensity(self):
        # "For the TPU v5e MXU, this is about 240 FLOPs/byte": 1.97e14 / 8.2e11 = 240.2
        assert self.v5e().ridge("bf16") == pytest.approx(240, abs=0.5)
        # the preset uses Google's 819 GB/s: 197e12 / 819e9 = 240.5
        assert get_preset("tpu-v5e").ridge("bf16") == pytest.approx(240, abs=1)

    def test_dot_product(self):
        # x . y: bf16[N], bf16[N] -> bf16[1]: loads 2N + 2N bytes, writes 2.
        # The seed counts N multiplications and N - 1 additions (2N - 1 FLOPs); the engine
        # counts N multiply-adds as 2N FLOPs (product.md convention), one FLOP more.
        # Both intensities tend to 1/2.
        for N in (1, 1000, 1 << 24):
            c = Operation("reduction", {"op": "dot", "n": N, "dtype": "bf16"}).counts()
            assert c.flops == 2 * N == (N + N - 1) + 1
            assert c.bytes == 2 * N + 2 * N + 2
        big = 1 << 24
        r = evaluate(Operation("reduction", {"op": "dot", "n": big, "dtype": "bf16"}),
                     self.v5e())
        assert r.intensity == pytest.approx(2 * big / (4 * big + 2), rel=1e-12)
        assert r.intensity == pytest.approx(0.5, rel=1e-6)
        assert (2 * big - 1) / (4 * big + 2) == pytest.approx(r.intensity, rel=1e-6)
        assert r.bound == "memory"

    def test_dot_product_on_the_vpu(self):
        # footnote: the v5p VPU does ~7e12 FLOP/s, critical intensity "around 3"
        # (7e12 / 2.765e12 = 2.5 with the preset's HBM); 0.5 is still comms-bound.
        vpu = machine("TPU v5p VPU", 7e12, get_preset("tpu-v5p").bandwidth(), "bf16")
        assert vpu.ridge("bf16") == pytest.approx(3, abs=0.5)
        r = evaluate(Operation("reduction", {"op": "dot", "n": 1 << 20, "dtype": "bf16"}),
                     vpu)
        assert r.bound == "memory"

    def test_matmul_intensity(self):
        # X bf16[B, D] . Y bf16[D, F] -> Z bf16[B, F]: 2BDF FLOPs,
        # 2BD + 2DF loaded, 2BF written: I = BDF / (BD + DF + BF) ~ B for B << D, F
        B, D, F = 128, 8192, 32768
        c = gemm(B, F, D, "bf16").counts()
        assert c.flops == 2 * B * D * F
        assert c.bytes_read == 2 * D * F + 2 * B * D
        assert c.bytes_written == 2 * B * F
        assert c.flops / c.bytes == pytest.approx(B * D * F / (B * D + D * F + B * F),
                                                  rel=1e-12)
        assert c.flops / c.bytes == pytest.approx(B, rel=0.03)  # 125.5

    def test_matmul_critical_batch_240(self):
        # B > 1.97e14 / 8.20e11 = 240 (B << D, F; here D = F = 1e7): first compute-bound
        # batch is 241.
        D = F = 10_000_000
        batches = np.arange(1, 513)
        res = sweep(gemm(1, F, D, "bf16"), self.v5e(), m=batches)
        assert first_compute_bound(res["bound"], batches) == 241
        # H100-class GPUs: "closer to 300" (preset: 295.3 -> first compute-bound B = 296)
        res = sweep(gemm(1, F, D, "bf16"), get_preset("h100-sxm"), m=batches)
        assert first_compute_bound(res["bound"], batches) == 296

    def test_two_chip_sharded_matmul_network_roofline(self):
        # Per chip: T_math = 2BDF / (2 x 1.97e14) = BDF / 1.97e14;
        # T_comms = 2BF / 4.5e10 over the inter-chip link. Compute-bound when
        # D/2 > 1.97e14 / 4.5e10 = 4377.8, i.e. D > 8755.6: D = 8755 is comms-bound,
        # D = 8756 compute-bound, whatever B and F.
        hw = self.v5e(interconnect={"ici": self.ICI})

        def shard(B, D, F):
            return custom(B * D * F, 2 * B * F, "bf16", memory_level="ici")

        r = evaluate(shard(1024, 8192, 16384), hw)
        assert r.level == "ici"
        assert r.bandwidth == self.ICI
        assert r.ridge == pytest.approx(4377, abs=1)
        assert r.t_math_s == pytest.approx(1024 * 8192 * 16384 / 1.97e14, rel=1e-12)
        assert r.t_mem_s == pytest.approx(2 * 1024 * 16384 / 4.5e10, rel=1e-12)
        for B in (1, 64, 4096):
            for F in (1024, 28672):
                assert evaluate(shard(B, 8755, F), hw).bound == "memory"
                assert evaluate(shard(B, 8756, F), hw).bound == "compute"
        # the same with the tpu-v5e preset's ici link (45 GB/s per link, per direction)
        preset = get_preset("tpu-v5e")
        assert evaluate(shard(256, 8755, 4096), preset).bound == "memory"
        assert evaluate(shard(256, 8756, 4096), preset).bound == "compute"

    def test_two_chip_sharded_matmul_kind(self):
        # The same example as the sharded_matmul kind: 2 chips, ring all-reduce of the
        # partial sums = one copy of Z sent per chip: FLOPs 2BDF/2 = BDF, bytes
        # 2 (N-1)/N x B F x 2 B = 2BF, counted over the first interconnect (ici) by default.
        B, F = 512, 8192
        preset = get_preset("tpu-v5e")
        op = Operation("sharded_matmul", {"b": B, "d": 8192, "f": F, "chips": 2,
                                          "dtype": "bf16"})
        c = op.counts()
        assert c.flops == B * 8192 * F
        assert c.bytes == 2 * B * F
        r = evaluate(op, preset)
        assert r.level == "ici" and r.bandwidth == pytest.approx(4.5e10, rel=1e-12)
        assert r.ridge == pytest.approx(4377.8, abs=0.05)
        ds = np.arange(8000, 9001)
        res = sweep(op, preset, d=ds)
        assert first_compute_bound(res["bound"], ds) == 8756  # D > 8755.6

    def test_q1_int8_matmul(self):
        # int8 everywhere, 8.1e11 B/s, 3.94e14 OP/s.
        hw = machine("Q1", 3.94e14, 8.1e11, "int8")
        B, D, F = 256, 8192, 8192
        op = gemm(B, F, D, "int8")
        c = op.counts()
        # 1. BD + DF bytes loaded, BF written  2. 2BDF OPs  3. I = 2BDF / (BD + DF + BF)
        assert c.bytes_read == B * D + D * F
        assert c.bytes_written == B * F
        assert c.flops == 2 * B * D * F
        assert c.precision == "int8"
        # 4. T_math = 2BDF / 3.94e14, T_comms = (BD + DF + BF) / 8.1e11; max and sum
        r = evaluate(op, hw)
        t_math = 2 * B * D * F / 3.94e14
        t_comms = (B * D + D * F + B * F) / 8.1e11
        assert r.t_math_s == pytest.approx(t_math, rel=1e-12)
        assert r.t_mem_s == pytest.approx(t_comms, rel=1e-12)
        assert r.t_lower_s == pytest.approx(max(t_math, t_comms), rel=1e-12)
        assert r.t_upper_s == pytest.approx(t_math + t_comms, rel=1e-12)
        # int8 intensity 3.94e14 / 8.1e11 = 486, so B > 486 / 2 = 243
        assert r.ridge == pytest.approx(486, abs=0.5)
        big = 10_000_000
        batches = np.arange(1, 513)
        res = sweep(gemm(1, big, big, "int8"), hw, m=batches)
        assert first_compute_bound(res["bound"], batches) == 244

    def test_q2_int8_weights_bf16_activations(self):
        # bf16[B, D] x int8[D, F] -> bf16[B, F], compute in bf16 at 1.97e14:
        # I ~ 2BDF / DF = 2B > 240 -> B > 120. The machine also has an int8 peak, which
        # must not be used: the FLOPs are bf16 FLOPs.
        hw = self.v5e(compute={"bf16": self.V5E, "int8": 2 * self.V5E})
        D = F = 10_000_000
        op = gemm(1, F, D, "bf16", b_dtype="int8")
        r = evaluate(op.copy(), hw)
        assert r.precision_used == "bf16"
        assert r.peak_flops == self.V5E
        batches = np.arange(1, 513)
        res = sweep(op, hw, m=batches)
        assert first_compute_bound(res["bound"], batches) == 121

    def test_q3_roofline_vs_batch(self):
        # F = D = 4096 and 1024, exact bytes 2BD + DF + 2BF (bf16 activations, int8
        # weights), T = max(2BDF / 1.97e14, bytes / 8.2e11): the seed's own plot code.
        bs = np.arange(1, 512)
        firsts = {}
        for size in (4096, 1024):
            op = gemm(1, size, size, "bf16", b_dtype="int8")
            res = sweep(op, self.v5e(), m=bs)
            total_flops = 2 * bs * size * size
            flops_time = total_flops / 1.97e14
            comms_time = (2 * bs * size + size * size + 2 * bs * size) / 8.2e11
            expected = total_flops / np.maximum(flops_time, comms_time)
            np.testing.assert_allclose(res["attainable_flops"], expected, rtol=1e-12)
            # "both models eventually achieve the peak hardware FLOPs/s"
            assert res["attainable_flops"][-1] == pytest.approx(1.97e14, rel=1e-12)
            firsts[size] = first_compute_bound(res["bound"], bs)
        # 2BX / (4B + X) = R at B = R X / (2X - 4R): 136.1 for X = 4096, 226.3 for 1024
        assert firsts == {4096: 137, 1024: 227}
        # "D=F=1024 almost doubles the critical batch size"
        assert firsts[1024] / firsts[4096] == pytest.approx(1.66, abs=0.01)

    def test_q4_per_batch_weights(self):
        # int8[B, D] x int8[B, D, F] -> int8[B, F]: a separate matrix per batch element,
        # i.e. B independent (1 x D) . (D x F) products. FLOPs 2BDF, bytes BD + BDF + BF:
        # I = 2DF / (D + DF + F) ~ 2, whatever B.
        D, F = 4096, 4096
        intensities = []
        for B in (1, 16, 512):
            c = gemm(1, F, D, "int8", batch=B).counts()
            assert c.flops == 2 * B * D * F
            assert c.bytes == B * D + B * D * F + B * F
            intensities.append(c.flops / c.bytes)
        assert intensities == pytest.approx([2 * D * F / (D + D * F + F)] * 3, rel=1e-12)
        assert intensities[0] == pytest.approx(2.0, abs=0.001)
        r = evaluate(gemm(1, F, D, "int8", batch=512), get_preset("tpu-v5e"))
        assert r.bound == "memory"  # "always comms bound no matter what"

    def test_problem5_h100_critical_batch(self):
        # 1.979e15 "with sparsity" / 2 ~ 1e15 dense, / 3.35e12 = 298 (the seed rounds the
        # dense peak up to 1e15; with the exact 989.4 TFLOP/s it is 295.3).
        dense_per_seed = 1e15 / 3.35e12
        assert dense_per_seed == pytest.approx(298, abs=0.6)
        h = get_preset("h100-sxm")
        assert h.sparse_halved is True
        assert 295 <= h.ridge("bf16") <= 298.6
        assert h.ridge("bf16") == pytest.approx(1.979e15 / 2 / 3.35e12, rel=1e-3)
