// The log: the entries in the order of the layout, a turn's entries in its block; an element is
// drawn again only when its entry (or what it shows besides) changed: the reducer never changes
// an entry in place, so a new object is a change and the same object none (while a reply
// streams, only its element is drawn again). Approvals go in the card of the call they gate, or
// in the plan's card; the log follows the bottom when it was there, else "↓ Latest" offers it.
import { colleagueOf, Entry, gatedApprovals, layout, retryable, TurnBlock, ViewState } from '../protocol/view';
import { byId, el, Host, place } from './dom';
import { patchEntry, renderEntry } from './entries';
import { welcome } from './setup';
import { checkpointOf, Restores } from './tool';

export interface Log {
  box: HTMLElement;
  /** rendered entries: id -> (the entry it shows, what it shows besides, element) */
  rendered: Map<string, { entry: Entry; context: string; el: HTMLElement }>;
  /** rendered turn blocks: key -> (signature of the header, block, the element its entries go in) */
  blocks: Map<string, { sig: string; el: HTMLElement; body: HTMLElement }>;
  restores: Restores;
  latest: HTMLButtonElement;
  /** the user is at the bottom: the log stays there as what it shows grows (a streaming reply, a finished turn drawn at its real size) */
  stuck: boolean;
  /** tells when an element of the log changed size */
  sizes: ResizeObserver;
}

/** How close to the bottom (px) the log counts as at the bottom. */
const NEAR = 40;

export function mount(): Log {
  const box = byId<HTMLElement>('log');
  const latest = byId<HTMLButtonElement>('latest');
  const log: Log = {
    box,
    rendered: new Map(),
    blocks: new Map(),
    restores: { asks: new Map(), focusAfter: null, editing: null },
    latest,
    stuck: true,
    sizes: new ResizeObserver(() => {
      if (log.stuck) box.scrollTop = box.scrollHeight;
    }),
  };
  box.addEventListener('scroll', () => {
    log.stuck = box.scrollHeight - box.scrollTop - box.clientHeight < NEAR;
    if (log.stuck) latest.hidden = true;
  }, { passive: true });
  latest.addEventListener('click', () => {
    log.stuck = true;
    box.scrollTop = box.scrollHeight;
    latest.hidden = true;
  });
  return log;
}

/**
 * `asked`: the approvals about the plan, placed in `planSlot` (the plan card's, when it shows);
 * `modes`: the mode list's signature (entries name modes).
 */
export function render(
  log: Log,
  view: ViewState,
  host: Host,
  asked: Extract<Entry, { type: 'approval' }>[],
  planSlot: Element | null,
  modes: string,
) {
  const { box, rendered, blocks, restores } = log;
  const before = box.scrollHeight;
  const keep = new Set<string>();
  const keepBlocks = new Set<string>();
  const gated = gatedApprovals(view);
  const retry = retryable(view); // the turn note that offers Retry, if any
  const inside = new Set<Entry>([...[...gated.values()].flat(), ...asked]);
  /** the entry's element, rendered again when the entry changed */
  const entryElement = (e: Entry): HTMLElement => {
    keep.add(e.id);
    // mode names inside an entry depend on the mode list
    const context = (e.type === 'mode' || e.type === 'approval' ? modes : '') + entryContext(view, restores, e, retry);
    let r = rendered.get(e.id);
    if (r && r.entry !== e && r.context === context && patchEntry(r.el, r.entry, e)) {
      r.entry = e; // the streaming text grew: what came was added to its element
    } else if (!r || r.entry !== e || r.context !== context) {
      const node = renderEntry(e, view, host, restores);
      node.dataset.entry = e.id;
      if (r) {
        r.el.replaceWith(node);
        log.sizes.unobserve(r.el);
      }
      log.sizes.observe(node);
      r = { entry: e, context, el: node };
      rendered.set(e.id, r);
    }
    return r.el;
  };
  // the entries in the order of the layout: a turn's entries in its block
  let prev: Element | null = null;
  for (const item of layout(view)) {
    if (item.type === 'entry') {
      const node = entryElement(item.entry);
      if (!inside.has(item.entry)) prev = place(box, node, prev);
      continue;
    }
    keepBlocks.add(item.key);
    const block = renderTurn(log, item, view.running.includes(item.turnId));
    prev = place(box, block.el, prev);
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
  asked.forEach((a, i) => {
    const node = rendered.get(a.id)!.el;
    if (planSlot && planSlot.children[i] !== node) planSlot.insertBefore(node, planSlot.children[i] ?? null);
  });
  for (const [id, r] of rendered) {
    if (!keep.has(id)) {
      log.sizes.unobserve(r.el);
      r.el.remove();
      rendered.delete(id);
    }
  }
  for (const [key, b] of blocks) {
    if (!keepBlocks.has(key)) {
      log.sizes.unobserve(b.el);
      b.el.remove();
      blocks.delete(key);
    }
  }
  if (view.entries.length === 0 && !box.querySelector('.empty')) {
    box.appendChild(welcome());
  } else if (view.entries.length) {
    box.querySelector('.empty')?.remove();
  }
  if (restores.focusAfter) {
    rendered.get(restores.focusAfter.entry)?.el.querySelector<HTMLElement>(restores.focusAfter.selector)?.focus();
    restores.focusAfter = null;
  }
  if (log.stuck) box.scrollTop = box.scrollHeight;
  else if (box.scrollHeight > before) log.latest.hidden = false; // more came below where the user reads
}

/**
 * What an entry's element shows besides the entry: a card's checkpoint and restore state, a note's
 * Undo, a message's Edit (being edited, or not while a turn runs) and its author, a turn's Retry.
 */
function entryContext(view: ViewState, restores: Restores, e: Entry, retry: string | undefined): string {
  if (e.type === 'user') return JSON.stringify([restores.editing === e.id, view.running.length > 0, colleagueOf(view, e)]);
  if (e.type === 'turn') return String(retry === e.id);
  if (e.type === 'tool') {
    const checkpoint = checkpointOf(view, e);
    return checkpoint ? JSON.stringify([checkpoint.id, view.running.length > 0, view.restoring, restores.asks.get(e.id) ?? null]) : '';
  }
  return e.type === 'restore' ? JSON.stringify([view.restoring, view.running.length > 0]) : '';
}

/**
 * A turn's block: the agent's name and who woke it, then what the turn showed (placed by render).
 * A finished turn's block is `done`: the browser skips drawing it while it is out of sight.
 */
function renderTurn(log: Log, b: TurnBlock, running: boolean): { sig: string; el: HTMLElement; body: HTMLElement } {
  const blocks = log.blocks;
  const sig = JSON.stringify([b.agent, b.wokenBy ?? null]);
  let r = blocks.get(b.key);
  if (!r) {
    const body = el('div', 'turn-body');
    r = { sig: '', el: el('div', 'turn', undefined, el('div', 'turn-head'), body), body };
    r.el.dataset.turn = b.turnId;
    r.el.setAttribute('role', 'group');
    log.sizes.observe(r.el);
    blocks.set(b.key, r);
  }
  r.el.classList.toggle('done', !running);
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
