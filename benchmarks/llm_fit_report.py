"""Which held-out LLM configurations fit in GPU memory as planned (issue 29, item 1).

Each row of presets/validation.yaml ``llm`` (and ``fits``: published layouts with no throughput)
is planned with its architecture, layout and micro-batch, the memory model left on (no
``model_state_bytes`` / ``activation_bytes_per_example`` override, unlike the step-time report).
Prints each row's state, activations and whether it fits, then the share that fits.

    PYTHONPATH=. python benchmarks/llm_fit_report.py
"""

from __future__ import annotations

from calc import calibrate


def main() -> None:
    t = calibrate.llm_fit()
    print("| row | state GiB | activations GiB | recompute | used GiB | published GiB | GPU GiB | fits |")
    print("|---|---|---|---|---|---|---|---|")
    for r in t.itertuples():
        published = "" if r.measured_gib != r.measured_gib else f"{r.measured_gib:.1f}"
        print(
            f"| {r.name} | {r.state_gib:.1f} | {r.activation_gib:.1f} | {r.recompute} | {r.used_gib:.1f} |"
            f" {published} | {r.gpu_gib:.1f} | {'yes' if r.fits else 'NO'} |"
        )
    print(f"\n{int(t.fits.sum())} of {len(t)} configurations fit ({t.fits.mean():.0%})")


if __name__ == "__main__":
    main()
