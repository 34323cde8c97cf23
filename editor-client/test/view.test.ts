// The update reducer and the settings builder, without a server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { HistoryMessage, Update } from '../src/protocol/generated';
import { buildSettings } from '../src/protocol/settings';
import { Action, describe as lines, initialView, reduce, replay, splitFeedback } from '../src/protocol/view';
import { CLIENT_DIR } from './server';

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

describe('history replay', () => {
  // One real run, recorded twice: live (the actions the view got) and from modus/chat/history.
  const recorded: { actions: Action[]; messages: HistoryMessage[] } = JSON.parse(
    readFileSync(join(CLIENT_DIR, 'test', 'fixtures', 'history.json'), 'utf8'),
  );
  const conversationId = replay(recorded.actions).conversationId!;
  const history = (messages: HistoryMessage[], view = initialView()) =>
    reduce(view, { type: 'history', conversationId, messages });
  const msg = (role: HistoryMessage['role'], text: string, metadata: Record<string, unknown> = {}): HistoryMessage => ({
    id: `m-${role}-${text.length}-${JSON.stringify(metadata).length}`,
    role,
    text,
    metadata,
    ...(role === 'tool' ? {} : { agent: 'modus' }),
  });
  const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, arguments: args, native: true });

  it('rebuilds what the live view showed: messages, tool cards with their outcome, mode changes', () => {
    const live = replay(recorded.actions);
    const stored = history(recorded.messages, replay(recorded.actions.filter((a) => a.type === 'modes')));
    // the history has no approvals
    assert.deepEqual(lines(stored), lines(live).filter((l) => !l.trimStart().startsWith('approval ')));
    const toolIds = (v: typeof live) => v.entries.filter((e) => e.type === 'tool').map((e) => e.id);
    assert.deepEqual(toolIds(stored), toolIds(live), 'tool cards have the ids live updates patch');
    const completion = stored.entries.find((e) => e.type === 'tool' && e.name === 'attempt_completion');
    assert.deepEqual(completion && completion.type === 'tool' && completion.params, { result: 'Designed in docs/design.md and implemented in src/app.py.' });
    assert.equal(stored.conversationId, conversationId);
    assert.deepEqual(stored.running, []);
  });

  it('takes the error type from metadata.errorType, and the result or error message from the text', () => {
    const view = history([
      msg('user', 'fix it'),
      msg('assistant', 'Reading.', { mode: 'code', toolCalls: [call('r1', 'read_file', { path: 'a.py' }), call('w1', 'write_to_file', { path: 'b.py' })] }),
      msg('tool', 'x = 1', { toolCallId: 'r1', name: 'read_file', isError: false }),
      msg('tool', 'The user denied this operation.\n<feedback>\nnot there\n</feedback>', { toolCallId: 'w1', name: 'write_to_file', isError: true, errorType: 'Denied' }),
      msg('system', 'Stopped.'),
    ]);
    const tools = view.entries.filter((e) => e.type === 'tool');
    assert.deepEqual(
      tools.map((e) => e.type === 'tool' && [e.id, e.status, e.result, e.error]),
      [
        ['tool:r1', 'completed', 'x = 1', undefined],
        ['tool:w1', 'failed', undefined, { type: 'Denied', message: 'The user denied this operation.\n<feedback>\nnot there\n</feedback>' }],
      ],
    );
    assert.deepEqual(lines(view), [
      'user: fix it',
      'assistant: Reading.',
      'tool read_file completed',
      'tool write_to_file failed Denied: The user denied this operation. (feedback: not there)',
      'system: Stopped.',
    ]);
  });

  it('a call without a result: pending in the last reply (live updates go on with the same card), interrupted before later messages', () => {
    const view = history([
      msg('assistant', '', { mode: 'code', toolCalls: [call('old', 'execute_command', { command: 'make' })] }),
      msg('user', 'and now?'),
      msg('assistant', 'Writing.', { mode: 'code', toolCalls: [call('now', 'write_to_file', { path: 'a.md' })] }),
    ]);
    assert.deepEqual(lines(view), [
      'tool execute_command failed Interrupted: No result was recorded for this call.',
      'user: and now?',
      'assistant: Writing.',
      'tool write_to_file pending',
    ]);
    const next = reduce(view, {
      type: 'update',
      update: { conversationId, kind: 'tool_call', turnId: 't', toolCallId: 'now', name: 'write_to_file', params: { path: 'a.md' }, status: 'completed', result: 'saved' },
    });
    assert.deepEqual(lines(next).slice(-1), ['tool write_to_file completed']);
    assert.equal(next.entries.length, view.entries.length);
  });

  it('plan_mode_respond and act_mode_respond are the assistant speaking, not cards; a refused one is a card', () => {
    const live = replay([
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'p1', name: 'plan_mode_respond', params: { response: 'The plan.' }, status: 'pending' }),
      up({ kind: 'message', turnId: 't1', role: 'assistant', text: 'The plan.' }),
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'p1', name: 'plan_mode_respond', params: { response: 'The plan.' }, status: 'completed', result: 'shown' }),
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'a1', name: 'act_mode_respond', params: { response: 'x' }, status: 'failed', error: { type: 'ToolNotAllowed', message: 'only in ACT' } }),
      up({ kind: 'phase_changed', from: 'plan', to: 'act', taskId: 't', by: 'user' }),
    ]);
    assert.deepEqual(lines(live), ['assistant: The plan.', 'tool act_mode_respond failed ToolNotAllowed: only in ACT', 'phase plan -> act']);
    assert.equal(live.phase, 'act');
    const stored = history([
      msg('user', 'plan it'),
      msg('assistant', '', { mode: 'code', toolCalls: [call('p1', 'plan_mode_respond', { response: 'The plan.', task_progress: '- [ ] one' })] }),
      msg('tool', '[The user switched to ACT MODE, so you may now proceed with the task.]', { toolCallId: 'p1', name: 'plan_mode_respond', isError: false }),
      msg('assistant', '', { mode: 'code', toolCalls: [call('a1', 'act_mode_respond', { response: 'Halfway.' }), call('a2', 'act_mode_respond', { response: 'Again.' })] }),
      msg('tool', 'Your message was shown to the user. Go on with the task.', { toolCallId: 'a1', name: 'act_mode_respond', isError: false }),
      msg('tool', '[BLOCKED] act_mode_respond cannot be called twice in a row.', { toolCallId: 'a2', name: 'act_mode_respond', isError: false }),
    ]);
    assert.deepEqual(lines(stored), ['user: plan it', 'assistant: The plan.\n\n- [ ] one', 'assistant: Halfway.']);
  });

  it('keeps the approvals still waiting for an answer when the entries are replaced', () => {
    const request = { kind: 'tool' as const, title: 'Write a?', detail: '' };
    let view = replay([
      { type: 'approval', id: 'done', request },
      { type: 'approval', id: 'waiting', request },
      { type: 'approvalAnswered', id: 'done', response: { decision: 'approve' } },
    ]);
    view = history([msg('user', 'hello')], view);
    assert.deepEqual(lines(view), ['user: hello', 'approval tool pending: Write a?']);
    view = reduce(view, { type: 'newConversation', conversationId: 'fresh' });
    assert.deepEqual(lines(view), ['approval tool pending: Write a?']);
  });
});

describe('describe', () => {
  it('lists an approval under the tool card it gates, and one without a card where it came', () => {
    const view = replay([
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'w', name: 'write_to_file', params: { path: 'a' }, status: 'pending' }),
      up({ kind: 'message', role: 'system', text: 'later' }),
      { type: 'approval', id: 'gated', request: { kind: 'tool', title: 'Write a?', detail: '', toolCallId: 'w' } },
      { type: 'approval', id: 'alone', request: { kind: 'tool', title: 'Write b?', detail: '', toolCallId: 'unknown' } },
    ]);
    assert.deepEqual(lines(view), [
      'tool write_to_file pending',
      '  approval tool pending: Write a?',
      'system: later',
      'approval tool pending: Write b?',
    ]);
  });

  it('splits the feedback off a denial', () => {
    assert.deepEqual(splitFeedback('The user denied this operation.\n<feedback>\nuse b.md\ninstead\n</feedback>'), {
      text: 'The user denied this operation.',
      feedback: 'use b.md\ninstead',
    });
    assert.deepEqual(splitFeedback('No such file.'), { text: 'No such file.' });
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
