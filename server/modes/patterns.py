"""User regexes (a mode's fileRegex) that cannot hang the server.

RE2 matches in linear time; a pattern RE2 cannot express (lookaround, backreferences) runs on
the `regex` module with a time bound instead. A pattern that times out does not match.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

MATCH_TIMEOUT_S = 0.05


class PatternError(ValueError):
    """The pattern does not compile; the message says why."""


class Pattern:
    """A user's regex. `Pattern.compile` checks it at once; a built-in one is compiled on first use."""

    def __init__(self, source: str):
        self.source = source

    @classmethod
    def compile(cls, source: str) -> "Pattern":
        pattern = cls(source)
        pattern._engine  # noqa: B018 - compiled now: a bad pattern is a load error
        return pattern

    @cached_property
    def _engine(self) -> tuple[Any, bool]:
        """(compiled pattern, whether it runs in linear time)."""
        import re2

        options = re2.Options()
        options.log_errors = False
        try:
            return re2.compile(self.source, options), True
        except re2.error:
            pass
        import regex  # the fallback engine, loaded when a pattern needs it

        try:
            return regex.compile(self.source), False
        except regex.error as exc:
            raise PatternError(f"invalid regular expression {self.source!r}: {exc}") from None

    @property
    def linear(self) -> bool:
        return self._engine[1]

    def search(self, text: str) -> bool:
        """True when the pattern occurs in text; a match that runs out of time is False."""
        compiled, linear = self._engine
        if linear:
            return compiled.search(text) is not None
        try:
            return compiled.search(text, timeout=MATCH_TIMEOUT_S) is not None
        except TimeoutError:
            return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pattern) and other.source == self.source

    def __hash__(self) -> int:
        return hash(self.source)

    def __repr__(self) -> str:
        return f"Pattern({self.source!r})"
