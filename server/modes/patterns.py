"""User regexes (a mode's fileRegex) that cannot hang the server.

RE2 matches in linear time; a pattern RE2 cannot express (lookaround, backreferences) runs on
the `regex` module with a time bound instead. A pattern that times out does not match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import re2
import regex

MATCH_TIMEOUT_S = 0.05

_QUIET = re2.Options()
_QUIET.log_errors = False


class PatternError(ValueError):
    """The pattern does not compile; the message says why."""


@dataclass(frozen=True)
class Pattern:
    source: str
    _compiled: Any
    linear: bool

    @classmethod
    def compile(cls, source: str) -> "Pattern":
        try:
            return cls(source, re2.compile(source, _QUIET), True)
        except re2.error:
            pass
        try:
            return cls(source, regex.compile(source), False)
        except regex.error as exc:
            raise PatternError(f"invalid regular expression {source!r}: {exc}") from None

    def search(self, text: str) -> bool:
        """True when the pattern occurs in text; a match that runs out of time is False."""
        if self.linear:
            return self._compiled.search(text) is not None
        try:
            return self._compiled.search(text, timeout=MATCH_TIMEOUT_S) is not None
        except TimeoutError:
            return False
