"""Host side: worker RAM, CPU cores, host-to-GPU copies (docs/model.md section 6).

    batch_bytes = n x sum over tensors (elements x dtype_bytes)      (as the loader emits it)
    worker_ram  = batch_bytes x batches_in_flight                     (num_workers x prefetch_factor)
    pinned      = the same again when pin_memory is on                (upper bound)
    cpu_cores   = samples/s x cpu_seconds_per_example
    copy_time   = batch_bytes / host_link_bandwidth

References
----------
"Efficient PyTorch - Part 1" (Towards Data Science): the Cityscapes and 3D worker-RAM arithmetic.
PyTorch DataLoader: ``prefetch_factor`` batches per worker, default 2.
"""

from __future__ import annotations

import math
import re

from calc._types import Numeric, floats, where
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


def tensor_bytes(spec: str, field: str = "tensors") -> float:
    """Bytes of one example as the loader emits it [bytes]."""
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
    return (floats(dataset_bytes) <= floats(host_ram_bytes) - loader_ram_bytes).astype(float)
