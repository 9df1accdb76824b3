"""A DLIO workload YAML that emulates the job on a candidate store: ``calc.dlio_workload(plan)``.

DLIO (argonne-lcf/dlio_benchmark, the engine of MLPerf Storage) reads a workload's files the way a
training job's loader does and sleeps for the computation in between; its accelerator utilisation
(AU) says whether the store kept up. This writes the workload from the plan:

- ``dataset``: one record per example of ``example_bytes`` (``record_length_bytes``), its spread
  (``example_bytes_cv`` x size), the decoded sample (``example_tensor_bytes``), the files
  (``dataset_examples`` / ``examples_per_file``) and the format that reads them as the plan counts:
  one example per file is ``npz`` (DLIO's reader loads the whole file); a read size below the file
  (``request_bytes`` given) is ``tfrecord`` read in ``transfer_size`` chunks; many whole examples per
  file is ``indexed_binary`` (each sample read at its offset);
- ``reader``: batch size per GPU, ``read_threads`` = the loader's workers, ``prefetch_size`` =
  ``prefetch_factor`` x workers (DLIO's PyTorch loader takes ``ceil(prefetch_size / read_threads)``);
- ``train``: ``computation_time`` = the plan's step time; ``metric.au`` = the target utilisation;
- ``checkpoint`` where the plan saves: every ``interval / step time`` steps, each writing rank's shard.

Key names: DLIO's current documentation and MLPerf Storage v2 configs write ``model.name``,
``record_length_bytes`` and ``model.model_size_bytes``; dlio-benchmark 2.0.0 (the PyPI release)
reads ``record_length`` and ``checkpoint.model_size``. Each version ignores the other's keys, so
both are written, with the same figures.

References
----------
argonne-lcf/dlio_benchmark docs/source/config.rst and dlio_benchmark/configs/workload/unet3d_h100.yaml
(read 2026-11-26); mlcommons/storage configs/dlio/workload/unet3d_h100.yaml; dlio-benchmark 2.0.0,
``dlio_benchmark.utils.config.LoadConfig``. docs/model.md 7.8.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from calc import catalog
from calc.errors import InputError
from calc.plan import Plan
from calc.scenario import BLANK_MODEL

FORMATS = ("npz", "npy", "tfrecord", "hdf5", "indexed_binary", "mmap_indexed_binary", "jpeg", "png", "csv")
"""DLIO dataset formats (dlio-benchmark 2.0.0 ``FormatType``, less ``synthetic``, which reads no store)."""

EPOCHS = 5
"""Epochs to emulate: MLPerf Storage's training workloads run 5 (unet3d_h100.yaml ``train.epochs``)."""


def data_format(examples_per_file: int, request_given: bool) -> str:
    """The DLIO format that reads as the plan counts (module docstring)."""
    if request_given:
        return "tfrecord"
    return "npz" if examples_per_file == 1 else "indexed_binary"


def prefetch_size(prefetch_factor: int, read_threads: int) -> int:
    """DLIO ``prefetch_size`` [batches] whose ``ceil(prefetch_size / read_threads)`` is the plan's
    ``prefetch_factor`` (``prefetch_factor`` itself with no worker threads)."""
    return prefetch_factor * max(read_threads, 1)


def steps_between(interval_s: float, step_s: float) -> int:
    """Training steps between checkpoints [1]: the interval over the step time, at least 1."""
    return max(1, round(interval_s / step_s))


def _sig(x: float) -> float:
    """Six significant figures: a YAML reader sees 0.323, not 0.32300000000000006."""
    return float(f"{x:.6g}")


def workload(p: Plan, data_folder: str, fmt_name: str | None, epochs: int) -> dict[str, Any]:
    """The workload as a mapping (``dlio_workload`` dumps it)."""
    sc, v, inp = p.scenario, p.values, p.inputs
    per_file = int(sc.examples_per_file)
    request_given = math.isfinite(float(inp["request_bytes_given"]))
    form = fmt_name or data_format(per_file, request_given)
    if form not in FORMATS:
        raise InputError("format", f"{form!r}; accepted: {', '.join(FORMATS)}")
    record = round(float(inp["example_bytes"]))
    stdev = round(float(inp["example_bytes_cv"]) * record)
    files = max(1, math.ceil(float(inp["dataset_examples"]) / per_file - 1e-9))
    step = float(v["step_time_s"])
    threads = int(sc.num_workers)
    family = catalog.model(sc.model).family if sc.model != BLANK_MODEL else BLANK_MODEL
    saves = float(v["checkpoint_save_burst_bytes_per_s"]) > 0 and float(v["checkpoint_interval_used_s"]) > 0
    shard = round(float(v["checkpoint_rank_bytes"]))
    reader: dict[str, Any] = {
        "data_loader": "pytorch",
        "batch_size": int(v["batch_size"]),
        "read_threads": threads,
        "prefetch_size": prefetch_size(int(sc.prefetch_factor), threads),
        "file_shuffle": "seed",
        "sample_shuffle": "seed",
    }
    if form == "tfrecord":
        reader["transfer_size"] = round(float(v["request_bytes"]))
    out: dict[str, Any] = {
        "model": {"name": sc.model, "type": family, **({"model_size_bytes": shard} if saves else {})},
        "framework": "pytorch",
        "workflow": {"generate_data": False, "train": True, "checkpoint": saves},
        "dataset": {
            "data_folder": data_folder,
            "format": form,
            "num_files_train": files,
            "num_samples_per_file": per_file,
            "record_length_bytes": record,
            "record_length_bytes_stdev": stdev,
            "record_length_bytes_resize": round(float(inp["example_tensor_bytes"])),
            # dlio-benchmark 2.0.0 (PyPI) reads these names: the same figures.
            "record_length": record,
            "record_length_stdev": stdev,
            "record_length_resize": round(float(inp["example_tensor_bytes"])),
        },
        "reader": reader,
        "train": {"epochs": epochs, "computation_time": _sig(step)},
        "metric": {"au": _sig(float(sc.target_gpu_utilization))},
    }
    if saves:
        out["checkpoint"] = {
            "checkpoint_folder": f"checkpoints/{sc.name}",
            "steps_between_checkpoints": steps_between(float(v["checkpoint_interval_used_s"]), step),
            "type": "all_ranks" if float(v["checkpoint_writing_ranks"]) > 1 else "rank_zero",
            "model_size": shard,  # dlio-benchmark 2.0.0's name for model.model_size_bytes
        }
    return out


def dlio_workload(p: Plan, *, data_folder: str | None = None, format: str | None = None, epochs: int = EPOCHS) -> str:
    """The DLIO workload YAML of a plan (module docstring), with a header naming what passes.

    ``data_folder`` is where DLIO generates and reads the files (default ``data/<scenario>``);
    ``format`` overrides the one the plan's reads imply; ``epochs`` the emulated epochs.
    """
    if not isinstance(p, Plan):
        raise InputError("plan", f"expected a Plan (calc.plan(...)), got {type(p).__name__}")
    if float(p.values["step_time_s"]) <= 0:
        raise InputError("plan", f"{p.scenario.name} has no step time (the model does not fit): nothing to emulate")
    if not float(p.inputs["dataset_examples"]) > 0:
        raise InputError(
            "plan",
            f"{p.scenario.name} reads no dataset: DLIO's checkpoint-only workloads are not written here "
            "(calc.fio_job checks the save burst)",
        )
    if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
        raise InputError("epochs", f"{epochs!r}; accepted: a whole number of at least 1")
    folder = data_folder or f"data/{p.scenario.name}"
    w = workload(p, folder, format, epochs)
    sc = p.scenario
    head = [
        f"# DLIO workload: {p.title}",
        "# Written by Feedrate (calc.dlio_workload) from the plan: records, batch, workers and step time.",
        "# Save as NAME.yaml in DLIO's configs/workload, then generate the files and run, one process a GPU:",
        "#   dlio_benchmark workload=NAME ++workload.workflow.generate_data=True ++workload.workflow.train=False",
        "#   mpirun -np GPUS dlio_benchmark workload=NAME",
        f"# Passes at AU >= {sc.target_gpu_utilization:.0%} (metric.au): the store keeps "
        f"{p.formatted('per_gpu_samples_per_s')} per GPU fed, {p.formatted('read_bytes_per_s')} for "
        f"{sc.gpus_per_job * sc.jobs} GPU(s).",
        "# Read the summary back: calc.measure.dlio('summary.json').as_inputs() into calc.plan.",
    ]
    return "\n".join(head) + "\n" + yaml.safe_dump(w, sort_keys=False)
