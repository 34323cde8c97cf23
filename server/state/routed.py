"""Which store a conversation lives in: the workspace's SQLite store, or the team space's
PostgreSQL store (PROTOCOL.md, "Team spaces on PostgreSQL").

`Routed` is the StateStore interface over both. A conversation started while a space is attached
belongs to the space; one started without a space, or while it is offline, is local; a subtask's
conversation lives with its parent. The local store remembers which conversations are the space's
(its `meta`, key `space:<id>`), so that a server that starts offline knows them and refuses a
request on one (RequestFailed naming the space) rather than starting it anew locally.

What follows a conversation: its messages, turns, tasks, usage and images. The agents' plans, plan
state and todos (the agent's across conversations) are the space's while one is attached (the
team's agent), else the workspace's. What stays local: the workspace's `meta` (current
conversation, mode, phase), and checkpoints (not in the store). The turns left open by a crash
are looked for locally only: a space's turns are other servers' too (SpaceLink closes those, by
their lease).
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from typing import Any, Iterator, Mapping, Sequence

from ..errors import RequestFailed
from .records import ConversationRow, StoredMessage, LISTED_CONVERSATIONS

#: The local meta key that says a conversation is the space's (its value: the space's name).
SPACE_KEY = "space:"


class Routed:
    """The local store, and the space's when one is attached (`attach`, `detach`)."""

    def __init__(self, local: Any):
        self.local = local
        self.recovered = local.recovered
        #: the space's store while attached; its name, and why it is unreachable, for the refusal
        self.space: Any = None
        self.space_name: str | None = None
        self.space_error: str | None = None
        #: conversation id → True (the space's) / False (local), as found
        self._homes: dict[str, bool] = {}
        #: running turn id → (its conversation, its agent)
        self._turns: dict[str, tuple[str, str]] = {}
        #: (turn id, conversation, agent) of the space's turns that ended while it was out of reach
        self.unended: list[tuple[str, str, str]] = []

    # -- the space

    def attach(self, space: Any, name: str) -> None:
        self.space, self.space_name, self.space_error = space, name, None

    def detach(self, name: str | None, error: str | None = None) -> Any:
        """Stop using the space's store (returned, for its owner to close)."""
        space, self.space = self.space, None
        self.space_name, self.space_error = name, error
        return space

    def in_space(self, cid: str) -> bool | None:
        """True: the space's; False: local; None: no such conversation (yet)."""
        home = self._homes.get(cid)
        if home is not None:
            return home
        if self.local.conversation_exists(cid):
            home = False
        elif self.local.get_meta(SPACE_KEY + cid) is not None:
            home = True
        elif self.space is not None and self.space.conversation_exists(cid):
            self.local.set_meta(**{SPACE_KEY + cid: self.space_name or ""})
            home = True
        else:
            return None
        self._homes[cid] = home
        return home

    def reachable(self, cid: str) -> bool:
        return not self.in_space(cid) or self.space is not None

    def _refused(self, cid: str) -> RequestFailed:
        name = self.local.get_meta(SPACE_KEY + cid) or self.space_name
        why = f": {self.space_error}" if self.space_error else ""
        return RequestFailed(f"conversation {cid} belongs to the space '{name}', which is not connected{why}")

    def _for(self, cid: str | None) -> Any:
        if cid is None or not self.in_space(cid):
            return self.local
        if self.space is None:
            raise self._refused(cid)
        return self.space

    # -- the interface

    def close(self) -> None:
        self.local.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with ExitStack() as stack:
            stack.enter_context(self.local.transaction())
            if self.space is not None:
                stack.enter_context(self.space.transaction())
            yield

    def start_turn(self, turn_id: str, conversation_id: str, agent: str) -> None:
        self._for(conversation_id).start_turn(turn_id, conversation_id, agent)
        self._turns[turn_id] = (conversation_id, agent)

    def end_turn(self, turn_id: str, outcome: str) -> None:
        """In the store of the turn's conversation as it is now (a space reattached meanwhile:
        the new connection). A space turn whose end cannot be stored is remembered (`unended`),
        for the link to close once the space is back."""
        found = self._turns.pop(turn_id, None)
        if found is None:
            self.local.end_turn(turn_id, outcome)
            return
        try:
            self._for(found[0]).end_turn(turn_id, outcome)
        except RequestFailed:
            self.unended.append((turn_id, *found))
            raise

    def reopen_turn(self, turn_id: str) -> None:
        found = self._turns.get(turn_id)
        self._for(found[0] if found else None).reopen_turn(turn_id)

    def open_turns(self) -> list[tuple[str, str, str]]:
        return self.local.open_turns()

    def unanswered_calls(self, conversation_id: str) -> list[dict[str, Any]]:
        return self._for(conversation_id).unanswered_calls(conversation_id)

    def subconversations(self, conversation_id: str) -> list[str]:
        return self._for(conversation_id).subconversations(conversation_id)

    def last_seq(self, conversation_id: str) -> int:
        return self._for(conversation_id).last_seq(conversation_id)

    def cut_after(self, conversation_id: str, seq: int) -> int:
        return self._for(conversation_id).cut_after(conversation_id, seq)

    def add_usage(self, row: Mapping[str, Any]) -> None:
        self._for(row.get("conversation_id")).add_usage(row)

    def usage(self, conversation_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        if conversation_ids is None:
            return self.local.usage(None) + (self.space.usage(None) if self.space is not None else [])
        if not conversation_ids:
            return []
        return self._for(conversation_ids[0]).usage(conversation_ids)  # one conversation's tree: one home

    def usage_total(self, conversation_id: str) -> dict[str, Any]:
        return self._for(conversation_id).usage_total(conversation_id)

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        return self.local.get_meta(key, default)

    def set_meta(self, **values: str) -> None:
        self.local.set_meta(**values)

    def ensure_conversation(self, conversation_id: str, owner: str | None = None, parent_id: str | None = None) -> bool:
        home = self.in_space(conversation_id)
        if home is None:  # new: with its parent, else in the space while attached
            home = self.in_space(parent_id) if parent_id is not None else self.space is not None
            if home:
                self.local.set_meta(**{SPACE_KEY + conversation_id: self.space_name or ""})
        store = self.space if home else self.local
        if home and store is None:
            raise self._refused(conversation_id)
        created = store.ensure_conversation(conversation_id, owner, parent_id)
        self._homes[conversation_id] = bool(home)
        return created

    def conversation_exists(self, conversation_id: str) -> bool:
        return self.in_space(conversation_id) is not None

    def conversation_parent(self, conversation_id: str) -> str | None:
        return self._for(conversation_id).conversation_parent(conversation_id)

    def conversation_owner(self, conversation_id: str) -> str | None:
        return self._for(conversation_id).conversation_owner(conversation_id)

    def conversations(self, limit: int = LISTED_CONVERSATIONS) -> list[ConversationRow]:
        rows = self.local.conversations(limit)
        if self.space is not None:
            rows = sorted(rows + self.space.conversations(limit), key=lambda r: (-r.updated_at, r.id))[:limit]
        return rows

    def add_message(self, message: StoredMessage) -> StoredMessage:
        return self._for(message.conversation_id).add_message(message)

    def last_speaker(self, conversation_id: str, agents: list[str]) -> str | None:
        return self._for(conversation_id).last_speaker(conversation_id, agents)

    def messages(self, conversation_id: str) -> list[StoredMessage]:
        return self._for(conversation_id).messages(conversation_id)

    def history(self, conversation_id: str, before: int | None = None, limit: int = 50) -> list[tuple[int, StoredMessage]]:
        return self._for(conversation_id).history(conversation_id, before, limit)

    def locate_message(self, conversation_id: str, message_id: str) -> tuple[StoredMessage, int, bool] | None:
        return self._for(conversation_id).locate_message(conversation_id, message_id)

    def last_with(self, conversation_id: str, key: str) -> StoredMessage | None:
        return self._for(conversation_id).last_with(conversation_id, key)

    def first_after(self, conversation_id: str, seq: int) -> str | None:
        return self._for(conversation_id).first_after(conversation_id, seq)

    def metadata_values(self, conversation_ids: Sequence[str], key: str) -> list[Any]:
        if not conversation_ids:
            return []
        return self._for(conversation_ids[0]).metadata_values(conversation_ids, key)

    def put_image(self, conversation_id: str | None, mime_type: str, data: bytes) -> str:
        return self._for(conversation_id).put_image(conversation_id, mime_type, data)

    def image(self, image_id: str) -> tuple[str, bytes] | None:
        found = self.local.image(image_id)
        if found is None and self.space is not None:
            found = self.space.image(image_id)
        return found

    def add_task(
        self, task_id: str, agent: str, mode: str, phase: str, conversation_id: str | None, parent_id: str | None, replaces: str | None
    ) -> None:
        self._for(conversation_id).add_task(task_id, agent, mode, phase, conversation_id, parent_id, replaces)

    # plans and todos: the agent's across conversations; the space's (the team's agent) while
    # one is attached, else the workspace's own

    def _agents(self) -> Any:
        return self.space if self.space is not None else self.local

    def plan_create(self, agent: str, goal: str, scope: list[str] | None = None, conversation_id: str | None = None) -> dict[str, Any]:
        return self._agents().plan_create(agent, goal, scope, conversation_id)

    def plan_get(self, plan_id: str) -> dict[str, Any] | None:
        return self._agents().plan_get(plan_id)

    def plan_update(self, plan_id: str, **fields: Any) -> dict[str, Any]:
        return self._agents().plan_update(plan_id, **fields)

    def current_plan(self, agent: str) -> tuple[str, dict[str, Any] | None]:
        return self._agents().current_plan(agent)

    def set_plan_state(self, agent: str, state: str, plan_id: str | None = None) -> None:
        self._agents().set_plan_state(agent, state, plan_id)

    def todos(self, agent: str) -> list[dict[str, Any]]:
        return self._agents().todos(agent)

    def replace_todos(self, agent: str, items: Sequence[Mapping[str, Any]]) -> None:
        self._agents().replace_todos(agent, items)
