"""The step-time model's fit: a few global efficiencies fitted on measured throughput (below resolve).

The fit itself (``fitted``, ``fit``, the GEMM roofline and the fp8 figures a plan reads) lives here,
under calc.resolve; its validation on held-out rows (``calibration``, ``validation``, the LLM rows,
which plan scenarios) lives in calc.calibrate, above calc.plan.


The model (calc.compute) predicts one GPU's samples/s from physical figures: training FLOPs
and GPU-memory traffic per example, per-step traffic, the GPU's dense peak and memory
bandwidth. What it cannot know from datasheets is the share of peak real kernels reach. Those
shares are fitted ONCE, globally, on every row of presets/calibration.yaml:

    e_c[fp32], e_c[tf32], e_c[mixed]    compute efficiency per precision class
    e_m                                 memory efficiency
    e_dw                                share of the bandwidth depthwise convolutions reach (the
                                        rows of models with depthwise traffic inform it: EfficientNet-B0)
    k_feed                              FLOPs per byte shared memory feeds a tensor-core convolution
                                        (e_c[tf32] and e_c[mixed] held at 1: PINNED)
    t_launch, n_fill                    per-step overhead [s], examples' worth of fill time
    k_transformer                       transformer compute efficiency relative to CNNs (only
                                        with ``fit(per_family=True)``: it lowered in-sample and
                                        leave-one-GPU-out error slightly but raised the error on
                                        held-out validation.yaml, so the default fit leaves it out)

never per (model, GPU). The eager stack's cost is measured, not fitted: for a CNN from paired rows
(same model, GPU, precision and batch, run in plain eager NCHW and in the tuned NHWC layout), an
added time per byte of an example's traffic (``eager_seconds_per_byte``); for a transformer the
geometric-mean step-time ratio of published eager / torch.compile pairs of the same job
(``transformer_eager_factors``). The form was chosen on held-out error: a sum of
the compute and memory terms gave 13.2 % on validation.yaml where a roofline max of the two gave
29.9 % (benchmarks/calibration_report.py prints the comparison). The fit minimises the mean squared
log error (Nelder-Mead in log space). ``calibration()`` reports each row's in-sample
prediction and its leave-one-GPU-out prediction (the fit rerun without any row of that
GPU): the honest error for a GPU nobody measured. ``validation()`` predicts
presets/validation.yaml, rows never used for fitting.

Data-parallel scaling: within-node and across-node efficiencies are the geometric means of
published multi-GPU tables (calibration.yaml ``scaling``): total rate at N GPUs / (N x one GPU).

Transformers by their architecture are not fitted here: their efficiency is measured on one A100
layer (``transformer_efficiency``) and carried to each GPU by published kernel measurements, its
best GEMM share of peak and its attention kernel's (presets/gemm.yaml ``peak_share`` and
``attention``; ``generation_efficiencies``, calc.efficiency); fp8 by the GEMM roofline
(``gemm_fit``) at that GPU's shares.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from calc import catalog, compute
from calc import efficiency as eff
from calc import transformer as tr
from calc.errors import PresetError

Array = npt.NDArray[np.float64]

CLASSES = ("fp32", "tf32", "mixed")
PARAMS = ("e_fp32", "e_tf32", "e_mixed", "e_mem", "t_launch", "n_fill", "k_transformer", "e_dw", "k_feed")
"""The fitted parameters, in the order of the vector ``theta`` (log space) and ``START``."""
PINNED = (1, 2)
"""Parameters held at 1 (log 0): the tensor-core classes' compute efficiency. A CNN's tensor-core
convolutions are bounded by what shared memory feeds (``k_feed``, calc.compute.tensor_convolution_share),
a GEMM's by the peak; a free share of the peak on top fitted the Hopper-heavy rows at 0.44 and made the
GeForce cards, whose half-rate tensor cores a convolution does fill, 25-40 % slow on held-out rows."""
START = np.log([0.5, 1.0, 1.0, 0.6, 2e-3, 4.0, 1.0, 0.3, 30.0])
"""Starting point of the fit (log space): plausible shares of peak, 2 ms, 4 examples."""

DEFAULT_SCALING = (0.95, 0.95)
"""Within-node and across-node data-parallel efficiency when calibration.yaml has no table:
an assumption, stated in the plan's sources."""


TRANSFORMER_LAYER = {
    "hidden": 6144,
    "heads": 64,
    "seq_len": 2048,
    "micro_batch": 4,
    "tensor_parallel": 8,
    "time_s": 19.6e-3,
}
"""One measured transformer layer: Korthikanti et al. 2022 (arXiv:2205.05198) Table 4, the 22B
model's layer (Table 3: 64 heads, hidden 6144, TP 8, micro-batch 4, s 2048), forward 7.7 ms +
backward 11.9 ms = 19.6 ms, no recompute, no sequence parallelism, A100 80GB, mixed precision."""

TRANSFORMER_LAYER_SOURCE = (
    "calibrated on one measured layer, Korthikanti et al. 2022 Table 4 (22B: h 6144, 64 heads, s 2048,"
    " micro-batch 4, TP 8, A100 80GB fp16, forward + backward 19.6 ms): 19.6 ms less the fused memory"
    " traffic and the TP all-reduces over NVLink (300 GB/s) leaves the math time"
)


def transformer_efficiency(memory_efficiency: float) -> float:
    """Share of the A100's 312 TFLOP/s fp16 peak a transformer layer's math reaches [0-1].

    ``e = F / (P x (t_layer - traffic / (W x e_m) - TP bytes / link))`` for the layer of
    ``TRANSFORMER_LAYER`` with calc.transformer's own counts, so the step-time model reproduces
    that measurement exactly. It is the A100's; a transformer by its architecture on another GPU
    runs at it times that GPU's best measured GEMM share of peak over the A100's
    (``generation_efficiencies``, calc.efficiency). The CNN fit's compute efficiency sits at its
    bound of 1, because the eager per-op traffic it is fitted with already carries the non-GEMM time.
    """
    a = TRANSFORMER_LAYER
    gpu = catalog.gpus()["A100-SXM4-80GB"]
    h, s, b, t = a["hidden"], a["seq_len"], a["micro_batch"], a["tensor_parallel"]
    flops = float(tr.train_flops_per_token(1, h, a["heads"], a["heads"], 4 * h, 0, s, 0)) * s * b / t
    traffic = float(tr.traffic_bytes_per_sequence(1, h, a["heads"], a["heads"], 4 * h, 0, s, 0, 0, t)) * b
    link = tr.links("A100-SXM4-80GB", gpu.host_link_bytes_per_s)[0]
    comm = float(tr.tensor_parallel_bytes_per_layer(b, s, h, t, 0)) / link
    math_s = a["time_s"] - traffic / (gpu.memory_bandwidth_bytes_per_s * memory_efficiency) - comm
    return flops / (gpu.peak("fp16") * math_s)


@dataclass(frozen=True)
class Fit:
    """Fitted step-time parameters (see the module docstring)."""

    compute_efficiency: dict[str, float]
    memory_efficiency: float
    launch_overhead_s: float
    fill_examples: float
    stack_factors: dict[str, dict[str, float]]
    family_factors: dict[str, float]
    eager_s_per_byte: dict[str, float]
    scaling_within_node: float
    scaling_across_nodes: float
    scaling_source: str
    rows: int
    rms_log_error: float
    excluded_gpu: str = ""
    gpus: tuple[str, ...] = field(default=())
    depthwise_efficiency: float = 1.0
    flops_per_shared_byte: float = math.inf

    @property
    def describe(self) -> str:
        return f"global fit on {self.rows} rows of calibration.yaml over {len(self.gpus)} GPUs" + (
            f", without {self.excluded_gpu}" if self.excluded_gpu else ""
        )

    @functools.cached_property  # a Fit never changes; a plan read it twice, ~10 us each
    def transformer_efficiency(self) -> float:
        """Transformer GEMM efficiency (share of the 16-bit peak) from one measured layer [0-1]."""
        return transformer_efficiency(self.memory_efficiency)

    @property
    def transformer_efficiency_source(self) -> str:
        return (
            f"transformer compute efficiency {self.transformer_efficiency:.3f}: "
            + TRANSFORMER_LAYER_SOURCE
            + f" (fitted memory efficiency {self.memory_efficiency:.3f}); calc.calibrate.transformer_efficiency"
        )

    def stack_source(self, stack: str) -> str:
        """How the stack enters the step time, with its figures and their sources."""
        label = catalog.STACK_LABELS[stack]
        if stack == "ngc":
            return f"{label}: the reference stack every fitted figure stands for, factor 1"
        if stack != "eager":
            return (
                f"{label}: the NGC step with its element-wise traffic fused away (x stack_traffic_share: 1 - the"
                " model's fused_traffic_share, calc.compute.fused_traffic_share of the per-op measurement; MXNet's"
                " fused NHWC BatchNorm-Add-ReLU, XLA and Inductor fuse the point-wise ops), factor 1"
            )
        f = self.stack_factors[stack]
        return (
            f"{label}: a CNN: + "
            + ", ".join(f"{c} {v * 1e12:.3g} ps" for c, v in self.eager_s_per_byte.items())
            + " per byte of an example's traffic; a transformer: x the NGC step time: "
            + ", ".join(f"{c} {v:.3g}" for c, v in f.items())
            + " (a CNN: paired eager NCHW / NGC NHWC rows in calibration.yaml, calc.fit.eager_seconds_per_byte; a"
            " transformer: published eager / torch.compile MFU pairs, calibration.yaml stack_pairs,"
            " calc.fit.transformer_eager_factors)"
        )


@dataclass(frozen=True)
class _Rows:
    """The calibration rows as arrays, for a vectorised prediction."""

    measured: Array
    batch: Array
    flops: Array
    traffic: Array
    step_traffic: Array
    peak: Array
    bandwidth: Array
    pclass: Array  # index into CLASSES
    stack: Array  # the row's stack factor (1 except eager transformers: the eager factor of its class)
    stack_s_per_byte: Array  # an eager CNN row's own cost per traffic byte (0 otherwise) [s/B]
    kept_share: Array  # the share of the per-op traffic the row's stack moves (calc.compute.stack_traffic_share)
    depthwise: Array  # the share of the per-example traffic in depthwise convolutions
    conv_tensor: Array  # 1 where a CNN runs on tensor cores (its convolutions fed from shared memory)
    tensor_per_clock: Array  # the GPU's tensor FLOPs per clock per SM at the row's precision (1 elsewhere)
    operand_bytes: Array  # bytes per operand at the row's precision (1 elsewhere)
    transformer: Array
    multi_gpu: Array  # 1 where the per-GPU rate comes from a multi-GPU run (within a node)
    gpu: tuple[str, ...]


def _fused(m: catalog.Model, precision: str) -> float:
    """The model's fused-traffic share at the precision's memory class (0 where not measured)."""
    return float(m.fused_traffic_share.get(catalog.memory_class(precision), 0.0))


def _fuses(m: catalog.Measurement) -> float:
    return compute.STACK_FUSES[m.stack]


def _rows(ms: Sequence[catalog.Measurement], eager: dict[str, float] | None = None) -> _Rows:
    models, gpus = catalog.models(), catalog.gpus()
    eager = eager if eager is not None else transformer_eager_factors()
    per_byte = eager_seconds_per_byte()

    def additive(m: catalog.Measurement) -> bool:
        return m.stack == "eager" and models[m.model].family != "transformer"

    def conv_tensor(m: catalog.Measurement) -> bool:
        g = gpus[m.gpu]
        return (
            models[m.model].family == "cnn"
            and m.precision in compute.OPERAND_BYTES
            and math.isfinite(g.tensor_flops_per_clock_per_sm)
        )

    def col(f: Callable[[catalog.Measurement], float]) -> Array:
        return np.array([f(m) for m in ms], dtype=float)

    def flops(m: catalog.Measurement) -> float:
        md = models[m.model]
        return md.train_flops if math.isfinite(md.train_flops) else compute.TRAIN_FLOPS_MULTIPLIER * md.forward_flops

    return _Rows(
        measured=col(lambda m: m.samples_per_s),
        batch=col(lambda m: m.batch_size),
        flops=col(flops),
        traffic=col(lambda m: models[m.model].traffic(catalog.memory_class(m.precision))[0]),
        step_traffic=col(lambda m: models[m.model].traffic(catalog.memory_class(m.precision))[1]),
        # fp32 convolutions reach only part of a 128-lane SM's peak (calc.catalog.convolution_peak_share).
        peak=col(
            lambda m: (
                gpus[m.gpu].peak(m.precision)
                * catalog.convolution_peak_share(m.gpu, m.precision, models[m.model].family, math.inf)[0]
            )
        ),
        bandwidth=col(lambda m: gpus[m.gpu].memory_bandwidth_bytes_per_s),
        pclass=col(lambda m: CLASSES.index(catalog.precision_class(m.precision))),
        stack=col(
            lambda m: eager[catalog.precision_class(m.precision)] if m.stack == "eager" and not additive(m) else 1.0
        ),
        stack_s_per_byte=col(lambda m: per_byte[catalog.precision_class(m.precision)] if additive(m) else 0.0),
        kept_share=col(lambda m: float(compute.stack_traffic_share(_fused(models[m.model], m.precision), _fuses(m)))),
        depthwise=col(lambda m: models[m.model].depthwise_traffic_share),
        conv_tensor=col(lambda m: float(conv_tensor(m))),
        tensor_per_clock=col(
            lambda m: catalog.tensor_flops_per_clock(gpus[m.gpu], m.precision) if conv_tensor(m) else 1.0
        ),
        operand_bytes=col(lambda m: compute.OPERAND_BYTES[m.precision] if conv_tensor(m) else 1.0),
        transformer=col(lambda m: float(models[m.model].family == "transformer")),
        multi_gpu=col(lambda m: float(m.gpus > 1)),
        gpu=tuple(m.gpu for m in ms),
    )


def _predict(theta: Array, r: _Rows, within_node: float) -> Array:
    """Per-GPU samples/s the model predicts for each row, with parameters ``theta`` (log space)."""
    p = np.exp(theta)
    e_c = p[:3][r.pclass.astype(int)] * np.where(r.transformer > 0, p[6], 1.0)
    e_m = min(p[3], 1.0)
    e_dw = min(p[7], 1.0)
    fed = np.where(r.conv_tensor > 0, compute.tensor_convolution_share(r.tensor_per_clock, r.operand_bytes, p[8]), 1.0)
    *_, t = compute.model_terms(
        r.batch,
        r.flops,
        r.peak * fed,
        np.minimum(e_c, 1.0),
        r.traffic,
        r.bandwidth,
        e_m,
        r.step_traffic,
        p[4],
        p[5],
        r.stack,
        0.0,
        r.stack_s_per_byte,
        r.kept_share,
        r.depthwise,
        e_dw,
    )
    rate: Array = r.batch / t * np.where(r.multi_gpu > 0, within_node, 1.0)
    return rate


def _nelder_mead(f: Callable[[Array], float], x0: Array, step: float = 0.5, iters: int = 4000) -> Array:
    """Minimise ``f`` from ``x0`` (a compact Nelder-Mead; NumPy only, deterministic)."""
    n = len(x0)
    simplex = np.vstack([x0] + [x0 + step * np.eye(n)[i] for i in range(n)])
    values = np.array([f(x) for x in simplex])
    for _ in range(iters):
        order = np.argsort(values)
        simplex, values = simplex[order], values[order]
        if values[-1] - values[0] < 1e-12:
            break
        centroid = simplex[:-1].mean(axis=0)
        reflected = centroid + (centroid - simplex[-1])
        fr = f(reflected)
        if fr < values[0]:
            expanded = centroid + 2 * (centroid - simplex[-1])
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:  # shrink towards the best point
                simplex[1:] = simplex[0] + 0.5 * (simplex[1:] - simplex[0])
                values[1:] = [f(x) for x in simplex[1:]]
    result: Array = simplex[int(np.argmin(values))]
    return result


@functools.cache
def eager_factors() -> dict[str, float]:
    """Step-time ratio eager / tuned per precision class, from paired calibration rows [1].

    A pair is one model, GPU, precision and batch measured both ways; a class with no pair
    gets the mean of the others (1 if there are none at all).
    """
    rows = catalog.measurements()
    tuned = {(m.model, m.gpu, m.precision, m.batch_size): m.samples_per_s for m in rows if m.stack == "ngc"}
    ratios: dict[str, list[float]] = {c: [] for c in CLASSES}
    for m in rows:
        key = (m.model, m.gpu, m.precision, m.batch_size)
        if m.stack == "eager" and key in tuned:
            ratios[catalog.precision_class(m.precision)].append(tuned[key] / m.samples_per_s)
    known = {c: float(np.exp(np.mean(np.log(v)))) for c, v in ratios.items() if v}
    fallback = float(np.exp(np.mean(np.log(list(known.values()))))) if known else 1.0
    return {c: known.get(c, fallback) for c in CLASSES}


@functools.cache
def transformer_eager_factors() -> dict[str, float]:
    """Step-time ratio eager / compiled of a transformer, per precision class [1].

    The geometric mean of ``compiled MFU / eager MFU`` over the published transformer pairs
    (calibration.yaml ``stack_pairs``: Llama 2 7B-70B with FSDP on A100 and H100, bf16, 1.10-1.23).
    A class without a pair takes the CNN pairs' pattern across classes (``eager_factors``: the eager
    overhead is a smaller share of a slower step) scaled to the transformers' own figure:
    ``1 + (k_cnn[c] - 1) x (k_tr - 1) / (k_cnn[ref] - 1)``, ``ref`` the class the pairs measure.
    Before issue 41's second round a transformer took the CNN pairs' ratio itself (1.50 in mixed
    precision), which measures eager NCHW against channels_last, a layout change a transformer does
    not have: torchtitan's eager Llama 3.1 8B was planned 13 % slow and its compiled run 13 % fast.
    """
    ratios: dict[str, list[float]] = {c: [] for c in CLASSES}
    for p in catalog.stack_pairs():
        ratios[catalog.precision_class(p.precision)].append(p.compiled_mfu / p.eager_mfu)
    known = {c: float(np.exp(np.mean(np.log(v)))) for c, v in ratios.items() if v}
    cnn = eager_factors()
    if not known:
        return cnn
    ref = next(iter(known))
    scale = (known[ref] - 1.0) / (cnn[ref] - 1.0) if cnn[ref] > 1.0 else 1.0
    return {c: known.get(c, 1.0 + (cnn[c] - 1.0) * scale) for c in CLASSES}


def eager_seconds_per_byte() -> dict[str, float]:
    """An eager (NCHW, unfused) stack's own time per byte of an example's traffic, per precision
    class, from paired calibration rows [s/B].

    A pair is one model, GPU, precision and batch measured eager and tuned; its extra time per
    example is ``1 / eager - 1 / tuned`` [s], over the example's traffic [B]. On the pairs it is
    nearly the same on a V100 and an H100/H200 (mixed precision: 0.17 and 0.25 ms per ResNet-50
    image) although their speeds differ 3.7-fold, so it is added per example (layout conversions
    and unfused kernels that run at their own rate), not multiplied onto the step as the
    geometric-mean factor was (1.19x on V100 pairs, 1.77x on Hopper: 1.5x everywhere made eager
    V100 and consumer GPUs 17-40 % slow and Hopper/Blackwell fast). A class with no pair gets the
    mean of the others.
    """
    rows, models = catalog.measurements(), catalog.models()
    tuned = {(m.model, m.gpu, m.precision, m.batch_size): m.samples_per_s for m in rows if m.stack == "ngc"}
    per_byte: dict[str, list[float]] = {c: [] for c in CLASSES}
    for m in rows:
        key = (m.model, m.gpu, m.precision, m.batch_size)
        if m.stack == "eager" and key in tuned and models[m.model].family != "transformer":
            traffic = models[m.model].traffic(catalog.memory_class(m.precision))[0]
            per_byte[catalog.precision_class(m.precision)].append((1 / m.samples_per_s - 1 / tuned[key]) / traffic)
    known = {c: float(np.mean(v)) for c, v in per_byte.items() if v}
    fallback = float(np.mean(list(known.values()))) if known else 0.0
    return {c: known.get(c, fallback) for c in CLASSES}


def _scaling() -> tuple[float, float, str]:
    within: list[float] = []
    across: list[float] = []
    for s in catalog.scaling_rows():
        one = s.samples_per_s[s.gpus.index(1)]
        for g, rate in zip(s.gpus, s.samples_per_s, strict=True):
            if g == 1:
                continue
            eff = rate / (g * one)
            (within if g <= 8 else across).append(eff)
    if not within:
        return (*DEFAULT_SCALING, "assumed 0.95 within a node and 0.95 across nodes (no published table loaded)")
    w = float(np.exp(np.mean(np.log(within))))
    a = float(np.exp(np.mean(np.log(across)))) / w if across else DEFAULT_SCALING[1]
    a = min(a, 1.0)
    return (
        w,
        a,
        (
            f"geometric mean of {len(within)} published 2-8 GPU efficiencies ({w:.3f})"
            + (
                f" and {len(across)} multi-node ones ({a:.3f} beyond the node)"
                if across
                else "; across nodes assumed 0.95"
            )
            + " (calibration.yaml scaling)"
        ),
    )


def fit(exclude_gpu: str = "", rows: Sequence[catalog.Measurement] | None = None, per_family: bool = False) -> Fit:
    """Fit the global parameters on the calibration rows (all, or without ``exclude_gpu``).

    ``per_family`` adds a transformer/CNN compute-efficiency ratio (off by default: see above).
    """
    ms = [m for m in (rows if rows is not None else catalog.measurements()) if m.gpu != exclude_gpu]
    r = _rows(ms)
    within, across, scaling_src = _scaling()
    log_measured = np.log(r.measured)
    has_transformer = per_family and bool(r.transformer.any() and (r.transformer == 0).any())

    def loss(theta: Array) -> float:
        full = theta.copy()
        full[list(PINNED)] = 0.0
        if not has_transformer:
            full[6] = 0.0
        err = np.log(_predict(full, r, within)) - log_measured
        # Efficiencies above 1 are unphysical: a steep penalty keeps the fit inside.
        over = np.maximum(full[[0, 1, 2, 3, 7]], 0.0)
        return float(np.mean(err**2) + 10 * np.sum(over**2))

    theta = _nelder_mead(loss, START.copy())
    theta = _nelder_mead(loss, theta, step=0.2)  # a restart escapes an early collapse
    theta[list(PINNED)] = 0.0
    if not has_transformer:
        theta[6] = 0.0
    p = np.exp(theta)
    err = np.log(_predict(theta, r, within)) - log_measured
    return Fit(
        compute_efficiency={c: float(min(p[i], 1.0)) for i, c in enumerate(CLASSES)},
        memory_efficiency=float(min(p[3], 1.0)),
        launch_overhead_s=float(p[4]),
        fill_examples=float(p[5]),
        stack_factors={
            s: transformer_eager_factors() if s == "eager" else dict.fromkeys(CLASSES, 1.0) for s in catalog.STACKS
        },
        eager_s_per_byte=eager_seconds_per_byte(),
        family_factors={"cnn": 1.0, "transformer": float(p[6])},
        scaling_within_node=within,
        scaling_across_nodes=across,
        scaling_source=scaling_src,
        rows=len(ms),
        rms_log_error=float(np.sqrt(np.mean(err**2))),
        excluded_gpu=exclude_gpu,
        gpus=tuple(sorted(set(r.gpu))),
        depthwise_efficiency=float(min(p[7], 1.0)),
        flops_per_shared_byte=float(p[8]),
    )


@functools.cache
def ratio_bands() -> dict[tuple[str, str, str], tuple[float, float, str]]:
    """Published speed ratios between two GPUs: ``(from, to, precision class)`` -> the lowest and highest
    per-GPU rate on ``to`` over ``from`` for one model, over every model measured on both, with a source line.

    From presets/calibration.yaml (never validation.yaml): single-GPU rows of the ngc stack, each model at
    its largest measured batch on each GPU. calc.compute.reprojected_step_s keeps a re-projected
    measurement's GPU change inside this band.
    """
    best: dict[tuple[str, str, str], catalog.Measurement] = {}
    for m in catalog.measurements():
        key = (m.model, m.gpu, catalog.precision_class(m.precision))
        if m.stack == "ngc" and m.gpus == 1 and (key not in best or m.batch_size > best[key].batch_size):
            best[key] = m
    ratios: dict[tuple[str, str, str], list[tuple[float, str]]] = {}
    for (model, a, cls), ma in best.items():
        for (model_b, b, cls_b), mb in best.items():
            if model_b == model and cls_b == cls and b != a:
                ratios.setdefault((a, b, cls), []).append((mb.samples_per_s / ma.samples_per_s, model))
    out = {}
    for key, rs in ratios.items():
        lo, hi = min(r for r, _ in rs), max(r for r, _ in rs)
        words = ", ".join(f"{m} x{r:.2f}" for r, m in sorted(rs))
        out[key] = (lo, hi, f"published {key[0]} -> {key[1]} {key[2]} rates in calibration.yaml: {words}")
    return out


def geomean_error(predicted: Array | pd.Series, measured: Array | pd.Series) -> float:
    """Geometric-mean error factor minus one: exp(mean |log(pred/meas)|) - 1 (0 = exact)."""
    ratio = np.asarray(predicted, dtype=float) / np.asarray(measured, dtype=float)
    return float(np.exp(np.mean(np.abs(np.log(ratio)))) - 1)


@functools.cache
def fitted() -> Fit:
    """The fit on every calibration row (computed once per process)."""
    return fit()


def _predict_rows(f: Fit, ms: Sequence[catalog.Measurement]) -> Array:
    theta = np.log(
        [
            *(f.compute_efficiency[c] for c in CLASSES),
            f.memory_efficiency,
            f.launch_overhead_s,
            f.fill_examples,
            f.family_factors["transformer"],
            f.depthwise_efficiency,
            f.flops_per_shared_byte,
        ]
    )
    return _predict(theta, _rows(ms), f.scaling_within_node)


FP8_SPEEDUP_RANGE = (1.75 / 1.37, 1.64 / 1.17)
"""FP8-LM's two published Transformer Engine fp8 / bf16 ratios for GPT-175B on H100 [1]."""


def fp8_source(gpu: str = "") -> str:
    """Where the fp8 efficiency comes from, with the fitted figures (the plan's ``efficiency`` source)."""
    f = gemm_fit()
    ratios = _roofline_ratios(gpu or GEMM_REFERENCE_GPU)
    return (
        "fp8: the transformer's 16-bit layer efficiency with its 12 matrix multiplies at fp8 speed"
        f" (GEMM roofline fitted on {f.rows} published bf16/fp8 GEMMs on H100/H800, presets/gemm.yaml:"
        f" {f.peak_efficiency['bf16']:.1%} of the bf16 and {f.peak_efficiency['fp8']:.1%} of the fp8 peak plus"
        f" operands and result at {f.bandwidth_efficiency:.0%} of the memory bandwidth, {f.error:.1%} geometric-mean"
        f" error; {ratios[2]}) at this micro-batch's shapes, plus {fp8_quantization_bytes():.1f} B of memory traffic"
        " per quantized element (Transformer Engine's GEMM benchmark); the rest of the layer's math and the attention"
        " stay 16-bit; calc.transformer.fp8_math_factor"
    )


def fp8_gemm_inputs(gpu: str = "") -> dict[str, float]:
    """Scenario values for calc.transformer.fp8_math_factor: the GEMM fit on ``gpu`` and the quantization bytes.

    The roofline's shares of peak were fitted on Hopper (``GEMM_REFERENCE_GPU``); on another GPU each is
    scaled by that GPU's best GEMM share over the H100's at the same precision
    (calc.efficiency.generation_efficiency, presets/gemm.yaml ``peak_share``), 1 where none is published.
    A new dict each call, from one computed per GPU (presets are read once: a plan asked for it every time).
    """
    return dict(_fp8_gemm_inputs(gpu))


@functools.cache
def _fp8_gemm_inputs(gpu: str) -> dict[str, float]:
    f = gemm_fit()
    r16, r8, _ = _roofline_ratios(gpu or GEMM_REFERENCE_GPU)
    return {
        "gemm_peak_efficiency_16bit": min(float(eff.generation_efficiency(f.peak_efficiency["bf16"], r16, 1.0)), 1.0),
        "gemm_peak_efficiency_fp8": min(float(eff.generation_efficiency(f.peak_efficiency["fp8"], r8, 1.0)), 1.0),
        "gemm_bandwidth_efficiency": f.bandwidth_efficiency,
        "fp8_quantization_bytes_per_element": fp8_quantization_bytes(),
    }


GEMM_REFERENCE_GPU = "H100-SXM"
"""The GPU the GEMM roofline (presets/gemm.yaml ``rows``: H100 SXM and H800 SXM) stands for."""

LAYER_REFERENCE_GPU = "A100-SXM4-80GB"
"""The GPU the transformer layer efficiency was measured on (``TRANSFORMER_LAYER``)."""


@dataclass(frozen=True)
class Share:
    """A GPU's (or architecture's) measured share of its dense peak [0-1], and where it comes from."""

    share: float
    source: str


def _share_class(precision: str) -> str:
    return "fp8" if precision == "fp8" else "16bit"


@functools.cache
def peak_shares() -> dict[tuple[str, str], Share]:
    """presets/gemm.yaml ``peak_share``: ``(gpu, "16bit" | "fp8")`` -> the best measured GEMM over the
    GPU's dense peak in presets/gpus.yaml (calc.efficiency.peak_share). PresetError on a bad row."""
    raw = _gemm_yaml().get("peak_share", [])
    if not isinstance(raw, list):
        raise PresetError("gemm.yaml: peak_share", "expected a list of measured GEMM rows")
    gpus = catalog.gpus()
    out: dict[tuple[str, str], Share] = {}
    for i, data in enumerate(raw):
        r = catalog._Entry("gemm.yaml", f"peak_share[{i}]", data)
        name, prec = r.text("gpu"), r.text("precision")
        if name not in gpus:
            raise PresetError(r.where("gpu"), f"{name!r} is not in gpus.yaml ({', '.join(gpus)})")
        if prec not in ("fp16", "bf16", "fp8"):
            raise PresetError(r.where("precision"), f"expected fp16, bf16 or fp8, got {prec!r}")
        peak = gpus[name].peak(prec)
        share = float(eff.peak_share(r.quantity("tflops", "count") * 1e12, peak))
        if share > 1:
            raise PresetError(r.where("tflops"), f"exceeds {name}'s {prec} peak ({peak / 1e12:g} TFLOP/s)")
        out[(name, _share_class(prec))] = Share(
            share, f"{name} {prec}: {r.quantity('tflops', 'count'):g} TFLOP/s of {peak / 1e12:g} ({_source(r)})"
        )
    return out


def gemm_share(gpu: str, precision: str) -> Share | None:
    """The GPU's measured GEMM share at the precision's class: its own row, else the geometric mean of the
    rows of its architecture (gpus.yaml ``architecture``), else None (no kernel measurement)."""
    shares, cls = peak_shares(), _share_class(precision)
    if (gpu, cls) in shares:
        return shares[(gpu, cls)]
    gpus = catalog.gpus()
    arch = gpus[gpu].architecture if gpu in gpus else ""
    kin = [s for (g, c), s in shares.items() if c == cls and arch and gpus[g].architecture == arch]
    if not kin:
        return None
    mean = float(np.exp(np.mean(np.log([s.share for s in kin]))))
    return Share(mean, f"{gpu} has no row: its architecture's ({arch}): " + "; ".join(s.source for s in kin))


@functools.cache  # of the GPU's name alone (peak_shares reads the presets once); every plan asks
def _roofline_ratios(gpu: str) -> tuple[float, float, str]:
    """Each precision's GEMM share on ``gpu`` over the roofline reference's (H100 SXM), and a source line."""
    ratios: list[float] = []
    words: list[str] = []
    for prec in ("bf16", "fp8"):
        s, ref = gemm_share(gpu, prec), gemm_share(GEMM_REFERENCE_GPU, prec)
        if s is None or ref is None:
            ratios.append(1.0)
            words.append(f"{prec} share as the H100's (no {prec} GEMM measurement for {gpu})")
        else:
            ratios.append(s.share / ref.share)
            words.append(f"{prec} share x {s.share / ref.share:.3f} ({s.share:.1%} / {ref.share:.1%} of peak)")
    return ratios[0], ratios[1], f"on {gpu}: " + ", ".join(words) + " (presets/gemm.yaml peak_share)"


@functools.cache
def attention_shares() -> dict[str, Share]:
    """presets/gemm.yaml ``attention``: architecture -> the attention kernel's share of the 16-bit peak,
    given as ``share`` or as ``tflops`` over that architecture's GPUs' bf16 peak (they must agree)."""
    raw = _gemm_yaml().get("attention", [])
    if not isinstance(raw, list):
        raise PresetError("gemm.yaml: attention", "expected a list of attention kernel measurements")
    archs = {g.architecture: g for g in catalog.gpus().values() if g.architecture}
    out: dict[str, Share] = {}
    for i, data in enumerate(raw):
        r = catalog._Entry("gemm.yaml", f"attention[{i}]", data)
        arch = r.text("architecture")
        if arch not in archs:
            raise PresetError(r.where("architecture"), f"{arch!r} is no gpus.yaml architecture ({', '.join(archs)})")
        if "share" in r.data:
            share = r.quantity("share", "count")
        else:
            share = float(eff.peak_share(r.quantity("tflops", "count") * 1e12, archs[arch].peak("bf16")))
        if share > 1:
            raise PresetError(r.where("share"), f"must be at most 1, got {share:g}")
        out[arch] = Share(share, f"{r.text('kernel')} at {share:.1%} of the 16-bit peak ({_source(r)})")
    return out


def generation_efficiencies(layer_efficiency: float, gpu: str) -> tuple[float, float, str, str, list[str]]:
    """The transformer's GEMM and attention efficiencies on ``gpu`` [0-1], their sources and warnings.

    GEMM: the A100 layer efficiency x the GPU's 16-bit GEMM share over the A100's
    (calc.efficiency.generation_efficiency). Attention: the architecture's attention kernel share where
    one is published, else the GEMM efficiency. A GPU with no GEMM measurement keeps the A100's, said.
    Computed once per (efficiency, GPU); the warnings are a new list each call.
    """
    e, e_attn, src, a_src, warnings = _generation_efficiencies(layer_efficiency, gpu)
    return e, e_attn, src, a_src, list(warnings)


@functools.cache
def _generation_efficiencies(layer_efficiency: float, gpu: str) -> tuple[float, float, str, str, tuple[str, ...]]:
    s, ref = gemm_share(gpu, "bf16"), gemm_share(LAYER_REFERENCE_GPU, "bf16")
    warnings: list[str] = []
    if s is None or ref is None:
        e = layer_efficiency
        src = f"no published GEMM measurement for {gpu}: the A100 layer efficiency {e:.3f} as it is"
        warnings.append(
            f"{gpu}: no published matrix-multiply measurement (presets/gemm.yaml peak_share), so the transformer "
            "runs at the A100's layer efficiency; give efficiency to pin it."
        )
    else:
        e = float(eff.generation_efficiency(layer_efficiency, s.share, ref.share))
        src = (
            f"{e:.3f} = A100 layer efficiency {layer_efficiency:.3f} x {s.share:.1%} / {ref.share:.1%} (the GPU's"
            " best GEMM share of peak over the A100's; calc.efficiency.generation_efficiency):"
            f" {s.source}; A100: {ref.source}"
        )
    arch = catalog.gpus()[gpu].architecture if gpu in catalog.gpus() else ""
    a = attention_shares().get(arch)
    if a is None:
        said = "as the matrix multiplies (no attention kernel measurement for this architecture)"
        return e, e, src, said, tuple(warnings)
    return e, a.share, src, a.source, tuple(warnings)


@functools.cache
def fp8_quantization_bytes() -> float:
    """Bytes of GPU-memory traffic per element fp8 training quantizes [bytes/element].

    Transformer Engine's GEMM benchmark (presets/gemm.yaml ``quantization``): the 12 GEMMs of a
    layer (h 4096, FFN 16384 plain, 15,872 tokens, H200 NVL at 4.8 TB/s) take 18.978 ms with delayed
    scaling in autocast (cast, amax, transpose timed) against 16.785 ms with the operands already
    in fp8. The 2.193 ms difference moves ``2.193e-3 x 4.8e12 x e_w`` bytes over the layer's
    ``calc.transformer.quantized_elements`` (1,241.5 M): about 8.5 B per element (a cast reads 2 B
    and writes 1 B plus a 1 B transpose; the amax and scale passes read it again).
    """
    q = catalog._Entry("gemm.yaml", "quantization", _gemm_yaml().get("quantization"))
    keys = ("fp8_delayed_autocast_ms", "fp8_prequantized_ms", "tokens", "hidden", "ffn_hidden", "bandwidth_tb_s")
    v = {key: q.quantity(key, "count") for key in keys}
    if v["fp8_delayed_autocast_ms"] <= v["fp8_prequantized_ms"]:
        raise PresetError("gemm.yaml: quantization", "the autocast time must exceed the pre-quantized one")
    gemms = tr.layer_gemms(v["tokens"], v["hidden"], 1, 1, v["ffn_hidden"], 0)
    moved = (v["fp8_delayed_autocast_ms"] - v["fp8_prequantized_ms"]) * 1e-3 * v["bandwidth_tb_s"] * 1e12
    return float(moved * gemm_fit().bandwidth_efficiency / float(tr.quantized_elements(gemms)))


@dataclass(frozen=True)
class GemmRow:
    """One published GEMM throughput (presets/gemm.yaml ``rows``)."""

    gpu: str
    precision: str
    m: float
    n: float
    k: float
    tflops: float
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    source: str
    fit: bool = True


def _source(r: catalog._Entry) -> str:
    src = r.text("source")
    if not src:
        raise PresetError(r.where("source"), "expected the source of the figure")
    return src


@functools.cache
def _gemm_yaml() -> dict[str, Any]:
    """presets/gemm.yaml, read once: ``gpus`` (a mapping), ``rows`` (a list), ``quantization``."""
    raw = catalog.load_yaml(catalog.presets_dir() / "gemm.yaml")
    if not isinstance(raw, dict) or not isinstance(raw.get("gpus"), dict) or not isinstance(raw.get("rows"), list):
        raise PresetError("gemm.yaml", "expected a mapping with 'gpus' (a mapping) and 'rows' (a list)")
    return raw


@functools.cache
def gemm_rows() -> tuple[GemmRow, ...]:
    """The published GEMM measurements of presets/gemm.yaml, validated (PresetError otherwise)."""
    gpus: dict[str, Any] = _gemm_yaml()["gpus"]
    out = []
    for i, data in enumerate(_gemm_yaml()["rows"]):
        r = catalog._Entry("gemm.yaml", f"rows[{i}]", data)
        g = gpus.get(str(r.get("gpu")))
        if not isinstance(g, dict):
            raise PresetError(r.where("gpu"), f"{r.get('gpu')!r} is not under 'gpus' ({', '.join(map(str, gpus))})")
        prec = r.get("precision")
        if prec not in ("bf16", "fp8"):
            raise PresetError(r.where("precision"), f"expected bf16 or fp8, got {prec!r}")
        gpu = catalog._Entry("gemm.yaml", f"gpus: {r.get('gpu')}", g)
        fit = r.get("fit", True)
        if not isinstance(fit, bool):
            raise PresetError(r.where("fit"), f"expected true or false, got {fit!r}")
        out.append(
            GemmRow(
                gpu=str(r.get("gpu")),
                precision=str(prec),
                peak_flops_per_s=gpu.quantity(str(prec), "count") * 1e12,
                bandwidth_bytes_per_s=gpu.quantity("bandwidth_tb_s", "count") * 1e12,
                source=_source(r),
                fit=fit,
                **{key: r.quantity(key, "count") for key in ("m", "n", "k", "tflops")},
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class GemmFit:
    """Fitted GEMM roofline (calc.transformer.gemm_time_s): a share of peak per precision, one of
    the memory bandwidth, and the geometric-mean error of the fit over the rows."""

    peak_efficiency: dict[str, float]
    bandwidth_efficiency: float
    rows: int
    error: float


def gemm_predicted_tflops(rows: Sequence[GemmRow], peak_eff: dict[str, float], bw_eff: float) -> Array:
    """TFLOP/s calc.transformer.gemm_time_s gives each row [TFLOP/s]."""
    out = []
    for r in rows:
        b_in, b_out = tr.GEMM_BYTES[r.precision]
        t = tr.gemm_time_s(
            r.m, r.n, r.k, r.peak_flops_per_s, r.bandwidth_bytes_per_s, b_in, b_out, peak_eff[r.precision], bw_eff
        )
        out.append(2 * r.m * r.n * r.k / float(t) / 1e12)
    return np.asarray(out, dtype=float)


@functools.cache
def gemm_fit() -> GemmFit:
    """Fit ``e_p[bf16]``, ``e_p[fp8]`` and ``e_w`` of the GEMM roofline on presets/gemm.yaml.

    Minimises the mean squared log error of predicted against published TFLOP/s over every row
    (bf16 and fp8 together, all GPUs) but those marked ``fit: false``, Nelder-Mead in log space.
    """
    rows = [r for r in gemm_rows() if r.fit]
    measured = np.asarray([r.tflops for r in rows], dtype=float)

    def loss(theta: Array) -> float:
        e = np.exp(theta)
        if np.any(e > 1.0):
            return 1e9
        pred = gemm_predicted_tflops(rows, {"bf16": e[0], "fp8": e[1]}, e[2])
        return float(np.mean(np.log(pred / measured) ** 2))

    theta = _nelder_mead(loss, np.log([0.7, 0.7, 0.5]))
    e = np.exp(theta)
    pred = gemm_predicted_tflops(rows, {"bf16": e[0], "fp8": e[1]}, e[2])
    return GemmFit(
        peak_efficiency={"bf16": float(e[0]), "fp16": float(e[0]), "fp8": float(e[1])},
        bandwidth_efficiency=float(e[2]),
        rows=len(rows),
        error=geomean_error(pred, measured),
    )
