"""Units: decimal vs binary exact, bits vs bytes, MACs vs FLOPs, clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calc.errors import UnitError
from calc.units import accepted_units, fmt, fmt_bytes, fmt_count, fmt_flops, fmt_rate, fmt_seconds, fmt_usd, parse


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("16 GiB", "bytes", 16 * 2**30),
        ("64 KB", "bytes", 64_000),
        ("64 kB", "bytes", 64_000),
        ("64 KiB", "bytes", 65_536),
        ("98 MiB", "bytes", 98 * 2**20),
        ("1 TB", "bytes", 1e12),
        ("1 TiB", "bytes", 2**40),
        ("146,600,628 B", "bytes", 146_600_628),
        ("1.6 GB/s", "bytes_per_s", 1.6e9),
        ("10 Gb/s", "bytes_per_s", 1.25e9),
        ("10 Gbps", "bytes_per_s", 1.25e9),
        ("100 MiB/s", "bytes_per_s", 100 * 2**20),
        ("125 TFLOPS", "flops_per_s", 125e12),
        ("125 TFLOP/s", "flops_per_s", 125e12),
        ("4.1 GMACs", "flops", 8.2e9),
        ("4 GFLOPs", "flops", 4e9),
        ("87 ms", "seconds", 0.087),
        ("50 us", "seconds", 50e-6),
        ("2 h", "seconds", 7200),
        (65536, "bytes", 65536),
        ("1e3", "count", 1000),
    ],
)
def test_parse(text: str, kind: str, expected: float) -> None:
    assert parse(text, kind) == pytest.approx(expected, rel=1e-12)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "kind", "needle"),
    [
        ("16 G", "bytes", "unknown unit 'G'"),
        ("10 mb", "bytes", "unknown unit 'mb'"),
        ("4 GFLOPS", "flops", "unit of flops per s"),  # a rate where a count is asked
        ("125 TFLOPs", "flops_per_s", "flops"),
        ("1e400", "bytes", "finite"),  # float("1e400") is inf: refused, never a number
        ("e5", "count", "cannot read"),  # float() would raise a bare ValueError
        ("1,5 GB", "bytes", "decimal comma"),  # not 15 GB
        ("64kb", "bytes", "is bits"),  # a size in kilobits is almost always meant as kB: 8x off
        ("64 Kib", "bytes", "KiB"),
        ("fast", "bytes_per_s", "cannot read"),
        (float("nan"), "bytes", "finite"),
        (float("inf"), "seconds", "finite"),
        (True, "count", "expected a number"),
        ("1 GB", "seconds", "bytes"),
    ],
)
def test_parse_errors_name_field_and_accepted(text: object, kind: str, needle: str) -> None:
    with pytest.raises(UnitError) as err:
        parse(text, kind, "example_bytes")  # type: ignore[arg-type]
    msg = str(err.value)
    assert msg.startswith("example_bytes:")
    assert needle in msg
    assert "accepted" in msg or "finite" in msg or "expected" in msg


def test_unit_error_is_value_error() -> None:
    with pytest.raises(ValueError):
        parse("3 parsecs", "bytes")


def test_format() -> None:
    assert fmt_bytes(13282 * 2**20, binary=True) == "12.97 GiB"
    assert fmt_bytes(1_342_177_280) == "1.34 GB"
    assert fmt(385_679_779.3, "bytes_per_s", binary=True) == "367.8 MiB/s"
    assert fmt(5885.06, "count_per_s", "reads/s") == "5,885 reads/s"
    assert fmt_seconds(0.0879) == "87.9 ms"
    assert fmt_seconds(10486) == "2.91 h"
    assert fmt(125e12, "flops_per_s") == "125 TFLOP/s"
    # what is shown reads back as the same quantity: "12.5 GB/s" -> 12.5e9 B/s
    assert parse(fmt(12.5e9, "bytes_per_s"), "bytes_per_s") == 12.5e9


def test_a_bare_number_is_the_base_unit_as_text_or_number() -> None:
    # One rule for library, CLI, links and widgets: "65536" is 65,536 bytes, "0.087" is 87 ms.
    assert parse("65536", "bytes") == parse(65536, "bytes") == 65536
    assert parse("0.087", "seconds") == 0.087
    assert parse("1e6", "count") == 1_000_000
    assert parse("1,000 MB", "bytes") == 1e9  # a thousands separator is still fine
    assert parse("10 Gb/s", "bytes_per_s") == 1.25e9  # bits stay accepted for link rates


def test_fmt_usd_never_rounds_a_cost_to_zero() -> None:
    # gpt-1b-h100-tokens: a few GB in a bucket at $0.02/GB-month is cents, not "$0"
    assert fmt_usd(0.12) == "under $1"
    assert fmt_usd(0.0) == "$0"
    assert fmt_usd(7559.93) == "$7,560"
    assert fmt_usd(float("inf")) == ""


@pytest.mark.parametrize(
    ("x", "text"),
    [
        # four significant figures, three below 1; thousands separators; trailing zeros dropped
        (0, "0"),
        (1234.6, "1,235"),
        (1000.7, "1,001"),  # 1,000 and up: no decimals
        (1000, "1,000"),  # a whole number keeps its zeros
        (100.37, "100.4"),  # 100 to 1,000: one decimal
        (100.0, "100"),
        (12.346, "12.35"),  # 1 to 100: two
        (1.234, "1.23"),
        (2.5, "2.5"),
        (0.12345, "0.123"),  # below 1: three
        (0.052149, "0.0521"),  # three significant figures, not "0.052"
        (0.000140994, "0.000141"),  # an LLM's loader cores: not "0", which reads as none
        (0.99951, "1"),
        (1e-9, "0.000000001"),  # nine decimals at most
        (4e-10, "under 0.000000001"),
        (float("nan"), "nan"),  # as before the three-figure rule: formatting never raises
        (float("inf"), "inf"),
        (-1234.6, "-1,235"),
    ],
)
def test_significant_figures(x: float, text: str) -> None:
    assert fmt_count(x) == text


@pytest.mark.parametrize(
    ("value", "binary", "text"),
    [
        (0.5, False, "0.5 B"),
        (0, False, "0 B"),
        (999, False, "999 B"),
        (1e3, False, "1 kB"),
        (1_342_177_280, False, "1.34 GB"),
        (2.5e16, False, "25 PB"),  # no exabytes: petabytes keep counting
        (512, True, "512 B"),
        (1536, True, "1.5 KiB"),  # 1,536 / 1,024
        (13282 * 2**20, True, "12.97 GiB"),  # 13,282 / 1,024
        (2**50, True, "1 PiB"),
        (-2048, True, "-2 KiB"),
    ],
)
def test_fmt_bytes(value: float, binary: bool, text: str) -> None:
    assert fmt_bytes(value, binary) == text


def test_fmt_rate_flops_count() -> None:
    # 385,679,779.3 B/s / 2^20 = 367.8 MiB/s; / 10^6 = 385.7 MB/s
    assert fmt_rate(385_679_779.3, binary=True) == "367.8 MiB/s"
    assert fmt_rate(385_679_779.3) == "385.7 MB/s"
    assert fmt_flops(24.7e9) == "24.7 GFLOPs"
    assert fmt_flops(125e12, rate=True) == "125 TFLOP/s"
    assert fmt_flops(0.25) == "0.25 FLOPs"
    assert fmt_count(3) == "3"  # no unit, no trailing space
    assert fmt_count(5885.06, "reads/s") == "5,885 reads/s"


@pytest.mark.parametrize(
    ("s", "text"),
    [
        (0, "0 s"),
        (5e-4, "500 µs"),
        (1e-3, "1 ms"),  # from 1 ms: milliseconds
        (0.0879, "87.9 ms"),
        (1, "1 s"),  # from 1 s: seconds
        (119, "119 s"),
        (120, "2 min"),  # from 2 min: minutes
        (7199, "120 min"),  # 119.98 min
        (7200, "2 h"),  # from 2 h: hours
        (172_799, "48 h"),  # 47.9997 h
        (172_800, "2 d"),  # from 2 days: days
        (-90, "-90 s"),
    ],
)
def test_fmt_seconds(s: float, text: str) -> None:
    assert fmt_seconds(s) == text


def test_fmt_usd_edges() -> None:
    assert fmt_usd(0.5) == "under $1"  # format() rounds 0.5 to even, "$0"
    assert fmt_usd(0.51) == "$1"
    assert fmt_usd(-0.3) == "under $1"
    assert fmt_usd(float("nan")) == ""
    assert fmt_usd(-1234.4) == "$-1,234"


@pytest.mark.parametrize(
    ("kind", "unit", "text"),
    [
        ("bytes", "", "1.5 kB"),
        ("bytes_per_s", "", "1.5 kB/s"),
        ("seconds", "", "25 min"),
        ("flops", "", "1.5 kFLOPs"),
        ("flops_per_s", "", "1.5 kFLOP/s"),
        ("count", "files", "1,500 files"),
        ("count_per_s", "reads/s", "1,500 reads/s"),
    ],
)
def test_fmt_by_kind(kind: str, unit: str, text: str) -> None:
    assert fmt(1500, kind, unit) == text  # type: ignore[arg-type]
    if kind.startswith("count"):
        assert fmt(1500, kind) == "1,500"  # type: ignore[arg-type]  # no unit given, none shown
    if kind == "bytes":
        assert fmt(1536, kind, binary=True) == "1.5 KiB"  # type: ignore[arg-type]
        assert fmt(1536, "bytes_per_s", binary=True) == "1.5 KiB/s"


def test_parse_numbers_and_separators() -> None:
    assert parse(np.float32(2.5), "seconds") == 2.5  # NumPy scalars are numbers
    assert parse(np.int64(3), "count") == 3.0
    assert parse("12,345.5 B", "bytes") == 12_345.5
    assert parse("1_000 B", "bytes") == 1000
    assert parse("  2 KiB  ", "bytes") == 2048
    assert parse("8 bits/s", "bytes_per_s") == 1.0
    assert parse("3 kFLOPs", "flops") == 3e3
    assert parse("2 GMAC", "flops") == 4e9
    assert parse("2 k", "count") == 2000
    assert parse("5 k/s", "count_per_s") == 5000
    assert parse("1 min", "seconds") == 60
    assert parse("1 d", "seconds") == 86_400
    assert parse("100 ns", "seconds") == pytest.approx(1e-7, rel=1e-12)
    assert parse("1 EiB", "bytes") == 2**60
    assert parse("-3", "count") == -3.0  # ranges are the scenario's to check
    assert parse("1 GB /s", "bytes_per_s") == 1e9  # spaces inside the unit are dropped


@pytest.mark.parametrize(
    ("value", "kind", "message"),
    [
        (True, "count", "f: expected a number or a string with a unit, got True"),
        (None, "count", "f: expected a number or a string with a unit, got None"),
        (float("inf"), "seconds", "f: must be a finite number, got inf"),
        ("1,5 GB", "bytes", "f: '1,5 GB' has a decimal comma; accepted: a decimal point, e.g. 1.5"),
        ("12,34 GB", "bytes", "f: '12,34 GB' has a decimal comma; accepted: a decimal point, e.g. 12.34"),
        (
            "fast",
            "count",
            "f: cannot read 'fast' as a number with a unit; accepted: a plain number, optionally with k, M, G",
        ),
        ("1e400 s", "seconds", "f: '1e400 s' is not a finite number; accepted: s, ms, us, µs, ns, min, h, d"),
        ("64kb", "bytes", "f: 'kb' in '64kb' is bits; a size takes bytes, accepted: kB or KiB"),
        ("64 Kib", "bytes", "f: 'Kib' in '64 Kib' is bits; a size takes bytes, accepted: KiB"),
        ("8 Mbit", "bytes", "f: 'Mbit' in '8 Mbit' is bits; a size takes bytes, accepted: MB or MiB"),
        ("8 bits", "bytes", "f: 'bits' in '8 bits' is bits; a size takes bytes, accepted: B"),
        (
            "1 GB",
            "seconds",
            "f: unknown unit 'GB' in '1 GB' ('GB' is a unit of bytes); accepted: s, ms, us, µs, ns, min, h, d",
        ),
        ("3 parsecs", "seconds", "f: unknown unit 'parsecs' in '3 parsecs'; accepted: s, ms, us, µs, ns, min, h, d"),
        # a line break inside the unit: the pattern cannot match it at all
        (
            "64 Ki\nB",
            "bytes",
            f"f: cannot read '64 Ki\\nB' as a number with a unit; accepted: {accepted_units('bytes')}",
        ),
    ],
)
def test_parse_error_messages(value: object, kind: str, message: str) -> None:
    with pytest.raises(UnitError) as err:
        parse(value, kind, "f")  # type: ignore[arg-type]
    assert str(err.value) == message


def test_accepted_units_are_listed_per_kind() -> None:
    assert accepted_units("seconds") == "s, ms, us, µs, ns, min, h, d"
    assert accepted_units("flops_per_s") == "TFLOPS, TFLOP/s, GFLOPS, PFLOPS"
    with pytest.raises(UnitError, match=r"value: unknown unit 'x'"):
        parse("1 x", "bytes")  # the field's default name


def test_plain_keeps_every_digit_for_widgets_and_links() -> None:
    from calc.units import plain

    # 1,234,567 B shown in kB: 1234.567; ":g" printed 1234.57 and the link lost 3 bytes.
    assert plain(1_234_567 / 1000) == "1234.567"
    assert plain(210_100.0) == "210100"  # not 2.101e+05
    assert plain(0.02) == "0.02"
    assert plain(float("inf")) == "inf"


def test_check_range_is_the_one_numeric_check() -> None:
    """check_range: finite, low <= x <= high (or > low), naming the field and what is accepted;
    scenario inputs and the checkpoint formulas' arguments both go through it (issue 27)."""
    import calc
    from calc import checkpoint as ck
    from calc.errors import InputError
    from calc.units import check_range

    assert float(check_range("x", 0.0, 0.0)) == 0.0  # the bound itself is accepted
    assert check_range("x", [1.0, 2.0], 0.0, 2.0).tolist() == [1.0, 2.0]
    with pytest.raises(InputError, match=r"^x: 0 is out of range; accepted: more than 0$"):
        check_range("x", 0.0, 0.0, above=True)
    with pytest.raises(InputError, match=r"^x: 2\.5 is out of range; accepted: from 0 to 2$"):
        check_range("x", 2.5, 0.0, 2.0)
    with pytest.raises(InputError, match=r"^x: inf; accepted: a finite number$"):
        check_range("x", math.inf, 0.0)
    assert float(check_range("x", math.inf, 0.0, above=True, infinite=True)) == math.inf
    with pytest.raises(InputError, match="out of range"):
        check_range("x", np.nan, 0.0, infinite=True)  # NaN is never in range
    # Arrays take the vectorised path: one bad element fails the whole check, with the same words.
    with pytest.raises(InputError, match=r"^x: \[1.0, nan\]; accepted: a finite number$"):
        check_range("x", [1.0, np.nan], 0.0)
    with pytest.raises(InputError, match=r"^x: \[1.0, 0.0\] is out of range; accepted: more than 0$"):
        check_range("x", [1.0, 0.0], 0.0, above=True)
    with pytest.raises(InputError, match=r"out of range; accepted: from 0 to 2$"):
        check_range("x", [2.0, 2.5], 0.0, 2.0)
    assert check_range("x", [math.inf, 1.0], 0.0, above=True, infinite=True).tolist() == [math.inf, 1.0]
    assert float(check_range("x", 2.0, 0.0, 2.0)) == 2.0  # the upper bound itself is accepted
    # The same wording from a formula's argument and from a scenario count.
    with pytest.raises(InputError, match=r"^checkpoint_bytes: -1 is out of range; accepted: 0 or more$"):
        ck.bytes_per_rank(-1.0, 8)
    with pytest.raises(InputError, match=r"^num_workers: -1 is out of range; accepted: 0 to 1024$"):
        calc.plan("mlperf-unet3d-h100", num_workers=-1)
