// The messages sent while a turn runs, above the composer until their turn starts: each says it
// is queued and can be taken back (its text returns to the composer).
import type { ViewState } from '../protocol/view';
import { button, byId, el, Host } from './dom';

export interface Queued {
  box: HTMLElement;
  shown: ViewState['queued'] | null;
}

export function mount(): Queued {
  return { box: byId<HTMLElement>('queued'), shown: null };
}

export function render(q: Queued, view: ViewState, host: Host) {
  if (q.shown === view.queued) return;
  q.shown = view.queued;
  q.box.hidden = view.queued.length === 0;
  q.box.replaceChildren(
    ...view.queued.map((m) => {
      const take = button('Take back', 'link unqueue', () => host.post({ type: 'unqueue', messageId: m.messageId }));
      take.title = 'Take the message back before its turn starts: its text returns to the box';
      const row = el('div', 'queued-message', undefined, el('span', 'queued-label', 'Queued'), el('span', 'queued-text', m.text), take);
      row.dataset.message = m.messageId;
      return row;
    }),
  );
}
