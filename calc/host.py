"""Host side: worker RAM, CPU cores, host-to-GPU copies (MODEL.md section 4).

    batch_bytes = n x sum over tensors (elements x dtype_bytes)      (as the loader emits it)
    worker_ram  = batch_bytes x batches_in_flight                     (num_workers x prefetch_factor)
    pinned      = the same again when pin_memory is on                (upper bound)
    cpu_cores   = samples/s x cpu_seconds_per_example
    copy_time   = batch_bytes / host_link_bandwidth

References
----------
"Efficient PyTorch" (seeds/003): the Cityscapes and 3D worker-RAM arithmetic.
PyTorch DataLoader: ``prefetch_factor`` batches per worker, default 2.
"""

from __future__ import annotations

import math
import re

import numpy as np

from calc._types import Numeric
from calc.errors import InputError

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
        dims = tuple(int(d) for d in shape.split("x"))
        if any(d <= 0 for d in dims):
            raise InputError(field, f"every dimension of {part!r} must be positive")
        out.append((name, dims, dtype))
    return out


def tensor_bytes(spec: str, field: str = "tensors") -> float:
    """Bytes of one example as the loader emits it [bytes]."""
    return float(sum(math.prod(shape) * DTYPE_BYTES[dtype] for _, shape, dtype in parse_tensors(spec, field)))


def batch_bytes(batch_size: Numeric, example_tensor_bytes: Numeric) -> Numeric:
    """One batch in host memory [bytes]."""
    return np.asarray(batch_size, dtype=float) * example_tensor_bytes


def batches_in_flight(num_workers: Numeric, prefetch_factor: Numeric) -> Numeric:
    """Batches the DataLoader holds at once: workers x prefetch, or 1 with no workers."""
    w = np.asarray(num_workers, dtype=float)
    return np.where(w > 0, w * prefetch_factor, 1.0)


def worker_ram_bytes(batch_bytes: Numeric, batches_in_flight: Numeric, pin_memory: Numeric) -> Numeric:
    """Host RAM for batches in flight, per training process [bytes].

    With ``pin_memory`` a pinned copy of each batch may coexist with the worker's copy, so the
    figure doubles (an upper bound: the pinning thread frees the shared copy as it goes).
    """
    ram: Numeric = np.asarray(batch_bytes, dtype=float) * batches_in_flight * (1 + np.asarray(pin_memory, dtype=float))
    return ram


def cpu_cores(samples_per_s: Numeric, cpu_seconds_per_example: Numeric) -> Numeric:
    """CPU cores busy decoding and augmenting [cores]."""
    return np.asarray(samples_per_s, dtype=float) * cpu_seconds_per_example


def copy_time_s(batch_bytes: Numeric, host_link_bytes_per_s: Numeric) -> Numeric:
    """Host-to-GPU copy time of one batch [s]; it hides behind compute only when overlapped."""
    return np.asarray(batch_bytes, dtype=float) / host_link_bytes_per_s
