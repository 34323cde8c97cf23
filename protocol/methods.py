"""The requests of the wire contract and the models their params and results are."""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel

from . import models as m
from .names import *  # noqa: F401,F403
from .names import (
    CHAT_CANCEL,
    CHAT_HISTORY,
    CHAT_SEND,
    MODES_LIST,
    MODES_SWITCH,
    PHASE_SET,
    PLAN_APPROVE,
    PLAN_REJECT,
    PROMPT_GET,
    STATE,
    TODOS_GET,
)


class Request(NamedTuple):
    params: type[BaseModel]
    result: type[BaseModel]


REQUESTS: dict[str, Request] = {
    STATE: Request(m.EmptyParams, m.State),
    MODES_LIST: Request(m.EmptyParams, m.ModesListResult),
    MODES_SWITCH: Request(m.ModesSwitchParams, m.State),
    PHASE_SET: Request(m.PhaseSetParams, m.State),
    CHAT_SEND: Request(m.ChatSendParams, m.ChatSendResult),
    CHAT_CANCEL: Request(m.ConversationParams, m.ChatCancelResult),
    CHAT_HISTORY: Request(m.ConversationParams, m.ChatHistoryResult),
    PROMPT_GET: Request(m.PromptGetParams, m.PromptGetResult),
    PLAN_APPROVE: Request(m.PlanDecisionParams, m.State),
    PLAN_REJECT: Request(m.PlanDecisionParams, m.State),
    TODOS_GET: Request(m.TodosGetParams, m.TodosGetResult),
}
