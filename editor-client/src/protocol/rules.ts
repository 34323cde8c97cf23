// The rules the sidebar's header tells, in words: how many apply now, and for each rule file when
// it applies. No `vscode`, no DOM: the header and the tests use it.
import type { RuleInfo } from './generated';

export interface RulesSummary {
  /** the header's count: "3 rules", "1 rule" */
  label: string;
  /** in words: "3 of 4 rules apply now", "2 rules apply now" (the list's title; the count's tooltip with ": show the rule files") */
  text: string;
  active: number;
  total: number;
}

/** The count of the rules that apply now; null when there is no rule file at all (nothing to show). */
export function rulesSummary(rules: RuleInfo[] | null | undefined): RulesSummary | null {
  if (!rules || rules.length === 0) return null;
  const active = rules.filter((r) => r.active).length;
  const total = rules.length;
  const label = `${active} rule${active === 1 ? '' : 's'}`;
  const text = active === total ? `${label} ${active === 1 ? 'applies' : 'apply'} now` : `${active} of ${total} rules apply now`;
  return { label, text, active, total };
}

/**
 * When a rule applies: "always", "in mode code, architect", "once the conversation touches
 * src/**\/*.py" (in its modes, when it names some), "never (no globs)".
 */
export function ruleWhen(rule: RuleInfo): string {
  const modes = rule.modes?.length ? `in mode ${rule.modes.join(', ')}` : '';
  if (rule.scope !== 'paths') return modes || 'always';
  const globs = rule.paths ?? [];
  // a .mdc with neither globs nor alwaysApply, an .instructions.md without applyTo: listed, never applied
  if (!globs.length) return 'never (no globs)';
  return [modes, `once the conversation touches ${globs.join(', ')}`].filter(Boolean).join(', ');
}

/** The rule's line under its path: when it applies, its format, its tokens. */
export function ruleDetail(rule: RuleInfo): string {
  const tokens = `${rule.tokens.toLocaleString('en-US')} token${rule.tokens === 1 ? '' : 's'}`;
  return [ruleWhen(rule), rule.format, tokens].join(' · ');
}

/** Whether a rule's path is absolute (a global rule file) rather than workspace-relative. */
export function isAbsoluteRulePath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}
