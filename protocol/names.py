"""Method, command and notification names of the wire contract (no dependencies: cheap to import)."""

PROTOCOL_VERSION = 1


# client -> server requests
STATE = "modus/state"
MODES_LIST = "modus/modes/list"
MODES_SWITCH = "modus/modes/switch"
PHASE_SET = "modus/phase/set"
CHAT_SEND = "modus/chat/send"
CHAT_CANCEL = "modus/chat/cancel"
CHAT_HISTORY = "modus/chat/history"
CHAT_LIST = "modus/chat/list"
CHAT_OPEN = "modus/chat/open"
PROMPT_GET = "modus/prompt/get"
PLAN_APPROVE = "modus/plan/approve"
PLAN_REJECT = "modus/plan/reject"
TODOS_GET = "modus/todos/get"
AGENTS_LIST = "modus/agents/list"
MCP_LIST = "modus/mcp/list"
USAGE_GET = "modus/usage/get"
CHAT_CONDENSE = "modus/chat/condense"
CHAT_RETRY = "modus/chat/retry"
CHAT_EDIT = "modus/chat/edit"
CHAT_UNQUEUE = "modus/chat/unqueue"
CHECKPOINTS_LIST = "modus/checkpoints/list"
CHECKPOINTS_DIFF = "modus/checkpoints/diff"
CHECKPOINTS_RESTORE = "modus/checkpoints/restore"
RULES_LIST = "modus/rules/list"
COMMANDS_LIST = "modus/commands/list"
SKILLS_LIST = "modus/skills/list"
SPACE_MEMBERS = "modus/space/members"
MODELS_CHECK = "modus/models/check"
CHAT_IMAGE = "modus/chat/image"

# server -> client
UPDATE = "modus/update"
APPROVAL = "modus/approval"
CLIENT_DIAGNOSTICS = "modus/client/diagnostics"


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
    MCP_RESTART = "modus.mcp.restart"
    TRUST_WORKSPACE_SETTINGS = "modus.trustWorkspaceSettings"


CODE_ACTION_PLAN_KIND = "refactor.modus.plan"
CODE_ACTION_PLAN_TITLE = "Plan a change here"
