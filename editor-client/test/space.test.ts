// The team space without VS Code: the reducer (the space from the state and `space_changed`, the
// members kept for the same space and forgotten for another, who wrote a user message) and
// SpaceMembers, which asks `modus/space/members` when the space connects, on each `space_changed`
// and every 30 s while the chat is shown.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { SpaceInfo, SpaceMember } from '../src/protocol/generated';
import { colleagueOf, Entry, initialView, reduce, replay, ViewState } from '../src/protocol/view';
import { MEMBERS_EVERY_MS, SpaceMembers } from '../src/space';
import { ViewStore } from '../src/store';
import { stateAction, updateOf } from './actions';

const up = updateOf('conv-team');
const space = (state: SpaceInfo['state'], name = 'team'): SpaceInfo => ({ name, member: 'alice', state });
const MEMBERS: SpaceMember[] = [
  { handle: 'alice', online: true },
  { handle: 'bob', displayName: 'Bob', online: true },
];
const user = (member?: string): Extract<Entry, { type: 'user' }> => ({ type: 'user', id: 'e1', text: 'hi', ...(member ? { member } : {}) });

describe('the space in the view', () => {
  it('comes with the state and space_changed; the members stay for the same space, go for another or none', () => {
    let view = replay([stateAction('conv-team', { space: space('connecting') }), { type: 'spaceMembers', members: MEMBERS }]);
    assert.deepEqual(view.space, space('connecting'));
    assert.deepEqual(view.members, MEMBERS);
    view = reduce(view, up({ kind: 'space_changed', space: space('offline') }));
    assert.equal(view.space?.state, 'offline');
    assert.deepEqual(view.members, MEMBERS, 'the same space: the list stays');
    view = reduce(view, up({ kind: 'space_changed', space: space('connected', 'other') }));
    assert.equal(view.members, null, 'another space: forgotten');
    view = reduce(view, stateAction('conv-team'));
    assert.equal(view.space, null);
    assert.equal(reduce(view, { type: 'spaceMembers', members: MEMBERS }).members, null, 'no space: no members');
  });

  it('a space_changed or a notification of another conversation still counts; a notification adds nothing to the chat', () => {
    let view = replay([stateAction('conv-a', { space: space('connecting') })]);
    view = reduce(view, updateOf('conv-b')({ kind: 'space_changed', space: space('connected') }));
    assert.equal(view.space?.state, 'connected');
    const before = view;
    view = reduce(view, up({ kind: 'notification', from: 'bob', text: '@alice hi', messageId: 'm1' }));
    assert.equal(view, before);
  });

  it("names a colleague's message by display name, else handle; the user's own and those without a space are not", () => {
    const view: ViewState = { ...initialView(), space: space('connected'), members: MEMBERS };
    assert.equal(colleagueOf(view, user('bob')), 'Bob');
    assert.equal(colleagueOf(view, user('carol')), 'carol');
    assert.equal(colleagueOf(view, user('alice')), null);
    assert.equal(colleagueOf(view, user()), null);
    assert.equal(colleagueOf(initialView(), user('bob')), null);
  });

  it('keeps the member of a live user message and of a stored one', () => {
    const live = replay([stateAction('conv-team'), up({ kind: 'message', role: 'user', text: 'hi', messageId: 'm1', member: 'bob' })]);
    assert.equal((live.entries[0] as Extract<Entry, { type: 'user' }>).member, 'bob');
    const stored = replay([{ type: 'history', conversationId: 'conv-team', messages: [{ id: 'm1', role: 'user', text: 'hi', metadata: { member: 'bob' } }] }]);
    assert.equal((stored.entries[0] as Extract<Entry, { type: 'user' }>).member, 'bob');
  });
});

describe('SpaceMembers', () => {
  /** a running server whose members request counts its calls */
  function setup() {
    const calls = { n: 0 };
    const store = new ViewStore((_, view) => members.viewChanged(view));
    const api = { spaceMembers: async () => (calls.n++, { members: MEMBERS }) };
    const members = new SpaceMembers({ api, requireApi: () => api } as any, store, { appendLine: () => undefined } as any);
    store.dispatch({ type: 'server', server: { status: 'running' } });
    return { calls, store, members };
  }
  const settle = () => new Promise((r) => setImmediate(r));

  it('asks when the space connects and on each space_changed, not before', async () => {
    const { calls, store, members } = setup();
    store.dispatch(stateAction('conv-team', { space: space('connecting') }));
    await settle();
    assert.equal(calls.n, 0, 'not while connecting');
    store.dispatch(up({ kind: 'space_changed', space: space('connected') }) as any);
    await settle();
    assert.equal(calls.n, 1);
    assert.deepEqual(store.view.members, MEMBERS);
    assert.ok(members.mayChange({ kind: 'space_changed', conversationId: 'c', space: space('connected') }));
    const said = (member?: string) => ({ kind: 'message', conversationId: 'c', role: 'user', text: 'hi', ...(member ? { member } : {}) }) as any;
    assert.ok(members.mayChange(said('dave')), 'a message from someone not listed: asked again');
    assert.ok(!members.mayChange(said('bob')), 'from a listed member: not');
    assert.ok(!members.mayChange(said()), 'the own (no member): not');
    members.dispose();
  });

  it('asks every 30 s while the chat is shown, and not while it is hidden', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      const { calls, store, members } = setup();
      store.dispatch(stateAction('conv-team', { space: space('connected') }));
      await settle();
      assert.equal(calls.n, 1);
      mock.timers.tick(MEMBERS_EVERY_MS);
      await settle();
      assert.equal(calls.n, 1, 'hidden: not asked again');
      members.setVisible(true);
      await settle();
      assert.equal(calls.n, 2, 'shown: asked at once');
      mock.timers.tick(MEMBERS_EVERY_MS);
      await settle();
      assert.equal(calls.n, 3);
      members.setVisible(false);
      mock.timers.tick(MEMBERS_EVERY_MS * 3);
      await settle();
      assert.equal(calls.n, 3);
      members.dispose();
    } finally {
      mock.timers.reset();
    }
  });
});
