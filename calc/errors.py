"""Errors raised on bad input. Every one names the field and what is accepted."""

from __future__ import annotations


class InputError(ValueError):
    """An input is missing, malformed or out of range.

    ``field`` names the input (a Scenario field, a preset entry or a YAML key) so that a
    dashboard can show the message next to it.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class UnitError(InputError):
    """A quantity has an unknown, ambiguous or wrong-kind unit."""


class PresetError(InputError):
    """A preset is unknown or a preset file is malformed."""


class DoesNotFitError(InputError):
    """The model does not fit in GPU memory even at batch size 1."""
