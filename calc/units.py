"""Parse and format quantities with units.

Internally everything is in base units: bytes, seconds, FLOPs, bytes/s, FLOP/s.

Rules (docs/model.md section 2, "Units"):

* SI prefixes are decimal: kB, MB, GB, TB, PB = 10^3, 10^6, ... bytes. ``KB`` is read as
  10^3 too (the articles write it so); ``kb``/``Kb`` are kilobits, accepted
  for rates (``10 Gb/s``) and refused for sizes (``64kb`` is almost always meant as 64 kB).
* A comma is a thousands separator (``1,000``); a decimal comma (``1,5``) is refused.
* IEC prefixes are binary: KiB, MiB, GiB, TiB, PiB = 2^10, 2^20, ... bytes.
* A lower-case ``b`` is a bit: ``10 Gb/s`` = 1.25e9 bytes/s.
* FLOP counts say what they count: ``GFLOPs`` / ``GFLOP`` are FLOPs, ``GMACs`` are
  multiply-accumulates (1 MAC = 2 FLOPs). Rates are ``TFLOPS`` or ``TFLOP/s``.
* A bare number, as a number or as text ("65536"), is in the base unit: bytes, bytes/s, s,
  FLOPs, FLOP/s.
* Anything else, e.g. ``mb`` (millibit?) or ``16 G``, is an error that lists what is accepted.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from typing import Literal

import numpy as np

from calc._types import Floats, floats, python_on
from calc.errors import InputError, UnitError

Kind = Literal["bytes", "bytes_per_s", "seconds", "flops", "flops_per_s", "count", "count_per_s"]

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_IEC = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}

_BYTE_UNITS: dict[str, float] = {}
for _p, _f in _SI.items():
    _BYTE_UNITS[f"{_p}B"] = _f
    _BYTE_UNITS[f"{_p}b"] = _f / 8 if _p else 1 / 8
    _BYTE_UNITS[f"{_p}bit"] = _f / 8
for _p, _f in _IEC.items():
    _BYTE_UNITS[f"{_p}B"] = _f
    _BYTE_UNITS[f"{_p}b"] = _f / 8
    _BYTE_UNITS[f"{_p}bit"] = _f / 8
_BYTE_UNITS["bytes"] = _BYTE_UNITS["byte"] = 1.0
_BYTE_UNITS["bits"] = 1 / 8

_TIME_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "ns": 1e-9,
    "min": 60.0,
    "h": 3600.0,
    "d": 86400.0,
}

_FLOP_COUNT: dict[str, float] = {}
_FLOP_RATE: dict[str, float] = {}
for _p, _f in _SI.items():
    if _p == "K":
        continue
    for word in ("FLOP", "FLOPs"):
        _FLOP_COUNT[f"{_p}{word}"] = _f
        _FLOP_RATE[f"{_p}{word}/s"] = _f
    for word in ("MAC", "MACs"):
        _FLOP_COUNT[f"{_p}{word}"] = 2 * _f  # 1 multiply-accumulate = 2 FLOPs
    _FLOP_RATE[f"{_p}FLOPS"] = _f

_COUNT = {p: f for p, f in _SI.items() if p != "K"}

_NUMBER = re.compile(r"^\s*([-+]?(?:\d[\d,_]*)?\.?\d*(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")

_UNITS: dict[Kind, dict[str, float]] = {
    "bytes": _BYTE_UNITS,
    "bytes_per_s": {},
    "seconds": _TIME_UNITS,
    "flops": _FLOP_COUNT,
    "flops_per_s": _FLOP_RATE,
    "count": _COUNT,
    "count_per_s": {},
}
for _u, _f in _BYTE_UNITS.items():
    _UNITS["bytes_per_s"][f"{_u}/s"] = _f
    if _u.endswith(("B", "b")) and _u not in ("bytes", "byte"):
        _UNITS["bytes_per_s"][f"{_u}ps"] = _f
for _u, _f in _COUNT.items():
    _UNITS["count_per_s"][f"{_u}/s"] = _f

_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d*)?([eE][-+]?\d+)?$")
"""A comma as a thousands separator (1,000 or 12,345.5); any other comma is refused."""

_BIT_UNITS = frozenset(u for u in _BYTE_UNITS if u.endswith(("b", "bit", "bits")))
"""Bit spellings: accepted for rates (network links, 10 Gb/s), refused for sizes."""

_ACCEPTED: dict[Kind, str] = {
    "bytes": "B, kB/KB, MB, GB, TB, PB (10^3 steps), KiB, MiB, GiB, TiB, PiB (2^10 steps)",
    "bytes_per_s": "a size per second: MB/s, GB/s, MiB/s, GiB/s, Mb/s, Gb/s (bits), Gbps",
    "seconds": "s, ms, us, µs, ns, min, h, d",
    "flops": "FLOPs or FLOP with an SI prefix (GFLOPs, TFLOP), or MACs (GMACs = 2 GFLOPs)",
    "flops_per_s": "TFLOPS, TFLOP/s, GFLOPS, PFLOPS",
    "count": "a plain number, optionally with k, M, G",
    "count_per_s": "a plain number per second",
}


def check_range(
    name: str,
    value: object,
    low: float = -math.inf,
    high: float = math.inf,
    accepted: str = "",
    *,
    above: bool = False,
    infinite: bool = False,
) -> Floats:
    """The one numeric range check of every input (``calc.scenario.check_value`` for counts and
    numbers, the formulas' argument guards in ``calc.checkpoint``): each element finite (unless
    ``infinite``: a rate that may be unlimited), at least ``low`` (more than it when ``above``) and
    at most ``high``. Returns the value as float64 (a NumPy scalar for one number).

    Raises
    ------
    InputError
        Naming ``name``: "``value``; accepted: a finite number" for NaN or infinity (unless
        ``infinite``), else "``value`` is out of range; accepted: ``accepted``".
    """
    # Inside a plan's evaluate (~70 formula guards a plan), a Python float checked inline: the same bounds.
    if (
        type(value) is float
        and python_on()
        and (value > low if above else value >= low)
        and value <= high
        and (infinite or math.isfinite(value))
    ):
        return value
    a = floats(value)  # one number stays a scalar: what is returned computes ~10x faster than a 0-d array
    one = not isinstance(a, np.ndarray)
    if not isinstance(a, np.ndarray):  # the common case, checked on plain floats: a plan runs ~70 of these
        v = float(a)
        finite, ok = math.isfinite(v), (v > low if above else v >= low) and v <= high  # NaN fails both
    else:
        finite = bool(np.isfinite(a).all())
        ok = bool(((a > low if above else a >= low) & (a <= high)).all())
    if finite and ok:
        return a
    shown = f"{float(a):g}" if one else str(value)
    if not (infinite or finite):
        raise InputError(name, f"{shown}; accepted: a finite number")
    if not ok:
        if not accepted:
            accepted = f"{'more than' if above else 'from'} {low:g}" + (f" to {high:g}" if high < math.inf else "")
        raise InputError(name, f"{shown} is out of range; accepted: {accepted}")
    return a


def accepted_units(kind: Kind) -> str:
    """The unit spellings accepted for ``kind``, as shown in error messages."""
    return _ACCEPTED[kind]


def parse(value: object, kind: Kind, field: str = "value") -> float:
    """Parse ``value`` (a number in base units, or a string with a unit) into base units.

    Parameters
    ----------
    value : int, float or str
        ``65536``, ``"64 KiB"``, ``"1.6 GB/s"``, ``"4.1 GMACs"``...
    kind : str
        What the quantity is: ``bytes``, ``bytes_per_s``, ``seconds``, ``flops``,
        ``flops_per_s``, ``count`` or ``count_per_s``.
    field : str
        Name used in the error message.

    Returns
    -------
    float
        The value in base units [bytes, bytes/s, s, FLOPs, FLOP/s or 1].

    Raises
    ------
    UnitError
        Not a finite number, or a unit that is unknown, ambiguous or of another kind.
    """
    if isinstance(value, float | int) and not isinstance(value, bool):  # before the ABC check below (~0.3 us)
        if not math.isfinite(value):
            raise UnitError(field, f"must be a finite number, got {value!r}")
        return float(value)
    if isinstance(value, str):
        return _parse_text(value, kind, field)
    if isinstance(value, bool):
        raise UnitError(field, f"expected a number or a string with a unit, got {value!r}")
    if isinstance(value, numbers.Real):  # int, float and NumPy scalars
        number = float(value)
        if not math.isfinite(number):
            raise UnitError(field, f"must be a finite number, got {value!r}")
        return number
    raise UnitError(field, f"expected a number or a string with a unit, got {value!r}")


@functools.lru_cache(maxsize=1024)
def _parse_text(value: str, kind: Kind, field: str) -> float:
    """``parse`` of a text: kept per (text, kind, field), as a plan parses the same preset texts every
    time (an error is raised again each time: lru_cache keeps only results)."""
    number, unit = _number_and_unit(value, kind, field)
    table = _UNITS[kind]
    if unit == "":
        return number  # a bare number is in the base unit, as a Python number is (one rule everywhere)
    if kind == "bytes" and unit in _BIT_UNITS:
        # Sizes are never quoted in bits; "64kb" almost always means kilobytes, 8x more.
        pre = unit.removesuffix("bits").removesuffix("bit").removesuffix("b")
        hint = f"{pre}B" + (f" or {pre.upper()}iB" if pre and not pre.endswith("i") else "")
        raise UnitError(field, f"{unit!r} in {value!r} is bits; a size takes bytes, accepted: {hint}")
    if unit in table:
        return number * table[unit]
    other = next((k for k, t in _UNITS.items() if unit in t), None)
    hint = f" ({unit!r} is a unit of {other.replace('_', ' ')})" if other else ""
    raise UnitError(field, f"unknown unit {unit!r} in {value!r}{hint}; accepted: {_ACCEPTED[kind]}")


def _number_and_unit(value: str, kind: Kind, field: str) -> tuple[float, str]:
    """The finite number a text starts with (thousands commas and underscores dropped) and the
    unit after it, spaces removed (``""``: none)."""
    match = _NUMBER.match(value)
    raw = match.group(1) if match else ""
    if "," in raw and not _THOUSANDS.match(raw):
        # "1,5 GB" is a decimal comma (15 GB if the comma were dropped): refuse, never guess.
        raise UnitError(
            field, f"{value!r} has a decimal comma; accepted: a decimal point, e.g. {raw.replace(',', '.')}"
        )
    text = raw.replace(",", "").replace("_", "")
    try:
        number = float(text)
    except ValueError:
        raise UnitError(field, f"cannot read {value!r} as a number with a unit; accepted: {_ACCEPTED[kind]}") from None
    if not math.isfinite(number):
        raise UnitError(field, f"{value!r} is not a finite number; accepted: {_ACCEPTED[kind]}")
    return number, match.group(2).replace(" ", "") if match else ""


# ---------------------------------------------------------------------------------- display

_DEC = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_BIN = [(2.0**50, "Pi"), (2.0**40, "Ti"), (2.0**30, "Gi"), (2.0**20, "Mi"), (2.0**10, "Ki")]


def _sig(x: float) -> str:
    """Four significant figures (three below 1), thousands separators, no exponent: 0.000141 cores, not
    "0", which a room reads as none (at most 9 decimals: smaller reads "under 0.000000001")."""
    if x == 0 or math.isnan(x):  # NaN as before ("nan"): the formatter never raises
        return "0" if x == 0 else "nan"
    ax = abs(x)
    if ax < 0.5e-9:
        return "under 0.000000001" if x > 0 else "above -0.000000001"
    decimals = 0 if ax >= 1000 else 1 if ax >= 100 else 2 if ax >= 1 else min(2 - math.floor(math.log10(ax)), 9)
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scaled(x: float, steps: list[tuple[float, str]], unit: str) -> str:
    for factor, prefix in steps:
        if abs(x) >= factor:
            return f"{_sig(x / factor)} {prefix}{unit}"
    return f"{_sig(x)} {steps[-1][1] if steps[-1][0] == 1.0 else ''}{unit}"


def fmt_bytes(n: float, binary: bool = False) -> str:
    """``1.34 GB`` (decimal) or ``12.97 GiB`` (``binary=True``, as GPU memory is shown)."""
    if binary:
        for factor, prefix in _BIN:
            if abs(n) >= factor:
                return f"{_sig(n / factor)} {prefix}B"
        return f"{_sig(n)} B"
    return _scaled(n, _DEC, "B")


def fmt_rate(bytes_per_s: float, binary: bool = False) -> str:
    """``385.7 MB/s`` or, with ``binary=True``, ``367.8 MiB/s``."""
    return fmt_bytes(bytes_per_s, binary) + "/s"


def fmt_seconds(s: float) -> str:
    """``87.9 ms``, ``2.91 h``: the unit that keeps the number readable."""
    a = abs(s)
    if a == 0:
        return "0 s"
    if a < 1e-3:
        return f"{_sig(s * 1e6)} µs"
    if a < 1:
        return f"{_sig(s * 1e3)} ms"
    if a < 120:
        return f"{_sig(s)} s"
    if a < 7200:
        return f"{_sig(s / 60)} min"
    if a < 172800:
        return f"{_sig(s / 3600)} h"
    return f"{_sig(s / 86400)} d"


def fmt_flops(f: float, rate: bool = False) -> str:
    """``24.7 GFLOPs`` or, with ``rate=True``, ``125 TFLOP/s``."""
    return _scaled(f, _DEC, "FLOP/s" if rate else "FLOPs")


def fmt_count(x: float, unit: str = "") -> str:
    """``5,885 reads/s``: thousands separators, three significant figures."""
    return f"{_sig(x)} {unit}".rstrip()


def fmt_usd(x: float) -> str:
    """``$1,234``; a cost that rounds to nothing but is not zero reads ``under $1``, not ``$0``."""
    if not math.isfinite(x):
        return ""
    if 0 < abs(x) <= 0.5:  # 0.5 itself prints "$0": format rounds half to even
        return "under $1"
    return f"${x:,.0f}"


def fmt(value: float, kind: Kind, unit: str = "", binary: bool = False) -> str:
    """Format any quantity by its kind; the one formatter behind every display."""
    if kind == "bytes":
        return fmt_bytes(value, binary)
    if kind == "bytes_per_s":
        return fmt_rate(value, binary)
    if kind == "seconds":
        return fmt_seconds(value)
    if kind == "flops":
        return fmt_flops(value)
    if kind == "flops_per_s":
        return fmt_flops(value, rate=True)
    return fmt_count(value, unit)


def plain(x: float) -> str:
    """A number with every digit and no exponent, as a widget or a link carries it:
    ``210100`` not ``2.101e+05``, ``1234.567`` not ``1234.57`` (``:g`` keeps 6 digits and loses the rest)."""
    return str(np.format_float_positional(x, trim="-")) if math.isfinite(x) else str(x)


# ------------------------------------------------------------------ calendar: one month, one year

DAYS_PER_MONTH = 30
"""A month of training around the clock for every monthly charge and count [days] (30 days)."""

DAYS_PER_YEAR = 365.25
"""A year [days] (Julian: 365.25 days), for yearly writes and drive lifetimes."""

MONTH_S = DAYS_PER_MONTH * 86400
"""A month [s] (30 days): read and request charges, failures a month, a month of checkpoint writes."""

HOURS_PER_MONTH = MONTH_S / 3600
"""The same month in hours (720 h), for idle GPU-hours priced per GPU-hour."""
