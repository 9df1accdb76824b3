"""The step-time model and its calibration: physics, consistency across GPUs, honest errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import calc
from calc import catalog, compute
from calc.calibrate import calibration, fit, fitted, per_gpu, summary, validation

MODELS = [m for m, spec in calc.models().items() if spec.params < 2e10]  # models one GPU can train


def test_terms_by_hand() -> None:
    # 24.66 GFLOPs at 50 % of 100 TFLOP/s = 0.4932 ms; 400 MB at 60 % of 2 TB/s = 0.3333 ms.
    c = compute.compute_time_per_example_s(24.66e9, 100e12, 0.5)
    m = compute.memory_time_per_example_s(400e6, 2e12, 0.6)
    assert c == pytest.approx(0.4932e-3, rel=1e-12)
    assert m == pytest.approx(400e6 / 1.2e12, rel=1e-12)
    # Fixed: 300 MB of weights/optimizer at 1.2 TB/s = 0.25 ms, + 2 ms launch, + 4 examples' fill.
    f = compute.fixed_time_s(300e6, 2e12, 0.6, 2e-3, 4.0, c + m)
    assert f == pytest.approx(0.25e-3 + 2e-3 + 4 * (c + m), rel=1e-12)
    # Batch 64, tuned stack: 64 x (c + m) + fixed.
    assert compute.model_step_time_s(64, c + m, f, 1.0) == pytest.approx(64 * (c + m) + f, rel=1e-12)


def test_measurement_is_kept_exactly_where_it_was_taken_and_reprojected_elsewhere() -> None:
    t, method, _, _ = compute.step_time_s(128, 0.2, 0.087, math.nan, 128, 0.2)
    assert t == 0.087 and compute.METHODS[int(method)] == "measured step time"
    t, method, _, _ = compute.step_time_s(512, 0.1, 0.087, math.nan, 128, 0.2)  # the model says half
    assert t == pytest.approx(0.0435) and compute.METHODS[int(method)] == "re-projected measurement"
    t, method, _, _ = compute.step_time_s(64, 0.1, math.nan, 1000.0, 128, 0.1)  # throughput at batch 128
    assert t == pytest.approx(0.128) and compute.METHODS[int(method)] == "measured throughput"


def test_scaling_efficiency_rule() -> None:
    assert compute.scaling_efficiency(1, 8, 0.9, 0.95) == 1.0
    assert compute.scaling_efficiency(8, 8, 0.9, 0.95) == 0.9
    assert compute.scaling_efficiency(64, 8, 0.9, 0.95) == pytest.approx(0.855)


def test_fit_is_global_and_physical() -> None:
    f = fitted()
    assert set(f.compute_efficiency) == {"fp32", "tf32", "mixed"}
    for e in (*f.compute_efficiency.values(), f.memory_efficiency):
        assert 0.01 < e <= 1
    assert 0 <= f.launch_overhead_s < 0.1 and f.fill_examples >= 0
    assert f.rows == len(calc.catalog.measurements()) and len(f.gpus) >= 4


def _rate(gpu: str, model: str, precision: str, batch: int) -> float:
    return calc.plan(
        gpu=gpu, model=model, precision=precision, batch_size=batch, reserved_bytes=0, gpu_memory_bytes=1e13
    ).gpu_samples_per_s


BETTER = [
    ("H200", "H100-SXM"),
    ("H100-SXM", "H100-PCIe"),
    ("B200", "H200"),
    ("A100-SXM4-80GB", "A100-SXM4-40GB"),
    ("RTX-4090", "RTX-3090"),
]


@pytest.mark.parametrize(("better", "worse"), BETTER)
@pytest.mark.parametrize("model", MODELS)
def test_a_gpu_at_least_as_good_on_peak_and_bandwidth_is_never_slower(better: str, worse: str, model: str) -> None:
    g = calc.gpus()
    for precision in ("fp32", "bf16" if "bf16" in g[worse].peak_flops_per_s else "fp16"):
        b, w = g[better], g[worse]
        assert (
            b.peak(precision) >= w.peak(precision) and b.memory_bandwidth_bytes_per_s >= w.memory_bandwidth_bytes_per_s
        )
        assert _rate(better, model, precision, 32) >= _rate(worse, model, precision, 32) * (1 - 1e-12), precision


@pytest.mark.parametrize("model", MODELS)
def test_h200_over_h100_never_exceeds_their_bandwidth_ratio(model: str) -> None:
    g = calc.gpus()
    ratio = g["H200"].memory_bandwidth_bytes_per_s / g["H100-SXM"].memory_bandwidth_bytes_per_s  # 4.8 / 3.35
    for batch in (8, 32, 64):
        r = _rate("H200", model, "bf16", batch) / _rate("H100-SXM", model, "bf16", batch)
        assert 1 <= r <= ratio + 1e-12


def test_a_measured_v100_step_reprojected_to_h100_changes() -> None:
    v100 = calc.plan("beast-imagenet-4xv100")
    assert v100.step_time_s == 0.087 and v100.step_method == "measured step time"  # the article, unchanged
    h100 = calc.plan("beast-imagenet-4xv100", gpu="H100-SXM")
    assert h100.step_method == "re-projected measurement"
    assert h100.batch_size == 512 and h100.step_time_s != 0.087
    # The speed-up is bounded by the GPUs' own ratios at the preset's fp16 (NVIDIA's 1,457 img/s is a
    # mixed-precision figure): tensor peak 989 / 125 = 7.91.
    assert v100.gpu_samples_per_s < h100.gpu_samples_per_s < 989 / 125 * v100.gpu_samples_per_s
    # Issue 41: the GPU change goes by the model's V100 -> H100 speed-up kept inside the published band
    # (calibration.yaml, same stack, mixed precision, batch 256 on both: ResNet-50 3,963.7 / 1,200 = x3.303,
    # EfficientNet-B0 4,493.3 / 1,301 = x3.4537), and the batch beyond the 128 the V100 holds (16 GiB at
    # 98 MiB + 103 MiB per example: 158, 128 in powers of two) moves with the GPU, each GPU at its own batch
    # as the band's rows are, not by the model on a batch of 512 the V100 cannot hold (x3.89 so: x3.45 for
    # the GPU times the model's x1.13 for the batch; x4.45 before issue 41, the model's own speed-up).
    # Hand-worked: 128 / 0.087 s = 1,471.26 img/s x 4,493.3 / 1,301 = 5,081.3 img/s per GPU.
    free = {"step_time_s": None, "measured_gpu": None, "measured_batch_size": None, "measured_precision": None}
    m_v = calc.plan("beast-imagenet-4xv100", **free, batch_size=128)
    assert h100.values["mid_batch_size"] == 128 and h100.values["anchor_batch_size"] == 128
    mid = h100.values["mid_model_step_time_s"]  # the model on the V100 at batch 128, per 512 examples
    assert mid == pytest.approx(m_v.model_step_time_s * 512 / 128, rel=1e-12)
    assert h100.values["anchor_model_step_time_s"] == pytest.approx(m_v.model_step_time_s, rel=1e-12)
    assert h100.values["reprojection_gpu_rate_ratio"] == pytest.approx(4493.3 / 1301, rel=1e-12)  # the band's top
    assert h100.step_time_s == pytest.approx(0.087 * 4 / (4493.3 / 1301), rel=1e-12)
    assert h100.gpu_samples_per_s == pytest.approx(128 / 0.087 * 4493.3 / 1301, rel=1e-12)  # 5,081.3
    assert h100.gpu_samples_per_s / v100.gpu_samples_per_s == pytest.approx(3.4537, abs=1e-4)  # not 3.89, 4.45
    said = next(w for w in h100.warnings if "re-projected" in w)
    assert "1,471 samples/s per GPU" in said and "5,081 samples/s per GPU" in said
    assert "the GPU change at x3.45 (the batch beyond the 128 the V100-SXM2-16GB holds moves with the GPU)" in said
    assert "re-projected" in h100.explain() or "measured step time on V100" in h100.explain()


def test_halving_the_batch_does_not_halve_per_gpu_throughput() -> None:
    p128 = calc.plan("beast-imagenet-4xv100")
    p64 = calc.plan("beast-imagenet-4xv100", batch_size=64)
    assert p64.step_method == "re-projected measurement"
    assert 0.5 * p128.gpu_samples_per_s < p64.gpu_samples_per_s < p128.gpu_samples_per_s


def test_throughput_rises_with_batch_and_levels_off() -> None:
    rates = [_rate("H100-SXM", "resnet50", "bf16", n) for n in (1, 4, 16, 64, 256, 1024)]
    assert all(a < b for a, b in itertools.pairwise(rates))
    gains = [b / a for a, b in itertools.pairwise(rates)]
    assert all(b < a for a, b in itertools.pairwise(gains)) and gains[-1] < 1.25  # levels off


AMPERE_OR_LATER = [n for n, g in calc.gpus().items() if "tf32" in g.peak_flops_per_s]


@pytest.mark.parametrize("gpu", AMPERE_OR_LATER)
def test_tf32_plans_on_every_ampere_or_later_gpu_and_model(gpu: str) -> None:
    for model in MODELS:
        try:
            p = calc.plan(gpu=gpu, model=model, precision="tf32", optimizer="adam", state_shards=8, gpus_per_job=8)
        except calc.DoesNotFitError:
            continue  # a 7B model on a 24 GB card: refused with a reason, not a crash
        assert p.step_time_s > 0 and math.isfinite(p.samples_per_s)


def test_precisions_a_gpu_lacks_are_refused_even_when_measured() -> None:
    with pytest.raises(calc.InputError, match="precision: V100-SXM2-16GB has no bf16"):
        calc.plan("beast-imagenet-4xv100", precision="bf16")
    with pytest.raises(calc.InputError, match="precision: V100-SXM2-16GB has no fp8"):
        calc.plan(gpu="V100-SXM2-16GB", precision="fp8")


def test_fp8_says_it_is_an_estimate() -> None:
    p = calc.plan(gpu="H100-SXM", model="gpt_1b", precision="fp8", optimizer="adam")
    assert any("fp8" in w and "estimate" in w for w in p.warnings)


def test_the_eager_stack_is_slower_than_tuned() -> None:
    tuned = calc.plan(gpu="A100-SXM4-80GB", precision="fp16", batch_size=256)
    eager = calc.plan(gpu="A100-SXM4-80GB", precision="fp16", batch_size=256, stack="eager")
    per_byte = fitted().eager_s_per_byte["mixed"]
    assert per_byte > 0  # plain eager NCHW is slower than channels_last: measured in pairs, not assumed
    # A CNN: each of the 256 examples pays the eager cost per byte of its traffic, on top of the tuned step.
    extra = 256 * per_byte * tuned.memory_traffic_bytes_per_example
    assert eager.step_time_s == pytest.approx(tuned.step_time_s + extra, rel=1e-12)
    assert "paired" in eager.sources["stack_factor"]


def test_eager_cost_per_byte_is_the_mean_over_paired_rows() -> None:
    # Each pair (one model, GPU, precision, batch, eager and tuned): (1 / eager - 1 / tuned) / traffic.
    # e.g. V100-SXM2-16GB fp16 ResNet-50 at batch 256 and H100 bf16 at 256: similar seconds per image
    # (0.17 and 0.25 ms) at 3.7x different speeds, hence added, not multiplied.
    rows, models = calc.catalog.measurements(), calc.catalog.models()
    tuned = {(m.model, m.gpu, m.precision, m.batch_size): m.samples_per_s for m in rows if m.stack == "ngc"}
    per_byte = [
        (1 / m.samples_per_s - 1 / tuned[(m.model, m.gpu, m.precision, m.batch_size)])
        / models[m.model].traffic("mixed")[0]
        for m in rows
        if m.stack == "eager"
        and m.precision in ("fp16", "bf16")
        and (m.model, m.gpu, m.precision, m.batch_size) in tuned
    ]
    assert len(per_byte) >= 5
    assert fitted().eager_s_per_byte["mixed"] == pytest.approx(sum(per_byte) / len(per_byte), rel=1e-12)


def test_eager_transformers_keep_the_factor() -> None:
    kw = {"model": "gpt_1b", "gpu": "H100-SXM", "precision": "bf16", "batch_size": 1, "optimizer": "adamw"}
    tuned, eager = calc.plan(**kw), calc.plan(stack="eager", **kw)
    f = fitted().stack_factors["eager"]["mixed"]
    assert eager.inputs["stack_factor"] == f and eager.inputs["stack_s_per_byte"] == 0.0
    assert eager.step_time_s > tuned.step_time_s


def test_eager_cnn_bias_by_gpu_family_held_out() -> None:
    # Held-out ResNet-50 rows (validation.yaml, Lambda's eager NCHW runs): with the eager cost added per
    # example the V100 AMP row is within 10 % (it was -17 % with the multiplied 1.5x; +9 % since issue 41's
    # fit, whose memory efficiency no longer stands in for EfficientNet's depthwise convolutions) and no GPU
    # family is off by more than 20 % (RTX 4090 -19 % / -18 %: -25 % before issue 41's shared-memory feed).
    t = calc.calibrate.validation()
    r = t[(t["model"] == "resnet50") & (t["stack"] == "eager")]
    v100 = r[(r.gpu == "V100-SXM2-16GB") & (r.precision == "fp16")]
    assert len(v100) == 1 and abs(float(v100.error.iloc[0])) < 0.1
    assert (r.error.abs() < 0.2).all(), r[["gpu", "precision", "error"]]


def test_eager_factor_is_the_geometric_mean_of_paired_rows() -> None:
    # calibration.yaml pairs ResNet-50 NCHW (eager) and NHWC (tuned) runs; e.g. H100 bf16 at
    # batch 256: 3,964 / 2,221 = 1.78 (benchmarks/results/gpu_step_times_h100.json).
    rows = calc.catalog.measurements()
    tuned = {(m.model, m.gpu, m.precision, m.batch_size): m.samples_per_s for m in rows if m.stack == "ngc"}
    pairs = [
        tuned[(m.model, m.gpu, m.precision, m.batch_size)] / m.samples_per_s
        for m in rows
        if m.stack == "eager" and m.precision == "tf32" and (m.model, m.gpu, m.precision, m.batch_size) in tuned
    ]
    assert len(pairs) >= 2
    expected = math.exp(sum(math.log(x) for x in pairs) / len(pairs))
    assert calc.calibrate.eager_factors()["tf32"] == pytest.approx(expected, rel=1e-12)


def test_transformer_eager_factor_from_published_transformer_pairs_by_hand() -> None:
    # Issue 41: a transformer's eager factor is no longer the CNN pairs' (eager NCHW / channels_last, 1.50
    # in mixed precision) but the published eager / torch.compile pairs of Llama 2 with FSDP (PyTorch blog,
    # IBM and Meta 2024, Tables 1-2, MFU compile / no-compile): A100 0.68/0.57, 0.60/0.51, 0.54/0.47,
    # 0.55/0.50; H100 0.45/0.37, 0.43/0.35, 0.38/0.32 twice. ln: 0.17646 + 0.16252 + 0.13884 + 0.09531
    # + 0.19574 + 0.20585 + 2 x 0.17185 = 1.31842; / 8 = 0.16480; exp = 1.17916 (mixed).
    f = calc.calibrate.transformer_eager_factors()
    assert f["mixed"] == pytest.approx(1.17916, abs=2e-5)
    # No tf32 or fp32 pair: the CNN pairs' pattern (fp32 1.0431, tf32 1.3889, mixed 1.4961) scaled to it:
    # 1 + 0.3889 x 0.17916 / 0.4961 = 1.1404; 1 + 0.0431 x 0.3612 = 1.0156.
    cnn = calc.calibrate.eager_factors()
    scale = (f["mixed"] - 1) / (cnn["mixed"] - 1)
    assert f["tf32"] == pytest.approx(1 + (cnn["tf32"] - 1) * scale, rel=1e-12)
    assert f["tf32"] == pytest.approx(1.1404, abs=2e-4) and f["fp32"] == pytest.approx(1.0156, abs=2e-4)
    assert fitted().stack_factors["eager"] == f


def test_torchtitan_eager_and_compiled_differ_by_the_transformer_factor() -> None:
    # torchtitan's Llama 3.1 8B on 8 H100s measured 5,762 (eager) and 6,667 (compiled) tokens/s per GPU: x1.157.
    # The plans differ by the published transformer factor x1.179, not the CNN pairs' x1.496 (the eager run was
    # planned 13 % slow and the compiled one 13 % fast, the same kernels' count times 1.5).
    r = next(r for r in calc.calibrate.llm_rows("llm") if r["name"] == "torchtitan-llama31-8b-fsdp8-eager")
    free = {"reserved_bytes": 0, "model_state_bytes": 0, "activation_bytes_per_example": 1}
    kw = {**calc.calibrate.llm_layout(r), **free}
    eager, compiled = calc.plan(**kw), calc.plan(**{**kw, "stack": "compiled"})  # the same kernels
    # The factor multiplies the step but its exposed data-parallel traffic (2 ms of 2.2 s): 1.1790 of 1.1792.
    ratio = eager.step_time_s / compiled.step_time_s
    assert ratio == pytest.approx(calc.calibrate.transformer_eager_factors()["mixed"], rel=3e-4) and ratio != 1.5
    assert 1.10 < eager.step_time_s / compiled.step_time_s < 1.23  # the published band of the pairs


def test_calibration_table_and_leave_one_gpu_out() -> None:
    t = calibration()
    assert len(t) == len(calc.catalog.measurements())
    assert np.isfinite(t["logo_predicted_samples_per_s"]).all()
    s = summary(t)
    # The honest figure for a GPU nobody measured; quoted in the README.
    assert s["logo_geomean_error"] <= 0.25, s
    assert s["in_sample_geomean_error"] <= s["logo_geomean_error"] + 1e-9
    g = per_gpu(t)
    assert set(g["gpu"]) == set(t["gpu"])


def test_leave_one_gpu_out_never_sees_the_gpu() -> None:
    f = fit(exclude_gpu="H100-SXM")
    assert "H100-SXM" not in f.gpus and f.excluded_gpu == "H100-SXM"


def test_validation_rows_are_never_fitted() -> None:
    v = validation()
    fitted_sources = set(calibration()["source"])
    assert len(v) > 0 and not set(v["source"]) & fitted_sources
    for s in v["source"]:
        assert not any(k in s for k in ("DeepLearningExamples PyTorch", "H100 run"))


def test_every_output_has_its_formula_registered_next_to_its_function() -> None:
    from calc.formula import FORMULAS

    assert set(calc.OUTPUTS) <= set(FORMULAS)
    p = calc.plan("beast-imagenet-4xv100")
    for name, out in calc.OUTPUTS.items():
        value = getattr(p, name)
        # The declared type: whole counts come back as int, every other figure as a float.
        assert type(value) is (int if out.integer else float), name
    assert p.batch_size == 128 and p.step_time_s == pytest.approx(0.087)  # the preset's own inputs


def test_llm_step_time_against_torchtitan_llama3_8b() -> None:
    # pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Table 1: Llama 3.1 8B,
    # 8 H100s, FSDP, local batch 2 of 8,192 tokens, bf16: 5,762 tokens/s per GPU eager, 6,667
    # with torch.compile (500 W HBM2e H100s). Not a calibration row: an independent LLM check.
    # Before the fill term saturated with work per example the model gave ~1,250 (4.6x slow).
    p = calc.plan("llama3-8b-pretrain-8xh100", batch_size=2)
    tokens_per_s_per_gpu = p.gpu_samples_per_s * 8192
    assert 5762 * 0.8 < tokens_per_s_per_gpu < 6667 * 1.3


def test_fp32_convolution_share_by_hand() -> None:
    # A 64-lane SM (V100, A100: 4 schedulers x 16 FP32 lanes) feeds all its lanes: 64 / 64 = 1.
    # A 128-lane SM (H100, RTX 4090) feeds 64 of 128 in a convolution: 64 / 128 = 0.5.
    inf = math.inf  # no shared-memory ceiling: the fp32 rule alone
    assert compute.fp32_convolution_share(64) == 1.0
    assert compute.fp32_convolution_share(128) == 0.5
    assert catalog.convolution_peak_share("H100-SXM", "fp32", "cnn", inf)[0] == 0.5
    assert catalog.convolution_peak_share("RTX-4090", "fp32", "cnn", inf)[0] == 0.5
    assert catalog.convolution_peak_share("V100-SXM2-16GB", "fp32", "cnn", inf)[0] == 1.0
    assert catalog.convolution_peak_share("A100-SXM4-80GB", "fp32", "cnn", inf)[0] == 1.0
    # Tensor cores (tf32, 16-bit) are not limited by the FP32 lanes; GEMMs (transformers) by nothing.
    assert catalog.convolution_peak_share("H100-SXM", "tf32", "cnn", inf)[0] == 1.0
    assert catalog.convolution_peak_share("H100-SXM", "bf16", "cnn", inf)[0] == 1.0
    assert catalog.convolution_peak_share("H100-SXM", "fp32", "transformer", 48.0)[0] == 1.0
    assert catalog.convolution_peak_share("H100-SXM", "bf16", "transformer", 48.0)[0] == 1.0
    # No lane figure (AMD): the datasheet peak is used, and the source says so.
    share, src = catalog.convolution_peak_share("MI300X", "fp32", "cnn", inf)
    assert share == 1.0 and "no FP32 lane figure" in src
    # Every NVIDIA GPU preset with an fp32 peak names its architecture (gpus.yaml), each with a lane count.
    for name, g in calc.gpus().items():
        if name.startswith(("V100", "A1", "A3", "A4", "L4", "H1", "H2", "GH", "B2", "RTX", "T4")):
            assert g.architecture in compute.ARCHITECTURE_FP32_LANES, name
            assert "fp32" not in g.peak_flops_per_s or catalog.convolution_peak_share(name, "fp32", "cnn", inf)[1]


def test_an_unknown_architecture_in_a_gpu_preset_is_refused_by_field() -> None:
    from calc.catalog import _architecture, _Entry
    from calc.errors import PresetError

    assert _architecture(_Entry("gpus.yaml", "X", {"architecture": "Hopper GH100"})) == "Hopper GH100"
    assert _architecture(_Entry("gpus.yaml", "X", {})) == ""
    with pytest.raises(PresetError) as err:
        _architecture(_Entry("gpus.yaml", "X", {"architecture": "Hopper"}))
    assert err.value.field == "gpus.yaml: X: architecture" and "Hopper GH100" in err.value.message


def test_fp32_resnet50_math_time_on_h100_and_a100_by_hand() -> None:
    # ResNet-50 trains at 24.3 GFLOPs per image (models.yaml). fp32 (TF32 off) convolutions:
    # H100 SXM 67 TFLOP/s x 64 / 128 lanes = 33.5 TFLOP/s; A100 19.5 TFLOP/s x 64 / 64 = 19.5.
    # At the fitted fp32 efficiency e: H100 24.3e9 / (33.5e12 e) = 0.72537 ms / e,
    # A100 24.3e9 / (19.5e12 e) = 1.24615 ms / e; the H100 is 33.5 / 19.5 = 1.718x faster, not 67 / 19.5 = 3.44x.
    e = fitted().compute_efficiency["fp32"]
    h = calc.plan(gpu="H100-SXM", model="resnet50", precision="fp32", batch_size=64, reserved_bytes=0)
    a = calc.plan(gpu="A100-SXM4-80GB", model="resnet50", precision="fp32", batch_size=64, reserved_bytes=0)
    assert h.compute_time_per_example_s * e == pytest.approx(0.72537e-3, rel=1e-4)
    assert a.compute_time_per_example_s * e == pytest.approx(1.24615e-3, rel=1e-4)
    assert a.compute_time_per_example_s / h.compute_time_per_example_s == pytest.approx(1.718, rel=1e-3)
    assert "Hopper GH100" in h.sources["efficiency"]
    # A transformer's fp32 GEMMs keep the full peak (cuBLAS SGEMM: 51.6 of 67 TFLOP/s measured).
    v = calc.plan(gpu="H100-SXM", model="vit_b16", precision="fp32", batch_size=64, reserved_bytes=0)
    assert v.efficiency == pytest.approx(e * fitted().family_factors["transformer"], rel=1e-12)


def test_fp32_class_leave_one_gpu_out_improves() -> None:
    # Before the fp32 convolution share (issue 21, 2026-11-23) the fp32 rows' leave-one-GPU-out
    # geometric-mean error was 21.1 % (47 rows; CNN fp32 rows 23.7 %, 38 rows): V100 predicted
    # x0.73-0.79 of measured, H200 x1.19. The rule must beat that for a GPU the fit never saw.
    t = calibration()
    fp32 = t[t["precision"] == "fp32"]
    logo = np.exp(np.mean(np.abs(np.log(fp32["logo_predicted_samples_per_s"] / fp32["measured_samples_per_s"])))) - 1
    assert logo < 0.211
    assert logo < 0.16  # 13.7 % after the change; a margin, not the value pasted back
    # and the other classes do not regress (before: tf32 18.9 %, mixed 21.5 %).
    for cls, before in (("tf32", 0.189), ("fp16", 0.215)):
        rows = t[t["precision"].isin(["fp16", "bf16"])] if cls == "fp16" else t[t["precision"] == cls]
        err = np.exp(np.mean(np.abs(np.log(rows["logo_predicted_samples_per_s"] / rows["measured_samples_per_s"])))) - 1
        assert err <= before + 0.005, cls


def test_validation_summary_groups_by_gpu_precision_and_stack() -> None:
    import pandas as pd

    # two rows of one group, 10 % fast and 10 % slow: |ln 1.1| each -> error 10 %, mean ratio 1
    t = pd.DataFrame(
        {
            "gpu": ["B200", "B200", "H200"],
            "precision": ["fp16", "fp16", "tf32"],
            "stack": ["eager", "eager", "eager"],
            "predicted_samples_per_s": [110.0, 100.0, 50.0],
            "measured_samples_per_s": [100.0, 110.0, 100.0],
        }
    )
    s = calc.calibrate.validation_summary(t).set_index("gpu")
    assert s.loc["B200", "rows"] == 2
    assert s.loc["B200", "geomean_error"] == pytest.approx(0.1) and s.loc["B200", "mean_ratio"] == pytest.approx(1.0)
    assert s.loc["H200", "geomean_error"] == pytest.approx(1.0) and s.loc["H200", "mean_ratio"] == pytest.approx(0.5)


def test_b200_and_h200_held_out_within_a_fifth() -> None:
    # Lambda's v2 runs (validation.yaml, never fitted): ResNet-50 eager NCHW, B200 AMP 3,076 img/s at
    # batch 3,328 and H200 AMP 3,079 at 2,560: the same speed, because the eager stack's own per-byte
    # cost (calc.fit.eager_seconds_per_byte) does not follow the GPU; the model keeps each within 20 %.
    v = calc.calibrate.validation()
    new = v[v.gpu.isin(["B200", "H200"])]
    assert len(new) == 4 and (new.error.abs() < 0.2).all()


# ------------------------------------------------------------ issue 41: the stacks and the new terms in a plan


def test_stacks_named_with_the_default_and_tuned_reading_as_ngc() -> None:
    assert calc.catalog.STACKS == ("ngc", "eager", "optimized", "compiled")
    assert calc.Scenario().stack == "ngc" and calc.Scenario(stack="tuned").stack == "ngc"
    assert calc.Scenario(stack="Tuned").stack == "ngc"  # case-folded like every choice
    with pytest.raises(calc.InputError) as e:
        calc.Scenario(stack="fused")
    assert e.value.field == "stack" and "ngc, eager, optimized, compiled" in e.value.message
    # calibration.yaml's rows still say tuned: read as ngc
    assert {m.stack for m in calc.catalog.measurements()} == {"ngc", "eager"}


def test_a_fusing_stack_moves_less_traffic_by_hand() -> None:
    # ResNet-50 on an A100 at bf16, batch 256: the optimized stack keeps 1 - 0.3126 of the mixed per-example traffic.
    kw = {"gpu": "A100-SXM4-80GB", "precision": "bf16", "batch_size": 256}
    ngc, opt = calc.plan(**kw), calc.plan(stack="optimized", **kw)
    comp = calc.plan(stack="compiled", **kw)
    f = fitted()
    b, w = ngc.memory_traffic_bytes_per_example, ngc.memory_bandwidth_bytes_per_s
    assert ngc.memory_time_per_example_s == pytest.approx(b / (w * f.memory_efficiency), rel=1e-12)
    assert opt.memory_time_per_example_s == pytest.approx(b * (1 - 0.3126) / (w * f.memory_efficiency), rel=1e-12)
    assert comp.step_time_s == opt.step_time_s < ngc.step_time_s
    assert opt.values["stack_traffic_share"] == pytest.approx(0.6874) and ngc.values["stack_traffic_share"] == 1.0
    # A model with no per-op measurement: the fusing stack is planned as ngc, and the plan says so.
    blank = calc.plan(model="vivit_b16x2", stack="optimized", gpu="H100-SXM", precision="bf16")
    assert blank.values["stack_traffic_share"] == 1.0
    assert any("no per-op measurement of vivit_b16x2" in w for w in blank.warnings)


def test_depthwise_convolutions_run_at_their_own_share_of_the_bandwidth() -> None:
    # EfficientNet-B0 at bf16 on an H100: 0.11 of its 291.6 MB per example at the fitted e_dw, the rest at e_m.
    p = calc.plan(model="efficientnet_b0", gpu="H100-SXM", precision="bf16", batch_size=256)
    f = fitted()
    b, w = p.memory_traffic_bytes_per_example, p.memory_bandwidth_bytes_per_s
    want = b * 0.89 / (w * f.memory_efficiency) + b * 0.11 / (w * f.depthwise_efficiency)
    assert p.memory_time_per_example_s == pytest.approx(want, rel=1e-12)
    assert 0 < f.depthwise_efficiency < f.memory_efficiency  # the depthwise kernels reach less of the bandwidth
    # ResNet-50 has none: the plain term.
    r = calc.plan(gpu="H100-SXM", precision="bf16", batch_size=256)
    assert r.memory_time_per_example_s == pytest.approx(
        r.memory_traffic_bytes_per_example / (r.memory_bandwidth_bytes_per_s * f.memory_efficiency), rel=1e-12
    )
    with pytest.raises(calc.InputError) as e:
        calc.plan(model="efficientnet_b0", stack="optimized", fused_traffic_share=0.95)
    assert e.value.field == "depthwise_traffic_share"


def test_tensor_convolutions_reach_what_shared_memory_feeds() -> None:
    # The fitted feed (k FLOPs per byte) against each GPU's tensor FLOPs per clock per SM at 2-byte operands:
    # share = min(1, k x 128 / (2 x F)). Hopper (4,096) is held below its peak; V100 (1,024) and the
    # GeForce cards' half-rate tensor cores (512) are not.
    k = fitted().flops_per_shared_byte
    h100 = calc.plan(gpu="H100-SXM", precision="bf16", batch_size=256)
    assert h100.efficiency == pytest.approx(min(1.0, k * 128 / (2 * 4096)), rel=1e-12)
    assert 0.5 < h100.efficiency < 1
    for gpu in ("V100-SXM2-16GB", "RTX-3090", "RTX-4090"):
        assert calc.plan(gpu=gpu, precision="fp16", batch_size=64).efficiency == 1.0
    # A transformer's GEMMs keep the peak (family transformer).
    assert calc.plan(model="vit_b16", gpu="H100-SXM", precision="bf16", batch_size=64).efficiency == 1.0


def test_memory_itemised_and_said_where_a_job_does_not_fit() -> None:
    p = calc.plan("llama3-8b-pretrain-8xh100")
    assert p.weights_bytes + p.gradients_bytes + p.optimizer_state_bytes == pytest.approx(p.model_state_bytes)
    assert p.activations_bytes == p.batch_size * p.activation_bytes_per_example
    assert p.memory_used_bytes == pytest.approx(p.reserved_bytes + p.model_state_bytes + p.activations_bytes)
    from calc.plan import memory_line, stack_line

    assert memory_line(p).startswith("GPU memory per GPU: weights 1.87 GiB + gradients 1.87 GiB + optimizer")
    assert "largest micro-batch that fits is 31" in memory_line(p)
    assert stack_line(p).startswith("Step time on NGC PyTorch") and "(the default)" in stack_line(p)
    with pytest.raises(calc.DoesNotFitError) as e:
        calc.plan(model="llama3_70b", gpu="H100-SXM", precision="bf16", optimizer="adamw", gpus_per_job=8)
    said = e.value.message
    assert "weights 130.2 GiB + gradients 130.2 GiB + optimizer 781 GiB" in said
    assert "the largest micro-batch that fits is 0" in said and "over at least 17 GPUs fits one example" in said
