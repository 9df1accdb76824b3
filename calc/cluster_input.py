"""A cluster's inputs (docs/model.md section 10.1): the job mix, the inputs every job shares and the
cluster's own options, read from Python, YAML, links and the command line, each checked as a
Scenario input is (a field named in every error).

``Cluster`` and ``Job`` are the inputs; ``as_cluster`` builds one from a mapping, pairs, a preset
name or a YAML file; ``Cluster.to_yaml``/``from_yaml`` and ``to_params``/``from_params`` read back
equal; ``load`` reads a cluster preset (presets/clusters) or a file; ``from_command_line`` reads
``python -m calc cluster``'s arguments. ``calc.cluster`` plans and answers a Cluster.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calc import catalog
from calc.errors import InputError, PresetError
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

SAVES = ("aligned", "staggered")
"""How the jobs' checkpoint saves fall in time: all at once, or spread so they overlap least."""

RESTARTS = ("one", "all")
"""Which jobs restore together: one at a time while the others run (a job's own failure, a
scheduler restart), or every job at once after an outage (power, fabric or storage: issue 38)."""


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
    "restarts": FieldInfo(
        "choice",
        "cluster",
        "Restarts",
        "One job restores while the others run, or all after an outage.",
        choices=RESTARTS,
    ),
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
    ``saves``: aligned or staggered checkpoint saves; ``restarts``: one job restores at a time
    or all after an outage; ``policy``: how a shortfall is shared;
    ``horizon_months``, ``job_growth_per_year``, ``data_growth_per_year`` (fractions: 0.5 = +50 %
    a year, compounded monthly) project the load for the next purchase.
    """

    jobs: tuple[Job, ...]
    shared: Mapping[str, Any] = field(default_factory=dict)
    name: str = "cluster"
    description: str = ""
    saves: str = "aligned"
    restarts: str = "one"
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
        for key in _OPTIONS[:-2]:  # the options, not name and description (said above)
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
        allowed = {"jobs", "shared", *_OPTIONS}
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
        opts = {key: _cluster_option(key, params[f"cluster_{key}"]) for key in _OPTIONS if f"cluster_{key}" in params}
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


def _cluster_option(key: str, text: Any) -> Any:
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
    # As cluster() runs each job: a shared store replaces the job's own; with none shared, the site
    # the job's own storage names is kept (calc.cluster, issue 38).
    placed = {k: shared[k] for k in ("site", "server") if k in shared}
    if any(shared.get(k) is not None for k in STORAGE_INPUTS):
        placed["storage"] = shared.get("storage")
    for j in jobs:
        at = job_site(_with(j.scenario, placed, f"jobs: {j.name}"))
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


def as_cluster(jobs: Any, /, **inputs: Any) -> Cluster:
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


_OPTIONS = (
    "saves",
    "restarts",
    "policy",
    "horizon_months",
    "job_growth_per_year",
    "data_growth_per_year",
    "name",
    "description",
)
"""The cluster's own options (name and description last), declared once: the YAML, links and
keyword arguments read them from here."""


def cluster_files() -> dict[str, Any]:
    """Cluster presets by name (presets/clusters/NAME.yaml)."""
    folder = catalog.presets_dir() / "clusters"
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def clusters() -> list[str]:
    """Names of the cluster presets."""
    return list(cluster_files())


def load(target: str) -> Cluster:
    """A cluster from a YAML file path or a preset name (presets/clusters)."""
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
            given[key] = _cluster_option(key, value)
        elif key in NOT_SHARED:
            raise InputError(key, f"cannot be a shared input: {NOT_SHARED[key]}")
        else:
            shared[key] = _read_input(key, value)
    if base is None:
        return Cluster(jobs=tuple(extra), shared=shared, **given)
    return dataclasses.replace(base, jobs=base.jobs + tuple(extra), shared=shared, **given)
