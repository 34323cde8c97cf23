// What the conversation takes of the model's context window, in the words of the chat's context
// bar. No `vscode`, no DOM.
import type { ContextInfo } from './generated';
import { formatCount } from './usage';

/** What the context bar shows. */
export interface ContextSummary {
  /** "12.3k / 200k"; "— / 200k" before the first request since the server started */
  text: string;
  /** the same in parts: "12.3k" (or "—") and "200k" */
  parts: { used: string; window: string };
  /** the share of the window the last request took, 0 to 1 */
  fill: number;
  /** where the server condenses by itself, as a share of the window */
  mark: number;
  /** the last request took the threshold or more: the next one condenses first */
  full: boolean;
  /** the tooltip and the button's name: the numbers in full, where it condenses, what a click does */
  label: string;
}

export function contextSummary(context: ContextInfo): ContextSummary {
  const { used, window, threshold } = context;
  const share = (n: number) => (window > 0 ? Math.min(1, Math.max(0, n / window)) : 0);
  const shown = used === undefined ? '—' : formatCount(used);
  const taken =
    used === undefined
      ? `Context: no request yet; the window holds ${tokens(window)} tokens.`
      : `Context: ${tokens(used)} of ${tokens(window)} tokens (${Math.round(share(used) * 100)}%).`;
  return {
    text: `${shown} / ${formatCount(window)}`,
    parts: { used: shown, window: formatCount(window) },
    fill: used === undefined ? 0 : share(used),
    mark: share(threshold),
    full: used !== undefined && used >= threshold,
    label: `${taken} Condensed by itself at ${tokens(threshold)}. Click to condense now.`,
  };
}

/** 12,345 */
function tokens(n: number): string {
  return n.toLocaleString('en-US');
}
