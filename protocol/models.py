"""The payloads of the wire contract (PROTOCOL.md) that a session starts with, as pydantic
models: the settings, and the state that `modus/state` answers. The others (requests, updates,
approvals) are in messages.py, loaded with their first use; `protocol` gives both by name.

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
        for name in omittable(type(self)):
            if getattr(self, name) is None:
                data.pop(type(self).model_fields[name].alias or name, None)
                data.pop(name, None)
        return data

    def wire(self) -> dict[str, Any]:
        """The JSON object of this model, as it goes on the wire."""
        return self.model_dump(mode="json", by_alias=True)


_OMITTABLE: dict[type, tuple[str, ...]] = {}


def omittable(cls: type[BaseModel]) -> tuple[str, ...]:
    """The fields of `cls` declared `Opt`: left out of the JSON when None."""
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


class _Decides:
    """Marker: the setting decides what runs or where requests go."""


#: Marks a setting that decides what runs or where requests go: a model's endpoint or the
#: variable its key is read from, what runs without asking (yolo, auto-approval, how many requests
#: a turn makes before asking to go on), what starts by itself (MCP servers at launch), where
#: state is written, which file of the machine is read as modes (globalModesFile). Such a
#: setting from a workspace's file (a cloned repository's) applies only once the user trusted it:
#: server/settings.py finds them in the validated settings (`decisive`), whatever spelling set
#: them. A new setting of that kind is declared `Annotated[T, DECIDES]` here, and the trust follows.
DECIDES = _Decides()


def decisive(model: BaseModel) -> list[tuple[str, ...]]:
    """Where in `model` (as validated) a setting marked `DECIDES` is set: each as its path of
    camelCase keys (list items by index), in the order of the fields."""
    found: list[tuple[str, ...]] = []
    for name, field in type(model).model_fields.items():
        if name not in model.model_fields_set:
            continue
        key = field.alias or name
        if any(m is DECIDES for m in field.metadata):
            found.append((key,))
        else:
            found += [(key, *path) for path in _decisive_in(getattr(model, name))]
    return found


def _decisive_in(value: Any) -> list[tuple[str, ...]]:
    if isinstance(value, BaseModel):
        return decisive(value)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [(str(k), *path) for k, v in items for path in _decisive_in(v)]


class Pricing(Input):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: Opt[float] = Field(default=None, ge=0)
    cache_write: Opt[float] = Field(default=None, ge=0)


class Model(Input):
    """Which model a task talks to."""

    provider: Literal["scripted", "anthropic", "openai"] = "scripted"
    model: Opt[str] = None
    base_url: Annotated[Opt[str], DECIDES] = None
    api_key_env: Annotated[Opt[str], DECIDES] = Field(default=None, description="Name of the environment variable holding the API key")
    reasoning_effort: Opt[Literal["minimal", "low", "medium", "high"]] = None
    thinking_budget_tokens: Opt[int] = Field(default=None, ge=0)
    max_tokens: Opt[int] = Field(default=None, gt=0)
    script: Opt[str] = Field(default=None, description="Scripted provider: path of a YAML/JSON script")
    #: tokens the model takes in one request (by default what Modus knows of the model)
    context_window: Opt[int] = Field(default=None, gt=0)
    #: the price (by default what Modus knows of the model; unknown: tokens only, no cost)
    pricing: Opt[Pricing] = None
    #: whether the model sees images (by default what Modus knows of it: Claude 3 and later, GPT-4o,
    #: GPT-4.1, GPT-5, the o-series…; a model it does not know: false)
    vision: Opt[bool] = None


class PhaseModels(Input):
    plan: Opt[Model] = None
    act: Opt[Model] = None


class ModeModels(Input):
    """A mode's model (set when `provider` is given) and its per-phase models."""

    provider: Opt[Literal["scripted", "anthropic", "openai"]] = None
    model: Opt[str] = None
    base_url: Annotated[Opt[str], DECIDES] = None
    api_key_env: Annotated[Opt[str], DECIDES] = None
    reasoning_effort: Opt[Literal["minimal", "low", "medium", "high"]] = None
    thinking_budget_tokens: Opt[int] = Field(default=None, ge=0)
    max_tokens: Opt[int] = Field(default=None, gt=0)
    script: Opt[str] = None
    context_window: Opt[int] = Field(default=None, gt=0)
    pricing: Opt[Pricing] = None
    vision: Opt[bool] = None
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
    #: The mode the agent starts in (a slug); by default the workspace's last mode.
    mode: Opt[str] = None


class Member(Input):
    handle: str = Field(pattern=r"^[\w-]+$")
    name: str


class ModeAutoApprove(Input):
    """`autoApprove.modes.<slug>`: what differs for that mode (a key left out: as `autoApprove`)."""

    mode_switch: Opt[bool] = None
    read: Opt[bool] = None
    edit: Opt[bool] = None
    #: true, false, or globs: a command line whose every simple command matches one is approved
    command: Opt[Union[bool, list[str]]] = None
    subtasks: Opt[bool] = None
    mcp: Opt[bool] = None
    browser: Opt[bool] = None


class AutoApprove(Input):
    mode_switch: bool = False
    read: bool = True
    edit: bool = False
    #: true, false, or globs: a command line whose every simple command matches one is approved
    command: Union[bool, list[str]] = False
    subtasks: bool = False
    mcp: bool = False
    #: browser_action's `launch` (its other actions never ask)
    browser: bool = False
    modes: dict[str, ModeAutoApprove] = Field(default_factory=dict)


class DiagnosticsSettings(Input):
    """After each applied edit: the problems the editor reports that the edit introduced,
    added to the tool's result (a client that declares `experimental.modus.diagnostics`)."""

    enabled: bool = True
    #: how long the editor's language servers get to check the edited files
    delay_ms: int = Field(default=1000, ge=0, le=10_000)
    #: the least severe problem reported
    severity: Literal["error", "warning"] = "error"
    #: the most problem lines one result carries
    max: int = Field(default=50, ge=1, le=1000)


class BrowserSettings(Input):
    """`browser`: the headless Chromium of browser_action."""

    #: the page's size in CSS pixels, WIDTHxHEIGHT (each side 200 to 4096); screenshots are this size
    viewport: str = Field(default="900x600", pattern=r"^\s*\d{3,4}\s*[xX]\s*\d{3,4}\s*$")
    #: globs of the host names the browser may reach besides loopback (`*.example.com`; `*` and `?`
    #: only): where the browser's requests go, so a workspace's file sets it only once trusted
    allowed_hosts: Annotated[list[Annotated[str, Field(pattern=r"^[A-Za-z0-9*?._:-]{1,253}$")]], DECIDES] = Field(default_factory=list)
    #: how long a page may take to load, and an action to end, before it fails
    timeout_seconds: float = Field(default=15.0, gt=0, le=300)


class SpaceSettings(Input):
    """`space`: the team space this server attaches to (PROTOCOL.md, "Team spaces on PostgreSQL")."""

    #: `postgresql://…`: where the space's conversations are stored and read, so a workspace's
    #: file sets it only once trusted
    url: Annotated[str, DECIDES] = Field(pattern=r"^postgres(ql)?://")
    #: the space's name, as the clients show it
    name: str = Field(min_length=1)
    #: this user's handle in the space
    member: str = Field(min_length=1)
    display_name: Opt[str] = None
    #: the environment variable holding the password (else the URL's, or libpq's own ways)
    password_env: Annotated[Opt[str], DECIDES] = None


class Settings(Input):
    """`initializationOptions.modus`; the same object arrives in didChangeConfiguration."""

    # The settings that decide what runs come first: what waits for trust is named in this order.
    yolo: Annotated[bool, DECIDES] = False
    auto_approve: Annotated[AutoApprove, DECIDES] = Field(default_factory=AutoApprove)
    state_dir: Annotated[Opt[str], DECIDES] = None
    #: Start every MCP server when the session starts (by default each starts when first used).
    mcp_start_at_launch: Annotated[bool, DECIDES] = False
    #: A modes file read besides the global `modes.yaml`, below it: Roo Code's global
    #: `custom_modes.yaml`, say (an absolute path; `~` is the home folder). It decides which file
    #: of the machine becomes modes and prompt text, so a workspace's settings file sets it only
    #: once trusted.
    global_modes_file: Annotated[Opt[str], DECIDES] = Field(
        default=None, description="A modes file read besides the global modes.yaml (e.g. Roo Code's custom_modes.yaml)"
    )
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    agents: list[AgentConfig] = Field(default_factory=lambda: [AgentConfig(name="modus")], min_length=1)
    members: list[Member] = Field(default_factory=list)
    mode_switch_delay_ms: int = Field(default=500, ge=0)
    command_timeout_seconds: float = Field(default=120.0, gt=0)
    #: From sending a model request to its first streamed event (connecting and the headers included).
    model_first_byte_timeout_seconds: float = Field(default=120.0, gt=0)
    #: The longest gap between two events of a model's stream once it has started.
    model_idle_timeout_seconds: float = Field(default=60.0, gt=0)
    #: How often a model request answered 429, 529 or 5xx is sent again (0: never).
    max_retries: int = Field(default=3, ge=0)
    #: The most one model request waits in all between its retries.
    max_retry_wait_seconds: float = Field(default=60.0, ge=0)
    max_consecutive_mistakes: int = Field(default=3, ge=1)
    #: how many model requests a turn makes before the user is asked whether it goes on (an approval)
    max_requests_per_turn: Annotated[int, DECIDES] = Field(default=50, ge=1)
    #: a checkpoint of the workspace's files before each edit or command, and at each turn's start
    checkpoints: bool = True
    #: condense the conversation before a request would take more than this share (%) of the
    #: model's context window
    condense_threshold: int = Field(default=80, ge=10, le=100)
    #: globs of the rule files left out of the prompt (workspace-relative paths; a global
    #: rule's is absolute)
    rules_disabled: list[str] = Field(default_factory=list)
    #: commands run at a session's events, in Claude Code's shape ({"PreToolUse": [{matcher,
    #: hooks: [{type: command, command, timeout}]}]}; checked by server/hooks): they run programs
    hooks: Annotated[Opt[dict[str, Any]], DECIDES] = None
    #: how many times a turn's Stop hooks may send it on (exit 2: their words as the user's)
    max_hook_continuations: int = Field(default=3, ge=0)
    diagnostics: DiagnosticsSettings = Field(default_factory=DiagnosticsSettings)
    browser: BrowserSettings = Field(default_factory=BrowserSettings)
    #: the team space on PostgreSQL this server attaches to (none: every conversation is local)
    space: Opt[SpaceSettings] = None


# ---------------------------------------------------------------- requests, client -> server


class EmptyParams(Input):
    pass


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


class Usage(Wire):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    #: USD; null when a price is unknown (never a guess)
    cost: Optional[float] = None


class ContextInfo(Wire):
    """What an agent's requests take of its model's context window, in tokens."""

    #: what the last request took, its reply included (null: no request yet since the server started)
    used: Opt[int] = None
    window: int
    #: where the conversation is condensed before the next request (condenseThreshold % of the window)
    threshold: int


class SpaceInfo(Wire):
    """The team space this server attaches to, and how the attachment stands."""

    name: str
    member: str
    state: Literal["connecting", "connected", "offline"]
    #: why it is offline (host:port/database and PostgreSQL's reason, never a password)
    error: Opt[str] = None


class State(Wire):
    mode: ModeRef
    phase: Phase
    conversation_id: str
    yolo: bool
    task: TaskInfo
    plan: PlanInfo = Field(default_factory=PlanInfo)
    #: the conversation's model requests, summed
    usage: Usage = Field(default_factory=Usage)
    #: the responder's context window
    context: Opt[ContextInfo] = None
    #: the team space, when the `space` setting names one
    space: Opt[SpaceInfo] = None


class GroupOptions(Wire):
    file_regex: Opt[str] = None
    description: Opt[str] = None
    #: `mcp`: the MCP servers the mode reaches (all when not given)
    servers: Opt[list[str]] = None
    #: `command`: globs each simple command must match (any command when not given)
    allow: Opt[list[str]] = None
    #: `command`: globs no simple command may match; deny wins over allow
    deny: Opt[list[str]] = None


GroupEntry = Union[str, tuple[str, GroupOptions]]
