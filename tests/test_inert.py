"""Terms one scenario's inputs make inert are skipped (``calc.stages.SKIP_INERT``, issue 41 item 6): a plan
with the skip gives every output, source and warning the full formulas give, bit for bit (float.hex, the
sign of a zero included), on every preset and the peer benchmark's transformers, saving or not."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import calc
from calc import stages
from calc.plan import _plan
from calc.resolve import resolve

_PEER = Path(__file__).resolve().parent.parent / "benchmarks" / "peer_timing.py"


def _peer_scenarios() -> list[calc.Scenario]:
    spec = importlib.util.spec_from_file_location("peer_timing", _PEER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [calc.Scenario(**mod.COMMON_CALC, **kw) for _, kw, _ in mod.CONFIGS]


def _scenarios() -> list[calc.Scenario]:
    """Every preset and the peer's three, each also saving at the optimal interval and saving nothing."""
    out = []
    for sc in [calc.scenario(n) for n in calc.scenarios()] + _peer_scenarios():
        out.append(sc)
        out += [sc.replace(checkpoint_interval_s=interval) for interval in ("optimal", None)]
    return out


def _snapshot(sc: calc.Scenario) -> Any:
    try:
        p = _plan.__wrapped__(sc)
    except Exception as e:  # an error must be the same error either way
        return repr(e)
    return (
        {k: float(v).hex() for k, v in p.values.items()},
        dict(p.sources),
        p.warnings,
        p.step_method,
        p.bottleneck,
        {k: float(v).hex() for k, v in p.stages.items()},
    )


def test_skipping_inert_terms_changes_no_output(monkeypatch: pytest.MonkeyPatch) -> None:
    scenarios = _scenarios()
    taken: dict[str, int] = {"_no_saves": 0, "_no_experts": 0, "_no_image": 0}
    full_no_saves, no_experts, no_image = stages._no_saves, stages._no_experts, stages._no_image

    def counted_saves(x: Any, out: Any) -> None:
        taken["_no_saves"] += 1
        full_no_saves(x, out)

    def counted(name: str, test: Any) -> Any:
        def check(x: Any) -> bool:
            got = bool(test(x))
            taken[name] += got
            return got

        return check

    monkeypatch.setattr(stages, "_no_saves", counted_saves)
    monkeypatch.setattr(stages, "_no_experts", counted("_no_experts", no_experts))
    monkeypatch.setattr(stages, "_no_image", counted("_no_image", no_image))
    with_skip = [_snapshot(sc) for sc in scenarios]
    monkeypatch.setattr(stages, "SKIP_INERT", False)
    n = dict(taken)
    without = [_snapshot(sc) for sc in scenarios]
    assert taken == n  # off means off
    for name, count in n.items():  # each skip was taken, and not everywhere
        assert count >= 20, name
        assert count < len(scenarios) * (2 if name == "_no_experts" else 1), name  # twice a plan: state, traffic
    for sc, a, b in zip(scenarios, with_skip, without, strict=True):
        assert a == b, sc.name


def test_the_peer_transformers_take_the_skips() -> None:
    # The dense LLMs of benchmarks/peer_timing.py (no image resolution, no experts, nothing saved): each skip
    # is taken, and every output is the full formulas' (the test above, on these three among the rest).
    for sc in _peer_scenarios():
        x = resolve(sc).values
        assert stages._no_experts(x) and stages._no_image(x), sc.name


def test_a_plan_that_saves_nothing_has_no_save_terms() -> None:
    p = calc.plan("llama3-8b-pretrain-8xh100", checkpoint_interval_s=None)
    assert p.checkpoint_interval_used_s == 0.0 and p.checkpoint_bytes > 0  # sized, never written
    for k in (
        "checkpoint_write_bytes_per_s",
        "checkpoint_sync_write_bytes_per_s",
        "checkpoint_async_write_bytes_per_s",
        "checkpoint_host_ram_bytes",
        "checkpoint_blocking_s",
        "checkpoint_stall_share",
        "checkpoint_lag_s",
        "checkpoint_lost_per_failure_s",
        "goodput",
    ):
        assert p.values[k] == 0.0 and str(p.values[k]) == "0.0", k  # +0, as where(saving, ..., 0.0) gives


def test_bad_outputs_quick_check_finds_what_the_rule_per_output_finds() -> None:
    # calc.plan._bad_outputs skips the check per output where sums and minima prove none fails it; each
    # kind of failure, in a limited output and in an unlimited one, must still come back, in OUTPUTS' order.
    import math

    from calc.plan import _bad_outputs
    from calc.registry import OUTPUTS
    from calc.stages import UNLIMITED

    base = calc.plan("llama3-8b-pretrain-8xh100").values
    good = {k: base[k] for k in OUTPUTS}
    assert _bad_outputs(good) == []
    limited = next(k for k in OUTPUTS if k not in UNLIMITED)
    unlimited = UNLIMITED[0]
    assert _bad_outputs({**good, unlimited: math.inf}) == []  # nothing limits it: allowed
    for key, value, bad in (
        (limited, math.nan, [limited]),
        (limited, -1.0, [limited]),
        (limited, math.inf, [limited]),
        (limited, -0.0, []),  # a zero, whatever its sign
        (unlimited, math.nan, [unlimited]),
        (unlimited, -math.inf, [unlimited]),
        (unlimited, -1e-300, [unlimited]),
    ):
        assert _bad_outputs({**good, key: value}) == bad, (key, value)
    # NaN first or last among the limited ones: min() alone would miss one of them (it compares with <).
    first, last = next(iter(OUTPUTS)), [k for k in OUTPUTS if k not in UNLIMITED][-1]
    assert _bad_outputs({**good, first: math.nan, last: math.nan}) == [first, last]
    # inf and -inf that sum to NaN, and a NaN hidden by a sum that overflows: still found
    both = {**good, unlimited: math.inf, UNLIMITED[1]: -math.inf}
    assert _bad_outputs(both) == [UNLIMITED[1]]
    big = {**good, limited: 1e308, last: 1e308}
    assert _bad_outputs(big) == []


def test_a_plan_keeps_every_number_evaluate_gives_but_its_states() -> None:
    # calc.plan._plan reads the kept values and the three states in one pass (issue 41 item 6): evaluate must
    # give nothing else, or a number a warning reads would be missing from the Plan's values.
    from calc.plan import _KEPT
    from calc.stages import STATES, evaluate

    for sc in [calc.scenario(n) for n in calc.scenarios()] + _peer_scenarios():
        out = evaluate(resolve(sc).values)
        assert set(out) == set(_KEPT) | set(STATES), sc.name
        assert not set(_KEPT) & set(STATES)
