"""BEFORE numbers for issue 21: the pre-architecture step-time model on the held-out LLM rows.

Run on the code before calc.transformer existed (commit 2cf14e3): a model can then only be stated
through the nearest LLM preset by parameter count (gpt_1b, gpt_7b, llama3_8b, llama3_70b,
llama3_405b, llama3_1t), with its forward FLOPs overridden by the Kaplan count the presets use,
(2 N + 2 l s h) x s per sequence, its state and activations zeroed so that only the step time is
compared, the micro-batch as the batch, and the GPUs of the run as one data-parallel job (no
tensor or pipeline split, no bubble, no recompute could be stated). Writes
benchmarks/results/llm_validation_before.json.

    PYTHONPATH=. python benchmarks/llm_validation_before.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import yaml

import calc
from calc import catalog

PRESETS = ("gpt_1b", "gpt_7b", "llama3_8b", "llama3_70b", "llama3_405b", "llama3_1t")


def measured_tokens_per_s_per_gpu(r: dict) -> float:
    """The published figure as tokens/s per GPU (see presets/validation.yaml ``llm``)."""
    s, h, n_layers, v = r["seq_len"], r["hidden"], r["layers"], r["vocab"]
    if "tokens_per_s_per_gpu" in r:
        return float(r["tokens_per_s_per_gpu"])
    if "iteration_time_s" in r:
        return r["global_batch"] * s / (r["iteration_time_s"] * r["gpus"])
    flops_per_seq = 96 * s * n_layers * h**2 * (1 + s / (6 * h) + v / (16 * n_layers * h))  # Narayanan eq. (3), B = 1
    return r["tflops_per_gpu"] * 1e12 / flops_per_seq * s


def main() -> None:
    rows = yaml.safe_load((catalog.presets_dir() / "validation.yaml").read_text())["llm"]
    models = catalog.models()
    out = []
    for r in rows:
        n = float(r["params"])
        preset = min(PRESETS, key=lambda m: abs(math.log(models[m].params / n)))
        s = r["seq_len"]
        fwd = (2 * n + 2 * r["layers"] * s * r["hidden"]) * s
        p = calc.plan(
            model=preset,
            gpu=r["gpu"],
            precision=r["precision"],
            optimizer="adamw",
            batch_size=r["micro_batch"],
            forward_flops_per_example=fwd,
            model_state_bytes=0,
            activation_bytes_per_example=1,
            gpus_per_job=r["gpus"],
        )
        pred = p.gpu_samples_per_s * s
        meas = measured_tokens_per_s_per_gpu(r)
        out.append({"name": r["name"], "preset": preset, "predicted": pred, "measured": meas, "ratio": pred / meas})
    path = Path(__file__).parent / "results" / "llm_validation_before.json"
    path.write_text(json.dumps({"code": "commit 2cf14e3 (before calc.transformer)", "rows": out}, indent=1) + "\n")
    for o in out:
        print(
            f"{o['name']:40s} {o['preset']:12s} pred {o['predicted']:10.1f} meas {o['measured']:10.1f}",
            f"x{o['ratio']:.2f}",
        )


if __name__ == "__main__":
    main()
