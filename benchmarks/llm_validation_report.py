"""Before/after error of the step-time model on the held-out LLM rows, per size band, precision
and layout (issue 21). BEFORE = benchmarks/results/llm_validation_before.json (the preset-only
model of commit 2cf14e3, benchmarks/llm_validation_before.py); AFTER = calc.calibrate.llm_validation().

    PYTHONPATH=. python benchmarks/llm_validation_report.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from calc import calibrate


def main() -> None:
    before = {
        r["name"]: r["ratio"]
        for r in json.loads((Path(__file__).parent / "results" / "llm_validation_before.json").read_text())["rows"]
    }
    t = calibrate.llm_validation()
    t["before_ratio"] = [before[n] for n in t["name"]]
    t["after_ratio"] = t["predicted_tokens_per_s_per_gpu"] / t["measured_tokens_per_s_per_gpu"]

    def gm(r: np.ndarray) -> str:
        return f"{np.exp(np.mean(np.abs(np.log(r)))) - 1:.0%} (x{np.exp(np.mean(np.log(r))):.2f})"

    print("| band | precision | layout | rows | before | after |")
    print("|---|---|---|---|---|---|")
    for (band, prec, layout), g in t.groupby(["band", "precision", "layout"], sort=True):
        print(
            f"| {band} | {prec} | {layout} | {len(g)} | {gm(g.before_ratio.to_numpy())} |",
            f"{gm(g.after_ratio.to_numpy())} |",
        )
    for name, g in (("all 16-bit", t[t.precision != "fp8"]), ("all", t)):
        print(f"| {name} | | | {len(g)} | {gm(g.before_ratio.to_numpy())} | {gm(g.after_ratio.to_numpy())} |")


if __name__ == "__main__":
    main()
