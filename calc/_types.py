"""Numeric type and helpers shared by the formula modules: a float or a NumPy array of them.

Every formula is written once with NumPy operations, so the same function evaluates one
scenario (a Plan) or a million (a sweep). The two helpers keep one scenario's numbers NumPy
scalars: on a 0-d array each later operation costs ~10x more than on a scalar (0.4 us
against 0.04 us), which made a plan from scratch take most of a millisecond.
"""

from __future__ import annotations

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


def clip(x: Any, low: Any, high: Any) -> Floats:
    """``np.clip(x, low, high)`` by its definition, ``minimum(maximum(x, low), high)``: the same
    numbers (NaN stays NaN; ``high`` wins where ``low > high``) at half the cost on a scalar."""
    out: Floats = np.minimum(np.maximum(x, low), high)
    return out
