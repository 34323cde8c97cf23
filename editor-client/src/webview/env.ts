// Modus's own Python environment, in place of the composer while it is not ready: the offer (Set up
// Modus: what it will do and where from), the set-up under way (what it is doing, pip's current
// line), a failure (pip's own last lines, Retry, Show Log), or no Python 3.11+ (the download page).
import type { EnvView, ViewState } from '../protocol/view';
import { button, byId, el, Host } from './dom';
import type { EnvFix } from './messages';

export interface Env {
  box: HTMLElement;
  title: HTMLElement;
  note: HTMLElement;
  step: HTMLElement;
  line: HTMLElement;
  lines: HTMLPreElement;
  buttons: HTMLElement;
  /** the view last drawn */
  shown: EnvView | null;
}

export function mount(host: Host): Env {
  const box = byId<HTMLElement>('env');
  const s: Env = {
    box,
    title: el('div', 'env-title'),
    note: el('div', 'env-note'),
    step: el('div', 'env-step'),
    line: el('div', 'env-line'),
    lines: el('pre', 'env-lines'),
    buttons: el('div', 'buttons'),
    shown: null,
  };
  s.step.setAttribute('role', 'status');
  s.buttons.addEventListener('click', (e) => {
    const fix = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-fix]')?.dataset.fix;
    if (fix) host.post({ type: 'fixEnv', fix: fix as EnvFix });
  });
  box.append(s.title, s.note, s.step, s.line, s.lines, s.buttons);
  return s;
}

const BUTTONS: Record<EnvView['state'], [string, EnvFix, string][]> = {
  offer: [
    ['Set up Modus', 'setUp', 'env-setup'],
    ['Open Setting', 'openSettings', 'secondary'],
  ],
  running: [
    ['Cancel', 'cancel', 'secondary env-cancel'],
    ['Show Log', 'showLog', 'secondary'],
  ],
  failed: [
    ['Retry', 'setUp', 'env-retry'],
    ['Show Log', 'showLog', 'secondary'],
  ],
  noPython: [
    ['Download Python', 'download', 'env-download'],
    ['Select Interpreter', 'pickInterpreter', 'secondary'],
    ['Retry', 'setUp', 'secondary'],
  ],
};

function title(env: EnvView): string {
  switch (env.state) {
    case 'offer':
      return 'Set up Modus';
    case 'running':
      return env.upgradeFrom ? `Upgrading Modus to ${env.version}…` : `Setting up Modus ${env.version}…`;
    case 'failed':
      return 'Modus could not be set up.';
    case 'noPython':
      return 'Modus needs Python 3.11 or newer.';
  }
}

function note(env: EnvView): string {
  switch (env.state) {
    case 'offer':
      return (
        `Modus runs as a Python program, in an environment of its own. Set up Modus creates it with ${env.python ?? 'python3'} ` +
        `in VS Code's storage for extensions and installs Modus ${env.version} into it, ` +
        (env.offline ? 'from the wheels this extension carries (no network needed).' : "its dependencies from your package index (pip's own settings and proxies apply).") +
        ' To use an interpreter of your own instead, set modus.pythonPath: then nothing is installed.'
      );
    case 'running':
      return '';
    case 'failed':
      return env.error ?? '';
    case 'noPython':
      return `${env.error ?? 'No Python found'}. Install Python 3.11 or newer from python.org (or choose another interpreter), then Retry.`;
  }
}

export function render(s: Env, view: ViewState) {
  const env = view.env;
  s.box.hidden = env === null;
  if (env === s.shown) return;
  s.shown = env;
  if (!env) return;
  s.box.dataset.state = env.state;
  s.box.setAttribute('aria-label', title(env));
  text(s.title, title(env));
  text(s.note, note(env));
  s.note.hidden = !s.note.textContent;
  text(s.step, env.state === 'running' ? (env.step ?? '') : '');
  s.step.hidden = !s.step.textContent;
  text(s.line, env.state === 'running' ? (env.line ?? '') : '');
  s.line.hidden = !s.line.textContent;
  text(s.lines, env.state === 'failed' ? (env.lines ?? []).join('\n') : '');
  s.lines.hidden = !s.lines.textContent;
  s.lines.scrollTop = s.lines.scrollHeight; // pip's last words last: they say what went wrong
  const wanted = BUTTONS[env.state].map(([label]) => label).join('|');
  if (s.buttons.dataset.shown !== wanted) {
    s.buttons.dataset.shown = wanted;
    s.buttons.replaceChildren(
      ...BUTTONS[env.state].map(([label, fix, cls]) => {
        const b = button(label, cls, () => undefined);
        b.dataset.fix = fix;
        return b;
      }),
    );
  }
}

function text(e: Element, value: string) {
  if (e.textContent !== value) e.textContent = value;
}
