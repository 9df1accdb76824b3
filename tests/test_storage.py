"""Storage supply (calc/storage.py, docs/model.md section 7), each formula called directly.

Per-unit figures of docs/model.md 7.1: a 7,200 rpm HDD (168 IOPS at 4 KiB, 285 MB/s), a SATA SSD
(98,000 IOPS, 560 MB/s), a Gen4 datacenter NVMe drive (900,000 IOPS, 6.5 GB/s); object-store
figures of S3 (30 ms first byte, 85 MB/s per connection, 3,500 PUT/s per prefix). Options are
built here from these figures (``dataclasses.replace``), so a preset's edit cannot move them.
NumPy warnings are errors: "as many units as needed" is inf without one.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from calc import catalog, storage
from calc import storage as st
from calc.errors import InputError, PresetError

pytestmark = pytest.mark.filterwarnings("error")
inf = math.inf
KIB = 1024


def _option(**kw: object) -> storage.StorageOption:
    """A drive with round figures: 100 IOPS, 200 MB/s read, 100 MB/s write, 10 TB, at least 2."""
    base = dataclasses.replace(
        storage.option("hdd-7200"),
        kind="block",
        iops=100.0,
        iops_request_bytes=4096.0,
        read_bytes_per_s=200e6,
        write_bytes_per_s=100e6,
        latency_s=0.01,
        stream_bytes_per_s=inf,
        capacity_bytes=10e12,
        min_units=2.0,
        put_requests=inf,
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("iops", "bandwidth", "at_64k"),
    [
        # 1 / (1/168 - 4,096/285e6 + 65,536/285e6) = 1 / (5.95238e-3 - 1.4372e-5 + 2.29951e-4) = 162.13
        (168.0, 285e6, 162.13),
        # 1 / (1.020408e-5 - 7.3143e-6 + 1.170286e-4) = 1 / 1.199184e-4 = 8,339.0
        (98_000.0, 560e6, 8339.0),
        # 1 / (1.11111e-6 - 6.3015e-7 + 1.008246e-5) = 1 / 1.056342e-5 = 94,666
        (900_000.0, 6.5e9, 94_666.0),
    ],
)
def test_iops_at_64_kib_pays_the_transfer(iops: float, bandwidth: float, at_64k: float) -> None:
    assert storage.iops_at_request(iops, bandwidth, 64 * KIB) == pytest.approx(at_64k, abs=0.5)
    assert storage.iops_at_request(iops, bandwidth, 64 * KIB, 4096.0) == pytest.approx(at_64k, abs=0.5)
    # at the quoted 4 KiB read the datasheet figure comes back
    assert storage.iops_at_request(iops, bandwidth, 4096.0) == pytest.approx(iops, rel=1e-12)


def test_iops_at_request_edge_cases() -> None:
    # quoted at 64 KiB (NFS servers): not charged the transfer twice
    assert storage.iops_at_request(10_000.0, 1e9, 64 * KIB, 64 * KIB) == pytest.approx(10_000.0, rel=1e-12)
    # no IOPS published (NaN): only the transfer, 285e6 / 65,536 = 4,348.8
    assert storage.iops_at_request(math.nan, 285e6, 64 * KIB) == pytest.approx(285e6 / 65536, rel=1e-12)
    # a fixed cost below the quoted transfer is clamped at 0: 1e9 / 65,536 = 15,258.8 reads/s
    assert storage.iops_at_request(1e9, 1e9, 64 * KIB) == pytest.approx(1e9 / 65536, rel=1e-12)
    # no IOPS and no bandwidth limit published: unlimited, without a division warning
    assert storage.iops_at_request(math.nan, inf, 64 * KIB) == inf


def test_supply_bandwidth_is_units_capped_by_clients() -> None:
    # 4 NVMe drives x 6.5 GB/s = 26 GB/s, read by 2 nodes capped at 12.5 GB/s each = 25 GB/s
    assert storage.supply_bytes_per_s(4, 6.5e9, 2, 12.5e9) == 25e9
    assert storage.supply_bytes_per_s(3, 6.5e9, 2, 12.5e9) == pytest.approx(19.5e9, rel=1e-12)
    # no per-unit limit and 0 units (inf x 0): unconstrained, no warning
    assert storage.supply_bytes_per_s(0.0, inf, 1, inf) == inf
    assert storage.supply_bytes_per_s(np.inf, 6.5e9, 1, inf) == inf


def test_supply_iops_is_the_smallest_of_three_limits() -> None:
    per_drive = 1 / (1 / 98_000 - 4096 / 560e6 + 65536 / 560e6)  # 8,339.0 reads/s at 64 KiB
    # 4 SATA SSDs: 4 x 8,339.0 = 33,356; their 2.24 GB/s allow 2.24e9 / 65,536 = 34,180
    got = storage.supply_iops(4, 98_000.0, 560e6, 64 * KIB, inf, 2.24e9)
    assert got == pytest.approx(4 * per_drive, rel=1e-12)
    assert got == pytest.approx(33_356, abs=1)
    # a system cap of 20,000 reads/s binds
    assert storage.supply_iops(4, 98_000.0, 560e6, 64 * KIB, 20_000.0, 2.24e9) == 20_000.0
    # a client link of 1 GB/s binds: 1e9 / 65,536 = 15,258.8
    assert storage.supply_iops(4, 98_000.0, 560e6, 64 * KIB, inf, 1e9) == pytest.approx(1e9 / 65536, rel=1e-12)
    # IOPS quoted at 64 KiB and read at 64 KiB: 2 x 10,000 (the transfer is in the quoted figure)
    assert storage.supply_iops(2, 10_000.0, 1e9, 64 * KIB, inf, inf, 64 * KIB) == pytest.approx(20_000.0, rel=1e-12)
    # unconstrained units: inf, no warning
    assert storage.supply_iops(inf, 98_000.0, 560e6, 64 * KIB, inf, inf) == inf
    assert storage.supply_iops(0.0, math.nan, inf, 64 * KIB, inf, inf) == inf


def test_read_service_time() -> None:
    # S3: 30 ms to the first byte + 146,600,628 B / 85 MB/s per connection = 0.030 + 1.724713 = 1.754713 s
    assert storage.read_service_time_s(0.030, 146_600_628, 85e6) == pytest.approx(1.754713, rel=1e-6)
    # drives and file systems publish no per-stream cap: the latency alone
    assert storage.read_service_time_s(80e-6, 65_536, inf) == 80e-6
    o = _option(latency_s=0.030, stream_bytes_per_s=85e6)
    assert o.service_time_s(146_600_628) == pytest.approx(1.754713, rel=1e-6)


def test_option_iops_at() -> None:
    # the HDD of docs/model.md 7.1 built from its figures: 162.13 reads/s at 64 KiB
    o = _option(iops=168.0, read_bytes_per_s=285e6)
    assert o.iops_at(64 * KIB) == pytest.approx(162.13, abs=0.01)
    assert isinstance(o.iops_at(64 * KIB), float)
    # quoted at 64 KiB (an NFS server): 10,000 at 64 KiB, not less
    nfs = _option(iops=10_000.0, read_bytes_per_s=1e9, iops_request_bytes=64 * KIB)
    assert nfs.iops_at(64 * KIB) == pytest.approx(10_000.0, rel=1e-12)


def test_option_lookup() -> None:
    assert storage.option("NVME-GEN4").name == "nvme-gen4"
    with pytest.raises(InputError, match="unknown storage option 'floppy'"):
        storage.option("floppy")


def test_random_reads_are_requests_on_object_stores_and_opens_elsewhere() -> None:
    assert storage.random_reads(_option(kind="object"), 5000.0, 100.0) == 5000.0
    assert storage.random_reads(_option(kind="block"), 5000.0, 100.0) == 100.0


def test_unit_loads() -> None:
    o = _option()
    # 300 opens/s / 100 IOPS = 3; 400 MB/s / 200 MB/s + 50 MB/s written / 100 MB/s = 2.5;
    # 25 TB / 10 TB = 2.5; at least 2 units; no PUT limit
    loads = storage.unit_loads(o, 400e6, 500.0, 64 * KIB, 25e12, 300.0, 50e6)
    # no metadata service provisioned by size: 0 units for metadata
    assert loads == {"iops": 3.0, "bandwidth": 2.5, "capacity": 2.5, "minimum": 2.0, "puts": 0.0, "metadata": 0.0}
    # a blocking save takes turns with reads: the larger, 2
    assert storage.unit_loads(o, 400e6, 500.0, 64 * KIB, 25e12, 300.0, 50e6, False)["bandwidth"] == 2.0
    assert storage.unit_loads(o, 100e6, 500.0, 64 * KIB, 25e12, 300.0, 500e6, False)["bandwidth"] == 5.0
    # opens not given: every read seeks, 500 / 100 = 5; nothing written: reads alone
    plain = storage.unit_loads(o, 400e6, 500.0, 64 * KIB, 25e12)
    assert plain["iops"] == 5.0 and plain["bandwidth"] == 2.0
    # no IOPS or capacity published: those axes cost nothing
    free = storage.unit_loads(_option(iops=math.nan, capacity_bytes=inf), 400e6, 500.0, 64 * KIB, 25e12, 300.0)
    assert free["iops"] == 0.0 and free["capacity"] == 0.0


def test_unit_loads_put_requests_of_a_checkpoint_to_s3() -> None:
    # Llama 3 1T every 30 min at 2 % stall: 1,183,035,102,480 x 14 B / 36 s = 460.07 GB/s; in 16 MiB
    # parts 460.07e9 / 16,777,216 = 27,422 PUT/s over 3,500 per prefix = 7.83 prefixes
    write = 1_183_035_102_480 * 14 / 36
    o = _option(kind="object", put_requests=3500.0, write_bytes_per_s=inf)
    loads = storage.unit_loads(o, 0.0, 0.0, 64 * KIB, 0.0, 0.0, write)
    assert loads["puts"] == pytest.approx(7.835, abs=0.001)
    assert storage.WRITE_REQUEST_BYTES == 16 * 2**20
    assert storage.size(loads) == (8, "write requests")


@pytest.mark.parametrize(
    ("loads", "units", "limiting"),
    [
        # a unit spends its time on seeks and transfers: 3 + 2.5 = 5.5 -> 6, seeks the larger part
        ({"iops": 3.0, "bandwidth": 2.5, "capacity": 2.5, "minimum": 2.0, "puts": 0.0}, 6, "iops"),
        ({"iops": 1.0, "bandwidth": 2.0, "capacity": 0.0, "minimum": 1.0, "puts": 0.0}, 3, "bandwidth"),
        ({"iops": 1.0, "bandwidth": 1.0, "capacity": 0.0, "minimum": 1.0, "puts": 0.0}, 2, "iops"),  # a tie
        ({"iops": 1.0, "bandwidth": 1.0, "capacity": 7.2, "minimum": 1.0, "puts": 0.0}, 8, "capacity"),
        ({"iops": 0.5, "bandwidth": 0.2, "capacity": 0.1, "minimum": 4.0, "puts": 0.0}, 4, "minimum"),
        # the need also rounds to 4: the need is named, not the minimum size
        ({"iops": 0.5, "bandwidth": 3.0, "capacity": 0.0, "minimum": 4.0, "puts": 0.0}, 4, "bandwidth"),
        # 2 + 1e-12 of rounding noise is 2 units, not 3
        ({"iops": 1.0, "bandwidth": 1.0 + 1e-12, "capacity": 0.0, "minimum": 1.0, "puts": 0.0}, 2, "bandwidth"),
        # nothing to carry: one unit still
        ({"iops": 0.0, "bandwidth": 0.0, "capacity": 0.0, "minimum": 0.0, "puts": 0.0}, 1, "iops"),
    ],
)
def test_size(loads: dict[str, float], units: int, limiting: str) -> None:
    assert storage.size(loads) == (units, limiting)


def test_supply_of_a_preset() -> None:
    # 2 Gen4 NVMe drives (presets: 900,000 IOPS at 4 KiB, 6.5 GB/s): 13 GB/s and
    # 2 x 94,666 = 189,332 reads/s at 64 KiB (13e9 / 65,536 = 198,364 does not bind)
    s = storage.supply_of("nvme-gen4", 2, 64 * KIB)
    o = storage.option("nvme-gen4")
    assert (o.iops, o.read_bytes_per_s) == (900_000.0, 6.5e9)
    assert s.bytes_per_s == 13e9
    assert s.iops == pytest.approx(189_332, abs=2)
    assert s.latency_s == o.latency_s and not s.counts_requests
    assert s.option == "nvme-gen4" and s.source.startswith(o.label)
    # as many as needed: unconstrained
    auto = storage.supply_of("nvme-gen4", None, 64 * KIB)
    assert (auto.bytes_per_s, auto.iops) == (inf, inf)


def test_supply_of_an_object_store_read_by_several_nodes() -> None:
    # S3 per prefix (presets): 5,500 GETs/s, no bandwidth limit, 12.5 GB/s per client, 30 ms + 85 MB/s
    # per stream. 2 prefixes read by 3 nodes: 3 x 12.5 = 37.5 GB/s; 2 x 5,500 = 11,000 GETs/s;
    # a 64 KiB read takes 0.030 + 65,536 / 85e6 = 0.0307710 s
    o = storage.option("aws-s3-standard")
    assert (o.iops, o.read_bytes_per_s, o.client_bytes_per_s) == (5500.0, inf, 12.5e9)
    assert (o.latency_s, o.stream_bytes_per_s) == (0.030, 85e6)
    s = storage.supply_of("aws-s3-standard", 2, 64 * KIB, clients=3)
    assert (s.bytes_per_s, s.iops) == (37.5e9, 11_000.0)
    assert s.latency_s == pytest.approx(0.0307710, rel=1e-6) and s.counts_requests
    assert s.source == f"{o.label} ({o.verified}); latency {o.sources['latency']} + read size / 85 MB/s per stream"
    # one client by default: 12.5 GB/s
    assert storage.supply_of("aws-s3-standard", 2, 64 * KIB).bytes_per_s == 12.5e9
    nvme = storage.option("nvme-gen4")
    assert storage.supply_of("nvme-gen4", 1, 64 * KIB).source == (
        f"{nvme.label} ({nvme.verified}); latency {nvme.sources['latency']}"
    )


def test_supply_of_an_nfs_server_quoted_at_64_kib() -> None:
    # nfs-25gbe (presets): 100,000 IOPS quoted at 64 KiB, 2.8 GB/s; at 64 KiB one server does
    # 100,000 reads/s (2.8e9 / 65,536 = 42,725 reads/s of bandwidth bind first)
    o = storage.option("nfs-25gbe")
    assert (o.iops, o.iops_request_bytes, o.read_bytes_per_s) == (100_000.0, 65_536.0, 2.8e9)
    s = storage.supply_of("nfs-25gbe", 1, 64 * KIB)
    assert s.iops == pytest.approx(2.8e9 / 65536, rel=1e-12)
    # at 4 KiB: 1 / (1/100,000 - 65,536/2.8e9 + 4,096/2.8e9) = 1 / (1e-5 - 2.3406e-5 + 1.4629e-6) < 0:
    # the fixed cost is clamped at 0, the transfer alone: 2.8e9 / 4,096 = 683,594 reads/s
    assert storage.supply_of("nfs-25gbe", 1, 4096).iops == pytest.approx(2.8e9 / 4096, rel=1e-12)


def test_integer_inputs_do_not_overflow() -> None:
    # a sweep axis passed as integers must not wrap around in int64 (max 9.2e18): 3e9 x 4e9 = 1.2e19
    three, four = np.array([3_000_000_000]), np.array([4_000_000_000])
    assert float(np.asarray(storage.supply_bytes_per_s(three, four, 1, inf))[0]) == pytest.approx(1.2e19, rel=1e-12)
    assert float(np.asarray(storage.supply_bytes_per_s(1, inf, three, four))[0]) == pytest.approx(1.2e19, rel=1e-12)


def test_unknown_option_names_the_storage_field() -> None:
    with pytest.raises(InputError) as err:
        storage.option("floppy")
    assert err.value.field == "storage"


# ------------------------------------------------------------------ drives bought as a system
# RAID 6: d data drives + 2 parity per group of up to 10 data drives (10 + 2); a mirror: 2d;
# erasure k+m: whole stripes of k data and m parity drives, ceil(d / k) x (k + m).


@pytest.mark.parametrize(
    ("data_drives", "scheme"),
    [
        (0, "mirror"),  # nothing to hold still gets a protected pair
        (1, "mirror"),
        (2, "mirror"),  # the last count mirrored: RAID 6 of 2 + 2 would cost as much
        (3, "raid6"),  # the first count in RAID 6: 3 + 2 = 5 drives, not 6 mirrored
        (40, "raid6"),
    ],
)
def test_default_protection_mirrors_up_to_two_data_drives(data_drives: int, scheme: str) -> None:
    assert storage.default_protection(data_drives) == scheme


@pytest.mark.parametrize(
    ("scheme", "data", "parity"),
    [
        ("erasure 4+2", 4, 2),
        ("erasure 8+2", 8, 2),
        ("erasure 8+3", 8, 3),
        ("erasure 10+4", 10, 4),
        ("erasure 16+4", 16, 4),
    ],
)
def test_erasure_scheme_names_data_and_parity_drives(scheme: str, data: int, parity: int) -> None:
    assert storage._erasure(scheme) == (data, parity)


@pytest.mark.parametrize(
    ("data_drives", "scheme", "raw"),
    [
        # no protection: the data drives alone; at least one drive even for nothing
        (0, "raid0", 1),
        (1, "raid0", 1),
        (7, "raid0", 7),
        # a mirror doubles: 1 -> 2, 3 -> 6; nothing still needs one pair
        (0, "mirror", 2),
        (1, "mirror", 2),
        (3, "mirror", 6),
        # RAID 6, 2 parity per group of up to 10: 1 + 2 = 3; 2 + 2 = 4; 9 + 2 = 11; 10 + 2 = 12;
        # 11 = 10 + 1 in two groups: 11 + 4 = 15; 20 in two: 24; 21 in three: 21 + 6 = 27;
        # 130 in thirteen: 130 + 26 = 156
        (0, "raid6", 3),
        (1, "raid6", 3),
        (2, "raid6", 4),
        (9, "raid6", 11),
        (10, "raid6", 12),
        (11, "raid6", 15),
        (20, "raid6", 24),
        (21, "raid6", 27),
        (130, "raid6", 156),
        # erasure 4+2: 1 to 4 data drives fill one stripe of 6; 5 to 8 two (12); 9 three (18)
        (1, "erasure 4+2", 6),
        (4, "erasure 4+2", 6),
        (5, "erasure 4+2", 12),
        (9, "erasure 4+2", 18),
        # 8+2: 8 -> 10, 9 -> 2 x 10 = 20; 8+3: 8 -> 11, 17 -> 3 x 11 = 33
        (8, "erasure 8+2", 10),
        (9, "erasure 8+2", 20),
        (8, "erasure 8+3", 11),
        (17, "erasure 8+3", 33),
        # 10+4: 10 -> 14, 11 -> 28; 16+4: 3 -> 20 (a whole stripe), 17 -> 40
        (10, "erasure 10+4", 14),
        (11, "erasure 10+4", 28),
        (3, "erasure 16+4", 20),
        (17, "erasure 16+4", 40),
    ],
)
def test_protected_drives(data_drives: int, scheme: str, raw: int) -> None:
    got = storage.protected_drives(data_drives, scheme)
    assert got == raw and isinstance(got, int)


@pytest.mark.parametrize(
    ("raw", "scheme", "usable"),
    [
        (7, "raid0", 7.0),
        (1, "raid0", 1.0),
        # a mirror holds half: 6 -> 3, 2 -> 1
        (6, "mirror", 3.0),
        (2, "mirror", 1.0),
        # RAID 6 groups of up to 12 drives (10 + 2), 2 of each group hold parity:
        # 3 -> 1; 4 -> 2; 11 -> 9; 12 -> 10; 15 = 12 + 3 -> 10 + 1 = 11; 24 -> 20; 27 -> 21;
        # 156 = 13 groups of 12 -> 130
        (3, "raid6", 1.0),
        (4, "raid6", 2.0),
        (11, "raid6", 9.0),
        (12, "raid6", 10.0),
        (15, "raid6", 11.0),
        (24, "raid6", 20.0),
        (27, "raid6", 21.0),
        (156, "raid6", 130.0),
        # erasure k+m: k of every k + m drives hold data: 6 x 4/6 = 4, 18 x 4/6 = 12,
        # 20 x 8/10 = 16, 33 x 8/11 = 24, 28 x 10/14 = 20, 40 x 16/20 = 32
        (6, "erasure 4+2", 4.0),
        (18, "erasure 4+2", 12.0),
        (20, "erasure 8+2", 16.0),
        (33, "erasure 8+3", 24.0),
        (28, "erasure 10+4", 20.0),
        (40, "erasure 16+4", 32.0),
    ],
)
def test_usable_drives(raw: int, scheme: str, usable: float) -> None:
    got = storage.usable_drives(raw, scheme)
    assert got == pytest.approx(usable, rel=1e-12) and isinstance(got, float)


@pytest.mark.parametrize("scheme", storage.PROTECTIONS)
def test_usable_drives_hold_the_data_drives_they_were_bought_for(scheme: str) -> None:
    # sizing buys protected_drives(d) and counts usable_drives of them as capacity: never less than
    # the d data drives; exactly d except for erasure, whose last stripe is whole (ceil(d / k) x k)
    k = {"erasure 4+2": 4, "erasure 8+2": 8, "erasure 8+3": 8, "erasure 10+4": 10, "erasure 16+4": 16}.get(scheme, 1)
    for d in range(1, 41):
        usable = storage.usable_drives(storage.protected_drives(d, scheme), scheme)
        assert usable == pytest.approx(math.ceil(d / k) * k, rel=1e-12), (scheme, d)


def test_an_unknown_protection_is_refused_by_the_scenario_field() -> None:
    # protected_drives parses only the names in PROTECTIONS; the Scenario field refuses the rest
    from calc import Scenario

    with pytest.raises(InputError) as err:
        Scenario(protection="raid5")
    assert err.value.field == "protection"
    assert "raid6" in err.value.message and "erasure 8+2" in err.value.message


@pytest.mark.parametrize(
    ("endurance", "drives", "yearly", "amplification", "years"),
    [
        # 4 PM9A3 7.68 TB drives (nvme-gen4: 1 DWPD x 5 years = 14,016 TB each), 1 PB written a year,
        # mirrored (x 2): 1e15 x 2 / 4 = 5e14 B a year per drive; 14,016e12 / 5e14 = 28.032 years
        (14_016e12, 4.0, 1e15, 2.0, 28.032),
        # the same bytes on one unprotected drive: 14,016e12 / 1e15 = 14.016 years
        (14_016e12, 1.0, 1e15, 1.0, 14.016),
        # RAID 6 of 10 + 2 (x 12/10) on 12 drives: 1e15 x 1.2 / 12 = 1e14; 14,016e12 / 1e14 = 140.16 years
        (14_016e12, 12.0, 1e15, 1.2, 140.16),
        # 0 drives counts as one (no division by zero): 14,016e12 / 1e15 = 14.016 years
        (14_016e12, 0.0, 1e15, 1.0, 14.016),
        # a nearly idle array: 2 B a year over 4 drives = 0.5 B each; 1e12 / 0.5 = 2e12 years
        (1e12, 4.0, 2.0, 1.0, 2e12),
        # nothing written: never worn out
        (14_016e12, 4.0, 0.0, 2.0, inf),
    ],
)
def test_wear_out_years(endurance: float, drives: float, yearly: float, amplification: float, years: float) -> None:
    assert storage.wear_out_years(endurance, drives, yearly, amplification) == pytest.approx(years, rel=1e-12)


def test_drive_class_of_a_preset_entry() -> None:
    def entry(data: dict[str, object]) -> catalog._Entry:
        return catalog._Entry("storage.yaml", "my-drive", data)

    assert storage._drive_class(entry({})) == ""  # not given: no class
    assert storage._drive_class(entry({"drive_class": "data-centre"})) == "data-centre"
    assert storage._drive_class(entry({"drive_class": "consumer"})) == "consumer"
    with pytest.raises(PresetError) as err:
        storage._drive_class(entry({"drive_class": "enterprise"}))
    assert err.value.field == "storage.yaml: my-drive: drive_class"
    assert err.value.message == "unknown 'enterprise'; accepted: consumer, data-centre"
    # the presets: a PM9A3 is a data-centre drive, an 870 EVO a consumer one (storage.yaml sources)
    assert storage.option("nvme-gen4").drive_class == "data-centre"
    assert storage.option("sata-ssd").drive_class == "consumer"


def test_protection_names_outside_the_list_are_refused_by_field() -> None:
    """Defect: protected_drives(3, "raid5") raised IndexError, "erasure 0+2" ZeroDivisionError."""
    from calc.errors import InputError

    for bad in ("raid5", "erasure x+y", "erasure 0+2"):
        with pytest.raises(InputError) as e:
            storage.protected_drives(3, bad)
        assert e.value.field == "protection"
    # One drive cannot hold RAID 6 data (it needs 2 parity drives first): 0, not -1.
    assert storage.usable_drives(1, "raid6") == 0.0


FSX = storage.MetadataScaling(
    ((1.2, 1500.0), (2.4, 3000.0), (4.8, 6000.0), (12.0, 12000.0)), 24.0, 12000.0, 192000.0, 2.0
)
"""FSx for Lustre SSD AUTOMATIC mode (TiB, Metadata IOPS; 12,000 per 24 TiB, at most 192,000; 2 opens
or closes per Metadata IOPS): the User Guide's table."""


@pytest.mark.parametrize(
    ("tib", "ops"),
    [
        (1.2, 1500 * 2),  # the smallest file system: 1,500 Metadata IOPS x 2 opens or closes each
        (2.0, 1500 * 2),  # below the 2.4 TiB step
        (2.4, 3000 * 2),
        (9.6, 6000 * 2),  # 4.8-9.6 TiB share one step
        (45.6, 12000 * 2),  # 12-45.6 TiB: 12,000; floor(45.6 / 24) = 1 block = 12,000 too
        (48.0, 24000 * 2),  # 2 whole 24 TiB blocks x 12,000
        (240.0, 120000 * 2),  # 10 blocks: the worked cluster's file system
        (400.0, 192000 * 2),  # 16 blocks would be 192,000 = the maximum; 400 / 24 = 16.7 -> capped
        (math.inf, 192000 * 2),  # as many as needed: the maximum
    ],
)
def test_metadata_ops_scaled_follows_the_fsx_automatic_table(tib: float, ops: float) -> None:
    assert storage.metadata_ops_scaled(tib, FSX) == ops


@pytest.mark.parametrize(
    ("ops", "tib"),
    [
        (3000.0, 1.2),  # 1,500 Metadata IOPS: the smallest step
        (3001.0, 2.4),  # just past it: the next step
        (24000.0, 12.0),  # 12,000 IOPS: the 12 TiB step, cheaper than one 24 TiB block
        (24002.0, 48.0),  # 12,001 IOPS: two 24 TiB blocks
        (48002.0, 72.0),  # 24,001 IOPS: ceil(24,001 / 12,000) = 3 blocks
        (384000.0, 384.0),  # the maximum: 16 blocks
        (384002.0, 0.0),  # past the maximum: no size serves it (the caller says so)
    ],
)
def test_units_for_metadata_ops_buys_the_smallest_size_that_serves(ops: float, tib: float) -> None:
    assert storage.units_for_metadata_ops(ops, FSX) == tib


def test_fsx_presets_scale_metadata_with_capacity() -> None:
    o = storage.option("aws-fsx-lustre-ssd-1000")
    assert o.metadata_ops == 3000.0  # at its 1.2 TiB minimum
    assert o.metadata_ops_at(240.0) == 240000.0
    # 120,000 Metadata IOPS = 10 blocks of 24,000 GiB = 240,000 GiB = 234.375 TiB (AWS's "240 TiB")
    assert o.units_for_metadata(240000.0) == 234.375
    # Without a scaling table the service's figure holds at every size.
    s3 = storage.option("aws-s3-standard")
    assert s3.metadata_ops_at(1.0) == s3.metadata_ops_at(100.0) == 5500.0
    assert s3.units_for_metadata(1e6) == 0.0


def test_metadata_scaling_entries_are_checked() -> None:
    def parse(data: dict[str, object]) -> object:
        return storage._metadata_scaling(catalog._Entry("storage.yaml", "my-fs", data))

    good = {"steps": [[1.2, 1500]], "block": [24, 12000], "max_iops": 192000, "ops_per_iops": 2}
    assert parse({}) is None
    assert parse({"metadata_scaling": good}) == storage.MetadataScaling(((1.2, 1500.0),), 24.0, 12000.0, 192000.0, 2.0)
    for bad in (
        {**good, "block": [24]},  # not a pair
        {**good, "steps": []},
        {**good, "steps": [[2.4, 3000], [1.2, 1500]]},  # falling
        {**good, "max_iops": -1},
        {k: v for k, v in good.items() if k != "ops_per_iops"},
        [1, 2],
    ):
        with pytest.raises(PresetError) as err:
            parse({"metadata_scaling": bad})
        assert err.value.field == "storage.yaml: my-fs: metadata_scaling"
    with pytest.raises(PresetError) as err:
        parse({"metadata_scaling": good, "metadata_ops": 1500})
    assert err.value.field == "storage.yaml: my-fs: metadata_ops"
    assert err.value.message == "give metadata_scaling or metadata_ops, not both"
    accepted = "a mapping {steps: [[units, IOPS], ...], block: [units, IOPS], max_iops: N, ops_per_iops: N}"
    with pytest.raises(PresetError) as err:
        parse({"metadata_scaling": {**good, "block": [24]}})
    assert err.value.message == f"expected [units, IOPS] with positive numbers, got [24]; accepted: {accepted}"
    with pytest.raises(PresetError) as err:
        parse({"metadata_scaling": {**good, "steps": [[2.4, 3000], [1.2, 1500]]}})
    assert err.value.message == "steps must rise in units and IOPS"
    with pytest.raises(PresetError) as err:
        parse({"metadata_scaling": {**good, "max_iops": True}})  # a YAML yes is not a number
    assert err.value.message == "max_iops and ops_per_iops must be positive numbers, got [True, 2]"


# ------------------------------------------------------------------ enclosures for bought drives


@pytest.mark.parametrize(
    ("drives", "mix"),
    [
        # Sizes: a 12-bay enclosure at $700 and a 60-bay one at $1,200 ($58.3 and $20 per bay).
        (0, (0, 0)),
        (1, (1, 0)),
        (2, (1, 0)),  # one 12-bay ($700), not a 60-bay shelf ($1,200)
        (12, (1, 0)),
        (13, (0, 1)),  # 2 x 12-bay = $1,400 > one 60-bay $1,200
        (60, (0, 1)),
        (61, (1, 1)),  # 60-bay + 12-bay = $1,900 < 2 x 60-bay = $2,400
        (72, (1, 1)),
        (73, (0, 2)),  # 60 + 2 x 12 = $2,600 > 2 x 60-bay = $2,400
        (120, (0, 2)),
        (600, (0, 10)),
    ],
)
def test_enclosure_mix_is_the_cheapest_cover(drives: int, mix: tuple[int, int]) -> None:
    assert storage.enclosure_mix(drives, [12, 60], [700.0, 1200.0]) == mix


def test_enclosure_mix_ties_go_to_fewer_enclosures_and_tries_every_size() -> None:
    # Equal price per bay ($50): 24 drives in one 24-bay ($1,200) rather than two 12-bay ($600 each).
    assert storage.enclosure_mix(24, [12, 24], [600.0, 1200.0]) == (0, 1)
    # Three sizes, 4/14/60 bays at $2,500/$4,000/$6,000. 18 drives: 14 + 4 = $6,500, 2 x 14 = $8,000,
    # 5 x 4 = $12,500, one 60-bay = $6,000: the 60-bay.
    assert storage.enclosure_mix(18, [4, 14, 60], [2500.0, 4000.0, 6000.0]) == (0, 0, 1)
    # 5 drives: 2 x 4-bay = $5,000, one 14-bay = $4,000: the 14-bay.
    assert storage.enclosure_mix(5, [4, 14, 60], [2500.0, 4000.0, 6000.0]) == (0, 1, 0)
    # 3 drives: the 4-bay alone, $2,500.
    assert storage.enclosure_mix(3, [4, 14, 60], [2500.0, 4000.0, 6000.0]) == (1, 0, 0)
    with pytest.raises(ValueError, match="one price per enclosure size"):
        storage.enclosure_mix(3, [4, 14], [1.0])


def test_hdds_are_housed_by_count_in_the_catalog_enclosures() -> None:
    # presets/enclosures.yaml: a new 24-bay 3.5" server (ServerSimply's 7,826.96 EUR x 1.0605 =
    # $8,300.49) + a new 2 x 25 GbE NIC $400 + 2 new switch ports (an SN2010 at $5,378.64 / 18 ports =
    # $298.81 each) + 2 SFP28 DACs ($40 each) = $9,378.11; the 60-bay JBOD $800 (used: no new price
    # found) + the host's 9300-8e HBA $405 + 2 SFF-8644 cables at 100 CNY / 6.45 = $15.50 = $1,236.
    hdd = storage.option("hdd-7200")
    small, large = hdd.enclosures
    assert (small.bays, large.bays) == (24, 60) and (small.attach, large.attach) == ("network", "sas")
    assert small.price_usd == pytest.approx(round(7826.96 * 1.0605, 2) + 400 + 2 * 5378.64 / 18 + 2 * 40, abs=0.01)
    assert small.price_usd == pytest.approx(9378.11)
    assert large.price_usd == pytest.approx(800 + 405 + 2 * 15.5)
    assert large.unpriced == ()
    # New parts by default (issue 28): the JBOD is priced only as a used listing, so any count goes in
    # new 24-bay servers, shared or not: 2 or 13 -> one, 25 -> two, 61 -> three ($28,134.33), although
    # one used JBOD ($1,236) would hold 13 for less.
    assert [(x.bays, k) for x, k in storage.house(hdd, 2)] == [(24, 1)]
    assert [(x.bays, k) for x, k in storage.house(hdd, 2, shared=True)] == [(24, 1)]
    assert [(x.bays, k) for x, k in storage.house(hdd, 13, shared=True)] == [(24, 1)]
    assert [(x.bays, k) for x, k in storage.house(hdd, 25, shared=True)] == [(24, 2)]
    assert [(x.bays, k) for x, k in storage.house(hdd, 13)] == [(24, 1)]
    assert storage.housing_usd(storage.house(hdd, 61)) == pytest.approx(3 * 9378.11, abs=0.03)
    # The used JBOD only where no new enclosure can: one drive needing 6 GB/s overfills the server's
    # 2 x 25 GbE (5.6 GB/s) but not the JBOD's x8 HBA slot (7.8 GB/s).
    assert [(x.bays, k) for x, k in storage.house(hdd, 1, need_bytes_per_s=6e9)] == [(60, 1)]
    held, unpriced = storage.describe_housing(storage.house(hdd, 1, need_bytes_per_s=6e9))
    assert held.startswith('1 x 60-bay 3.5" SAS3 JBOD cabled to the host ($1,236.00: 1 x jbod-60lff $800.00')
    assert unpriced == ""
    # A workstation's M.2 drives go in its own slots: nothing bought.
    assert storage.house(storage.option("nvme-gen5-prosumer"), 2) == ()


def test_enclosure_catalog_refuses_bad_entries() -> None:
    parts, encs = storage.enclosure_catalog()
    assert all(x.bays >= 1 and x.parts for x in encs.values())
    assert all(math.isfinite(p.price_usd) or p.no_price_reason for p in parts.values())
    assert all(p.source and p.price_date for p in parts.values() if math.isfinite(p.price_usd))

    def entry(data: dict[str, object]) -> catalog._Entry:
        return catalog._Entry("storage.yaml", "my-drive", data)

    with pytest.raises(PresetError) as err:
        storage._enclosures_of(entry({"enclosures": ["jbod-6O-lff"]}))
    assert err.value.field == "storage.yaml: my-drive: enclosures" and "unknown enclosure" in err.value.message
    with pytest.raises(PresetError) as err:
        storage._parts_of(entry({"network_parts": {"port-25g": 0}}), "network_parts", {"port-25g": 0})
    assert err.value.field == "storage.yaml: my-drive: network_parts.port-25g"
    with pytest.raises(PresetError) as err:
        storage._parts_of(entry({"network_parts": {"port-25g": 1.5}}), "network_parts", {"port-25g": 1.5})
    assert "whole count" in err.value.message


def test_a_part_without_a_sourced_price_is_named_not_counted() -> None:
    # A JBOD $800 and 2 cables with no sourced price: the enclosure costs $800 (the cables add 0),
    # and the description names the 2 cables and why they are not priced.
    jbod = storage.Part("jbod", "a JBOD", 800.0, "", "2025", "3P", "a listing")
    cable = storage.Part("cable", "a cable", math.nan, "no listing found", "", "", "")
    box = storage.Enclosure("j", "60-bay JBOD", 60, "sas", ((jbod, 1), (cable, 2)), "why")
    assert box.price_usd == 800.0
    assert box.unpriced == ((cable, 2),)
    held, missing = storage.describe_housing(((box, 2),))
    assert held == "2 x 60-bay JBOD ($1,600.00: 2 x jbod $1,600.00, 4 x cable not priced)"
    assert missing == "4 x cable (no listing found)"


@pytest.mark.parametrize(
    ("bays", "link", "drives", "need", "usable"),
    [
        (14, 22.5e9, 6, 22.88e9, 5),  # 22.5 / (22.88 / 6 = 3.813 GB/s a drive) = 5.9 -> 5
        (4, 22.5e9, 6, 22.88e9, 4),  # the link carries 5, the chassis has 4
        (12, 5.6e9, 2, 0.19e9, 12),  # a slow demand: the bays bind
        (14, 22.5e9, 1, 30e9, 0),  # one drive's share is more than the link: none
        (60, 7.8e9, 60, 17.1e9, 27),  # 60 HDDs at 285 MB/s behind one host HBA (7.8 GB/s): 27.4 -> 27
        (14, math.inf, 6, 22.88e9, 14),  # no link figure: the bays
        (14, 22.5e9, 6, 0.0, 14),  # no demand
    ],
)
def test_usable_bays_spread_drives_so_the_links_carry_the_demand(
    bays: int, link: float, drives: int, need: float, usable: int
) -> None:
    assert storage.usable_bays(bays, link, drives, need) == usable


def test_nvme_drives_are_spread_over_enough_servers_for_their_nics() -> None:
    """Defect: 6 PM9A3s that must move 22.88 GB/s sat in one 14-bay server whose 2 x 100 GbE NIC
    carries 22.5 GB/s (presets/enclosures.yaml: 2 x 100 Gb/s / 8 x 90 %)."""
    o = storage.option("nvme-gen4")
    assert [(x.bays, k) for x, k in storage.house(o, 6)] == [(10, 1)]  # no demand given: the bays bind
    # With the demand: the new 10-bay server is full at floor(22.5 / (22.88 / 6)) = 5 drives, so 6 take
    # 2 of them, carrying 45 GB/s. One: the server 6,994 EUR x 1.1739 = $8,210.26 + NIC $1,182.50 + 2 new
    # 100G switch ports ($18,990 / 32 = $593.44 each) + 2 DACs $125 = $10,829.64.
    assert [(x.bays, k) for x, k in storage.house(o, 6, 22.88e9)] == [(10, 2)]
    one = round(6994 * 1.1739, 2) + 1182.5 + 2 * 593.44 + 2 * 125
    assert one == pytest.approx(10829.64)
    assert storage.housing_usd(storage.house(o, 6, 22.88e9)) == pytest.approx(2 * one)
    # One drive's share above every link: no enclosure serves.
    assert storage.house(o, 1, 30e9) == ()


def test_enclosure_mix_fills_with_the_cheapest_per_bay_for_large_counts() -> None:
    # 1,000 HDDs, 12-bay servers at $701.34 ($58.45 a bay) or 60-bay JBODs at $1,236 ($20.60 a bay):
    # 17 JBODs hold 1,020 for $21,012; 16 JBODs + 4 servers (1,008) cost $19,776 + $2,805.36 = $22,581.36.
    assert storage.enclosure_mix(1000, [12, 60], [701.34, 1236.0]) == (0, 17)
    # Equal price per bay ($50): the larger size fills, so 42 x 24-bay (1,008 bays, $50,400), not
    # 11 x 24-bay + 62 x 12-bay at the same $50,400 in 73 enclosures.
    assert storage.enclosure_mix(1000, [12, 24], [600.0, 1200.0]) == (0, 42)


@pytest.mark.parametrize(
    ("endurance", "yearly", "years", "drives"),
    [
        (14_016e12, 1e15, 3.0, 3 / 14.016),  # 1 PB a year for 3 years on 14,016 TB-rated PM9A3s
        (13 * 14_016e12, 290.37e15, 3.0, 290.37 * 3 / (13 * 14.016)),  # 1T checkpoints: 4.78 NFS servers
        (math.nan, 1e15, 3.0, 0.0),  # no rating: not a sizing axis
        (14_016e12, 0.0, 3.0, 0.0),  # nothing written
    ],
)
def test_drives_for_endurance(endurance: float, yearly: float, years: float, drives: float) -> None:
    assert storage.drives_for_endurance(endurance, yearly, years) == pytest.approx(drives, rel=1e-12)


def test_a_shared_array_goes_in_servers_on_the_network_not_a_jbod_on_one_host() -> None:
    # 13 HDDs needing 0.3 GB/s each (3.9 GB/s): shared by several nodes (or holding checkpoints), only the
    # servers every node mounts will do: one, 24 bays >= 13 and 3.9 <= 5.6 GB/s. One drive needing 6 GB/s
    # fits no server's link (5.6 GB/s), so alone it goes in the (used) JBOD on the host's 7.8 GB/s HBA,
    # and shared it has no housing at all.
    hdd = storage.option("hdd-7200")
    assert [(x.bays, x.attach, k) for x, k in storage.house(hdd, 13, 3.9e9, shared=True)] == [(24, "network", 1)]
    assert [(x.bays, x.attach, k) for x, k in storage.house(hdd, 1, 6e9)] == [(60, "sas", 1)]
    assert storage.house(hdd, 1, 6e9, shared=True) == ()


# ------------------------------------------------------------------ ratings and orderable systems (issue 28)


def test_drives_for_workload_counts_reads_and_writes() -> None:
    # sd-latent on-prem: 7 x hdd-7200 each moving 976 TB a year = 6,832 TB a year in all; at the
    # Exos rating of 550 TB a year: 6,832 / 550 = 12.42 drives (13 bought), not 7
    assert st.drives_for_workload(6_832e12, 0.0, 1.0, 550e12) == pytest.approx(12.4218, rel=1e-4)
    # writes land twice on a mirror: 100 TB read + 50 TB written x 2 = 200 TB -> 200 / 550
    assert st.drives_for_workload(100e12, 50e12, 2.0, 550e12) == pytest.approx(200 / 550)
    # no rating (SSDs): the workload axis does not size
    assert st.drives_for_workload(1e15, 1e15, 1.0, math.nan) == 0.0
    # one drive of 13 in that array: (6,832 TB) / 13 = 525.5 TB a year, within 550
    assert st.workload_per_drive_bytes_per_year(6_832e12, 0.0, 1.0, 13) == pytest.approx(525.54e12, rel=1e-4)


def test_endurance_over_the_drives_own_rating_period() -> None:
    # 1 PB written a year on PM9A3 7.68 TB drives rated 14,016 TB over 5 years (2,803.2 TB a
    # year each): 1,000 / 2,803.2 = 0.357 drives. Spread over a 3-year amortisation instead it
    # would have been 1,000 x 3 / 14,016 = 0.214: 5/3 of the rated rate per drive.
    assert st.drives_for_endurance(14_016e12, 1e15, 5.0) == pytest.approx(1000 / 2803.2)
    # the HDD figure the issue found: 2,750 TB over 5 years allows 550 TB a year, not 2,750 / 3 = 917
    assert st.drives_for_endurance(2_750e12, 550e12, 5.0) == pytest.approx(1.0)


def test_every_bought_drive_has_a_rating_with_its_period() -> None:
    for name, o in st.options().items():
        if o.kind != "local" or o.site != "on-prem":  # rented instance drives are the provider's to replace
            continue
        if o.name.startswith("hdd"):
            assert o.workload_bytes_per_year == 550e12, name  # Seagate's 550 TB a year
            assert "workload_rating" in o.sources
        else:
            assert math.isfinite(o.endurance_bytes) and o.endurance_years > 0, name
            assert "endurance" in o.sources


def test_fsx_is_ordered_in_its_steps() -> None:
    # 1.2, 2.4, then +2.4 TiB: 3 TiB -> 4.8 TiB; 1 -> 1.2; 2.4 -> 2.4; 7.3 -> 9.6
    assert st.orderable_units(3.0, (1.2, 2.4), 2.4) == pytest.approx(4.8)
    assert st.orderable_units(1.0, (1.2, 2.4), 2.4) == 1.2
    assert st.orderable_units(2.4, (1.2, 2.4), 2.4) == 2.4
    assert st.orderable_units(7.3, (1.2, 2.4), 2.4) == pytest.approx(9.6)
    assert st.orderable_units(7.3, (), 0.0) == 7.3
    assert st.orderable_units(9.0, (1.2, 2.4), 0.0) == math.inf
    o = st.option("aws-fsx-lustre-ssd-1000")
    units = st.orderable_units(3.0, o.size_steps, o.size_increment)
    # 4,800 GiB = 4.6875 TiB x 1.0995 TB x $0.60 per GB-month = $3,092.4 a month, not 3 TiB's $1,979
    # (issue 38: AWS's sizes are GiB; 4.8 TiB = 4,915 GiB, $3,166.5, is not one it sells)
    assert units * o.capacity_bytes / 1e9 * o.price_per_gb_month == pytest.approx(3092.38, rel=1e-5)


def test_every_fsx_ssd_and_managed_lustre_tier_is_offered() -> None:
    names = st.options()
    for tier in (125, 250, 500, 1000):
        assert names[f"aws-fsx-lustre-ssd-{tier}"].read_bytes_per_s == tier * 1e6
    lustre = {n: o for n, o in names.items() if n.startswith("gcp-managed-lustre")}
    assert sorted(o.read_bytes_per_s for o in lustre.values()) == [125e6, 250e6, 500e6, 1000e6]
    # the 125 tier: $0.145 per GiB-month = 0.145 / 1.073741824 = $0.1350 per GB; at least 72,000 GiB
    t125 = names["gcp-managed-lustre-125"]
    assert t125.price_per_gb_month == pytest.approx(0.145 / 1.073741824, rel=1e-3)
    assert t125.min_units == pytest.approx(72_000 / 1024, rel=1e-4)


def test_io2_throughput_is_bought_as_iops() -> None:
    o = st.option("aws-ebs-io2")
    assert o.throughput_io_bytes == 256 * 1024
    # 2.86 GB/s streamed in 256 KiB units: 2.86e9 / 262,144 = 10,910 IOPS billed at $0.065 = $709
    iops = st.billed_iops(100.0, 2.86e9, o.throughput_io_bytes)
    assert iops == pytest.approx(10_910.0, rel=1e-4)
    assert iops * o.price_per_iops_month == pytest.approx(709.2, rel=1e-3)
    # small random reads bind when they are more: 20,000 reads/s of 4 KiB
    assert st.billed_iops(20_000.0, 20_000 * 4096, o.throughput_io_bytes) == 20_000.0
    assert st.billed_iops(5.0, 1e9, math.nan) == 5.0


def test_scratch_caps_and_nfs_servers_within_their_bays() -> None:
    opts = st.options()
    assert opts["gcp-parallelstore"].scratch and not opts["gcp-managed-lustre"].scratch
    assert opts["gcp-pd-ssd"].client_bytes_per_s == 1200 * 2**20
    for n in ("nfs-10gbe", "nfs-25gbe", "nfs-100gbe"):
        o = opts[n]
        drive = opts[o.server_drive]
        # the new 10-bay Supermicro AS-1115CS-TNR, its bays full (was 13-14 drives in a used 14-bay SR635)
        assert o.server_drives == o.server_bays == 10, n
        assert "new Supermicro AS-1115CS-TNR" in o.label and "used" not in o.label, n
        # raw capacity = the drives in it; endurance = theirs added
        assert o.capacity_bytes == pytest.approx(o.server_drives * drive.capacity_bytes, rel=1e-3), n
        assert o.endurance_bytes == pytest.approx(o.server_drives * drive.endurance_bytes), n
    # 10 x 7.68 TB in RAID 6 groups of at most 10 + 2: one 8 + 2 group, 8 data drives; at 80 %
    # fill 8 x 7.68 x 0.8 = 49.152 TB of data (13 drives: 2 groups, 9 data drives, 9 x 7.68 x 0.8 = 55.296 TB)
    assert st.server_usable_bytes(10, 7.68e12, "raid6", 0.8) == pytest.approx(49.152e12)
    assert st.server_usable_bytes(13, 7.68e12, "raid6", 0.8) == pytest.approx(55.296e12)
    # drives + new server + NIC: 10 x $2,737.50 = $27,375 + $8,210.26, + X710 $250 = $35,835.26,
    # + E810 $400 = $35,985.26, + ConnectX-6 Dx $1,182.50 = $36,767.76
    assert opts["nfs-10gbe"].purchase_price == pytest.approx(35_835.26)
    assert opts["nfs-25gbe"].purchase_price == pytest.approx(35_985.26)
    assert opts["nfs-100gbe"].purchase_price == pytest.approx(36_767.76)
    # power: 10 drives x 14 W + the chassis 254 W + the NIC (7, 12, 20 W) = 401, 406, 414 W
    assert [opts[n].watts for n in ("nfs-10gbe", "nfs-25gbe", "nfs-100gbe")] == [401, 406, 414]


def test_server_drives_preset_errors() -> None:
    e = catalog._Entry("storage.yaml", "x", {"server_drives": {"drive": "nvme-gen4", "count": 26, "bays": 14}})
    with pytest.raises(PresetError, match="do not fit the chassis' 14 bays"):
        st._server_drives(e)
    e = catalog._Entry("storage.yaml", "x", {"server_drives": {"drive": "nvme-gen4", "count": 2}})
    with pytest.raises(PresetError, match="accepted"):
        st._server_drives(e)
    e = catalog._Entry("storage.yaml", "x", {"size_steps": {"sizes": [2.4, 1.2], "increment": 2.4}})
    with pytest.raises(PresetError, match="rising"):
        st._size_steps(e)
    e = catalog._Entry("storage.yaml", "x", {"scratch": "yes"})
    with pytest.raises(PresetError, match="true or false"):
        st._flag(e, "scratch")


def test_tiered_egress_and_power() -> None:
    # 60,000 GB out of AWS: 10,000 x 0.09 + 40,000 x 0.085 + 10,000 x 0.07 = 900 + 3,400 + 700 = $5,000
    assert st.egress_usd(60_000.0, st.EGRESS_TIERS["aws"]) == pytest.approx(5000.0)
    # 200,000 GB: 900 + 3,400 + 100,000 x 0.07 + 50,000 x 0.05 = 900 + 3,400 + 7,000 + 2,500 = $13,800
    assert st.egress_usd(200_000.0, st.EGRESS_TIERS["aws"]) == pytest.approx(13_800.0)
    assert st.egress_usd(1_000.0, st.EGRESS_TIERS["gcp"]) == pytest.approx(120.0)
    assert st.egress_usd(0.0, st.EGRESS_TIERS["aws"]) == 0.0
    # 400 W around the clock at $0.13/kWh: 0.4 kW x 730 h x 0.13 = $37.96 a month
    assert st.power_usd_per_month(400.0, 0.13) == pytest.approx(37.96)


def test_servers_state_their_drive_bays() -> None:
    dgx = catalog.server("DGX-H100")
    assert (dgx.drive_bays, dgx.bays_used, dgx.free_bays, dgx.bay_form_factor) == (8, 8, 0, "U.2")
    assert catalog.server("DGX-A100").free_bays == 4
    assert catalog.server("aws-p5.48xlarge").drive_bays == 0


def test_support_power_and_part_condition() -> None:
    # $192,471 of servers at 12 % a year: 192,471 x 0.12 / 12 = $1,924.71 a month
    assert st.support_usd_per_month(192_471.0) == pytest.approx(1924.71)
    assert st.support_usd_per_month(1000.0, 0.0) == 0.0
    parts, encs = st.enclosure_catalog()
    # the 24-bay server: chassis 300 W + NIC 12 W + 2 switch ports x 6 W + 2 DACs x 0 W = 324 W
    assert encs["server-24lff-25g"].watts == 324.0
    # 7 x hdd-7200 (9.5 W) + that server: 66.5 + 324 = 390.5 W at $0.13/kWh: 0.3905 x 730 x 0.13 = $37.06
    assert st.power_usd_per_month(7 * 9.5 + 324.0, st.USD_PER_KWH) == pytest.approx(37.058, rel=1e-4)
    # every part says whether it is a used listing or new; chassis with no new price are used, labelled so
    assert all(p.condition in st.CONDITIONS for p in parts.values())
    assert parts["jbod-60lff"].condition == "used" and parts["dac-25g"].condition == "new"
    assert (parts["server-24lff"].condition, parts["server-24lff"].used_price_usd) == ("new", 438.0)
    e = catalog._Entry("enclosures.yaml", "x", {"condition": "refurb"})
    with pytest.raises(PresetError, match="accepted: new, used"):
        st._condition(e)
    e = catalog._Entry("enclosures.yaml", "x", {"condition": "new", "watts": 10})
    with pytest.raises(PresetError, match="need a source"):
        st._condition(e)
    # issue 28 item 4: the E810 NIC is bought new at $400; the $150 used listing stays as the labelled
    # alternative, never the price. A used part cannot carry a "used" alternative, and one without a
    # source is refused by field.
    nic = parts["nic-2x25g"]
    assert (nic.condition, nic.price_usd, nic.used_price_usd) == ("new", 400.0, 150.0) and "eBay" in nic.used_source
    assert math.isnan(parts["jbod-60lff"].used_price_usd)
    # the switch ports are bought new (an SN2010's 18 x 25G ports for $5,378.64; an SN2700's 32 x 100G
    # for $18,990), their used eBay figures ($800 / 48, $800 / 32) kept as the labelled alternative
    p25, p100 = parts["port-25g"], parts["port-100g"]
    assert (p25.condition, p25.price_usd, p25.used_price_usd) == ("new", 298.81, 16.67)
    assert p25.price_usd == pytest.approx(5378.64 / 18, abs=0.005)
    assert (p100.condition, p100.price_usd, p100.used_price_usd) == ("new", 593.44, 25.0)
    assert p100.price_usd == pytest.approx(18990 / 32, abs=0.005)
    used = {"price": 1, "price_date": "2026", "source": "x"}
    assert st._used_alternative(catalog._Entry("e", "x", {"condition": "new", "used": used}))["used_price_usd"] == 1.0
    with pytest.raises(PresetError, match="x: used"):
        st._used_alternative(catalog._Entry("e", "x", {"condition": "used", "used": used}))
    with pytest.raises(PresetError, match="used: source"):
        st._used_alternative(catalog._Entry("e", "x", {"condition": "new", "used": {"price": 1, "price_date": "d"}}))


def test_cloud_file_systems_in_their_gib_step_tables() -> None:
    """Issue 38: sizes that can be ordered. FSx HDD (40 MB/s/TiB) comes in multiples of 1,800 GiB =
    1.7578125 TiB: 146 TiB -> ceil(146 / 1.7578125 = 83.06) = 84 x 1,800 = 151,200 GiB = 147.66 TiB.
    FSx SSD: 1,200, 2,400, then +2,400 GiB; 149,914 GiB (146.4 "TiB" was 146,400 GiB, short of it)
    -> 2,400 + ceil(147,514 / 2,400 = 61.46) = 62 steps = 151,200 GiB. GCP Managed Lustre's 125 MBps/TiB
    tier: multiples of 72,000 GiB; 149,504 GiB -> 216,000 GiB."""
    hdd = st.option("aws-fsx-lustre-hdd-40")
    assert st.orderable_units(146.0, hdd.size_steps, hdd.size_increment) * 1024 == pytest.approx(151_200)
    assert st.orderable_units(1.0, hdd.size_steps, hdd.size_increment) * 1024 == pytest.approx(1_800)
    ssd = st.option("aws-fsx-lustre-ssd-125")
    assert st.orderable_units(149_914 / 1024, ssd.size_steps, ssd.size_increment) * 1024 == pytest.approx(151_200)
    assert st.orderable_units(1_200 / 1024, ssd.size_steps, ssd.size_increment) * 1024 == pytest.approx(1_200)
    gcp = st.option("gcp-managed-lustre-125")
    assert st.orderable_units(149_504 / 1024, gcp.size_steps, gcp.size_increment) * 1024 == pytest.approx(216_000)
    assert gcp.min_units * 1024 == pytest.approx(72_000)
