"""Scenario: every input of a plan, immutable, readable from and writable to YAML.

Sizes and rates accept a number in base units (bytes, bytes/s, s) or a string with a unit
("64 KiB", "1.6 GB/s", "10 Gb/s", "87 ms"). A field left at ``None`` takes its value from the
GPU, model or storage preset; ``Plan.sources`` says where every number came from.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from calc import catalog
from calc.errors import InputError, PresetError
from calc.memory import BYTES_PER_PARAM, ROUNDINGS
from calc.units import Kind, parse

Quantity = float | int | str

FieldKind = Literal["text", "choice", "bool", "int", "fraction", "number", Kind]


@dataclass(frozen=True)
class FieldInfo:
    """How one Scenario input is read, bounded and described (labels, help, validation)."""

    kind: FieldKind
    group: str
    label: str
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""


_TB = 1e15  # an absurd-size guard: 1 PB for one example, 1 EB for a dataset

FIELDS: dict[str, FieldInfo] = {
    "name": FieldInfo("text", "scenario", "Name", "A label for this scenario."),
    "description": FieldInfo("text", "scenario", "Description", "What the scenario reproduces, and its source."),
    "gpu": FieldInfo("choice", "GPU and model", "GPU", "GPU preset (presets/gpus.yaml)."),
    "model": FieldInfo("choice", "GPU and model", "Model", "Model preset (presets/models.yaml)."),
    "precision": FieldInfo(
        "choice",
        "GPU and model",
        "Precision",
        "fp32, tf32, or mixed precision fp16/bf16/fp8.",
        choices=catalog.PRECISIONS,
    ),
    "optimizer": FieldInfo(
        "choice",
        "GPU and model",
        "Optimizer",
        "Sets training-state bytes per parameter.",
        choices=tuple(BYTES_PER_PARAM),
    ),
    "state_shards": FieldInfo(
        "int",
        "GPU and model",
        "State shards",
        "GPUs the training state is sharded over (ZeRO-3/FSDP); 1 = none.",
        1,
        1e6,
    ),
    "gpu_memory_bytes": FieldInfo(
        "bytes", "GPU and model", "GPU memory [GiB]", "Overrides the GPU preset.", 1, 1e13, unit="GiB"
    ),
    "reserved_bytes": FieldInfo(
        "bytes",
        "GPU and model",
        "Reserved GPU memory [GiB]",
        "CUDA context and allocator slack (0.5-2 GiB; the article uses 0).",
        0,
        1e13,
        unit="GiB",
    ),
    "model_state_bytes": FieldInfo(
        "bytes",
        "GPU and model",
        "Model state [MiB]",
        "Weights + gradients + optimizer; overrides params x bytes/param.",
        0,
        1e15,
        unit="MiB",
    ),
    "activation_bytes_per_example": FieldInfo(
        "bytes",
        "GPU and model",
        "Activations per example [MiB]",
        "GPU memory per example kept for backward; overrides the model preset.",
        1,
        1e13,
        unit="MiB",
    ),
    "batch_size": FieldInfo(
        "int", "GPU and model", "Batch size per GPU", "Fixes n; leave empty to take the largest that fits.", 1, 1e7
    ),
    "batch_rounding": FieldInfo(
        "choice", "GPU and model", "Batch rounding", "pow2 (the article), multiple_of_8, none.", choices=ROUNDINGS
    ),
    "step_time_s": FieldInfo(
        "seconds",
        "GPU and model",
        "Measured step time [s]",
        "Time of one training step at this batch size; most trusted.",
        1e-6,
        1e6,
        unit="s",
    ),
    "samples_per_s_per_gpu": FieldInfo(
        "count_per_s",
        "GPU and model",
        "Measured samples/s per GPU",
        "Measured training throughput of one GPU.",
        1e-6,
        1e9,
        unit="samples/s",
    ),
    "forward_flops_per_example": FieldInfo(
        "flops",
        "GPU and model",
        "Forward FLOPs per example",
        "Overrides the model preset; write GMACs for multiply-accumulates.",
        1,
        1e18,
        unit="GFLOPs",
    ),
    "train_flops_multiplier": FieldInfo(
        "number",
        "GPU and model",
        "Training/forward FLOP ratio",
        "3: the backward pass costs about twice the forward.",
        1,
        10,
    ),
    "peak_flops_per_s": FieldInfo(
        "flops_per_s",
        "GPU and model",
        "Peak FLOP/s",
        "Overrides the GPU's dense peak at this precision.",
        1e9,
        1e18,
        unit="TFLOP/s",
    ),
    "efficiency": FieldInfo(
        "fraction",
        "GPU and model",
        "Efficiency (MFU)",
        "Share of peak reached; calibrated per model and precision.",
        1e-4,
        1,
    ),
    "gpus_per_job": FieldInfo("int", "cluster", "GPUs per job", "Data-parallel GPUs in one job.", 1, 1e6),
    "jobs": FieldInfo("int", "cluster", "Concurrent jobs", "Jobs reading the same storage at once.", 1, 1e5),
    "gpus_per_node": FieldInfo("int", "cluster", "GPUs per node", "Sets per-node RAM and CPU figures.", 1, 64),
    "target_gpu_utilization": FieldInfo(
        "fraction",
        "cluster",
        "Target GPU utilisation",
        "Share of the GPU's rate the data path must feed (MLPerf: 0.9).",
        0.01,
        1,
    ),
    "example_bytes": FieldInfo(
        "bytes", "data", "Example size on disk [kB]", "Mean stored size of one example.", 1, _TB, unit="kB"
    ),
    "examples_per_file": FieldInfo(
        "int",
        "data",
        "Examples per file",
        "1 = a file per example; more = packed shards (TFRecord, WebDataset, LMDB).",
        1,
        1e9,
    ),
    "request_bytes": FieldInfo(
        "bytes",
        "data",
        "Read size [KiB]",
        "Size of one read; default: the whole example, or 256 KiB in shards.",
        512,
        1e10,
        unit="KiB",
    ),
    "dataset_examples": FieldInfo("count", "data", "Examples in the dataset", "Training-set size.", 1, 1e13),
    "tensors": FieldInfo(
        "text", "data", "Tensors per example", "What the loader emits: name=SHAPE:dtype, comma-separated."
    ),
    "cache_fraction": FieldInfo(
        "fraction",
        "data",
        "Locally cached fraction",
        "Share of the dataset cached locally; cuts remote reads after epoch 1.",
        0,
        0.999,
    ),
    "num_workers": FieldInfo(
        "int", "loader", "DataLoader workers per GPU", "0 loads in the training process, with no overlap.", 0, 1024
    ),
    "prefetch_factor": FieldInfo(
        "int", "loader", "Prefetch factor", "Batches each worker loads ahead (PyTorch default 2).", 1, 1024
    ),
    "pin_memory": FieldInfo(
        "bool", "loader", "Pinned memory", "Page-locked batches: faster copies, a second copy in RAM."
    ),
    "cpu_seconds_per_example": FieldInfo(
        "seconds", "loader", "CPU time per example [ms]", "Decode + augment on one core.", 0, 1e5, unit="ms"
    ),
    "cpu_cores_per_node": FieldInfo(
        "int", "loader", "CPU cores per node", "Cores free for data loading; empty = one per worker.", 1, 4096
    ),
    "gpu_decode": FieldInfo("bool", "loader", "Decode on the GPU (DALI)", "Moves decode and augmentation off the CPU."),
    "host_link_bytes_per_s": FieldInfo(
        "bytes_per_s", "loader", "Host-to-GPU link [GB/s]", "Overrides the GPU's PCIe link.", 1e6, 1e13, unit="GB/s"
    ),
    "host_ram_bytes": FieldInfo(
        "bytes",
        "loader",
        "Host RAM per node [GiB]",
        "For worker RAM and whether the dataset fits in the page cache.",
        1e6,
        1e15,
        unit="GiB",
    ),
    "storage": FieldInfo(
        "choice",
        "storage",
        "Storage",
        "Storage option the data is read from (presets/storage.yaml); empty = unconstrained.",
    ),
    "storage_units": FieldInfo(
        "int",
        "storage",
        "Storage units",
        "Drives, TiB or volumes of the storage option; empty = as many as needed.",
        1,
        1e6,
    ),
    "storage_bytes_per_s": FieldInfo(
        "bytes_per_s",
        "storage",
        "Storage bandwidth [GB/s]",
        "Overrides the storage option's bandwidth.",
        1,
        1e15,
        unit="GB/s",
    ),
    "storage_iops": FieldInfo(
        "count_per_s",
        "storage",
        "Storage IOPS",
        "Overrides the storage option's reads per second.",
        1e-3,
        1e12,
        unit="reads/s",
    ),
    "storage_latency_s": FieldInfo(
        "seconds",
        "storage",
        "Storage latency [ms]",
        "Time of one read; default from the storage option, else 1 ms.",
        1e-7,
        100,
        unit="ms",
    ),
    "transfer_link_bytes_per_s": FieldInfo(
        "bytes_per_s",
        "transfer",
        "Copy link [MB/s]",
        "Network or disk path the dataset is copied over.",
        1,
        1e14,
        unit="MB/s",
    ),
    "compression_ratio": FieldInfo(
        "number", "transfer", "Compression ratio", "Original / compressed size; 1 = no compression.", 1, 1e5
    ),
    "compress_bytes_per_s_per_core": FieldInfo(
        "bytes_per_s",
        "transfer",
        "Compression per core [MB/s]",
        "Input bytes one core compresses per second.",
        1,
        1e12,
        unit="MB/s",
    ),
    "compress_cores": FieldInfo("int", "transfer", "Compression cores", "Threads of pigz/zstd -T.", 1, 4096),
    "decompress_bytes_per_s": FieldInfo(
        "bytes_per_s",
        "transfer",
        "Decompression [MB/s]",
        "Output bytes per second when unpacking.",
        1,
        1e13,
        unit="MB/s",
    ),
    "streamed": FieldInfo("bool", "transfer", "Streamed", "Stages run at once through a pipe; else one after another."),
}


@dataclass(frozen=True)
class Scenario:
    """Every input of a plan. Immutable; change one with ``.replace(**changes)``.

    Fields left at ``None`` come from the presets named by ``gpu``, ``model`` and ``storage``.
    """

    name: str = "custom"
    description: str = ""
    gpu: str = "V100-SXM2-16GB"
    model: str = "resnet50"
    precision: str = "fp32"
    optimizer: str = "sgd_momentum"
    state_shards: int = 1
    gpu_memory_bytes: Quantity | None = None
    reserved_bytes: Quantity = "1 GiB"
    model_state_bytes: Quantity | None = None
    activation_bytes_per_example: Quantity | None = None
    batch_size: int | None = None
    batch_rounding: str = "pow2"
    step_time_s: Quantity | None = None
    samples_per_s_per_gpu: Quantity | None = None
    forward_flops_per_example: Quantity | None = None
    train_flops_multiplier: float = 3.0
    peak_flops_per_s: Quantity | None = None
    efficiency: float | None = None
    gpus_per_job: int = 1
    jobs: int = 1
    gpus_per_node: int = 8
    target_gpu_utilization: float = 1.0
    example_bytes: Quantity | None = None
    examples_per_file: int = 1
    request_bytes: Quantity | None = None
    dataset_examples: Quantity | None = None
    tensors: str | None = None
    cache_fraction: float = 0.0
    num_workers: int = 8
    prefetch_factor: int = 2
    pin_memory: bool = True
    cpu_seconds_per_example: Quantity | None = None
    cpu_cores_per_node: int | None = None
    gpu_decode: bool = False
    host_link_bytes_per_s: Quantity | None = None
    host_ram_bytes: Quantity = "512 GiB"
    storage: str | None = None
    storage_units: int | None = None
    storage_bytes_per_s: Quantity | None = None
    storage_iops: Quantity | None = None
    storage_latency_s: Quantity | None = None
    transfer_link_bytes_per_s: Quantity = "1.25 GB/s"
    compression_ratio: float = 1.0
    compress_bytes_per_s_per_core: Quantity = "105 MB/s"
    compress_cores: int = 1
    decompress_bytes_per_s: Quantity = "390 MB/s"
    streamed: bool = False

    def __post_init__(self) -> None:
        for name, info in FIELDS.items():
            value = getattr(self, name)
            if value is None:
                continue
            checked = check_field(name, value)
            if checked is not value and info.kind in ("int", "bool", "fraction", "number"):
                object.__setattr__(self, name, checked)

    def replace(self, **changes: Any) -> Scenario:
        """A copy with ``changes`` applied (validated like the constructor)."""
        unknown = sorted(set(changes) - set(FIELDS))
        if unknown:
            raise InputError(unknown[0], f"unknown input; accepted: {', '.join(FIELDS)}")
        return dataclasses.replace(self, **changes)

    def to_dict(self, *, changed_only: bool = False) -> dict[str, Any]:
        """Inputs as plain data (YAML/JSON/URL-safe); ``changed_only`` drops defaults."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if changed_only and value == f.default:
                continue
            out[f.name] = value
        return out

    def to_yaml(self) -> str:
        """The scenario as a YAML preset (only inputs that differ from the defaults)."""
        return yaml.safe_dump(self.to_dict(changed_only=True), sort_keys=False, allow_unicode=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "scenario") -> Scenario:
        """Build from a mapping (a YAML document, URL parameters); errors name the key."""
        if not isinstance(data, Mapping):
            raise PresetError(source, f"expected a mapping of inputs, got {type(data).__name__}")
        unknown = sorted(str(k) for k in data if k not in FIELDS)
        if unknown:
            raise InputError(f"{source}: {unknown[0]}", f"unknown input; accepted: {', '.join(FIELDS)}")
        return cls(**{str(k): v for k, v in data.items()})

    @classmethod
    def from_yaml(cls, text: str, source: str = "scenario.yaml", max_bytes: int = 100_000) -> Scenario:
        """Read a scenario YAML (``yaml.safe_load``, size-limited, validated)."""
        return cls.from_dict(catalog.parse_yaml(text, source, max_bytes) or {}, source)


def check_field(name: str, value: object) -> Any:
    """Validate one input; return it normalised (ints as int, bools as bool).

    Raises
    ------
    InputError
        Naming the field and what is accepted.
    """
    info = FIELDS[name]
    if info.kind == "text":
        if not isinstance(value, str):
            raise InputError(name, f"expected text, got {value!r}")
        if name == "tensors":
            from calc.host import parse_tensors

            parse_tensors(value, name)
        return value
    if info.kind == "choice":
        if not isinstance(value, str) or not value.strip():
            raise InputError(name, f"expected a name, got {value!r}")
        if info.choices and value not in info.choices:
            raise InputError(name, f"unknown {value!r}; accepted: {', '.join(info.choices)}")
        return value
    if info.kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
            return value.lower() in ("true", "1", "yes", "on")
        if isinstance(value, int | float) and value in (0, 1):
            return bool(value)
        raise InputError(name, f"expected true or false, got {value!r}")
    if info.kind in ("int", "fraction", "number"):
        number = parse(value, "count", name)
        if info.kind == "int" and number != math.floor(number):
            raise InputError(name, f"expected a whole number, got {value!r}")
        _bounds(name, number, info)
        return int(number) if info.kind == "int" else number
    number = parse(value, info.kind, name)  # type: ignore[arg-type]  # a quantity with a unit
    _bounds(name, number, info)
    return value


def _bounds(name: str, number: float, info: FieldInfo) -> None:
    lo, hi = info.minimum, info.maximum
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        from calc.units import fmt

        if info.kind in ("int", "number", "fraction"):
            raise InputError(name, f"{number:g} is out of range; accepted: {lo:g} to {hi:g}")
        kind: Kind = info.kind  # type: ignore[assignment]
        binary = kind == "bytes" and info.unit.endswith("iB")
        low, high = fmt(lo or 0.0, kind, binary=binary), fmt(hi or 0.0, kind, binary=binary)
        raise InputError(name, f"{fmt(number, kind, binary=binary)} is out of range; accepted: {low} to {high}")


def scenarios() -> list[str]:
    """Names of the preset scenarios (presets/scenarios/*.yaml)."""
    return list(catalog.scenario_files())


def scenario(name: str, **overrides: Any) -> Scenario:
    """A preset scenario by name, with ``overrides`` applied."""
    files = catalog.scenario_files()
    key = catalog.lookup(name, files, "scenario", "scenario")
    path = files[key]
    base = Scenario.from_dict(catalog.load_yaml(path) or {}, path.name)
    return base.replace(**overrides) if overrides else base
