"""The sizing engine: every storage option sized for one Demand, in named steps (docs/model.md section 7).

A ``Demand`` is what a store must carry: reads (bytes/s, requests/s, their size, file opens),
checkpoint writes (their rate while saving, bytes and requests in a month), capacity, the nodes
that read, and where the job runs. ``calc.sizing`` builds one from a Plan, ``calc.cluster`` from a
ClusterPlan; both rank options with ``rank(demand)``, which runs, for each option::

    size_axes   units on each axis (IOPS at the read size, bandwidth, capacity, endurance, ...)
    protect     bought drives: data drives, then the protection scheme's extra drives and writes
    enclose     the enclosures that hold bought drives, their links carrying the demand
    rule_out    the first of RULES that fails, with its reason (why_not) and label (limiting)
    caveats     CAVEATS, each a named sentence maker
    price       rent, reads, writes, egress, purchases; one comparable monthly total
    rank        feasible first, then cheapest

To add a purchasing rule, append a ``Rule`` to ``RULES`` (its predicate returns the reason an
option cannot be bought, "" when it can, and its ``scales_with_gpus`` flag says whether more GPUs
can make it fail, which ``max_gpus`` reads) or a caveat to ``CAVEATS``; each step is a function of
(option, demand, sized) tested on its own in tests/test_engine.py.

References
----------
Little, J. D. C. (1961). A proof for the queuing formula L = lambda W. Operations Research 9(3)
(reads in flight per GPU).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from calc import catalog
from calc import checkpoint as ck
from calc import demand as dm
from calc import storage as st
from calc.plan import Plan
from calc.scenario import Scenario, ask
from calc.site import job_site, workstation
from calc.units import DAYS_PER_MONTH, DAYS_PER_YEAR, HOURS_PER_MONTH, MONTH_S, fmt, parse

MAX_UNITS = 1e6
"""The most units of one option an answer names (Scenario ``storage_units`` accepts up to 1e6)."""


@dataclass(frozen=True)
class Demand:
    """What a store must carry, and the facts about the job that decide what may be bought [base units].

    ``need_bytes_per_s`` is reads plus what the checkpoint writes add to them (a blocking save
    pauses the reads); ``write_bytes_per_s`` the checkpoint write rate while saving (0: no saves);
    ``writes_overlap_reads`` whether writes run beside the reads (an asynchronous drain);
    ``capacity_bytes`` the dataset and the kept checkpoints; ``written_bytes_per_month`` and
    ``write_requests_per_month`` the saves of a month (16 MiB parts); ``clients`` the nodes that
    read; ``gpus`` the GPUs whose loaders keep reads in flight.
    """

    read_bytes_per_s: float
    read_iops: float
    file_opens_per_s: float
    request_bytes: float
    write_bytes_per_s: float
    need_bytes_per_s: float
    writes_overlap_reads: bool
    capacity_bytes: float
    dataset_bytes: float
    written_bytes_per_month: float
    write_requests_per_month: float
    clients: int
    gpus: int
    num_workers: int
    examples_per_file: int
    latency_budget_s: float
    fits_in_ram: bool
    host_ram_bytes: float
    site: str | None = None
    workstation: bool = False
    server: str = ""
    server_block_bytes_per_s: float = math.inf
    allow_other_site: bool = False
    site_link_bytes_per_s: float | None = None
    protection: str | None = None
    fill_limit: float = 0.8
    amortization_months: int = 36
    # The bursts a store is bought for and timed on (issue 28; calc.checkpoint "bursts"). A
    # cluster's demand leaves them at their defaults: no restore, no first epoch timed.
    design_point: str = "steady reads"
    """Which rate sized the bandwidth: steady reads, save drain, sync save or restore read."""
    restore_bytes: float = 0.0
    restore_bytes_per_s: float = 0.0
    """Read rate of a restart within the restore budget (``restore_read_bytes_per_s``): its own sizing axis."""
    restore_budget_s: float = math.inf
    restore_shard_bytes: float = 0.0
    restore_ranks: float = 1.0
    per_rank_bytes_per_s: float = math.inf
    load_bytes_per_s: float = math.inf
    failures_per_month: float = 0.0
    checkpoint_bytes: float = 0.0
    saves_per_month: float = 0.0
    interval_s: float = 0.0
    host_copy_s: float = 0.0
    save_async: bool = False
    first_epoch_bytes: float = 0.0
    """Bytes the first epoch reads when the page cache serves every later one (0: the steady reads carry it)."""
    steady_epoch_s: float = 0.0
    gpu_price_per_hour: float = math.nan
    reads_in_flight_per_gpu: int = 0
    """Reads each GPU's loader keeps in flight, as the plan counts them: reader_concurrency with an
    asynchronous loader, else num_workers (0: num_workers)."""
    power_usd_per_kwh: float = st.USD_PER_KWH
    own_storage: tuple[str, ...] = ()
    """Storage options of your own (YAML paths) ranked beside the catalog: the job's own storage."""
    support_share: float = st.SUPPORT_SHARE_PER_YEAR

    @property
    def read_bytes_per_year(self) -> float:
        """Steady reads in a year [bytes]: the read rate x 365.25 days (a drive's rated workload counts them)."""
        return self.read_bytes_per_s * DAYS_PER_YEAR * 86400.0

    @property
    def saving(self) -> bool:
        """The job writes checkpoints: the store must outlive a node and hold them."""
        return self.write_bytes_per_s > 0

    @property
    def shared(self) -> bool:
        """Several nodes, or checkpoints (which must outlive a node), need a store every node reaches."""
        return self.clients > 1 or self.saving

    @property
    def written_bytes_per_year(self) -> float:
        """Checkpoint bytes written in a year [bytes]: a month's x 365.25 / 30."""
        return self.written_bytes_per_month * DAYS_PER_YEAR / DAYS_PER_MONTH


def checkpoint_writes_per_month(p: Plan) -> tuple[float, float]:
    """Checkpoint bytes written in a month of training [bytes] and write requests [count].

        bytes    = checkpoint size x MONTH_S / interval x jobs
        requests = saves x writing ranks x ceil(bytes per rank / part size) x jobs

    Each rank uploads its shard in parts of ``st.WRITE_REQUEST_BYTES`` (16 MiB multipart parts),
    each part one PUT; an object store bills per request, a file system per GB.
    """
    v = p.values
    interval = float(v["checkpoint_interval_used_s"])  # the resolved interval: given or Young-Daly
    if not (math.isfinite(interval) and interval > 0):
        return 0.0, 0.0
    saves = MONTH_S / interval
    parts = math.ceil(v["checkpoint_rank_bytes"] / st.WRITE_REQUEST_BYTES - 1e-9)
    jobs = p.inputs.get("jobs", 1.0)  # every job saves its own
    return saves * v["checkpoint_bytes"] * jobs, saves * v["checkpoint_writing_ranks"] * parts * jobs


def policy(sc: Scenario) -> dict[str, Any]:
    """The Demand fields a scenario's site and purchase inputs set (the same for a job and for a
    cluster, whose first job's scenario carries the shared inputs): where it runs, its server, the
    link to another site, protection, fill limit, amortisation, and its own storage file, if any."""
    srv = catalog.server(sc.server) if sc.server else None
    link = sc.site_link_bytes_per_s
    return {
        "own_storage": (sc.storage,) if sc.storage and st.is_own(sc.storage) else (),
        "site": job_site(sc),
        "server": srv.name if srv is not None else "",
        "server_block_bytes_per_s": srv.block_bytes_per_s if srv is not None else math.inf,
        "allow_other_site": sc.allow_other_site,
        "site_link_bytes_per_s": parse(link, "bytes_per_s", "site_link_bytes_per_s") if link else None,
        "protection": sc.protection,
        "fill_limit": sc.fill_limit,
        "amortization_months": sc.amortization_months,
    }


def plan_demand(p: Plan, reads: bool = True) -> Demand:
    """The demand of one job's plan: its reads (none with ``reads=False``: a store behind a local
    cache that serves every read holds the dataset and takes the checkpoints), its checkpoint
    writes as the plan resolved them (mode, interval), the dataset and kept checkpoints."""
    sc, v = p.scenario, p.values
    # The design point: a save writes at its burst (an async drain within drain_target, a sync save
    # within its stall budget), beside the reads (async) or instead of them (sync); a restart reads
    # every shard at once within the restore budget, while nothing else runs.
    write_bw = v["checkpoint_save_burst_bytes_per_s"]
    is_async = p.inputs["checkpoint_async"] > 0
    read_bw = v["read_bytes_per_s"] if reads else 0.0
    with_save = float(ck.save_with_reads(read_bw, write_bw, is_async))  # the plan's storage_need_bytes_per_s
    saving = write_bw > 0
    restore_bw = v["restore_read_bytes_per_s"] if saving else 0.0
    need = max(with_save, restore_bw)
    point = (
        "restore read"
        if restore_bw > with_save
        else ("save drain" if is_async else "sync save")
        if saving and write_bw >= read_bw
        else "steady reads"
    )
    written, puts = checkpoint_writes_per_month(p)
    interval = float(v["checkpoint_interval_used_s"])
    price = sc.gpu_price_per_hour if sc.gpu_price_per_hour is not None else catalog.gpu(sc.gpu).price_per_hour
    # Read once per start when the page cache serves the steady state: the first epoch is then a burst.
    once = reads and v["read_bytes_per_s"] == 0 and v["page_cache_hit"] >= 1 and v["dataset_bytes"] > 0
    return Demand(
        read_bytes_per_s=read_bw,
        read_iops=v["read_iops"] if reads else 0.0,
        file_opens_per_s=v["file_opens_per_s"] if reads else 0.0,
        request_bytes=v["request_bytes"],
        write_bytes_per_s=write_bw,
        need_bytes_per_s=need,
        # The resolved mode: auto is async for sharded state.
        writes_overlap_reads=p.inputs["checkpoint_async"] > 0,
        capacity_bytes=v["dataset_bytes"] + (v["checkpoint_capacity_bytes"] if write_bw > 0 else 0.0),
        dataset_bytes=v["dataset_bytes"],
        written_bytes_per_month=written,
        write_requests_per_month=puts,
        clients=int(v["clients"]),
        gpus=sc.gpus_per_job * sc.jobs,
        num_workers=sc.num_workers,
        examples_per_file=sc.examples_per_file,
        latency_budget_s=v["latency_budget_s"],
        fits_in_ram=bool(v["fits_in_ram"]),
        host_ram_bytes=p.inputs["host_ram_bytes"],
        workstation=workstation(sc),
        **policy(sc),
        design_point=point,
        restore_bytes=v["checkpoint_restore_bytes"] if saving else 0.0,
        restore_bytes_per_s=float(restore_bw),
        restore_budget_s=float(v["restore_budget_s"]),
        restore_shard_bytes=v["checkpoint_rank_bytes"],
        restore_ranks=float(sc.gpus_per_job),  # one job restarts at a time
        per_rank_bytes_per_s=float(v["checkpoint_rank_read_bytes_per_s"]),
        load_bytes_per_s=p.inputs["checkpoint_load_bytes_per_s"],
        failures_per_month=float(v["failures_per_month"]) if saving else 0.0,
        checkpoint_bytes=v["checkpoint_bytes"] if saving else 0.0,
        saves_per_month=MONTH_S / interval if saving and interval > 0 else 0.0,
        interval_s=interval,
        host_copy_s=float(v["checkpoint_host_copy_s"]),
        save_async=is_async,
        first_epoch_bytes=v["dataset_bytes"] if once else 0.0,
        steady_epoch_s=float(v["epoch_time_s"]) if once else 0.0,
        gpu_price_per_hour=float(price) if price is not None else math.nan,
        reads_in_flight_per_gpu=int(p.inputs["reader_concurrency"] if p.inputs["loader"] > 0 else sc.num_workers),
        power_usd_per_kwh=sc.power_usd_per_kwh,
        support_share=sc.support_share,
    )


@dataclass(frozen=True)
class Sized:
    """One option sized for a demand: the units and everything the later steps read."""

    loads: Mapping[str, float]
    units: float
    perf_units: float
    limiting: str
    n_node: int = 1
    scheme: str = ""
    amp: float = 1.0
    wear: float = math.inf
    housing: tuple[tuple[st.Enclosure, int], ...] = ()
    networked: bool = False
    capacity_bytes: float = math.inf
    random_reads: float = 0.0
    workers: int = 0
    service_s: float = 0.0

    @property
    def bought(self) -> bool:
        return self.scheme != ""


def reads_in_flight(reads_per_s_per_gpu: float, service_s: float) -> int:
    """Reads each GPU's loader must keep in flight [count]: reads/s x time a read takes, rounded up.

    Little's law (L = lambda W): a loader whose workers each wait for one read at a time needs this
    many workers per GPU to sustain ``reads_per_s_per_gpu`` at ``service_s`` a read.
    """
    return math.ceil(reads_per_s_per_gpu * service_s - 1e-9)


def gpu_price_per_hour(gpu: str, given: float | None) -> tuple[float, str]:
    """What a GPU-hour costs [USD/h] and where the figure comes from: the scenario's
    ``gpu_price_per_hour`` when given, else the GPU preset's (presets/gpus.yaml, its source)."""
    if given is not None:
        return float(given), "scenario"
    g = catalog.gpu(gpu)
    return g.price_per_hour, g.price_source


def idle_gpu_hours_per_month(gpus: float, utilization: float) -> float:
    """GPU-hours a month the GPUs wait for data [h]: gpus x (1 - utilization) x HOURS_PER_MONTH.

    Idle GPU time is a cost: x ``gpu_price_per_hour`` it is the dollars a bottleneck wastes.
    """
    return gpus * (1 - utilization) * HOURS_PER_MONTH


# ------------------------------------------------------------------ step 1: size per axis


def bought_drives(o: st.StorageOption) -> bool:
    """Drives bought one by one (and protected as an array), not a rented or server-sized store."""
    return o.kind == "local" and math.isfinite(o.purchase_price)


def volume_per_node(o: st.StorageOption, d: Demand) -> bool:
    """A block volume attaches to fewer nodes than read: one volume per node, each a full copy."""
    return o.kind == "cloud-block" and d.clients > o.attach_limit


def size_axes(o: st.StorageOption, d: Demand, write_factor: float = 1.0) -> tuple[dict[str, float], int, str]:
    """Fractional units busy on each axis, the whole units and the limiting axis.

    A per-node volume carries one node's share; bought drives hold the bytes below the fill limit
    and must last the amortisation under the checkpoint writes (x ``write_factor``, the protection's
    write amplification); a bought server's drives (nfs-*) wear out too.
    """
    k = d.clients if volume_per_node(o, d) else 1
    loads = st.unit_loads(
        o,
        d.read_bytes_per_s / k,
        d.read_iops / k,
        d.request_bytes,
        d.capacity_bytes,
        d.file_opens_per_s / k,
        d.write_bytes_per_s * write_factor / k,
        writes_overlap_reads=d.writes_overlap_reads,
    )
    loads["restore"] = restore_load(o, d) / k
    if bought_drives(o) or o.server_drives:
        # Bought drives, and an nfs-* server's drives (protected like them), hold bytes below the fill limit.
        loads["capacity"] = d.capacity_bytes / unit_holds_bytes(o, d)
    srv_amp = server_amp(o, d) if o.server_drives else 1.0
    # Ratings over the drive's own period: an SSD's rated writes a year, an HDD's workload a year.
    loads["endurance"] = st.drives_for_endurance(
        o.endurance_bytes, d.written_bytes_per_year * srv_amp, o.endurance_years
    )
    if math.isfinite(o.workload_bytes_per_year):
        raw = st.drives_for_workload(
            d.read_bytes_per_year, d.written_bytes_per_year, write_factor, o.workload_bytes_per_year
        )
        loads["workload"] = raw / write_factor  # in data drives, as the other axes of bought drives
    n, limiting = st.size(loads)
    return loads, n, limiting


def restore_load(o: st.StorageOption, d: Demand) -> float:
    """Units a restart keeps busy [units]: the restore read within its budget at one unit's read
    rate, and on an object store its GETs (``ck.restore_requests``) within the budget at one
    prefix's rate, whichever is more (calc.checkpoint.restore_on_store_s, solved for units)."""
    if d.restore_bytes_per_s <= 0:
        return 0.0
    load = d.restore_bytes_per_s / o.read_bytes_per_s
    if o.counts_requests and math.isfinite(o.iops) and d.restore_budget_s > 0:
        gets = ck.restore_requests(d.restore_shard_bytes, d.restore_ranks, st.WRITE_REQUEST_BYTES)
        load = max(load, float(gets) / d.restore_budget_s / o.iops)
    return load


def unit_holds_bytes(o: st.StorageOption, d: Demand) -> float:
    """Bytes one working unit holds for data [bytes]: a bought drive below the fill limit, an nfs-*
    server's protected drives below it (``server_array``), any other option its capacity (a
    rented store is billed and grown by its provider; a volume is provisioned at the size asked)."""
    if o.server_drives:
        return server_array(o, d)[1]
    if bought_drives(o):
        return o.capacity_bytes * d.fill_limit
    return o.capacity_bytes


def server_amp(o: st.StorageOption, d: Demand) -> float:
    """Raw bytes an nfs-* server's drives write per byte stored (its protection's amplification)."""
    return o.server_drives / st.usable_drives(o.server_drives, server_array(o, d)[0]) if o.server_drives else 1.0


def server_array(o: st.StorageOption, d: Demand) -> tuple[str, float]:
    """An nfs-* server's drive protection (the scenario's, else the default for its drives) and the
    bytes one server holds for data below the fill limit [bytes]."""
    drive = st.option(o.server_drive)
    scheme = d.protection or st.default_protection(o.server_drives)
    return scheme, st.server_usable_bytes(o.server_drives, drive.capacity_bytes, scheme, d.fill_limit)


# ------------------------------------------------------------------ step 2: protect


def protect(o: st.StorageOption, d: Demand) -> tuple[dict[str, float], int, str, str, float]:
    """Bought drives: the data drives, the scheme (the scenario's, else the default for that
    many) and its write amplification; re-sized once with the amplified checkpoint writes.

    Returns loads, data drives, limiting axis, scheme, amplification (drives / data drives).
    """
    loads, n_data, limiting = size_axes(o, d)
    scheme = d.protection or st.default_protection(n_data)
    amp = st.protected_drives(n_data, scheme) / n_data
    if amp > 1 and d.write_bytes_per_s > 0:
        loads, n_data, limiting = size_axes(o, d, amp)
        scheme = d.protection or st.default_protection(n_data)
        amp = st.protected_drives(n_data, scheme) / n_data
    return loads, n_data, limiting, scheme, amp


# ------------------------------------------------------------------ step 3: enclose


def enclose(o: st.StorageOption, d: Demand, drives: int) -> tuple[tuple[tuple[st.Enclosure, int], ...], bool]:
    """The enclosures that hold ``drives`` (their links carrying reads and writes) and whether they
    are servers on the network (shared by every node, like nfs-*)."""
    held = st.house(o, drives, d.need_bytes_per_s, shared=d.shared)
    return held, bool(held) and all(x.attach == "network" for x, _ in held)


def size_option(o: st.StorageOption, d: Demand) -> Sized:
    """Steps 1 to 3 for one option: units per axis, protection and housing; supply and capacity."""
    if o.kind == "ram":
        workers = reads_in_flight(d.read_iops / d.gpus, o.service_time_s(d.request_bytes))
        return Sized(
            loads={"bandwidth": 0.0},
            units=float(d.clients),
            perf_units=float(d.clients),
            limiting="RAM",
            workers=workers,
            service_s=o.service_time_s(d.request_bytes),
            random_reads=st.random_reads(o, d.read_iops, d.file_opens_per_s),
        )
    scheme, amp, wear, networked = "", 1.0, math.inf, False
    housing: tuple[tuple[st.Enclosure, int], ...] = ()
    if bought_drives(o):
        loads, n_data, limiting, scheme, amp = protect(o, d)
        n = st.protected_drives(n_data, scheme)
        housing, networked = enclose(o, d, n)
        wear = st.wear_out_years(o.endurance_bytes, n, d.written_bytes_per_year, amp)
        perf = float(n_data)
    else:
        loads, n, limiting = size_axes(o, d)
        if o.size_steps:
            # Sold in steps (FSx: 1.2, 2.4, then +2.4 TiB): the next orderable size; it adds throughput.
            n = st.orderable_units(st.units_needed(loads), o.size_steps, o.size_increment)  # type: ignore[assignment]
        perf = float(n)
    if limiting == "bandwidth" and d.write_bytes_per_s / o.write_bytes_per_s > d.read_bytes_per_s / o.read_bytes_per_s:
        limiting = "checkpoint writes"
    k = d.clients if volume_per_node(o, d) else 1
    units = max(float(n) * k, 1.0)
    if o.unit == "volume":
        cap = d.capacity_bytes * k
    elif scheme:
        cap = st.usable_drives(int(units), scheme) * o.capacity_bytes
    elif o.server_drives:
        cap = units * server_array(o, d)[1] / d.fill_limit
    else:
        cap = units * o.capacity_bytes
    service = o.service_time_s(d.request_bytes)
    return Sized(
        loads=loads,
        units=units,
        perf_units=max(perf, 1.0) * k,
        limiting=limiting,
        n_node=k,
        scheme=scheme,
        amp=amp,
        wear=wear,
        housing=housing,
        networked=networked,
        capacity_bytes=cap,
        random_reads=st.random_reads(o, d.read_iops, d.file_opens_per_s),
        workers=reads_in_flight(d.read_iops / d.gpus, service),
        service_s=service,
    )


def delivered(o: st.StorageOption, d: Demand, s: Sized) -> st.Supply:
    """What the sized option delivers to the job's nodes at its working units: ``calc.storage.supply``,
    the plan's own supply (units x per-unit rate, capped per client; reads/s at the read size,
    capped per system and by the bandwidth), so a row and the plan on that store agree."""
    return st.supply(o, s.perf_units, d.request_bytes, d.clients)


def sized_iops(o: st.StorageOption, d: Demand, s: Sized) -> float:
    """Random reads/s the sized option serves (``delivered``); node RAM: its system cap alone."""
    return delivered(o, d, s).iops if o.kind != "ram" else min(math.inf, o.aggregate_iops)


def bandwidth_headroom(o: st.StorageOption, d: Demand, s: Sized) -> float:
    """Bandwidth supply / need [ratio]: RAM copies on every node, else units over the busy share."""
    if o.kind == "ram":
        return o.read_bytes_per_s * d.clients / d.need_bytes_per_s if d.need_bytes_per_s > 0 else math.inf
    busy = s.loads["bandwidth"]
    return s.perf_units / s.n_node / busy if busy > 0 else math.inf


# ------------------------------------------------------------------ step 4: rule out, with a reason


@dataclass(frozen=True)
class Rule:
    """A reason an option cannot be bought: ``check`` returns the sentence ("" when it passes);
    ``limiting`` is what the table names as the limit when it fails; ``scales_with_gpus`` says
    whether more GPUs of the job can make it fail (a rate or a node count that grows with them:
    ``calc.sizing.max_gpus`` reads it), or whether it only says if the option may be bought at all
    (its site, its durability, its drive class)."""

    name: str
    limiting: str
    check: Callable[[st.StorageOption, Demand, Sized], str]
    scales_with_gpus: bool


def _bps(x: float) -> str:
    return fmt(x, "bytes_per_s")


def _ram_holds(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if o.kind != "ram" or d.fits_in_ram:
        return ""
    return (
        f"dataset {fmt(d.dataset_bytes, 'bytes')} does not fit in free RAM "
        f"({fmt(d.host_ram_bytes, 'bytes', binary=True)} per node less loader RAM)"
    )


def _ram_copies(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if o.kind != "ram" or d.need_bytes_per_s <= o.read_bytes_per_s * d.clients:
        return ""
    return (
        f"each node must move {_bps(d.need_bytes_per_s / d.clients)}; "
        f"its memory copies run at {_bps(o.read_bytes_per_s)}"
    )


def _system_size(o: st.StorageOption, d: Demand, s: Sized) -> str:
    most = min(o.max_units, MAX_UNITS)
    n = s.units / s.n_node
    if o.kind == "ram" or n <= most:
        return ""
    return f"needs {n:,.0f} {o.unit}s on {s.limiting}; one system allows {most:,.0f}"


def _enclosure_link(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if not s.scheme or s.housing or not any(x.attach == "network" or not d.shared for x in o.enclosures):
        return ""
    fastest = max(x.link_bytes_per_s for x in o.enclosures)
    n = int(s.units)
    return (
        f"each of {n} drives must move {_bps(d.need_bytes_per_s / n)}, more than one enclosure's "
        f"link carries ({_bps(fastest)} at most)"
    )


def _client_cap(o: st.StorageOption, d: Demand, s: Sized) -> str:
    each = d.need_bytes_per_s / d.clients
    if o.kind == "ram" or each <= o.client_bytes_per_s:
        return ""
    return f"each of {d.clients} node(s) must read {_bps(each)}; the per-client cap is {_bps(o.client_bytes_per_s)}"


def _instance_cap(o: st.StorageOption, d: Demand, s: Sized) -> str:
    each = d.need_bytes_per_s / d.clients
    if o.kind != "cloud-block" or not d.server or each <= d.server_block_bytes_per_s:
        return ""
    return (
        f"each {d.server} reaches block volumes at {_bps(d.server_block_bytes_per_s)}; "
        f"the job needs {_bps(each)} per node"
    )


def _system_iops(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if o.kind == "ram":
        return ""
    sup = delivered(o, d, s)
    if sup.iops >= s.random_reads:
        return ""
    if sup.iops >= o.aggregate_iops:
        return f"the system-wide cap of {fmt(o.aggregate_iops, 'count_per_s', 'reads/s')} is below the need"
    # The reads/s that fit through the bandwidth the nodes pull (supply_iops' third bound).
    return (
        f"{fmt(sup.iops, 'count_per_s', 'reads/s')} of {fmt(d.request_bytes, 'bytes', binary=True)} fit through the "
        f"{_bps(sup.bytes_per_s)} its nodes read; the job needs {fmt(s.random_reads, 'count_per_s', 'reads/s')}"
    )


def metadata_ops_per_s(o: st.StorageOption, d: Demand) -> float:
    """Metadata operations/s the file opens cost on this option's protocol [1/s]."""
    return d.file_opens_per_s * dm.METADATA_OPS_PER_OPEN.get(o.protocol, 0.0)


def _metadata(o: st.StorageOption, d: Demand, s: Sized) -> str:
    meta = metadata_ops_per_s(o, d)
    if meta <= o.metadata_ops_at(s.units):
        return ""
    # A service that scales by size was sized for the opens (unit_loads): short only past its largest.
    cap = o.metadata_ops_at(math.inf if o.metadata_scaling else s.units)
    return (
        f"{fmt(meta, 'count_per_s', 'metadata ops/s')} ({o.protocol} file opens) exceed its "
        f"{fmt(cap, 'count_per_s', 'ops/s')} metadata limit: pack into shards"
    )


def _one_node(o: st.StorageOption, d: Demand, s: Sized) -> str:
    # A drive in one node cannot feed the others: designs() sizes drives per node instead.
    if o.kind != "local" or d.clients <= 1 or s.networked:
        return ""
    return f"local drives serve only their own node; {d.clients} nodes read (see the per-node local cache design)"


def _ephemeral(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if o.kind != "local" or o.site not in st.CLOUDS:
        return ""
    return "instance storage is lost when the instance stops: a cache (the server NVMe design), not the store"


def _durability(o: st.StorageOption, d: Demand, s: Sized) -> str:
    # A checkpoint must survive the loss of a node (issue 19): node RAM or node-local drives die
    # with it, so they are a first tier at most, never the checkpoint store.
    if o.kind not in ("local", "ram") or not d.saving or s.networked:
        return ""
    return "checkpoints on node-local storage die with the node: the checkpoint store must be shared"


def _per_node_checkpoints(o: st.StorageOption, d: Demand, s: Sized) -> str:
    # A volume per node holds each node's own checkpoint shards: no node can restore another's.
    if not volume_per_node(o, d) or not d.saving:
        return ""
    return (
        f"each volume attaches to {o.attach_limit:g} node: one per node, so checkpoints written to them are not "
        "shared and a replaced node cannot restore"
    )


def _scratch(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if not o.scratch or not d.saving:
        return ""
    return "a scratch file system (no replication; data is lost with a server): it cannot hold checkpoints"


def _consumer_drive(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if o.drive_class != "consumer" or d.workstation:
        return ""
    return (
        "a consumer drive (no power-loss protection, rated for a fraction of a data-centre drive's writes): "
        "data-centre servers and clouds take data-centre parts"
    )


def other_site(o: st.StorageOption, d: Demand) -> bool:
    """The option is at another site than the job (node RAM is at every site)."""
    return d.site is not None and o.site not in ("any", d.site)


def _at_other_site(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if not other_site(o, d) or d.allow_other_site:
        return ""
    return f"at another site ({o.site}) than the job ({d.site}); {ask('allow_other_site')} to consider it"


def _site_link(o: st.StorageOption, d: Demand, s: Sized) -> str:
    if not other_site(o, d):
        return ""
    link = d.site_link_bytes_per_s
    if link is None:
        return f"at another site ({o.site}): {ask('site_link_bytes_per_s')}, the link between the sites"
    if d.need_bytes_per_s > link:
        return f"at another site ({o.site}): the link carries {_bps(link)} of the {_bps(d.need_bytes_per_s)} needed"
    return ""


RULES: list[Rule] = [
    Rule("dataset fits in RAM", "RAM", _ram_holds, scales_with_gpus=False),
    Rule("RAM copy rate", "RAM", _ram_copies, scales_with_gpus=True),
    Rule("per-client cap", "per-client cap", _client_cap, scales_with_gpus=True),
    Rule("system size", "system size", _system_size, scales_with_gpus=True),
    Rule("enclosure link", "enclosure link", _enclosure_link, scales_with_gpus=True),
    Rule("per-instance cap", "per-instance cap", _instance_cap, scales_with_gpus=True),
    Rule("system IOPS", "system size", _system_iops, scales_with_gpus=True),
    Rule("metadata", "metadata", _metadata, scales_with_gpus=True),
    Rule("one node", "one node", _one_node, scales_with_gpus=True),
    Rule("ephemeral", "ephemeral", _ephemeral, scales_with_gpus=False),
    Rule("durability", "durability", _durability, scales_with_gpus=False),
    Rule("scratch", "scratch", _scratch, scales_with_gpus=False),
    Rule("per-node checkpoints", "attachment", _per_node_checkpoints, scales_with_gpus=True),
    Rule("drive class", "drive class", _consumer_drive, scales_with_gpus=False),
    Rule("site", "site", _at_other_site, scales_with_gpus=False),
    Rule("site link", "site link", _site_link, scales_with_gpus=True),
]
"""Why an option cannot be bought, first failing rule first: its sentence is ``why_not``, its
label ``limiting``."""


def rule_out(o: st.StorageOption, d: Demand, s: Sized) -> tuple[str, str]:
    """The first rule the option fails: (reason, limiting label); ("", the sized axis) when none."""
    for r in RULES:
        why = r.check(o, d, s)
        if why:
            return why, r.limiting
    return "", s.limiting


# ------------------------------------------------------------------ step 5: caveats


def _ram_fits(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if o.kind != "ram" or d.dataset_bytes <= 0 or _ram_holds(o, d, s) or _ram_copies(o, d, s):
        return []  # no dataset (a checkpoint benchmark): nothing for the page cache to hold
    return [
        "the dataset fits in free RAM: after the first epoch the page cache serves it; "
        "tmpfs defaults to half of RAM and competes with loader workers; every node holds a copy"
    ]


def in_flight(d: Demand) -> int:
    """Reads in flight per GPU the loader keeps: the plan's rule (reader_concurrency when asynchronous)."""
    return d.reads_in_flight_per_gpu or d.num_workers


def _workers(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if s.workers <= max(in_flight(d), 1):
        return []
    return [
        f"at {fmt(s.service_s, 'seconds')} per read, each GPU needs {s.workers} reads in flight "
        f"(Little's law); it has {d.num_workers} worker(s): {ask('num_workers')} higher or read asynchronously"
    ]


def _slow_read(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if o.latency_s <= d.latency_budget_s:
        return []
    return [f"one read ({fmt(o.latency_s, 'seconds')}) takes longer than a step: prefetching is essential"]


def _burst(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    return [o.burst] if o.burst else []


def _small_files(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if (
        d.examples_per_file > 1
        or d.file_opens_per_s <= 1000
        or o.kind not in ("nfs", "cloud-file", "parallel", "object")
    ):
        return []
    return [
        f"{fmt(d.file_opens_per_s, 'count_per_s', 'file opens/s')}: small files load metadata "
        "servers and request limits; pack into shards"
    ]


def _egress(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if not other_site(o, d):
        return []
    return [
        f"read over the link from {o.site}: egress ${st.EGRESS_USD_PER_GB[o.site]:g}/GB out of {o.site}"
        + ("; on-prem internet transit is not priced" if "on-prem" in (o.site, d.site) else "")
    ]


def multi_attach(o: st.StorageOption, clients: int) -> str:
    """``multi-attached to 5 nodes (at most 16): needs a cluster-aware file system (GFS2, OCFS2)``,
    or "" when ``o`` is not one block volume shared by ``clients`` nodes: the one sentence the
    caveats and the card say (issue 38)."""
    if o.kind != "cloud-block" or not 1 < clients <= o.attach_limit:
        return ""
    fs = ": needs a cluster-aware file system (GFS2, OCFS2)" if o.cluster_fs else ""
    return f"multi-attached to {clients} nodes (at most {o.attach_limit:g}){fs}"


def _attach(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if shared := multi_attach(o, d.clients):
        return [shared]
    if volume_per_node(o, d):
        return [
            f"a {o.unit} attaches to {o.attach_limit:g} node: one per node ({d.clients}), each holding a full copy "
            "of the dataset; checkpoints written to them are not shared"
        ]
    return []


def _n(count: float, noun: str) -> str:
    """``1 drive``, ``3 drives``, ``1,024 GPUs``, ``4.8 TiB``: a count with its noun, singular or plural
    (a unit of bytes, ``TiB``, is never plural: "161 TiBs" read as jargon, issue 39)."""
    unit = noun.endswith("B")
    if not float(count).is_integer():
        return f"{float(count):,.4g} {noun}" + ("" if noun.endswith("s") or unit else "s")
    n = int(count)
    return f"{n:,} {noun}" + ("" if n == 1 or noun.endswith("s") or unit else "es" if noun.endswith("x") else "s")


def _array(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if not s.scheme:
        return []
    cap = s.capacity_bytes
    out = [
        f"{_n(s.units, 'drive')} in {s.scheme} ({st.usable_drives(int(s.units), s.scheme):g} drives' worth usable, "
        f"{fmt(cap, 'bytes')} = {fmt(cap, 'bytes', binary=True)}), filled to at most {d.fill_limit:.0%}"
    ]
    if s.housing:
        held, unpriced = st.describe_housing(s.housing)
        out.append(f"held in {held}" + (f"; not priced: {unpriced}" if unpriced else ""))
        if s.networked and d.shared:
            out.append(
                "a storage server on the network: every node mounts it over NFS (its NFS metadata rate is not "
                "modelled), and checkpoints written to it outlive a node"
            )
        for x, _ in s.housing:
            fill = st.usable_bays(x.bays, x.link_bytes_per_s, int(s.units), d.need_bytes_per_s)
            if fill < x.bays:
                out.append(
                    f"at most {fill} of a {x.label}'s {x.bays} bays are filled: its link "
                    f"({_bps(x.link_bytes_per_s)}) carries {fill} drives' share of {_bps(d.need_bytes_per_s)}"
                )
    out += _part_market(s)
    if s.wear < d.amortization_months / 12:
        out.append(
            f"checkpoint writes wear the drives out in {s.wear:.1f} years, before the "
            f"{d.amortization_months}-month amortisation"
        )
    return out


def _part_market(s: Sized) -> list[str]:
    """New vs used: the answer buys new parts with the maker's warranty where a new price was found;
    a used-market figure is only shown as the alternative, and parts with no new price are named."""
    parts = {p.name: p for x, _ in s.housing for p, _ in x.parts}
    out = []
    new = sorted(n for n, p in parts.items() if p.condition == "new")
    if new:
        out.append(f"bought new with the maker's warranty at list or retail price: {', '.join(new)}")
    alt = [p for p in parts.values() if p.condition == "new" and math.isfinite(p.used_price_usd)]
    if alt:
        saving = sum(
            n * k * (p.price_usd - p.used_price_usd)
            for x, n in s.housing
            for p, k in x.parts
            if p.condition == "new" and math.isfinite(p.used_price_usd)
        )
        out.append(
            "used-market alternative (a seller's short warranty, not bought): "
            f"{', '.join(sorted(p.name for p in alt))} used would cost ${saving:,.0f} less"
        )
    used = sorted(n for n, p in parts.items() if p.condition == "used")
    if used:
        out.append(
            f"priced as used-market listings ({', '.join(used)}: a seller's short warranty); "
            "no public new list price was found for these, so new ones cost more than shown"
        )
    return out


def _server_drives_note(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if not o.server_drives:
        return []
    scheme, usable = server_array(o, d)
    data = st.usable_drives(o.server_drives, scheme)
    # the label says whether the composed server's chassis is new or a used listing (issue 28 item 4)
    return [
        f"each {o.unit} holds {o.server_drives} x {o.server_drive} in {scheme} ({data:g} drives' worth of data) "
        f"filled to at most {d.fill_limit:.0%}: {fmt(usable, 'bytes')} of data a {o.unit}",
        f"each {o.unit}: {o.label}",
    ]


def _power(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    # Bought on-prem storage with no stated watts: its electricity is not in the total, and that is said.
    if o.kind == "ram" or o.site != "on-prem" or not math.isfinite(o.purchase_price) or math.isfinite(o.watts):
        return []
    return [f"its power is not priced: the preset states no watts for a {o.unit} (add `watts` to price it)"]


def _network_parts(o: st.StorageOption, d: Demand, s: Sized) -> list[str]:
    if not o.network_parts:
        return []
    return [
        f"each {o.unit} connects through "
        + ", ".join(f"{k} x {p.name} (${k * p.price_usd:,.2f})" for p, k in o.network_parts)
    ]


CAVEATS: list[tuple[str, Callable[[st.StorageOption, Demand, Sized], list[str]]]] = [
    ("page cache", _ram_fits),
    ("reads in flight", _workers),
    ("slow read", _slow_read),
    ("burst credits", _burst),
    ("small files", _small_files),
    ("egress", _egress),
    ("attachment", _attach),
    ("drive array", _array),
    ("server drives", _server_drives_note),
    ("network parts", _network_parts),
    ("power", _power),
]
"""What a buyer should know about an option, in the order the table says it."""


def caveats(o: st.StorageOption, d: Demand, s: Sized) -> str:
    """Every caveat that applies, joined with ``; ``."""
    return "; ".join(text for _, make in CAVEATS for text in make(o, d, s))


# ------------------------------------------------------------------ step 6: price


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
    # Provisioned MB/s must carry checkpoint writes too; only reads are charged per GB read.
    throughput = read_bytes_per_s if provisioned_bytes_per_s is None else provisioned_bytes_per_s
    # io1/io2 count large I/O in 256 KiB units: the throughput is bought as IOPS (st.billed_iops).
    extra_iops = max(st.billed_iops(random_reads, throughput, o.throughput_io_bytes) - units * o.free_iops, 0.0)
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
    if o.monthly_fee > 0:
        parts.append(f"${o.monthly_fee:,.0f} a month flat")
    date = f" ({o.price_date})" if o.price_date else ""
    return "; ".join(parts) + date


def price(o: st.StorageOption, d: Demand, s: Sized) -> dict[str, float]:
    """The option's charges [USD]: a month's rent, reads, writes and egress, the purchase up front,
    and the monthly total (purchases over ``amortization_months``; NaN: no public price)."""
    cost = monthly_cost(
        o,
        s.units,
        d.capacity_bytes * s.n_node,
        d.read_bytes_per_s,
        d.read_iops,
        s.random_reads,
        d.clients,
        provisioned_bytes_per_s=d.need_bytes_per_s,
    )
    written = d.written_bytes_per_month
    writes = written / 1e9 * o.price_per_gb_write + d.write_requests_per_month / 1e6 * o.price_per_million_writes
    egress = 0.0
    if other_site(o, d):
        # Reads leave the store's site, checkpoint writes leave the job's: each through its price tiers.
        egress = st.egress_usd(d.read_bytes_per_s * MONTH_S / 1e9, st.EGRESS_TIERS[o.site]) + st.egress_usd(
            written / 1e9, st.EGRESS_TIERS[d.site or "on-prem"]
        )
    if o.kind == "ram":
        purchase = d.clients * o.purchase_price
    else:
        # The enclosures that hold bought drives; a networked server's switch port and cable.
        purchase = s.units * (o.purchase_price + st.parts_usd(o.network_parts)) + st.housing_usd(s.housing)
    power, support = running_usd(o, d, s, purchase)
    rent = (cost["storage"] + cost["performance"] if math.isfinite(cost["storage"]) else 0.0) + o.monthly_fee
    monthly = rent + cost["reads"] + writes + egress + power + support
    amortised = purchase / d.amortization_months if math.isfinite(purchase) else 0.0
    return {
        "rent": rent,
        "reads": cost["reads"],
        "writes": writes,
        "egress": egress,
        "power": power,
        "support": support,
        "purchase": purchase,
        "monthly": monthly,
        "total": monthly + amortised if o.priced else math.nan,
    }


def running_usd(o: st.StorageOption, d: Demand, s: Sized, purchase_usd: float) -> tuple[float, float]:
    """What bought storage costs to run [USD a month]: power (units' and enclosures' watts at
    ``power_usd_per_kwh``) and hardware support (``support_share`` of the purchase a year).
    Node RAM is part of the GPU node (its power and support are the node's); rented storage has none."""
    if o.kind == "ram" or o.site != "on-prem" or not math.isfinite(purchase_usd) or purchase_usd <= 0:
        return 0.0, 0.0
    unit_w = o.watts if math.isfinite(o.watts) else 0.0
    housing_w = sum(x.watts * k for x, k in s.housing if math.isfinite(x.watts))
    watts = s.units * unit_w + housing_w
    return st.power_usd_per_month(watts, d.power_usd_per_kwh), st.support_usd_per_month(purchase_usd, d.support_share)


# ------------------------------------------------------------------ step 6b: GPU time on this store


def gpu_time(o: st.StorageOption, d: Demand, s: Sized) -> dict[str, float]:
    """What this option, at the units bought, costs in GPU time (calc.checkpoint "bursts").

    ``restore_s``: every rank loads its shard from it (its read rate at these units, the ranks'
    own rate, an object store's GET rate); ``save_stall_s``: the training stall of one save on it
    (sync: the write; async: the copy to host RAM and any drain longer than the interval);
    ``first_epoch_s``: the dataset read from it before the page cache serves the job (0 when the
    steady reads carry the epoch). ``lost_gpu_hours``: (restore + half an interval + the drain
    lag) x failures + stalls x saves + the first epoch's excess over the GPUs' own pace once a
    month, x GPUs [GPU-h a month]: goodput's waste on this store, plus the first epoch.
    """
    if o.kind == "ram":
        return {"restore_s": 0.0, "save_stall_s": 0.0, "first_epoch_s": d.steady_epoch_s, "lost_gpu_hours": 0.0}
    sup = delivered(o, d, s)
    cap = math.inf
    provisioned = max(d.need_bytes_per_s, s.units * o.free_bytes_per_s)
    if (o.price_per_mbps_month > 0 or math.isfinite(o.throughput_io_bytes)) and provisioned > 0:
        # Throughput bought by the MB/s (or as IOPS): the volume runs at what is provisioned, the design
        # point or its free baseline, not at its maximum (price() bills the same figure).
        cap = provisioned
    read = min(sup.bytes_per_s, cap)
    write = min(sup.write_bytes_per_s, cap)
    restore = save = lag = 0.0
    if d.restore_bytes > 0:
        gets = (
            ck.restore_requests(d.restore_shard_bytes, d.restore_ranks, st.WRITE_REQUEST_BYTES)
            if o.counts_requests
            else 0.0
        )
        rate = s.units * o.iops if o.counts_requests and math.isfinite(o.iops) else math.inf
        restore = float(
            ck.restore_on_store_s(
                d.restore_bytes, read, d.restore_shard_bytes, d.per_rank_bytes_per_s, d.load_bytes_per_s, gets, rate
            )
        )
        write_s = float(ck.save_time_s(d.checkpoint_bytes, write, d.restore_shard_bytes, d.per_rank_bytes_per_s))
        save = float(ck.blocking_s(write_s, d.interval_s, d.host_copy_s, d.save_async))  # the plan's stall rule
        lag = write_s if d.save_async else 0.0  # the plan's lag: an async save is not durable until drained
    first = float(ck.first_epoch_s(d.first_epoch_bytes, read, d.steady_epoch_s)) if d.first_epoch_bytes > 0 else 0.0
    # Each failure costs what goodput counts (ck.lost_per_failure_s: restore + half an interval + lag),
    # so a row's GPU-hours and the plan's goodput on that store are one formula (issue 38).
    per_failure = float(ck.lost_per_failure_s(restore, d.interval_s, lag)) if d.failures_per_month > 0 else 0.0
    lost = float(
        ck.idle_gpu_hours(per_failure, d.gpus, d.failures_per_month)
        + ck.idle_gpu_hours(save, d.gpus, d.saves_per_month)
        + ck.idle_gpu_hours(max(first - d.steady_epoch_s, 0.0), d.gpus)
    )
    return {"restore_s": restore, "save_stall_s": save, "first_epoch_s": first, "lost_gpu_hours": lost}


# ------------------------------------------------------------------ step 7: the row and the rank

COLUMNS: dict[str, tuple[str, str]] = {
    "option": ("", "storage option (presets/storage.yaml)"),
    "label": ("", "its name in words"),
    "site": ("", "where it is: on-prem, aws, gcp, azure or any (node RAM)"),
    "feasible": ("", "it serves the demand and may be bought"),
    "units": ("count", "units bought or rented"),
    "unit": ("", "what a unit is: drive, TiB, volume, server, node"),
    "limiting": ("", "what sets the units, or the rule that rules it out"),
    "why_not": ("", "why it cannot serve or be bought (empty when feasible)"),
    "iops_headroom": ("ratio", "random reads served / needed"),
    "bandwidth_headroom": ("ratio", "bandwidth served / needed"),
    "capacity_headroom": ("ratio", "capacity provisioned / needed"),
    "latency_s": ("s", "time to first byte of one read"),
    "workers_per_gpu_needed": ("count", "reads in flight per GPU (Little's law)"),
    "monthly_usd": ("USD", "a month's charges without purchases"),
    "monthly_rent_usd": ("USD", "capacity and provisioned performance, a month"),
    "monthly_read_usd": ("USD", "per-GB reads and read requests, a month"),
    "monthly_write_usd": ("USD", "checkpoint write requests and per-GB writes, a month"),
    "monthly_egress_usd": ("USD", "data leaving a site, a month (AWS through its price tiers)"),
    "monthly_power_usd": ("USD", "electricity of bought storage at power_usd_per_kwh, a month"),
    "monthly_support_usd": ("USD", "hardware support of bought storage, support_share of the purchase a year / 12"),
    "purchase_usd": ("USD", "drives, enclosures and network parts bought up front"),
    "monthly_total_usd": ("USD", "every monthly charge plus purchases over amortization_months"),
    "capacity_bytes": ("B", "usable capacity, after protection"),
    "protection": ("", "the bought drives' protection scheme"),
    "wear_out_years": ("years", "years until checkpoint writes use up the drives' rated writes"),
    "price_note": ("", "where the price comes from"),
    "ready": ("", "the loader's workers keep enough reads in flight"),
    "caveats": ("", "what a buyer should know"),
    "verified": ("", "how its figures were checked"),
    "sized_for": (
        "",
        "the design point the bandwidth was bought for: steady reads, save drain, sync save, restore read",
    ),
    "drive_workload_bytes_per_year": ("B", "reads plus writes one drive moves a year (HDDs: against its rating)"),
    "restore_s": ("s", "every rank loads its shard from this option at the units bought"),
    "save_stall_s": ("s", "training stall of one save on it"),
    "first_epoch_s": (
        "s",
        "the first epoch read from it (the page cache serves the rest; 0: the steady reads carry it)",
    ),
    "lost_gpu_hours_per_month": (
        "GPU-h",
        "GPU time lost a month: per failure the restore, half an interval and the drain lag (goodput's rule), "
        "save stalls and the first epoch",
    ),
    "lost_gpu_usd_per_month": ("USD", "that GPU time at gpu_price_per_hour (NaN: no GPU price)"),
    "total_with_gpu_usd": ("USD", "monthly_total_usd + lost_gpu_usd_per_month: what the answer minimises"),
}
"""``recommend``'s columns, each with its unit and meaning (declared once; the table follows this order)."""


def whole(units: float) -> float:
    """A unit count as ordered: an int when whole, else the step size (FSx: 4.8 TiB)."""
    return int(units) if float(units).is_integer() else round(float(units), 4)


def option_row(o: st.StorageOption, d: Demand) -> dict[str, Any]:
    """One option sized for ``d``: every step, as a row of ``COLUMNS``."""
    s = size_option(o, d)
    why, limiting = rule_out(o, d, s)
    usd = price(o, d, s)
    rnd = s.random_reads
    t = gpu_time(o, d, s)
    lost_usd = t["lost_gpu_hours"] * d.gpu_price_per_hour
    drives = s.units if s.scheme else s.units * o.server_drives
    row = {
        "option": o.name,
        "label": o.label,
        "site": o.site,
        "feasible": not why,
        "units": whole(s.units),
        "unit": o.unit,
        "limiting": limiting,
        "why_not": why,
        "iops_headroom": sized_iops(o, d, s) / rnd if rnd > 0 else math.inf,
        "bandwidth_headroom": bandwidth_headroom(o, d, s),
        "capacity_headroom": s.capacity_bytes / d.capacity_bytes if d.capacity_bytes > 0 else math.inf,
        "latency_s": o.latency_s,
        "workers_per_gpu_needed": s.workers,
        "monthly_usd": usd["monthly"],
        "monthly_rent_usd": usd["rent"],
        "monthly_read_usd": usd["reads"],
        "monthly_write_usd": usd["writes"],
        "monthly_egress_usd": usd["egress"],
        "monthly_power_usd": usd["power"],
        "monthly_support_usd": usd["support"],
        "purchase_usd": usd["purchase"],
        "monthly_total_usd": usd["total"],
        "capacity_bytes": s.capacity_bytes,
        "protection": s.scheme,
        "wear_out_years": s.wear,
        "price_note": price_note(o, d.amortization_months),
        "ready": s.workers <= max(in_flight(d), 1),
        "caveats": caveats(o, d, s),
        "verified": o.verified,
        "sized_for": "restore read"
        if limiting == "restore read"
        else d.design_point
        if limiting in ("bandwidth", "checkpoint writes")
        else "",
        "drive_workload_bytes_per_year": st.workload_per_drive_bytes_per_year(
            d.read_bytes_per_year, d.written_bytes_per_year, s.amp if s.scheme else server_amp(o, d), drives
        )
        if drives
        else math.nan,
        "restore_s": t["restore_s"],
        "save_stall_s": t["save_stall_s"],
        "first_epoch_s": t["first_epoch_s"],
        "lost_gpu_hours_per_month": t["lost_gpu_hours"],
        "lost_gpu_usd_per_month": lost_usd,
        "total_with_gpu_usd": usd["total"] + lost_usd if math.isfinite(lost_usd) else usd["total"],
    }
    return {k: row[k] for k in COLUMNS}


def rank(d: Demand) -> pd.DataFrame:
    """Every storage option sized for ``d``, one row each (``COLUMNS``): feasible rows first, then
    by one comparable figure, every monthly charge + purchases spread over amortization_months;
    options with no public price come last, with the reason."""
    df = pd.DataFrame([option_row(o, d) for o in st.options(*d.own_storage).values()])
    df["units"] = pd.Series([whole(u) for u in df["units"]], dtype=object)
    # With a GPU price, the cheapest is storage plus the GPU time its restores, saves and first
    # epoch leave idle (total_with_gpu_usd); without one, storage alone.
    df["_cost"] = (df["total_with_gpu_usd"] if math.isfinite(d.gpu_price_per_hour) else df["monthly_total_usd"]).fillna(
        np.inf
    )
    df = df.sort_values(["feasible", "_cost", "units"], ascending=[False, True, True]).drop(columns="_cost")
    return df.reset_index(drop=True)
