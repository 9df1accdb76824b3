"""The whole pipeline and GPU utilisation (MODEL.md section 6).

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

from calc._types import Numeric
from calc.formula import formula

STAGES = ("storage", "cpu", "pcie", "gpu")
"""Pipeline stages, by code 0..3 (the ``bottleneck`` output)."""

PAGEABLE_FRACTION = 7.4437e9 / 54.869e9
"""Pageable/pinned host-to-GPU copy rate, measured on one H100 host (0.136)."""

GPU_DECODE_CPU_FRACTION = 0.1
"""CPU time left per example when decoding and augmenting on the GPU (DALI): an assumption
(inferred) - file reading and batching stay on the CPU."""


def storage_stage(
    storage_bytes_per_s: Numeric,
    storage_iops: Numeric,
    storage_latency_s: Numeric,
    example_bytes: Numeric,
    reads_per_example: Numeric,
    seeks_per_example: Numeric,
    cache_fraction: Numeric,
    readers: Numeric,
    num_workers: Numeric,
) -> Numeric:
    """Samples/s per GPU that storage can deliver; ``inf`` bandwidth/IOPS = unconstrained.

    ``readers`` is the number of GPUs sharing the storage (gpus_per_job x jobs).
    ``seeks_per_example`` are the reads that cost the storage an IOPS (random reads, or every
    request on an object store); ``reads_per_example`` all reads, each paying the latency.
    """
    miss = 1 - np.asarray(cache_fraction, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_bw = storage_bytes_per_s / (example_bytes * miss) / readers
        by_iops = storage_iops / (seeks_per_example * miss) / readers
        by_latency = np.maximum(num_workers, 1) / (storage_latency_s * reads_per_example * miss)
    return np.minimum(np.minimum(by_bw, by_iops), by_latency)


def cpu_stage(cpu_seconds_per_example: Numeric, num_workers: Numeric, cores_per_gpu: Numeric) -> Numeric:
    """Samples/s per GPU the loader's CPU work allows: busy cores / CPU s per example."""
    cores = np.minimum(np.maximum(num_workers, 1), cores_per_gpu)
    with np.errstate(divide="ignore"):
        rate: Numeric = cores / np.asarray(cpu_seconds_per_example, dtype=float)
    return rate


def pcie_stage(host_link_bytes_per_s: Numeric, example_tensor_bytes: Numeric, pin_memory: Numeric) -> Numeric:
    """Samples/s per GPU the host-to-GPU link carries (pinned, or pageable at a fraction)."""
    link = np.asarray(host_link_bytes_per_s, dtype=float) * np.where(np.asarray(pin_memory) > 0, 1.0, PAGEABLE_FRACTION)
    return link / example_tensor_bytes


@formula("gpu_utilization", "achieved / {gpu_samples_per_s} per GPU")
def achieved(
    storage: Numeric, cpu: Numeric, pcie: Numeric, gpu: Numeric, num_workers: Numeric
) -> tuple[Numeric, Numeric]:
    """Achieved samples/s per GPU and the bottleneck stage code (index into ``STAGES``)."""
    overlapped = np.minimum(np.minimum(storage, cpu), np.minimum(pcie, gpu))
    workers = np.asarray(num_workers)
    if workers.ndim == 0 and workers > 0:  # the common case: skip the serial branch
        rate = overlapped
    else:
        with np.errstate(divide="ignore"):
            serial = 1.0 / (
                1.0 / np.asarray(storage) + 1.0 / np.asarray(cpu) + 1.0 / np.asarray(pcie) + 1.0 / np.asarray(gpu)
            )
        rate = np.where(workers > 0, overlapped, serial)
    # On a tie the GPU is named: a stage exactly as fast as the GPU does not hold it back.
    code = np.where(gpu <= overlapped, 3.0, np.where(storage <= overlapped, 0.0, np.where(cpu <= overlapped, 1.0, 2.0)))
    return rate, code


@formula("cpu_seconds_effective", "{cpu_seconds_per_example} x (0.1 if GPU decode else 1)")
def cpu_seconds_effective(cpu_seconds_per_example: Numeric, gpu_decode: Numeric) -> Numeric:
    """CPU seconds per example left on the host: all of it, or ``GPU_DECODE_CPU_FRACTION`` with GPU decode [s]."""
    return np.asarray(cpu_seconds_per_example, dtype=float) * np.where(
        np.asarray(gpu_decode) > 0, GPU_DECODE_CPU_FRACTION, 1.0
    )
