"""Scenario: every input of a plan, declared once, immutable, readable from YAML and text.

Each input is one dataclass field whose metadata (``FieldInfo``) says its kind, unit, range,
group, label, help and where a ``None`` takes its value from. ``FIELDS``, validation, the
text codec (URL, CLI ``--set``, dashboard), YAML, sweep axes and the dashboard's widgets all
derive from these declarations: adding an input means one declaration plus its formula.

Sizes and rates accept a number in base units (bytes, bytes/s, s) or a string with a unit
("64 KiB", "1.6 GB/s", "10 Gb/s", "87 ms"). A bare number always means the base unit.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import yaml

from calc import catalog
from calc.checkpoint import CHECKPOINT_LAYOUTS
from calc.errors import InputError, PresetError
from calc.host import image_size, parse_tensors
from calc.memory import BYTES_PER_PARAM, ROUNDINGS
from calc.pipeline import LOADERS, MEDIA
from calc.storage import PROTECTIONS, SITES, option, options
from calc.units import Kind, check_range, fmt, parse

Quantity = float | int | str

FieldKind = Literal["text", "choice", "bool", "int", "fraction", "number", Kind]

STACKS = catalog.STACKS
"""Software stacks (calc.catalog.STACKS): ngc (the default), eager, optimized, compiled."""

CHOICE_ALIASES: dict[str, dict[str, str]] = {"stack": catalog.STACK_ALIASES}
"""Older spellings of a choice still read, by input: the link or YAML that holds one reopens as
the canonical choice (``stack=tuned`` is ``ngc``)."""

STEP_MODELS = ("roofline", "flops")
"""Step-time models: the calibrated roofline sum, or the articles' FLOPs-only arithmetic."""

_BARE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
"""A plain number with no unit (read as a number in the field's base unit)."""

OFF_WORDS = ("", "none", "null", "auto", "default")
"""Text that means "not given" for an optional input (URL, CLI, dashboard)."""


@dataclass(frozen=True)
class FieldInfo:
    """How one Scenario input is read, bounded and described (labels, help, validation).

    ``unit`` is the unit the dashboard shows; a bare number is always in the base unit of
    ``kind`` (bytes, s, bytes/s ...). ``preset`` says where a ``None`` value comes from.
    """

    kind: FieldKind
    group: str
    label: str
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    preset: str = ""
    optional: bool = False

    @property
    def title(self) -> str:
        """The label without its unit in brackets ("Example size on disk"), for sentences and rows."""
        return self.label.split(" [")[0]


def _in(
    default: Any,
    kind: FieldKind,
    group: str,
    label: str,
    help: str,
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    choices: tuple[str, ...] = (),
    unit: str = "",
    preset: str = "",
) -> Any:
    """Declare one input: its default and everything else about it, in one place."""
    info = FieldInfo(kind, group, label, help, minimum, maximum, choices, unit, preset, default is None)
    return field(default=default, metadata={"info": info})


_PB = 1e15  # an absurd-size guard: 1 PB for one example or one model's state

GM, DATA, LOADER, CLUSTER, STORAGE, TRANSFER, MEASURED, CHECKPOINT = (
    "GPU and model",
    "data",
    "loader",
    "cluster",
    "storage",
    "transfer",
    "measured",
    "checkpoints",
)


@dataclass(frozen=True)
class Scenario:
    """Every input of a plan. Immutable; change one with ``.replace(**changes)``.

    Fields left at ``None`` come from the presets named by ``gpu``, ``model`` and ``storage``
    (each field's ``FieldInfo.preset`` says which figure).
    """

    name: str = _in("custom", "text", "scenario", "Name", "A label for this scenario (titles, links, file names).")
    description: str = _in("", "text", "scenario", "Description", "What the scenario reproduces, and its source.")
    gpu: str = _in("V100-SXM2-16GB", "choice", GM, "GPU", "GPU preset (presets/gpus.yaml).")
    server: str | None = _in(
        None,
        "choice",
        CLUSTER,
        "GPU server",
        "Server preset (presets/servers.yaml): fills the node's storage link, RAM and CPU cores.",
    )
    model: str = _in(
        "resnet50",
        "choice",
        GM,
        "Model",
        "Model preset (presets/models.yaml), or blank: a model given by its own figures (BLANK_MODEL_INPUTS).",
    )
    precision: str = _in(
        "fp32", "choice", GM, "Precision", "fp32, tf32, or mixed precision fp16/bf16/fp8.", choices=catalog.PRECISIONS
    )
    stack: str = _in(
        "ngc",
        "choice",
        GM,
        "Software stack",
        "ngc: NGC PyTorch as NVIDIA DeepLearningExamples run it (channels_last, AMP, DALI), the default; "
        "eager: plain eager PyTorch (NCHW); optimized: NVIDIA's MXNet or TensorFlow-XLA stacks with DALI "
        "(MLPerf-style fused kernels); compiled: PyTorch with torch.compile. tuned (the older name) = ngc.",
        choices=STACKS,
    )
    step_model: str = _in(
        "roofline",
        "choice",
        GM,
        "Step-time model",
        "roofline: math + memory traffic + fixed part (calibrated); "
        "flops: the article's n x FLOPs / (peak x efficiency).",
        choices=STEP_MODELS,
    )
    optimizer: str | None = _in(
        None,
        "choice",
        GM,
        "Optimizer",
        "Sets training-state bytes per parameter; empty = by model family: sgd_momentum for a CNN, "
        "adamw for a transformer or a blank model (calc.memory.OPTIMIZER_BY_FAMILY).",
        choices=tuple(BYTES_PER_PARAM),
    )
    state_shards: int = _in(
        1, "int", GM, "State shards", "GPUs the training state is sharded over (ZeRO-3/FSDP); 1 = none.", 1, 1e6
    )
    shard_group: int = _in(
        0,
        "int",
        GM,
        "Shard group",
        "Data-parallel ranks sharing one sharded copy of the state (zero_stage 1-3); 0 = all of them; "
        "fewer = hybrid sharding (HSDP: 8 = inside a node, replicated across nodes).",
        0,
        1e6,
    )
    kernels: str | None = _in(
        None,
        "choice",
        GM,
        "Kernels",
        "compiled (flash attention, no dropout, fused/compiled element-wise: today's common stack), flash "
        "(flash attention, eager element-wise), gpt (no flash: the s x s attention matrix, dropout); empty = "
        "compiled, or gpt on GPUs without flash-attention kernels (Volta, Turing, Pascal).",
        choices=("compiled", "flash", "gpt"),
    )
    gpu_memory_bytes: Quantity | None = _in(
        None, "bytes", GM, "GPU memory [GiB]", "Overrides the GPU preset.", 1, 1e13, unit="GiB", preset="gpu memory"
    )
    memory_bandwidth_bytes_per_s: Quantity | None = _in(
        None,
        "bytes_per_s",
        GM,
        "GPU memory bandwidth [TB/s]",
        "Overrides the GPU preset's HBM/GDDR bandwidth.",
        1e9,
        1e14,
        unit="TB/s",
        preset="gpu memory_bandwidth",
    )
    reserved_bytes: Quantity = _in(
        "1 GiB",
        "bytes",
        GM,
        "Reserved GPU memory [GiB]",
        "CUDA context and allocator slack (0.5-2 GiB; the article uses 0).",
        0,
        1e13,
        unit="GiB",
    )
    model_state_bytes: Quantity | None = _in(
        None,
        "bytes",
        GM,
        "Model state [MiB]",
        "Weights + gradients + optimizer; overrides params x bytes/param.",
        0,
        _PB,
        unit="MiB",
        preset="params x optimizer bytes / state_shards",
    )
    activation_bytes_per_example: Quantity | None = _in(
        None,
        "bytes",
        GM,
        "Activations per example [MiB]",
        "GPU memory per example kept for backward; overrides the model preset.",
        1,
        1e13,
        unit="MiB",
        preset="model activation_bytes",
    )
    batch_size: int | None = _in(
        None, "int", GM, "Batch size per GPU", "Fixes n; leave empty to take the largest that fits.", 1, 1e7
    )
    batch_rounding: str = _in(
        "pow2", "choice", GM, "Batch rounding", "pow2 (the article), multiple_of_8, none.", choices=ROUNDINGS
    )
    forward_flops_per_example: Quantity | None = _in(
        None,
        "flops",
        GM,
        "Forward FLOPs per example",
        "Overrides the model preset; write GMACs for multiply-accumulates.",
        1,
        1e18,
        unit="GFLOPs",
        preset="model forward_flops",
    )
    train_flops_multiplier: float | None = _in(
        None,
        "number",
        GM,
        "Training/forward FLOP ratio",
        "Empty: the model's measured training FLOPs (or 3: backward ~ 2 x forward).",
        1,
        10,
        preset="model train_flops / forward_flops",
    )
    memory_traffic_bytes_per_example: Quantity | None = _in(
        None,
        "bytes",
        GM,
        "GPU memory traffic per example [MB]",
        "Bytes read + written in GPU memory per example per step; overrides the model preset.",
        1,
        _PB,
        unit="MB",
        preset="model memory_traffic",
    )
    fused_traffic_share: float | None = _in(
        None,
        "fraction",
        GM,
        "Traffic a fusing stack removes",
        "Share of the per-example traffic in element-wise ops that the optimized and compiled stacks fold "
        "into their neighbours (calc.compute.fused_traffic_share of a per-op measurement); empty = the model "
        "preset's.",
        0,
        0.99,
        preset="model fused_traffic_share",
    )
    depthwise_traffic_share: float | None = _in(
        None,
        "fraction",
        GM,
        "Depthwise-convolution share of traffic",
        "Share of the per-example traffic in depthwise convolutions (EfficientNet, MobileNet), which run at "
        "their own, lower share of the bandwidth; empty = the model preset's (0 for models without them).",
        0,
        0.99,
        preset="model depthwise_traffic_share",
    )
    peak_flops_per_s: Quantity | None = _in(
        None,
        "flops_per_s",
        GM,
        "Peak FLOP/s",
        "Overrides the GPU's dense peak at this precision.",
        1e9,
        1e18,
        unit="TFLOP/s",
        preset="gpu peak_flops",
    )
    efficiency: float | None = _in(
        None,
        "fraction",
        GM,
        "Compute efficiency",
        "Share of peak FLOP/s the model's math reaches; empty = fitted on calibration.yaml.",
        1e-4,
        1,
        preset="calibration fit",
    )
    step_time_s: Quantity | None = _in(
        None,
        "seconds",
        MEASURED,
        "Measured step time [ms]",
        "Time of one training step, measured at the GPU, batch and precision below.",
        1e-6,
        1e6,
        unit="ms",
    )
    samples_per_s_per_gpu: Quantity | None = _in(
        None,
        "count_per_s",
        MEASURED,
        "Measured samples/s per GPU",
        "Measured training throughput of one GPU, at the GPU, batch and precision below.",
        1e-6,
        1e9,
        unit="samples/s",
    )
    measured_gpu: str | None = _in(
        None, "choice", MEASURED, "Measured on GPU", "GPU of the measurement; empty = this scenario's GPU."
    )
    measured_batch_size: int | None = _in(
        None, "int", MEASURED, "Measured at batch", "Batch of the measurement; empty = this scenario's batch.", 1, 1e7
    )
    measured_precision: str | None = _in(
        None,
        "choice",
        MEASURED,
        "Measured at precision",
        "Precision of the measurement; empty = this scenario's.",
        choices=catalog.PRECISIONS,
    )
    measured_train_resolution: int | None = _in(
        None,
        "int",
        MEASURED,
        "Measured at resolution [px]",
        "Training resolution of the measured step; empty = the model preset's.",
        8,
        16384,
    )
    measured_cpu: str | None = _in(
        None,
        "choice",
        MEASURED,
        "CPU time measured on",
        "CPU the measured CPU time per example ran on (presets/cpus.yaml); empty = this scenario's CPU.",
    )
    scaling_efficiency: float | None = _in(
        None,
        "fraction",
        CLUSTER,
        "Data-parallel scaling efficiency",
        "Per-GPU rate in the job / alone; empty = calc.compute.scaling_efficiency defaults.",
        0.05,
        1,
        preset="published multi-GPU tables",
    )
    gpus_per_job: int = _in(1, "int", CLUSTER, "GPUs per job", "Data-parallel GPUs in one job.", 1, 1e6)
    gpu_price_per_hour: float | None = _in(
        None,
        "number",
        CLUSTER,
        "GPU price [USD per GPU-hour]",
        "Prices the GPU time the bottleneck leaves idle; empty = the GPU preset's on-demand price.",
        0,
        1e4,
        preset="gpu price_per_hour",
    )
    amortization_months: int = _in(
        36,
        "int",
        STORAGE,
        "Amortisation [months]",
        "Bought drives and servers are spread over this many months to compare with cloud prices.",
        1,
        240,
    )
    power_usd_per_kwh: float = _in(
        0.13,
        "number",
        STORAGE,
        "Electricity [$/kWh]",
        "Power for bought storage, added to the on-prem total (0.13: a US commercial rate, EIA Electric Power "
        "Monthly Table 5.6.A, April 2025; calc.storage.USD_PER_KWH).",
        0,
        10,
    )
    support_share: float = _in(
        0.12,
        "fraction",
        STORAGE,
        "Hardware support a year",
        "Share of the purchase price paid each year for hardware support, added to the on-prem total (0.12: "
        "10-15 % a year is usual; calc.storage.SUPPORT_SHARE_PER_YEAR).",
        0,
        1,
    )
    jobs: int = _in(1, "int", CLUSTER, "Concurrent jobs", "Jobs reading the same storage at once.", 1, 1e5)
    gpus_per_node: int = _in(8, "int", CLUSTER, "GPUs per node", "Sets per-node RAM and CPU figures.", 1, 64)
    target_gpu_utilization: float = _in(
        1.0,
        "fraction",
        CLUSTER,
        "Target GPU utilisation",
        "Share of the GPU's rate the data path must feed (MLPerf: 0.9).",
        0.01,
        1,
    )
    example_bytes: Quantity | None = _in(
        None,
        "bytes",
        DATA,
        "Example size on disk [kB]",
        "Mean stored size of one example.",
        1,
        _PB,
        unit="kB",
        preset="model example_bytes",
    )
    example_bytes_cv: float = _in(
        0.0,
        "number",
        DATA,
        "Example size spread (CV)",
        "Standard deviation / mean of example sizes; sizes the 99th-percentile batch (MLPerf 3D U-Net: 0.47).",
        0,
        10,
    )
    examples_per_file: int = _in(
        1,
        "int",
        DATA,
        "Examples per file",
        "1 = a file per example; more = packed shards (TFRecord, WebDataset, LMDB).",
        1,
        1e9,
    )
    request_bytes: Quantity | None = _in(
        None,
        "bytes",
        DATA,
        "Read size [KiB]",
        "Size of one read; default: the whole example, or 256 KiB in shards.",
        512,
        1e10,
        unit="KiB",
    )
    dataset_examples: Quantity | None = _in(
        None,
        "count",
        DATA,
        "Examples in the dataset",
        "Training-set size; empty = dataset size / example size, else the model preset's.",
        0,
        1e13,
        preset="model dataset_examples",
    )
    dataset_bytes: Quantity | None = _in(
        None,
        "bytes",
        DATA,
        "Dataset size [TB]",
        "Bytes of the training set on storage; with the example size it gives the examples, with the "
        "examples it gives the example size (give two of the three).",
        1,
        1e18,
        unit="TB",
    )
    dataset: str | None = _in(
        None,
        "text",
        DATA,
        "Dataset name",
        "Jobs of a cluster naming the same dataset store it once (calc.cluster); empty = the scenario's name.",
    )
    tensors: str | None = _in(
        None,
        "text",
        DATA,
        "Tensors per example",
        "What the loader emits: name=SHAPE:dtype, comma-separated.",
        preset="model tensors",
    )
    cache_fraction: float = _in(
        0.0,
        "fraction",
        DATA,
        "Locally cached fraction",
        "Share of the dataset cached locally; cuts remote reads after epoch 1.",
        0,
        0.999,
    )
    num_workers: int = _in(
        8, "int", LOADER, "DataLoader workers per GPU", "0 loads in the training process, with no overlap.", 0, 1024
    )
    prefetch_factor: int = _in(
        2, "int", LOADER, "Prefetch factor", "Batches each worker loads ahead (PyTorch default 2).", 1, 1024
    )
    pin_memory: bool = _in(
        True, "bool", LOADER, "Pinned memory", "Page-locked batches: faster copies, a second copy in RAM."
    )
    cpu_seconds_per_example: Quantity | None = _in(
        None,
        "seconds",
        LOADER,
        "CPU time per example [ms]",
        "Measured decode + augment + collate on one core of measured_cpu (calc.measure.transform); overrides "
        "the decoder model.",
        0,
        1e5,
        unit="ms",
        preset="model cpu_seconds_per_example",
    )
    cpu_cores_per_node: int | None = _in(
        None,
        "int",
        LOADER,
        "CPU cores per node",
        "Physical cores free for data loading, shared by every job and GPU on the node; empty = the server's "
        "less one per GPU, else one per worker.",
        1,
        4096,
        preset="server cpu_cores less one per GPU",
    )
    cpu: str | None = _in(
        None,
        "choice",
        LOADER,
        "CPU",
        "CPU model of the node (presets/cpus.yaml): its per-core speed scales every CPU cost measured on the "
        "reference CPU, its threads per core add SMT threads; empty = the server's CPU, else the reference CPU.",
        preset="server cpu, else the reference CPU",
    )
    cpu_threads_per_core: int | None = _in(
        None,
        "int",
        LOADER,
        "Threads per core used",
        "Hardware threads each core runs for the loader: 2 with SMT/Hyper-Threading, 1 without; empty = the "
        "CPU's (presets/cpus.yaml).",
        1,
        8,
        preset="cpu threads_per_core",
    )
    threads_per_worker: int = _in(
        1,
        "int",
        LOADER,
        "Threads per worker",
        "Intra-op threads each DataLoader worker runs (torch.set_num_threads, OMP_NUM_THREADS, "
        "cv2.setNumThreads); PyTorch sets 1 in its workers. Above the cores they oversubscribe them.",
        1,
        1024,
    )
    decoder: str | None = _in(
        None,
        "choice",
        LOADER,
        "Image decoder",
        "What decodes each stored image: pil (torchvision's default), pillow-simd, opencv, turbojpeg, "
        "torchvision (decode_jpeg), dali-cpu, dali-gpu (nvJPEG on the GPU), ffcv, or none (raw pixels stored); "
        "empty = the model preset's. The CPU cost follows it (presets/decoders.yaml).",
        preset="model decoder",
    )
    reduced_decode: bool = _in(
        False,
        "bool",
        LOADER,
        "Decode at a reduced size",
        "Decode in the DCT at 1/2, 1/4 or 1/8 size while the short side stays at least the training side, where "
        "the decoder can (PIL Image.draft, OpenCV IMREAD_REDUCED_*, turbojpeg scaling_factor, simplejpeg "
        "min_height); off: every pixel decoded, as torchvision's ImageFolder does.",
    )
    image_pixels: str | None = _in(
        None,
        "text",
        DATA,
        "Stored image size [px]",
        "Width x height of a stored image, e.g. 500x375 (ImageNet); decode cost follows its pixels.",
        preset="model image_pixels",
    )
    train_resolution: int | None = _in(
        None,
        "int",
        GM,
        "Training resolution [px]",
        "Side of the square image the model trains on (224; 160 or 176 in progressive resizing): augmentation "
        "cost, tensor bytes, FLOPs, activations and memory traffic follow its pixels.",
        8,
        16384,
        preset="model train_resolution",
    )
    gpu_decode: bool = _in(
        False,
        "bool",
        LOADER,
        "Decode on the GPU (DALI)",
        "Moves decode and augmentation off the CPU, onto the GPU's hardware decoders (NVJPG, NVDEC).",
    )
    media: str = _in(
        "image",
        "choice",
        LOADER,
        "Media decoded",
        "image: one JPEG per example (NVJPG on the GPU); video: frames_per_example H.264 frames (NVDEC).",
        choices=MEDIA,
    )
    frames_per_example: int = _in(
        1, "int", LOADER, "Video frames decoded per example", "Frames the decoder produces per clip.", 1, 100000
    )
    frame_pixels: int = _in(
        1920 * 1080,
        "int",
        LOADER,
        "Pixels per video frame",
        "Width x height of a decoded frame (NVDEC's rate scales from 1920 x 1080).",
        1,
        7680 * 4320,
    )
    host_link_bytes_per_s: Quantity | None = _in(
        None,
        "bytes_per_s",
        LOADER,
        "Host-to-GPU link [GB/s]",
        "Overrides the GPU's PCIe link.",
        1e6,
        1e13,
        unit="GB/s",
        preset="gpu host_link",
    )
    host_ram_bytes: Quantity | None = _in(
        None,
        "bytes",
        LOADER,
        "Host RAM per node [GiB]",
        "For worker RAM and whether the dataset fits in the page cache.",
        1e6,
        _PB,
        unit="GiB",
        preset="server ram, else 512 GiB",
    )
    page_cache: bool = _in(
        True,
        "bool",
        DATA,
        "Page cache",
        "Free host RAM caches the dataset after epoch 1 (off: every epoch reads storage, as the articles assume).",
    )
    node_network_bytes_per_s: Quantity | None = _in(
        None,
        "bytes_per_s",
        CLUSTER,
        "Node link to storage [Gb/s]",
        "Per-node network the storage traffic uses; empty = the server preset's, else unlimited.",
        1e6,
        1e14,
        unit="Gb/s",
        preset="server storage_network",
    )
    loader: str = _in(
        "sync",
        "choice",
        LOADER,
        "Loader",
        "sync: DataLoader workers read then decode; async: streaming readers keep requests in flight.",
        choices=LOADERS,
    )
    reader_concurrency: int = _in(
        64,
        "int",
        LOADER,
        "Async reads in flight per GPU",
        "Requests an async/streaming reader keeps outstanding per GPU (s3torchconnector, WebDataset).",
        1,
        1e5,
    )
    storage: str | None = _in(
        None,
        "choice",
        STORAGE,
        "Storage",
        "Storage option the data is read from (presets/storage.yaml); empty = unconstrained.",
    )
    storage_units: float | None = _in(
        None,
        "number",
        STORAGE,
        "Storage units",
        "Drives, TiB or volumes of the storage option; empty = as many as needed, up to its maximum. "
        "A fraction only where the option is sold by capacity (4.6875 TiB of FSx); drives, servers, "
        "volumes, prefixes and buckets are whole.",
        1,
        1e6,
    )
    storage_bytes_per_s: Quantity | None = _in(
        None,
        "bytes_per_s",
        STORAGE,
        "Storage bandwidth [GB/s]",
        "Overrides the storage option's bandwidth.",
        1,
        _PB,
        unit="GB/s",
    )
    storage_iops: Quantity | None = _in(
        None,
        "count_per_s",
        STORAGE,
        "Storage IOPS",
        "Overrides the storage option's reads per second.",
        1e-3,
        1e12,
        unit="reads/s",
    )
    storage_latency_s: Quantity | None = _in(
        None,
        "seconds",
        STORAGE,
        "Storage latency [ms]",
        "Time of one read; default from the storage option, else 1 ms.",
        1e-7,
        100,
        unit="ms",
    )
    site: str | None = _in(
        None,
        "choice",
        STORAGE,
        "Site",
        "Where the job runs and its storage is bought or rented: on-prem, aws, gcp or azure; "
        "empty = the server preset's (DGX/HGX: on-prem, a cloud instance: its cloud), else the storage's, "
        "else unknown (the answer gives one line per site).",
        choices=SITES,
    )
    allow_other_site: bool = _in(
        False,
        "bool",
        STORAGE,
        "Allow storage at another site",
        "Also offer storage at another site, read over site_link_bytes_per_s with egress priced per GB.",
    )
    site_link_bytes_per_s: Quantity | None = _in(
        None,
        "bytes_per_s",
        STORAGE,
        "Link to another site [Gb/s]",
        "The WAN or interconnect between the job's site and storage at another site; "
        "empty = none (other sites cannot serve).",
        1,
        _PB,
        unit="Gb/s",
    )
    protection: str | None = _in(
        None,
        "choice",
        STORAGE,
        "Drive protection",
        "How bought drives are protected: raid0 (none), mirror, raid6 (groups of 10 + 2) or erasure k+m; "
        "empty = mirror for 1-2 data drives, raid6 above.",
        choices=PROTECTIONS,
    )
    storage_housing: str = _in(
        "node",
        "choice",
        STORAGE,
        "Drives held in",
        "Where a drive option's drives sit: node (in the GPU nodes: checkpoints on them die with the node) or "
        "server (a storage server on the network, as the answer buys them for checkpoints: they outlive a node).",
        choices=("node", "server"),
    )
    fill_limit: float = _in(
        0.8,
        "fraction",
        STORAGE,
        "Fill limit",
        "Share of bought drives' usable capacity the data may fill (file systems slow down when nearly full).",
        0.05,
        1,
    )
    checkpoint_interval_s: Quantity | None = _in(
        None,
        "seconds",
        CHECKPOINT,
        "Checkpoint interval [min]",
        "Time between saves; optimal = the Young-Daly interval from the failure rate; empty = no checkpoints.",
        1,
        1e8,
        unit="min",
    )
    checkpoint_mode: str = _in(
        "auto",
        "choice",
        CHECKPOINT,
        "Checkpoint save",
        "sync: training waits for the write; async: copy to host RAM, drain during training; "
        "auto: async for sharded training (ZeRO or tensor/pipeline parallel), else sync.",
        choices=("auto", "sync", "async"),
    )
    checkpoint_stall_fraction: float = _in(
        0.02,
        "fraction",
        CHECKPOINT,
        "Allowed checkpoint stall",
        "Share of training time a synchronous save may block (0.02 = 2 %).",
        1e-4,
        1,
    )
    checkpoint_layout: str = _in(
        "mlperf_mixed_adam",
        "choice",
        CHECKPOINT,
        "Checkpoint layout",
        "Bytes per parameter saved: mlperf_mixed_adam 2+12, fp32_adam 4+8, weights_bf16 2, weights_fp32 4.",
        choices=tuple(CHECKPOINT_LAYOUTS),
    )
    checkpoint_keep: int = _in(2, "int", CHECKPOINT, "Checkpoints kept", "Retained on storage (capacity).", 1, 1000)
    drain_target: float = _in(
        0.5,
        "fraction",
        CHECKPOINT,
        "Async drain target",
        "Share of the interval an asynchronous save has to become durable (0.5: the lag stays under half an "
        "interval and the drain has as much headroom again; calc.checkpoint.DRAIN_SHARE).",
        0.01,
        1,
    )
    restore_target_s: Quantity = _in(
        "5 min",
        "seconds",
        CHECKPOINT,
        "Restart target [min]",
        "Most time every rank may take to load its shard after a restart; the budget is the smaller of this and "
        "the stall budget x the job MTBF (calc.checkpoint.RESTORE_TARGET_S: 5 min, docs/model.md section 10).",
        1,
        1e9,
        unit="min",
    )
    tensor_parallel: int = _in(1, "int", CHECKPOINT, "Tensor parallel", "Model-parallel ranks within a layer.", 1, 1024)
    pipeline_parallel: int = _in(1, "int", CHECKPOINT, "Pipeline parallel", "Pipeline stages.", 1, 1024)
    zero_stage: int | None = _in(
        None,
        "int",
        CHECKPOINT,
        "ZeRO stage",
        "0 DDP (one replica writes), 1 optimizer state sharded (Megatron distributed optimizer), 2 + gradients, "
        "3 + weights (FSDP): the state per GPU and who writes checkpoints; empty = the framework's default "
        "(data_parallel_framework: 3 for fsdp, 1 for nemo, else 0).",
        0,
        3,
        preset="data_parallel_framework's default",
    )
    # A dense decoder transformer by its architecture (calc.transformer); None = the model preset's.
    params: Quantity | None = _in(
        None, "count", GM, "Parameters", "Overrides the preset's count (else derived from the architecture).", 1, 1e14
    )
    layers: int | None = _in(None, "int", GM, "Layers", "Transformer layers (architecture).", 1, 1e4, preset="model")
    hidden: int | None = _in(None, "int", GM, "Hidden size", "Model width h (architecture).", 1, 1e6, preset="model")
    heads: int | None = _in(None, "int", GM, "Attention heads", "Query heads (architecture).", 1, 1e5, preset="model")
    kv_heads: int | None = _in(
        None,
        "int",
        GM,
        "KV heads",
        "Key/value heads (grouped-query attention; = heads for MHA).",
        1,
        1e5,
        preset="model",
    )
    ffn_hidden: int | None = _in(None, "int", GM, "FFN hidden size", "MLP inner width f.", 1, 1e7, preset="model")
    vocab: int | None = _in(None, "int", GM, "Vocabulary", "Tokens in the vocabulary.", 1, 1e8, preset="model")
    seq_len: int | None = _in(None, "int", GM, "Sequence length", "Tokens per example.", 1, 1e8, preset="model")
    mlp: str | None = _in(
        None,
        "choice",
        GM,
        "MLP",
        "gated: SwiGLU, 3 matrices; plain: GELU, 2.",
        choices=("gated", "plain"),
        preset="model",
    )
    experts: int | None = _in(
        None, "int", GM, "Experts", "Routed experts per MoE layer (0 = a dense model).", 0, 1e5, preset="model"
    )
    experts_active: int | None = _in(
        None, "int", GM, "Active experts", "Routed experts each token runs (top-k).", 0, 1e5, preset="model"
    )
    expert_ffn_hidden: int | None = _in(
        None, "int", GM, "Expert FFN size", "FFN inner width of one expert.", 0, 1e7, preset="model"
    )
    shared_experts: int | None = _in(
        None,
        "int",
        GM,
        "Shared experts",
        "Experts every token runs (DeepSeek's shared experts).",
        0,
        1e4,
        preset="model",
    )
    dense_layers: int | None = _in(
        None, "int", GM, "Dense layers", "First layers keeping the dense FFN in a MoE model.", 0, 1e4, preset="model"
    )
    expert_parallel: int = _in(
        1,
        "int",
        CLUSTER,
        "Expert parallel",
        "Ranks the routed experts are split over (carved from data parallel).",
        1,
        1e5,
    )
    context_parallel: int = _in(1, "int", CLUSTER, "Context parallel", "Ranks splitting each sequence.", 1, 1024)
    virtual_pipeline_stages: int = _in(
        1, "int", CLUSTER, "Interleaved chunks", "Model chunks per pipeline stage (interleaved 1F1B).", 1, 64
    )
    gradient_accumulation: int = _in(
        1, "int", CLUSTER, "Micro-batches per step", "Gradient accumulation (= pipeline micro-batches).", 1, 1e6
    )
    activation_checkpointing: str = _in(
        "auto",
        "choice",
        GM,
        "Activation checkpointing",
        "auto (the least recompute that fits), none, selective (attention core / element-wise ops recomputed) "
        "or full (the forward pass recomputed).",
        choices=("auto", "none", "selective", "full"),
    )
    data_parallel_overlap: float | None = _in(
        None,
        "fraction",
        CLUSTER,
        "Gradient traffic overlap",
        "Share of data-parallel traffic hidden by compute; empty = the framework's default (DDP buckets, FSDP "
        "prefetch; Megatron without --overlap-grad-reduce: none).",
        0,
        1,
    )
    data_parallel_framework: str | None = _in(
        None,
        "choice",
        CLUSTER,
        "Overlap as run by",
        "ddp (25 MiB buckets in the backward), fsdp (prefetched all-gathers; FSDP2 as torchtitan runs it, "
        "state sharded ZeRO-3 by default), megatron (no overlap, its default), megatron_overlap "
        "(--overlap-grad-reduce and --overlap-param-gather), nemo (Megatron-Core as NeMo and Megatron-Bridge "
        "run it: both overlaps and the distributed optimizer, ZeRO-1 by default); empty = fsdp for "
        "zero_stage 3, megatron with tensor/pipeline/context parallel, else ddp.",
        choices=("ddp", "fsdp", "megatron", "megatron_overlap", "nemo"),
    )
    gpu_link_bytes_per_s: Quantity | None = _in(
        None,
        "bytes_per_s",
        CLUSTER,
        "GPU link [GB/s]",
        "NVLink per GPU, one direction.",
        1,
        1e14,
        unit="GB/s",
        preset="gpu",
    )
    network_bytes_per_s_per_gpu: Quantity | None = _in(
        None,
        "bytes_per_s",
        CLUSTER,
        "Compute network per GPU [GB/s]",
        "Inter-node fabric per GPU, one direction.",
        1,
        1e14,
        unit="GB/s",
        preset="gpu",
    )
    mtbf_s: Quantity | None = _in(
        None,
        "seconds",
        CHECKPOINT,
        "Job MTBF [h]",
        "Mean time between failures of the whole job; empty = from the GPU count at the Llama 3 "
        "rate (419 interruptions in 54 days on 16,384 GPUs).",
        60,
        1e10,
        unit="h",
    )
    checkpoint_load_bytes_per_s: Quantity | None = _in(
        None,
        "bytes_per_s",
        CHECKPOINT,
        "Checkpoint load per rank [GB/s]",
        "Rate one rank reads and deserialises its shard on a restore; empty = 0.76 GB/s measured "
        "(calc.checkpoint.DEFAULT_LOAD_BYTES_PER_S; calc.measure.checkpoint_load times yours).",
        1e6,
        1e13,
        unit="GB/s",
    )
    checkpoint_milestone_interval_s: Quantity | None = _in(
        None,
        "seconds",
        CHECKPOINT,
        "Milestone checkpoint every [h]",
        "Saves kept for the whole run besides the recent ones; needs the run length. Empty = none.",
        60,
        1e10,
        unit="h",
    )
    run_length_s: Quantity | None = _in(
        None,
        "seconds",
        CHECKPOINT,
        "Training run length [d]",
        "Wall-clock length of the run: milestone checkpoints kept over it.",
        60,
        1e10,
        unit="d",
    )
    train_tokens: Quantity | None = _in(
        None,
        "count",
        CHECKPOINT,
        "Tokens to train",
        "Tokens the run trains on (e.g. 15T): sets the run length at the plan's rate, seq_len tokens an "
        "example (a transformer by its architecture). Give this or the run length, not both.",
        1,
        1e18,
    )
    transfer_link_bytes_per_s: Quantity = _in(
        "1.25 GB/s",
        "bytes_per_s",
        TRANSFER,
        "Copy link [MB/s]",
        "Network or disk path the dataset is copied over.",
        1,
        1e14,
        unit="MB/s",
    )
    compression_ratio: float = _in(
        1.0, "number", TRANSFER, "Compression ratio", "Original / compressed size; 1 = no compression.", 1, 1e5
    )
    compress_bytes_per_s_per_core: Quantity = _in(
        "105 MB/s",
        "bytes_per_s",
        TRANSFER,
        "Compression per core [MB/s]",
        "Input bytes one core compresses per second.",
        1,
        1e12,
        unit="MB/s",
    )
    compress_cores: int = _in(1, "int", TRANSFER, "Compression cores", "Threads of pigz/zstd -T.", 1, 4096)
    decompress_bytes_per_s: Quantity = _in(
        "390 MB/s",
        "bytes_per_s",
        TRANSFER,
        "Decompression [MB/s]",
        "Output bytes per second when unpacking.",
        1,
        1e13,
        unit="MB/s",
    )
    streamed: bool = _in(
        False, "bool", TRANSFER, "Streamed", "Stages run at once through a pipe; else one after another."
    )

    def __post_init__(self) -> None:
        """The inputs' checks, one by one in FIELDS' order, then ``_finish``. The ``__init__`` that
        ``_dict_init`` writes runs the same checks inline on its parameters instead (not this loop)."""
        given = self.__dict__  # every field, as given (a frozen dataclass without slots)
        for name, default, optional in _CHECKS:
            value = given[name]
            if value is default:
                continue  # a declared default, left as it is: valid and canonical (checked once, below FIELDS)
            checked = _checked(name, value, optional)
            if checked is not value:
                object.__setattr__(self, name, checked)
        self._finish()

    def _finish(self) -> None:
        """What ``__post_init__`` checks after the inputs one by one: a blank model's own figures, and
        where a measurement was taken."""
        if self.model == BLANK_MODEL:
            _check_blank(self)
        self._record_measurements()

    def _record_measurements(self) -> None:
        """A measurement records where it was taken, so that changing the GPU, batch, precision,
        resolution or CPU later re-projects it instead of carrying it over unchanged. Recorded
        once, when the measurement is given; later edits keep the record (an empty measured batch
        then means the automatic batch on the measured GPU)."""
        if (self.step_time_s is not None or self.samples_per_s_per_gpu is not None) and self.measured_gpu is None:
            object.__setattr__(self, "measured_gpu", self.gpu)
            if self.measured_precision is None:
                object.__setattr__(self, "measured_precision", self.precision)
            if self.measured_batch_size is None:
                object.__setattr__(self, "measured_batch_size", self.batch_size)
            if self.measured_train_resolution is None:
                object.__setattr__(self, "measured_train_resolution", self.train_resolution)
        if self.cpu_seconds_per_example is not None and self.measured_cpu is None:
            object.__setattr__(self, "measured_cpu", self.cpu or catalog.server_cpu(self.server))

    def replace(self, **changes: Any) -> Scenario:
        """A copy with ``changes`` applied (validated like the constructor).

        Editing a preset scenario without naming the result renames it ``<preset>-edited``,
        so links, report titles and file names never pass an edit off as the preset. A new
        measurement (``step_time_s``/``samples_per_s_per_gpu``) re-records where it was taken.
        """
        unknown = sorted(set(changes) - set(FIELDS))
        if unknown:
            raise InputError(unknown[0], unknown_input(unknown[0]))
        if {"step_time_s", "samples_per_s_per_gpu"} & set(changes):
            for k in MEASURED_STEP_INPUTS:
                changes.setdefault(k, None)
        if "cpu_seconds_per_example" in changes:
            changes.setdefault("measured_cpu", None)
        if changes.get("server") is not None and _differs(changes["server"], self.server):
            # A new server brings its own RAM, cores, links and GPUs per node unless they are given too.
            node = catalog.server(check_field("server", changes["server"]))
            for k in SERVER_INPUTS:
                changes.setdefault(k, node.gpus_per_node if k == "gpus_per_node" else None)
        edits = {k for k, v in changes.items() if k not in ("name", "description") and _differs(v, getattr(self, k))}
        if edits and "name" not in changes and self.name in catalog.scenario_files():
            changes["name"] = f"{self.name}-edited"
        return dataclasses.replace(self, **changes)

    def to_dict(self, *, changed_only: bool = False) -> dict[str, Any]:
        """Inputs as plain data (YAML/JSON-safe); ``changed_only`` drops defaults."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if changed_only and value == f.default:
                continue
            out[f.name] = value
        return out

    def to_yaml(self) -> str:
        """The scenario as a YAML preset (its name, then the inputs that differ from the defaults).

        The name is always written, so that even the defaults give a document ``from_yaml`` reads
        back (an empty document is refused as a likely mistake).
        """
        data = {"name": self.name} | self.to_dict(changed_only=True)
        return dump_yaml(data)

    def to_params(self, base: Scenario | None = None) -> dict[str, str]:
        """Inputs that differ from ``base`` (default: the defaults) as text, for URLs and ``--set``.

        ``from_params(to_params(base), base)`` gives back an equal scenario.
        """
        ref = base or Scenario()
        out = {k: to_text(getattr(self, k), k) for k in FIELDS if getattr(self, k) != getattr(ref, k)}
        if {"step_time_s", "samples_per_s_per_gpu"} & set(out):
            # A new measurement re-records where it was taken unless told: say it explicitly.
            out |= {k: to_text(getattr(self, k), k) for k in MEASURED_STEP_INPUTS}
        if "cpu_seconds_per_example" in out:
            out["measured_cpu"] = to_text(self.measured_cpu, "measured_cpu")
        return out

    def link_params(self, base: Scenario) -> dict[str, str]:
        """The shortest text inputs that reopen this scenario on ``base``: a link's query.

        Inputs equal to ``base``'s by value ("64 KiB" and 65536) are left out, except where
        ``from_params`` needs them: it applies the inputs together, so an input equal to the
        preset's can still be needed (a new GPU re-records where a measurement was taken, and a
        link without ``measured_gpu`` moved an uploaded scenario's measurement to the new GPU).
        """
        full = self.to_params(base)
        out = {k: v for k, v in full.items() if k == "name" or not same_input(k, getattr(self, k), getattr(base, k))}
        # A measurement in the link re-records where it was taken from what the link omits (a measured GPU
        # equal to the preset's, dropped, came back re-recorded with this scenario's precision): keep the record.
        if {"step_time_s", "samples_per_s_per_gpu"} & set(out):
            out |= {k: full[k] for k in MEASURED_STEP_INPUTS if k in full}
        if "cpu_seconds_per_example" in out and "measured_cpu" in full:
            out["measured_cpu"] = full["measured_cpu"]
        back = Scenario.from_params(out, base)
        missing = [k for k in FIELDS if not same_input(k, getattr(back, k), getattr(self, k))]
        return out | {k: full.get(k, to_text(getattr(self, k), k)) for k in missing}

    @classmethod
    def from_params(cls, params: Mapping[str, Any], base: Scenario | None = None, source: str = "") -> Scenario:
        """Read text inputs (URL query, CLI ``--set``, widgets) on top of ``base``.

        Every value is read by its field's declaration: ``none``/empty clears an optional
        input, names match presets case-insensitively, a bare number is in the base unit.
        """
        prefix = f"{source}: " if source else ""
        changes: dict[str, Any] = {}
        for key, text in params.items():
            name = str(key)
            if name not in FIELDS:
                raise InputError(f"{prefix}{name}", unknown_input(name))
            changes[name] = from_text(name, text)
        ref = base or Scenario()
        # Fields not named keep base's values; name/description changes are taken as given.
        return ref.replace(**changes) if changes else ref

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "scenario") -> Scenario:
        """Build from a mapping (a YAML document); errors name the key."""
        if not isinstance(data, Mapping):
            raise PresetError(source, f"expected a mapping of inputs, got {type(data).__name__}")
        if not data:
            raise PresetError(source, "is empty; expected a mapping of inputs such as gpu: H100-SXM")
        unknown = sorted(str(k) for k in data if k not in FIELDS)
        if unknown:
            raise InputError(f"{source}: {unknown[0]}", unknown_input(unknown[0]))
        try:
            return cls(**{str(k): v for k, v in data.items()})
        except InputError as e:
            raise InputError(f"{source}: {e.field}", e.message) from None

    @classmethod
    def from_yaml(cls, text: str, source: str = "scenario.yaml", max_bytes: int = 100_000) -> Scenario:
        """Read a scenario YAML (``yaml.safe_load``, size-, depth- and alias-limited, validated)."""
        return cls.from_dict(read_yaml(text, source, max_bytes), source)


FIELDS: dict[str, FieldInfo] = {f.name: f.metadata["info"] for f in dataclasses.fields(Scenario)}
"""Every input and its declaration, in order (derived from the Scenario fields)."""

_UNSET = object()
_VALID_DEFAULTS: dict[str, Any] = {}
"""Each input's declared default, where checking it gives it back unchanged (filled at the end of this
module, once ``check_field`` exists): a scenario skips the check of every input left at it, which was
most of a Scenario's construction time (about 150 inputs, 0.5 us each)."""

_CHECKS: list[tuple[str, Any, bool]] = []
"""(input, its valid default or ``_UNSET``, optional) for each input, in FIELDS' order (filled with
``_VALID_DEFAULTS``): what a Scenario's construction reads, without two dict look-ups an input."""

BLANK_MODEL = "blank"
"""``model="blank"``: no preset; the model is the figures given (BLANK_MODEL_INPUTS)."""

MEASURED_STEP_INPUTS = ("measured_gpu", "measured_batch_size", "measured_precision", "measured_train_resolution")
"""Where a measured step time or throughput was taken: recorded with it, re-projected from."""

BLANK_MODEL_INPUTS = (
    ("params",),
    ("forward_flops_per_example",),
    ("activation_bytes_per_example",),
    ("tensors",),
    ("cpu_seconds_per_example", "decoder"),
    ("example_bytes", "dataset_bytes"),
    ("dataset_examples", "dataset_bytes"),
)
"""What a blank model needs, each a figure or its alternative: the example size can come from
the dataset's size and examples, the examples from its size and the example size."""

SERVER_INPUTS = (
    "host_ram_bytes",
    "cpu_cores_per_node",
    "cpu",
    "node_network_bytes_per_s",
    "network_bytes_per_s_per_gpu",
    "gpus_per_node",
)
"""Inputs a server preset gives: ``replace(server=...)`` takes them from the new server unless
they are given too (the plan then says which it took)."""


def _check_blank(sc: Scenario) -> None:
    """A blank model names every figure it still needs, in one message."""
    missing = [
        " or ".join(alts)
        for alts in BLANK_MODEL_INPUTS
        if all(getattr(sc, k) is None for k in alts)
        or (alts[0] == "example_bytes" and sc.example_bytes is None and sc.dataset_examples is None)
    ]
    if missing:
        raise InputError(
            "model",
            f"blank (no preset) needs the model's own figures; missing: {', '.join(missing)} "
            "(example_bytes may come from dataset_bytes / dataset_examples)",
        )


MAX_YAML_DEPTH = 16
"""Deepest nesting of collections a scenario YAML may have (a scenario is one flat mapping);
deeper, PyYAML's recursive composer would overflow the stack ("[" x 1,000)."""

MAX_YAML_VALUES = 10_000
"""Most values (scalars and collections) a scenario YAML may hold once its aliases are expanded
(a scenario has about 150); more is an alias bomb (264 bytes can expand to millions)."""

_OPENS = (
    yaml.BlockMappingStartToken,
    yaml.BlockSequenceStartToken,
    yaml.FlowMappingStartToken,
    yaml.FlowSequenceStartToken,
)
_CLOSES = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def read_yaml(text: object, source: str, max_bytes: int) -> Any:
    """``catalog.parse_yaml`` after the checks that keep odd documents from escaping as other
    errors: text only, valid Unicode, the size limit, nesting depth, expanded size.

    Raises
    ------
    PresetError
        Naming ``source`` and what is accepted.
    """
    if not isinstance(text, str):
        raise PresetError(source, f"expected YAML text, got {type(text).__name__}")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise PresetError(
            source, f"not valid Unicode: a lone surrogate {text[e.start]!r} at character {e.start + 1}"
        ) from None
    if size > max_bytes:
        raise PresetError(source, f"larger than {max_bytes:,} bytes")
    try:
        depth = 0
        for token in yaml.scan(text, Loader=yaml.SafeLoader):  # the scanner is iterative: no recursion
            if isinstance(token, _OPENS):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    line = token.start_mark.line + 1
                    raise PresetError(
                        source,
                        f"nested more than {MAX_YAML_DEPTH} levels deep at line {line}; "
                        "accepted: a mapping of inputs such as gpu: H100-SXM",
                    )
            elif isinstance(token, _CLOSES):
                depth -= 1
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        root = None  # malformed: parse_yaml below says where
    if root is not None and _expanded_values(root, MAX_YAML_VALUES) > MAX_YAML_VALUES:
        raise PresetError(
            source,
            f"its aliases (*name) expand to more than {MAX_YAML_VALUES:,} values; "
            "accepted: a mapping of inputs, each a plain value",
        )
    return catalog.parse_yaml(text, source, max_bytes)


def _expanded_values(root: yaml.Node, limit: int) -> int:
    """Values in a composed YAML document with every alias expanded, counted up to ``limit``.

    Aliases share nodes, so each node is counted once and its total reused (no expansion); a
    node that contains itself (``&a [*a]``) counts as over the limit.
    """
    total: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        children: list[yaml.Node] = (
            [x for pair in node.value for x in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
            if isinstance(node, yaml.SequenceNode)
            else []
        )
        if closing:
            total[id(node)] = min(1 + sum(total[id(c)] for c in children), limit + 1)
            open_.discard(id(node))
            continue
        if id(node) in total:
            continue
        if id(node) in open_:
            return limit + 1  # an alias inside its own anchor: infinitely deep
        open_.add(id(node))
        stack.append((node, True))
        stack += [(c, False) for c in children if id(c) not in total]
    return total[id(root)]


class _Dumper(yaml.SafeDumper):
    """``yaml.SafeDumper`` that writes text holding a YAML line break other than \\n (U+0085,
    U+2028, U+2029) double-quoted, where it is escaped: PyYAML writes it raw in single quotes,
    and the reader folds it into a space (a description would change on the way back)."""


def _text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = '"' if any(c in text for c in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _text)


def dump_yaml(data: Any) -> str:
    """``data`` as YAML text that ``read_yaml`` gives back exactly (keys in order, Unicode kept)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def closest(name: str, table: Mapping[str, Any]) -> str:
    """`` (did you mean a, b, c?)``: the 3 closest names of ``table`` (containing ``name``, then by
    spelling), or nothing."""
    close = catalog.close_names(str(name), [str(k) for k in table], 3, 0.5)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def unknown_input(name: str) -> str:
    """The message for an input name that is not one: the 3 closest names, not all of them."""
    hint = closest(name, FIELDS) or f" (closest: {', '.join(catalog.close_names(str(name), list(FIELDS), 3, 0.0))})"
    return f"unknown input{hint}; accepted: one of the {len(FIELDS)} inputs (calc.FIELDS; python -m calc list fields)"


def _accepted(name: str, info: FieldInfo | None = None) -> str:
    info = info or FIELDS[name]
    if info.kind == "choice":
        return "accepted: " + ", ".join(info.choices or _choices(name))
    if info.kind == "bool":
        return "accepted: true or false"
    if info.kind in ("int", "number", "fraction"):
        whole = "a whole number" if info.kind == "int" else "a number"
        return f"accepted: {whole} from {info.minimum:g} to {info.maximum:g}"
    if info.kind == "text":
        return "accepted: text"
    return f"accepted: a quantity with a unit ({info.unit or 'base unit'})"


def _choices(name: str) -> tuple[str, ...]:
    info = FIELDS[name]
    if info.choices:
        return info.choices
    if name in ("gpu", "measured_gpu"):
        return tuple(catalog.gpus())
    if name == "server":
        return tuple(catalog.servers())
    if name in ("cpu", "measured_cpu"):
        return tuple(catalog.cpus())
    if name == "decoder":
        return tuple(catalog.decoders())
    if name == "model":
        return (*catalog.models(), BLANK_MODEL)
    if name == "storage":
        return tuple(options())
    return ()


def choices(name: str) -> tuple[str, ...]:
    """The accepted names of a choice input (presets for gpu, model and storage)."""
    return _choices(name)


QUANTITY_KINDS = ("bytes", "bytes_per_s", "seconds", "flops", "flops_per_s", "count", "count_per_s")
"""Field kinds whose text carries a unit ("64 KiB"): equal inputs by value, whatever the spelling."""


def same_input(name: str, a: Any, b: Any) -> bool:
    """Equal as inputs: "1457" and 1457 are; "64 KiB" and 65536 are; None only equals None."""
    if a is None or b is None:
        return a is b
    kind = FIELDS[name].kind
    if kind in QUANTITY_KINDS:
        return bool(parse(a, kind) == parse(b, kind))  # type: ignore[arg-type]
    return bool(a == b)


def to_text(value: Any, name: str | None = None) -> str:
    """One input value as text: ``none`` for not given, ``true``/``false``, numbers compact.

    Text of a text input (``name``) that would read back as something else is quoted: an
    off-word (``"default"`` would clear the input), spaces at either end (they are stripped), or
    text already in double quotes. ``from_text`` takes the quotes off.
    """
    if value is None:
        # "none" is a choice of some inputs (decoder=none: raw pixels); "default" clears them.
        return "default" if name in FIELDS and "none" in _choices(name) else "none"
    if name in FIELDS and FIELDS[name].kind == "text" and isinstance(value, str):
        quoted = len(value) >= 2 and value[0] == value[-1] == '"'
        if quoted or value != value.strip() or value.strip().lower() in OFF_WORDS:
            return f'"{value}"'
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


UNIT_KINDS = ("bytes", "bytes_per_s", "seconds", "flops", "flops_per_s")
"""Input kinds a reader reads with their unit (``input_text``)."""


def input_text(name: str, value: Any) -> str:
    """An input as a reader reads it, by the one formatter (calc.units.fmt): quantities with their
    unit (``1.8e-06`` s is "1.8 µs", 65,536 B is "65.54 kB"), the rest as ``to_text`` writes it
    (issue 39: the report's what-if table showed ``1.8000000000000001e-06``)."""
    kind = FIELDS[name].kind
    if isinstance(value, (int, float)) and not isinstance(value, bool) and kind in UNIT_KINDS:
        return fmt(float(value), cast(Kind, kind))
    return to_text(value)


def from_text(name: str, text: Any) -> Any:
    """Read one input from text by its declaration (no unit conversion: that is ``check_field``'s)."""
    if name not in FIELDS:
        raise InputError(name, unknown_input(name))
    info = FIELDS[name]
    if text is None:
        value = ""
    elif isinstance(text, str):
        value = text.strip()
    else:
        return text  # already a value (a YAML number, a bool)
    if info.kind == "text" and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]  # quoted by to_text: exactly the text inside
    if info.kind == "choice" and value.lower() in (c.lower() for c in _choices(name)):
        return value  # a choice spelled like an off-word (batch_rounding=none, decoder=none) is the choice
    if value.lower() in OFF_WORDS and (info.kind != "text" or info.optional):
        if info.optional:
            return None
        raise InputError(name, f"is required and cannot be {text!r}; {_accepted(name)}")
    return _text_value(name, value, info)


def _text_value(name: str, value: str, info: FieldInfo) -> Any:
    """Text that names a value by the input's kind: a switch, a count, a bare number in base units;
    other text (a quantity with its unit, a name) as it is."""
    if info.kind == "bool":
        return check_field(name, value)
    if info.kind == "fraction":
        return percent(name, value)
    if info.kind in ("int", "number"):
        return parse(value, "count", name)
    if info.kind not in ("text", "choice") and _BARE.match(value):
        return parse(value, info.kind, name)  # type: ignore[arg-type]  # a bare number: base units, as a number
    return value


def check_field(name: str, value: object) -> Any:
    """Validate one Scenario input; return it normalised (``check_value`` by its declaration).

    A text or int input is checked once per process (``_CHECKED``): the checks are pure functions of
    the value, and a Scenario made from scratch spent half its time re-checking the same ones. Not
    kept: preset names looked up in a catalog a user can extend (a storage option's YAML file), floats
    (0.0 and -0.0 are one key) and errors (raised again each time).
    """
    info = FIELDS[name]
    t = type(value)
    if (t is str or t is int) and (info.kind != "choice" or info.choices):
        key = (name, t, value)
        hit = _CHECKED.get(key, _UNSET)
        if hit is _UNSET:
            hit = check_value(name, value, info)
            if len(_CHECKED) >= _CHECKED_MAX:
                _CHECKED.clear()
            _CHECKED[key] = hit
        return hit
    if t is str and name in _CATALOG_TABLES:
        # A GPU or model name: a look-up in a catalog read once per process (catalog.gpus, catalog.models),
        # kept beside the table it was found in; a reloaded table is looked up again (~0.6-1 us a name).
        table = getattr(catalog, _CATALOG_TABLES[name])()  # read at call time, as _check_choice reads it
        found = _LOOKED_UP.get((name, value))
        if found is not None and found[0] is table:
            return found[1]
        got = check_value(name, value, info)
        if len(_LOOKED_UP) >= _CHECKED_MAX:
            _LOOKED_UP.clear()
        _LOOKED_UP[(name, value)] = (table, got)
        return got
    return check_value(name, value, info)


_CHECKED: dict[tuple[str, type, object], Any] = {}
"""(field, type, value) -> the checked value, for ``check_field``."""
_CHECKED_MAX = 4096

_CATALOG_TABLES = {"gpu": "gpus", "measured_gpu": "gpus", "model": "models"}
"""Choice fields whose names ``_check_choice`` finds in a catalog table read once per process."""
_LOOKED_UP: dict[tuple[str, object], tuple[Mapping[str, Any], Any]] = {}
"""(field, name) -> (the table it was looked up in, the canonical name), for ``check_field``."""


def check_value(name: str, value: object, info: FieldInfo) -> Any:
    """Validate one input declared by ``info`` (a Scenario field, or another module's input such
    as a cluster's job count); return it normalised.

    Ints come back as ``int``, bools as ``bool``, NumPy scalars as Python numbers, preset
    names in their canonical spelling (matched case-insensitively).

    Raises
    ------
    InputError
        Naming the field and what is accepted.
    """
    if isinstance(value, str):
        _unicode(name, value)
    if name == "checkpoint_interval_s" and isinstance(value, str) and value.strip().lower() == "optimal":
        return "optimal"  # the Young-Daly interval, computed by the plan
    if info.kind == "text":
        return _check_text(name, value)
    if info.kind == "choice":
        return _check_choice(name, value, info)
    if info.kind == "bool":
        return _check_bool(name, value)
    if info.kind in ("int", "fraction", "number"):
        number = _number(name, value, "count", info)
        if info.kind == "int" and number != math.floor(number):
            raise InputError(name, f"expected a whole number, got {_short(value)}; {_accepted(name, info)}")
        _bounds(name, number, info)
        return int(number) if info.kind == "int" else float(number)
    return _check_quantity(name, value, info)


def _check_text(name: str, value: object) -> str:
    """Text; the inputs that are read as something (tensors, an image size) must read."""
    if not isinstance(value, str):
        raise InputError(name, f"expected text, got {_short(value)}")
    if name == "tensors":
        parse_tensors(value, name)
    if name == "image_pixels":
        image_size(value, name)
    return value


def _check_choice(name: str, value: object, info: FieldInfo) -> str:
    """A choice or a preset name, in its canonical spelling (matched case-insensitively)."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(name, f"expected a name, got {value!r}; {_accepted(name, info)}")
    accepted = info.choices or _choices(name)
    if info.choices:
        folded = {c.lower(): c for c in accepted} | CHOICE_ALIASES.get(name, {})
        if value.strip().lower() not in folded:
            raise InputError(name, f"unknown {value!r}{closest(value, folded)}; {_accepted(name, info)}")
        return folded[value.strip().lower()]
    try:
        if name == "storage":
            return option(value.strip()).name
        if name == "server":
            return catalog.server(value.strip()).name
        if name in ("cpu", "measured_cpu"):
            return catalog.cpu(value.strip(), name).name
        if name == "decoder":
            return catalog.decoder(value.strip(), name).name
        if name == "model" and value.strip().lower() == BLANK_MODEL:
            return BLANK_MODEL
        table: Mapping[str, Any] = catalog.models() if name == "model" else catalog.gpus()
        return catalog.lookup(value.strip(), table, "model" if name == "model" else "GPU", name)
    except PresetError as e:
        # The file's own field (nas.yaml: lab-nas: sources) is named, not only the input's.
        raise InputError(name, e.message if e.field in (name, "storage") else f"{e.field}: {e.message}") from None


def _check_bool(name: str, value: object) -> bool:
    """A switch: a bool, 0 or 1, or one of true/false, yes/no, on/off, 1/0 in words."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        return value.strip().lower() in ("true", "1", "yes", "on")
    if isinstance(value, numbers.Real) and value in (0, 1):
        return bool(value)
    raise InputError(name, f"expected true or false, got {value!r}")


def _check_quantity(name: str, value: object, info: FieldInfo) -> Any:
    """A quantity with a unit (or a bare number in base units) within its bounds; the bound's
    message hints at a bare number typed in the label's unit."""
    number = _number(name, value, info.kind, info)  # type: ignore[arg-type]  # a quantity kind, the only ones left
    try:
        _bounds(name, number, info)
    except InputError as e:
        hint = bare_number_hint(name, number) if _BARE.match(str(value).strip()) else ""
        raise InputError(name, f"{e.message}; {hint}" if hint else e.message) from None
    if isinstance(value, str) and _BARE.match(value.strip()):
        return number  # "65536" is the number 65536 in base units: one spelling, one value
    kind_of_value: type = type(value)
    if isinstance(value, numbers.Real) and kind_of_value not in (int, float):
        return float(value)  # NumPy scalars (np.float64 too) become plain floats (YAML, JSON, equality)
    return value


def bare_number_hint(name: str, value: object) -> str:
    """A hint for a bare number smaller than one of the unit its label shows (``30`` for
    "Checkpoint interval [min]" is 30 s; ``100`` for "[Gb/s]" is 100 B/s), else ``""``.

    A bare number is always the base unit (one rule for YAML, links and the page); the hint
    catches the number typed in the label's unit instead.
    """
    info = FIELDS[name]
    if (
        not info.unit
        or info.kind not in ("bytes", "bytes_per_s", "seconds", "flops", "flops_per_s")
        or isinstance(value, bool)
        or not isinstance(value, numbers.Real)
    ):
        return ""
    kind: Kind = info.kind
    one = parse(f"1 {info.unit}", kind, name)
    if not 0 < float(value) < one:
        return ""
    return (
        f"{name} = {float(value):g} read as {fmt(float(value), kind)} (a bare number is the base unit); "
        f"write '{float(value):g} {info.unit}' if you meant {info.unit}"
    )


def _differs(new: object, old: object) -> bool:
    """``new != old`` for any value given (a NumPy array compares element-wise: it differs, and
    the constructor then refuses it naming the field)."""
    try:
        return bool(new != old)
    except (ValueError, TypeError):
        return True


def _unicode(name: str, text: str) -> None:
    """Refuse text that is not valid Unicode (a lone surrogate such as ``"\\ud800"``): it could
    not be printed, written to a report or put in a link."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(
            name,
            f"contains a lone surrogate {text[e.start]!r} at character {e.start + 1}; accepted: valid Unicode text",
        ) from None


def _short(value: object) -> str:
    """``repr(value)`` for a message, cut to 80 characters; a huge integer by its digit count
    (Python refuses to print integers over 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1:,} digits"
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:80]}..."


def percent(name: str, value: str) -> float:
    """A fraction as text: ``0.9``, or a percentage, ``90 %`` or ``150%`` (issue 39: "150%" was
    refused as an unknown unit); the field's range is checked after."""
    text = value.strip()
    if text.endswith("%"):
        return parse(text[:-1].strip(), "count", name) / 100
    return parse(text, "count", name)


def _number(name: str, value: object, kind: Kind, info: FieldInfo | None = None) -> float:
    """``parse`` for one input, turning Python's own errors on odd numbers (an integer too large
    for a float, a Fraction that overflows) into an InputError naming the field."""
    try:
        if info is not None and info.kind == "fraction" and isinstance(value, str) and value.strip().endswith("%"):
            return percent(name, value)
        return parse(value, kind, name)
    except InputError as e:
        if "accepted" in e.message:
            raise
        raise type(e)(e.field, f"{e.message}; {_accepted(name, info)}") from None
    except (ArithmeticError, ValueError, TypeError):
        raise InputError(name, f"{_short(value)} is not a finite number in range; {_accepted(name, info)}") from None


ZERO_OR_AT_LEAST = {"dataset_examples": 1.0, "cpu_seconds_per_example": 1e-9}
"""Inputs that accept 0 (none) or at least this much: a dataset of 1e-300 examples, or a CPU
cost of 1e-300 s per example, is a typo, and its reciprocal overflows (issue 32)."""


def _bounds(name: str, number: float, info: FieldInfo) -> None:
    floor = ZERO_OR_AT_LEAST.get(name)
    if floor is not None and 0 < number < floor:
        raise InputError(name, f"{number:g} is out of range; accepted: 0, or {floor:g} to {info.maximum or math.inf:g}")
    lo, hi = info.minimum, info.maximum
    if info.kind in ("int", "number", "fraction"):
        # The one numeric range check (calc.units.check_range), shared with the formulas' guards.
        least, most = -math.inf if lo is None else lo, math.inf if hi is None else hi
        check_range(name, number, least, most, f"{least:g} to {most:g}")
        return
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        kind: Kind = info.kind  # type: ignore[assignment]
        binary = kind == "bytes" and info.unit.endswith("iB")
        low, high = fmt(lo or 0.0, kind, binary=binary), fmt(hi or 0.0, kind, binary=binary)
        raise InputError(name, f"{fmt(number, kind, binary=binary)} is out of range; accepted: {low} to {high}")


def scenarios() -> list[str]:
    """Names of the preset scenarios (presets/scenarios/*.yaml)."""
    return list(catalog.scenario_files())


def scenario(preset: str, /, **overrides: Any) -> Scenario:
    """A preset scenario by name (case-insensitive), with ``overrides`` applied."""
    base = _preset(catalog.lookup(preset, catalog.scenario_files(), "scenario", "scenario"))
    return base.replace(**overrides) if overrides else base


_PRESETS: dict[str, Scenario] = {}


def _preset(key: str) -> Scenario:
    """A preset read once per process (presets are files of the installed package)."""
    if key not in _PRESETS:
        path = catalog.scenario_files()[key]
        _PRESETS[key] = Scenario.from_dict(catalog.load_yaml(path) or {}, path.name)
    return _PRESETS[key]


def ask(name: str) -> str:
    """How a sentence asks for input ``name``: by the label the page shows, its group, and the
    name a notebook passes (``set "Node link to storage" (Cluster inputs: node_network_bytes_per_s)``)."""
    f = FIELDS[name]
    return f'set "{f.title}" ({f.group[:1].upper()}{f.group[1:]} inputs: {name})'


_VALID_DEFAULTS.update(
    {
        f.name: f.default
        for f in dataclasses.fields(Scenario)
        if f.default is not None and check_field(f.name, f.default) is f.default
    }
)
_CHECKS.extend((name, _VALID_DEFAULTS.get(name, _UNSET), info.optional) for name, info in FIELDS.items())


def _checked(name: str, value: object, optional: bool) -> Any:
    """One input that is not at its valid default, as ``Scenario.__post_init__`` checks it."""
    if value is None:
        if not optional:
            raise InputError(name, f"is required; {_accepted(name)}")
        return None
    return check_field(name, value)


def _dict_init(cls: type) -> None:
    """Give a frozen dataclass an ``__init__`` that fills the instance's ``__dict__`` directly, as
    ``dataclass`` would by ``object.__setattr__`` per field (the frozen way): the same parameters,
    defaults and order. A Scenario has ~130 fields; the frozen setattr cost ~0.1 us each, half of a
    Scenario's construction (issue 41: ~9 us of a 0.28 ms plan). Each input is checked there as
    ``__post_init__`` checks it (``_CHECKS``: skipped at its valid default, else ``_checked``), in the
    same order, on the parameter itself: a loop over the ~130 inputs cost ~3 us of a Scenario. Then
    ``_finish``, as ``__post_init__`` ends."""
    fields = dataclasses.fields(cls)
    assert all(
        f.init and not f.kw_only and f.default is not dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        for f in fields
    ), "only plain defaulted fields"
    assert [f.name for f in fields] == [name for name, _, _ in _CHECKS], "checks in the fields' order"
    namespace: dict[str, Any] = {f"_default_{f.name}": f.default for f in fields}
    namespace |= {f"_valid_{name}": default for name, default, _ in _CHECKS}
    namespace["_checked"] = _checked
    params = ", ".join(f"{f.name}=_default_{f.name}" for f in fields)
    checks = "".join(
        f"    if {name} is not _valid_{name}:\n        {name} = _checked({name!r}, {name}, {optional})\n"
        for name, _, optional in _CHECKS
    )
    body = "".join(f"    d[{f.name!r}] = {f.name}\n" for f in fields)
    exec(f"def __init__(self, {params}):\n{checks}    d = self.__dict__\n{body}    self._finish()\n", namespace)
    init = namespace["__init__"]
    init.__qualname__, init.__module__ = f"{cls.__qualname__}.__init__", cls.__module__
    init.__annotations__ = vars(cls)["__init__"].__annotations__  # help() and signatures as dataclass wrote them
    cls.__init__ = init  # type: ignore[misc]


_dict_init(Scenario)
