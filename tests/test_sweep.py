"""sweep(): every row equals plan() of that scenario (one code path, vectorised)."""

from __future__ import annotations

import pytest

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
