"""The cluster plan: many different jobs on one storage system, one answer, what each job gets.

``cluster(jobs, **inputs)`` evaluates each job type's Plan on the shared storage settings and adds
their demands (docs/model.md, "The cluster plan")::

    read_bytes_per_s     = sum_j read_j                  (each entry's Plan counts its copies)
    peak writes, aligned = sum_j n_j x w_j               (every job saves at once)
    average writes       = sum_j n_j x C_j / T_j         (checkpoint bytes per interval)
    write need, aligned  = sum_async n_j w_j + sum_sync max(n_j w_j - read_j, 0)
    write need, staggered= sum_async n_j w_j + max(max_sync (w_j - read_j / n_j), sum_sync n_j C_j / T_j)
    stored_bytes         = sum over distinct dataset names of the dataset + sum_j n_j x checkpoints kept

A blocking (sync) save stops that job's reads while it writes, so its write adds only what exceeds
its reads (calc.stages.evaluate_checkpoint does the same for one job); an async drain runs beside
the reads all the time, aligned or not.

``answer(cluster_plan)`` (re-exported as ``calc.cluster_answer``; ``calc.answer`` dispatches here)
sizes every storage option for the combined load with ``calc.sizing.recommend``'s own ranking,
shares a shortfall of the given storage between the jobs (``policy``: ``demand`` gives every job
the same fraction of its demand; ``max-min`` gives every GPU an equal share of the binding axis,
water-filling, so small jobs are served in full), projects growth, and splits the monthly cost.

References
----------
.. [1] Young, J. W. "A first order approximation to the optimum checkpoint interval",
   Communications of the ACM 17(9), 1974 (why saves are periodic, interval T).
.. [2] Bertsekas, D. and Gallager, R. "Data Networks", 2nd ed., section 6.5.2: max-min fairness
   (the water-filling share used by ``policy="max-min"``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
import pandas as pd
import yaml

from calc import catalog, cluster_load, demand
from calc import engine as en
from calc import sizing as sz
from calc import storage as st
from calc.cluster_load import TOTALS, _writes, fmt_total, write_need_bytes_per_s
from calc.engine import checkpoint_writes_per_month
from calc.errors import InputError, PresetError
from calc.plan import Plan, plan
from calc.report import cluster_markdown
from calc.scenario import (
    FIELDS,
    FieldInfo,
    Scenario,
    _short,
    check_field,
    check_value,
    dump_yaml,
    from_text,
    read_yaml,
    to_text,
    unknown_input,
)
from calc.scenario import scenario as preset_scenario
from calc.site import job_site
from calc.units import MONTH_S, Kind, fmt, fmt_usd, parse

SAVES = ("aligned", "staggered")
"""How the jobs' checkpoint saves fall in time: all at once, or spread so they overlap least."""

POLICIES = ("demand", "max-min")
"""How a short storage system's capacity is shared: in proportion to demand, or max-min per GPU."""

STORAGE_INPUTS = ("storage", "storage_units", "storage_bytes_per_s", "storage_iops", "storage_latency_s")
"""The storage inputs: one value for the whole cluster (a job's own storage is replaced by it)."""

CUSTOM = "custom"
"""A job not derived from a preset scenario (its inputs differ from the defaults) in links."""

CLUSTER_INPUTS: dict[str, FieldInfo] = {
    "count": FieldInfo("int", "cluster", "Jobs of this type", "How many such jobs run at once.", 1, 100_000),
    "name": FieldInfo("text", "cluster", "Name", "A label for the cluster (titles, links, file names)."),
    "description": FieldInfo("text", "cluster", "Description", "What the cluster is, and its sources."),
    "saves": FieldInfo("choice", "cluster", "Checkpoint saves", "All at once, or spread.", choices=SAVES),
    "policy": FieldInfo("choice", "cluster", "Shortfall policy", "How a short store is shared.", choices=POLICIES),
    "horizon_months": FieldInfo("int", "cluster", "Horizon [months]", "Months of growth to buy for.", 0, 240),
    "job_growth_per_year": FieldInfo(
        "number", "cluster", "Job growth per year", "Yearly fraction (0.5 = +50 % a year).", -0.9, 100
    ),
    "data_growth_per_year": FieldInfo(
        "number", "cluster", "Data growth per year", "Yearly fraction (0.5 = +50 % a year).", -0.9, 100
    ),
}
"""The cluster's own inputs, declared as Scenario fields are and checked by the same
``check_value`` path (a count of nan, inf or 400 digits is an InputError naming it)."""

NOT_SHARED = {
    "jobs": "how many jobs of a type run is its count (count: in the YAML, --job preset:count, {scenario: count})",
    "name": "the cluster's own name is the option name (name: in the YAML, --set name=..., name=...)",
    "description": "the cluster's own description is the option description",
}
"""Scenario inputs that cannot be shared by every job, and why."""


# ------------------------------------------------------------------ the cluster: inputs


@dataclass(frozen=True)
class Job:
    """One job type of the cluster: its scenario and how many such jobs run at once."""

    scenario: Scenario
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.scenario, Scenario):
            raise InputError("jobs", f"{_short(self.scenario)}; accepted: a Scenario with a count")
        object.__setattr__(self, "count", _count(self.count, f"jobs: {self.name}"))

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def dataset(self) -> str:
        """The dataset's name: jobs naming the same one store it once."""
        return self.scenario.dataset or self.scenario.name


@dataclass(frozen=True)
class Cluster:
    """The inputs of a cluster plan: the job mix, the shared inputs and the cluster-only options.

    ``shared`` holds Scenario inputs applied to every job (storage, storage_units, server...).
    ``saves``: aligned or staggered checkpoint saves; ``policy``: how a shortfall is shared;
    ``horizon_months``, ``job_growth_per_year``, ``data_growth_per_year`` (fractions: 0.5 = +50 %
    a year, compounded monthly) project the load for the next purchase.
    """

    jobs: tuple[Job, ...]
    shared: Mapping[str, Any] = field(default_factory=dict)
    name: str = "cluster"
    description: str = ""
    saves: str = "aligned"
    policy: str = "demand"
    horizon_months: int = 0
    job_growth_per_year: float = 0.0
    data_growth_per_year: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.jobs, tuple) or not self.jobs or not all(isinstance(j, Job) for j in self.jobs):
            raise InputError("jobs", "no jobs; accepted: at least one scenario (a preset name) with a count")
        for key in CLUSTER_INPUTS.keys() - {"count"}:
            object.__setattr__(self, key, check_value(key, getattr(self, key), CLUSTER_INPUTS[key]))
        if not isinstance(self.shared, Mapping):
            raise InputError("shared", f"expected a mapping of inputs, got {_short(self.shared)}")
        shared: dict[str, Any] = {}
        for key, value in self.shared.items():
            k = str(key)
            if k not in FIELDS:
                raise InputError(k, "shared " + unknown_input(k))
            if k in NOT_SHARED:
                raise InputError(k, f"cannot be a shared input: {NOT_SHARED[k]}")
            shared[k] = value if value is None and FIELDS[k].optional else check_field(k, value)
        object.__setattr__(self, "shared", shared)
        _one_site(self.jobs, shared)

    # ---------------------------------------------------------------- YAML

    def to_dict(self) -> dict[str, Any]:
        """Plain data (YAML-safe): preset jobs by name with their changes, others in full."""
        jobs = []
        for j in self.jobs:
            base, changes = _base_and_changes(j.scenario)
            entry: dict[str, Any] = {"scenario": base if base != CUSTOM else j.scenario.to_dict(changed_only=True)}
            entry["count"] = j.count
            if base != CUSTOM and changes:
                entry["set"] = changes
            jobs.append(entry)
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        defaults = _DEFAULTS
        for key in ("saves", "policy", "horizon_months", "job_growth_per_year", "data_growth_per_year"):
            if getattr(self, key) != defaults[key]:
                out[key] = getattr(self, key)
        if self.shared:
            out["shared"] = dict(self.shared)
        out["jobs"] = jobs
        return out

    def to_yaml(self) -> str:
        """The cluster as YAML that ``from_yaml`` reads back equal."""
        return dump_yaml(self.to_dict())

    @classmethod
    def from_dict(cls, data: Any, source: str = "cluster") -> Cluster:
        """Read a cluster document (name, jobs: [{scenario, count, set}], shared, options)."""
        if not isinstance(data, Mapping):
            raise PresetError(source, f"expected a mapping with jobs:, got {type(data).__name__}")
        allowed = {"name", "description", "jobs", "shared", "saves", "policy", "horizon_months"}
        allowed |= {"job_growth_per_year", "data_growth_per_year"}
        unknown = sorted(str(k) for k in data if k not in allowed)
        if unknown:
            raise InputError(f"{source}: {unknown[0]}", f"unknown key; accepted: {', '.join(sorted(allowed))}")
        raw = data.get("jobs")
        if not isinstance(raw, list) or not raw:
            raise InputError(f"{source}: jobs", "expected a list of {scenario: NAME, count: N, set: {...}}")
        jobs = [_job_entry(entry, f"{source}: jobs[{i}]") for i, entry in enumerate(raw)]
        shared = data.get("shared") or {}
        if not isinstance(shared, Mapping):
            raise InputError(f"{source}: shared", f"expected a mapping of inputs, got {shared!r}")
        opts = {k: data[k] for k in allowed - {"jobs", "shared"} if k in data}
        try:
            return cls(jobs=tuple(jobs), shared={str(k): v for k, v in shared.items()}, **opts)
        except InputError as e:
            raise InputError(f"{source}: {e.field}", e.message) from None

    @classmethod
    def from_yaml(cls, text: str, source: str = "cluster.yaml", max_bytes: int = 100_000) -> Cluster:
        """Read a cluster YAML (``yaml.safe_load`` with Scenario.from_yaml's guards: text only,
        valid Unicode, size, nesting depth and alias expansion limited; validated)."""
        return cls.from_dict(read_yaml(text, source, max_bytes), source)

    # ---------------------------------------------------------------- link text

    def to_params(self) -> dict[str, str]:
        """The cluster as link text: ``cluster=preset:count|key=value;...`` plus shared and options.

        ``Cluster.from_params(c.to_params()) == c``.
        """
        entries = []
        for j in self.jobs:
            base, _ = _base_and_changes(j.scenario)
            ref = Scenario() if base == CUSTOM else preset_scenario(base)
            text = j.scenario.to_params(ref)
            if text.get("name") == f"{base}-edited":
                del text["name"]  # an edit of a preset is named so again when read back
            elif text and "name" not in text and base != CUSTOM:
                text["name"] = to_text(j.scenario.name, "name")  # an edit that kept the preset's name keeps it
            pairs = [f"{k}={_safe(v, k)}" for k, v in text.items()]
            entries.append("|".join([f"{base}:{j.count}", *pairs]))
        out = {"cluster": ";".join(entries)}
        if self.shared:
            out["cluster_shared"] = "|".join(f"{k}={_safe(to_text(v, k), k)}" for k, v in self.shared.items())
        defaults = _DEFAULTS
        for key in _OPTIONS:
            if getattr(self, key) != defaults[key]:
                out[f"cluster_{key}"] = _option_text(key, getattr(self, key))
        return out

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Cluster:
        """Read ``to_params`` text back (a link, the CLI's ``--job``)."""
        text = str(params.get("cluster", "")).strip()
        if not text:
            raise InputError("cluster", "no jobs; accepted: preset:count;preset:count")
        jobs = [_job_from_text(part) for part in text.split(";") if part.strip()]
        shared: dict[str, Any] = {}
        for pair in filter(None, str(params.get("cluster_shared", "")).split("|")):
            key, value = _pair(pair, "cluster_shared")
            shared[key] = _read_input(key, value)
        opts = {key: _option(key, params[f"cluster_{key}"]) for key in _OPTIONS if f"cluster_{key}" in params}
        return cls(jobs=tuple(jobs), shared=shared, **opts)


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Cluster)}
"""The cluster options' defaults, left out of its YAML and links."""


def _job_entry(entry: Any, where: str) -> Job:
    """One entry of a cluster document's jobs: a preset name or a mapping of inputs, with its
    count and the inputs it sets."""
    if not isinstance(entry, Mapping):
        raise InputError(where, f"expected a mapping with scenario: and count:, got {entry!r}")
    extra = sorted(str(k) for k in entry if k not in ("scenario", "count", "set"))
    if extra:
        raise InputError(f"{where}: {extra[0]}", "unknown key; accepted: scenario, count, set")
    spec, sets = entry.get("scenario"), entry.get("set") or {}
    if not isinstance(sets, Mapping):
        raise InputError(f"{where}: set", f"expected a mapping of inputs, got {sets!r}")
    if isinstance(spec, str):
        sc = preset_scenario(spec)
        sc = _with(sc, {str(k): v for k, v in sets.items()}, where)
    elif isinstance(spec, Mapping):
        sc = _with(Scenario.from_dict(spec, where), {str(k): v for k, v in sets.items()}, where)
    else:
        raise InputError(f"{where}: scenario", "expected a preset name or a mapping of inputs")
    return Job(sc, _count(entry.get("count", 1), where))


def _with(sc: Scenario, changes: Mapping[str, Any], where: str) -> Scenario:
    try:
        return sc.replace(**changes) if changes else sc
    except InputError as e:
        raise InputError(f"{where}: {e.field}", e.message) from None


def _count(value: Any, where: str) -> int:
    """A job count, checked as every input is (``check_value``): 1 to 100,000, whole."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"{where}: count", f"{_short(value)}; accepted: a whole number from 1 to 100000")
    try:
        count: int = check_value("count", value, CLUSTER_INPUTS["count"])
    except InputError as e:
        raise InputError(f"{where}: count", e.message) from None
    return count


def _option(key: str, text: Any) -> Any:
    """A cluster option read from link or command-line text (``_option_text`` writes it)."""
    info = CLUSTER_INPUTS[key]
    value = from_text("name", text) if info.kind == "text" else text
    if isinstance(value, str) and info.kind != "text":
        value = value.strip()
    return check_value(key, value, info)


def _option_text(key: str, value: Any) -> str:
    return to_text(value, "name") if CLUSTER_INPUTS[key].kind == "text" else to_text(value)


def _one_site(jobs: Sequence[Job], shared: Mapping[str, Any]) -> None:
    """Refuse jobs at different sites: one cluster shares one store, bought at one site (the
    answer would price it at the first job's site and read it across sites unsaid)."""
    where: dict[str, str] = {}
    # As cluster() runs each job: the shared store (or none) replaces the job's own.
    placed = {k: shared[k] for k in ("site", "server") if k in shared} | {"storage": shared.get("storage")}
    for j in jobs:
        at = sz.job_site(_with(j.scenario, placed, f"jobs: {j.name}"))
        if at is not None:
            where.setdefault(at, j.name)
    if len(where) > 1:
        named = ", ".join(f"{job} at {site}" for site, job in where.items())
        raise InputError(
            "site",
            f"the jobs run at different sites ({named}); one cluster shares one store at one site: accepted: "
            "jobs at one site (a shared site, or servers at one site), or one cluster per site",
        )


_ESCAPES = {"%": "%25", "|": "%7C", ";": "%3B"}
_UNESCAPE = re.compile("|".join(re.escape(v) for v in _ESCAPES.values()))


def _safe(text: str, key: str) -> str:
    """``text`` for a cluster link, where '|' and ';' separate the inputs and the jobs: those two
    and '%' are written %7C, %3B and %25 (``_unsafe`` reads them back)."""
    return "".join(_ESCAPES.get(c, c) for c in text)


def _unsafe(text: str) -> str:
    back = {v: k for k, v in _ESCAPES.items()}
    return _UNESCAPE.sub(lambda m: back[m.group(0)], text)


def _pair(text: str, where: str) -> tuple[str, str]:
    if "=" not in text:
        raise InputError(where, f"expected key=value, got {text!r}")
    k, v = text.split("=", 1)
    return k.strip(), _unsafe(v.strip())


def _read_input(key: str, value: str) -> Any:
    if key not in FIELDS:
        accepted = ", ".join([*FIELDS, *_OPTIONS])
        raise InputError(key, f"unknown input; accepted: a shared scenario input or a cluster option ({accepted})")
    v = from_text(key, value)
    return v if v is None else check_field(key, v)


def _job_from_text(part: str) -> Job:
    """``preset:count|key=value|...`` (``custom`` for a scenario built from the defaults)."""
    head, *pairs = part.strip().split("|")
    name, _, count = head.partition(":")
    name = name.strip()
    base = Scenario() if name.lower() == CUSTOM else preset_scenario(name)
    params = dict(_pair(p, f"cluster: {name}") for p in pairs)
    sc = Scenario.from_params(params, base, f"cluster: {name}") if params else base
    return Job(sc, _count(count.strip() or "1", f"cluster: {name}"))


def _base_and_changes(sc: Scenario) -> tuple[str, dict[str, Any]]:
    """The preset a scenario was derived from (by its name) and its inputs that differ from it."""
    files = catalog.scenario_files()
    stem = sc.name.removesuffix("-edited")
    if stem in files:
        ref = preset_scenario(stem)
        changes = {k: getattr(sc, k) for k in FIELDS if getattr(sc, k) != getattr(ref, k)}
        if sc.name == f"{stem}-edited":
            changes.pop("name", None)  # replace() names an edit so again
        elif changes:
            changes["name"] = sc.name  # an edit that kept the preset's name (its dataset's name) keeps it
        return stem, changes
    return CUSTOM, sc.to_dict(changed_only=True)


def as_cluster(jobs: Any, **inputs: Any) -> Cluster:
    """A ``Cluster`` from ``jobs`` (a Cluster, a mapping scenario -> count, or (scenario, count)
    pairs; a scenario is a preset name or a Scenario) and ``inputs`` (shared Scenario inputs and
    the cluster options saves, policy, horizon_months, job_growth_per_year, data_growth_per_year,
    name, description)."""
    opts = {k: inputs.pop(k) for k in list(inputs) if k in _OPTIONS}
    if isinstance(jobs, Cluster):
        shared = {**jobs.shared, **inputs}
        return dataclasses.replace(jobs, shared=shared, **opts) if (opts or inputs) else jobs
    if isinstance(jobs, str):
        return as_cluster(load(jobs), **inputs, **opts)  # a cluster preset or YAML file
    if isinstance(jobs, (bytes, bytearray)) or not isinstance(jobs, Iterable):
        raise InputError(
            "jobs",
            f"got {_short(jobs)}; accepted: a Cluster, a cluster preset name ({', '.join(clusters())}), "
            "a mapping scenario -> count, or (scenario, count) pairs",
        )
    pairs: Iterable[Any] = jobs.items() if isinstance(jobs, Mapping) else jobs
    out = []
    for item in pairs:
        if isinstance(item, Job):
            out.append(item)
            continue
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise InputError("jobs", f"{item!r}; accepted: (scenario, count) pairs or a mapping scenario -> count")
        spec, count = item
        if not isinstance(spec, (Scenario, str)):
            raise InputError("jobs", f"{_short(spec)}; accepted: a scenario (a preset name or a Scenario)")
        sc = spec if isinstance(spec, Scenario) else preset_scenario(spec)
        out.append(Job(sc, _count(count, f"jobs: {sc.name}")))
    return Cluster(jobs=tuple(out), shared=inputs, **opts)


_OPTIONS = ("saves", "policy", "horizon_months", "job_growth_per_year", "data_growth_per_year", "name", "description")


# ------------------------------------------------------------------ the cluster plan


@dataclass(frozen=True)
class ClusterPlan:
    """Each job's Plan on the shared storage and the combined demand [base units].

    Each entry's Plan runs ``count`` copies (its ``jobs`` input times ``count``), so its rates
    are the entry's totals; ``copies[i]`` is that number.
    """

    cluster: Cluster
    plans: tuple[Plan, ...]
    copies: tuple[int, ...]
    read_bytes_per_s: float
    read_iops: float
    file_opens_per_s: float
    metadata_ops_per_s: float
    first_epoch_read_bytes_per_s: float
    start_burst_read_bytes_per_s: float
    peak_write_bytes_per_s: float
    average_write_bytes_per_s: float
    write_need_bytes_per_s: float
    storage_need_bytes_per_s: float
    dataset_bytes: float
    checkpoint_capacity_bytes: float
    stored_bytes: float
    datasets: Mapping[str, float]
    clients: int
    gpus: int
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def saves(self) -> str:
        return self.cluster.saves

    @property
    def request_bytes(self) -> float:
        """Mean bytes per read over all jobs [bytes] (total bytes / total reads)."""
        return self.read_bytes_per_s / self.read_iops if self.read_iops > 0 else 0.0

    @property
    def title(self) -> str:
        kinds = len(self.plans)
        types = f"{kinds} type{'s' if kinds != 1 else ''}"
        return f"{self.name}: {sum(self.copies):,} jobs of {types} on {self.gpus:,} GPUs"

    def to_frame(self) -> pd.DataFrame:
        """One row per job type: count, GPUs, reads, writes, metadata, stored bytes, alone utilisation."""
        rows = []
        for p, n, w in zip(self.plans, self.copies, _entry_writes(self), strict=True):
            sc = p.scenario
            rows.append(
                {
                    "job": sc.name,
                    "count": n,
                    "gpus": sc.gpus_per_job * n,
                    "dataset": sc.dataset or sc.name,
                    "read_bytes_per_s": p.read_bytes_per_s,
                    "read_iops": p.read_iops,
                    "metadata_ops_per_s": p.metadata_ops_per_s,
                    "first_epoch_read_bytes_per_s": p.first_epoch_read_bytes_per_s,
                    "peak_write_bytes_per_s": w["peak"],
                    "average_write_bytes_per_s": w["average"],
                    "checkpoint_capacity_bytes": w["kept"],
                    "checkpoint_mode": ("async" if w["async"] else "sync") if w["peak"] > 0 else "none",
                    "gpu_utilization_alone": p.gpu_utilization,
                    "bottleneck_alone": p.bottleneck,
                }
            )
        return pd.DataFrame(rows)

    def totals(self) -> dict[str, float]:
        """The combined figures by name [base units] (``calc.cluster_load.TOTALS``)."""
        return {k: float(getattr(self, k)) for k in TOTALS}

    def explain(self) -> str:
        """How each combined figure is added up, with the numbers."""
        bps: Kind = "bytes_per_s"
        f = self.to_frame()
        lines = [f"Cluster plan for {self.title}", f"saves: {self.saves}; shortfall shared by: {self.cluster.policy}"]
        for r in f.to_dict("records"):
            lines.append(
                f"  {r['job']}: {r['count']} x, {r['gpus']} GPUs, reads {fmt(float(r['read_bytes_per_s']), bps)}, "
                f"{fmt(float(r['read_iops']), 'count_per_s', 'reads/s')}, checkpoint writes "
                f"{fmt(float(r['peak_write_bytes_per_s']), bps)} ({r['checkpoint_mode']}), dataset {r['dataset']}"
            )

        def total(col: str, kind: Kind = bps, unit: str = "") -> str:
            values = [float(v) for v in f[col]]
            return " + ".join(fmt(v, kind, unit) for v in values) + f" = {fmt(sum(values), kind, unit)}"

        lines.append(f"read_bytes_per_s = sum of reads = {total('read_bytes_per_s')}")
        lines.append(f"read_iops = {total('read_iops', 'count_per_s', 'reads/s')}")
        lines.append(f"metadata_ops_per_s = {total('metadata_ops_per_s', 'count_per_s', 'ops/s')}")
        lines.append(f"first_epoch_read_bytes_per_s (all start together) = {total('first_epoch_read_bytes_per_s')}")
        lines.append(
            "start_burst_read_bytes_per_s (one job starts, the others run) = reads + largest (first epoch - steady) = "
            + fmt(self.start_burst_read_bytes_per_s, bps)
        )
        lines.append(f"peak_write_bytes_per_s (saves aligned) = sum n x w = {total('peak_write_bytes_per_s')}")
        lines.append(f"average_write_bytes_per_s (staggered) = sum n x C / T = {total('average_write_bytes_per_s')}")
        lines.append(
            f"write_need_bytes_per_s ({self.saves}) = {fmt(self.write_need_bytes_per_s, bps)}: what the saves add "
            "to the reads (a sync save pauses its own reads)"
        )
        lines.append(
            f"storage_need_bytes_per_s = reads + write need = {fmt(self.read_bytes_per_s, bps)} + "
            f"{fmt(self.write_need_bytes_per_s, bps)} = {fmt(self.storage_need_bytes_per_s, bps)}"
        )
        lines.append(
            "stored_bytes = datasets once each ("
            + ", ".join(f"{k} {fmt(v, 'bytes')}" for k, v in self.datasets.items())
            + f") + checkpoints kept {fmt(self.checkpoint_capacity_bytes, 'bytes')} = {fmt(self.stored_bytes, 'bytes')}"
        )
        lines += [f"Warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_yaml(self) -> str:
        return self.cluster.to_yaml()

    @classmethod
    def from_yaml(cls, text: str, source: str = "cluster.yaml") -> ClusterPlan:
        return cluster(Cluster.from_yaml(text, source))

    def to_params(self) -> dict[str, str]:
        return self.cluster.to_params()

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> ClusterPlan:
        return cluster(Cluster.from_params(params))

    def __repr__(self) -> str:
        return (
            f"ClusterPlan({self.title}; reads {fmt(self.read_bytes_per_s, 'bytes_per_s')}, "
            f"writes {fmt(self.peak_write_bytes_per_s, 'bytes_per_s')} aligned / "
            f"{fmt(self.average_write_bytes_per_s, 'bytes_per_s')} average, stored {fmt(self.stored_bytes, 'bytes')})"
        )


def _entry_writes(cp: ClusterPlan) -> list[dict[str, float]]:
    return [_writes(p, n) for p, n in zip(cp.plans, cp.copies, strict=True)]


def cluster(jobs: Any, /, **inputs: Any) -> ClusterPlan:
    """Plan many different jobs on one storage system.

    Parameters
    ----------
    jobs
        A mapping scenario -> count (a scenario is a preset name or a Scenario), a sequence of
        (scenario, count) pairs, or a ``Cluster``.
    **inputs
        Shared Scenario inputs applied to every job (storage, storage_units, server, ...), and the
        cluster options ``saves`` (aligned | staggered), ``policy`` (demand | max-min),
        ``horizon_months``, ``job_growth_per_year``, ``data_growth_per_year``, ``name``, ``description``.

    Returns
    -------
    ClusterPlan
        Each job's Plan on the shared storage and the combined demand.
    """
    c = as_cluster(jobs, **inputs)
    # One storage for all: the shared inputs', else none (unconstrained: the answer says what to buy).
    storage = dict.fromkeys(STORAGE_INPUTS) | {k: v for k, v in c.shared.items() if k in STORAGE_INPUTS}
    plans, copies = [], []
    for j in c.jobs:
        sc = j.scenario
        n = sc.jobs * j.count
        changes = {**c.shared, **storage, "jobs": n}
        try:
            run = sc.replace(**changes, name=sc.name) if any(getattr(sc, k) != v for k, v in changes.items()) else sc
        except InputError as e:
            raise InputError(f"{sc.name}: {e.field}", e.message) from None
        plans.append(plan(run))
        copies.append(n)
    return _combine(c, tuple(plans), tuple(copies))


def _combine(c: Cluster, plans: tuple[Plan, ...], copies: tuple[int, ...]) -> ClusterPlan:
    writes = [_writes(p, n) for p, n in zip(plans, copies, strict=True)]
    reads = sum(p.read_bytes_per_s for p in plans)
    datasets: dict[str, float] = {}
    warnings: list[str] = []
    for p in plans:
        key = p.scenario.dataset or p.scenario.name
        if key in datasets and not math.isclose(datasets[key], p.dataset_bytes, rel_tol=1e-6):
            warnings.append(
                f"dataset {key!r} has different sizes in its jobs ({fmt(datasets[key], 'bytes')} and "
                f"{fmt(p.dataset_bytes, 'bytes')}): the larger is stored"
            )
        datasets[key] = max(datasets.get(key, 0.0), p.dataset_bytes)
    need_w = write_need_bytes_per_s(writes, c.saves)
    data = sum(datasets.values())
    kept = sum(w["kept"] for w in writes)
    first = [p.first_epoch_read_bytes_per_s for p in plans]
    return ClusterPlan(
        cluster=c,
        plans=plans,
        copies=copies,
        read_bytes_per_s=reads,
        read_iops=sum(p.read_iops for p in plans),
        file_opens_per_s=sum(p.file_opens_per_s for p in plans),
        metadata_ops_per_s=sum(p.metadata_ops_per_s for p in plans),
        first_epoch_read_bytes_per_s=sum(first),
        # One job starts: one copy of an entry (its plan counts every copy) reads its first epoch.
        start_burst_read_bytes_per_s=reads
        + max(((f - p.read_bytes_per_s) / n for f, p, n in zip(first, plans, copies, strict=True)), default=0.0),
        peak_write_bytes_per_s=sum(w["peak"] for w in writes),
        average_write_bytes_per_s=sum(w["average"] for w in writes),
        write_need_bytes_per_s=need_w,
        storage_need_bytes_per_s=reads + need_w,
        dataset_bytes=data,
        checkpoint_capacity_bytes=kept,
        stored_bytes=data + kept,
        datasets=datasets,
        clients=sum(int(p.values["clients"]) for p in plans),  # each plan's nodes (calc.stages, one formula)
        gpus=sum(p.scenario.gpus_per_job * p.scenario.jobs for p in plans),
        warnings=tuple(warnings),
    )


# ------------------------------------------------------------------ timeline (the day chart)


def timeline(cp: ClusterPlan, seconds: float = 86400.0) -> pd.DataFrame:
    """Each job type's reads and checkpoint writes over ``seconds`` [bytes/s], as step segments
    (``calc.cluster_load.timeline``, where calc.plots reads it)."""
    return cluster_load.timeline(cp, seconds)


# ------------------------------------------------------------------ the answer for the cluster


@dataclass(frozen=True)
class ClusterAnswer:
    """One answer for the shared storage: what to buy, what it costs, what each job gets.

    ``recommendation`` is ``calc.sizing.recommend``'s table for the combined load; ``best`` its
    cheapest buyable row; ``jobs`` one row per job type (demand share, utilisation, idle cost,
    chargeback); ``shortfall`` the fraction of the combined demand the given storage serves
    (1 = all); ``growth`` the projection (month the next purchase is due, units then).
    """

    plan: ClusterPlan
    recommendation: pd.DataFrame
    best: dict[str, Any] | None
    runners_up: tuple[dict[str, Any], ...]
    served_fraction: float
    binding_axis: str
    own: str
    jobs: pd.DataFrame
    growth: dict[str, Any]
    charged_option: str
    site_lines: tuple[dict[str, Any], ...] = ()
    """No site given (no job, server or shared storage names one): each site's first buyable row, as
    a job's answer lists them; ``best`` is then the cheapest of these."""

    @property
    def headline(self) -> str:
        if self.site_lines:
            # As a job's answer: the meeting picks the site, the page does not pick one for it.
            return "Buy for the cluster: " + sz.site_question(self.site_lines)
        if self.best is None:
            return "No storage option in the catalog serves this cluster: see the reasons per option."
        return "Buy for the cluster: " + sz.describe_option(self.best)

    @property
    def monthly_usd(self) -> float:
        return float(self.jobs["monthly_usd"].sum())

    def lines(self) -> list[str]:
        cp = self.plan
        bps: Kind = "bytes_per_s"
        out = [self.headline]
        out += [f"{sz.site_label(r['site'])}: " + sz.describe_option(r) for r in self.site_lines]
        if self.runners_up:
            out.append("Runners-up: " + "; ".join(sz.describe_option(r, brief=True) for r in self.runners_up))
        out.append(
            f"Combined load ({cp.saves} saves): reads {fmt(cp.read_bytes_per_s, bps)} "
            f"({fmt(cp.read_iops, 'count_per_s', 'reads/s')}, "
            f"{fmt(cp.metadata_ops_per_s, 'count_per_s', 'metadata ops/s')}) "
            f"+ checkpoint writes {fmt(cp.write_need_bytes_per_s, bps)} = {fmt(cp.storage_need_bytes_per_s, bps)}; "
            f"write peaks {fmt(cp.peak_write_bytes_per_s, bps)} aligned, {fmt(cp.average_write_bytes_per_s, bps)} on "
            f"average; first epochs {fmt(cp.first_epoch_read_bytes_per_s, bps)} if all start together; "
            f"stored {fmt(cp.stored_bytes, 'bytes')} (each dataset once)."
        )
        out.append(self.own)
        g = self.growth
        if g.get("text"):
            out.append(g["text"])
        if self.charged_option and math.isfinite(self.monthly_usd):
            out.append(
                f"Chargeback ({self.charged_option}, {fmt_usd(self.monthly_usd)} a month): "
                + "; ".join(f"{r['job']} {fmt_usd(float(r['monthly_usd']))}" for r in self.jobs.to_dict("records"))
                + " (capacity rent by stored bytes, read charges by each job's reads, provisioned performance and "
                "the rest by bandwidth, bought units by the axis that sized them)."
            )
        idle = self.jobs[self.jobs["gpu_utilization"] < self.jobs["gpu_utilization_alone"] - 1e-9]
        for r in idle.itertuples():
            usd = float(r.idle_usd_per_month)  # type: ignore[arg-type]
            money = f", {fmt_usd(usd)} a month" if math.isfinite(usd) else ""
            out.append(
                f"{r.job}: its {r.gpus:,} GPUs run at {r.gpu_utilization:.0%} on the shared storage "
                f"({r.gpu_utilization_alone:.0%} alone){money}."
            )
        return out


def _site_lines(cp: ClusterPlan, rec: pd.DataFrame) -> tuple[dict[str, Any], ...]:
    """With no site (and more than one job): each site's first buyable row, in ``st.SITES`` order."""
    if _one_job(cp) or job_site(cp.plans[0].scenario) is not None:
        return ()
    out = []
    for site in st.SITES:
        ok = rec[sz._buyable(rec, site, False) & (rec["site"] == site)]
        if len(ok):
            out.append({str(k): x for k, x in ok.iloc[0].items()})
    return tuple(out)


def recommend_cluster(cp: ClusterPlan) -> pd.DataFrame:
    """``calc.sizing.recommend``'s table for the combined load (every option, units, cost): the
    sizing engine run on the cluster's demand (``cluster_demand``)."""
    return en.rank(cluster_demand(cp))


def _one_job(cp: ClusterPlan) -> bool:
    """A cluster of one job (one entry, one copy): its plan and answer are the job's own. Copies of
    one entry keep the cluster's model of bursts that coincide (one restarts, the others run)."""
    return len(cp.plans) == 1 and cp.copies[0] == 1


def cluster_demand(cp: ClusterPlan, jobs_factor: float = 1.0, data_factor: float = 1.0) -> en.Demand:
    """The cluster's combined demand on one shared store.

    Reads, requests, opens and the saves' write need (beside the reads: a sync save's pause is
    already netted out in ``write_need_bytes_per_s``) summed over the jobs; capacity: the datasets
    once and every job's kept checkpoints; the month's checkpoint bytes and write requests summed
    over every copy; the mean read size (total bytes / total reads); the strictest latency budget
    and loader. ``jobs_factor`` scales what the jobs do (growth in job count), ``data_factor`` the
    datasets (growth in data): ``growth`` runs the engine on next month's demand this way. The
    shared inputs that decide what may be bought, and where, are the first job's (they are shared).
    """
    first = cp.plans[0]
    if _one_job(cp) and jobs_factor == 1 and data_factor == 1:
        return en.plan_demand(first)  # one job: its plan's demand (bursts, restores, GPU time), no other
    sc = first.scenario
    written = puts = 0.0
    for p in cp.plans:
        b, r = checkpoint_writes_per_month(p)  # all its copies' (the plan's jobs input is their count)
        written, puts = written + b, puts + r
    stored = cp.dataset_bytes * data_factor + cp.checkpoint_capacity_bytes * jobs_factor
    # Bursts that coincide: one job restarts (every rank reads its shard within its restore budget)
    # while the others read and save as usual. A starting job's first epoch is said, not bought for
    # (start_burst_read_bytes_per_s), as for one job.
    restore = max(
        (p.restore_read_bytes_per_s if p.checkpoint_write_bytes_per_s > 0 else 0.0 for p in cp.plans), default=0.0
    )
    steady = cp.storage_need_bytes_per_s * jobs_factor
    need = max(steady, steady + restore)
    return en.Demand(
        read_bytes_per_s=cp.read_bytes_per_s * jobs_factor,
        read_iops=cp.read_iops * jobs_factor,
        file_opens_per_s=cp.file_opens_per_s * jobs_factor,
        request_bytes=cp.request_bytes if cp.read_iops > 0 else first.request_bytes,
        write_bytes_per_s=cp.write_need_bytes_per_s * jobs_factor,
        need_bytes_per_s=need,
        design_point="one job restoring" if restore > 0 else "steady reads",
        writes_overlap_reads=True,
        capacity_bytes=stored,
        dataset_bytes=stored,
        written_bytes_per_month=written * jobs_factor,
        write_requests_per_month=puts * jobs_factor,
        clients=max(cp.clients, 1),
        gpus=max(cp.gpus, 1),
        num_workers=min(p.scenario.num_workers for p in cp.plans),
        examples_per_file=min(p.scenario.examples_per_file for p in cp.plans),
        latency_budget_s=min(p.latency_budget_s for p in cp.plans),
        fits_in_ram=all(p.fits_in_ram for p in cp.plans),
        host_ram_bytes=first.inputs["host_ram_bytes"],
        workstation=False,
        **en.policy(sc),
    )


@dataclass(frozen=True)
class _Load:
    """One demand on the storage: bytes/s read and written beside, reads, opens, metadata, stored."""

    read: float
    write: float
    iops: float
    opens: float
    stored: float


def axis_loads(o: st.StorageOption, load: _Load, units: float, clients: int) -> dict[str, float]:
    """Share of the given system each axis of ``load`` uses (> 1: short) [fraction].

    ``busy``: seeks and transfers of ``units`` units (``storage.unit_loads``, the sizing's own
    per-unit math); ``client cap``: bytes over the clients' caps; ``system IOPS``: random reads
    over the aggregate cap; ``metadata``: opens x ops per open over the metadata service.
    """
    req = load.read / load.iops if load.iops > 0 else 1.0
    u = st.unit_loads(o, load.read, load.iops, req, load.stored, load.opens, load.write, writes_overlap_reads=True)
    rnd = st.random_reads(o, load.iops, load.opens)
    meta = load.opens * demand.METADATA_OPS_PER_OPEN.get(o.protocol, 0.0)
    return {
        "busy": (u["iops"] + u["bandwidth"]) / units,
        "client cap": (load.read + load.write) / (clients * o.client_bytes_per_s),
        "system IOPS": rnd / o.aggregate_iops,
        "metadata": meta / o.metadata_ops_at(units),
        "write requests": u["puts"] / units,
    }


def share(loads: Sequence[float], gpus: Sequence[float], policy: str) -> list[float]:
    """Fraction of its demand each job is served when their loads (fractions of the binding
    axis's capacity) sum past 1.

    ``demand``: every job gets 1 / sum(loads). ``max-min``: water-filling [2]: every GPU gets an
    equal share λ; a job needing less than λ x its GPUs gets all it needs, the rest is shared
    again; λ solves sum min(load_j, λ g_j) = 1.
    """
    total = sum(loads)
    if total <= 1:
        return [1.0] * len(loads)
    if policy == "demand":
        return [1.0 / total if x > 0 else 1.0 for x in loads]
    # Water-filling: raise λ through the jobs in order of load per GPU.
    order = sorted(range(len(loads)), key=lambda j: loads[j] / gpus[j])
    left, weight = 1.0, float(sum(gpus))
    lam = 0.0
    for j in order:
        if loads[j] <= left * gpus[j] / weight:
            left -= loads[j]
            weight -= gpus[j]
        else:
            lam = left / weight
            break
    return [min(1.0, lam * g / x) if x > 0 and lam > 0 else 1.0 for x, g in zip(loads, gpus, strict=True)]


def cluster_answer(x: ClusterPlan | Cluster | Any, /, **inputs: Any) -> ClusterAnswer:
    """One answer for the shared system at the combined load; each job's utilisation and cost."""
    cp = _as_cluster_plan(x, inputs)
    rec = recommend_cluster(cp)
    first = cp.plans[0].scenario
    if _one_job(cp):  # one job: the job's own answer's rows (its demand is the plan's)
        rows = sz.answer_rows(cp.plans[0], rec)[0]
    else:
        ok = rec[sz._buyable(rec, job_site(first), first.allow_other_site)]
        rows = [dict(r) for _, r in ok.iterrows()]
    site_lines = _site_lines(cp, rec)
    cheapest = sz.chosen_design(None, (), site_lines)  # no site: the cheapest site's line, as a job's answer
    if cheapest is not None:
        rows = [r for r in rows if r["site"] in (cheapest["site"], "any")]
    best = rows[0] if rows else None
    loads = [_entry_load(cp, i) for i in range(len(cp.plans))]
    served, axis, own, fractions = _shortfall(cp, loads)
    alone = _alone_fractions(cp, loads)
    gpus = [p.scenario.gpus_per_job * n for p, n in zip(cp.plans, cp.copies, strict=True)]
    charged = _charged_row(cp, rec, best)
    charge = chargeback(cp, charged, loads) if charged is not None else [math.nan] * len(cp.plans)
    rows_out = []
    for p, n, g, f, f_alone, usd in zip(cp.plans, cp.copies, gpus, fractions, alone, charge, strict=True):
        alone_util = p.gpu_utilization
        if _one_job(cp) and p.scenario.storage is None and p.scenario.storage_bytes_per_s is None:
            on_design = sz.design_plan(p, rec)  # no shared storage: the job on the design bought, as its answer
            alone_util = on_design.gpu_utilization if on_design is not None else alone_util
        util = shared_utilization(alone_util, p.scenario.target_gpu_utilization, f, f_alone)
        sc = p.scenario
        price, _ = en.gpu_price_per_hour(sc.gpu, sc.gpu_price_per_hour)
        idle_h = en.idle_gpu_hours_per_month(g, util)
        rows_out.append(
            {
                "job": sc.name,
                "count": n,
                "gpus": g,
                "served_fraction": f,
                "gpu_utilization_alone": p.gpu_utilization,
                "gpu_utilization": util,
                "idle_gpu_hours_per_month": idle_h,
                "idle_usd_per_month": idle_h * price,
                "monthly_usd": usd,
            }
        )
    return ClusterAnswer(
        plan=cp,
        recommendation=rec,
        best=best,
        runners_up=tuple(rows[1:3]),
        served_fraction=served,
        binding_axis=axis,
        own=own,
        jobs=pd.DataFrame(rows_out),
        growth=growth(cp, best, charged if charged is not None and cp.plans[0].scenario.storage_units else None),
        charged_option=str(charged["option"]) if charged is not None else "",
        site_lines=site_lines,
    )


def shared_utilization(alone_util: float, target: float, served: float, served_alone: float) -> float:
    """A job's GPU utilisation on the shared storage [fraction].

    ``alone_util`` is its plan's utilisation on that storage by itself (the plan's pipeline:
    readiness, reads in flight, per-client caps, page cache, and its own saves); ``served`` the
    share of its demand the storage serves beside the other jobs, ``served_alone`` the share the
    same axis model gives it alone. Only what the other jobs take away lowers the plan's figure:
    the ratio served / served_alone. A job whose plan alone fits (served_alone = 1) gets
    served x target, no more than its plan's; a job already short alone scales its plan's figure.
    A 1-job cluster has served = served_alone, so its utilisation is its plan's.
    """
    if served >= served_alone:
        return alone_util
    if served_alone >= 1:
        return min(alone_util, served * target)
    return alone_util * served / served_alone


def _alone_fractions(cp: ClusterPlan, loads: Sequence[_Load]) -> list[float]:
    """The share of its demand each entry would be served on the shared storage with no other
    entry loading it (the same axis model as ``_shortfall``; its plan already counts its copies)."""
    idle = _Load(0.0, 0.0, 0.0, 0.0, 0.0)
    out = []
    for i in range(len(loads)):
        own = [x if j == i else idle for j, x in enumerate(loads)]
        out.append(_shortfall(cp, own)[3][i])
    return out


def _as_cluster_plan(x: Any, inputs: dict[str, Any]) -> ClusterPlan:
    if isinstance(x, ClusterPlan):
        return cluster(x.cluster, **inputs) if inputs else x
    return cluster(x, **inputs)


def _entry_load(cp: ClusterPlan, i: int) -> _Load:
    """Entry i's share of the combined load (its write need: its part of the cluster's)."""
    p, n = cp.plans[i], cp.copies[i]
    writes = _entry_writes(cp)
    mine = writes[i]
    if cp.saves == "aligned" or mine["async"]:
        w = mine["extra_aligned"]
    else:
        sync = [x for x in writes if not x["async"]]
        sync_need = cp.write_need_bytes_per_s - sum(x["extra_aligned"] for x in writes if x["async"])
        avg = sum(x["average"] for x in sync)
        w = sync_need * (mine["average"] / avg) if avg > 0 else 0.0
    key = p.scenario.dataset or p.scenario.name
    sharers = sum(c for q, c in zip(cp.plans, cp.copies, strict=True) if (q.scenario.dataset or q.scenario.name) == key)
    stored = cp.datasets[key] * n / sharers + mine["kept"]
    return _Load(p.read_bytes_per_s, w, p.read_iops, p.file_opens_per_s, stored)


def _shortfall(cp: ClusterPlan, loads: Sequence[_Load]) -> tuple[float, str, str, list[float]]:
    """The share of the combined demand the given shared storage serves, its binding axis, the
    sentence, and the fraction of its demand each entry is served.

    Every axis whose loads add past its capacity is shared by ``policy`` among the jobs that
    load it (a job that does not use an axis is not slowed by it); a job gets the smallest of
    its shares over the short axes.
    """
    first = cp.plans[0].scenario
    bps: Kind = "bytes_per_s"
    n = len(loads)
    gpus = [p.scenario.gpus_per_job * c for p, c in zip(cp.plans, cp.copies, strict=True)]
    if first.storage is None and first.storage_bytes_per_s is None:
        text = (
            f"No shared storage given: the cluster needs {fmt(cp.storage_need_bytes_per_s, bps)} and "
            f"{fmt(cp.read_iops, 'count_per_s', 'reads/s')} in steady state."
        )
        return 1.0, "", text, [1.0] * n
    room = ""
    if first.storage is None:
        bw = float(parse(first.storage_bytes_per_s, "bytes_per_s", "storage_bytes_per_s"))
        table = [{"bandwidth": (x.read + x.write) / bw} for x in loads]
        have = fmt(bw, bps)
    else:
        o = st.option(first.storage)
        units = float(first.storage_units) if first.storage_units is not None else o.max_units
        if not math.isfinite(units):
            return 1.0, "", f"Shared storage {o.name}, as many units as needed: see the answer above.", [1.0] * n
        table = [axis_loads(o, x, units, cp.clients) for x in loads]
        have = f"{int(units):,} x {o.name}"
        if cp.stored_bytes > units * o.capacity_bytes:
            room = (
                f" It holds {fmt(units * o.capacity_bytes, 'bytes')}; the cluster stores "
                f"{fmt(cp.stored_bytes, 'bytes')}: too small."
            )
    totals = {a: sum(t[a] for t in table) for a in table[0]}
    axis = max(totals, key=lambda k: totals[k])
    need = totals[axis]
    if need <= 1 + 1e-9:
        text = (
            f"Your shared storage, {have}, serves the combined load with {1 / need:.1f}x headroom."
            if need > 0
            else f"Your shared storage, {have}, carries no load."
        )
        return 1.0, "", text + room, [1.0] * n
    fractions = [1.0] * n
    for a, total in totals.items():
        if total > 1 + 1e-9:
            got = share([t[a] for t in table], gpus, cp.cluster.policy)
            fractions = [min(f, g) for f, g in zip(fractions, got, strict=True)]
    text = (
        f"Your shared storage, {have}, serves {1 / need:.0%} of the combined demand (limited by {axis}); "
        f"the shortfall is shared by {cp.cluster.policy} among the jobs that load it."
    )
    return 1.0 / need, axis, text + room, fractions


def _charged_row(cp: ClusterPlan, rec: pd.DataFrame, best: dict[str, Any] | None) -> dict[str, Any] | None:
    """The option whose cost is charged back: the shared storage given, else the one to buy."""
    sc = cp.plans[0].scenario
    name = sc.storage
    if name is not None:
        mine = rec[rec["option"] == name]
        if len(mine) and math.isfinite(float(mine.iloc[0]["monthly_total_usd"])):
            row = dict(mine.iloc[0])
            if sc.storage_units is not None and float(sc.storage_units) != float(row["units"]):
                # The system as it is: charge back all of it (240 TiB bills 240 TiB), not what the load needs.
                units = float(sc.storage_units)
                d = cluster_demand(cp)
                usd = en.price(st.option(name), d, en.Sized(loads={}, units=units, perf_units=units, limiting="given"))
                row.update(units=en.whole(units), limiting="given", monthly_total_usd=usd["total"])
            return row
    return best


def chargeback(cp: ClusterPlan, row: Mapping[str, Any], loads: Sequence[_Load] | None = None) -> list[float]:
    """Each entry's monthly USD of the storage option ``row`` (a ``recommend`` row).

    Rule: capacity rent by each job's stored bytes (a shared dataset split by the jobs reading
    it); read charges by each job's own GB read and requests; bought units (amortised) by the
    axis that sized them (bandwidth, random reads or capacity; equally per GPU for a minimum
    size); provisioned performance and anything else by bandwidth (reads + write need).
    The parts add up to the row's ``monthly_total_usd``.
    """
    o = st.option(str(row["option"]))
    units = float(row["units"])
    loads = loads or [_entry_load(cp, i) for i in range(len(cp.plans))]
    total = float(row["monthly_total_usd"])
    stored = [x.stored for x in loads]
    bw = [x.read + x.write for x in loads]
    rnd = [st.random_reads(o, x.iops, x.opens) for x in loads]
    gpus = [p.scenario.gpus_per_job * n for p, n in zip(cp.plans, cp.copies, strict=True)]
    cap_usd = 0.0
    if math.isfinite(o.price_per_gb_month):
        elastic = o.unit == "volume" or not math.isfinite(o.capacity_bytes)
        billed = cp.stored_bytes if elastic else units * o.capacity_bytes
        cap_usd = o.price_per_gb_month * billed / 1e9
    read_usd = [
        (x.read / 1e9 * o.price_per_gb_read + x.iops / 1e6 * o.price_per_million_requests) * MONTH_S for x in loads
    ]
    months = cp.plans[0].scenario.amortization_months
    bought = units * o.purchase_price / months if math.isfinite(o.purchase_price) else 0.0
    limiting = str(row["limiting"])
    axes: dict[str, Sequence[float]] = {"capacity": stored, "iops": rnd, "minimum": gpus}
    by_axis = axes.get(limiting, bw)
    rest = total - cap_usd - sum(read_usd) - bought

    def part(weights: Sequence[float], usd: float) -> list[float]:
        s = float(sum(weights))
        return [usd * w / s for w in weights] if s > 0 else [usd / len(weights)] * len(weights)

    return [
        a + b + c + d
        for a, b, c, d in zip(part(stored, cap_usd), read_usd, part(by_axis, bought), part(bw, rest), strict=True)
    ]


def _owned_growth(cp: ClusterPlan, owned: Mapping[str, Any]) -> str:
    """When the system the cluster has (``storage`` x ``storage_units``) stops serving: the first
    month the sizing engine needs more units of it than are owned."""
    c = cp.cluster
    o = st.option(str(owned["option"]))
    have = float(owned["units"])
    for m in range(c.horizon_months + 1):
        fj = (1 + c.job_growth_per_year) ** (m / 12)
        fd = (1 + c.data_growth_per_year) ** (m / 12)
        sized = en.size(o, cluster_demand(cp, fj, fd))
        if sized.units > have + 1e-9:
            return (
                f"Your {en.whole(have):,} x {o.name} serve until month {m}: then {en.whole(sized.units):,} are needed "
                f"(limited by {sized.limiting}); buy more before then."
            )
    return f"Your {en.whole(have):,} x {o.name} still serve in {c.horizon_months} months."


def growth(cp: ClusterPlan, best: Mapping[str, Any] | None, owned: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What to buy now and when the next purchase is due, month by month to the horizon.

    Job counts scale reads, writes, requests, metadata, checkpoint writes and kept checkpoints by
    (1 + job_growth_per_year)^(m / 12); datasets scale by (1 + data_growth_per_year)^(m / 12).
    Each month the sizing engine sizes the option bought now (``best``) for that month's demand
    (``cluster_demand``): the same axes, protection, fill limit, endurance and enclosures as the
    answer, so month 0 needs what the answer buys. The next purchase is due in the first month
    that needs more units.
    """
    c = cp.cluster
    if best is None or c.horizon_months == 0:
        return {"text": "", "next_purchase_month": None, "units_now": None, "units_at_horizon": None}
    o = st.option(str(best["option"]))
    now = int(best["units"])
    if o.kind == "ram":
        return {"text": "", "next_purchase_month": None, "units_now": now, "units_at_horizon": None}
    due, units_m = None, now
    months = []
    for m in range(c.horizon_months + 1):
        fj = (1 + c.job_growth_per_year) ** (m / 12)
        fd = (1 + c.data_growth_per_year) ** (m / 12)
        sized = en.size(o, cluster_demand(cp, fj, fd))
        units_m = int(sized.units)
        months.append({"month": m, "units": units_m, "limiting": sized.limiting})
        if due is None and units_m > now:
            due = m
    grow = f"jobs +{c.job_growth_per_year:.0%} and data +{c.data_growth_per_year:.0%} a year"
    if due is None:
        text = f"Growth ({grow}): {now:,} x {o.name} still serve in {c.horizon_months} months; no purchase due."
    else:
        text = (
            f"Growth ({grow}): buy {now:,} x {o.name} now; the next purchase is due in month {due} "
            f"({months[due]['units']:,} needed, limited by {months[due]['limiting']}); "
            f"{units_m:,} by month {c.horizon_months}."
        )
        if units_m > o.max_units:
            text += f" One {o.name} system allows {o.max_units:,.0f}: plan a second system."
    if owned is not None:
        text += " " + _owned_growth(cp, owned)
    return {
        "text": text,
        "next_purchase_month": due,
        "units_now": now,
        "units_at_horizon": units_m,
        "option": o.name,
        "months": pd.DataFrame(months),
    }


@overload
def answer(x: ClusterPlan | Cluster, /, **overrides: Any) -> ClusterAnswer: ...
@overload
def answer(x: sz.PlanLike, /, **overrides: Any) -> sz.Answer: ...
def answer(x: Any, /, **overrides: Any) -> sz.Answer | ClusterAnswer:
    """``calc.answer``: a cluster plan's answer (``cluster_answer``), else the single job's
    (``calc.sizing.answer``, unchanged)."""
    if isinstance(x, (ClusterPlan, Cluster)):
        return cluster_answer(x, **overrides)
    return sz.answer(x, **overrides)


# ------------------------------------------------------------------ presets and the command line


def cluster_files() -> dict[str, Any]:
    """Cluster presets by name (presets/clusters/NAME.yaml)."""
    folder = catalog.presets_dir() / "clusters"
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def clusters() -> list[str]:
    """Names of the cluster presets."""
    return list(cluster_files())


def load(target: str) -> Cluster:
    """A cluster from a YAML file path or a preset name (presets/clusters)."""
    from pathlib import Path

    path = Path(target)
    try:
        is_path = path.suffix.lower() in (".yaml", ".yml") or path.exists()
        is_file = is_path and path.is_file()
    except (OSError, ValueError):  # a name too long for a file, or holding NUL: no such file
        is_path, is_file = path.suffix.lower() in (".yaml", ".yml"), False
    if is_path:
        if not is_file:
            raise InputError("cluster", f"no file {target!r}; accepted: a cluster YAML file or {', '.join(clusters())}")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError("cluster", f"cannot read {target!r} as UTF-8 text: {e}") from None
        return Cluster.from_yaml(text, path.name)
    files = cluster_files()
    key = catalog.lookup(target, files, "cluster", "cluster")
    return Cluster.from_yaml(files[key].read_text(encoding="utf-8"), files[key].name)


def from_command_line(target: str | None, jobs: Sequence[str], sets: Mapping[str, str]) -> Cluster:
    """``python -m calc cluster [FILE|PRESET] [--job preset:count ...] [--set key=value ...]``.

    ``--job`` adds job types (``preset:count``, ``|key=value`` pairs as in links); ``--set``
    gives shared inputs or the cluster options (saves, policy, horizon_months, growth rates).
    """
    base = load(target) if target else None
    extra = [_job_from_text(j) for j in jobs]
    if base is None and not extra:
        raise InputError("cluster", "give a cluster YAML file, a cluster preset or --job preset:count")
    shared: dict[str, Any] = dict(base.shared) if base else {}
    given: dict[str, Any] = {}
    for key, value in sets.items():
        if key in _OPTIONS:  # the cluster's own options, name and description among them
            given[key] = _option(key, value)
        elif key in NOT_SHARED:
            raise InputError(key, f"cannot be a shared input: {NOT_SHARED[key]}")
        else:
            shared[key] = _read_input(key, value)
    if base is None:
        return Cluster(jobs=tuple(extra), shared=shared, **given)
    return dataclasses.replace(base, jobs=base.jobs + tuple(extra), shared=shared, **given)


def command_output(c: Cluster, form: str) -> str:
    """The CLI's text: table (answer, per-job rows, totals), json, yaml or markdown (the report)."""
    a = cluster_answer(c)
    if form == "markdown":
        return cluster_markdown(a)
    jobs = a.plan.to_frame().merge(a.jobs.drop(columns=["count", "gpus", "gpu_utilization_alone"]), on="job")
    if form == "table":
        shown = pd.DataFrame(
            {
                "job": jobs["job"],
                "count": jobs["count"],
                "gpus": jobs["gpus"],
                "reads": [fmt(v, "bytes_per_s") for v in jobs["read_bytes_per_s"]],
                "reads/s": [fmt(v, "count_per_s") for v in jobs["read_iops"]],
                "save burst": [fmt(v, "bytes_per_s") for v in jobs["peak_write_bytes_per_s"]],
                "utilisation": [f"{v:.0%}" for v in jobs["gpu_utilization"]],
                "monthly": [fmt_usd(v) if math.isfinite(v) else "n/a" for v in jobs["monthly_usd"]],
            }
        )
        body = "\n".join(a.lines())
        totals = "\n".join(f"{k:<32} {_fmt_total(k, v)}" for k, v in a.plan.totals().items())
        return f"{a.plan.title}\n{c.description}\n\n{body}\n\n{shown.to_string(index=False)}\n\n{totals}"
    data = {
        "cluster": c.to_dict(),
        "totals": a.plan.totals(),
        "answer": a.lines(),
        "best": {k: a.best[k] for k in ("option", "units", "unit", "monthly_total_usd")} if a.best else None,
        "growth": {k: v for k, v in a.growth.items() if k != "months"},
        "jobs": [{k: _plain(v) for k, v in r.items()} for r in jobs.to_dict("records")],
    }
    if form == "json":
        import json

        return json.dumps(json_safe(data, finite=True), indent=1, allow_nan=False)
    return yaml.safe_dump(json_safe(data), sort_keys=False)


def _plain(v: Any) -> Any:
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    return v


def json_safe(data: Any, *, finite: bool = False) -> Any:
    """Plain Python data for yaml.safe_dump and json.dumps (NumPy scalars become numbers).

    ``finite``: for JSON, which has no NaN or infinity, a number that is not applicable (NaN:
    a cost with no price) becomes ``null`` and an unlimited one (infinity) the string ``"inf"``
    (``"-inf"``), so strict JSON readers accept the output.
    """
    if isinstance(data, Mapping):
        return {str(k): json_safe(v, finite=finite) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [json_safe(v, finite=finite) for v in data]
    v = _plain(data)
    if finite and isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _fmt_total(key: str, value: float) -> str:
    return fmt_total(key, value)
