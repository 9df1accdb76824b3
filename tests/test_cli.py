"""CLI: python -m calc, formats, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from calc.cli import main, run


def test_default_plan_table() -> None:
    out = run([])
    assert "beast-imagenet-4xv100" in out and "5,885 reads/s" in out


def test_json_and_yaml_formats() -> None:
    data = json.loads(run(["beast-resnet50-v100", "--format", "json"]))
    assert data["batch_size"] == 128 and data["step_method"] == "measured throughput"
    y = yaml.safe_load(run(["beast-small-files", "--set", "jobs=10", "--format", "yaml"]))
    assert y["read_iops"] == pytest.approx(51200)


def test_markdown_report() -> None:
    md = run(["beast-imagenet-4xv100", "--format", "markdown"])
    assert md.startswith("# ") and "5,885 reads/s" in md and "| " in md


def test_list_recommend_levers_maxgpus_sweep_calibration() -> None:
    assert "beast-nfs-shop" in run(["list"])
    assert "H100-SXM" in run(["list", "gpus"])
    assert "nvme-gen4" in run(["recommend", "beast-imagenet-4xv100"])
    assert "offline preprocessing" in run(["levers", "luna-unet3d-1080ti"])
    assert run(["max-gpus", "mlperf-unet3d-h100", "--bandwidth", "100 GB/s"]).startswith("34 GPUs")
    assert "read_iops" in run(["sweep", "beast-small-files", "--axis", "jobs=5,10"])
    assert "leave-one-GPU-out" in run(["calibration"])


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["nosuch-scenario"], "unknown scenario"),
        (["beast-resnet50-v100", "--set", "gpu=T5"], "did you mean T4"),
        (["beast-resnet50-v100", "--set", "batch_size=-1"], "batch_size"),
        (["beast-resnet50-v100", "--set", "example_bytes=12 parsecs"], "unknown unit"),
        (["beast-resnet50-v100", "--set", "nonsense"], "key=value"),
        (["max-gpus", "mlperf-unet3d-h100"], "give a storage option"),
        (["list", "planets"], "accepted"),
    ],
)
def test_bad_input_one_line_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_module_entry_point() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "calc", "beast-nfs-shop", "--set", "jobs=10", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(r.stdout)["read_iops"] == pytest.approx(1280)
    bad = subprocess.run([sys.executable, "-m", "calc", "--set", "jobs=0"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_designs_command_and_report_section() -> None:
    # The RAM case: 147 GB on nodes with 2 TiB of RAM is read once; the report and the CLI list
    # complete designs, and the multi-node local-cache design is sized per node.
    out = run(["designs", "mlperf-unet3d-h100", "--set", "gpus_per_job=64"])
    # 22.87 GB/s per node / 6.5 GB/s per PM9A3 (data-centre drives only for H100 servers) = 3.52 -> 4.
    assert "local cache" in out and "4 drives of nvme-gen4 per node on 8 nodes" in out
    md = run(["resnet50-8xh100-imagenet", "--format", "markdown"])
    assert "## Complete designs, cheapest first" in md
