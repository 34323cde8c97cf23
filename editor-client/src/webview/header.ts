// The header: the mode picker (each mode's tooltip says what it may reach), the PLAN/ACT badge,
// the working spinner, Cancel and New conversation, and the YOLO line under it. The usage, the
// context bar and History have modules of their own.
import { modeRules } from '../protocol/modes';
import type { ViewState } from '../protocol/view';
import { byId, el, Host, icon } from './dom';

export interface Header {
  modeSelect: HTMLSelectElement;
  phase: HTMLButtonElement;
  busy: HTMLElement;
  cancel: HTMLButtonElement;
  yolo: HTMLElement;
  /** the view last rendered (the mode a change of the picker is from) */
  view: ViewState;
}

export function mount(host: Host, view: ViewState): Header {
  const h: Header = {
    modeSelect: byId<HTMLSelectElement>('mode'),
    phase: byId<HTMLButtonElement>('phase'),
    busy: byId<HTMLElement>('busy'),
    cancel: byId<HTMLButtonElement>('cancel'),
    yolo: byId<HTMLElement>('yolo'),
    view,
  };
  h.modeSelect.addEventListener('change', () => {
    const mode = h.view.mode;
    if (mode && h.modeSelect.value !== mode.slug) host.post({ type: 'switchMode', slug: h.modeSelect.value });
  });
  h.cancel.addEventListener('click', () => host.post({ type: 'cancel' }));
  h.phase.addEventListener('click', () => host.post({ type: 'togglePhase' }));
  byId<HTMLButtonElement>('new').addEventListener('click', () => host.post({ type: 'newConversation' }));
  document.querySelectorAll<HTMLElement>('[data-icon]').forEach((b) => b.appendChild(icon(b.dataset.icon!)));
  return h;
}

/** The mode picker's slugs (the current mode's too, when the list lacks it) and what it shows of them. */
function modeSlugs(view: ViewState): string[] {
  const slugs = view.modes.map((m) => m.slug);
  if (view.mode && !slugs.includes(view.mode.slug)) slugs.push(view.mode.slug);
  return slugs;
}

/** A signature of the mode list: what shows a mode's name is drawn again when it changes. */
export function modesSig(view: ViewState): string {
  return JSON.stringify([modeSlugs(view), view.modes.map((m) => [m.name, m.description, m.groups])]);
}

export function render(h: Header, view: ViewState, modes: string) {
  h.view = view;
  const { modeSelect, phase } = h;
  if (modeSelect.dataset.sig !== modes) {
    modeSelect.replaceChildren(
      ...modeSlugs(view).map((slug) => {
        const info = view.modes.find((m) => m.slug === slug);
        const o = el('option', undefined, info?.name ?? slug);
        o.value = slug;
        // what the mode may reach: its MCP servers and command rules
        if (info) o.title = [info.description, modeRules(info)].filter(Boolean).join('\n');
        return o;
      }),
    );
    modeSelect.dataset.sig = modes;
  }
  if (view.mode) modeSelect.value = view.mode.slug;
  const current = view.modes.find((m) => m.slug === view.mode?.slug);
  modeSelect.title = current ? `Mode: ${current.name} (${modeRules(current)})` : 'Mode';
  h.yolo.hidden = !view.yolo;
  phase.textContent = view.phase ? view.phase.toUpperCase() : '';
  phase.hidden = !view.phase;
  phase.classList.toggle('plan', view.phase === 'plan');
  phase.setAttribute('aria-label', view.phase ? `Phase: ${view.phase.toUpperCase()} MODE (click to switch)` : 'Phase');
  h.busy.hidden = view.running.length === 0;
  h.cancel.hidden = view.running.length === 0;
}
