"""Host side: the CPU cost of an example, the node's cores, worker RAM, host-to-GPU copies
(docs/model.md section 6).

    batch_bytes = n x sum over tensors (elements x dtype_bytes)      (as the loader emits it)
    worker_ram  = batch_bytes x batches_in_flight                     (num_workers x prefetch_factor)
    pinned      = the same again when pin_memory is on                (upper bound)
    decode      = fixed + per_MP x decoded MP + per_MB x stored MB    (decoded MP: DCT-scaled where
                                                                       the decoder scales and the
                                                                       short side stays >= the output)
    augment     = per crop MP x decoded MP x 0.54 + per output MP x output MP
    worker CPU  = (decode + augment + collate and send per byte x tensor bytes) / per-core speed
    main CPU    = receive per byte x tensor bytes + receive per batch / n      (the main process)
    cpu_cores   = samples/s x worker CPU s per example
    copy_time   = batch_bytes / host_link_bandwidth

References
----------
"Efficient PyTorch - Part 1" (Towards Data Science): the Cityscapes and 3D worker-RAM arithmetic.
PyTorch DataLoader: ``prefetch_factor`` batches per worker, default 2; workers call
``torch.set_num_threads(1)`` (torch/utils/data/_utils/worker.py); ``default_collate`` in a worker
writes the batch into shared memory, which the main process maps (torch.multiprocessing).
libjpeg's ``scale_num/scale_denom`` (1/2, 1/4, 1/8 in the inverse DCT) and Pillow's
``Image.draft``: the smallest such scale that keeps the image at least the size asked for.
torchvision ``RandomResizedCrop(scale=(0.08, 1.0))``: a crop of 8-100 % of the area, 54 % on average.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np

from calc._types import Numeric, ceil, clip, divide, flag, floats, floor, maximum, minimum, where
from calc.errors import InputError
from calc.formula import formula

DTYPE_BYTES = {
    "float64": 8,
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8": 1,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint16": 2,
    "uint8": 1,
    "bool": 1,
}
"""Bytes per element of the dtypes a loader may emit."""

_TENSOR = re.compile(r"^(?:([A-Za-z_][\w]*)=)?(\d+(?:x\d+)*):([a-z0-9]+)$")


def parse_tensors(spec: str, field: str = "tensors") -> list[tuple[str, tuple[int, ...], str]]:
    """Parse ``"image=3x224x224:float32,label=1:int64"`` into (name, shape, dtype) triples."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(field, "expected tensors as name=SHAPE:dtype, e.g. image=3x224x224:uint8,label=1:int64")
    out = []
    for i, part in enumerate(spec.replace(" ", "").split(",")):
        m = _TENSOR.match(part)
        if not m:
            raise InputError(
                field,
                f"cannot read {part!r}; write name=SHAPE:dtype with SHAPE like 3x224x224 "
                f"(e.g. image=3x224x224:uint8,label=1:int64)",
            )
        name, shape, dtype = m.group(1) or f"t{i}", m.group(2), m.group(3)
        if dtype not in DTYPE_BYTES:
            raise InputError(field, f"unknown dtype {dtype!r}; accepted: {', '.join(DTYPE_BYTES)}")
        if any(len(d) > 9 for d in shape.split("x")):
            raise InputError(field, f"a dimension of {part!r} is over 999,999,999; accepted: positive whole numbers")
        dims = tuple(int(d) for d in shape.split("x"))
        if any(d <= 0 for d in dims):
            raise InputError(field, f"every dimension of {part!r} must be positive")
        if math.prod(dims) * DTYPE_BYTES[dtype] > 1e15:
            raise InputError(field, f"{part!r} is over 1 PB per example; accepted: shapes of real examples")
        out.append((name, dims, dtype))
    return out


def image_size(text: object, field: str = "image_pixels") -> tuple[int, int]:
    """``"500x375"`` as (width, height) in pixels; an error names ``field`` and the form accepted."""
    if not isinstance(text, str):
        raise InputError(field, f"expected width x height in pixels such as 500x375, got {text!r}")
    parts = text.lower().replace(" ", "").split("x")
    if len(parts) != 2 or not all(p.isdigit() and len(p) <= 6 for p in parts):
        raise InputError(field, f"cannot read {text!r}; accepted: width x height in pixels such as 500x375")
    w, h = int(parts[0]), int(parts[1])
    if w < 1 or h < 1:
        raise InputError(
            field, f"{text!r} has a zero side; accepted: width x height of at least 1 pixel each, such as 500x375"
        )
    return w, h


def tensors_at_resolution(spec: str, reference_px: float, train_px: float) -> str:
    """``spec`` with every image dimension equal to ``reference_px`` set to ``train_px``
    (``image=3x224x224`` trained at 160 px is ``image=3x160x160``); unchanged when either is NaN."""
    if not (math.isfinite(reference_px) and math.isfinite(train_px)) or reference_px == train_px:
        return spec
    ref, new = int(reference_px), int(train_px)
    parts = []
    for name, shape, dtype in parse_tensors(spec):
        dims = [new if d == ref and len(shape) >= 2 else d for d in shape]
        parts.append(f"{name}={'x'.join(str(d) for d in dims)}:{dtype}")
    return ",".join(parts)


def image_dtype(spec: str) -> str:
    """The dtype of the first tensor of two or more dimensions (the image), ``""`` when none."""
    return next((dtype for _, shape, dtype in parse_tensors(spec) if len(shape) >= 2), "")


def tensor_bytes(spec: str, field: str = "tensors") -> float:
    """Bytes of one example as the loader emits it [bytes] (kept per text: a plan parsed the default each time)."""
    return _tensor_bytes(spec, field) if isinstance(spec, str) else _count_bytes(spec, field)


@functools.lru_cache(maxsize=256)
def _tensor_bytes(spec: str, field: str) -> float:
    return _count_bytes(spec, field)


def _count_bytes(spec: str, field: str) -> float:
    return float(sum(math.prod(shape) * DTYPE_BYTES[dtype] for _, shape, dtype in parse_tensors(spec, field)))


@formula("batch_bytes", "{batch_size} x {example_tensor_bytes}")
def batch_bytes(batch_size: Numeric, example_tensor_bytes: Numeric) -> Numeric:
    """One batch in host memory [bytes]."""
    return floats(batch_size) * example_tensor_bytes


def batches_in_flight(num_workers: Numeric, prefetch_factor: Numeric) -> Numeric:
    """Batches the DataLoader holds at once: workers x prefetch, or 1 with no workers."""
    w = floats(num_workers)
    return where(w > 0, w * prefetch_factor, 1.0)


@formula("worker_ram_bytes", "{batch_bytes} x {batches_in_flight} batches x (1 + {pin_memory} pinned)")
def worker_ram_bytes(batch_bytes: Numeric, batches_in_flight: Numeric, pin_memory: Numeric) -> Numeric:
    """Host RAM for batches in flight, per training process [bytes].

    With ``pin_memory`` a pinned copy of each batch may coexist with the worker's copy, so the
    figure doubles (an upper bound: the pinning thread frees the shared copy as it goes).
    """
    ram: Numeric = floats(batch_bytes) * batches_in_flight * (1 + floats(pin_memory))
    return ram


@formula("cpu_cores", "{samples_per_s} x {cpu_seconds_effective}")
def cpu_cores(samples_per_s: Numeric, cpu_seconds_per_example: Numeric) -> Numeric:
    """CPU cores busy decoding and augmenting [cores]."""
    return floats(samples_per_s) * cpu_seconds_per_example


@formula("h2d_copy_time_s", "{batch_bytes} / {host_link_bytes_per_s}")
def copy_time_s(batch_bytes: Numeric, host_link_bytes_per_s: Numeric) -> Numeric:
    """Host-to-GPU copy time of one batch [s]; it hides behind compute only when overlapped."""
    return floats(batch_bytes) / host_link_bytes_per_s


@formula("host_ram_per_node_bytes", "{worker_ram_bytes} x {gpus_on_node} GPUs")
def host_ram_per_node_bytes(worker_ram_bytes: Numeric, gpus_on_node: Numeric) -> Numeric:
    """Loader RAM on one node: every GPU process's batches in flight [bytes]."""
    return floats(worker_ram_bytes) * gpus_on_node


@formula("cpu_cores_per_node", "{per_gpu_samples_per_s} x {gpus_on_node} x {cpu_seconds_effective}")
def cpu_cores_per_node(
    per_gpu_samples_per_s: Numeric, gpus_on_node: Numeric, cpu_seconds_per_example: Numeric
) -> Numeric:
    """CPU cores one node needs for its GPUs' decode and augmentation [cores]."""
    return floats(per_gpu_samples_per_s) * gpus_on_node * cpu_seconds_per_example


@formula("h2d_bytes_per_s_per_gpu", "{per_gpu_samples_per_s} x {example_tensor_bytes}")
def h2d_bytes_per_s(per_gpu_samples_per_s: Numeric, example_tensor_bytes: Numeric) -> Numeric:
    """Host-to-GPU bytes per second one GPU receives [bytes/s]."""
    return floats(per_gpu_samples_per_s) * example_tensor_bytes


@formula("h2d_share_of_step", "{h2d_copy_time_s} / {step_time_s}")
def copy_share(copy_time_s: Numeric, step_time_s: Numeric) -> Numeric:
    """Share of a step the batch copy would take if not overlapped [1]."""
    return floats(copy_time_s) / step_time_s


@formula("dataset_bytes", "{dataset_examples} x {example_bytes}")
def dataset_bytes(dataset_examples: Numeric, example_bytes: Numeric) -> Numeric:
    """Dataset size on storage [bytes]."""
    return floats(dataset_examples) * example_bytes


@formula("fits_in_ram", "{dataset_bytes} <= {host_ram_bytes} - {host_ram_per_node_bytes}")
def fits_in_ram(dataset_bytes: Numeric, host_ram_bytes: Numeric, loader_ram_bytes: Numeric) -> Numeric:
    """1 where the dataset fits in the RAM left beside the loader's batches (the page cache), else 0."""
    return flag(floats(dataset_bytes) <= floats(host_ram_bytes) - loader_ram_bytes)


# ------------------------------------------------------------------ the CPU cost of an example

DCT_DENOMINATORS = (8.0, 4.0, 2.0)
"""Scales libjpeg's inverse DCT offers below full size (1/8, 1/4, 1/2), largest reduction first."""

CROP_AREA_MEAN = 0.54
"""Mean share of the decoded image a training crop reads: torchvision RandomResizedCrop's
default scale (0.08, 1.0) is drawn uniformly, so (0.08 + 1) / 2 = 0.54 of the area."""

MEGA = 1e6
"""Pixels per megapixel and bytes per megabyte (decoders.yaml's coefficients are per MP and MB)."""


def dct_denominator(width_px: Numeric, height_px: Numeric, train_px: Numeric, dct_scaling: Numeric) -> Numeric:
    """The inverse-DCT scale denominator a decoder uses [1]: the largest of 8, 4, 2 whose image
    keeps its short side at least ``train_px`` (Pillow's ``Image.draft`` rule), else 1; always 1
    for a decoder that does not scale (``dct_scaling`` 0) or with no training side (NaN)."""
    short = minimum(floats(width_px), floats(height_px))
    denom: Numeric = floats(1.0)
    for d in reversed(DCT_DENOMINATORS):  # 2, 4, 8: a larger reduction that still fits wins
        denom = where(short / d >= floats(train_px), d, denom)
    return where(floats(dct_scaling) > 0, denom, 1.0)


@formula(
    "decode_seconds_per_example",
    "({decode_s_fixed} + {decode_s_per_megapixel} x {decoded_megapixels} + {decode_s_per_megapixel_if_above_knee} "
    "x {decoded_megapixels} x {above_knee} + {decode_s_per_stored_megapixel} x {image_megapixels} + "
    "{decode_s_per_megabyte} x {example_bytes} / 1e6) x (1 - {decode_gpu_share})",
)
def decode_seconds(
    fixed_s: Numeric,
    s_per_megapixel: Numeric,
    s_per_megapixel_above_knee: Numeric,
    knee_megapixels: Numeric,
    s_per_stored_megapixel: Numeric,
    s_per_megabyte: Numeric,
    image_pixels: Numeric,
    stored_bytes: Numeric,
    denominator: Numeric,
    gpu_share: Numeric = 0.0,
) -> Numeric:
    """CPU time to decode one stored image on one reference core [s].

    The entropy decoding reads every stored byte (``s_per_megabyte``) and walks every stored 8x8
    block (``s_per_stored_megapixel``); the inverse DCT, upsampling and colour conversion write
    every decoded pixel (``s_per_megapixel``), 1 / denominator^2 of the stored ones when the
    decoder scales in the DCT; a decoded image above ``knee_megapixels`` (its buffer outgrows the
    core's L2 cache) costs ``s_per_megapixel_above_knee`` more per decoded megapixel, all of them.
    ``gpu_share`` of the images decode on a GPU's hardware decoder and cost the CPU nothing.
    Raw pixels (decoder ``none``) have only the per-byte term (a copy).
    """
    stored_mp = floats(image_pixels) / MEGA
    decoded_mp = stored_mp / (floats(denominator) * denominator)
    above = where(decoded_mp > floats(knee_megapixels), 1.0, 0.0)
    t: Numeric = (
        floats(fixed_s)
        + (floats(s_per_megapixel) + floats(s_per_megapixel_above_knee) * above) * decoded_mp
        + floats(s_per_stored_megapixel) * stored_mp
        + floats(s_per_megabyte) * stored_bytes / MEGA
    ) * (1.0 - floats(gpu_share))
    return t


@formula(
    "augment_seconds_per_example",
    "{augment_s_fixed} + {augment_s_per_crop_megapixel} x 0.54 x {decoded_megapixels} "
    "+ {augment_s_per_output_megapixel} x {train_resolution} x {train_resolution} / 1e6",
)
def augment_seconds(
    fixed_s: Numeric,
    s_per_crop_megapixel: Numeric,
    s_per_output_megapixel: Numeric,
    decoded_pixels: Numeric,
    train_px: Numeric,
) -> Numeric:
    """Augmentation and to-tensor time of one example on one reference core [s].

    RandomResizedCrop reads the crop (``CROP_AREA_MEAN`` of the decoded image on average) and
    resamples it to train_px x train_px; the flip, ToTensor and Normalize touch every output pixel.
    """
    crop_mp = CROP_AREA_MEAN * floats(decoded_pixels) / MEGA
    out_mp = floats(train_px) * train_px / MEGA
    t: Numeric = floats(fixed_s) + floats(s_per_crop_megapixel) * crop_mp + floats(s_per_output_megapixel) * out_mp
    return t


WORKER_SECONDS = (
    "({decode_seconds_per_example} + {augment_seconds_per_example} + {batch_s_fixed} / {batch_size} "
    "+ {batch_s_per_megabyte} x {example_tensor_bytes} / 1e6) / {cpu_per_core_speed}"
)
"""The text of ``worker_seconds`` (the plan's ``cpu_cost_rule`` when the decoder model prices it)."""


def worker_seconds(
    decode_s: Numeric,
    augment_s: Numeric,
    batch_s_fixed: Numeric,
    batch_s_per_megabyte: Numeric,
    example_tensor_bytes: Numeric,
    batch_size: Numeric,
    per_core_speed: Numeric,
) -> Numeric:
    """CPU time one example costs a loader worker on one core of this CPU [s]: decode, augment,
    and its share of collating the batch and handing it to the main process (a cost per batch and
    per megabyte of tensors), at the CPU's speed relative to the reference core."""
    per_batch = floats(batch_s_fixed) / maximum(batch_size, 1.0)
    t: Numeric = (
        floats(decode_s) + augment_s + per_batch + floats(batch_s_per_megabyte) * example_tensor_bytes / MEGA
    ) / per_core_speed
    return t


@formula(
    "main_seconds_per_example",
    "({receive_s_fixed} / {batch_size} + {receive_s_per_megabyte_used} x {example_tensor_bytes} / 1e6) "
    "/ {cpu_per_core_speed}",
)
def main_seconds(
    s_fixed: Numeric,
    s_per_megabyte: Numeric,
    example_tensor_bytes: Numeric,
    batch_size: Numeric,
    per_core_speed: Numeric,
) -> Numeric:
    """CPU time the training process's main thread spends receiving one example from the workers
    [s]: unpickling each batch and mapping its shared memory (per batch), touching its bytes (per MB)."""
    per_batch = floats(s_fixed) / maximum(batch_size, 1.0)
    t: Numeric = (per_batch + floats(s_per_megabyte) * example_tensor_bytes / MEGA) / per_core_speed
    return t


@formula(
    "pin_seconds_per_example",
    "({pin_s_fixed} / {batch_size} + {pin_s_per_megabyte_used} x {example_tensor_bytes} / 1e6) x {pin_memory} "
    "/ {cpu_per_core_speed}",
)
def pin_seconds(
    s_fixed: Numeric,
    s_per_megabyte: Numeric,
    example_tensor_bytes: Numeric,
    batch_size: Numeric,
    pin_memory: Numeric,
    per_core_speed: Numeric,
) -> Numeric:
    """CPU time the pin-memory thread spends copying one example into page-locked memory [s]
    (0 without ``pin_memory``)."""
    per_batch = floats(s_fixed) / maximum(batch_size, 1.0)
    t: Numeric = (per_batch + floats(s_per_megabyte) * example_tensor_bytes / MEGA) * pin_memory / per_core_speed
    return t


def per_megabyte_of_batch(
    s_per_megabyte: Numeric, s_per_megabyte_above: Numeric, threshold_megabytes: Numeric, batch_bytes: Numeric
) -> Numeric:
    """Seconds per MB of a batch [s/MB]: ``s_per_megabyte``, and ``s_per_megabyte_above`` more for every
    MB of a batch larger than ``threshold_megabytes`` (glibc then maps it fresh and its pages fault in)."""
    above = where(floats(batch_bytes) / MEGA > floats(threshold_megabytes), 1.0, 0.0)
    rate: Numeric = floats(s_per_megabyte) + floats(s_per_megabyte_above) * above
    return rate


def remeasured_seconds(measured_s: Numeric, measured_speed: Numeric, per_core_speed: Numeric) -> Numeric:
    """A CPU time measured on one CPU, on another [s]: measured x speed there / speed here."""
    t: Numeric = floats(measured_s) * (floats(measured_speed) / per_core_speed)
    return t


# ------------------------------------------------------------------ cores, threads, nodes


def core_equivalents(threads: Numeric, cores: Numeric, threads_per_core: Numeric, smt_gain: Numeric) -> Numeric:
    """Work ``threads`` busy threads get done on ``cores`` cores, in cores' worth [cores].

    Up to one thread per core, each runs a core alone; threads sharing a core by SMT add
    (smt_gain - 1) / (threads_per_core - 1) of a core each (a core running all its threads does
    smt_gain x one thread's work); more threads than hardware threads add nothing (time-sliced).
    """
    t, c = floats(threads), floats(cores)
    hardware = c * threads_per_core
    shared = clip(minimum(t, hardware) - c, 0.0, np.inf)
    tpc = floats(threads_per_core)
    per_shared = where(tpc > 1, divide(floats(smt_gain) - 1.0, tpc - 1.0), 0.0)
    ce: Numeric = minimum(t, c) + shared * per_shared
    return ce


@formula(
    "loader_core_share",
    "1 if {workers_on_node} x {threads_per_worker} <= {loader_cores_per_node} cores; else (min(R, cores) + "
    "(min(R, cores x {cpu_threads_per_core}) - cores) x ({cpu_smt_gain} - 1) / ({cpu_threads_per_core} - 1)) / R, "
    "R = {workers_on_node} x {threads_per_worker}",
)
def worker_core_share(
    workers: Numeric, threads_per_worker: Numeric, cores: Numeric, threads_per_core: Numeric, smt_gain: Numeric
) -> Numeric:
    """The share of a core each busy loader worker gets [1].

    ``workers`` worker processes on the node each run ``threads_per_worker`` threads (intra-op
    threads that spin or compete while their worker decodes): R = workers x threads_per_worker
    runnable threads. While R fits the physical cores every worker has a core (1). Beyond, the
    work the cores do (``core_equivalents``: SMT threads add their gain, threads beyond the
    hardware's add nothing) is shared by all R threads alike, and a worker's decode runs on one of
    them: core_equivalents(R) / R.
    """
    runnable = floats(workers) * threads_per_worker
    share = divide(core_equivalents(runnable, cores, threads_per_core, smt_gain), runnable)
    return where(runnable <= floats(cores), 1.0, minimum(share, 1.0))


def gpus_sharing_node(gpus_per_job: Numeric, gpus_per_node: Numeric, jobs: Numeric) -> Numeric:
    """GPUs of every job on one node, as a scheduler packs jobs smaller than a node [GPUs].

    A job of a node or more fills its nodes (gpus_per_node); smaller jobs share one:
    floor(gpus_per_node / gpus_per_job) of them, at most ``jobs``, each with its GPUs.
    """
    g, n = floats(gpus_per_job), floats(gpus_per_node)
    per_node = minimum(floor(n / g), floats(jobs))
    return where(g >= n, n, g * per_node)


def nodes(gpus_per_job: Numeric, gpus_per_node: Numeric, jobs: Numeric) -> Numeric:
    """Nodes all jobs run on [nodes]: ceil(gpus_per_job / gpus_per_node) each for jobs of a node
    or more; ceil(jobs / jobs per node) for smaller ones packed together."""
    g, n = floats(gpus_per_job), floats(gpus_per_node)
    whole = ceil(g / n) * jobs
    packed = ceil(floats(jobs) / maximum(floor(n / g), 1.0))
    return where(g >= n, whole, packed)
