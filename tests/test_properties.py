"""Property tests: monotonicity, finiteness, and that bad input is always a ValueError naming a field."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import calc
from calc.errors import InputError
from calc.stages import UNLIMITED

GPU_NAMES = [g for g, spec in calc.gpus().items() if "fp32" in spec.peak_flops_per_s]
MODEL_NAMES = ["resnet18", "resnet50", "resnet152", "vit_b16", "efficientnet_b0", "bert_base_512"]

scenarios = st.builds(
    calc.Scenario,
    gpu=st.sampled_from(GPU_NAMES),
    model=st.sampled_from(MODEL_NAMES),
    precision=st.just("fp32"),
    gpus_per_job=st.integers(1, 512),
    jobs=st.integers(1, 20),
    example_bytes=st.floats(1e3, 1e9),
    examples_per_file=st.sampled_from([1, 100, 1251]),
    num_workers=st.integers(0, 64),
    prefetch_factor=st.integers(1, 8),
    target_gpu_utilization=st.floats(0.1, 1.0),
    cache_fraction=st.floats(0, 0.9),
    storage=st.sampled_from([None, "nvme-gen4", "hdd-7200", "aws-s3-standard", "nfs-25gbe"]),
    storage_units=st.sampled_from([None, 1, 4]),
    cpu_cores_per_node=st.sampled_from([None, 8, 64]),
)


@settings(max_examples=150, deadline=None)
@given(scenarios)
def test_every_valid_input_gives_finite_non_negative_results(s: calc.Scenario) -> None:
    p = calc.plan(s)
    for name in calc.OUTPUTS:
        value = p.values[name]
        finite = math.isfinite(value) or (value == math.inf and name in UNLIMITED)
        assert finite and value >= 0, (name, value)
    assert 0 <= p.gpu_utilization <= 1 + 1e-12
    # The bottleneck is the slowest stage, and every bound that binds is a stage (issue 17): with
    # workers the achieved rate per GPU is that stage's capacity.
    assert p.stages[p.bottleneck] == min(p.stages.values())
    if s.num_workers > 0:
        per_gpu = p.achieved_samples_per_s / (s.gpus_per_job * s.jobs)
        assert per_gpu == pytest.approx(p.stages[p.bottleneck], rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    scenarios,
    st.sampled_from(["16 GiB", "24 GiB", "40 GiB", "80 GiB"]),
    st.sampled_from(["24 GiB", "80 GiB", "141 GiB"]),
)
def test_more_gpu_memory_never_lowers_the_batch(s: calc.Scenario, small: str, big: str) -> None:
    lo, hi = sorted([calc.parse(small, "bytes"), calc.parse(big, "bytes")])
    try:
        a = calc.plan(s.replace(gpu_memory_bytes=lo))
    except InputError:
        return  # does not fit at the smaller memory
    b = calc.plan(s.replace(gpu_memory_bytes=hi))
    assert b.batch_size >= a.batch_size
    assert b.max_batch_size >= a.max_batch_size


FOUND = calc.Scenario(
    gpu="V100-SXM2-32GB", model="resnet50", precision="fp32", gpus_per_job=2, jobs=4, example_bytes=1000.0,
    num_workers=28, prefetch_factor=8,
)
"""A draw that found the page cache depends on how jobs pack onto nodes (see the test below)."""


@settings(max_examples=60, deadline=None)
@given(scenarios, st.integers(1, 64), st.integers(1, 8), st.booleans())
@example(FOUND, 1, 0, True).via("a draw of 2026-11-29")
@example(FOUND, 1, 0, False).via("the same with the page cache off")
def test_more_gpus_or_jobs_never_lower_demand(s: calc.Scenario, extra_gpus: int, extra_jobs: int, cache: bool) -> None:
    """More GPUs or jobs never lower the samples/s and cores asked; nor, with the page cache off, the reads
    and bytes asked of storage. With it on they can fall: what a node caches is its RAM less its loaders',
    and jobs of another size pack onto a node differently (test_packing_changes_what_a_node_caches)."""
    s = s.replace(page_cache=cache)
    a = calc.plan(s)
    b = calc.plan(s.replace(gpus_per_job=s.gpus_per_job + extra_gpus, jobs=s.jobs + extra_jobs))
    for k in ("samples_per_s", "cpu_cores", *(() if cache else ("read_iops", "read_bytes_per_s"))):
        assert b.values[k] >= a.values[k] * (1 - 1e-12), k


def test_packing_changes_what_a_node_caches() -> None:
    """FOUND: 69,055,938,560 B of loader RAM per GPU (224 batches of 256 x 602,120 B, doubled by pinning).
    Four 2-GPU jobs fill a node of 8: 552,447,508,480 B > 512 GiB, nothing left to cache (and a warning).
    3-GPU jobs pack two to a node (6 GPUs, 2 idle): 414,335,631,360 B, leaving 135,420,182,528 B, which holds
    the 1,281,167,000 B dataset: after epoch 1 storage serves no reads."""
    two = calc.plan(FOUND)
    three = calc.plan(FOUND.replace(gpus_per_job=3))
    assert two.values["gpus_on_node"] == 8 and three.values["gpus_on_node"] == 6
    assert two.values["host_ram_per_node_bytes"] == 8 * 69_055_938_560 > 512 * 2**30
    assert 512 * 2**30 - three.values["host_ram_per_node_bytes"] == 135_420_182_528 > three.dataset_bytes
    assert (two.page_cache_hit, three.page_cache_hit) == (0.0, 1.0) and three.read_iops == 0 < two.read_iops
    assert any("Loader RAM per node" in w for w in two.warnings)
    assert not any("Loader RAM per node" in w for w in three.warnings)


@settings(max_examples=60, deadline=None)
@given(scenarios, st.floats(1.0, 100.0))
def test_larger_examples_never_lower_bandwidth(s: calc.Scenario, factor: float) -> None:
    a = calc.plan(s)
    size = calc.parse(s.example_bytes, "bytes") if s.example_bytes is not None else 1e5
    b = calc.plan(s.replace(example_bytes=size * factor))
    assert b.read_bytes_per_s >= a.read_bytes_per_s * (1 - 1e-12)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(list(calc.FIELDS)),
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not math.isfinite(x) or x < 0 or x > 1e19),
        st.text(alphabet="qwzjk!@#% ", min_size=1, max_size=12),
        st.just(-1),
        st.just("-5 GB"),
    ),
)
def test_every_invalid_input_raises_a_value_error_naming_the_field(field: str, value: object) -> None:
    if field in ("name", "description"):
        return  # labels accept any text
    try:
        s = calc.Scenario(**{field: value})
        calc.plan(s)
    except InputError as err:
        assert field in err.field or err.field in calc.FIELDS or err.field.startswith(("batch_size", "scenario"))
        return
    except ValueError:  # pragma: no cover - any other ValueError would be a bug
        raise
    # accepted: only a text that happens to be a valid preset name or tensor spec may pass
    assert calc.FIELDS[field].kind in ("choice", "text") and isinstance(value, str), (field, value)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 24), st.integers(1, 24))
def test_more_storage_units_never_lower_max_gpus(a: int, b: int) -> None:
    from calc.sizing import max_gpus

    lo, hi = sorted((a, b))
    for opt in ("nvme-gen4", "hdd-7200", "aws-fsx-lustre-ssd-125"):
        assert max_gpus("mlperf-unet3d-h100", storage=opt, units=hi) >= max_gpus(
            "mlperf-unet3d-h100", storage=opt, units=lo
        )


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["beast-imagenet-4xv100", "mlperf-unet3d-h100", "vit-b16-a100", "beast-small-files"]),
    st.floats(1e8, 1e12),
    st.booleans(),
)
def test_max_gpus_is_where_the_plan_stops_feeding(name: str, bandwidth: float, page_cache: bool) -> None:
    """max_gpus is read from the plan (issue 17): its GPU count is fed, one more group is not."""
    from calc.sizing import max_gpus

    try:
        n = max_gpus(name, page_cache=page_cache, read_bytes_per_s=bandwidth)
    except InputError as e:  # no limit in reach: the caches serve every read, or over 1e6 GPUs
        assert e.field == "storage"
        return
    sc = calc.scenario(name, page_cache=page_cache, storage=None, storage_units=None, storage_iops=None)
    sc = sc.replace(storage_bytes_per_s=bandwidth, jobs=1)
    mp = sc.tensor_parallel * sc.pipeline_parallel

    def fed(gpus: int) -> bool:
        p = calc.plan(sc, gpus_per_job=gpus)
        return p.stages.get("storage", math.inf) >= p.per_gpu_samples_per_s * (1 - 1e-9)

    if n > 0:
        assert fed(n)
    assert not fed(n + mp)
