"""plan(): resolve a Scenario against the presets, evaluate every formula, explain it.

Data flows one way: Scenario -> ``resolve`` (look-ups and parsing only, into base-unit
numbers) -> ``evaluate`` (every formula, vectorised, in named steps: memory, compute, demand,
host, storage, pipeline, transfer) -> ``Plan``. ``evaluate`` takes numbers or NumPy arrays, so
``plan`` (one scenario), ``sweep`` (a grid), the CLI and the dashboard share one code path.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from calc import catalog, pipeline, storage, transformer
from calc.errors import DoesNotFitError, InputError
from calc.explain import explained, format_output, formula, render_formula
from calc.registry import OUTPUTS, STATES
from calc.resolve import blank_model, optimizer, resolve
from calc.scenario import BLANK_MODEL, FIELDS, Scenario, closest
from calc.scenario import scenario as preset_scenario
from calc.stages import _EXTRA, STAGE_KEYS, UNLIMITED, evaluate
from calc.units import fmt

HEADLINE = (
    "batch_size",
    "step_time_s",
    "samples_per_s",
    "read_iops",
    "read_bytes_per_s",
    "worker_ram_bytes",
    "cpu_cores",
    "gpu_utilization",
)
"""The outputs a meeting looks at first: the dashboard's headline row, the report's summary."""
CHECKPOINT_HEADLINE = (
    "checkpoint_bytes",
    "checkpoint_write_bytes_per_s",
    "checkpoint_save_burst_bytes_per_s",
    "checkpoint_restore_s",
    "checkpoint_capacity_bytes",
)
"""What a job that saves asks of storage, shown after HEADLINE when it saves (``Plan.headline_outputs``): an
LLM's reads are kilobytes a second, its checkpoints what storage is bought for."""


@dataclass(frozen=True)
class Plan:
    """The requirements of one scenario, every output of ``OUTPUTS`` in base units, with sources.

    ``explain()`` shows each formula with its numbers; ``to_frame()`` a table with units.
    Outputs are typed attributes (``plan.read_bytes_per_s`` in bytes/s); ``values`` holds
    them and the intermediate values by name.
    """

    scenario: Scenario
    values: Mapping[str, float]
    sources: Mapping[str, str]
    inputs: Mapping[str, float]
    step_method: str
    bottleneck: str
    stages: Mapping[str, float]
    warnings: tuple[str, ...] = field(default=())

    def __getattr__(self, name: str) -> float:
        # Every output of the registry is an attribute in base units (batch sizes are ints).
        out = OUTPUTS.get(name)
        if out is None or name.startswith("__"):
            raise AttributeError(f"Plan has no output {name!r}; outputs: calc.OUTPUTS")
        value = self.values[name]
        return int(value) if out.integer else float(value)

    @property
    def saves(self) -> bool:
        """Whether the job saves checkpoints (a given or an optimal interval, or a write rate)."""
        return self.values["checkpoint_write_bytes_per_s"] > 0 or self.values["checkpoint_interval_used_s"] > 0

    @property
    def headline_outputs(self) -> tuple[str, ...]:
        """The outputs to show first: HEADLINE, then CHECKPOINT_HEADLINE when the job saves."""
        return HEADLINE + CHECKPOINT_HEADLINE if self.saves else HEADLINE

    @property
    def title(self) -> str:
        """The scenario's name and what it runs: for headings, reports and file names."""
        sc = self.scenario
        return f"{sc.name}: {sc.model} on {sc.gpus_per_job * sc.jobs} x {sc.gpu}, {sc.precision}"

    def formatted(self, name: str) -> str:
        """One output with its unit: ``"5,885 reads/s"``, ``"12.97 GiB"``.

        Raises
        ------
        InputError
            An unknown output, naming it and the closest outputs.
        """
        if name not in OUTPUTS:
            raise InputError(name, f"not an output{closest(name, OUTPUTS)}; accepted: calc.OUTPUTS")
        if name == "goodput" and self.values[name] == 0 and self.values["checkpoint_interval_used_s"] > 0:
            return "0.00 % (interruptions cost more than the MTBF)"  # saving, yet nothing useful
        return format_output(name, self.values[name])

    def explain(self) -> str:
        """Each formula, then the same with the numbers plugged in, and the result."""
        lines = [f"Plan for {self.title}"]
        for name in explained(self):
            symbolic, numeric = render_formula(self, formula(self, name))
            lines.append(f"{name} = {symbolic}")
            if numeric != symbolic:
                lines.append(f"    = {numeric}")
            lines.append(f"    = {self.formatted(name)}")
        lines.append(
            f"bottleneck = {self.bottleneck} (stage capacities per GPU: "
            + ", ".join(f"{k} {fmt(v, 'count_per_s', 'samples/s')}" for k, v in self.stages.items())
            + ")"
        )
        lines.append(f"step time method: {self.step_method}")
        lines.append("Sources:")
        lines += [f"  {k}: {v}" for k, v in sorted(self.sources.items()) if v]
        lines += [f"Warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """Outputs as a table: name, label, value (base units), formatted value, formula."""
        rows = [
            {
                "output": k,
                "label": o.label,
                "value": float(self.values[k]),
                "display": self.formatted(k),
                "formula": render_formula(self, formula(self, k))[0],
            }
            for k, o in OUTPUTS.items()
        ]
        return pd.DataFrame(rows).set_index("output")

    def to_dict(self) -> dict[str, Any]:
        """Outputs in base units plus the method and bottleneck (for JSON/YAML)."""
        out: dict[str, Any] = {k: float(self.values[k]) for k in OUTPUTS}
        out["batch_size"] = self.batch_size
        out["max_batch_size"] = self.max_batch_size
        out["step_method"] = self.step_method
        out["bottleneck"] = self.bottleneck
        return out

    def __repr__(self) -> str:
        return (
            f"Plan({self.scenario.name}: "
            + ", ".join(f"{k}={self.formatted(k)}" for k in HEADLINE)
            + f", bottleneck={self.bottleneck})"
        )


def as_scenario(scenario: Any = None, **inputs: Any) -> Scenario:
    """A Scenario from an object, a preset name or inputs, with ``inputs`` applied."""
    if scenario is None:
        unknown = sorted(set(inputs) - set(FIELDS))
        if unknown:
            return Scenario().replace(**inputs)  # raises, naming the unknown input
        return Scenario(**inputs)
    if isinstance(scenario, str):
        return preset_scenario(scenario, **inputs)
    if isinstance(scenario, Plan):
        scenario = scenario.scenario
    if not isinstance(scenario, Scenario):
        raise InputError("scenario", f"expected a Scenario, a Plan or a preset name, got {type(scenario).__name__}")
    return scenario.replace(**inputs) if inputs else scenario


def plan(scenario: Scenario | str | None = None, **inputs: Any) -> Plan:
    """Evaluate a scenario (an object, a preset name, or inputs) into a Plan.

    ``plan("beast-imagenet-4xv100", gpus_per_job=8)``, ``plan(my_scenario)`` or
    ``plan(gpu="H100-SXM", model="vit_b16")``: inputs override the scenario's.

    Plans are immutable and presets are read once per process, so the last 512 distinct
    scenarios are kept: asking again costs a dictionary look-up.

    Raises
    ------
    DoesNotFitError
        When the model does not fit in GPU memory (at batch 1, or at the fixed batch).
    InputError
        For any invalid input, naming the field.
    """
    return _plan(as_scenario(scenario, **inputs))


def _too_small(sc: Scenario, values: Mapping[str, float]) -> list[str]:
    """A warning when the named storage, at the units given, cannot hold what is stored on it.

    RAM holds a copy of the dataset on every node (its capacity is per node); other options hold
    the dataset and the kept checkpoints in units x capacity per unit (raw, before protection).
    """
    o = storage.options(sc.storage).get(sc.storage or "")
    if o is None or not math.isfinite(o.capacity_bytes):
        return []
    # No units given: the plan reads the option at its largest size, which must hold it too (issue 38:
    # node RAM warned only when units were given, and supplied without limit a dataset it cannot hold).
    units = sc.storage_units if sc.storage_units is not None else o.max_units
    if o.kind == "ram":
        have, stored, what = o.capacity_bytes, values["dataset_bytes"], "the dataset"
        where = f"{fmt(have, 'bytes')} per node (each node holds its own copy)"
    elif math.isfinite(units):
        have = units * o.capacity_bytes
        stored = values["dataset_bytes"] + values["checkpoint_capacity_bytes"]
        what = "the dataset and the kept checkpoints"
        largest = " (its largest size)" if sc.storage_units is None else ""
        where = f"{fmt(have, 'bytes')} in {units:g} x {o.name}{largest} (raw, before protection)"
    else:
        return []
    if stored <= have:
        return []
    fix = (
        "choose a store that holds it"
        if o.kind == "ram" or sc.storage_units is None
        else "add units or choose a larger store"
    )
    return [f"{o.name} holds {where}, less than {what} ({fmt(stored, 'bytes')}): the rates assume it fits; {fix}."]


def _spinning_threads(sc: Scenario, values: Mapping[str, float]) -> list[str]:
    """A warning where workers run more than one intra-op thread each on fewer cores than threads.

    The core share (calc.host.worker_core_share) prices such threads as sharing the cores, at most
    threads_per_worker x slower; torch's OpenMP threads busy-wait instead. This repository's DataLoader
    runs (benchmarks/results/loader_costs_epyc-zen5-kvm.json, runs.threads:tv; presets/loader_validation.yaml
    own-threads-tv-01/03/08, held out, never fitted) took 9.8-12.4x the CPU time per image with 2 workers
    x 2 torch threads on 2 cores; OpenCV's threads (tv-05/06) only 1.2-1.3x."""
    threads = sc.threads_per_worker
    runnable = values["workers_on_node"] * threads
    if threads <= 1 or runnable <= values["loader_cores_per_node"]:
        return []
    return [
        f"{values['workers_on_node']:g} workers x {threads} threads = {runnable:g} threads on "
        f"{values['loader_cores_per_node']:g} cores: torch's waiting OpenMP threads spin on busy cores, and runs "
        "here took 10-12x the CPU time per image (the plan prices at most "
        f"{threads}x); set threads_per_worker=1, as PyTorch does in DataLoader workers."
    ]


def _loader_ram_over_host(values: Mapping[str, float], have: float, sources: Mapping[str, str]) -> list[str]:
    """A warning where the batches in flight of every training process on a node need more RAM than the
    node has: the loaders would swap or be killed, and no RAM is left for the page cache (calc.host)."""
    need = values["host_ram_per_node_bytes"]
    if need <= have:
        return []
    src = sources.get("host_ram_bytes", "scenario")
    return [
        f"Loader RAM per node {fmt(need, 'bytes', binary=True)} ({values['gpus_on_node']:g} GPUs x "
        f"{fmt(values['worker_ram_bytes'], 'bytes', binary=True)}) exceeds the node's host RAM, "
        f"{fmt(have, 'bytes', binary=True)} ({'given' if src == 'scenario' else src}): fewer workers, a smaller "
        "prefetch_factor or batch, pin_memory off, or set host_ram_bytes to a node with more."
    ]


_KEPT = tuple(dict.fromkeys((*OUTPUTS, *_EXTRA, "anchor_batch_size")))
"""The names a Plan's values hold, in order: the outputs, then the intermediate values it keeps."""
_kept_and_states, _outputs = (
    operator.itemgetter(*_KEPT, "fits", "step_method", "bottleneck"),
    operator.itemgetter(*OUTPUTS),
)
"""A plan's kept values, then the states it reads once (evaluate's numbers hold nothing else), and the outputs'
values, each in one call (dict comprehensions cost ~6 us each)."""
_limited = operator.itemgetter(*(k for k in OUTPUTS if k not in UNLIMITED))
_unlimited = operator.itemgetter(*UNLIMITED)
"""The outputs that must be finite, and those that may be infinite (nothing limits them)."""


@functools.lru_cache(maxsize=512)
def _plan(sc: Scenario) -> Plan:
    """``plan`` of one Scenario, uncached (``plan`` caches it)."""
    r = resolve(sc)
    out = evaluate(r.values)
    # One pass: the kept values as floats in _KEPT's order (the Plan's values, read-only below), and the states.
    got = list(map(float, _kept_and_states(out)))
    values = dict(zip(_KEPT, got[: len(_KEPT)], strict=True))
    fits, step_code, bottleneck_code = got[len(_KEPT) :]
    warnings = list(r.warnings)
    if not fits:
        raise _does_not_fit(sc, values)
    if sc.activation_checkpointing == "auto" and values["checkpointing_used"] > 0:
        mode = transformer.CHECKPOINTING[int(values["checkpointing_used"])]
        warnings.append(
            f"activation_checkpointing auto: {mode}, the least recompute that fits "
            f"({fmt(values['activation_bytes_per_example'], 'bytes', binary=True)} of activations per sequence); "
            "set activation_checkpointing to choose."
        )
    warnings += transformer.bubble_note(
        values["pipeline_bubble"], sc.pipeline_parallel, sc.gradient_accumulation, sc.virtual_pipeline_stages
    )
    if values["h2d_share_of_step"] > 0.5:
        warnings.append(
            "The host-to-GPU copy takes over half the step: overlap it (pin_memory, a side stream) or send uint8."
        )
    method = STATES["step_method"][int(step_code)]
    if method == "re-projected measurement":
        warnings.append(_reprojected(sc, r.values, values, r.sources.get("reprojection_band", "")))
    if method in ("measured step time", "measured throughput", "re-projected measurement"):
        warnings += _faster_than_peak(sc, r.values, values)
    warnings += _too_small(sc, values)
    warnings += _outside_range(r.values, values)
    warnings += _spinning_threads(sc, values)
    warnings += _loader_ram_over_host(values, r.values["host_ram_bytes"], r.sources)
    stages = {s: values[STAGE_KEYS[s]] for s in pipeline.STAGES if math.isfinite(values[STAGE_KEYS[s]])}
    bad = _bad_outputs(values)
    if bad:
        raise InputError(bad[0], f"the inputs give a non-finite or negative {bad[0]}; check the inputs it depends on")
    return Plan(
        scenario=sc,
        # Read-only views: a cached Plan is shared by every caller that asks for the same scenario.
        values=MappingProxyType(values),
        sources=MappingProxyType(r.sources),
        inputs=MappingProxyType(r.values),
        step_method=method,
        bottleneck=STATES["bottleneck"][int(bottleneck_code)],
        stages=stages,
        warnings=tuple(warnings),
    )


def _bad_outputs(values: Mapping[str, float]) -> list[str]:
    """The outputs that are NaN, negative, or infinite where something must limit them, in OUTPUTS' order."""
    # The check per output only where one may fail it (~5 us a plan otherwise): a finite sum has no NaN
    # or infinity, a sum that is not NaN no NaN, and then the least is a true minimum.
    limited, unlimited = _limited(values), _unlimited(values)
    if math.isfinite(sum(limited)) and min(limited) >= 0 and not math.isnan(sum(unlimited)) and min(unlimited) >= 0:
        return []
    # NaN fails 0 <= v; a negative number and infinity fail it or v < inf (infinity is allowed where unlimited)
    return [
        k
        for k, v in zip(OUTPUTS, _outputs(values), strict=True)
        if not 0 <= v < math.inf and (v != math.inf or k not in UNLIMITED)
    ]


YOUNG_DALY_VALID_SHARE = 0.1
"""Largest blocking save, as a share of the job's MTBF, at which the first-order Young-Daly
interval ``sqrt(2 x save x MTBF)`` is trusted [1]. Daly's higher-order optimum multiplies it by
``1 + sqrt(save / (2 MTBF)) / 3 + save / (18 MTBF)`` (less the save) for save < 2 MTBF: at 10 %
the first-order term is off by about 8 %, and the gap widens quickly past it.

References
----------
J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
Future Generation Computer Systems 22(3), 303-312 (2006), eq. 37; doi:10.1016/j.future.2004.11.016.
"""


def _outside_range(x: Mapping[str, float], v: Mapping[str, float]) -> list[str]:
    """Warnings where the checkpoint model leaves its range: a stall share above the budget
    (a save that takes longer than the budget allows, or than the interval), and a save so long
    against the MTBF that the Young-Daly interval and goodput are outside their validity."""
    out: list[str] = []
    if v["checkpoint_interval_used_s"] <= 0:
        return out
    share, budget = v["checkpoint_stall_share"], x["checkpoint_stall_fraction"]
    if share > budget * (1 + 1e-9):
        out.append(
            f"Checkpoint saves block {share:,.1%} of training time, above the stall budget of {budget:.1%} "
            f"(checkpoint_stall_fraction): each save blocks {fmt(v['checkpoint_blocking_s'], 'seconds')} every "
            f"{fmt(v['checkpoint_interval_used_s'], 'seconds')}"
            + (", longer than the interval: training cannot keep up" if share > 1 else "")
            + "; write faster (more or faster storage, async saves) or save less often."
        )
    blocking, mtbf = v["checkpoint_blocking_s"], v["mtbf_job_s"]
    if blocking > YOUNG_DALY_VALID_SHARE * mtbf:
        out.append(
            f"A save blocks {fmt(blocking, 'seconds')}, {blocking / mtbf:.0%} of the job's MTBF "
            f"({fmt(mtbf, 'seconds')}): the Young-Daly interval ({fmt(v['young_daly_interval_s'], 'seconds')}) "
            f"and goodput assume a save much shorter than the MTBF (under {YOUNG_DALY_VALID_SHARE:.0%}; "
            "Daly 2006), so both are outside their range; make the save shorter."
        )
    return out


def _reprojected(sc: Scenario, x: Mapping[str, float], v: Mapping[str, float], band: str) -> str:
    """How far the measured step moved, and on what ratio (calc.compute.reprojection)."""
    measured = _measured_step(x, v)
    rate = v["anchor_batch_size"] / measured
    gpu = v["reprojection_gpu_rate_ratio"]
    model_gpu = v["mid_model_step_time_s"] / v["model_step_time_s"]
    lo, hi = x["reprojection_band_low"], x["reprojection_band_high"]
    mid_batch = v["mid_batch_size"]
    held = (
        f" (the batch beyond the {mid_batch:g} the {sc.measured_gpu} holds moves with the GPU)"
        if mid_batch < v["batch_size"]
        else ""
    )
    said = (
        f"the GPU change at x{gpu:.3g}{held}, the model's own x{model_gpu:.3g}"
        + (
            f" kept inside [x{lo:.3g}, x{hi:.3g}] ({band})"
            if abs(gpu - model_gpu) > 1e-9 * gpu
            else f", inside [x{lo:.3g}, x{hi:.3g}] ({band})"
        )
        if sc.measured_gpu != sc.gpu
        else "the same GPU"
    )
    return (
        f"The measured step ({sc.measured_gpu}, {sc.measured_precision}, batch {v['anchor_batch_size']:g}: "
        f"{fmt(measured, 'seconds')}, {rate:,.0f} samples/s per GPU) is re-projected to {sc.gpu}, {sc.precision}, "
        f"batch {v['batch_size']:g}: step x{v['reprojection_ratio']:.3g}, {v['gpu_samples_per_s']:,.0f} samples/s per "
        f"GPU; the batch and precision by the step-time model, {said}."
    )


def _measured_step(x: Mapping[str, float], v: Mapping[str, float]) -> float:
    step = x["measured_step_time_s"]
    return step if math.isfinite(step) else v["anchor_batch_size"] / x["measured_samples_per_s"]


def _faster_than_peak(sc: Scenario, x: Mapping[str, float], v: Mapping[str, float]) -> list[str]:
    """A warning when the measurement implies more math per second than its GPU's peak allows.

    Implied rate = training FLOPs per example x the measured batch / the measured step [FLOP/s],
    against the dense peak of the GPU and precision it was measured at. Above it, the figure
    was taken at another precision (tensor-core fp16/bf16), batch or model, or is a typo.
    """
    implied = v["train_flops_per_example"] * v["anchor_batch_size"] / _measured_step(x, v)
    peak = x["anchor_peak_flops_per_s"]
    if not implied > peak:
        return []
    what = "step time" if sc.step_time_s is not None else "throughput"
    return [
        f"The measured {what} implies {fmt(implied, 'flops_per_s')} of training math per GPU "
        f"({fmt(v['train_flops_per_example'], 'flops')} x batch {v['anchor_batch_size']:g} / "
        f"{fmt(_measured_step(x, v), 'seconds')}), {implied / peak:.2f} x the {fmt(peak, 'flops_per_s')} "
        f"{sc.measured_precision} peak of {sc.measured_gpu}: was it measured at another precision "
        "(tensor-core fp16/bf16), batch or model?"
    ]


def _optimizer(sc: Scenario) -> str:
    """The optimizer the plan used: the scenario's, else its model family's (calc.resolve.optimizer)."""
    return optimizer(sc, blank_model(sc) if sc.model == BLANK_MODEL else catalog.model(sc.model))


def _state_parts(v: Mapping[str, float]) -> str:
    """The model state per GPU, item by item (calc.memory.sharded_state_parts)."""

    def gib(b: float) -> str:
        return fmt(b, "bytes", binary=True)

    return (
        f"state {gib(v['model_state_bytes'])}: weights {gib(v['weights_bytes'])} + gradients "
        f"{gib(v['gradients_bytes'])} + optimizer {gib(v['optimizer_state_bytes'])}"
    )


def _sharding_fits(sc: Scenario, v: Mapping[str, float]) -> str:
    """What sharding makes one example fit: the smallest ZeRO-3 group, or why none does."""
    group = v["smallest_shard_group"]
    if not math.isfinite(group):
        return (
            "no sharding of the state fits it: one example's activations alone leave no room "
            "(activation checkpointing, a shorter sequence, or tensor/context parallelism split them)"
        )
    return f"sharding the state fully (zero_stage=3, FSDP) over at least {group:,.0f} GPUs fits one example" + (
        f" (this job has {sc.gpus_per_job // max(sc.tensor_parallel * sc.pipeline_parallel, 1):,} data-parallel ranks)"
        if sc.gpus_per_job > 1
        else ""
    )


def _does_not_fit(sc: Scenario, v: Mapping[str, float]) -> DoesNotFitError:
    def gib(b: float) -> str:
        return fmt(b, "bytes", binary=True)

    helps = (
        "What helps: mixed precision (bf16/fp16), activation checkpointing (activation_checkpointing for a "
        "transformer by its architecture, else set activation_bytes_per_example), a smaller input, sharding the "
        "state (zero_stage, shard_group, state_shards), tensor/pipeline parallelism, or a GPU with more memory."
    )
    if sc.batch_size is not None:
        need = v["memory_used_bytes"]
        n_max = int(v["max_batch_size"])
        return DoesNotFitError(
            "batch_size",
            f"{sc.model} at batch {sc.batch_size} does not fit on {sc.gpu} with {sc.precision}/{_optimizer(sc)}: "
            "it needs "
            f"{gib(need)} (reserve {gib(v['reserved_bytes'])} + {_state_parts(v)} + activations "
            f"{sc.batch_size} x {gib(v['activation_bytes_per_example'])}) "
            f"but the GPU has {gib(v['gpu_memory_bytes'])}; "
            f"the largest micro-batch that fits is {n_max}"
            + (f"; {_sharding_fits(sc, v)}" if n_max < 1 else "")
            + f". {helps}",
        )
    need = v["reserved_bytes"] + v["model_state_bytes"] + v["activation_bytes_per_example"]
    return DoesNotFitError(
        "batch_size",
        f"{sc.model} does not fit on {sc.gpu} at batch 1 with {sc.precision}/{_optimizer(sc)}: it needs {gib(need)} "
        f"(reserve {gib(v['reserved_bytes'])} + {_state_parts(v)} + one example's activations "
        f"{gib(v['activation_bytes_per_example'])}) but the GPU has {gib(v['gpu_memory_bytes'])}, "
        f"short by {gib(need - v['gpu_memory_bytes'])}; the largest micro-batch that fits is 0; "
        f"{_sharding_fits(sc, v)}. {helps}",
    )


def memory_line(p: Plan) -> str:
    """GPU memory per GPU, item by item, the largest micro-batch that fits and the fewest shards (card, report)."""
    v = p.values

    def gib(k: str) -> str:
        return p.formatted(k)

    group = v["smallest_shard_group"]
    return (
        f"GPU memory per GPU: weights {gib('weights_bytes')} + gradients {gib('gradients_bytes')} + optimizer "
        f"{gib('optimizer_state_bytes')} + activations {gib('activations_bytes')} (batch {p.batch_size:,}) + reserve "
        f"{gib('reserved_bytes')} = {gib('memory_used_bytes')} of {gib('gpu_memory_bytes')}; the largest micro-batch "
        f"that fits is {p.max_batch_size:,}"
        + (
            f", and the state fits one example when sharded over {group:,.0f} GPU{'s' if group != 1 else ''} or more"
            if math.isfinite(group) and group > 1
            else ""
        )
        + "."
    )


def stack_line(p: Plan) -> str:
    """The software stack the step time stands for, named, with the default said (card, report)."""
    sc = p.scenario
    label = catalog.STACK_LABELS[sc.stack]
    default = " (the default)" if sc.stack == Scenario().stack else ""
    return f"Step time on {label}{default}; stack: ngc, eager, optimized or compiled."
