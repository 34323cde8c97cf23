// What the chat's messages offer: Copy (to the clipboard, by the extension: the webview has no
// clipboard of its own), Retry of a failed or cancelled turn, Edit & resend of the user's message
// (the conversation cut back there; the files too when asked), and taking back a message queued
// behind a running turn (its text back in the composer). The server does the work; a refusal is
// a line in the chat.
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import type { ServerApi } from './server';
import type { Sidebar } from './sidebar';
import type { ViewStore } from './store';

export class MessageActions {
  constructor(
    private readonly server: ServerApi,
    private readonly store: ViewStore,
    private readonly sidebar: Pick<Sidebar, 'fillComposer'>,
  ) {}

  async copy(text: string): Promise<void> {
    await vscode.env.clipboard.writeText(text);
  }

  async retry(): Promise<void> {
    await this.request('retry', (api, conversationId) => api.retry(conversationId));
  }

  /** The conversation is shown again when the server says it was cut (`conversation_cut`). */
  async edit(messageId: string, text: string, files: boolean): Promise<void> {
    const result = await this.request('resend', (api, conversationId) => api.edit(conversationId, messageId, text, files));
    if (result?.filesNotRestored) this.store.dispatch({ type: 'error', text: `Files not restored: ${result.filesNotRestored}` });
  }

  async unqueue(messageId: string): Promise<void> {
    const result = await this.request('take back the message', (api, conversationId) => api.unqueue(conversationId, messageId));
    if (result) this.sidebar.fillComposer(result.text, result.images);
  }

  private async request<T>(what: string, call: (api: NonNullable<ServerApi['api']>, conversationId: string) => Promise<T>): Promise<T | undefined> {
    const api = this.server.requireApi();
    const conversationId = this.store.view.conversationId;
    if (!api || !conversationId) return undefined;
    try {
      return await call(api, conversationId);
    } catch (err) {
      this.store.dispatch({ type: 'error', text: `Could not ${what}: ${errorMessage(err)}` });
      return undefined;
    }
  }
}
