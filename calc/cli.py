"""Command line: ``python -m calc [SCENARIO] [--set key=value ...] [--format ...]``.

Commands:
  python -m calc [SCENARIO]                  the plan (default scenario: beast-imagenet-4xv100)
  python -m calc list [scenarios|gpus|models|storage]
  python -m calc explain SCENARIO            every formula with its numbers and sources
  python -m calc recommend SCENARIO          which storage serves it, how many units, cost
  python -m calc designs SCENARIO            complete designs (one tier, page cache, local drives) by cost
  python -m calc levers SCENARIO             what-if fixes ranked by GPU utilisation
  python -m calc max-gpus SCENARIO (--storage NAME [--units N] | --bandwidth X | --iops Y)
  python -m calc sweep SCENARIO --axis key=v1,v2,...
  python -m calc calibration                 predicted vs measured throughput
  python -m calc measure-storage PATH        random-read IOPS, MB/s, latency of real files
  python -m calc cluster [FILE.yaml|PRESET] [--job preset:count ...]   many jobs on one storage

Bad input prints one line naming the field and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

import pandas as pd
import yaml

from calc.errors import InputError

COMMANDS = (
    "list",
    "explain",
    "recommend",
    "designs",
    "levers",
    "max-gpus",
    "sweep",
    "calibration",
    "measure-storage",
    "plan",
    "cluster",
)
DEFAULT_SCENARIO = "beast-imagenet-4xv100"


def _sets(pairs: Sequence[str]) -> dict[str, str]:
    """``--set key=value`` pairs as text, read later by Scenario.from_params (the one codec)."""
    out: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise InputError("--set", f"expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key.strip()] = value.strip()
    return out


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad command line in one line, exit status 2, like bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (python -m calc --help lists the commands)\n")


def _table(df: pd.DataFrame, fmt: str) -> str:
    if fmt == "json":
        return df.to_json(orient="records", indent=1)
    if fmt == "yaml":
        return yaml.safe_dump(json.loads(df.to_json(orient="records")), sort_keys=False)
    if fmt == "markdown":
        from calc.report import markdown_table

        return markdown_table(df)
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_colwidth", 70):
        return df.to_string(index=False)


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="python -m calc",
        description="Feedrate: data-loading requirements of a training job.",
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("command", nargs="?", default="plan", help="a command, or a scenario name for its plan")
    ap.add_argument("target", nargs="?", help="scenario name (or what to list; or a PATH)")
    ap.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override an input, e.g. --set gpus_per_job=8"
    )
    ap.add_argument("--format", choices=("table", "json", "yaml", "markdown"), default="table")
    ap.add_argument("--storage", help="max-gpus: a storage option")
    ap.add_argument("--units", type=float, help="max-gpus: units of that option")
    ap.add_argument("--bandwidth", help="max-gpus: read bandwidth, e.g. '100 GB/s'")
    ap.add_argument("--iops", help="max-gpus: reads per second")
    ap.add_argument("--axis", action="append", default=[], metavar="KEY=V1,V2", help="sweep: an axis")
    ap.add_argument("--request-size", default="64 KiB", help="measure-storage: bytes per read")
    ap.add_argument("--concurrency", type=int, default=8, help="measure-storage: reads in flight")
    ap.add_argument("--seconds", type=float, default=5.0, help="measure-storage: duration")
    ap.add_argument("--write-preset", metavar="FILE", help="measure-storage: write a storage preset YAML here")
    ap.add_argument("--job", action="append", default=[], metavar="PRESET:COUNT", help="cluster: add a job type")
    return ap


def run(argv: Sequence[str]) -> str:
    """Execute a command line and return what it prints."""
    import calc
    from calc import sizing

    args = _parser().parse_args(list(argv))
    command, target = args.command, args.target
    if command not in COMMANDS:  # `python -m calc NAME`
        command, target = "plan", command
    sets = _sets(args.set)

    def sc() -> calc.Scenario:
        return calc.Scenario.from_params(sets, calc.scenario(target or DEFAULT_SCENARIO), "--set")

    if command == "list":
        what = target or "scenarios"
        tables = {
            "scenarios": lambda: pd.DataFrame(
                [{"scenario": n, "description": calc.scenario(n).description} for n in calc.scenarios()]
            ),
            "gpus": lambda: pd.DataFrame(
                [
                    {
                        "gpu": g.name,
                        "memory": calc.fmt(g.memory_bytes, "bytes", binary=True),
                        "peaks": ", ".join(f"{k} {calc.fmt(v, 'flops_per_s')}" for k, v in g.peak_flops_per_s.items()),
                        "host link": g.host_link,
                    }
                    for g in calc.gpus().values()
                ]
            ),
            "models": lambda: pd.DataFrame(
                [
                    {
                        "model": m.name,
                        "params": f"{m.params / 1e6:,.1f} M",
                        "forward": calc.fmt(m.forward_flops, "flops"),
                        "example": calc.fmt(m.example_bytes, "bytes"),
                    }
                    for m in calc.models().values()
                ]
            ),
            "storage": lambda: pd.DataFrame(
                [{"storage": o.name, "label": o.label, "unit": o.unit} for o in calc.storage_options().values()]
            ),
        }
        if what not in tables:
            raise InputError("list", f"unknown {what!r}; accepted: {', '.join(tables)}")
        return _table(tables[what](), args.format)
    if command == "plan":
        p = calc.plan(sc())
        if args.format == "table":
            from calc.sizing import answer

            t = p.to_frame()[["label", "display"]]
            head = f"{p.title}\n{p.scenario.description}\n\n" + "\n".join(answer(p).lines())
            head += f"\n\nstep time from {p.step_method}; bottleneck: {p.bottleneck}\n"
            body = "\n".join(f"{label:<48} {shown}" for label, shown in t.itertuples(index=False))
            return head + body + "".join(f"\nwarning: {w}" for w in p.warnings)
        if args.format == "markdown":
            from calc.report import markdown_report

            return markdown_report(p)
        data = p.to_dict()
        return json.dumps(data, indent=1) if args.format == "json" else yaml.safe_dump(data, sort_keys=False)
    if command == "explain":
        return calc.plan(sc()).explain()
    if command == "cluster":
        from calc.cluster import command_output, from_command_line

        return command_output(from_command_line(target, args.job, sets), args.format)
    if command == "designs":
        from calc.report import designs_table

        d = sizing.answer(sc()).designs
        if not d:
            return "No complete design: no priced option serves this job (python -m calc recommend says why)."
        if args.format == "table":
            return designs_table(d).to_string(index=False)
        # Markdown is read by people: the human table (no nan or inf); json/yaml write null for them.
        return _table(designs_table(d) if args.format == "markdown" else pd.DataFrame(list(d)), args.format)
    if command == "recommend":
        df = sizing.recommend(sc())
        if args.format == "table":
            df = df.assign(units=df["units"].astype(str) + " " + df["unit"], monthly_usd=df["monthly_usd"].round(0))[
                [
                    "option",
                    "feasible",
                    "ready",
                    "units",
                    "limiting",
                    "iops_headroom",
                    "bandwidth_headroom",
                    "monthly_usd",
                    "why_not",
                ]
            ]
            df["iops_headroom"] = df["iops_headroom"].round(2)
            df["bandwidth_headroom"] = df["bandwidth_headroom"].round(2)
            lev = sizing.storage_levers(sc())
            return _table(df, args.format) + "\n\nStorage levers (each alone):\n" + _table(lev, args.format)
        return _table(df, args.format)
    if command == "levers":
        return _table(sizing.levers(sc()).round(4), args.format)
    if command == "max-gpus":
        n = sizing.max_gpus(
            sc(), storage=args.storage, units=args.units, read_bytes_per_s=args.bandwidth, read_iops=args.iops
        )
        return f"{n} GPUs of {target or DEFAULT_SCENARIO} at {sc().target_gpu_utilization:.0%} utilisation"
    if command == "sweep":
        axes = {}
        for a in args.axis:
            if "=" not in a:
                raise InputError("--axis", f"expected key=v1,v2, got {a!r}")
            k, vals = a.split("=", 1)
            axes[k.strip()] = [v.strip() for v in vals.split(",")]
        df = calc.sweep(sc(), **axes)
        cols = [
            *axes,
            "batch_size",
            "step_time_s",
            "samples_per_s",
            "read_iops",
            "read_bytes_per_s",
            "gpu_utilization",
            "bottleneck",
        ]
        return _table(df[cols], args.format)
    if command == "calibration":
        from calc.calibrate import calibration, per_gpu, summary, validation

        t = calibration()
        s = summary(t)
        cols = ["model", "gpu", "precision", "batch_size", "stack", "measured_samples_per_s"]
        shown = t[[*cols, "predicted_samples_per_s", "error", "logo_predicted_samples_per_s", "logo_error"]].round(3)
        text = (
            _table(shown, args.format)
            + "\n\nLeave-one-GPU-out error per GPU:\n"
            + _table(per_gpu(t).round(3), args.format)
        )
        text += (
            f"\n\ngeometric-mean error: {s['logo_geomean_error'] * 100:.1f} % leave-one-GPU-out "
            f"({s['in_sample_geomean_error'] * 100:.1f} % in-sample) over {s['rows']:.0f} rows on {s['gpus']:.0f} GPUs"
        )
        v = validation()
        if len(v):
            from calc.calibrate import geomean_error

            err = geomean_error(v["predicted_samples_per_s"], v["measured_samples_per_s"])
            text += f"; held-out validation.yaml: {err * 100:.1f} % over {len(v)} rows never fitted"
        return text
    if command == "measure-storage":
        from calc.measure import storage as measure_storage
        from calc.measure import write_storage_preset

        if not target:
            raise InputError("PATH", "give a directory of files to read")
        r = measure_storage(
            target, request_size=args.request_size, concurrency=args.concurrency, seconds=args.seconds, progress=True
        )
        if args.write_preset:
            write_storage_preset(r, args.write_preset)
        return json.dumps(r.to_dict(), indent=1)
    raise InputError("command", f"unknown command; accepted: {', '.join(COMMANDS)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: print the result, or one error line and return 2."""
    try:
        print(run(sys.argv[1:] if argv is None else argv))
    except (InputError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
