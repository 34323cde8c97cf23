// The project's rule files and slash commands in the editor: the header's words for the rules,
// the composer's `/`-completion without the DOM, the reducer's lists, and both lists from the real
// server through the protocol layer (a conditional rule turning active after a read, a command
// sent as typed).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { CommandInfo, RuleInfo } from '../src/protocol/generated';
import { isAbsoluteRulePath, ruleDetail, rulesSummary, ruleWhen } from '../src/protocol/rules';
import { initialView, reduce } from '../src/protocol/view';
import { commandAt, commandCandidates, commandHint, insertCommand, typedCommand } from '../src/webview/slash';
import { ServerSession } from './server';

const rule = (path: string, more: Partial<RuleInfo> = {}): RuleInfo => ({ path, format: 'modus', scope: 'always', active: true, tokens: 12, ...more });

describe('the rules in the header, in words', () => {
  it('counts the rules that apply now; none without a rule file', () => {
    assert.equal(rulesSummary(null), null);
    assert.equal(rulesSummary([]), null);
    assert.deepEqual(rulesSummary([rule('AGENTS.md')]), { label: '1 rule', text: '1 rule applies now', active: 1, total: 1 });
    const three = [rule('AGENTS.md'), rule('CLAUDE.md', { format: 'claude' }), rule('.modus/rules/py.md', { scope: 'paths', paths: ['src/**/*.py'], active: false })];
    assert.deepEqual(rulesSummary(three), { label: '2 rules', text: '2 of 3 rules apply now', active: 2, total: 3 });
    assert.deepEqual(rulesSummary(three.slice(0, 2)), { label: '2 rules', text: '2 rules apply now', active: 2, total: 2 });
    assert.equal(rulesSummary([rule('a.md', { active: false })])?.label, '0 rules');
  });

  it('tells when each applies: always, in its modes, once a matching file was touched, never (a .mdc without globs)', () => {
    assert.equal(ruleWhen(rule('AGENTS.md')), 'always');
    assert.equal(ruleWhen(rule('.roo/rules-code/a.md', { format: 'roo', scope: 'mode', modes: ['code', 'debug'] })), 'in mode code, debug');
    assert.equal(ruleWhen(rule('.modus/rules/py.md', { scope: 'paths', paths: ['src/**/*.py', 'tests/*.py'] })), 'once the conversation touches src/**/*.py, tests/*.py');
    assert.equal(ruleWhen(rule('.modus/rules-code/py.md', { scope: 'paths', modes: ['code'], paths: ['*.py'] })), 'in mode code, once the conversation touches *.py');
    assert.equal(ruleWhen(rule('.cursor/rules/x.mdc', { format: 'cursor', scope: 'paths', paths: [] })), 'never (no globs)');
    assert.equal(ruleDetail(rule('AGENTS.md', { format: 'agents', tokens: 1234 })), 'always · agents · 1,234 tokens');
    assert.equal(ruleDetail(rule('a.md', { tokens: 1 })), 'always · modus · 1 token');
  });

  it('tells a global rule file (absolute) from a workspace one', () => {
    assert.equal(isAbsoluteRulePath('/home/me/.config/modus/rules/style.md'), true);
    assert.equal(isAbsoluteRulePath('C:\\Users\\me\\rules.md'), true);
    assert.equal(isAbsoluteRulePath('.modus/rules/a.md'), false);
    assert.equal(isAbsoluteRulePath('AGENTS.md'), false);
  });

  it('the reducer keeps the lists as the server answers them', () => {
    let view = reduce(initialView(), { type: 'rules', rules: [rule('AGENTS.md')] });
    assert.deepEqual(view.rules, [rule('AGENTS.md')]);
    view = reduce(view, { type: 'commands', commands: [{ name: 'review', source: 'workspace', path: '.claude/commands/review.md' }] });
    assert.deepEqual(view.commands?.map((c) => c.name), ['review']);
    assert.equal(reduce(view, { type: 'rules', rules: null }).rules, null);
  });
});

describe('the composer’s /-completion, without the DOM', () => {
  const commands: CommandInfo[] = [
    { name: 'review', description: 'Review the changes', argumentHint: '<file>', source: 'workspace', path: '.claude/commands/review.md' },
    { name: 'release', source: 'global', path: '/home/me/.config/modus/commands/release.md' },
    { name: 'git:commit', description: 'Commit', source: 'workspace', path: '.modus/commands/git/commit.md' },
  ];

  it('finds the command name typed at the start of the message, the caret in it', () => {
    assert.deepEqual(commandAt('/', 1), { start: 0, end: 1, query: '' });
    assert.deepEqual(commandAt('/re', 3), { start: 0, end: 3, query: 're' });
    assert.deepEqual(commandAt('/review src', 3), { start: 0, end: 7, query: 're' }, 'the whole name is replaced');
    assert.deepEqual(commandAt('/git:co', 7), { start: 0, end: 7, query: 'git:co' });
    assert.equal(commandAt('/review src', 11), null, 'the caret is in the arguments');
    assert.equal(commandAt('/usr/bin is empty', 5), null, 'a path');
    assert.equal(commandAt('see /review', 11), null, 'not at the start');
    assert.equal(commandAt('/review', 0), null, 'the caret before the /');
  });

  it('lists the commands by a prefix of the name (or of its part after folder:), case ignored, in the server’s order', () => {
    assert.deepEqual(commandCandidates(commands, '').map((c) => c.name), ['review', 'release', 'git:commit']);
    assert.deepEqual(commandCandidates(commands, 'RE').map((c) => c.name), ['review', 'release']);
    assert.deepEqual(commandCandidates(commands, 'rev').map((c) => c.name), ['review']);
    assert.deepEqual(commandCandidates(commands, 'co').map((c) => c.name), ['git:commit']);
    assert.deepEqual(commandCandidates(commands, 'git:').map((c) => c.name), ['git:commit']);
    assert.deepEqual(commandCandidates(commands, 'x'), []);
  });

  it('puts /name and one space in place of the name typed, the caret after it', () => {
    assert.deepEqual(insertCommand('/re', { start: 0, end: 3, query: 're' }, 'review'), { text: '/review ', caret: 8 });
    assert.deepEqual(insertCommand('/re src/a.py', { start: 0, end: 3, query: 're' }, 'review'), { text: '/review src/a.py', caret: 8 });
  });

  it('knows the command the message starts with, for its hint, as the server reads it', () => {
    assert.equal(typedCommand(commands, '/review ')?.name, 'review');
    assert.equal(typedCommand(commands, '/review src/a.py')?.name, 'review');
    assert.equal(typedCommand(commands, '/git:commit\nwith a body')?.name, 'git:commit');
    assert.equal(typedCommand(commands, '/review'), null, 'still typing the name: the completion shows it');
    assert.equal(typedCommand(commands, '/reviews x'), null);
    assert.equal(typedCommand(commands, ' /review x'), null);
    assert.equal(typedCommand(null, '/review x'), null);
    assert.equal(commandHint(commands[0]), '/review <file> — Review the changes');
    assert.equal(commandHint(commands[1]), '/release');
  });
});

describe('rules and commands from the real server', () => {
  let session: ServerSession | undefined;
  afterEach(async () => {
    await session?.stop();
    session = undefined;
  });

  it('lists the rule files (a conditional one active once the conversation read a matching file) and the commands; a command is sent as typed', async () => {
    const s = (session = await new ServerSession({
      turns: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'src/app.py' } }] }, { text: 'Reviewed.' }],
      files: {
        'AGENTS.md': 'Answer briefly.\n',
        '.modus/rules/python.md': '---\npaths: ["src/**/*.py"]\n---\nUse type hints.\n',
        'src/app.py': 'print("hi")\n',
        '.claude/commands/review.md': '---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS carefully.\n',
      },
    }).start());
    const { conversationId } = await s.api.open('conv-rules');
    const before = (await s.api.rules(conversationId)).rules;
    assert.deepEqual(before.map((r) => [r.path, r.scope, r.active]), [
      ['AGENTS.md', 'always', true],
      ['.modus/rules/python.md', 'paths', false],
    ]);
    assert.equal(rulesSummary(before)?.text, '1 of 2 rules apply now');
    const { commands } = await s.api.commands();
    const review = commands.find((c) => c.name === 'review');
    assert.deepEqual(review, { name: 'review', description: 'Review a file', argumentHint: '<file>', source: 'workspace', path: '.claude/commands/review.md' });

    await s.chat('/review src/app.py', conversationId);
    assert.ok(s.view.entries.some((e) => e.type === 'user' && e.text === '/review src/app.py'), 'the chat shows what was typed');
    const after = (await s.api.rules(conversationId)).rules;
    assert.deepEqual(after.map((r) => r.active), [true, true]);
    assert.equal(rulesSummary(after)?.label, '2 rules');
  });
});
