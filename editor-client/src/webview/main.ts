// The chat webview: receives the view state from the extension (a snapshot, or actions for the
// reducer in ../protocol/view.ts), renders each panel from it, and posts what the user does. Every
// text is set with textContent (never innerHTML); no inline handlers (the CSP allows only this
// nonce'd script). Each panel module keeps its own elements and UI state, given the view to render.
// What the server sends is drawn once per animation frame, however many deltas came in it; what
// the user does is drawn at once.
import { Action, initialView, planApprovals, reduce, ViewState } from '../protocol/view';
import * as composer from './composer';
import * as context from './context';
import * as conversations from './conversations';
import * as env from './env';
import type { Host } from './dom';
import * as announcer from './announcer';
import * as header from './header';
import * as log from './log';
import * as mcp from './mcp';
import type { FromWebview, ToWebview } from './messages';
import * as plan from './plan';
import * as queued from './queued';
import * as rules from './rules';
import * as images from './images';
import * as server from './server';
import * as setup from './setup';
import * as space from './space';
import * as todos from './todos';
import * as usage from './usage';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

const vscode = acquireVsCodeApi();

let view: ViewState = initialView();

const host: Host = {
  post: (m: FromWebview) => vscode.postMessage(m),
  render: () => render(),
};

const panels = {
  composer: composer.mount(host, view),
  header: header.mount(host, view),
  space: space.mount(),
  rules: rules.mount(host, view),
  usage: usage.mount(),
  context: context.mount(host, view),
  conversations: conversations.mount({ ...host, dispatch: (action: Action) => (view = reduce(view, action)) }),
  plan: plan.mount(),
  todos: todos.mount(),
  mcp: mcp.mount(view),
  server: server.mount(host),
  env: env.mount(host),
  log: log.mount(),
  announcer: announcer.mount(),
  setup: setup.mount(host),
  queued: queued.mount(),
};

let frame = 0;

function render() {
  if (frame) cancelAnimationFrame(frame);
  frame = 0;
  composer.render(panels.composer, view, host);
  const asked = planApprovals(view);
  const modes = header.modesSig(view);
  header.render(panels.header, view, modes);
  space.render(panels.space, view);
  rules.render(panels.rules, view, host);
  usage.render(panels.usage, view, modes);
  context.render(panels.context, view);
  plan.render(panels.plan, view, host, asked);
  todos.render(panels.todos, view);
  mcp.render(panels.mcp, view, host);
  conversations.render(panels.conversations, view, host, modes);
  server.render(panels.server, view);
  env.render(panels.env, view);
  setup.render(panels.setup, view);
  queued.render(panels.queued, view, host);
  log.render(panels.log, view, host, asked, plan.approvalsSlot(panels.plan), modes);
  announcer.render(panels.announcer, view);
}

/** A rendering in the next frame (the server's updates come many to a frame while a reply streams). */
function renderSoon() {
  if (!frame) frame = requestAnimationFrame(render);
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  if (!m || typeof m !== 'object') return;
  if (m.type === 'focusComposer') return composer.focus(panels.composer);
  if (m.type === 'fillComposer') return composer.fill(panels.composer, m.text, m.images);
  if (m.type === 'image') return images.received(m);
  if (m.type === 'snapshot') view = m.view;
  else if (m.type === 'actions') view = m.actions.reduce(reduce, view);
  else return;
  mcp.received(panels.mcp, m);
  renderSoon();
});

render();
host.post({ type: 'ready' });
