"""Usage and cost: each model request's tokens and cost, stored and announced, and the sums a
client asks for (in total, per task, per mode and phase, per agent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import protocol

from ..errors import BadRequest
from ..host import Host
from ..state import StateStore

if TYPE_CHECKING:
    from ..providers.base import Usage as ModelUsage
    from .task import Task


class UsageBook:
    def __init__(self, store: StateStore, host: Host):
        self.store = store
        self.host = host

    def record(self, conversation_id: str, task: Task, usage: ModelUsage) -> None:
        """One model request's tokens and cost (None when the model's price is unknown): stored,
        then announced."""
        from ..providers.catalog import cost, price_of

        row = {
            "conversation_id": conversation_id,
            "task_id": task.id,
            "agent": task.agent,
            "mode": task.mode.slug,
            "phase": task.phase,
            "model": task.model_config.model,
            **usage._asdict(),
            "cost": cost(usage, price_of(task.model_config)),
        }
        self.store.add_usage(row)
        fields = {k: v for k, v in row.items() if k not in ("conversation_id", "model")}
        self.host.publish(protocol.UsageUpdate(conversation_id=conversation_id, **fields))

    def total(self, conversation_id: str) -> protocol.Usage:
        return protocol.Usage(**self.store.usage_total(conversation_id))

    def of(self, cid: str) -> protocol.UsageGetResult:
        """The conversation's usage, summed in total, per task, per mode and phase, and per
        agent. A sum's cost is None when one of its requests' is."""
        if not self.store.conversation_exists(cid):
            raise BadRequest(f"conversationId: unknown conversation: {cid}")
        rows = self.store.usage([cid])
        by_mode: dict[str, dict[str, list]] = {}
        for r in rows:
            by_mode.setdefault(r["mode"], {}).setdefault(r["phase"], []).append(r)
        return protocol.UsageGetResult(
            total=summed(rows),
            by_task={t: summed([r for r in rows if r["task_id"] == t]) for t in dict.fromkeys(r["task_id"] for r in rows)},
            by_mode={m: protocol.UsageByPhase(**{p: summed(rs) for p, rs in phases.items()}) for m, phases in by_mode.items()},
            by_agent={a: summed([r for r in rows if r["agent"] == a]) for a in dict.fromkeys(r["agent"] for r in rows)},
        )


def summed(rows: list[dict]) -> protocol.Usage:
    costs = [r["cost"] for r in rows]
    return protocol.Usage(
        input_tokens=sum(r["input_tokens"] for r in rows),
        output_tokens=sum(r["output_tokens"] for r in rows),
        cache_read_tokens=sum(r["cache_read_tokens"] for r in rows),
        cache_write_tokens=sum(r["cache_write_tokens"] for r in rows),
        cost=None if None in costs else round(sum(costs), 10),
    )
