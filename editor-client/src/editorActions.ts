// What the chat's links and code blocks ask of the editor: which of the paths a reply names are
// files of the workspace, a file opened at a line and column, a web page opened in the browser
// (http and https only, after the user's click), a code block copied, inserted at the cursor or
// opened as a new untitled file. The webview is not trusted: every path is checked again here.
import * as vscode from 'vscode';
import { languageIdOf, workspaceFile, WorkspaceFile } from './editorTargets';
import { errorMessage } from './protocol/client';
import type { ToWebview } from './webview/messages';

/** Most paths answered in one message (the webview asks in batches of this size or fewer). */
const MAX_PATHS = 200;

export class EditorActions {
  constructor(private readonly post: (m: ToWebview) => void) {}

  /** The workspace folders on disk (a virtual folder has no files to check: no links into it). */
  private folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  }

  private find(candidate: unknown): Promise<WorkspaceFile | null> {
    return typeof candidate === 'string' ? workspaceFile(this.folders(), candidate) : Promise.resolve(null);
  }

  /** Answers which of `paths` are files of the workspace (their relative paths), the others null. */
  async resolvePaths(paths: unknown): Promise<void> {
    if (!Array.isArray(paths)) return;
    const asked = paths.filter((p): p is string => typeof p === 'string').slice(0, MAX_PATHS);
    const found = await Promise.all(asked.map((p) => this.find(p)));
    const answer: Record<string, string | null> = {};
    asked.forEach((p, i) => (answer[p] = found[i]?.relative ?? null));
    this.post({ type: 'paths', paths: answer });
  }

  /** Opens a workspace file with the cursor at `line`:`column` (1-based; the file's start without them). */
  async openPath(candidate: unknown, line?: unknown, column?: unknown): Promise<void> {
    const found = await this.find(candidate);
    if (!found) {
      void vscode.window.showWarningMessage(`Modus: ${String(candidate)} is not a file in the workspace.`);
      return;
    }
    const at = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) && n > 0 ? n - 1 : 0);
    try {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(found.file));
      const lineIndex = Math.min(at(line), doc.lineCount - 1);
      const position = doc.validatePosition(new vscode.Position(lineIndex, at(column)));
      await vscode.window.showTextDocument(doc, {
        preview: true,
        selection: new vscode.Range(position, position),
      });
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not open ${found.relative}: ${errorMessage(err)}`);
    }
  }

  /** Opens an http(s) address in the browser (VS Code may ask first, as for any link). */
  async openLink(url: unknown): Promise<void> {
    if (typeof url !== 'string') return;
    let uri: vscode.Uri;
    try {
      uri = vscode.Uri.parse(url, true);
    } catch {
      return;
    }
    if (uri.scheme !== 'http' && uri.scheme !== 'https') return;
    await vscode.env.openExternal(uri);
  }

  async copy(code: unknown): Promise<void> {
    if (typeof code !== 'string') return;
    await vscode.env.clipboard.writeText(code);
    vscode.window.setStatusBarMessage('Modus: code copied', 2000);
  }

  /** Puts the code in place of each selection of the active editor (the last one used when the chat has the focus). */
  async insert(code: unknown): Promise<void> {
    if (typeof code !== 'string') return;
    const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (!editor) {
      void vscode.window.showInformationMessage('Modus: open a file to insert the code into.');
      return;
    }
    const done = await editor.edit((edit) => {
      for (const selection of editor.selections) edit.replace(selection, code);
    });
    if (!done) {
      void vscode.window.showErrorMessage(`Modus: could not insert the code into ${vscode.workspace.asRelativePath(editor.document.uri)}.`);
      return;
    }
    await vscode.window.showTextDocument(editor.document, editor.viewColumn);
  }

  /** Opens the code in a new untitled editor, in the fence's language when VS Code knows it. */
  async newFile(code: unknown, language?: unknown): Promise<void> {
    if (typeof code !== 'string') return;
    const known = await vscode.languages.getLanguages();
    const doc = await vscode.workspace.openTextDocument({
      language: languageIdOf(typeof language === 'string' ? language : undefined, known),
      content: code,
    });
    await vscode.window.showTextDocument(doc);
  }
}
