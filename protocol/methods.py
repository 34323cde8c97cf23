"""The requests of the wire contract and the models their params and results are."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple

from .names import *  # noqa: F401,F403
from .names import (
    CHECKPOINTS_DIFF,
    CHECKPOINTS_LIST,
    CHECKPOINTS_RESTORE,
    USAGE_GET,
    AGENTS_LIST,
    CHAT_CANCEL,
    CHAT_CONDENSE,
    CHAT_EDIT,
    CHAT_HISTORY,
    CHAT_IMAGE,
    CHAT_LIST,
    CHAT_OPEN,
    CHAT_RETRY,
    CHAT_SEND,
    CHAT_UNQUEUE,
    COMMANDS_LIST,
    MCP_LIST,
    MODES_LIST,
    MODES_SWITCH,
    PHASE_SET,
    PLAN_APPROVE,
    PLAN_REJECT,
    PROMPT_GET,
    RULES_LIST,
    SKILLS_LIST,
    SPACE_MEMBERS,
    MODELS_CHECK,
    STATE,
    TODOS_GET,
)


if TYPE_CHECKING:
    from pydantic import BaseModel


class Request(NamedTuple):
    """A request's params and result models, by name: a model is loaded when it is first used."""

    params_name: str
    result_name: str

    @property
    def params(self) -> type[BaseModel]:
        return getattr(import_module(__package__), self.params_name)

    @property
    def result(self) -> type[BaseModel]:
        return getattr(import_module(__package__), self.result_name)


REQUESTS: dict[str, Request] = {
    STATE: Request("EmptyParams", "State"),
    MODES_LIST: Request("EmptyParams", "ModesListResult"),
    MODES_SWITCH: Request("ModesSwitchParams", "State"),
    PHASE_SET: Request("PhaseSetParams", "State"),
    CHAT_SEND: Request("ChatSendParams", "ChatSendResult"),
    CHAT_CANCEL: Request("ConversationParams", "ChatCancelResult"),
    CHAT_HISTORY: Request("ChatHistoryParams", "ChatHistoryResult"),
    CHAT_LIST: Request("EmptyParams", "ChatListResult"),
    CHAT_OPEN: Request("MaybeConversationParams", "State"),
    CHAT_CONDENSE: Request("MaybeConversationParams", "CondenseResult"),
    CHAT_RETRY: Request("MaybeConversationParams", "ChatRetryResult"),
    CHAT_EDIT: Request("ChatEditParams", "ChatEditResult"),
    CHAT_UNQUEUE: Request("ChatUnqueueParams", "ChatUnqueueResult"),
    PROMPT_GET: Request("PromptGetParams", "PromptGetResult"),
    PLAN_APPROVE: Request("PlanDecisionParams", "State"),
    PLAN_REJECT: Request("PlanDecisionParams", "State"),
    TODOS_GET: Request("TodosGetParams", "TodosGetResult"),
    AGENTS_LIST: Request("EmptyParams", "AgentsListResult"),
    USAGE_GET: Request("MaybeConversationParams", "UsageGetResult"),
    CHECKPOINTS_LIST: Request("MaybeConversationParams", "CheckpointsListResult"),
    CHECKPOINTS_DIFF: Request("CheckpointParams", "CheckpointsDiffResult"),
    CHECKPOINTS_RESTORE: Request("CheckpointsRestoreParams", "CheckpointsRestoreResult"),
    MCP_LIST: Request("EmptyParams", "McpListResult"),
    RULES_LIST: Request("RulesListParams", "RulesListResult"),
    COMMANDS_LIST: Request("EmptyParams", "CommandsListResult"),
    SKILLS_LIST: Request("EmptyParams", "SkillsListResult"),
    MODELS_CHECK: Request("ModelCheckParams", "ModelCheckResult"),
    CHAT_IMAGE: Request("ChatImageParams", "ChatImageResult"),
    SPACE_MEMBERS: Request("EmptyParams", "SpaceMembersResult"),
}
