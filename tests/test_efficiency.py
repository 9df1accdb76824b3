"""calc.efficiency and the per-generation look-ups of calc.fit: hand-worked figures (arithmetic in the comments).

Every figure below is a published kernel measurement (presets/gemm.yaml ``peak_share`` and
``attention``, their sources there) divided by a datasheet peak (presets/gpus.yaml), worked by hand.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

import calc
from calc import catalog, fit
from calc import efficiency as E  # noqa: N812 - the formulas read like the module docstring
from calc.errors import PresetError

A100 = 271.2 / 312  # MAMF, A100 SXM bf16: 0.869231
H100 = 794.5 / 989  # MAMF, H100 SXM bf16: 0.803337
B200 = 1745.0 / 2250  # MAMF, B200 bf16: 0.775556
V100 = 83 / 125  # Markidis et al. 2018, cuBLAS on V100: 0.664


def test_peak_share_by_hand() -> None:
    # 271.2 TFLOP/s of the A100's 312: 0.8692; 3432.5 of the B200's 4500 fp8: 0.7628
    assert float(E.peak_share(271.2e12, 312e12)) == pytest.approx(0.869231, abs=1e-6)
    assert float(E.peak_share(3432.5e12, 4500e12)) == pytest.approx(0.762778, abs=1e-6)


def test_generation_efficiency_by_hand() -> None:
    # Equal shares give the reference back; H100: 0.55 x 0.803337 / 0.869231 = 0.55 x 0.924193 = 0.508306
    assert float(E.generation_efficiency(0.55, 0.8, 0.8)) == 0.55
    assert float(E.generation_efficiency(0.55, H100, A100)) == pytest.approx(0.508306, abs=1e-6)
    # V100: 0.664 / 0.869231 = 0.763894 of the A100's layer efficiency
    assert float(E.generation_efficiency(1.0, V100, A100)) == pytest.approx(0.763894, abs=1e-6)


def test_gemm_share_own_row_architecture_or_none() -> None:
    assert fit.gemm_share("H100-SXM", "bf16").share == pytest.approx(H100)  # type: ignore[union-attr]
    assert fit.gemm_share("B200", "fp8").share == pytest.approx(3432.5 / 4500)  # type: ignore[union-attr]
    # fp16 and bf16 share one 16-bit class: the V100's fp16 row answers bf16 too
    assert fit.gemm_share("V100-SXM2-32GB", "bf16").share == pytest.approx(V100)  # type: ignore[union-attr]
    # H100 PCIe has no row: the geometric mean of the Hopper rows, H100 SXM and H200 0.803337 each,
    # GH200 828.6 / 989 = 0.837816: (0.803337^2 x 0.837816)^(1/3) = exp((-0.437963 - 0.176957) / 3) = 0.814669
    s = fit.gemm_share("H100-PCIe", "bf16")
    assert s is not None and s.share == pytest.approx(0.814669, abs=1e-6) and "Hopper GH100" in s.source
    # Ada (RTX 4090) has no published GEMM share: none, not a borrowed one
    assert fit.gemm_share("RTX-4090", "bf16") is None
    assert fit.gemm_share("A100-SXM4-80GB", "fp8") is None


def test_generation_efficiencies_follow_the_gpu() -> None:
    # A100: the layer efficiency itself; attention at the same efficiency (no Ampere attention row)
    e, a, _, a_src, warn = fit.generation_efficiencies(0.55, "A100-SXM4-80GB")
    assert e == pytest.approx(0.55) and a == e and "as the matrix multiplies" in a_src and warn == []
    # H100: 0.55 x 0.924193 = 0.508306; attention FlashAttention-2 at 35 % (FlashAttention-3 paper)
    e, a, src, a_src, _ = fit.generation_efficiencies(0.55, "H100-SXM")
    assert e == pytest.approx(0.508306, abs=1e-6) and a == 0.35 and "FlashAttention-2" in a_src
    assert "794.5" in src and "271.2" in src
    # B200: 0.55 x 0.775556 / 0.869231 = 0.55 x 0.892232 = 0.490728; cuDNN attention 1613 / 1.3 = 1240.8
    # TFLOP/s of 2250: 0.551467
    e, a, _, a_src, _ = fit.generation_efficiencies(0.55, "B200")
    assert e == pytest.approx(0.490728, abs=1e-6) and a == pytest.approx(0.551467, abs=1e-6)
    assert "cuDNN" in a_src
    # RTX 4090: no measurement, the A100's efficiency as it is, and a warning that says so
    e, a, src, _, warn = fit.generation_efficiencies(0.55, "RTX-4090")
    assert e == 0.55 and a == 0.55 and "no published GEMM measurement" in src and "RTX-4090" in warn[0]


def test_fp8_roofline_shares_per_gpu() -> None:
    f = fit.gemm_fit()
    h100, b200, h200 = fit.fp8_gemm_inputs("H100-SXM"), fit.fp8_gemm_inputs("B200"), fit.fp8_gemm_inputs("H200")
    # H100 is the roofline's own GPU: the fitted shares as they are
    assert h100["gemm_peak_efficiency_16bit"] == pytest.approx(f.peak_efficiency["bf16"])
    assert h100["gemm_peak_efficiency_fp8"] == pytest.approx(f.peak_efficiency["fp8"])
    # B200: bf16 x 0.775556 / 0.803337 = x 0.965418; fp8 x (3432.5/4500) / (1402.6/1979)
    # = 0.762778 / 0.708742 = x 1.076242
    assert b200["gemm_peak_efficiency_16bit"] == pytest.approx(f.peak_efficiency["bf16"] * 0.965418, rel=1e-5)
    assert b200["gemm_peak_efficiency_fp8"] == pytest.approx(f.peak_efficiency["fp8"] * 1.076242, rel=1e-5)
    # H200: the same bf16 as the H100 ("H200 is the same"), its own fp8: 1453.4 / 1402.6 = x 1.036218
    assert h200["gemm_peak_efficiency_16bit"] == pytest.approx(f.peak_efficiency["bf16"])
    assert h200["gemm_peak_efficiency_fp8"] == pytest.approx(f.peak_efficiency["fp8"] * 1.036218, rel=1e-5)
    # the bandwidth share and the quantization bytes do not depend on the GPU's kernels
    assert b200["gemm_bandwidth_efficiency"] == h100["gemm_bandwidth_efficiency"]


def test_plan_uses_the_generation_efficiency() -> None:
    common = {"model": "llama3_8b", "precision": "bf16", "reserved_bytes": 0, "model_state_bytes": 0}
    a100 = calc.plan(gpu="A100-SXM4-80GB", **common)
    h100 = calc.plan(gpu="H100-SXM", **common)
    # the H100's transformer efficiency is the A100's x 0.803337 / 0.869231 = x 0.924193
    assert h100.inputs["efficiency"] / a100.inputs["efficiency"] == pytest.approx(0.924193, abs=1e-6)
    assert h100.inputs["attention_efficiency"] == 0.35
    assert "generation_efficiency" in h100.sources["efficiency"]
    # a stated efficiency is used as given, attention included
    given = calc.plan(gpu="H100-SXM", efficiency=0.4, **common)
    assert given.inputs["efficiency"] == 0.4 and given.inputs["attention_efficiency"] == 0.4


def _presets_with(tmp_path: Path, old: str, new: str) -> None:
    for f in catalog.presets_dir().glob("*.yaml"):
        shutil.copy(f, tmp_path / f.name)
    text = (tmp_path / "gemm.yaml").read_text()
    assert old in text
    (tmp_path / "gemm.yaml").write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        (
            "gpu: V100-SXM2-16GB, precision: fp16, tflops: 83",
            "gpu: V999, precision: fp16, tflops: 83",
            r"peak_share\[0\]: gpu",
        ),
        (
            "gpu: V100-SXM2-16GB, precision: fp16, tflops: 83",
            "gpu: V100-SXM2-16GB, precision: int8, tflops: 83",
            r"peak_share\[0\]: precision",
        ),
        (
            "gpu: V100-SXM2-16GB, precision: fp16, tflops: 83",
            "gpu: V100-SXM2-16GB, precision: fp16, tflops: 130",
            r"peak_share\[0\]: tflops",
        ),
        ("architecture: Hopper GH100, kernel", "architecture: Hopper GH999, kernel", r"attention\[0\]: architecture"),
        ("share: 0.35", "share: 1.35", r"attention\[0\]: share"),
    ],
)
def test_kernel_rows_errors_name_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, where: str
) -> None:
    _presets_with(tmp_path, old, new)
    monkeypatch.setattr(catalog, "presets_dir", lambda: tmp_path)
    for cached in (fit._gemm_yaml, fit.peak_shares, fit.attention_shares):
        cached.cache_clear()
    try:
        with pytest.raises(PresetError, match=where):
            fit.peak_shares()
            fit.attention_shares()
    finally:
        for cached in (fit._gemm_yaml, fit.peak_shares, fit.attention_shares):
            cached.cache_clear()


def test_published_shares_are_below_one_and_dated() -> None:
    raw = catalog.load_yaml(catalog.presets_dir() / "gemm.yaml")
    for row in raw["peak_share"] + raw["attention"]:
        assert row["source"] and row["date"], row
    assert all(0 < s.share < 1 for s in fit.peak_shares().values())
    assert math.isclose(fit.attention_shares()["Hopper GH100"].share, 0.35)
