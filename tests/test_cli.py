"""CLI: python -m calc, formats, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import calc
import calc.storage
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


# ------------------------------------------------------------------ issue 30: a command line with its own help


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as e:
        run(argv)
    assert e.value.code == 0
    return capsys.readouterr().out


def test_each_command_has_its_own_help_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    from calc.cli import COMMANDS

    top = _help(["--help"], capsys)
    seen = set()
    for name, command in COMMANDS.items():
        text = _help([name, "--help"], capsys)
        assert text.startswith(f"usage: python -m calc {name}") and command.examples[0] in text
        assert name in top
        seen.add(text)
    assert len(seen) == len(COMMANDS)  # no two commands print the same help
    assert "--read-bytes-per-s" in _help(["max-gpus", "--help"], capsys)


def test_list_servers_and_fields() -> None:
    servers = run(["list", "servers"])
    # DGX-H100: 112 cores and 2 TiB of RAM (servers.yaml); a figure not published says so.
    assert "DGX-H100" in servers and "112" in servers and "2 TiB" in servers and "not published" in servers
    fields = run(["list", "fields", "--format", "csv"]).splitlines()
    assert fields[0] == "field,group,label,default"
    assert len(fields) == 1 + len(calc.FIELDS)
    assert any(line.startswith("checkpoint_interval_s,checkpoints,Checkpoint interval [min]") for line in fields)


def test_a_mistyped_command_is_named_back_not_read_as_a_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explian", "mlperf-unet3d-h100"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'explian'" in err and "did you mean explain" in err and "scenario" not in err
    assert main(["list", "stroage"]) == 2
    assert "did you mean storage" in capsys.readouterr().err


def test_csv_format() -> None:
    rows = run(["sweep", "beast-small-files", "--axis", "jobs=5,10", "--format", "csv"]).splitlines()
    assert rows[0].startswith("jobs,batch_size,step_time_s")
    # The article (README table, tests/test_article.py): 5 and 10 jobs read 25,600 and 51,200 reads/s.
    assert [float(r.split(",")[4]) for r in rows[1:]] == pytest.approx([25600, 51200])
    plan_rows = run(["beast-nfs-shop", "--format", "csv"]).splitlines()
    assert plan_rows[0] == "output,label,value,display,formula" and len(plan_rows) > 50


def test_quiet_on_a_closed_pipe() -> None:
    r = subprocess.run(
        f"{sys.executable} -m calc list storage | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0 and r.stderr == "" and "storage" in r.stdout


def test_cluster_job_takes_its_own_inputs() -> None:
    from calc.cli import job_text

    assert job_text("llama3-8b-pretrain-8xh100:2:gpus_per_job=16,jobs=1") == (
        "llama3-8b-pretrain-8xh100:2|gpus_per_job=16|jobs=1"
    )
    assert job_text("resnet50-8xh100-imagenet:3") == "resnet50-8xh100-imagenet:3"
    data = json.loads(
        run(["cluster", "--job", "resnet50-8xh100-imagenet:3", "--job", "beast-nfs-shop:1:jobs=10", "--format", "json"])
    )
    gpus = {j["job"]: j["gpus"] for j in data["jobs"]}
    # beast-nfs-shop: 4 GPUs per job; with jobs=10 one entry holds 10 x 4 = 40 GPUs.
    assert gpus["resnet50-8xh100-imagenet"] == 3 * 8 and gpus["beast-nfs-shop-edited"] == 40


def test_max_gpus_flags_are_named_as_in_python(capsys: pytest.CaptureFixture[str]) -> None:
    # The article: 100 GB/s feeds 34 H100s of 3D U-Net (either spelling of the flag).
    assert run(["max-gpus", "mlperf-unet3d-h100", "--read-bytes-per-s", "100 GB/s"]).startswith("34 GPUs")
    assert run(["max-gpus", "mlperf-unet3d-h100", "--bandwidth", "100 GB/s"]).startswith("34 GPUs")
    assert main(["max-gpus", "mlperf-unet3d-h100", "--read-bytes-per-s", "-1 GB/s"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --read-bytes-per-s:") and "read_bytes_per_s" not in err
    assert main(["max-gpus", "mlperf-unet3d-h100"]) == 2
    assert "--read-bytes-per-s or --read-iops" in capsys.readouterr().err


def test_measured_storage_preset_reads_back(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.bin").write_bytes(b"\0" * 1_048_576)
    out = tmp_path / "measured.yaml"
    run(["measure-storage", str(data), "--seconds", "0.1", "--concurrency", "2", "--write-preset", str(out)])
    try:
        p = calc.plan("beast-imagenet-4xv100", storage=str(out))
        o = calc.storage.option(str(out))
        assert p.scenario.storage == str(out) and o.site == "on-prem" and not o.priced
        assert o.read_bytes_per_s == pytest.approx(
            float(yaml.safe_load(out.read_text())["measured-storage"]["read_bandwidth"].split()[0])
        )
        assert str(out) in run(["beast-imagenet-4xv100", "--set", f"storage={out}"])
    finally:
        calc.storage.OWN.clear()


def test_errors_name_each_commands_own_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.bin").write_bytes(b"\0" * 65536)
    assert main(["measure-storage", str(tmp_path), "--request-size", "-5 KiB"]) == 2
    assert capsys.readouterr().err.startswith("error: --request-size: ")
    assert main(["max-gpus", "mlperf-unet3d-h100", "--units", "3"]) == 2
    assert capsys.readouterr().err.startswith("error: --units: units need a storage option; accepted: --storage NAME")


def test_plan_from_a_hugging_face_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_hf_config import LLAMA2_7B

    folder = tmp_path / "Llama-2-7b-hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA2_7B))
    # 8 GPUs with the state sharded over them: AdamW's 16 B a parameter (issue 39's default) is 100 GiB
    # for 6.74 B parameters, more than one H100 holds.
    sets = ["--set", "gpu=H100-SXM", "--set", "precision=bf16", "--set", "seq_len=2048"]
    sets += ["--set", "gpus_per_job=8", "--set", "state_shards=8"]
    out = run(["plan", "--hf-config", str(folder / "config.json"), *sets])
    assert out.startswith("Llama-2-7b-hf: transformer on 8 x H100-SXM, bf16")
    assert "llama from a Hugging Face config: 6,738,415,616 parameters" in out and "seq_len 2048 (given)" in out
    data = json.loads(run(["plan", "--hf-config", str(folder), "--format", "json", *sets]))
    # The sequence given sets the architecture's work and the tensors: 6 x 6,607,077,376 weights
    # + 7 x 32 x 4096 x 2048 attention = 41,521,512,448 a token x 2048 = 85,036,057,493,504 a sequence;
    # tokens and labels of 2048 int64 = 32,768 B.
    assert data["train_flops_per_example"] == pytest.approx(85_036_057_493_504, rel=1e-12)
    assert data["example_tensor_bytes"] == 32_768
    assert main(["plan", "beast-imagenet-4xv100", "--hf-config", str(folder)]) == 2
    assert "--hf-config: give a scenario (beast-imagenet-4xv100) or --hf-config, not both" in capsys.readouterr().err
    assert main(["plan", "--hf-config", str(tmp_path / "none.json")]) == 2
    assert "--hf-config: cannot read" in capsys.readouterr().err  # the flag, as the command line spells it


def test_export_fio_and_dlio_in_each_format(capsys: pytest.CaptureFixture[str]) -> None:
    job = run(["export", "fio", "beast-imagenet-4xv100", "--directory", "/mnt/x", "--runtime", "30 s"])
    assert "[reads-per-node]" in job and "bs=65536" in job and "runtime=30" in job
    # The answer names the tier: on-prem, a local NVMe cache in front of HDDs.
    on_prem = run(["export", "fio", "beast-imagenet-4xv100", "--set", "site=on-prem", "--directory", "/mnt/x"])
    assert "Run the read jobs on one node's local drives (nvme-gen4)" in on_prem
    rows = run(["export", "fio", "beast-imagenet-4xv100", "--directory", "/mnt/x", "--format", "csv"]).splitlines()
    assert rows[0] == "name,rw,block_bytes,iodepth,numjobs,pass_iops,pass_bytes_per_s,why"
    assert rows[1].startswith("reads-per-node,randread,65536,6,1,5885.05")
    data = json.loads(run(["export", "fio", "beast-imagenet-4xv100", "--directory", "/mnt/x", "--format", "json"]))
    assert data["format"] == "fio" and data["text"].startswith("# fio job") and data["rows"][0]["iodepth"] == 6
    assert run(["export", "fio", "beast-imagenet-4xv100", "--directory", "/x", "--format", "markdown"]).startswith(
        "```ini\n# fio job"
    )
    workload = yaml.safe_load(run(["export", "dlio", "mlperf-unet3d-h100"]))
    assert workload["dataset"]["record_length_bytes"] == 146_600_628 and workload["reader"]["batch_size"] == 7
    assert workload["train"]["computation_time"] == 0.323
    same = yaml.safe_load(yaml.safe_load(run(["export", "dlio", "mlperf-unet3d-h100", "--format", "yaml"]))["text"])
    assert same == workload
    flat = run(["export", "dlio", "mlperf-unet3d-h100", "--format", "csv", "--epochs", "2"]).splitlines()
    assert "train.epochs,2" in flat and "dataset.record_length_bytes,146600628" in flat
    assert main(["export", "fio", "beast-imagenet-4xv100"]) == 2
    assert "--directory: give a folder on the store" in capsys.readouterr().err
    assert main(["export", "dlio", "mlperf-unet3d-h100", "--dlio-format", "parquet"]) == 2
    assert "format" in capsys.readouterr().err


def test_plan_on_a_store_fio_measured(tmp_path: Path) -> None:
    from tests.test_measure import FIO_RESULT

    # 16,000 reads/s of 64 KiB and 1.05 GB/s read, 503.3 MB/s written: the article's job needs
    # 5,885 reads/s and 385.7 MB/s; the store serves it.
    path = tmp_path / "result.json"
    path.write_text(json.dumps(FIO_RESULT))
    out = run(["plan", "beast-imagenet-4xv100", "--fio-result", str(path)])
    assert "store measured: fio reads-per-node: 16,000 reads/s of 64 KiB" in out
    assert "Your store (503.3 MB/s, 16,000 reads/s, 375 µs a read) serves the job" in out
