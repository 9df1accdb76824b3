"""The loader data of issue 42: presets/decoders.yaml, presets/cpus.yaml, presets/loader_validation.yaml.

Checks that the files load with yaml.safe_load, that every figure has a unit and a source, that the
validation rows cite non-reserved sources, and a few facts worked out by hand from the datasheets,
the DALI docstring and the per-core-speed formula the catalog states.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from calc import units

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ROOT / "presets"


def _load(name: str) -> Any:
    return yaml.safe_load((PRESETS / name).read_text())


@pytest.fixture(scope="module")
def decoders() -> dict[str, Any]:
    data: dict[str, Any] = _load("decoders.yaml")
    return data


@pytest.fixture(scope="module")
def cpus() -> dict[str, Any]:
    data: dict[str, Any] = _load("cpus.yaml")
    return data


@pytest.fixture(scope="module")
def validation() -> dict[str, Any]:
    data: dict[str, Any] = _load("loader_validation.yaml")
    return data


TIME_FIELDS = ("decode_s_fixed", "decode_s_per_megapixel", "decode_s_per_megapixel_if_above_knee",
               "decode_s_per_stored_megapixel", "decode_s_per_megabyte", "png_s_fixed", "png_s_per_megapixel")


def test_every_issue_decoder_key_is_present(decoders: dict[str, Any]) -> None:
    wanted = {"pil", "pillow-simd", "opencv", "turbojpeg", "torchvision", "dali-cpu", "dali-gpu", "ffcv", "none"}
    assert wanted <= set(decoders["decoders"])


def test_decode_times_have_units_and_sources(decoders: dict[str, Any]) -> None:
    for key, entry in decoders["decoders"].items():
        assert isinstance(entry["measured"], bool), key
        assert entry.get("label"), key
        for field in TIME_FIELDS:
            if field not in entry or entry[field] == "see raw:":
                continue
            value = units.parse(entry[field], "seconds", field)
            assert 0 <= value < 1.0, (key, field, value)
            assert str(entry[field]).strip()[-2:] in ("ms", "us", " s"), (key, field)  # a unit, not a bare number
            assert entry["sources"].get(field), f"{key}.{field} has no source"


def test_measured_jpeg_decoders_have_a_per_byte_and_per_pixel_cost(decoders: dict[str, Any]) -> None:
    for key, entry in decoders["decoders"].items():
        if not entry["measured"] or "jpeg" not in entry["formats"]:
            continue
        pipeline = [f for f in entry if f.startswith("pipeline_s_per_image")]
        if pipeline:  # FFCV: measured as a whole pipeline on one stored size
            for field in pipeline:
                assert units.parse(entry[field], "seconds", field) > 0
                assert entry["sources"].get(field), field
            continue
        per_mb = units.parse(entry["decode_s_per_megabyte"], "seconds")
        per_mp = units.parse(entry["decode_s_per_megapixel"], "seconds") + units.parse(
            entry["decode_s_per_stored_megapixel"], "seconds")
        assert per_mb > 0 and per_mp > 0, key


def test_knee_is_l2_over_four_bytes_per_pixel(decoders: dict[str, Any]) -> None:
    # 1 MB of L2 per core on the reference EPYC (lscpu: 2 MiB in 2 instances) / 4 B per pixel (RGBX)
    for entry in decoders["decoders"].values():
        if "knee_megapixels" in entry:
            assert entry["knee_megapixels"] == pytest.approx(1.0 / 4.0)


def test_dali_gpu_is_sourced_not_measured(decoders: dict[str, Any]) -> None:
    dali = decoders["decoders"]["dali-gpu"]
    assert dali["measured"] is False
    assert dali["hw_decoder_share"] == 0.65  # DALI docstring: hw_decoder_load default = 0.65
    assert "hybrid_huffman_threshold" in dali["cpu_share_rule"]
    assert "1,000,000" in dali["cpu_share_rule"]


def test_sections_have_units_and_sources(decoders: dict[str, Any]) -> None:
    blocks = [v for lib in decoders["augment"].values() for v in lib.values()]
    for section in ("collate", "transfer", "raw"):
        blocks += list(decoders.get(section, {}).values())
    assert blocks, "augment/collate/transfer/raw sections are missing"
    for block in blocks:
        for field, value in block.items():
            if field.startswith("s_"):
                assert units.parse(value, "seconds", field) >= 0
                assert block["sources"].get(field), field


def test_results_file_named_in_the_preset_exists_and_records_the_machine(decoders: dict[str, Any]) -> None:
    path = ROOT / decoders["results"]
    data = json.loads(path.read_text())
    assert data["cpu"]["vendor_id"] == "AuthenticAMD"
    assert data["cpu"]["cpu_family"] == "26"  # Zen 5 (family 1Ah)
    assert data["cpu_key"] == decoders["reference_cpu"]
    versions = {k: run["versions"] for k, run in data["runs"].items()}
    assert any("post" in v.get("pillow", "") for v in versions.values())  # Pillow-SIMD's own run


def test_reference_cpu_is_in_the_catalog_with_speed_one(decoders: dict[str, Any], cpus: dict[str, Any]) -> None:
    ref = decoders["reference_cpu"]
    assert cpus["reference"] == ref
    assert cpus["cpus"][ref]["per_core_speed"] == 1.0


def test_datasheet_core_counts(cpus: dict[str, Any]) -> None:
    c = cpus["cpus"]
    assert (c["epyc-7742"]["cores_per_socket"], c["epyc-7742"]["threads_per_core"]) == (64, 2)  # 64C/128T
    assert c["xeon-8480c"]["cores_per_socket"] == 56  # 2 x 56 = 112 cores in a DGX H100
    assert c["xeon-8275cl"]["cores_per_socket"] * 2 * c["xeon-8275cl"]["threads_per_core"] == 96  # p4d: 96 vCPU
    assert c["epyc-7r13"]["cores_per_socket"] * 2 * c["epyc-7r13"]["threads_per_core"] == 192  # p5: 192 vCPU
    assert c["grace"]["threads_per_core"] == 1


# ipc index relative to Zen 5, as the catalog's header derives it from the vendors' claims:
# Zen4 = 1/1.16, Zen3 = Zen4/1.13, Zen2 = Zen3/1.19, Skylake = Zen2, Golden Cove = Skylake*1.18*1.19,
# Broadwell = Skylake/1.08; reference clock 4.1 GHz.
IPC = {"Zen 4": 1 / 1.16, "Zen 3": 1 / 1.16 / 1.13, "Zen 2": 1 / 1.16 / 1.13 / 1.19}
IPC["Skylake"] = IPC["Zen 2"]
IPC["Cove"] = IPC["Zen 2"] * 1.18 * 1.19
IPC["Broadwell"] = IPC["Zen 2"] / 1.08


def _ipc(uarch: str) -> float:
    for key in ("Zen 4", "Zen 3", "Zen 2", "Broadwell"):
        if uarch.startswith(key):
            return IPC[key]
    if "Cove" in uarch:
        return IPC["Cove"]
    if "Skylake" in uarch or "Cascade Lake" in uarch:
        return IPC["Skylake"]
    raise AssertionError(uarch)


def test_per_core_speed_follows_the_stated_formula(cpus: dict[str, Any]) -> None:
    # e.g. EPYC 7742: 0.641 x 3.4 GHz / 4.1 GHz = 0.53; Xeon 8480C: 0.900 x 3.8 / 4.1 = 0.83
    checked = 0
    for key, cpu in cpus["cpus"].items():
        if key == cpus["reference"] or "per_core_speed" not in cpu:
            continue
        boost = units_ghz(cpu["boost_clock"])
        assert cpu["per_core_speed"] == pytest.approx(_ipc(cpu["microarchitecture"]) * boost / 4.1, abs=0.006), key
        checked += 1
    assert checked >= 8
    assert cpus["cpus"]["epyc-7742"]["per_core_speed"] == pytest.approx(0.53)


def units_ghz(text: str) -> float:
    number, unit = str(text).split()
    assert unit == "GHz", text
    return float(number)


def test_every_cpu_figure_has_a_source(cpus: dict[str, Any]) -> None:
    for key, cpu in cpus["cpus"].items():
        for field in ("cores_per_socket", "threads_per_core", "base_clock", "boost_clock", "per_core_speed", "year"):
            if field in cpu:
                assert cpu["sources"].get(field), f"{key}.{field} has no source"
        for field in ("base_clock", "boost_clock"):
            if field in cpu:
                assert str(cpu[field]).endswith("GHz"), (key, field)
    assert 1.0 < cpus["smt_throughput_gain"] < 2.0
    assert cpus["sources"]["smt_throughput_gain"]


RESERVED = ("lambdal", "deeplearning-benchmark", "pytorch-image-models/results", "ffcv-imagenet", "ffcv.io",
            "composer + ffcv", "imread_benchmark", "litdata", "43484", "gotorch", "issues/1491", "pull/1491",
            "vision/issues/818", "vision/pull/818", "8468", "8495", "8496", "torchcodec/pull/1620",
            "transformers/pull/45195", "million-image score job", "deeplearningexamples", "torchtitan",
            "megatron", "nemo", "llm-foundry", "nnu-net")


def test_validation_rows_cite_non_reserved_sources(validation: dict[str, Any]) -> None:
    rows = validation["rows"]
    assert len(rows) >= 25
    assert len({r["source"]["url"].split("#")[0] for r in rows}) >= 8  # several sources
    for row in rows:
        src = row["source"]
        assert src["title"] and src["url"] and src["date"], row["id"]
        cited = (src["title"] + " " + src["url"]).lower()
        for name in RESERVED:
            assert name not in cited, (row["id"], name)


def test_validation_figures_have_units_and_known_cpus(validation: dict[str, Any], cpus: dict[str, Any]) -> None:
    keys = set(cpus["cpus"])
    for row in validation["rows"] + validation.get("own_runs", []):
        fig = row["figure"]
        assert isinstance(fig["value"], (int, float)) and fig["value"] > 0, row["id"]
        assert isinstance(fig["unit"], str) and fig["unit"], row["id"]
        assert row["expressible"] in ("yes", "partly", "no"), row["id"]
        assert row["why"], row["id"]
        cpu = str(row["cpu"])
        assert cpu in keys or " " in cpu, (row["id"], cpu)  # a catalog key, or text naming what is known
    ids = [r["id"] for r in validation["rows"] + validation.get("own_runs", [])]
    assert len(ids) == len(set(ids))


def test_own_runs_are_on_the_reference_cpu(validation: dict[str, Any], cpus: dict[str, Any]) -> None:
    own = validation.get("own_runs", [])
    assert len(own) >= 18  # 0, 1, 2 workers x batch 64, 128, 256 x 224 and 160 px
    for row in own:
        assert row["cpu"] == cpus["reference"]
        assert row["figure"]["cpu_ms_per_image"] > 0
