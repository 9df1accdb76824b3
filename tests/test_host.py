"""Host side (calc/host.py, docs/model.md section 6): each formula called directly, values by hand.

Figures from "Efficient PyTorch - Part 1" (Cityscapes 512 x 512 crops: float32 images and int64
masks, batch 32, 8 workers holding one batch each = 1.34 GB; 3D volumes of 512^3 bytes) and the
article "Feeding the beast" (ResNet-50 on a V100, 1,457 images/s, 4.6 ms of CPU per image on
one core, PCIe Gen3 x16 at 15.75 GB/s).
"""

from __future__ import annotations

import numpy as np
import pytest

from calc import host
from calc.errors import InputError

CITYSCAPES = "image=3x512x512:float32,mask=512x512:int64"
# one example: 3 x 512 x 512 x 4 B = 3,145,728 + 512 x 512 x 8 B = 2,097,152 -> 5,242,880 B
CITYSCAPES_EXAMPLE = 5_242_880
# ResNet-50 on ImageNet as the loader emits it: 3 x 224 x 224 x 4 B = 602,112 + an int64 label 8 = 602,120 B
IMAGENET = "image=3x224x224:float32,label=1:int64"


def test_parse_tensors_names_shapes_and_dtypes() -> None:
    assert host.parse_tensors(CITYSCAPES) == [("image", (3, 512, 512), "float32"), ("mask", (512, 512), "int64")]
    # unnamed tensors are numbered by position; spaces are ignored
    assert host.parse_tensors(" 3x2 : uint8 , 5:int8") == [("t0", (3, 2), "uint8"), ("t1", (5,), "int8")]
    # the largest dimension accepted has 9 digits; 1e15 bytes per example is still accepted
    assert host.parse_tensors("999999999:bool") == [("t0", (999_999_999,), "bool")]
    assert host.parse_tensors("1000000x1000000x1000:uint8")[0][1] == (1_000_000, 1_000_000, 1000)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "tensors: expected tensors as name=SHAPE:dtype, e.g. image=3x224x224:uint8,label=1:int64"),
        ("  ", "tensors: expected tensors as name=SHAPE:dtype, e.g. image=3x224x224:uint8,label=1:int64"),
        (
            "3 by 224",
            "tensors: cannot read '3by224'; write name=SHAPE:dtype with SHAPE like 3x224x224 "
            "(e.g. image=3x224x224:uint8,label=1:int64)",
        ),
        ("x=3:float33", "tensors: unknown dtype 'float33'; accepted: " + ", ".join(host.DTYPE_BYTES)),
        (
            "1234567890:uint8",
            "tensors: a dimension of '1234567890:uint8' is over 999,999,999; accepted: positive whole numbers",
        ),
        ("3x0:uint8", "tensors: every dimension of '3x0:uint8' must be positive"),
        (
            # 1e15 + 1 = 7 x 11 x 13 x 211 x 241 x 2,161 x 9,091 = 1,001 x 50,851 x 19,645,651 bytes: one over
            "1001x50851x19645651:uint8",
            "tensors: '1001x50851x19645651:uint8' is over 1 PB per example; accepted: shapes of real examples",
        ),
        (
            # 2e14 float64 elements x 8 B = 1.6e15 B (the element count alone is under 1e15)
            "1000000x1000000x200:float64",
            "tensors: '1000000x1000000x200:float64' is over 1 PB per example; accepted: shapes of real examples",
        ),
        (
            "1000000x1000000x1001:uint8",
            "tensors: '1000000x1000000x1001:uint8' is over 1 PB per example; accepted: shapes of real examples",
        ),
    ],
)
def test_parse_tensors_errors_say_what_is_accepted(spec: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        host.parse_tensors(spec)
    assert str(err.value) == message


def test_parse_tensors_refuses_a_non_string_naming_the_field() -> None:
    with pytest.raises(InputError) as err:
        host.parse_tensors(5, "my_tensors")  # type: ignore[arg-type]
    assert err.value.field == "my_tensors"
    with pytest.raises(InputError) as err:
        host.tensor_bytes("x", "other")
    assert err.value.field == "other"
    with pytest.raises(InputError) as err:
        host.tensor_bytes("x")
    assert err.value.field == "tensors"


def test_tensor_bytes() -> None:
    assert host.tensor_bytes(CITYSCAPES) == CITYSCAPES_EXAMPLE
    assert host.tensor_bytes(IMAGENET) == 602_120
    # the 3D volumes: 512^3 uint8 = 134,217,728 B; every dtype's width counts
    assert host.tensor_bytes("v=512x512x512:uint8") == 134_217_728
    assert host.tensor_bytes("a=2:float64,b=2:bfloat16,c=2:float8,d=2:int32,e=2:uint16") == 2 * (8 + 2 + 1 + 4 + 2)


def test_batch_bytes_and_worker_ram_of_the_cityscapes_loader() -> None:
    # 32 x 5,242,880 B = 167,772,160 B per batch
    batch = host.batch_bytes(32, CITYSCAPES_EXAMPLE)
    assert batch == 167_772_160
    # 8 workers x prefetch 1 = 8 batches, no pinned copy: 1,342,177,280 B = 1.34 GB (the article)
    assert host.batches_in_flight(8, 1) == 8
    assert host.worker_ram_bytes(batch, 8, 0) == 1_342_177_280
    # 64 workers: 10.74 GB
    assert host.worker_ram_bytes(batch, host.batches_in_flight(64, 1), 0) == 64 * 167_772_160
    # pinned: a second copy of each batch, twice the RAM
    assert host.worker_ram_bytes(batch, 8, 1) == 2 * 1_342_177_280
    assert host.worker_ram_bytes(batch, 8, True) == 2 * 1_342_177_280


def test_batches_in_flight() -> None:
    # PyTorch's default prefetch_factor 2: 8 workers hold 16 batches; with no workers, one batch
    assert host.batches_in_flight(8, 2) == 16
    assert host.batches_in_flight(0, 2) == 1
    assert list(host.batches_in_flight(np.array([0.0, 1.0, 4.0]), 3)) == [1.0, 3.0, 12.0]


def test_3d_volumes() -> None:
    # 32 volumes of 512^3 B = 4.295 GB per batch; 8 batches = 34.36 GB
    batch = host.batch_bytes(32, 134_217_728)
    assert batch == pytest.approx(4.295e9, rel=1e-3)
    assert host.worker_ram_bytes(batch, 8, 0) == pytest.approx(34.36e9, rel=1e-3)


def test_cpu_cores() -> None:
    # 5,885 images/s x 4.6 ms of CPU each = 27.07 cores for all 4 GPUs
    assert host.cpu_cores(5885.0, 0.0046) == pytest.approx(27.071, rel=1e-12)
    # per node: 1,457 per GPU x 8 GPUs x 4.6 ms = 53.62 cores
    assert host.cpu_cores_per_node(1457.0, 8, 0.0046) == pytest.approx(53.6176, rel=1e-12)


def test_host_to_gpu_copy() -> None:
    # batch 128 x 602,120 B = 77,071,360 B over PCIe Gen3 x16 (15.75 GB/s) = 4.8934 ms
    copy = host.copy_time_s(host.batch_bytes(128, 602_120), 15.75e9)
    assert copy == pytest.approx(77_071_360 / 15.75e9, rel=1e-12)
    assert copy == pytest.approx(4.8934e-3, rel=1e-4)
    # of an 87.85 ms step (128 / 1,457): 5.57 %
    assert host.copy_share(copy, 128 / 1457) == pytest.approx(0.055703, rel=1e-4)
    # 1,457 images/s x 602,120 B = 877.29 MB/s into each GPU
    assert host.h2d_bytes_per_s(1457.0, 602_120) == pytest.approx(877.288840e6, rel=1e-9)


def test_host_ram_per_node() -> None:
    # 8 GPU processes each holding 1.34 GB of batches: 10.74 GB on the node
    assert host.host_ram_per_node_bytes(1_342_177_280, 8) == 10_737_418_240


def test_dataset_size_and_whether_it_fits_in_ram() -> None:
    # ImageNet: 1,281,167 x 64 KiB = 83,962,560,512 B
    size = host.dataset_bytes(1_281_167, 65_536)
    assert size == 83_962_560_512
    gib = 2**30
    assert host.fits_in_ram(size, 512 * gib, 11 * gib) == 1.0  # 84 GB in 501 GiB left
    assert host.fits_in_ram(size, 64 * gib, 0) == 0.0  # 84 GB > 64 GiB
    # (80 - 2) GiB = 83,751,862,272 B < 83,962,560,512 B: it does not fit
    assert host.fits_in_ram(size, 80 * gib, 2 * gib) == 0.0
    assert host.fits_in_ram(100.0, 150.0, 50.0) == 1.0  # exactly the RAM left: it fits


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        # a sweep axis passed as integers must not wrap around in int64 (max 9.2e18): 3e9 x 4e9 = 1.2e19
        (host.batch_bytes, (np.array([3_000_000_000]), np.array([4_000_000_000]))),
        (host.batches_in_flight, (np.array([3_000_000_000]), np.array([4_000_000_000]))),
        (host.worker_ram_bytes, (np.array([3_000_000_000]), np.array([4_000_000_000]), 0)),
        (host.cpu_cores, (np.array([3_000_000_000]), np.array([4_000_000_000]))),
        (host.host_ram_per_node_bytes, (np.array([3_000_000_000]), np.array([4_000_000_000]))),
        (host.cpu_cores_per_node, (np.array([3_000_000_000]), 1, np.array([4_000_000_000]))),
        (host.h2d_bytes_per_s, (np.array([3_000_000_000]), np.array([4_000_000_000]))),
        (host.dataset_bytes, (np.array([3_000_000_000]), np.array([4_000_000_000]))),
    ],
)
def test_integer_inputs_do_not_overflow(fn, args) -> None:  # type: ignore[no-untyped-def]
    assert float(np.asarray(fn(*args))[0]) == pytest.approx(1.2e19, rel=1e-12)
