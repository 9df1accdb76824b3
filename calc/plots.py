"""Plotly figures, built by pure functions: the dashboard and a notebook show the same figure.

Every function takes a Plan (or the tables calc builds) and returns a ``plotly.graph_objects.Figure``
without showing it. Axis titles carry units.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from calc import storage as st
from calc.answers import job_answer as answer
from calc.card import SITE_LABELS, chosen
from calc.cluster_load import timeline
from calc.design import buyable_order
from calc.errors import InputError
from calc.plan import Plan
from calc.registry import OUTPUTS
from calc.scenario import FIELDS
from calc.stages import evaluate
from calc.sweep import sweep as grid
from calc.units import fmt, fmt_usd

if TYPE_CHECKING:  # the type only: calc.cluster imports the presentation (its command output)
    from calc.answers import Answer
    from calc.cluster import ClusterPlan

COLORS = {
    "storage": "#8e6c8a",
    "cpu": "#d08c3c",
    "pcie": "#4f8bc9",
    "gpu": "#5a9e6f",
    "network": "#6b8e9e",
    "decoder": "#9e8a5a",
    "workers": "#b5735a",
    "main": "#7a6bb0",
    "demand": "#c44e52",
    "state": "#4f8bc9",
    "activations": "#d08c3c",
    "reserved": "#8c8c8c",
    "free": "#dfe6ee",
}
GiB = 2.0**30
_WHITE = pio.templates["plotly_white"]
TEMPLATE = go.layout.Template(layout=_WHITE.layout, data={"bar": _WHITE.data.bar, "scatter": _WHITE.data.scatter})
"""plotly_white for the trace types drawn here: the whole template (every trace type's defaults) is
deep-copied into each figure, 3x the time, about 19 ms a chart on every dashboard re-render."""


def _layout(fig: go.Figure, title: str, height: int = 360) -> go.Figure:
    """Shared layout; a title that states the finding, wrapped so a narrow page never cuts it."""
    wrapped = _wrap(title)
    lines = wrapped.count("<br>") + 1
    fig.update_layout(
        # Hung from the top of the figure: centred in the margin (plotly's "auto"), a three-line
        # title reached down over the top tick label. Plotly hangs a title of two or more lines 12 px
        # higher than one line: with the same pad its top line began 9 px above the chart, cut off
        # (bounding boxes in Chromium, tests/test_browser.py).
        title={
            "text": wrapped,
            "font": {"size": 17},
            **{"y": 1.0, "yref": "container", "yanchor": "top", "pad": {"t": 8 if lines == 1 else 20}},
        },
        height=height + 24 * max(lines - 2, 0),
        margin={"l": 70, "r": 30, "t": 24 + 24 * lines, "b": 60},  # room for every title line
        template=TEMPLATE,
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def _wrap(text: str, width: int = 70) -> str:
    """Break a long title into lines of about ``width`` characters (Plotly's <br>)."""
    words, lines, line = text.split(" "), [], ""  # not at a no-break space ("99.98\u00a0%")
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return "<br>".join([*lines, line])


def _marker_line(
    fig: go.Figure,
    x: Sequence[float],
    y: Sequence[float],
    text: str,
    secondary: bool = False,
    position: str = "top left",
) -> None:
    """A dotted reference line drawn as a trace: unlike shapes, traces sit right on log axes."""
    kw = {"secondary_y": secondary} if secondary else {}
    fig.add_scatter(
        x=list(x),
        y=list(y),
        mode="lines+text",
        text=["", text],
        textposition=position,
        line={"dash": "dot", "color": "#333"},
        showlegend=False,
        hoverinfo="skip",
        **kw,
    )


def time_unit(seconds: float) -> tuple[float, str]:
    """The axis unit for durations up to ``seconds``: the one ``fmt`` writes such a duration in
    (s under 2 min, min under 2 h, h under 2 days, else days), so title and axis agree."""
    a = abs(seconds)
    if a < 120:
        return 1.0, "s"
    if a < 7200:
        return 60.0, "min"
    if a < 172800:
        return 3600.0, "h"
    return 86400.0, "d"


def memory_breakdown(p: Plan) -> go.Figure:
    """GPU memory: reserve, model state, activations x n, free; and where the batch limit sits [GiB]."""
    v = p.values
    act = v["batch_size"] * v["activation_bytes_per_example"]
    free = max(v["gpu_memory_bytes"] - v["memory_used_bytes"], 0.0)
    parts = [
        ("reserved", v["reserved_bytes"], "Reserved"),
        ("state", v["model_state_bytes"], "Model state"),
        ("activations", act, f"Activations x {p.batch_size}"),
        ("free", free, "Free"),
    ]
    fig = go.Figure()
    for key, value, name in parts:
        fig.add_bar(
            y=["GPU memory"],
            x=[value / GiB],
            name=f"{name}: {fmt(value, 'bytes', binary=True)}",
            orientation="h",
            marker_color=COLORS[key],
        )
    limit = v["reserved_bytes"] + v["model_state_bytes"] + v["max_batch_size"] * v["activation_bytes_per_example"]
    fig.add_vline(
        x=v["gpu_memory_bytes"] / GiB,
        line_dash="dash",
        line_color="#333",
        annotation_text=f"GPU {fmt(v['gpu_memory_bytes'], 'bytes', binary=True)}",
    )
    fig.add_vline(
        x=limit / GiB,
        line_dash="dot",
        line_color=COLORS["demand"],
        annotation_text=f"most that fit: {p.max_batch_size:,}",
        annotation_position="bottom right",
    )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="GPU memory [GiB]")
    used = fmt(v["memory_used_bytes"], "bytes", binary=True)
    title = (
        f"Batch {p.batch_size:,} uses {used} of {fmt(v['gpu_memory_bytes'], 'bytes', binary=True)}; "
        f"up to {p.max_batch_size:,} examples fit"
    )
    fig = _layout(fig, title, 300)
    fig.update_layout(legend={"orientation": "h", "y": 1.12, "x": 0})
    return fig


def demand_vs_batch(p: Plan, points: int = 24) -> go.Figure:
    """Per-GPU samples/s and step time against batch size per GPU: two panels, one quantity each.

    A small batch cannot fill the GPU and pays the per-step fixed time on few examples, so the
    per-GPU rate rises with the batch and levels off; the step time (the latency budget of each
    example) grows with it.
    """
    top = int(min(max(p.max_batch_size, p.batch_size, 2), BATCH_LIMIT))
    sizes = [int(x) for x in np.unique(np.round(np.geomspace(1, top, points)))]
    df = grid(p.scenario, batch_size=sizes)
    n = df["batch_size"].astype(float)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.16)
    fig.add_scatter(x=n, y=df["gpu_samples_per_s"], name="samples/s per GPU", line_color=COLORS["gpu"], row=1, col=1)
    fig.add_scatter(x=n, y=df["step_time_s"] * 1e3, name="step time", line_color=COLORS["demand"], row=1, col=2)
    for col, y in ((1, df["gpu_samples_per_s"]), (2, df["step_time_s"] * 1e3)):
        fig.add_scatter(
            x=[p.batch_size] * 2,
            y=[0, float(y.max())],
            mode="lines+text",
            text=["", f"this job: {p.batch_size}"],  # not "n = 256": the page says batch, not n
            textposition="top left",
            line={"dash": "dot", "color": "#333"},
            showlegend=False,
            hoverinfo="skip",
            row=1,
            col=col,
        )
        fig.update_xaxes(title="batch per GPU [examples]", type="log", row=1, col=col)
    fig.update_yaxes(title="samples/s per GPU", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title="step time [ms]", rangemode="tozero", row=1, col=2)
    rate = df["gpu_samples_per_s"].to_numpy()
    near = int(n[np.argmax(rate >= 0.9 * rate.max())])
    title = (
        f"Per-GPU rate reaches 90 % of its top ({fmt(float(rate.max()), 'count_per_s', 'samples/s')}) "
        f"at batch {near}; this job runs {p.batch_size}"
    )
    fig = _layout(fig, title, 380)
    fig.update_layout(showlegend=False)
    return fig


BATCH_LIMIT = 10_000_000
"""The batch_size input's upper bound: the batch chart stops there."""


def demand_vs_gpus(p: Plan, groups: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256)) -> go.Figure:
    """Read bandwidth and random reads/s against GPUs per job: two panels, one quantity each.

    GPU counts step in whole model-parallel groups (tensor x pipeline parallel GPUs each), from
    the fewest that hold ``state_shards`` (a plan refuses fewer GPUs than shards), and the job's own.
    """
    sc = p.scenario
    mp = sc.tensor_parallel * sc.pipeline_parallel
    gpus = sorted({g * mp for g in groups if g * mp >= sc.state_shards} | {sc.gpus_per_job})
    df = grid(p.scenario, gpus_per_job=gpus)
    g = df["gpus_per_job"].astype(float)
    # A dataset the page cache holds is read only in the first epoch: show that load instead of 0.
    first = bool((df["read_bytes_per_s"] == 0).all() and (df["first_epoch_read_bytes_per_s"] > 0).any())
    bw = df["first_epoch_read_bytes_per_s"] if first else df["read_bytes_per_s"]
    iops = df["first_epoch_read_bytes_per_s"] / df["request_bytes"] if first else df["read_iops"]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.16)
    fig.add_scatter(x=g, y=bw / 1e9, mode="lines+markers", line_color=COLORS["storage"], row=1, col=1)
    fig.add_scatter(x=g, y=iops, mode="lines+markers", line_color=COLORS["demand"], row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(title="GPUs per job", type="log", tickvals=list(gpus), row=1, col=col)
    fig.update_yaxes(title="read bandwidth [GB/s]", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title="random reads/s", rangemode="tozero", row=1, col=2)
    when = " in the first epoch (the page cache serves the rest)" if first else ""
    title = (
        f"At {int(g.iloc[-1])} GPUs per job storage must deliver {fmt(float(bw.iloc[-1]), 'bytes_per_s')} "
        f"and {fmt(float(iops.iloc[-1]), 'count_per_s', 'reads/s')}{when}; this job uses {p.scenario.gpus_per_job}"
    )
    fig = _layout(fig, title, 360)
    fig.update_layout(showlegend=False)
    return fig


def storage_map(
    p: Plan, recommendation: pd.DataFrame | None = None, labelled: int = 4, answer: Answer | None = None
) -> go.Figure:
    """Log-log map of one unit of each storage option: bandwidth and reads/s at the plan's read size.

    The options that matter (the cheapest that serve, and the job's own) are large and named in the
    legend; every other option is a small grey point with a number, named in the legend too (a
    projector shows no hover). The workload is a star: one unit of an option up and to the right
    of it serves the job alone. With ``answer``, the title names what the answer card buys.
    """
    req = p.values["request_bytes"]
    opts = list(st.options(p.scenario.storage).values())
    rec = recommendation
    feasible = {} if rec is None else dict(zip(rec["option"], rec["feasible"], strict=True))
    # The answer card's own order (its site, ready, data-centre parts): the map cannot name another.
    order = [] if rec is None else buyable_order(p, rec)
    marked = order[:labelled] + ([p.scenario.storage] if p.scenario.storage else [])
    # Object stores publish no bandwidth limit: drawn at the right edge and said so, not dropped.
    edge = 3 * max(o.read_bytes_per_s for o in opts if math.isfinite(o.read_bytes_per_s)) / 1e6

    def x_of(o: st.StorageOption) -> float:
        return o.read_bytes_per_s / 1e6 if math.isfinite(o.read_bytes_per_s) else edge

    fig = go.Figure()
    busy = p.read_bytes_per_s > 0
    big = [(x_of(st.option(n)), st.option(n).iops_at(req)) for n in dict.fromkeys(marked)]
    big += [(p.read_bytes_per_s / 1e6, max(p.read_iops, 1e-3))] if busy else []
    # The workload's star stays on the map even when it reads far less than any one unit gives.
    lo = min([x_of(o) for o in opts] + ([p.read_bytes_per_s / 1e6] if busy else []))
    x_range = (math.log10(lo / 2), math.log10(edge * 2))
    ys = [math.log10(max(y, 1e-12)) for y in [o.iops_at(req) for o in opts] + [y for _, y in big]]
    pad = 0.06 * max(max(ys) - min(ys), 1e-9)  # set, not Plotly's autorange: the labels are placed on it
    y_range = (min(ys) - pad, max(ys) + pad)
    _numbered(fig, [o for o in opts if o.name not in marked], x_of, req, feasible, big, (x_range, y_range))
    for i, name in enumerate(dict.fromkeys(marked)):
        o = st.option(name)
        role = "your storage" if name == p.scenario.storage else ("cheapest that serves" if i == 0 else "serves")
        edge_note = "" if math.isfinite(o.read_bytes_per_s) else ", at the edge"
        fig.add_scatter(
            x=[x_of(o)],
            y=[o.iops_at(req)],
            # Named in the legend, not beside the point: neighbours (nvme-gen5 and its prosumer
            # twin, nfs-25gbe and nvme-gen4) sit too close for labels that do not overprint.
            mode="markers",
            name=f"{name} ({role}{edge_note})",
            hovertemplate=f"{name}<br>%{{x:,.0f}} MB/s<br>%{{y:,.0f}} reads/s<extra></extra>",
            marker={"size": 13, "color": PLAN_COLORS[i % len(PLAN_COLORS)]},
        )
    if busy:
        fig.add_scatter(
            x=[p.read_bytes_per_s / 1e6],
            y=[max(p.read_iops, 1e-3)],
            mode="markers",
            name="this workload",
            marker={"size": 20, "symbol": "star", "color": COLORS["demand"]},
        )
    unpublished = any(not math.isfinite(o.read_bytes_per_s) for o in opts)
    note = " (none published: drawn at the right edge)" if unpublished else ""
    fig.update_xaxes(title=f"read bandwidth of one unit [MB/s]{note}", type="log", range=list(x_range))
    fig.update_yaxes(
        title=f"random reads/s of one unit at {fmt(req, 'bytes', binary=True)}", type="log", range=list(y_range)
    )
    fig = _layout(fig, _storage_finding(p, order, answer), 640)
    # Legend below the map in two fixed columns, tall enough for every name: beside the map it took
    # half the width at 1280 px; in columns sized by its longest name it fell to one column of 40
    # rows that scrolled, hiding most names from a room.
    rows = math.ceil(len(fig.data) / 2)
    below = 90 + 19 * rows
    fig.update_layout(
        legend={
            **{"orientation": "h", "x": 0, "y": 0, "yref": "container", "yanchor": "bottom"},
            **{"entrywidth": 0.5, "entrywidthmode": "fraction", "font": {"size": 11}},
        },
        height=fig.layout.height - 60 + below,
        margin_b=below,
    )
    return fig


MAP_PX = (700.0, 500.0)
"""The storage map's plot area at 1280 px [px] (Chromium: 711 x 508 under a two-line title): the
narrowest a room sees it. Its labels are placed for it; wider, they only spread apart."""
MAP_LABEL_PX = 11
"""The numbers beside the map's grey points [px]: readable from a room's back row (they were 9 px)."""


def _numbered(
    fig: go.Figure,
    rest: Sequence[st.StorageOption],
    x_of: Any,
    req: float,
    feasible: dict[str, bool],
    big: Sequence[tuple[float, float]] = (),
    ranges: tuple[tuple[float, float], tuple[float, float]] | None = None,
) -> None:
    """The unnamed options as small grey points, each numbered on the map and named in the legend.

    A number goes on the side of its point where it overprints no other number or point
    (``map_labels``); points too close for any side share one label ("8, 30") on the first of them.
    """
    points = [(x_of(o), o.iops_at(req)) for o in rest]
    labels = map_labels(points, [str(k) for k in range(1, len(rest) + 1)], big, ranges)
    for k, (o, (position, text)) in enumerate(zip(rest, labels, strict=True), start=1):
        cannot = "" if feasible.get(o.name, True) else ", cannot serve"
        edge = "" if math.isfinite(o.read_bytes_per_s) else " (at the edge)"  # the axis title says why
        fig.add_scatter(
            x=[points[k - 1][0]],
            y=[points[k - 1][1]],
            mode="markers+text",
            text=[text],
            textposition=position,
            textfont={"size": MAP_LABEL_PX, "color": "#4b5563"},
            name=f"{k} {o.name}{cannot}{edge}",
            marker={"size": 7, "color": "#b8bec6"},
            hovertemplate=f"{o.name}<br>%{{x:,.0f}} MB/s<br>%{{y:,.0f}} reads/s<extra></extra>",
        )


_SIDES = {
    "middle right": (1, 0),
    "middle left": (-1, 0),
    "top center": (0, 1),
    "bottom center": (0, -1),
}


def map_labels(
    points: Sequence[tuple[float, float]],
    texts: Sequence[str],
    big: Sequence[tuple[float, float]] = (),
    ranges: tuple[tuple[float, float], tuple[float, float]] | None = None,
) -> list[tuple[str, str]]:
    """Where each point's label goes on a log-log map, and its text: ``(textposition, text)``.

    In pixels of ``MAP_PX`` over the axes' ``ranges`` (log10; default: the points' own), each label
    (``MAP_LABEL_PX`` high, 0.62 em a digit) takes the first side of its point that overlaps no label
    placed before it and no point (``big`` ones 20 px); where no side is free the number joins the
    nearest label ("8, 30"), which moves to a side that holds the longer text, and the point keeps
    none. Greedy, in order.
    """
    every = [*points, *big]
    if not every:
        return []
    xs = [math.log10(max(x, 1e-12)) for x, _ in every]
    ys = [math.log10(max(y, 1e-12)) for _, y in every]
    (x0, x1), (y0, y1) = ranges or ((min(xs), max(xs)), (min(ys), max(ys)))
    sx = MAP_PX[0] / max(x1 - x0, 1e-9)
    sy = MAP_PX[1] / max(y1 - y0, 1e-9)
    px = [(a * sx, b * sy) for a, b in zip(xs, ys, strict=True)]
    dots = [(cx - 5, cy - 5, cx + 5, cy + 5) for cx, cy in px[: len(points)]]
    dots += [(cx - 11, cy - 11, cx + 11, cy + 11) for cx, cy in px[len(points) :]]
    boxes: dict[int, tuple[float, float, float, float]] = {}  # point -> its label's box
    out: list[tuple[str, str]] = [("middle right", "") for _ in texts]

    def place(i: int, text: str) -> bool:
        cx, cy = px[i]
        w, h = 0.62 * MAP_LABEL_PX * len(text) + 4, MAP_LABEL_PX + 3  # as Chromium draws its box
        for position, (dx, dy) in _SIDES.items():
            left = cx + (6 if dx > 0 else -6 - w if dx < 0 else -w / 2)
            low = cy + (6 if dy > 0 else -6 - h if dy < 0 else -h / 2)
            box = (left, low, left + w, low + h)
            if not any(_overlaps(box, b) for k, b in boxes.items() if k != i) and not any(
                _overlaps(box, d) for k, d in enumerate(dots) if k != i
            ):
                boxes[i], out[i] = box, (position, text)
                return True
        return False

    for i, text in enumerate(texts):
        if place(i, text):
            continue
        cx, cy = px[i]
        # Join the nearest label that can take the longer text on some side of its point; none can:
        # the point is left unnumbered on the map (the legend still names it), never overprinted.
        for host in sorted(boxes, key=lambda k: (px[k][0] - cx) ** 2 + (px[k][1] - cy) ** 2)[:3]:
            was = boxes.pop(host)
            if place(host, f"{out[host][1]}, {text}"):
                break
            boxes[host] = was
    return out


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0 and min(a[3], b[3]) - max(a[1], b[1]) > 0


def _storage_finding(p: Plan, order: Sequence[str], answer: Answer | None) -> str:
    """The map's title: what the answer card buys (with ``answer``), else the cheapest option that serves."""
    need = f"{fmt(p.read_bytes_per_s, 'bytes_per_s')} and {fmt(p.read_iops, 'count_per_s', 'reads/s')}"
    if p.read_bytes_per_s <= 0:
        return "The dataset is read once (it fits in RAM): any option with the capacity serves; cheapest first"
    if answer is not None and answer.site is None:
        return f"The job reads {need}: choose the site on the answer card to see the option it buys"
    d = chosen(answer) if answer is not None else None
    if d is not None and d["design"] != "one tier":
        return f"The answer buys a {d['design']} ({need} from the nodes' own copies); the store only holds the data"
    if d is not None:
        where = "on-prem" if d["site"] == "on-prem" else f"on {SITE_LABELS.get(str(d['site']), str(d['site']))}"
        return f"{d['store']} is what the answer buys {where}: the cheapest option that serves {need}"
    if order:
        return f"{order[0]} is the cheapest option that serves {need}"
    return "No option in the catalog serves this workload"


def pipeline_stages(p: Plan) -> go.Figure:
    """Capacity of each pipeline stage per GPU against the GPU's demand, on a linear axis [samples/s].

    Unlimited stages (no storage option, unlimited cores) are left out and named in the caption.
    """
    names = list(p.stages)
    values = [p.stages[n] for n in names]
    demand = p.per_gpu_samples_per_s
    # Linear, so 2,609 vs 3,957 reads as it is; a stage far above the need runs off the axis
    # (its label gives the figure) rather than squashing every other bar.
    top = 2.5 * max(demand, p.gpu_samples_per_s, min(values))
    fig = go.Figure(
        go.Bar(
            y=names,
            x=values,
            orientation="h",
            marker_color=[COLORS[n] for n in names],
            text=[fmt(x, "count_per_s", "samples/s") for x in values],
            # A short bar's label goes after it: inside, Plotly shrank "1,429 samples/s" to 7 px.
            textposition=["inside" if x > 0.15 * top else "outside" for x in values],
            insidetextanchor="start",
            showlegend=False,
        )
    )
    fig.add_scatter(
        x=[demand, demand],
        y=[names[0], names[-1]],
        mode="lines",
        name=f"needed: {fmt(demand, 'count_per_s', 'samples/s')}",
        line={"dash": "dash", "color": COLORS["demand"]},
    )
    fig.update_xaxes(title="samples/s per GPU", range=[0, top])
    fig.update_traces(cliponaxis=True, selector={"type": "bar"})
    fig.update_yaxes(autorange="reversed")
    achieved = p.achieved_samples_per_s / max(p.scenario.gpus_per_job * p.scenario.jobs, 1)
    if achieved < demand * (1 - 1e-6):
        # Demand and delivered side by side: the gap is what the fix buys.
        fig.add_scatter(
            x=[achieved, achieved],
            y=[names[0], names[-1]],
            mode="lines",
            name=f"delivered: {fmt(achieved, 'count_per_s', 'samples/s')}",
            line={"dash": "dot", "color": "#333333"},
        )
    if p.scenario.num_workers == 0:
        # No workers: the training process reads, decodes and copies in turn, so the rate is
        # 1 / sum(1 / stage), below every bar; the title says so rather than naming one bar.
        title = (
            f"No loader workers: the stages run in turn, {fmt(achieved, 'count_per_s')} of "
            f"{fmt(p.gpu_samples_per_s, 'count_per_s', 'samples/s')} per GPU "
            f"({p.gpu_utilization:.0%} GPU utilisation); {p.bottleneck} takes the most time"
        )
    elif p.bottleneck == "gpu":
        rate = fmt(p.gpu_samples_per_s, "count_per_s", "samples/s")
        title = f"The GPU sets the pace: every stage delivers at least its {rate}"
    else:
        named = {"cpu": "CPU", "main": "The main process (receiving the workers' batches)"}
        title = (
            f"{named.get(p.bottleneck, p.bottleneck.capitalize())} is the bottleneck: "
            f"{fmt(achieved, 'count_per_s')} of {fmt(p.gpu_samples_per_s, 'count_per_s', 'samples/s')} per GPU "
            f"({p.gpu_utilization:.0%} GPU utilisation)"
        )
    missing = [s for s in ("storage", "cpu", "pcie", "gpu") if s not in p.stages]
    if missing:  # said in the axis title: a note placed under the short plot area met the legend
        fig.update_xaxes(title=f"samples/s per GPU (not drawn, unlimited here: {', '.join(missing)})")
    fig = _layout(fig, title, 150 + 50 * len(names))
    # The legend hung from the figure's bottom, below the axis title: placed under the short plot
    # area (-0.2 of it), it touched "samples/s per GPU".
    fig.update_layout(margin_b=90, legend={"y": 0, "yref": "container", "yanchor": "bottom"})
    return fig


def levers_chart(levers: pd.DataFrame) -> go.Figure:
    """GPU utilisation each what-if lever reaches, best first [%]."""
    df = levers.iloc[::-1]
    fig = go.Figure(
        go.Bar(
            x=df["gpu_utilization"] * 100,
            y=df["lever"],
            orientation="h",
            marker_color=[COLORS.get(b, "#888") for b in df["bottleneck"]],
            text=[f"{u:.0%} ({b})" for u, b in zip(df["gpu_utilization"], df["bottleneck"], strict=True)],
            textposition="auto",
        )
    )
    fig.update_xaxes(title="GPU utilisation [%] (colour = bottleneck after the change)", range=[0, 105])
    return _layout(fig, _levers_finding(levers), 100 + 32 * len(df))


def _levers_finding(levers: pd.DataFrame) -> str:
    """The title: which levers lift utilisation, from what to what (levers come best first)."""
    now = levers[levers["lever"] == "as is"]
    base = float(now["gpu_utilization"].iloc[0]) if len(now) else math.nan
    best = float(levers["gpu_utilization"].max())
    if not math.isfinite(base) or best <= base + 1e-3:
        return (
            "No lever alone raises GPU utilisation: the GPU itself is the limit"
            if base >= 0.999
            else (f"No single lever raises GPU utilisation above {base:.0%}")
        )
    top = levers[levers["gpu_utilization"] >= best - 1e-3]["lever"].tolist()
    if len(top) > 2:
        return f"{len(top)} levers each lift GPU utilisation from {base:.0%} to {best:.0%}, e.g. {top[0]}"
    text = f"{' or '.join(top)} lifts GPU utilisation from {base:.0%} to {best:.0%}"
    return text[0].upper() + text[1:]


def transfer_timeline(p: Plan) -> go.Figure:
    """Moving the dataset: compress, send, decompress in sequence (or streamed), against a plain copy [s]."""
    v = p.values
    streamed = p.scenario.streamed
    rows = [("plain copy", 0.0, v["transfer_direct_time_s"], COLORS["reserved"])]
    start = 0.0
    for name, key, color in (
        ("compress", "compress_s", COLORS["cpu"]),
        ("send", "send_s", COLORS["pcie"]),
        ("decompress", "decompress_s", COLORS["gpu"]),
    ):
        if v[key] > 0:
            rows.append((name, 0.0 if streamed else start, v[key], color))
            start += 0.0 if streamed else v[key]
    fig = go.Figure()
    scale, unit = time_unit(v["transfer_time_s"])  # the title's duration sets the unit
    for name, begin, dur, color in rows:
        fig.add_bar(
            y=[name],
            x=[dur / scale],
            base=[begin / scale],
            orientation="h",
            marker_color=color,
            name=f"{name}: {fmt(dur, 'seconds')}",
            text=[fmt(dur, "seconds")],
            textposition="auto",
        )
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title=f"time [{unit}]")
    how = "streamed through a pipe" if streamed else "one after another"
    return _layout(
        fig, f"Moving {fmt(v['dataset_bytes'], 'bytes')}: {fmt(v['transfer_time_s'], 'seconds')} ({how})", 300
    )


COMPARE = (
    ("samples_per_s", "samples/s"),
    ("read_iops", "reads/s"),
    ("read_bytes_per_s", "read MB/s"),
    ("worker_ram_bytes", "worker RAM [GiB]"),
    ("cpu_cores", "CPU cores"),
    ("gpu_utilization", "GPU utilisation [%]"),
    ("monthly_total_usd", "storage a month [USD]"),
    ("purchase_usd", "storage to buy [USD]"),
)
"""The compared quantities, one panel each: six requirements, then the cost of each plan's answer."""


COMPARE_LABEL_PX = 12
"""The Compare chart's bar labels [px], each after its bar (readable at 1280 px)."""


def compare_chart(
    plans: Sequence[Plan], names: Sequence[str] | None = None, answers: Sequence[Answer] | None = None
) -> go.Figure:
    """Requirements and storage cost of up to five plans side by side: a panel per quantity, a colour per plan.

    ``answers`` (one per plan, as ``calc.answer`` gives) saves computing them again where the caller has them.
    """
    names = [q.scenario.name for q in plans] if names is None else list(names)
    answers = [answer(q) for q in plans] if answers is None else answers
    # Each plan is a letter in the title and the legend says what it is: the title never repeats inputs.
    letters = [chr(ord("A") + j) for j in range(len(plans))]
    monthly: list[float] = []
    fig = make_subplots(rows=2, cols=4, subplot_titles=[t for _, t in COMPARE], vertical_spacing=0.22)
    scale = {"read_bytes_per_s": 1e-6, "worker_ram_bytes": 1 / GiB, "gpu_utilization": 100.0}
    longest = [0.0] * len(COMPARE)
    for j, (q, name, a) in enumerate(zip(plans, names, answers, strict=True)):
        design = chosen(a) or {}  # what each plan's answer card buys (nothing while its site is unknown)
        monthly.append(float(design.get("monthly_total_usd", math.inf)))
        for i, (key, _) in enumerate(COMPARE):
            if key in q.values:
                x, text = q.values[key] * scale.get(key, 1.0), q.formatted(key)
            elif design:  # a cost of the plan's answer (all in a month; bought up front)
                x = float(design[key])
                text = fmt_usd(x) if x > 0 else "nothing"
            else:
                x, text = 0.0, "no site chosen" if a.site is None else "nothing serves"
            longest[i] = max(longest[i], x if math.isfinite(x) else 0.0)
            fig.add_bar(
                x=[x],
                y=[""],
                orientation="h",
                name=f"{letters[j]}: {name}",
                legendgroup=name,
                showlegend=i == 0,
                marker_color=PLAN_COLORS[j % len(PLAN_COLORS)],
                text=[text],
                # After the bar, at one size: inside, Plotly shrank a short bar's label to 4 px (issue 39).
                textposition="outside",
                textfont={"size": COMPARE_LABEL_PX},
                constraintext="none",
                cliponaxis=False,
                row=i // 4 + 1,
                col=i % 4 + 1,
            )
    fig.update_layout(barmode="group")
    fig.update_yaxes(showticklabels=False)
    for i, top in enumerate(longest):
        # The longest bar takes 45 % of its panel, so its label fits after it ("11,770 samples/s"); a
        # percentage's "100.0 %" is short: 60 %.
        room = 1.65 if COMPARE[i][0] == "gpu_utilization" else 2.2
        fig.update_xaxes(range=[0, top * room if top > 0 else 1], row=i // 4 + 1, col=i % 4 + 1)
    fig = _layout(fig, _compare_finding(plans, letters, monthly), 460)
    # the panels' own titles sit above their plots, inside the top margin: make room under the title
    fig.update_layout(legend={"orientation": "h", "y": -0.12, "x": 0}, margin_t=fig.layout.margin.t + 28)
    return fig


def _compare_finding(plans: Sequence[Plan], names: Sequence[str], monthly: Sequence[float]) -> str:
    """The title: which plan runs fastest and which one's storage costs least."""
    fast = max(range(len(plans)), key=lambda i: plans[i].samples_per_s)
    text = f"Fastest: {names[fast]} ({plans[fast].formatted('samples_per_s')})"
    if len(plans) == 1:
        return f"This scenario: {plans[0].formatted('samples_per_s')}; pin scenarios to compare them here"
    cheap = min(range(len(plans)), key=lambda i: monthly[i])
    if len({fmt_usd(m) for m in monthly}) == 1 and math.isfinite(monthly[cheap]):
        text += f"; storage costs the same ({fmt_usd(monthly[cheap])} a month all in)"
    elif math.isfinite(monthly[cheap]):
        text += f"; cheapest storage: {names[cheap]} ({fmt_usd(monthly[cheap])} a month all in)"
    return text


PLAN_COLORS = ("#4f8bc9", "#d08c3c", "#5a9e6f", "#8e6c8a", "#c44e52")
"""One colour per compared plan (colour-blind-safe order)."""


def checkpoint_timeline(p: Plan, intervals: int = 2) -> go.Figure:
    """Storage bandwidth over time: the read load and the checkpoint writes on top [GB/s].

    A synchronous save stops training (and its reads) for ``stall x interval`` while it writes
    at the burst rate; an asynchronous save drains at size / interval beside the reads.
    """
    v = p.values
    interval = v["checkpoint_interval_used_s"] or math.nan  # the given or the optimal interval
    is_async = v["checkpoint_async"] > 0  # the resolved mode (auto included)
    read = v["read_bytes_per_s"] / 1e9
    write = v["checkpoint_write_bytes_per_s"] / 1e9
    fig = go.Figure()
    if not math.isfinite(interval) or write == 0:
        fig.add_scatter(x=[0, 60], y=[read, read], mode="lines", name="reads", line_color=COLORS["storage"])
        fig.update_xaxes(title="time [min]")
        fig.update_yaxes(title="storage bandwidth [GB/s]", rangemode="tozero")
        return _layout(fig, 'No checkpoints in this scenario: set "Checkpoint interval" to size their writes', 320)
    scale, unit = time_unit(interval)  # the interval's own unit, as the title writes it
    minutes = interval / scale
    if is_async:
        x = [0, intervals * minutes]
        fig.add_scatter(x=x, y=[read, read], mode="lines", name="reads", line_color=COLORS["storage"], stackgroup="a")
        fig.add_scatter(
            x=x, y=[write, write], mode="lines", name="checkpoint drain", line_color=COLORS["demand"], stackgroup="a"
        )
        beside = f"beside {fmt(v['read_bytes_per_s'], 'bytes_per_s')} of reads" if read > 0 else "(no dataset read)"
        title = (
            f"Async saves drain {fmt(v['checkpoint_write_bytes_per_s'], 'bytes_per_s')} {beside}, and hold "
            f"{fmt(v['checkpoint_host_ram_bytes'], 'bytes', binary=True)} of host RAM per node"
        )
    else:
        stall = p.scenario.checkpoint_stall_fraction * minutes
        xs, rs, ws = [], [], []
        for k in range(intervals):
            t0 = k * minutes
            xs += [t0, t0 + minutes - stall, t0 + minutes - stall, t0 + minutes]
            rs += [read, read, 0.0, 0.0]
            ws += [0.0, 0.0, write, write]
        fig.add_scatter(x=xs, y=rs, mode="lines", name="reads", line_color=COLORS["storage"], fill="tozeroy")
        fig.add_scatter(x=xs, y=ws, mode="lines", name="checkpoint write", line_color=COLORS["demand"], fill="tozeroy")
        title = (
            f"Each save writes {fmt(v['checkpoint_bytes'], 'bytes', binary=True)} at "
            f"{fmt(v['checkpoint_write_bytes_per_s'], 'bytes_per_s')} for {fmt(stall * scale, 'seconds')} "
            f"every {fmt(interval, 'seconds')}: the storage must take bursts {write / read:,.0f}x the read load"
            if read > 0
            else f"Each save writes {fmt(v['checkpoint_bytes'], 'bytes', binary=True)} at "
            f"{fmt(v['checkpoint_write_bytes_per_s'], 'bytes_per_s')} for {fmt(stall * scale, 'seconds')} every "
            f"{fmt(interval, 'seconds')}"
        )
    took = v["checkpoint_write_s"]
    budget = p.scenario.checkpoint_stall_fraction * interval
    if p.scenario.storage and took > 0 and not is_async:
        # The chosen storage against the budget: the finding a meeting needs next.
        verdict = "within" if took <= budget else f"{took / budget:,.1f}x"
        title = (
            f"Each save writes {fmt(v['checkpoint_bytes'], 'bytes', binary=True)} in a "
            f"{fmt(budget, 'seconds')} budget every {fmt(interval, 'seconds')}; on {p.scenario.storage} "
            f"it takes {fmt(took, 'seconds')} ({verdict} the budget)"
        )
    fig.update_xaxes(title=f"time [{unit}]")
    fig.update_yaxes(title="storage bandwidth [GB/s]", rangemode="tozero")
    return _layout(fig, title, 360)


def checkpoint_interval_chart(p: Plan, points: int = 60) -> go.Figure:
    """Goodput and write bandwidth against the checkpoint interval, the optimum marked.

    One vectorised ``evaluate`` over a grid of intervals (the plan's resolved inputs with the
    interval replaced): goodput [%] on the left axis, the write bandwidth an asynchronous drain
    and a blocking save at the stall budget need [GB/s] on the right (log). The Young-Daly
    interval and the interval the plan uses are marked. Blocking saves with no storage chosen
    are drawn on storage sized for the plan's interval (the storage the plan asks for), which
    is what their Young-Daly interval assumes; an async drain is sized to each interval.
    """
    v = p.values
    young, used = v["young_daly_interval_s"], v["checkpoint_interval_used_s"]
    is_async = v["checkpoint_async"] > 0
    anchors = [t for t in (young, used) if t > 0]
    lo = max(min(anchors, default=1800.0) / 10, 60.0)
    hi = max(max(anchors, default=1800.0) * 10, lo * 10)
    grid = np.geomspace(lo, hi, points)
    x: dict[str, Any] = dict(p.inputs)
    x["checkpoint_interval_s"], x["checkpoint_interval_optimal"] = grid, 0.0
    ref = used if used > 0 else young
    fixed = not is_async and not p.sources.get("storage") and not math.isfinite(v["storage_write_bytes_per_s"])
    fixed = fixed and not math.isfinite(p.inputs["node_network_bytes_per_s"]) and ref > 0
    if fixed:
        # Only the writes are fixed: one unit writing what the reference interval asks for.
        sized = v["checkpoint_bytes"] / (p.inputs["checkpoint_stall_fraction"] * ref)
        x["storage_units_given"], x["storage_unit_write_bytes_per_s"] = 1.0, sized
    out = evaluate(x)
    minutes = grid / 60
    good = np.asarray(out["goodput"], dtype=float) * 100
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_scatter(x=minutes, y=good, mode="lines", name="goodput", line_color=COLORS["gpu"])
    for key, name, dash in (
        ("checkpoint_async_write_bytes_per_s", "write bandwidth, async drain", "solid"),
        ("checkpoint_sync_write_bytes_per_s", "write bandwidth, blocking save", "dash"),
    ):
        fig.add_scatter(
            x=minutes,
            y=np.asarray(out[key], dtype=float) / 1e9,
            mode="lines",
            name=name,
            line={"color": COLORS["demand"], "dash": dash},
            secondary_y=True,
        )
    # Goodput near the optimum is what a room compares: the axis spans a few times the optimum's loss
    # (at least half a point) up to 100 %, not 0-100 % where every curve is a flat line at the top.
    good_young = float(np.interp(young, grid, good)) if young > 0 else math.nan
    g_young = good_young if young > 0 else float(np.max(good))
    g_lo, g_hi = max(0.0, g_young - max(5 * (100 - g_young), 0.5)), 100.0
    marks = [("optimal", young)] + ([("used", used)] if used > 0 and not math.isclose(used, young) else [])
    marks.sort(key=lambda m: m[1])
    for i, (label, t) in enumerate(marks):
        # The earlier interval's label to the left of its line, the later one's to the right: no overprint.
        side = "bottom right" if i else "bottom left"  # below the top edge, inside the plot
        _marker_line(fig, [t / 60, t / 60], [g_lo, g_hi], f"{label} {fmt(t, 'seconds')}", position=side)
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if lo / 60 <= t <= hi / 60]
    fig.update_xaxes(title="checkpoint interval [min]", type="log", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    fig.update_yaxes(title="goodput [%]", range=[g_lo, g_hi], secondary_y=False)
    # Decades only on the log bandwidth axis: plotly's minor labels read as stray numbers ("2 3 5").
    fig.update_yaxes(title="write bandwidth [GB/s]", type="log", dtick=1, tickformat="~g", secondary_y=True)

    title = _interval_finding(p, grid, out, good_young, sized if fixed else None, ref)
    return _layout(fig, title, 380)


def _pct(g: float) -> str:
    return f"{g:.2f}\u00a0%" if g > 99 else f"{g:.1f}\u00a0%"  # a no-break space: never "99.98 / %"


def _interval_finding(
    p: Plan, grid: Any, out: dict[str, Any], good_young: float, sized: float | None, ref: float
) -> str:
    """The interval chart's title: the optimum's goodput and write bandwidth, and the used interval's."""
    v = p.values
    young, used = v["young_daly_interval_s"], v["checkpoint_interval_used_s"]
    is_async = v["checkpoint_async"] > 0
    pct = _pct
    head = (
        f"Saving every {fmt(young, 'seconds')} (the optimum at {v['failures_per_month']:.3g} interruptions a "
        f"month) keeps {pct(good_young)} goodput"
    )
    if sized is not None:  # blocking saves on storage sized for the reference interval
        title = (
            f"{head} on storage that writes {fmt(sized, 'bytes_per_s')}, "
            f"sized for blocking saves every {fmt(ref, 'seconds')}"
        )
    else:
        key = "checkpoint_async_write_bytes_per_s" if is_async else "checkpoint_sync_write_bytes_per_s"
        need = float(np.interp(young, grid, np.asarray(out[key], dtype=float)))
        title = f"{head} with {'an async drain' if is_async else 'blocking saves'} of {fmt(need, 'bytes_per_s')}"
    if used > 0 and not math.isclose(used, young):
        title += (
            f"; every {fmt(used, 'seconds')}: {pct(v['goodput'] * 100)}, "
            f"{fmt(v['checkpoint_write_bytes_per_s'], 'bytes_per_s')}"
        )
    elif used == 0:
        title += ' (no checkpoints now: set "Checkpoint interval" to a time, or optimal)'
    return title


def cluster_day(cp: ClusterPlan, seconds: float = 86400.0) -> go.Figure:
    """A cluster's storage load over a day, stacked per job type: steady reads, checkpoint bursts on top [GB/s].

    From ``calc.cluster_load.timeline``: sync saves pause their job's reads while they write; aligned
    saves start together, staggered ones are spread over each interval; async drains run all day.
    """
    t = timeline(cp, seconds)
    hours = [*(t["time_s"] / 3600), seconds / 3600]
    palette = ("#4f8bc9", "#d08c3c", "#5a9e6f", "#8e6c8a", "#c44e52", "#6b8e9e", "#9e8a5a", "#8c8c8c")
    fig = go.Figure()
    for i, p in enumerate(cp.plans):
        color = palette[i % len(palette)]
        name = p.scenario.name
        for part, dash in (("reads", None), ("checkpoints", "dot")):
            y = list(t[f"{name} {part}"] / 1e9)
            if max(y, default=0.0) <= 0:
                continue
            fig.add_scatter(
                x=hours,
                y=[*y, y[-1]],
                mode="lines",
                line={"shape": "hv", "color": color, "width": 0.5, "dash": dash},
                fillpattern={"shape": "/"} if part == "checkpoints" else None,
                stackgroup="load",
                name=f"{name} {'x' + str(cp.copies[i])} {part}",
            )
    total = t.drop(columns="time_s").sum(axis=1)
    peak = float(total.max()) if len(total) else 0.0
    fig.add_hline(
        y=cp.storage_need_bytes_per_s / 1e9,
        line_dash="dash",
        line_color="#333",
        annotation_text=f"sized for {fmt(cp.storage_need_bytes_per_s, 'bytes_per_s')} ({cp.saves} saves)",
    )
    reads = cp.read_bytes_per_s
    ratio = f", {peak / reads:,.1f}x the reads" if reads > 0 else ""
    title = (
        f"{cp.name}: {fmt(reads, 'bytes_per_s')} of reads all day; {cp.saves} saves peak at "
        f"{fmt(peak, 'bytes_per_s')}{ratio} (aligned {fmt(cp.peak_write_bytes_per_s, 'bytes_per_s')} of writes, "
        f"average {fmt(cp.average_write_bytes_per_s, 'bytes_per_s')})"
    )
    fig.update_xaxes(title="hours", range=[0, seconds / 3600])
    fig.update_yaxes(title="storage bandwidth [GB/s]", rangemode="tozero")
    return _layout(fig, title, 420)


def _sweep_axis(df: pd.DataFrame, name: str) -> tuple[Any, str]:
    """A sweep column scaled to a readable unit, and its axis title with the unit."""
    if name not in df.columns:
        raise InputError(name, f"not a column of this sweep; accepted: {', '.join(map(str, df.columns))}")
    col = df[name]
    out = OUTPUTS.get(name)
    field = FIELDS.get(name)
    label = out.label if out else field.title if field else name
    kind = out.kind if out else field.kind if field else ""
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return col.astype(str), label
    values = col.astype(float)
    if out is not None and out.percent:
        return values * 100, f"{label} [%]"
    top = float(np.nanmax(np.abs(values[np.isfinite(values)]))) if np.isfinite(values).any() else 0.0
    if kind not in ("bytes", "bytes_per_s", "seconds", "flops", "flops_per_s", "count_per_s") or top == 0:
        return values, label
    number, _, unit = fmt(top, kind).partition(" ")
    factor = top / float(number.replace(",", ""))
    return values / factor, f"{label} [{unit}]" if unit else label


def _legend(column: str, value: Any) -> str:
    """``Example size on disk 64 KiB``: a colour group by its label and value with a unit."""
    field = FIELDS.get(column)
    out = OUTPUTS.get(column)
    kind: Any = out.kind if out else field.kind if field else ""
    label = out.label if out else field.title if field else column
    quantity = ("bytes", "bytes_per_s", "seconds", "flops", "flops_per_s", "count_per_s")
    if kind in quantity and isinstance(value, int | float | np.number):
        binary = kind == "bytes" and float(value) % 1024 == 0
        return f"{label} {fmt(float(value), kind, binary=binary)}"
    return f"{label} {value}"


def sweep(df: pd.DataFrame, x: str, y: str, color: str | None = None) -> go.Figure:
    """One call from ``calc.sweep(...)`` to a figure: ``y`` against ``x``, a line per ``color``.

    Axis titles are the columns' labels with a readable unit (base units scaled: 3.36e9 bytes/s
    is drawn as 3.36 GB/s); a categorical ``x`` (a GPU, a storage option) is drawn as categories.
    """
    xs, x_title = _sweep_axis(df, x)
    ys, y_title = _sweep_axis(df, y)
    fig = go.Figure()
    groups: list[tuple[Any, Any]] = [(y_title, df.index)]
    if color is not None:
        _sweep_axis(df, color)  # names the column if it is not one
        groups = [
            (_legend(color, key), rows) for key, rows in df.groupby(color, sort=False, observed=True).groups.items()
        ]
    for name, rows in groups:
        fig.add_scatter(x=xs.loc[rows], y=ys.loc[rows], mode="lines+markers", name=name)
    fig.update_xaxes(title=x_title)
    fig.update_yaxes(title=y_title, rangemode="tozero")
    by = _sweep_axis(df, color)[1].split(" [")[0] if color else ""
    fig = _layout(fig, f"{y_title} against {x_title}" + (f", by {by.lower()}" if by else ""), 380)
    fig.update_layout(showlegend=color is not None)
    return fig
