"""The loader data of issue 42: presets/decoders.yaml, presets/cpus.yaml, presets/loader_validation.yaml.

Checks that the files load with yaml.safe_load, that every figure has a unit and a source, that the
validation rows cite non-reserved sources, and a few facts worked out by hand from the datasheets,
the DALI docstring, and the catalog's per-core speeds recomputed from the SPEC CPU2017 figures it quotes
(and from benchmarks/cpu_speed_sources.py, which holds every result those figures are medians of).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
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


TIME_FIELDS = (
    "decode_s_fixed",
    "decode_s_per_megapixel",
    "decode_s_per_megapixel_if_above_knee",
    "decode_s_per_stored_megapixel",
    "decode_s_per_megabyte",
    "png_s_fixed",
    "png_s_per_megapixel",
)


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
            entry["decode_s_per_stored_megapixel"], "seconds"
        )
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
    assert (c["epyc-9655"]["cores_per_socket"], c["epyc-9655"]["threads_per_core"]) == (96, 2)  # SPEC: 192 on 2
    assert c["grace"]["threads_per_core"] == 1


def units_ghz(text: str) -> float:
    number, unit = str(text).split()
    assert unit == "GHz", text
    return float(number)


def _speed_cpus(cpus: dict[str, Any]) -> dict[str, Any]:
    return {k: c for k, c in cpus["cpus"].items() if k != cpus["reference"] and "per_core_speed" in c}


def test_per_core_speed_is_the_quoted_median_over_the_reference(cpus: dict[str, Any]) -> None:
    # per_core_speed = the SKU's median SPECspeed2017_int_base / the reference's (EPYC 9115, 17.4),
    # both quoted in the catalog; recomputed here from those quoted figures, to two decimals.
    ref = cpus["reference_basis"]["specspeed2017_int_base_median"]
    assert ref == 17.4
    speed = _speed_cpus(cpus)
    assert len(speed) >= 10
    for key, cpu in speed.items():
        basis = cpu["per_core_speed_basis"]
        assert cpu["per_core_speed"] == pytest.approx(basis["specspeed2017_int_base_median"] / ref, abs=0.0051), key
        assert basis["results"] >= 1 and basis["sku"], key
    # by hand: EPYC 7742 8.92 / 17.4 = 0.513 -> 0.51; Xeon 8480C (its sibling 8480CL) 14.8 / 17.4 = 0.851 -> 0.85;
    # E5-2698 v4 (its sibling E5-2699A v4) 8.32 / 17.4 = 0.478 -> 0.48; EPYC 9655 19.3 / 17.4 = 1.109 -> 1.11
    hand = {
        "epyc-7742": (8.92, 0.51),
        "xeon-8480c": (14.8, 0.85),
        "xeon-e5-2698v4": (8.32, 0.48),
        "epyc-9655": (19.3, 1.11),
    }
    for key, (median, ratio) in hand.items():
        assert speed[key]["per_core_speed_basis"]["specspeed2017_int_base_median"] == median, key
        assert speed[key]["per_core_speed"] == ratio, key


def test_reference_anchor_holds_for_both_turin_skus(cpus: dict[str, Any]) -> None:
    # the 9655's median scaled from its 4.5 GHz boost to the 4.1 GHz measured here: 19.3 x 4.1 / 4.5 = 17.58,
    # 1 % above the 9115's 17.4 (Zen 5 single-thread scores follow the boost clock)
    b = cpus["reference_basis"]
    scaled = (
        b["cross_check_specspeed2017_int_base_median"]
        * units_ghz(b["measured_clock"])
        / units_ghz(b["cross_check_boost_clock"])
    )
    assert scaled == pytest.approx(17.58, abs=0.01)
    assert scaled / b["specspeed2017_int_base_median"] == pytest.approx(1.0, abs=0.02)
    assert cpus["cpus"]["epyc-9655"]["boost_clock"] == b["cross_check_boost_clock"]


# the arithmetic each per_core_speed source quotes: "8.92 (median of 29 results ...) / 17.4 = 0.513" and
# "SPECrate2017_int_base 667 / 128 cores = 5.21 per core / 10.68 = 0.49"
SPEED_TEXT = re.compile(
    r"SPECspeed2017_int_base (?:of the [^(]+\(see note\) )?([\d.]+) \((?:median of )?(\d+) results?"
    r"[^)]*\) / ([\d.]+) = ([\d.]+)"
)
RATE_TEXT = re.compile(
    r"SPECrate2017_int_base (?:median )?([\d.]+) / (\d+) cores = ([\d.]+) per core"
    r" / ([\d.]+) = ([\d.]+)"
)


def test_quoted_arithmetic_in_the_sources_is_right(cpus: dict[str, Any]) -> None:
    ref = cpus["reference_basis"]
    for key, cpu in _speed_cpus(cpus).items():
        text, basis = cpu["sources"]["per_core_speed"], cpu["per_core_speed_basis"]
        m = SPEED_TEXT.search(text)
        assert m, (key, text)
        median, n, denom, ratio = float(m[1]), int(m[2]), float(m[3]), float(m[4])
        assert (median, n, denom) == (
            basis["specspeed2017_int_base_median"],
            basis["results"],
            ref["specspeed2017_int_base_median"],
        ), key
        assert ratio == pytest.approx(median / denom, abs=0.0006), key
        r = RATE_TEXT.search(text)
        assert r, (key, text)
        rate, cores, per_core, anchor, all_core = (float(g) for g in r.groups())
        assert per_core == pytest.approx(rate / cores, abs=0.006), key
        assert anchor == ref["all_core_anchor_specrate2017_int_base_per_core"]
        assert all_core == pytest.approx(per_core / anchor, abs=0.006), key
        assert all_core == pytest.approx(basis["all_core_ratio"], abs=0.006), key


def test_every_per_core_speed_has_a_tag_and_a_date(cpus: dict[str, Any]) -> None:
    for key, cpu in cpus["cpus"].items():
        if "per_core_speed" not in cpu:
            assert "per_core_speed" in cpu["note"], key  # grace says why it has none
            continue
        text = cpu["sources"]["per_core_speed"]
        assert text.split(":")[0] in {"V", "3P", "I", "R"}, (key, text)
        assert re.search(r"\b20\d\d-\d\d-\d\d\b", text), (key, text)
    assert cpus["cpus"][cpus["reference"]]["per_core_speed"] == 1.0


def _sources_script() -> Any:
    path = ROOT / "benchmarks" / "cpu_speed_sources.py"
    spec = importlib.util.spec_from_file_location("cpu_speed_sources", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve the module's annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_the_script_reproduces_every_quoted_median(cpus: dict[str, Any]) -> None:
    # benchmarks/cpu_speed_sources.py holds every published result; its medians are the catalog's figures
    src = _sources_script()
    ref = cpus["reference_basis"]
    assert src.speed_median(ref["sku"]) == ref["specspeed2017_int_base_median"]
    assert len(src.SKUS[ref["sku"]].speed) == ref["results"]
    assert src.rate_per_core(ref["all_core_anchor_sku"]) == pytest.approx(
        ref["all_core_anchor_specrate2017_int_base_per_core"], abs=0.005
    )
    speed = _speed_cpus(cpus)
    assert set(src.CATALOG) == set(speed)
    for key, cpu in speed.items():
        basis = cpu["per_core_speed_basis"]
        assert src.CATALOG[key] == basis["sku"], key
        assert src.speed_median(basis["sku"]) == pytest.approx(basis["specspeed2017_int_base_median"]), key
        assert len(src.SKUS[basis["sku"]].speed) == basis["results"], key
        assert round(src.per_core_speed(basis["sku"]), 2) == cpu["per_core_speed"], key
        assert round(src.all_core_ratio(basis["sku"]), 2) == basis["all_core_ratio"], key


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


RESERVED = (
    "lambdal",
    "deeplearning-benchmark",
    "pytorch-image-models/results",
    "ffcv-imagenet",
    "ffcv.io",
    "composer + ffcv",
    "imread_benchmark",
    "litdata",
    "43484",
    "gotorch",
    "issues/1491",
    "pull/1491",
    "vision/issues/818",
    "vision/pull/818",
    "8468",
    "8495",
    "8496",
    "torchcodec/pull/1620",
    "transformers/pull/45195",
    "million-image score job",
    "deeplearningexamples",
    "torchtitan",
    "megatron",
    "nemo",
    "llm-foundry",
    "nnu-net",
)


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
