"""A space conversation's updates through the space's feed (server/state/pg/feed.py) and the
session's Fanout (server/agent/fanout.py), on a real PostgreSQL: two servers publishing into
one conversation at once, and both servers' clients seeing the same updates in the same order,
numbered 1, 2, 3 … without a gap; a server that missed notices catching up; the rest of the
updates going straight to the clients."""

from __future__ import annotations

import anyio

import protocol
from server.agent.fanout import Fanout

class Client:
    """What a server's clients receive."""

    def __init__(self):
        self.updates: list = []

    def publish(self, update) -> None:
        self.updates.append(update)

    def show_message(self, level, text) -> None:
        self.updates.append(("message", level, text))


def conversation(url: str, cid: str) -> None:
    from server.state.pg import SpaceStore

    store = SpaceStore(url)
    store.ensure_conversation(cid)
    store.close()


async def feed(url: str, origin: str):
    from server.state.pg.feed import Feed

    return await Feed.open(url, None, origin)


def delta(cid: str, text: str):
    return protocol.MessageDelta(conversation_id=cid, agent="modus", turn_id="turn-1", text=text)


def two_servers(url: str) -> tuple[Client, Client, Fanout, Fanout]:
    """Two servers' clients and fanouts, for whom everything is the space's; conversation conv-1."""
    conversation(url, "conv-1")
    a_client, b_client = Client(), Client()
    return a_client, b_client, Fanout(a_client, lambda cid: True), Fanout(b_client, lambda cid: True)


async def until(check, timeout: float = 10.0):
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.01)


async def test_two_servers_see_one_order_numbered_without_gaps(pg_url):
    a_client, b_client, a, b = two_servers(pg_url)
    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run, await feed(pg_url, "srv-a"))
        tg.start_soon(b.run, await feed(pg_url, "srv-b"))
        await until(lambda: a.feed is not None and b.feed is not None)
        for n in range(100):  # both at once, each sometimes several before the loop runs
            a.publish(delta("conv-1", f"a{n}"))
            if n % 3 == 0:
                b.publish(delta("conv-1", f"b{n}"))
            if n % 7 == 0:
                await anyio.sleep(0)
        await until(lambda: len(a_client.updates) == len(b_client.updates) == 134)
        tg.cancel_scope.cancel()
    seen_a = [(u.seq, u.text) for u in a_client.updates]
    seen_b = [(u.seq, u.text) for u in b_client.updates]
    assert seen_a == seen_b  # one order on both servers
    assert [seq for seq, _ in seen_a] == list(range(1, 135))  # numbered without a gap
    assert [t for _, t in seen_a if t[0] == "a"] == [f"a{n}" for n in range(100)]  # each server's in its own order
    assert [t for _, t in seen_a if t[0] == "b"] == [f"b{n}" for n in range(0, 100, 3)]
    assert all(isinstance(u, protocol.MessageDelta) and u.turn_id == "turn-1" for u in b_client.updates)


async def test_a_server_that_missed_notices_catches_up_in_order(pg_url):
    a_client, b_client, a, b = two_servers(pg_url)
    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run, await feed(pg_url, "srv-a"))
        b_scope = anyio.CancelScope()

        async def run_b(f, scope):
            with scope:
                await b.run(f)

        tg.start_soon(run_b, await feed(pg_url, "srv-b"), b_scope)
        await until(lambda: a.feed is not None and b.feed is not None)
        a.publish(delta("conv-1", "one"))
        await until(lambda: len(b_client.updates) == 1)
        b_scope.cancel()  # b's connection is gone: it hears nothing of the next two
        await until(lambda: b.feed is None)
        a.publish(delta("conv-1", "two"))
        a.publish(delta("conv-1", "three"))
        await until(lambda: len(a_client.updates) == 3)
        tg.start_soon(run_b, await feed(pg_url, "srv-b"), anyio.CancelScope())  # b back, as after a reconnect
        await until(lambda: b.feed is not None)
        a.publish(delta("conv-1", "four"))
        await until(lambda: len(b_client.updates) == 4)
        tg.cancel_scope.cancel()
    assert [(u.seq, u.text) for u in b_client.updates] == [(1, "one"), (2, "two"), (3, "three"), (4, "four")]


async def test_local_conversations_server_updates_and_an_offline_space_go_straight_to_the_clients(pg_url):
    conversation(pg_url, "conv-space")
    client = Client()
    fanout = Fanout(client, lambda cid: cid != "conv-local")
    fanout.publish(delta("conv-space", "offline"))  # no feed yet: unnumbered, at once
    assert [(u.seq, u.text) for u in client.updates] == [(None, "offline")]
    async with anyio.create_task_group() as tg:
        tg.start_soon(fanout.run, await feed(pg_url, "srv-a"))
        await until(lambda: fanout.feed is not None)
        fanout.publish(delta("conv-local", "local"))
        space = protocol.SpaceChanged(conversation_id="conv-space", space=protocol.SpaceInfo(name="team", member="ada", state="connected"))
        fanout.publish(space)  # about this server: never fanned out
        assert [u.seq for u in client.updates[1:]] == [None, None]
        fanout.publish(delta("conv-space", "shared"))
        fanout.publish(delta("conv-unknown-to-the-space", "x"))  # not the space's after all
        await until(lambda: len(client.updates) == 5)
        tg.cancel_scope.cancel()
    assert {(u.text, u.seq) for u in client.updates[3:]} == {("shared", 1), ("x", None)}
    fanout.show_message("info", "hi")  # the rest of the host's port is the host's
    assert client.updates[-1] == ("message", "info", "hi")


async def test_an_update_this_modus_does_not_know_or_too_large_or_a_malformed_notice_is_skipped_and_the_rest_delivered(pg_url):
    conversation(pg_url, "conv-1")
    client = Client()
    fanout = Fanout(client, lambda cid: True)
    newer = await feed(pg_url, "srv-newer")
    async with anyio.create_task_group() as tg:
        tg.start_soon(fanout.run, await feed(pg_url, "srv-a"))
        await until(lambda: fanout.feed is not None)
        huge = delta("conv-1", "x" * (2 << 20)).model_dump_json(by_alias=True)  # over the 1 MiB a peer's update may be
        await newer.append("conv-1", ['{"conversationId": "conv-1", "kind": "hologram"}', huge, delta("conv-1", "known").model_dump_json(by_alias=True)])
        async with newer._lock:  # anyone who can write to the space can NOTIFY anything
            await newer._writer.execute("SELECT pg_notify(%s, 'not numbers conv-1')", (newer.channel,))
        await newer.append("conv-1", [delta("conv-1", "after").model_dump_json(by_alias=True)])
        await until(lambda: len(client.updates) == 2)
        tg.cancel_scope.cancel()
    await newer.close()
    assert [(u.seq, u.text) for u in client.updates] == [(3, "known"), (4, "after")]


async def test_updates_older_than_a_day_are_forgotten_and_the_rest_kept(pg_url):
    import psycopg

    conversation(pg_url, "conv-1")
    writer = await feed(pg_url, "srv-a")
    await writer.append("conv-1", [delta("conv-1", t).model_dump_json(by_alias=True) for t in ("old", "older", "new")])
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("UPDATE events SET created_at = created_at - 2 * 86400 WHERE seq <= 2")
    assert await writer.prune() == 2
    assert [seq for seq, _ in await writer.read("conv-1", 0)] == [3]
    await writer.close()


async def test_two_spaces_in_one_database_hear_only_their_own(pg_url):
    """A space a schema (the URL's search_path): a NOTIFY reaches the whole database, so each
    space's feed has channels of its own; Bob of space B hears nothing of space A."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("CREATE SCHEMA team_a")
        db.execute("CREATE SCHEMA team_b")
    url_a, url_b = (f"{pg_url}?options=-csearch_path%3D{name}" for name in ("team_a", "team_b"))
    for url in (url_a, url_b):
        conversation(url, "conv-1")
    a_client, b_client = Client(), Client()
    a, b = Fanout(a_client, lambda cid: True), Fanout(b_client, lambda cid: True)
    a.member = b.member = "bob"
    async with anyio.create_task_group() as tg:
        feed_a = await feed(url_a, "srv-a")
        tg.start_soon(a.run, feed_a)
        tg.start_soon(b.run, await feed(url_b, "srv-b"))
        await until(lambda: a.feed is not None and b.feed is not None)
        a.publish(delta("conv-1", "only in a"))
        await feed_a.notify([("bob", {"conversationId": "conv-1", "from": "alice", "text": "@bob", "messageId": "msg-1"})])
        await until(lambda: len(a_client.updates) == 2)
        await anyio.sleep(0.3)
        tg.cancel_scope.cancel()
    assert {u.kind for u in a_client.updates} == {"message_delta", "notification"}
    assert b_client.updates == []
