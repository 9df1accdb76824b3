"""Checkpoints: size, per-rank share, write and drain bandwidth, restore, retention, interval.

Every expected value is worked by hand in the comment beside it.
"""

from __future__ import annotations

import math

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
    assert ck.restore_time_s(C70, 100e9, 64, 2e9) == pytest.approx(9.79252543488)
    assert ck.restore_time_s(C70, 100e9, 64, 1e9) == pytest.approx(15.300820992)


def test_retained_capacity() -> None:
    # keep 3 of 912 GiB = 2736 GiB
    assert ck.retained_capacity_bytes(C70, 3) == 2736 * GIB


def test_young_daly_60_s_write_24_h_mtbf() -> None:
    # sqrt(2 x 60 s x 86,400 s) = sqrt(10,368,000) = 3219.9 s, about 54 min
    assert ck.young_daly_interval_s(60, 86400) == pytest.approx(3219.94, abs=0.01)


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
        (lambda: ck.restore_time_s(C70, 0.0, 64, 1e9), "read_bytes_per_s"),
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
        zero_stage=3,
        storage_bytes_per_s="10 GB/s",
    )
    size = 6738415616 * 14
    assert p.checkpoint_bytes == pytest.approx(size, rel=1e-12)
    assert p.checkpoint_write_bytes_per_s == pytest.approx(size / 36, rel=1e-12)
    assert p.checkpoint_writing_ranks == 8 and p.checkpoint_rank_bytes == pytest.approx(size / 8, rel=1e-12)
    # restore: the storage's 10 GB/s binds (no per-node link given): 94.34 GB / 10 GB/s = 9.43 s
    assert p.checkpoint_restore_s == pytest.approx(size / 10e9, rel=1e-12)
    assert p.checkpoint_capacity_bytes == pytest.approx(2 * size, rel=1e-12)  # keep 2
    # the storage must take the burst: training (and its reads) wait during a blocking save
    assert p.storage_need_bytes_per_s == pytest.approx(max(p.read_bytes_per_s, size / 36), rel=1e-12)
    a = calc.plan(p.scenario, checkpoint_mode="async")
    assert a.checkpoint_write_bytes_per_s == pytest.approx(size / 1800, rel=1e-12)
    assert a.checkpoint_host_ram_bytes == pytest.approx(size, rel=1e-12)  # 8 shards, all on one node
    assert a.storage_need_bytes_per_s == pytest.approx(a.read_bytes_per_s + size / 1800, rel=1e-12)


def test_no_interval_means_no_checkpoint_writes() -> None:
    import calc

    p = calc.plan("beast-imagenet-4xv100")
    assert p.checkpoint_write_bytes_per_s == 0 and "no checkpoints" in p.formatted("checkpoint_write_bytes_per_s")
    assert p.storage_need_bytes_per_s == p.read_bytes_per_s


def test_parallel_layout_must_divide_the_gpus() -> None:
    import calc

    with pytest.raises(calc.InputError, match="tensor_parallel"):
        calc.plan(gpus_per_job=8, tensor_parallel=3)
