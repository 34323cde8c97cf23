// The chat webview in headless Chromium with a team space: the space's line under the header (its
// name, connecting / connected / offline and why, the members, those online marked), nothing
// without a space; a colleague's message under their name (live and from the history), the
// user's own as "You"; the @-completion's members with their presence.
// MODUS_SPACE_SCREENSHOTS=<folder> saves what the space's line and the colleagues' messages look like.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { SpaceInfo, SpaceMember } from '../src/protocol/generated';
import { stateAction, toWebview, updateOf } from './actions';
import { chatPages, completionRows, feed, posted } from './browser';

const conversationId = 'conv-team';
const shots = process.env.MODUS_SPACE_SCREENSHOTS;
const shoot = async (page: Page, name: string) => {
  if (shots) await page.screenshot({ path: join(shots, name) });
};
const up = updateOf(conversationId);
const space = (state: SpaceInfo['state'], error?: string): SpaceInfo => ({ name: 'team', member: 'alice', state, ...(error ? { error } : {}) });
const MEMBERS: SpaceMember[] = [
  { handle: 'alice', displayName: 'Alice', online: true },
  { handle: 'bob', displayName: 'Bob Builder', online: true },
  { handle: 'carol', online: false },
];

describe('chat webview: the team space', () => {
  const open = chatPages({ width: 400, height: 700 });

  it('shows nothing of a space without one', async () => {
    const page = await open([stateAction(conversationId)]);
    assert.equal(await page.locator('#space').isVisible(), false);
    await feed(page, toWebview([up({ kind: 'message', role: 'user', text: 'hello', messageId: 'm1', member: 'bob' })]));
    // no space to tell a colleague by: the message is the user's as always
    assert.equal(await page.locator('.msg.user .who').textContent(), 'You');
    assert.equal(await page.locator('.msg.user.colleague').count(), 0);
    await page.close();
  });

  it("shows the space's name and state, then its members once listed, the online ones marked; offline says why", async () => {
    const page = await open([stateAction(conversationId, { space: space('connecting') })]);
    const line = page.getByRole('status', { name: 'Team space' });
    await line.waitFor();
    assert.equal(await line.locator('.space-name').textContent(), 'team');
    assert.equal(await line.locator('.space-state').textContent(), 'connecting…');
    assert.equal(await line.locator('.space-member').count(), 0);

    await feed(page, toWebview([up({ kind: 'space_changed', space: space('connected') }), { type: 'spaceMembers', members: MEMBERS }]));
    assert.equal(await line.locator('.space-state').textContent(), 'connected');
    // the user's own handle is not listed; a member without a display name by their handle
    assert.deepEqual(await line.locator('.space-member').allTextContents(), ['Bob Builder', 'carol']);
    assert.deepEqual(await line.locator('.space-member.online').allTextContents(), ['Bob Builder']);
    assert.equal(await line.locator('.space-member[data-handle="bob"]').getAttribute('title'), '@bob (Bob Builder): online');
    assert.equal(await line.locator('.space-members').getAttribute('aria-label'), '1 of 2 members online');
    const dot = await line.locator('.space-member.online .presence').evaluate((e) => getComputedStyle(e).backgroundColor);
    assert.equal(dot, 'rgb(115, 201, 145)', 'the online dot is in the theme green');

    const why = 'cannot reach 127.0.0.1:5999/team: connection refused';
    await feed(page, toWebview([up({ kind: 'space_changed', space: space('offline', why) })]));
    assert.equal(await line.locator('.space-state').textContent(), 'offline');
    assert.equal(await line.locator('.space-state').getAttribute('title'), why);
    assert.equal(await line.locator('.space-error').textContent(), why);
    assert.equal(await line.locator('.space-member').count(), 0, 'no presence shown while offline');
    await shoot(page, 'modus-space-offline.png');

    // connected again: the members known show again until the next list
    await feed(page, toWebview([up({ kind: 'space_changed', space: space('connected') })]));
    assert.deepEqual(await line.locator('.space-member').allTextContents(), ['Bob Builder', 'carol']);
    assert.equal(await line.locator('.space-error').count(), 0);
    await shoot(page, 'modus-space-connected.png');
    // no space any more (the setting removed): the line goes
    await feed(page, toWebview([stateAction(conversationId)]));
    assert.equal(await line.isVisible(), false);
    await page.close();
  });

  it("labels a colleague's message with their name and styles it apart; the user's own stay \"You\"", async () => {
    const page = await open([stateAction(conversationId, { space: space('connected') }), { type: 'spaceMembers', members: MEMBERS }]);
    await feed(page, toWebview([
      up({ kind: 'message', role: 'user', text: 'mine', messageId: 'm1', member: 'alice' }),
      up({ kind: 'message', role: 'user', text: '@alice have a look', messageId: 'm2', member: 'bob' }),
      up({ kind: 'message', role: 'user', text: 'from carol', messageId: 'm3', member: 'carol' }),
      up({ kind: 'message', role: 'user', text: 'from dave', messageId: 'm4', member: 'dave' }),
    ]));
    const who = () => page.locator('.msg.user .who').allTextContents();
    // Bob's display name; carol has none: her handle; dave is not listed (yet): his handle
    assert.deepEqual(await who(), ['You', 'Bob Builder', 'carol', 'dave']);
    assert.deepEqual(await page.locator('.msg.user.colleague').evaluateAll((ms) => ms.map((m) => (m as HTMLElement).dataset.member)), ['bob', 'carol', 'dave']);
    const own = page.locator('.msg.user:not(.colleague)');
    const bob = page.locator('.msg.user.colleague[data-member="bob"]');
    const border = (l: typeof own) => l.evaluate((e) => [getComputedStyle(e).borderLeftWidth, getComputedStyle(e).borderRightWidth]);
    assert.deepEqual(await border(own), ['3px', '0px']);
    assert.deepEqual(await border(bob), ['0px', '3px'], "a colleague's message is marked on the other side");
    // Edit & resend is for the user's own messages only
    assert.equal(await own.getByRole('button', { name: 'Edit' }).count(), 1);
    assert.equal(await bob.getByRole('button', { name: 'Edit' }).count(), 0);
    assert.equal(await bob.getByRole('button', { name: 'Copy' }).count(), 1);

    // dave joins the list with a display name: his message is drawn again under it
    await feed(page, toWebview([{ type: 'spaceMembers', members: [...MEMBERS, { handle: 'dave', displayName: 'Dave', online: true }] }]));
    assert.deepEqual(await who(), ['You', 'Bob Builder', 'carol', 'Dave']);
    await shoot(page, 'modus-space-colleagues.png');
    await page.close();
  });

  it("labels a colleague's message from the history by metadata.member", async () => {
    const page = await open([stateAction(conversationId, { space: space('connected') }), { type: 'spaceMembers', members: MEMBERS }]);
    await feed(page, toWebview([{
      type: 'history',
      conversationId,
      messages: [
        { id: 'm1', role: 'user', text: 'mine', metadata: { member: 'alice' }, seq: 1 },
        { id: 'm2', role: 'user', text: 'hi @alice', metadata: { member: 'bob' }, seq: 2 },
        { id: 'm3', role: 'assistant', text: 'noted', metadata: {}, agent: 'modus', seq: 3 },
        { id: 'm4', role: 'user', text: 'before spaces', metadata: {}, seq: 4 },
      ],
    }]));
    assert.deepEqual(await page.locator('.msg.user .who').allTextContents(), ['You', 'Bob Builder', 'You']);
    assert.equal(await page.locator('.msg.user.colleague .text').textContent(), 'hi @alice');
    await page.close();
  });

  it('completes agents, then members: a member without a display name by their handle, with their presence', async () => {
    const page = await open([
      stateAction(conversationId, { space: space('connected') }),
      { type: 'spaceMembers', members: MEMBERS },
    ]);
    await page.locator('#input').focus();
    assert.ok((await posted(page)).some((m) => m.type === 'listAgents'));
    await feed(page, toWebview([{
      type: 'agents',
      agents: {
        agents: [{ name: 'modus', topLevel: true, mode: 'code', source: 'settings' }],
        members: [
          { handle: 'bob', name: 'Bob Builder' },
          { handle: 'carol', name: '' },
          { handle: 'erin', name: 'Erin' },
        ],
      },
    }]));
    await page.keyboard.type('@');
    assert.deepEqual(await completionRows(page), [
      'modus | top-level | code *',
      'bob | member | Bob Builder',
      'carol | member | carol',
      'erin | member | Erin',
    ]);
    const rows = page.locator('#mentions [role="option"]');
    assert.deepEqual(await rows.evaluateAll((rs) => rs.map((r) => r.className)), ['mention active', 'mention online', 'mention offline', 'mention']);
    assert.equal(await rows.nth(1).getAttribute('aria-label'), 'bob, member (online) Bob Builder');
    const dot = await rows.nth(1).locator('.mention-name').evaluate((e) => getComputedStyle(e, '::before').backgroundColor);
    assert.equal(dot, 'rgb(115, 201, 145)');
    await page.close();
  });
});
