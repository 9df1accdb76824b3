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
