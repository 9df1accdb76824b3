"""Batch size from GPU memory (calc/memory.py, docs/model.md section 3), values worked by hand.

The article "Feeding the beast": ResNet-50 on a 16 GiB V100, 98 MiB of fp32 weights, 103 MiB of
activations per image (convnet-burden), no reserve: floor((16,384 - 98) / 103) = 158, rounded
to the power of two 128, which takes 128 x 103 + 98 = 13,282 MiB = 12.97 GiB.
"""

from __future__ import annotations

import numpy as np
import pytest

from calc import memory


def _state(*args: object) -> object:
    """The state per GPU: the sum of calc.memory.sharded_state_parts (weights + gradients + optimizer)."""
    w, g, o = memory.sharded_state_parts(*args)  # type: ignore[arg-type]
    return w + g + o


MIB = 2**20
GIB = 2**30


def test_model_state_by_optimizer_and_shards() -> None:
    # ResNet-50's 25,557,032 parameters with Adam: x 16 B = 408,912,512 B
    assert memory.model_state_bytes(25_557_032, memory.BYTES_PER_PARAM["adam"]) == 408_912_512
    # Llama-2-7B (6,738,415,616 params) with Adam sharded over 8 GPUs (ZeRO-3): x 16 / 8 = 13,476,831,232 B
    assert memory.model_state_bytes(6_738_415_616, 16.0, 8) == 13_476_831_232
    # the article's count: fp32 weights only, 4 B each
    assert memory.model_state_bytes(25_557_032, memory.BYTES_PER_PARAM["weights_only"]) == 102_228_128


def test_bytes_per_param_table() -> None:
    # weights 4, + gradients 4, + momentum 4, + Adam m and v 8 (ZeRO paper: 2 + 2 + 12 mixed = 16)
    assert memory.BYTES_PER_PARAM == {
        "weights_only": 4.0,
        "sgd": 8.0,
        "sgd_momentum": 12.0,
        "adam": 16.0,
        "adamw": 16.0,
    }


def test_the_articles_v100_batch() -> None:
    # floor((16,384 MiB - 0 - 98 MiB) / 103 MiB) = floor(158.1) = 158
    assert memory.max_batch_size(16 * GIB, 0.0, 98 * MIB, 103 * MIB) == 158
    # a 1 GiB reserve: floor((16,384 - 1,024 - 98) / 103) = floor(148.2) = 148
    assert memory.max_batch_size(16 * GIB, 1 * GIB, 98 * MIB, 103 * MIB) == 148
    # state larger than the GPU: 0, never negative
    assert memory.max_batch_size(16 * GIB, 1 * GIB, 20 * GIB, 103 * MIB) == 0


@pytest.mark.parametrize(
    ("n_max", "rule", "n"),
    [
        (158, 0, 128),  # pow2: 2^floor(log2 158) = 2^7
        (158, 1, 152),  # multiple of 8: floor(158 / 8) x 8 = 19 x 8
        (158, 2, 158),  # none
        (128, 0, 128),  # a power of two stays
        (1, 0, 1),  # 2^0
        (0, 0, 0),  # does not fit: 0, not 2^0
        (7, 1, 7),  # below 8 a multiple of 8 is impossible: kept
        (15, 1, 8),
        (3, 0, 2),
    ],
)
def test_round_batch(n_max: float, rule: int, n: float) -> None:
    assert memory.round_batch(n_max, rule) == n


def test_round_batch_is_vectorised() -> None:
    got = memory.round_batch(np.array([158.0, 158.0, 158.0, 0.0]), np.array([0, 1, 2, 0]))
    assert list(got) == [128.0, 152.0, 158.0, 0.0]


def test_memory_used() -> None:
    # 0 reserve + 98 MiB + 128 x 103 MiB = 13,282 MiB (12.97 GiB)
    assert memory.memory_used_bytes(128, 0.0, 98 * MIB, 103 * MIB) == 13_282 * MIB
    # with a 1 GiB reserve: 14,306 MiB
    assert memory.memory_used_bytes(128, 1 * GIB, 98 * MIB, 103 * MIB) == 14_306 * MIB


def test_integer_inputs_do_not_overflow() -> None:
    # a sweep axis passed as integers must not wrap around in int64 (max 9.2e18): 3e9 x 4e9 = 1.2e19
    got = memory.model_state_bytes(np.array([3_000_000_000]), np.array([4_000_000_000]))
    assert float(got[0]) == pytest.approx(1.2e19, rel=1e-12)
    # 6e18 B reserved + 6e18 B of state + 1 x 1 B: 1.2e19, not a wrapped negative number
    six = np.array([6_000_000_000_000_000_000])
    assert float(memory.memory_used_bytes(1, six, six, 1)[0]) == pytest.approx(1.2e19, rel=1e-12)


# ------------------------------------------- issue 29: state per GPU as the frameworks shard it


def test_state_split_mixed_and_fp32() -> None:
    # Adam, mixed precision: 2 B weights + 2 B gradients + 12 B (fp32 master, m, v) (ZeRO, K = 12)
    assert tuple(float(v) for v in memory.state_split(16.0, 2.0)) == (2.0, 2.0, 12.0)
    # Adam in fp32: 4 + 4 + 8; SGD with momentum in fp32: 4 + 4 + 4; weights only: 4 + 0 + 0
    assert tuple(float(v) for v in memory.state_split(16.0, 4.0)) == (4.0, 4.0, 8.0)
    assert tuple(float(v) for v in memory.state_split(12.0, 4.0)) == (4.0, 4.0, 4.0)
    assert tuple(float(v) for v in memory.state_split(4.0, 4.0)) == (4.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("zero_stage", "per_param"),
    [
        (0, 16.0),  # DDP: 2 + 2 + 12, all replicated
        (1, 2 + 2 + 12 / 8),  # optimizer state over 8 ranks: 5.5 B
        (2, 2 + (2 + 12) / 8),  # + gradients: 3.75 B
        (3, 16 / 8),  # + weights (FSDP FULL_SHARD): 2 B
    ],
)
def test_zero_stages_by_hand(zero_stage: int, per_param: float) -> None:
    # 1e9 parameters, one model-parallel rank, a shard group of 8 data-parallel ranks
    assert float(_state(1e9, 16.0, 2.0, 1.0, 8.0, zero_stage)) == pytest.approx(per_param * 1e9)


def test_megatron_distributed_optimizer_llama_405b() -> None:
    # Llama 3.1 405B, TP 8 x PP 16 = 128 model-parallel ranks, distributed optimizer (ZeRO-1) over
    # the 64 data-parallel ranks of 8,192 GPUs: 405e9 / 128 = 3,164,062,500 parameters per rank x
    # (2 + 2 + 12 / 64 = 4.1875 B) = 13,249,511,718.75 B (12.34 GiB), not the 16 B x 405e9 / 128 =
    # 50,625,000,000 B (47.15 GiB) of an unsharded optimizer.
    assert float(_state(405e9, 16.0, 2.0, 128.0, 64.0, 1)) == pytest.approx(13_249_511_718.75)
    assert float(_state(405e9, 16.0, 2.0, 128.0, 64.0, 0)) == pytest.approx(50_625_000_000)


def test_sharded_state_is_vectorised() -> None:
    got = _state(1e9, 16.0, 2.0, 1.0, np.array([8.0, 8.0, 1.0]), np.array([3, 1, 3]))
    np.testing.assert_allclose(got, [2e9, 5.5e9, 16e9])


def test_default_optimizer_by_family() -> None:
    # issue 39: a transformer trains with AdamW, a CNN with SGD and momentum; a model of no family AdamW
    assert memory.default_optimizer("transformer") == "adamw"
    assert memory.default_optimizer("cnn") == "sgd_momentum"
    assert memory.default_optimizer("blank") == "adamw"
    assert memory.BYTES_PER_PARAM[memory.default_optimizer("blank")] == 16.0


# ------------------------------------------------- issue 41: the state item by item, as frameworks keep it


def test_state_parts_by_hand() -> None:
    # 1e9 parameters, ZeRO-1 over 8 ranks, mixed Adam: weights 2e9 B, gradients 2e9 B, optimizer 12e9 / 8 = 1.5e9 B;
    # their sum is the 5.5e9 of ZeRO-1 above.
    w, g, o = memory.sharded_state_parts(1e9, 16.0, 2.0, 1.0, 8.0, 1)
    assert (float(w), float(g), float(o)) == (2e9, 2e9, 1.5e9)
    # ZeRO-2 also shards the gradients, ZeRO-3 the weights: 2e9 / 8 each.
    assert float(memory.sharded_state_parts(1e9, 16.0, 2.0, 1.0, 8.0, 2)[1]) == 2.5e8
    assert float(memory.sharded_state_parts(1e9, 16.0, 2.0, 1.0, 8.0, 3)[0]) == 2.5e8
    # Tensor x pipeline ranks split all three: 4 ranks -> a quarter
    assert float(memory.sharded_state_parts(1e9, 16.0, 2.0, 4.0, 1.0, 0)[2]) == 3e9


def test_megatron_keeps_fp32_gradients_beside_bf16_weights() -> None:
    # Megatron-LM README, "Distributed Optimizer": bf16 params with fp32 grads 18 B, distributed 6 + 12/d;
    # fp16 params and grads 20 B, distributed 4 + 16/d.
    assert memory.MEGATRON_MIXED_STATE == {"fp16": (20.0, 2.0), "bf16": (18.0, 4.0), "fp8": (18.0, 4.0)}
    assert tuple(float(v) for v in memory.state_split(18.0, 2.0, 4.0)) == (2.0, 4.0, 12.0)
    assert tuple(float(v) for v in memory.state_split(20.0, 2.0, 2.0)) == (2.0, 2.0, 16.0)
    # 1e9 parameters over d = 8: 6 + 12 / 8 = 7.5 B (bf16); 4 + 16 / 8 = 6 B (fp16)
    assert float(_state(1e9, 18.0, 2.0, 1.0, 8.0, 1, 4.0)) == pytest.approx(7.5e9)
    assert float(_state(1e9, 20.0, 2.0, 1.0, 8.0, 1, 2.0)) == pytest.approx(6e9)


def test_zero_stage_follows_the_framework_unless_given() -> None:
    # FSDP2 (torchtitan) shards everything; NeMo and Megatron-Bridge run the distributed optimizer.
    assert memory.FRAMEWORK_ZERO_STAGE == {"fsdp": 3, "nemo": 1}
    assert memory.zero_stage_used(None, "fsdp") == 3 and memory.zero_stage_used(None, "nemo") == 1
    assert memory.zero_stage_used(None, "megatron") == 0 and memory.zero_stage_used(None, None) == 0
    assert memory.zero_stage_used(0, "fsdp") == 0 and memory.zero_stage_used(2, "nemo") == 2  # given wins


def test_smallest_shard_group_by_hand() -> None:
    # Llama 3 70B on an 80 GiB H100 (79.65 GiB addressable): 70.55e9 x 16 B = 1,128.9e9 B unsharded; 1 GiB reserved
    # and one sequence's 15 GiB of activations leave 79.65 - 16 = 63.65 GiB = 68.344e9 B: ceil(16.518) = 17 ranks.
    gib = 2.0**30
    got = memory.smallest_shard_group(70.55e9 * 16, 79.65 * gib, 1 * gib, 15 * gib)
    assert got == np.ceil(70.55e9 * 16 / (63.65 * gib)) == 17
    # Already fits unsharded: 1 (never below one GPU); activations alone fill the GPU: no group helps (inf).
    assert memory.smallest_shard_group(1e9, 80 * gib, gib, gib) == 1.0
    assert memory.smallest_shard_group(1e9, 80 * gib, gib, 79 * gib) == np.inf
    assert memory.smallest_shard_group(1e9, 80 * gib, gib, 80 * gib) == np.inf


def test_smallest_shard_group_at_its_edges_without_warnings() -> None:
    import warnings

    gib = 2.0**30
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Half a byte left for the state: 1e9 / 0.5 = 2e9 ranks, a number, not "none fits"
        assert memory.smallest_shard_group(1e9, 2 * gib + 0.5, gib, gib) == 2e9
        # Nothing left (0 / 0 and x / 0): none fits, and NumPy says nothing
        assert memory.smallest_shard_group(0.0, 2 * gib, gib, gib) == np.inf
        assert memory.smallest_shard_group(1e9, 2 * gib, gib, gib) == np.inf
