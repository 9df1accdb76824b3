"""The dashboard in a real browser: Playwright drives Debian's headless Chromium against a
live ``streamlit run`` server.

Needs /usr/bin/chromium (``apt-get install chromium``); Playwright's own browser download
does not work here. Without Chromium these tests skip with that message, unless
FEEDRATE_REQUIRE_BROWSER=1 (set by .ci/run), where they fail instead.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "docs" / "screenshot.png"

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    if os.environ.get("FEEDRATE_REQUIRE_BROWSER") == "1":
        raise RuntimeError("browser tests are required (FEEDRATE_REQUIRE_BROWSER=1) but chromium is missing")
    pytest.skip(
        "browser tests need Debian's chromium: run `apt-get install chromium` to enable them", allow_module_level=True
    )

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(ROOT / "app.py"),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--global.developmentMode",
        "false",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    started = time.monotonic()
    try:
        while time.monotonic() - started < 60:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("streamlit did not start within 60 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def browser_page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1600, "height": 1100}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


def _wait(page: Page, metrics: bool = True) -> None:
    """Streamlit's own e2e wait: connected, then the script has finished running."""
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", state="attached")
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", state="attached")
    if metrics:
        page.wait_for_selector("[data-testid='stMetric']")


def _pick(page: Page, box: Any, option: str) -> None:
    """Pick an option of a select box: typed first, since the list is virtual (an option scrolled out of
    it is not drawn, and a click on it waited for ever on a loaded machine)."""
    box.click()
    page.keyboard.type(option)
    page.get_by_role("option", name=option, exact=True).click()


def _section(page: Page, name: str) -> None:
    """Open a section and wait for its run: idle, nothing stale, twice 300 ms apart. The script state
    alone reads notRunning in the gap before the click's run starts (a chart screenshot then met a chart
    being redrawn: "Element is not attached to the DOM")."""
    page.locator("[data-testid='stRadio']").get_by_text(name, exact=True).click()
    expect(page.locator("[data-testid='stRadio'] input[type='radio']:checked")).to_have_count(1)
    for _ in range(2):
        _wait(page, metrics=False)
        expect(page.locator("[data-stale='true']")).to_have_count(0)
        page.wait_for_timeout(300)
    _wait(page, metrics=False)


def _settled(page: Page) -> None:
    """Before a screenshot: the sidebar's fields and the first chart are drawn, not skeletons."""
    page.locator("[data-testid='stSidebar'] [data-testid='stTextInputField']:visible").first.wait_for()
    page.wait_for_selector(".js-plotly-plot")
    expect(page.locator("[data-testid='stSkeleton']")).to_have_count(0)
    page.wait_for_timeout(500)  # Plotly's first layout pass


FOLDS = ("How the demand changes with the batch", "Every number on this page")
"""The Requirements section's folded expanders (drawn when opened, issue 31's speed)."""


def _open_folds(page: Page) -> None:
    """Open the section's folded expanders, as a reader would: each click reruns the page and draws them."""
    main = page.locator("[data-testid='stMain']")
    # Each waits for what the click's rerun draws: the script state alone can be read before the rerun starts.
    main.locator("[data-testid='stExpander'] summary", has_text=FOLDS[0]).click()
    expect(page.locator(".js-plotly-plot")).to_have_count(3)
    main.locator("[data-testid='stExpander'] summary", has_text=FOLDS[1]).click()
    main.locator("[data-testid='stDataFrame']").first.wait_for()
    _wait(page)


def _download(page: Page, button: str, path: Path) -> str:
    """Click a download button, save what it sends to ``path`` and return its text."""
    with page.expect_download() as info:
        page.get_by_role("button", name=button).click()
    info.value.save_as(path)
    return path.read_text()


def _sidebar_field(page: Page, link: str, group: str, label: str) -> tuple[Any, Any]:
    """Open ``link``, open the sidebar group ``group`` (that click reruns the page) and wait for its field
    labelled ``label`` (a regular expression) and for the run to end: (the sidebar, the field)."""
    page.goto(link)
    _wait(page)
    side = page.locator("[data-testid='stSidebar']")
    side.locator("[data-testid='stExpander'] summary", has_text=group).first.click()
    box = side.get_by_label(re.compile(label)).first
    box.wait_for()
    _wait(page)
    return side, box


def _metric(page: Page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']", has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text().strip()


NO_HEADER = "[data-testid='stHeader'] { display: none !important; }"
"""Streamlit's fixed header: an element screenshot scrolls the chart to the window's top, under it,
and the header hid the chart's title (the pictures in docs/screenshots lost their first lines)."""


def _save(png: bytes, path: Path) -> None:
    """Write a screenshot unless the file already shows the same picture (anti-aliasing aside).

    Chromium's text and chart anti-aliasing differ by a few pixel values from run to run; rewriting
    every PNG on every test run left the tree dirty with changes nobody can see.
    """
    from io import BytesIO

    from PIL import Image, ImageChops

    if path.exists():
        old, new = Image.open(path).convert("RGB"), Image.open(BytesIO(png)).convert("RGB")
        if old.size == new.size:
            diff = ImageChops.difference(old, new).convert("L")
            changed = sum(diff.histogram()[24:])  # pixels off by more than 24 of 255
            if changed <= 0.001 * old.size[0] * old.size[1]:
                return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png)


def _no_errors(page: Page) -> None:
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    expect(page.locator("[data-testid='stAlertContentError']")).to_have_count(0)


FIRST_SCREENS = {
    # name: the link's query
    "default": "",
    "llm": "scenario=llama3-8b-pretrain-8xh100&site=aws",
    "mlperf-checkpoint": "scenario=mlperf-checkpoint-llama3-70b",
    "on-prem": "scenario=mlperf-unet3d-h100&site=on-prem",
}
"""The first screens a meeting opens: the default and an MLPerf checkpoint preset (no site given:
on-prem assumed, issue 39; both opened on "Where does this job run?" with no Buy line), an LLM and
an on-prem answer. The page must show the card calc.card words for the plan (its values are tested by
hand in tests/test_card.py and tests/test_answer.py; here, where it sits and how large)."""


def _card_buys(query: str) -> str:
    """The first line calc.card gives for a first screen's link, as the page prints it."""
    from urllib.parse import parse_qsl

    import calc
    from calc.card import card

    params = dict(parse_qsl(query))
    p = calc.plan(params.pop("scenario", "beast-imagenet-4xv100"), **params)
    return card(calc.answer(p), calc.recommend(p)).buy.replace("**", "")


FONT_PX = "e => parseFloat(getComputedStyle(e).fontSize)"


BOX = "e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }"


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
@pytest.mark.parametrize("name", list(FIRST_SCREENS))
def test_the_first_screen_decides_without_scrolling(
    server: str, browser_page: Page, name: str, size: tuple[int, int]
) -> None:
    """Issue 31: at 1280 x 800 the card ended at 930 px and the headline was cut ("385.7 M..."). The card
    (what to buy, a month and to buy, why: at most three lines, the site chosen on it) and every headline
    value lie whole inside the window, by the elements' boxes. Issue 39: every first screen buys (main's
    default and MLPerf checkpoint screens asked "Where does this job run?"), and the answer is the
    largest text on the card and above it (main: 16 px body text under 24.8 px headline values)."""
    query = FIRST_SCREENS[name]
    first = _card_buys(query)
    page = browser_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{server}/?{query}")
    _wait(page)
    main = page.locator("[data-testid='stMain']")
    card = main.locator(".st-key-answer_card").first
    expect(card).to_contain_text(first)
    left, top, right, bottom = card.evaluate(BOX)
    assert top >= 0 and bottom <= size[1], (top, bottom)
    text = card.locator("[data-testid='stMarkdownContainer']")
    lines = [ln for i in range(2) for ln in text.nth(i).inner_text().strip().splitlines()]
    assert len(lines) <= 3 and lines[0] == first, lines
    expect(page.get_by_text("Where does this job run?")).to_have_count(0)
    answer_px = card.locator(".st-key-card_buy p").first.evaluate(FONT_PX)
    others = [*page.locator("[data-testid='stMetricValue']").evaluate_all(f"es => es.map({FONT_PX})")]
    others += [page.locator(".st-key-page_title h3").first.evaluate(FONT_PX)]
    others += text.nth(1).evaluate_all(f"es => es.map({FONT_PX})")
    assert answer_px > max(others), (answer_px, others)
    site = card.get_by_test_id("stSelectbox").first  # the site is chosen on the card
    sl, st_, sr, sb = site.evaluate(BOX)
    assert left <= sl and sr <= right and top <= st_ and sb <= bottom
    values = page.locator("[data-testid='stMetricValue']")
    expect(values).to_have_count(10 if name in ("default", "on-prem") else 15)  # a job that saves: a third row
    if not query or "site=" not in query:  # no site given: the card's control says on-prem was assumed
        expect(site.locator("input")).to_have_value("On-prem")  # a combobox: its value, not its text
        expect(site).to_contain_text("Site (assumed)")
    for i in range(values.count()):
        v = values.nth(i)
        assert v.evaluate(BOX)[3] <= size[1], v.inner_text()  # without scrolling
        inner = v.locator("div").first
        assert inner.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), v.inner_text()  # whole, no "..."
    _no_errors(page)
    _settled(page)
    _save(page.screenshot(), ROOT / "docs" / "screenshots" / f"first-screen-{name}-{size[0]}.png")
    page.set_viewport_size({"width": 1600, "height": 1100})


def test_page_loads_with_the_default_plan(server: str, browser_page: Page) -> None:
    page = browser_page
    page.goto(server)
    _wait(page)
    assert _metric(page, "Random reads/s") == "5,885"
    assert _metric(page, "Batch per GPU") == "128"
    # The default preset names no site: the card buys on-prem, says so, and prices each other site below
    # it (issue 39). The articles' page cache is off: no site buys "the page cache".
    expect(page.locator(".st-key-answer_card input").first).to_have_value("On-prem")
    expect(page.locator(".st-key-answer_card").first).to_contain_text("Site (assumed)")
    page.get_by_text("Details: each site").first.click()
    expect(page.get_by_text("Site not given: on-prem assumed").first).to_be_visible()
    expect(page.get_by_text("rent on AWS $").first).to_be_visible()
    expect(page.locator("[data-testid='stMain']").get_by_text("the page cache")).to_have_count(0)
    _no_errors(page)
    _settled(page)
    SCREENSHOT.parent.mkdir(exist_ok=True)
    _save(page.screenshot(full_page=False), SCREENSHOT)
    expect(page.locator(".js-plotly-plot")).to_have_count(1)  # the sweeps and the table are folded
    _open_folds(page)


@pytest.mark.parametrize("width", [1280, 1920])
def test_every_section_renders_at_meeting_widths(server: str, browser_page: Page, width: int) -> None:
    """Screenshots of the first screen and of each section's charts (docs/screenshots/), nothing cut."""
    page = browser_page
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(f"{server}/?scenario=resnet50-8xh100-imagenet")
    _wait(page)
    out = ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    _settled(page)
    _save(page.screenshot(), out / f"first-screen-{width}.png")
    for value in page.locator("[data-testid='stMetricValue']").all():
        # a headline value that does not fit its column is cut with an ellipsis by the browser
        assert value.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), value.inner_text()
    for section in ("Requirements", "Storage", "Pipeline", "Moving the data", "Compare"):
        _section(page, section)
        _no_errors(page)
        name = section.lower().replace(" ", "-")
        if section == "Compare":  # pin the H100 plan, then compare it with an A100 one
            page.get_by_role("button", name="Pin this scenario").click()
            _wait(page)
            box = page.get_by_test_id("stSelectbox").filter(has_text="GPU").filter(has_not_text="GPUs").first
            _pick(page, box, "A100-SXM4-80GB")
            expect(page).to_have_url(re.compile(r"gpu=A100-SXM4-80GB"))
            # the title states the finding: the pinned H100 plan is the faster one
            expect(page.get_by_text("Fastest: A ").first).to_be_visible()  # a letter; the legend names it
            _no_errors(page)
        if section == "Requirements":
            _open_folds(page)
        page.wait_for_selector(".js-plotly-plot")
        page.wait_for_timeout(800)  # let Plotly finish its first layout pass
        charts = page.locator(".js-plotly-plot")
        for i in range(charts.count()):
            _save(charts.nth(i).screenshot(style=NO_HEADER), out / f"{name}-{i + 1}-{width}.png")
    # checkpoints: a scenario that writes them (the default one has none, and says so)
    page.goto(f"{server}/?scenario=mlperf-checkpoint-llama3-70b")
    _wait(page)
    _section(page, "Checkpoints")
    page.wait_for_selector(".js-plotly-plot")
    page.wait_for_timeout(800)
    _no_errors(page)
    charts = page.locator(".js-plotly-plot")
    expect(charts).to_have_count(2)  # the save timeline and the interval trade-off
    for i in range(charts.count()):
        _save(charts.nth(i).screenshot(style=NO_HEADER), out / f"checkpoints-{i + 1}-{width}.png")
    # the default page, and three presets' sections as a meeting opens them
    page.goto(server)
    _wait(page)
    _settled(page)
    _save(page.screenshot(), out / f"default-first-screen-{width}.png")
    for preset, section in (
        ("beast-imagenet-4xv100", "Storage"),
        ("llama3-8b-pretrain-8xh100", "Storage"),
        ("mlperf-unet3d-h100", "Pipeline"),
    ):
        page.goto(f"{server}/?scenario={preset}")
        _wait(page)
        _section(page, section)
        page.wait_for_selector(".js-plotly-plot")
        page.wait_for_timeout(800)
        _no_errors(page)
        chart = page.locator(".js-plotly-plot").first
        _save(chart.screenshot(style=NO_HEADER), out / f"{preset}-{section.lower()}-{width}.png")
    page.set_viewport_size({"width": 1600, "height": 1100})


def test_changing_the_gpu_updates_the_numbers(server: str, browser_page: Page) -> None:
    page = browser_page
    page.goto(server)
    _wait(page)
    box = page.get_by_test_id("stSelectbox").filter(has_text="GPU").filter(has_not_text="GPUs").first
    _pick(page, box, "A100-SXM4-80GB")
    expect(
        page.locator("[data-testid='stMetric']", has_text="Batch per GPU").locator("[data-testid='stMetricValue']")
    ).to_have_text("512")
    expect(page).to_have_url(re.compile(r"gpu=A100-SXM4-80GB"))
    _no_errors(page)


def test_share_link_restores_the_scenario(server: str, browser_page: Page) -> None:
    page = browser_page
    page.goto(f"{server}/?scenario=beast-nfs-shop&jobs=10")
    _wait(page)
    assert _metric(page, "Random reads/s") == "1,280"
    assert _metric(page, "Read bandwidth") == "640 MB/s"
    _no_errors(page)


def test_download_markdown_report(server: str, browser_page: Page, tmp_path: Path) -> None:
    page = browser_page
    page.goto(f"{server}/?scenario=mlperf-unet3d-h100")
    _wait(page)
    text = _download(page, "Report (Markdown)", tmp_path / "report.md")
    assert text.startswith("# Feedrate: mlperf-unet3d-h100")
    assert "## What to buy, and what it costs" in text and "19.5 samples/s" in text
    assert "?scenario=mlperf-unet3d-h100" in text  # the link back
    body = _download(page, "Report (HTML, charts included)", tmp_path / "report.html")
    # self-contained: plotly.js is inlined, not loaded from a script src
    assert body.startswith("<!doctype html>") and "Plotly.newPlot" in body and "<script src=" not in body


def test_report_carries_the_pinned_comparison(server: str, browser_page: Page, tmp_path: Path) -> None:
    """Before: the download ran outside the page script, where the pins were not visible, so the
    report left out the comparison a meeting had pinned."""
    page = browser_page
    page.goto(f"{server}/?scenario=beast-imagenet-4xv100")
    _wait(page)
    _section(page, "Compare")
    page.get_by_role("button", name="Pin this scenario").click()
    # The pin's run ends in st.rerun(): wait for the run that shows it, not the gap between the two.
    expect(page.get_by_role("button", name="Clear pinned")).to_be_enabled()
    _wait(page)
    text = _download(page, "Report (Markdown)", tmp_path / "report.md")
    assert "## Compared scenarios" in text
    # the pin (this same scenario) reads 5,885 reads/s, the article's figure for 4 x V100 on 64 KB files
    section = text.split("## Compared scenarios", 1)[1]
    assert section.count("5,885") >= 2


def test_bad_input_shows_a_message_not_a_traceback(server: str, browser_page: Page) -> None:
    page = browser_page
    page.goto(f"{server}/?scenario=beast-resnet50-v100&example_bytes=-3%20kB")
    _wait(page, metrics=False)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    # named next to its field (its group opens) and in the main area
    expect(page.locator("[data-testid='stSidebar']").get_by_text("out of range").first).to_be_visible()
    expect(page.locator("[data-testid='stMain']").get_by_text("out of range").first).to_be_visible()
    # no stale numbers: the headline is replaced by what to fix
    expect(page.locator("[data-testid='stMetric']")).to_have_count(0)
    expect(page.get_by_text("No numbers shown").first).to_be_visible()


def test_uploading_a_scenario_yaml_restores_it(server: str, browser_page: Page, tmp_path: Path) -> None:
    import calc

    page = browser_page
    page.goto(server)
    _wait(page)
    good = tmp_path / "shop.yaml"
    good.write_text(calc.scenario("beast-nfs-shop", jobs=10, name="our-shop").to_yaml())
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(good))
    expect(
        page.locator("[data-testid='stMetric']", has_text="Random reads/s").locator("[data-testid='stMetricValue']")
    ).to_have_text("1,280", timeout=60_000)  # beast-nfs-shop at 10 jobs: the article's 1,280 reads/s (a busy CI: 60 s)
    # the picker names the uploaded scenario, not the preset shown before
    expect(page.get_by_role("combobox", name="Scenario preset")).to_have_value("our-shop (uploaded)")
    # the page's own link reopens the uploaded scenario, with no error
    link = page.url
    other = page.context.new_page()
    other.goto(link)
    _wait(other)
    assert _metric(other, "Random reads/s") == "1,280"
    expect(other.locator("[data-testid='stMain'] h3").first).to_contain_text("our-shop")
    _no_errors(other)
    other.close()
    bad = tmp_path / "bad.yaml"
    bad.write_text("gpu: [V100\n")
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(bad))
    main = page.locator("[data-testid='stMain']")
    expect(page.locator("[data-testid='stSidebar']").get_by_text("malformed YAML").first).to_be_visible()
    expect(main.get_by_text("1 error, listed under the uploader").first).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    # two wrong inputs: both named (beside the uploader, once), not only the first; the main area points there
    two = tmp_path / "two.yaml"
    two.write_text("gpu: NoSuchGPU\nbatch_size: lots\n")
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(two))
    side = page.locator("[data-testid='stSidebar']")
    expect(main.get_by_text("2 errors").first).to_be_visible()
    expect(side.get_by_text("NoSuchGPU").first).to_be_visible()
    expect(side.get_by_text("batch_size").first).to_be_visible()
    expect(main.get_by_text("NoSuchGPU")).to_have_count(0)  # said once
    assert _metric(page, "Random reads/s") == "1,280"  # the scenario before the failed upload stays


def test_fields_a_loading_file_replaces_take_no_edit_until_it_has_loaded(
    server: str, browser_page: Page, tmp_path: Path
) -> None:
    """Issue 43's second race: a person uploads a scenario and types into a field at once. The field on the
    screen belongs to the scenario before the upload: an edit there was lost (overwritten by the load, or
    dropped as the old scenario's while the field showed it). Now the sidebar is locked, greyed out, while
    the file loads (app.LOAD_LOCK_DOC): what is typed then does not show, nothing is left pending, and the
    edits made once it has loaded, two back to back, reach the uploaded scenario."""
    from urllib.parse import parse_qsl, urlsplit

    import calc

    page = browser_page
    side, prefetch = _sidebar_field(page, f"{server}/?scenario=beast-imagenet-4xv100", "Loader", r"^Prefetch factor")
    shop = calc.scenario("beast-nfs-shop", jobs=10, name="our-shop")
    assert shop.prefetch_factor != 5
    path = tmp_path / "shop.yaml"
    path.write_text(shop.to_yaml())
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(path))
    expect(page.locator("body[data-feedrate-loading]")).to_have_count(1)  # locked from the file's pick
    prefetch.focus()  # at once: the field on the screen is still the one the upload replaces
    page.keyboard.type("7")
    page.keyboard.press("Enter")
    expect(page.get_by_role("combobox", name="Scenario preset")).to_have_value(re.compile("^our-shop"))
    page.wait_for_selector("body:not([data-feedrate-loading]):not([data-feedrate-pending])", state="attached")
    _wait(page)
    assert prefetch.input_value() == str(shop.prefetch_factor)  # the file's value: nothing typed was kept
    assert "prefetch_factor=7" not in page.url
    prefetch.fill("5")
    prefetch.press("Enter")
    page.wait_for_function("() => new URLSearchParams(location.search).get('prefetch_factor') === '5'", timeout=120_000)
    batch = side.get_by_label(re.compile(r"^Batch size per GPU")).first
    batch.fill("16")
    batch.press("Enter")
    page.wait_for_function(
        "() => { const q = new URLSearchParams(location.search);"
        " return q.get('prefetch_factor') === '5' && q.get('batch_size') === '16'; }",
        timeout=120_000,
    )
    _wait(page)
    page.wait_for_selector("body:not([data-feedrate-pending])", state="attached")
    params = dict(parse_qsl(urlsplit(page.url).query))
    base = calc.scenario(params.pop("scenario"))
    held = calc.Scenario.from_params(params, base=base, source="link")
    assert held.name == "our-shop" and held.jobs == 10 and held.prefetch_factor == 5 and held.batch_size == 16
    assert prefetch.input_value() == "5" and batch.input_value() == "16"
    assert _metric(page, "Random reads/s") == calc.plan(held).formatted("read_iops").removesuffix(" reads/s")


AT_ONCE = ("beast-imagenet-4xv100", "llama3-8b-pretrain-8xh100", "mlperf-unet3d-h100")
RACE_RUNS = int(os.environ.get("FEEDRATE_RACE_RUNS", "1"))
"""Rounds of the three-people test (FEEDRATE_RACE_RUNS=20 for the issue's 20 runs in a row)."""


@pytest.mark.parametrize("round_", range(RACE_RUNS))
def test_three_people_open_three_links_and_click_at_once(server: str, browser: Browser, round_: int) -> None:
    """Three browsers (separate contexts: separate sessions) open three presets' links at once and click
    before the page has finished drawing; each page must still show its own scenario: its title, its
    picker, its link, its numbers, and no input reverted or emptied."""
    import calc

    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in AT_ONCE]
    try:
        pages = [c.new_page() for c in contexts]
        for page, name in zip(pages, AT_ONCE, strict=True):
            page.set_default_timeout(60_000)
            page.goto(f"{server}/?scenario={name}", wait_until="commit")
        # Click as soon as each page has its section selector, while the others are still loading.
        # bring_to_front: headless Chromium freezes a page whose window is behind the others (its
        # scripts stop, a click waits for ever); each person has their own browser in front.
        # e.click(): a person's click does not wait for the layout to settle, as Playwright's would.
        for target in (
            "[data-testid='stRadio'] >> text='Storage'",
            "[data-testid='stSidebar'] >> text='Data'",
            "[data-testid='stRadio'] >> text='Pipeline'",
        ):
            for page in pages:
                page.bring_to_front()
                page.locator(target).first.evaluate("e => e.click()")
        for page, name in zip(pages, AT_ONCE, strict=True):
            _wait(page)
            p = calc.plan(name)
            expect(page.locator("[data-testid='stMain'] h3").first).to_contain_text(p.title)
            expect(page).to_have_url(re.compile(rf"[?&]scenario={re.escape(name)}(&|$)"))
            assert "&" not in page.url.split("?", 1)[1], page.url  # no input departs from the preset
            expect(page.get_by_role("combobox", name="Scenario preset")).to_have_value(name)
            assert _metric(page, "Random reads/s") == p.formatted("read_iops").removesuffix(" reads/s")
            expect(page.get_by_text("Changed from the preset")).to_have_count(0)
            _no_errors(page)
    finally:
        for c in contexts:
            c.close()


def test_cluster_view_from_a_link(server: str, browser_page: Page) -> None:
    """The worked cluster (presets/clusters/lab-168-gpus.yaml) opened from a link: answer, jobs, day chart."""
    from urllib.parse import urlencode

    from calc.cluster_input import load

    c = load("lab-168-gpus")
    query = {"scenario": "llama3-8b-pretrain-8xh100", **{k: str(v) for k, v in c.shared.items()}, **c.to_params()}
    page = browser_page
    page.goto(f"{server}/?{urlencode(query)}")
    _wait(page, metrics=False)
    _no_errors(page)
    # issue 39: a cluster link reopens the Cluster view (main: Requirements), the cluster first
    expect(page.locator("[data-testid='stRadio'] [data-testid='stRadioOption'][data-selected='true']")).to_have_text(
        "Cluster"
    )
    expect(page.locator(".st-key-page_title")).to_contain_text("lab-168-gpus: 21 jobs of 6 types, 168 GPUs")
    expect(page.locator(".st-key-cluster_card")).to_contain_text("Budget $158,330 a month")
    page.get_by_text("Details: runners-up").first.click()
    expect(page.get_by_text("clip-vitl14-datacomp-webdataset-edited").first).to_be_visible()
    page.wait_for_selector(".js-plotly-plot")
    page.wait_for_timeout(800)
    out = ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    _save(page.locator(".js-plotly-plot").first.screenshot(style=NO_HEADER), out / "cluster-day.png")
    _save(page.screenshot(full_page=True), out / "cluster-view.png")


LAB = ROOT / "presets" / "clusters" / "lab-168-gpus.yaml"


def test_uploading_a_cluster_yaml_opens_the_cluster_view(server: str, browser_page: Page) -> None:
    """Issue 31: the lab cluster dropped on the uploader gave 7 errors of 1,700 characters, twice, that
    stayed after later good edits. Now it opens the Cluster view with its jobs and its shared store."""
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(server)
    _wait(page)
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(LAB))
    card = page.locator(".st-key-cluster_card")
    expect(card).to_contain_text("Budget $158,330 a month", timeout=60_000)
    _wait(page, metrics=False)
    _no_errors(page)
    expect(page).to_have_url(re.compile(r"cluster_shared=storage%3Daws-fsx-lustre-ssd-1000%7Cstorage_units%3D240"))
    # issue 39: the uploaded cluster's own first screen, unscrolled: its name, then its answer (one figure
    # to budget, the chargeback it splits); main kept the single job's screen, titled "...-cluster"
    expect(page.locator(".st-key-page_title")).to_contain_text("lab-168-gpus: 21 jobs of 6 types")
    expect(card).to_contain_text("Chargeback splits the $158,330 over the jobs")
    expect(page.locator("[data-testid='stMetric']")).to_have_count(0)  # not the single job's headline
    page.wait_for_selector(".js-plotly-plot")
    page.wait_for_timeout(800)
    top, bottom = card.evaluate(BOX)[1], card.evaluate(BOX)[3]
    assert top >= 0 and bottom <= 800, (top, bottom)
    _save(page.screenshot(), ROOT / "docs" / "screenshots" / "first-screen-cluster-1280.png")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.wait_for_timeout(800)
    _save(page.screenshot(), ROOT / "docs" / "screenshots" / "first-screen-cluster-1920.png")
    page.set_viewport_size({"width": 1600, "height": 1100})


def test_upload_errors_are_short_once_and_cleared_by_the_next_edit(
    server: str, browser_page: Page, tmp_path: Path
) -> None:
    page = browser_page
    page.goto(server)
    _wait(page)
    bad = tmp_path / "bad.yaml"
    bad.write_text("gpuu: V100\nstorage: fsx\n")
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(bad))
    side = page.locator("[data-testid='stSidebar'] [data-testid='stAlertContentError']")
    expect(side).to_have_count(2)
    for text in side.all_inner_texts():
        # the field, the accepted form, the closest names (not every one of 100 inputs or 36 options)
        assert len(text) < 300 and ("closest:" in text or "did you mean" in text), text
    expect(page.locator("[data-testid='stMain'] [data-testid='stAlertContentError']")).to_have_count(1)
    box = page.get_by_test_id("stSelectbox").filter(has_text="GPU").filter(has_not_text="GPUs").first
    box.click()
    page.keyboard.type("A100-SXM4-80")  # the list is virtual: filter it so the option is drawn
    page.get_by_role("option", name="A100-SXM4-80GB", exact=True).click()
    expect(page.locator("[data-testid='stAlertContentError']")).to_have_count(0)  # the next good edit clears them


OVERLAP = """plot => {
  const boxes = [];
  const pick = (sel, kind) => plot.querySelectorAll(sel).forEach(e => {
    const r = e.getBoundingClientRect();
    const t = e.textContent.trim();
    if (r.width > 0 && r.height > 0 && t) boxes.push([kind, t, r.left, r.top, r.right, r.bottom]);
  });
  pick('.gtitle', 'title'); pick('.g-xtitle text, .g-ytitle text, .g-x2title text, .g-y2title text', 'axis title');
  pick('.xtick text, .ytick text, .x2tick text, .y2tick text', 'tick'); pick('.annotation-text', 'label');
  pick('.legendtext', 'legend'); pick('.textpoint text', 'point label'); pick('.bartext', 'bar label');
  const out = [];
  const own = plot.getBoundingClientRect();  // a text reaching past the chart's box is cut off
  for (const b of boxes) if (b[3] < own.top - 1 || b[2] < own.left - 1 || b[4] > own.right + 1)
    out.push(b[0] + ' "' + b[1] + '" cut off at the edge of its chart');
  // drawn smaller than 10 px text (a box under 11 px high): Plotly shrank a short bar's label to 4 px
  for (const b of boxes) if (b[5] - b[3] < 11) out.push(b[0] + ' "' + b[1] + '" too small to read');
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a[0] === b[0] && (a[0] === 'tick' || a[0] === 'legend')) continue;
    const w = Math.min(a[4], b[4]) - Math.max(a[2], b[2]), h = Math.min(a[5], b[5]) - Math.max(a[3], b[3]);
    if (w > 2 && h > 2) out.push(a[0] + ' "' + a[1] + '" over ' + b[0] + ' "' + b[1] + '"');
  }
  return out;
}"""
"""Pairs of a chart's SVG texts whose boxes overlap by more than 2 px each way: titles, axis titles,
tick labels, annotations, legend entries, point labels (one another too: the storage map's numbers
overprinted at 1280 px, issue 39) and bar labels (a tick beside a tick is the axis's own); any of them
reaching past the top or the sides of the chart, where it is cut off (a two-line title began 9 px above
its chart); and any drawn smaller than 10 px."""


def _pinned(query: dict[str, str], *pins: dict[str, str]) -> str:
    """A link with pinned scenarios (``pins=``: each a scenario's link text, joined by ;)."""
    from urllib.parse import urlencode

    import calc

    texts = [urlencode(calc.scenario(q.pop("scenario"), **q).to_params()) for q in map(dict, pins)]
    return urlencode({**query, "pins": ";".join(texts)})


CHART_PAGES = (
    ("scenario=beast-imagenet-4xv100&site=aws", ("Requirements", "Storage", "Pipeline", "Moving the data", "Compare")),
    # issue 39: short bars beside long ones (19.5 against 5,885 samples/s) carried 4 px labels
    (
        _pinned(
            {"scenario": "beast-imagenet-4xv100", "site": "aws"}, {"scenario": "mlperf-unet3d-h100", "site": "on-prem"}
        ),
        ("Compare",),
    ),
    ("scenario=llama3-8b-pretrain-8xh100&site=aws", ("Checkpoints", "Storage")),
    ("scenario=mlperf-checkpoint-llama3-70b", ("Checkpoints",)),
)


@pytest.mark.parametrize("width", [1280, 1920])
def test_no_chart_text_overprints_another(server: str, browser_page: Page, width: int) -> None:
    """Issue 31: the checkpoint-interval title overprinted the "100" tick, the Compare title its panels'
    titles. Every chart of every section, both widths: no two texts overlap (their boxes in the browser)."""
    page = browser_page
    page.set_viewport_size({"width": width, "height": 1000})
    found = []
    for query, sections in CHART_PAGES:
        page.goto(f"{server}/?{query}")
        _wait(page)
        for section in sections:
            _section(page, section)
            if section == "Requirements":
                _open_folds(page)
            page.wait_for_selector(".js-plotly-plot")
            page.wait_for_timeout(800)
            # Every chart in one call: a chart redrawn between a count and an nth() would time out.
            per_chart = page.locator(".js-plotly-plot").evaluate_all(f"plots => plots.map({OVERLAP})")
            for i, overlaps in enumerate(per_chart):
                found += [f"{section} chart {i + 1}: {x}" for x in overlaps]
    page.set_viewport_size({"width": 1600, "height": 1100})
    assert not found, "\n".join(found)


# ------------------------------------------------------------------ issue 43: the page under load

LOAD_PEOPLE = int(os.environ.get("FEEDRATE_LOAD_PEOPLE", "10"))
LOAD_RUNS = int(os.environ.get("FEEDRATE_LOAD_RUNS", "1"))
"""People editing at once in the stress test, and its rounds (FEEDRATE_LOAD_RUNS=20: the issue's 20 in a row)."""
LOAD_ATTEMPTS = int(os.environ.get("FEEDRATE_LOAD_ATTEMPTS", "1"))
"""Crowds a round may run until one loses no edit (each losing crowd's edits are printed as a warning). Strict
by default: one crowd, every edit must reach the plan. Three causes of lost edits were fixed (issue 43: a
load replacing the field typed into, the pending fade never ending, a note redrawing the groups below it);
20 strict rounds in a row then passed, 2,200 edits, none lost (benchmarks/results/stress_test_20_rounds.txt)."""


def test_a_field_the_page_sets_shows_what_the_link_holds(server: str, browser_page: Page) -> None:
    """Issue 43: clearing the measured step time clears where it was measured; the page set those
    inputs and dropped their widgets' keys, but the browser kept drawing its own value: "Measured on
    GPU: V100-SXM2-16GB" beside a link with measured_gpu=none, sent back on the next edit. The field
    must show what the link holds, before and after the next edit."""
    page = browser_page
    page.goto(f"{server}/?scenario=beast-imagenet-4xv100")
    _wait(page)
    side = page.locator("[data-testid='stSidebar']")
    side.locator("[data-testid='stExpander'] summary", has_text="Measured").first.click()
    step = side.get_by_label(re.compile(r"^Measured step time")).first
    gpu = page.get_by_role("combobox", name=re.compile(r"^Measured on GPU"))
    expect(gpu).to_have_value("V100-SXM2-16GB")  # the article's measurement: 87 ms on a V100
    step.fill("")
    step.press("Enter")
    expect(page).to_have_url(re.compile(r"measured_gpu=none"))
    _wait(page)
    expect(gpu).to_have_value("(none)")
    side.locator("[data-testid='stExpander'] summary", has_text="Cluster").first.click()
    jobs = side.get_by_label(re.compile(r"^Concurrent jobs")).first
    jobs.fill("4")
    jobs.press("Enter")
    expect(page).to_have_url(re.compile(r"jobs=4"))
    _wait(page)
    assert "measured_gpu=none" in page.url  # not V100 again, sent back by the stale field
    expect(gpu).to_have_value("(none)")
    _no_errors(page)


STALE_WATCH = """() => {
  const t = window.__stale = {frames: [], enter: null};
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && t.enter === null) t.enter = performance.now();
  }, true);
  const tick = () => {
    const v = [...document.querySelectorAll("[data-testid='stMetric']")]
      .find(m => m.textContent.includes('Random reads/s'));
    if (v) {
      const value = v.querySelector("[data-testid='stMetricValue']");
      const box = v.closest("[data-testid='stElementContainer']");
      const app = document.querySelector("[data-testid='stApp']");
      let seen = 1;  // the opacity the value is drawn at: its own times every ancestor's
      for (let e = value; e; e = e.parentElement) seen *= parseFloat(getComputedStyle(e).opacity);
      t.frames.push([performance.now(), value.textContent.trim(), box && box.getAttribute('data-stale'),
                     seen, app.getAttribute('data-test-script-state')]);
    }
    if (t.frames.length < 20000) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""
"""Records, every frame, the headline's random reads/s, whether Streamlit marks it stale, how opaque it
is drawn and the script's state as the page knows it, and when Enter was pressed."""


def test_numbers_computed_without_an_edit_are_marked_until_it_reaches_them(server: str, browser_page: Page) -> None:
    """Issue 43: a field whose value has not reached the plan is never shown beside numbers computed
    without it. From the Enter that commits "Concurrent jobs = 4" until the rerun redraws the headline,
    every frame that still shows the old reads/s draws it faded (opacity under 0.5, its ancestors'
    included): while the edit travels to the server (app.PENDING_JS), then while Streamlit marks it
    stale. Before PENDING_JS, 5 frames (150 ms) after the key showed the old number unmarked."""
    import calc

    page = browser_page
    _, jobs = _sidebar_field(page, f"{server}/?scenario=beast-nfs-shop", "Cluster", r"^Concurrent jobs")
    old = _metric(page, "Random reads/s")
    new = calc.plan("beast-nfs-shop", jobs=4).formatted("read_iops").removesuffix(" reads/s")
    assert old == calc.plan("beast-nfs-shop").formatted("read_iops").removesuffix(" reads/s") != new
    page.evaluate(STALE_WATCH)
    jobs.fill("4")
    jobs.press("Enter")
    expect(page.locator("[data-testid='stMetric']", has_text="Random reads/s").first).to_contain_text(new)
    _wait(page)
    watch = page.evaluate("window.__stale")
    after = [f for f in watch["frames"] if f[0] > watch["enter"]]
    assert after and after[-1][1] == new
    unmarked = [f for f in after if f[1] == old and f[3] >= 0.5]
    assert not unmarked, unmarked[:5]


def test_an_edit_made_during_a_run_unfades_the_numbers_once_they_hold_it(server: str, browser_page: Page) -> None:
    """A number typed, then a box ticked while that edit's run is in flight: the tick joins the run on the
    server and the page's script state stays "running" across both. Once the page holds both, its numbers
    are not faded (app.run_mark: the watcher saw the new run; before it, they could stay faded for good).
    Both edits are kept: on a busy server the tick's message could still carry the picker under the key the
    number's run had replaced, and the preset was loaded again over both (app.is_drawn; the AppTest
    test_a_browser_message_holding_the_picker_an_edit_renamed_does_not_reload_the_preset sends that message)."""
    import calc

    page = browser_page
    side, workers = _sidebar_field(page, f"{server}/?scenario=beast-nfs-shop", "Loader", r"^DataLoader workers per GPU")
    pinned = side.locator("[data-testid='stCheckbox'] label", has_text="Pinned memory").first
    assert calc.scenario("beast-nfs-shop").pin_memory and calc.scenario("beast-nfs-shop").num_workers != 3
    workers.fill("3")
    workers.press("Enter")
    pinned.click()  # at once (a tick commits on the click): the first edit's run is in flight
    page.wait_for_function(
        "() => /[?&]num_workers=3/.test(location.search) && /[?&]pin_memory=false/.test(location.search)",
        timeout=120_000,  # two runs on a busy machine (load average 20: 14 s a run)
    )
    _wait(page)
    page.wait_for_selector("body:not([data-feedrate-pending])", state="attached", timeout=15_000)
    want = calc.plan("beast-nfs-shop", num_workers=3, pin_memory=False).formatted("read_iops").removesuffix(" reads/s")
    assert _metric(page, "Random reads/s") == want


class _HeldRuns:
    """A page's websocket with the server's messages held back on demand, so the page acts on what it showed
    before runs the server has already finished: the timing a busy server gives at random, made certain."""

    def __init__(self, page: Page) -> None:
        self.page, self.held, self.hold, self.route = page, [], False, None
        page.route_web_socket(re.compile(r"/_stcore/stream"), self._route)

    def _route(self, ws: Any) -> None:
        server = ws.connect_to_server()
        ws.on_message(server.send)
        server.on_message(lambda m: self.held.append(m) if self.hold else ws.send(m))
        self.route = ws

    def runs_finished(self) -> int:
        """How many finished runs the held messages report."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msgs = [ForwardMsg.FromString(m) for m in self.held if isinstance(m, bytes)]
        return sum(m.WhichOneof("type") == "script_finished" for m in msgs)

    def wait_finished(self, n: int, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while self.runs_finished() < n:
            assert time.monotonic() < deadline, f"the server finished {self.runs_finished()} runs of {n}"
            self.page.wait_for_timeout(100)

    def release(self) -> None:
        self.hold = False
        held, self.held = self.held, []
        for m in held:
            self.route.send(m)


def test_a_tick_sent_before_the_page_took_in_the_last_edits_run_keeps_both_edits(server: str, browser: Browser) -> None:
    """Issue 43's last lost edit, made certain: a number committed with Enter, its run finished on the server
    but not yet drawn in the browser (its messages held), then a box ticked. The tick's message still carries
    the preset picker under the key the number's run replaced (``preset_0``; the run drew ``preset_0_edited``
    for the "(edited)" entry); Streamlit called that key's on_change and the page loaded the preset again over
    both edits. Now only the key the last run drew counts (app.is_drawn): both edits reach the plan."""
    import calc

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        ws = _HeldRuns(page)
        link = f"{server}/?scenario=beast-nfs-shop"
        side, workers = _sidebar_field(page, link, "Loader", r"^DataLoader workers per GPU")
        pinned = side.locator("[data-testid='stCheckbox'] label", has_text="Pinned memory").first
        ws.hold = True
        workers.fill("3")
        workers.press("Enter")
        ws.wait_finished(1)  # the number's run is over on the server; the page still shows the preset's picker
        pinned.click()
        ws.wait_finished(2)  # and the tick's
        ws.release()
        page.wait_for_function(
            "() => /[?&]num_workers=3/.test(location.search) && /[?&]pin_memory=false/.test(location.search)",
            timeout=60_000,
        )
        _wait(page)
        assert workers.input_value() == "3" and not side.get_by_label("Pinned memory").first.is_checked()
        want = calc.plan("beast-nfs-shop", num_workers=3, pin_memory=False).formatted("worker_ram_bytes")
        assert _metric(page, "Loader RAM per GPU") == want  # 220.5 MiB; the preset: 1.15 GiB
    finally:
        context.close()


def test_text_typed_while_the_last_edits_run_is_drawn_stays(server: str, browser: Browser) -> None:
    """A person commits one field and types into the next while that edit's run redraws the sidebar: the
    text typed stays (and then reaches the plan). The first edit's run adds "Changed from the preset" above
    the groups; before the sidebar's fixed slots the groups after it were drawn anew and the typed "16"
    went back to 64 in about one try of six on an idle machine (issue 43's third race): four tries here."""
    import calc

    for _ in range(4):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            side, jobs = _sidebar_field(page, f"{server}/?scenario=beast-nfs-shop", "Cluster", r"^Concurrent jobs")
            batch = side.get_by_label(re.compile(r"^Batch size per GPU")).first
            jobs.fill("4")
            jobs.press("Enter")
            batch.fill("16")  # typed at once, not yet committed, while the run of jobs = 4 draws the page
            page.wait_for_function("() => /[?&]jobs=4/.test(location.search)", timeout=120_000)
            _wait(page)
            assert batch.input_value() == "16"
            assert batch.evaluate("e => document.activeElement === e")  # the same field, still being typed in
            batch.press("Enter")
            page.wait_for_function("() => /[?&]batch_size=16/.test(location.search)", timeout=120_000)
            _wait(page)
            want = calc.plan("beast-nfs-shop", jobs=4, batch_size=16).formatted("read_iops")
            assert _metric(page, "Random reads/s") == want.removesuffix(" reads/s")
        finally:
            page.close()


@pytest.mark.parametrize("round_", range(LOAD_RUNS))
def test_ten_people_edit_their_links_at_once(server: str, round_: int, tmp_path: Path) -> None:
    """Issue 43's stress test: LOAD_PEOPLE browser contexts (separate sessions), each on another preset's
    link, edit at once: numbers, text with units, a GPU from the list, the card's site, an uploaded YAML,
    a measured step time, two fields back to back. After every step each page must show what was typed,
    its link must hold it, every visible field must show what the link holds and the headline must equal
    calc.plan of the link (tests/dashboard_load.py). Every edit must reach the plan: none lost."""
    import asyncio
    import threading
    import warnings

    from dashboard_load import crowd, summary

    out: dict[str, Any] = {}

    def run(folder: Path) -> None:  # the async API in a thread of its own: this module's browser is the sync API's
        out["results"], out["wall"] = asyncio.run(crowd(server, LOAD_PEOPLE, folder))

    for attempt in range(1, LOAD_ATTEMPTS + 1):
        folder = tmp_path / f"crowd-{attempt}"
        folder.mkdir()
        worker = threading.Thread(target=run, args=(folder,))
        worker.start()
        worker.join()
        results = out["results"]
        problems = [f"{r.preset}: {m}" for r in results for m in r.lost]
        if not problems:
            break
        said = f"crowd {attempt} of {LOAD_ATTEMPTS} lost edits (issue 43): " + "; ".join(problems)
        warnings.warn(said, stacklevel=1)
    assert not problems, "\n".join(problems)
    assert summary(results, out["wall"])["applied_share"] == 1.0


def test_typed_text_is_echoed_as_typed(server: str, browser_page: Page) -> None:
    """Issue 39: "10**400" in a field came back as a bold "10400" in its error."""
    page = browser_page
    page.goto(f"{server}/?scenario=beast-imagenet-4xv100&jobs=10**400")
    _wait(page, metrics=False)
    expect(page.locator("[data-testid='stMain'] [data-testid='stAlertContentError']").first).to_contain_text("10**400")
