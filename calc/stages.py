"""The evaluate stages: every formula of a plan, vectorised, in named steps (memory, compute,
cache, demand, host, storage, pipeline, checkpoint, transfer). Each stage declares the outputs it
computes (calc.registry); ``evaluate`` runs them in order on numbers or NumPy arrays."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from calc import checkpoint, compute, demand, host, memory, pipeline, resolution, storage, transfer, transformer
from calc._types import (
    Numeric,
    all_,
    any_,
    clip,
    divide,
    flag,
    floats,
    isfinite,
    maximum,
    minimum,
    not_,
    numpy_scalars,
    python_scalars,
    quiet,
    scalar,
    where,
)
from calc.registry import BY_STAGE, KEPT, OUTPUTS, STATES, STEPS, Output, stage
from calc.registry import check as registry_check
from calc.scenario import ask

STAGE_KEYS = {s: f"{s}_samples_per_s_per_gpu" for s in pipeline.STAGES}


Arrays = dict[str, Numeric]


def _shards(x: Mapping[str, Numeric]) -> Any:
    """GPUs holding a piece of the model state: ``state_shards``, at least tensor x pipeline
    ranks (they always split the state). The one place this rule is written."""
    return maximum(_a(x["state_shards"]), _a(x["tensor_parallel"]) * x["pipeline_parallel"])


_a = floats  # one scenario's numbers stay NumPy scalars (calc._types)


@stage(
    Output(
        "train_resolution",
        "count",
        "Training resolution",
        "px",
        formula="{src_train_resolution}",
        not_given="no image resolution",
    ),
    Output("forward_flops_per_example", "flops", "Forward FLOPs per example"),
    Output(
        "resolution_scale",
        "count",
        "Activations and traffic per example / at the model's resolution",
        formula="CNN: ({train_resolution} / {reference_resolution})^2; ViT: tokens / tokens at {reference_resolution}",
    ),
    keep=("anchor_resolution_scale", "anchor_forward_flops_per_example", "reference_forward_flops"),
)
def evaluate_resolution(x: Mapping[str, Numeric], out: Arrays) -> None:
    """An image model at its training resolution: FLOPs, activations and traffic per example
    follow its pixels (CNN) or tokens (ViT) from the preset's (calc.resolution); given figures stand."""
    ref, patch = x["reference_resolution"], x["vision_patch"]
    if SKIP_INERT and _no_image(x):
        # One scenario of a model without an image resolution (an LLM): the formulas' wheres keep the
        # given FLOPs and pick scale 1 and resolution 0 (~3 us of formulas).
        out["train_resolution"] = floats(0.0)
        out["reference_forward_flops"] = x["forward_flops_per_example"]
        out["forward_flops_per_example"] = out["anchor_forward_flops_per_example"] = floats(
            x["forward_flops_per_example"]
        )
        out["resolution_scale"] = out["anchor_resolution_scale"] = floats(1.0)
        return
    layers, hidden = x["vision_layers"], x["vision_hidden"]
    out["train_resolution"] = where(isfinite(_a(x["train_resolution"])), x["train_resolution"], 0.0)
    out["reference_forward_flops"] = x["forward_flops_per_example"]
    given = _a(x["forward_flops_per_example_at_reference"]) == 0
    for key, px in (
        ("forward_flops_per_example", x["train_resolution"]),
        ("anchor_forward_flops_per_example", x["anchor_resolution"]),
    ):
        scaled = resolution.forward_flops(x["forward_flops_per_example"], px, ref, patch, layers, hidden)
        out[key] = where(given, x["forward_flops_per_example"], scaled)
    out["resolution_scale"] = resolution.per_example_scale(x["train_resolution"], ref, patch)
    out["anchor_resolution_scale"] = resolution.per_example_scale(x["anchor_resolution"], ref, patch)


def _no_image(x: Mapping[str, Numeric]) -> bool:
    """No image resolution, one scenario: reference, training and anchor sides and the ViT patch all NaN."""
    for k in ("reference_resolution", "train_resolution", "anchor_resolution", "vision_patch"):
        v = x[k]
        if type(v) is not float or not math.isnan(v):
            return False
    return True


@stage(
    Output("gpu_memory_bytes", "bytes", "GPU memory", binary=True, formula="{src_gpu_memory_bytes}"),
    Output("reserved_bytes", "bytes", "Reserved (context, allocator)", binary=True, formula="input (scenario)"),
    Output("model_params", "count", "Model parameters", "parameters", formula="{src_params}", integer=True),
    Output("model_state_bytes", "bytes", "Model state", binary=True),
    Output(
        "activation_bytes_per_example",
        "bytes",
        "Activations per example",
        binary=True,
        formula="{src_activation_bytes_per_example}",
    ),
    Output("max_batch_size", "count", "Largest batch that fits", "examples", integer=True),
    Output("batch_size", "count", "Batch size per GPU", "examples", integer=True),
    Output("memory_used_bytes", "bytes", "GPU memory used", binary=True),
    Output("weights_bytes", "bytes", "Weights per GPU", binary=True, formula="{state_rule}: the weights"),
    Output("gradients_bytes", "bytes", "Gradients per GPU", binary=True, formula="{state_rule}: the gradients"),
    Output(
        "optimizer_state_bytes",
        "bytes",
        "Optimizer state per GPU",
        binary=True,
        formula="{state_rule}: master weights and moments",
    ),
    Output(
        "activations_bytes",
        "bytes",
        "Activations per GPU (the batch)",
        binary=True,
        formula="{batch_size} x {activation_bytes_per_example}",
    ),
    Output("smallest_shard_group", "count", "Fewest GPUs the state must be sharded over", "GPUs", unlimited=True),
    keep=("checkpointing_used", "shard_ranks", "zero_stage_used"),
    states={"fits": ("no", "yes")},
)
def evaluate_memory(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Model state, the largest batch that fits and the batch used."""
    for k in ("gpu_memory_bytes", "reserved_bytes"):
        out[k] = x[k]
    # A preset's activations at the training resolution (calc.resolution; given ones stand).
    at_ref = _a(x["activation_bytes_per_example_at_reference"]) > 0
    act_in = _a(x["activation_bytes_per_example"]) * where(at_ref, out["resolution_scale"], 1.0)
    out["activation_bytes_per_example"] = act_in
    out["model_params"] = x["params"]
    given = _a(x["model_state_given"])
    arch = _a(x["arch"]) > 0
    z, shard_ranks = state_layout(x)
    out["zero_stage_used"], out["shard_ranks"] = z, shard_ranks
    any_arch = any_(arch)
    unsharded = _state(x, out, arch, any_arch, z, shard_ranks, given)
    fixed = _a(x["fixed_batch"])

    seen: dict[float, Numeric] = {}  # one scenario's activations per checkpointing mode, computed once

    def activations(mode: Numeric) -> Numeric:
        if not any_arch:
            return act_in
        key = float(mode) if scalar(mode) else None
        if key in seen:
            return seen[key]
        act = transformer.activation_bytes_per_sequence(
            *active_dims(x),
            x["gated"],
            mode,
            x["tensor_parallel"],
            x["context_parallel"],
            x["pipeline_parallel"],
            x["gradient_accumulation"],
            x["kernels"],
            x["virtual_pipeline_stages"],
        )
        got = where(arch & (_a(x["activation_given"]) == 0), _a(act) * x["element_scale"], act_in)
        if key is not None:
            seen[key] = got
        return got

    mode = _a(x["checkpointing"])
    if any_(mode < 0):
        # auto: the least recompute that fits (the fixed batch, else one sequence), full where none does.
        free = _a(x["gpu_memory_bytes"]) - x["reserved_bytes"] - out["model_state_bytes"]

        def fits(m: float) -> Any:
            return where(isfinite(fixed), fixed, 1.0) * _a(activations(m)) <= free

        none = fits(0.0)
        if scalar(none):  # one scenario: selective's activations only where none do not fit (~4 us a mode)
            chosen: Numeric = 0.0 if none else 1.0 if fits(1.0) else 2.0
        else:
            chosen = where(none, 0.0, where(fits(1.0), 1.0, 2.0))
        mode = where(mode < 0, where(arch, chosen, 0.0), mode)
    out["checkpointing_used"] = mode
    act = activations(mode)
    out["activation_bytes_per_example"] = act
    n_max = memory.max_batch_size(x["gpu_memory_bytes"], x["reserved_bytes"], out["model_state_bytes"], act)
    out["max_batch_size"] = n_max
    n = where(isfinite(fixed), fixed, memory.round_batch(n_max, x["rounding"]))
    out["batch_size"] = where((n_max >= 1) | isfinite(fixed), n, 0.0)
    out["memory_used_bytes"] = memory.memory_used_bytes(
        out["batch_size"], x["reserved_bytes"], out["model_state_bytes"], act
    )
    out["activations_bytes"] = _a(out["batch_size"]) * act
    out["smallest_shard_group"] = memory.smallest_shard_group(
        unsharded, x["gpu_memory_bytes"], x["reserved_bytes"], act
    )
    # Fits: at batch 1 with an automatic batch; the whole fixed batch when one is given.
    out["fits"] = where(isfinite(fixed), out["memory_used_bytes"] <= _a(x["gpu_memory_bytes"]), n_max >= 1)


def _state(
    x: Mapping[str, Numeric], out: Arrays, arch: Any, any_arch: bool, z: Numeric, shard_ranks: Numeric, given: Any
) -> Numeric:
    """The model state per GPU and its parts (weights, gradients, optimizer); returns one tensor x pipeline
    rank's state unsharded (calc.memory.smallest_shard_group)."""
    # Mixed-precision transformers keep 16-bit weights and gradients (ZeRO's 2 + 2 + 12); autocast CNNs fp32 ones.
    mp = _a(x["tensor_parallel"]) * x["pipeline_parallel"]
    if any_arch:
        element = where(arch, 2.0 * _a(x["element_scale"]), 4.0)
        grads = _a(x["grad_element_bytes"])
        grads = where(isfinite(grads), grads, element)
        # A mixture of experts: the routed experts split over the expert-parallel ranks, and their
        # optimizer shards over the data-parallel ranks left (Megatron-Core's expert data parallel).
        no_experts = _no_experts(x)
        experts = floats(0.0) if no_experts else moe_expert_params(x)
        ep = _a(x["expert_parallel"])
        dense = memory.sharded_state_parts(
            _a(x["params"]) - experts, x["bytes_per_param"], element, mp, shard_ranks, z, grads
        )
        if no_experts and all(type(a) in _SCALARS and 0 < a < np.inf for a in dense):
            # A dense model's routed parts are 0 x a finite number: adding ±0 to a positive finite part is that part.
            parts = list(dense)
        else:
            routed = memory.sharded_state_parts(
                experts, x["bytes_per_param"], element, mp * ep, shard_ranks / ep, z, grads
            )
            parts = [_a(a) + b for a, b in zip(dense, routed, strict=True)]
        unsharded = (_a(x["params"]) - experts + experts / ep) / mp * x["bytes_per_param"]
    else:
        # No transformer by its architecture (a CNN plan): no experts, autocast's fp32 weights and gradients.
        parts = list(memory.sharded_state_parts(x["params"], x["bytes_per_param"], 4.0, mp, shard_ranks, z))
        unsharded = _a(x["params"]) / mp * x["bytes_per_param"]
    state = _a(parts[0]) + parts[1] + parts[2]
    # A typed model state keeps the computed split's proportions.
    scale = where(isfinite(given), given / maximum(state, 1e-300), 1.0)
    out["weights_bytes"], out["gradients_bytes"], out["optimizer_state_bytes"] = (_a(p) * scale for p in parts)
    out["model_state_bytes"] = where(isfinite(given), given, state)
    unsharded = _a(unsharded) * scale
    return unsharded


def active_dims(x: Mapping[str, Numeric]) -> transformer.Dims:
    """The architecture (calc.transformer.dims) with the FFN width a token runs through (a mixture of
    experts' active experts, calc.transformer.moe_ffn): FLOPs, activations and traffic follow it. The
    tuple with that width put in, not dims of a copy of the ~200 inputs (2 us a copy, 4 a plan)."""
    layers, hidden, heads, kv_heads, _, vocab, seq = transformer.dims(x)
    return layers, hidden, heads, kv_heads, x["ffn_active"], vocab, seq


_SCALARS = (float, np.float64)


def _no_experts(x: Mapping[str, Numeric]) -> bool:
    """One dense scenario (``SKIP_INERT``): no routed experts, no expert parallelism, so its expert terms are
    +0 (``moe_expert_params``: 0 MoE layers x 0 experts x finite widths) and the skip sets that +0 itself."""
    e, ep = x["experts"], x["expert_parallel"]
    return SKIP_INERT and type(e) in _SCALARS and e == 0 and type(ep) in _SCALARS and ep == 1


def moe_expert_params(x: Mapping[str, Numeric]) -> Numeric:
    """Routed-expert parameters of a transformer (0 for a dense one or a model without architecture)."""
    got = transformer.expert_params(
        x["layers"], x["dense_layers"], x["hidden"], x["expert_ffn_hidden"], x["experts"], x["gated"]
    )
    return where(_a(x["arch"]) > 0, got, 0.0)


def data_parallel_ranks(x: Mapping[str, Numeric]) -> Any:
    """Data- (x context-) parallel ranks of one job [count]: ``max(gpus_per_job / (TP x PP), 1)``.

    Written once: the state's shard group, the step's data-parallel traffic and the checkpoint's
    writing ranks all count them this way.
    """
    return maximum(_a(x["gpus_per_job"]) / (_a(x["tensor_parallel"]) * _a(x["pipeline_parallel"])), 1.0)


def state_layout(x: Mapping[str, Numeric]) -> tuple[Numeric, Numeric]:
    """The ZeRO stage and the data-parallel ranks one sharded copy of the state spans ``(z, D)``.

    ``shard_group`` when given; else ``state_shards`` (GPUs holding a piece, tensor and pipeline
    ranks included: ZeRO-3 over ``state_shards / (t p)``, the older way to state FSDP); else every
    data-parallel rank (x context-parallel: Megatron's distributed optimizer spans both).
    """
    tp, pp = _a(x["tensor_parallel"]), _a(x["pipeline_parallel"])
    ss, group = _a(x["state_shards"]), _a(x["shard_group"])
    dp_cp = data_parallel_ranks(x)
    legacy = (ss > 1) & (group == 0)
    d = where(group > 0, group, where(legacy, maximum(ss / (tp * pp), 1.0), dp_cp))
    z = where(legacy & (_a(x["zero_stage"]) == 0), 3.0, _a(x["zero_stage"]))
    return z, d


@stage(
    Output("train_flops_per_example", "flops", "Training FLOPs per example"),
    Output("peak_flops_per_s", "flops_per_s", "Peak FLOP/s", formula="{src_peak_flops_per_s}"),
    Output("efficiency", "count", "Compute efficiency", formula="{src_efficiency}", percent=True),
    Output(
        "memory_bandwidth_bytes_per_s",
        "bytes_per_s",
        "GPU memory bandwidth",
        formula="{src_memory_bandwidth_bytes_per_s}",
    ),
    Output(
        "memory_traffic_bytes_per_example",
        "bytes",
        "GPU memory traffic per example",
        formula="{src_memory_traffic_bytes_per_example}",
    ),
    Output(
        "step_traffic_bytes",
        "bytes",
        "GPU memory traffic per step (weights, optimizer)",
        formula="{src_step_traffic_bytes}",
    ),
    Output("memory_efficiency", "count", "Memory efficiency", formula="{src_memory_efficiency}", percent=True),
    Output("compute_time_per_example_s", "seconds", "Math time per example"),
    Output("memory_time_per_example_s", "seconds", "Memory time per example"),
    Output("fixed_time_s", "seconds", "Fixed time per step"),
    Output("model_step_time_s", "seconds", "Modelled step time", zero_without_step=True),
    Output("step_time_s", "seconds", "Step time t", formula="{step_rule}", zero_without_step=True),
    Output("reprojection_ratio", "count", "Measured step moved by (x)", digits=3),
    Output(
        "reprojection_gpu_rate_ratio",
        "count",
        "GPU speed-up applied to the measurement (x)",
        formula="min(max({mid_model_step_time_s} / {model_step_time_s}, {reprojection_band_low}),"
        " {reprojection_band_high}): the model's speed-up between the GPUs inside {src_reprojection_band}"
        " (1: no measurement moved)",
        digits=3,
    ),
    Output("scaling_efficiency", "count", "Data-parallel scaling efficiency", percent=True),
    Output("gpu_samples_per_s", "count_per_s", "GPU rate per GPU", "samples/s", zero_without_step=True),
    # A transformer's layout terms (evaluate_transformer, called from here; 0 without an architecture).
    Output("recompute_flops_per_example", "flops", "Recompute FLOPs per example (activation checkpointing)"),
    Output("pipeline_bubble", "count", "Pipeline bubble (share of the step idle)", percent=True),
    Output("tensor_parallel_comm_s", "seconds", "Tensor/context/pipeline-parallel traffic per step"),
    Output("data_parallel_comm_s", "seconds", "Exposed data-parallel gradient traffic per step"),
    keep=(
        "anchor_batch_size",
        "mid_batch_size",
        "attention_core_flops_per_example",
        "model_parallel_ranks",
        "anchor_train_flops_per_example",
        "stack_traffic_share",
        "mid_model_step_time_s",
        "anchor_model_step_time_s",
    ),
    states={"step_method": compute.METHODS},
)
def evaluate_compute(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Step time: the model (compute + memory + fixed), or a measurement re-projected by it."""
    _train_flops(x, out)
    arch = _a(x["arch"]) > 0
    # A transformer by its architecture counts its fused kernels' traffic itself (``kernels``): 1, which
    # the where picks without the stack's share for one such scenario on Python floats (SKIP_INERT).
    out["stack_traffic_share"] = (
        floats(1.0)
        if SKIP_INERT and arch is True
        else where(arch, 1.0, compute.stack_traffic_share(x["fused_traffic_share"], x["stack_fuses"]))
    )
    n = maximum(_a(out["batch_size"]), 1.0)  # keeps t finite; rates are zeroed where n = 0
    opt_shards = _optimizer_shards(out)
    step_bytes = _a(x["step_traffic_bytes"]) / opt_shards
    out["step_traffic_bytes"] = step_bytes
    measured = isfinite(_a(x["measured_step_time_s"])) | isfinite(_a(x["measured_samples_per_s"]))
    c: Numeric
    mem: Numeric
    fixed: Numeric
    t_model: Numeric
    if all_(arch) and not any_(measured):
        # Every row a transformer by its architecture, none measured: evaluate_transformer computes
        # every term of the step; the generic ones would be thrown away (a third of an LLM's plan).
        c = mem = fixed = t_model = floats(0.0 if scalar(n) else np.zeros_like(n, dtype=float))
    else:
        c, mem, fixed, t_model = _modelled(
            x,
            out,
            out["train_flops_per_example"],
            x["peak_flops_per_s"],
            x["memory_bandwidth_bytes_per_s"],
            x["efficiency"],
            out["memory_traffic_bytes_per_example"],
            step_bytes,
            n,
        )
    out["compute_time_per_example_s"], out["memory_time_per_example_s"] = c, mem
    out["fixed_time_s"], out["model_step_time_s"] = fixed, t_model
    a_batch, t_anchor, t_mid = _anchor_step(x, out, opt_shards, n, t_model)
    t, method, ratio, gpu_rate = compute.step_time_s(
        n,
        t_model,
        x["measured_step_time_s"],
        x["measured_samples_per_s"],
        a_batch,
        t_anchor,
        t_mid,
        x["reprojection_band_low"],
        x["reprojection_band_high"],
    )
    out["step_time_s"], out["step_method"] = t, method
    out["reprojection_ratio"], out["reprojection_gpu_rate_ratio"] = ratio, gpu_rate
    evaluate_transformer(x, out, n)
    t = where(arch & (method == 2.0), out["model_step_time_s"], t)
    out["step_time_s"] = t
    _gpu_rate(x, out, t, method, arch)


def _optimizer_shards(out: Arrays) -> Any:
    """Ranks the optimizer state is split over: sharded (ZeRO 1-3) state also shards the
    optimizer's per-step reads and writes; else 1."""
    return where(_a(out["zero_stage_used"]) >= 1, out["shard_ranks"], 1.0)


def _train_flops(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Training FLOPs per example (a multiplier of the forward pass, or a measured count) and
    the GPU figures resolve chose, passed through as outputs."""
    mult = _a(x["train_flops_multiplier"])
    ratio = where(isfinite(mult), mult, compute.TRAIN_FLOPS_MULTIPLIER)
    # A measured training count moves with the forward pass's at the training resolution.
    forward, anchor_forward = out["forward_flops_per_example"], out["anchor_forward_flops_per_example"]
    measured, at_ref = _a(x["train_flops_measured"]), _a(x["forward_flops_per_example"])
    use_measured = isfinite(measured) & ~isfinite(mult)
    out["train_flops_per_example"] = where(
        use_measured, measured * (forward / at_ref), compute.train_flops(forward, ratio)
    )
    out["anchor_train_flops_per_example"] = where(
        use_measured, measured * (anchor_forward / at_ref), compute.train_flops(anchor_forward, ratio)
    )
    for k in ("peak_flops_per_s", "efficiency", "memory_bandwidth_bytes_per_s", "memory_efficiency"):
        out[k] = x[k]
    traffic_at_ref = _a(x["memory_traffic_bytes_per_example_at_reference"]) > 0
    out["memory_traffic_bytes_per_example"] = _a(x["memory_traffic_bytes_per_example"]) * where(
        traffic_at_ref, out["resolution_scale"], 1.0
    )


def _modelled(
    x: Mapping[str, Numeric],
    out: Arrays,
    train_flops: Numeric,
    peak: Numeric,
    bw: Numeric,
    eff: Numeric,
    traffic: Numeric,
    step_bytes: Numeric,
    batch: Numeric,
) -> tuple[Numeric, Numeric, Numeric, Numeric]:
    """The model's terms on a GPU (the plan's or the measurement's): compute.model_terms with the
    stack's figures; math time, memory time per example, fixed time and step time [s]."""
    return compute.model_terms(
        batch,
        train_flops,
        peak,
        eff,
        traffic,
        bw,
        x["memory_efficiency"],
        step_bytes,
        x["launch_overhead_s"],
        x["fill_examples"],
        x["stack_factor"],
        x["flops_only"],
        x["stack_s_per_byte"],
        out["stack_traffic_share"],
        x["depthwise_traffic_share"],
        x["depthwise_memory_efficiency"],
    )


def _anchor_step(
    x: Mapping[str, Numeric], out: Arrays, opt_shards: Numeric, n: Numeric, t_model: Numeric
) -> tuple[Numeric, Numeric, Numeric]:
    """The anchor: the batch a measurement was taken at (given, or the automatic batch on its
    GPU), the model's step time there, and the model on the measured GPU at this precision (the
    re-projection's midpoint) [s], at this batch or at the largest the measured GPU holds where that is
    less, per step of this batch. Without a measurement neither is needed: the model's own step
    stands for both (one evaluation instead of three)."""
    measured = isfinite(_a(x["measured_step_time_s"])) | isfinite(_a(x["measured_samples_per_s"]))
    if not any_(measured):
        out["anchor_batch_size"] = out["mid_batch_size"] = n
        out["mid_model_step_time_s"] = out["anchor_model_step_time_s"] = t_model
        return n, t_model, t_model
    # The measurement's own resolution: the preset's figures scaled to it (given ones stand).
    act_scale = where(_a(x["activation_bytes_per_example_at_reference"]) > 0, out["anchor_resolution_scale"], 1.0)
    traffic_scale = where(
        _a(x["memory_traffic_bytes_per_example_at_reference"]) > 0, out["anchor_resolution_scale"], 1.0
    )
    a_max = memory.max_batch_size(
        x["anchor_gpu_memory_bytes"],
        x["reserved_bytes"],
        out["model_state_bytes"],
        _a(x["anchor_activation_bytes_per_example"]) * act_scale,
    )
    a_given = _a(x["anchor_batch"])
    # A measurement with no batch recorded was taken at the automatic batch of its own GPU.
    a_auto = maximum(memory.round_batch(a_max, x["rounding"]), 1.0)
    a_batch = where(isfinite(a_given), a_given, a_auto)
    out["anchor_batch_size"] = a_batch
    # The midpoint's batch: this scenario's, or the largest the measured GPU holds at this precision where
    # that is less. The rest of the batch change moves with the GPU, inside the published band (each GPU
    # at its own batch), instead of the model on a batch the measured GPU cannot hold.
    m_max = memory.max_batch_size(
        x["anchor_gpu_memory_bytes"], x["reserved_bytes"], out["model_state_bytes"], out["activation_bytes_per_example"]
    )
    m_batch = minimum(n, maximum(memory.round_batch(m_max, x["rounding"]), 1.0))
    out["mid_batch_size"] = m_batch
    *_, t_anchor = _modelled(
        x,
        out,
        out["anchor_train_flops_per_example"],
        x["anchor_peak_flops_per_s"],
        x["anchor_memory_bandwidth_bytes_per_s"],
        x["anchor_efficiency"],
        _a(x["anchor_memory_traffic_bytes_per_example"]) * traffic_scale,
        _a(x["anchor_step_traffic_bytes"]) / opt_shards,
        a_batch,
    )
    *_, t_mid_own = _modelled(
        x,
        out,
        out["train_flops_per_example"],
        x["mid_peak_flops_per_s"],
        x["mid_memory_bandwidth_bytes_per_s"],
        x["mid_efficiency"],
        out["memory_traffic_bytes_per_example"],
        out["step_traffic_bytes"],
        m_batch,
    )
    t_mid = _a(t_mid_own) * (_a(n) / m_batch)  # per step of this scenario's batch at the midpoint's rate
    out["anchor_model_step_time_s"], out["mid_model_step_time_s"] = t_anchor, t_mid
    return a_batch, t_anchor, t_mid


def _gpu_rate(x: Mapping[str, Numeric], out: Arrays, t: Numeric, method: Numeric, arch: Any) -> None:
    """Data-parallel scaling efficiency and the samples a GPU finishes per second."""
    given = _a(x["scaling_given"])
    # One transformer by its architecture on Python floats (SKIP_INERT): the where below picks 1.0 over scale.
    scale = (
        floats(0.0)
        if SKIP_INERT and arch is True
        else compute.scaling_efficiency(
            x["gpus_per_job"], x["gpus_per_node"], x["scaling_within_node"], x["scaling_across_nodes"]
        )
    )
    # A measured step was taken in the job as configured: its all-reduce is already in it.
    # A transformer's data-parallel traffic is in its step time (evaluate_transformer).
    out["scaling_efficiency"] = where(isfinite(given), given, where((method == 2.0) & not_(arch), scale, 1.0))
    ranks = _a(x["tensor_parallel"]) * x["pipeline_parallel"] * x["context_parallel"]
    per_gpu_step = where(arch, _a(out["batch_size"]) * x["gradient_accumulation"] / ranks, out["batch_size"])
    out["gpu_samples_per_s"] = demand.gpu_samples_per_s(per_gpu_step, t, out["scaling_efficiency"])


_TRANSFORMER_ONLY = (
    "attention_core_flops_per_example",
    "recompute_flops_per_example",
    "pipeline_bubble",
    "tensor_parallel_comm_s",
    "data_parallel_comm_s",
)
"""The architecture's own terms: zero on rows without one."""


def evaluate_transformer(x: Mapping[str, Numeric], out: Arrays, n: Numeric) -> None:
    """A transformer by its architecture: FLOPs, traffic, the parallel layout's terms, step time.

    Per rank of t x p x c: a micro-batch of ``n`` sequences, ``gradient_accumulation`` of them
    per step, the pipeline bubble, tensor/context/pipeline traffic over the GPU link and the
    exposed data-parallel traffic (calc.transformer). Rows without an architecture keep the
    generic terms and get zeros here.
    """
    arch = _a(x["arch"]) > 0
    tp, pp, cp = _a(x["tensor_parallel"]), _a(x["pipeline_parallel"]), _a(x["context_parallel"])
    ranks = tp * pp * cp
    out["model_parallel_ranks"] = ranks
    if not any_(arch):
        # No row is a transformer by its architecture (a CNN plan, say): the generic terms stand,
        # and the architecture's own terms are zero. Half the cost of a plan otherwise.
        zero = floats(np.zeros_like(arch, dtype=float))
        for key in _TRANSFORMER_ONLY:
            out[key] = zero
        return
    dims = active_dims(x)
    mode, mb = out["checkpointing_used"], x["gradient_accumulation"]
    flops, attn, recompute, traffic = _transformer_work(x, out, dims, mode, ranks)
    bw, e_m = x["memory_bandwidth_bytes_per_s"], x["memory_efficiency"]
    eff = _transformer_efficiency(x, n, dims, mb)
    c = _a(
        compute.compute_time_per_example_s((flops + recompute - attn) / ranks, x["peak_flops_per_s"], eff)
    ) + compute.compute_time_per_example_s(attn / ranks, x["attention_peak_flops_per_s"], x["attention_efficiency"])
    mem = compute.memory_time_per_example_s(traffic, bw, e_m)
    # No fill term: the transformer efficiency was measured on a layer at a real micro-batch
    # (calc.calibrate.TRANSFORMER_LAYER), so under-filling is already in it; the CNN-fitted
    # fill (about 10 examples) would charge 2-3 whole sequences per micro-batch.
    fill = 0.0
    step_bytes = _a(x["params"]) * transformer.STEP_BYTES_PER_PARAM / (tp * pp * _optimizer_shards(out))
    fixed = compute.fixed_time_s(step_bytes, bw, e_m, x["launch_overhead_s"], 0.0, 0.0)
    comm_mb, dp = _transformer_traffic(x, out, n, c, mode)
    bubble = transformer.pipeline_bubble(pp, mb, x["virtual_pipeline_stages"])
    full = _a(x["flops_only"]) == 0
    t = transformer.step_time_s(
        n,
        mb,
        where(full, _a(c) + mem, c),
        where(full, fill, 0.0),
        where(full, comm_mb, 0.0),
        bubble,
        where(full, fixed, 0.0),
        where(full, dp, 0.0),
        where(full, x["stack_factor"], 1.0),
    )
    out["attention_core_flops_per_example"] = where(arch, attn, 0.0)
    out["recompute_flops_per_example"] = where(arch, recompute, 0.0)
    out["pipeline_bubble"] = where(arch, bubble, 0.0)
    out["tensor_parallel_comm_s"] = where(arch, _a(comm_mb) * _a(mb) / (1 - _a(bubble)), 0.0)
    out["data_parallel_comm_s"] = where(arch, dp, 0.0)
    for key, new in (
        ("train_flops_per_example", flops),
        ("efficiency", eff),
        ("compute_time_per_example_s", c),
        ("memory_time_per_example_s", mem),
        ("memory_traffic_bytes_per_example", traffic),
        ("fixed_time_s", fixed),
        ("step_traffic_bytes", step_bytes),
        ("model_step_time_s", t),
    ):
        out[key] = where(arch, new, out[key])


def _transformer_work(
    x: Mapping[str, Numeric], out: Arrays, dims: transformer.Dims, mode: Numeric, ranks: Numeric
) -> tuple[Any, Any, Any, Any]:
    """A transformer's work per sequence: training FLOPs, the attention core's FLOPs (and its
    selective recompute, run at the attention's own efficiency), recompute FLOPs and GPU memory
    traffic per rank (calc.transformer; given FLOPs or traffic stand)."""
    layers, hidden, _, _, _, _, seq = dims
    kernels = x["kernels"]
    per_token = transformer.train_flops_per_token(*dims, x["gated"], kernels)
    attention = _a(transformer.attention_flops_per_token(layers, hidden, seq, kernels)) * seq
    recompute = _a(transformer.recompute_flops_per_token(per_token, layers, hidden, seq, mode, kernels)) * seq
    flops = where(_a(x["flops_given"]) > 0, out["train_flops_per_example"], _a(per_token) * seq)
    traffic = where(
        _a(x["traffic_given"]) > 0,
        _a(x["memory_traffic_bytes_per_example"]) / ranks,
        _a(transformer.traffic_bytes_per_sequence(*dims, x["gated"], mode, ranks, kernels)) * x["element_scale"],
    )
    attn = where(_a(x["flops_given"]) > 0, 0.0, attention + where(_a(mode) == 1, recompute, 0.0))
    return flops, attn, recompute, traffic


def _transformer_efficiency(x: Mapping[str, Numeric], n: Numeric, dims: transformer.Dims, mb: Numeric) -> Any:
    """The layer's compute efficiency against the precision's peak: the 16-bit one as given; fp8
    rescaled by the GEMMs' fp8 speed-up at this micro-batch's shapes."""
    _, hidden, heads, kv_heads, ffn, _, seq = dims
    tp, cp = _a(x["tensor_parallel"]), _a(x["context_parallel"])
    # fp8: x["efficiency"] is the 16-bit layer efficiency; the layer's GEMMs run at the fitted fp8 GEMM
    # speed at this micro-batch's shapes, the rest of its math does not speed up (transformer.fp8_math_factor).
    p16 = _a(x["attention_peak_flops_per_s"])
    fp8 = _a(x["fp8_gemm"]) > 0
    # The GEMM roofline costs more than the rest of the plan: only rows that run fp8 need it.
    fp8_factor = (
        1.0
        if not any_(fp8)
        else transformer.fp8_math_factor(
            _a(n) * _a(seq) / cp,
            hidden,
            heads,
            kv_heads,
            ffn,
            x["gated"],
            tp,
            p16,
            x["peak_flops_per_s"],
            x["memory_bandwidth_bytes_per_s"],
            x["efficiency"],
            x["gemm_peak_efficiency_16bit"],
            x["gemm_peak_efficiency_fp8"],
            x["gemm_bandwidth_efficiency"],
            x["fp8_quantization_bytes_per_element"],
            mb,
        )
    )
    fp8_eff = _a(x["efficiency"]) * p16 / _a(x["peak_flops_per_s"]) / _a(fp8_factor)
    return where(fp8, fp8_eff, x["efficiency"])


def _transformer_traffic(
    x: Mapping[str, Numeric], out: Arrays, n: Numeric, c: Numeric, mode: Numeric
) -> tuple[Numeric, Numeric]:
    """A transformer's communication: per micro-batch on the GPU link and NICs (tensor, context,
    pipeline, expert parallel) and the exposed data-parallel time per step [s] (calc.transformer)."""
    tp, pp, cp = _a(x["tensor_parallel"]), _a(x["pipeline_parallel"]), _a(x["context_parallel"])
    layers, hidden, heads, kv_heads, seq = x["layers"], x["hidden"], x["heads"], x["kv_heads"], x["seq_len"]
    mb, z, shard_ranks = x["gradient_accumulation"], out["zero_stage_used"], out["shard_ranks"]
    link, net, node = _a(x["gpu_link_bytes_per_s"]), _a(x["network_bytes_per_s_per_gpu"]), _a(x["gpus_per_node"])
    layer_bytes = transformer.tensor_parallel_bytes_per_layer(n, seq, hidden, tp, mode, cp) + (
        transformer.context_parallel_bytes_per_layer(n, seq, hidden, heads, kv_heads, cp, tp)
    )
    pp_link = where(tp * cp * pp > node, net, link)
    pp_bytes = where(pp > 1, transformer.pipeline_bytes_per_micro_batch(n, seq, hidden, tp, cp), 0.0)
    # Expert parallelism: the MoE layers' all-to-alls, over NVLink for the ranks in the node, the
    # NICs for the rest (expert ranks sit at a stride of t x c, as Megatron orders them).
    ep = _a(x["expert_parallel"])
    no_experts = _no_experts(x)
    one = type(link) is type(net) is type(n) and type(n) in _SCALARS
    if no_experts and one and link > 0 and net > 0 and n < np.inf:
        # A dense model: 0 MoE layers x 0 bytes (a finite micro-batch) x (1 / link + 0 / net), finite: +0 (~2 us).
        a2a_s = floats(0.0)
    else:
        moe_layers = where(_a(x["experts"]) > 0, _a(layers) - minimum(_a(x["dense_layers"]), layers), 0.0)
        ep_node = clip(node / (tp * cp), 1.0, ep)
        in_node = where(ep > 1, (ep_node - 1) / maximum(ep - 1, 1.0), 1.0)
        a2a = transformer.all_to_all_bytes_per_layer(n, seq, hidden, x["experts_active"], ep, cp)
        a2a_s = moe_layers / pp * _a(a2a) * (in_node / link + (1 - in_node) / net)
    comm_mb = (_a(layers) / pp * layer_bytes / link + pp_bytes / pp_link + a2a_s) * x["element_scale"]
    # Data-parallel traffic over the data- (x context-) parallel ranks, hierarchical across nodes,
    # then the part the framework's overlap leaves exposed (calc.transformer).
    dp_cp = data_parallel_ranks(x)
    per_node = clip(node / tp, 1.0, dp_cp)
    experts = floats(0.0) if no_experts else moe_expert_params(x)
    per_rank = (_a(x["params"]) - experts + experts / ep) / (tp * pp)
    dp_all = _a(
        transformer.data_parallel_time_s(per_rank, where(_a(z) >= 1, shard_ranks, dp_cp), dp_cp, z, per_node, link, net)
    ) * _a(x["element_scale"])
    shared = where(dp_cp * tp <= node, _a(layers) / pp * layer_bytes / link * x["element_scale"], 0.0)
    dp = transformer.exposed_data_parallel_s(
        dp_all,
        x["dp_framework"],
        _a(n) * c,
        mb,
        shared,
        per_rank,
        _a(layers) / pp,
        x["data_parallel_overlap"],
        dp_cp,
    )
    return comm_mb, dp


@stage(
    Output("example_tensor_bytes", "bytes", "Tensor bytes per example", formula="{tensors}"),
    Output("batch_bytes", "bytes", "Batch in host memory", binary=True),
    Output("worker_ram_bytes", "bytes", "Worker RAM per GPU process", binary=True),
    Output("host_ram_per_node_bytes", "bytes", "Loader RAM per node", binary=True),
    Output("dataset_bytes", "bytes", "Dataset size"),
    Output("fits_in_ram", "count", "Dataset fits in free RAM (1 = yes)", words=("no", "yes")),
    Output("page_cache_hit", "count", "Page-cache hit rate after epoch 1", percent=True),
    Output("remote_fraction", "count", "Share of reads reaching storage", percent=True),
    keep=("batches_in_flight", "gpus_on_node", "job_gpus_on_node"),
)
def evaluate_cache(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Host RAM: batches in flight, the dataset against free RAM, the page-cache hit rate."""
    n = out["batch_size"]
    out["example_tensor_bytes"] = x["example_tensor_bytes"]
    bb = host.batch_bytes(n, x["example_tensor_bytes"])
    out["batch_bytes"] = bb
    in_flight = host.batches_in_flight(x["num_workers"], x["prefetch_factor"])
    out["batches_in_flight"] = in_flight
    out["worker_ram_bytes"] = host.worker_ram_bytes(bb, in_flight, x["pin_memory"])
    # Jobs smaller than a node are packed onto one, sharing its RAM, cores and link (calc.host).
    gpus_on_node = host.gpus_sharing_node(x["gpus_per_job"], x["gpus_per_node"], x["jobs"])
    out["gpus_on_node"] = gpus_on_node
    out["job_gpus_on_node"] = minimum(x["gpus_per_job"], x["gpus_per_node"])
    out["host_ram_per_node_bytes"] = host.host_ram_per_node_bytes(out["worker_ram_bytes"], gpus_on_node)
    out["dataset_bytes"] = host.dataset_bytes(x["dataset_examples"], x["example_bytes"])
    out["fits_in_ram"] = host.fits_in_ram(out["dataset_bytes"], x["host_ram_bytes"], out["host_ram_per_node_bytes"])
    free = _a(x["host_ram_bytes"]) - out["host_ram_per_node_bytes"]
    out["page_cache_hit"] = demand.page_cache_hit(out["dataset_bytes"], free, x["examples_per_file"], x["page_cache"])
    out["remote_fraction"] = demand.remote_fraction(x["cache_fraction"], out["page_cache_hit"])


@stage(
    Output("per_gpu_samples_per_s", "count_per_s", "Demand per GPU", "samples/s", zero_without_step=True),
    Output("samples_per_s", "count_per_s", "Samples/s, all GPUs and jobs", "samples/s", zero_without_step=True),
    Output("read_bytes_per_s", "bytes_per_s", "Read bandwidth", zero_without_step=True),
    Output("first_epoch_read_bytes_per_s", "bytes_per_s", "Read bandwidth in the first epoch", zero_without_step=True),
    Output(
        "node_network_bytes_per_s",
        "bytes_per_s",
        "Node link to storage",
        formula="{src_node_network_bytes_per_s}",
        unlimited=True,
    ),
    Output("node_read_bytes_per_s", "bytes_per_s", "Storage traffic per node", zero_without_step=True),
    Output("request_bytes", "bytes", "Read size", binary=True),
    Output("read_iops", "count_per_s", "Random reads/s", "reads/s", zero_without_step=True),
    Output("file_opens_per_s", "count_per_s", "File opens/s", "opens/s", zero_without_step=True),
    Output("metadata_ops_per_s", "count_per_s", "Metadata operations/s", "ops/s", zero_without_step=True),
    Output("p99_factor", "count", "99th-percentile batch / mean batch (size spread)"),
    Output("p99_read_bytes_per_s", "bytes_per_s", "Read bandwidth for 99 % of batches on time", zero_without_step=True),
    Output("latency_budget_s", "seconds", "Latency budget per example", zero_without_step=True),
    keep=("reads_per_example",),
)
def evaluate_demand(x: Mapping[str, Numeric], out: Arrays) -> None:
    """What the data path must deliver: samples/s, bytes/s, reads/s, opens/s, latency.

    Steady state (after the first epoch, caches warm) sizes storage; the first epoch reads
    every example from storage and is shown beside it.
    """
    per_gpu = demand.per_gpu_demand(out["gpu_samples_per_s"], x["target_gpu_utilization"])
    out["per_gpu_samples_per_s"] = per_gpu
    total = demand.samples_per_s(per_gpu, x["gpus_per_job"], x["jobs"])
    out["samples_per_s"] = total
    remote = out["remote_fraction"]
    out["read_bytes_per_s"] = demand.read_bytes_per_s(total, x["example_bytes"], remote)
    out["first_epoch_read_bytes_per_s"] = demand.first_epoch_read_bytes_per_s(total, x["example_bytes"])
    out["node_network_bytes_per_s"] = x["node_network_bytes_per_s"]
    out["node_read_bytes_per_s"] = demand.node_read_bytes_per_s(
        per_gpu, out["gpus_on_node"], x["example_bytes"], remote
    )
    req = demand.request_bytes(x["example_bytes"], x["examples_per_file"], x["request_bytes_given"])
    out["request_bytes"] = req
    out["read_iops"] = demand.read_iops(total, x["example_bytes"], x["examples_per_file"], req, remote)
    out["reads_per_example"] = demand.read_iops(1.0, x["example_bytes"], x["examples_per_file"], req)
    out["file_opens_per_s"] = demand.file_opens_per_s(total, x["examples_per_file"], remote)
    out["metadata_ops_per_s"] = demand.metadata_ops_per_s(out["file_opens_per_s"], x["metadata_ops_per_open"])
    tail = demand.p99_factor(x["example_bytes_cv"], out["batch_size"])
    out["p99_factor"] = tail
    out["p99_read_bytes_per_s"] = _a(out["read_bytes_per_s"]) * tail
    out["latency_budget_s"] = demand.latency_budget_s(out["step_time_s"])


@stage(
    Output("decode_seconds_per_example", "seconds", "Decode time per example (reference core)"),
    Output("augment_seconds_per_example", "seconds", "Augment and to-tensor time per example (reference core)"),
    Output("cpu_seconds_per_example", "seconds", "Worker CPU time per example", formula="{cpu_cost_rule}"),
    Output("main_seconds_per_example", "seconds", "Main process CPU time per example (receiving)"),
    Output("pin_seconds_per_example", "seconds", "Pin-memory thread CPU time per example"),
    Output("loader_core_share", "count", "Share of a core per worker", percent=True),
    Output("cpu_cores", "count", "CPU cores, all GPUs and jobs", "cores", zero_without_step=True),
    Output("cpu_cores_per_node", "count", "CPU cores per node", "cores", zero_without_step=True),
    Output("h2d_bytes_per_s_per_gpu", "bytes_per_s", "Host-to-GPU per GPU", zero_without_step=True),
    Output("h2d_copy_time_s", "seconds", "Copy time per batch"),
    Output("h2d_share_of_step", "count", "Copy time / step time", percent=True, zero_without_step=True),
    Output("epoch_time_s", "seconds", "Epoch time per job", zero_without_step=True),
    Output(
        "run_length_used_s",
        "seconds",
        "Training run length",
        not_given="not given (run_length_s or train_tokens)",
    ),
    keep=(
        "cpu_seconds_effective",
        "dct_denominator",
        "image_megapixels",
        "decoded_megapixels",
        "above_knee",
        "batch_s_fixed",
        "batch_s_per_megabyte",
        "receive_s_per_megabyte_used",
        "pin_s_per_megabyte_used",
        "workers_on_node",
        "loader_cores_per_node",
    ),
)
def evaluate_host(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Host side: the CPU cost of an example and who pays it, the node's cores, the copy, the epoch."""
    _cpu_costs(x, out)
    per_gpu, gpus_on_node = out["per_gpu_samples_per_s"], out["gpus_on_node"]
    cpu_s = pipeline.cpu_seconds_effective(out["cpu_seconds_per_example"], x["gpu_decode"] * x["media_video"])
    out["cpu_seconds_effective"] = cpu_s
    out["cpu_cores"] = host.cpu_cores(out["samples_per_s"], cpu_s)
    out["cpu_cores_per_node"] = host.cpu_cores_per_node(per_gpu, gpus_on_node, cpu_s)
    workers = _a(x["num_workers"]) * gpus_on_node
    out["workers_on_node"], out["loader_cores_per_node"] = workers, x["cpu_cores_per_node"]
    out["loader_core_share"] = host.worker_core_share(
        workers, x["threads_per_worker"], x["cpu_cores_per_node"], x["cpu_threads_per_core"], x["cpu_smt_gain"]
    )
    out["h2d_bytes_per_s_per_gpu"] = host.h2d_bytes_per_s(per_gpu, x["example_tensor_bytes"])
    out["h2d_copy_time_s"] = host.copy_time_s(out["batch_bytes"], x["host_link_bytes_per_s"])
    out["h2d_share_of_step"] = host.copy_share(out["h2d_copy_time_s"], out["step_time_s"])
    out["epoch_time_s"] = demand.epoch_time_s(x["dataset_examples"], per_gpu, x["gpus_per_job"])
    tokens, given = _a(x["train_tokens"]), _a(x["run_length_s"])
    by_tokens = demand.run_length_s(where(isfinite(tokens), tokens, 0.0), per_gpu, x["gpus_per_job"], x["seq_len"])
    out["run_length_used_s"] = where(isfinite(given), given, where(isfinite(tokens), by_tokens, 0.0))


_PER_MB_KEYS = {
    k: (f"{k}_s_per_megabyte", f"{k}_s_per_megabyte_above", f"{k}_threshold_megabytes")
    for k in ("collate", "send", "receive", "pin")
}
"""Each per-batch cost's inputs (_batch_costs), named once instead of 12 f-strings a plan."""


def _cpu_costs(x: Mapping[str, Numeric], out: Arrays) -> None:
    """The CPU time an example costs the loader's workers, its main thread and its pin thread
    (calc.host): measured and re-projected to this CPU, the decoder model, or the preset's figure."""
    pixels = _a(x["image_width"]) * x["image_height"]
    out["image_megapixels"] = pixels / host.MEGA
    _batch_costs(x, out)
    method = _a(x["cpu_cost_method"])
    modelled = method == 1.0
    speed = x["cpu_per_core_speed"]
    measured = host.remeasured_seconds(x["cpu_seconds_given"], x["measured_cpu_speed"], speed)
    if scalar(method) and not modelled:
        # one scenario priced without the decoder model (measured, or the preset's figure): no decode terms
        out["dct_denominator"], out["decoded_megapixels"], out["above_knee"] = 1.0, out["image_megapixels"], 0.0
        out["decode_seconds_per_example"] = out["augment_seconds_per_example"] = 0.0
        out["cpu_seconds_per_example"] = measured if method == 0.0 else x["cpu_seconds_preset"]
        return
    denom = host.dct_denominator(x["image_width"], x["image_height"], x["train_resolution"], x["decode_dct_scaling"])
    decoded = pixels / (denom * denom)
    out["dct_denominator"], out["decoded_megapixels"] = denom, decoded / host.MEGA
    out["above_knee"] = where(out["decoded_megapixels"] > _a(x["decode_knee_megapixels"]), 1.0, 0.0)
    decode = host.decode_seconds(
        x["decode_s_fixed"],
        x["decode_s_per_megapixel"],
        x["decode_s_per_megapixel_if_above_knee"],
        x["decode_knee_megapixels"],
        x["decode_s_per_stored_megapixel"],
        x["decode_s_per_megabyte"],
        pixels,
        x["example_bytes"],
        denom,
        x["decode_gpu_share"],
    )
    augment = host.augment_seconds(
        x["augment_s_fixed"],
        x["augment_s_per_crop_megapixel"],
        x["augment_s_per_output_megapixel"],
        decoded,
        x["train_resolution"],
    )
    out["decode_seconds_per_example"] = where(modelled, decode, 0.0)
    out["augment_seconds_per_example"] = where(modelled, augment, 0.0)
    n, tensor = out["batch_size"], x["example_tensor_bytes"]
    by_model = host.worker_seconds(decode, augment, out["batch_s_fixed"], out["batch_s_per_megabyte"], tensor, n, speed)
    out["cpu_seconds_per_example"] = where(modelled, by_model, where(method == 0.0, measured, x["cpu_seconds_preset"]))


def _batch_costs(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Per batch and per MB: a worker collates its batch and hands it over (with no workers the main
    thread only collates); the main thread receives it and the pin thread copies it (calc.host)."""
    sends = where(_a(x["num_workers"]) > 0, 1.0, 0.0)
    n, speed, tensor = out["batch_size"], x["cpu_per_core_speed"], x["example_tensor_bytes"]
    per_mb = {
        k: host.per_megabyte_of_batch(x[per], x[above], x[threshold], out["batch_bytes"])
        for k, (per, above, threshold) in _PER_MB_KEYS.items()
    }
    out["batch_s_fixed"] = _a(x["collate_s_fixed"]) + sends * x["send_s_fixed"]
    out["batch_s_per_megabyte"] = _a(per_mb["collate"]) + sends * per_mb["send"]
    out["receive_s_per_megabyte_used"], out["pin_s_per_megabyte_used"] = per_mb["receive"], per_mb["pin"]
    out["main_seconds_per_example"] = host.main_seconds(
        x["receive_s_fixed"], out["receive_s_per_megabyte_used"], tensor, n, speed
    )
    out["pin_seconds_per_example"] = host.pin_seconds(
        x["pin_s_fixed"], out["pin_s_per_megabyte_used"], tensor, n, x["pin_memory"], speed
    )


@stage(
    Output("storage_bytes_per_s", "bytes_per_s", "Storage bandwidth supplied", unlimited=True),
    Output(
        "storage_write_bytes_per_s",
        "bytes_per_s",
        "Storage write bandwidth supplied",
        formula="min({storage_units_used} x unit write rate, {clients} x client cap); "
        "a storage given as one bandwidth: that figure",
        unlimited=True,
    ),
    Output("storage_iops", "count_per_s", "Storage reads/s supplied", "reads/s", unlimited=True),
    Output("storage_latency_s", "seconds", "Storage read time"),
    Output("outstanding_reads", "count", "Reads in flight (Little's law)", "reads", zero_without_step=True),
    Output(
        "p99_outstanding_reads",
        "count",
        "Reads in flight for 99 % of batches on time",
        "reads",
        zero_without_step=True,
    ),
    keep=("clients", "storage_units_used"),
)
def evaluate_storage(x: Mapping[str, Numeric], out: Arrays) -> None:
    """What the storage supplies for its unit count, clients and read size.

    No unit count means "as many as needed, up to the option's maximum": the pipeline then
    shows the option's limit when even its largest size cannot serve (as the storage table does).
    """
    clients = host.nodes(x["gpus_per_job"], x["gpus_per_node"], x["jobs"])
    out["clients"] = clients
    given = _a(x["storage_units_given"])
    units = where(isfinite(given), given, x["storage_max_units"])
    out["storage_units_used"] = units
    bw = storage.supply_bytes_per_s(units, x["storage_unit_bytes_per_s"], clients, x["storage_client_bytes_per_s"])
    bw_given = _a(x["storage_bytes_per_s_given"])
    bw = where(isfinite(bw_given), bw_given, bw)
    out["storage_bytes_per_s"] = bw
    # A storage given only as a bandwidth (no option) has one figure for reads and writes.
    write = storage.supply_bytes_per_s(
        units, x["storage_unit_write_bytes_per_s"], clients, x["storage_client_bytes_per_s"]
    )
    out["storage_write_bytes_per_s"] = where(isfinite(bw_given), bw_given, write)
    iops = storage.supply_iops(
        units,
        x["storage_unit_iops"],
        x["storage_unit_bytes_per_s"],
        out["request_bytes"],
        x["storage_aggregate_iops"],
        bw,
        x["storage_iops_request_bytes"],
    )
    iops_given = _a(x["storage_iops_given"])
    out["storage_iops"] = where(isfinite(iops_given), iops_given, iops)
    lat = storage.read_service_time_s(
        x["storage_base_latency_s"], out["request_bytes"], x["storage_stream_bytes_per_s"]
    )
    lat_given = _a(x["storage_latency_given"])
    out["storage_latency_s"] = where(isfinite(lat_given), lat_given, lat)
    out["outstanding_reads"] = demand.outstanding_reads(out["read_iops"], out["storage_latency_s"])
    out["p99_outstanding_reads"] = _a(out["outstanding_reads"]) * out["p99_factor"]


@stage(
    Output(
        "achieved_samples_per_s",
        "count_per_s",
        "Achieved samples/s, all GPUs",
        "samples/s",
        formula="{achieved_rule} per GPU x {gpus_per_job} x {jobs}",
        zero_without_step=True,
    ),
    Output("gpu_utilization", "count", "GPU utilisation", percent=True, zero_without_step=True),
    keep=tuple(STAGE_KEYS.values()),
    states={"bottleneck": pipeline.STAGES},
)
def evaluate_pipeline(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Each stage's capacity per GPU, the achieved rate, utilisation and the bottleneck."""
    readers = _a(x["gpus_per_job"]) * x["jobs"]
    # Reads that cost a seek or a request: all of them on object stores, else one per file.
    seeks = where(_a(x["storage_counts_requests"]) > 0, out["reads_per_example"], 1.0 / _a(x["examples_per_file"]))
    gpu_rate = out["gpu_samples_per_s"]
    remote = out["remote_fraction"]
    is_async = _a(x["loader"]) > 0
    in_flight = where(is_async, x["reader_concurrency"], x["num_workers"])
    stages = {
        "storage": pipeline.storage_stage(
            out["storage_bytes_per_s"],
            out["storage_iops"],
            out["storage_latency_s"],
            x["example_bytes"],
            out["reads_per_example"],
            seeks,
            remote,
            readers,
            in_flight,
        ),
        "network": pipeline.network_stage(
            x["node_network_bytes_per_s"],
            out["gpus_on_node"],
            x["example_bytes"],
            remote,
            x["site_link_bytes_per_s"],
            readers,
        ),
        "cpu": pipeline.cpu_stage(out["cpu_seconds_effective"], x["num_workers"], out["loader_core_share"]),
        "pcie": pipeline.pcie_stage(x["host_link_bytes_per_s"], x["example_tensor_bytes"], x["pin_memory"]),
        "gpu": gpu_rate,
        "decoder": pipeline.decoder_stage(
            x["gpu_decode"],
            x["media_video"],
            x["gpu_jpeg_images_per_s"],
            x["gpu_video_fps_1080p"],
            x["frame_pixels"],
            x["frames_per_example"],
        ),
    }
    # The metadata service caps file opens: ops per open x opens per example, shared by readers.
    with quiet(divide="ignore", invalid="ignore"):
        ops_per_example = _a(x["metadata_ops_per_open"]) * remote / _a(x["examples_per_file"])
        by_metadata = where(
            ops_per_example > 0, divide(_a(x["storage_metadata_ops"]), ops_per_example) / readers, np.inf
        )
    stages["storage"] = minimum(stages["storage"], by_metadata)
    # Synchronous workers read then decode each example: a bound of its own, so a stage.
    read_s = _a(out["storage_latency_s"]) * out["reads_per_example"] * remote
    stages["workers"] = pipeline.worker_bound(x["num_workers"], read_s, out["cpu_seconds_effective"], x["loader"])
    stages["main"] = pipeline.main_stage(
        out["main_seconds_per_example"], out["pin_seconds_per_example"], x["num_workers"]
    )
    for name, cap in stages.items():
        out[STAGE_KEYS[name]] = cap
    rate, bottleneck = pipeline.achieved(
        stages["storage"],
        stages["network"],
        stages["cpu"],
        stages["pcie"],
        gpu_rate,
        x["num_workers"],
        stages["workers"],
        stages["decoder"],
        stages["main"],
    )
    out["achieved_samples_per_s"] = _a(rate) * readers
    with quiet(divide="ignore", invalid="ignore"):
        out["gpu_utilization"] = where(_a(gpu_rate) > 0, _a(rate) / gpu_rate, 0.0)
    out["bottleneck"] = bottleneck


@stage(
    Output("checkpoint_bytes", "bytes", "Checkpoint size", binary=True),
    Output("checkpoint_rank_bytes", "bytes", "Checkpoint bytes per writing rank", binary=True),
    Output("checkpoint_writing_ranks", "count", "Ranks writing a checkpoint", "ranks"),
    Output(
        "checkpoint_write_bytes_per_s",
        "bytes_per_s",
        "Checkpoint write bandwidth, all jobs",
        not_given=f"0 (no checkpoints: {ask('checkpoint_interval_s')})",
    ),
    Output(
        "checkpoint_write_s",
        "seconds",
        "Time to write one checkpoint",
        not_given="n/a: no checkpoints and no storage limits the write",
    ),
    Output("checkpoint_stall_share", "count", "Share of training time blocked on saves", percent=True),
    Output("checkpoint_host_ram_bytes", "bytes", "Host RAM per node for async saves", binary=True),
    Output(
        "checkpoint_restore_s",
        "seconds",
        "Checkpoint restore time",
        not_given="n/a: nothing limits the read (choose a storage)",
    ),
    Output("checkpoint_capacity_bytes", "bytes", "Checkpoints kept on storage, all jobs", binary=True),
    Output(
        "young_daly_interval_s",
        "seconds",
        "Young-Daly checkpoint interval",
        not_given="n/a: a save that blocks nothing needs no interval",
    ),
    Output("storage_need_bytes_per_s", "bytes_per_s", "Storage bandwidth: reads and checkpoint writes"),
    Output("checkpoint_async", "count", "Checkpoint save mode", words=("sync", "async")),
    Output(
        "checkpoint_interval_used_s",
        "seconds",
        "Checkpoint interval used",
        not_given=f"no checkpoints ({ask('checkpoint_interval_s')}, a time or optimal)",
    ),
    Output("checkpoint_sync_write_bytes_per_s", "bytes_per_s", "Write bandwidth if saves block, all jobs"),
    Output("checkpoint_async_write_bytes_per_s", "bytes_per_s", "Write bandwidth if saves are async (drain), all jobs"),
    Output("checkpoint_host_copy_s", "seconds", "GPU-to-host copy per async save"),
    Output("checkpoint_blocking_s", "seconds", "Training stall per save"),
    Output("checkpoint_lag_s", "seconds", "Time until a save is durable"),
    Output("checkpoint_restore_bytes", "bytes", "Bytes read on a restore, all ranks", binary=True),
    Output("checkpoint_milestones", "count", "Milestone checkpoints kept", "checkpoints"),
    Output("checkpoint_durable", "count", "Checkpoints survive a node loss", words=("no", "yes")),
    Output("mtbf_job_s", "seconds", "Job MTBF (time between interruptions)"),
    Output("failures_per_month", "count", "Interruptions a month (30 days)", "interruptions"),
    Output(
        "checkpoint_lost_per_failure_s",
        "seconds",
        "Time lost per interruption",
        not_given="n/a: no checkpoints (a failure restarts the run)",
    ),
    # Two decimals: 99.98 % is not 100 %.
    Output(
        "goodput",
        "count",
        "Goodput (useful share of training time)",
        percent=True,
        digits=2,
        not_given="n/a: no checkpoints (a failure restarts the run)",
    ),
    Output(
        "checkpoint_drain_bytes_per_s",
        "bytes_per_s",
        "Async save drain (within the drain target)",
        not_given="0 (no asynchronous saves)",
    ),
    Output(
        "checkpoint_save_burst_bytes_per_s",
        "bytes_per_s",
        "Write burst while a save runs",
        formula="async: {checkpoint_drain_bytes_per_s}; sync: {checkpoint_sync_write_bytes_per_s}",
        not_given="0 (no checkpoints)",
    ),
    Output(
        "checkpoint_save_burst_node_bytes_per_s",
        "bytes_per_s",
        "Write burst per node while a save runs",
        formula="{checkpoint_save_burst_bytes_per_s} / {clients}",
    ),
    Output("restore_budget_s", "seconds", "Restore time allowed"),
    Output("restore_read_bytes_per_s", "bytes_per_s", "Restore read burst (all ranks at once)"),
    Output(
        "restore_read_node_bytes_per_s",
        "bytes_per_s",
        "Restore read burst per node",
        formula="{restore_read_bytes_per_s} / {clients}",
    ),
    keep=("checkpoint_rank_read_bytes_per_s", "checkpoint_params", "checkpoint_write_limited"),
)
def evaluate_checkpoint(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Checkpoints: size, per-rank split, both modes' write bandwidth, host RAM, restore,
    retention, the failure rate, the Young-Daly interval and goodput (calc.checkpoint).

    With no interval given nothing is saved: sizes are still shown, rates are 0. The storage
    must then serve reads and writes together, the save at its burst (a sync save within its stall
    budget, an async drain within its drain target): a blocking save stops training (and its reads)
    while it runs, so the need is the larger of the two; an async drain runs beside the reads
    (``checkpoint.save_with_reads``, the rule the engine and the cluster call too). Without a
    storage the write takes what the plan asks for: the stall budget (sync) or the whole interval
    (async drain).
    """
    c, per_rank, ranks = _checkpoint_size(x, out)
    is_async = _a(x["checkpoint_async"]) > 0
    out["checkpoint_async"] = flag(is_async)
    restore, on_storage, limited, host_copy = _checkpoint_paths(x, out, c, per_rank)
    mtbf_given = _a(x["mtbf_s"])
    mtbf = where(isfinite(mtbf_given), mtbf_given, checkpoint.job_mtbf_s(x["gpus_per_job"]))
    out["mtbf_job_s"] = mtbf
    out["failures_per_month"] = checkpoint.failures_per_month(mtbf)
    used = _checkpoint_interval(x, out, host_copy, mtbf, on_storage, limited, is_async)
    saving = isfinite(used) & (used > 0)
    safe = where(saving, used, 1.0)
    out["checkpoint_interval_used_s"] = where(saving, used, 0.0)
    # One scenario that saves nothing: its saves' rates and stalls are 0, as the formulas' ``where``s give.
    idle = _saves_nothing(saving)
    if idle:
        _no_saves(x, out)
    else:
        _checkpoint_writes(x, out, c, safe, saving, is_async, per_rank, ranks)
    f = _a(x["checkpoint_stall_fraction"])
    asked = where(is_async, safe, f * safe)  # the write at the bandwidth the plan asks for
    write_s = where(limited, on_storage, where(saving, asked, 0.0))
    out["checkpoint_write_s"] = write_s
    if not idle:
        _checkpoint_stalls(out, write_s, safe, host_copy, restore, used, saving, is_async, mtbf)
    _checkpoint_kept(x, out, c, saving)
    _bursts(x, out, c, safe, saving, is_async, mtbf)
    out["checkpoint_durable"] = x["checkpoint_durable_store"]
    # The one rule for a save beside the reads (calc.checkpoint), at the burst the store is bought for.
    out["storage_need_bytes_per_s"] = checkpoint.save_with_reads(
        out["read_bytes_per_s"], out["checkpoint_save_burst_bytes_per_s"], out["checkpoint_async"]
    )


SKIP_INERT = True
"""Skip terms one scenario's inputs make inert (``_no_saves``), setting what the full formulas give;
off only in the test that proves the two equal on every preset (tests/test_inert.py)."""


def _saves_nothing(saving: Any) -> bool:
    """One scenario that saves nothing (``SKIP_INERT``): every term of its saves is ``where(saving, ..., 0.0)``."""
    return SKIP_INERT and scalar(saving) and not saving


def _no_saves(x: Mapping[str, Numeric], out: Arrays) -> None:
    """What ``_checkpoint_writes`` and ``_checkpoint_stalls`` give where nothing is saved: every term
    is ``where(saving, term, 0.0)``, the rates all jobs' (0 x jobs). ~4 us of formulas and guards."""
    rate = floats(0.0) * _a(x["jobs"])
    for k in (
        "checkpoint_sync_write_bytes_per_s",
        "checkpoint_async_write_bytes_per_s",
        "checkpoint_write_bytes_per_s",
    ):
        out[k] = rate
    zero = floats(0.0)
    for k in (
        "checkpoint_host_ram_bytes",
        "checkpoint_blocking_s",
        "checkpoint_stall_share",
        "checkpoint_lag_s",
        "checkpoint_lost_per_failure_s",
        "goodput",
    ):
        out[k] = zero


def _checkpoint_size(x: Mapping[str, Numeric], out: Arrays) -> tuple[Any, Any, Any]:
    """The checkpoint's bytes, its bytes per writing rank and the writing ranks."""
    # A model state typed per GPU is the model in use: the parameters it holds, not the preset's
    # (state x GPUs holding a piece / training bytes per parameter).
    given = _a(x["model_state_given"])
    shards = _shards(x)
    params = where(isfinite(given), given * shards / _a(x["bytes_per_param"]), x["params"])
    out["checkpoint_params"] = params
    c = checkpoint.checkpoint_bytes(
        params, x["checkpoint_weight_bytes_per_param"], x["checkpoint_optimizer_bytes_per_param"]
    )
    out["checkpoint_bytes"] = c
    dp = data_parallel_ranks(x)
    wf = _a(x["checkpoint_weight_bytes_per_param"]) / (
        _a(x["checkpoint_weight_bytes_per_param"]) + x["checkpoint_optimizer_bytes_per_param"]
    )
    per_rank, ranks = checkpoint.bytes_per_rank(
        c, dp, x["tensor_parallel"], x["pipeline_parallel"], x["zero_stage"], wf
    )
    out["checkpoint_rank_bytes"], out["checkpoint_writing_ranks"] = per_rank, ranks
    return c, per_rank, ranks


def _checkpoint_paths(
    x: Mapping[str, Numeric], out: Arrays, c: Numeric, per_rank: Numeric
) -> tuple[Any, Any, Any, Any]:
    """A checkpoint's way to and from storage: the restore time, the save time on storage (0
    where nothing limits it), whether something does, and the GPU-to-host copy [s]."""
    # One rank's share of its node's path to storage: the node link and the per-client cap.
    rank_link = minimum(_a(x["node_network_bytes_per_s"]), x["storage_client_bytes_per_s"]) / out["job_gpus_on_node"]
    out["checkpoint_rank_read_bytes_per_s"] = rank_link
    # Every GPU loads its own state: replicas without ZeRO read the same shard again.
    out["checkpoint_restore_bytes"] = _a(per_rank) * x["gpus_per_job"]
    # An object store also caps the GETs (16 MiB ranged reads, every rank its shard): the floor the
    # sizing's rows count (engine.gpu_time), so the plan on the store bought says the same time.
    counts = _a(x["storage_counts_requests"]) > 0
    gets = where(counts, checkpoint.restore_requests(per_rank, x["gpus_per_job"], storage.WRITE_REQUEST_BYTES), 0.0)
    with quiet(invalid="ignore"):  # units x IOPS may be 0 x inf; python_scalars' errstate covers it already
        get_rate = where(
            counts & isfinite(_a(x["storage_unit_iops"])),
            _a(out["storage_units_used"]) * x["storage_unit_iops"],
            np.inf,
        )
    restore = checkpoint.restore_on_store_s(
        out["checkpoint_restore_bytes"],
        out["storage_bytes_per_s"],
        per_rank,
        rank_link,
        x["checkpoint_load_bytes_per_s"],
        gets,
        get_rate,
    )
    out["checkpoint_restore_s"] = restore
    # The busiest rank's shard sets the time (ZeRO-1: replica 0 also writes the weights).
    on_storage = checkpoint.save_time_s(c, out["storage_write_bytes_per_s"], per_rank, rank_link)
    limited = _a(on_storage) > 0  # a storage or a node link limits the write
    out["checkpoint_write_limited"] = flag(limited)  # explain reads the branch taken here
    host_copy = checkpoint.host_copy_s(per_rank, x["host_link_bytes_per_s"])
    out["checkpoint_host_copy_s"] = host_copy
    return restore, on_storage, limited, host_copy


def _checkpoint_interval(
    x: Mapping[str, Numeric],
    out: Arrays,
    host_copy: Numeric,
    mtbf: Numeric,
    on_storage: Numeric,
    limited: Any,
    is_async: Any,
) -> Any:
    """The interval used [s]: given, or Young-Daly from the blocking part of a save in the chosen
    mode; NaN where nothing is saved."""
    f = _a(x["checkpoint_stall_fraction"])
    interval = _a(x["checkpoint_interval_s"])
    given = isfinite(interval)
    yd_async = maximum(checkpoint.young_daly_interval_s(host_copy, mtbf, where(limited, 0.0, 1.0)), on_storage)
    # Sync without a storage: the save takes the stall budget f x T; for "optimal" the interval
    # that is Young-optimal for storage sized to its own budget, sqrt(2 f T M) = T -> T = 2 f M.
    yd_sync = where(
        limited,
        checkpoint.young_daly_interval_s(on_storage, mtbf),
        where(given, checkpoint.young_daly_interval_s(f * where(given, interval, 1.0), mtbf), 2.0 * f * mtbf),
    )
    young = where(is_async, yd_async, yd_sync)
    out["young_daly_interval_s"] = young
    return where(given, interval, where(_a(x["checkpoint_interval_optimal"]) > 0, young, np.nan))


def _checkpoint_writes(
    x: Mapping[str, Numeric],
    out: Arrays,
    c: Numeric,
    safe: Numeric,
    saving: Any,
    is_async: Any,
    per_rank: Numeric,
    ranks: Numeric,
) -> None:
    """Write bandwidth in both modes and the chosen one, and host RAM for async saves."""
    sync = checkpoint.sync_write_bytes_per_s(c, safe, _a(x["checkpoint_stall_fraction"]))
    drain = checkpoint.async_drain_bytes_per_s(c, safe)
    # Every job saves its own checkpoints, as every job reads: the rates and the kept bytes are
    # all jobs' (sizes, times and stalls stay one job's).
    jobs = _a(x["jobs"])
    out["checkpoint_sync_write_bytes_per_s"] = where(saving, sync, 0.0) * jobs
    out["checkpoint_async_write_bytes_per_s"] = where(saving, drain, 0.0) * jobs
    out["checkpoint_write_bytes_per_s"] = where(saving, where(is_async, drain, sync), 0.0) * jobs
    # Writers on one node: its GPUs' ranks, at most all writing ranks of the job.
    node_writers = minimum(ranks, out["job_gpus_on_node"])
    out["checkpoint_host_ram_bytes"] = where(saving, checkpoint.async_host_ram_bytes(per_rank * node_writers), 0.0)


def _checkpoint_stalls(
    out: Arrays,
    write_s: Numeric,
    safe: Numeric,
    host_copy: Numeric,
    restore: Numeric,
    used: Numeric,
    saving: Any,
    is_async: Any,
    mtbf: Numeric,
) -> None:
    """What saves cost training: the stall per save and its share, the lag until a save is
    durable, the time lost per interruption and the goodput."""
    blocking = checkpoint.blocking_s(write_s, safe, host_copy, is_async)
    out["checkpoint_blocking_s"] = where(saving, blocking, 0.0)
    out["checkpoint_stall_share"] = where(saving, checkpoint.stall_share(blocking, safe), 0.0)
    lag = where(saving & is_async, write_s, 0.0)
    out["checkpoint_lag_s"] = lag
    lost = checkpoint.lost_per_failure_s(restore, where(saving, used, 0.0), lag)
    out["checkpoint_lost_per_failure_s"] = where(saving, lost, 0.0)
    out["goodput"] = where(saving, checkpoint.goodput(out["checkpoint_stall_share"], lost, mtbf), 0.0)


def _checkpoint_kept(x: Mapping[str, Numeric], out: Arrays, c: Numeric, saving: Any) -> None:
    """Checkpoints kept on storage: the milestones of the run and the capacity they fill."""
    run, every = _a(out["run_length_used_s"]), _a(x["checkpoint_milestone_interval_s"])
    both = (run > 0) & isfinite(every)
    milestones = where(both, checkpoint.milestone_count(where(both, run, 0.0), where(both, every, 1.0)), 0.0)
    out["checkpoint_milestones"] = milestones
    # A job that saves nothing keeps nothing; kept is all jobs' (keep + the save in flight each).
    if _saves_nothing(saving):  # where(saving, kept, 0.0) is 0.0
        out["checkpoint_capacity_bytes"] = floats(0.0)
        return
    kept = checkpoint.retained_capacity_bytes(c, x["checkpoint_keep"], milestones, where(saving, 1.0, 0.0)) * _a(
        x["jobs"]
    )
    out["checkpoint_capacity_bytes"] = where(saving, kept, 0.0)


def _bursts(
    x: Mapping[str, Numeric], out: Arrays, c: Numeric, safe: Numeric, saving: Any, is_async: Any, mtbf: Numeric
) -> None:
    """The checkpoint bursts the storage is bought for (calc.checkpoint, section "bursts"): the
    async drain within its target, the write burst of a save in the chosen mode, the restore
    read within its budget, each also per node."""
    # All jobs', as the other checkpoint rates (one job's drain x jobs); the restore is one job's.
    if _saves_nothing(saving):  # both are where(saving, ..., 0.0): 0.0
        out["checkpoint_drain_bytes_per_s"] = out["checkpoint_save_burst_bytes_per_s"] = floats(0.0)
    else:
        drain = checkpoint.drain_bytes_per_s(c, safe, x["drain_target"]) * _a(x["jobs"])
        out["checkpoint_drain_bytes_per_s"] = where(saving & is_async, drain, 0.0)
        burst = where(is_async, drain, out["checkpoint_sync_write_bytes_per_s"])
        out["checkpoint_save_burst_bytes_per_s"] = where(saving, burst, 0.0)
    out["checkpoint_save_burst_node_bytes_per_s"] = checkpoint.per_node(
        out["checkpoint_save_burst_bytes_per_s"], out["clients"]
    )
    budget = checkpoint.restore_budget_s(x["checkpoint_stall_fraction"], mtbf, x["restore_target_s"])
    out["restore_budget_s"] = budget
    out["restore_read_bytes_per_s"] = checkpoint.restore_read_bytes_per_s(out["checkpoint_restore_bytes"], budget)
    out["restore_read_node_bytes_per_s"] = checkpoint.per_node(out["restore_read_bytes_per_s"], out["clients"])


@stage(
    Output("compress_s", "seconds", "Compress"),
    Output("send_s", "seconds", "Send"),
    Output("decompress_s", "seconds", "Decompress"),
    Output("transfer_time_s", "seconds", "Dataset transfer time"),
    Output("transfer_direct_time_s", "seconds", "Plain copy, no compression"),
)
def evaluate_transfer(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Moving the dataset: compress, send, decompress, in turn or streamed."""
    dataset = out["dataset_bytes"]
    c, s, d = transfer.transfer_stages_s(
        dataset,
        x["transfer_link_bytes_per_s"],
        x["compression_ratio"],
        x["compress_bytes_per_s_per_core"],
        x["compress_cores"],
        x["decompress_bytes_per_s"],
    )
    out["compress_s"], out["send_s"], out["decompress_s"] = c, s, d
    out["transfer_time_s"] = transfer.transfer_time_s(c, s, d, x["streamed"])
    out["transfer_direct_time_s"] = transfer.direct_time_s(dataset, x["transfer_link_bytes_per_s"])


registry_check()

CHECKPOINT_OUTPUTS = BY_STAGE["evaluate_checkpoint"]
"""The checkpoint outputs, as the dashboard's Checkpoints section and the report list them."""

UNLIMITED = tuple(k for k, o in OUTPUTS.items() if o.unlimited)
"""Outputs that are infinite when nothing limits them (no storage option, no node link given)."""

_ZEROED = tuple(k for k, o in OUTPUTS.items() if o.zero_without_step)
"""Outputs that are 0 where the model does not fit (no step runs)."""

_EXTRA = tuple(KEPT)
"""Intermediate values a Plan keeps beside OUTPUTS (stage capacities may be infinite)."""


def evaluate(x: Mapping[str, Numeric]) -> dict[str, Numeric]:
    """Every formula, on numbers or arrays, in the named ``STEPS``.

    ``x`` holds the keys ``resolve`` produces. Rows whose model does not fit (``fits`` = 0)
    get zero rates: nothing runs there. One scenario's numbers are Python floats here
    (calc._types.python_scalars, a quarter of a NumPy scalar's cost per operation); where one
    raises where NumPy gives inf or NaN (a division by zero), the whole scenario runs again on
    NumPy scalars, as every plan did before: the same numbers either way.
    """
    try:
        with python_scalars():
            return _evaluate(x)
    except ArithmeticError:
        with numpy_scalars():
            return _evaluate(x)


def _evaluate(x: Mapping[str, Numeric]) -> dict[str, Numeric]:
    """``evaluate`` on the scalars in force (``python_scalars`` or ``numpy_scalars``)."""
    out: Arrays = {}
    for step in STEPS:
        step(x, out)
    missing = [k for k in STATES if k not in out]
    if missing:
        raise ValueError(f"declared states not written by any stage: {missing}")
    live = _a(out["fits"]) * flag(_a(out["batch_size"]) > 0)
    if SKIP_INERT and type(live) is float and live == 1.0:
        # One scenario that runs: a Python float times 1.0 is that float, bit for bit (NaN, inf, -0.0 too).
        for key in _ZEROED:
            if type(out[key]) is not float:
                out[key] = _a(out[key]) * live
        return out
    for key in _ZEROED:
        out[key] = _a(out[key]) * live
    return out
