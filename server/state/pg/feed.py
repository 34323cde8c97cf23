"""A space's live updates on PostgreSQL: the `events` table and LISTEN/NOTIFY.

A server appends its updates of a space conversation (`append`): one transaction takes their
numbers from `event_counters` (its row lock makes them gapless and committed in their order; see
migration 2), stores them, and NOTIFYs `first last conversation` on one channel. Every attached server
LISTENs there (`notices`) and reads what it has not delivered yet (`read`): a notice it missed (a
reconnect) costs nothing but a longer read, since numbers have no gaps.

Async, on two connections of its own (one writes and reads, one listens), so the event loop never waits on
PostgreSQL for an update. A connection that breaks raises psycopg.OperationalError out of the
call or the `notices` iterator; its owner reconnects with a new Feed.
"""

from __future__ import annotations

import json
import logging
import time
from typing import AsyncIterator, Callable, Sequence

import anyio
import psycopg
from psycopg import sql

from .store import LEASE_SECONDS, LIVELY, NOW as _NOW, connection_options

log = logging.getLogger(__name__)

#: the channels' names (`:<schema>` added: see Feed)
CHANNEL = "modus_events"
#: a member @-mentioned: `{"to": handle, ...}`, for that member's servers
MEMBERS_CHANNEL = "modus_members"
#: a member is online while one of its servers said so within this many seconds
ONLINE_SECONDS = 30
#: the largest update another server's is read (Modus's own are far below it)
MAX_EVENT_BYTES = 1 << 20
#: how long the updates are kept (streamed text is most of them): a day
EVENTS_KEPT_SECONDS = 24 * 3600


class Feed:
    def __init__(self, writer: psycopg.AsyncConnection, listener: psycopg.AsyncConnection, origin: str, schema: str = "public"):
        self._writer = writer
        self._listener = listener
        #: the writer's: a read between an append's statements would see them uncommitted
        self._lock = anyio.Lock()
        #: this server's id, stored with each event it appends
        self.origin = origin
        # A NOTIFY reaches every listener of the database: spaces that share one (a schema each,
        # the URL's search_path) have channels of their own, so that none hears another's.
        self.channel, self.members_channel = f"{CHANNEL}:{schema}", f"{MEMBERS_CHANNEL}:{schema}"

    @classmethod
    async def open(cls, url: str, password: str | None, origin: str) -> Feed:
        options = {**connection_options(password), **LIVELY}
        writer = await psycopg.AsyncConnection.connect(url, **options)
        listener = None
        try:
            schema = (await (await writer.execute("SELECT current_schema()")).fetchone())[0] or "public"
            listener = await psycopg.AsyncConnection.connect(url, **options)
            feed = cls(writer, listener, origin, schema)
            for channel in (feed.channel, feed.members_channel):
                await listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        except BaseException:
            for db in (writer, listener):
                if db is not None:
                    await db.close()
            raise
        return feed

    async def close(self) -> None:
        for db in (self._writer, self._listener):
            try:
                await db.close()
            except psycopg.Error:
                pass

    async def append(self, conversation_id: str, bodies: Sequence[str], numbered: Callable[[int], None] = lambda first: None) -> int | None:
        """Store the updates (their wire JSON) in order; the number of the last one, None when
        the space has no such conversation. `numbered(first)` learns the first's number before
        the commit, so before any server can read them."""
        db = self._writer
        async with self._lock:
            try:
                return await self._append(db, conversation_id, bodies, numbered)
            except psycopg.errors.ForeignKeyViolation:  # rolled back
                return None

    async def _append(self, db: psycopg.AsyncConnection, conversation_id: str, bodies: Sequence[str], numbered: Callable[[int], None]) -> int:
        n = len(bodies)
        async with db.transaction():
            row = await (
                await db.execute(
                    "INSERT INTO event_counters(conversation_id, last_event) VALUES (%s, %s) ON CONFLICT (conversation_id) "
                    "DO UPDATE SET last_event = event_counters.last_event + excluded.last_event RETURNING last_event",
                    (conversation_id, n),
                )
            ).fetchone()
            last = row[0]
            first, now = last - n + 1, time.time()
            async with db.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO events(conversation_id, seq, origin, body, created_at) VALUES (%s, %s, %s, %s, %s)",
                    [(conversation_id, first + i, self.origin, body, now) for i, body in enumerate(bodies)],
                )
            await db.execute("SELECT pg_notify(%s, %s)", (self.channel, f"{first} {last} {conversation_id}"))
            numbered(first)
        return last

    async def read(self, conversation_id: str, after: int, limit: int = 1000) -> list[tuple[int, str | None]]:
        """(number, wire JSON) of the conversation's updates after number `after`, in order; the
        JSON None for one over MAX_EVENT_BYTES (another server wrote it: it is not read)."""
        async with self._lock:
            cur = await self._writer.execute(
                "SELECT seq, CASE WHEN octet_length(body) <= %s THEN body END FROM events WHERE conversation_id = %s AND seq > %s "
                "ORDER BY seq LIMIT %s",
                (MAX_EVENT_BYTES, conversation_id, after, limit),
            )
            return [(seq, body) for seq, body in await cur.fetchall()]

    async def notices(self) -> AsyncIterator[tuple[str, int, int] | dict]:
        """As they commit: (conversation id, first, last number) of each append on the space,
        and each member notice (`notify`) as its dict."""
        async for notice in self._listener.notifies():  # a payload is at most 8000 bytes (PostgreSQL's)
            if notice.channel == self.members_channel:
                try:
                    found = json.loads(notice.payload)
                except ValueError:
                    continue
                if isinstance(found, dict):
                    yield found
                continue
            try:  # anyone who can write to the space can NOTIFY: a malformed notice is skipped
                first, last, cid = notice.payload.split(" ", 2)
                numbers = int(first), int(last)
            except ValueError:
                log.warning("space: a notice that is not `first last conversation` was skipped")
                continue
            if 0 < numbers[0] <= numbers[1]:
                yield cid, *numbers

    # -- members

    async def here(self, handle: str, display_name: str | None) -> None:
        """This server's member is attached (its name remembered): said again every few seconds."""
        async with self._lock, self._writer.transaction():
            await self._writer.execute(
                "INSERT INTO members(handle, display_name) VALUES (%s, %s) ON CONFLICT (handle) "
                "DO UPDATE SET display_name = COALESCE(excluded.display_name, members.display_name)",
                (handle, display_name),
            )
            await self._writer.execute(
                f"INSERT INTO presence(server, handle, seen_at) VALUES (%s, %s, {_NOW}) ON CONFLICT (server) "
                "DO UPDATE SET handle = excluded.handle, seen_at = excluded.seen_at",
                (self.origin, handle),
            )

    async def leave(self) -> None:
        """This server detaches: its member is online no longer through it."""
        async with self._lock:
            await self._writer.execute("DELETE FROM presence WHERE server = %s", (self.origin,))

    async def members(self) -> list[tuple[str, str | None, bool]]:
        """(handle, display name, online) of everyone who ever attached: online ones first,
        then by handle."""
        async with self._lock:
            cur = await self._writer.execute(
                f"SELECT m.handle, m.display_name, EXISTS (SELECT 1 FROM presence p WHERE p.handle = m.handle AND p.seen_at > {_NOW} - %s) "
                "AS online FROM members m ORDER BY online DESC, m.handle",
                (ONLINE_SECONDS,),
            )
            return [(handle, name, online) for handle, name, online in await cur.fetchall()]

    # -- turns

    async def renew(self) -> list[tuple[str, str, str]]:
        """This server's running turns leased again; (turn id, conversation id, agent) of the
        other servers' turns whose lease ran out (their server is gone)."""
        async with self._lock:
            await self._writer.execute(
                f"UPDATE turns SET lease_until = {_NOW} + %s WHERE server = %s AND outcome IS NULL", (LEASE_SECONDS, self.origin)
            )
            cur = await self._writer.execute(
                f"SELECT id, conversation_id, agent FROM turns WHERE outcome IS NULL AND lease_until < {_NOW} AND server <> %s ORDER BY started_at",
                (self.origin,),
            )
            return [tuple(row) for row in await cur.fetchall()]

    async def prune(self, older_than: float = EVENTS_KEPT_SECONDS) -> int:
        """Forget the updates older than `older_than` seconds (the messages stay: the history is
        theirs); how many. A server away longer than that gets the history, not the stream."""
        async with self._lock:
            cur = await self._writer.execute(f"DELETE FROM events WHERE created_at < {_NOW} - %s", (older_than,))
            return cur.rowcount

    async def notify(self, notices: Sequence[tuple[str, dict]]) -> None:
        """Tell the servers of each member `to` its `notice` (`to` added; at most ~7 KB of JSON
        each): one statement for them all."""
        bodies = [json.dumps({**notice, "to": to}) for to, notice in notices]
        async with self._lock:
            await self._writer.execute("SELECT pg_notify(%s, body) FROM unnest(%s::text[]) AS body", (self.members_channel, bodies))
