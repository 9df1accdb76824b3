"""Per-core speed of the catalog's CPUs (presets/cpus.yaml) from published SPEC CPU2017 integer results.

presets/cpus.yaml quotes, for every CPU, the median SPECspeed2017_int_base of the SKU it is measured by
and divides it by the reference's; this script holds every result those medians come from, so the
arithmetic can be re-run and checked (tests/test_loader_data.py loads it and compares).

Source: the SPEC CPU2017 results as SPEC publishes them (spec.org/cpu2017/results, the "Dump All
Records As CSV" export), read through fjacquet/spec-search, a public repository that converts that CSV
into one JSON file per processor (web/public/data/processors/<slug>.json at commit SPEC_COMMIT; its
scripts/convert_csv.py keeps SPEC's columns Benchmark, Hardware Vendor, System, Base Result, # Cores,
# Chips, # Enabled Threads Per Core, Processor MHz, HW Avail, Published). Read 2026-11-28.

Two views of a core, both SPEC CPU2017 integer, base (one compiler setting for all ten programs):
- SPECspeed2017_int_base ("CINT2017"): one copy of each program, i.e. one thread (657.xz_s alone
  uses OpenMP), on an otherwise idle machine, so the core runs at its single-core boost clock. This
  is per_core_speed: a decode worker is one thread; SMT sharing is smt_throughput_gain's business.
- SPECrate2017_int_base ("CINT2017rate") / physical cores, two-socket systems with SMT on: every
  core and SMT thread busy, all-core clocks, memory bandwidth shared. The cross-check.
Every result of the SKU is kept (all vendors, all dates); the median absorbs the few outliers
(memory run below its rated speed, under-populated channels), which stay in the lists.

The reference (epyc-zen5-kvm) hides its SKU. It is anchored to the EPYC 9115: the Zen 5 "Turin" part
whose nominal clock, 2600 MHz in every SPEC row, is the guest's TSC (2596 MHz), and whose maximum
boost, 4.1 GHz (AMD, R), is the clock measured here with a dependent add chain (--measure-clock:
4.06-4.18 GHz). The EPYC 9655 has the same nominal clock but boosts to 4.5 GHz (AMD, R); its
median scaled to 4.1 GHz lands 1 % from the 9115's.

Run: python benchmarks/cpu_speed_sources.py [--measure-clock]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

SPEC_REPO = "fjacquet/spec-search"
SPEC_COMMIT = "6e465a8a3b98bf640fe747fb63af91daeeeb7ba0"
READ_ON = "2026-11-28"


@dataclass(frozen=True)
class SkuResults:
    """Published SPEC CPU2017 integer base results of one SKU (values as printed in the source file)."""

    sku: str
    path: str  # web/public/data/processors/<slug>.json in SPEC_REPO at SPEC_COMMIT
    speed: tuple[float, ...]  # every CINT2017 (SPECspeed2017_int_base) row, in file order
    rate_2s: tuple[float, ...]  # CINT2017rate base rows with 2 chips and 2 threads per core
    cores_2s: int  # physical cores in those two-socket systems
    coverage: str  # which rows were read


SKUS: dict[str, SkuResults] = {
    "AMD EPYC 9115": SkuResults(
        "AMD EPYC 9115", "web/public/data/processors/amd-epyc-9115.json",
        (17.9, 18.2, 17.5, 17.6, 17.6, 17.3, 17.4, 17.2, 17.4, 17.3, 17.3, 17.4, 17.5, 17.6, 17.4, 17.6,
         17.3, 17.6, 17.4, 17.6, 17.5, 17.3, 17.4),
        (), 32, "all 23 CINT2017 rows; rate rows not read (the rate anchor is the 9655)"),
    "AMD EPYC 9655": SkuResults(
        "AMD EPYC 9655", "web/public/data/processors/amd-epyc-9655.json",
        (19.8, 19.9, 19.4, 19.3, 19.2, 19.2, 19.2, 19.1, 19.2, 19.3, 19.3, 19.2, 19.3, 19.3, 19.3, 19.3,
         19.4, 19.4, 19.3, 19.1, 19.3, 19.6),
        (2180, 2060, 2030, 2100, 2090, 2090, 1930, 1990, 2010, 2020, 2120, 2020, 1560, 2040, 2050, 2120,
         2130, 2000, 2200), 192, "all rows"),
    "AMD EPYC 9654": SkuResults(
        "AMD EPYC 9654", "web/public/data/processors/amd-epyc-9654.json",
        (14.1, 14.1, 14.1, 14.5, 13.8, 13.8, 13.9, 13.9, 14.0, 14.1, 14.0, 13.9, 13.9, 13.9, 13.9, 14.0,
         13.9, 14.0, 13.9, 13.9, 13.9, 14.5, 14.4, 14.5, 13.9, 13.9, 13.8, 13.8, 13.8, 13.8, 14.5),
        (1790, 1630, 1720, 1620, 1630, 1670, 1660, 1650, 1530, 1690, 1620, 1630, 1800, 1760, 1770, 1800,
         1800, 1800, 1680, 1630, 1800, 1660, 1190, 1650, 1740, 1890, 1830, 1830, 1640, 1610, 1620, 1610,
         1640, 1350, 1350, 1380, 1350, 1810, 1800), 192,
        "all rows (two Cisco rows print 196 cores for 2 x 96; the rate per core uses 192)"),
    "AMD EPYC 7742": SkuResults(
        "AMD EPYC 7742", "web/public/data/processors/amd-epyc-7742.json",
        (9.08, 8.98, 9.06, 8.66, 8.67, 8.59, 8.69, 8.64, 8.58, 8.93, 8.84, 8.73, 8.76, 8.82, 8.98, 8.91,
         8.81, 8.98, 8.99, 8.96, 8.93, 8.92, 8.87, 8.99, 8.97, 9.01, 9.01, 9.0, 8.33),
        (701, 646, 649, 667, 655, 661, 680, 682, 664, 663, 659, 660, 695, 695, 691, 686, 679, 674, 655),
        128, "all rows"),
    "AMD EPYC 7643": SkuResults(
        "AMD EPYC 7643", "web/public/data/processors/amd-epyc-7643.json",
        (12.3, 12.4, 12.3, 12.3, 12.2, 12.1, 12.2, 11.6, 11.7, 12.3, 12.4, 12.3, 12.4, 12.4),
        (676, 679, 683, 649, 641, 649, 656, 661, 660, 661), 96, "all rows"),
    "Intel Xeon Platinum 8480CL": SkuResults(
        "Intel Xeon Platinum 8480CL", "web/public/data/processors/intel-xeon-platinum-8480cl.json",
        (14.8, 14.8, 14.8, 14.5), (887, 888, 885, 882), 112, "all rows (four Lenovo systems)"),
    "Intel Xeon Platinum 8480+": SkuResults(
        "Intel Xeon Platinum 8480+", "web/public/data/processors/intel-xeon-platinum-8480.json",
        (14.1, 14.7, 14.8, 14.5, 14.5, 14.8, 14.4, 14.5, 14.4, 14.7, 11.8, 14.7, 11.8, 14.7, 14.5, 14.7,
         14.8, 14.7, 14.4, 12.9, 14.5, 14.5, 14.6, 14.1, 14.6, 14.8, 14.8, 14.5, 14.8, 14.5, 14.4, 14.5,
         13.7, 14.2, 13.7),
        (), 112, "the first 35 CINT2017 rows (the first 16,000 characters of the file); rate rows not read"),
    "Intel Xeon Platinum 8592+": SkuResults(
        "Intel Xeon Platinum 8592+", "web/public/data/processors/intel-xeon-platinum-8592.json",
        (14.7, 14.2, 14.2, 14.4, 14.4, 14.3, 14.3, 14.4, 14.3, 14.2, 14.4, 14.4, 14.5, 14.4, 14.5, 14.5,
         14.4, 14.4, 14.5, 14.4, 14.4, 14.6, 14.6, 14.6, 14.6, 14.3, 14.3, 14.2, 14.3, 14.2, 14.1, 14.6),
        (1060, 1040, 1070, 1060, 1060, 1060, 1050, 1070, 1070, 1060, 975, 1020, 1080, 1050, 1060, 1100,
         1090, 1090, 1090, 1090, 1090, 1090, 1130, 1130, 1050, 1020, 1030, 1030, 1120, 1120, 1120, 1020,
         1060, 1100, 839, 1100, 1130), 128,
        "all CINT2017 rows; 37 of the 38 two-socket rate rows (the ASUS RS720-E11 rate row was not read)"),
    "Intel Xeon 6960P": SkuResults(
        "Intel Xeon 6960P", "web/public/data/processors/intel-xeon-6960p.json",
        (14.2, 14.3, 13.8, 13.0), (1610, 1640, 1490), 144,
        "all rows; two Supermicro rate rows with cores disabled (132 and 96 of 144) are left out"),
    "Intel Xeon Platinum 8268": SkuResults(
        "Intel Xeon Platinum 8268", "web/public/data/processors/intel-xeon-platinum-8268.json",
        (10.4, 10.4, 10.4, 9.99, 10.0, 10.0, 10.0, 10.1, 9.88, 10.1, 10.0, 10.1, 10.2, 10.1, 10.1, 10.2,
         10.2, 11.4, 10.2, 10.2, 10.2, 10.2, 10.2, 11.4, 10.2, 10.3, 10.3, 10.0, 10.1, 10.1),
        (299, 303, 302, 306, 304, 309, 316, 306, 307, 306, 299, 307, 301, 307, 304), 48,
        "all CINT2017 rows; the two-socket rate rows from Dell R640 to NEC R120h-1M "
        "(characters 33,000-49,000)"),
    "Intel Xeon Platinum 8168": SkuResults(
        "Intel Xeon Platinum 8168", "web/public/data/processors/intel-xeon-platinum-8168.json",
        (9.07, 9.02, 9.2, 9.04, 9.02, 8.99, 9.04, 8.97, 8.95, 8.95, 8.98, 9.0, 8.95, 8.92, 8.87, 8.98,
         8.97, 9.08, 8.96, 9.11, 9.0, 8.86, 8.99, 8.98, 8.99, 9.0, 8.99, 9.01, 9.05, 9.06, 8.88, 9.84),
        (264, 253, 260, 255, 255, 257, 261, 253, 260, 259, 274, 273, 249, 259, 257, 261, 259, 278), 48,
        "all CINT2017 rows; the two-socket rate rows from Fujitsu RX2540 M4 to H3C R4900 G3 "
        "(characters 38,000-54,000)"),
    "Intel Xeon E5-2699A v4": SkuResults(
        "Intel Xeon E5-2699A v4", "web/public/data/processors/intel-xeon-e5-2699a-v4.json",
        (8.32,), (164, 199, 162), 44,
        "all rows: speed Lenovo x3650 M5 (tested Jan-2018); rate Fujitsu (tested Dec-2016), Lenovo "
        "(Dec-2017), Supermicro (Aug-2017)"),
    "Intel Xeon E5-2698 v4": SkuResults(
        "Intel Xeon E5-2698 v4", "web/public/data/processors/intel-xeon-e5-2698-v4.json",
        (), (143,), 40, "all rows: one rate result, Inspur NF5280M4, tested Dec-2016"),
    "Intel Xeon E5-2699 v4": SkuResults(
        "Intel Xeon E5-2699 v4", "web/public/data/processors/intel-xeon-e5-2699-v4.json",
        (5.8,), (), 44, "all rows: one speed result, HPE ML350 Gen9, tested Dec-2016"),
}

REFERENCE_SKU = "AMD EPYC 9115"  # per_core_speed anchor (single-thread view)
RATE_ANCHOR_SKU = "AMD EPYC 9655"  # cross-check anchor (every-core view): a Turin host with many cores
REFERENCE_CLOCK_GHZ = 4.1  # measured here (--measure-clock), = the 9115's maximum boost (AMD, R)
EPYC_9655_BOOST_GHZ = 4.5  # AMD's maximum boost for the 9655 (R, not in a stored page)

# catalog key -> the SKU whose results stand for it (the same SKU, or a named sibling, see cpus.yaml)
CATALOG: dict[str, str] = {
    "epyc-9655": "AMD EPYC 9655",
    "epyc-9654": "AMD EPYC 9654",
    "epyc-7742": "AMD EPYC 7742",
    "epyc-7r13": "AMD EPYC 7643",
    "xeon-8480c": "Intel Xeon Platinum 8480CL",
    "xeon-8592plus": "Intel Xeon Platinum 8592+",
    "xeon-6960p": "Intel Xeon 6960P",
    "xeon-8275cl": "Intel Xeon Platinum 8268",
    "xeon-8168": "Intel Xeon Platinum 8168",
    "xeon-e5-2698v4": "Intel Xeon E5-2699A v4",
}


def speed_median(sku: str) -> float:
    """Median SPECspeed2017_int_base of a SKU's published results."""
    return statistics.median(SKUS[sku].speed)


def rate_per_core(sku: str) -> float:
    """Median two-socket SPECrate2017_int_base (SMT on) divided by the systems' physical cores."""
    r = SKUS[sku]
    return statistics.median(r.rate_2s) / r.cores_2s


def per_core_speed(sku: str) -> float:
    """Single-thread speed of one core of `sku` over one core of the reference (median over median)."""
    return speed_median(sku) / speed_median(REFERENCE_SKU)


def all_core_ratio(sku: str) -> float:
    """The cross-check: rate per core of `sku` over the rate anchor's, every core and thread busy."""
    return rate_per_core(sku) / rate_per_core(RATE_ANCHOR_SKU)


def anchor_check() -> tuple[float, float]:
    """The reference's single-thread score two ways: the 9115's median, the 9655's scaled to 4.1 GHz."""
    scaled = speed_median("AMD EPYC 9655") * REFERENCE_CLOCK_GHZ / EPYC_9655_BOOST_GHZ
    return speed_median(REFERENCE_SKU), scaled


CLOCK_PROBE_C = r"""
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  double best = 0.0;
  for (int r = 0; r < 7; r++) {
    unsigned long x = 1, n = 100000000UL;
    double t0 = now();
    for (unsigned long i = 0; i < n; i++) {
      __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
                       "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t" : "+r"(x));
    }
    double ghz = 10.0 * n / (now() - t0) / 1e9;
    if (ghz > best) best = ghz;
  }
  printf("%.3f\n", best);
  return 0;
}
"""


def measure_clock_ghz() -> float:
    """Running core clock: a chain of dependent 1-cycle adds timed in thread CPU time (best of 7)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("--measure-clock needs a C compiler (cc or gcc) on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "probe.c", Path(tmp) / "probe"
        src.write_text(CLOCK_PROBE_C)
        subprocess.run([cc, "-O2", str(src), "-o", str(exe)], check=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return float(out.strip())


def report() -> str:
    """The table cpus.yaml quotes: per_core_speed, its cross-check and how far apart they are."""
    ref9115, ref9655 = anchor_check()
    lines = [
        f"SPEC CPU2017 integer base via {SPEC_REPO}@{SPEC_COMMIT[:7]} (read {READ_ON})",
        f"reference single-thread score: EPYC 9115 median {ref9115:.2f}; EPYC 9655 median scaled to "
        f"{REFERENCE_CLOCK_GHZ} GHz {ref9655:.2f} ({ref9655 / ref9115 - 1:+.1%})",
        f"rate anchor: {RATE_ANCHOR_SKU} {rate_per_core(RATE_ANCHOR_SKU):.3f} per core",
        f"{'catalog key':16s} {'SKU':28s} {'n':>3s} {'speed':>6s} {'per_core':>8s} "
        f"{'rate/core':>9s} {'all-core':>8s} {'apart':>6s}",
    ]
    for key, sku in CATALOG.items():
        r = SKUS[sku]
        speed, ratio = speed_median(sku), per_core_speed(sku)
        rate_txt, all_txt, apart = "", "", ""
        if r.rate_2s:
            all_core = all_core_ratio(sku)
            rate_txt, all_txt = f"{rate_per_core(sku):9.3f}", f"{all_core:8.3f}"
            apart = f"{all_core / ratio - 1:+6.0%}"
        lines.append(f"{key:16s} {sku:28s} {len(r.speed):3d} {speed:6.2f} {ratio:8.3f} "
                     f"{rate_txt:>9s} {all_txt:>8s} {apart:>6s}")
    return "\n".join(lines)


def side_checks() -> list[str]:
    """The figures cpus.yaml quotes beside per_core_speed: the 8480+, Broadwell's early results, drift."""
    ref = speed_median(REFERENCE_SKU)
    anchor = rate_per_core(RATE_ANCHOR_SKU)
    b2699a = SKUS["Intel Xeon E5-2699A v4"]
    return [
        f"8480+ (sibling of the 8480C): SPECspeed median {speed_median('Intel Xeon Platinum 8480+'):.2f}"
        f" over the first {len(SKUS['Intel Xeon Platinum 8480+'].speed)} results",
        f"E5-2698 v4, 2016 rate: {rate_per_core('Intel Xeon E5-2698 v4'):.3f} per core"
        f" -> {rate_per_core('Intel Xeon E5-2698 v4') / anchor:.3f}",
        f"E5-2699 v4, 2016 speed: {speed_median('Intel Xeon E5-2699 v4'):.2f}"
        f" -> {speed_median('Intel Xeon E5-2699 v4') / ref:.3f}",
        f"E5-2699A v4 rate by test date 2016-12, 2017-12, 2017-08: {b2699a.rate_2s};"
        f" the 2017-12 one alone -> {b2699a.rate_2s[1] / b2699a.cores_2s / anchor:.3f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure-clock", action="store_true",
                        help="compile and run the dependent-add clock probe (needs cc)")
    args = parser.parse_args()
    print(report())
    print("\n".join(side_checks()))
    if args.measure_clock:
        print(f"running core clock here: {measure_clock_ghz():.2f} GHz (dependent adds, best of 7)")


if __name__ == "__main__":
    main()
