"""N people editing the dashboard at once: each edit checked in the field, the link and the headline.

Shared by ``tests/test_browser.py`` (the stress test) and ``benchmarks/dashboard_load.py`` (the rate
it holds). One Chromium, one context per person (a separate Streamlit session each), driven by
Playwright's async API so that every person's edits interleave with every other's on the server.

After every edit the person's page must show, once the run the edit started has finished:

- the field holding what was typed (or picked),
- the page's own link holding it (``?...&jobs=4``),
- the headline numbers equal to ``calc.plan`` of that link, computed here, outside the page.

A check that fails is an edit that did not reach the plan (or reached it and was not shown); it is
recorded with what the page showed, never retried.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from chromium import CHROMIUM, CHROMIUM_ARGS

BACKGROUND_ARGS = [
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
]
"""Every person has their own browser in front: without these, headless Chromium throttles the
pages whose window is behind the others (their scripts stop, a click waits for ever)."""

HEADLINE_CHECKED = {"Random reads/s": "read_iops", "Read bandwidth": "read_bytes_per_s", "Batch per GPU": "batch_size"}
"""Headline metrics compared with calc.plan of the page's link (label on the page: output)."""

PRESETS = (
    "beast-imagenet-4xv100",
    "llama3-8b-pretrain-8xh100",
    "mlperf-unet3d-h100",
    "beast-nfs-shop",
    "resnet50-8xh100-imagenet",
    "vit-b16-a100",
    "mlperf-resnet50-a100",
    "gpt-1b-h100-tokens",
    "efficient-pytorch-cityscapes",
    "clip-vitl14-datacomp-webdataset",
    "mlperf-cosmoflow-h100",
    "video-vivit-kinetics",
    "beast-resnet152-v100",
    "sd-latent-diffusion-laion",
    "mlperf-checkpoint-llama3-8b",
)
"""One preset per person: fifteen different links."""


@dataclass(frozen=True)
class Edit:
    """One thing a person does: ``kind`` text | choice | tick | site | upload, on input ``name``.

    ``values``: what to type or pick; the first that differs from what the page holds now (a
    person changing the GPU of an A100 preset picks another GPU, not the same one)."""

    kind: str
    name: str
    values: tuple[str, ...]


STEPS: tuple[tuple[Edit, ...], ...] = (
    (Edit("text", "num_workers", ("3", "5")), Edit("tick", "pin_memory", ("false", "true"))),
    (Edit("text", "jobs", ("4", "5")),),
    (Edit("text", "example_bytes", ("200 kB", "300 kB")), Edit("text", "num_workers", ("6", "7"))),
    (Edit("choice", "gpu", ("A100-SXM4-80GB", "H100-SXM")),),
    (Edit("site", "site", ("gcp", "azure")),),
    (Edit("text", "jobs", ("2", "3")), Edit("text", "batch_size", ("32", "48"))),
    (Edit("upload", "jobs", ("3", "6")),),
    (Edit("text", "prefetch_factor", ("3", "4")), Edit("text", "batch_size", ("16", "24"))),
    (Edit("text", "step_time_s", ("", "0.5 s")),),
)
"""What each person does, a step at a time: numbers, text with units, a choice, a box ticked, the card's
site, an upload, and a measured step time cleared or typed (the page then sets where it was measured itself:
the fields it changes must show it). The first step is the first change from the preset (its run renames the
picker's entry "(edited)") with a box ticked at once: the pair that lost both edits on a busy server until
app.is_drawn (issue 43). The edits of one step are made back to back, the second while
the first's run is in flight (a person typing into one field, then the next); after a step the page
is checked for each."""


EDIT_TIMEOUT_S = 180.0
"""How long an edit may take to reach the link on a loaded server before it is reported as slow."""
LOAD_TIMEOUT_MS = 300_000
"""How long a person waits for their link's first screen while everyone else opens theirs."""


@dataclass
class Result:
    """What one person's edits did: the edits that reached the plan and the page, those that did not."""

    person: int
    preset: str
    applied: int = 0
    failed: int = 0
    """Edits whose step did not check out (every edit of a step with a problem counts)."""
    lost: list[str] = field(default_factory=list)
    """What the page showed for each problem."""
    seconds: list[float] = field(default_factory=list)
    """Per step that checked out: seconds from its last commit until the page's link held every edit
    (the run that computed the new headline had set it)."""


def link_plan(url: str) -> Any:
    """``calc.plan`` of a page's link, as another browser opening it would compute."""
    import calc

    params = dict(parse_qsl(urlsplit(url).query))
    for key in [k for k in params if k == "pins" or k.startswith("cluster")]:
        params.pop(key)
    base = calc.scenario(params.pop("scenario"))
    return calc.plan(calc.Scenario.from_params(params, base=base, source="link"))


def field_label(name: str) -> re.Pattern[str]:
    from calc.scenario import FIELDS

    return re.compile("^" + re.escape(FIELDS[name].title) + r"( \(|$)")


def group_title(name: str) -> str:
    from calc.scenario import FIELDS

    g = FIELDS[name].group
    return g[0].upper() + g[1:]


BUSY = (
    "[data-testid='stApp'][data-test-script-state='running'], body[data-feedrate-pending], body[data-feedrate-loading]"
)
"""The page is working on an edit: a run the page knows of, or an edit committed whose run has not begun
(app.PENDING_JS: on a loaded server the run's start reached the browser up to 14 s after the edit was sent;
the page fades its numbers meanwhile), or a scenario loading."""


async def wait_idle(page: Any, timeout_ms: float = 180_000) -> None:
    """Connected, the script has finished running (Streamlit's own e2e wait), and no edit is on its way."""
    await page.wait_for_selector(
        "[data-testid='stApp'][data-test-connection-state='CONNECTED']", state="attached", timeout=timeout_ms
    )
    await page.wait_for_selector(
        "[data-testid='stApp'][data-test-script-state='notRunning']", state="attached", timeout=timeout_ms
    )
    await page.wait_for_selector(
        "body:not([data-feedrate-pending]):not([data-feedrate-loading])", state="attached", timeout=timeout_ms
    )


def field_box(page: Any, name: str) -> Any:
    """The sidebar field of input ``name``: a box's whole control (its input is hidden, never 'visible')."""
    from calc.scenario import FIELDS

    side = page.locator("[data-testid='stSidebar']")
    if FIELDS[name].kind == "bool":
        return side.get_by_test_id("stCheckbox").filter(has=page.get_by_label(field_label(name))).first
    return side.get_by_label(field_label(name)).first


async def open_group(page: Any, name: str) -> Any:
    """The sidebar field of input ``name``, its group opened first if closed (that click reruns the page).

    Whether the group is open is read from the group itself, not from the field: a widget the page shows for
    the first time (the first box ticked) is a placeholder until the browser has fetched its code, seconds on
    a crowded server, and a click on an open group's title would close it."""
    side = page.locator("[data-testid='stSidebar']")
    box = field_box(page, name)
    group = side.get_by_test_id("stExpander").filter(has=page.locator("summary", has_text=group_title(name))).first
    if await group.locator("details").first.get_attribute("open") is None:
        await group.locator("summary").first.click()
    await box.wait_for(state="visible", timeout=LOAD_TIMEOUT_MS)
    return box


def current(url: str, name: str) -> str:
    """What the page's link holds for input ``name``, as text (the site: where the job runs)."""
    from calc.scenario import to_text

    sc = link_plan(url).scenario
    if name == "site":
        from calc.site import job_site

        return job_site(sc)
    return to_text(getattr(sc, name), name)


def pick(url: str, edit: Edit) -> str:
    """The first of the edit's values that the page does not hold already."""
    from calc.scenario import from_text

    now = current(url, edit.name)
    if edit.kind == "site":
        return next(v for v in edit.values if v != now)
    return next(v for v in edit.values if from_text(edit.name, v) != from_text(edit.name, now))


async def do_edit(page: Any, edit: Edit, value: str, tmp: Path, person: int) -> None:
    # A person waits while the page loads a scenario (the sidebar greyed out: app.LOAD_LOCK_DOC).
    await page.wait_for_selector("body:not([data-feedrate-loading])", state="attached", timeout=LOAD_TIMEOUT_MS)
    if edit.kind == "text":
        box = await open_group(page, edit.name)
        await box.fill(value)
        await box.press("Enter")
    elif edit.kind == "tick":  # a click on the box's label, as a person ticks it (the input itself is hidden)
        box = await open_group(page, edit.name)
        await box.locator("label").first.click()
    elif edit.kind == "choice":
        box = await open_group(page, edit.name)
        await box.click()
        await page.keyboard.type(value)  # the list is virtual: filtered, the option is drawn
        await page.get_by_role("option", name=value, exact=True).click()
    elif edit.kind == "site":
        from calc.card import SITE_LABELS

        card = page.locator(".st-key-answer_card").first
        # The control itself (its combobox), not the box's centre: a two-line label ("Site (the
        # storage's)") puts the centre on its help icon, whose tooltip opens instead of the list.
        await card.get_by_test_id("stSelectbox").first.get_by_role("combobox").click()
        await page.keyboard.type(SITE_LABELS.get(value, value))  # the list is virtual: filtered, it is drawn
        await page.get_by_role("option", name=SITE_LABELS.get(value, value), exact=True).click()
    elif edit.kind == "upload":
        # The page's own scenario YAML with one input changed: what a person downloads, edits and loads.
        sc = link_plan(page.url).scenario.replace(**{edit.name: int(value)}, name=f"person-{person}")
        path = tmp / f"person-{person}.yaml"
        path.write_text(sc.to_yaml())
        await page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(path))
    else:
        raise ValueError(edit.kind)


def holds(url: str, edit: Edit, value: str) -> bool:
    """The link holds the edit: opened elsewhere, it gives the input the value typed."""
    from calc.scenario import from_text

    if edit.kind == "upload":
        return current(url, edit.name) == value and current(url, "name").startswith("person-")
    if edit.kind == "site":
        return current(url, "site") == value
    return bool(from_text(edit.name, current(url, edit.name)) == from_text(edit.name, value))


async def shown_field(page: Any, edit: Edit) -> str:
    if edit.kind == "site":
        return await page.locator(".st-key-answer_card").first.get_by_test_id("stSelectbox").first.inner_text()
    box = field_box(page, edit.name)
    if not await box.count() or not await box.is_visible():
        return "(closed)"
    if edit.kind == "tick":
        return str(await box.locator("input").first.is_checked()).lower()
    return str(await box.input_value())


async def reached(page: Any, edit: Edit, value: str, wait_s: float) -> str | None:
    """None once the page's link holds the edit; else why not.

    An edit is lost when the page has finished every run and shows no edit on its way (``BUSY``: idle for
    ``IDLE_POLLS`` polls in a row) and its link still lacks the edit; one still being worked on after
    ``wait_s`` is reported slow."""
    deadline = time.monotonic() + wait_s
    idle_seen = 0
    while not holds(page.url, edit, value):
        if time.monotonic() > deadline:
            return f"{edit.name}={value}: still not in the link after {wait_s:.0f} s (slow)"
        running = await page.locator(BUSY).count()
        idle_seen = 0 if running else idle_seen + 1
        if idle_seen >= IDLE_POLLS:
            shown = await shown_field(page, edit) if edit.kind in ("text", "choice", "tick") else ""
            return (
                f"{edit.name}={value}: lost, the page is idle and its link lacks it "
                f"({page.url.split('?', 1)[-1]}); the field shows {shown!r}"
            )
        await asyncio.sleep(POLL_S)
    return None


async def agrees(page: Any, done: Sequence[tuple[Edit, str]]) -> list[str]:
    """After a step: each field shows what was typed, the link holds it, the headline is the link's plan.

    The link and the headline are read while the page is idle, and read again if the link moved
    meanwhile (a run still arriving), so both come from the same run."""
    for _ in range(5):
        await wait_idle(page, LOAD_TIMEOUT_MS)
        url = page.url
        shown = {}
        for label in HEADLINE_CHECKED:
            box = page.locator("[data-testid='stMetric']", has_text=label).first
            shown[label] = (await box.locator("[data-testid='stMetricValue']").inner_text()).strip()
        if page.url == url:
            break
    problems = []
    for edit, value in done:
        if not holds(url, edit, value):
            problems.append(f"{edit.name}={value}: the link lost it after the run ({url.split('?', 1)[-1]})")
        elif edit.kind in ("text", "choice", "tick") and (got := (await shown_field(page, edit)).strip()) != value:
            problems.append(f"{edit.name}={value}: the field shows {got!r}")
    p = link_plan(url)
    problems += [f"{m} ({url.split('?', 1)[-1]})" for m in mismatched_fields(p.scenario, await sidebar_fields(page))]
    for label, key in HEADLINE_CHECKED.items():
        want = p.formatted(key)
        if not want.startswith(shown[label].split(" ")[0]):
            problems.append(f"headline {label} {shown[label]!r}, the link's plan {want!r} ({url.split('?', 1)[-1]})")
    return problems


SIDEBAR_FIELDS = """() => [...document.querySelectorAll("[data-testid='stSidebar'] input")]
  .filter(e => e.getAttribute("aria-label") && e.offsetParent !== null)
  .map(e => [e.getAttribute("aria-label"), e.type === "checkbox" ? String(e.checked) : e.value])"""
"""Every visible field of the sidebar: its label and what it shows."""


async def sidebar_fields(page: Any) -> list[tuple[str, str]]:
    return [(str(a), str(b)) for a, b in await page.evaluate(SIDEBAR_FIELDS)]


def mismatched_fields(sc: Any, shown: Sequence[tuple[str, str]]) -> list[str]:
    """The sidebar's fields that show something other than what the link's scenario holds."""
    from calc.scenario import FIELDS, from_text, same_input

    by_label = {f.title: n for n, f in FIELDS.items()}
    out = []
    for label, text in shown:
        name = by_label.get(label.split(" (bare number")[0])
        if name is None:
            continue  # the preset picker, the uploader
        value = None if text in ("(none)", "") else from_text(name, "true" if text == "true" else text)
        if FIELDS[name].kind == "bool":
            value = text == "true"
        held = getattr(sc, name)
        if FIELDS[name].kind == "bool":
            held = bool(held)
        try:
            if not same_input(name, value, held):
                out.append(f"the field {label!r} shows {text!r}, the link holds {held!r}")
        except Exception as exc:  # a value one side cannot parse: said, not raised
            out.append(f"the field {label!r} shows {text!r}, the link holds {held!r} ({exc})")
    return out


POLL_S = 0.25
IDLE_POLLS = 40
"""An edit whose page stays idle for 40 polls of 0.25 s (10 s) without the link holding it is lost:
a rerun the edit started shows as 'running' within a second even on a loaded server."""


async def person(browser: Any, server: str, i: int, preset: str, steps: Sequence[Sequence[Edit]], tmp: Path) -> Result:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    page.set_default_timeout(180_000)
    out = Result(i, preset)
    try:
        try:  # fifteen first loads at once on two cores: minutes, not seconds
            await page.goto(f"{server}/?scenario={preset}", timeout=LOAD_TIMEOUT_MS)
            await page.wait_for_selector("[data-testid='stMetric']", timeout=LOAD_TIMEOUT_MS)
            await wait_idle(page, LOAD_TIMEOUT_MS)
        except Exception as exc:
            out.lost.append(f"opening the link: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            out.failed = sum(len(step) for step in steps)
            return out
        for step in steps:
            done: list[tuple[Edit, str]] = []
            problems = []
            try:
                for edit in step:  # back to back: the next edit while the last one's run is in flight
                    value = pick(page.url, edit)
                    await do_edit(page, edit, value, tmp, i)
                    done.append((edit, value))
            except Exception as exc:  # a timeout or a missing widget: said with its cause
                problems.append(f"{step[len(done)].name}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            committed = time.monotonic()
            for edit, value in done:
                try:
                    problem = await reached(page, edit, value, EDIT_TIMEOUT_S)
                except Exception as exc:
                    problem = f"{edit.name}={value}: {type(exc).__name__}: {str(exc).splitlines()[0]}"
                if problem:
                    problems.append(problem)
            served = time.monotonic() - committed
            if not problems:
                try:
                    problems = await agrees(page, done)
                except Exception as exc:
                    problems = [f"checking the page: {type(exc).__name__}: {str(exc).splitlines()[0]}"]
            out.lost += problems
            if problems:
                out.failed += len(step)
            else:
                out.applied += len(done)
                out.seconds.append(served)
    finally:
        await ctx.close()
    return out


async def crowd(server: str, n: int, tmp: Path, steps: Sequence[Sequence[Edit]] = STEPS) -> tuple[list[Result], float]:
    """``n`` people, each on their own preset's link, editing at once; (results, wall seconds)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *BACKGROUND_ARGS]
        )
        try:
            t0 = time.monotonic()
            results = await asyncio.gather(
                *(person(browser, server, i, PRESETS[i % len(PRESETS)], steps, tmp) for i in range(n))
            )
            return list(results), time.monotonic() - t0
        finally:
            await browser.close()


def summary(results: Sequence[Result], wall_s: float) -> dict[str, float]:
    applied = sum(r.applied for r in results)
    total = applied + sum(r.failed for r in results)
    times = [s for r in results for s in r.seconds]
    return {
        "people": float(len(results)),
        "edits": float(total),
        "applied_share": applied / total if total else 0.0,
        "edits_per_s": total / wall_s if wall_s else 0.0,
        "median_served_s": statistics.median(times) if times else float("nan"),
        "wall_s": wall_s,
    }
