"""The cluster plan: many different jobs on one storage system, one answer, what each job gets.

``cluster(jobs, **inputs)`` evaluates each job type's Plan on the shared storage settings and adds
their demands (docs/model.md, "The cluster plan")::

    read_bytes_per_s     = sum_j read_j                  (each entry's Plan counts its copies)
    peak writes, aligned = sum_j n_j x w_j               (every job saves at once, each at its burst w_j)
    average writes       = sum_j n_j x C_j / T_j         (checkpoint bytes per interval)
    need, aligned        = sum_j with(read_j, n_j w_j)
    need, staggered      = reads + max(max_j (with(read_j / n_j, w_j) - read_j / n_j),
                                       sum_j n_j x (with(read_j / n_j, w_j) - read_j / n_j) x C_j / (w_j T_j))
    write need           = need - reads
    stored_bytes         = sum over distinct dataset names of the dataset + sum_j n_j x checkpoints kept

``with`` is ``calc.checkpoint.save_with_reads``, the one rule for a save beside the reads that the
plan, the engine and the storage supply also call: a blocking (sync) save stops that job's reads
while it writes, so its write adds only what exceeds its reads; an async drain runs beside them.
Each save is taken at the burst the job is sized for (``checkpoint_save_burst_bytes_per_s``: a sync
save within its stall budget, an async drain within its drain target), so a 1-job cluster needs
what its plan's ``storage_need_bytes_per_s`` says. The cluster's inputs are ``calc.cluster_input``'s.

``answer(cluster_plan)`` (re-exported as ``calc.cluster_answer``; ``calc.answer`` dispatches here)
sizes every storage option for the combined load with ``calc.sizing.recommend``'s own ranking,
shares a shortfall of the given storage between the jobs (``policy``: ``demand`` gives every job
the same fraction of its demand; ``max-min`` gives every GPU an equal share of the binding axis,
water-filling, so small jobs are served in full), projects growth, and splits the monthly cost.

References
----------
.. [1] Young, J. W. "A first order approximation to the optimum checkpoint interval",
   Communications of the ACM 17(9), 1974 (why saves are periodic, interval T).
.. [2] Bertsekas, D. and Gallager, R. "Data Networks", 2nd ed., section 6.5.2: max-min fairness
   (the water-filling share used by ``policy="max-min"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import pandas as pd

from calc import answers as an
from calc import demand
from calc import engine as en
from calc import storage as st
from calc.cluster_input import STORAGE_INPUTS, Cluster, as_cluster
from calc.cluster_load import TOTALS, _writes, storage_need_bytes_per_s
from calc.design import buyable, describe_option
from calc.engine import checkpoint_writes_per_month
from calc.errors import InputError
from calc.plan import Plan, plan
from calc.site import DEFAULT_SITE, job_site
from calc.sizing import PlanLike
from calc.units import MONTH_S, Kind, fmt, fmt_usd, parse

# ------------------------------------------------------------------ the cluster plan


@dataclass(frozen=True)
class ClusterPlan:
    """Each job's Plan on the shared storage and the combined demand [base units].

    Each entry's Plan runs ``count`` copies (its ``jobs`` input times ``count``), so its rates
    are the entry's totals; ``copies[i]`` is that number.
    """

    cluster: Cluster
    plans: tuple[Plan, ...]
    copies: tuple[int, ...]
    read_bytes_per_s: float
    read_iops: float
    file_opens_per_s: float
    metadata_ops_per_s: float
    first_epoch_read_bytes_per_s: float
    start_burst_read_bytes_per_s: float
    peak_write_bytes_per_s: float
    average_write_bytes_per_s: float
    write_need_bytes_per_s: float
    storage_need_bytes_per_s: float
    dataset_bytes: float
    checkpoint_capacity_bytes: float
    stored_bytes: float
    datasets: Mapping[str, float]
    clients: int
    gpus: int
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def saves(self) -> str:
        return self.cluster.saves

    @property
    def restarts(self) -> str:
        return self.cluster.restarts

    @property
    def request_bytes(self) -> float:
        """Mean bytes per read over all jobs [bytes] (total bytes / total reads)."""
        return self.read_bytes_per_s / self.read_iops if self.read_iops > 0 else 0.0

    @property
    def title(self) -> str:
        kinds = len(self.plans)
        types = f"{kinds} type{'s' if kinds != 1 else ''}"
        return f"{self.name}: {sum(self.copies):,} jobs of {types} on {self.gpus:,} GPUs"

    def to_frame(self) -> pd.DataFrame:
        """One row per job type: count, GPUs, reads, writes, metadata, stored bytes, alone utilisation."""
        rows = []
        for p, n, w in zip(self.plans, self.copies, _entry_writes(self), strict=True):
            sc = p.scenario
            rows.append(
                {
                    "job": sc.name,
                    "count": n,
                    "gpus": sc.gpus_per_job * n,
                    "dataset": sc.dataset or sc.name,
                    "read_bytes_per_s": p.read_bytes_per_s,
                    "read_iops": p.read_iops,
                    "metadata_ops_per_s": p.metadata_ops_per_s,
                    "first_epoch_read_bytes_per_s": p.first_epoch_read_bytes_per_s,
                    "peak_write_bytes_per_s": w["peak"],
                    "average_write_bytes_per_s": w["average"],
                    "checkpoint_capacity_bytes": w["kept"],
                    "checkpoint_mode": ("async" if w["async"] else "sync") if w["peak"] > 0 else "none",
                    "gpu_utilization_alone": p.gpu_utilization,
                    "bottleneck_alone": p.bottleneck,
                }
            )
        return pd.DataFrame(rows)

    def totals(self) -> dict[str, float]:
        """The combined figures by name [base units] (``calc.cluster_load.TOTALS``)."""
        return {k: float(getattr(self, k)) for k in TOTALS}

    def explain(self) -> str:
        """How each combined figure is added up, with the numbers."""
        bps: Kind = "bytes_per_s"
        f = self.to_frame()
        lines = [f"Cluster plan for {self.title}", f"saves: {self.saves}; shortfall shared by: {self.cluster.policy}"]
        for r in f.to_dict("records"):
            lines.append(
                f"  {r['job']}: {r['count']} x, {r['gpus']} GPUs, reads {fmt(float(r['read_bytes_per_s']), bps)}, "
                f"{fmt(float(r['read_iops']), 'count_per_s', 'reads/s')}, checkpoint writes "
                f"{fmt(float(r['peak_write_bytes_per_s']), bps)} ({r['checkpoint_mode']}), dataset {r['dataset']}"
            )

        def total(col: str, kind: Kind = bps, unit: str = "") -> str:
            values = [float(v) for v in f[col]]
            return " + ".join(fmt(v, kind, unit) for v in values) + f" = {fmt(sum(values), kind, unit)}"

        lines.append(f"read_bytes_per_s = sum of reads = {total('read_bytes_per_s')}")
        lines.append(f"read_iops = {total('read_iops', 'count_per_s', 'reads/s')}")
        lines.append(f"metadata_ops_per_s = {total('metadata_ops_per_s', 'count_per_s', 'ops/s')}")
        lines.append(f"first_epoch_read_bytes_per_s (all start together) = {total('first_epoch_read_bytes_per_s')}")
        lines.append(
            "start_burst_read_bytes_per_s (one job starts, the others run) = reads + largest (first epoch - steady) = "
            + fmt(self.start_burst_read_bytes_per_s, bps)
        )
        lines.append(f"peak_write_bytes_per_s (saves aligned) = sum n x w = {total('peak_write_bytes_per_s')}")
        lines.append(f"average_write_bytes_per_s (staggered) = sum n x C / T = {total('average_write_bytes_per_s')}")
        lines.append(
            f"write_need_bytes_per_s ({self.saves}) = {fmt(self.write_need_bytes_per_s, bps)}: what the saves add "
            "to the reads (a sync save pauses its own reads)"
        )
        lines.append(
            f"storage_need_bytes_per_s = reads + write need = {fmt(self.read_bytes_per_s, bps)} + "
            f"{fmt(self.write_need_bytes_per_s, bps)} = {fmt(self.storage_need_bytes_per_s, bps)}"
        )
        lines.append(
            "stored_bytes = datasets once each ("
            + ", ".join(f"{k} {fmt(v, 'bytes')}" for k, v in self.datasets.items())
            + f") + checkpoints kept {fmt(self.checkpoint_capacity_bytes, 'bytes')} = {fmt(self.stored_bytes, 'bytes')}"
        )
        lines += [f"Warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_yaml(self) -> str:
        return self.cluster.to_yaml()

    @classmethod
    def from_yaml(cls, text: str, source: str = "cluster.yaml") -> ClusterPlan:
        return cluster(Cluster.from_yaml(text, source))

    def to_params(self) -> dict[str, str]:
        return self.cluster.to_params()

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> ClusterPlan:
        return cluster(Cluster.from_params(params))

    def __repr__(self) -> str:
        return (
            f"ClusterPlan({self.title}; reads {fmt(self.read_bytes_per_s, 'bytes_per_s')}, "
            f"writes {fmt(self.peak_write_bytes_per_s, 'bytes_per_s')} aligned / "
            f"{fmt(self.average_write_bytes_per_s, 'bytes_per_s')} average, stored {fmt(self.stored_bytes, 'bytes')})"
        )


def _entry_writes(cp: ClusterPlan) -> list[dict[str, float]]:
    return [_writes(p, n) for p, n in zip(cp.plans, cp.copies, strict=True)]


def cluster(jobs: Any, /, **inputs: Any) -> ClusterPlan:
    """Plan many different jobs on one storage system.

    Parameters
    ----------
    jobs
        A mapping scenario -> count (a scenario is a preset name or a Scenario), a sequence of
        (scenario, count) pairs, or a ``Cluster``.
    **inputs
        Shared Scenario inputs applied to every job (storage, storage_units, server, ...), and the
        cluster options ``saves`` (aligned | staggered), ``policy`` (demand | max-min),
        ``horizon_months``, ``job_growth_per_year``, ``data_growth_per_year``, ``name``, ``description``.

    Returns
    -------
    ClusterPlan
        Each job's Plan on the shared storage and the combined demand.
    """
    c = as_cluster(jobs, **inputs)
    # One storage for all: the shared inputs', else none (unconstrained: the answer says what to buy).
    storage = dict.fromkeys(STORAGE_INPUTS) | {k: v for k, v in c.shared.items() if k in STORAGE_INPUTS}
    plans, copies = [], []
    for j in c.jobs:
        sc = j.scenario
        n = sc.jobs * j.count
        changes = {**c.shared, **_storage_of(c, sc, storage), "jobs": n}
        try:
            run = sc.replace(**changes, name=sc.name) if any(getattr(sc, k) != v for k, v in changes.items()) else sc
        except InputError as e:
            raise InputError(f"{sc.name}: {e.field}", e.message) from None
        plans.append(plan(run))
        copies.append(n)
    return _combine(c, tuple(plans), tuple(copies))


def _storage_of(c: Cluster, sc: Any, storage: dict[str, Any]) -> dict[str, Any]:
    """The storage inputs a job runs on in the cluster: the shared ones. With none shared, a
    cluster of one job keeps the job's own (the cluster is the job: issue 38), and another job
    keeps the site its storage set, so dropping a storage no one shares never moves a job."""
    if any(c.shared.get(k) is not None for k in STORAGE_INPUTS):
        return storage
    if len(c.jobs) == 1 and c.jobs[0].count * sc.jobs == 1:  # as _one_job: one entry, one copy
        return {}
    site = job_site(sc)
    said = sc.site or sc.server or c.shared.get("site") or c.shared.get("server")
    return storage | ({"site": site} if site and not said else {})


def _combine(c: Cluster, plans: tuple[Plan, ...], copies: tuple[int, ...]) -> ClusterPlan:
    writes = [_writes(p, n) for p, n in zip(plans, copies, strict=True)]
    reads = sum(p.read_bytes_per_s for p in plans)
    datasets: dict[str, float] = {}
    warnings: list[str] = []
    for p in plans:
        key = p.scenario.dataset or p.scenario.name
        if key in datasets and not math.isclose(datasets[key], p.dataset_bytes, rel_tol=1e-6):
            warnings.append(
                f"dataset {key!r} has different sizes in its jobs ({fmt(datasets[key], 'bytes')} and "
                f"{fmt(p.dataset_bytes, 'bytes')}): the larger is stored"
            )
        datasets[key] = max(datasets.get(key, 0.0), p.dataset_bytes)
    need = storage_need_bytes_per_s(writes, reads, c.saves)
    need_w = need - reads
    data = sum(datasets.values())
    kept = sum(w["kept"] for w in writes)
    first = [p.first_epoch_read_bytes_per_s for p in plans]
    return ClusterPlan(
        cluster=c,
        plans=plans,
        copies=copies,
        read_bytes_per_s=reads,
        read_iops=sum(p.read_iops for p in plans),
        file_opens_per_s=sum(p.file_opens_per_s for p in plans),
        metadata_ops_per_s=sum(p.metadata_ops_per_s for p in plans),
        first_epoch_read_bytes_per_s=sum(first),
        # One job starts: one copy of an entry (its plan counts every copy) reads its first epoch.
        start_burst_read_bytes_per_s=reads
        + max(((f - p.read_bytes_per_s) / n for f, p, n in zip(first, plans, copies, strict=True)), default=0.0),
        peak_write_bytes_per_s=sum(w["peak"] for w in writes),
        average_write_bytes_per_s=sum(w["average"] for w in writes),
        write_need_bytes_per_s=need_w,
        storage_need_bytes_per_s=need,
        dataset_bytes=data,
        checkpoint_capacity_bytes=kept,
        stored_bytes=data + kept,
        datasets=datasets,
        clients=sum(int(p.values["clients"]) for p in plans),  # each plan's nodes (calc.stages, one formula)
        gpus=sum(p.scenario.gpus_per_job * p.scenario.jobs for p in plans),
        warnings=tuple(warnings),
    )


# ------------------------------------------------------------------ the answer for the cluster


@dataclass(frozen=True)
class ClusterAnswer:
    """One answer for the shared storage: what to buy, what it costs, what each job gets.

    ``recommendation`` is ``calc.sizing.recommend``'s table for the combined load; ``best`` its
    cheapest buyable row; ``jobs`` one row per job type (demand share, utilisation, idle cost,
    chargeback); ``shortfall`` the fraction of the combined demand the given storage serves
    (1 = all); ``growth`` the projection (month the next purchase is due, units then).
    """

    plan: ClusterPlan
    recommendation: pd.DataFrame
    best: dict[str, Any] | None
    runners_up: tuple[dict[str, Any], ...]
    served_fraction: float
    binding_axis: str
    own: str
    jobs: pd.DataFrame
    growth: dict[str, Any]
    charged_option: str
    site_lines: tuple[dict[str, Any], ...] = ()
    """No site given (no job, server or shared storage names one): each site's first buyable row, as
    a job's answer lists them; ``best`` is then the default site's (``calc.site.DEFAULT_SITE``), as a
    job's answer buys (issue 39: a 1-job cluster bought another site's storage than its job)."""

    @property
    def headline(self) -> str:
        if self.best is None:
            return "No storage option in the catalog serves this cluster: see the reasons per option."
        where = f" {an.site_label(DEFAULT_SITE).split(' ', 1)[1]} (site not given)" if self.site_lines else ""
        return f"Buy for the cluster{where}: " + describe_option(self.best)

    @property
    def monthly_usd(self) -> float:
        return float(self.jobs["monthly_usd"].sum())

    def lines(self) -> list[str]:
        cp = self.plan
        bps: Kind = "bytes_per_s"
        out = [self.headline]
        out += an.assumed_site_line(DEFAULT_SITE, self.site_lines) if self.site_lines else []
        if self.runners_up:
            out.append("Runners-up: " + "; ".join(describe_option(r, brief=True) for r in self.runners_up))
        out.append(
            f"Combined load ({cp.saves} saves): reads {fmt(cp.read_bytes_per_s, bps)} "
            f"({fmt(cp.read_iops, 'count_per_s', 'reads/s')}, "
            f"{fmt(cp.metadata_ops_per_s, 'count_per_s', 'metadata ops/s')}) "
            f"+ checkpoint writes {fmt(cp.write_need_bytes_per_s, bps)} = {fmt(cp.storage_need_bytes_per_s, bps)}; "
            f"write peaks {fmt(cp.peak_write_bytes_per_s, bps)} aligned, {fmt(cp.average_write_bytes_per_s, bps)} on "
            f"average; first epochs {fmt(cp.first_epoch_read_bytes_per_s, bps)} if all start together; "
            f"stored {fmt(cp.stored_bytes, 'bytes')} (each dataset once)."
        )
        out.append(burst_sentence(cp))
        out.append(self.own)
        g = self.growth
        if g.get("text"):
            out.append(g["text"])
        if self.charged_option and math.isfinite(self.monthly_usd):
            out.append(
                f"Chargeback ({self.charged_option}, {fmt_usd(self.monthly_usd)} a month): "
                + "; ".join(f"{r['job']} {fmt_usd(float(r['monthly_usd']))}" for r in self.jobs.to_dict("records"))
                + " (capacity rent by stored bytes, read charges by each job's reads, provisioned performance and "
                "the rest by bandwidth, bought units by the axis that sized them)."
            )
        idle = self.jobs[self.jobs["gpu_utilization"] < self.jobs["gpu_utilization_alone"] - 1e-9]
        for r in idle.itertuples():
            usd = float(r.idle_usd_per_month)  # type: ignore[arg-type]
            money = f", {fmt_usd(usd)} a month" if math.isfinite(usd) else ""
            out.append(
                f"{r.job}: its {r.gpus:,} GPUs run at {r.gpu_utilization:.0%} on the shared storage "
                f"({r.gpu_utilization_alone:.0%} alone){money}."
            )
        return out


def _site_lines(cp: ClusterPlan, rec: pd.DataFrame) -> tuple[dict[str, Any], ...]:
    """With no site: each site's first buyable row, in ``st.SITES`` order (a 1-job cluster's: its
    answer's designs, one per site)."""
    if job_site(cp.plans[0].scenario) is not None:
        return ()
    if _one_job(cp):
        return an.answer_rows(cp.plans[0], rec)[2]
    out = []
    for site in st.SITES:
        ok = rec[buyable(rec, site, False) & (rec["site"] == site)]
        if len(ok):
            out.append({str(k): x for k, x in ok.iloc[0].items()})
    return tuple(out)


def recommend_cluster(cp: ClusterPlan) -> pd.DataFrame:
    """``calc.sizing.recommend``'s table for the combined load (every option, units, cost): the
    sizing engine run on the cluster's demand (``cluster_demand``)."""
    return en.rank(cluster_demand(cp))


def _one_job(cp: ClusterPlan) -> bool:
    """A cluster of one job (one entry, one copy): its plan and answer are the job's own. Copies of
    one entry keep the cluster's model of bursts that coincide (one restarts, the others run)."""
    return len(cp.plans) == 1 and cp.copies[0] == 1


def cluster_demand(cp: ClusterPlan, jobs_factor: float = 1.0, data_factor: float = 1.0) -> en.Demand:
    """The cluster's combined demand on one shared store.

    Reads, requests, opens and the saves' write need (beside the reads: a sync save's pause is
    already netted out in ``write_need_bytes_per_s``) summed over the jobs; capacity: the datasets
    once and every job's kept checkpoints; the month's checkpoint bytes and write requests summed
    over every copy; the mean read size (total bytes / total reads); the strictest latency budget
    and loader. ``jobs_factor`` scales what the jobs do (growth in job count), ``data_factor`` the
    datasets (growth in data): ``growth`` runs the engine on next month's demand this way. The
    shared inputs that decide what may be bought, and where, are the first job's (they are shared).
    """
    first = cp.plans[0]
    if _one_job(cp) and jobs_factor == 1 and data_factor == 1:
        return en.plan_demand(first)  # one job: its plan's demand (bursts, restores, GPU time), no other
    sc = first.scenario
    written = puts = 0.0
    for p in cp.plans:
        b, r = checkpoint_writes_per_month(p)  # all its copies' (the plan's jobs input is their count)
        written, puts = written + b, puts + r
    stored = cp.dataset_bytes * data_factor + cp.checkpoint_capacity_bytes * jobs_factor
    points = design_points(cp, jobs_factor)
    point = max(points, key=lambda k: points[k])  # the first of equals: steady before a burst
    return en.Demand(
        read_bytes_per_s=cp.read_bytes_per_s * jobs_factor,
        read_iops=cp.read_iops * jobs_factor,
        file_opens_per_s=cp.file_opens_per_s * jobs_factor,
        request_bytes=cp.request_bytes if cp.read_iops > 0 else first.request_bytes,
        write_bytes_per_s=cp.write_need_bytes_per_s * jobs_factor,
        need_bytes_per_s=points[point],
        design_point=point,
        writes_overlap_reads=True,
        capacity_bytes=stored,
        dataset_bytes=stored,
        written_bytes_per_month=written * jobs_factor,
        write_requests_per_month=puts * jobs_factor,
        clients=max(cp.clients, 1),
        gpus=max(cp.gpus, 1),
        num_workers=min(p.scenario.num_workers for p in cp.plans),
        examples_per_file=min(p.scenario.examples_per_file for p in cp.plans),
        latency_budget_s=min(p.latency_budget_s for p in cp.plans),
        fits_in_ram=all(p.fits_in_ram for p in cp.plans),
        host_ram_bytes=first.inputs["host_ram_bytes"],
        workstation=False,
        **en.policy(sc),
    )


def design_points(cp: ClusterPlan, jobs_factor: float = 1.0) -> dict[str, float]:
    """The cluster's coincident bursts by name [bytes/s]: the steady state with the saves as the
    ``saves`` option falls them, then the restarts the ``restarts`` option says coincide. The
    largest sizes the store; its name is the demand's design point, said on the answer.

    A restoring job reads every rank's shard within its restore budget (its plan's
    ``restore_read_bytes_per_s``, one copy's). ``one``: one copy restores while every other job
    reads and saves as usual: steady + max_j restore_j. ``all`` (after a power, fabric or storage
    event): every copy restores at once and none reads or saves meanwhile: sum_j n_j x restore_j.
    A starting job's first epoch is said, not bought for (``start_burst_read_bytes_per_s``).
    """
    steady = cp.storage_need_bytes_per_s * jobs_factor
    name = f"{cp.saves} saves" if cp.write_need_bytes_per_s > 0 else "steady reads"
    restore = [p.restore_read_bytes_per_s if p.checkpoint_write_bytes_per_s > 0 else 0.0 for p in cp.plans]
    out = {name: steady}
    if cp.cluster.restarts == "all":
        out["restart of every job after an outage"] = jobs_factor * sum(
            n * r for n, r in zip(cp.copies, restore, strict=True)
        )
    elif max(restore, default=0.0) > 0:
        out["restart of one job while the others run"] = steady + max(restore)
    return out


def burst_sentence(cp: ClusterPlan) -> str:
    """``Sized for the restart of every job after an outage: 749.4 MB/s (aligned saves 124.9 MB/s);
    restarts: all, saves: aligned.``: which coincident burst sized the store, beside the others."""
    points = design_points(cp)
    point = max(points, key=lambda k: points[k])
    others = ", ".join(f"{k} {fmt(v, 'bytes_per_s')}" for k, v in points.items() if k != point)
    beside = f" ({others})" if others else ""
    return (
        f"Sized for the {point}: {fmt(points[point], 'bytes_per_s')}{beside}; "
        f"restarts: {cp.restarts}, saves: {cp.saves}."
    )


@dataclass(frozen=True)
class _Load:
    """One demand on the storage: bytes/s read and written beside, reads, opens, metadata, stored."""

    read: float
    write: float
    iops: float
    opens: float
    stored: float


def axis_loads(o: st.StorageOption, load: _Load, units: float, clients: int) -> dict[str, float]:
    """Share of the given system each axis of ``load`` uses (> 1: short) [fraction].

    ``busy``: seeks and transfers of ``units`` units (``storage.unit_loads``, the sizing's own
    per-unit math); ``client cap``: bytes over the clients' caps; ``system IOPS``: random reads
    over the aggregate cap; ``metadata``: opens x ops per open over the metadata service.
    """
    req = load.read / load.iops if load.iops > 0 else 1.0
    u = st.unit_loads(o, load.read, load.iops, req, load.stored, load.opens, load.write, writes_overlap_reads=True)
    rnd = st.random_reads(o, load.iops, load.opens)
    meta = load.opens * demand.METADATA_OPS_PER_OPEN.get(o.protocol, 0.0)
    return {
        "busy": (u["iops"] + u["bandwidth"]) / units,
        "client cap": (load.read + load.write) / (clients * o.client_bytes_per_s),
        "system IOPS": rnd / o.aggregate_iops,
        "metadata": meta / o.metadata_ops_at(units),
        "write requests": u["puts"] / units,
    }


def share(loads: Sequence[float], gpus: Sequence[float], policy: str) -> list[float]:
    """Fraction of its demand each job is served when their loads (fractions of the binding
    axis's capacity) sum past 1.

    ``demand``: every job gets 1 / sum(loads). ``max-min``: water-filling [2]: every GPU gets an
    equal share λ; a job needing less than λ x its GPUs gets all it needs, the rest is shared
    again; λ solves sum min(load_j, λ g_j) = 1.
    """
    total = sum(loads)
    if total <= 1:
        return [1.0] * len(loads)
    if policy == "demand":
        return [1.0 / total if x > 0 else 1.0 for x in loads]
    # Water-filling: raise λ through the jobs in order of load per GPU.
    order = sorted(range(len(loads)), key=lambda j: loads[j] / gpus[j])
    left, weight = 1.0, float(sum(gpus))
    lam = 0.0
    for j in order:
        if loads[j] <= left * gpus[j] / weight:
            left -= loads[j]
            weight -= gpus[j]
        else:
            lam = left / weight
            break
    return [min(1.0, lam * g / x) if x > 0 and lam > 0 else 1.0 for x, g in zip(loads, gpus, strict=True)]


def cluster_answer(x: ClusterPlan | Cluster | Any, /, **inputs: Any) -> ClusterAnswer:
    """One answer for the shared system at the combined load; each job's utilisation and cost."""
    cp = _as_cluster_plan(x, inputs)
    rec = recommend_cluster(cp)
    first = cp.plans[0].scenario
    site = job_site(first) or DEFAULT_SITE  # none named: the default site, as a job's answer assumes
    if _one_job(cp):  # one job: the job's own answer's rows (its demand is the plan's)
        rows = an.answer_rows(cp.plans[0], rec, site)[0]
    else:
        ok = rec[buyable(rec, site, first.allow_other_site)]
        rows = [dict(r) for _, r in ok.iterrows()]
    site_lines = _site_lines(cp, rec)
    best = rows[0] if rows else None
    loads = [_entry_load(cp, i) for i in range(len(cp.plans))]
    served, axis, own, fractions = _shortfall(cp, loads)
    alone = _alone_fractions(cp, loads)
    gpus = [p.scenario.gpus_per_job * n for p, n in zip(cp.plans, cp.copies, strict=True)]
    charged = _charged_row(cp, rec, best)
    charge = chargeback(cp, charged, loads) if charged is not None else [math.nan] * len(cp.plans)
    rows_out = []
    for p, n, g, f, f_alone, usd in zip(cp.plans, cp.copies, gpus, fractions, alone, charge, strict=True):
        alone_util = p.gpu_utilization
        if _one_job(cp) and p.scenario.storage is None and p.scenario.storage_bytes_per_s is None:
            on_design = an.design_plan(p, rec)  # no shared storage: the job on the design bought, as its answer
            alone_util = on_design.gpu_utilization if on_design is not None else alone_util
        util = shared_utilization(alone_util, p.scenario.target_gpu_utilization, f, f_alone)
        sc = p.scenario
        price, _ = en.gpu_price_per_hour(sc.gpu, sc.gpu_price_per_hour)
        idle_h = en.idle_gpu_hours_per_month(g, util)
        rows_out.append(
            {
                "job": sc.name,
                "count": n,
                "gpus": g,
                "served_fraction": f,
                "gpu_utilization_alone": p.gpu_utilization,
                "gpu_utilization": util,
                "idle_gpu_hours_per_month": idle_h,
                "idle_usd_per_month": idle_h * price,
                "monthly_usd": usd,
            }
        )
    return ClusterAnswer(
        plan=cp,
        recommendation=rec,
        best=best,
        runners_up=tuple(rows[1:3]),
        served_fraction=served,
        binding_axis=axis,
        own=own,
        jobs=pd.DataFrame(rows_out),
        growth=growth(cp, best, charged if charged is not None and cp.plans[0].scenario.storage_units else None),
        charged_option=str(charged["option"]) if charged is not None else "",
        site_lines=site_lines,
    )


def shared_utilization(alone_util: float, target: float, served: float, served_alone: float) -> float:
    """A job's GPU utilisation on the shared storage [fraction].

    ``alone_util`` is its plan's utilisation on that storage by itself (the plan's pipeline:
    readiness, reads in flight, per-client caps, page cache, and its own saves); ``served`` the
    share of its demand the storage serves beside the other jobs, ``served_alone`` the share the
    same axis model gives it alone. Only what the other jobs take away lowers the plan's figure:
    the ratio served / served_alone. A job whose plan alone fits (served_alone = 1) gets
    served x target, no more than its plan's; a job already short alone scales its plan's figure.
    A 1-job cluster has served = served_alone, so its utilisation is its plan's.
    """
    if served >= served_alone:
        return alone_util
    if served_alone >= 1:
        return min(alone_util, served * target)
    return alone_util * served / served_alone


def _alone_fractions(cp: ClusterPlan, loads: Sequence[_Load]) -> list[float]:
    """The share of its demand each entry would be served on the shared storage with no other
    entry loading it (the same axis model as ``_shortfall``; its plan already counts its copies)."""
    idle = _Load(0.0, 0.0, 0.0, 0.0, 0.0)
    out = []
    for i in range(len(loads)):
        own = [x if j == i else idle for j, x in enumerate(loads)]
        out.append(_shortfall(cp, own)[3][i])
    return out


def _as_cluster_plan(x: Any, inputs: dict[str, Any]) -> ClusterPlan:
    if isinstance(x, ClusterPlan):
        return cluster(x.cluster, **inputs) if inputs else x
    return cluster(x, **inputs)


def _entry_load(cp: ClusterPlan, i: int) -> _Load:
    """Entry i's share of the combined load (its write need: its part of the cluster's)."""
    p, n = cp.plans[i], cp.copies[i]
    writes = _entry_writes(cp)
    mine = writes[i]
    if cp.saves == "aligned":
        w = mine["extra_aligned"]
    else:
        # Staggered: the write need shared by each entry's time-averaged extra over its reads.
        avg = sum(x["average_extra"] for x in writes)
        w = cp.write_need_bytes_per_s * (mine["average_extra"] / avg) if avg > 0 else 0.0
    key = p.scenario.dataset or p.scenario.name
    sharers = sum(c for q, c in zip(cp.plans, cp.copies, strict=True) if (q.scenario.dataset or q.scenario.name) == key)
    stored = cp.datasets[key] * n / sharers + mine["kept"]
    return _Load(p.read_bytes_per_s, w, p.read_iops, p.file_opens_per_s, stored)


def _shortfall(cp: ClusterPlan, loads: Sequence[_Load]) -> tuple[float, str, str, list[float]]:
    """The share of the combined demand the given shared storage serves, its binding axis, the
    sentence, and the fraction of its demand each entry is served.

    Every axis whose loads add past its capacity is shared by ``policy`` among the jobs that
    load it (a job that does not use an axis is not slowed by it); a job gets the smallest of
    its shares over the short axes.
    """
    first = cp.plans[0].scenario
    bps: Kind = "bytes_per_s"
    n = len(loads)
    gpus = [p.scenario.gpus_per_job * c for p, c in zip(cp.plans, cp.copies, strict=True)]
    if first.storage is None and first.storage_bytes_per_s is None:
        text = (
            f"No shared storage given: the cluster needs {fmt(cp.storage_need_bytes_per_s, bps)} and "
            f"{fmt(cp.read_iops, 'count_per_s', 'reads/s')} in steady state."
        )
        return 1.0, "", text, [1.0] * n
    room = ""
    if first.storage is None:
        bw = float(parse(first.storage_bytes_per_s, "bytes_per_s", "storage_bytes_per_s"))
        table = [{"bandwidth": (x.read + x.write) / bw} for x in loads]
        have = fmt(bw, bps)
    else:
        o = st.option(first.storage)
        units = float(first.storage_units) if first.storage_units is not None else o.max_units
        if not math.isfinite(units):
            return 1.0, "", f"Shared storage {o.name}, as many units as needed: see the answer above.", [1.0] * n
        table = [axis_loads(o, x, units, cp.clients) for x in loads]
        have = f"{int(units):,} x {o.name}"
        room = _room(cp, o, units)
    totals = {a: sum(t[a] for t in table) for a in table[0]}
    axis = max(totals, key=lambda k: totals[k])
    need = totals[axis]
    if need <= 1 + 1e-9:
        text = (
            f"Your shared storage, {have}, serves the combined load with {1 / need:.1f}x headroom."
            if need > 0
            else f"Your shared storage, {have}, carries no load."
        )
        return 1.0, "", text + room, [1.0] * n
    fractions = [1.0] * n
    for a, total in totals.items():
        if total > 1 + 1e-9:
            got = share([t[a] for t in table], gpus, cp.cluster.policy)
            fractions = [min(f, g) for f, g in zip(fractions, got, strict=True)]
    text = (
        f"Your shared storage, {have}, serves {1 / need:.0%} of the combined demand (limited by {axis}); "
        f"the shortfall is shared by {cp.cluster.policy} among the jobs that load it."
    )
    return 1.0 / need, axis, text + room, fractions


def _room(cp: ClusterPlan, o: st.StorageOption, units: float) -> str:
    """`` It holds ...: too small.`` when ``units`` of the shared store cannot hold what the cluster
    stores: bought drives and nfs-* servers below the fill limit (``engine.unit_holds_bytes``, the
    capacity the engine sizes them by), others at their capacity; "" when it fits."""
    d = cluster_demand(cp)
    held = units * en.unit_holds_bytes(o, d)
    if cp.stored_bytes <= held:
        return ""
    raw = units * (o.capacity_bytes if not o.server_drives else en.server_array(o, d)[1] / d.fill_limit)
    filled = f" of data ({fmt(raw, 'bytes')} filled to at most {d.fill_limit:.0%})" if held < raw else ""
    return f" It holds {fmt(held, 'bytes')}{filled}; the cluster stores {fmt(cp.stored_bytes, 'bytes')}: too small."


def _charged_row(cp: ClusterPlan, rec: pd.DataFrame, best: dict[str, Any] | None) -> dict[str, Any] | None:
    """The option whose cost is charged back: the shared storage given, else the one to buy."""
    sc = cp.plans[0].scenario
    name = sc.storage
    if _one_job(cp) and sc.storage_units is None:
        return best  # one job's own storage, no count: as its answer, the design bought is charged
    if name is not None:
        mine = rec[rec["option"] == name]
        if len(mine) and math.isfinite(float(mine.iloc[0]["monthly_total_usd"])):
            row = dict(mine.iloc[0])
            if sc.storage_units is not None and float(sc.storage_units) != float(row["units"]):
                # The system as it is: charge back all of it (240 TiB bills 240 TiB), not what the load needs.
                units = float(sc.storage_units)
                d = cluster_demand(cp)
                usd = en.price(st.option(name), d, en.Sized(loads={}, units=units, perf_units=units, limiting="given"))
                row.update(units=en.whole(units), limiting="given", monthly_total_usd=usd["total"])
            return row
    return best


def chargeback(cp: ClusterPlan, row: Mapping[str, Any], loads: Sequence[_Load] | None = None) -> list[float]:
    """Each entry's monthly USD of the storage option ``row`` (a ``recommend`` row).

    Rule: capacity rent by each job's stored bytes (a shared dataset split by the jobs reading
    it); read charges by each job's own GB read and requests; bought units (amortised) by the
    axis that sized them (bandwidth, random reads or capacity; equally per GPU for a minimum
    size); provisioned performance and anything else by bandwidth (reads + write need).
    The parts add up to the row's ``monthly_total_usd``.
    """
    o = st.option(str(row["option"]))
    units = float(row["units"])
    loads = loads or [_entry_load(cp, i) for i in range(len(cp.plans))]
    total = float(row["monthly_total_usd"])
    stored = [x.stored for x in loads]
    bw = [x.read + x.write for x in loads]
    rnd = [st.random_reads(o, x.iops, x.opens) for x in loads]
    gpus = [p.scenario.gpus_per_job * n for p, n in zip(cp.plans, cp.copies, strict=True)]
    cap_usd = 0.0
    if math.isfinite(o.price_per_gb_month):
        elastic = o.unit == "volume" or not math.isfinite(o.capacity_bytes)
        billed = cp.stored_bytes if elastic else units * o.capacity_bytes
        cap_usd = o.price_per_gb_month * billed / 1e9
    read_usd = [
        (x.read / 1e9 * o.price_per_gb_read + x.iops / 1e6 * o.price_per_million_requests) * MONTH_S for x in loads
    ]
    months = cp.plans[0].scenario.amortization_months
    bought = units * o.purchase_price / months if math.isfinite(o.purchase_price) else 0.0
    limiting = str(row["limiting"])
    axes: dict[str, Sequence[float]] = {"capacity": stored, "iops": rnd, "minimum": gpus}
    by_axis = axes.get(limiting, bw)
    rest = total - cap_usd - sum(read_usd) - bought

    def part(weights: Sequence[float], usd: float) -> list[float]:
        s = float(sum(weights))
        return [usd * w / s for w in weights] if s > 0 else [usd / len(weights)] * len(weights)

    return [
        a + b + c + d
        for a, b, c, d in zip(part(stored, cap_usd), read_usd, part(by_axis, bought), part(bw, rest), strict=True)
    ]


def _serve(units: float) -> str:
    """"1 bucket ... serves", "4 drives ... serve"."""
    return "serves" if units == 1 else "serve"


def _owned_growth(cp: ClusterPlan, owned: Mapping[str, Any]) -> str:
    """When the system the cluster has (``storage`` x ``storage_units``) stops serving: the first
    month the sizing engine needs more units of it than are owned."""
    c = cp.cluster
    o = st.option(str(owned["option"]))
    have = float(owned["units"])
    for m in range(c.horizon_months + 1):
        fj = (1 + c.job_growth_per_year) ** (m / 12)
        fd = (1 + c.data_growth_per_year) ** (m / 12)
        sized = en.size_option(o, cluster_demand(cp, fj, fd))
        if sized.units > have + 1e-9:
            return (
                f"Your {en._n(have, o.unit)} of {o.name} {_serve(have)} until month {m}: then "
                f"{en._n(sized.units, o.unit)} are needed (limited by {sized.limiting}); buy more before then."
            )
    return f"Your {en._n(have, o.unit)} of {o.name} still {_serve(have)} in {c.horizon_months} months."


def growth(cp: ClusterPlan, best: Mapping[str, Any] | None, owned: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What to buy now and when the next purchase is due, month by month to the horizon.

    Job counts scale reads, writes, requests, metadata, checkpoint writes and kept checkpoints by
    (1 + job_growth_per_year)^(m / 12); datasets scale by (1 + data_growth_per_year)^(m / 12).
    Each month the sizing engine sizes the option bought now (``best``) for that month's demand
    (``cluster_demand``): the same axes, protection, fill limit, endurance and enclosures as the
    answer, so month 0 needs what the answer buys. The next purchase is due in the first month
    that needs more units.
    """
    c = cp.cluster
    if best is None or c.horizon_months == 0:
        return {"text": "", "next_purchase_month": None, "units_now": None, "units_at_horizon": None}
    o = st.option(str(best["option"]))
    now = float(best["units"])  # FSx is ordered in 2,400 GiB steps: 11.71875 TiB, not 11
    if o.kind == "ram":
        return {"text": "", "next_purchase_month": None, "units_now": now, "units_at_horizon": None}
    due, units_m, due_units, due_limit = None, now, now, ""
    months = []
    for m in range(c.horizon_months + 1):
        fj = (1 + c.job_growth_per_year) ** (m / 12)
        fd = (1 + c.data_growth_per_year) ** (m / 12)
        sized = en.size_option(o, cluster_demand(cp, fj, fd))
        units_m = float(sized.units)
        months.append({"month": m, "units": units_m, "limiting": sized.limiting})
        if due is None and units_m > now:
            due, due_units, due_limit = m, units_m, sized.limiting
    grow = f"jobs +{c.job_growth_per_year:.0%} and data +{c.data_growth_per_year:.0%} a year"
    if due is None:
        text = (
            f"Growth ({grow}): {en._n(now, o.unit)} of {o.name} still {_serve(now)} in {c.horizon_months} months; "
            "no purchase due."
        )
    else:
        text = (
            f"Growth ({grow}): buy {en._n(now, o.unit)} of {o.name} now; the next purchase is due in month {due} "
            f"({en._n(due_units, o.unit)} needed, limited by {due_limit}); "
            f"{en._n(units_m, o.unit)} by month {c.horizon_months}."
        )
        if units_m > o.max_units:
            text += f" One {o.name} system allows {en._n(o.max_units, o.unit)}: plan a second system."
    if owned is not None:
        text += " " + _owned_growth(cp, owned)
    return {
        "text": text,
        "next_purchase_month": due,
        "units_now": now,
        "units_at_horizon": units_m,
        "option": o.name,
        "months": pd.DataFrame(months),
    }


@overload
def answer(x: ClusterPlan | Cluster, /, **overrides: Any) -> ClusterAnswer: ...
@overload
def answer(x: PlanLike, /, **overrides: Any) -> an.Answer: ...
def answer(x: Any, /, **overrides: Any) -> an.Answer | ClusterAnswer:
    """``calc.answer``: a cluster plan's answer (``cluster_answer``), else the single job's
    (``calc.answers.job_answer``, unchanged)."""
    if isinstance(x, (ClusterPlan, Cluster)):
        return cluster_answer(x, **overrides)
    return an.job_answer(x, **overrides)
