// What a mode may reach, in words, from the groups `modus/modes/list` gives: its MCP servers and
// its command rules. The mode picker (palette), the sidebar's mode dropdown and the status bar
// show it. No `vscode`, no DOM.
import type { ModeInfo } from './generated';

/** A group's options: `[name, {fileRegex?, description?, servers?, allow?, deny?}]`. */
interface GroupOptions {
  servers?: string[];
  allow?: string[];
  deny?: string[];
}

/** The mode's group `name` (its options, `{}` when it has none), or undefined when it has no such group. */
function group(mode: Pick<ModeInfo, 'groups'>, name: string): GroupOptions | undefined {
  for (const g of mode.groups) {
    if (g === name) return {};
    if (Array.isArray(g) && g[0] === name) {
      const options = g[1] && typeof g[1] === 'object' ? (g[1] as Record<string, unknown>) : {};
      return { servers: strings(options.servers), allow: strings(options.allow), deny: strings(options.deny) };
    }
  }
  return undefined;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/**
 * The MCP servers the mode reaches: "MCP: docs, github" (its `mcp` group's `servers`), "all MCP
 * servers" (an `mcp` group without them), undefined (no `mcp` group: nothing to say).
 */
export function mcpRule(mode: Pick<ModeInfo, 'groups'>): string | undefined {
  const mcp = group(mode, 'mcp');
  if (!mcp) return undefined;
  if (!mcp.servers) return 'all MCP servers';
  return mcp.servers.length ? `MCP: ${mcp.servers.join(', ')}` : 'no MCP servers';
}

/**
 * The commands the mode may run: "no commands" (no `command` group), "any command" (a `command`
 * group without rules), else its rules: "commands: allow git log*, git diff*; deny rm -rf *".
 */
export function commandRule(mode: Pick<ModeInfo, 'groups'>): string {
  const command = group(mode, 'command');
  if (!command) return 'no commands';
  const { allow, deny = [] } = command;
  if (!allow && deny.length === 0) return 'any command';
  if (allow && allow.length === 0) return 'no commands (an empty allow list)';
  const parts = [allow ? `allow ${allow.join(', ')}` : 'allow any', ...(deny.length ? [`deny ${deny.join(', ')}`] : [])];
  return `commands: ${parts.join('; ')}`;
}

/** Both in one line: "all MCP servers · any command". */
export function modeRules(mode: Pick<ModeInfo, 'groups'>): string {
  return [mcpRule(mode), commandRule(mode)].filter(Boolean).join(' · ');
}
