"""Before/after error of the step-time model on the held-out LLM rows, per size band, precision,
layout, GPU generation and source (issues 21 and 29), the share of held-out configurations that
fit, and the mixture-of-experts row.

BEFORE (issue 21) = benchmarks/results/llm_validation_before.json (the preset-only model of commit
2cf14e3, benchmarks/llm_validation_before.py); BEFORE (issue 29) =
benchmarks/results/llm_validation_i29_before.json (commit c0451f2, calc.calibrate.llm_validation()
run there); BEFORE (generation) = benchmarks/results/llm_validation_generation_before.json (commit
ea6b5d6: one A100 layer efficiency on every GPU generation); BEFORE (i41) =
benchmarks/results/step_validation_i41_before.json (commit e5c3b13 on today's rows,
benchmarks/step_validation_before.py); AFTER = calc.calibrate.llm_validation() now.
No row is fitted on (validation.yaml), so
the per-source rows are each a leave-one-source-out figure.

    PYTHONPATH=. python benchmarks/llm_validation_report.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from calc import calibrate

RESULTS = Path(__file__).parent / "results"


def _ratios(name: str) -> dict[str, float]:
    """Ratios predicted / measured per row name from a results file (NaN for rows it lacks)."""
    return {r["name"]: r["ratio"] for r in json.loads((RESULTS / name).read_text())["rows"]}


def gm(r: np.ndarray) -> str:
    """Geometric-mean absolute error and the geometric-mean ratio predicted / measured."""
    r = r[np.isfinite(r)]
    if not len(r):
        return "n/a"
    return f"{np.exp(np.mean(np.abs(np.log(r)))) - 1:.0%} (x{np.exp(np.mean(np.log(r))):.2f})"


def _table(t: pd.DataFrame, by: list[str]) -> None:
    print(f"| {' | '.join(by)} | rows | before (i21) | before (i29) | before (generation) | before (i41) | after |")
    print("|" + "---|" * (len(by) + 6))
    for keys, g in t.groupby(by, sort=True):
        cells = keys if isinstance(keys, tuple) else (keys,)
        print(
            f"| {' | '.join(str(c) for c in cells)} | {len(g)} | {gm(g.i21.to_numpy())} |",
            f"{gm(g.i29.to_numpy())} | {gm(g.gen.to_numpy())} | {gm(g.i41.to_numpy())} | {gm(g.after.to_numpy())} |",
        )
    for name, g in (("all 16-bit", t[t.precision != "fp8"]), ("all", t)):
        pad = " | " * (len(by) - 1)
        print(
            f"| {name}{pad} | {len(g)} | {gm(g.i21.to_numpy())} | {gm(g.i29.to_numpy())} | {gm(g.gen.to_numpy())} |"
            f" {gm(g.i41.to_numpy())} | {gm(g.after.to_numpy())} |"
        )
    print()


def main() -> None:
    t = calibrate.llm_validation()
    i21, i29 = _ratios("llm_validation_before.json"), _ratios("llm_validation_i29_before.json")
    gen = _ratios("llm_validation_generation_before.json")
    # Rows added later (V100 in issue 29, Megatron-Bridge with the per-generation efficiency) have no
    # figure in the older files: NaN, left out of that column's means.
    t["i21"] = [i21.get(n, np.nan) for n in t["name"]]
    t["i29"] = [i29.get(n, np.nan) for n in t["name"]]
    t["gen"] = [gen.get(n, np.nan) for n in t["name"]]
    i41 = {r["name"]: r["ratio"] for r in json.loads((RESULTS / "step_validation_i41_before.json").read_text())["llm"]}
    t["i41"] = [i41.get(n, np.nan) for n in t["name"]]
    t["after"] = t["predicted_tokens_per_s_per_gpu"] / t["measured_tokens_per_s_per_gpu"]
    t["generation"] = t["gpu"].map(lambda g: g.split("-")[0])
    t["source_family"] = t["name"].map(
        lambda n: next((f for f in ("llm-foundry", "megatron-bridge") if n.startswith(f)), n.split("-")[0])
    )
    _table(t, ["band", "precision", "layout"])
    _table(t, ["generation", "precision"])
    _table(t, ["source_family"])
    f = calibrate.llm_fit()
    print(f"Held-out configurations that fit: {int(f.fits.sum())} of {len(f)} ({f.fits.mean():.0%})")
    before = json.loads((RESULTS / "step_validation_i41_before.json").read_text())["fits"]
    refused = [r["name"] for r in before if not r["fits"]]
    print(f"Refused before issue 41 (e5c3b13, the same rows): {len(refused)} of {len(before)}: {', '.join(refused)}")
    print(f"Refused now: {len(f) - int(f.fits.sum())}: {', '.join(f[~f.fits].name) or 'none'}")
    for r in calibrate.moe_validation().itertuples():
        print(
            f"MoE {r.name}: {r.predicted_tokens_per_s_per_gpu:,.0f} tokens/s per GPU predicted against "
            f"{r.measured_tokens_per_s_per_gpu:,.0f} published (x{1 + r.error:.2f}, x{gen[r.name]:.2f} before); "
            "parameters from the config "
            f"{r.derived_total_params / 1e9:.1f} B total ({r.published_total_params / 1e9:.0f} B published), "
            f"{r.derived_active_params / 1e9:.1f} B active ({r.published_active_params / 1e9:.0f} B); checkpoint "
            f"{r.checkpoint_bytes / 1e12:.2f} TB"
        )


if __name__ == "__main__":
    main()
