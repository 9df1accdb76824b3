"""calc.card: the answer as the first screen states it (issue 31), with hand-worked values."""

from __future__ import annotations

import calc
from calc.card import card, chosen, plain_words, usd_sum
from calc.sizing import recommend


def test_money_parts_add_up_to_the_total_shown() -> None:
    # $95.27 + $48.27 = $143.54: in whole dollars the parts read $95 + $48 = $143, the total $144
    each, total = usd_sum({"rent": 95.27, "writes": 48.27, "reads": 0.0})
    assert (each, total) == ("rent $95.27 + writes $48.27", "$143.54")
    # $95.20 + $48.20 = $143.40: whole dollars add up ($95 + $48 = $143), so whole dollars
    assert usd_sum({"rent": 95.2, "writes": 48.2}) == ("rent $95 + writes $48", "$143")


def test_plain_words() -> None:
    assert plain_words("1 prefix of aws-s3-standard, $145 a month all in") == "an aws-s3-standard bucket"
    assert plain_words("which sets 3 prefixes of aws-s3-express.") == (
        "which sets an aws-s3-express bucket (3 request-rate partitions)."
    )
    assert "calc.answer" not in plain_words("the answer (calc.answer, recommend) will not buy it")


def test_no_site_asks_and_a_known_site_buys_one_design() -> None:
    a = calc.answer("beast-imagenet-4xv100")  # no site, no server, no storage
    assert chosen(a) is None
    c = card(a, recommend(a.plan))
    assert c.lines() == [c.ask] and "Where does this job run?" in c.ask
    sc = calc.scenario("beast-imagenet-4xv100").replace(site="gcp")
    a = calc.answer(sc)
    d = chosen(a)
    # the page cache is off (the articles read every epoch from storage): not a page-cache design
    assert d is not None and d["design"] == "one tier" and d["store"] == "gcp-pd-ssd"
    lines = card(a, recommend(sc)).lines()
    assert len(lines) == 3 and lines[0] == "**Rent** 1 TB of gcp-pd-ssd (1 TB)"
    assert lines[2].startswith("**Why** Bandwidth: the job needs 385.7 MB/s")  # 5,885 reads/s x 64 KiB


def test_a_shared_volume_says_it_needs_a_cluster_file_system() -> None:
    # beast-nfs-shop on AWS: 5 jobs on 5 nodes share one dataset; io2 multi-attaches to at most 16
    # instances, so 1 < 5 <= 16: one volume serves all five, and GFS2/OCFS2 must share it (issue 38:
    # the card said only "1 volume of aws-ebs-io2"; only recommend's caveats said so)
    a = calc.answer("beast-nfs-shop", site="aws")
    c = card(a, recommend(a.plan))
    assert c.buy == (
        "**Rent** 1 volume of aws-ebs-io2 (640.6 GB); multi-attached to 5 nodes (at most 16): "
        "needs a cluster-aware file system (GFS2, OCFS2)"
    )
    # a volume on one node (the same job's 8b-checkpoint cousin reads on 1 node): nothing to share
    one = calc.answer("mlperf-checkpoint-llama3-8b", site="aws")
    assert "multi-attached" not in card(one, recommend(one.plan)).buy


def test_no_page_cache_words_without_a_dataset() -> None:
    # The MLPerf checkpoint benchmark reads no dataset (0 B): nothing for the page cache to hold,
    # on any line the page or the report prints (issue 38: "the page cache holds the dataset").
    from calc.card import details

    for name in ("mlperf-checkpoint-llama3-70b", "mlperf-checkpoint-llama3-405b"):
        for site in ("aws", "gcp"):
            a = calc.answer(name, site=site)
            assert a.plan.dataset_bytes == 0
            rec = recommend(a.plan)
            said = [*card(a, rec).lines(), *details(a), *a.lines(), *map(str, rec["caveats"])]
            assert not [x for x in said if "page cache" in x], (name, site)


def test_read_once_only_where_a_first_epoch_is_read() -> None:
    from calc.design import describe_option

    row = {
        "units": 1.0,
        "unit": "prefix",
        "option": "aws-s3-standard",
        "monthly_total_usd": 488.0,
        "iops_headroom": float("inf"),
        "bandwidth_headroom": float("inf"),
        "limiting": "restore read",
    }
    # a dataset the page cache holds takes a first epoch from the store (12 s here): read once
    assert describe_option({**row, "first_epoch_s": 12.0}).endswith(
        "read once: the page cache holds the dataset after the first epoch"
    )
    # no first epoch (a 0-byte dataset): the rule that sized it, not the page cache
    assert describe_option({**row, "first_epoch_s": 0.0}).endswith("; sized by restore read")
