"""Feedrate dashboard: pick a scenario or build one, see what the data path must deliver.

Run with ``make run`` (or ``streamlit run app.py``). The page only composes ``calc``: every
number and every chart comes from the library, so a notebook shows the same.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import time
import traceback
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pandas as pd
import streamlit as st

import calc
from calc import catalog, plots
from calc.card import SITE_LABELS, card, chosen, cluster_card, details, loader_line, plain_words
from calc.cluster import cluster, cluster_answer
from calc.cluster_input import POLICIES, RESTARTS, SAVES, STORAGE_INPUTS, Cluster, Job
from calc.errors import InputError
from calc.explain import formula, render_formula
from calc.lever import levers, storage_levers
from calc.plan import HEADLINE
from calc.report import (
    cluster_html,
    cluster_jobs_note,
    cluster_jobs_table,
    cluster_markdown,
    compare_table,
    designs_table,
    headroom,
    html_report,
    markdown_report,
    pin_name,
)
from calc.scenario import FIELDS, QUANTITY_KINDS, Scenario, check_field, choices, from_text, to_text
from calc.scenario import same_input as same
from calc.sizing import recommend
from calc.stages import CHECKPOINT_OUTPUTS
from calc.units import fmt, parse, plain

DEFAULT_PRESET = "beast-imagenet-4xv100"
MAX_UPLOAD_BYTES = 1024 * 1024
"""Streamlit's own limit (server.maxUploadSize = 1, in MiB) and the uploader's "1MB per file" label."""
NONE = "(none)"
NONE_SAID = {"site": "(none: the server's or storage's site, else on-prem)"}
"""An empty input whose plan still takes a value, said where the sidebar shows it empty (issue 39: the
card said On-prem while the sidebar said (none))."""
HEADLINE_LABELS = {
    "batch_size": "Batch per GPU",
    "step_time_s": "Step time",
    "samples_per_s": "Samples/s needed",
    "read_iops": "Random reads/s",
    "read_bytes_per_s": "Read bandwidth",
    "worker_ram_bytes": "Loader RAM per GPU",
    "cpu_cores": "CPU cores for loading",
    "gpu_utilization": "GPU utilisation",
    "checkpoint_bytes": "Checkpoint size",
    "checkpoint_write_bytes_per_s": "Checkpoint writes",
    "checkpoint_save_burst_bytes_per_s": "Write burst in a save",
    "checkpoint_restore_s": "Restore time",
    "checkpoint_capacity_bytes": "Checkpoints kept",
}
FIRST_PAINT_PAUSE_S = 0.6
"""Pause after the headline on a session's first run [s]: on 2 cores, 0.3 s left the headline in the
charts' update half the time (1.8x a bare page), 0.6 s never did (1.0x)."""

SECTIONS = (
    "Requirements",
    "Storage",
    "Pipeline",
    "Checkpoints",
    "Moving the data",
    "Compare",
    "Cluster",
    "Formulas and sources",
)
GROUPS = ("scenario", "GPU and model", "measured", "data", "loader", "cluster", "storage", "checkpoints", "transfer")
KEY = "f_"
"""Widget keys. Streamlit forgets a widget's value when the widget is not drawn (a closed group)."""
KEPT = "v_"
"""Every input's text, kept in the session whether or not its widget is drawn: read_inputs reads these."""
REV = "revs"
"""Per input, how many times the page set it itself since the last load: part of its widget key."""
GROUP_KEY = "group_"
DRAWN = "drawn"
"""Per control whose key the page changes within one load (the picker's "(edited)" entry, the card's site),
the key the last run drew it under: its callback acts only for that key (see ``is_drawn``)."""
GEN = "gen"
"""How many times a whole scenario was loaded (link, preset, upload). Widget keys carry it, so a browser
that has not yet seen the new widgets cannot send the old ones' values over the new scenario: Streamlit
takes a widget's value from the browser's last message, and on a slow server that message can predate
the load (a click during the run that loaded a preset reverted every field to the old preset)."""
UPLOADED = " (uploaded)"
"""The picker's entry for a scenario loaded from a file: it names that scenario, not the last preset."""
BASE_UNIT = {"bytes": "B", "bytes_per_s": "B/s", "seconds": "s", "flops": "FLOPs", "flops_per_s": "FLOP/s"}


# ------------------------------------------------------------------ scenario <-> widgets
# Every input is a text field (or a select box / check box): a number widget silently
# clamps, rounds or keeps the last value, so "1e6", "2.5" or 0 would compute something else.


def _label_unit(name: str) -> tuple[float, str]:
    """The display unit of a field (factor to base units, spelling), if calc can parse it."""
    info = FIELDS[name]
    if not info.unit or info.kind not in QUANTITY_KINDS:
        return 1.0, ""
    try:
        return parse(f"1 {info.unit}", info.kind), info.unit  # type: ignore[arg-type]
    except InputError:
        return 1.0, ""  # a unit such as samples/s: a plain number


def label(name: str) -> str:
    """The widget label: the field's label, with the base unit a bare number means."""
    info = FIELDS[name]
    text = info.title
    if info.kind in BASE_UNIT:
        text += f" (bare number = {BASE_UNIT[info.kind]})"
    return text


def to_widget(name: str, value: Any) -> Any:
    """A Scenario value as its widget shows it: quantities in the display unit, with the unit."""
    kind = FIELDS[name].kind
    if kind == "choice":
        return NONE if value is None else value
    if kind == "bool":
        return bool(value)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    factor, unit = _label_unit(name)
    if unit and kind in BASE_UNIT:
        return f"{plain(value / factor)} {unit}"
    return plain(value) if isinstance(value, float) else str(value)


def widget_text(name: str, value: Any) -> str:
    """A widget's value as the text the codec reads (Scenario.from_params)."""
    if FIELDS[name].kind == "choice":
        return to_text(None, name) if value in (NONE, None) else str(value)  # "default" where "none" is a choice
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def wkey(name: str) -> str:
    """The widget key of an input: ``f_gpu`` as the link opened it, ``f_GEN_gpu`` after a preset or a file
    was loaded, ``f_GENrREV_gpu`` after the page set the input itself (REV: the field's redraws)."""
    gen = st.session_state.get(GEN, 0)
    rev = st.session_state.get(REV, {}).get(name, 0)
    if rev:
        return f"{KEY}{gen}r{rev}_{name}"
    return KEY + name if not gen else f"{KEY}{gen}_{name}"


def set_input(name: str, value: Any) -> None:
    """Set an input's kept value: its widget starts from it when drawn (as its default, never through
    the widget's session state: a browser that had the widget but not yet its value sent '' back, which
    emptied fields nobody touched)."""
    st.session_state[KEPT + name] = value


def redraw(name: str) -> None:
    """Give an input's widget a new key, after the page set the input itself: the browser draws a new
    field from the kept value. Dropping the old key instead left the browser showing the old value beside
    a plan without it (issue 43: "Measured on GPU: V100" after the step time was cleared, link: none),
    and sending it back on the next edit."""
    revs = st.session_state.setdefault(REV, {})
    revs[name] = revs.get(name, 0) + 1


def keep(name: str, key: str) -> None:
    """A widget's on_change: keep what the user entered, so closing its group does not lose it.

    A change to a widget the page has replaced since (a browser message that crossed a load, or the
    page setting the input itself) is dropped. An edit clears a failed upload's errors: the page no
    longer shows the file's scenario question."""
    if key == wkey(name):
        st.session_state[KEPT + name] = st.session_state.get(key)
        st.session_state.pop("upload_errors", None)


def load_into_state(sc: Scenario, preset: str | None, first: bool = False) -> None:
    """Load a whole scenario: a preset (``preset`` names it) or an uploaded file (``preset`` None).

    Each load after the session's first gives the widgets new keys (GEN)."""
    if not first:
        st.session_state[GEN] = st.session_state.get(GEN, 0) + 1
    st.session_state[REV] = {}  # the new generation's keys are new already
    for name in FIELDS:
        set_input(name, to_widget(name, getattr(sc, name)))
    st.session_state["base"] = sc
    st.session_state["preset"] = preset


def drawn(slot: str, key: str) -> str:
    """Record that this run draws ``slot``'s control under ``key``; returns ``key``."""
    st.session_state.setdefault(DRAWN, {})[slot] = key
    return key


def is_drawn(slot: str, key: str) -> bool:
    """Whether ``key`` is the key the last run drew ``slot`` under. A browser that has not yet taken in that
    run still sends the control it shows under its old key, and Streamlit calls the old key's on_change for it
    (a value it no longer holds reads as changed): that is not a person's choice (issue 43: a number committed
    with Enter and a box ticked at once; the tick's message carried the picker as ``preset_0`` after the
    number's run had renamed it ``preset_0_edited``, and the preset was loaded again over both edits)."""
    return bool(st.session_state.get(DRAWN, {}).get(slot) == key)


def preset_key() -> str:
    return f"preset_{st.session_state.get(GEN, 0)}"


def on_preset(gen: int, key: str) -> None:
    choice = st.session_state.get(key)
    if gen != st.session_state.get(GEN, 0) or not is_drawn("picker", key):
        return
    if not isinstance(choice, str) or choice.endswith((UPLOADED, EDITED)):
        return
    st.session_state.pop("upload_errors", None)
    load_into_state(calc.scenario(choice), choice)


NAME_LIST = re.compile(r"(accepted|known): ((?:[\w.-]+, ){3,}[\w.-]+)")
"""A message's list of every accepted name (100 inputs, 36 storage options): shortened to the closest three."""


HUGE = re.compile(r"\b\d{1,3}(?:,\d{3}){5,}(?:\.\d+)?(?: [A-Za-z/]+)?")
"""A number of 16 digits or more as fmt writes it ("1,000,000,000,000,000,013,287,555,072 PB")."""


def short_error(exc: InputError | str, field: str = "", typed: str = "") -> str:
    """An error as the page says it: the field, the accepted form, the three closest names (not all),
    and a value out of all range as it was typed ("1e30 TB"), not spelled out in 37 digits."""
    text = str(exc)
    if typed:
        text = HUGE.sub(typed.strip(), text, count=1)
    field = field or (exc.field if isinstance(exc, InputError) else "")
    m = NAME_LIST.search(text)
    if m:
        names = m.group(2).split(", ")
        quoted = re.search(r"'([^']+)'", text)
        bad = quoted.group(1) if quoted else field.split(": ")[-1]
        near = difflib.get_close_matches(bad, names, n=3, cutoff=0.0)
        text = text.replace(m.group(0), f"{m.group(1)}: one of {len(names)} names; closest: {', '.join(near)}")
    return md_literal(text)


def md_literal(text: str) -> str:
    """Text the page echoes (what was typed, inside an error) shown as typed: Markdown's emphasis and
    code marks escaped (issue 39: "10**400" was echoed as a bold "10400")."""
    return re.sub(r"([*`~\\])", r"\\\1", text)


def upload_errors(text: str, source: str) -> list[str]:
    """Every error in an uploaded scenario, not only the first: each input is read on its own."""
    try:
        data = catalog.parse_yaml(text, source, MAX_UPLOAD_BYTES)
    except InputError as exc:
        return [short_error(exc)]  # malformed YAML: nothing more can be read
    try:
        if is_cluster(data):
            Cluster.from_dict(data, source)
        else:
            Scenario.from_dict(data, source)
        return []
    except InputError as exc:
        first = short_error(exc)
    if not isinstance(data, dict) or not data or is_cluster(data):
        return [first]
    errors = []
    for key, value in data.items():
        try:
            Scenario.from_dict({key: value}, source)
        except InputError as exc:
            errors.append(short_error(exc))
    return errors or [first]  # no single input is wrong: the inputs together are (the first error says how)


def is_cluster(data: Any) -> bool:
    """A cluster document (presets/clusters/*.yaml): a list of jobs, each naming a scenario."""
    return isinstance(data, dict) and isinstance(data.get("jobs"), list)


def on_upload() -> None:
    up = st.session_state.get("upload")
    if up is None:
        return
    data = up.getvalue()
    if len(data) > MAX_UPLOAD_BYTES:
        st.session_state["upload_errors"] = [f"{up.name}: {len(data):,} bytes; accepted: at most {MAX_UPLOAD_BYTES:,}"]
        return
    text = data.decode("utf-8", errors="replace")
    errors = upload_errors(text, up.name)
    if errors:
        st.session_state["upload_errors"] = errors
        return
    st.session_state.pop("upload_errors", None)
    if is_cluster(catalog.parse_yaml(text, up.name, MAX_UPLOAD_BYTES)):
        open_cluster(Cluster.from_yaml(text, up.name, max_bytes=MAX_UPLOAD_BYTES).to_params())
        return
    load_into_state(Scenario.from_yaml(text, up.name, max_bytes=MAX_UPLOAD_BYTES), None)


def open_cluster(params: dict[str, str]) -> None:
    """Open the Cluster view on a cluster (its link text): its fields start again from ``params``."""
    st.session_state["cluster_params"] = params
    for key in CLUSTER_FIELDS:
        st.session_state.pop(key, None)
    st.session_state["section"] = "Cluster"


def first_run() -> None:
    """Restore the scenario from the URL (?scenario=NAME&key=value...), else the default."""
    qp = {k: st.query_params[k] for k in st.query_params}
    preset = qp.pop("scenario", DEFAULT_PRESET)
    errors: list[str] = []
    try:
        preset = catalog.lookup(preset, catalog.scenario_files(), "scenario", "scenario")
    except InputError as exc:
        errors.append(str(exc))
        preset = DEFAULT_PRESET
    base = calc.scenario(preset)
    load_into_state(base, preset, first=True)
    st.session_state["cluster_params"] = {k: str(v) for k, v in qp.items() if k.startswith("cluster")}
    if st.session_state["cluster_params"]:
        st.session_state["section"] = "Cluster"  # a cluster link reopens the view it was copied from
    for key, value in qp.items():
        if key == "pins" or key.startswith("cluster"):
            continue
        try:
            v = check_or_none(key, from_text(key, value)) if key in FIELDS else from_text(key, value)
            if v is not None and FIELDS[key].kind not in ("choice", "bool", "text") and isinstance(value, str):
                v = value  # keep the text as written ("64 KiB"): the widget shows it
            set_input(key, to_widget(key, v))
        except InputError as exc:
            if key not in FIELDS:  # an input's error is said beside its field (and above the page), once
                errors.append(short_error(exc, typed=str(value)))
            set_input(key, value)  # shown, and marked wrong, in its field
    st.session_state["base"] = base
    st.session_state["url_errors"] = errors
    st.session_state["pins"] = [p for p in str(qp.get("pins", "")).split(";") if p]
    st.session_state["ready"] = True


# ------------------------------------------------------------------ page


def read_inputs() -> tuple[dict[str, Any], dict[str, str]]:
    """Every input from the session (the widgets' state), validated: values and per-field errors.

    Read before any widget is drawn, so the answer and the headline reach the page first and the
    long sidebar renders after them.
    """
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    ss = st.session_state
    for name in FIELDS:
        key = wkey(name)
        if key in ss and widget_text(name, ss[key]) != widget_text(name, ss.get(KEPT + name)):
            # The field shows a value its on_change never kept: the plan takes what the person sees
            # (never numbers computed without the value a field shows).
            ss[KEPT + name] = ss[key]
        text = widget_text(name, ss.get(KEPT + name))
        try:
            values[name] = check_or_none(name, from_text(name, text))
        except InputError as exc:
            errors[name] = short_error(exc.message, name, text)
    return values, errors


EDITED = " (edited)"
"""The picker's entry for an edited preset: picking the preset itself again reloads it (resets the edits)."""


def reset_to_preset(gen: int) -> None:
    """The sidebar's reset: the loaded scenario (the preset, or the uploaded file) as it came."""
    if gen == st.session_state.get(GEN, 0):
        load_into_state(st.session_state["base"], st.session_state["preset"])


def sidebar(values: dict[str, Any], errors: dict[str, str]) -> None:
    """Render the inputs, each followed by its error or a note that it departs from the preset."""
    sb = st.sidebar
    sb.title("Feedrate")
    sb.caption("How much storage, CPU and PCIe your training job needs to keep its GPUs fed.")
    base: Scenario = st.session_state["base"]
    changed = {name for name in values if not same(name, values[name], getattr(base, name))}
    picker(base, st.session_state["preset"], bool(changed))
    gen = st.session_state.get(GEN, 0)
    # One slot, drawn in every run, holds the notes that come and go: the groups below keep their place in
    # the sidebar. When the first edit's run inserted these two lines, each group after them was drawn anew
    # and a field being typed into meanwhile lost its text (issue 43: "16" typed, the field back to 64).
    notes = sb.container()
    if changed:  # closed groups hide their fields' notes: name every change here
        notes.caption("Changed from the preset: " + ", ".join(sorted(FIELDS[n].title for n in changed)))
        notes.button("Reset to the preset", key=f"reset_{gen}", on_click=reset_to_preset, args=(gen,))
    # Only an open group draws its fields: about 80 widgets drawn at once delayed the first screen.
    # A group holding an invalid input opens, so the message next to the field is seen.
    bad_groups = {FIELDS[name].group for name in errors}
    for group in GROUPS:
        gkey = GROUP_KEY + group.replace(" ", "_")
        if group in bad_groups:
            st.session_state[gkey] = True
        # The label stays fixed: the expander's identity (and so its open state) includes it.
        box = sb.expander(group[0].upper() + group[1:], expanded=group == "GPU and model", key=gkey, on_change="rerun")
        if box.open:
            with box:
                for name, info in FIELDS.items():
                    if info.group == group:
                        field(name, errors.get(name), base if name in changed else None)


def picker(base: Scenario, preset: str | None, edited: bool) -> None:
    """The preset picker and the uploader; an edited preset is its own entry, so re-picking the preset resets."""
    sb = st.sidebar
    options = list(calc.scenarios())
    if preset is None:  # an uploaded file: the picker names it
        options.insert(0, base.name + UPLOADED)
    elif edited:
        options.insert(0, preset + EDITED)
    gen = st.session_state.get(GEN, 0)
    key = drawn("picker", preset_key() + ("_edited" if edited else ""))
    sb.selectbox(
        "Scenario preset",
        options,
        index=0 if preset is None or edited else options.index(preset),
        key=key,
        on_change=on_preset,
        args=(gen, key),
        help="Fills every input from presets/scenarios/NAME.yaml; change any field after. Picking the preset "
        "again undoes the edits.",
    )
    about = sb.container()  # a slot in every run (sidebar's notes)
    if base.description:
        about.caption(base.description)
    sb.file_uploader(
        "Load a scenario or cluster YAML (at most 1 MB)",
        type=["yaml", "yml"],
        key="upload",
        on_change=on_upload,
        help=f"A scenario or a cluster file downloaded from this page (at most {MAX_UPLOAD_BYTES:,} bytes).",
    )
    said = sb.container()  # a slot in every run (sidebar's notes)
    for e in st.session_state.get("upload_errors", []):
        said.error(e)


def field(name: str, error: str | None, base: Scenario | None) -> None:
    """One input's widget, drawn from its kept value, then its error or (``base`` given) what the preset had."""
    with st.container():  # the field and its note in one slot: a note that comes or goes moves no other field
        _field(name, error, base)


def _field(name: str, error: str | None, base: Scenario | None) -> None:
    info = FIELDS[name]
    key = wkey(name)
    # A closed group's widgets are forgotten: reopened, each starts again from the kept value.
    kept = st.session_state.get(KEPT + name)
    if info.kind == "choice":
        opts = list(choices(name))
        if info.optional:
            opts = [NONE, *opts]
        if kept not in opts:
            # A value the list lacks (a bad link): show it and say why, never fall back.
            opts = [str(kept), *opts]
        st.selectbox(
            label(name),
            opts,
            index=opts.index(kept) if kept in opts else 0,
            key=key,
            format_func=lambda o: NONE_SAID.get(name, NONE) if o == NONE else str(o),
            help=info.help,
            on_change=keep,
            args=(name, key),
            # Storage of your own: type the path of its YAML file (calc.storage.own_option).
            accept_new_options=name == "storage",
        )
    elif info.kind == "bool":
        st.checkbox(label(name), bool(kept), key=key, help=info.help, on_change=keep, args=(name, key))
    else:
        hint = "empty = " + ((info.preset and f"from the preset ({info.preset})") or "automatic")
        st.text_input(
            label(name),
            "" if kept is None else str(kept),
            key=key,
            help=f"{info.help} ({hint if info.optional else 'required'}; units accepted, e.g. 64 KiB)",
            placeholder=hint if info.optional else "",
            on_change=keep,
            args=(name, key),
        )
    if error:
        st.error(error)
    elif base is not None:
        was = to_widget(name, getattr(base, name))
        st.caption(f"✎ changed from the preset ({was if was not in ('', None) else 'empty'})")


def check_or_none(name: str, value: Any) -> Any:
    if name == "storage" and isinstance(value, str):
        # A shared page reads storage files of your own only inside the folder it was started in.
        calc.storage.check_own_inside(value, Path.cwd())
    return None if value is None else check_field(name, value)


def share_params(sc: Scenario, preset: str | None) -> dict[str, str]:
    """The link: the preset, and each input that differs from it, as text (Scenario.to_params).

    An uploaded scenario has no preset: its link starts from the default one and names every difference."""
    preset = preset or DEFAULT_PRESET
    params = {"scenario": preset} | sc.link_params(calc.scenario(preset))
    pins = st.session_state.get("pins", [])
    if pins:
        params["pins"] = ";".join(pins)
    params |= st.session_state.get("cluster_params", {})
    return params


@st.cache_data(max_entries=64, show_spinner=False)
def cached_tables(yaml_text: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    sc = Scenario.from_yaml(yaml_text)
    return recommend(sc), levers(sc)


@st.cache_resource(max_entries=64, show_spinner=False)  # an immutable Answer, shared read-only
def cached_answer(sc: Scenario) -> calc.answers.Answer:
    return calc.answer(sc)


@st.cache_resource(max_entries=256, show_spinner=False)  # a figure, shared read-only (plotly_chart copies it)
def cached_chart(name: str, sc: Scenario) -> Any:
    """A chart of ``calc.plots`` that takes the plan only: built once per scenario for every viewer
    (a meeting opens the same link; building a figure costs 50-90 ms of Python per chart)."""
    return getattr(plots, name)(calc.plan(sc))


@st.cache_data(max_entries=64, show_spinner=False)
def cached_storage_levers(yaml_text: str) -> pd.DataFrame:
    return storage_levers(Scenario.from_yaml(yaml_text))


UNIT_IN_LABEL = (" samples/s", " reads/s", " examples", " example", " cores")
"""Units the headline labels already name: the value drops them so it fits its column."""


def short(p: calc.Plan, key: str) -> str:
    text = p.formatted(key)
    for unit in UNIT_IN_LABEL:
        if text.endswith(unit):
            return text.removesuffix(unit)
    return text


CARD_SITE = "card_site"
FIRST_SCREEN_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.2rem; }
[data-testid="stMetricValue"] { font-size: 1.4rem; }
[data-testid="stMetricValue"] > div { white-space: normal; overflow: visible; text-overflow: clip; }
[data-testid="stMetricLabel"] p { font-size: 0.85rem; }
.st-key-page_title h3 { font-size: 1.25rem; }
.st-key-card_buy p { font-size: 1.7rem; line-height: 1.25; font-weight: 400; }
[data-stale="true"] [data-testid="stMetricValue"] { opacity: 0.35; transition: none; }
body[data-feedrate-pending] [data-testid="stMain"] [data-testid="stElementContainer"] { opacity: 0.35; }
body[data-feedrate-loading] [data-testid="stSidebar"] [data-testid="stElementContainer"],
body[data-feedrate-loading] [data-testid="stSidebar"] [data-testid="stExpander"],
body[data-feedrate-loading] .st-key-answer_card { pointer-events: none; opacity: 0.5; }
</style>"""
"""The first screen at 1280 x 800: less space above the title, and headline values that fit their
column whole (Streamlit's 2.25 rem value cut "385.7 MB/s" to "385.7 M..." at 1280 px). A headline number
Streamlit marks stale (an edit is on its way to the plan) fades at once, not after Streamlit's delay:
a room never reads a number computed without a value a field already shows (issue 43). The answer is
the largest text on the card and above it: 1.7 rem against 1.4 rem values and a 1.25 rem title (issue 39:
the answer was 1 rem body text under 1.55 rem numbers)."""

PENDING_JS = """<script>
(() => {
  if (window.__feedratePending) return;  // one watcher per page, whatever the reruns
  window.__feedratePending = true;
  const doc = document, body = doc.body, seen = new WeakMap();
  const PENDING = "data-feedrate-pending", LOADING = "data-feedrate-loading";
  // The run whose page this is (RUN_MARK): a commit made while a run was in flight joins that run on the
  // server, and the page's script state stays "running" throughout, so a new run shows only as a new mark.
  const runNow = () => { const r = doc.getElementById("feedrate-run"); return r ? r.getAttribute("data-run") : ""; };
  let markedIn = null, lockedIn = null;
  const mark = () => { body.setAttribute(PENDING, ""); markedIn = runNow(); };
  const text = e => e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement;
  doc.addEventListener("focusin", e => { if (text(e)) seen.set(e.target, e.target.value); }, true);
  // A whole scenario loading (a preset picked, a file uploaded, the reset): the fields it replaces take no
  // input until its run has drawn the new ones (LOAD_LOCK_DOC).
  // Keys and text are refused there (clicks too, by the style): nothing on the fields themselves changes,
  // so no field can keep a lock after its widget is redrawn.
  const replaced = e => body.hasAttribute(LOADING) && e.target.closest
    && e.target.closest("[data-testid='stSidebar'], .st-key-answer_card");
  for (const type of ["keydown", "beforeinput", "paste", "drop"]) {
    doc.addEventListener(type, e => { if (replaced(e)) { e.preventDefault(); e.stopImmediatePropagation(); } }, true);
  }
  let picker = false;
  const unlock = () => { lockedIn = null; body.removeAttribute(LOADING); };
  const lock = () => {
    mark(); const at = lockedIn = runNow(); body.setAttribute(LOADING, "");
    // A load whose run never starts (a file the uploader refuses) must not lock the page for good.
    setTimeout(() => { if (lockedIn === at && runNow() === at) unlock(); }, 120000);
  };
  doc.addEventListener("focusin", e => {
    picker = !!(e.target.closest && e.target.closest("[class*='st-key-preset_']"));
  }, true);
  const commit = e => {
    if (text(e) && seen.has(e.target) && seen.get(e.target) !== e.target.value) {
      seen.set(e.target, e.target.value); mark();
    }
  };
  doc.addEventListener("keydown", e => { if (e.key === "Enter") commit(e); }, true);
  doc.addEventListener("focusout", commit, true);
  doc.addEventListener("click", e => {
    const option = e.target.closest && e.target.closest("[role='option']");
    if (option && option.getAttribute("aria-selected") !== "true") { if (picker) lock(); else mark(); }
    if (e.target.closest && e.target.closest("[class*='st-key-reset_'] button")) lock();
  }, true);
  doc.addEventListener("change", e => {
    if (e.target.type === "file") lock();
    else if (["checkbox", "radio"].includes(e.target.type)) mark();
  }, true);
  new MutationObserver(records => {
    const app = doc.querySelector("[data-testid='stApp']");
    const state = app && app.getAttribute("data-test-script-state"), run = runNow();
    const started = records.some(r => r.attributeName === "data-test-script-state" && state === "running");
    if (body.hasAttribute(PENDING) && (started || run !== markedIn)) body.removeAttribute(PENDING);
    if (lockedIn !== null && state === "notRunning" && run !== lockedIn) unlock();
  }).observe(body, {subtree: true, childList: true, attributes: true, attributeFilter: ["data-test-script-state"]});
})();
</script>"""
"""From the moment a field commits a new value until the run it starts begins, the page's numbers fade
(``data-feedrate-pending``). Streamlit marks elements stale only once the server says the run began: a
round trip (5 frames, 150 ms, on a loaded machine) during which the old numbers showed unmarked beside
the new value. From the run's start Streamlit's own marks (stale elements, faded at once above) take over.

LOAD_LOCK_DOC: loading a whole scenario (a preset picked, a file uploaded, the reset) also locks the sidebar
and the card's site (``data-feedrate-loading``: faded, keys, text and clicks refused) until the run that
loads it has begun and ended. An edit typed into a field the load is about to replace was lost (issue 43,
fifteen people under load: 7 of 110 edits): sent before the upload's own rerun (the file goes first), the
load overwrote it; sent after, it named a widget of the scenario before the load (GEN), which the page
drops, and the field went back to the loaded value. Locked, nothing typed shows until the new fields do."""


RUNS = "runs"
"""How many runs this session has begun: the page's run mark (``run_mark``)."""


def run_mark() -> str:
    """RUN_MARK: an empty element carrying this run's number, drawn first in every run, so the page's watcher
    (PENDING_JS) sees a new run begin even when the script state stays "running" across it. Without it an
    edit committed during a run left the numbers faded for good, and a load's lock stayed on for 120 s
    (issue 43: 7 of 15 people held up on a loaded server)."""
    st.session_state[RUNS] = st.session_state.get(RUNS, 0) + 1
    return f'<span id="feedrate-run" data-run="{st.session_state[RUNS]}"></span>'


FOLD_SWEEPS = "fold_sweeps"
FOLD_TABLE = "fold_table"


def on_card_site(gen: int, key: str) -> None:
    """The card's site control sets the ``site`` input, as the sidebar's field would."""
    if gen != st.session_state.get(GEN, 0) or not is_drawn(CARD_SITE, key):
        return
    set_input("site", to_widget("site", st.session_state.get(key)))
    redraw("site")  # the sidebar's field shows the site picked on the card


def site_said(sc: Scenario, assumed: bool) -> str:
    """Where the card's site comes from when the scenario gives none (the sidebar shows it empty):
    `` (assumed)``, `` (the server's)``, `` (the storage's)``; empty when given."""
    if assumed:
        return " (assumed)"
    if sc.site:
        return ""
    return " (the server's)" if sc.server else " (the storage's)"


@st.cache_resource(max_entries=64, show_spinner=False)  # a table, shared read-only
def cached_recommend(sc: Scenario) -> pd.DataFrame:
    return recommend(sc)


def answer_card(p: calc.Plan) -> None:
    """The first screen's answer in at most three lines (calc.card), the site chosen on it; the rest folds."""
    a = cached_answer(p.scenario)
    c = card(a, cached_recommend(p.scenario))
    box = st.container(border=True, key="answer_card")  # .st-key-answer_card in the page (browser tests)
    left, right = box.columns([5, 1])
    sites = list(choices("site"))
    site = a.site
    gen = st.session_state.get(GEN, 0)
    key = drawn(CARD_SITE, f"{CARD_SITE}_{gen}_{site}_{a.site_assumed}")  # a new control when the site changes
    said = site_said(p.scenario, a.site_assumed)
    right.selectbox(
        f"Site{said}",  # the label says where it came from: the value stays whole in the narrow box
        sites,
        index=sites.index(site) if site in sites else None,
        format_func=lambda s: str(SITE_LABELS.get(s, s)),
        key=key,
        on_change=on_card_site,
        args=(gen, key),
        help="Where the job runs: on-prem (parts bought) or a cloud (rented). Not given, it is the server's or "
        "the storage's site, else on-prem (assumed, and said); the same input as Storage inputs: Site.",
    )
    left.container(key="card_buy").markdown(c.buy)  # the answer, the card's largest text
    left.markdown("  \n".join(c.lines()[1:]))
    with box.expander("Details: each site, next best, your own storage, idle GPU time, the loader's CPU"):
        for line in [c.loader, *details(a)] if c.loader else details(a):
            st.markdown(f"- {line}")


def headline(p: calc.Plan) -> None:
    """The headline numbers, five to a row: the data path's, the bottleneck and where the step time
    came from, then (a job that saves) what its checkpoints ask of storage."""
    keys = p.headline_outputs
    slots = [*HEADLINE, "bottleneck", "step_method", *keys[len(HEADLINE) :]]
    cols = [col for _ in range(len(slots) // 5) for col in st.columns(5)]
    method = {
        "measured step time": "measured",
        "measured throughput": "measured",
        "re-projected measurement": "re-projected",
    }.get(p.step_method, "model")
    for col, key in zip(cols, slots, strict=True):
        if key == "bottleneck":
            col.metric(
                "Bottleneck",
                p.bottleneck,
                help="Slowest pipeline stage: storage, network, cpu, pcie, gpu, decoder, workers or main "
                "(the main process receiving the workers' batches)",
            )
            continue
        if key == "step_method":
            col.metric("Step time from", method, help=p.step_method)
            continue
        # Demand beside what the pipeline delivers, when it falls short (a room reads both).
        short_of = key == "samples_per_s" and p.gpu_utilization < 1 - 1e-6
        col.metric(
            HEADLINE_LABELS[key],
            short(p, key),
            delta=f"{short(p, 'achieved_samples_per_s')} delivered" if short_of else None,
            delta_color="off",
            delta_arrow="off",
            # The formula with this plan's numbers, as the Formulas section shows it (no {names}).
            help=f"{calc.OUTPUTS[key].label} = {render_formula(p, formula(p, key))[1]}",
        )
    if p.cpu_cores == 0:
        st.caption(
            "CPU cores for loading is 0: this scenario has no decode cost per example "
            f"({p.sources.get('cpu_seconds_per_example', 'input')})."
        )
    for w in p.warnings:
        st.warning(plain_words(w))


def folded(label: str, key: str) -> Any | None:
    """A closed expander whose contents are built only when the user opens it (its widget state; the
    click reruns the page): the container to draw into, or None while it is closed.

    Every chart and table a first visit draws delays the last one: in the browser, the 3 charts and the
    table of the Requirements section cost 570 ms of main-thread time after Plotly's chunk had run, the
    one chart left open 300 ms; the last chart came 3.7x -> 2.9-3.5x a bare page's headline time
    (benchmarks/dashboard_timing.py, issue 31)."""
    box = st.expander(label, key=key, on_change="rerun")
    return box if box.open else None


def requirements_tab(p: calc.Plan) -> None:
    st.plotly_chart(cached_chart("memory_breakdown", p.scenario), key="chart_memory")
    sweeps = folded("How the demand changes with the batch and with the number of GPUs", FOLD_SWEEPS)
    if sweeps is not None:
        with sweeps:  # one chart per row: side by side, titles and axis labels get cut at meeting widths
            st.plotly_chart(cached_chart("demand_vs_batch", p.scenario), key="chart_batch")
            st.plotly_chart(cached_chart("demand_vs_gpus", p.scenario), key="chart_gpus")
    table = folded("Every number on this page, with its formula", FOLD_TABLE)
    if table is not None:
        t = p.to_frame()[["label", "display", "formula"]]
        if not p.saves:  # a job that saves nothing: no checkpoint figures
            t = t.drop(index=[k for k in CHECKPOINT_OUTPUTS if k in t.index])
        table.dataframe(t, width="stretch", height=560)


OPTION_COLUMNS: dict[str, Any] = {
    "option": "Option",
    "feasible": "Serves",
    "ready": "Workers cover latency",
    "units": st.column_config.NumberColumn("Units", format="%d"),
    "unit": "Unit",
    "limiting": "Limited by",
    "iops_headroom": "Reads/s headroom",
    "bandwidth_headroom": "Bandwidth headroom",
    "capacity_headroom": "Capacity headroom",
    "workers_per_gpu_needed": st.column_config.NumberColumn("Reads in flight per GPU", format="%d"),
    "monthly_total_usd": st.column_config.NumberColumn("A month, all in [USD]", format="$%.0f"),
    "monthly_rent_usd": st.column_config.NumberColumn("Rent [USD/month]", format="$%.0f"),
    "monthly_read_usd": st.column_config.NumberColumn("Reads [USD/month]", format="$%.0f"),
    "monthly_write_usd": st.column_config.NumberColumn("Writes [USD/month]", format="$%.0f"),
    "monthly_egress_usd": st.column_config.NumberColumn("Egress [USD/month]", format="$%.0f"),
    "purchase_usd": st.column_config.NumberColumn("Purchase [USD]", format="$%.0f"),
    "why_not": "Why not",
    "caveats": "Caveats",
    "verified": "Verified",
}
"""The storage table's columns and their headers (units in the header, money in whole dollars)."""


def storage_tab(p: calc.Plan, rec: pd.DataFrame) -> None:
    st.markdown(
        f"Demand: **{p.formatted('read_iops')}** of **{p.formatted('request_bytes')}**, "
        f"**{p.formatted('read_bytes_per_s')}**, dataset **{p.formatted('dataset_bytes')}**; "
        f"latency budget {p.formatted('latency_budget_s')} per example."
    )
    st.markdown("**Complete designs**, cheapest comparable monthly cost first (purchases over the amortisation).")
    d = cached_answer(p.scenario).designs  # the answer's own ranking, as the report shows it
    if d:
        st.dataframe(designs_table(d), width="stretch", hide_index=True)
    else:
        st.info("No complete design: no priced option serves this job (see each option's reason below).")
    st.plotly_chart(plots.storage_map(p, rec, answer=cached_answer(p.scenario)), key="chart_storage")
    st.markdown("**Every option as one tier** (headroom: supply / need; blank = no limit published).")
    shown = rec[list(OPTION_COLUMNS)].replace([math.inf], float("nan"))
    # A room reads "over 100x", not 69,741,059,510.38x (a need of a few bytes a second).
    for col in ("iops_headroom", "bandwidth_headroom", "capacity_headroom"):
        shown[col] = shown[col].map(headroom)
    st.dataframe(shown, width="stretch", height=520, hide_index=True, column_config=OPTION_COLUMNS)
    st.caption("Verified: V official doc, 3P third-party quote, R recalled, I inferred.")
    st.markdown(
        "**Storage levers**: each applied alone, the demand it leaves and the first option that then serves it."
    )
    st.dataframe(levers_shown(cached_storage_levers(p.scenario.to_yaml())), width="stretch", hide_index=True)


def levers_shown(lev: pd.DataFrame) -> pd.DataFrame:
    """The storage levers as the page writes numbers (5,885 reads/s, 385.7 MB/s), not 2.482e+5."""
    return pd.DataFrame(
        {
            "Lever": lev["lever"],
            "Change": lev["change"],
            "Random reads/s": [fmt(x, "count_per_s", "reads/s") for x in lev["read_iops"]],
            "File opens/s": [fmt(x, "count_per_s", "opens/s") for x in lev["file_opens_per_s"]],
            "Read bandwidth": [fmt(x, "bytes_per_s") for x in lev["read_bytes_per_s"]],
            "First option that serves": [
                f"{float(n):,g} x {o}" if isinstance(o, str) and o and not pd.isna(n) else "none"  # 4.6875 TiB whole
                for o, n in zip(lev["best_option"], lev["best_units"], strict=True)
            ],
            "Units of your storage": ["" if pd.isna(u) else f"{float(u):,g}" for u in lev["own_storage_units"]],
        }
    )


def pipeline_tab(p: calc.Plan, lev: pd.DataFrame) -> None:
    line = loader_line(p)
    if line:  # where the CPU stage's cost per example came from: decoder, image, CPU (or a measurement)
        st.markdown(line)
    st.plotly_chart(cached_chart("pipeline_stages", p.scenario), key="chart_pipeline")
    st.plotly_chart(plots.levers_chart(lev), key="chart_levers")
    st.dataframe(
        lev,
        width="stretch",
        column_config={
            "gpu_utilization": st.column_config.NumberColumn("GPU utilisation", format="percent"),
            "gain": st.column_config.NumberColumn("gain", format="percent"),
            "achieved_samples_per_s": st.column_config.NumberColumn("achieved [samples/s]", format="%.1f"),
            "cpu_cores_freed_per_node": st.column_config.NumberColumn("loader cores freed a node", format="%.1f"),
        },
    )


def checkpoint_tab(p: calc.Plan) -> None:
    sc = p.scenario
    a = cached_answer(sc)
    d = chosen(a) if sc.storage is None else None  # the store the card buys
    if a.served is not None and d is not None:
        # Judged on the storage the card buys, not on "no storage": the saves land on its store, at
        # the units it buys (the answer's own plan, so the card and this tab say one restore time).
        p = a.served
        st.caption(
            f"No storage chosen: checkpoints judged on the store the answer buys, "
            f"{p.scenario.storage_units:,g} x {p.scenario.storage} ({d['description']})."
        )
    if p.checkpoint_write_bytes_per_s > 0:
        st.plotly_chart(cached_chart("checkpoint_timeline", p.scenario), key="chart_checkpoint")
        st.plotly_chart(cached_chart("checkpoint_interval_chart", p.scenario), key="chart_checkpoint_interval")
    else:  # a flat line says nothing to a room: say why there is no chart
        st.info("No checkpoints in this scenario: set the interval in the Checkpoints inputs to size their writes.")
    output_table(p, CHECKPOINT_OUTPUTS)
    st.caption(
        "Size = parameters x bytes per parameter of the layout (MLPerf Storage: 2 B weights + 12 B fp32 master "
        "and Adam state). A synchronous save blocks training for the allowed stall; an asynchronous one copies to "
        "host RAM and drains during training. Set the interval, mode and parallel layout in the Checkpoints inputs."
    )


def transfer_tab(p: calc.Plan) -> None:
    st.plotly_chart(cached_chart("transfer_timeline", p.scenario), key="chart_transfer")
    output_table(
        p, ("dataset_bytes", "compress_s", "send_s", "decompress_s", "transfer_time_s", "transfer_direct_time_s")
    )
    st.caption(
        "Set the copy link, compression ratio, cores and rates in the Transfer inputs. DuckSoft's 3D-CT article: "
        "pigz on 60 cores turned a 3-hour copy of 1 TiB into minutes."
    )


def output_table(p: calc.Plan, keys: tuple[str, ...]) -> None:
    """A two-column table of outputs: label and value with its unit."""
    st.table(pd.DataFrame({"": [calc.OUTPUTS[k].label for k in keys], "value": [p.formatted(k) for k in keys]}))


def pinned_scenarios() -> list[Scenario]:
    """Pinned scenarios, kept in the link as ``pins=`` (text params joined by & and ;)."""
    out = []
    for text in st.session_state.get("pins", []):
        try:
            out.append(Scenario.from_params(dict(parse_qsl(text)), source="pins"))
        except InputError as exc:
            st.error(f"Link: a pinned scenario cannot be read: {exc}")
    return out


def compare_tab(p: calc.Plan) -> None:
    pins = st.session_state.setdefault("pins", [])
    c1, c2 = st.columns([1, 4])
    if c1.button("Pin this scenario", key="pin", disabled=len(pins) >= 4, help="Up to four, kept in the link"):
        pins.append(urlencode(p.scenario.to_params()))
        st.rerun()
    if c2.button("Clear pinned", key="unpin", disabled=not pins):
        pins.clear()
        st.rerun()
    pinned = pinned_scenarios()
    plans = [calc.plan(s) for s in pinned] + [p]
    names = [pin_name(s, p.scenario) for s in pinned] + ["current"]
    answers = [cached_answer(q.scenario) for q in plans]  # the current one is the answer card's
    table = compare_table(plans, names, answers)
    marked = set(table.attrs["changed_inputs"])
    if marked:
        st.caption("Highlighted: the inputs that differ between the compared scenarios.")
    styled = table.style.apply(
        lambda row: ["background-color: #fff3c4" if row.name in marked else "" for _ in row], axis=1
    )
    st.dataframe(styled, width="stretch", height=min(80 + 35 * len(table), 900))
    st.plotly_chart(plots.compare_chart(plans, names, answers), key="chart_compare")


def formulas_tab(p: calc.Plan) -> None:
    st.code(p.explain(), language="text")
    st.dataframe(pd.DataFrame({"input": list(p.sources), "source": list(p.sources.values())}), width="stretch")


def exports(p: calc.Plan, yaml_text: str, link: str) -> None:
    st.markdown("**Share and export**")
    # A plain link, not st.code: the code block's highlighter is a 1.5 MB script that the first screen
    # would download and parse before the headline (benchmarks/dashboard_timing.py).
    st.markdown(f"[Link to this page]({link}): it reopens exactly what is shown (the address bar holds the same link).")
    c1, c2, c3, c4 = st.columns(4)
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in p.scenario.name)

    # Read now: a deferred download runs outside the script, where session_state is empty.
    pinned = pinned_scenarios()

    def report() -> str:  # built when clicked, not on every run
        rec, lev = cached_tables(yaml_text)
        return markdown_report(p, rec, lev, link, compared=pinned)

    def report_html() -> str:
        rec, lev = cached_tables(yaml_text)
        return html_report(p, rec, lev, link, compared=pinned)

    c1.download_button(
        "Report (Markdown)", report, f"{stem}-report.md", "text/markdown", key="dl_md", on_click="ignore"
    )
    c2.download_button(
        "Report (HTML, charts included)",
        report_html,
        f"{stem}-report.html",
        "text/html",
        key="dl_html",
        on_click="ignore",
    )
    c3.download_button("CSV", p.to_frame().to_csv(), f"{stem}.csv", "text/csv", key="dl_csv", on_click="ignore")
    c4.download_button(
        "Scenario YAML", p.scenario.to_yaml(), f"{stem}.yaml", "application/x-yaml", key="dl_yaml", on_click="ignore"
    )


def main() -> None:
    st.set_page_config(page_title="Feedrate", page_icon="⛽", layout="wide")
    if not st.session_state.get("ready"):
        first_run()
    values, errors = read_inputs()
    # The answer and the headline go first, then the sidebar (what the link holds), then the section.
    shown, plan_errors = page(values, errors)
    if shown is not None and not st.session_state.get("headline_sent"):
        # A session's first run only: let the browser draw the answer and the headline before the
        # sidebar and the charts arrive. Sent together, they wait for the charts' 4.7 MB script (one
        # React update): headline painted 5.2 s -> 1.4 s after opening, 1.0x a bare page
        # (benchmarks/dashboard_timing.py). A pause inside this run, not a second run.
        st.session_state["headline_sent"] = True
        time.sleep(FIRST_PAINT_PAUSE_S)
    sidebar(values, errors | plan_errors)
    if shown is not None:
        section_of(*shown)


def page(values: dict[str, Any], errors: dict[str, str]) -> tuple[tuple[calc.Plan, str] | None, dict[str, str]]:
    """The answer and the headline: the plan and its link for the section, and errors the plan
    raised, by field, for the sidebar to show."""
    # One element for the style and the watcher: each element takes a row of the page's gap (16 px).
    st.html(FIRST_SCREEN_CSS + PENDING_JS + run_mark(), unsafe_allow_javascript=True)
    if not page_errors(errors):
        return None, {}
    base: Scenario = st.session_state["base"]
    try:
        changed = {k: v for k, v in values.items() if not same(k, v, getattr(base, k))}
        sc = base.replace(**changed) if changed else base
        p = calc.plan(sc)
    except InputError as exc:
        st.error(f"No numbers shown: {short_error(exc)}")
        field = exc.field.split(": ")[-1]
        return None, ({field: short_error(exc.message, field)} if field in FIELDS else {})
    show_what_the_link_holds(sc, values)
    params = share_params(sc, st.session_state["preset"])
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)
    base_url = (st.context.url or "").split("?")[0] if hasattr(st, "context") else ""
    link = f"{base_url}?{urlencode(params)}"
    if st.session_state.get("section") == "Cluster":
        cluster_top(sc)  # the Cluster view's first screen is the cluster's: its name and its answer
    else:
        st.container(key="page_title").subheader(p.title)
        answer_card(p)
        # The headline is the plan on the store the answer buys (issue 38): its utilisation and restore.
        headline(cached_answer(p.scenario).shown)
    return (p, link), {}


def page_errors(errors: dict[str, str]) -> bool:
    """The link's and the upload's errors, once each, above the page; False when inputs are wrong."""
    st.caption("Feedrate: what to buy so the GPUs stay fed")
    for e in st.session_state.get("url_errors", []):
        st.error(f"Link: {e}")
    upload = st.session_state.get("upload_errors", [])
    if upload:  # the details are beside the uploader, in the sidebar: said once
        st.error(
            f"The uploaded file was not loaded ({len(upload)} error{'s' if len(upload) > 1 else ''}, listed under "
            "the uploader); the page still shows the scenario before it."
        )
    if errors:
        st.error(
            "No numbers shown until these inputs are fixed (marked in the sidebar): "
            + "; ".join(f"{FIELDS[k].title} ({k}): {v}" for k, v in errors.items())
        )
        return False
    return True


def show_what_the_link_holds(sc: Scenario, values: dict[str, Any]) -> None:
    """The sidebar shows the scenario the link holds: what an edit changed beyond itself (the
    "-edited" name, a cleared measurement's GPU and precision) is written back to its field."""
    for name in FIELDS:
        now = getattr(sc, name)
        if not same(name, values[name], now):
            set_input(name, to_widget(name, now))
            redraw(name)
            values[name] = now


def sections(p: calc.Plan) -> list[str]:
    """The sections this plan has: Checkpoints only when the job saves, Moving the data only when it
    reads a dataset (a checkpoint benchmark drew "Moving 0 B: 0 s")."""
    hidden = {"Checkpoints": not p.saves, "Moving the data": p.values["dataset_bytes"] <= 0}
    return [s for s in SECTIONS if not hidden.get(s, False)]


def section_of(p: calc.Plan, link: str) -> None:
    """The chosen section, drawn in this same run after the answer and the headline (no timer-driven
    second run: one raced the user's clicks and could reload another scenario's widgets)."""
    # A section selector rather than st.tabs: only the chosen section is computed and drawn,
    # which keeps the first render and every re-render fast.
    shown = sections(p)
    if st.session_state.get("section") not in shown:
        st.session_state["section"] = shown[0]
    section = st.radio("Section", shown, horizontal=True, key="section", label_visibility="collapsed")
    sc = p.scenario
    yaml_text = sc.to_yaml()
    if section == "Requirements":
        requirements_tab(p)
    elif section == "Storage":
        storage_tab(p, cached_recommend(sc))
    elif section == "Pipeline":
        pipeline_tab(p, cached_tables(yaml_text)[1])
    elif section == "Checkpoints":
        checkpoint_tab(p)
    elif section == "Moving the data":
        transfer_tab(p)
    elif section == "Compare":
        compare_tab(p)
    elif section == "Cluster":
        cluster_view(sc, link)
    else:
        formulas_tab(p)
    exports(p, yaml_text, link)


# ------------------------------------------------------------------ the Cluster view (issue 22)

CLUSTER_EXAMPLE = "this:2\nresnet50-8xh100-imagenet:3\nvideo-vivit-kinetics:1\ngpt-1b-h100-tokens:4"
"""The job list a first visit shows: the scenario in the sidebar and three preset job types."""


CLUSTER_FIELDS = {
    "cluster_text": "cluster",
    "cluster_saves": "cluster_saves",
    "cluster_restarts": "cluster_restarts",
    "cluster_policy": "cluster_policy",
    "cluster_horizon": "cluster_horizon_months",
    "cluster_job_growth": "cluster_job_growth_per_year",
    "cluster_data_growth": "cluster_data_growth_per_year",
    "cluster_shared": "cluster_shared",
}
"""The Cluster view's fields (session keys) and the link parameter each one holds."""
CLUSTER_DEFAULTS = {
    "cluster_saves": SAVES[0],
    "cluster_restarts": RESTARTS[0],
    "cluster_policy": POLICIES[0],
    "cluster_horizon_months": "0",
    "cluster_job_growth_per_year": "0",
    "cluster_data_growth_per_year": "0",
    "cluster_shared": "",
}


def cluster_params() -> dict[str, str]:
    """The Cluster view's fields as link text, read from the session (started from the link or an
    uploaded cluster file); the cluster's own name and description are carried as they came."""
    ss = st.session_state
    kept: dict[str, str] = ss.setdefault("cluster_params", {})
    for key, param in CLUSTER_FIELDS.items():
        if key not in ss:
            text = kept.get(param, CLUSTER_DEFAULTS.get(param, ""))
            ss[key] = text.replace(";", "\n") or CLUSTER_EXAMPLE if key == "cluster_text" else text
    lines = [ln.strip() for ln in ss["cluster_text"].replace(";", "\n").splitlines() if ln.strip()]
    params = {"cluster": ";".join(lines)}
    for key, param in CLUSTER_FIELDS.items():
        if key != "cluster_text":
            params[param] = str(ss[key]).strip() or CLUSTER_DEFAULTS[param]
    if not params["cluster_shared"]:
        del params["cluster_shared"]
    return params | {k: kept[k] for k in CLUSTER_CARRIED if k in kept}


CLUSTER_CARRIED = ("cluster_name", "cluster_description")
"""Link parameters of a cluster that no field edits: an uploaded cluster keeps its name (issue 39:
lab-168-gpus was titled beast-imagenet-4xv100-cluster)."""


def cluster_fields() -> None:
    """The Cluster view's fields (their values are read by ``cluster_params``, before they are drawn)."""
    ss = st.session_state

    def add() -> None:
        pick = "this" if ss["cluster_add"] == "this scenario" else ss["cluster_add"]
        ss["cluster_text"] = ss["cluster_text"].rstrip() + f"\n{pick}:{int(ss['cluster_add_count'])}"

    st.markdown("**The cluster's jobs and options**")
    c1, c2, c3 = st.columns([3, 1, 1])
    c1.selectbox("Add a job type", ["this scenario", *calc.scenarios()], key="cluster_add")
    c2.number_input("Count", min_value=1, max_value=100_000, value=1, step=1, key="cluster_add_count")
    c3.button("Add", on_click=add, key="cluster_add_button")
    st.text_area(
        "Jobs, one per line: preset:count ('this' is the scenario in the sidebar)", key="cluster_text", height=130
    )
    st.text_input(
        "Shared storage and inputs (key=value|key=value; empty = the sidebar's storage inputs)",
        key="cluster_shared",
        help="Applied to every job, e.g. storage=aws-fsx-lustre-ssd-1000|storage_units=240.",
    )
    o1, o6, o2, o3, o4, o5 = st.columns(6)
    o1.selectbox("Checkpoint saves", SAVES, key="cluster_saves")
    # Which jobs restore together: one while the others run, or all after an outage (issue 38).
    o6.selectbox("Restarts", RESTARTS, key="cluster_restarts")
    o2.selectbox("Shortfall shared by", POLICIES, key="cluster_policy")
    o3.text_input("Horizon [months]", key="cluster_horizon")
    o4.text_input("Job growth [per year, 0.5 = +50 %]", key="cluster_job_growth")
    o5.text_input("Data growth [per year]", key="cluster_data_growth")


def build_cluster(sc: Scenario, params: dict[str, str]) -> Cluster:
    """The Cluster of the view's fields: ``this`` lines are the sidebar's scenario; the shared
    inputs are the link's (cluster_shared), else the sidebar's storage inputs."""
    parsed = Cluster.from_params({**params, "cluster": "custom:1"})  # the options and shared inputs
    jobs: list[Job] = []
    for ln in params["cluster"].split(";"):  # in the order written
        if ln.split(":", 1)[0].strip().lower() == "this":
            count = ln.split(":", 1)[1].split("|")[0] if ":" in ln else "1"
            jobs.append(Job(sc, int(calc.parse(count.strip(), "count", "this"))))
        elif ln:
            jobs += Cluster.from_params({"cluster": ln}).jobs
    shared = dict(parsed.shared) or {k: getattr(sc, k) for k in STORAGE_INPUTS}
    # Every option as the link says it (saves, restarts, policy, growth): declared once in Cluster; its
    # own name when it has one (an uploaded file, a link), else the sidebar scenario's.
    name = parsed.name if "cluster_name" in params else f"{sc.name}-cluster"
    return dataclasses.replace(parsed, jobs=tuple(jobs), shared=shared, name=name)


def cluster_now(sc: Scenario) -> tuple[dict[str, str], Cluster, Any] | str:
    """The cluster of the view's fields and its answer, computed once a run (the top of the page and
    the view below it both read it); an error's text when the fields make no cluster."""
    ss = st.session_state
    params = cluster_params()
    got = ss.get("cluster_now")
    if got is not None and got[0] == (params, sc):
        kept: tuple[dict[str, str], Cluster, Any] | str = got[1]
        return kept
    try:
        c = build_cluster(sc, params)
        out: tuple[dict[str, str], Cluster, Any] | str = (params, c, cluster_answer(cluster(c)))
    except (InputError, ValueError) as exc:
        out = f"Cluster: {short_error(str(exc))}"
    ss["cluster_now"] = ((params, sc), out)
    return out


def cluster_top(sc: Scenario) -> None:
    """The Cluster view's first screen: the cluster's name, then its answer (calc.card.cluster_card:
    what to buy, the one monthly figure to budget, how the chargeback splits it) and the rest folded."""
    now = cluster_now(sc)
    if isinstance(now, str):
        st.container(key="page_title").subheader("Cluster")
        st.error(now)
        return
    _, c, a = now
    cp = a.plan
    jobs = sum(cp.copies)
    st.container(key="page_title").subheader(
        f"{c.name}: {jobs:,} job{'s' if jobs != 1 else ''} of {len(cp.plans)} type{'s' if len(cp.plans) != 1 else ''}, "
        f"{cp.gpus:,} GPUs on one storage"
    )
    box = st.container(border=True, key="cluster_card")
    k = cluster_card(a)
    box.container(key="card_buy").markdown(k.buy)
    box.markdown("  \n".join(k.lines()[1:]))
    with box.expander("Details: runners-up, the combined load, your storage, growth, each job's share"):
        for line in a.lines()[1:]:
            st.markdown(f"- {plain_words(line)}")


def cluster_view(sc: Scenario, link: str) -> None:
    """Many job types on one storage: jobs from presets or the scenario being edited, one answer,
    per-job utilisation and chargeback, the day's load, reports; all kept in the link.

    Job lines read ``preset:count`` (``this`` = the scenario in the sidebar; ``|key=value`` pairs
    as in links); the shared inputs are the link's ``cluster_shared``, else the sidebar's storage.
    The answer is at the top of the page (``cluster_top``); here, the fields that make it.
    """
    ss = st.session_state
    now = cluster_now(sc)
    table = st.container()  # the jobs' table above the fields that make them
    cluster_fields()
    if isinstance(now, str):
        return
    params, c, a = now
    if ss.get("cluster_params") != params:  # the link holds the whole cluster
        ss["cluster_params"] = params
        for param in (*CLUSTER_FIELDS.values(), *CLUSTER_CARRIED):
            if param not in params and param in st.query_params:
                del st.query_params[param]
        st.query_params.update(params)
    table.dataframe(cluster_jobs_table(a), hide_index=True, width="stretch")
    if note := cluster_jobs_note(a):
        table.caption(note)
    st.plotly_chart(plots.cluster_day(a.plan), width="stretch", key="cluster_day")
    cluster_downloads(a, c, link)


def cluster_downloads(a: Any, c: Cluster, link: str) -> None:
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in c.name)
    d1, d2, d3 = st.columns(3)
    d1.download_button(
        "Cluster report (Markdown)",
        lambda: cluster_markdown(a, link),
        f"{stem}.md",
        "text/markdown",
        key="dl_cluster_md",
        on_click="ignore",
    )
    d2.download_button(
        "Cluster report (HTML)",
        lambda: cluster_html(a, link),
        f"{stem}.html",
        "text/html",
        key="dl_cluster_html",
        on_click="ignore",
    )
    d3.download_button(
        "Cluster YAML", c.to_yaml(), f"{stem}.yaml", "application/x-yaml", key="dl_cluster_yaml", on_click="ignore"
    )


try:
    main()
except Exception as exc:  # never a traceback on the page: say what failed, log the rest
    traceback.print_exc()
    st.error(f"Feedrate could not compute this page: {type(exc).__name__}: {exc}")
