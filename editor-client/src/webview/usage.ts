// The header's usage: the current task's tokens and cost; on hover (or focus) a tooltip with its
// tokens by kind, the conversation's, and each mode and phase that made requests.
import { usageSummary } from '../protocol/usage';
import { modeName, ViewState } from '../protocol/view';
import { byId, el } from './dom';

export interface Usage {
  box: HTMLElement;
  tip: HTMLElement;
}

export function mount(): Usage {
  const u: Usage = { box: byId<HTMLElement>('usage'), tip: byId<HTMLElement>('usage-tip') };
  const { box, tip } = u;
  // the tooltip: shown while the pointer is on the usage or on the tooltip, or the usage has the
  // focus; Escape hides it
  const showTip = (show: boolean) => {
    tip.hidden = !show || box.hidden;
    if (!tip.hidden) tip.style.top = `${box.getBoundingClientRect().bottom}px`; // no gap to cross
  };
  const leave = (ev: MouseEvent) => {
    const to = ev.relatedTarget as Node | null;
    if (!(to && (box.contains(to) || tip.contains(to)))) showTip(document.activeElement === box);
  };
  box.addEventListener('mouseenter', () => showTip(true));
  box.addEventListener('focus', () => showTip(true));
  box.addEventListener('blur', () => showTip(false));
  box.addEventListener('mouseleave', leave);
  tip.addEventListener('mouseleave', leave);
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && !tip.hidden) showTip(false);
  });
  return u;
}

/** `modes`: the mode list's signature (the tooltip names modes). */
export function render(u: Usage, view: ViewState, modes: string) {
  const { box, tip } = u;
  const summary = usageSummary(view.usage, view.taskId, view.modes.map((m) => m.slug));
  const task = [view.mode?.name, view.phase?.toUpperCase()].filter(Boolean).join(' · ');
  const sig = JSON.stringify([summary, task, modes]);
  if (box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  box.hidden = !summary;
  if (!summary) {
    tip.hidden = true;
    return;
  }
  box.classList.toggle('cost-unknown', !summary.parts.priced);
  // in a narrow sidebar the cost alone (the tokens when it is unknown): see the CSS
  const { count, unit, cost } = summary.parts;
  box.querySelector('.usage-text')!.replaceChildren(
    el('span', 'usage-count', count),
    el('span', 'usage-unit', ` ${unit}`),
    el('span', 'usage-sep', ' · '),
    el('span', 'usage-cost', cost),
  );
  box.setAttribute('aria-label', `This task: ${summary.text}`);
  const rows = el('table', 'usage-modes');
  for (const r of summary.rows) {
    const mode = el('th', undefined, `${modeName(view, r.mode)} · ${r.phase.toUpperCase()}`);
    mode.scope = 'row';
    rows.appendChild(el('tr', undefined, undefined, mode, el('td', undefined, r.text)));
  }
  tip.replaceChildren(
    el('div', 'usage-tip-title', task ? `This task (${task})` : 'This task'),
    el('div', 'usage-tip-task', summary.text),
    el('div', 'usage-tip-kinds', summary.breakdown),
    el('div', 'usage-tip-title', 'This conversation'),
    el('div', 'usage-tip-total', summary.conversation),
    el('div', 'usage-tip-title', 'By mode and phase'),
    rows,
  );
}
