// The earlier conversations: History opens their list in place of the log (asking the extension
// for it afresh), a click opens one, Escape or History again closes it.
import type { ConversationSummary } from '../protocol/generated';
import { Action, modeName, ViewState } from '../protocol/view';
import { button, byId, el, Host } from './dom';

/** What the list needs of the chat besides posting and rendering: to reduce an action into the view (rendered at the next render). */
export interface ListHost extends Host {
  dispatch(action: Action): void;
}

export interface Conversations {
  history: HTMLButtonElement;
  box: HTMLElement;
  /** whether the list is shown (in place of the log) */
  open: boolean;
  /** opens the list (asking the extension for it afresh) or closes it */
  show(open: boolean): void;
}

export function mount(host: ListHost): Conversations {
  const c: Conversations = {
    history: byId<HTMLButtonElement>('history'),
    box: byId<HTMLElement>('conversations'),
    open: false,
    show(open: boolean) {
      c.open = open;
      if (open) {
        host.dispatch({ type: 'conversations', conversations: null });
        host.post({ type: 'listConversations' });
      }
      host.render();
      if (!open) c.history.focus();
    },
  };
  c.history.addEventListener('click', () => c.show(!c.open));
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && c.open) {
      ev.preventDefault();
      c.show(false);
    }
  });
  return c;
}

/** "5 min ago", "3 h ago", "yesterday", else the date. */
function ago(iso: string, now = Date.now()): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  const minutes = Math.floor((now - time) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  if (days < 2) return 'yesterday';
  if (days < 7) return `${days} days ago`;
  return new Date(time).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

function conversationItem(c: Conversations, view: ViewState, host: Host, s: ConversationSummary): HTMLElement {
  const current = s.id === view.conversationId;
  const meta = [
    s.mode ? modeName(view, s.mode) : '',
    ago(s.updatedAt),
    s.messages === 1 ? '1 message' : `${s.messages} messages`,
    current ? 'current' : '',
  ];
  const item = button('', 'conversation' + (current ? ' current' : ''), () => {
    if (!current) host.post({ type: 'openConversation', conversationId: s.id });
    c.show(false);
  });
  item.append(el('span', 'conversation-title', s.title || 'Untitled'), el('span', 'conversation-meta', meta.filter(Boolean).join(' · ')));
  if (current) item.setAttribute('aria-current', 'true');
  return item;
}

/** `modes`: the mode list's signature (an item names its mode). */
export function render(c: Conversations, view: ViewState, host: Host, modes: string) {
  const { history, box, open } = c;
  history.setAttribute('aria-expanded', String(open));
  history.classList.toggle('active', open);
  box.hidden = !open;
  const list = view.conversations;
  const sig = JSON.stringify([open, list, view.conversationId, modes]);
  if (!open || box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  if (list === null) box.replaceChildren(el('div', 'empty', 'Loading…'));
  else if (list.length === 0) box.replaceChildren(el('div', 'empty', 'No earlier conversations.'));
  else box.replaceChildren(...list.map((s) => conversationItem(c, view, host, s)));
}
