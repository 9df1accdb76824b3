"""calc.compute, the step-time model, called directly with hand-worked values (arithmetic in the comments).

The figures are ResNet-50 (presets/models.yaml: 24.3 GFLOPs training per example, measured; 392.6 MB
of GPU-memory traffic per example and 1.278 GB per step in mixed precision) on a V100 SXM2
(presets/gpus.yaml, NVIDIA Tesla V100 datasheet: 125 TFLOP/s fp16 tensor peak, 900 GB/s HBM2). The
efficiencies (0.5 of the peak, 0.7 of the bandwidth), the 1 ms launch overhead and the 4 examples'
fill are round illustrative values, not the fitted ones (calc.calibrate fits those; tests/test_calibration.py).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from calc import compute

FLOPS = 24.3e9  # ResNet-50 training FLOPs per example
TRAFFIC = 392.6e6  # bytes read and written in GPU memory per example, mixed precision
STEP_TRAFFIC = 1.278e9  # weights, gradients and optimizer state per step, mixed precision
PEAK = 125e12  # V100 fp16 tensor-core peak [FLOP/s]
BANDWIDTH = 900e9  # V100 HBM2 [B/s]

# 24.3e9 / (125e12 x 0.5 = 62.5e12) = 0.3888 ms of math per example
C = 0.3888e-3
# 392.6e6 / (900e9 x 0.7 = 630e9) = 0.623175 ms of memory traffic per example
M = 392.6e6 / 630e9
# 1.278e9 / 630e9 = 2.028571 ms of per-step traffic
S = 1.278e9 / 630e9
# model_terms' arguments after the batch: FLOPs, peak, e_c, traffic, bandwidth, e_m, step traffic,
# launch overhead [s], fill examples, stack factor
TERMS = (FLOPS, PEAK, 0.5, TRAFFIC, BANDWIDTH, 0.7, STEP_TRAFFIC, 1e-3, 4.0, 1.5)


def test_train_flops_is_forward_times_three() -> None:
    # Kaplan et al. 2020, 2.1: backward ~ 2 x forward, so training = 3 x forward.
    assert compute.TRAIN_FLOPS_MULTIPLIER == 3.0
    # ResNet-50: 4.11 GMACs forward = 8.22 GFLOPs; x 3 = 24.66 GFLOPs
    assert compute.train_flops(8.22e9, compute.TRAIN_FLOPS_MULTIPLIER) == pytest.approx(24.66e9, rel=1e-12)


def test_compute_and_memory_time_per_example_by_hand() -> None:
    assert compute.compute_time_per_example_s(FLOPS, PEAK, 0.5) == pytest.approx(C, rel=1e-12)
    assert compute.memory_time_per_example_s(TRAFFIC, BANDWIDTH, 0.7) == pytest.approx(0.6231746e-3, rel=1e-6)
    # Twice the efficiency halves the time: 24.3e9 / 125e12 = 0.1944 ms at the full peak
    assert compute.compute_time_per_example_s(FLOPS, PEAK, 1.0) == pytest.approx(0.1944e-3, rel=1e-12)


def test_fixed_time_by_hand_with_the_fill_saturating_with_work_per_example() -> None:
    per = C + M  # 1.011975 ms per example
    # ResNet-50's 24.3 GFLOPs barely saturate the fill: 4 / (1 + 24.3e9 / 1e13) = 4 / 1.00243 = 3.990304
    # examples; 2.028571 ms + 1 ms + 3.990304 x 1.011975 ms = 2.028571 + 1 + 4.038086 = 7.066657 ms
    got = compute.fixed_time_s(STEP_TRAFFIC, BANDWIDTH, 0.7, 1e-3, 4.0, per, FLOPS)
    assert got == pytest.approx(7.066657e-3, rel=1e-6)
    # No FLOPs count given: no saturation, the whole 4 examples' fill, 0 + 0 + 4 / (1 + 0) x 1 s = 4 s
    # exactly (not 4 / (1 + 1e-13): one FLOP would already show)
    assert compute.fixed_time_s(0.0, BANDWIDTH, 0.7, 0.0, 4.0, 1.0) == 4.0
    # At 1e13 FLOPs per example (FILL_SATURATION_FLOPS) the fill halves: 4 / (1 + 1) = 2 examples
    assert compute.FILL_SATURATION_FLOPS == 1e13
    got = compute.fixed_time_s(STEP_TRAFFIC, BANDWIDTH, 0.7, 1e-3, 4.0, per, 1e13)
    assert got == pytest.approx(S + 1e-3 + 2 * per, rel=1e-12)
    # One 8,192-token sequence of an 8B model, 6 x 8e9 x 8192 = 3.93216e14 FLOPs: the fill is
    # 4 / (1 + 39.3216) = 0.099203 examples
    got = compute.fixed_time_s(0.0, BANDWIDTH, 0.7, 0.0, 4.0, 1.0, 3.93216e14)
    assert got == pytest.approx(0.0992025, rel=1e-5)


def test_model_step_time_by_hand() -> None:
    # stack factor 1.5 (an eager stack 50 % slower) x (64 x 1.011975 ms + 7.066657 ms) = 107.7495 ms
    per, fixed = C + M, 7.066657e-3
    assert compute.model_step_time_s(64, per, fixed, 1.5) == pytest.approx(0.1077495, rel=1e-6)


def test_model_terms_compose_the_full_model_by_hand() -> None:
    c, m, fixed, t = compute.model_terms(64, *TERMS)
    assert c == pytest.approx(C, rel=1e-12) and m == pytest.approx(M, rel=1e-12)
    assert fixed == pytest.approx(7.066657e-3, rel=1e-6)
    assert t == pytest.approx(0.1077495, rel=1e-6)


def test_model_terms_eager_cost_per_byte_adds_to_each_example_only() -> None:
    # 1e-12 s per byte of the example's 392.6 MB = 0.3926 ms more per example, x 64 examples x 1.5
    # = 37.6896 ms more per step; the fixed part (its fill counts math and memory only) is unchanged.
    _, _, f0, t0 = compute.model_terms(64, *TERMS)
    _, _, f1, t1 = compute.model_terms(64, *TERMS, stack_s_per_byte=1e-12)
    assert f1 == f0
    assert t1 - t0 == pytest.approx(37.6896e-3, rel=1e-9)


def test_model_terms_flops_only_keeps_the_math_term_alone() -> None:
    # The articles' model: 64 x 0.3888 ms = 24.8832 ms; no memory, no fixed part, no stack factor
    c, m, fixed, t = compute.model_terms(64, *TERMS, flops_only=1.0, stack_s_per_byte=1e-12)
    assert c == pytest.approx(C, rel=1e-12) and m == 0.0 and fixed == 0.0
    assert t == pytest.approx(24.8832e-3, rel=1e-12)


def test_model_terms_vectorised_over_the_model_switch() -> None:
    # A sweep: the full model and the FLOPs-only one side by side, element by element as above
    flops_only = np.array([0.0, 1.0])
    _, m, fixed, t = compute.model_terms(64, *TERMS, flops_only=flops_only)
    assert m.tolist() == pytest.approx([M, 0.0], rel=1e-12)  # type: ignore[union-attr]
    assert fixed.tolist() == pytest.approx([7.066657e-3, 0.0], rel=1e-6)  # type: ignore[union-attr]
    assert t.tolist() == pytest.approx([0.1077495, 24.8832e-3], rel=1e-6)  # type: ignore[union-attr]


def test_step_time_methods_in_order() -> None:
    assert compute.METHODS == ("measured step time", "measured throughput", "model", "re-projected measurement")


def test_step_time_without_a_measurement_is_the_models() -> None:
    t, method, ratio, gpu = compute.step_time_s(64, 0.1077, math.nan, math.nan, math.nan, math.nan)
    assert t == 0.1077 and compute.METHODS[int(method)] == "model"
    assert ratio == 1.0 and gpu == 1.0  # nothing measured, nothing moved


def test_step_time_from_a_throughput_reprojected() -> None:
    # 1,457 images/s measured at batch 128 (the article's V100): 128 / 1457 = 87.85 ms; the model
    # says the new setting takes 0.3 / 0.2 = 1.5 x as long: 131.77 ms
    t, method, ratio, gpu = compute.step_time_s(256, 0.3, math.nan, 1457.0, 128, 0.2)
    assert t == pytest.approx(128 / 1457 * 1.5, rel=1e-12)
    assert compute.METHODS[int(method)] == "re-projected measurement"
    # the same GPU (no midpoint given: the model's own step), so the GPU part is x1 and the ratio 0.3 / 0.2
    assert ratio == pytest.approx(1.5, rel=1e-12) and gpu == 1.0


def test_step_time_vectorised_over_scenarios() -> None:
    # measured step time as taken; a throughput re-projected, 128 / 1000 = 128 ms x 0.2 / 0.1 = 256 ms;
    # the model alone, 50 ms; the same throughput where the model says nothing changed, 128 ms
    t, method, _, _ = compute.step_time_s(
        np.array([128.0, 128.0, 128.0, 64.0]),
        np.array([0.2, 0.2, 0.05, 0.1]),
        np.array([0.087, math.nan, math.nan, math.nan]),
        np.array([math.nan, 1000.0, math.nan, 1000.0]),
        np.array([128.0, 128.0, 128.0, 128.0]),
        np.array([0.2, 0.1, 0.2, 0.1]),
    )
    assert t.tolist() == pytest.approx([0.087, 0.256, 0.05, 0.128], rel=1e-12)  # type: ignore[union-attr]
    assert method.tolist() == [0.0, 3.0, 2.0, 1.0]  # type: ignore[union-attr]


def test_scaling_efficiency_at_the_node_boundary() -> None:
    # 2 GPUs of 8 on one node: the NVLink all-reduce alone; 8 of 8 still one node; 9 spans two:
    # 0.9 x 0.95 = 0.855
    assert compute.scaling_efficiency(2, 8, 0.9, 0.95) == 0.9
    assert compute.scaling_efficiency(8, 8, 0.9, 0.95) == 0.9
    assert compute.scaling_efficiency(9, 8, 0.9, 0.95) == pytest.approx(0.855, rel=1e-12)
    got = compute.scaling_efficiency(np.array([1.0, 4.0, 16.0]), 4, 0.8, 0.5)  # 1, 0.8, 0.8 x 0.5 = 0.4
    assert got.tolist() == pytest.approx([1.0, 0.8, 0.4], rel=1e-12)  # type: ignore[union-attr]


def test_fp32_lanes_per_architecture_by_hand() -> None:
    # 4 sub-partitions x 16 FP32 lanes = 64 (Volta, Turing, GA100: 6,912 cores / 108 SMs = 64);
    # 4 x 32 = 128 on GA10x, Ada, Hopper, Blackwell
    assert compute.FP32_LANES_FED_PER_SM == 4 * 16
    lanes = {a: n for a, (n, _) in compute.ARCHITECTURE_FP32_LANES.items()}
    assert lanes == {
        "Volta GV100": 64,
        "Turing TU10x": 64,
        "Ampere GA100": 6912 // 108,
        "Ampere GA10x": 128,
        "Ada AD10x": 128,
        "Hopper GH100": 4 * 32,
        "Blackwell GB100": 128,
        "Blackwell GB20x": 128,
    }
    # min(1, 64 / lanes): never above the peak, even for a narrower SM (32 lanes: 64 / 32 = 2 -> 1)
    assert compute.fp32_convolution_share(np.array([32.0, 64.0, 128.0])).tolist() == [1.0, 1.0, 0.5]  # type: ignore[union-attr]


def test_a_measurement_differing_by_rounding_only_stays_measured() -> None:
    """The model's two runs (the scenario's and the measurement's) agree but for one rounding step:
    87.85 ms as measured, labelled measured, not "re-projected" by a factor 1 + 2.2e-16; a real
    change of 1e-6 re-projects (87.85 ms x 1.000001)."""
    anchor = 0.2
    noisy = anchor * (1 + 2.2e-16)
    t, method, ratio, _ = compute.step_time_s(128, noisy, 0.08785, math.nan, 128, anchor)
    assert t == 0.08785 and compute.METHODS[int(method)] == "measured step time" and ratio == 1.0
    t, method, _, _ = compute.step_time_s(128, anchor * (1 + 1e-6), 0.08785, math.nan, 128, anchor)
    assert t == pytest.approx(0.08785 * (1 + 1e-6), rel=1e-12)
    assert compute.METHODS[int(method)] == "re-projected measurement"


# ----------------------------------------------------------------- issue 41: stacks, depthwise, re-projection


def test_memory_time_splits_kept_and_depthwise_traffic_by_hand() -> None:
    # EfficientNet-B0, mixed: 291.6 MB per example on a V100 (900 GB/s) at e_m 0.7 and depthwise e_dw 0.1,
    # depthwise 0.11 of it, an unfused stack (kept 1):
    # 291.6e6 x 0.89 / 630e9 + 291.6e6 x 0.11 / 90e9 = 0.411943 ms + 0.356400 ms = 0.768343 ms
    got = compute.memory_time_per_example_s(291.6e6, 900e9, 0.7, 1.0, 0.11, 0.1)
    assert got == pytest.approx(291.6e6 * 0.89 / 630e9 + 291.6e6 * 0.11 / 90e9, rel=1e-12)
    assert got == pytest.approx(0.768343e-3, rel=1e-6)
    # A fusing stack keeping 0.6 of it: the depthwise bytes stay, the rest shrinks:
    # 291.6e6 x (0.6 - 0.11) / 630e9 + 0.3564 ms = 0.2268 ms + 0.3564 ms = 0.5832 ms
    assert compute.memory_time_per_example_s(291.6e6, 900e9, 0.7, 0.6, 0.11, 0.1) == pytest.approx(
        0.2268e-3 + 0.3564e-3, rel=1e-9
    )
    # No depthwise share: the old term exactly, whatever e_dw is (a mutated default would show here)
    assert compute.memory_time_per_example_s(TRAFFIC, BANDWIDTH, 0.7) == TRAFFIC / (BANDWIDTH * 0.7)


def test_stack_traffic_share_by_stack() -> None:
    # The optimized and compiled stacks fuse; ngc and eager do not.
    assert compute.STACK_FUSES == {"ngc": 0.0, "eager": 0.0, "optimized": 1.0, "compiled": 1.0}
    # ResNet-50 mixed: 0.3126 of its traffic fusable -> a fusing stack keeps 1 - 0.3126 = 0.6874
    assert compute.stack_traffic_share(0.3126, 1.0) == pytest.approx(0.6874, rel=1e-12)
    assert compute.stack_traffic_share(0.3126, 0.0) == 1.0


def test_fused_traffic_share_from_per_op_bytes_by_hand() -> None:
    # ResNet-50 mixed, per example (benchmarks/results/model_traffic.json): relu_ 38,434,816, _to_copy 915,168 and
    # div 401,408 B go whole (unary); add 33,718,272, add_ 33,116,160 and threshold_backward 57,652,224 keep one read
    # of three (binary); convolutions and batch norms keep all of theirs.
    ops = {
        "relu_": 38434816.0,
        "_to_copy": 915168.0,
        "div": 401408.0,
        "add": 33718272.0,
        "add_": 33116160.0,
        "threshold_backward": 57652224.0,
        "convolution": 43552768.0,
        "native_batch_norm": 44455936.0,
    }
    unary = 38434816 + 915168 + 401408  # 39,751,392
    binary = 33718272 + 33116160 + 57652224  # 124,486,656 -> 2/3 = 82,991,104
    assert compute.fused_traffic_share(ops, 392.6e6) == pytest.approx((unary + binary * 2 / 3) / 392.6e6, rel=1e-12)
    # (39,751,392 + 82,991,104) / 392.6e6 = 122,742,496 / 392.6e6 = 0.312640
    assert compute.fused_traffic_share(ops, 392.6e6) == pytest.approx(0.312640, rel=1e-5)
    assert compute.fused_traffic_share({"convolution": 1e6}, 2e6) == 0.0


def test_tensor_convolution_share_fed_from_shared_memory_by_hand() -> None:
    # 128 B per clock per SM at 52 FLOPs per byte of 16-bit operands: 52 x 128 / 2 = 3,328 FLOPs per clock.
    assert compute.SHARED_MEMORY_BYTES_PER_CLOCK == 32 * 4
    assert compute.OPERAND_BYTES == {"tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0}
    # Hopper's 4,096 per clock: 3,328 / 4,096 = 0.8125; A100's 2,048 and the GeForce cards' 512: capped at 1
    assert compute.tensor_convolution_share(4096, 2.0, 52.0) == pytest.approx(0.8125, rel=1e-12)
    assert compute.tensor_convolution_share(2048, 2.0, 52.0) == 1.0
    assert compute.tensor_convolution_share(512, 2.0, 52.0) == 1.0
    # TF32 on Hopper: 2,048 per clock at 4-byte operands, 52 x 128 / 4 = 1,664: 1,664 / 2,048 = 0.8125;
    # Blackwell's 8,192 at 16-bit: 3,328 / 8,192 = 0.40625
    assert compute.tensor_convolution_share(2048, 4.0, 52.0) == pytest.approx(0.8125, rel=1e-12)
    assert compute.tensor_convolution_share(8192, 2.0, 52.0) == pytest.approx(0.40625, rel=1e-12)


def test_reprojection_keeps_the_gpu_change_inside_the_published_band_by_hand() -> None:
    # The articles' V100 step (87 ms at batch 128) moved to an H100 at batch 512: the model on the V100 at
    # batch 512 takes 4 x 0.30 = 1.2 s against 0.30 s at 128 (x4 for the batch), and says the H100 is
    # 1.2 / 0.3 = 4.0x faster; the published band V100 -> H100 is [3.30, 3.45]: x3.45 is used.
    # ratio = (1.2 / 0.3) / 3.45 = 1.15942; 87 ms x 1.15942 = 100.87 ms
    ratio, gpu = compute.reprojection(0.3, 1.2, 0.3, 3.30, 3.45)
    assert gpu == 3.45 and ratio == pytest.approx(4.0 / 3.45, rel=1e-12)
    # Inside the band the model's own speed-up stands: 1.2 / 0.36 = 3.3333 -> ratio 4 / 3.3333 = 1.2
    ratio, gpu = compute.reprojection(0.36, 1.2, 0.3, 3.30, 3.45)
    assert gpu == pytest.approx(1.2 / 0.36, rel=1e-12) and ratio == pytest.approx(1.2, rel=1e-12)
    # Below the band it is raised to its bottom: the model's x3.0 -> x3.30
    ratio, gpu = compute.reprojection(0.4, 1.2, 0.3, 3.30, 3.45)
    assert gpu == 3.30 and ratio == pytest.approx(4.0 / 3.30, rel=1e-12)
    t, method, r, g = compute.step_time_s(512, 0.3, 0.087, math.nan, 128, 0.3, 1.2, 3.30, 3.45)
    assert t == pytest.approx(0.087 * 4.0 / 3.45, rel=1e-12) and r == pytest.approx(4.0 / 3.45, rel=1e-12)
    assert g == 3.45 and compute.METHODS[int(method)] == "re-projected measurement"


def test_model_terms_pass_the_stack_and_depthwise_shares_to_the_memory_term() -> None:
    # ResNet-50's figures with a fusing stack keeping 0.6 and a 0.1 depthwise share at e_dw 0.35:
    # 392.6e6 x 0.5 / 630e9 + 392.6e6 x 0.1 / 315e9 = 0.311587 + 0.124635 = 0.436222 ms per example
    _, m, _, _ = compute.model_terms(64, *TERMS, kept_share=0.6, depthwise_share=0.1, depthwise_efficiency=0.35)
    assert m == pytest.approx(392.6e6 * 0.5 / 630e9 + 392.6e6 * 0.1 / 315e9, rel=1e-12)


def test_step_time_outputs_per_row_and_no_warnings() -> None:
    # A measured row moved (x2 by the model, the GPU change x1.5 inside [1, 2]: 0.087 x 2 / 1.5), and a row with
    # nothing measured whose model is 0 s (0 / 0 in the re-projection: no RuntimeWarning, and ratio and GPU
    # speed-up 1 there); the first row's ratio 2 / 1.5 and GPU 1.5.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t, method, ratio, gpu = compute.step_time_s(
            np.array([128.0, 64.0]),
            np.array([0.2, 0.0]),
            np.array([0.087, math.nan]),
            np.array([math.nan, math.nan]),
            np.array([128.0, 128.0]),
            np.array([0.15, 0.0]),
            np.array([0.3, 0.0]),
            1.0,
            2.0,
        )
    assert t.tolist() == pytest.approx([0.087 * 2 / 1.5, 0.0], rel=1e-12)  # type: ignore[union-attr]
    assert method.tolist() == [3.0, 2.0]  # type: ignore[union-attr]
    assert ratio.tolist() == pytest.approx([2 / 1.5, 1.0], rel=1e-12)  # type: ignore[union-attr]
    assert gpu.tolist() == pytest.approx([1.5, 1.0], rel=1e-12)  # type: ignore[union-attr]
    # A zero throughput divides by zero without a warning (resolve refuses it before a plan gets here).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compute.step_time_s(64, 0.1, math.nan, 0.0, 128, 0.1)
    # Nothing measured anywhere: method "model" (2), ratio and GPU 1, for arrays too.
    nan2 = np.full(2, math.nan)
    t, method, ratio, gpu = compute.step_time_s(np.array([1.0, 2.0]), np.array([0.1, 0.2]), nan2, nan2, nan2, nan2)
    assert method.tolist() == [2.0, 2.0] and ratio.tolist() == [1.0, 1.0] and gpu.tolist() == [1.0, 1.0]  # type: ignore[union-attr]
