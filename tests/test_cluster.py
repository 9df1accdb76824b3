"""The cluster plan (calc/cluster.py): combined demand, saves aligned and staggered, datasets stored
once, a short system shared by policy, chargeback, growth, and the YAML / link / CLI round trips.

Expected values are worked out by hand in the comments from the inputs and the preset figures
they name (presets/models.yaml, presets/storage.yaml), never pasted from the code's output.
"""

from __future__ import annotations

import json
import math

import pytest

import calc
from calc.cli import run
from calc.cluster import Cluster, ClusterAnswer, ClusterPlan, as_cluster, chargeback, growth, load, share, timeline
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
    # = 32 x C; 3 jobs x 32 x 112,423,657,472 B = 10,792,671,117,312 B. Total 11,337,275,277,312 B.
    cp = _llm_cluster("aligned")
    assert cp.stored_bytes == pytest.approx(16_620_000 * 32_768 + 3 * 32 * C, rel=1e-9)


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
    # Idle GPU-hours: B's 8 GPUs x (1 - 1/3) x 730 h = 3,893.3 h a month.
    assert float(m.jobs["idle_gpu_hours_per_month"].iloc[1]) == pytest.approx(8 * (2 / 3) * 730)


def test_share_water_filling_by_hand() -> None:
    # Loads 0.2, 0.6, 0.6 of capacity (sum 1.4) on 1, 1, 2 GPUs. Equal share per GPU 1/4:
    # job 0 needs 0.2 < 0.25 -> full; left 0.8 over 3 GPUs = 0.2667 per GPU: job 1 (0.6 on 1 GPU)
    # gets 0.2667 -> 0.444, job 2 (0.6 on 2) gets 0.5333 -> 0.889.
    got = share([0.2, 0.6, 0.6], [1, 1, 2], "max-min")
    assert got == pytest.approx([1.0, 0.8 / 3 / 0.6, 2 * 0.8 / 3 / 0.6])
    assert share([0.2, 0.6, 0.6], [1, 1, 2], "demand") == pytest.approx([1 / 1.4] * 3)
    assert share([0.0, 1.5], [1, 1], "demand") == pytest.approx([1.0, 1 / 1.5])  # no load, not slowed
    assert share([0.2, 0.3], [1, 1], "demand") == [1.0, 1.0]


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


def test_chargeback_adds_up_to_the_answer_cost() -> None:
    a = calc.answer(calc.cluster({A: 2, B: 1}))
    assert a.best is not None
    assert a.monthly_usd == pytest.approx(float(a.best["monthly_total_usd"]))


def test_growth_says_when_the_next_purchase_is_due() -> None:
    # One job A with 1.5 x 7.68 TB = 11.52 TB of data on nvme-gen4 (7.68 TB a drive): 2 drives now.
    # Data doubles a year: 1.5 x 2^(m/12) > 2 first when m > 12 log2(4/3) = 4.98 -> month 5;
    # month 24: 1.5 x 4 = 6 drives. Bandwidth (0.8 / 6.5 GB/s) stays far below capacity.
    a = job("a", "100 kB", dataset_examples=115_200_000)
    cp = calc.cluster({a: 1}, horizon_months=24, data_growth_per_year=1.0)
    g = growth(cp, {"option": "nvme-gen4", "units": 2})
    assert g["next_purchase_month"] == 5
    assert g["units_at_horizon"] == 6
    assert "month 5" in g["text"]
    assert (
        growth(calc.cluster({a: 1}, horizon_months=4, data_growth_per_year=1.0), {"option": "nvme-gen4", "units": 2})[
            "next_purchase_month"
        ]
        is None
    )


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
    assert isinstance(calc.answer(A), calc.sizing.Answer)


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
