"""sweep(): evaluate a grid of scenarios at once, vectorised with NumPy, by plan()'s own path.

Every axis, numeric or a preset name, goes through ``resolve`` once per value; the resolved
numbers that value changes become columns of the grid, and ``evaluate`` runs once over the
Cartesian product. Axes whose values change the same resolved numbers (``gpu`` and
``gpu_memory_bytes``, say), that ``Scenario`` and ``resolve`` read together (``COUPLED``: a
measurement and where it was taken, parallel layouts, checkpoint modes and the GPU count, the
site link and what places the job and its store, a read and its file), or whose sampled
combinations resolve otherwise than their parts (``_interacting``), are resolved together, per
combination. So each row is exactly what ``plan()`` of that scenario gives, storage supply and
all, without a Python loop per row; a combination ``plan()`` refuses (an InputError) is refused
by the sweep too, and one it accepts is accepted. The one difference: a row whose
model does not fit in GPU memory is kept, marked ``fits = False`` (``plan()`` raises
``DoesNotFitError``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from calc.errors import InputError
from calc.plan import as_scenario
from calc.registry import OUTPUTS, STATES
from calc.resolve import resolve
from calc.scenario import FIELDS, Scenario, check_field, unknown_input
from calc.stages import UNLIMITED, evaluate
from calc.units import parse

CATEGORICAL = tuple(k for k, f in FIELDS.items() if f.kind == "choice")
"""Axes that name presets or choices (gpu, model, precision, storage ...)."""

_MEASURED = (
    "step_time_s",
    "samples_per_s_per_gpu",
    "measured_gpu",
    "measured_batch_size",
    "measured_precision",
    "measured_train_resolution",
)

MEASUREMENT = frozenset({*_MEASURED, "gpu", "precision", "batch_size", "train_resolution"})
"""A new measurement records the GPU, precision and batch it was taken at (``Scenario.replace``)
and the re-projection compares them: 100 ms given with gpu=A100 was measured on the A100. Axes
here are resolved together when one of them is a measurement input."""

_LAYOUT = frozenset(
    {
        "tensor_parallel",
        "pipeline_parallel",
        "context_parallel",
        "virtual_pipeline_stages",
        "gpus_per_job",
        "state_shards",
        "zero_stage",
        "data_parallel_framework",
        "checkpoint_mode",
        "model",
        "layers",
        "hidden",
        "heads",
        "kv_heads",
        "seq_len",
        # issue 29: the shard group and the mixture of experts' rules couple with the layout too
        "shard_group",
        "expert_parallel",
        "experts",
        "experts_active",
        "expert_ffn_hidden",
        "shared_experts",
        "dense_layers",
    }
)

COUPLED: tuple[frozenset[str], ...] = (
    # A precision the GPU lacks is refused (resolve), whatever else is overridden.
    frozenset({"gpu", "precision"}),
    # tensor x pipeline x context parallel must divide the GPU count, state shards at most the
    # GPU count, the layout must fit the architecture (calc.transformer.check_layout / check_experts,
    # the shard group against the data-parallel ranks); checkpoint_mode="auto" saves asynchronously
    # when the state is sharded (zero_stage > 0 or TP x PP > 1).
    _LAYOUT,
    # A read larger than one file is noted (resolve's warning) against the file's size.
    frozenset({"request_bytes", "example_bytes", "examples_per_file", "model"}),
    # The link between sites applies only when the storage's site differs from the job's
    # (site, else the server's, else the storage's).
    frozenset({"site", "server", "storage", "site_link_bytes_per_s", "allow_other_site"}),
    # A provisioned-by-size service runs the metadata rate of the units given.
    frozenset({"storage", "storage_units"}),
    # Milestones are counted over the run: one needs the other.
    frozenset({"run_length_s", "train_tokens", "checkpoint_milestone_interval_s", "model"}),
    # A measured CPU time records the CPU it ran on (the given one, else the server's): another CPU
    # re-projects it (calc.host.remeasured_seconds).
    frozenset({"cpu_seconds_per_example", "measured_cpu", "cpu", "server"}),
)
"""Inputs that ``Scenario`` or ``resolve`` read together: as axes, they are resolved per
combination even when they change different resolved numbers. A rule missing here is still
found: ``_interacting`` resolves sample combinations of every pair of axes and groups the pair
when the combination differs from its parts."""

PAIR_SAMPLE = 3
"""Values of each axis tried together with each other axis's (``_interacting``): first, middle
and last; every combination when both axes have at most this many values."""


def axis_values(name: str, values: Any) -> list[Any]:
    if isinstance(values, np.ndarray):
        if values.ndim > 1:
            raise InputError(name, f"an axis is a list of values; got a {values.ndim}-D array")
        values = values.reshape(-1).tolist()  # a 0-d array is one value
    if isinstance(values, Mapping):
        raise InputError(name, "an axis is a list of values; got a mapping")
    if isinstance(values, str) or not isinstance(values, Iterable):
        values = [values]
    out = list(values)
    if not out:
        raise InputError(name, "an axis needs at least one value")
    return out


def _resolve_combo(sc: Scenario, combo: dict[str, Any]) -> dict[str, float]:
    """The resolved numbers of ``sc`` with ``combo`` applied; a refusal names the combination."""
    try:
        return resolve(sc.replace(**combo)).values
    except InputError as e:
        if len(combo) < 2:
            raise
        where = ", ".join(f"{k}={v!r}" for k, v in combo.items())
        raise type(e)(e.field, f"{e.message} (in the sweep's combination {where})") from None


def _coupled(a: str, b: str) -> bool:
    """Whether axes ``a`` and ``b`` must be resolved per combination (``MEASUREMENT``, ``COUPLED``)."""
    measured = {a, b} <= MEASUREMENT and bool({a, b} & set(_MEASURED))
    return measured or any({a, b} <= c for c in COUPLED)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def sweep(base: Scenario | str | None = None, /, **axes: Any) -> pd.DataFrame:
    """Evaluate every combination of ``axes`` on top of ``base``.

    Examples
    --------
    >>> sweep("beast-resnet50-v100", gpus_per_job=[1, 2, 4, 8], example_bytes=["64 KiB", "500 kB"])

    Returns
    -------
    pandas.DataFrame
        One row per scenario: the axis values, then every output of ``calc.plan.OUTPUTS`` in
        base units (an output named as an axis as ``<name>_output``), ``fits`` (the batch fits in
        GPU memory), ``step_method`` and ``bottleneck``.
    """
    sc = as_scenario(base)
    unknown = sorted(set(axes) - set(FIELDS))
    if unknown:
        raise InputError(unknown[0], unknown_input(unknown[0]))
    bad = [k for k in axes if FIELDS[k].kind == "text" and k not in TEXT_AXES]
    if bad:
        raise InputError(
            bad[0],
            f"text inputs cannot be swept; accepted axes: numbers, sizes, rates, choices and {', '.join(TEXT_AXES)}",
        )
    vals = {k: axis_values(k, v) for k, v in axes.items()}
    sizes = [len(vals[k]) for k in vals]
    size = math.prod(sizes) if sizes else 1
    # Flat index of each axis value over the grid, in the order the axes were given.
    grids = np.meshgrid(*[np.arange(n) for n in sizes], indexing="ij") if sizes else []
    index = {k: g.ravel() for k, g in zip(vals, grids, strict=True)}
    out = evaluate(_grid_inputs(sc, vals, index, size))
    _refuse_like_plan(out, vals, index, size)
    return _frame(out, vals, index, size)


def _grid_inputs(sc: Scenario, vals: dict[str, list[Any]], index: dict[str, Any], size: int) -> dict[str, Any]:
    """The resolved inputs of every grid row: the base's numbers, and a column for each number an
    axis (or a group of axes resolved together) changes."""
    base_x = resolve(sc).values
    # Each value alone on the base (an InputError kept: it may be valid beside another axis's).
    alone = {k: [_resolve_one(sc, k, v) for v in vs] for k, vs in vals.items()}
    # Which resolved numbers each axis changes.
    changed = {
        k: {key for rv in rs if isinstance(rv, dict) for key, xv in rv.items() if not _same(xv, base_x[key])}
        for k, rs in alone.items()
    }
    x: dict[str, Any] = dict(base_x)
    for group in _groups(sc, vals, alone, changed, base_x):
        combos = list(itertools.product(*(range(len(vals[k])) for k in group)))
        if len(group) > 1:
            # Resolved per combination: what each changes together, and each one checked.
            resolved = [
                _resolve_combo(sc, {k: vals[k][j] for k, j in zip(group, combo, strict=True)}) for combo in combos
            ]
            keys = {key for rv in resolved for key, xv in rv.items() if not _same(xv, base_x[key])}
        else:
            resolved = [_ok(group[0], rv) for rv in alone[group[0]]]
            keys = set(changed[group[0]])
        if not keys:
            continue
        table = {key: np.array([rv[key] for rv in resolved], dtype=float) for key in keys}
        # Position of each grid row in this group's combos (row-major over the group's axes).
        pos = np.zeros(size, dtype=np.int64)
        for k in group:
            pos = pos * len(vals[k]) + index[k]
        for key in keys:
            x[key] = table[key][pos]
    return x


OUTPUT_SUFFIX = "_output"
"""The column of an output whose input of the same name is an axis of the sweep."""


def _frame(out: dict[str, Any], vals: dict[str, list[Any]], index: dict[str, Any], size: int) -> pd.DataFrame:
    """The sweep's table: the axis columns, every output, ``fits``, ``step_method`` and ``bottleneck``."""
    # Axis columns in base units ("64 KiB" -> 65536.0) so they plot and sort as numbers; a choice
    # axis is categorical. An axis that is also an output (cpu_cores_per_node: the cores a node has,
    # and those the job needs) keeps its input under its name; the output moves to ``<name>_output``.
    columns: dict[str, Any] = {k: axis_column(k, vals[k], index[k]) for k in vals}
    # The arrays evaluate() made become the columns as they are (copy=False: no
    # consolidation into one block, which cost 0.8 s of page faults at a million rows), all in one
    # constructor (inserting after it fragments the frame past pandas' 100 blocks).
    for k in OUTPUTS:
        v = np.asarray(out[k], dtype=float)
        columns[f"{k}{OUTPUT_SUFFIX}" if k in vals else k] = v if v.shape == (size,) else np.full(size, v)
    columns["fits"] = np.broadcast_to(np.asarray(out["fits"], dtype=bool), (size,))
    for state in ("step_method", "bottleneck"):
        columns[state] = pd.Categorical.from_codes(  # type: ignore[call-overload]
            np.broadcast_to(np.asarray(out[state]).astype(np.int8), (size,)), list(STATES[state])
        )
    return pd.DataFrame(columns, copy=False)


def _resolve_one(sc: Scenario, name: str, value: Any) -> dict[str, float] | InputError:
    try:
        return resolve(sc.replace(**{name: value})).values
    except InputError as e:
        return e


def _ok(name: str, rv: dict[str, float] | InputError) -> dict[str, float]:
    """A value resolved alone, or its refusal raised (no other axis changes what it refuses)."""
    if isinstance(rv, InputError):
        raise rv
    return rv


def _sample(n: int) -> list[int]:
    """Indices of ``PAIR_SAMPLE`` values of an axis of ``n``: both ends and the middle."""
    return sorted({0, n // 2, n - 1}) if n > PAIR_SAMPLE else list(range(n))


def _interacting(
    sc: Scenario,
    a: str,
    b: str,
    vals: Mapping[str, list[Any]],
    alone: Mapping[str, list[dict[str, float] | InputError]],
    base_x: Mapping[str, float],
) -> bool:
    """Whether axes ``a`` and ``b`` must be resolved together: some sampled pair of their values
    resolves to other numbers than each value's own changes laid over the base, or is refused
    or accepted where the values alone are not."""
    for i in _sample(len(vals[a])):
        for j in _sample(len(vals[b])):
            ra, rb = alone[a][i], alone[b][j]
            try:
                joint = resolve(sc.replace(**{a: vals[a][i], b: vals[b][j]})).values
            except InputError:
                if isinstance(ra, InputError) or isinstance(rb, InputError):
                    continue  # refused alone and together: the value itself is refused
                return True
            if isinstance(ra, InputError) or isinstance(rb, InputError):
                return True  # refused alone, valid beside the other axis's value
            for key, xv in joint.items():
                laid = ra[key] if not _same(ra[key], base_x[key]) else rb[key]
                if not _same(xv, laid):
                    return True
    return False


def _groups(
    sc: Scenario,
    vals: Mapping[str, list[Any]],
    alone: Mapping[str, list[dict[str, float] | InputError]],
    changed: Mapping[str, set[str]],
    base_x: Mapping[str, float],
) -> list[list[str]]:
    """Axes that must be resolved per combination, grouped (union-find): they change the same
    resolved numbers, ``COUPLED`` declares them read together, or a sample of their combinations
    shows they are (``_interacting``). Every other axis is resolved once per value."""
    names = list(vals)
    parent = {k: k for k in names}

    def root(k: str) -> str:
        while parent[k] != k:
            k = parent[k]
        return k

    for ia, a in enumerate(names):
        for b in names[ia + 1 :]:
            if root(a) == root(b):
                continue
            if changed[a] & changed[b] or _coupled(a, b) or _interacting(sc, a, b, vals, alone, base_x):
                parent[root(b)] = root(a)
    groups: dict[str, list[str]] = {}
    for k in names:
        groups.setdefault(root(k), []).append(k)
    return list(groups.values())


TEXT_AXES = ("image_pixels",)
"""Text inputs a sweep takes as an axis: each value resolves to numbers (an image's width and
height); the column holds the text, as a categorical in the order given."""


def axis_column(name: str, values: list[Any], index: Any) -> Any:
    """One axis as a column: numbers in base units (float; int for whole-number inputs), choices
    as a categorical in the order given, booleans as bool; an axis holding None as given."""
    info = FIELDS[name]
    if any(v is None for v in values):
        # None is "automatic" (storage_units, batch_size): no number stands for it, so the column
        # keeps the values as given (a NaN would not read back as an input).
        return pd.Series(values, dtype=object).iloc[index].to_numpy()
    if info.kind in ("choice", "text"):
        names = [str(check_field(name, v)) for v in values]
        categories = list(dict.fromkeys(names))
        codes = np.array([categories.index(n) for n in names], dtype=np.int64)[index]
        return pd.Categorical.from_codes(codes, categories)  # type: ignore[call-overload]
    if info.kind == "bool":
        return np.array([bool(check_field(name, v)) for v in values])[index]
    if info.kind == "int":
        return np.array([int(check_field(name, v)) for v in values], dtype=np.int64)[index]
    kind: Any = "count" if info.kind in ("number", "fraction") else info.kind
    checked = [check_field(name, v) for v in values]
    if "optimal" in checked:
        return pd.Series(values, dtype=object).iloc[index].to_numpy()  # a word the plan computes: as given
    return np.array([parse(v, kind, name) for v in checked], dtype=float)[index]


def _refuse_like_plan(
    out: Mapping[str, Any], vals: Mapping[str, list[Any]], index: Mapping[str, Any], size: int
) -> None:
    """Raise the InputError ``plan()`` raises for the first row with a non-finite or negative
    output (rows that do not fit are kept: ``fits`` says so)."""
    live = np.broadcast_to(np.asarray(out["fits"], dtype=bool), (size,))
    for k in OUTPUTS:
        v = np.asarray(out[k], dtype=float)
        low, high = v.min(), v.max()  # NaN propagates: the fast path below then fails
        if low >= 0 and (high < np.inf or k in UNLIMITED):
            continue  # the common case, two reductions and no masks over a million rows
        v = np.broadcast_to(v, (size,))
        bad = live & (np.isnan(v) | (v < 0) | ((v == np.inf) & (k not in UNLIMITED)))
        if bad.any():
            row = int(np.argmax(bad))
            where = ", ".join(f"{a}={vals[a][index[a][row]]!r}" for a in vals)
            raise InputError(
                k, f"the inputs give a non-finite or negative {k}; check the inputs it depends on (row {where})"
            )


def evaluate_over(base: Scenario, name: str, values: Any) -> dict[str, Any]:
    """``evaluate`` of ``base`` with one numeric input set to each of ``values`` [outputs as arrays].

    For inputs that ``resolve`` passes on as a plain number (``gpus_per_job``, ``num_workers``,
    ``example_bytes`` ...): one resolve and one vectorised evaluate for thousands of values,
    where ``sweep`` resolves each value. Checked, not assumed: the first and last values are
    resolved and must differ from ``base`` in that number only (else each value is resolved,
    as ``sweep`` does). The values are not validated one by one: pass values within the input's
    accepted range (``FIELDS``). Rows that do not fit have ``fits`` 0.
    """
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size == 0:
        raise InputError(name, "needs at least one value")
    if name not in FIELDS:
        raise InputError(name, unknown_input(name))

    def value(v: float) -> Any:
        return int(v) if FIELDS[name].kind == "int" else float(v)

    x0 = resolve(base).values
    plain = name in x0
    for v in (arr[0], arr[-1]):
        rv = resolve(base.replace(**{name: value(v)})).values
        plain = plain and all(_same(rv[k], x0[k]) for k in rv if k != name) and _same(rv[name], float(v))
    if not plain:
        rows = [resolve(base.replace(**{name: value(v)})).values for v in arr]
        return evaluate({k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]})
    x: dict[str, Any] = dict(x0)
    x[name] = arr
    return evaluate(x)


__all__ = ["CATEGORICAL", "COUPLED", "MEASUREMENT", "evaluate_over", "sweep"]
