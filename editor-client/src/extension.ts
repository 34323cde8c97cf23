// The VS Code side of Modus: starts the server, renders what it says, sends back what the user
// does. Product logic lives in the server; the protocol layer (src/protocol) knows no `vscode`.
import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  ClientCapabilities,
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  StaticFeature,
  TextDocumentEdit,
} from 'vscode-languageclient/node';
import { CLIENT_EXPERIMENTAL_CAPABILITIES, errorMessage, isMethodNotFound, ModusApi, Rpc } from './protocol/client';
import { checkpointText } from './protocol/diff';
import { Command } from './protocol/generated';
import type { ApprovalResponse, CheckpointFile, State as ModusState, Update } from './protocol/generated';
import { ServerProcess, spawnServer, StderrTail, within } from './protocol/process';
import { modeRules } from './protocol/modes';
import { buildSettings, explicitValue } from './protocol/settings';
import { Action, initialView, reduce, RestoreKind, ViewState } from './protocol/view';
import { chatHtml, makeNonce } from './webview/html';
import type { FromWebview, ServerFix, ToWebview } from './webview/messages';

const SECRET_KEYS = { anthropic: 'modus.apiKey.anthropic', openai: 'modus.apiKey.openai' } as const;
const KEY_ENV = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' } as const;
const PROMPT_SCHEME = 'modus-prompt';
/** `modus-checkpoint:/<path>?<checkpoint id>`: a file as a checkpoint holds it (the left side of Show diff) */
const CHECKPOINT_SCHEME = 'modus-checkpoint';
/** the query of the right side of Show diff for a file deleted since the checkpoint: no text */
const DELETED = 'deleted';

/** Declares `capabilities.experimental.modus.approvals = true`: this client renders approvals. */
class ApprovalsCapability implements StaticFeature {
  getState() {
    return { kind: 'static' as const };
  }
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental as object), ...CLIENT_EXPERIMENTAL_CAPABILITIES };
  }
  initialize(): void {}
  clear(): void {}
}

/** Logs to the output channel only: the extension tells the user itself, once (Modus.fail). */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
  override warn(message: string, data?: unknown): void {
    super.warn(message, data, false);
  }
  /** The client stops itself after a failed start, not waiting for the answer: never rejects. */
  override async stop(timeout?: number): Promise<void> {
    try {
      await super.stop(timeout);
    } catch (err) {
      this.outputChannel.appendLine(`modus: stopping the server: ${errorMessage(err)}`);
    }
  }
}

class Modus implements vscode.WebviewViewProvider, vscode.TextDocumentContentProvider {
  private client: LanguageClient | undefined;
  /** counts starts and stops: a late event of an earlier server is ignored */
  private generation = 0;
  private api: ModusApi | undefined;
  private view: ViewState = initialView();
  private webview: vscode.WebviewView | undefined;
  private readonly approvals = new Map<string, (r: ApprovalResponse) => void>();
  private approvalSeq = 0;
  private readonly status: vscode.StatusBarItem;
  private readonly phaseStatus: vscode.StatusBarItem;
  /** the read-only documents shown: system prompts, files as a checkpoint holds them (by URI) */
  private readonly documents = new Map<string, string>();
  private readonly documentChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.documentChanged.event;
  /** the tool calls (card ids) that had started when the checkpoints were last asked for: theirs are known */
  private readonly checkpointsAsked = new Set<string>();
  /** a list of the checkpoints is on its way; `checkpointsAgain`: ask once more when it is there */
  private checkpointsAsking = false;
  private checkpointsAgain = false;
  /** the server has no checkpoints (off, no git, or no such method): not asked again */
  private checkpointsOff = false;
  private readonly output = neverThrows(vscode.window.createOutputChannel('Modus'));

  constructor(private readonly context: vscode.ExtensionContext) {
    this.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
    this.status.command = 'modus.ui.switchMode';
    // right of the mode: PLAN or ACT, a click flips it
    this.phaseStatus = vscode.window.createStatusBarItem('modus.phase', vscode.StatusBarAlignment.Left, 99);
    this.phaseStatus.name = 'Modus Phase';
    this.phaseStatus.command = 'modus.ui.togglePhase';
    this.renderStatus();
    this.status.show();
    context.subscriptions.push(this.status, this.phaseStatus, this.output, this.documentChanged);
  }

  // ------------------------------------------------------------------ server process

  async start(): Promise<void> {
    const generation = ++this.generation;
    this.dispatch({ type: 'server', server: { status: 'starting' } });
    const config = vscode.workspace.getConfiguration('modus');
    const python = await resolvePython(config.get<string>('pythonPath'));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const provider of ['anthropic', 'openai'] as const) {
      const key = await this.context.secrets.get(SECRET_KEYS[provider]);
      if (key) env[KEY_ENV[provider]] = key;
    }
    const stderr = new StderrTail();
    let server: ServerProcess | undefined;
    // Not the workspace folder as cwd: `python -m server` would import a project's own `server`
    // package from there. The server learns the workspace from `initialize`.
    const serverOptions: ServerOptions = async () => {
      server = await spawnServer(python, { cwd: this.context.extensionPath, env }, stderr);
      return server.child;
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      initializationOptions: { modus: this.settings() },
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // The server's commands (registered by the client from executeCommandProvider) that start
      // work from the editor, e.g. the light bulb's "Plan a change here": show it in the sidebar.
      middleware: {
        // The light bulb asks again as the window closes: a stopped client has nothing to offer.
        provideCodeActions: async (document, range, context, token, next) => {
          try {
            return await next(document, range, context, token);
          } catch (err) {
            if (this.client === client && client.isRunning()) throw err;
            return undefined;
          }
        },
        executeCommand: async (command, args, next) => {
          if (!SIDEBAR_COMMANDS.has(command)) return next(command, args);
          void vscode.commands.executeCommand('modus.chat.focus');
          try {
            const state = await next(command, args);
            if (isState(state)) this.dispatch({ type: 'state', state });
            return state;
          } catch (err) {
            void vscode.window.showErrorMessage(`Modus: ${errorMessage(err)}`);
            return undefined;
          }
        },
      },
      // One notification of our own (fail) in place of the client's: no restarts, no toasts.
      initializationFailedHandler: () => false,
      errorHandler: {
        error: () => ({ action: ErrorAction.Shutdown, handled: true }),
        // Answered once start() has settled: the client forgets its start promise when the
        // connection closes, and a start that failed meanwhile would then seem to succeed.
        closed: async () => {
          await within(starting, 2000);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new QuietLanguageClient('modus', 'Modus', serverOptions, clientOptions);
    client.registerFeature(new ApprovalsCapability());
    const api = new ModusApi(client as unknown as Rpc);
    api.onUpdate((update) => {
      this.dispatch({ type: 'update', update });
      // a plan update does not say which plan: its goal and scope come with the state
      if (update.kind === 'plan') void this.refreshState();
      if (this.mayBringCheckpoints(update)) void this.refreshCheckpoints();
    });
    api.onApproval((request, token) => this.askApproval(request, token));
    // Replaces the client's own workspace/applyEdit handler (registered before ours) to save
    // the edited documents after a successful apply.
    client.onRequest('workspace/applyEdit', (params: ApplyWorkspaceEditParams) => this.applyEdit(client, params));
    this.client = client;
    let starting: Promise<void> = Promise.resolve();
    try {
      await (starting = client.start());
      if (!client.isRunning()) throw new Error('the server stopped while starting');
    } catch (err) {
      await within(server?.closed ?? Promise.resolve(), 2000);
      if (generation === this.generation) this.fail(python, stderr.cause() ?? errorMessage(err));
      return;
    }
    this.api = api;
    this.checkpointsOff = false;
    client.onDidChangeState(async (e) => {
      if (e.newState !== State.Stopped || generation !== this.generation || this.client !== client) return;
      // stopped without being asked to: the server went away
      await within(server?.closed ?? Promise.resolve(), 2000);
      this.api = undefined;
      this.fail(python, stderr.cause() ?? `the server stopped (exit code ${server?.child.exitCode ?? 'unknown'})`);
    });
    this.dispatch({ type: 'server', server: { status: 'running' } });
    await this.refresh();
    await this.showConversation(this.view.conversationId);
  }

  /** The server could not start or went away: one notification with the cause and the fixes. */
  private fail(python: string, cause: string): void {
    const error = `${cause} (${python} -m server)`;
    this.output.appendLine(`modus: the server is not running: ${error}`);
    this.dispatch({ type: 'server', server: { status: 'failed', error } });
    this.dispatch({ type: 'mcp', servers: null }); // what a stopped server said of its MCP servers holds no more
    const fixes: [string, ServerFix][] = [
      ['Select Interpreter', 'pickInterpreter'],
      ['Open Setting', 'openSettings'],
      ['Show Install Command', 'showInstall'],
    ];
    void vscode.window
      .showErrorMessage(`Modus: the server did not start: ${error}`, ...fixes.map(([label]) => label))
      .then((picked) => {
        const fix = fixes.find(([label]) => label === picked);
        if (fix) void this.fixServer(fix[1]);
      });
  }

  async fixServer(fix: ServerFix): Promise<void> {
    switch (fix) {
      case 'restart':
        return this.restart();
      case 'showLog':
        return this.output.show(true);
      case 'openSettings':
        await vscode.commands.executeCommand('workbench.action.openSettings', 'modus.pythonPath');
        return;
      case 'showInstall': {
        const python = await resolvePython(vscode.workspace.getConfiguration('modus').get<string>('pythonPath'));
        const command = `${python} -m pip install /path/to/modus`;
        const copy = await vscode.window.showInformationMessage(
          'Install the Modus server into the interpreter Modus runs, from a checkout of Modus ' +
            '(or run `make` in the checkout and set modus.pythonPath to its .venv/bin/python).',
          { modal: true, detail: command },
          'Copy Command',
        );
        if (copy) await vscode.env.clipboard.writeText(command);
        return;
      }
      case 'pickInterpreter':
        return this.pickInterpreter();
    }
  }

  /** The Python extension's picker when it is there, else a file dialog; either way, a restart. */
  private async pickInterpreter(): Promise<void> {
    if (vscode.extensions.getExtension('ms-python.python')) {
      await vscode.commands.executeCommand('python.setInterpreter');
      if (!vscode.workspace.getConfiguration('modus').get<string>('pythonPath')) await this.restart();
      return;
    }
    const picked = await vscode.window.showOpenDialog({
      title: 'Python interpreter with the Modus server',
      openLabel: 'Use this interpreter',
      canSelectMany: false,
    });
    // the configuration change restarts the server
    if (picked?.[0]) await vscode.workspace.getConfiguration('modus').update('pythonPath', picked[0].fsPath, true);
  }

  async stop(): Promise<void> {
    this.generation++;
    for (const resolve of this.approvals.values()) resolve({ decision: 'deny' });
    this.approvals.clear();
    const client = this.client;
    this.client = undefined;
    this.api = undefined;
    if (client?.isRunning()) await client.stop();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /**
   * The settings the user set (User, Remote, workspace or folder settings): a default VS Code
   * fills in is left out, so the workspace's `.modus/settings.json`, which the server puts under
   * these, is not overridden by a value nobody chose.
   */
  settings() {
    const config = vscode.workspace.getConfiguration('modus');
    return buildSettings((key) => explicitValue(config.inspect(key), config.get(key)));
  }

  onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('modus')) return;
    if (e.affectsConfiguration('modus.pythonPath')) {
      void this.restart();
      return;
    }
    if (this.api) {
      this.client?.sendNotification('workspace/didChangeConfiguration', { settings: { modus: this.settings() } }).catch((err) => {
        this.output.appendLine(`modus: could not send the settings: ${errorMessage(err)}`);
      });
    }
  }

  /** Modes, state (with the plan) and todos: what the sidebar shows before anything happens. */
  private async refresh(): Promise<void> {
    if (!this.api) return;
    try {
      this.dispatch({ type: 'modes', modes: await this.api.modes() });
      this.dispatch({ type: 'state', state: await this.api.state() });
      this.dispatch({ type: 'todos', todos: (await this.api.todos()).todos });
    } catch (err) {
      this.output.appendLine(`modus: could not read the state: ${errorMessage(err)}`);
    }
    await this.refreshMcp();
  }

  /** The MCP servers for the sidebar's section; a server without MCP (MethodNotFound): none, quietly. */
  private async refreshMcp(): Promise<void> {
    if (!this.api) return;
    try {
      this.dispatch({ type: 'mcp', servers: (await this.api.mcpList())?.servers ?? null });
    } catch (err) {
      this.output.appendLine(`modus: could not list the MCP servers: ${errorMessage(err)}`);
    }
  }

  /** The MCP section's Restart: the server answers with the new list. */
  private async restartMcp(name: string): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    try {
      this.dispatch({ type: 'mcp', servers: (await api.mcpRestart(name)).servers });
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not restart the MCP server ${name}: ${errorMessage(err)}`);
      this.dispatch({ type: 'mcp', servers: this.view.mcp }); // the button comes back
    }
  }

  private async refreshState(): Promise<void> {
    try {
      if (this.api) this.dispatch({ type: 'state', state: await this.api.state() });
    } catch (err) {
      this.output.appendLine(`modus: could not read the state: ${errorMessage(err)}`);
    }
  }

  private async applyEdit(client: LanguageClient, params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
    const edit = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
    const applied = await vscode.workspace.applyEdit(edit);
    if (applied && vscode.workspace.getConfiguration('modus').get<boolean>('saveAfterEdit', true)) {
      const uris = new Set<string>(Object.keys(params.edit.changes ?? {}));
      for (const change of params.edit.documentChanges ?? []) {
        if (TextDocumentEdit.is(change)) uris.add(change.textDocument.uri);
      }
      for (const uri of uris) {
        const target = client.protocol2CodeConverter.asUri(uri).toString();
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target);
        if (doc?.isDirty) await doc.save();
      }
    }
    return { applied };
  }

  // ------------------------------------------------------------------ view state

  dispatch(action: Action): void {
    this.view = reduce(this.view, action);
    this.post({ type: 'action', action });
    this.renderStatus();
  }

  private post(message: ToWebview): void {
    void this.webview?.webview.postMessage(message);
  }

  private renderStatus(): void {
    const mode = this.view.mode;
    this.status.text = `$(comment-discussion) ${mode ? mode.name : 'Modus'}`;
    const info = mode ? this.view.modes.find((m) => m.slug === mode.slug) : undefined;
    this.status.tooltip = mode
      ? `Modus mode: ${mode.name}${info ? ` (${modeRules(info)})` : ''} — click to switch`
      : 'Modus: switch mode';
    const phase = this.view.phase;
    if (!phase) {
      this.phaseStatus.hide();
      return;
    }
    this.phaseStatus.text = phase === 'plan' ? '$(checklist) PLAN' : '$(play) ACT';
    this.phaseStatus.tooltip =
      phase === 'plan'
        ? 'Modus is in PLAN MODE: it explores and talks the plan through, and writes nothing. Click for ACT.'
        : 'Modus is in ACT MODE: it carries the work out. Click for PLAN.';
    this.phaseStatus.backgroundColor = phase === 'plan' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.phaseStatus.show();
  }

  private askApproval(
    request: Parameters<Parameters<ModusApi['onApproval']>[0]>[0],
    token: { onCancellationRequested(l: () => void): unknown },
  ): Promise<ApprovalResponse> {
    const id = `approval-${++this.approvalSeq}`;
    return new Promise((resolve) => {
      this.approvals.set(id, resolve);
      this.dispatch({ type: 'approval', id, request });
      void vscode.commands.executeCommand('modus.chat.focus');
      token.onCancellationRequested(() => {
        if (this.approvals.delete(id)) {
          this.dispatch({ type: 'approvalCancelled', id });
          resolve({ decision: 'deny' });
        }
      });
    });
  }

  // ------------------------------------------------------------------ webview

  resolveWebviewView(webviewView: vscode.WebviewView): void {
    this.webview = webviewView;
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'media');
    const dist = vscode.Uri.joinPath(this.context.extensionUri, 'dist');
    const webview = webviewView.webview;
    webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    webview.html = chatHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'webview.css')).toString(),
    });
    webview.onDidReceiveMessage((m: FromWebview) => this.onWebviewMessage(m));
    webviewView.onDidDispose(() => {
      if (this.webview === webviewView) this.webview = undefined;
    });
  }

  private async onWebviewMessage(m: FromWebview): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.post({ type: 'snapshot', view: this.view });
        return;
      case 'send':
        return this.send(m.text);
      case 'approval': {
        const resolve = this.approvals.get(m.id);
        if (!resolve) return;
        this.approvals.delete(m.id);
        const response: ApprovalResponse = {
          decision: m.decision,
          ...(m.feedback ? { feedback: m.feedback } : {}),
          ...(m.always && m.decision === 'approve' ? { always: true } : {}),
        };
        this.dispatch({ type: 'approvalAnswered', id: m.id, response });
        resolve(response);
        return;
      }
      case 'planDecision':
        return this.decidePlan(m.decision, m.feedback);
      case 'switchMode':
        return this.switchTo(m.slug);
      case 'cancel':
        return this.cancel();
      case 'togglePhase':
        return this.togglePhase();
      case 'newConversation':
        return this.newConversation();
      case 'listConversations':
        return this.listConversations();
      case 'openConversation':
        return this.openConversation(m.conversationId);
      case 'listAgents':
        return this.listAgents();
      case 'mcpRestart':
        return this.restartMcp(m.name);
      case 'fixServer':
        return this.fixServer(m.fix);
      case 'showDiff':
        return this.showCheckpointDiff(m.checkpointId, m.tool);
      case 'restore':
        return this.restore(m.checkpointId, m.what);
      case 'undoRestore':
        return this.restore(m.checkpointId, 'files', m.entryId);
      case 'condense':
        return this.condense();
    }
  }

  // ------------------------------------------------------------------ user actions

  private requireApi(): ModusApi | undefined {
    if (!this.api) void vscode.window.showWarningMessage('Modus: the server is not running.');
    return this.api;
  }

  async send(text: string): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    try {
      const result = await api.send({ text, ...(this.view.conversationId ? { conversationId: this.view.conversationId } : {}) });
      this.dispatch({ type: 'sent', result });
    } catch (err) {
      this.dispatch({ type: 'error', text: `Could not send: ${errorMessage(err)}` });
    }
  }

  async switchMode(): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    let list;
    try {
      list = await api.modes();
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not list the modes: ${errorMessage(err)}`);
      return;
    }
    this.dispatch({ type: 'modes', modes: list });
    const picked = await vscode.window.showQuickPick(
      list.modes.map((m) => ({
        label: m.name,
        description: `${m.slug} · ${m.source}${m.slug === list.current ? ' · current' : ''}`,
        // what it may reach first (its MCP servers, its command rules), then what it is for
        detail: [modeRules(m), m.description ?? m.whenToUse].filter(Boolean).join(' — '),
        slug: m.slug,
      })),
      { placeHolder: 'Switch Modus to mode…', matchOnDescription: true, matchOnDetail: true },
    );
    if (picked) await this.switchTo(picked.slug);
  }

  private async switchTo(slug: string): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    try {
      this.dispatch({ type: 'state', state: await api.switchMode(slug) });
    } catch (err) {
      this.dispatch({ type: 'error', text: `Could not switch to ${slug}: ${errorMessage(err)}` });
      void vscode.window.showErrorMessage(`Modus: could not switch to ${slug}: ${errorMessage(err)}`);
    }
  }

  /** PLAN ⇄ ACT. To ACT while a plan waits for the user's answer: the agent goes on. */
  async togglePhase(): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    const phase = this.view.phase === 'plan' ? 'act' : 'plan';
    try {
      this.dispatch({ type: 'state', state: await api.setPhase(phase) });
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not switch to ${phase.toUpperCase()}: ${errorMessage(err)}`);
    }
  }

  /** The user's decision on the plan (palette, or the plan card when no question is asked). */
  async decidePlan(decision: 'approve' | 'reject', feedback?: string): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    try {
      const state = decision === 'approve' ? await api.planApprove(feedback) : await api.planReject(feedback);
      this.dispatch({ type: 'state', state });
    } catch (err) {
      // e.g. "No plan to approve: the plan state is normal (no plan is active)."
      void vscode.window.showErrorMessage(`Modus: ${errorMessage(err)}`);
      await this.refreshState(); // the card's buttons come back
    }
  }

  /**
   * `Modus: Trust Workspace Settings`: the keys of the workspace's `.modus/settings.json` that wait
   * for the user's trust (what decides what runs or where requests go: yolo, autoApprove, stateDir,
   * mcpStartAtLaunch, maxRequestsPerTurn, model endpoints) apply. Only in a trusted
   * VS Code workspace (the command's enablement says so too).
   */
  async trustWorkspaceSettings(): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Modus: trust this folder in VS Code first (Workspaces: Manage Workspace Trust).');
      return;
    }
    const api = this.requireApi();
    if (!api) return;
    let state: ModusState;
    try {
      state = await api.trustWorkspaceSettings();
    } catch (err) {
      // e.g. "<workspace>/.modus/settings.json: nothing in it waits for trust"
      void vscode.window.showWarningMessage(`Modus: ${errorMessage(err)}`);
      return;
    }
    this.dispatch({ type: 'state', state });
    const yolo = state.yolo ? ' yolo is on: every action runs without asking.' : '';
    void vscode.window.showInformationMessage(`Modus: the workspace's settings (.modus/settings.json) now apply.${yolo}`);
  }

  /** `Modus: Reject Plan`: asks for optional feedback when there is a plan to reject. */
  async rejectPlan(): Promise<void> {
    const state = this.view.plan?.state;
    let feedback: string | undefined;
    if (state === 'awaiting_approval' || state === 'executing') {
      feedback = await vscode.window.showInputBox({
        title: 'Modus: Reject Plan',
        prompt: state === 'executing' ? 'Stop the plan being carried out. Why? (optional)' : 'Why? (optional; the agent gets it)',
        placeHolder: 'Feedback for the agent',
      });
      if (feedback === undefined) return; // Escape: nothing rejected
    }
    await this.decidePlan('reject', feedback?.trim() || undefined);
  }

  async showSystemPrompt(): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    let text: string;
    try {
      text = await api.systemPrompt();
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: the server could not show the system prompt: ${errorMessage(err)}`);
      return;
    }
    const name = this.view.mode?.name ?? 'current';
    const uri = vscode.Uri.from({ scheme: PROMPT_SCHEME, path: `/System prompt (${name}).md` });
    this.showDocument(uri, text);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** Sets the text of a read-only document (an editor showing it follows). */
  private showDocument(uri: vscode.Uri, text: string): void {
    this.documents.set(uri.toString(), text);
    this.documentChanged.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string | Promise<string> {
    const text = this.documents.get(uri.toString());
    if (text !== undefined) return text;
    return uri.scheme === CHECKPOINT_SCHEME ? this.checkpointDocument(uri) : '';
  }

  /** A new conversation, made current on the server (a reload comes back to it). */
  async newConversation(): Promise<void> {
    void vscode.commands.executeCommand('modus.chat.focus');
    const api = this.requireApi();
    if (!api) return;
    try {
      const state = await api.open();
      this.dispatch({ type: 'newConversation', conversationId: state.conversationId });
      this.dispatch({ type: 'state', state });
    } catch (err) {
      this.dispatch({ type: 'error', text: `Could not start a new conversation: ${errorMessage(err)}` });
    }
  }

  private async listConversations(): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    this.dispatch({ type: 'conversations', conversations: null });
    try {
      this.dispatch({ type: 'conversations', conversations: (await api.conversations()).conversations });
    } catch (err) {
      this.dispatch({ type: 'conversations', conversations: [] });
      this.dispatch({ type: 'error', text: `Could not list the conversations: ${errorMessage(err)}` });
    }
  }

  /**
   * The agents and members for the composer's @-completion, asked for each time the composer
   * gains focus (so a changed agents file shows up). Quiet: the composer asks on its own.
   */
  private async listAgents(): Promise<void> {
    if (!this.api) return;
    try {
      this.dispatch({ type: 'agents', agents: await this.api.agents() });
    } catch (err) {
      this.output.appendLine(`modus: could not list the agents: ${errorMessage(err)}`);
    }
  }

  private async openConversation(conversationId: string): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    try {
      this.dispatch({ type: 'state', state: await api.open(conversationId) });
      await this.showConversation(conversationId);
    } catch (err) {
      this.dispatch({ type: 'error', text: `Could not open the conversation: ${errorMessage(err)}` });
    }
  }

  /**
   * Shows a stored conversation: its messages, as the server keeps them, their checkpoints and
   * what it cost. `restored`: after a restore of the conversation (no turn runs).
   */
  private async showConversation(conversationId: string | null, restored = false): Promise<void> {
    if (!this.api || !conversationId) return;
    try {
      const { messages } = await this.api.history(conversationId);
      this.dispatch({ type: 'history', conversationId, messages, ...(restored ? { restored } : {}) });
    } catch (err) {
      this.dispatch({ type: 'error', text: `Could not load the conversation: ${errorMessage(err)}` });
      return;
    }
    await Promise.all([this.refreshCheckpoints(), this.refreshUsage()]);
  }

  /** The conversation's tokens and cost; a conversation not stored yet has none. */
  private async refreshUsage(): Promise<void> {
    const conversationId = this.view.conversationId;
    if (!this.api || !conversationId) return;
    try {
      this.dispatch({ type: 'usage', conversationId, usage: await this.api.usage(conversationId) });
    } catch (err) {
      this.output.appendLine(`modus: no usage for ${conversationId}: ${errorMessage(err)}`);
      this.dispatch({ type: 'usage', conversationId, usage: null });
    }
  }

  // ------------------------------------------------------------------ checkpoints

  /**
   * Whether an update may bring a checkpoint the cards do not know: a call of the conversation
   * shown that started (the server takes its checkpoint, if it takes one, before it runs it) and
   * that was not running at the last ask, or a turn that ended with such a call.
   */
  private mayBringCheckpoints(u: Update): boolean {
    if (this.checkpointsOff || u.conversationId !== this.view.conversationId) return false;
    if (u.kind === 'tool_call') return u.status !== 'pending' && !this.checkpointsAsked.has(`tool:${u.toolCallId}`);
    if (u.kind === 'turn_ended') return this.view.entries.some((e) => e.type === 'tool' && !this.checkpointsAsked.has(e.id));
    return false;
  }

  /** The conversation's checkpoints for its cards; one request at a time, one more when asked meanwhile. */
  private async refreshCheckpoints(): Promise<void> {
    if (this.checkpointsAsking) {
      this.checkpointsAgain = true;
      return;
    }
    this.checkpointsAsking = true;
    try {
      do {
        this.checkpointsAgain = false;
        const api = this.api;
        const conversationId = this.view.conversationId;
        if (!api || !conversationId || this.checkpointsOff) return;
        for (const e of this.view.entries) if (e.type === 'tool' && e.status !== 'pending') this.checkpointsAsked.add(e.id);
        const list = await api.checkpoints(conversationId);
        // off (the setting, no git): the server told the user once; the cards offer nothing
        if (list.disabled) this.checkpointsOff = true;
        this.dispatch({ type: 'checkpoints', conversationId, checkpoints: list.checkpoints });
      } while (this.checkpointsAgain);
    } catch (err) {
      if (isMethodNotFound(err)) this.checkpointsOff = true;
      this.output.appendLine(`modus: could not list the checkpoints: ${errorMessage(err)}`);
    } finally {
      this.checkpointsAsking = false;
    }
  }

  /**
   * A card's Show diff: the files changed since the checkpoint (taken before `tool`), one in VS
   * Code's diff editor (a quick pick when there are several), the checkpoint's text on the left.
   */
  private async showCheckpointDiff(checkpointId: string, tool: string): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    let files: CheckpointFile[];
    try {
      files = (await api.checkpointDiff(checkpointId)).files;
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not compare with the checkpoint: ${errorMessage(err)}`);
      return;
    }
    if (files.length === 0) {
      void vscode.window.showInformationMessage(`Modus: no file has changed since just before ${tool}.`);
      return;
    }
    let file = files[0];
    if (files.length > 1) {
      const picked = await vscode.window.showQuickPick(
        files.map((f) => ({ label: f.path, description: f.status, file: f })),
        { title: `Changed since just before ${tool}`, placeHolder: 'Compare which file with the checkpoint?' },
      );
      if (!picked) return;
      file = picked.file;
    }
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!root) return;
    const current = vscode.Uri.joinPath(root, file.path);
    const left = checkpointUri(file.path, checkpointId);
    try {
      this.showDocument(left, checkpointText(file, file.status === 'deleted' ? '' : await readText(current)));
    } catch (err) {
      void vscode.window.showWarningMessage(`Modus: cannot compare ${file.path} with the checkpoint: ${errorMessage(err)}.`);
      return;
    }
    let right = current;
    if (file.status === 'deleted') {
      right = checkpointUri(file.path, DELETED);
      this.showDocument(right, '');
    }
    const name = file.path.split('/').pop();
    const now = file.status === 'deleted' ? 'deleted' : 'now';
    await vscode.commands.executeCommand('vscode.diff', left, right, `${name} (before ${tool} ↔ ${now})`, { preview: true });
  }

  /**
   * A file as the checkpoint of `uri` holds it, for an editor opened without Show diff (a
   * window reloaded with it open): from the diff since then and the file now.
   */
  private async checkpointDocument(uri: vscode.Uri): Promise<string> {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    const path = uri.path.replace(/^\//, '');
    if (uri.query === DELETED) return '';
    if (!this.api || !root) throw new Error('The Modus server is not running: use Show diff again once it is.');
    const { files } = await this.api.checkpointDiff(uri.query);
    const file = files.find((f) => f.path === path);
    const current = file?.status === 'deleted' ? '' : await readText(vscode.Uri.joinPath(root, path));
    return file ? checkpointText(file, current) : current; // not in the diff: unchanged since
  }

  /**
   * A card's Restore and a note's Undo restore. The files come back through workspace/applyEdit
   * (saved like any edit) or on disk; after the conversation, its history is read again (shorter).
   */
  private async restore(checkpointId: string, what: RestoreKind, undoOf?: string): Promise<void> {
    const api = this.requireApi();
    if (!api) return;
    this.dispatch({ type: 'restoreStarted', checkpointId });
    let result;
    try {
      result = await api.restoreCheckpoint(checkpointId, what);
    } catch (err) {
      // e.g. refused while a turn runs
      this.dispatch({ type: 'restoreFailed', text: `Could not restore: ${errorMessage(err)}` });
      return;
    }
    if (what === 'both') {
      await this.refreshState(); // a new task
      await this.showConversation(result.conversationId, true);
    }
    this.dispatch({ type: 'restored', what, result, ...(undoOf ? { undoOf } : {}) });
  }

  /**
   * The context bar's click and `Modus: Condense the Conversation`: the model summarises the older
   * part of the conversation now. The server refuses while a turn runs; the chat says why.
   */
  async condense(): Promise<void> {
    void vscode.commands.executeCommand('modus.chat.focus');
    const api = this.requireApi();
    const conversationId = this.view.conversationId;
    if (!api || !conversationId || this.view.condensing !== null) return;
    if (!this.view.entries.some((e) => e.type === 'user')) {
      void vscode.window.showInformationMessage('Modus: nothing to condense: the conversation has no messages yet.');
      return;
    }
    this.dispatch({ type: 'condenseStarted', conversationId });
    try {
      await api.condense(conversationId); // what it did, or why it did nothing, comes as a chat line
    } catch (err) {
      this.dispatch({ type: 'condenseFailed', text: `Could not condense: ${errorMessage(err)}` });
      return;
    }
    this.dispatch({ type: 'condenseEnded' });
  }

  async cancel(): Promise<void> {
    const api = this.requireApi();
    if (!api || !this.view.conversationId) return;
    try {
      await api.cancel(this.view.conversationId);
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not cancel: ${errorMessage(err)}`);
    }
  }

  async setApiKey(): Promise<void> {
    const provider = await vscode.window.showQuickPick(
      [
        { label: 'Anthropic', description: KEY_ENV.anthropic, id: 'anthropic' as const },
        { label: 'OpenAI (or OpenAI-compatible)', description: KEY_ENV.openai, id: 'openai' as const },
      ],
      { placeHolder: 'API key for which provider?' },
    );
    if (!provider) return;
    const key = await vscode.window.showInputBox({
      prompt: `${provider.label} API key (stored in VS Code's secret storage; empty to remove)`,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key.trim()) await this.context.secrets.store(SECRET_KEYS[provider.id], key.trim());
    else await this.context.secrets.delete(SECRET_KEYS[provider.id]);
    // The key reaches the server through its environment: restart it.
    await this.restart();
    void vscode.window.showInformationMessage(`Modus: ${provider.label} API key ${key.trim() ? 'saved' : 'removed'}.`);
  }
}

/**
 * The output channel, except that writing to it never throws. It throws once the window is gone,
 * and the language client still logs the requests that fail then (the light bulb's, on a reload).
 */
function neverThrows(channel: vscode.OutputChannel): vscode.OutputChannel {
  return new Proxy(channel, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          return value.apply(target, args);
        } catch {
          return undefined;
        }
      };
    },
  });
}

/** `modus.pythonPath`, else the Python extension's selected interpreter, else `python3`. */
async function resolvePython(configured: string | undefined): Promise<string> {
  if (configured && configured.trim()) return configured.trim();
  try {
    const ext = vscode.extensions.getExtension('ms-python.python');
    if (ext) {
      const api = ext.isActive ? ext.exports : await ext.activate();
      const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
      const envPath = api?.environments?.getActiveEnvironmentPath?.(resource);
      if (envPath) {
        const env = await api.environments.resolveEnvironment?.(envPath);
        const exe = env?.executable?.uri?.fsPath ?? envPath.path;
        if (exe) return exe;
      }
      const exec = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
      if (Array.isArray(exec) && exec[0]) return exec[0];
    }
  } catch {
    // fall through to python3
  }
  return 'python3';
}

/** The URI of a file as a checkpoint holds it (`query`: the checkpoint's id, or DELETED). */
function checkpointUri(path: string, query: string): vscode.Uri {
  return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${path}`, query });
}

/** A file's text on disk (UTF-8, a byte order mark kept: git's diff has it too). */
async function readText(uri: vscode.Uri): Promise<string> {
  const bytes = await vscode.workspace.fs.readFile(uri);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new Error('it is not UTF-8 text');
  }
}

/** Server commands that start work from the editor (code actions): the sidebar shows it. */
const SIDEBAR_COMMANDS = new Set<string>([Command.PLAN_SELECTION, Command.START_IN_MODE]);

function isState(value: unknown): value is ModusState {
  return !!value && typeof value === 'object' && 'mode' in value && 'phase' in value && 'plan' in value;
}

let modus: Modus | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const m = (modus = new Modus(context));
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider('modus.chat', m, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerTextDocumentContentProvider(PROMPT_SCHEME, m),
    vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, m),
    vscode.commands.registerCommand('modus.ui.switchMode', () => m.switchMode()),
    vscode.commands.registerCommand('modus.ui.showSystemPrompt', () => m.showSystemPrompt()),
    vscode.commands.registerCommand('modus.ui.newConversation', () => m.newConversation()),
    vscode.commands.registerCommand('modus.ui.cancel', () => m.cancel()),
    vscode.commands.registerCommand('modus.ui.condense', () => m.condense()),
    vscode.commands.registerCommand('modus.ui.togglePhase', () => m.togglePhase()),
    vscode.commands.registerCommand('modus.ui.approvePlan', () => m.decidePlan('approve')),
    vscode.commands.registerCommand('modus.ui.rejectPlan', () => m.rejectPlan()),
    vscode.commands.registerCommand('modus.ui.setApiKey', () => m.setApiKey()),
    vscode.commands.registerCommand('modus.ui.restartServer', () => m.restart()),
    vscode.commands.registerCommand('modus.ui.trustWorkspaceSettings', () => m.trustWorkspaceSettings()),
    vscode.workspace.onDidChangeConfiguration((e) => m.onConfigurationChanged(e)),
  );
  await m.start();
}

export async function deactivate(): Promise<void> {
  await modus?.stop();
  modus = undefined;
}
