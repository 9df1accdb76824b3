"""How a plan shows itself: each output formatted, its formula with names and with numbers."""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from typing import Any, Protocol

from calc import checkpoint, compute, host, transformer
from calc.formula import FORMULAS
from calc.registry import OUTPUTS
from calc.scenario import FIELDS, Scenario, ask
from calc.stages import _EXTRA
from calc.units import Kind, fmt


class Plan(Protocol):
    """What the formula text reads of a plan (calc.plan.Plan, which sits above this module and
    renders its own ``explain`` with it): inputs, outputs and their sources, and formatted outputs."""

    @property
    def scenario(self) -> Scenario: ...
    @property
    def values(self) -> Mapping[str, float]: ...
    @property
    def sources(self) -> Mapping[str, str]: ...
    @property
    def inputs(self) -> Mapping[str, float]: ...
    @property
    def step_method(self) -> str: ...
    def formatted(self, name: str) -> str: ...


def _checkpoint_rules(p: Plan) -> dict[str, str]:
    """Formula texts of the checkpoint outputs that depend on the mode, the storage and the inputs."""
    sc, v, x = p.scenario, p.values, p.inputs
    is_async = x.get("checkpoint_async", 0.0) > 0
    limited = v["checkpoint_write_limited"] > 0  # the branch evaluate_checkpoint took: a storage or link limits
    given = sc.checkpoint_interval_s not in (None, "optimal")
    on_storage = (
        "max({checkpoint_bytes} / {storage_write_bytes_per_s}, "
        "{checkpoint_rank_bytes} (busiest rank) / {checkpoint_rank_read_bytes_per_s} per-rank link)"
    )
    if is_async:
        young = (
            "max(sqrt(2 x {checkpoint_host_copy_s} x {mtbf_job_s}), {checkpoint_write_s})"
            if limited
            else "sqrt(2 x {checkpoint_host_copy_s} x {mtbf_job_s} / 3) (the drain, sized to the interval, "
            "makes a save durable one interval late)"
        )
    elif limited:
        young = "sqrt(2 x {checkpoint_write_s} x {mtbf_job_s})"
    elif given:
        young = (
            "sqrt(2 x {checkpoint_stall_fraction} x {checkpoint_interval_s} x {mtbf_job_s}) (save at the stall budget)"
        )
    else:
        young = (
            "2 x {checkpoint_stall_fraction} x {mtbf_job_s} (a save sized to its stall budget f x T: "
            "sqrt(2 x f x T x MTBF) = T)"
        )
    per_gpu = checkpoint.INTERRUPTIONS_PER_GPU_S
    return {
        "checkpoint_rule": "no checkpoints (no interval given)"
        if sc.checkpoint_interval_s is None
        else "{checkpoint_async_write_bytes_per_s} (async: drained during training)"
        if is_async
        else "{checkpoint_sync_write_bytes_per_s} (sync: training waits)",
        "write_time_rule": on_storage
        if limited
        else "no storage chosen: at the bandwidth asked, "
        + (
            "{checkpoint_interval_used_s} (async drain)"
            if is_async
            else "{checkpoint_stall_fraction} x {checkpoint_interval_used_s} (sync)"
        ),
        "blocking_rule": "{checkpoint_host_copy_s} + max({checkpoint_write_s} - {checkpoint_interval_used_s}, 0) "
        "(async: the copy to host RAM, and waiting for a drain slower than the interval)"
        if is_async
        else "{checkpoint_write_s} (sync: training waits for the write)",
        "young_daly_rule": young,
        "interval_rule": "input (scenario)"
        if given
        else "{young_daly_interval_s} (checkpoint_interval_s = optimal)"
        if sc.checkpoint_interval_s == "optimal"
        else "no checkpoints (no interval given)",
        "lag_rule": "{checkpoint_write_s} (async: the newest save is durable once drained)"
        if is_async
        else "0 (sync: a save is durable when training resumes)",
        "mtbf_rule": "input (scenario)"
        if sc.mtbf_s is not None
        else f"1 / ({per_gpu * 86400:.3e} interruptions per GPU-day x {{gpus_per_job}} GPUs) "
        "(Llama 3: 419 unexpected in 54 d on 16,384 H100, arXiv:2407.21783 section 3.3.4)",
        "milestone_rule": "floor({run_length_used_s} / {checkpoint_milestone_interval_s})"
        if sc.checkpoint_milestone_interval_s is not None
        else f"0 (no milestones: {ask('checkpoint_milestone_interval_s')} and {ask('run_length_s')})",
        "mode_rule": p.sources.get("checkpoint_async", ""),
        "run_rule": "input (scenario)"
        if sc.run_length_s is not None
        else "{train_tokens} / ({per_gpu_samples_per_s} x {gpus_per_job} x {seq_len} tokens an example)"
        if sc.train_tokens is not None
        else f"0 (not given: {ask('run_length_s')} or {ask('train_tokens')})",
    }


def format_output(name: str, value: float) -> str:
    """Format one output by its unit kind (GPU memory in GiB, rates in decimal units)."""
    out = OUTPUTS[name]
    if value == 0 and out.not_given:
        return out.not_given
    if out.percent:
        return f"{value * 100:.{out.digits}f} %"
    if out.words[1]:
        return out.words[int(value != 0)]
    if out.integer:  # a whole count in its unit: "128 examples", "1 example", "6,738,415,616 parameters"
        n = int(value)
        return f"{n:,} {out.unit[:-1] if n == 1 and out.unit.endswith('s') else out.unit}"
    if not math.isfinite(value):
        return "unlimited"
    unit = out.unit
    if value == 1 and unit.endswith("s") and "/" not in unit:
        unit = unit[:-1]  # 1 rank, 1 core, 1 read
    return fmt(value, out.kind, unit, out.binary)


_KINDS = typing.get_args(Kind)


def input_kind(name: str) -> Kind:
    """The unit kind of a resolved input a formula shows: its field's kind, else its name's unit suffix.

    Names carry their unit (``_bytes``, ``_bytes_per_s``, ``_s``), so no second list of kinds is kept.
    """
    info = FIELDS.get(name)
    if info is not None:
        kind = info.kind
        return typing.cast(Kind, kind) if kind in _KINDS else "count"
    suffixes: tuple[tuple[str, Kind], ...] = (
        ("_bytes_per_s", "bytes_per_s"),
        ("_flops_per_s", "flops_per_s"),  # before "_s": a FLOP rate is not a time
        ("_bytes", "bytes"),
        ("_bytes_per_example", "bytes"),
        ("_flops", "flops"),
        ("_flops_per_example", "flops"),
        ("_s", "seconds"),
    )
    if "_s_per_" in name or name.endswith("_s_fixed"):
        return "seconds"  # a cost in seconds per byte, megapixel or batch (calc.host's coefficients)
    for suffix, unit in suffixes:
        if name.endswith(suffix):
            return unit
    return "count"


def formula(p: Plan, name: str) -> str:
    """The formula template of output ``name`` as this plan computes it (a transformer given by
    its architecture has its own compute and fixed-time terms: calc.transformer.ARCH_FORMULAS)."""
    flops_only = p.inputs.get("flops_only", 0.0) != 0  # FLOPs alone: no fixed time at all
    if p.inputs.get("arch", 0.0) and name in transformer.ARCH_FORMULAS and not (flops_only and name == "fixed_time_s"):
        return transformer.ARCH_FORMULAS[name]
    return FORMULAS[name]


def _compute_rules(p: Plan) -> dict[str, str]:
    """The words of the compute formulas' branches: batch, step time, FLOPs, state, scaling."""
    sc = p.scenario
    multiplier = sc.train_flops_multiplier
    measured_flops = math.isfinite(p.inputs.get("train_flops_measured", math.nan))
    return {
        "batch_rule": f"fixed by input ({sc.batch_size})"
        if sc.batch_size is not None
        else f"{sc.batch_rounding}({{max_batch_size}})",
        "step_rule": {
            "measured step time": "measured step time (input, at this GPU, batch and precision)",
            "measured throughput": "{batch_size} / measured samples/s (input)",
            "model": "{model_step_time_s} (the step-time model: "
            + ("the articles' FLOPs-only arithmetic)" if sc.step_model == "flops" else "math + memory + fixed part)"),
            "re-projected measurement": (
                f"measured {'step time' if sc.step_time_s is not None else 'throughput'} on "
                f"{sc.measured_gpu}, {sc.measured_precision}, batch {p.values.get('anchor_batch_size', math.nan):g}"
                " x model(this GPU, batch, precision) / model(measured)"
            ),
        }[p.step_method],
        "train_flops_rule": "{train_flops_multiplier} x {forward_flops_per_example}"
        if multiplier is not None or not measured_flops
        else "measured forward + backward FLOPs per example (" + p.sources.get("train_flops_per_example", "") + ")",
        **(
            {
                "train_flops_rule": "{seq_len} x (6 x ({layers} x layer weights + {vocab} x {hidden}) + 7 x {layers}"
                " x {hidden} x {seq_len}) (" + p.sources.get("train_flops_per_example", "") + ")",
                "step_model_rule": "{stack_factor} x ({gradient_accumulation} / (1 - {pipeline_bubble}) x ({batch_size}"
                " x per-example time on one of {tensor_parallel} x {pipeline_parallel} x {context_parallel} ranks"
                " + TP/CP/PP traffic) + {fixed_time_s}) + {data_parallel_comm_s}; tensor/context/pipeline traffic"
                " per step {tensor_parallel_comm_s}",
            }
            if p.inputs.get("arch", 0.0) and sc.forward_flops_per_example is None
            else {
                "step_model_rule": "{stack_factor} x ({batch_size} x (per-example time"
                + (
                    " + the eager stack's cost per traffic byte x its traffic"
                    if p.inputs.get("stack_s_per_byte")
                    else ""
                )
                + ") + {fixed_time_s})"
            }
            if not p.inputs.get("arch", 0.0)
            else {"step_model_rule": "(see tensor_parallel_comm_s, pipeline_bubble, data_parallel_comm_s)"}
        ),
        "train_flops_multiplier": f"{multiplier if multiplier is not None else compute.TRAIN_FLOPS_MULTIPLIER:g}",
        "scaling_rule": "input (scenario)"
        if sc.scaling_efficiency is not None
        else "1: a measured step already contains the job's all-reduce"
        if p.step_method != "model"
        else "1 for one GPU; within-node factor on one node; x across-node factor beyond: "
        + p.sources.get("scaling_efficiency", ""),
    }


def _data_rules(p: Plan) -> dict[str, str]:
    """The words of the data path's branches: read size, latency, transfer, loader, sources."""
    sc = p.scenario
    return {
        "request_rule": "whole example per read"
        if sc.examples_per_file <= 1 and sc.request_bytes is None
        else "input or 256 KiB in shards, at most one file",
        "latency_rule": p.sources.get("storage_latency_s", ""),
        "transfer_rule": (
            "max(compress, send, decompress) (streamed)" if sc.streamed else "{compress_s} + {send_s} + {decompress_s}"
        )
        if sc.compression_ratio > 1
        else "{send_s}",
        # No compression (ratio 1): nothing is compressed or decompressed, so both take 0 s.
        "compress_rule": "{dataset_bytes} / ({compress_cores} x {compress_bytes_per_s_per_core})"
        if sc.compression_ratio > 1
        else "0 (compression_ratio 1: nothing to compress)",
        "decompress_rule": "{dataset_bytes} / {decompress_bytes_per_s}"
        if sc.compression_ratio > 1
        else "0 (compression_ratio 1: nothing to decompress)",
        "state_rule": "input (scenario)"
        if sc.model_state_bytes is not None
        else "{params} / (TP x PP) x (weights, gradients, optimizer state: each / the shard group"
        " from its ZeRO stage on; {bytes_per_param} B in all)",
        "achieved_rule": "1 / sum(1 / stages) (no workers: the stages run in turn)"
        if sc.num_workers == 0
        else "min(stages)"
        if sc.loader == "async"
        else f"min(stages, {sc.num_workers} workers / (read + decode time per example))",
        **{
            f"src_{k}": p.sources.get(k, "input")
            for k in (
                "params",
                "gpu_memory_bytes",
                "memory_bandwidth_bytes_per_s",
                "activation_bytes_per_example",
                "memory_traffic_bytes_per_example",
                "step_traffic_bytes",
                "peak_flops_per_s",
                "efficiency",
                "memory_efficiency",
                "node_network_bytes_per_s",
                "train_resolution",
                "forward_flops_per_example",
                "reprojection_band",
            )
        },
        "cpu_cost_rule": _cpu_cost_rule(p),
        "tensors": sc.tensors or f"preset {sc.model}",
    }


def _cpu_cost_rule(p: Plan) -> str:
    """How the worker's CPU time per example was found: measured (and re-projected), the decoder
    model, or the model preset's figure; with its source."""
    method = p.inputs.get("cpu_cost_method", 1.0)
    src = p.sources.get("cpu_seconds_per_example", "")
    if method == 0.0:
        return f"{{cpu_seconds_given}} x measured CPU's per-core speed / {{cpu_per_core_speed}} ({src})"
    if method == 2.0:
        return f"{{cpu_seconds_preset}} ({src})"
    return f"{host.WORKER_SECONDS} ({src})"


def render_formula(p: Plan, template: str) -> tuple[str, str]:
    """The formula with names, and with the plan's numbers (units included)."""
    rules = _compute_rules(p) | _data_rules(p) | _checkpoint_rules(p)
    symbolic = template
    for _ in range(2):  # rules may contain placeholders themselves
        symbolic = symbolic.format_map(_Keep(rules))
    numeric = symbolic.format_map(_Numbers(p))
    return symbolic.replace("{", "").replace("}", ""), numeric


class _Keep(dict[str, str]):
    """format_map helper: unknown placeholders stay as they are."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class _Numbers(dict[str, str]):
    """format_map helper: a plan's number for each placeholder a formula names, formatted when asked
    (formatting all ~200 outputs and inputs for every formula made the formula table 10x slower)."""

    def __init__(self, p: Plan) -> None:
        super().__init__()
        self.plan = p

    def __missing__(self, key: str) -> str:
        p = self.plan
        if key == "clients":
            return fmt(p.values.get("clients", math.nan), "count")
        if key in OUTPUTS:
            return p.formatted(key)
        if (key in p.inputs or key in _EXTRA) and (key in p.values or key in p.inputs):
            value = float(p.values.get(key, p.inputs.get(key, math.nan)))
            return fmt(value, input_kind(key)) if math.isfinite(value) else "unlimited"
        return "{" + key + "}"


ARCHITECTURE_OUTPUTS = (
    "recompute_flops_per_example",
    "pipeline_bubble",
    "tensor_parallel_comm_s",
    "data_parallel_comm_s",
)
"""Outputs only a transformer by its architecture has (activation recompute, the pipeline
bubble, tensor/context/pipeline and data-parallel traffic); 0 for any other model."""


def explained(p: Any) -> list[str]:
    """The outputs ``Plan.explain`` shows: every one, less the architecture's own terms for a
    model without an architecture (a CNN has no tensor-parallel traffic or recompute to explain)."""
    arch = bool(p.inputs.get("arch", 0.0))
    return [k for k in OUTPUTS if arch or k not in ARCHITECTURE_OUTPUTS]
