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
    """One entry's checkpoint figures for its ``n`` copies [bytes/s, bytes].

    One job writes ``w`` while it saves (a sync burst, or an async drain that runs all the time);
    ``peak`` is all copies at once; ``average`` n x C / T (T the resolved interval, given
    or Young-Daly); ``extra_aligned`` what the saves add over the entry's reads when all copies
    save at once; ``extra_one`` what one copy's save adds.
    """
    w = p.checkpoint_write_bytes_per_s / n  # the plan's rate is all n copies' (its jobs input is n)
    saving = w > 0
    interval = float(p.values["checkpoint_interval_used_s"]) if saving else math.inf
    average = n * p.checkpoint_bytes / interval if saving and math.isfinite(interval) and interval > 0 else 0.0
    reads = p.read_bytes_per_s
    is_async = saves_async(p)
    return {
        "peak": n * w,
        "average": average,
        "async": float(is_async),
        "extra_aligned": n * w if is_async else max(n * w - reads, 0.0),
        "extra_one": w if is_async else max(w - reads / n, 0.0),
        "kept": p.checkpoint_capacity_bytes if saving else 0.0,  # all n copies' already
    }


def write_need_bytes_per_s(writes: Sequence[Mapping[str, float]], saves: str) -> float:
    """Bandwidth the checkpoint saves add to the reads [bytes/s], aligned or staggered.

    Async drains run all the time (their sum counts in both modes). Aligned: every sync job saves
    at once, each pausing its reads. Staggered: sync saves spread out, so the storage carries the
    largest single save beyond its job's reads, or, when saves are so frequent that they must
    overlap, their time average (sum of n x C / T).
    """
    drains = sum(w["extra_aligned"] for w in writes if w["async"])
    sync = [w for w in writes if not w["async"]]
    if saves == "aligned":
        return drains + sum(w["extra_aligned"] for w in sync)
    one = max((w["extra_one"] for w in sync), default=0.0)
    return drains + max(one, sum(w["average"] for w in sync))


def _save_starts(cp: ClusterJobs, seconds: float) -> list[tuple[npt.NDArray[np.float64], float]]:
    """Each entry's sync save start times within ``seconds`` (every copy's) and one save's length [s].

    Saves start at t = 0 (aligned) or are spread evenly over the shortest interval by a global
    index of all sync-saving copies (staggered): copy g starts at g / N of the shortest interval,
    so saves whose intervals are multiples of it never meet while each lasts less than shortest / N.
    Intervals and modes are the plans' resolved ones. Work: one array per entry, linear in the saves.
    """
    sync = [(p.checkpoint_write_bytes_per_s > 0 and not saves_async(p)) for p in cp.plans]
    total = sum(n for n, s in zip(cp.copies, sync, strict=True) if s)
    intervals = [float(p.values["checkpoint_interval_used_s"]) for p in cp.plans]
    shortest = min((t for t, s in zip(intervals, sync, strict=True) if s), default=1.0)
    out: list[tuple[npt.NDArray[np.float64], float]] = []
    first = 0  # the global index of this entry's first sync-saving copy
    for p, n, s, interval in zip(cp.plans, cp.copies, sync, intervals, strict=True):
        if not s:
            out.append((np.zeros(0), 0.0))
            continue
        dur = min(p.checkpoint_bytes * n / p.checkpoint_write_bytes_per_s, interval)  # one copy's save
        phases = np.zeros(n) if cp.saves == "aligned" else shortest * np.arange(first, first + n) / total
        first += n
        k = np.arange(math.ceil(seconds / interval) + 1)
        starts = (phases[:, None] + k[None, :] * interval).ravel()
        out.append((np.sort(starts[starts < seconds]), dur))
    return out


def timeline(cp: ClusterJobs, seconds: float = 86400.0) -> pd.DataFrame:
    """Each job type's reads and checkpoint writes over ``seconds`` [bytes/s], as step segments.

    Columns: time_s (start of a segment; the rate holds until the next row), then
    ``<job> reads`` and ``<job> checkpoints`` per entry. A sync save pauses its copy's reads for
    C / w seconds (``_save_starts``); an async drain writes C / T all the time. Each segment counts
    the saves running in it as (saves started by then) - (saves ended by then), two sorted searches.
    """
    saves = _save_starts(cp, seconds)
    edges = [np.array([0.0, float(seconds)])]
    for starts, dur in saves:
        edges += [starts, np.minimum(starts + dur, seconds)]
    times = np.unique(np.concatenate(edges))
    starts_t = times[:-1]
    cols: dict[str, Any] = {"time_s": starts_t}
    for p, n, (starts, dur) in zip(cp.plans, cp.copies, saves, strict=True):
        w = p.checkpoint_write_bytes_per_s / n  # one copy's rate
        ends = np.sort(np.minimum(starts + dur, seconds))
        saving_now = (
            np.searchsorted(starts, starts_t, side="right") - np.searchsorted(ends, starts_t, side="right")
        ).astype(float)
        per_copy = p.read_bytes_per_s / n
        cols[f"{p.scenario.name} reads"] = per_copy * (n - saving_now)
        # an async drain writes all the time; a job that never saves has w = 0 either way
        cols[f"{p.scenario.name} checkpoints"] = np.full(len(starts_t), n * w) if saves_async(p) else saving_now * w
    return pd.DataFrame(cols)
