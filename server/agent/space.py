"""The team space this server attaches to (the `space` setting; PROTOCOL.md, "Team spaces on
PostgreSQL").

`SpaceLink` opens the space's store off the event loop (start-up never waits for PostgreSQL),
hands it to the routed store, and says how it stands: `State.space` and the update
`space_changed` (connecting → connected, or offline with PostgreSQL's reason, never a password).
While offline it tries again, waiting 1, 2, 4 … 30 s between attempts. A settings change that
adds, removes or changes `space` attaches anew. Losing the connection once attached, and the live
fan-out, are later parts' (the store's calls fail then).

It also keeps the current conversation readable (`Resume`): whenever the space is not attached
(at start-up, which never waits for it; connecting; offline; `space` removed) and the current
conversation is the space's, it is set aside (remembered in the local store's meta, so that a
restart knows it) and a new local one stands in; the state a client reads then names that one.
When the space connects, the space conversation becomes current again unless the user has
meanwhile started talking elsewhere — so a restart, or a space that was away for a while, comes
back to where the user was.
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
from ..state.records import new_id

log = logging.getLogger(__name__)

#: The longest wait between two attempts to reach an offline space, in seconds.
MAX_RETRY_SECONDS = 30.0

#: The local meta key of the space conversation set aside while its space is out of reach.
RESUME_KEY = "space.resume"


class Resume:
    """The current conversation while the space is out of reach, and again once it connects.

    The state a client reads is the current conversation's (its responder, history, usage), and
    the store refuses a space conversation while the space is not attached: so such a
    conversation cannot stay current then. It is remembered rather than dropped, in the local
    store (a server restarts before its space is attached), and given back when the space
    connects, if the conversation standing in for it has no messages yet (the user has not
    started something else there)."""

    def __init__(self, routed: Routed, current: Callable[[], str], make_current: Callable[[str], None]):
        self.routed = routed
        self.current = current
        self.make_current = make_current

    def remembered(self) -> str | None:
        return self.routed.local.get_meta(RESUME_KEY) or None

    def set_aside(self) -> None:
        """A space conversation that cannot be reached stops being current; a new local one is."""
        cid = self.current()
        if self.routed.reachable(cid):
            return
        self.routed.local.set_meta(**{RESUME_KEY: cid})
        self.make_current(new_id("conv-"))

    def take_back(self) -> bool:
        """Call once the space is attached: whether the conversation set aside is current again.
        One the attached space does not have (another space's) stays remembered."""
        cid = self.remembered()
        if cid is None or not self.routed.space.conversation_exists(cid):
            return False
        current = self.current()
        back = current != cid and self.routed.last_seq(current) == 0
        self.routed.local.set_meta(**{RESUME_KEY: ""})
        if back:
            self.make_current(cid)
        return back


class SpaceLink:
    def __init__(
        self,
        store: Routed,
        host: Host,
        settings: Callable[[], Settings],
        current: Callable[[], str],
        make_current: Callable[[str], None],
        changed: Callable[[], None],
    ):
        """`current`, `make_current`: the current conversation, and making one current (a new one
        if unknown); `changed`: tell the clients the state changed (the space was removed from the
        settings, or its conversation is current again). Made before anything reads the state:
        the space is not attached yet, so a current space conversation is set aside at once."""
        self.routed = store
        self.changed = changed
        self.host = host
        self.settings = settings
        self.current = current
        self.resume = Resume(store, current, make_current)
        self.resume.set_aside()
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
        self.resume.set_aside()
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
        if state != "connected":
            self.resume.set_aside()
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
                try:
                    back = self.resume.take_back()
                except Exception as exc:  # noqa: BLE001 - a store failing once attached is a later part's; the server goes on
                    log.warning("space %s: the conversation set aside is not current again: %s", space.name, _reason(exc, space))
                    back = False
                self._say(space, "connected")
                if back:
                    self.changed()  # the sidebar shows the space conversation again
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
