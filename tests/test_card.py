"""calc.card: the answer as the first screen states it (issue 31), with hand-worked values."""

from __future__ import annotations

import re

import calc
from calc.card import card, chosen, plain_words, short_buy, usd_sum, without_price
from calc.sizing import recommend


def test_money_parts_add_up_to_the_total_shown() -> None:
    # $95.27 + $48.27 = $143.54: in whole dollars the parts read $95 + $48 = $143, the total $144
    each, total = usd_sum({"rent": 95.27, "writes": 48.27, "reads": 0.0})
    assert (each, total) == ("rent $95.27 + writes $48.27", "$143.54")
    # $95.20 + $48.20 = $143.40: whole dollars add up ($95 + $48 = $143), so whole dollars
    assert usd_sum({"rent": 95.2, "writes": 48.2}) == ("rent $95 + writes $48", "$143")


def test_plain_words() -> None:
    # issue 39: plain words keep every price (a runners-up line lost its last one); the card's own
    # line drops a description's closing prices (its cost line says them), and its asides
    assert (
        plain_words("1 prefix of aws-s3-standard, $145 a month all in")
        == "an aws-s3-standard bucket, $145 a month all in"
    )
    line = (
        "Runners-up: 161 TiB of aws-fsx-lustre-hdd-40 (177 TB), $14,693 a month all in; "
        "1 bucket of aws-s3-express, $25,417 a month all in"
    )
    assert plain_words(line) == line
    assert without_price("9 drives of nvme-gen4 in raid6 (53.76 TB usable), $35,467 to buy, $1,380 a month all in") == (
        "9 drives of nvme-gen4 in raid6 (53.76 TB usable)"
    )
    assert short_buy(
        "1 drive of nvme-gen4 per node ($2,738 to buy; a copy (80% full), in its bays) + 2 drives of hdd-7200"
        " in mirror (24 TB usable) to hold the dataset"
    ) == ("1 drive of nvme-gen4 per node + 2 drives of hdd-7200 in mirror to hold the dataset")
    assert plain_words("which sets 3 prefixes of aws-s3-express.") == (
        "which sets an aws-s3-express bucket (3 request-rate partitions)."
    )
    assert "calc.answer" not in plain_words("the answer (calc.answer, recommend) will not buy it")


def test_no_site_buys_on_prem_and_a_known_site_buys_one_design() -> None:
    # issue 39: no site, no server, no storage: the card asked "Where does this job run?" and bought
    # nothing; now it buys what an on-prem answer buys, and the answer says it assumed the site
    a = calc.answer("beast-imagenet-4xv100")
    on_prem = calc.answer("beast-imagenet-4xv100", site="on-prem")
    assert a.site == "on-prem" and a.site_assumed and not on_prem.site_assumed
    d, d_on_prem = chosen(a), chosen(on_prem)
    assert d is not None and d_on_prem is not None
    assert (d["description"], d["monthly_total_usd"]) == (d_on_prem["description"], d_on_prem["monthly_total_usd"])
    assert card(a, recommend(a.plan)).lines() == card(on_prem, recommend(on_prem.plan)).lines()
    assert a.lines()[1].startswith("Site not given: on-prem assumed")
    sc = calc.scenario("beast-imagenet-4xv100").replace(site="gcp")
    a = calc.answer(sc)
    d = chosen(a)
    # the page cache is off (the articles read every epoch from storage): not a page-cache design
    assert d is not None and d["design"] == "one tier" and d["store"] == "gcp-pd-ssd"
    lines = card(a, recommend(sc)).lines()
    assert len(lines) == 3 and lines[0] == "**Rent** 1 TB of gcp-pd-ssd"  # its asides fold ("In full: ...")
    assert lines[2].startswith("**Why** Bandwidth: the job needs 385.7 MB/s")  # 5,885 reads/s x 64 KiB


def test_plain_words_use_the_readmes_glossary() -> None:
    """Issue 39: "prefix", "TiBs", "Each of 1 node", "PUTs/s" on the card. Every plain word the card
    writes for a piece of jargon is the README glossary's, and the jargon never reaches the card."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    glossary = readme.split("## Glossary", 1)[1].split("\n## ", 1)[0]
    for plain, jargon in (("bucket", "prefix"), ("write requests/s", "PUTs/s"), ("TiB, TB", "never plural")):
        assert f"**{plain}**" in glossary and jargon in glossary, plain
    for name in calc.scenarios():
        for site in ("on-prem", "aws"):
            a = calc.answer(name, site=site)
            text = " ".join(card(a, recommend(a.plan)).lines())
            assert not re.search(r"\bprefix(es)?\b|TiBs|[Ee]ach of 1 node|PUTs", text), (name, site, text)


def test_a_shared_volume_says_it_needs_a_cluster_file_system() -> None:
    # beast-nfs-shop on AWS: 5 jobs on 5 nodes share one dataset; io2 multi-attaches to at most 16
    # instances, so 1 < 5 <= 16: one volume serves all five, and GFS2/OCFS2 must share it (issue 38:
    # the card said only "1 volume of aws-ebs-io2"; only recommend's caveats said so)
    a = calc.answer("beast-nfs-shop", site="aws")
    c = card(a, recommend(a.plan))
    assert c.buy == (
        "**Rent** 1 volume of aws-ebs-io2; multi-attached to 5 nodes (at most 16): "
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
