"""What the core asks of the state: the operations, not SQL.

`Store` (SQLite, one file a workspace) implements it, and `pg.SpaceStore` on a team space's
PostgreSQL database, without a change to the core. The contract of every implementation:

- A write has committed when its method returns, so the update that announces it goes out after.
- Rows come back as plain values: StoredMessage, ConversationRow, tuples, dicts, lists.
- Plans: a dict with the keys of store.PLAN_FIELDS; todos: dicts with store.TODO_FIELDS.
"""

from __future__ import annotations

from typing import Any, ContextManager, Mapping, Protocol, Sequence, runtime_checkable

from .records import ConversationRow, Recovered, StoredMessage, LISTED_CONVERSATIONS


@runtime_checkable
class StateStore(Protocol):
    #: A damaged store that was put aside for a fresh one, for the user to be told; else None.
    recovered: Recovered | None

    def close(self) -> None: ...

    def transaction(self) -> ContextManager[None]:
        """The writes in the block commit together, or not at all. No `await` inside."""
        ...

    # -- turns: a turn without an outcome was running when the server stopped

    def start_turn(self, turn_id: str, conversation_id: str, agent: str) -> None: ...

    def end_turn(self, turn_id: str, outcome: str) -> None: ...

    def reopen_turn(self, turn_id: str) -> None:
        """The turn runs again after it ended (a Stop hook sent it on): open until it ends again."""
        ...

    def open_turns(self) -> list[tuple[str, str, str]]:
        """(turn id, conversation id, agent) of the turns that never ended, oldest first."""
        ...

    def unanswered_calls(self, conversation_id: str) -> list[dict[str, Any]]:
        """The tool calls of the conversation's last assistant message that have no result."""
        ...

    def subconversations(self, conversation_id: str) -> list[str]:
        """The conversation and its subtasks' conversations, all levels down."""
        ...

    def last_seq(self, conversation_id: str) -> int:
        """The number of the conversation's last message (0: none yet)."""
        ...

    def cut_after(self, conversation_id: str, seq: int) -> int:
        """Mark the messages after `seq` as cut: kept, no longer read; returns how many were."""
        ...

    # -- usage: one row per model request (store.USAGE_FIELDS)

    def add_usage(self, row: Mapping[str, Any]) -> None: ...

    def usage(self, conversation_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The rows of these conversations (None: all), oldest first."""
        ...

    def usage_total(self, conversation_id: str) -> dict[str, Any]:
        """The conversation's rows summed (the Usage fields); its cost None when one of theirs is."""
        ...

    # -- meta: small facts about the workspace (current mode, phase, conversation)

    def get_meta(self, key: str, default: str | None = None) -> str | None: ...

    def set_meta(self, **values: str) -> None: ...

    # -- conversations and messages

    def ensure_conversation(self, conversation_id: str, owner: str | None = None, parent_id: str | None = None) -> bool:
        """Create the conversation if new; True when it was created."""
        ...

    def conversation_exists(self, conversation_id: str) -> bool: ...

    def conversation_parent(self, conversation_id: str) -> str | None: ...

    def conversation_owner(self, conversation_id: str) -> str | None: ...

    def conversations(self, limit: int = LISTED_CONVERSATIONS) -> list[ConversationRow]:
        """Top-level conversations with messages, the most recently updated first, at most `limit`."""
        ...

    def add_message(self, message: StoredMessage) -> StoredMessage: ...

    def last_speaker(self, conversation_id: str, agents: list[str]) -> str | None: ...

    def messages(self, conversation_id: str) -> list[StoredMessage]: ...

    def history(self, conversation_id: str, before: int | None = None, limit: int = 50) -> list[tuple[int, StoredMessage]]:
        """(number, message) of the `limit` messages just before number `before` (the newest
        without it), oldest first; cut messages apart (modus/chat/history)."""
        ...

    def locate_message(self, conversation_id: str, message_id: str) -> tuple[StoredMessage, int, bool] | None:
        """The conversation's message of that id, cut or not: (it, its number, whether it was cut)."""
        ...

    def last_with(self, conversation_id: str, key: str) -> StoredMessage | None:
        """The conversation's last message (cut ones apart) whose metadata has `key`."""
        ...

    def first_after(self, conversation_id: str, seq: int) -> str | None:
        """The id of the conversation's first message after number `seq` (cut ones apart)."""
        ...

    def metadata_values(self, conversation_ids: Sequence[str], key: str) -> list[Any]:
        """The value of metadata `key` of each message of these conversations that has one (cut
        messages apart), in the order they were written."""
        ...

    # -- images: each stored once, by the hash of its bytes

    def put_image(self, conversation_id: str | None, mime_type: str, data: bytes) -> str:
        """The image stored (the same bytes: the same row, stored once); its id."""
        ...

    def image(self, image_id: str) -> tuple[str, bytes] | None:
        """(its MIME type, its bytes); None for an unknown id."""
        ...

    # -- tasks: which mode and phase each task ran in

    def add_task(
        self, task_id: str, agent: str, mode: str, phase: str, conversation_id: str | None, parent_id: str | None, replaces: str | None
    ) -> None: ...

    # -- plans and the agent's plan state

    def plan_create(self, agent: str, goal: str, scope: list[str] | None = None, conversation_id: str | None = None) -> dict[str, Any]:
        """A new plan of the agent, in state `planning`."""
        ...

    def plan_get(self, plan_id: str) -> dict[str, Any] | None: ...

    def plan_update(self, plan_id: str, **fields: Any) -> dict[str, Any]: ...

    def current_plan(self, agent: str) -> tuple[str, dict[str, Any] | None]:
        """The agent's plan state and its current plan (None in state `normal`)."""
        ...

    def set_plan_state(self, agent: str, state: str, plan_id: str | None = None) -> None: ...

    # -- todos: the agent's, across conversations

    def todos(self, agent: str) -> list[dict[str, Any]]: ...

    def replace_todos(self, agent: str, items: Sequence[Mapping[str, Any]]) -> None: ...


@runtime_checkable
class SpaceTurns(Protocol):
    """What only a team space's store does beyond StateStore (pg.SpaceStore): turns across the
    servers attached to it (PROTOCOL.md, "Team spaces on PostgreSQL")."""

    def busy(self, conversation_id: str, agent: str) -> bool:
        """The agent runs a turn in the conversation on another server (its lease alive)."""
        ...

    def claim_turn(self, turn_id: str) -> bool:
        """Close another server's turn whose lease ran out: True for the one server that does."""
        ...

    def claim_own_turn(self, turn_id: str) -> bool:
        """Close a turn of this server that ended while the space was out of reach."""
        ...
