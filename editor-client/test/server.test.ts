// The extension's protocol layer against the real server (`<python> -m server`, interpreter
// from $MODUS_PYTHON, default ../.venv/bin/python), over stdio with vscode-jsonrpc.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { promptText } from '../src/protocol/client';
import { contextSummary } from '../src/protocol/context';
import { checkpointText } from '../src/protocol/diff';
import { Command } from '../src/protocol/generated';
import { buildSettings } from '../src/protocol/settings';
import { usageSummary } from '../src/protocol/usage';
import { describe as lines, planApprovals, planBadge, planSteps } from '../src/protocol/view';
import { lex, section, type Tokens } from '../src/webview/markdown';
import { DEMO_REQUEST, DEMO_TURNS, ServerSession, StartOptions, Turn } from './server';

describe('protocol layer against the real server', () => {
  let session: ServerSession | undefined;
  const start = async (options: StartOptions = {}) => (session = await new ServerSession(options).start());
  afterEach(async () => {
    await session?.stop();
    session = undefined;
  });

  it('initializes with the Modus capabilities', async () => {
    const s = await start();
    const caps = s.initializeResult.capabilities;
    assert.equal(caps.experimental?.modus?.protocolVersion, 1);
    const commands: string[] = caps.executeCommandProvider?.commands ?? [];
    for (const c of [Command.SWITCH_MODE, Command.SHOW_PROMPT]) assert.ok(commands.includes(c), `${c} in ${commands}`);
  });

  it('lists the modes and switches mode', async () => {
    const s = await start();
    const list = await s.api.modes();
    s.record({ type: 'modes', modes: list });
    assert.equal(list.current, 'code');
    const slugs = list.modes.map((m) => m.slug);
    assert.deepEqual(slugs.slice(0, 5), ['code', 'architect', 'ask', 'debug', 'orchestrator']);
    assert.ok(list.modes.every((m) => m.name && m.source === 'builtin'));

    const state = await s.api.switchMode('architect');
    s.record({ type: 'state', state });
    assert.deepEqual(state.mode, { slug: 'architect', name: 'Architect' });
    assert.deepEqual(s.view.mode, { slug: 'architect', name: 'Architect' });
    assert.equal((await s.api.state()).mode.slug, 'architect');

    await assert.rejects(s.api.switchMode('nosuch'), (err: any) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /Invalid mode: nosuch/);
      return true;
    });
    // the same through workspace/executeCommand
    await s.api.executeCommand(Command.SWITCH_MODE, ['ask']);
    assert.equal((await s.api.state()).mode.slug, 'ask');
  });

  it('runs a chat turn with the scripted model and streams it into the view', async () => {
    const s = await start({ turns: [{ text: 'Hello from the scripted model.' }] });
    await s.chat('Say hello');
    const kinds = s.updates.map((u) => u.kind);
    assert.deepEqual(kinds.slice(0, 2).sort(), ['message', 'turn_started']);
    assert.equal(kinds[kinds.length - 1], 'turn_ended');
    assert.ok(kinds.includes('message_delta'), kinds.join(','));
    const view = s.view;
    assert.deepEqual(lines(view), ['user: Say hello', 'assistant: Hello from the scripted model.']);
    assert.deepEqual(view.running, []);
    assert.ok(view.conversationId);
    // the next message in the same conversation; the script is exhausted
    await s.chat('Again', view.conversationId!);
    assert.deepEqual(lines(s.view).slice(2), ['user: Again', 'assistant: Script finished.']);
  });

  it('flips PLAN ⇄ ACT: a plan answered with plan_mode_respond waits, the flip to ACT carries it on', async () => {
    const s = await start({
      turns: [
        { toolCalls: [{ name: 'plan_mode_respond', arguments: { response: 'Plan: greet.' } }] },
        { text: 'Greeting now.' },
      ],
    });
    s.record({ type: 'state', state: await s.api.setPhase('plan') });
    assert.equal(s.view.phase, 'plan');
    await s.chat('Plan a greeting');
    const outcomes = () => s.updates.flatMap((u) => (u.kind === 'turn_ended' ? [u.outcome] : []));
    assert.deepEqual(outcomes(), ['awaiting_user']);
    assert.deepEqual(lines(s.view), ['phase act -> plan', 'user: Plan a greeting', 'assistant: Plan: greet.', 'turn awaiting_user']);
    s.record({ type: 'state', state: await s.api.setPhase('act') });
    await s.waitFor(() => outcomes().length === 2, 'the turn the flip to ACT resumes');
    assert.deepEqual(outcomes(), ['awaiting_user', 'completed']);
    assert.equal(s.view.phase, 'act');
    assert.deepEqual(lines(s.view).slice(4), ['phase plan -> act', 'assistant: Greeting now.']);
    assert.ok(!lines(s.view).some((l) => l.includes('plan_mode_respond')), 'no card for the response');
  });

  it('runs the demo: approvals answered, edits applied, FileRestrictionError in the view', async () => {
    const s = await start({ turns: DEMO_TURNS });
    s.record({ type: 'modes', modes: await s.api.modes() });
    await s.chat(DEMO_REQUEST);

    // approvals: two mode switches and two edits, all approved by the "user"
    assert.deepEqual(
      s.approvals.map((a) => [a.kind, a.kind === 'switch_mode' ? a.to : a.tool]),
      [
        ['switch_mode', 'architect'],
        ['tool', 'write_to_file'],
        ['switch_mode', 'code'],
        ['tool', 'write_to_file'],
      ],
    );
    assert.match(s.approvals[1].detail, /\+# Greeting endpoint/);

    // edits arrived as workspace/applyEdit and were applied
    assert.equal(s.edits.length, 2);
    assert.equal(s.read('docs/design.md'), '# Greeting endpoint\n\n- `GET /hello` returns `Hello, world!`\n');
    assert.equal(s.read('src/app.py'), 'def hello():\n    return "Hello, world!"\n');

    const view = s.view;
    const failed = view.entries.find((e) => e.type === 'tool' && e.status === 'failed');
    assert.ok(failed && failed.type === 'tool');
    assert.equal(failed.error?.type, 'FileRestrictionError');
    assert.equal(
      failed.error?.message,
      "Tool 'write_to_file' in mode 'Architect' can only edit files matching pattern: \\.md$ (Markdown files only). Got: src/app.py",
    );
    assert.deepEqual(
      view.entries.filter((e) => e.type === 'mode').map((e) => (e.type === 'mode' ? `${e.from}->${e.to}` : '')),
      ['code->architect', 'architect->code'],
    );
    assert.deepEqual(view.mode, { slug: 'code', name: 'Code' });
    const tools = view.entries.filter((e) => e.type === 'tool').map((e) => (e.type === 'tool' ? `${e.name}:${e.status}` : ''));
    assert.deepEqual(tools, [
      'switch_mode:completed',
      'write_to_file:completed',
      'write_to_file:failed',
      'switch_mode:completed',
      'write_to_file:completed',
      'attempt_completion:completed',
    ]);
    assert.ok(view.entries.every((e) => e.type !== 'approval' || e.status === 'approve'));
  });

  it('a denied mode switch leaves the mode as it was and tells the model', async () => {
    const s = await start({
      turns: [{ toolCalls: [{ name: 'switch_mode', arguments: { mode_slug: 'ask', reason: 'just talk' } }] }, { text: 'OK, staying.' }],
      approve: () => ({ decision: 'deny', feedback: 'stay in code' }),
    });
    await s.chat('Switch to ask');
    assert.equal(s.approvals.length, 1);
    assert.equal((await s.api.state()).mode.slug, 'code');
    const tool = s.view.entries.find((e) => e.type === 'tool');
    assert.ok(tool && tool.type === 'tool');
    const said = `${tool.result ?? ''} ${tool.error?.message ?? ''}`;
    assert.match(said, /denied/i);
    assert.match(said, /stay in code/);
  });

  it('shows the system prompt (modus.showPrompt, else modus/prompt/get)', async () => {
    const s = await start();
    const direct = promptText(await s.api.executeCommand(Command.SHOW_PROMPT));
    assert.ok(direct && direct.length > 100, String(direct));
    assert.equal(await s.api.systemPrompt(), direct);
  });

  it('opens a conversation the client chose (New Conversation)', async () => {
    const s = await start({ turns: [{ text: 'first' }, { text: 'second' }] });
    await s.chat('one');
    const first = s.view.conversationId;
    const fresh = `conv-test-${Date.now()}`;
    s.record({ type: 'newConversation', conversationId: fresh });
    await s.chat('two', fresh);
    assert.notEqual(first, fresh);
    assert.equal(s.view.conversationId, fresh);
    assert.deepEqual(lines(s.view), ['user: two', 'assistant: second']);
    assert.ok(s.updates.filter((u) => u.kind === 'turn_ended').every((u) => [first, fresh].includes(u.conversationId)));
  });

  it('forwards changed settings with workspace/didChangeConfiguration', async () => {
    const s = await start({
      turns: [{ toolCalls: [{ name: 'switch_mode', arguments: { mode_slug: 'ask', reason: 'questions only' } }] }, { text: 'ok' }],
    });
    // what the extension sends when the user turns on modus.autoApprove.modeSwitch: the whole
    // settings object, built from the configuration
    const config: Record<string, unknown> = {
      ...s.settings,
      autoApprove: { modeSwitch: true },
      agents: [],
    };
    await s.conn.sendNotification('workspace/didChangeConfiguration', {
      settings: { modus: buildSettings((k) => config[k]) },
    });
    await s.chat('Go to ask mode');
    assert.equal(s.approvals.length, 0, 'the switch was auto-approved');
    assert.equal((await s.api.state()).mode.slug, 'ask');
  });

  it('always allow: the rule on the approval, the settings file’s diff asked next, the file written, the same command not asked again', async () => {
    const run = (command: string): Turn => ({ toolCalls: [{ name: 'execute_command', arguments: { command } }] });
    const s = await start({
      turns: [run('echo hi'), { text: 'ran it' }, run('echo hi'), { text: 'ran it again' }],
      files: { '.modus/settings.json': '{"maxRetries": 2}\n' },
      approve: (request) => (request.alwaysAllow ? { decision: 'approve', always: true } : { decision: 'approve' }),
    });
    await s.chat('run it');
    const [asked, diff] = s.approvals;
    assert.equal(asked.alwaysAllow, 'autoApprove.modes.code.command: "echo hi"');
    assert.equal(diff.title, 'Always allow: write this rule to .modus/settings.json?');
    assert.equal(diff.alwaysAllow, undefined);
    assert.match(diff.detail, /^\+\s+"command": \[\n\+\s+"echo hi"/m);
    assert.deepEqual(JSON.parse(s.read('.modus/settings.json')!), { maxRetries: 2, autoApprove: { modes: { code: { command: ['echo hi'] } } } });
    // the settings file's diff is asked inside the card of the call it came from
    assert.equal(diff.toolCallId, asked.toolCallId);
    assert.deepEqual(lines(s.view).filter((l) => l.includes('approval')), [
      `  approval tool approve (always): ${asked.title}`,
      `  approval tool approve: ${diff.title}`,
    ]);
    await s.chat('again');
    assert.equal(s.approvals.length, 2, 'not asked again');
    const runs = s.updates.filter((u) => u.kind === 'tool_call' && u.name === 'execute_command' && u.status === 'completed');
    assert.equal(runs.length, 2);
  });

  it('the workspace’s yolo waits for the user’s trust; modus.trustWorkspaceSettings applies it', async () => {
    const s = await start({ files: { '.modus/settings.json': '{"yolo": true}\n' } });
    assert.equal((await s.api.state()).yolo, false, 'not before the user trusts it');
    const state = await s.api.trustWorkspaceSettings();
    assert.equal(state.yolo, true);
    assert.equal((await s.api.state()).yolo, true);
    s.write('.modus/settings.json', '{"maxRetries": 2}\n');
    await assert.rejects(s.api.trustWorkspaceSettings(), (err: any) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /nothing in it waits for trust/);
      return true;
    });
  });

  it('mcpList answers the MCP servers: none configured here', async () => {
    const s = await start();
    assert.deepEqual(await s.api.mcpList(), { servers: [] });
  });

  it('cancels a conversation', async () => {
    const s = await start({ turns: [{ text: 'hi' }] });
    await s.chat('hello');
    const result = await s.api.cancel(s.view.conversationId!);
    assert.equal(typeof result.cancelled, 'boolean');
  });
});

describe('plan mode and todos through the protocol layer', () => {
  let session: ServerSession | undefined;
  afterEach(async () => {
    await session?.stop();
    session = undefined;
  });
  const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
  const PLAN = {
    summary: 'Greet loudly',
    approach: 'Add a `--shout` flag',
    steps: [
      { id: '1', description: 'Add the flag', files: ['src/app.py'], verification: 'python src/app.py --shout' },
      { id: '2', description: 'Document it', files: ['docs/usage.md'], depends_on: ['1'], verification: 'read it' },
    ],
  };
  /** Plan questions stay open (the user answers from the palette or the card's buttons); the rest is approved. */
  const start = (turns: Turn[]) =>
    new ServerSession({
      turns,
      settings: { autoApprove: { edit: true } },
      approve: (r) => (r.kind === 'plan' ? new Promise<never>(() => undefined) : { decision: 'approve' }),
    }).start();
  const planOutcome = (s: ServerSession) => s.waitFor(() => s.updates.some((u) => u.kind === 'turn_ended'), 'the end of the turn');

  it('a plan waits in the card; planApprove answers it, the steps tick, the todos follow; with no plan it is refused', async () => {
    const s = (session = await start([
      call('plan_enter', { goal: 'Add --shout', scope: ['src'] }),
      call('plan_exit', { plan: PLAN }),
      call('todo_write', { todos: [{ content: 'Add the flag', status: 'in_progress', priority: 'high' }, { content: 'Document <it>' }] }),
      call('plan_step_complete', { step_id: '1', verification_result: 'HI' }),
      { text: '<update_todo_list>\n<todos>\n[x] Add the flag\n[-] Document <it>\n</todos>\n</update_todo_list>' },
      call('plan_step_complete', { step_id: '2', verification_result: 'ok' }),
      call('plan_complete', { summary: 'Shouting works.' }),
      { text: 'Done.' },
    ]));
    await s.api.send({ text: 'Make it shout' });
    await s.waitFor(() => s.approvals.length === 1, 'the plan question');
    s.record({ type: 'state', state: await s.api.state() }); // as the extension does after a plan update
    let view = s.view;
    assert.deepEqual([view.plan?.state, view.plan?.goal, view.plan?.scope, planBadge(view.plan!)], ['awaiting_approval', 'Add --shout', ['src'], 'pending approval']);
    assert.deepEqual(planApprovals(view).map((a) => a.request.title), ['Approve the plan: Add --shout?']);
    assert.equal(planApprovals(view)[0].request.detail, view.plan?.markdown, 'the question shows the plan document');
    const steps = section(lex(view.plan!.markdown!), 'Steps').find((t): t is Tokens.List => t.type === 'list');
    assert.deepEqual(steps?.items.map((i) => [i.checked, i.text.split('\n')[0]]), [[false, '1. Add the flag'], [false, '2. Document it']]);

    const approved = await s.api.planApprove('go ahead');
    s.record({ type: 'state', state: approved });
    assert.deepEqual([approved.plan.state, approved.phase], ['executing', 'act']);
    await planOutcome(s);
    view = s.view;
    assert.ok(lines(view).includes('  approval plan cancelled: Approve the plan: Add --shout?'), 'the question was withdrawn, in the plan_exit card');
    const plans = s.updates.flatMap((u) => (u.kind === 'plan' ? [`${u.state}:${u.completedSteps.join(',')}`] : []));
    assert.deepEqual(plans, ['planning:', 'awaiting_approval:', 'executing:', 'executing:1', 'executing:1,2', 'normal:1,2']);
    assert.deepEqual([view.plan?.ended, planBadge(view.plan!), planSteps(view.plan!).map((p) => p.status)], ['completed', 'completed', ['done', 'done']]);
    assert.deepEqual(section(lex(view.plan!.markdown!), 'Outcome').map((t) => [t.type, t.raw.trim()]), [['paragraph', 'Shouting works.']]);
    assert.deepEqual(view.todos.map((t) => [t.content, t.status]), [['Add the flag', 'completed'], ['Document <it>', 'in_progress']]);

    const got = await s.api.todos();
    assert.deepEqual([got.agent, got.todos], ['modus', view.todos]);
    assert.match(got.html, /Document &lt;it&gt;/);
    await assert.rejects(s.api.planApprove(), (err: any) => err.code === -32602 && /^No plan to approve: the plan state is normal/.test(err.message));
    await assert.rejects(s.api.planReject('x'), (err: any) => err.code === -32602 && /^No plan to reject/.test(err.message));
    await assert.rejects(s.api.todos('nobody'), (err: any) => err.code === -32602 && /unknown agent: nobody/.test(err.message));
  });

  it('planReject with feedback: the plan ends rejected and the model gets the feedback', async () => {
    const s = (session = await start([call('plan_enter', { goal: 'Add --shout' }), call('plan_exit', { plan: PLAN }), { text: 'Fine.' }]));
    await s.api.send({ text: 'Plan it' });
    await s.waitFor(() => s.approvals.length === 1, 'the plan question');
    s.record({ type: 'state', state: await s.api.planReject('Not now') });
    await planOutcome(s);
    const view = s.view;
    assert.deepEqual([view.plan?.state, view.plan?.ended, planBadge(view.plan!)], ['normal', 'rejected', 'rejected']);
    const exit = view.entries.find((e) => e.type === 'tool' && e.name === 'plan_exit');
    assert.ok(exit?.type === 'tool' && /The user rejected the plan\. Their feedback: Not now/.test(exit.result ?? ''), JSON.stringify(exit));
  });
});

describe('checkpoints and usage through the protocol layer', () => {
  let session: ServerSession | undefined;
  afterEach(async () => {
    await session?.stop();
    session = undefined;
  });

  const BEFORE = { 'greeting.txt': 'Hello\r\nworld\r\n', 'notes.md': '# Notes\nno end', 'old.txt': 'old\n' };
  const start = () =>
    new ServerSession({
      files: BEFORE,
      turns: [
        {
          text: 'Editing.',
          toolCalls: [
            { name: 'write_to_file', arguments: { path: 'new.txt', content: 'brand new\n' } },
            { name: 'search_and_replace', arguments: { path: 'greeting.txt', search: 'world', replace: 'there' } },
            { name: 'write_to_file', arguments: { path: 'notes.md', content: '# Notes\nno end, now with one\n' } },
            { name: 'execute_command', arguments: { command: 'rm old.txt' } },
          ],
          usage: { inputTokens: 12_000, outputTokens: 300, cacheReadTokens: 2000 },
        },
        { text: 'Done.', usage: { inputTokens: 13_000, outputTokens: 50 } },
        { text: 'Going on from there.' },
      ],
      settings: {
        autoApprove: { edit: true, command: true },
        models: { default: { provider: 'scripted', script: 'script.yaml', pricing: { input: 3, output: 15, cacheRead: 0.3 } } },
      },
    }).start();
  const AFTER = { 'new.txt': 'brand new\n', 'greeting.txt': 'Hello\r\nthere\r\n', 'notes.md': '# Notes\nno end, now with one\n', 'old.txt': undefined };
  const files = (s: ServerSession) => Object.fromEntries(['new.txt', 'greeting.txt', 'notes.md', 'old.txt'].map((p) => [p, s.read(p)]));

  it('each edit or command card has its checkpoint; each file as it was is rebuilt from the diff; restore and its undo', async () => {
    const s = (session = await start());
    await s.chat('Edit things');
    assert.deepEqual(files(s), AFTER);
    const cid = s.view.conversationId!;
    const list = await s.api.checkpoints(cid);
    assert.equal(list.disabled, undefined);
    s.record({ type: 'checkpoints', conversationId: cid, checkpoints: list.checkpoints });
    const cards = s.view.entries.flatMap((e) => (e.type === 'tool' ? [e.id.slice('tool:'.length)] : []));
    assert.equal(cards.length, 4);
    assert.deepEqual(Object.keys(s.view.checkpoints).sort(), [...cards].sort(), 'every card (edits and a command) has one');
    assert.equal(list.checkpoints.filter((c) => !c.toolCallId).length, 1, "the turn's start has none of a card");

    // the checkpoint before the first call: every file as it was, from the diff and the file now
    const first = s.view.checkpoints[cards[0]];
    const diff = (await s.api.checkpointDiff(first.id)).files;
    assert.deepEqual(diff.map((f) => [f.path, f.status]), [['greeting.txt', 'modified'], ['new.txt', 'added'], ['notes.md', 'modified'], ['old.txt', 'deleted']]);
    for (const f of diff) {
      const then = checkpointText(f, s.read(f.path) ?? '');
      assert.equal(then, BEFORE[f.path as keyof typeof BEFORE] ?? '', f.path);
    }

    // restore the files: the texts through applyEdit (the client applies edits), the rest on disk
    const edits = s.edits.length;
    const restored = await s.api.restoreCheckpoint(first.id, 'files');
    s.record({ type: 'restored', what: 'files', result: restored });
    assert.deepEqual([...restored.restored].sort(), ['greeting.txt', 'new.txt', 'notes.md', 'old.txt']);
    assert.deepEqual(files(s), { ...BEFORE, 'new.txt': undefined });
    assert.ok(s.edits.length > edits, 'through the editor');
    const note = s.view.entries[s.view.entries.length - 1];
    assert.ok(note.type === 'restore' && note.undo === restored.checkpoint);
    assert.equal(lines(s.view).pop(), 'Restored 4 files: greeting.txt, new.txt, notes.md, old.txt. [Undo restore]');

    // Undo restore: the files of the checkpoint the restore took first
    const undone = await s.api.restoreCheckpoint(restored.checkpoint, 'files');
    s.record({ type: 'restored', what: 'files', result: undone, undoOf: note.id });
    assert.deepEqual(files(s), AFTER);
    assert.deepEqual(lines(s.view).slice(-2), ['Restored 4 files: greeting.txt, new.txt, notes.md, old.txt (undone).', 'Restore undone: put back 4 files: greeting.txt, new.txt, notes.md, old.txt.']);
  });

  it('restoring the conversation cuts it back to just before the call: the later calls show as undone, the next turn goes on from there', async () => {
    const s = (session = await start());
    await s.chat('Edit things');
    const cid = s.view.conversationId!;
    const second = (await s.api.checkpoints(cid)).checkpoints.filter((c) => c.toolCallId)[1];
    const result = await s.api.restoreCheckpoint(second.id, 'both');
    assert.deepEqual([...result.restored].sort(), ['greeting.txt', 'notes.md', 'old.txt']);
    assert.equal(files(s)['new.txt'], 'brand new\n', 'made before that call: it stays');
    s.record({ type: 'history', conversationId: cid, messages: (await s.api.history(cid)).messages, restored: true });
    s.record({ type: 'restored', what: 'both', result });
    assert.deepEqual(lines(s.view), [
      'user: Edit things',
      'assistant: Editing.',
      'tool write_to_file completed',
      'tool search_and_replace undone',
      'tool write_to_file undone',
      'tool execute_command undone',
      'Restored the conversation and 3 files: greeting.txt, notes.md, old.txt. [Undo restore]',
    ]);
    await s.chat('Go on', cid);
    assert.equal(lines(s.view).pop(), 'assistant: Going on from there.');
  });

  it('usage updates summed in the view are what modus/usage/get answers; the header shows the task’s tokens and cost', async () => {
    const s = (session = await start());
    s.record({ type: 'state', state: await s.api.state() });
    await s.chat('Edit things');
    const cid = s.view.conversationId!;
    const got = await s.api.usage(cid);
    const approx = (u: { cost: number | null }) => ({ ...u, cost: u.cost === null ? null : Math.round(u.cost * 1e9) / 1e9 });
    assert.deepEqual(approx(s.view.usage!.total), approx(got.total));
    assert.deepEqual(Object.keys(s.view.usage!.byTask), Object.keys(got.byTask));
    assert.deepEqual(approx(s.view.usage!.byMode.code.act!), approx(got.byMode.code.act!));
    // (12,000 × 3 + 300 × 15 + 2,000 × 0.3 + 13,000 × 3 + 50 × 15) / 1,000,000
    assert.equal(approx(got.total).cost, 0.08085);
    const summary = usageSummary(s.view.usage, s.view.taskId)!;
    assert.equal(summary.text, '27.4k tokens · $0.08');
    assert.deepEqual(summary.rows, [{ mode: 'code', phase: 'act', text: '27.4k tokens · $0.08' }]);
  });

  it('the view follows the context window; modus/chat/condense condenses (not while a turn runs)', async () => {
    let deny: () => void = () => undefined;
    const s = (session = await new ServerSession({
      turns: [
        { text: 'One.', usage: { inputTokens: 6000, outputTokens: 20 } },
        { text: 'Two.', usage: { inputTokens: 6100, outputTokens: 20 } },
        { text: 'The user said One, then Two.' }, // the summary
        { toolCalls: [{ name: 'execute_command', arguments: { command: 'echo hi' } }] },
        { text: 'Not run.' },
      ],
      settings: { models: { default: { provider: 'scripted', script: 'script.yaml', contextWindow: 20_000 } } },
      approve: () => new Promise((resolve) => (deny = () => resolve({ decision: 'deny' }))),
    }).start());
    s.record({ type: 'state', state: await s.api.state() });
    assert.deepEqual(s.view.context, { window: 20_000, threshold: 16_000 }, 'no request yet');
    await s.chat('First');
    const cid = s.view.conversationId!;
    assert.deepEqual(s.view.context, { used: 6020, window: 20_000, threshold: 16_000 });
    assert.equal(contextSummary(s.view.context!).text, '6k / 20k');

    await s.chat('Second', cid);
    assert.equal(s.view.context?.used, 6120);
    const result = await s.api.condense(cid);
    assert.equal(result.before, 6120);
    assert.ok(result.after < result.before, JSON.stringify(result));
    await s.waitFor(() => s.view.context?.used === result.after, 'the context update after condensing');
    assert.equal(lines(s.view).pop(), `system: Condensed the conversation: 6,120 → ${result.after.toLocaleString('en-US')} tokens.`);

    await s.api.send({ text: 'Run it', conversationId: cid });
    await s.waitFor(() => s.approvals.length === 1, 'the command’s approval');
    await assert.rejects(s.api.condense(cid), (err: any) => {
      assert.match(err.message, /^conversationId: a turn is running in conversation /);
      return true;
    });
    deny();
    await s.waitFor(() => s.updates.some((u) => u.kind === 'turn_ended'), 'the end of the turn');
  });
});
