"""How long one plan takes: cached by scenario, and computed from scratch.

    python benchmarks/plan_timing.py

Target: ``calc.plan("preset")`` under 0.2 ms (presets are read once per process and plans are
kept per scenario); a plan from scratch well under a millisecond, a transformer's by its
architecture (more formulas) included. Measured 2026-11-25 on 2 shared cores: 0.37-0.39 ms
(resolve 0.06, evaluate 0.23), an LLM's 0.53-0.57 ms; 0.81-0.87 ms and 1.5-1.6 ms before
one scenario's numbers were kept NumPy scalars (README, Benchmarks).
"""

from __future__ import annotations

import timeit

import calc
from calc.plan import _plan
from calc.resolve import resolve
from calc.stages import evaluate


def main() -> None:
    name = "beast-imagenet-4xv100"
    calc.plan(name)  # warm: presets read, calibration fitted
    sc = calc.scenario(name)
    n = 2000
    cached = min(timeit.repeat(lambda: calc.plan(name), number=n, repeat=5)) / n
    scratch = min(timeit.repeat(lambda: _plan.__wrapped__(sc), number=200, repeat=5)) / 200
    res = min(timeit.repeat(lambda: resolve(sc), number=200, repeat=5)) / 200
    x = resolve(sc).values
    ev = min(timeit.repeat(lambda: evaluate(x), number=200, repeat=5)) / 200
    print(f'calc.plan("{name}") again: {cached * 1e6:.1f} us (target 200 us: {"met" if cached < 2e-4 else "MISSED"})')
    print(f"a plan from scratch: {scratch * 1e6:.0f} us (resolve {res * 1e6:.0f} us, evaluate {ev * 1e6:.0f} us)")
    llm = calc.scenario("llama3-8b-pretrain-8xh100")
    _plan.__wrapped__(llm)
    t_llm = min(timeit.repeat(lambda: _plan.__wrapped__(llm), number=200, repeat=5)) / 200
    print(f"an LLM's from scratch (llama3-8b-pretrain-8xh100): {t_llm * 1e6:.0f} us")


if __name__ == "__main__":
    main()
