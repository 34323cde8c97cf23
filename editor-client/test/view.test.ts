// The update reducer and the settings builder, without a server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Update } from '../src/protocol/generated';
import { buildSettings } from '../src/protocol/settings';
import { Action, describe as lines, initialView, reduce, replay } from '../src/protocol/view';

const C = 'conv-1';
const up = (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId: C, ...u } as Update });

describe('view reducer', () => {
  it('streams deltas into one assistant entry and replaces it with the final text', () => {
    const view = replay([
      up({ kind: 'turn_started', turnId: 't1', agent: 'modus' }),
      up({ kind: 'message', turnId: 't1', role: 'user', text: 'hi' }),
      up({ kind: 'message_delta', turnId: 't1', text: 'Hel' }),
      up({ kind: 'message_delta', turnId: 't1', text: 'lo' }),
    ]);
    assert.deepEqual(lines(view), ['user: hi', 'assistant: Hello']);
    assert.deepEqual(view.running, ['t1']);
    const done = replay(
      [up({ kind: 'message', turnId: 't1', role: 'assistant', text: 'Hello!' }), up({ kind: 'turn_ended', turnId: 't1', agent: 'modus', outcome: 'completed' })],
      view,
    );
    assert.deepEqual(lines(done), ['user: hi', 'assistant: Hello!']);
    assert.deepEqual(done.running, []);
    assert.equal(done.conversationId, C);
  });

  it('starts a new assistant entry after a tool call in the same turn', () => {
    const view = replay([
      up({ kind: 'message_delta', turnId: 't1', text: 'first' }),
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'x', name: 'read_file', params: { path: 'a' }, status: 'running' }),
      up({ kind: 'message_delta', turnId: 't1', text: 'second' }),
    ]);
    assert.deepEqual(lines(view), ['assistant: first', 'tool read_file running', 'assistant: second']);
  });

  it('updates a tool call in place and keeps its error', () => {
    const error = { type: 'FileRestrictionError', message: 'nope' };
    const view = replay([
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'x', name: 'write_to_file', params: { path: 'a.py' }, status: 'pending' }),
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'x', name: 'write_to_file', params: { path: 'a.py' }, status: 'failed', error }),
    ]);
    assert.deepEqual(lines(view), ['tool write_to_file failed FileRestrictionError: nope']);
  });

  it('follows mode changes with the names from the mode list', () => {
    const view = replay([
      { type: 'modes', modes: { current: 'code', modes: [{ slug: 'code', name: 'Code', description: null, whenToUse: null, source: 'builtin', groups: [] }, { slug: 'architect', name: 'Architect', description: null, whenToUse: null, source: 'builtin', groups: [] }] } },
      up({ kind: 'mode_changed', from: 'code', to: 'architect', taskId: 'k', by: 'model', reason: 'design' }),
    ]);
    assert.deepEqual(view.mode, { slug: 'architect', name: 'Architect' });
    assert.deepEqual(lines(view), ['mode code -> architect']);
  });

  it('tracks approvals: pending, answered, cancelled', () => {
    const request = { kind: 'tool' as const, title: 'Write a?', detail: '' };
    let view = replay([
      { type: 'approval', id: 'a1', request },
      { type: 'approval', id: 'a2', request },
    ]);
    view = reduce(view, { type: 'approvalAnswered', id: 'a1', response: { decision: 'approve' } });
    view = reduce(view, { type: 'approvalCancelled', id: 'a2' });
    view = reduce(view, { type: 'approvalCancelled', id: 'a1' });
    assert.deepEqual(lines(view), ['approval tool approve: Write a?', 'approval tool cancelled: Write a?']);
  });

  it('shows only the current conversation; a new conversation starts empty', () => {
    let view = replay([up({ kind: 'message', role: 'user', text: 'one' })]);
    view = reduce(view, { type: 'update', update: { conversationId: 'other', kind: 'message', role: 'user', text: 'elsewhere' } });
    assert.deepEqual(lines(view), ['user: one']);
    view = reduce(view, { type: 'newConversation', conversationId: 'fresh' });
    assert.deepEqual(lines(view), []);
    view = reduce(view, { type: 'update', update: { conversationId: 'fresh', kind: 'message', role: 'user', text: 'two' } });
    assert.deepEqual(lines(view), ['user: two']);
  });

  it('reports failed and cancelled turns', () => {
    const view = replay([
      up({ kind: 'turn_started', turnId: 't1', agent: 'modus' }),
      up({ kind: 'turn_ended', turnId: 't1', agent: 'modus', outcome: 'cancelled' }),
    ]);
    assert.deepEqual(lines(view), ['turn cancelled']);
    assert.equal(initialView().entries.length, 0);
  });
});

describe('settings', () => {
  it('forwards the server settings and leaves out empty ones', () => {
    const config: Record<string, unknown> = {
      models: { default: { provider: 'scripted', script: 's.yaml' } },
      autoApprove: { edit: true },
      yolo: false,
      modeSwitchDelayMs: 0,
      agents: [],
      members: [{ handle: 'ann', name: 'Ann' }],
      stateDir: '',
      pythonPath: '/usr/bin/python3',
    };
    assert.deepEqual(buildSettings((k) => config[k]), {
      models: { default: { provider: 'scripted', script: 's.yaml' } },
      autoApprove: { edit: true },
      yolo: false,
      modeSwitchDelayMs: 0,
      members: [{ handle: 'ann', name: 'Ann' }],
    });
  });
});
