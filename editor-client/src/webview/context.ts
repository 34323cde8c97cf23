// The header's context bar: a meter of what the last request took of the model's context window,
// with a mark where the server condenses by itself, and "used / window"; a click condenses now.
// While a condense the user asked for runs, it says so and waits.
import { contextSummary } from '../protocol/context';
import type { ViewState } from '../protocol/view';
import { byId, el, Host } from './dom';

export interface Context {
  button: HTMLButtonElement;
  /** the view last rendered (whether a click condenses) */
  view: ViewState;
}

export function mount(host: Host, view: ViewState): Context {
  const c: Context = { button: byId<HTMLButtonElement>('context'), view };
  c.button.addEventListener('click', () => {
    if (!condensingShown(c.view)) host.post({ type: 'condense' });
  });
  return c;
}

/** A condense of the conversation shown is under way: the bar waits. */
function condensingShown(view: ViewState): boolean {
  return view.condensing !== null && view.condensing === view.conversationId;
}

export function render(c: Context, view: ViewState) {
  c.view = view;
  const { button } = c;
  const context = view.context;
  const condensing = condensingShown(view);
  const sig = JSON.stringify([context, condensing]);
  if (button.dataset.sig === sig) return;
  button.dataset.sig = sig;
  button.hidden = !context;
  if (!context) return;
  const summary = contextSummary(context);
  button.classList.toggle('full', summary.full && !condensing);
  button.classList.toggle('condensing', condensing);
  // the fill's width is the share used; while condensing the stylesheet moves it to and fro
  button.querySelector<HTMLElement>('.context-fill')!.style.width = condensing ? '' : `${summary.fill * 100}%`;
  button.querySelector<HTMLElement>('.context-mark')!.style.left = `${summary.mark * 100}%`;
  // in a very narrow sidebar the used count alone: see the CSS
  button.querySelector('.context-text')!.replaceChildren(
    ...(condensing
      ? [el('span', 'context-used', 'condensing…')]
      : [el('span', 'context-used', summary.parts.used), el('span', 'context-window', ` / ${summary.parts.window}`)]),
  );
  const label = condensing ? 'Condensing the conversation…' : summary.label;
  button.title = label;
  button.setAttribute('aria-label', label);
  if (condensing) {
    button.setAttribute('aria-busy', 'true');
    button.setAttribute('aria-disabled', 'true');
  } else {
    button.removeAttribute('aria-busy');
    button.removeAttribute('aria-disabled');
  }
}
