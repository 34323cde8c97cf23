// The view state of the chat and the reducer that builds it from what the server says
// (`modus/update` notifications, `modus/approval` requests, request results). Pure functions,
// no `vscode`, no DOM: the extension and the webview run the same reducer on the same actions.
import type {
  AgentsListResult,
  ApprovalRequest,
  ApprovalResponse,
  ChatSendResult,
  CheckpointInfo,
  CheckpointsRestoreResult,
  CommandInfo,
  ContextInfo,
  ConversationSummary,
  HistoryMessage,
  ImageRef,
  McpServerInfo,
  Model,
  ModelCheckResult,
  ModeInfo,
  ModesListResult,
  QueuedMessage,
  PlanInfo,
  PlanUpdate,
  RuleInfo,
  SpaceInfo,
  SpaceMember,
  State,
  Todo,
  ToolError,
  Update,
  UsageGetResult,
} from './generated';
import type { Restart } from './restarts';
import { withRequest } from './usage';

/** `undone`: a call the conversation no longer has, restored to just before it */
export type ToolStatus = 'pending' | 'running' | 'completed' | 'failed' | 'undone';
export type ApprovalStatus = 'pending' | 'approve' | 'deny' | 'revise' | 'cancelled';

/**
 * What the chat shows. An entry with a `turnId` belongs to that agent turn: the sidebar shows it
 * in the turn's block (see `layout`), under the agent's name.
 */
export type Entry =
  /** `messageId`: the stored message's (what Edit & resend names), when the server said it */
  /** `images`: those the message carries (fetched with `modus/chat/image`) */
  /** `member`: in a team space's conversation, the handle of the member who wrote it (a colleague's when not `space.member`) */
  | { type: 'user'; id: string; text: string; messageId?: string; images?: ImageRef[]; member?: string }
  | { type: 'assistant'; id: string; turnId?: string; agent?: string; text: string; streaming: boolean }
  /** the model's thinking, as it streamed (shown folded; not part of the conversation's history) */
  | { type: 'thinking'; id: string; turnId: string; text: string }
  /** `mentionsRefused`: the mentions the server did not deliver, when this message lists them (from the history) */
  | { type: 'system'; id: string; turnId?: string; text: string; mentionsRefused?: RefusedMention[] }
  | {
      type: 'tool';
      id: string;
      turnId?: string;
      name: string;
      params: Record<string, unknown>;
      status: ToolStatus;
      result?: string;
      error?: ToolError;
      /** browser_action: the page after the action (`browser` update), its screenshot fetched with `modus/chat/image` */
      screenshot?: Screenshot;
      /** the images the result carries to the model (read_file of an image): thumbnails in the card */
      images?: ImageRef[];
    }
  | { type: 'mode'; id: string; turnId?: string; from: string; to: string; reason?: string; by: 'user' | 'model' }
  | { type: 'phase'; id: string; turnId?: string; from: string; to: string }
  /** `always`: approved with "Always allow" (the rule `request.alwaysAllow` is written) */
  | {
      type: 'approval';
      id: string;
      turnId?: string;
      request: ApprovalRequest;
      status: ApprovalStatus;
      feedback?: string;
      always?: boolean;
      /** approved with the user's own changes to the proposal (review before apply) */
      edited?: boolean;
    }
  /** how a turn ended when it did not complete: `error` says why (Retry offers to run it again) */
  | { type: 'turn'; id: string; turnId?: string; agent: string; outcome: string; error?: { type: string; message: string } }
  /**
   * A restore of a checkpoint (`what`: the files, the files and the conversation, or the undoing
   * of an earlier restore) and the files it put back. `undo`: the checkpoint the server took just
   * before, whose files undo it; `undone` once they did.
   */
  | { type: 'restore'; id: string; what: RestoreKind | 'undo'; restored: string[]; undo?: string; undone?: boolean }
  | { type: 'error'; id: string; text: string };

/** A browser_action's screenshot: the stored image's id, and the page's address and title when the server said them. */
export interface Screenshot {
  id: string;
  url?: string;
  title?: string;
  width?: number;
  height?: number;
}

/** What the user restores from a tool card: its files, or its files and the conversation. */
export type RestoreKind = 'files' | 'both';

/**
 * The agent's plan, from `plan` updates and `State.plan` (a reload has only the latter, without the
 * markdown). A plan that just ended is kept (state `normal`, `ended` from its status line) until
 * the next one starts or the conversation changes.
 */
export interface PlanView {
  state: PlanInfo['state'];
  ended?: 'completed' | 'rejected';
  goal?: string;
  scope?: string[];
  planId?: string;
  /** the plan object as the server keeps it (summary, approach, steps, …) */
  plan?: Record<string, unknown>;
  /** the server's rendering of the plan, with its live status: the canonical text */
  markdown?: string;
  completedSteps: string[];
}

export interface PlanStep {
  id: string;
  description: string;
  files: string[];
  verification: string;
  status: 'done' | 'current' | 'pending';
}

/** A mention an agent wrote that the server did not deliver, and why. */
export interface RefusedMention {
  mention: string;
  reason: string;
}

/** An agent's turn: whose it is and, when another agent's mention started it, which one. */
export interface TurnInfo {
  agent: string;
  wokenBy?: string;
}

/**
 * The language server process, as the chat shows it. `failed`: it could not start (the composer
 * gives way to the fixes). `stopped`: it stopped by itself (a crash); it is started again after
 * a wait (`restart`, kept while it starts again), unless it stopped too often (no `restart`: the
 * composer gives way to Retry).
 */
export interface ServerView {
  status: 'starting' | 'running' | 'failed' | 'stopped';
  /** why it failed or stopped, in one line ("The Modus server stopped (killed by SIGKILL)") */
  error?: string;
  /** after a stop: the last error lines the server wrote (none when it wrote none) */
  lines?: string[];
  /** after a stop: the automatic restart, the `attempt`th of at most `of`, after `delayMs` */
  restart?: Restart;
}

/**
 * Modus's own Python environment, while it is not ready (null once it is, or when the user's
 * `modus.pythonPath` is used): `offer` (Set up Modus, in place of the composer), `running` (what
 * it is doing: `step`, and pip's current `line`), `failed` (`error`, pip's last `lines`: Retry,
 * Show Log), `noPython` (no Python 3.11+: `error` says what was found; the download page).
 */
export interface EnvView {
  state: 'offer' | 'running' | 'failed' | 'noPython';
  /** the bundled Modus's version */
  version: string;
  /** the bundle carries every dependency's wheel: no package index needed */
  offline: boolean;
  /** the interpreter the environment is created with */
  python?: string;
  /** running: an upgrade of an environment set up for this version */
  upgradeFrom?: string;
  step?: string;
  line?: string;
  error?: string;
  lines?: string[];
}

export interface ViewState {
  server: ServerView;
  /** Modus's own environment while it is being offered, set up or failed (see EnvView) */
  env: EnvView | null;
  conversationId: string | null;
  mode: { slug: string; name: string } | null;
  phase: 'plan' | 'act' | null;
  /** the session approves everything without asking (`State.yolo`) */
  yolo: boolean;
  modes: ModeInfo[];
  entries: Entry[];
  /** turnIds of the turns running now */
  running: string[];
  /** the turns of the conversation shown, by turnId (a stored conversation's are made up: see fromHistory) */
  turns: Record<string, TurnInfo>;
  /** the agents and members that can be @-mentioned, once asked for (`modus/agents/list`) */
  agents: AgentsListResult | null;
  /** the slash commands the composer completes after `/`, once asked for (`modus/commands/list`) */
  commands: CommandInfo[] | null;
  /** the rule files and whether each applies now (`modus/rules/list`); null: not known */
  rules: RuleInfo[] | null;
  plan: PlanView | null;
  todos: Todo[];
  /** the MCP servers (`modus/mcp/list`, `mcp_changed`); null: not known, or the server has no MCP */
  mcp: McpServerInfo[] | null;
  /** the conversation list, once asked for */
  conversations: ConversationSummary[] | null;
  /** the current task (`State.task.id`, then the one a mode or phase change built): the header shows its usage */
  taskId: string | null;
  /** the conversation's tokens and cost (`modus/usage/get`, then each `usage` update); null: not known */
  usage: UsageGetResult | null;
  /**
   * what the conversation's requests take of the model's context window (`State.context`, then
   * each `context` update and each condensing); null: not known
   */
  context: ContextInfo | null;
  /** the conversation the user asked to condense, until the server answers */
  condensing: string | null;
  /** the conversation's checkpoints taken before a tool call, by that call's toolCallId (`modus/checkpoints/list`) */
  checkpoints: Record<string, CheckpointInfo>;
  /** the checkpoint being restored, until the server answers */
  restoring: string | null;
  /** the messages sent while a turn runs, waiting for it to end (`message` with `queued`), oldest first */
  queued: { messageId: string; text: string }[];
  /** the current task's model provider (`State.task.model.provider`) */
  provider: string | null;
  /** the chat's model set-up (see `showsSetup`) */
  setup: SetupView;
  /** the team space this server attaches to and how that stands (`State.space`, `space_changed`); null: none */
  space: SpaceInfo | null;
  /** the space's members as `modus/space/members` last answered (null: not known, or no space) */
  members: SpaceMember[] | null;
  /** counter for client-side entry ids */
  seq: number;
}

/**
 * The model set-up card: `modelsSet`: the user's `modus.models` names a default model (the
 * extension reads it); `open`: asked for (Modus: Set Up a Model); `check`: the last
 * `modus/models/check` answer, `checking` while it runs.
 */
export interface SetupView {
  modelsSet: boolean;
  open: boolean;
  checking: boolean;
  check: ModelCheckResult | null;
}

/**
 * Whether the chat shows the model set-up: asked for, or on an empty chat while no model is
 * configured (the scripted model without a script could only answer a note).
 */
export function showsSetup(view: ViewState): boolean {
  if (view.server.status !== 'running') return false;
  return view.setup.open || (view.entries.length === 0 && view.provider === 'scripted' && !view.setup.modelsSet);
}

export type Action =
  | { type: 'update'; update: Update }
  | { type: 'state'; state: State }
  | { type: 'modes'; modes: ModesListResult }
  | { type: 'approval'; id: string; request: ApprovalRequest }
  | { type: 'approvalAnswered'; id: string; response: ApprovalResponse }
  | { type: 'approvalCancelled'; id: string }
  | { type: 'newConversation'; conversationId: string }
  | { type: 'sent'; result: ChatSendResult }
  | { type: 'error'; text: string }
  | { type: 'server'; server: ServerView }
  /** Modus's own environment: offered, being set up, failed; null: ready, or not used */
  | { type: 'env'; env: EnvView | null }
  /** a line of the extension's in the chat, e.g. that the server stopped and was started again */
  | { type: 'note'; text: string }
  /**
   * shows a stored conversation (`modus/chat/history`) in place of the current entries; `restored`:
   * read again after a restore of the conversation (no turn runs: a call without an answer was undone)
   */
  | { type: 'history'; conversationId: string; messages: HistoryMessage[]; restored?: boolean; queued?: QueuedMessage[] }
  | { type: 'conversations'; conversations: ConversationSummary[] | null }
  /** the todo list as `modus/todos/get` answers it (on start, so a reload shows it) */
  | { type: 'todos'; todos: Todo[] }
  /** the agents and members as `modus/agents/list` answers it (asked for by the composer) */
  | { type: 'agents'; agents: AgentsListResult }
  /** the slash commands as `modus/commands/list` answers it (asked for by the composer) */
  | { type: 'commands'; commands: CommandInfo[] }
  /** the rule files as `modus/rules/list` answers it for the conversation shown (null: the server has none to tell) */
  | { type: 'rules'; rules: RuleInfo[] | null }
  /** the MCP servers as `modus/mcp/list` or `modus.mcp.restart` answers it (null: the server has no MCP) */
  | { type: 'mcp'; servers: McpServerInfo[] | null }
  /** the conversation's usage as `modus/usage/get` answers it (null: none known, e.g. a conversation not stored yet) */
  | { type: 'usage'; conversationId: string; usage: UsageGetResult | null }
  /** the conversation's checkpoints as `modus/checkpoints/list` answers it */
  | { type: 'checkpoints'; conversationId: string; checkpoints: CheckpointInfo[] }
  /** the user restores a checkpoint (its card's buttons wait) */
  | { type: 'restoreStarted'; checkpointId: string }
  /** `modus/checkpoints/restore` answered; `undoOf`: the restore entry this one undoes */
  | { type: 'restored'; what: RestoreKind; result: CheckpointsRestoreResult; undoOf?: string }
  | { type: 'restoreFailed'; text: string }
  /** the user asks to condense the conversation (the context bar waits) */
  | { type: 'condenseStarted'; conversationId: string }
  /** `modus/chat/condense` answered; its `condensed` and `context` updates told what it did */
  | { type: 'condenseEnded' }
  /** `modus/chat/condense` failed, e.g. refused while a turn runs */
  | { type: 'condenseFailed'; text: string }
  /** the model set-up: whether `modus.models` names a default, the card asked for or closed */
  | { type: 'setup'; modelsSet?: boolean; open?: boolean }
  /** `modus/models/check` asked (`result` null) or answered */
  | { type: 'modelCheck'; result: ModelCheckResult | null }
  /** the space's members as `modus/space/members` answers it (null: not known) */
  | { type: 'spaceMembers'; members: SpaceMember[] | null };

/** What the set-up card asks the extension to try or save. */
export type SetupModel = Pick<Model, 'provider' | 'model' | 'baseUrl'>;

export function initialView(): ViewState {
  return {
    server: { status: 'starting' },
    env: null,
    conversationId: null,
    mode: null,
    phase: null,
    yolo: false,
    modes: [],
    entries: [],
    running: [],
    turns: {},
    agents: null,
    commands: null,
    rules: null,
    plan: null,
    todos: [],
    mcp: null,
    conversations: null,
    taskId: null,
    usage: null,
    context: null,
    condensing: null,
    checkpoints: {},
    restoring: null,
    queued: [],
    provider: null,
    setup: { modelsSet: false, open: false, checking: false, check: null },
    space: null,
    members: null,
    seq: 0,
  };
}

export function modeName(view: ViewState, slug: string): string {
  return view.modes.find((m) => m.slug === slug)?.name ?? slug;
}

/** Applies a sequence of actions (e.g. a recorded session) to a view. */
export function replay(actions: Action[], view: ViewState = initialView()): ViewState {
  return actions.reduce(reduce, view);
}

export function reduce(view: ViewState, action: Action): ViewState {
  switch (action.type) {
    case 'update':
      return applyUpdate(view, action.update);
    case 'state':
      return {
        ...view,
        provider: action.state.task.model.provider,
        mode: { slug: action.state.mode.slug, name: action.state.mode.name },
        phase: action.state.phase,
        yolo: action.state.yolo,
        taskId: action.state.task.id,
        conversationId: view.conversationId ?? action.state.conversationId,
        plan: fromPlanInfo(view.plan, action.state.plan),
        // the state's conversation is the one shown (opening one answers its state first)
        context: action.state.context ? contextOf(action.state.context) : null,
        ...withSpace(view, action.state.space ?? null),
      };
    case 'modes': {
      const next = { ...view, modes: action.modes.modes };
      const slug = action.modes.current;
      return { ...next, mode: { slug, name: modeName(next, slug) } };
    }
    case 'approval': {
      // asked in the agent's turn (one inside its tool card goes there: gatedApprovals)
      const turnId = runningTurnOf(view, action.request.agent);
      return push(view, { type: 'approval', id: action.id, turnId, request: action.request, status: 'pending' });
    }
    case 'approvalAnswered':
      return patch(view, action.id, 'approval', (e) => ({
        ...e,
        status: action.response.decision,
        feedback: action.response.feedback ?? undefined,
        always: action.response.always === true && action.response.decision === 'approve' ? true : undefined,
        edited: typeof action.response.content === 'string' && action.response.decision === 'approve' ? true : undefined,
      }));
    case 'approvalCancelled':
      return patch(view, action.id, 'approval', (e) => (e.status === 'pending' ? { ...e, status: 'cancelled' } : e));
    case 'newConversation':
      return {
        ...view,
        conversationId: action.conversationId,
        entries: pendingApprovals(view),
        running: [],
        turns: {},
        plan: livePlan(view),
        usage: null,
        context: null,
        checkpoints: {},
      };
    case 'setup': {
      const { type: _, ...change } = action;
      return { ...view, setup: { ...view.setup, ...change, ...(change.open ? { check: null } : {}) } };
    }
    case 'modelCheck':
      return { ...view, setup: { ...view.setup, checking: action.result === null, check: action.result } };
    case 'spaceMembers':
      return view.space ? { ...view, members: action.members } : view;
    case 'sent':
      return { ...view, conversationId: action.result.conversationId };
    case 'error':
      return pushLocal(view, (id) => ({ type: 'error', id, text: action.text }));
    case 'server':
      // a server that does not run runs no turn and asks nothing: no spinner, no open question
      return action.server.status === 'running' ? { ...view, server: action.server } : notRunning({ ...view, server: action.server });
    case 'env':
      return { ...view, env: action.env };
    case 'note':
      return pushLocal(view, (id) => ({ type: 'system', id, text: action.text }));
    case 'conversations':
      return { ...view, conversations: action.conversations };
    case 'history':
      return {
        ...fromHistory(view, action.conversationId, action.messages, action.restored === true),
        queued: (action.queued ?? []).map((q) => ({ messageId: q.messageId, text: q.text })),
      };
    case 'todos':
      return { ...view, todos: action.todos };
    case 'agents':
      return { ...view, agents: action.agents };
    case 'commands':
      return { ...view, commands: action.commands };
    case 'rules':
      return { ...view, rules: action.rules };
    case 'mcp':
      return { ...view, mcp: action.servers };
    case 'usage':
      return action.conversationId === view.conversationId ? { ...view, usage: action.usage } : view;
    case 'checkpoints': {
      if (action.conversationId !== view.conversationId) return view;
      const byCall = action.checkpoints.filter((c) => c.toolCallId).map((c) => [c.toolCallId!, c] as const);
      return { ...view, checkpoints: Object.fromEntries(byCall) };
    }
    case 'restoreStarted':
      return { ...view, restoring: action.checkpointId };
    case 'restored':
      return restored({ ...view, restoring: null }, action);
    case 'restoreFailed':
      return pushLocal({ ...view, restoring: null }, (id) => ({ type: 'error', id, text: action.text }));
    case 'condenseStarted':
      return { ...view, condensing: action.conversationId };
    case 'condenseEnded':
      return { ...view, condensing: null };
    case 'condenseFailed':
      return pushLocal({ ...view, condensing: null }, (id) => ({ type: 'error', id, text: action.text }));
  }
}

/**
 * The space as the server says it now. The members known stay while it is the same space (a
 * reconnect does not blank the list); another space, or none, forgets them.
 */
function withSpace(view: ViewState, space: SpaceInfo | null): Pick<ViewState, 'space' | 'members'> {
  const same = space !== null && view.space !== null && space.name === view.space.name && space.member === view.space.member;
  return { space, members: same ? view.members : null };
}

/**
 * Who wrote a user message, when a colleague did: the member's display name (from the members
 * list, else the handle); null for the user's own messages (no member named, or the user's handle,
 * or no space to tell by).
 */
export function colleagueOf(view: ViewState, e: Extract<Entry, { type: 'user' }>): string | null {
  if (!e.member || !view.space || e.member === view.space.member) return null;
  return view.members?.find((m) => m.handle === e.member)?.displayName || e.member;
}

/** The server stopped: its turns are over (their streams closed) and its questions withdrawn. */
function notRunning(view: ViewState): ViewState {
  if (view.running.length === 0 && !view.entries.some((e) => (e.type === 'assistant' && e.streaming) || (e.type === 'approval' && e.status === 'pending'))) return view;
  const entries = view.entries.map((e): Entry =>
    e.type === 'assistant' && e.streaming ? { ...e, streaming: false } : e.type === 'approval' && e.status === 'pending' ? { ...e, status: 'cancelled' } : e,
  );
  return { ...view, running: [], entries };
}

/**
 * A restore's note at the end of the chat: what came back, and Undo restore while there are
 * files to put back. Undoing marks the restore it undid.
 */
function restored(view: ViewState, action: Extract<Action, { type: 'restored' }>): ViewState {
  const { restored: paths, checkpoint } = action.result;
  if (action.undoOf) {
    view = patch(view, action.undoOf, 'restore', (e) => ({ ...e, undone: true }));
    return pushLocal(view, (id) => ({ type: 'restore', id, what: 'undo', restored: paths }));
  }
  const undo = paths.length > 0 ? { undo: checkpoint } : {};
  return pushLocal(view, (id) => ({ type: 'restore', id, what: action.what, restored: paths, ...undo }));
}

/**
 * The entries a stored conversation (`modus/chat/history`) shows, as the live updates showed them:
 * tool cards come from an assistant message's `metadata.toolCalls`, with the ids live updates use
 * (`tool:<toolCallId>`), and get their outcome from the `tool` message that answers them. The
 * server answers every call, even a cancelled or interrupted one, so a call without an answer
 * belongs to a turn still running: pending while it is in the last reply (the live updates go on
 * with the same card), else failed as Interrupted. A model's switch_mode that succeeded shows the
 * mode change after its card; a switch the user made is not in the history. Approvals still
 * waiting for an answer stay, after the conversation.
 *
 * A stored message of an agent's turn names the turn (`metadata.turnId`, the id live updates use)
 * and who woke it (`metadata.wokenBy`), so each turn is one block as it was live. Messages stored
 * before the server recorded that have only their agent: an agent's messages after the same user
 * message are then shown as one turn (`stored:<n>:<agent>`, n counting the user messages). The
 * system message that lists refused mentions carries them (`metadata.mentionsRefused`).
 *
 * After a restore of the conversation to just before a call, the reply that made the call stays
 * and the results from that call on are gone: those calls show as undone.
 */
function turnError(v: unknown): { type: string; message: string } | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const { type, message } = v as Record<string, unknown>;
  return typeof type === 'string' && typeof message === 'string' ? { type, message } : undefined;
}

/**
 * The turn a Retry would run again: the conversation's last turn note, when it failed, was
 * cancelled or interrupted and nothing came after it (no turn runs, no message since).
 */
export function retryable(view: ViewState): string | undefined {
  if (view.running.length > 0) return undefined;
  for (let i = view.entries.length - 1; i >= 0; i--) {
    const e = view.entries[i];
    if (e.type === 'turn') return ['failed', 'cancelled', 'interrupted'].includes(e.outcome) ? e.id : undefined;
    if (e.type === 'user' || e.type === 'assistant') return undefined;
  }
  return undefined;
}

function fromHistory(view: ViewState, conversationId: string, messages: HistoryMessage[], restored = false): ViewState {
  const same = conversationId === view.conversationId;
  let next: ViewState = {
    ...view,
    conversationId,
    entries: [],
    running: [],
    turns: {},
    plan: livePlan(view),
    usage: same ? view.usage : null,
    checkpoints: same ? view.checkpoints : {},
  };
  const answers = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.metadata.toolCallId, m]));
  const lastReply = messages.map((m) => m.role).lastIndexOf('assistant');
  let mode: unknown; // the mode of the latest reply
  let asked = 0; // the user messages so far
  const turnOf = (m: HistoryMessage): string | undefined => {
    const agent = m.agent;
    if (!agent) return undefined;
    const { turnId: stored, wokenBy } = m.metadata;
    const turnId = typeof stored === 'string' && stored ? stored : `stored:${asked}:${agent}`;
    next = noteTurn(next, turnId, agent, typeof wokenBy === 'string' && wokenBy ? wokenBy : undefined);
    return turnId;
  };
  messages.forEach((m, i) => {
    // a message with @-mentions is shown as typed (the agents got it without them)
    const typed = typeof m.metadata.typed === 'string' ? m.metadata.typed : m.text;
    if (m.role === 'user') {
      asked++;
      const member = typeof m.metadata.member === 'string' && m.metadata.member ? { member: m.metadata.member } : {};
      next = pushLocal(next, (id) => ({ type: 'user', id, text: typed, messageId: m.id, ...(m.images?.length ? { images: m.images } : {}), ...member }));
    } else if (m.role === 'system' && typeof m.metadata.outcome === 'string') {
      // how a turn ended (failed, cancelled, interrupted) and why
      const turnId = turnOf(m);
      const error = turnError(m.metadata.error) ?? { type: m.metadata.outcome, message: m.text };
      next = pushLocal(next, (id) => ({ type: 'turn', id, turnId, agent: m.agent ?? 'Modus', outcome: String(m.metadata.outcome), error }));
    } else if (m.role === 'system') {
      const turnId = turnOf(m);
      const mentionsRefused = refusedMentions(m.metadata.mentionsRefused);
      next = pushLocal(next, (id) => ({ type: 'system', id, turnId, text: m.text, ...(mentionsRefused ? { mentionsRefused } : {}) }));
    } else if (m.role === 'tool') next = storedResult(next, m, mode);
    else {
      mode = m.metadata.mode;
      const agent = m.agent ?? undefined;
      const turnId = turnOf(m);
      if (m.text) next = pushAssistant(next, { turnId, agent, text: m.text }, false);
      for (const c of storedCalls(m.metadata.toolCalls)) {
        const answer = answers.get(c.id);
        if (RESPOND_TOOLS.has(c.name) && answer?.metadata.isError !== true) {
          // shown live as the assistant's message (a blocked second act_mode_respond was not)
          if (!answer?.text.startsWith('[BLOCKED]')) next = pushAssistant(next, { turnId, agent, text: respondText(c.arguments) }, false);
          continue;
        }
        const lost = !answer && i !== lastReply && !restored;
        next = push(next, {
          type: 'tool',
          id: `tool:${c.id}`,
          turnId,
          name: c.name,
          params: c.arguments,
          status: !answer && restored ? 'undone' : lost ? 'failed' : 'pending',
          error: lost ? { type: 'Interrupted', message: 'No result was recorded for this call.' } : undefined,
        });
      }
    }
  });
  return { ...next, entries: [...next.entries, ...pendingApprovals(view)] };
}

/** `metadata.mentionsRefused` of a stored system message: [{mention, reason}], else undefined. */
function refusedMentions(value: unknown): RefusedMention[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value
    .filter((r) => r && typeof r === 'object' && typeof r.mention === 'string')
    .map((r) => ({ mention: r.mention, reason: typeof r.reason === 'string' ? r.reason : '' }));
}

/** Tools whose `response` the server shows as the assistant's message: no card of their own. */
const RESPOND_TOOLS = new Set(['plan_mode_respond', 'act_mode_respond']);

/** The message a respond tool's call showed: the response, its progress checklist below. */
function respondText(params: Record<string, unknown>): string {
  const response = typeof params.response === 'string' ? params.response : '';
  return typeof params.task_progress === 'string' && params.task_progress ? `${response}\n\n${params.task_progress}` : response;
}

/** `metadata.toolCalls` of a stored assistant message: [{id, name, arguments}]. */
function storedCalls(value: unknown): { id: string; name: string; arguments: Record<string, unknown> }[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((c) => c && typeof c.id === 'string' && typeof c.name === 'string')
    .map((c) => ({ id: c.id, name: c.name, arguments: c.arguments && typeof c.arguments === 'object' ? c.arguments : {} }));
}

/** A stored `tool` message: the outcome of the card of `metadata.toolCallId`. */
function storedResult(view: ViewState, m: HistoryMessage, mode: unknown): ViewState {
  const { toolCallId, isError, errorType } = m.metadata;
  const id = `tool:${toolCallId}`;
  const call = view.entries.find((e) => e.id === id);
  if (call?.type !== 'tool') return view;
  // the server's own result for a call a restored conversation came before: it did not run
  if (errorType === 'Restored') return patch(view, id, 'tool', (e) => ({ ...e, status: 'undone', error: undefined }));
  if (isError === true) {
    const error = { type: typeof errorType === 'string' ? errorType : 'Error', message: m.text };
    return patch(view, id, 'tool', (e) => ({ ...e, status: 'failed', error }));
  }
  // a browser_action's result carries its screenshot (the last image of the stored message)
  const shot = call.name === 'browser_action' ? storedImageId(m.metadata.images) : undefined;
  const images = call.name === 'browser_action' ? [] : imageRefs(m.metadata.images);
  view = patch(view, id, 'tool', (e) => ({
    ...e,
    status: 'completed',
    result: m.text,
    ...(shot ? { screenshot: { id: shot } } : {}),
    ...(images.length ? { images } : {}),
  }));
  const to = call.params.mode_slug;
  if (call.name !== 'switch_mode' || typeof mode !== 'string' || typeof to !== 'string') return view;
  const reason = typeof call.params.reason === 'string' ? call.params.reason : undefined;
  return insertAfter(view, id, (nid) => ({ type: 'mode', id: nid, turnId: call.turnId, from: mode, to, reason, by: 'model' }));
}

/** A stored message's `metadata.images` ([{id, mimeType}]), those well formed. */
function imageRefs(value: unknown): ImageRef[] {
  if (!Array.isArray(value)) return [];
  return value.filter((i): i is ImageRef => !!i && typeof i === 'object' && typeof i.id === 'string' && typeof i.mimeType === 'string');
}

/** The id of the last of a stored message's `metadata.images`, if any. */
function storedImageId(value: unknown): string | undefined {
  return imageRefs(value).at(-1)?.id;
}

/** The approvals still waiting for an answer: a turn is blocked on each, whatever is shown (on their own, after it). */
function pendingApprovals(view: ViewState): Entry[] {
  return view.entries.flatMap((e) => (e.type === 'approval' && e.status === 'pending' ? [{ ...e, turnId: undefined }] : []));
}

/** What the chat says of a hook's run: nothing when it went well, or when its call's card says it. */
export function hookText(u: { event: string; command: string; outcome: string; output?: string | null }): string | null {
  if (u.outcome === 'ok' || (u.outcome === 'blocked' && u.event === 'PreToolUse')) return null;
  const what = { blocked: 'blocked', failed: 'failed', timeout: 'ran out of time' }[u.outcome] ?? u.outcome;
  return `The ${u.event} hook \`${u.command}\` ${what}${u.output ? `: ${u.output}` : '.'}`;
}

function applyUpdate(view: ViewState, u: Update): ViewState {
  // The plan and the todos are the agent's, whatever conversation reports them.
  if (u.kind === 'plan') return { ...view, plan: fromPlanUpdate(view.plan, u) };
  if (u.kind === 'todos') return { ...view, todos: u.todos };
  // The MCP servers are the session's, whatever conversation reports them.
  if (u.kind === 'mcp_changed') return { ...view, mcp: u.servers };
  // The space is the server's, whatever conversation reports it; a mention of the user is the
  // extension's to tell (a VS Code notification), not a line of the chat.
  if (u.kind === 'space_changed') return { ...view, ...withSpace(view, u.space) };
  if (u.kind === 'notification') return view;
  // Mode and phase are the session's, whatever conversation reports them.
  if (u.kind === 'mode_changed') {
    const next = { ...view, mode: { slug: u.to, name: modeName(view, u.to) }, taskId: u.taskId };
    if (!sameConversation(view, u.conversationId)) return next;
    return pushLocal(adopt(next, u.conversationId), (id) => ({
      type: 'mode',
      id,
      turnId: u.by === 'model' ? runningTurnOf(view, u.agent) : undefined,
      from: u.from,
      to: u.to,
      reason: u.reason,
      by: u.by,
    }));
  }
  if (u.kind === 'phase_changed') {
    const next = { ...view, phase: u.to, taskId: u.taskId };
    if (!sameConversation(view, u.conversationId)) return next;
    const turnId = u.by === 'model' ? runningTurnOf(view, u.agent) : undefined;
    return pushLocal(adopt(next, u.conversationId), (id) => ({ type: 'phase', id, turnId, from: u.from, to: u.to }));
  }
  if (!sameConversation(view, u.conversationId)) return view;
  view = adopt(view, u.conversationId);
  // every update of a turn names its agent: the turn is known even when its start was missed
  if ('turnId' in u && u.turnId && u.agent) view = noteTurn(view, u.turnId, u.agent);
  switch (u.kind) {
    case 'usage':
      return { ...view, usage: withRequest(view.usage, u) };
    case 'context':
      return { ...view, context: contextOf(u) };
    case 'state_changed':
      // a settings file was edited or trusted: yolo, the task's model, the window
      return reduce(view, { type: 'state', state: u.state });
    case 'condensed':
      // `after`: what the next request takes (the `context` update that follows says it too)
      return view.context ? { ...view, context: { ...view.context, used: u.after } } : view;
    case 'turn_started':
      return {
        ...noteTurn(view, u.turnId, u.agent, u.wokenBy ?? undefined),
        running: [...view.running.filter((t) => t !== u.turnId), u.turnId],
      };
    case 'turn_ended': {
      let next = { ...closeStreams(view, u.turnId), running: view.running.filter((t) => t !== u.turnId) };
      if (u.outcome === 'completed') return next;
      const error = u.error ?? undefined;
      // the turn's note says why: the system message of the same words, sent just before, goes
      const said = error && [...next.entries].reverse().find((e) => e.type === 'system' && e.turnId === u.turnId && e.text === error.message);
      if (said) next = { ...next, entries: next.entries.filter((e) => e !== said) };
      return pushLocal(next, (id) => ({ type: 'turn', id, turnId: u.turnId, agent: u.agent, outcome: u.outcome, ...(error ? { error } : {}) }));
    }
    case 'unqueued':
      return { ...view, queued: view.queued.filter((q) => q.messageId !== u.messageId) };
    case 'conversation_cut': {
      // Edit & resend: the edited message and what came after it go (a checkpoint's restore,
      // cut elsewhere, shows the stored conversation again: see Checkpoints)
      const at = view.entries.findIndex((e) => e.type === 'user' && e.messageId !== undefined && e.messageId === u.messageId);
      return at < 0 ? view : { ...view, entries: view.entries.slice(0, at) };
    }
    case 'thinking_delta': {
      // one block per stretch of thinking: it goes on while nothing else of the turn came after it
      const last = [...view.entries].reverse().find((e) => 'turnId' in e && e.turnId === u.turnId);
      if (last?.type === 'thinking') return patch(view, last.id, 'thinking', (e) => ({ ...e, text: e.text + u.text }));
      return pushLocal(view, (id) => ({ type: 'thinking', id, turnId: u.turnId, text: u.text }));
    }
    case 'message_delta': {
      const open = openStream(view, u.turnId);
      if (open) return patch(view, open.id, 'assistant', (e) => ({ ...e, text: e.text + u.text }));
      return pushAssistant(view, u, true);
    }
    case 'message': {
      if (u.role === 'assistant') {
        const open = u.turnId ? openStream(view, u.turnId) : undefined;
        if (open) return patch(view, open.id, 'assistant', (e) => ({ ...e, text: u.text, streaming: false }));
        return pushAssistant(view, u, false);
      }
      if (u.role === 'user') {
        const messageId = u.messageId ?? undefined;
        if (u.queued && messageId) return { ...view, queued: [...view.queued.filter((q) => q.messageId !== messageId), { messageId, text: u.text }] };
        const next = messageId ? { ...view, queued: view.queued.filter((q) => q.messageId !== messageId) } : view;
        const images = u.images?.length ? { images: u.images } : {};
        const member = u.member ? { member: u.member } : {};
        return pushLocal(next, (id) => ({ type: 'user', id, text: u.text, ...(messageId ? { messageId } : {}), ...images, ...member }));
      }
      return pushLocal(view, (id) => ({ type: 'system', id, turnId: u.turnId ?? undefined, text: u.text }));
    }
    case 'hook': {
      // a hook that blocked, failed or ran out of time is said in the chat (a blocked call's card says it already)
      const text = hookText(u);
      return text ? pushLocal(view, (id) => ({ type: 'system', id, text })) : view;
    }
    case 'tool_call': {
      // A tool call ends the streamed text before it.
      view = closeStreams(view, u.turnId);
      if (RESPOND_TOOLS.has(u.name) && u.status !== 'failed') return view; // its `message` shows it
      const id = `tool:${u.toolCallId}`;
      const entry: Entry = {
        type: 'tool',
        id,
        turnId: u.turnId,
        name: u.name,
        params: u.params,
        status: u.status,
        result: u.result,
        error: u.error,
        ...(u.images?.length && u.name !== 'browser_action' ? { images: u.images } : {}),
      };
      // a card shown from the history stays in its turn when the live call goes on; a screenshot it got stays
      if (view.entries.some((e) => e.id === id)) {
        return patch(view, id, 'tool', (e) => ({ ...entry, turnId: e.turnId ?? entry.turnId, ...(e.screenshot ? { screenshot: e.screenshot } : {}) }));
      }
      return push(view, entry);
    }
    case 'browser': {
      // the page after a browser_action: its card shows the screenshot (the call's `tool_call` updates came before)
      if (!u.toolCallId) return view;
      const screenshot: Screenshot = { id: u.screenshotId, url: u.url, title: u.title, width: u.width, height: u.height };
      return patch(view, `tool:${u.toolCallId}`, 'tool', (e) => ({ ...e, screenshot }));
    }
  }
  return view;
}

/** The context fields of `State.context` or a `context` update (`used` absent before a request). */
function contextOf(c: ContextInfo): ContextInfo {
  return c.used === undefined ? { window: c.window, threshold: c.threshold } : { used: c.used, window: c.window, threshold: c.threshold };
}

/** The plan without an ended one: the agent's plan goes on in any conversation, an ended one is not. */
function livePlan(view: ViewState): PlanView | null {
  return view.plan?.state === 'normal' ? null : view.plan;
}

/**
 * A `plan` update. It names no plan: goal, scope and id carry over from the plan shown unless
 * this one is new (it starts after none, or after one that ended); the extension then reads them
 * from `modus/state`.
 */
function fromPlanUpdate(prev: PlanView | null, u: PlanUpdate): PlanView {
  const same = prev !== null && prev.state !== 'normal';
  return {
    ...(same ? { goal: prev.goal, scope: prev.scope, planId: prev.planId } : {}),
    state: u.state,
    ended: u.state === 'normal' ? endedAs(u.markdown) : undefined,
    plan: u.plan,
    markdown: u.markdown,
    completedSteps: u.completedSteps,
  };
}

/** `State.plan`: the plan as it is now. It has no markdown: the last update's is kept while it still holds. */
function fromPlanInfo(prev: PlanView | null, info: PlanInfo): PlanView | null {
  if (info.state === 'normal') return prev?.state === 'normal' ? prev : null;
  const holds =
    prev !== null &&
    prev.state === info.state &&
    (!prev.planId || prev.planId === info.planId) &&
    prev.completedSteps.join('\n') === info.completedSteps.join('\n');
  return {
    state: info.state,
    goal: info.goal,
    scope: info.scope,
    planId: info.planId,
    plan: info.plan,
    markdown: holds ? prev.markdown : undefined,
    completedSteps: info.completedSteps,
  };
}

/** How an ended plan ended, from its document's status line. */
function endedAs(markdown: string | undefined): PlanView['ended'] {
  const m = /^Status: (completed|rejected)\s*$/m.exec(markdown ?? '');
  return m ? (m[1] as 'completed' | 'rejected') : undefined;
}

/** Whether the sidebar shows a plan card: a live plan, or one that just ended. */
export function planShown(view: ViewState): boolean {
  return view.plan !== null && (view.plan.state !== 'normal' || view.plan.ended !== undefined);
}

/**
 * The plan's steps in the order they run (each after the steps it depends on, else the plan's
 * order: the server's step_order), each done, current (the next one, while executing) or pending.
 */
export function planSteps(plan: PlanView): PlanStep[] {
  const raw = Array.isArray(plan.plan?.steps) ? (plan.plan.steps as Record<string, unknown>[]) : [];
  const text = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
  const list = (v: unknown) => (Array.isArray(v) ? v.map(text).filter(Boolean) : []);
  const steps = raw
    .filter((s) => s && typeof s === 'object')
    .map((s) => ({ id: text(s.id), description: text(s.description), files: list(s.files), verification: text(s.verification), dependsOn: list(s.depends_on) }));
  const ordered: typeof steps = [];
  const placed = new Set<string>();
  for (let pending = steps; ; ) {
    const ready = pending.find((s) => s.dependsOn.every((d) => placed.has(d)));
    if (!ready) {
      ordered.push(...pending); // a cycle (not in a valid plan): the plan's order
      break;
    }
    ordered.push(ready);
    placed.add(ready.id);
    pending = pending.filter((s) => s !== ready);
  }
  const done = new Set(plan.completedSteps);
  const next = plan.state === 'executing' ? ordered.find((s) => !done.has(s.id) && s.dependsOn.every((d) => done.has(d))) : undefined;
  return ordered.map(({ dependsOn: _, ...s }) => ({ ...s, status: done.has(s.id) ? 'done' : s.id === next?.id ? 'current' : 'pending' }));
}

/** The plan card's badge: drafting, pending approval, step k of n, all n steps done, completed, rejected. */
export function planBadge(plan: PlanView): string {
  if (plan.state === 'normal') return plan.ended ?? 'ended';
  if (plan.state === 'planning') return 'drafting';
  if (plan.state === 'awaiting_approval') return 'pending approval';
  const steps = planSteps(plan);
  const current = steps.findIndex((s) => s.status === 'current');
  return current >= 0 ? `step ${current + 1} of ${steps.length}` : `all ${steps.length} steps done`;
}

/**
 * The approvals shown inside the plan card: every pending one of kind `plan` (plan_exit's
 * question, a relayed decision, a step change) while the card is shown. Once answered, an
 * approval goes back to the tool card of the call it gated.
 */
export function planApprovals(view: ViewState): Extract<Entry, { type: 'approval' }>[] {
  if (!planShown(view)) return [];
  return view.entries.filter(
    (e): e is Extract<Entry, { type: 'approval' }> => e.type === 'approval' && e.request.kind === 'plan' && e.status === 'pending',
  );
}

/** Records whose turn `turnId` is (and who woke it), when that is news. */
function noteTurn(view: ViewState, turnId: string, agent: string, wokenBy?: string): ViewState {
  const known = view.turns[turnId];
  const info: TurnInfo = { agent, wokenBy: wokenBy ?? known?.wokenBy };
  if (known && known.agent === info.agent && known.wokenBy === info.wokenBy) return view;
  return { ...view, turns: { ...view.turns, [turnId]: info } };
}

/** The turn the agent is running in the conversation shown, if any. */
function runningTurnOf(view: ViewState, agent: string | null | undefined): string | undefined {
  return agent ? view.running.find((t) => view.turns[t]?.agent === agent) : undefined;
}

function sameConversation(view: ViewState, conversationId: string): boolean {
  return view.conversationId === null || view.conversationId === conversationId;
}

function adopt(view: ViewState, conversationId: string): ViewState {
  return view.conversationId === null ? { ...view, conversationId } : view;
}

function openStream(view: ViewState, turnId: string) {
  for (let i = view.entries.length - 1; i >= 0; i--) {
    const e = view.entries[i];
    if (e.type === 'assistant' && e.turnId === turnId && e.streaming) return e;
  }
  return undefined;
}

function closeStreams(view: ViewState, turnId: string): ViewState {
  if (!view.entries.some((e) => e.type === 'assistant' && e.turnId === turnId && e.streaming)) return view;
  return {
    ...view,
    entries: view.entries.map((e) =>
      e.type === 'assistant' && e.turnId === turnId && e.streaming ? { ...e, streaming: false } : e,
    ),
  };
}

function push(view: ViewState, entry: Entry): ViewState {
  return { ...view, entries: [...view.entries, entry] };
}

function pushLocal(view: ViewState, make: (id: string) => Entry): ViewState {
  const seq = view.seq + 1;
  return push({ ...view, seq }, make(`e${seq}`));
}

function insertAfter(view: ViewState, after: string, make: (id: string) => Entry): ViewState {
  const seq = view.seq + 1;
  const at = view.entries.findIndex((e) => e.id === after) + 1;
  return { ...view, seq, entries: [...view.entries.slice(0, at), make(`e${seq}`), ...view.entries.slice(at)] };
}

function pushAssistant(
  view: ViewState,
  u: { turnId?: string; agent?: string; text: string },
  streaming: boolean,
): ViewState {
  return pushLocal(view, (id) => ({ type: 'assistant', id, turnId: u.turnId, agent: u.agent, text: u.text, streaming }));
}

function patch<T extends Entry['type']>(
  view: ViewState,
  id: string,
  type: T,
  fn: (e: Extract<Entry, { type: T }>) => Entry,
): ViewState {
  return {
    ...view,
    entries: view.entries.map((e) => (e.id === id && e.type === type ? fn(e as Extract<Entry, { type: T }>) : e)),
  };
}

/**
 * The approvals shown inside the tool card they gate (`request.toolCallId`), by tool entry id.
 * An approval whose call has no card stands on its own.
 */
export function gatedApprovals(view: ViewState): Map<string, Extract<Entry, { type: 'approval' }>[]> {
  const tools = new Set(view.entries.filter((e) => e.type === 'tool').map((e) => e.id));
  const gated = new Map<string, Extract<Entry, { type: 'approval' }>[]>();
  const inPlan = new Set<Entry>(planApprovals(view));
  for (const e of view.entries) {
    if (inPlan.has(e)) continue;
    const host = e.type === 'approval' && e.request.toolCallId ? `tool:${e.request.toolCallId}` : '';
    if (e.type === 'approval' && tools.has(host)) gated.set(host, [...(gated.get(host) ?? []), e]);
  }
  return gated;
}

/** A denial's message without the `<feedback>` block the server appends, and that feedback. */
export function splitFeedback(message: string): { text: string; feedback?: string } {
  const m = /^([\s\S]*?)\s*<feedback>\n?([\s\S]*?)\n?<\/feedback>\s*$/.exec(message);
  return m ? { text: m[1], feedback: m[2].trim() } : { text: message };
}

/** A turn's block in the chat: the agent's name, who woke it, and what the turn showed. */
export interface TurnBlock {
  type: 'turn';
  /** the block's own id: the turn's, and which of its blocks (a user message in between starts another) */
  key: string;
  turnId: string;
  agent: string;
  wokenBy?: string;
  entries: Entry[];
}

export type LayoutItem = { type: 'entry'; entry: Entry } | TurnBlock;

/**
 * The chat in the order shown: the entries as they came, except that the entries of one turn
 * stay together in its block, placed where the turn first showed something. Two agents at work
 * at once show as two blocks, each growing by itself, never as one text interleaved. A user
 * message keeps its place in time: what a turn shows after it goes in a new block below it.
 */
export function layout(view: ViewState): LayoutItem[] {
  const items: LayoutItem[] = [];
  const open = new Map<string, TurnBlock>(); // the blocks since the last user message
  let blocks = 0;
  for (const entry of view.entries) {
    const turnId = 'turnId' in entry ? entry.turnId : undefined;
    if (entry.type === 'user') open.clear();
    if (!turnId) {
      items.push({ type: 'entry', entry });
      continue;
    }
    let block = open.get(turnId);
    if (!block) {
      const info = view.turns[turnId];
      block = { type: 'turn', key: `${turnId}#${++blocks}`, turnId, agent: info?.agent ?? 'Modus', wokenBy: info?.wokenBy, entries: [] };
      open.set(turnId, block);
      items.push(block);
    }
    block.entries.push(entry);
  }
  return items;
}

/**
 * What a user reads in the view, one line per entry, in the order shown (the entries of a turn
 * together; an approval inside its tool card is indented under it): handy for tests and logs.
 */
export function describe(view: ViewState): string[] {
  const gated = gatedApprovals(view);
  const inside = new Set<Entry>([...gated.values()].flat());
  const shown = layout(view).flatMap((item) => (item.type === 'turn' ? item.entries : [item.entry]));
  return shown.flatMap((e) => {
    if (inside.has(e)) return [];
    return [line(e), ...(gated.get(e.id) ?? []).map((a) => `  ${line(a)}`)];
  });
}

function line(e: Entry): string {
  switch (e.type) {
    case 'user':
      return `user: ${e.text}`;
    case 'assistant':
      return `assistant: ${e.text}`;
    case 'thinking':
      return `thinking: ${e.text}`;
    case 'system':
      return `system: ${e.text}`;
    case 'tool': {
      if (!e.error) return `tool ${e.name} ${e.status}`;
      const { text, feedback } = splitFeedback(e.error.message);
      return `tool ${e.name} ${e.status} ${e.error.type}: ${text}${feedback ? ` (feedback: ${feedback})` : ''}`;
    }
    case 'mode':
      return `mode ${e.from} -> ${e.to}`;
    case 'phase':
      return `phase ${e.from} -> ${e.to}`;
    case 'approval':
      return `approval ${e.request.kind} ${e.status}${e.always ? ' (always)' : ''}: ${e.request.title}`;
    case 'turn':
      return `turn ${e.outcome}`;
    case 'restore':
      return `${restoreNote(e)}${e.undo && !e.undone ? ' [Undo restore]' : ''}`;
    case 'error':
      return `error: ${e.text}`;
  }
}

/** The note a restore leaves in the chat: "Restored 2 files: a.txt, b.txt.", "Restored the conversation and 1 file: a.txt." */
export function restoreNote(e: Extract<Entry, { type: 'restore' }>): string {
  const n = e.restored.length;
  const files = n === 0 ? '' : `${n} file${n === 1 ? '' : 's'}: ${e.restored.join(', ')}`;
  if (e.what === 'undo') return n ? `Restore undone: put back ${files}.` : 'Restore undone: no file had changed.';
  // Undo restore puts the files back; the conversation stays as restored
  if (e.what === 'both') return `Restored the conversation${n ? ` and ${files}${e.undone ? ' (the files undone)' : ''}` : ' (no file had changed)'}.`;
  return n ? `Restored ${files}${e.undone ? ' (undone)' : ''}.` : 'Restored: no file had changed.';
}
