// The plan card: goal, status badge, summary, the steps with their live status, how it ended,
// the approval that asks about it (placed by the log) or, when none is asked, Approve / Reject,
// and the plan document, drawn from the plan's markdown by the chat's Markdown renderer (render.ts).
import { Entry, planBadge, planShown, planSteps, ViewState } from '../protocol/view';
import { byId, button, el, Host } from './dom';
import { lex, section, Tokens } from './markdown';
import { renderInline, renderTokens } from './render';

export interface Plan {
  box: HTMLElement;
  /** the user's last fold of the plan document, for the plan and state it was made in */
  docFold: { key: string; open: boolean } | null;
}

export function mount(): Plan {
  return { box: byId<HTMLElement>('plan'), docFold: null };
}

/** Where the log puts the approvals that ask about the plan, while the card shows. */
export function approvalsSlot(p: Plan): Element | null {
  return p.box.querySelector('.plan-approvals');
}

/** The plan's markdown, folded under "Plan document"; its title and status line are the card's. */
export function planDocument(markdown: string, open: boolean, host: Host): HTMLDetailsElement {
  const tokens = lex(markdown).filter(
    (t) => !(t.type === 'heading' && (t as Tokens.Heading).depth === 1) && !(t.type === 'paragraph' && t.text.startsWith('Status: ')),
  );
  const doc = el('details', 'plan-doc', undefined, el('summary', undefined, 'Plan document'), renderTokens(tokens, { host, final: true, noCodeActions: true }));
  doc.open = open;
  return doc;
}

const STEP_MARK = { done: '✓', current: '▶', pending: '○' } as const;

/** `asked`: the approvals that ask about the plan (see planApprovals). */
export function render(p: Plan, view: ViewState, host: Host, asked: Extract<Entry, { type: 'approval' }>[]) {
  const { box } = p;
  const plan = view.plan;
  box.hidden = !plan || !planShown(view);
  if (!plan || box.hidden) {
    box.replaceChildren();
    box.dataset.sig = '';
    return;
  }
  const sig = JSON.stringify([plan, asked.map((a) => a.id)]);
  if (box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  const state = plan.ended ?? plan.state;
  box.className = `card plan-card state-${state}`;
  const parts: HTMLElement[] = [
    el(
      'div',
      'plan-head',
      undefined,
      el('span', 'plan-label', 'Plan'),
      el('span', 'plan-goal', plan.goal ?? ''),
      el('span', `plan-badge ${state}`, planBadge(plan)),
    ),
  ];
  if (plan.state === 'planning' && plan.scope?.length) parts.push(el('div', 'plan-scope', `Scope: ${plan.scope.join(', ')}`));
  const summary = plan.plan?.summary;
  const md = { host, final: true, noCodeActions: true };
  if (typeof summary === 'string' && summary) parts.push(renderInline(el('div', 'plan-summary'), summary, md));
  const steps = planSteps(plan);
  if (steps.length) {
    const list = el('ol', 'plan-steps');
    for (const s of steps) {
      const item = el('li', `step ${s.status}`, undefined, el('span', 'step-mark', STEP_MARK[s.status]));
      item.dataset.step = s.id;
      item.title = s.verification ? `Verification: ${s.verification}` : '';
      item.appendChild(renderInline(el('span', 'step-text', `${s.id}. `), s.description, md));
      item.appendChild(el('span', 'sr', ` (${s.status})`));
      list.appendChild(item);
    }
    parts.push(list);
  }
  const outcome = plan.ended && plan.markdown ? section(lex(plan.markdown), 'Outcome') : [];
  if (outcome.length) parts.push(renderTokens(outcome, md));
  parts.push(el('div', 'plan-approvals'));
  if (plan.state === 'awaiting_approval' && asked.length === 0) parts.push(planDecision(host));
  if (plan.markdown && !asked.some((a) => a.request.detail === plan.markdown)) {
    const key = `${plan.planId ?? ''}:${plan.state}`;
    const doc = planDocument(plan.markdown, p.docFold?.key === key ? p.docFold.open : plan.state === 'awaiting_approval', host);
    doc.addEventListener('toggle', () => (p.docFold = { key, open: doc.open }));
    parts.push(doc);
  }
  box.replaceChildren(...parts);
}

/** Approve / Reject for a plan waiting for approval when no question is asked (after a reload). */
function planDecision(host: Host): HTMLElement {
  const box = el('div', 'plan-decision');
  const feedback = el('textarea', 'feedback');
  feedback.rows = 2;
  feedback.placeholder = 'Feedback (optional)';
  feedback.setAttribute('aria-label', 'Feedback');
  const decide = (decision: 'approve' | 'reject') => {
    const text = feedback.value.trim();
    box.querySelectorAll('button').forEach((b) => (b.disabled = true));
    host.post({ type: 'planDecision', decision, ...(text ? { feedback: text } : {}) });
  };
  const buttons = el('div', 'buttons');
  buttons.append(button('Approve', 'approve', () => decide('approve')), button('Reject', 'deny secondary', () => decide('reject')));
  box.append(feedback, buttons);
  return box;
}
