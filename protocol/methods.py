"""Method, command and notification names of the wire contract, and which model each carries."""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel

from . import models as m

PROTOCOL_VERSION = 1

# client -> server requests
STATE = "modus/state"
MODES_LIST = "modus/modes/list"
MODES_SWITCH = "modus/modes/switch"
PHASE_SET = "modus/phase/set"
CHAT_SEND = "modus/chat/send"
CHAT_CANCEL = "modus/chat/cancel"
CHAT_HISTORY = "modus/chat/history"
PROMPT_GET = "modus/prompt/get"
PLAN_APPROVE = "modus/plan/approve"
PLAN_REJECT = "modus/plan/reject"
TODOS_GET = "modus/todos/get"

# server -> client
UPDATE = "modus/update"
APPROVAL = "modus/approval"


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


class Command:
    """`workspace/executeCommand` names."""

    SWITCH_MODE = "modus.switchMode"
    SET_PHASE = "modus.setPhase"
    TOGGLE_PHASE = "modus.togglePhase"
    PLAN_SELECTION = "modus.planSelection"
    START_IN_MODE = "modus.startInMode"
    PLAN_APPROVE = "modus.plan.approve"
    PLAN_REJECT = "modus.plan.reject"
    SHOW_PROMPT = "modus.showPrompt"


CODE_ACTION_PLAN_KIND = "refactor.modus.plan"
CODE_ACTION_PLAN_TITLE = "Plan a change here"
