"""One order for a space conversation's updates, on every attached server (PROTOCOL.md, "Team
spaces on PostgreSQL").

`Fanout` is the host the session's parts publish to. An update of a space conversation goes to
the space's feed (server/state/pg/feed.py), which numbers it; this server delivers it to its
clients, as every attached server does, when the feed's notice comes back, with its `seq`. So
the clients of all servers see one conversation's updates in the same order, numbered without
gaps, whichever server's turn made them. Everything else goes straight to this server's clients,
as without a space: the updates of local conversations, those that describe this server (its
state, its space, its MCP servers, its own queue), and every update while the space is offline.

The server's own updates are kept until their notice comes back (not read again); other
servers' are read from the feed, as many as the notice says and any the server missed. A
`notification` (a member @-mentioned) is not numbered: the feed's notice goes to every server,
and only the mentioned member's deliver it.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Callable

import anyio

from ..host import Host

if TYPE_CHECKING:
    from ..state.pg.feed import Feed

log = logging.getLogger(__name__)

#: The `to` of a notice for every server of the space (a member attached or left).
EVERYONE = "*"


def presence(handle: str) -> tuple[str, dict]:
    """The notice a server sends (`Feed.notify`) when its member attaches or leaves."""
    return EVERYONE, {"presence": handle}


#: Updates about this server rather than the conversation: never fanned out.
LOCAL_KINDS = frozenset({"state_changed", "space_changed", "mcp_changed", "unqueued"})


class Fanout:
    def __init__(self, host: Host, in_space: Callable[[str], bool | None]):
        """`in_space(conversation id)`: True when the conversation is the space's."""
        self.host = host
        self.in_space = in_space
        #: the space's feed while it carries updates (`run`)
        self.feed: Feed | None = None
        self._queue: list[Any] = []
        #: (member, notification) to send after the queued updates
        self._notices: list[tuple[str, dict]] = []
        self._more = anyio.Event()
        #: this server's updates appended, by (conversation, number), until delivered
        self._own: dict[tuple[str, int], Any] = {}
        #: the last number delivered to the clients, per conversation
        self.delivered: dict[str, int] = {}
        #: the space member this server's clients are (their `notification`s come here)
        self.member: str | None = None
        #: a server of the space attached or left (its member's handle): who is online changed
        self.arrived: Callable[[str], None] = lambda handle: None

    def __getattr__(self, name: str) -> Any:  # the rest of the Host port is the host's
        return getattr(self.host, name)

    def publish(self, update: Any) -> None:
        if self.feed is None or update.kind in LOCAL_KINDS or not self._shared(update.conversation_id):
            self.host.publish(update)
            return
        self._queue.append(update)
        self._more.set()

    def _shared(self, cid: str) -> bool:
        try:
            return bool(self.in_space(cid))
        except Exception as exc:  # noqa: BLE001 - the space's store failing: the update still reaches this server's clients
            log.warning("space: %s", exc)
            return False

    def tell(self, to: str, notice: dict) -> None:
        """A member's `notification`, sent with the next batch of updates (after the message
        that mentions them); dropped, logged, while the space is offline."""
        if self.feed is None:
            log.info("space offline: the notification of %s is not sent", to)
            return
        self._notices.append((to, notice))
        self._more.set()

    async def run(self, feed: Feed) -> None:
        """Carry the space conversations' updates through `feed` until it fails (raised) or this
        is cancelled; what was not appended by then goes to the clients unnumbered."""
        self.feed = feed
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._send)
                await self._receive()
        finally:
            self.feed = None
            self._notices = []
            unsent, self._queue = self._queue, []
            for update in unsent:
                self.host.publish(update)

    async def _send(self) -> None:
        assert self.feed is not None
        while True:
            await self._more.wait()
            self._more = anyio.Event()
            batch, self._queue = self._queue, []
            by_conversation: dict[str, list[Any]] = {}
            for update in batch:
                by_conversation.setdefault(update.conversation_id, []).append(update)
            left = list(by_conversation.items())
            while left:
                try:
                    await self._append(*left[0])
                except BaseException:  # the rest go back, for run() to deliver unnumbered
                    self._queue = [u for _, updates in left for u in updates] + self._queue
                    raise
                left.pop(0)
            notices, self._notices = self._notices, []
            if notices:
                await self.feed.notify(notices)

    async def _append(self, cid: str, updates: list[Any]) -> None:
        assert self.feed is not None
        bodies = [json.dumps(u.wire(), ensure_ascii=False) for u in updates]
        keys: list[tuple[str, int]] = []

        def numbered(first: int) -> None:  # before the commit: its notice cannot come first
            keys.extend((cid, first + n) for n in range(len(updates)))
            self._own.update(zip(keys, updates))

        try:
            appended = await self.feed.append(cid, bodies, numbered)
        except BaseException:
            for key in keys:
                self._own.pop(key, None)
            raise
        if appended is None:  # the space has no such conversation: this server's clients only
            for update in updates:
                self.host.publish(update)

    async def _receive(self) -> None:
        assert self.feed is not None
        async for notice in self.feed.notices():
            if isinstance(notice, dict):
                self._notified(notice)
                continue
            cid, first, last = notice
            done = self.delivered.get(cid, first - 1)
            while done < last:
                if all((cid, n) in self._own for n in range(done + 1, last + 1)):
                    rows: list[tuple[int, str | None]] = [(n, None) for n in range(done + 1, last + 1)]
                else:
                    rows = list(await self.feed.read(cid, done))
                    if not rows:
                        break
                for seq, body in rows:
                    update = self._own.pop((cid, seq), None) or _parsed(body)
                    if update is not None:
                        self.host.publish(update.model_copy(update={"seq": seq}))
                    done = self.delivered[cid] = seq


    def _notified(self, notice: dict) -> None:
        """A member was @-mentioned: this server's clients are told when it is theirs. Or a
        server attached or left (`{"to": "*", "presence": handle}`)."""
        if notice.get("to") == EVERYONE and isinstance(notice.get("presence"), str):
            self.arrived(notice["presence"][:200])
            return
        if self.member is None or notice.get("to") != self.member:
            return
        import protocol

        try:
            update = protocol.NotificationUpdate.model_validate(notice)
        except ValueError as exc:
            log.warning("a space notification that this Modus does not understand was skipped: %s", str(exc).splitlines()[0])
            return
        self.host.publish(update)


def _parsed(body: str | None) -> Any:
    """Another server's update as the protocol's model; None (skipped, logged) when this
    server's protocol does not know it (a newer Modus), or it was too large to read."""
    global _UPDATE
    from pydantic import TypeAdapter, ValidationError

    import protocol

    from ..state.pg.feed import MAX_EVENT_BYTES

    if body is None:  # over the feed's bound: not read
        log.warning("an update of the space larger than %d bytes was skipped", MAX_EVENT_BYTES)
        return None
    if _UPDATE is None:
        _UPDATE = TypeAdapter(protocol.Update)
    try:
        return _UPDATE.validate_json(body or "")
    except ValidationError as exc:
        log.warning("an update of the space that this Modus does not know was skipped: %s", str(exc).splitlines()[0])
        return None


_UPDATE: Any = None
