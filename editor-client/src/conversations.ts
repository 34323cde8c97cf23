// The conversations in the sidebar: sending, starting, listing and opening one, what it cost,
// cancelling its turn, condensing it, and the agents and slash commands the composer completes.
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import type { ImageData } from './protocol/generated';
import type { Checkpoints } from './checkpoints';
import type { ServerApi } from './server';
import type { ViewStore } from './store';

export class Conversations {
  constructor(
    private readonly server: ServerApi,
    private readonly store: ViewStore,
    private readonly output: vscode.OutputChannel,
    private readonly checkpoints: Pick<Checkpoints, 'refresh'>,
  ) {}

  async send(text: string, images?: ImageData[]): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    const conversationId = this.store.view.conversationId;
    try {
      const result = await api.send({ text, ...(conversationId ? { conversationId } : {}), ...(images?.length ? { images } : {}) });
      this.store.dispatch({ type: 'sent', result });
    } catch (err) {
      this.store.dispatch({ type: 'error', text: `Could not send: ${errorMessage(err)}` });
    }
  }

  /** A new conversation, made current on the server (a reload comes back to it). */
  async create(): Promise<void> {
    void vscode.commands.executeCommand('modus.chat.focus');
    const api = this.server.requireApi();
    if (!api) return;
    try {
      const state = await api.open();
      this.store.dispatch({ type: 'newConversation', conversationId: state.conversationId });
      this.store.dispatch({ type: 'state', state });
    } catch (err) {
      this.store.dispatch({ type: 'error', text: `Could not start a new conversation: ${errorMessage(err)}` });
    }
  }

  async list(): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    this.store.dispatch({ type: 'conversations', conversations: null });
    try {
      this.store.dispatch({ type: 'conversations', conversations: (await api.conversations()).conversations });
    } catch (err) {
      this.store.dispatch({ type: 'conversations', conversations: [] });
      this.store.dispatch({ type: 'error', text: `Could not list the conversations: ${errorMessage(err)}` });
    }
  }

  async open(conversationId: string): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    try {
      this.store.dispatch({ type: 'state', state: await api.open(conversationId) });
      await this.show(conversationId);
    } catch (err) {
      this.store.dispatch({ type: 'error', text: `Could not open the conversation: ${errorMessage(err)}` });
    }
  }

  /**
   * Shows a stored conversation: its messages, as the server keeps them, their checkpoints and
   * what it cost. `restored`: after a restore of the conversation (no turn runs).
   */
  async show(conversationId: string | null, restored = false): Promise<void> {
    const api = this.server.api;
    if (!api || !conversationId) return;
    try {
      const { messages, queued } = await api.history(conversationId);
      this.store.dispatch({ type: 'history', conversationId, messages, ...(queued?.length ? { queued } : {}), ...(restored ? { restored } : {}) });
    } catch (err) {
      this.store.dispatch({ type: 'error', text: `Could not load the conversation: ${errorMessage(err)}` });
      return;
    }
    await Promise.all([this.checkpoints.refresh(), this.refreshUsage()]);
  }

  /** The conversation's tokens and cost; a conversation not stored yet has none. */
  private async refreshUsage(): Promise<void> {
    const api = this.server.api;
    const conversationId = this.store.view.conversationId;
    if (!api || !conversationId) return;
    try {
      this.store.dispatch({ type: 'usage', conversationId, usage: await api.usage(conversationId) });
    } catch (err) {
      this.output.appendLine(`modus: no usage for ${conversationId}: ${errorMessage(err)}`);
      this.store.dispatch({ type: 'usage', conversationId, usage: null });
    }
  }

  /**
   * The agents and members for the composer's @-completion, asked for each time the composer
   * gains focus (so a changed agents file shows up). Quiet: the composer asks on its own.
   */
  async listAgents(): Promise<void> {
    const api = this.server.api;
    if (!api) return;
    try {
      this.store.dispatch({ type: 'agents', agents: await api.agents() });
    } catch (err) {
      this.output.appendLine(`modus: could not list the agents: ${errorMessage(err)}`);
    }
  }

  /**
   * The slash commands for the composer's `/`-completion, asked for each time the composer gains
   * focus (a new prompt file shows up). Quiet, as the agents.
   */
  async listCommands(): Promise<void> {
    const api = this.server.api;
    if (!api) return;
    try {
      this.store.dispatch({ type: 'commands', commands: (await api.commands()).commands });
    } catch (err) {
      this.output.appendLine(`modus: could not list the commands: ${errorMessage(err)}`);
    }
  }

  /**
   * The context bar's click and `Modus: Condense the Conversation`: the model summarises the older
   * part of the conversation now. The server refuses while a turn runs; the chat says why.
   */
  async condense(): Promise<void> {
    void vscode.commands.executeCommand('modus.chat.focus');
    const api = this.server.requireApi();
    const { conversationId, condensing, entries } = this.store.view;
    if (!api || !conversationId || condensing !== null) return;
    if (!entries.some((e) => e.type === 'user')) {
      void vscode.window.showInformationMessage('Modus: nothing to condense: the conversation has no messages yet.');
      return;
    }
    this.store.dispatch({ type: 'condenseStarted', conversationId });
    try {
      await api.condense(conversationId); // what it did, or why it did nothing, comes as a chat line
    } catch (err) {
      this.store.dispatch({ type: 'condenseFailed', text: `Could not condense: ${errorMessage(err)}` });
      return;
    }
    this.store.dispatch({ type: 'condenseEnded' });
  }

  async cancel(): Promise<void> {
    const api = this.server.requireApi();
    const conversationId = this.store.view.conversationId;
    if (!api || !conversationId) return;
    try {
      await api.cancel(conversationId);
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not cancel: ${errorMessage(err)}`);
    }
  }
}
