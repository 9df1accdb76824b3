"""plan(): resolve a Scenario against the presets, evaluate every formula, explain it.

Data flows one way: Scenario -> ``resolve`` (look-ups and parsing only, into base-unit
numbers) -> ``evaluate`` (every formula, vectorised, in named steps: memory, compute, demand,
host, storage, pipeline, transfer) -> ``Plan``. ``evaluate`` takes numbers or NumPy arrays, so
``plan`` (one scenario), ``sweep`` (a grid), the CLI and the dashboard share one code path.
"""

from __future__ import annotations

import functools
import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from calc import catalog, checkpoint, compute, demand, host, memory, pipeline, storage, transfer, transformer
from calc._types import Numeric
from calc.calibrate import fitted
from calc.checkpoint import CHECKPOINT_LAYOUTS
from calc.errors import DoesNotFitError, InputError
from calc.formula import FORMULAS
from calc.registry import BY_STAGE, KEPT, OUTPUTS, STEPS, Output, stage
from calc.registry import check as registry_check
from calc.scenario import FIELDS, Scenario, ask
from calc.scenario import scenario as preset_scenario
from calc.units import Kind, fmt, parse

DEFAULT_HOST_RAM_BYTES = 512 * 2.0**30
"""Host RAM per node when neither an input nor a server preset gives it [bytes]: 512 GiB, a
common 8-GPU node (DGX A100 has 1 TiB, DGX H100 2 TiB; presets/servers.yaml)."""

DEFAULT_STORAGE_LATENCY_S = 1e-3
"""Read latency when no storage option or latency is given [s]: 1 ms, between local NVMe
(60-115 µs) and networked file systems (~1 ms and up) in presets/storage.yaml."""


STAGE_KEYS = {s: f"{s}_samples_per_s_per_gpu" for s in pipeline.STAGES}

HEADLINE = (
    "batch_size",
    "step_time_s",
    "samples_per_s",
    "read_iops",
    "read_bytes_per_s",
    "worker_ram_bytes",
    "cpu_cores",
    "gpu_utilization",
)
"""The outputs a meeting looks at first: the dashboard's headline row, the report's summary."""


def _nan(x: Any) -> float:
    return math.nan if x is None else float(x)


@dataclass(frozen=True)
class Resolved:
    """A scenario reduced to numbers (base units) with the source of each."""

    values: dict[str, float]
    sources: dict[str, str]
    warnings: list[str]


class _Ctx(NamedTuple):
    """What every resolve step reads (the scenario, its presets, the fit) and fills (values,
    sources, warnings; ``put`` takes an input or its preset)."""

    sc: Scenario
    g: catalog.GPU
    m: catalog.Model
    mclass: str
    fit: Any
    v: dict[str, float]
    src: dict[str, str]
    warnings: list[str]
    put: Callable[[str, Any, Kind, float, str], None]


def resolve(sc: Scenario) -> Resolved:
    """Look up the presets and parse every input into base units; no formulas here.

    NaN means "not given" (the formula in ``evaluate`` then takes its default).
    """
    g = catalog.gpu(sc.gpu)
    m = catalog.model(sc.model)
    g.peak(sc.precision)  # a precision the GPU lacks is an error even with a measured step
    mclass = catalog.memory_class(sc.precision)
    fit = fitted()
    v: dict[str, float] = {}
    src: dict[str, str] = {}
    warnings: list[str] = []

    def put(name: str, given: Any, kind: Kind, preset: float, preset_source: str) -> None:
        if given is None:
            v[name], src[name] = preset, preset_source
        else:
            v[name], src[name] = parse(given, kind, name), "scenario"

    c = _Ctx(sc, g, m, mclass, fit, v, src, warnings, put)
    _resolve_memory(c)
    _resolve_compute(c)
    _resolve_transformer(c)
    _resolve_measurement(c)
    _resolve_data(c)
    _resolve_node(c)
    _resolve_storage(c)
    _resolve_checkpoint(c)
    _resolve_layout(c)
    return Resolved(v, src, warnings)


def _resolve_memory(c: _Ctx) -> None:
    """GPU memory, model state and activations: the GPU and model presets or the inputs."""
    sc, g, m, mclass, v, src, put = c.sc, c.g, c.m, c.mclass, c.v, c.src, c.put
    gsrc = f"gpus.yaml {g.name}: {g.source}"
    put("gpu_memory_bytes", sc.gpu_memory_bytes, "bytes", g.memory_bytes, gsrc)
    put(
        "memory_bandwidth_bytes_per_s",
        sc.memory_bandwidth_bytes_per_s,
        "bytes_per_s",
        g.memory_bandwidth_bytes_per_s,
        gsrc,
    )
    v["reserved_bytes"], src["reserved_bytes"] = parse(sc.reserved_bytes, "bytes", "reserved_bytes"), "scenario"
    v["params"], src["params"] = m.params, f"models.yaml {m.name}: {m.sources['params']}"
    v["bytes_per_param"] = memory.BYTES_PER_PARAM[sc.optimizer]
    src["bytes_per_param"] = f"optimizer {sc.optimizer} (calc.memory.BYTES_PER_PARAM)"
    v["state_shards"] = float(sc.state_shards)
    v["model_state_given"] = (
        math.nan if sc.model_state_bytes is None else parse(sc.model_state_bytes, "bytes", "model_state_bytes")
    )
    put(
        "activation_bytes_per_example",
        sc.activation_bytes_per_example,
        "bytes",
        m.activation_bytes[mclass],
        f"models.yaml {m.name} ({mclass}): {m.sources['activation_bytes']}",
    )
    v["fixed_batch"] = _nan(sc.batch_size)
    v["rounding"] = float(memory.ROUNDINGS.index(sc.batch_rounding))


def _resolve_compute(c: _Ctx) -> None:
    """Compute: training FLOPs, memory traffic, peak, efficiencies (calc.calibrate's fit)."""
    sc, g, m, mclass, fit, v, src, warnings, put = c.sc, c.g, c.m, c.mclass, c.fit, c.v, c.src, c.warnings, c.put
    gsrc = f"gpus.yaml {g.name}: {g.source}"
    put(
        "forward_flops_per_example",
        sc.forward_flops_per_example,
        "flops",
        m.forward_flops,
        f"models.yaml {m.name}: {m.sources['forward_flops']}",
    )
    v["train_flops_multiplier"] = _nan(sc.train_flops_multiplier)
    v["train_flops_measured"] = m.train_flops if sc.forward_flops_per_example is None else math.nan
    src["train_flops_per_example"] = (
        f"models.yaml {m.name}: {m.sources.get('train_flops', '')}" if math.isfinite(m.train_flops) else ""
    )
    traffic, step_traffic, tsrc = m.traffic(mclass)
    put("memory_traffic_bytes_per_example", sc.memory_traffic_bytes_per_example, "bytes", traffic, tsrc)
    v["step_traffic_bytes"], src["step_traffic_bytes"] = step_traffic, tsrc
    put("peak_flops_per_s", sc.peak_flops_per_s, "flops_per_s", g.peak(sc.precision), gsrc)
    pclass = catalog.precision_class(sc.precision)
    if sc.efficiency is not None:
        v["efficiency"], src["efficiency"] = sc.efficiency, "scenario"
    else:
        v["efficiency"] = fit.compute_efficiency[pclass] * fit.family_factors[m.family]
        src["efficiency"] = f"fitted {pclass} compute efficiency, {m.family} ({fit.describe})"
    v["memory_efficiency"], src["memory_efficiency"] = fit.memory_efficiency, f"fitted ({fit.describe})"
    v["launch_overhead_s"], v["fill_examples"] = fit.launch_overhead_s, fit.fill_examples
    v["flops_only"] = float(sc.step_model == "flops")
    v["stack_factor"] = fit.stack_factors[sc.stack][pclass]
    src["stack_factor"] = f"stack {sc.stack}: {fit.stack_source(sc.stack)}"
    if sc.precision == "fp8" and sc.efficiency is None:
        warnings.append(
            "fp8 step time is an estimate: no fp8 training measurement calibrates it; the mixed-precision "
            "efficiency is applied to the fp8 peak (optimistic)."
        )


def _resolve_transformer(c: _Ctx) -> None:
    """A transformer by its architecture and parallel layout (calc.transformer)."""
    sc, g, m, mclass, fit, v, src, warnings = c.sc, c.g, c.m, c.mclass, c.fit, c.v, c.src, c.warnings
    tv, t_src, twarn = transformer.resolve(sc, m.name, g.name, g.host_link_bytes_per_s)
    v |= tv
    src |= t_src
    warnings += twarn
    v["attention_peak_flops_per_s"] = v["peak_flops_per_s"]
    # calc.transformer counts 16-bit activations and gradients; fp32 and tf32 keep 4-byte ones.
    v["element_scale"] = 2.0 if mclass == "fp32" else 1.0
    if tv["arch"] and mclass == "fp32":
        warnings.append(
            f"{sc.precision} transformer: activations, traffic and communication are counted at 4 bytes, and the "
            "transformer efficiency (calibrated at 16-bit) is applied to the fp32/tf32 peak (uncalibrated)."
        )
    v["flops_given"] = float(sc.forward_flops_per_example is not None)
    v["traffic_given"] = float(sc.memory_traffic_bytes_per_example is not None)
    v["activation_given"] = float(sc.activation_bytes_per_example is not None)
    if tv["arch"]:
        if sc.params is not None:
            v["params"], src["params"] = parse(sc.params, "count", "params"), "scenario"
        elif any(getattr(sc, k) is not None for k in transformer.ARCH_INPUTS[:6]) or sc.mlp is not None:
            v["params"] = float(transformer.params_count(*transformer.dims(tv)[:6], tv["gated"]))
            src["params"] = "derived from the architecture (calc.transformer.params_count, untied embeddings)"
        if sc.efficiency is None:
            v["efficiency"] = fit.transformer_efficiency
            src["efficiency"] = fit.transformer_efficiency_source
        e_attn = transformer.ATTENTION_EFFICIENCY.get(g.name)
        v["attention_efficiency"] = e_attn[0] if e_attn and sc.efficiency is None else v["efficiency"]
        src["attention_efficiency"] = e_attn[1] if e_attn and sc.efficiency is None else "as the matrix multiplies"
        if sc.precision == "fp8":
            # fp8 runs the matrix multiplies only (Transformer Engine); attention stays 16-bit.
            v["attention_peak_flops_per_s"] = g.peak("bf16")
            if sc.efficiency is None:
                from calc.calibrate import FP8_SOURCE, fp8_efficiency

                v["efficiency"], src["efficiency"] = fp8_efficiency(), FP8_SOURCE
                warnings[:] = [w for w in warnings if not w.startswith("fp8 step time is an estimate")]
                warnings.append(
                    "fp8 step time is an estimate: the fp8 matrix-multiply efficiency is calibrated on one published "
                    "end-to-end speedup (Transformer Engine fp8 1.28-1.40x bf16, GPT-175B on H100, FP8-LM), "
                    "not on a measurement at this model's shapes."
                )
        arch_src = src["architecture"]
        for k, what in (
            ("activation_bytes_per_example", "calc.transformer.activation_bytes_per_sequence"),
            ("memory_traffic_bytes_per_example", "calc.transformer.traffic_bytes_per_sequence (fused kernels)"),
            ("step_traffic_bytes", "32 B per parameter per rank (calc.transformer.STEP_BYTES_PER_PARAM)"),
        ):
            if src.get(k) != "scenario":
                src[k] = f"{what}; {arch_src}"
        src["train_flops_per_example"] = f"calc.transformer.train_flops_per_token x seq_len; {arch_src}"
    elif sc.params is not None:
        v["params"], src["params"] = parse(sc.params, "count", "params"), "scenario"


def _resolve_measurement(c: _Ctx) -> None:
    """A measurement and where it was taken (its GPU, batch, precision): the re-projection anchor."""
    sc, g, m, fit, v, src = c.sc, c.g, c.m, c.fit, c.v, c.src
    v["measured_step_time_s"] = math.nan if sc.step_time_s is None else parse(sc.step_time_s, "seconds", "step_time_s")
    v["measured_samples_per_s"] = (
        math.nan
        if sc.samples_per_s_per_gpu is None
        else parse(sc.samples_per_s_per_gpu, "count_per_s", "samples_per_s_per_gpu")
    )
    ag = catalog.gpu(sc.measured_gpu or sc.gpu)
    aprec = sc.measured_precision or sc.precision
    if sc.step_time_s is not None or sc.samples_per_s_per_gpu is not None:
        ag.peak(aprec)  # refuse a measurement at a precision its GPU lacks
    aclass = catalog.memory_class(aprec)
    same_gpu = ag.name == g.name
    same_prec = aprec == sc.precision
    v["anchor_gpu_memory_bytes"] = v["gpu_memory_bytes"] if same_gpu else ag.memory_bytes
    v["anchor_memory_bandwidth_bytes_per_s"] = (
        v["memory_bandwidth_bytes_per_s"] if same_gpu else ag.memory_bandwidth_bytes_per_s
    )
    v["anchor_peak_flops_per_s"] = v["peak_flops_per_s"] if same_gpu and same_prec else ag.peak(aprec)
    v["anchor_efficiency"] = (
        v["efficiency"]
        if same_prec
        else fit.compute_efficiency[catalog.precision_class(aprec)] * fit.family_factors[m.family]
    )
    a_traffic, a_step, _ = m.traffic(aclass)
    v["anchor_memory_traffic_bytes_per_example"] = v["memory_traffic_bytes_per_example"] if same_prec else a_traffic
    v["anchor_step_traffic_bytes"] = v["step_traffic_bytes"] if same_prec else a_step
    v["anchor_activation_bytes_per_example"] = (
        v["activation_bytes_per_example"] if same_prec else m.activation_bytes[aclass]
    )
    v["anchor_batch"] = _nan(sc.measured_batch_size)
    v["scaling_given"] = _nan(sc.scaling_efficiency)
    v["scaling_within_node"], v["scaling_across_nodes"] = fit.scaling_within_node, fit.scaling_across_nodes
    src["scaling_efficiency"] = "scenario" if sc.scaling_efficiency is not None else fit.scaling_source


def _resolve_data(c: _Ctx) -> None:
    """The job, the loader and the data: counts, decode, example and read sizes, tensors."""
    sc, g, m, v, src, warnings, put = c.sc, c.g, c.m, c.v, c.src, c.warnings, c.put
    for name in (
        "gpus_per_job",
        "jobs",
        "gpus_per_node",
        "target_gpu_utilization",
        "examples_per_file",
        "cache_fraction",
        "num_workers",
        "prefetch_factor",
        "compression_ratio",
        "compress_cores",
    ):
        v[name], src[name] = float(getattr(sc, name)), "scenario"
    v["pin_memory"] = float(sc.pin_memory)
    v["gpu_decode"] = float(sc.gpu_decode)
    v["media_video"] = float(sc.media == "video")
    v["frames_per_example"], v["frame_pixels"] = float(sc.frames_per_example), float(sc.frame_pixels)
    v["gpu_jpeg_images_per_s"] = g.jpeg_decode_images_per_s
    v["gpu_video_fps_1080p"] = g.video_decode_fps_1080p
    src["decoder_samples_per_s_per_gpu"] = f"gpus.yaml {g.name}: {g.decoder_source or 'no decoder figure'}"
    rate = g.video_decode_fps_1080p if sc.media == "video" else g.jpeg_decode_images_per_s
    if sc.gpu_decode and not math.isfinite(rate):
        warnings.append(
            f"GPU decode: gpus.yaml has no hardware {'video' if sc.media == 'video' else 'JPEG'} decoder figure "
            f"for {g.name}, so the decoder stage is not capped (on GPUs without NVJPG, nvJPEG decodes on the "
            "SMs, which this plan does not add to the step)."
        )
    v["streamed"] = float(sc.streamed)
    put(
        "example_bytes",
        sc.example_bytes,
        "bytes",
        m.example_bytes,
        f"models.yaml {m.name}: {m.sources['example_bytes']}",
    )
    v["request_bytes_given"] = _nan(
        None if sc.request_bytes is None else parse(sc.request_bytes, "bytes", "request_bytes")
    )
    file_bytes = v["example_bytes"] * sc.examples_per_file
    if v["request_bytes_given"] > file_bytes:
        warnings.append(
            f"The read size {fmt(v['request_bytes_given'], 'bytes', binary=True)} is larger than one file "
            f"({sc.examples_per_file:,} x {fmt(v['example_bytes'], 'bytes')} = {fmt(file_bytes, 'bytes')}): "
            "each read takes the whole file, so the plan reads in files of that size."
        )
    put(
        "dataset_examples",
        sc.dataset_examples,
        "count",
        m.dataset_examples,
        f"models.yaml {m.name}: {m.sources['dataset_examples']}",
    )
    tensors = sc.tensors or m.tensors
    v["example_tensor_bytes"] = host.tensor_bytes(tensors)
    src["example_tensor_bytes"] = "scenario" if sc.tensors else f"models.yaml {m.name}: {m.sources['tensors']}"
    put(
        "cpu_seconds_per_example",
        sc.cpu_seconds_per_example,
        "seconds",
        m.cpu_seconds_per_example,
        f"models.yaml {m.name}: {m.sources['cpu_seconds_per_example']}",
    )


def _resolve_node(c: _Ctx) -> None:
    """The node: its server preset or inputs for cores, network, host link and RAM; the copy link."""
    sc, g, v, src, warnings, put = c.sc, c.g, c.v, c.src, c.warnings, c.put
    srv = catalog.server(sc.server) if sc.server else None
    if srv and srv.gpu != g.name:
        warnings.append(
            f"Server {srv.name} carries {srv.gpu}, not {g.name}: its network, RAM and cores are used as given."
        )
    if sc.cpu_cores_per_node is not None:
        v["cpu_cores_per_node"], src["cpu_cores_per_node"] = float(sc.cpu_cores_per_node), "scenario"
    elif srv and math.isfinite(srv.cpu_cores):
        # One core per GPU runs its training process; the rest are free for loading.
        v["cpu_cores_per_node"] = max(srv.cpu_cores - srv.gpus_per_node, 1.0)
        src["cpu_cores_per_node"] = f"servers.yaml {srv.name}: {srv.cpu_cores:g} cores less one per GPU"
    else:
        v["cpu_cores_per_node"] = math.inf
    if sc.node_network_bytes_per_s is not None:
        v["node_network_bytes_per_s"] = parse(sc.node_network_bytes_per_s, "bytes_per_s", "node_network_bytes_per_s")
        src["node_network_bytes_per_s"] = "scenario"
    elif srv and math.isfinite(srv.storage_network_bytes_per_s):
        v["node_network_bytes_per_s"] = srv.storage_network_bytes_per_s
        src["node_network_bytes_per_s"] = f"servers.yaml {srv.name}: {srv.storage_network}"
    else:
        v["node_network_bytes_per_s"], src["node_network_bytes_per_s"] = math.inf, "unlimited (no server or link given)"
    v["page_cache"] = float(sc.page_cache)
    v["loader"] = float(pipeline.LOADERS.index(sc.loader))
    v["reader_concurrency"] = float(sc.reader_concurrency)
    put(
        "host_link_bytes_per_s",
        sc.host_link_bytes_per_s,
        "bytes_per_s",
        g.host_link_bytes_per_s,
        f"gpus.yaml {g.name}: {g.host_link}",
    )
    if sc.host_ram_bytes is not None:
        v["host_ram_bytes"], src["host_ram_bytes"] = parse(sc.host_ram_bytes, "bytes", "host_ram_bytes"), "scenario"
    elif srv and math.isfinite(srv.ram_bytes):
        v["host_ram_bytes"], src["host_ram_bytes"] = (
            srv.ram_bytes,
            f"servers.yaml {srv.name}: {srv.sources.get('ram', '')}",
        )
    else:
        v["host_ram_bytes"], src["host_ram_bytes"] = (
            DEFAULT_HOST_RAM_BYTES,
            "default 512 GiB (calc.plan.DEFAULT_HOST_RAM_BYTES)",
        )
    for name in ("transfer_link_bytes_per_s", "compress_bytes_per_s_per_core", "decompress_bytes_per_s"):
        v[name], src[name] = parse(getattr(sc, name), "bytes_per_s", name), "scenario"


def _resolve_storage(c: _Ctx) -> None:
    """Storage: the option's per-unit figures; supply for a unit count is computed in evaluate."""
    sc, v, src = c.sc, c.v, c.src
    v |= {
        "storage_unit_bytes_per_s": math.inf,
        "storage_unit_write_bytes_per_s": math.inf,
        "storage_unit_iops": math.nan,
        "storage_iops_request_bytes": 4096.0,
        "storage_max_units": math.inf,
        "storage_client_bytes_per_s": math.inf,
        "storage_aggregate_iops": math.inf,
        "storage_base_latency_s": DEFAULT_STORAGE_LATENCY_S,
        "storage_stream_bytes_per_s": math.inf,
        "storage_counts_requests": 0.0,
        "storage_metadata_ops": math.inf,
        "metadata_ops_per_open": 0.0,
    }
    src["storage_latency_s"] = "default 1 ms (calc.plan.DEFAULT_STORAGE_LATENCY_S)"
    if sc.storage:
        o = storage.option(sc.storage)
        v |= {
            "storage_unit_bytes_per_s": o.read_bytes_per_s,
            "storage_unit_write_bytes_per_s": o.write_bytes_per_s,
            "storage_unit_iops": o.iops,
            "storage_iops_request_bytes": o.iops_request_bytes,
            "storage_max_units": o.max_units,
            "storage_client_bytes_per_s": o.client_bytes_per_s,
            "storage_aggregate_iops": o.aggregate_iops,
            "storage_base_latency_s": o.latency_s,
            "storage_stream_bytes_per_s": o.stream_bytes_per_s,
            "storage_counts_requests": float(o.counts_requests),
            "storage_metadata_ops": o.metadata_ops,
            "metadata_ops_per_open": demand.METADATA_OPS_PER_OPEN.get(o.protocol, 0.0),
        }
        stream = (
            f" + read size / {o.stream_bytes_per_s / 1e6:g} MB/s per stream"
            if math.isfinite(o.stream_bytes_per_s)
            else ""
        )
        src["storage"] = src["storage_latency_s"] = (
            f"storage.yaml {o.name}: {o.label} ({o.verified}); latency {o.sources.get('latency', '')}{stream}"
        )


def _resolve_checkpoint(c: _Ctx) -> None:
    """Checkpoints: the layout's bytes per parameter, the parallel layout, the save policy."""
    sc, v, src, warnings = c.sc, c.v, c.src, c.warnings
    w, opt = CHECKPOINT_LAYOUTS[sc.checkpoint_layout]
    v["checkpoint_weight_bytes_per_param"], v["checkpoint_optimizer_bytes_per_param"] = w, opt
    src["checkpoint_bytes"] = (
        f"params x ({w:g} + {opt:g}) B, layout {sc.checkpoint_layout} (calc.checkpoint)"
        if sc.model_state_bytes is None
        else f"params held in the typed model state (model_state_bytes x GPUs holding a piece / "
        f"{memory.BYTES_PER_PARAM[sc.optimizer]:g} B per parameter for {sc.optimizer}) x ({w:g} + {opt:g}) B, "
        f"layout {sc.checkpoint_layout}"
    )
    optimal = sc.checkpoint_interval_s == "optimal"
    v["checkpoint_interval_optimal"] = float(optimal)
    v["checkpoint_interval_s"] = _nan(
        None
        if sc.checkpoint_interval_s is None or optimal
        else parse(sc.checkpoint_interval_s, "seconds", "checkpoint_interval_s")
    )
    sharded = sc.zero_stage > 0 or sc.tensor_parallel * sc.pipeline_parallel > 1
    v["checkpoint_async"] = float(sc.checkpoint_mode == "async" or (sc.checkpoint_mode == "auto" and sharded))
    src["checkpoint_async"] = (
        f"auto: {'async' if sharded else 'sync'} ({'sharded' if sharded else 'unsharded'} training state; "
        "torch.distributed.checkpoint async_save, Megatron/NeMo async distributed checkpoints)"
        if sc.checkpoint_mode == "auto"
        else f"input (scenario): {sc.checkpoint_mode}"
    )
    v["checkpoint_stall_fraction"] = sc.checkpoint_stall_fraction
    v["checkpoint_keep"] = float(sc.checkpoint_keep)
    v["tensor_parallel"], v["pipeline_parallel"] = float(sc.tensor_parallel), float(sc.pipeline_parallel)
    v["zero_stage"] = float(sc.zero_stage)
    v["mtbf_s"] = _nan(None if sc.mtbf_s is None else parse(sc.mtbf_s, "seconds", "mtbf_s"))
    v["checkpoint_load_bytes_per_s"] = (
        checkpoint.DEFAULT_LOAD_BYTES_PER_S
        if sc.checkpoint_load_bytes_per_s is None
        else parse(sc.checkpoint_load_bytes_per_s, "bytes_per_s", "checkpoint_load_bytes_per_s")
    )
    src["checkpoint_load_bytes_per_s"] = (
        "scenario" if sc.checkpoint_load_bytes_per_s is not None else "measured default (calc.checkpoint)"
    )
    v["checkpoint_milestone_interval_s"] = _nan(
        None
        if sc.checkpoint_milestone_interval_s is None
        else parse(sc.checkpoint_milestone_interval_s, "seconds", "checkpoint_milestone_interval_s")
    )
    v["run_length_s"] = _nan(None if sc.run_length_s is None else parse(sc.run_length_s, "seconds", "run_length_s"))
    if sc.checkpoint_milestone_interval_s is not None and sc.run_length_s is None:
        raise InputError("run_length_s", "is needed to count milestone checkpoints; accepted: a time such as 30 d")
    # A checkpoint on a node's own drives or RAM dies with the node: not a durable target.
    kind = storage.option(sc.storage).kind if sc.storage else ""
    v["checkpoint_durable_store"] = float(kind not in ("local", "ram"))
    if kind in ("local", "ram") and sc.checkpoint_interval_s is not None:
        warnings.append(
            f"Checkpoints on {sc.storage} ({kind}) die with the node: drain them to a durable tier "
            "(a shared file system or object store), priced beside it."
        )


def _resolve_layout(c: _Ctx) -> None:
    """The parallel layout must divide the job; storage figures given directly."""
    sc, v, src = c.sc, c.v, c.src
    mp = sc.tensor_parallel * sc.pipeline_parallel * sc.context_parallel
    if sc.gpus_per_job % mp:
        raise InputError(
            "tensor_parallel",
            f"tensor x pipeline x context parallel = {mp} must divide gpus_per_job = {sc.gpus_per_job}",
        )
    if sc.state_shards > sc.gpus_per_job:
        # ZeRO-3/FSDP shards the state over the job's GPUs: it cannot have more shards than GPUs.
        raise InputError(
            "state_shards",
            f"{sc.state_shards:,} shards over a job of {sc.gpus_per_job:,} GPU(s); "
            f"accepted: 1 to gpus_per_job ({sc.gpus_per_job:,})",
        )
    v["example_bytes_cv"] = sc.example_bytes_cv
    v["storage_units_given"] = _nan(sc.storage_units)
    v["storage_bytes_per_s_given"] = _nan(
        None if sc.storage_bytes_per_s is None else parse(sc.storage_bytes_per_s, "bytes_per_s", "storage_bytes_per_s")
    )
    v["storage_iops_given"] = _nan(
        None if sc.storage_iops is None else parse(sc.storage_iops, "count_per_s", "storage_iops")
    )
    v["storage_latency_given"] = _nan(
        None if sc.storage_latency_s is None else parse(sc.storage_latency_s, "seconds", "storage_latency_s")
    )
    if sc.storage_latency_s is not None:
        src["storage_latency_s"] = "scenario"


Arrays = dict[str, Numeric]


def _a(x: Any) -> Any:
    return np.asarray(x, dtype=float)


@stage(
    Output("gpu_memory_bytes", "bytes", "GPU memory", binary=True, formula="{src_gpu_memory_bytes}"),
    Output("reserved_bytes", "bytes", "Reserved (context, allocator)", binary=True, formula="input (scenario)"),
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
)
def evaluate_memory(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Model state, the largest batch that fits and the batch used."""
    for k in ("gpu_memory_bytes", "reserved_bytes", "activation_bytes_per_example"):
        out[k] = x[k]
    given = _a(x["model_state_given"])
    # Tensor and pipeline ranks always split the state; state_shards counts every GPU holding a piece.
    shards = np.maximum(_a(x["state_shards"]), _a(x["tensor_parallel"]) * x["pipeline_parallel"])
    state = memory.model_state_bytes(x["params"], x["bytes_per_param"], shards)
    out["model_state_bytes"] = np.where(np.isfinite(given), given, state)
    arch = _a(x["arch"]) > 0
    act = transformer.activation_bytes_per_sequence(
        *transformer.dims(x),
        x["gated"],
        x["checkpointing"],
        x["tensor_parallel"],
        x["context_parallel"],
        x["pipeline_parallel"],
        x["gradient_accumulation"],
    )
    act = np.where(
        arch & (_a(x["activation_given"]) == 0), _a(act) * x["element_scale"], x["activation_bytes_per_example"]
    )
    x = {**x, "activation_bytes_per_example": act}
    out["activation_bytes_per_example"] = act
    n_max = memory.max_batch_size(
        x["gpu_memory_bytes"], x["reserved_bytes"], out["model_state_bytes"], x["activation_bytes_per_example"]
    )
    out["max_batch_size"] = n_max
    fixed = _a(x["fixed_batch"])
    n = np.where(np.isfinite(fixed), fixed, memory.round_batch(n_max, x["rounding"]))
    out["batch_size"] = np.where((n_max >= 1) | np.isfinite(fixed), n, 0.0)
    out["memory_used_bytes"] = memory.memory_used_bytes(
        out["batch_size"], x["reserved_bytes"], out["model_state_bytes"], x["activation_bytes_per_example"]
    )
    # Fits: at batch 1 with an automatic batch; the whole fixed batch when one is given.
    out["fits"] = np.where(np.isfinite(fixed), out["memory_used_bytes"] <= _a(x["gpu_memory_bytes"]), n_max >= 1)


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
    Output("scaling_efficiency", "count", "Data-parallel scaling efficiency", percent=True),
    Output("gpu_samples_per_s", "count_per_s", "GPU rate per GPU", "samples/s", zero_without_step=True),
    # A transformer's layout terms (evaluate_transformer, called from here; 0 without an architecture).
    Output("recompute_flops_per_example", "flops", "Recompute FLOPs per example (activation checkpointing)"),
    Output("pipeline_bubble", "count", "Pipeline bubble (share of the step idle)", percent=True),
    Output("tensor_parallel_comm_s", "seconds", "Tensor/context/pipeline-parallel traffic per step"),
    Output("data_parallel_comm_s", "seconds", "Exposed data-parallel gradient traffic per step"),
    keep=("anchor_batch_size", "attention_core_flops_per_example", "model_parallel_ranks"),
)
def evaluate_compute(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Step time: the model (compute + memory + fixed), or a measurement re-projected by it."""
    mult = _a(x["train_flops_multiplier"])
    measured = _a(x["train_flops_measured"])
    by_ratio = compute.train_flops(
        x["forward_flops_per_example"], np.where(np.isfinite(mult), mult, compute.TRAIN_FLOPS_MULTIPLIER)
    )
    out["train_flops_per_example"] = np.where(np.isfinite(measured) & ~np.isfinite(mult), measured, by_ratio)
    for k in (
        "peak_flops_per_s",
        "efficiency",
        "memory_bandwidth_bytes_per_s",
        "memory_traffic_bytes_per_example",
        "memory_efficiency",
    ):
        out[k] = x[k]
    n = np.maximum(_a(out["batch_size"]), 1.0)  # keeps t finite; rates are zeroed where n = 0

    def modelled(
        peak: Numeric, bw: Numeric, eff: Numeric, traffic: Numeric, step_bytes: Numeric, batch: Numeric
    ) -> tuple[Numeric, Numeric, Numeric, Numeric]:
        return compute.model_terms(
            batch,
            out["train_flops_per_example"],
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
        )

    # Sharded state (ZeRO-3/FSDP) also shards the optimizer's per-step reads and writes.
    step_bytes = _a(x["step_traffic_bytes"]) / x["state_shards"]
    out["step_traffic_bytes"] = step_bytes
    c, mem, fixed, t_model = modelled(
        x["peak_flops_per_s"],
        x["memory_bandwidth_bytes_per_s"],
        x["efficiency"],
        x["memory_traffic_bytes_per_example"],
        step_bytes,
        n,
    )
    out["compute_time_per_example_s"], out["memory_time_per_example_s"] = c, mem
    out["fixed_time_s"], out["model_step_time_s"] = fixed, t_model
    # The anchor: the batch the measurement was taken at (given, or the automatic batch on its GPU).
    a_max = memory.max_batch_size(
        x["anchor_gpu_memory_bytes"],
        x["reserved_bytes"],
        out["model_state_bytes"],
        x["anchor_activation_bytes_per_example"],
    )
    a_given = _a(x["anchor_batch"])
    # A measurement with no batch recorded was taken at the automatic batch of its own GPU.
    a_auto = np.maximum(memory.round_batch(a_max, x["rounding"]), 1.0)
    a_batch = np.where(np.isfinite(a_given), a_given, a_auto)
    out["anchor_batch_size"] = a_batch
    *_, t_anchor = modelled(
        x["anchor_peak_flops_per_s"],
        x["anchor_memory_bandwidth_bytes_per_s"],
        x["anchor_efficiency"],
        x["anchor_memory_traffic_bytes_per_example"],
        _a(x["anchor_step_traffic_bytes"]) / x["state_shards"],
        a_batch,
    )
    t, method = compute.step_time_s(
        n, t_model, x["measured_step_time_s"], x["measured_samples_per_s"], a_batch, t_anchor
    )
    out["step_time_s"], out["step_method"] = t, method
    arch = _a(x["arch"]) > 0
    evaluate_transformer(x, out, n)
    t = np.where(arch & (method == 2.0), out["model_step_time_s"], t)
    out["step_time_s"] = t
    given = _a(x["scaling_given"])
    scale = compute.scaling_efficiency(
        x["gpus_per_job"], x["gpus_per_node"], x["scaling_within_node"], x["scaling_across_nodes"]
    )
    # A measured step was taken in the job as configured: its all-reduce is already in it.
    # A transformer's data-parallel traffic is in its step time (evaluate_transformer).
    out["scaling_efficiency"] = np.where(np.isfinite(given), given, np.where((method == 2.0) & ~arch, scale, 1.0))
    ranks = _a(x["tensor_parallel"]) * x["pipeline_parallel"] * x["context_parallel"]
    per_gpu_step = np.where(arch, _a(out["batch_size"]) * x["gradient_accumulation"] / ranks, out["batch_size"])
    out["gpu_samples_per_s"] = demand.gpu_samples_per_s(per_gpu_step, t, out["scaling_efficiency"])


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
    dims = transformer.dims(x)
    layers, hidden, heads, kv_heads, _, _, seq = dims
    mode, mb = x["checkpointing"], x["gradient_accumulation"]
    per_token = transformer.train_flops_per_token(*dims, x["gated"])
    attention = _a(transformer.attention_flops_per_token(layers, hidden, seq)) * seq
    recompute = _a(transformer.recompute_flops_per_token(per_token, layers, hidden, seq, mode)) * seq
    flops = np.where(_a(x["flops_given"]) > 0, out["train_flops_per_example"], _a(per_token) * seq)
    traffic = np.where(
        _a(x["traffic_given"]) > 0,
        _a(x["memory_traffic_bytes_per_example"]) / ranks,
        _a(transformer.traffic_bytes_per_sequence(*dims, x["gated"], mode, ranks)) * x["element_scale"],
    )
    bw, e_m = x["memory_bandwidth_bytes_per_s"], x["memory_efficiency"]
    # The attention core (and its selective recompute) at its own efficiency; the rest at the GEMMs'.
    attn = np.where(_a(x["flops_given"]) > 0, 0.0, attention + np.where(_a(mode) == 1, recompute, 0.0))
    c = _a(
        compute.compute_time_per_example_s((flops + recompute - attn) / ranks, x["peak_flops_per_s"], x["efficiency"])
    ) + compute.compute_time_per_example_s(attn / ranks, x["attention_peak_flops_per_s"], x["attention_efficiency"])
    mem = compute.memory_time_per_example_s(traffic, bw, e_m)
    # No fill term: the transformer efficiency was measured on a layer at a real micro-batch
    # (calc.calibrate.TRANSFORMER_LAYER), so under-filling is already in it; the CNN-fitted
    # fill (about 10 examples) would charge 2-3 whole sequences per micro-batch.
    fill = 0.0
    step_bytes = _a(x["params"]) * transformer.STEP_BYTES_PER_PARAM / np.maximum(_a(x["state_shards"]), tp * pp)
    fixed = compute.fixed_time_s(step_bytes, bw, e_m, x["launch_overhead_s"], 0.0, 0.0)
    link, net, node = _a(x["gpu_link_bytes_per_s"]), _a(x["network_bytes_per_s_per_gpu"]), _a(x["gpus_per_node"])
    layer_bytes = transformer.tensor_parallel_bytes_per_layer(n, seq, hidden, tp, mode, cp) + (
        transformer.context_parallel_bytes_per_layer(n, seq, hidden, heads, kv_heads, cp, tp)
    )
    pp_link = np.where(tp * cp * pp > node, net, link)
    pp_bytes = np.where(pp > 1, transformer.pipeline_bytes_per_micro_batch(n, seq, hidden, tp, cp), 0.0)
    comm_mb = (_a(layers) / pp * layer_bytes / link + pp_bytes / pp_link) * x["element_scale"]
    bubble = transformer.pipeline_bubble(pp, mb, x["virtual_pipeline_stages"])
    replicas = np.maximum(_a(x["gpus_per_job"]) / ranks, 1.0)
    sharded = _a(x["state_shards"]) > tp * pp
    dp_link = np.where(_a(x["gpus_per_job"]) > node, net, link)
    dp_bytes = transformer.data_parallel_bytes(_a(x["params"]) / (tp * pp), replicas, sharded)
    dp = (1 - _a(x["data_parallel_overlap"])) * _a(dp_bytes) * x["element_scale"] / dp_link
    full = _a(x["flops_only"]) == 0
    t = transformer.step_time_s(
        n,
        mb,
        np.where(full, _a(c) + mem, c),
        np.where(full, fill, 0.0),
        np.where(full, comm_mb, 0.0),
        bubble,
        np.where(full, fixed, 0.0),
        np.where(full, dp, 0.0),
        np.where(full, x["stack_factor"], 1.0),
    )
    out["attention_core_flops_per_example"] = np.where(arch, attn, 0.0)
    out["model_parallel_ranks"] = ranks
    out["recompute_flops_per_example"] = np.where(arch, recompute, 0.0)
    out["pipeline_bubble"] = np.where(arch, bubble, 0.0)
    out["tensor_parallel_comm_s"] = np.where(arch, _a(comm_mb) * _a(mb) / (1 - _a(bubble)), 0.0)
    out["data_parallel_comm_s"] = np.where(arch, dp, 0.0)
    for key, new in (
        ("train_flops_per_example", flops),
        ("compute_time_per_example_s", c),
        ("memory_time_per_example_s", mem),
        ("memory_traffic_bytes_per_example", traffic),
        ("fixed_time_s", fixed),
        ("step_traffic_bytes", step_bytes),
        ("model_step_time_s", t),
    ):
        out[key] = np.where(arch, new, out[key])


@stage(
    Output("example_tensor_bytes", "bytes", "Tensor bytes per example", formula="{tensors}"),
    Output("batch_bytes", "bytes", "Batch in host memory", binary=True),
    Output("worker_ram_bytes", "bytes", "Worker RAM per GPU process", binary=True),
    Output("host_ram_per_node_bytes", "bytes", "Loader RAM per node", binary=True),
    Output("dataset_bytes", "bytes", "Dataset size"),
    Output("fits_in_ram", "count", "Dataset fits in free RAM (1 = yes)", words=("no", "yes")),
    Output("page_cache_hit", "count", "Page-cache hit rate after epoch 1", percent=True),
    Output("remote_fraction", "count", "Share of reads reaching storage", percent=True),
    keep=("batches_in_flight", "gpus_on_node"),
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
    gpus_on_node = np.minimum(x["gpus_per_job"], x["gpus_per_node"])
    out["gpus_on_node"] = gpus_on_node
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
    Output("cpu_cores", "count", "CPU cores, all GPUs and jobs", "cores", zero_without_step=True),
    Output("cpu_cores_per_node", "count", "CPU cores per node", "cores", zero_without_step=True),
    Output("h2d_bytes_per_s_per_gpu", "bytes_per_s", "Host-to-GPU per GPU", zero_without_step=True),
    Output("h2d_copy_time_s", "seconds", "Copy time per batch"),
    Output("h2d_share_of_step", "count", "Copy time / step time", percent=True, zero_without_step=True),
    Output("epoch_time_s", "seconds", "Epoch time per job", zero_without_step=True),
    keep=("cpu_seconds_effective",),
)
def evaluate_host(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Host side: CPU cores, host-to-GPU copy, epoch time."""
    per_gpu, gpus_on_node = out["per_gpu_samples_per_s"], out["gpus_on_node"]
    cpu_s = pipeline.cpu_seconds_effective(x["cpu_seconds_per_example"], x["gpu_decode"])
    out["cpu_seconds_effective"] = cpu_s
    out["cpu_cores"] = host.cpu_cores(out["samples_per_s"], cpu_s)
    out["cpu_cores_per_node"] = host.cpu_cores_per_node(per_gpu, gpus_on_node, cpu_s)
    out["h2d_bytes_per_s_per_gpu"] = host.h2d_bytes_per_s(per_gpu, x["example_tensor_bytes"])
    out["h2d_copy_time_s"] = host.copy_time_s(out["batch_bytes"], x["host_link_bytes_per_s"])
    out["h2d_share_of_step"] = host.copy_share(out["h2d_copy_time_s"], out["step_time_s"])
    out["epoch_time_s"] = demand.epoch_time_s(x["dataset_examples"], per_gpu, x["gpus_per_job"])


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
    clients = np.ceil(_a(x["gpus_per_job"]) / x["gpus_per_node"]) * x["jobs"]
    out["clients"] = clients
    given = _a(x["storage_units_given"])
    units = np.where(np.isfinite(given), given, x["storage_max_units"])
    out["storage_units_used"] = units
    bw = storage.supply_bytes_per_s(units, x["storage_unit_bytes_per_s"], clients, x["storage_client_bytes_per_s"])
    bw_given = _a(x["storage_bytes_per_s_given"])
    bw = np.where(np.isfinite(bw_given), bw_given, bw)
    out["storage_bytes_per_s"] = bw
    # A storage given only as a bandwidth (no option) has one figure for reads and writes.
    write = storage.supply_bytes_per_s(
        units, x["storage_unit_write_bytes_per_s"], clients, x["storage_client_bytes_per_s"]
    )
    out["storage_write_bytes_per_s"] = np.where(np.isfinite(bw_given), bw_given, write)
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
    out["storage_iops"] = np.where(np.isfinite(iops_given), iops_given, iops)
    lat = storage.read_service_time_s(
        x["storage_base_latency_s"], out["request_bytes"], x["storage_stream_bytes_per_s"]
    )
    lat_given = _a(x["storage_latency_given"])
    out["storage_latency_s"] = np.where(np.isfinite(lat_given), lat_given, lat)
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
)
def evaluate_pipeline(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Each stage's capacity per GPU, the achieved rate, utilisation and the bottleneck."""
    readers = _a(x["gpus_per_job"]) * x["jobs"]
    # Reads that cost a seek or a request: all of them on object stores, else one per file.
    seeks = np.where(_a(x["storage_counts_requests"]) > 0, out["reads_per_example"], 1.0 / _a(x["examples_per_file"]))
    gpu_rate = out["gpu_samples_per_s"]
    remote = out["remote_fraction"]
    is_async = _a(x["loader"]) > 0
    in_flight = np.where(is_async, x["reader_concurrency"], x["num_workers"])
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
            x["node_network_bytes_per_s"], out["gpus_on_node"], x["example_bytes"], remote
        ),
        "cpu": pipeline.cpu_stage(
            out["cpu_seconds_effective"], x["num_workers"], _a(x["cpu_cores_per_node"]) / out["gpus_on_node"]
        ),
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
    with np.errstate(divide="ignore", invalid="ignore"):
        ops_per_example = _a(x["metadata_ops_per_open"]) * remote / _a(x["examples_per_file"])
        by_metadata = np.where(ops_per_example > 0, _a(x["storage_metadata_ops"]) / ops_per_example / readers, np.inf)
    stages["storage"] = np.minimum(stages["storage"], by_metadata)
    # Synchronous workers read then decode each example: a bound of its own, so a stage.
    read_s = _a(out["storage_latency_s"]) * out["reads_per_example"] * remote
    stages["workers"] = pipeline.worker_bound(x["num_workers"], read_s, out["cpu_seconds_effective"], x["loader"])
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
    )
    out["achieved_samples_per_s"] = _a(rate) * readers
    with np.errstate(divide="ignore", invalid="ignore"):
        out["gpu_utilization"] = np.where(_a(gpu_rate) > 0, _a(rate) / gpu_rate, 0.0)
    out["bottleneck"] = bottleneck


@stage(
    Output("checkpoint_bytes", "bytes", "Checkpoint size", binary=True),
    Output("checkpoint_rank_bytes", "bytes", "Checkpoint bytes per writing rank", binary=True),
    Output("checkpoint_writing_ranks", "count", "Ranks writing a checkpoint", "ranks"),
    Output(
        "checkpoint_write_bytes_per_s",
        "bytes_per_s",
        "Checkpoint write bandwidth",
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
    Output("checkpoint_capacity_bytes", "bytes", "Checkpoints kept on storage", binary=True),
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
    Output("checkpoint_sync_write_bytes_per_s", "bytes_per_s", "Write bandwidth if saves block (stall budget)"),
    Output("checkpoint_async_write_bytes_per_s", "bytes_per_s", "Write bandwidth if saves are async (drain)"),
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
    keep=("checkpoint_rank_read_bytes_per_s", "checkpoint_params"),
)
def evaluate_checkpoint(x: Mapping[str, Numeric], out: Arrays) -> None:
    """Checkpoints: size, per-rank split, both modes' write bandwidth, host RAM, restore,
    retention, the failure rate, the Young-Daly interval and goodput (calc.checkpoint).

    With no interval given nothing is saved: sizes are still shown, rates are 0. The storage
    must then serve reads and writes together: a blocking save stops training (and its reads)
    while it runs, so the need is the larger of the two; an async drain runs beside the reads.
    Without a storage the write takes what the plan asks for: the stall budget (sync) or the
    whole interval (async drain).
    """
    # A model state typed per GPU is the model in use: the parameters it holds, not the preset's
    # (state x GPUs holding a piece / training bytes per parameter).
    given = _a(x["model_state_given"])
    shards = np.maximum(_a(x["state_shards"]), _a(x["tensor_parallel"]) * x["pipeline_parallel"])
    params = np.where(np.isfinite(given), given * shards / _a(x["bytes_per_param"]), x["params"])
    out["checkpoint_params"] = params
    c = checkpoint.checkpoint_bytes(
        params, x["checkpoint_weight_bytes_per_param"], x["checkpoint_optimizer_bytes_per_param"]
    )
    out["checkpoint_bytes"] = c
    mp = _a(x["tensor_parallel"]) * x["pipeline_parallel"]
    dp = np.maximum(_a(x["gpus_per_job"]) / mp, 1.0)
    wf = _a(x["checkpoint_weight_bytes_per_param"]) / (
        _a(x["checkpoint_weight_bytes_per_param"]) + x["checkpoint_optimizer_bytes_per_param"]
    )
    per_rank, ranks = checkpoint.bytes_per_rank(
        c, dp, x["tensor_parallel"], x["pipeline_parallel"], x["zero_stage"], wf
    )
    out["checkpoint_rank_bytes"], out["checkpoint_writing_ranks"] = per_rank, ranks
    is_async = _a(x["checkpoint_async"]) > 0
    out["checkpoint_async"] = is_async.astype(float)
    # One rank's share of its node's path to storage: the node link and the per-client cap.
    rank_link = np.minimum(_a(x["node_network_bytes_per_s"]), x["storage_client_bytes_per_s"]) / out["gpus_on_node"]
    out["checkpoint_rank_read_bytes_per_s"] = rank_link
    # Every GPU loads its own state: replicas without ZeRO read the same shard again.
    out["checkpoint_restore_bytes"] = _a(per_rank) * x["gpus_per_job"]
    restore = checkpoint.restore_time_s(
        out["checkpoint_restore_bytes"],
        out["storage_bytes_per_s"],
        per_rank,
        rank_link,
        x["checkpoint_load_bytes_per_s"],
    )
    out["checkpoint_restore_s"] = restore
    on_storage = checkpoint.save_time_s(c, out["storage_write_bytes_per_s"], ranks, rank_link)
    limited = _a(on_storage) > 0  # a storage or a node link limits the write
    host_copy = checkpoint.host_copy_s(per_rank, x["host_link_bytes_per_s"])
    out["checkpoint_host_copy_s"] = host_copy
    mtbf_given = _a(x["mtbf_s"])
    mtbf = np.where(np.isfinite(mtbf_given), mtbf_given, checkpoint.job_mtbf_s(x["gpus_per_job"]))
    out["mtbf_job_s"] = mtbf
    out["failures_per_month"] = checkpoint.failures_per_month(mtbf)
    # The interval: given, or Young-Daly from the blocking part of a save in the chosen mode.
    f = _a(x["checkpoint_stall_fraction"])
    interval = _a(x["checkpoint_interval_s"])
    given = np.isfinite(interval)
    yd_async = np.maximum(checkpoint.young_daly_interval_s(host_copy, mtbf, np.where(limited, 0.0, 1.0)), on_storage)
    # Sync without a storage: the save takes the stall budget f x T; for "optimal" the interval
    # that is Young-optimal for storage sized to its own budget, sqrt(2 f T M) = T -> T = 2 f M.
    yd_sync = np.where(
        limited,
        checkpoint.young_daly_interval_s(on_storage, mtbf),
        np.where(given, checkpoint.young_daly_interval_s(f * np.where(given, interval, 1.0), mtbf), 2.0 * f * mtbf),
    )
    young = np.where(is_async, yd_async, yd_sync)
    out["young_daly_interval_s"] = young
    used = np.where(given, interval, np.where(_a(x["checkpoint_interval_optimal"]) > 0, young, np.nan))
    saving = np.isfinite(used) & (used > 0)
    safe = np.where(saving, used, 1.0)
    out["checkpoint_interval_used_s"] = np.where(saving, used, 0.0)
    sync = checkpoint.sync_write_bytes_per_s(c, safe, f)
    drain = checkpoint.async_drain_bytes_per_s(c, safe)
    out["checkpoint_sync_write_bytes_per_s"] = np.where(saving, sync, 0.0)
    out["checkpoint_async_write_bytes_per_s"] = np.where(saving, drain, 0.0)
    out["checkpoint_write_bytes_per_s"] = np.where(saving, np.where(is_async, drain, sync), 0.0)
    # Writers on one node: its GPUs' ranks, at most all writing ranks of the job.
    node_writers = np.minimum(ranks, out["gpus_on_node"])
    out["checkpoint_host_ram_bytes"] = np.where(saving, checkpoint.async_host_ram_bytes(per_rank * node_writers), 0.0)
    asked = np.where(is_async, safe, f * safe)  # the write at the bandwidth the plan asks for
    write_s = np.where(limited, on_storage, np.where(saving, asked, 0.0))
    out["checkpoint_write_s"] = write_s
    blocking = checkpoint.blocking_s(write_s, safe, host_copy, is_async)
    out["checkpoint_blocking_s"] = np.where(saving, blocking, 0.0)
    out["checkpoint_stall_share"] = np.where(saving, checkpoint.stall_share(blocking, safe), 0.0)
    lag = np.where(saving & is_async, write_s, 0.0)
    out["checkpoint_lag_s"] = lag
    lost = checkpoint.lost_per_failure_s(restore, np.where(saving, used, 0.0), lag)
    out["checkpoint_lost_per_failure_s"] = np.where(saving, lost, 0.0)
    out["goodput"] = np.where(saving, checkpoint.goodput(out["checkpoint_stall_share"], lost, mtbf), 0.0)
    run, every = _a(x["run_length_s"]), _a(x["checkpoint_milestone_interval_s"])
    both = np.isfinite(run) & np.isfinite(every)
    milestones = np.where(both, checkpoint.milestone_count(np.where(both, run, 0.0), np.where(both, every, 1.0)), 0.0)
    out["checkpoint_milestones"] = milestones
    out["checkpoint_capacity_bytes"] = checkpoint.retained_capacity_bytes(c, x["checkpoint_keep"], milestones)
    out["checkpoint_durable"] = x["checkpoint_durable_store"]
    out["storage_need_bytes_per_s"] = np.where(
        is_async,
        _a(out["read_bytes_per_s"]) + out["checkpoint_write_bytes_per_s"],
        np.maximum(out["read_bytes_per_s"], out["checkpoint_write_bytes_per_s"]),
    )


def _checkpoint_rules(p: Plan) -> dict[str, str]:
    """Formula texts of the checkpoint outputs that depend on the mode, the storage and the inputs."""
    sc, v, x = p.scenario, p.values, p.inputs
    is_async = x.get("checkpoint_async", 0.0) > 0
    limited = any(
        math.isfinite(val)
        for val in (v["storage_write_bytes_per_s"], x["node_network_bytes_per_s"], x["storage_client_bytes_per_s"])
    )
    given = sc.checkpoint_interval_s not in (None, "optimal")
    on_storage = (
        "max({checkpoint_bytes} / {storage_write_bytes_per_s}, "
        "{checkpoint_bytes} / {checkpoint_writing_ranks} / {checkpoint_rank_read_bytes_per_s} per-rank link)"
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
        "milestone_rule": "floor({run_length_s} / {checkpoint_milestone_interval_s})"
        if sc.checkpoint_milestone_interval_s is not None
        else f"0 (no milestones: {ask('checkpoint_milestone_interval_s')} and {ask('run_length_s')})",
        "mode_rule": p.sources.get("checkpoint_async", ""),
    }


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
    get zero rates: nothing runs there.
    """
    out: Arrays = {}
    for step in STEPS:
        step(x, out)
    live = _a(out["fits"]) * (_a(out["batch_size"]) > 0)
    for key in _ZEROED:
        out[key] = _a(out[key]) * live
    return out


@dataclass(frozen=True)
class Plan:
    """The requirements of one scenario, every output of ``OUTPUTS`` in base units, with sources.

    ``explain()`` shows each formula with its numbers; ``to_frame()`` a table with units.
    Outputs are typed attributes (``plan.read_bytes_per_s`` in bytes/s); ``values`` holds
    them and the intermediate values by name.
    """

    scenario: Scenario
    values: Mapping[str, float]
    sources: Mapping[str, str]
    inputs: Mapping[str, float]
    step_method: str
    bottleneck: str
    stages: Mapping[str, float]
    warnings: tuple[str, ...] = field(default=())

    def __getattr__(self, name: str) -> float:
        # Every output of the registry is an attribute in base units (batch sizes are ints).
        out = OUTPUTS.get(name)
        if out is None or name.startswith("__"):
            raise AttributeError(f"Plan has no output {name!r}; outputs: calc.OUTPUTS")
        value = self.values[name]
        return int(value) if out.integer else float(value)

    @property
    def title(self) -> str:
        """The scenario's name and what it runs: for headings, reports and file names."""
        sc = self.scenario
        return f"{sc.name}: {sc.model} on {sc.gpus_per_job * sc.jobs} x {sc.gpu}, {sc.precision}"

    def formatted(self, name: str) -> str:
        """One output with its unit: ``"5,885 reads/s"``, ``"12.97 GiB"``."""
        if name == "goodput" and self.values[name] == 0 and self.values["checkpoint_interval_used_s"] > 0:
            return "0.00 % (interruptions cost more than the MTBF)"  # saving, yet nothing useful
        return format_output(name, self.values[name])

    def explain(self) -> str:
        """Each formula, then the same with the numbers plugged in, and the result."""
        lines = [f"Plan for {self.title}"]
        for name in OUTPUTS:
            symbolic, numeric = render_formula(self, formula(self, name))
            lines.append(f"{name} = {symbolic}")
            if numeric != symbolic:
                lines.append(f"    = {numeric}")
            lines.append(f"    = {self.formatted(name)}")
        lines.append(
            f"bottleneck = {self.bottleneck} (stage capacities per GPU: "
            + ", ".join(f"{k} {fmt(v, 'count_per_s', 'samples/s')}" for k, v in self.stages.items())
            + ")"
        )
        lines.append(f"step time method: {self.step_method}")
        lines.append("Sources:")
        lines += [f"  {k}: {v}" for k, v in sorted(self.sources.items()) if v]
        lines += [f"Warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """Outputs as a table: name, label, value (base units), formatted value, formula."""
        rows = [
            {
                "output": k,
                "label": o.label,
                "value": float(self.values[k]),
                "display": self.formatted(k),
                "formula": render_formula(self, formula(self, k))[0],
            }
            for k, o in OUTPUTS.items()
        ]
        return pd.DataFrame(rows).set_index("output")

    def to_dict(self) -> dict[str, Any]:
        """Outputs in base units plus the method and bottleneck (for JSON/YAML)."""
        out: dict[str, Any] = {k: float(self.values[k]) for k in OUTPUTS}
        out["batch_size"] = self.batch_size
        out["max_batch_size"] = self.max_batch_size
        out["step_method"] = self.step_method
        out["bottleneck"] = self.bottleneck
        return out

    def _repr_html_(self) -> str:
        head = f"<b>{self.title}</b>; bottleneck: <b>{self.bottleneck}</b>"
        return head + self.to_frame()[["label", "display", "formula"]].to_html()

    def __repr__(self) -> str:
        return (
            f"Plan({self.scenario.name}: "
            + ", ".join(f"{k}={self.formatted(k)}" for k in HEADLINE)
            + f", bottleneck={self.bottleneck})"
        )


def format_output(name: str, value: float) -> str:
    """Format one output by its unit kind (GPU memory in GiB, rates in decimal units)."""
    out = OUTPUTS[name]
    if value == 0 and out.not_given:
        return out.not_given
    if out.percent:
        return f"{value * 100:.{out.digits}f} %"
    if out.words[1]:
        return out.words[int(value != 0)]
    if out.integer:
        n = int(value)
        return f"{n:,} example" + ("" if n == 1 else "s")
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
        ("_bytes", "bytes"),
        ("_flops", "flops"),
        ("_s", "seconds"),
    )
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


def render_formula(p: Plan, template: str) -> tuple[str, str]:
    """The formula with names, and with the plan's numbers (units included)."""
    sc = p.scenario
    multiplier = sc.train_flops_multiplier
    measured_flops = math.isfinite(p.inputs.get("train_flops_measured", math.nan))
    rules = {
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
            else {"step_model_rule": "{stack_factor} x ({batch_size} x per-example time + {fixed_time_s})"}
            if not p.inputs.get("arch", 0.0)
            else {"step_model_rule": "(see tensor_parallel_comm_s, pipeline_bubble, data_parallel_comm_s)"}
        ),
        "train_flops_multiplier": f"{multiplier if multiplier is not None else compute.TRAIN_FLOPS_MULTIPLIER:g}",
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
        else "{params} x {bytes_per_param} B / {state_shards}",
        "achieved_rule": "1 / sum(1 / stages) (no workers: the stages run in turn)"
        if sc.num_workers == 0
        else "min(stages)"
        if sc.loader == "async"
        else f"min(stages, {sc.num_workers} workers / (read + decode time per example))",
        **_checkpoint_rules(p),
        "scaling_rule": "input (scenario)"
        if sc.scaling_efficiency is not None
        else "1: a measured step already contains the job's all-reduce"
        if p.step_method != "model"
        else "1 for one GPU; within-node factor on one node; x across-node factor beyond: "
        + p.sources.get("scaling_efficiency", ""),
        **{
            f"src_{k}": p.sources.get(k, "input")
            for k in (
                "gpu_memory_bytes",
                "memory_bandwidth_bytes_per_s",
                "activation_bytes_per_example",
                "memory_traffic_bytes_per_example",
                "step_traffic_bytes",
                "peak_flops_per_s",
                "efficiency",
                "memory_efficiency",
                "node_network_bytes_per_s",
            )
        },
        "tensors": sc.tensors or f"preset {sc.model}",
    }
    symbolic = template
    for _ in range(2):  # rules may contain placeholders themselves
        symbolic = symbolic.format_map(_Keep(rules))
    numbers: dict[str, str] = {}
    for key in set(OUTPUTS) | set(p.inputs) | set(_EXTRA):
        if key in OUTPUTS:
            numbers[key] = p.formatted(key)
        elif key in p.values or key in p.inputs:
            value = float(p.values.get(key, p.inputs.get(key, math.nan)))
            numbers[key] = fmt(value, input_kind(key)) if math.isfinite(value) else "unlimited"
    numbers["clients"] = fmt(p.values.get("clients", math.nan), "count")
    numeric = symbolic.format_map(_Keep(numbers))
    return symbolic.replace("{", "").replace("}", ""), numeric


class _Keep(dict[str, str]):
    """format_map helper: unknown placeholders stay as they are."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def as_scenario(scenario: Any = None, **inputs: Any) -> Scenario:
    """A Scenario from an object, a preset name or inputs, with ``inputs`` applied."""
    if scenario is None:
        unknown = sorted(set(inputs) - set(FIELDS))
        if unknown:
            return Scenario().replace(**inputs)  # raises, naming the unknown input
        return Scenario(**inputs)
    if isinstance(scenario, str):
        return preset_scenario(scenario, **inputs)
    if isinstance(scenario, Plan):
        scenario = scenario.scenario
    if not isinstance(scenario, Scenario):
        raise InputError("scenario", f"expected a Scenario, a Plan or a preset name, got {type(scenario).__name__}")
    return scenario.replace(**inputs) if inputs else scenario


def plan(scenario: Scenario | str | None = None, **inputs: Any) -> Plan:
    """Evaluate a scenario (an object, a preset name, or inputs) into a Plan.

    ``plan("beast-imagenet-4xv100", gpus_per_job=8)``, ``plan(my_scenario)`` or
    ``plan(gpu="H100-SXM", model="vit_b16")``: inputs override the scenario's.

    Plans are immutable and presets are read once per process, so the last 512 distinct
    scenarios are kept: asking again costs a dictionary look-up.

    Raises
    ------
    DoesNotFitError
        When the model does not fit in GPU memory (at batch 1, or at the fixed batch).
    InputError
        For any invalid input, naming the field.
    """
    return _plan(as_scenario(scenario, **inputs))


@functools.lru_cache(maxsize=512)
def _plan(sc: Scenario) -> Plan:
    """``plan`` of one Scenario, uncached (``plan`` caches it)."""
    r = resolve(sc)
    out = evaluate(r.values)
    values = {k: float(np.asarray(v)) for k, v in out.items()}
    warnings = list(r.warnings)
    if not values["fits"]:
        raise _does_not_fit(sc, values)
    if values["h2d_share_of_step"] > 0.5:
        warnings.append(
            "The host-to-GPU copy takes over half the step: overlap it (pin_memory, a side stream) or send uint8."
        )
    method = compute.METHODS[int(values["step_method"])]
    if method == "re-projected measurement":
        warnings.append(
            f"The measured step ({sc.measured_gpu}, {sc.measured_precision}, batch {values['anchor_batch_size']:g}) is "
            f"re-projected to {sc.gpu}, {sc.precision}, batch {values['batch_size']:g} through the step-time model "
            f"(x {values['step_time_s'] / _measured_step(r.values, values):.3g})."
        )
    if method in ("measured step time", "measured throughput", "re-projected measurement"):
        warnings += _faster_than_peak(sc, r.values, values)
    stages = {s: values[STAGE_KEYS[s]] for s in pipeline.STAGES if math.isfinite(values[STAGE_KEYS[s]])}
    bad = [
        k for k in OUTPUTS if math.isnan(values[k]) or values[k] < 0 or (values[k] == math.inf and k not in UNLIMITED)
    ]
    if bad:
        raise InputError(bad[0], f"the inputs give a non-finite or negative {bad[0]}; check the inputs it depends on")
    return Plan(
        scenario=sc,
        # Read-only views: a cached Plan is shared by every caller that asks for the same scenario.
        values=MappingProxyType(
            {k: values[k] for k in OUTPUTS}
            | {k: values[k] for k in _EXTRA}
            | {"anchor_batch_size": values["anchor_batch_size"]}
        ),
        sources=MappingProxyType(r.sources),
        inputs=MappingProxyType(r.values),
        step_method=method,
        bottleneck=pipeline.STAGES[int(values["bottleneck"])],
        stages=stages,
        warnings=tuple(warnings),
    )


def _measured_step(x: Mapping[str, float], v: Mapping[str, float]) -> float:
    step = x["measured_step_time_s"]
    return step if math.isfinite(step) else v["anchor_batch_size"] / x["measured_samples_per_s"]


def _faster_than_peak(sc: Scenario, x: Mapping[str, float], v: Mapping[str, float]) -> list[str]:
    """A warning when the measurement implies more math per second than its GPU's peak allows.

    Implied rate = training FLOPs per example x the measured batch / the measured step [FLOP/s],
    against the dense peak of the GPU and precision it was measured at. Above it, the figure
    was taken at another precision (tensor-core fp16/bf16), batch or model, or is a typo.
    """
    implied = v["train_flops_per_example"] * v["anchor_batch_size"] / _measured_step(x, v)
    peak = x["anchor_peak_flops_per_s"]
    if not implied > peak:
        return []
    what = "step time" if sc.step_time_s is not None else "throughput"
    return [
        f"The measured {what} implies {fmt(implied, 'flops_per_s')} of training math per GPU "
        f"({fmt(v['train_flops_per_example'], 'flops')} x batch {v['anchor_batch_size']:g} / "
        f"{fmt(_measured_step(x, v), 'seconds')}), {implied / peak:.2f} x the {fmt(peak, 'flops_per_s')} "
        f"{sc.measured_precision} peak of {sc.measured_gpu}: was it measured at another precision "
        "(tensor-core fp16/bf16), batch or model?"
    ]


def _does_not_fit(sc: Scenario, v: Mapping[str, float]) -> DoesNotFitError:
    def gib(b: float) -> str:
        return fmt(b, "bytes", binary=True)

    helps = (
        "What helps: mixed precision (bf16/fp16), activation checkpointing (activation_checkpointing for a "
        "transformer by its architecture, else set activation_bytes_per_example), a smaller input, sharding the "
        "state (state_shards), tensor/pipeline parallelism, or a GPU with more memory."
    )
    if sc.batch_size is not None:
        need = v["memory_used_bytes"]
        return DoesNotFitError(
            "batch_size",
            f"{sc.model} at batch {sc.batch_size} does not fit on {sc.gpu} with {sc.precision}/{sc.optimizer}: "
            "it needs "
            f"{gib(need)} (reserve {gib(v['reserved_bytes'])} + state {gib(v['model_state_bytes'])} + "
            f"{sc.batch_size} x {gib(v['activation_bytes_per_example'])}) "
            f"but the GPU has {gib(v['gpu_memory_bytes'])}; "
            f"the largest batch that fits is {int(v['max_batch_size'])}. {helps}",
        )
    need = v["reserved_bytes"] + v["model_state_bytes"] + v["activation_bytes_per_example"]
    return DoesNotFitError(
        "batch_size",
        f"{sc.model} does not fit on {sc.gpu} at batch 1 with {sc.precision}/{sc.optimizer}: it needs {gib(need)} "
        f"(reserve {gib(v['reserved_bytes'])} + state {gib(v['model_state_bytes'])} + one example's activations "
        f"{gib(v['activation_bytes_per_example'])}) but the GPU has {gib(v['gpu_memory_bytes'])}, "
        f"short by {gib(need - v['gpu_memory_bytes'])}. {helps}",
    )
