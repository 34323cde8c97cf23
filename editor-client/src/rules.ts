// The rules the sidebar's header tells: the rule files and whether each applies now in the
// conversation shown, asked for again when what decides it may have changed (another conversation
// or mode, a turn that ended — its touched files wake conditional rules —, edited settings), and
// a rule file opened in an editor.
import * as vscode from 'vscode';
import { Asking } from './asking';
import type { Update } from './protocol/generated';
import type { ViewState } from './protocol/view';
import { openProjectFile } from './projectFile';
import type { ServerApi } from './server';
import type { ViewStore } from './store';

export class Rules {
  /** the conversation and mode the list was last asked for */
  private shown = '';
  private readonly asking: Asking;
  /** The rule files of the conversation shown; one request at a time, one more when asked meanwhile. */
  readonly refresh: () => Promise<void>;

  constructor(
    private readonly server: ServerApi,
    private readonly store: ViewStore,
    output: vscode.OutputChannel,
  ) {
    this.asking = new Asking(
      server,
      output,
      'the rules',
      async (api) => this.store.dispatch({ type: 'rules', rules: (await api.rules(this.store.view.conversationId)).rules }),
      () => this.store.dispatch({ type: 'rules', rules: null }),
    );
    this.refresh = this.asking.refresh;
  }

  /**
   * After each action: a server that started (a new one is asked again whether it lists rules),
   * another conversation or mode shown, ask for the list again.
   */
  viewChanged(view: ViewState): void {
    if (view.server.status !== 'running') {
      this.shown = '';
      this.asking.off = false;
      return;
    }
    const key = JSON.stringify([view.conversationId, view.mode?.slug ?? null]);
    if (key === this.shown || !this.server.api) return;
    this.shown = key;
    void this.refresh();
  }

  /** Whether an update may change which rules apply: a turn ended (files touched), the settings changed. */
  mayChange(u: Update): boolean {
    return (u.kind === 'turn_ended' || u.kind === 'state_changed') && u.conversationId === this.store.view.conversationId;
  }

  /** Opens a rule file: a workspace-relative path in the (first) workspace folder, an absolute one as it is. */
  open(rulePath: string): Promise<void> {
    return openProjectFile(rulePath);
  }

}
