// Review before apply: an edit's approval that carries `file` opens VS Code's diff editor, the
// file now on the left, the proposal on the right, editable (the diff editor's own arrows revert
// a hunk). Approve and Deny sit in its title bar as in the sidebar's card; what the right side
// holds when the user approves is the text written. One review at a time, each opened where the
// last one was; closed when decided. `modus.reviewEdits: "card"` keeps the card alone.
import * as vscode from 'vscode';
import type { ReviewFile } from './protocol/generated';

export const REVIEW_SCHEME = 'modus-review';

interface Shown {
  id: string;
  file: ReviewFile;
  left: vscode.Uri;
  right: vscode.Uri;
}

export class Review implements vscode.FileSystemProvider, vscode.Disposable {
  /** the texts of both sides, by URI path: `/<n>/now/<path>`, `/<n>/proposed/<path>` */
  private readonly texts = new Map<string, Uint8Array>();
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private shown: Shown | undefined;
  private seq = 0;
  private column: vscode.ViewColumn | undefined;

  constructor() {
    void vscode.commands.executeCommand('setContext', 'modus.reviewing', false);
  }

  register(): vscode.Disposable {
    return vscode.workspace.registerFileSystemProvider(REVIEW_SCHEME, this, { isCaseSensitive: true });
  }

  /** Whether approvals of edits open the diff editor (else the card alone). */
  get enabled(): boolean {
    return vscode.workspace.getConfiguration('modus').get<string>('reviewEdits', 'diffEditor') !== 'card';
  }

  /** The approval id of the review shown, if one is (its title bar's Approve and Deny answer it). */
  get current(): string | undefined {
    return this.shown?.id;
  }

  /** Opens the diff of approval `id` (the previous review, if any, gives way; the same one shows again). */
  async open(id: string, file: ReviewFile): Promise<void> {
    if (this.shown?.id !== id) {
      await this.close();
      const n = ++this.seq;
      const left = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${n}/now/${file.path}` });
      const right = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${n}/proposed/${file.path}` });
      this.texts.set(left.path, new TextEncoder().encode(file.original ?? ''));
      this.texts.set(right.path, new TextEncoder().encode(file.proposed));
      this.shown = { id, file, left, right };
      await vscode.commands.executeCommand('setContext', 'modus.reviewing', true);
    }
    const { left, right } = this.shown!;
    const title = `${file.path} (${file.original === null ? 'new file' : 'now'} ↔ Modus's proposal)`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, {
      preview: true,
      viewColumn: this.column ?? vscode.ViewColumn.Active,
    });
    this.column = vscode.window.activeTextEditor?.viewColumn ?? this.column;
  }

  /** What the user approved of review `id`, when they changed the proposal; else undefined. */
  content(id: string): string | undefined {
    if (this.shown?.id !== id) return undefined;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === this.shown!.right.toString());
    const text = open ? open.getText() : new TextDecoder().decode(this.texts.get(this.shown.right.path));
    return text === this.shown.file.proposed ? undefined : text;
  }

  /** The review `id` is decided (or withdrawn): its diff editor closes. None: whichever is shown. */
  async close(id?: string): Promise<void> {
    const shown = this.shown;
    if (!shown || (id !== undefined && shown.id !== id)) return;
    this.shown = undefined;
    await vscode.commands.executeCommand('setContext', 'modus.reviewing', false);
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === shown.right.toString());
    if (doc?.isDirty) await doc.save(); // into this provider: closing asks nothing
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => {
      const input = t.input;
      return input instanceof vscode.TabInputTextDiff && input.modified.toString() === shown.right.toString();
    });
    if (tabs.length) await vscode.window.tabGroups.close(tabs);
    this.texts.delete(shown.left.path);
    this.texts.delete(shown.right.path);
  }

  // ---------------------------------------------------------- the file system of both sides

  stat(uri: vscode.Uri): vscode.FileStat {
    const data = this.texts.get(uri.path);
    if (!data) throw vscode.FileSystemError.FileNotFound(uri);
    const now = uri.path.split('/')[2] === 'now';
    return {
      type: vscode.FileType.File,
      ctime: 0,
      mtime: Date.now(),
      size: data.byteLength,
      ...(now ? { permissions: vscode.FilePermission.Readonly } : {}),
    };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const data = this.texts.get(uri.path);
    if (!data) throw vscode.FileSystemError.FileNotFound(uri);
    return data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.texts.has(uri.path) || uri.path.split('/')[2] !== 'proposed') throw vscode.FileSystemError.NoPermissions(uri);
    this.texts.set(uri.path, content);
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
