// The server's approval requests (modus/approval): each is shown in the sidebar until the user
// answers it there (or, for an edit under review, in the diff editor's title bar), the server
// cancels it, or the server is stopped (then it is denied).
import * as vscode from 'vscode';
import type { ApprovalRequest, ApprovalResponse } from './protocol/generated';
import type { CancellationLike } from './protocol/client';
import type { Review } from './review';
import type { ViewStore } from './store';
import type { FromWebview } from './webview/messages';

export class Approvals {
  private readonly pending = new Map<string, (r: ApprovalResponse) => void>();
  private readonly requests = new Map<string, ApprovalRequest>();
  private seq = 0;

  constructor(
    private readonly store: ViewStore,
    private readonly review: Review,
  ) {}

  ask(request: ApprovalRequest, token: CancellationLike): Promise<ApprovalResponse> {
    const id = `approval-${++this.seq}`;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.requests.set(id, request);
      this.store.dispatch({ type: 'approval', id, request });
      if (request.file && this.review.enabled) void this.review.open(id, request.file);
      else void vscode.commands.executeCommand('modus.chat.focus');
      token.onCancellationRequested(() => {
        if (this.pending.delete(id)) {
          this.requests.delete(id);
          this.store.dispatch({ type: 'approvalCancelled', id });
          void this.review.close(id);
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
    this.requests.delete(m.id);
    const content = m.decision === 'approve' ? this.review.content(m.id) : undefined;
    const response: ApprovalResponse = {
      decision: m.decision,
      ...(m.feedback ? { feedback: m.feedback } : {}),
      ...(m.always && m.decision === 'approve' ? { always: true } : {}),
      ...(content !== undefined ? { content } : {}),
    };
    void this.review.close(m.id);
    this.store.dispatch({ type: 'approvalAnswered', id: m.id, response });
    resolve(response);
  }

  /** Approve or Deny from the diff editor's title bar: the edit under review. */
  decideReview(decision: 'approve' | 'deny'): void {
    const id = this.review.current;
    if (id) this.answer({ type: 'approval', id, decision });
  }

  /** The card's "Review in Editor": the diff editor of a pending edit's approval. */
  async openReview(id: string): Promise<void> {
    const file = this.requests.get(id)?.file;
    if (file) await this.review.open(id, file);
  }

  denyAll(): void {
    for (const resolve of this.pending.values()) resolve({ decision: 'deny' });
    this.pending.clear();
    this.requests.clear();
    void this.review.close();
  }
}
