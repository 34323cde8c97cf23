"""Every payload of the wire contract (PROTOCOL.md) as a pydantic model.

Keys are camelCase on the wire and snake_case in Python. A field declared ``Opt[T]`` is one
the contract marks optional (``field?``): it is left out of the JSON when it is None. Every
other field is always present, ``null`` included, so clients can rely on the key.
"""

from typing import Annotated, Any, ClassVar, Literal, Optional, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, model_serializer
from pydantic.alias_generators import to_camel

T = TypeVar("T")


class _OmitIfNone:
    """Marker: drop the key from the JSON when the value is None."""


Opt = Annotated[Optional[T], _OmitIfNone()]


class Wire(BaseModel):
    """Base of every wire model: camelCase aliases, unknown keys ignored."""

    #: True for what clients send (settings, params, answers): its schema is the input schema.
    client_sent: ClassVar[bool] = False

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        defer_build=True,  # validators are built on first use: start-up stays fast
    )

    @model_serializer(mode="wrap")
    def _omit_unset_optionals(self, handler):
        data = handler(self)
        for name in _omittable(type(self)):
            if getattr(self, name) is None:
                data.pop(type(self).model_fields[name].alias or name, None)
                data.pop(name, None)
        return data

    def wire(self) -> dict[str, Any]:
        """The JSON object of this model, as it goes on the wire."""
        return self.model_dump(mode="json", by_alias=True)


_OMITTABLE: dict[type, tuple[str, ...]] = {}


def _omittable(cls: type[BaseModel]) -> tuple[str, ...]:
    names = _OMITTABLE.get(cls)
    if names is None:
        names = tuple(
            name
            for name, field in cls.model_fields.items()
            if any(isinstance(m, _OmitIfNone) for m in field.metadata)
        )
        _OMITTABLE[cls] = names
    return names


Phase = Literal["plan", "act"]
ModeSource = Literal["builtin", "global", "project"]
PlanState = Literal["normal", "planning", "awaiting_approval", "executing"]


# ---------------------------------------------------------------- settings (initializationOptions.modus)


class Input(Wire):
    """A payload the client sends: fields with a default may be left out."""

    client_sent: ClassVar[bool] = True


class Model(Input):
    """Which model a task talks to."""

    provider: Literal["scripted", "anthropic", "openai"] = "scripted"
    model: Opt[str] = None
    base_url: Opt[str] = None
    api_key_env: Opt[str] = Field(default=None, description="Name of the environment variable holding the API key")
    reasoning_effort: Opt[Literal["minimal", "low", "medium", "high"]] = None
    thinking_budget_tokens: Opt[int] = Field(default=None, ge=0)
    max_tokens: Opt[int] = Field(default=None, gt=0)
    script: Opt[str] = Field(default=None, description="Scripted provider: path of a YAML/JSON script")


class PhaseModels(Input):
    plan: Opt[Model] = None
    act: Opt[Model] = None


class ModeModels(Input):
    """A mode's model (set when `provider` is given) and its per-phase models."""

    provider: Opt[Literal["scripted", "anthropic", "openai"]] = None
    model: Opt[str] = None
    base_url: Opt[str] = None
    api_key_env: Opt[str] = None
    reasoning_effort: Opt[Literal["minimal", "low", "medium", "high"]] = None
    thinking_budget_tokens: Opt[int] = Field(default=None, ge=0)
    max_tokens: Opt[int] = Field(default=None, gt=0)
    script: Opt[str] = None
    plan: Opt[Model] = None
    act: Opt[Model] = None


class ModelsConfig(Input):
    default: Model = Field(default_factory=Model)
    phases: PhaseModels = Field(default_factory=PhaseModels)
    modes: dict[str, ModeModels] = Field(default_factory=dict)


class AgentConfig(Input):
    name: str = Field(pattern=r"^[\w-]+$")
    top_level: bool = True
    model: Opt[Model] = None
    instructions: Opt[str] = None


class Member(Input):
    handle: str = Field(pattern=r"^[\w-]+$")
    name: str


class AutoApprove(Input):
    mode_switch: bool = False
    read: bool = True
    edit: bool = False
    command: bool = False
    subtasks: bool = False
    mcp: bool = False


class Settings(Input):
    """`initializationOptions.modus`; the same object arrives in didChangeConfiguration."""

    models: ModelsConfig = Field(default_factory=ModelsConfig)
    agents: list[AgentConfig] = Field(default_factory=lambda: [AgentConfig(name="modus")], min_length=1)
    members: list[Member] = Field(default_factory=list)
    auto_approve: AutoApprove = Field(default_factory=AutoApprove)
    yolo: bool = False
    mode_switch_delay_ms: int = Field(default=500, ge=0)
    state_dir: Opt[str] = None
    command_timeout_seconds: float = Field(default=120.0, gt=0)
    #: From sending a model request to its first streamed event (connecting and the headers included).
    model_first_byte_timeout_seconds: float = Field(default=120.0, gt=0)
    #: The longest gap between two events of a model's stream once it has started.
    model_idle_timeout_seconds: float = Field(default=60.0, gt=0)
    max_consecutive_mistakes: int = Field(default=3, ge=1)
    max_requests_per_turn: int = Field(default=50, ge=1)


# ---------------------------------------------------------------- requests, client -> server


class EmptyParams(Input):
    pass


class ModesSwitchParams(Input):
    slug: str


class PhaseSetParams(Input):
    phase: Phase


class ChatSendParams(Input):
    text: str
    conversation_id: Opt[str] = None
    owner: Opt[str] = None


class ConversationParams(Input):
    conversation_id: str


class PromptGetParams(Input):
    mode: Opt[str] = None
    phase: Opt[Phase] = None
    agent: Opt[str] = None


class PlanDecisionParams(Input):
    feedback: Opt[str] = None


class TodosGetParams(Input):
    agent: Opt[str] = None


# ---------------------------------------------------------------- results


class ModeRef(Wire):
    slug: str
    name: str


class TaskModel(Wire):
    provider: str
    model: Optional[str] = None
    reasoning_effort: Optional[str] = None
    thinking_budget_tokens: Optional[int] = None
    max_tokens: Optional[int] = None


class TaskInfo(Wire):
    id: str
    mode: str
    phase: Phase
    model: TaskModel


class PlanInfo(Wire):
    state: PlanState = "normal"
    goal: Opt[str] = None
    scope: Opt[list[str]] = None
    plan_id: Opt[str] = None
    plan: Opt[dict[str, Any]] = None
    completed_steps: list[str] = Field(default_factory=list)


class State(Wire):
    mode: ModeRef
    phase: Phase
    conversation_id: str
    yolo: bool
    task: TaskInfo
    plan: PlanInfo = Field(default_factory=PlanInfo)


class GroupOptions(Wire):
    file_regex: Opt[str] = None
    description: Opt[str] = None


GroupEntry = Union[str, tuple[str, GroupOptions]]


class ModeInfo(Wire):
    slug: str
    name: str
    description: Optional[str] = None
    when_to_use: Optional[str] = None
    source: ModeSource
    groups: list[GroupEntry]


class ModesListResult(Wire):
    current: str
    modes: list[ModeInfo]


class Mention(Wire):
    raw: str
    kind: Literal["agent", "human"]
    name: str


class ChatSendResult(Wire):
    conversation_id: str
    message_id: str
    text: str
    dispatched: list[str]
    mentions: list[Mention] = Field(default_factory=list)


class ChatCancelResult(Wire):
    cancelled: bool


class HistoryMessage(Wire):
    id: str
    role: Literal["user", "assistant", "system", "tool"]
    agent: Opt[str] = None
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class ChatHistoryResult(Wire):
    messages: list[HistoryMessage]


class PromptSection(Wire):
    id: str
    text: str


class PromptGetResult(Wire):
    text: str
    sections: list[PromptSection]
    tools: list[str]
    environment_details: str


class Todo(Wire):
    id: str
    content: str
    status: Literal["pending", "in_progress", "completed"] = "pending"
    priority: Literal["high", "medium", "low"] = "medium"
    created_at: Opt[str] = None
    updated_at: Opt[str] = None


class TodosGetResult(Wire):
    agent: str
    todos: list[Todo]
    ansi: str
    html: str


# ---------------------------------------------------------------- server -> client: modus/update


class _UpdateBase(Wire):
    conversation_id: str
    agent: Opt[str] = None
    task_id: Opt[str] = None


class TurnStarted(_UpdateBase):
    kind: Literal["turn_started"] = "turn_started"
    turn_id: str
    agent: str
    woken_by: Opt[str] = None


class MessageDelta(_UpdateBase):
    kind: Literal["message_delta"] = "message_delta"
    turn_id: str
    text: str


class MessageUpdate(_UpdateBase):
    kind: Literal["message"] = "message"
    turn_id: Opt[str] = None
    role: Literal["assistant", "user", "system"]
    text: str


class ToolError(Wire):
    type: str
    message: str


class ToolCallUpdate(_UpdateBase):
    kind: Literal["tool_call"] = "tool_call"
    turn_id: str
    tool_call_id: str
    name: str
    params: dict[str, Any]
    status: Literal["pending", "running", "completed", "failed"]
    result: Opt[str] = None
    error: Opt[ToolError] = None


class ModeChanged(_UpdateBase):
    kind: Literal["mode_changed"] = "mode_changed"
    from_: str = Field(alias="from")
    to: str
    task_id: str
    reason: Opt[str] = None
    by: Literal["user", "model"]


class PhaseChanged(_UpdateBase):
    kind: Literal["phase_changed"] = "phase_changed"
    from_: Phase = Field(alias="from")
    to: Phase
    task_id: str


class PlanUpdate(_UpdateBase):
    kind: Literal["plan"] = "plan"
    state: PlanState
    plan: Opt[dict[str, Any]] = None
    markdown: Opt[str] = None
    completed_steps: list[str] = Field(default_factory=list)


class TodosUpdate(_UpdateBase):
    kind: Literal["todos"] = "todos"
    agent: str
    todos: list[Todo]


class TurnEnded(_UpdateBase):
    kind: Literal["turn_ended"] = "turn_ended"
    turn_id: str
    agent: str
    outcome: Literal["completed", "failed", "cancelled", "awaiting_user"]


Update = Annotated[
    Union[
        TurnStarted,
        MessageDelta,
        MessageUpdate,
        ToolCallUpdate,
        ModeChanged,
        PhaseChanged,
        PlanUpdate,
        TodosUpdate,
        TurnEnded,
    ],
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------- server -> client: modus/approval


class ApprovalRequest(Wire):
    #: `continue`: the turn reached maxRequestsPerTurn; approving lets it go on.
    kind: Literal["switch_mode", "tool", "plan", "subtask", "continue"]
    title: str
    detail: str
    tool: Opt[str] = None
    params: Opt[dict[str, Any]] = None
    agent: Opt[str] = None
    from_: Opt[str] = Field(default=None, alias="from")
    to: Opt[str] = None
    reason: Opt[str] = None


class ApprovalResponse(Input):
    decision: Literal["approve", "deny", "revise"]
    feedback: Opt[str] = None


# ---------------------------------------------------------------- commands (workspace/executeCommand)


class PlanSelectionArgs(Input):
    uri: str
    range: dict[str, Any]
    goal: Opt[str] = None


class StartInModeArgs(Input):
    mode: str
    uri: str
    range: dict[str, Any]
    prompt: str
