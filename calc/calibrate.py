"""Calibration of the step-time model and its validation on rows it was not fitted on.

The fit lives in calc.fit (below calc.resolve, which reads it); this module plans held-out rows
(above calc.plan) and re-exports the fit's names, so ``calc.calibrate.fitted`` still works.


What is fitted, on which rows, and how, is written once in calc.fit's docstring.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from calc import catalog, transformer
from calc.errors import DoesNotFitError
from calc.fit import (
    CLASSES,
    DEFAULT_SCALING,
    FP8_SPEEDUP_RANGE,
    PARAMS,
    START,
    TRANSFORMER_LAYER,
    TRANSFORMER_LAYER_SOURCE,
    Fit,
    GemmFit,
    GemmRow,
    _predict_rows,
    eager_factors,
    eager_seconds_per_byte,
    fit,
    fitted,
    fp8_gemm_inputs,
    fp8_quantization_bytes,
    fp8_source,
    gemm_fit,
    gemm_predicted_tflops,
    gemm_rows,
    geomean_error,
    transformer_eager_factors,
    transformer_efficiency,
)
from calc.plan import plan
from calc.resolve import resolve
from calc.scenario import Scenario
from calc.stages import evaluate

__all__ = [
    "CLASSES",
    "DEFAULT_SCALING",
    "FP8_SPEEDUP_RANGE",
    "PARAMS",
    "START",
    "TRANSFORMER_LAYER",
    "TRANSFORMER_LAYER_SOURCE",
    "Fit",
    "GemmFit",
    "GemmRow",
    "calibration",
    "eager_factors",
    "eager_seconds_per_byte",
    "fit",
    "fitted",
    "fp8_gemm_inputs",
    "fp8_quantization_bytes",
    "fp8_source",
    "fp8_speedup_gpt175b",
    "gemm_fit",
    "gemm_predicted_tflops",
    "gemm_rows",
    "geomean_error",
    "llm_fit",
    "llm_layout",
    "llm_rows",
    "llm_summary",
    "llm_validation",
    "moe_validation",
    "per_gpu",
    "size_band",
    "summary",
    "transformer_eager_factors",
    "transformer_efficiency",
    "validation",
    "validation_summary",
]

Array = npt.NDArray[np.float64]


@functools.cache
def calibration() -> pd.DataFrame:
    """Predicted vs measured per-GPU throughput for every calibration row.

    Columns: model, gpu, precision, batch_size, stack, measured_samples_per_s,
    predicted_samples_per_s (the global fit), error (predicted/measured - 1),
    logo_predicted_samples_per_s and logo_error (fitted without any row of that GPU), source.
    ``attrs["llm_validation"]`` holds the held-out LLM error per size band, precision and
    layout (``llm_summary()``; the rows themselves: ``llm_validation()``).
    """
    ms = list(catalog.measurements())
    full = fitted()
    predicted = _predict_rows(full, ms)
    logo = np.empty(len(ms))
    for gpu in sorted({m.gpu for m in ms}):
        idx = [i for i, m in enumerate(ms) if m.gpu == gpu]
        f = fit(exclude_gpu=gpu)
        logo[idx] = _predict_rows(f, [ms[i] for i in idx])
    measured = np.array([m.samples_per_s for m in ms])
    t = _frame(ms, predicted)
    t.insert(len(t.columns) - 1, "logo_predicted_samples_per_s", logo)
    t.insert(len(t.columns) - 1, "logo_error", logo / measured - 1)
    t.attrs["llm_validation"] = llm_summary()
    return t


def _frame(ms: Sequence[catalog.Measurement], predicted: Array) -> pd.DataFrame:
    """Rows with their measured and predicted per-GPU samples/s and the relative error."""
    measured = np.array([m.samples_per_s for m in ms])
    return pd.DataFrame(
        {
            "model": [m.model for m in ms],
            "gpu": [m.gpu for m in ms],
            "precision": [m.precision for m in ms],
            "batch_size": [m.batch_size for m in ms],
            "stack": [m.stack for m in ms],
            "measured_samples_per_s": measured,
            "predicted_samples_per_s": predicted,
            "error": predicted / measured - 1,
            "source": [m.source for m in ms],
        }
    )


def validation() -> pd.DataFrame:
    """Predictions for presets/validation.yaml: published rows never used for fitting.

    Same columns as ``calibration()`` without the leave-one-out ones; empty if the file is absent.
    """
    if not (catalog.presets_dir() / "validation.yaml").is_file():
        return pd.DataFrame()
    ms = list(catalog.measurements("validation.yaml"))
    return _frame(ms, _predict_rows(fitted(), ms))


def validation_summary(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Held-out error of ``validation()`` per GPU, precision and stack: rows, geometric-mean error and
    mean ratio predicted / measured (below 1: the model is slow)."""
    t = validation() if table is None else table
    rows = []
    for (gpu, precision, stack), g in t.groupby(["gpu", "precision", "stack"], sort=True):
        ratio = g["predicted_samples_per_s"] / g["measured_samples_per_s"]
        rows.append(
            {
                "gpu": gpu,
                "precision": precision,
                "stack": stack,
                "rows": len(g),
                "geomean_error": geomean_error(g["predicted_samples_per_s"], g["measured_samples_per_s"]),
                "mean_ratio": float(np.exp(np.mean(np.log(ratio)))),
            }
        )
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame | None = None) -> dict[str, float]:
    """Overall geometric-mean errors: in-sample and leave-one-GPU-out (0 = exact)."""
    t = calibration() if table is None else table
    return {
        "rows": float(len(t)),
        "gpus": float(t["gpu"].nunique()),
        "in_sample_geomean_error": geomean_error(t["predicted_samples_per_s"], t["measured_samples_per_s"]),
        "logo_geomean_error": geomean_error(t["logo_predicted_samples_per_s"], t["measured_samples_per_s"]),
    }


def per_gpu(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Leave-one-GPU-out geometric-mean error per GPU (rows, in-sample, LOGO)."""
    t = calibration() if table is None else table
    rows = []
    for gpu, g in t.groupby("gpu", sort=True):
        rows.append(
            {
                "gpu": gpu,
                "rows": len(g),
                "in_sample_error": geomean_error(g["predicted_samples_per_s"], g["measured_samples_per_s"]),
                "logo_error": geomean_error(g["logo_predicted_samples_per_s"], g["measured_samples_per_s"]),
            }
        )
    return pd.DataFrame(rows)


def _llm_measured(r: dict[str, float]) -> float:
    """A held-out LLM row's published figure as tokens/s per GPU (validation.yaml ``llm``)."""
    s, h, layers, v = r["seq_len"], r["hidden"], r["layers"], r["vocab"]
    if "tokens_per_s_per_gpu" in r:
        return float(r["tokens_per_s_per_gpu"])
    if "iteration_time_s" in r:
        return float(r["global_batch"] * s / (r["iteration_time_s"] * r["gpus"]))
    # Narayanan et al. 2021 eq. (3) per sequence (B = 1): how the paper turned time into FLOP/s.
    flops_per_seq = 96 * s * layers * h**2 * (1 + s / (6 * h) + v / (16 * layers * h))
    return float(r["tflops_per_gpu"] * 1e12 / flops_per_seq * s)


def size_band(params: float) -> str:
    """Size band of a model: ``<5B``, ``5-20B`` or ``>20B`` parameters."""
    return "<5B" if params < 5e9 else "5-20B" if params <= 20e9 else ">20B"


def llm_validation() -> pd.DataFrame:
    """Predicted vs published tokens/s per GPU on the held-out LLM rows (validation.yaml ``llm``).

    Each row is planned as ``model="transformer"`` with its architecture and layout. Columns:
    name, band, precision, layout (``none`` = data parallel / FSDP only, ``TP/PP`` otherwise),
    measured and predicted tokens/s per GPU, error (predicted/measured - 1), source.
    """
    out = []
    for r in llm_rows("llm"):
        p = plan(**llm_layout(r), reserved_bytes=0, model_state_bytes=0, activation_bytes_per_example=1)
        measured = _llm_measured(r)
        predicted = p.gpu_samples_per_s * r["seq_len"]
        layout = "none" if r.get("tensor_parallel", 1) * r.get("pipeline_parallel", 1) == 1 else "TP/PP"
        out.append(
            {
                "name": r["name"],
                "band": size_band(float(r["params"])),
                "precision": r["precision"],
                "layout": layout,
                "gpu": r["gpu"],
                "measured_tokens_per_s_per_gpu": measured,
                "predicted_tokens_per_s_per_gpu": predicted,
                "error": predicted / measured - 1,
                "source": r["source"],
            }
        )
    return pd.DataFrame(out)


def llm_rows(section: str) -> list[dict[str, Any]]:
    """The rows of one section of presets/validation.yaml (``llm`` or ``fits``)."""
    raw = catalog.load_yaml(catalog.presets_dir() / "validation.yaml")
    rows = raw.get(section, []) if isinstance(raw, dict) else []
    return [r for r in rows if isinstance(r, dict)]


_LAYOUT_KEYS = (
    "tensor_parallel",
    "pipeline_parallel",
    "context_parallel",
    "virtual_pipeline_stages",
    "state_shards",
    "zero_stage",
    "shard_group",
    "data_parallel_overlap",
    "data_parallel_framework",
    "kernels",
    "activation_checkpointing",
    "gpus_per_node",
    "network_bytes_per_s_per_gpu",
    "stack",
    "gpu_memory_bytes",
    "memory_bandwidth_bytes_per_s",
)


def llm_layout(r: dict[str, Any]) -> dict[str, Any]:
    """A held-out LLM row as plan() inputs: its architecture, precision and parallel layout."""
    arch = {k: int(r[k]) for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len")}
    return {
        "model": "transformer",
        "gpu": r["gpu"],
        "precision": r["precision"],
        "optimizer": "adamw",
        "params": float(r["params"]),
        **arch,
        "mlp": "gated" if r["gated"] else "plain",
        "batch_size": int(r["micro_batch"]),
        "gradient_accumulation": int(r["gradient_accumulation"]),
        "gpus_per_job": int(r["gpus"]),
        "gpus_per_node": 8,
        **{k: r[k] for k in _LAYOUT_KEYS if k in r},
    }


def llm_fit() -> pd.DataFrame:
    """Does each held-out LLM configuration fit in its GPUs' memory as planned (issue 29)?

    Every row of validation.yaml ``llm`` and ``fits`` (published layouts, some with a published
    memory reading) planned with the memory model on. Columns: name, fits (bool), state_gib,
    activation_gib (per micro-batch sequence), used_gib, gpu_gib, recompute (the mode used),
    measured_gib (NaN where none is published).
    """
    out = []
    for r in llm_rows("llm") + llm_rows("fits"):
        gib = 2.0**30
        v: Mapping[str, Any]
        try:
            p = plan(**llm_layout(r))
            v, fits = p.values, True
        except DoesNotFitError:
            v, fits = evaluate(resolve(Scenario(**llm_layout(r))).values), False
        out.append(
            {
                "name": r["name"],
                "fits": fits,
                "state_gib": float(v["model_state_bytes"]) / gib,
                "activation_gib": float(v["activation_bytes_per_example"]) / gib,
                "used_gib": float(v["memory_used_bytes"]) / gib,
                "gpu_gib": float(v["gpu_memory_bytes"]) / gib,
                "recompute": transformer.CHECKPOINTING[int(float(v["checkpointing_used"]))],
                "measured_gib": float(r.get("memory_gib", math.nan)),
            }
        )
    return pd.DataFrame(out)


def moe_validation() -> pd.DataFrame:
    """The held-out mixture-of-experts rows (validation.yaml ``moe``): step time and size.

    Each row is planned with its preset and layout. Columns: name, measured and predicted tokens/s
    per GPU, error, the parameters derived from the architecture alone (total and active, against
    the published counts), the checkpoint bytes the plan writes, source.
    """
    out = []
    for r in llm_rows("moe"):
        kw = {
            k: r[k]
            for k in (
                "model",
                "gpu",
                "precision",
                "pipeline_parallel",
                "expert_parallel",
                "zero_stage",
                "gpu_link_bytes_per_s",
                "network_bytes_per_s_per_gpu",
            )
            if k in r
        }
        p = plan(
            **kw,
            optimizer="adamw",
            gpus_per_job=int(r["gpus"]),
            gpus_per_node=8,
            batch_size=int(r["micro_batch"]),
            gradient_accumulation=int(r["gradient_accumulation"]),
        )
        a = transformer.architectures()[r["model"]]
        active, total = transformer.moe_ffn(
            a.layers,
            a.dense_layers,
            a.ffn_hidden,
            a.expert_ffn_hidden,
            a.experts,
            a.experts_active,
            a.shared_experts,
            float(a.gated),
        )
        count = [
            float(transformer.params_count(a.layers, a.hidden, a.heads, a.kv_heads, f, a.vocab, float(a.gated)))
            for f in (total, active)
        ]
        predicted = p.gpu_samples_per_s * p.inputs["seq_len"]
        out.append(
            {
                "name": r["name"],
                "measured_tokens_per_s_per_gpu": float(r["tokens_per_s_per_gpu"]),
                "predicted_tokens_per_s_per_gpu": predicted,
                "error": predicted / float(r["tokens_per_s_per_gpu"]) - 1,
                "model_parallel_comm_share": p.tensor_parallel_comm_s / p.step_time_s,
                "derived_total_params": count[0],
                "published_total_params": float(r["total_params"]),
                "derived_active_params": count[1],
                "published_active_params": float(r["active_params"]),
                "checkpoint_bytes": p.checkpoint_bytes,
                "source": r["source"],
            }
        )
    return pd.DataFrame(out)


def llm_summary(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Geometric-mean error of ``llm_validation()`` per size band, precision and layout."""
    t = llm_validation() if table is None else table
    rows = []
    for keys, g in t.groupby(["band", "precision", "layout"], sort=True):
        band, precision, layout = keys
        rows.append(
            {
                "band": band,
                "precision": precision,
                "layout": layout,
                "rows": len(g),
                "geomean_error": geomean_error(g["predicted_tokens_per_s_per_gpu"], g["measured_tokens_per_s_per_gpu"]),
                "mean_ratio": float(
                    np.exp(np.mean(np.log(g["predicted_tokens_per_s_per_gpu"] / g["measured_tokens_per_s_per_gpu"])))
                ),
            }
        )
    return pd.DataFrame(rows)


FP8_SPEEDUP = math.sqrt(1.75 / 1.37 * 1.64 / 1.17)
"""Transformer Engine fp8 training speed over bf16, GPT-175B on H100 [1]: Peng et al. 2023,
"FP8-LM: Training FP8 Large Language Models" (arXiv:2310.18313), abstract. One version reports
their framework 75 % faster than bf16 Megatron-LM and 37 % faster than Transformer Engine
(TE = 1.75 / 1.37 = 1.28x bf16), another 64 % and 17 % (TE = 1.64 / 1.17 = 1.40x); the
geometric mean, 1.34x. No longer fitted on: a cross-check of the GEMM-based fp8 model
(``fp8_speedup_gpt175b``, tests/test_transformer.py)."""


def fp8_speedup_gpt175b() -> float:
    """The model's fp8 / bf16 training speed for GPT-175B on H100 [1] (FP8-LM's 1.28-1.40x).

    GPT-175B as FP8-LM trains it: 96 layers x 12288, 96 heads, s 2048, TP 8, PP 8, 64
    micro-batches of 1, selective recompute, 64 GPUs.
    """
    common: dict[str, Any] = {
        "model": "transformer",
        "gpu": "H100-SXM",
        "optimizer": "adamw",
        "layers": 96,
        "hidden": 12288,
        "heads": 96,
        "kv_heads": 96,
        "ffn_hidden": 4 * 12288,
        "vocab": 51200,
        "seq_len": 2048,
        "mlp": "plain",
        "batch_size": 1,
        "tensor_parallel": 8,
        "pipeline_parallel": 8,
        "gradient_accumulation": 64,
        "activation_checkpointing": "selective",
        "gpus_per_job": 64,
        "reserved_bytes": 0,
        "model_state_bytes": 0,
        "activation_bytes_per_example": 1,
    }
    bf16 = plan(precision="bf16", **common).model_step_time_s
    fp8 = plan(precision="fp8", **common).model_step_time_s
    return float(bf16 / fp8)
