"""Demand on storage (MODEL.md section 3).

    per_gpu_rate     = n / t x target_gpu_utilization                 [samples/s]
    samples_per_s    = per_gpu_rate x gpus_per_job x jobs
    read_bytes_per_s = samples_per_s x example_bytes x (1 - cache_fraction)
    read_iops        = read_bytes_per_s / request_bytes               (reads of one size)
    latency_budget   = t                                               (the article's bound)
    outstanding      = read_iops x storage_latency                     (Little's law)

References
----------
"Feeding the beast" (seeds/002): the n/t model and its ResNet-50/152 examples.
MLPerf Storage Submission_guidelines.md section 4 (AU threshold; MiB/s reporting).
"""

from __future__ import annotations

import numpy as np

from calc._types import Numeric

DEFAULT_SHARD_REQUEST_BYTES = 262144.0
"""Read size inside packed shards when none is given [bytes]: DLIO's ``transfer_size`` default
(256 KiB, dlio_benchmark docs/source/config.rst), the TFRecordDataset buffer it uses."""


def samples_per_s(
    batch_size: Numeric,
    step_time_s: Numeric,
    target_gpu_utilization: Numeric = 1.0,
    gpus_per_job: Numeric = 1.0,
    jobs: Numeric = 1.0,
) -> Numeric:
    """Samples per second the data path must deliver to all GPUs of all jobs [samples/s]."""
    return np.asarray(batch_size, dtype=float) / step_time_s * target_gpu_utilization * gpus_per_job * jobs


def request_bytes(example_bytes: Numeric, examples_per_file: Numeric, request_bytes: Numeric) -> Numeric:
    """Size of one read [bytes]; NaN ``request_bytes`` means "not given".

    One file per example: the whole example in one read, or in reads of ``request_bytes``
    when that is smaller. Packed shards: ``request_bytes``, default 256 KiB (DLIO).
    """
    req = np.asarray(request_bytes, dtype=float)
    files = np.asarray(examples_per_file) <= 1
    given = np.isfinite(req)
    per_file = np.where(given, np.minimum(req, example_bytes), example_bytes)
    return np.where(files, per_file, np.where(given, req, DEFAULT_SHARD_REQUEST_BYTES))


def read_iops(
    samples_per_s: Numeric,
    example_bytes: Numeric,
    examples_per_file: Numeric,
    request_bytes: Numeric,
    cache_fraction: Numeric = 0.0,
) -> Numeric:
    """Reads per second reaching storage [1/s].

    A file per example costs ``ceil(example / request)`` reads each; shards cost
    ``bytes / request``. A local cache holding a fraction ``cache_fraction`` of the dataset
    serves that share of reads after the first epoch.
    """
    remote = np.asarray(samples_per_s, dtype=float) * (1 - np.asarray(cache_fraction, dtype=float))
    ratio = np.asarray(example_bytes, dtype=float) / request_bytes
    per_example = np.where(np.asarray(examples_per_file) <= 1, np.ceil(ratio - 1e-9), ratio)
    iops: Numeric = remote * per_example
    return iops


def read_bytes_per_s(samples_per_s: Numeric, example_bytes: Numeric, cache_fraction: Numeric = 0.0) -> Numeric:
    """Bytes per second read from storage [bytes/s] (on-disk size of each example)."""
    rate: Numeric = (
        np.asarray(samples_per_s, dtype=float) * example_bytes * (1 - np.asarray(cache_fraction, dtype=float))
    )
    return rate


def outstanding_reads(read_iops: Numeric, storage_latency_s: Numeric) -> Numeric:
    """Reads in flight needed to sustain ``read_iops`` at ``storage_latency_s`` [1].

    Little's law, L = lambda x W: the queue depth (loader workers x their concurrency) the
    loader must keep outstanding.
    """
    return np.asarray(read_iops, dtype=float) * storage_latency_s
