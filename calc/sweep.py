"""sweep(): evaluate a grid of scenarios at once, vectorised with NumPy.

Numeric axes (batch_size, gpus_per_job, example_bytes, ...) become flat arrays over the
Cartesian product; categorical axes (gpu, model, precision, optimizer, storage) are resolved
once per combination. The formulas are the ones ``plan`` uses (``calc.plan.evaluate``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from calc import compute, memory, pipeline
from calc.errors import InputError
from calc.plan import OUTPUTS, evaluate, resolve
from calc.scenario import FIELDS, Scenario, check_field, scenario
from calc.units import parse

CATEGORICAL = ("gpu", "model", "precision", "optimizer", "storage", "batch_rounding")
"""Axes resolved per value against the presets."""

_KEY = {
    "batch_size": "fixed_batch",
    "step_time_s": "measured_step_time_s",
    "samples_per_s_per_gpu": "measured_samples_per_s",
    "request_bytes": "request_bytes_given",
}


def _values(name: str, values: Any) -> list[Any]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        values = [values]
    out = list(values)
    if not out:
        raise InputError(name, "an axis needs at least one value")
    for v in out:
        check_field(name, v)
    return out


def sweep(base: Scenario | str | None = None, /, **axes: Any) -> pd.DataFrame:
    """Evaluate every combination of ``axes`` on top of ``base``.

    Examples
    --------
    >>> sweep("beast-resnet50-v100", gpus_per_job=[1, 2, 4, 8], example_bytes=["64 KiB", "500 kB"])

    Returns
    -------
    pandas.DataFrame
        One row per scenario: the axis values, then every output of ``calc.plan.OUTPUTS`` in
        base units, ``fits`` (the model fits at batch 1), ``step_method`` and ``bottleneck``.
    """
    sc = Scenario() if base is None else scenario(base) if isinstance(base, str) else base
    unknown = sorted(set(axes) - set(FIELDS))
    if unknown:
        raise InputError(unknown[0], f"unknown input; accepted: {', '.join(FIELDS)}")
    cats = {k: _values(k, v) for k, v in axes.items() if k in CATEGORICAL}
    nums = {k: _values(k, v) for k, v in axes.items() if k not in CATEGORICAL}
    bad = [k for k in nums if FIELDS[k].kind in ("text", "choice")]
    if bad:
        raise InputError(bad[0], "only numeric inputs and gpu/model/precision/optimizer/storage can be swept")

    grids = np.meshgrid(*[np.arange(len(v)) for v in nums.values()], indexing="ij") if nums else []
    index = {k: g.ravel() for k, g in zip(nums, grids, strict=True)}
    parsed = {k: np.array([_parse(k, v) for v in vals], dtype=float) for k, vals in nums.items()}

    frames = []
    for combo in itertools.product(*cats.values()) if cats else [()]:
        chosen = dict(zip(cats, combo, strict=True))
        r = resolve(sc.replace(**chosen) if chosen else sc)
        x: dict[str, Any] = dict(r.values)
        for k in nums:
            x[_KEY.get(k, k)] = parsed[k][index[k]]
        if ("optimizer" in chosen or "state_shards" in nums) and sc.model_state_bytes is None:
            x["model_state_bytes"] = memory.model_state_bytes(x["params"], x["bytes_per_param"], x["state_shards"])
        out = evaluate(x)
        size = max((len(v) for v in index.values()), default=1)
        # The arrays evaluate() made become the columns as they are (copy=False: no
        # consolidation into one block, which cost 0.8 s of page faults at a million rows).
        columns = {k: np.asarray(out[k], dtype=float) for k in OUTPUTS}
        columns = {k: v if v.shape == (size,) else np.full(size, v) for k, v in columns.items()}
        frame = pd.DataFrame(columns, copy=False)
        # Axis columns as given ("64 KiB"); an axis that is also an output keeps the output (base units).
        axes_shown = [k for k in nums if k not in OUTPUTS]
        for pos, k in enumerate(axes_shown):
            frame.insert(pos, k, pd.Series(nums[k]).iloc[index[k]].to_numpy())
        for pos, (k, v) in enumerate(chosen.items(), start=len(axes_shown)):
            frame.insert(pos, k, v)
        fixed = np.asarray(x["fixed_batch"], dtype=float)
        frame["fits"] = np.broadcast_to((np.asarray(out["max_batch_size"]) >= 1) | np.isfinite(fixed), (size,))
        frame["step_method"] = pd.Categorical.from_codes(  # type: ignore[call-overload]
            np.broadcast_to(np.asarray(out["step_method"]).astype(np.int8), (size,)), list(compute.METHODS)
        )
        frame["bottleneck"] = pd.Categorical.from_codes(  # type: ignore[call-overload]
            np.broadcast_to(np.asarray(out["bottleneck"]).astype(np.int8), (size,)), list(pipeline.STAGES)
        )
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _parse(name: str, value: Any) -> float:
    kind = FIELDS[name].kind
    if kind in ("int", "fraction", "number", "bool"):
        return float(check_field(name, value))
    return parse(value, kind, name)  # type: ignore[arg-type]


__all__ = ["CATEGORICAL", "sweep"]
