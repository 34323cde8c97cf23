"""Which store a conversation lives in (server/state/routed.py): the space's while attached,
local otherwise; a subtask's with its parent; the space's known locally when it is offline."""

from __future__ import annotations

import pytest

from server.errors import RequestFailed
from server.state import Store, StoredMessage
from server.state.routed import Routed


@pytest.fixture
def stores(tmp_path, pg_url):
    from server.state.pg import SpaceStore

    local, space = Store(tmp_path / "state"), SpaceStore(pg_url)
    yield local, space
    space.close()
    local.close()


def test_a_conversation_lives_where_it_started_and_its_subtasks_with_it(stores):
    local, space = stores
    routed = Routed(local)
    routed.ensure_conversation("conv-local")
    routed.attach(space, "team")
    routed.ensure_conversation("conv-shared")
    routed.ensure_conversation("conv-sub", parent_id="conv-local")
    routed.ensure_conversation("conv-shared-sub", parent_id="conv-shared")
    for cid in ("conv-local", "conv-shared", "conv-sub", "conv-shared-sub"):
        routed.add_message(StoredMessage(f"m-{cid}", cid, "user", cid, None, {}))
    assert [local.conversation_exists(c) for c in ("conv-local", "conv-sub", "conv-shared", "conv-shared-sub")] == [True, True, False, False]
    assert [space.conversation_exists(c) for c in ("conv-shared", "conv-shared-sub")] == [True, True]
    assert [seq for seq, _ in routed.history("conv-shared")] == [1]
    assert {r.id for r in routed.conversations()} == {"conv-local", "conv-shared"}

    routed.detach("team", "cannot connect to the space's PostgreSQL at h:5432/db: refused")
    routed.ensure_conversation("conv-offline")
    assert local.conversation_exists("conv-offline")
    assert [m.text for m in routed.messages("conv-local")] == ["conv-local"]
    with pytest.raises(RequestFailed, match="conv-shared belongs to the space 'team', which is not connected: .*h:5432/db"):
        routed.messages("conv-shared")
    fresh = Routed(local)  # a server started later, offline: the local store remembers whose it is
    assert fresh.conversation_exists("conv-shared") and not fresh.reachable("conv-shared")
    with pytest.raises(RequestFailed, match="'team'"):
        fresh.add_message(StoredMessage("m-2", "conv-shared", "user", "lost?", None, {}))


async def test_an_offline_space_is_tried_again_with_growing_waits_until_it_answers(tmp_path, monkeypatch):
    import anyio

    from memory_host import MemoryHost
    from protocol import Settings
    from server.agent import space as space_module
    from server.agent.fanout import Fanout
    from server.agent.space import SpaceLink

    class FakeSpace:
        closed = False

        def close(self):
            self.closed = True

    attempts, waits = [], []

    def opening(settings, opened, lost, origin):
        attempts.append(settings.name)
        if len(attempts) < 3:
            raise OSError("connection refused by postgresql://alice:pw@h:5432/db, password pw")
        opened.append(FakeSpace())

    real_sleep = anyio.sleep

    async def sleep(seconds):
        waits.append(seconds)
        await real_sleep(0)

    class FakeFeed:
        async def notices(self):
            await anyio.sleep_forever()
            yield

        async def close(self):
            pass

        async def here(self, handle, display_name):
            pass

        async def members(self):
            return [("alice", None, True)]

        async def notify(self, notices):
            pass

        async def leave(self):
            pass

        async def renew(self):
            return []

        async def prune(self):
            return 0

    async def feed(settings, origin):
        return FakeFeed()

    monkeypatch.setattr(space_module, "_open", opening)
    monkeypatch.setattr(space_module, "_open_feed", feed)
    monkeypatch.setattr(space_module.anyio, "sleep", sleep)
    local = Store(tmp_path / "state")
    routed, host = Routed(local), MemoryHost()
    fanout = Fanout(host, routed.in_space)
    settings = Settings.model_validate({"space": {"url": "postgresql://alice:pw@h:5432/db", "name": "team", "member": "alice"}})
    link = SpaceLink(routed, fanout, lambda: settings, lambda: "conv-1", lambda cid: None, changed=lambda: None)
    async with anyio.create_task_group() as tg:
        link.serve(tg)
        with anyio.fail_after(5):
            while link.info is None or link.info.state != "connected":
                await real_sleep(0.01)
        link.serve(None)
    assert [u.space.state for u in host.of_kind("space_changed")] == ["connecting", "offline", "offline", "connected"]
    assert waits[:2] == [1.0, 2.0] and set(waits[2:]) <= {space_module.HERE_SECONDS}  # then only the presence beats
    errors = [u.space.error for u in host.of_kind("space_changed") if u.space.error]
    assert all("h:5432/db" in e and "pw" not in e.replace("h:5432", "") for e in errors), errors
    assert routed.space is None  # detached when the session stopped
    local.close()


def test_a_space_conversation_out_of_reach_is_set_aside_and_current_again_unless_the_user_moved_on(stores):
    from server.agent.space import RESUME_KEY, Resume

    local, space = stores
    routed = Routed(local)
    current = [""]

    def make_current(cid):
        routed.ensure_conversation(cid)
        current[0] = cid

    routed.attach(space, "team")
    make_current("conv-shared")
    routed.add_message(StoredMessage("m-1", "conv-shared", "user", "hi", None, {}))
    resume = Resume(routed, lambda: current[0], make_current)
    resume.set_aside()  # attached: it can be read
    assert current == ["conv-shared"] and resume.remembered() is None

    routed.detach("team")
    resume.set_aside()
    stand_in = current[0]
    assert stand_in != "conv-shared" and local.conversation_exists(stand_in)
    assert local.get_meta(RESUME_KEY) == "conv-shared"  # a restart knows it
    resume.set_aside()  # the stand-in is local: nothing more
    assert current == [stand_in] and resume.remembered() == "conv-shared"
    routed.attach(space, "team")
    assert resume.take_back() and current == ["conv-shared"] and resume.remembered() is None
    assert not resume.take_back() and current == ["conv-shared"]

    routed.detach("team")
    resume.set_aside()
    stand_in = current[0]
    routed.add_message(StoredMessage("m-2", stand_in, "user", "meanwhile", None, {}))  # the user moved on
    routed.attach(space, "team")
    assert not resume.take_back() and current == [stand_in] and resume.remembered() is None

    local.set_meta(**{RESUME_KEY: "conv-of-another-space"})  # not this space's: kept for its own
    assert not resume.take_back() and current == [stand_in] and resume.remembered() == "conv-of-another-space"


async def test_a_flood_of_presence_notices_reads_the_members_one_at_a_time(tmp_path, monkeypatch):
    """Anyone who can write to the space can NOTIFY: a thousand presence notices (and malformed
    ones) make one read of the members at a time and one more after it, never a task each."""
    import anyio

    from memory_host import MemoryHost
    from protocol import Settings
    from server.agent import space as space_module
    from server.agent.fanout import Fanout, presence
    from server.agent.space import SpaceLink

    reads, running, most = [], [0], [0]

    class FakeSpace:
        def close(self):
            pass

    class FakeFeed:
        async def notices(self):
            await anyio.sleep_forever()
            yield

        async def here(self, handle, display_name):
            pass

        async def notify(self, notices):
            pass

        async def members(self):
            reads.append(1)
            running[0] += 1
            most[0] = max(most[0], running[0])
            await anyio.sleep(0.05)
            running[0] -= 1
            return [("alice", None, True), ("bob", None, len(reads) > 1)]

        async def leave(self):
            pass

        async def close(self):
            pass

        async def renew(self):
            return []

        async def prune(self):
            return 0

    async def feed(settings, origin):
        return FakeFeed()

    monkeypatch.setattr(space_module, "_open", lambda settings, opened, lost, origin: opened.append(FakeSpace()))
    monkeypatch.setattr(space_module, "_open_feed", feed)
    local = Store(tmp_path / "state")
    routed, host = Routed(local), MemoryHost()
    fanout = Fanout(host, routed.in_space)
    settings = Settings.model_validate({"space": {"url": "postgresql://alice@h/db", "name": "team", "member": "alice"}})
    link = SpaceLink(routed, fanout, lambda: settings, lambda: "conv-1", lambda cid: None, changed=lambda: None)
    async with anyio.create_task_group() as tg:
        link.serve(tg)
        with anyio.fail_after(5):
            await link.settled(5)
        attach_reads = len(reads)
        for n in range(1000):
            to, notice = presence("bob")
            fanout._notified({**notice, "to": to})
            fanout._notified({"to": "*", "presence": ["not", "a", "handle"]})  # skipped
        fanout._notified({"to": "*", "presence": "alice"})  # this server's own: nothing to read
        await anyio.sleep(0.01)  # the read is under way: what comes now makes one more after it
        for n in range(1000):
            fanout._notified({"to": "*", "presence": "bob"})
        with anyio.fail_after(5):
            while link._people_reading:
                await anyio.sleep(0.01)
        link.serve(None)
    assert attach_reads == 1
    assert len(reads) - attach_reads == 2 and most[0] == 1  # one read for the first thousand, one for those during it
    assert ("bob", None, True) in link._people
    local.close()
