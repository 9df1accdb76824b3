"""The answer for one job (docs/model.md section 7.4): what to buy, what it costs, the constraint
that sized it, the job's own storage judged, the GPUs it feeds and the GPU time the bottleneck
idles, each said in one sentence (``Answer.lines``).

job_answer(): the Answer of a plan (``calc.answer`` dispatches a job's plan here), from recommend
(calc.sizing) and the designs (calc.design).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from calc import catalog
from calc import checkpoint as ck
from calc import engine as en
from calc import storage as st
from calc.design import buyable, describe_option, design_rows
from calc.engine import _n, checkpoint_writes_per_month, plan_demand
from calc.errors import InputError
from calc.plan import Plan, plan
from calc.scenario import ask
from calc.site import DEFAULT_SITE, SITE_NAMES, SITE_WORDS, job_site
from calc.sizing import PlanLike, as_plan, max_gpus, nodes_reading, recommend
from calc.units import MONTH_S, fmt, fmt_usd

__all__ = [
    "Answer",
    "answer_rows",
    "assumed_site_line",
    "chosen_design",
    "deciding_sentence",
    "design_plan",
    "idle_gpus",
    "job_answer",
    "site_label",
    "site_question",
]


@dataclass(frozen=True)
class Answer:
    """What to buy for this job and what it costs: the first thing a meeting reads.

    ``best`` and ``runners_up`` are rows of ``recommend`` (feasible options of the job's site,
    ready ones first, cheapest comparable monthly cost first); ``own`` judges the scenario's own
    storage in words; ``feeds_gpus`` is how many GPUs of this job that storage (or the best option)
    keeps fed; ``idle_gpu_hours_per_month`` and ``idle_usd_per_month`` price what the bottleneck
    wastes. ``site`` is where the job runs (None: not known, and ``site_lines`` holds the cheapest
    design of each site); ``charges`` and ``deciding`` are the chosen design's monthly charges and
    the constraint that sized it. Every sentence reads these single values.
    """

    plan: Plan
    best: dict[str, Any] | None
    runners_up: tuple[dict[str, Any], ...]
    own: str
    feeds_gpus: int | None
    feeds_note: str
    idle_gpu_hours_per_month: float
    idle_usd_per_month: float
    gpu_price_per_hour: float
    gpu_price_source: str
    designs: tuple[dict[str, Any], ...] = ()
    site: str | None = None
    site_lines: tuple[dict[str, Any], ...] = ()
    deciding: str = ""
    design_utilization: float = math.nan
    """GPU utilisation planned on the chosen design's reading tier (NaN: the plan's own storage)."""
    design_bottleneck: str = ""
    site_assumed: bool = False
    """No site, server or storage named one: ``site`` is ``DEFAULT_SITE`` and ``site_lines`` holds
    each site's cheapest design, said beside the answer."""
    cheapest_storage: dict[str, Any] | None = None
    """The buyable row with the lowest storage cost (to say when a dearer store is cheaper in total)."""
    fastest: dict[str, Any] | None = None
    """The buyable row that idles the fewest GPU-hours (said when no GPU price is known)."""
    served: Plan | None = None
    """The plan on the store the answer buys, at its units (None: the job's own storage, or nothing bought)."""

    @property
    def shown(self) -> Plan:
        """The plan shown beside the answer (headline, checkpoints, report): on the store it buys at
        the units it buys, so restore time, goodput, drain lag and durability are that store's (issue 38)."""
        return self.served if self.served is not None else self.plan

    @property
    def design(self) -> dict[str, Any] | None:
        """The chosen design: the cheapest feasible one of the site (of all sites' lines when unknown)."""
        if self.site is None and self.site_lines:
            return min(self.site_lines, key=lambda d: d["monthly_total_usd"])
        return next((d for d in self.designs if d["feasible"]), None)

    @property
    def charges(self) -> dict[str, float]:
        """The chosen design's charges [USD a month]: rent, reads, writes, egress and purchases
        (amortised over ``amortization_months``); they add up to its ``monthly_total_usd``."""
        d = self.design
        if d is None:
            return {}
        months = self.plan.scenario.amortization_months
        buy = d["purchase_usd"]
        return {
            "rent": d["monthly_rent_usd"],
            "reads": d["monthly_read_usd"],
            "writes": d["monthly_write_usd"],
            "egress": d["monthly_egress_usd"],
            "power": d.get("monthly_power_usd", 0.0),
            "support": d.get("monthly_support_usd", 0.0),
            "purchases": buy / months if math.isfinite(buy) else 0.0,
        }

    @property
    def headline(self) -> str:
        """One sentence: what to buy and what it costs."""
        if self.site is None and self.site_lines:
            # No site: one line per site follows (lines()); the headline compares their totals.
            return "Buy: " + site_question(self.site_lines)
        verb = f"{site_label(self.site)} (site not given)" if self.site_assumed and self.site else "Buy"
        d = self.design
        if d is not None and d["design"] != "one tier":
            # An unknown copy time (no node link) is said in lines(), not in the one-sentence headline.
            copy = _staging(d) if math.isfinite(d["staging_s"]) else ""
            return f"{verb}: {d['description']}; {fmt_usd(d['monthly_total_usd'])} a month all in{copy}"
        if self.best is None:
            where = f" at the job's site ({self.site})" if self.site else ""
            return f"No storage option in the catalog serves this job{where}: see the reasons per option."
        return f"{verb}: " + describe_option(self.best)

    def charges_line(self) -> str:
        """``Monthly: rent $x, reads $y, writes $z, egress $0, purchases $w (amortised) = $t``."""
        c = self.charges
        d = self.design
        if not c or d is None:
            return ""
        parts = ", ".join(f"{k} {fmt_usd(val)}" for k, val in c.items())
        where = f"At the cheapest site ({SITE_NAMES[d['site']]}), a" if self.site is None and self.site_lines else "A"
        return f"{where} month of training costs {fmt_usd(d['monthly_total_usd'])}: {parts} (purchases amortised)."

    def gpu_time_lines(self) -> list[str]:
        """What the chosen store costs in GPU time (restores, save stalls, the first epoch) beside its
        price; when a dearer store is cheaper in total, or, with no GPU price, which store is fastest."""
        b = self.best
        d = self.design
        if b is None or d is None or d["design"] != "one tier" or not b["lost_gpu_hours_per_month"] > 0:
            return []
        parts = []
        if b["restore_s"] > 0:
            parts.append(f"a restore takes {fmt(b['restore_s'], 'seconds')}")
        if b["save_stall_s"] > 0:
            parts.append(f"each save stalls training {fmt(b['save_stall_s'], 'seconds')}")
        if b["first_epoch_s"] > 0:
            parts.append(f"the first epoch takes {fmt(b['first_epoch_s'], 'seconds')}")
        hours, usd = float(b["lost_gpu_hours_per_month"]), float(b["lost_gpu_usd_per_month"])
        priced = math.isfinite(usd)
        money = (
            f" = {fmt_usd(usd)} a month at ${self.gpu_price_per_hour:,.2f} per GPU-hour, beside its "
            f"{fmt_usd(b['monthly_total_usd'])} of storage"
            if priced
            else f" (no GPU price: {self.gpu_price_source}; {ask('gpu_price_per_hour')})"
        )
        out = [
            f"GPU time on {_n(b['units'], str(b['unit']))} of {b['option']}: {', '.join(parts)}; "
            f"{gpu_hours(hours)} a month idle{money}."
        ]
        c = self.cheapest_storage
        if priced and c is not None and c["option"] != b["option"] and c["monthly_total_usd"] < b["monthly_total_usd"]:
            out.append(
                f"{b['option']} costs {fmt_usd(b['monthly_total_usd'] - c['monthly_total_usd'])} a month more than "
                f"{c['option']} but idles {fmt_usd(c['lost_gpu_usd_per_month'] - usd)} less GPU time: cheaper in total "
                f"({fmt_usd(b['total_with_gpu_usd'])} against {fmt_usd(c['total_with_gpu_usd'])} a month)."
            )
        f = self.fastest
        if not priced and f is not None:
            out.append(
                f"Fastest: {f['option']}, {gpu_hours(float(f['lost_gpu_hours_per_month']))} a month idle "
                f"(restore {fmt(f['restore_s'], 'seconds')})."
            )
        return out

    def lines(self) -> list[str]:
        """The answer as short sentences (for the CLI, the report and the page)."""
        p = self.plan
        out = [self.headline, *self._assumed_site_line()]
        chosen = self.design
        if self.site is None:
            out += [
                f"{site_label(d['site'])}: {d['description']}"
                + ("" if d["design"] == "one tier" else f", {fmt_usd(d['monthly_total_usd'])} a month all in")
                for d in self.site_lines
            ]
        if self.deciding:
            out.append(self.deciding)
        charges = self.charges_line()
        if charges:
            out.append(charges)
        out += self.gpu_time_lines()
        # Under a two-tier headline the best single store is the first runner-up.
        runners = (
            (self.best, *self.runners_up[:1])
            if chosen is not None and chosen["design"] != "one tier" and self.best is not None
            else self.runners_up
        )
        if chosen is not None and not math.isfinite(chosen["staging_s"]):
            out.append(
                f"The time to copy the dataset to each node needs the node link: {ask('node_network_bytes_per_s')}."
            )
        if runners and self.site is not None:
            out.append("Runners-up: " + "; ".join(describe_option(r, brief=True) for r in runners))
        for d in self.designs:
            if d["design"] != "one tier" and d is not chosen and d["feasible"] and self.site is not None:
                out.append(
                    f"Or, a {d['design']} design: {d['description']}; "
                    f"{fmt_usd(d['monthly_total_usd'])} a month all in{_staging(d)}."
                )
        out.append(self.own)
        if p.read_bytes_per_s == 0 and p.page_cache_hit >= 1 and self.best is not None and p.dataset_bytes > 0:
            out.append(
                f"The dataset fits in each node's RAM: keep it in the cheapest store and let the page cache serve "
                f"every epoch after the first (which reads {fmt(p.first_epoch_read_bytes_per_s, 'bytes_per_s')})."
            )
        if self.feeds_gpus is not None and self.feeds_note:
            out.append(self.feeds_note)
        out.append(self._idle_line())
        out.append(tier_line(p))
        return [x for x in out if x]

    def _assumed_site_line(self) -> list[str]:
        """The site the answer assumed (none given) and what each other site's cheapest design costs."""
        return assumed_site_line(self.site, self.site_lines) if self.site_assumed and self.site else []

    def _idle_line(self) -> str:
        """What the bottleneck idles, in GPU-hours and dollars a month, or that it idles nothing."""
        p = self.plan
        gpus = p.scenario.gpus_per_job * p.scenario.jobs
        # One voice: the idle share is the chosen design's, planned on the tier that serves the reads.
        util = self.design_utilization if math.isfinite(self.design_utilization) else p.gpu_utilization
        neck = self.design_bottleneck or p.bottleneck
        if util < 1 - 1e-9:
            money = (
                f", ${self.idle_usd_per_month:,.0f} a month at ${self.gpu_price_per_hour:,.2f} per GPU-hour"
                if math.isfinite(self.idle_usd_per_month)
                else f" (no GPU price: {self.gpu_price_source}; {ask('gpu_price_per_hour')})"
            )
            neck = {"main": "main-process", "cpu": "CPU"}.get(neck, neck)  # "main" said as the runs say it
            return (
                f"The {neck} bottleneck idles {gpus:,} x {p.scenario.gpu} "
                f"{1 - util:.0%} of the time: "
                f"{gpu_hours(self.idle_gpu_hours_per_month)} a month{money}."
            )
        return f"The steady reads lose no GPU time: the {_n(gpus, 'GPU')} set the pace."


def assumed_site_line(site: str, site_lines: Sequence[Mapping[str, Any]]) -> list[str]:
    """``Site not given: on-prem assumed (...); set "Site" ... for another: rent on AWS $x, ...``: the
    site a job's or a cluster's answer assumed, and each other site's cheapest design."""
    others = [d for d in site_lines if d["site"] != site]
    prices = ", ".join(f"{SITE_WORDS[d['site']]} {fmt_usd(d['monthly_total_usd'])}" for d in others)
    return [
        f"Site not given: {SITE_NAMES[site]} assumed (no site, server or storage names one); "
        f"{ask('site')} for another" + (f": {prices} a month all in." if others else ".")
    ]


def site_question(site_lines: Sequence[Mapping[str, Any]]) -> str:
    """The answer's words when no site is known, a job's or a cluster's: ``it depends on the site
    (not given: ...): buy on-prem $x, rent on AWS $y, ... a month all in``."""
    totals = ", ".join(f"{SITE_WORDS[d['site']]} {fmt_usd(d['monthly_total_usd'])}" for d in site_lines)
    return f"it depends on the site (not given: {ask('site')}): {totals} a month all in"


def site_label(site: str) -> str:
    """``Buy on-prem``, ``Rent on AWS``: the start of a site's own line under that headline."""
    words = SITE_WORDS[site]
    return words[0].upper() + words[1:]


def answer_rows(
    p: Plan, rec: pd.DataFrame, site: str | None = None
) -> tuple[list[dict[str, Any]], tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    """The rows the answer may buy at ``site`` (default: the job's), best first; the plan's designs;
    with no site, each site's first feasible design. One rule for a job's answer and a 1-job
    cluster's (calc.cluster)."""
    sc = p.scenario
    site = site or job_site(sc)
    ok = rec[buyable(rec, site, sc.allow_other_site)]
    # Ready rows (the loader's workers cover the latency) before those that need more workers.
    ok = ok.sort_values("ready", ascending=False, kind="stable")
    rows = [{str(k): x for k, x in r.items()} for r in ok.to_dict("records")]
    designs_ = tuple({str(k): x for k, x in r.items()} for r in design_rows(p, rec).to_dict("records"))
    site_lines: tuple[dict[str, Any], ...] = ()
    if site is None:
        firsts = {}
        for d in designs_:
            if d["feasible"] and d["site"] not in firsts:
                firsts[d["site"]] = d
        site_lines = tuple(firsts[s] for s in st.SITES if s in firsts)
        chosen = min(site_lines, key=lambda d: d["monthly_total_usd"]) if site_lines else None
        rows = [r for r in rows if chosen is None or r["site"] in (chosen["site"], "any")]
    return rows, designs_, site_lines


def chosen_design(
    site: str | None, designs_: Sequence[Mapping[str, Any]], site_lines: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The design the answer buys: the cheapest site's line when the site is unknown, else the first feasible."""
    if site is None and site_lines:
        return min(site_lines, key=lambda d: float(d["monthly_total_usd"]))
    return next((d for d in designs_ if d["feasible"]), None)


def design_plan(p: Plan, rec: pd.DataFrame) -> Plan | None:
    """The plan on the design the answer buys for ``p`` (its reading tier), None when there is none."""
    _, designs_, site_lines = answer_rows(p, rec)
    return _design_plan(p, chosen_design(job_site(p.scenario), designs_, site_lines))


def _staging(d: Mapping[str, Any]) -> str:
    t = d["staging_s"]
    if d["design"] == "one tier" or t <= 0:
        return ""
    if not math.isfinite(t):
        return f"; the time to copy the dataset to each node needs the node link: {ask('node_network_bytes_per_s')}"
    return f"; copying the dataset to each node takes {fmt(t, 'seconds')}"


def _restore_bound(p: Plan) -> str:
    """Which bound set the restore budget, in words: the restart target or the MTBF share
    (calc.checkpoint.restore_budget_s takes the smaller)."""
    v, x = p.values, p.inputs
    budget, target = float(v["restore_budget_s"]), float(x["restore_target_s"])
    if budget >= target * (1 - 1e-9):
        return f", every rank's shard back within the {fmt(target, 'seconds')} restart target"
    share = float(x["checkpoint_stall_fraction"])
    return (
        f", every rank's shard back within {fmt(budget, 'seconds')} ({share:.0%} of the job's "
        f"{fmt(float(v['mtbf_job_s']), 'seconds')} MTBF, under the {fmt(target, 'seconds')} restart target)"
    )


def _deciding_restore(p: Plan, r: Any) -> str:
    """The deciding sentence when a restart's read sized the store: what it reads, within which
    budget and which bound set it, and the GETs an object store serves in that time."""
    v, dem = p.values, plan_demand(p)
    o = st.option(str(r["option"]))
    n = float(ck.restore_requests(dem.restore_shard_bytes, dem.restore_ranks, st.WRITE_REQUEST_BYTES))
    gets = f" in {fmt(n, 'count', 'GETs')} of 16 MiB" if o.counts_requests else ""
    return (
        f"Deciding: the restore read; a restart reads {fmt(dem.restore_bytes, 'bytes')}{gets} at "
        f"{fmt(v['restore_read_bytes_per_s'], 'bytes_per_s')}{_restore_bound(p)}, which sets "
        f"{_n(r['units'], str(r['unit']))} of {r['option']}."
    )


def _deciding_workload(p: Plan, r: Any) -> str:
    """The deciding sentence when an HDD's rated workload a year set the drives."""
    dem, o = plan_demand(p), st.option(str(r["option"]))
    return (
        f"Deciding: the drives' rated workload; the job reads {fmt(dem.read_bytes_per_year, 'bytes')} and writes "
        f"{fmt(dem.written_bytes_per_year, 'bytes')} a year, and each {o.label} is rated for "
        f"{fmt(o.workload_bytes_per_year, 'bytes')} a year of reads and writes, which sets "
        f"{_n(r['units'], str(r['unit']))} of {r['option']} "
        f"({fmt(float(r['drive_workload_bytes_per_year']), 'bytes')} a year each)."
    )


_DECIDING = {"restore read": _deciding_restore, "workload": _deciding_workload}
"""Limiting axes whose deciding sentence is a function of the plan and the chosen row alone."""


def deciding_sentence(p: Plan, d: Mapping[str, Any] | None, rec: pd.DataFrame) -> str:
    """One sentence: the constraint that sized the chosen design, with its number."""
    if d is None:
        return ""
    if d["design"] != "one tier":
        return _deciding_tiers(p, d)
    v = p.values
    r = rec[rec["option"] == d["store"]].iloc[0]
    lim = str(r["limiting"])
    o = st.option(str(r["option"]))
    if lim in ("bandwidth", "checkpoint writes", "iops"):
        dem = plan_demand(p)
        bursts = (
            f", save burst {fmt(v['checkpoint_save_burst_bytes_per_s'], 'bytes_per_s')} against "
            f"{fmt(v['checkpoint_write_bytes_per_s'], 'bytes_per_s')} on average, restore read "
            f"{fmt(v['restore_read_bytes_per_s'], 'bytes_per_s')}"
            if dem.saving
            else ""
        )
        need = (
            f"{fmt(dem.need_bytes_per_s, 'bytes_per_s')} at its design point, the {dem.design_point}"
            f"{_restore_bound(p) if dem.design_point == 'restore read' else ''} "
            f"(reads {fmt(v['read_bytes_per_s'], 'bytes_per_s')}{bursts})"
            if lim != "iops"
            else fmt(st.random_reads(o, v["read_iops"], v["file_opens_per_s"]), "count_per_s", "random reads/s")
        )
        return f"Deciding: {lim}; the job needs {need}, which sets {_n(r['units'], str(r['unit']))} of {r['option']}."
    if lim in _DECIDING:
        return _DECIDING[lim](p, r)
    if lim == "capacity":
        cap_need = p.dataset_bytes + (v["checkpoint_capacity_bytes"] if v["checkpoint_write_bytes_per_s"] > 0 else 0.0)
        fill = f" at most {p.scenario.fill_limit:.0%} full" if r["protection"] else ""
        return (
            f"Deciding: capacity; {fmt(cap_need, 'bytes')} (dataset and kept checkpoints) must fit{fill}, "
            f"which sets {_n(r['units'], str(r['unit']))} of {r['option']}."
        )
    if lim == "write requests":
        _, puts = checkpoint_writes_per_month(p)
        return (
            f"Deciding: checkpoint write requests; {fmt(puts / MONTH_S, 'count_per_s', 'write requests/s')} on average "
            f"(16 MiB parts; saves come in bursts), which sets {_n(r['units'], str(r['unit']))} of {r['option']}."
        )
    if lim == "RAM":
        return f"Deciding: the dataset ({fmt(p.dataset_bytes, 'bytes')}) fits in each node's free RAM."
    if lim == "endurance":
        written, _ = checkpoint_writes_per_month(p)
        drive = st.option(o.server_drive) if o.server_drives else o
        return (
            f"Deciding: drive endurance; checkpoints write {fmt(written * 365.25 / 30, 'bytes')} a year, and each "
            f"drive may take its rated writes spread over its own {drive.endurance_years:g}-year rating "
            f"({fmt(drive.endurance_bytes / drive.endurance_years, 'bytes')} a year), which sets "
            f"{_n(r['units'], str(r['unit']))} of {r['option']}."
        )
    if lim == "metadata":
        return (
            f"Deciding: metadata; {fmt(v['metadata_ops_per_s'], 'count_per_s', 'metadata ops/s')} of file opens, "
            f"which sets {_n(r['units'], str(r['unit']))} of {r['option']} (its metadata grows with its size)."
        )
    return f"Deciding: {lim}; it sets {_n(r['units'], str(r['unit']))} of {r['option']}."


def _deciding_tiers(p: Plan, d: Mapping[str, Any]) -> str:
    """The sentence for a design whose reads come from a tier in the nodes (their RAM or a copy)."""
    if d["design"] == "page cache":
        return (
            f"Deciding: the dataset ({fmt(p.dataset_bytes, 'bytes')}) fits in each node's free RAM, so the store "
            "is read once per node and only holds it."
        )
    clients = nodes_reading(p)
    who = "the node" if clients == 1 else f"each of {_n(clients, 'node')}"  # never "each of 1 node"
    return (
        f"Deciding: {who} reads {fmt(p.values['read_bytes_per_s'] / clients, 'bytes_per_s')} "
        f"from its own copy; the store only holds the dataset ({fmt(p.dataset_bytes, 'bytes')})"
        + (" and takes the checkpoints." if p.saves else ".")  # a job that saves nothing: no checkpoints
    )


def job_answer(x: PlanLike, /, **overrides: Any) -> Answer:
    """The answer card: storage to buy, runners-up, the job's own storage judged, GPUs fed, idle cost."""
    p = as_plan(x, overrides)
    assumed = job_site(p.scenario) is None
    others: tuple[dict[str, Any], ...] = ()
    if assumed:
        # One answer: at the default site, with each site's cheapest design said beside it.
        others = answer_rows(p, recommend(p))[2]
        p = plan(dataclasses.replace(p.scenario, site=DEFAULT_SITE))
    sc = p.scenario
    site = job_site(sc)
    rec = recommend(p)
    rows, designs_, site_lines = answer_rows(p, rec)
    best = rows[0] if rows else None
    cheapest = min(rows, key=lambda r: r["monthly_total_usd"]) if rows else None
    fastest = min(rows, key=lambda r: r["lost_gpu_hours_per_month"]) if rows else None
    given = sc.storage is None and (sc.storage_bytes_per_s is not None or sc.storage_iops is not None)
    own, ok_now = _own(p, rec) if sc.storage else _given_store(p) if given else _no_storage(p)
    option, n_units = (
        (sc.storage, sc.storage_units) if sc.storage else (best["option"], best["units"]) if best else (None, None)
    )
    # The card names a design's description, not best, when a two-tier design or another site won.
    chosen = chosen_design(site, designs_, site_lines)
    headline_is_best = chosen is None or (chosen["design"] == "one tier" and site is not None)
    named = sc.storage is not None or (best is not None and headline_is_best)
    feeds, feeds_note = _feeds(p, option, n_units, ok_now if sc.storage else True, named)
    # One voice: with no storage of its own, the idle share is the chosen design's.
    served = _design_plan(p, chosen) if not sc.storage and not given else None
    idle_h, price_f, src = idle_gpus(served or p)
    a = Answer(
        designs=designs_,
        plan=p,
        best=best,
        runners_up=tuple(rows[1:3]),
        own=own,
        feeds_gpus=feeds,
        feeds_note=feeds_note,
        idle_gpu_hours_per_month=idle_h,
        idle_usd_per_month=idle_h * price_f,
        gpu_price_per_hour=price_f,
        gpu_price_source=src,
        site=site,
        site_lines=others or site_lines,
        site_assumed=assumed,
        cheapest_storage=cheapest,
        fastest=fastest,
        design_utilization=served.gpu_utilization if served is not None else math.nan,
        design_bottleneck=served.bottleneck if served is not None else "",
        served=served,
    )
    return dataclasses.replace(a, deciding=_read_time_binds(p, a.design) or deciding_sentence(p, a.design, rec))


def idle_gpus(p: Plan) -> tuple[float, float, str]:
    """GPU-hours a month the bottleneck idles, the GPU's price per hour and its source [h, USD/h]."""
    sc = p.scenario
    price, src = en.gpu_price_per_hour(sc.gpu, sc.gpu_price_per_hour)
    return en.idle_gpu_hours_per_month(sc.gpus_per_job * sc.jobs, p.gpu_utilization), price, src


def gpu_hours(hours: float) -> str:
    """Idle GPU time as said [GPU-h]: whole hours from 10 up, two significant digits below ("0.94
    GPU-hours": the first epoch of a small job idles under an hour a month, which rounded to "1 GPU-hours")."""
    return _n(round(hours) if hours >= 10 else float(f"{hours:.2g}"), "GPU-hour")


def _no_storage(p: Plan) -> tuple[str, bool]:
    if p.dataset_bytes == 0:  # a checkpoint-only job (MLPerf Storage checkpointing): its bursts, not 0 B/s
        return (
            f"No storage chosen: the job reads no dataset; its checkpoints need "
            f"{fmt(p.checkpoint_save_burst_bytes_per_s, 'bytes_per_s')} while a save runs and "
            f"{fmt(p.restore_read_bytes_per_s, 'bytes_per_s')} to restore within {fmt(p.restore_budget_s, 'seconds')}.",
            True,
        )
    own = (
        f"No storage chosen: the job needs {fmt(p.read_bytes_per_s, 'bytes_per_s')} and "
        f"{fmt(p.read_iops, 'count_per_s', 'reads/s')} in steady state "
        f"({fmt(p.first_epoch_read_bytes_per_s, 'bytes_per_s')} in the first epoch)."
    )
    return own, True


def keeps_up(p: Plan) -> bool:
    """The plan's own storage keeps up with its GPUs: its stage is not what holds them back, whatever
    else binds (a lone worker that both reads and decodes binds as "workers" while its read time is short)."""
    return p.gpu_utilization >= 1 - 1e-9 or p.stages.get("storage", math.inf) >= p.stages["gpu"] * (1 - 1e-9)


def _given_store(p: Plan) -> tuple[str, bool]:
    """A store given by its figures (``storage_bytes_per_s``, ``storage_iops``, ``storage_latency_s``:
    what calc.measure.fio and calc.measure.dlio return) judged against the job's reads and saves."""
    v = p.values
    have = (
        f"{fmt(p.storage_bytes_per_s, 'bytes_per_s')}, {fmt(float(v['storage_iops']), 'count_per_s', 'reads/s')}, "
        f"{fmt(float(v['storage_latency_s']), 'seconds')} a read"
    )
    burst, wrote = float(v["checkpoint_save_burst_bytes_per_s"]), float(v["storage_write_bytes_per_s"])
    writes_ok, reads_ok = wrote >= burst * (1 - 1e-9), keeps_up(p)
    need = f"{fmt(p.read_bytes_per_s, 'bytes_per_s')} and {fmt(p.read_iops, 'count_per_s', 'reads/s')}"
    save = f" and a {fmt(burst, 'bytes_per_s')} checkpoint save burst" if burst > 0 else ""
    if reads_ok and writes_ok:
        return f"Your store ({have}) serves the job: it needs {need}{save}.", True
    short = [] if reads_ok else [f"its reads hold the GPUs at {p.gpu_utilization:.0%} (the job needs {need})"]
    if not writes_ok:
        short.append(f"it writes {fmt(wrote, 'bytes_per_s')} of the {fmt(burst, 'bytes_per_s')} checkpoint save burst")
    return f"Your store ({have}) does not serve the job: {'; '.join(short)}.", reads_ok


def _design_plan(p: Plan, d: Mapping[str, Any] | None) -> Plan | None:
    """The plan on the chosen design's tier that serves the reads (a local cache's drives, else the
    store), so the card's idle share is the design's; None when no design or no option to plan on."""
    if d is None:
        return None
    tier = d["local"] if d["design"] == "local cache" else d["store"] if d["design"] == "one tier" else ""
    if not tier or tier not in st.options(p.scenario.storage):
        return None
    # At the units the design buys (every node's drives for a local cache), not the option's maximum:
    # the card's utilisation is the design's own.
    local = d["design"] == "local cache"
    units = float(d["local_units_per_node"]) * nodes_reading(p) if local else float(d["store_units"])
    # An option sold by capacity is planned at the size bought (4.6875 TiB of FSx, not 5: issue 38);
    # a drive, server or volume count is whole (rounded up, as bought).
    o = st.option(tier)
    given = None
    if math.isfinite(units) and units > 0:
        given = float(units) if o.sold_by_capacity else float(math.ceil(units - 1e-9))
    # Drives the engine houses in a storage server on the network (checkpoints) are planned as such:
    # durable, as the row that bought them says (issue 38: the plan said they die with the node).
    server = not local and en.bought_drives(o) and en.size_option(o, plan_demand(p)).networked
    return plan(p.scenario.replace(storage=tier, storage_units=given, storage_housing="server" if server else "node"))


def _own(p: Plan, rec: pd.DataFrame) -> tuple[str, bool]:
    """The job's own storage judged in a sentence, and whether it keeps up with the GPUs now."""
    sc = p.scenario
    assert sc.storage is not None
    need_bw, need_iops = p.read_bytes_per_s, p.read_iops
    mine = dict(rec[rec["option"] == sc.storage].iloc[0])
    units = sc.storage_units
    o = st.option(sc.storage)
    have = f"{sc.storage} (as many units as needed, up to its maximum)"
    if units is not None:
        have = f"{_units_text(units)} x {sc.storage}"
    ok_now = keeps_up(p)
    would = f"; {mine['units']:,} would" if mine["feasible"] else f"; it cannot: {mine['why_not']}"  # what buying takes
    if o.kind == "ram" and not p.fits_in_ram:
        own = f"Your storage, {have}, cannot hold the dataset ({fmt(p.dataset_bytes, 'bytes')}): {mine['why_not']}."
    elif need_bw == 0 and p.page_cache_hit >= 1:
        own = (
            f"Your storage, {have}, is read once: the dataset ({fmt(p.dataset_bytes, 'bytes')}) fits in node RAM, "
            f"so after the first epoch ({fmt(p.first_epoch_read_bytes_per_s, 'bytes_per_s')} while it lasts) "
            "nothing more is read from it."
        )
    elif ok_now:
        own = (
            f"Your storage, {have}, delivers what the job needs "
            f"({fmt(need_bw, 'bytes_per_s')}, {fmt(need_iops, 'count_per_s', 'reads/s')})."
        )
    elif p.storage_bytes_per_s >= need_bw and float(p.values["storage_iops"]) < need_iops * (1 - 1e-9):
        # Bandwidth to spare but too few random reads a second (HDDs): more workers do not lift that.
        own = (
            f"Your storage, {have}, delivers {fmt(float(p.values['storage_iops']), 'count_per_s', 'reads/s')} of "
            f"the {fmt(need_iops, 'count_per_s', 'reads/s')} needed (random reads bind, not its bandwidth){would}."
        )
    elif not math.isfinite(p.storage_bytes_per_s) or p.storage_bytes_per_s >= need_bw:
        # Bandwidth to spare yet the bottleneck: its read time binds (Little's law), not its size.
        own = (
            f"Your storage, {have}, holds the job back by its read time "
            f"({fmt(p.values['storage_latency_s'], 'seconds')} a read, {sc.num_workers} worker(s) per GPU), "
            "not by its bandwidth: more workers or asynchronous reads lift it."
        )
    else:
        own = (
            f"Your storage, {have}, delivers {fmt(p.storage_bytes_per_s, 'bytes_per_s')} of the "
            f"{fmt(need_bw, 'bytes_per_s')} needed{would}."
        )
    if not mine["feasible"] and ok_now and o.kind != "ram":
        own += f" As a store to buy it does not fit: {mine['why_not']}."
    return own, ok_now


def _units_text(units: float) -> str:
    """A unit count as ordered: 24 (an int or a whole float alike), 4.6875 (TiB sold in steps)."""
    return f"{int(units):,}" if float(units).is_integer() else f"{float(units):,.10g}"


def _feeds(p: Plan, option: str | None, n_units: float | None, fed_now: bool, named: bool) -> tuple[int | None, str]:
    """How many GPUs of this job ``n_units`` of ``option`` feed, and the sentence; (None, "") when
    not asked, not computable, or when the count contradicts the plan's own verdict ``fed_now``
    (one source per figure)."""
    if option is None or p.read_bytes_per_s <= 0:
        return None, ""
    sc = p.scenario
    gpus = sc.gpus_per_job * sc.jobs
    try:
        feeds = max_gpus(sc, storage=option, units=n_units)
    except InputError:
        return None, ""
    if (feeds >= gpus) != fed_now or not named:
        return None, ""
    size = f"{_units_text(n_units)} x {option}" if n_units is not None else f"{option} at its largest size"
    many = f"more than 100 times this job's {_n(gpus, 'GPU')}" if feeds > 100 * gpus else _n(feeds, "GPU")
    return feeds, f"{size} can feed {many} of this job at its target utilisation."


def _read_time_binds(p: Plan, d: Mapping[str, Any] | None) -> str:
    """The deciding sentence when the chosen local cache serves the bandwidth but the loader's
    reads in flight do not (Little's law): planned with those drives, read time still binds."""
    if d is None or d["design"] != "local cache":
        return ""
    sc = p.scenario
    q = _design_plan(p, d)  # planned on the drives the design buys, so the sentence and the card agree
    if q is None or q.bottleneck != "storage" or q.gpu_utilization >= sc.target_gpu_utilization - 1e-9:
        return ""
    v = q.values  # the plan's own figures: reads in flight = reads/s x read time (Little's law)
    return (
        f"Deciding: read time; the job needs {v['outstanding_reads']:,.1f} reads in flight "
        f"({fmt(v['read_iops'], 'count_per_s', 'reads/s')} x {fmt(v['storage_latency_s'], 'seconds')} a read) and "
        f"its {_n(sc.num_workers * sc.gpus_per_job * sc.jobs, 'worker')} keep fewer: the drives carry the bandwidth, "
        f"but GPU utilisation stays at {q.gpu_utilization:.0%} until the loader has more workers "
        f"({ask('num_workers')}) or reads go asynchronous."
    )


def workload_tier(p: Plan) -> catalog.ReferenceTier:
    """The published tier of the job's workload class (presets/reference_tiers.yaml, NVIDIA's
    Table 5): by what each node's cache holds of the dataset, the plan's page-cache hit: all of it
    (Good), part (Better), none: too large, or read once (Best)."""
    hit = p.page_cache_hit
    share = "all" if hit >= 1 else "part" if hit > 0 else "none"
    return next(t for t in catalog.reference_tiers().values() if t.cache == share)


def tier_line(p: Plan) -> str:
    """The job's design point per node against its workload's published tier, and what the
    difference buys: a restart at the tier's read rate, and how many such jobs' reads the tier's
    per-node rate carries. "" for a job that neither reads nor saves."""
    t, nodes = workload_tier(p), max(nodes_reading(p), 1)
    bps: Any = "bytes_per_s"
    read = max(p.read_bytes_per_s, p.restore_read_bytes_per_s) / nodes  # the larger read burst
    write = p.checkpoint_save_burst_bytes_per_s / nodes
    if read <= 0 and write <= 0:
        return ""
    buys = []
    restore = float(p.values.get("checkpoint_restore_bytes", 0.0))
    if restore > 0 and p.restore_read_bytes_per_s > 0 and write > 0:  # a job that saves restarts from it
        at_job, at_tier = restore / p.restore_read_bytes_per_s, restore / (t.node_read_bytes_per_s * nodes)
        buys.append(
            f"a restart reads {fmt(restore, 'bytes')} in {fmt(at_tier, 'seconds')} at the tier's rate, "
            f"{fmt(at_job, 'seconds')} at this design point"
        )
    if read > 0:
        buys.append(f"the tier's read carries {t.node_read_bytes_per_s / read:,.1f}x this job's per node")
    return (
        f"Published guidance: NVIDIA DGX SuperPOD's {t.label} tier ({t.workload}) is "
        f"{fmt(t.node_read_bytes_per_s, bps)} read and {fmt(t.node_write_bytes_per_s, bps)} write per node "
        f"({fmt(t.su_read_bytes_per_s, bps)} and {fmt(t.su_write_bytes_per_s, bps)} per {t.nodes_per_su}-node SU); "
        f"this job's design point is {fmt(read, bps)} read and {fmt(write, bps)} write per node on {nodes:,} "
        f"node{'s' if nodes != 1 else ''}" + (f"; {'; '.join(buys)}" if buys else "") + f" ({t.source})."
    )
