"""Calibration report: predicted vs measured per-GPU training throughput, row by row.

    python benchmarks/calibration_report.py [--markdown]

Every number comes from presets/calibration.yaml and the model and GPU presets through
calc.calibration(): the implied efficiency of each measurement (samples/s x 3 x forward FLOPs
/ peak), the default efficiency calc derives (geometric mean per model and precision class,
rows on the same GPU preferred), its prediction, and the leave-one-out prediction with that
row removed - the honest accuracy figure.
"""

from __future__ import annotations

import sys

from calc.calibrate import calibration, summary
from calc.cli import _table


def main() -> None:
    t = calibration()
    cols = [
        "model",
        "gpu",
        "precision",
        "batch_size",
        "measured_samples_per_s",
        "implied_efficiency",
        "predicted_samples_per_s",
        "error",
        "loo_predicted_samples_per_s",
        "loo_error",
        "source",
    ]
    print(_table(t[cols].round(3), "markdown" if "--markdown" in sys.argv else "table"))
    s = summary(t)
    print(
        f"\ngeometric-mean error factor: {s['geomean_error_factor']:.3f} in-sample ({s['rows']:.0f} rows), "
        f"{s['loo_geomean_error_factor']:.3f} leave-one-out ({s['loo_rows']:.0f} rows)"
    )


if __name__ == "__main__":
    main()
