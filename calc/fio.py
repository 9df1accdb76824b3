"""An fio job file that checks a candidate store against a plan's design point: ``calc.fio_job``.

Storage engineers prove a system with fio before they sign; this writes the job from the plan's
own figures, so the test is the job's and not a generic one:

- **random reads** at the plan's read size (``request_bytes``) with the reads it needs in flight
  (``outstanding_reads``, Little's law: reads/s x the store's read time), for one node (its share of
  the reads) and, with several nodes, for all of them (one fio process per node, each with a node's
  reads in flight);
- **the checkpoint save burst** where the plan saves: sequential writes in 16 MiB parts
  (``calc.storage.WRITE_REQUEST_BYTES``), one writer per rank that writes, per node and for all
  nodes, at ``checkpoint_save_burst_bytes_per_s``.

Each job carries a comment with the rate that passes. Jobs run one after another (``stonewall``),
each its own reporting group. Run it with ``fio --output-format=json --output=result.json JOB``
and read the result back with ``calc.measure.fio("result.json")``: its ``as_inputs()`` go into
``calc.plan(..., **m.as_inputs())``, whose answer says whether the tested system serves the job.

References
----------
fio documentation (fio.readthedocs.io, "Job file format", "Job file parameters": rw, bs, iodepth,
numjobs, size, runtime, time_based, direct, ioengine, group_reporting, stonewall, description),
fio 3.33 as Debian ships it. docs/model.md 7.8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calc import storage
from calc.answers import Answer
from calc.errors import InputError
from calc.plan import Plan
from calc.units import fmt, parse

IOENGINES = ("libaio", "io_uring", "psync", "posixaio")
"""fio I/O engines offered: the asynchronous Linux engines keep ``iodepth`` reads in flight per
process; ``psync`` and ``posixaio`` are the portable ones (psync keeps one: use numjobs instead)."""


@dataclass(frozen=True)
class Check:
    """One fio job: what it runs, and the rate at which the store passes it."""

    name: str
    rw: str
    block_bytes: int
    iodepth: int
    numjobs: int
    pass_iops: float
    """Operations a second the job must reach [1/s] (reads or writes of ``block_bytes``)."""
    pass_bytes_per_s: float
    """Bytes a second the job must reach [bytes/s]."""
    why: str
    """What the job emulates, in the plan's words and numbers."""


def in_flight(outstanding: float) -> int:
    """Whole reads to keep in flight for ``outstanding`` (Little's law) [1]: rounded up, at least 1."""
    return max(1, math.ceil(outstanding - 1e-9))


def node_share(p: Plan) -> float:
    """The busiest node's share of the plan's reads [1]: its storage traffic over all nodes' (1 when
    nothing is read)."""
    total = float(p.values["read_bytes_per_s"])
    return float(p.values["node_read_bytes_per_s"]) / total if total > 0 else 1.0


def read_checks(p: Plan) -> list[Check]:
    """Random reads at the plan's read size: one node's share, and all nodes' when there are several."""
    v = p.values
    iops = float(v["read_iops"])
    if iops <= 0:
        return []
    req, nodes, share = int(v["request_bytes"]), int(v["clients"]), node_share(p)
    depth = in_flight(float(v["outstanding_reads"]) * share)
    latency = fmt(float(v["storage_latency_s"]), "seconds")
    out = [
        Check(
            "reads-per-node",
            "randread",
            req,
            depth,
            1,
            iops * share,
            float(v["node_read_bytes_per_s"]),
            f"one node's random reads of {fmt(req, 'bytes', binary=True)} (the plan's read size), "
            f"{depth} in flight (Little's law: {fmt(iops * share, 'count_per_s', 'reads/s')} x {latency} a read)",
        )
    ]
    if nodes > 1:
        out.append(
            Check(
                "reads-all-nodes",
                "randread",
                req,
                depth,
                nodes,
                iops,
                float(v["read_bytes_per_s"]),
                f"all {nodes} nodes' random reads from this host, one process per node with {depth} in flight; "
                "a host whose link carries less cannot pass it: run reads-per-node on every node at once "
                "(fio --client) and add the results",
            )
        )
    return out


def write_checks(p: Plan) -> list[Check]:
    """The checkpoint save burst: sequential writes in 16 MiB parts, one writer per writing rank."""
    v = p.values
    burst = float(v["checkpoint_save_burst_bytes_per_s"])
    if burst <= 0:
        return []
    nodes = int(v["clients"])
    writers = max(1, math.ceil(float(v["checkpoint_writing_ranks"]) * p.scenario.jobs / nodes - 1e-9))
    part = storage.WRITE_REQUEST_BYTES
    node = float(v["checkpoint_save_burst_node_bytes_per_s"])
    mode = "asynchronous drain" if p.inputs["checkpoint_async"] > 0 else "blocking save"
    out = [
        Check(
            "checkpoint-write-per-node",
            "write",
            part,
            1,
            writers,
            node / part,
            node,
            f"one node's checkpoint save burst ({mode}): {writers} rank(s) each writing its shard "
            f"({fmt(float(v['checkpoint_rank_bytes']), 'bytes', binary=True)}) in 16 MiB parts",
        )
    ]
    if nodes > 1:
        out.append(
            Check(
                "checkpoint-write-all-nodes",
                "write",
                part,
                1,
                writers * nodes,
                burst / part,
                burst,
                f"all {nodes} nodes' save burst from this host ({writers * nodes} writers); run "
                "checkpoint-write-per-node on every node at once where one host's link cannot carry it",
            )
        )
    return out


def checks(source: Plan | Answer) -> list[Check]:
    """Every job of the plan's fio file, reads first."""
    p = source if isinstance(source, Plan) else source.plan
    return read_checks(p) + write_checks(p)


def _plan_of(source: Plan | Answer) -> tuple[Plan, list[str]]:
    """The plan, and for an answer the lines that say which tier each job is for."""
    if isinstance(source, Plan):
        return source, []
    d = source.design
    if d is None:
        return source.plan, ["The answer buys nothing that serves this job: the jobs check the plan's own need."]
    lines = [f"The answer buys: {d['description']}."]
    if d.get("local"):
        lines.append(
            f"Run the read jobs on one node's local drives ({d['local']}), "
            f"the checkpoint jobs on the store ({d['store']})."
        )
    return source.plan, lines


def _whole(value: str | float, kind: str, field: str, least: float) -> int:
    x = parse(value, "bytes" if kind == "bytes" else "seconds", field)
    if not (math.isfinite(x) and x >= least):
        unit = "B" if kind == "bytes" else "s"
        raise InputError(field, f"{value!r}; accepted: at least {least:g} {unit}")
    return math.ceil(x)


def fio_job(
    source: Plan | Answer,
    *,
    directory: str,
    size: str | float = "10 GiB",
    runtime_s: str | float = 60,
    ioengine: str = "libaio",
    direct: bool = True,
) -> str:
    """The fio job file that checks a store against the plan's design point (module docstring).

    ``directory`` is a folder on the candidate store (fio lays out one file of ``size`` per process
    there); ``runtime_s`` each job's duration; ``direct`` bypasses the page cache (O_DIRECT), as a
    store's own rate needs. An answer's design names the tier each job is for.
    """
    p, answer_lines = _plan_of(source)
    if not isinstance(directory, str) or not directory.strip() or "\n" in directory:
        raise InputError("directory", f"{directory!r}; accepted: a folder on the store to test")
    if ioengine not in IOENGINES:
        raise InputError("ioengine", f"{ioengine!r}; accepted: {', '.join(IOENGINES)}")
    size_b = _whole(size, "bytes", "size", 4096)
    runtime = _whole(runtime_s, "seconds", "runtime_s", 1)
    jobs = checks(p)
    if not jobs:
        raise InputError(
            "plan",
            f"{p.scenario.name} reads nothing from its store in the steady state and saves no checkpoints: "
            "no fio job to write (the page cache serves every read after the first epoch)",
        )
    head = [
        f"# fio job: {p.title}",
        f"# Written by Feedrate (calc.fio_job) from the plan's design point, the {_design_point(p)}.",
        *(f"# {line}" for line in answer_lines),
        "# Run:  fio --output-format=json --output=result.json THIS_FILE",
        "# Then: calc.measure.fio('result.json').as_inputs() into calc.plan (python -m calc plan --fio-result).",
        "# Each job passes at the rate its comment gives; jobs run one after another (stonewall).",
        "",
        "[global]",
        f"directory={directory.strip()}",
        f"size={size_b}",
        f"runtime={runtime}",
        "time_based=1",
        f"ioengine={ioengine}",
        f"direct={int(bool(direct))}",
        "randrepeat=0",
        "group_reporting=1",
    ]
    return "\n".join(head + [line for c in jobs for line in _section(c)]) + "\n"


def _design_point(p: Plan) -> str:
    """The plan's design point in words: steady reads, or the save burst beside them."""
    if float(p.values["checkpoint_save_burst_bytes_per_s"]) > 0:
        return "steady reads and the checkpoint save burst"
    return "steady reads"


def _section(c: Check) -> list[str]:
    kind = "reads/s" if c.rw == "randread" else "writes/s"
    return [
        "",
        f"# {c.why}.",
        f"# Passes at >= {fmt(c.pass_iops, 'count_per_s', kind)} ({fmt(c.pass_bytes_per_s, 'bytes_per_s')}).",
        f"[{c.name}]",
        f"description=passes at >= {c.pass_iops:.6g} {kind}, {c.pass_bytes_per_s:.6g} B/s",
        f"rw={c.rw}",
        f"bs={c.block_bytes}",
        f"iodepth={c.iodepth}",
        f"numjobs={c.numjobs}",
        "stonewall",
    ]
