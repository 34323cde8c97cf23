// The chat's stored images (pasted ones, a browser_action's screenshots): a thumbnail's bytes,
// fetched from the server (`modus/chat/image`) for the webview, and an image opened full size:
// written to a temporary file (named by its id, the hash of its bytes: written once) and opened
// with `vscode.open`, in VS Code's own image preview tab. The webview is not trusted: an id is
// checked to be a short string, and what goes back is only ever what the server stored.
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import type { ServerApi } from './server';
import type { ViewStore } from './store';
import type { ToWebview } from './webview/messages';

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' };

const isId = (id: unknown): id is string => typeof id === 'string' && id.length > 0 && id.length <= 200;

export class Images {
  constructor(
    private readonly server: ServerApi,
    private readonly post: (m: ToWebview) => void,
    private readonly store: ViewStore,
  ) {}

  /** A thumbnail or a screenshot is shown: its bytes to the webview, or why not. */
  async fetch(id: unknown): Promise<void> {
    if (!isId(id)) return;
    const api = this.server.api;
    if (!api) return this.post({ type: 'image', id, error: 'the Modus server is not running' });
    try {
      const { mimeType, data } = await api.image(id);
      this.post({ type: 'image', id, mimeType, data });
    } catch (err) {
      this.post({ type: 'image', id, error: errorMessage(err) });
    }
  }

  /** A click on a thumbnail: the image full size, in an editor tab. */
  async open(id: unknown): Promise<void> {
    if (!isId(id)) return;
    const api = this.server.requireApi();
    if (!api) return;
    try {
      const { mimeType, data } = await api.image(id);
      const dir = join(tmpdir(), 'modus-images');
      await mkdir(dir, { recursive: true });
      const file = join(dir, `${id.replace(/[^\w-]/g, '_')}.${EXTENSIONS[mimeType] ?? 'img'}`);
      await writeFile(file, Buffer.from(data, 'base64'));
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file), { preview: true });
    } catch (err) {
      this.store.dispatch({ type: 'error', text: `Could not open the image: ${errorMessage(err)}` });
    }
  }
}
