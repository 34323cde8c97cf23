// The typed protocol layer: method names, request helpers, server-request handlers.
// It does not import `vscode`: the extension runs it over vscode-languageclient, the tests over
// a plain vscode-jsonrpc connection to the real server.
import {
  ApprovalRequest,
  ApprovalResponse,
  ChatSendParams,
  Command,
  McpListResult,
  Method,
  Model,
  PromptGetParams,
  Requests,
  State,
  Update,
} from './generated';

export interface Disposable {
  dispose(): void;
}

export interface CancellationLike {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): Disposable;
}

/** What both vscode-jsonrpc's MessageConnection and vscode-languageclient's LanguageClient offer. */
export interface Rpc {
  sendRequest(method: string, params: unknown): Promise<unknown>;
  onNotification(method: string, handler: (params: any) => void): Disposable;
  onRequest(method: string, handler: (params: any, token: CancellationLike) => unknown): Disposable;
}

export type ApprovalHandler = (request: ApprovalRequest, token: CancellationLike) => Promise<ApprovalResponse>;

/** The client capability that tells the server this client renders `modus/approval` itself. */
export const CLIENT_EXPERIMENTAL_CAPABILITIES = { modus: { approvals: true } } as const;

export class ModusApi {
  constructor(private readonly rpc: Rpc) {}

  request<M extends keyof Requests>(method: M, params: Requests[M]['params']): Promise<Requests[M]['result']> {
    return this.rpc.sendRequest(method, params) as Promise<Requests[M]['result']>;
  }

  state() {
    return this.request(Method.state, {});
  }
  modes() {
    return this.request(Method.modesList, {});
  }
  switchMode(slug: string) {
    return this.request(Method.modesSwitch, { slug });
  }
  setPhase(phase: 'plan' | 'act') {
    return this.request(Method.phaseSet, { phase });
  }
  send(params: ChatSendParams) {
    return this.request(Method.chatSend, params);
  }
  cancel(conversationId: string) {
    return this.request(Method.chatCancel, { conversationId });
  }
  /**
   * Runs the conversation's last turn again, when it failed or was cancelled (its `turn_ended`
   * carried an `error`): the same agent, on the conversation as it stands. Refused while a turn
   * runs, or when the last turn did not fail and was not cancelled.
   */
  retry(conversationId: string) {
    return this.request(Method.chatRetry, { conversationId });
  }
  /**
   * Edit & resend: the conversation cut back to just before the user's message `messageId` (a
   * `conversation_cut` update follows), then `text` sent in its place as `send` sends it. With
   * `files`, the workspace's files too go back to how they were when that message was sent
   * (`restored` and the undo `checkpoint`, or `filesNotRestored` saying why not). Refused while a
   * turn runs.
   */
  edit(conversationId: string, messageId: string, text: string, files = false) {
    return this.request(Method.chatEdit, { conversationId, messageId, text, ...(files ? { files } : {}) });
  }
  /**
   * Takes back a message queued behind a running turn (`send` answered `queued: true`) before it
   * goes in; answers its text, as typed, for the composer. An `unqueued` update follows.
   */
  unqueue(conversationId: string, messageId: string) {
    return this.request(Method.chatUnqueue, { conversationId, messageId });
  }
  history(conversationId: string) {
    return this.request(Method.chatHistory, { conversationId });
  }
  /** A stored image (a message's, a tool result's): its type and its bytes in base64. */
  image(id: string) {
    return this.request(Method.chatImage, { id });
  }
  conversations() {
    return this.request(Method.chatList, {});
  }
  /** Makes the conversation the current one (a new id opens a new one; none: the server picks). */
  open(conversationId?: string) {
    return this.request(Method.chatOpen, conversationId ? { conversationId } : {});
  }
  prompt(params: PromptGetParams = {}) {
    return this.request(Method.promptGet, params);
  }
  /** The user approves the plan waiting for approval (answers plan_exit's question, if one is asked). */
  planApprove(feedback?: string) {
    return this.request(Method.planApprove, feedback ? { feedback } : {});
  }
  /** The user rejects the plan waiting for approval, or stops the one being carried out. */
  planReject(feedback?: string) {
    return this.request(Method.planReject, feedback ? { feedback } : {});
  }
  /** The agents and members that can be @-mentioned (the workspace's agents file read afresh). */
  agents() {
    return this.request(Method.agentsList, {});
  }
  /** The team space's members and who is online (empty without a space, or while it is offline). */
  spaceMembers() {
    return this.request(Method.spaceMembers, {});
  }
  /** An agent's todo list (none: the default agent's). */
  todos(agent?: string) {
    return this.request(Method.todosGet, agent ? { agent } : {});
  }
  /** The conversation's checkpoints, oldest first (`disabled` says why there are none). */
  checkpoints(conversationId: string) {
    return this.request(Method.checkpointsList, { conversationId });
  }
  /** The files changed since the checkpoint, each with git's unified diff from the checkpoint to now. */
  checkpointDiff(id: string) {
    return this.request(Method.checkpointsDiff, { id });
  }
  /** Back to the checkpoint: its files, its conversation, or both (refused while a turn runs). */
  restoreCheckpoint(id: string, restore: 'files' | 'conversation' | 'both') {
    return this.request(Method.checkpointsRestore, { id, restore });
  }
  /** The conversation's tokens and cost: in total, per task, per mode and phase, per agent. */
  usage(conversationId: string) {
    return this.request(Method.usageGet, { conversationId });
  }
  /**
   * The conversation condensed now: the model summarises its older part (refused while a turn
   * runs). Answers what the next request takes, before and after (the same: nothing to condense).
   */
  condense(conversationId: string) {
    return this.request(Method.chatCondense, { conversationId });
  }

  /**
   * The rule files and whether the prompt has each now (`modus/rules/list`): of the conversation
   * (its touched files wake the conditional ones), by default the current one.
   */
  rules(conversationId?: string | null) {
    return this.request(Method.rulesList, conversationId ? { conversationId } : {});
  }
  /** The slash commands (`modus/commands/list`): the prompt files read afresh, the server's own. */
  commands() {
    return this.request(Method.commandsList, {});
  }
  /** The skills (`modus/skills/list`): name, description, its SKILL.md, the workspace's or the user's. */
  skills() {
    return this.request(Method.skillsList, {});
  }
  /** A model's settings tried before they are saved (`modus/models/check`): its server's answer, in words. */
  checkModel(model: Model) {
    return this.request(Method.modelsCheck, { model });
  }

  /**
   * The MCP servers with their state, tools and resources (`modus/mcp/list`); null when the
   * server has no such method (a server without MCP answers MethodNotFound).
   */
  async mcpList(): Promise<McpListResult | null> {
    try {
      return (await this.rpc.sendRequest(MCP_LIST, {})) as McpListResult;
    } catch (err) {
      if (isMethodNotFound(err)) return null;
      throw err;
    }
  }
  /** Restarts one MCP server (`modus.mcp.restart [name]`); answers the new list. */
  async mcpRestart(name: string): Promise<McpListResult> {
    return (await this.executeCommand(Command.MCP_RESTART, [name])) as McpListResult;
  }
  /** The workspace's `.modus/settings.json` applies as it is now, the keys that waited for trust too. */
  async trustWorkspaceSettings(): Promise<State> {
    return (await this.executeCommand(Command.TRUST_WORKSPACE_SETTINGS)) as State;
  }

  executeCommand(command: string, args: unknown[] = []): Promise<unknown> {
    return this.rpc.sendRequest('workspace/executeCommand', { command, arguments: args });
  }

  /**
   * The current task's system prompt: `modus.showPrompt`, else `modus/prompt/get`.
   * Rejects with the first error when neither works.
   */
  async systemPrompt(): Promise<string> {
    let first: unknown;
    try {
      const text = promptText(await this.executeCommand(Command.SHOW_PROMPT));
      if (text !== undefined) return text;
    } catch (err) {
      first = err;
    }
    try {
      return (await this.prompt({})).text;
    } catch (err) {
      throw first ?? err;
    }
  }

  onUpdate(handler: (update: Update) => void): Disposable {
    return this.rpc.onNotification(Method.update, handler);
  }

  onApproval(handler: ApprovalHandler): Disposable {
    return this.rpc.onRequest(Method.approval, (params: ApprovalRequest, token: CancellationLike) =>
      handler(params, token),
    );
  }
}

/** `modus/mcp/list`: the server's MCP servers (not in the method table of every server). */
export const MCP_LIST = 'modus/mcp/list';

/** JSON-RPC's "method not found": the server has no such method. */
export function isMethodNotFound(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { code?: unknown }).code === -32601;
}

/** `modus.showPrompt` may answer the text itself or an object carrying `text`. */
export function promptText(result: unknown): string | undefined {
  if (typeof result === 'string') return result;
  if (result && typeof result === 'object' && typeof (result as { text?: unknown }).text === 'string') {
    return (result as { text: string }).text;
  }
  return undefined;
}

/** The message of a JSON-RPC error (or anything thrown). */
export function errorMessage(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}
