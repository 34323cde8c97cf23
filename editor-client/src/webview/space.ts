// The team space's line under the header: the space's name, how the attachment stands
// (connecting, connected, offline and why) and its members, those online marked. Hidden without
// a space. The members come from `modus/space/members`, which the extension asks again on each
// change of the space and every 30 s while the chat is shown (see ../space.ts).
import type { SpaceMember } from '../protocol/generated';
import type { ViewState } from '../protocol/view';
import { byId, el, icon } from './dom';

export interface Space {
  box: HTMLElement;
}

export function mount(): Space {
  return { box: byId<HTMLElement>('space') };
}

const STATE_LABEL = { connecting: 'connecting…', connected: 'connected', offline: 'offline' } as const;

/** A member as the line names them: the display name, else the handle. */
export function memberName(m: SpaceMember): string {
  return m.displayName || m.handle;
}

export function render(s: Space, view: ViewState) {
  const { box } = s;
  const space = view.space;
  box.hidden = space === null;
  if (!space) return;
  // the user's own handle is not listed: online by definition while this line shows
  const others = (view.members ?? []).filter((m) => m.handle !== space.member);
  const sig = JSON.stringify([space, others]);
  if (box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  box.className = `space state-${space.state}`;
  const state = el('span', `space-state ${space.state}`, STATE_LABEL[space.state] ?? space.state);
  if (space.error) state.title = space.error; // the whole reason, the line below may clip it
  const online = others.filter((m) => m.online).length;
  const members = el('span', 'space-members');
  if (space.state === 'connected' && others.length) {
    members.setAttribute('aria-label', `${online} of ${others.length} members online`);
    members.append(...others.map(member));
  }
  const name = el('span', 'space-name', space.name);
  name.title = `Team space "${space.name}": you are @${space.member}`;
  box.replaceChildren(el('div', 'space-head', undefined, el('span', 'space-icon', undefined, icon('people')), name, state, members));
  if (space.state === 'offline' && space.error) box.appendChild(el('div', 'space-error', space.error));
}

function member(m: SpaceMember): HTMLElement {
  const item = el('span', `space-member${m.online ? ' online' : ''}`, undefined, el('span', 'presence'), document.createTextNode(memberName(m)));
  item.dataset.handle = m.handle;
  item.title = `@${m.handle}${m.displayName ? ` (${m.displayName})` : ''}: ${m.online ? 'online' : 'offline'}`;
  item.querySelector('.presence')!.setAttribute('aria-label', m.online ? 'online' : 'offline');
  return item;
}
