// The agent's mode and what goes with it: PLAN or ACT, the plan and its todos, the system
// prompt, the workspace's settings that wait for trust. Read for the sidebar; changed from the
// palette, the status bar and the sidebar.
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import type { State } from './protocol/generated';
import { modeRules } from './protocol/modes';
import type { ReadOnlyDocuments } from './documents';
import type { ServerApi } from './server';
import type { ViewStore } from './store';

/** `modus-prompt:/System prompt (<mode>).md`: the system prompt, read-only */
export const PROMPT_SCHEME = 'modus-prompt';

export class Modes {
  constructor(
    private readonly server: ServerApi,
    private readonly store: ViewStore,
    private readonly output: vscode.OutputChannel,
    private readonly documents: ReadOnlyDocuments,
  ) {}

  /** Modes, state (with the plan) and todos: what the sidebar shows before anything happens. */
  async refresh(): Promise<void> {
    const api = this.server.api;
    if (!api) return;
    try {
      this.store.dispatch({ type: 'modes', modes: await api.modes() });
      this.store.dispatch({ type: 'state', state: await api.state() });
      this.store.dispatch({ type: 'todos', todos: (await api.todos()).todos });
    } catch (err) {
      this.output.appendLine(`modus: could not read the state: ${errorMessage(err)}`);
    }
  }

  async refreshState(): Promise<void> {
    try {
      const api = this.server.api;
      if (api) this.store.dispatch({ type: 'state', state: await api.state() });
    } catch (err) {
      this.output.appendLine(`modus: could not read the state: ${errorMessage(err)}`);
    }
  }

  async switchMode(): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    let list;
    try {
      list = await api.modes();
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not list the modes: ${errorMessage(err)}`);
      return;
    }
    this.store.dispatch({ type: 'modes', modes: list });
    const picked = await vscode.window.showQuickPick(
      list.modes.map((m) => ({
        label: m.name,
        description: `${m.slug} · ${m.source}${m.slug === list.current ? ' · current' : ''}`,
        // what it may reach first (its MCP servers, its command rules), then what it is for
        detail: [modeRules(m), m.description ?? m.whenToUse].filter(Boolean).join(' — '),
        slug: m.slug,
      })),
      { placeHolder: 'Switch Modus to mode…', matchOnDescription: true, matchOnDetail: true },
    );
    if (picked) await this.switchTo(picked.slug);
  }

  async switchTo(slug: string): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    try {
      this.store.dispatch({ type: 'state', state: await api.switchMode(slug) });
    } catch (err) {
      this.store.dispatch({ type: 'error', text: `Could not switch to ${slug}: ${errorMessage(err)}` });
      void vscode.window.showErrorMessage(`Modus: could not switch to ${slug}: ${errorMessage(err)}`);
    }
  }

  /** PLAN ⇄ ACT. To ACT while a plan waits for the user's answer: the agent goes on. */
  async togglePhase(): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    const phase = this.store.view.phase === 'plan' ? 'act' : 'plan';
    try {
      this.store.dispatch({ type: 'state', state: await api.setPhase(phase) });
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not switch to ${phase.toUpperCase()}: ${errorMessage(err)}`);
    }
  }

  /** The user's decision on the plan (palette, or the plan card when no question is asked). */
  async decidePlan(decision: 'approve' | 'reject', feedback?: string): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    try {
      const state = decision === 'approve' ? await api.planApprove(feedback) : await api.planReject(feedback);
      this.store.dispatch({ type: 'state', state });
    } catch (err) {
      // e.g. "No plan to approve: the plan state is normal (no plan is active)."
      void vscode.window.showErrorMessage(`Modus: ${errorMessage(err)}`);
      await this.refreshState(); // the card's buttons come back
    }
  }

  /** `Modus: Reject Plan`: asks for optional feedback when there is a plan to reject. */
  async rejectPlan(): Promise<void> {
    const state = this.store.view.plan?.state;
    let feedback: string | undefined;
    if (state === 'awaiting_approval' || state === 'executing') {
      feedback = await vscode.window.showInputBox({
        title: 'Modus: Reject Plan',
        prompt: state === 'executing' ? 'Stop the plan being carried out. Why? (optional)' : 'Why? (optional; the agent gets it)',
        placeHolder: 'Feedback for the agent',
      });
      if (feedback === undefined) return; // Escape: nothing rejected
    }
    await this.decidePlan('reject', feedback?.trim() || undefined);
  }

  /**
   * `Modus: Trust Workspace Settings`: the keys of the workspace's `.modus/settings.json` that wait
   * for the user's trust (what decides what runs or where requests go: yolo, autoApprove, stateDir,
   * mcpStartAtLaunch, maxRequestsPerTurn, model endpoints) apply. Only in a trusted
   * VS Code workspace (the command's enablement says so too).
   */
  async trustWorkspaceSettings(): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Modus: trust this folder in VS Code first (Workspaces: Manage Workspace Trust).');
      return;
    }
    const api = this.server.requireApi();
    if (!api) return;
    let state: State;
    try {
      state = await api.trustWorkspaceSettings();
    } catch (err) {
      // e.g. "<workspace>/.modus/settings.json: nothing in it waits for trust"
      void vscode.window.showWarningMessage(`Modus: ${errorMessage(err)}`);
      return;
    }
    this.store.dispatch({ type: 'state', state });
    const yolo = state.yolo ? ' yolo is on: every action runs without asking.' : '';
    void vscode.window.showInformationMessage(`Modus: the workspace's settings (.modus/settings.json) now apply.${yolo}`);
  }

  async showSystemPrompt(): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    let text: string;
    try {
      text = await api.systemPrompt();
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: the server could not show the system prompt: ${errorMessage(err)}`);
      return;
    }
    const name = this.store.view.mode?.name ?? 'current';
    const uri = vscode.Uri.from({ scheme: PROMPT_SCHEME, path: `/System prompt (${name}).md` });
    this.documents.show(uri, text);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}
