"""Supply: which storage can serve a demand, how many units, at what cost (docs/model.md section 7).

    iops_at(r)   = 1 / (1 / iops + r / bandwidth)          (per unit, reads of r bytes)
    units        = max over axes of ceil(need / per-unit figure), within min/max units
    max_gpus     = floor(supply / demand per GPU)

Notes
-----
Datasheet IOPS are quoted at 4 KiB and deep queues; a read of r bytes also spends r/bandwidth
moving data, so IOPS at 64 KiB are far lower on SATA and HDD (a datasheet's 4 KiB IOPS include a 4 KiB transfer;
see iops_at_request). Per-unit figures add across units (striping across
drives, per-TiB scaling of FSx/Filestore/Lustre); a per-client cap and an aggregate cap bound
the sum.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from calc import catalog
from calc._types import Numeric, divide, floats, isfinite, isnan, maximum, minimum, quiet, where
from calc.checkpoint import save_with_reads
from calc.demand import METADATA_OPS_PER_OPEN
from calc.errors import InputError, PresetError
from calc.formula import formula


@dataclass(frozen=True)
class StorageOption:
    """One storage preset (presets/storage.yaml); NaN/inf mark figures not published."""

    name: str
    label: str
    kind: str
    unit: str
    iops: float
    iops_request_bytes: float
    iops_queue_depth: float
    read_bytes_per_s: float
    latency_s: float
    capacity_bytes: float
    min_units: float
    max_units: float
    client_bytes_per_s: float
    aggregate_iops: float
    price_per_gb_month: float
    price_per_unit: float
    stream_bytes_per_s: float
    price_per_gb_read: float
    price_per_million_requests: float
    burst: str
    verified: str
    sources: dict[str, str] = field(default_factory=dict)
    purchase_price: float = math.nan
    price_per_iops_month: float = 0.0
    price_per_mbps_month: float = 0.0
    free_iops: float = 0.0
    free_bytes_per_s: float = 0.0
    no_price_reason: str = ""
    price_region: str = ""
    price_date: str = ""
    metadata_ops: float = math.inf
    metadata_scaling: MetadataScaling | None = None
    protocol: str = ""
    write_bytes_per_s: float = math.inf
    put_requests: float = math.inf
    price_per_gb_write: float = 0.0
    price_per_million_writes: float = 0.0
    drive_class: str = ""
    endurance_bytes: float = math.nan
    endurance_years: float = math.nan
    attach_limit: float = math.inf
    enclosures: tuple[Enclosure, ...] = ()
    network_parts: tuple[tuple[Part, int], ...] = ()
    workload_bytes_per_year: float = math.nan
    """An HDD's rated annual workload, reads plus writes [bytes a year] (NaN: not rated)."""
    scratch: bool = False
    """A scratch tier (no replication, data lost with a server): never holds checkpoints."""
    cluster_fs: bool = False
    """A block volume several nodes may attach, but share only through a cluster-aware file system."""
    size_steps: tuple[float, ...] = ()
    """Orderable sizes [units], first the listed ones, then repeats of the last step (FSx)."""
    size_increment: float = 0.0
    """The increment past the listed sizes [units] (0: any size)."""
    throughput_io_bytes: float = math.nan
    """Bytes one billed IOPS moves (io2 counts I/O in 256 KiB units): throughput is bought as IOPS."""
    server_drives: int = 0
    """Drives inside one server of an nfs-* option (0: not a server of drives)."""
    server_drive: str = ""
    """The storage option those drives are (their capacity, ratings and price)."""
    server_bays: int = 0
    """Drive bays of that server's chassis."""
    watts: float = math.nan
    """Power one unit draws in use [W] (bought drives and servers; NaN: not stated)."""
    form_factor: str = ""
    """A drive's form factor (3.5", 2.5", U.2, M.2): the bays it fits (servers.yaml ``drive_bays``)."""
    declared_site: str = ""
    monthly_fee: float = 0.0
    """A flat charge a month for the whole option, whatever its units [USD a month]: the lease,
    support contract or chargeback of a system you already pay for (``monthly_fee`` in its YAML)."""

    @property
    def site(self) -> str:
        """Where the option lives: its ``site`` key, else ``aws``, ``gcp``, ``azure`` (name
        prefix), ``on-prem``, or ``any`` for node RAM, which every site has."""
        if self.declared_site:
            return self.declared_site
        if self.kind == "ram":
            return "any"
        prefix = self.name.split("-", 1)[0].lower()
        return prefix if prefix in CLOUDS else "on-prem"

    @property
    def sold_by_capacity(self) -> bool:
        """Bought by size, not by the piece: a unit of capacity (TiB, TB, GiB, GB) or orderable
        sizes (``size_steps``), so a fractional count is a real order (4.6875 TiB of FSx); drives,
        servers, volumes, prefixes and buckets are whole things."""
        return self.unit in CAPACITY_UNITS or bool(self.size_steps)

    @property
    def priced(self) -> bool:
        """A monthly or a purchase price is published for this option."""
        return math.isfinite(self.price_per_gb_month) or math.isfinite(self.purchase_price) or self.monthly_fee > 0

    @property
    def counts_requests(self) -> bool:
        """Object stores limit every request (GET); file systems and drives limit seeks."""
        return self.kind == "object"

    def service_time_s(self, request_bytes: float) -> float:
        """Time one synchronous reader spends per read: latency + bytes / stream rate [s]."""
        return self.latency_s + request_bytes / self.stream_bytes_per_s

    def iops_at(self, request_bytes: float) -> float:
        """Random reads/s of one unit at ``request_bytes`` per read [1/s]."""
        return float(iops_at_request(self.iops, self.read_bytes_per_s, request_bytes, self.iops_request_bytes))

    def metadata_ops_at(self, units: float) -> float:
        """Metadata operations/s the service runs at ``units`` units [1/s]: ``metadata_ops``, or,
        where the service scales with size, ``metadata_ops_scaled`` of ``metadata_scaling``."""
        m = self.metadata_scaling
        if m is None:
            return self.metadata_ops
        return metadata_ops_scaled(units, m)

    def units_for_metadata(self, ops_per_s: float) -> float:
        """Fewest units whose metadata service runs ``ops_per_s`` [units]; 0 when the service
        does not scale with size or cannot reach it at any size (the limit is then said)."""
        m = self.metadata_scaling
        if m is None or ops_per_s <= 0:
            return 0.0
        return units_for_metadata_ops(ops_per_s, m)


@dataclass(frozen=True)
class MetadataScaling:
    """A metadata service provisioned by size: Metadata IOPS by the units bought (see
    ``metadata_ops_scaled``), and the file operations each Metadata IOPS runs."""

    steps: tuple[tuple[float, float], ...]
    block_units: float
    block_iops: float
    max_iops: float
    ops_per_iops: float


def metadata_ops_scaled(units: float, m: MetadataScaling) -> float:
    """Metadata operations/s of a service that provisions Metadata IOPS by size [1/s].

    ``iops = min(max(step(units), floor(units / block_units) x block_iops), max_iops)`` where
    ``step`` is the IOPS of the largest step size at or below ``units`` (the first step below
    it), then x ``ops_per_iops`` file operations (an open or a close) per Metadata IOPS.

    FSx for Lustre SSD in AUTOMATIC mode [1]: 1.2 TiB -> 1,500 Metadata IOPS, 2.4 -> 3,000,
    4.8-9.6 -> 6,000, 12-45.6 -> 12,000, from 48 TiB 12,000 per 24 TiB, at most 192,000; a
    Metadata IOPS runs 2 file creates, opens or closes a second [1]. So 240 TiB runs
    floor(240 / 24) x 12,000 = 120,000 Metadata IOPS = 240,000 opens or closes a second.

    References
    ----------
    [1] Amazon FSx for Lustre User Guide, "Managing metadata performance" and "File system
        metadata performance", as tabulated in tylertitsworth/skills aws-fsx/SKILL.md (3P, read
        2026-11-23); valid Metadata IOPS 1,500, 3,000, 6,000, 12,000 and multiples of 12,000 up to
        192,000: FSx API reference, FileSystemLustreMetadataConfiguration.
    """
    step = m.steps[0][1]
    for size, iops in m.steps:
        if units >= size - 1e-9:
            step = iops
    # As many units as needed (units = inf) reach the maximum.
    blocks = math.floor(units / m.block_units + 1e-9) * m.block_iops if math.isfinite(units) else m.max_iops
    return min(max(step, blocks), m.max_iops) * m.ops_per_iops


def units_for_metadata_ops(ops_per_s: float, m: MetadataScaling) -> float:
    """Fewest units whose ``metadata_ops_scaled`` reaches ``ops_per_s`` [units]; 0 above the
    service's maximum (no size reaches it: the caller says so).

    The smallest step that carries it, or else whole blocks: ceil(IOPS / block_iops) x block_units.
    """
    iops = ops_per_s / m.ops_per_iops
    if iops > m.max_iops:
        return 0.0
    fits = [size for size, step in m.steps if step >= iops]
    blocks = math.ceil(iops / m.block_iops - 1e-9) * m.block_units
    return min([*fits, blocks])


@functools.cache
def catalog_options() -> dict[str, StorageOption]:
    """The storage presets of presets/storage.yaml by name."""
    return _options_from(catalog.load_mapping("storage.yaml", "storage option"), "storage.yaml")


OWN: dict[tuple[str, int, int], StorageOption] = {}
"""Storage options of your own already parsed, by (path, modification time, size): a file is read
again once it changes. Never a list of options to rank: each plan ranks only its own (``options``)."""

OWN_SUFFIXES = (".yaml", ".yml")
"""A storage name ending so is a file of your own (``storage="mine.yaml"``)."""


def is_own(name: object) -> bool:
    """Whether a storage name is the path of a YAML file of your own."""
    return isinstance(name, str) and name.strip().lower().endswith(OWN_SUFFIXES)


def check_own_inside(path: str, root: Path) -> str:
    """``path`` when it names a storage file of your own inside ``root``; a page shared by several
    people reads no file that a link names elsewhere on its server.

    Raises
    ------
    PresetError
        The file lies outside ``root``, naming the field and the folder.
    """
    if is_own(path) and not (root / path.strip()).resolve().is_relative_to(root.resolve()):
        raise PresetError(
            "storage", f"{path.strip()!r} is outside {root}: this page reads storage files of your own there only"
        )
    return path


def options(*own: str | None) -> dict[str, StorageOption]:
    """All storage options by name: the presets, then the options of your own named in ``own``
    (the plan's storage, a cluster's shared storage), ranked, priced and bought exactly like the
    presets. Another user's file never joins a ranking it was not named in."""
    extra = {name.strip(): own_option(name.strip()) for name in own if is_own(name) and name}
    return catalog_options() | extra if extra else catalog_options()


def own_option(path: str) -> StorageOption:
    """A storage option of your own from a YAML file, in the presets/storage.yaml format: one
    entry ``NAME: {label, kind, unit, iops, read_bandwidth, write_bandwidth, latency, capacity,
    price_per_gb_month, purchase_price or monthly_fee (or no_price_reason), site, protection, verified,
    sources}``, as ``python -m calc measure-storage --write-preset`` writes. Its name is the path
    as given; it is parsed once per version of the file (``OWN``).

    Raises
    ------
    PresetError
        The file is missing or malformed, naming the file, the entry and the field.
    """
    file = Path(path)
    if not file.is_file():
        raise PresetError("storage", f"no file {path!r} (a name ending .yaml is a storage option of your own)")
    stat = file.stat()
    key = (path, stat.st_mtime_ns, stat.st_size)
    if key in OWN:
        return OWN[key]
    raw = catalog.load_yaml(file, max_bytes=100_000)
    if not isinstance(raw, dict) or len(raw) != 1:
        raise PresetError(file.name, "expected one entry, NAME: {label, kind, unit, read_bandwidth, ...}")
    data = next(iter(raw.values()))
    if isinstance(data, dict) and "site" not in data:
        raise PresetError(f"{file.name}: site", f"missing; accepted: {', '.join(SITES)}")
    try:
        (o,) = _options_from({path: data}, file.name).values()
    except PresetError as e:  # name the entry by its key in the file, not by the path it is known by
        field = e.field.replace(f"{file.name}: {path}", f"{file.name}: {next(iter(raw))}")
        raise PresetError(field, e.message) from None
    OWN[key] = o
    return o


SOURCED = (
    "iops",
    "read_bandwidth",
    "latency",
    "capacity",
    "client_bandwidth",
    "aggregate_iops",
    "price_per_gb_month",
    "price_per_unit",
    "max_units",
    "stream_bandwidth",
    "price_per_gb_read",
    "price_per_million_requests",
    "purchase_price",
    "price_per_iops_month",
    "price_per_mbps_month",
    "metadata_ops",
    "metadata_scaling",
    "write_bandwidth",
    "put_requests",
    "price_per_gb_write",
    "price_per_million_writes",
    "drive_class",
    "endurance",
    "attach_limit",
    "network_parts",
    "workload_rating",
    "scratch",
    "cluster_fs",
    "size_steps",
    "throughput_io",
    "server_drives",
    "watts",
    "monthly_fee",
)
"""The figures of a storage option that need a source (``sources``) when given."""


def _opt(e: catalog._Entry, key: str, kind: Any, default: float) -> float:
    # Prices and free allowances may be 0; sizes and rates must be positive.
    zero_ok = key.startswith(("price", "free_", "purchase"))
    return e.quantity(key, kind, positive=not zero_ok) if key in e.data else default


def _rate_field(e: catalog._Entry, key: str) -> float:
    # "unlimited": the provider publishes no limit (object stores); the request rate,
    # the per-connection rate and the client's link bind instead.
    return math.inf if e.get(key) == "unlimited" else e.quantity(key, "bytes_per_s")


def _buyer_fields(e: catalog._Entry) -> dict[str, Any]:
    """What a buyer orders by (issue 28): ratings, steps, billed IOPS, flags, power, form factor, drives."""
    steps, increment = _size_steps(e)
    return {
        "workload_bytes_per_year": _opt(e, "workload_rating", "bytes", math.nan),
        "scratch": _flag(e, "scratch"),
        "cluster_fs": _flag(e, "cluster_fs"),
        "size_steps": steps,
        "size_increment": increment,
        "throughput_io_bytes": _opt(e, "throughput_io", "bytes", math.nan),
        "watts": _opt(e, "watts", "count", math.nan),
        "form_factor": e.text("form_factor", ""),
        **_server_drives(e),
    }


def _option(name: str, e: catalog._Entry) -> StorageOption:
    """One storage option from its entry."""

    def opt(key: str, kind: Any, default: float) -> float:
        return _opt(e, key, kind, default)

    def rate(key: str) -> float:
        return _rate_field(e, key)

    sources = e.get("sources", None)
    if sources is None:
        raise PresetError(
            e.where("sources"),
            "missing: a mapping of each figure given to where it comes from (read_bandwidth: the vendor's "
            "quote, 2026-11), as presets/storage.yaml writes it",
        )
    if not isinstance(sources, dict):
        raise PresetError(e.where("sources"), "expected a mapping field: source")
    scaling = _metadata_scaling(e)
    min_units = opt("min_units", "count", 1.0)

    return StorageOption(
        name=str(name),
        label=e.text("label") + _protected(e),
        kind=e.text("kind"),
        unit=e.text("unit"),
        iops=opt("iops", "count_per_s", math.nan),
        iops_request_bytes=opt("iops_request", "bytes", 4096.0),
        iops_queue_depth=opt("iops_queue_depth", "count", math.nan),
        read_bytes_per_s=rate("read_bandwidth"),
        latency_s=e.quantity("latency", "seconds"),
        capacity_bytes=opt("capacity", "bytes", math.inf),
        min_units=min_units,
        max_units=opt("max_units", "count", math.inf),
        client_bytes_per_s=opt("client_bandwidth", "bytes_per_s", math.inf),
        aggregate_iops=opt("aggregate_iops", "count_per_s", math.inf),
        price_per_gb_month=opt("price_per_gb_month", "count", math.nan),
        price_per_unit=opt("price_per_unit", "count", math.nan),
        stream_bytes_per_s=opt("stream_bandwidth", "bytes_per_s", math.inf),
        price_per_gb_read=opt("price_per_gb_read", "count", 0.0),
        price_per_million_requests=opt("price_per_million_requests", "count", 0.0),
        burst=e.text("burst", ""),
        verified=e.text("verified"),
        sources={str(k): str(v) for k, v in sources.items()},
        purchase_price=opt("purchase_price", "count", opt("price_per_unit", "count", math.nan)),
        price_per_iops_month=opt("price_per_iops_month", "count", 0.0),
        monthly_fee=opt("monthly_fee", "count", 0.0),
        price_per_mbps_month=opt("price_per_mbps_month", "count", 0.0),
        free_iops=opt("free_iops", "count", 0.0),
        free_bytes_per_s=opt("free_bandwidth", "bytes_per_s", 0.0),
        no_price_reason=e.text("no_price_reason", ""),
        price_region=str(e.get("price_region", "")),
        price_date=str(e.get("price_date", "")),
        # A service provisioned by size states what its smallest size runs.
        metadata_ops=metadata_ops_scaled(min_units, scaling)
        if scaling
        else opt("metadata_ops", "count_per_s", math.inf),
        metadata_scaling=scaling,
        protocol=e.text("protocol", ""),
        write_bytes_per_s=rate("write_bandwidth"),
        put_requests=opt("put_requests", "count_per_s", math.inf),
        price_per_gb_write=opt("price_per_gb_write", "count", 0.0),
        price_per_million_writes=opt("price_per_million_writes", "count", 0.0),
        drive_class=_drive_class(e),
        endurance_bytes=opt("endurance", "bytes", math.nan),
        endurance_years=opt("endurance_years", "count", math.nan),
        attach_limit=opt("attach_limit", "count", math.inf),
        enclosures=_enclosures_of(e),
        network_parts=_parts_of(e, "network_parts", e.get("network_parts", {})),
        **_buyer_fields(e),
        declared_site=_site(e),
    )


def _options_from(raw: dict[Any, Any], file: str) -> dict[str, StorageOption]:
    """Storage options parsed from a mapping of name -> entry (``file`` names them in errors)."""
    out = {}
    for name, data in raw.items():
        e = catalog._Entry(file, str(name), data)
        o = _option(str(name), e)
        if not o.priced and not o.no_price_reason:
            raise PresetError(e.where("no_price_reason"), "an option with no price must say why")
        missing = [k for k in SOURCED if k in e.data and k not in o.sources]
        if missing:
            raise PresetError(e.where("sources"), f"no source for {', '.join(missing)}")
        out[o.name] = o
    for o in out.values():
        if o.server_drive and o.server_drive not in out:
            raise PresetError(f"{file}: {o.name}: server_drives", f"unknown drive {o.server_drive!r}")
    return out


CLOUDS = ("aws", "gcp", "azure")

CAPACITY_UNITS = ("TiB", "TB", "GiB", "GB")
"""Option units that are capacity (``StorageOption.sold_by_capacity``): a fractional count is an order."""
"""Cloud sites, named by the prefix of their storage options and servers."""

SITES = ("on-prem", *CLOUDS)
"""Where a job runs and its storage lives (Scenario ``site``)."""

DRIVE_CLASSES = ("consumer", "data-centre")
"""A bought drive's class (storage.yaml ``drive_class``): consumer parts lack power-loss
protection and are rated for a fraction of a data-centre drive's writes."""

YEAR_S = 365.25 * 86400
"""A year [s], for endurance ratings (TB written per year of warranty)."""


def _metadata_scaling(e: catalog._Entry) -> MetadataScaling | None:
    # metadata_scaling: {steps: [[units, Metadata IOPS], ...], block: [units, Metadata IOPS],
    # max_iops: N, ops_per_iops: N}; metadata_ops then gives the smallest size's ops/s.
    raw = e.get("metadata_scaling", None)
    if raw is None:
        return None
    accepted = "a mapping {steps: [[units, IOPS], ...], block: [units, IOPS], max_iops: N, ops_per_iops: N}"
    where = e.where("metadata_scaling")

    def pair(v: object) -> tuple[float, float]:
        if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, int | float) and x > 0 for x in v)):
            raise PresetError(where, f"expected [units, IOPS] with positive numbers, got {v!r}; accepted: {accepted}")
        return float(v[0]), float(v[1])

    if not isinstance(raw, dict) or set(raw) != {"steps", "block", "max_iops", "ops_per_iops"}:
        raise PresetError(where, f"got {raw!r}; accepted: {accepted}")
    steps = raw["steps"]
    if not isinstance(steps, list) or not steps:
        raise PresetError(where, f"steps: got {steps!r}; accepted: {accepted}")
    table = tuple(pair(v) for v in steps)
    if list(table) != sorted(table):
        raise PresetError(where, "steps must rise in units and IOPS")
    block = pair(raw["block"])
    tops = [raw["max_iops"], raw["ops_per_iops"]]
    if not all(isinstance(x, int | float) and not isinstance(x, bool) and x > 0 for x in tops):
        raise PresetError(where, f"max_iops and ops_per_iops must be positive numbers, got {tops!r}")
    m = MetadataScaling(table, block[0], block[1], float(tops[0]), float(tops[1]))
    if "metadata_ops" in e.data:
        raise PresetError(e.where("metadata_ops"), "give metadata_scaling or metadata_ops, not both")
    return m


def _flag(e: catalog._Entry, key: str) -> bool:
    v = e.get(key, False)
    if not isinstance(v, bool):
        raise PresetError(e.where(key), f"got {v!r}; accepted: true or false")
    return v


def _size_steps(e: catalog._Entry) -> tuple[tuple[float, ...], float]:
    # size_steps: {sizes: [1.2, 2.4], increment: 2.4} in the option's units.
    raw = e.get("size_steps", None)
    if raw is None:
        return (), 0.0
    accepted = "a mapping {sizes: [positive numbers, rising], increment: a positive number}"
    ok = (
        isinstance(raw, dict)
        and set(raw) == {"sizes", "increment"}
        and isinstance(raw["sizes"], list)
        and raw["sizes"]
        and all(
            isinstance(x, int | float) and not isinstance(x, bool) and x > 0 for x in [*raw["sizes"], raw["increment"]]
        )
        and raw["sizes"] == sorted(raw["sizes"])
    )
    if not ok:
        raise PresetError(e.where("size_steps"), f"got {raw!r}; accepted: {accepted}")
    return tuple(float(x) for x in raw["sizes"]), float(raw["increment"])


def _server_drives(e: catalog._Entry) -> dict[str, Any]:
    # server_drives: {drive: <storage option>, count: N, bays: N}: the drives inside one server.
    raw = e.get("server_drives", None)
    if raw is None:
        return {}
    accepted = "a mapping {drive: a storage option name, count: whole number, bays: whole number >= count}"
    ok = (
        isinstance(raw, dict)
        and set(raw) == {"drive", "count", "bays"}
        and isinstance(raw["drive"], str)
        and all(isinstance(raw[k], int) and not isinstance(raw[k], bool) and raw[k] > 0 for k in ("count", "bays"))
    )
    if not ok:
        raise PresetError(e.where("server_drives"), f"got {raw!r}; accepted: {accepted}")
    if raw["count"] > raw["bays"]:
        raise PresetError(e.where("server_drives"), f"{raw['count']} drives do not fit the chassis' {raw['bays']} bays")
    return {"server_drives": raw["count"], "server_drive": raw["drive"], "server_bays": raw["bays"]}


def _site(e: catalog._Entry) -> str:
    site = e.text("site", "")
    if site and site not in (*SITES, "any"):
        raise PresetError(e.where("site"), f"unknown {site!r}; accepted: {', '.join(SITES)}, any")
    return site


def _protected(e: catalog._Entry) -> str:
    """A system's own protection (its capacity is then usable capacity), shown in its label."""
    scheme = e.text("protection", "")
    if scheme and scheme not in PROTECTIONS:
        raise PresetError(e.where("protection"), f"unknown {scheme!r}; accepted: {', '.join(PROTECTIONS)}")
    return f" ({scheme}; capacity usable after it)" if scheme else ""


def _drive_class(e: catalog._Entry) -> str:
    c = e.text("drive_class", "")
    if c and c not in DRIVE_CLASSES:
        raise PresetError(e.where("drive_class"), f"unknown {c!r}; accepted: {', '.join(DRIVE_CLASSES)}")
    return c


def option(name: str) -> StorageOption:
    """A storage preset by name (case-insensitive; unknown names list close matches), or a
    storage option of your own by the path of its YAML file (``own_option``)."""
    if is_own(name):
        return own_option(name.strip())
    table = options()
    return table[catalog.lookup(name, table, "storage option", "storage")]


@dataclass(frozen=True)
class Supply:
    """What a storage option with a number of units delivers to the nodes that read it."""

    option: str
    bytes_per_s: float
    iops: float
    latency_s: float
    counts_requests: bool
    source: str
    write_bytes_per_s: float = math.inf


def supply(o: StorageOption, units: float | None, request_bytes: float, clients: float = 1.0) -> Supply:
    """Read and write bandwidth [bytes/s], random reads/s at ``request_bytes`` [1/s] and read
    service time [s] of ``units`` units of ``o`` read by ``clients`` nodes.

    The one model of what a store delivers: ``supply_bytes_per_s`` (units x per-unit rate, capped
    per client) and ``supply_iops`` (units x reads/s at the read size, capped per system and by the
    bandwidth), the functions the plan's storage stage evaluates on the same per-unit figures
    (calc.stages.evaluate_storage); the sizing engine judges its rows with this. ``units=None``
    means "as many as needed": unconstrained bandwidth and IOPS, real latency.
    """
    if units is None:
        bw = iops = write = math.inf
    else:
        bw = float(supply_bytes_per_s(units, o.read_bytes_per_s, clients, o.client_bytes_per_s))
        write = float(supply_bytes_per_s(units, o.write_bytes_per_s, clients, o.client_bytes_per_s))
        iops = float(
            supply_iops(units, o.iops, o.read_bytes_per_s, request_bytes, o.aggregate_iops, bw, o.iops_request_bytes)
        )
    stream = (
        f" + read size / {o.stream_bytes_per_s / 1e6:g} MB/s per stream" if math.isfinite(o.stream_bytes_per_s) else ""
    )
    return Supply(
        o.name,
        bw,
        iops,
        o.service_time_s(request_bytes),
        o.counts_requests,
        f"{o.label} ({o.verified}); latency {o.sources.get('latency', '')}{stream}",
        write,
    )


def supply_of(name: str, units: float | None, request_bytes: float, clients: float = 1.0) -> Supply:
    """``supply`` of the storage option named ``name`` (a preset, or a YAML file of your own)."""
    return supply(option(name), units, request_bytes, clients)


def random_reads(o: StorageOption, read_iops: float, file_opens_per_s: float) -> float:
    """Reads/s that cost a seek or a request: every request on an object store, else one per
    file opened (reads further into a file or shard stream sequentially) [1/s]."""
    return read_iops if o.counts_requests else file_opens_per_s


def unit_loads(
    o: StorageOption,
    read_bytes_per_s: float,
    read_iops: float,
    request_bytes: float,
    dataset_bytes: float,
    file_opens_per_s: float | None = None,
    write_bytes_per_s: float = 0.0,
    writes_overlap_reads: bool = True,
) -> dict[str, float]:
    """Fractional units busy on each axis.

    ``iops``: seeks (or requests) x their fixed cost 1/iops; ``bandwidth``: bytes read / read
    rate with bytes written / write rate as ``calc.checkpoint.save_with_reads`` combines them:
    added when writes run beside the reads (an async checkpoint drain), the larger of the two
    when they take turns (a blocking save stops training, and its reads, while it runs);
    ``capacity``: dataset / unit capacity;
    ``minimum``: the option's smallest size. A unit spends time on both seeks and transfer,
    so units = ceil(max(iops + bandwidth, capacity, minimum)).
    """
    rnd = random_reads(o, read_iops, read_iops if file_opens_per_s is None else file_opens_per_s)
    reading = read_bytes_per_s / o.read_bytes_per_s
    writing = write_bytes_per_s / o.write_bytes_per_s
    return {
        "iops": rnd / o.iops if math.isfinite(o.iops) else 0.0,
        "bandwidth": float(save_with_reads(reading, writing, writes_overlap_reads)),
        "capacity": dataset_bytes / o.capacity_bytes if math.isfinite(o.capacity_bytes) else 0.0,
        "minimum": o.min_units,
        # Object stores cap PUTs per prefix or bucket apart from GETs: one per part written.
        "puts": write_bytes_per_s / WRITE_REQUEST_BYTES / o.put_requests,
        # A metadata service provisioned by size (FSx AUTOMATIC) grows with the units bought.
        "metadata": o.units_for_metadata(
            (read_iops if file_opens_per_s is None else file_opens_per_s) * METADATA_OPS_PER_OPEN.get(o.protocol, 0.0)
        ),
    }


WRITE_REQUEST_BYTES = 16 * 2**20
"""Bytes per write request to an object store [B]: a 16 MB multipart part, the size AWS's
"Best Practices Design Patterns: Optimizing Amazon S3 Performance" (use byte-range fetches)
gives as typical for parts and ranges (8 or 16 MB), counted in MiB as S3 clients do."""


def _axes(loads: dict[str, float]) -> dict[str, float]:
    busy = loads["iops"] + loads["bandwidth"]
    return {
        "iops" if loads["iops"] >= loads["bandwidth"] else "bandwidth": busy,
        "capacity": loads["capacity"],
        "minimum": loads["minimum"],
        "write requests": loads["puts"],
        "metadata": loads.get("metadata", 0.0),
        "endurance": loads.get("endurance", 0.0),
        "workload": loads.get("workload", 0.0),
        # A restart reads while nothing else runs: its own axis, not added to the steady reads.
        "restore read": loads.get("restore", 0.0),
    }


def size(loads: dict[str, float]) -> tuple[int, str]:
    """Whole units needed and the limiting axis (iops, bandwidth, capacity, minimum, write requests,
    metadata, endurance, an HDD's rated workload or the restore read)."""
    totals = _axes(loads)
    limiting = max(totals, key=lambda k: (math.ceil(totals[k] - 1e-9), k != "minimum", totals[k]))
    return max(1, math.ceil(max(totals.values()) - 1e-9)), limiting


def units_needed(loads: dict[str, float]) -> float:
    """The largest axis's load, unrounded [units]: what an option sold in steps rounds up to its next step."""
    return max(_axes(loads).values())


# ------------------------------------------------------------------ supply, vectorised
# The plan and the sweep compute supply from per-unit figures here, in ``evaluate``, so
# that units, clients and read size can be swept like any other input.


@formula("storage_bytes_per_s", "min({storage_units_used} x {storage_unit_bytes_per_s}, {clients} x client cap)")
def supply_bytes_per_s(
    units: Numeric, unit_bytes_per_s: Numeric, clients: Numeric, client_bytes_per_s: Numeric
) -> Numeric:
    """Read bandwidth of ``units`` units read by ``clients`` nodes [bytes/s] (inf = unconstrained)."""
    with quiet(invalid="ignore"):
        total = floats(units) * unit_bytes_per_s
    # 0 units x an unlimited rate (NaN) is unlimited; where, not np.nan_to_num (~10 us on a scalar).
    return minimum(where(isnan(total), np.inf, total), floats(clients) * client_bytes_per_s)


def iops_at_request(
    unit_iops: Numeric, unit_bytes_per_s: Numeric, request_bytes: Numeric, iops_request_bytes: Numeric = 4096.0
) -> Numeric:
    """Random reads/s of one unit at ``request_bytes`` per read [1/s].

    A datasheet's IOPS, quoted at ``iops_request_bytes`` (4 KiB on most), include that read's
    own transfer: the fixed cost per read is 1/iops - r_quoted/bandwidth. A read of r bytes
    costs that plus r/bandwidth: iops(r) = 1 / (1/iops - r_quoted/bw + r/bw). NaN ``unit_iops``
    (none published) leaves the transfer time alone.
    """
    iops = floats(unit_iops)
    bw = floats(unit_bytes_per_s)
    with quiet(divide="ignore", invalid="ignore"):
        transfer = divide(floats(request_bytes), bw)
        seek = where(isfinite(iops), maximum(divide(1.0, iops) - divide(floats(iops_request_bytes), bw), 0.0), 0.0)
        rate: Numeric = divide(1.0, seek + transfer)  # no storage named: 1 / (0 + 0), unlimited
    return rate


@formula(
    "storage_iops",
    "min({storage_units_used} x 1 / (1/unit IOPS + {request_bytes} / unit bandwidth), system cap, "
    "{storage_bytes_per_s} / {request_bytes})",
)
def supply_iops(
    units: Numeric,
    unit_iops: Numeric,
    unit_bytes_per_s: Numeric,
    request_bytes: Numeric,
    aggregate_iops: Numeric,
    bytes_per_s: Numeric,
    iops_request_bytes: Numeric = 4096.0,
) -> Numeric:
    """Random reads/s of ``units`` units at ``request_bytes`` per read [1/s]."""
    with quiet(invalid="ignore", divide="ignore"):
        per_unit = iops_at_request(unit_iops, unit_bytes_per_s, request_bytes, iops_request_bytes)
        total = floats(units) * per_unit
        total = where(isnan(total), np.inf, total)  # 0 units x unlimited reads/s: unlimited
        by_bw = floats(bytes_per_s) / request_bytes
    return minimum(minimum(total, aggregate_iops), by_bw)


@formula("storage_latency_s", "{latency_rule}")
def read_service_time_s(latency_s: Numeric, request_bytes: Numeric, stream_bytes_per_s: Numeric) -> Numeric:
    """Time one synchronous reader spends per read: latency + bytes / stream rate [s]."""
    return floats(latency_s) + floats(request_bytes) / stream_bytes_per_s


# ------------------------------------------------------------------ drives bought as a system
# A storage lead buys drives as a protected array in an enclosure, filled below its size:
# the data drives hold the bytes at ``fill_limit``, parity or mirror drives are added by the
# protection scheme, and the drives sit in enclosures of ``enclosure_bays``.

PROTECTIONS = ("raid0", "mirror", "raid6", "erasure 4+2", "erasure 8+2", "erasure 8+3", "erasure 10+4", "erasure 16+4")
"""Protection schemes for bought drives (Scenario ``protection``): ``raid0`` is none (a stripe;
"none" itself means "not given" in the text codec), ``erasure k+m`` stripes k data and m parity drives."""

RAID6_DATA_PER_GROUP = 10
"""Data drives per RAID 6 group (10 + 2 parity): wider groups rebuild longer with two parity
drives; 8-10 data drives per double-parity group is the common practice (ZFS raidz2 and md
RAID 6 guidance, R)."""


def default_protection(data_drives: int) -> str:
    """Protection by count: one or two data drives are mirrored, more go into RAID 6 groups."""
    return "mirror" if data_drives <= 2 else "raid6"


def _erasure(scheme: str) -> tuple[int, int]:
    """(k, m) of an ``erasure k+m`` scheme; any other name is refused by the ``protection`` field."""
    if scheme not in PROTECTIONS or not scheme.startswith("erasure "):
        raise InputError("protection", f"unknown {scheme!r}; accepted: {', '.join(PROTECTIONS)}")
    k, m = scheme.split()[1].split("+")
    return int(k), int(m)


def protected_drives(data_drives: int, scheme: str) -> int:
    """Raw drives that hold ``data_drives`` of data under ``scheme`` [drives].

    raid0 (no protection): d; mirror: 2d; raid6: d + 2 per group of up to 10 data drives; erasure k+m: whole
    stripes, ceil(d / k) x (k + m) (a stripe needs all k + m drives even when d < k).
    """
    d = max(int(data_drives), 1)
    if scheme == "raid0":
        return d
    if scheme == "mirror":
        return 2 * d
    if scheme == "raid6":
        return d + 2 * math.ceil(d / RAID6_DATA_PER_GROUP)
    k, m = _erasure(scheme)
    return math.ceil(d / k) * (k + m)


def usable_drives(raw_drives: int, scheme: str) -> float:
    """Drives' worth of data that ``raw_drives`` hold under ``scheme`` (the inverse of protected_drives)."""
    if scheme == "raid0":
        return float(raw_drives)
    if scheme == "mirror":
        return raw_drives / 2
    if scheme == "raid6":
        groups = math.ceil(raw_drives / (RAID6_DATA_PER_GROUP + 2))
        return float(max(raw_drives - 2 * groups, 0))  # fewer than 3 drives hold no RAID 6 data
    k, m = _erasure(scheme)
    return raw_drives * k / (k + m)


def drives_for_endurance(endurance_bytes: float, written_bytes_per_year: float, rating_years: float) -> float:
    """Data drives whose writes stay within their rating [drives]: ``written a year / (endurance / rating_years)``.

    An SSD is rated for ``endurance_bytes`` written over its own warranty, ``rating_years`` (TBW =
    DWPD x capacity x 365 x years): the rate it may be written at is endurance / rating_years a
    year, whatever the buyer's amortisation (spreading 5 years of rated writes over 3 years of use
    would let each drive take 5/3 of its rated rate). Parity and mirror drives take the same share
    of the writes as data drives (``wear_out_years``), so the count of data drives sets the wear.
    0 with no rating or nothing written. Example: 1 PB written a year on 7.68 TB PM9A3 drives
    rated 14,016 TB over 5 years (2,803 TB a year each) needs 1,000 / 2,803.2 = 0.357 drives.
    """
    if not math.isfinite(endurance_bytes) or written_bytes_per_year <= 0:
        return 0.0
    return written_bytes_per_year * rating_years / endurance_bytes


def drives_for_workload(
    read_bytes_per_year: float, written_bytes_per_year: float, write_amplification: float, rated_bytes_per_year: float
) -> float:
    """Raw HDDs whose annual workload stays within its rating [drives].

        drives = (reads a year + writes a year x write amplification) / rated workload a year

    A nearline HDD is rated for a workload of reads plus writes a year (Seagate: 550 TB a year
    for Exos enterprise capacity drives, past which the stated MTBF no longer holds [1]); reads
    spread over every drive of an array (parity included), writes land ``write_amplification``
    times (2 for a mirror, (k + m) / k for parity). 0 with no rating or no traffic. Example:
    6,832 TB read a year on drives rated 550 TB a year needs 6,832 / 550 = 12.4 -> 13 drives.

    References
    ----------
    [1] Seagate, "Annualized Workload Rate", Knowledge Base article 005902en, seagate.com
        (read 2026-11-23): "<550 TB/year" for Enterprise Capacity drives, reads and writes together.
    """
    if not math.isfinite(rated_bytes_per_year) or rated_bytes_per_year <= 0:
        return 0.0
    moved = max(read_bytes_per_year, 0.0) + max(written_bytes_per_year, 0.0) * max(write_amplification, 1.0)
    return moved / rated_bytes_per_year


def workload_per_drive_bytes_per_year(
    read_bytes_per_year: float, written_bytes_per_year: float, write_amplification: float, drives: float
) -> float:
    """Bytes one drive of an array moves a year [bytes]: ``(reads + writes x amplification) / drives``."""
    moved = max(read_bytes_per_year, 0.0) + max(written_bytes_per_year, 0.0) * max(write_amplification, 1.0)
    return moved / max(drives, 1.0)


# ------------------------------------------------------------------ what can be ordered


def orderable_units(units: float, sizes: tuple[float, ...], increment: float) -> float:
    """The smallest orderable size that holds ``units`` [units].

    ``sizes`` lists the first orderable sizes; past the last one the size grows by ``increment``.
    FSx for Lustre persistent SSD: 1.2 TiB, 2.4 TiB, then increments of 2.4 TiB [1], so 3 TiB
    is ordered as 2.4 + ceil(0.6 / 2.4) x 2.4 = 4.8 TiB. No steps: ``units`` as given.

    References
    ----------
    [1] AWS SDK for Kotlin, FSx CreateFileSystemRequest.storageCapacity: "For SCRATCH_2,
        PERSISTENT_2, and PERSISTENT_1 deployment types using SSD storage type, the valid values
        are 1200 GiB, 2400 GiB, and increments of 2400 GiB" (docs.aws.amazon.com, read 2026-11-24).
    """
    if not sizes:
        return units
    for s in sizes:
        if units <= s + 1e-9:
            return s
    if increment <= 0:
        return math.inf  # past the largest listed size and no increment: not orderable
    last = sizes[-1]
    return last + math.ceil((units - last) / increment - 1e-9) * increment


def billed_iops(read_iops: float, bytes_per_s: float, io_bytes: float) -> float:
    """IOPS to provision on a volume that counts large I/O in ``io_bytes`` units [IOPS].

        billed = max(random reads/s, bytes/s / io_bytes)

    EBS io1/io2 count an I/O larger than 256 KiB as several: "a 1024K I/O would count as 4
    consumed IOPS" [1], so a volume streaming 2.86 GB/s needs 2.86e9 / 262,144 = 10,910 IOPS
    provisioned, billed per IOPS-month. NaN ``io_bytes``: throughput is not bought as IOPS.

    References
    ----------
    [1] AWS CloudWatch metric VolumeConsumedReadWriteOps (Provisioned IOPS SSD volumes), as
        documented in Pulumi's awsx ebs metrics reference (3P copy of AWS text, read 2026-11-24).
    """
    if not math.isfinite(io_bytes) or io_bytes <= 0:
        return max(read_iops, 0.0)
    return max(read_iops, 0.0, max(bytes_per_s, 0.0) / io_bytes)


def server_usable_bytes(drives: int, drive_bytes: float, scheme: str, fill_limit: float) -> float:
    """Bytes one server of drives holds for data [bytes]: usable drives under ``scheme`` x drive
    size x ``fill_limit``, as bought drives are protected and filled. 13 x 7.68 TB in RAID 6
    (groups of at most 10 + 2: two groups, 9 data drives) at 80 %: 9 x 7.68 x 0.8 = 55.3 TB."""
    return usable_drives(drives, scheme) * drive_bytes * fill_limit


def egress_usd(gigabytes: float, tiers: tuple[tuple[float, float], ...]) -> float:
    """Egress charge of ``gigabytes`` sent out in a month through price tiers [USD].

    ``tiers`` = ((GB in the tier, USD per GB), ...), the last tier unbounded. AWS internet egress:
    10,000 GB at $0.09, 40,000 at $0.085, 100,000 at $0.07, then $0.05 (``EGRESS_TIERS``):
    60,000 GB cost 10,000 x 0.09 + 40,000 x 0.085 + 10,000 x 0.07 = $5,000.
    """
    left, usd = max(gigabytes, 0.0), 0.0
    for size_gb, price in tiers:
        take = min(left, size_gb)
        usd += take * price
        left -= take
        if left <= 0:
            break
    return usd


SUPPORT_SHARE_PER_YEAR = 0.12
"""Hardware support a year as a share of the purchase price [1/year]: 12 %.

"a common ratio ... for purchase cost to annual support cost is between 10% and 15%"
(philipcrewe.net, 2013), "usually works out to an annual cost of between 10 and 12 percent of
the total purchase price" (librarytechnology.org), "from 10% to 30% ... per year"
(searchservervirtualization.techtarget.com); 3P, read 2026-11-24. 12 % is the middle of the
first two; a vendor quote replaces it (Scenario ``support_share``)."""

USD_PER_KWH = 0.13
"""Electricity for on-prem storage [USD/kWh]: 13 cents, a US commercial rate. EIA Electric Power
Monthly Table 5.6.A, April 2025 (eia.gov, V, read 2026-11-24): commercial 12.82 cents/kWh in the
East North Central states, 16.24 Middle Atlantic, 9.74 West North Central; the US total row was
not in the stored copy, so 13 cents is taken between them (I). Set ``power_usd_per_kwh`` for a site."""


def support_usd_per_month(purchase_usd: float, share_per_year: float = SUPPORT_SHARE_PER_YEAR) -> float:
    """Hardware support of bought parts [USD a month]: ``purchase x share a year / 12``.
    $192,471 of servers at 12 % a year: 192,471 x 0.12 / 12 = $1,924.71 a month."""
    return max(purchase_usd, 0.0) * share_per_year / 12.0


def power_usd_per_month(watts: float, usd_per_kwh: float, hours_per_month: float = 730.0) -> float:
    """Electricity of a part drawing ``watts`` around the clock [USD a month]:
    ``watts / 1000 x hours x price``. 400 W at $0.13/kWh: 0.4 x 730 x 0.13 = $37.96."""
    return watts / 1000.0 * hours_per_month * usd_per_kwh


def wear_out_years(
    endurance_bytes: float, drives: float, written_bytes_per_year: float, write_amplification: float
) -> float:
    """Years until the drives reach their rated endurance [years] (inf when nothing is written).

        years = endurance per drive / (bytes written a year x write amplification / drives)

    ``write_amplification`` is raw bytes written per byte stored: 2 for a mirror, (k + m) / k
    for parity. Controller-level amplification inside the drive is part of its rating.
    """
    per_drive = written_bytes_per_year * write_amplification / max(drives, 1.0)
    return endurance_bytes / per_drive if per_drive > 0 else math.inf


# ------------------------------------------------------------------ what holds bought drives
# presets/enclosures.yaml: parts, each price declared once, and the enclosures built from them
# (a chassis plus what connects it: an HBA and SAS cables for a JBOD, a NIC, switch ports and
# DACs for a server reached over Ethernet). storage.yaml options name their enclosures.

ATTACHES = ("sas", "network")
"""How an enclosure reaches the host: ``sas`` (a JBOD cabled to an HBA in the host) or
``network`` (a server with its own CPU, reached over Ethernet through a switch)."""

VERIFIED = ("V", "3P", "R", "I")
"""How a figure was checked (the letters of storage.yaml's ``verified``)."""


@dataclass(frozen=True)
class Part:
    """One priced part (presets/enclosures.yaml ``parts``); ``price_usd`` NaN: no sourced price."""

    name: str
    label: str
    price_usd: float
    no_price_reason: str
    price_date: str
    verified: str
    source: str
    watts: float = math.nan
    """Power it draws in use [W] (NaN: not stated)."""
    watts_source: str = ""
    condition: str = "new"
    """``new`` (with the maker's warranty) or ``used`` (a market listing, short seller warranty);
    every part in enclosures.yaml states it. ``price_usd`` is for this condition."""
    used_price_usd: float = math.nan
    """A used-market alternative to a new part [USD] (enclosures.yaml ``used.price``); NaN: none
    listed. Never bought by default: it is shown beside the new price, labelled used."""
    used_source: str = ""


CONDITIONS = ("new", "used")
"""A part's condition (enclosures.yaml ``condition``)."""


@dataclass(frozen=True)
class Enclosure:
    """An enclosure for bought drives: ``bays`` drive bays and the parts of one, with counts."""

    name: str
    label: str
    bays: int
    attach: str
    parts: tuple[tuple[Part, int], ...]
    why: str
    link_bytes_per_s: float = math.inf
    link_source: str = ""

    @property
    def price_usd(self) -> float:
        """The priced parts of one enclosure [USD]; parts with no sourced price count 0 (see ``unpriced``)."""
        return parts_usd(self.parts)

    @property
    def unpriced(self) -> tuple[tuple[Part, int], ...]:
        """Parts of one enclosure with no sourced price."""
        return tuple((p, k) for p, k in self.parts if not math.isfinite(p.price_usd))

    @property
    def watts(self) -> float:
        """Power of one enclosure, without its drives [W]: the parts' watts added (NaN if one is not stated)."""
        return sum(p.watts * k for p, k in self.parts)


def parts_usd(parts: tuple[tuple[Part, int], ...]) -> float:
    """Sum of count x price over the priced parts [USD]."""
    return float(sum(k * p.price_usd for p, k in parts if math.isfinite(p.price_usd)))


@functools.cache
def enclosure_catalog() -> tuple[dict[str, Part], dict[str, Enclosure]]:
    """Parts and enclosures by name (presets/enclosures.yaml), validated."""
    file = "enclosures.yaml"
    raw = catalog.load_mapping(file, "section")
    for section in ("parts", "enclosures"):
        if not isinstance(raw.get(section), dict):
            raise PresetError(f"{file}: {section}", "expected a mapping of names")
    parts = {}
    for name, data in raw["parts"].items():
        e = catalog._Entry(file, f"parts: {name}", data)
        priced = "price" in e.data
        price = e.quantity("price", "count", positive=False) if priced else math.nan
        reason = e.text("no_price_reason", "")
        if not priced and not reason:
            raise PresetError(e.where("no_price_reason"), "a part with no price must say why")
        verified = e.text("verified", "") if priced else ""
        if priced and verified not in VERIFIED:
            raise PresetError(e.where("verified"), f"got {verified!r}; accepted: {', '.join(VERIFIED)}")
        parts[str(name)] = Part(
            name=str(name),
            label=e.text("label"),
            price_usd=price,
            no_price_reason=reason,
            price_date=str(e.get("price_date", "")) if priced else "",
            verified=verified,
            source=e.text("source") if priced else "",
            watts=e.quantity("watts", "count", positive=False) if "watts" in e.data else math.nan,
            watts_source=e.text("watts_source", ""),
            condition=_condition(e),
            **_used_alternative(e),
        )
    encs = {}
    for name, data in raw["enclosures"].items():
        e = catalog._Entry(file, f"enclosures: {name}", data)
        bays = e.quantity("bays", "count")
        if bays != int(bays):
            raise PresetError(e.where("bays"), f"expected a whole number of bays, got {bays!r}")
        attach = e.text("attach")
        if attach not in ATTACHES:
            raise PresetError(e.where("attach"), f"unknown {attach!r}; accepted: {', '.join(ATTACHES)}")
        encs[str(name)] = Enclosure(
            name=str(name),
            label=e.text("label"),
            bays=int(bays),
            attach=attach,
            parts=_part_counts(e, "parts", e.get("parts"), parts),
            why=e.text("why", ""),
            link_bytes_per_s=e.quantity("link_bandwidth", "bytes_per_s"),
            link_source=e.text("link_source"),
        )
    return parts, encs


def _part_counts(e: catalog._Entry, key: str, value: object, parts: dict[str, Part]) -> tuple[tuple[Part, int], ...]:
    """``{part name: count}`` read as (Part, count) pairs; unknown names and bad counts are errors."""
    if not isinstance(value, dict) or not value:
        raise PresetError(e.where(key), "expected a mapping part name: count")
    out = []
    for name, count in value.items():
        part = parts[catalog.lookup(str(name), parts, "part", e.where(key))]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise PresetError(e.where(f"{key}.{name}"), f"expected a whole count of at least 1, got {count!r}")
        out.append((part, count))
    return tuple(out)


def _condition(e: catalog._Entry) -> str:
    c = e.text("condition", "")
    if c not in CONDITIONS:
        raise PresetError(e.where("condition"), f"unknown {c!r}; accepted: {', '.join(CONDITIONS)}")
    if "watts" in e.data and not e.text("watts_source", ""):
        raise PresetError(e.where("watts_source"), "a part's watts need a source")
    return c


def _used_alternative(e: catalog._Entry) -> dict[str, Any]:
    """A new part's optional ``used: {price, price_date, source}``: the used-market figure kept as a
    labelled alternative (never the default)."""
    u = e.data.get("used")
    if u is None:
        return {}
    if not isinstance(u, dict) or e.text("condition", "") != "new":
        raise PresetError(e.where("used"), "expected {price, price_date, source}, on a part whose condition is new")
    sub = catalog._Entry(e.file, f"{e.name}: used", u)
    sub.text("price_date")
    return {"used_price_usd": sub.quantity("price", "count", positive=False), "used_source": sub.text("source")}


def _enclosures_of(e: catalog._Entry) -> tuple[Enclosure, ...]:
    """A storage option's ``enclosures``: a list of enclosure names from presets/enclosures.yaml."""
    names = e.get("enclosures", [])
    if not isinstance(names, list):
        raise PresetError(e.where("enclosures"), "expected a list of enclosure names")
    table = enclosure_catalog()[1]
    return tuple(table[catalog.lookup(n, table, "enclosure", e.where("enclosures"))] for n in names)


def _parts_of(e: catalog._Entry, key: str, value: object) -> tuple[tuple[Part, int], ...]:
    """A storage option's ``network_parts`` (what connects one unit), or none."""
    return _part_counts(e, key, value, enclosure_catalog()[0]) if key in e.data else ()


def enclosure_mix(drives: int, bays: list[int], prices_usd: list[float]) -> tuple[int, ...]:
    """Enclosures of each size that hold ``drives`` drives at the least cost [count per size].

    Minimise sum(k_i x price_i) subject to sum(k_i x bays_i) >= drives, k_i whole. Ties go to fewer
    enclosures, then to fewer empty bays. Exact and fast: let s be the size with the lowest price
    per bay (the largest of equals). An optimum exists with fewer than bays_s enclosures of every
    other size i, since bays_s enclosures of size i hold as many drives as bays_i enclosures of s,
    which cost no more (bays_i x price_s <= bays_s x price_i). So only those counts are tried, and
    s fills the rest: ceil(remaining / bays_s).

    Examples (a 12-bay enclosure at $701.34 and a 60-bay one at $1,205): 2 drives -> (1, 0);
    13 drives -> (0, 1), since 2 x $701.34 = $1,402.68 > $1,205; 61 drives -> (1, 1).

    References
    ----------
    Martello, S. and Toth, P. (1990). Knapsack Problems: Algorithms and Computer Implementations.
    Wiley, ch. 3 (the unbounded knapsack; its dominance between item types is the argument above,
    applied to the covering form).
    """
    if len(bays) != len(prices_usd) or not bays:
        raise ValueError("one price per enclosure size, at least one size")
    n = max(int(drives), 0)
    cheapest = min(range(len(bays)), key=lambda i: (prices_usd[i] / bays[i], -bays[i]))
    others = [i for i in range(len(bays)) if i != cheapest]
    ranges = [range(min(math.ceil(n / bays[i]), bays[cheapest] - 1) + 1) for i in others]
    best: tuple[tuple[float, int, int], tuple[int, ...]] | None = None
    for counts in itertools.product(*ranges):
        held = sum(k * bays[i] for k, i in zip(counts, others, strict=True))
        k_s = max(math.ceil((n - held) / bays[cheapest]), 0)
        mix = [0] * len(bays)
        for k, i in zip(counts, others, strict=True):
            mix[i] = k
        mix[cheapest] = k_s
        cost = sum(k * p for k, p in zip(mix, prices_usd, strict=True))
        key = (round(cost, 6), sum(mix), sum(k * b for k, b in zip(mix, bays, strict=True)))
        if best is None or key < best[0]:
            best = (key, tuple(mix))
    assert best is not None  # itertools.product of no ranges yields one empty tuple
    return best[1]


def usable_bays(bays: int, link_bytes_per_s: float, drives: int, need_bytes_per_s: float) -> int:
    """Drives one enclosure may hold so that its link carries their share of the demand [drives].

    ``min(bays, floor(link / (need / drives)))``: each drive moves ``need / drives``; an enclosure
    reached over a 2 x 100 GbE NIC (22.5 GB/s) holding drives that must move 3 GB/s each is full at
    7 of its 14 bays. A cover of the drives by enclosures filled to at most this many puts at most
    its link's worth of the demand on each, so their links together carry all of it. 0: one drive's
    share is more than the link (no enclosure of this kind serves).
    """
    if need_bytes_per_s <= 0 or drives <= 0 or not math.isfinite(link_bytes_per_s):
        return bays
    return min(bays, math.floor(link_bytes_per_s * drives / need_bytes_per_s + 1e-9))


def house(
    o: StorageOption, drives: int, need_bytes_per_s: float = 0.0, shared: bool = False
) -> tuple[tuple[Enclosure, int], ...]:
    """The enclosures (with counts) that hold ``drives`` of option ``o``, cheapest mix of its sizes
    whose links carry ``need_bytes_per_s`` (each filled to ``usable_bays``); ``shared``: servers
    on the network only (every node mounts them), not a JBOD cabled to one host. Empty when the
    option names none (a workstation's own slots) or when no enclosure's link carries one drive's
    share."""
    if not o.enclosures or drives <= 0:
        return ()
    kinds = [x for x in o.enclosures if x.attach == "network" or not shared]
    fits = [(x, usable_bays(x.bays, x.link_bytes_per_s, drives, need_bytes_per_s)) for x in kinds]
    fits = [(x, b) for x, b in fits if b >= 1]
    # New parts with the maker's warranty by default (issue 28): a chassis priced only as a used
    # listing is bought only when no new one can hold the drives, and then labelled used.
    fits = [(x, b) for x, b in fits if all(p.condition == "new" for p, _ in x.parts)] or fits
    if not fits:
        return ()
    mix = enclosure_mix(drives, [b for _, b in fits], [x.price_usd for x, _ in fits])
    return tuple((x, k) for (x, _), k in zip(fits, mix, strict=True) if k)


def housing_usd(mix: tuple[tuple[Enclosure, int], ...]) -> float:
    """What the enclosures of ``mix`` cost, their priced parts only [USD]."""
    return float(sum(k * x.price_usd for x, k in mix))


def describe_housing(mix: tuple[tuple[Enclosure, int], ...]) -> tuple[str, str]:
    """(what is bought, with each part's price; what is not priced) for a storage lead.

    ``1 x 24-bay 3.5" server on 2 x 25 GbE (new) ($9,378.11: 1 x server-24lff $8,300.49, ...)``.
    """
    bought, missing = [], []
    for x, k in mix:
        items = ", ".join(
            f"{c * k} x {p.name} " + (f"${c * k * p.price_usd:,.2f}" if math.isfinite(p.price_usd) else "not priced")
            for p, c in x.parts
        )
        bought.append(f"{k} x {x.label} (${k * x.price_usd:,.2f}: {items})")
        missing += [f"{c * k} x {p.name} ({p.no_price_reason})" for p, c in x.unpriced]
    return "; ".join(bought), "; ".join(missing)


EGRESS_USD_PER_GB = {"aws": 0.09, "gcp": 0.12, "azure": 0.087, "on-prem": 0.0}
"""Data sent out of a site to the internet or another cloud, first pricing tier [USD/GB].

AWS $0.09 per GB for the first 10 TB a month, Azure $0.087, GCP Premium tier $0.12 for the
first TB (dev.to "The hidden tax on your cloud bill", 2025, and cloudtoolstack.com "Cloud
egress costs", early 2026, 3P; GCP's $0.12 also in cloud.google.com/storage/pricing-examples,
V; read 2026-11-23). Later tiers are cheaper (AWS $0.085 to 50 TB, $0.07 to 150 TB), so large
volumes are over-priced here. On-prem sends for free on the cloud side (ingress is free); the
site's own internet transit is not priced."""

EGRESS_TIERS: dict[str, tuple[tuple[float, float], ...]] = {
    "aws": ((10_000.0, 0.09), (40_000.0, 0.085), (100_000.0, 0.07), (math.inf, 0.05)),
    "gcp": ((math.inf, 0.12),),
    "azure": ((math.inf, 0.087),),
    "on-prem": ((math.inf, 0.0),),
}
"""Egress price tiers by site [(GB a month in the tier, USD per GB)], the last unbounded.

AWS internet egress: "$0.09/GB for the first 10TB per month, $0.085/GB for the next 40TB,
$0.07/GB for the next 100TB, and $0.05/GB above 150TB" (thenegotiationexperts.com "AWS egress
... 2026 rate card" and leanopstech.com "AWS Data Transfer Pricing in 2026", 2026-04-27, 3P;
read 2026-11-24). GCP and Azure keep their first tier (``EGRESS_USD_PER_GB``; their later tiers
were not read), so large volumes there are over-priced."""
