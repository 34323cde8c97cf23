// A colleague (or an agent) @-mentioned the user in a team space's conversation: a VS Code
// notification "<who> mentioned you: <text>" with Open, which shows the sidebar and opens that
// conversation as the conversation list does. No `vscode` import: the window and what Open does
// come in, so a node test drives it without VS Code.
import type { NotificationUpdate, SpaceMember } from './protocol/generated';

/** The most characters of the message the notification shows (VS Code's toasts are one line or two). */
export const NOTICE_CHARS = 120;

export const OPEN = 'Open';

/** What the notice needs of VS Code's window. */
export interface NoticeWindow {
  showInformationMessage(message: string, ...items: string[]): PromiseLike<string | undefined>;
}

export interface NoticeDeps {
  window: NoticeWindow;
  /** the space's members as last listed (a display name for the handle) */
  members(): SpaceMember[] | null;
  /** shows the sidebar and opens the conversation (modus/chat/open, its history read) */
  open(conversationId: string): Promise<void>;
}

/** "bob mentioned you: …": the writer's display name when the members list has one, else their handle (or the agent's name). */
export function noticeText(u: Pick<NotificationUpdate, 'from' | 'text'>, members: SpaceMember[] | null): string {
  const who = members?.find((m) => m.handle === u.from)?.displayName || u.from;
  return `${who} mentioned you: ${clip(u.text)}`;
}

/** The text on one line, cut at NOTICE_CHARS with an ellipsis. */
export function clip(text: string, max = NOTICE_CHARS): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** Shows the notification; Open opens the conversation. Resolves once the user answered it (or dismissed it). */
export async function notifyMention(u: NotificationUpdate, deps: NoticeDeps): Promise<void> {
  const picked = await deps.window.showInformationMessage(noticeText(u, deps.members()), OPEN);
  if (picked === OPEN) await deps.open(u.conversationId);
}
