"""sweep(): evaluate a grid of scenarios at once, vectorised with NumPy, by plan()'s own path.

Every axis, numeric or a preset name, goes through ``resolve`` once per value; the resolved
numbers that value changes become columns of the grid, and ``evaluate`` runs once over the
Cartesian product. Axes whose values change the same resolved numbers (``gpu`` and
``gpu_memory_bytes``, say) are resolved together, per combination. So each row is exactly
what ``plan()`` of that scenario gives, storage supply and all, without a Python loop per row.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from calc import compute, pipeline
from calc.errors import InputError
from calc.plan import as_scenario, evaluate, resolve
from calc.registry import OUTPUTS
from calc.scenario import FIELDS, Scenario

CATEGORICAL = tuple(k for k, f in FIELDS.items() if f.kind == "choice")
"""Axes that name presets or choices (gpu, model, precision, storage ...)."""


def _values(name: str, values: Any) -> list[Any]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        values = [values]
    out = list(values)
    if not out:
        raise InputError(name, "an axis needs at least one value")
    return out


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
        raise InputError(unknown[0], f"unknown input; accepted: {', '.join(FIELDS)}")
    bad = [k for k in axes if FIELDS[k].kind == "text"]
    if bad:
        raise InputError(bad[0], "text inputs cannot be swept; accepted axes: numbers, sizes, rates and choices")
    vals = {k: _values(k, v) for k, v in axes.items()}
    r0 = resolve(sc)
    base_x = r0.values

    # Which resolved numbers each axis changes (validating every value on the way).
    changed: dict[str, set[str]] = {}
    for k, vs in vals.items():
        keys: set[str] = set()
        for v in vs:
            rv = resolve(sc.replace(**{k: v})).values
            keys |= {key for key, x in rv.items() if not _same(x, base_x[key])}
        changed[k] = keys
    # Axes that touch the same numbers are resolved together (union-find over shared keys).
    groups: list[list[str]] = []
    for k in vals:
        merged = [g for g in groups if any(changed[k] & changed[o] for o in g)]
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
        keys = set().union(*(changed[k] for k in group))
        if not keys:
            continue
        combos = list(itertools.product(*(range(len(vals[k])) for k in group)))
        table = {key: np.empty(len(combos)) for key in keys}
        for i, combo in enumerate(combos):
            rv = resolve(sc.replace(**{k: vals[k][j] for k, j in zip(group, combo, strict=True)})).values
            for key in keys:
                table[key][i] = rv[key]
        # Position of each grid row in this group's combos (row-major over the group's axes).
        pos = np.zeros(size, dtype=np.int64)
        for k in group:
            pos = pos * len(vals[k]) + index[k]
        for key in keys:
            x[key] = table[key][pos]

    out = evaluate(x)
    columns = {k: np.asarray(out[k], dtype=float) for k in OUTPUTS}
    # The arrays evaluate() made become the columns as they are (copy=False: no
    # consolidation into one block, which cost 0.8 s of page faults at a million rows).
    columns = {k: v if v.shape == (size,) else np.full(size, v) for k, v in columns.items()}
    frame = pd.DataFrame(columns, copy=False)
    # Axis columns as given ("64 KiB"); an axis that is also an output keeps the output (base units).
    for pos_i, k in enumerate([k for k in vals if k not in OUTPUTS]):
        frame.insert(pos_i, k, pd.Series(vals[k], dtype=object).iloc[index[k]].to_numpy())
    frame["fits"] = np.broadcast_to(np.asarray(out["fits"], dtype=bool), (size,))
    frame["step_method"] = pd.Categorical.from_codes(  # type: ignore[call-overload]
        np.broadcast_to(np.asarray(out["step_method"]).astype(np.int8), (size,)), list(compute.METHODS)
    )
    frame["bottleneck"] = pd.Categorical.from_codes(  # type: ignore[call-overload]
        np.broadcast_to(np.asarray(out["bottleneck"]).astype(np.int8), (size,)), list(pipeline.STAGES)
    )
    return frame


__all__ = ["CATEGORICAL", "sweep"]
