"""The payloads of the wire contract (PROTOCOL.md) beyond the settings and the state: the
requests and their results, the `modus/update` notifications, approvals and command arguments.
Loaded with the first of them a session uses (models.py: what it starts with).
"""

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field

from .models import ContextInfo, GroupEntry, Input, Model, ModeSource, Opt, Phase, PlanState, SpaceInfo, State, Usage, Wire

# ---------------------------------------------------------------- requests, client -> server


class ModesSwitchParams(Input):
    slug: str


class PhaseSetParams(Input):
    phase: Phase


#: The image types a message may carry (PROTOCOL.md, "Images").
ImageMimeType = Literal["image/png", "image/jpeg", "image/webp", "image/gif"]

#: At most this many images a message, each at most this many bytes (decoded).
MAX_IMAGES = 10
MAX_IMAGE_BYTES = 5 * 1024 * 1024


class ImageData(Input):
    """An image the client sends: its type and its bytes in base64."""

    mime_type: ImageMimeType
    data: str


class ImageRef(Wire):
    """A stored image, as messages show it: fetched with `modus/chat/image {id}`."""

    id: str
    mime_type: str


class ChatSendParams(Input):
    text: str
    conversation_id: Opt[str] = None
    owner: Opt[str] = None
    #: pasted or dropped images (at most MAX_IMAGES, each at most MAX_IMAGE_BYTES decoded)
    images: Opt[list[ImageData]] = None


class ChatImageParams(Input):
    """`modus/chat/image`: a stored image by its id."""

    id: str


class ChatImageResult(Wire):
    mime_type: str
    #: the image's bytes in base64
    data: str


class ConversationParams(Input):
    conversation_id: str


class MaybeConversationParams(Input):
    """`{conversationId?}`. Absent: the current conversation (`modus/chat/open`: a new one with an
    id the server picks)."""

    conversation_id: Opt[str] = None


class PromptGetParams(Input):
    mode: Opt[str] = None
    phase: Opt[Phase] = None
    agent: Opt[str] = None


class PlanDecisionParams(Input):
    feedback: Opt[str] = None


class TodosGetParams(Input):
    agent: Opt[str] = None


class ChatEditParams(Input):
    """`modus/chat/edit`: Edit & resend. The conversation is cut back to just before the user's
    message `messageId`, then `text` is sent in its place; `files`: the workspace's files too are
    put back as they were when that message was sent (its checkpoint)."""

    conversation_id: Opt[str] = None
    message_id: str
    text: str
    files: bool = False


class ChatUnqueueParams(Input):
    """`modus/chat/unqueue`: take back a message that waits, queued, for a turn to end."""

    conversation_id: Opt[str] = None
    message_id: str


class RulesListParams(Input):
    """`{conversationId?, agent?}`: by default the current conversation and its responder."""

    conversation_id: Opt[str] = None
    agent: Opt[str] = None



# ---------------------------------------------------------------- results


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


class AgentInfo(Wire):
    name: str
    top_level: bool
    #: the mode the agent's next turn runs in
    mode: str
    #: "settings" (initializationOptions or a settings file) or "workspace" (.modus/agents.yaml)
    source: Literal["settings", "workspace"]
    model: Opt[str] = None
    instructions: Opt[str] = None


class MemberInfo(Wire):
    handle: str
    name: str


class AgentsListResult(Wire):
    #: in configuration order (the order prefixes are matched in)
    agents: list[AgentInfo]
    members: list[MemberInfo]


class ChatSendResult(Wire):
    conversation_id: str
    message_id: str
    text: str
    dispatched: list[str]
    mentions: list[Mention] = Field(default_factory=list)
    #: the Modus command the text started with (`plan`, `mode`…), run before the message; alone
    #: (nothing followed it) no message is stored: `messageId` and `text` are empty then
    command: Opt[str] = None
    #: true: a turn of an agent it goes to was running, so the message waits, queued, outside the
    #: conversation (no model sees it), until that turn has ended; `modus/chat/unqueue` takes it
    #: back until then. `dispatched` names the agents that will answer it.
    queued: Opt[bool] = None


class ChatEditResult(ChatSendResult):
    """What `modus/chat/send` answers for the new message, and with `files: true` what became of
    the files: `restored` (workspace-relative) and `checkpoint` (taken just before restoring them:
    restoring it undoes that), or `filesNotRestored`, saying why nothing was put back."""

    restored: Opt[list[str]] = None
    checkpoint: Opt[str] = None
    files_not_restored: Opt[str] = None


class ChatRetryResult(Wire):
    conversation_id: str
    #: the agent whose turn runs again
    agent: str
    #: the turn that failed or was cancelled
    retried: str


class ChatUnqueueResult(Wire):
    conversation_id: str
    message_id: str
    #: the message as the user typed it (for the composer to take back)
    text: str
    #: its images as they were sent, for the composer to take back with it
    images: Opt[list[ChatImageResult]] = None


class QueuedMessage(Wire):
    """A message waiting for a turn to end (see `ChatSendResult.queued`), oldest first."""

    message_id: str
    #: as the user typed it
    text: str
    dispatched: list[str]


class ChatHistoryParams(Input):
    """`{conversationId, before?, limit?}`: the `limit` messages just before number `before` (the
    newest without it), oldest first. Neither given: all the conversation's messages."""

    conversation_id: str
    before: Opt[int] = Field(default=None, ge=1)
    limit: Opt[int] = Field(default=None, ge=1, le=1000)


class ChatCancelResult(Wire):
    cancelled: bool


class HistoryMessage(Wire):
    id: str
    role: Literal["user", "assistant", "system", "tool"]
    agent: Opt[str] = None
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: the images the message carries (a user's pasted ones, a tool result's): `metadata.images` too
    images: Opt[list[ImageRef]] = None
    #: the message's number in its conversation (increasing, no gaps), when known
    seq: Opt[int] = None


class ChatHistoryResult(Wire):
    messages: list[HistoryMessage]
    #: the messages queued behind a running turn (not in the conversation yet), when there are any
    queued: Opt[list[QueuedMessage]] = None


class ConversationSummary(Wire):
    id: str
    #: the first user message, its first line, at most 80 characters
    title: str
    #: ISO 8601, UTC
    created_at: str
    updated_at: str
    #: the mode of the conversation's latest task
    mode: Opt[str] = None
    messages: int


class ChatListResult(Wire):
    #: top-level conversations with at least one message, the most recently updated first
    conversations: list[ConversationSummary]


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


class RuleInfo(Wire):
    """A rule file: `path` workspace-relative (absolute for a global one); `active`: in the
    prompt of the agent's mode in the conversation now; `tokens`: its text's."""

    path: str
    format: Literal["agents", "claude", "cline", "roo", "cursor", "copilot", "modus"]
    scope: Literal["always", "mode", "paths"]
    modes: Opt[list[str]] = None
    paths: Opt[list[str]] = None
    active: bool
    tokens: int


class RulesListResult(Wire):
    rules: list[RuleInfo]


class CommandInfo(Wire):
    """A slash command: `/<name> <arguments>` in `modus/chat/send` sends a prompt file's text, or
    runs one of Modus's own (`source: "modus"`, no `path`), then sends what follows it."""

    name: str
    description: Opt[str] = None
    argument_hint: Opt[str] = None
    mode: Opt[str] = None
    phase: Opt[Phase] = None
    source: Literal["modus", "workspace", "global"]
    #: its file: workspace-relative, or absolute for the user's own; none for Modus's own
    path: Opt[str] = None


class CommandsListResult(Wire):
    commands: list[CommandInfo]


class ModelCheckParams(Input):
    """`modus/models/check`: a model's settings to try before they are saved (the chat's set-up)."""

    model: Model


class ModelCheckResult(Wire):
    """`ok`: the model's server answered with the key the server has; `message` says what was
    found or what failed (never the key); `models`: the ids the server lists, when it does."""

    ok: bool
    message: str
    models: list[str] = Field(default_factory=list)


class SkillInfo(Wire):
    """A skill: `path` is its SKILL.md, workspace-relative, or absolute for the user's own."""

    name: str
    description: str
    path: str
    source: Literal["workspace", "global"]


class SkillsListResult(Wire):
    skills: list[SkillInfo]


# ---------------------------------------------------------------- server -> client: modus/update


class _UpdateBase(Wire):
    conversation_id: str
    agent: Opt[str] = None
    task_id: Opt[str] = None
    #: a team space's conversation: the update's number in it (increasing, no gaps), the same
    #: on every attached server's clients
    seq: Opt[int] = None


class TurnStarted(_UpdateBase):
    kind: Literal["turn_started"] = "turn_started"
    turn_id: str
    agent: str
    woken_by: Opt[str] = None


class MessageDelta(_UpdateBase):
    kind: Literal["message_delta"] = "message_delta"
    turn_id: str
    text: str


class Handoff(Wire):
    """`metadata.handoff` of a stored message an agent said with send_to_agent or ask_agent."""

    kind: Literal["send", "ask"]
    to: str
    tool_call_id: str


class RefusedMention(Wire):
    mention: str
    reason: str


class Condensed(Wire):
    """`metadata.condensed` of the stored message that marks where a conversation was condensed:
    for `agent`'s model, `summary` replaced every message but the last `keep`."""

    agent: Optional[str]
    keep: int
    summary: str
    before: int
    after: int


class ThinkingDelta(_UpdateBase):
    """The model's thinking (reasoning), streamed as it comes; not part of the conversation."""

    kind: Literal["thinking_delta"] = "thinking_delta"
    turn_id: str
    text: str


class MessageUpdate(_UpdateBase):
    kind: Literal["message"] = "message"
    turn_id: Opt[str] = None
    role: Literal["assistant", "user", "system"]
    text: str
    #: a system message that lists a turn's refused mentions: each one and why
    mentions_refused: Opt[list[RefusedMention]] = None
    #: the stored message's id (its `id` in `modus/chat/history`): every user message has one,
    #: which `modus/chat/edit` and `modus/chat/unqueue` take
    message_id: Opt[str] = None
    #: a user message held behind a running turn (`ChatSendResult.queued`): not in the
    #: conversation yet. When its turn starts, the same message comes again, without `queued`,
    #: with the same `messageId`; taken back, an `unqueued` update says so.
    queued: Opt[bool] = None
    #: the images the message carries (fetched with `modus/chat/image`)
    images: Opt[list[ImageRef]] = None
    #: a team space's conversation: the handle of the member who wrote this user message
    #: (`metadata.member` in `modus/chat/history`)
    member: Opt[str] = None


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
    #: the images a completed call's result carries to the model (a screenshot, an image file read)
    images: Opt[list[ImageRef]] = None


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
    #: `model`: plan_mode_respond moved PLAN → ACT by itself (yolo)
    by: Literal["user", "model"] = "user"


class PlanUpdate(_UpdateBase):
    kind: Literal["plan"] = "plan"
    state: PlanState
    plan: Opt[dict[str, Any]] = None
    markdown: Opt[str] = None
    completed_steps: list[str] = Field(default_factory=list)
    plan_id: Opt[str] = None
    goal: Opt[str] = None
    scope: Opt[list[str]] = None
    #: the step being carried out (executing)
    current_step: Opt[str] = None


class TodosUpdate(_UpdateBase):
    kind: Literal["todos"] = "todos"
    agent: str
    todos: list[Todo]


class HookUpdate(_UpdateBase):
    """A hook ran (PROTOCOL.md "Hooks"): what it said, when it said anything."""

    kind: Literal["hook"] = "hook"
    event: str
    command: str
    outcome: Literal["ok", "blocked", "failed", "timeout"]
    output: Opt[str] = None


class TurnError(Wire):
    """Why a turn failed or was cancelled: `ModelError` (the provider's error, as the model's
    request failed), `MistakeLimit` (maxConsecutiveMistakes failed calls in a row),
    `RequestLimit` (the user chose not to go on at maxRequestsPerTurn), `Cancelled` (the user
    cancelled), `Interrupted` (Modus stopped during the turn), `InternalError`."""

    type: str
    message: str


class TurnEnded(_UpdateBase):
    kind: Literal["turn_ended"] = "turn_ended"
    turn_id: str
    agent: str
    #: `interrupted`: a team space's turn whose server died, ended by another attached server
    outcome: Literal["completed", "failed", "cancelled", "awaiting_user", "interrupted"]
    #: with `failed`, `cancelled` and `interrupted`: why (also stored, see `modus/chat/history`); such a turn
    #: can be run again with `modus/chat/retry`
    error: Opt[TurnError] = None


class UsageUpdate(_UpdateBase):
    """After each model request that reported its tokens."""

    kind: Literal["usage"] = "usage"
    task_id: str
    agent: str
    mode: str
    phase: Phase
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: Optional[float] = None


class UsageByPhase(Wire):
    plan: Opt[Usage] = None
    act: Opt[Usage] = None


class UsageGetResult(Wire):
    total: Usage
    by_task: dict[str, Usage]
    by_mode: dict[str, UsageByPhase]
    by_agent: dict[str, Usage]


class CheckpointInfo(Wire):
    id: str
    conversation_id: str
    #: the tool call it was taken before (its id in the `tool_call` updates); none: a turn's start
    tool_call_id: Opt[str] = None
    #: ISO 8601, UTC
    created_at: str
    label: str


class CheckpointsListResult(Wire):
    #: oldest first
    checkpoints: list[CheckpointInfo]
    #: why checkpoints are off (git missing), when they are
    disabled: Opt[str] = None


class CheckpointParams(Input):
    id: str


class CheckpointFile(Wire):
    path: str
    status: Literal["added", "modified", "deleted"]
    diff: str


class CheckpointsDiffResult(Wire):
    files: list[CheckpointFile]


class CheckpointsRestoreParams(Input):
    id: str
    restore: Literal["files", "conversation", "both"]


class CheckpointsRestoreResult(Wire):
    restored: list[str]
    #: the checkpoint taken just before restoring (restoring it undoes the restore)
    checkpoint: str
    conversation_id: str


class McpTool(Wire):
    name: str
    description: Opt[str] = None


class McpResource(Wire):
    uri: str
    name: Opt[str] = None


class McpServerInfo(Wire):
    name: str
    state: Literal["connected", "starting", "failed", "disabled"]
    #: why it failed (with the tail of a stdio server's stderr), or why it is disabled
    error: Opt[str] = None
    #: the file that configures it
    source: Opt[str] = None
    tools: list[McpTool] = Field(default_factory=list)
    resources: list[McpResource] = Field(default_factory=list)


class McpListResult(Wire):
    servers: list[McpServerInfo]


class CondensedUpdate(_UpdateBase):
    """The conversation was condensed: what a request took of the context window before and after (tokens)."""

    kind: Literal["condensed"] = "condensed"
    before: int
    after: int


class ContextUpdate(_UpdateBase, ContextInfo):
    """After each model request and each condensing: what the agent's next request takes of its
    model's context window (the chat's context bar)."""

    kind: Literal["context"] = "context"


class StateChanged(_UpdateBase):
    """The state changed without a request of this client: a settings file was edited (its
    `yolo`, its models), or trusted."""

    kind: Literal["state_changed"] = "state_changed"
    state: State


class CondenseResult(Wire):
    before: int
    after: int


class ConversationCut(_UpdateBase):
    """The conversation was cut back (a checkpoint's restore of the conversation, or
    `modus/chat/edit`): from `messageId` on, its messages are no longer part of it (the store
    keeps them, marked). A client shows the history again (`modus/chat/history`)."""

    kind: Literal["conversation_cut"] = "conversation_cut"
    #: the first message cut; absent when none was (the cut was at the conversation's end)
    message_id: Opt[str] = None
    #: how many messages were cut
    messages: int


class Unqueued(_UpdateBase):
    """A queued message was taken back (`modus/chat/unqueue`) before its turn started."""

    kind: Literal["unqueued"] = "unqueued"
    message_id: str
    #: as the user typed it
    text: str


class BrowserUpdate(_UpdateBase):
    """A browser_action ran: where the page is and its screenshot (`modus/chat/image`)."""

    kind: Literal["browser"] = "browser"
    url: str
    title: str
    screenshot_id: str
    #: the action and the call it answers (its tool card shows the screenshot)
    action: Opt[str] = None
    turn_id: Opt[str] = None
    tool_call_id: Opt[str] = None
    #: the screenshot's size (the viewport's), in pixels
    width: Opt[int] = None
    height: Opt[int] = None


class McpChanged(_UpdateBase):
    kind: Literal["mcp_changed"] = "mcp_changed"
    servers: list[McpServerInfo]


class SpaceChanged(_UpdateBase):
    """The team space's attachment changed (connecting, connected, offline, or another space)."""

    kind: Literal["space_changed"] = "space_changed"
    space: SpaceInfo


class NotificationUpdate(_UpdateBase):
    """A member of the team space was @-mentioned in a message: to that member's clients only
    (whichever server they are attached through), never numbered, never waking an agent."""

    kind: Literal["notification"] = "notification"
    #: who wrote the message: a member's handle, or an agent's name
    from_: str = Field(alias="from")
    #: the message, at most 1,000 characters of it
    text: str
    message_id: str


class SpaceMember(Wire):
    handle: str
    display_name: Opt[str] = None
    #: a server of this member is attached (it said so within the last 30 s)
    online: bool


class SpaceMembersResult(Wire):
    """`modus/space/members`: the space's members, online ones first, then by handle; empty
    without a space (or while it is offline)."""

    members: list[SpaceMember]


Update = Annotated[
    Union[
        TurnStarted,
        MessageDelta,
        ThinkingDelta,
        MessageUpdate,
        ToolCallUpdate,
        ModeChanged,
        PhaseChanged,
        PlanUpdate,
        TodosUpdate,
        HookUpdate,
        TurnEnded,
        McpChanged,
        SpaceChanged,
        NotificationUpdate,
        UsageUpdate,
        CondensedUpdate,
        ContextUpdate,
        StateChanged,
        ConversationCut,
        Unqueued,
        BrowserUpdate,
    ],
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------- server -> client: modus/approval


#: The longest text an edit's review shows or takes back (1 MiB of characters).
REVIEW_MAX_CHARS = 1 << 20


class ReviewFile(Wire):
    #: workspace-relative
    path: str
    original: Optional[str]
    proposed: str


class ApprovalRequest(Wire):
    #: `continue`: the turn reached maxRequestsPerTurn; approving lets it go on.
    #: `mcp_server`: start a stdio MCP server that a workspace file configures (a repository's
    #: command: it runs only once the user agreed).
    kind: Literal["switch_mode", "tool", "plan", "subtask", "continue", "mcp_server"]
    title: str
    detail: str
    tool: Opt[str] = None
    params: Opt[dict[str, Any]] = None
    agent: Opt[str] = None
    from_: Opt[str] = Field(default=None, alias="from")
    to: Opt[str] = None
    reason: Opt[str] = None
    #: the tool call this approval gates (its `tool_call` updates carry the same id)
    tool_call_id: Opt[str] = None
    #: offered "always allow": the rule an approval with `always` writes to the workspace's
    #: settings file, as the user is shown it (e.g. `autoApprove.modes.code.command: "npm test"`)
    always_allow: Opt[str] = None
    #: an edit of one file, for a review before it is applied: the texts now and proposed
    #: (`original` null for a new file); left out when either is over REVIEW_MAX_CHARS
    file: Opt[ReviewFile] = None


class ApprovalResponse(Input):
    decision: Literal["approve", "deny", "revise"]
    feedback: Opt[str] = None
    #: with `approve`: also write the offered `alwaysAllow` rule
    always: bool = False
    #: with `approve` of an edit that carried `file`: the text the user approved after changing
    #: the proposal (dropping hunks, editing); it is written instead of the proposal
    content: Opt[str] = Field(default=None, max_length=REVIEW_MAX_CHARS)


# ---------------------------------------------------------------- server -> client: modus/client/diagnostics


class Position(Input):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(Input):
    start: Position
    end: Position


class Diagnostic(Input):
    """A problem the editor knows (LSP's Diagnostic; what else it carries is left out)."""

    range: Range
    #: 1 error, 2 warning, 3 information, 4 hint; left out: an error, as editors show it
    severity: Opt[int] = Field(default=None, ge=1, le=4)
    code: Opt[Union[int, str]] = None
    source: Opt[str] = None
    message: str


class ClientDiagnosticsParams(Wire):
    uris: list[str]


class FileDiagnostics(Input):
    uri: str
    diagnostics: list[Diagnostic] = Field(max_length=10_000)


class ClientDiagnosticsResult(Input):
    items: list[FileDiagnostics] = Field(max_length=1_000)


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


def warm() -> None:
    """Every payload's validator and serializer built now (they are deferred to their first use,
    which a server's first turn would wait for): called in the background, ahead of it."""
    for value in list(globals().values()):
        if isinstance(value, type) and issubclass(value, Wire) and value.__module__ == __name__:
            value.model_rebuild()
