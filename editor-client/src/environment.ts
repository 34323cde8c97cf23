// Modus's own Python environment, in VS Code: which interpreter runs the server (`modus.pythonPath`
// when set — then nothing is installed —, else the private environment once it has the bundled
// Modus, else an interpreter found that has it already), the offer to set it up when none does
// (one notification, and the chat's card in place of the composer), its progress (a notification
// and the card), the upgrade to a new extension's Modus by itself, no Python 3.11+ (the download
// page), and a failed install (pip's last lines, Retry, Show Log). The steps are envSetup.ts's.
import * as vscode from 'vscode';
import {
  Bundle,
  CANCELLED,
  checkPython,
  envPaths,
  EnvPaths,
  envState,
  installedVersion,
  lastLines,
  PYTHON_DOWNLOAD_URL,
  readBundle,
  setUp,
  SetupError,
  stampedVersion,
} from './envSetup';
import { configuredPython, pickInterpreter, resolvePython } from './interpreter';
import { errorMessage } from './protocol/client';
import type { EnvView } from './protocol/view';
import type { ViewStore } from './store';
import type { EnvFix } from './webview/messages';

/** How often the notification's progress tells pip's current line. */
const PROGRESS_MS = 250;

export class Environment {
  private readonly bundle: Bundle | undefined;
  private readonly paths: EnvPaths;
  /** the set-up under way, and how to cancel it */
  private running: Promise<void> | undefined;
  private cancel: AbortController | undefined;
  /** the notification that offers the set-up was shown (once) */
  private offered = false;

  constructor(
    context: Pick<vscode.ExtensionContext, 'extensionPath' | 'globalStorageUri'>,
    private readonly store: ViewStore,
    private readonly output: vscode.OutputChannel,
    /** starts the server (once the environment is set up) */
    private readonly start: () => Promise<void>,
  ) {
    this.bundle = readBundle(context.extensionPath);
    this.paths = envPaths(context.globalStorageUri.fsPath);
  }

  /**
   * The interpreter that runs the server; undefined when there is none yet: the set-up is offered,
   * or under way (it starts the server once done).
   */
  async interpreter(): Promise<string | undefined> {
    const configured = configuredPython();
    const bundle = this.bundle;
    if (configured || !bundle) return this.use(configured ?? (await resolvePython()));
    if (this.running) return undefined;
    const state = envState(this.paths, bundle.version);
    if (state === 'ready') return this.use(this.paths.python);
    if (state === 'outdated') {
      void this.setUp(); // a new extension's Modus: no click needed
      return undefined;
    }
    // no stamp: an environment whose stamp was lost still has it; so may the interpreter found
    // (a checkout's .venv chosen in the Python extension)
    const found = await resolvePython();
    for (const python of [this.paths.python, found]) {
      if ((await installedVersion(python)) !== bundle.version) continue;
      this.output.appendLine(`modus: ${python} has Modus ${bundle.version}`);
      return this.use(python);
    }
    const check = await checkPython(found);
    if (!check.ok && check.reason !== 'broken') {
      this.noPython(found, check.message);
      return undefined;
    }
    this.show({ state: 'offer', python: found });
    if (!this.offered) {
      this.offered = true;
      const where = bundle.offline ? 'from the wheels this extension carries' : 'its dependencies from your package index';
      void vscode.window
        .showInformationMessage(`Modus needs its Python environment: Set up Modus creates one with ${found} and installs Modus ${bundle.version} (${where}).`, 'Set up Modus')
        .then((picked) => picked && this.setUp());
    }
    return undefined;
  }

  /** Sets up the environment (or upgrades it), then starts the server; the one under way when there is one. */
  async setUp(): Promise<void> {
    if (this.running) return this.running;
    let done = false;
    this.running = this.run().then((ok) => void (done = ok));
    try {
      await this.running;
    } finally {
      this.running = undefined; // before the start: it asks for the interpreter
    }
    if (done) await this.start();
  }

  /** The card's and the notifications' buttons. */
  async fix(fix: EnvFix): Promise<void> {
    switch (fix) {
      case 'setUp':
        return this.setUp();
      case 'cancel':
        this.cancel?.abort();
        return;
      case 'showLog':
        return this.output.show(true);
      case 'download':
        await vscode.env.openExternal(vscode.Uri.parse(PYTHON_DOWNLOAD_URL));
        return;
      case 'pickInterpreter':
        return pickInterpreter(() => this.start());
      case 'openSettings':
        await vscode.commands.executeCommand('workbench.action.openSettings', 'modus.pythonPath');
        return;
    }
  }

  private use(python: string): string {
    if (this.store.view.env) this.show(null);
    return python;
  }

  private show(env: Omit<EnvView, 'version' | 'offline'> | null): void {
    this.store.dispatch({ type: 'env', env: env && this.bundle ? { version: this.bundle.version, offline: this.bundle.offline, ...env } : null });
  }

  /** The set-up, told; whether it succeeded. */
  private async run(): Promise<boolean> {
    const bundle = this.bundle!;
    const upgradeFrom = envState(this.paths, bundle.version) === 'outdated' ? stampedVersion(this.paths) : undefined;
    const python = upgradeFrom ? this.paths.python : await resolvePython();
    const base = { state: 'running' as const, python, ...(upgradeFrom ? { upgradeFrom } : {}) };
    this.show({ ...base, step: upgradeFrom ? `Upgrading Modus ${upgradeFrom} to ${bundle.version}…` : 'Starting…' });
    this.output.appendLine(
      upgradeFrom
        ? `modus: upgrading the environment ${this.paths.dir} from Modus ${upgradeFrom} to ${bundle.version}`
        : `modus: setting up the environment ${this.paths.dir} with ${python} (Modus ${bundle.version}${bundle.offline ? ', offline' : ''})`,
    );
    const cancel = (this.cancel = new AbortController());
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: upgradeFrom ? `Modus: upgrading to ${bundle.version}` : 'Modus: setting up', cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => cancel.abort());
          let told = '';
          let at = 0;
          await setUp({
            python,
            bundle,
            paths: this.paths,
            env: withVsCodeProxy(process.env),
            signal: cancel.signal,
            log: (line) => this.output.appendLine(line),
            progress: (p) => {
              this.show({ ...base, step: p.message, ...(p.line ? { line: p.line } : {}) });
              const message = p.line ? `${p.message} ${p.line}` : p.message;
              if (message !== told && (Date.now() - at >= PROGRESS_MS || !p.line)) {
                told = message;
                at = Date.now();
                progress.report({ message });
              }
            },
          });
        },
      );
    } catch (err) {
      if (err instanceof SetupError && err.step === 'cancelled') {
        this.output.appendLine(`modus: ${CANCELLED}`);
        this.show({ state: 'offer', python }); // Set up Modus again when the user wants
        return false;
      }
      if (err instanceof SetupError && err.python && !err.python.ok && err.python.reason !== 'broken') this.noPython(python, err.message);
      else this.failed(python, err);
      return false;
    } finally {
      this.cancel = undefined;
    }
    this.show(null);
    return true;
  }

  /** No Python 3.11+: the card and a notification say so, with the download page. */
  private noPython(python: string, message: string): void {
    this.output.appendLine(`modus: ${message}`);
    this.show({ state: 'noPython', python, error: message });
    void vscode.window
      .showErrorMessage(`${message}. Install Python 3.11 or newer (python.org), then Retry.`, 'Download Python', 'Select Interpreter', 'Retry')
      .then((picked) => {
        if (picked === 'Download Python') void this.fix('download');
        if (picked === 'Select Interpreter') void this.fix('pickInterpreter');
        if (picked === 'Retry') void this.setUp();
      });
  }

  /** A failed set-up: pip's own words (its last lines) in the card and the notification; the whole output in the log. */
  private failed(python: string, err: unknown): void {
    const error = errorMessage(err);
    const lines = err instanceof SetupError ? err.lines : [];
    this.output.appendLine(`modus: the set-up failed: ${error}${lines.length ? `\n${lines.join('\n')}` : ''}`);
    this.show({ state: 'failed', python, error, lines });
    const words = lines.filter((l) => /^ERROR:/.test(l)).slice(-2).join(' ') || lastLines(lines.join('\n'), 1)[0] || '';
    void vscode.window.showErrorMessage(`Modus could not be set up: ${error}${words ? `: ${words}` : ''}`, 'Retry', 'Show Log').then((picked) => {
      if (picked === 'Retry') void this.setUp();
      if (picked === 'Show Log') this.output.show(true);
    });
  }
}

/** VS Code's `http.proxy`, for pip, when the environment names no proxy of its own (pip's configuration still wins). */
function withVsCodeProxy(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const proxy = vscode.workspace.getConfiguration('http').get<string>('proxy')?.trim();
  if (!proxy || env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy) return env;
  return { ...env, HTTPS_PROXY: proxy, HTTP_PROXY: proxy };
}
