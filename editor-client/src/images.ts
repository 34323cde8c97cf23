// The chat's images: a thumbnail's bytes, fetched from the server (`modus/chat/image`) for the
// webview, and an image opened full size: written to a temporary file (named by its id, the hash
// of its bytes: written once) and opened with `vscode.open`, in VS Code's own image preview tab.
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import type { ServerApi } from './server';
import type { Sidebar } from './sidebar';
import type { ViewStore } from './store';

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' };

export class Images {
  constructor(
    private readonly server: ServerApi,
    private readonly sidebar: Pick<Sidebar, 'send'>,
    private readonly store: ViewStore,
  ) {}

  /** A thumbnail is shown: its bytes, to the webview. */
  async fetch(id: string): Promise<void> {
    const api = this.server.api;
    if (!api) return;
    try {
      const { mimeType, data } = await api.image(id);
      this.sidebar.send({ type: 'image', id, mimeType, data });
    } catch (err) {
      this.store.dispatch({ type: 'error', text: `Could not show an image: ${errorMessage(err)}` });
    }
  }

  /** A click on a thumbnail: the image full size, in an editor tab. */
  async open(id: string): Promise<void> {
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
