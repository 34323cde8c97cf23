// An approval's card: what is asked (a mode switch, a diff, a plan document), and while pending
// feedback and Approve / Always allow / Deny (Reject, Revise for a plan); once answered, the decision.
import { Entry, modeName, ViewState } from '../protocol/view';
import { button, el, Host } from './dom';
import { planDocument } from './plan';
import { diffBlock } from './tool';

export function renderApproval(e: Extract<Entry, { type: 'approval' }>, view: ViewState, host: Host): HTMLElement {
  const r = e.request;
  const card = el('div', `card approval status-${e.status}`);
  card.dataset.approval = e.id;
  card.appendChild(el('div', 'head', undefined, el('span', 'approval-title', r.title)));
  if (r.kind === 'switch_mode' && r.to) {
    const from = r.from ? modeName(view, r.from) : '?';
    card.appendChild(el('div', 'switch', `${from} → ${modeName(view, r.to)}`));
  }
  if (r.reason) card.appendChild(el('div', 'reason', r.reason));
  const plan = r.kind === 'plan';
  if (r.detail && r.detail !== r.reason) {
    // a plan's text is its markdown document, open while the question is asked
    card.appendChild(plan ? planDocument(r.detail, e.status === 'pending', host) : diffBlock(r.detail));
  }
  // "Always allow" writes this rule to the workspace's settings: shown while it may be chosen, and once it was
  const rule = r.alwaysAllow && (e.status === 'pending' || e.always) ? alwaysRule(e.id, r.alwaysAllow) : null;
  if (e.status !== 'pending') {
    const denied = plan ? 'Rejected' : 'Denied';
    const approved = e.always ? 'Always allowed' : e.edited ? 'Approved with your changes' : 'Approved';
    const label =
      e.status === 'approve' ? approved : e.status === 'deny' ? denied : e.status === 'revise' ? 'Revise' : 'Cancelled';
    card.appendChild(el('div', `decision ${e.status}`, label + (e.feedback ? `: ${e.feedback}` : '')));
    if (rule) card.appendChild(rule);
    return card;
  }
  const feedback = el('textarea', 'feedback');
  feedback.rows = 2;
  feedback.placeholder = 'Feedback (optional)';
  feedback.setAttribute('aria-label', 'Feedback');
  card.appendChild(feedback);
  const answer = (decision: 'approve' | 'deny' | 'revise', always = false) => {
    const text = feedback.value.trim();
    card.querySelectorAll('button').forEach((b) => (b.disabled = true));
    host.post({ type: 'approval', id: e.id, decision, ...(text ? { feedback: text } : {}), ...(always ? { always: true } : {}) });
  };
  const buttons = el('div', 'buttons');
  buttons.appendChild(button('Approve', 'approve', () => answer('approve')));
  if (rule) {
    const always = buttons.appendChild(button('Always allow', 'always secondary', () => answer('approve', true)));
    always.setAttribute('aria-describedby', rule.id);
  }
  buttons.appendChild(button(plan ? 'Reject' : 'Deny', 'deny secondary', () => answer('deny')));
  // an edit of one file: its diff in the editor, the proposal editable there
  if (r.file) {
    const review = buttons.appendChild(button('Review', 'review secondary', () => host.post({ type: 'review', id: e.id })));
    review.title = 'Open the diff editor: change the proposal there, then approve';
  }
  // revise: keep planning with the feedback (a plan presented with plan_exit)
  if (plan && r.tool === 'plan_exit') buttons.appendChild(button('Revise', 'revise secondary', () => answer('revise')));
  card.appendChild(buttons);
  if (rule) card.appendChild(rule);
  return card;
}

/** The rule "Always allow" writes to the workspace's settings (muted, the rule in monospace). */
function alwaysRule(approvalId: string, rule: string): HTMLElement {
  const box = el('div', 'always-rule', 'Always allow adds to .modus/settings.json: ', el('code', undefined, rule));
  box.id = `always-${approvalId}`;
  return box;
}
