// The MCP section: each server with its state (and why, when it failed or is off), its tools
// (folded: the count, unfolded: the names) and Restart. Hidden while no server is known (none
// configured, or a server without MCP); it folds like any details, folded at first.
import type { McpServerInfo } from '../protocol/generated';
import type { ViewState } from '../protocol/view';
import { button, byId, el, Host } from './dom';
import type { ToWebview } from './messages';

export interface Mcp {
  box: HTMLDetailsElement;
  /** the servers whose tools the user unfolded */
  unfolded: Set<string>;
  /** the servers being restarted (until the next list) */
  restarting: Set<string>;
  /** the view last rendered (a Restart draws the section again) */
  view: ViewState;
}

export function mount(view: ViewState): Mcp {
  return { box: byId<HTMLDetailsElement>('mcp'), unfolded: new Set(), restarting: new Set(), view };
}

/** A message from the extension: a new list of the MCP servers ends the restarts asked for. */
export function received(m: Mcp, message: ToWebview) {
  if (message.type === 'focusComposer' || message.type === 'fillComposer' || message.type === 'paths' || message.type === 'image') return;
  const actions = message.type === 'snapshot' ? null : message.actions;
  if (!actions || actions.some((a) => a.type === 'mcp' || (a.type === 'update' && a.update.kind === 'mcp_changed'))) {
    m.restarting.clear();
  }
}

const MCP_STATE_LABEL: Record<McpServerInfo['state'], string> = {
  connected: 'connected',
  starting: 'starting…',
  failed: 'failed',
  disabled: 'disabled',
};

export function render(m: Mcp, view: ViewState, host: Host) {
  m.view = view;
  const { box } = m;
  const servers = view.mcp ?? [];
  box.hidden = servers.length === 0;
  const sig = JSON.stringify([servers, [...m.restarting]]);
  if (box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  const count = (state: McpServerInfo['state']) => servers.filter((s) => s.state === state).length;
  const summary = [`${count('connected')} of ${servers.length} connected`];
  if (count('failed')) summary.push(`${count('failed')} failed`);
  box.querySelector('.mcp-count')!.textContent = summary.join(', ');
  // a keyboard user who pressed Restart keeps the focus on that server's button
  const focused = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('.mcp-server')?.dataset.server;
  const list = box.querySelector('.mcp-list')!;
  list.replaceChildren(...servers.map((s) => server(m, host, s)));
  if (focused !== undefined) {
    [...list.querySelectorAll<HTMLElement>('.mcp-server')].find((li) => li.dataset.server === focused)?.querySelector('button')?.focus();
  }
}

function server(m: Mcp, host: Host, s: McpServerInfo): HTMLElement {
  const item = el('li', `mcp-server state-${s.state}`);
  item.dataset.server = s.name;
  const restarting = m.restarting.has(s.name);
  const restart = button(restarting ? 'Restarting…' : 'Restart', 'secondary small mcp-restart', () => {
    if (m.restarting.has(s.name)) return;
    m.restarting.add(s.name);
    host.post({ type: 'mcpRestart', name: s.name });
    render(m, m.view, host);
  });
  restart.setAttribute('aria-label', `${restarting ? 'Restarting' : 'Restart'} ${s.name}`);
  if (restarting) restart.setAttribute('aria-disabled', 'true');
  const name = el('span', 'mcp-name', s.name);
  if (s.source) name.title = `Configured in ${s.source}`;
  item.appendChild(el('div', 'mcp-head', undefined, name, el('span', `mcp-state ${s.state}`, MCP_STATE_LABEL[s.state] ?? s.state), restart));
  if (s.error) item.appendChild(el('div', 'mcp-error', s.error));
  const tools = s.tools ?? [];
  const resources = s.resources ?? [];
  if (tools.length || resources.length) {
    const what = [plural(tools.length, 'tool'), ...(resources.length ? [plural(resources.length, 'resource')] : [])].join(', ');
    const body = el('ul', 'mcp-tools-list');
    for (const t of tools) {
      body.appendChild(el('li', 'mcp-tool', undefined, el('code', 'mcp-tool-name', t.name), t.description ? el('span', 'mcp-tool-description', t.description) : null));
    }
    for (const r of resources) {
      body.appendChild(el('li', 'mcp-resource', undefined, el('code', 'mcp-tool-name', r.uri), r.name ? el('span', 'mcp-tool-description', r.name) : null));
    }
    const details = el('details', 'mcp-tools', undefined, el('summary', undefined, what), body);
    details.open = m.unfolded.has(s.name);
    details.addEventListener('toggle', () => (details.open ? m.unfolded.add(s.name) : m.unfolded.delete(s.name)));
    item.appendChild(details);
  } else if (s.state === 'connected') {
    item.appendChild(el('div', 'mcp-tools-none', 'no tools'));
  }
  return item;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
