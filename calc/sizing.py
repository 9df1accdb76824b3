"""Storage recommendations, inverse sizing and what-if levers (docs/model.md sections 7 and 8).

recommend(): for every storage option, the units needed on each axis (IOPS at the plan's
read size, bandwidth, capacity), whether it can serve the demand at all (per-client caps,
system size), headroom, cost and caveats.
max_gpus(): how many GPUs of a job a storage system keeps at the target utilisation.
levers(): each fix the seeds name, applied alone, ranked by the GPU utilisation it reaches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from calc import catalog, demand
from calc import storage as st
from calc.errors import InputError
from calc.plan import Plan, as_scenario, plan
from calc.scenario import Scenario
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

    Columns: option, label, feasible, units, unit, limiting (iops, bandwidth, checkpoint writes, capacity,
    minimum, per-client cap, system size, RAM), why_not, iops_headroom, bandwidth_headroom,
    capacity_headroom (supply / need, >= 1 when feasible), latency_s, workers_per_gpu_needed
    (Little's law), monthly_usd (storage + read and request charges if read 24/7 for 30 days),
    monthly_read_usd, purchase_usd, ready (the loader's workers cover the
    latency), caveats, verified. Feasible rows first, then ready ones, cheapest first.
    """
    return _rank(_as_plan(x, overrides), reads=True)


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
    # Reads and checkpoint writes together (calc.plan.evaluate_checkpoint); the dataset and
    # the kept checkpoints together when the job saves any.
    need_bw = v["storage_need_bytes_per_s"]
    read_bw, write_bw = v["read_bytes_per_s"], v["checkpoint_write_bytes_per_s"]
    overlap = p.inputs["checkpoint_async"] > 0  # the resolved mode: auto is async for sharded state
    saving = write_bw > 0
    need_cap = v["dataset_bytes"] + (v["checkpoint_capacity_bytes"] if saving else 0.0)
    rows = []
    for o in st.options().values():
        loads = st.unit_loads(
            o, read_bw, v["read_iops"], req, need_cap, v["file_opens_per_s"], write_bw, writes_overlap_reads=overlap
        )
        rnd = st.random_reads(o, v["read_iops"], v["file_opens_per_s"])
        why = ""
        caveats = []
        if o.kind == "ram":
            units = float(clients)
            limiting = "RAM"
            if not v["fits_in_ram"]:
                why = (
                    f"dataset {fmt(v['dataset_bytes'], 'bytes')} does not fit in free RAM "
                    f"({fmt(p.inputs['host_ram_bytes'], 'bytes', binary=True)} per node less loader RAM)"
                )
            else:
                caveats.append(
                    "the dataset fits in free RAM: after the first epoch the page cache serves it; "
                    "tmpfs defaults to half of RAM and competes with loader workers; every node holds a copy"
                )
        else:
            n, limiting = st.size(loads)
            if limiting == "bandwidth" and write_bw / o.write_bytes_per_s > read_bw / o.read_bytes_per_s:
                limiting = "checkpoint writes"
            units = float(n)
            if units > o.max_units:
                why = f"needs {units:,.0f} {o.unit}s on {limiting}; one system allows {o.max_units:,.0f}"
                limiting = "system size"
            per_client = need_bw / clients
            if per_client > o.client_bytes_per_s:
                why = why or (
                    f"each of {clients} node(s) must read {fmt(per_client, 'bytes_per_s')}; "
                    f"the per-client cap is {fmt(o.client_bytes_per_s, 'bytes_per_s')}"
                )
                limiting = "per-client cap"
        units = max(units, 1.0)
        supply_iops = units * o.iops_at(req) if o.kind != "ram" else math.inf
        supply_iops = min(supply_iops, o.aggregate_iops)
        supply_bw = units * o.read_bytes_per_s if o.kind != "ram" else o.read_bytes_per_s * clients
        if o.kind != "ram" and supply_iops < rnd and not why:
            why = f"the system-wide cap of {fmt(o.aggregate_iops, 'count_per_s', 'reads/s')} is below the need"
            limiting = "system size"
        # Capacity provisioned: block volumes are sized from the dataset, not their maximum.
        cap = math.inf if o.kind == "ram" else need_cap if o.unit == "volume" else units * o.capacity_bytes
        per_gpu_iops = v["read_iops"] / gpus
        service = o.service_time_s(req)
        workers = math.ceil(per_gpu_iops * service - 1e-9)
        if workers > max(sc.num_workers, 1):
            caveats.append(
                f"at {fmt(service, 'seconds')} per read, each GPU needs {workers} reads in flight "
                f"(Little's law); it has {sc.num_workers} worker(s): raise num_workers or read asynchronously"
            )
        if o.latency_s > v["latency_budget_s"]:
            caveats.append(
                f"one read ({fmt(o.latency_s, 'seconds')}) takes longer than a step: prefetching is essential"
            )
        if o.burst:
            caveats.append(o.burst)
        meta = v["file_opens_per_s"] * demand.METADATA_OPS_PER_OPEN.get(o.protocol, 0.0)
        if meta > o.metadata_ops and not why:
            why = (
                f"{fmt(meta, 'count_per_s', 'metadata ops/s')} ({o.protocol} file opens) exceed its "
                f"{fmt(o.metadata_ops, 'count_per_s', 'ops/s')} metadata limit: pack into shards"
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
        if o.kind == "local" and clients > 1 and not why:
            # A drive in one node cannot feed the others: designs() sizes drives per node instead.
            why = f"local drives serve only their own node; {clients} nodes read (see the per-node local cache design)"
            limiting = "one node"
        cost = monthly_cost(o, units, need_cap, read_bw, v["read_iops"], rnd, clients, provisioned_bytes_per_s=need_bw)
        purchase = units * o.purchase_price if o.kind != "ram" else clients * o.purchase_price
        amortised = purchase / sc.amortization_months if math.isfinite(purchase) else 0.0
        rented = cost["storage"] + cost["performance"] if math.isfinite(cost["storage"]) else 0.0
        total = rented + cost["reads"] + amortised if o.priced else math.nan
        rows.append(
            {
                "option": o.name,
                "label": o.label,
                "feasible": not why,
                "units": int(units),
                "unit": o.unit,
                "limiting": limiting,
                "why_not": why,
                "iops_headroom": supply_iops / rnd if rnd > 0 else math.inf,
                "bandwidth_headroom": (
                    units / loads["bandwidth"]
                    if o.kind != "ram" and loads["bandwidth"] > 0
                    else supply_bw / need_bw
                    if o.kind == "ram" and need_bw > 0
                    else math.inf
                ),
                "capacity_headroom": cap / need_cap if need_cap > 0 else math.inf,
                "latency_s": o.latency_s,
                "workers_per_gpu_needed": workers,
                "monthly_usd": cost["storage"] + cost["performance"] + cost["reads"],
                "monthly_read_usd": cost["reads"],
                "purchase_usd": purchase,
                "monthly_total_usd": total,
                "capacity_bytes": cap,
                "price_note": price_note(o, sc.amortization_months),
                "ready": workers <= max(sc.num_workers, 1),
                "caveats": "; ".join(caveats),
                "verified": o.verified,
            }
        )
    df = pd.DataFrame(rows)
    # One comparable figure ranks them: monthly rent + read charges + purchases spread over
    # amortization_months. Options with no public price come last, with the reason.
    df["_cost"] = df["monthly_total_usd"].fillna(np.inf)
    df = df.sort_values(["feasible", "_cost", "units"], ascending=[False, True, True]).drop(columns="_cost")
    return df.reset_index(drop=True)


def designs(x: PlanLike, /, **overrides: Any) -> pd.DataFrame:
    """Complete storage designs for the job, cheapest comparable monthly cost first.

    - ``one tier``: a shared store that serves every read (``recommend``'s feasible rows);
    - ``page cache``: when the dataset fits in each node's free RAM, a store that only holds
      it, read once per node; every later epoch comes from RAM;
    - ``server NVMe cache``: the scenario's server preset has its own NVMe (a DGX's cache drives,
      a cloud instance's instance store): it holds a copy per node at no extra cost;
    - ``local cache``: drives bought for every node, each holding a full copy of the dataset
      and sized for the node's full read rate (bandwidth, random reads, capacity), plus a store
      that holds the dataset and takes the checkpoints. ``staging_s`` is the time to copy the
      dataset onto every node before training: the slowest of the node's link, the store's
      per-client cap, the drives' write rate and the store's aggregate rate shared by all nodes.

    Columns: design, description, feasible, why_not, monthly_total_usd, purchase_usd,
    staging_s, store (option), local (option or ""), local_units_per_node.
    """
    p = _as_plan(x, overrides)
    return _designs(p, recommend(p))


def _designs(p: Plan, one: pd.DataFrame) -> pd.DataFrame:
    """``designs`` from the plan's ``recommend`` table ``one`` (the answer passes its own)."""
    sc = p.scenario
    clients = _clients(sc)
    months = sc.amortization_months
    cloud = _cloud(sc.server)
    rows: list[dict[str, Any]] = []
    for _, r in one[_buyable(one, cloud)].head(3).iterrows():
        rows.append(
            {
                "design": "one tier",
                "description": describe_option(dict(r), brief=True),
                "feasible": True,
                "why_not": "",
                "monthly_total_usd": float(r["monthly_total_usd"]),
                "purchase_usd": float(r["purchase_usd"]),
                "staging_s": 0.0,
                "store": r["option"],
                "local": "",
                "local_units_per_node": 0,
            }
        )
    # Every read at full rate, nothing cached: what a local tier must serve per node.
    full = plan(sc.replace(page_cache=False, cache_fraction=0.0))
    store_rank = _rank(full, reads=False)
    # The store behind a cache is shared and durable: not a node's own drives or RAM.
    shared = store_rank["option"].map(lambda n: st.option(n).kind not in ("local", "ram"))
    stores = store_rank[_buyable(store_rank, cloud) & shared]
    store = dict(stores.iloc[0]) if len(stores) else None
    link = p.inputs["node_network_bytes_per_s"]
    dataset = p.dataset_bytes
    if store is not None:
        so = st.option(str(store["option"]))
        store_bw = min(store["units"] * so.read_bytes_per_s, clients * so.client_bytes_per_s)
        per_node_in = min(link, so.client_bytes_per_s)
        if p.fits_in_ram and not sc.page_cache:
            stage = _copy_s(dataset, clients, link, per_node_in, store_bw)
            rows.append(
                {
                    "design": "page cache",
                    "description": (
                        "the page cache (the dataset fits in each node's RAM) + "
                        + describe_option(store, brief="store")
                    ),
                    "feasible": True,
                    "why_not": "",
                    "monthly_total_usd": float(store["monthly_total_usd"]),
                    "purchase_usd": float(store["purchase_usd"]),
                    "staging_s": stage,
                    "store": store["option"],
                    "local": "",
                    "local_units_per_node": 0,
                }
            )
        fv = full.values
        node_bw = fv["read_bytes_per_s"] / clients
        # When the page cache already serves every epoch after the first, a drive cache adds cost only.
        cached = p.read_bytes_per_s == 0 and p.page_cache_hit >= 1
        node_iops = fv["read_iops"] / clients
        node_opens = fv["file_opens_per_s"] / clients
        best_local: dict[str, Any] | None = None
        for o in st.options().values():
            # No drives are bought for cloud instances: their own instance store is the local tier.
            if cached or cloud or o.kind != "local" or o.unit != "drive" or not math.isfinite(o.purchase_price):
                continue
            loads = st.unit_loads(o, node_bw, node_iops, fv["request_bytes"], dataset, node_opens)
            k, limiting = st.size(loads)
            why = (
                f"needs {k} drives per node on {limiting}; a server holds {o.max_units:,.0f}" if k > o.max_units else ""
            )
            buy = clients * k * o.purchase_price
            total = buy / months + float(store["monthly_total_usd"])
            stage = _copy_s(dataset, clients, link, min(per_node_in, k * o.write_bytes_per_s), store_bw)
            row = {
                "design": "local cache",
                "description": (
                    f"{_n(k, 'drive')} of {o.name} per node on {_n(clients, 'node')} "
                    f"({fmt_usd(buy)} to buy) + {describe_option(store, brief='store')}"
                ),
                "feasible": not why,
                "why_not": why,
                "monthly_total_usd": total,
                "purchase_usd": buy + float(store["purchase_usd"]) if math.isfinite(store["purchase_usd"]) else buy,
                "staging_s": stage,
                "store": store["option"],
                "local": o.name,
                "local_units_per_node": k,
            }
            key = (not row["feasible"], total)
            if best_local is None or key < (not best_local["feasible"], best_local["monthly_total_usd"]):
                best_local = row
        if best_local is not None:
            rows.append(best_local)
        srv = catalog.server(sc.server) if sc.server else None
        if srv is not None and math.isfinite(srv.local_nvme_bytes) and not cached:
            # The server's own NVMe (instance store on cloud GPUs): nothing to buy but the store.
            fits = dataset <= srv.local_nvme_bytes
            fast = not math.isfinite(srv.local_nvme_read_bytes_per_s) or node_bw <= srv.local_nvme_read_bytes_per_s
            why = (
                ""
                if fits and fast
                else f"the dataset ({fmt(dataset, 'bytes')}) exceeds the {fmt(srv.local_nvme_bytes, 'bytes')} of NVMe"
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
                {
                    "design": "server NVMe cache",
                    "description": (
                        f"the {srv.name} nodes' own NVMe ({srv.local_nvme}, {fmt(srv.local_nvme_bytes, 'bytes')}, "
                        f"already in the server){rate} + {describe_option(store, brief='store')}"
                    ),
                    "feasible": not why,
                    "why_not": why,
                    "monthly_total_usd": float(store["monthly_total_usd"]),
                    "purchase_usd": float(store["purchase_usd"]),
                    "staging_s": _copy_s(dataset, clients, link, per_node_in, store_bw),
                    "store": store["option"],
                    "local": "server NVMe",
                    "local_units_per_node": 0,
                }
            )
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    return df.sort_values(["feasible", "monthly_total_usd"], ascending=[False, True], kind="stable").reset_index(
        drop=True
    )


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

    Give a storage option (``units`` defaults to the most one system allows, else 1), or a
    bandwidth and/or IOPS. Demand per GPU is the plan's ``per_gpu_samples_per_s`` times the
    bytes and reads per example (after the cache fraction).
    """
    s = _as_scenario(sc, overrides)
    if units is not None and (not math.isfinite(float(units)) or units < 1 or units != math.floor(units)):
        raise InputError("units", f"{units!r}; accepted: a whole number of storage units, at least 1")
    if storage is None and units is not None:
        raise InputError("units", "units need a storage option; accepted: storage=NAME with units=N")
    # Demand per GPU from one model-parallel group of the job (one GPU without model parallelism).
    p = plan(s.replace(gpus_per_job=s.tensor_parallel * s.pipeline_parallel, jobs=1))
    v = p.values
    miss = 1 - s.cache_fraction
    bw_per_gpu = v["per_gpu_samples_per_s"] * p.inputs["example_bytes"] * miss
    seeks = (
        v["reads_per_example"]
        if storage is not None and st.option(storage).counts_requests
        else 1 / s.examples_per_file
    )
    iops_per_gpu = v["per_gpu_samples_per_s"] * (seeks if storage is not None else v["reads_per_example"]) * miss
    bw, iops = math.inf, math.inf
    if storage is not None:
        o = st.option(storage)
        n_units = units if units is not None else (o.max_units if math.isfinite(o.max_units) else 1.0)
        sup = st.supply_of(o.name, n_units, v["request_bytes"], clients=math.inf)
        bw, iops = sup.bytes_per_s, sup.iops
    if read_bytes_per_s is not None:
        bw = min(bw, parse(read_bytes_per_s, "bytes_per_s", "read_bytes_per_s"))
    if read_iops is not None:
        iops = min(iops, parse(read_iops, "count_per_s", "read_iops"))
    if math.isinf(bw) and math.isinf(iops):
        raise InputError("storage", "give a storage option, read_bytes_per_s or read_iops")
    n = min(bw / bw_per_gpu if bw_per_gpu > 0 else math.inf, iops / iops_per_gpu if iops_per_gpu > 0 else math.inf)
    if not math.isfinite(n):
        raise InputError("storage", "the scenario reads nothing per GPU; no storage limit applies")
    return math.floor(n + 1e-9)


def largest_example_bytes(sc: PlanLike, /, **overrides: Any) -> float:
    """Largest on-disk example [bytes] the scenario's storage still serves at its GPU count."""
    s = _as_scenario(sc, overrides)
    p = plan(s)
    bw = p.storage_bytes_per_s
    if not math.isfinite(bw):
        raise InputError(
            "storage_units", "set storage with storage_units (or storage_bytes_per_s) to bound the example size"
        )
    return bw / (p.values["samples_per_s"] * (1 - s.cache_fraction))


def fewest_workers(sc: PlanLike, /, most: int = 256, **overrides: Any) -> int:
    """Fewest DataLoader workers per GPU that reach the target utilisation (-1 if none do)."""
    from calc.sweep import sweep

    s = _as_scenario(sc, overrides)
    df = sweep(s, num_workers=list(range(1, most + 1)))
    ok = df[df["gpu_utilization"] >= s.target_gpu_utilization - 1e-9]
    return int(ok["num_workers"].min()) if len(ok) else -1


_FLOAT = re.compile(r":(float32|float64|int64|int32|float16|bfloat16|int16)")


def lever_changes(sc: Scenario) -> list[tuple[str, dict[str, Any]]]:
    """The what-if levers the seeds name, as Scenario changes."""
    p = plan(sc)
    from calc.catalog import model

    spec = sc.tensors or model(sc.model).tensors
    out: list[tuple[str, dict[str, Any]]] = [
        ("more workers", {"num_workers": max(2 * sc.num_workers, 8)}),
        (
            "prefetch (workers overlap loading with compute)",
            {"num_workers": 4} if sc.num_workers == 0 else {"prefetch_factor": 2 * sc.prefetch_factor},
        ),
        (
            "RAM / tmpfs",
            {
                "storage": "ram-tmpfs",
                "storage_units": None,
                "storage_bytes_per_s": None,
                "storage_iops": None,
                "storage_latency_s": None,
            },
        ),
        (
            "faster storage (Gen4 NVMe, as many as needed)",
            {
                "storage": "nvme-gen4",
                "storage_units": None,
                "storage_bytes_per_s": None,
                "storage_iops": None,
                "storage_latency_s": None,
            },
        ),
        ("pack into 1 MiB-read shards", {"examples_per_file": 1000, "request_bytes": "1 MiB"}),
        ("cache 20 % locally", {"cache_fraction": 0.2}),
        ("uint8 tensors", {"tensors": _FLOAT.sub(":uint8", spec)}),
        (
            "offline preprocessing",
            {
                "example_bytes": p.values["example_tensor_bytes"],
                "cpu_seconds_per_example": p.values["cpu_seconds_effective"] * 0.1,
            },
        ),
        ("GPU decode (DALI)", {"gpu_decode": True}),
    ]
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
    MB/s) and the first row ``recommend`` then gives (feasible, ready, cheapest known cost),
    plus how many units of the scenario's own storage it needs, if it names one.
    """
    p = _as_plan(x, overrides)
    sc = p.scenario
    shard = parse(shard_bytes, "bytes", "shard_bytes")
    per_shard = max(1, int(shard // p.inputs["example_bytes"]))
    levers_: list[tuple[str, dict[str, Any]]] = [("as is", {})]
    if per_shard > 1:  # examples as large as a shard gain nothing from packing
        levers_.append(
            (
                f"pack into {fmt(shard, 'bytes', binary=True)} shards, 1 MiB reads",
                {"examples_per_file": per_shard, "request_bytes": "1 MiB"},
            )
        )
    levers_ += [
        (f"cache {cache_fraction:.0%} locally", {"cache_fraction": cache_fraction}),
        ("keep the dataset in RAM (page cache / tmpfs)", {"storage": "ram-tmpfs", "storage_units": None}),
    ]
    rows = []
    for name, change in levers_:
        q = plan(sc.replace(**change)) if change else p
        rec = recommend(q)
        best = rec.iloc[0]
        own = rec[rec["option"] == sc.storage]
        ram = rec[rec["option"] == "ram-tmpfs"].iloc[0]
        in_ram = name.startswith("keep")
        rows.append(
            {
                "lever": name,
                "change": ", ".join(f"{k}={v}" for k, v in change.items() if v is not None),
                "read_iops": 0.0 if in_ram else q.read_iops,
                "file_opens_per_s": 0.0 if in_ram else q.file_opens_per_s,
                "read_bytes_per_s": 0.0 if in_ram else q.read_bytes_per_s,
                "best_option": ("ram-tmpfs" if ram["feasible"] else f"no: {ram['why_not']}")
                if in_ram
                else best["option"],
                "best_units": int(ram["units"] if in_ram else best["units"]),
                "own_storage_units": int(own.iloc[0]["units"]) if len(own) and not in_ram else None,
            }
        )
    return pd.DataFrame(rows)


HOURS_PER_MONTH = 730.0
"""Hours in an average month (8,760 h / 12), for GPU-hours and monthly prices."""


@dataclass(frozen=True)
class Answer:
    """What to buy for this job and what it costs: the first thing a meeting reads.

    ``best`` and ``runners_up`` are rows of ``recommend`` (feasible options, cheapest
    comparable monthly cost first); ``own`` judges the scenario's own storage in words;
    ``feeds_gpus`` is how many GPUs of this job that storage (or the best option) keeps fed;
    ``idle_gpu_hours_per_month`` and ``idle_usd_per_month`` price what the bottleneck wastes.
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

    @property
    def design(self) -> dict[str, Any] | None:
        """The cheapest feasible complete design (``designs``' first feasible row)."""
        return next((d for d in self.designs if d["feasible"]), None)

    @property
    def headline(self) -> str:
        """One sentence: what to buy and what it costs."""
        d = self.design
        if d is not None and d["design"] != "one tier":
            # An unknown copy time (no node link) is said in lines(), not in the one-sentence headline.
            copy = _staging(d) if math.isfinite(d["staging_s"]) else ""
            return f"Buy: {d['description']}; {fmt_usd(d['monthly_total_usd'])} a month all in{copy}"
        if self.best is None:
            return "No storage option in the catalog serves this job: see the reasons per option."
        return "Buy: " + describe_option(self.best)

    def lines(self) -> list[str]:
        """The answer as short sentences (for the CLI, the report and the page)."""
        p = self.plan
        out = [self.headline]
        chosen = self.design
        # Under a two-tier headline the best single store is the first runner-up.
        runners = (
            (self.best, *self.runners_up[:1])
            if chosen is not None and chosen["design"] != "one tier" and self.best is not None
            else self.runners_up
        )
        if chosen is not None and not math.isfinite(chosen["staging_s"]):
            out.append("The time to copy the dataset to each node needs the node link: give node_network_bytes_per_s.")
        if runners:
            out.append("Runners-up: " + "; ".join(describe_option(r, brief=True) for r in runners))
        for d in self.designs:
            if d["design"] != "one tier" and d is not chosen and d["feasible"]:
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
        if self.feeds_gpus is not None:
            out.append(self.feeds_note)
        gpus = p.scenario.gpus_per_job * p.scenario.jobs
        if p.gpu_utilization < 1 - 1e-9:
            money = (
                f", ${self.idle_usd_per_month:,.0f} a month at ${self.gpu_price_per_hour:,.2f} per GPU-hour"
                if math.isfinite(self.idle_usd_per_month)
                else f" (no GPU price: {self.gpu_price_source}; set gpu_price_per_hour)"
            )
            out.append(
                f"The {p.bottleneck} bottleneck idles {gpus:,} x {p.scenario.gpu} "
                f"{1 - p.gpu_utilization:.0%} of the time: "
                f"{self.idle_gpu_hours_per_month:,.0f} GPU-hours a month{money}."
            )
        else:
            out.append(f"No GPU time is lost: the {_n(gpus, 'GPU')} set the pace.")
        return out


def _buyable(rec: pd.DataFrame, cloud: str | None) -> pd.Series:
    """Rows of a ``recommend`` table that serve, have a price and, on a cloud instance, are in
    its cloud (egress between clouds is not priced here)."""
    same = rec["option"].map(lambda n: cloud is None or _cloud(n) == cloud)
    return rec["feasible"] & rec["monthly_total_usd"].notna() & same


def _cloud(name: str | None) -> str | None:
    """``aws``, ``gcp`` or ``azure`` for a cloud server or storage option by its name prefix; None otherwise."""
    prefix = (name or "").split("-", 1)[0].lower()
    return prefix if prefix in ("aws", "gcp", "azure") else None


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
        return "; the time to copy the dataset to each node needs the node link: give node_network_bytes_per_s"
    return f"; copying the dataset to each node takes {fmt(t, 'seconds')}"


def describe_option(row: Mapping[str, Any], brief: bool | str = False) -> str:
    """``3 drives of nvme-gen4 (23 TB), $1,234 to buy, $34 a month all in; 2.1x headroom...``.

    ``brief=True`` drops the headroom; ``brief="store"`` says only what holds the dataset.
    """
    units, unit = int(row["units"]), str(row["unit"])
    cap = row.get("capacity_bytes", math.inf)
    size = f" ({fmt(cap, 'bytes')})" if isinstance(cap, float) and math.isfinite(cap) else ""
    cost = []
    if math.isfinite(row.get("purchase_usd", math.nan)):
        cost.append(f"{fmt_usd(row['purchase_usd'])} to buy")
    if math.isfinite(row.get("monthly_total_usd", math.nan)):
        cost.append(f"{fmt_usd(row['monthly_total_usd'])} a month all in")
    else:
        cost.append("no public price")
    head = min(row.get("iops_headroom", math.inf), row.get("bandwidth_headroom", math.inf))
    room = (
        ("over 100x" if head > 100 else f"{head:.1f}x") + f" headroom, limited by {row['limiting']}"
        if math.isfinite(head)
        else "read once: the page cache holds the dataset after the first epoch"
    )
    if brief == "store":
        return f"{_n(units, unit)} of {row['option']}{size} to hold the dataset"
    if brief:
        return f"{_n(units, unit)} of {row['option']}{size}, {', '.join(cost)}"
    return f"{_n(units, unit)} of {row['option']}{size}, {', '.join(cost)}; {room}"


def _n(count: float, noun: str) -> str:
    """``1 drive``, ``3 drives``, ``1,024 GPUs``: a count with its noun, singular or plural."""
    n = int(count)
    return f"{n:,} {noun}" + ("" if n == 1 or noun.endswith("s") else "s")


def answer(x: PlanLike, /, **overrides: Any) -> Answer:
    """The answer card: storage to buy, runners-up, the job's own storage judged, GPUs fed, idle cost."""
    p = _as_plan(x, overrides)
    sc = p.scenario
    rec = recommend(p)
    ok = rec[_buyable(rec, _cloud(sc.server))]
    rows = [dict(r) for _, r in ok.iterrows()]
    best = rows[0] if rows else None
    runners = tuple(rows[1:3])
    need_bw, need_iops = p.read_bytes_per_s, p.read_iops
    if sc.storage:
        mine = dict(rec[rec["option"] == sc.storage].iloc[0])
        units = sc.storage_units
        have = (
            f"{units} x {sc.storage}"
            if units is not None
            else f"{sc.storage} (as many units as needed, up to its maximum)"
        )
        ok_now = p.gpu_utilization >= 1 - 1e-9 or p.bottleneck != "storage"
        if need_bw == 0 and p.page_cache_hit >= 1:
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
        else:
            would = f"; {mine['units']:,} would" if mine["feasible"] else f"; it cannot: {mine['why_not']}"
            own = (
                f"Your storage, {have}, delivers {fmt(p.storage_bytes_per_s, 'bytes_per_s')} of the "
                f"{fmt(need_bw, 'bytes_per_s')} needed{would}."
            )
        option: str | None = sc.storage
        n_units = units
    else:
        own = (
            f"No storage chosen: the job needs {fmt(need_bw, 'bytes_per_s')} and "
            f"{fmt(need_iops, 'count_per_s', 'reads/s')} in steady state "
            f"({fmt(p.first_epoch_read_bytes_per_s, 'bytes_per_s')} in the first epoch)."
        )
        option, n_units = (best["option"], best["units"]) if best else (None, None)
    feeds: int | None = None
    feeds_note = ""
    if option is not None and need_bw > 0:
        try:
            feeds = max_gpus(sc, storage=option, units=n_units)
            size = f"{n_units:,} x {option}" if n_units is not None else f"{option} at its largest size"
            feeds_note = f"{size} can feed {_n(feeds, 'GPU')} of this job at its target utilisation."
        except InputError:
            feeds = None
    price = sc.gpu_price_per_hour
    gpu = catalog.gpu(sc.gpu)
    src = "scenario" if price is not None else gpu.price_source
    price_f = float(price) if price is not None else gpu.price_per_hour
    gpus = sc.gpus_per_job * sc.jobs
    idle_h = gpus * (1 - p.gpu_utilization) * HOURS_PER_MONTH
    return Answer(
        designs=tuple(dict(r) for _, r in _designs(p, rec).iterrows()),
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
    )
