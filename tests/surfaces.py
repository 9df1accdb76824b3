"""Generated inputs over the surfaces issue 32 hardened, shared by the property tests (a few
hundred cases each, in the suite) and benchmarks/fuzz_surfaces.py (hundreds of thousands).

Each ``check_*`` function takes one generated case and asserts the surface's contract; each
strategy generates cases for it.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import strategies as st

import calc
from calc.registry import OUTPUTS

FLOAT_TOL = 1e-9

SWEEP_BASES = ("gpt-1b-h100-tokens", "llama3-8b-pretrain-8xh100", "resnet50-8xh100-imagenet", "beast-small-files")

SWEEP_VALUES: dict[str, list[Any]] = {
    "site": [None, "on-prem", "aws", "gcp", "azure"],
    "server": [None, "DGX-H100", "aws-p5.48xlarge", "gcp-a3-highgpu-8g"],
    "storage": [None, "aws-s3-standard", "nvme-gen4", "nfs-25gbe", "gcp-cloud-storage", "aws-fsx-lustre-ssd-125"],
    "site_link_bytes_per_s": [None, "1 Gb/s", "100 Gb/s"],
    "allow_other_site": [False, True],
    "storage_units": [None, 1, 4],
    "zero_stage": [0, 1, 2, 3],
    "tensor_parallel": [1, 2, 4, 8],
    "pipeline_parallel": [1, 2],
    "context_parallel": [1, 2],
    "gpus_per_job": [1, 8, 16],
    "state_shards": [1, 8],
    "checkpoint_mode": ["auto", "sync", "async"],
    "checkpoint_interval_s": [None, "10 min", "1 h", "optimal"],
    "mtbf_s": [None, "1 h", "1 d"],
    "run_length_s": [None, "30 d", "90 d"],
    "checkpoint_milestone_interval_s": [None, "1 d", "7 d"],
    "checkpoint_keep": [1, 3],
    "num_workers": [0, 4, 16],
    "example_bytes": [None, "64 KiB", "4 MiB"],
    "batch_size": [None, 1, 4],
    "gpu": ["H100-SXM", "A100-SXM4-80GB"],
    "precision": ["bf16", "fp32"],
    "model": ["gpt_1b", "llama3_8b", "resnet50"],
    "jobs": [1, 3],
}


def _plan_or_refusal(sc: calc.Scenario) -> calc.Plan | str:
    """plan(); a model that does not fit is "does not fit" (the sweep keeps such a row)."""
    try:
        return calc.plan(sc)
    except calc.DoesNotFitError:
        return "does not fit"


@st.composite
def sweep_cases(draw: st.DrawFn) -> tuple[str, dict[str, list[Any]]]:
    """A preset base and one to three axes of two or three values each from ``SWEEP_VALUES``."""
    base = draw(st.sampled_from(SWEEP_BASES))
    names = draw(st.lists(st.sampled_from(sorted(SWEEP_VALUES)), min_size=1, max_size=3, unique=True))
    axes = {k: draw(st.lists(st.sampled_from(SWEEP_VALUES[k]), min_size=1, max_size=3, unique=True)) for k in names}
    return base, axes


def check_sweep(case: tuple[str, dict[str, list[Any]]]) -> None:
    """The sweep refuses exactly when plan() refuses one of its combinations; otherwise each row
    equals plan() of its combination (a row that does not fit is marked ``fits = False``)."""
    name, axes = case
    base = calc.scenario(name)
    wants: list[calc.Plan | str] = []
    refused: calc.InputError | None = None
    for combo in itertools.product(*axes.values()):
        try:
            sc = base.replace(**dict(zip(axes, combo, strict=True)))
            wants.append(_plan_or_refusal(sc))
        except calc.InputError as e:
            refused = refused or e
    try:
        df = calc.sweep(base, **axes)
    except calc.DoesNotFitError:
        raise
    except calc.InputError as e:
        assert refused is not None, f"sweep refused what plan() accepts: {e}"
        return
    assert refused is None, f"sweep accepted what plan() refuses: {refused}"
    assert len(df) == len(wants)
    for (_, row), want in zip(df.iterrows(), wants, strict=True):
        changes = {k: row[k] for k in axes}
        if isinstance(want, str):
            assert not row["fits"], changes
            continue
        assert row["fits"], changes
        for k in OUTPUTS:
            assert row[k] == pytest.approx(want.values[k], rel=FLOAT_TOL, abs=1e-12), (changes, k)
        assert row["bottleneck"] == want.bottleneck, changes
        assert row["step_method"] == want.step_method, changes
