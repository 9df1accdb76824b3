"""Command line: ``python -m calc COMMAND ...``; ``python -m calc COMMAND --help`` explains each.

Every command takes ``--set key=value`` (any input, read as links read it) and ``--format``
(table, json, yaml, markdown, csv). ``python -m calc NAME`` is the plan of preset NAME. A
mistyped command is named back with the closest commands (never read as a scenario name). Bad
input prints one line naming the field (the command line's own flag where it has one) and exits
with status 2; a closed pipe (``| head``) ends quietly.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import pandas as pd
import yaml

from calc import answers, calibrate, catalog, dlio, fio, lever, measure, report, sizing
from calc.cluster import cluster_answer
from calc.cluster_input import Cluster, from_command_line
from calc.cluster_load import fmt_total
from calc.errors import InputError
from calc.explain import explained, formula, render_formula
from calc.hf_config import from_hf_config
from calc.plan import plan
from calc.report import cluster_markdown
from calc.scenario import BLANK_MODEL, FIELDS, Scenario, from_text, scenario, scenarios, unknown_input
from calc.storage import options as storage_options
from calc.sweep import OUTPUT_SUFFIX
from calc.units import Kind, fmt

DEFAULT_SCENARIO = "beast-imagenet-4xv100"
FORMATS = ("table", "json", "yaml", "markdown", "csv")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad command line in one line, exit status 2, like bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} ({self.prog} --help explains it)\n")


@dataclass(frozen=True)
class Command:
    """One subcommand: its help line, examples (shown by its ``--help``), options and handler."""

    help: str
    examples: tuple[str, ...]
    options: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], str]
    scenario: bool = True  # takes a SCENARIO positional


def _sets(pairs: Sequence[str]) -> dict[str, str]:
    """``--set key=value`` pairs as text, read later by Scenario.from_params (the one codec)."""
    out: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise InputError("--set", f"expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def _scenario(args: argparse.Namespace) -> Scenario:
    """The command's scenario with ``--set`` on top of its base (``base_scenario``)."""
    return Scenario.from_params(_sets(args.set), base_scenario(args.target, bool(args.set)), "--set")


def base_scenario(target: str | None, edited: bool) -> Scenario:
    """What a command line starts from: the preset named; a scenario YAML file (``.yaml``/``.yml``,
    or any file that exists); ``blank`` (a model by its own figures); with no name and no
    ``--set``, the article's example (DEFAULT_SCENARIO); with ``--set`` and no name, nothing (the
    inputs' defaults), so no preset's model, measured step or storage is kept unasked. A name that
    is none of these starts from nothing under that name when ``--set`` gives inputs and it is not
    close to a preset's name; else it is refused with the close names (a typo must not plan
    something else)."""
    if target is None:
        return scenario(DEFAULT_SCENARIO) if not edited else Scenario(description=FROM_NOTHING)
    if target.lower().endswith((".yaml", ".yml")) or os.path.isfile(target):
        try:
            with open(target, encoding="utf-8") as f:
                return Scenario.from_yaml(f.read(), source=target)
        except OSError as e:
            why = f"cannot read {target!r} ({e.strerror}); accepted: a scenario YAML file"
            raise InputError("scenario", why) from None
    if target.lower() == BLANK_MODEL:
        return Scenario(name=BLANK_MODEL, model=BLANK_MODEL, description=FROM_NOTHING)
    names = [s.lower() for s in scenarios()]
    if not edited or target.lower() in names or difflib.get_close_matches(target.lower(), names, n=1, cutoff=0.6):
        return _preset_or_refuse(target)
    return Scenario(name=target, description=f"{target} is no preset: {FROM_NOTHING}")


def _preset_or_refuse(target: str) -> Scenario:
    """The preset named, or one error naming the close presets and every accepted form."""
    try:
        return scenario(target)
    except InputError as e:
        raise InputError(
            e.field,
            f"{e.message}; accepted: a preset (python -m calc list scenarios), a scenario YAML file, blank (a model "
            "by its own figures), or a new name with --set inputs (started from the inputs' defaults)",
        ) from None


FROM_NOTHING = "started from the inputs' defaults (no preset named; python -m calc list scenarios names them)"
"""The description of a scenario the command line started from nothing."""


def table(df: pd.DataFrame, form: str) -> str:
    """A table in the output format asked for (csv, json and yaml keep base units; a number that
    does not apply is empty in csv, null in json and yaml, "n/a" in a table or markdown, never NaN)."""
    if form == "csv":
        return df.to_csv(index=False).rstrip("\n")
    if form == "json":
        return df.to_json(orient="records", indent=1)
    if form == "yaml":
        return yaml.safe_dump(json.loads(df.to_json(orient="records")), sort_keys=False)
    shown = df.astype(object).map(_shown)
    if form == "markdown":
        return report.markdown_table(shown)
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_colwidth", 70):
        return shown.to_string(index=False)


def _shown(v: Any) -> Any:
    """A cell as people read it: "n/a" for a number that does not apply, "unlimited" for infinity."""
    if isinstance(v, (float, np.floating)) and not math.isfinite(v):
        return "n/a" if math.isnan(v) else "unlimited" if v > 0 else "-unlimited"
    return v


def records(data: Any, form: str) -> str:
    """Data that is not one table (a count, a mapping, lists of rows) in the format asked for:
    json (strict: no NaN), yaml, or, for table, markdown and csv, ``key: value`` lines."""
    if form == "json":
        return json.dumps(json_safe(data, finite=True), indent=1, allow_nan=False)
    if form == "yaml":
        return yaml.safe_dump(json_safe(data, finite=True), sort_keys=False)
    if form == "csv":
        return pd.DataFrame([json_safe(data, finite=True)]).to_csv(index=False).rstrip("\n")
    rows = [(k, _shown(v)) for k, v in json_safe(data).items()]
    if form == "markdown":
        return report.markdown_table(pd.DataFrame(rows, columns=["", "value"]))
    return "\n".join(f"{k}: {v}" for k, v in rows)


# ---------------------------------------------------------------- list


def _list_frames() -> dict[str, Callable[[], pd.DataFrame]]:
    """What ``list`` shows: each a table built when asked."""
    return {
        "scenarios": lambda: pd.DataFrame(
            [{"scenario": n, "description": scenario(n).description} for n in scenarios()]
        ),
        "gpus": lambda: pd.DataFrame(
            [
                {
                    "gpu": g.name,
                    "memory": fmt(g.memory_bytes, "bytes", binary=True),
                    "peaks": ", ".join(f"{k} {fmt(v, 'flops_per_s')}" for k, v in g.peak_flops_per_s.items()),
                    "host link": g.host_link,
                }
                for g in catalog.gpus().values()
            ]
        ),
        "models": lambda: pd.DataFrame(
            [
                {
                    "model": m.name,
                    "params": f"{m.params / 1e6:,.1f} M",
                    "forward": fmt(m.forward_flops, "flops"),
                    "example": fmt(m.example_bytes, "bytes"),
                }
                for m in catalog.models().values()
            ]
        ),
        "storage": lambda: pd.DataFrame(
            [{"storage": o.name, "label": o.label, "unit": o.unit, "site": o.site} for o in storage_options().values()]
        ),
        "servers": lambda: pd.DataFrame(
            [
                {
                    "server": s.name,
                    "gpus": f"{s.gpus_per_node} x {s.gpu}",
                    "cpu cores": _published(s.cpu_cores, "count"),
                    "ram": _published(s.ram_bytes, "bytes"),
                    "storage link": _published(s.storage_network_bytes_per_s, "bytes_per_s"),
                    "site": s.site,
                }
                for s in catalog.servers().values()
            ]
        ),
        "fields": lambda: pd.DataFrame(
            [
                {"field": k, "group": f.group, "label": f.label, "default": "" if v is None else str(v)}
                for (k, f), v in zip(FIELDS.items(), Scenario().to_dict().values(), strict=True)
            ]
        ),
    }


def _published(value: float, kind: Kind) -> str:
    """A server figure with its unit, or "not published" (NaN in servers.yaml)."""
    if not math.isfinite(value):
        return "not published"
    return fmt(value, kind, binary=kind == "bytes") if kind != "count" else f"{value:,.0f}"


def _list(args: argparse.Namespace) -> str:
    frames = _list_frames()
    what = (args.target or "scenarios").lower()
    if what not in frames:
        raise InputError("list", f"unknown {what!r}{_did_you_mean(what, frames)}; accepted: {', '.join(frames)}")
    return table(frames[what](), args.format)


# ---------------------------------------------------------------- plan and the sizing commands


def _job_scenario(args: argparse.Namespace) -> Scenario:
    """The scenario of ``plan`` and ``export``: a preset, or a Hugging Face config (``--hf-config``),
    with ``--set``; on ``plan``, a store measured by fio or DLIO (``--fio-result``, ``--dlio-summary``)."""
    if getattr(args, "hf_config", None):
        if args.target:
            raise InputError("--hf-config", f"give a scenario ({args.target}) or --hf-config, not both")
        # --set goes in with the config: a sequence length given changes the tensors and files it implies.
        sets = _sets(args.set)
        for name in sets:
            if name not in FIELDS:
                raise InputError(f"--set: {name}", unknown_input(name))
        sc = from_hf_config(args.hf_config, **{k: from_text(k, v) for k, v in sets.items()})
    else:
        sc = _scenario(args)
    for flag, read in (("fio_result", measure.fio), ("dlio_summary", measure.dlio)):
        path = getattr(args, flag, None)
        if path:
            m = read(path)
            sc = sc.replace(**m.as_inputs(), description=f"{sc.description}; store measured: {m}")
    return sc


def _plan(args: argparse.Namespace) -> str:
    p = plan(_job_scenario(args))
    if args.format == "table":
        t = p.to_frame()[["label", "display"]]
        head = f"{p.title}\n{p.scenario.description}\n\n" + "\n".join(answers.job_answer(p).lines())
        head += f"\n\nstep time from {p.step_method}; bottleneck: {p.bottleneck}\n"
        body = "\n".join(f"{label:<48} {shown}" for label, shown in t.itertuples(index=False))
        return head + body + "".join(f"\nwarning: {w}" for w in p.warnings)
    if args.format == "markdown":
        return report.markdown_report(p)
    if args.format == "csv":
        return p.to_frame().reset_index().to_csv(index=False).rstrip("\n")
    data = p.to_dict()
    return json.dumps(data, indent=1) if args.format == "json" else yaml.safe_dump(data, sort_keys=False)


def _explain(args: argparse.Namespace) -> str:
    p = plan(_scenario(args))
    if args.format == "table":
        return p.explain()
    rows = []
    for name in explained(p):
        symbolic, numeric = render_formula(p, formula(p, name))
        rows.append({"output": name, "formula": symbolic, "numbers": numeric, "value": p.values[name]})
        rows[-1]["shown"] = p.formatted(name)
    return table(pd.DataFrame(rows), args.format)


def _designs(args: argparse.Namespace) -> str:
    d = answers.job_answer(_scenario(args)).designs
    if not d:
        return "No complete design: no priced option serves this job (python -m calc recommend says why)."
    if args.format == "table":
        return report.designs_table(d).to_string(index=False)
    # Markdown is read by people: the human table (no nan or inf); the others keep the numbers.
    return table(report.designs_table(d) if args.format == "markdown" else pd.DataFrame(list(d)), args.format)


def _recommend(args: argparse.Namespace) -> str:
    sc = _scenario(args)
    df = sizing.recommend(sc)
    if args.format != "table":
        return table(df, args.format)
    shown = df.assign(
        units=df["units"].astype(str) + " " + df["unit"],
        monthly_usd=df["monthly_usd"].round(0),
        iops_headroom=df["iops_headroom"].round(2),
        bandwidth_headroom=df["bandwidth_headroom"].round(2),
    )
    cols = ["option", "feasible", "ready", "units", "limiting", "iops_headroom", "bandwidth_headroom"]
    levers = lever.storage_levers(sc)
    return (
        table(shown[[*cols, "monthly_usd", "why_not"]], "table")
        + "\n\nStorage levers (each alone):\n"
        + table(levers, "table")
    )


def _levers(args: argparse.Namespace) -> str:
    return table(lever.levers(_scenario(args)).round(4), args.format)


MAX_GPUS_FLAGS = {"storage": "--storage", "units": "--units", "read_bytes_per_s": "--read-bytes-per-s"}
MAX_GPUS_FLAGS["read_iops"] = "--read-iops"
"""max_gpus' Python arguments and the command line's flags for them (errors name the flag)."""


def _max_gpus(args: argparse.Namespace) -> str:
    sc = _scenario(args)
    try:
        n = sizing.max_gpus(
            sc,
            storage=args.storage,
            units=args.units,
            read_bytes_per_s=args.read_bytes_per_s,
            read_iops=args.read_iops,
        )
    except InputError as e:
        message = e.message
        for name, flag in MAX_GPUS_FLAGS.items():
            message = message.replace(f"{name}=", f"{flag} ")
            if "_" in name:
                message = message.replace(name, flag)
        raise InputError(MAX_GPUS_FLAGS.get(e.field, e.field), message) from None
    if args.format != "table":
        data = {"gpus": int(n), "scenario": sc.name, "target_gpu_utilization": sc.target_gpu_utilization}
        return records(data | {"why": n.why}, args.format)
    return f"{n} GPUs of {sc.name} at {sc.target_gpu_utilization:.0%} utilisation; {n.why}"


def _sweep(args: argparse.Namespace) -> str:
    axes = {}
    for a in args.axis:
        if "=" not in a:
            raise InputError("--axis", f"expected key=v1,v2, got {a!r}")
        k, vals = a.split("=", 1)
        axes[k.strip()] = [v.strip() for v in vals.split(",")]
    df = sizing.sweep(_scenario(args), cost=args.cost, **axes)
    outputs = ["batch_size", "step_time_s", "samples_per_s", "read_iops", "read_bytes_per_s", "gpu_utilization"]
    outputs = [f"{k}{OUTPUT_SUFFIX}" if k in axes else k for k in outputs]
    costs = ["storage", "storage_usd_per_month", "gpu_usd_per_month"] if args.cost else []
    return table(df[[*axes, *outputs, "bottleneck", *costs]], args.format)


def _calibration(args: argparse.Namespace) -> str:
    t = calibrate.calibration()
    s = calibrate.summary(t)
    cols = ["model", "gpu", "precision", "batch_size", "stack", "measured_samples_per_s"]
    shown = t[[*cols, "predicted_samples_per_s", "error", "logo_predicted_samples_per_s", "logo_error"]].round(3)
    if args.format == "csv":
        return table(shown, "csv")
    if args.format in ("json", "yaml"):
        data = {"rows": shown.to_dict("records"), "per_gpu": calibrate.per_gpu(t).round(3).to_dict("records")}
        return records(data | {"summary": dict(s)}, args.format)
    text = (
        table(shown, args.format)
        + "\n\nLeave-one-GPU-out error per GPU:\n"
        + table(calibrate.per_gpu(t).round(3), args.format)
    )
    text += (
        f"\n\ngeometric-mean error: {s['logo_geomean_error'] * 100:.1f} % leave-one-GPU-out "
        f"({s['in_sample_geomean_error'] * 100:.1f} % in-sample) over {s['rows']:.0f} rows on {s['gpus']:.0f} GPUs"
    )
    v = calibrate.validation()
    if len(v):
        err = calibrate.geomean_error(v["predicted_samples_per_s"], v["measured_samples_per_s"])
        text += f"; held-out validation.yaml: {err * 100:.1f} % over {len(v)} rows never fitted"
    return text


def _measure_storage(args: argparse.Namespace) -> str:
    if not args.target:
        raise InputError("PATH", "give a directory of files to read")
    r = measure.storage(
        args.target, request_size=args.request_size, concurrency=args.concurrency, seconds=args.seconds, progress=True
    )
    if args.write_preset:
        measure.write_storage_preset(r, args.write_preset, site=args.site)
    return str(r) if args.format == "table" else records(r.to_dict(), args.format)


def _export(args: argparse.Namespace) -> str:
    """``export fio|dlio``: the job that checks a candidate store, in the format asked for."""
    p = plan(_job_scenario(args))
    if args.what == "fio":
        if not args.directory:
            raise InputError("--directory", "give a folder on the store to test (fio lays out its files there)")
        text = fio.fio_job(
            answers.job_answer(p),
            directory=args.directory,
            size=args.size,
            runtime_s=args.runtime,
            ioengine=args.ioengine,
            direct=not args.buffered,
        )
        rows = pd.DataFrame([vars(c) for c in fio.checks(p)])
    else:
        text = dlio.dlio_workload(p, data_folder=args.data_folder, format=args.dlio_format, epochs=args.epochs)
        rows = pd.json_normalize(yaml.safe_load(text), sep=".").T.reset_index()
        rows.columns = ["key", "value"]
    if args.format in ("json", "yaml"):
        data = {"format": args.what, "text": text, "rows": json.loads(rows.to_json(orient="records"))}
        return json.dumps(data, indent=1) if args.format == "json" else yaml.safe_dump(data, sort_keys=False)
    if args.format == "csv":
        return table(rows, "csv")
    if args.format == "markdown":
        return f"```{'ini' if args.what == 'fio' else 'yaml'}\n{text}```"
    return text.rstrip("\n")


def job_text(spec: str) -> str:
    """``preset:count:key=value,key=value`` (per-job overrides) as the cluster's ``preset:count|key=value``."""
    head, _, changes = spec.partition(":")
    count, sep2, pairs = changes.partition(":")
    if not sep2:
        return spec
    return "|".join([f"{head}:{count}", *(p for p in pairs.split(",") if p.strip())])


def _cluster(args: argparse.Namespace) -> str:
    c = from_command_line(args.target, [job_text(j) for j in args.job], _sets(args.set))
    if args.format == "csv":
        return table(cluster_answer(c).jobs, "csv")
    return command_output(c, args.format)


def command_output(c: Cluster, form: str) -> str:
    """The CLI's text: table (answer, per-job rows, totals), json, yaml or markdown (the report)."""
    a = cluster_answer(c)
    if form == "markdown":
        return cluster_markdown(a)
    if form == "table":
        # The report's table and its note, so the CLI and the meeting's report read alike.
        shown = report.cluster_jobs_table(a).to_string(index=False)
        note = report.cluster_jobs_note(a)
        body = "\n".join(a.lines())
        totals = "\n".join(f"{k:<32} {fmt_total(k, v)}" for k, v in a.plan.totals().items())
        return f"{a.plan.title}\n{c.description}\n\n{body}\n\n{shown}" + (f"\n{note}" if note else "") + f"\n\n{totals}"
    jobs = a.plan.to_frame().merge(a.jobs.drop(columns=["count", "gpus", "gpu_utilization_alone"]), on="job")
    data = {
        "cluster": c.to_dict(),
        "totals": a.plan.totals(),
        "answer": a.lines(),
        "best": {k: a.best[k] for k in ("option", "units", "unit", "monthly_total_usd")} if a.best else None,
        "growth": {k: v for k, v in a.growth.items() if k != "months"},
        "jobs": [{k: _plain(v) for k, v in r.items()} for r in jobs.to_dict("records")],
    }
    if form == "json":
        return json.dumps(json_safe(data, finite=True), indent=1, allow_nan=False)
    return yaml.safe_dump(json_safe(data), sort_keys=False)


def _plain(v: Any) -> Any:
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    return v


def json_safe(data: Any, *, finite: bool = False) -> Any:
    """Plain Python data for yaml.safe_dump and json.dumps (NumPy scalars become numbers).

    ``finite``: for JSON, which has no NaN or infinity, a number that is not applicable (NaN:
    a cost with no price) becomes ``null`` and an unlimited one (infinity) the string ``"inf"``
    (``"-inf"``), so strict JSON readers accept the output.
    """
    if isinstance(data, Mapping):
        return {str(k): json_safe(v, finite=finite) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [json_safe(v, finite=finite) for v in data]
    v = _plain(data)
    if finite and isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


# ---------------------------------------------------------------- options of each command


def _no_options(ap: argparse.ArgumentParser) -> None:
    del ap


def _max_gpus_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--storage", help="a storage option (python -m calc list storage), or your own YAML file")
    ap.add_argument("--units", type=float, help="units of that option (default: as many as needed)")
    ap.add_argument(
        "--read-bytes-per-s",
        "--bandwidth",
        dest="read_bytes_per_s",
        help="read bandwidth, e.g. '100 GB/s' (Python: read_bytes_per_s; --bandwidth is an alias)",
    )
    ap.add_argument("--read-iops", "--iops", dest="read_iops", help="reads per second (Python: read_iops)")


def _sweep_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--axis", action="append", default=[], metavar="KEY=V1,V2", help="an axis (repeat for a grid)")
    ap.add_argument("--cost", action="store_true", help="add each row's cheapest storage and its GPUs' month [USD]")


def _measure_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--request-size", default="64 KiB", help="bytes per read (default 64 KiB)")
    ap.add_argument("--concurrency", type=int, default=8, help="reads in flight (default 8)")
    ap.add_argument("--seconds", type=float, default=5.0, help="duration (default 5 s)")
    ap.add_argument("--write-preset", metavar="FILE", help="write a storage option YAML (then: storage=FILE)")
    ap.add_argument("--site", default="on-prem", help="where the measured storage is (default on-prem)")


def _plan_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--hf-config", metavar="PATH", help="a Hugging Face config.json (or its folder) as the model")
    ap.add_argument("--fio-result", metavar="FILE", help="the store as fio measured it (fio --output-format=json)")
    ap.add_argument("--dlio-summary", metavar="FILE", help="the store as DLIO measured it (its summary.json)")


def _export_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("what", choices=("fio", "dlio"), help="fio: a job file; dlio: a DLIO workload YAML")
    ap.add_argument("target", nargs="?", help="a scenario preset")
    ap.add_argument("--hf-config", metavar="PATH", help="a Hugging Face config.json (or its folder) as the model")
    ap.add_argument("--directory", help="fio: a folder on the store to test")
    ap.add_argument("--size", default="10 GiB", help="fio: the file each fio process lays out (default 10 GiB)")
    ap.add_argument("--runtime", default="60 s", help="fio: each job's duration (default 60 s)")
    ap.add_argument("--ioengine", default="libaio", help=f"fio: one of {', '.join(fio.IOENGINES)} (default libaio)")
    ap.add_argument("--buffered", action="store_true", help="fio: through the page cache (default: O_DIRECT)")
    ap.add_argument("--data-folder", help="dlio: where DLIO writes and reads the files (default data/SCENARIO)")
    ap.add_argument("--dlio-format", help=f"dlio: {', '.join(dlio.FORMATS)} (default: as the plan reads)")
    ap.add_argument("--epochs", type=int, default=dlio.EPOCHS, help=f"dlio: epochs (default {dlio.EPOCHS})")


def _cluster_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--job",
        action="append",
        default=[],
        metavar="PRESET:COUNT[:KEY=VALUE,...]",
        help="add a job type, with its own inputs after a second colon",
    )


COMMANDS: dict[str, Command] = {
    "plan": Command(
        "the plan of a scenario, with the answer on top (the default command)",
        (
            "python -m calc plan beast-nfs-shop --set jobs=10",
            "python -m calc beast-nfs-shop --format json",
            "python -m calc plan --hf-config Llama-2-7b-hf/config.json --set gpu=H100-SXM --set gpus_per_job=8",
            "python -m calc plan beast-imagenet-4xv100 --fio-result result.json",
        ),
        _plan_options,
        _plan,
    ),
    "list": Command(
        "list presets: scenarios, gpus, models, storage, servers, or fields (every input)",
        ("python -m calc list servers", "python -m calc list fields --format csv"),
        _no_options,
        _list,
    ),
    "explain": Command(
        "every formula with its numbers and sources",
        ("python -m calc explain mlperf-unet3d-h100",),
        _no_options,
        _explain,
    ),
    "recommend": Command(
        "every storage option: units, limiting axis, headroom, monthly cost",
        ("python -m calc recommend beast-imagenet-4xv100 --set storage=mine.yaml",),
        _no_options,
        _recommend,
    ),
    "designs": Command(
        "complete designs (one tier, page cache, local drives + a store), cheapest first",
        ("python -m calc designs mlperf-unet3d-h100 --set gpus_per_job=64",),
        _no_options,
        _designs,
    ),
    "levers": Command(
        "what-if fixes ranked by GPU utilisation",
        ("python -m calc levers luna-unet3d-1080ti",),
        _no_options,
        _levers,
    ),
    "max-gpus": Command(
        "how many GPUs of this job a storage keeps fed",
        (
            'python -m calc max-gpus mlperf-unet3d-h100 --read-bytes-per-s "100 GB/s"',
            "python -m calc max-gpus mlperf-unet3d-h100 --storage nvme-gen4 --units 4",
        ),
        _max_gpus_options,
        _max_gpus,
    ),
    "sweep": Command(
        "a grid of scenarios, one row each",
        ("python -m calc sweep beast-small-files --axis jobs=5,10 --axis example_bytes=64KiB,500kB",),
        _sweep_options,
        _sweep,
    ),
    "calibration": Command(
        "predicted vs measured throughput, leave-one-GPU-out and held-out errors",
        ("python -m calc calibration --format csv",),
        _no_options,
        _calibration,
        scenario=False,
    ),
    "measure-storage": Command(
        "random-read IOPS, MB/s and latency of real files (never writes into PATH)",
        ("python -m calc measure-storage /data/imagenet --request-size 128KiB --write-preset mine.yaml",),
        _measure_options,
        _measure_storage,
    ),
    "export": Command(
        "the job that checks a candidate store: an fio job file or a DLIO workload",
        (
            "python -m calc export fio beast-imagenet-4xv100 --directory /mnt/candidate > job.fio",
            "python -m calc export dlio mlperf-unet3d-h100 > unet3d_feedrate.yaml",
        ),
        _export_options,
        _export,
        scenario=False,
    ),
    "cluster": Command(
        "many job types on one storage: what to buy, each job's share and utilisation",
        (
            "python -m calc cluster lab-168-gpus",
            "python -m calc cluster --job resnet50-8xh100-imagenet:3 --job llama3-8b-pretrain-8xh100:2:gpus_per_job=16",
        ),
        _cluster_options,
        _cluster,
    ),
}

_TARGET_HELP = {
    "list": "what to list: scenarios, gpus, models, storage, servers or fields",
    "measure-storage": "a directory of files to read",
    "cluster": "a cluster YAML file or preset (presets/clusters)",
}


def parser() -> argparse.ArgumentParser:
    """The command line: one subcommand each, with its own ``--help`` and examples."""
    ap = _Parser(
        prog="python -m calc",
        description="Feedrate: data-loading requirements of a training job.",
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, c in COMMANDS.items():
        p = sub.add_parser(
            name,
            help=c.help,
            description=c.help[0].upper() + c.help[1:] + ".",
            epilog="examples:\n  " + "\n  ".join(c.examples),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if c.scenario:
            p.add_argument("target", nargs="?", help=_TARGET_HELP.get(name, "a scenario preset"))
        p.add_argument(
            "--set", action="append", default=[], metavar="KEY=VALUE", help="an input, e.g. --set gpus_per_job=8"
        )
        p.add_argument("--format", choices=FORMATS, default="table", help="output format (default table)")
        c.options(p)
    return ap


def _did_you_mean(word: str, names: Sequence[str] | dict[str, Any]) -> str:
    close = difflib.get_close_matches(word.lower(), list(names), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def _argv(argv: Sequence[str]) -> list[str]:
    """Route ``python -m calc [NAME] [--options]`` to ``plan``; refuse a mistyped command."""
    args = list(argv)
    if not args or (args[0].startswith("-") and args[0] not in ("-h", "--help")):
        return ["plan", *args]
    first = args[0]
    if first in COMMANDS or first in ("-h", "--help"):
        return args
    if first.lower() in (s.lower() for s in scenarios()):
        return ["plan", *args]
    close = difflib.get_close_matches(first.lower(), list(COMMANDS), n=3, cutoff=0.6)
    if close:
        raise InputError(
            "command", f"unknown command {first!r} (did you mean {', '.join(close)}?); accepted: {', '.join(COMMANDS)}"
        )
    return ["plan", *args]  # a scenario name: plan() names it back with close matches


def _flags(ap: argparse.ArgumentParser, command: str) -> dict[str, str]:
    """A command's options by their Python name (``request_size``) -> the flag (``--request-size``)."""
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.option_strings[0] for a in sub.choices[command]._actions if a.option_strings}


def run(argv: Sequence[str]) -> str:
    """Execute a command line and return what it prints; an error names the command line's own
    flag (``--request-size``) where the Python argument it sets has another spelling."""
    ap = parser()
    args = ap.parse_args(_argv(argv))
    try:
        return COMMANDS[args.command].handler(args)
    except InputError as e:
        flag = _flags(ap, args.command).get(e.field)
        if flag is None or flag == e.field:
            raise
        raise type(e)(flag, e.message) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: print the result, or one error line and return 2; quiet on a closed pipe."""
    try:
        text = run(sys.argv[1:] if argv is None else argv)
    except (InputError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        print(text, flush=True)
    except BrokenPipeError:
        # The reader (head, less) closed the pipe: nothing more to say. Point stdout at
        # /dev/null so that the interpreter's own flush at exit does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0
