// What the conversation's model requests cost: the sums of `modus/usage/get`, kept up to date
// with each `usage` update, and the words the chat's header shows. No `vscode`, no DOM.
import type { Usage, UsageGetResult, UsageUpdate } from './generated';

export const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0 };

/** The sum of two usages; its cost is unknown when one of them is (as the server sums). */
export function addUsage(a: Usage | undefined, b: Usage): Usage {
  const sum = a ?? NO_USAGE;
  return {
    inputTokens: sum.inputTokens + b.inputTokens,
    outputTokens: sum.outputTokens + b.outputTokens,
    cacheReadTokens: sum.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: sum.cacheWriteTokens + b.cacheWriteTokens,
    cost: sum.cost === null || b.cost === null ? null : sum.cost + b.cost,
  };
}

/** The sums with one more model request (a `usage` update) in them. */
export function withRequest(sums: UsageGetResult | null, u: UsageUpdate): UsageGetResult {
  const request: Usage = {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    cacheReadTokens: u.cacheReadTokens,
    cacheWriteTokens: u.cacheWriteTokens,
    cost: u.cost,
  };
  const s = sums ?? { total: NO_USAGE, byTask: {}, byMode: {}, byAgent: {} };
  const mode = s.byMode[u.mode] ?? {};
  return {
    total: addUsage(s.total, request),
    byTask: { ...s.byTask, [u.taskId]: addUsage(s.byTask[u.taskId], request) },
    byMode: { ...s.byMode, [u.mode]: { ...mode, [u.phase]: addUsage(mode[u.phase], request) } },
    byAgent: { ...s.byAgent, [u.agent]: addUsage(s.byAgent[u.agent], request) },
  };
}

/** Every token of the requests: input, output, and what was read from and written to the cache. */
export function tokensOf(u: Usage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
}

/** 950, 1.2k, 12.3k, 123k, 1.5M: three digits at most. */
export function formatCount(n: number): string {
  if (n < 1000) return String(n);
  for (const [size, unit] of [[1e3, 'k'], [1e6, 'M'], [1e9, 'B']] as const) {
    const v = n / size;
    const shown = v < 99.95 ? Math.round(v * 10) / 10 : Math.round(v);
    if (shown < 1000 || unit === 'B') return `${shown}${unit}`;
  }
  return String(n); // not reached
}

/** "$0.04", "<$0.01" for a cost that rounds to nothing, "cost unknown" when the price is not known. */
export function formatCost(cost: number | null): string {
  if (cost === null) return 'cost unknown';
  if (cost > 0 && cost < 0.005) return '<$0.01';
  return '$' + cost.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/** "12.3k tokens · $0.04" */
export function usageText(u: Usage): string {
  const n = tokensOf(u);
  return `${formatCount(n)} token${n === 1 ? '' : 's'} · ${formatCost(u.cost)}`;
}

/** "in 10k · out 300 · cache read 2k · cache write 0" */
export function tokenBreakdown(u: Usage): string {
  return [
    `in ${formatCount(u.inputTokens)}`,
    `out ${formatCount(u.outputTokens)}`,
    `cache read ${formatCount(u.cacheReadTokens)}`,
    `cache write ${formatCount(u.cacheWriteTokens)}`,
  ].join(' · ');
}

/** One row of the breakdown: a mode in a phase. */
export interface UsageRow {
  mode: string;
  phase: 'plan' | 'act';
  text: string;
}

/** What the header shows: the current task's usage, and on hover the conversation's by mode and phase. */
export interface UsageSummary {
  /** the current task's tokens and cost, e.g. "12.3k tokens · $0.04" */
  text: string;
  /** the same in parts: "12.3k", "tokens", "$0.04"; `priced`: false when the cost is unknown */
  parts: { count: string; unit: string; cost: string; priced: boolean };
  /** its tokens by kind, e.g. "in 10k · out 300 · cache read 2k · cache write 0" */
  breakdown: string;
  /** the conversation's tokens and cost */
  conversation: string;
  /** each mode and phase that made requests, in the order of the modes given, then the others */
  rows: UsageRow[];
}

/**
 * The header's usage: the current task's (`taskId`, from `State.task.id`; the whole conversation
 * when it is not known) and the conversation's by mode and phase. Null before the conversation
 * made a model request.
 */
export function usageSummary(sums: UsageGetResult | null, taskId: string | null, modeOrder: string[] = []): UsageSummary | null {
  if (!sums || tokensOf(sums.total) === 0) return null;
  const task = taskId ? sums.byTask[taskId] ?? NO_USAGE : sums.total;
  const rank = (slug: string) => (modeOrder.includes(slug) ? modeOrder.indexOf(slug) : modeOrder.length);
  const modes = Object.keys(sums.byMode).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const rows = modes.flatMap((mode) =>
    (['plan', 'act'] as const).flatMap((phase) => {
      const u = sums.byMode[mode][phase];
      return u ? [{ mode, phase, text: usageText(u) }] : [];
    }),
  );
  const n = tokensOf(task);
  const parts = { count: formatCount(n), unit: n === 1 ? 'token' : 'tokens', cost: formatCost(task.cost), priced: task.cost !== null };
  return { text: usageText(task), parts, breakdown: tokenBreakdown(task), conversation: usageText(sums.total), rows };
}
