"""The report and the compare table: pinned scenarios side by side, inputs that differ first."""

from __future__ import annotations

import math
import re

import pytest

import calc
from calc import plots
from calc import storage as st
from calc.card import details
from calc.report import (
    cluster_html,
    cluster_jobs_note,
    cluster_markdown,
    compare_table,
    html_report,
    markdown_report,
    pin_name,
    sections,
)
from calc.sizing import recommend
from calc.units import fmt


def test_compare_table_lists_the_differing_input_first_then_requirements_and_cost() -> None:
    v100 = calc.plan("beast-imagenet-4xv100", site="aws")  # rented: nothing to buy (issue 39: no site is on-prem)
    a100 = calc.plan("beast-imagenet-4xv100", site="aws", gpu="A100-SXM4-80GB")
    name = pin_name(v100.scenario, a100.scenario)
    assert name == "gpu=V100-SXM2-16GB"  # named by what differs from the current scenario
    t = compare_table([v100, a100], [name, "current"])
    assert t.attrs["changed_inputs"] == ["Input: GPU"]  # only the GPU differs
    assert t.index[0] == "Input: GPU" and list(t.iloc[0]) == ["V100-SXM2-16GB", "A100-SXM4-80GB"]
    # the article: 128 examples per V100; 5,885 reads/s x 64 KiB = 385,679,360 B/s
    assert t.loc["Batch size per GPU", name] == "128 examples"
    assert t.loc["Read bandwidth", name] == "385.7 MB/s"
    # the cost rows carry each plan's answer: the page cache + a bucket costs a few dollars a month
    assert t.loc["Monthly cost, all in", name].startswith("$")
    assert t.loc["To buy up front", name] == "nothing"


def test_report_carries_the_pinned_scenarios() -> None:
    p = calc.plan("beast-imagenet-4xv100", gpu="A100-SXM4-80GB")
    pinned = [calc.scenario("beast-imagenet-4xv100")]
    md = markdown_report(p, compared=pinned)
    assert "## Compared scenarios" in md
    assert "| Input: GPU | V100-SXM2-16GB | A100-SXM4-80GB |" in md
    assert "## Compared scenarios" not in markdown_report(p)  # nothing pinned, no section
    html = html_report(p, compared=pinned)
    assert "Compared scenarios" in html and "storage a month [USD]" in html  # its chart, cost panel


def test_compare_chart_has_a_panel_per_requirement_and_two_for_cost() -> None:
    plans = [calc.plan("beast-imagenet-4xv100"), calc.plan("mlperf-unet3d-h100", site="on-prem")]
    fig = plots.compare_chart(plans, ["a", "b"])
    titles = [a.text for a in fig.layout.annotations]
    assert "worker RAM [GiB]" in titles and "storage to buy [USD]" in titles
    assert len(fig.data) == 2 * 8  # a bar per plan and panel
    # mlperf-unet3d-h100 on-prem: one PM9A3 (nvme-gen4, $2,737.50) caches the dataset in the node,
    # two mirrored 24 TB HDDs (2 x $1,079.99) in a new 24-bay server with its NIC, 2 switch ports and
    # 2 DACs ($8,300.49 + $400 + 2 x $298.81 + 2 x $40 = $9,378.11; new parts, issue 28) hold it: $14,275.59
    buy = next(b for b in fig.data if b.name == "B: b" and b.xaxis == "x8")  # plans are lettered (issue 31)
    assert buy.x[0] == pytest.approx(2737.5 + 2 * 1079.99 + 8300.49 + 400 + 2 * 298.81 + 2 * 40)


def test_compare_chart_title_states_which_plan_is_faster_and_which_storage_is_cheaper() -> None:
    # the article's V100 job on AWS (5,885 samples/s, one gp3 volume, tens of dollars a month) against
    # 3D U-Net on an H100 on-prem (19.5 samples/s, $5,848.82 of parts / 36 months = $162 a month; NIC new, $400).
    # Plans are letters in the title, named once in the legend (issue 31: the title repeated its inputs).
    plans = [calc.plan("beast-imagenet-4xv100", site="aws"), calc.plan("mlperf-unet3d-h100", site="on-prem")]
    fig = plots.compare_chart(plans, ["gpu=V100-SXM2-16GB", "gpu=H100-SXM"])
    title = fig.layout.title.text.replace("<br>", " ")
    assert title.startswith("Fastest: A (5,885 samples/s); cheapest storage: A ")
    assert "gpu=" not in title and {d.name for d in fig.data} == {"A: gpu=V100-SXM2-16GB", "B: gpu=H100-SXM"}
    # A site not given: priced at the site the answer assumes, on-prem (issue 39; before, the chart priced
    # nothing for it). Both on-prem designs: ($14,275.59 / 36 = $396.54 of parts a month + power (14 + 2 x 9.5
    # + 300 + 12 + 2 x 6 = 357 W x 730 h x $0.13/kWh) $33.88 + support (12 % a year / 12) $142.76 = $573.18)
    unsited = plots.compare_chart([calc.plan("beast-imagenet-4xv100"), plans[1]], ["x", "y"])
    assert "storage costs the same ($573 a month all in)" in unsited.layout.title.text.replace("<br>", " ")


# ------------------------------------------------------------------ issue 20: a report a meeting can trust


def _head(report_html: str) -> str:
    """What the HTML report shows between its title and its first section: the subtitle."""
    return report_html.split("</h1>", 1)[1].split("<h2>", 1)[0]


def test_report_compares_the_plan_against_every_pinned_scenario() -> None:
    # two pins, the current plan last: one column each, the GPU row naming all three in order
    p = calc.plan("beast-imagenet-4xv100", gpu="A100-SXM4-80GB")
    pinned = [calc.scenario("beast-imagenet-4xv100"), calc.scenario("beast-imagenet-4xv100", gpu="H100-SXM")]
    md = markdown_report(p, compared=pinned)
    section = md.split("## Compared scenarios", 1)[1].split("\n## ", 1)[0]
    assert "|  | gpu=V100-SXM2-16GB | gpu=H100-SXM | this scenario |" in section
    assert "| Input: GPU | V100-SXM2-16GB | H100-SXM | A100-SXM4-80GB |" in section
    # the article's V100 pin: 128 examples per GPU, 5,885 reads/s x 64 KiB = 385,679,360 B/s
    row = next(line for line in section.splitlines() if line.startswith("| Read bandwidth |"))
    assert row.split(" | ")[1] == "385.7 MB/s"


def test_subtitle_describes_the_plan_not_the_preset_it_was_edited_from() -> None:
    # the preset says "4 x V100" in its description; the user runs it on H100s
    p = calc.plan("beast-imagenet-4xv100", gpu="H100-SXM")
    head = _head(html_report(p))
    assert "v100" not in head.lower()
    assert "resnet50 on 4 x H100-SXM (one job), fp16; storage: none chosen; site: on-prem (assumed: not given)." in head
    md = markdown_report(p)
    md_head = md.split("\n## ", 1)[0]
    assert "v100" not in md_head.split("\n", 1)[1].lower()  # below the title, which carries the name
    # the preset's words are kept, attributed, beside the change that makes them stale
    changed = md.split("## What changed from the preset", 1)[1].split("\n## ", 1)[0]
    assert "The preset `beast-imagenet-4xv100` describes itself as: Feeding the beast" in changed
    assert "| GPU | gpu | H100-SXM | V100-SXM2-16GB |" in changed
    # the preset as it is: its description still describes it, so the subtitle carries it
    head = _head(html_report(calc.plan("beast-imagenet-4xv100")))
    assert "4 x V100-SXM2-16GB (one job)" in head and "Feeding the beast - ImageNet on ResNet-50, 4 x V100" in head


def test_subtitle_counts_every_job_and_names_storage_and_site() -> None:
    # 3 jobs of 8 GPUs = 24 GPUs; nvme-gen4 is a drive, so the site is the user's on-prem
    p = calc.plan("beast-imagenet-4xv100", gpus_per_job=8, jobs=3, storage="nvme-gen4", site="on-prem")
    md = markdown_report(p)
    assert "Reported plan: resnet50 on 24 x V100-SXM2-16GB (3 jobs of 8 GPUs), fp16; " in md
    assert "storage: nvme-gen4; site: on-prem." in md


def test_share_link_wraps_instead_of_running_off_the_page() -> None:
    link = "https://feedrate.example/?scenario=beast-imagenet-4xv100&gpu=H100-SXM&" + "&".join(
        f"k{i}=v{i}" for i in range(40)
    )
    page = html_report(calc.plan("beast-imagenet-4xv100"), link=link)
    anchor = re.search(r"<a class='link' href='([^']*)' style='([^']*)'>", page)
    assert anchor is not None, "the link is an element a style can wrap"
    assert anchor.group(1) == link.replace("&", "&amp;")
    assert "overflow-wrap:anywhere" in anchor.group(2) and "word-break:break-all" in anchor.group(2)
    assert ".link{overflow-wrap:anywhere;word-break:break-all}" in page  # also in the page's style sheet
    md = markdown_report(calc.plan("beast-imagenet-4xv100"), link=link)
    assert f"- Link back to this scenario: <{link}>" in md
    # an address that is not http(s) is shown, wrapped, but not made clickable
    page = html_report(calc.plan("beast-imagenet-4xv100"), link="javascript:alert(1)")
    assert "href='javascript" not in page and "<span class='link'" in page


def test_cluster_report_link_wraps() -> None:
    a = calc.cluster_answer(calc.cluster({"beast-imagenet-4xv100": 2}))
    page = cluster_html(a, link="https://feedrate.example/?" + "x" * 400)
    assert "pre{white-space:pre-wrap;overflow-wrap:anywhere" in page
    assert "https://feedrate.example/?" + "x" * 400 in page


def test_cluster_jobs_reading_nothing_say_why() -> None:
    """ResNet-50 on ImageNet-1k (146.9 GB) fits in an 8 x H100 node's page cache: after the first epoch it
    reads 0 B/s from the store, and the jobs table says why; the Llama 3 pretrain (544.6 GB of tokens,
    page cache off in its preset) reads from the store and is not named."""
    resnet = calc.scenario("resnet50-8xh100-imagenet").replace(dataset="imagenet-1k", page_cache=True)
    c = calc.cluster([(resnet, 3), ("llama3-8b-pretrain-8xh100", 1)])
    a = calc.cluster_answer(c)
    note = cluster_jobs_note(a)
    assert note.startswith("resnet50-8xh100-imagenet-edited: 0 B/s of reads from the store")
    assert "llama3" not in note
    assert note in cluster_markdown(a)
    assert cluster_jobs_note(calc.cluster_answer(calc.cluster({"llama3-8b-pretrain-8xh100": 1}))) == ""


def _figure_titles(p: calc.Plan) -> dict[str, list[str]]:
    return {s.title: [f.layout.title.text for f in s.figures] for s in sections(p, charts=True)}


def test_no_checkpoints_no_empty_chart_but_a_sentence_how_to_plan_them() -> None:
    p = calc.plan("beast-imagenet-4xv100")  # the preset gives no checkpoint interval
    assert p.checkpoint_write_bytes_per_s == 0
    titles = _figure_titles(p)
    assert not any("heckpoint" in t for ts in titles.values() for t in ts)
    assert titles["Checkpoints"] == []
    md = markdown_report(p)
    section = md.split("## Checkpoints", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    assert section == [
        '- No checkpoints are planned, so no checkpoint chart is drawn: to size their writes, set "Checkpoint '
        'interval" (Checkpoints inputs: checkpoint_interval_s) to a time between saves, or to optimal '
        "(the Young-Daly interval)."
    ]


def test_checkpoints_planned_get_the_timeline_and_the_interval_chart() -> None:
    # Llama 3 8B, 8,030,261,248 params x 14 B (mlperf_mixed_adam) = 112,423,657,472 B, saved every
    # 30 min asynchronously (ZeRO-3 sharded): the drain is 112,423,657,472 B / 1,800 s = 62.46 MB/s
    p = calc.plan("llama3-8b-pretrain-8xh100")
    titles = _figure_titles(p)["Checkpoints"]
    assert len(titles) == 2
    assert titles[0].startswith("Async saves drain 62.46 MB/s")  # plots.checkpoint_timeline
    assert titles[1] == plots.checkpoint_interval_chart(p).layout.title.text
    assert not any("heckpoint" in t or "saves" in t for t in _figure_titles(p)["Charts"])  # not twice
    assert "**Checkpoint write bandwidth, all jobs**: 62.46 MB/s" in markdown_report(p)


def test_saves_of_an_empty_state_say_so_without_a_chart() -> None:
    # a typed model state of 0 B: saves every 30 min write nothing; the sentence must not ask for an interval
    p = calc.plan("llama3-8b-pretrain-8xh100", model_state_bytes="0 B")
    assert _figure_titles(p)["Checkpoints"] == []
    md = markdown_report(p)
    section = md.split("## Checkpoints", 1)[1].split("\n## ", 1)[0]
    assert "- Saves every 30 min are planned, but the checkpoint is 0 B (" in section
    assert "Checkpoint interval" not in section


def test_what_to_buy_carries_every_answer_line_and_the_monthly_charges() -> None:
    # mlperf-unet3d-h100 on-prem: one PM9A3 cache drive ($2,737.50) + two mirrored 24 TB HDDs
    # (2 x $1,079.99) in a new 24-bay server with its NIC, ports and DACs ($9,378.11) = $14,275.59 bought,
    # / 36 months = $396.54 a month; + power (14 + 2 x 9.5 + 300 + 12 + 2 x 6 = 357 W) x 730 h x
    # $0.13/kWh = $33.88 and support 12 % a year of $14,275.59 / 12 = $142.76: $573.18 (in cents: the
    # rounded charges $34 + $143 + $397 = $574 would not add up to $573)
    p = calc.plan("mlperf-unet3d-h100", site="on-prem")
    section = markdown_report(p).split("## What to buy, and what it costs", 1)[1].split("\n## ", 1)[0]
    bullets = [line.removeprefix("- ") for line in section.strip().splitlines()]
    # the page's card, word for word, then what folds below it (issue 31: the report says what the page says)
    assert bullets[:3] == [
        # the card's first line less its asides (issue 39: the answer in one short line); in full below
        "Buy 1 drive of nvme-gen4 per node on 1 node + 2 drives of hdd-7200 in mirror to hold the dataset",
        "$573.18 a month all in (power $33.88 + support $142.76 + purchases over 36 months $396.54); $14,276 to buy",
        "Why: The node reads 2.86 GB/s from its own copy; the store only holds the dataset (2.75 TB).",
    ]
    assert bullets[3:] == details(calc.answer(p))
    # no site given (issue 39): the report buys on-prem, as the card does, says it assumed it and prices
    # each other site; no "Where does this job run?" nor "beside this box" (a file has no box)
    q = calc.plan("mlperf-unet3d-h100")
    section = markdown_report(q).split("## What to buy, and what it costs", 1)[1].split("\n## ", 1)[0]
    assert section.strip().splitlines()[:3] == [f"- {b}" for b in bullets[:3]]
    assert "- Site not given: on-prem assumed" in section and "rent on AWS $" in section
    assert "Where does this job run?" not in html_report(q) and "beside this box" not in html_report(q)


_NOT_A_NUMBER = re.compile(r"(?<![A-Za-z])(nan|inf|infinity)(?![A-Za-z])", re.IGNORECASE)


@pytest.mark.parametrize("name", calc.scenarios())
def test_markdown_tables_have_no_nan_or_inf(name: str) -> None:
    md = markdown_report(calc.plan(name))
    cells = [c.strip() for line in md.splitlines() if line.startswith("|") for c in line.strip("|").split("|")]
    assert len(cells) > 50  # the tables are there
    bad = [c for c in cells if _NOT_A_NUMBER.search(c) or c == "None"]
    assert not bad, f"{name}: {bad[:5]}"


def test_changes_table_says_not_set_for_an_input_the_preset_leaves_empty() -> None:
    md = markdown_report(calc.plan("beast-imagenet-4xv100", site="aws"))
    assert "| Site | site | aws | not set |" in md


# ------------------------------------------------------------------ issue 31: charts a room reads


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("beast-imagenet-4xv100", {}),  # 83.96 GB over the default link: seconds
        ("mlperf-unet3d-h100", {}),
        ("llama3-8b-pretrain-8xh100", {}),
        ("llama3-8b-pretrain-8xh100", {"checkpoint_interval_s": "4 h"}),
    ],
)
def test_time_axes_carry_the_unit_their_title_writes(name: str, changes: dict[str, str]) -> None:
    """Issue 31: the Moving-the-data title said seconds while its axis was in minutes. A duration in
    the title is written by fmt in one unit (s under 2 min, min under 2 h, h ...); the axis uses it."""
    p = calc.plan(name, **changes)
    fig = plots.transfer_timeline(p)
    unit = fmt(p.transfer_time_s, "seconds").split()[-1]  # the duration the title writes
    assert fig.layout.xaxis.title.text == f"time [{unit}]"
    if p.checkpoint_write_bytes_per_s > 0:
        fig = plots.checkpoint_timeline(p)
        interval = fmt(p.values["checkpoint_interval_used_s"], "seconds")
        assert f"every {interval}" in fig.layout.title.text.replace("<br>", " ") or "drain" in fig.layout.title.text
        assert fig.layout.xaxis.title.text == f"time [{interval.split()[-1]}]"


def test_chart_words_are_plain() -> None:
    """No code names on a chart: n_max, Young-Daly, checkpoint_interval_s; a percentage never split."""
    p = calc.plan("llama3-8b-pretrain-8xh100")
    texts = []
    charts = (plots.memory_breakdown(p), plots.checkpoint_interval_chart(p), plots.checkpoint_timeline(p))
    for fig in (*charts, plots.demand_vs_batch(p)):
        texts.append(fig.layout.title.text)
        texts += [a.text for a in fig.layout.annotations]
        texts += [str(d.text) for d in fig.data if getattr(d, "text", None) is not None]
    words = " ".join(texts)
    assert "n_max" not in words and "Young-Daly" not in words and "_s" not in words, words
    assert "most that fit" in words and "optimal" in words and "this job: 1" in words
    assert not re.search(r"\bn = ", words)  # the batch marker said "n = 256"
    assert not re.search(r"\d<br>%", words)  # "99.98 %" stays on one line


def test_the_storage_map_names_every_option_without_hover() -> None:
    p = calc.plan("beast-imagenet-4xv100", site="aws")
    fig = plots.storage_map(p, recommend(p), answer=calc.answer(p.scenario))
    named = " ".join(d.name for d in fig.data)
    assert all(o in named for o in st.options())
    assert "hover" not in named
    assert fig.layout.title.text.replace("<br>", " ").startswith("aws-ebs-gp3 is what the answer buys on AWS")
    # Two columns of names, every one shown (no scrolling legend): 38 entries in 19 rows of 19 px.
    assert fig.layout.legend.entrywidth == 0.5 and fig.layout.margin.b == 90 + 19 * math.ceil(len(fig.data) / 2)
    assert not any(len(d.name) > 45 for d in fig.data)  # "at the edge" in the axis title, not in each name
    llm = calc.plan("llama3-8b-pretrain-8xh100", site="on-prem")
    title = plots.storage_map(llm, recommend(llm), answer=calc.answer(llm.scenario)).layout.title.text
    assert title.replace("<br>", " ").startswith("hdd-7200 is what the answer buys on-prem:")  # not "on On-prem"


def test_the_cluster_day_chart_draws_every_jobs_saves_as_resolved() -> None:
    """Issue 31: the lab cluster's day chart left out the saves of every job whose mode is "auto"
    (resolved to async for sharded state): 2.23 GB/s drawn under a "sized for 2.48 GB/s" line. Aligned
    saves: the drawn peak is the sized load (reads + every job's save at once)."""
    from pathlib import Path

    from calc.cluster_input import Cluster

    lab = Path(__file__).resolve().parent.parent / "presets" / "clusters" / "lab-168-gpus.yaml"
    cp = calc.cluster(Cluster.from_yaml(lab.read_text(), "lab-168-gpus.yaml"))
    fig = plots.cluster_day(cp)
    stacked = [sum(ys) for ys in zip(*(d.y for d in fig.data if d.y is not None), strict=True)]
    assert max(stacked) == pytest.approx(cp.storage_need_bytes_per_s / 1e9, rel=1e-9)
    llama = [d for d in fig.data if d.name.startswith("llama3-8b-pretrain-8xh100") and d.name.endswith("checkpoints")]
    assert llama and max(llama[0].y) > 0  # an "auto" job's saves are drawn


def test_the_report_writes_headroom_as_the_page_does() -> None:
    """Issue 31: the report printed "40,290,213.0x" where the page says "over 100x"."""
    from calc.report import headroom, storage_table

    assert (headroom(40_290_213.0), headroom(2.54), headroom(float("inf"))) == ("over 100x", "2.5x", "")
    p = calc.plan("gpt-1b-h100-tokens")  # reads a few kB/s: every option has huge headroom
    table = storage_table(recommend(p))
    cells = [str(x) for x in table["Bandwidth headroom"]] + [str(x) for x in table["Reads/s headroom"]]
    assert all(not re.fullmatch(r"[\d,]{4,}\.\dx", c) for c in cells), cells


def test_a_checkpoint_benchmark_without_reads_says_so() -> None:
    """MLPerf's checkpoint benchmark reads no dataset: its drain is not "beside 0 B/s of reads"."""
    title = plots.checkpoint_timeline(calc.plan("mlperf-checkpoint-llama3-70b")).layout.title.text.replace("<br>", " ")
    assert "(no dataset read)" in title and "0 B/s" not in title
    llm = plots.checkpoint_timeline(calc.plan("llama3-8b-pretrain-8xh100")).layout.title.text.replace("<br>", " ")
    # 7.906 samples/s x 8,192 tokens x 4 B = 259.1 kB/s (7.83 and 256.7 kB/s before issue 41's fit: the
    # transformer layer efficiency is calibrated against the fitted memory efficiency, 0.60 -> 0.68)
    assert "beside 259.1 kB/s of reads" in llm


# ------------------------------------------------------------------ issue 39: labels a room can read


def test_map_labels_never_overprint_and_join_points_too_close_to_number_apart() -> None:
    # Three decades each way over 700 x 500 px: 233 and 167 px a decade. Five points within 0.5 px of
    # one another take the four sides of their spot; the fifth joins the nearest label that still fits
    # with the longer text: "4, 5" and "3, 5" (31 px wide) below and above would touch the side labels
    # (14 px high, centred) by a pixel, so "2, 5" on the left; a point three decades away keeps its own.
    ranges = ((0.0, 3.0), (0.0, 3.0))
    near = [(10 * (1 + k / 1000), 10.0) for k in range(5)]
    got = plots.map_labels([*near, (1000, 1000)], ["1", "2", "3", "4", "5", "6"], (), ranges)
    assert got == [
        ("middle right", "1"),
        ("middle left", "2, 5"),
        ("top center", "3"),
        ("bottom center", "4"),
        ("middle right", ""),
        ("middle right", "6"),
    ]
    # A big point (the workload's star) just right of a point pushes its number to another side.
    star = [(10 * 10 ** (12 / 233), 10)]  # 12 px to the right
    assert plots.map_labels([(10, 10)], ["1"], star, ranges)[0][0] == "middle left"


def test_compare_labels_sit_after_their_bars_at_one_size() -> None:
    """main: inside labels, which Plotly shrank to 4 px on a short bar beside a long one."""
    plans = [calc.plan("beast-imagenet-4xv100", site="aws"), calc.plan("mlperf-unet3d-h100", site="on-prem")]
    fig = plots.compare_chart(plans, ["A", "B"])
    bars = [t for t in fig.data if t.type == "bar"]
    assert {t.textposition for t in bars} == {"outside"} and {t.textfont.size for t in bars} == {plots.COMPARE_LABEL_PX}
    # each panel's axis runs to 2.2x its longest bar (utilisation: 1.65x), so the label fits after it
    assert fig.layout.xaxis.range[1] == pytest.approx(2.2 * max(q.samples_per_s for q in plans))
