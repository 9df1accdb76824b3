"""The pipeline and GPU utilisation (calc/pipeline.py, docs/model.md section 8), values by hand.

Each stage's capacity in samples/s per GPU, then the pace: the slowest stage with loader
workers, the harmonic sum without. NumPy warnings are errors here: an unlimited stage (a zero
cost, nothing read remotely) is inf without one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from calc import pipeline as pl

pytestmark = pytest.mark.filterwarnings("error")
inf = math.inf


def _storage(**kw: float) -> float:
    # 1 GB/s and 1M IOPS shared by 4 GPUs, 1 ms per read, 1 MB examples read in one read, 8 in flight
    args = {
        "storage_bytes_per_s": 1e9,
        "storage_iops": 1e6,
        "storage_latency_s": 1e-3,
        "example_bytes": 1e6,
        "reads_per_example": 1.0,
        "seeks_per_example": 1.0,
        "remote_fraction": 1.0,
        "readers": 4.0,
        "in_flight": 8.0,
    }
    args.update(kw)
    return float(pl.storage_stage(**args))


def test_storage_stage_bandwidth_bound() -> None:
    # 1 GB/s / 1 MB / 4 GPUs = 250 samples/s per GPU (IOPS allow 250,000, latency 8 / 1 ms = 8,000)
    assert _storage() == 250.0
    # half the examples hit a cache: storage serves twice as many: 500
    assert _storage(remote_fraction=0.5) == 500.0


def test_storage_stage_iops_bound() -> None:
    # 400 reads/s / 1 seek per example / 4 GPUs = 100; 4 seeks per example: 25
    assert _storage(storage_iops=400.0) == 100.0
    assert _storage(storage_iops=400.0, seeks_per_example=4.0) == 25.0


def test_storage_stage_latency_bound_is_littles_law() -> None:
    # 8 reads in flight / (100 ms x 2 reads per example) = 40 samples/s per GPU
    assert _storage(storage_latency_s=0.1, reads_per_example=2.0) == 40.0
    # with no workers one read is still in flight: 1 / 10 ms = 100
    assert _storage(storage_latency_s=0.01, in_flight=0.0, storage_bytes_per_s=inf) == 100.0
    # a quarter read remotely: 8 / (0.1 x 1 x 0.25) = 320; bandwidth 1e9 / (1e6 x 0.25) / 4 = 1,000
    assert _storage(storage_latency_s=0.1, remote_fraction=0.25) == 320.0


def test_storage_stage_unlimited() -> None:
    # nothing read from storage (all cached): no bound, and no division warning
    assert _storage(remote_fraction=0.0) == inf
    assert _storage(storage_bytes_per_s=inf, storage_iops=inf, storage_latency_s=0.0) == inf


def test_network_stage() -> None:
    # a 100 Gb/s link (12.5 GB/s) shared by 8 GPUs, 146,600,628 B per example:
    # 12.5e9 / 8 = 1.5625e9 / 146,600,628 = 10.6582 samples/s per GPU; half cached: 21.3164
    assert pl.network_stage(12.5e9, 8, 146_600_628, 1.0) == pytest.approx(10.65821, rel=1e-6)
    assert pl.network_stage(12.5e9, 8, 146_600_628, 0.5) == pytest.approx(21.31642, rel=1e-6)
    assert pl.network_stage(12.5e9, 8, 146_600_628, 0.0) == inf


def test_network_stage_takes_the_narrower_of_the_node_link_and_the_site_link() -> None:
    # The 100 Gb/s node link above, 8 GPUs on the node, and a 10 Gb/s link between sites
    # (1.25e9 B/s) shared by 16 GPUs of the job: 1.25e9 / 16 = 7.8125e7 B/s per GPU, below the
    # node share 1.5625e9, so 7.8125e7 / 146,600,628 = 0.532910 samples/s per GPU.
    assert pl.network_stage(12.5e9, 8, 146_600_628, 1.0, 1.25e9, 16) == pytest.approx(0.532910, rel=1e-5)
    # A site link wider than the node's share changes nothing: 1e12 / 16 = 6.25e10 > 1.5625e9.
    assert pl.network_stage(12.5e9, 8, 146_600_628, 1.0, 1e12, 16) == pytest.approx(10.65821, rel=1e-6)
    # One site (no link, inf) and no server (inf): unlimited, no warning.
    assert pl.network_stage(inf, 8, 146_600_628, 1.0, inf, 16) == inf


def test_cpu_stage() -> None:
    # 4.6 ms of CPU per image (ImageNet): 8 workers, each with half a core (16 threads on 8 cores,
    # calc.host.worker_core_share) -> 8 x 0.5 / 0.0046 = 869.57/s
    assert pl.cpu_stage(0.0046, 8, 0.5) == pytest.approx(869.5652, rel=1e-7)
    # 2 workers with a core each: 2 / 0.0046 = 434.78; no workers: the main thread, 1 / 0.0046 = 217.39
    # whatever the share (the workers' share does not apply to it)
    assert pl.cpu_stage(0.0046, 2, 1.0) == pytest.approx(434.7826, rel=1e-7)
    assert pl.cpu_stage(0.0046, 0, 0.5) == pytest.approx(217.3913, rel=1e-7)
    assert pl.cpu_stage(0.0, 8, 1.0) == inf  # no CPU work
    # one worker with half a core: 0.5 / 0.0046 = 108.7/s (the share applies from the first worker)
    assert pl.cpu_stage(0.0046, 1, 0.5) == pytest.approx(0.5 / 0.0046, rel=1e-12)


def test_main_stage_is_the_slower_of_receiving_and_pinning() -> None:
    # the main thread receives each example in 100 us while the pin thread copies it in 20 us: 10,000/s
    assert pl.main_stage(100e-6, 20e-6, 8) == pytest.approx(10_000.0, rel=1e-12)
    # one worker is enough for the main thread to receive: 10,000/s again
    assert pl.main_stage(100e-6, 20e-6, 1) == pytest.approx(10_000.0, rel=1e-12)
    # a pin copy slower than receiving sets the pace: 1 / 150 us = 6,666.7/s
    assert pl.main_stage(100e-6, 150e-6, 8) == pytest.approx(1 / 150e-6, rel=1e-12)
    # no workers: nothing is received; the main thread pins each batch itself: 1 / 20 us = 50,000/s
    assert pl.main_stage(100e-6, 20e-6, 0) == pytest.approx(50_000.0, rel=1e-12)
    # nothing to do (no pinning, no workers): unlimited, without a warning
    assert pl.main_stage(100e-6, 0.0, 0) == inf


def test_worker_bound() -> None:
    # LUNA: 4 workers each read a CT image (12 ms) then spend 15.2 s of CPU on it:
    # 4 / 15.212 = 0.26295 images/s (the article saw 3.8 s per image)
    assert pl.worker_bound(4, 0.012, 15.2, 0) == pytest.approx(0.262951, rel=1e-5)
    # one worker reading 1 ms and decoding 4.6 ms: 1 / 5.6 ms = 178.5714 samples/s
    assert pl.worker_bound(1, 0.001, 0.0046, 0) == pytest.approx(178.5714, rel=1e-6)
    # no workers: the training process does it all in turn, which achieved()'s serial sum
    # counts; a bound here would count read and decode twice
    assert pl.worker_bound(0, 0.001, 0.0046, 0) == inf
    # an async reader overlaps reading and decoding: no such bound
    assert pl.worker_bound(4, 0.012, 15.2, 1) == inf
    assert pl.worker_bound(4, 0.0, 0.0, 0) == inf


def test_pcie_stage_pinned_and_pageable() -> None:
    # PCIe Gen3 x16, 15.75 GB/s / 602,120 B per ImageNet example = 26,157.58 samples/s pinned
    assert pl.pcie_stage(15.75e9, 602_120, 1) == pytest.approx(26_157.58, rel=1e-6)
    assert pl.pcie_stage(15.75e9, 602_120, True) == pytest.approx(26_157.58, rel=1e-6)
    # pageable: 7.4437 / 54.869 GB/s measured on an H100 host = 0.135663 of it: 26,157.58 x 0.135663 = 3,548.62
    assert abs(pl.PAGEABLE_FRACTION - 0.135663) < 1e-6
    assert pl.pcie_stage(15.75e9, 602_120, 0) == pytest.approx(3548.62, rel=1e-5)


BASE = {"storage": 5000.0, "network": 6000.0, "cpu": 7000.0, "pcie": 8000.0, "gpu": 1000.0}


@pytest.mark.parametrize(
    ("slow", "kw", "code"),
    [
        ("gpu", {}, 4),
        ("storage", {"storage": 500.0}, 0),
        ("network", {"network": 500.0}, 1),
        ("cpu", {"cpu": 500.0}, 2),
        ("pcie", {"pcie": 500.0}, 3),
        ("decoder", {"decoder": 500.0}, 5),
        # the synchronous workers' read + decode bound is a stage of its own, named "workers"
        ("workers", {"workers": 500.0}, 6),
        # the main process receiving every worker's batches: a ceiling of its own, code 7
        ("main", {"main": 500.0}, 7),
        # a tie between a resource and the workers bound: the resource is what the workers wait for
        ("storage tied with workers", {"workers": 500.0, "storage": 500.0}, 0),
        # the main process tied with the workers' bound: the main process is named
        ("main tied with workers", {"workers": 500.0, "main": 500.0}, 7),
        # the cores tied with the main process: the cores (code 2) come first in TIE_ORDER
        ("cpu tied with main", {"cpu": 500.0, "main": 500.0}, 2),
        # a tie with the GPU: the GPU is named, a stage as fast does not hold it back
        ("tie", {"storage": 1000.0}, 4),
    ],
)
def test_achieved_is_the_slowest_stage_and_names_it(slow: str, kw: dict[str, float], code: int) -> None:
    args = {**BASE, **kw}
    rate, got = pl.achieved(num_workers=8, **args)  # type: ignore[arg-type]
    assert rate == (500.0 if slow not in ("gpu", "tie") else 1000.0), slow
    assert got == code, slow
    assert pl.STAGES[int(got)] == slow.split(maxsplit=1)[0] if slow != "tie" else pl.STAGES[int(got)] == "gpu"


def test_achieved_without_workers_adds_the_stage_times() -> None:
    # beast-resnet50-v100 with num_workers = 0: 1 / (1/1457 + 0.0046 + 1/26,157.58 + 1/1000)
    # = 1 / (0.00068634 + 0.0046 + 0.00003823 + 0.001) = 1 / 0.00632457 = 158.113
    gpu, cpu, pcie, storage = 1457.0, 1 / 0.0046, 15.75e9 / 602_120, 1000.0
    rate, code = pl.achieved(storage, inf, cpu, pcie, gpu, 0)
    assert rate == pytest.approx(158.113, rel=1e-5)
    assert code == 2  # the CPU is the slowest part
    # the decoder's time adds too: 1 / (1/1000 + 1/1000) = 500 from two equal stages
    rate, _ = pl.achieved(inf, inf, inf, inf, 1000.0, 0, decoder=1000.0)
    assert rate == pytest.approx(500.0, rel=1e-12)
    rate, _ = pl.achieved(1000.0, inf, inf, inf, inf, 0)
    assert rate == 1000.0
    rate, _ = pl.achieved(inf, 1000.0, inf, 1000.0, inf, 0)
    assert rate == pytest.approx(500.0, rel=1e-12)
    # the main thread's own pinning adds in turn too: 1 / (1/1000 + 1/4000) = 800
    rate, _ = pl.achieved(inf, inf, inf, inf, 1000.0, 0, main=4000.0)
    assert rate == pytest.approx(800.0, rel=1e-12)


def test_a_stage_at_zero_stops_the_serial_pipeline() -> None:
    # no storage bandwidth at all and no workers: 1 / (1/0 + 1/1000) = 0 samples/s, without a warning
    rate, code = pl.achieved(0.0, inf, inf, inf, 1000.0, 0)
    assert rate == 0.0 and pl.STAGES[int(code)] == "storage"


def test_achieved_vectorised_over_workers() -> None:
    # no workers: 1 / (1/1000 + 1/1000) = 500; with one worker or eight the slower stage: 1000
    rate, code = pl.achieved(1000.0, inf, inf, inf, 1000.0, np.array([0.0, 1.0, 8.0]))
    assert list(rate) == pytest.approx([500.0, 1000.0, 1000.0], rel=1e-12)
    assert code == 4.0  # the stages are scalars: one code


def test_decoder_stage() -> None:
    # JPEG on the GPU's NVJPG engines: 7,000 images/s (H100: 7 engines x A100's 5,000 / 5)
    assert pl.decoder_stage(1, 0, 7000.0, 4483.0, 1920 * 1080, 64) == 7000.0
    # video: 4,483 1080p frames/s / 64 frames per clip = 70.05 clips/s
    assert pl.decoder_stage(1, 1, 7000.0, 4483.0, 1920 * 1080, 64) == pytest.approx(70.046875, rel=1e-12)
    # 640 x 360 frames have 1/9 of the pixels: 9 x 4,483 / 64 = 630.42 clips/s
    assert pl.decoder_stage(1, 1, 7000.0, 4483.0, 640 * 360, 64) == pytest.approx(630.421875, rel=1e-12)
    # no figure for the GPU (NaN), or decoding on the CPU: unbounded
    assert pl.decoder_stage(1, 0, math.nan, 4483.0, 1920 * 1080, 64) == inf
    assert pl.decoder_stage(0, 0, 7000.0, 4483.0, 1920 * 1080, 64) == inf
    assert pl.REFERENCE_FRAME_PIXELS == 2_073_600


def test_cpu_seconds_left_with_gpu_decode() -> None:
    # a video decoded by NVDEC leaves 10 % of its measured CPU decode (demuxing, batching): 4.6 ms -> 0.46 ms
    # (images decoded on the GPU are priced by their GPU decoder's own CPU share: calc.host)
    assert pl.cpu_seconds_effective(0.0046, 0) == 0.0046
    assert pl.cpu_seconds_effective(0.0046, 1) == pytest.approx(0.00046, rel=1e-12)
    assert pl.cpu_seconds_effective(0.0046, True) == pytest.approx(0.00046, rel=1e-12)


def test_pipeline_chart_without_workers_says_the_stages_run_in_turn() -> None:
    import calc
    from calc import plots

    # Before: "CPU is the bottleneck: 158.3 of 1,471" over a CPU bar of 217.4. With no workers the
    # stages run in turn: 1 ms storage + 4.6 ms decode + 602,120 B / 15.75 GB/s + 87 ms / 128, and (issue 42)
    # the main thread's own pin-memory copy: a batch of 128 x 602,120 B = 77.07 MB is above the 33.55 MB mmap
    # threshold, so (0.02219 + 0.04683) ms per MB x 0.60212 MB = 0.0415583 ms on the reference core
    # (presets/decoders.yaml pin_memory_copy): 1 / (0.001 + 0.0046 + 0.0000382298 + 0.0006796875 + 0.0000415583)
    # s = 1 / 0.0063594756 s = 157.25 samples/s per GPU (158.28 before the pinning counted).
    p = calc.plan("beast-imagenet-4xv100", num_workers=0)
    fig = plots.pipeline_stages(p)
    assert fig.layout.title.text.startswith("No loader workers: the stages run in turn, 157.2 of 1,471")
    delivered = next(t for t in fig.data if (t.name or "").startswith("delivered"))
    assert delivered.x[0] == pytest.approx(1 / 0.0063594756, rel=1e-6)


def test_two_jobs_on_one_node_share_its_cores() -> None:
    import calc

    # Issue 42: two 4-GPU jobs on 8-GPU nodes run on one node (a scheduler packs them), so their
    # 2 x 4 GPUs x 4 workers = 32 workers share its 16 cores (1 thread per core): half a core each, and
    # the CPU stage per GPU is 4 workers x 0.5 / 4.6 ms = 434.78 samples/s. One job alone: 16 workers on
    # 16 cores, a core each: 4 / 4.6 ms = 869.57/s. Before, each job counted a whole node of its own.
    kw = {"gpus_per_job": 4, "gpus_per_node": 8, "num_workers": 4, "cpu_cores_per_node": 16}
    one = calc.plan("beast-imagenet-4xv100", cpu_threads_per_core=1, **kw)
    two = calc.plan("beast-imagenet-4xv100", cpu_threads_per_core=1, jobs=2, **kw)
    assert one.values["clients"] == 1 and two.values["clients"] == 1
    assert two.values["gpus_on_node"] == 8 and two.values["workers_on_node"] == 32
    assert one.values["loader_core_share"] == 1.0 and two.values["loader_core_share"] == 0.5
    assert one.stages["cpu"] == pytest.approx(4 / 0.0046, rel=1e-12)
    assert two.stages["cpu"] == pytest.approx(4 * 0.5 / 0.0046, rel=1e-12)
    # the node's RAM holds both jobs' batches: 8 GPU processes' worth
    assert two.host_ram_per_node_bytes == pytest.approx(2 * one.host_ram_per_node_bytes, rel=1e-12)
    # with SMT (2 threads per core, gain 1.2 on the reference catalogue's default): 32 threads on 16 cores
    # do 16 + 16 x 0.2 = 19.2 cores' work, 0.6 of a core a worker
    smt = calc.plan("beast-imagenet-4xv100", cpu_threads_per_core=2, cpu="xeon-8480c", jobs=2, **kw)
    assert smt.values["loader_core_share"] == pytest.approx(0.6, rel=1e-12)


def test_threads_per_worker_above_the_cores_slow_the_loader() -> None:
    import calc

    # 8 workers per GPU x 4 GPUs = 32 workers on 32 cores: a core each. With 2 intra-op threads each,
    # 64 threads on 32 cores (no SMT): every thread half a core, the workers' decode at half speed:
    # 8 x 0.5 / 4.6 ms = 869.57/s per GPU instead of 8 / 4.6 ms = 1,739.13/s.
    kw = {"cpu_cores_per_node": 32, "cpu_threads_per_core": 1}
    one = calc.plan("beast-imagenet-4xv100", threads_per_worker=1, **kw)
    two = calc.plan("beast-imagenet-4xv100", threads_per_worker=2, **kw)
    assert one.stages["cpu"] == pytest.approx(8 / 0.0046, rel=1e-12)
    assert two.stages["cpu"] == pytest.approx(8 * 0.5 / 0.0046, rel=1e-12)
    assert two.bottleneck == "cpu"


def test_storage_at_another_site_is_read_over_the_site_link() -> None:
    """Issue 18: an on-prem job reading S3 over a 100 Mb/s WAN link; the link is a pipeline stage."""
    import calc

    kw = {"site": "on-prem", "storage": "aws-s3-standard", "allow_other_site": True}
    p = calc.plan("beast-imagenet-4xv100", site_link_bytes_per_s="100 Mb/s", **kw)
    # 100 Mb/s = 12.5e6 B/s shared by 4 GPUs x 1 job, 64 KiB = 65,536 B per example, no cache:
    # 12.5e6 / 4 / 65,536 = 47.6837 samples/s per GPU. The GPU eats 128 / 0.087 s = 1,471.26/s,
    # S3 (about 260/s per GPU here) and the workers (226/s) are faster than the link, so the
    # network stage binds: utilisation 47.6837 / 1,471.26 = 3.2410 %.
    assert p.values["network_samples_per_s_per_gpu"] == pytest.approx(47.6837, rel=1e-5)
    assert p.bottleneck == "network"
    assert p.gpu_utilization == pytest.approx(0.032410, rel=1e-4)
    # Two such jobs share the one link (8 GPUs, still 4 on each node): 12.5e6 / 8 / 65,536 = 23.8419.
    two = calc.plan("beast-imagenet-4xv100", site_link_bytes_per_s="100 Mb/s", jobs=2, **kw)
    assert two.values["network_samples_per_s_per_gpu"] == pytest.approx(23.8419, rel=1e-5)
    # 1 Gb/s = 125e6 B/s: 125e6 / 4 / 65,536 = 476.837 samples/s per GPU (S3 then binds first).
    q = calc.plan("beast-imagenet-4xv100", site_link_bytes_per_s="1 Gb/s", **kw)
    assert q.values["network_samples_per_s_per_gpu"] == pytest.approx(476.837, rel=1e-5)
    assert q.bottleneck != "network"
    # The same link with the storage at the job's site: no link crossed, the stage is unlimited.
    same = calc.plan("beast-imagenet-4xv100", site="aws", storage="aws-s3-standard", site_link_bytes_per_s="100 Mb/s")
    assert same.values["network_samples_per_s_per_gpu"] == inf
    assert not any("another site" in w for w in same.warnings)


def test_storage_at_another_site_not_allowed_is_warned() -> None:
    import calc

    p = calc.plan("beast-imagenet-4xv100", site="on-prem", storage="aws-s3-standard")
    said = [w for w in p.warnings if "another site (aws) than the job (on-prem)" in w]
    # One warning (the site said once) with both things missing: the answer will not buy it, and the
    # link is not limited (none given).
    assert len(said) == 1
    assert "will not buy it" in said[0] and "allow_other_site" in said[0]
    assert "site_link_bytes_per_s" in said[0] and "does not limit" in said[0]
    assert p.values["network_samples_per_s_per_gpu"] == inf
    # Allowed, with a link: neither warning.
    q = calc.plan(
        "beast-imagenet-4xv100",
        site="on-prem",
        storage="aws-s3-standard",
        allow_other_site=True,
        site_link_bytes_per_s="1 Gb/s",
    )
    assert not any("another site" in w for w in q.warnings)
    # Allowed without a link: only the link is asked for; a link without the permission: only the permission.
    link_only = calc.plan("beast-imagenet-4xv100", site="on-prem", storage="aws-s3-standard", allow_other_site=True)
    (w,) = [w for w in link_only.warnings if "another site" in w]
    assert "does not limit" in w and "will not buy" not in w
    kw = {"site": "on-prem", "storage": "aws-s3-standard", "site_link_bytes_per_s": "1 Gb/s"}
    not_allowed = calc.plan("beast-imagenet-4xv100", **kw)
    (w,) = [w for w in not_allowed.warnings if "another site" in w]
    assert "will not buy it" in w and "does not limit" not in w
