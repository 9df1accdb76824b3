"""The answer as a first screen states it: one design, what it costs, why, in three lines.

``calc.answer`` ranks every complete design of the job's site. The card names one of them, and
every chart title, report and tab that names "the answer" names the same one (``chosen``):

- no site known (none given, no server or storage that implies one): no design is chosen; the
  card asks where the job runs (the price of each site is a detail, never a pick from a tie);
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
from calc.plan import Plan, memory_line, stack_line
from calc.units import fmt, fmt_usd

SITE_LABELS = {"on-prem": "On-prem", "aws": "AWS", "gcp": "GCP", "azure": "Azure"}
"""The sites as the card's control names them."""

_PREFIX = re.compile(r"\b(\d[\d,]*) prefix(?:es)? of ([\w-]+(?:\.[\w-]+)*)")
"""``1 prefix of aws-s3-standard``: S3's request-rate partitions, jargon on a card."""
_PRICE = re.compile(r",? (\$[\d,]+|under \$1) (a month all in|to buy)$")
_LIMITS = {"Iops; ": "Random reads: ", "Minimum; it sets ": "The smallest size sold serves it: "}
"""Sizing's limit names as the card says them (the rest read "Bandwidth: ...")."""
"""A one-tier description's own price: the card's cost line says it."""


@dataclass(frozen=True)
class Card:
    """The three lines of the answer (``buy``, ``cost``, ``why``; markdown), or ``ask`` when the
    site is not known; ``design`` is the chosen design (None when asking or nothing serves);
    ``loader`` where the CPU cost per example came from (decoder, image, CPU)."""

    buy: str
    cost: str
    why: str
    design: dict[str, Any] | None
    ask: str = ""
    loader: str = ""

    def lines(self) -> list[str]:
        """The card's lines (at most three); ``loader`` opens its details."""
        return [x for x in (self.ask, self.buy, self.cost, self.why) if x]


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
    """The design the card buys: the first of ``ranked``; None when the site is unknown."""
    if a.site is None:
        return None
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
    """What folds below the card: each site's best design (site unknown) or the next best ones,
    then the answer's notes (your own storage, GPUs fed, idle GPU time), in plain words."""
    out = []
    if a.site is None:
        for site, label in SITE_LABELS.items():
            best = ranked(a, site)
            if best:
                out.append(f"{label}: {_design(best[0])}")
    else:
        nxt = ranked(a)[1:3]
        if nxt:
            out.append("Next best: " + "; ".join(_design(d) for d in nxt))
    # The step the rates stand for: its software stack (the default said) and the GPU memory it takes.
    out += [stack_line(a.plan), memory_line(a.plan)]
    d = chosen(a)
    for line in a.lines():
        if line.startswith(_SAID):  # "Buy on-prem: ...", "Rent on AWS: ...": the per-site lines
            continue
        if line.startswith("The time to copy") and (d is None or math.isfinite(d["staging_s"])):
            continue
        out.append(plain_words(line))
    return out


def _design(d: Mapping[str, Any]) -> str:
    return f"{plain_words(str(d['description']))}, {fmt_usd(d['monthly_total_usd'])} a month all in"


def plain_words(text: str) -> str:
    """A sizing description in a room's words: ``1 prefix of aws-s3-standard`` -> ``an aws-s3-standard bucket``."""

    def prefix(m: re.Match[str]) -> str:
        n = int(m.group(1).replace(",", ""))
        return f"an {m.group(2)} bucket" if n == 1 else f"an {m.group(2)} bucket ({n:,} request-rate partitions)"

    return _PREFIX.sub(prefix, _PRICE.sub("", text)).replace(" (calc.answer, recommend)", "")


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
    if a.site is None:
        return Card(
            "",
            "",
            "",
            None,
            ask=(
                "**Where does this job run?** Choose the site beside this box: what to buy and what it costs "
                "depend on it (on-prem parts are bought; clouds rent by the month)."
            ),
            loader=loader_line(p),
        )
    d = chosen(a)
    if d is None:
        return Card(
            f"**Nothing in the catalog serves this job on {SITE_LABELS.get(a.site, a.site)}**: "
            "each option's reason is in the Storage section.",
            "",
            "",
            None,
            loader=loader_line(p),
        )
    verb = "Buy" if a.site == "on-prem" else "Rent"
    buy = f"**{verb}** {plain_words(str(d['description']))}"
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
