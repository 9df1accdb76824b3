"""The report a capacity-planning meeting takes away: Markdown, or one self-contained HTML file.

Both are built from the same sections: the answer (what to buy, what it costs), the headline
requirements, a per-node summary, what changed from the preset, the storage options ranked by
comparable monthly cost, the what-if levers, the charts (HTML only: Plotly, inlined), every
formula with its numbers, and the sources.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from calc import plots
from calc.answers import job_answer as answer
from calc.card import card, details, loader_line
from calc.cluster_load import fmt_total
from calc.explain import formula, render_formula
from calc.lever import levers as levers_of
from calc.plan import HEADLINE, Plan
from calc.plan import plan as plan_of
from calc.plots import cluster_day
from calc.registry import OUTPUTS
from calc.scenario import FIELDS, Scenario, ask, input_text, scenarios
from calc.scenario import scenario as preset
from calc.site import DEFAULT_SITE, SITE_NAMES, job_site
from calc.sizing import recommend
from calc.stages import CHECKPOINT_OUTPUTS
from calc.units import fmt, fmt_usd

if TYPE_CHECKING:  # sizing imports plan and storage; only the type is needed here
    from calc.answers import Answer

_UNIT_KINDS = ("bytes", "bytes_per_s", "seconds", "flops", "flops_per_s")
"""Input kinds shown with a unit (fmt scales them); other inputs are shown as written."""


def markdown_table(df: pd.DataFrame) -> str:
    """A Markdown table of a DataFrame (no optional tabulate dependency)."""
    cols = [str(c) for c in df.columns]
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    out += ["| " + " | ".join(str(x).replace("|", "/") for x in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(out)


def _usd(x: Any) -> str:
    return "" if x is None else fmt_usd(float(x))


def headroom(x: float) -> str:
    """Supply / need as the page writes it: ``2.5x``, ``over 100x`` (not 40,290,213.0x), blank when unlimited."""
    return "" if not math.isfinite(x) else "over 100x" if x > 100 else f"{x:.1f}x"


def _times(x: float) -> str:
    return "unlimited" if not math.isfinite(x) else headroom(x)


def storage_table(rec: pd.DataFrame, rows: int = 12) -> pd.DataFrame:
    """The recommendation with human headers, units and rounding (feasible, cheapest first)."""
    top = rec.head(rows)
    return pd.DataFrame(
        {
            "Option": top["option"],
            "Serves it": top["feasible"].map({True: "yes", False: "no"}),
            "Units": [
                f"{int(u):,} {n}{'' if int(u) == 1 else 's'}" for u, n in zip(top["units"], top["unit"], strict=True)
            ],
            "Limited by": top["limiting"],
            "Reads/s headroom": top["iops_headroom"].map(_times),
            "Bandwidth headroom": top["bandwidth_headroom"].map(_times),
            "Monthly, all in": top["monthly_total_usd"].map(_usd),
            "To buy": top["purchase_usd"].map(_usd),
            "Why not / price": [w if w else p for w, p in zip(top["why_not"], top["price_note"], strict=True)],
        }
    )


@dataclass
class Section:
    """A titled part of the report: paragraphs (Markdown-light text), tables, figures."""

    title: str
    text: list[str] = field(default_factory=list)
    tables: list[pd.DataFrame] = field(default_factory=list)
    figures: list[Any] = field(default_factory=list)
    link: str = ""
    """A share link, shown after the text (HTML: a link element that wraps on narrow pages)."""


LEVER_COLUMNS = {
    "lever": "Lever",
    "change": "Change",
    "gpu_utilization": "GPU utilisation",
    "bottleneck": "Bottleneck",
    "cpu_cores_freed_per_node": "Loader cores freed a node",
}
"""The levers table's columns as the report shows them."""


def levers_table(lev: pd.DataFrame) -> pd.DataFrame:
    """``calc.levers`` as the report shows it: utilisation in percent, the cores each lever frees."""
    shown = lev.assign(
        gpu_utilization=lev["gpu_utilization"].map(lambda x: f"{x:.0%}"),
        cpu_cores_freed_per_node=lev["cpu_cores_freed_per_node"].map(lambda x: f"{x:,.1f}"),
    )
    return shown[list(LEVER_COLUMNS)].rename(columns=LEVER_COLUMNS)


def changes_from_preset(sc: Scenario) -> pd.DataFrame:
    """Inputs that differ from the preset the scenario was built on (or from the defaults)."""
    base = preset_of(sc) or Scenario()
    rows = [
        {"Input": FIELDS[k].label, "Name": k, "Value": text, "Preset": _preset_text(getattr(base, k))}
        for k, text in sc.to_params(base).items()
        if k not in ("name", "description")
    ]
    return pd.DataFrame(rows, columns=["Input", "Name", "Value", "Preset"])


def _preset_text(value: Any) -> str:
    """A preset's value as the changes table shows it: an unset optional input is "not set"."""
    return "not set" if value is None else str(value)


def preset_of(sc: Scenario) -> Scenario | None:
    """The preset ``sc`` was built on (its name less ``-edited``), or None when it names none."""

    base_name = sc.name.removesuffix("-edited")
    return preset(base_name) if base_name in scenarios() else None


def subtitle(p: Plan) -> list[str]:
    """The lines under the report's title: what this plan runs, built from its own inputs.

    The first line names the model, GPU count x GPU (and jobs), precision, storage and site. The
    scenario's description follows only when it still describes this plan: the user's own text,
    or a preset's text while no input differs from that preset. A preset's
    description names the preset's hardware ("4 x V100"), which an edited plan may not run; it
    is then quoted, attributed, under "What changed from the preset" instead.
    """

    sc = p.scenario
    gpus = sc.gpus_per_job * sc.jobs
    jobs = "one job" if sc.jobs == 1 else f"{sc.jobs:,} jobs of {sc.gpus_per_job:,} GPUs"
    site = job_site(sc)
    out = [
        f"Reported plan: {sc.model} on {gpus:,} x {sc.gpu} ({jobs}), {sc.precision}; "
        f"storage: {sc.storage or 'none chosen'}; site: "
        + (SITE_NAMES.get(site, site) if site else f"{SITE_NAMES[DEFAULT_SITE]} (assumed: not given)")
        + "."
    ]
    base = preset_of(sc)
    own_text = base is None or sc.description != base.description
    if sc.description and (own_text or not len(changes_from_preset(sc))):
        out.append(sc.description)
    return out


COMPARED_INPUTS = ("gpu", "model", "precision", "gpus_per_job", "jobs", "storage", "example_bytes")
"""Inputs always checked for differences first (the rest follow in declaration order)."""
COMPARED_OUTPUTS = (*HEADLINE, "node_read_bytes_per_s", "dataset_bytes")


def pin_name(sc: Scenario, current: Scenario) -> str:
    """A pinned scenario is named by what differs from the current one (``gpu=H100-SXM, jobs=10``)."""
    diff = {k: v for k, v in sc.to_params(current).items() if k not in ("name", "description")}
    return ", ".join(f"{k}={v}" for k, v in list(diff.items())[:3]) or "same as current"


def _input_row(name: str) -> str:
    return f"Input: {FIELDS[name].title}"


_input_text = input_text  # one formatter for inputs, shared with the levers' changes (calc.scenario)


def compare_table(plans: Sequence[Plan], names: Sequence[str], answers: Sequence[Answer] | None = None) -> pd.DataFrame:
    """Plans side by side: first a row per input that differs between them, then requirements and cost.

    Rows are labelled; ``attrs["changed_inputs"]`` lists the input rows, which a page highlights.
    ``answers`` (one per plan) saves computing them again where the caller has them.
    """

    answers = [answer(q) for q in plans] if answers is None else answers
    order = [*COMPARED_INPUTS, *(k for k in FIELDS if k not in COMPARED_INPUTS and k not in ("name", "description"))]
    changed = [k for k in order if len({str(getattr(q.scenario, k)) for q in plans}) > 1]
    rows: dict[str, list[str]] = {}
    for k in changed:
        rows[_input_row(k)] = [_input_text(k, getattr(q.scenario, k)) for q in plans]
    for k in COMPARED_OUTPUTS:
        rows[OUTPUTS[k].label] = [q.formatted(k) for q in plans]
    rows["Bottleneck"] = [q.bottleneck for q in plans]
    rows["Storage to buy"] = [a.headline.removeprefix("Buy: ") for a in answers]
    designs = [a.design for a in answers]
    rows["Monthly cost, all in"] = [_usd(d["monthly_total_usd"]) if d else "no priced design" for d in designs]
    rows["To buy up front"] = [_usd(d["purchase_usd"]) if d and d["purchase_usd"] > 0 else "nothing" for d in designs]
    table = pd.DataFrame(rows, index=list(names)).T
    table.attrs["changed_inputs"] = [_input_row(k) for k in changed]
    return table


def sections(
    p: Plan,
    recommendation: pd.DataFrame | None = None,
    levers: pd.DataFrame | None = None,
    link: str = "",
    charts: bool = False,
    compared: Sequence[Scenario] = (),
) -> list[Section]:
    """The report's sections, shared by the Markdown and the HTML output."""

    sc = p.scenario
    rec = recommend(p) if recommendation is None else recommendation
    lev = levers_of(sc) if levers is None else levers
    a = answer(p)
    # The page's card, word for word, then what folds below it (calc.card): the report says what the page says.
    said = [x.replace("**Why**", "Why:").replace("**", "") for x in card(a, rec).lines()]
    out = [Section("What to buy, and what it costs", text=said + details(a), link=link)]
    q = a.shown  # every supply-dependent figure on the store the answer buys (issue 38)
    head = Section("Requirements", text=[f"**{OUTPUTS[k].label}**: {q.formatted(k)}" for k in HEADLINE])
    if q is not p:
        head.text.insert(0, f"On the store the answer buys: {_units(q.scenario.storage_units)} x {q.scenario.storage}")
    head.text.append(f"**Bottleneck**: {q.bottleneck}; step time from {q.step_method}")
    head.text += [f"Warning: {w}" for w in q.warnings]
    out.append(head)
    node = Section(
        "Per node",
        text=[
            f"**GPUs on a node**: {int(p.values['gpus_on_node'])}",
            f"**CPU cores for loading**: {p.formatted('cpu_cores_per_node')}"
            + ("" if p.cpu_cores_per_node > 0 else " (no decode cost in this scenario: its CPU time per example is 0)"),
            f"**Loader RAM**: {p.formatted('host_ram_per_node_bytes')} of {_ram(p)}",
            f"**Storage traffic into the node**: {p.formatted('node_read_bytes_per_s')} "
            f"(link: {p.formatted('node_network_bytes_per_s')})",
            f"**Host-to-GPU per GPU**: {p.formatted('h2d_bytes_per_s_per_gpu')}",
            *([loader_line(p).replace("**Loader** ", "**Loader**: ")] if loader_line(p) else []),
        ],
    )
    out.append(node)
    out.append(checkpoint_section(q, charts))
    ch = changes_from_preset(sc)
    base = preset_of(sc)
    said = [] if len(ch) else ["Nothing: the preset as it is."]
    if len(ch) and base is not None and base.description and sc.description == base.description:
        # the subtitle leaves out the preset's own words once an input differs (they may name other hardware)
        said.append(f"The preset `{base.name}` describes itself as: {base.description}")
    out.append(Section("What changed from the preset", text=said, tables=[ch] if len(ch) else []))
    if a.designs:
        out.append(Section("Complete designs, cheapest first", tables=[designs_table(a.designs)]))
    out.append(Section("Storage options, cheapest comparable monthly cost first", tables=[storage_table(rec)]))
    out.append(Section("What-if levers", tables=[levers_table(lev)]))
    if compared:  # the dashboard's pinned scenarios, named by what differs from this one
        out.append(compared_section(p, a, compared, charts))
    if charts:
        out.append(
            Section(
                "Charts",
                figures=[
                    plots.pipeline_stages(p),
                    plots.demand_vs_batch(p),
                    plots.demand_vs_gpus(p),
                    plots.storage_map(p, rec),
                    plots.memory_breakdown(p),
                ],
            )
        )
    formulas = pd.DataFrame(
        [
            {"Output": OUTPUTS[k].label, "Value": p.formatted(k), "Formula": render_formula(p, formula(p, k))[1]}
            for k in OUTPUTS
        ]
    )
    out.append(Section("Every formula, with its numbers", tables=[formulas]))
    out.append(Section("Sources", text=[f"`{k}`: {v}" for k, v in sorted(p.sources.items()) if v]))
    return out


def compared_section(p: Plan, a: Answer, compared: Sequence[Scenario], charts: bool = False) -> Section:
    """The pinned scenarios beside this one: the table of what differs and, with ``charts``, the chart."""
    plans = [plan_of(c) for c in compared] + [p]
    names = [pin_name(c, p.scenario) for c in compared] + ["this scenario"]
    answers = [answer(q) for q in plans[:-1]] + [a]  # this scenario's answer is already made
    table = compare_table(plans, names, answers)
    section = Section(
        "Compared scenarios",
        text=["Rows marked Input are the inputs that differ between them."],
        tables=[table.reset_index(names="")],
    )
    if charts:
        section.figures.append(plots.compare_chart(plans, names, answers))
    return section


def _units(units: float | None) -> str:
    return f"{units:,g}" if units is not None else "as many as needed of"


def checkpoint_section(p: Plan, charts: bool = False) -> Section:
    """The checkpoint figures and, with ``charts``, the save timeline and the interval chart.

    A plan that saves nothing gets one sentence saying so and how to plan saves, not empty charts.
    """

    interval = p.values["checkpoint_interval_used_s"]
    if p.checkpoint_write_bytes_per_s > 0:
        s = Section("Checkpoints", text=[f"**{OUTPUTS[k].label}**: {p.formatted(k)}" for k in CHECKPOINT_OUTPUTS])
        if charts:
            s.figures += [plots.checkpoint_timeline(p), plots.checkpoint_interval_chart(p)]
        return s
    if interval > 0:  # saves are planned, but of an empty state
        return Section(
            "Checkpoints",
            text=[
                f"Saves every {fmt(interval, 'seconds')} are planned, but the checkpoint is "
                f"{p.formatted('checkpoint_bytes')} ({p.sources.get('checkpoint_bytes', 'its source')}), "
                "so they write nothing and no checkpoint chart is drawn."
            ],
        )
    return Section(
        "Checkpoints",
        text=[
            "No checkpoints are planned, so no checkpoint chart is drawn: to size their writes, "
            f"{ask('checkpoint_interval_s')} to a time between saves, or to optimal (the Young-Daly interval)."
        ],
    )


def designs_table(designs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The answer's complete designs with human headers and rounded dollars."""

    def copy(t: float) -> str:
        return "-" if t == 0 else fmt(t, "seconds") if math.isfinite(t) else "needs the node link"

    return pd.DataFrame(
        {
            "Design": [d["design"] for d in designs],
            "Site": [d.get("site", "") for d in designs],
            "What to buy": [d["description"] for d in designs],
            "Serves": ["yes" if d["feasible"] else f"no: {d['why_not']}" for d in designs],
            "Monthly, all in": [fmt_usd(d["monthly_total_usd"]) for d in designs],
            "Copy to nodes": [copy(d["staging_s"]) for d in designs],
        }
    )


def _ram(p: Plan) -> str:

    return fmt(p.inputs["host_ram_bytes"], "bytes", binary=True) + " per node"


FOOTER = (
    "Generated by Feedrate (`calc`). Units: GPU and host memory in GiB; "
    "storage sizes and rates in decimal kB, MB/s and GB/s."
)


def markdown_report(
    p: Plan,
    recommendation: pd.DataFrame | None = None,
    levers: pd.DataFrame | None = None,
    link: str = "",
    compared: Sequence[Scenario] = (),
) -> str:
    """The report as Markdown: answer first, then requirements, storage, levers, formulas, sources."""
    lines = [f"# Feedrate: {p.title}", ""]
    for line in subtitle(p):
        lines += [line, ""]
    for s in sections(p, recommendation, levers, link, compared=compared):
        lines += [f"## {s.title}", ""]
        lines += [f"- {t}" for t in s.text]
        if s.link:
            lines.append(f"- {LINK_WORDS}: <{s.link}>")
        for t in s.tables:
            lines += ["", markdown_table(t)]
        lines.append("")
    lines.append(FOOTER)
    return "\n".join(lines) + "\n"


def _md_inline(text: str) -> str:
    """Escape, then render the report's two inline marks: **bold** and `code`."""
    out = html.escape(text)
    parts = out.split("**")
    out = "".join(f"<b>{x}</b>" if i % 2 else x for i, x in enumerate(parts))
    parts = out.split("`")
    return "".join(f"<code>{x}</code>" if i % 2 else x for i, x in enumerate(parts))


LINK_WORDS = "Link back to this scenario"
WRAP = "overflow-wrap:anywhere;word-break:break-all"
"""CSS that lets a long unbroken string (a share link) wrap instead of running off the page."""


def link_html(url: str) -> str:
    """A share link as an element that wraps on any page width (its style inline, so it survives
    a mail client that strips ``<style>``); only http(s) addresses become clickable."""
    text = html.escape(url)
    if not url.startswith(("http://", "https://")):
        return f"<span class='link' style='{WRAP}'>{text}</span>"
    return f"<a class='link' href='{html.escape(url, quote=True)}' style='{WRAP}'>{text}</a>"


def html_report(
    p: Plan,
    recommendation: pd.DataFrame | None = None,
    levers: pd.DataFrame | None = None,
    link: str = "",
    compared: Sequence[Scenario] = (),
) -> str:
    """The report as one self-contained HTML file: the charts are interactive Plotly, inlined."""

    body = [f"<h1>Feedrate: {html.escape(p.title)}</h1>"]
    body += [f"<p class='subtitle'>{html.escape(t)}</p>" for t in subtitle(p)]
    first_figure = True
    for s in sections(p, recommendation, levers, link, charts=True, compared=compared):
        body.append(f"<h2>{html.escape(s.title)}</h2>")
        items = [f"<li>{_md_inline(t)}</li>" for t in s.text]
        if s.link:
            items.append(f"<li>{LINK_WORDS}: {link_html(s.link)}</li>")
        if items:
            body.append("<ul>" + "".join(items) + "</ul>")
        first_figure = _tables_and_figures(body, s, first_figure)
    style = (
        "h2{margin-top:1.6em}p.subtitle{color:#555;margin:.2em 0}"
        f"li,p{{overflow-wrap:anywhere}}.link{{{WRAP}}}"  # a word wraps only where it would overflow
    )
    return _html_page(f"Feedrate: {p.scenario.name}", body, style)


_HTML_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
    "table.t{border-collapse:collapse;font-size:13px;margin:.5em 0}"
    "table.t td,table.t th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
)
"""The style both HTML reports share; each adds its own rules after it."""


def _tables_and_figures(body: list[str], s: Section, first_figure: bool) -> bool:
    """Append a section's tables and inlined charts to ``body``; returns whether plotly.js is still to
    be inlined (only the first chart carries it)."""
    import plotly.io as pio

    for t in s.tables:
        body.append(t.to_html(index=False, border=0, classes="t", escape=True))
    for fig in s.figures:
        body.append(pio.to_html(fig, full_html=False, include_plotlyjs=first_figure, default_width="100%"))
        first_figure = False
    return first_figure


def _html_page(title: str, body: list[str], style: str) -> str:
    """One self-contained HTML page: the shared style and ``style``, ``body`` and the footer."""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_HTML_STYLE}{style}</style></head><body>{''.join(body)}"
        f"<p><small>{_md_inline(FOOTER)}</small></p></body></html>"
    )


# ------------------------------------------------------------------ the cluster report

if TYPE_CHECKING:  # calc.cluster imports sizing and plan; only the type is needed here
    from calc.cluster import ClusterAnswer


def cluster_jobs_table(a: ClusterAnswer) -> pd.DataFrame:
    """One row per job type: count, GPUs, reads, save bursts, utilisation (shared and alone), cost."""
    f = a.plan.to_frame()
    j = a.jobs
    return pd.DataFrame(
        {
            "Job": f["job"],
            "Count": f["count"],
            "GPUs": f["gpus"],
            "Dataset": f["dataset"],
            "Reads": [fmt(v, "bytes_per_s") for v in f["read_bytes_per_s"]],
            "Reads/s": [fmt(v, "count_per_s") for v in f["read_iops"]],
            "Save bursts (all copies)": [fmt(v, "bytes_per_s") for v in f["peak_write_bytes_per_s"]],
            "Utilisation (shared)": [f"{v:.0%}" for v in j["gpu_utilization"]],
            "Utilisation (alone)": [f"{v:.0%}" for v in j["gpu_utilization_alone"]],
            "Idle GPU cost / month": [_usd(v) if math.isfinite(v) else "no price" for v in j["idle_usd_per_month"]],
            "Storage chargeback / month": [_usd(v) if math.isfinite(v) else "n/a" for v in j["monthly_usd"]],
        }
    )


def cluster_jobs_note(a: ClusterAnswer) -> str:
    """Why a row reads "0 B/s": the job's dataset stays in its nodes' page cache after the first epoch
    (a table of zeros beside a ResNet-50 on 24 H100s read as a fault)."""
    cached = [p.scenario.name for p in a.plan.plans if p.values["page_cache_hit"] >= 1 and p.dataset_bytes > 0]
    if not cached:
        return ""
    return (
        f"{', '.join(cached)}: 0 B/s of reads from the store, since each dataset stays in its nodes' page cache "
        "after the first epoch (the first epochs are in the combined load)."
    )


def cluster_sections(a: ClusterAnswer, link: str = "", charts: bool = False) -> list[Section]:
    """The cluster report's sections: answer, load, jobs, the day's load chart, storage options, inputs."""
    cp = a.plan
    out = [Section("Answer", text=a.lines())]
    totals = pd.DataFrame([{"Figure": k, "Value": _cluster_total(k, v)} for k, v in cp.totals().items()])
    out.append(Section("Combined load", text=cp.explain().splitlines()[1:], tables=[totals]))
    note = cluster_jobs_note(a)
    out.append(Section("Jobs: utilisation and chargeback", text=[note] if note else [], tables=[cluster_jobs_table(a)]))
    if charts:
        out.append(Section("A day of load", figures=[cluster_day(cp)]))
    out.append(Section("Storage options for the combined load", tables=[storage_table(a.recommendation)]))
    g = a.growth.get("months")
    if isinstance(g, pd.DataFrame) and len(g):
        out.append(Section("Growth", text=[a.growth["text"]], tables=[g]))
    head = [f"Link: {link}", ""] if link else []
    out.append(Section("The cluster (YAML)", text=[*head, "```yaml", *cp.to_yaml().splitlines(), "```"]))
    return out


def _cluster_total(key: str, value: float) -> str:
    return fmt_total(key, value)


def cluster_markdown(a: ClusterAnswer, link: str = "") -> str:
    """The cluster report as Markdown (answer first)."""
    cp = a.plan
    lines = [f"# Feedrate cluster: {cp.title}", ""]
    if cp.cluster.description:
        lines += [cp.cluster.description, ""]
    for s in cluster_sections(a, link):
        lines += [f"## {s.title}", ""]
        if s.title == "The cluster (YAML)":
            lines += s.text
        else:
            lines += [f"- {t}" for t in s.text]
        for t in s.tables:
            lines += ["", markdown_table(t)]
        lines.append("")
    lines.append(FOOTER)
    return "\n".join(lines) + "\n"


def cluster_html(a: ClusterAnswer, link: str = "") -> str:
    """The cluster report as one self-contained HTML file (its day chart inlined)."""

    cp = a.plan
    body = [f"<h1>Feedrate cluster: {html.escape(cp.title)}</h1>"]
    if cp.cluster.description:
        body.append(f"<p>{html.escape(cp.cluster.description)}</p>")
    first = True
    for s in cluster_sections(a, link, charts=True):
        body.append(f"<h2>{html.escape(s.title)}</h2>")
        if s.title == "The cluster (YAML)":
            body.append("<pre>" + html.escape("\n".join(t for t in s.text if not t.startswith("```"))) + "</pre>")
        elif s.text:
            body.append("<ul>" + "".join(f"<li>{_md_inline(t)}</li>" for t in s.text) + "</ul>")
        first = _tables_and_figures(body, s, first)
    style = "pre{white-space:pre-wrap;overflow-wrap:anywhere}li{overflow-wrap:anywhere}"  # its link wraps
    return _html_page(f"Feedrate cluster: {cp.name}", body, style)
