"""Complete storage designs for a job (docs/model.md section 7.3.1): one tier, or a cache in the
nodes (their RAM, their own drives, the server's NVMe) in front of a store that holds the dataset
and takes the checkpoints; which rows an answer may buy; and an option row in words.

designs(): every design of the job's site (of every site when it is not known), cheapest first.
describe_option(): ``3 drives of nvme-gen4 in mirror (23 TB usable), $1,234 to buy, ...``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from calc import catalog
from calc import engine as en
from calc import storage as st
from calc.engine import _n, reads_in_flight
from calc.plan import Plan, plan
from calc.site import job_site, workstation
from calc.sizing import PlanLike, as_plan, nodes_reading, rank_plan, recommend
from calc.units import fmt, fmt_usd

__all__ = ["buyable", "buyable_order", "describe_option", "design_rows", "designs"]


def designs(x: PlanLike, /, **overrides: Any) -> pd.DataFrame:
    """Complete storage designs for the job, cheapest comparable monthly cost first.

    - ``one tier``: a shared store that serves every read (``recommend``'s feasible rows);
    - ``page cache``: when the dataset fits in each node's free RAM, a store that only holds
      it, read once per node; every later epoch comes from RAM;
    - ``server NVMe cache``: the scenario's server preset has its own NVMe (a DGX's cache drives,
      a cloud instance's instance store): it holds a copy per node at no extra cost;
    - ``local cache``: data-centre drives bought for every on-prem node, each holding a full copy
      of the dataset below the fill limit (a cache copy: no protection) and sized for the node's full
      read rate (bandwidth, random reads, capacity), plus a store that holds the dataset and takes
      the checkpoints. ``staging_s`` is the time to copy the dataset onto every node before
      training: the slowest of the node's link, the store's per-client cap, the drives' write
      rate and the store's aggregate rate shared by all nodes.

    Every design stays inside one site (``site``, the server's or the storage's); with the site
    unknown, designs of every site are listed, each inside its own.

    Columns: design, site, description, feasible, why_not, monthly_rent_usd, monthly_read_usd,
    monthly_write_usd, monthly_egress_usd, purchase_usd, monthly_total_usd, staging_s (inf: the
    node link is not given), store (option), local (option or ""), local_units_per_node, ready
    (the loader's workers keep enough reads in flight at the tier that serves the reads; ready
    designs come first among the feasible ones, as in ``recommend``).
    """
    p = as_plan(x, overrides)
    return design_rows(p, recommend(p))


_CHARGES = (
    "monthly_rent_usd",
    "monthly_read_usd",
    "monthly_write_usd",
    "monthly_egress_usd",
    "monthly_power_usd",
    "monthly_support_usd",
)


def design_rows(p: Plan, one: pd.DataFrame) -> pd.DataFrame:
    """``designs`` from the plan's ``recommend`` table ``one`` (the answer passes its own)."""
    sc = p.scenario
    known = job_site(sc)
    rows: list[dict[str, Any]] = []
    full: Plan | None = None
    store_rank: pd.DataFrame | None = None
    for site in (known,) if known else st.SITES:
        # The same rows the card's best comes from (other sites too when allowed): headline and charges agree.
        for r in one[buyable(one, site, sc.allow_other_site)].head(3).to_dict("records"):
            rows.append(
                {
                    "design": "one tier",
                    "site": site,
                    "description": describe_option({str(k): x for k, x in r.items()}, brief=True),
                    "feasible": True,
                    "why_not": "",
                    **{k: float(r[k]) for k in _CHARGES},
                    # A rented option buys nothing: 0, not the catalog's "no purchase price".
                    "purchase_usd": float(r["purchase_usd"]) if math.isfinite(r["purchase_usd"]) else 0.0,
                    "monthly_total_usd": float(r["monthly_total_usd"]),
                    "lost_gpu_usd_per_month": float(r["lost_gpu_usd_per_month"]),
                    "staging_s": 0.0,
                    "store": r["option"],
                    "store_units": float(r["units"]),
                    # A volume several nodes share needs a cluster file system: the card says so.
                    "needs": en.multi_attach(st.option(r["option"]), nodes_reading(p)),
                    "local": "",
                    "local_units_per_node": 0,
                    "ready": True,  # _buyable keeps ready rows only
                }
            )
        if full is None:
            # Every read at full rate, nothing cached: what a local tier must serve per node.
            full = plan(sc.replace(page_cache=False, cache_fraction=0.0))
            store_rank = rank_plan(full, reads=False)
        assert store_rank is not None
        rows += _two_tier(p, full, store_rank, site)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    # Storage plus the GPU time it idles, when a GPU price is known (as recommend ranks).
    lost = df["lost_gpu_usd_per_month"].fillna(0.0)
    df["_total"] = df["monthly_total_usd"] + lost
    return (
        df.sort_values(["feasible", "ready", "_total"], ascending=[False, False, True], kind="stable")
        .drop(columns="_total")
        .reset_index(drop=True)
    )


@dataclass(frozen=True)
class _Tiers:
    """What every two-tier design of one site shares: the store behind the cache and its charges."""

    p: Plan
    full: Plan  # every read at full rate, nothing cached: what a local tier serves per node
    site: str
    store: dict[str, Any]
    clients: int
    link: float  # the node's link to the store [bytes/s]
    per_node_in: float  # what one node can pull from the store: its link and the store's per-client cap
    store_bw: float  # the store's units' read rate, shared by every node's copy [bytes/s]

    def row(
        self,
        design: str,
        description: str,
        why: str,
        buy: float,
        stage: float,
        local: str,
        k: int,
        ready: bool = True,
        watts: float = 0.0,
    ) -> dict[str, Any]:
        """A design row: the store's own charges (a copy onto every node is read once, not every
        epoch) and its purchase, plus ``buy`` for the cache tier, whose ``watts`` draw power and
        whose purchase takes support like the store's (calc.engine.running_usd)."""
        sc = self.p.scenario
        base = {c: float(self.store[c]) for c in _CHARGES}
        base["monthly_power_usd"] += st.power_usd_per_month(watts, sc.power_usd_per_kwh)
        base["monthly_support_usd"] += st.support_usd_per_month(buy, sc.support_share)
        store_buy = float(self.store["purchase_usd"]) if math.isfinite(self.store["purchase_usd"]) else 0.0
        purchase = store_buy + buy
        return {
            "design": design,
            "site": self.site,
            "description": description,
            "feasible": not why,
            "why_not": why,
            **base,
            "purchase_usd": purchase,
            "monthly_total_usd": sum(base.values()) + purchase / sc.amortization_months,
            "lost_gpu_usd_per_month": float(self.store["lost_gpu_usd_per_month"]),
            "staging_s": stage,
            "store": self.store["option"],
            "store_units": float(self.store["units"]),
            "needs": en.multi_attach(st.option(self.store["option"]), self.clients),
            "local": local,
            "local_units_per_node": k,
            "ready": ready,
        }

    def copy_s(self, per_node: float) -> float:
        """Time to copy the dataset onto every node at ``per_node`` bytes/s each [s]."""
        return _copy_s(self.p.dataset_bytes, self.clients, self.link, per_node, self.store_bw)


def _tiers(p: Plan, full: Plan, store_rank: pd.DataFrame, site: str) -> _Tiers | None:
    """The store behind a cache at ``site``: shared and durable, so not RAM, and a node's own drives
    only when one node reads and they are bought as a protected array; None when none serves."""
    clients = nodes_reading(p)
    opts = st.options(p.scenario.storage)
    shared = np.array(
        [
            opts[n].kind != "ram" and (opts[n].kind != "local" or (clients == 1 and en.bought_drives(opts[n])))
            for n in store_rank["option"]
        ],
        dtype=bool,
    )
    stores = store_rank[buyable(store_rank, site) & shared]
    if not len(stores):
        return None
    store = dict(stores.iloc[0])
    so = st.option(str(store["option"]))
    link = p.inputs["node_network_bytes_per_s"]
    # The per-client cap counts once, in what a node pulls; the store's units share the rest.
    return _Tiers(
        p, full, site, store, clients, link, min(link, so.client_bytes_per_s), store["units"] * so.read_bytes_per_s
    )


def _two_tier(p: Plan, full: Plan, store_rank: pd.DataFrame, site: str) -> list[dict[str, Any]]:
    """The local-cache and server-NVMe designs of one site."""
    t = _tiers(p, full, store_rank, site)
    if t is None:
        return []
    rows: list[dict[str, Any]] = []
    # page_cache=False is the user's word (the nodes' RAM is not free to cache): no page-cache design.
    # With the page cache on, the one-tier rows already read the dataset once (the first epoch).
    # When the page cache already serves every epoch after the first, a drive cache adds cost only.
    if p.read_bytes_per_s == 0 and p.page_cache_hit >= 1:
        return rows
    local = _local_cache(t)
    if local is not None:
        rows.append(local)
    nvme = _server_nvme(t)
    if nvme is not None:
        rows.append(nvme)
    return rows


def _local_cache(t: _Tiers) -> dict[str, Any] | None:
    """Data-centre drives bought for every on-prem node, each a full copy sized for the node's full
    read rate; the best of the catalog's drives (feasible, then ready, then cheapest)."""
    sc, fv = t.p.scenario, t.full.values
    if t.site != "on-prem":  # drives are bought on-prem only: a cloud instance's own store is its local tier
        return None
    dataset, clients = t.p.dataset_bytes, t.clients
    node = dataclasses.replace(  # one node's share of every read; no writes: the store takes them
        en.plan_demand(t.full),
        read_bytes_per_s=fv["read_bytes_per_s"] / clients,
        read_iops=fv["read_iops"] / clients,
        file_opens_per_s=fv["file_opens_per_s"] / clients,
        write_bytes_per_s=0.0,
        capacity_bytes=dataset,
        written_bytes_per_month=0.0,
        clients=1,
        protection=None,
    )
    # Every read comes from the local drives: each GPU's loader must keep enough of them in flight.
    reads_per_gpu = fv["read_iops"] / (sc.gpus_per_job * sc.jobs)
    at_desk = workstation(sc)
    srv = catalog.server(sc.server) if sc.server else None
    best: dict[str, Any] | None = None
    for o in st.options(sc.storage).values():
        if not en.bought_drives(o) or o.unit != "drive" or (o.drive_class == "consumer" and not at_desk):
            continue
        # A cache copy: no protection, filled to the fill limit, sized for one node's reads only.
        _, k, limiting = en.size_axes(o, node)
        why = f"needs {k} drives per node on {limiting}; a server holds {o.max_units:,.0f}" if k > o.max_units else ""
        why = why or _bays(srv, o, k)
        buy = clients * k * o.purchase_price
        ready = reads_in_flight(reads_per_gpu, o.service_time_s(fv["request_bytes"])) <= max(en.in_flight(node), 1)
        r = t.row(
            "local cache",
            f"{_n(k, 'drive')} of {o.name} per node on {_n(clients, 'node')} ({fmt_usd(buy)} to buy; "
            f"a cache copy, filled to at most {sc.fill_limit:.0%}, in the node's own drive bays"
            + _bays_needed(srv, o, k)
            + ") + "
            + describe_option(t.store, brief="store"),
            why,
            buy,
            t.copy_s(min(t.per_node_in, k * o.write_bytes_per_s)),
            o.name,
            k,
            ready,
            clients * k * (o.watts if math.isfinite(o.watts) else 0.0),
        )
        # A drive whose read time leaves the GPUs waiting loses to a dearer one that does not.
        if best is None or _order(r) < _order(best):
            best = r
    return best


def _order(r: Mapping[str, Any]) -> tuple[bool, bool, float]:
    """Feasible, then ready, then cheapest: the order ``designs`` sorts by."""
    return (not r["feasible"], not r["ready"], float(r["monthly_total_usd"]))


def _server_nvme(t: _Tiers) -> dict[str, Any] | None:
    """The server's own NVMe (instance store on cloud GPUs): nothing to buy but the store."""
    sc = t.p.scenario
    srv = catalog.server(sc.server) if sc.server else None
    if srv is None or srv.site != t.site or not math.isfinite(srv.local_nvme_bytes):
        return None
    dataset = t.p.dataset_bytes
    node_bw = t.full.values["read_bytes_per_s"] / t.clients
    fits = dataset <= srv.local_nvme_bytes * sc.fill_limit
    fast = not math.isfinite(srv.local_nvme_read_bytes_per_s) or node_bw <= srv.local_nvme_read_bytes_per_s
    why = (
        ""
        if fits and fast
        else f"the dataset ({fmt(dataset, 'bytes')}) exceeds {sc.fill_limit:.0%} of the "
        f"{fmt(srv.local_nvme_bytes, 'bytes')} of NVMe"
        if not fits
        else f"each node reads {fmt(node_bw, 'bytes_per_s')}; its NVMe delivers "
        f"{fmt(srv.local_nvme_read_bytes_per_s, 'bytes_per_s')}"
    )
    rate = (
        ""
        if math.isfinite(srv.local_nvme_read_bytes_per_s)
        else f" (its read rate is not published: check it against {fmt(node_bw, 'bytes_per_s')} per node)"
    )
    return t.row(
        "server NVMe cache",
        f"the {srv.name} nodes' own NVMe ({srv.local_nvme}, {fmt(srv.local_nvme_bytes, 'bytes')}, "
        f"already in the server){rate} + {describe_option(t.store, brief='store')}",
        why,
        0.0,
        t.copy_s(t.per_node_in),
        "server NVMe",
        0,
    )


def buyable_order(p: Plan, rec: pd.DataFrame) -> list[str]:
    """Options of ``rec`` the answer may buy for ``p``, in the answer's order (ready first, then
    ``recommend``'s cheapest-first order): the same rule the card uses, for charts and reports."""
    sc = p.scenario
    ok = rec[buyable(rec, job_site(sc), sc.allow_other_site)].sort_values("ready", ascending=False, kind="stable")
    return [str(o) for o in ok["option"]]


def buyable(rec: pd.DataFrame, site: str | None, allow_other: bool = False) -> npt.NDArray[np.bool_]:
    """Rows of a ``recommend`` table that serve, are ready, have a price and are at ``site`` (node RAM is at
    every site; other sites too when ``allow_other``, their egress priced in the row)."""
    opts = st.options(*rec["option"])
    sites = rec["site"].to_numpy()
    here = (sites == site) | (sites == "any") if site is not None and not allow_other else np.ones(len(rec), bool)
    # Ready: the loader's workers keep enough reads in flight (Little's law); a row that is not
    # would leave the plan's storage stage short of the rate it was sized for.
    # Node RAM is no store: the dataset must live somewhere durable (the page-cache design pairs them).
    store = np.array([opts[n].kind != "ram" for n in rec["option"]], dtype=bool)
    ok: npt.NDArray[np.bool_] = (
        rec["feasible"].to_numpy(dtype=bool)
        & rec["ready"].to_numpy(dtype=bool)
        & np.isfinite(rec["monthly_total_usd"].to_numpy(dtype=float))
        & here
        & store
    )
    return ok


def _bays_needed(srv: catalog.Server | None, o: st.StorageOption, k: int) -> str:
    """``: the server must have 4 free U.2 bays`` when the server's bays are not stated."""
    if srv is not None and srv.drive_bays >= 0:
        return ""
    return f": the server must have {_n(k, 'free ' + o.form_factor + ' bay')}"


def _bays(srv: catalog.Server | None, o: st.StorageOption, k: int) -> str:
    """Why ``k`` drives of ``o`` cannot go in each node's bays ("" when they can or the bays are not stated)."""
    if srv is None or srv.drive_bays < 0:
        return ""
    if srv.drive_bays == 0:
        return f"a {srv.name} has no drive bays to add drives to (its own drives are the server NVMe design)"
    if o.form_factor and o.form_factor != srv.bay_form_factor:
        return f"a {srv.name}'s bays take {srv.bay_form_factor} {srv.bay_interface} drives, not {o.form_factor}"
    if k > srv.free_bays:
        return (
            f"needs {k} drive{'' if k == 1 else 's'} per node; a {srv.name} has {srv.free_bays} free bays "
            f"({srv.bays_used} of {srv.drive_bays} {srv.bay_form_factor} bays hold its own drives)"
        )
    return ""


def _copy_s(dataset: float, clients: int, link: float, per_node: float, store_bw: float) -> float:
    """Time to copy the dataset onto every node [s]: each node at ``per_node`` bytes/s, all
    of them sharing the store's ``store_bw``. Without a node link (``link`` inf) the time is
    unknown, not zero: inf, which the answer turns into a request for the link."""
    if not math.isfinite(link):
        return math.inf
    return max(dataset / per_node, clients * dataset / store_bw)


def describe_option(row: Mapping[str, Any], brief: bool | str = False) -> str:
    """``3 drives of nvme-gen4 in mirror (23 TB usable), $1,234 to buy, $34 a month all in; 2.1x headroom...``.

    ``brief=True`` drops the headroom; ``brief="store"`` says only what holds the dataset.
    Capacity is usable capacity (after protection), in decimal TB.
    """
    units, unit = en.whole(float(row["units"])), str(row["unit"])
    cap = row.get("capacity_bytes", math.inf)
    scheme = row.get("protection", "")
    usable = " usable" if scheme else ""
    size = f" ({fmt(cap, 'bytes')}{usable})" if isinstance(cap, float) and math.isfinite(cap) else ""
    how = f" in {scheme}" if scheme else ""
    cost = []
    if math.isfinite(row.get("purchase_usd", math.nan)):
        cost.append(f"{fmt_usd(row['purchase_usd'])} to buy")
    if math.isfinite(row.get("monthly_total_usd", math.nan)):
        cost.append(f"{fmt_usd(row['monthly_total_usd'])} a month all in")
    else:
        cost.append("no public price")
    head = min(row.get("iops_headroom", math.inf), row.get("bandwidth_headroom", math.inf))
    times = "over 100x" if head > 100 else f"{head:.1f}x"
    lim = str(row["limiting"])
    room = (
        # Read once only where there is a dataset to read once (its first epoch takes time, calc.engine).
        "read once: the page cache holds the dataset after the first epoch"
        if not math.isfinite(head) and row.get("first_epoch_s", 0.0) > 0
        else f"sized by {lim}"  # no rate runs out: a 0-byte dataset, a store whose rate scales
        if not math.isfinite(head)
        # Sized by the rate: its headroom is on that rate (2x and more only at the smallest size).
        else f"sized by {lim}{_for(row)}, {times} headroom"
        if lim in ("bandwidth", "iops", "checkpoint writes", "write requests", "restore read") and head < 2
        else f"its smallest size serves the load, {times} headroom"  # a job's or a cluster's
        if lim in ("bandwidth", "iops", "checkpoint writes", "write requests", "restore read")
        # Sized by something else (capacity, a minimum size): the rate it delivers is a bonus.
        else f"sized by {lim}; it delivers {times} the reads and bandwidth needed"
    )
    if brief == "store":
        return f"{_n(units, unit)} of {row['option']}{how}{size} to hold the dataset"
    if brief:
        return f"{_n(units, unit)} of {row['option']}{how}{size}, {', '.join(cost)}"
    return f"{_n(units, unit)} of {row['option']}{how}{size}, {', '.join(cost)}; {room}"


def _for(row: Mapping[str, Any]) -> str:
    """`` for the save drain``: the burst the bandwidth was bought for, when not the steady reads."""
    burst = str(row.get("sized_for", ""))
    return f" for the {burst}" if burst and burst != "steady reads" else ""
