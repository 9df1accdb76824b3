"""plan(): resolve a Scenario against the presets, evaluate every formula, explain it.

One evaluation path serves everyone: ``evaluate`` takes numbers or NumPy arrays, so
``plan`` (one scenario), ``sweep`` (a grid), the CLI and the dashboard share it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from calc import catalog, compute, demand, host, memory, pipeline, transfer
from calc._types import Numeric
from calc.errors import DoesNotFitError, InputError
from calc.scenario import FIELDS, Scenario
from calc.scenario import scenario as preset_scenario
from calc.units import Kind, fmt, parse

DEFAULT_STORAGE_LATENCY_S = 1e-3
"""Read latency when no storage option or latency is given [s]: 1 ms, a local-NVMe-to-NFS
middle (storage_catalog.md: NVMe 60-115 µs, networked file systems ~1 ms and up)."""


@dataclass(frozen=True)
class Output:
    """How one result is labelled, formatted and derived (for explain, tables, the UI)."""

    kind: Kind
    label: str
    formula: str
    unit: str = ""
    binary: bool = False


OUTPUTS: dict[str, Output] = {
    "gpu_memory_bytes": Output("bytes", "GPU memory", "{src_gpu_memory_bytes}", binary=True),
    "reserved_bytes": Output("bytes", "Reserved (context, allocator)", "{src_reserved_bytes}", binary=True),
    "model_state_bytes": Output("bytes", "Model state", "{state_rule}", binary=True),
    "activation_bytes_per_example": Output(
        "bytes", "Activations per example", "{src_activation_bytes_per_example}", binary=True
    ),
    "max_batch_size": Output(
        "count",
        "Largest batch that fits",
        "floor(({gpu_memory_bytes} - {reserved_bytes} - {model_state_bytes}) / {activation_bytes_per_example})",
        "examples",
    ),
    "batch_size": Output("count", "Batch size per GPU", "{batch_rule}", "examples"),
    "memory_used_bytes": Output(
        "bytes",
        "GPU memory used",
        "{reserved_bytes} + {model_state_bytes} + {batch_size} x {activation_bytes_per_example}",
        binary=True,
    ),
    "train_flops_per_example": Output(
        "flops", "Training FLOPs per example", "{train_flops_multiplier} x {forward_flops_per_example}"
    ),
    "peak_flops_per_s": Output("flops_per_s", "Peak FLOP/s", "{src_peak_flops_per_s}"),
    "efficiency": Output("count", "Efficiency (MFU)", "{src_efficiency}"),
    "step_time_s": Output("seconds", "Step time t", "{step_rule}"),
    "gpu_samples_per_s": Output("count_per_s", "GPU rate n/t per GPU", "{batch_size} / {step_time_s}", "samples/s"),
    "per_gpu_samples_per_s": Output(
        "count_per_s", "Demand per GPU", "{gpu_samples_per_s} x {target_gpu_utilization}", "samples/s"
    ),
    "samples_per_s": Output(
        "count_per_s", "Samples/s, all GPUs and jobs", "{per_gpu_samples_per_s} x {gpus_per_job} x {jobs}", "samples/s"
    ),
    "read_bytes_per_s": Output(
        "bytes_per_s", "Read bandwidth", "{samples_per_s} x {example_bytes} x (1 - {cache_fraction})"
    ),
    "request_bytes": Output("bytes", "Read size", "{request_rule}", binary=True),
    "read_iops": Output(
        "count_per_s",
        "Random reads/s",
        "{samples_per_s} x (1 - {cache_fraction}) x {reads_per_example} reads/example",
        "reads/s",
    ),
    "file_opens_per_s": Output(
        "count_per_s", "File opens/s", "{samples_per_s} x (1 - {cache_fraction}) / {examples_per_file}", "opens/s"
    ),
    "latency_budget_s": Output("seconds", "Latency budget per example", "{step_time_s} (the article's bound)"),
    "storage_latency_s": Output("seconds", "Storage read latency", "{latency_rule}"),
    "outstanding_reads": Output(
        "count", "Reads in flight (Little's law)", "{read_iops} x {storage_latency_s}", "reads"
    ),
    "example_tensor_bytes": Output("bytes", "Tensor bytes per example", "{tensors}"),
    "batch_bytes": Output("bytes", "Batch in host memory", "{batch_size} x {example_tensor_bytes}"),
    "worker_ram_bytes": Output(
        "bytes", "Worker RAM per GPU process", "{batch_bytes} x {batches_in_flight} batches x (1 + {pin_memory} pinned)"
    ),
    "host_ram_per_node_bytes": Output(
        "bytes", "Loader RAM per node", "{worker_ram_bytes} x {gpus_on_node} GPUs", binary=True
    ),
    "cpu_cores": Output(
        "count", "CPU cores, all GPUs and jobs", "{samples_per_s} x {cpu_seconds_per_example}", "cores"
    ),
    "cpu_cores_per_node": Output(
        "count", "CPU cores per node", "{per_gpu_samples_per_s} x {gpus_on_node} x {cpu_seconds_per_example}", "cores"
    ),
    "h2d_bytes_per_s_per_gpu": Output(
        "bytes_per_s", "Host-to-GPU per GPU", "{per_gpu_samples_per_s} x {example_tensor_bytes}"
    ),
    "h2d_copy_time_s": Output("seconds", "Copy time per batch", "{batch_bytes} / {host_link_bytes_per_s}"),
    "h2d_share_of_step": Output("count", "Copy time / step time", "{h2d_copy_time_s} / {step_time_s}"),
    "dataset_bytes": Output("bytes", "Dataset size", "{dataset_examples} x {example_bytes}"),
    "fits_in_ram": Output(
        "count", "Dataset fits in free RAM (1 = yes)", "{dataset_bytes} <= {host_ram_bytes} - {host_ram_per_node_bytes}"
    ),
    "epoch_time_s": Output(
        "seconds", "Epoch time per job", "{dataset_examples} / ({per_gpu_samples_per_s} x {gpus_per_job})"
    ),
    "compress_s": Output(
        "seconds", "Compress", "{dataset_bytes} / ({compress_cores} x {compress_bytes_per_s_per_core})"
    ),
    "send_s": Output("seconds", "Send", "{dataset_bytes} / {compression_ratio} / {transfer_link_bytes_per_s}"),
    "decompress_s": Output("seconds", "Decompress", "{dataset_bytes} / {decompress_bytes_per_s}"),
    "transfer_time_s": Output("seconds", "Dataset transfer time", "{transfer_rule}"),
    "transfer_direct_time_s": Output(
        "seconds", "Plain copy, no compression", "{dataset_bytes} / {transfer_link_bytes_per_s}"
    ),
    "achieved_samples_per_s": Output(
        "count_per_s", "Achieved samples/s, all GPUs", "min(stages) per GPU x {gpus_per_job} x {jobs}", "samples/s"
    ),
    "gpu_utilization": Output("count", "GPU utilisation", "achieved / {gpu_samples_per_s} per GPU"),
}
"""Every number a Plan reports, with its unit kind and formula."""

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


def resolve(sc: Scenario) -> Resolved:
    """Look up the presets and parse every input into base units."""
    g = catalog.gpu(sc.gpu)
    m = catalog.model(sc.model)
    pclass = catalog.precision_class(sc.precision)
    v: dict[str, float] = {}
    src: dict[str, str] = {}
    warnings: list[str] = []

    def put(name: str, given: Any, kind: Kind, preset: float, preset_source: str) -> None:
        if given is None:
            v[name], src[name] = preset, preset_source
        else:
            v[name], src[name] = parse(given, kind, name), "scenario"

    put("gpu_memory_bytes", sc.gpu_memory_bytes, "bytes", g.memory_bytes, f"gpus.yaml {g.name}: {g.source}")
    v["reserved_bytes"], src["reserved_bytes"] = parse(sc.reserved_bytes, "bytes", "reserved_bytes"), "scenario"
    v["params"], src["params"] = m.params, f"models.yaml {m.name}: {m.sources['params']}"
    v["bytes_per_param"] = memory.BYTES_PER_PARAM[sc.optimizer]
    src["bytes_per_param"] = f"optimizer {sc.optimizer} (calc.memory.BYTES_PER_PARAM)"
    v["state_shards"] = float(sc.state_shards)
    state = memory.model_state_bytes(m.params, v["bytes_per_param"], sc.state_shards)
    put("model_state_bytes", sc.model_state_bytes, "bytes", float(state), "params x bytes_per_param / state_shards")
    put(
        "activation_bytes_per_example",
        sc.activation_bytes_per_example,
        "bytes",
        m.activation_bytes[pclass],
        f"models.yaml {m.name} ({pclass}): {m.sources['activation_bytes']}",
    )
    v["fixed_batch"] = _nan(sc.batch_size)
    v["rounding"] = float(memory.ROUNDINGS.index(sc.batch_rounding))
    v["measured_step_time_s"] = math.nan if sc.step_time_s is None else parse(sc.step_time_s, "seconds", "step_time_s")
    v["measured_samples_per_s"] = (
        math.nan
        if sc.samples_per_s_per_gpu is None
        else parse(sc.samples_per_s_per_gpu, "count_per_s", "samples_per_s_per_gpu")
    )
    put(
        "forward_flops_per_example",
        sc.forward_flops_per_example,
        "flops",
        m.forward_flops,
        f"models.yaml {m.name}: {m.sources['forward_flops']}",
    )
    v["train_flops_multiplier"], src["train_flops_multiplier"] = sc.train_flops_multiplier, "scenario"
    need_flops = sc.step_time_s is None and sc.samples_per_s_per_gpu is None
    if sc.peak_flops_per_s is not None:
        v["peak_flops_per_s"], src["peak_flops_per_s"] = (
            parse(sc.peak_flops_per_s, "flops_per_s", "peak_flops_per_s"),
            "scenario",
        )
    elif need_flops or sc.precision in g.peak_flops_per_s:
        v["peak_flops_per_s"], src["peak_flops_per_s"] = g.peak(sc.precision), f"gpus.yaml {g.name}: {g.source}"
    else:  # a measured rate makes the peak irrelevant
        v["peak_flops_per_s"], src["peak_flops_per_s"] = (
            max(g.peak_flops_per_s.values()),
            f"gpus.yaml {g.name} (unused)",
        )
    if sc.efficiency is not None:
        v["efficiency"], src["efficiency"] = sc.efficiency, "scenario"
    else:
        from calc.calibration import default_efficiency

        eff, how = default_efficiency(m.name, sc.precision, g.name)
        v["efficiency"], src["efficiency"] = eff, how
    if sc.precision == "fp8" and sc.efficiency is None and need_flops:
        warnings.append(
            "No fp8 training measurement: the mixed-precision efficiency is applied to the fp8 peak (optimistic)."
        )
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
    v["streamed"] = float(sc.streamed)
    put(
        "example_bytes",
        sc.example_bytes,
        "bytes",
        m.example_bytes,
        f"models.yaml {m.name}: {m.sources['example_bytes']}",
    )
    v["request_bytes_given"] = (
        math.nan if sc.request_bytes is None else parse(sc.request_bytes, "bytes", "request_bytes")
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
    v["cpu_cores_per_node"] = math.inf if sc.cpu_cores_per_node is None else float(sc.cpu_cores_per_node)
    put(
        "host_link_bytes_per_s",
        sc.host_link_bytes_per_s,
        "bytes_per_s",
        g.host_link_bytes_per_s,
        f"gpus.yaml {g.name}: {g.host_link}",
    )
    v["host_ram_bytes"], src["host_ram_bytes"] = parse(sc.host_ram_bytes, "bytes", "host_ram_bytes"), "scenario"
    for name in ("transfer_link_bytes_per_s", "compress_bytes_per_s_per_core", "decompress_bytes_per_s"):
        v[name], src[name] = parse(getattr(sc, name), "bytes_per_s", name), "scenario"

    # Storage supply: an option from presets/storage.yaml, or numbers, or unconstrained.
    bw, iops, lat = math.inf, math.inf, DEFAULT_STORAGE_LATENCY_S
    counts_requests = 0.0
    lat_src = "default 1 ms (calc.plan.DEFAULT_STORAGE_LATENCY_S)"
    if sc.storage:
        from calc.storage import supply_of

        request = v["request_bytes_given"]
        req = float(demand.request_bytes(v["example_bytes"], v["examples_per_file"], request))
        cap = supply_of(
            sc.storage, sc.storage_units, req, clients=math.ceil(sc.gpus_per_job / sc.gpus_per_node) * sc.jobs
        )
        bw, iops, lat = cap.bytes_per_s, cap.iops, cap.latency_s
        counts_requests = float(cap.counts_requests)
        lat_src = src["storage"] = f"storage.yaml {cap.option}: {cap.source}"
    if sc.storage_bytes_per_s is not None:
        bw = parse(sc.storage_bytes_per_s, "bytes_per_s", "storage_bytes_per_s")
    if sc.storage_iops is not None:
        iops = parse(sc.storage_iops, "count_per_s", "storage_iops")
    if sc.storage_latency_s is not None:
        lat, lat_src = parse(sc.storage_latency_s, "seconds", "storage_latency_s"), "scenario"
    v["storage_bytes_per_s"], v["storage_iops"] = bw, iops
    v["storage_counts_requests"] = counts_requests
    v["storage_latency_s"], src["storage_latency_s"] = lat, lat_src
    return Resolved(v, src, warnings)


def evaluate(x: Mapping[str, Numeric]) -> dict[str, Numeric]:
    """Every formula of MODEL.md sections 1-4, 6 and 7, on numbers or arrays.

    ``x`` holds the keys ``resolve`` produces. NaN in ``fixed_batch``,
    ``measured_step_time_s``, ``measured_samples_per_s`` and ``request_bytes_given`` means
    "not given". Rows whose model does not fit get batch 0 and zero rates.
    """
    out: dict[str, Numeric] = {}
    out["gpu_memory_bytes"] = x["gpu_memory_bytes"]
    out["reserved_bytes"] = x["reserved_bytes"]
    out["model_state_bytes"] = x["model_state_bytes"]
    out["activation_bytes_per_example"] = x["activation_bytes_per_example"]
    n_max = memory.max_batch_size(
        x["gpu_memory_bytes"], x["reserved_bytes"], x["model_state_bytes"], x["activation_bytes_per_example"]
    )
    out["max_batch_size"] = n_max
    fixed = np.asarray(x["fixed_batch"], dtype=float)
    n = np.where(np.isfinite(fixed), fixed, memory.round_batch(n_max, x["rounding"]))
    fits = n_max >= 1
    n = np.where(fits | np.isfinite(fixed), n, 0.0)
    out["batch_size"] = n
    out["memory_used_bytes"] = memory.memory_used_bytes(
        n, x["reserved_bytes"], x["model_state_bytes"], x["activation_bytes_per_example"]
    )
    out["train_flops_per_example"] = (
        np.asarray(x["train_flops_multiplier"], dtype=float) * x["forward_flops_per_example"]
    )
    out["peak_flops_per_s"] = x["peak_flops_per_s"]
    out["efficiency"] = x["efficiency"]
    n_safe = np.maximum(n, 1.0)  # keeps t finite; rates are zeroed below where n = 0
    t_flops = compute.step_time_from_flops(
        n_safe, out["train_flops_per_example"], x["peak_flops_per_s"], x["efficiency"]
    )
    t, method = compute.step_time_s(n_safe, x["measured_step_time_s"], x["measured_samples_per_s"], t_flops)
    out["step_time_s"] = t
    out["step_method"] = method
    live = (n > 0).astype(float)
    gpu_rate = n / t
    out["gpu_samples_per_s"] = gpu_rate
    per_gpu = gpu_rate * x["target_gpu_utilization"]
    out["per_gpu_samples_per_s"] = per_gpu
    total = demand.samples_per_s(n, t, x["target_gpu_utilization"], x["gpus_per_job"], x["jobs"])
    out["samples_per_s"] = total
    out["read_bytes_per_s"] = demand.read_bytes_per_s(total, x["example_bytes"], x["cache_fraction"])
    req = demand.request_bytes(x["example_bytes"], x["examples_per_file"], x["request_bytes_given"])
    out["request_bytes"] = req
    out["read_iops"] = demand.read_iops(total, x["example_bytes"], x["examples_per_file"], req, x["cache_fraction"])
    reads_per_example = demand.read_iops(1.0, x["example_bytes"], x["examples_per_file"], req)
    out["reads_per_example"] = reads_per_example
    out["file_opens_per_s"] = total * (1 - np.asarray(x["cache_fraction"], dtype=float)) / x["examples_per_file"]
    out["latency_budget_s"] = t * live
    out["storage_latency_s"] = x["storage_latency_s"]
    out["outstanding_reads"] = demand.outstanding_reads(out["read_iops"], x["storage_latency_s"])
    out["example_tensor_bytes"] = x["example_tensor_bytes"]
    bb = host.batch_bytes(n, x["example_tensor_bytes"])
    out["batch_bytes"] = bb
    in_flight = host.batches_in_flight(x["num_workers"], x["prefetch_factor"])
    out["batches_in_flight"] = in_flight
    out["worker_ram_bytes"] = host.worker_ram_bytes(bb, in_flight, x["pin_memory"])
    gpus_on_node = np.minimum(x["gpus_per_job"], x["gpus_per_node"])
    out["gpus_on_node"] = gpus_on_node
    out["host_ram_per_node_bytes"] = out["worker_ram_bytes"] * gpus_on_node
    cpu_s = np.asarray(x["cpu_seconds_per_example"], dtype=float) * np.where(
        np.asarray(x["gpu_decode"]) > 0, pipeline.GPU_DECODE_CPU_FRACTION, 1.0
    )
    out["cpu_seconds_effective"] = cpu_s
    out["cpu_cores"] = host.cpu_cores(total, cpu_s)
    out["cpu_cores_per_node"] = host.cpu_cores(per_gpu * gpus_on_node, cpu_s)
    out["h2d_bytes_per_s_per_gpu"] = per_gpu * x["example_tensor_bytes"]
    out["h2d_copy_time_s"] = host.copy_time_s(bb, x["host_link_bytes_per_s"])
    out["h2d_share_of_step"] = out["h2d_copy_time_s"] / t
    dataset = np.asarray(x["dataset_examples"], dtype=float) * x["example_bytes"]
    out["dataset_bytes"] = dataset
    out["fits_in_ram"] = (
        dataset <= np.asarray(x["host_ram_bytes"], dtype=float) - out["host_ram_per_node_bytes"]
    ).astype(float)
    with np.errstate(divide="ignore"):
        epoch = np.where(
            per_gpu > 0,
            np.asarray(x["dataset_examples"], dtype=float) / np.maximum(per_gpu * x["gpus_per_job"], 1e-300),
            0.0,
        )
    out["epoch_time_s"] = epoch * live
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
    out["transfer_direct_time_s"] = dataset / np.asarray(x["transfer_link_bytes_per_s"], dtype=float)

    readers = np.asarray(x["gpus_per_job"], dtype=float) * x["jobs"]
    # Reads that cost a seek or a request: all of them on object stores, else one per file.
    seeks = np.where(
        np.asarray(x["storage_counts_requests"]) > 0,
        reads_per_example,
        1.0 / np.asarray(x["examples_per_file"], dtype=float),
    )
    stages = {
        "storage": pipeline.storage_stage(
            x["storage_bytes_per_s"],
            x["storage_iops"],
            x["storage_latency_s"],
            x["example_bytes"],
            reads_per_example,
            seeks,
            x["cache_fraction"],
            readers,
            x["num_workers"],
        ),
        "cpu": pipeline.cpu_stage(
            cpu_s, x["num_workers"], np.asarray(x["cpu_cores_per_node"], dtype=float) / gpus_on_node
        ),
        "pcie": pipeline.pcie_stage(x["host_link_bytes_per_s"], x["example_tensor_bytes"], x["pin_memory"]),
        "gpu": gpu_rate,
    }
    for name, cap in stages.items():
        out[STAGE_KEYS[name]] = cap
    rate, bottleneck = pipeline.achieved(stages["storage"], stages["cpu"], stages["pcie"], gpu_rate, x["num_workers"])
    out["achieved_samples_per_s"] = rate * readers * live
    with np.errstate(divide="ignore", invalid="ignore"):
        out["gpu_utilization"] = np.where(gpu_rate > 0, rate / gpu_rate, 0.0) * live
    out["bottleneck"] = bottleneck
    for key in (
        "gpu_samples_per_s",
        "per_gpu_samples_per_s",
        "samples_per_s",
        "read_bytes_per_s",
        "read_iops",
        "file_opens_per_s",
        "outstanding_reads",
        "cpu_cores",
        "cpu_cores_per_node",
        "h2d_bytes_per_s_per_gpu",
        "h2d_share_of_step",
        "step_time_s",
    ):
        out[key] = np.asarray(out[key], dtype=float) * live
    return out


@dataclass(frozen=True)
class Plan:
    """The requirements of one scenario: every output of ``OUTPUTS``, with sources.

    Attribute access gives base units (``plan.read_bytes_per_s`` in bytes/s); ``explain()``
    shows each formula with its numbers; ``to_frame()`` a table with units.
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
        values = self.__dict__.get("values", {})
        if name in values:
            return float(values[name])
        raise AttributeError(f"Plan has no output {name!r}; outputs: {', '.join(OUTPUTS)}")

    @property
    def batch_size(self) -> int:
        """Batch size per GPU [examples]."""
        return int(self.values["batch_size"])

    @property
    def max_batch_size(self) -> int:
        """Largest batch that fits in GPU memory [examples]."""
        return int(self.values["max_batch_size"])

    def formatted(self, name: str) -> str:
        """One output with its unit: ``"5,885 reads/s"``, ``"12.97 GiB"``."""
        return format_output(name, self.values[name])

    def explain(self) -> str:
        """Each formula, then the same with the numbers plugged in, and the result."""
        lines = [
            f"Plan for {self.scenario.name}: {self.scenario.model} on {self.scenario.gpu}, {self.scenario.precision}"
        ]
        for name, out in OUTPUTS.items():
            symbolic, numeric = render_formula(self, out.formula)
            lines.append(f"{name} = {symbolic}")
            if numeric != symbolic:
                lines.append(f"    = {numeric}")
            lines.append(f"    = {self.formatted(name)}")
        lines.append(
            f"bottleneck = {self.bottleneck} (stage capacities per GPU: "
            + ", ".join(f"{k} {fmt(v, 'count_per_s', 'samples/s')}" for k, v in self.stages.items())
            + ")"
        )
        lines.append("Sources:")
        lines += [f"  {k}: {v}" for k, v in sorted(self.sources.items())]
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
                "formula": render_formula(self, o.formula)[0],
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
        head = (
            f"<b>{self.scenario.name}</b>: {self.scenario.model} on {self.scenario.gpu} ({self.scenario.precision}); "
            f"bottleneck: <b>{self.bottleneck}</b>"
        )
        return head + self.to_frame()[["label", "display", "formula"]].to_html()

    def __repr__(self) -> str:
        keys = HEADLINE
        return (
            f"Plan({self.scenario.name}: "
            + ", ".join(f"{k}={self.formatted(k)}" for k in keys)
            + f", bottleneck={self.bottleneck})"
        )


def format_output(name: str, value: float) -> str:
    """Format one output by its unit kind (GPU memory in GiB, rates in decimal units)."""
    out = OUTPUTS[name]
    if name in ("gpu_utilization", "h2d_share_of_step", "efficiency"):
        return f"{value * 100:.1f} %"
    if name == "fits_in_ram":
        return "yes" if value else "no"
    if name in ("batch_size", "max_batch_size"):
        return f"{int(value):,} examples"
    return fmt(value, out.kind, out.unit, out.binary)


_INPUT_KINDS: dict[str, Kind] = {
    "params": "count",
    "bytes_per_param": "count",
    "state_shards": "count",
    "train_flops_multiplier": "count",
    "forward_flops_per_example": "flops",
    "target_gpu_utilization": "count",
    "gpus_per_job": "count",
    "jobs": "count",
    "example_bytes": "bytes",
    "cache_fraction": "count",
    "examples_per_file": "count",
    "dataset_examples": "count",
    "cpu_seconds_per_example": "seconds",
    "host_link_bytes_per_s": "bytes_per_s",
    "host_ram_bytes": "bytes",
    "compress_cores": "count",
    "compress_bytes_per_s_per_core": "bytes_per_s",
    "compression_ratio": "count",
    "transfer_link_bytes_per_s": "bytes_per_s",
    "decompress_bytes_per_s": "bytes_per_s",
    "pin_memory": "count",
}


def render_formula(p: Plan, template: str) -> tuple[str, str]:
    """The formula with names, and with the plan's numbers (units included)."""
    sc = p.scenario
    rules = {
        "batch_rule": f"fixed by input ({sc.batch_size})"
        if sc.batch_size is not None
        else f"{sc.batch_rounding}({{max_batch_size}})",
        "step_rule": {
            "measured step time": "measured step time (input)",
            "measured throughput": "{batch_size} / {measured_samples_per_s}",
            "FLOPs x efficiency": "{batch_size} x {train_flops_per_example} / ({peak_flops_per_s} x {efficiency})",
        }[p.step_method],
        "request_rule": "whole example per read"
        if sc.examples_per_file <= 1 and sc.request_bytes is None
        else "input or 256 KiB in shards",
        "latency_rule": p.sources.get("storage_latency_s", ""),
        "transfer_rule": (
            "max(compress, send, decompress) (streamed)" if sc.streamed else "{compress_s} + {send_s} + {decompress_s}"
        )
        if sc.compression_ratio > 1
        else "{send_s}",
        "state_rule": "input (scenario)"
        if sc.model_state_bytes is not None
        else "{params} x {bytes_per_param} B / {state_shards}",
        **{
            f"src_{k}": p.sources.get(k, "input")
            for k in (
                "gpu_memory_bytes",
                "reserved_bytes",
                "activation_bytes_per_example",
                "peak_flops_per_s",
                "efficiency",
            )
        },
        "gpu": sc.gpu,
        "model": sc.model,
        "precision": sc.precision,
        "tensors": sc.tensors or f"preset {sc.model}",
        "precision_class": catalog.precision_class(sc.precision),
    }
    symbolic = template
    for _ in range(2):  # rules may contain placeholders themselves
        symbolic = symbolic.format_map(_Keep(rules))
    numbers: dict[str, str] = {}
    for key in (
        set(OUTPUTS)
        | set(_INPUT_KINDS)
        | {"reads_per_example", "batches_in_flight", "gpus_on_node", "measured_samples_per_s"}
    ):
        if key in OUTPUTS:
            numbers[key] = p.formatted(key)
        elif key in p.inputs or key in p.values:
            value = float(p.values.get(key, p.inputs.get(key, math.nan)))
            numbers[key] = fmt(value, _INPUT_KINDS.get(key, "count"))
    numeric = symbolic.format_map(_Keep(numbers))
    return symbolic.replace("{", "").replace("}", ""), numeric


class _Keep(dict[str, str]):
    """format_map helper: unknown placeholders stay as they are."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


_EXTRA = ("reads_per_example", "batches_in_flight", "gpus_on_node", "cpu_seconds_effective", *STAGE_KEYS.values())
"""Intermediate values a Plan keeps beside OUTPUTS (stage capacities may be infinite)."""


def plan(scenario: Scenario | str | None = None, **inputs: Any) -> Plan:
    """Evaluate a scenario (an object, a preset name, or inputs) into a Plan.

    ``plan("beast-imagenet-4xv100", gpus_per_job=8)``, ``plan(my_scenario)`` or
    ``plan(gpu="H100-SXM", model="vit_b16")``: inputs override the scenario's.

    Raises
    ------
    DoesNotFitError
        When the model does not fit in GPU memory at batch 1 and no batch is fixed.
    InputError
        For any invalid input, naming the field.
    """
    sc = scenario
    if sc is None:
        sc = Scenario(**inputs) if inputs else Scenario()
    elif isinstance(sc, str):
        sc = preset_scenario(sc, **inputs)
    elif inputs:
        sc = sc.replace(**inputs)
    if not isinstance(sc, Scenario):
        raise InputError("scenario", f"expected a Scenario or a preset name, got {type(sc).__name__}")
    r = resolve(sc)
    out = evaluate(r.values)
    values = {k: float(np.asarray(v)) for k, v in out.items()}
    warnings = list(r.warnings)
    if values["max_batch_size"] < 1 and sc.batch_size is None:
        raise _does_not_fit(sc, values)
    if values["memory_used_bytes"] > values["gpu_memory_bytes"]:
        warnings.append(
            f"Batch {sc.batch_size} needs {fmt(values['memory_used_bytes'], 'bytes', binary=True)} of GPU memory; "
            f"the GPU has {fmt(values['gpu_memory_bytes'], 'bytes', binary=True)}."
        )
    if values["h2d_share_of_step"] > 0.5:
        warnings.append(
            "The host-to-GPU copy takes over half the step: overlap it (pin_memory, a side stream) or send uint8."
        )
    stages = {s: values[STAGE_KEYS[s]] for s in pipeline.STAGES if math.isfinite(values[STAGE_KEYS[s]])}
    bad = [k for k in OUTPUTS if not math.isfinite(values[k]) or values[k] < 0]
    if bad:
        raise InputError(bad[0], f"the inputs give a non-finite or negative {bad[0]}; check {', '.join(FIELDS)}")
    return Plan(
        scenario=sc,
        values={k: values[k] for k in OUTPUTS} | {k: values[k] for k in _EXTRA},
        sources=r.sources,
        inputs=r.values,
        step_method=compute.METHODS[int(values["step_method"])],
        bottleneck=pipeline.STAGES[int(values["bottleneck"])],
        stages=stages,
        warnings=tuple(warnings),
    )


def _does_not_fit(sc: Scenario, v: Mapping[str, float]) -> DoesNotFitError:
    need = v["reserved_bytes"] + v["model_state_bytes"] + v["activation_bytes_per_example"]
    short = need - v["gpu_memory_bytes"]

    def gib(b: float) -> str:
        return fmt(b, "bytes", binary=True)

    return DoesNotFitError(
        "batch_size",
        f"{sc.model} does not fit on {sc.gpu} at batch 1 with {sc.precision}/{sc.optimizer}: it needs {gib(need)} "
        f"(reserve {gib(v['reserved_bytes'])} + state {gib(v['model_state_bytes'])} + one example's activations "
        f"{gib(v['activation_bytes_per_example'])}) but the GPU has {gib(v['gpu_memory_bytes'])}, "
        f"short by {gib(short)}. "
        "What helps: mixed precision (bf16/fp16), activation checkpointing (set activation_bytes_per_example), "
        "a smaller input, sharding the state (state_shards), or a GPU with more memory.",
    )
