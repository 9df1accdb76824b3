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


CHOICES = [
    # (file, text, the same with an unknown choice, field named, accepted)
    ("models.yaml", "  family: transformer\n", "  family: rnn\n", "models.yaml: vit_b16: family", "cnn, transformer"),
    ("gpus.yaml", "architecture: Volta GV100", "architecture: Volta GV999", "gpus.yaml: V100-SXM2-16GB: architecture",
     "Volta GV100"),
    ("calibration.yaml", "V100-SXM2-16GB, precision: fp32, batch_size: 112",
     "V100-SXM2-16GB, precision: int8, batch_size: 112",
     "calibration.yaml: measurements[0]: precision", "fp32, tf32, fp16, bf16, fp8"),
    ("calibration.yaml", "A100-SXM4-80GB, precision: tf32, batch_size: 256,\n     gpus: [1, 8]",
     "A100-SXM4-80GB, precision: fp64, batch_size: 256,\n     gpus: [1, 8]", "calibration.yaml: scaling[0]: precision",
     "fp32, tf32, fp16, bf16, fp8"),
    ("calibration.yaml", "{model: resnet50, gpu: A100-SXM4-80GB, precision: tf32, batch_size: 256,\n     gpus: [1, 8]",
     "{model: resnet5O, gpu: A100-SXM4-80GB, precision: tf32, batch_size: 256,\n     gpus: [1, 8]",
     "calibration.yaml: scaling[0]: model", "resnet50"),
    ("calibration.yaml", "llama2_7b, gpu: A100-SXM4-80GB, precision: bf16",
     "llama2_7b, gpu: A100-SXM4-80GB, precision: b16",
     "calibration.yaml: stack_pairs[0]: precision", "fp32, tf32, fp16, bf16, fp8"),
    ("reference_tiers.yaml", "    cache: all\n", "    cache: most\n", ": cache", "all, part, none"),
]  # fmt: skip


@pytest.mark.parametrize(("file", "old", "new", "field", "accepted"), CHOICES, ids=[c[3] for c in CHOICES])
def test_a_choice_a_preset_misspells_is_named_with_what_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file: str, old: str, new: str, field: str, accepted: str
) -> None:
    """A preset field read as one of a fixed set (a precision, a family, a cache share, an architecture,
    a scaling row's model) refuses anything else by name; a scaling row's precision, model and GPU were
    read unchecked before (an "fp64" row would have been fitted as it stood)."""
    for f in catalog.presets_dir().glob("*.yaml"):
        (tmp_path / f.name).write_text(f.read_text())
    text = (tmp_path / file).read_text()
    assert text.count(old) >= 1
    (tmp_path / file).write_text(text.replace(old, new, 1))
    monkeypatch.setattr(catalog, "presets_dir", lambda: tmp_path)
    readers = (catalog.gpus, catalog.models, catalog.measurements, catalog.scaling_rows, catalog.stack_pairs,
               catalog.reference_tiers)  # fmt: skip
    for r in readers:
        r.cache_clear()
    try:
        with pytest.raises(PresetError) as raised:
            for r in readers:
                r()
        assert field in raised.value.field and accepted in raised.value.message
    finally:
        monkeypatch.undo()
        for r in readers:
            r.cache_clear()


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
