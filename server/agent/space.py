"""The team space this server attaches to (the `space` setting; PROTOCOL.md, "Team spaces on
PostgreSQL").

`SpaceLink` opens the space's store off the event loop (start-up never waits for PostgreSQL),
hands it to the routed store, runs the space's live updates through its feed (`Fanout`,
fanout.py) until the connection breaks, and says how it stands: `State.space` and the update
`space_changed` (connecting → connected, or offline with PostgreSQL's reason, never a password).
While offline, or once the feed lost its connection (PostgreSQL restarted, the network cut), it
tries again, waiting 1, 2, 4 … 30 s between attempts. A settings change that adds, removes or
changes `space` attaches anew.

While attached, every 10 s it says its member is here (presence, online within 30 s), renews the
leases of its running turns, and closes, as `interrupted`, the turns of servers that are gone
(Conversations.close_abandoned_turns); `turn_free` makes a turn wait while the same agent runs
one in the conversation on another server. It is Intake's `People`: the space's members for the
@-mentions, the author of a user message, the members a message mentions told (`notification`).

It also keeps the current conversation readable (`Resume`): whenever the space is not attached
(at start-up, which never waits for it; connecting; offline; `space` removed) and the current
conversation is the space's, it is set aside (remembered in the local store's meta, so that a
restart knows it) and a new local one stands in; the state a client reads then names that one.
When the space connects, the space conversation becomes current again unless the user has
meanwhile started talking elsewhere — so a restart, or a space that was away for a while, comes
back to where the user was.
"""

from __future__ import annotations

import itertools
import logging
import os
from typing import Any, Callable, Sequence

import anyio

import protocol
from protocol import Settings
from protocol.models import SpaceInfo, SpaceSettings

from ..state.records import new_id
from ..state.routed import Routed
from .fanout import Fanout, presence

log = logging.getLogger(__name__)

#: The longest wait between two attempts to reach an offline space, in seconds.
MAX_RETRY_SECONDS = 30.0
#: How often an attached server says its member is here (online: said within 30 s).
HERE_SECONDS = 10.0
#: Every how many beats a server forgets the space's day-old updates (an hour).
PRUNE_EVERY = 360
#: How often a turn waiting for the same agent's turn on another server looks again.
TURN_POLL_SECONDS = 0.5

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
        host: Fanout,
        settings: Callable[[], Settings],
        current: Callable[[], str],
        make_current: Callable[[str], None],
        changed: Callable[[], None],
        close_turns: Callable[[Sequence[tuple[str, str, str]], Callable[[str], bool]], None] = lambda turns, claim: None,
    ):
        """`current`, `make_current`: the current conversation, and making one current (a new one
        if unknown); `changed`: tell the clients the state changed (the space was removed from the
        settings, or its conversation is current again). Made before anything reads the state:
        the space is not attached yet, so a current space conversation is set aside at once."""
        self.routed = store
        self.changed = changed
        #: close turns of the space whose server is gone (Conversations.close_abandoned_turns)
        self.close_turns = close_turns
        #: the session's host: the space's updates go through it while attached
        self.host = self.fanout = host
        host.arrived = self._arrived
        #: this server, among the space's (the events it appends name it)
        self.origin = new_id("srv-")
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
        #: while attached: the space's feed; its members (handle, display name, online) as last read
        self._feed: Any = None
        self._people: list[tuple[str, str | None, bool]] = []
        #: while attached: cancelled when a store call lost PostgreSQL (`_lost`), and why
        self._connected: anyio.CancelScope | None = None
        self._lost_why: str | None = None
        #: set once the attempt to attach under way has ended, connected or offline
        self._settled = anyio.Event()
        #: the members are to be read again (presence notices): one read at a time, however many came
        self._people_stale = False
        self._people_reading = False

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
        self._settled = anyio.Event()
        self._tg.start_soon(self._attach, space, self._scope)

    def close(self) -> None:
        self._stop()

    async def settled(self, timeout: float) -> None:
        """Until the first attempt to attach has ended (connected, or offline and why), at most
        `timeout` seconds; at once when no space is set."""
        if self._applied is not None:
            with anyio.move_on_after(timeout):
                await self._settled.wait()

    def _stop(self) -> None:
        if self._scope is not None:
            self._scope.cancel()
            self._scope = None
        old = self.routed.detach(None)
        if old is not None:
            old.close()

    def _say(self, space: SpaceSettings, state: str, error: str | None = None) -> None:
        self.info = SpaceInfo(name=space.name, member=space.member, state=state, error=error)
        if state != "connecting":
            self._settled.set()
        if state == "offline":
            self.routed.detach(space.name, error)
        if state != "connected":
            self.resume.set_aside()
        self.host.publish(protocol.SpaceChanged(conversation_id=self.current(), space=self.info))

    async def _attach(self, space: SpaceSettings, scope: anyio.CancelScope) -> None:
        """Connect, carry the space's updates until its connection breaks, and again: a
        connection lost is said (offline, why) and tried again after 1, 2, 4 … 30 s."""
        with scope:
            self.routed.detach(space.name)
            self._say(space, "connecting")
            wait = self.retry_seconds
            while True:
                try:
                    store, feed = await self._connect(space, scope)
                except Exception as exc:  # noqa: BLE001 - every reason is the user's to read, redacted
                    self._offline(space, exc)
                    await anyio.sleep(wait)
                    wait = min(wait * 2, MAX_RETRY_SECONDS)
                    continue
                self.routed.attach(store, space.name)
                try:
                    unended, self.routed.unended = self.routed.unended, []
                    if unended:  # this server's turns that ended while away: closed, their calls given results
                        self.close_turns(unended, store.claim_own_turn)
                    back = self.resume.take_back()
                except Exception as exc:  # noqa: BLE001 - the connection broke at once: the feed says so next
                    log.warning("space %s: the conversation set aside is not current again: %s", space.name, _reason(exc, space))
                    back = False
                self._say(space, "connected")
                if back:
                    self.changed()  # the sidebar shows the space conversation again
                wait = self.retry_seconds
                try:
                    with anyio.CancelScope() as self._connected:  # a store call that lost PostgreSQL cancels it (said then)
                        async with anyio.create_task_group() as tg:
                            tg.start_soon(self._here, feed, space)
                            await self.fanout.run(feed)
                            tg.cancel_scope.cancel()
                    if self._lost_why is None:
                        raise ConnectionError("the connection was closed")
                except Exception as exc:  # noqa: BLE001 - as above
                    self._offline(space, exc)
                finally:
                    lost = self._lost_why is not None or self.info is None or self.info.state != "connected"
                    self._connected, self._lost_why, self._feed = None, None, None
                    with anyio.CancelScope(shield=True):
                        if not lost:  # detached on purpose: not online through this server any more
                            with anyio.move_on_after(2):
                                await _quietly(feed.leave())
                                await _quietly(feed.notify([presence(space.member)]))
                        await feed.close()
                await anyio.sleep(wait)

    async def _here(self, feed: Any, space: SpaceSettings) -> None:
        """Every few seconds: this server's member is here, and who else is; its running turns
        leased again, and the turns of servers that are gone closed (the first server to claim
        one closes it)."""
        from ..state.pg.watchdog import CALL_LIMIT, NO_ANSWER  # loaded with the space's store

        for beat in itertools.count(1):
            await anyio.sleep(HERE_SECONDS)
            try:
                with anyio.fail_after(CALL_LIMIT):  # a PostgreSQL that is there and does not answer is lost too
                    await feed.here(space.member, space.display_name)
                    if beat % PRUNE_EVERY == 0:  # every server now and then: the day-old updates go
                        await feed.prune()
                    self._people = await feed.members()
                    abandoned = await feed.renew()
            except TimeoutError:
                raise ConnectionError(NO_ANSWER) from None
            store = self.routed.space
            if abandoned and store is not None:
                self.close_turns(abandoned, store.claim_turn)

    async def turn_free(self, cid: str, agent: str) -> None:
        """Wait while the agent runs a turn in this space conversation on another server (one
        turn per agent per conversation across the space; a dead server's ends within 30 s)."""
        while (store := self.routed.space) is not None and self.routed.in_space(cid) and store.busy(cid, agent):
            await anyio.sleep(TURN_POLL_SECONDS)

    # -- the space's members (the People port of Intake and the agents list)

    async def members(self) -> protocol.SpaceMembersResult:
        """`modus/space/members`: everyone who ever attached, online ones first; none without
        an attached space."""
        feed = self._feed
        if feed is not None:
            from ..state.pg.watchdog import CALL_LIMIT, NO_ANSWER

            with anyio.move_on_after(CALL_LIMIT) as waited:  # a silent PostgreSQL: who was there last, and it is gone
                self._people = await feed.members()
            if waited.cancelled_caught:
                self._lost(NO_ANSWER)
        found = self._people if feed is not None else []
        return protocol.SpaceMembersResult(
            members=[protocol.SpaceMember(handle=handle, display_name=name, online=online) for handle, name, online in found]
        )

    def _arrived(self, handle: str) -> None:
        """Another member's server attached or left: who is online is read again, so that
        `@handle` of someone who has just joined reaches them. Anyone who can write to the space
        can send such notices: however many come, one read runs at a time, and one more after it.
        The clients are not told (a `space_changed` would be an update of the current
        conversation without `seq`): they ask for the members every 30 s, and when a message
        comes from someone they do not list."""
        if self._tg is None or self._feed is None or self._applied is None or handle == self._applied.member:
            return
        self._people_stale = True
        if not self._people_reading:
            self._people_reading = True
            self._tg.start_soon(self._people_again)

    async def _people_again(self) -> None:
        try:
            while self._people_stale and (feed := self._feed) is not None:
                self._people_stale = False
                people = await feed.members()
                if feed is self._feed:
                    self._people = people
        except Exception as exc:  # noqa: BLE001 - the feed says when the space is gone
            log.debug("space: the members were not read again: %s", exc)
        finally:
            self._people_reading = False

    def humans(self, configured: Sequence[Any]) -> list[Any]:
        """The humans a message may @-mention: the configured members, then the space's (as
        the last attach or heartbeat found them)."""
        from protocol import Member

        known = {m.handle.lower() for m in configured}
        space = [Member(handle=h, name=n or h) for h, n, _ in (self._people if self._feed is not None else []) if h.lower() not in known]
        return [*configured, *space]

    def author(self, cid: str) -> str | None:
        """Who writes a user message in this conversation: this server's member in a space
        conversation while attached (the others' clients show the name), else None."""
        if self._feed is None or self._applied is None or not self.routed.in_space(cid):
            return None
        return self._applied.member

    def mentioned(self, cid: str, message_id: str, text: str, handles: Sequence[str]) -> None:
        """A user message of a space conversation @-mentioned these members: their servers'
        clients are told (`notification`), never an agent woken."""
        feed, space = self._feed, self._applied
        if feed is None or space is None or self._tg is None or not self.routed.in_space(cid):
            return
        notice = {"conversationId": cid, "from": space.member, "text": text[:1000], "messageId": message_id}
        for handle in dict.fromkeys(h for h in handles if h.lower() != space.member.lower()):
            self.fanout.tell(handle, notice)

    def _lost(self, why: str) -> None:
        """A call of the space's store found PostgreSQL gone: offline now, not when the feed's
        keepalives tell (up to 11 s on a cut network). The store is let go at once, so the calls
        that follow in the same step (a turn recording its end) are refused at once rather than
        each waiting for a connection; the feed stops, and the link says why and tries again."""
        if self._connected is None or self._lost_why is not None or self._applied is None:
            return
        self._lost_why = why
        old = self.routed.space
        self._say(self._applied, "offline", _reason(ConnectionError(why), self._applied))
        log.warning("space %s offline: %s", self._applied.name, self.info.error if self.info else "")
        if old is not None and self._tg is not None:
            self._tg.start_soon(_closed, old)
        self._connected.cancel()

    async def _connect(self, space: SpaceSettings, scope: anyio.CancelScope) -> tuple[Any, Any]:
        """The space's store (opened off the event loop) and its feed."""
        opened: list[Any] = []
        try:
            await anyio.to_thread.run_sync(_open, space, opened, self._lost, self.origin)
        finally:
            if scope.cancel_called and opened:  # a newer setting won while it connected
                opened.pop().close()
        store = opened[0]
        try:
            feed = await _open_feed(space, self.origin)
            await feed.here(space.member, space.display_name)
            self._people = await feed.members()
            await feed.notify([presence(space.member)])  # the others' lists now, not at their next beat
            self._feed, self.fanout.member = feed, space.member
            return store, feed
        except BaseException:
            await _closed(store)
            raise

    def _offline(self, space: SpaceSettings, exc: Exception) -> None:
        old = self.routed.space
        self._say(space, "offline", _reason(exc, space))
        log.warning("space %s offline: %s", space.name, self.info.error if self.info else "")
        if old is not None:
            self._tg.start_soon(_closed, old)


async def _quietly(call: Any) -> None:
    """A call to the space that may fail when it is gone: logged, not raised."""
    try:
        await call
    except Exception as exc:  # noqa: BLE001 - the link says the space is offline, where it matters
        log.info("space: %s", type(exc).__name__)


async def _closed(store: Any) -> None:
    """Close a space's store off the event loop (its pool waits for its threads)."""
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(store.close)


def _password(space: SpaceSettings) -> str | None:
    """The space's password, from the environment variable `passwordEnv` names."""
    from ..state.pg import SpaceUnreachable

    if not space.password_env:
        return None
    password = os.environ.get(space.password_env)
    if password is None:
        raise SpaceUnreachable(space.url, f"the environment variable {space.password_env} (passwordEnv) is not set")
    return password


async def _open_feed(space: SpaceSettings, origin: str) -> Any:
    from ..state.pg.feed import Feed

    return await Feed.open(space.url, _password(space), origin)


def _open(space: SpaceSettings, opened: list[Any], lost: Callable[[str], None], origin: str) -> None:
    """Open the space's store (blocking: run in a worker thread); it lands in `opened`."""
    from ..state.pg import SpaceStore

    opened.append(SpaceStore(space.url, password=_password(space), name=space.name, lost=lost, origin=origin))


def _reason(exc: BaseException, space: SpaceSettings) -> str:
    from ..state.pg import SpaceUnreachable, redacted, where

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # the feed's tasks: the first that failed
        exc = exc.exceptions[0]
    if isinstance(exc, SpaceUnreachable):
        return str(exc)
    password = os.environ.get(space.password_env) if space.password_env else None
    return f"the space's PostgreSQL at {where(space.url)}: {redacted(str(exc), space.url, password)}"
