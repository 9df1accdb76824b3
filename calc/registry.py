"""The output registry: every number a Plan reports, declared once on the stage that computes it.

A stage function of ``calc.plan`` is decorated with ``@stage(Output(...), ...)``: the
declaration carries the output's name, unit kind, label and display rules (percent, may be
unlimited, zero when no step runs, the words for a 0 that means "not asked for"). Everything
else is derived from it: ``OUTPUTS`` and its order (the stages' order), the Plan's attributes,
the tables, ``explain()``, the dashboard's labels and the sweep's columns. The formula text
sits either on the pure function that computes the output (``@formula`` in its module) or,
for a pass-through or a rule, in the declaration's ``formula``; exactly one of the two.

Adding an output therefore touches one declaration and its formula.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from calc.formula import FORMULAS
from calc.units import Kind

F = TypeVar("F", bound=Callable[..., None])


@dataclass(frozen=True)
class Output:
    """How one result is named, labelled, formatted and guarded (declared on its stage)."""

    name: str
    kind: Kind
    label: str
    unit: str = ""
    binary: bool = False
    formula: str = ""
    """Formula text with ``{placeholders}``; empty when ``@formula`` on the computing function gives it."""
    percent: bool = False
    """A fraction shown as a percentage."""
    digits: int = 1
    """Decimals of a percentage."""
    unlimited: bool = False
    """Infinite when nothing limits it (no storage option, no node link): shown as "unlimited"."""
    zero_without_step: bool = False
    """A rate that is 0 where the model does not fit (no step runs)."""
    not_given: str = ""
    """The words shown for a 0 that means "not asked for" (instead of the number)."""
    integer: bool = False
    """A whole number (batch sizes): the Plan attribute is an ``int``."""
    words: tuple[str, str] = ("", "")
    """A 0/1 flag shown as words (for 0, for 1), e.g. ("no", "yes"); empty: a number."""


OUTPUTS: dict[str, Output] = {}
"""Every output, in the order of the stages that compute them (tables, explain, sweeps)."""

KEPT: list[str] = []
"""Intermediate values a Plan keeps beside its outputs (for explain and sizing), by stage."""

STATES: dict[str, tuple[str, ...]] = {}
"""Coded values a stage writes beside its outputs, each with the words of its codes (0, 1, ...):
``fits`` (the model fits in GPU memory), ``step_method`` (how the step time was found) and
``bottleneck`` (the pipeline stage that binds). Plans and sweeps read the words from here."""

STEPS: list[Callable[..., None]] = []
"""The stage functions of ``evaluate``, in order of declaration."""

BY_STAGE: dict[str, tuple[str, ...]] = {}
"""The outputs each stage function declares, by the function's name."""


def stage(
    *outputs: Output, keep: Iterable[str] = (), states: Mapping[str, tuple[str, ...]] | None = None
) -> Callable[[F], F]:
    """Declare the outputs a stage function computes, the intermediates it keeps and the coded
    values (``states``: name -> the words of its codes) it writes."""

    def register(fn: F) -> F:
        for name, words in (states or {}).items():
            if name in STATES or name in OUTPUTS:
                raise ValueError(f"state {name!r} declared twice")
            STATES[name] = tuple(words)
        for o in outputs:
            if o.name in OUTPUTS:
                raise ValueError(f"output {o.name!r} declared twice")
            if o.formula:
                if o.name in FORMULAS:
                    raise ValueError(f"formula of {o.name!r} given both by @formula and by its declaration")
                FORMULAS[o.name] = o.formula
            OUTPUTS[o.name] = o
        KEPT.extend(keep)
        STEPS.append(fn)
        BY_STAGE[fn.__name__] = tuple(o.name for o in outputs)
        return fn

    return register


def check() -> None:
    """Every output has exactly one formula text; every formula names an output or a kept value."""
    missing = [k for k in OUTPUTS if k not in FORMULAS]
    orphans = [k for k in FORMULAS if k not in OUTPUTS and k not in KEPT]
    if missing or orphans:
        raise ValueError(f"outputs without a formula: {missing}; formulas without an output: {orphans}")
