// The server process: started through the language client (with the interpreter and the API
// keys), restarted, told the user's settings; when it cannot start or goes away, one
// notification with the cause and the fixes.
import * as vscode from 'vscode';
import { LanguageClient, ServerOptions, State } from 'vscode-languageclient/node';
import { CancellationLike, errorMessage, ModusApi, Rpc } from './protocol/client';
import type { ApprovalRequest, ApprovalResponse, Update } from './protocol/generated';
import { ServerProcess, spawnServer, StderrTail, within } from './protocol/process';
import { buildSettings, explicitValue } from './protocol/settings';
import { pickInterpreter, resolvePython, showInstallCommand } from './interpreter';
import { createLanguageClient } from './languageClient';
import { apiKeyEnv } from './secrets';
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
  /** the server is being stopped */
  stopping(): void;
}

export class Server implements ServerApi {
  private client: LanguageClient | undefined;
  /** counts starts and stops: a late event of an earlier server is ignored */
  private generation = 0;
  api: ModusApi | undefined;

  constructor(
    private readonly context: Pick<vscode.ExtensionContext, 'extensionPath' | 'secrets'>,
    private readonly store: ViewStore,
    private readonly output: vscode.OutputChannel,
    private readonly hooks: ServerHooks,
  ) {}

  requireApi(): ModusApi | undefined {
    if (!this.api) void vscode.window.showWarningMessage('Modus: the server is not running.');
    return this.api;
  }

  async start(): Promise<void> {
    const generation = ++this.generation;
    this.store.dispatch({ type: 'server', server: { status: 'starting' } });
    const python = await resolvePython();
    const env: NodeJS.ProcessEnv = { ...process.env, ...(await apiKeyEnv(this.context.secrets)) };
    const stderr = new StderrTail();
    let server: ServerProcess | undefined;
    // Not the workspace folder as cwd: `python -m server` would import a project's own `server`
    // package from there. The server learns the workspace from `initialize`.
    const serverOptions: ServerOptions = async () => {
      server = await spawnServer(python, { cwd: this.context.extensionPath, env }, stderr);
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
      await within(server?.closed ?? Promise.resolve(), 2000);
      this.api = undefined;
      this.fail(python, stderr.cause() ?? `the server stopped (exit code ${server?.child.exitCode ?? 'unknown'})`);
    });
    this.store.dispatch({ type: 'server', server: { status: 'running' } });
    await this.hooks.started();
  }

  /** The server could not start or went away: one notification with the cause and the fixes. */
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
    this.generation++;
    this.hooks.stopping();
    const client = this.client;
    this.client = undefined;
    this.api = undefined;
    if (client?.isRunning()) await client.stop();
  }

  async restart(): Promise<void> {
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
