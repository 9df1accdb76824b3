"""Issue 18: answers a practitioner would sign (site, every charge, drives bought as a system,
drive class, shared versus single-attach storage, and an answer that serves the job).

Every expected figure is worked by hand in the comments from presets/storage.yaml prices.
"""

from __future__ import annotations

import math
import re

import pytest

import calc
from calc import engine
from calc import storage as st
from calc.answers import gpu_hours
from calc.engine import checkpoint_writes_per_month
from calc.errors import InputError
from calc.site import SITE_WORDS, job_site
from calc.units import fmt_usd

MONTH_S = 30 * 86400


def _row(df, option):  # type: ignore[no-untyped-def]
    return df[df["option"] == option].iloc[0]


# ------------------------------------------------------------------ the site


def test_an_on_prem_dgx_cluster_is_answered_on_prem() -> None:
    # Before: "62 accounts of azure-blob" for a DGX cluster (460 GB/s over a WAN, egress unpriced).
    a = calc.answer("mlperf-checkpoint-llama3-1t", server="DGX-H100")
    assert a.site == "on-prem" and a.design is not None and a.design["site"] == "on-prem"
    for r in (a.best, *a.runners_up):
        assert r is not None and r["site"] in ("on-prem", "any"), r["option"]
    # Cloud rows are refused with the reason, not silently dropped.
    blob = _row(calc.recommend(a.plan), "azure-blob")
    assert not blob["feasible"] and blob["limiting"] == "site" and "allow_other_site" in blob["why_not"]
    # Before: "1 bucket of gcp-cloud-storage" for an on-prem DGX.
    b = calc.answer("resnet50-8xh100-imagenet", server="DGX-H100")
    assert b.design is not None and b.design["site"] == "on-prem"
    assert "gcp" not in b.headline and "aws" not in b.headline and "azure" not in b.headline


def test_a_cloud_job_is_answered_in_its_cloud() -> None:
    # CLIP's data sits in S3 (storage aws-s3-standard): before, it was told to buy 7 HDDs.
    a = calc.answer("clip-vitl14-datacomp-webdataset")
    assert job_site(a.plan.scenario) == "aws" and a.design is not None and a.design["site"] == "aws"
    assert "hdd" not in a.headline
    # A p5 instance is in AWS too, whatever the storage.
    b = calc.answer("resnet50-8xh100-imagenet", server="aws-p5.48xlarge")
    assert b.site == "aws" and b.design is not None and b.design["site"] == "aws"
    # ... and a site that contradicts the server is refused, naming both (issue 32: it bought a
    # GCP volume for an AWS instance).
    with pytest.raises(calc.InputError, match=r"site gcp contradicts server aws-p5\.48xlarge"):
        calc.answer("resnet50-8xh100-imagenet", server="aws-p5.48xlarge", site="gcp")


def test_an_unknown_site_buys_on_prem_and_prices_each_site_never_a_mix() -> None:
    # issue 39: no site given: one answer, at the default site (on-prem), and each other site's price
    a = calc.answer("mlperf-checkpoint-llama3-70b")
    assert a.site == "on-prem" and a.site_assumed
    assert [d["site"] for d in a.site_lines] == ["on-prem", "aws", "gcp", "azure"]
    assert a.headline.startswith("Buy on-prem (site not given): ")
    for d in a.site_lines:
        assert st.option(d["store"]).site in (d["site"], "any")
        if d["local"]:
            assert d["site"] == "on-prem"
    # The chosen design is on-prem's, as an on-prem answer's; the other sites are said with their totals.
    assert a.design is not None and a.design == calc.answer("mlperf-checkpoint-llama3-70b", site="on-prem").design
    said = a.lines()[1]
    for d in a.site_lines[1:]:
        assert f"{SITE_WORDS[d['site']]} {fmt_usd(d['monthly_total_usd'])}" in said


def test_storage_at_another_site_needs_the_link_and_pays_egress() -> None:
    base = {"server": "DGX-H100", "allow_other_site": True}
    # No link given: another site cannot serve.
    r = _row(calc.recommend("gpt-1b-h100-tokens", **base), "aws-s3-standard")
    assert not r["feasible"] and r["limiting"] == "site link"
    # With a 100 Gb/s link, S3 serves the on-prem DGX and every byte read leaves AWS at $0.09/GB.
    p = calc.plan("gpt-1b-h100-tokens", site_link_bytes_per_s="100 Gb/s", **base)
    r = _row(calc.recommend(p), "aws-s3-standard")
    assert r["feasible"]
    # read_bytes_per_s x 30 days / 1e9 x $0.09 (no checkpoints in this preset)
    assert checkpoint_writes_per_month(p) == (0.0, 0.0)
    assert r["monthly_egress_usd"] == pytest.approx(p.read_bytes_per_s * MONTH_S / 1e9 * 0.09)
    assert r["monthly_total_usd"] == pytest.approx(
        r["monthly_rent_usd"] + r["monthly_read_usd"] + r["monthly_write_usd"] + r["monthly_egress_usd"]
    )


# ------------------------------------------------------------------ every charge


def test_llama3_70b_checkpoint_write_charges_on_efs_and_s3() -> None:
    # Llama 3 70B: 69,882,617,856 parameters x (2 + 12) B = 978,356,649,984 B per checkpoint
    # (911.2 GiB), every 30 min: 30 x 86,400 / 1,800 = 1,440 saves a month = 1.4088e15 B written.
    p = calc.plan("mlperf-checkpoint-llama3-70b", site="aws")
    ckpt = 69_882_617_856 * 14
    written = 1440 * ckpt
    assert written == pytest.approx(1.408833576e15, rel=1e-9)
    rec = calc.recommend(p)
    # EFS Elastic: $0.06 per GB written: 1,408,833.6 GB x 0.06 = $84,530.01 a month.
    efs = _row(rec, "aws-efs-elastic")
    assert efs["monthly_write_usd"] == pytest.approx(written / 1e9 * 0.06, rel=1e-9)
    assert efs["monthly_write_usd"] == pytest.approx(84530.01, abs=0.01)
    # S3 Standard: 64 ranks write 978,356,649,984 / 64 = 15,286,822,656 B each, in 16 MiB parts:
    # ceil(15,286,822,656 / 16,777,216) = ceil(911.17) = 912 PUTs per rank per save;
    # 1,440 x 64 x 912 = 84,049,920 PUTs x $0.005 per 1,000 = $420.25 a month.
    s3 = _row(rec, "aws-s3-standard")
    assert s3["monthly_write_usd"] == pytest.approx(84_049_920 * 0.005 / 1000, rel=1e-9)
    # S3 Express: 84,049,920 PUTs x $0.00113 per 1,000 = $94.98, plus the upload charge
    # 1,408,833.6 GB x $0.0032 = $4,508.27: $4,603.24.
    ex = _row(rec, "aws-s3-express")
    assert ex["monthly_write_usd"] == pytest.approx(84_049_920 * 0.00113 / 1000 + written / 1e9 * 0.0032, rel=1e-9)
    # The writes are in the monthly total, beside rent and reads.
    for r in (efs, s3, ex):
        assert r["monthly_total_usd"] == pytest.approx(
            r["monthly_rent_usd"] + r["monthly_read_usd"] + r["monthly_write_usd"] + r["monthly_egress_usd"]
        )


def test_answer_charges_add_up_to_the_chosen_total() -> None:
    for name in ("mlperf-checkpoint-llama3-70b", "clip-vitl14-datacomp-webdataset", "beast-nfs-shop"):
        a = calc.answer(name)
        d = a.design
        assert d is not None
        c = a.charges
        assert set(c) == {"rent", "reads", "writes", "egress", "power", "support", "purchases"}
        assert sum(c.values()) == pytest.approx(d["monthly_total_usd"], rel=1e-9)
        assert a.deciding.startswith("Deciding:")


# ------------------------------------------------------------------ drives bought as a system


def test_clip_on_prem_hdds_within_their_rated_workload() -> None:
    # CLIP on 8 GPUs reads 447.28 MB/s around the clock (issue 41's step-time fit: 487.62 images/s
    # per GPU x 8 x 114,660 B; 417.90 MB/s with issue 29's): x 365.25 d = 14.115 PB a year. An Exos is rated
    # for 550 TB a year of reads and writes: 14,115.2 / 550 = 25.66 -> 26 data drives, RAID 6 in
    # ceil(26 / 10) = 3 groups (10 + 2 at most): 26 + 6 = 32 drives (before: 11 drives moving 1,199 TB a year each).
    p = calc.plan("clip-vitl14-datacomp-webdataset", site="on-prem")
    assert p.read_bytes_per_s * 365.25 * 86400 == pytest.approx(14.1152e15, rel=1e-4)
    hdd = _row(calc.recommend(p), "hdd-7200")
    assert hdd["units"] == 32 and hdd["limiting"] == "workload" and hdd["protection"] == "raid6"
    # each of 32 drives moves 14,115.2 / 32 = 441.1 TB a year, within 550
    assert hdd["drive_workload_bytes_per_year"] == pytest.approx(14.1152e15 / 32, rel=1e-4)
    # 32 drives in new parts (issue 28): two new 24-bay servers, each $8,300.49 + a NIC $400 + 2 switch
    # ports at $298.81 + 2 DACs at $40 = $9,378.11 (the used 60-bay JBOD, $1,236, is not bought new)
    assert hdd["purchase_usd"] == pytest.approx(32 * 1079.99 + 2 * (8300.49 + 400 + 2 * 298.81 + 2 * 40))


def test_clip_on_prem_hdds_with_parity_and_the_fill_limit() -> None:
    # CLIP on-prem stores 160.5 TB. Before: 7 x 24 TB HDDs, 95.5 % full, no redundancy. On 2 GPUs its
    # reads (106.2 MB/s, 3.35 PB a year, 6.1 drives' rated workload) leave capacity to size the array.
    p = calc.plan("clip-vitl14-datacomp-webdataset", site="on-prem", gpus_per_job=2)
    stored = p.dataset_bytes + (p.checkpoint_capacity_bytes if p.checkpoint_write_bytes_per_s > 0 else 0.0)
    assert stored == pytest.approx(160.5e12, rel=1e-3)
    # Data drives at 80 %: ceil(160.5 / (24 x 0.8)) = ceil(8.36) = 9; RAID 6 (groups of 10 + 2):
    # 9 + 2 = 11 drives, 9 x 24 = 216 TB usable (196.4 TiB), 160.5 / 216 = 74 % full.
    hdd = _row(calc.recommend(p), "hdd-7200")
    assert hdd["feasible"] and hdd["units"] == 11 and hdd["protection"] == "raid6"
    assert hdd["capacity_bytes"] == pytest.approx(216e12)
    # 11 drives fit one new 24-bay 3.5" server (presets/enclosures.yaml): $8,300.49 + a new 2 x 25 GbE
    # NIC $400 + 2 new switch ports at $5,378.64 / 18 = $298.81 + 2 SFP28 DACs at $40 = $9,378.11. The
    # used 60-bay JBOD with the host's HBA and cables ($1,236) would cost less but is a used listing, and
    # the answer buys new parts (issue 28): 11 x $1,079.99 = $11,879.89 + $9,378.11 = $21,258.00.
    assert hdd["purchase_usd"] == pytest.approx(11 * 1079.99 + 8300.49 + 400 + 2 * 298.81 + 2 * 40)
    assert "TiB" in hdd["caveats"] and "80%" in hdd["caveats"]
    assert "held in 1 x 24-bay" in hdd["caveats"] and "60-bay" not in hdd["caveats"]
    # new vs used on the row: every part bought new, and no used-market listing among them
    assert "bought new with the maker's warranty" in hdd["caveats"]
    assert "priced as used-market listings" not in hdd["caveats"]
    # The network server's row (a store every node mounts) lists its new parts and the used
    # alternatives: one used E810 saves $400 - $150 = $250, two used SN2410 ports 2 x ($298.81 -
    # $16.67) = $564.28, a used 12-bay server $8,300.49 - $438 = $7,862.49: $8,676.77 less.
    box = st.enclosure_catalog()[1]["server-24lff-25g"]
    market = engine._part_market(engine.Sized(loads={}, units=11, perf_units=11, limiting="", housing=((box, 1),)))
    assert (
        "bought new with the maker's warranty at list or retail price: dac-25g, nic-2x25g, port-25g, server-24lff"
        in market
    )
    assert "nic-2x25g, port-25g, server-24lff used would cost $8,677 less" in " ".join(market)
    assert not any("priced as used-market listings" in x for x in market)
    # Mirror instead: 9 data drives x 2 = 18 in the same 24-bay server: 18 x $1,079.99 = $19,439.82 +
    # $9,378.11 = $28,817.93, every part priced.
    mirror = _row(calc.recommend(p, protection="mirror"), "hdd-7200")
    assert mirror["units"] == 18
    assert mirror["purchase_usd"] == pytest.approx(18 * 1079.99 + 8300.49 + 400 + 2 * 298.81 + 2 * 40)
    assert "1 x 24-bay" in mirror["caveats"] and "not priced" not in mirror["caveats"]
    # Erasure 8+2 in whole stripes: ceil(9 / 8) = 2 stripes x 10 = 20 drives.
    assert _row(calc.recommend(p, protection="erasure 8+2"), "hdd-7200")["units"] == 20


def test_drive_system_formulas() -> None:
    # RAID 6 adds 2 parity drives per group of up to 10 data drives: 1 -> 3, 9 -> 11, 10 -> 12,
    # 11 -> 10 + 2 and 1 + 2 = 15, 20 -> 2 x 12 = 24.
    assert [st.protected_drives(d, "raid6") for d in (1, 9, 10, 11, 20)] == [3, 11, 12, 15, 24]
    assert st.protected_drives(3, "mirror") == 6 and st.protected_drives(3, "raid0") == 3
    assert st.protected_drives(3, "erasure 4+2") == 6 and st.protected_drives(9, "erasure 4+2") == 18
    assert st.usable_drives(11, "raid6") == 9 and st.usable_drives(15, "raid6") == 11
    assert st.usable_drives(18, "erasure 4+2") == 12
    assert st.default_protection(2) == "mirror" and st.default_protection(3) == "raid6"
    # 4 drives rated 14,016 TB each, 1,408.8 TB a month mirrored (x2) = 33,818 TB a year each way:
    # 14,016 / (1,408.8 x 12.175 x 2 / 4) = 1.63 years.
    yearly = 1.4088e15 * 365.25 / 30
    assert st.wear_out_years(14016e12, 4, yearly, 2.0) == pytest.approx(14016e12 / (yearly * 2 / 4))
    assert st.wear_out_years(14016e12, 4, 0.0, 2.0) == math.inf


def test_checkpoint_writes_are_checked_against_endurance() -> None:
    # Llama 3 70B on-prem, on PM9A3 drives (nvme-gen4, 14,016 TB rated): the row gives the years
    # to wear out from 1.4088e15 B a month x 12.175 months a year x the write amplification.
    r = _row(calc.recommend("mlperf-checkpoint-llama3-70b", site="on-prem"), "nvme-gen4")
    amp = st.protected_drives(st.usable_drives(int(r["units"]), r["protection"]), r["protection"]) / st.usable_drives(
        int(r["units"]), r["protection"]
    )
    yearly = 1440 * 69_882_617_856 * 14 * 365.25 / 30
    assert r["wear_out_years"] == pytest.approx(14016e12 / (yearly * amp / r["units"]), rel=1e-9)


def test_no_consumer_drive_for_a_dgx() -> None:
    for name in calc.scenarios():
        a = calc.answer(name, server="DGX-H100")
        named = [a.best, *a.runners_up]
        for r in named:
            if r is not None:
                assert st.option(r["option"]).drive_class != "consumer", (name, r["option"])
        for d in a.designs:
            if d["local"] and d["local"] != "server NVMe":
                assert st.option(d["local"]).drive_class == "data-centre", (name, d["local"])
    # A GTX 1080 Ti workstation may still take them.
    r = _row(calc.recommend("luna-unet3d-1080ti-preprocessed"), "sata-ssd")
    assert "consumer" not in r["why_not"]


# ------------------------------------------------------------------ shared versus single-attach


def test_beast_nfs_shop_gets_no_single_attach_volume_as_its_shared_store() -> None:
    # 5 jobs on 5 nodes read one dataset (640.6 GB). A gp3 volume attaches to one instance.
    a = calc.answer("beast-nfs-shop", site="aws")
    for r in (a.best, *a.runners_up):
        assert r is not None
        o = st.option(r["option"])
        if o.kind == "cloud-block" and o.attach_limit < 5:
            assert r["units"] == 5 and "one per node" in r["caveats"], r["option"]
        elif o.kind == "cloud-block":
            assert "cluster-aware file system" in r["caveats"], r["option"]
    gp3 = _row(calc.recommend(a.plan), "aws-ebs-gp3")
    # One 640.6 GB volume per node: 5 volumes, 5 x 640.6 GB billed at $0.08/GB-month = $256.24.
    assert gp3["units"] == 5 and gp3["capacity_bytes"] == pytest.approx(5 * a.plan.dataset_bytes)
    assert gp3["monthly_rent_usd"] == pytest.approx(5 * a.plan.dataset_bytes / 1e9 * 0.08)
    assert "each holding a full copy" in gp3["caveats"]
    # io2 multi-attaches to 16 instances: one volume serves all 5 nodes.
    assert _row(calc.recommend(a.plan), "aws-ebs-io2")["units"] == 1


def test_per_instance_block_cap() -> None:
    # An Azure ND H100 v5 reaches managed disks at 612 MB/s (servers.yaml): a job reading more per
    # node cannot use a Premium SSD v2 volume, whatever its own limit.
    p = calc.plan("mlperf-unet3d-h100", server="azure-ND-H100-v5")
    per_node = p.values["storage_need_bytes_per_s"] / math.ceil(p.scenario.gpus_per_job / p.scenario.gpus_per_node)
    assert per_node > 612e6
    r = _row(calc.recommend(p), "azure-premium-ssd-v2")
    assert not r["feasible"] and r["limiting"] in ("per-instance cap", "system size")


# ------------------------------------------------------------------ limits (issue 17, item 4)


def test_ram_is_not_ranked_below_the_bandwidth_it_must_move_nor_above_its_size() -> None:
    r = _row(calc.recommend("mlperf-checkpoint-llama3-1t"), "ram-tmpfs")
    assert not r["feasible"]
    assert r["limiting"] == "durability"  # node RAM dies with the node: never the checkpoint store
    big = calc.answer("clip-vitl14-datacomp-webdataset", storage="ram-tmpfs")
    assert "cannot hold the dataset" in big.own


def test_no_answer_names_more_units_than_one_system_accepts() -> None:
    for name in calc.scenarios():
        p = calc.plan(name)
        nodes = math.ceil(p.scenario.gpus_per_job / p.scenario.gpus_per_node) * p.scenario.jobs
        rec = calc.recommend(p)
        ok = rec[rec["feasible"]]
        assert (ok["units"] <= 1e6).all(), name
        for o, u in zip(ok["option"], ok["units"], strict=True):
            opt = st.option(o)
            copies = nodes if opt.kind == "cloud-block" and nodes > opt.attach_limit else 1
            if opt.kind != "ram":
                assert u <= opt.max_units * copies, (name, o, u)


# ------------------------------------------------------------------ the answer serves the job


@pytest.mark.parametrize("server", [None, "DGX-H100"])
def test_planning_with_the_answer_reaches_the_target_or_something_else_binds(server: str | None) -> None:
    for name in calc.scenarios():
        a = calc.answer(name, server=server) if server else calc.answer(name)
        p, d = a.plan, a.design
        sc = p.scenario
        assert d is not None, name
        if d["design"] != "one tier":
            continue  # a copy per node: sized per node from the full read rate (test_sizing)
        r = _row(calc.recommend(p), d["store"])
        ram = st.option(d["store"]).kind == "ram"
        q = calc.plan(sc.replace(storage=d["store"], storage_units=None if ram else int(r["units"])))
        goal = min(p.gpu_utilization, sc.target_gpu_utilization)
        assert q.gpu_utilization >= goal - 1e-6 or q.bottleneck != "storage", (name, d["store"], q.gpu_utilization)
        if q.gpu_utilization < sc.target_gpu_utilization - 1e-6:
            # Something else binds, and the answer says what.
            assert f"The {q.bottleneck} bottleneck" in " ".join(a.lines()), name


def test_designs_markdown_has_no_nan_or_inf() -> None:
    from calc.cli import run

    for name in ("beast-imagenet-4xv100", "mlperf-checkpoint-llama3-70b"):
        md = run(["designs", name, "--format", "markdown"])
        assert "| nan" not in md and "| inf" not in md and "nan |" not in md, name


def test_no_answer_sentence_prints_an_infinite_rate() -> None:
    # One synchronous worker per GPU on HDDs: the storage stage is 1 worker / 12 ms = 83.3 samples/s
    # per GPU, though 60 drives x 285 MB/s = 17.1 GB/s dwarf the 385.7 MB/s needed: read time binds.
    for over in ({}, {"server": "DGX-H100"}):
        for name in calc.scenarios():
            text = " ".join(calc.answer(name, **over).lines())
            assert "inf " not in text and "nan" not in text, (name, over)
    a = calc.answer("beast-imagenet-4xv100", storage="hdd-7200", num_workers=1)
    # The storage stage is 1 / 12 ms = 83.3/s; the one worker also decodes (1 / 16.6 ms = 60.2/s):
    # the workers stage binds, and the storage's spare bandwidth changes nothing.
    assert a.plan.bottleneck == "workers" and a.plan.stages["storage"] == pytest.approx(1 / 0.012)
    assert a.plan.storage_bytes_per_s == pytest.approx(60 * 285e6)
    assert "read time" in a.own and "17.1 GB/s" not in a.own


def test_dlrm_behind_its_local_cache_is_bound_by_the_main_process_then_read_time() -> None:
    # Before issue 42: "buy 2 drives, 1.3x headroom", yet planned with them storage bound GPU use at 39 %:
    # the per-node cache carries 23.27 GB/s, but the loader must keep reads/s x read time in flight,
    # 88,783 reads/s x 80 us (PM9A3) = 7.1 reads, above the 4 workers of one B200. The main process now
    # binds first (issue 42): every batch of 16,384 x 761 B = 12.47 MB comes back from the workers, at
    # 0.5039 ms a batch + 0.1611 ms per MB on the reference core (presets/decoders.yaml transfer, under
    # the 33.55 MB mmap threshold): 0.5039e-3 / 16,384 + 0.1611e-3 x 761e-6 = 1.5335e-7 s an example,
    # 6,520,915 samples/s per GPU against the GPU's 16,384 / 0.375 ms = 43.69 M: 14.9 % utilisation.
    a = calc.answer("mlperf-dlrm-b200", site="on-prem")
    assert a.design is not None and a.design["design"] == "local cache"
    assert a.deciding.startswith("Deciding: the node reads 23.27 GB/s from its own copy")
    q = calc.plan("mlperf-dlrm-b200", storage=a.design["local"])
    assert q.bottleneck == "main"
    assert q.stages["main"] == pytest.approx(1 / (0.5039e-3 / 16_384 + 0.1611e-3 * 761e-6), rel=1e-9)
    assert q.gpu_utilization == pytest.approx(q.stages["main"] / (16_384 / 0.000375), rel=1e-9)
    # The read-time limit is still there behind it: 7.1 reads in flight asked of 4 workers
    assert q.values["outstanding_reads"] == pytest.approx(q.values["read_iops"] * 80e-6, rel=1e-9)
    assert q.values["outstanding_reads"] == pytest.approx(7.1027, rel=1e-4)
    assert q.stages["storage"] < q.per_gpu_samples_per_s


def test_the_card_speaks_one_voice_in_a_rooms_words() -> None:
    # Before: "34.3x headroom, limited by capacity", "4 x azure-blob can feed 14,083,781 GPUs",
    # "give node_network_bytes_per_s", "set gpu_price_per_hour".
    jargon = re.compile(r"\b(give|set) [a-z0-9]+_[a-z0-9_]+\b")
    for over in ({}, {"server": "DGX-H100"}, {"site": "azure"}):
        for name in calc.scenarios():
            a = calc.answer(name, **over)
            text = "\n".join(a.lines())
            assert not jargon.search(text), (name, over, jargon.search(text))
            assert "headroom, limited by" not in text, (name, over)
            gpus = a.plan.scenario.gpus_per_job * a.plan.scenario.jobs
            for m in re.finditer(r"can feed ([\d,]+) GPU", text):
                assert int(m.group(1).replace(",", "")) <= 100 * gpus, (name, over, m.group(0))


def test_no_site_gives_one_line_per_site_and_says_which_the_cost_is_for() -> None:
    a = calc.answer("mlperf-unet3d-h100")
    lines = a.lines()
    # Headline compares totals; each site's purchase on its own line; the charges name the site.
    # On-prem: a PM9A3 ($2,737.50) + 2 x $1,079.99 HDDs in a new 24-bay server with its NIC, switch
    # ports and DACs ($8,300.49 + $400 + 2 x $298.81 + 2 x $40 = $9,378.11; the used JBOD is not bought):
    # $14,275.59 / 36 = $396.54; power: 14 W + 2 x 9.5 W + the server 300 W + the NIC 12 W + 2 ports
    # x 6 W = 357 W x 730 h x $0.13/kWh = $33.88; support 12 % a year of $14,275.59 / 12 = $142.76:
    # $573.18 a month all in (was $250.31 with the used JBOD).
    # issue 39: one answer at the assumed site (on-prem), the other sites priced on the next line
    assert lines[0].startswith("Buy on-prem (site not given): ") and "$573 a month all in" in lines[0]
    assert lines[1].startswith("Site not given: on-prem assumed") and "rent on AWS $" in lines[1]
    assert any(x.startswith("A month of training costs $573") for x in lines)
    assert any("power $34, support $143, purchases $397" in x for x in lines)


def test_a_workstations_sata_ssds_go_in_its_own_bays() -> None:
    # The preprocessed LUNA16 job on one GTX 1080 Ti workstation: the consumer 870 EVO is allowed there
    # and sits in the workstation's SATA ports, nothing else bought. Bandwidth sets 2 data drives, a
    # mirror doubles them: 4 x $139.99 = $559.96, / 36 months = $15.55 a month.
    r = _row(calc.recommend("luna-unet3d-1080ti-preprocessed"), "sata-ssd")
    assert r["feasible"] and r["units"] == 4 and r["protection"] == "mirror"
    assert r["purchase_usd"] == pytest.approx(4 * 139.99)
    assert "held in" not in r["caveats"]


# --- A chosen design that serves the job or says it does not (issue 32) ---------------------------


def test_the_cards_utilisation_is_the_design_it_buys() -> None:
    """Issue 32's repro class: beast-small-files with no site bought 5 azure-premium-ssd-v2 volumes
    while the card planned the job on the option's default size (61 %, "idles 39 %"). The card's
    figure is now the plan at the design's own units, and it says no GPU time is lost."""
    a = calc.answer("beast-small-files", storage=None, storage_units=None, site="azure")  # the repro's cheapest site
    d = a.design
    assert d is not None and d["store"] == "azure-premium-ssd-v2" and d["store_units"] == 5
    on_design = calc.plan("beast-small-files", storage="azure-premium-ssd-v2", storage_units=5)
    assert on_design.gpu_utilization == 1.0
    assert a.design_utilization == on_design.gpu_utilization
    text = "\n".join(a.lines())
    assert "lose no GPU time" in text and "idles" not in text


def test_every_cards_design_utilisation_is_its_design_at_its_units_and_said() -> None:
    """Every preset, every site, with no storage of its own: the card's utilisation is the plan
    on the chosen design's reading tier at the units it buys (every node's drives for a local
    cache); a design that leaves the GPUs waiting says so with that percentage."""
    for name in [s if isinstance(s, str) else s.name for s in calc.scenarios()]:
        for site in (None, "on-prem", "aws", "gcp", "azure"):
            kw = {"site": site} if site else {}
            a = calc.answer(name, storage=None, storage_units=None, **kw)
            d = a.design
            if d is None or d["design"] not in ("one tier", "local cache"):
                continue
            local = d["design"] == "local cache"
            clients = int(a.plan.values["clients"])
            units = d["local_units_per_node"] * clients if local else d["store_units"]
            tier = d["local"] if local else d["store"]
            q = calc.plan(name, storage=tier, storage_units=units, **kw)
            assert a.design_utilization == pytest.approx(q.gpu_utilization, abs=1e-12), (name, site)
            text = "\n".join(a.lines())
            if q.gpu_utilization < 1 - 1e-9:
                assert f"{1 - q.gpu_utilization:.0%} of the time" in text, (name, site)
            for said in re.findall(r"stays at (\d+)%", text):
                assert int(said) == round(100 * q.gpu_utilization), (name, site)


def test_a_cluster_without_a_site_assumes_on_prem_as_a_job_does() -> None:
    """Jobs on one shared store, no site (no job's server or storage names one): the cluster's answer
    buys at the default site, on-prem, as a job's answer does (issue 39; before, it listed each site
    and bought the cheapest), and prices each other site's cheapest buyable store on its next line."""
    # (The 8B pretrain preset's own nvme-gen4 would set on-prem, a site its storage names: issue 38 keeps it.)
    jobs = {calc.scenario("llama3-8b-pretrain-8xh100").replace(storage=None): 2, "mlperf-unet3d-h100": 1}
    a = calc.answer(calc.cluster(jobs))
    lines = a.lines()
    assert lines[0].startswith("Buy for the cluster on-prem (site not given): ")
    sites = [r["site"] for r in a.site_lines]
    assert sites == ["on-prem", "aws", "gcp", "azure"]
    assert lines[1].startswith("Site not given: on-prem assumed")
    for r in a.site_lines[1:]:
        assert f"{SITE_WORDS[r['site']]} {fmt_usd(r['monthly_total_usd'])}" in lines[1]
    # The on-prem row is the one bought (and charged back), as with the site given.
    assert a.best is not None and a.best["site"] == "on-prem"
    assert a.best["option"] == calc.answer(calc.cluster(jobs, site="on-prem")).best["option"]
    # A site given: one answer at that site, no per-site lines.
    b = calc.answer(calc.cluster(jobs, site="on-prem"))
    assert b.site_lines == () and b.headline.startswith("Buy for the cluster: ") and b.best["site"] == "on-prem"
    # The preset as it is: its nvme-gen4 says on-prem, so the cluster buys there and does not ask.
    own = calc.answer(calc.cluster({"llama3-8b-pretrain-8xh100": 2, "mlperf-unet3d-h100": 1}))
    assert own.site_lines == () and own.best is not None and own.best["site"] == "on-prem"


def test_own_hdds_short_of_random_reads_are_not_told_more_workers_help() -> None:
    """Two HDDs under the article's V100 job: their 570 MB/s would carry its 386 MB/s, but at 64 KiB
    requests each reads 1 / (1/168 s + (65,536 - 4,096) B / 285 MB/s) = 162.13 a second (the Exos
    figure is for 4 KiB reads; the rest of each request streams at the drive's rate): 324.26 reads/s
    for 4 x 128 / 0.087 s = 5,885 needed. More loader workers cannot lift a random-read cap; 5,885 /
    162.13 = 36.3 -> 37 data drives, in RAID 6 groups of at most 10 + 2: 37 + 4 x 2 = 45 would."""
    p = calc.plan("beast-imagenet-4xv100", storage="hdd-7200", storage_units=2, site="on-prem")
    per_drive = 1 / (1 / 168 + (65_536 - 4_096) / 285e6)
    assert float(p.values["storage_iops"]) == pytest.approx(2 * per_drive, rel=1e-9)
    assert p.read_iops == pytest.approx(4 * 128 / 0.087, rel=1e-9)
    assert p.storage_bytes_per_s >= p.read_bytes_per_s  # bandwidth is not what binds
    (own,) = [x for x in calc.answer(p).lines() if x.startswith("Your storage")]
    assert own == (
        "Your storage, 2 x hdd-7200, delivers 324.3 reads/s of the 5,885 reads/s needed "
        "(random reads bind, not its bandwidth); 45 would."
    )
    assert "more workers" not in own


def test_a_store_given_by_its_figures_is_judged_reads_and_saves() -> None:
    # The article's job needs 4 x 128 / 0.087 = 5,885.06 reads/s of 64 KiB = 385.7 MB/s. A store given
    # as 1 GB/s reads 1e9 / 65,536 = 15,259 of them a second: it serves. At 100 MB/s, 1,525.9 reads/s
    # feed 1,525.9 / 5,885.06 = 25.9 % of the GPUs' pace: it does not.
    ok = calc.answer("beast-imagenet-4xv100", storage_bytes_per_s="1 GB/s")
    assert (
        ok.own
        == "Your store (1 GB/s, 15,259 reads/s, 1 ms a read) serves the job: it needs 385.7 MB/s and 5,885 reads/s."
    )
    short = calc.answer("beast-imagenet-4xv100", storage_bytes_per_s="100 MB/s")
    assert short.own == (
        "Your store (100 MB/s, 1,526 reads/s, 1 ms a read) does not serve the job: its reads hold the GPUs at 26% "
        "(the job needs 385.7 MB/s and 5,885 reads/s)."
    )
    assert short.plan.gpu_utilization == pytest.approx(1e8 / 65536 / (4 * 128 / 0.087), rel=1e-9)
    # Its idle GPU time is its own, not a design's it was not given: 74.1 % of 4 GPUs x 720 h.
    assert short.idle_gpu_hours_per_month == pytest.approx(4 * 720 * (1 - 1e8 / 65536 / (4 * 128 / 0.087)), rel=1e-6)
    # Llama 3 8B saves 8,030,261,248 x 14 B = 112,423,657,472 B every 30 min, drained within half of it:
    # 112,423,657,472 / 900 s = 124.9 MB/s. A 10 MB/s store cannot take it; 200 MB/s can.
    slow = calc.answer("llama3-8b-pretrain-8xh100", storage=None, storage_bytes_per_s="10 MB/s")
    assert slow.own.endswith("does not serve the job: it writes 10 MB/s of the 124.9 MB/s checkpoint save burst.")
    # 100 kB/s fails both: 1e5 / 262,144 = 0.381 reads/s of 256 KiB against 0.988 needed (39 %).
    both = calc.answer("llama3-8b-pretrain-8xh100", storage=None, storage_bytes_per_s="100 kB/s")
    assert both.own == (
        "Your store (100 kB/s, 0.381 reads/s, 1 ms a read) does not serve the job: its reads hold the GPUs at 39% "
        "(the job needs 259.1 kB/s and 0.988 reads/s); it writes 100 kB/s of the 124.9 MB/s checkpoint save burst."
    )
    fast = calc.answer("llama3-8b-pretrain-8xh100", storage=None, storage_bytes_per_s="200 MB/s")
    assert fast.own.endswith(
        "serves the job: it needs 259.1 kB/s and 0.988 reads/s and a 124.9 MB/s checkpoint save burst."
    )


def test_the_plan_beside_the_answer_is_on_the_store_it_buys() -> None:
    """Issue 38: the page's plan beside an answer was the plan with no storage: 1T on-prem showed a
    24.3 s restore (18.48e9 B a rank at 0.76 GB/s) and 98.45 % goodput while the 13 nfs-100gbe it
    buys take 129.4 s. On them: restore 18.93e12 B / (13 x 11.25 GB/s) = 129.43 s; the drain lag
    16.56e12 / 146.25e9 = 113.25 s; lost per failure 129.43 + 1,800 / 2 + 113.25 = 1,142.68 s over
    the 178,161 s MTBF = 0.6414 %, and the save stalls 0.0163 %: goodput 99.342 %."""
    from calc import report

    a = calc.answer("mlperf-checkpoint-llama3-1t", site="on-prem")
    q = a.shown
    assert a.plan.checkpoint_restore_s == pytest.approx(24.32, rel=1e-3)  # the plan with no store
    assert (q.scenario.storage, q.scenario.storage_units) == ("nfs-100gbe", 13)
    restore = 18_484_923_476.25 * 1024 / (13 * 11.25e9)
    lag = 16_562_491_434_720 / (13 * 11.25e9)
    assert q.checkpoint_restore_s == pytest.approx(restore, rel=1e-9) == pytest.approx(129.43, rel=1e-4)
    mtbf = 54 * 86400 * 16384 / 419 / 1024
    stall = q.values["checkpoint_stall_share"]
    assert stall == pytest.approx(1.63e-4, rel=1e-3)
    assert q.goodput == pytest.approx(1 - stall - (restore + 900 + lag) / mtbf, rel=1e-12)
    assert q.goodput == pytest.approx(0.99342, abs=1e-5)
    # the report says the same: its requirements and checkpoints are the bought store's
    text = [t for s in report.sections(a.plan) for t in s.text]
    assert "On the store the answer buys: 13 x nfs-100gbe" in text
    assert "**Checkpoint restore time**: 2.16 min" in text


def test_an_object_store_plan_restores_at_its_request_floor() -> None:
    # Issue 38: on one S3 prefix the plan said 24.3 s (the ranks' load rate) while 5,500 GET/s floors
    # 1,024 x ceil(18.48e9 / 16 MiB) = 1,128,448 GETs at 205.2 s, the row's figure.
    p = calc.plan("mlperf-checkpoint-llama3-1t", storage="aws-s3-standard", storage_units=1)
    assert p.checkpoint_restore_s == pytest.approx(1_128_448 / 5500, rel=1e-9)
    # two prefixes serve 11,000 GET/s: 102.6 s, still above the 24.3 s the ranks need
    two = calc.plan("mlperf-checkpoint-llama3-1t", storage="aws-s3-standard", storage_units=2)
    assert two.checkpoint_restore_s == pytest.approx(1_128_448 / 11_000, rel=1e-9)
    # a file system counts no requests: the ranks' own rate, 18.48e9 / 0.76e9 = 24.32 s
    fs = calc.plan("mlperf-checkpoint-llama3-1t", storage="nfs-100gbe", storage_units=1000)
    assert fs.checkpoint_restore_s == pytest.approx(18_484_923_476.25 / 0.76e9, rel=1e-9)


def test_drives_bought_in_a_storage_server_are_durable_on_the_plan() -> None:
    # Issue 38: 70B on-prem buys 9 nvme-gen4 in RAID 6 in a networked server; the plan beside it said the
    # checkpoints die with the node. Planned as housed in that server, they are durable and unwarned.
    a = calc.answer("mlperf-checkpoint-llama3-70b", site="on-prem")
    q = a.shown
    assert (q.scenario.storage, q.scenario.storage_units, q.scenario.storage_housing) == ("nvme-gen4", 9, "server")
    assert q.values["checkpoint_durable"] == 1.0 and not any("die with the node" in w for w in q.warnings)
    # the same drives in the GPU nodes (the default housing) still die with them
    node = calc.plan("mlperf-checkpoint-llama3-70b", storage="nvme-gen4", storage_units=9)
    assert node.values["checkpoint_durable"] == 0.0 and any("die with the node" in w for w in node.warnings)
    with pytest.raises(InputError) as e:
        calc.plan("mlperf-checkpoint-llama3-70b", storage_housing="rack")
    assert e.value.field == "storage_housing"


def test_the_design_point_beside_its_published_tier() -> None:
    # NVIDIA DGX SuperPOD RA-11333-001 V11, Table 6: Good 4 / 2 GB/s read / write per node, Better 8 / 4,
    # Best 40 / 20; per 32-node SU 15 / 7, 40 / 20, 125 / 62 GB/s (presets/reference_tiers.yaml)
    from calc import catalog
    from calc.answers import tier_line, workload_tier

    t = catalog.reference_tiers()
    assert (t["good"].node_read_bytes_per_s, t["better"].su_write_bytes_per_s, t["best"].su_write_bytes_per_s) == (
        4e9,
        20e9,
        62e9,
    )
    # Llama 3 8B checkpoints (no dataset: the cache holds all of it, Good, Table 5's NLP): one node restores
    # C = 112.4 GB within 300 s = 374.7 MB/s; at the tier's 4 GB/s the restart takes 112.4 / 4 = 28.1 s,
    # and 4e9 / 374.7e6 = 10.7x this job's read
    p = calc.plan("mlperf-checkpoint-llama3-8b")
    assert workload_tier(p).name == "good"
    line = tier_line(p)
    assert "Good tier" in line and "374.7 MB/s read and 124.9 MB/s write per node on 1 node" in line
    assert "a restart reads 112.4 GB in 28.11 s at the tier's rate, 5 min at this design point" in line
    assert "10.7x this job's per node" in line and "RA-11333-001" in line
    # The 8B pretrain reads its tokens once (page cache off): Best. 40e9 / 374.7e6 = 106.7x
    q = calc.plan("llama3-8b-pretrain-8xh100")
    assert workload_tier(q).name == "best" and "106.7x" in tier_line(q)
    # A job that saves nothing has no restart to buy: the reads only (beast: 385.7 MB/s, 40e9 / 385.7e6 = 103.7x)
    b = tier_line(calc.plan("beast-imagenet-4xv100"))
    assert "restart" not in b and "103.7x" in b
    assert any(x.startswith("Published guidance: ") for x in calc.answer(p, site="aws").lines())


def test_a_file_system_bought_in_fractional_steps_is_planned_at_the_size_bought() -> None:
    """Issue 38 item 4: the answer buys 4,800 GiB = 4.6875 TiB of FSx (its orderable size), and the
    plan shown beside it is planned at 4.6875 TiB, not the next whole unit (5: 7 % more supply)."""
    a = calc.answer("efficient-pytorch-3d", checkpoint_interval_s="1 min", site="aws")
    assert a.best is not None
    assert (a.best["option"], a.best["units"], a.best["unit"]) == ("aws-fsx-lustre-ssd-1000", 4.6875, "TiB")
    shown = a.shown
    assert (shown.scenario.storage, shown.scenario.storage_units) == ("aws-fsx-lustre-ssd-1000", 4.6875)
    # presets/storage.yaml: read_bandwidth 1000 MB/s per TiB, so 4.6875 TiB x 1e9 B/s = 4.6875e9 B/s
    # (at 5 units it was 5e9 B/s).
    assert shown.storage_bytes_per_s == pytest.approx(4.6875 * 1e9, rel=1e-12)
    # Its utilisation is that supply's: the same plan stated directly, at 4.6875 TiB.
    q = calc.plan(shown.scenario)
    assert q.scenario.storage_units == 4.6875
    assert shown.gpu_utilization == pytest.approx(q.gpu_utilization, abs=1e-12)


def test_storage_units_take_a_fraction_only_where_the_option_is_sold_by_capacity() -> None:
    """A fractional unit count is an order of a file system sold by the TiB (4.6875 TiB of FSx:
    4.6875 x 1000 MB/s per TiB = 4.6875 GB/s); of a drive it is refused by name."""
    p = calc.plan("efficient-pytorch-3d", storage="aws-fsx-lustre-ssd-1000", storage_units=4.6875)
    assert p.scenario.storage_units == 4.6875
    assert p.storage_bytes_per_s == pytest.approx(4.6875 * 1000e6, rel=1e-12)  # 4,687.5 MB/s
    assert st.option("aws-fsx-lustre-ssd-1000").sold_by_capacity
    assert not st.option("nvme-gen4").sold_by_capacity
    with pytest.raises(InputError) as e:
        calc.plan("efficient-pytorch-3d", storage="nvme-gen4", storage_units=2.5)
    assert e.value.field == "storage_units"
    assert "accepted: a whole number of drives" in str(e.value)
    # Whole counts read as before.
    assert calc.plan("efficient-pytorch-3d", storage="nvme-gen4", storage_units=2).scenario.storage_units == 2


@pytest.mark.parametrize(
    ("hours", "said"),
    [
        (0.943, "0.94 GPU-hours"),  # a small job's first epoch: was "1 GPU-hours"
        (1.0, "1 GPU-hour"),
        (1.04, "1 GPU-hour"),  # two significant digits: 1.0
        (9.4, "9.4 GPU-hours"),
        (9.96, "10 GPU-hours"),  # 2 digits round up to the boundary
        (10.4, "10 GPU-hours"),  # from 10 up: whole hours
        (633.2, "633 GPU-hours"),
        (2800.7, "2,801 GPU-hours"),
    ],
)
def test_idle_gpu_hours_are_said_to_two_digits_below_ten(hours: float, said: str) -> None:
    assert gpu_hours(hours) == said
