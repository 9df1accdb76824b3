"""Demand (calc/demand.py, docs/model.md section 5): each formula called directly, values by hand.

Figures from "Feeding the beast" (4 V100s at n = 128, t = 0.087 s, 64 KiB JPEGs) and MLPerf
Storage's 3D U-Net (batch 7, 0.323 s per step on an H100, 146,600,628 B per example), both in
docs/model.md section 11. NumPy warnings are errors here: 0 and inf must come out without one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from calc import demand as d

pytestmark = pytest.mark.filterwarnings("error")

KIB = 1024


def test_gpu_rate_is_batch_over_step_time_times_scaling() -> None:
    # The article's V100: 128 / 0.087 s = 1,471.26 samples/s; at 90 % scaling 1,324.14
    assert d.gpu_samples_per_s(128, 0.087) == pytest.approx(1471.2643678, rel=1e-9)
    assert d.gpu_samples_per_s(128, 0.087, 0.9) == pytest.approx(1324.1379310, rel=1e-9)
    # 3D U-Net on an H100: 7 / 0.323 = 21.672 samples/s
    assert d.gpu_samples_per_s(7, 0.323, 1.0) == pytest.approx(21.671827, rel=1e-7)


def test_per_gpu_demand_is_the_rate_at_the_target_utilisation() -> None:
    # MLPerf's 90 % AU: 21.672 x 0.9 = 19.505 samples/s to feed each H100
    assert d.per_gpu_demand(7 / 0.323, 0.9) == pytest.approx(19.504644, rel=1e-7)
    assert d.per_gpu_demand(1457.0, 1.0) == 1457.0


def test_samples_per_s_adds_every_gpu_of_every_job() -> None:
    # 1,471.26 per V100 x 4 = 5,885.06 samples/s (the article's figure)
    assert d.samples_per_s(512 / 0.087 / 4, 4) == pytest.approx(5885.0575, rel=1e-7)
    # 1,280 per GPU x 4 GPUs x 10 jobs = 51,200
    assert d.samples_per_s(1280.0, 4, 10) == 51200.0
    assert d.samples_per_s(1280.0) == 1280.0  # one GPU, one job by default


def test_request_size_of_files_and_shards() -> None:
    nan = math.nan
    # a file per example: the whole example in one read unless a smaller read size is given
    assert d.request_bytes(64 * KIB, 1, nan) == 64 * KIB
    assert d.request_bytes(100_000, 1, 16 * KIB) == 16 * KIB
    assert d.request_bytes(100_000, 1, 1024 * KIB) == 100_000  # never more than the file
    # a file per example larger than the 256 KiB shard default, no read size given: still one read of
    # the whole example (MLPerf 3D U-Net: 146,600,628 B), not 256 KiB pieces; at 1 MiB, 1 MiB reads
    assert d.request_bytes(146_600_628, 1, nan) == 146_600_628
    assert d.request_bytes(146_600_628, 1, 1024 * KIB) == 1024 * KIB
    # shards: the given read size, even above one example; else DLIO's 256 KiB
    assert d.request_bytes(64 * KIB, 1000, 1024 * KIB) == 1024 * KIB
    assert d.request_bytes(64 * KIB, 1000, nan) == 256 * KIB
    # two examples per file is a shard, but a read never spans two files: 2 x 64 KiB = 128 KiB
    assert d.request_bytes(64 * KIB, 2, nan) == 128 * KIB
    assert d.request_bytes(64 * KIB, 2, 1024 * KIB) == 128 * KIB
    assert d.DEFAULT_SHARD_REQUEST_BYTES == 262_144  # 256 KiB, dlio_benchmark's transfer_size


def test_request_size_is_vectorised() -> None:
    got = d.request_bytes(np.array([64.0 * KIB, 64.0 * KIB]), np.array([1.0, 1000.0]), np.array([math.nan, 16 * KIB]))
    assert list(np.asarray(got)) == [64 * KIB, 16 * KIB]


def test_read_iops_counts_whole_reads_per_file_and_fractions_in_shards() -> None:
    # one 64 KiB read per example: 5,885.06 reads/s
    assert d.read_iops(5885.06, 64 * KIB, 1, 64 * KIB) == pytest.approx(5885.06, rel=1e-12)
    # 100,000 B in 64 KiB reads: ceil(1.526) = 2 reads each
    assert d.read_iops(1000.0, 100_000, 1, 64 * KIB) == 2000.0
    # exactly two reads' worth: 2, not 3 (the 1e-9 guards against rounding up 2.0000000001)
    assert d.read_iops(1000.0, 128 * KIB, 1, 64 * KIB) == 2000.0
    # shards: 64 KiB examples in 256 KiB reads = 0.25 reads each; 20 % cached -> x 0.8
    assert d.read_iops(1000.0, 64 * KIB, 1000, 256 * KIB) == 250.0
    assert d.read_iops(1000.0, 64 * KIB, 1000, 256 * KIB, 0.8) == pytest.approx(200.0, rel=1e-12)
    # two examples per file is a shard: 100,000 / 65,536 = 1.526 reads, not rounded up
    assert d.read_iops(1000.0, 100_000, 2, 64 * KIB) == pytest.approx(1525.8789, rel=1e-7)


def test_read_bandwidth_is_rate_times_size_times_remote_share() -> None:
    # 512 / 0.087 = 5,885.0575 samples/s x 65,536 B = 385.6831 MB/s = 367.8 MiB/s (the article)
    assert d.read_bytes_per_s(512 / 0.087, 64 * KIB) == pytest.approx(385.6831e6, rel=1e-6)
    # 20 % cached locally: 80 % of it
    assert d.read_bytes_per_s(1000.0, 1e6, 0.8) == pytest.approx(8e8, rel=1e-12)


def test_first_epoch_and_node_bandwidth() -> None:
    # first epoch: no cache is warm, every example comes from storage: 1,000 x 1 MB
    assert d.first_epoch_read_bytes_per_s(1000.0, 1e6) == 1e9
    # one node of 8 H100s at MLPerf's 90 %: 7 / 0.323 x 0.9 = 19.50464 x 8 = 156.0372 samples/s
    # x 146,600,628 B = 22.8751 GB/s; half of it cached: 11.4376 GB/s
    per_gpu = 7 / 0.323 * 0.9
    assert d.node_read_bytes_per_s(per_gpu, 8, 146_600_628, 1.0) == pytest.approx(22.8751e9, rel=1e-5)
    assert d.node_read_bytes_per_s(per_gpu, 8, 146_600_628, 0.5) == pytest.approx(11.43757e9, rel=1e-5)


def test_outstanding_reads_is_littles_law() -> None:
    # 5,885 reads/s x 30 ms = 176.55 reads in flight
    assert d.outstanding_reads(5885.0, 0.030) == pytest.approx(176.55, rel=1e-12)


def test_file_opens_and_metadata_operations() -> None:
    # 25,600 small files/s, half from storage: 12,800 opens/s; in shards of 4,096: 3.125/s
    assert d.file_opens_per_s(25600.0, 1, 0.5) == 12800.0
    assert d.file_opens_per_s(25600.0, 4096, 0.5) == 3.125
    assert d.file_opens_per_s(25600.0, 4096) == 6.25
    # NFSv4: LOOKUP, OPEN, GETATTR, CLOSE per open: 51,200 x 4 = 204,800 ops/s
    assert d.metadata_ops_per_s(51200.0, d.METADATA_OPS_PER_OPEN["nfs"]) == 204_800.0
    assert d.metadata_ops_per_s(51200.0, d.METADATA_OPS_PER_OPEN["object"]) == 0.0


def test_latency_budget_is_one_step() -> None:
    assert d.latency_budget_s(0.087) == 0.087


def test_epoch_time() -> None:
    # ImageNet's 1,281,167 images at 1,457/s on each of 8 GPUs: 1,281,167 / 11,656 = 109.91 s
    assert d.epoch_time_s(1_281_167, 1457.0, 8) == pytest.approx(109.9148, rel=1e-6)
    # below one sample/s the time is still dataset / rate: 10 / (0.25 x 2) = 20 s
    assert d.epoch_time_s(10.0, 0.25, 2) == pytest.approx(20.0, rel=1e-12)
    # nothing runs: 0, with no division or overflow warning (1e9 / 1e-300 would overflow)
    assert d.epoch_time_s(1_281_167, 0.0, 8) == 0.0
    assert d.epoch_time_s(1e9, 0.0, 8) == 0.0
    got = d.epoch_time_s(np.array([100.0, 100.0]), np.array([0.0, 10.0]), 1)
    assert list(np.asarray(got)) == [0.0, 10.0]


@pytest.mark.parametrize(
    ("dataset", "free", "per_file", "cache", "hit"),
    [
        (84e9, 512e9, 1, 1, 1.0),  # ImageNet's 84 GB in 512 GB free: read once
        (84e9, 512e9, 1000, 1, 1.0),  # shards that fit are read once too
        (1000e9, 250e9, 1, 1, 0.25),  # random reads of files: free / dataset
        (1000e9, 250e9, 1000, 1, 0.0),  # shard scans larger than RAM: LRU evicts all
        (1000e9, 1000e9, 1000, 1, 1.0),  # exactly fits
        (84e9, 512e9, 1, 0, 0.0),  # page cache off (the articles, MLPerf)
        (0.0, 512e9, 1, 1, 1.0),  # no dataset: nothing to miss
        (0.0, 0.0, 1, 1, 1.0),  # nor with no RAM free (0 / 0 is not computed)
        (1.0, 0.5, 1, 1, 0.5),  # a 1-byte dataset is still a dataset
        (1000e9, 250e9, 2, 1, 0.0),  # two examples per file is a shard scan
        (1000e9, -5e9, 1, 1, 0.0),  # the loader took more than the RAM: nothing left
    ],
)
def test_page_cache_hit(dataset: float, free: float, per_file: float, cache: float, hit: float) -> None:
    assert d.page_cache_hit(dataset, free, per_file, cache) == hit


def test_remote_fraction() -> None:
    # 20 % cached locally and a 25 % page-cache hit: 0.8 x 0.75 = 0.6 of reads reach storage
    assert d.remote_fraction(0.2, 0.25) == pytest.approx(0.6, rel=1e-12)
    assert d.remote_fraction(0.0, 0.0) == 1.0


def test_p99_factor() -> None:
    # MLPerf 3D U-Net: cv = 68,341,808 / 146,600,628 = 0.46617 at batch 7:
    # 1 + 2.326 x 0.46617 / sqrt(7) = 1.40983
    assert d.p99_factor(0.46617, 7) == pytest.approx(1.40983, rel=1e-5)
    # batch 1: 1 + 2.326 x 0.5 = 2.163; a batch below 1 counts as 1
    assert d.p99_factor(0.5, 1) == pytest.approx(2.163, rel=1e-12)
    assert d.p99_factor(0.5, 0) == pytest.approx(2.163, rel=1e-12)
    assert d.p99_factor(0.0, 7) == 1.0  # equal sizes: no spread
    assert abs(d.P99_Z - 2.3263) < 5e-4  # the standard normal's 0.99 quantile, 2.32635


@pytest.mark.parametrize(
    ("fn", "args", "expected"),
    [
        # a sweep axis passed as integers must not wrap around in int64 (9.2e18):
        # 3e9 x 4e9 = 1.2e19 samples*bytes/s
        (d.read_bytes_per_s, (np.array([3_000_000_000]), np.array([4_000_000_000])), 1.2e19),
        (d.first_epoch_read_bytes_per_s, (np.array([3_000_000_000]), np.array([4_000_000_000])), 1.2e19),
        (d.samples_per_s, (np.array([3_000_000_000]), np.array([4_000_000_000])), 1.2e19),
        (d.per_gpu_demand, (np.array([3_000_000_000]), np.array([4_000_000_000])), 1.2e19),
        (d.node_read_bytes_per_s, (np.array([3_000_000_000]), 1, np.array([4_000_000_000]), 1), 1.2e19),
        (d.outstanding_reads, (np.array([3_000_000_000]), np.array([4_000_000_000])), 1.2e19),
        (d.metadata_ops_per_s, (np.array([3_000_000_000]), np.array([4_000_000_000])), 1.2e19),
        (d.read_iops, (np.array([3_000_000_000]), 1, 1, 1, np.array([4_000_000_000])), 1.2e19),
        (d.file_opens_per_s, (np.array([3_000_000_000]), 1, np.array([4_000_000_000])), 1.2e19),
        (d.epoch_time_s, (1.2e19, np.array([3_000_000_000]), np.array([4_000_000_000])), 1.0),
        # Scenario's largest shard, 1e9 examples (its examples_per_file limit) of 10 GB = 1e19 B, is far
        # above the 256 KiB default read: 262,144 B
        (d.request_bytes, (np.array([10_000_000_000]), np.array([1_000_000_000]), np.array([math.nan])), 262_144.0),
    ],
)
def test_integer_inputs_do_not_overflow(fn, args, expected) -> None:  # type: ignore[no-untyped-def]
    assert float(np.asarray(fn(*args))[0]) == pytest.approx(expected, rel=1e-12)


def test_run_length_from_tokens() -> None:
    # issue 39: 1e12 tokens at 10 sequences/s on each of 8 GPUs, 4,096 tokens each: 1e12 / 327,680 = 3,051,757.8 s
    assert d.run_length_s(1e12, 10.0, 8, 4096) == pytest.approx(3_051_757.8125, rel=1e-12)
    # the sequence is the second term: twice the tokens an example halves the run
    assert d.run_length_s(1e12, 10.0, 8, 8192) == pytest.approx(1_525_878.90625, rel=1e-12)
    assert d.run_length_s(1e12, 0.0, 8, 4096) == 0.0  # nothing runs
