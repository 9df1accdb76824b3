"""A cluster's checkpoint saves and their figures in time (docs/model.md, "The cluster plan").

The per-entry write figures, the write need of aligned or staggered saves, the day's timeline and
the combined figures' declarations (unit and label, once). Below calc.cluster and the presentation
modules (calc.plots draws the day from ``timeline``; calc.report formats ``TOTALS``), so neither
imports calc.cluster at run time.

References
----------
.. [1] Young, J. W. "A first order approximation to the optimum checkpoint interval",
   Communications of the ACM 17(9), 1974 (why saves are periodic, interval T).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pandas as pd

from calc import checkpoint as ck
from calc.plan import Plan
from calc.units import Kind, fmt


class ClusterJobs(Protocol):
    """What the day's timeline reads of a cluster plan (calc.cluster.ClusterPlan, which sits above
    this module and builds its figures from it): each entry's plan, its copies and how saves fall."""

    @property
    def plans(self) -> tuple[Plan, ...]: ...
    @property
    def copies(self) -> tuple[int, ...]: ...
    @property
    def saves(self) -> str: ...


TOTALS: dict[str, tuple[Kind, str, str]] = {
    "read_bytes_per_s": ("bytes_per_s", "", "reads, all jobs"),
    "read_iops": ("count_per_s", "reads/s", "read requests, all jobs"),
    "file_opens_per_s": ("count_per_s", "/s", "file opens, all jobs"),
    "metadata_ops_per_s": ("count_per_s", "ops/s", "metadata operations, all jobs"),
    "first_epoch_read_bytes_per_s": ("bytes_per_s", "", "reads when every job starts at once"),
    "start_burst_read_bytes_per_s": ("bytes_per_s", "", "reads when one job starts, the others run"),
    "peak_write_bytes_per_s": ("bytes_per_s", "", "checkpoint writes when every job saves at once"),
    "average_write_bytes_per_s": ("bytes_per_s", "", "checkpoint writes on average"),
    "write_need_bytes_per_s": ("bytes_per_s", "", "what the saves add to the reads"),
    "storage_need_bytes_per_s": ("bytes_per_s", "", "reads and the write need"),
    "dataset_bytes": ("bytes", "", "datasets, each once"),
    "checkpoint_capacity_bytes": ("bytes", "", "checkpoints kept, all jobs"),
    "stored_bytes": ("bytes", "", "datasets and kept checkpoints"),
}
"""The combined figures of a ClusterPlan, each with its unit kind, count unit and label (declared once)."""


def fmt_total(key: str, value: float) -> str:
    """One combined figure in its unit (``TOTALS``)."""
    kind, unit, _ = TOTALS[key]
    return fmt(value, kind, unit) if unit else fmt(value, kind)


def saves_async(p: Plan) -> bool:
    """The plan's resolved save mode: ``auto`` is async for sharded state (calc.resolve)."""
    return bool(p.values["checkpoint_async"] > 0)


def _writes(p: Plan, n: int) -> dict[str, float]:
    """One entry's checkpoint figures for its ``n`` copies [bytes/s, bytes; ``duty`` a fraction].

    One copy writes ``w`` while it saves, the burst its plan is sized for (a sync save within its
    stall budget, an async drain within its drain target: ``checkpoint_save_burst_bytes_per_s``),
    for C / w of every interval T (``duty`` = C / (w T)); ``peak`` is all copies at once;
    ``average`` n x C / T (T the resolved interval, given or Young-Daly). How a save shares the store
    with the reads is ``calc.checkpoint.save_with_reads``: a sync save pauses its reads, an async
    drain runs beside them. ``need_aligned`` is what the entry's store must carry when all its
    copies save at once (the plan's own ``storage_need_bytes_per_s``), ``extra_aligned`` what that
    adds over its reads; ``need_one`` is one copy's reads with its save, ``extra_one`` what that adds
    over the copy's reads, ``average_extra`` n x ``extra_one`` x ``duty``: the extra's time average.
    """
    peak = p.checkpoint_save_burst_bytes_per_s  # the plan's rate is all n copies' (its jobs input is n)
    w = peak / n
    saving = w > 0
    interval = float(p.values["checkpoint_interval_used_s"]) if saving else math.inf
    timed = saving and math.isfinite(interval) and interval > 0
    average = n * p.checkpoint_bytes / interval if timed else 0.0
    reads = p.read_bytes_per_s
    is_async = saves_async(p)
    need = float(ck.save_with_reads(reads, peak, is_async))
    need_one = float(ck.save_with_reads(reads / n, w, is_async))
    duty = min(p.checkpoint_bytes / (w * interval), 1.0) if timed else 0.0
    return {
        "peak": peak,
        "average": average,
        "async": float(is_async),
        "need_aligned": need,
        "extra_aligned": need - reads,
        "copy_reads": reads / n,
        "need_one": need_one,
        "extra_one": need_one - reads / n,
        "average_extra": n * (need_one - reads / n) * duty,
        "duty": duty,
        "kept": p.checkpoint_capacity_bytes if saving else 0.0,  # all n copies' already
    }


def storage_need_bytes_per_s(writes: Sequence[Mapping[str, float]], reads: float, saves: str) -> float:
    """What the store carries while the saves run [bytes/s], aligned or staggered; ``reads`` is every entry's.

    Aligned: every copy of every entry saves at once; each entry's need is its reads with its saves
    (``need_aligned``), and the needs add. Staggered: the saves are spread out, so the store carries
    every read with the largest single save beside (async) or instead of (sync) its copy's reads;
    or, when saves are so frequent that they must overlap, every read plus the time average of each
    save's extra (``average_extra``). A 1-job cluster's need is its plan's ``storage_need_bytes_per_s``.
    """
    if saves == "aligned":
        return float(sum(w["need_aligned"] for w in writes))
    one = max(((reads - w["copy_reads"]) + w["need_one"] for w in writes), default=reads)
    return max(one, reads + sum(w["average_extra"] for w in writes))


def _save_starts(cp: ClusterJobs, seconds: float) -> list[tuple[npt.NDArray[np.float64], float]]:
    """Each entry's save start times within ``seconds`` (every copy's) and one save's length [s].

    A save, sync or async, writes at its burst (``_writes``) for C / w seconds. Saves start at t = 0
    (aligned) or are spread evenly over the shortest interval by a global index of all saving copies
    (staggered): copy g starts at g / N of the shortest interval, so saves whose intervals are
    multiples of it never meet while each lasts less than shortest / N. Intervals and modes are the
    plans' resolved ones. Work: one array per entry, linear in the saves.
    """
    saving = [p.checkpoint_save_burst_bytes_per_s > 0 for p in cp.plans]
    total = sum(n for n, s in zip(cp.copies, saving, strict=True) if s)
    intervals = [float(p.values["checkpoint_interval_used_s"]) for p in cp.plans]
    shortest = min((t for t, s in zip(intervals, saving, strict=True) if s), default=1.0)
    out: list[tuple[npt.NDArray[np.float64], float]] = []
    first = 0  # the global index of this entry's first saving copy
    for p, n, s, interval in zip(cp.plans, cp.copies, saving, intervals, strict=True):
        if not s:
            out.append((np.zeros(0), 0.0))
            continue
        dur = min(p.checkpoint_bytes * n / p.checkpoint_save_burst_bytes_per_s, interval)  # one copy's save
        phases = np.zeros(n) if cp.saves == "aligned" else shortest * np.arange(first, first + n) / total
        first += n
        k = np.arange(math.ceil(seconds / interval) + 1)
        starts = (phases[:, None] + k[None, :] * interval).ravel()
        out.append((np.sort(starts[starts < seconds]), dur))
    return out


def timeline(cp: ClusterJobs, seconds: float = 86400.0) -> pd.DataFrame:
    """Each job type's reads and checkpoint writes over ``seconds`` [bytes/s], as step segments.

    Columns: time_s (start of a segment; the rate holds until the next row), then
    ``<job> reads`` and ``<job> checkpoints`` per entry. A save writes at its burst for C / w seconds
    (``_save_starts``): a sync save pauses its copy's reads meanwhile, an async drain runs beside
    them. Each segment counts the saves running in it as (saves started by then) - (saves ended by
    then), two sorted searches.
    """
    saves = _save_starts(cp, seconds)
    edges = [np.array([0.0, float(seconds)])]
    for starts, dur in saves:
        edges += [starts, np.minimum(starts + dur, seconds)]
    times = np.unique(np.concatenate(edges))
    starts_t = times[:-1]
    cols: dict[str, Any] = {"time_s": starts_t}
    for p, n, (starts, dur) in zip(cp.plans, cp.copies, saves, strict=True):
        w = p.checkpoint_save_burst_bytes_per_s / n  # one copy's rate
        ends = np.sort(np.minimum(starts + dur, seconds))
        saving_now = (
            np.searchsorted(starts, starts_t, side="right") - np.searchsorted(ends, starts_t, side="right")
        ).astype(float)
        per_copy = p.read_bytes_per_s / n
        # a sync save pauses its copy's reads; a job that never saves has no saves running
        paused = 0.0 if saves_async(p) else saving_now
        cols[f"{p.scenario.name} reads"] = per_copy * (n - paused)
        cols[f"{p.scenario.name} checkpoints"] = saving_now * w
    return pd.DataFrame(cols)
