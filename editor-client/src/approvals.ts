// The server's approval requests (modus/approval): each is shown in the sidebar until the user
// answers it there, the server cancels it, or the server is stopped (then it is denied).
import * as vscode from 'vscode';
import type { ApprovalRequest, ApprovalResponse } from './protocol/generated';
import type { CancellationLike } from './protocol/client';
import type { ViewStore } from './store';
import type { FromWebview } from './webview/messages';

export class Approvals {
  private readonly pending = new Map<string, (r: ApprovalResponse) => void>();
  private seq = 0;

  constructor(private readonly store: ViewStore) {}

  ask(request: ApprovalRequest, token: CancellationLike): Promise<ApprovalResponse> {
    const id = `approval-${++this.seq}`;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.store.dispatch({ type: 'approval', id, request });
      void vscode.commands.executeCommand('modus.chat.focus');
      token.onCancellationRequested(() => {
        if (this.pending.delete(id)) {
          this.store.dispatch({ type: 'approvalCancelled', id });
          resolve({ decision: 'deny' });
        }
      });
    });
  }

  /** The user's answer, from the sidebar's approval card. */
  answer(m: Extract<FromWebview, { type: 'approval' }>): void {
    const resolve = this.pending.get(m.id);
    if (!resolve) return;
    this.pending.delete(m.id);
    const response: ApprovalResponse = {
      decision: m.decision,
      ...(m.feedback ? { feedback: m.feedback } : {}),
      ...(m.always && m.decision === 'approve' ? { always: true } : {}),
    };
    this.store.dispatch({ type: 'approvalAnswered', id: m.id, response });
    resolve(response);
  }

  denyAll(): void {
    for (const resolve of this.pending.values()) resolve({ decision: 'deny' });
    this.pending.clear();
  }
}
