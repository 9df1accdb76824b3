"""calc.dlio: the DLIO workload a plan writes, checked against DLIO's own workloads and loader.

DLIO's loader runs where an interpreter with dlio_benchmark is found: this one, or the one named by
FEEDRATE_DLIO_PYTHON (README, "Verify a store": ``pip install dlio-benchmark`` fails here on its
nvidia-dali-cuda110 requirement, so the README installs it with --no-deps and its light requirements).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import calc
from calc import dlio
from calc.errors import InputError


def _load(text: str) -> dict[str, Any]:
    out = yaml.safe_load(text)
    assert isinstance(out, dict)
    return out


def test_unet3d_exports_the_workload_it_was_built_from() -> None:
    # mlcommons/storage configs/dlio/workload/unet3d_h100.yaml: npz, 1 sample a file,
    # record_length_bytes 146,600,628, resize 2,097,152 (128^3 uint8), batch 7, 4 read threads,
    # computation_time 0.323, epochs 5, AU 0.90. Its stdev is 68,341,808 B; the preset keeps
    # cv 0.46617 (5 figures): 0.46617 x 146,600,628 = 68,340,814.8 -> 68,340,815.
    w = _load(dlio.dlio_workload(calc.plan("mlperf-unet3d-h100")))
    d, r, t = w["dataset"], w["reader"], w["train"]
    assert (d["format"], d["num_samples_per_file"]) == ("npz", 1)
    assert d["record_length_bytes"] == d["record_length"] == 146_600_628
    assert d["record_length_bytes_resize"] == d["record_length_resize"] == 128**3
    assert d["record_length_bytes_stdev"] == d["record_length_stdev"] == 68_340_815
    assert (r["batch_size"], r["read_threads"], r["data_loader"]) == (7, 4, "pytorch")
    # prefetch_factor 1 with 4 workers: prefetch_size 4, and DLIO's ceil(4 / 4) = 1 again.
    assert r["prefetch_size"] == 4 and "transfer_size" not in r
    assert t == {"epochs": 5, "computation_time": 0.323}
    assert w["metric"] == {"au": 0.9}
    assert w["workflow"] == {"generate_data": False, "train": True, "checkpoint": False}
    assert "checkpoint" not in w
    # The preset's dataset: 18,751 files (5 x 512 GiB of RAM / 146.6 MB).
    assert d["num_files_train"] == 18_751 and d["data_folder"] == "data/mlperf-unet3d-h100"
    assert w["model"] == {"name": "unet3d_kits19", "type": "cnn"} and w["framework"] == "pytorch"


def test_resnet50_reads_tfrecord_shards_in_256_kib_chunks() -> None:
    # resnet50_h100.yaml: TFRecord, 1,251 records a file of 114,660.07 B, batch 400, 8 threads, 0.224 s;
    # TensorFlow's 256 KiB buffer is the plan's read size: transfer_size 262,144.
    # 23,974,164 examples / 1,251 = 19,164 files exactly.
    w = _load(dlio.dlio_workload(calc.plan("mlperf-resnet50-h100")))
    d, r = w["dataset"], w["reader"]
    assert (d["format"], d["num_samples_per_file"], d["num_files_train"]) == ("tfrecord", 1251, 19_164)
    assert d["record_length_bytes"] == 114_660 and d["record_length_bytes_resize"] == 224 * 224 * 3
    assert (r["batch_size"], r["read_threads"], r["prefetch_size"], r["transfer_size"]) == (400, 8, 8, 262_144)
    assert w["train"]["computation_time"] == 0.224


def test_a_saving_plan_checkpoints_every_interval_of_steps() -> None:
    # Llama 3 8B pretraining, 8 H100s, a save every 30 min: 1,800 s / the plan's step time; 8 ranks
    # write their shards (all_ranks), each the plan's shard.
    p = calc.plan("llama3-8b-pretrain-8xh100")
    w = _load(dlio.dlio_workload(p, data_folder="/mnt/x/tokens", epochs=1))
    step = float(p.values["step_time_s"])
    assert w["workflow"]["checkpoint"] is True
    c = w["checkpoint"]
    assert c["steps_between_checkpoints"] == round(1800 / step)
    assert c["type"] == "all_ranks"
    assert c["model_size"] == w["model"]["model_size_bytes"] == round(float(p.values["checkpoint_rank_bytes"]))
    assert w["dataset"]["data_folder"] == "/mnt/x/tokens" and w["train"]["epochs"] == 1
    # One million 8,192-token sequences a file, read at their offsets.
    assert w["dataset"]["format"] == "indexed_binary" and w["dataset"]["num_samples_per_file"] == 1_000_000


def test_the_rules_at_their_boundaries() -> None:
    assert dlio.data_format(1, False) == "npz"
    assert dlio.data_format(2, False) == "indexed_binary"
    assert dlio.data_format(1, True) == dlio.data_format(1251, True) == "tfrecord"
    assert dlio.prefetch_size(2, 4) == 8 and dlio.prefetch_size(2, 0) == 2 and dlio.prefetch_size(1, 1) == 1
    # 1,800 s / 1.2 s = 1,500 steps; 0.4 s / 1 s rounds to 0 -> at least 1; 2.6 rounds to 3.
    assert dlio.steps_between(1800, 1.2) == 1500
    assert dlio.steps_between(0.4, 1.0) == 1
    assert dlio.steps_between(2.6, 1.0) == 3


def test_header_says_what_passes() -> None:
    text = dlio.dlio_workload(calc.plan("mlperf-unet3d-h100"))
    # 7 / 0.323 s = 21.67 samples/s a GPU; at 90 %: 19.50; x 146,600,628 B = 2.86 GB/s.
    assert (
        "# Passes at AU >= 90% (metric.au): the store keeps 19.5 samples/s per GPU fed, 2.86 GB/s for 1 GPU(s)." in text
    )


def test_refusals() -> None:
    p = calc.plan("mlperf-unet3d-h100")
    with pytest.raises(InputError, match="format"):
        dlio.dlio_workload(p, format="parquet")
    with pytest.raises(InputError, match="epochs"):
        dlio.dlio_workload(p, epochs=0)
    with pytest.raises(InputError, match="plan: expected a Plan"):
        dlio.dlio_workload("mlperf-unet3d-h100")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="reads no dataset"):
        dlio.dlio_workload(calc.plan("mlperf-checkpoint-llama3-8b"))


def _dlio_python() -> str:
    """An interpreter that imports dlio_benchmark, or a skip that says how to get one."""
    python = os.environ.get("FEEDRATE_DLIO_PYTHON", sys.executable)
    probe = subprocess.run([python, "-c", "import dlio_benchmark.utils.config"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(
            "dlio_benchmark is not installed (README, 'Verify a store': pip install --no-deps dlio-benchmark "
            "with its light requirements and mpich; or FEEDRATE_DLIO_PYTHON=an interpreter that has it)"
        )
    return python


LOADER = """
import json, sys, yaml
from dlio_benchmark.utils.utility import DLIOMPI
DLIOMPI.get_instance().initialize()
from dlio_benchmark.utils.config import ConfigArguments, LoadConfig
args = ConfigArguments.get_instance()
LoadConfig(args, yaml.safe_load(open(sys.argv[1])))
print(json.dumps({k: str(getattr(args, k)) for k in sys.argv[2:]}))
"""


def test_dlio_s_own_loader_reads_the_exported_workload(tmp_path: Path) -> None:
    python = _dlio_python()
    path = tmp_path / "unet3d_feedrate.yaml"
    path.write_text(dlio.dlio_workload(calc.plan("mlperf-unet3d-h100")))
    keys = ["record_length", "record_length_stdev", "record_length_resize", "batch_size", "read_threads"]
    keys += ["computation_time", "num_files_train", "num_samples_per_file", "format", "epochs", "au", "framework"]
    run = subprocess.run(
        [python, "-c", LOADER, str(path), *keys], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["record_length"] == "146600628" and got["batch_size"] == "7" and got["read_threads"] == "4"
    assert got["computation_time"] == "0.323" and got["record_length_resize"] == "2097152"
    assert got["num_files_train"] == "18751" and got["num_samples_per_file"] == "1" and got["epochs"] == "5"
    assert got["format"] == "npz" and got["au"] == "0.9" and got["framework"] == "pytorch"


ARTICLE_SAVING_HOURLY = """\
# DLIO workload: beast-imagenet-4xv100-edited: resnet50 on 4 x V100-SXM2-16GB, fp16
# Written by Feedrate (calc.dlio_workload) from the plan: records, batch, workers and step time.
# Save as NAME.yaml in DLIO's configs/workload, then generate the files and run, one process a GPU:
#   dlio_benchmark workload=NAME ++workload.workflow.generate_data=True ++workload.workflow.train=False
#   mpirun -np GPUS dlio_benchmark workload=NAME
# Passes at AU >= 100% (metric.au): the store keeps 1,471 samples/s per GPU fed, 385.7 MB/s for 4 GPU(s).
# Read the summary back: calc.measure.dlio('summary.json').as_inputs() into calc.plan.
model:
  name: resnet50
  type: cnn
  model_size_bytes: 359661568
framework: pytorch
workflow:
  generate_data: false
  train: true
  checkpoint: true
dataset:
  data_folder: data/beast-imagenet-4xv100-edited
  format: npz
  num_files_train: 1281167
  num_samples_per_file: 1
  record_length_bytes: 65536
  record_length_bytes_stdev: 0
  record_length_bytes_resize: 602120
  record_length: 65536
  record_length_stdev: 0
  record_length_resize: 602120
reader:
  data_loader: pytorch
  batch_size: 128
  read_threads: 8
  prefetch_size: 16
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: 5
  computation_time: 0.087
metric:
  au: 1.0
checkpoint:
  checkpoint_folder: checkpoints/beast-imagenet-4xv100-edited
  steps_between_checkpoints: 41379
  type: rank_zero
  model_size: 359661568
"""


def test_the_whole_workload_of_the_articles_job_saving_hourly() -> None:
    # The article's job: ImageNet's 1,281,167 JPEGs of 64 KiB, one a file; 3 x 224 x 224 float32 + an int64 label
    # = 602,120 B decoded; batch 128 in 0.087 s on 8 workers with prefetch 2 (16 batches); target 100 %.
    # Saved every hour: 3,600 / 0.087 = 41,379.3 -> 41,379 steps; one rank writes (no sharding):
    # ResNet-50's checkpoint, the plan's 359,661,568 B.
    p = calc.plan("beast-imagenet-4xv100", checkpoint_interval_s="1 h")
    assert dlio.dlio_workload(p) == ARTICLE_SAVING_HOURLY


def test_refusals_name_the_field_and_what_is_accepted() -> None:
    p = calc.plan("mlperf-unet3d-h100")
    cases: list[tuple[Any, dict[str, Any], str, str]] = [
        (p, {"format": "parquet"}, "format", "'parquet'; accepted: " + ", ".join(dlio.FORMATS)),
        (p, {"epochs": 0}, "epochs", "0; accepted: a whole number of at least 1"),
        (p, {"epochs": True}, "epochs", "True; accepted: a whole number of at least 1"),
        (p, {"epochs": 1.5}, "epochs", "1.5; accepted: a whole number of at least 1"),
        ("mlperf-unet3d-h100", {}, "plan", "expected a Plan (calc.plan(...)), got str"),
        (
            calc.plan("mlperf-checkpoint-llama3-8b"),
            {},
            "plan",
            "mlperf-checkpoint-llama3-8b reads no dataset: DLIO's checkpoint-only workloads are not written here "
            "(calc.fio_job checks the save burst)",
        ),
        (
            dataclasses.replace(p, values={**p.values, "step_time_s": 0.0}),
            {},
            "plan",
            "mlperf-unet3d-h100 has no step time (the model does not fit): nothing to emulate",
        ),
    ]
    for plan, kw, field, message in cases:
        with pytest.raises(InputError) as e:
            dlio.dlio_workload(plan, **kw)
        assert (e.value.field, e.value.message) == (field, message)
    # One example is enough of a dataset.
    one = calc.plan("mlperf-unet3d-h100", dataset_examples=1)
    assert _load(dlio.dlio_workload(one))["dataset"]["num_files_train"] == 1


def test_two_writing_ranks_write_from_all_ranks_and_a_blank_model_says_so() -> None:
    # Llama 3 8B sharded over 2 GPUs: 2 ranks write (all_ranks); a model given by its own figures
    # (model="blank") has no family: its type is "blank".
    two = calc.plan("llama3-8b-pretrain-8xh100", gpus_per_job=2, state_shards=2)
    assert float(two.values["checkpoint_writing_ranks"]) == 2
    assert _load(dlio.dlio_workload(two))["checkpoint"]["type"] == "all_ranks"
    blank = calc.plan(
        model="blank", params=86e6, forward_flops_per_example="17.6 GFLOPs", activation_bytes_per_example="120 MiB",
        tensors="image=3x224x224:uint8,label=1:int64", cpu_seconds_per_example="4 ms", dataset_bytes="1.3 TB",
        dataset_examples=12e6, gpu="H100-SXM", precision="bf16",
    )  # fmt: skip
    assert _load(dlio.dlio_workload(blank))["model"] == {"name": "blank", "type": "blank"}
