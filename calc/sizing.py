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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from calc import catalog, demand
from calc import storage as st
from calc.errors import InputError
from calc.plan import Plan, as_scenario, plan
from calc.scenario import FIELDS, Scenario, ask, check_field
from calc.units import fmt, fmt_usd, parse

PlanLike = Plan | Scenario | str


def _as_plan(x: PlanLike, overrides: dict[str, Any] | None = None) -> Plan:
    if isinstance(x, Plan) and not overrides:
        return x
    return plan(as_scenario(x, **(overrides or {})))


def _as_scenario(x: PlanLike, overrides: dict[str, Any]) -> Scenario:
    return as_scenario(x, **overrides)


def _clients(sc: Scenario) -> int:
    """Nodes reading at once: ceil(gpus_per_job / gpus_per_node) x jobs."""
    return math.ceil(sc.gpus_per_job / sc.gpus_per_node) * sc.jobs


def recommend(x: PlanLike, /, **overrides: Any) -> pd.DataFrame:
    """One row per storage option: can it serve the plan's demand, with how many units.

    Columns: option, label, site, feasible, units, unit, limiting (iops, bandwidth, checkpoint writes,
    capacity, minimum, per-client cap, system size, RAM, site, site link, drive class, one node,
    per-instance cap), why_not, iops_headroom, bandwidth_headroom, capacity_headroom (supply / need,
    >= 1 when feasible), latency_s, workers_per_gpu_needed (Little's law), the charges of a month
    of training around the clock: monthly_rent_usd (capacity + provisioned performance),
    monthly_read_usd (per-GB reads + read requests), monthly_write_usd (checkpoint write requests by
    part size + per-GB write or upload charges), monthly_egress_usd (data leaving a site),
    purchase_usd (up front: drives, their enclosures and what connects them), monthly_total_usd
    (all of them, purchases spread over amortization_months), monthly_usd (the monthly charges
    without purchases), capacity_bytes
    (usable, after protection), protection, wear_out_years, price_note, ready (the loader's
    workers cover the latency), caveats, verified. Feasible rows first, then cheapest.
    """
    return _rank(_as_plan(x, overrides), reads=True)


CONSUMER_GPUS = ("GTX-1080Ti", "RTX-3090", "RTX-4090")
"""Desktop GPUs (presets/gpus.yaml): a job on one of them, with no server preset, runs in a
workstation, where consumer drives are fair; every other job gets data-centre parts only."""


def job_site(sc: Scenario) -> str | None:
    """Where the job runs: ``site``, else its server's site (DGX/HGX on-prem, a cloud instance its
    cloud), else its storage's site; None when none of them says."""
    if sc.site:
        return sc.site
    if sc.server:
        return catalog.server(sc.server).site
    if sc.storage:
        s = st.option(sc.storage).site
        return None if s == "any" else s
    return None


def _workstation(sc: Scenario) -> bool:
    return sc.server is None and sc.gpu in CONSUMER_GPUS and job_site(sc) in (None, "on-prem")


def checkpoint_writes_per_month(p: Plan) -> tuple[float, float]:
    """Checkpoint bytes written in a month of training [bytes] and write requests [count].

        bytes    = checkpoint size x MONTH_S / interval x jobs
        requests = saves x writing ranks x ceil(bytes per rank / part size) x jobs

    Each rank uploads its shard in parts of ``st.WRITE_REQUEST_BYTES`` (16 MiB multipart parts),
    each part one PUT; an object store bills per request, a file system per GB.
    """
    interval = p.inputs.get("checkpoint_interval_s", math.nan)
    if not (isinstance(interval, float | int) and math.isfinite(interval) and interval > 0):
        return 0.0, 0.0
    saves = MONTH_S / float(interval)
    v = p.values
    parts = math.ceil(v["checkpoint_rank_bytes"] / st.WRITE_REQUEST_BYTES - 1e-9)
    jobs = p.inputs.get("jobs", 1.0)  # every job saves its own
    return saves * v["checkpoint_bytes"] * jobs, saves * v["checkpoint_writing_ranks"] * parts * jobs


def _rank(p: Plan, reads: bool) -> pd.DataFrame:
    """``recommend``'s table; ``reads=False`` sizes a store that only holds the dataset and
    takes the checkpoints (the tier behind a local cache that serves every read)."""
    sc = p.scenario
    v = dict(p.values)
    if not reads:
        v |= {"read_bytes_per_s": 0.0, "read_iops": 0.0, "file_opens_per_s": 0.0}
        v["storage_need_bytes_per_s"] = v["checkpoint_write_bytes_per_s"]
    clients = _clients(sc)
    gpus = sc.gpus_per_job * sc.jobs
    req = v["request_bytes"]
    site = job_site(sc)
    workstation = _workstation(sc)
    months = sc.amortization_months
    srv = catalog.server(sc.server) if sc.server else None
    link = parse(sc.site_link_bytes_per_s, "bytes_per_s", "site_link_bytes_per_s") if sc.site_link_bytes_per_s else None
    # Reads and checkpoint writes together (calc.stages.evaluate_checkpoint); the dataset and
    # the kept checkpoints together when the job saves any.
    need_bw = v["storage_need_bytes_per_s"]
    read_bw, write_bw = v["read_bytes_per_s"], v["checkpoint_write_bytes_per_s"]
    overlap = p.inputs["checkpoint_async"] > 0  # the resolved mode: auto is async for sharded state
    saving = write_bw > 0
    need_cap = v["dataset_bytes"] + (v["checkpoint_capacity_bytes"] if saving else 0.0)
    written, puts = checkpoint_writes_per_month(p)
    yearly_written = written * 365.25 / 30
    # Several nodes, or checkpoints (which must outlive a node), need a store every node reaches.
    shared_store = clients > 1 or saving
    rows = []
    for o in st.options().values():
        rnd = st.random_reads(o, v["read_iops"], v["file_opens_per_s"])
        # Enough drives (or servers of drives) that checkpoint writes last the amortisation.
        endurance = st.drives_for_endurance(o.endurance_bytes, yearly_written, months / 12)
        why = ""
        caveats = []
        bought = o.kind == "local" and math.isfinite(o.purchase_price)
        per_node = o.kind == "cloud-block" and clients > o.attach_limit
        scheme = ""
        amp = 1.0
        wear = math.inf
        housing: tuple[tuple[st.Enclosure, int], ...] = ()
        networked = False  # bought drives in servers on the network: shared by every node
        n_node = 1  # copies: one per node for single-attach volumes
        if o.kind == "ram":
            units = perf_units = float(clients)
            limiting = "RAM"
            loads = {"bandwidth": 0.0}
            if not v["fits_in_ram"]:
                why = (
                    f"dataset {fmt(v['dataset_bytes'], 'bytes')} does not fit in free RAM "
                    f"({fmt(p.inputs['host_ram_bytes'], 'bytes', binary=True)} per node less loader RAM)"
                )
            elif need_bw > o.read_bytes_per_s * clients:
                why = (
                    f"each node must move {fmt(need_bw / clients, 'bytes_per_s')}; "
                    f"its memory copies run at {fmt(o.read_bytes_per_s, 'bytes_per_s')}"
                )
            else:
                caveats.append(
                    "the dataset fits in free RAM: after the first epoch the page cache serves it; "
                    "tmpfs defaults to half of RAM and competes with loader workers; every node holds a copy"
                )
        else:
            if per_node:
                # A volume attaches to one node (or its multi-attach limit): one per node, each a full copy.
                n_node = clients
                loads = st.unit_loads(
                    o,
                    read_bw / clients,
                    v["read_iops"] / clients,
                    req,
                    need_cap,
                    v["file_opens_per_s"] / clients,
                    write_bw / clients,
                    writes_overlap_reads=overlap,
                )
            else:
                loads = st.unit_loads(
                    o,
                    read_bw,
                    v["read_iops"],
                    req,
                    need_cap,
                    v["file_opens_per_s"],
                    write_bw,
                    writes_overlap_reads=overlap,
                )
            if bought:
                # Data drives hold the bytes below the fill limit; parity drives add writes.
                loads["capacity"] = need_cap / (o.capacity_bytes * sc.fill_limit)
                loads["endurance"] = endurance
                n_data, limiting = st.size(loads)
                scheme = sc.protection or st.default_protection(n_data)
                amp = st.protected_drives(n_data, scheme) / n_data
                if amp > 1 and write_bw > 0:
                    loads = st.unit_loads(
                        o,
                        read_bw,
                        v["read_iops"],
                        req,
                        need_cap,
                        v["file_opens_per_s"],
                        write_bw * amp,
                        writes_overlap_reads=overlap,
                    )
                    loads["capacity"] = need_cap / (o.capacity_bytes * sc.fill_limit)
                    loads["endurance"] = endurance
                    n_data, limiting = st.size(loads)
                    scheme = sc.protection or st.default_protection(n_data)
                    amp = st.protected_drives(n_data, scheme) / n_data
                n = st.protected_drives(n_data, scheme)
                # Reads and checkpoint writes cross the enclosures' links (NIC or host HBA). A shared
                # store goes in servers on the network: every node mounts them over NFS, like nfs-*.
                housing = st.house(o, n, need_bw, shared=shared_store)
                networked = bool(housing) and all(x.attach == "network" for x, _ in housing)
                if not housing and any(x.attach == "network" or not shared_store for x in o.enclosures):
                    fastest = max(x.link_bytes_per_s for x in o.enclosures)
                    why = (
                        f"each of {n} drives must move {fmt(need_bw / n, 'bytes_per_s')}, more than one enclosure's "
                        f"link carries ({fmt(fastest, 'bytes_per_s')} at most)"
                    )
                    limiting = "enclosure link"
                wear = st.wear_out_years(o.endurance_bytes, n, yearly_written, amp)
                perf_units = float(n_data)
            else:
                # A bought server's drives (nfs-*) wear out too: enough servers for the writes.
                loads["endurance"] = endurance
                n, limiting = st.size(loads)
                perf_units = float(n)
            if limiting == "bandwidth" and write_bw / o.write_bytes_per_s > read_bw / o.read_bytes_per_s:
                limiting = "checkpoint writes"
            units = float(n)
            most = min(o.max_units, MAX_UNITS)
            if units > most:
                why = f"needs {units:,.0f} {o.unit}s on {limiting}; one system allows {most:,.0f}"
                limiting = "system size"
            units *= n_node
            per_client = need_bw / clients
            if per_client > o.client_bytes_per_s:
                why = why or (
                    f"each of {clients} node(s) must read {fmt(per_client, 'bytes_per_s')}; "
                    f"the per-client cap is {fmt(o.client_bytes_per_s, 'bytes_per_s')}"
                )
                limiting = "per-client cap"
            if o.kind == "cloud-block" and srv is not None and per_client > srv.block_bytes_per_s and not why:
                why = (
                    f"each {srv.name} reaches block volumes at {fmt(srv.block_bytes_per_s, 'bytes_per_s')}; "
                    f"the job needs {fmt(per_client, 'bytes_per_s')} per node"
                )
                limiting = "per-instance cap"
        units = max(units, 1.0)
        perf_units = max(perf_units, 1.0) * n_node
        supply_iops = perf_units * o.iops_at(req) if o.kind != "ram" else math.inf
        supply_iops = min(supply_iops, o.aggregate_iops)
        supply_bw = perf_units * o.read_bytes_per_s if o.kind != "ram" else o.read_bytes_per_s * clients
        if o.kind != "ram" and supply_iops < rnd and not why:
            why = f"the system-wide cap of {fmt(o.aggregate_iops, 'count_per_s', 'reads/s')} is below the need"
            limiting = "system size"
        # Capacity provisioned: block volumes are sized from the dataset, not their maximum;
        # bought drives hold the usable share that their protection leaves.
        if o.kind == "ram":
            cap = math.inf
        elif o.unit == "volume":
            cap = need_cap * n_node
        elif bought:
            cap = st.usable_drives(int(units), scheme) * o.capacity_bytes
        else:
            cap = units * o.capacity_bytes
        service = o.service_time_s(req)
        workers = reads_in_flight(v["read_iops"] / gpus, service)
        if workers > max(sc.num_workers, 1):
            caveats.append(
                f"at {fmt(service, 'seconds')} per read, each GPU needs {workers} reads in flight "
                f"(Little's law); it has {sc.num_workers} worker(s): {ask('num_workers')} higher or read asynchronously"
            )
        if o.latency_s > v["latency_budget_s"]:
            caveats.append(
                f"one read ({fmt(o.latency_s, 'seconds')}) takes longer than a step: prefetching is essential"
            )
        if o.burst:
            caveats.append(o.burst)
        meta = v["file_opens_per_s"] * demand.METADATA_OPS_PER_OPEN.get(o.protocol, 0.0)
        if meta > o.metadata_ops_at(units) and not why:
            # A service that scales by size was sized for the opens (unit_loads): short only past its largest.
            meta_cap = o.metadata_ops_at(math.inf if o.metadata_scaling else units)
            why = (
                f"{fmt(meta, 'count_per_s', 'metadata ops/s')} ({o.protocol} file opens) exceed its "
                f"{fmt(meta_cap, 'count_per_s', 'ops/s')} metadata limit: pack into shards"
            )
            limiting = "metadata"
        if (
            sc.examples_per_file <= 1
            and v["file_opens_per_s"] > 1000
            and o.kind in ("nfs", "cloud-file", "parallel", "object")
        ):
            caveats.append(
                f"{fmt(v['file_opens_per_s'], 'count_per_s', 'file opens/s')}: small files load metadata "
                "servers and request limits; pack into shards"
            )
        if o.kind == "local" and clients > 1 and not why and not networked:
            # A drive in one node cannot feed the others: designs() sizes drives per node instead.
            why = f"local drives serve only their own node; {clients} nodes read (see the per-node local cache design)"
            limiting = "one node"
        if o.kind == "local" and o.site in st.CLOUDS and not why:
            why = "instance storage is lost when the instance stops: a cache (the server NVMe design), not the store"
            limiting = "ephemeral"
        if o.kind in ("local", "ram") and v["checkpoint_write_bytes_per_s"] > 0 and not why and not networked:
            # A checkpoint must survive the loss of a node (issue 19): node RAM or node-local drives die
            # with it, so they are a first tier at most, never the checkpoint store.
            why = "checkpoints on node-local storage die with the node: the checkpoint store must be shared"
            limiting = "durability"
        if o.drive_class == "consumer" and not workstation and not why:
            why = (
                "a consumer drive (no power-loss protection, rated for a fraction of a data-centre drive's writes): "
                "data-centre servers and clouds take data-centre parts"
            )
            limiting = "drive class"
        egress = 0.0
        other = site is not None and o.site not in ("any", site)
        if other and not why:
            if not sc.allow_other_site:
                why = f"at another site ({o.site}) than the job ({site}); {ask('allow_other_site')} to consider it"
                limiting = "site"
            elif link is None:
                why = f"at another site ({o.site}): {ask('site_link_bytes_per_s')}, the link between the sites"
                limiting = "site link"
            elif need_bw > link:
                why = (
                    f"at another site ({o.site}): the link carries {fmt(link, 'bytes_per_s')} of the "
                    f"{fmt(need_bw, 'bytes_per_s')} needed"
                )
                limiting = "site link"
        if other:
            # Reads leave the store's site, checkpoint writes leave the job's: each priced per GB there.
            egress = read_bw * MONTH_S / 1e9 * st.EGRESS_USD_PER_GB[o.site] + written / 1e9 * st.EGRESS_USD_PER_GB.get(
                site or "on-prem", 0.0
            )
            caveats.append(
                f"read over the link from {o.site}: egress ${st.EGRESS_USD_PER_GB[o.site]:g}/GB out of {o.site}"
                + ("; on-prem internet transit is not priced" if "on-prem" in (o.site, site) else "")
            )
        if o.kind == "cloud-block" and 1 < clients <= o.attach_limit:
            caveats.append(
                f"multi-attached to {clients} nodes (at most {o.attach_limit:g}): needs a cluster-aware file system"
            )
        if per_node:
            caveats.append(
                f"a {o.unit} attaches to {o.attach_limit:g} node: one per node ({clients}), each holding a full copy "
                "of the dataset; checkpoints written to them are not shared"
            )
        if bought:
            caveats.append(
                f"{_n(units, 'drive')} in {scheme} ({st.usable_drives(int(units), scheme):g} drives' worth usable, "
                f"{fmt(cap, 'bytes')} = {fmt(cap, 'bytes', binary=True)}), filled to at most {sc.fill_limit:.0%}"
            )
            if housing:
                held, unpriced = st.describe_housing(housing)
                caveats.append(f"held in {held}" + (f"; not priced: {unpriced}" if unpriced else ""))
                if networked and shared_store:
                    caveats.append(
                        "a storage server on the network: every node mounts it over NFS (its NFS metadata rate is not "
                        "modelled), and checkpoints written to it outlive a node"
                    )
                for x, _ in housing:
                    fill = st.usable_bays(x.bays, x.link_bytes_per_s, int(units), need_bw)
                    if fill < x.bays:
                        caveats.append(
                            f"at most {fill} of a {x.label}'s {x.bays} bays are filled: its link "
                            f"({fmt(x.link_bytes_per_s, 'bytes_per_s')}) carries {fill} drives' share of "
                            f"{fmt(need_bw, 'bytes_per_s')}"
                        )
            if wear < months / 12:
                caveats.append(
                    f"checkpoint writes wear the drives out in {wear:.1f} years, before the {months}-month amortisation"
                )
        if o.network_parts:
            caveats.append(
                f"each {o.unit} connects through "
                + ", ".join(f"{k} x {p.name} (${k * p.price_usd:,.2f})" for p, k in o.network_parts)
            )
        cost = monthly_cost(
            o, units, need_cap * n_node, read_bw, v["read_iops"], rnd, clients, provisioned_bytes_per_s=need_bw
        )
        write_usd = written / 1e9 * o.price_per_gb_write + puts / 1e6 * o.price_per_million_writes
        if o.kind == "ram":
            purchase = clients * o.purchase_price
        else:
            # The enclosures that hold bought drives; a networked server's switch port and cable.
            purchase = units * (o.purchase_price + st.parts_usd(o.network_parts)) + st.housing_usd(housing)
        amortised = purchase / months if math.isfinite(purchase) else 0.0
        rented = cost["storage"] + cost["performance"] if math.isfinite(cost["storage"]) else 0.0
        monthly = rented + cost["reads"] + write_usd + egress
        total = monthly + amortised if o.priced else math.nan
        rows.append(
            {
                "option": o.name,
                "label": o.label,
                "site": o.site,
                "feasible": not why,
                "units": int(units),
                "unit": o.unit,
                "limiting": limiting,
                "why_not": why,
                "iops_headroom": supply_iops / rnd if rnd > 0 else math.inf,
                "bandwidth_headroom": (
                    perf_units / n_node / loads["bandwidth"]
                    if o.kind != "ram" and loads["bandwidth"] > 0
                    else supply_bw / need_bw
                    if o.kind == "ram" and need_bw > 0
                    else math.inf
                ),
                "capacity_headroom": cap / need_cap if need_cap > 0 else math.inf,
                "latency_s": o.latency_s,
                "workers_per_gpu_needed": workers,
                "monthly_usd": monthly,
                "monthly_rent_usd": rented,
                "monthly_read_usd": cost["reads"],
                "monthly_write_usd": write_usd,
                "monthly_egress_usd": egress,
                "purchase_usd": purchase,
                "monthly_total_usd": total,
                "capacity_bytes": cap,
                "protection": scheme,
                "wear_out_years": wear,
                "price_note": price_note(o, months),
                "ready": workers <= max(sc.num_workers, 1),
                "caveats": "; ".join(caveats),
                "verified": o.verified,
            }
        )
    df = pd.DataFrame(rows)
    # One comparable figure ranks them: every monthly charge + purchases spread over
    # amortization_months. Options with no public price come last, with the reason.
    df["_cost"] = df["monthly_total_usd"].fillna(np.inf)
    df = df.sort_values(["feasible", "_cost", "units"], ascending=[False, True, True]).drop(columns="_cost")
    return df.reset_index(drop=True)


MAX_UNITS = 1e6
"""The most units of one option an answer names (Scenario ``storage_units`` accepts up to 1e6)."""


def reads_in_flight(reads_per_s_per_gpu: float, service_s: float) -> int:
    """Reads each GPU's loader must keep in flight [count]: reads/s x time a read takes, rounded up.

    Little's law (L = lambda W): a loader whose workers each wait for one read at a time needs this
    many workers per GPU to sustain ``reads_per_s_per_gpu`` at ``service_s`` a read.

    References
    ----------
    Little, J. D. C. (1961). A proof for the queuing formula L = lambda W. Operations Research 9(3).
    """
    return math.ceil(reads_per_s_per_gpu * service_s - 1e-9)


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


_CHARGES = ("monthly_rent_usd", "monthly_read_usd", "monthly_write_usd", "monthly_egress_usd")


def _designs(p: Plan, one: pd.DataFrame) -> pd.DataFrame:
    """``designs`` from the plan's ``recommend`` table ``one`` (the answer passes its own)."""
    sc = p.scenario
    known = job_site(sc)
    rows: list[dict[str, Any]] = []
    full: Plan | None = None
    store_rank: pd.DataFrame | None = None
    for site in (known,) if known else st.SITES:
        for r in one[_buyable(one, site)].head(3).to_dict("records"):
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
    return df.sort_values(
        ["feasible", "ready", "monthly_total_usd"], ascending=[False, False, True], kind="stable"
    ).reset_index(drop=True)


def _two_tier(p: Plan, full: Plan, store_rank: pd.DataFrame, site: str) -> list[dict[str, Any]]:
    """The page-cache, server-NVMe and local-cache designs of one site."""
    sc = p.scenario
    clients = _clients(sc)
    months = sc.amortization_months
    # The store behind a cache is shared and durable: not RAM, and a node's own drives only when
    # one node reads and they are bought as a protected array.
    opts = st.options()
    shared = np.array(
        [
            opts[n].kind != "ram"
            and (opts[n].kind != "local" or (clients == 1 and math.isfinite(opts[n].purchase_price)))
            for n in store_rank["option"]
        ],
        dtype=bool,
    )
    stores = store_rank[_buyable(store_rank, site) & shared]
    if not len(stores):
        return []
    store = dict(stores.iloc[0])
    rows: list[dict[str, Any]] = []
    link = p.inputs["node_network_bytes_per_s"]
    dataset = p.dataset_bytes
    so = st.option(str(store["option"]))
    store_bw = min(store["units"] * so.read_bytes_per_s, clients * so.client_bytes_per_s)
    per_node_in = min(link, so.client_bytes_per_s)
    # The store's own charges; a copy onto every node is read from it once, not every epoch.
    base = {k: float(store[k]) for k in _CHARGES}
    store_buy = float(store["purchase_usd"]) if math.isfinite(store["purchase_usd"]) else 0.0

    def row(
        design: str, description: str, why: str, buy: float, stage: float, local: str, k: int, ready: bool = True
    ) -> dict[str, Any]:
        purchase = store_buy + buy
        total = sum(base.values()) + purchase / months
        return {
            "design": design,
            "site": site,
            "description": description,
            "feasible": not why,
            "why_not": why,
            **base,
            "purchase_usd": purchase,
            "monthly_total_usd": total,
            "staging_s": stage,
            "store": store["option"],
            "store_units": float(store["units"]),
            "local": local,
            "local_units_per_node": k,
            "ready": ready,
        }

    if p.fits_in_ram and not sc.page_cache:
        rows.append(
            row(
                "page cache",
                "the page cache (the dataset fits in each node's RAM) + " + describe_option(store, brief="store"),
                "",
                0.0,
                _copy_s(dataset, clients, link, per_node_in, store_bw),
                "",
                0,
            )
        )
    fv = full.values
    node_bw = fv["read_bytes_per_s"] / clients
    # When the page cache already serves every epoch after the first, a drive cache adds cost only.
    cached = p.read_bytes_per_s == 0 and p.page_cache_hit >= 1
    node_iops = fv["read_iops"] / clients
    node_opens = fv["file_opens_per_s"] / clients
    best_local: dict[str, Any] | None = None
    # Every read comes from the local drives: each GPU's loader must keep enough of them in flight.
    reads_per_gpu = fv["read_iops"] / (sc.gpus_per_job * sc.jobs)

    def order(r: dict[str, Any]) -> tuple[bool, bool, float]:
        """Feasible, then ready, then cheapest: the order ``designs`` sorts by."""
        return (not r["feasible"], not r["ready"], float(r["monthly_total_usd"]))

    workstation = _workstation(sc)
    for o in st.options().values():
        # Drives are bought on-prem only: a cloud instance's own instance store is its local tier.
        if (
            cached
            or site != "on-prem"
            or o.kind != "local"
            or o.unit != "drive"
            or not math.isfinite(o.purchase_price)
            or (o.drive_class == "consumer" and not workstation)
        ):
            continue
        loads = st.unit_loads(o, node_bw, node_iops, fv["request_bytes"], dataset, node_opens)
        loads["capacity"] = dataset / (o.capacity_bytes * sc.fill_limit)
        k, limiting = st.size(loads)
        why = f"needs {k} drives per node on {limiting}; a server holds {o.max_units:,.0f}" if k > o.max_units else ""
        buy = clients * k * o.purchase_price
        ready = reads_in_flight(reads_per_gpu, o.service_time_s(fv["request_bytes"])) <= max(sc.num_workers, 1)
        stage = _copy_s(dataset, clients, link, min(per_node_in, k * o.write_bytes_per_s), store_bw)
        r = row(
            "local cache",
            f"{_n(k, 'drive')} of {o.name} per node on {_n(clients, 'node')} ({fmt_usd(buy)} to buy; "
            f"a cache copy, filled to at most {sc.fill_limit:.0%}, in the node's own drive bays) + "
            + describe_option(store, brief="store"),
            why,
            buy,
            stage,
            o.name,
            k,
            ready,
        )
        # A drive whose read time leaves the GPUs waiting loses to a dearer one that does not.
        if best_local is None or order(r) < order(best_local):
            best_local = r
    if best_local is not None:
        rows.append(best_local)
    srv = catalog.server(sc.server) if sc.server else None
    if srv is not None and srv.site == site and math.isfinite(srv.local_nvme_bytes) and not cached:
        # The server's own NVMe (instance store on cloud GPUs): nothing to buy but the store.
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
        rows.append(
            row(
                "server NVMe cache",
                f"the {srv.name} nodes' own NVMe ({srv.local_nvme}, {fmt(srv.local_nvme_bytes, 'bytes')}, "
                f"already in the server){rate} + {describe_option(store, brief='store')}",
                why,
                0.0,
                _copy_s(dataset, clients, link, per_node_in, store_bw),
                "server NVMe",
                0,
            )
        )
    return rows


MONTH_S = 30 * 86400
"""A month of reading around the clock [s] (30 days), for read and request charges."""


def monthly_cost(
    o: st.StorageOption,
    units: float,
    dataset_bytes: float,
    read_bytes_per_s: float,
    read_iops: float,
    random_reads: float,
    clients: float,
    provisioned_bytes_per_s: float | None = None,
) -> dict[str, float]:
    """Monthly USD of an option at ``units``: capacity, provisioned performance, reads [USD].

    Capacity is billed on what is provisioned: whole units of a fixed size (TiB of a file
    system, drives), the dataset on elastic stores, and the dataset on block volumes, which
    are sized from the need (a gp3 volume is provisioned at the dataset's size, not its 64 TiB
    maximum). Provisioned IOPS and MB/s above a volume's free baseline are billed per month.
    Reads: per-GB and per-request charges for a month of reading around the clock
    (``provisioned_bytes_per_s``, reads plus checkpoint writes, sizes provisioned MB/s).
    """
    if o.unit == "volume" or not math.isfinite(o.capacity_bytes):
        billed_gb = dataset_bytes / 1e9
    else:
        billed_gb = units * o.capacity_bytes / 1e9
    storage_usd = o.price_per_gb_month * billed_gb
    extra_iops = max(random_reads - units * o.free_iops, 0.0)
    # Provisioned MB/s must carry checkpoint writes too; only reads are charged per GB read.
    throughput = read_bytes_per_s if provisioned_bytes_per_s is None else provisioned_bytes_per_s
    extra_mbps = max(throughput - units * o.free_bytes_per_s, 0.0) / 1e6
    performance = extra_iops * o.price_per_iops_month + extra_mbps * o.price_per_mbps_month
    reads = (read_bytes_per_s / 1e9 * o.price_per_gb_read + read_iops / 1e6 * o.price_per_million_requests) * MONTH_S
    return {"storage": storage_usd, "performance": performance, "reads": reads}


def price_note(o: st.StorageOption, months: int) -> str:
    """Where an option's price comes from, or why it has none."""
    if not o.priced:
        return f"no public price: {o.no_price_reason}"
    parts = []
    if math.isfinite(o.price_per_gb_month):
        parts.append(f"${o.price_per_gb_month:g}/GB-month {o.price_region}".strip())
    if math.isfinite(o.purchase_price):
        parts.append(f"${o.purchase_price:,.0f} per {o.unit} bought, over {months} months")
    date = f" ({o.price_date})" if o.price_date else ""
    return "; ".join(parts) + date


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
    from calc.sweep import evaluate_over

    s = _as_scenario(sc, overrides)
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
    between = np.arange(ks[i] + 1, ks[i + 1], dtype=float)
    if between.size:
        j = _last_true(_storage_fed(evaluate_over(base, "gpus_per_job", between * mp)))
        if j >= 0:
            return int(between[j]) * mp
    return int(ks[i]) * mp


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
    from calc.sweep import evaluate_over

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
    from calc.sweep import evaluate_over

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
    from calc.catalog import model

    spec = sc.tensors or model(sc.model).tensors
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


def levers(sc: PlanLike, /, **overrides: Any) -> pd.DataFrame:
    """Each lever applied alone: the GPU utilisation it reaches, ranked best first.

    Columns: lever, change, gpu_utilization, achieved_samples_per_s, bottleneck, gain
    (utilisation points over the scenario as it is). Levers that make no valid plan are left out.
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
    for name, change in lever_changes(s):
        try:
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


HOURS_PER_MONTH = 730.0
"""Hours in an average month (8,760 h / 12), for GPU-hours and monthly prices."""

SITE_WORDS = {"on-prem": "buy on-prem", "aws": "rent on AWS", "gcp": "rent on GCP", "azure": "rent on Azure"}
SITE_NAMES = {"on-prem": "on-prem", "aws": "AWS", "gcp": "GCP", "azure": "Azure"}


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
            "purchases": buy / months if math.isfinite(buy) else 0.0,
        }

    @property
    def headline(self) -> str:
        """One sentence: what to buy and what it costs."""
        if self.site is None and self.site_lines:
            # No site: one line per site follows (lines()); the headline compares their totals.
            return (
                "Buy: it depends on the site (not given: "
                + ask("site")
                + "): "
                + ", ".join(f"{SITE_WORDS[d['site']]} {fmt_usd(d['monthly_total_usd'])}" for d in self.site_lines)
                + " a month all in"
            )
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

    def lines(self) -> list[str]:
        """The answer as short sentences (for the CLI, the report and the page)."""
        p = self.plan
        out = [self.headline]
        chosen = self.design
        if self.site is None:
            out += [
                f"{SITE_WORDS[d['site']][0].upper()}{SITE_WORDS[d['site']][1:]}: {d['description']}"
                + ("" if d["design"] == "one tier" else f", {fmt_usd(d['monthly_total_usd'])} a month all in")
                for d in self.site_lines
            ]
        if self.deciding:
            out.append(self.deciding)
        charges = self.charges_line()
        if charges:
            out.append(charges)
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
        if p.read_bytes_per_s == 0 and p.page_cache_hit >= 1 and self.best is not None:
            out.append(
                f"The dataset fits in each node's RAM: keep it in the cheapest store and let the page cache serve "
                f"every epoch after the first (which reads {fmt(p.first_epoch_read_bytes_per_s, 'bytes_per_s')})."
            )
        if self.feeds_gpus is not None and self.feeds_note:
            out.append(self.feeds_note)
        gpus = p.scenario.gpus_per_job * p.scenario.jobs
        if p.gpu_utilization < 1 - 1e-9:
            money = (
                f", ${self.idle_usd_per_month:,.0f} a month at ${self.gpu_price_per_hour:,.2f} per GPU-hour"
                if math.isfinite(self.idle_usd_per_month)
                else f" (no GPU price: {self.gpu_price_source}; {ask('gpu_price_per_hour')})"
            )
            out.append(
                f"The {p.bottleneck} bottleneck idles {gpus:,} x {p.scenario.gpu} "
                f"{1 - p.gpu_utilization:.0%} of the time: "
                f"{self.idle_gpu_hours_per_month:,.0f} GPU-hours a month{money}."
            )
        else:
            out.append(f"No GPU time is lost: the {_n(gpus, 'GPU')} set the pace.")
        return out


def buyable_order(p: Plan, rec: pd.DataFrame) -> list[str]:
    """Options of ``rec`` the answer may buy for ``p``, in the answer's order (ready first, then
    ``recommend``'s cheapest-first order): the same rule the card uses, for charts and reports."""
    sc = p.scenario
    ok = rec[_buyable(rec, job_site(sc), sc.allow_other_site)].sort_values("ready", ascending=False, kind="stable")
    return [str(o) for o in ok["option"]]


def _buyable(rec: pd.DataFrame, site: str | None, allow_other: bool = False) -> npt.NDArray[np.bool_]:
    """Rows of a ``recommend`` table that serve, are ready, have a price and are at ``site`` (node RAM is at
    every site; other sites too when ``allow_other``, their egress priced in the row)."""
    opts = st.options()
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
    units, unit = int(row["units"]), str(row["unit"])
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
        else f"sized by {lim}, {times} headroom"
        if lim in ("bandwidth", "iops", "checkpoint writes", "write requests") and head < 2
        else f"its smallest size serves the job, {times} headroom"
        if lim in ("bandwidth", "iops", "checkpoint writes", "write requests")
        # Sized by something else (capacity, a minimum size): the rate it delivers is a bonus.
        else f"sized by {lim}; it delivers {times} the reads and bandwidth needed"
    )
    if brief == "store":
        return f"{_n(units, unit)} of {row['option']}{how}{size} to hold the dataset"
    if brief:
        return f"{_n(units, unit)} of {row['option']}{how}{size}, {', '.join(cost)}"
    return f"{_n(units, unit)} of {row['option']}{how}{size}, {', '.join(cost)}; {room}"


def _n(count: float, noun: str) -> str:
    """``1 drive``, ``3 drives``, ``1,024 GPUs``: a count with its noun, singular or plural."""
    n = int(count)
    return f"{n:,} {noun}" + ("" if n == 1 or noun.endswith("s") else "es" if noun.endswith("x") else "s")


def _deciding(p: Plan, d: Mapping[str, Any] | None, rec: pd.DataFrame) -> str:
    """One sentence: the constraint that sized the chosen design, with its number."""
    if d is None:
        return ""
    v = p.values
    clients = _clients(p.scenario)
    if d["design"] != "one tier":
        if d["design"] == "page cache":
            return (
                f"Deciding: the dataset ({fmt(p.dataset_bytes, 'bytes')}) fits in each node's free RAM, so the store "
                "is read once per node and only holds it."
            )
        return (
            f"Deciding: each of {_n(clients, 'node')} reads {fmt(v['read_bytes_per_s'] / clients, 'bytes_per_s')} "
            f"from its own copy; the store only holds the dataset ({fmt(p.dataset_bytes, 'bytes')}) "
            "and takes the checkpoints."
        )
    r = rec[rec["option"] == d["store"]].iloc[0]
    lim = str(r["limiting"])
    o = st.option(str(r["option"]))
    if lim in ("bandwidth", "checkpoint writes", "iops"):
        need = (
            f"{fmt(v['storage_need_bytes_per_s'], 'bytes_per_s')} (reads {fmt(v['read_bytes_per_s'], 'bytes_per_s')}, "
            f"checkpoint writes {fmt(v['checkpoint_write_bytes_per_s'], 'bytes_per_s')})"
            if lim != "iops"
            else fmt(st.random_reads(o, v["read_iops"], v["file_opens_per_s"]), "count_per_s", "random reads/s")
        )
        return f"Deciding: {lim}; the job needs {need}, which sets {_n(r['units'], str(r['unit']))} of {r['option']}."
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
        return (
            f"Deciding: drive endurance; checkpoints write {fmt(written * 365.25 / 30, 'bytes')} a year, and the "
            f"drives' rated writes must last the {p.scenario.amortization_months}-month amortisation, which sets "
            f"{_n(r['units'], str(r['unit']))} of {r['option']}."
        )
    if lim == "metadata":
        return (
            f"Deciding: metadata; {fmt(v['metadata_ops_per_s'], 'count_per_s', 'metadata ops/s')} of file opens, "
            f"which sets {_n(r['units'], str(r['unit']))} of {r['option']} (its metadata grows with its size)."
        )
    return f"Deciding: {lim}; it sets {_n(r['units'], str(r['unit']))} of {r['option']}."


def answer(x: PlanLike, /, **overrides: Any) -> Answer:
    """The answer card: storage to buy, runners-up, the job's own storage judged, GPUs fed, idle cost."""
    p = _as_plan(x, overrides)
    sc = p.scenario
    site = job_site(sc)
    rec = recommend(p)
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
    best = rows[0] if rows else None
    runners = tuple(rows[1:3])
    need_bw, need_iops = p.read_bytes_per_s, p.read_iops
    gpus = sc.gpus_per_job * sc.jobs
    if sc.storage:
        mine = dict(rec[rec["option"] == sc.storage].iloc[0])
        units = sc.storage_units
        o = st.option(sc.storage)
        have = (
            f"{units} x {sc.storage}"
            if units is not None
            else f"{sc.storage} (as many units as needed, up to its maximum)"
        )
        # The storage is fine when its own stage keeps up with the GPUs, whatever else binds (a
        # lone worker that both reads and decodes binds as "workers" while its read time is short).
        ok_now = p.gpu_utilization >= 1 - 1e-9 or p.stages.get("storage", math.inf) >= p.stages["gpu"] * (1 - 1e-9)
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
        elif not math.isfinite(p.storage_bytes_per_s) or p.storage_bytes_per_s >= need_bw:
            # Bandwidth to spare yet the bottleneck: its read time binds (Little's law), not its size.
            own = (
                f"Your storage, {have}, holds the job back by its read time "
                f"({fmt(p.values['storage_latency_s'], 'seconds')} a read, {sc.num_workers} worker(s) per GPU), "
                "not by its bandwidth: more workers or asynchronous reads lift it."
            )
        else:
            would = f"; {mine['units']:,} would" if mine["feasible"] else f"; it cannot: {mine['why_not']}"
            own = (
                f"Your storage, {have}, delivers {fmt(p.storage_bytes_per_s, 'bytes_per_s')} of the "
                f"{fmt(need_bw, 'bytes_per_s')} needed{would}."
            )
        if not mine["feasible"] and ok_now and o.kind != "ram":
            own += f" As a store to buy it does not fit: {mine['why_not']}."
        option: str | None = sc.storage
        n_units = units
    else:
        ok_now = True
        own = (
            f"No storage chosen: the job needs {fmt(need_bw, 'bytes_per_s')} and "
            f"{fmt(need_iops, 'count_per_s', 'reads/s')} in steady state "
            f"({fmt(p.first_epoch_read_bytes_per_s, 'bytes_per_s')} in the first epoch)."
        )
        option, n_units = (best["option"], best["units"]) if best else (None, None)
    feeds: int | None = None
    feeds_note = ""
    # The card names a design's description, not best, when a two-tier design or another site won.
    chosen = (
        min(site_lines, key=lambda d: d["monthly_total_usd"])
        if site is None and site_lines
        else next((d for d in designs_ if d["feasible"]), None)
    )
    _headline_is_best = chosen is None or (chosen["design"] == "one tier" and site is not None)
    if option is not None and need_bw > 0:
        try:
            feeds = max_gpus(sc, storage=option, units=n_units)
        except InputError:
            feeds = None
        # One source per figure: a GPU count that contradicts the plan's own verdict is not shown.
        fed_now = ok_now if sc.storage else True
        named = sc.storage is not None or (best is not None and _headline_is_best)
        if feeds is not None and (feeds >= gpus) == fed_now and named:
            size = f"{n_units:,} x {option}" if n_units is not None else f"{option} at its largest size"
            many = f"more than 100 times this job's {_n(gpus, 'GPU')}" if feeds > 100 * gpus else _n(feeds, "GPU")
            feeds_note = f"{size} can feed {many} of this job at its target utilisation."
        else:
            feeds = None
    price = sc.gpu_price_per_hour
    gpu = catalog.gpu(sc.gpu)
    src = "scenario" if price is not None else gpu.price_source
    price_f = float(price) if price is not None else gpu.price_per_hour
    idle_h = gpus * (1 - p.gpu_utilization) * HOURS_PER_MONTH
    a = Answer(
        designs=designs_,
        plan=p,
        best=best,
        runners_up=runners,
        own=own,
        feeds_gpus=feeds,
        feeds_note=feeds_note,
        idle_gpu_hours_per_month=idle_h,
        idle_usd_per_month=idle_h * price_f,
        gpu_price_per_hour=price_f,
        gpu_price_source=src,
        site=site,
        site_lines=site_lines,
    )
    return dataclasses.replace(a, deciding=_read_time_binds(p, a.design) or _deciding(p, a.design, rec))


def _read_time_binds(p: Plan, d: Mapping[str, Any] | None) -> str:
    """The deciding sentence when the chosen local cache serves the bandwidth but the loader's
    reads in flight do not (Little's law): planned with those drives, read time still binds."""
    if d is None or d["design"] != "local cache":
        return ""
    sc = p.scenario
    q = plan(sc.replace(storage=d["local"], storage_units=None))
    if q.bottleneck != "storage" or q.gpu_utilization >= sc.target_gpu_utilization - 1e-9:
        return ""
    v = q.values  # the plan's own figures: reads in flight = reads/s x read time (Little's law)
    return (
        f"Deciding: read time; the job needs {v['outstanding_reads']:,.1f} reads in flight "
        f"({fmt(v['read_iops'], 'count_per_s', 'reads/s')} x {fmt(v['storage_latency_s'], 'seconds')} a read) and "
        f"its {_n(sc.num_workers * sc.gpus_per_job * sc.jobs, 'worker')} keep fewer: the drives carry the bandwidth, "
        f"but GPU utilisation stays at {q.gpu_utilization:.0%} until the loader has more workers "
        f"({ask('num_workers')}) or reads go asynchronous."
    )
