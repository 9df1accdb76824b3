"""calc.fio: the fio job file a plan writes, and a real fio run of it read back into the plan.

The run needs Debian's ``fio``; without it the run test skips and says so, unless
FEEDRATE_REQUIRE_FIO=1 (set by .ci/run, which installs it) makes it fail instead.
"""

from __future__ import annotations

import configparser
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
    assert "steady reads and the checkpoint save burst" in text
    assert "8 rank(s) each writing its shard (6.54 GiB) in 16 MiB parts" in text


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
