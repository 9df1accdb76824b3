"""Issue 32: plans that leave their model's range say so, with the number; inputs that
contradict each other are refused naming both; no NumPy warning escapes a plan."""

from __future__ import annotations

import warnings

import pytest

import calc

LLAMA = "llama3-8b-pretrain-8xh100"
# Llama 3 8B: 8,030,261,248 parameters x 14 B (mlperf_mixed_adam: bf16 weights 2 B + fp32
# master, momentum and variance 12 B) = 112,423,657,472 B per checkpoint.
LLAMA_CHECKPOINT_BYTES = 8_030_261_248 * 14


def test_stall_share_above_the_budget_is_said_with_its_number() -> None:
    """A synchronous save at 1 GB/s every 1 s: 112.42 s blocked per 1 s = 11,242.4 % of the time,
    against the preset's 2 % budget."""
    p = calc.plan(LLAMA, checkpoint_interval_s="1 s", checkpoint_mode="sync", storage_bytes_per_s="1 GB/s")
    assert p.checkpoint_stall_share == pytest.approx(LLAMA_CHECKPOINT_BYTES / 1e9 / 1, rel=1e-12)
    (w,) = [w for w in p.warnings if "stall budget" in w]
    assert "11,242.4%" in w and "2.0%" in w and "longer than the interval" in w


def test_stall_share_within_the_budget_says_nothing() -> None:
    p = calc.plan(LLAMA)  # async saves every 30 min: the host copy blocks far under 2 %
    assert p.checkpoint_stall_share <= 0.02
    assert not [w for w in p.warnings if "stall budget" in w]


def test_young_daly_outside_its_validity_is_said() -> None:
    """A 2,248.5 s save (112.42 GB at 50 MB/s) against a 1 h MTBF is 62 % of it: Young's
    sqrt(2 x 2,248.5 x 3,600) = 4,023.6 s is outside the first-order range (Daly 2006)."""
    p = calc.plan(
        LLAMA, checkpoint_interval_s="optimal", mtbf_s="1 h", checkpoint_mode="sync", storage_bytes_per_s="50 MB/s"
    )
    save = LLAMA_CHECKPOINT_BYTES / 50e6
    assert p.checkpoint_write_s == pytest.approx(save, rel=1e-12)
    assert p.young_daly_interval_s == pytest.approx((2 * save * 3600) ** 0.5, rel=1e-12)
    (w,) = [w for w in p.warnings if "Young-Daly" in w]
    assert "62%" in w and "37.47 min" in w and "60 min" in w


def test_young_daly_within_its_validity_says_nothing() -> None:
    """112.42 s at 1 GB/s against a 1 d MTBF: 0.13 %."""
    p = calc.plan(LLAMA, checkpoint_interval_s="optimal", mtbf_s="1 d", storage_bytes_per_s="1 GB/s")
    assert not [w for w in p.warnings if "Young-Daly" in w]


def test_no_interval_keeps_no_checkpoints() -> None:
    """No checkpoint interval: nothing is saved, so nothing is kept (it counted keep x 18.4 GB)
    and a store that holds the dataset is not called too small because of checkpoints."""
    p = calc.plan("gpt-1b-h100-tokens", storage="nvme-gen4", storage_units=1)
    assert p.checkpoint_interval_used_s == 0
    assert p.checkpoint_capacity_bytes == 0
    assert not [w for w in p.warnings if "holds" in w]


@pytest.mark.parametrize(("field", "value"), [("dataset_examples", 5e-324), ("cpu_seconds_per_example", 5e-324)])
def test_a_denormal_count_is_refused_not_overflowed(field: str, value: float) -> None:
    """5e-324 examples (or seconds per example) overflowed 1 / x with NumPy's RuntimeWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(calc.InputError, match=f"{field}: [0-9.e-]+ is out of range; accepted: 0, or "):
            calc.plan("gpt-1b-h100-tokens", **{field: value})
    assert calc.plan("gpt-1b-h100-tokens", **{field: 0}).samples_per_s > 0  # 0 is still "none"


def test_site_contradicting_the_server_is_refused_naming_both() -> None:
    """A GCP site for an AWS instance: the answer would buy GCP storage for an AWS server."""
    with pytest.raises(calc.InputError, match=r"site gcp contradicts server aws-p5\.48xlarge, which runs at aws") as e:
        calc.plan("gpt-1b-h100-tokens", site="gcp", server="aws-p5.48xlarge")
    assert e.value.field == "site"
    assert calc.plan("gpt-1b-h100-tokens", site="aws", server="aws-p5.48xlarge").samples_per_s > 0


def test_zero_examples_with_a_dataset_size_is_refused_by_name() -> None:
    """Found by benchmarks/fuzz_surfaces.py after the merge of dataset_bytes: 100 GB over 0
    examples raised ZeroDivisionError."""
    with pytest.raises(calc.InputError, match="0 examples cannot hold dataset_bytes = 100 GB") as e:
        calc.plan(calc.Scenario(dataset_examples=0, dataset_bytes="100 GB"))
    assert e.value.field == "dataset_examples"
