"""The sizing engine (calc/engine.py), one step at a time, with hand-worked values.

Each test builds its own storage option (a preset's record with every figure the step reads set
in the test) and its own Demand, so the arithmetic in the comments uses only numbers written here,
not the presets (which the buyer's issue re-rates).
"""

from __future__ import annotations

import dataclasses
import math

import pytest

import calc
from calc import engine as en
from calc import storage as st


def drive(**kw: object) -> st.StorageOption:
    """A bought data-centre drive on-prem (its site is its name's prefix): 1 TB, 1 GB/s read and
    write, IOPS that never bind, $100, no wear."""
    base: dict[str, object] = {
        "name": "test-drive",
        "kind": "local",
        "unit": "drive",
        "capacity_bytes": 1e12,
        "read_bytes_per_s": 1e9,
        "write_bytes_per_s": 1e9,
        "iops": math.inf,
        "min_units": 1.0,
        "max_units": 24.0,
        "purchase_price": 100.0,
        "endurance_bytes": math.inf,
        "enclosures": (),
        "network_parts": (),
        "drive_class": "data-centre",
        "latency_s": 1e-4,
    }
    return dataclasses.replace(st.option("nvme-gen4"), **(base | kw))  # type: ignore[arg-type]


def demand(**kw: object) -> en.Demand:
    """One node reading 0.5 GB/s in 1 MiB reads, 100 GB stored, no checkpoints, on-prem."""
    base: dict[str, object] = {
        "read_bytes_per_s": 0.5e9,
        "read_iops": 0.5e9 / 2**20,
        "file_opens_per_s": 1.0,
        "request_bytes": 2.0**20,
        "write_bytes_per_s": 0.0,
        "need_bytes_per_s": 0.5e9,
        "writes_overlap_reads": False,
        "capacity_bytes": 100e9,
        "dataset_bytes": 100e9,
        "written_bytes_per_month": 0.0,
        "write_requests_per_month": 0.0,
        "clients": 1,
        "gpus": 8,
        "num_workers": 8,
        "examples_per_file": 1000,
        "latency_budget_s": 0.1,
        "fits_in_ram": False,
        "host_ram_bytes": 1e12,
        "site": "on-prem",
    }
    return en.Demand(**(base | kw))  # type: ignore[arg-type]


# ------------------------------------------------------------------ size per axis


def test_size_axes_capacity_below_the_fill_limit() -> None:
    # 3 TB on 1 TB drives filled to 80 %: 3 / 0.8 = 3.75 -> 4 drives, on capacity; reads 0.5 / 1 GB/s.
    loads, n, limiting = en.size_axes(drive(), demand(capacity_bytes=3e12))
    assert loads["capacity"] == pytest.approx(3.75)
    assert loads["bandwidth"] == pytest.approx(0.5)
    assert (n, limiting) == (4, "capacity")


def test_size_axes_sync_writes_take_turns_async_writes_add() -> None:
    # Reads 0.5 GB/s, checkpoint writes 1.5 GB/s on 1 GB/s drives: a blocking save stops the reads
    # (max(0.5, 1.5) = 1.5 -> 2 drives); an async drain runs beside them (0.5 + 1.5 = 2.0 -> 2).
    sync = demand(write_bytes_per_s=1.5e9, need_bytes_per_s=1.5e9)
    assert en.size_axes(drive(), sync)[0]["bandwidth"] == pytest.approx(1.5)
    both = dataclasses.replace(sync, writes_overlap_reads=True)
    assert en.size_axes(drive(), both)[0]["bandwidth"] == pytest.approx(2.0)


def test_size_axes_a_volume_per_node_carries_one_nodes_share() -> None:
    # 4 nodes on a single-attach volume: each volume carries 2 GB/s / 4 = 0.5 GB/s and a full copy.
    vol = drive(kind="cloud-block", unit="volume", attach_limit=1.0, purchase_price=math.nan, name="aws-test-volume")
    loads, _, _ = en.size_axes(vol, demand(read_bytes_per_s=2e9, need_bytes_per_s=2e9, clients=4))
    assert loads["bandwidth"] == pytest.approx(0.5)
    assert loads["capacity"] == pytest.approx(100e9 / 1e12)


def test_size_axes_endurance_over_the_drives_rating() -> None:
    # 1 PB written a year against 1 PB rated over the drive's own 5-year warranty (0.2 PB a year each)
    # -> 5 data drives, whatever the 36-month amortisation (issue 28: it was 3 PB / 1 PB = 3).
    d = demand(written_bytes_per_month=1e15 * 30 / 365.25, amortization_months=36)
    o = drive(endurance_bytes=1e15)
    assert o.endurance_years == 5
    loads, n, limiting = en.size_axes(o, d)
    assert loads["endurance"] == pytest.approx(5.0)
    assert (n, limiting) == (5, "endurance")


# ------------------------------------------------------------------ protect


def test_protection_writes_are_amplified_and_the_array_resized() -> None:
    # Blocking saves at 1.5 GB/s on 1 GB/s drives: 2 data drives, mirrored (two or fewer), which
    # doubles every write: 3 GB/s -> 3 data drives, in RAID 6 (3 + 2 parity) = 5 drives, each write
    # x 5/3. Sizing the array without the amplification would buy 2 x 2 = 4 drives.
    d = demand(write_bytes_per_s=1.5e9, need_bytes_per_s=1.5e9)
    _, n_data, limiting, scheme, amp = en.protect(drive(), d)
    assert (n_data, limiting, scheme) == (3, "bandwidth", "raid6")
    assert amp == pytest.approx(5 / 3)
    s = en.size_option(drive(), d)
    assert s.units == 5 and s.scheme == "raid6"
    # Usable: 5 drives in RAID 6 hold 3 drives' worth = 3 TB.
    assert s.capacity_bytes == pytest.approx(3e12)


def test_protection_without_writes_is_not_resized() -> None:
    # Reads only, 1.5 GB/s: 2 data drives mirrored = 4 drives; no writes to amplify.
    d = demand(read_bytes_per_s=1.5e9, need_bytes_per_s=1.5e9)
    _, n_data, _, scheme, amp = en.protect(drive(), d)
    assert (n_data, scheme, amp) == (2, "mirror", 2.0)
    assert en.size_option(drive(), d).units == 4


# ------------------------------------------------------------------ house


def _encl(name: str, attach: str, bays: int, link: float, usd: float) -> st.Enclosure:
    """An enclosure of ``bays`` bays behind a ``link`` bytes/s link, made of one part costing ``usd``."""
    part = st.Part(name, name, usd, "", "2026-11-24", "test", "tests/test_engine.py")
    base = st.option("hdd-7200").enclosures[0]
    return dataclasses.replace(base, name=name, attach=attach, bays=bays, link_bytes_per_s=link, parts=((part, 1),))


def test_a_store_for_one_node_without_checkpoints_may_be_a_jbod() -> None:
    # One node, no checkpoints: nothing else reads the store, so the $500 SAS JBOD on the host's HBA
    # beats the $2,000 network server. Checkpoints (which must outlive the node) or a second node
    # need a store every node reaches: the server.
    jbod, server = _encl("jbod", "sas", 12, 10e9, 500.0), _encl("server", "network", 12, 10e9, 2000.0)
    o = drive(enclosures=(jbod, server))
    alone = demand()
    assert not alone.shared
    assert en.enclose(o, alone, 4) == (((jbod, 1),), False)
    saving = demand(write_bytes_per_s=0.1e9, need_bytes_per_s=0.6e9)
    assert saving.shared and en.enclose(o, saving, 4) == (((server, 1),), True)
    two = demand(clients=2)
    assert two.shared and en.enclose(o, two, 4) == (((server, 1),), True)


# ------------------------------------------------------------------ rule out


def test_the_first_failing_rule_names_the_limit_and_the_reason() -> None:
    # 2 nodes each reading 1.5 GB/s through a 1 GB/s client cap, and 30 units on a 24-unit system:
    # both fail; the per-client cap comes first in RULES, and why_not and limiting agree.
    o = drive(kind="nfs", unit="server", client_bytes_per_s=1e9, purchase_price=1000.0, enclosures=())
    d = demand(read_bytes_per_s=3e9, need_bytes_per_s=3e9, clients=2, capacity_bytes=30e12)
    s = en.size_option(o, d)
    assert s.units == 30
    why, limiting = en.rule_out(o, d, s)
    assert limiting == "per-client cap"
    assert why == "each of 2 node(s) must read 1.5 GB/s; the per-client cap is 1 GB/s"
    # Without the cap, the system size: 30 TB on 1 TB servers = 30 servers of a 24-server system.
    o2 = dataclasses.replace(o, client_bytes_per_s=math.inf)
    why2, limiting2 = en.rule_out(o2, d, en.size_option(o2, d))
    assert limiting2 == "system size" and why2.startswith("needs 30 servers on capacity")


def test_rules_have_names_and_the_order_the_table_uses() -> None:
    names = [r.name for r in en.RULES]
    assert len(names) == len(set(names))
    assert names.index("per-client cap") < names.index("system size") < names.index("site")


def test_local_drives_serve_one_node_and_checkpoints_need_a_shared_store() -> None:
    o = drive()
    two = demand(clients=2)
    assert en.rule_out(o, two, en.size_option(o, two))[1] == "one node"
    saving = demand(write_bytes_per_s=0.1e9, need_bytes_per_s=0.6e9)
    assert en.rule_out(o, saving, en.size_option(o, saving))[1] == "durability"
    # In a server on the network they are a shared store: both pass.
    server = _encl("server", "network", 12, 10e9, 2000.0)
    shared = drive(enclosures=(server,))
    assert en.rule_out(shared, saving, en.size_option(shared, saving)) == ("", "bandwidth")


def test_another_site_needs_permission_and_a_link() -> None:
    o = drive(name="aws-test-fs", kind="cloud-file", unit="TiB", purchase_price=math.nan)
    d = demand()
    assert en.rule_out(o, d, en.size_option(o, d))[1] == "site"
    allowed = demand(allow_other_site=True)
    assert en.rule_out(o, allowed, en.size_option(o, allowed))[1] == "site link"
    # A 0.4 GB/s link carries less than the 0.5 GB/s needed.
    slow = demand(allow_other_site=True, site_link_bytes_per_s=0.4e9)
    why, limiting = en.rule_out(o, slow, en.size_option(o, slow))
    assert limiting == "site link" and "400 MB/s of the 500 MB/s needed" in why
    fast = demand(allow_other_site=True, site_link_bytes_per_s=1e9)
    assert en.rule_out(o, fast, en.size_option(o, fast))[0] == ""


def test_the_site_link_carries_the_save_burst_not_only_the_reads() -> None:
    """Issue 37, a bug the tests missed: the link between sites judged on the steady reads. Reads of
    0.3 GB/s with an async drain of 0.2 GB/s beside them need 0.5 GB/s over the link: a 0.4 GB/s link
    carries the reads (0.3 < 0.4) but not the burst; at exactly 0.5 GB/s it carries both."""
    o = drive(name="aws-test-fs", kind="cloud-file", unit="TiB", purchase_price=math.nan)
    d = demand(
        allow_other_site=True,
        site_link_bytes_per_s=0.4e9,
        read_bytes_per_s=0.3e9,
        write_bytes_per_s=0.2e9,
        writes_overlap_reads=True,
        need_bytes_per_s=0.5e9,
    )
    why, limiting = en.rule_out(o, d, en.size_option(o, d))
    assert limiting == "site link"
    assert why == "at another site (aws): the link carries 400 MB/s of the 500 MB/s needed"
    at = dataclasses.replace(d, site_link_bytes_per_s=0.5e9)
    assert en.rule_out(o, at, en.size_option(o, at)) == ("", "bandwidth")
    # The job's own plan: the Llama 3 8B preset drains C / 900 s = 124.9 MB/s beside 0.26 MB/s of
    # reads; a 100 MB/s link to an AWS store carries its reads 390 times over but not its drain.
    # A 1 h restart target keeps the restore (112.4e9 B / 3,600 s = 31.2 MB/s) below the drain; at the
    # 5 min default the restore read (374.7 MB/s) would be the need (issue 38).
    p = calc.plan(
        "llama3-8b-pretrain-8xh100",
        site="on-prem",
        allow_other_site=True,
        site_link_bytes_per_s="100 MB/s",
        restore_target_s="1 h",
    )
    dj = en.plan_demand(p)
    assert dj.read_bytes_per_s < 1e6  # far below the 100 MB/s link, and the drain C / 900 s above it
    assert dj.need_bytes_per_s == pytest.approx(dj.read_bytes_per_s + 8_030_261_248 * 14 / 900, rel=1e-12)
    efs = st.option("aws-efs-elastic")
    why = en._site_link(efs, dj, en.size_option(efs, dj))
    assert why == "at another site (aws): the link carries 100 MB/s of the 125.2 MB/s needed"


def test_an_async_saves_drain_past_its_interval_stalls_training() -> None:
    """Issue 37, a bug the tests missed: an async save's drain past its interval dropped from the
    GPU time on a store (the next save waits for the buffer). 300 GB on one 1 GB/s drive takes
    300 s; every 100 s an async save stalls 2 s (the copy to host RAM) + 300 - 100 = 202 s; a sync
    save 300 s. 25,920 saves a month (2,592,000 s / 100 s) x 202 s x 8 GPUs / 3,600 = 11,635.2
    GPU-hours. At exactly the interval (100 GB: 100 s) the drain holds nothing back: 2 s."""
    o = drive(client_bytes_per_s=math.inf)
    s = en.Sized(loads={}, units=2.0, perf_units=1.0, limiting="bandwidth", scheme="mirror")
    saves = 2_592_000 / 100
    d = demand(
        restore_bytes=300e9,
        restore_shard_bytes=300e9 / 8,
        checkpoint_bytes=300e9,
        interval_s=100.0,
        host_copy_s=2.0,
        save_async=True,
        saves_per_month=saves,
    )
    t = en.gpu_time(o, d, s)
    assert t["save_stall_s"] == pytest.approx(202.0, rel=1e-12)
    assert t["lost_gpu_hours"] == pytest.approx(saves * 202.0 * 8 / 3600, rel=1e-12)
    assert t["lost_gpu_hours"] == pytest.approx(11_635.2, rel=1e-12)
    assert en.gpu_time(o, dataclasses.replace(d, save_async=False), s)["save_stall_s"] == pytest.approx(300.0)
    at = dataclasses.replace(d, checkpoint_bytes=100e9, restore_shard_bytes=100e9 / 8)
    assert en.gpu_time(o, at, s)["save_stall_s"] == pytest.approx(2.0, rel=1e-12)
    over = dataclasses.replace(d, checkpoint_bytes=101e9, restore_shard_bytes=101e9 / 8)
    assert en.gpu_time(o, over, s)["save_stall_s"] == pytest.approx(3.0, rel=1e-9)


def test_an_object_stores_restore_gets_scale_with_the_prefixes_bought() -> None:
    """Issue 37's sweep (a planted bug the tests missed): an object store's GET rate for a restore is
    the units bought x the per-unit rate, not one unit's. 1,024 ranks each read a 1 GiB shard in
    16 MiB ranged GETs: 1,024 x 64 = 65,536 GETs; two S3 prefixes serve 2 x 5,500 = 11,000 a second:
    5.958 s, where 100 nodes' 12.5 GB/s links read the 1,024 GiB in 0.88 s. One prefix: 11.92 s."""
    o = st.option("aws-s3-standard")
    assert (o.iops, o.counts_requests, o.client_bytes_per_s) == (5500.0, True, 12.5e9)
    shards = {"restore_bytes": 1024 * 2**30, "restore_shard_bytes": 2**30, "restore_ranks": 1024.0}
    d = demand(clients=100, interval_s=1800.0, **shards)
    two = en.Sized(loads={}, units=2.0, perf_units=2.0, limiting="iops")
    assert en.gpu_time(o, d, two)["restore_s"] == pytest.approx(65_536 / 11_000, rel=1e-12)
    one = en.Sized(loads={}, units=1.0, perf_units=1.0, limiting="iops")
    assert en.gpu_time(o, d, one)["restore_s"] == pytest.approx(65_536 / 5_500, rel=1e-12)
    # With 10 nodes (125 GB/s of links) the bytes bind instead: 1,024 GiB / 125 GB/s = 8.796 s.
    assert en.gpu_time(o, dataclasses.replace(d, clients=10), two)["restore_s"] == pytest.approx(
        1024 * 2**30 / 125e9, rel=1e-12
    )


def test_the_first_epoch_costs_only_its_excess_over_the_gpus_pace() -> None:
    """Issue 37's sweep (a planted bug the tests missed): a first epoch read from the store costs GPU
    time only beyond the GPUs' own pace. 100 GB from one 1 GB/s drive takes 100 s where the 8 GPUs
    would take 60 s: 40 s x 8 GPUs / 3,600 = 0.0889 GPU-hours, once a month; a 2 GB/s store (50 s)
    is faster than the GPUs: the epoch takes their 60 s and costs nothing."""
    o = drive(client_bytes_per_s=math.inf)
    d = demand(first_epoch_bytes=100e9, steady_epoch_s=60.0)
    one = en.Sized(loads={}, units=1.0, perf_units=1.0, limiting="bandwidth")
    t = en.gpu_time(o, d, one)
    assert t["first_epoch_s"] == pytest.approx(100.0, rel=1e-12)
    assert t["lost_gpu_hours"] == pytest.approx(40 * 8 / 3600, rel=1e-12)
    fast = en.gpu_time(o, d, dataclasses.replace(one, units=2.0, perf_units=2.0))
    assert (fast["first_epoch_s"], fast["lost_gpu_hours"]) == (60.0, 0.0)


# ------------------------------------------------------------------ caveats


def test_caveats_in_order() -> None:
    # 0.5 GB/s in 1 MiB reads = 476.8 reads/s over 8 GPUs = 59.6 reads/s per GPU; at 0.2 s a read
    # (the latency; the drive streams without limit) each GPU needs ceil(59.6 x 0.2) = 12 in flight > 8.
    o = drive(latency_s=0.2, burst="burst credits run out")
    d = demand()
    s = en.size_option(o, d)
    assert s.workers == math.ceil(0.5e9 / 2**20 / 8 * 0.2 - 1e-9) == 12
    text = en.caveats(o, d, s)
    names = [n for n, make in en.CAVEATS if make(o, d, s)]
    assert names == ["reads in flight", "slow read", "burst credits", "drive array"]
    assert text.index("12 reads in flight") < text.index("longer than a step") < text.index("burst credits")


# ------------------------------------------------------------------ price


def test_free_iops_and_throughput_are_per_unit() -> None:
    # 2 volumes, each with 3,000 IOPS and 125 MB/s free: 10,000 random reads/s - 2 x 3,000 = 4,000 IOPS
    # at $0.005 = $20; 500 MB/s - 2 x 125 = 250 MB/s at $0.04 = $10; 1,000 GB at $0.08 = $80.
    vol = drive(
        kind="cloud-block",
        unit="volume",
        free_iops=3000.0,
        free_bytes_per_s=125e6,
        price_per_iops_month=0.005,
        price_per_mbps_month=0.04,
        price_per_gb_month=0.08,
        purchase_price=math.nan,
    )
    cost = en.monthly_cost(vol, 2, 1e12, 0.5e9, 10_000, 10_000, 2, provisioned_bytes_per_s=0.5e9)
    assert cost["performance"] == pytest.approx(20 + 10)
    assert cost["storage"] == pytest.approx(80)
    assert cost["reads"] == 0


def test_price_adds_every_charge_and_spreads_purchases() -> None:
    # 4 drives (2 data, mirrored) at $100 over 36 months = $11.11; 10 TB written a month at $0.01/GB
    # = $100 and 1e6 PUTs at $5 per million = $5: $105 a month, $116.11 all in.
    o = drive(price_per_gb_write=0.01, price_per_million_writes=5.0)
    d = demand(read_bytes_per_s=1.5e9, need_bytes_per_s=1.5e9, written_bytes_per_month=10e12)
    d = dataclasses.replace(d, write_requests_per_month=1e6, power_usd_per_kwh=0.0, support_share=0.0)
    usd = en.price(o, d, en.size_option(o, d))
    assert usd["purchase"] == 400
    assert usd["writes"] == pytest.approx(105)
    assert usd["total"] == pytest.approx(105 + 400 / 36)
    # hardware support at 12 % a year of the $400 bought: 400 x 0.12 / 12 = $4 a month more
    more = en.price(o, dataclasses.replace(d, support_share=0.12), en.size_option(o, d))
    assert more["support"] == pytest.approx(4.0) and more["total"] == pytest.approx(105 + 400 / 36 + 4)


def test_egress_prices_reads_out_of_the_store_and_writes_out_of_the_job() -> None:
    # Reads 0.5 GB/s for 30 days = 1,296,000 GB out of AWS through its tiers: 10,000 x $0.09 + 40,000 x
    # $0.085 + 100,000 x $0.07 + 1,146,000 x $0.05 = 900 + 3,400 + 7,000 + 57,300 = $68,600 (a flat
    # $0.09 gave $116,640); 1 TB of checkpoints out of on-prem (free).
    o = drive(name="aws-test-fs", kind="cloud-file", unit="TiB", purchase_price=math.nan)
    d = demand(allow_other_site=True, site_link_bytes_per_s=1e9, written_bytes_per_month=1e12)
    usd = en.price(o, d, en.size_option(o, d))
    assert usd["egress"] == pytest.approx(68_600.0)


# ------------------------------------------------------------------ rank and the demand of a plan


def test_rank_puts_feasible_then_cheapest_first() -> None:
    t = en.rank(en.plan_demand(calc.plan("beast-imagenet-4xv100", site="on-prem")))
    assert list(t.columns) == list(en.COLUMNS)
    feasible = t["feasible"].to_numpy()
    assert not any(feasible[i + 1] and not feasible[i] for i in range(len(t) - 1))
    costs = t[t["feasible"]]["monthly_total_usd"].fillna(math.inf).to_numpy()
    assert all(costs[i] <= costs[i + 1] for i in range(len(costs) - 1))


def test_plan_demand_uses_the_resolved_interval() -> None:
    # An optimal (Young-Daly) interval: the month's saves are 30 days / the interval used, not 0.
    p = calc.plan("mlperf-checkpoint-llama3-8b", checkpoint_interval_s="optimal")
    used = p.values["checkpoint_interval_used_s"]
    assert used > 0
    d = en.plan_demand(p)
    assert d.written_bytes_per_month == pytest.approx(30 * 86400 / used * p.checkpoint_bytes)


def test_plan_demand_without_reads_keeps_the_writes() -> None:
    p = calc.plan("mlperf-checkpoint-llama3-8b")
    d = en.plan_demand(p, reads=False)
    assert d.read_bytes_per_s == 0 and d.read_iops == 0
    # the save: the async drain within half the interval, twice the average rate (C / 900 s = 124.9 MB/s)
    c = 8_030_261_248 * 14
    assert d.write_bytes_per_s == p.checkpoint_save_burst_bytes_per_s == pytest.approx(c / 900)
    assert p.checkpoint_save_burst_bytes_per_s == pytest.approx(2 * p.checkpoint_write_bytes_per_s)
    # the design point (issue 38): the restart within the 5 min target, C / 300 s = 374.7 MB/s, three
    # times the drain (it was the drain while the budget was 2 % of the 263.9-day MTBF)
    assert d.need_bytes_per_s == d.restore_bytes_per_s == pytest.approx(c / 300)
    assert d.design_point == "restore read"
    # with a 1 h target the restore needs C / 3,600 s = 31.2 MB/s and the drain is the design point again
    q = en.plan_demand(calc.plan("mlperf-checkpoint-llama3-8b", restore_target_s="1 h"), reads=False)
    assert q.need_bytes_per_s == pytest.approx(c / 900) and q.design_point == "save drain"


# ------------------------------------------------------------------ each caveat, each column, by hand


def test_each_caveat_says_its_numbers() -> None:
    o = drive()
    d = demand()
    s = en.size_option(o, d)
    # Small files on a shared file system: 2,000 opens/s of one example each.
    nfs = drive(kind="nfs", unit="server", purchase_price=1000.0)
    small = demand(examples_per_file=1, file_opens_per_s=2000.0)
    assert en._small_files(nfs, small, s) == [
        "2,000 file opens/s: small files load metadata servers and request limits; pack into shards"
    ]
    assert en._small_files(nfs, demand(examples_per_file=1, file_opens_per_s=1000.0), s) == []  # 1,000 is not above
    assert en._small_files(nfs, demand(examples_per_file=2, file_opens_per_s=2000.0), s) == []
    assert en._small_files(o, small, s) == []  # a local drive has no metadata server
    # A slow read: 0.2 s against a 0.1 s step.
    slow = drive(latency_s=0.2)
    assert en._slow_read(slow, d, s) == ["one read (200 ms) takes longer than a step: prefetching is essential"]
    assert en._slow_read(drive(latency_s=0.1), d, s) == []  # exactly the budget: no caveat
    assert en._burst(drive(burst="credits"), d, s) == ["credits"]
    assert en._burst(o, d, s) == []


def test_attachment_caveats() -> None:
    vol = drive(
        kind="cloud-block",
        unit="volume",
        attach_limit=4.0,
        purchase_price=math.nan,
        name="aws-test-volume",
        cluster_fs=True,
    )
    s = en.size_option(vol, demand(clients=3))
    assert en._attach(vol, demand(clients=3), s) == [
        "multi-attached to 3 nodes (at most 4): needs a cluster-aware file system (GFS2, OCFS2)"
    ]
    # a volume that does not need one (its preset says no cluster_fs): the count only
    plain = dataclasses.replace(vol, cluster_fs=False)
    assert en._attach(plain, demand(clients=3), s) == ["multi-attached to 3 nodes (at most 4)"]
    assert en._attach(vol, demand(clients=1), s) == []
    one = dataclasses.replace(vol, attach_limit=1.0)
    assert en._attach(one, demand(clients=2), s) == [
        "a volume attaches to 1 node: one per node (2), each holding a full copy of the dataset; "
        "checkpoints written to them are not shared"
    ]
    assert en._attach(drive(), demand(clients=3), s) == []


def test_ram_and_egress_caveats() -> None:
    ram = drive(kind="ram", unit="node", name="ram-test", read_bytes_per_s=10e9, purchase_price=0.0)
    fits = demand(fits_in_ram=True)
    s = en.size_option(ram, fits)
    assert en._ram_fits(ram, fits, s)[0].startswith("the dataset fits in free RAM")
    assert en._ram_fits(ram, demand(), s) == []  # does not fit
    assert en._ram_fits(ram, demand(fits_in_ram=True, need_bytes_per_s=11e9), s) == []  # 11 > 10 GB/s copies
    assert en._ram_fits(drive(), fits, s) == []
    aws = drive(name="aws-test-fs", kind="cloud-file", unit="TiB", purchase_price=math.nan)
    rate = st.EGRESS_USD_PER_GB["aws"]
    assert en._egress(aws, demand(), s) == [
        f"read over the link from aws: egress ${rate:g}/GB out of aws; on-prem internet transit is not priced"
    ]
    assert en._egress(aws, demand(site="aws"), s) == []
    assert en._egress(aws, demand(site="gcp"), s) == [f"read over the link from aws: egress ${rate:g}/GB out of aws"]


def test_drive_array_caveats() -> None:
    # 3 TB on 1 TB drives at 80 %: 4 data drives -> RAID 6 (4 + 2) = 6 drives, 4 TB usable.
    server = _encl("server", "network", 12, 0.6e9, 2000.0)
    o = drive(enclosures=(server,))
    d = demand(capacity_bytes=3e12, write_bytes_per_s=0.1e9, need_bytes_per_s=0.6e9)
    s = en.size_option(o, d)
    assert (s.units, s.scheme) == (6, "raid6")
    got = en._array(o, d, s)
    assert got[0] == "6 drives in raid6 (4 drives' worth usable, 4 TB = 3.64 TiB), filled to at most 80%"
    assert got[1].startswith("held in ")
    assert got[2].startswith("a storage server on the network")
    # Its 0.6 GB/s link carries 0.6 GB/s x 6 / 0.6 = 6 drives' share (0.1 GB/s each): 6 of 12 bays.
    assert len(got) == 5 and got[3].startswith("at most 6 of a ") and "12 bays are filled" in got[3]
    # the test enclosure's part states no condition: it is new, and the card says so
    assert got[4] == "bought new with the maker's warranty at list or retail price: server"
    # A 0.3 GB/s link carries 3 drives' share: at most 3 of the 12 bays.
    narrow = drive(enclosures=(_encl("server", "network", 12, 0.3e9, 2000.0),))
    sn = en.size_option(narrow, d)
    assert any(c.startswith("at most 3 of a ") and "12 bays are filled" in c for c in en._array(narrow, d, sn))
    # Endurance sizing buys drives that stay within their rating: 1 PB a month = 12.175 PB a year
    # against 1 PB rated over the drive's own 5 years (0.2 PB a year each): 60.9 -> 61 data drives,
    # RAID 6 in 7 groups (61 + 14) = 75, wearing out in 61 / 12.175 = 5.01 years: no caveat.
    heavy = dataclasses.replace(d, written_bytes_per_month=1e15)
    worn = en.size_option(drive(endurance_bytes=1e15), heavy)
    assert (worn.units, worn.wear >= 3) == (75, True)
    assert worn.wear == pytest.approx(61 / (1e15 * 365.25 / 30 / 1e15), rel=1e-9)
    assert not any("wear" in c for c in en._array(drive(endurance_bytes=1e15), heavy, worn))
    # An array that wears out first (2 years of a 36-month amortisation) says so.
    early = dataclasses.replace(worn, wear=2.0)
    assert en._array(drive(), heavy, early)[-1] == (
        "checkpoint writes wear the drives out in 2.0 years, before the 36-month amortisation"
    )
    assert en._array(drive(kind="nfs", unit="server"), d, en.size_option(drive(kind="nfs", unit="server"), d)) == []


def test_reads_in_flight_caveat() -> None:
    o = drive(latency_s=0.2)
    d = demand(num_workers=4)
    s = en.size_option(o, d)
    assert s.workers == 12
    assert en._workers(o, d, s) == [
        "at 200 ms per read, each GPU needs 12 reads in flight (Little's law); it has 4 worker(s): "
        f"{en.ask('num_workers')} higher or read asynchronously"
    ]
    assert en._workers(o, demand(num_workers=12), s) == []


def test_headrooms_by_hand() -> None:
    # 0.5 GB/s on 1 GB/s drives: 1 data drive busy 0.5, mirrored to 2; bandwidth headroom 1 / 0.5 = 2.
    o = drive()
    d = demand()
    s = en.size_option(o, d)
    assert en.bandwidth_headroom(o, d, s) == pytest.approx(2.0)
    idle = demand(read_bytes_per_s=0.0, need_bytes_per_s=0.0)
    assert en.bandwidth_headroom(o, idle, en.size_option(o, idle)) == math.inf
    # Node RAM: 10 GB/s copies on each of 2 nodes against 4 GB/s needed: 5x.
    ram = drive(kind="ram", unit="node", name="ram-test", read_bytes_per_s=10e9, purchase_price=0.0)
    two = demand(clients=2, need_bytes_per_s=4e9, read_bytes_per_s=4e9)
    assert en.bandwidth_headroom(ram, two, en.size_option(ram, two)) == pytest.approx(5.0)
    assert en.bandwidth_headroom(ram, demand(need_bytes_per_s=0.0), en.size_option(ram, demand())) == math.inf
    # IOPS: 1,000 IOPS a drive at the read size, 476.8 random reads/s... with file opens of 1/s as
    # the random reads (a file system seeks once per file): 1 data drive x 1,000 / 1 = 1,000.
    fs = drive(iops=1000.0)
    sf = en.size_option(fs, d)
    assert en.sized_iops(fs, d, sf) == pytest.approx(1000.0 * fs.iops_at(2.0**20) / 1000.0)


def test_what_the_sized_units_deliver_is_the_plans_supply() -> None:
    """Issue 37: one supply model (calc.storage.supply, the functions the plan's storage stage runs).
    4 working drives of 1 GB/s and 100,000 IOPS at 4 KiB, each reading 1 MiB in
    1/100,000 - 4,096/1e9 + 1,048,576/1e9 s = 1.05448 ms: 948.34 reads/s a drive, 3,793.3 on four;
    but one node pulls at most 0.5 GB/s through the per-client cap, 0.5e9 / 1,048,576 = 476.84
    reads/s of 1 MiB. The engine said 3,793.3 before (units x per-unit IOPS, the link forgotten)."""
    o = drive(iops=1e5, client_bytes_per_s=0.5e9, write_bytes_per_s=0.8e9)
    s = en.Sized(loads={}, units=4.0, perf_units=4.0, limiting="bandwidth")
    got = en.delivered(o, demand(), s)
    assert got.bytes_per_s == 0.5e9 and got.write_bytes_per_s == 0.5e9  # 4 x 1 / 4 x 0.8 GB/s, capped
    assert got.iops == pytest.approx(0.5e9 / 2**20, rel=1e-12)
    assert en.sized_iops(o, demand(), s) == pytest.approx(476.837158203125, rel=1e-12)
    # Two nodes pull 1 GB/s: still below 3,793.3, so the link binds at 953.67 reads/s.
    assert en.sized_iops(o, demand(clients=2), s) == pytest.approx(1e9 / 2**20, rel=1e-12)
    # No cap: the drives' own 4 / 1.05448 ms = 3,793.3 reads/s, and 4 GB/s read, 3.2 GB/s written.
    free = dataclasses.replace(o, client_bytes_per_s=math.inf)
    one = 1 / (1 / 1e5 - 4096 / 1e9 + 2**20 / 1e9)
    assert en.delivered(free, demand(), s).iops == pytest.approx(4 * one, rel=1e-12)
    assert (en.delivered(free, demand(), s).bytes_per_s, en.delivered(free, demand(), s).write_bytes_per_s) == (
        4e9,
        3.2e9,
    )


def test_every_rule_says_whether_more_gpus_can_make_it_fail() -> None:
    """Issue 37: each Rule carries its own flag (max_gpus reads it); before, calc.sizing named seven
    rules by string. A rate, a node count or a link that grows with the GPUs scales; a rule about
    where or what the option is does not."""
    flags = {r.name: r.scales_with_gpus for r in en.RULES}
    assert all(isinstance(f, bool) for f in flags.values()) and len(flags) == len(en.RULES)
    grows = {"RAM copy rate", "per-client cap", "system size", "enclosure link", "per-instance cap", "system IOPS"}
    grows |= {"metadata", "one node", "per-node checkpoints", "site link"}
    assert {n for n, f in flags.items() if f} == grows
    # What each flagged rule reads grows with the GPUs: the need, the nodes, the reads/s, the opens.
    o = drive(name="aws-test-fs", kind="cloud-file", unit="TiB", purchase_price=math.nan)
    d = demand(allow_other_site=True, site_link_bytes_per_s=1e9)
    assert en._site_link(o, d, en.size_option(o, d)) == ""
    twice = demand(allow_other_site=True, site_link_bytes_per_s=1e9, read_bytes_per_s=1e9, need_bytes_per_s=1.2e9)
    assert en._site_link(o, twice, en.size_option(o, twice)) != ""


def test_option_row_columns_by_hand() -> None:
    # 3 TB on 1 TB drives at 80 %: 4 data drives in RAID 6 = 6 drives at $100 = $600; 4 TB usable
    # against 3 TB needed (1.33x); bandwidth 0.5 GB/s on 4 data drives: 4 / 0.5 = 8x.
    o = drive(price_date="2026-11-24")
    d = demand(capacity_bytes=3e12)
    row = en.option_row(o, d)
    assert list(row) == list(en.COLUMNS)
    assert (row["units"], row["protection"], row["limiting"], row["feasible"]) == (6, "raid6", "capacity", True)
    assert row["purchase_usd"] == 600
    # + support (12 % a year of $600 / 12 = $6) + power (6 drives x 14 W, the fixture's PM9A3 figure,
    # x 730 h x $0.13/kWh = $7.97): $30.64 a month
    assert row["monthly_support_usd"] == pytest.approx(6.0)
    assert row["monthly_power_usd"] == pytest.approx(6 * 14 / 1000 * 730 * 0.13)
    assert row["monthly_total_usd"] == pytest.approx(600 / 36 + 6.0 + 6 * 14 / 1000 * 730 * 0.13)
    assert row["capacity_bytes"] == pytest.approx(4e12)
    assert row["capacity_headroom"] == pytest.approx(4 / 3)
    assert row["bandwidth_headroom"] == pytest.approx(8.0)
    assert row["ready"] is True and row["workers_per_gpu_needed"] == 1
    assert row["price_note"] == "$100 per drive bought, over 36 months (2026-11-24)"
    assert row["latency_s"] == 1e-4 and row["why_not"] == ""


def test_price_note_and_counted_nouns() -> None:
    assert (
        en.price_note(drive(purchase_price=math.nan, no_price_reason="quote only"), 36) == "no public price: quote only"
    )
    rented = drive(purchase_price=math.nan, price_per_gb_month=0.08, price_region="us-east-1", price_date="2026-11")
    assert en.price_note(rented, 36) == "$0.08/GB-month us-east-1 (2026-11)"
    assert en.price_note(drive(price_date=""), 12) == "$100 per drive bought, over 12 months"
    assert en._n(1, "drive") == "1 drive"
    assert en._n(3, "drive") == "3 drives"
    assert en._n(1024, "GPU") == "1,024 GPUs"
    assert en._n(2, "box") == "2 boxes"
    assert en._n(2, "TiBs") == "2 TiBs"
    assert en._n(161, "TiB") == "161 TiB" and en._n(4.8, "TiB") == "4.8 TiB"  # a unit of bytes (issue 39)
    assert en._n(1.5, "drive") == "1.5 drives"


def test_rank_breaks_cost_ties_by_units_and_puts_unpriced_last() -> None:
    t = en.rank(en.plan_demand(calc.plan("beast-imagenet-4xv100", site="on-prem")))
    ok = t[t["feasible"]]
    priced = ok["monthly_total_usd"].notna().to_numpy()
    assert not any(priced[i + 1] and not priced[i] for i in range(len(priced) - 1))  # NaN cost last
    assert "_cost" not in t.columns and list(t.index) == list(range(len(t)))


def test_rule_sentences_and_boundaries() -> None:
    o = drive(kind="nfs", unit="server", client_bytes_per_s=1e9, purchase_price=1000.0)
    # Exactly at the per-client cap (2 nodes x 1 GB/s): it serves.
    at_cap = demand(read_bytes_per_s=2e9, need_bytes_per_s=2e9, clients=2)
    assert en._client_cap(o, at_cap, en.size_option(o, at_cap)) == ""
    # Metadata: 1,000 opens/s x 4 NFS ops per open = 4,000 ops/s against a 1,000 ops/s service.
    meta = drive(kind="nfs", unit="server", protocol="nfs", metadata_ops=1000.0, metadata_scaling=None)
    opens = demand(file_opens_per_s=1000.0)
    assert en.metadata_ops_per_s(meta, opens) == 4000.0
    assert en._metadata(meta, opens, en.size_option(meta, opens)) == (
        "4,000 metadata ops/s (nfs file opens) exceed its 1,000 ops/s metadata limit: pack into shards"
    )
    assert en._metadata(meta, demand(file_opens_per_s=250.0), en.size_option(meta, opens)) == ""  # 1,000: at the limit
    # System-wide IOPS: an object store (every read a request) capped at 100 reads/s system-wide
    # against 476.8 requests/s; exactly at the cap it serves; node RAM has no such cap.
    obj = drive(kind="object", unit="TiB", purchase_price=math.nan, aggregate_iops=100.0, name="aws-test-object")
    d = demand()
    assert en._system_iops(obj, d, en.size_option(obj, d)) == "the system-wide cap of 100 reads/s is below the need"
    capped = dataclasses.replace(obj, aggregate_iops=0.5e9 / 2**20)
    assert en._system_iops(capped, d, en.size_option(capped, d)) == ""
    ram = drive(kind="ram", unit="node", name="ram-test", aggregate_iops=1.0, purchase_price=0.0)
    assert en._system_iops(ram, d, en.size_option(ram, d)) == ""
    # Issue 37: the reads/s a store serves are the plan's, bounded by the bandwidth the nodes pull too.
    # 476.8 requests/s of 1 MiB through one node's 0.25 GB/s per-client cap: 0.25e9 / 1,048,576 =
    # 238.4 reads/s fit.
    narrow = dataclasses.replace(obj, aggregate_iops=math.inf, client_bytes_per_s=0.25e9)
    assert en._system_iops(narrow, d, en.size_option(narrow, d)) == (
        "238.4 reads/s of 1 MiB fit through the 250 MB/s its nodes read; the job needs 476.8 reads/s"
    )


def test_an_enclosure_link_too_slow_for_one_drive() -> None:
    # 6 drives sharing 1.2 GB/s (0.2 GB/s each) behind 0.1 GB/s links: no enclosure carries one drive.
    o = drive(enclosures=(_encl("server", "network", 12, 0.1e9, 2000.0),))
    d = demand(capacity_bytes=3e12, read_bytes_per_s=1.2e9, need_bytes_per_s=1.2e9)
    s = en.size_option(o, d)
    assert s.units == 6 and s.housing == ()
    assert en.rule_out(o, d, s) == (
        "each of 6 drives must move 200 MB/s, more than one enclosure's link carries (100 MB/s at most)",
        "enclosure link",
    )
    # The same for a shared store (checkpoints): a networked server is still the kind it needs.
    saving = dataclasses.replace(d, write_bytes_per_s=0.1e9, need_bytes_per_s=1.3e9)
    assert en.rule_out(o, saving, en.size_option(o, saving))[1] == "enclosure link"
    # A SAS JBOD only (no server) for a shared store is no enclosure at all: that rule is silent.
    sas = drive(enclosures=(_encl("jbod", "sas", 12, 0.1e9, 500.0),))
    shared = demand(capacity_bytes=3e12, clients=2)
    assert en._enclosure_link(sas, shared, en.size_option(sas, shared)) == ""


def test_housing_and_parts_sentences() -> None:
    part = st.Part("nic", "a 25 GbE port", 50.0, "", "2026-11-24", "test", "tests/test_engine.py")
    o = drive(network_parts=((part, 2),))
    got = en._network_parts(o, demand(), en.size_option(o, demand()))
    assert got == ["each drive connects through 2 x nic ($100.00)"]
    two = drive(network_parts=((part, 1), (part, 3)))
    got = en._network_parts(two, demand(), en.size_option(two, demand()))
    assert got[0].endswith("1 x nic ($50.00), 3 x nic ($150.00)")
    # Priced: 2 drives (1 data, mirrored) x ($100 + 2 x $50) = $400 bought.
    assert en.price(o, demand(), en.size_option(o, demand()))["purchase"] == 400
    server = _encl("server", "network", 12, 10e9, 2000.0)
    housed = drive(enclosures=(server,))
    saving = demand(write_bytes_per_s=0.1e9, need_bytes_per_s=0.6e9)
    lines = en._array(housed, saving, en.size_option(housed, saving))
    held, unpriced = st.describe_housing(((server, 1),))
    assert unpriced == "" and lines[1] == f"held in {held}"
    assert lines[2] == (
        "a storage server on the network: every node mounts it over NFS (its NFS metadata rate is not "
        "modelled), and checkpoints written to it outlive a node"
    )


def test_price_per_node_copies_egress_of_writes_and_rented_totals() -> None:
    # 4 single-attach volumes, each a full 100 GB copy at $0.08/GB-month: 4 x 100 x 0.08 = $32.
    vol = drive(
        kind="cloud-block",
        unit="volume",
        attach_limit=1.0,
        price_per_gb_month=0.08,
        purchase_price=math.nan,
        name="aws-test-volume",
    )
    four = demand(clients=4, read_bytes_per_s=2e9, need_bytes_per_s=2e9, site="aws")
    usd = en.price(vol, four, en.size_option(vol, four))
    assert usd["rent"] == pytest.approx(32.0)
    # Rented: no purchase, the total is the month's charges.
    assert math.isnan(usd["purchase"]) and usd["total"] == usd["monthly"]
    # A store on-prem read by a job on AWS: reads leave on-prem (free), 1 TB of checkpoints leave AWS.
    onprem = drive(kind="nfs", unit="server", purchase_price=1000.0)
    away = demand(site="aws", allow_other_site=True, site_link_bytes_per_s=1e9, written_bytes_per_month=1e12)
    got = en.price(onprem, away, en.size_option(onprem, away))
    assert got["egress"] == pytest.approx(1e12 / 1e9 * st.EGRESS_USD_PER_GB["aws"] + 0.5 * 30 * 86400 * 0.0)


def test_iops_and_capacity_headroom() -> None:
    # An object store: every read a request; 1,000 requests/s per unit at any size, 476.8 needed.
    obj = drive(kind="object", unit="TiB", purchase_price=math.nan, name="aws-test-object", iops=1000.0)
    obj = dataclasses.replace(obj, iops_request_bytes=2.0**20, read_bytes_per_s=math.inf)
    d = demand(capacity_bytes=0.0)
    row = en.option_row(obj, d)
    assert row["iops_headroom"] == pytest.approx(1000.0 * row["units"] / (0.5e9 / 2**20))
    assert row["capacity_headroom"] == math.inf  # nothing to hold


def test_idle_gpu_time_and_its_price() -> None:
    # 8 GPUs at 75 %: 8 x 0.25 x 720 h (30 days) = 1,440 GPU-hours a month.
    assert en.idle_gpu_hours_per_month(8, 0.75) == pytest.approx(1440.0)
    assert en.gpu_price_per_hour("H100-SXM", 2.5) == (2.5, "scenario")
    price, source = en.gpu_price_per_hour("H100-SXM", None)
    assert price == calc.gpus()["H100-SXM"].price_per_hour and source == calc.gpus()["H100-SXM"].price_source


def test_plan_demand_fields() -> None:
    # No checkpoints: capacity is the dataset alone; reads by default; the site link parsed.
    p = calc.plan("beast-imagenet-4xv100", site="aws", allow_other_site=True, site_link_bytes_per_s="10 Gb/s")
    d = en.plan_demand(p)
    assert d.capacity_bytes == p.dataset_bytes == 1281167 * 65536
    assert d.read_bytes_per_s == p.read_bytes_per_s > 0
    assert d.site_link_bytes_per_s == 1.25e9 and d.site == "aws" and d.allow_other_site
    # With checkpoints: the kept ones are stored too.
    q = calc.plan("mlperf-checkpoint-llama3-8b")
    assert en.plan_demand(q).capacity_bytes == pytest.approx(q.dataset_bytes + q.checkpoint_capacity_bytes)


def test_plan_demand_design_point_is_the_restore_when_it_reads_fastest() -> None:
    # Llama 3 8B's checkpoint: 8,030,261,248 parameters x 14 B = 112,423,657,472 B, restored within a
    # 60 s target: 1,873,727,624.5 B/s, above the save drain (C / 900 s = 124.9 MB/s).
    c = 8_030_261_248 * 14
    d = en.plan_demand(calc.plan("mlperf-checkpoint-llama3-8b", restore_target_s="60 s"))
    assert d.design_point == "restore read" and d.need_bytes_per_s == pytest.approx(c / 60)
    assert d.restore_bytes == c


def test_plan_demand_of_a_blocking_save_is_the_larger_of_reads_and_burst() -> None:
    # The article's job (385.7 MB/s of reads) saving C every 10 min within a 1 % stall: a blocking save
    # writes C / 6 s while the reads pause, so the store needs max(reads, burst) = the reads, not the sum.
    p = calc.plan(
        "beast-imagenet-4xv100", checkpoint_interval_s="10 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.01
    )
    d = en.plan_demand(p)
    reads = 5885.057471264368 * 65536
    assert d.write_bytes_per_s == pytest.approx(p.checkpoint_bytes / 6)
    assert d.write_bytes_per_s < reads and d.need_bytes_per_s == pytest.approx(reads)
    assert d.design_point == "steady reads" and not d.writes_overlap_reads


def test_plan_demand_counts_saves_a_month_and_drives_without_a_server_amplify_nothing() -> None:
    # A save every 10 min: 30 days x 86,400 s / 600 s = 4,320 saves a month.
    p = calc.plan(
        "beast-imagenet-4xv100", checkpoint_interval_s="10 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.01
    )
    d = en.plan_demand(p)
    assert d.saves_per_month == pytest.approx(4320)
    # Bare drives are no nfs-* server: a byte stored is a byte written (amplification 1).
    assert en.server_amp(calc.storage.option("nvme-gen4"), d) == 1.0


def test_plan_demand_carries_the_first_epoch_burst_and_the_sites_support_share() -> None:
    # The article's job with the page cache on: its 83,962,560,512 B fit in node RAM, so the store is read
    # once per start; a steady epoch takes 1,281,167 examples / 5,885.06 samples/s = 217.7 s.
    d = en.plan_demand(calc.plan("beast-imagenet-4xv100", page_cache=True, support_share=0.2))
    assert d.first_epoch_bytes == 83_962_560_512
    assert d.steady_epoch_s == pytest.approx(1_281_167 / 5885.057471264368)
    assert d.support_share == 0.2


def test_the_restore_read_is_its_own_sizing_axis() -> None:
    """Issue 38: the restore read sized nothing (the need said "restore read" while the units were
    bought for reads and writes). A restart reading 2.5 GB/s from 1 GB/s drives needs 2.5 -> 3
    drives, more than the 0.5 GB/s of reads (1 drive); at 0.4 GB/s it is below the reads."""
    o = drive()
    d = demand(restore_bytes=750e9, restore_bytes_per_s=2.5e9, restore_budget_s=300.0, need_bytes_per_s=2.5e9)
    assert en.restore_load(o, d) == pytest.approx(2.5)
    assert en.size_axes(o, d)[1:] == (3, "restore read")
    low = dataclasses.replace(d, restore_bytes_per_s=0.4e9)
    assert en.size_axes(o, low)[1:] == (1, "bandwidth")
    # An object store: 1,024 ranks x ceil(18.48e9 B / 16 MiB) = 1,128,448 GETs in 300 s at 5,500 a
    # prefix: 1,128,448 / 300 / 5,500 = 0.684 prefixes; in 100 s, 2.05 -> 3 prefixes.
    s3 = st.option("aws-s3-standard")
    ck_demand = demand(
        restore_bytes=18_484_923_476.25 * 1024,
        restore_bytes_per_s=0.0001,
        restore_budget_s=300.0,
        restore_shard_bytes=18_484_923_476.25,
        restore_ranks=1024.0,
    )
    assert s3.iops == 5500
    assert en.restore_load(s3, ck_demand) == pytest.approx(1_128_448 / 300 / 5500)
    fast = dataclasses.replace(ck_demand, restore_budget_s=100.0)
    assert en.restore_load(s3, fast) == pytest.approx(1_128_448 / 100 / 5500)
    assert en.size_axes(s3, fast)[1:] == (3, "restore read")


def test_hdds_are_bought_within_their_workload_rating() -> None:
    # Issue 38's repro: CLIP on-prem saving every 10 min on 8 GPUs was sized at 565.2 TB a year per drive
    # against the Exos X24's 550 TB rating (reads and writes together; presets/storage.yaml), and said both.
    # Now the hdd-7200 row is sized by that workload and stays within 550 TB a year (518.4 TB on 28 drives
    # in RAID 6 groups: the parity drives take writes too, so the count is not a plain division).
    from calc.sizing import recommend

    df = recommend("clip-vitl14-datacomp-webdataset", site="on-prem", checkpoint_interval_s="10 min", gpus_per_job=8)
    row = df[df["option"] == "hdd-7200"].iloc[0]
    assert bool(row["feasible"]) and row["limiting"] == "workload"
    per_drive = float(row["drive_workload_bytes_per_year"])
    assert 500e12 < per_drive <= 550e12
