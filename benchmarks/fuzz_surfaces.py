"""Generated-input run over the surfaces issue 32 hardened, outside the test suite.

    python benchmarks/fuzz_surfaces.py                 # the full run (>= 100,000 cases)
    python benchmarks/fuzz_surfaces.py --scale 0.01    # a quick look
    python benchmarks/fuzz_surfaces.py --only sweep    # one surface

Each surface is a strategy and a check in tests/surfaces.py (the in-suite property tests run
the same checks on a few dozen cases each). Every case runs with NumPy's RuntimeWarning as an
error, so an overflow or invalid value escaping a plan fails the case. Prints the cases run
per surface and the first failure of each (Hypothesis shrinks it); exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import surfaces

SURFACES: dict[str, tuple[Callable[[], st.SearchStrategy[Any]], Callable[[Any], None], int]] = {
    # name: (strategy, check, cases in the full run)
    "sweep = plan": (surfaces.sweep_cases, surfaces.check_sweep, 10_000),
    "scenario round trips (YAML, link, CLI)": (surfaces.any_scenarios, surfaces.check_round_trips, 30_000),
    "plan of any scenario (finite, warnings)": (surfaces.any_scenarios, surfaces.check_plan, 30_000),
    "cluster round trips (YAML, link)": (surfaces.clusters, surfaces.check_cluster_round_trips, 15_000),
    "cluster junk (counts, options, shared, YAML, CLI)": (surfaces.cluster_junk, surfaces.check_cluster_junk, 20_000),
}


def run(name: str, strategy: Callable[[], st.SearchStrategy[Any]], check: Callable[[Any], None], n: int) -> bool:
    count = [0]
    t0 = time.perf_counter()

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.shrink],
    )
    @given(strategy())
    def case(x: Any) -> None:
        count[0] += 1
        if count[0] % 1000 == 0:  # progress, so that a run cut short still says how far it got
            print(f"  {name}: {count[0]:,} cases, {time.perf_counter() - t0:.0f} s", flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            check(x)

    try:
        case()
        ok = True
    except Exception as e:  # the shrunk failing case: report it and go on to the next surface
        print(f"  FAILED: {type(e).__name__}: {str(e)[:2000]}")
        ok = False
    print(f"{name:<52} {count[0]:>8,} cases  {time.perf_counter() - t0:7.1f} s  {'clean' if ok else 'FAILED'}")
    sys.stdout.flush()
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the full run's cases")
    ap.add_argument("--only", default="", help="run the surfaces whose name contains this")
    args = ap.parse_args()
    ok = True
    for name, (strategy, check, n) in SURFACES.items():
        if args.only in name:
            ok = run(name, strategy, check, max(int(n * args.scale), 1)) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
