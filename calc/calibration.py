"""Efficiency calibration: model FLOP utilisation from measured training throughput.

    efficiency(row)           = samples_per_s x 3 x forward_flops / peak_flops(gpu, precision)
    efficiency(model, class)  = geometric mean over that model's rows of the class

``class`` is fp32, tf32 or mixed (fp16/bf16/fp8). Rows on the plan's own GPU are preferred.
A model without rows of a class borrows the next model in its preset's ``calibration`` list,
then ResNet-50's. ``calibration()``
shows every row with the efficiency it implies and the prediction calc makes for it, so the
defaults are derived in the open from presets/calibration.yaml.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from calc import catalog
from calc.compute import efficiency_from_rate

TRAIN_FLOPS_MULTIPLIER = 3.0
"""Training FLOPs / forward FLOPs: backward ~ 2 x forward (compute_anchors.md section 0)."""


def _row_efficiency(m: catalog.Measurement) -> float:
    model = catalog.models()[m.model]
    peak = catalog.gpus()[m.gpu].peak(m.precision)
    return float(efficiency_from_rate(m.samples_per_s, TRAIN_FLOPS_MULTIPLIER * model.forward_flops, peak))


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _table(exclude: tuple[str, str, str] | None) -> dict[tuple[str, str, str], list[float]]:
    """Implied efficiencies grouped by (model, precision class, gpu); ``gpu`` "" = all GPUs."""
    groups: dict[tuple[str, str, str], list[float]] = {}
    for m in catalog.measurements():
        if (m.model, m.gpu, m.precision) == exclude:
            continue
        eff = _row_efficiency(m)
        pclass = catalog.precision_class(m.precision)
        groups.setdefault((m.model, pclass, m.gpu), []).append(eff)
        groups.setdefault((m.model, pclass, ""), []).append(eff)
    return groups


@functools.cache
def _cached_table() -> dict[tuple[str, str, str], list[float]]:
    return _table(None)


def default_efficiency(
    model: str, precision: str, gpu: str = "", exclude: tuple[str, str, str] | None = None
) -> tuple[float, str]:
    """The calibrated efficiency for ``model`` at ``precision`` on ``gpu``, and how it was derived.

    Rows measured on the same GPU are preferred (efficiency falls as tensor peaks rise: a
    ResNet-50 reaches 24 % of a V100's fp16 peak but 10 % of an H100's bf16 peak); otherwise
    the geometric mean over every GPU. ``exclude`` = (model, gpu, precision) leaves that row
    out (leave-one-out checks).
    """
    pclass = catalog.precision_class(precision)
    chain = (*catalog.model(model).calibration, "resnet50")
    table = _cached_table() if exclude is None else _table(exclude)
    scopes = [(gpu, f"on {gpu}")] if gpu else []
    scopes.append(("", "over all GPUs"))
    for name in chain:
        for key, scope in scopes:
            rows = table.get((name, pclass, key))
            if rows:
                borrowed = "" if name == model else f" (borrowed from {name})"
                return _geomean(rows), (
                    f"geometric mean of {len(rows)} {name} {pclass} measurement(s) {scope}{borrowed}, calibration.yaml"
                )
    raise KeyError(f"no calibration rows for class {pclass}")


def calibration() -> pd.DataFrame:
    """Predicted vs measured per-GPU throughput for every calibration row.

    Columns: model, gpu, precision, batch_size, measured_samples_per_s, implied_efficiency,
    efficiency (the default calc uses), predicted_samples_per_s, error (predicted/measured - 1),
    loo_predicted_samples_per_s and loo_error (the row left out of its own calibration;
    NaN where no other row of the class exists), source.
    """
    rows = []
    for m in catalog.measurements():
        model = catalog.models()[m.model]
        peak = catalog.gpus()[m.gpu].peak(m.precision)
        train = TRAIN_FLOPS_MULTIPLIER * model.forward_flops
        eff, _ = default_efficiency(m.model, m.precision, m.gpu)
        predicted = peak * eff / train
        try:
            loo_eff, loo_how = default_efficiency(m.model, m.precision, m.gpu, exclude=(m.model, m.gpu, m.precision))
            loo = peak * loo_eff / train
        except KeyError:
            loo, loo_how = math.nan, ""
        rows.append(
            {
                "model": m.model,
                "gpu": m.gpu,
                "precision": m.precision,
                "batch_size": m.batch_size,
                "measured_samples_per_s": m.samples_per_s,
                "implied_efficiency": _row_efficiency(m),
                "efficiency": eff,
                "predicted_samples_per_s": predicted,
                "error": predicted / m.samples_per_s - 1,
                "loo_predicted_samples_per_s": loo,
                "loo_error": loo / m.samples_per_s - 1,
                "loo_from": loo_how,
                "source": m.source,
            }
        )
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame | None = None) -> dict[str, float]:
    """Overall geometric-mean error factor, in-sample and leave-one-out (1.0 = exact)."""
    t = calibration() if table is None else table
    ins = np.exp(np.mean(np.abs(np.log(t["predicted_samples_per_s"] / t["measured_samples_per_s"]))))
    loo_t = t.dropna(subset=["loo_predicted_samples_per_s"])
    loo = np.exp(np.mean(np.abs(np.log(loo_t["loo_predicted_samples_per_s"] / loo_t["measured_samples_per_s"]))))
    return {
        "rows": float(len(t)),
        "geomean_error_factor": float(ins),
        "loo_rows": float(len(loo_t)),
        "loo_geomean_error_factor": float(loo),
    }
