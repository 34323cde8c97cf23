// A mention of the user in a team space's conversation, without VS Code: the notification's words
// (the writer's display name, the message clipped to one line) and its Open, which opens that
// conversation; dismissed, nothing is opened.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NotificationUpdate, SpaceMember } from '../src/protocol/generated';
import { clip, NOTICE_CHARS, notifyMention, noticeText, OPEN } from '../src/mentionNotice';

const update: NotificationUpdate = { kind: 'notification', conversationId: 'conv-team', from: 'bob', text: '@alice hello', messageId: 'm7' };
const MEMBERS: SpaceMember[] = [{ handle: 'bob', displayName: 'Bob Builder', online: true }];

/** A window whose notification answers `pick`, recording what it showed. */
function fakeWindow(pick: string | undefined) {
  const shown: { message: string; items: string[] }[] = [];
  return {
    shown,
    showInformationMessage: async (message: string, ...items: string[]) => {
      shown.push({ message, items });
      return pick;
    },
  };
}

describe('the notification of a mention', () => {
  it('names the writer by display name, else by handle, and clips the text to one line', () => {
    assert.equal(noticeText(update, MEMBERS), 'Bob Builder mentioned you: @alice hello');
    assert.equal(noticeText(update, null), 'bob mentioned you: @alice hello');
    assert.equal(noticeText({ from: 'architect', text: 'see\n\n  the plan' }, MEMBERS), 'architect mentioned you: see the plan');
    const long = clip('x'.repeat(500));
    assert.equal(long.length, NOTICE_CHARS);
    assert.ok(long.endsWith('…'));
  });

  it('Open opens the conversation of the mention', async () => {
    const window = fakeWindow(OPEN);
    const opened: string[] = [];
    await notifyMention(update, { window, members: () => MEMBERS, open: async (id) => void opened.push(id) });
    assert.deepEqual(window.shown, [{ message: 'Bob Builder mentioned you: @alice hello', items: ['Open'] }]);
    assert.deepEqual(opened, ['conv-team']);
  });

  it('dismissed, nothing is opened', async () => {
    const opened: string[] = [];
    await notifyMention(update, { window: fakeWindow(undefined), members: () => null, open: async (id) => void opened.push(id) });
    assert.deepEqual(opened, []);
  });
});
