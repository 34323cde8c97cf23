// The chat webview: renders the view state, posts what the user does. Every text is set with
// textContent (never innerHTML); no inline handlers (the CSP allows only this nonce'd script).
import type { CheckpointInfo } from '../protocol/generated';
import {
  Action,
  Entry,
  gatedApprovals,
  initialView,
  layout,
  modeName,
  planApprovals,
  reduce,
  restoreNote,
  splitFeedback,
  TurnBlock,
  ViewState,
} from '../protocol/view';
import * as context from './context';
import * as conversations from './conversations';
import { button, byId, el, Host, place } from './dom';
import * as header from './header';
import * as mcp from './mcp';
import { Candidate, candidates, insertMention, mentionAt, MentionToken } from './mentions';
import type { FromWebview, ToWebview } from './messages';
import * as plan from './plan';
import { planDocument } from './plan';
import * as server from './server';
import * as todos from './todos';
import * as usage from './usage';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

const vscode = acquireVsCodeApi();
const post = (m: FromWebview) => vscode.postMessage(m);

const log = byId<HTMLElement>('log');
const composer = byId<HTMLFormElement>('composer');
const input = byId<HTMLTextAreaElement>('input');
const mentionList = byId<HTMLElement>('mentions');

let view: ViewState = initialView();
/** rendered entries: id -> (signature of the entry it shows, element) */
const rendered = new Map<string, { sig: string; el: HTMLElement }>();
/** rendered turn blocks: key -> (signature of the header, block, the element its entries go in) */
const blocks = new Map<string, { sig: string; el: HTMLElement; body: HTMLElement }>();

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
};

/** A unified diff (or any text) with added/removed lines tinted. */
function diffBlock(text: string): HTMLElement {
  const pre = el('pre', 'diff');
  for (const line of text.split('\n')) {
    let cls = '';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'file';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    else if (line.startsWith('@@')) cls = 'hunk';
    pre.appendChild(el('span', cls, line + '\n'));
  }
  return pre;
}

/** The parameter that says most about a tool call, shown next to its name. */
function paramSummary(params: Record<string, unknown>): string {
  for (const key of ['path', 'mode_slug', 'mode', 'command', 'regex', 'question', 'result', 'to']) {
    const v = params[key];
    if (typeof v === 'string' && v) return v.length > 120 ? v.slice(0, 117) + '…' : v;
  }
  return '';
}

const STATUS_LABEL: Record<string, string> = {
  pending: 'pending',
  running: 'running',
  completed: 'done',
  failed: 'failed',
  undone: 'undone',
};

function renderEntry(e: Entry): HTMLElement {
  switch (e.type) {
    case 'user':
      return el('div', 'msg user', undefined, el('div', 'who', 'You'), el('div', 'text', e.text));
    case 'assistant':
      // in a turn's block the block names the agent
      return el(
        'div',
        'msg assistant' + (e.streaming ? ' streaming' : ''),
        undefined,
        e.turnId ? null : el('div', 'who', e.agent ?? 'Modus'),
        el('div', 'text', e.text),
      );
    case 'thinking':
      return el('details', 'msg thinking', undefined, el('summary', undefined, 'Thinking'), el('div', 'text', e.text));
    case 'system':
      // mentions the server did not deliver: a line of the turn, not an alarm (the history lists
      // them; a live message is known by its words)
      if (e.mentionsRefused ? e.mentionsRefused.length > 0 : e.text.startsWith(REFUSED_MENTIONS)) return el('div', 'msg system mentions-refused', undefined, el('div', 'text', e.text));
      return el('div', 'msg system', undefined, el('div', 'text', e.text));
    case 'error':
      return el('div', 'msg client-error', undefined, el('div', 'text', e.text));
    case 'turn':
      return el('div', 'note turn-' + e.outcome, turnNote(e.agent, e.outcome));
    case 'mode': {
      const text = `Mode: ${modeName(view, e.from)} → ${modeName(view, e.to)}` + (e.by === 'user' ? ' (by you)' : '');
      return el('div', 'note mode-change', text, e.reason ? el('span', 'reason', ` — ${e.reason}`) : null);
    }
    case 'phase':
      return el('div', 'note', `Phase: ${e.from.toUpperCase()} → ${e.to.toUpperCase()}`);
    case 'tool':
      return renderTool(e);
    case 'approval':
      return renderApproval(e);
    case 'restore':
      return renderRestore(e);
  }
}

/** A restore's muted note: what came back, and Undo restore (the files as they were before it). */
function renderRestore(e: Extract<Entry, { type: 'restore' }>): HTMLElement {
  const note = el('div', 'note restore-note', restoreNote(e));
  note.setAttribute('role', 'status');
  if (e.undo && !e.undone) {
    // not while a turn runs (the server refuses it) or a restore is under way
    const blocked = () => view.running.length > 0 || view.restoring !== null;
    const undo = note.appendChild(button('Undo restore', 'link undo-restore', () => {
      if (!blocked()) post({ type: 'undoRestore', entryId: e.id, checkpointId: e.undo! });
    }));
    undo.title = view.running.length > 0 ? 'Undo once the turn has ended' : 'Put the files back as they were just before this restore';
    if (blocked()) undo.setAttribute('aria-disabled', 'true');
  }
  return note;
}

/** How the server's system message about refused mentions begins. */
const REFUSED_MENTIONS = 'Mentions not delivered:';

/** A turn's block: the agent's name and who woke it, then what the turn showed (placed by render). */
function renderTurn(b: TurnBlock): { sig: string; el: HTMLElement; body: HTMLElement } {
  const sig = JSON.stringify([b.agent, b.wokenBy ?? null]);
  let r = blocks.get(b.key);
  if (!r) {
    const body = el('div', 'turn-body');
    r = { sig: '', el: el('div', 'turn', undefined, el('div', 'turn-head'), body), body };
    r.el.dataset.turn = b.turnId;
    r.el.setAttribute('role', 'group');
    blocks.set(b.key, r);
  }
  if (r.sig !== sig) {
    r.sig = sig;
    r.el.dataset.agent = b.agent;
    r.el.setAttribute('aria-label', b.wokenBy ? `${b.agent}, woken by ${b.wokenBy}` : b.agent);
    r.el.querySelector('.turn-head')!.replaceChildren(
      el('span', 'turn-agent', b.agent),
      ...(b.wokenBy ? [el('span', 'woken-by', `woken by ${b.wokenBy}`)] : []),
    );
  }
  return r;
}

function turnNote(agent: string, outcome: string): string {
  if (outcome === 'cancelled') return `${agent}: turn cancelled`;
  if (outcome === 'failed') return `${agent}: turn failed`;
  if (outcome === 'awaiting_user') return `${agent} is waiting for your answer`;
  return `${agent}: ${outcome}`;
}

function renderTool(e: Extract<Entry, { type: 'tool' }>): HTMLElement {
  const card = el('div', `card tool status-${e.status}` + (e.error ? ' has-error' : ''));
  card.dataset.tool = e.name;
  const head = el(
    'div',
    'head',
    undefined,
    el('span', 'tool-name', e.name),
    el('span', 'tool-arg', paramSummary(e.params)),
    el('span', `status ${e.status}`, STATUS_LABEL[e.status] ?? e.status),
  );
  card.appendChild(head);
  // the approval that gates this call goes here (see render)
  card.appendChild(el('div', 'approvals'));
  const completion = e.name === 'attempt_completion' ? e.params.result : undefined;
  if (typeof completion === 'string' && completion) {
    card.classList.add('completion');
    head.querySelector('.tool-arg')!.textContent = '';
    card.appendChild(el('div', 'completion-text', completion));
  }
  if (e.error) {
    const { text, feedback } = splitFeedback(e.error.message);
    card.appendChild(
      el(
        'div',
        'error',
        undefined,
        el('div', 'error-type', e.error.type),
        el('div', 'error-message', text),
        feedback ? el('div', 'error-feedback', `Feedback: ${feedback}`) : null,
      ),
    );
  }
  if (e.result) {
    const details = el('details', 'result', undefined, el('summary', undefined, 'Result'), el('pre', undefined, e.result));
    card.appendChild(details);
  }
  if (e.status === 'undone') card.appendChild(el('div', 'undone-note', 'The conversation was restored to just before this call: the agent no longer knows it.'));
  const checkpoint = checkpointOf(e);
  if (checkpoint) card.appendChild(checkpointBar(e, checkpoint));
  return card;
}

/** The checkpoint taken just before the card's call, if the server took one. */
function checkpointOf(e: Extract<Entry, { type: 'tool' }>): CheckpointInfo | undefined {
  return view.checkpoints[e.id.slice('tool:'.length)];
}

/** The cards whose restore choices are open (`choose`) or that ask to confirm a restore of the conversation. */
const restoreAsks = new Map<string, 'choose' | 'confirm'>();
/** After a card is drawn again: the element of it to focus (a choice opened, a step back). */
let focusAfter: { entry: string; selector: string } | null = null;

/**
 * Below a checkpointed call: Show diff (the files then against now, in VS Code's diff editor) and
 * Restore, which offers the files, or the files and the conversation (asked again: that cuts the
 * messages after the call out of the chat). Not while a turn runs: the server refuses then.
 */
function checkpointBar(e: Extract<Entry, { type: 'tool' }>, checkpoint: CheckpointInfo): HTMLElement {
  const bar = el('div', 'checkpoint');
  const ask = restoreAsks.get(e.id);
  const busy = view.restoring === checkpoint.id;
  const blocked = view.running.length > 0 || view.restoring !== null;
  const choicesId = `restore-${e.id}`;
  const setAsk = (next: 'choose' | 'confirm' | null, focus: string) => {
    if (next) restoreAsks.set(e.id, next);
    else restoreAsks.delete(e.id);
    focusAfter = { entry: e.id, selector: focus };
    render();
  };
  const diff = button('Show diff', 'link show-diff', () => post({ type: 'showDiff', checkpointId: checkpoint.id, tool: e.name }));
  diff.title = 'Compare the files as they were just before this call with the files now';
  const restore = button(busy ? 'Restoring…' : 'Restore', 'secondary small restore', () => {
    if (!blocked) setAsk(ask ? null : 'choose', ask ? 'button.restore' : 'button.restore-files');
  });
  restore.setAttribute('aria-expanded', String(ask !== undefined));
  restore.setAttribute('aria-controls', choicesId);
  restore.title = busy
    ? 'Restoring…'
    : view.running.length > 0
      ? 'Restore once the turn has ended'
      : view.restoring !== null
        ? 'Another restore is under way'
        : 'Restore what was there just before this call';
  if (blocked) restore.setAttribute('aria-disabled', 'true');
  bar.appendChild(el('div', 'checkpoint-actions', undefined, diff, restore));
  if (!ask || blocked) return bar;

  const choices = el('div', 'restore-choices');
  choices.id = choicesId;
  choices.setAttribute('role', 'group');
  choices.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape') return;
    ev.preventDefault();
    setAsk(null, 'button.restore');
  });
  const restoreTo = (what: 'files' | 'both') => {
    restoreAsks.delete(e.id);
    focusAfter = { entry: e.id, selector: 'button.restore' }; // once the card shows the restore under way
    post({ type: 'restore', checkpointId: checkpoint.id, what });
  };
  const cancel = button('Cancel', 'secondary small restore-cancel', () => setAsk(null, 'button.restore'));
  if (ask === 'choose') {
    choices.setAttribute('aria-label', 'Restore to just before this call');
    const files = button('Files', 'secondary small restore-files', () => restoreTo('files'));
    files.setAttribute('aria-label', 'Restore files');
    files.title = 'The files as they were just before this call; the chat stays as it is';
    const both = button('Files and conversation…', 'secondary small restore-both', () => setAsk('confirm', 'button.restore-confirm'));
    both.setAttribute('aria-label', 'Restore files and conversation…');
    both.title = 'The files, and the conversation cut back to just before this call';
    choices.append(el('span', 'restore-label', 'Restore to just before this call:'), files, both, cancel);
  } else {
    choices.setAttribute('aria-label', 'Restore files and conversation?');
    const confirm = button('Restore files and conversation', 'small restore-confirm', () => restoreTo('both'));
    choices.append(
      el('div', 'restore-warning', 'The messages after this call leave the chat and the agent forgets them (the server keeps them). The files go back too.'),
      el('div', 'buttons', undefined, confirm, cancel),
    );
  }
  bar.appendChild(choices);
  return bar;
}

function renderApproval(e: Extract<Entry, { type: 'approval' }>): HTMLElement {
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
    card.appendChild(plan ? planDocument(r.detail, e.status === 'pending') : diffBlock(r.detail));
  }
  // "Always allow" writes this rule to the workspace's settings: shown while it may be chosen, and once it was
  const rule = r.alwaysAllow && (e.status === 'pending' || e.always) ? alwaysRule(e.id, r.alwaysAllow) : null;
  if (e.status !== 'pending') {
    const denied = plan ? 'Rejected' : 'Denied';
    const approved = e.always ? 'Always allowed' : 'Approved';
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
    post({ type: 'approval', id: e.id, decision, ...(text ? { feedback: text } : {}), ...(always ? { always: true } : {}) });
  };
  const buttons = el('div', 'buttons');
  buttons.appendChild(button('Approve', 'approve', () => answer('approve')));
  if (rule) {
    const always = buttons.appendChild(button('Always allow', 'always secondary', () => answer('approve', true)));
    always.setAttribute('aria-describedby', rule.id);
  }
  buttons.appendChild(button(plan ? 'Reject' : 'Deny', 'deny secondary', () => answer('deny')));
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
  const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  const keep = new Set<string>();
  const keepBlocks = new Set<string>();
  const gated = gatedApprovals(view);
  const inside = new Set<Entry>([...[...gated.values()].flat(), ...asked]);
  /** the entry's element, rendered again when the entry changed */
  const entryElement = (e: Entry): HTMLElement => {
    keep.add(e.id);
    // mode names inside an entry depend on the mode list
    const sig = JSON.stringify(e) + (e.type === 'mode' || e.type === 'approval' ? modes : '') + entryContext(e);
    let r = rendered.get(e.id);
    if (!r || r.sig !== sig) {
      const node = renderEntry(e);
      node.dataset.entry = e.id;
      if (r) r.el.replaceWith(node);
      r = { sig, el: node };
      rendered.set(e.id, r);
    }
    return r.el;
  };
  // the entries in the order of the layout: a turn's entries in its block
  let prev: Element | null = null;
  for (const item of layout(view)) {
    if (item.type === 'entry') {
      const node = entryElement(item.entry);
      if (!inside.has(item.entry)) prev = place(log, node, prev);
      continue;
    }
    keepBlocks.add(item.key);
    const block = renderTurn(item);
    prev = place(log, block.el, prev);
    let inner: Element | null = null;
    for (const e of item.entries) {
      const node = entryElement(e);
      if (!inside.has(e)) inner = place(block.body, node, inner);
    }
  }
  // An approval sits in the card of the call it gates; its element (and the feedback typed
  // into it) outlives a new rendering of the card.
  for (const [toolId, approvals] of gated) {
    const slot = rendered.get(toolId)!.el.querySelector('.approvals')!;
    approvals.forEach((a, i) => {
      const node = rendered.get(a.id)!.el;
      if (slot.children[i] !== node) slot.insertBefore(node, slot.children[i] ?? null);
    });
  }
  // The approvals about the plan sit in its card while they are asked.
  const planSlot = plan.approvalsSlot(panels.plan);
  asked.forEach((a, i) => {
    const node = rendered.get(a.id)!.el;
    if (planSlot && planSlot.children[i] !== node) planSlot.insertBefore(node, planSlot.children[i] ?? null);
  });
  for (const [id, r] of rendered) {
    if (!keep.has(id)) {
      r.el.remove();
      rendered.delete(id);
    }
  }
  for (const [key, b] of blocks) {
    if (!keepBlocks.has(key)) {
      b.el.remove();
      blocks.delete(key);
    }
  }
  if (view.entries.length === 0 && !log.querySelector('.empty')) {
    log.appendChild(el('div', 'empty', 'Ask Modus to do something. The current mode decides which tools it may use.'));
  } else if (view.entries.length) {
    log.querySelector('.empty')?.remove();
  }
  if (focusAfter) {
    rendered.get(focusAfter.entry)?.el.querySelector<HTMLElement>(focusAfter.selector)?.focus();
    focusAfter = null;
  }
  if (nearBottom) log.scrollTop = log.scrollHeight;
}

/** What an entry's element shows besides the entry: a card's checkpoint and restore state, a note's Undo. */
function entryContext(e: Entry): string {
  if (e.type === 'tool') {
    const checkpoint = checkpointOf(e);
    return checkpoint ? JSON.stringify([checkpoint.id, view.running.length > 0, view.restoring, restoreAsks.get(e.id) ?? null]) : '';
  }
  return e.type === 'restore' ? JSON.stringify([view.restoring, view.running.length > 0]) : '';
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
