"""The rate the dashboard holds: N people editing their links at once, every edit checked.

    python benchmarks/dashboard_load.py                 # N = 1, 5, 15
    python benchmarks/dashboard_load.py --people 1 10   # other crowds
    python benchmarks/dashboard_load.py --app ../old    # another checkout's app.py (before and after)

Spawns ``streamlit run app.py`` and, for each N, drives N headless Chromium contexts (separate
sessions) at once, each on another preset's link, through the edits of ``tests/dashboard_load.py``
(a number and a box ticked at once, numbers, text with units, a GPU, the card's site, an uploaded YAML,
a measured step time, two fields back to back). After every step each page is checked: the field, the
link, every visible field and the headline against ``calc.plan`` of the link. Reports, per N:

- edits served per second (all people together, wall clock of the whole crowd),
- the share of edits that reached the plan and the page (must be 100 %),
- the median time from an edit's commit to its page's link holding it (the run that drew the new
  headline set it), and that time as a ratio to one person's (N = 1) on the same server.

Ratios, not seconds, are the result: the machine's cores are shared. A fresh server per N, warmed by
one page load, so every N starts from the same state.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
from dashboard_load import crowd, summary  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(app: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(app / "app.py"), "--server.port", str(port)]
    cmd += ["--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    cmd += ["--server.fileWatcherType", "none", "--global.developmentMode", "false"]
    proc = subprocess.Popen(cmd, cwd=app, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.monotonic()
    while time.monotonic() - started < 60:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError("streamlit did not start within 60 s")


def one_crowd(n: int, app: Path) -> dict[str, float]:
    proc, url = serve(app)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(crowd(url, 1, Path(tmp), steps=()))  # warm: one page load (imports, caches)
            results, wall = asyncio.run(crowd(url, n, Path(tmp)))
        for r in results:
            for problem in r.lost:
                print(f"  N={n} {r.preset}: {problem}")
        return summary(results, wall)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--people", type=int, nargs="+", default=[1, 5, 15])
    ap.add_argument("--app", type=Path, default=ROOT, help="the checkout whose app.py is served (default: this one)")
    args = ap.parse_args()
    rows = {n: one_crowd(n, args.app.resolve()) for n in args.people}
    one = rows[min(rows)]["median_served_s"]
    head = f"served (ratio to {min(rows)})"
    print(f"{'people':>6}  {'edits':>5}  {'applied':>7}  {'edits/s':>7}  {head:>22}")
    for n, r in rows.items():
        ratio = r["median_served_s"] / one if one else float("nan")
        print(f"{n:>6}  {int(r['edits']):>5}  {r['applied_share']:>7.0%}  {r['edits_per_s']:>7.2f}  {ratio:>22.2f}x")
    print(json.dumps({str(n): r for n, r in rows.items()}))


if __name__ == "__main__":
    main()
