// The server's state below the log: a hint while it starts. When it could not start, the error
// and the buttons that fix it, in place of the composer. When it stopped by itself (a crash): how
// it ended and its last error lines, with Show Log; while it is started again the composer stays
// (Send waits until it runs); when it stopped too often, Retry in place of the composer.
import type { ViewState } from '../protocol/view';
import { byId, Host } from './dom';
import type { ServerFix } from './messages';

export interface Server {
  box: HTMLElement;
  starting: HTMLElement;
  composer: HTMLFormElement;
  send: HTMLButtonElement;
}

export function mount(host: Host): Server {
  const s: Server = {
    box: byId<HTMLElement>('server'),
    starting: byId<HTMLElement>('starting'),
    composer: byId<HTMLFormElement>('composer'),
    send: byId<HTMLButtonElement>('send'),
  };
  s.box.querySelectorAll<HTMLButtonElement>('button[data-fix]').forEach((b) =>
    b.addEventListener('click', () => host.post({ type: 'fixServer', fix: b.dataset.fix as ServerFix })),
  );
  return s;
}

/** What the box shows: a failed start, a stop with the restart to come, a stop for good, or nothing. */
function shown(view: ViewState): 'failed' | 'restarting' | 'stopped' | null {
  const { status, restart } = view.server;
  if (status === 'failed') return 'failed';
  if (restart && (status === 'stopped' || status === 'starting')) return 'restarting';
  return status === 'stopped' ? 'stopped' : null;
}

export function render(s: Server, view: ViewState) {
  const { status, error, lines = [], restart } = view.server;
  const box = shown(view);
  s.box.hidden = box === null;
  s.box.dataset.state = box ?? '';
  // Modus's own environment, offered or being set up, takes the composer's place (webview/env.ts)
  s.composer.hidden = box === 'failed' || box === 'stopped' || view.env !== null;
  s.starting.hidden = status !== 'starting' || box !== null || view.env !== null;
  s.send.disabled = status !== 'running';
  if (box === null) return;
  text(s.box.querySelector('.server-title')!, box === 'failed' ? 'The Modus server is not running.' : `${error ?? 'The Modus server stopped'}.`);
  text(s.box.querySelector('.server-error')!, box === 'failed' ? (error ?? '') : '');
  const pre = s.box.querySelector<HTMLElement>('.server-lines')!;
  text(pre, box === 'failed' ? '' : lines.join('\n'));
  pre.hidden = !pre.textContent;
  const again = s.box.querySelector<HTMLElement>('.server-restart')!;
  const attempt = restart ? ` (${restart.attempt} of ${restart.of})` : '';
  text(again, !restart ? '' : status === 'starting' ? `Starting it again${attempt}…` : `Starting it again in ${seconds(restart.delayMs)}${attempt}…`);
  again.hidden = !again.textContent;
  s.box.querySelectorAll<HTMLButtonElement>('button[data-fix]').forEach((b) => (b.hidden = !(b.dataset.when ?? '').split(' ').includes(box)));
}

function text(e: Element, value: string) {
  if (e.textContent !== value) e.textContent = value;
}

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.round(s / 60)} min`;
}
