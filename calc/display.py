"""Rich displays for a notebook: HTML (Jupyter) and Markdown (a Markdown cell, an export) of a
Plan, an Answer, a Scenario, a ClusterPlan and a ClusterAnswer.

The classes live below this module (calc.plan, calc.answers, calc.cluster, calc.scenario) and do
not import it; ``calc/__init__.py`` attaches these functions as their ``_repr_html_`` and
``_repr_markdown_``, so imports point down. A plan's display opens with what a reader needs
first: the answer (what to buy, what it costs) and every warning, then the headline
requirements; the full table of outputs follows (folded in HTML).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from calc.answers import Answer
from calc.answers import job_answer as answer
from calc.cluster import ClusterAnswer, ClusterPlan, cluster_answer
from calc.errors import InputError
from calc.plan import Plan
from calc.registry import OUTPUTS
from calc.report import markdown_table
from calc.scenario import FIELDS, Scenario, to_text
from calc.units import fmt


def _md_list(title: str, items: Sequence[str]) -> str:
    return f"**{title}**\n\n" + "\n".join(f"- {x}" for x in items) if items else ""


def _html_list(title: str, items: Sequence[str], style: str = "") -> str:
    if not items:
        return ""
    li = "".join(f"<li>{html.escape(x)}</li>" for x in items)
    return f"<p style='margin:0.4em 0 0 0'><b>{html.escape(title)}</b></p><ul style='{style}'>{li}</ul>"


_WARN = "color:#8a4b00"


def _answer_lines(p: Plan) -> list[str]:
    """The answer's sentences; where no answer can be given, the reason (a display never raises)."""
    try:
        return answer(p).lines()
    except InputError as e:
        return [f"No answer: {e}"]


def headline_frame(p: Plan) -> pd.DataFrame:
    """The headline requirements of a plan, its checkpoints' too when it saves: label and value with its unit."""
    frame = p.to_frame()
    keys = p.headline_outputs
    return pd.DataFrame({"requirement": [frame.loc[k, "label"] for k in keys], "value": [p.formatted(k) for k in keys]})


def plan_markdown(p: Plan) -> str:
    """A plan as Markdown: title, answer, warnings, headline requirements, bottleneck."""
    parts = [
        f"### {p.title}",
        _md_list("Answer", _answer_lines(p)),
        _md_list("Warnings", p.warnings),
        markdown_table(headline_frame(p)),
        f"Bottleneck: **{p.bottleneck}**; step time from {p.step_method}. "
        f"Every output: `p.to_frame()`; every formula: `print(p.explain())`.",
    ]
    return "\n\n".join(x for x in parts if x)


def plan_html(p: Plan) -> str:
    """A plan as HTML: title, answer, warnings, headline, then every output (folded)."""
    full = p.to_frame()[["label", "display", "formula"]].to_html(border=0)
    return (
        f"<div><h4 style='margin:0'>{html.escape(p.title)}</h4>"
        + _html_list("Answer", _answer_lines(p))
        + _html_list("Warnings", p.warnings, _WARN)
        + headline_frame(p).to_html(index=False, border=0)
        + f"<p>Bottleneck: <b>{html.escape(p.bottleneck)}</b>; step time from {html.escape(p.step_method)}.</p>"
        + f"<details><summary>All {len(OUTPUTS)} outputs with their formulas</summary>{full}</details>"
        + "</div>"
    )


def answer_markdown(a: Answer) -> str:
    """An answer as Markdown: its sentences, then the chosen design's monthly charges."""
    charges = [f"{k}: ${v:,.0f}" for k, v in a.charges.items() if math.isfinite(v)]
    parts = (f"### Answer: {a.plan.title}", _md_list("What to buy", a.lines()), _md_list("Monthly charges", charges))
    return "\n\n".join(x for x in parts if x)


def answer_html(a: Answer) -> str:
    """An answer as HTML: its sentences and the chosen design's monthly charges."""
    charges = [f"{k}: ${v:,.0f}" for k, v in a.charges.items() if math.isfinite(v)]
    return (
        f"<div><h4 style='margin:0'>Answer: {html.escape(a.plan.title)}</h4>"
        + _html_list("What to buy", a.lines())
        + _html_list("Monthly charges", charges)
        + "</div>"
    )


def scenario_frame(sc: Scenario) -> pd.DataFrame:
    """The inputs that differ from the defaults: field, label, value as text."""
    changed = sc.to_dict(changed_only=True)
    return pd.DataFrame(
        [{"input": k, "label": FIELDS[k].label, "value": to_text(v)} for k, v in changed.items() if k in FIELDS]
    )


def scenario_markdown(sc: Scenario) -> str:
    """A scenario as Markdown: name, description, the inputs that differ from the defaults."""
    head = f"### Scenario {sc.name}\n\n{sc.description}".rstrip()
    frame = scenario_frame(sc)
    return head + ("\n\n" + markdown_table(frame) if len(frame) else "\n\nEvery input at its default.")


def scenario_html(sc: Scenario) -> str:
    """A scenario as HTML: name, description, the inputs that differ from the defaults."""
    frame = scenario_frame(sc)
    return (
        f"<div><h4 style='margin:0'>Scenario {html.escape(sc.name)}</h4><p>{html.escape(sc.description)}</p>"
        + (frame.to_html(index=False, border=0) if len(frame) else "<p>Every input at its default.</p>")
        + "</div>"
    )


def _human(df: pd.DataFrame) -> pd.DataFrame:
    """Columns in base units shown with their unit (bytes/s, bytes, reads/s), fractions as %."""
    out = df.copy()
    for c in out.columns:
        if not pd.api.types.is_float_dtype(out[c]):
            continue
        kind: Any = (
            "bytes_per_s"
            if c.endswith("bytes_per_s")
            else "bytes"
            if c.endswith("_bytes")
            else "count_per_s"
            if c.endswith(("_iops", "_per_s"))
            else None
        )
        if kind:
            out[c] = [fmt(v, kind) for v in out[c]]
        elif "utilization" in c:
            out[c] = [f"{v:.0%}" for v in out[c]]
    return out


def _totals_frame(cp: ClusterPlan) -> pd.DataFrame:
    rows = []
    for k, v in cp.totals().items():
        kind: Any = "bytes_per_s" if k.endswith("bytes_per_s") else "bytes" if k.endswith("_bytes") else None
        rows.append({"total": k, "value": fmt(v, kind) if kind else f"{v:,.0f}"})
    return pd.DataFrame(rows)


def cluster_plan_markdown(cp: ClusterPlan) -> str:
    """A cluster's combined load as Markdown: the answer, warnings, the jobs and the totals."""
    jobs = cp.to_frame()
    return "\n\n".join(
        x
        for x in (
            f"### {cp.title}",
            _md_list("Answer", cluster_answer(cp).lines()),
            _md_list("Warnings", cp.warnings),
            markdown_table(_human(jobs)),
            markdown_table(_totals_frame(cp)),
        )
        if x
    )


def cluster_plan_html(cp: ClusterPlan) -> str:
    """A cluster's combined load as HTML: the answer, warnings, the jobs and the totals."""
    return (
        f"<div><h4 style='margin:0'>{html.escape(cp.title)}</h4>"
        + _html_list("Answer", cluster_answer(cp).lines())
        + _html_list("Warnings", cp.warnings, _WARN)
        + _human(cp.to_frame()).to_html(index=False, border=0)
        + _totals_frame(cp).to_html(index=False, border=0)
        + "</div>"
    )


def cluster_answer_markdown(a: ClusterAnswer) -> str:
    """A cluster's answer as Markdown: its sentences, then each job's share and utilisation."""
    return "\n\n".join(
        [f"### Answer: {a.plan.title}", _md_list("What to buy", a.lines()), markdown_table(_human(a.jobs))]
    )


def cluster_answer_html(a: ClusterAnswer) -> str:
    """A cluster's answer as HTML: its sentences, then each job's share and utilisation."""
    return (
        f"<div><h4 style='margin:0'>Answer: {html.escape(a.plan.title)}</h4>"
        + _html_list("What to buy", a.lines())
        + _human(a.jobs).to_html(index=False, border=0)
        + "</div>"
    )


DISPLAYS = {
    Plan: (plan_html, plan_markdown),
    Answer: (answer_html, answer_markdown),
    Scenario: (scenario_html, scenario_markdown),
    ClusterPlan: (cluster_plan_html, cluster_plan_markdown),
    ClusterAnswer: (cluster_answer_html, cluster_answer_markdown),
}
"""Each class and its (HTML, Markdown) display; ``calc/__init__.py`` attaches them."""


def short_repr(a: Answer | ClusterAnswer) -> str:
    """``Answer(Buy: ...)``: the headline, not every field (an answer's fields hold whole tables)."""
    return f"{type(a).__name__}({a.headline})"


def attach() -> None:
    """Give each class of ``DISPLAYS`` its ``_repr_html_`` and ``_repr_markdown_``, and the
    answers a one-line ``repr``."""
    for cls, (as_html, as_markdown) in DISPLAYS.items():
        setattr(cls, "_repr_html_", as_html)  # noqa: B010  # attached from above: imports point down
        setattr(cls, "_repr_markdown_", as_markdown)  # noqa: B010
    for cls in (Answer, ClusterAnswer):
        setattr(cls, "__repr__", short_repr)  # noqa: B010
