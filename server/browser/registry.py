"""Which conversation has a browser open, and when it closes.

One browser per conversation. A `launch` while one is open replaces it (Roo's way: the model
starts over at a new URL). The browser closes on `close`, when the turn that launched it ends
(completed, failed or cancelled: agent/loop.py calls `turn_ended` in the turn's `finally`), and
when the session stops (`close_all`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import anyio

if TYPE_CHECKING:
    from .driver import Browser


@dataclass
class _Open:
    browser: Browser
    #: the turn that launched it: its end closes the browser
    turn_id: str


class Browsers:
    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}

    def get(self, conversation_id: str) -> Browser | None:
        found = self._open.get(conversation_id)
        return found.browser if found is not None and not found.browser.closed else None

    async def launch(self, conversation_id: str, turn_id: str, viewport: tuple[int, int], allowed_hosts: Sequence[str],
                     timeout: float = 15.0) -> Browser:
        """A new browser for the conversation (the one open before, closed); started."""
        from .driver import Browser  # with the first launch: what start-up need not load

        await self.close(conversation_id)
        browser = Browser(viewport, allowed_hosts, timeout)
        self._open[conversation_id] = _Open(browser, turn_id)
        try:
            await browser.start()
        except BaseException:
            self._open.pop(conversation_id, None)
            await browser.close()  # shielded: a launch cancelled while Chromium starts leaves nothing
            raise
        return browser

    async def close(self, conversation_id: str) -> bool:
        """Close the conversation's browser; False when none was open."""
        found = self._open.pop(conversation_id, None)
        if found is None:
            return False
        await found.browser.close()
        return True

    async def turn_ended(self, turn_id: str) -> None:
        """The browsers that turn launched, closed (shielded: a cancelled turn closes them too)."""
        ended = [cid for cid, found in self._open.items() if found.turn_id == turn_id]
        with anyio.CancelScope(shield=True):
            for cid in ended:
                await self.close(cid)

    async def close_all(self) -> None:
        with anyio.CancelScope(shield=True):
            for cid in list(self._open):
                await self.close(cid)

    def __len__(self) -> int:
        return len(self._open)
