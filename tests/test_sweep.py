"""sweep(): every row equals plan() of that scenario (one code path, vectorised)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import surfaces
from hypothesis import HealthCheck, given, settings

import calc


def test_sweep_rows_equal_plans() -> None:
    df = calc.sweep(
        "beast-imagenet-4xv100",
        gpus_per_job=[1, 2, 4, 8],
        example_bytes=["64 KiB", "500 kB"],
        gpu=["V100-SXM2-16GB", "A100-SXM4-80GB"],
    )
    assert len(df) == 16
    for row in df.itertuples():
        p = calc.plan(
            "beast-imagenet-4xv100", gpus_per_job=row.gpus_per_job, example_bytes=row.example_bytes, gpu=row.gpu
        )
        for k in (
            "batch_size",
            "samples_per_s",
            "read_iops",
            "read_bytes_per_s",
            "worker_ram_bytes",
            "gpu_utilization",
        ):
            assert getattr(row, k) == pytest.approx(p.values[k], rel=1e-12), k
        assert row.bottleneck == p.bottleneck


def test_sweep_hand_values() -> None:
    df = calc.sweep("beast-small-files", jobs=[5, 10])
    assert list(df["read_iops"]) == pytest.approx([25600, 51200], rel=1e-12)


def test_sweep_optimizer_and_shards() -> None:
    df = calc.sweep(
        calc.Scenario(gpu="H100-SXM", model="gpt_7b", precision="bf16", gpus_per_job=16),
        optimizer=["adam"],
        state_shards=[4, 8, 16],
    )
    # 6.74 B params x 16 B / shards
    assert list(df["model_state_bytes"]) == pytest.approx([6738415616 * 16 / s for s in (4, 8, 16)], rel=1e-12)


def test_sweep_marks_rows_that_do_not_fit() -> None:
    df = calc.sweep(calc.Scenario(model="gpt_1b", optimizer="adam"), gpu=["T4", "H100-SXM"], precision=["fp16"])
    assert list(df["fits"]) == [False, True]
    assert df.loc[0, "batch_size"] == 0 and df.loc[0, "samples_per_s"] == 0
    assert df.select_dtypes("number").notna().all().all()


def test_sweep_rejects_bad_axes() -> None:
    with pytest.raises(calc.InputError, match="gpu_count"):
        calc.sweep("beast-resnet50-v100", gpu_count=[1])
    with pytest.raises(calc.InputError, match="gpus_per_job"):
        calc.sweep("beast-resnet50-v100", gpus_per_job=[1, -2])
    with pytest.raises(calc.InputError, match="at least one value"):
        calc.sweep("beast-resnet50-v100", gpus_per_job=[])


# ---------------------------------------------------------------- issue 17: sweep = plan, every combination


def _rows_equal_plans(base: calc.Scenario, axes: dict[str, list[object]], keys: tuple[str, ...]) -> None:
    """Each sweep row equals plan() of the base with that row's axis values applied together."""
    df = calc.sweep(base, **axes)
    combos = list(itertools.product(*axes.values()))
    assert len(df) == len(combos)
    for (_, row), combo in zip(df.iterrows(), combos, strict=True):
        p = calc.plan(base.replace(**dict(zip(axes, combo, strict=True))))
        for k in keys:
            col = f"{k}_output" if k in axes else k  # an axis keeps its input (issue 39)
            assert row[col] == pytest.approx(p.values[k], rel=1e-12), (combo, k)
        assert row["step_method"] == p.step_method and row["bottleneck"] == p.bottleneck, combo


def test_sweep_measured_step_with_gpu_batch_and_precision_axes_equals_plan() -> None:
    """Defect: a measured step swept beside a GPU axis was re-projected from the base's GPU
    (0.244 s on an A100) while plan() of the same inputs takes it as measured on the A100 (100 ms)."""
    base = calc.scenario("beast-resnet50-v100")  # measured 1,457 samples/s on V100 fp32
    _rows_equal_plans(
        base,
        {
            "gpu": ["V100-SXM2-16GB", "A100-SXM4-80GB"],
            "step_time_s": ["100 ms", "77 ms"],
            "batch_size": [None, 64],
            "precision": ["fp32", "fp16"],
        },
        ("step_time_s", "batch_size", "samples_per_s", "gpu_utilization"),
    )
    # The measurement alone re-projected across GPUs, batches and precisions (no measurement axis).
    _rows_equal_plans(
        base,
        {"gpu": ["V100-SXM2-16GB", "A100-SXM4-80GB"], "batch_size": [32, 128], "precision": ["fp32", "fp16"]},
        ("step_time_s", "samples_per_s"),
    )
    df = calc.sweep(base, gpu=["A100-SXM4-80GB"], step_time_s=["100 ms"])
    assert df.loc[0, "step_time_s"] == 0.1  # given on the A100: as measured, not re-projected


def test_sweep_reprojects_a_measured_step_by_hand() -> None:
    """A step of 100 ms measured on a V100 at fp32, batch 64, with the FLOPs-only model and a
    given efficiency: t = n x F / (peak x e), so on an A100 at the same batch and precision
    t = 100 ms x 15.7 / 19.5 TFLOP/s (fp32 peaks, presets/gpus.yaml) = 80.51 ms."""
    base = calc.Scenario(
        gpu="V100-SXM2-16GB",
        model="resnet50",
        precision="fp32",
        step_model="flops",
        efficiency=0.4,
        batch_size=64,
        step_time_s="100 ms",
    )
    df = calc.sweep(base, gpu=["V100-SXM2-16GB", "A100-SXM4-80GB"])
    assert list(df["step_time_s"]) == pytest.approx([0.1, 0.1 * 15.7 / 19.5], rel=1e-12)
    assert list(df["step_method"]) == ["measured step time", "re-projected measurement"]
    # Half the batch on the A100: half the math, 40.26 ms.
    df = calc.sweep(base, gpu=["A100-SXM4-80GB"], batch_size=[32])
    assert df.loc[0, "step_time_s"] == pytest.approx(0.1 * 15.7 / 19.5 / 2, rel=1e-12)


def test_sweep_refuses_what_plan_refuses() -> None:
    """Defect: combinations plan() refuses came back as rows (a precision the GPU lacks beside a
    peak override; tensor parallel not dividing the GPU count)."""
    base = calc.Scenario(gpu="A100-SXM4-80GB", precision="bf16", peak_flops_per_s="300 TFLOP/s")
    with pytest.raises(calc.InputError) as plan_err:
        calc.plan(base, gpu="V100-SXM2-16GB")
    with pytest.raises(calc.InputError) as sweep_err:
        calc.sweep(base, gpu=["A100-SXM4-80GB", "V100-SXM2-16GB"], precision=["bf16", "fp32"])
    assert sweep_err.value.field == plan_err.value.field == "precision"
    with pytest.raises(calc.InputError) as e:
        calc.sweep("gpt-1b-h100-tokens", gpus_per_job=[4, 6], tensor_parallel=[1, 4])
    assert e.value.field == "tensor_parallel" and "gpus_per_job=6" in e.value.message
    with pytest.raises(calc.InputError, match="state_shards"):
        calc.sweep("beast-resnet50-v100", gpus_per_job=[4, 8], state_shards=[8])


def test_sweep_accepts_values_valid_only_together() -> None:
    """tensor_parallel=4 is refused on the base's one GPU but valid beside gpus_per_job=8: each
    combination is checked, not each value alone."""
    # (a transformer: tensor parallelism on ResNet-50 is refused, issue 32)
    _rows_equal_plans(
        calc.scenario("gpt-1b-h100-tokens"),
        {"gpus_per_job": [4, 8], "tensor_parallel": [2, 4]},
        ("samples_per_s", "read_bytes_per_s"),
    )


def test_sweep_array_axes() -> None:
    """A 0-d NumPy array is one value (it escaped as a TypeError); a 2-D array is refused."""
    df = calc.sweep("beast-small-files", jobs=np.array(5))
    assert list(df["read_iops"]) == pytest.approx([25600], rel=1e-12)  # as test_sweep_hand_values
    assert list(calc.sweep("beast-small-files", jobs=np.array([5, 10]))["read_iops"]) == pytest.approx([25600, 51200])
    with pytest.raises(calc.InputError, match="2-D"):
        calc.sweep("beast-small-files", jobs=np.array([[5, 10]]))
    with pytest.raises(calc.InputError, match="mapping"):
        calc.sweep("beast-small-files", jobs={5: 1})


def test_evaluate_over_equals_plan() -> None:
    """evaluate_over (one resolve, many values) gives plan()'s numbers, also for an input that
    resolve does not pass on as a plain number (batch_size: each value resolved)."""
    from calc.sweep import evaluate_over

    base = calc.scenario("beast-imagenet-4xv100", storage="hdd-7200", storage_units=4)
    out = evaluate_over(base, "gpus_per_job", [1, 8, 100])
    for i, n in enumerate((1, 8, 100)):
        p = calc.plan(base, gpus_per_job=n)
        assert out["storage_samples_per_s_per_gpu"][i] == pytest.approx(p.stages["storage"], rel=1e-12)
        assert out["per_gpu_samples_per_s"][i] == pytest.approx(p.per_gpu_samples_per_s, rel=1e-12)
    out = evaluate_over(base, "batch_size", [32, 64])
    assert list(out["step_time_s"]) == pytest.approx([calc.plan(base, batch_size=n).step_time_s for n in (32, 64)])


# ---------------------------------------------------------------- issue 32: one resolution for every path


def test_sweep_refuses_context_with_tensor_parallel_as_plan_does() -> None:
    """context_parallel=2 x tensor_parallel=8 = 16 ranks on 8 GPUs: plan() refuses it, and so
    does the sweep (it was returned as a row)."""
    with pytest.raises(calc.InputError, match="16 must divide gpus_per_job = 8"):
        calc.plan("gpt-1b-h100-tokens", context_parallel=2, tensor_parallel=8)
    with pytest.raises(
        calc.InputError, match=r"16 must divide gpus_per_job = 8.*context_parallel=2, tensor_parallel=8"
    ):
        calc.sweep("gpt-1b-h100-tokens", context_parallel=[1, 2], tensor_parallel=[1, 8])


def test_sweep_resolves_auto_checkpoint_mode_per_combination() -> None:
    """checkpoint_mode="auto" saves asynchronously when the state is sharded (ZeRO > 0 or
    TP x PP > 1). From a ZeRO-1 base, zero_stage=0 with tensor_parallel=2 is still sharded:
    async, a drain of checkpoint / interval, not the blocking checkpoint / (2 % x interval) the
    sweep gave by taking zero_stage=0's sync alone."""
    base = calc.scenario("gpt-1b-h100-tokens", checkpoint_interval_s="1 h", zero_stage=1)
    df = calc.sweep(base, zero_stage=[0, 1], tensor_parallel=[1, 2])
    c = calc.plan(base).checkpoint_bytes
    f = base.checkpoint_stall_fraction
    drain, sync = c / 3600, c / (f * 3600)
    assert list(df["checkpoint_write_bytes_per_s"]) == pytest.approx([sync, drain, drain, drain], rel=1e-12)
    assert list(df["checkpoint_async"]) == [0, 1, 1, 1]


def test_sweep_applies_the_site_link_per_row() -> None:
    """Storage at another site than the job is read over the link between them (100 Mb/s =
    12.5 MB/s here): S3 from an on-prem job gives 12.5e6 / 114,660 B = 109.0 samples/s; the
    sweep over site x storage took each axis's link alone (on-prem with NFS got S3's link)."""
    base = calc.scenario(
        "resnet50-8xh100-imagenet", site_link_bytes_per_s="100 Mb/s", allow_other_site=True, page_cache=False
    )
    df = calc.sweep(base, site=["aws", "on-prem"], storage=["aws-s3-standard", "nfs-25gbe"])
    linked = df[(df["site"] == "on-prem") & (df["storage"] == "aws-s3-standard")]
    assert float(linked["achieved_samples_per_s"].iloc[0]) == pytest.approx(12.5e6 / 114_660, rel=1e-12)
    for _, row in df.iterrows():
        p = calc.plan(base, site=row["site"], storage=row["storage"])
        assert row["gpu_utilization"] == pytest.approx(p.gpu_utilization, rel=1e-12)
        assert row["achieved_samples_per_s"] == pytest.approx(p.values["achieved_samples_per_s"], rel=1e-12)


def test_sweep_accepts_run_length_with_milestones() -> None:
    """Milestones need a run length: as two axes every combination is a valid plan() (each axis
    was checked alone against a base without the other). floor(30 d / 1 d) = 30, floor(30 d /
    7 d) = 4, floor(90 d / 1 d) = 90, floor(90 d / 7 d) = 12."""
    base = calc.scenario("gpt-1b-h100-tokens", checkpoint_interval_s="1 h")
    df = calc.sweep(base, run_length_s=["30 d", "90 d"], checkpoint_milestone_interval_s=["1 d", "7 d"])
    assert list(df["checkpoint_milestones"]) == [30, 4, 90, 12]


def test_sweep_refuses_a_site_its_server_contradicts() -> None:
    with pytest.raises(calc.InputError, match="site aws contradicts server DGX-H100"):
        calc.sweep("resnet50-8xh100-imagenet", site=["on-prem", "aws"], server=["DGX-H100"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(surfaces.sweep_cases())
def test_every_generated_sweep_equals_plan_and_refuses_as_it_does(case: tuple[str, dict[str, list[Any]]]) -> None:
    """Generated axes over sites, servers, storage, layouts, checkpoint modes and policies,
    GPUs and models (tests/surfaces.py; benchmarks/fuzz_surfaces.py runs thousands): each row
    equals plan() of its combination, and the sweep refuses exactly when plan() refuses one."""
    surfaces.check_sweep(case)


def test_sweep_keeps_checkpoints_only_where_a_row_saves() -> None:
    """keep x interval: no interval keeps nothing; 1 h keeps 1 or 3 saves of C bytes + the one in flight."""
    base = calc.scenario("gpt-1b-h100-tokens")
    c = calc.plan(base).checkpoint_bytes
    df = calc.sweep(base, checkpoint_interval_s=[None, "1 h"], checkpoint_keep=[1, 3])
    assert list(df["checkpoint_capacity_bytes"]) == pytest.approx([0, 0, 2 * c, 4 * c], rel=1e-12)
