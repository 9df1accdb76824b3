"""Per-step GPU time t: a roofline-style sum of compute, memory traffic and a fixed part.

    t_model(n) = stack x [ n x (F / (P x e_c) + M + s_eager x B)
                           + n_fill / (1 + F / 1e13) x (F / (P x e_c) + M) + S / (W x e_m) + t_launch ]
    M          = B x (k - d) / (W x e_m) + B x d / (W x e_dw)

with, per example, F training FLOPs (forward + backward, measured), B bytes read and written
in GPU memory (measured per op, one kernel per op), k the share of it the software stack keeps
(1, or less where it fuses element-wise ops: ``stack_traffic_share``), d the share in depthwise
convolutions, which reach e_dw of the bandwidth, and, per step, S batch-independent bytes (weights, gradients
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

from collections.abc import Mapping

import numpy as np

from calc._types import Numeric, any_, floats, isfinite, maximum, minimum, not_, quiet, scalar, where
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
    "{memory_traffic_bytes_per_example} x ({stack_traffic_share} - {depthwise_traffic_share})"
    " / ({memory_bandwidth_bytes_per_s} x {memory_efficiency}) + {memory_traffic_bytes_per_example}"
    " x {depthwise_traffic_share} / ({memory_bandwidth_bytes_per_s} x {depthwise_memory_efficiency})",
)
def memory_time_per_example_s(
    traffic_bytes: Numeric,
    memory_bytes_per_s: Numeric,
    memory_efficiency: Numeric,
    kept_share: Numeric = 1.0,
    depthwise_share: Numeric = 0.0,
    depthwise_efficiency: Numeric = 1.0,
) -> Numeric:
    """Time one example's GPU-memory reads and writes take [s].

    ``traffic_bytes`` is the per-op traffic measured on an unfused stack; the stack keeps
    ``kept_share`` of it (``stack_traffic_share``: 1, or less where it fuses element-wise ops).
    ``depthwise_share`` of it is depthwise convolutions, whose kernels reach
    ``depthwise_efficiency`` of the bandwidth instead of ``memory_efficiency``::

        t = B x (kept - d) / (W x e_m) + B x d / (W x e_dw)

    Fusion removes element-wise traffic only, never a convolution's, so ``d <= kept``.
    """
    b, w = floats(traffic_bytes), floats(memory_bytes_per_s)
    d = floats(depthwise_share)
    return b * (floats(kept_share) - d) / (w * memory_efficiency) + b * d / (w * depthwise_efficiency)


STACK_FUSES: dict[str, float] = {"ngc": 0.0, "eager": 0.0, "optimized": 1.0, "compiled": 1.0}
"""Whether a software stack folds element-wise ops into their neighbouring kernels [0 or 1]
(calc.catalog.STACKS): NVIDIA's optimised stacks (MXNet's NHWC BatchNorm with a fused ReLU and
BatchNormAddRelu, XLA) and torch.compile (Inductor fuses point-wise ops and a training
batch norm's normalisation) do; eager PyTorch and NGC PyTorch (DeepLearningExamples, channels_last,
one kernel per op) run each op on its own."""

UNARY_POINTWISE = frozenset({"relu", "relu_", "silu", "silu_", "gelu", "sigmoid", "clone", "_to_copy", "copy_", "div"})
"""aten ops that read one tensor and write one of its size: fused into their producer, their
whole traffic goes (``div`` here divides by a scalar: the loss and pooling scale)."""

BINARY_POINTWISE = frozenset(
    {"add", "add_", "mul", "threshold_backward", "silu_backward", "gelu_backward", "sigmoid_backward"}
)
"""aten ops that read two tensors and write one: fused into the producer of one operand, they
still read the other, so two of their three passes go (a residual add read by the fused batch
norm; a ReLU backward's mask read by the fused batch-norm backward)."""


def fused_traffic_share(op_bytes: Mapping[str, Numeric], total_bytes: Numeric) -> Numeric:
    """Share of a step's per-example traffic a fusing stack removes [0-1].

    ``(sum(unary) + 2/3 x sum(binary)) / total``, over the per-op bytes of an unfused step
    (calc.measure.ModelMeasurement.traffic_by_op): the unary point-wise ops vanish into their
    producer, the binary ones keep the read of their second operand (``UNARY_POINTWISE``,
    ``BINARY_POINTWISE``). Ops in neither set (convolutions, matmuls, normalisations, pooling,
    attention) keep their traffic.

    References
    ----------
    MXNet (NGC build): BatchNorm(act_type='relu'), BatchNormAddRelu (NHWC, cuDNN);
    PyTorch 2 Inductor's point-wise fusion (docs.pytorch.org, torch.compiler); docs/model.md 4.3.2.
    """
    unary = sum(float(v) for k, v in op_bytes.items() if k in UNARY_POINTWISE)
    binary = sum(float(v) for k, v in op_bytes.items() if k in BINARY_POINTWISE)
    return floats((unary + 2.0 / 3.0 * binary) / floats(total_bytes))


@formula("stack_traffic_share", "1 - {stack_fuses} x {fused_traffic_share}")
def stack_traffic_share(fused_share: Numeric, fuses: Numeric) -> Numeric:
    """Share of the unfused per-example traffic the stack moves [0-1]: ``1 - fuses x fused_share``."""
    return 1.0 - floats(fuses) * fused_share


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
    kept_share: Numeric = 1.0,
    depthwise_share: Numeric = 0.0,
    depthwise_efficiency: Numeric = 1.0,
) -> tuple[Numeric, Numeric, Numeric, Numeric]:
    """The model's terms and step time, one composition for the plan and the fit.

    Returns math time per example, memory time per example, fixed time per step and the
    step time [s]. ``flops_only`` (the articles' model) keeps the math term alone: no memory
    term, fixed part or stack factor. ``stack_s_per_byte`` is an eager stack's own cost per byte
    of the example's traffic [s/B] (calc.fit.eager_seconds_per_byte), added to each
    example's time: it does not follow the GPU's speed. ``kept_share``, ``depthwise_share`` and
    ``depthwise_efficiency`` split the memory term (``memory_time_per_example_s``): the share of the
    traffic a fusing stack keeps, and depthwise convolutions at their own share of the bandwidth.
    """
    full = floats(flops_only) == 0
    c = compute_time_per_example_s(train_flops, peak_flops_per_s, efficiency)
    mem = where(
        full,
        memory_time_per_example_s(
            traffic_bytes, memory_bytes_per_s, memory_efficiency, kept_share, depthwise_share, depthwise_efficiency
        ),
        0.0,
    )
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
    mid_model_s: Numeric | None = None,
    band_low: Numeric = 0.0,
    band_high: Numeric = np.inf,
) -> tuple[Numeric, Numeric, Numeric, Numeric]:
    """Pick the most trusted step time; NaN marks "not given".

    A measured step time (or ``anchor_batch / measured rate``) is re-projected
    (``reprojection``): by the model's ratio where the batch or precision changed on the measured
    GPU, and by the model's speed-up between the GPUs kept inside the published band. Nothing
    changed since the measurement gives exactly 1, so a measured figure is reproduced as it is.
    Returns the step time [s], the method code (index into ``METHODS``), the ratio the measured step
    was multiplied by and the GPU rate ratio used (both 1 without a re-projection).
    """
    step = floats(measured_step_time_s)
    rate = floats(measured_samples_per_s)
    given = isfinite(step)
    if not (any_(given) or any_(isfinite(rate))):  # nothing measured: the model's step, nothing moved
        # One scenario: 1.0 itself (np.shape and np.ones on a number cost ~2 us a plan).
        one = floats(1.0) if scalar(step) else floats(np.ones(np.shape(step)))
        return floats(model_s), 2.0 * one, one, one
    mid = floats(model_s) if mid_model_s is None else floats(mid_model_s)
    with quiet(invalid="ignore", divide="ignore"):
        measured = where(given, step, floats(anchor_batch_size) / rate)
        ratio, gpu_rate = reprojection(model_s, mid, anchor_model_s, band_low, band_high)
    have = isfinite(measured)
    # Nothing changed since the measurement: the model's two runs agree but for rounding (a sweep
    # evaluates on arrays), and the measured figure is kept as it is, labelled measured.
    same = np.abs(ratio - 1.0) <= 1e-9
    t = where(have, measured * where(same, 1.0, ratio), model_s)
    method = where(have, where(same, where(given, 0.0, 1.0), 3.0), 2.0)
    moved = have & not_(same)
    return t, method, where(moved, ratio, 1.0), where(moved, gpu_rate, 1.0)


@formula(
    "reprojection_ratio",
    "({mid_model_step_time_s} / {anchor_model_step_time_s}) / {reprojection_gpu_rate_ratio}"
    " (1: the measurement is used as it is)",
)
def reprojection(
    model_s: Numeric, mid_model_s: Numeric, anchor_model_s: Numeric, band_low: Numeric, band_high: Numeric
) -> tuple[Numeric, Numeric]:
    """How far a measured step moves to another GPU, batch or precision [1, 1].

    The measured GPU's own change of batch and precision goes by the model
    (``mid / anchor``: the model on the measured GPU at the new batch and precision, over the model
    where it was measured). The change of GPU goes by the model's rate ratio ``mid / model``, kept
    inside ``[band_low, band_high]``, the published rates between those GPUs (else their datasheets'
    bandwidth and peak ratios): a model's bias on one GPU would otherwise land on every GPU the
    measurement is moved to. Returns the step-time ratio applied and the GPU rate ratio used.
    """
    m, mid, a = floats(model_s), floats(mid_model_s), floats(anchor_model_s)
    gpu_rate = minimum(maximum(mid / m, band_low), band_high)
    ratio: Numeric = mid / a / gpu_rate
    return ratio, gpu_rate


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
    return minimum(1.0, FP32_LANES_FED_PER_SM / floats(fp32_lanes_per_sm))


# ------------------------------------------------------ tensor-core convolutions fed from shared memory
# An implicit-GEMM convolution stages its input and filter tiles in shared memory, which delivers 32
# banks x 4 B = 128 B per clock per SM (NVIDIA CUDA C++ Programming Guide, "Shared Memory": 32 banks,
# each 32 bits wide, one access per bank per clock; AMD's LDS likewise 128 B per clock per CU). The
# FLOPs a tile performs per byte it loads are fixed by the tile shape, not by the GPU, so the tensor
# cores run at most ``flops_per_shared_byte x 128 B`` per clock per SM: GPUs whose tensor cores do
# more per clock than that (Hopper's 4096 16-bit FLOPs, Blackwell's 8192) wait on shared memory in a
# convolution, while V100 (1024), A100 (2048) and the GeForce cards' half-rate FP32-accumulate tensor
# cores (512) reach their datasheet peak. ``flops_per_shared_byte`` is fitted once, globally, on the
# CNN rows (calc.fit); a transformer's GEMMs use larger tiles and keep the full peak.

SHARED_MEMORY_BYTES_PER_CLOCK = 128.0
"""Shared memory delivered per clock per SM [B]: 32 banks x 4 B (CUDA C++ Programming Guide)."""

OPERAND_BYTES = {"tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0}
"""Bytes per operand element a tensor-core convolution loads, by precision [B]."""


def tensor_convolution_share(
    tensor_flops_per_clock_per_sm: Numeric, operand_bytes: Numeric, flops_per_shared_byte: Numeric
) -> Numeric:
    """Share of the tensor peak a convolution can reach when shared memory feeds it [0-1].

    ``min(1, flops_per_shared_byte x 128 B / (operand_bytes x tensor FLOPs per clock per SM))``:
    the FLOPs per 16-bit byte are halved for 4-byte TF32 operands and doubled for 1-byte fp8.
    """
    feed = floats(flops_per_shared_byte) * SHARED_MEMORY_BYTES_PER_CLOCK / floats(operand_bytes)
    return minimum(1.0, feed / floats(tensor_flops_per_clock_per_sm))
