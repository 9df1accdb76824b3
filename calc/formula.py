"""The text of each formula, registered next to the function that computes it.

``explain()``, ``to_frame()`` and the dashboard's formula table read ``FORMULAS``; because the
text sits on the function (``@formula("read_iops", "...")``), it cannot drift from the code
without the diff showing both. Placeholders in braces are outputs or inputs, filled with the
plan's numbers by ``calc.explain.render_formula``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

FORMULAS: dict[str, str] = {}
"""Output name -> formula text (placeholders in braces)."""


def formula(output: str, text: str) -> Callable[[F], F]:
    """Register ``text`` as the formula of ``output``; the decorated function computes it."""

    def register(fn: F) -> F:
        if output in FORMULAS and FORMULAS[output] != text:
            raise ValueError(f"formula for {output!r} registered twice")
        FORMULAS[output] = text
        return fn

    return register


def note(output: str, text: str) -> None:
    """Register the formula of an output that is a pass-through or a rule, not a function."""
    FORMULAS[output] = text
