// The language client of the server (vscode-languageclient): it declares that it renders
// approvals, stays quiet (the extension tells the user itself), shows in the sidebar the work the
// light bulb's commands start, and saves the documents the server edits.
import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  ClientCapabilities,
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  ServerOptions,
  StaticFeature,
  TextDocumentEdit,
} from 'vscode-languageclient/node';
import { CLIENT_EXPERIMENTAL_CAPABILITIES, errorMessage } from './protocol/client';
import { Command, Method } from './protocol/generated';
import type { ClientDiagnosticsParams, ClientDiagnosticsResult } from './protocol/generated';
import type { State } from './protocol/generated';
import { within } from './protocol/process';

export interface ClientOptions {
  serverOptions: ServerOptions;
  /** the user's settings, for `initializationOptions.modus` */
  settings: unknown;
  output: vscode.OutputChannel;
  /** whether the client is still the extension's: a stopped one has nothing to offer */
  isCurrent(): boolean;
  /** the start under way: the client is told the connection closed once it has settled */
  starting(): Promise<void>;
  /** the state a server command that starts work from the editor answered with */
  onState(state: State): void;
}

export function createLanguageClient(o: ClientOptions): LanguageClient {
  const client = new QuietLanguageClient('modus', 'Modus', o.serverOptions, {
    documentSelector: [{ scheme: 'file' }],
    initializationOptions: { modus: o.settings },
    outputChannel: o.output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // The server's commands (registered by the client from executeCommandProvider) that start
    // work from the editor, e.g. the light bulb's "Plan a change here": show it in the sidebar.
    middleware: {
      // The light bulb asks again as the window closes: a stopped client has nothing to offer.
      provideCodeActions: async (document, range, context, token, next) => {
        try {
          return await next(document, range, context, token);
        } catch (err) {
          if (o.isCurrent() && client.isRunning()) throw err;
          return undefined;
        }
      },
      executeCommand: async (command, args, next) => {
        if (!SIDEBAR_COMMANDS.has(command)) return next(command, args);
        void vscode.commands.executeCommand('modus.chat.focus');
        try {
          const state = await next(command, args);
          if (isState(state)) o.onState(state);
          return state;
        } catch (err) {
          void vscode.window.showErrorMessage(`Modus: ${errorMessage(err)}`);
          return undefined;
        }
      },
    },
    // The client neither restarts the server nor tells the user: the Server does both, once (a
    // failed start: Server.fail; a stop by itself: Server.stopped, which restarts it with a backoff).
    initializationFailedHandler: () => false,
    errorHandler: {
      error: () => ({ action: ErrorAction.Shutdown, handled: true }),
      // Answered once start() has settled: the client forgets its start promise when the
      // connection closes, and a start that failed meanwhile would then seem to succeed.
      closed: async () => {
        await within(o.starting(), 2000);
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
  });
  client.registerFeature(new ApprovalsCapability());
  // What the editor's language servers find in the files an edit wrote (all of them: VS Code's diagnostics).
  client.onRequest(Method.clientDiagnostics, async ({ uris }: ClientDiagnosticsParams): Promise<ClientDiagnosticsResult> => ({
    items: await Promise.all(
      uris.map(async (uri) => ({
        uri,
        diagnostics: (await client.code2ProtocolConverter.asDiagnostics(
          vscode.languages.getDiagnostics(client.protocol2CodeConverter.asUri(uri)),
        )) as ClientDiagnosticsResult['items'][number]['diagnostics'],
      })),
    ),
  }));
  // Replaces the client's own workspace/applyEdit handler (registered before ours) to save
  // the edited documents after a successful apply.
  client.onRequest('workspace/applyEdit', (params: ApplyWorkspaceEditParams) => applyEdit(client, params));
  return client;
}

/**
 * Declares `capabilities.experimental.modus`: this client renders approvals, and answers
 * `modus/client/diagnostics` with what the editor's language servers report.
 */
class ApprovalsCapability implements StaticFeature {
  getState() {
    return { kind: 'static' as const };
  }
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const modus = { ...CLIENT_EXPERIMENTAL_CAPABILITIES.modus, diagnostics: true };
    capabilities.experimental = { ...(capabilities.experimental as object), modus };
  }
  initialize(): void {}
  clear(): void {}
}

/** Logs to the output channel only: the extension tells the user itself, once (Server.fail, Server.stopped). */
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

async function applyEdit(client: LanguageClient, params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
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

/** Server commands that start work from the editor (code actions): the sidebar shows it. */
const SIDEBAR_COMMANDS = new Set<string>([Command.PLAN_SELECTION, Command.START_IN_MODE]);

function isState(value: unknown): value is State {
  return !!value && typeof value === 'object' && 'mode' in value && 'phase' in value && 'plan' in value;
}
