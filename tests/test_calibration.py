"""Efficiency calibration: every row recomputed by hand, the defaults derived from them."""

from __future__ import annotations

import math

import pytest

import calc
from calc.calibration import calibration, default_efficiency, summary


def test_resnet50_v100_fp32_row_by_hand() -> None:
    t = calibration()
    row = t[(t.model == "resnet50") & (t.gpu == "V100-SXM2-16GB") & (t.precision == "fp32")].iloc[0]
    # 367 img/s x 3 x 2 x 4.11e9 FLOPs / 15.7e12 FLOP/s
    assert row.implied_efficiency == pytest.approx(367 * 6 * 4.11e9 / 15.7e12, rel=1e-12)


def test_default_is_geometric_mean_of_the_models_rows() -> None:
    # resnet50 fp32 rows: V100 16 GB 367, V100 32 GB 356, H100 954.7 img/s
    effs = [367 * 6 * 4.11e9 / 15.7e12, 356 * 6 * 4.11e9 / 15.7e12, 954.7 * 6 * 4.11e9 / 67e12]
    eff, how = default_efficiency("resnet50", "fp32")
    assert eff == pytest.approx(math.prod(effs) ** (1 / 3), rel=1e-12)
    assert "3 resnet50 fp32" in how and "over all GPUs" in how
    # on a GPU with its own rows, those rows: the two V100 16 GB... here one row
    eff_v100, how_v100 = default_efficiency("resnet50", "fp32", "V100-SXM2-16GB")
    assert eff_v100 == pytest.approx(effs[0], rel=1e-12) and "on V100-SXM2-16GB" in how_v100


def test_borrowed_efficiency_says_so() -> None:
    eff, how = default_efficiency("bert_base_512", "fp32")
    assert "borrowed from vit_b16" in how and 0 < eff < 1


def test_calibration_table_and_summary_are_finite() -> None:
    t = calibration()
    assert len(t) == len(calc.catalog.measurements())
    assert (t["implied_efficiency"] > 0).all() and (t["implied_efficiency"] < 1).all()
    s = summary(t)
    assert 1 <= s["geomean_error_factor"] <= s["loo_geomean_error_factor"] < 3


def test_plan_uses_the_calibrated_efficiency() -> None:
    p = calc.plan(gpu="H100-SXM", model="resnet50", precision="bf16", batch_size=256)
    # the H100 bf16 row itself: 3,956.5 img/s
    assert p.gpu_samples_per_s == pytest.approx(3956.5, rel=1e-9)
    q = calc.plan(gpu="L40S", model="resnet50", precision="bf16", batch_size=256)
    eff, _ = default_efficiency("resnet50", "bf16")  # no L40S rows: all GPUs
    assert q.gpu_samples_per_s == pytest.approx(362e12 * eff / (6 * 4.11e9), rel=1e-12)
