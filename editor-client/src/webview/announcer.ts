// What a screen reader hears of the chat. The log itself is not a live region (a streaming reply
// is drawn again at every frame, and would be read again and again): one polite status region
// says that an agent is responding, then its finished reply, once; an approval is said at once
// (assertive), and the focus moves to its Approve button. What was there when the chat opened is
// not announced.
import { Entry, ViewState } from '../protocol/view';
import { byId } from './dom';

export interface Announcer {
  polite: HTMLElement;
  assertive: HTMLElement;
  /** the turns seen running, the approvals seen pending; null before the first rendering */
  running: Set<string> | null;
  asked: Set<string>;
}

/** At most this much of a reply is read out; the rest is in the log. */
const MAX_READ = 2000;

export function mount(): Announcer {
  return { polite: byId('announce'), assertive: byId('announce-alert'), running: null, asked: new Set() };
}

export function render(a: Announcer, view: ViewState) {
  const pending = view.entries.filter((e): e is Extract<Entry, { type: 'approval' }> => e.type === 'approval' && e.status === 'pending');
  if (a.running === null) {
    a.running = new Set(view.running);
    for (const e of pending) a.asked.add(e.id);
    return;
  }
  for (const turnId of view.running) {
    if (a.running.has(turnId)) continue;
    a.running.add(turnId);
    say(a.polite, `${view.turns[turnId]?.agent ?? 'Modus'} is responding…`);
  }
  for (const turnId of [...a.running]) {
    if (view.running.includes(turnId)) continue;
    a.running.delete(turnId);
    say(a.polite, finished(view, turnId));
  }
  for (const e of pending) {
    if (a.asked.has(e.id)) continue;
    a.asked.add(e.id);
    say(a.assertive, `Approval needed: ${e.request.title}`);
    document.querySelector<HTMLElement>(`[data-entry="${CSS.escape(e.id)}"] button.approve`)?.focus();
  }
}

/** What a turn that ended left to read: its last reply, or how it ended. */
function finished(view: ViewState, turnId: string): string {
  const agent = view.turns[turnId]?.agent ?? 'Modus';
  let reply: string | undefined;
  let outcome: string | undefined;
  for (const e of view.entries) {
    if (!('turnId' in e) || e.turnId !== turnId) continue;
    if (e.type === 'assistant' && e.text.trim()) reply = e.text;
    if (e.type === 'turn') outcome = e.outcome;
  }
  if (outcome === 'failed') return `${agent}: the turn failed.`;
  if (outcome === 'cancelled') return `${agent}: the turn was cancelled.`;
  if (outcome === 'awaiting_user') return `${agent} is waiting for your answer${reply ? `: ${cut(reply)}` : '.'}`;
  return reply ? `${agent}: ${cut(reply)}` : `${agent} is done.`;
}

function cut(text: string): string {
  return text.length > MAX_READ ? `${text.slice(0, MAX_READ)}…` : text;
}

/** Said anew even when the words are the same as the last ones. */
function say(region: HTMLElement, text: string) {
  region.textContent = '';
  region.textContent = text;
}
