"""Batch size from GPU memory (docs/model.md section 3).

model_state = params x bytes_per_param(optimizer) / state_shards
n_max       = floor((gpu_memory - reserved - model_state) / activation_bytes_per_example)
n           = rounded(n_max)
"""

from __future__ import annotations

import numpy as np

from calc._types import Numeric, ceil, floats, floor, maximum, minimum, quiet, where
from calc.formula import formula, note

note("batch_size", "{batch_rule}")

BYTES_PER_PARAM = {
    "weights_only": 4.0,
    "sgd": 8.0,
    "sgd_momentum": 12.0,
    "adam": 16.0,
    "adamw": 16.0,
}
"""Training state per parameter [bytes] by optimizer.

Notes
-----
``weights_only`` is the article's count (4 B fp32 weights, "98 MB params"). ``sgd``: weights +
gradients, 4 + 4. ``sgd_momentum``: + 4 B momentum = 12. ``adam``/``adamw``: + 8 B (m, v) = 16.
The totals hold for fp32 and for mixed precision: PyTorch autocast keeps fp32 weights and
gradients, and ZeRO's mixed-precision Adam count is 2 + 2 + 12 = 16 (Rajbhandari et al. 2020).

References
----------
Hugging Face accelerate ``estimate-memory``; Rajbhandari et al., "ZeRO", SC 2020.
"""

OPTIMIZER_BY_FAMILY = {"cnn": "sgd_momentum", "transformer": "adamw"}
"""The optimizer a plan assumes when none is given, by model family (models.yaml ``family``).

CNNs train with SGD and momentum 0.9 (torchvision's classification references, train.py:
``--opt`` default ``sgd``, ``--momentum`` default 0.9); transformers with AdamW (Llama 2, Touvron
et al. 2023, section 2.2: AdamW, beta1 0.9, beta2 0.95; GPT-3, Brown et al. 2020: Adam). A model
of no family (``blank``) gets ``DEFAULT_OPTIMIZER``.
"""

DEFAULT_OPTIMIZER = "adamw"
"""The optimizer of a model with no family: AdamW, the larger state of the two (16 B per
parameter against 12), so memory is not under-counted where the model is unknown."""


def default_optimizer(family: str) -> str:
    """The optimizer assumed for a model family when none is given (``OPTIMIZER_BY_FAMILY``)."""
    return OPTIMIZER_BY_FAMILY.get(family, DEFAULT_OPTIMIZER)


FRAMEWORK_ZERO_STAGE = {"fsdp": 3, "nemo": 1}
"""The state sharding a framework applies unless told otherwise (``zero_stage`` empty): PyTorch FSDP2
(torchtitan) shards weights, gradients and optimizer state over the data x context ranks (ZeRO-3);
NeMo and Megatron-Bridge run Megatron-Core with its distributed optimizer (ZeRO-1 over the data x
context ranks, Megatron-LM README "Distributed Optimizer"). DDP and plain Megatron-LM: none."""


def zero_stage_used(zero_stage: int | None, framework: str | None) -> int:
    """The ZeRO stage a plan runs: the one given, else its framework's default (``FRAMEWORK_ZERO_STAGE``), else 0."""
    if zero_stage is not None:
        return zero_stage
    return FRAMEWORK_ZERO_STAGE.get(framework or "", 0)


ROUNDINGS = ("pow2", "multiple_of_8", "none")
"""Batch rounding: largest power of two (the article), largest multiple of 8, or exact."""


@formula("model_state_bytes", "{state_rule}")
def model_state_bytes(params: Numeric, bytes_per_param: Numeric, state_shards: Numeric = 1.0) -> Numeric:
    """Weights + gradients + optimizer state held on one GPU [bytes].

    ``state_shards`` > 1 models ZeRO-3 / FSDP full sharding across that many GPUs.
    """
    return floats(params) * bytes_per_param / state_shards


MEGATRON_MIXED_STATE = {"fp16": (20.0, 2.0), "bf16": (18.0, 4.0), "fp8": (18.0, 4.0)}
"""Adam's bytes per parameter and the gradients' bytes as Megatron-Core keeps them in mixed precision
[B]: fp16 parameters and gradients, fp32 main parameters, main gradients and both moments (20 = 2 + 2
+ 16); bf16 parameters with fp32 gradients, which are the main gradients (18 = 2 + 4 + 12). Megatron-LM
README, "Distributed Optimizer": 20 and 18 bytes per parameter, 4 + 16/d and 6 + 12/d distributed over
d data-parallel ranks. fp8 (Transformer Engine) keeps the bf16 parameters and casts per GEMM: as bf16."""


def state_split(
    bytes_per_param: Numeric, element_bytes: Numeric, grad_bytes: Numeric | None = None
) -> tuple[Numeric, Numeric, Numeric]:
    """Weights, gradients and optimizer state per parameter [bytes]: ``(w, g, o)``.

    The weights and gradients are kept at the training precision's element size ``e`` (2 B for
    mixed precision, 4 B for fp32/tf32), the rest of the optimizer's bytes are its state (fp32
    master weights, momenta): Adam in mixed precision ``2 + 2 + 12`` (Rajbhandari et al. 2020,
    ZeRO, section 3.1, K = 12), in fp32 ``4 + 4 + 8``. ``grad_bytes`` where the gradients are kept
    at another size than the weights (Megatron's fp32 gradients beside bf16 weights:
    ``MEGATRON_MIXED_STATE``).
    """
    total = floats(bytes_per_param)
    w = minimum(total, element_bytes)
    g = minimum(total - w, element_bytes if grad_bytes is None else grad_bytes)
    return w, g, total - w - g


def sharded_state_parts(
    params: Numeric,
    bytes_per_param: Numeric,
    element_bytes: Numeric,
    model_parallel: Numeric,
    shard_ranks: Numeric,
    zero_stage: Numeric,
    grad_bytes: Numeric | None = None,
) -> tuple[Numeric, Numeric, Numeric]:
    """Weights, gradients and optimizer state on one GPU [bytes], as the frameworks shard them.

    Tensor and pipeline ranks split every tensor (``model_parallel = t x p``). Over the ``D``
    data-parallel ranks of a shard group (all of them, or a node's with hybrid sharding) ZeRO
    stage 1 shards the optimizer state, stage 2 also the gradients, stage 3 (FSDP FULL_SHARD)
    also the weights (Rajbhandari et al. 2020, Figure 1)::

        weights = P / (t p) x w / D^[z>=3],  gradients = P / (t p) x g / D^[z>=2],
        optimizer = P / (t p) x o / D^[z>=1]

    Megatron's distributed optimizer is stage 1 over the data-parallel (x context-parallel)
    ranks (Megatron-LM docs, "Distributed Optimizer"); PyTorch DDP is stage 0.
    """
    w, g, o = state_split(bytes_per_param, element_bytes, grad_bytes)
    z, d = floats(zero_stage), maximum(floats(shard_ranks), 1.0)
    per_rank = floats(params) / floats(model_parallel)
    return (
        per_rank * _f(w) / where(z >= 3, d, 1.0),
        per_rank * _f(g) / where(z >= 2, d, 1.0),
        per_rank * _f(o) / where(z >= 1, d, 1.0),
    )


@formula(
    "smallest_shard_group",
    "ceil(({weights_bytes} + {gradients_bytes} + {optimizer_state_bytes}) x {shard_ranks} (unsharded)"
    " / ({gpu_memory_bytes} - {reserved_bytes} - {activation_bytes_per_example})):"
    " the ZeRO-3 group one example fits in",
)
def smallest_shard_group(
    unsharded_state_bytes: Numeric, gpu_memory_bytes: Numeric, reserved_bytes: Numeric, activation_bytes: Numeric
) -> Numeric:
    """The fewest data-parallel ranks a fully sharded (ZeRO-3 / FSDP) state spans for one example to fit [count].

    ``ceil(state / (memory - reserved - one example's activations))``, where ``state`` is the weights,
    gradients and optimizer state of one tensor x pipeline rank unsharded; infinite where one
    example's activations alone do not fit (no sharding of the state helps: checkpoint or split them).
    """
    free = floats(gpu_memory_bytes) - reserved_bytes - activation_bytes
    with quiet(divide="ignore", invalid="ignore"):
        need = ceil(floats(unsharded_state_bytes) / free)
    return where(free > 0, maximum(need, 1.0), np.inf)


_f = floats  # one scenario's numbers stay NumPy scalars (calc._types)


@formula(
    "max_batch_size",
    "floor(({gpu_memory_bytes} - {reserved_bytes} - {model_state_bytes}) / {activation_bytes_per_example})",
)
def max_batch_size(
    gpu_memory_bytes: Numeric,
    reserved_bytes: Numeric,
    model_state_bytes: Numeric,
    activation_bytes_per_example: Numeric,
) -> Numeric:
    """Largest batch whose activations fit beside the model state [examples].

    ``n_max = floor((gpu_memory - reserved - model_state) / activation_bytes_per_example)``,
    never below 0. A result of 0 means the model does not fit even at batch 1.
    """
    free = floats(gpu_memory_bytes) - reserved_bytes - model_state_bytes
    return maximum(floor(free / activation_bytes_per_example), 0.0)


def round_batch(n_max: Numeric, rounding: Numeric) -> Numeric:
    """Round ``n_max`` down by rule: 0 = ``pow2``, 1 = ``multiple_of_8``, 2 = ``none``.

    A multiple of 8 below 8 is impossible, so ``multiple_of_8`` keeps ``n_max`` there.
    """
    n = floats(n_max)
    with quiet(divide="ignore"):
        pow2 = where(n >= 1, 2.0 ** floor(np.log2(maximum(n, 1.0))), 0.0)
    mult8 = where(n >= 8, floor(n / 8) * 8, n)
    return where(rounding == 0, pow2, where(rounding == 1, mult8, n))


@formula("memory_used_bytes", "{reserved_bytes} + {model_state_bytes} + {batch_size} x {activation_bytes_per_example}")
def memory_used_bytes(
    batch_size: Numeric,
    reserved_bytes: Numeric,
    model_state_bytes: Numeric,
    activation_bytes_per_example: Numeric,
) -> Numeric:
    """GPU memory a batch of ``batch_size`` takes [bytes]: reserve + state + n x activations."""
    return floats(reserved_bytes) + model_state_bytes + batch_size * activation_bytes_per_example
