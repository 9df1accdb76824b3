"""The cluster plan (calc/cluster.py): combined demand, saves aligned and staggered, datasets stored
once, a short system shared by policy, chargeback, growth, and the YAML / link / CLI round trips.

Expected values are worked out by hand in the comments from the inputs and the preset figures
they name (presets/models.yaml, presets/storage.yaml), never pasted from the code's output.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable

import pytest

import calc
from calc.cli import run
from calc.cluster import (
    ClusterAnswer,
    ClusterPlan,
    _entry_load,
    _Load,
    chargeback,
    cluster_demand,
    growth,
    share,
    shared_utilization,
)
from calc.cluster_input import Cluster, as_cluster, load
from calc.cluster_load import fmt_total, timeline
from calc.engine import plan_demand
from calc.errors import InputError
from calc.scenario import Scenario


def job(name: str, example: str, **kw: object) -> Scenario:
    """A job whose demand is hand-computable: a measured 1,000 samples/s per GPU on 8 GPUs, no
    page cache, every other stage far above it (1 ms of CPU per example on 256 cores, 8 workers)."""
    base: dict[str, object] = {
        "name": name,
        "gpu": "H100-SXM",
        "model": "resnet50",
        "precision": "bf16",
        "batch_size": 256,
        "samples_per_s_per_gpu": 1000,
        "scaling_efficiency": 1.0,
        "gpus_per_job": 8,
        "example_bytes": example,
        "page_cache": False,
        "cpu_seconds_per_example": "1 ms",
        "cpu_cores_per_node": 256,
        "dataset_examples": 1_000_000,
    }
    return Scenario(**(base | kw))  # type: ignore[arg-type]


A = job("a", "100 kB")  # reads 8 GPUs x 1,000/s x 100 kB = 0.8 GB/s, 8,000 reads/s
B = job("b", "300 kB")  # reads 8 x 1,000 x 300 kB = 2.4 GB/s, 8,000 reads/s

# Llama 3 8B (presets/models.yaml: 8,030,261,248 parameters), mlperf_mixed_adam: 2 + 12 bytes per
# parameter -> C = 8,030,261,248 x 14 = 112,423,657,472 B per checkpoint.
C = 8_030_261_248 * 14
W30 = C / (1800 * 0.02)  # a sync save every 30 min within a 2 % stall: C / 36 s = 3,122,879,374 B/s
W60 = C / (3600 * 0.02)  # every 60 min: C / 72 s = 1,561,439,687 B/s


def test_combined_read_rate_of_two_job_types() -> None:
    # 3 x A + 2 x B: 3 x 0.8 GB/s + 2 x 2.4 GB/s = 2.4 + 4.8 = 7.2 GB/s; reads 5 x 8,000 = 40,000/s.
    cp = calc.cluster({A: 3, B: 2})
    assert cp.read_bytes_per_s == pytest.approx(7.2e9)
    assert cp.read_iops == pytest.approx(40_000)
    assert cp.gpus == 5 * 8
    # First epoch: no cache either way, so the same 7.2 GB/s.
    assert cp.first_epoch_read_bytes_per_s == pytest.approx(7.2e9)
    assert list(cp.to_frame()["count"]) == [3, 2]


def _llm_cluster(saves: str) -> ClusterPlan:
    # Blocking saves (the preset's default is async for its sharded state): the bursts below.
    sync = {"dataset": "tokens", "checkpoint_mode": "sync", "checkpoint_interval_s": "30 min"}
    hourly = calc.scenario(
        "llama3-8b-pretrain-8xh100", name="llama3-hourly", **(sync | {"checkpoint_interval_s": "60 min"})
    )
    return calc.cluster(
        {calc.scenario("llama3-8b-pretrain-8xh100", **sync): 2, hourly: 1},
        saves=saves,
    )


def test_aligned_against_staggered_saves_of_two_llm_jobs() -> None:
    aligned, staggered = _llm_cluster("aligned"), _llm_cluster("staggered")
    # Aligned: every copy saves at once: 2 x W30 + W60 = 6,245,758,748 + 1,561,439,687 = 7,807,198,436 B/s.
    peak = 2 * W30 + W60
    assert aligned.peak_write_bytes_per_s == pytest.approx(peak, rel=1e-9)
    # The saves pause the jobs' own reads (about 270 kB/s per job): the write need is the peak less
    # the reads of the saving jobs (all of them, aligned), within 2e-4 of the peak.
    assert aligned.write_need_bytes_per_s == pytest.approx(peak - aligned.read_bytes_per_s, rel=1e-9)
    assert aligned.write_need_bytes_per_s == pytest.approx(peak, rel=2e-4)
    # Average: 2 x C / 1800 s + C / 3600 s = C x 5 / 3600 = 156,143,969 B/s.
    assert staggered.average_write_bytes_per_s == pytest.approx(C * 5 / 3600, rel=1e-9)
    # Staggered: one save at a time (sum of duty cycles 3 x 2 % < 1): the largest burst, W30.
    assert staggered.write_need_bytes_per_s == pytest.approx(W30, rel=1e-4)
    assert aligned.write_need_bytes_per_s / staggered.write_need_bytes_per_s == pytest.approx(2.5, rel=1e-3)


def test_day_timeline_peaks_match_the_aligned_and_staggered_needs() -> None:
    for saves, expected in (("aligned", 2 * W30 + W60), ("staggered", W30)):
        t = timeline(_llm_cluster(saves))
        total = t.drop(columns="time_s").sum(axis=1)
        # Aligned: at t = 0 every job writes and none reads. Staggered: one job's burst plus the
        # others' reads (2 x 210 kB/s, 1.3e-4 of W30).
        assert float(total.max()) == pytest.approx(expected, rel=2e-4), saves


def test_auto_saves_that_resolve_to_async_drain_beside_the_reads_at_their_burst() -> None:
    # The Llama 3 8B preset saves in mode auto, which is async for its sharded state (calc.resolve).
    # Its plan buys the drain within half the interval (drain_target 0.5): C / (0.5 x 1,800 s) =
    # 112,423,657,472 B / 900 s = 124,915,174.97 B/s for 900 s of every 1,800, beside the reads (they
    # never pause), then nothing; a day holds 48 saves, 96 segments. Before issue 37 the cluster
    # drew and bought C / T = 62,457,587.5 B/s all day, half the burst the job itself is sized for.
    cp = calc.cluster({calc.scenario("llama3-8b-pretrain-8xh100", checkpoint_mode="auto"): 1})
    assert list(cp.to_frame()["checkpoint_mode"]) == ["async"]
    t = timeline(cp)
    name = cp.plans[0].scenario.name
    assert len(t) == 96 and list(t["time_s"][:3]) == [0.0, 900.0, 1800.0]
    assert list(t[f"{name} checkpoints"]) == pytest.approx([C / 900, 0.0] * 48, rel=1e-12)
    assert list(t[f"{name} reads"]) == pytest.approx([cp.read_bytes_per_s] * len(t))
    assert cp.peak_write_bytes_per_s == pytest.approx(C / 900, rel=1e-12)
    assert cp.write_need_bytes_per_s == pytest.approx(C / 900, rel=1e-12)
    assert cp.average_write_bytes_per_s == pytest.approx(C / 1800, rel=1e-12)


def test_a_shared_dataset_is_stored_once() -> None:
    # a2 and a read "imagenet": 1e6 examples x 100 kB = 100 GB, stored once; b its own 300 GB.
    a = A.replace(dataset="imagenet")
    a2 = job("a2", "100 kB", dataset="imagenet", num_workers=4)
    cp = calc.cluster({a: 1, a2: 2, B: 1})
    assert cp.stored_bytes == pytest.approx(100e9 + 300e9)
    assert cp.datasets == {"imagenet": pytest.approx(100e9), "b": pytest.approx(300e9)}
    # Unnamed datasets default to each job's own name: 100 + 100 + 300 GB.
    assert calc.cluster({A: 1, a2: 2, B: 1}).stored_bytes == pytest.approx(500e9)


def test_llm_checkpoints_kept_per_job_and_dataset_once() -> None:
    # Dataset (the tokens one node reads in its 30-day run): 16,620,000 sequences x 32,768 B =
    # 544,604,160,000 B, once; checkpoints per job: 2 newest + a milestone every 24 h of 30 days
    # + the save in flight = 33 x C; 3 jobs x 33 x 112,423,657,472 B = 11,129,942,089,728 B.
    cp = _llm_cluster("aligned")
    assert cp.stored_bytes == pytest.approx(16_620_000 * 32_768 + 3 * 33 * C, rel=1e-9)


def test_undersized_system_shares_the_shortfall_by_demand_or_max_min() -> None:
    # A reads 0.8 GB/s, B 2.4 GB/s; the system gives 1.6 GB/s: 3.2 / 1.6 = 2x short.
    cp = calc.cluster({A: 1, B: 1}, storage_bytes_per_s="1.6 GB/s")
    # Alone, A fits (0.8 < 1.6) and B gets 1.6 / 2.4 = 2/3.
    assert [p.gpu_utilization for p in cp.plans] == pytest.approx([1.0, 2 / 3])
    a = calc.answer(cp)
    assert a.served_fraction == pytest.approx(0.5)
    assert a.binding_axis == "bandwidth"
    # By demand: both get half of their demand -> 50 % utilisation each.
    assert list(a.jobs["gpu_utilization"]) == pytest.approx([0.5, 0.5])
    # Max-min per GPU (8 GPUs each): equal share 0.8 GB/s per job; A needs 0.8 -> served in
    # full; B gets the remaining 0.8 of its 2.4 -> 1/3.
    m = calc.answer(cp.cluster, policy="max-min")
    assert list(m.jobs["gpu_utilization"]) == pytest.approx([1.0, 1 / 3])
    # Idle GPU-hours: B's 8 GPUs x (1 - 1/3) x 720 h (30 days, the month every charge uses) = 3,840 h.
    assert float(m.jobs["idle_gpu_hours_per_month"].iloc[1]) == pytest.approx(8 * (2 / 3) * 720)


def test_share_water_filling_by_hand() -> None:
    # Loads 0.2, 0.6, 0.6 of capacity (sum 1.4) on 1, 1, 2 GPUs. Equal share per GPU 1/4:
    # job 0 needs 0.2 < 0.25 -> full; left 0.8 over 3 GPUs = 0.2667 per GPU: job 1 (0.6 on 1 GPU)
    # gets 0.2667 -> 0.444, job 2 (0.6 on 2) gets 0.5333 -> 0.889.
    got = share([0.2, 0.6, 0.6], [1, 1, 2], "max-min")
    assert got == pytest.approx([1.0, 0.8 / 3 / 0.6, 2 * 0.8 / 3 / 0.6])
    assert share([0.2, 0.6, 0.6], [1, 1, 2], "demand") == pytest.approx([1 / 1.4] * 3)
    assert share([0.0, 1.5], [1, 1], "demand") == pytest.approx([1.0, 1 / 1.5])  # no load, not slowed
    assert share([0.2, 0.3], [1, 1], "demand") == [1.0, 1.0]
    # Issue 37's sweep (a planted bug the tests missed): water-filling goes through the jobs by load
    # per GPU, not by load. 10 GPUs needing 0.6 (0.06 each) and 1 GPU needing 0.5, 1.1 in all: the
    # 10-GPU job is under the first equal share (1 / 11 a GPU x 10 = 0.909 > 0.6) and gets all it
    # needs; the 0.4 left goes to the other, 0.4 / 0.5 = 0.8 of its need. Taken by load, the 1-GPU
    # job came first and both ended at 1 / 11 a GPU: 0.18, with 0.31 of the system left unused.
    assert share([0.5, 0.6], [1, 10], "max-min") == pytest.approx([0.8, 1.0], rel=1e-12)


def test_chargeback_by_hand() -> None:
    # 4 nvme-gen4 drives at $2,737.50 (presets/storage.yaml) over 36 months = $304.17 a month;
    # no rent or read charges; $100 of other monthly cost. A reads 0.8, B 2.4 GB/s (1 : 3);
    # B2 stores 2e6 x 300 kB = 600 GB against A's 100 GB (1 : 6).
    b2 = B.replace(dataset_examples=2_000_000)
    cp = calc.cluster({A: 1, b2: 1})
    bought = 4 * 2737.5 / 36
    row = {"option": "nvme-gen4", "units": 4, "limiting": "bandwidth", "monthly_total_usd": bought + 100}
    assert chargeback(cp, row) == pytest.approx([(bought + 100) / 4, (bought + 100) * 3 / 4])
    # Sized by capacity: the drives split 1 : 6 by stored bytes, the $100 by bandwidth 1 : 3.
    row["limiting"] = "capacity"
    assert chargeback(cp, row) == pytest.approx([bought / 7 + 25, bought * 6 / 7 + 75])


def test_chargeback_of_a_rented_object_store_by_hand() -> None:
    # aws-s3-standard (presets/storage.yaml): $0.023 per GB-month, $0.40 per million GETs, every read
    # a request. A: 0.8 GB/s, 8,000 reads/s, 100 GB; B: 2.4 GB/s, 8,000 reads/s, 300 GB.
    # Rent on the stored bytes: 400 GB x $0.023 = $9.20, split 1 : 3 -> $2.30 and $6.90.
    # Requests: 8,000/s x 2,592,000 s a month = 20,736 million x $0.40 = $8,294.40 each.
    cp = calc.cluster({A: 1, B: 1})
    row = {"option": "aws-s3-standard", "units": 1, "limiting": "bandwidth", "monthly_total_usd": 9.2 + 2 * 8294.4}
    assert chargeback(cp, row) == pytest.approx([2.3 + 8294.4, 6.9 + 8294.4], rel=1e-12)


def test_aligned_sync_saves_pause_their_own_reads() -> None:
    # A with a blocking save every 10 min in a 1 % stall: ResNet-50's 25,557,032 parameters x 14 B
    # (2 weight + 12 optimizer bytes) = 357,798,448 B per checkpoint, written in 6 s = 59,633,074.7 B/s.
    # Two copies read 2 x 0.8 = 1.6 GB/s. Aligned, both save at once and stop reading: the saves add
    # max(2 x 59.6 MB/s - 1.6 GB/s, 0) = 0 to the reads, though they peak at 119.3 MB/s.
    c = 25_557_032 * 14
    w = c / (600 * 0.01)
    a = A.replace(checkpoint_interval_s="10 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.01)
    aligned = calc.cluster({a: 2})
    assert aligned.peak_write_bytes_per_s == pytest.approx(2 * w)
    assert aligned.write_need_bytes_per_s == 0.0
    assert aligned.storage_need_bytes_per_s == pytest.approx(1.6e9)
    # Staggered: one save at a time adds max(w - 0.8 GB/s, 0) = 0 to what its copy reads, and so
    # does the time average of those extras (0 x a 1 % duty). Before issue 37 the staggered need
    # added the writes' time average, 2 C / 600 s = 1,192,661.5 B/s, on top of reads that a blocking
    # save pauses: the rule the aligned need and the plan did not follow.
    staggered = calc.cluster({a: 2}, saves="staggered")
    assert staggered.write_need_bytes_per_s == 0.0
    assert staggered.storage_need_bytes_per_s == pytest.approx(1.6e9)


def test_grown_demand_scales_kept_checkpoints_with_the_jobs() -> None:
    # A with 10-min saves keeps its 2 newest checkpoints and the one being written: 2 copies x 3 x
    # 357,798,448 B = 2,146,790,688 B beside the 100 GB dataset. Twice the jobs keep twice the
    # checkpoints; twice the data, the same.
    a = A.replace(checkpoint_interval_s="10 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.01)
    cp = calc.cluster({a: 2})
    kept = 2 * 3 * 25_557_032 * 14
    assert cp.checkpoint_capacity_bytes == pytest.approx(kept)
    assert cluster_demand(cp, 2.0, 1.0).capacity_bytes == pytest.approx(100e9 + 2 * kept)
    assert cluster_demand(cp, 1.0, 2.0).capacity_bytes == pytest.approx(200e9 + kept)
    # Reads, requests and writes grow with the jobs: 2 x 1.6 GB/s.
    assert cluster_demand(cp, 2.0, 1.0).read_bytes_per_s == pytest.approx(3.2e9)


def test_a_shared_dataset_is_split_between_the_jobs_that_read_it() -> None:
    # a (1 copy) and a2 (2 copies) read the same 100 GB "imagenet": a is charged for 100 / 3 GB,
    # a2 for 200 / 3 GB; B keeps its own 300 GB. Capacity-sized drives are charged by these.
    a = A.replace(dataset="imagenet")
    a2 = job("a2", "100 kB", dataset="imagenet", num_workers=4)
    cp = calc.cluster({a: 1, a2: 2, B: 1})
    assert [_entry_load(cp, i).stored for i in range(3)] == pytest.approx([100e9 / 3, 200e9 / 3, 300e9])
    row = {"option": "nvme-gen4", "units": 4, "limiting": "capacity", "monthly_total_usd": 4 * 2737.5 / 36}
    assert chargeback(cp, row) == pytest.approx([4 * 2737.5 / 36 * x / 400 for x in (100 / 3, 200 / 3, 300)])


def test_growth_says_when_the_next_purchase_is_due() -> None:
    # One job A with 115.2e6 examples of 100 kB = 11.52 TB of data on nvme-gen4
    # (7.68 TB a drive), filled to at most 80 %: 11.52 / (7.68 x 0.8) = 1.875 -> 2 data drives,
    # mirrored (two or fewer) -> 4 drives bought now. Data doubles a year: 1.875 x 2^(m/12) > 2 first
    # when m > 12 log2(2 / 1.875) = 1.12 -> month 2: 3 data drives in RAID 6 (3 + 2) = 5 drives;
    # month 24: 1.875 x 4 = 7.5 -> 8 data drives + 2 parity = 10. Bandwidth (0.8 GB/s) stays far
    # below what even one drive reads.
    a = job("a", "100 kB", dataset_examples=115_200_000)
    cp = calc.cluster({a: 1}, horizon_months=24, data_growth_per_year=1.0)
    g = growth(cp, {"option": "nvme-gen4", "units": 4})
    assert g["next_purchase_month"] == 2
    assert g["units_at_horizon"] == 10
    assert "month 2 (5 drives needed, limited by capacity)" in g["text"]
    months = g["months"]
    assert list(months["units"][:3]) == [4, 4, 5]
    # Month 1: 1.875 x 2^(1/12) = 1.986 data drives: still 2, no purchase due within a month.
    soon = calc.cluster({a: 1}, horizon_months=1, data_growth_per_year=1.0)
    short = growth(soon, {"option": "nvme-gen4", "units": 4})
    assert short["next_purchase_month"] is None


def test_growth_month_zero_is_what_the_answer_buys() -> None:
    # Growth used to re-size without protection, fill limit or enclosures: month 0 needed 2 drives
    # while the answer bought 4 in a mirror. Now growth is the engine run on each month's demand.
    a = job("a", "100 kB", dataset_examples=115_200_000, site="on-prem")
    ans = calc.answer(calc.cluster({a: 1}, horizon_months=12, data_growth_per_year=1.0))
    assert ans.best is not None and ans.growth["units_now"] == float(ans.best["units"])
    assert ans.growth["months"]["units"][0] == float(ans.best["units"])


def test_yaml_round_trip_and_the_preset() -> None:
    c = load("lab-168-gpus")
    assert len(c.jobs) >= 4
    assert Cluster.from_yaml(c.to_yaml()) == c
    cp = calc.cluster(c)
    assert ClusterPlan.from_yaml(cp.to_yaml()).read_bytes_per_s == cp.read_bytes_per_s
    # ResNet-50 and ViT-B/16 both name imagenet-1k: stored once.
    assert sum(1 for p in cp.plans if p.scenario.dataset == "imagenet-1k") == 2
    assert len(cp.datasets) == len(cp.plans) - 1


def test_link_round_trip() -> None:
    c = as_cluster(
        {A: 2, calc.scenario("llama3-8b-pretrain-8xh100", checkpoint_interval_s="60 min"): 1},
        storage="nfs-100gbe",
        storage_units=3,
        saves="staggered",
        policy="max-min",
        horizon_months=12,
        job_growth_per_year=0.25,
    )
    params = c.to_params()
    assert all(isinstance(v, str) for v in params.values())
    assert Cluster.from_params(params) == c
    assert ClusterPlan.from_params(params).storage_need_bytes_per_s == calc.cluster(c).storage_need_bytes_per_s


def test_cli_yaml_file_and_job_flags(tmp_path: object) -> None:
    from pathlib import Path

    c = as_cluster({"resnet50-8xh100-imagenet": 3, "llama3-8b-pretrain-8xh100": 2}, saves="staggered")
    path = Path(str(tmp_path)) / "cluster.yaml"
    path.write_text(c.to_yaml(), encoding="utf-8")
    from_file = json.loads(run(["cluster", str(path), "--format", "json"]))
    from_flags = json.loads(
        run(
            [
                "cluster",
                "--job",
                "resnet50-8xh100-imagenet:3",
                "--job",
                "llama3-8b-pretrain-8xh100:2",
                "--set",
                "saves=staggered",
                "--format",
                "json",
            ]
        )
    )
    assert from_file["totals"] == from_flags["totals"]
    # Two llama3 copies, saving asynchronously (the preset's default for sharded state): each
    # drains C over its 30 min interval all the time, so staggering cannot spread them:
    # 2 x 112,423,657,472 B / 1,800 s = 124,915,175 B/s.
    assert from_file["totals"]["write_need_bytes_per_s"] == pytest.approx(2 * C / 1800, rel=1e-9)
    assert "Buy for the cluster" in run(["cluster", str(path)])
    assert run(["cluster", str(path), "--format", "markdown"]).startswith("# Feedrate cluster")
    assert "peak_write_bytes_per_s" in run(["cluster", "lab-168-gpus", "--format", "yaml"])


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("jobs: []", "jobs"),
        ("jobs: [{scenario: resnet50-8xh100-imagenet, count: 0}]", "count"),
        ("jobs: [{scenario: resnet50-8xh100-imagenet, count: 2.5}]", "count"),
        ("jobs: [{scenario: nope, count: 1}]", "scenario"),
        ("jobs: [{scenario: resnet50-8xh100-imagenet, set: {gpus: 8}}]", "gpus"),
        ("saves: sometimes\njobs: [{scenario: resnet50-8xh100-imagenet}]", "saves"),
        ("colour: red\njobs: [{scenario: resnet50-8xh100-imagenet}]", "colour"),
        ("shared: {storage: floppy}\njobs: [{scenario: resnet50-8xh100-imagenet}]", "storage"),
        ("jobs: [{scenario: resnet50-8xh100-imagenet}]\nhorizon_months: -1", "horizon_months"),
        ("- not a mapping", "cluster.yaml"),
    ],
)
def test_bad_cluster_yaml_names_the_field(text: str, field: str) -> None:
    with pytest.raises(InputError) as e:
        calc.cluster(Cluster.from_yaml(text))
    assert field in e.value.field or field in e.value.message


def test_bad_link_and_cli_input() -> None:
    with pytest.raises(InputError, match="cluster"):
        Cluster.from_params({})
    with pytest.raises(InputError, match="count"):
        Cluster.from_params({"cluster": "resnet50-8xh100-imagenet:zero"})
    with pytest.raises(InputError):
        run(["cluster"])
    assert not math.isnan(calc.cluster({A: 1}).request_bytes)


def test_answer_dispatches_and_explains() -> None:
    cp = calc.cluster({A: 1, B: 1})
    a = calc.answer(cp)
    assert isinstance(a, ClusterAnswer)
    assert a.lines()[0].startswith("Buy for the cluster")
    assert "read_bytes_per_s = sum of reads" in cp.explain()
    assert isinstance(calc.answer(A), calc.answers.Answer)


def test_metadata_load_on_fsx_scales_with_the_file_systems_size() -> None:
    """Defect: the worked cluster's 240 TiB FSx was "limited by metadata" at a fixed 1,500 ops/s.

    AUTOMATIC mode gives 240 TiB floor(240 / 24) x 12,000 = 120,000 Metadata IOPS, each running 2
    opens or closes: 240,000 ops/s. 60,000 opens/s x 2 MDS ops = 120,000 ops/s = half of it;
    on the smallest, 1.2 TiB file system (1,500 x 2 = 3,000 ops/s) it is 40 times too many.
    """
    from calc import storage
    from calc.cluster import _Load, axis_loads

    o = storage.option("aws-fsx-lustre-ssd-1000")
    load = _Load(read=0.0, write=0.0, iops=0.0, opens=60000.0, stored=0.0)
    assert axis_loads(o, load, 240.0, 1)["metadata"] == pytest.approx(0.5, rel=1e-12)
    assert axis_loads(o, load, 1.2, 1)["metadata"] == pytest.approx(40.0, rel=1e-12)


def test_staggered_sync_need_is_split_by_each_entrys_saves() -> None:
    # Blocking saves in a 0.05 % stall: a saves C = 357,798,448 B every 10 min in 0.3 s, a burst of
    # 1,192,661,493.3 B/s against its copy's 0.8 GB/s of reads, which pause: 392,661,493.3 B/s more
    # than the copy reads. b saves every 20 min in 0.6 s: 596,330,746.7 B/s, below its 2.4 GB/s of
    # reads: nothing more. One save at a time, the largest extra binds (the time average of the
    # extras, 2 x 392.66 MB/s x 0.0005 = 392,661.5 B/s, is far below it); it is a's alone.
    c = 25_557_032 * 14
    a = A.replace(checkpoint_interval_s="10 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.0005)
    b = B.replace(checkpoint_interval_s="20 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.0005)
    cp = calc.cluster({a: 2, b: 1}, saves="staggered")
    extra = c / 0.3 - 0.8e9
    assert cp.write_need_bytes_per_s == pytest.approx(extra, rel=1e-12)
    assert cp.storage_need_bytes_per_s == pytest.approx(2 * 0.8e9 + 2.4e9 + extra, rel=1e-12)
    assert [_entry_load(cp, i).write for i in range(2)] == pytest.approx([extra, 0.0], rel=1e-12)
    # Aligned: both copies of a save at once (2 x 1.1927 GB/s instead of their 1.6 GB/s of reads),
    # b's save stays below its reads: 2 x 1,192,661,493.3 - 1.6e9 = 785,322,986.7 B/s more.
    aligned = calc.cluster({a: 2, b: 1})
    assert aligned.write_need_bytes_per_s == pytest.approx(2 * c / 0.3 - 1.6e9, rel=1e-12)
    assert [_entry_load(aligned, i).write for i in range(2)] == pytest.approx([2 * c / 0.3 - 1.6e9, 0.0])


def test_staggered_drains_that_must_overlap_add_their_time_average() -> None:
    # Three Llama 3 8B jobs saving asynchronously (auto): each drains C / 900 s = 124,915,174.97 B/s
    # for half of every 1,800 s, beside its reads. Spread out, three half-interval drains must
    # overlap: their time average, 3 x 124.9 MB/s x 0.5 = 3 C / 1,800 s = 187,372,762.5 B/s, is more
    # than the largest single drain, and binds. One such job alone: its own drain, C / 900 s.
    llm = calc.scenario("llama3-8b-pretrain-8xh100", checkpoint_mode="auto")
    three = calc.cluster({llm: 3}, saves="staggered")
    assert three.write_need_bytes_per_s == pytest.approx(3 * C / 1800, rel=1e-12)
    assert calc.cluster({llm: 1}, saves="staggered").write_need_bytes_per_s == pytest.approx(C / 900, rel=1e-12)


def test_a_shared_storage_with_headroom_says_how_much() -> None:
    # One nfs-100gbe server (11.25 GB/s, 200,000 IOPS, storage.yaml) for A: 0.8 GB/s and one file
    # opened per read, 8,000/s: busy 0.8 / 11.25 + 8,000 / 200,000 = 0.1111 -> 9.0x headroom.
    a = calc.answer(calc.cluster({A: 1}, storage="nfs-100gbe", storage_units=1))
    assert a.own == "Your shared storage, 1 x nfs-100gbe, serves the combined load with 9.0x headroom."
    assert a.served_fraction == 1.0 and a.binding_axis == ""
    none = calc.answer(calc.cluster({A: 1}))
    assert none.own == "No shared storage given: the cluster needs 800 MB/s and 8,000 reads/s in steady state."


def test_one_dataset_named_with_two_sizes_stores_the_larger_and_says_so() -> None:
    a = A.replace(dataset="imagenet")
    a2 = job("a2", "100 kB", dataset="imagenet", dataset_examples=2_000_000)
    cp = calc.cluster({a: 1, a2: 1})
    assert cp.datasets == {"imagenet": pytest.approx(200e9)}
    assert cp.warnings == (
        "dataset 'imagenet' has different sizes in its jobs (100 GB and 200 GB): the larger is stored",
    )


def test_chargeback_of_read_charges_by_hand() -> None:
    # aws-efs-elastic: $0.30 per GB-month on the stored bytes, $0.03 per GB read (storage.yaml).
    # Rent 400 GB x $0.30 = $120 split 1 : 3; reads 0.8 and 2.4 GB/s x 2,592,000 s x $0.03/GB =
    # $62,208 and $186,624.
    cp = calc.cluster({A: 1, B: 1})
    row = {"option": "aws-efs-elastic", "units": 1, "limiting": "bandwidth", "monthly_total_usd": 120 + 248_832}
    assert chargeback(cp, row) == pytest.approx([30 + 62_208, 90 + 186_624], rel=1e-12)


def test_cluster_demand_carries_the_servers_block_cap_and_the_real_gpu_count() -> None:
    # A on 8 GPUs of one aws-p5.48xlarge: block volumes at 10 GB/s per instance (servers.yaml).
    d = cluster_demand(calc.cluster({A: 1}, server="aws-p5.48xlarge"))
    assert d.server == "aws-p5.48xlarge" and d.server_block_bytes_per_s == 10e9
    assert (d.gpus, d.clients) == (8, 1)
    assert cluster_demand(calc.cluster({A: 1})).server == ""


def test_max_min_weights_each_entry_by_all_its_copies_gpus() -> None:
    # 2 copies of A (16 GPUs, 1.6 GB/s) and 1 of B (8 GPUs, 2.4 GB/s) on 2 GB/s: 4.0 / 2.0 = 2x short.
    # Max-min per GPU: 2 GB/s / 24 GPUs = 83.3 MB/s each: A's entry needs 100 MB/s per GPU, B's 300:
    # both get 83.3 MB/s per GPU -> A 1.333 of its 1.6 GB/s (0.8333), B 0.667 of 2.4 (0.2778).
    cp = calc.cluster({A: 2, B: 1}, storage_bytes_per_s="2 GB/s", policy="max-min")
    a = calc.answer(cp)
    assert list(a.jobs["served_fraction"]) == pytest.approx([2e9 * 16 / 24 / 1.6e9, 2e9 * 8 / 24 / 2.4e9])
    assert list(cp.to_frame()["dataset"]) == ["a", "b"]  # unnamed datasets are the jobs' own
    assert growth(cp, None)["text"] == "" and growth(cp, None)["next_purchase_month"] is None


def test_max_min_serves_the_lightest_job_per_gpu_first() -> None:
    """Water-filling by load per GPU: loads 0.9 (1 GPU) and 0.6 (3 GPUs) of the binding axis sum
    to 1.5. The 3-GPU job needs 0.2 per GPU, under the even share 1 / 4 GPUs = 0.25: it gets all
    its 0.6; 0.4 is left for the 1-GPU job, which gets 0.4 / 0.9 = 0.444 of its demand. Served by
    load x GPUs instead, the 1-GPU job would go first and get 0.25 / 0.9 = 0.278."""
    from calc.cluster import share

    a, b = share([0.9, 0.6], [1.0, 3.0], "max-min")
    assert a == pytest.approx(0.4 / 0.9)
    assert b == 1.0
    # "demand": each job gets 1 / 1.5 of its demand.
    assert share([0.9, 0.6], [1.0, 3.0], "demand") == pytest.approx([1 / 1.5, 1 / 1.5])
    assert share([0.5, 0.5], [1.0, 3.0], "max-min") == [1.0, 1.0]  # fits: everyone is served


def test_cluster_input_errors_name_their_field() -> None:
    """Each refusal of a cluster document names the key it refuses (the message is no use without it)."""
    from calc.cluster_input import Cluster, Job, load

    with pytest.raises(InputError) as e:
        Cluster.from_dict({"jobs": ["mlperf-unet3d-h100"]}, "c.yaml")
    assert e.value.field == "c.yaml: jobs[0]"
    assert "expected a mapping with scenario: and count:" in e.value.message
    with pytest.raises(InputError) as e:
        Cluster.from_dict({"jobs": [{"scenario": "mlperf-unet3d-h100", "count": 1, "colour": 3}]}, "c.yaml")
    assert (e.value.field, e.value.message) == (
        "c.yaml: jobs[0]: colour",
        "unknown key; accepted: scenario, count, set",
    )
    job = Job(calc.scenario("mlperf-unet3d-h100"), 2)
    with pytest.raises(InputError) as e:
        Cluster(jobs=(job,), shared={"colour": 3})
    assert e.value.field == "colour" and e.value.message.startswith("shared ")
    # An optional input set to None is kept as None (no value), not refused.
    assert Cluster(jobs=(job,), shared={"storage": None}).shared == {"storage": None}
    with pytest.raises(InputError) as e:
        Job("mlperf-unet3d-h100", 1)  # type: ignore[arg-type]
    assert e.value.field == "jobs" and e.value.message.endswith("accepted: a Scenario with a count")
    with pytest.raises(InputError) as e:
        load("/nonexistent/cluster.yaml")
    assert e.value.field == "cluster" and "no file '/nonexistent/cluster.yaml'" in e.value.message


# --- A 1-job cluster equals its plan (issue 32) -------------------------------------------------


def test_shared_utilization_by_hand() -> None:
    """Only what the other jobs take away lowers a plan's utilisation."""
    # Alone the same as in the cluster (a 1-job cluster): the plan's figure, whatever the axis share.
    assert shared_utilization(1.0, 0.9, 0.6086, 0.6086) == 1.0
    assert shared_utilization(0.61, 0.9, 0.3, 0.3) == 0.61
    # Fits alone, half served beside the others: 0.5 x 0.9 target = 0.45 (below the plan's 1.0).
    assert shared_utilization(1.0, 0.9, 0.5, 1.0) == pytest.approx(0.45)
    # Short alone (0.5 served -> plan 0.6), 0.3 served beside the others: 0.6 x 0.3 / 0.5 = 0.36.
    assert shared_utilization(0.6, 0.9, 0.3, 0.5) == pytest.approx(0.36)


def test_one_job_on_two_nfs_servers_is_at_its_plans_utilisation() -> None:
    """Issue 32's repro: the 1T checkpoint job on 2 x nfs-25gbe was at 61 % in the cluster and
    100 % in plan(). The job reads no dataset (0 B/s), so no read stage can idle its GPUs: its
    saves are the plan's checkpoint stall, not a read shortfall; alone on the storage, nothing
    else takes bandwidth from it. Both must say 100 %."""
    kw = {"storage": "nfs-25gbe", "storage_units": 2}
    p = calc.plan("mlperf-checkpoint-llama3-1t", **kw)
    assert p.read_bytes_per_s == 0.0 and p.gpu_utilization == 1.0
    a = calc.cluster_answer(calc.cluster({"mlperf-checkpoint-llama3-1t": 1}, **kw))
    assert a.served_fraction < 1  # the async drains do load the two servers ...
    assert float(a.jobs["gpu_utilization"].iloc[0]) == 1.0  # ... but take nothing from a reader
    assert float(a.jobs["idle_gpu_hours_per_month"].iloc[0]) == 0.0


def test_one_job_cluster_buys_what_its_answer_buys() -> None:
    """Issue 32's repro: a 1-job cluster of the 1T job at GCP bought one GCS bucket (its own demand
    left out the restore burst and the GPU time) while the job's answer buys the Managed Lustre
    that restores it fastest per dollar of storage plus idle GPUs. Same job, same answer."""
    name = "mlperf-checkpoint-llama3-1t"
    one = calc.answer(name, site="gcp", storage=None, storage_units=None)
    ca = calc.cluster_answer(calc.cluster({name: 1}, site="gcp"))
    assert ca.best is not None and one.best is not None
    assert ca.best["option"] == one.best["option"] != "gcp-cloud-storage"
    assert float(ca.best["units"]) == float(one.best["units"])


def _presets() -> list[str]:
    return [s if isinstance(s, str) else s.name for s in calc.scenarios()]


@pytest.mark.parametrize("storage,units", [("nfs-25gbe", 2), ("gcp-cloud-storage", 1), ("gcp-pd-ssd", 1)])
def test_every_one_job_cluster_equals_its_plan_on_given_storage(storage: str, units: int) -> None:
    """Every scenario preset where both are defined: the 1-job cluster's utilisation is the plan's."""
    checked = 0
    for name in _presets():
        kw = {"storage": storage, "storage_units": units}
        try:
            p = calc.plan(name, **kw)
            a = calc.cluster_answer(calc.cluster({name: 1}, **kw))
        except InputError:
            continue  # refused by both paths alike (a site the option is not at, ...)
        assert float(a.jobs["gpu_utilization"].iloc[0]) == pytest.approx(p.gpu_utilization, abs=1e-9), name
        checked += 1
    assert checked >= 20


def test_every_one_job_cluster_buys_and_needs_what_its_plan_does() -> None:
    """Every one-job preset: the demand, the option and units bought and the utilisation on them
    equal the job's answer (its own storage kept, as the job keeps it: issue 38)."""
    checked = 0
    for name in _presets():
        p = calc.plan(name)
        if p.scenario.jobs != 1:
            continue  # copies of a job keep the cluster's coinciding bursts (one restarts, the others run)
        cp = calc.cluster({name: 1})
        checked += 1
        assert cluster_demand(cp) == plan_demand(p), name
        one, ca = calc.answer(p), calc.cluster_answer(cp)
        assert (ca.best or {}).get("option") == (one.best or {}).get("option"), name
        assert (ca.best or {}).get("units") == (one.best or {}).get("units"), name
        want = one.design_utilization if math.isfinite(one.design_utilization) else p.gpu_utilization
        assert float(ca.jobs["gpu_utilization"].iloc[0]) == pytest.approx(want, abs=1e-9), name
    assert checked >= 20


def test_chargeback_splits_the_rest_by_reads_plus_writes_and_iops_sized_drives_by_random_reads() -> None:
    # Hand-built loads (chargeback takes them as given): entry 0 reads 1 GB/s and writes 1 GB/s beside,
    # entry 1 reads 2 GB/s and writes nothing; both move 2 GB/s, so the $100 of other monthly cost
    # splits 1 : 1 (by reads alone it would be 1 : 2). 4 nvme-gen4 drives at $2,737.50 over 36 months.
    cp = calc.cluster({A: 1, B: 3})
    loads = [_Load(1e9, 1e9, 5000.0, 1000.0, 100e9), _Load(2e9, 0.0, 5000.0, 3000.0, 300e9)]
    bought = 4 * 2737.5 / 36
    row = {"option": "nvme-gen4", "units": 4, "limiting": "bandwidth", "monthly_total_usd": bought + 100}
    assert chargeback(cp, row, loads) == pytest.approx([bought / 2 + 50, bought / 2 + 50])
    # Sized by random reads: a drive seeks once per file opened (storage.random_reads), so the drives
    # split 1,000 : 3,000 opens/s; the $100 still 1 : 1.
    row["limiting"] = "iops"
    assert chargeback(cp, row, loads) == pytest.approx([bought / 4 + 50, bought * 3 / 4 + 50])
    # A minimum size: the drives split by GPUs, A's 8 against B's 3 copies x 8 = 24.
    row["limiting"] = "minimum"
    assert chargeback(cp, row, loads) == pytest.approx([bought / 4 + 50, bought * 3 / 4 + 50])
    # No load at all: every part splits equally.
    idle = _Load(0.0, 0.0, 0.0, 0.0, 0.0)
    row["limiting"] = "bandwidth"
    assert chargeback(cp, row, [idle, idle]) == pytest.approx([(bought + 100) / 2] * 2)


# ResNet-50 (presets/models.yaml: 25,557,032 parameters) x 14 B (2 weight + 12 optimizer bytes).
C50 = 25_557_032 * 14  # 357,798,448 B per checkpoint
A10 = A.replace(name="a10", checkpoint_interval_s="10 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.01)
B20 = B.replace(name="b20", checkpoint_interval_s="20 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.01)


def test_staggered_timeline_segment_by_segment() -> None:
    # A10 saves every 600 s within a 1 % stall: C / 6 s; B20 and C20 every 1,200 s: C / 12 s.
    # Staggered over the N = 4 sync-saving copies and the shortest interval (600 s): copy g starts at
    # g x 600 / 4 s: A10's two copies at 0 and 150 s, B20 at 300 s, C20 at 450 s; A10 saves again at
    # 600 and 750 s. Each save pauses its copy's reads (A10: 0.8 GB/s a copy; B20, C20: 2.4 GB/s)
    # for 6 or 12 s.
    c20 = B20.replace(name="c20")
    cp = calc.cluster({A10: 2, B20: 1, c20: 1}, saves="staggered")
    t = timeline(cp, 1200.0)
    assert list(t["time_s"]) == [0, 6, 150, 156, 300, 312, 450, 462, 600, 606, 750, 756]
    a_saving = [1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0]
    b_saving = [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    c_saving = [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    assert list(t["a10 reads"]) == pytest.approx([0.8e9 * (2 - s) for s in a_saving])
    assert list(t["a10 checkpoints"]) == pytest.approx([s * C50 / 6 for s in a_saving])
    assert list(t["b20 reads"]) == pytest.approx([2.4e9 * (1 - s) for s in b_saving])
    assert list(t["b20 checkpoints"]) == pytest.approx([s * C50 / 12 for s in b_saving])
    assert list(t["c20 checkpoints"]) == pytest.approx([s * C50 / 12 for s in c_saving])


def test_aligned_timeline_segment_by_segment_and_a_day_by_default() -> None:
    # Aligned: every copy starts at 0 and every interval after; both A10 copies write C / 6 s each for
    # 6 s and read nothing, B20 writes for 12 s.
    cp = calc.cluster({A10: 2, B20: 1})
    t = timeline(cp, 1200.0)
    assert list(t["time_s"]) == [0, 6, 12, 600, 606]
    assert list(t["a10 reads"]) == pytest.approx([0, 1.6e9, 1.6e9, 0, 1.6e9])
    assert list(t["a10 checkpoints"]) == pytest.approx([2 * C50 / 6, 0, 0, 2 * C50 / 6, 0])
    assert list(t["b20 reads"]) == pytest.approx([0, 0, 2.4e9, 2.4e9, 2.4e9])
    assert list(t["b20 checkpoints"]) == pytest.approx([C50 / 12, C50 / 12, 0, 0, 0])
    # A day (86,400 s) by default: 144 A10 saves (0 ... 85,800 s) start and end, 72 B20 saves start
    # with every other one and end 12 s in: 144 + 144 + 72 segment edges before 86,400 s, the last
    # A10's save ending at 85,806 s.
    day = timeline(cp)
    assert len(day) == 360 and day["time_s"].iloc[-1] == 85_806


def test_a_job_that_does_not_save_has_no_saves_and_does_not_shift_the_others() -> None:
    # A (no checkpoints) before A10: A reads 0.8 GB/s all the time and writes nothing; A10's two copies
    # still start at 0 and 300 s (N = 2 sync-saving copies over 600 s).
    cp = calc.cluster({A: 1, A10: 2}, saves="staggered")
    t = timeline(cp, 600.0)
    assert list(t["time_s"]) == [0, 6, 300, 306]
    assert list(t["a reads"]) == pytest.approx([0.8e9] * 4)
    assert list(t["a checkpoints"]) == [0.0] * 4
    assert list(t["a10 checkpoints"]) == pytest.approx([C50 / 6, 0, C50 / 6, 0])


def test_a_save_larger_than_its_jobs_reads_adds_the_difference() -> None:
    # A job reading 8 GPUs x 1,000/s x 1 kB = 8 MB/s that saves C every 600 s within a 1 % stall:
    # w = C / 6 s = 59,633,074.7 B/s a copy. Two copies, aligned: 2 w - 16 MB/s (both pause their
    # reads); staggered: one save at a time, w - 8 MB/s (the saving copy's reads), more than the
    # time average 2 C / 600 s = 1.19 MB/s.
    small = job("s", "1 kB", checkpoint_interval_s="10 min", checkpoint_mode="sync", checkpoint_stall_fraction=0.01)
    w = C50 / 6
    assert calc.cluster({small: 2}).write_need_bytes_per_s == pytest.approx(2 * w - 16e6)
    assert calc.cluster({small: 2}, saves="staggered").write_need_bytes_per_s == pytest.approx(w - 8e6)
    assert calc.cluster({small: 2}).checkpoint_capacity_bytes == pytest.approx(2 * 3 * C50)
    assert calc.cluster({A: 2}).checkpoint_capacity_bytes == 0.0


def test_combined_figures_print_in_their_units() -> None:
    # TOTALS declares each figure's kind: reads in bytes/s, requests as a count with its unit, data in bytes.
    assert fmt_total("read_bytes_per_s", 7.2e9) == "7.2 GB/s"
    assert fmt_total("read_iops", 40_000) == "40,000 reads/s"
    assert fmt_total("metadata_ops_per_s", 1_500) == "1,500 ops/s"
    assert fmt_total("stored_bytes", 400e9) == "400 GB"


def test_a_cluster_that_never_saves_writes_nothing_all_day() -> None:
    # A and B keep no checkpoints: no write need either way, and the day is one segment of reads.
    for saves in ("aligned", "staggered"):
        cp = calc.cluster({A: 2, B: 1}, saves=saves)
        assert cp.write_need_bytes_per_s == 0.0 and cp.peak_write_bytes_per_s == 0.0
        t = timeline(cp)
        assert list(t["time_s"]) == [0.0]
        assert list(t["a reads"]) == [1.6e9] and list(t["b reads"]) == [2.4e9]
        assert list(t["a checkpoints"]) == [0.0] and list(t["b checkpoints"]) == [0.0]


def test_one_job_starting_reads_its_first_epoch_beside_the_others_steady_reads() -> None:
    # ac: A with the page cache on and a 10,000 x 100 kB = 1 GB dataset that fits in node RAM: after its
    # first epoch it reads nothing; 2 copies read 2 x 0.8 GB/s in their first epochs. B reads 2.4 GB/s
    # steadily (no cache). Steady: 0 + 2.4 = 2.4 GB/s. One ac starting: + 1.6 / 2 = 0.8 GB/s -> 3.2 GB/s
    # (B starting adds nothing: its first epoch is its steady rate). All at once: 1.6 + 2.4 = 4 GB/s.
    ac = A.replace(name="ac", page_cache=True, dataset_examples=10_000)
    cp = calc.cluster({ac: 2, B: 1})
    assert cp.read_bytes_per_s == pytest.approx(2.4e9)
    assert cp.start_burst_read_bytes_per_s == pytest.approx(3.2e9)
    assert cp.first_epoch_read_bytes_per_s == pytest.approx(4.0e9)


def test_explain_repr_and_the_combined_load_line_add_up_by_hand() -> None:
    # 3 x A + 2 x B: reads 3 x 0.8 = 2.4 and 2 x 2.4 = 4.8 GB/s, 7.2 in all; 24,000 + 16,000 reads/s;
    # no saves; datasets 1e6 x 100 kB = 100 GB and 1e6 x 300 kB = 300 GB.
    cp = calc.cluster({A: 3, B: 2})
    assert cp.explain().splitlines()[2:6] == [
        "  a: 3 x, 24 GPUs, reads 2.4 GB/s, 24,000 reads/s, checkpoint writes 0 B/s (none), dataset a",
        "  b: 2 x, 16 GPUs, reads 4.8 GB/s, 16,000 reads/s, checkpoint writes 0 B/s (none), dataset b",
        "read_bytes_per_s = sum of reads = 2.4 GB/s + 4.8 GB/s = 7.2 GB/s",
        "read_iops = 24,000 reads/s + 16,000 reads/s = 40,000 reads/s",
    ]
    assert (
        cp.explain().splitlines()[-1]
        == "stored_bytes = datasets once each (a 100 GB, b 300 GB) + checkpoints kept 0 B = 400 GB"
    )
    assert repr(cp) == (
        "ClusterPlan(cluster: 5 jobs of 2 types on 40 GPUs; reads 7.2 GB/s, writes 0 B/s aligned / 0 B/s average, "
        "stored 400 GB)"
    )
    combined = [x for x in calc.cluster_answer(cp).lines() if x.startswith("Combined load")]
    assert combined == [
        "Combined load (aligned saves): reads 7.2 GB/s (40,000 reads/s, 0 metadata ops/s) + checkpoint writes 0 B/s "
        "= 7.2 GB/s; write peaks 0 B/s aligned, 0 B/s on average; first epochs 7.2 GB/s if all start together; "
        "stored 400 GB (each dataset once)."
    ]


def test_cluster_link_round_trips_names_that_need_quotes_or_hold_an_equals_sign() -> None:
    # A cluster named "none" (an off-word: written quoted, read back as the name) and a job named "x=y"
    # (the value after the first "=" is the value).
    c = as_cluster({A.replace(name="x=y"): 2, calc.scenario("mlperf-unet3d-h100"): 1}, name="none")
    params = c.to_params()
    assert params["cluster_name"] == '"none"'
    # The unchanged preset is written as its name and count only.
    assert params["cluster"].split(";")[1] == "mlperf-unet3d-h100:1"
    back = Cluster.from_params(params)
    assert back == c and back.name == "none" and back.jobs[0].scenario.name == "x=y"


def test_cluster_documents_and_links_name_the_bad_part() -> None:
    with pytest.raises(InputError) as e:
        Cluster.from_dict({"jobs": []})
    assert (e.value.field, e.value.message) == (
        "cluster: jobs",
        "expected a list of {scenario: NAME, count: N, set: {...}}",
    )
    with pytest.raises(InputError) as e:
        Cluster.from_dict({"jobs": [{"scenario": "mlperf-unet3d-h100"}], "shared": [1]})
    assert (e.value.field, e.value.message) == ("cluster: shared", "expected a mapping of inputs, got [1]")
    with pytest.raises(InputError) as e:
        Cluster.from_params({"cluster": "mlperf-unet3d-h100:1", "cluster_shared": "storage"})
    assert (e.value.field, e.value.message) == ("cluster_shared", "expected key=value, got 'storage'")


def test_command_line_without_jobs_and_the_json_output_keys() -> None:
    from calc.cli import command_output
    from calc.cluster_input import from_command_line

    with pytest.raises(InputError) as e:
        from_command_line(None, [], {})
    assert (e.value.field, e.value.message) == (
        "cluster",
        "give a cluster YAML file, a cluster preset or --job preset:count",
    )
    data = json.loads(command_output(as_cluster({A: 3, B: 2}), "json"))
    assert list(data) == ["cluster", "totals", "answer", "best", "growth", "jobs"]
    assert [j["job"] for j in data["jobs"]] == ["a", "b"]
    assert list(data["best"]) == ["option", "units", "unit", "monthly_total_usd"]
    assert data["totals"]["read_bytes_per_s"] == pytest.approx(7.2e9)
    table = command_output(as_cluster({A: 3, B: 2}), "table")
    # the report's table (calc.report.cluster_jobs_table), so the CLI and the meeting's report read alike
    header = "Job Count GPUs Dataset Reads Reads/s Save bursts (all copies) Utilisation (shared) Utilisation (alone) "
    header += "Idle GPU cost / month Storage chargeback / month"
    assert any(" ".join(line.split()) == header for line in table.splitlines())


def test_growth_in_jobs_is_due_when_the_reads_outgrow_the_drives() -> None:
    # 8 GPUs x 1,000/s x 1 MB = 8 GB/s of 1 MB reads; a Gen4 NVMe reads 1 MB in 1/900,000 s - 4 KiB /
    # 6.5 GB/s + 1 MB / 6.5 GB/s = 154.3 us: 6.48 GB/s. Month 0: 8 / 6.48 = 1.23 -> 2 data drives,
    # mirrored = 4 bought. No growth: 4 serve to the horizon. Jobs +100 % a year: 8 x 2^(m/12) GB/s
    # passes 2 drives' 12.96 GB/s when m > 12 log2(1.62) = 8.35: month 9, 3 data drives in RAID 6 = 5;
    # month 24: 32 GB/s / 6.48 = 4.94 -> 5 data drives + 2 parity = 7.
    big = job("big", "1 MB", dataset_examples=1_000_000)
    flat = calc.cluster({big: 1}, horizon_months=24, job_growth_per_year=0.0, data_growth_per_year=0.0)
    g = growth(flat, {"option": "nvme-gen4", "units": 4})
    assert g["next_purchase_month"] is None and list(g["months"]["units"]) == [4] * 25
    assert (
        g["text"]
        == "Growth (jobs +0% and data +0% a year): 4 drives of nvme-gen4 still serve in 24 months; no purchase due."
    )
    grows = calc.cluster({big: 1}, horizon_months=24, job_growth_per_year=1.0, data_growth_per_year=0.0)
    g = growth(grows, {"option": "nvme-gen4", "units": 4}, owned={"option": "nvme-gen4", "units": 4})
    assert g["next_purchase_month"] == 9 and g["units_at_horizon"] == 7
    assert g["text"] == (
        "Growth (jobs +100% and data +0% a year): buy 4 drives of nvme-gen4 now; the next purchase is due in month 9 "
        "(5 drives needed, limited by bandwidth); 7 drives by month 24. Your 4 drives of nvme-gen4 serve until "
        "month 9: then 5 drives are needed (limited by bandwidth); buy more before then."
    )


def test_growth_says_a_stepped_store_in_its_own_unit() -> None:
    # FSx for Lustre is ordered in 2,400 GiB steps (2.34375 TiB): growth truncated 11.71875 TiB to "buy 11 x".
    # The job opens 8 GPUs x 1,000 files/s = 8,000 files/s; at Lustre's 2 metadata ops per open and 2 ops per
    # metadata IOPS that is 8,000 IOPS: above the 4.6875 TiB tier's 6,000, within the 11.71875 TiB tier's
    # 12,000 (presets/storage.yaml metadata_scaling). Its 8 GB/s at 1,000 MB/s per TiB need only 8 TiB.
    big = job("big", "1 MB", dataset_examples=1_000_000)
    flat = calc.cluster({big: 1}, horizon_months=24, job_growth_per_year=0.0, data_growth_per_year=0.0)
    g = growth(flat, {"option": "aws-fsx-lustre-ssd-1000", "units": 11.71875})
    assert g["units_now"] == 11.71875 and list(g["months"]["units"]) == [11.71875] * 25
    assert set(g["months"]["limiting"]) == {"metadata"}
    assert g["text"] == (
        "Growth (jobs +0% and data +0% a year): 11.72 TiB of aws-fsx-lustre-ssd-1000 still serve in 24 months; "
        "no purchase due."
    )


def test_a_short_shared_store_names_each_slowed_job_and_its_idle_cost() -> None:
    # As in the undersized test: 1.6 GB/s for 3.2 GB/s of reads, shared by demand: both at 50 %.
    # A was at 100 % alone, B at 1.6 / 2.4 = 67 %. Each idles 8 GPUs x 0.5 x 720 h = 2,880 GPU-hours
    # at $6.88 (presets/gpus.yaml, H100-SXM) = $19,814.40 a month.
    cp = calc.cluster({A: 1, B: 1}, storage_bytes_per_s="1.6 GB/s")
    assert list(cp.to_frame()["gpu_utilization_alone"]) == pytest.approx([1.0, 2 / 3])
    assert calc.answer(cp).lines()[-2:] == [
        "a: its 8 GPUs run at 50% on the shared storage (100% alone), $19,814 a month.",
        "b: its 8 GPUs run at 50% on the shared storage (67% alone), $19,814 a month.",
    ]


def test_a_shared_store_too_small_for_the_data_says_so() -> None:
    # One 7.68 TB Gen4 drive (storage.yaml) for A's 100 GB and 1e8 x 300 kB = 30 TB of B's: 30.1 TB.
    # A bought drive holds data to the fill limit, 80 % of 7.68 TB = 6.144 TB, as the engine sizes it.
    big_b = B.replace(dataset_examples=100_000_000)
    a = calc.answer(calc.cluster({A: 1, big_b: 1}, storage="nvme-gen4", storage_units=1))
    assert a.own.endswith(
        " It holds 6.14 TB of data (7.68 TB filled to at most 80%); the cluster stores 30.1 TB: too small."
    )
    # Issue 37's sweep of fill limits: 100 GB + 23e6 x 300 kB = 7.0 TB fits the drive's 7.68 TB but is
    # 91 % of it, past the 80 % limit: too small (it said nothing before); 6.0 TB (78 %) fits; with
    # fill_limit 0.95 (7.296 TB of data) 7.0 TB fits too.
    seven = calc.cluster({A: 1, B.replace(dataset_examples=23_000_000): 1}, storage="nvme-gen4", storage_units=1)
    assert seven.stored_bytes == pytest.approx(7.0e12)
    assert calc.answer(seven).own.endswith(": too small.")
    six = calc.cluster({A: 1, B.replace(dataset_examples=19_666_667): 1}, storage="nvme-gen4", storage_units=1)
    assert six.stored_bytes == pytest.approx(6.0e12, rel=1e-6) and not calc.answer(six).own.endswith(": too small.")
    loose = calc.cluster(seven.cluster, fill_limit=0.95)
    assert not calc.answer(loose).own.endswith(": too small.")
    # A store not bought as drives (an FSx file system, billed as provisioned) holds its capacity.
    fsx = calc.cluster({A: 1, big_b: 1}, storage="aws-fsx-lustre-ssd-1000", storage_units=24)
    assert calc.answer(fsx).own.endswith("; the cluster stores 30.1 TB: too small.")
    assert " of data (" not in calc.answer(fsx).own


def test_jobs_that_never_save_add_no_writes_to_the_shared_store() -> None:
    # Staggered, with no saves at all: every entry's write share is exactly 0 B/s (not a 1 B/s floor).
    cp = calc.cluster({A: 1, B: 2}, saves="staggered")
    assert [_entry_load(cp, i).write for i in range(2)] == [0.0, 0.0]


def test_cluster_demand_reads_the_mean_request_of_all_jobs() -> None:
    # A reads 0.8 GB/s in 8,000 reads/s (100 kB each), B 2.4 GB/s in 8,000 (300 kB): the store sees
    # 3.2 GB/s / 16,000 reads/s = 200 kB a read, not the first job's 100 kB.
    d = cluster_demand(calc.cluster({A: 1, B: 1}))
    assert d.request_bytes == pytest.approx(200e3)
    assert d.read_bytes_per_s == pytest.approx(3.2e9) and d.read_iops == pytest.approx(16_000)
    # Nothing saved, so nothing restored: the design point is the steady reads.
    assert d.design_point == "steady reads"


def test_staggered_async_drains_add_exactly_their_drain() -> None:
    # Only asynchronous saves (the Llama 3 8B preset's auto mode): no blocking save to stagger, so the
    # write need is one drain at its burst, C / 900 s exactly, beside the reads it does not pause.
    cp = calc.cluster({calc.scenario("llama3-8b-pretrain-8xh100", checkpoint_mode="auto"): 1}, saves="staggered")
    assert cp.write_need_bytes_per_s == pytest.approx(C / 900, rel=1e-12)


@pytest.mark.parametrize(
    ("name", "changes", "hand"),
    [
        # Llama 3 8B saving asynchronously (auto): its drain within half of 1,800 s, C / 900 s =
        # 124,915,174.97 B/s, beside its reads.
        ("llama3-8b-pretrain-8xh100", {}, lambda reads: reads + C / 900),
        # The same job saving synchronously within 2 % of 30 min: W30 = C / 36 s, instead of its reads.
        ("llama3-8b-pretrain-8xh100", {"checkpoint_mode": "sync"}, lambda reads: max(reads, W30)),
        # A (0.8 GB/s of reads) saving 357,798,448 B every 10 min within 1 %: 59.6 MB/s, below the reads.
        (
            "a",
            {"checkpoint_interval_s": "10 min", "checkpoint_mode": "sync", "checkpoint_stall_fraction": 0.01},
            lambda reads: max(reads, 25_557_032 * 14 / 6.0),
        ),
    ],
)
def test_a_job_its_one_job_cluster_and_its_sweep_row_agree_on_saves_beside_reads(
    name: str, changes: dict[str, object], hand: Callable[[float], float]
) -> None:
    """Issue 37: one rule for a save beside the reads, at the burst the job is sized for, so the
    plan, the engine's demand, the same job as a 1-job cluster (aligned or staggered) and its sweep
    row need the same bandwidth. Before, a 1-job cluster counted an async save at its average, C / T."""
    sc = (A if name == "a" else calc.scenario(name)).replace(**changes)
    p = calc.plan(sc)
    need = hand(p.read_bytes_per_s)
    assert p.storage_need_bytes_per_s == pytest.approx(need, rel=1e-12)
    d = plan_demand(p)
    assert d.write_bytes_per_s == p.checkpoint_save_burst_bytes_per_s  # the engine buys the same burst
    assert d.need_bytes_per_s == max(p.storage_need_bytes_per_s, p.restore_read_bytes_per_s)
    for saves in ("aligned", "staggered"):
        cp = calc.cluster({sc: 1}, saves=saves)
        assert cp.storage_need_bytes_per_s == p.storage_need_bytes_per_s, saves
        assert cp.write_need_bytes_per_s == pytest.approx(need - p.read_bytes_per_s, rel=1e-9, abs=1e-6), saves
        assert cluster_demand(cp).need_bytes_per_s == d.need_bytes_per_s
    row = calc.sweep(sc, gpus_per_job=[sc.gpus_per_job])
    assert float(row["storage_need_bytes_per_s"].iloc[0]) == p.storage_need_bytes_per_s


@pytest.mark.parametrize(
    "name,site",
    [
        # its own storage (nvme-gen4, on-prem) sets its site: the cluster bought a $134 GCP bucket
        ("llama3-8b-pretrain-8xh100", None),
        ("llama3-8b-pretrain-8xh100", "aws"),
        ("beast-nfs-shop", None),  # 5 copies of one entry: its storage's site kept too
        ("mlperf-checkpoint-llama3-8b", "aws"),
        ("mlperf-unet3d-h100", "aws"),
        ("mlperf-unet3d-h100", None),  # no site: both buy on-prem, assumed, each other site priced (issue 39)
    ],
)
def test_a_one_job_cluster_is_its_job_storage_and_site_included(name: str, site: str | None) -> None:
    kw = {"site": site} if site else {}
    one, ca = calc.answer(name, **kw), calc.cluster_answer(calc.cluster({name: 1}, **kw))
    assert one.best is not None and ca.best is not None
    assert (ca.best["option"], ca.best["site"]) == (one.best["option"], one.best["site"]), name
    assert float(ca.best["monthly_total_usd"]) == pytest.approx(float(one.best["monthly_total_usd"]), rel=1e-12)
    assert ca.monthly_usd == pytest.approx(float(one.best["monthly_total_usd"]), rel=1e-12)  # chargeback: all of it
    assert len(ca.site_lines) == len(one.site_lines)  # a line per site where the site was assumed, else none


def test_the_8b_pretrain_cluster_of_one_buys_its_hdds() -> None:
    # The job reads 8.18 TB and writes 1.97 PB a year: 1.978 PB / 550 TB rated per 7,200 rpm drive = 3.6,
    # so 4 data drives, + 2 for RAID 6 = 6 drives (4 x 24 TB = 96 TB usable), on-prem as its nvme-gen4 says.
    ca = calc.cluster_answer(calc.cluster({"llama3-8b-pretrain-8xh100": 1}))
    assert ca.best is not None
    assert (ca.best["option"], ca.best["units"], ca.best["site"]) == ("hdd-7200", 6, "on-prem")
    assert float(ca.best["capacity_bytes"]) == pytest.approx(4 * 24e12)


# --- The cluster's coincident bursts (issue 38 item 2) ------------------------------------------

_C8 = 8_030_261_248 * 14  # Llama 3 8B under MLPerf's 14 B/param layout: 112,423,657,472 B per save


@pytest.mark.parametrize(
    "restarts,saves,point,need",
    [
        # each copy drains asynchronously at C / (0.5 x 1,800 s) = 124.9 MB/s (the burst it is sized
        # for, not its average C / 1,800 s = 62.5 MB/s); a restart reads C within the 5 min target:
        # C / 300 s = 374.7 MB/s a copy
        ("one", "aligned", "restart of one job while the others run", 2 * _C8 / 900 + _C8 / 300),  # 624.6 MB/s
        ("one", "staggered", "restart of one job while the others run", _C8 / 900 + _C8 / 300),  # 499.7 MB/s
        # after an outage both copies read their checkpoints at once, and neither reads nor saves:
        # 2 x 374.7 = 749.5 MB/s, above the 249.8 MB/s of both saving (the boundary: above it the outage sizes)
        ("all", "aligned", "restart of every job after an outage", 2 * _C8 / 300),
        ("all", "staggered", "restart of every job after an outage", 2 * _C8 / 300),
    ],
)
def test_the_burst_policy_says_which_jobs_restore_together(restarts: str, saves: str, point: str, need: float) -> None:
    cluster_module = sys.modules["calc.cluster"]
    cp = calc.cluster({"mlperf-checkpoint-llama3-8b": 2}, restarts=restarts, saves=saves)
    assert cp.plans[0].checkpoint_bytes == _C8
    d = cluster_module.cluster_demand(cp)
    assert d.design_point == point
    assert d.need_bytes_per_s == pytest.approx(need, rel=1e-9)
    said = [x for x in calc.answer(cp, site="aws").lines() if x.startswith("Sized for the ")]
    assert said == [cluster_module.burst_sentence(cp)] and said[0].startswith(f"Sized for the {point}: ")
    assert f"restarts: {restarts}, saves: {saves}." in said[0]


def test_steady_saves_size_a_cluster_whose_restores_are_small() -> None:
    # The second term: with restarts "all", sum n x restore below the steady need keeps the steady
    # point. 1 copy: restore C / 300 = 374.7 MB/s > its drain 124.9 MB/s, so the restart sizes it;
    # a 1-job cluster's demand is its plan's (the job's own restore read design point)
    cluster_module = sys.modules["calc.cluster"]
    cp = calc.cluster({"mlperf-checkpoint-llama3-8b": 1}, restarts="all")
    assert cluster_module.design_points(cp)["restart of every job after an outage"] == pytest.approx(_C8 / 300)
    assert cluster_module.cluster_demand(cp).design_point == "restore read"
    # a job that saves nothing restores nothing: the steady reads size it whatever the policy
    cp = calc.cluster({"beast-imagenet-4xv100": 3}, restarts="all")
    points = cluster_module.design_points(cp)
    assert points["restart of every job after an outage"] == 0.0
    assert cluster_module.cluster_demand(cp).design_point == "steady reads"


def test_the_restart_policy_is_an_input_checked_and_kept() -> None:
    with pytest.raises(InputError) as e:
        calc.cluster({"mlperf-checkpoint-llama3-8b": 2}, restarts="some")
    assert e.value.field == "restarts" and "one" in e.value.message and "all" in e.value.message
    c = calc.cluster({"mlperf-checkpoint-llama3-8b": 2}, restarts="all").cluster
    assert Cluster.from_yaml(c.to_yaml()) == c and "restarts: all" in c.to_yaml()
    assert Cluster.from_params(c.to_params()) == c and c.to_params()["cluster_restarts"] == "all"
