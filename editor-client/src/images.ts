// The chat's stored images (a browser_action's screenshot): the webview asks for one by its id,
// this asks the server (`modus/chat/image`) and posts the bytes back. The webview is not trusted:
// the id is checked to be a string, the answer only ever what the server stored.
import { errorMessage } from './protocol/client';
import type { ServerApi } from './server';
import type { ToWebview } from './webview/messages';

export class Images {
  constructor(
    private readonly server: ServerApi,
    private readonly post: (m: ToWebview) => void,
  ) {}

  async fetch(id: unknown): Promise<void> {
    if (typeof id !== 'string' || !id || id.length > 200) return;
    const api = this.server.api;
    if (!api) return this.post({ type: 'image', id, error: 'the Modus server is not running' });
    try {
      const { mimeType, data } = await api.chatImage(id);
      this.post({ type: 'image', id, mimeType, data });
    } catch (err) {
      this.post({ type: 'image', id, error: errorMessage(err) });
    }
  }
}
