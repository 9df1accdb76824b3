"""Checkpoints: size, per-rank share, write and drain bandwidth, restore, retention, interval.

Every expected value is worked by hand in the comment beside it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from calc import checkpoint as ck
from calc.errors import InputError

GIB = 2**30
# MLPerf Storage Table 2: Llama 3 70B checkpoint "912 GB", binary units -> 912 x 2^30 bytes
C70 = 912 * 1_073_741_824  # = 979,252,543,488 B


def test_llama3_70b_param_count_by_hand() -> None:
    # h 8192, L 80, f 28672, 128 heads of 64, 8 KV heads -> d_kv = 512
    # per layer: 2h 16,384 + QKV 8192 x 9216 = 75,497,472 + out 8192^2 = 67,108,864
    #            + SwiGLU 3 x 8192 x 28672 = 704,643,072                  = 847,265,792
    # x 80 = 67,781,263,360; + embedding and lm_head 2 x 128256 x 8192 = 2,101,346,304; + 8192
    expected = 69_882_617_856  # = 67,781,263,360 + 2,101,346,304 + 8,192
    assert ck.llama_params(128256, 8192, 80, 28672, 128, 8) == expected
    assert ck.MLPERF_CHECKPOINT["llama3-70b"]["params"] == expected


def test_llama3_70b_mlperf_layout_matches_the_rules_size() -> None:
    # 69,882,617,856 params x (2 B fp16 weights + 3 x 4 B fp32 master, m, v) = 978,356,649,984 B
    # = 911.2 GiB; the rules print 912 GB (GiB) -> within 0.1 %
    size = ck.checkpoint_bytes(69_882_617_856, 2, 12)
    assert size == 978_356_649_984
    assert size == pytest.approx(ck.MLPERF_CHECKPOINT["llama3-70b"]["checkpoint_bytes"], rel=1e-3)
    assert ck.MLPERF_CHECKPOINT["llama3-70b"]["checkpoint_bytes"] == C70


def test_llama3_8b_mlperf_layout_matches_the_rules_size() -> None:
    # 8,030,261,248 x 14 = 112,423,657,472 B = 104.7 GiB; rules: 105 GB (GiB) -> within 0.3 %
    size = ck.checkpoint_bytes(8_030_261_248)
    assert size == 112_423_657_472
    assert size == pytest.approx(105 * GIB, rel=3e-3)


def test_mlperf_table_layout_multiplies_out() -> None:
    # TP x PP x DP = processes: 1x1x8 = 8, 8x1x8 = 64, 8x32x2 = 512, 8x64x2 = 1024
    for row, processes in zip(ck.MLPERF_CHECKPOINT.values(), (8, 64, 512, 1024), strict=True):
        assert row["tensor_parallel"] * row["pipeline_parallel"] * row["data_parallel"] == processes
        assert row["processes"] == processes
        assert row["checkpoint_bytes"] == pytest.approx(row["checkpoint_gib"] * GIB)


def test_checkpoint_layouts_are_the_optimizer_state_less_gradients() -> None:
    # memory.BYTES_PER_PARAM adam = 16 = 4 weights + 4 gradients + 8 (m, v); a checkpoint drops
    # the 4 B of gradients -> 12 (fp32 Adam); mixed precision adds the 2 B fp16 copy -> 14
    assert sum(ck.CHECKPOINT_LAYOUTS["fp32_adam"]) == 12
    assert sum(ck.CHECKPOINT_LAYOUTS["mlperf_mixed_adam"]) == 14


def test_sync_write_70b_every_30_min_at_2_percent_stall() -> None:
    # 979,252,543,488 B / (0.02 x 1800 s = 36 s) = 27,201,459,541.3 B/s, about 27.2 GB/s
    assert ck.sync_write_bytes_per_s(C70, 1800, 0.02) == pytest.approx(27_201_459_541.33)


def test_async_drain_70b_every_30_min() -> None:
    # 979,252,543,488 B / 1800 s = 544,029,190.8 B/s, 50x less than the blocking save above
    assert ck.async_drain_bytes_per_s(C70, 1800) == pytest.approx(544_029_190.83)


def test_async_host_ram_and_blocking_part() -> None:
    # 70B over 8 nodes of 8 ZeRO-3 ranks: 979,252,543,488 / 8 = 122,406,567,936 B per node;
    # double-buffered = 244,813,135,872 B; copied at 100e9 B/s the GPUs stall 1.224 s
    node = C70 / 8
    assert ck.async_host_ram_bytes(node) == 122_406_567_936
    assert ck.async_host_ram_bytes(node, copies=2) == 244_813_135_872
    assert ck.async_blocking_s(node, 100e9) == pytest.approx(1.22406567936)


def test_restore_time_storage_or_per_rank_bound() -> None:
    # 64 ranks, storage 100e9 B/s: 979.25e9 / 100e9 = 9.79 s; shard 15.30e9 B at 2e9 B/s = 7.65 s
    # -> storage binds, 9.79 s. At 1e9 B/s per rank the shard takes 15.30 s and binds instead.
    shard = C70 / 64  # 15,300,820,992 B
    assert ck.restore_time_s(C70, 100e9, shard, 2e9) == pytest.approx(9.79252543488)
    assert ck.restore_time_s(C70, 100e9, shard, 1e9) == pytest.approx(15.300820992)
    # a rank that deserialises at 0.5e9 B/s (slower than its 2e9 B/s link): 15.30e9 / 0.5e9 = 30.60 s
    assert ck.restore_time_s(C70, 100e9, shard, 2e9, 0.5e9) == pytest.approx(30.601641984)


def test_retained_capacity() -> None:
    # keep 3 of 912 GiB + the save in flight = 4 x 912 = 3,648 GiB; with 30 milestones:
    # 34 x 912 = 31,008 GiB; with no save running (in_flight 0) 3 x 912 = 2,736 GiB
    assert ck.retained_capacity_bytes(C70, 3) == 3648 * GIB
    assert ck.retained_capacity_bytes(C70, 3, 30) == 31_008 * GIB
    assert ck.retained_capacity_bytes(C70, 3, 0, 0) == 2736 * GIB


def test_milestones_over_a_run() -> None:
    # a 30-day run keeping one every 24 h: floor(2,592,000 s / 86,400 s) = 30; every 7 d: floor(4.29) = 4
    assert ck.milestone_count(30 * 86400, 86400) == 30
    assert ck.milestone_count(30 * 86400, 7 * 86400) == 4


def test_young_daly_60_s_write_24_h_mtbf() -> None:
    # sqrt(2 x 60 s x 86,400 s) = sqrt(10,368,000) = 3219.9 s, about 54 min
    assert ck.young_daly_interval_s(60, 86400) == pytest.approx(3219.94, abs=0.01)
    # a drain that takes the whole interval (k = 1): sqrt(10,368,000 / 3) = 1859.0 s
    assert ck.young_daly_interval_s(60, 86400, 1.0) == pytest.approx(1859.03, abs=0.01)


def test_job_mtbf_from_the_llama3_interruption_rate() -> None:
    # Llama 3 paper 3.3.4: 419 unexpected interruptions in 54 d on 16,384 H100s.
    # The whole run: 54 d x 86,400 s / 419 = 4,665,600 / 419 = 11,135.1 s = 3.09 h
    assert ck.job_mtbf_s(16384) == pytest.approx(11_135.08, abs=0.01)
    # 64 GPUs: 4,665,600 x 16,384 / (419 x 64) = 1,194,393,600 / 419 = 2,850,581.4 s = 33.0 d
    assert ck.job_mtbf_s(64) == pytest.approx(2_850_581.38, abs=0.01)
    # per GPU-day: 419 / (54 x 16,384) = 419 / 884,736 = 4.736e-4
    assert pytest.approx(4.7359e-4, rel=1e-4) == ck.INTERRUPTIONS_PER_GPU_S * 86400
    # a month of 30 d at a 24 h MTBF: 30 interruptions
    assert ck.failures_per_month(86400) == pytest.approx(30.0)


def test_time_lost_per_failure_and_goodput() -> None:
    # restore 15.29 s + half of a 1800 s interval + a 1800 s drain still running = 2715.29 s
    lost = ck.lost_per_failure_s(15.286822656, 1800, 1800)
    assert lost == pytest.approx(2715.286822656)
    # stall 0.2426 s / 1800 s = 1.348e-4; failures 2715.29 / 86,400 = 0.031427
    # goodput = 1 - 0.0001348 - 0.0314269 = 0.968438
    assert ck.goodput(0.24264797866 / 1800, lost, 86400) == pytest.approx(0.968438, abs=1e-6)
    # more lost than the MTBF: nothing useful, clipped to 0 (not negative)
    assert ck.goodput(0.0, 2 * 86400, 86400) == 0.0


def test_async_stall_is_the_host_copy_unless_the_drain_overruns() -> None:
    # 70B ZeRO-3 on 64 ranks: 15,286,822,656 B per rank over a 63e9 B/s PCIe Gen5 link = 0.2426 s
    copy = ck.host_copy_s(978_356_649_984 / 64, 63e9)
    assert copy == pytest.approx(0.242648, abs=1e-6)
    # drain 182 s in a 1800 s interval: only the copy blocks; a 2000 s drain adds 200 s of waiting
    assert ck.blocking_s(182.0, 1800, copy, 1.0) == pytest.approx(0.242648, abs=1e-6)
    assert ck.blocking_s(2000.0, 1800, copy, 1.0) == pytest.approx(200.242648, abs=1e-6)
    # a blocking save stalls for the whole write: 182 s / 1800 s = 10.1 %
    assert ck.stall_share(ck.blocking_s(182.0, 1800, copy, 0.0), 1800) == pytest.approx(0.101111, abs=1e-6)


def test_zero3_over_64_data_parallel_ranks_divides_by_64() -> None:
    per_rank, ranks = ck.bytes_per_rank(C70, data_parallel=64, zero_stage=3)
    assert per_rank == C70 / 64 and ranks == 64


def test_no_zero_only_one_replica_writes() -> None:
    # TP 8 x DP 8 without ZeRO: 8 ranks of replica 0 write 912 GiB / 8 = 114 GiB each
    per_rank, ranks = ck.bytes_per_rank(C70, data_parallel=8, tensor_parallel=8, zero_stage=0)
    assert per_rank == 114 * GIB and ranks == 8


def test_zero1_replica_zero_also_writes_the_weights() -> None:
    # 405B layout, TP 8 x PP 32 x DP 2, 1e9 params x 14 B: weights 2e9 / 256 = 7.8125e6 B plus
    # optimizer 12e9 / 512 = 23.4375e6 B -> 31.25e6 B on the busiest rank; 512 ranks write
    per_rank, ranks = ck.bytes_per_rank(14e9, 2, 8, 32, zero_stage=1)
    assert per_rank == pytest.approx(31.25e6) and ranks == 512


def test_vectorised_over_zero_stage() -> None:
    per_rank, ranks = ck.bytes_per_rank(800.0, 4, 2, 1, np.array([0.0, 3.0]))
    # stage 0: 800 / 2 = 400 on 2 ranks; stage 3: 800 / 8 = 100 on 8 ranks
    assert np.asarray(per_rank).tolist() == [400.0, 100.0] and np.asarray(ranks).tolist() == [2.0, 8.0]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: ck.checkpoint_bytes(-1.0), "params"),
        (lambda: ck.sync_write_bytes_per_s(C70, 0.0, 0.02), "interval_s"),
        (lambda: ck.sync_write_bytes_per_s(C70, 1800, 0.0), "stall_fraction"),
        (lambda: ck.sync_write_bytes_per_s(C70, 1800, 1.5), "stall_fraction"),
        (lambda: ck.async_drain_bytes_per_s(C70, -5.0), "interval_s"),
        (lambda: ck.async_drain_bytes_per_s(-1.0, 1800), "checkpoint_bytes"),
        (lambda: ck.bytes_per_rank(C70, 0.0), "data_parallel"),
        (lambda: ck.bytes_per_rank(C70, 8, zero_stage=4.0), "zero_stage"),
        (lambda: ck.bytes_per_rank(C70, 8, zero_stage=1.5), "zero_stage"),  # stages are whole
        (lambda: ck.bytes_per_rank(C70, 8, zero_stage=-1.0), "zero_stage"),
        (lambda: ck.bytes_per_rank(C70, 8, zero_stage=[0.0, 3.5]), "zero_stage"),  # any element
        (lambda: ck.restore_time_s(C70, 0.0, 64, 1e9), "read_bytes_per_s"),
        (lambda: ck.restore_time_s(C70, 1e9, 64, 1e9, 0.0), "load_bytes_per_s"),
        (lambda: ck.job_mtbf_s(0.0), "gpus"),
        (lambda: ck.failures_per_month(0.0), "mtbf_s"),
        (lambda: ck.milestone_count(86400, 0.0), "milestone_interval_s"),
        (lambda: ck.goodput(0.0, 1.0, float("nan")), "mtbf_s"),
        (lambda: ck.host_copy_s(1e9, 0.0), "host_link_bytes_per_s"),
        (lambda: ck.retained_capacity_bytes(C70, -1.0), "keep"),
        (lambda: ck.young_daly_interval_s(60, 0.0), "mtbf_s"),
        (lambda: ck.young_daly_interval_s(-60, 86400), "checkpoint_write_s"),
        (lambda: ck.async_blocking_s(1e9, float("nan")), "host_copy_bytes_per_s"),
    ],
)
def test_invalid_inputs_name_the_argument(call, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as e:
        call()
    assert e.value.field == field
    assert field in str(e.value)


def test_stall_fraction_of_one_is_allowed() -> None:
    # stalling the whole interval: 979,252,543,488 / 1800 = the async drain rate
    assert math.isclose(ck.sync_write_bytes_per_s(C70, 1800, 1.0), ck.async_drain_bytes_per_s(C70, 1800))


# ------------------------------------------------------------------ through calc.plan


def test_plan_sizes_the_checkpoint_writes_by_hand() -> None:
    import calc

    # gpt_7b: 6,738,415,616 params x 14 B (MLPerf layout) = 94.34 GB; every 30 min at 2 % stall
    # the blocking save must finish in 36 s: 94.34e9 / 36 = 2.62 GB/s.
    p = calc.plan(
        gpu="H100-SXM",
        model="gpt_7b",
        precision="bf16",
        optimizer="adam",
        state_shards=8,
        gpus_per_job=8,
        checkpoint_interval_s="30 min",
        checkpoint_mode="sync",
        zero_stage=3,
        storage_bytes_per_s="10 GB/s",
        checkpoint_load_bytes_per_s="5 GB/s",
    )
    size = 6738415616 * 14
    assert p.checkpoint_bytes == pytest.approx(size, rel=1e-12)
    assert p.checkpoint_write_bytes_per_s == pytest.approx(size / 36, rel=1e-12)
    assert p.checkpoint_writing_ranks == 8 and p.checkpoint_rank_bytes == pytest.approx(size / 8, rel=1e-12)
    # restore: the storage's 10 GB/s binds (no per-node link given; each rank loads its 11.79e9 B
    # shard at 5 GB/s in 2.36 s): 94.34 GB / 10 GB/s = 9.43 s
    assert p.checkpoint_restore_s == pytest.approx(size / 10e9, rel=1e-12)
    assert p.checkpoint_capacity_bytes == pytest.approx(3 * size, rel=1e-12)  # keep 2 + the save in flight
    # the storage must take the burst: training (and its reads) wait during a blocking save
    assert p.storage_need_bytes_per_s == pytest.approx(max(p.read_bytes_per_s, size / 36), rel=1e-12)
    a = calc.plan(p.scenario, checkpoint_mode="async")
    assert a.checkpoint_write_bytes_per_s == pytest.approx(size / 1800, rel=1e-12)
    assert a.checkpoint_host_ram_bytes == pytest.approx(size, rel=1e-12)  # 8 shards, all on one node
    # The async drain is bought within half the interval (drain_target 0.5), beside the reads:
    # size / 900 s, twice its average (before issue 37 this figure said the average, size / 1800 s,
    # while the sizing bought the burst).
    assert a.checkpoint_save_burst_bytes_per_s == pytest.approx(size / 900, rel=1e-12)
    assert a.storage_need_bytes_per_s == pytest.approx(a.read_bytes_per_s + size / 900, rel=1e-12)


def test_no_interval_means_no_checkpoint_writes() -> None:
    import calc

    p = calc.plan("beast-imagenet-4xv100")
    assert p.checkpoint_write_bytes_per_s == 0 and "no checkpoints" in p.formatted("checkpoint_write_bytes_per_s")
    assert p.storage_need_bytes_per_s == p.read_bytes_per_s


def test_parallel_layout_must_divide_the_gpus() -> None:
    import calc

    with pytest.raises(calc.InputError, match="tensor_parallel"):
        calc.plan(gpus_per_job=8, tensor_parallel=3)


# ------------------------------------------------------------ issue 19: as teams run them


def test_1t_async_drain_by_hand() -> None:
    import calc

    # 1,183,035,102,480 params x 14 B = 16,562,491,434,720 B = 15,425 GiB every 30 min:
    # 16,562,491,434,720 / 1800 s = 9,201,384,130 B/s = 9.20 GB/s (the blocking save: / 36 s = 460 GB/s)
    p = calc.plan("mlperf-checkpoint-llama3-1t")
    assert p.checkpoint_async == 1.0  # auto: ZeRO-1 over TP 8 x PP 64 is sharded -> async
    assert p.checkpoint_write_bytes_per_s == pytest.approx(9_201_384_130.4, rel=1e-9)
    assert p.checkpoint_async_write_bytes_per_s == pytest.approx(9_201_384_130.4, rel=1e-9)
    assert p.checkpoint_sync_write_bytes_per_s == pytest.approx(16_562_491_434_720 / 36, rel=1e-9)


def test_young_daly_70b_on_64_gpus_from_the_llama3_rate() -> None:
    import calc

    # MTBF of 64 GPUs: 2,850,581.4 s (test above). Async saves block for the copy to host RAM:
    # 978,356,649,984 B / 64 ranks = 15,286,822,656 B at 63e9 B/s = 0.242648 s.
    # No storage chosen: the drain is sized to the interval, so a save is durable one interval
    # late (k = 1): sqrt(2 x 0.242648 x 2,850,581.4 / 3) = sqrt(461,125) = 679.06 s = 11.3 min
    p = calc.plan("mlperf-checkpoint-llama3-70b")
    assert p.mtbf_job_s == pytest.approx(2_850_581.38, abs=0.01)
    assert p.checkpoint_host_copy_s == pytest.approx(0.242648, abs=1e-6)
    assert p.young_daly_interval_s == pytest.approx(679.06, abs=0.01)
    # 30 d / 33.0 d = 0.909 interruptions a month
    assert p.failures_per_month == pytest.approx(0.9092882, abs=1e-7)  # 2,592,000 / 2,850,581.38
    # "optimal" uses it: 978,356,649,984 / 679.06 s = 1.4407e9 B/s of drain
    q = calc.plan(p.scenario, checkpoint_interval_s="optimal")
    assert q.checkpoint_interval_used_s == pytest.approx(679.06, abs=0.01)
    assert q.checkpoint_write_bytes_per_s == pytest.approx(978_356_649_984 / 679.062, rel=1e-5)
    # blocking saves with no storage: Young's interval for storage sized to its own 2 % budget,
    # sqrt(2 x 0.02 T x M) = T -> T = 2 x 0.02 x 2,850,581.4 = 114,023.3 s (31.7 h)
    s = calc.plan(p.scenario, checkpoint_mode="sync", checkpoint_interval_s="optimal")
    assert s.checkpoint_interval_used_s == pytest.approx(114_023.26, abs=0.01)


def test_young_daly_formula_text_agrees_with_its_value() -> None:
    import calc

    # issue 17: 70B on one EFS Elastic, 24 h MTBF. A blocking save takes 978,356,649,984 B /
    # 5 GiB/s (5,368,709,120 B/s) = 182.23 s = 3.04 min; sqrt(2 x 182.23 x 86,400) = 5611.6 s = 93.5 min.
    p = calc.plan(
        "mlperf-checkpoint-llama3-70b",
        storage="aws-efs-elastic",
        storage_units=1,
        mtbf_s="24 h",
        checkpoint_mode="sync",
    )
    assert p.young_daly_interval_s == pytest.approx(5611.58, abs=0.05)
    text = p.explain()
    line = text[text.index("young_daly_interval_s =") :].splitlines()
    assert line[1].strip() == "= sqrt(2 x 3.04 min x 24 h)"
    assert line[2].strip() == "= 93.53 min"


def test_8b_restore_on_a_stated_storage() -> None:
    import calc

    # 8B, 8 ZeRO-3 ranks on one node: 112,423,657,472 B, 14,052,957,184 B per rank. Storage 10 GB/s,
    # node link 50 GB/s -> 6.25 GB/s per rank.
    # load 2 GB/s: max(112.42e9 / 10e9 = 11.24 s, 14.05e9 / min(6.25, 2) GB/s = 7.03 s) = 11.24 s
    kw = {"storage_bytes_per_s": "10 GB/s", "node_network_bytes_per_s": "50 GB/s"}
    p = calc.plan("mlperf-checkpoint-llama3-8b", checkpoint_load_bytes_per_s="2 GB/s", **kw)
    assert p.checkpoint_restore_s == pytest.approx(11.2423657472, rel=1e-9)
    # load 1 GB/s: the rank binds, 14.05e9 / 1e9 = 14.05 s
    p = calc.plan("mlperf-checkpoint-llama3-8b", checkpoint_load_bytes_per_s="1 GB/s", **kw)
    assert p.checkpoint_restore_s == pytest.approx(14.052957184, rel=1e-9)
    assert p.checkpoint_restore_bytes == pytest.approx(112_423_657_472, rel=1e-12)


def test_goodput_70b_async_every_30_min() -> None:
    import calc

    # 70B async every 30 min, no storage (the drain takes the whole 1800 s), MTBF 24 h, load 1 GB/s:
    # restore 15,286,822,656 B / 1e9 = 15.29 s; lost = 15.29 + 1800 / 2 + 1800 = 2715.29 s
    # goodput = 1 - 0.242648 / 1800 - 2715.29 / 86,400 = 1 - 0.0001348 - 0.0314269 = 0.968438
    p = calc.plan("mlperf-checkpoint-llama3-70b", mtbf_s="24 h", checkpoint_load_bytes_per_s="1 GB/s")
    assert p.checkpoint_restore_s == pytest.approx(15.286822656, rel=1e-9)
    assert p.checkpoint_lost_per_failure_s == pytest.approx(2715.286822656, rel=1e-9)
    assert p.goodput == pytest.approx(0.968438, abs=1e-6)
    assert p.checkpoint_host_ram_bytes == pytest.approx(8 * 15_286_822_656, rel=1e-12)  # 8 ranks a node


def test_mlperf_checkpoint_presets_store_no_corpus() -> None:
    import calc

    # The benchmark never reads a dataset: only the kept checkpoints need capacity.
    for size in ("8b", "70b", "405b", "1t"):
        p = calc.plan(f"mlperf-checkpoint-llama3-{size}")
        assert p.scenario.dataset_examples == 0 and p.dataset_bytes == 0, size
        assert p.read_bytes_per_s == 0, size


def test_pretraining_preset_sizes_data_by_tokens_read_and_keeps_milestones() -> None:
    import calc

    p = calc.plan("llama3-8b-pretrain-8xh100")
    # 16,620,000 sequences x 8192 int32 tokens x 4 B = 544.6e9 B, not the 60 TB corpus
    assert p.dataset_bytes == 16_620_000 * 32_768
    # 2 recent + floor(30 d / 24 h) = 30 milestones + 1 in flight = 33 x 112,423,657,472 B = 3.710e12 B
    assert p.checkpoint_milestones == 30
    assert p.checkpoint_capacity_bytes == pytest.approx(33 * 112_423_657_472, rel=1e-12)
    # its checkpoints sit on the node's own NVMe: not durable, and the plan says so
    assert p.checkpoint_durable == 0 and any("die with the node" in w for w in p.warnings)


def test_auto_mode_follows_the_sharding() -> None:
    import calc

    # plain DDP (ZeRO 0, no model parallelism) saves blocking; ZeRO-3 saves asynchronously
    base: dict[str, Any] = {"gpu": "H100-SXM", "model": "gpt_7b", "precision": "bf16"}
    base |= {"state_shards": 8, "gpus_per_job": 8}
    assert calc.plan(**base, zero_stage=0).checkpoint_async == 0.0
    assert calc.plan(**base, zero_stage=3).checkpoint_async == 1.0
    assert calc.plan(**base, zero_stage=3, checkpoint_mode="sync").checkpoint_async == 0.0


def test_bad_checkpoint_inputs_name_the_field() -> None:
    import calc

    with pytest.raises(calc.InputError, match="run_length_s"):
        calc.plan("mlperf-checkpoint-llama3-8b", checkpoint_milestone_interval_s="24 h")
    with pytest.raises(calc.InputError, match="checkpoint_interval_s"):
        calc.plan("mlperf-checkpoint-llama3-8b", checkpoint_interval_s="sometimes")
    with pytest.raises(calc.InputError, match="checkpoint_load_bytes_per_s"):
        calc.plan("mlperf-checkpoint-llama3-8b", checkpoint_load_bytes_per_s="0 GB/s")


def test_checkpoint_chart_marks_the_optimum_where_goodput_peaks() -> None:
    import calc
    from calc import plots

    # the grid's best goodput sits next to the Young-Daly interval (679 s for 70B, see above)
    p = calc.plan("mlperf-checkpoint-llama3-70b")
    fig = plots.checkpoint_interval_chart(p)
    minutes, good = np.asarray(fig.data[0].x), np.asarray(fig.data[0].y)
    assert minutes[good.argmax()] * 60 == pytest.approx(679.06, rel=0.05)
    assert "optimum" in fig.layout.title.text and "goodput" in fig.layout.title.text  # plain words (issue 31)


def test_goodput_of_zero_is_not_mistaken_for_no_checkpoints() -> None:
    import calc

    # 70B blocking saves on one EFS (182 s each) every 3 min: the stall alone is 182 / 180 > 1,
    # so goodput is 0, and it says so rather than "no checkpoints"
    p = calc.plan(
        "mlperf-checkpoint-llama3-70b",
        storage="aws-efs-elastic",
        storage_units=1,
        checkpoint_mode="sync",
        checkpoint_interval_s="3 min",
    )
    assert p.goodput == 0 and p.formatted("goodput").startswith("0.00 %")
    assert "no checkpoints" in calc.plan("beast-imagenet-4xv100").formatted("goodput")


def test_checkpoint_is_sized_from_the_model_state_typed() -> None:
    # Before: a typed model state left the checkpoint at the preset model's size. 8 GiB per GPU
    # on 64 GPUs holding a piece, with mixed-precision Adam's 16 B per parameter in training:
    # 8 x 2^30 x 64 / 16 = 34,359,738,368 parameters; saved at 2 + 12 B each = 481,036,337,152 B.
    import calc

    p = calc.plan("mlperf-checkpoint-llama3-70b", model_state_bytes="8 GiB")
    assert p.checkpoint_bytes == pytest.approx(34_359_738_368 * 14, rel=1e-12)
    assert "typed model state" in p.sources["checkpoint_bytes"]


# ------------------------------------------- issue 17: mutants of calc/checkpoint.py that survived
# benchmarks/mutation.py calc/checkpoint.py listed changes no test above noticed: defaults, the
# edges of each accepted range, vectorised inputs, and errors naming the wrong field. Each test
# below fails for one of them; the values are worked by hand in the comments.


def test_default_zero_stage_is_plain_ddp() -> None:
    # no zero_stage given: plain DDP (stage 0), one replica writes. TP 8 x DP 8: 912 GiB / 8 =
    # 114 GiB on 8 ranks (stage 1 would be 2/14 x 912 / 8 + 12/14 x 912 / 64 = 16.29 + 12.21 GiB).
    per_rank, ranks = ck.bytes_per_rank(C70, 8, 8)
    assert per_rank == 114 * GIB and ranks == 8


def test_a_single_data_parallel_replica_writes_everything() -> None:
    # DP 1 is the smallest layout, not an error: ZeRO-3 over 1 rank = the whole 800 B on 1 rank
    per_rank, ranks = ck.bytes_per_rank(800.0, 1, zero_stage=3)
    assert per_rank == 800.0 and ranks == 1
    # vectorised over DP [1, 4]: 800 / 1 = 800 on 1 rank, 800 / 4 = 200 on 4 ranks
    per_rank, ranks = ck.bytes_per_rank(800.0, np.array([1.0, 4.0]), zero_stage=3)
    assert np.asarray(per_rank).tolist() == [800.0, 200.0] and np.asarray(ranks).tolist() == [1.0, 4.0]


def test_zero2_writes_what_zero1_writes() -> None:
    # ZeRO-2 also shards gradients, which a checkpoint does not hold: same as stage 1 above,
    # 2e9 / 256 + 12e9 / 512 = 7.8125e6 + 23.4375e6 = 31.25e6 B on 512 ranks
    per_rank, ranks = ck.bytes_per_rank(14e9, 2, 8, 32, zero_stage=2)
    assert per_rank == pytest.approx(31.25e6) and ranks == 512


def test_weight_fraction_edges() -> None:
    # ZeRO-1, 1400 B over DP 2: all optimizer state (fraction 0) is sharded, 1400 / 2 = 700 B;
    # weights only (fraction 1): replica 0 writes all 1400 B
    assert ck.bytes_per_rank(1400.0, 2, zero_stage=1, weight_fraction=0.0)[0] == 700.0
    assert ck.bytes_per_rank(1400.0, 2, zero_stage=1, weight_fraction=1.0)[0] == 1400.0
    # 2/14 of 1400 = 200 B of weights whole + 1200 / 2 = 600 B of optimizer = 800 B
    assert ck.bytes_per_rank(1400.0, 2, zero_stage=1)[0] == pytest.approx(800.0)
    for bad in (1.5, -0.1):
        with pytest.raises(InputError) as e:
            ck.bytes_per_rank(1400.0, 2, zero_stage=1, weight_fraction=bad)
        assert e.value.field == "weight_fraction" and e.value.message.endswith("accepted: 0 to 1")


def test_save_time_storage_or_one_rank_binds() -> None:
    # 979,252,543,488 B at 100e9 B/s aggregate = 9.79 s; over 64 ZeRO-3 ranks each writes its shard,
    # 979,252,543,488 / 64 = 15,300,820,992 B, at 1e9 B/s = 15.30 s, which binds
    assert ck.save_time_s(C70, 100e9, C70 / 64, 1e9) == pytest.approx(15.300820992)
    # at 2e9 B/s per rank, 7.65 s: the storage's 9.79 s binds
    assert ck.save_time_s(C70, 100e9, C70 / 64, 2e9) == pytest.approx(9.79252543488)
    # one rank writes it all: 979.25e9 / 1e9 = 979.25 s
    assert ck.save_time_s(C70, 100e9, C70, 1e9) == pytest.approx(979.252543488)


def test_save_time_is_set_by_the_busiest_rank_llama3_405b() -> None:
    # Llama 3 405B pre-training (paper section 3.3): 16,384 GPUs, TP 8, PP 16, DP 128, ZeRO-1.
    # 405.85e9 params x 14 B = 5,681.9e9 B. Average shard: 5,681.9e9 / 16,384 = 0.3468e9 B;
    # busiest (replica 0): weights 5,681.9e9 x 2/14 / 128 = 6.3414e9 + optimizer
    # 5,681.9e9 x 12/14 / 16,384 = 0.29725e9 -> 6.6387e9 B, 19.1x the average.
    c = 405.85e9 * 14
    busiest, ranks = ck.bytes_per_rank(c, 128, 8, 16, 1)
    assert ranks == 16_384
    assert busiest == pytest.approx(c * 2 / 14 / 128 + c * 12 / 14 / 16_384)
    assert busiest / (c / 16_384) == pytest.approx(19.14, rel=1e-3)
    # At 12.5 GB/s per rank (one 100 Gb/s share) and an unlimited store: 6.6387e9 / 12.5e9 = 0.531 s,
    # where the average shard would take 0.3468e9 / 12.5e9 = 28 ms.
    assert ck.save_time_s(c, np.inf, busiest, 12.5e9) == pytest.approx(0.5311, rel=1e-3)
    assert ck.save_time_s(c, np.inf, c / 16_384, 12.5e9) == pytest.approx(0.02774, rel=1e-3)


def test_job_mtbf_of_one_gpu_and_vectorised_rates() -> None:
    # one GPU: 54 d x 86,400 s x 16,384 / 419 = 76,441,190,400 / 419 = 182,437,208.6 s (5.8 years)
    assert ck.job_mtbf_s(1) == pytest.approx(182_437_208.59, abs=0.01)
    # 64 GPUs at the Llama 3 rate and at twice it: 2,850,581.38 s (above) and half that, 1,425,290.69 s
    rate = ck.INTERRUPTIONS_PER_GPU_S
    assert np.asarray(ck.job_mtbf_s(64, np.array([rate, 2 * rate]))) == pytest.approx([2_850_581.38, 1_425_290.69])


def test_young_daly_vectorised_over_short_mtbfs() -> None:
    # save 2 s: MTBF 0.25 s -> sqrt(2 x 2 x 0.25) = 1 s; MTBF 24 h -> sqrt(345,600) = 587.88 s
    got = ck.young_daly_interval_s(2.0, np.array([0.25, 86400.0]))
    assert np.asarray(got) == pytest.approx([1.0, 587.88], abs=0.01)


def test_lost_per_failure_without_lag() -> None:
    # no durability lag by default: restore 10 s + half of a 100 s interval = 60 s
    assert ck.lost_per_failure_s(10.0, 100.0) == 60.0


def test_whole_numbers_do_not_wrap_around() -> None:
    # Python ints are read as floats: 10^18 parameters x (2 + 12) B = 1.4e19 B, above int64's
    # 9.22e18 (as int64 it would wrap to a negative size)
    assert ck.checkpoint_bytes(10**18, 2, 12) == pytest.approx(1.4e19)


def test_rates_below_one_byte_per_second_are_still_rates() -> None:
    # 1 B over a 0.5 B/s link: 2 s; vectorised [0.5, 2] B/s: [2, 0.5] s
    assert ck.host_copy_s(1.0, 0.5) == 2.0
    assert np.asarray(ck.host_copy_s(1.0, np.array([0.5, 2.0]))).tolist() == [2.0, 0.5]


_LINK = "host_link_bytes_per_s"


@pytest.mark.parametrize(
    ("call", "field", "accepted"),
    [
        # every argument of every formula, refused by its own name with what is accepted
        (lambda: ck.llama_params(0, 8, 1, 8, 1, 1), "vocab_size", "more than 0"),
        (lambda: ck.llama_params(8, 0, 1, 8, 1, 1), "hidden_size", "more than 0"),
        (lambda: ck.llama_params(8, 8, -1, 8, 1, 1), "num_layers", "0 or more"),
        (lambda: ck.llama_params(8, 8, 1, 0, 1, 1), "ffn_hidden_size", "more than 0"),
        (lambda: ck.llama_params(8, 8, 1, 8, 0, 1), "num_attention_heads", "more than 0"),
        (lambda: ck.llama_params(8, 8, 1, 8, 1, 0), "num_kv_heads", "more than 0"),
        (lambda: ck.checkpoint_bytes(float("nan")), "params", "a finite number"),
        (lambda: ck.checkpoint_bytes(np.array([1.0, np.inf])), "params", "a finite number"),
        (lambda: ck.checkpoint_bytes(1.0, -2.0), "weight_bytes_per_param", "0 or more"),
        (lambda: ck.checkpoint_bytes(1.0, 2.0, -12.0), "optimizer_bytes_per_param", "0 or more"),
        (lambda: ck.bytes_per_rank(-1.0, 8), "checkpoint_bytes", "0 or more"),
        (lambda: ck.bytes_per_rank(C70, 0.5), "data_parallel", "1 or more"),
        (lambda: ck.bytes_per_rank(C70, 8, 0.0), "tensor_parallel", "1 or more"),
        (lambda: ck.bytes_per_rank(C70, 8, 1, 0.0), "pipeline_parallel", "1 or more"),
        (lambda: ck.bytes_per_rank(C70, 8, zero_stage=float("nan")), "zero_stage", "a finite number"),
        (lambda: ck.bytes_per_rank(C70, 8, zero_stage=1.5), "zero_stage", "0, 1, 2 or 3"),
        (lambda: ck.bytes_per_rank(C70, 8, weight_fraction=float("inf")), "weight_fraction", "a finite number"),
        (lambda: ck.sync_write_bytes_per_s(-1.0, 1800, 0.02), "checkpoint_bytes", "0 or more"),
        (lambda: ck.sync_write_bytes_per_s(C70, 0.0, 0.02), "interval_s", "more than 0"),
        (lambda: ck.sync_write_bytes_per_s(C70, np.array([1800.0, 0.0]), 0.02), "interval_s", "more than 0"),
        (lambda: ck.sync_write_bytes_per_s(C70, 1800, float("nan")), "stall_fraction", "a finite number"),
        (lambda: ck.sync_write_bytes_per_s(C70, 1800, 1.5), "stall_fraction", "more than 0, at most 1"),
        (lambda: ck.async_host_ram_bytes(-1.0), "bytes_per_node", "0 or more"),
        (lambda: ck.async_host_ram_bytes(1.0, 0.5), "copies", "1 or more"),
        (lambda: ck.async_blocking_s(-1.0, 1e9), "bytes_per_node", "0 or more"),
        (lambda: ck.async_blocking_s(1.0, 0.0), "host_copy_bytes_per_s", "more than 0"),
        (lambda: ck.host_copy_s(-1.0, 1e9), "rank_bytes", "0 or more"),
        (lambda: ck.host_copy_s(1.0, 0.0), _LINK, "more than 0 (inf = unlimited)"),
        (lambda: ck.host_copy_s(1.0, np.array([1.0, 0.0])), _LINK, "more than 0 (inf = unlimited)"),
        (lambda: ck.save_time_s(-1.0, 1e9, 8, 1e9), "checkpoint_bytes", "0 or more"),
        (lambda: ck.save_time_s(C70, 0.0, 8, 1e9), "write_bytes_per_s", "more than 0 (inf = unlimited)"),
        (lambda: ck.save_time_s(C70, 1e9, -1.0, 1e9), "shard_bytes", "0 or more"),
        (lambda: ck.save_time_s(C70, 1e9, 8, 0.0), "per_rank_write_bytes_per_s", "more than 0 (inf = unlimited)"),
        (lambda: ck.restore_time_s(-1.0, 1e9, 1.0, 1e9), "checkpoint_bytes", "0 or more"),
        (lambda: ck.restore_time_s(C70, 1e9, 1.0, 0.0), "per_rank_read_bytes_per_s", "more than 0 (inf = unlimited)"),
        (lambda: ck.restore_time_s(C70, 1e9, -1.0, 1e9), "shard_bytes", "0 or more"),
        (lambda: ck.blocking_s(-1.0, 1800, 0.0, 0.0), "checkpoint_write_s", "0 or more"),
        (lambda: ck.blocking_s(1.0, 0.0, 0.0, 0.0), "checkpoint_interval_s", "more than 0 (inf = unlimited)"),
        (lambda: ck.blocking_s(1.0, 1800, -1.0, 1.0), "checkpoint_host_copy_s", "0 or more"),
        (lambda: ck.stall_share(-1.0, 1800), "checkpoint_blocking_s", "0 or more"),
        (lambda: ck.stall_share(1.0, 0.0), "checkpoint_interval_s", "more than 0 (inf = unlimited)"),
        (lambda: ck.retained_capacity_bytes(-1.0, 2), "checkpoint_bytes", "0 or more"),
        (lambda: ck.retained_capacity_bytes(C70, 2, -1.0), "milestones", "0 or more"),
        (lambda: ck.milestone_count(-1.0, 86400), "run_length_s", "0 or more"),
        (lambda: ck.job_mtbf_s(64, 0.0), "interruptions_per_gpu_s", "more than 0"),
        (lambda: ck.job_mtbf_s(0.5), "gpus", "1 or more"),
        (lambda: ck.failures_per_month(86400, -1.0), "month_s", "0 or more"),
        (lambda: ck.young_daly_interval_s(60, 86400, -1.0), "lag_per_interval", "0 or more"),
        (lambda: ck.lost_per_failure_s(-1.0, 1800), "restore_s", "0 or more"),
        (lambda: ck.lost_per_failure_s(1.0, -1.0), "interval_s", "0 or more"),
        (lambda: ck.lost_per_failure_s(1.0, 1800, -1.0), "lag_s", "0 or more"),
        (lambda: ck.goodput(-0.1, 1.0, 86400), "stall_share", "0 or more"),
        (lambda: ck.goodput(0.0, -1.0, 86400), "lost_per_failure_s", "0 or more"),
    ],
)
def test_each_argument_is_refused_by_its_own_name(call, field, accepted) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as e:
        call()
    assert e.value.field == field
    assert e.value.message.endswith(f"accepted: {accepted}"), e.value.message


# ------------------------------------------------------------------ bursts (issue 28)

C1T = 1_183_035_102_480 * 14  # Llama 3 1T, MLPerf layout: 16,562,491,434,720 B


def test_drain_within_its_target_is_twice_the_average() -> None:
    # 16,562,491,434,720 B every 1,800 s drained in half the interval: / 900 s = 18.40 GB/s,
    # twice the 9.20 GB/s average the plan used to size for
    assert ck.drain_bytes_per_s(C1T, 1800.0) == pytest.approx(C1T / 900.0)
    assert ck.drain_bytes_per_s(C1T, 1800.0) == pytest.approx(18.402768e9, rel=1e-6)
    assert ck.drain_bytes_per_s(C1T, 1800.0, 1.0) == pytest.approx(ck.async_drain_bytes_per_s(C1T, 1800.0))
    for bad in (0.0, 1.5):
        with pytest.raises(InputError) as e:
            ck.drain_bytes_per_s(C1T, 1800.0, bad)
        assert e.value.field == "drain_target"


def test_restore_budget_and_read_burst() -> None:
    # Llama 3 at 16,384 GPUs: MTBF 54 d / 419 = 11,134.6 s; 2 % of it = 222.7 s
    mtbf = 54 * 86400 / 419
    assert ck.restore_budget_s(0.02, mtbf) == pytest.approx(222.69, rel=1e-4)
    # 1T: 1,024 ranks each read the busiest shard, 18,484,923,476.25 B -> 18.93e12 B; within
    # 3,563.2 s (2 % of the 1,024-GPU MTBF, 178,161 s): 18.93e12 / 3,563.2 = 5.31 GB/s
    restore = 18_484_923_476.25 * 1024
    assert ck.restore_read_bytes_per_s(restore, 0.02 * 178_161.34) == pytest.approx(5.3122e9, rel=1e-4)
    # per node, 128 nodes of 8 GPUs: 41.5 MB/s each
    assert ck.per_node(5.3122e9, 128) == pytest.approx(41.50e6, rel=1e-3)
    with pytest.raises(InputError) as e:
        ck.per_node(1.0, 0.0)
    assert e.value.field == "nodes"


def test_restart_target_bounds_the_restore_budget() -> None:
    # min(target, stall fraction x MTBF). An 8-GPU job: MTBF = 54 d x 16,384 / 419 / 8 =
    # 22,804,651 s (263.9 d), 2 % = 456,093 s (5.3 d): the 300 s target binds.
    mtbf8 = 54 * 86400 * 16384 / 419 / 8
    assert ck.restore_budget_s(0.02, mtbf8) == 300.0
    # Llama 3 at 16,384 GPUs: 2 % of 11,134.6 s = 222.7 s, under 300 s: the MTBF share binds.
    assert ck.restore_budget_s(0.02, 54 * 86400 / 419) == pytest.approx(222.69, rel=1e-4)
    # The boundary: 2 % x MTBF = 300 s at MTBF 15,000 s; either side the smaller term wins.
    assert ck.restore_budget_s(0.02, 15_000.0) == pytest.approx(300.0)
    assert ck.restore_budget_s(0.02, 14_000.0) == pytest.approx(280.0)
    assert ck.restore_budget_s(0.02, 16_000.0, 600.0) == pytest.approx(320.0)
    for bad in (0.0, -5.0, np.nan, np.inf):
        with pytest.raises(InputError) as e:
            ck.restore_budget_s(0.02, 15_000.0, bad)
        assert e.value.field == "restore_target_s"


def test_restart_target_is_an_input_with_a_default_of_five_minutes() -> None:
    import calc

    # The 8B job (8 GPUs, 112.42e9 B state: 8,030,261,248 x 14 B) restores in 300 s by default:
    # 112,423,657,472 / 300 = 374.7 MB/s (before: within 2 % of 263.9 d, 246 kB/s).
    p = calc.plan("mlperf-checkpoint-llama3-8b")
    assert p.restore_budget_s == 300.0
    assert p.restore_read_bytes_per_s == pytest.approx(8_030_261_248 * 14 / 300, rel=1e-9)
    for bad in (None, "0 s", "soon"):
        with pytest.raises(InputError) as e:
            calc.plan("mlperf-checkpoint-llama3-8b", restore_target_s=bad)
        assert e.value.field == "restore_target_s"


def test_restore_on_the_store_bought_1t() -> None:
    restore = 18_484_923_476.25 * 1024  # 18.93e12 B
    # On 5 x nfs-25gbe (2.8 GB/s each = 14 GB/s): 18.93e12 / 14e9 = 1,352 s = 22.5 min (the plan
    # with no store said 24 s: each rank's 18.48 GB at 0.76 GB/s)
    t = ck.restore_on_store_s(restore, 5 * 2.8e9, 18_484_923_476.25, np.inf, 0.76e9)
    assert t == pytest.approx(1352.0, rel=1e-3)
    # On S3 (unlimited bandwidth here), 5,500 GET/s per prefix: 1,024 x ceil(18.48e9 / 16 MiB)
    # = 1,024 x 1,102 = 1,128,448 GETs -> 205.2 s, more than the ranks' own 24.3 s
    gets = ck.restore_requests(18_484_923_476.25, 1024, 16 * 2**20)
    assert gets == 1024 * 1102
    assert ck.restore_on_store_s(restore, np.inf, 18_484_923_476.25, np.inf, 0.76e9, gets, 5500) == pytest.approx(
        1_128_448 / 5500
    )
    # no request limit: the ranks' load rate binds, 18.48e9 / 0.76e9 = 24.32 s
    assert ck.restore_on_store_s(restore, np.inf, 18_484_923_476.25, np.inf, 0.76e9) == pytest.approx(24.3223, rel=1e-4)


def test_first_epoch_on_a_store_and_its_gpu_hours() -> None:
    # ViT-B/16 on 64 GPUs: 146.9 GB at GPU pace 12.63 GB/s = 11.63 s; from 2 mirrored HDDs
    # reading 2 x 285 MB/s = 570 MB/s: 146.9e9 / 570e6 = 257.7 s
    assert ck.first_epoch_s(146.9e9, 570e6, 146.9e9 / 12.63e9) == pytest.approx(257.72, rel=1e-4)
    assert ck.first_epoch_s(146.9e9, np.inf, 11.63) == pytest.approx(11.63)
    # (257.7 - 11.6) s x 64 GPUs once = 4.375 GPU-hours
    assert ck.idle_gpu_hours(257.72 - 11.63, 64) == pytest.approx(4.3749, rel=1e-4)
    # 1T: a 1,352 s restore x 1,024 GPUs x 14.55 failures a month (30 d / 178,161 s) = 5,595 GPU-h
    assert ck.idle_gpu_hours(1352.0, 1024, 30 * 86400 / 178_161.34) == pytest.approx(5595.4, rel=1e-3)


def test_plan_states_its_bursts_1t() -> None:
    import calc

    p = calc.plan("mlperf-checkpoint-llama3-1t")
    # async every 1,800 s (the preset), drained within half: 16.56e12 / 900 = 18.40 GB/s
    assert p.checkpoint_drain_bytes_per_s == pytest.approx(C1T / 900, rel=1e-9)
    assert p.checkpoint_save_burst_bytes_per_s == pytest.approx(C1T / 900, rel=1e-9)
    assert p.checkpoint_save_burst_node_bytes_per_s == pytest.approx(C1T / 900 / 128, rel=1e-9)
    # Issue 38: the 5 min restart target bounds the budget. 2 % of the 1,024-GPU MTBF
    # (1 / (419 / (54 d x 16,384) x 1,024) = 178,161 s) is 3,563 s; min(300, 3,563) = 300 s, so the
    # restore read is 18.93e12 B / 300 s = 63.1 GB/s (it was 5.31 GB/s within 3,563 s).
    mtbf = 54 * 86400 * 16384 / 419 / 1024
    assert 0.02 * mtbf == pytest.approx(3563.23, rel=1e-5)
    assert p.restore_budget_s == 300.0
    assert p.restore_read_bytes_per_s == pytest.approx(18_484_923_476.25 * 1024 / 300, rel=1e-9)
    # a typed restore target sets the budget below the MTBF share: 10 min -> 18.93e12 / 600 = 31.5 GB/s
    q = calc.plan("mlperf-checkpoint-llama3-1t", restore_target_s="10 min", drain_target=0.25)
    assert q.restore_read_bytes_per_s == pytest.approx(18_484_923_476.25 * 1024 / 600, rel=1e-9)
    assert q.checkpoint_drain_bytes_per_s == pytest.approx(C1T / 450, rel=1e-9)
    # capacity: keep 2 + the one being written = 3 x 16.56e12
    assert p.checkpoint_capacity_bytes == pytest.approx(3 * C1T, rel=1e-9)


def test_a_save_beside_the_reads_by_hand() -> None:
    """Issue 37: one rule for how a save shares the store with the reads (the plan, the engine, a
    unit's busy share and the cluster call it). 385.7 MB/s of reads (the article's ResNet-50 job)."""
    # A blocking save stops training and its reads: the store carries the larger, 27 GB/s.
    assert ck.save_with_reads(385.7e6, 27e9, 0.0) == 27e9
    # An async drain runs beside them: 385.7 MB/s + 18.4 GB/s = 18.7857 GB/s.
    assert ck.save_with_reads(385.7e6, 18.4e9, 1.0) == pytest.approx(18.7857e9, rel=1e-12)
    # A sync save below the reads adds nothing (the boundary: the reads, not their sum 1.6 GB/s).
    assert ck.save_with_reads(1e9, 0.6e9, 0.0) == 1e9
    assert ck.save_with_reads(1e9, 0.6e9, 1.0) == pytest.approx(1.6e9, rel=1e-12)
    # No save: the reads in either mode; the same rule on a unit's busy shares (0.5 + 0.25).
    assert ck.save_with_reads(1e9, 0.0, 1.0) == ck.save_with_reads(1e9, 0.0, 0.0) == 1e9
    assert ck.save_with_reads(0.5, 0.25, True) == 0.75 and ck.save_with_reads(0.5, 0.25, False) == 0.5
    got = ck.save_with_reads(np.array([1e9, 1e9, 0.2e9]), np.array([0.6e9, 0.6e9, 3e9]), np.array([0.0, 1.0, 0.0]))
    assert got.tolist() == pytest.approx([1e9, 1.6e9, 3e9], rel=1e-12)
    # An unlimited rate stays unlimited (no storage: the plan asks for nothing finite); a negative or
    # NaN one is refused, naming it.
    assert ck.save_with_reads(math.inf, 1.0, 0.0) == math.inf and ck.save_with_reads(1.0, math.inf, 1.0) == math.inf
    for bad, field, says in (
        ((-1.0, 0.0, 0.0), "read", "-1 is out of range; accepted: 0 or more"),
        ((0.0, -2.0, 1.0), "save", "-2 is out of range; accepted: 0 or more"),
        ((0.0, math.nan, 1.0), "save", "nan is out of range; accepted: 0 or more"),
    ):
        with pytest.raises(InputError) as e:
            ck.save_with_reads(*bad)
        assert (e.value.field, e.value.message) == (field, says)
