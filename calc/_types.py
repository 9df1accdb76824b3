"""Numeric type and helpers shared by the formula modules: a float or a NumPy array of them.

Every formula is written once with NumPy operations, so the same function evaluates one
scenario (a Plan) or a million (a sweep). The helpers keep one scenario's numbers scalars: on a
0-d array each later operation costs ~10x more than on a scalar (0.4 us against 0.04 us), which
made a plan from scratch take most of a millisecond.

Which scalars: outside ``calc.stages.evaluate`` a NumPy float64, whose division by zero gives inf
or NaN as an array's does (formulas are also called directly: the engine, sizing, checkpoints).
Inside it (``python_scalars``), a Python float: its arithmetic costs about a quarter of a NumPy
scalar's (0.16 against 0.69 us for ``a * b + c / a`` on this machine), a plan does about a thousand
such operations, and every result is the same IEEE double. Where a Python float would raise
(division by zero, an overflowing power), ``evaluate`` runs that step again on NumPy scalars
(``numpy_scalars``), so every output stays the one NumPy gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

Numeric: TypeAlias = float | npt.NDArray[np.float64]

Floats: TypeAlias = float | np.float64 | npt.NDArray[np.float64]
"""What ``floats`` and ``where`` return: a scalar for one scenario (a Python float inside
``evaluate``, a NumPy float64 outside it), an array for many."""


_PYTHON: ContextVar[bool] = ContextVar("calc_python_scalars", default=False)
"""Whether one scenario's numbers are Python floats (inside ``calc.stages.evaluate``) or NumPy float64s
(everywhere else). Per thread (a dashboard serves each session on its own: a new thread starts with a
fresh context) and per asyncio task. A ContextVar, not a ``threading.local``: a plan reads it ~800 times
and ``get`` costs about 13 ns against the local's 31 (issue 41: ~30 us of a 0.35 ms plan)."""

python_on = _PYTHON.get
"""``python_on()``: True inside ``python_scalars``; bound once, so a helper's read is one C call."""


class _Scalars:
    """``SCALARS.python``: the switch above, read as an attribute (tests, callers outside the helpers)."""

    @property
    def python(self) -> bool:
        return _PYTHON.get()


SCALARS = _Scalars()


@contextmanager
def python_scalars(on: bool = True) -> Iterator[None]:
    """One scenario's numbers as Python floats (``on``) or NumPy float64s inside the block. With Python
    floats, NumPy's floating-point warnings are off for the whole block (``quiet``)."""
    token = _PYTHON.set(on)
    try:
        if on:
            with np.errstate(all="ignore"):
                yield
        else:
            yield
    finally:
        _PYTHON.reset(token)


_NO_OP = nullcontext()


def python_call(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with one scenario's numbers as Python floats (``python_scalars`` without its
    ``np.errstate``, ~2 us less), for a formula whose result the caller turns into a float at once
    (resolve's parameter count: 2.2 us on NumPy scalars, 0.8 on Python floats, the same double). Where a
    Python float raises (a division by zero) it runs again on the scalars in force, as ``evaluate`` does."""
    token = _PYTHON.set(True)
    try:
        return fn(*args)
    except ArithmeticError:
        pass
    finally:
        _PYTHON.reset(token)
    return fn(*args)


def quiet(**errstate: Any) -> Any:
    """``np.errstate(**errstate)`` around a formula's divisions, or nothing inside ``python_scalars``,
    whose one ``np.errstate(all="ignore")`` covers them (each block costs 1.5 us; a plan ran 18)."""
    return _NO_OP if python_on() else np.errstate(**errstate)


def numpy_scalars() -> Any:
    """One scenario's numbers as NumPy float64s inside the block (``python_scalars(False)``)."""
    return python_scalars(False)


def floats(x: Any) -> Floats:
    """``x`` as float64 (``np.asarray``): a scalar for one number (``Floats``), an array for many."""
    t = type(x)
    if t is float:  # the common case first: a plan makes ~600 of these calls
        return x if python_on() else np.float64(x)
    if t is np.float64:
        return float(x) if python_on() else x
    if t is int or t is bool:  # an int or a bool, as np.asarray(x, dtype=float) reads them
        return float(x) if python_on() else np.float64(x)
    a = np.asarray(x, dtype=float)
    if a.ndim:
        return a
    return float(a) if python_on() else a[()]


_ARRAY = np.ndarray


def where(condition: Any, a: Any, b: Any) -> Floats:
    """``np.where(condition, a, b)``; a scalar (``floats``) when all three are single numbers.

    Both ``a`` and ``b`` are computed before the call, as for ``np.where``: only the pick is
    cheaper. Arrays, ints and bools go to ``np.where`` unchanged.
    """
    ta, tb = type(a), type(b)
    if ta is float and tb is float and type(condition) is not _ARRAY:  # two Python floats: ~230 a plan
        if python_on():
            picked: float = a if condition else b  # np.ndarray as a global, one branch: ~60 ns a call against 80
            return picked
        return np.float64(a if condition else b)
    if (ta is float or ta is np.float64) and (tb is float or tb is np.float64) and type(condition) is not _ARRAY:
        picked = a if condition else b
        if python_on():
            return float(picked)  # float() of a Python float is that float
        return picked if type(picked) is np.float64 else np.float64(picked)
    out: npt.NDArray[np.float64] = np.where(condition, a, b)
    return out


_SCALAR = (float, int, np.float64)
"""Types a single number arrives as (a Python float or int, a NumPy float64; bools are ints)."""


def minimum(a: Any, b: Any) -> Floats:
    """``np.minimum(a, b)``: NaN if either is NaN, else the smaller; a scalar (``floats``) for two numbers
    at a tenth of the ufunc's cost on scalars (about 1 us each, 90 calls a plan)."""
    if type(a) in _SCALAR and type(b) in _SCALAR:
        # Both comparisons fail only where one is NaN: that NaN, as np.minimum gives (isnan only then: 86 calls a plan).
        picked = b if b < a else a if a <= b else a if math.isnan(a) else b
        return float(picked) if python_on() else np.float64(picked)
    out: Floats = np.minimum(a, b)
    return out


def maximum(a: Any, b: Any) -> Floats:
    """``np.maximum(a, b)``: NaN if either is NaN, else the larger; quick for two numbers (``minimum``)."""
    if type(a) in _SCALAR and type(b) in _SCALAR:
        picked = b if b > a else a if a >= b else a if math.isnan(a) else b  # NaN as in ``minimum``
        return float(picked) if python_on() else np.float64(picked)
    out: Floats = np.maximum(a, b)
    return out


def scalar(x: Any) -> bool:
    """``np.ndim(x) == 0`` (one number, or a 0-d array) without ``np.ndim``'s Python-level cost."""
    return type(x) is not np.ndarray or x.ndim == 0


def isfinite(x: Any) -> Any:
    """``np.isfinite(x)``: a NumPy bool for one number (``~`` and ``.any()`` work on it as on arrays)."""
    if type(x) in _SCALAR:
        return np.True_ if math.isfinite(x) else np.False_
    return np.isfinite(x)


def clip(x: Any, low: Any, high: Any) -> Floats:
    """``np.clip(x, low, high)`` by its definition, ``minimum(maximum(x, low), high)``: the same
    numbers (NaN stays NaN; ``high`` wins where ``low > high``) at a fraction of the cost on a scalar."""
    return minimum(maximum(x, low), high)


def any_(condition: Any) -> bool:
    """``np.any(condition)`` for a comparison's result: a Python bool (one scenario's Python floats
    compare to one) has no ``.any()``; a NumPy bool or an array does."""
    t = type(condition)
    if t is bool:
        picked: bool = condition
        return picked
    # A NumPy bool (``isfinite(a) | isfinite(b)`` on one scenario) is its own any: .any() costs ~0.6 us.
    return bool(condition) if t is _BOOL else bool(condition.any())


def all_(condition: Any) -> bool:
    """``np.all(condition)`` for a comparison's result (``any_``)."""
    t = type(condition)
    if t is bool:
        picked: bool = condition
        return picked
    return bool(condition) if t is _BOOL else bool(condition.all())


_BOOL = np.bool_


def not_(condition: Any) -> Any:
    """``~condition`` for a comparison's result: ``~True`` on a Python bool is -2, not False."""
    return not condition if type(condition) is bool else ~condition


def flag(condition: Any) -> Floats:
    """A comparison's result as 1.0 / 0.0 (``condition.astype(float)``; a Python bool has no ``astype``)."""
    return where(condition, 1.0, 0.0)


def divide(a: Any, b: Any) -> Floats:
    """``a / b`` as NumPy divides, without a warning: inf or NaN where ``b`` is 0. A Python float
    raises there instead; a formula that divides before ``where`` picks a side (both sides computed,
    as for ``np.where``) would send the whole plan back to NumPy scalars (``calc.stages.evaluate``)."""
    if type(a) is float and type(b) is float:  # no error, no warning
        if b:
            return a / b
        q = a * math.copysign(math.inf, b)  # IEEE's a / ±0: ±inf by the signs, NaN for 0 or NaN
        return q if python_on() else np.float64(q)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.divide(a, b)
    return float(q) if python_on() and type(q) is np.float64 else q


def isnan(x: Any) -> Any:
    """``np.isnan(x)``: a NumPy bool for one number (``isfinite``)."""
    if type(x) in _SCALAR:
        return np.True_ if math.isnan(x) else np.False_
    return np.isnan(x)


def floor(x: Any) -> Floats:
    """``np.floor(x)``; a finite Python float by ``math.floor`` (exact either way), the sign of a zero
    kept as NumPy keeps it (floor(-0.0) is -0.0: a zero result has the sign of ``x``)."""
    if type(x) is float and python_on() and math.isfinite(x):  # a NumPy scalar outside evaluate
        return math.copysign(float(math.floor(x)), x)
    return floats(np.floor(x))


def ceil(x: Any) -> Floats:
    """``np.ceil(x)``; quick on a finite Python float as ``floor`` (ceil(-0.5) is -0.0, as NumPy's)."""
    if type(x) is float and python_on() and math.isfinite(x):
        return math.copysign(float(math.ceil(x)), x)
    return floats(np.ceil(x))


def sqrt(x: Any) -> Floats:
    """``np.sqrt(x)``; a Python float of 0 or more by ``math.sqrt`` (both correctly rounded: the same
    double), else NumPy's (NaN for a negative number, with NumPy's warning)."""
    if type(x) is float and python_on() and x >= 0:
        return math.sqrt(x)
    return floats(np.sqrt(x))
