// The header's rules: how many rule files apply now ("3 rules"); a click unfolds the list of every
// rule file under it, those that do not apply now marked, each opening its file in an editor.
// The list is asked for again as it opens (a rule file may have changed since).
import { ruleDetail, rulesSummary } from '../protocol/rules';
import type { ViewState } from '../protocol/view';
import { byId, el, Host } from './dom';

export interface Rules {
  toggle: HTMLButtonElement;
  panel: HTMLElement;
  /** the view last rendered (the list the panel shows when it opens) */
  view: ViewState;
}

export function mount(host: Host, view: ViewState): Rules {
  const r: Rules = { toggle: byId<HTMLButtonElement>('rules'), panel: byId<HTMLElement>('rules-panel'), view };
  const { toggle, panel } = r;
  toggle.addEventListener('click', () => {
    if (panel.hidden) {
      host.post({ type: 'listRules' });
      setOpen(r, host, true);
      panel.querySelector<HTMLElement>('.rule-open')?.focus();
    } else {
      setOpen(r, host, false);
    }
  });
  panel.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape') return;
    ev.stopPropagation();
    setOpen(r, host, false);
    toggle.focus();
  });
  // a click elsewhere closes it
  document.addEventListener('mousedown', (ev) => {
    const target = ev.target as Node | null;
    if (!panel.hidden && target && !panel.contains(target) && !toggle.contains(target)) setOpen(r, host, false);
  });
  return r;
}

function setOpen(r: Rules, host: Host, open: boolean) {
  r.panel.hidden = !open;
  r.toggle.setAttribute('aria-expanded', String(open));
  r.toggle.classList.toggle('active', open);
  delete r.panel.dataset.sig; // drawn afresh
  render(r, r.view, host);
}

export function render(r: Rules, view: ViewState, host: Host) {
  r.view = view;
  const { toggle, panel } = r;
  const summary = rulesSummary(view.rules);
  toggle.hidden = !summary;
  if (!summary) {
    if (!panel.hidden) setOpen(r, host, false);
    return;
  }
  if (toggle.textContent !== summary.label) toggle.textContent = summary.label;
  toggle.title = `${summary.text}: show the rule files`;
  toggle.setAttribute('aria-label', toggle.title);
  if (panel.hidden) return;
  panel.style.top = `${toggle.getBoundingClientRect().bottom + 2}px`;
  const sig = JSON.stringify(view.rules);
  if (panel.dataset.sig === sig) return;
  panel.dataset.sig = sig;
  // a keyboard user keeps the focus on the same rule file when the list comes again
  const focused = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('.rule')?.dataset.path;
  const list = el('ul', 'rule-list');
  for (const rule of view.rules ?? []) {
    const open = el(
      'button',
      'rule-open',
      undefined,
      el('span', 'rule-path', rule.path),
      rule.active ? null : el('span', 'rule-off', 'not now'),
      el('span', 'rule-detail', ruleDetail(rule)),
    );
    open.type = 'button';
    open.title = `Open ${rule.path}`;
    open.setAttribute('aria-label', `${rule.path}, ${rule.active ? 'applies now' : 'does not apply now'}, ${ruleDetail(rule)}: open the file`);
    open.addEventListener('click', () => {
      host.post({ type: 'openRule', path: rule.path });
      setOpen(r, host, false);
    });
    const item = el('li', `rule${rule.active ? '' : ' inactive'}`, undefined, open);
    item.dataset.path = rule.path;
    list.appendChild(item);
  }
  panel.replaceChildren(el('div', 'rules-title', summary.text), list);
  if (focused !== undefined) {
    [...list.querySelectorAll<HTMLElement>('.rule')].find((li) => li.dataset.path === focused)?.querySelector('button')?.focus();
  }
}
