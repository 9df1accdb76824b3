"""sweep(): evaluate a grid of scenarios at once, vectorised with NumPy, by plan()'s own path.

Every axis, numeric or a preset name, goes through ``resolve`` once per value; the resolved
numbers that value changes become columns of the grid, and ``evaluate`` runs once over the
Cartesian product. Axes whose values change the same resolved numbers (``gpu`` and
``gpu_memory_bytes``, say), or that ``Scenario`` and ``resolve`` read together (``COUPLED``: a
measurement and where it was taken, parallel layouts and the GPU count, a read and its file),
are resolved together, per combination. So each row is exactly what ``plan()`` of that
scenario gives, storage supply and all, without a Python loop per row; and a combination
``plan()`` refuses (an InputError) is refused by the sweep too. The one difference: a row whose
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

from calc import compute, pipeline
from calc.errors import InputError
from calc.plan import as_scenario
from calc.registry import OUTPUTS
from calc.resolve import resolve
from calc.scenario import FIELDS, Scenario, check_field, unknown_input
from calc.stages import UNLIMITED, evaluate
from calc.units import parse

CATEGORICAL = tuple(k for k, f in FIELDS.items() if f.kind == "choice")
"""Axes that name presets or choices (gpu, model, precision, storage ...)."""

_MEASURED = ("step_time_s", "samples_per_s_per_gpu", "measured_gpu", "measured_batch_size", "measured_precision")

MEASUREMENT = frozenset({*_MEASURED, "gpu", "precision", "batch_size"})
"""A new measurement records the GPU, precision and batch it was taken at (``Scenario.replace``)
and the re-projection compares them: 100 ms given with gpu=A100 was measured on the A100. Axes
here are resolved together when one of them is a measurement input."""

COUPLED: tuple[frozenset[str], ...] = (
    # A precision the GPU lacks is refused (resolve), whatever else is overridden.
    frozenset({"gpu", "precision"}),
    # tensor x pipeline parallel must divide the GPU count; state shards at most the GPU count;
    # the layout rules of calc.transformer.check_layout / check_experts (heads, layers, sequence,
    # experts against the parallel sizes) and the shard group against the data-parallel ranks.
    frozenset(
        {
            "tensor_parallel",
            "pipeline_parallel",
            "gpus_per_job",
            "state_shards",
            "shard_group",
            "context_parallel",
            "virtual_pipeline_stages",
            "expert_parallel",
            "layers",
            "hidden",
            "heads",
            "kv_heads",
            "seq_len",
            "experts",
            "experts_active",
            "expert_ffn_hidden",
            "shared_experts",
            "model",
        }
    ),
    # A read larger than one file is noted (resolve's warning) against the file's size.
    frozenset({"request_bytes", "example_bytes", "examples_per_file", "model"}),
)
"""Inputs that ``Scenario`` or ``resolve`` read together: as axes, they are resolved per
combination even when they change different resolved numbers."""


def _values(name: str, values: Any) -> list[Any]:
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
        base units, ``fits`` (the batch fits in GPU memory), ``step_method`` and ``bottleneck``.
    """
    sc = as_scenario(base)
    unknown = sorted(set(axes) - set(FIELDS))
    if unknown:
        raise InputError(unknown[0], unknown_input(unknown[0]))
    bad = [k for k in axes if FIELDS[k].kind == "text"]
    if bad:
        raise InputError(bad[0], "text inputs cannot be swept; accepted axes: numbers, sizes, rates and choices")
    vals = {k: _values(k, v) for k, v in axes.items()}
    r0 = resolve(sc)
    base_x = r0.values

    # Which resolved numbers each axis changes (validating every value on the way).
    changed: dict[str, set[str]] = {}
    alone: dict[str, list[dict[str, float]]] = {}
    for k, vs in vals.items():
        try:
            alone[k] = [resolve(sc.replace(**{k: v})).values for v in vs]
        except InputError:
            # tensor_parallel=4 on the base's one GPU is refused alone but valid beside
            # gpus_per_job=8: an axis read together with another is checked per combination.
            if not any(_coupled(k, o) for o in vals if o != k):
                raise
            alone[k], changed[k] = [], set()
            continue
        changed[k] = {key for rv in alone[k] for key, xv in rv.items() if not _same(xv, base_x[key])}

    # Axes that touch the same numbers, or that are read together, are resolved together
    # (union-find over shared keys and COUPLED).
    def linked(a: str, b: str) -> bool:
        return bool(changed[a] & changed[b]) or _coupled(a, b)

    groups: list[list[str]] = []
    for k in vals:
        merged = [g for g in groups if any(linked(k, o) for o in g)]
        for g in merged:
            groups.remove(g)
        groups.append([k] + [o for g in merged for o in g])
    sizes = [len(vals[k]) for k in vals]
    size = math.prod(sizes) if sizes else 1
    # Flat index of each axis value over the grid, in the order the axes were given.
    grids = np.meshgrid(*[np.arange(n) for n in sizes], indexing="ij") if sizes else []
    index = {k: g.ravel() for k, g in zip(vals, grids, strict=True)}

    x: dict[str, Any] = dict(base_x)
    for group in groups:
        combos = list(itertools.product(*(range(len(vals[k])) for k in group)))
        if len(group) > 1:
            # Resolved per combination: what each changes together, and each one checked.
            resolved = [
                _resolve_combo(sc, {k: vals[k][j] for k, j in zip(group, combo, strict=True)}) for combo in combos
            ]
            keys = {key for rv in resolved for key, xv in rv.items() if not _same(xv, base_x[key])}
        else:
            resolved = alone[group[0]]
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

    out = evaluate(x)
    _refuse_like_plan(out, vals, index, size)
    columns = {k: np.asarray(out[k], dtype=float) for k in OUTPUTS}
    # The arrays evaluate() made become the columns as they are (copy=False: no
    # consolidation into one block, which cost 0.8 s of page faults at a million rows).
    columns = {k: v if v.shape == (size,) else np.full(size, v) for k, v in columns.items()}
    frame = pd.DataFrame(columns, copy=False)
    # Axis columns in base units ("64 KiB" -> 65536.0) so they plot and sort as numbers; a choice
    # axis is categorical; an axis that is also an output keeps the output (base units).
    for pos_i, k in enumerate([k for k in vals if k not in OUTPUTS]):
        frame.insert(pos_i, k, axis_column(k, vals[k], index[k]))
    frame["fits"] = np.broadcast_to(np.asarray(out["fits"], dtype=bool), (size,))
    frame["step_method"] = pd.Categorical.from_codes(  # type: ignore[call-overload]
        np.broadcast_to(np.asarray(out["step_method"]).astype(np.int8), (size,)), list(compute.METHODS)
    )
    frame["bottleneck"] = pd.Categorical.from_codes(  # type: ignore[call-overload]
        np.broadcast_to(np.asarray(out["bottleneck"]).astype(np.int8), (size,)), list(pipeline.STAGES)
    )
    return frame


def axis_column(name: str, values: list[Any], index: Any) -> Any:
    """One axis as a column: numbers in base units (float; int for whole-number inputs), choices
    as a categorical in the order given, booleans as bool; an axis holding None as given."""
    info = FIELDS[name]
    if any(v is None for v in values):
        # None is "automatic" (storage_units, batch_size): no number stands for it, so the column
        # keeps the values as given (a NaN would not read back as an input).
        return pd.Series(values, dtype=object).iloc[index].to_numpy()
    if info.kind == "choice":
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
