// The server's state below the log: a hint while it starts; when it failed, the error and the
// buttons that fix it in place of the composer, which takes no message until it runs.
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

export function render(s: Server, view: ViewState) {
  const status = view.server.status;
  s.box.hidden = status !== 'failed';
  s.composer.hidden = status === 'failed';
  s.starting.hidden = status !== 'starting';
  s.send.disabled = status !== 'running';
  s.box.querySelector('.server-error')!.textContent = view.server.error ?? '';
}
