// A tool call's card: its name and main parameter, status, result, error (with the user's
// feedback), and below a checkpointed call Show diff and Restore with its choices.
import type { CheckpointInfo } from '../protocol/generated';
import { Entry, Screenshot, splitFeedback, ViewState } from '../protocol/view';
import { button, el, Host } from './dom';
import { storedImage, thumbnails } from './images';
import { linkPaths, pathLink } from './links';
import { renderMarkdown } from './render';

type ToolEntry = Extract<Entry, { type: 'tool' }>;

/** The cards whose restore choices are open, and the element to focus once a card is drawn again. */
export interface Restores {
  /** the cards whose restore choices are open (`choose`) or that ask to confirm a restore of the conversation */
  asks: Map<string, 'choose' | 'confirm'>;
  /** after a card is drawn again: the element of it to focus (a choice opened, a step back) */
  focusAfter: { entry: string; selector: string } | null;
  /** the user message being edited (Edit & resend), by entry id */
  editing: string | null;
}

/** A unified diff (or any text) with added/removed lines tinted. */
export function diffBlock(text: string): HTMLElement {
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

/** The parameter that says most about a tool call, shown next to its name: its key and text. */
function paramSummary(params: Record<string, unknown>, tool?: string): { key: string; text: string } | null {
  if (tool === 'browser_action') {
    // the action, and where: `launch http://…`, `click 450,300`, `resize 640x480`
    const where = ['url', 'coordinate', 'size'].map((k) => params[k]).find((v) => typeof v === 'string' && v);
    const text = [params.action, where].filter((v) => typeof v === 'string' && v).join(' ');
    return text ? { key: 'action', text: text.length > 120 ? text.slice(0, 117) + '…' : text } : null;
  }
  for (const key of ['path', 'mode_slug', 'mode', 'command', 'regex', 'question', 'result', 'to']) {
    const v = params[key];
    if (typeof v === 'string' && v) return { key, text: v.length > 120 ? v.slice(0, 117) + '…' : v };
  }
  return null;
}

/** Longest result whose paths become links (beyond it, the result is plain text). */
const MAX_LINKED_RESULT = 50_000;

const STATUS_LABEL: Record<string, string> = {
  pending: 'pending',
  running: 'running',
  completed: 'done',
  failed: 'failed',
  undone: 'undone',
};

export function renderTool(e: ToolEntry, view: ViewState, host: Host, restores: Restores): HTMLElement {
  const card = el('div', `card tool status-${e.status}` + (e.error ? ' has-error' : ''));
  card.dataset.tool = e.name;
  const completion = e.name === 'attempt_completion' ? e.params.result : undefined;
  const shown = typeof completion === 'string' && completion ? null : paramSummary(e.params, e.name);
  // the call's file is a link into the editor (once the extension knows it for a workspace file)
  const arg = el('span', 'tool-arg');
  if (shown?.key === 'path' && shown.text === e.params.path) arg.append(...pathLink({ path: shown.text }, [document.createTextNode(shown.text)], host, true));
  else arg.textContent = shown?.text ?? '';
  const head = el('div', 'head', undefined, el('span', 'tool-name', e.name), arg, el('span', `status ${e.status}`, STATUS_LABEL[e.status] ?? e.status));
  card.appendChild(head);
  // the approval that gates this call goes here (see the log)
  card.appendChild(el('div', 'approvals'));
  if (typeof completion === 'string' && completion) {
    card.classList.add('completion');
    card.appendChild(renderMarkdown(completion, { host, final: true }, 'completion-text'));
  }
  if (e.error) {
    const { text, feedback } = splitFeedback(e.error.message);
    card.appendChild(
      el(
        'div',
        'error',
        undefined,
        el('div', 'error-type', e.error.type),
        el('div', 'error-message', undefined, ...linkPaths(text, host, true)),
        feedback ? el('div', 'error-feedback', `Feedback: ${feedback}`) : null,
      ),
    );
  }
  if (e.screenshot) card.appendChild(screenshotFigure(e.screenshot, host));
  const images = thumbnails(e.images, host);
  if (images) card.appendChild(images);
  if (e.result) {
    const pre = el('pre');
    if (e.result.length <= MAX_LINKED_RESULT) pre.append(...linkPaths(e.result, host, true));
    else pre.textContent = e.result;
    const details = el('details', 'result', undefined, el('summary', undefined, 'Result'), pre);
    card.appendChild(details);
  }
  if (e.status === 'undone') card.appendChild(el('div', 'undone-note', 'The conversation was restored to just before this call: the agent no longer knows it.'));
  const checkpoint = checkpointOf(view, e);
  if (checkpoint) card.appendChild(checkpointBar(e, checkpoint, view, host, restores));
  return card;
}

/** A browser_action's screenshot: the page as the action left it, its title and address below. */
function screenshotFigure(shot: Screenshot, host: Host): HTMLElement {
  const what = shot.title || shot.url || 'the page';
  const img = storedImage(shot.id, `Screenshot of ${what}`, 'browser-screenshot', host);
  if (shot.width && shot.height) {
    img.width = shot.width; // its place is kept while the bytes come (CSS scales it to the card)
    img.height = shot.height;
  }
  const caption = shot.url ? el('figcaption', undefined, undefined, el('span', 'page-title', shot.title ?? ''), el('span', 'page-url', shot.url)) : null;
  return el('figure', 'screenshot', undefined, img, caption);
}

/** The checkpoint taken just before the card's call, if the server took one. */
export function checkpointOf(view: ViewState, e: ToolEntry): CheckpointInfo | undefined {
  return view.checkpoints[e.id.slice('tool:'.length)];
}

/**
 * Below a checkpointed call: Show diff (the files then against now, in VS Code's diff editor) and
 * Restore, which offers the files, or the files and the conversation (asked again: that cuts the
 * messages after the call out of the chat). Not while a turn runs: the server refuses then.
 */
function checkpointBar(e: ToolEntry, checkpoint: CheckpointInfo, view: ViewState, host: Host, restores: Restores): HTMLElement {
  const bar = el('div', 'checkpoint');
  const ask = restores.asks.get(e.id);
  const busy = view.restoring === checkpoint.id;
  const blocked = view.running.length > 0 || view.restoring !== null;
  const choicesId = `restore-${e.id}`;
  const setAsk = (next: 'choose' | 'confirm' | null, focus: string) => {
    if (next) restores.asks.set(e.id, next);
    else restores.asks.delete(e.id);
    restores.focusAfter = { entry: e.id, selector: focus };
    host.render();
  };
  const diff = button('Show diff', 'link show-diff', () => host.post({ type: 'showDiff', checkpointId: checkpoint.id, tool: e.name }));
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
    restores.asks.delete(e.id);
    restores.focusAfter = { entry: e.id, selector: 'button.restore' }; // once the card shows the restore under way
    host.post({ type: 'restore', checkpointId: checkpoint.id, what });
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
