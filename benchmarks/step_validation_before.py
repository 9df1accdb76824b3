"""BEFORE numbers for issue 41: the step-time model of commit e5c3b13 on every held-out row.

Run on the code before issue 41 (commit e5c3b13) with today's presets/validation.yaml copied in:
the CNN rows (``measurements``) planned at their GPU, precision and batch with the stacks that code
had (``tuned``, its default, for rows labelled ngc, optimized or compiled; ``eager`` for eager), and
the LLM rows (``llm`` and ``fits``) planned as calc.calibrate.llm_layout planned them then, with the
inputs that code accepted (``stack`` and anything newer dropped; the GPU memory and bandwidth a
row gives kept: they were inputs then; data_parallel_framework nemo as megatron_overlap, its overlap). A
row the code refused is recorded with its message.
Writes benchmarks/results/step_validation_i41_before.json.

    git archive e5c3b13 | tar -x -C /tmp/before && cp presets/validation.yaml /tmp/before/presets/
    cd /tmp/before && PYTHONPATH=. python /path/to/benchmarks/step_validation_before.py OUT.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

import yaml

import calc
from calc import calibrate, catalog

OLD_STACK = {"tuned": "tuned", "ngc": "tuned", "optimized": "tuned", "compiled": "tuned", "eager": "eager"}
"""The stack each row is planned with on the old code (it knew only tuned and eager)."""

NEWER_KEYS = ("stack", "gpu_memory_bytes", "memory_bandwidth_bytes_per_s")


def cnn_key(r: dict[str, Any]) -> str:
    """A CNN row's identity: model, GPU, precision, batch, stack and the first words of its source."""
    return f"{r['model']}|{r['gpu']}|{r['precision']}|{r['batch_size']}|{r.get('stack', 'tuned')}|{r['source'][:60]}"


def _llm_inputs(r: dict[str, Any]) -> dict[str, Any]:
    # "nemo" is newer too: the old code ran Megatron's overlap as megatron_overlap, and had no framework default
    # for the state's sharding (the reason these rows were refused).
    old = {k: v for k, v in r.items() if k not in NEWER_KEYS}
    if old.get("data_parallel_framework") == "nemo":
        old["data_parallel_framework"] = "megatron_overlap"
    kw = calibrate.llm_layout(old)
    for k in NEWER_KEYS[1:]:
        if k in r:
            kw[k] = r[k]
    return kw


def main() -> None:
    raw = yaml.safe_load((catalog.presets_dir() / "validation.yaml").read_text())
    cnn = []
    for r in raw["measurements"]:
        p = calc.plan(
            model=r["model"],
            gpu=r["gpu"],
            precision=r["precision"],
            batch_size=int(r["batch_size"]),
            stack=OLD_STACK[r.get("stack", "tuned")],
        )
        # calibrate._predict_rows' convention: a multi-GPU row's per-GPU rate carries the within-node scaling
        cnn.append({"key": cnn_key(r), "ratio": p.gpu_samples_per_s / float(r["samples_per_s"])})
    llm = []
    for r in raw["llm"]:
        kw = _llm_inputs(r)
        p = calc.plan(**kw, reserved_bytes=0, model_state_bytes=0, activation_bytes_per_example=1)
        measured = calibrate._llm_measured(r)
        llm.append({"name": r["name"], "ratio": p.gpu_samples_per_s * r["seq_len"] / measured})
    fits = []
    for r in raw["llm"] + raw.get("fits", []):
        try:
            calc.plan(**_llm_inputs(r))
            fits.append({"name": r["name"], "fits": True, "message": ""})
        except (calc.DoesNotFitError, calc.InputError) as e:
            fits.append({"name": r["name"], "fits": False, "message": str(e)})
    out = {
        "commit": "e5c3b13 (git archive of it, today's validation.yaml copied in)",
        "note": "step-time model before issue 41 on today's validation.yaml (benchmarks/step_validation_before.py)",
        "cnn": cnn,
        "llm": llm,
        "fits": fits,
    }
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
