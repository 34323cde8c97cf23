"""The team space this server attaches to (the `space` setting; PROTOCOL.md, "Team spaces on
PostgreSQL").

`SpaceLink` opens the space's store off the event loop (start-up never waits for PostgreSQL),
hands it to the routed store, and says how it stands: `State.space` and the update
`space_changed` (connecting → connected, or offline with PostgreSQL's reason, never a password).
While offline it tries again, waiting 1, 2, 4 … 30 s between attempts. A settings change that
adds, removes or changes `space` attaches anew. Losing the connection once attached, and the live
fan-out, are later parts' (the store's calls fail then).
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable

import anyio

import protocol
from protocol import Settings
from protocol.models import SpaceInfo, SpaceSettings

from ..host import Host
from ..state.routed import Routed

log = logging.getLogger(__name__)

#: The longest wait between two attempts to reach an offline space, in seconds.
MAX_RETRY_SECONDS = 30.0


class SpaceLink:
    def __init__(self, store: Routed, host: Host, settings: Callable[[], Settings], current: Callable[[], str], changed: Callable[[], None]):
        """`changed`: tell the clients the state changed (the space was removed from the settings)."""
        self.routed = store
        self.changed = changed
        self.host = host
        self.settings = settings
        self.current = current
        #: how the attachment stands (None: no space configured)
        self.info: SpaceInfo | None = None
        self._applied: SpaceSettings | None = None
        self._tg: Any = None
        self._scope: anyio.CancelScope | None = None
        #: the first wait between attempts (tests shorten it)
        self.retry_seconds = 1.0

    def serve(self, tg: Any) -> None:
        """Attach in this task group (None: the session stops: detach)."""
        self._tg = tg
        if tg is None:
            self._stop()
            self._applied = None
        else:
            self.apply()

    def apply(self) -> None:
        """Attach anew when the `space` setting changed since the last call."""
        if self._tg is None:
            return
        space = self.settings().space
        if space == self._applied:
            return
        self._stop()
        self._applied = space
        if space is None:
            self.info = None
            self.changed()
            return
        self._scope = anyio.CancelScope()  # made here: a change before the task starts cancels it too
        self._tg.start_soon(self._attach, space, self._scope)

    def close(self) -> None:
        self._stop()

    def _stop(self) -> None:
        if self._scope is not None:
            self._scope.cancel()
            self._scope = None
        old = self.routed.detach(None)
        if old is not None:
            old.close()

    def _say(self, space: SpaceSettings, state: str, error: str | None = None) -> None:
        self.info = SpaceInfo(name=space.name, member=space.member, state=state, error=error)
        if state == "offline":
            self.routed.detach(space.name, error)
        self.host.publish(protocol.SpaceChanged(conversation_id=self.current(), space=self.info))

    async def _attach(self, space: SpaceSettings, scope: anyio.CancelScope) -> None:
        with scope:
            self.routed.detach(space.name)
            self._say(space, "connecting")
            wait = self.retry_seconds
            while True:
                opened: list[Any] = []
                try:
                    await anyio.to_thread.run_sync(_open, space, opened)
                except Exception as exc:  # noqa: BLE001 - every reason is the user's to read, redacted
                    self._say(space, "offline", _reason(exc, space))
                    log.warning("space %s offline: %s", space.name, self.info.error if self.info else "")
                    await anyio.sleep(wait)
                    wait = min(wait * 2, MAX_RETRY_SECONDS)
                    continue
                finally:
                    if scope.cancel_called and opened:  # a newer setting won while it connected
                        opened.pop().close()
                self.routed.attach(opened[0], space.name)
                self._say(space, "connected")
                return


def _open(space: SpaceSettings, opened: list[Any]) -> None:
    """Open the space's store (blocking: run in a worker thread); it lands in `opened`."""
    from ..state.pg import SpaceStore, SpaceUnreachable

    password = None
    if space.password_env:
        password = os.environ.get(space.password_env)
        if password is None:
            raise SpaceUnreachable(space.url, f"the environment variable {space.password_env} (passwordEnv) is not set")
    opened.append(SpaceStore(space.url, password=password))


def _reason(exc: Exception, space: SpaceSettings) -> str:
    from ..state.pg import SpaceUnreachable, redacted, where

    if isinstance(exc, SpaceUnreachable):
        return str(exc)
    password = os.environ.get(space.password_env) if space.password_env else None
    return f"the space's PostgreSQL at {where(space.url)}: {redacted(str(exc), space.url, password)}"
