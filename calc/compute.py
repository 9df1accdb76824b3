"""Per-batch GPU time t (MODEL.md section 2).

In order of trust: a measured step time; a measured per-GPU throughput (t = n / rate); or
FLOPs: ``t = n x train_flops_per_example / (peak_flops x efficiency)`` with
``train_flops_per_example = train_flops_multiplier x forward_flops`` (3: backward ~ 2 x forward).
"""

from __future__ import annotations

import numpy as np

from calc._types import Numeric

METHODS = ("measured step time", "measured throughput", "FLOPs x efficiency")
"""How the step time was obtained, by code 0, 1, 2."""


def step_time_from_flops(
    batch_size: Numeric,
    train_flops_per_example: Numeric,
    peak_flops_per_s: Numeric,
    efficiency: Numeric,
) -> Numeric:
    """Seconds per training step from the FLOP count [s].

    Notes
    -----
    ``efficiency`` is the model FLOP utilisation, calibrated per model and precision on
    published measurements (presets/calibration.yaml, calc.calibration).
    """
    return np.asarray(batch_size, dtype=float) * train_flops_per_example / (peak_flops_per_s * efficiency)


def step_time_s(
    batch_size: Numeric,
    measured_step_time_s: Numeric,
    measured_samples_per_s: Numeric,
    flops_step_time_s: Numeric,
) -> tuple[Numeric, Numeric]:
    """Pick the most trusted step time available; NaN marks "not given".

    Returns the step time [s] and the method code (index into ``METHODS``).
    """
    step = np.asarray(measured_step_time_s, dtype=float)
    rate = np.asarray(measured_samples_per_s, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        from_rate = batch_size / rate
    t = np.where(np.isfinite(step), step, np.where(np.isfinite(rate), from_rate, flops_step_time_s))
    method = np.where(np.isfinite(step), 0.0, np.where(np.isfinite(rate), 1.0, 2.0))
    return t, method


def efficiency_from_rate(
    samples_per_s: Numeric, train_flops_per_example: Numeric, peak_flops_per_s: Numeric
) -> Numeric:
    """Model FLOP utilisation implied by a measured throughput [0-1]."""
    return np.asarray(samples_per_s, dtype=float) * train_flops_per_example / peak_flops_per_s
