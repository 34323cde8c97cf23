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
