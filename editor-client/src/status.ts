// The status bar: the current mode (a click switches it) and, right of it, PLAN or ACT (a click flips it).
import * as vscode from 'vscode';
import { modeRules } from './protocol/modes';
import type { ViewState } from './protocol/view';

export class StatusBar implements vscode.Disposable {
  private readonly mode = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  private readonly phase = vscode.window.createStatusBarItem('modus.phase', vscode.StatusBarAlignment.Left, 99);

  constructor(view: ViewState) {
    this.mode.command = 'modus.ui.switchMode';
    this.phase.name = 'Modus Phase';
    this.phase.command = 'modus.ui.togglePhase';
    this.render(view);
    this.mode.show();
  }

  render(view: ViewState): void {
    const mode = view.mode;
    this.mode.text = `$(comment-discussion) ${mode ? mode.name : 'Modus'}`;
    const info = mode ? view.modes.find((m) => m.slug === mode.slug) : undefined;
    this.mode.tooltip = mode
      ? `Modus mode: ${mode.name}${info ? ` (${modeRules(info)})` : ''} — click to switch`
      : 'Modus: switch mode';
    const phase = view.phase;
    if (!phase) {
      this.phase.hide();
      return;
    }
    this.phase.text = phase === 'plan' ? '$(checklist) PLAN' : '$(play) ACT';
    this.phase.tooltip =
      phase === 'plan'
        ? 'Modus is in PLAN MODE: it explores and talks the plan through, and writes nothing. Click for ACT.'
        : 'Modus is in ACT MODE: it carries the work out. Click for PLAN.';
    this.phase.backgroundColor = phase === 'plan' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.phase.show();
  }

  dispose(): void {
    this.mode.dispose();
    this.phase.dispose();
  }
}
