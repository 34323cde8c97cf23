// The composer's @-completion, without the DOM: where the `@` being typed is, which agents and
// members it may name, and the text once one is picked. The server decides what a mention
// reaches (SPEC §5); this only helps to type one.
import type { AgentsListResult, SpaceMember } from '../protocol/generated';

/** The `@` token around the caret: `text.slice(start, end)` is replaced; `query` is typed so far. */
export interface MentionToken {
  start: number;
  end: number;
  query: string;
}

export interface Candidate {
  name: string;
  /** "top-level" or "subordinate" for an agent, "member" for a human */
  kind: 'top-level' | 'subordinate' | 'member';
  /** an agent's mode (its name), a member's display name (else the handle) */
  detail: string;
  /** a member of the team space: whether a server of theirs is attached (unknown: not said) */
  online?: boolean;
}

const NAME_CHAR = /[\p{L}\p{N}_-]/u;
/** What may come right before a mention's `@` (as the server reads mentions): else `sam@host` is an address. */
const BEFORE_AT = /[\s([{*]/u;

/** The mention being typed at `caret`, or null when the caret is not in one. */
export function mentionAt(text: string, caret: number): MentionToken | null {
  let at = caret;
  while (at > 0 && NAME_CHAR.test(text[at - 1])) at--;
  if (at === 0 || text[at - 1] !== '@') return null;
  const start = at - 1;
  if (start > 0 && !BEFORE_AT.test(text[start - 1])) return null;
  let end = caret;
  while (end < text.length && NAME_CHAR.test(text[end])) end++;
  return { start, end, query: text.slice(at, caret) };
}

/**
 * The agents (in configuration order, the order the server tries prefixes in), then the members,
 * whose name (handle) starts with `query`, case ignored. `space`: the team space's members
 * (`modus/space/members`), which tell who is online and a display name the list may lack.
 */
export function candidates(list: AgentsListResult, query: string, modeName: (slug: string) => string, space: SpaceMember[] = []): Candidate[] {
  const q = query.toLowerCase();
  const agents = list.agents
    .filter((a) => a.name.toLowerCase().startsWith(q))
    .map((a): Candidate => ({ name: a.name, kind: a.topLevel ? 'top-level' : 'subordinate', detail: modeName(a.mode) }));
  const members = list.members
    .filter((m) => m.handle.toLowerCase().startsWith(q))
    .map((m): Candidate => {
      const known = space.find((s) => s.handle === m.handle);
      return { name: m.handle, kind: 'member', detail: m.name || known?.displayName || m.handle, ...(known ? { online: known.online } : {}) };
    });
  return [...agents, ...members];
}

/** The text with the token replaced by `@name ` (one space, not doubled), and the caret after it. */
export function insertMention(text: string, token: MentionToken, name: string): { text: string; caret: number } {
  const rest = text.slice(token.end).replace(/^ /, '');
  const mention = `@${name} `;
  return { text: text.slice(0, token.start) + mention + rest, caret: token.start + mention.length };
}
