// Checkpoints on the tool cards: which calls have one (asked for as calls start), Show diff in
// VS Code's diff editor (the checkpoint's side a `modus-checkpoint:` document), Restore and
// Undo restore.
import * as vscode from 'vscode';
import { Asking } from './asking';
import { errorMessage } from './protocol/client';
import { checkpointText } from './protocol/diff';
import type { CheckpointFile, Update } from './protocol/generated';
import type { RestoreKind } from './protocol/view';
import type { ReadOnlyDocuments } from './documents';
import type { ServerApi } from './server';
import type { ViewStore } from './store';

/** `modus-checkpoint:/<path>?<checkpoint id>`: a file as a checkpoint holds it (the left side of Show diff) */
export const CHECKPOINT_SCHEME = 'modus-checkpoint';
/** the query of the right side of Show diff for a file deleted since the checkpoint: no text */
const DELETED = 'deleted';

export class Checkpoints {
  /** the tool calls (card ids) that had started when the checkpoints were last asked for: theirs are known */
  private readonly asked = new Set<string>();
  /** asks for the checkpoints; `off` when the server has none (the setting, no git, no such method) */
  private readonly asking: Asking;
  /** The conversation's checkpoints for its cards; one request at a time, one more when asked meanwhile. */
  readonly refresh: () => Promise<void>;

  constructor(
    private readonly server: ServerApi,
    private readonly store: ViewStore,
    output: vscode.OutputChannel,
    private readonly documents: ReadOnlyDocuments,
    /** after a restore of the conversation (and its files): the conversation shown again */
    private readonly conversationRestored: (conversationId: string) => Promise<void>,
  ) {
    this.asking = new Asking(server, output, 'the checkpoints', (api) => this.ask(api));
    this.refresh = this.asking.refresh;
  }

  /** A new server: asked again whether it has checkpoints. */
  serverStarted(): void {
    this.asking.off = false;
  }

  /**
   * Whether an update may bring a checkpoint the cards do not know: a call of the conversation
   * shown that started (the server takes its checkpoint, if it takes one, before it runs it) and
   * that was not running at the last ask, or a turn that ended with such a call.
   */
  mayBring(u: Update): boolean {
    const view = this.store.view;
    if (this.asking.off || u.conversationId !== view.conversationId) return false;
    if (u.kind === 'tool_call') return u.status !== 'pending' && !this.asked.has(`tool:${u.toolCallId}`);
    if (u.kind === 'turn_ended') return view.entries.some((e) => e.type === 'tool' && !this.asked.has(e.id));
    return false;
  }

  private async ask(api: NonNullable<ServerApi['api']>): Promise<void> {
    const { conversationId, entries } = this.store.view;
    if (!conversationId) return;
    for (const e of entries) if (e.type === 'tool' && e.status !== 'pending') this.asked.add(e.id);
    const list = await api.checkpoints(conversationId);
    // off (the setting, no git): the server told the user once; the cards offer nothing
    if (list.disabled) this.asking.off = true;
    this.store.dispatch({ type: 'checkpoints', conversationId, checkpoints: list.checkpoints });
  }

  /**
   * A card's Show diff: the files changed since the checkpoint (taken before `tool`), one in VS
   * Code's diff editor (a quick pick when there are several), the checkpoint's text on the left.
   */
  async showDiff(checkpointId: string, tool: string): Promise<void> {
    const api = this.server.requireApi();
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
      this.documents.show(left, checkpointText(file, file.status === 'deleted' ? '' : await readText(current)));
    } catch (err) {
      void vscode.window.showWarningMessage(`Modus: cannot compare ${file.path} with the checkpoint: ${errorMessage(err)}.`);
      return;
    }
    let right = current;
    if (file.status === 'deleted') {
      right = checkpointUri(file.path, DELETED);
      this.documents.show(right, '');
    }
    const name = file.path.split('/').pop();
    const now = file.status === 'deleted' ? 'deleted' : 'now';
    await vscode.commands.executeCommand('vscode.diff', left, right, `${name} (before ${tool} ↔ ${now})`, { preview: true });
  }

  /**
   * A file as the checkpoint of `uri` holds it, for an editor opened without Show diff (a
   * window reloaded with it open): from the diff since then and the file now.
   */
  async document(uri: vscode.Uri): Promise<string> {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    const path = uri.path.replace(/^\//, '');
    if (uri.query === DELETED) return '';
    const api = this.server.api;
    if (!api || !root) throw new Error('The Modus server is not running: use Show diff again once it is.');
    const { files } = await api.checkpointDiff(uri.query);
    const file = files.find((f) => f.path === path);
    const current = file?.status === 'deleted' ? '' : await readText(vscode.Uri.joinPath(root, path));
    return file ? checkpointText(file, current) : current; // not in the diff: unchanged since
  }

  /**
   * A card's Restore and a note's Undo restore. The files come back through workspace/applyEdit
   * (saved like any edit) or on disk; after the conversation, its history is read again (shorter).
   */
  async restore(checkpointId: string, what: RestoreKind, undoOf?: string): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    this.store.dispatch({ type: 'restoreStarted', checkpointId });
    let result;
    try {
      result = await api.restoreCheckpoint(checkpointId, what);
    } catch (err) {
      // e.g. refused while a turn runs
      this.store.dispatch({ type: 'restoreFailed', text: `Could not restore: ${errorMessage(err)}` });
      return;
    }
    if (what === 'both') await this.conversationRestored(result.conversationId);
    this.store.dispatch({ type: 'restored', what, result, ...(undoOf ? { undoOf } : {}) });
  }
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
