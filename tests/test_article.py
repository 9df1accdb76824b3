"""Every number of the articles (docs/model.md section 11) reproduced from its preset scenario.

Expected values are worked out by hand from the articles' inputs (see each comment), not
copied from calc's output.
"""

from __future__ import annotations

import math

import pytest

import calc

MiB = 2**20
GiB = 2**30


def test_resnet50_v100_batch_and_step_time() -> None:
    p = calc.plan("beast-resnet50-v100")
    # n_max = floor((16384 - 98) / 103) = floor(158.1) = 158 -> largest power of two 128
    assert p.max_batch_size == 158
    assert p.batch_size == 128
    # 128 x 103 + 98 = 13,282 MiB = 12.97 GiB; 256 would need 26,466 MiB > 16,384
    assert p.memory_used_bytes == 13282 * MiB
    assert p.memory_used_bytes / GiB == pytest.approx(12.97, abs=0.005)
    # t = 128 / 1457 = 0.08785 s (the article rounds to 0.087)
    assert p.step_time_s == pytest.approx(128 / 1457, rel=1e-12)
    assert p.step_time_s == pytest.approx(0.087, abs=0.001)
    assert p.step_method == "measured throughput"
    assert p.samples_per_s == pytest.approx(1457, rel=1e-12)
    assert p.latency_budget_s == pytest.approx(0.0879, abs=5e-5)


def test_article_flop_arithmetic_gives_1750_per_second() -> None:
    # The article: 7 TFLOPS / 4 GFLOPs = 1,750 img/s (erratum 3: forward MACs over an FP64 peak).
    p = calc.plan(
        "beast-resnet50-v100",
        samples_per_s_per_gpu=None,
        batch_size=128,
        forward_flops_per_example="4 GFLOPs",
        train_flops_multiplier=1,
        peak_flops_per_s="7 TFLOPS",
        efficiency=1,
        step_model="flops",
    )
    assert p.step_method == "model"
    assert p.gpu_samples_per_s == pytest.approx(1750, rel=1e-12)


def test_resnet152_v100() -> None:
    p = calc.plan("beast-resnet152-v100")
    # floor((16384 - 209) / 219) = floor(73.86) = 73 -> 64
    assert p.max_batch_size == 73
    assert p.batch_size == 64
    # "the same t": 64 / 728.5 = 0.08785 s, ~730 img/s
    assert p.step_time_s == pytest.approx(128 / 1457, rel=1e-12)
    assert p.samples_per_s == pytest.approx(730, abs=2)


def test_imagenet_4xv100_iops_and_bandwidth() -> None:
    p = calc.plan("beast-imagenet-4xv100")
    # 4 x 128 / 0.087 = 5,885.06 reads/s
    assert p.samples_per_s == pytest.approx(512 / 0.087, rel=1e-12)
    assert round(p.read_iops) == 5885
    # x 64 KiB = 385.7 MB/s = 367.8 MiB/s
    assert p.read_bytes_per_s / MiB == pytest.approx(367.8, abs=0.05)
    # With the unrounded t = 128/1457 s: 4 x 1457 = 5,828 reads/s
    q = calc.plan("beast-imagenet-4xv100", step_time_s=None, samples_per_s_per_gpu=1457)
    assert q.read_iops == pytest.approx(5828, rel=1e-12)


@pytest.mark.parametrize(("jobs", "iops", "mb_per_s"), [(5, 640, 320), (10, 1280, 640)])
def test_nfs_shop(jobs: int, iops: float, mb_per_s: float) -> None:
    # jobs x 4 GPUs x 64 / 2 s; x 500 kB. The article's 600 MB/s-1.28 GB/s is erratum 1.
    p = calc.plan("beast-nfs-shop", jobs=jobs)
    assert p.read_iops == pytest.approx(iops, rel=1e-12)
    assert p.read_bytes_per_s == pytest.approx(mb_per_s * 1e6, rel=1e-12)


@pytest.mark.parametrize(("jobs", "iops", "gb_per_s"), [(5, 25600, 1.678), (10, 51200, 3.355)])
def test_small_files(jobs: int, iops: float, gb_per_s: float) -> None:
    # jobs x 4 x 256 / 0.2 s; x 65,536 B -> 1.68 / 3.36 GB/s (the article: 1.6-3.2)
    p = calc.plan("beast-small-files", jobs=jobs)
    assert p.read_iops == pytest.approx(iops, rel=1e-12)
    assert p.read_bytes_per_s / 1e9 == pytest.approx(gb_per_s, abs=0.001)


def test_cityscapes_worker_ram() -> None:
    p = calc.plan("efficient-pytorch-cityscapes")
    # 32 x (512*512*3*4 + 512*512*8) = 100,663,296 + 67,108,864
    assert p.batch_bytes == 167_772_160
    assert p.worker_ram_bytes == 8 * 167_772_160
    assert p.worker_ram_bytes / 1e9 == pytest.approx(1.34, abs=0.005)
    assert calc.plan("efficient-pytorch-cityscapes", num_workers=64).worker_ram_bytes / 1e9 == pytest.approx(
        10.7, abs=0.05
    )


def test_cityscapes_uint8_is_five_times_smaller() -> None:
    p = calc.plan("efficient-pytorch-cityscapes-uint8")
    assert p.batch_bytes == 33_554_432
    assert calc.plan("efficient-pytorch-cityscapes").batch_bytes / p.batch_bytes == 5


def test_3d_volumes_worker_ram() -> None:
    p = calc.plan("efficient-pytorch-3d")
    assert p.example_tensor_bytes == 512**3 == 134_217_728
    assert p.batch_bytes / 1e9 == pytest.approx(4.29, abs=0.005)
    assert p.worker_ram_bytes / 1e9 == pytest.approx(34.4, abs=0.05)


@pytest.mark.parametrize(
    ("name", "batch", "ct", "au", "mib_full", "mib_au"),
    [
        # 7 / 0.323 = 21.672 samples/s x 146,600,628 B / 2^20 = 3,029.9 MiB/s; x 0.9 = 2,726.9
        ("mlperf-unet3d-h100", 7, 0.323, 0.9, 3029.9, 2726.9),
        # 7 / 0.636 = 11.006 x 146,600,628 / 2^20 = 1,538.8; x 0.9 = 1,384.9
        ("mlperf-unet3d-a100", 7, 0.636, 0.9, 1538.8, 1384.9),
        # 400 / 0.224 = 1,785.7 x 114,660.07 / 2^20 = 195.3; x 0.9 = 175.7
        ("mlperf-resnet50-h100", 400, 0.224, 0.9, 195.3, 175.7),
        ("mlperf-resnet50-a100", 400, 0.435, 0.9, 100.6, 90.5),
        # 1 / 0.0035 = 285.7 x 2,828,486 / 2^20 = 770.7; x 0.7 = 539.5
        ("mlperf-cosmoflow-h100", 1, 0.0035, 0.7, 770.7, 539.5),
        ("mlperf-cosmoflow-a100", 1, 0.00551, 0.7, 489.6, 342.7),
        # 24 / 0.04755 = 504.7 x 322,957 / 2^20 = 155.5; x 0.85 = 132.1
        ("mlperf-retinanet-b200", 24, 0.04755, 0.85, 155.5, 132.1),
    ],
)
def test_mlperf_per_accelerator(name: str, batch: int, ct: float, au: float, mib_full: float, mib_au: float) -> None:
    p = calc.plan(name)
    assert p.samples_per_s == pytest.approx(batch / ct * au, rel=1e-12)
    assert p.read_bytes_per_s / MiB == pytest.approx(mib_au, abs=0.05)
    full = calc.plan(name, target_gpu_utilization=1.0)
    assert full.read_bytes_per_s / MiB == pytest.approx(mib_full, abs=0.05)


@pytest.mark.parametrize(
    ("name", "read_size", "reads_per_s"),
    [
        # TFRecord through TensorFlow's default 256 KiB read buffer (DLIO sets no transfer_size):
        # 1 / 0.0035 s x 0.7 = 200 samples/s x ceil(2,828,486 / 262,144) = 11 reads = 2,200 reads/s
        ("mlperf-cosmoflow-h100", 262_144, 2200.0),
        # 1 / 0.00551 x 0.7 = 127.042 x 11 = 1,397.46 reads/s
        ("mlperf-cosmoflow-a100", 262_144, 1397.46),
        # shards of 1,251 records: 400 / 0.224 x 0.9 = 1,607.14 samples/s x 114,660.07 / 262,144 = 702.95
        ("mlperf-resnet50-h100", 262_144, 702.95),
        # 400 / 0.435 x 0.9 = 827.586 x 0.437393 = 361.98
        ("mlperf-resnet50-a100", 262_144, 361.98),
        # npz: numpy streams the file in sequence, kept as one read of the whole example:
        # 7 / 0.323 x 0.9 = 19.505 reads/s of 146,600,628 B
        ("mlperf-unet3d-h100", 146_600_628, 19.505),
        # JPEG via Pillow, the same: 24 / 0.04755 x 0.85 = 429.02 reads/s of 322,957 B
        ("mlperf-retinanet-b200", 322_957, 429.02),
    ],
)
def test_mlperf_presets_read_in_the_sizes_their_benchmark_issues(name: str, read_size: int, reads_per_s: float) -> None:
    p = calc.plan(name)
    assert p.request_bytes == read_size
    assert p.read_iops == pytest.approx(reads_per_s, rel=1e-4)


def test_unet3d_h100_samples_per_second() -> None:
    assert calc.plan("mlperf-unet3d-h100", target_gpu_utilization=1).samples_per_s == pytest.approx(21.67, abs=0.005)


def test_luna_transfer_times() -> None:
    p = calc.plan("luna-unet3d-1080ti")
    tib = 2**40
    assert p.dataset_bytes == pytest.approx(tib, rel=1e-9)
    # 1 TiB / 100 MiB/s = 10,486 s = 2.91 h ("about three hours")
    assert p.transfer_direct_time_s / 3600 == pytest.approx(2.91, abs=0.01)
    # compress on 60 cores at 1 TiB / 7200 s each: 120 s (under 10 min);
    # send 1 TiB / 262.6 = 3.9 GiB at 100 MiB/s: 39.9 s (~40 s); decompress 300 s (under 5 min)
    assert p.compress_s == pytest.approx(7200 / 60, rel=1e-3)
    assert p.send_s == pytest.approx(39.9, abs=0.1)
    assert p.decompress_s == pytest.approx(300, rel=1e-3)
    assert p.transfer_time_s == pytest.approx(120 + 39.9 + 300, abs=0.5)
    streamed = calc.plan("luna-unet3d-1080ti", streamed=True)
    assert streamed.transfer_time_s == pytest.approx(300, rel=1e-3)
    # one core: 7,200 s of gzip ("about 2 hours")
    assert calc.plan("luna-unet3d-1080ti", compress_cores=1).compress_s / 3600 == pytest.approx(2.0, abs=0.01)


def test_luna_is_cpu_bound_online_and_not_after_offline_preprocessing() -> None:
    online = calc.plan("luna-unet3d-1080ti")
    # The 4 workers, each reading then decoding (below), are the slowest stage: 0.26295/s per GPU,
    # just under the CPU's 4 / 15.2 s = 0.26316/s (issue 17: the bottleneck is the slowest stage).
    assert online.bottleneck == "workers"
    assert online.stages["cpu"] == pytest.approx(4 / 15.2, rel=1e-9)
    # Each of 4 workers reads an image (12 ms on the HDD) then spends 15.2 CPU s on it:
    # (15.2 + 0.012) / 4 = 3.803 s per image; the article saw 3.8 s.
    assert 1 / online.achieved_samples_per_s == pytest.approx((15.2 + 0.012) / 4, rel=1e-9)
    offline = calc.plan("luna-unet3d-1080ti-preprocessed")
    assert offline.bottleneck != "cpu"
    assert offline.gpu_utilization > 10 * online.gpu_utilization
    assert math.isfinite(offline.gpu_utilization) and offline.gpu_utilization <= 1
