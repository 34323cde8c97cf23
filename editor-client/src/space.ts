// The team space's members for the sidebar's space line and the @-completion: asked of the server
// (`modus/space/members`) when the space says it is connected, on every `space_changed`, and every
// 30 s while the chat is shown (a member whose server left shows offline within 30 s on the
// server's side; asking as often keeps the line as fresh as the server can tell).
import type * as vscode from 'vscode';
import { Asking } from './asking';
import type { Update } from './protocol/generated';
import type { ViewState } from './protocol/view';
import type { ServerApi } from './server';
import type { ViewStore } from './store';

/** How often the members are asked again while the chat is shown. */
export const MEMBERS_EVERY_MS = 30_000;

export class SpaceMembers implements vscode.Disposable {
  /** the space (name, member, state) the members were last asked for */
  private asked = '';
  /** the chat is shown: the members are kept fresh */
  private visible = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly asking: Asking;
  /** The space's members; one request at a time, one more when asked meanwhile. */
  readonly refresh: () => Promise<void>;

  constructor(
    private readonly server: ServerApi,
    private readonly store: ViewStore,
    output: vscode.OutputChannel,
  ) {
    this.asking = new Asking(server, output, "the space's members", async (api) => {
      if (this.store.view.space) this.store.dispatch({ type: 'spaceMembers', members: (await api.spaceMembers()).members });
    });
    this.refresh = this.asking.refresh;
  }

  /** After each action: the space connected (again, or another one), ask for its members. */
  viewChanged(view: ViewState): void {
    if (view.server.status !== 'running') {
      this.asked = '';
      this.asking.off = false;
      return;
    }
    const space = view.space;
    const key = space?.state === 'connected' ? JSON.stringify([space.name, space.member]) : '';
    if (key === this.asked) return;
    this.asked = key;
    if (key && this.server.api) void this.refresh();
    this.schedule();
  }

  /**
   * Whether an update is news of the space, the members asked again: its state changed, or a
   * message from a member not in the list (someone who attached since it was asked).
   */
  mayChange(u: Update): boolean {
    if (u.kind === 'space_changed') return true;
    if (u.kind !== 'message' || !u.member) return false;
    const known = this.store.view.members;
    return known !== null && !known.some((m) => m.handle === u.member);
  }

  /** The chat was shown or hidden: the members are asked every 30 s only while it shows. */
  setVisible(visible: boolean): void {
    if (visible === this.visible) return;
    this.visible = visible;
    if (visible && this.asked) void this.refresh(); // what changed while it was hidden
    this.schedule();
  }

  private schedule(): void {
    const wanted = this.visible && this.asked !== '';
    if (wanted && !this.timer) this.timer = setInterval(() => void this.refresh(), MEMBERS_EVERY_MS);
    else if (!wanted && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  dispose(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
