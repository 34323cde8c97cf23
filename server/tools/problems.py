"""The problems an edit caused, as the editor's language servers see them.

Before an edit the editor is asked what it knows of the files (`modus/client/diagnostics`);
after it, once the language servers have had `diagnostics.delayMs` to look again, it is asked
again. What is new is what the tool's result tells the model. A problem is the same problem
when its severity, message, source and code are: one that only moved with the lines around it
is not new. An editor that cannot say costs nothing; one that errs or keeps silent, at most the
delay.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from pathlib import Path

    from protocol import Diagnostic, DiagnosticsSettings

    from ..host import Host
    from ..workspace import WorkspacePath

HEADER = "New problems after this edit:"
SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}
#: The least an answer is waited for, whatever the delay (0 included).
MIN_WAIT_S = 0.2


def _severity(d: Diagnostic) -> int:
    return d.severity or 1  # left out: an error, as editors show it


def _key(d: Diagnostic) -> tuple:
    return (_severity(d), d.message, d.source, d.code)


def new_problems(before: Sequence[Diagnostic], after: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The problems of `after` that `before` has no match for (each match used once)."""
    left = Counter(_key(d) for d in before)
    new = []
    for d in after:
        if left[_key(d)]:
            left[_key(d)] -= 1
        else:
            new.append(d)
    return new


def line(rel: str, d: Diagnostic) -> str:
    """`path:line:col severity: message (source)`, 1-based as compilers print them."""
    message = " ".join(d.message.split())
    source = f" ({d.source})" if d.source else ""
    start = d.range.start
    return f"{rel}:{start.line + 1}:{start.character + 1} {SEVERITY[_severity(d)]}: {message}{source}"


@dataclass(frozen=True)
class Found:
    """What the result gains: its text and its `metadata.problems`."""

    text: str
    problems: list[Diagnostic]


class ProblemWatch:
    """The problems of the files an edit writes, around it: `before()`, the edit, `after()`."""

    def __init__(self, host: Host, settings: DiagnosticsSettings, targets: Sequence[WorkspacePath]):
        self.host = host
        self.settings = settings
        self.targets = list(targets)
        self.wait = max(settings.delay_ms / 1000, MIN_WAIT_S)
        self._before: dict[Path, list[Diagnostic]] | None = None

    @classmethod
    def of(cls, host: Host, settings: DiagnosticsSettings, targets: Sequence[WorkspacePath]) -> ProblemWatch | None:
        """A watch when the editor can tell and the user wants it, else None (nothing asked)."""
        if not settings.enabled or not getattr(host, "reports_problems", False):
            return None
        return cls(host, settings, targets)

    async def _ask(self, timeout: float) -> dict[Path, list[Diagnostic]] | None:
        try:
            return await asyncio.wait_for(self.host.problems([t.path for t in self.targets]), timeout)
        except TimeoutError:
            return None

    async def before(self) -> None:
        self._before = await self._ask(self.wait)

    async def after(self) -> Found | None:
        """After the delay, what is new; None when the editor could not say before the edit (the
        delay is then not waited for: its time has gone already) or now."""
        if self._before is None:
            return None
        await asyncio.sleep(self.settings.delay_ms / 1000)
        now = await self._ask(self.wait)
        if now is None:
            return None
        least = 1 if self.settings.severity == "error" else 2
        found: list[tuple[str, Diagnostic]] = []
        for t in self.targets:
            for d in new_problems(self._before.get(t.path, []), now.get(t.path, [])):
                if _severity(d) <= least:
                    found.append((t.rel, d))
        if not found:
            return None
        # errors first (what a cap leaves out is the least severe), then in reading order
        found.sort(key=lambda f: (_severity(f[1]), f[0], f[1].range.start.line, f[1].range.start.character))
        found = found[: self.settings.max]
        text = "\n".join([HEADER, *(line(rel, d) for rel, d in found)])
        return Found(text, [d for _, d in found])
