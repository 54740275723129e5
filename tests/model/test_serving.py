"""Numbers a serving engineer can act on: the calibrated prediction by default (a whole model
replayed from a CUDA graph), held against the lean Llama-3.1-8B runs on an H100 SXM and an
H200 SXM (calibration/gpu-measurements, measured 2026-11-26, PyTorch 2.11.0+cu130, CUDA 13.0,
driver 580.159)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Setup, layer_steps
from workbench.model.llm.results import model_result
from workbench.model.prediction import DEFAULT_LAUNCHES, DEFAULT_PREDICTION

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "calibration" / "gpu-measurements"
LLAMA = read_model_config("Llama-3.1-8B")
MS = 1e-3


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "workbench", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD_S)


def default_machine(gpu: str):
    hw = get_preset(gpu)
    hw.prediction, hw.launches = DEFAULT_PREDICTION, DEFAULT_LAUNCHES
    return hw


# ---------------------------------------------------------------------------------------------
# the default prediction


def test_the_default_is_calibrated_with_a_cuda_graph_for_whole_models():
    assert (DEFAULT_PREDICTION, DEFAULT_LAUNCHES) == ("calibrated", "auto")


def test_model_decode_batch_1_with_no_flags_prints_the_measured_tpot():
    """The lean CUDA-graph run of Llama-3.1-8B decode at batch 1 on an H100 SXM took 6.565 ms
    (h100-sxm.json, lean llama8b_decode_b1, graph median); the command with no flags prints
    a TPOT within 10 % of 6.6 ms."""
    proc = run_cli("model", "Llama-3.1-8B", "--phase", "decode", "--batch", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("hardware"))
    columns = lines[at].split()
    assert columns[:3] == ["hardware", "T_lower", "TPOT"]
    cells = [c.strip() for c in lines[at + 1].split("  ") if c.strip()]
    number, unit = cells[columns.index("TPOT")].split()
    assert unit == "ms"
    assert abs(float(number) * MS / 6.6e-3 - 1) <= 0.10


@pytest.mark.parametrize("gpu", ["h100-sxm", "h200"])
def test_the_lean_runs_in_the_default_mode_within_15_percent(gpu):
    """Every lean case (prefill at batch 1 and 4 of 2048 tokens, decode at batch 1, 16 and 64
    against 2048 cached positions), predicted as ``model`` predicts with no flags."""
    lean = json.loads((DATA / f"{gpu}.json").read_text(encoding="utf-8"))["lean"]
    hw = default_machine(gpu)
    ratios = {}
    for case, runs in lean.items():
        _model, phase, batch = case.split("_")
        b = int(batch.removeprefix("b"))
        setup = Setup(phase, b, 2048, 2048)
        ratios[case] = runs["graph"]["median_s"] / model_result(LLAMA, setup, hw).t_predicted_s
    assert len(ratios) == 5
    assert {k: round(v, 3) for k, v in ratios.items() if abs(v - 1) > 0.15} == {}


# ---------------------------------------------------------------------------------------------
# expert parallelism: the busiest chip


MIXTRAL = read_model_config("Mixtral-8x7B")


def test_mixtral_ep8_batch_1_waits_for_the_chip_that_reads_a_whole_expert():
    """Mixtral-8x7B on 8 H100s, one expert per chip, one token choosing 2 of 8: two chips
    each read a whole expert per MoE layer, and the step waits for them. One expert is
    gate, up and down of 4096 × 14336 in bf16: 3·4096·14336·2 B = 352 MB; 32 MoE layers:
    11.27 GB, over 3.35 TB/s: 3.36 ms. The average chip (0.25 of an expert) would read
    2.8 GB."""
    from workbench.model.llm.results import busiest_chip_data, derivation, model_totals

    setup = Setup("decode", 1, 2048, 2048, ep=8)
    expert = 3 * 4096 * 14336 * 2
    read = 32 * expert
    assert read / 3.35e12 == pytest.approx(3.365e-3, rel=1e-3)
    busiest = busiest_chip_data(MIXTRAL, setup)
    assert busiest["experts_hit"] == 1 and busiest["experts_hit_mean"] == pytest.approx(0.25)
    assert busiest["expert_read_bytes"] == read
    hw = default_machine("h100-sxm")
    r = model_result(MIXTRAL, setup, hw)
    assert r.t_lower_s >= 3.4e-3
    lines = dict(derivation(MIXTRAL, setup, model_totals(MIXTRAL, setup), [r]))
    assert lines["busiest chip's expert read (EP)"].endswith("= 32·1·3·4096·14336·2 = 11.3 GB")
    assert lines[f"{hw.label}: busiest chip's expert read"] == (
        "bytes / bandwidth = 11.3 GB / 3.35 TB/s = 3.37 ms, in T_lower")
    assert "average E_c·(1 − (1 − k/E)^T) = 1·(1 − (1 − 2/8)^1) = 0.25" in \
        lines["experts hit per chip (EP)"]
    proc = run_cli("model", "Mixtral-8x7B", "--phase", "decode", "--batch", "1", "--ep", "8")
    assert "busiest chip's expert read on NVIDIA H100 SXM5 80GB: 11.3 GB / 3.35 TB/s = " \
           "3.37 ms, in T_lower" in proc.stdout


def test_mixtral_ep8_batch_64_reads_every_expert_as_the_hand_count_says():
    """64 tokens choosing 2 of 8: all 8 experts are hit (8·(1 − 0.75^64) = 8 − 8·10⁻⁸), so
    every chip reads its one expert, 352 MB per MoE layer, as before; the busiest chip gets
    more than the average 64·2/8 = 16 token-expert pairs."""
    setup = Setup("decode", 64, 2048, 2048, ep=8)
    steps = {st.role: st for st in layer_steps(MIXTRAL, setup)}
    up = steps["experts gate/up"].operation.counts()
    down = steps["experts down"].operation.counts()
    weights = sum(t.value for c in (up, down) for t in c.byte_terms if t.tensor == "W")
    assert weights == pytest.approx(3 * 4096 * 14336 * 2, rel=1e-6)
    pairs = up.flops / (2 * 2 * 14336 * 4096)
    assert 16 < pairs < 32


def _routed(tokens, experts, top_k, groups, topk_groups, local, trials, seed=7):
    """Monte Carlo of group-limited routing: each token draws topk_groups of the groups,
    then top_k experts among theirs (expert i in group i // (E/G), chip i // local). The
    busiest chip's pairs and experts hit per trial."""
    import numpy as np

    rng = np.random.default_rng(seed)
    size = experts // groups
    chosen = np.argsort(rng.random((trials, tokens, groups)), axis=2)[..., :topk_groups]
    pick = np.argsort(rng.random((trials, tokens, topk_groups * size)), axis=2)[..., :top_k]
    expert = np.take_along_axis(chosen, pick // size, axis=2) * size + pick % size
    trial = np.broadcast_to(np.arange(trials)[:, None, None], expert.shape)
    pairs = np.zeros((trials, experts // local))
    np.add.at(pairs, (trial, expert // local), 1)
    hit = np.zeros((trials, experts), bool)
    hit[trial, expert] = True
    return pairs.max(axis=1), hit.reshape(trials, -1, local).sum(axis=2).max(axis=1)


@pytest.mark.parametrize("ep", [4, 8, 16])
@pytest.mark.parametrize("tokens", [1, 4, 64])
def test_group_limited_routing_crowds_the_busiest_chip_as_sampled(ep, tokens):
    """DeepSeek-V3's routing (256 experts in 8 groups of 32, each token 8 experts in 4
    groups) over ep chips: the busiest chip's pairs and experts hit are those of routing
    sampled with a fixed seed, within 4 standard errors of the samples' mean (and more
    than the uniform count at few tokens: one token's 8 experts crowd on 4 groups' chips)."""
    import numpy as np

    from workbench.model.llm.kinds import busiest_chip

    trials = 4000 if tokens < 64 else 800
    pairs, hit = _routed(tokens, 256, 8, 8, 4, 256 // ep, trials)
    b = busiest_chip(tokens, 256, 8, 256 // ep, 1.0, 8, 4)
    for got, sample in ((b.pairs, pairs), (b.hit, hit)):
        assert abs(got - sample.mean()) <= 4 * sample.std() / np.sqrt(trials) + 1e-9, \
            (got, sample.mean())
    if tokens == 1:
        assert b.hit > 1.2 * busiest_chip(1, 256, 8, 256 // ep).hit


def test_a_moe_gemm_given_groups_alone_has_no_group_limit_and_more_groups_picked_are_refused():
    """A token picks among every group unless told fewer (``topk_groups`` follows ``groups``):
    eight experts in four groups on two chips count as uniform routing; two of the four
    groups crowd the busiest chip; five of four is refused, as a file or an edit would be."""
    from workbench.model.operations import Operation, cross_checks

    base = {"tokens": 1, "experts": 8, "top_k": 2, "n": 64, "k": 64, "local_experts": 4}

    def pairs(**extra) -> float:
        op = Operation("moe_gemm", {**base, **extra})
        return op.spec.count(op.resolved()).flops / (2 * 64 * 64)

    # uniform: the two experts on one chip with probability 3/7 (2 pairs), else 1 pair there
    assert pairs() == pytest.approx(1 + 3 / 7)
    assert pairs(groups=4) == pytest.approx(pairs())
    # two of the four groups, then two of their four experts, every choice alike: the
    # busiest chip's pairs tallied over all of them (chip 0 holds groups 0 and 1)
    from itertools import combinations
    tally = []
    for chosen in combinations(range(4), 2):
        pool = [e for g in chosen for e in (2 * g, 2 * g + 1)]
        for picked in combinations(pool, 2):
            chips = [e // 4 for e in picked]
            tally.append(max(chips.count(0), chips.count(1)))
    # (a chip of whole groups draws each expert of the picked groups on its own, k in
    # expectation, not k exactly: within 2 % at this tiny size, far closer at DeepSeek's)
    assert pairs(groups=4, topk_groups=2) == pytest.approx(sum(tally) / len(tally), rel=0.02)
    assert pairs(groups=4, topk_groups=2) > pairs() + 0.1
    assert cross_checks("moe_gemm", {**base, "groups": 4, "topk_groups": 5}) == [
        ("topk_groups", "a token picks among at most every group: topk_groups must not exceed "
                        "groups (4), got 5")]


def test_a_group_limit_counted_by_hand():
    """Four experts in 2 groups of 2, one group per token, 2 experts: the token's two
    experts are its group's, both on the chip that holds that group (ep 2), so the busiest
    chip reads 2 experts and gets 2 pairs; without the limit the 2 of 4 share a chip in 2
    of the C(4, 2) = 6 choices: 2·1/3 + 1·2/3 = 4/3. Eight experts in 2 groups of 4 on 4
    chips of 2: the 2 of the chosen group's 4 share a chip in 2 of 6 choices, 4/3, against
    2·4/28 + 1·24/28 = 8/7 without the limit."""
    from workbench.model.llm.kinds import busiest_chip

    assert busiest_chip(1, 4, 2, 2, 1.0, 2, 1).hit == pytest.approx(2)
    assert busiest_chip(1, 4, 2, 2, 1.0, 2, 1).pairs == pytest.approx(2)
    assert busiest_chip(1, 4, 2, 2).hit == pytest.approx(4 / 3)
    assert busiest_chip(1, 8, 2, 2, 1.0, 2, 1).hit == pytest.approx(4 / 3)
    assert busiest_chip(1, 8, 2, 2).hit == pytest.approx(8 / 7)


@pytest.mark.parametrize("tokens", [1, 4, 64, 4096])
def test_one_group_counts_the_busiest_chip_as_uniform_routing(tokens):
    """groups = 1 (and any set-up the group limit leaves alone: every group picked, or
    chips that straddle groups) counts exactly as uniform routing."""
    from workbench.model.llm.kinds import busiest_chip

    uniform = busiest_chip(tokens, 256, 8, 32)
    assert busiest_chip(tokens, 256, 8, 32, 1.0, 1, 1) == uniform
    assert busiest_chip(tokens, 256, 8, 32, 1.0, 8, 8) == uniform
    assert busiest_chip(tokens, 256, 8, 86, 1.0, 8, 4) == busiest_chip(tokens, 256, 8, 86)


def test_deepseek_v3_ep8_decode_counts_its_group_limit():
    """DeepSeek-V3 decoding one sequence on 8 chips of 32 experts (one group each): the
    token's 8 experts lie in 4 groups, 2 each on average, so the busiest chip reads about
    3.49 (sampled: 3.48 ± 0.01), not the 2.56 of 8 experts spread over all 256; the
    derivation and the MoE operation's notes say so."""
    from workbench.model.llm.results import busiest_chip_data, derivation, model_totals

    arch = read_model_config("DeepSeek-V3")
    setup = Setup("decode", 1, 2048, 2048, ep=8)
    busiest = busiest_chip_data(arch, setup)
    assert busiest["experts_hit"] == pytest.approx(3.49, abs=0.02)
    hw = default_machine("h100-sxm")
    r = model_result(arch, setup, hw)
    lines = dict(derivation(arch, setup, model_totals(arch, setup), [r]))
    assert "each token's experts in 4 of 8 groups" in lines["experts hit per chip (EP)"]
    up = {st.role: st for st in layer_steps(arch, setup)}["experts gate/up"].operation
    assert any("4 of 8 groups" in note for note in up.counts().notes)


def test_an_imbalance_factor_loads_the_busiest_chip_more():
    """DeepSeek-V3 style routing, 64 tokens choosing 8 of 256 over 8 chips of 32: the
    busiest chip's pairs and experts grow by the factor (experts at most its 32)."""
    from workbench.model.llm.kinds import busiest_chip

    uniform = busiest_chip(64, 256, 8, 32)
    skewed = busiest_chip(64, 256, 8, 32, 1.3)
    assert uniform.mean_pairs == 64 * 8 * 32 / 256 == 64
    assert uniform.pairs > uniform.mean_pairs
    assert skewed.pairs == pytest.approx(1.3 * uniform.pairs)
    assert skewed.hit == min(32, 1.3 * uniform.hit) == 32


# ---------------------------------------------------------------------------------------------
# serving memory


def test_max_batch_is_the_sequences_a_server_holds_by_hand():
    """Llama-3.1-8B on an H100 SXM, 2048 + 256 tokens, memory utilisation 0.9:
    capacity 81,559 MiB = 85,520,809,984 B; × 0.9 − 1 GiB of runtime reserve
    = 75,894,987,161.6 B usable; weights 8,030,261,248 params × 2 B = 16,060,522,496 B;
    one 8,192-token prefill chunk's activations 8192·(4096 + 2·14336)·2 B = 536,870,912 B;
    each sequence's KV cache 2304 positions (144 blocks of 16) × 2·32·8·128·2 B
    = 301,989,888 B: ⌊59,297,593,753.6 / 301,989,888⌋ = ⌊196.4⌋ = 196, in prefill and
    decode alike."""
    usable = 81559 * 2 ** 20 * 0.9 - 2 ** 30
    by_hand = (usable - 8_030_261_248 * 2 - 8192 * (4096 + 2 * 14336) * 2) // (
        2304 * 2 * 32 * 8 * 128 * 2)
    assert by_hand == 196
    hw = default_machine("h100-sxm")
    for phase in ("prefill", "decode"):
        setup = Setup(phase, 1, 2048, 2048, output_len=256)
        r = model_result(LLAMA, setup, hw)
        assert r.memory_available_bytes == pytest.approx(usable, rel=1e-12)
        assert abs(r.max_batch / by_hand - 1) <= 0.02
        assert r.max_batch == 196
    proc = run_cli("model", "Llama-3.1-8B", "--phase", "prefill", "--batch", "1",
                   "--output-len", "256")
    assert "= ⌊(75.9 GB − 16.1 GB − 537 MB) / 302 MB⌋ = 196 (prefill and decode alike)" in \
        proc.stdout
    assert "85.5 GB (79.6 GiB)" in proc.stdout  # the card's capacity, GiB beside GB


def test_paged_blocks_round_each_sequence_up_and_utilisation_is_a_setting():
    """2000 + 100 = 2100 positions in blocks of 16: ⌈2100/16⌉ = 132 blocks = 2112 positions;
    in blocks of 256: 9 blocks = 2304."""
    from workbench.model.llm.results import per_sequence_bytes

    setup = Setup("decode", 1, 2000, 2000, output_len=100)
    assert per_sequence_bytes(LLAMA, setup) == 2112 * 131072
    assert per_sequence_bytes(LLAMA, setup.with_(kv_block=256)) == 2304 * 131072
    hw = default_machine("h100-sxm")
    more = model_result(LLAMA, setup.with_(memory_utilization=0.95), hw)
    assert more.memory_available_bytes == pytest.approx(81559 * 2 ** 20 * 0.95 - 2 ** 30)
    assert more.max_batch > model_result(LLAMA, setup, hw).max_batch


def test_a_context_past_the_model_limit_is_warned_about(tmp_path):
    """Gemma-2-9B states max_position_embeddings 8192: 32 k positions draw a warning on
    stderr (the output stays); a YaRN rope scaling of 32,768 × 4 stretches Qwen's limit
    to 131,072."""
    proc = run_cli("model", "Gemma-2-9B", "--phase", "decode", "--batch", "1", "--kv-len",
                   "32768")
    assert proc.returncode == 0
    assert "warning: 32,768 positions exceed Gemma-2-9B's limit of 8,192 " \
           "(max_position_embeddings)" in proc.stderr
    quiet = run_cli("model", "Gemma-2-9B", "--phase", "decode", "--batch", "1", "--kv-len",
                    "8192")
    assert "warning" not in quiet.stderr
    config = json.loads((REPO / "workbench/model_configs/Qwen3-8B.json").read_text())
    config["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0,
                              "original_max_position_embeddings": 32768}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    arch = read_model_config(str(path))
    assert arch.max_positions == 32768 * 4
    assert "factor 4" in arch.max_positions_source
    assert arch.context_warning(100_000) == ""


# ---------------------------------------------------------------------------------------------
# collectives


def test_auto_takes_one_shot_up_to_1_mb_per_chip_and_ring_above():
    """61 rows × 8192 bf16 values = 999,424 B per chip: one-shot, 1 step, each chip reads
    the 7 others' sums (7 × 999,424 B); 62 rows = 1,015,808 B: a ring of 2·(8−1) = 14 steps
    sending 2·7/8 of its rows."""
    from workbench.model.llm.kinds import collective_steps
    from workbench.model.operations import Operation

    small = {"rows": 61, "hidden": 8192, "chips": 8, "dtype": "bf16"}
    large = {**small, "rows": 62}
    assert collective_steps("all_reduce", small) == (1, "1")
    assert collective_steps("all_reduce", large) == (14, "2·(8−1)")
    assert Operation("all_reduce", small).counts().bytes == 7 * 61 * 8192 * 2
    assert Operation("all_reduce", large).counts().bytes == pytest.approx(
        2 * 7 / 8 * 62 * 8192 * 2)
    assert collective_steps("all_reduce", {**large, "algorithm": "tree"}) == (6, "2·⌈log2 8⌉")
    assert collective_steps("all_reduce", {**large, "algorithm": "one_shot"})[0] == 1


def test_the_model_command_names_the_algorithm_and_its_steps():
    proc = run_cli("model", "Llama-3.1-70B", "--phase", "decode", "--batch", "1", "--tp", "8")
    assert "160 × all-reduce (one-shot) of 1 = 1 step × 0.6 µs (default for NVLink) = 96 µs" \
        in proc.stdout
    assert "1 × logits all-gather of (8−1) = 7 steps × 0.6 µs" in proc.stdout
    ring = run_cli("model", "Llama-3.1-70B", "--phase", "decode", "--batch", "1", "--tp", "8",
                   "--all-reduce", "ring")
    assert "160 × all-reduce (ring) of 2·(8−1) = 14 steps × 0.6 µs (default for NVLink) = " \
           "1.34 ms" in ring.stdout


# ---------------------------------------------------------------------------------------------
# requests


@pytest.mark.parametrize("prediction", ["calibrated", "derated"])
def test_a_request_gives_its_lower_bounds_and_tpot_grows_with_the_cache(prediction):
    """Batch 1, 2048 + 256: the last step reads 255 more positions of KV cache than the
    first, 32 layers · 2·8·128·255 · 2 B = 33.4 MB, 10.0 µs at 3.35 TB/s: T_lower grows by
    that, and so does the predicted TPOT however its launch floors are set."""
    args = ["model", "Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--output-len",
            "256", "--format", "json", "--prediction", prediction]
    result = json.loads(run_cli(*args).stdout)["results"][0]
    growth = 32 * 2 * 8 * 128 * 255 * 2 / 3.35e12
    assert result["tpot_last_lower_s"] - result["tpot_first_lower_s"] == pytest.approx(
        growth, rel=1e-6)
    assert result["tpot_last_s"] - result["tpot_first_s"] >= growth * (1 - 1e-9)
    for key in ("ttft", "tpot_first", "tpot_last", "tpot_mean", "request"):
        assert 0 < result[f"{key}_lower_s"] < result[f"{key}_s"]
    assert result["request_lower_s"] == pytest.approx(
        result["ttft_lower_s"] + result["decode_lower_s"], rel=1e-12)


# ---------------------------------------------------------------------------------------------
# speculative decoding


def test_speculative_decoding_verifies_k_plus_1_and_divides_the_step():
    """4 draft tokens, each accepted with probability 0.7: a step runs 5 positions per
    sequence and yields (1 − 0.7⁵)/(1 − 0.7) = (1 − 0.16807)/0.3 = 2.7731 tokens; TPOT is the
    step over that, tokens/s the batch times it over the step."""
    setup = Setup("decode", 2, 2048, 2048, draft_tokens=4, acceptance=0.7)
    assert setup.verify_width == 5
    assert setup.tokens_per_step == pytest.approx(0.83193 / 0.3, rel=1e-12)
    steps = {st.role: st.operation.params for st in layer_steps(LLAMA, setup)}
    assert steps["QKV projection"]["m"] == 2 * 5
    assert steps["attention"]["query_len"] == 5
    assert steps["lm_head"]["m"] == 2 * 5  # every verified position's logits
    hw = default_machine("h100-sxm")
    r = model_result(LLAMA, setup, hw)
    plain = model_result(LLAMA, setup.with_(draft_tokens=0), hw)
    assert r.tokens_per_step == pytest.approx(2.7731, rel=1e-4)
    assert r.t_predicted_s == pytest.approx(r.step_s / r.tokens_per_step, rel=1e-12)
    assert r.t_lower_s == pytest.approx(r.step_lower_s / r.tokens_per_step, rel=1e-12)
    assert r.tokens_per_s == pytest.approx(2 * r.tokens_per_step / r.step_s, rel=1e-12)
    # at batch 2 the step is bound by the weights: 5 positions cost little more than 1
    assert plain.t_predicted_s <= r.step_s < 1.1 * plain.t_predicted_s
    proc = run_cli("model", "Llama-3.1-8B", "--phase", "decode", "--batch", "2",
                   "--draft-tokens", "4", "--acceptance", "0.7")
    assert "verify width k + 1 = 5; expected tokens per step (1 − a^(k+1))/(1 − a) = " \
           "(1 − 0.7^5)/(1 − 0.7) = 2.77" in proc.stdout


def test_the_derivation_opens_with_the_context_warning():
    from workbench.model.llm.results import derivation, model_totals

    gemma = read_model_config("Gemma-2-9B")
    setup = Setup("decode", 1, 2048, 32768)
    r = model_result(gemma, setup, default_machine("h100-sxm"))
    first = derivation(gemma, setup, model_totals(gemma, setup), [r])[0]
    assert first[0] == "warning" and "limit of 8,192" in first[1]


# ---------------------------------------------------------------------------------------------
# verdicts in the shipped real-kernels example


def test_no_real_kernel_that_meets_its_prediction_is_called_a_bug():
    """The 70 real kernels of real_kernels_h100_h200.yaml (measured 2026-11-26): every one
    within 20 % of its T_predicted is as predicted or overhead-bound, never a bug, and the
    launch-bound ones (1024³ and 512³ GEMMs, a tiny add, a small softmax, on both GPUs) say
    how much launch and start-up they pay."""
    from workbench.io.sessions import load_session
    from workbench.model.measured_session import judge_session

    session = load_session(REPO / "workbench/examples/real_kernels_h100_h200.yaml")
    judged = [p.judgement for p in judge_session(session)]
    assert len(judged) == 70 and all(j is not None for j in judged)
    meets = [j for j in judged if abs(j.vs_predicted - 1) <= 0.20]
    assert len(meets) == 70
    assert not any(j.verdict == "likely-bug" for j in meets)
    launch_bound = [j for j in judged if j.predicted_bound == "overhead"]
    assert sorted(j.measurement for j in launch_bound) == sorted(
        f"{op} ({gpu})" for op in ("g_1024", "g_512", "add_tiny", "softmax_small")
        for gpu in ("h100-sxm", "h200"))
    for j in launch_bound:
        assert j.verdict == "overhead-bound"
        assert j.verdict_label.startswith("overhead-bound: ")
        assert j.verdict_label.endswith(" µs of launch and start-up")
        assert j.fraction < 0.25  # a "bug" by the fraction of the roof alone


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--acceptance", "1.5", "--acceptance: must be a probability from 0 to 0.999, got 1.5"),
    ("--memory-utilization", "0",
     "--memory-utilization: must be a fraction above 0 and at most 1"),
    ("--imbalance", "0.5", "--imbalance: must be a number from 1 (uniform routing) to 64"),
    ("--draft-tokens", "-1", "--draft-tokens: must be 0 or more, got '-1'"),
    ("--draft-tokens", "17", "--draft-tokens: must be at most 16, got '17'"),
    ("--kv-block", "0", "--kv-block: must be a positive whole number, got '0'"),
    ("--acceptance", "nan", "--acceptance: expected a finite number, got 'nan'"),
])
def test_bad_serving_settings_are_refused_in_one_line(flag, value, message):
    proc = run_cli("model", "Llama-3.1-8B", "--phase", "decode", "--batch", "1", flag, value)
    assert proc.returncode == 2 and proc.stdout == ""
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_machine_states_its_own_runtime_reserve_in_a_session():
    """A preset machine with a 4 GiB reserve: 85,520,809,984 B × 0.9 − 4 GiB = 72.67 GB
    usable; written back in the preset form and read again."""
    from workbench.io.sessions import dumps_session, loads_session

    text = "schema_version: 2\nhardware:\n  - {preset: h100-sxm, runtime_reserve: 4 GiB}\n"
    session = loads_session(text, "s.yaml")
    hw = session.hardware[0].hardware
    assert hw.reserve() == (4 * 2 ** 30, "machine")
    r = model_result(LLAMA, Setup("decode", 1), hw)
    assert r.memory_available_bytes == pytest.approx(81559 * 2 ** 20 * 0.9 - 4 * 2 ** 30)
    written = dumps_session(session)
    assert "preset: h100-sxm" in written and "runtime_reserve: 4" in written
    assert loads_session(written, "t.yaml").hardware[0].hardware.runtime_reserve == 4 * 2 ** 30
