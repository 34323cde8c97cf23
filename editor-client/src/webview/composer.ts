// The composer: Enter sends (Shift+Enter a new line), and an @-completion of the agents and
// members (see mentions.ts) follows the text and the caret, asking the extension for them on focus.
import { modeName, ViewState } from '../protocol/view';
import { byId, el, Host } from './dom';
import { Candidate, candidates, insertMention, mentionAt, MentionToken } from './mentions';

export interface Composer {
  form: HTMLFormElement;
  input: HTMLTextAreaElement;
  list: HTMLElement;
  /** the completion while it is open: the token it completes, its rows, the active row */
  completion: { token: MentionToken; items: Candidate[]; active: number } | null;
  /** where the `@` is whose completion Escape closed: it stays closed while the caret is in that token */
  dismissed: number | null;
  /** whether the agents were asked for (on focus, or when first needed) */
  agentsAsked: boolean;
  /** the view last rendered (whether the server runs, the agents) */
  view: ViewState;
}

export function mount(host: Host, view: ViewState): Composer {
  const c: Composer = {
    form: byId<HTMLFormElement>('composer'),
    input: byId<HTMLTextAreaElement>('input'),
    list: byId<HTMLElement>('mentions'),
    completion: null,
    dismissed: null,
    agentsAsked: false,
    view,
  };
  const { form, input } = c;
  const update = () => updateCompletion(c, host);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    send(c, host);
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.isComposing) return;
    if (c.completion && completionKey(c, ev)) {
      ev.preventDefault();
      ev.stopPropagation();
      return;
    }
    if (ev.key === 'Enter' && !ev.shiftKey) {
      ev.preventDefault();
      send(c, host);
    }
  });
  // the @-completion follows the text and the caret; the agents are asked for afresh on focus
  input.addEventListener('input', update);
  input.addEventListener('click', update);
  input.addEventListener('keyup', (ev) => {
    if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(ev.key)) update();
  });
  input.addEventListener('focus', () => {
    askAgents(c, host);
    update();
  });
  input.addEventListener('blur', () => show(c, null));
  return c;
}

/** A new view: the agents may have come, the server may have stopped. */
export function render(c: Composer, view: ViewState, host: Host) {
  c.view = view;
  updateCompletion(c, host);
}

function askAgents(c: Composer, host: Host) {
  if (c.view.server.status !== 'running') return;
  c.agentsAsked = true;
  host.post({ type: 'listAgents' });
}

/** Opens, filters or closes the completion from the text before the caret. */
function updateCompletion(c: Composer, host: Host) {
  const { input, view } = c;
  const caret = input.selectionStart;
  const typing = document.activeElement === input && caret === input.selectionEnd && view.server.status === 'running';
  const token = typing ? mentionAt(input.value, caret) : null;
  if (token?.start !== c.dismissed) c.dismissed = null;
  if (!token || c.dismissed !== null) return show(c, null);
  if (!view.agents) {
    // asked for on focus; not there yet, or the server was not running then
    if (!c.agentsAsked) askAgents(c, host);
    return show(c, null);
  }
  const items = candidates(view.agents, token.query, (slug) => modeName(view, slug));
  if (items.length === 0) return show(c, null);
  const activeName = c.completion?.items[c.completion.active]?.name;
  show(c, { token, items, active: Math.max(0, items.findIndex((i) => i.name === activeName)) });
}

function show(c: Composer, next: Composer['completion']) {
  c.completion = next;
  const { input, list } = c;
  // rows stay while they show the same (a click must find the row it pressed)
  const sig = next ? JSON.stringify([next.items, next.active]) : '';
  if (list.dataset.sig === sig) return;
  list.dataset.sig = sig;
  list.hidden = !next;
  if (!next) {
    input.removeAttribute('aria-activedescendant');
    list.replaceChildren();
    return;
  }
  list.replaceChildren(
    ...next.items.map((item, i) => {
      const row = el(
        'div',
        'mention' + (i === next.active ? ' active' : ''),
        undefined,
        el('span', 'mention-name', item.name),
        el('span', `mention-kind ${item.kind}`, item.kind),
        el('span', 'mention-detail', item.detail),
      );
      row.id = `mention-${i}`;
      row.setAttribute('role', 'option');
      row.setAttribute('aria-selected', String(i === next.active));
      const what = item.kind === 'member' ? 'member' : `${item.kind} agent, mode`;
      row.setAttribute('aria-label', `${item.name}, ${what} ${item.detail}`);
      row.addEventListener('mousedown', (ev) => ev.preventDefault()); // the focus stays in the composer
      row.addEventListener('click', () => pickMention(c, i));
      return row;
    }),
  );
  input.setAttribute('aria-activedescendant', `mention-${next.active}`);
  list.children[next.active]?.scrollIntoView({ block: 'nearest' });
}

/** The keys of the open completion; false for a key it leaves to the composer. */
function completionKey(c: Composer, ev: KeyboardEvent): boolean {
  const open = c.completion!;
  const n = open.items.length;
  if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    show(c, { ...open, active: (open.active + (ev.key === 'ArrowDown' ? 1 : n - 1)) % n });
    return true;
  }
  if ((ev.key === 'Enter' || ev.key === 'Tab') && !ev.shiftKey) {
    pickMention(c, open.active);
    return true;
  }
  if (ev.key === 'Escape') {
    c.dismissed = open.token.start;
    show(c, null);
    return true;
  }
  return false;
}

/** Puts `@name ` in place of the token typed, the caret after it. */
function pickMention(c: Composer, i: number) {
  const open = c.completion;
  if (!open) return;
  const { input } = c;
  const { text, caret } = insertMention(input.value, open.token, open.items[i].name);
  input.value = text;
  input.focus();
  input.setSelectionRange(caret, caret);
  show(c, null);
}

function send(c: Composer, host: Host) {
  const text = c.input.value.trim();
  if (!text || c.view.server.status !== 'running') return;
  host.post({ type: 'send', text });
  c.input.value = '';
}
