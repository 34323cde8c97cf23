// The read-only documents Modus shows (system prompts, files as a checkpoint holds them): their
// texts by URI, an editor showing one following each new text.
import * as vscode from 'vscode';

export class ReadOnlyDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  /** by scheme: the text of a document not shown yet (an editor left open by a reloaded window) */
  private readonly loaders = new Map<string, (uri: vscode.Uri) => Promise<string>>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** Provides the documents of `scheme`; `load`: the text of one not shown yet (else empty). */
  register(scheme: string, load?: (uri: vscode.Uri) => Promise<string>): vscode.Disposable {
    if (load) this.loaders.set(scheme, load);
    return vscode.workspace.registerTextDocumentContentProvider(scheme, this);
  }

  /** Sets the text of a document (an editor showing it follows). */
  show(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string | Promise<string> {
    const text = this.texts.get(uri.toString());
    if (text !== undefined) return text;
    return this.loaders.get(uri.scheme)?.(uri) ?? '';
  }

  dispose(): void {
    this.changed.dispose();
  }
}
