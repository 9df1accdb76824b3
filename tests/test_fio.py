"""calc.fio: the fio job file a plan writes, and a real fio run of it read back into the plan.

The run needs Debian's ``fio``; without it the run test skips and says so, unless
FEEDRATE_REQUIRE_FIO=1 (set by .ci/run, which installs it) makes it fail instead.
"""

from __future__ import annotations

import configparser
import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import calc
import calc.measure
from calc import fio
from calc.errors import InputError

BEAST = "beast-imagenet-4xv100"


def _sections(text: str) -> configparser.ConfigParser:
    """The job file as fio reads it: INI sections, '#' comments, keys without values allowed."""
    cp = configparser.ConfigParser(allow_no_value=True, comment_prefixes=("#", ";"), interpolation=None)
    cp.read_string(text)
    return cp


def test_in_flight_rounds_up_and_keeps_one() -> None:
    # Little's law: 5,885.06 reads/s x 1 ms = 5.885 reads in flight -> 6; exactly 6 stays 6; none -> 1.
    assert fio.in_flight(5.88506) == 6
    assert fio.in_flight(6.0) == 6
    assert fio.in_flight(6.000001) == 7
    assert fio.in_flight(0.0) == 1
    assert fio.in_flight(1.2) == 2


def test_beast_reads_64_kib_at_random() -> None:
    # The article's job: 4 x V100, batch 128 in 87 ms: 4 x 128 / 0.087 = 5,885.06 examples/s, one
    # 64 KiB file each (385,683,126 B/s); at the default 1 ms a read, 5.885 reads in flight -> 6.
    p = calc.plan(BEAST)
    text = fio.fio_job(p, directory="/mnt/candidate", size="1 GiB", runtime_s="30 s")
    cp = _sections(text)
    assert cp.sections() == ["global", "reads-per-node"]
    g, r = cp["global"], cp["reads-per-node"]
    assert (g["directory"], g["size"], g["runtime"], g["time_based"]) == ("/mnt/candidate", "1073741824", "30", "1")
    assert (g["ioengine"], g["direct"], g["group_reporting"]) == ("libaio", "1", "1")
    assert (r["rw"], r["bs"], r["iodepth"], r["numjobs"]) == ("randread", "65536", "6", "1")
    assert "stonewall" in r
    # The comment gives the rate that passes, in the plan's units.
    assert "# Passes at >= 5,885 reads/s (385.7 MB/s)." in text
    assert r["description"] == "passes at >= 5885.06 reads/s, 3.85683e+08 B/s"
    (c,) = fio.checks(p)
    assert c.pass_iops == pytest.approx(4 * 128 / 0.087, rel=1e-12)
    assert c.pass_bytes_per_s == pytest.approx(4 * 128 / 0.087 * 65536, rel=1e-12)


def test_two_nodes_read_and_save_per_node_and_all() -> None:
    # Llama 3 8B on 16 H100s = 2 nodes: each node reads half; 16 ranks save their shards, 8 a node,
    # each in 16 MiB parts; the save burst per node is half the job's.
    p = calc.plan("llama3-8b-pretrain-8xh100", gpus_per_job=16)
    v = p.values
    checks = {c.name: c for c in fio.checks(p)}
    assert list(checks) == [
        "reads-per-node",
        "reads-all-nodes",
        "checkpoint-write-per-node",
        "checkpoint-write-all-nodes",
    ]
    node, every = checks["reads-per-node"], checks["reads-all-nodes"]
    assert node.pass_iops == pytest.approx(v["read_iops"] / 2, rel=1e-12)
    assert every.pass_iops == pytest.approx(v["read_iops"], rel=1e-12) and every.numjobs == 2
    assert node.block_bytes == every.block_bytes == 256 * 1024 and node.iodepth == every.iodepth == 1
    w, wall = checks["checkpoint-write-per-node"], checks["checkpoint-write-all-nodes"]
    assert (w.rw, w.block_bytes, w.iodepth, w.numjobs, wall.numjobs) == ("write", 16 * 2**20, 1, 8, 16)
    assert w.pass_bytes_per_s == pytest.approx(v["checkpoint_save_burst_bytes_per_s"] / 2, rel=1e-12)
    assert wall.pass_bytes_per_s == pytest.approx(v["checkpoint_save_burst_bytes_per_s"], rel=1e-12)
    assert w.pass_iops == pytest.approx(w.pass_bytes_per_s / 2**24, rel=1e-12)
    text = fio.fio_job(p, directory="/mnt/x")
    assert "# Written by Feedrate (calc.fio_job) from the plan's design point, the steady reads and the " in text
    assert "checkpoint save burst.\n" in text
    assert w.why == (
        "one node's checkpoint save burst (asynchronous drain): 8 rank(s) each writing its shard (6.54 GiB) in "
        "16 MiB parts"
    )
    # One rank saving (the article's job, unsharded, every hour): one writer.
    (one,) = fio.write_checks(calc.plan(BEAST, checkpoint_interval_s="1 h"))
    assert (one.numjobs, one.iodepth, one.block_bytes) == (1, 1, 2**24)


def test_an_answer_names_the_tier_each_job_is_for() -> None:
    # On-prem, the article's job buys a local NVMe cache in front of HDDs: the reads are the cache's.
    a = calc.answer(BEAST, site="on-prem")
    text = fio.fio_job(a, directory="/mnt/x")
    assert "# The answer buys: 1 drive of nvme-gen4 per node" in text
    assert (
        "# Run the read jobs on one node's local drives (nvme-gen4), the checkpoint jobs on the store (hdd-7200)."
        in text
    )
    assert fio.checks(a) == fio.checks(a.plan)


def test_refusals_name_the_input() -> None:
    p = calc.plan(BEAST)
    for kw, field in (
        ({"directory": ""}, "directory"),
        ({"directory": "/a\nb"}, "directory"),
        ({"directory": "/x", "ioengine": "spdk"}, "ioengine"),
        ({"directory": "/x", "size": "1 KiB"}, "size"),
        ({"directory": "/x", "runtime_s": "0.5 s"}, "runtime_s"),
        ({"directory": "/x", "size": "lots"}, "size"),
    ):
        with pytest.raises(InputError) as e:
            fio.fio_job(p, **kw)  # type: ignore[arg-type]
        assert e.value.field == field
    # The page cache serves every read after the first epoch and nothing saves: nothing to check.
    cached = calc.plan(BEAST, page_cache=True, dataset_bytes="10 GB")
    with pytest.raises(InputError, match=r"plan: .*reads nothing from its store"):
        fio.fio_job(cached, directory="/x")


def _direct_io(folder: Path) -> bool:
    """Whether the folder's file system takes O_DIRECT (tmpfs refuses it)."""
    probe = folder / "probe"
    probe.write_bytes(b"\0" * 4096)
    try:
        fd = os.open(probe, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
    except OSError:
        return False
    os.close(fd)
    return hasattr(os, "O_DIRECT")


@pytest.fixture
def fio_binary() -> str:
    found = shutil.which("fio")
    if found is None:
        if os.environ.get("FEEDRATE_REQUIRE_FIO") == "1":
            pytest.fail("fio is required (FEEDRATE_REQUIRE_FIO=1) but not installed: apt-get install fio")
        pytest.skip("fio is not installed (apt-get install fio); .ci/run installs it and requires this test")
    return found


def test_an_exported_job_runs_in_fio_and_comes_back_into_the_plan(fio_binary: str, tmp_path: Path) -> None:
    # Llama 3 8B on 8 H100s: random 256 KiB reads and the 8 ranks' checkpoint burst, run for real on a
    # temporary folder (16 MiB a process, 1 s a job), read back, and planned on the measured store.
    p = calc.plan("llama3-8b-pretrain-8xh100")
    data = tmp_path / "store"
    data.mkdir()
    job = tmp_path / "job.fio"
    job.write_text(fio.fio_job(p, directory=str(data), size="16 MiB", runtime_s=1, direct=_direct_io(data)))
    out = tmp_path / "result.json"
    run = subprocess.run(
        [fio_binary, "--output-format=json", f"--output={out}", str(job)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    raw = json.loads(out.read_text())
    # fio read the job as written: 256 KiB random reads, then 8 writers of 16 MiB parts.
    opts = {j["jobname"]: j["job options"] for j in raw["jobs"]}
    assert opts["reads-per-node"]["bs"] == "262144" and opts["reads-per-node"]["rw"] == "randread"
    assert opts["checkpoint-write-per-node"]["numjobs"] == "8" and opts["checkpoint-write-per-node"]["bs"] == "16777216"
    m = calc.measure.fio(out)
    assert m.read_job == "reads-per-node" and m.write_job == "checkpoint-write-per-node"
    assert m.read.read_iops > 0 and m.read.block_bytes == 262144 and m.read.read_latency_s > 0
    assert m.write_bytes_per_s > 0
    # fio's bandwidth is its reads times their size (its own accounting, within rounding).
    assert m.read.read_bytes_per_s == pytest.approx(m.read.read_iops * 262144, rel=0.01)
    inputs = m.as_inputs()
    assert inputs["storage_bytes_per_s"] == min(m.read.read_bytes_per_s, m.write_bytes_per_s)
    assert inputs["storage"] is None  # the measured store stands for the preset's nvme-gen4
    q = calc.plan(p.scenario, **inputs)
    assert float(q.values["storage_iops"]) == pytest.approx(m.read.read_iops, rel=1e-12)
    assert float(q.values["storage_latency_s"]) == pytest.approx(m.read.read_latency_s, rel=1e-12)
    own = calc.answer(q).own
    assert own.startswith("Your store (") and ("serves the job" in own or "does not serve the job" in own)


ARTICLE_JOB = """\
# fio job: beast-imagenet-4xv100: resnet50 on 4 x V100-SXM2-16GB, fp16
# Written by Feedrate (calc.fio_job) from the plan's design point, the steady reads.
# Run:  fio --output-format=json --output=result.json THIS_FILE
# Then: calc.measure.fio('result.json').as_inputs() into calc.plan (python -m calc plan --fio-result).
# Each job passes at the rate its comment gives; jobs run one after another (stonewall).

[global]
directory=/mnt/candidate
size=10737418240
runtime=60
time_based=1
ioengine=libaio
direct=1
randrepeat=0
group_reporting=1

# one node's random reads of 64 KiB (the plan's read size), 6 in flight (Little's law: 5,885 reads/s x 1 ms a read).
# Passes at >= 5,885 reads/s (385.7 MB/s).
[reads-per-node]
description=passes at >= 5885.06 reads/s, 3.85683e+08 B/s
rw=randread
bs=65536
iodepth=6
numjobs=1
stonewall
"""


def test_the_whole_job_file_of_the_articles_job() -> None:
    # Defaults: 10 GiB = 10,737,418,240 B a process, 60 s a job, libaio with O_DIRECT. The reads:
    # 4 x 128 / 0.087 s = 5,885.06 of 64 KiB a second (385,683,126 B/s), 5.885 in flight at 1 ms -> 6.
    assert fio.fio_job(calc.plan(BEAST), directory="/mnt/candidate") == ARTICLE_JOB
    assert fio.node_share(calc.plan(BEAST)) == 1.0


def test_two_nodes_split_the_reads_in_flight() -> None:
    # 8 V100s, 4 a node: 11,770.1 reads/s, 11.77 in flight at 1 ms; a node reads half: 5,885.06 reads/s
    # with 5.885 -> 6 in flight; all nodes: 2 processes of 6.
    p = calc.plan(BEAST, gpus_per_job=8, gpus_per_node=4)
    node, every = fio.checks(p)
    assert fio.node_share(p) == 0.5
    assert (node.rw, node.iodepth, node.numjobs, every.rw, every.iodepth, every.numjobs) == (
        "randread", 6, 1, "randread", 6, 2
    )  # fmt: skip
    assert node.pass_iops == pytest.approx(4 * 128 / 0.087, rel=1e-12)
    assert every.pass_iops == pytest.approx(8 * 128 / 0.087, rel=1e-12)
    assert every.pass_bytes_per_s == pytest.approx(8 * 128 / 0.087 * 65536, rel=1e-12)
    assert node.why == (
        "one node's random reads of 64 KiB (the plan's read size), 6 in flight "
        "(Little's law: 5,885 reads/s x 1 ms a read)"
    )
    assert every.why == (
        "all 2 nodes' random reads from this host, one process per node with 6 in flight; a host whose link "
        "carries less cannot pass it: run reads-per-node on every node at once (fio --client) and add the results"
    )


def test_two_jobs_blocking_saves_one_node_each() -> None:
    # Two Llama 3 8B jobs of 8 H100s, saving synchronously: 8 ranks a node each write 1/8 of
    # 8,030,261,248 x 14 B = 112,423,657,472 B (13.09 GiB) within the stall budget, 2 % of 30 min
    # = 36 s: 3,122,879,374.2 B/s a node, 186.1 parts of 16 MiB a second; both: twice that, 16 writers.
    p = calc.plan("llama3-8b-pretrain-8xh100", jobs=2, checkpoint_mode="sync")
    *_, node, every = fio.checks(p)
    assert (node.rw, node.block_bytes, node.iodepth, node.numjobs) == ("write", 2**24, 1, 8)
    assert (every.rw, every.block_bytes, every.iodepth, every.numjobs) == ("write", 2**24, 1, 16)
    assert node.pass_bytes_per_s == pytest.approx(112_423_657_472 / 36, rel=1e-9)
    assert every.pass_iops == pytest.approx(2 * 112_423_657_472 / 36 / 2**24, rel=1e-9)
    assert node.why == (
        "one node's checkpoint save burst (blocking save): 8 rank(s) each writing its shard (13.09 GiB) in 16 MiB parts"
    )
    assert every.why == (
        "all 2 nodes' save burst from this host (16 writers); run checkpoint-write-per-node on every node at once "
        "where one host's link cannot carry it"
    )
    text = fio.fio_job(p, directory="/x")
    assert "# Passes at >= 186.1 writes/s (3.12 GB/s).\n[checkpoint-write-per-node]" in text
    assert "description=passes at >= 186.138 writes/s, 3.12288e+09 B/s" in text


def test_refusals_say_what_is_accepted() -> None:
    p = calc.plan(BEAST)
    cases = [
        ({"directory": ""}, "directory", "''; accepted: a folder on the store to test"),
        ({"directory": "/x", "ioengine": "spdk"}, "ioengine", "'spdk'; accepted: libaio, io_uring, psync, posixaio"),
        ({"directory": "/x", "size": "1 KiB"}, "size", "'1 KiB'; accepted: at least 4096 B"),
        ({"directory": "/x", "size": 4095}, "size", "4095; accepted: at least 4096 B"),
        ({"directory": "/x", "runtime_s": "0.5 s"}, "runtime_s", "'0.5 s'; accepted: at least 1 s"),
    ]
    for kw, field, message in cases:
        with pytest.raises(InputError) as e:
            fio.fio_job(p, **kw)  # type: ignore[arg-type]
        assert (e.value.field, e.value.message) == (field, message)
    assert "size=4096\n" in fio.fio_job(p, directory="/x", size=4096)
    assert "runtime=1\n" in fio.fio_job(p, directory="/x", runtime_s="1 s")
    assert "runtime=120\n" in fio.fio_job(p, directory="/x", runtime_s="2 min")
    assert "direct=0\n" in fio.fio_job(p, directory="/x", direct=False)
    cached = calc.plan(BEAST, page_cache=True, dataset_bytes="10 GB")
    with pytest.raises(InputError) as e:
        fio.fio_job(cached, directory="/x")
    assert e.value.message == (
        "beast-imagenet-4xv100-edited reads nothing from its store in the steady state and saves no checkpoints: "
        "no fio job to write (the page cache serves every read after the first epoch)"
    )
    assert fio.node_share(cached) == 1.0


def test_an_answer_that_buys_nothing_says_so() -> None:
    a = calc.answer(BEAST, site="on-prem")
    bare = dataclasses.replace(a, designs=(), site_lines=())
    assert bare.design is None
    assert "# The answer buys nothing that serves this job: the jobs check the plan's own need.\n" in fio.fio_job(
        bare, directory="/x"
    )
