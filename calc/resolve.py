"""resolve(): a Scenario reduced to base-unit numbers with the source of each (look-ups and
parsing only, no formulas), one step per family of inputs."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from calc import catalog, checkpoint, compute, demand, host, memory, pipeline, storage, transformer
from calc._types import python_call
from calc.checkpoint import CHECKPOINT_LAYOUTS
from calc.errors import InputError
from calc.fit import fitted, fp8_gemm_inputs, fp8_source, generation_efficiencies, ratio_bands
from calc.scenario import BLANK_MODEL, FIELDS, Scenario, ask, bare_number_hint
from calc.site import job_site
from calc.units import Kind, fmt, parse

DEFAULT_HOST_RAM_BYTES = 512 * 2.0**30
"""Host RAM per node when neither an input nor a server preset gives it [bytes]: 512 GiB, a
common 8-GPU node (DGX A100 has 1 TiB, DGX H100 2 TiB; presets/servers.yaml)."""

DEFAULT_STORAGE_LATENCY_S = 1e-3
"""Read latency when no storage option or latency is given [s]: 1 ms, between local NVMe
(60-115 µs) and networked file systems (~1 ms and up) in presets/storage.yaml."""


BARE_HINTED = tuple(
    k for k, f in FIELDS.items() if f.unit and f.kind in ("bytes", "bytes_per_s", "seconds", "flops", "flops_per_s")
)
"""Inputs whose label shows a unit: a bare number below one of it gets a hint in the plan."""


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
    m = blank_model(sc) if sc.model == BLANK_MODEL else catalog.model(sc.model)
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
    _resolve_site_link(c)
    _resolve_checkpoint(c)
    _resolve_layout(c)
    # Only a number typed bare can get a hint: empty inputs and text with a unit are skipped at once
    # (the hint's check is an ABC instance test, a tenth of a resolve over ~30 inputs).
    given = vars(sc)  # the fields as given, read without ~30 getattr calls
    warnings += [
        h
        for k in BARE_HINTED
        if (x := given[k]) is not None and not isinstance(x, str) and (h := bare_number_hint(k, x))
    ]
    return Resolved(v, src, warnings)


def blank_model(sc: Scenario) -> catalog.Model:
    """The model of ``model="blank"``: the scenario's own figures, nothing from a preset
    (Scenario has checked that they are given; the example size and the examples may come from
    the dataset's size, in ``_resolve_data``). Its memory traffic is estimated from the
    activations unless given (the source says so)."""
    act = parse(sc.activation_bytes_per_example, "bytes", "activation_bytes_per_example")
    example = math.nan if sc.example_bytes is None else parse(sc.example_bytes, "bytes", "example_bytes")
    examples = math.nan if sc.dataset_examples is None else parse(sc.dataset_examples, "count", "dataset_examples")
    return catalog.Model(
        name=BLANK_MODEL,
        params=parse(sc.params, "count", "params"),
        forward_flops=parse(sc.forward_flops_per_example, "flops", "forward_flops_per_example"),
        activation_bytes={"fp32": act, "mixed": act},
        tensors=str(sc.tensors),
        example_bytes=example,
        dataset_examples=examples,
        cpu_seconds_per_example=(
            math.nan
            if sc.cpu_seconds_per_example is None
            else parse(sc.cpu_seconds_per_example, "seconds", "cpu_seconds_per_example")
        ),
        calibration=(),
        sources=dict.fromkeys(catalog.MODEL_FIGURES, "scenario (blank model)"),
        family=BLANK_MODEL,
    )


def optimizer(sc: Scenario, m: catalog.Model) -> str:
    """The scenario's optimizer, else its model family's (calc.memory.default_optimizer)."""
    return sc.optimizer or memory.default_optimizer(m.family)


def family_factor(fit: Any, m: catalog.Model) -> float:
    """The fitted compute-efficiency factor of the model's family (1 for a blank model: no family)."""
    return float(fit.family_factors.get(m.family, 1.0))


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
    opt = optimizer(sc, m)
    v["bytes_per_param"] = memory.BYTES_PER_PARAM[opt]
    src["bytes_per_param"] = f"optimizer {opt} (calc.memory.BYTES_PER_PARAM)"
    if sc.optimizer is None:
        src["bytes_per_param"] += f", the {m.family} default"
        c.warnings.append(
            f"optimizer not given: {opt}, the default for a {m.family} model ({memory.BYTES_PER_PARAM[opt]:g} B of "
            f"training state per parameter); {ask('optimizer')} to choose."
        )
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
        share, share_src = catalog.convolution_peak_share(g.name, sc.precision, m.family, fit.flops_per_shared_byte)
        v["efficiency"] = fit.compute_efficiency[pclass] * family_factor(fit, m) * share
        src["efficiency"] = f"fitted {pclass} compute efficiency, {m.family} ({fit.describe})" + (
            f"; {share_src}" if share_src else ""
        )
    v["memory_efficiency"], src["memory_efficiency"] = fit.memory_efficiency, f"fitted ({fit.describe})"
    v["launch_overhead_s"], v["fill_examples"] = fit.launch_overhead_s, fit.fill_examples
    v["flops_only"] = float(sc.step_model == "flops")
    # An eager CNN pays its stack per byte of traffic (calc.fit.eager_seconds_per_byte); a transformer x factor.
    additive = sc.stack == "eager" and m.family != "transformer"
    v["stack_factor"] = 1.0 if additive else fit.stack_factors[sc.stack][pclass]
    v["stack_s_per_byte"] = fit.eager_s_per_byte[pclass] if additive else 0.0
    src["stack_factor"] = f"stack {sc.stack}: {fit.stack_source(sc.stack)}"
    _resolve_stack_traffic(c)
    if m.name == BLANK_MODEL and sc.efficiency is None and sc.step_time_s is None and sc.samples_per_s_per_gpu is None:
        warnings.append(
            f"Blank model: its step time uses the fitted {pclass} compute efficiency with no model family "
            "(an fp32 CNN reaches about half the fp32 peak on GPUs with 128 FP32 lanes per SM, docs/model.md 4.3.1) "
            f"and memory traffic estimated from its activations unless given; {ask('efficiency')} or give a "
            "measured step time to pin it."
        )
    if sc.precision == "fp8" and sc.efficiency is None:
        warnings.append(
            "fp8 step time is an estimate: no fp8 training measurement calibrates it; the mixed-precision "
            "efficiency is applied to the fp8 peak (optimistic)."
        )


def _resolve_stack_traffic(c: _Ctx) -> None:
    """The traffic a fusing stack removes and the depthwise convolutions' share: the inputs, else the
    model preset's figures (calc.compute.memory_time_per_example_s)."""
    sc, m, mclass, fit, v, src, warnings, put = c.sc, c.m, c.mclass, c.fit, c.v, c.src, c.warnings, c.put
    v["stack_fuses"] = compute.STACK_FUSES[sc.stack]
    known = mclass in m.fused_traffic_share
    put(
        "fused_traffic_share",
        sc.fused_traffic_share,
        "count",
        m.fused_traffic_share.get(mclass, 0.0),
        f"models.yaml {m.name} ({mclass}): {m.sources.get('fused_traffic_share', '')}"
        if known
        else f"no per-op traffic measurement for {m.name}: 0",
    )
    by_architecture = m.name in transformer.architectures() or sc.layers is not None
    if v["stack_fuses"] and not known and sc.fused_traffic_share is None and not by_architecture:
        warnings.append(
            f"stack {sc.stack} fuses element-wise ops, but no per-op measurement of {m.name} says how much of its "
            f"traffic they are, so the step is planned as the ngc stack's; {ask('fused_traffic_share')} "
            "(calc.measure.model measures it)."
        )
    put(
        "depthwise_traffic_share",
        sc.depthwise_traffic_share,
        "count",
        m.depthwise_traffic_share,
        f"models.yaml {m.name}: {m.sources.get('depthwise_traffic_share', 'no depthwise convolutions')}"
        if m.name != BLANK_MODEL
        else "blank model: none unless given",
    )
    if v["fused_traffic_share"] + v["depthwise_traffic_share"] >= 1:
        raise InputError(
            "depthwise_traffic_share",
            f"{v['depthwise_traffic_share']:g} of the traffic in depthwise convolutions and "
            f"{v['fused_traffic_share']:g} in fusable element-wise ops leave nothing else; accepted: shares that "
            "add up to less than 1",
        )
    v["depthwise_memory_efficiency"] = fit.depthwise_efficiency
    src["depthwise_memory_efficiency"] = f"fitted ({fit.describe}): depthwise convolutions' share of the bandwidth"
    src["stack_traffic_share"] = f"stack {sc.stack} ({'fuses' if v['stack_fuses'] else 'does not fuse'})"


def _resolve_transformer(c: _Ctx) -> None:
    """A transformer by its architecture and parallel layout (calc.transformer)."""
    sc, g, m, mclass, fit, v, src, warnings = c.sc, c.g, c.m, c.mclass, c.fit, c.v, c.src, c.warnings
    tv, t_src, twarn = transformer.resolve(sc, m.name, g.name, g.host_link_bytes_per_s)
    v |= tv
    src |= t_src
    warnings += twarn
    v["grad_element_bytes"] = math.nan
    if (
        tv["arch"]
        and tv["dp_framework"] >= 2
        and optimizer(sc, m) in ("adam", "adamw")
        and sc.precision in (memory.MEGATRON_MIXED_STATE)
    ):
        # Megatron-Core keeps fp32 main gradients (bf16) or an fp32 copy beside fp16 ones: 18 or 20 B per parameter.
        v["bytes_per_param"], v["grad_element_bytes"] = memory.MEGATRON_MIXED_STATE[sc.precision]
        src["bytes_per_param"] = (
            f"optimizer {optimizer(sc, m)} as Megatron-Core keeps it at {sc.precision}: {v['bytes_per_param']:g} B per "
            f"parameter, gradients {v['grad_element_bytes']:g} B (calc.memory.MEGATRON_MIXED_STATE)"
        )
    v["attention_peak_flops_per_s"] = v["peak_flops_per_s"]
    v |= fp8_gemm_inputs(g.name)  # GEMM roofline on this GPU; used where fp8_gemm = 1 (transformer.fp8_math_factor)
    v["fp8_gemm"] = 0.0
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
        elif (
            any(getattr(sc, k) is not None for k in (*transformer.ARCH_INPUTS[:6], *transformer.MOE_INPUTS))
            or sc.mlp is not None
        ):
            # A mixture of experts holds every expert: the FFN width in all (calc.transformer.moe_ffn).
            v["params"] = float(
                python_call(
                    transformer.params_count, *transformer.dims(tv | {"ffn_hidden": tv["ffn_total"]})[:6], tv["gated"]
                )
            )
            src["params"] = "derived from the architecture (calc.transformer.params_count, untied embeddings)"
        if sc.efficiency is None:
            # The A100 layer efficiency, carried to this GPU by its GEMM and attention kernel measurements.
            e, e_attn, e_src, a_src, e_warn = generation_efficiencies(fit.transformer_efficiency, g.name)
            v["efficiency"], v["attention_efficiency"] = e, e_attn
            src["efficiency"], src["attention_efficiency"] = f"{fit.transformer_efficiency_source}; on {e_src}", a_src
            warnings += e_warn
        else:
            v["attention_efficiency"], src["attention_efficiency"] = v["efficiency"], "as the matrix multiplies"
        if sc.precision == "fp8":
            # fp8 runs the matrix multiplies only (Transformer Engine); attention stays 16-bit.
            v["attention_peak_flops_per_s"] = g.peak("bf16")
            if sc.efficiency is None:
                # The 16-bit layer efficiency; calc.stages turns it into the fp8 one at this batch's shapes.
                v["fp8_gemm"], src["efficiency"] = 1.0, f"{fp8_source(g.name)}; the 16-bit layer: {src['efficiency']}"
                warnings[:] = [w for w in warnings if not w.startswith("fp8 step time is an estimate")]
                warnings.append(
                    "fp8 step time is an estimate: published fp8 and bf16 GEMM throughput at this model's shapes "
                    "(presets/gemm.yaml) speed up the layer's matrix multiplies only; no fp8 training run calibrates "
                    "it."
                )
        _architecture_sources(src)
    elif sc.params is not None:
        v["params"], src["params"] = parse(sc.params, "count", "params"), "scenario"


def _architecture_sources(src: dict[str, str]) -> None:
    """Where a transformer's per-example figures come from: its architecture (the given ones stand)."""
    arch_src = src["architecture"]
    for k, what in (
        ("activation_bytes_per_example", "calc.transformer.activation_bytes_per_sequence"),
        ("memory_traffic_bytes_per_example", "calc.transformer.traffic_bytes_per_sequence (fused kernels)"),
        ("step_traffic_bytes", "32 B per parameter per rank (calc.transformer.STEP_BYTES_PER_PARAM)"),
    ):
        if src.get(k) != "scenario":
            src[k] = f"{what}; {arch_src}"
    src["train_flops_per_example"] = f"calc.transformer.train_flops_per_token x seq_len; {arch_src}"


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
    # fp32 convolutions: the share of the peak depends on the GPU (calc.catalog.convolution_peak_share).
    shares = [
        catalog.convolution_peak_share(x.name, p, m.family, fit.flops_per_shared_byte)[0]
        if sc.efficiency is None
        else 1.0
        for x, p in ((g, sc.precision), (ag, aprec))
    ]
    v["anchor_efficiency"] = (
        v["efficiency"] / shares[0] * shares[1]
        if same_prec
        else fit.compute_efficiency[catalog.precision_class(aprec)] * family_factor(fit, m) * shares[1]
    )
    a_traffic, a_step, _ = m.traffic(aclass)
    v["anchor_memory_traffic_bytes_per_example"] = v["memory_traffic_bytes_per_example"] if same_prec else a_traffic
    v["anchor_step_traffic_bytes"] = v["step_traffic_bytes"] if same_prec else a_step
    v["anchor_activation_bytes_per_example"] = (
        v["activation_bytes_per_example"] if same_prec else m.activation_bytes[aclass]
    )
    v["anchor_batch"] = _nan(sc.measured_batch_size)
    _resolve_band(c, ag, aprec, shares)
    v["scaling_given"] = _nan(sc.scaling_efficiency)
    v["scaling_within_node"], v["scaling_across_nodes"] = fit.scaling_within_node, fit.scaling_across_nodes
    src["scaling_efficiency"] = "scenario" if sc.scaling_efficiency is not None else fit.scaling_source


def _resolve_band(c: _Ctx, ag: catalog.GPU, aprec: str, shares: list[float]) -> None:
    """The measured GPU at this scenario's precision and batch (the re-projection's midpoint: its batch and
    precision change first, then the GPU), and the band the GPU change must stay in: the published rates
    between the two GPUs (calc.fit.ratio_bands), else the datasheets' bandwidth and peak ratios."""
    sc, g, m, fit, v, src = c.sc, c.g, c.m, c.fit, c.v, c.src
    same_gpu = ag.name == g.name
    mprec = sc.precision if sc.precision in ag.peak_flops_per_s else aprec
    mid_share = (
        catalog.convolution_peak_share(ag.name, mprec, m.family, fit.flops_per_shared_byte)[0]
        if sc.efficiency is None
        else 1.0
    )
    v["mid_peak_flops_per_s"] = v["peak_flops_per_s"] if same_gpu else ag.peak(mprec)
    v["mid_memory_bandwidth_bytes_per_s"] = v["anchor_memory_bandwidth_bytes_per_s"]
    v["mid_efficiency"] = (
        v["efficiency"] / shares[0] * mid_share if mprec == sc.precision and shares[0] > 0 else v["anchor_efficiency"]
    )
    cls = catalog.precision_class(sc.precision)
    band = ratio_bands().get((ag.name, g.name, cls))
    if same_gpu:
        lo, hi, words = 1.0, 1.0, "the same GPU"
    elif band is not None:
        lo, hi, words = band
    else:
        peak_ratio = v["peak_flops_per_s"] * shares[0] / (v["mid_peak_flops_per_s"] * mid_share)
        bw_ratio = v["memory_bandwidth_bytes_per_s"] / v["mid_memory_bandwidth_bytes_per_s"]
        lo, hi = min(peak_ratio, bw_ratio), max(peak_ratio, bw_ratio)
        words = (
            f"no published rates of {ag.name} and {g.name} in calibration.yaml: between the datasheets' "
            f"bandwidth ratio x{bw_ratio:.3g} and {cls} peak ratio x{peak_ratio:.3g} (a step is bound by the one or "
            "the other)"
        )
    v["reprojection_band_low"], v["reprojection_band_high"] = lo, hi
    src["reprojection_band"] = words


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
    put(
        "dataset_examples",
        sc.dataset_examples,
        "count",
        m.dataset_examples,
        f"models.yaml {m.name}: {m.sources['dataset_examples']}",
    )
    tensors = _token_examples(c)
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
    _resolve_dataset_bytes(c)
    _resolve_resolution(c)
    # A preset's image tensors follow the training side (3x224x224 trained at 160 px is 3x160x160);
    # token windows follow seq_len (_token_examples); given tensors stand.
    if not sc.tensors and tensors == m.tensors:
        tensors = host.tensors_at_resolution(m.tensors, m.train_resolution, v["train_resolution"])
    v["example_tensor_bytes"] = host.tensor_bytes(tensors)
    if "example_tensor_bytes" not in src:
        src["example_tensor_bytes"] = (
            "scenario"
            if sc.tensors
            else f"models.yaml {m.name}: {m.sources['tensors']}"
            + (f", at {v['train_resolution']:g} px: {tensors}" if tensors != m.tensors else "")
        )
    _resolve_loader(c)


def _resolve_resolution(c: _Ctx) -> None:
    """The training side and the side the model's per-example figures were taken at (calc.resolution)."""
    sc, m, v, src = c.sc, c.m, c.v, c.src
    v["reference_resolution"] = m.train_resolution
    v["train_resolution"] = float(sc.train_resolution) if sc.train_resolution is not None else m.train_resolution
    src["train_resolution"] = (
        "scenario"
        if sc.train_resolution is not None
        else f"models.yaml {m.name}: {m.sources['train_resolution']}"
        if "train_resolution" in m.sources
        else "none: the model is not an image model (no train_resolution)"
    )
    measured = sc.measured_train_resolution
    v["anchor_resolution"] = float(measured) if measured is not None else m.train_resolution
    vision = m.vision or {}
    for k in ("patch", "layers", "hidden"):
        v[f"vision_{k}"] = float(vision.get(k, math.nan))
    # Figures the scenario gives are at its own training side; the preset's are scaled to it.
    for k in ("forward_flops_per_example", "activation_bytes_per_example", "memory_traffic_bytes_per_example"):
        v[f"{k}_at_reference"] = float(getattr(sc, k) is None)


@functools.lru_cache(maxsize=256)
def _preset_token_window(tensors: str, seq_len: int) -> bool:
    """``transformer.token_window`` of a model preset's tensors at its architecture's ``seq_len``: catalog
    values only, so every scenario of that model asks the same (the split and compare cost ~1.6 us)."""
    return transformer.token_window(tensors, seq_len)


def _token_examples(c: _Ctx) -> str:
    """A token dataset follows the plan's sequence and vocabulary: where the model's tensors are
    token windows of its preset's ``seq_len``, an example is ``seq_len`` tokens of
    ``transformer.token_bytes(vocab)`` each (the loader's tensors ``seq_len`` long), and the
    preset's corpus keeps its tokens (its examples scale by preset seq / seq). Given figures
    stand. Returns the loader's tensors."""
    sc, m, v, src = c.sc, c.m, c.v, c.src
    tensors = sc.tensors or m.tensors
    preset = transformer.architectures().get(m.name)
    if not v.get("arch") or preset is None or not _preset_token_window(m.tensors, preset.seq_len):
        return tensors
    seq, width = int(v["seq_len"]), float(transformer.token_bytes(v["vocab"]))
    rule = f"seq_len {seq:,} x {width:g} B tokens (vocab {v['vocab']:,.0f}: calc.transformer.token_bytes)"
    if sc.example_bytes is None:
        v["example_bytes"], src["example_bytes"] = seq * width, rule
    if sc.dataset_examples is None and sc.dataset_bytes is None and seq != preset.seq_len:
        v["dataset_examples"] = m.dataset_examples * preset.seq_len / seq
        src["dataset_examples"] = (
            f"the {m.name} preset's corpus in {seq:,}-token examples ({m.dataset_examples:,.0f} x {preset.seq_len:,}"
            f" / {seq:,}): {m.sources['dataset_examples']}"
        )
    if sc.tensors is None and seq != preset.seq_len:
        tensors = transformer.resize_window(m.tensors, seq)
        src["example_tensor_bytes"] = f"{tensors} (the {m.name} preset's window at seq_len {seq:,})"
    return tensors


DATASET_BYTES_TOLERANCE = 0.01
"""Relative disagreement allowed between dataset_bytes and dataset_examples x example_bytes when
all three are given (rounding of a size written as "1.3 TB")."""


def _resolve_dataset_bytes(c: _Ctx) -> None:
    """The dataset's size in bytes, examples and example size: any two give the third."""
    sc, v, src = c.sc, c.v, c.src
    if sc.dataset_bytes is None:
        return
    total = parse(sc.dataset_bytes, "bytes", "dataset_bytes")
    if sc.example_bytes is None and sc.dataset_examples is not None:
        if v["dataset_examples"] <= 0:  # 0 examples cannot share out the bytes (it divided by zero)
            raise InputError(
                "dataset_examples",
                f"0 examples cannot hold dataset_bytes = {fmt(total, 'bytes')}; accepted: at least 1 example, or "
                "leave dataset_examples empty to derive it from example_bytes",
            )
        v["example_bytes"] = total / v["dataset_examples"]
        src["example_bytes"] = "dataset_bytes / dataset_examples (scenario)"
    elif sc.dataset_examples is None:
        v["dataset_examples"] = float(round(total / v["example_bytes"]))
        src["dataset_examples"] = f"dataset_bytes / example_bytes ({src['example_bytes']})"
    else:
        product = v["dataset_examples"] * v["example_bytes"]
        if abs(product - total) > DATASET_BYTES_TOLERANCE * total:
            raise InputError(
                "dataset_bytes",
                f"{fmt(total, 'bytes')} disagrees with dataset_examples x example_bytes = "
                f"{v['dataset_examples']:,.0f} x {fmt(v['example_bytes'], 'bytes')} = {fmt(product, 'bytes')}; "
                "accepted: two of the three (the third is derived)",
            )


def _server_note(name: str, taken: list[str]) -> str:
    return f"From server {name}: {', '.join(taken)} (its preset's figures; give an input to override)."


def _resolve_node(c: _Ctx) -> None:
    """The node: its server preset or inputs for cores, network, host link and RAM; the copy link."""
    sc, g, v, src, warnings, put = c.sc, c.g, c.v, c.src, c.warnings, c.put
    srv = catalog.server(sc.server) if sc.server else None
    if srv and sc.site and srv.site != sc.site:
        # A cloud instance runs in its cloud, a DGX/HGX on-prem: the answer would buy storage
        # at one site for a server at another.
        raise InputError(
            "site",
            f"site {sc.site} contradicts server {srv.name}, which runs at {srv.site}; accepted: site "
            f"{srv.site} or none (the server's site), or a server at {sc.site}",
        )
    taken: list[str] = []  # what the server preset gives (the plan says so)
    if srv and srv.gpu != g.name:
        warnings.append(
            f"Server {srv.name} carries {srv.gpu}, not {g.name}: its network, RAM and cores are used as given."
        )
    _node_cores_and_link(c, srv, taken)
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
    _node_ram(c, srv, taken)
    for name in ("transfer_link_bytes_per_s", "compress_bytes_per_s_per_core", "decompress_bytes_per_s"):
        v[name], src[name] = parse(getattr(sc, name), "bytes_per_s", name), "scenario"
    if srv and taken:
        warnings.append(_server_note(srv.name, taken))


def _node_cores_and_link(c: _Ctx, srv: catalog.Server | None, taken: list[str]) -> None:
    """CPU cores for loading and the node's link to storage: given, the server's, or unlimited."""
    sc, v, src = c.sc, c.v, c.src
    if sc.cpu_cores_per_node is not None:
        v["cpu_cores_per_node"], src["cpu_cores_per_node"] = float(sc.cpu_cores_per_node), "scenario"
    elif srv and math.isfinite(srv.cpu_cores):
        # One core per GPU runs its training process; the rest are free for loading.
        v["cpu_cores_per_node"] = max(srv.cpu_cores - srv.gpus_per_node, 1.0)
        src["cpu_cores_per_node"] = f"servers.yaml {srv.name}: {srv.cpu_cores:g} cores less one per GPU"
        taken.append(f"{v['cpu_cores_per_node']:g} CPU cores for loading ({srv.cpu_cores:g} less one per GPU)")
    else:
        v["cpu_cores_per_node"] = math.inf
    if sc.node_network_bytes_per_s is not None:
        v["node_network_bytes_per_s"] = parse(sc.node_network_bytes_per_s, "bytes_per_s", "node_network_bytes_per_s")
        src["node_network_bytes_per_s"] = "scenario"
    elif srv and math.isfinite(srv.storage_network_bytes_per_s):
        v["node_network_bytes_per_s"] = srv.storage_network_bytes_per_s
        src["node_network_bytes_per_s"] = f"servers.yaml {srv.name}: {srv.storage_network}"
        taken.append(f"node link to storage {fmt(srv.storage_network_bytes_per_s, 'bytes_per_s')}")
    else:
        v["node_network_bytes_per_s"], src["node_network_bytes_per_s"] = math.inf, "unlimited (no server or link given)"


def _node_ram(c: _Ctx, srv: catalog.Server | None, taken: list[str]) -> None:
    """Host RAM per node: given, the server's, or the default."""
    sc, v, src = c.sc, c.v, c.src
    if sc.host_ram_bytes is not None:
        v["host_ram_bytes"], src["host_ram_bytes"] = parse(sc.host_ram_bytes, "bytes", "host_ram_bytes"), "scenario"
    elif srv and math.isfinite(srv.ram_bytes):
        v["host_ram_bytes"], src["host_ram_bytes"] = (
            srv.ram_bytes,
            f"servers.yaml {srv.name}: {srv.sources.get('ram', '')}",
        )
        taken.append(f"host RAM {fmt(srv.ram_bytes, 'bytes', binary=True)}")
    else:
        v["host_ram_bytes"], src["host_ram_bytes"] = (
            DEFAULT_HOST_RAM_BYTES,
            "default 512 GiB (calc.resolve.DEFAULT_HOST_RAM_BYTES)",
        )


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
    src["storage_latency_s"] = "default 1 ms (calc.resolve.DEFAULT_STORAGE_LATENCY_S)"
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
            # A service provisioned by size (FSx AUTOMATIC) runs what the units given buy, or its largest.
            "storage_metadata_ops": o.metadata_ops_at(o.max_units if sc.storage_units is None else sc.storage_units),
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


def _check_units(sc: Scenario, nodes: float) -> None:
    """A unit count within the catalog's: above ``max_units`` (24 drives in a 24-bay server, a file
    system's largest size) the supply is not one the option can deliver (issue 38: 1,000 nvme-gen4
    were planned at 6.5 TB/s). Drives in the GPU nodes: that many in each of the job's ``nodes``. A
    block volume's maximum is per node (one volume a node): left to the sizing's per-node rule."""
    if not sc.storage or sc.storage_units is None:
        return
    o = storage.option(sc.storage)
    if not o.sold_by_capacity and not float(sc.storage_units).is_integer():
        # The one rule for fractional units: only an option sold by capacity (TiB, orderable sizes)
        # takes one; a drive, server, volume, prefix or bucket is bought whole.
        raise InputError(
            "storage_units",
            f"{sc.storage_units:g} {o.unit}s of {o.name}; accepted: a whole number of {o.unit}s "
            f"({o.name} is sold by the {o.unit}, not by capacity)",
        )
    per_node = o.kind == "local" and sc.storage_housing == "node"
    most = o.max_units * (nodes if per_node else 1.0)
    if o.kind != "cloud-block" and sc.storage_units > most:
        each = f" a node x {nodes:g} nodes" if per_node and nodes > 1 else ""
        raise InputError(
            "storage_units",
            f"{sc.storage_units:g} {o.unit}s of {o.name}; accepted: {o.min_units:g} to {most:g} ({o.max_units:g}"
            f"{each}; max_units in presets/storage.yaml: {o.sources.get('max_units', 'the catalog')})",
        )


def _resolve_site_link(c: _Ctx) -> None:
    """The link between the job's site and its storage's (``inf`` at one site): every byte read
    from storage at another site crosses it (calc.pipeline.network_stage)."""
    sc, v, src, warnings = c.sc, c.v, c.src, c.warnings
    v["site_link_bytes_per_s"] = math.inf
    src["site_link_bytes_per_s"] = "storage at the job's site: no link between sites"
    if not sc.storage:
        return
    where, job = storage.option(sc.storage).site, job_site(sc)
    if job is None or where in ("any", job):
        return
    if sc.site_link_bytes_per_s is not None:
        v["site_link_bytes_per_s"] = parse(sc.site_link_bytes_per_s, "bytes_per_s", "site_link_bytes_per_s")
        src["site_link_bytes_per_s"] = "scenario"
    else:
        src["site_link_bytes_per_s"] = "not given: unlimited"
    # One warning for what reading storage at another site still lacks (two said the site twice).
    said = []
    if not sc.allow_other_site:
        said.append(
            f"the answer (calc.answer, recommend) will not buy it unless you {ask('allow_other_site')}, and "
            f"then prices egress out of {where} per GB"
        )
    if sc.site_link_bytes_per_s is None:
        said.append(
            "every byte read crosses the link between the sites, which this plan does not limit until you "
            + ask("site_link_bytes_per_s")
        )
    if said:
        warnings.append(f"{sc.storage} is at another site ({where}) than the job ({job}): {'; '.join(said)}.")


def _resolve_checkpoint(c: _Ctx) -> None:
    """Checkpoints: the layout's bytes per parameter, the parallel layout, the save policy."""
    sc, m, v, src, warnings = c.sc, c.m, c.v, c.src, c.warnings
    w, opt = CHECKPOINT_LAYOUTS[sc.checkpoint_layout]
    v["checkpoint_weight_bytes_per_param"], v["checkpoint_optimizer_bytes_per_param"] = w, opt
    src["checkpoint_bytes"] = (
        f"params x ({w:g} + {opt:g}) B, layout {sc.checkpoint_layout} (calc.checkpoint)"
        if sc.model_state_bytes is None
        else f"params held in the typed model state (model_state_bytes x GPUs holding a piece / "
        f"{memory.BYTES_PER_PARAM[optimizer(sc, m)]:g} B per parameter for {optimizer(sc, m)}) "
        f"x ({w:g} + {opt:g}) B, "
        f"layout {sc.checkpoint_layout}"
    )
    optimal = sc.checkpoint_interval_s == "optimal"
    v["checkpoint_interval_optimal"] = float(optimal)
    v["checkpoint_interval_s"] = _nan(
        None
        if sc.checkpoint_interval_s is None or optimal
        else parse(sc.checkpoint_interval_s, "seconds", "checkpoint_interval_s")
    )
    zero = memory.zero_stage_used(sc.zero_stage, sc.data_parallel_framework)
    sharded = zero > 0 or sc.tensor_parallel * sc.pipeline_parallel > 1
    v["checkpoint_async"] = float(sc.checkpoint_mode == "async" or (sc.checkpoint_mode == "auto" and sharded))
    src["checkpoint_async"] = (
        f"auto: {'async' if sharded else 'sync'} ({'sharded' if sharded else 'unsharded'} training state; "
        "torch.distributed.checkpoint async_save, Megatron/NeMo async distributed checkpoints)"
        if sc.checkpoint_mode == "auto"
        else f"input (scenario): {sc.checkpoint_mode}"
    )
    v["checkpoint_stall_fraction"] = sc.checkpoint_stall_fraction
    v["checkpoint_keep"] = float(sc.checkpoint_keep)
    v["drain_target"] = sc.drain_target
    v["restore_target_s"] = parse(sc.restore_target_s, "seconds", "restore_target_s")
    v["tensor_parallel"], v["pipeline_parallel"] = float(sc.tensor_parallel), float(sc.pipeline_parallel)
    v["zero_stage"] = float(zero)
    src["zero_stage"] = (
        "scenario"
        if sc.zero_stage is not None
        else f"{sc.data_parallel_framework}'s default (calc.memory.FRAMEWORK_ZERO_STAGE)"
        if zero
        else "0: no sharding (DDP and Megatron-LM's default)"
    )
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
    v["train_tokens"] = _nan(None if sc.train_tokens is None else parse(sc.train_tokens, "count", "train_tokens"))
    if sc.train_tokens is not None and sc.run_length_s is not None:
        raise InputError("train_tokens", "and run_length_s both set the run length; accepted: one of the two")
    if sc.train_tokens is not None and not v["arch"]:
        raise InputError(
            "train_tokens",
            f"counts tokens of a transformer by its architecture (seq_len tokens an example); model {sc.model} has "
            "none; accepted: run_length_s (a time such as 30 d)",
        )
    if sc.checkpoint_milestone_interval_s is not None and sc.run_length_s is None and sc.train_tokens is None:
        raise InputError(
            "run_length_s", "is needed to count milestone checkpoints; accepted: a time such as 30 d, or train_tokens"
        )
    # A checkpoint on a node's own drives or RAM dies with the node: not a durable target.
    kind = storage.option(sc.storage).kind if sc.storage else ""
    if kind == "local" and sc.storage_housing == "server":
        kind = "server"  # drives in a storage server on the network outlive a GPU node
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
    if sc.storage and sc.storage_units is not None:  # _check_units' own test: the nodes only where it uses them
        _check_units(sc, float(host.nodes(v["gpus_per_job"], v["gpus_per_node"], v["jobs"])))
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


CPU_COST_METHODS = ("measured", "decoder model", "model preset")
"""Where the worker's CPU time per example comes from (``cpu_cost_method``): a measured
``cpu_seconds_per_example`` (re-projected from the CPU it ran on), the decoder model
(calc.host: decode, augment, collate), or the model preset's own figure."""


_LOADER_COST_KEYS = tuple(
    (f"{name}_s_fixed", f"{name}_s_per_megabyte", f"{name}_s_per_megabyte_above", f"{name}_threshold_megabytes")
    for name in ("collate", "send", "receive", "pin")
)
"""The inputs of each per-batch loader cost (catalog.LoaderCosts: fixed, per MB, per MB above, threshold)."""


def _resolve_loader(c: _Ctx) -> None:
    """The loader's CPU: its per-core speed and threads, the decoder's coefficients, the image,
    and a measured CPU time with the CPU it ran on (look-ups only; calc.host has the formulas)."""
    sc, m, v, src = c.sc, c.m, c.v, c.src
    cpu = catalog.cpu(sc.cpu or catalog.server_cpu(sc.server))
    v["cpu_per_core_speed"], src["cpu_per_core_speed"] = cpu.per_core_speed, f"cpus.yaml {cpu.name}: {cpu.source}"
    # Names the page and the card say the cost came from (the CPU as cpus.yaml labels it).
    src["cpu"] = cpu.name
    src["cpu_label"] = cpu.label
    tpc = sc.cpu_threads_per_core if sc.cpu_threads_per_core is not None else cpu.threads_per_core
    v["cpu_threads_per_core"], v["cpu_smt_gain"] = float(tpc), cpu.smt_gain if tpc > 1 else 1.0
    src["cpu_threads_per_core"] = "scenario" if sc.cpu_threads_per_core is not None else f"cpus.yaml {cpu.name}"
    v["threads_per_worker"] = float(sc.threads_per_worker)
    costs = catalog.loader_costs()
    for keys, figures in zip(_LOADER_COST_KEYS, (costs.collate, costs.send, costs.receive, costs.pin), strict=True):
        v.update(zip(keys, figures, strict=True))
    src["main_seconds_per_example"] = src["pin_seconds_per_example"] = costs.source
    decoder = _decoder_name(c)
    given = sc.cpu_seconds_per_example
    # A measured time overrides the decoder model, unless the decode moves to the GPU (what the CPU
    # keeps then is the GPU decoder's share, not the measured CPU decode); no decoder: the preset's.
    on_gpu = decoder is not None and catalog.decoder(decoder).on_gpu
    method = 0 if given is not None and not on_gpu else 1 if decoder is not None else 2
    v["cpu_cost_method"] = float(method)
    v["cpu_seconds_given"] = parse(given, "seconds", "cpu_seconds_per_example") if method == 0 else math.nan
    v["measured_cpu_speed"] = cpu.per_core_speed
    v["cpu_seconds_preset"] = m.cpu_seconds_per_example if method == 2 else math.nan
    if method == 0:
        where = catalog.cpu(sc.measured_cpu or cpu.name, "measured_cpu")
        v["measured_cpu_speed"] = where.per_core_speed
        src["cpu_seconds_per_example"] = f"measured (scenario) on {where.name}" + (
            "" if where.name == cpu.name else f", re-projected to {cpu.name} by per-core speed"
        )
    elif method == 2:
        src["cpu_seconds_per_example"] = (
            f"models.yaml {m.name}: {m.sources.get('cpu_seconds_per_example', '')} (not re-projected to {cpu.name})"
        )
    _decoder_values(c, decoder if method == 1 else None, costs, cpu.name)


_GPU_DECODERS: list[tuple[Mapping[str, object], list[str]]] = []
"""The decoder table last asked about and its GPU decoders (``_gpu_decoders``)."""


def _gpu_decoders(table: Mapping[str, object]) -> list[str]:
    """The decoders of ``table`` (catalog.decoders) that run on a GPU, in its order: worked out once per table
    object (the catalog reads presets/decoders.yaml once; ~0.7 us a plan otherwise). A new list each call."""
    entry = _GPU_DECODERS[0] if _GPU_DECODERS else None  # read once: another thread may replace it
    if entry is None or entry[0] is not table:
        entry = (table, [k for k, d in table.items() if isinstance(d, catalog.Decoder) and d.on_gpu])
        _GPU_DECODERS[:] = [entry]
    return list(entry[1])


def _decoder_name(c: _Ctx) -> str | None:
    """The decoder of this plan's images: given, GPU decode's, else the model's (None: no image)."""
    sc, m = c.sc, c.m
    if sc.media == "video":
        if sc.decoder is not None:
            raise InputError("decoder", "decodes images; media is video (its CPU time is cpu_seconds_per_example)")
        return None
    gpu_decoders = _gpu_decoders(catalog.decoders())
    if sc.gpu_decode and sc.decoder is not None and sc.decoder not in gpu_decoders:
        raise InputError(
            "decoder",
            f"{sc.decoder} decodes on the CPU, but gpu_decode is on; accepted: {', '.join(gpu_decoders)} with "
            "gpu_decode, or gpu_decode off",
        )
    if sc.gpu_decode and sc.decoder is None:
        return gpu_decoders[0] if (m.decoder or sc.image_pixels) else None
    return sc.decoder or m.decoder or None


_DECODER_KEYS = (
    "decode_s_fixed",
    "decode_s_per_megapixel",
    "decode_s_per_megapixel_if_above_knee",
    "decode_s_per_stored_megapixel",
    "decode_s_per_megabyte",
    "decode_dct_scaling",
    "decode_gpu_share",
    "augment_s_fixed",
    "augment_s_per_crop_megapixel",
    "augment_s_per_output_megapixel",
    "image_width",
    "image_height",
)
"""The decoder model's numbers; all 0 when it does not price the plan (a measured or preset cost)."""


def _decoder_values(c: _Ctx, decoder: str | None, costs: catalog.LoaderCosts, cpu: str) -> None:
    """The decoder's coefficients and the image they apply to (zeros with no decoder model)."""
    sc, g, m, v, src = c.sc, c.g, c.m, c.v, c.src
    v |= dict.fromkeys(_DECODER_KEYS, 0.0)
    v["decode_knee_megapixels"] = math.inf
    src["decoder"] = src["image_pixels"] = ""
    if decoder is None:
        return
    d = catalog.decoder(decoder)
    src["decoder"], src["image_pixels"] = d.name, sc.image_pixels or m.image_pixels
    pixels = sc.image_pixels or m.image_pixels
    if not pixels:
        raise InputError("image_pixels", f"is needed to price decoding with {decoder}; accepted: e.g. 500x375")
    if not math.isfinite(v["train_resolution"]):
        raise InputError("train_resolution", f"is needed to price the augmentation after {decoder}; accepted: px")
    w, h = host.image_size(pixels)
    dtype = host.image_dtype(sc.tensors or m.tensors)
    fixed, crop, out = costs.augment(d, dtype)
    hw = d.hw_share if math.isfinite(g.jpeg_decode_images_per_s) else 0.0
    v |= {
        "decode_s_fixed": d.fixed_s,
        "decode_s_per_megapixel": d.s_per_megapixel,
        "decode_s_per_megapixel_if_above_knee": d.s_per_megapixel_above_knee,
        "decode_knee_megapixels": d.knee_megapixels,
        "decode_s_per_stored_megapixel": d.s_per_stored_megapixel,
        "decode_s_per_megabyte": d.s_per_megabyte,
        "decode_dct_scaling": float(d.dct_scaling and sc.reduced_decode),
        "decode_gpu_share": hw,
        "augment_s_fixed": fixed,
        "augment_s_per_crop_megapixel": crop,
        "augment_s_per_output_megapixel": out,
        "image_width": float(w),
        "image_height": float(h),
    }
    if d.on_gpu:
        v["gpu_decode"] = 1.0
    if d.own_augment and pixels.replace(" ", "").lower() != catalog.WHOLE_PIPELINE_IMAGE:
        c.warnings.append(
            f"decoder {d.name}: its cost was measured as a whole pipeline on {catalog.WHOLE_PIPELINE_IMAGE} JPEGs "
            f"only; this plan's {pixels} images are priced at that figure (it does not follow their pixels or "
            f"bytes): {ask('cpu_seconds_per_example')} with a measurement of yours (calc.measure.transform)."
        )
    where = "scenario" if sc.image_pixels else f"models.yaml {m.name}"
    chain = "augmented on the GPU" if d.on_gpu else f"augmented by the {d.augment} chain to {dtype or 'float32'}"
    if sc.reduced_decode:
        chain += ", decoded at a reduced size" if d.dct_scaling else f" ({d.name} cannot decode at a reduced size)"
    src["cpu_seconds_per_example"] = (
        f"decoder {d.name}: {d.source}; a {pixels} image ({where}) {chain} at {v['train_resolution']:g} px; "
        f"on {cpu}; collate and hand-over per batch and MB ({costs.source})"
    )
