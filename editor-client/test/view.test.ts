// The update reducer and the settings builder, without a server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { HistoryMessage, ModeInfo, PlanInfo, State, Update } from '../src/protocol/generated';
import { contextSummary } from '../src/protocol/context';
import { commandRule, mcpRule, modeRules } from '../src/protocol/modes';
import { buildSettings, explicitValue } from '../src/protocol/settings';
import {
  Action,
  describe as lines,
  gatedApprovals,
  initialView,
  layout,
  planApprovals,
  planBadge,
  planShown,
  planSteps,
  reduce,
  replay,
  restoreNote,
  splitFeedback,
  ViewState,
} from '../src/protocol/view';
import { addUsage, formatCost, formatCount, NO_USAGE, usageSummary, usageText } from '../src/protocol/usage';
import { decodeEntities, fenceLanguage, headingTag, lex, linkTarget, section, type Token, type Tokens } from '../src/webview/markdown';
import { splitPaths } from '../src/webview/paths';
import { candidates, insertMention, mentionAt } from '../src/webview/mentions';
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

  it("gathers the model's thinking in a block of its own, before the words it led to", () => {
    const view = replay([
      up({ kind: 'turn_started', turnId: 't1', agent: 'modus' }),
      up({ kind: 'thinking_delta', turnId: 't1', text: 'The user wants ' }),
      up({ kind: 'thinking_delta', turnId: 't1', text: 'a greeting.' }),
      up({ kind: 'message_delta', turnId: 't1', text: 'Hello.' }),
      up({ kind: 'thinking_delta', turnId: 't1', text: 'Now the file.' }),
      up({ kind: 'thinking_delta', turnId: 't2', text: 'Another turn.' }),
    ]);
    assert.deepEqual(lines(view), ['thinking: The user wants a greeting.', 'assistant: Hello.', 'thinking: Now the file.', 'thinking: Another turn.']);
  });

  it('updates a tool call in place and keeps its error', () => {
    const error = { type: 'FileRestrictionError', message: 'nope' };
    const view = replay([
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'x', name: 'write_to_file', params: { path: 'a.py' }, status: 'pending' }),
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'x', name: 'write_to_file', params: { path: 'a.py' }, status: 'failed', error }),
    ]);
    assert.deepEqual(lines(view), ['tool write_to_file failed FileRestrictionError: nope']);
  });

  it("says a hook's run that blocked, failed or ran out of time; a blocked call's card says its own", () => {
    const error = { type: 'HookBlocked', message: 'No shell here.' };
    const view = replay([
      up({ kind: 'hook', event: 'PreToolUse', command: 'check-bash', outcome: 'blocked', output: 'No shell here.' }),
      up({ kind: 'tool_call', turnId: 't1', toolCallId: 'x', name: 'execute_command', params: { command: 'rm -rf build' }, status: 'failed', error }),
      up({ kind: 'hook', event: 'PostToolUse', command: 'lint', outcome: 'ok', output: 'All clean.' }),
      up({ kind: 'hook', event: 'Stop', command: 'run-tests', outcome: 'blocked', output: 'Run the tests first.' }),
      up({ kind: 'hook', event: 'PostToolUse', command: 'broken', outcome: 'failed' }),
      up({ kind: 'hook', event: 'SessionStart', command: 'slow', outcome: 'timeout', output: null }),
    ]);
    assert.deepEqual(lines(view), [
      'tool execute_command failed HookBlocked: No shell here.',
      'system: The Stop hook `run-tests` blocked: Run the tests first.',
      'system: The PostToolUse hook `broken` failed.',
      'system: The SessionStart hook `slow` ran out of time.',
    ]);
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

  it('keeps an "Always allow" answer on its approval; a denial is never "always"', () => {
    const request = { kind: 'tool' as const, title: 'Run npm test?', detail: '', alwaysAllow: 'autoApprove.modes.code.command: "npm test"' };
    const view = replay([
      { type: 'approval', id: 'a1', request },
      { type: 'approval', id: 'a2', request },
      { type: 'approvalAnswered', id: 'a1', response: { decision: 'approve', always: true } },
      { type: 'approvalAnswered', id: 'a2', response: { decision: 'deny', always: true } },
    ]);
    assert.deepEqual(lines(view), ['approval tool approve (always): Run npm test?', 'approval tool deny: Run npm test?']);
    assert.deepEqual(
      view.entries.map((e) => e.type === 'approval' && e.always),
      [true, undefined],
    );
  });

  it('keeps yolo from the state', () => {
    const state = (yolo: boolean): State => ({
      mode: { slug: 'code', name: 'Code' },
      phase: 'act',
      conversationId: C,
      yolo,
      task: { id: 't', mode: 'code', phase: 'act', model: { provider: 'scripted', model: null, reasoningEffort: null, thinkingBudgetTokens: null, maxTokens: null } },
      usage: NO_USAGE,
      plan: { state: 'normal', completedSteps: [] },
    });
    assert.equal(initialView().yolo, false);
    assert.equal(replay([{ type: 'state', state: state(true) }]).yolo, true);
    assert.equal(replay([{ type: 'state', state: state(true) }, { type: 'state', state: state(false) }]).yolo, false);
    // a settings file edited: the server tells the new state
    const edited = replay([{ type: 'state', state: state(false) }, up({ kind: 'state_changed', state: state(true) })]);
    assert.equal(edited.yolo, true);
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

  it('shows a message with @-mentions as the user typed it', () => {
    const view = history([msg('user', 'design the cache.', { typed: '@architect design the cache.' }), msg('user', 'plain')]);
    assert.deepEqual(lines(view), ['user: @architect design the cache.', 'user: plain']);
  });

  it('groups a stored conversation by the turn each message names, with who woke it, as live', () => {
    const turn = (turnId: string, wokenBy?: string) => ({ turnId, ...(wokenBy ? { wokenBy } : {}) });
    const m = (role: HistoryMessage['role'], text: string, agent: string | undefined, metadata: Record<string, unknown>): HistoryMessage => ({
      id: `m-${text}`,
      role,
      text,
      metadata,
      ...(agent ? { agent } : {}),
    });
    const messages: HistoryMessage[] = [
      m('user', 'design the cache', undefined, { typed: '@architect design the cache' }),
      m('assistant', 'An LRU. @coder, build it.', 'architect', turn('ta')),
      m('assistant', 'Reading.', 'coder', { ...turn('tc', 'architect'), toolCalls: [{ id: 'r', name: 'read_file', arguments: { path: 'a.py' } }] }),
      m('tool', 'x = 1', undefined, { ...turn('tc', 'architect'), toolCallId: 'r', name: 'read_file', isError: false }),
      m('assistant', 'Built, @architect.', 'coder', turn('tc', 'architect')),
      m('system', 'Mentions not delivered: @architect (already in this chain).', 'coder', {
        ...turn('tc', 'architect'),
        mentionsRefused: [{ mention: '@architect', reason: 'already in this chain' }],
      }),
      // a second turn of the architect after the same user message: a block of its own
      m('assistant', 'Reviewed it.', 'architect', turn('ta2', 'coder')),
    ];
    const view = reduce(initialView(), { type: 'history', conversationId: C, messages });
    assert.deepEqual(
      layout(view).map((item) => (item.type === 'turn' ? `${item.turnId} ${item.agent}${item.wokenBy ? ` (woken by ${item.wokenBy})` : ''}: ${item.entries.length}` : item.entry.type)),
      ['user', 'ta architect: 1', 'tc coder (woken by architect): 4', 'ta2 architect (woken by coder): 1'],
    );
    const system = view.entries.find((e) => e.type === 'system');
    assert.deepEqual(system?.type === 'system' && system.mentionsRefused, [{ mention: '@architect', reason: 'already in this chain' }]);
    // a live update of a stored turn (still running) goes on in its block
    const live = reduce(view, up({ kind: 'message', turnId: 'ta2', agent: 'architect', role: 'assistant', text: 'And one more thing.' }));
    const last = layout(live).at(-1)!;
    assert.ok(last.type === 'turn' && last.turnId === 'ta2' && last.entries.length === 2);
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
  it('forwards a setting the user set in some scope, not the default VS Code fills in', () => {
    assert.equal(explicitValue({}, false), undefined, 'only the default: left out, the settings files apply');
    assert.equal(explicitValue(undefined, false), undefined);
    assert.equal(explicitValue({ globalValue: true }, true), true);
    assert.equal(explicitValue({ workspaceValue: false }, false), false, 'a false the user chose is forwarded');
    assert.deepEqual(explicitValue({ workspaceFolderValue: { edit: true } }, { edit: true }), { edit: true });
    // VS Code resolves the value (an untrusted workspace's restricted setting falls back to the user's or the default)
    assert.equal(explicitValue({ workspaceValue: true }, false), false);
  });

  it('the manifest enables "Modus: Trust Workspace Settings" only in a trusted workspace', () => {
    const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8'));
    const command = manifest.contributes.commands.find((c: { command: string }) => c.command === 'modus.ui.trustWorkspaceSettings');
    assert.deepEqual(command, {
      command: 'modus.ui.trustWorkspaceSettings',
      title: 'Trust Workspace Settings',
      category: 'Modus',
      enablement: 'isWorkspaceTrusted',
    });
  });

  it('forwards the server settings and leaves out empty ones', () => {
    const config: Record<string, unknown> = {
      models: { default: { provider: 'scripted', script: 's.yaml' } },
      autoApprove: { edit: true },
      yolo: false,
      modeSwitchDelayMs: 0,
      agents: [],
      members: [{ handle: 'ann', name: 'Ann' }],
      stateDir: '',
      globalModesFile: '~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/custom_modes.yaml',
      browser: { viewport: '1024x768', allowedHosts: ['*.example.com'] },
      pythonPath: '/usr/bin/python3',
    };
    assert.deepEqual(buildSettings((k) => config[k]), {
      models: { default: { provider: 'scripted', script: 's.yaml' } },
      autoApprove: { edit: true },
      yolo: false,
      modeSwitchDelayMs: 0,
      members: [{ handle: 'ann', name: 'Ann' }],
      globalModesFile: '~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/custom_modes.yaml',
      browser: { viewport: '1024x768', allowedHosts: ['*.example.com'] },
    });
  });
});

describe('mode rules (the mode picker)', () => {
  const mode = (groups: ModeInfo['groups']) => ({ groups });
  const rows: [string, ModeInfo['groups'], string | undefined, string][] = [
    ['built-in code', ['read', 'edit', 'command', 'mcp'], 'all MCP servers', 'any command'],
    ['architect: no command group', ['read', ['edit', { fileRegex: '\\.md$' }], 'mcp'], 'all MCP servers', 'no commands'],
    ['no mcp group', ['read', 'command'], undefined, 'any command'],
    ['orchestrator: no groups', [], undefined, 'no commands'],
    [
      'servers and command rules',
      ['read', ['mcp', { servers: ['docs', 'github'] }], ['command', { allow: ['git log*', 'git diff*'], deny: ['rm -rf *'] }]],
      'MCP: docs, github',
      'commands: allow git log*, git diff*; deny rm -rf *',
    ],
    ['deny only', [['command', { deny: ['rm -rf *'] }]], undefined, 'commands: allow any; deny rm -rf *'],
    ['allow only', [['command', { allow: ['npm test'] }]], undefined, 'commands: allow npm test'],
    ['an empty allow list', [['command', { allow: [] }]], undefined, 'no commands (an empty allow list)'],
    ['no servers', [['mcp', { servers: [] }]], 'no MCP servers', 'no commands'],
    ['options without rules', [['command', { description: 'shell' }], ['mcp', { description: 'tools' }]], 'all MCP servers', 'any command'],
  ];
  for (const [name, groups, mcp, commands] of rows) {
    it(name, () => {
      assert.equal(mcpRule(mode(groups)), mcp);
      assert.equal(commandRule(mode(groups)), commands);
      assert.equal(modeRules(mode(groups)), [mcp, commands].filter(Boolean).join(' · '));
    });
  }
});

describe('MCP servers', () => {
  const servers = [
    { name: 'docs', state: 'connected' as const, tools: [{ name: 'search' }], resources: [] },
    { name: 'broken', state: 'failed' as const, error: 'exited with 1', tools: [], resources: [] },
  ];
  it('come from the list, then from mcp_changed of any conversation; null: the server has no MCP', () => {
    assert.equal(initialView().mcp, null);
    let view = replay([up({ kind: 'message', role: 'user', text: 'hi' }), { type: 'mcp', servers }]);
    assert.deepEqual(view.mcp, servers);
    const restarted = [{ ...servers[1], state: 'starting' as const, error: undefined }];
    view = reduce(view, { type: 'update', update: { conversationId: 'elsewhere', kind: 'mcp_changed', servers: restarted } });
    assert.deepEqual(view.mcp, restarted);
    assert.deepEqual(lines(view), ['user: hi'], 'nothing in the log');
    assert.equal(reduce(view, { type: 'mcp', servers: null }).mcp, null);
  });
});

describe('plan and todos', () => {
  const PLAN = {
    summary: 'Greet loudly',
    approach: 'Add a flag',
    steps: [
      { id: '2', description: 'Document it', files: ['docs/usage.md'], depends_on: ['1'], verification: 'read it' },
      { id: '1', description: 'Add the flag', files: ['src/app.py'], depends_on: [], verification: 'run it' },
      { id: '3', description: 'Announce it', files: [], depends_on: [], verification: 'ask' },
    ],
  };
  const info = (state: PlanInfo['state'], completedSteps: string[] = [], more: Partial<PlanInfo> = {}): Action => ({
    type: 'state',
    state: {
      mode: { slug: 'code', name: 'Code' },
      phase: state === 'executing' ? 'act' : 'plan',
      conversationId: C,
      yolo: false,
      task: { id: 't', mode: 'code', phase: 'act', model: { provider: 'scripted', model: null, reasoningEffort: null, thinkingBudgetTokens: null, maxTokens: null } },
      usage: NO_USAGE,
      plan: state === 'normal' ? { state, completedSteps: [] } : { state, goal: 'Add --shout', scope: ['src'], planId: 'p1', plan: PLAN, completedSteps, ...more },
    },
  });
  const plan = (state: string, completedSteps: string[] = [], markdown?: string) =>
    up({ kind: 'plan', state, completedSteps, ...(state === 'planning' && !markdown ? {} : { plan: PLAN }), ...(markdown ? { markdown } : {}) });
  const steps = (view: ViewState) => planSteps(view.plan!).map((s) => `${s.id}:${s.status}`);

  it('follows the plan from drafting to completed: badge, steps in dependency order, the current step', () => {
    let view = replay([plan('planning')]);
    assert.equal(planBadge(view.plan!), 'drafting');
    assert.equal(view.plan!.goal, undefined, 'a plan update does not name the plan');
    view = reduce(view, info('planning', [], { plan: undefined })); // what the extension reads next
    assert.deepEqual([view.plan!.goal, view.plan!.scope, view.plan!.planId], ['Add --shout', ['src'], 'p1']);
    view = reduce(view, plan('awaiting_approval', [], '# Plan: Add --shout\n\nStatus: pending approval\n'));
    assert.equal(planBadge(view.plan!), 'pending approval');
    assert.equal(view.plan!.goal, 'Add --shout', 'the same plan keeps its goal');
    assert.deepEqual(steps(view), ['1:pending', '2:pending', '3:pending']);
    view = reduce(view, plan('executing'));
    assert.deepEqual(steps(view), ['1:current', '2:pending', '3:pending']);
    assert.equal(planBadge(view.plan!), 'step 1 of 3');
    view = reduce(view, plan('executing', ['1']));
    assert.deepEqual(steps(view), ['1:done', '2:current', '3:pending']);
    assert.equal(planBadge(view.plan!), 'step 2 of 3');
    view = reduce(view, plan('executing', ['1', '2', '3']));
    assert.equal(planBadge(view.plan!), 'all 3 steps done');
    view = reduce(view, plan('normal', ['1', '2', '3'], '# Plan: Add --shout\n\nStatus: completed\n\n## Outcome\n\nDone.\n'));
    assert.equal(planBadge(view.plan!), 'completed');
    assert.ok(planShown(view));
    view = reduce(view, info('normal'));
    assert.equal(view.plan?.ended, 'completed', 'the state (no plan) keeps the card of the plan that just ended');
    assert.equal(view.plan?.goal, 'Add --shout');
    // the next plan starts without the old one's name
    view = reduce(view, plan('planning'));
    assert.equal(view.plan!.goal, undefined);
    assert.equal(planBadge(view.plan!), 'drafting');
  });

  it('a rejected plan reads as rejected; with no plan nothing is shown', () => {
    const view = replay([plan('awaiting_approval'), plan('normal', [], '# Plan: x\n\nStatus: rejected\n')]);
    assert.equal(planBadge(view.plan!), 'rejected');
    assert.ok(planShown(view));
    assert.equal(reduce(initialView(), info('normal')).plan, null);
    assert.ok(!planShown(reduce(initialView(), info('normal'))));
  });

  it('after a reload the state alone shows the plan; the markdown is kept only while the state confirms it', () => {
    const reloaded = reduce(initialView(), info('awaiting_approval'));
    assert.ok(planShown(reloaded));
    assert.equal(planBadge(reloaded.plan!), 'pending approval');
    assert.equal(reloaded.plan!.markdown, undefined);
    const md = '# Plan: Add --shout\n\nStatus: step 2 of 3\n';
    const live = replay([info('executing'), plan('executing', ['1'], md)]);
    assert.equal(reduce(live, info('executing', ['1'])).plan!.markdown, md);
    assert.equal(reduce(live, info('executing', ['1', '2'])).plan!.markdown, undefined, 'a later state: that text is old');
  });

  it('plan and todo updates of any conversation are the agent’s; a new conversation keeps them, not an ended plan', () => {
    const todos = [
      { id: 't1', content: 'Add the flag', status: 'completed' as const, priority: 'high' as const },
      { id: 't2', content: 'Document it', status: 'in_progress' as const, priority: 'medium' as const },
    ];
    let view = replay([up({ kind: 'message', role: 'user', text: 'hi' })]);
    view = reduce(view, { type: 'update', update: { conversationId: 'other', kind: 'todos', agent: 'modus', todos } });
    view = reduce(view, { type: 'update', update: { conversationId: 'other', kind: 'plan', state: 'executing', plan: PLAN, completedSteps: [] } });
    assert.deepEqual(view.todos, todos);
    assert.equal(view.plan!.state, 'executing');
    view = reduce(view, { type: 'newConversation', conversationId: 'fresh' });
    view = reduce(view, { type: 'history', conversationId: 'fresh', messages: [] });
    assert.deepEqual([view.todos, view.plan!.state], [todos, 'executing']);
    view = reduce(view, plan('normal', [], 'Status: completed'));
    assert.equal(reduce(view, { type: 'newConversation', conversationId: 'newer' }).plan, null);
    // modus/todos/get on start
    assert.deepEqual(reduce(initialView(), { type: 'todos', todos }).todos, todos);
  });

  it('a pending plan approval goes in the plan card, and back in its tool card once answered', () => {
    const request = { kind: 'plan' as const, title: 'Approve the plan: Add --shout?', detail: 'md', tool: 'plan_exit', toolCallId: 'x' };
    const base = [
      up({ kind: 'tool_call', turnId: 't', toolCallId: 'x', name: 'plan_exit', params: {}, status: 'running' }),
      { type: 'approval', id: 'a', request } as Action,
    ];
    const alone = replay(base);
    assert.deepEqual(planApprovals(alone), [], 'no plan card: in its tool card');
    assert.deepEqual([...gatedApprovals(alone).keys()], ['tool:x']);
    const asked = replay([plan('awaiting_approval'), ...base]);
    assert.deepEqual(planApprovals(asked).map((a) => a.id), ['a']);
    assert.equal(gatedApprovals(asked).size, 0);
    const answered = reduce(asked, { type: 'approvalAnswered', id: 'a', response: { decision: 'approve' } });
    assert.deepEqual(planApprovals(answered), []);
    assert.deepEqual([...gatedApprovals(answered).keys()], ['tool:x']);
  });
});

describe('plan markdown', () => {
  // server/plan/markdown.py's render() of an executing plan, the first step's output with a fence in it
  const DOC = [
    '# Plan: Add --shout',
    '',
    'Status: step 2 of 2',
    '',
    'Plan id: p1 · Estimated complexity: small',
    '',
    '## Approach',
    '',
    'Add a `--shout` flag',
    'on two lines',
    '',
    '## Steps',
    '',
    '- [x] 1. Add the flag',
    '  - Files: `src/app.py`',
    '  - Result:',
    '    ````text',
    '    HI',
    '    ```',
    '    fenced',
    '    ````',
    '- [ ] 2. Document it (current)',
    '  second line of the step',
    '',
    '## Outcome',
    '',
    'Shouting works.',
    '- Deviation: none',
    '',
  ].join('\n');

  /** A token in short: its type and text; a list as its items (`[x] text`, nested lists and code after `>`). */
  const short = (t: Token): unknown => {
    if (t.type === 'list')
      return (t as Tokens.List).items.map((i) => {
        const nested = i.tokens.filter((c) => c.type === 'list' || c.type === 'code').map(short);
        const text = `${i.task ? (i.checked ? '[x] ' : '[ ] ') : ''}${i.text.split('\n')[0]}`;
        return nested.length ? [text, ...nested] : text;
      });
    if (t.type === 'code') return `code: ${(t as Tokens.Code).text}`;
    if (t.type === 'heading') return `h${(t as Tokens.Heading).depth}: ${t.text}`;
    return `${t.type}: ${(t as Tokens.Generic).text}`;
  };

  it('reads headings, task items nested by indent, a fence longer than the backticks inside, paragraphs (marked)', () => {
    assert.deepEqual(lex(DOC).filter((t) => t.type !== 'space').map(short), [
      'h1: Plan: Add --shout',
      'paragraph: Status: step 2 of 2',
      'paragraph: Plan id: p1 · Estimated complexity: small',
      'h2: Approach',
      'paragraph: Add a `--shout` flag\non two lines',
      'h2: Steps',
      [['[x] 1. Add the flag', ['Files: `src/app.py`', ['Result:', 'code: HI\n```\nfenced']]], '[ ] 2. Document it (current)'],
      'h2: Outcome',
      'paragraph: Shouting works.',
      ['Deviation: none'],
    ]);
    assert.deepEqual(section(lex(DOC), 'Outcome').map(short), ['paragraph: Shouting works.', ['Deviation: none']]);
    assert.deepEqual(section(lex(DOC), 'Nowhere'), []);
  });
});

describe('Markdown in the chat, without the DOM', () => {
  it('a fence still open mid-stream is code to the end; a closed one ends where it closes', () => {
    assert.deepEqual(lex('Here:\n\n```py\nprint(1)\n').filter((t) => t.type !== 'space').map((t) => [t.type, t.type === 'code' ? [t.lang, t.text] : (t as Tokens.Generic).text]), [
      ['paragraph', 'Here:'],
      ['code', ['py', 'print(1)']],
    ]);
    assert.deepEqual(lex('```\na\n```\nafter').map((t) => t.type), ['code', 'paragraph']);
  });

  it('links go to http(s) pages or workspace paths; any other scheme stays text', () => {
    const rows: [string, unknown][] = [
      ['https://example.com/a?b=1#c', { kind: 'web', url: 'https://example.com/a?b=1#c' }],
      ['HTTP://Example.com', { kind: 'web', url: 'http://example.com/' }],
      ['javascript:alert(1)', null],
      [' JavaScript:alert(1)', null],
      ['java\tscript:alert(1)', null],
      ['data:text/html,<script>x</script>', null],
      ['file:///etc/passwd', null],
      ['command:workbench.action.terminal.new', null],
      ['vscode://modus.modus/x', null],
      ['mailto:a@b.c', null],
      ['//evil.example/x.py', null],
      ['#anchor', null],
      ['', null],
      ['src/app.py', { kind: 'path', ref: { path: 'src/app.py' } }],
      ['src/app.py:12', { kind: 'path', ref: { path: 'src/app.py', line: 12 } }],
      ['src/app.py:12:5', { kind: 'path', ref: { path: 'src/app.py', line: 12, column: 5 } }],
      ['src/app.py#L12', { kind: 'path', ref: { path: 'src/app.py', line: 12 } }],
      ['src/app.py#L12C3-L14', { kind: 'path', ref: { path: 'src/app.py', line: 12, column: 3 } }],
      ['src/my%20file.py', { kind: 'path', ref: { path: 'src/my file.py' } }],
      ['src/app.py#intro', null],
      ['src/app.py?raw=1', null],
    ];
    for (const [href, want] of rows) assert.deepEqual(linkTarget(href), want, href);
  });

  it('finds paths in text: path, path:line, path:line:col; words that only look dotted stay text', () => {
    const refs = (text: string) => splitPaths(text).filter((r) => r.ref).map((r) => [r.text, r.ref]);
    assert.deepEqual(refs('See src/app.py:12, then (tests/test_app.py:3:9) and README.md.'), [
      ['src/app.py:12', { path: 'src/app.py', line: 12 }],
      ['tests/test_app.py:3:9', { path: 'tests/test_app.py', line: 3, column: 9 }],
      ['README.md', { path: 'README.md' }],
    ]);
    assert.deepEqual(refs('src/app.py:12: AssertionError'), [['src/app.py:12', { path: 'src/app.py', line: 12 }]]);
    assert.deepEqual(refs('/abs/x.ts ../up.py ./here.js'), [
      ['/abs/x.ts', { path: '/abs/x.ts' }],
      ['../up.py', { path: '../up.py' }],
      ['./here.js', { path: './here.js' }],
    ]);
    assert.deepEqual(refs('src/Makefile:4'), [['src/Makefile:4', { path: 'src/Makefile', line: 4 }]]);
    for (const text of ['e.g. this', 'and/or', 'v1.2.3', 'os.path.join', 'self.value', 'https://example.com/a.py', 'a@b.com', 'src/'])
      assert.deepEqual(refs(text), [], text);
    // a bare name with a file's extension is asked about: the extension says it is no file
    assert.deepEqual(refs('Node.js 20'), [['Node.js', { path: 'Node.js' }]]);
    // the runs put the text back together as it was
    const text = 'x src/a.py:1 y';
    assert.equal(splitPaths(text).map((r) => r.text).join(''), text);
  });

  it('reads entities the lexer leaves in text, and a fence info string as a language', () => {
    assert.equal(decodeEntities('a &amp; b &lt;i&gt; &#8594; &#x2192; &bogus; &#0;'), 'a & b <i> → → &bogus; \ufffd');
    assert.deepEqual(['py', 'Python title="x"', '{.ts}', '', undefined].map(fenceLanguage), ['py', 'python', 'ts', '', '']);
    assert.deepEqual([1, 2, 3, 4, 6].map(headingTag), ['h3', 'h4', 'h5', 'h6', 'h6']);
  });
});

describe('several agents', () => {
  /** The layout in short: a turn's block as `agent (woken by x): line | line`, other entries as their line. */
  const blocks = (view: ViewState) =>
    layout(view).map((item) =>
      item.type === 'entry'
        ? lines({ ...view, entries: [item.entry] })[0]
        : `${item.agent}${item.wokenBy ? ` (woken by ${item.wokenBy})` : ''}: ${lines({ ...view, entries: item.entries }).join(' | ')}`,
    );

  it('keeps two turns streaming at once in two blocks, each with its text and its tool cards', () => {
    const view = replay([
      up({ kind: 'message', role: 'user', text: '@architect @coder go' }),
      up({ kind: 'turn_started', turnId: 'a', agent: 'architect' }),
      up({ kind: 'turn_started', turnId: 'c', agent: 'coder' }),
      up({ kind: 'message_delta', turnId: 'a', agent: 'architect', text: 'Design' }),
      up({ kind: 'message_delta', turnId: 'c', agent: 'coder', text: 'Code' }),
      up({ kind: 'message_delta', turnId: 'a', agent: 'architect', text: 'ing.' }),
      up({ kind: 'tool_call', turnId: 'c', agent: 'coder', toolCallId: 'r', name: 'read_file', params: { path: 'a.py' }, status: 'running' }),
      up({ kind: 'message_delta', turnId: 'c', agent: 'coder', text: 'Read it.' }),
      up({ kind: 'tool_call', turnId: 'a', agent: 'architect', toolCallId: 'w', name: 'write_to_file', params: { path: 'd.md' }, status: 'pending' }),
      up({ kind: 'message_delta', turnId: 'a', agent: 'architect', text: ' Written.' }),
    ]);
    assert.deepEqual(blocks(view), [
      'user: @architect @coder go',
      'architect: assistant: Designing. | tool write_to_file pending | assistant:  Written.',
      'coder: assistant: Code | tool read_file running | assistant: Read it.',
    ]);
    assert.deepEqual(lines(view), [
      'user: @architect @coder go',
      'assistant: Designing.',
      'tool write_to_file pending',
      'assistant:  Written.',
      'assistant: Code',
      'tool read_file running',
      'assistant: Read it.',
    ]);
  });

  it('names who woke a turn, and puts the refused mentions, a failed end and a mode change by the model in their turn', () => {
    const view = replay([
      up({ kind: 'turn_started', turnId: 'a', agent: 'architect' }),
      up({ kind: 'message', turnId: 'a', agent: 'architect', role: 'assistant', text: 'Over to @coder.' }),
      up({ kind: 'turn_ended', turnId: 'a', agent: 'architect', outcome: 'completed' }),
      up({ kind: 'turn_started', turnId: 'c', agent: 'coder', wokenBy: 'architect' }),
      up({ kind: 'mode_changed', agent: 'coder', from: 'code', to: 'debug', taskId: 'k', by: 'model' }),
      up({ kind: 'message', turnId: 'c', agent: 'coder', role: 'assistant', text: 'Done, @architect.' }),
      up({ kind: 'message', turnId: 'c', agent: 'coder', role: 'system', text: 'Mentions not delivered: @architect (already in this chain).' }),
      up({ kind: 'turn_ended', turnId: 'c', agent: 'coder', outcome: 'failed' }),
      up({ kind: 'mode_changed', agent: 'coder', from: 'debug', to: 'code', taskId: 'k2', by: 'user' }),
    ]);
    assert.deepEqual(blocks(view), [
      'architect: assistant: Over to @coder.',
      'coder (woken by architect): mode code -> debug | assistant: Done, @architect. | system: Mentions not delivered: @architect (already in this chain). | turn failed',
      'mode debug -> code',
    ]);
  });

  it('a user message while a turn runs keeps its place: what the turn shows after it goes in a block below it', () => {
    const view = replay([
      up({ kind: 'turn_started', turnId: 't', agent: 'modus' }),
      up({ kind: 'message', turnId: 't', agent: 'modus', role: 'assistant', text: 'Reading.' }),
      up({ kind: 'tool_call', turnId: 't', agent: 'modus', toolCallId: 'r', name: 'read_file', params: { path: 'a' }, status: 'running' }),
      up({ kind: 'message', role: 'user', text: 'and b too' }),
      up({ kind: 'tool_call', turnId: 't', agent: 'modus', toolCallId: 'r', name: 'read_file', params: { path: 'a' }, status: 'completed', result: 'x' }),
      up({ kind: 'message', turnId: 't', agent: 'modus', role: 'assistant', text: 'Reading b as well.' }),
    ]);
    assert.deepEqual(blocks(view), ['modus: assistant: Reading. | tool read_file completed', 'user: and b too', 'modus: assistant: Reading b as well.']);
    assert.deepEqual(
      layout(view).flatMap((item) => (item.type === 'turn' ? [item.key] : [])),
      ['t#1', 't#2'],
    );
  });

  it('a turn whose start was missed (the view opened meanwhile) is named by its updates', () => {
    const view = replay([up({ kind: 'message_delta', turnId: 'x', agent: 'coder', text: 'still going' })]);
    assert.deepEqual(blocks(view), ['coder: assistant: still going']);
  });

  it('a stored conversation shows each agent’s messages after a user message as one turn', () => {
    const message = (role: HistoryMessage['role'], text: string, agent?: string, metadata: Record<string, unknown> = {}): HistoryMessage =>
      ({ id: `m-${text}`, role, text, metadata, ...(agent ? { agent } : {}) });
    const view = reduce(initialView(), {
      type: 'history',
      conversationId: C,
      messages: [
        message('user', 'design the cache', undefined, { typed: '@architect design the cache' }),
        message('assistant', 'An LRU. @coder, build it.', 'architect'),
        message('assistant', 'Reading.', 'coder', { toolCalls: [{ id: 'r', name: 'read_file', arguments: { path: 'a.py' } }] }),
        message('assistant', 'Noted.', 'architect'),
        message('tool', 'x = 1', undefined, { toolCallId: 'r', name: 'read_file', isError: false }),
        message('assistant', 'Built, @architect.', 'coder'),
        message('system', 'Mentions not delivered: @architect (already in this chain).', 'coder'),
        message('user', 'thanks'),
        message('assistant', 'You are welcome.', 'architect'),
      ],
    });
    assert.deepEqual(blocks(view), [
      'user: @architect design the cache',
      'architect: assistant: An LRU. @coder, build it. | assistant: Noted.',
      'coder: assistant: Reading. | tool read_file completed | assistant: Built, @architect. | system: Mentions not delivered: @architect (already in this chain).',
      'user: thanks',
      'architect: assistant: You are welcome.',
    ]);
  });
});

describe('@-completion', () => {
  const list = {
    agents: [
      { name: 'architect', topLevel: true, mode: 'architect', source: 'workspace' as const },
      { name: 'Ask-bot', topLevel: false, mode: 'ask', source: 'settings' as const },
      { name: 'coder', topLevel: false, mode: 'code', source: 'workspace' as const },
    ],
    members: [{ handle: 'alice', name: 'Alice Liddell' }],
  };
  const names = (slug: string) => ({ architect: 'Architect', ask: 'Ask', code: 'Code' })[slug] ?? slug;

  it('finds the @ token before the caret, where the server would read a mention', () => {
    assert.deepEqual(mentionAt('@', 1), { start: 0, end: 1, query: '' });
    assert.deepEqual(mentionAt('hi @arc', 7), { start: 3, end: 7, query: 'arc' });
    assert.deepEqual(mentionAt('hi @arc more', 5), { start: 3, end: 7, query: 'a' }, 'the whole token is replaced');
    assert.deepEqual(mentionAt('(@code-r', 8), { start: 1, end: 8, query: 'code-r' });
    assert.equal(mentionAt('sam@host', 8), null, 'an address');
    assert.equal(mentionAt('hi @arc and', 11), null, 'the caret left the token');
    assert.equal(mentionAt('no mention', 5), null);
  });

  it('lists agents in configuration order, then members, by a prefix of the name, case ignored', () => {
    assert.deepEqual(candidates(list, '', names), [
      { name: 'architect', kind: 'top-level', detail: 'Architect' },
      { name: 'Ask-bot', kind: 'subordinate', detail: 'Ask' },
      { name: 'coder', kind: 'subordinate', detail: 'Code' },
      { name: 'alice', kind: 'member', detail: 'Alice Liddell' },
    ]);
    assert.deepEqual(candidates(list, 'A', names).map((c) => c.name), ['architect', 'Ask-bot', 'alice']);
    assert.deepEqual(candidates(list, 'ask-', names).map((c) => c.name), ['Ask-bot']);
    assert.deepEqual(candidates(list, 'z', names), []);
  });

  it('puts @name and one space in place of the token, the caret after it', () => {
    assert.deepEqual(insertMention('hi @ar', { start: 3, end: 6, query: 'ar' }, 'architect'), { text: 'hi @architect ', caret: 14 });
    assert.deepEqual(insertMention('@ar design', { start: 0, end: 3, query: 'ar' }, 'architect'), { text: '@architect design', caret: 11 });
  });
});

describe('checkpoints and restores', () => {
  const cp = (id: string, toolCallId?: string) => ({ id, conversationId: C, createdAt: '2025-01-01T00:00:00+00:00', label: `before ${id}`, ...(toolCallId ? { toolCallId } : {}) });
  const call = (toolCallId: string, status = 'completed') =>
    up({ kind: 'tool_call', turnId: 't1', agent: 'modus', toolCallId, name: 'write_to_file', params: { path: 'a.txt' }, status });

  it('keeps the checkpoints taken before a call by its toolCallId; a turn’s start and another conversation’s list are left out', () => {
    let view = replay([call('call-1'), call('call-2')]);
    view = reduce(view, { type: 'checkpoints', conversationId: C, checkpoints: [cp('k0'), cp('k1', 'call-1')] });
    assert.deepEqual(Object.keys(view.checkpoints), ['call-1']);
    assert.equal(view.checkpoints['call-1'].id, 'k1');
    assert.equal(reduce(view, { type: 'checkpoints', conversationId: 'elsewhere', checkpoints: [] }), view, 'a late answer about another conversation');
    // a new conversation has none; the history of the same conversation keeps them
    assert.deepEqual(reduce(view, { type: 'newConversation', conversationId: 'c2' }).checkpoints, {});
    assert.equal(reduce(view, { type: 'history', conversationId: C, messages: [] }).checkpoints, view.checkpoints);
    assert.deepEqual(reduce(view, { type: 'history', conversationId: 'c2', messages: [] }).checkpoints, {});
  });

  it('a restore waits, then leaves a note with Undo restore; undoing marks it and notes the undo', () => {
    let view = replay([call('call-1'), { type: 'restoreStarted', checkpointId: 'k1' }]);
    assert.equal(view.restoring, 'k1');
    view = reduce(view, { type: 'restored', what: 'files', result: { restored: ['a.txt', 'src/b.py'], checkpoint: 'k-before', conversationId: C } });
    assert.equal(view.restoring, null);
    const note = view.entries[view.entries.length - 1];
    assert.deepEqual(note, { type: 'restore', id: note.id, what: 'files', restored: ['a.txt', 'src/b.py'], undo: 'k-before' });
    assert.deepEqual(lines(view), ['tool write_to_file completed', 'Restored 2 files: a.txt, src/b.py. [Undo restore]']);

    view = replay(
      [
        { type: 'restoreStarted', checkpointId: 'k-before' },
        { type: 'restored', what: 'files', result: { restored: ['a.txt'], checkpoint: 'k-undo', conversationId: C }, undoOf: note.id },
      ],
      view,
    );
    assert.deepEqual(lines(view).slice(1), ['Restored 2 files: a.txt, src/b.py (undone).', 'Restore undone: put back 1 file: a.txt.']);
    assert.equal(view.restoring, null);
  });

  it('a failed restore is an error in the chat and the buttons come back', () => {
    const view = replay([{ type: 'restoreStarted', checkpointId: 'k1' }, { type: 'restoreFailed', text: 'Could not restore: a turn is running' }]);
    assert.equal(view.restoring, null);
    assert.deepEqual(lines(view), ['error: Could not restore: a turn is running']);
  });

  it('says what came back', () => {
    const note = (what: 'files' | 'both' | 'undo', restored: string[], undone = false) => restoreNote({ type: 'restore', id: 'e', what, restored, undone });
    assert.equal(note('files', ['a.txt']), 'Restored 1 file: a.txt.');
    assert.equal(note('files', []), 'Restored: no file had changed.');
    assert.equal(note('both', ['a.txt', 'b.txt']), 'Restored the conversation and 2 files: a.txt, b.txt.');
    assert.equal(note('both', []), 'Restored the conversation (no file had changed).');
    assert.equal(note('files', ['a.txt'], true), 'Restored 1 file: a.txt (undone).');
    assert.equal(note('both', ['a.txt'], true), 'Restored the conversation and 1 file: a.txt (the files undone).');
    assert.equal(note('undo', ['a.txt']), 'Restore undone: put back 1 file: a.txt.');
    assert.equal(note('undo', []), 'Restore undone: no file had changed.');
    // nothing to put back: no Undo
    const view = reduce(initialView(), { type: 'restored', what: 'both', result: { restored: [], checkpoint: 'k', conversationId: C } });
    assert.equal((view.entries[0] as { undo?: string }).undo, undefined);
  });
});

describe('usage and cost', () => {
  const usage = (taskId: string, mode: string, phase: 'plan' | 'act', inputTokens: number, outputTokens: number, cost: number | null, extra = {}) =>
    up({ kind: 'usage', taskId, agent: 'modus', mode, phase, inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, cost, ...extra });
  const state = (taskId: string): State => ({
    conversationId: C,
    mode: { slug: 'code', name: 'Code' },
    phase: 'act',
    yolo: false,
    plan: { state: 'normal', completedSteps: [] } as unknown as PlanInfo,
    task: { id: taskId, mode: 'code', phase: 'act', model: { provider: 'scripted', model: null, maxTokens: null, reasoningEffort: null, thinkingBudgetTokens: null } },
    usage: NO_USAGE,
  });

  it('sums each usage update per task, mode and phase, agent and in total, as modus/usage/get does', () => {
    const view = replay([
      { type: 'state', state: state('task-1') },
      usage('task-1', 'code', 'act', 10_000, 300, 0.0345, { cacheReadTokens: 2000 }),
      usage('task-1', 'code', 'act', 1000, 100, 0.0045),
      usage('task-2', 'architect', 'plan', 5000, 200, 0.018),
      up({ conversationId: 'elsewhere', kind: 'usage', taskId: 'x', agent: 'modus', mode: 'code', phase: 'act', inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 1 }),
    ]);
    const u = view.usage!;
    assert.deepEqual(u.total, { inputTokens: 16_000, outputTokens: 600, cacheReadTokens: 2000, cacheWriteTokens: 0, cost: 0.0345 + 0.0045 + 0.018 });
    assert.equal(u.byTask['task-1'].inputTokens, 11_000);
    assert.equal(u.byMode.code.act!.outputTokens, 400);
    assert.equal(u.byMode.architect.plan!.inputTokens, 5000);
    assert.equal(u.byMode.code.plan, undefined);
    assert.equal(u.byAgent.modus.outputTokens, 600);
    assert.equal(view.taskId, 'task-1');
  });

  it('an unknown price makes the sums’ cost unknown', () => {
    const view = replay([usage('t', 'code', 'act', 10, 10, 0.5), usage('t', 'code', 'act', 10, 10, null)]);
    assert.equal(view.usage!.total.cost, null);
    assert.equal(addUsage(undefined, { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4, cost: 0.25 }).cost, 0.25);
  });

  it('the answer of modus/usage/get replaces the sums; a mode or phase change names the new task', () => {
    const sums = { total: { inputTokens: 5, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, cost: null }, byTask: {}, byMode: {}, byAgent: {} };
    let view = replay([up({ kind: 'message', role: 'user', text: 'hi' }), { type: 'usage', conversationId: C, usage: sums }]);
    assert.equal(view.usage, sums);
    assert.equal(reduce(view, { type: 'usage', conversationId: 'elsewhere', usage: null }).usage, sums);
    view = reduce(view, up({ kind: 'mode_changed', from: 'code', to: 'ask', by: 'user', taskId: 'task-ask' }));
    assert.equal(view.taskId, 'task-ask');
    view = reduce(view, up({ kind: 'phase_changed', from: 'act', to: 'plan', by: 'user', taskId: 'task-plan' }));
    assert.equal(view.taskId, 'task-plan');
    assert.equal(reduce(view, { type: 'newConversation', conversationId: 'c2' }).usage, null);
  });

  it('formats token counts in three digits at most', () => {
    const cases: [number, string][] = [
      [0, '0'], [950, '950'], [999, '999'], [1000, '1k'], [1234, '1.2k'], [12_345, '12.3k'], [99_949, '99.9k'], [99_960, '100k'],
      [123_456, '123k'], [999_499, '999k'], [999_600, '1M'], [1_500_000, '1.5M'], [12_345_678, '12.3M'], [2_000_000_000, '2B'],
    ];
    for (const [n, text] of cases) assert.equal(formatCount(n), text, String(n));
  });

  it('formats a cost in dollars and cents, "<$0.01" below a cent, "cost unknown" without a price', () => {
    const cases: [number | null, string][] = [
      [null, 'cost unknown'], [0, '$0.00'], [0.0001, '<$0.01'], [0.0049, '<$0.01'], [0.005, '$0.01'], [0.0405, '$0.04'],
      [0.999, '$1.00'], [12.5, '$12.50'], [1234.567, '$1,234.57'],
    ];
    for (const [cost, text] of cases) assert.equal(formatCost(cost), text, String(cost));
    assert.equal(usageText({ inputTokens: 1, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: null }), '1 token · cost unknown');
  });

  it('the header’s text is the current task’s; the tooltip’s rows each mode and phase, in the modes’ order', () => {
    const view = replay([
      usage('task-1', 'code', 'act', 12_000, 300, 0.0405),
      usage('task-2', 'architect', 'plan', 4000, 100, null),
      usage('task-3', 'zed', 'act', 10, 0, 0),
      usage('task-4', 'architect', 'act', 1000, 0, 0.003),
    ]);
    const summary = usageSummary(view.usage, 'task-1', ['code', 'architect'])!;
    assert.equal(summary.text, '12.3k tokens · $0.04');
    assert.deepEqual(summary.parts, { count: '12.3k', unit: 'tokens', cost: '$0.04', priced: true });
    assert.equal(summary.breakdown, 'in 12k · out 300 · cache read 0 · cache write 0');
    assert.equal(summary.conversation, '17.4k tokens · cost unknown');
    assert.deepEqual(summary.rows, [
      { mode: 'code', phase: 'act', text: '12.3k tokens · $0.04' },
      { mode: 'architect', phase: 'plan', text: '4.1k tokens · cost unknown' },
      { mode: 'architect', phase: 'act', text: '1k tokens · <$0.01' },
      { mode: 'zed', phase: 'act', text: '10 tokens · $0.00' },
    ]);
    assert.equal(usageSummary(view.usage, 'task-new')!.text, '0 tokens · $0.00', 'a task without requests yet');
    assert.equal(usageSummary(view.usage, null)!.text, '17.4k tokens · cost unknown', 'no task known: the conversation');
    assert.equal(usageSummary(null, 'task-1'), null, 'no usage known');
    assert.equal(usageSummary(initialView().usage, null), null);
  });
});

describe('the context window', () => {
  const state = (context?: State['context']): State => ({
    conversationId: C,
    mode: { slug: 'code', name: 'Code' },
    phase: 'act',
    yolo: false,
    plan: { state: 'normal', completedSteps: [] },
    task: { id: 't', mode: 'code', phase: 'act', model: { provider: 'scripted', model: null, maxTokens: null, reasoningEffort: null, thinkingBudgetTokens: null } },
    usage: NO_USAGE,
    ...(context ? { context } : {}),
  });
  const context = (used: number, conversationId = C) =>
    up({ conversationId, kind: 'context', agent: 'modus', taskId: 't', used, window: 200_000, threshold: 160_000 });

  it('comes with the state, then each context update of the conversation replaces it, and a condensing', () => {
    let view = replay([{ type: 'state', state: state({ window: 200_000, threshold: 160_000 }) }]);
    assert.deepEqual(view.context, { window: 200_000, threshold: 160_000 }, 'no request yet');
    view = replay([context(12_345), context(99, 'elsewhere')], view);
    assert.deepEqual(view.context, { used: 12_345, window: 200_000, threshold: 160_000 });
    view = reduce(view, up({ kind: 'condensed', agent: 'modus', taskId: 't', before: 12_345, after: 5432 }));
    assert.deepEqual(view.context, { used: 5432, window: 200_000, threshold: 160_000 });
    view = reduce(view, context(6000));
    assert.equal(view.context?.used, 6000);
    assert.equal(reduce(view, { type: 'state', state: state() }).context, null, 'a server that does not tell');
    assert.equal(reduce(view, { type: 'newConversation', conversationId: 'c2' }).context, null);
  });

  it('a condensing before the context is known leaves it unknown', () => {
    const view = replay([up({ kind: 'condensed', agent: 'modus', taskId: 't', before: 9123, after: 5432 })]);
    assert.equal(view.context, null);
  });

  it('the bar waits while a condense the user asked for runs; a refusal shows as an error in the chat', () => {
    let view = reduce(initialView(), { type: 'condenseStarted', conversationId: C });
    assert.equal(view.condensing, C);
    assert.equal(reduce(view, { type: 'condenseEnded' }).condensing, null);
    view = reduce(view, { type: 'condenseFailed', text: 'Could not condense: conversationId: a turn is running in conversation conv-1; cancel it first' });
    assert.equal(view.condensing, null);
    assert.deepEqual(lines(view), ['error: Could not condense: conversationId: a turn is running in conversation conv-1; cancel it first']);
  });

  it('the bar says used / window, and in full what a click does and where it condenses by itself', () => {
    const summary = contextSummary({ used: 12_345, window: 200_000, threshold: 160_000 });
    assert.equal(summary.text, '12.3k / 200k');
    assert.deepEqual(summary.parts, { used: '12.3k', window: '200k' });
    assert.equal(summary.label, 'Context: 12,345 of 200,000 tokens (6%). Condensed by itself at 160,000. Click to condense now.');
    assert.equal(summary.fill, 12_345 / 200_000);
    assert.equal(summary.mark, 0.8);
    assert.equal(summary.full, false);

    const before = contextSummary({ window: 200_000, threshold: 160_000 });
    assert.equal(before.text, '— / 200k');
    assert.equal(before.label, 'Context: no request yet; the window holds 200,000 tokens. Condensed by itself at 160,000. Click to condense now.');
    assert.equal(before.fill, 0);

    const full = contextSummary({ used: 17_000, window: 20_000, threshold: 16_000 });
    assert.equal(full.full, true);
    assert.equal(full.text, '17k / 20k');
    assert.equal(contextSummary({ used: 25_000, window: 20_000, threshold: 16_000 }).fill, 1, 'never past the end');
  });
});
