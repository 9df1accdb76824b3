"""Storage recommendations, inverse sizing and what-if levers (docs/model.md sections 7 and 8).

recommend(): for every storage option, the units needed on each axis (IOPS at the plan's
read size, bandwidth, capacity), whether it can serve the demand at all (per-client caps,
system size), headroom, cost and caveats.
max_gpus(): how many GPUs of a job a storage system keeps at the target utilisation.
levers(): each fix the seeds name, applied alone, ranked by the GPU utilisation it reaches.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from calc import catalog
from calc import engine as en
from calc import storage as st
from calc.engine import (
    MAX_UNITS,
    _n,
    checkpoint_writes_per_month,
    monthly_cost,
    plan_demand,
    price_note,
    reads_in_flight,
)
from calc.errors import InputError
from calc.plan import Plan, as_scenario, plan
from calc.scenario import FIELDS, Scenario, ask, check_field
from calc.site import CONSUMER_GPUS, SITE_NAMES, SITE_WORDS, job_site, workstation
from calc.sweep import evaluate_over
from calc.units import HOURS_PER_MONTH, MONTH_S, fmt, fmt_usd, parse

PlanLike = Plan | Scenario | str

__all__ = [
    "CONSUMER_GPUS",
    "HOURS_PER_MONTH",
    "MAX_UNITS",
    "SITE_NAMES",
    "SITE_WORDS",
    "Answer",
    "PlanLike",
    "answer",
    "buyable_order",
    "checkpoint_writes_per_month",
    "describe_option",
    "designs",
    "fewest_workers",
    "job_site",
    "largest_example_bytes",
    "lever_changes",
    "levers",
    "max_gpus",
    "monthly_cost",
    "price_note",
    "reads_in_flight",
    "recommend",
    "storage_levers",
]


def _as_plan(x: PlanLike, overrides: dict[str, Any] | None = None) -> Plan:
    if isinstance(x, Plan) and not overrides:
        return x
    return plan(as_scenario(x, **(overrides or {})))


def _as_scenario(x: PlanLike, overrides: dict[str, Any]) -> Scenario:
    return as_scenario(x, **overrides)


def _clients(p: Plan) -> int:
    """Nodes reading at once (the plan's ``clients``: calc.stages, one formula)."""
    return int(p.values["clients"])


def recommend(x: PlanLike, /, **overrides: Any) -> pd.DataFrame:
    """One row per storage option: can it serve the plan's demand, with how many units.

    The sizing engine run on the plan's demand (``calc.engine``: size per axis, protect, house, rule
    out, caveats, price, rank). Columns: ``calc.engine.COLUMNS``, each declared there once with its
    unit and meaning (option, feasible, units, limiting, why_not, headrooms, the month's charges,
    purchase_usd, monthly_total_usd, capacity, protection, wear, caveats, ...). Feasible rows first,
    then cheapest.
    """
    return _rank(_as_plan(x, overrides), reads=True)


def _rank(p: Plan, reads: bool) -> pd.DataFrame:
    """``recommend``'s table: the engine run on the plan's demand; ``reads=False`` sizes a store that
    only holds the dataset and takes the checkpoints (the tier behind a local cache that serves every read)."""
    return en.rank(plan_demand(p, reads))


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
    p = _as_plan(x, overrides)
    return _designs(p, recommend(p))


_CHARGES = (
    "monthly_rent_usd",
    "monthly_read_usd",
    "monthly_write_usd",
    "monthly_egress_usd",
    "monthly_power_usd",
    "monthly_support_usd",
)


def _designs(p: Plan, one: pd.DataFrame) -> pd.DataFrame:
    """``designs`` from the plan's ``recommend`` table ``one`` (the answer passes its own)."""
    sc = p.scenario
    known = job_site(sc)
    rows: list[dict[str, Any]] = []
    full: Plan | None = None
    store_rank: pd.DataFrame | None = None
    for site in (known,) if known else st.SITES:
        # The same rows the card's best comes from (other sites too when allowed): headline and charges agree.
        for r in one[_buyable(one, site, sc.allow_other_site)].head(3).to_dict("records"):
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
                    "local": "",
                    "local_units_per_node": 0,
                    "ready": True,  # _buyable keeps ready rows only
                }
            )
        if full is None:
            # Every read at full rate, nothing cached: what a local tier must serve per node.
            full = plan(sc.replace(page_cache=False, cache_fraction=0.0))
            store_rank = _rank(full, reads=False)
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
    clients = _clients(p)
    opts = st.options(p.scenario.storage)
    shared = np.array(
        [
            opts[n].kind != "ram" and (opts[n].kind != "local" or (clients == 1 and en.bought_drives(opts[n])))
            for n in store_rank["option"]
        ],
        dtype=bool,
    )
    stores = store_rank[_buyable(store_rank, site) & shared]
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


def _given(arg: str, field: str, value: Any) -> Any:
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


_SCALING_RULES = frozenset(
    {"RAM copy rate", "per-client cap", "system size", "enclosure link", "per-instance cap", "system IOPS", "metadata"}
)
"""The engine's rules (``calc.engine.RULES``) that grow with the GPU count; the others (site,
durability, scratch, ...) say whether to buy the option, not how many GPUs it feeds."""


def engine_feeds(
    d: en.Demand, option: st.StorageOption | None, units: float | None, bw: float | None, iops: float | None
) -> bool:
    """Whether a store carries demand ``d`` by the engine's rules.

    An option: the working units the engine sizes for ``d`` (per axis, with the checkpoint writes
    amplified by the protection, the capacity and the drives' endurance: ``calc.engine.size``) are at most ``units``
    (none given: at most the option's maximum), and no rule that grows with the GPU count rules it
    out. A bandwidth and/or IOPS: the demand's need (reads plus the checkpoint writes that run beside
    or instead of them, ``Demand.need_bytes_per_s``) and its reads/s are within them.
    """
    if bw is not None and d.need_bytes_per_s > bw * (1 + 1e-9):
        return False
    if iops is not None and d.read_iops > iops * (1 + 1e-9):
        return False
    if option is None or bw is not None or iops is not None:
        return True  # given figures replace the option's: the plan's storage stage judged them
    s = en.size(option, d)
    # Working units (data drives): a protection's extra drives are bought on top, as the plan's
    # storage stage reads ``storage_units`` as drives that serve reads.
    if s.perf_units > (units if units is not None else option.max_units):
        return False
    return not any(r.check(option, d, s) for r in en.RULES if r.name in _SCALING_RULES)


def _last_true(ok: Any) -> int:
    """Index of the last True in ``ok``, -1 if none."""
    hits = np.flatnonzero(ok)
    return int(hits[-1]) if hits.size else -1


def max_gpus(
    sc: PlanLike,
    /,
    storage: str | None = None,
    units: float | None = None,
    read_bytes_per_s: float | str | None = None,
    read_iops: float | str | None = None,
    **overrides: Any,
) -> int:
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
    storage. 0 when even the smallest job is not fed.

    Raises
    ------
    InputError
        Bad arguments (naming them), no storage at all, or no limit: the caches serve every read
        after the first epoch, or more than the largest job a plan takes (1,000,000 GPUs) is fed.
    """
    s = _as_scenario(sc, overrides)
    change = _storage_change(s, storage, units, read_bytes_per_s, read_iops)
    mp = s.tensor_parallel * s.pipeline_parallel
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
        return 0
    # Between the last fed grid point and the next: each group count.
    k = int(ks[i])
    between = np.arange(ks[i] + 1, ks[i + 1], dtype=float)
    if between.size:
        j = _last_true(_storage_fed(evaluate_over(base, "gpus_per_job", between * mp)))
        if j >= 0:
            k = int(between[j])
    return _engine_largest(base, k0, k, mp)


def _storage_change(
    s: Scenario,
    storage: str | None,
    units: float | None,
    read_bytes_per_s: float | str | None,
    read_iops: float | str | None,
) -> dict[str, Any]:
    """The inputs ``max_gpus`` changes: one job, on the storage its arguments give (each checked
    as the input it stands for), or on the scenario's own storage when they give none."""
    n_units = None if units is None else _given("units", "storage_units", units)
    if storage is None and units is not None:
        raise InputError("units", "units need a storage option; accepted: storage=NAME with units=N")
    change: dict[str, Any] = {"jobs": 1}
    if storage is not None or read_bytes_per_s is not None or read_iops is not None:
        change |= {
            "storage": None if storage is None else _given("storage", "storage", storage),
            "storage_units": n_units,
            "storage_bytes_per_s": None
            if read_bytes_per_s is None
            else _given("read_bytes_per_s", "storage_bytes_per_s", read_bytes_per_s),
            "storage_iops": None if read_iops is None else _given("read_iops", "storage_iops", read_iops),
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
    """Fewest DataLoader workers per GPU that reach the target utilisation (-1 if none up to ``most`` do).

    Each count is evaluated as ``plan()`` does (the workers stage, Little's law on reads, CPU
    cores), in one vectorised evaluation.
    """
    s = _as_scenario(sc, overrides)
    n = _given("most", "num_workers", most)
    if n < 1:
        raise InputError("most", f"{n}; accepted: a whole number of workers from 1 to 1024")
    plan(s)
    out = evaluate_over(s, "num_workers", np.arange(1, n + 1, dtype=float))
    util = np.asarray(out["gpu_utilization"], dtype=float)
    fed = np.flatnonzero(util >= s.target_gpu_utilization - 1e-9)
    return int(fed[0]) + 1 if fed.size else -1


_FLOAT = re.compile(r":(float32|float64|int64|int32|float16|bfloat16|int16)")


def lever_changes(sc: Scenario) -> list[tuple[str, dict[str, Any]]]:
    """The what-if levers the seeds name, as Scenario changes; only those that apply to this plan.

    Read from the plan: RAM / tmpfs only when the dataset fits in each node's free RAM
    (``fits_in_ram``), a local NVMe tier only when one node reads (``clients``: a drive serves only
    its own node), and no lever that changes nothing (a cache fraction already above 20 %, shards
    already packed, GPU decode or pinned memory already on, tensors already uint8).
    """
    p = plan(sc)
    spec = sc.tensors or catalog.model(sc.model).tensors
    any_storage = {"storage_units": None, "storage_bytes_per_s": None, "storage_iops": None, "storage_latency_s": None}
    out: list[tuple[str, dict[str, Any]]] = []
    if sc.num_workers < int(FIELDS["num_workers"].maximum or 1024):
        more = min(max(2 * sc.num_workers, 8), int(FIELDS["num_workers"].maximum or 1024))
        out.append(("more workers", {"num_workers": more}))
    out.append(
        (
            "prefetch (workers overlap loading with compute)",
            {"num_workers": 4} if sc.num_workers == 0 else {"prefetch_factor": 2 * sc.prefetch_factor},
        )
    )
    if p.fits_in_ram:
        out.append(("RAM / tmpfs", {"storage": "ram-tmpfs", **any_storage}))
    if p.values["clients"] <= 1:
        out.append(("faster storage (Gen4 NVMe, as many as needed)", {"storage": "nvme-gen4", **any_storage}))
    if sc.examples_per_file < 1000:
        # A read is at most one shard (1,000 examples).
        request = "1 MiB" if 1000 * p.inputs["example_bytes"] >= 2**20 else f"{1000 * p.inputs['example_bytes']:.0f} B"
        out.append(("pack into 1 MiB-read shards", {"examples_per_file": 1000, "request_bytes": request}))
    if sc.cache_fraction < 0.2:
        out.append(("cache 20 % locally", {"cache_fraction": 0.2}))
    uint8 = _FLOAT.sub(":uint8", spec)
    if uint8 != spec:
        out.append(("uint8 tensors", {"tensors": uint8}))
    out.append(
        (
            "offline preprocessing",
            {
                # Stored as the tensors the loader emits; 10 % of the CPU work left (reading, batching).
                # The input's CPU time, not the effective one: GPU decode would cut it a second time.
                "example_bytes": p.values["example_tensor_bytes"],
                "cpu_seconds_per_example": p.inputs["cpu_seconds_per_example"] * 0.1,
            },
        )
    )
    if not sc.gpu_decode:
        out.append(("GPU decode (DALI)", {"gpu_decode": True}))
    if not sc.pin_memory:
        out.append(("pinned memory", {"pin_memory": True}))
    return out


def _engine_units(s: Scenario, change: dict[str, Any]) -> dict[str, Any]:
    """A lever that names a storage option "as many as needed" gets the units the engine sizes for
    the changed job's demand (``calc.engine.size``: per axis, protected, with the checkpoint writes),
    not the plan's own guess; other levers are returned as they are."""
    name = change.get("storage")
    if name is None or change.get("storage_units") is not None:
        return change
    o = st.option(name)
    if o.kind == "ram":
        return change  # RAM is one copy per node: nothing to count
    units = en.size(o, plan_demand(plan(s.replace(**change)))).units
    return change | {"storage_units": en.whole(units)}


def levers(sc: PlanLike, /, **overrides: Any) -> pd.DataFrame:
    """Each lever applied alone: the GPU utilisation it reaches, ranked best first.

    Columns: lever, change, gpu_utilization, achieved_samples_per_s, bottleneck, gain
    (utilisation points over the scenario as it is). Levers that make no valid plan are left out.
    A lever that buys storage buys the units the sizing engine sizes for the job (``_engine_units``).
    """
    s = _as_scenario(sc, overrides)
    base = plan(s)
    rows = [
        {
            "lever": "as is",
            "change": "",
            "gpu_utilization": base.gpu_utilization,
            "achieved_samples_per_s": base.achieved_samples_per_s,
            "bottleneck": base.bottleneck,
            "gain": 0.0,
        }
    ]
    for name, lever in lever_changes(s):
        try:
            change = _engine_units(s, lever)
            q = plan(s.replace(**change))
        except InputError:
            continue
        shown = ", ".join(f"{k}={v}" for k, v in change.items() if v is not None) or "defaults"
        rows.append(
            {
                "lever": name,
                "change": shown,
                "gpu_utilization": q.gpu_utilization,
                "achieved_samples_per_s": q.achieved_samples_per_s,
                "bottleneck": q.bottleneck,
                "gain": q.gpu_utilization - base.gpu_utilization,
            }
        )
    df = pd.DataFrame(rows)
    return df.sort_values(["gpu_utilization", "gain"], ascending=False, kind="stable").reset_index(drop=True)


def storage_levers(
    x: PlanLike, /, shard_bytes: float | str = "256 MiB", cache_fraction: float = 0.2, **overrides: Any
) -> pd.DataFrame:
    """The storage-side levers next to a recommendation: shards, a local cache, RAM.

    Each row applies one lever and reports the demand it leaves (reads/s, file opens/s,
    MB/s) and the first feasible row ``recommend`` then gives (cheapest known cost; "none"
    when no option serves), plus how many units of the scenario's own storage it needs, if it
    names one. Levers that change nothing here (shards no larger than an example, a cache
    fraction the scenario already has) are left out; the RAM row leaves no reads on the store
    only when RAM can hold the dataset.
    """
    p = _as_plan(x, overrides)
    sc = p.scenario
    shard = parse(_given("shard_bytes", "example_bytes", shard_bytes), "bytes", "shard_bytes")
    fraction = _given("cache_fraction", "cache_fraction", cache_fraction)
    per_shard = max(1, int(shard // p.inputs["example_bytes"]))
    levers_: list[tuple[str, dict[str, Any]]] = [("as is", {})]
    if per_shard > 1 and per_shard > sc.examples_per_file:  # examples as large as a shard gain nothing
        request = min(2.0**20, per_shard * p.inputs["example_bytes"])  # a read is at most one shard
        levers_.append(
            (
                f"pack into {fmt(shard, 'bytes', binary=True)} shards, {fmt(request, 'bytes', binary=True)} reads",
                {"examples_per_file": per_shard, "request_bytes": "1 MiB" if request == 2**20 else f"{request:.0f} B"},
            )
        )
    if fraction > sc.cache_fraction:
        levers_.append((f"cache {fraction:.0%} locally", {"cache_fraction": fraction}))
    levers_.append(
        (
            "keep the dataset in RAM (page cache / tmpfs)",
            {
                "storage": "ram-tmpfs",
                "storage_units": None,
                "storage_bytes_per_s": None,
                "storage_iops": None,
                "storage_latency_s": None,
            },
        )
    )
    rows = []
    for name, change in levers_:
        q = plan(sc.replace(**change)) if change else p
        rec = recommend(q)
        ok = rec[rec["feasible"]]
        own = rec[rec["option"] == sc.storage]
        ram = rec[rec["option"] == "ram-tmpfs"].iloc[0]
        in_ram = name.startswith("keep") and bool(ram["feasible"])
        if name.startswith("keep"):
            best_option, best_units = ("ram-tmpfs" if ram["feasible"] else f"no: {ram['why_not']}"), int(ram["units"])
        elif len(ok):
            best_option, best_units = str(ok.iloc[0]["option"]), int(ok.iloc[0]["units"])
        else:
            best_option, best_units = "none: no option in the catalog serves this demand", None
        rows.append(
            {
                "lever": name,
                "change": ", ".join(f"{k}={v}" for k, v in change.items() if v is not None),
                "read_iops": 0.0 if in_ram else q.read_iops,
                "file_opens_per_s": 0.0 if in_ram else q.file_opens_per_s,
                "read_bytes_per_s": 0.0 if in_ram else q.read_bytes_per_s,
                "best_option": best_option,
                "best_units": best_units,
                "own_storage_units": int(own.iloc[0]["units"]) if len(own) and not name.startswith("keep") else None,
            }
        )
    return pd.DataFrame(rows)


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
    cheapest_storage: dict[str, Any] | None = None
    """The buyable row with the lowest storage cost (to say when a dearer store is cheaper in total)."""
    fastest: dict[str, Any] | None = None
    """The buyable row that idles the fewest GPU-hours (said when no GPU price is known)."""

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
        d = self.design
        if d is not None and d["design"] != "one tier":
            # An unknown copy time (no node link) is said in lines(), not in the one-sentence headline.
            copy = _staging(d) if math.isfinite(d["staging_s"]) else ""
            return f"Buy: {d['description']}; {fmt_usd(d['monthly_total_usd'])} a month all in{copy}"
        if self.best is None:
            where = f" at the job's site ({self.site})" if self.site else ""
            return f"No storage option in the catalog serves this job{where}: see the reasons per option."
        return "Buy: " + describe_option(self.best)

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
            f"{hours:,.0f} GPU-hours a month idle{money}."
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
                f"Fastest: {f['option']}, {float(f['lost_gpu_hours_per_month']):,.0f} GPU-hours a month idle "
                f"(restore {fmt(f['restore_s'], 'seconds')})."
            )
        return out

    def lines(self) -> list[str]:
        """The answer as short sentences (for the CLI, the report and the page)."""
        p = self.plan
        out = [self.headline]
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
        return out

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
            return (
                f"The {neck} bottleneck idles {gpus:,} x {p.scenario.gpu} "
                f"{1 - util:.0%} of the time: "
                f"{self.idle_gpu_hours_per_month:,.0f} GPU-hours a month{money}."
            )
        return f"The steady reads lose no GPU time: the {_n(gpus, 'GPU')} set the pace."


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
    p: Plan, rec: pd.DataFrame
) -> tuple[list[dict[str, Any]], tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    """The rows the answer may buy, best first; the plan's designs; with no site, each site's first
    feasible design. One rule for a job's answer and a 1-job cluster's (calc.cluster)."""
    sc = p.scenario
    site = job_site(sc)
    ok = rec[_buyable(rec, site, sc.allow_other_site)]
    # Ready rows (the loader's workers cover the latency) before those that need more workers.
    ok = ok.sort_values("ready", ascending=False, kind="stable")
    rows = [{str(k): x for k, x in r.items()} for r in ok.to_dict("records")]
    designs_ = tuple({str(k): x for k, x in r.items()} for r in _designs(p, rec).to_dict("records"))
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


def buyable_order(p: Plan, rec: pd.DataFrame) -> list[str]:
    """Options of ``rec`` the answer may buy for ``p``, in the answer's order (ready first, then
    ``recommend``'s cheapest-first order): the same rule the card uses, for charts and reports."""
    sc = p.scenario
    ok = rec[_buyable(rec, job_site(sc), sc.allow_other_site)].sort_values("ready", ascending=False, kind="stable")
    return [str(o) for o in ok["option"]]


def _buyable(rec: pd.DataFrame, site: str | None, allow_other: bool = False) -> npt.NDArray[np.bool_]:
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


def _staging(d: Mapping[str, Any]) -> str:
    t = d["staging_s"]
    if d["design"] == "one tier" or t <= 0:
        return ""
    if not math.isfinite(t):
        return f"; the time to copy the dataset to each node needs the node link: {ask('node_network_bytes_per_s')}"
    return f"; copying the dataset to each node takes {fmt(t, 'seconds')}"


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
        "read once: the page cache holds the dataset after the first epoch"
        if not math.isfinite(head)
        # Sized by the rate: its headroom is on that rate (2x and more only at the smallest size).
        else f"sized by {lim}{_for(row)}, {times} headroom"
        if lim in ("bandwidth", "iops", "checkpoint writes", "write requests") and head < 2
        else f"its smallest size serves the load, {times} headroom"  # a job's or a cluster's
        if lim in ("bandwidth", "iops", "checkpoint writes", "write requests")
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


def _deciding(p: Plan, d: Mapping[str, Any] | None, rec: pd.DataFrame) -> str:
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
            f"{fmt(dem.need_bytes_per_s, 'bytes_per_s')} at its design point, the {dem.design_point} "
            f"(reads {fmt(v['read_bytes_per_s'], 'bytes_per_s')}{bursts})"
            if lim != "iops"
            else fmt(st.random_reads(o, v["read_iops"], v["file_opens_per_s"]), "count_per_s", "random reads/s")
        )
        return f"Deciding: {lim}; the job needs {need}, which sets {_n(r['units'], str(r['unit']))} of {r['option']}."
    if lim == "workload":
        dem = plan_demand(p)
        return (
            f"Deciding: the drives' rated workload; the job reads {fmt(dem.read_bytes_per_year, 'bytes')} and writes "
            f"{fmt(dem.written_bytes_per_year, 'bytes')} a year, and each {o.label} is rated for "
            f"{fmt(o.workload_bytes_per_year, 'bytes')} a year of reads and writes, which sets "
            f"{_n(r['units'], str(r['unit']))} of {r['option']} "
            f"({fmt(float(r['drive_workload_bytes_per_year']), 'bytes')} a year each)."
        )
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
            f"Deciding: checkpoint write requests; {fmt(puts / MONTH_S, 'count_per_s', 'PUTs/s')} on average "
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
    clients = _clients(p)
    return (
        f"Deciding: each of {_n(clients, 'node')} reads {fmt(p.values['read_bytes_per_s'] / clients, 'bytes_per_s')} "
        f"from its own copy; the store only holds the dataset ({fmt(p.dataset_bytes, 'bytes')})"
        + (" and takes the checkpoints." if p.saves else ".")  # a job that saves nothing: no checkpoints
    )


def answer(x: PlanLike, /, **overrides: Any) -> Answer:
    """The answer card: storage to buy, runners-up, the job's own storage judged, GPUs fed, idle cost."""
    p = _as_plan(x, overrides)
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
        site_lines=site_lines,
        cheapest_storage=cheapest,
        fastest=fastest,
        design_utilization=served.gpu_utilization if served is not None else math.nan,
        design_bottleneck=served.bottleneck if served is not None else "",
    )
    return dataclasses.replace(a, deciding=_read_time_binds(p, a.design) or _deciding(p, a.design, rec))


def idle_gpus(p: Plan) -> tuple[float, float, str]:
    """GPU-hours a month the bottleneck idles, the GPU's price per hour and its source [h, USD/h]."""
    sc = p.scenario
    price, src = en.gpu_price_per_hour(sc.gpu, sc.gpu_price_per_hour)
    return en.idle_gpu_hours_per_month(sc.gpus_per_job * sc.jobs, p.gpu_utilization), price, src


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
    units = float(d["local_units_per_node"]) * _clients(p) if local else float(d["store_units"])
    # storage_units is a whole count: a file system bought in fractional steps (4.8 TiB) is planned
    # at the next whole unit (5), the nearest size the scenario can state.
    given = float(math.ceil(units - 1e-9)) if math.isfinite(units) and units > 0 else None
    return plan(p.scenario.replace(storage=tier, storage_units=given))


def _own(p: Plan, rec: pd.DataFrame) -> tuple[str, bool]:
    """The job's own storage judged in a sentence, and whether it keeps up with the GPUs now."""
    sc = p.scenario
    assert sc.storage is not None
    need_bw, need_iops = p.read_bytes_per_s, p.read_iops
    mine = dict(rec[rec["option"] == sc.storage].iloc[0])
    units = sc.storage_units
    o = st.option(sc.storage)
    have = (
        f"{units} x {sc.storage}" if units is not None else f"{sc.storage} (as many units as needed, up to its maximum)"
    )
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


def _feeds(p: Plan, option: str | None, n_units: int | None, fed_now: bool, named: bool) -> tuple[int | None, str]:
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
    size = f"{n_units:,} x {option}" if n_units is not None else f"{option} at its largest size"
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
