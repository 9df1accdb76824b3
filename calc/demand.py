"""Demand on storage (docs/model.md section 5).

    per_gpu_rate     = n / t x target_gpu_utilization                 [samples/s]
    samples_per_s    = per_gpu_rate x gpus_per_job x jobs
    read_bytes_per_s = samples_per_s x example_bytes x (1 - cache_fraction)
    read_iops        = read_bytes_per_s / request_bytes               (reads of one size)
    latency_budget   = t                                               (the article's bound)
    outstanding      = read_iops x storage_latency                     (Little's law)

References
----------
"Feeding the beast" (Towards Data Science): the n/t model and its ResNet-50/152 examples.
MLPerf Storage Submission_guidelines.md section 4 (AU threshold; MiB/s reporting).
"""

from __future__ import annotations

from calc._types import Numeric, ceil, divide, floats, isfinite, maximum, minimum, quiet, sqrt, where
from calc.formula import formula, note

DEFAULT_SHARD_REQUEST_BYTES = 262144.0
"""Read size inside packed shards when none is given [bytes]: DLIO's ``transfer_size`` default
(256 KiB, dlio_benchmark docs/source/config.rst), the TFRecordDataset buffer it uses."""


@formula("gpu_samples_per_s", "{batch_size} / {step_time_s} x {scaling_efficiency}")
def gpu_samples_per_s(batch_size: Numeric, step_time_s: Numeric, scaling_efficiency: Numeric = 1.0) -> Numeric:
    """Samples/s one GPU consumes in its job: n / t, less the data-parallel scaling loss [samples/s]."""
    return floats(batch_size) / step_time_s * scaling_efficiency


@formula("per_gpu_samples_per_s", "{gpu_samples_per_s} x {target_gpu_utilization}")
def per_gpu_demand(gpu_samples_per_s: Numeric, target_gpu_utilization: Numeric) -> Numeric:
    """Samples/s the data path must feed each GPU at the target utilisation [samples/s]."""
    return floats(gpu_samples_per_s) * target_gpu_utilization


@formula("samples_per_s", "{per_gpu_samples_per_s} x {gpus_per_job} x {jobs}")
def samples_per_s(per_gpu_samples_per_s: Numeric, gpus_per_job: Numeric = 1.0, jobs: Numeric = 1.0) -> Numeric:
    """Samples per second the data path must deliver to all GPUs of all jobs [samples/s]."""
    return floats(per_gpu_samples_per_s) * gpus_per_job * jobs


@formula("request_bytes", "{request_rule}")
def request_bytes(example_bytes: Numeric, examples_per_file: Numeric, request_bytes: Numeric) -> Numeric:
    """Size of one read [bytes]; NaN ``request_bytes`` means "not given".

    One file per example: the whole example in one read, or in reads of ``request_bytes``
    when that is smaller. Packed shards: ``request_bytes``, default 256 KiB (DLIO), at most
    the whole shard (``examples_per_file x example_bytes``): a read never spans two files.
    """
    req = floats(request_bytes)
    files = floats(examples_per_file) <= 1
    given = isfinite(req)
    per_file = where(given, minimum(req, example_bytes), example_bytes)
    shard = floats(examples_per_file) * example_bytes
    return where(files, per_file, minimum(where(given, req, DEFAULT_SHARD_REQUEST_BYTES), shard))


@formula("read_iops", "{samples_per_s} x {remote_fraction} x {reads_per_example} reads/example")
def read_iops(
    samples_per_s: Numeric,
    example_bytes: Numeric,
    examples_per_file: Numeric,
    request_bytes: Numeric,
    remote_fraction: Numeric = 1.0,
) -> Numeric:
    """Reads per second reaching storage [1/s].

    A file per example costs ``ceil(example / request)`` reads each; shards cost
    ``bytes / request``. Only ``remote_fraction`` of the examples reach storage: the rest hit the
    page cache or a local cache after the first epoch.
    """
    remote = floats(samples_per_s) * remote_fraction
    ratio = floats(example_bytes) / request_bytes
    per_example = where(floats(examples_per_file) <= 1, ceil(ratio - 1e-9), ratio)
    iops: Numeric = remote * per_example
    return iops


@formula("read_bytes_per_s", "{samples_per_s} x {example_bytes} x {remote_fraction}")
def read_bytes_per_s(samples_per_s: Numeric, example_bytes: Numeric, remote_fraction: Numeric = 1.0) -> Numeric:
    """Bytes per second read from storage [bytes/s] (on-disk size of each example)."""
    rate: Numeric = floats(samples_per_s) * example_bytes * remote_fraction
    return rate


@formula("outstanding_reads", "{read_iops} x {storage_latency_s}")
def outstanding_reads(read_iops: Numeric, storage_latency_s: Numeric) -> Numeric:
    """Reads in flight needed to sustain ``read_iops`` at ``storage_latency_s`` [1].

    Little's law, L = lambda x W: the queue depth (loader workers x their concurrency) the
    loader must keep outstanding.
    """
    return floats(read_iops) * storage_latency_s


@formula("file_opens_per_s", "{samples_per_s} x {remote_fraction} / {examples_per_file}")
def file_opens_per_s(samples_per_s: Numeric, examples_per_file: Numeric, remote_fraction: Numeric = 1.0) -> Numeric:
    """Files opened per second on storage: one per example, or one per shard of examples [1/s]."""
    opens: Numeric = floats(samples_per_s) * remote_fraction
    return opens / examples_per_file


@formula("latency_budget_s", "{step_time_s} (the article's bound: an example must arrive within one step)")
def latency_budget_s(step_time_s: Numeric) -> Numeric:
    """Time an example may take to arrive [s]: one step, the article's bound."""
    return floats(step_time_s)


@formula("epoch_time_s", "{dataset_examples} / ({per_gpu_samples_per_s} x {gpus_per_job})")
def epoch_time_s(dataset_examples: Numeric, per_gpu_samples_per_s: Numeric, gpus_per_job: Numeric) -> Numeric:
    """One pass over the dataset by one job [s]; 0 where nothing runs."""
    rate = floats(per_gpu_samples_per_s) * gpus_per_job
    with quiet(divide="ignore", invalid="ignore", over="ignore"):
        return where(rate > 0, floats(dataset_examples) / maximum(rate, 1e-300), 0.0)


@formula("run_length_used_s", "{run_rule}")
def run_length_s(
    train_tokens: Numeric, per_gpu_samples_per_s: Numeric, gpus_per_job: Numeric, seq_len: Numeric
) -> Numeric:
    """Wall-clock length of a run that trains on ``train_tokens`` tokens [s]: tokens / (samples/s
    per GPU x GPUs x ``seq_len`` tokens an example), at the rate the epoch time uses; 0 where nothing runs."""
    rate = floats(per_gpu_samples_per_s) * gpus_per_job * seq_len
    with quiet(divide="ignore", invalid="ignore", over="ignore"):
        return where(rate > 0, floats(train_tokens) / maximum(rate, 1e-300), 0.0)


@formula(
    "page_cache_hit",
    "1 if {dataset_bytes} fits in free RAM; else free RAM / {dataset_bytes} for random file reads, 0 for shard scans",
)
def page_cache_hit(
    dataset_bytes: Numeric, free_ram_bytes: Numeric, examples_per_file: Numeric, page_cache: Numeric
) -> Numeric:
    """Share of reads the node's page cache serves after the first epoch [0-1].

    Every node samples the whole dataset each epoch. Random reads of single files hit a cache
    holding a random part of it in proportion (free RAM / dataset); sequential scans of shards
    in an LRU cache smaller than the dataset evict each shard before it is read again: 0. A
    dataset that fits is read from storage once. ``page_cache`` = 0 turns it off (the articles
    size storage without it; MLPerf Storage defeats it with datasets of 5x client RAM).
    """
    d = floats(dataset_bytes)
    free = maximum(floats(free_ram_bytes), 0.0)
    with quiet(divide="ignore", invalid="ignore"):
        share = where(d > 0, minimum(divide(free, d), 1.0), 1.0)
    hit = where(share >= 1.0, 1.0, where(floats(examples_per_file) > 1, 0.0, share))
    return where(floats(page_cache) > 0, hit, 0.0)


@formula("remote_fraction", "(1 - {cache_fraction}) x (1 - {page_cache_hit})")
def remote_fraction(cache_fraction: Numeric, page_cache_hit: Numeric) -> Numeric:
    """Share of example reads that reach shared storage in steady state (after epoch 1) [0-1]."""
    share: Numeric = (1 - floats(cache_fraction)) * (1 - floats(page_cache_hit))
    return share


@formula("first_epoch_read_bytes_per_s", "{samples_per_s} x {example_bytes} (no cache is warm yet)")
def first_epoch_read_bytes_per_s(samples_per_s: Numeric, example_bytes: Numeric) -> Numeric:
    """Read bandwidth in the first epoch, when every example comes from storage [bytes/s]."""
    return floats(samples_per_s) * example_bytes


@formula(
    "node_read_bytes_per_s",
    "{per_gpu_samples_per_s} x {gpus_on_node} x {example_bytes} x {remote_fraction}",
)
def node_read_bytes_per_s(
    per_gpu_samples_per_s: Numeric, gpus_on_node: Numeric, example_bytes: Numeric, remote_fraction: Numeric
) -> Numeric:
    """Storage traffic into one node in steady state: what its network link must carry [bytes/s]."""
    return floats(per_gpu_samples_per_s) * gpus_on_node * example_bytes * remote_fraction


METADATA_OPS_PER_OPEN = {"nfs": 4.0, "lustre": 2.0, "daos": 1.0, "object": 0.0, "block": 0.0, "local": 0.0, "ram": 0.0}
"""Metadata operations one file open costs the storage's metadata service, by protocol [1].

nfs: an NFSv4 read of a small file is LOOKUP, OPEN (with ACCESS), GETATTR and CLOSE around the
READ (RFC 7530 sections 16.9, 16.16, 16.7, 16.2; one COMPOUND may carry several, each is still
an operation the server executes). lustre: open and close are two requests to the MDS (the
lookup rides on the open intent; Lustre Operations Manual, "Lustre File System Components").
daos: one open of the object handle (inferred). object stores: a GET names its key, no separate
metadata operation (a HEAD or LIST per object would add one: count them as requests). Local
drives and RAM: the kernel's dentry and inode caches, no remote service."""


@formula("metadata_ops_per_s", "{file_opens_per_s} x metadata operations per open (protocol)")
def metadata_ops_per_s(file_opens_per_s: Numeric, ops_per_open: Numeric) -> Numeric:
    """Metadata operations per second the storage's metadata service must serve [1/s]."""
    return floats(file_opens_per_s) * ops_per_open


P99_Z = 2.326
"""Standard-normal quantile of 0.99: the article's target is that 99 % of batches arrive within t."""


note("p99_read_bytes_per_s", "{read_bytes_per_s} x {p99_factor}")
note("p99_outstanding_reads", "{outstanding_reads} x {p99_factor}")


@formula("p99_factor", "1 + 2.326 x {example_bytes_cv} / sqrt({batch_size})")
def p99_factor(example_bytes_cv: Numeric, batch_size: Numeric) -> Numeric:
    """How much more than the mean a batch's bytes are at the 99th percentile [1].

    A batch sums ``n`` independent example sizes of coefficient of variation ``cv``: its mean is
    n x mean, its spread sqrt(n) x sd (central limit), so the 99th percentile is
    n x mean x (1 + 2.326 x cv / sqrt(n)). Reading that batch within one step needs this much more
    bandwidth and reads in flight than the mean. MLPerf 3D U-Net: 146.6 +- 68.3 MB (cv 0.466) at
    batch 7 gives 1.41.
    """
    n = maximum(floats(batch_size), 1.0)
    factor: Numeric = 1.0 + P99_Z * floats(example_bytes_cv) / sqrt(n)
    return factor
