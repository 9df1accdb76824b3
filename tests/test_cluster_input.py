"""Issue 32: the cluster's inputs are as hard as a scenario's. Counts, options and shared inputs
go through check_value/check_field; its YAML through Scenario.from_yaml's guards; links and the
command line keep every input; JSON has no NaN; timeline() is linear in the saves."""

from __future__ import annotations

import json
import sys

import pytest

import calc
import calc.cli
import calc.cluster
import calc.cluster_load
from calc import cluster_input as ci
from calc.cli import command_output, json_safe

C = sys.modules["calc.cluster"]  # the module (calc.cluster is also the function)
GPT = "gpt-1b-h100-tokens"


@pytest.mark.parametrize("count", [float("nan"), float("inf"), 10**400, "9" * 400, 2.5, 0, 100_001, True, None, [1]])
def test_a_bad_count_is_an_input_error_naming_the_job(count: object) -> None:
    """nan escaped as ValueError, inf and 400 digits as OverflowError."""
    with pytest.raises(
        calc.InputError,
        match=rf"^jobs: {GPT}: count: .*accepted: (a whole number from )?1 to 100000|accepted: a plain number",
    ):
        calc.cluster({GPT: count})
    with pytest.raises(calc.InputError) as e:
        calc.cluster({GPT: count})
    assert e.value.field == f"jobs: {GPT}: count"


def test_a_count_through_a_link_is_checked_the_same_way() -> None:
    with pytest.raises(calc.InputError, match=r"count: .*accepted: a plain number"):
        ci.Cluster.from_params({"cluster": f"{GPT}:" + "9" * 400})
    assert ci.Cluster.from_params({"cluster": f"{GPT}:3"}).jobs[0].count == 3


@pytest.mark.parametrize("jobs", [5, None, 2.5, b"x", object()])
def test_a_cluster_of_something_else_names_what_is_accepted(jobs: object) -> None:
    """calc.cluster(5) and calc.cluster(None) raised TypeError."""
    with pytest.raises(calc.InputError, match="accepted: a Cluster, a cluster preset name") as e:
        calc.cluster(jobs)
    assert e.value.field == "jobs"


def test_a_cluster_preset_name_is_a_cluster() -> None:
    assert calc.cluster("lab-168-gpus").gpus == 168  # 4x8 + 8x8 + 3x8 + 2x8 + 2x8 + 2x8


ALIAS_BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\njobs: [{scenario: vit-b16-a100}]\n"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 1000, "nested more than 16 levels"),  # was RecursionError
        ("name: \ud800\njobs: [{scenario: vit-b16-a100}]", "lone surrogate"),  # was UnicodeEncodeError
        (b"jobs: [{scenario: vit-b16-a100}]", "expected YAML text, got bytes"),  # was AttributeError
        ("name: [1, 2]\njobs: [{scenario: vit-b16-a100}]", "name: expected text, got \\[1, 2\\]"),  # was accepted
        ("description: 7\njobs: [{scenario: vit-b16-a100}]", "description: expected text, got 7"),
        (ALIAS_BOMB, "expand to more than 10,000 values"),  # was read (9^5 = 59,049 values)
        ("jobs: [{scenario: vit-b16-a100}]\nshared: {storage_units: [1, 2]}", "storage_units"),
    ],
)
def test_cluster_yaml_has_the_scenario_guards(text: object, message: str) -> None:
    with pytest.raises(calc.InputError, match=message):
        ci.Cluster.from_yaml(text)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", ["jobs", "name", "description"])
def test_jobs_name_and_description_are_not_shared_inputs(key: str) -> None:
    """shared={"name": ...} raised TypeError in cluster(); shared={"jobs": 3} was ignored."""
    with pytest.raises(calc.InputError, match=f"{key}: cannot be a shared input"):
        ci.Cluster(jobs=(ci.Job(calc.scenario(GPT)),), shared={key: "3"})


def test_cli_set_name_names_the_cluster_and_set_jobs_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """`cluster lab-168-gpus --set name=foo` printed a traceback; `--set jobs=3` was ignored."""
    assert calc.cli.main(["cluster", "lab-168-gpus", "--set", "name=foo", "--set", "description=bar"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("foo: 21 jobs of 6 types on 168 GPUs\nbar\n")
    assert calc.cli.main(["cluster", "lab-168-gpus", "--set", "jobs=3"]) == 2
    assert "jobs: cannot be a shared input" in capsys.readouterr().err


def test_jobs_at_two_sites_are_refused() -> None:
    """An S3 (AWS) job beside a DGX (on-prem) job: the first job's site decided, unsaid."""
    dgx = calc.scenario("resnet50-8xh100-imagenet", server="DGX-H100")
    with pytest.raises(calc.InputError, match="the jobs run at different sites") as e:
        calc.cluster({GPT: 1, dgx: 1}, storage="aws-s3-standard")
    assert e.value.field == "site" and "at aws" in e.value.message and "at on-prem" in e.value.message
    # One shared site puts both at it (the DGX is then contradicted: refused naming the server).
    with pytest.raises(calc.InputError, match="contradicts server DGX-H100"):
        calc.cluster({GPT: 1, dgx: 1}, site="aws")
    assert calc.cluster({GPT: 1, "vit-b16-a100": 1}, storage="aws-s3-standard").gpus == 8 + 8


def test_a_link_keeps_the_name_and_the_description() -> None:
    c = ci.Cluster(jobs=(ci.Job(calc.scenario(GPT), 2),), name="lab | west; 2", description="GPUs; 50 % busy")
    params = c.to_params()
    assert ci.Cluster.from_params(params) == c
    assert params["cluster_name"] == "lab | west; 2"  # its own link parameter: no escaping needed


def test_a_shared_dataset_is_stored_once_through_a_link_and_yaml() -> None:
    """An edit that keeps the preset's name stores the preset's dataset once: ImageNet-1k,
    1,281,167 images x 114,660.07 B (models.yaml resnet50) = 146.9 GB, not twice (293.8 GB)."""
    a = calc.scenario("resnet50-8xh100-imagenet")
    b = a.replace(batch_size=64, name=a.name)
    c = ci.Cluster(jobs=(ci.Job(a), ci.Job(b)))
    for back in (ci.Cluster.from_params(c.to_params()), ci.Cluster.from_yaml(c.to_yaml())):
        assert back == c
        assert calc.cluster(back).dataset_bytes == pytest.approx(1_281_167 * 114_660.07, rel=1e-6)


def test_cluster_json_has_no_nan() -> None:
    """--format json wrote NaN (not JSON); not-applicable numbers are null, unlimited "inf"."""

    def refuse(constant: str) -> object:
        raise AssertionError(f"JSON holds {constant}")

    text = command_output(ci.load("lab-168-gpus"), "json")
    data = json.loads(text, parse_constant=refuse)
    assert data["cluster"]["name"] == "lab-168-gpus"
    assert json_safe({"a": [float("nan"), float("inf"), -float("inf"), 1.5]}, finite=True) == {
        "a": [None, "inf", "-inf", 1.5]
    }


def test_timeline_of_two_staggered_sync_jobs_by_hand() -> None:
    """Two sync copies saving every 60 s, staggered by 60 s / 2 = 30 s; each save blocks
    2 % x 60 s = 1.2 s (the stall budget sizes the write rate C / (0.02 x 60 s)). Over 120 s the
    segments start at 0, 1.2, 30, 31.2, 60, 61.2, 90 and 91.2 s, one copy saving in every other."""
    sc = calc.scenario(GPT, checkpoint_interval_s="1 min", checkpoint_mode="sync")
    cp = calc.cluster({sc: 2}, saves="staggered")
    tl = calc.cluster_load.timeline(cp, seconds=120.0)
    assert list(tl["time_s"]) == pytest.approx([0, 1.2, 30, 31.2, 60, 61.2, 90, 91.2], abs=1e-9)
    w = cp.plans[0].checkpoint_bytes / (0.02 * 60)
    assert list(tl[f"{sc.name} checkpoints"]) == pytest.approx([w, 0, w, 0, w, 0, w, 0], rel=1e-12)
    reads = cp.plans[0].read_bytes_per_s / 2
    assert list(tl[f"{sc.name} reads"]) == pytest.approx([reads, 2 * reads] * 4, rel=1e-12)


@pytest.mark.parametrize("name", ["9" * 400, "x" * 5000 + ".yaml", "a\x00b", "a\x00.yaml"])
def test_a_cluster_name_no_file_can_have_is_an_input_error(name: str) -> None:
    """Found by benchmarks/fuzz_surfaces.py: a name too long for a file raised OSError."""
    with pytest.raises(calc.InputError, match=r"cluster: (unknown cluster|no file)"):
        calc.cluster(name)
