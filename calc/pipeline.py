"""The whole pipeline and GPU utilisation (docs/model.md section 8).

Each stage has a capacity in samples/s per GPU: storage, CPU decode/augment, host-to-GPU
copy and GPU compute (n/t). With loader workers the stages overlap and the slowest sets the
pace; with ``num_workers = 0`` the training process does everything in turn and the
per-sample times add.

    achieved        = min(stages)                 (workers > 0)
                    = 1 / sum(1 / stage)           (workers = 0)
    gpu_utilization = achieved / gpu stage

Notes
-----
Storage capacity is shared by every GPU of every job, and limited per GPU by Little's law:
``num_workers`` synchronous readers sustain at most ``num_workers / (latency x reads per
example)`` examples/s. Pageable (unpinned) host memory copies at a fraction of the link
rate: 7.44 of 54.9 GB/s measured on an H100 host (benchmarks/results/gpu_calibration_h100.json).
"""

from __future__ import annotations

import numpy as np

from calc._types import Numeric, divide, floats, isnan, maximum, minimum, quiet, where
from calc.formula import formula

STAGES = ("storage", "network", "cpu", "pcie", "gpu", "decoder", "workers", "main")
"""Pipeline stages, by code 0..7 (the ``bottleneck`` output). ``decoder``: the GPU's hardware
JPEG/video decoders when decoding on the GPU (unbounded otherwise). ``workers``: synchronous
DataLoader workers, each reading then decoding one example (unbounded for async readers and
with no workers, where the serial sum already adds read and decode time). ``main``: the
training process's main thread receiving every worker's batches, and its pin-memory thread
(with no workers: the pinning, in turn with the rest)."""

TIE_ORDER = (4, 0, 1, 2, 7, 3, 5, 6)
"""Which stage is named on a tie, by code: the GPU first (a stage as fast as the GPU does not
hold it back), then the resources (the main process after the workers' cores), and the workers
bound (read + decode) last, since a tie with it means the named resource is what the workers
wait for."""

MEDIA = ("image", "video")
"""What the GPU's hardware decoders decode: JPEG images (NVJPG) or H.264 video frames (NVDEC)."""

REFERENCE_FRAME_PIXELS = 1920 * 1080
"""NVDEC rates are published for 1920 x 1080 frames (NVDEC Application Note)."""

LOADERS = ("sync", "async")
"""sync: PyTorch DataLoader workers, each reading then decoding one example at a time.
async: streaming readers (WebDataset, Mosaic StreamingDataset, s3torchconnector, DALI) that keep
``reader_concurrency`` requests in flight per GPU while other threads decode."""

PAGEABLE_FRACTION = 7.4437e9 / 54.869e9
"""Pageable/pinned host-to-GPU copy rate, measured on one H100 host (0.136)."""

GPU_DECODE_CPU_FRACTION = 0.1
"""CPU time left per example of a video's CPU decode when NVDEC decodes it (DALI's video reader:
demuxing and batching stay on the CPU): an assumption (inferred), unmeasured. Images decoded on
the GPU are priced by the GPU decoder's CPU share in presets/decoders.yaml instead."""


def storage_stage(
    storage_bytes_per_s: Numeric,
    storage_iops: Numeric,
    storage_latency_s: Numeric,
    example_bytes: Numeric,
    reads_per_example: Numeric,
    seeks_per_example: Numeric,
    remote_fraction: Numeric,
    readers: Numeric,
    in_flight: Numeric,
) -> Numeric:
    """Samples/s per GPU that storage can deliver; ``inf`` bandwidth/IOPS = unconstrained.

    ``readers`` is the number of GPUs sharing the storage (gpus_per_job x jobs);
    ``remote_fraction`` the share of examples read from it (the rest hit a cache).
    ``seeks_per_example`` are the reads that cost the storage an IOPS (random reads, or every
    request on an object store); ``reads_per_example`` all reads, each paying the latency.
    ``in_flight`` reads per GPU at once (workers, or an async reader's concurrency) bound the
    rate by Little's law: in_flight / (latency x reads).
    """
    miss = floats(remote_fraction)
    with quiet(divide="ignore", invalid="ignore"):
        # A dataset read from RAM (miss 0) divides by zero: unlimited, as NumPy's inf.
        by_bw = divide(storage_bytes_per_s, floats(example_bytes) * miss) / readers
        by_iops = divide(storage_iops, floats(seeks_per_example) * miss) / readers
        by_latency = divide(maximum(in_flight, 1), floats(storage_latency_s) * reads_per_example * miss)
    return minimum(minimum(by_bw, by_iops), by_latency)


@formula(
    "network_samples_per_s_per_gpu",
    "min({node_network_bytes_per_s} / {gpus_on_node}, {site_link_bytes_per_s} / ({gpus_per_job} x {jobs})) "
    "/ ({example_bytes} x {remote_fraction})",
)
def network_stage(
    node_network_bytes_per_s: Numeric,
    gpus_on_node: Numeric,
    example_bytes: Numeric,
    remote_fraction: Numeric,
    site_link_bytes_per_s: Numeric = np.inf,
    readers: Numeric = 1.0,
) -> Numeric:
    """Samples/s per GPU the links to storage carry [1/s].

    Two links in series: the node's link, shared by the GPUs on the node, and, for storage at
    another site than the job, the link between the sites (a WAN or cloud interconnect,
    ``site_link_bytes_per_s``), shared by all ``readers`` GPUs of every job. The narrower share
    sets the rate: min(node / gpus_on_node, site link / readers) / (example_bytes x remote).
    ``inf`` for a link means none (one site, or no server preset).
    """
    with quiet(divide="ignore", invalid="ignore"):
        share = minimum(
            floats(node_network_bytes_per_s) / gpus_on_node,
            floats(site_link_bytes_per_s) / readers,
        )
        rate: Numeric = divide(share, floats(example_bytes) * remote_fraction)
    return rate


@formula(
    "cpu_samples_per_s_per_gpu",
    "{num_workers} workers x {loader_core_share} of a core / {cpu_seconds_effective} "
    "(no workers: the main thread, 1 / {cpu_seconds_effective})",
)
def cpu_stage(cpu_seconds_per_example: Numeric, num_workers: Numeric, core_share: Numeric) -> Numeric:
    """Samples/s per GPU the loader's CPU work allows: the workers, each with its share of a core
    (calc.host.worker_core_share), over the CPU seconds per example; with no workers, the main
    thread alone."""
    w = floats(num_workers)
    busy = where(w > 0, w * core_share, 1.0)
    rate: Numeric = divide(busy, floats(cpu_seconds_per_example))  # no CPU work (0 s): unlimited
    return rate


@formula(
    "main_samples_per_s_per_gpu",
    "1 / max({main_seconds_per_example}, {pin_seconds_per_example}) (the main thread receives while the "
    "pin thread copies; no workers: 1 / {pin_seconds_per_example}, in turn with the rest)",
)
def main_stage(main_seconds_per_example: Numeric, pin_seconds_per_example: Numeric, num_workers: Numeric) -> Numeric:
    """Samples/s per GPU the training process's own threads pass on [1/s]: its main thread
    receives each worker's batch while its pin-memory thread copies the one before into
    page-locked memory, so the slower of the two sets the pace (``inf`` when neither costs).
    With no workers nothing is received: the main thread pins each batch itself, in turn with
    the rest (``achieved``'s serial sum)."""
    busy = where(
        floats(num_workers) > 0,
        maximum(floats(main_seconds_per_example), pin_seconds_per_example),
        (floats(pin_seconds_per_example)),
    )
    rate: Numeric = divide(1.0, busy)
    return rate


def worker_bound(
    num_workers: Numeric, read_s_per_example: Numeric, cpu_seconds_per_example: Numeric, loader: Numeric
) -> Numeric:
    """Samples/s per GPU synchronous workers reach: each reads, then decodes, one example at a time.

    A DataLoader worker's ``__getitem__`` opens, reads and decodes in turn, so its time per
    example is read time + CPU time (they add; only different workers overlap). An async
    reader (``loader`` = 1) overlaps them: no such bound. With ``num_workers = 0`` the training
    process does it all in turn, which ``achieved``'s serial sum already counts: no bound here
    either (it would count read and decode twice).
    """
    with quiet(divide="ignore", invalid="ignore"):
        sync = divide(maximum(num_workers, 1), floats(read_s_per_example) + cpu_seconds_per_example)
    return where((floats(loader) > 0) | (floats(num_workers) <= 0), np.inf, sync)


def pcie_stage(host_link_bytes_per_s: Numeric, example_tensor_bytes: Numeric, pin_memory: Numeric) -> Numeric:
    """Samples/s per GPU the host-to-GPU link carries (pinned, or pageable at a fraction)."""
    link = floats(host_link_bytes_per_s) * where(floats(pin_memory) > 0, 1.0, PAGEABLE_FRACTION)
    return link / example_tensor_bytes


@formula("gpu_utilization", "achieved / {gpu_samples_per_s} per GPU")
def achieved(
    storage: Numeric,
    network: Numeric,
    cpu: Numeric,
    pcie: Numeric,
    gpu: Numeric,
    num_workers: Numeric,
    workers: Numeric = np.inf,
    decoder: Numeric = np.inf,
    main: Numeric = np.inf,
) -> tuple[Numeric, Numeric]:
    """Achieved samples/s per GPU and the bottleneck stage code (index into ``STAGES``).

    With loader workers the stages overlap and the slowest sets the pace (``workers`` is the
    synchronous workers' read + decode bound, a stage of its own); with ``num_workers = 0`` the
    training process does everything in turn: 1 / sum(1 / stage). Either way the bottleneck is
    the slowest stage (with workers, the one whose capacity is the achieved rate; without, the
    largest term of the sum), ties broken by ``TIE_ORDER``.
    """
    by_code = (storage, network, cpu, pcie, gpu, decoder, workers, main)
    slowest = by_code[0]
    for x in by_code[1:]:
        slowest = minimum(slowest, x)
    n = floats(num_workers)
    if type(n) is not np.ndarray and n > 0:  # the common case: skip the serial branch
        rate = slowest
    else:
        with quiet(divide="ignore"):
            serial = 1.0 / (
                1.0 / floats(storage)
                + 1.0 / floats(network)
                + 1.0 / floats(cpu)
                + 1.0 / floats(pcie)
                + 1.0 / floats(gpu)
                + 1.0 / floats(decoder)
                + 1.0 / floats(main)
            )
        rate = where(n > 0, slowest, serial)
    # The first stage in TIE_ORDER at the slowest rate: np.select's pick, written as a chain of
    # where from the last choice back (np.select costs ~20 us on one scenario, the chain ~3 us).
    code: Numeric = 4.0
    for c in reversed(TIE_ORDER):
        code = where(floats(by_code[c]) <= slowest, float(c), code)
    return rate, code


@formula(
    "decoder_samples_per_s_per_gpu",
    "image: NVJPG images/s; video: NVDEC 1080p frames/s x 1920 x 1080 / {frame_pixels} / {frames_per_example} "
    "(unbounded without GPU decode)",
)
def decoder_stage(
    gpu_decode: Numeric,
    video: Numeric,
    jpeg_images_per_s: Numeric,
    video_fps_1080p: Numeric,
    frame_pixels: Numeric,
    frames_per_example: Numeric,
) -> Numeric:
    """Examples/s per GPU its hardware decoders deliver when decoding on the GPU [1/s].

    JPEG: the NVJPG engines' images/s. Video: the NVDEC engines' H.264 frames/s at 1080p,
    scaled by pixels per frame (decode time grows with the pixels decoded; inferred), divided by
    the frames decoded per clip. ``inf`` without GPU decode, or where the GPU has no figure
    (NaN). The engines run beside the SMs, so decoding takes no step time.
    """
    video_rate = floats(video_fps_1080p) * REFERENCE_FRAME_PIXELS / floats(frame_pixels)
    rate = where(floats(video) > 0, video_rate / floats(frames_per_example), jpeg_images_per_s)
    rate = where(isnan(rate), np.inf, rate)
    return where(floats(gpu_decode) > 0, rate, np.inf)


@formula("cpu_seconds_effective", "{cpu_seconds_per_example} x (0.1 for video decoded on the GPU, else 1)")
def cpu_seconds_effective(cpu_seconds_per_example: Numeric, gpu_video_decode: Numeric) -> Numeric:
    """CPU seconds per example left to the workers [s]: all of it, or ``GPU_DECODE_CPU_FRACTION`` of a
    video's measured CPU decode when NVDEC decodes it. (Images decoded on the GPU are priced by
    their GPU decoder's own CPU share in presets/decoders.yaml: calc.host.)"""
    return floats(cpu_seconds_per_example) * where(floats(gpu_video_decode) > 0, GPU_DECODE_CPU_FRACTION, 1.0)
