"""Plant known bugs in the buying modules, one at a time, and count how many the tests catch (issue 37).

    python benchmarks/planted_bugs.py                 # every bug, the [tool.mutmut] test selection
    python benchmarks/planted_bugs.py --only site-link-steady-reads --tests tests/test_engine.py
    python benchmarks/planted_bugs.py --root /path/to/another/checkout   # the same bugs on it

Each bug is a plausible wrong rule a person could write (a term dropped, a limit read from the
wrong figure, a boundary moved), stated as text to replace. A rule may sit in a different module or
be spelt differently in another checkout (issue 37 moved the designs to calc/design.py and gave the
save-beside-reads rule one function), so a bug lists the spellings it can take: the first one found,
in exactly one module of ``calc/``, is planted. For each bug the script copies ``calc/``,
``presets/``, ``tests/`` and ``pyproject.toml`` to a temporary folder, plants it, runs the tests
there (``pytest -x``: the first failure catches it) and says caught, missed, or not planted (no
spelling found). The working tree is never touched.

The three bugs issue 37 found missed (``site-link-steady-reads``, ``async-stall-drops-overrun``,
``server-nvme-past-fill``) are among them; the rest are the same kinds of gap in the other rules:
a boundary between 80 and 100 % fill, a burst larger than the steady rate, a drain longer than
the interval, a second term dropped.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("calc", "presets", "tests", "pyproject.toml")


@dataclass(frozen=True)
class Bug:
    """A wrong rule: its name, what it gets wrong, and its spellings as (correct text, planted text)."""

    name: str
    what: str
    spellings: tuple[tuple[str, str], ...]


BUGS = (
    Bug(
        "site-link-steady-reads",
        "engine._site_link judges the link between sites on the steady reads, not the save burst",
        (("    if d.need_bytes_per_s > link:\n", "    if d.read_bytes_per_s > link:\n"),),
    ),
    Bug(
        "async-stall-drops-overrun",
        "the GPU time on a store drops an async save's drain past its interval from the stall",
        (
            (
                "save = d.host_copy_s + max(write_s - d.interval_s, 0.0) if d.save_async else write_s",
                "save = d.host_copy_s if d.save_async else write_s",
            ),
            (
                "float(ck.blocking_s(write_s, d.interval_s, d.host_copy_s, d.save_async))",
                "float(ck.blocking_s(min(write_s, d.interval_s), d.interval_s, d.host_copy_s, d.save_async))",
            ),
        ),
    ),
    Bug(
        "server-nvme-past-fill",
        "the server NVMe cache is filled past the fill limit",
        (("fits = dataset <= srv.local_nvme_bytes * sc.fill_limit", "fits = dataset <= srv.local_nvme_bytes"),),
    ),
    Bug(
        "engine-async-save-instead-of-reads",
        "the engine's demand takes an async drain instead of the reads, not beside them",
        (
            (
                "with_save = read_bw + write_bw if is_async else max(read_bw, write_bw)",
                "with_save = max(read_bw, write_bw)",
            ),
            (
                "with_save = float(ck.save_with_reads(read_bw, write_bw, is_async))",
                "with_save = float(ck.save_with_reads(read_bw, write_bw, False))",
            ),
        ),
    ),
    Bug(
        "storage-sync-save-beside-reads",
        "a unit's busy share adds a blocking save to the reads it stops",
        (
            (
                '"bandwidth": reading + writing if writes_overlap_reads else max(reading, writing),',
                '"bandwidth": reading + writing,',
            ),
            (
                '"bandwidth": float(save_with_reads(reading, writing, writes_overlap_reads)),',
                '"bandwidth": reading + writing,',
            ),
        ),
    ),
    Bug(
        "cluster-sync-pause-not-netted",
        "the cluster adds a sync save to the reads it pauses",
        (
            ('"extra_aligned": n * w if is_async else max(n * w - reads, 0.0),', '"extra_aligned": n * w,'),
            (
                "need = float(ck.save_with_reads(reads, peak, is_async))",
                "need = float(ck.save_with_reads(reads, peak, True))",
            ),
        ),
    ),
    Bug(
        "client-cap-on-reads",
        "the per-client cap is judged on the reads, not the need with the save burst",
        (
            (
                '    each = d.need_bytes_per_s / d.clients\n    if o.kind == "ram"',
                '    each = d.read_bytes_per_s / d.clients\n    if o.kind == "ram"',
            ),
        ),
    ),
    Bug(
        "drives-past-fill",
        "bought drives hold the bytes up to 100 % full, not the fill limit",
        (
            (
                'loads["capacity"] = d.capacity_bytes / (o.capacity_bytes * d.fill_limit)',
                'loads["capacity"] = d.capacity_bytes / o.capacity_bytes',
            ),
            ("        return o.capacity_bytes * d.fill_limit\n", "        return o.capacity_bytes\n"),
        ),
    ),
    Bug(
        "server-drives-past-fill",
        "an nfs-* server's drives hold data up to 100 % full",
        (
            (
                "return usable_drives(drives, scheme) * drive_bytes * fill_limit",
                "return usable_drives(drives, scheme) * drive_bytes",
            ),
        ),
    ),
    Bug(
        "no-resize-for-write-amplification",
        "protected drives are not re-sized for the amplified checkpoint writes",
        (("if amp > 1 and d.write_bytes_per_s > 0:", "if amp > 1 and d.write_bytes_per_s < 0:"),),
    ),
    Bug(
        "object-restore-one-unit",
        "an object store's GET rate for a restore is one unit's, not the units bought",
        (
            (
                "rate = s.units * o.iops if o.counts_requests and math.isfinite(o.iops) else math.inf",
                "rate = o.iops if o.counts_requests and math.isfinite(o.iops) else math.inf",
            ),
        ),
    ),
    Bug(
        "egress-without-checkpoints",
        "egress drops the checkpoint writes that leave the job's site",
        (
            (
                "st.EGRESS_TIERS[o.site]) + st.egress_usd(\n            written / 1e9,",
                "st.EGRESS_TIERS[o.site]) + 0 * st.egress_usd(\n            written / 1e9,",
            ),
        ),
    ),
    Bug(
        "provisioned-without-baseline",
        "provisioned MB/s are billed from zero, not above the volume's free baseline",
        (
            (
                "extra_mbps = max(throughput - units * o.free_bytes_per_s, 0.0) / 1e6",
                "extra_mbps = max(throughput, 0.0) / 1e6",
            ),
        ),
    ),
    Bug(
        "no-restore-design-point",
        "the engine's need leaves out the restore read",
        (("    need = max(with_save, restore_bw)\n", "    need = with_save\n"),),
    ),
    Bug(
        "system-size-counts-copies",
        "the system-size rule counts every node's volume copy as one system's units",
        (
            (
                '    n = s.units / s.n_node\n    if o.kind == "ram" or n <= most:',
                '    n = s.units\n    if o.kind == "ram" or n <= most:',
            ),
        ),
    ),
    Bug(
        "staggered-ignores-frequent-saves",
        "staggered saves never overlap, however frequent (the time average dropped)",
        (
            ('return drains + max(one, sum(w["average"] for w in sync))', "return drains + one"),
            ('return max(one, reads + sum(w["average_extra"] for w in writes))', "return one"),
        ),
    ),
    Bug(
        "chargeback-reads-only",
        "the chargeback weighs bandwidth by reads only, not reads and the write need",
        (("    bw = [x.read + x.write for x in loads]\n", "    bw = [x.read for x in loads]\n"),),
    ),
    Bug(
        "max-min-by-load",
        "max-min water-filling orders the jobs by load, not load per GPU",
        (
            (
                "order = sorted(range(len(loads)), key=lambda j: loads[j] / gpus[j])",
                "order = sorted(range(len(loads)), key=lambda j: loads[j])",
            ),
        ),
    ),
    Bug(
        "local-cache-one-node",
        "a local cache buys drives for one node, not every node",
        (("    buy = clients * k * o.purchase_price\n", "    buy = k * o.purchase_price\n"),),
    ),
    Bug(
        "copy-time-without-store",
        "the time to copy the dataset onto every node leaves out the store's shared rate",
        (
            (
                "return max(dataset / per_node, clients * dataset / store_bw)",
                "return dataset / per_node",
            ),
        ),
    ),
    Bug(
        "first-epoch-not-excess",
        "the first epoch's GPU time counts the whole epoch, not its excess over the GPUs' own pace",
        (
            (
                "ck.idle_gpu_hours(max(first - d.steady_epoch_s, 0.0), d.gpus)",
                "ck.idle_gpu_hours(first, d.gpus)",
            ),
        ),
    ),
    Bug(
        "max-gpus-ignores-client-cap",
        "max_gpus does not read the per-client cap as a rule that grows with the GPU count",
        (
            (
                '{"RAM copy rate", "per-client cap", "system size",',
                '{"RAM copy rate", "system size",',
            ),
            (
                'Rule("per-client cap", "per-client cap", _client_cap, scales_with_gpus=True)',
                'Rule("per-client cap", "per-client cap", _client_cap, scales_with_gpus=False)',
            ),
        ),
    ),
)


def plant(work: Path, bug: Bug) -> str:
    """Plant ``bug`` in the copy at ``work``; the module it went into, or "" when no spelling is found."""
    for old, new in bug.spellings:
        hits = [p for p in sorted((work / "calc").glob("*.py")) if old in p.read_text()]
        if len(hits) == 1 and hits[0].read_text().count(old) == 1:
            hits[0].write_text(hits[0].read_text().replace(old, new))
            return hits[0].name
    return ""


def run(root: Path, bug: Bug, tests: list[str], timeout: float) -> tuple[str, str, float]:
    """(caught | missed | not planted, the module, seconds) for one bug."""
    work = Path(tempfile.mkdtemp(prefix="feedrate-bug-"))
    try:
        for name in COPIED:
            src = root / name
            (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
        where = plant(work, bug)
        if not where:
            return "not planted", "", 0.0
        started = time.perf_counter()
        res = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        verdict = "caught" if res.returncode == 1 else "missed" if res.returncode == 0 else f"exit {res.returncode}"
        return verdict, where, time.perf_counter() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout to plant in (default: this one)")
    ap.add_argument("--tests", nargs="+", help="test files (default: [tool.mutmut] test selection)")
    ap.add_argument("--only", nargs="+", help="these bugs only (by name)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds one test run may take")
    args = ap.parse_args(argv)
    cfg = tomllib.loads((args.root / "pyproject.toml").read_text()).get("tool", {}).get("mutmut", {})
    tests = args.tests or list(cfg.get("pytest_add_cli_args_test_selection", []))
    chosen = [b for b in BUGS if not args.only or b.name in args.only]
    counts: dict[str, int] = {}
    for bug in chosen:
        verdict, where, seconds = run(args.root, bug, tests, args.timeout)
        counts[verdict] = counts.get(verdict, 0) + 1
        print(f"{verdict:<12} {bug.name:<38} {where:<16} {seconds:6.0f} s  {bug.what}", flush=True)
    planted = sum(n for v, n in counts.items() if v != "not planted")
    print(f"caught {counts.get('caught', 0)} of {planted} planted ({len(chosen)} bugs; tests: {' '.join(tests)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
