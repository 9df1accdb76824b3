"""Checkpoints: LLM training writes more than it reads (docs/checkpoints.md).

    checkpoint   = params x (weight_bytes_per_param + optimizer_bytes_per_param)
    per rank     = checkpoint / (TP x PP)            no ZeRO: one data-parallel replica writes
                 = weights / (TP x PP) + optimizer / (DP x TP x PP)     ZeRO-1/2, replica 0
                 = checkpoint / (DP x TP x PP)       ZeRO-3 / FSDP full sharding
    sync write   = checkpoint / (stall_fraction x interval)
    async drain  = checkpoint / interval,  host RAM = one pinned copy per node,
                   blocking part = rank bytes / GPU-to-host link
    restore      = max(total read / storage read, shard / min(per-rank read, per-rank load))
    retained     = checkpoint x (keep + milestones)
    job MTBF     = 1 / (interruptions per GPU-second x GPUs)     (Llama 3: 419 in 54 d on 16,384)
    interval     = sqrt(2 x blocking save x MTBF)    (Young 1974; Daly 2006, first order)
    lost/failure = restore + interval / 2 + durability lag
    goodput      = 1 - stall share - lost per failure / MTBF

References
----------
MLPerf Storage v2.0 rules, mlcommons/storage ``Rules.md`` section 4.3.4, Table 2 "LLM models"
(checkpoint sizes, TPxPPxDP, processes, ZeRO stage) and ``configs/dlio/workload/llama3_*.yaml``
(fp16 weights, fp32 optimizer state), https://github.com/mlcommons/storage, checked 2026-11-22.
DLIO ``dlio_benchmark/checkpointing/base_checkpointing.py`` (argonne-lcf/dlio_benchmark): the
emulator MLPerf Storage runs; it writes weights in ``model_datatype`` and three optimizer groups
of ``num_parameters`` in ``optimizer_datatype``, i.e. 2 + 3 x 4 = 14 bytes per parameter.
Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
SC 2020, arXiv:1910.02054: stages 1/2/3 shard optimizer state / + gradients / + weights.
Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9), 1974.
Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
Future Generation Computer Systems 22(3), 2006.
Llama Team, AI @ Meta, "The Llama 3 Herd of Models", arXiv:2407.21783, 2024, section 3.3.4:
466 job interruptions in a 54-day snapshot of pre-training, 419 of them unexpected, on up to
16,384 H100 GPUs (section 3.3, Table 4).
PyTorch, "Asynchronous Saving with Distributed Checkpoint (DCP)" recipe (2024, verified
2024-11-05): ``torch.distributed.checkpoint.async_save`` first copies the state into CPU
buffers, raising CPU memory by checkpoint_size_per_rank x ranks, then writes in the background.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from calc._types import Floats, Numeric, any_, ceil, clip, floats, floor, maximum, minimum, python_on, sqrt, where
from calc.errors import InputError
from calc.formula import formula, note
from calc.units import MONTH_S, check_range

note("checkpoint_writing_ranks", "ZeRO 0: TP x PP (one replica writes); else DP x TP x PP")
note(
    "checkpoint_write_bytes_per_s",
    "{checkpoint_rule}",
)
note(
    "checkpoint_host_ram_bytes",
    "{checkpoint_rank_bytes} x writing ranks on a node (one pinned staging copy: what async saves need)",
)
note("checkpoint_async", "{mode_rule}")
note("checkpoint_interval_used_s", "{interval_rule}")
note(
    "checkpoint_sync_write_bytes_per_s",
    "{checkpoint_bytes} / ({checkpoint_stall_fraction} x {checkpoint_interval_used_s})",
)
note("checkpoint_async_write_bytes_per_s", "{checkpoint_bytes} / {checkpoint_interval_used_s}")
note("checkpoint_lag_s", "{lag_rule}")
note("checkpoint_restore_bytes", "{checkpoint_rank_bytes} x {gpus_per_job} (every GPU loads its own state)")
note(
    "checkpoint_durable",
    "storage kind: a node's own drives or RAM die with it (no); shared, replicated or object stores (yes); "
    "no storage chosen: yes, the sizing must pick a durable tier",
)

GIB = 2**30
TIB = 2**40

CHECKPOINT_LAYOUTS = {
    "mlperf_mixed_adam": (2.0, 12.0),
    "fp32_adam": (4.0, 8.0),
    "weights_bf16": (2.0, 0.0),
    "weights_fp32": (4.0, 0.0),
}
"""(weight, optimizer) bytes per parameter a checkpoint holds, by layout.

Notes
-----
``mlperf_mixed_adam``: fp16/bf16 weights (2) + fp32 master weights, Adam m and v (3 x 4 = 12),
14 B/param; what MLPerf Storage's DLIO emulator writes and the Megatron/DeepSpeed
mixed-precision layout. ``fp32_adam``: fp32 weights + m, v (4 + 8 = 12), e.g. FSDP keeping fp32
sharded parameters. ``weights_*``: a weights-only export (no resume). Gradients are never
saved, so a checkpoint is ``memory.BYTES_PER_PARAM["adam"]`` (16) less the 4 B of gradients.
"""

# Figures from the MLPerf Storage rules (Rules.md, Table 2) unless marked. "params" is derived,
# not in the rules: DLIO's get_num_parameters() on Table 2's architecture and vocab_size 128256
# from configs/dlio/workload/llama3_*.yaml (GQA-aware count, embedding and lm_head untied).
# "size_by_rank_gib" is mlpstorage/config.py LLM_SIZE_BY_RANK, "(Model GB, Optimizer GB)" in GiB
# (the tool multiplies them by 1024**3): the rules' printed size is their sum, so "5.29 TB" and
# "18 TB" are thousands of GiB (5,288 and 17,997 GiB), not TiB.
_RULES = "mlcommons/storage Rules.md section 4.3.4 Table 2 (MLPerf Storage v2.0), checked 2026-11-22"
_SIZES = "mlcommons/storage mlpstorage/config.py LLM_SIZE_BY_RANK, checked 2026-11-22"
MLPERF_CHECKPOINT: dict[str, dict[str, Any]] = {
    "llama3-8b": {
        "params": 8_030_261_248,
        "tensor_parallel": 1,
        "pipeline_parallel": 1,
        "data_parallel": 8,
        "processes": 8,
        "zero_stage": 3,
        "size_as_printed": "105 GB",
        "size_by_rank_gib": (15, 90),
        "checkpoint_gib": 105.0,
        "checkpoint_bytes": 105 * GIB,
        "source": _RULES + "; " + _SIZES + "; configs/dlio/workload/llama3_8b.yaml",
    },
    "llama3-70b": {
        "params": 69_882_617_856,
        "tensor_parallel": 8,
        "pipeline_parallel": 1,
        "data_parallel": 8,
        "processes": 64,
        "zero_stage": 3,
        "size_as_printed": "912 GB",
        "size_by_rank_gib": (130, 781),
        "checkpoint_gib": 912.0,
        "checkpoint_bytes": 912 * GIB,
        "source": _RULES + "; " + _SIZES + "; configs/dlio/workload/llama3_70b.yaml",
    },
    "llama3-405b": {
        "params": 405_853_388_800,
        "tensor_parallel": 8,
        "pipeline_parallel": 32,
        "data_parallel": 2,
        "processes": 512,
        "zero_stage": 1,
        # 755 + 4,533 GiB = 5,288 GiB; 14 B/param x params = 5,292 GiB (0.1 % more).
        "size_as_printed": "5.29 TB",
        "size_by_rank_gib": (755, 4533),
        "checkpoint_gib": 5288.0,
        "checkpoint_bytes": 5288 * GIB,
        "source": _RULES + "; " + _SIZES + "; configs/dlio/workload/llama3_405b.yaml",
    },
    "llama3-1t": {
        "params": 1_183_035_102_480,
        "tensor_parallel": 8,
        "pipeline_parallel": 64,
        "data_parallel": 2,
        "processes": 1024,
        "zero_stage": 1,
        # 2,571 + 15,426 GiB = 17,997 GiB ("18 TB"). The other rows split 14 B/param as 1:6
        # (weights 2 B : optimizer 12 B); here the optimizer entry alone is 14 B x params
        # (15,426 GiB) and the weights entry is a sixth of it, so the table counts the weights
        # twice (7/6 of 14 B/param). DLIO writes what its layer config gives: 15,426 GiB, which
        # is what calc computes; the printed 18 TB is kept here for comparison.
        "size_as_printed": "18 TB",
        "size_by_rank_gib": (2571, 15426),
        "checkpoint_gib": 17997.0,
        "checkpoint_bytes": 17997 * GIB,
        "source": _RULES + "; " + _SIZES + "; configs/dlio/workload/llama3_1t.yaml",
    },
}
"""MLPerf Storage checkpointing workloads: the rules' sizes in GiB (the sum of mlpstorage's
LLM_SIZE_BY_RANK pair) and process layout (TP x PP x DP = processes)."""


def _arr(name: str, value: Numeric) -> Floats:
    return check_range(name, value, accepted="a finite number")


# The guards below pass a Python float inside a plan's evaluate at once, by check_range's own test for it
# (type float, Python scalars on, in range, finite unless infinite is allowed): ~45 guards a plan, each one
# call instead of two with keywords. Anything else, or a value out of range, goes to check_range as before.
_INF = math.inf


def _at_least(name: str, value: Numeric, low: float, accepted: str) -> Floats:
    if type(value) is float and low <= value < _INF and python_on():
        return value
    return check_range(name, value, low, accepted=accepted)


def _nonneg(name: str, value: Numeric) -> Floats:
    if type(value) is float and 0.0 <= value < _INF and python_on():
        return value
    return check_range(name, value, 0.0, accepted="0 or more")


def _positive(name: str, value: Numeric) -> Floats:
    if type(value) is float and 0.0 < value < _INF and python_on():
        return value
    return check_range(name, value, 0.0, accepted="more than 0", above=True)


def _rate(name: str, value: Numeric) -> Floats:
    """A rate: more than 0; infinite means unlimited (its time term is 0)."""
    if type(value) is float and 0.0 < value <= _INF and python_on():
        return value
    return check_range(name, value, 0.0, accepted="more than 0 (inf = unlimited)", above=True, infinite=True)


def llama_params(
    vocab_size: Numeric,
    hidden_size: Numeric,
    num_layers: Numeric,
    ffn_hidden_size: Numeric,
    num_attention_heads: Numeric,
    num_kv_heads: Numeric,
) -> Numeric:
    """Parameters of a Llama-style decoder (GQA, SwiGLU, untied embeddings) [count].

    ``2 V h + h + L (2 h + h (h + 2 d_kv) + h^2 + 3 h f)`` with ``d_kv = (h // heads) x kv_heads``:
    embedding and lm_head, final norm, and per layer two norms, QKV, output projection and the
    three SwiGLU matrices. The count DLIO uses to size MLPerf Storage checkpoints.
    """
    h = _positive("hidden_size", hidden_size)
    d_kv = np.floor_divide(h, _positive("num_attention_heads", num_attention_heads)) * _positive(
        "num_kv_heads", num_kv_heads
    )
    f = _positive("ffn_hidden_size", ffn_hidden_size)
    layer = 2 * h + h * (h + 2 * d_kv) + h * h + 3 * h * f
    return 2 * _positive("vocab_size", vocab_size) * h + h + _nonneg("num_layers", num_layers) * layer


@formula(
    "checkpoint_bytes",
    "{checkpoint_params} x ({checkpoint_weight_bytes_per_param} + {checkpoint_optimizer_bytes_per_param})",
)
def checkpoint_bytes(
    params: Numeric, weight_bytes_per_param: Numeric = 2.0, optimizer_bytes_per_param: Numeric = 12.0
) -> Numeric:
    """Full checkpoint: weights + optimizer state [bytes].

    ``params x (weight_bytes_per_param + optimizer_bytes_per_param)``. The defaults are the
    MLPerf Storage / mixed-precision Adam layout, 2 + 12 = 14 B/param; see
    ``CHECKPOINT_LAYOUTS``. Llama 3 70B: 69.88e9 x 14 = 978e9 B = 911 GiB (rules: 912 GiB).
    """
    p = _nonneg("params", params)
    w = _nonneg("weight_bytes_per_param", weight_bytes_per_param)
    o = _nonneg("optimizer_bytes_per_param", optimizer_bytes_per_param)
    return p * (w + o)


@formula(
    "checkpoint_rank_bytes",
    "ZeRO 0: checkpoint / (TP x PP); 1-2: weights / (TP x PP) + optimizer / (DP x TP x PP); "
    "3: checkpoint / (DP x TP x PP)",
)
def bytes_per_rank(
    checkpoint_bytes: Numeric,
    data_parallel: Numeric,
    tensor_parallel: Numeric = 1.0,
    pipeline_parallel: Numeric = 1.0,
    zero_stage: Numeric = 0.0,
    weight_fraction: Numeric = 2.0 / 14.0,
) -> tuple[Numeric, Numeric]:
    """Bytes the busiest writing rank writes [bytes], and how many ranks write [count].

    Model parallelism (TP x PP = mp) splits everything. Then, by ZeRO stage:

    * 0 (plain DDP): replicas hold identical state, so only one data-parallel replica writes:
      ``checkpoint / mp`` on ``mp`` ranks.
    * 1, 2: optimizer state is sharded over DP, weights are not and replica 0 writes them:
      ``weights / mp + optimizer / (dp x mp)`` on ``dp x mp`` ranks. That is the busiest
      rank, so ranks x bytes exceeds the checkpoint here.
    * 3 (FSDP full shard): everything is sharded: ``checkpoint / (dp x mp)`` on ``dp x mp``.

    ``weight_fraction`` = weight bytes / checkpoint bytes (2/14 for the MLPerf layout) matters
    only for stages 1 and 2. This is DeepSpeed's file layout, which DLIO emulates.
    """
    c = _nonneg("checkpoint_bytes", checkpoint_bytes)
    dp = _at_least("data_parallel", data_parallel, 1.0, "1 or more")
    mp = _at_least("tensor_parallel", tensor_parallel, 1.0, "1 or more") * _at_least(
        "pipeline_parallel", pipeline_parallel, 1.0, "1 or more"
    )
    z = _arr("zero_stage", zero_stage)
    if any_((z % 1 != 0) | (z < 0) | (z > 3)):  # not np.isin, np.round or np.any: slow on a scalar
        raise InputError("zero_stage", f"{zero_stage}; accepted: 0, 1, 2 or 3")
    wf = _arr("weight_fraction", weight_fraction)
    if any_((wf < 0) | (wf > 1)):
        raise InputError("weight_fraction", f"{weight_fraction}; accepted: 0 to 1")
    per_rank = where(z == 0, c / mp, where(z == 3, c / (dp * mp), c * wf / mp + c * (1 - wf) / (dp * mp)))
    ranks = where(z == 0, mp, dp * mp)
    return per_rank, ranks


def sync_write_bytes_per_s(checkpoint_bytes: Numeric, interval_s: Numeric, stall_fraction: Numeric) -> Numeric:
    """Write bandwidth for a blocking save to stall training at most ``stall_fraction`` [bytes/s].

    ``checkpoint / (stall_fraction x interval)``: the GPUs wait while the save runs, so it must
    finish within that share of each interval. 912 GiB every 1800 s at 2 %: 979e9 / 36 s = 27 GB/s.
    """
    c = _nonneg("checkpoint_bytes", checkpoint_bytes)
    t = _positive("interval_s", interval_s)
    f = _arr("stall_fraction", stall_fraction)
    if any_((f <= 0) | (f > 1)):
        raise InputError("stall_fraction", f"{stall_fraction}; accepted: more than 0, at most 1")
    return c / (f * t)


def async_drain_bytes_per_s(checkpoint_bytes: Numeric, interval_s: Numeric) -> Numeric:
    """Write bandwidth for an asynchronous save [bytes/s]: ``checkpoint / interval``.

    Training resumes once the state is copied to host RAM; the copy must reach storage before
    the next save needs the buffer, so the whole interval is available.
    """
    return _nonneg("checkpoint_bytes", checkpoint_bytes) / _positive("interval_s", interval_s)


def async_host_ram_bytes(bytes_per_node: Numeric, copies: Numeric = 1.0) -> Numeric:
    """Pinned host RAM an asynchronous save needs per node [bytes]: ``bytes_per_node x copies``.

    One staging copy of the node's shards; ``copies`` = 2 when a save may start before the last
    one has drained. ``bytes_per_node`` = busiest-rank bytes x writing ranks on the node.
    """
    return _nonneg("bytes_per_node", bytes_per_node) * _at_least("copies", copies, 1.0, "1 or more")


def async_blocking_s(bytes_per_node: Numeric, host_copy_bytes_per_s: Numeric) -> Numeric:
    """Training stall of an asynchronous save [s]: ``bytes_per_node / host_copy_bytes_per_s``.

    The GPU-to-host copy still blocks; ``host_copy_bytes_per_s`` is the node's aggregate
    device-to-host rate.
    """
    return _nonneg("bytes_per_node", bytes_per_node) / _positive("host_copy_bytes_per_s", host_copy_bytes_per_s)


@formula(
    "checkpoint_host_copy_s",
    "{checkpoint_rank_bytes} / {host_link_bytes_per_s} (each GPU copies its shard over its own host link)",
)
def host_copy_s(rank_bytes: Numeric, host_link_bytes_per_s: Numeric) -> Numeric:
    """Time to stage one rank's shard in pinned host RAM [s]: ``rank_bytes / host_link``.

    The part of an asynchronous save that blocks training (``async_save`` returns once the
    state is in CPU buffers; PyTorch DCP async recipe). Every GPU copies over its own PCIe
    link at once, so the busiest rank sets the time: 70B on 64 ZeRO-3 ranks, 14.24 GiB
    = 15.29e9 B at 63 GB/s (PCIe Gen5 x16) = 0.243 s.
    """
    return _nonneg("rank_bytes", rank_bytes) / _rate("host_link_bytes_per_s", host_link_bytes_per_s)


@formula(
    "checkpoint_restore_s",
    "max({checkpoint_restore_bytes} / {storage_bytes_per_s}, {checkpoint_rank_bytes} / "
    "min({checkpoint_rank_read_bytes_per_s} per-rank read, {checkpoint_load_bytes_per_s} per-rank load))",
)
def restore_time_s(
    total_bytes: Numeric,
    read_bytes_per_s: Numeric,
    shard_bytes: Numeric,
    per_rank_read_bytes_per_s: Numeric,
    load_bytes_per_s: Numeric = np.inf,
) -> Numeric:
    """Time to load a checkpoint when every rank reads its shard at once [s].

    ``max(total / read_bytes_per_s, shard / min(per_rank_read, load))``: the storage's
    aggregate read rate, or one rank's own rate, whichever binds. One rank's rate is the lesser
    of its share of the node's storage path (link, per-client cap) and the rate it turns bytes
    into tensors (``load_bytes_per_s``: read + deserialise, ``torch.load``). ``total_bytes``
    is what all ranks read: every GPU loads its own state, so replicas without ZeRO read the
    same shard again (rank bytes x GPUs).
    """
    total = _nonneg("checkpoint_bytes", total_bytes)
    aggregate = total / _rate("read_bytes_per_s", read_bytes_per_s)
    per_rank = minimum(
        _rate("per_rank_read_bytes_per_s", per_rank_read_bytes_per_s), _rate("load_bytes_per_s", load_bytes_per_s)
    )
    return maximum(aggregate, _nonneg("shard_bytes", shard_bytes) / per_rank)


@formula("checkpoint_write_s", "{write_time_rule}")
def save_time_s(
    checkpoint_bytes: Numeric, write_bytes_per_s: Numeric, shard_bytes: Numeric, per_rank_write_bytes_per_s: Numeric
) -> Numeric:
    """Time to write one checkpoint when every rank writes its shard at once [s].

    ``max(checkpoint / write_bytes_per_s, shard / per_rank_write)``: the storage's aggregate
    write rate, or the busiest rank's own rate, whichever binds. ``shard_bytes`` is the busiest
    rank's (``bytes_per_rank``), not the average: with ZeRO-1 replica 0's ranks write the
    weights besides their optimizer shard. Llama 3 405B on 16,384 GPUs (TP 8, PP 16, DP 128,
    ZeRO-1, 14 B/param = 5.68e12 B): the average rank writes 5.68e12 / 16,384 = 0.347 GB, the
    busiest 5.68e12 x (2/14) / 128 + 5.68e12 x (12/14) / 16,384 = 6.34 + 0.297 = 6.64 GB, 19x
    more; at 12.5 GB/s per rank that is 0.53 s, not 28 ms. Drives, EFS and most file systems
    write slower than they read, so a save takes longer than a restore.
    """
    c = _nonneg("checkpoint_bytes", checkpoint_bytes)
    aggregate = c / _rate("write_bytes_per_s", write_bytes_per_s)
    one = _nonneg("shard_bytes", shard_bytes) / _rate("per_rank_write_bytes_per_s", per_rank_write_bytes_per_s)
    return maximum(aggregate, one)


# ------------------------------------------------------------------ a save beside the reads: one rule
# How a save shares the store with the reads, both at the burst the job is sized for: a blocking
# (sync) save stops training, and its reads, while it writes; an asynchronous drain runs beside
# them. The store's side is ``save_with_reads`` (the plan's storage need, the engine's demand, a
# unit's busy share, the cluster's write need); training's side is ``blocking_s`` (the plan's
# stall and the GPU time on each store). Each caller calls these; none writes the rule again.


@formula(
    "storage_need_bytes_per_s",
    "sync: max({read_bytes_per_s}, {checkpoint_save_burst_bytes_per_s}); async: their sum",
)
def save_with_reads(read: Numeric, save: Numeric, is_async: Numeric) -> Numeric:
    """What a store carries while a save runs [the inputs' unit: bytes/s, or a unit's busy share].

    ``read`` the steady reads, ``save`` the save's write burst (a sync save within its stall
    budget, an async drain within its drain target), ``is_async`` the mode (> 0: async). A sync save
    stops training, so its reads pause while it writes: ``max(read, save)``; an async drain runs
    beside the reads: ``read + save``. 385.7 MB/s of reads with a 27 GB/s sync save: 27 GB/s; with
    an 18.4 GB/s async drain: 18.79 GB/s.
    """
    r = check_range("read", read, 0.0, accepted="0 or more", infinite=True)
    w = check_range("save", save, 0.0, accepted="0 or more", infinite=True)
    return where(floats(is_async) > 0, r + w, maximum(r, w))


@formula("checkpoint_blocking_s", "{blocking_rule}")
def blocking_s(write_s: Numeric, interval_s: Numeric, host_copy_s: Numeric, is_async: Numeric) -> Numeric:
    """Training stall per save [s].

    A blocking save stops training for the whole write. An asynchronous one stops it for the
    copy into host RAM, and again when its drain is slower than the interval: the next save
    waits for the buffer, ``max(write_s - interval, 0)``.
    """
    w = _nonneg("checkpoint_write_s", write_s)
    i = _rate("checkpoint_interval_s", interval_s)
    h = _nonneg("checkpoint_host_copy_s", host_copy_s)
    return where(floats(is_async) > 0, h + maximum(w - i, 0.0), w)


@formula("checkpoint_stall_share", "{checkpoint_blocking_s} / {checkpoint_interval_used_s}")
def stall_share(blocking_s: Numeric, interval_s: Numeric) -> Numeric:
    """Share of training time spent blocked on saves [1]: ``blocking_s / interval_s``."""
    return _nonneg("checkpoint_blocking_s", blocking_s) / _rate("checkpoint_interval_s", interval_s)


@formula(
    "checkpoint_capacity_bytes",
    "{checkpoint_bytes} x ({checkpoint_keep} recent + {checkpoint_milestones} milestones + 1 save in flight)",
)
def retained_capacity_bytes(
    checkpoint_bytes: Numeric, keep: Numeric, milestones: Numeric = 0.0, in_flight: Numeric = 1.0
) -> Numeric:
    """Storage the kept checkpoints occupy [bytes]: ``checkpoint x (keep + milestones + in_flight)``.

    ``keep`` recent saves rotate, and the oldest is deleted only once the new one is complete
    (a save that fails half-way must leave ``keep`` whole ones), so the store holds ``keep``
    plus the save being written (``in_flight`` = 1 while saving, 0 with no saves); milestone
    saves are never deleted during the run. 1T (16.56e12 B), keep 2: 3 x 16.56e12 = 49.7e12 B.
    """
    return _nonneg("checkpoint_bytes", checkpoint_bytes) * (
        _nonneg("keep", keep) + _nonneg("milestones", milestones) + _nonneg("in_flight", in_flight)
    )


@formula("checkpoint_milestones", "{milestone_rule}")
def milestone_count(run_length_s: Numeric, milestone_interval_s: Numeric) -> Numeric:
    """Milestone checkpoints kept over a run [count]: ``floor(run_length / milestone_interval)``.

    A 30-day run keeping one every 24 h: floor(720 h / 24 h) = 30.
    """
    return floor(_nonneg("run_length_s", run_length_s) / _positive("milestone_interval_s", milestone_interval_s))


LLAMA3_UNEXPECTED_INTERRUPTIONS = 419
"""Unexpected job interruptions in the Llama 3 405B pre-training snapshot [count] (Llama 3
paper, arXiv:2407.21783, section 3.3.4: 466 interruptions, 47 planned, 419 unexpected)."""
LLAMA3_SNAPSHOT_S = 54 * 86400.0
"""Length of that snapshot [s]: 54 days (same section)."""
LLAMA3_GPUS = 16384
"""GPUs of that run [count]: up to 16,384 H100 (paper section 3.3, Table 4). Dividing by the
largest count gives the lowest per-GPU rate the paper supports."""
INTERRUPTIONS_PER_GPU_S = LLAMA3_UNEXPECTED_INTERRUPTIONS / (LLAMA3_SNAPSHOT_S * LLAMA3_GPUS)
"""Unexpected interruptions per GPU-second [1/s]: 419 / (54 d x 16,384) = 4.736e-4 per GPU-day
= 5.48e-9 /s, one per 2,111 GPU-days. Hardware made about 78 % of them (paper), so the rate is
taken per GPU and scales with the job's GPU count."""
SECONDS_PER_MONTH = float(MONTH_S)
"""A month for failure counts [s]: ``calc.units.MONTH_S`` (30 days), the month every charge uses."""
DEFAULT_LOAD_BYTES_PER_S = 0.76e9
"""Rate one rank turns a checkpoint file into tensors [bytes/s]: 0.76 GB/s, measured with
``calc.measure.checkpoint_load`` (``torch.load`` of a 1 GiB bf16 tensor from the page cache,
PyTorch 2.13 CPU) on a shared 2-vCPU AMD EPYC VM, 2026-11-23: the median of six runs' medians
(0.61, 0.68, 0.71, 0.81, 1.30, 1.48 GB/s; the machine's load average was 2 to 4, which is
the spread). No published per-rank figure was found; measure your own node and pass it as
``checkpoint_load_bytes_per_s``."""


@formula("mtbf_job_s", "{mtbf_rule}")
def job_mtbf_s(gpus: Numeric, interruptions_per_gpu_s: Numeric = INTERRUPTIONS_PER_GPU_S) -> Numeric:
    """Mean time between interruptions of a synchronous job [s]: ``1 / (rate x gpus)``.

    One GPU's failure stops the whole job (Llama 3 paper, section 3.3.4), so rates add over
    GPUs. From the Llama 3 rate: 16,384 GPUs -> 54 d / 419 = 3.09 h; 64 GPUs -> 33.0 d.
    """
    return 1.0 / (
        _positive("interruptions_per_gpu_s", interruptions_per_gpu_s) * _at_least("gpus", gpus, 1.0, "1 or more")
    )


@formula("failures_per_month", "30 d / {mtbf_job_s}")
def failures_per_month(mtbf_s: Numeric, month_s: Numeric = SECONDS_PER_MONTH) -> Numeric:
    """Expected interruptions in a month [count]: ``month_s / mtbf_s`` (30 days)."""
    return _nonneg("month_s", month_s) / _positive("mtbf_s", mtbf_s)


@formula("young_daly_interval_s", "{young_daly_rule}")
def young_daly_interval_s(checkpoint_write_s: Numeric, mtbf_s: Numeric, lag_per_interval: Numeric = 0.0) -> Numeric:
    """Checkpoint interval that minimises lost time [s]: ``sqrt(2 x save x MTBF / (1 + 2 k))``.

    Young's first-order optimum (Daly 2006 gives the same to first order; valid while the save
    is much shorter than the MTBF) with ``checkpoint_write_s`` the part of a save that blocks
    training. It minimises ``save / T + (T / 2 + k T) / MTBF``, where ``k T`` is how long a
    new save takes to become durable: k = 0 (Young's form) when that does not grow with the
    interval, k = 1 for an asynchronous drain sized to take the whole interval.
    ``mtbf_s`` is the whole job's. Save 60 s, MTBF 24 h, k = 0: sqrt(2 x 60 x 86400) = 3220 s.
    """
    w = _nonneg("checkpoint_write_s", checkpoint_write_s)
    k = _nonneg("lag_per_interval", lag_per_interval)
    return sqrt(2.0 * w * _positive("mtbf_s", mtbf_s) / (1.0 + 2.0 * k))


@formula(
    "checkpoint_lost_per_failure_s",
    "{checkpoint_restore_s} + {checkpoint_interval_used_s} / 2 + {checkpoint_lag_s}",
)
def lost_per_failure_s(restore_s: Numeric, interval_s: Numeric, lag_s: Numeric = 0.0) -> Numeric:
    """Training time one interruption costs [s]: ``restore + interval / 2 + lag``.

    The job reloads the last durable checkpoint (``restore_s``) and recomputes the work since
    it was taken: on average half an interval, plus ``lag_s`` when the newest save is not yet
    durable (an asynchronous drain still running: a failure in that window falls back one
    more save; averaged over the interval this adds the drain time). Scheduler requeue and
    process start-up are not counted (no public figure was found).
    """
    return _nonneg("restore_s", restore_s) + _nonneg("interval_s", interval_s) / 2.0 + _nonneg("lag_s", lag_s)


@formula(
    "goodput",
    "1 - {checkpoint_stall_share} - {checkpoint_lost_per_failure_s} / {mtbf_job_s}",
)
def goodput(stall_share: Numeric, lost_per_failure_s: Numeric, mtbf_s: Numeric) -> Numeric:
    """Share of wall-clock time spent on useful training [1] (first order, clipped to 0..1).

    ``1 - stall_share - lost_per_failure / MTBF``: saves block ``stall_share`` of the time and
    each interruption, once every MTBF, costs ``lost_per_failure``. The Llama 3 paper reports
    over 90 % effective training time for its 16K-GPU run (section 3.3.4).
    """
    waste = _nonneg("stall_share", stall_share) + _nonneg("lost_per_failure_s", lost_per_failure_s) / _positive(
        "mtbf_s", mtbf_s
    )
    return clip(1.0 - waste, 0.0, 1.0)


# ------------------------------------------------------------------ bursts: the design point
# Storage is bought for bursts, not averages: a restart has every rank read its shard at once,
# an asynchronous save drains as fast as the fabric lets it and must be durable well before the
# next one, a synchronous save stops training until it is written, and the first epoch reads
# the whole dataset before the page cache serves it. Each burst is a rate the store must reach
# and a time on a given store; ``calc.sizing`` buys for the largest and turns the time each
# option takes into GPU-hours.

DRAIN_SHARE = 0.5
"""Share of the interval an asynchronous save has to become durable [1] (``drain_target``).

Half: a save not yet durable when a failure strikes falls back one more interval (the lag adds
to the time lost per failure, ``lost_per_failure_s``), and a drain that overruns the interval
stalls the next save (``blocking_s``). Draining within half the interval keeps the lag at most
T / 2 and leaves the other half as headroom for the drain to share the store with the reads and
with other jobs. PyTorch DCP ``async_save`` lets one save be in flight at a time (the next
waits on the previous future), which is the overrun this guards against."""


@formula("checkpoint_drain_bytes_per_s", "{checkpoint_bytes} / ({drain_target} x {checkpoint_interval_used_s})")
def drain_bytes_per_s(checkpoint_bytes: Numeric, interval_s: Numeric, drain_share: Numeric = DRAIN_SHARE) -> Numeric:
    """Write rate an asynchronous save needs to be durable within ``drain_share`` of the interval
    [bytes/s]: ``checkpoint / (drain_share x interval)``. 1T, 16.56e12 B every 1,800 s at half
    the interval: 16.56e12 / 900 = 18.4 GB/s (the average over the interval is 9.2 GB/s)."""
    c = _nonneg("checkpoint_bytes", checkpoint_bytes)
    share = _arr("drain_share", drain_share)
    if any_((share <= 0) | (share > 1)):
        raise InputError("drain_target", f"{drain_share}; accepted: more than 0, at most 1 (a share of the interval)")
    return c / (share * _positive("interval_s", interval_s))


RESTORE_TARGET_S = 300.0
"""Default restart target [s] (``restore_target_s``): every rank has its shard back within 5 minutes.

Restarts are not only failures: the Llama 3 run counted 47 planned interruptions beside 419
unplanned ones in 54 days (arXiv:2407.21783, section 3.3.4), and each one has people and every
GPU of the job waiting on the read. Published designs size that read in minutes, not in a share
of the MTBF: Huawei's MindCluster resumable-training guide asks 288 GB/s of large-file sequential
reads for a 10,000-card cluster so that loading the checkpoint does not slow recovery
(hiascend.com, dl_resume_008, read 2026-11-28), which is 86 TB in 5 minutes; TrainMover holds an
interruption of a 1,024-GPU LLM job to about 20 s of downtime (arXiv:2412.12636); Gemini
(SOSP 2023) reports 42 minutes to move MT-NLG's state over 20 Gb/s as the cost it removes. Five
minutes is the slow end of these: a restart a person waits on, not one that pages them twice."""


@formula("restore_budget_s", "min({restore_target_s}, {checkpoint_stall_fraction} x {mtbf_job_s})")
def restore_budget_s(stall_fraction: Numeric, mtbf_s: Numeric, target_s: Numeric = RESTORE_TARGET_S) -> Numeric:
    """Time a restore may take [s]: ``min(restart target, stall_fraction x MTBF)``.

    The target bounds every job's restart (a person waits on it, and planned restarts come on
    top of failures); the MTBF share holds a large job's restarts within the saves' stall budget,
    as the Young-Daly accounting pays restore + recompute once per MTBF. Llama 3 at 16,384 GPUs
    (MTBF 54 d / 419 = 11,134 s), 2 %: min(300, 223) = 223 s; at 8 GPUs (MTBF 263.9 d), 2 % is
    5.3 days and the 300 s target binds.
    """
    f = _arr("stall_fraction", stall_fraction)
    if any_((f <= 0) | (f > 1)):
        raise InputError("checkpoint_stall_fraction", f"{stall_fraction}; accepted: more than 0, at most 1")
    return minimum(_positive("restore_target_s", target_s), f * _positive("mtbf_s", mtbf_s))


@formula("restore_read_bytes_per_s", "{checkpoint_restore_bytes} / {restore_budget_s}")
def restore_read_bytes_per_s(restore_bytes: Numeric, budget_s: Numeric) -> Numeric:
    """Read rate for every rank to load its shard within ``budget_s`` [bytes/s]:
    ``restore bytes / budget``. 1T (18.92e12 B read by 1,024 ranks) in 3,562 s: 5.31 GB/s."""
    return _nonneg("restore_bytes", restore_bytes) / _positive("restore_budget_s", budget_s)


def per_node(total: Numeric, nodes: Numeric) -> Numeric:
    """A burst's share on one node [same unit]: ``total / nodes`` (the nodes move it together)."""
    return _nonneg("total", total) / _at_least("nodes", nodes, 1.0, "1 or more")


def restore_requests(shard_bytes: Numeric, ranks: Numeric, part_bytes: Numeric) -> Numeric:
    """GET requests of a restore from an object store [count]: ``ranks x ceil(shard / part)``.

    Each rank reads its shard in ranged GETs of ``part_bytes`` (the 16 MiB parts it was
    uploaded in). 1T: 1,024 ranks x ceil(18.48e9 / 16,777,216) = 1,024 x 1,102 = 1,128,448."""
    return _at_least("ranks", ranks, 1.0, "1 or more") * ceil(
        _nonneg("shard_bytes", shard_bytes) / _positive("part_bytes", part_bytes) - 1e-9
    )


def restore_on_store_s(
    restore_bytes: Numeric,
    store_read_bytes_per_s: Numeric,
    shard_bytes: Numeric,
    per_rank_read_bytes_per_s: Numeric,
    load_bytes_per_s: Numeric = np.inf,
    requests: Numeric = 0.0,
    requests_per_s: Numeric = np.inf,
) -> Numeric:
    """Restore time on a given store at the units bought [s]:
    ``max(restore_time_s(...), requests / requests_per_s)``.

    ``store_read_bytes_per_s`` is what the units bought deliver (units x per-unit rate, within
    the clients' caps); an object store also limits the requests: S3 serves 5,500 GET/s per
    prefix [1], so 1T's 1,128,448 GETs on one prefix take at least 205 s, whatever the
    bandwidth. 1T (18.92e12 B) on 5 x nfs-25gbe (5 x 2.8 GB/s): 18.92e12 / 14e9 = 1,351 s =
    22.5 min, where the plan without a store says 24 s.

    References
    ----------
    [1] AWS, "Best practices design patterns: optimizing Amazon S3 performance": at least 5,500
        GET/HEAD requests per second per partitioned prefix (docs.aws.amazon.com, storage.yaml
        aws-s3-standard ``iops``).
    """
    t = restore_time_s(restore_bytes, store_read_bytes_per_s, shard_bytes, per_rank_read_bytes_per_s, load_bytes_per_s)
    floor = _nonneg("requests", requests) / _rate("requests_per_s", requests_per_s)
    return maximum(t, floor)


def first_epoch_s(dataset_bytes: Numeric, store_read_bytes_per_s: Numeric, steady_epoch_s: Numeric) -> Numeric:
    """First epoch on a given store [s]: ``max(dataset / store read rate, steady epoch)``.

    Before the page cache holds the dataset every byte comes from the store once; the GPUs
    cannot go faster than their own pace (``steady_epoch_s``). ViT-B/16 on 64 H100: 146.9 GB at
    12.63 GB/s takes 11.6 s at GPU pace; from 2 mirrored HDDs (2 x 285 MB/s) 258 s.
    """
    d = _nonneg("dataset_bytes", dataset_bytes)
    return maximum(
        d / _rate("store_read_bytes_per_s", store_read_bytes_per_s), _nonneg("steady_epoch_s", steady_epoch_s)
    )


def idle_gpu_hours(seconds: Numeric, gpus: Numeric, times_per_month: Numeric = 1.0) -> Numeric:
    """GPU-hours a month lost to a wait [GPU-h]: ``seconds x gpus x times a month / 3600``.

    1T's 22.5 min restore x 1,024 GPUs x 14.5 failures a month = 1,351 x 1,024 x 14.56 / 3600.
    """
    return _nonneg("seconds", seconds) * _nonneg("gpus", gpus) * _nonneg("times_per_month", times_per_month) / 3600.0
