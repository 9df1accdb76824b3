"""Scenario inputs: immutable, validated with the field named, YAML round trip."""

from __future__ import annotations

import dataclasses

import pytest

import calc
from calc.errors import DoesNotFitError, InputError


def test_replace_and_immutability() -> None:
    s = calc.scenario("beast-resnet50-v100")
    t = s.replace(gpus_per_job=8)
    assert s.gpus_per_job == 1 and t.gpus_per_job == 8
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.gpus_per_job = 2  # type: ignore[misc]


@pytest.mark.parametrize("name", calc.scenarios())
def test_yaml_round_trip_gives_identical_plan(name: str) -> None:
    s = calc.scenario(name)
    back = calc.Scenario.from_yaml(s.to_yaml())
    assert back == s
    assert calc.plan(back).values == calc.plan(s).values


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("gpus_per_job", 0, "out of range"),
        ("gpus_per_job", -4, "out of range"),
        ("gpus_per_job", 2.5, "whole number"),
        ("jobs", "many", "cannot read"),
        ("example_bytes", "-64 KiB", "out of range"),
        ("example_bytes", "5 EB", "out of range"),
        ("example_bytes", float("nan"), "finite"),
        ("step_time_s", "0 s", "out of range"),
        ("step_time_s", float("inf"), "finite"),
        ("target_gpu_utilization", 1.5, "out of range"),
        ("precision", "fp64", "accepted: fp32, tf32, fp16, bf16, fp8"),
        ("optimizer", "lion", "accepted: weights_only"),
        ("batch_rounding", "pow3", "accepted: pow2"),
        ("tensors", "image=3x224:float33", "unknown dtype"),
        ("tensors", "3 by 224", "cannot read"),
        ("pin_memory", "maybe", "true or false"),
        ("host_ram_bytes", "512 GB/s", "unit of bytes per s"),
    ],
)
def test_bad_input_names_the_field(field: str, value: object, needle: str) -> None:
    with pytest.raises(InputError) as err:
        calc.Scenario(**{field: value})
    assert err.value.field == field
    assert needle in str(err.value)


def test_unknown_input_and_preset() -> None:
    with pytest.raises(InputError, match="gpu_count: unknown input"):
        calc.plan("beast-resnet50-v100", gpu_count=4)
    with pytest.raises(InputError, match="unknown GPU"):
        calc.plan(gpu="V101")
    with pytest.raises(InputError, match="unknown storage option"):
        calc.plan(storage="floppy")


def test_malformed_scenario_yaml() -> None:
    with pytest.raises(InputError, match=r"upload\.yaml: malformed YAML"):
        calc.Scenario.from_yaml("gpu: [V100\n", "upload.yaml")
    with pytest.raises(InputError, match=r"upload\.yaml: expected a mapping"):
        calc.Scenario.from_yaml("- 1\n- 2\n", "upload.yaml")
    with pytest.raises(InputError, match="larger than"):
        calc.Scenario.from_yaml("name: x\n" + "#" * 200_000, "upload.yaml")


def test_model_that_does_not_fit_says_by_how_much_and_what_helps() -> None:
    with pytest.raises(DoesNotFitError) as err:
        calc.plan(gpu="T4", model="gpt_7b", precision="fp16", optimizer="adam")
    msg = str(err.value)
    assert "does not fit on T4 at batch 1" in msg and "short by" in msg
    for hint in ("mixed precision", "checkpointing", "state_shards", "more memory"):
        assert hint in msg
    # 7B x 16 B = 108 GB of state: sharded over 8 GPUs it fits an 80 GiB H100
    ok = calc.plan(gpu="H100-SXM", model="gpt_7b", precision="bf16", optimizer="adam", state_shards=8, gpus_per_job=8)
    assert ok.batch_size >= 1


def test_fixed_batch_larger_than_memory_is_an_error_not_numbers() -> None:
    # 256 x 103 MiB + 98 MiB = 25.85 GiB > 16 GiB: no step runs, so no step time or utilisation.
    with pytest.raises(
        calc.DoesNotFitError, match=r"at batch 256 does not fit.*25.85 GiB.*largest micro-batch that fits is 158"
    ):
        calc.plan("beast-resnet50-v100", batch_size=256)


@pytest.mark.parametrize(("rule", "n"), [("pow2", 128), ("multiple_of_8", 152), ("none", 158)])
def test_batch_rounding(rule: str, n: int) -> None:
    assert calc.plan("beast-resnet50-v100", batch_rounding=rule).batch_size == n


def test_plan_accepts_scenario_by_keyword() -> None:
    assert round(calc.plan(scenario="beast-imagenet-4xv100").read_iops) == 5885
    assert calc.plan(scenario=calc.scenario("beast-nfs-shop"), jobs=10).read_iops == 1280


def test_a_gpu_or_model_name_is_looked_up_again_in_a_new_catalog_table(monkeypatch: pytest.MonkeyPatch) -> None:
    # check_field keeps a GPU's or model's canonical name beside the catalog table it was found in
    # (issue 41 item 6); a different table (reloaded presets, a test's own) is asked again, never the old answer.
    from calc import catalog
    from calc.errors import InputError
    from calc.scenario import check_field

    assert check_field("gpu", "h100-sxm") == "H100-SXM"
    assert check_field("gpu", "h100-sxm") == "H100-SXM"  # kept
    assert check_field("model", "transformer") == "transformer"
    gpus = {k: v for k, v in catalog.gpus().items() if k != "H100-SXM"}
    monkeypatch.setattr(catalog, "gpus", lambda: gpus)
    with pytest.raises(InputError):
        check_field("gpu", "h100-sxm")
    models = {k: v for k, v in catalog.models().items() if k != "transformer"}
    monkeypatch.setattr(catalog, "models", lambda: models)
    with pytest.raises(InputError):
        check_field("model", "transformer")


def test_the_written_init_checks_as_post_init_does() -> None:
    # calc.scenario._dict_init writes each input's check into __init__ (issue 41 item 6); __post_init__ keeps
    # the same checks as a loop. Both must give the same inputs, the same error, the first field's first.
    import dataclasses

    from calc.errors import InputError
    from calc.scenario import FIELDS, Scenario

    def by_post_init(**kw: object) -> object:
        sc = object.__new__(Scenario)
        sc.__dict__.update({f.name: f.default for f in dataclasses.fields(Scenario)} | kw)
        try:
            sc.__post_init__()
        except InputError as e:
            return repr(e)
        return vars(sc)

    def by_init(**kw: object) -> object:
        try:
            return vars(Scenario(**kw))  # type: ignore[arg-type]
        except InputError as e:
            return repr(e)

    cases: list[dict[str, object]] = [
        {},
        {"gpu": "h100-sxm", "model": "transformer", "layers": 32, "hidden": 4096, "heads": 32, "seq_len": "4k"},
        {"gpu": "a100-sxm4-80gb", "batch_size": 2.0, "precision": "BF16", "step_time_s": "120 ms"},
        {"gpu": None},  # required
        {"gpus_per_job": 0, "batch_size": -1},  # both wrong: the first in FIELDS' order is named
        {"batch_size": -1, "gpus_per_job": 0},
        {"model": "no-such-model"},
        {"checkpoint_interval_s": "optimal", "storage": "nvme-gen4", "storage_units": 2},
    ]
    cases += [{name: None} for name in list(FIELDS)[:40]]
    for kw in cases:
        assert by_init(**kw) == by_post_init(**kw), kw
