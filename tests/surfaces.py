"""Generated inputs over the surfaces issue 32 hardened, shared by the property tests (a few
hundred cases each, in the suite) and benchmarks/fuzz_surfaces.py (hundreds of thousands).

Each ``check_*`` function takes one generated case and asserts the surface's contract; each
strategy generates cases for it.
"""

from __future__ import annotations

import itertools
import math
import sys
from typing import Any

import pytest
import yaml
from hypothesis import strategies as st

import calc
import calc.cli
import calc.cluster
import calc.cluster_input as _cluster_input
from calc.registry import OUTPUTS
from calc.scenario import FIELDS as _FIELDS
from calc.scenario import choices
from calc.stages import UNLIMITED as _UNLIMITED
from calc.sweep import OUTPUT_SUFFIX

_cluster = sys.modules["calc.cluster"]  # the module (calc.cluster is also the function)

FLOAT_TOL = 1e-9

SWEEP_BASES = ("gpt-1b-h100-tokens", "llama3-8b-pretrain-8xh100", "resnet50-8xh100-imagenet", "beast-small-files")

SWEEP_VALUES: dict[str, list[Any]] = {
    "site": [None, "on-prem", "aws", "gcp", "azure"],
    "server": [None, "DGX-H100", "aws-p5.48xlarge", "gcp-a3-highgpu-8g"],
    "storage": [None, "aws-s3-standard", "nvme-gen4", "nfs-25gbe", "gcp-cloud-storage", "aws-fsx-lustre-ssd-125"],
    "site_link_bytes_per_s": [None, "1 Gb/s", "100 Gb/s"],
    "allow_other_site": [False, True],
    "storage_units": [None, 1, 4],
    "zero_stage": [0, 1, 2, 3],
    "tensor_parallel": [1, 2, 4, 8],
    "pipeline_parallel": [1, 2],
    "context_parallel": [1, 2],
    "gpus_per_job": [1, 8, 16],
    "state_shards": [1, 8],
    "checkpoint_mode": ["auto", "sync", "async"],
    "checkpoint_interval_s": [None, "10 min", "1 h", "optimal"],
    "mtbf_s": [None, "1 h", "1 d"],
    "run_length_s": [None, "30 d", "90 d"],
    "checkpoint_milestone_interval_s": [None, "1 d", "7 d"],
    "checkpoint_keep": [1, 3],
    "num_workers": [0, 4, 16],
    "example_bytes": [None, "64 KiB", "4 MiB"],
    "batch_size": [None, 1, 4],
    "gpu": ["H100-SXM", "A100-SXM4-80GB"],
    "precision": ["bf16", "fp32"],
    "model": ["gpt_1b", "llama3_8b", "resnet50"],
    "jobs": [1, 3],
}


def _plan_or_refusal(sc: calc.Scenario) -> calc.Plan | str:
    """plan(); a model that does not fit is "does not fit" (the sweep keeps such a row)."""
    try:
        return calc.plan(sc)
    except calc.DoesNotFitError:
        return "does not fit"


@st.composite
def sweep_cases(draw: st.DrawFn) -> tuple[str, dict[str, list[Any]]]:
    """A preset base and one to three axes of two or three values each from ``SWEEP_VALUES``."""
    base = draw(st.sampled_from(SWEEP_BASES))
    names = draw(st.lists(st.sampled_from(sorted(SWEEP_VALUES)), min_size=1, max_size=3, unique=True))
    axes = {k: draw(st.lists(st.sampled_from(SWEEP_VALUES[k]), min_size=1, max_size=3, unique=True)) for k in names}
    return base, axes


def check_sweep(case: tuple[str, dict[str, list[Any]]]) -> None:
    """The sweep refuses exactly when plan() refuses one of its combinations; otherwise each row
    equals plan() of its combination (a row that does not fit is marked ``fits = False``)."""
    name, axes = case
    base = calc.scenario(name)
    wants: list[calc.Plan | str] = []
    refused: calc.InputError | None = None
    for combo in itertools.product(*axes.values()):
        try:
            sc = base.replace(**dict(zip(axes, combo, strict=True)))
            wants.append(_plan_or_refusal(sc))
        except calc.InputError as e:
            refused = refused or e
    try:
        df = calc.sweep(base, **axes)
    except calc.DoesNotFitError:
        raise
    except calc.InputError as e:
        assert refused is not None, f"sweep refused what plan() accepts: {e}"
        return
    assert refused is None, f"sweep accepted what plan() refuses: {refused}"
    assert len(df) == len(wants)
    for (_, row), want in zip(df.iterrows(), wants, strict=True):
        assert_row_is_plan(row, want, {k: row[k] for k in axes})


def assert_row_is_plan(row: Any, want: Any, changes: dict[str, Any]) -> None:
    """One sweep row equals ``want``, the plan of that row's scenario (or says it does not fit
    where ``want`` is the plan's refusal, a string)."""
    if isinstance(want, str):
        assert not row["fits"], changes
        return
    assert row["fits"], changes
    for k in OUTPUTS:
        col = f"{k}{OUTPUT_SUFFIX}" if k in changes else k  # an axis keeps its input (issue 39)
        assert row[col] == pytest.approx(want.values[k], rel=FLOAT_TOL, abs=1e-12), (changes, k)
    assert row["bottleneck"] == want.bottleneck, changes
    assert row["step_method"] == want.step_method, changes


# ------------------------------------------------------------------ every field's values, round trips

QUANTITY_TEXT: dict[str, list[str]] = {
    "bytes": ["64 KiB", "1.5 MB", "12 GiB", "110 kB"],
    "bytes_per_s": ["1 GB/s", "10 Gb/s", "250 MiB/s"],
    "seconds": ["87 ms", "1 h", "30 min", "2.5 s"],
    "count": ["1.2M", "1,000", "64"],
    "count_per_s": ["2.5k/s", "100"],
    "flops": ["4.1 GFLOP", "3e9"],
    "flops_per_s": ["312 TFLOP/s", "19.5e12"],
}

TEXT_EDGES = [
    "",
    " ",
    "   ",
    "none",
    "None",
    "default",
    "auto",
    "null",
    '"x"',
    '""',
    "a\x85b",
    "\u2028",
    "a|b;c",
    "=",
    "é💾",
]

TENSOR_SPECS = ["image=3x224x224:uint8,label=1:int64", "x=1x2048:int32", "video=16x3x224x224:uint8"]


def field_values(name: str) -> st.SearchStrategy[Any]:
    """Values a Scenario field accepts, as a user would give them (some refused: callers filter)."""
    info = _FIELDS[name]
    none = [st.none()] if info.optional else []
    if name == "tensors":
        return st.one_of(*none, st.sampled_from(TENSOR_SPECS))
    if info.kind == "text":
        return st.one_of(*none, st.sampled_from(TEXT_EDGES), st.text(st.characters(exclude_categories=("Cs",))))
    if info.kind == "choice":
        return st.one_of(*none, st.sampled_from(list(choices(name))))
    if info.kind == "bool":
        return st.booleans()
    lo, hi = info.minimum or 0.0, info.maximum or 1e15
    if info.kind == "int":
        return st.one_of(*none, st.integers(int(lo), int(min(hi, lo + 10_000))), st.integers(int(lo), int(hi)))
    numbers = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if info.kind in ("number", "fraction"):
        return st.one_of(*none, numbers)
    extra = [st.sampled_from(QUANTITY_TEXT[info.kind])] if info.kind in QUANTITY_TEXT else []
    if name == "checkpoint_interval_s":
        extra.append(st.just("optimal"))
    return st.one_of(*none, numbers, st.integers(int(max(lo, 1)), int(min(hi, 2**53))), *extra)


@st.composite
def any_scenarios(draw: st.DrawFn, max_fields: int = 5) -> calc.Scenario:
    """A Scenario with up to ``max_fields`` fields set to generated values (on the defaults or a
    preset), every field eligible: the ones the constructor refuses are redrawn."""
    base = draw(st.sampled_from([None, "gpt-1b-h100-tokens", "beast-imagenet-4xv100"]))
    sc = calc.Scenario() if base is None else calc.scenario(base)
    names = draw(st.lists(st.sampled_from(list(_FIELDS)), min_size=1, max_size=max_fields, unique=True))
    for name in names:
        value = draw(field_values(name))
        try:
            sc = sc.replace(**{name: value})
        except calc.InputError:
            continue  # out of range or not an input the field accepts: refused by name elsewhere
    return sc


def check_round_trips(sc: calc.Scenario) -> None:
    """Scenario -> YAML -> Scenario, -> link params -> Scenario (on the defaults and on a preset),
    and -> CLI ``--set key=value`` text -> Scenario: equal every time."""
    assert calc.Scenario.from_yaml(sc.to_yaml()) == sc, sc.to_yaml()
    params = sc.to_params()
    assert calc.Scenario.from_params(params) == sc, params
    base = calc.scenario("beast-imagenet-4xv100")
    over = sc.to_params(base)
    assert calc.Scenario.from_params(over, base) == sc, over
    argv = [f"{k}={v}" for k, v in over.items()]
    assert calc.Scenario.from_params(calc.cli._sets(argv), base, "--set") == sc, argv


# ------------------------------------------------------------------ clusters

CLUSTER_PRESETS = ("gpt-1b-h100-tokens", "resnet50-8xh100-imagenet", "vit-b16-a100", "beast-small-files")
JOB_EDITS = ("batch_size", "num_workers", "dataset", "checkpoint_interval_s", "description", "name", "example_bytes")


@st.composite
def clusters(draw: st.DrawFn) -> Any:
    """A valid Cluster: one to three jobs of presets (some edited, some keeping the preset's
    name), shared storage on one site, and options with generated text."""
    jobs = []
    for _ in range(draw(st.integers(1, 3))):
        sc = calc.scenario(draw(st.sampled_from(CLUSTER_PRESETS)))
        for name in draw(st.lists(st.sampled_from(JOB_EDITS), max_size=3, unique=True)):
            try:
                sc = sc.replace(**{name: draw(field_values(name))})
            except calc.InputError:
                continue
        if draw(st.booleans()):
            sc = sc.replace(name=calc.scenario(CLUSTER_PRESETS[0]).name if draw(st.booleans()) else sc.name)
        jobs.append(_cluster_input.Job(sc, draw(st.integers(1, 20))))
    shared = draw(
        st.sampled_from([{}, {"storage": "aws-fsx-lustre-ssd-1000", "storage_units": 24}, {"storage": "nfs-25gbe"}])
    )
    if shared.get("storage") == "nfs-25gbe" or not shared:
        shared = shared | {"site": "on-prem"}
    text = st.one_of(st.sampled_from(TEXT_EDGES), st.text(st.characters(exclude_categories=("Cs",)), max_size=20))
    return _cluster_input.Cluster(
        jobs=tuple(jobs),
        shared=shared,
        name=draw(text),
        description=draw(text),
        saves=draw(st.sampled_from(_cluster_input.SAVES)),
        policy=draw(st.sampled_from(_cluster_input.POLICIES)),
        horizon_months=draw(st.integers(0, 240)),
        job_growth_per_year=draw(st.floats(-0.9, 100)),
        data_growth_per_year=draw(st.floats(-0.9, 100)),
    )


def check_cluster_round_trips(c: Any, plan_it: bool = False) -> None:
    """Cluster -> YAML -> Cluster and -> link params -> Cluster: equal; with ``plan_it``, the
    plans of both store the same datasets (a shared dataset once)."""
    from_yaml = _cluster_input.Cluster.from_yaml(c.to_yaml())
    assert from_yaml == c, c.to_yaml()
    params = c.to_params()
    from_link = _cluster_input.Cluster.from_params(params)
    assert from_link == c, params
    if plan_it:
        try:
            want = _cluster.cluster(c).datasets
        except calc.InputError:
            return
        assert _cluster.cluster(from_link).datasets == want


JUNK = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(),
        st.binary(max_size=8),
        st.sampled_from([10**400, float("nan"), float("inf"), "9" * 400, "\ud800", "[" * 50]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def cluster_junk(draw: st.DrawFn) -> tuple[str, Any]:
    """Input an adversary gives a cluster: a junk jobs argument, count, option or shared input,
    a YAML document, or a command line."""
    kind = draw(st.sampled_from(["jobs", "count", "option", "shared", "yaml", "cli"]))
    if kind == "jobs":
        return kind, draw(JUNK)
    if kind == "count":
        return kind, draw(st.one_of(JUNK, st.integers(), st.floats(), st.text()))
    if kind == "option":
        return kind, (draw(st.sampled_from([*(set(_cluster_input.CLUSTER_INPUTS) - {"count"}), "shared"])), draw(JUNK))
    if kind == "shared":
        return kind, (draw(st.sampled_from([*list(_FIELDS), "bogus"])), draw(JUNK))
    if kind == "yaml":
        doc = draw(
            st.one_of(st.text(), st.sampled_from(["[" * 1000, "name: [1, 2]\njobs: [{scenario: vit-b16-a100}]"]))
        )
        return kind, draw(st.one_of(st.just(doc), st.just(_yaml_of(draw(JUNK)))))
    key = draw(st.sampled_from([*list(_FIELDS), *_cluster_input.CLUSTER_INPUTS, "jobs", "bogus"]))
    return kind, (key, draw(st.one_of(st.text(), st.sampled_from(TEXT_EDGES))))


def _yaml_of(data: Any) -> str:
    try:
        return yaml.safe_dump({"name": "x", "jobs": [{"scenario": "vit-b16-a100", "count": data}]})
    except Exception:
        return "jobs: 1"


def check_cluster_junk(case: tuple[str, Any]) -> None:
    """Junk gives a Cluster (or its plan) or an InputError; never another exception."""
    kind, value = case
    base = calc.scenario("vit-b16-a100")
    try:
        if kind == "jobs":
            _cluster_input.as_cluster(value)
        elif kind == "count":
            _cluster_input.as_cluster({"vit-b16-a100": value})
        elif kind == "option":
            key, v = value
            _cluster_input.Cluster(jobs=(_cluster_input.Job(base),), **{key: v})
        elif kind == "shared":
            key, v = value
            _cluster_input.Cluster(jobs=(_cluster_input.Job(base),), shared={key: v})
        elif kind == "yaml":
            _cluster_input.Cluster.from_yaml(value)
        else:
            key, v = value
            _cluster_input.from_command_line(None, ["vit-b16-a100:2"], {key: v})
    except calc.InputError as e:
        assert isinstance(e.message, str) and e.message


def check_plan(sc: calc.Scenario) -> None:
    """plan() of any scenario: a Plan with finite, non-negative outputs (or infinity where the
    registry allows it) and text warnings, or an InputError naming a field."""
    try:
        p = calc.plan(sc)
    except calc.InputError as e:
        assert isinstance(e.field, str) and e.field and e.message
        return
    for k in OUTPUTS:
        v = p.values[k]
        assert not math.isnan(v) and v >= 0 and (v < float("inf") or k in _UNLIMITED), (k, v)
    assert all(isinstance(w, str) and w for w in p.warnings)
