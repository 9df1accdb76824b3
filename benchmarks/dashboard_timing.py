"""Dashboard speed: first render after the server starts, and a re-render after an input change.

    python benchmarks/dashboard_timing.py

Targets: the headline numbers are visible within 2 s of opening the page, median of 5 loads on a
warm server, in headless Chromium (issue 10); the server's first script run within 3 s of its start
(issue 4); an input change re-renders within 300 ms on the server.

* Page loads: spawn ``streamlit run app.py``, open the page in headless Chromium (Debian's
  /usr/bin/chromium), each load in a fresh browser context (an empty cache, as a colleague opening a
  shared link). Three times per load, from the page's navigation start:
  - painted: the headline metric enters the page and a frame containing it is drawn (a
    MutationObserver in the page, then two animation frames). This is when a viewer sees it.
  - Playwright: when ``wait_for_selector`` returns. Later than painted whenever the page's main
    thread is busy drawing what follows the headline (charts), because Playwright's own check
    runs on that thread and waits for it.
  - charts drawn: the first Plotly chart is in the page.
  Each load starts SETTLE_S after the previous one finished drawing. The first load after the
  server starts is reported apart (cold server).
* Re-render: Streamlit's AppTest runs the script in-process exactly as the server does; the
  time of ``.run()`` after changing the GPU, median and worst of 20 changes.
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

SERVER_START_S = 0.0
GPUS = ["A100-SXM4-80GB", "H100-SXM", "V100-SXM2-16GB", "L40S", "T4"]


SETTLE_S = 3.0
"""Pause before each load: the previous page may still be drawing its charts, and on this 2-core
machine that work (not the page under test) decided whether a load took 1.5 s or 4 s."""
HEADLINE = "[data-testid='stMetricValue']"
WATCH = """
window.__feedrate = {};
new MutationObserver(() => {
  const t = window.__feedrate;
  if (!t.headline && document.querySelector("HEADLINE")) {
    t.headline = performance.now();
    requestAnimationFrame(() => requestAnimationFrame(() => { t.painted = performance.now(); }));
  }
  if (!t.chart && document.querySelector(".js-plotly-plot")) t.chart = performance.now();
}).observe(document, {subtree: true, childList: true});
""".replace("HEADLINE", HEADLINE)
"""Runs in the page before its own scripts: records when the headline enters it and is painted."""


def load_times(browser: Any, url: str) -> tuple[float, float, float]:
    """One page load in a fresh context: (painted, Playwright, charts drawn), seconds from navigation."""
    page = browser.new_page()
    page.add_init_script(WATCH)
    page.goto(url)
    page.wait_for_selector(HEADLINE)
    waited = page.evaluate("performance.now()") / 1e3
    page.wait_for_function("window.__feedrate.painted && window.__feedrate.chart", timeout=60_000)
    t = page.evaluate("window.__feedrate")
    page.close()
    return t["painted"] / 1e3, waited, t["chart"] / 1e3


def first_render() -> tuple[float, float]:
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spawned = time.perf_counter()
    global SERVER_START_S
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.02)
        listening = time.perf_counter()
        SERVER_START_S = listening - spawned
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)  # as the browser tests
            url = f"http://127.0.0.1:{port}"
            painted, _, _ = load_times(browser, url)
            first = (painted, time.perf_counter() - spawned)
            loads = []
            for _ in range(5):  # later visitors: the server is warm
                time.sleep(SETTLE_S)
                loads.append(load_times(browser, url))
            browser.close()
        painted_s, waited_s, charts_s = (statistics.median(x) for x in zip(*loads, strict=True))
        print(
            "5 page loads on a warm server, medians from navigation start: "
            f"headline painted {painted_s:.2f} s (target 2 s: {'met' if painted_s < 2 else 'MISSED'}; "
            f"each: {', '.join(f'{x[0]:.2f}' for x in loads)}), "
            f"Playwright's wait {waited_s:.2f} s, charts drawn {charts_s:.2f} s"
        )
        return first
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def cold_script_run() -> float:
    """The first script run of a fresh Python process (imports included), as a new server does it."""
    code = (
        "import time; from streamlit.testing.v1 import AppTest; "
        f"at = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=60); "
        "t = time.perf_counter(); at.run(); print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def rerender() -> tuple[float, float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["page_drawn"] = True  # a re-render draws the whole page, sections included
    at.run()
    times = []
    for i in range(20):
        at.selectbox(key="f_gpu").set_value(GPUS[i % len(GPUS)])
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
        assert not at.exception
    return statistics.median(times), max(times)


def main() -> None:
    from_port, from_spawn = first_render()
    cold = cold_script_run()
    server_side = SERVER_START_S + cold
    median, worst = rerender()
    print(
        f"server side: {SERVER_START_S:.2f} s until the port answers + {cold:.2f} s for the first script run "
        f"(imports included) = {server_side:.2f} s (target 3 s: {'met' if server_side < 3 else 'MISSED'})"
    )
    print(
        f"first page load on a cold server: headline painted {from_port:.2f} s after opening the page, "
        f"{from_spawn:.2f} s after spawning the server"
    )
    print(
        f"re-render after an input change: median {median * 1e3:.0f} ms, worst {worst * 1e3:.0f} ms of 20 "
        f"(target 300 ms: {'met' if median < 0.3 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
