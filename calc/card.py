"""The answer as a first screen states it: one design, what it costs, why, in three lines.

``calc.answer`` ranks every complete design of the job's site. The card names one of them, and
every chart title, report and tab that names "the answer" names the same one (``chosen``):

- no site known (none given, no server or storage that implies one): the answer buys at the
  default site (``calc.site.DEFAULT_SITE``, on-prem) and says so; each other site's price is a
  detail (issue 39: the card asked "Where does this job run?" and bought nothing);
- the page cache off (as the articles assume: every epoch reads storage): a design that relies
  on the page cache is not bought, since the plan's numbers (and the headline) read every
  epoch from storage; the best design that serves those reads is.

Money reads as the page prints it (``fmt_usd``); a sum whose rounded parts do not add up to
its rounded total is printed in cents, so "$95 + $48" never totals "$144".

References
----------
Issue 31 (the first screen that decides), 2026-11-24.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from calc.answers import Answer, deciding_sentence
from calc.cluster import ClusterAnswer
from calc.design import describe_option
from calc.plan import Plan, memory_line, stack_line
from calc.units import fmt, fmt_usd

SITE_LABELS = {"on-prem": "On-prem", "aws": "AWS", "gcp": "GCP", "azure": "Azure"}
"""The sites as the card's control names them."""

_PREFIX = re.compile(r"\b(\d[\d,]*) prefix(?:es)? of ([\w-]+(?:\.[\w-]+)*)")
"""``1 prefix of aws-s3-standard``: S3's request-rate partitions, jargon on a card."""
_PRICE = re.compile(r",? (\$[\d,]+|under \$1) (a month all in|to buy)$")
"""A design description's own closing price (the card's cost line says it)."""
_ASIDE = re.compile(r" \((?:[^()]|\([^()]*\))*\)")
"""A parenthesised aside, one level of nesting deep: ``($2,738 to buy; a cache copy, ...)``."""
_LIMITS = {"Iops; ": "Random reads: ", "Minimum; it sets ": "The smallest size sold serves it: "}
"""Sizing's limit names as the card says them (the rest read "Bandwidth: ...")."""
"""A one-tier description's own price: the card's cost line says it."""


@dataclass(frozen=True)
class Card:
    """The three lines of the answer (``buy``, ``cost``, ``why``; markdown); ``design`` is the
    chosen design (None when nothing serves); ``loader`` where the CPU cost per example came from
    (decoder, image, CPU)."""

    buy: str
    cost: str
    why: str
    design: dict[str, Any] | None
    loader: str = ""

    def lines(self) -> list[str]:
        """The card's lines (at most three); ``loader`` opens its details."""
        return [x for x in (self.buy, self.cost, self.why) if x]


def loader_line(p: Plan) -> str:
    """Where the loader's CPU time per example comes from, in one line: the decoder, the stored image
    and the training side, and the CPU (a measured time: where it was measured); the cores it asks."""
    cpu_s, cpu = fmt(p.cpu_seconds_per_example, "seconds"), p.sources.get("cpu", "")
    cores = f"{fmt(p.cpu_cores_per_node, 'count', 'cores')} a node at the demand"
    method = p.inputs.get("cpu_cost_method", 1.0)
    if method == 1.0:
        side = f"{p.train_resolution:g} px"
        how = f"{p.sources['decoder']} decoding a {p.sources['image_pixels']} image to {side} on {cpu}"
    elif method == 0.0:
        how = p.sources.get("cpu_seconds_per_example", "measured").replace("measured (scenario)", "measured")
    else:
        how = f"the model preset's figure, on {cpu}"
    if p.cpu_seconds_per_example <= 0:
        return ""
    return f"**Loader** {cpu_s} of CPU per example ({how}): {cores}"


def ranked(a: Answer, site: str | None = None) -> list[dict[str, Any]]:
    """The designs the card may buy at ``site`` (default: the answer's), best first: feasible ones,
    without a page-cache design when the scenario turns the page cache off."""
    site = site or a.site
    ok = [d for d in a.designs if d["feasible"] and d["site"] == site]
    if not a.plan.scenario.page_cache:
        ok = [d for d in ok if d["design"] != "page cache"]
    return ok


def chosen(a: Answer) -> dict[str, Any] | None:
    """The design the card buys: the first of ``ranked`` (None when nothing serves)."""
    ok = ranked(a)
    return ok[0] if ok else None


_SAID = (
    "Buy",
    "Rent",
    "Deciding:",
    "A month of training",
    "At the cheapest site",
    "Runners-up:",
    "Or, a ",
    "No storage",
)
"""Answer lines the card's three lines (or its per-site and next-best lines) already say."""


def details(a: Answer) -> list[str]:
    """What folds below the card: the next best designs, then the answer's notes (the site assumed
    and each other site's price, your own storage, GPUs fed, idle GPU time), in plain words."""
    out = []
    d = chosen(a)
    if d is not None and short_buy(str(d["description"])) != without_price(str(d["description"])):
        out.append(f"In full: {without_price(str(d['description']))}")  # the asides the card's line leaves out
    nxt = ranked(a)[1:3]
    if nxt:
        out.append("Next best: " + "; ".join(_design(n) for n in nxt))
    # The step the rates stand for: its software stack (the default said) and the GPU memory it takes.
    out += [stack_line(a.plan), memory_line(a.plan)]
    for line in a.lines():
        if line.startswith(_SAID):  # "Buy on-prem: ...", "Rent on AWS: ...": the per-site lines
            continue
        if line.startswith("The time to copy") and (d is None or math.isfinite(d["staging_s"])):
            continue
        out.append(plain_words(line))
    return out


def _design(d: Mapping[str, Any]) -> str:
    return f"{without_price(str(d['description']))}, {fmt_usd(d['monthly_total_usd'])} a month all in"


def without_price(description: str) -> str:
    """A design's description, in plain words, less its own closing prices (said beside it)."""
    text, shorter = description, _PRICE.sub("", description)
    while shorter != text:  # ", $35,467 to buy, $1,380 a month all in": both
        text, shorter = shorter, _PRICE.sub("", shorter)
    return plain_words(text)


def short_buy(description: str) -> str:
    """What a design buys, in one short line: the description less its asides (the drives' bays,
    usable sizes, purchase prices), which the details fold keeps (``details``)."""
    return _ASIDE.sub("", without_price(description))


def plain_words(text: str) -> str:
    """Text in a room's words (README "Glossary"): ``1 prefix of aws-s3-standard`` -> ``an
    aws-s3-standard bucket``; no module names. Prices stay where they are (issue 39: a details line
    lost its last runner-up's price)."""

    def prefix(m: re.Match[str]) -> str:
        n = int(m.group(1).replace(",", ""))
        return f"an {m.group(2)} bucket" if n == 1 else f"an {m.group(2)} bucket ({n:,} request-rate partitions)"

    return _PREFIX.sub(prefix, text).replace(" (calc.answer, recommend)", "")


def usd_sum(parts: Mapping[str, float]) -> tuple[str, str]:
    """The non-zero parts joined by " + " and their total, each as the page prints money.

    Rounded to whole dollars when the rounded parts add up to the rounded total, else in cents:
    (``rent $95 + writes $48``, ``$143``) never (``rent $95 + writes $48``, ``$144``).
    """
    shown = {k: v for k, v in parts.items() if v > 0 and math.isfinite(v)}
    total = sum(shown.values())
    whole = sum(round(v) for v in shown.values()) == round(total) and all(v > 0.5 for v in shown.values())

    def usd(x: float) -> str:
        return fmt_usd(x) if whole else f"${x:,.2f}"

    return " + ".join(f"{k} {usd(v)}" for k, v in shown.items()), usd(total)


def why(a: Answer, d: Mapping[str, Any], rec: pd.DataFrame) -> str:
    """The constraint that sized ``d``, one sentence (the answer's own when ``d`` is its design)."""
    # A design the answer ranked lower (the page cache off) gets the same sentence from sizing.
    text = a.deciding if d is a.design else deciding_sentence(a.plan, d, rec)
    text = text.removeprefix("Deciding: ")
    text = text[:1].upper() + text[1:]
    for word, said in _LIMITS.items():
        text = text.replace(word, said, 1) if text.startswith(word) else text
    return plain_words(text.replace("; ", ": ", 1) if text.split(";")[0].replace(" ", "").isalpha() else text)


def card(a: Answer, rec: pd.DataFrame) -> Card:
    """The card's three lines for ``a`` (``rec``: the plan's ``recommend`` table)."""
    p = a.plan
    site = a.site or ""
    d = chosen(a)
    if d is None:
        return Card(
            f"**Nothing in the catalog serves this job on {SITE_LABELS.get(site, site)}**: "
            "each option's reason is in the Storage section.",
            "",
            "",
            None,
            loader=loader_line(p),
        )
    verb = "Buy" if site == "on-prem" else "Rent"
    buy = f"**{verb}** {short_buy(str(d['description']))}"
    if d.get("needs"):  # a volume the nodes share (calc.engine.multi_attach): the room must know
        buy += f"; {d['needs']}"
    months = p.scenario.amortization_months
    purchase = float(d["purchase_usd"]) if math.isfinite(d["purchase_usd"]) else 0.0
    parts = {
        "rent": float(d["monthly_rent_usd"]),
        "reads": float(d["monthly_read_usd"]),
        "writes": float(d["monthly_write_usd"]),
        "egress": float(d["monthly_egress_usd"]),
        # bought storage's running costs (issue 28), part of monthly_total_usd
        "power": float(d.get("monthly_power_usd", 0.0)),
        "support": float(d.get("monthly_support_usd", 0.0)),
        f"purchases over {months} months": purchase / months,
    }
    each, total = usd_sum(parts)
    upfront = f"**{fmt_usd(purchase)} to buy**" if purchase > 0 else "nothing to buy"
    cost = f"**{total} a month** all in ({each or 'no charges'}); {upfront}"
    return Card(buy, cost, f"**Why** {why(a, d, rec)}", d, loader=loader_line(p))


CHARGEBACK_RULE = (
    "each job pays the rent of the bytes it stores, the read charges of its own reads, and the bought units, "
    "provisioned performance and the rest by its share of the axis that sized them (bandwidth, reads or capacity)"
)
"""How the cluster's chargeback splits its monthly figure (calc.cluster.chargeback), in a room's words."""


def cluster_card(a: ClusterAnswer) -> Card:
    """The cluster's answer in three lines: what to buy (or that its own storage serves), the one
    monthly figure to budget, and how the chargeback splits that figure over the jobs.

    The figure to budget is what the chargeback splits (``ClusterAnswer.monthly_usd``): the shared
    storage given, as it is, else the option to buy. A cheaper option that would serve the same
    load is said beside it, never as a second budget (issue 39: the card gave "$5,234 to buy S3"
    and "a $158,330 chargeback on FSx" without saying which to budget).
    """
    best, shared = a.best, a.plan.cluster.shared
    own, units = shared.get("storage"), shared.get("storage_units")
    budget = a.monthly_usd
    if best is None and not own:
        nothing = "**Nothing in the catalog serves this cluster**: each option's reason is in the tables."
        return Card(nothing, "", "", None)
    why = f"**Chargeback** splits the {fmt_usd(budget)} over the jobs (the table below): {CHARGEBACK_RULE}."
    if own and a.charged_option == own and math.isfinite(budget):
        system = f"{units:g} x {own}" if units is not None else str(own)
        serves = a.served_fraction >= 1 - 1e-9
        buy = f"**Budget {fmt_usd(budget)} a month**: your {system}, " + (
            "which serves the combined load" if serves else f"which serves {a.served_fraction:.0%} of the combined load"
        )
        cheaper = best is not None and best["option"] != own and best["monthly_total_usd"] < budget
        cost = (
            f"**Cheaper**: {short_buy(describe_option(best, brief=True))} would serve it for "
            f"{fmt_usd(best['monthly_total_usd'])} a month all in"
            if cheaper and best is not None
            else ""
        )
        return Card(buy, cost, why, best)
    assert best is not None  # no storage of its own: the option to buy
    upfront = float(best.get("purchase_usd", math.nan))
    buy = f"**Buy for the cluster** {short_buy(describe_option(best, brief=True))}"
    to_buy = f"{fmt_usd(upfront)} to buy" if math.isfinite(upfront) and upfront > 0 else "nothing to buy"
    return Card(buy, f"**Budget {fmt_usd(budget)} a month** all in; {to_buy}", why, best)
