"""Per-step GPU time t: a roofline-style sum of compute, memory traffic and a fixed part.

    t_model(n) = stack x [ n x (F / (P x e_c) + B / (W x e_m) + s_eager x B)
                           + n_fill / (1 + F / 1e13) x (F / (P x e_c) + B / (W x e_m)) + S / (W x e_m) + t_launch ]

with, per example, F training FLOPs (forward + backward, measured), B bytes read and written
in GPU memory (measured per op), and, per step, S batch-independent bytes (weights, gradients
and optimizer state read and written). P is the GPU's dense peak at the precision, W its memory
bandwidth; e_c (per precision class) and e_m are the shares reached, t_launch a fixed
per-step overhead and n_fill the examples' worth of time a step loses filling the GPU; s_eager an
eager stack's own cost per byte of each example's traffic (0 for a compiled one).
All of them are fitted once, globally, on presets/calibration.yaml (calc.calibrate).

Why a sum: within a step some kernels are bound by math (convolutions, matmuls) and others by
memory (normalisation, activations, optimizer); each waits for its own limit, so the step
time adds the two totals. A per-op roofline max would need per-op splits no datasheet gives.

A measured step time or throughput is most trusted. When the scenario's GPU, batch or
precision differ from where it was measured, it is re-projected through the model's ratio:
``t_new = t_measured x t_model(new) / t_model(measured)``.

References
----------
Williams, Waterman, Patterson, "Roofline: an insightful visual performance model", CACM 52(4), 2009.
docs/model.md, "Step time" (derivation and validation).
"""

from __future__ import annotations

import numpy as np

from calc._types import Numeric, floats, where
from calc.formula import formula

METHODS = ("measured step time", "measured throughput", "model", "re-projected measurement")
"""How the step time was obtained, by code 0..3."""

TRAIN_FLOPS_MULTIPLIER = 3.0
"""Training FLOPs / forward FLOPs when no measured training count exists: backward ~ 2 x
forward (Kaplan et al. 2020, "Scaling laws for neural language models", section 2.1)."""


@formula("train_flops_per_example", "{train_flops_rule}")
def train_flops(forward_flops_per_example: Numeric, multiplier: Numeric) -> Numeric:
    """Training FLOPs per example [FLOPs] from the forward count and a ratio."""
    return floats(forward_flops_per_example) * multiplier


@formula(
    "compute_time_per_example_s",
    "{train_flops_per_example} / ({peak_flops_per_s} x {efficiency})",
)
def compute_time_per_example_s(train_flops: Numeric, peak_flops_per_s: Numeric, efficiency: Numeric) -> Numeric:
    """Time the math of one example takes at ``efficiency`` of the dense peak [s]."""
    return floats(train_flops) / (floats(peak_flops_per_s) * efficiency)


@formula(
    "memory_time_per_example_s",
    "{memory_traffic_bytes_per_example} / ({memory_bandwidth_bytes_per_s} x {memory_efficiency})",
)
def memory_time_per_example_s(
    traffic_bytes: Numeric, memory_bytes_per_s: Numeric, memory_efficiency: Numeric
) -> Numeric:
    """Time one example's GPU-memory reads and writes take [s]."""
    return floats(traffic_bytes) / (floats(memory_bytes_per_s) * memory_efficiency)


FILL_SATURATION_FLOPS = 1e13
"""Training FLOPs per example [FLOPs] at which the fill loss halves: ``fill_examples`` counts
whole examples for images (4-100 GFLOPs each), but one 8,192-token sequence of an 8B model
(~490 TFLOPs) fills every SM by itself. Chosen by leave-one-GPU-out error on the calibration
rows over 1e11-1e15 (1e13: 18.9 % mean, against 19.1 % with no saturation); docs/model.md 4.3."""


@formula(
    "fixed_time_s",
    "{step_traffic_bytes} / ({memory_bandwidth_bytes_per_s} x {memory_efficiency}) + {launch_overhead_s}"
    " + {fill_examples} / (1 + {train_flops_per_example} / "
    + f"{FILL_SATURATION_FLOPS:.0e}".replace("+", "")  # "1e13": the text follows the constant
    + ") x ({compute_time_per_example_s} + {memory_time_per_example_s})",
)
def fixed_time_s(
    step_traffic_bytes: Numeric,
    memory_bytes_per_s: Numeric,
    memory_efficiency: Numeric,
    launch_overhead_s: Numeric,
    fill_examples: Numeric,
    per_example_s: Numeric,
    train_flops: Numeric = 0.0,
) -> Numeric:
    """Per-step time that does not grow with the batch [s].

    Weights, gradients and optimizer state are read and written once per step whatever the
    batch; kernel launches cost a fixed time; and a small batch cannot fill every SM, which
    costs about ``fill_examples`` examples' worth of time (a GPU-independent count, fitted),
    fewer when one example is itself enough work to fill the GPU:
    ``fill_examples / (1 + train_flops / FILL_SATURATION_FLOPS)``.
    """
    memory = floats(step_traffic_bytes) / (floats(memory_bytes_per_s) * memory_efficiency)
    fill = floats(fill_examples) / (1.0 + floats(train_flops) / FILL_SATURATION_FLOPS)
    return memory + launch_overhead_s + fill * per_example_s


@formula("model_step_time_s", "{step_model_rule}")
def model_step_time_s(batch_size: Numeric, per_example_s: Numeric, fixed_s: Numeric, stack_factor: Numeric) -> Numeric:
    """Modelled time of one training step at ``batch_size`` [s]."""
    return floats(stack_factor) * (floats(batch_size) * per_example_s + fixed_s)


def model_terms(
    batch_size: Numeric,
    train_flops: Numeric,
    peak_flops_per_s: Numeric,
    efficiency: Numeric,
    traffic_bytes: Numeric,
    memory_bytes_per_s: Numeric,
    memory_efficiency: Numeric,
    step_traffic_bytes: Numeric,
    launch_overhead_s: Numeric,
    fill_examples: Numeric,
    stack_factor: Numeric,
    flops_only: Numeric = 0.0,
    stack_s_per_byte: Numeric = 0.0,
) -> tuple[Numeric, Numeric, Numeric, Numeric]:
    """The model's terms and step time, one composition for the plan and the fit.

    Returns math time per example, memory time per example, fixed time per step and the
    step time [s]. ``flops_only`` (the articles' model) keeps the math term alone: no memory
    term, fixed part or stack factor. ``stack_s_per_byte`` is an eager stack's own cost per byte
    of the example's traffic [s/B] (calc.fit.eager_seconds_per_byte), added to each
    example's time: it does not follow the GPU's speed.
    """
    full = floats(flops_only) == 0
    c = compute_time_per_example_s(train_flops, peak_flops_per_s, efficiency)
    mem = where(full, memory_time_per_example_s(traffic_bytes, memory_bytes_per_s, memory_efficiency), 0.0)
    fixed = where(
        full,
        fixed_time_s(
            step_traffic_bytes,
            memory_bytes_per_s,
            memory_efficiency,
            launch_overhead_s,
            fill_examples,
            c + mem,
            train_flops,
        ),
        0.0,
    )
    eager = where(full, floats(stack_s_per_byte) * traffic_bytes, 0.0)
    t = model_step_time_s(batch_size, c + mem + eager, fixed, where(full, stack_factor, 1.0))
    return c, mem, fixed, t


def step_time_s(
    batch_size: Numeric,
    model_s: Numeric,
    measured_step_time_s: Numeric,
    measured_samples_per_s: Numeric,
    anchor_batch_size: Numeric,
    anchor_model_s: Numeric,
) -> tuple[Numeric, Numeric]:
    """Pick the most trusted step time; NaN marks "not given".

    A measured step time (or ``anchor_batch / measured rate``) is scaled by
    ``model_s / anchor_model_s``: exactly 1 when nothing changed since the measurement, so a
    measured figure is reproduced as it is. Returns the step time [s] and the method code
    (index into ``METHODS``).
    """
    step = floats(measured_step_time_s)
    rate = floats(measured_samples_per_s)
    with np.errstate(invalid="ignore", divide="ignore"):
        measured = where(np.isfinite(step), step, floats(anchor_batch_size) / rate)
        ratio = floats(model_s) / anchor_model_s
    have = np.isfinite(measured)
    # Nothing changed since the measurement: the model's two runs agree but for rounding (a sweep
    # evaluates on arrays), and the measured figure is kept as it is, labelled measured.
    same = np.abs(ratio - 1.0) <= 1e-9
    t = where(have, measured * where(same, 1.0, ratio), model_s)
    method = where(have, where(same, where(np.isfinite(step), 0.0, 1.0), 3.0), 2.0)
    return t, method


@formula(
    "scaling_efficiency",
    "{scaling_rule}",
)
def scaling_efficiency(
    gpus_per_job: Numeric, gpus_per_node: Numeric, within_node: Numeric, across_nodes: Numeric
) -> Numeric:
    """Per-GPU rate in a data-parallel job relative to one GPU alone [0-1].

    One GPU: 1. Several GPUs on one node: ``within_node`` (gradient all-reduce over NVLink
    or PCIe). More than one node: ``within_node x across_nodes`` (the network all-reduce).
    Weak scaling (fixed per-GPU batch), as published tables measure it.
    """
    g = floats(gpus_per_job)
    return where(g <= 1, 1.0, where(g <= gpus_per_node, within_node, floats(within_node) * across_nodes))


# ---------------------------------------------------------------- fp32 convolutions on CUDA cores
# With TF32 off (calc's "fp32"), convolutions run on the CUDA cores. Volta, Turing and GA100
# have 16 FP32 lanes per SM sub-partition: a warp's FFMA occupies them for two clocks, and the
# scheduler, which issues one warp instruction per clock, fills the other clock with the
# kernel's loads and integer address arithmetic on separate INT32 cores. GA10x, Ada, Hopper and
# Blackwell have 32 FP32 lanes per sub-partition (128 per SM), and their datasheet fp32 peak
# counts both halves: it is reached only if every issue slot is an FP32 instruction, and on
# GA10x/GH100 one of the two FP32 datapaths also runs the integer multiply-adds (IMAD) address
# arithmetic needs. A tuned GEMM (cuBLAS SGEMM) gets close: 51.6 TFLOP/s of the H100's 67, 77 %
# (benchmarks/results/gpu_step_times_h100.json, 8192^3, TF32 off). An implicit-GEMM convolution
# computes its gather addresses in the inner loop, and gets about one datapath's worth.

FP32_LANES_FED_PER_SM = 64
"""FP32 lanes an SM keeps busy in a convolution [1]: four schedulers x 16 lanes, one FFMA
issued every other clock, the other clock for the kernel's other instructions (the Volta and
GA100 layout, where the datasheet peak counts exactly these)."""

ARCHITECTURE_FP32_LANES: dict[str, tuple[int, str]] = {
    "Volta GV100": (
        64,
        "4 processing blocks of 16 FP32 + 16 INT32 cores, one warp scheduler each (Cornell Virtual "
        "Workshop, 'Inside a Volta SM'); 'instructions are performed over two cycles, and the "
        "schedulers can issue independent instructions every cycle' (NVIDIA Volta Tuning Guide 4.1.1)",
    ),
    "Turing TU10x": (
        64,
        "4 blocks, FP32 16 lanes on one issue port, INT32 16 lanes on another (thegpu.guru, Turing SM)",
    ),
    "Ampere GA100": (
        64,
        "A100: 6,912 FP32 cores on 108 SMs (A100 whitepaper, as quoted by TechPowerUp 2020); one FMA pipe "
        "for FP32 and IMAD (NVIDIA developer forum, 'Separate CUDA core pipeline for FP16 and FP32', 2024)",
    ),
    "Ampere GA10x": (
        128,
        "GA102 whitepaper: per partition one datapath of 16 FP32 cores and one of 16 FP32 or 16 INT32 "
        "('either 16 FP32 operations OR 16 INT32 operations per clock'); NVIDIA Ampere Tuning Guide 1.4.1.6: "
        "compute capability 8.6 has 2x the FP32 operations per cycle per SM of 8.0",
    ),
    "Ada AD10x": (
        128,
        "as GA10x: 128 FP32 per SM, or 64 FP32 + 64 INT32 (ComputerBase forum, GeForce Blackwell"
        " RTX 50 details thread, 2025)",
    ),
    "Hopper GH100": (
        128,
        "32 FP32 cores per SM sub-partition, one warp scheduler (jax-ml scaling book, 'How to think about "
        "GPUs'); FMA pipes as GA10x: FMAheavy runs FP32 and IMAD, FMAlite FP32 only (NVIDIA developer forum, 2024)",
    ),
    "Blackwell GB100": (
        128,
        "128 FP32 + 128 INT32 cores in 4 blocks; each block issues one warp of FP32 or INT32 per clock"
        " (Cornell Virtual Workshop, 'Inside a Blackwell B200 SM')",
    ),
    "Blackwell GB20x": (
        128,
        "128 FP32 or INT32 lanes per SM (ComputerBase forum, GeForce Blackwell RTX 50 details thread, 2025)",
    ),
}
"""FP32 lanes per SM of each NVIDIA architecture [1], with the source."""


def fp32_convolution_share(fp32_lanes_per_sm: Numeric) -> Numeric:
    """Share of the datasheet fp32 peak an fp32 convolution can reach [0-1].

    ``min(1, FP32_LANES_FED_PER_SM / lanes)``: 1 on a 64-lane SM (V100, A100), 1/2 on a
    128-lane one (H100, RTX 4090): see the comment above ``FP32_LANES_FED_PER_SM``.

    References
    ----------
    NVIDIA Volta Tuning Guide 4.1.1; NVIDIA Ampere GPU Architecture Tuning Guide 1.4.1.6; GA102
    whitepaper (2020), SM datapaths; docs/model.md 4.3.1.
    """
    return np.minimum(1.0, FP32_LANES_FED_PER_SM / floats(fp32_lanes_per_sm))
