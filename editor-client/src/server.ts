// The server process: started through the language client (with the interpreter and the API
// keys), restarted, told the user's settings. When it cannot start: one notification with the
// cause and the fixes. When it stops by itself (a crash): the chat tells how it ended and its last
// error lines, and it is started again after a wait that doubles (Restarts) — this is the one
// owner of restarts, the language client never restarts it — until it stops too often; then one
// notification with Retry and Show Log.
import * as vscode from 'vscode';
import { LanguageClient, ServerOptions, State } from 'vscode-languageclient/node';
import { CancellationLike, errorMessage, ModusApi, Rpc } from './protocol/client';
import type { ApprovalRequest, ApprovalResponse, Update } from './protocol/generated';
import { describeExit, ExitStatus, ServerProcess, spawnServer, StderrTail, within } from './protocol/process';
import { Restarts } from './protocol/restarts';
import { buildSettings, explicitValue } from './protocol/settings';
import { pickInterpreter, showInstallCommand } from './interpreter';
import { createLanguageClient } from './languageClient';
import { apiKeyEnv } from './secrets';
import type { ServerView } from './protocol/view';
import type { ViewStore } from './store';
import type { ServerFix } from './webview/messages';

/** The server's API for the parts that use it. */
export interface ServerApi {
  /** while the server runs */
  readonly api: ModusApi | undefined;
  /** the same, with a warning to the user when the server is not running */
  requireApi(): ModusApi | undefined;
}

/** What the rest of the extension does with what the server says and does. */
export interface ServerHooks {
  update(update: Update): void;
  approval(request: ApprovalRequest, token: CancellationLike): Promise<ApprovalResponse>;
  /** the server runs: what the sidebar shows before anything happens */
  started(): Promise<void>;
  /** the server is being stopped, or stopped by itself */
  stopping(): void;
}

export class Server implements ServerApi {
  private client: LanguageClient | undefined;
  /** counts starts and stops: a late event of an earlier server is ignored */
  private generation = 0;
  /** the stops of the server by itself, and when to start it again */
  private readonly restarts = new Restarts();
  /** the automatic start waiting for its time */
  private timer: ReturnType<typeof setTimeout> | undefined;
  api: ModusApi | undefined;

  constructor(
    private readonly context: Pick<vscode.ExtensionContext, 'extensionPath' | 'secrets'>,
    private readonly store: ViewStore,
    private readonly output: vscode.OutputChannel,
    private readonly hooks: ServerHooks,
    /** the interpreter: the user's, or Modus's own environment (offered and set up first) */
    private readonly environment: { interpreter(): Promise<string | undefined> },
  ) {}

  requireApi(): ModusApi | undefined {
    if (!this.api) void vscode.window.showWarningMessage('Modus: the server is not running.');
    return this.api;
  }

  /** Starts the server; `after`: the stop this start follows by itself (the chat keeps telling it while it starts). */
  async start(after?: ServerView): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const generation = ++this.generation;
    this.store.dispatch({ type: 'server', server: after ? { ...after, status: 'starting' } : { status: 'starting' } });
    const python = await this.environment.interpreter();
    // none yet: Modus's own environment is offered or being set up; it starts the server once done
    if (python === undefined || generation !== this.generation) return;
    const env: NodeJS.ProcessEnv = { ...process.env, ...(await apiKeyEnv(this.context.secrets)) };
    const stderr = new StderrTail();
    let server: ServerProcess | undefined;
    // Not the workspace folder as cwd: `python -m server` would import a project's own `server`
    // package from there. The server learns the workspace from `initialize`.
    let exit: ExitStatus | undefined;
    const serverOptions: ServerOptions = async () => {
      server = await spawnServer(python, { cwd: this.context.extensionPath, env }, stderr);
      void server.exited.then((e) => (exit = e));
      return server.child;
    };
    let starting: Promise<void> = Promise.resolve();
    const client = createLanguageClient({
      serverOptions,
      settings: userSettings(),
      output: this.output,
      isCurrent: () => this.client === client,
      starting: () => starting,
      onState: (state) => this.store.dispatch({ type: 'state', state }),
    });
    const api = new ModusApi(client as unknown as Rpc);
    api.onUpdate((update) => this.hooks.update(update));
    api.onApproval((request, token) => this.hooks.approval(request, token));
    this.client = client;
    try {
      await (starting = client.start());
      if (!client.isRunning()) throw new Error('the server stopped while starting');
    } catch (err) {
      await within(server?.closed ?? Promise.resolve(), 2000);
      if (generation === this.generation) this.fail(python, stderr.cause() ?? errorMessage(err));
      return;
    }
    this.api = api;
    client.onDidChangeState(async (e) => {
      if (e.newState !== State.Stopped || generation !== this.generation || this.client !== client) return;
      // stopped without being asked to: the server went away
      this.api = undefined;
      await within(server?.closed ?? Promise.resolve(), 2000);
      if (generation === this.generation) this.stopped(describeExit(exit), stderr.errorLines());
    });
    try {
      await this.hooks.started(); // the conversation shown again, as the server has it
    } finally {
      // it runs, and shows what it has: the composer sends from now on (not before: a message
      // sent meanwhile would have its turn wiped from the chat by the conversation read again)
      if (generation === this.generation && client.isRunning()) {
        this.store.dispatch({ type: 'server', server: { status: 'running' } });
        if (after) this.store.dispatch({ type: 'note', text: `${after.error} and was started again.` });
      }
    }
  }

  /**
   * The server stopped by itself (`how`: "killed by SIGKILL", "exited with code 1"; `lines`: the
   * last error it wrote): told in the chat, and started again after a wait, unless it stopped
   * too often: then one notification with Retry and Show Log.
   */
  private stopped(how: string, lines: string[]): void {
    const stop = `stopped (${how})`;
    const error = `The Modus server ${stop}`;
    this.output.appendLine(`modus: ${error}${lines.length ? `; its last error:\n${lines.join('\n')}` : ''}`);
    this.hooks.stopping();
    this.store.dispatch({ type: 'mcp', servers: null }); // what a stopped server said of its MCP servers holds no more
    const restart = this.restarts.stopped();
    if (restart) {
      const view: ServerView = { status: 'stopped', error, lines, restart };
      this.store.dispatch({ type: 'server', server: view });
      const generation = this.generation;
      this.timer = setTimeout(() => {
        if (generation === this.generation) void this.start(view);
      }, restart.delayMs);
      return;
    }
    const often = `${this.restarts.policy.delaysMs.length + 1} times within ${this.restarts.window()}: it is not started again`;
    this.store.dispatch({ type: 'server', server: { status: 'stopped', error: `${error}, ${often}`, lines } });
    const fixes: [string, ServerFix][] = [
      ['Retry', 'restart'],
      ['Show Log', 'showLog'],
    ];
    void vscode.window.showErrorMessage(`Modus: the server ${stop}, ${often}.`, ...fixes.map(([label]) => label)).then((picked) => {
      const fix = fixes.find(([label]) => label === picked);
      if (fix) void this.fix(fix[1]);
    });
  }

  /** The server could not start: one notification with the cause and the fixes. */
  private fail(python: string, cause: string): void {
    const error = `${cause} (${python} -m server)`;
    this.output.appendLine(`modus: the server is not running: ${error}`);
    this.store.dispatch({ type: 'server', server: { status: 'failed', error } });
    this.store.dispatch({ type: 'mcp', servers: null }); // what a stopped server said of its MCP servers holds no more
    const fixes: [string, ServerFix][] = [
      ['Select Interpreter', 'pickInterpreter'],
      ['Open Setting', 'openSettings'],
      ['Show Install Command', 'showInstall'],
    ];
    void vscode.window
      .showErrorMessage(`Modus: the server did not start: ${error}`, ...fixes.map(([label]) => label))
      .then((picked) => {
        const fix = fixes.find(([label]) => label === picked);
        if (fix) void this.fix(fix[1]);
      });
  }

  /** A fix offered when the server is not running (the notification's, the sidebar's buttons). */
  async fix(fix: ServerFix): Promise<void> {
    switch (fix) {
      case 'restart':
        return this.restart();
      case 'showLog':
        return this.output.show(true);
      case 'openSettings':
        await vscode.commands.executeCommand('workbench.action.openSettings', 'modus.pythonPath');
        return;
      case 'showInstall':
        return showInstallCommand();
      case 'pickInterpreter':
        return pickInterpreter(() => this.restart());
    }
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.generation++;
    this.hooks.stopping();
    const client = this.client;
    this.client = undefined;
    this.api = undefined;
    if (client?.isRunning()) await client.stop();
  }

  /** A start the user asked for (Retry, a new interpreter or API key): the stops before count no more. */
  async restart(): Promise<void> {
    this.restarts.reset();
    await this.stop();
    await this.start();
  }

  /** A new interpreter restarts the server; the other settings are sent to it. */
  onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('modus')) return;
    if (e.affectsConfiguration('modus.pythonPath')) {
      void this.restart();
      return;
    }
    if (this.api) {
      this.client?.sendNotification('workspace/didChangeConfiguration', { settings: { modus: userSettings() } }).catch((err) => {
        this.output.appendLine(`modus: could not send the settings: ${errorMessage(err)}`);
      });
    }
  }
}

/**
 * The settings the user set (User, Remote, workspace or folder settings): a default VS Code
 * fills in is left out, so the workspace's `.modus/settings.json`, which the server puts under
 * these, is not overridden by a value nobody chose.
 */
function userSettings() {
  const config = vscode.workspace.getConfiguration('modus');
  return buildSettings((key) => explicitValue(config.inspect(key), config.get(key)));
}
