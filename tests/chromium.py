"""Debian's Chromium for the browser tests and benchmarks/dashboard_timing.py: one path, one set of flags."""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
"""Debian's package (``apt-get install chromium``); Playwright cannot download its own browser here."""

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
"""Without these Chromium tries the closed network (updates, sync) and a GPU this machine lacks."""
