"""Checkpoints and today's workloads: the MLPerf Storage checkpoint presets and the workload presets."""

from __future__ import annotations

import pytest

import calc
from calc.checkpoint import MLPERF_CHECKPOINT
from calc.report import markdown_report

GIB = 2**30
CHECKPOINT = [
    "mlperf-checkpoint-llama3-8b",
    "mlperf-checkpoint-llama3-70b",
    "mlperf-checkpoint-llama3-405b",
    "mlperf-checkpoint-llama3-1t",
]
WORKLOADS = [
    "llama3-8b-pretrain-8xh100",
    "clip-vitl14-datacomp-webdataset",
    "video-vivit-kinetics",
    "mlperf-dlrm-b200",
    "mlperf-flux-b200",
    "sd-latent-diffusion-laion",
]
MODELS = ["llama3_8b", "llama3_70b", "llama3_405b", "llama3_1t", "clip_vitl14", "vivit_b16x2"]


def test_presets_exist() -> None:
    assert set(MODELS) <= set(calc.models())
    assert set(CHECKPOINT + WORKLOADS) <= set(calc.scenarios())
    for m in MODELS:
        assert calc.models()[m].family == "transformer"


@pytest.mark.parametrize("name", CHECKPOINT + WORKLOADS)
def test_plans_and_renders(name: str) -> None:
    p = calc.plan(name)
    assert p.values["samples_per_s"] > 0
    a = calc.answer(name)
    # A single store, or (DLRM's 23 GB/s per node) a copy on every node behind one.
    assert a.best is not None or (a.design is not None and a.design["design"] != "one tier")
    md = markdown_report(p)
    assert md.startswith("# Feedrate") and len(md) > 500


@pytest.mark.parametrize(
    ("name", "key", "gib", "tol"),
    [
        ("mlperf-checkpoint-llama3-8b", "llama3-8b", 105.0, 0.005),
        ("mlperf-checkpoint-llama3-70b", "llama3-70b", 912.0, 0.002),
        # mlpstorage LLM_SIZE_BY_RANK: 755 + 4,533 = 5,288 GiB ("5.29 TB"); params x 14 B = 5,292 GiB
        ("mlperf-checkpoint-llama3-405b", "llama3-405b", 755 + 4533, 0.001),
        # 1T: the table's optimizer entry, 15,426 GiB, is params x 14 B on its own (see the test below)
        ("mlperf-checkpoint-llama3-1t", "llama3-1t", 15426, 0.0005),
    ],
)
def test_checkpoint_size_against_the_rules(name: str, key: str, gib: float, tol: float) -> None:
    p = calc.plan(name)
    row = MLPERF_CHECKPOINT[key]
    assert p.values["checkpoint_bytes"] == pytest.approx(row["params"] * 14, rel=1e-9)
    assert p.values["checkpoint_bytes"] / GIB == pytest.approx(gib, rel=tol)
    assert p.scenario.gpus_per_job == row["processes"]
    assert p.scenario.tensor_parallel == row["tensor_parallel"]
    assert p.scenario.pipeline_parallel == row["pipeline_parallel"]
    assert p.scenario.zero_stage == row["zero_stage"]


def test_1t_rules_size_counts_the_weights_twice() -> None:
    # mlpstorage LLM_SIZE_BY_RANK (model GiB, optimizer GiB): 8B (15, 90), 70B (130, 781),
    # 405B (755, 4533): optimizer = 6 x model, i.e. 14 B/param split 2 + 12. 1T: (2571, 15426):
    # 15,426 x 2^30 B / 14 = 1.1831e12 params = DLIO's count, so its optimizer entry is already
    # all 14 B/param and 2,571 = 15,426 / 6 is added on top: 17,997 GiB printed as "18 TB".
    row = MLPERF_CHECKPOINT["llama3-1t"]
    model_gib, optimizer_gib = row["size_by_rank_gib"]
    assert model_gib + optimizer_gib == 17_997
    assert row["checkpoint_gib"] == 17_997
    assert optimizer_gib * GIB / 14 == pytest.approx(row["params"], rel=2e-4)
    p = calc.plan("mlperf-checkpoint-llama3-1t")
    assert p.values["checkpoint_bytes"] * 7 / 6 / GIB == pytest.approx(17_997, rel=5e-4)
    for key in ("llama3-8b", "llama3-70b", "llama3-405b"):
        m, o = MLPERF_CHECKPOINT[key]["size_by_rank_gib"]
        assert o / m == pytest.approx(6, rel=0.01)


def test_70b_sizes_by_hand() -> None:
    # 69,882,617,856 x 14 B = 978.4e9 B = 911.2 GiB: within 0.2 % of the rules' 912 GiB
    p = calc.plan("mlperf-checkpoint-llama3-70b")
    size = 69_882_617_856 * 14
    # every 30 min at a 2 % stall: the save must finish in 0.02 x 1800 = 36 s
    assert p.values["checkpoint_sync_write_bytes_per_s"] == pytest.approx(size / 36, rel=1e-9)
    assert p.values["checkpoint_sync_write_bytes_per_s"] == pytest.approx(27.18e9, rel=1e-3)


def test_70b_restore_on_100_gb_per_s() -> None:
    # 64 ranks each read 1/64 of a ZeRO-3 checkpoint: the per-rank link is not binding, so the
    # restore is size / storage bandwidth = 978.4e9 / 100e9 = 9.78 s (each rank loads its
    # 15.29e9 B shard at 2 GB/s in 7.64 s, under it)
    p = calc.plan("mlperf-checkpoint-llama3-70b", storage_bytes_per_s="100 GB/s", checkpoint_load_bytes_per_s="2 GB/s")
    assert p.values["checkpoint_restore_s"] == pytest.approx(69_882_617_856 * 14 / 100e9, rel=1e-6)


def test_llama3_8b_pretrain_streams_tokens_and_checkpoints() -> None:
    p = calc.plan("llama3-8b-pretrain-8xh100")
    assert calc.models()["llama3_8b"].example_bytes == 8192 * 4
    # read bandwidth = samples/s x 32 KiB: tokens are tiny next to the 105 GiB checkpoint every 30 min
    assert p.values["read_bytes_per_s"] == pytest.approx(p.values["samples_per_s"] * 32768, rel=0.05)
    assert p.values["checkpoint_write_bytes_per_s"] > 100 * p.values["read_bytes_per_s"]


def test_mlperf_training_configs() -> None:
    dlrm = calc.plan("mlperf-dlrm-b200")
    # batch 16384 every 0.000375 s per GPU at 70 % AU ceiling, 761 B records
    assert dlrm.scenario.dataset_examples == 1024 * 4_718_592
    flux = calc.plan("mlperf-flux-b200")
    # The draft config's 4,296 files of 288 are raised to MLPerf's 5 x client RAM rule:
    # 5 x 512 GiB / (2,164,832 B x 288) = 4,408.04 -> 4,409 files
    assert flux.scenario.dataset_examples == 4409 * 288 > 4296 * 288
    assert flux.dataset_bytes >= 5 * flux.inputs["host_ram_bytes"]
    assert flux.values["samples_per_s"] == pytest.approx(48 / 1.35, rel=0.15)


def test_sd_latents_example_bytes_by_hand() -> None:
    m = calc.models()["sd_unet_v15"]
    # float16 VAE latent 4 x 64 x 64 + float16 CLIP text embedding 77 x 768
    latent, text = 4 * 64 * 64 * 2, 77 * 768 * 2
    assert (latent, text) == (32_768, 118_272)
    assert m.example_bytes == latent + text == 151_040
    assert m.params == 859_520_964
    # thop's 338.7 GMACs (convolutions + linears) + 63.0 GMACs of attention matmuls, x 2 FLOPs
    assert m.forward_flops == pytest.approx(2 * (338.7e9 + 63.0e9), rel=0.002)
    p = calc.plan("sd-latent-diffusion-laion")
    assert p.values["example_tensor_bytes"] == 151_040
    assert p.values["read_bytes_per_s"] == pytest.approx(p.values["samples_per_s"] * 151_040, rel=1e-6)
    assert p.scenario.gpus_per_job == 8


def test_mlperf_emulated_models_keep_the_requirements_by_hand() -> None:
    # DLIO: samples/s = batch / computation_time x accelerators (1) x AU target; bytes = samples/s x record
    cases = (
        # preset, model, batch, computation_time [s], AU target, record [B], shown rate, shown bandwidth
        ("mlperf-dlrm-b200", "mlperf_dlrm_emulated", 16384, 0.000375, 0.70, 761, "30,583,467 samples/s", "23.27 GB/s"),
        ("mlperf-flux-b200", "mlperf_flux_emulated", 48, 1.35, 0.90, 2_164_832, "32 samples/s", "69.27 MB/s"),
    )
    for preset, model, batch, compute_s, au, record, rate, bandwidth in cases:
        p = calc.plan(preset)
        assert p.scenario.model == model
        assert p.values["samples_per_s"] == pytest.approx(batch / compute_s * au, rel=1e-9)
        assert p.formatted("samples_per_s") == rate
        assert p.values["read_bytes_per_s"] == pytest.approx(batch / compute_s * au * record, rel=1e-9)
        assert p.formatted("read_bytes_per_s") == bandwidth
    for name, record in (("mlperf_dlrm_emulated", 761), ("mlperf_flux_emulated", 2_164_832)):
        m = calc.models()[name]
        assert m.example_bytes == record
        assert m.activation_bytes == {"fp32": 1.0, "mixed": 1.0}


@pytest.mark.parametrize(
    "name",
    [n for n in calc.scenarios() if n.startswith("mlperf-") and "checkpoint" not in n],
)
def test_mlperf_training_presets_keep_the_dataset_5x_client_ram(name: str) -> None:
    # MLPerf Storage's rule against caching: the dataset is at least 5 x the client's RAM, so no
    # design may keep it in the page cache.
    p = calc.plan(name)
    assert p.dataset_bytes >= 5 * p.inputs["host_ram_bytes"]
    assert not p.fits_in_ram
    assert "page cache" not in set(calc.designs(p)["design"])
