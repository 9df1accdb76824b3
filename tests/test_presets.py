"""Presets: complete, sourced, validated; found from any working directory and in a wheel."""

from __future__ import annotations

import math
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import calc
from calc import catalog
from calc.errors import PresetError
from calc.storage import options

ROOT = Path(__file__).resolve().parent.parent

GPUS = [
    "V100-SXM2-16GB",
    "V100-SXM2-32GB",
    "T4",
    "A10",
    "A100-SXM4-40GB",
    "A100-SXM4-80GB",
    "L4",
    "L40S",
    "H100-SXM",
    "H100-PCIe",
    "H200",
    "B200",
    "RTX-3090",
    "RTX-4090",
    "MI250X",
    "MI300X",
]
MODELS = [
    "resnet18",
    "resnet50",
    "resnet101",
    "resnet152",
    "vit_b16",
    "efficientnet_b0",
    "bert_base_512",
    "unet3d_kits19",
    "yolov5s",
    "gpt_1b",
    "gpt_7b",
]
SCENARIOS = [
    "beast-resnet50-v100",
    "beast-resnet152-v100",
    "beast-imagenet-4xv100",
    "beast-nfs-shop",
    "beast-small-files",
    "efficient-pytorch-cityscapes",
    "efficient-pytorch-cityscapes-uint8",
    "efficient-pytorch-3d",
    "mlperf-unet3d-a100",
    "mlperf-unet3d-h100",
    "mlperf-resnet50-a100",
    "mlperf-resnet50-h100",
    "mlperf-cosmoflow-a100",
    "mlperf-cosmoflow-h100",
    "mlperf-retinanet-b200",
    "luna-unet3d-1080ti",
]


def test_required_presets_exist() -> None:
    assert set(GPUS) <= set(calc.gpus())
    assert set(MODELS) <= set(calc.models())
    assert set(SCENARIOS) <= set(calc.scenarios())


def test_every_gpu_and_storage_figure_has_a_source() -> None:
    for g in calc.gpus().values():
        assert g.source and g.verified
        assert g.memory_bytes > 2**30 and g.host_link_bytes_per_s > 1e9 and g.peak_flops_per_s
    for o in options().values():
        assert o.sources and o.verified in ("V", "3P", "R", "I")


def test_every_model_figure_has_a_source() -> None:
    for m in calc.models().values():
        # An image model names its decoder instead of a CPU time per example (calc.host prices it).
        figures = [f for f in catalog.MODEL_FIGURES if f != "cpu_seconds_per_example" or not m.decoder]
        image = [f for f in catalog.IMAGE_FIGURES if m.decoder and (f != "vision" or m.vision)]
        for f in (*figures, *image):
            assert m.sources.get(f), (m.name, f)
        assert bool(m.decoder) != math.isfinite(m.cpu_seconds_per_example), m.name


def test_every_scenario_cites_its_source() -> None:
    for name in calc.scenarios():
        text = (ROOT / "presets" / "scenarios" / f"{name}.yaml").read_text()
        assert text.startswith("#"), name
        assert calc.scenario(name).description, name


def test_gpu_memory_is_binary() -> None:
    assert calc.gpus()["V100-SXM2-16GB"].memory_bytes == 16 * 2**30
    assert calc.gpus()["H100-SXM"].peak("bf16") == 989e12


def test_lookup_is_case_insensitive_and_suggests() -> None:
    assert catalog.gpu("h100-sxm").name == "H100-SXM"
    with pytest.raises(PresetError, match=r"did you mean.*H100-SXM"):
        catalog.gpu("H100-SMX")
    with pytest.raises(PresetError, match="unknown model"):
        catalog.model("resnet5000")


def test_missing_precision_names_accepted_ones() -> None:
    with pytest.raises(ValueError, match=r"precision: V100-SXM2-16GB has no bf16.*accepted: fp32, fp16"):
        calc.plan(gpu="V100-SXM2-16GB", precision="bf16")


def test_malformed_yaml_names_file_and_line() -> None:
    with pytest.raises(PresetError, match=r"x.yaml: malformed YAML at line \d+, column \d+"):
        catalog.parse_yaml("a: 1\nb: [1, 2\n", "x.yaml")


def test_yaml_is_never_unsafe() -> None:
    with pytest.raises(PresetError):
        catalog.parse_yaml("!!python/object/apply:os.system ['echo hi']", "evil.yaml")


def test_presets_found_from_another_directory(tmp_path: Path) -> None:
    code = "import calc; print(calc.plan('beast-imagenet-4xv100').read_iops)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert round(float(out.stdout)) == 5885


def test_wheel_ships_presets(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for f in (
        "calc/presets/gpus.yaml",
        "calc/presets/models.yaml",
        "calc/presets/storage.yaml",
        "calc/presets/calibration.yaml",
        "calc/presets/scenarios/beast-resnet50-v100.yaml",
    ):
        assert f in names, f
