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
    s = en.size(drive(), d)
    assert s.units == 5 and s.scheme == "raid6"
    # Usable: 5 drives in RAID 6 hold 3 drives' worth = 3 TB.
    assert s.capacity_bytes == pytest.approx(3e12)


def test_protection_without_writes_is_not_resized() -> None:
    # Reads only, 1.5 GB/s: 2 data drives mirrored = 4 drives; no writes to amplify.
    d = demand(read_bytes_per_s=1.5e9, need_bytes_per_s=1.5e9)
    _, n_data, _, scheme, amp = en.protect(drive(), d)
    assert (n_data, scheme, amp) == (2, "mirror", 2.0)
    assert en.size(drive(), d).units == 4


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
    assert en.house(o, alone, 4) == (((jbod, 1),), False)
    saving = demand(write_bytes_per_s=0.1e9, need_bytes_per_s=0.6e9)
    assert saving.shared and en.house(o, saving, 4) == (((server, 1),), True)
    two = demand(clients=2)
    assert two.shared and en.house(o, two, 4) == (((server, 1),), True)


# ------------------------------------------------------------------ rule out


def test_the_first_failing_rule_names_the_limit_and_the_reason() -> None:
    # 2 nodes each reading 1.5 GB/s through a 1 GB/s client cap, and 30 units on a 24-unit system:
    # both fail; the per-client cap comes first in RULES, and why_not and limiting agree.
    o = drive(kind="nfs", unit="server", client_bytes_per_s=1e9, purchase_price=1000.0, enclosures=())
    d = demand(read_bytes_per_s=3e9, need_bytes_per_s=3e9, clients=2, capacity_bytes=30e12)
    s = en.size(o, d)
    assert s.units == 30
    why, limiting = en.rule_out(o, d, s)
    assert limiting == "per-client cap"
    assert why == "each of 2 node(s) must read 1.5 GB/s; the per-client cap is 1 GB/s"
    # Without the cap, the system size: 30 TB on 1 TB servers = 30 servers of a 24-server system.
    o2 = dataclasses.replace(o, client_bytes_per_s=math.inf)
    why2, limiting2 = en.rule_out(o2, d, en.size(o2, d))
    assert limiting2 == "system size" and why2.startswith("needs 30 servers on capacity")


def test_rules_have_names_and_the_order_the_table_uses() -> None:
    names = [r.name for r in en.RULES]
    assert len(names) == len(set(names))
    assert names.index("per-client cap") < names.index("system size") < names.index("site")


def test_local_drives_serve_one_node_and_checkpoints_need_a_shared_store() -> None:
    o = drive()
    two = demand(clients=2)
    assert en.rule_out(o, two, en.size(o, two))[1] == "one node"
    saving = demand(write_bytes_per_s=0.1e9, need_bytes_per_s=0.6e9)
    assert en.rule_out(o, saving, en.size(o, saving))[1] == "durability"
    # In a server on the network they are a shared store: both pass.
    server = _encl("server", "network", 12, 10e9, 2000.0)
    shared = drive(enclosures=(server,))
    assert en.rule_out(shared, saving, en.size(shared, saving)) == ("", "bandwidth")


def test_another_site_needs_permission_and_a_link() -> None:
    o = drive(name="aws-test-fs", kind="cloud-file", unit="TiB", purchase_price=math.nan)
    d = demand()
    assert en.rule_out(o, d, en.size(o, d))[1] == "site"
    allowed = demand(allow_other_site=True)
    assert en.rule_out(o, allowed, en.size(o, allowed))[1] == "site link"
    # A 0.4 GB/s link carries less than the 0.5 GB/s needed.
    slow = demand(allow_other_site=True, site_link_bytes_per_s=0.4e9)
    why, limiting = en.rule_out(o, slow, en.size(o, slow))
    assert limiting == "site link" and "400 MB/s of the 500 MB/s needed" in why
    fast = demand(allow_other_site=True, site_link_bytes_per_s=1e9)
    assert en.rule_out(o, fast, en.size(o, fast))[0] == ""


# ------------------------------------------------------------------ caveats


def test_caveats_in_order() -> None:
    # 0.5 GB/s in 1 MiB reads = 476.8 reads/s over 8 GPUs = 59.6 reads/s per GPU; at 0.2 s a read
    # (latency, + 1 MiB / 1 GB/s = 1.05 ms) each GPU needs ceil(59.6 x 0.20105) = 12 in flight > 8.
    o = drive(latency_s=0.2, burst="burst credits run out")
    d = demand()
    s = en.size(o, d)
    assert s.workers == math.ceil(0.5e9 / 2**20 / 8 * (0.2 + 2**20 / 1e9) - 1e-9) == 12
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
    usd = en.price(o, d, en.size(o, d))
    assert usd["purchase"] == 400
    assert usd["writes"] == pytest.approx(105)
    assert usd["total"] == pytest.approx(105 + 400 / 36)
    # hardware support at 12 % a year of the $400 bought: 400 x 0.12 / 12 = $4 a month more
    more = en.price(o, dataclasses.replace(d, support_share=0.12), en.size(o, d))
    assert more["support"] == pytest.approx(4.0) and more["total"] == pytest.approx(105 + 400 / 36 + 4)


def test_egress_prices_reads_out_of_the_store_and_writes_out_of_the_job() -> None:
    # Reads 0.5 GB/s for 30 days = 1,296,000 GB out of AWS through its tiers: 10,000 x $0.09 + 40,000 x
    # $0.085 + 100,000 x $0.07 + 1,146,000 x $0.05 = 900 + 3,400 + 7,000 + 57,300 = $68,600 (a flat
    # $0.09 gave $116,640); 1 TB of checkpoints out of on-prem (free).
    o = drive(name="aws-test-fs", kind="cloud-file", unit="TiB", purchase_price=math.nan)
    d = demand(allow_other_site=True, site_link_bytes_per_s=1e9, written_bytes_per_month=1e12)
    usd = en.price(o, d, en.size(o, d))
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
    # the design point: the async save drained within half the interval, twice the average rate
    assert (
        d.need_bytes_per_s == p.checkpoint_save_burst_bytes_per_s == pytest.approx(2 * p.checkpoint_write_bytes_per_s)
    )
    assert d.design_point == "save drain"
