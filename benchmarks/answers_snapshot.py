"""Dump every answer the sizing gives, for a before/after comparison of a refactor (issue 27).

For every scenario preset x site (None, on-prem, aws, gcp, azure): recommend(), designs(),
answer().lines() and .charges, max_gpus() for the answer's option; for every cluster preset:
the cluster plan's totals and table, the cluster answer's lines, recommendation, jobs, growth and
the day timeline. Run before and after a change and diff the two files::

    .venv/bin/python benchmarks/answers_snapshot.py /tmp/snap-before.json
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

# This checkout's calc, not the one the shared virtualenv installs (run from any directory).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import calc

cl = importlib.import_module("calc.cluster")
ci = importlib.import_module("calc.cluster_input")

SITES = (None, "on-prem", "aws", "gcp", "azure")


def plain(x: Any) -> Any:
    """JSON-safe, with floats written by repr (every bit compared)."""
    if isinstance(x, pd.DataFrame):
        return {
            "columns": [str(c) for c in x.columns],
            "rows": [[plain(v) for v in r] for r in x.itertuples(index=False)],
        }
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [plain(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, str):
        x = x.item()
    if isinstance(x, float):
        return repr(x) if not math.isfinite(x) else x
    if isinstance(x, int | str | bool) or x is None:
        return x
    return repr(x)


def job(name: str, site: str | None) -> dict[str, Any]:
    try:
        sc = calc.scenario(name).replace(site=site) if site else calc.scenario(name)
        p = calc.plan(sc)
        a = calc.answer(p)
        out: dict[str, Any] = {
            "recommend": plain(calc.recommend(p)),
            "designs": plain(calc.designs(p)),
            "lines": a.lines(),
            "charges": plain(a.charges),
            "feeds": a.feeds_gpus,
        }
        if site is None:
            out["levers"] = plain(calc.levers(p))
            out["storage_levers"] = plain(calc.storage_levers(p))
        return out
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


def clusters() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ci.clusters():
        try:
            cp = calc.cluster(ci.load(name))
            a = cl.cluster_answer(cp)
            out[name] = {
                "totals": plain(cp.totals()),
                "frame": plain(cp.to_frame()),
                "explain": cp.explain(),
                "lines": a.lines(),
                "recommendation": plain(a.recommendation),
                "jobs": plain(a.jobs),
                "growth": plain(dict(a.growth)),
                "timeline": plain(importlib.import_module("calc.cluster_load").timeline(cp)),
            }
        except Exception as e:
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    return out


def main(path: str) -> None:
    data = {"jobs": {f"{n}@{s}": job(n, s) for n in calc.scenarios() for s in SITES}, "clusters": clusters()}
    with open(path, "w") as f:
        json.dump(data, f, indent=0, sort_keys=True)


def diff(a_path: str, b_path: str) -> None:
    """Print each top-level entry whose dump differs, and its first differing keys."""
    a, b = (json.loads(Path(p).read_text()) for p in (a_path, b_path))
    for group in ("jobs", "clusters"):
        for key in sorted(set(a[group]) | set(b[group])):
            x, y = a[group].get(key), b[group].get(key)
            if x != y:
                parts = sorted(k for k in set(x or {}) | set(y or {}) if (x or {}).get(k) != (y or {}).get(k))
                print(f"{group} {key}: {parts}")


if __name__ == "__main__":
    if sys.argv[1] == "--diff":
        diff(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1])
