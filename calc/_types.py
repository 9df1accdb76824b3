"""Numeric type and helpers shared by the formula modules: a float or a NumPy array of them.

Every formula is written once with NumPy operations, so the same function evaluates one
scenario (a Plan) or a million (a sweep). The two helpers keep one scenario's numbers NumPy
scalars: on a 0-d array each later operation costs ~10x more than on a scalar (0.4 us
against 0.04 us), which made a plan from scratch take most of a millisecond.
"""

from __future__ import annotations

import math
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

Numeric: TypeAlias = float | npt.NDArray[np.float64]

Floats: TypeAlias = np.float64 | npt.NDArray[np.float64]
"""What ``floats`` and ``where`` return: a NumPy scalar for one scenario, an array for many."""


def floats(x: Any) -> Floats:
    """``x`` as float64 (``np.asarray``): a NumPy scalar for one number, an array for many."""
    if isinstance(x, float):  # a Python float or a NumPy float64: the common case, made quick
        return x if type(x) is np.float64 else np.float64(x)
    if isinstance(x, int):  # an int or a bool, as np.asarray(x, dtype=float) reads them
        return np.float64(x)
    a = np.asarray(x, dtype=float)
    return a[()] if a.ndim == 0 else a


def where(condition: Any, a: Any, b: Any) -> Floats:
    """``np.where(condition, a, b)``; a NumPy scalar when all three are single numbers.

    Both ``a`` and ``b`` are computed before the call, as for ``np.where``: only the pick is
    cheaper. Arrays, ints and bools go to ``np.where`` unchanged.
    """
    if isinstance(a, float) and isinstance(b, float) and not isinstance(condition, np.ndarray):
        picked = a if condition else b
        return picked if type(picked) is np.float64 else np.float64(picked)
    out: npt.NDArray[np.float64] = np.where(condition, a, b)
    return out


_SCALAR = (float, int, np.float64)
"""Types a single number arrives as (a Python float or int, a NumPy float64; bools are ints)."""

_NAN = np.float64("nan")


def minimum(a: Any, b: Any) -> Floats:
    """``np.minimum(a, b)``: NaN if either is NaN, else the smaller; a NumPy scalar for two numbers
    at a tenth of the ufunc's cost on scalars (about 1 us each, 90 calls a plan)."""
    if type(a) in _SCALAR and type(b) in _SCALAR:
        if math.isnan(a) or math.isnan(b):  # NaN propagates, as in np.minimum
            return _NAN
        return np.float64(b if b < a else a)
    out: Floats = np.minimum(a, b)
    return out


def maximum(a: Any, b: Any) -> Floats:
    """``np.maximum(a, b)``: NaN if either is NaN, else the larger; quick for two numbers (``minimum``)."""
    if type(a) in _SCALAR and type(b) in _SCALAR:
        if math.isnan(a) or math.isnan(b):
            return _NAN
        return np.float64(b if b > a else a)
    out: Floats = np.maximum(a, b)
    return out


def isfinite(x: Any) -> Any:
    """``np.isfinite(x)``: a NumPy bool for one number (``~`` and ``.any()`` work on it as on arrays)."""
    if type(x) in _SCALAR:
        return np.True_ if math.isfinite(x) else np.False_
    return np.isfinite(x)


def clip(x: Any, low: Any, high: Any) -> Floats:
    """``np.clip(x, low, high)`` by its definition, ``minimum(maximum(x, low), high)``: the same
    numbers (NaN stays NaN; ``high`` wins where ``low > high``) at a fraction of the cost on a scalar."""
    return minimum(maximum(x, low), high)
