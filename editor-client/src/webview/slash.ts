// The composer's `/`-completion of the slash commands, without the DOM: the command's name being
// typed at the start of the message, the commands it may name, the text once one is picked, and
// the argument hint of the command the message starts with. The server expands a command
// (`/<name> <args>` sent as it is); this only helps to type one.
import type { CommandInfo } from '../protocol/generated';

/** The `/name` typed at the start of the message: `text.slice(0, end)` is replaced; `query` is typed so far. */
export interface CommandToken {
  start: 0;
  end: number;
  query: string;
}

/** A name's characters as the server reads them: words of letters, digits, `_` and `-`, joined by `:`. */
const NAME_CHAR = /[\p{L}\p{N}_:-]/u;

/** The command name being typed at `caret` (the message starts with `/`, the caret in its first word), or null. */
export function commandAt(text: string, caret: number): CommandToken | null {
  if (!text.startsWith('/') || caret < 1) return null;
  for (let i = 1; i < caret; i++) if (!NAME_CHAR.test(text[i])) return null;
  let end = caret;
  while (end < text.length && NAME_CHAR.test(text[end])) end++;
  return { start: 0, end, query: text.slice(1, caret) };
}

/**
 * The commands whose name starts with `query` (case ignored), or whose name after a folder's
 * `folder:` does, in the server's order (the first of a name wins there).
 */
export function commandCandidates(commands: CommandInfo[], query: string): CommandInfo[] {
  const q = query.toLowerCase();
  return commands.filter((c) => {
    const name = c.name.toLowerCase();
    return name.startsWith(q) || name.slice(name.lastIndexOf(':') + 1).startsWith(q);
  });
}

/** The text with the token replaced by `/name ` (one space, not doubled), and the caret after it. */
export function insertCommand(text: string, token: CommandToken, name: string): { text: string; caret: number } {
  const rest = text.slice(token.end).replace(/^ /, '');
  const typed = `/${name} `;
  return { text: typed + rest, caret: typed.length };
}

/**
 * The command the message starts with (`/name` and a space or a new line, as the server reads
 * it), for the hint shown above the message box while its arguments are typed; null for any
 * other text.
 */
export function typedCommand(commands: CommandInfo[] | null, text: string): CommandInfo | null {
  const m = /^\/([\p{L}\p{N}_-]+(?::[\p{L}\p{N}_-]+)*)[ \t\n]/u.exec(text);
  return (m && commands?.find((c) => c.name === m[1])) ?? null;
}

/** The hint of a command: "/review <file> — Review the changes"; the name alone when it tells nothing. */
export function commandHint(c: CommandInfo): string {
  return [`/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ''}`, c.description].filter(Boolean).join(' — ');
}
