"""The report and the compare table: pinned scenarios side by side, inputs that differ first."""

from __future__ import annotations

import pytest

import calc
from calc import plots
from calc.report import compare_table, html_report, markdown_report, pin_name


def test_compare_table_lists_the_differing_input_first_then_requirements_and_cost() -> None:
    v100 = calc.plan("beast-imagenet-4xv100")
    a100 = calc.plan("beast-imagenet-4xv100", gpu="A100-SXM4-80GB")
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
    # two mirrored 24 TB HDDs (2 x $1,079.99) in a JBOD ($1,875) hold it: $6,772.48 (catalog figures)
    buy = next(b for b in fig.data if b.name == "b" and b.xaxis == "x8")
    assert buy.x[0] == pytest.approx(2737.5 + 2 * 1079.99 + 1875)


def test_compare_chart_title_states_which_plan_is_faster_and_which_storage_is_cheaper() -> None:
    # the article's V100 job (5,885 samples/s, the page cache + a bucket) against 3D U-Net on an H100
    # (19.5 samples/s, six SATA SSDs bought: $839.94 over 36 months = $23 a month)
    plans = [calc.plan("beast-imagenet-4xv100"), calc.plan("mlperf-unet3d-h100", site="on-prem")]
    title = plots.compare_chart(plans, ["a", "b"]).layout.title.text.replace("<br>", " ")
    assert title.startswith("Fastest: a (5,885 samples/s); cheapest storage: a ")
