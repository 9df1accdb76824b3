"""Units: decimal vs binary exact, bits vs bytes, MACs vs FLOPs, clear errors."""

from __future__ import annotations

import pytest

from calc.errors import UnitError
from calc.units import fmt, fmt_bytes, fmt_seconds, fmt_usd, parse


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
