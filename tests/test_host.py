"""Host side (calc/host.py, docs/model.md section 6): each formula called directly, values by hand.

Figures from "Efficient PyTorch - Part 1" (Cityscapes 512 x 512 crops: float32 images and int64
masks, batch 32, 8 workers holding one batch each = 1.34 GB; 3D volumes of 512^3 bytes) and the
article "Feeding the beast" (ResNet-50 on a V100, 1,457 images/s, 4.6 ms of CPU per image on
one core, PCIe Gen3 x16 at 15.75 GB/s).
"""

from __future__ import annotations

import numpy as np
import pytest

import calc
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


# ------------------------------------------------------------------ the CPU cost of an example (issue 42)
# Coefficients as presets/decoders.yaml gives Pillow on the reference core (written out here, so the
# formulas are checked by hand whatever the measured file holds): 0.0592 ms fixed, 1.215 ms per decoded
# MP, + 3.096 ms per decoded MP above a 0.25 MP knee, 0.6175 ms per stored MP, 5.824 ms per MB.
PIL = (0.0592e-3, 1.215e-3, 3.096e-3, 0.25, 0.6175e-3, 5.824e-3)


def test_image_size_reads_width_by_height_and_names_the_field() -> None:
    assert host.image_size("500x375") == (500, 375)
    assert host.image_size(" 4000 X 3000 ") == (4000, 3000)
    for bad, says in (("500", "cannot read"), ("0x375", "zero side"), ("axb", "cannot read"), (500, "expected")):
        with pytest.raises(InputError) as err:
            host.image_size(bad, "image_pixels")
        assert err.value.field == "image_pixels" and says in err.value.message
        assert "500x375" in err.value.message


def test_tensors_follow_the_training_side() -> None:
    # 3 x 224 x 224 float32 trained at 160 px: 3 x 160 x 160 x 4 B = 307,200 B + the 8 B label
    spec = host.tensors_at_resolution(IMAGENET, 224.0, 160.0)
    assert spec == "image=3x160x160:float32,label=1:int64"
    assert host.tensor_bytes(spec) == 307_208
    # a mask of 224 x 224 follows too; a 1-D tensor of 224 (a sequence) does not
    assert host.tensors_at_resolution("m=224x224:uint8,s=224:int64", 224.0, 112.0) == "m=112x112:uint8,s=224:int64"
    # no image resolution (NaN) or the same side: the spec as it is
    assert host.tensors_at_resolution(IMAGENET, float("nan"), 160.0) == IMAGENET
    assert host.tensors_at_resolution(IMAGENET, 224.0, 224.0) == IMAGENET
    assert host.image_dtype(IMAGENET) == "float32" and host.image_dtype("x=3x8x8:uint8,y=1:int64") == "uint8"
    assert host.image_dtype("tokens=8192:int64") == ""


@pytest.mark.parametrize(
    ("w", "h", "px", "scaling", "denominator"),
    [
        (4000, 3000, 224, 1, 8.0),  # 3000 / 8 = 375 >= 224: the largest reduction
        (500, 375, 224, 1, 1.0),  # 375 / 2 = 187.5 < 224: full size
        (448, 448, 224, 1, 2.0),  # 448 / 2 = 224: exactly the side asked keeps the reduction (draft's rule)
        (447, 447, 224, 1, 1.0),  # 223.5 < 224: not even 1/2
        (1792, 900, 224, 1, 4.0),  # short side 900: 900 / 4 = 225 >= 224, 900 / 8 = 112.5 < 224
        (4000, 3000, 224, 0, 1.0),  # a decoder that does not scale decodes every pixel
        (4000, 3000, float("nan"), 1, 1.0),  # no training side: full size
    ],
)
def test_dct_denominator(w: int, h: int, px: float, scaling: int, denominator: float) -> None:
    assert host.dct_denominator(w, h, px, scaling) == denominator


def test_decode_cost_doubles_with_the_pixels_for_a_decoder_without_a_fixed_part() -> None:
    # 0.1 MP of 20 kB and 0.2 MP of 40 kB (same quality: bytes follow pixels), below the knee:
    # 1.215 x 0.1 + 0.6175 x 0.1 + 5.824 x 0.02 = 0.1215 + 0.06175 + 0.11648 = 0.29973 ms, then 0.59946 ms
    fixed, mp, knee_extra, knee, stored, mb = PIL
    one = host.decode_seconds(0.0, mp, knee_extra, knee, stored, mb, 100_000, 20_000, 1.0)
    two = host.decode_seconds(0.0, mp, knee_extra, knee, stored, mb, 200_000, 40_000, 1.0)
    assert one == pytest.approx(0.29973e-3, rel=1e-12) and two == pytest.approx(0.59946e-3, rel=1e-12)
    # the fixed 0.0592 ms does not double: 0.35893 ms and 0.65866 ms (2 x one - fixed)
    one_f = host.decode_seconds(fixed, mp, knee_extra, knee, stored, mb, 100_000, 20_000, 1.0)
    two_f = host.decode_seconds(fixed, mp, knee_extra, knee, stored, mb, 200_000, 40_000, 1.0)
    assert one_f == pytest.approx(0.35893e-3, rel=1e-12) and two_f == pytest.approx(0.65866e-3, rel=1e-12)


def test_decode_cost_above_the_knee_and_with_dct_scaling() -> None:
    fixed, mp, knee_extra, knee, stored, mb = PIL
    # 0.3 MP decoded (above the 0.25 MP knee), 60 kB: 0.0592 + (1.215 + 3.096) x 0.3 + 0.6175 x 0.3
    # + 5.824 x 0.06 = 0.0592 + 1.2933 + 0.18525 + 0.34944 = 1.88719 ms
    assert host.decode_seconds(fixed, mp, knee_extra, knee, stored, mb, 300_000, 60_000, 1.0) == pytest.approx(
        1.88719e-3, rel=1e-12
    )
    # exactly at the knee the step is not taken: 0.25 MP, 50 kB: 0.0592 + 0.30375 + 0.154375 + 0.2912 = 0.808525 ms
    assert host.decode_seconds(fixed, mp, knee_extra, knee, stored, mb, 250_000, 50_000, 1.0) == pytest.approx(
        0.808525e-3, rel=1e-12
    )
    # 4000 x 3000 (12 MP) of 2 MB at 1/8 scale: 0.1875 MP decoded, under the knee; every stored block and byte
    # still read: 0.0592 + 1.215 x 0.1875 + 0.6175 x 12 + 5.824 x 2 = 0.0592 + 0.2278125 + 7.41 + 11.648 = 19.3450125 ms
    scaled = host.decode_seconds(fixed, mp, knee_extra, knee, stored, mb, 12_000_000, 2_000_000, 8.0)
    assert scaled == pytest.approx(19.3450125e-3, rel=1e-12)
    # full size, 12 MP above the knee: 0.0592 + 4.311 x 12 + 7.41 + 11.648 = 70.8492 ms
    full = host.decode_seconds(fixed, mp, knee_extra, knee, stored, mb, 12_000_000, 2_000_000, 1.0)
    assert full == pytest.approx(70.8492e-3, rel=1e-12)
    # a GPU decoder taking 0.65 of the images: 0.35 x 19.3450125 = 6.770754375 ms left on the CPU
    assert host.decode_seconds(
        fixed, mp, knee_extra, knee, stored, mb, 12_000_000, 2_000_000, 8.0, 0.65
    ) == pytest.approx(6.770754375e-3, rel=1e-12)


def test_augment_cost_follows_the_crop_and_the_output_pixels() -> None:
    # Pillow's float32 chain (0 fixed, 3.282 ms per crop-input MP, 7.622 ms per output MP) on a decoded
    # 500 x 375 (0.1875 MP) to 224 px: 3.282 x 0.54 x 0.1875 + 7.622 x 0.050176 = 0.3323025 + 0.382441472
    assert host.augment_seconds(0.0, 3.282e-3, 7.622e-3, 187_500, 224) == pytest.approx(0.714744e-3, rel=1e-6)
    # at 160 px the output term is 7.622 x 0.0256 = 0.1951232 ms: 0.5274257 ms
    assert host.augment_seconds(0.0, 3.282e-3, 7.622e-3, 187_500, 160) == pytest.approx(0.5274257e-3, rel=1e-7)
    # a fixed part adds once: uint8 Pillow chain 0.00459 ms + 3.137 x 0.10125 + 6.089 x 0.050176
    assert host.augment_seconds(4.59e-6, 3.137e-3, 6.089e-3, 187_500, 224) == pytest.approx(
        (0.00459 + 3.137 * 0.10125 + 6.089 * 0.050176) * 1e-3, rel=1e-12
    )


def test_worker_cost_adds_the_batch_share_and_applies_the_per_core_speed() -> None:
    # decode 1 ms + augment 0.5 ms + 0.9234 ms per batch of 256 + (0.02233 + 0.7915) ms per MB of a
    # 602,120 B example, on a core 0.83 x the reference: (1.5 + 0.003607 + 0.490023) / 0.83 = 2.40196 ms
    t = host.worker_seconds(1e-3, 0.5e-3, 0.9234e-3, 0.81383e-3, 602_120, 256, 0.83)
    assert t == pytest.approx((1.5 + 0.9234 / 256 + 0.81383 * 0.60212) / 0.83 * 1e-3, rel=1e-12)
    assert t == pytest.approx(2.40196e-3, rel=1e-5)
    # the reference core (speed 1) and a batch of 1: every per-batch cost on the one example
    assert host.worker_seconds(1e-3, 0.5e-3, 0.9234e-3, 0.0, 0, 1, 1.0) == pytest.approx(2.4234e-3, rel=1e-12)
    # no batch (the model does not fit): the per-batch share is taken at batch 1, never a division by 0
    assert host.worker_seconds(1e-3, 0.0, 1e-3, 0.0, 0, 0, 1.0) == pytest.approx(2e-3, rel=1e-12)


def test_a_measured_cpu_time_reprojects_by_the_per_core_speed() -> None:
    # 4.6 ms measured on a core 0.83 x the reference, run on one 0.53 x: 4.6 x 0.83 / 0.53 = 7.2038 ms
    assert host.remeasured_seconds(4.6e-3, 0.83, 0.53) == pytest.approx(4.6e-3 * 0.83 / 0.53, rel=1e-12)
    # on the CPU it was measured on: exactly the measurement
    assert host.remeasured_seconds(4.6e-3, 0.83, 0.83) == 4.6e-3


def test_main_process_and_pin_thread_costs() -> None:
    # receiving a batch of 256 x 602,120 B: 0.5039 ms per batch + 0.1611 ms per MB
    # per example: 0.5039 / 256 + 0.1611 x 0.60212 = 0.0019684 + 0.0970015 = 0.0989699 ms on the reference core
    assert host.main_seconds(0.5039e-3, 0.1611e-3, 602_120, 256, 1.0) == pytest.approx(
        (0.5039 / 256 + 0.1611 * 0.60212) * 1e-3, rel=1e-12
    )
    # on a core half as fast, twice the time
    assert host.main_seconds(0.5039e-3, 0.1611e-3, 602_120, 256, 0.5) == pytest.approx(
        2 * (0.5039 / 256 + 0.1611 * 0.60212) * 1e-3, rel=1e-12
    )
    # the pin thread copies 0.02348 ms per MB: 0.02348 x 0.60212 = 0.014138 ms; nothing without pin_memory
    assert host.pin_seconds(0.0, 0.02348e-3, 602_120, 256, 1, 1.0) == pytest.approx(0.02348 * 0.60212e-3, rel=1e-12)
    assert host.pin_seconds(0.0, 0.02348e-3, 602_120, 256, 0, 1.0) == 0.0


def test_core_equivalents_add_the_smt_gain_and_stop_at_the_hardware() -> None:
    # 4 cores with 2 threads each and a 1.2 SMT gain: 3 threads -> 3 cores' work; 6 -> 4 + 2 x 0.2 = 4.4;
    # 8 (every hardware thread) -> 4.8 = 4 x 1.2; 12 -> still 4.8 (time-sliced)
    assert host.core_equivalents(3, 4, 2, 1.2) == 3.0
    assert host.core_equivalents(6, 4, 2, 1.2) == pytest.approx(4.4, rel=1e-12)
    assert host.core_equivalents(8, 4, 2, 1.2) == pytest.approx(4.8, rel=1e-12)
    assert host.core_equivalents(12, 4, 2, 1.2) == pytest.approx(4.8, rel=1e-12)
    # no SMT: the cores and no more
    assert host.core_equivalents(12, 4, 1, 1.0) == 4.0


def test_workers_times_threads_above_the_cores_oversubscribe_them() -> None:
    # 8 workers x 4 intra-op threads = 32 runnable threads on 16 cores of 2 SMT threads (gain 1.2):
    # 16 + (32 - 16) x 0.2 = 19.2 cores' work shared by 32 threads: each worker's decode gets 0.6 of a core
    assert host.worker_core_share(8, 4, 16, 2, 1.2) == pytest.approx(0.6, rel=1e-12)
    # one thread each: 8 threads on 16 cores, a core each
    assert host.worker_core_share(8, 1, 16, 2, 1.2) == 1.0
    # exactly the cores (16 x 1): still a core each; 17 spill onto SMT siblings: (16 + 0.2) / 17
    assert host.worker_core_share(16, 1, 16, 2, 1.2) == 1.0
    assert host.worker_core_share(17, 1, 16, 2, 1.2) == pytest.approx(16.2 / 17, rel=1e-12)
    # no SMT, 32 threads on 16 cores: half a core each
    assert host.worker_core_share(8, 4, 16, 1, 1.0) == pytest.approx(0.5, rel=1e-12)
    # cores not limited (no server, no input): a core each
    assert host.worker_core_share(96, 8, np.inf, 2, 1.2) == 1.0


def test_jobs_smaller_than_a_node_share_one() -> None:
    # jobs=8 of 1 GPU on 8-GPU nodes: one node of 8 GPUs (a scheduler packs them), not 8 nodes
    assert host.gpus_sharing_node(1, 8, 8) == 8.0 and host.nodes(1, 8, 8) == 1.0
    # 9 such jobs: 2 nodes; 3 jobs: 3 GPUs on the one node
    assert host.nodes(1, 8, 9) == 2.0 and host.gpus_sharing_node(1, 8, 3) == 3.0
    # jobs of 3 GPUs: floor(8 / 3) = 2 per node (6 GPUs), 5 jobs on ceil(5 / 2) = 3 nodes
    assert host.gpus_sharing_node(3, 8, 5) == 6.0 and host.nodes(3, 8, 5) == 3.0
    # jobs of a node or more fill their own: 16 GPUs = 2 nodes each; 12 GPUs = 2 nodes (8 + 4)
    assert host.gpus_sharing_node(16, 8, 2) == 8.0 and host.nodes(16, 8, 2) == 4.0
    assert host.nodes(12, 8, 1) == 2.0 and host.gpus_sharing_node(8, 8, 4) == 8.0


def test_a_batch_above_the_mmap_threshold_costs_more_per_megabyte() -> None:
    # collate: 0.02323 ms per MB, + 0.06334 ms per MB for every MB of a batch above 33.554432 MB (32 MiB)
    # 256 x 602,120 B = 154.14 MB is above: 0.08657 ms per MB; 32 x 602,120 B = 19.27 MB below: 0.02323
    assert host.per_megabyte_of_batch(0.02323e-3, 0.06334e-3, 33.554432, 256 * 602_120) == pytest.approx(
        0.08657e-3, rel=1e-12
    )
    assert host.per_megabyte_of_batch(0.02323e-3, 0.06334e-3, 33.554432, 32 * 602_120) == 0.02323e-3
    # exactly at the threshold: not above
    assert host.per_megabyte_of_batch(1.0, 2.0, 33.554432, 33_554_432) == 1.0
    # no threshold (inf): never above
    assert host.per_megabyte_of_batch(1.0, 2.0, np.inf, 1e15) == 1.0


def test_cores_threads_and_nodes_at_their_boundaries() -> None:
    import warnings

    # four threads a core (gain 1.6 when all four run): each thread past the first adds 0.6 / 3 = 0.2 of a core;
    # 8 threads on 4 such cores: 4 + 4 x 0.2 = 4.8 cores' work
    assert host.core_equivalents(8, 4, 4, 1.6) == pytest.approx(4.8, rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 warning: one thread a core, or no workers at all
        assert host.core_equivalents(8, 4, 1, 1.0) == 4.0
        assert host.worker_core_share(0, 1, 4, 1, 1.0) == 1.0
        assert host.worker_core_share(8, 1, 4, 1, 1.0) == 0.5
    # jobs of 5 GPUs on 8-GPU nodes: one a node (floor(8 / 5) = 1), 3 jobs on 3 nodes
    assert host.nodes(5, 8, 3) == 3.0 and host.gpus_sharing_node(5, 8, 3) == 5.0


def test_per_batch_costs_at_a_batch_of_one_and_the_cpu_speed() -> None:
    # a batch of 1 carries the whole per-batch cost: 1 ms received, 1 ms pinned
    assert host.main_seconds(1e-3, 0.0, 0, 1, 1.0) == pytest.approx(1e-3, rel=1e-12)
    assert host.pin_seconds(1e-3, 0.0, 0, 1, 1, 1.0) == pytest.approx(1e-3, rel=1e-12)
    # 2 ms per batch of 256 and 0.05 ms per MB of 602,120 B, on a core half as fast:
    # (2 / 256 + 0.05 x 0.60212) / 0.5 = (0.0078125 + 0.030106) / 0.5 = 0.075837 ms
    assert host.pin_seconds(2e-3, 0.05e-3, 602_120, 256, 1, 0.5) == pytest.approx(
        (2 / 256 + 0.05 * 0.60212) / 0.5 * 1e-3, rel=1e-12
    )


def test_image_size_bounds() -> None:
    assert host.image_size("1x1") == (1, 1)
    assert host.image_size("999999x1") == (999_999, 1)  # six digits a side at most
    with pytest.raises(InputError) as err:
        host.image_size("1000000x1")
    assert err.value.field == "image_pixels"  # the default field name
    assert host.image_dtype("mask=8x8:uint8,x=3:float32") == "uint8"  # two dimensions make an image


def test_threads_above_the_cores_warn_that_torch_threads_spin() -> None:
    # 8 GPUs x 3 workers = 24 workers; 2 torch threads each = 48 threads. On 48 cores each thread has
    # a core: no warning (the boundary). On 47, 48 > 47: the plan's core share prices at most 2x, where
    # this machine's runs took 9.8-12.4x (own-threads-tv-01/03/08: 29.1 / 2.96, 36.6 / 2.96, 33.8 / 3.24 ms).
    kw = {"num_workers": 3, "threads_per_worker": 2, "cpu_threads_per_core": 1}
    fits = calc.plan("resnet50-8xh100-imagenet", cpu_cores_per_node=48, **kw)
    assert not [w for w in fits.warnings if "spin" in w]
    over = calc.plan("resnet50-8xh100-imagenet", cpu_cores_per_node=47, **kw)
    assert [w for w in over.warnings if "spin" in w] == [
        "24 workers x 2 threads = 48 threads on 47 cores: torch's waiting OpenMP threads spin on busy cores, and "
        "runs here took 10-12x the CPU time per image (the plan prices at most 2x); set threads_per_worker=1, as "
        "PyTorch does in DataLoader workers."
    ]
    # one thread a worker never warns, however few the cores
    one = calc.plan("resnet50-8xh100-imagenet", cpu_cores_per_node=8, num_workers=3, threads_per_worker=1)
    assert not [w for w in one.warnings if "spin" in w]


def test_loader_ram_above_the_nodes_host_ram_warns() -> None:
    # ResNet-50 at 224 x 224 x 3 fp32 + an 8-byte label: 602,120 B an example; batch 256 = 154,142,720 B;
    # 8 workers x prefetch 2 = 16 batches, doubled by pin_memory: 4,932,567,040 B per GPU process; 8 GPUs on
    # the node: 39,460,536,320 B (36.75 GiB). Host RAM of exactly that is enough (the boundary); a byte less is not.
    kw = {"gpu": "H100-SXM", "model": "resnet50", "batch_size": 256, "gpus_per_job": 8, "num_workers": 8}
    need = 8 * 16 * 2 * 256 * (224 * 224 * 3 * 4 + 8)
    assert need == 39_460_536_320
    fits = calc.plan(calc.Scenario(**kw, prefetch_factor=2, host_ram_bytes=need))
    assert not [w for w in fits.warnings if "Loader RAM" in w]
    over = calc.plan(calc.Scenario(**kw, prefetch_factor=2, host_ram_bytes=need - 1))
    assert [w for w in over.warnings if "Loader RAM" in w] == [
        "Loader RAM per node 36.75 GiB (8 GPUs x 4.59 GiB) exceeds the node's host RAM, 36.75 GiB (given): fewer "
        "workers, a smaller prefetch_factor or batch, pin_memory off, or set host_ram_bytes to a node with more."
    ]
    # the default 512 GiB, named with where it came from: four 2-GPU jobs packed on a node of 8, 28 workers x
    # prefetch 8 = 224 batches of 154,142,720 B, doubled: 69,055,938,560 B a process x 8 = 552,447,508,480 B
    # > 549,755,813,888 B (512 GiB)
    dense = calc.plan(calc.Scenario(**{**kw, "gpus_per_job": 2, "num_workers": 28}, jobs=4, prefetch_factor=8))
    assert dense.values["host_ram_per_node_bytes"] == 8 * 224 * 2 * 256 * 602_120 == 552_447_508_480
    assert next(w for w in dense.warnings if "Loader RAM" in w).endswith(
        "exceeds the node's host RAM, 512 GiB (default 512 GiB (calc.resolve.DEFAULT_HOST_RAM_BYTES)): fewer "
        "workers, a smaller prefetch_factor or batch, pin_memory off, or set host_ram_bytes to a node with more."
    )
