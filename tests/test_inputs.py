"""Regression tests for input handling: one test (or a few) per reported defect.

Each test's docstring quotes the defect it guards against. Numbers asserted are worked by
hand from the preset files (presets/scenarios/*.yaml, presets/storage.yaml).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import calc
import calc.cli
import calc.plots
from calc.registry import OUTPUTS
from calc.scenario import check_field, from_text

BEAST = "beast-imagenet-4xv100"
# The beast preset: 4 x V100, batch pow2(...) = 128, measured t = 0.087 s, 64 KiB files.
BEAST_GPU_RATE = 128 / 0.087  # 1,471.26 samples/s per GPU


def assert_rows_equal_plans(base: calc.Scenario, df, axes: list[str]) -> None:
    """Every row of a sweep equals plan() of that row's scenario, output by output."""
    assert len(df) > 0
    for _, row in df.iterrows():
        p = calc.plan(base.replace(**{k: row[k] for k in axes}))
        for k in OUTPUTS:
            assert row[k] == pytest.approx(p.values[k], rel=1e-9, abs=1e-12), (dict(row[axes]), k)
        assert row["bottleneck"] == p.bottleneck, dict(row[axes])
        assert row["step_method"] == p.step_method, dict(row[axes])


# ---------------------------------------------------------------- 1. sweep vs plan with storage


def test_sweep_storage_units_matches_plan_hand_values() -> None:
    """Defect: sweep(..., storage_units=[1, 100]) with a storage option gave utilisations that
    differed from plan() of the same row (the storage supply was not swept)."""
    base = calc.scenario(BEAST, storage="hdd-7200", storage_units=1)
    df = calc.sweep(base, storage_units=[1, 60])  # 60: one JBOD's most (issue 38 refuses 100)
    got = list(df["gpu_utilization"])
    p1 = calc.plan(base)
    p100 = calc.plan(base, storage_units=60)
    assert got == pytest.approx([p1.gpu_utilization, p100.gpu_utilization], rel=1e-12)
    # 1 drive: IOPS-bound; its reads/s shared by 4 GPUs against the GPU's 128 / 0.087 s.
    assert p1.bottleneck == "storage"
    assert p1.gpu_utilization == pytest.approx(p1.storage_iops / 4 / BEAST_GPU_RATE, rel=1e-12)
    assert p1.gpu_utilization == pytest.approx(0.0275, abs=5e-4)
    # 60 drives: the drives' latency bound is 8 workers / 12 ms = 666.7 samples/s (0.453 of
    # the GPU), but each synchronous worker also decodes: 8 / (12 ms + 4.6 ms) = 481.9 samples/s,
    # / 1,471.3 = 0.3276.
    assert p100.stages["storage"] == pytest.approx(8 / 0.012, rel=1e-12)
    assert p100.gpu_utilization == pytest.approx(8 / (0.012 + 0.0046) / BEAST_GPU_RATE, rel=1e-9)
    assert p100.gpu_utilization < 8 / 0.012 / BEAST_GPU_RATE  # 0.453


@pytest.mark.parametrize(
    "axes",
    [
        {"gpus_per_job": [1, 4, 16]},
        {"jobs": [1, 3]},
        {"gpus_per_node": [1, 4, 8]},
        {"example_bytes": ["16 KiB", "64 KiB", "4 MB"]},
        {"examples_per_file": [1, 64, 1000]},
        {"storage_units": [1, 7], "gpus_per_job": [2, 8]},
    ],
    ids="+".join,
)
@pytest.mark.parametrize("storage", ["hdd-7200", "nfs-10gbe", "aws-s3-standard"])
def test_sweep_axes_with_storage_match_plan(axes: dict, storage: str) -> None:
    """Defect: sweeping gpus_per_job, jobs, gpus_per_node, example_bytes, examples_per_file with a
    storage option set gave rows that differed from plan() of the row."""
    base = calc.scenario(BEAST, storage=storage, storage_units=2)
    assert_rows_equal_plans(base, calc.sweep(base, **axes), list(axes))
    auto = calc.scenario(BEAST, storage=storage)  # automatic unit count
    assert_rows_equal_plans(auto, calc.sweep(auto, **axes), list(axes))


# ---------------------------------------------------------------- 2. names, off-words, seconds


@pytest.mark.parametrize(
    ("field", "given", "canonical"),
    [
        ("gpu", "h100-sxm", "H100-SXM"),
        ("model", "UNET3D_KITS19", "unet3d_kits19"),
        ("storage", "NVME-GEN4", "nvme-gen4"),
    ],
)
def test_names_resolve_case_insensitively(field: str, given: str, canonical: str) -> None:
    """Defect: preset names were case-sensitive (gpu='h100-sxm', model='UNET3D_KITS19',
    storage='NVME-GEN4' failed) and the scenario did not carry the canonical spelling."""
    p = calc.plan(**{field: given})
    assert getattr(p.scenario, field) == canonical
    assert getattr(calc.Scenario.from_params({field: given}), field) == canonical


def test_unknown_storage_names_field_and_lists_names() -> None:
    """Defect: storage='nope' raised something other than an InputError on 'storage' listing
    the accepted names or close matches."""
    with pytest.raises(calc.InputError) as e:
        calc.plan(storage="nope")
    assert e.value.field == "storage"
    assert "nvme-gen4" in e.value.message or "did you mean" in e.value.message
    with pytest.raises(calc.InputError) as e2:
        calc.plan(storage="nvme-gen")  # a near miss
    assert e2.value.field == "storage"
    assert "nvme-gen4" in e2.value.message


def test_batch_rounding_none_is_the_choice_not_an_off_word() -> None:
    """Defect: batch_rounding=none in a URL or --set was read as "not given" and rejected."""
    sc = calc.Scenario.from_params({"batch_rounding": "none"})
    assert sc.batch_rounding == "none"
    assert calc.Scenario.from_params({"batch_rounding": "NONE"}).batch_rounding == "none"
    import json

    out = json.loads(calc.cli.run([BEAST, "--set", "batch_rounding=none", "--format", "json"]))
    p = calc.plan(BEAST, batch_rounding="none")
    # No rounding: the batch is the largest that fits, (16 GiB - 98 MiB) / 103 MiB = 158.
    assert out["batch_size"] == p.batch_size == p.max_batch_size == (16 * 1024 - 98) // 103


@pytest.mark.parametrize(
    ("field", "bare", "with_unit", "seconds"),
    [("cpu_seconds_per_example", "0.0046", "4.6 ms", 0.0046), ("storage_latency_s", "0.002", "2 ms", 0.002)],
)
def test_bare_number_is_seconds_everywhere(field: str, bare: str, with_unit: str, seconds: float) -> None:
    """Defect: a bare number for cpu_seconds_per_example or storage_latency_s was read in the
    dashboard's unit (ms) in some paths and in seconds in others."""
    a = calc.plan(**{field: bare})
    b = calc.plan(**{field: with_unit})
    c = calc.plan(**{field: seconds})
    d = calc.plan(calc.Scenario.from_params({field: bare}))
    assert a.values == b.values == c.values == d.values
    assert a.inputs.get(field, a.values.get(field)) == pytest.approx(seconds, rel=1e-12)
    if field == "storage_latency_s":
        assert a.storage_latency_s == pytest.approx(0.002, rel=1e-12)
    else:
        # cores = samples/s x CPU s per example, both plans alike.
        assert a.cpu_cores == pytest.approx(a.samples_per_s * 0.0046, rel=1e-12)


def test_empty_required_field_is_an_error_not_a_minimum() -> None:
    """Defect: Scenario.from_params({'target_gpu_utilization': ''}) became 0.01 instead of an
    error naming the (required) field."""
    with pytest.raises(calc.InputError) as e:
        calc.Scenario.from_params({"target_gpu_utilization": ""})
    assert e.value.field == "target_gpu_utilization"
    assert "required" in e.value.message


def test_yaml_unknown_gpu_names_gpu() -> None:
    """Defect: a YAML with gpu: NOPE did not raise an InputError naming gpu."""
    with pytest.raises(calc.InputError) as e:
        calc.Scenario.from_yaml("gpu: NOPE\n")
    assert e.value.field.split(": ")[-1] == "gpu"


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n", "{}\n"])
def test_empty_yaml_is_an_error(text: str) -> None:
    """Defect: an empty YAML silently loaded the defaults instead of raising (PresetError)."""
    with pytest.raises(calc.PresetError):
        calc.Scenario.from_yaml(text)


# ---------------------------------------------------------------- 3. integers from text


def test_int_field_reads_exponent_notation() -> None:
    """Defect: '1e6' into an int field was refused (or kept as a float)."""
    sc = calc.Scenario.from_params({"examples_per_file": "1e6", "jobs": "1e3"})
    assert sc.examples_per_file == 1_000_000 and type(sc.examples_per_file) is int
    assert sc.jobs == 1000 and type(sc.jobs) is int
    assert check_field("examples_per_file", from_text("examples_per_file", "1e6")) == 1_000_000


@pytest.mark.parametrize("field", ["jobs", "gpus_per_job", "num_workers", "examples_per_file", "batch_size"])
def test_fractional_int_is_an_error(field: str) -> None:
    """Defect: '2.5' into an int field was truncated instead of refused ('whole number')."""
    with pytest.raises(calc.InputError) as e:
        calc.Scenario.from_params({field: "2.5"})
    assert e.value.field == field
    assert "whole number" in e.value.message
    with pytest.raises(calc.InputError) as e2:
        calc.plan(**{field: 2.5})
    assert e2.value.field == field


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("jobs", 0),
        ("jobs", -1),
        ("jobs", 100001),
        ("gpus_per_job", 0),
        ("gpus_per_job", -1),
        ("num_workers", -1),
        ("gpus_per_node", 65),
        ("batch_size", 0),
        ("storage_units", 0),
        ("target_gpu_utilization", 0),
        ("target_gpu_utilization", 1.5),
        ("cache_fraction", 1),
    ],
)
def test_out_of_range_names_field(field: str, value: float) -> None:
    """Defect: 0 / -1 / 100001 (out of range) were accepted or raised without naming the field."""
    with pytest.raises(calc.InputError) as e:
        calc.plan(**{field: value})
    assert e.value.field == field
    assert "out of range" in e.value.message
    with pytest.raises(calc.InputError) as e2:
        calc.Scenario.from_params({field: str(value)})
    assert e2.value.field == field


# ---------------------------------------------------------------- 4. does not fit


def test_fixed_batch_that_does_not_fit_raises() -> None:
    """Defect: a model that does not fit at a fixed batch gave numbers instead of an error."""
    sc = calc.scenario("vit-b16-a100")
    assert sc.batch_size == 256
    big = sc.replace(model="gpt_7b")
    with pytest.raises(calc.DoesNotFitError) as e:
        calc.plan(big)
    assert e.value.field == "batch_size"
    assert "does not fit" in e.value.message
    # Through every entry point too: plan(preset, **overrides), the CLI (exit 2).
    with pytest.raises(calc.DoesNotFitError):
        calc.plan("vit-b16-a100", model="gpt_7b")
    assert calc.cli.main(["vit-b16-a100", "--set", "model=gpt_7b"]) == 2
    # The sweep marks the row instead of reporting numbers for it.
    df = calc.sweep(sc, model=["vit_b16", "gpt_7b"])
    assert list(df["fits"]) == [True, False]
    assert df.loc[1, "samples_per_s"] == 0 and df.loc[1, "gpu_utilization"] == 0


# ---------------------------------------------------------------- 5. automatic storage units


def test_automatic_units_stop_at_the_options_maximum() -> None:
    """Defect: automatic storage units were unbounded: an option whose largest system cannot
    serve the job (gcp-filestore-basic-hdd, one file system at most) showed 100 % utilisation
    while recommend() said it cannot serve."""
    p = calc.plan(BEAST, storage="gcp-filestore-basic-hdd")
    assert p.values["storage_units_used"] == 1
    assert p.gpu_utilization < 1
    assert p.bottleneck == "storage"
    # One file system: 100 MiB/s and its reads/s; the IOPS bind: util = IOPS / 4 GPUs / rate.
    assert p.storage_bytes_per_s == pytest.approx(100 * 2**20, rel=1e-12)
    assert p.gpu_utilization == pytest.approx(
        min(p.storage_iops, p.storage_bytes_per_s / 65536) / 4 / BEAST_GPU_RATE, rel=1e-12
    )
    rec = calc.recommend(p).set_index("option").loc["gcp-filestore-basic-hdd"]
    assert not rec["feasible"]
    assert rec["why_not"]


def test_automatic_units_match_a_feasible_recommendation() -> None:
    """Defect (converse of the above): where recommend() says an option serves the job, the
    automatic unit count must reach full utilisation."""
    p = calc.plan(BEAST, storage="nvme-gen4")
    rec = calc.recommend(p).set_index("option").loc["nvme-gen4"]
    assert rec["feasible"]
    assert p.gpu_utilization == pytest.approx(1.0)


# ---------------------------------------------------------------- 6. explain()


def _line(p: calc.Plan, output: str) -> str:
    return next(line for line in p.explain().splitlines() if line.startswith(f"{output} = "))


def test_explain_no_workers_says_sum_of_inverses() -> None:
    """Defect: explain() for num_workers=0 said 'min(stages)' although the stages run in turn
    (achieved = 1 / sum(1 / stages))."""
    p = calc.plan(BEAST, num_workers=0)
    line = _line(p, "achieved_samples_per_s")
    assert "1 / sum(1 / stages)" in line
    assert "min(stages)" not in line
    # And the number agrees with it: 1 / sum over the finite stages.
    per_gpu = 1 / sum(1 / c for c in p.stages.values())
    assert p.achieved_samples_per_s == pytest.approx(per_gpu * 4, rel=1e-9)


def test_explain_with_workers_says_min() -> None:
    """Defect counterpart: with workers the stages overlap and explain() says 'min(stages, ...)';
    synchronous workers also read then decode each example, which explain() names."""
    p = calc.plan(BEAST)
    line = _line(p, "achieved_samples_per_s")
    assert "min(stages" in line and "sum" not in line and "read + decode" in line
    assert "min(stages)" in _line(calc.plan(BEAST, loader="async"), "achieved_samples_per_s")
    assert p.achieved_samples_per_s <= min(p.stages.values()) * 4 * (1 + 1e-12)


def test_explain_achieved_matches_its_formula() -> None:
    """The achieved rate explain() shows follows from the formula and stages it shows."""
    p = calc.plan(BEAST)
    line = _line(p, "achieved_samples_per_s")
    # 8 workers each read (1 ms default latency) then decode (4.6 ms) one example: 8 / 5.6 ms per GPU,
    # below every stage (GPU 128 / 87 ms = 1,471/s), times 4 GPUs.
    assert "8 workers / (read + decode time per example)" in line
    assert p.achieved_samples_per_s == pytest.approx(8 / (0.001 + 0.0046) * 4, rel=1e-12)
    # The workers bound that sets the rate is itself a stage, and the bottleneck is that slowest stage
    # (issue 17: it was missing from the stages while the bottleneck said cpu at 1,739/s).
    assert p.stages["workers"] == pytest.approx(8 / (0.001 + 0.0046), rel=1e-12)
    assert p.bottleneck == "workers"
    assert min(v for k, v in p.stages.items() if k != "workers") > 8 / (0.001 + 0.0046)


def test_explain_measured_step_time() -> None:
    """explain() branch: a step time measured on this GPU, batch and precision."""
    p = calc.plan(BEAST)
    assert p.step_method == "measured step time"
    assert "measured step time (input" in _line(p, "step_time_s")
    assert "already contains" in _line(p, "scaling_efficiency")
    assert p.step_time_s == pytest.approx(0.087)


def test_explain_measured_throughput() -> None:
    """explain() branch: a measured throughput (samples/s per GPU): t = n / rate."""
    p = calc.plan(BEAST, step_time_s=None, samples_per_s_per_gpu=1000)
    assert p.step_method == "measured throughput"
    assert "measured samples/s" in _line(p, "step_time_s")
    assert p.step_time_s == pytest.approx(128 / 1000, rel=1e-12)


def test_explain_model() -> None:
    """explain() branch: no measurement, the roofline step-time model."""
    p = calc.plan()
    assert p.step_method == "model"
    line = _line(p, "step_time_s")
    assert "step-time model" in line and "math + memory + fixed part" in line
    assert "for one GPU" in _line(p, "scaling_efficiency")


def test_explain_flops_step_model() -> None:
    """explain() branch: step_model='flops' (the articles' FLOPs-only arithmetic)."""
    p = calc.plan(step_model="flops")
    assert "FLOPs-only" in _line(p, "step_time_s")
    assert p.memory_time_per_example_s == 0 and p.fixed_time_s == 0
    # t = n x training FLOPs / (peak x efficiency), with nothing else.
    n = p.batch_size
    assert p.step_time_s == pytest.approx(n * p.train_flops_per_example / (p.peak_flops_per_s * p.efficiency), rel=1e-9)


@pytest.mark.parametrize("measure", ["step_time_s", "samples_per_s_per_gpu"])
def test_explain_reprojected_measurement(measure: str) -> None:
    """explain() branch: a measurement taken on another GPU is re-projected (plan of the beast
    preset with gpu='H100-SXM')."""
    if measure == "step_time_s":
        p = calc.plan(BEAST, gpu="H100-SXM")
        word = "step time"
    else:
        # Recorded on the V100 first, then moved to the H100: the record stays.
        measured = calc.scenario(BEAST).replace(step_time_s=None, samples_per_s_per_gpu=1000)
        p = calc.plan(measured.replace(gpu="H100-SXM"))
        word = "throughput"
    assert p.step_method == "re-projected measurement"
    line = _line(p, "step_time_s")
    assert f"measured {word} on V100-SXM2-16GB, fp16, batch 128" in line  # NVIDIA's mixed-precision 1,457 img/s
    assert any("re-projected" in w for w in p.warnings)


def test_explain_fixed_and_automatic_batch() -> None:
    """explain() branches: a fixed batch vs the automatic (rounded) one."""
    assert "fixed by input (32)" in _line(calc.plan(batch_size=32), "batch_size")
    assert "pow2(max_batch_size)" in _line(calc.plan(), "batch_size")
    assert "multiple_of_8(max_batch_size)" in _line(calc.plan(batch_rounding="multiple_of_8"), "batch_size")


def test_explain_compression_branches() -> None:
    """explain() branches: compression streamed, sequential, or none."""
    streamed = calc.plan(compression_ratio=2, streamed=True)
    sequential = calc.plan(compression_ratio=2)
    plain = calc.plan()
    assert "max(compress, send, decompress) (streamed)" in _line(streamed, "transfer_time_s")
    assert "compress_s + send_s + decompress_s" in _line(sequential, "transfer_time_s")
    assert _line(plain, "transfer_time_s").strip() == "transfer_time_s = send_s"
    assert streamed.transfer_time_s == pytest.approx(
        max(streamed.compress_s, streamed.send_s, streamed.decompress_s), rel=1e-12
    )
    assert sequential.transfer_time_s == pytest.approx(
        sequential.compress_s + sequential.send_s + sequential.decompress_s, rel=1e-12
    )
    assert plain.transfer_time_s == pytest.approx(plain.send_s, rel=1e-12)


def test_explain_model_state_given_vs_computed() -> None:
    """explain() branches: model state given as an input vs params x bytes/param / shards."""
    given = calc.plan(BEAST)
    assert "input (scenario)" in _line(given, "model_state_bytes")
    assert given.model_state_bytes == 98 * 2**20
    computed = calc.plan()
    assert "params / (TP x PP) x (weights, gradients, optimizer state" in _line(computed, "model_state_bytes")
    sharded = calc.plan(optimizer="adam", state_shards=4, gpus_per_job=4)
    assert sharded.model_state_bytes == pytest.approx(computed.inputs["params"] * 16 / 4, rel=1e-12)


def test_explain_every_output_has_a_line() -> None:
    """explain() lists every output with its formula and value, for every preset; a model without
    an architecture (a CNN) leaves out the transformer's own terms (issue 30)."""
    from calc.explain import ARCHITECTURE_OUTPUTS

    for name in calc.scenarios():
        try:
            p = calc.plan(name)
        except calc.DoesNotFitError:
            continue
        text = p.explain()
        arch = bool(p.inputs["arch"])
        for k in OUTPUTS:
            assert (f"\n{k} = " in text) == (arch or k not in ARCHITECTURE_OUTPUTS), (name, k)


@pytest.mark.parametrize("storage", [None, "nvme-gen4"])
def test_explain_fills_every_placeholder(storage: str | None) -> None:
    """explain() shows every formula with numbers: no '{name}' is left unfilled."""
    p = calc.plan(BEAST, storage=storage)
    body = p.explain().split("Sources:")[0]
    left = [line for line in body.splitlines() if "{" in line or "}" in line]
    assert not left, left


def test_no_storage_supply_is_unlimited() -> None:
    """With no storage option (and no bandwidth/IOPS override) the supply is unconstrained and
    shown as 'unlimited', never as a 309-digit number (np.nan_to_num(inf, nan=inf) gave 1.797e308,
    the largest float)."""
    p = calc.plan(BEAST)
    for k in ("storage_bytes_per_s", "storage_iops"):
        assert p.values[k] > 1e300 or math.isinf(p.values[k])
        assert p.formatted(k) == "unlimited", (k, p.formatted(k)[:40])


# ---------------------------------------------------------------- 7. edited presets


def test_edited_preset_is_renamed() -> None:
    """Defect: an edited preset kept the preset's name, passing the edit off as the preset."""
    base = calc.scenario(BEAST)
    assert base.name == BEAST
    assert base.replace(gpus_per_job=8).name == f"{BEAST}-edited"
    assert calc.scenario(BEAST, gpus_per_job=8).name == f"{BEAST}-edited"
    assert calc.plan(BEAST, gpus_per_job=8).scenario.name == f"{BEAST}-edited"
    # An explicit name wins; an unchanged value or a description edit keeps the name.
    assert base.replace(gpus_per_job=8, name="mine").name == "mine"
    assert base.replace(gpus_per_job=base.gpus_per_job).name == BEAST
    assert base.replace(description="x").name == BEAST
    assert calc.Scenario.from_params({"gpus_per_job": "8"}, base).name == f"{BEAST}-edited"


# ---------------------------------------------------------------- 8. bits and commas


def test_size_in_bits_is_refused() -> None:
    """Defect: '64kb' as example_bytes was read as 64 kilobits (8 kB) instead of refused."""
    with pytest.raises(calc.InputError) as e:
        calc.plan(example_bytes="64kb")
    assert e.value.field == "example_bytes"
    assert "bits" in e.value.message
    with pytest.raises(calc.InputError) as e2:
        calc.Scenario.from_params({"example_bytes": "64kb"})
    assert e2.value.field == "example_bytes" and "bits" in e2.value.message
    # Bits are fine for a rate: 10 Gb/s = 1.25 GB/s.
    p = calc.plan(transfer_link_bytes_per_s="10 Gb/s")
    assert p.inputs["transfer_link_bytes_per_s"] == pytest.approx(1.25e9, rel=1e-12)


def test_decimal_comma_is_refused_thousands_comma_read() -> None:
    """Defect: '1,5 GB' was read as 15 GB (the comma dropped); '1,000 MB' must be 1e9 bytes."""
    with pytest.raises(calc.InputError) as e:
        calc.plan(example_bytes="1,5 GB")
    assert e.value.field == "example_bytes"
    assert "comma" in e.value.message
    p = calc.plan(example_bytes="1,000 MB")
    assert p.inputs["example_bytes"] == 1e9
    assert calc.plan(example_bytes="1,000,000 kB").inputs["example_bytes"] == 1e9
    assert calc.Scenario.from_params({"jobs": "1,000"}).jobs == 1000


# ---------------------------------------------------------------- 9. foreign exceptions


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("jobs", "e5"),
        ("jobs", "1e400"),
        ("jobs", None),
        ("jobs", float("nan")),
        ("jobs", float("inf")),
        ("jobs", True),
        ("jobs", [1]),
        ("optimizer", 3),  # None is the model family's optimizer (issue 39)
        ("optimizer", "lamb"),
        ("batch_rounding", None),
        ("gpu", None),
        ("pin_memory", None),
        ("pin_memory", "maybe"),
        ("example_bytes", "1e400 B"),
        ("example_bytes", {}),
        ("name", None),
        ("name", 5),
        ("tensors", 5),
    ],
)
def test_bad_values_are_input_errors_naming_the_field(field: str, value: object) -> None:
    """Defect: these inputs raised TypeError/ValueError/OverflowError (not Feedrate errors)."""
    with pytest.raises(calc.InputError) as e:
        calc.plan(**{field: value})
    assert e.value.field == field


def test_yaml_null_for_required_bool() -> None:
    """Defect: YAML `pin_memory: null` raised a foreign error."""
    with pytest.raises(calc.InputError) as e:
        calc.Scenario.from_yaml("pin_memory: null\n")
    assert e.value.field.split(": ")[-1] == "pin_memory"


def test_name_is_an_input() -> None:
    """Defect: calc.plan('beast-nfs-shop', name='mine') was refused; name is an input."""
    p = calc.plan("beast-nfs-shop", name="mine")
    assert p.scenario.name == "mine"
    assert p.title.startswith("mine: ")
    assert p.values == calc.plan("beast-nfs-shop").values


def test_unknown_input_names_it() -> None:
    """Defect: calc.plan(gpus=4) raised TypeError instead of an InputError naming 'gpus'."""
    with pytest.raises(calc.InputError) as e:
        calc.plan(gpus=4)
    assert e.value.field == "gpus"
    assert "gpu" in e.value.message  # the close match
    with pytest.raises(calc.InputError) as e2:
        calc.plan(BEAST, gpus=4)
    assert e2.value.field == "gpus"
    with pytest.raises(calc.InputError) as e3:
        calc.Scenario.from_params({"gpus": "4"})
    assert e3.value.field == "gpus"


@pytest.mark.parametrize(
    "tensors",
    [
        "x=" + "9" * 400 + ":uint8",
        "x=3x" + "9" * 400 + ":float32",
        "x=1e400:uint8",
        "x=-3:uint8",
        "x=3:nope",
        "garbage",
    ],
)
def test_absurd_tensor_shape_is_an_input_error(tensors: str) -> None:
    """Defect: a 400-digit tensor shape in `tensors` overflowed (OverflowError)."""
    with pytest.raises(calc.InputError) as e:
        calc.plan(tensors=tensors)
    assert e.value.field == "tensors"


def test_numpy_scalar_round_trips_through_yaml() -> None:
    """Defect: calc.Scenario(example_bytes=np.float64(65536)).to_yaml() raised RepresenterError
    (np.float64 is a float subclass and was kept as such)."""
    sc = calc.Scenario(example_bytes=np.float64(65536))
    assert type(sc.example_bytes) in (int, float)
    back = calc.Scenario.from_yaml(sc.to_yaml())
    assert back == sc
    assert calc.plan(back).values == calc.plan(sc).values


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("gpus_per_job", np.int64(4)),
        ("jobs", np.float64(2)),
        ("cache_fraction", np.float32(0.5)),
        ("efficiency", np.float64(0.5)),
        ("host_ram_bytes", np.int64(2**40)),
        ("storage_latency_s", np.float64(0.002)),
        ("example_bytes", np.float64(65536)),
    ],
)
def test_numpy_scalars_become_python_values(field: str, value: object) -> None:
    """Defect family: NumPy scalars leaked into Scenario fields and broke YAML."""
    sc = calc.Scenario(**{field: value})
    assert type(getattr(sc, field)) in (int, float, bool)
    assert calc.Scenario.from_yaml(sc.to_yaml()) == sc
    assert calc.plan(calc.Scenario.from_params(sc.to_params())).values == calc.plan(sc).values


@pytest.mark.parametrize(
    ("field", "value"), [("example_bytes", 65536), ("host_ram_bytes", 2.0**40), ("storage_latency_s", 3e-7)]
)
def test_numeric_quantity_params_round_trip_equal(field: str, value: float) -> None:
    """Scenario.from_params(sc.to_params()) == sc, also for sizes and times given as numbers."""
    sc = calc.Scenario(**{field: value})
    back = calc.Scenario.from_params(sc.to_params())
    assert calc.plan(back).values == calc.plan(sc).values  # the plan agrees either way
    assert back == sc


@pytest.mark.parametrize("units", [-1, 0, 0.5, float("nan"), float("inf")])
def test_max_gpus_refuses_bad_units(units: float) -> None:
    """Defect: calc.max_gpus('mlperf-unet3d-h100', storage='nvme-gen4', units=-1) returned -3."""
    with pytest.raises(calc.InputError) as e:
        calc.max_gpus("mlperf-unet3d-h100", storage="nvme-gen4", units=units)
    assert e.value.field == "units"


def test_max_gpus_positive_units() -> None:
    """max_gpus with a valid unit count is a non-negative whole number, growing with units."""
    a = calc.max_gpus("mlperf-unet3d-h100", storage="nvme-gen4", units=1)
    b = calc.max_gpus("mlperf-unet3d-h100", storage="nvme-gen4", units=4)
    assert isinstance(a, int) and 0 <= a <= b


def test_cli_empty_required_set_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Defect: `--set jobs=` crashed with a traceback instead of one error line and status 2."""
    assert calc.cli.main(["beast-nfs-shop", "--set", "jobs="]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "jobs" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["beast-nfs-shop", "--set", "jobs=e5"],
        ["beast-nfs-shop", "--set", "gpus=4"],
        ["beast-nfs-shop", "--set", "nokey"],
        ["beast-nfs-shop", "--set", "example_bytes=64kb"],
        ["beast-nfs-shop", "--set", "tensors=x=" + "9" * 400 + ":uint8"],
        ["no-such-scenario"],
        ["max-gpus", "mlperf-unet3d-h100", "--storage", "nvme-gen4", "--units", "-1"],
        ["sweep", "beast-nfs-shop", "--axis", "jobs=1,0"],
        ["list", "nothing"],
    ],
)
def test_cli_bad_input_is_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Defect: bad input on the command line printed a traceback instead of one line, status 2."""
    assert calc.cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err


def test_cli_unknown_option_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Defect: `python -m calc --bogus` printed argparse's usage block, not one line."""
    with pytest.raises(SystemExit) as e:
        calc.cli.main(["--bogus"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "--bogus" in err


def test_automatic_batch_above_the_batch_limit_plots() -> None:
    """Defect: an automatic batch above batch_size's declared limit (1e7) crashed the
    demand-vs-batch plot, which sweeps batch_size up to the plan's largest batch."""
    p = calc.plan(gpu="H100-SXM", activation_bytes_per_example="1 kB")
    assert p.max_batch_size > 1e7  # ~80 GiB / 1 kB
    fig = calc.plots.demand_vs_batch(p)
    assert len(fig.data) >= 2


def test_beast_reads_per_second_hand_value() -> None:
    """The beast preset's headline: 4 x 128 / 0.087 s = 5,885 reads/s; x 64 KiB = 367.8 MiB/s."""
    p = calc.plan(BEAST)
    assert p.batch_size == 128
    assert p.read_iops == pytest.approx(4 * 128 / 0.087, rel=1e-12)
    assert p.formatted("read_iops") == "5,885 reads/s"
    assert p.read_bytes_per_s / 2**20 == pytest.approx(4 * 128 / 0.087 * 64 / 1024, rel=1e-12)
    assert math.isclose(p.read_bytes_per_s / 2**20, 367.8, rel_tol=1e-3)


# ---------------------------------------------------------------- 10. odd values (issue 17)


@pytest.mark.parametrize(
    "value", [10**400, -(10**400), 10**5000, Fraction(10**400, 3)], ids=["1e400", "-1e400", "1e5000", "fraction"]
)
def test_huge_integers_are_input_errors(value: object) -> None:
    """Defect: Scenario(jobs=10**400) raised OverflowError (and a 5,000-digit integer cannot even
    be printed: the message gives its size instead)."""
    with pytest.raises(calc.InputError) as e:
        calc.Scenario(jobs=value)
    assert e.value.field == "jobs" and "accepted: a whole number from 1 to 100000" in e.value.message
    with pytest.raises(calc.InputError) as e:
        calc.Scenario(example_bytes=value)
    assert e.value.field == "example_bytes"


def test_deeply_nested_yaml_is_a_preset_error() -> None:
    """Defect: Scenario.from_yaml("[" * 1000) raised RecursionError."""
    for text in ("[" * 1000, "{a: " * 1000, "- " * 1000 + "x"):
        with pytest.raises(calc.PresetError, match="nested more than 16 levels"):
            calc.Scenario.from_yaml(text)


def _alias_bomb() -> str:
    """209 bytes: each level lists the previous one 9 times, 9^6 = 531,441 strings in all."""
    levels = ["&a [lol,lol,lol,lol,lol,lol,lol,lol,lol]"] + [
        f"&{c} [{','.join(['*' + p] * 9)}]" for p, c in zip("abcde", "bcdef", strict=True)
    ]
    return "name: [" + ",".join(levels) + "]\n"


def test_yaml_alias_bomb_is_refused_with_a_short_message() -> None:
    """Defect: a 264-byte alias bomb built a 4.3 MB error message (the 9^6 strings quoted back)."""
    bomb = _alias_bomb()
    assert len(bomb) < 264
    with pytest.raises(calc.PresetError) as e:
        calc.Scenario.from_yaml(bomb)
    assert "aliases" in e.value.message and len(str(e.value)) < 300
    # A few aliases are fine, and a recursive one is refused.
    assert calc.Scenario.from_yaml("name: &n my-run\ndescription: *n\n").description == "my-run"
    with pytest.raises(calc.PresetError, match="aliases"):
        calc.Scenario.from_yaml("name: &a [*a]\n")


def test_error_messages_are_capped() -> None:
    """Whatever value an error quotes, its message stays under 2,000 characters (+ the count cut)."""
    with pytest.raises(calc.InputError) as e:
        calc.Scenario(name=["x" * 100] * 100_000)  # type: ignore[arg-type]
    assert e.value.field == "name" and len(str(e.value)) < 2100


@pytest.mark.parametrize("field", ["name", "description", "model", "example_bytes", "tensors"])
def test_lone_surrogates_are_input_errors(field: str) -> None:
    """Defect: a lone surrogate was accepted and later raised UnicodeEncodeError (printing,
    YAML, reports)."""
    with pytest.raises(calc.InputError) as e:
        calc.Scenario(**{field: "a\ud800b"})
    assert e.value.field == field and "surrogate" in e.value.message
    with pytest.raises(calc.InputError) as e:
        calc.Scenario.from_yaml(f'{field}: "a\\ud800b"\n')
    assert e.value.field.endswith(field)
    with pytest.raises(calc.PresetError, match="surrogate"):
        calc.Scenario.from_yaml(f"{field}: a\ud800b\n")
    # The message itself is always printable.
    str(e.value).encode("utf-8")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("jobs", np.array([4])),
        ("jobs", np.array(4)),
        ("example_bytes", np.array([1000.0, 2.0])),
        ("cache_fraction", np.array([0.5])),
        ("pin_memory", np.array([True, False])),
        ("gpu", np.array(["H100-SXM"])),
        ("tensors", np.array(["image=3x224x224:uint8"])),
    ],
)
def test_numpy_arrays_are_input_errors(field: str, value: object) -> None:
    """NumPy arrays (not scalars) are refused naming the field, in Scenario and in plan()."""
    with pytest.raises(calc.InputError) as e:
        calc.Scenario(**{field: value})
    assert e.value.field == field
    with pytest.raises(calc.InputError):
        calc.plan("beast-imagenet-4xv100", **{field: value})
    # NumPy scalars are numbers: np.int64(4) jobs is 4 jobs.
    assert calc.Scenario(jobs=np.int64(4)).jobs == 4


def test_state_shards_above_the_gpu_count_is_refused() -> None:
    """Defect: state_shards=64 on one GPU divided the state by 64 (4.8 MB for ResNet-50's 98 MB)."""
    with pytest.raises(calc.InputError) as e:
        calc.plan(state_shards=64)
    assert e.value.field == "state_shards" and "1 to gpus_per_job (1)" in e.value.message
    # As many shards as GPUs: 25,557,032 params x 12 B (SGD momentum) / 8.
    p = calc.plan(state_shards=8, gpus_per_job=8)
    assert p.model_state_bytes == pytest.approx(p.inputs["params"] * 12 / 8, rel=1e-12)


def test_read_larger_than_a_shard_reads_the_shard() -> None:
    """Defect: 64 MiB reads of 0.23 MB shards (3 x 76 kB) counted 6.7 reads/s for 5,885 samples/s, as
    if one read spanned 880 examples; a read ends with its file: 5,885 / 3 = 1,962 reads/s."""
    p = calc.plan(BEAST, examples_per_file=3, example_bytes="76 kB", request_bytes="64 MiB")
    assert p.request_bytes == 3 * 76e3
    assert p.read_iops == pytest.approx(4 * 128 / 0.087 / 3, rel=1e-12)
    assert any("larger than one file" in w for w in p.warnings)
    # A read within the shard is kept as given: 76 kB x 3 / 64 KiB = 3.48 reads per shard.
    q = calc.plan(BEAST, examples_per_file=3, example_bytes="76 kB", request_bytes="64 KiB")
    assert q.read_iops == pytest.approx(4 * 128 / 0.087 * 76e3 / 65536, rel=1e-12) and not q.warnings[1:]


def test_cleared_tensors_round_trip() -> None:
    """Defect: clearing a preset's tensors gave ``tensors: none`` in links, which read back as a
    tensor spec and failed; ``none``/empty now clear an optional text input."""
    sc = calc.scenario("mlperf-unet3d-h100")
    cleared = sc.replace(tensors=None)
    params = cleared.to_params(sc)
    assert params["tensors"] == "none"
    assert calc.Scenario.from_params(params, sc) == cleared
    assert calc.Scenario.from_params({"tensors": ""}, sc).tensors is None
    assert calc.Scenario.from_yaml(cleared.to_yaml()) == cleared


def test_default_scenario_round_trips_through_yaml() -> None:
    """Defect: from_yaml(Scenario().to_yaml()) was refused: the defaults wrote an empty document."""
    assert calc.Scenario().to_yaml() == "name: custom\n"
    assert calc.Scenario.from_yaml(calc.Scenario().to_yaml()) == calc.Scenario()
    with pytest.raises(calc.PresetError):
        calc.Scenario.from_yaml("{}\n")  # an empty document is still a likely mistake


def test_measured_step_faster_than_the_gpu_peak_warns() -> None:
    """Defect: beast-imagenet-4xv100's 87 ms at batch 128 implies 24.3 GFLOPs x 128 / 0.087 s =
    35.75 TFLOP/s on a V100 whose fp32 peak is 15.7 TFLOP/s (2.28x), accepted without a word. The
    plan warns; explain() and the CLI show it."""
    # The preset now states the step at its own precision (fp16, issue 31): typed as fp32, it warns.
    fp32 = {"precision": "fp32", "measured_precision": "fp32"}
    p = calc.plan(BEAST, **fp32)
    w = [x for x in p.warnings if "implies" in x]
    assert len(w) == 1 and "35.75 TFLOP/s" in w[0] and "2.28 x the 15.7 TFLOP/s fp32 peak" in w[0]
    assert w[0] in p.explain()
    cli = ["beast-imagenet-4xv100", "--set", "precision=fp32", "--set", "measured_precision=fp32"]
    assert "35.75 TFLOP/s" in calc.cli.run(cli)
    assert not any("implies" in x for x in calc.plan(BEAST).warnings)  # the preset as shipped
    # At fp16 (125 TFLOP/s tensor cores) the same measurement is plausible: no warning.
    ok = calc.plan(BEAST, precision="fp16", step_time_s="87 ms")
    assert not any("implies" in x for x in ok.warnings)
    # Nor for a step the peak allows: 24.3 GFLOPs x 128 / 200 ms = 15.55 TFLOP/s < 15.7.
    assert not any("implies" in x for x in calc.plan(BEAST, **fp32, step_time_s="200 ms").warnings)


def test_a_named_store_too_small_for_the_dataset_is_said() -> None:
    """Defect: ram-tmpfs (256 GiB per node) was planned to hold CLIP's 160.5 TB without a word."""
    import calc

    # RAM: each node keeps its own copy in 256 GiB = 274.9 GB < 160.5 TB, whatever the units.
    w = calc.plan("clip-vitl14-datacomp-webdataset", storage="ram-tmpfs", storage_units=4).warnings
    assert any("ram-tmpfs holds 274.9 GB per node" in x and "160.5 TB" in x for x in w)
    # Drives: 2 x 7.68 TB = 15.36 TB raw < 160.5 TB.
    w = calc.plan("clip-vitl14-datacomp-webdataset", storage="nvme-gen4", storage_units=2).warnings
    assert any("15.36 TB in 2 x nvme-gen4" in x for x in w)
    # 24 x 7.68 TB = 184.3 TB raw holds 160.5 TB and the few kept ViT-L checkpoints: no warning.
    w = calc.plan("clip-vitl14-datacomp-webdataset", storage="nvme-gen4", storage_units=24).warnings
    assert not any("holds" in x and "less than" in x for x in w)
    # Issue 38: 30 drives are more than one 24-bay system holds: refused, naming the field and the range
    with pytest.raises(calc.InputError) as e:
        calc.plan("clip-vitl14-datacomp-webdataset", storage="nvme-gen4", storage_units=30)
    assert e.value.field == "storage_units" and "accepted: 1 to 24 (24;" in str(e.value)
    # drives in the GPU nodes: 24 in each of unet3d's 64 / 8 = 8 nodes, so 192 at most (32 = 4 a node is fine)
    assert (
        calc.plan("mlperf-unet3d-h100", gpus_per_job=64, storage="nvme-gen4", storage_units=32).storage_bytes_per_s > 0
    )
    with pytest.raises(calc.InputError) as e:
        calc.plan("mlperf-unet3d-h100", gpus_per_job=64, storage="nvme-gen4", storage_units=193)
    assert "accepted: 1 to 192 (24 a node x 8 nodes" in str(e.value)
    # Issue 38: with no units the plan reads RAM at its largest, and still cannot hold the dataset: said.
    w = calc.plan("mlperf-unet3d-h100", storage="ram-tmpfs", dataset_examples=1e6).warnings
    assert any("ram-tmpfs holds 274.9 GB per node" in x for x in w)
    # ... and a file system at its largest size: Filestore zonal's 100 x 1 TiB = 109.95 TB < 160.5 TB
    w = calc.plan("clip-vitl14-datacomp-webdataset", storage="gcp-filestore-zonal").warnings
    assert any("110 TB in 100 x gcp-filestore-zonal (its largest size)" in x and "choose a store" in x for x in w)


@pytest.mark.parametrize(
    ("inputs", "field", "says"),
    [
        # an unknown decoder or CPU names the field and lists what is accepted
        ({"decoder": "pillow"}, "decoder", "known: pil, pillow-simd, opencv"),
        ({"cpu": "i9-13900k"}, "cpu", "known: epyc-zen5-kvm"),
        ({"cpu_seconds_per_example": "3 ms", "measured_cpu": "nope"}, "measured_cpu", "xeon-8480c"),
        # a name the catalog lists without a figure: refused with the reason and the ones that have one
        ({"cpu": "grace"}, "cpu", "accepted: epyc-zen5-kvm"),
        ({"image_pixels": "500by375"}, "image_pixels", "500x375"),
        # a CPU decoder with GPU decode contradicts it
        ({"decoder": "pil", "gpu_decode": True}, "decoder", "dali-gpu"),
        # a decoder on a model with no image: the image it would decode is asked for
        ({"model": "llama3_8b", "decoder": "pil"}, "image_pixels", "500x375"),
        ({"media": "video", "decoder": "opencv"}, "decoder", "media is video"),
    ],
)
def test_loader_names_are_refused_naming_the_field(inputs: dict[str, object], field: str, says: str) -> None:
    with pytest.raises(calc.InputError) as e:
        calc.plan("resnet50-8xh100-imagenet", **inputs)
    assert e.value.field == field and says in e.value.message


def test_a_measured_step_records_its_resolution_and_re_projects_from_it() -> None:
    # 100 ms measured at 224 px (the model's side): at 160 px the plan re-projects it by the model's
    # ratio of step times, and the record says where it was measured
    sc = calc.scenario("resnet50-8xh100-imagenet", step_time_s="100 ms", train_resolution=224)
    assert sc.measured_train_resolution == 224
    at_160 = calc.plan(sc.replace(train_resolution=160))
    assert at_160.step_method == "re-projected measurement"
    same = calc.plan(sc)
    ratio = at_160.values["model_step_time_s"] / same.values["model_step_time_s"]
    assert at_160.step_time_s == pytest.approx(0.100 * ratio, rel=1e-9) and ratio < 0.6
    # the FLOPs and the image tensor follow: (160 / 224)^2 of 8.178 GFLOPs (models.yaml, counted with
    # FlopCounterMode); 3 x 160 x 160 x 4 + 8 B
    assert at_160.values["forward_flops_per_example"] == pytest.approx(8.178e9 * 25_600 / 50_176, rel=1e-12)
    assert at_160.example_tensor_bytes == 307_208


def test_a_large_photo_costs_its_pixels_and_a_reduced_decode_spares_most_of_them() -> None:
    # A 4000 x 3000 product photo of 3 MB for ResNet-50 at 224 px, PIL (decoders.yaml, reference core):
    # every pixel decoded (as torchvision's ImageFolder does), 12 MP above the 0.25 MP knee:
    # 0.0592 + (1.215 + 3.096) x 12 + 0.6175 x 12 + 5.824 x 3 = 0.0592 + 51.732 + 7.41 + 17.472 = 76.6732 ms
    kw = {"image_pixels": "4000x3000", "example_bytes": "3 MB", "cpu": "epyc-zen5-kvm"}
    full = calc.plan("resnet50-8xh100-imagenet", **kw)
    assert full.values["decode_seconds_per_example"] == pytest.approx(76.6732e-3, rel=1e-9)
    # Image.draft at 1/8 (3000 / 8 = 375 >= 224): 0.1875 MP decoded, under the knee; every stored block and
    # byte still read: 0.0592 + 1.215 x 0.1875 + 7.41 + 17.472 = 25.1690125 ms
    reduced = calc.plan("resnet50-8xh100-imagenet", reduced_decode=True, **kw)
    assert reduced.values["dct_denominator"] == 8.0
    assert reduced.values["decode_seconds_per_example"] == pytest.approx(25.1690125e-3, rel=1e-9)
    # the 500 x 375 ImageNet JPEG of 114,660 B: 0.0592 + 1.8325 x 0.1875 + 5.824 x 0.11466 = 1.07057359 ms,
    # 72 x less than the photo; a decoder that cannot scale (torchvision) decodes every pixel regardless
    small = calc.plan("resnet50-8xh100-imagenet", cpu="epyc-zen5-kvm")
    assert small.values["decode_seconds_per_example"] == pytest.approx(1.07057359e-3, rel=1e-6)
    tv = calc.plan("resnet50-8xh100-imagenet", decoder="torchvision", reduced_decode=True, **kw)
    assert (
        tv.values["dct_denominator"] == 1.0
        and "cannot decode at a reduced size" in tv.sources["cpu_seconds_per_example"]
    )


def test_ffcv_is_priced_by_its_whole_pipeline_and_says_where_it_does_not_follow_the_image() -> None:
    # decoders.yaml ffcv: 1.552 ms an image at 224 px and 1.345 ms at 160 px (500x375 JPEGs, reference core):
    # (1.552 - 1.345) / (0.050176 - 0.0256) MP = 8.4229 ms per output MP; 1.552 - 8.4229 x 0.050176 = 1.12938 ms
    per_mp = (1.552 - 1.345) / (0.050176 - 0.0256)
    p = calc.plan("resnet50-8xh100-imagenet", decoder="ffcv", cpu="epyc-zen5-kvm")
    assert p.values["decode_seconds_per_example"] == pytest.approx((1.552 - per_mp * 0.050176) * 1e-3, rel=1e-9)
    assert p.values["decode_seconds_per_example"] + p.values["augment_seconds_per_example"] == pytest.approx(
        1.552e-3, rel=1e-9
    )
    assert not any("whole pipeline" in w for w in p.warnings)
    big = calc.plan("resnet50-8xh100-imagenet", decoder="ffcv", image_pixels="4000x3000")
    assert any("ffcv" in w and "4000x3000" in w and "cpu_seconds_per_example" in w for w in big.warnings)
