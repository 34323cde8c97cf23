// The chat webview: renders the view state, posts what the user does. Every text is set with
// textContent (never innerHTML); no inline handlers (the CSP allows only this nonce'd script).
import { Action, initialView, modeName, planApprovals, reduce, ViewState } from '../protocol/view';
import * as context from './context';
import * as conversations from './conversations';
import { byId, el, Host } from './dom';
import * as header from './header';
import * as log from './log';
import * as mcp from './mcp';
import { Candidate, candidates, insertMention, mentionAt, MentionToken } from './mentions';
import type { FromWebview, ToWebview } from './messages';
import * as plan from './plan';
import * as server from './server';
import * as todos from './todos';
import * as usage from './usage';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

const vscode = acquireVsCodeApi();
const post = (m: FromWebview) => vscode.postMessage(m);

const composer = byId<HTMLFormElement>('composer');
const input = byId<HTMLTextAreaElement>('input');
const mentionList = byId<HTMLElement>('mentions');

let view: ViewState = initialView();

const host: Host = { post, render: () => render() };
const panels = {
  header: header.mount(host, view),
  usage: usage.mount(),
  context: context.mount(host, view),
  conversations: conversations.mount({ ...host, dispatch: (action: Action) => (view = reduce(view, action)) }),
  plan: plan.mount(),
  todos: todos.mount(),
  mcp: mcp.mount(view),
  server: server.mount(host),
  log: log.mount(),
};

function render() {
  updateCompletion(); // the agents may have come, the server may have stopped
  const asked = planApprovals(view);
  const modes = header.modesSig(view);
  header.render(panels.header, view, modes);
  usage.render(panels.usage, view, modes);
  context.render(panels.context, view);
  plan.render(panels.plan, view, host, asked);
  todos.render(panels.todos, view);
  mcp.render(panels.mcp, view, host);
  conversations.render(panels.conversations, view, host, modes);
  server.render(panels.server, view);
  log.render(panels.log, view, host, asked, plan.approvalsSlot(panels.plan), modes);
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  if (!m || typeof m !== 'object') return;
  if (m.type === 'snapshot') view = m.view;
  else if (m.type === 'action') view = reduce(view, m.action as Action);
  else return;
  mcp.received(panels.mcp, m);
  render();
});

// ------------------------------------------------------------------ @-completion

/** The completion while it is open: the token it completes, its rows, the active row. */
let completion: { token: MentionToken; items: Candidate[]; active: number } | null = null;
/** Where the `@` is whose completion Escape closed: it stays closed while the caret is in that token. */
let dismissed: number | null = null;
/** Whether the agents were asked for (on focus, or when first needed) */
let agentsAsked = false;

function askAgents() {
  if (view.server.status !== 'running') return;
  agentsAsked = true;
  post({ type: 'listAgents' });
}

/** Opens, filters or closes the completion from the text before the caret. */
function updateCompletion() {
  const caret = input.selectionStart;
  const typing = document.activeElement === input && caret === input.selectionEnd && view.server.status === 'running';
  const token = typing ? mentionAt(input.value, caret) : null;
  if (token?.start !== dismissed) dismissed = null;
  if (!token || dismissed !== null) return showCompletion(null);
  if (!view.agents) {
    // asked for on focus; not there yet, or the server was not running then
    if (!agentsAsked) askAgents();
    return showCompletion(null);
  }
  const items = candidates(view.agents, token.query, (slug) => modeName(view, slug));
  if (items.length === 0) return showCompletion(null);
  const activeName = completion?.items[completion.active]?.name;
  showCompletion({ token, items, active: Math.max(0, items.findIndex((c) => c.name === activeName)) });
}

function showCompletion(next: typeof completion) {
  completion = next;
  renderCompletion();
}

function renderCompletion() {
  const c = completion;
  // rows stay while they show the same (a click must find the row it pressed)
  const sig = c ? JSON.stringify([c.items, c.active]) : '';
  if (mentionList.dataset.sig === sig) return;
  mentionList.dataset.sig = sig;
  mentionList.hidden = !c;
  if (!c) {
    input.removeAttribute('aria-activedescendant');
    mentionList.replaceChildren();
    return;
  }
  mentionList.replaceChildren(
    ...c.items.map((item, i) => {
      const row = el(
        'div',
        'mention' + (i === c.active ? ' active' : ''),
        undefined,
        el('span', 'mention-name', item.name),
        el('span', `mention-kind ${item.kind}`, item.kind),
        el('span', 'mention-detail', item.detail),
      );
      row.id = `mention-${i}`;
      row.setAttribute('role', 'option');
      row.setAttribute('aria-selected', String(i === c.active));
      const what = item.kind === 'member' ? 'member' : `${item.kind} agent, mode`;
      row.setAttribute('aria-label', `${item.name}, ${what} ${item.detail}`);
      row.addEventListener('mousedown', (ev) => ev.preventDefault()); // the focus stays in the composer
      row.addEventListener('click', () => pickMention(i));
      return row;
    }),
  );
  input.setAttribute('aria-activedescendant', `mention-${c.active}`);
  mentionList.children[c.active]?.scrollIntoView({ block: 'nearest' });
}

/** The keys of the open completion; false for a key it leaves to the composer. */
function completionKey(ev: KeyboardEvent): boolean {
  const c = completion!;
  const n = c.items.length;
  if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    showCompletion({ ...c, active: (c.active + (ev.key === 'ArrowDown' ? 1 : n - 1)) % n });
    return true;
  }
  if ((ev.key === 'Enter' || ev.key === 'Tab') && !ev.shiftKey) {
    pickMention(c.active);
    return true;
  }
  if (ev.key === 'Escape') {
    dismissed = c.token.start;
    showCompletion(null);
    return true;
  }
  return false;
}

/** Puts `@name ` in place of the token typed, the caret after it. */
function pickMention(i: number) {
  const c = completion;
  if (!c) return;
  const { text, caret } = insertMention(input.value, c.token, c.items[i].name);
  input.value = text;
  input.focus();
  input.setSelectionRange(caret, caret);
  showCompletion(null);
}

function send() {
  const text = input.value.trim();
  if (!text || view.server.status !== 'running') return;
  post({ type: 'send', text });
  input.value = '';
}

composer.addEventListener('submit', (ev) => {
  ev.preventDefault();
  send();
});
input.addEventListener('keydown', (ev) => {
  if (ev.isComposing) return;
  if (completion && completionKey(ev)) {
    ev.preventDefault();
    ev.stopPropagation();
    return;
  }
  if (ev.key === 'Enter' && !ev.shiftKey) {
    ev.preventDefault();
    send();
  }
});
// the @-completion follows the text and the caret; the agents are asked for afresh on focus
input.addEventListener('input', updateCompletion);
input.addEventListener('click', updateCompletion);
input.addEventListener('keyup', (ev) => {
  if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(ev.key)) updateCompletion();
});
input.addEventListener('focus', () => {
  askAgents();
  updateCompletion();
});
input.addEventListener('blur', () => showCompletion(null));
render();
post({ type: 'ready' });
