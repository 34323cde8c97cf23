// The project's own files in a real VS Code (code-server 4.139, its Node extension host), driven
// from headless Chromium as a user would: the workspace has AGENTS.md, a conditional rule for
// src/**/*.py and a `.claude/commands/review.md` prompt file; the user has a global rule. The
// sidebar's header counts the rules that apply now and lists them on a click, each opening its
// file; `/` in the composer completes the command with its description and argument hint, the
// chosen command is sent, the chat shows it as typed; the agent reads src/app.py and the
// conditional rule applies from then on.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// The palette's Show Skills lists the workspace's skill and opens its SKILL.md.
// The user's own hooks (their global settings file): a PreToolUse hook blocks the shell, the card
// says HookBlocked with the hook's words; a Stop hook that fails is said in the chat.
// MODUS_PROJECT_SCREENSHOT=docs/project.png saves the workbench with the rules listed and the
// completion open.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const FILES = {
  'AGENTS.md': 'Answer briefly.\n',
  '.modus/rules/python.md': '---\npaths: ["src/**/*.py"]\n---\nUse type hints in Python.\n',
  'src/app.py': 'def main():\n    print("hi")\n',
  '.claude/commands/review.md': '---\ndescription: Review a file for bugs\nargument-hint: <file>\n---\nReview $ARGUMENTS for bugs.\n',
  '.claude/skills/release-notes/SKILL.md': '---\nname: release-notes\ndescription: Write release notes from the git log.\n---\nRead the log, then write NOTES.md.\n',
};
const SCRIPT = {
  turns: [
    { text: 'Reading it.', toolCalls: [{ name: 'read_file', arguments: { path: 'src/app.py' } }] },
    { text: 'Reviewed src/app.py: main() prints and returns nothing; no bug.' },
    { toolCalls: [{ name: 'execute_command', arguments: { command: 'rm -rf build' } }] },
    { text: 'The build folder stays.' },
  ],
};
/** the user's hooks, in Claude Code's shape (their global settings file: they run without asking for trust) */
const HOOKS = {
  PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: "echo 'No shell in this project: use the tools.' >&2; exit 2" }] }],
  Stop: [{ hooks: [{ type: 'command', command: "echo 'lint is not installed' >&2; exit 1" }] }],
};

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_PROJECT_SCREENSHOT;

describe('rules and slash commands in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;

  before(async () => {
    wb = await scriptedWorkbench({
      codeServerDir: codeServerDir!,
      vsix: vsix!,
      files: FILES,
      config: { 'modus/rules/mine.md': 'Sign every commit.\n', 'modus/settings.json': JSON.stringify({ hooks: HOOKS }) },
      script: SCRIPT,
    });
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);
  const chat = () => wb.chat;
  const input = () => wb.chat.locator('#input');
  const count = () => wb.chat.locator('#rules');
  const panel = () => wb.chat.locator('#rules-panel');
  /** the rule files listed: "path" or "path (not now)" */
  const listed = () =>
    panel()
      .locator('.rule')
      .evaluateAll((lis) => lis.map((li) => `${li.querySelector('.rule-path')!.textContent}${li.querySelector('.rule-off') ? ' (not now)' : ''}`));
  const globalRule = () => join(wb.configHome, 'modus', 'rules', 'mine.md');
  /** the text the active editor shows */
  const activeEditor = () => wb.page.locator('.editor-group-container.active .editor-instance');
  const tab = (label: string) => wb.page.locator(`.tabs-container .tab[aria-label^="${label}"]`);

  step('the header counts the rules that apply now; a click lists them all, the conditional one not now; a click opens a file', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    await wb.showChat();
    await count().filter({ hasText: '2 rules' }).waitFor({ timeout: 30_000 });
    assert.equal(await count().getAttribute('title'), '2 of 3 rules apply now: show the rule files');
    await count().click();
    await panel().waitFor();
    assert.equal(await panel().locator('.rules-title').textContent(), '2 of 3 rules apply now');
    assert.deepEqual(await listed(), [globalRule(), 'AGENTS.md', '.modus/rules/python.md (not now)']);
    assert.match(
      (await panel().locator('.rule.inactive .rule-detail').textContent()) ?? '',
      /^once the conversation touches src\/\*\*\/\*\.py · modus · \d+ tokens?$/,
    );
    await panel().getByRole('button', { name: /^AGENTS\.md/ }).click();
    await tab('AGENTS.md').waitFor();
    await activeEditor().locator('.view-lines', { hasText: 'Answer briefly.' }).waitFor();
    assert.equal(await panel().isVisible(), false, 'closed once the file opened');

    // a global rule: its absolute path
    await count().click();
    await panel().getByRole('button', { name: new RegExp(`^${globalRule().replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`) }).click();
    await tab('mine.md').waitFor();
    await activeEditor().locator('.view-lines', { hasText: 'Sign every commit.' }).waitFor();
  });

  step('/ in the composer completes the command with its hint and description; chosen and sent, the chat shows it as typed', async () => {
    await input().click();
    await wb.page.keyboard.type('/');
    const list = chat().getByRole('listbox', { name: 'Commands' });
    await list.waitFor();
    const review = list.getByRole('option', { name: /^\/review/ });
    assert.deepEqual(await review.locator('span').allTextContents(), ['/review', '<file>', 'Review a file for bugs']);
    await wb.page.keyboard.type('rev');
    assert.equal(await list.getByRole('option').count(), 1);
    await wb.page.keyboard.press('Enter');
    await list.waitFor({ state: 'hidden' });
    assert.equal(await input().inputValue(), '/review ');
    const hint = chat().locator('#command-hint');
    assert.equal(await hint.textContent(), '/review <file> — Review a file for bugs');
    await wb.page.keyboard.type('src/app.py');
    assert.equal(await hint.isVisible(), true, 'the hint stays while the arguments are typed');
    await wb.page.keyboard.press('Enter');
    await chat().locator('.msg.user', { hasText: '/review src/app.py' }).waitFor();
    await chat().locator('.msg.assistant', { hasText: 'no bug' }).waitFor({ timeout: 30_000 });
    assert.equal(await hint.isVisible(), false);
    assert.equal(await chat().locator('.card.tool[data-tool="read_file"] .status').textContent(), 'done');
  });

  step("Modus's own /plan is completed first and runs: the phase is PLAN, nothing is sent to the model; /act alone goes back", async () => {
    const phase = chat().locator('#phase');
    await input().click();
    await wb.page.keyboard.type('/');
    const list = chat().getByRole('listbox', { name: 'Commands' });
    await list.waitFor();
    assert.deepEqual((await list.getByRole('option').locator('.mention-name').allTextContents()).slice(0, 6), ['/plan', '/act', '/mode', '/trust', '/condense', '/review']);
    await wb.page.keyboard.type('pl');
    await wb.page.keyboard.press('Enter');
    assert.equal(await input().inputValue(), '/plan ');
    await wb.page.keyboard.press('Enter');
    await phase.filter({ hasText: 'PLAN' }).waitFor();
    await input().fill('/plan '); // a space: past the name, the completion is closed
    await wb.page.keyboard.press('Enter');
    await chat().locator('.msg.system', { hasText: 'The phase is PLAN already.' }).waitFor();
    await input().fill('/act ');
    await wb.page.keyboard.press('Enter');
    await phase.filter({ hasText: 'ACT' }).waitFor();
    assert.equal(await chat().locator('.msg.user', { hasText: '/plan' }).count(), 0, 'a command alone is no message');
  });

  step('the conversation read src/app.py: the conditional rule applies now, the header says so; its file opens', async () => {
    await count().filter({ hasText: '3 rules' }).waitFor({ timeout: 30_000 });
    await count().click();
    await panel().waitFor();
    assert.deepEqual(await listed(), [globalRule(), 'AGENTS.md', '.modus/rules/python.md']);
    await panel().getByRole('button', { name: /^\.modus\/rules\/python\.md, applies now/ }).click();
    await tab('python.md').waitFor();
    await activeEditor().locator('.view-lines', { hasText: 'Use type hints in Python.' }).waitFor();
    if (screenshot) {
      // the rule file beside the chat, the sidebar dragged a little wider; the rules listed and,
      // below, the completion open on a follow-up (the list stays open: the composer is focused, not clicked)
      await chat().locator('#busy').waitFor({ state: 'hidden' });
      const sidebar = (await wb.chatElement.boundingBox())!;
      await wb.page.mouse.move(sidebar.x + sidebar.width + 2, sidebar.y + sidebar.height / 2);
      await wb.page.mouse.down();
      await wb.page.mouse.move(sidebar.x + sidebar.width + 100, sidebar.y + sidebar.height / 2, { steps: 5 });
      await wb.page.mouse.up();
      await count().click();
      await panel().waitFor();
      await input().focus();
      await wb.page.keyboard.type('/');
      await chat().getByRole('listbox', { name: 'Commands' }).waitFor();
      await wb.page.screenshot({ path: screenshot });
      await wb.page.keyboard.press('Escape');
      await input().fill('');
    }
  });

  step("the palette's Show Skills lists the skills with their descriptions; the one picked opens its SKILL.md", async () => {
    await wb.command('Modus: Show Skills');
    const row = wb.page.locator('.quick-input-list .monaco-list-row', { hasText: 'release-notes' });
    await row.waitFor({ timeout: 30_000 });
    assert.match((await row.textContent()) ?? '', /Write release notes from the git log\./);
    await wb.page.keyboard.press('Enter');
    await tab('SKILL.md').waitFor();
    await activeEditor().locator('.view-lines', { hasText: 'Read the log, then write NOTES.md.' }).waitFor();
  });

  step("a PreToolUse hook blocks the shell: the card says HookBlocked with the hook's words; a failing Stop hook is said", async () => {
    await input().fill('clean the build folder');
    await wb.page.keyboard.press('Enter');
    const card = chat().locator('.card.tool[data-tool="execute_command"]');
    await card.locator('.error-type', { hasText: 'HookBlocked' }).waitFor({ timeout: 30_000 });
    assert.equal(await card.locator('.error-message').textContent(), 'No shell in this project: use the tools.');
    await chat().locator('.msg.assistant', { hasText: 'The build folder stays.' }).waitFor({ timeout: 30_000 });
    await chat()
      .locator('.msg.system', { hasText: 'The Stop hook `echo \'lint is not installed\' >&2; exit 1` failed: lint is not installed' })
      .first()
      .waitFor({ timeout: 30_000 });
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
