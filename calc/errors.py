"""Errors raised on bad input. Every one names the field and what is accepted."""

from __future__ import annotations


class InputError(ValueError):
    """An input is missing, malformed or out of range.

    ``field`` names the input (a Scenario field, a preset entry or a YAML key) so that a
    dashboard can show the message next to it.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = _capped(field, MAX_FIELD_CHARS)
        self.message = _capped(message, MAX_MESSAGE_CHARS)
        super().__init__(f"{self.field}: {self.message}")


MAX_MESSAGE_CHARS = 2000
"""Longest error message kept [characters]: a message quotes the value it refuses, and a value
can be huge (a 264-byte YAML alias bomb expands to a list whose repr is 4.3 MB)."""

MAX_FIELD_CHARS = 200
"""Longest field name kept [characters] (an unknown YAML key is quoted as the field)."""


def _capped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut; lone surrogates escaped so
    that the message can always be printed and written as UTF-8."""
    text = str(text)
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit:,} more characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class UnitError(InputError):
    """A quantity has an unknown, ambiguous or wrong-kind unit."""


class PresetError(InputError):
    """A preset is unknown or a preset file is malformed."""


class DoesNotFitError(InputError):
    """The model does not fit in GPU memory even at batch size 1."""
