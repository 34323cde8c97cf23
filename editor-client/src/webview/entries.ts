// One log entry's element: a message, a note (turn end, mode or phase change, restore), a tool
// call's card or an approval's card.
import { colleagueOf, Entry, modeName, restoreNote, retryable, ViewState } from '../protocol/view';
import { renderApproval } from './approval';
import { thumbnails } from './images';
import { button, el, Host } from './dom';
import { patchMarkdown, renderMarkdown } from './render';
import { renderTool, Restores } from './tool';

export function renderEntry(e: Entry, view: ViewState, host: Host, restores: Restores): HTMLElement {
  switch (e.type) {
    case 'user':
      return restores.editing === e.id ? renderEditing(e, host, restores) : renderUser(e, view, host, restores);
    case 'assistant':
      // in a turn's block the block names the agent; the text is Markdown, highlighted and its
      // paths asked about once it stops streaming
      return el(
        'div',
        'msg assistant' + (e.streaming ? ' streaming' : ''),
        undefined,
        e.turnId ? null : el('div', 'who', e.agent ?? 'Modus'),
        renderMarkdown(e.text, { host, final: !e.streaming }, 'text'),
        e.streaming ? null : actions(copyButton(e.text, host)),
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
      return renderTurnNote(e, view, host);
    case 'mode': {
      const text = `Mode: ${modeName(view, e.from)} → ${modeName(view, e.to)}` + (e.by === 'user' ? ' (by you)' : '');
      return el('div', 'note mode-change', text, e.reason ? el('span', 'reason', ` — ${e.reason}`) : null);
    }
    case 'phase':
      return el('div', 'note', `Phase: ${e.from.toUpperCase()} → ${e.to.toUpperCase()}`);
    case 'tool':
      return renderTool(e, view, host, restores);
    case 'approval':
      return renderApproval(e, view, host);
    case 'restore':
      return renderRestore(e, view, host);
  }
}

/**
 * Brings an entry's element from `was` to `now` in place when only a streaming reply's text grew
 * (the common case while a reply streams: a frame's deltas): its Markdown blocks that did not
 * change are kept, the last ones drawn anew; false when it must be drawn anew.
 */
export function patchEntry(node: HTMLElement, was: Entry, now: Entry): boolean {
  if (was.type !== 'assistant' || now.type !== 'assistant' || !was.streaming || !now.streaming) return false;
  if (was.agent !== now.agent || was.turnId !== now.turnId || !now.text.startsWith(was.text)) return false;
  const text = node.querySelector<HTMLElement>('.text');
  return !!text && patchMarkdown(text, now.text);
}

/** A restore's muted note: what came back, and Undo restore (the files as they were before it). */
function renderRestore(e: Extract<Entry, { type: 'restore' }>, view: ViewState, host: Host): HTMLElement {
  const note = el('div', 'note restore-note', restoreNote(e));
  note.setAttribute('role', 'status');
  if (e.undo && !e.undone) {
    // not while a turn runs (the server refuses it) or a restore is under way (the note is drawn
    // again when either changes: see the log's entryContext)
    const blocked = () => view.running.length > 0 || view.restoring !== null;
    const undo = note.appendChild(button('Undo restore', 'link undo-restore', () => {
      if (!blocked()) host.post({ type: 'undoRestore', entryId: e.id, checkpointId: e.undo! });
    }));
    undo.title = view.running.length > 0 ? 'Undo once the turn has ended' : 'Put the files back as they were just before this restore';
    if (blocked()) undo.setAttribute('aria-disabled', 'true');
  }
  return note;
}

/** A message's row of actions, shown on hover and focus. */
function actions(...buttons: (HTMLElement | null)[]): HTMLElement {
  const row = el('div', 'msg-actions', undefined, ...buttons);
  row.setAttribute('role', 'toolbar');
  row.setAttribute('aria-label', 'Message actions');
  return row;
}

function copyButton(text: string, host: Host): HTMLButtonElement {
  const b = button('Copy', 'link copy', () => host.post({ type: 'copy', text }));
  b.title = 'Copy the message';
  return b;
}

/**
 * The user's message: Copy, and Edit & resend (not while a turn runs: the server refuses then).
 * A colleague's message in a team space is labelled with their name and has no Edit (resending
 * it would put words in their mouth and cut what came after for everyone).
 */
function renderUser(e: Extract<Entry, { type: 'user' }>, view: ViewState, host: Host, restores: Restores): HTMLElement {
  const busy = view.running.length > 0; // drawn again when that changes (see the log's entryContext)
  const colleague = colleagueOf(view, e);
  const edit = e.messageId && colleague === null
    ? button('Edit', 'link edit', () => {
        if (busy) return;
        restores.editing = e.id;
        restores.focusAfter = { entry: e.id, selector: 'textarea' };
        host.render();
      })
    : null;
  if (edit) edit.title = busy ? 'Edit once the turn has ended' : 'Edit and send again: what came after this message leaves the conversation';
  if (edit && busy) edit.setAttribute('aria-disabled', 'true');
  const node = el(
    'div',
    colleague === null ? 'msg user' : 'msg user colleague',
    undefined,
    el('div', 'who', colleague ?? 'You'),
    thumbnails(e.images, host),
    e.text ? el('div', 'text', e.text) : null,
    actions(copyButton(e.text, host), edit),
  );
  if (colleague !== null) node.dataset.member = e.member!;
  return node;
}

/**
 * Edit & resend: the message in a box; Resend cuts the conversation back to it (what came after
 * goes) and sends the new text, the files restored too when ticked. Escape or Cancel leaves it.
 */
function renderEditing(e: Extract<Entry, { type: 'user' }>, host: Host, restores: Restores): HTMLElement {
  const box = el('textarea', 'edit-text');
  box.value = e.text;
  box.rows = Math.min(8, e.text.split('\n').length + 1);
  box.setAttribute('aria-label', 'Edit the message');
  const files = el('input');
  files.type = 'checkbox';
  const done = () => {
    restores.editing = null;
    host.render();
  };
  const resend = () => {
    const text = box.value.trim();
    if (!text) return;
    host.post({ type: 'edit', messageId: e.messageId!, text, files: files.checked });
    done();
  };
  box.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') done();
    else if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      resend();
    } else return;
    ev.stopPropagation();
  });
  return el(
    'div',
    'msg user editing',
    undefined,
    el('div', 'who', 'You'),
    box,
    el('label', 'edit-files', undefined, files, el('span', undefined, ' Restore the files too')),
    el('div', 'buttons', undefined, button('Resend', 'resend', resend), button('Cancel', 'secondary', done)),
    el('div', 'edit-note', 'What came after this message leaves the conversation.'),
  );
}

/** How a turn ended, and why; Retry on the last one, when it failed or was cancelled. */
function renderTurnNote(e: Extract<Entry, { type: 'turn' }>, view: ViewState, host: Host): HTMLElement {
  const note = el('div', 'note turn-' + e.outcome, turnNote(e.agent, e.outcome));
  if (e.error && e.error.type !== 'Cancelled') note.appendChild(el('span', 'reason', ` — ${e.error.message}`));
  if (retryable(view) === e.id) note.appendChild(button('Retry', 'link retry', () => host.post({ type: 'retry' })));
  return note;
}

/** How the server's system message about refused mentions begins. */
const REFUSED_MENTIONS = 'Mentions not delivered:';

function turnNote(agent: string, outcome: string): string {
  if (outcome === 'cancelled') return `${agent}: turn cancelled`;
  if (outcome === 'failed') return `${agent}: turn failed`;
  if (outcome === 'interrupted') return `${agent}: turn interrupted (Modus stopped)`;
  if (outcome === 'awaiting_user') return `${agent} is waiting for your answer`;
  return `${agent}: ${outcome}`;
}
