// The composer: Enter sends (Shift+Enter a new line), and a completion follows the text and the
// caret: of the agents and members after `@` (see mentions.ts), of the slash commands after a `/`
// that starts the message (see slash.ts), both asked for afresh each time the composer gains
// focus. While the message starts with a command, its argument hint shows above the box.
// The keys of a terminal: Escape cancels the running turn, Up in an empty box (or on a message it
// brought back) brings back the earlier messages, Down the later ones. While a turn runs, Send
// reads Queue: the server keeps the message until the turn ends.
import type { ChatImageResult, CommandInfo } from '../protocol/generated';
import { modeName, ViewState } from '../protocol/view';
import { byId, el, Host } from './dom';
import { Attached, Attachments, IMAGE_TYPES, MAX_IMAGES, mountAttachments, renderAttachments, takeFiles } from './images';
import { Candidate, candidates, insertMention, mentionAt, MentionToken } from './mentions';
import { commandAt, commandCandidates, commandHint, CommandToken, insertCommand, typedCommand } from './slash';

/** The completion while it is open: what it completes, its rows, the active row. */
type Open =
  | { kind: 'mention'; token: MentionToken; items: Candidate[]; active: number }
  | { kind: 'command'; token: CommandToken; items: CommandInfo[]; active: number };

export interface Composer {
  form: HTMLFormElement;
  input: HTMLTextAreaElement;
  list: HTMLElement;
  /** the argument hint of the command the message starts with */
  hint: HTMLElement;
  completion: Open | null;
  /** the token (`kind:start`) whose completion Escape closed: it stays closed while the caret is in it */
  dismissed: string | null;
  /** whether the agents and the commands were asked for (on focus, or when first needed) */
  asked: boolean;
  /** Enter was pressed while the server (re)started: the message goes once it runs */
  held: boolean;
  /** the view last rendered (whether the server runs, the agents, the commands) */
  view: ViewState;
  send: HTMLButtonElement;
  /** the message brought back with Up: its place among the user's messages, newest first, and its text */
  recalled: { index: number; text: string } | null;
  /** the images pasted or dropped, sent with the message */
  attachments: Attachments;
}

export function mount(host: Host, view: ViewState): Composer {
  const c: Composer = {
    form: byId<HTMLFormElement>('composer'),
    input: byId<HTMLTextAreaElement>('input'),
    list: byId<HTMLElement>('mentions'),
    hint: byId<HTMLElement>('command-hint'),
    completion: null,
    dismissed: null,
    asked: false,
    held: false,
    view,
    send: byId<HTMLButtonElement>('send'),
    recalled: null,
    attachments: mountAttachments(),
  };
  const { form, input } = c;
  // the page says read-only until this script runs: a key pressed before would be lost (Enter a new line)
  input.readOnly = false;
  // images pasted into the box or dropped on the composer wait as thumbnails until sent
  input.addEventListener('paste', (ev) => {
    const files = [...(ev.clipboardData?.items ?? [])].filter((i) => i.kind === 'file').map((i) => i.getAsFile());
    if (takeFiles(c.attachments, files.filter((f): f is File => f !== null))) ev.preventDefault();
  });
  form.addEventListener('dragover', (ev) => {
    if ([...(ev.dataTransfer?.items ?? [])].some((i) => i.kind === 'file')) ev.preventDefault();
  });
  form.addEventListener('drop', (ev) => {
    if (takeFiles(c.attachments, ev.dataTransfer?.files ?? [])) ev.preventDefault();
  });
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
    } else if (ev.key === 'Escape' && c.view.running.length > 0) {
      ev.preventDefault();
      host.post({ type: 'cancel' });
    } else if ((ev.key === 'ArrowUp' || ev.key === 'ArrowDown') && !ev.shiftKey && !ev.altKey && recall(c, ev.key === 'ArrowUp' ? 1 : -1)) {
      ev.preventDefault();
    }
  });
  // the completion follows the text and the caret; the agents and commands are asked for afresh on focus
  input.addEventListener('input', update);
  input.addEventListener('click', update);
  input.addEventListener('keyup', (ev) => {
    if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(ev.key)) update();
  });
  input.addEventListener('focus', () => {
    ask(c, host);
    update();
  });
  input.addEventListener('blur', () => show(c, null));
  return c;
}

/** A new view: the agents or commands may have come, the server may have stopped, a turn runs. */
export function render(c: Composer, view: ViewState, host: Host) {
  c.view = view;
  const label = view.running.length > 0 ? 'Queue' : 'Send';
  if (c.send.textContent !== label) {
    c.send.textContent = label;
    c.send.title = label === 'Queue' ? 'A turn is running: the message waits until it ends' : '';
  }
  if (c.held) send(c, host);
  updateCompletion(c, host);
}

/** `modus.ui.focusComposer` */
export function focus(c: Composer) {
  c.input.focus();
}

/** A message taken back from the queue: in the box, before what was typed since; its images with it. */
export function fill(c: Composer, text: string, images: ChatImageResult[] = []) {
  if (images.length) {
    const taken = images
      .filter((i) => IMAGE_TYPES.includes(i.mimeType)) // what the server takes, and no other data URL
      .map((i, n) => ({ ...i, mimeType: i.mimeType as Attached['mimeType'], name: `image ${n + 1} of the message taken back` }));
    c.attachments.items = [...taken, ...c.attachments.items].slice(0, MAX_IMAGES);
    renderAttachments(c.attachments);
  }
  c.input.value = c.input.value ? `${text}\n${c.input.value}` : text;
  c.input.focus();
  c.input.setSelectionRange(text.length, text.length);
  showHint(c);
}

/**
 * Up (`step` 1) or Down (-1): the user's earlier or later message in place of the text, when the
 * box is empty or holds the message Up brought back, unchanged; false when the key is the
 * textarea's (moving the caret).
 */
function recall(c: Composer, step: 1 | -1): boolean {
  const { input } = c;
  const shown = c.recalled && input.value === c.recalled.text ? c.recalled : null;
  if (input.value && !shown) return false;
  const sent = c.view.entries.flatMap((e) => (e.type === 'user' ? [e.text] : [])).reverse();
  const index = (shown ? shown.index : -1) + step;
  if (index < -1 || index >= sent.length || (index === -1 && !shown)) return false;
  const text = index === -1 ? '' : sent[index];
  c.recalled = index === -1 ? null : { index, text };
  input.value = text;
  input.setSelectionRange(text.length, text.length);
  showHint(c);
  return true;
}

function ask(c: Composer, host: Host) {
  if (c.view.server.status !== 'running') return;
  c.asked = true;
  host.post({ type: 'listAgents' });
  host.post({ type: 'listCommands' });
}

/** Opens, filters or closes the completion from the text before the caret; shows the command's hint. */
function updateCompletion(c: Composer, host: Host) {
  const { input, view } = c;
  showHint(c);
  const caret = input.selectionStart;
  const typing = document.activeElement === input && caret === input.selectionEnd && view.server.status === 'running';
  const command = typing ? commandAt(input.value, caret) : null;
  const mention = typing && !command ? mentionAt(input.value, caret) : null;
  const key = command ? 'command:0' : mention ? `mention:${mention.start}` : null;
  if (key !== c.dismissed) c.dismissed = null;
  if (!key || c.dismissed !== null) return show(c, null);
  const known = command ? view.commands : view.agents;
  if (!known) {
    // asked for on focus; not there yet, or the server was not running then
    if (!c.asked) ask(c, host);
    return show(c, null);
  }
  const prev = c.completion;
  const activeName = prev?.items[prev.active]?.name;
  const active = (items: { name: string }[]) => Math.max(0, items.findIndex((i) => i.name === activeName));
  if (command) {
    const items = commandCandidates(view.commands!, command.query);
    return show(c, items.length ? { kind: 'command', token: command, items, active: active(items) } : null);
  }
  const items = candidates(view.agents!, mention!.query, (slug) => modeName(view, slug), view.members ?? []);
  show(c, items.length ? { kind: 'mention', token: mention!, items, active: active(items) } : null);
}

/** The hint under the box while the message starts with a command: its arguments and what it does. */
function showHint(c: Composer) {
  const command = typedCommand(c.view.commands, c.input.value);
  const text = command ? commandHint(command) : '';
  if (c.hint.textContent !== text) c.hint.textContent = text;
  c.hint.hidden = !command;
  if (command) c.input.setAttribute('aria-describedby', 'command-hint');
  else c.input.removeAttribute('aria-describedby');
}

function show(c: Composer, next: Open | null) {
  c.completion = next;
  const { input, list } = c;
  // rows stay while they show the same (a click must find the row it pressed)
  const sig = next ? JSON.stringify([next.kind, next.items, next.active]) : '';
  if (list.dataset.sig === sig) return;
  list.dataset.sig = sig;
  list.hidden = !next;
  if (!next) {
    input.removeAttribute('aria-activedescendant');
    list.replaceChildren();
    return;
  }
  list.setAttribute('aria-label', next.kind === 'command' ? 'Commands' : 'Agents and members');
  const rows = next.kind === 'command' ? next.items.map(commandRow) : next.items.map(mentionRow);
  rows.forEach((row, i) => {
    row.id = `${next.kind}-${i}`;
    row.setAttribute('role', 'option');
    row.setAttribute('aria-selected', String(i === next.active));
    if (i === next.active) row.classList.add('active');
    row.addEventListener('mousedown', (ev) => ev.preventDefault()); // the focus stays in the composer
    row.addEventListener('click', () => pick(c, i));
  });
  list.replaceChildren(...rows);
  input.setAttribute('aria-activedescendant', `${next.kind}-${next.active}`);
  list.children[next.active]?.scrollIntoView({ block: 'nearest' });
}

function mentionRow(item: Candidate): HTMLElement {
  const row = el(
    'div',
    'mention',
    undefined,
    el('span', 'mention-name', item.name),
    el('span', `mention-kind ${item.kind}`, item.kind),
    el('span', 'mention-detail', item.detail),
  );
  // a space member's presence: a dot before the name, as the space's line shows it
  if (item.online !== undefined) row.classList.add(item.online ? 'online' : 'offline');
  const what = item.kind === 'member' ? `member${item.online === undefined ? '' : item.online ? ' (online)' : ' (offline)'}` : `${item.kind} agent, mode`;
  row.setAttribute('aria-label', `${item.name}, ${what} ${item.detail}`);
  return row;
}

/** A command's row: `/name`, its argument hint, its description. */
function commandRow(item: CommandInfo): HTMLElement {
  const row = el(
    'div',
    'mention command',
    undefined,
    el('span', 'mention-name', `/${item.name}`),
    item.argumentHint ? el('span', 'command-args', item.argumentHint) : null,
    el('span', 'mention-detail', item.description ?? ''),
  );
  row.setAttribute('aria-label', [`/${item.name}`, item.argumentHint, item.description].filter(Boolean).join(', '));
  return row;
}

/** The keys of the open completion; false for a key it leaves to the composer. */
function completionKey(c: Composer, ev: KeyboardEvent): boolean {
  const open = c.completion!;
  const n = open.items.length;
  if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    show(c, { ...open, active: (open.active + (ev.key === 'ArrowDown' ? 1 : n - 1)) % n } as Open);
    return true;
  }
  if ((ev.key === 'Enter' || ev.key === 'Tab') && !ev.shiftKey) {
    pick(c, open.active);
    return true;
  }
  if (ev.key === 'Escape') {
    c.dismissed = `${open.kind}:${open.token.start}`;
    show(c, null);
    return true;
  }
  return false;
}

/** Puts `@name ` or `/name ` in place of the token typed, the caret after it. */
function pick(c: Composer, i: number) {
  const open = c.completion;
  if (!open) return;
  const { input } = c;
  const { text, caret } =
    open.kind === 'command' ? insertCommand(input.value, open.token, open.items[i].name) : insertMention(input.value, open.token, open.items[i].name);
  input.value = text;
  input.focus();
  input.setSelectionRange(caret, caret);
  show(c, null);
  showHint(c);
}

function send(c: Composer, host: Host) {
  const text = c.input.value.trim();
  const { status } = c.view.server;
  const images = c.attachments.items.map(({ mimeType, data }) => ({ mimeType, data }));
  const something = !!text || images.length > 0;
  // while the server starts (again) the message waits in the box, and goes once it runs
  c.held = something && (status === 'starting' || (status === 'stopped' && !!c.view.server.restart));
  if (!something || status !== 'running') return;
  host.post(images.length ? { type: 'send', text, images } : { type: 'send', text });
  c.input.value = '';
  c.recalled = null;
  c.attachments.items = [];
  c.attachments.note = '';
  renderAttachments(c.attachments);
  showHint(c);
}
