// Runs the real Modus server (`<python> -m server`) and drives it through vscode-jsonrpc with
// the extension's own protocol layer, acting as an editor: it declares the capabilities VS Code
// declares, answers approvals, applies workspace edits to the files, and records every action
// the chat view would get.
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { CLIENT_EXPERIMENTAL_CAPABILITIES, ModusApi, Rpc } from '../src/protocol/client';
import type { ApprovalRequest, ApprovalResponse, Settings, Update } from '../src/protocol/generated';
import { Action, replay, ViewState } from '../src/protocol/view';

export const CLIENT_DIR = resolve(__dirname, '..', '..');
export const REPO_DIR = resolve(CLIENT_DIR, '..');

export function modusPython(): string {
  if (process.env.MODUS_PYTHON) return process.env.MODUS_PYTHON;
  const venv = join(REPO_DIR, '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

export interface Turn {
  text?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /** the tokens the scripted model reports for this request */
  usage?: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number };
}

export interface StartOptions {
  /** the scripted model's turns (written to <workspace>/script.yaml as JSON, which is YAML) */
  turns?: Turn[];
  settings?: Settings;
  /** files to create in the workspace first */
  files?: Record<string, string>;
  /** false: declare no workspace.applyEdit (the server then writes files itself) */
  applyEdit?: boolean;
  /** the user's answer; a promise that never settles leaves the question open until the server withdraws it */
  approve?: (request: ApprovalRequest) => ApprovalResponse | Promise<ApprovalResponse>;
}

interface TextEdit {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}

export class ServerSession {
  readonly workspace: string;
  /** the server's $XDG_CONFIG_HOME: its global settings, modes, MCP servers and workspace trust, apart from the user's */
  readonly configHome: string;
  readonly actions: Action[] = [];
  readonly updates: Update[] = [];
  readonly approvals: ApprovalRequest[] = [];
  readonly edits: unknown[] = [];
  readonly stderr: string[] = [];
  private waiters: { test: () => boolean; resolve: () => void }[] = [];
  private approvalSeq = 0;
  private proc!: ChildProcess;
  conn!: MessageConnection;
  api!: ModusApi;
  initializeResult: any;
  /** the settings sent as initializationOptions.modus */
  settings: Settings = {};

  constructor(private readonly options: StartOptions = {}) {
    this.workspace = mkdtempSync(join(tmpdir(), 'modus-client-'));
    this.configHome = mkdtempSync(join(tmpdir(), 'modus-client-config-'));
    for (const [path, text] of Object.entries(options.files ?? {})) this.write(path, text);
    if (options.turns) this.write('script.yaml', JSON.stringify({ turns: options.turns }, null, 1));
  }

  get view(): ViewState {
    return replay(this.actions);
  }

  write(path: string, text: string): void {
    const full = join(this.workspace, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }

  read(path: string): string | undefined {
    const full = join(this.workspace, path);
    return existsSync(full) ? readFileSync(full, 'utf8') : undefined;
  }

  async start(): Promise<this> {
    this.proc = spawn(modusPython(), ['-m', 'server'], {
      cwd: this.workspace,
      env: { ...process.env, PYTHONUNBUFFERED: '1', XDG_CONFIG_HOME: this.configHome },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (d: string) => this.stderr.push(d));
    this.conn = createMessageConnection(
      new StreamMessageReader(this.proc.stdout!),
      new StreamMessageWriter(this.proc.stdin!),
    );
    this.api = new ModusApi(this.conn as unknown as Rpc);
    this.api.onUpdate((update) => {
      this.updates.push(update);
      this.record({ type: 'update', update });
    });
    this.api.onApproval(async (request, token) => {
      const id = `approval-${++this.approvalSeq}`;
      this.approvals.push(request);
      this.record({ type: 'approval', id, request });
      const withdrawn = new Promise<null>((resolve) => token.onCancellationRequested(() => resolve(null)));
      const response = await Promise.race([(this.options.approve ?? (() => ({ decision: 'approve' as const })))(request), withdrawn]);
      if (response === null) {
        this.record({ type: 'approvalCancelled', id });
        return { decision: 'deny' };
      }
      this.record({ type: 'approvalAnswered', id, response });
      return response;
    });
    this.conn.onRequest('workspace/applyEdit', (params: { edit: any }) => {
      this.edits.push(params.edit);
      this.applyWorkspaceEdit(params.edit);
      this.notify();
      return { applied: true };
    });
    this.conn.onRequest('window/showMessageRequest', () => ({ title: 'Approve' }));
    this.conn.onRequest('window/workDoneProgress/create', () => null);
    this.conn.onRequest('client/registerCapability', () => null);
    this.conn.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
    this.conn.onNotification(() => undefined);
    this.conn.listen();
    const rootUri = pathToFileURL(this.workspace).toString();
    const settings: Settings = (this.settings = {
      modeSwitchDelayMs: 0,
      stateDir: join(this.workspace, '.modus', 'state'),
      ...(this.options.turns ? { models: { default: { provider: 'scripted', script: 'script.yaml' } } } : {}),
      ...this.options.settings,
    });
    const applyEdit = this.options.applyEdit !== false;
    this.initializeResult = await this.conn.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'modus-editor-client-tests' },
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'ws' }],
      initializationOptions: { modus: settings },
      capabilities: {
        workspace: {
          applyEdit,
          workspaceEdit: {
            documentChanges: true,
            resourceOperations: ['create', 'rename', 'delete'],
            failureHandling: 'textOnlyTransactional',
          },
          configuration: true,
          executeCommand: { dynamicRegistration: false },
        },
        window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: true } } },
        experimental: CLIENT_EXPERIMENTAL_CAPABILITIES,
      },
    });
    await this.conn.sendNotification('initialized', {});
    return this;
  }

  record(action: Action): void {
    this.actions.push(action);
    this.notify();
  }

  private notify(): void {
    for (const w of [...this.waiters]) {
      if (w.test()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  /** Resolves when `test()` holds (checked after every message), fails after `ms`. */
  waitFor(test: () => boolean, what: string, ms = 20000): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { test, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`timed out waiting for ${what}; updates: ${JSON.stringify(this.updates.map((u) => u.kind))}\nstderr: ${this.stderr.join('').slice(-3000)}`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  /** Sends a chat message and waits for the turn it starts to end. */
  async chat(text: string, conversationId?: string): Promise<void> {
    const before = this.updates.length;
    const result = await this.api.send({ text, ...(conversationId ? { conversationId } : {}) });
    this.record({ type: 'sent', result });
    await this.waitFor(
      () => this.updates.slice(before).some((u) => u.kind === 'turn_ended'),
      `the end of the turn for "${text}"`,
    );
  }

  /** A minimal editor: applies CreateFile / TextDocumentEdit / changes to the files on disk. */
  private applyWorkspaceEdit(edit: any): void {
    const path = (uri: string) => fileURLToPath(uri);
    const applyText = (uri: string, edits: TextEdit[]) => {
      const file = path(uri);
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      writeFileSync(file, applyTextEdits(text, edits));
    };
    for (const change of edit.documentChanges ?? []) {
      if (change.kind === 'create') {
        mkdirSync(dirname(path(change.uri)), { recursive: true });
        if (!existsSync(path(change.uri)) || change.options?.overwrite) writeFileSync(path(change.uri), '');
      } else if (change.kind === 'delete') {
        rmSync(path(change.uri), { force: true, recursive: !!change.options?.recursive });
      } else if (change.kind === 'rename') {
        writeFileSync(path(change.newUri), readFileSync(path(change.oldUri)));
        rmSync(path(change.oldUri));
      } else {
        applyText(change.textDocument.uri, change.edits);
      }
    }
    for (const [uri, edits] of Object.entries(edit.changes ?? {})) applyText(uri, edits as TextEdit[]);
  }

  async stop(): Promise<void> {
    try {
      await Promise.race([this.conn.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 2000))]);
      await this.conn.sendNotification('exit');
    } catch {
      // already gone
    }
    await new Promise<void>((r) => {
      if (this.proc.exitCode !== null) return r();
      const t = setTimeout(() => (this.proc.kill('SIGKILL'), r()), 3000);
      this.proc.once('exit', () => (clearTimeout(t), r()));
    });
    this.conn.dispose();
    rmSync(this.workspace, { recursive: true, force: true });
    rmSync(this.configHome, { recursive: true, force: true });
  }
}

export function applyTextEdits(text: string, edits: TextEdit[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const offset = (p: { line: number; character: number }) =>
    p.line >= lineStarts.length ? text.length : Math.min(lineStarts[p.line] + p.character, text.length);
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  for (const e of sorted) text = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
  return text;
}

/** The demo: architect designs (docs ok, code refused), code implements, completion. */
export const DEMO_TURNS: Turn[] = [
  {
    text: "I'll design the greeting endpoint first, in Architect mode.",
    toolCalls: [{ name: 'switch_mode', arguments: { mode_slug: 'architect', reason: 'design before code' } }],
  },
  {
    text: 'Writing the design down.',
    toolCalls: [
      {
        name: 'write_to_file',
        arguments: { path: 'docs/design.md', content: '# Greeting endpoint\n\n- `GET /hello` returns `Hello, world!`\n' },
      },
    ],
  },
  {
    text: 'Now the code.',
    toolCalls: [{ name: 'write_to_file', arguments: { path: 'src/app.py', content: 'def hello():\n    return "Hello, world!"\n' } }],
  },
  {
    text: 'Architect mode may only edit Markdown; switching to Code mode.',
    toolCalls: [{ name: 'switch_mode', arguments: { mode_slug: 'code', reason: 'implement the design' } }],
  },
  {
    text: 'Implementing it.',
    toolCalls: [{ name: 'write_to_file', arguments: { path: 'src/app.py', content: 'def hello():\n    return "Hello, world!"\n' } }],
  },
  {
    toolCalls: [{ name: 'attempt_completion', arguments: { result: 'Designed in docs/design.md and implemented in src/app.py.' } }],
  },
];

export const DEMO_REQUEST = 'Add a greeting endpoint: design it first, then implement it in src/app.py.';
