"""Calibration report: how well the step-time model predicts GPUs it was not fitted on.

    python benchmarks/calibration_report.py [--markdown] [--rows]

Prints, from presets/calibration.yaml and the model and GPU presets:
- the global fit (compute efficiency per precision class, memory efficiency, overhead, fill,
  measured eager-stack factors, data-parallel scaling);
- the leave-one-GPU-out (LOGO) error per GPU and overall: each row predicted by a fit that
  never saw its GPU - the honest figure for a GPU nobody measured;
- the error on presets/validation.yaml, rows never used for fitting (Lambda, timm), overall and per
  GPU, precision and stack;
- the model forms compared on that held-out error (sum of compute and memory terms vs a
  roofline max, with and without a per-family factor): the reason for the form calc uses;
- the held-out error per software stack and per GPU family (architecture), before issue 41
  (benchmarks/results/step_validation_i41_before.json: commit e5c3b13 on today's rows) and after;
- predicted ResNet-50 and ViT-B/16 fp16 samples/s per GPU preset at batch 64.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import calc
from calc import calibrate, compute
from calc import fit as fit_module
from calc.cli import table as _table

RESULTS = Path(__file__).parent / "results"


def _gm(r: np.ndarray) -> str:  # type: ignore[type-arg]
    """Geometric-mean absolute error and the geometric-mean ratio predicted / measured."""
    return f"{np.exp(np.mean(np.abs(np.log(r)))) - 1:.1%} (x{np.exp(np.mean(np.log(r))):.2f})"


def before_after(v: pd.DataFrame) -> pd.DataFrame:
    """Held-out rows with their ratio predicted / measured before issue 41 and now, their stack and GPU family."""
    before = json.loads((RESULTS / "step_validation_i41_before.json").read_text())["cnn"]
    if len(before) != len(v):
        raise SystemExit("validation.yaml changed since step_validation_i41_before.json: rerun the before script")
    gpus = calc.gpus()
    return v.assign(
        before=[b["ratio"] for b in before],
        after=v.predicted_samples_per_s / v.measured_samples_per_s,
        family=[gpus[g].architecture or g for g in v.gpu],
    )


def _by(t: pd.DataFrame, key: str) -> pd.DataFrame:
    rows = [
        {key: k, "rows": len(g), "before": _gm(g.before.to_numpy()), "after": _gm(g.after.to_numpy())}
        for k, g in t.groupby(key, sort=True)
    ]
    rows.append({key: "all", "rows": len(t), "before": _gm(t.before.to_numpy()), "after": _gm(t.after.to_numpy())})
    return pd.DataFrame(rows)


def _max_form(theta: np.ndarray, r: fit_module._Rows, within: float) -> np.ndarray:  # type: ignore[type-arg]
    """The roofline-max alternative: per-example time = max(math, memory) instead of their sum."""
    p = np.exp(theta)
    e_c = p[:3][r.pclass.astype(int)] * np.where(r.transformer > 0, p[6], 1.0)
    c = compute.compute_time_per_example_s(r.flops, r.peak, np.minimum(e_c, 1.0))
    mem = compute.memory_time_per_example_s(r.traffic, r.bandwidth, min(p[3], 1.0))
    # an eager CNN's own per-byte time is added beside either form, as calc.compute.model_terms does
    per = np.maximum(c, mem) + r.stack_s_per_byte * r.traffic
    fixed = compute.fixed_time_s(r.step_traffic, r.bandwidth, min(p[3], 1.0), p[4], p[5], per)
    t = compute.model_step_time_s(r.batch, per, fixed, r.stack)
    rate: np.ndarray = r.batch / t * np.where(r.multi_gpu > 0, within, 1.0)  # type: ignore[type-arg]
    return rate


def _forms() -> pd.DataFrame:
    """In-sample, LOGO and held-out error of each candidate form."""
    out = []
    original = fit_module._predict
    for name, predict, per_family in (
        ("sum of terms (calc)", original, False),
        ("sum of terms + per-family factor", original, True),
        ("roofline max of terms", _max_form, False),
    ):
        fit_module._predict = predict  # type: ignore[assignment]
        try:
            full = calibrate.fit(per_family=per_family)
            ms = list(calc.catalog.measurements())
            pred = calibrate._predict_rows(full, ms)
            logo = np.empty(len(ms))
            for gpu in sorted({m.gpu for m in ms}):
                idx = [i for i, m in enumerate(ms) if m.gpu == gpu]
                logo[idx] = calibrate._predict_rows(
                    calibrate.fit(exclude_gpu=gpu, per_family=per_family), [ms[i] for i in idx]
                )
            measured = np.array([m.samples_per_s for m in ms])
            vs = list(calc.catalog.measurements("validation.yaml"))
            vpred = calibrate._predict_rows(full, vs)
            vmeas = np.array([m.samples_per_s for m in vs])
            out.append(
                {
                    "form": name,
                    "in_sample": calibrate.geomean_error(pred, measured),
                    "leave_one_gpu_out": calibrate.geomean_error(logo, measured),
                    "held_out_validation": calibrate.geomean_error(vpred, vmeas),
                }
            )
        finally:
            fit_module._predict = original
    return pd.DataFrame(out)


def main() -> None:
    fmt = "markdown" if "--markdown" in sys.argv else "table"
    f = calibrate.fitted()
    print("Global fit:", f.describe)
    print(f"  compute efficiency: {', '.join(f'{k} {v:.3f}' for k, v in f.compute_efficiency.items())}")
    print(
        f"  memory efficiency {f.memory_efficiency:.3f}, overhead {f.launch_overhead_s * 1e3:.2f} ms per step, "
        f"fill {f.fill_examples:.2f} examples"
    )
    print(f"  eager stack: {f.stack_source('eager')}")
    print(f"  scaling: {f.scaling_source}")
    t = calibrate.calibration()
    if "--rows" in sys.argv:
        cols = [
            "model",
            "gpu",
            "precision",
            "batch_size",
            "stack",
            "measured_samples_per_s",
            "predicted_samples_per_s",
            "logo_predicted_samples_per_s",
            "logo_error",
            "source",
        ]
        print(_table(t[cols].round(3), fmt))
    print("\nLeave-one-GPU-out error per GPU (geometric mean of |log(predicted/measured)|, as a %):")
    g = calibrate.per_gpu(t)
    print(
        _table(
            g.assign(in_sample_error=(g.in_sample_error * 100).round(1), logo_error=(g.logo_error * 100).round(1)), fmt
        )
    )
    s = calibrate.summary(t)
    print(
        f"\nOverall: {s['logo_geomean_error'] * 100:.1f} % leave-one-GPU-out over {s['rows']:.0f} rows "
        f"({s['in_sample_geomean_error'] * 100:.1f} % in-sample); mean of the per-GPU figures "
        f"{g['logo_error'].mean() * 100:.1f} %"
    )
    v = calibrate.validation()
    print(
        "Held-out validation.yaml: "
        f"{calibrate.geomean_error(v.predicted_samples_per_s, v.measured_samples_per_s) * 100:.1f} % "
        f"over {len(v)} rows on {v.gpu.nunique()} GPUs, never fitted"
    )
    vs = calibrate.validation_summary(v)
    print("\nHeld-out error per GPU, precision and stack (mean ratio predicted / measured; below 1 = slow):")
    print(_table(vs.assign(geomean_error=(vs.geomean_error * 100).round(1), mean_ratio=vs.mean_ratio.round(2)), fmt))
    ba = before_after(v)
    print("\nHeld-out error per software stack, before issue 41 (e5c3b13) and after (mean ratio in brackets):")
    print(_table(_by(ba, "stack"), fmt))
    print("\nHeld-out error per GPU family (architecture), before and after:")
    print(_table(_by(ba, "family"), fmt))
    print("\nModel forms compared (errors as fractions):")
    print(_table(_forms().round(3), fmt))
    print("\nPredicted fp16 samples/s per GPU at batch 64 (gpus without fp16 use bf16):")
    rows = []
    for name, gpu in calc.gpus().items():
        prec = "fp16" if "fp16" in gpu.peak_flops_per_s else "bf16" if "bf16" in gpu.peak_flops_per_s else None
        row = {"gpu": name}
        for model in ("resnet50", "vit_b16"):
            try:
                row[model] = round(calc.plan(gpu=name, model=model, precision=prec, batch_size=64).gpu_samples_per_s)
            except (calc.InputError, TypeError):
                row[model] = "n/a"
        rows.append(row)
    print(_table(pd.DataFrame(rows), fmt))


if __name__ == "__main__":
    main()
