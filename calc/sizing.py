"""Storage recommendations and inverse sizing from a plan (docs/model.md sections 7.3 and 7.5).

recommend(): for every storage option, the units needed on each axis (IOPS at the plan's
read size, bandwidth, capacity), whether it can serve the demand at all (per-client caps,
system size), headroom, cost and caveats: the sizing engine (calc.engine) run on the plan's demand.
max_gpus(), largest_example_bytes(), fewest_workers(): the largest job, example or the fewest
workers the plan itself says are fed.

The complete designs are in calc.design, the what-if levers in calc.lever, the answer and its
sentences in calc.answers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from calc import engine as en
from calc import storage as st
from calc import sweep as sw
from calc.engine import plan_demand
from calc.errors import InputError
from calc.plan import Plan, as_scenario, plan
from calc.scenario import FIELDS, Scenario, check_field
from calc.sweep import evaluate_over
from calc.units import HOURS_PER_MONTH, fmt, parse

PlanLike = Plan | Scenario | str

__all__ = [
    "PlanLike",
    "as_plan",
    "check_argument",
    "engine_feeds",
    "fewest_workers",
    "largest_example_bytes",
    "max_gpus",
    "nodes_reading",
    "rank_plan",
    "recommend",
]


def as_plan(x: PlanLike, overrides: dict[str, Any] | None = None) -> Plan:
    if isinstance(x, Plan) and not overrides:
        return x
    return plan(as_scenario(x, **(overrides or {})))


def _as_scenario(x: PlanLike, overrides: dict[str, Any]) -> Scenario:
    return as_scenario(x, **overrides)


def nodes_reading(p: Plan) -> int:
    """Nodes reading at once (the plan's ``clients``: calc.stages, one formula)."""
    return int(p.values["clients"])


def recommend(x: PlanLike, /, **overrides: Any) -> pd.DataFrame:
    """One row per storage option: can it serve the plan's demand, with how many units.

    The sizing engine run on the plan's demand (``calc.engine``: size per axis, protect, enclose, rule
    out, caveats, price, rank). Columns: ``calc.engine.COLUMNS``, each declared there once with its
    unit and meaning (option, feasible, units, limiting, why_not, headrooms, the month's charges,
    purchase_usd, monthly_total_usd, capacity, protection, wear, caveats, ...). Feasible rows first,
    then cheapest.
    """
    return rank_plan(as_plan(x, overrides), reads=True)


def rank_plan(p: Plan, reads: bool) -> pd.DataFrame:
    """``recommend``'s table: the engine run on the plan's demand; ``reads=False`` sizes a store that
    only holds the dataset and takes the checkpoints (the tier behind a local cache that serves every read)."""
    return en.rank(plan_demand(p, reads))


def check_argument(arg: str, field: str, value: Any) -> Any:
    """One argument of a sizing function, validated as the Scenario input ``field`` it sets
    (its kind and range), with errors naming the argument."""
    try:
        return check_field(field, value)
    except InputError as e:
        raise InputError(arg, e.message) from None


def _storage_fed(out: Mapping[str, Any]) -> Any:
    """Rows where the plan's storage stage delivers the demand per GPU (within rounding)."""
    demand_per_gpu = np.asarray(out["per_gpu_samples_per_s"], dtype=float)
    return np.asarray(out["storage_samples_per_s_per_gpu"], dtype=float) >= demand_per_gpu * (1 - 1e-9)


def engine_feeds(
    d: en.Demand, option: st.StorageOption | None, units: float | None, bw: float | None, iops: float | None
) -> bool:
    """Whether a store carries demand ``d`` by the engine's rules.

    An option: the working units the engine sizes for ``d`` (per axis, with the checkpoint writes
    amplified by the protection, the capacity and the drives' endurance: ``calc.engine.size_option``)
    are at most ``units`` (none given: at most the option's maximum), and no rule that grows with the GPU count rules it
    out. A bandwidth and/or IOPS: the demand's need (reads plus the checkpoint writes that run beside
    or instead of them, ``Demand.need_bytes_per_s``) and its reads/s are within them.
    """
    if bw is not None and d.need_bytes_per_s > bw * (1 + 1e-9):
        return False
    if iops is not None and d.read_iops > iops * (1 + 1e-9):
        return False
    if option is None or bw is not None or iops is not None:
        return True  # given figures replace the option's: the plan's storage stage judged them
    s = en.size_option(option, d)
    # Working units (data drives): a protection's extra drives are bought on top, as the plan's
    # storage stage reads ``storage_units`` as drives that serve reads.
    if s.perf_units > (units if units is not None else option.max_units):
        return False
    return not any(r.check(option, d, s) for r in en.RULES if r.scales_with_gpus)


def _last_true(ok: Any) -> int:
    """Index of the last True in ``ok``, -1 if none."""
    hits = np.flatnonzero(ok)
    return int(hits[-1]) if hits.size else -1


class GpuCount(int):
    """``max_gpus``' answer: a whole number of GPUs, and ``why``: what stops the next group (issue
    39: a bandwidth and IOPS alone and the same figures as a storage YAML gave 23 and 20 GPUs with
    no word why; the YAML's per-client cap, latency or rated read size is the difference, and
    ``why`` names it)."""

    why: str

    def __new__(cls, n: int, why: str = "") -> GpuCount:
        out = super().__new__(cls, n)
        out.why = why
        return out


def max_gpus(
    sc: PlanLike,
    /,
    storage: str | None = None,
    units: float | None = None,
    read_bytes_per_s: float | str | None = None,
    read_iops: float | str | None = None,
    **overrides: Any,
) -> GpuCount:
    """How many GPUs of this job a storage system keeps at the scenario's target utilisation.

    Read from the plan itself: the largest ``gpus_per_job`` (whole model-parallel groups, at
    least ``state_shards``, one job) whose plan with this storage has a storage stage of at least
    the demand per GPU. So the page cache and local cache (the remote fraction), the scaling
    efficiency at that GPU count, the nodes reading (per-client caps), the read size and the
    readers' latency (Little's law) all count exactly as in ``plan()``.

    Give a storage option (``units``: a whole number; none = as many as needed, up to the
    option's maximum, as in a plan); or a bandwidth and/or IOPS alone (no option: reads take the
    scenario's ``storage_latency_s``, else 1 ms); or both (they override the option's figures, as
    ``storage_bytes_per_s``/``storage_iops`` do in a plan); none of them: the scenario's own
    storage. 0 when even the smallest job is not fed. The count's ``why`` says what the next group
    of GPUs would lack (``binding``).

    Raises
    ------
    InputError
        Bad arguments (naming them), no storage at all, or no limit: the caches serve every read
        after the first epoch, or more than the largest job a plan takes (1,000,000 GPUs) is fed.
    """
    s = _as_scenario(sc, overrides)
    change = _storage_change(s, storage, units, read_bytes_per_s, read_iops)
    mp = gpu_group(s)
    k0 = max(1, math.ceil(s.state_shards / mp))
    kmax = int(float(FIELDS["gpus_per_job"].maximum or 1e6) // mp)
    base = s.replace(**change, gpus_per_job=k0 * mp)
    plan(base)  # the smallest job is a valid plan (it raises, naming the input, if not)
    # Every group count up to 2,048 more, then 2,000 steps of 0.3 % to the largest job.
    ks = np.arange(k0, min(k0 + 2048, kmax + 1), dtype=float)
    if kmax > ks[-1]:
        ks = np.unique(np.concatenate([ks, np.round(np.geomspace(ks[-1] + 1, kmax, 2000))]))
    out = evaluate_over(base, "gpus_per_job", ks * mp)
    ok = _storage_fed(out)
    i = _last_true(ok)
    if i == len(ks) - 1:
        remote = np.asarray(out["remote_fraction"], dtype=float)
        what = storage or ("the given bandwidth/IOPS" if len(change) > 1 else s.storage or "the storage")
        if np.all(remote == 0):
            raise InputError(
                "storage",
                f"after the first epoch the page cache (or the local cache) serves every read (0 % reach storage): "
                f"{what} limits no GPU count in steady state",
            )
        raise InputError("storage", f"{what} feeds more than {kmax * mp:,} GPUs, the largest job a plan takes")
    if i < 0:
        return GpuCount(0, binding(base, k0 * mp))
    # Between the last fed grid point and the next: each group count.
    k = int(ks[i])
    between = np.arange(ks[i] + 1, ks[i + 1], dtype=float)
    if between.size:
        j = _last_true(_storage_fed(evaluate_over(base, "gpus_per_job", between * mp)))
        if j >= 0:
            k = int(between[j])
    n = _engine_largest(base, k0, k, mp)
    return GpuCount(n, binding(base, n + mp))


def binding(base: Scenario, gpus: int) -> str:
    """What ``gpus`` GPUs of this job would lack on its storage, in one sentence: the storage stage's
    terms (bandwidth, reads/s, reads in flight over the latency, file opens on the metadata service)
    at that count, else the engine's sizing (checkpoint writes, capacity, a rule)."""
    p = plan(base.replace(gpus_per_job=gpus))
    v, need = p.values, p.per_gpu_samples_per_s
    miss, readers, reads = v["remote_fraction"], gpus * base.jobs, v["reads_per_example"]
    in_flight = max(base.reader_concurrency if base.loader == "async" else base.num_workers, 1)
    with np.errstate(divide="ignore", invalid="ignore"):  # the terms of calc.pipeline.storage_stage
        terms = {
            f"bandwidth: {fmt(v['storage_bytes_per_s'], 'bytes_per_s')} supplied (per-client caps counted, "
            f"{v['clients']:g} node(s) read)": v["storage_bytes_per_s"] / (p.inputs["example_bytes"] * miss) / readers,
            f"reads/s: {fmt(v['storage_iops'], 'count_per_s', 'reads/s')} supplied at "
            f"{fmt(v['request_bytes'], 'bytes', binary=True)}": v["storage_iops"] / (reads * miss) / readers,
            f"reads in flight: {in_flight} a GPU over {fmt(v['storage_latency_s'], 'seconds')} a read": in_flight
            / (v["storage_latency_s"] * reads * miss),
            "metadata service (file opens)": p.stages.get("storage", math.inf),
        }
    short = {k: x for k, x in terms.items() if x < need * (1 - 1e-9)}
    if short:
        what = min(short, key=lambda k: short[k])
        return f"at {gpus:,} GPUs ({fmt(need * gpus, 'count_per_s', 'samples/s')} needed) the {what} binds"
    return f"at {gpus:,} GPUs " + _engine_binding(base, p)


def _engine_binding(base: Scenario, p: Plan) -> str:
    """What the engine's sizing finds short where the plan's storage stage still feeds the reads."""
    d = plan_demand(p)
    if not base.storage or base.storage_bytes_per_s is not None or base.storage_iops is not None:
        return (
            f"the reads plus the checkpoint writes beside them need {fmt(d.need_bytes_per_s, 'bytes_per_s')} "
            "and more than the bandwidth given"
        )
    o = st.option(base.storage)
    s = en.size_option(o, d)
    have = base.storage_units if base.storage_units is not None else o.max_units
    if s.perf_units > have:
        return (
            f"{o.name} would need {en.whole(s.perf_units):g} {o.unit}(s) by {s.limiting} (the engine's sizing, "
            f"with checkpoint writes, protection and ratings), more than the {have:g} it has"
        )
    failed = next((r for r in en.RULES if r.scales_with_gpus and r.check(o, d, s)), None)
    return f"{o.name} is ruled out: {failed.check(o, d, s)}" if failed else "the engine's sizing binds"


def gpu_group(s: Scenario) -> int:
    """The GPUs a job grows by, so that every count ``max_gpus`` tries is a layout the plan takes:
    tensor x pipeline parallel ranks x the least data- x context-parallel ranks that context
    parallelism, the shard group and expert parallelism each divide (issue 39: context parallelism
    was left out, so max_gpus tried counts a plan refuses and named a count the user never gave)."""
    return s.tensor_parallel * s.pipeline_parallel * math.lcm(s.context_parallel, s.shard_group or 1, s.expert_parallel)


def _storage_change(
    s: Scenario,
    storage: str | None,
    units: float | None,
    read_bytes_per_s: float | str | None,
    read_iops: float | str | None,
) -> dict[str, Any]:
    """The inputs ``max_gpus`` changes: one job, on the storage its arguments give (each checked
    as the input it stands for), or on the scenario's own storage when they give none."""
    n_units = None if units is None else check_argument("units", "storage_units", units)
    if storage is None and units is not None:
        raise InputError("units", "units need a storage option; accepted: storage=NAME with units=N")
    change: dict[str, Any] = {"jobs": 1}
    if storage is not None or read_bytes_per_s is not None or read_iops is not None:
        change |= {
            "storage": None if storage is None else check_argument("storage", "storage", storage),
            "storage_units": n_units,
            "storage_bytes_per_s": None
            if read_bytes_per_s is None
            else check_argument("read_bytes_per_s", "storage_bytes_per_s", read_bytes_per_s),
            "storage_iops": None if read_iops is None else check_argument("read_iops", "storage_iops", read_iops),
        }
        if storage is not None:
            change["storage_latency_s"] = None  # the option's own latency, not the scenario's storage's
    elif s.storage is None and s.storage_bytes_per_s is None and s.storage_iops is None:
        raise InputError("storage", "give a storage option, read_bytes_per_s or read_iops")
    return change


def _engine_largest(base: Scenario, k0: int, k: int, mp: int) -> int:
    """The largest GPU count up to ``k`` groups that the engine also finds fed (``engine_feeds`` on
    the plan's demand): the plan's storage stage counts the reads (caches, latency, scaling); the
    engine adds the checkpoint writes, capacity, protection and endurance. Demand grows with the GPU
    count, so a bisection finds it."""
    opt = st.option(base.storage) if base.storage else None
    bw = parse(base.storage_bytes_per_s, "bytes_per_s", "storage_bytes_per_s") if base.storage_bytes_per_s else None
    iops = float(base.storage_iops) if base.storage_iops is not None else None

    def fed(groups: int) -> bool:
        d = plan_demand(plan(base.replace(gpus_per_job=groups * mp)))
        return engine_feeds(d, opt, base.storage_units, bw, iops)

    if fed(k):
        return k * mp
    if not fed(k0):
        return 0
    lo, hi = k0, k  # fed(lo), not fed(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fed(mid) else (lo, mid)
    return lo * mp


def largest_example_bytes(sc: PlanLike, /, **overrides: Any) -> float:
    """Largest on-disk example [bytes] the scenario's storage still serves at its GPU count.

    Read from the plan itself: the largest ``example_bytes`` whose plan has a storage stage of at
    least the demand per GPU, so the page cache (the dataset grows with the example), the read
    size, IOPS and latency count as in ``plan()``. Found on a log grid to 1e-9 relative. 0 when
    even a 1-byte example is not served (IOPS or latency bound).

    Raises
    ------
    InputError
        No storage limit in the scenario, or none up to 1 PB per example.
    """
    s = _as_scenario(sc, overrides)
    plan(s)  # a valid plan (it raises, naming the input, if not)
    if s.storage is None and s.storage_bytes_per_s is None and s.storage_iops is None:
        raise InputError("storage", "set storage (with storage_units) or storage_bytes_per_s to bound the example size")
    info = FIELDS["example_bytes"]
    lo, hi = float(info.minimum or 1.0), float(info.maximum or 1e15)
    grid = np.geomspace(lo, hi, 2001)
    ok = _storage_fed(evaluate_over(s, "example_bytes", grid))
    i = _last_true(ok)
    if i == len(grid) - 1:
        raise InputError("storage", f"the storage serves examples of every size up to {fmt(hi, 'bytes')}")
    if i < 0:
        return 0.0
    for _ in range(3):  # each pass narrows the bracket 2,000-fold: to 1e-9 relative in three
        grid = np.geomspace(grid[i], grid[i + 1], 2001)
        i = _last_true(_storage_fed(evaluate_over(s, "example_bytes", grid)))
    return float(grid[i])


def fewest_workers(sc: PlanLike, /, most: int = 256, **overrides: Any) -> int:
    """Fewest DataLoader workers per GPU that reach the target utilisation.

    Each count is evaluated as ``plan()`` does (the workers stage, Little's law on reads, CPU
    cores), in one vectorised evaluation.

    Raises
    ------
    InputError
        ``num_workers``: no count up to ``most`` reaches it, saying what the job reaches at
        ``most`` workers and which stage binds there (main returned -1, explained only here).
    """
    s = _as_scenario(sc, overrides)
    n = check_argument("most", "num_workers", most)
    if n < 1:
        raise InputError("most", f"{n}; accepted: a whole number of workers from 1 to 1024")
    plan(s)
    out = evaluate_over(s, "num_workers", np.arange(1, n + 1, dtype=float))
    util = np.asarray(out["gpu_utilization"], dtype=float)
    fed = np.flatnonzero(util >= s.target_gpu_utilization - 1e-9)
    if fed.size:
        return int(fed[0]) + 1
    at_most = plan(s.replace(num_workers=n))
    raise InputError(
        "num_workers",
        f"no count up to {n} reaches the target utilisation of {s.target_gpu_utilization:.0%}: at {n} workers "
        f"the job reaches {at_most.gpu_utilization:.0%}, bound by {at_most.bottleneck}"
        + (" (more workers do not help; fix that stage)" if at_most.bottleneck != "workers" else f" (try most > {n})"),
    )


def sweep(base: Scenario | str | None = None, /, *, cost: bool = False, **axes: Any) -> pd.DataFrame:
    """``calc.sweep``: every combination of ``axes`` on top of ``base`` (``calc.sweep.sweep``), and
    with ``cost=True`` what each row costs a month (the engine run on each row's plan, about 10 ms a
    row, so it is asked for):

    - ``storage``: the cheapest option that serves the row (``recommend``'s first feasible row, at
      the row's site when it has one; empty where none does or the model does not fit);
    - ``storage_usd_per_month``: that option all in, its purchase amortised (NaN: none);
    - ``gpu_usd_per_month``: the row's GPUs (per job x jobs) x their price per GPU-hour x 720 h
      (``gpu_price_per_hour``, else gpus.yaml's on-demand price; NaN: none).
    """
    df = sw.sweep(base, **axes)
    if not cost:
        return df
    sc = as_scenario(base)
    names = list(axes)
    rows: list[tuple[str, float, float]] = []
    for combo in itertools.product(*(sw.axis_values(k, v) for k, v in axes.items())):
        rows.append(_row_cost(sc.replace(**dict(zip(names, combo, strict=True)))))
    costs = pd.DataFrame(rows, columns=["storage", "storage_usd_per_month", "gpu_usd_per_month"], index=df.index)
    return pd.concat([df, costs], axis=1)


def _row_cost(s: Scenario) -> tuple[str, float, float]:
    """One sweep row's cheapest serving option, its monthly total and its GPUs' month [USD]."""
    price, _ = en.gpu_price_per_hour(s.gpu, s.gpu_price_per_hour)
    gpus = s.gpus_per_job * s.jobs * price * HOURS_PER_MONTH
    try:
        rec = recommend(s)
    except InputError:  # the model does not fit: no step, nothing to feed
        return "", math.nan, gpus
    ok = rec[rec["feasible"]]
    if ok.empty:
        return "", math.nan, gpus
    return str(ok["option"].iloc[0]), float(ok["monthly_total_usd"].iloc[0]), gpus
