// Plan mode in a real VS Code (code-server 4.139, its Node extension host), driven from headless
// Chromium as a user would: the light bulb's "Plan a change here" on a selection, the plan card
// in the sidebar from drafting to the question inside it, Approve, the steps ticking and the todo
// panel following the model, completed; `Modus: Reject Plan` (with feedback) on a second plan and
// `Modus: Approve Plan` with nothing to approve; after a reload, the card of a plan still waiting
// for approval, with its own Approve, and the todos.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// MODUS_PLAN_SCREENSHOT=docs/plan.png saves the workbench while the plan runs.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { modusPython } from '../server';
import { QUIET_SETTINGS, steps, Workbench } from './workbench';

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
const checklist = (...items: string[]) => ({ text: `<update_todo_list>\n<todos>\n${items.join('\n')}\n</todos>\n</update_todo_list>` });

const PLAN = {
  summary: 'Rename b to beta',
  approach: 'Edit src/app.py, then run the tests.',
  steps: [
    { id: '1', description: 'Rename `b` to `beta` in src/app.py', files: ['src/app.py'], verification: 'grep beta src/app.py' },
    { id: '2', description: 'Run the tests', depends_on: ['1'], verification: 'echo tests pass' },
    { id: '3', description: 'Tell the user what changed', depends_on: ['2'], verification: 'the reply' },
  ],
  risks: ['Callers elsewhere still use b'],
  files_to_modify: ['src/app.py'],
  estimated_complexity: 'small',
};
const LATER = { approach: 'One file.', steps: [{ id: '1', description: 'Write the document', verification: 'read it' }] };

const SCRIPT = {
  turns: [
    // "Plan a change here" starts the turn: the model asks first (the card is drafting meanwhile)
    call('plan_mode_respond', { response: 'Rename `b` to what? I suggest `beta`.' }),
    call('plan_exit', { plan: PLAN }),
    call('todo_write', { todos: [{ content: 'Rename b to beta', status: 'in_progress' }, { content: 'Run the tests' }, { content: 'Tell the user' }] }),
    call('write_to_file', { path: 'src/app.py', content: 'a = 1\nbeta = 2\nc = 3\n' }),
    call('plan_step_complete', { step_id: '1', verification_result: 'src/app.py: beta = 2' }),
    checklist('[x] Rename b to beta', '[-] Run the tests', '[ ] Tell the user'),
    call('execute_command', { command: 'echo tests pass' }), // waits for the user: the screenshot
    call('plan_step_complete', { step_id: '2', verification_result: 'tests pass' }),
    checklist('[x] Rename b to beta', '[x] Run the tests', '[-] Tell the user'),
    call('plan_step_complete', { step_id: '3', verification_result: 'told' }),
    call('plan_complete', { summary: '`b` is now `beta`; the tests pass.' }),
    { text: 'Done: b is now beta.' },
    // a second plan, rejected from the palette
    call('plan_enter', { goal: 'Document beta', scope: ['src'] }),
    call('plan_exit', { plan: LATER }),
    { text: 'Understood, no docs.' },
    // a third, waiting across the reload
    call('plan_enter', { goal: 'Write a changelog' }),
    call('plan_exit', { plan: LATER }),
  ],
};
// A reload starts a new server, and the scripted model reads its script again from the first turn.
const AFTER_RELOAD = {
  turns: [call('plan_step_complete', { step_id: '1', verification_result: 'written' }), call('plan_complete', { summary: 'Changelog written.' }), { text: 'All done.' }],
};

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_PLAN_SCREENSHOT;

describe('plan mode in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;
  const script = () => join(wb.workspace, '.script.json');

  before(async () => {
    wb = new Workbench({
      codeServerDir: codeServerDir!,
      vsix: vsix!,
      files: { '.script.json': JSON.stringify(SCRIPT), 'src/app.py': 'a = 1\nb = 2\nc = 3\n' },
    });
    wb.writeSettings({
      ...QUIET_SETTINGS,
      'modus.pythonPath': modusPython(),
      'modus.models': { default: { provider: 'scripted', script: script() } },
      'modus.autoApprove': { edit: true },
    });
    await wb.start();
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);

  const chat = () => wb.chat;
  const card = () => wb.chat.locator('#plan');
  const badge = (text: string) => card().locator('.plan-badge', { hasText: text }).waitFor();
  const marks = (list: string) => wb.chat.locator(`${list} li`).evaluateAll((items) => items.map((li) => li.querySelector('[class$="-mark"]')!.textContent).join(''));
  const send = (text: string) => wb.send(text);

  step('the light bulb on a selection offers "Plan a change here": the sidebar opens on the plan card, drafting', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 }); // the server is up
    await wb.openFile('app.py');
    await wb.page.locator('.monaco-editor .view-line', { hasText: 'b = 2' }).click();
    await wb.page.keyboard.press('Home');
    await wb.page.keyboard.press('Shift+ArrowDown');
    await wb.page.keyboard.press('Shift+End');
    const line = (await wb.page.locator('.monaco-editor .view-line', { hasText: 'b = 2' }).boundingBox())!;
    await wb.page.waitForFunction(
      (y) => [...document.querySelectorAll('.monaco-editor [class*="codicon-gutter-lightbulb"]')].some((b) => Math.abs(b.getBoundingClientRect().y - y) < 4),
      line.y,
    ); // the light bulb, on the selection's first line
    const offered = await wb.codeAction('Plan a change here');
    assert.ok(offered.some((t) => t.includes('Explain this')), `the light bulb offers Explain this too: ${offered}`);
    await badge('drafting');
    const modus = wb.page.locator('.activitybar .action-item', { has: wb.page.locator('a[aria-label="Modus"]') });
    assert.match((await modus.getAttribute('class')) ?? '', /\bchecked\b/, 'the Modus sidebar is shown');
    assert.equal(await card().locator('.plan-goal').textContent(), 'A change in src/app.py');
    assert.equal(await card().locator('.plan-scope').textContent(), 'Scope: src/app.py');
    await chat().locator('.msg.user', { hasText: 'File: src/app.py, lines 2-3:' }).waitFor();
    // the question is Markdown: its code spans as code
    const question = chat().locator('.msg.assistant', { hasText: 'Rename b to what? I suggest beta.' });
    await question.waitFor();
    assert.deepEqual(await question.locator('code').allTextContents(), ['b', 'beta']);
    await wb.page.locator('[id="modus.modus.modus.phase"]', { hasText: 'PLAN' }).waitFor();
  });

  step('plan_exit asks inside the card: the plan document, Approve / Reject / Revise; Approve', async () => {
    await send('beta, please');
    const asked = card().locator('[data-approval]');
    await asked.locator('button.approve').waitFor();
    await badge('pending approval');
    assert.deepEqual(await asked.locator('.buttons button').allTextContents(), ['Approve', 'Reject', 'Revise']);
    assert.ok(await asked.locator('details.plan-doc h4', { hasText: 'Approach' }).isVisible(), 'the plan document is open');
    assert.equal(await marks('#plan .plan-steps'), '○○○');
    await asked.locator('button.approve').click();
    await badge('step');
  });

  step('the steps tick and the todo panel follows the model; a step done and one in progress', async () => {
    // the model waits for its command to be approved, in the middle of step 2
    const command = chat().locator('.card.tool[data-tool="execute_command"] [data-approval] button.approve');
    await command.waitFor();
    await badge('step 2 of 3');
    assert.equal(await marks('#plan .plan-steps'), '✓▶○');
    assert.equal(await chat().locator('#todos .todos-count').textContent(), '1 of 3 done');
    assert.equal(await marks('#todos'), '✓▶○');
    assert.equal(await chat().locator('#todos li.completed .todo-text').evaluate((e) => getComputedStyle(e).textDecorationLine), 'line-through');
    assert.equal(readFileSync(join(wb.workspace, 'src', 'app.py'), 'utf8'), 'a = 1\nbeta = 2\nc = 3\n');
    const sidebar = (await wb.chatElement.boundingBox())!;
    assert.ok(sidebar.width < 400, `the default sidebar is narrow (${sidebar.width}px)`);
    assert.ok(await chat().locator('body').evaluate((b) => b.scrollWidth <= b.clientWidth), 'nothing overflows the sidebar');
    if (screenshot) await wb.page.screenshot({ path: screenshot });
    await command.click();
    await badge('completed');
    assert.equal(await marks('#plan .plan-steps'), '✓✓✓');
    assert.equal(await card().locator('.md p').first().textContent(), 'b is now beta; the tests pass.');
    await chat().locator('.msg.assistant', { hasText: 'Done: b is now beta.' }).waitFor();
    assert.equal(await chat().locator('#todos .todos-count').textContent(), '2 of 3 done');
  });

  step('Modus: Reject Plan from the palette, with feedback, answers a second plan; Approve Plan with nothing to approve says so', async () => {
    await send('Now plan the docs');
    await card().locator('[data-approval] button.approve').waitFor();
    await badge('pending approval');
    assert.equal(await card().locator('.plan-goal').textContent(), 'Document beta');
    await wb.command('Modus: Reject Plan');
    const input = wb.page.locator('.quick-input-widget input');
    await input.fill('Not now');
    await input.press('Enter');
    await badge('rejected');
    assert.equal(await card().locator('[data-approval]').count(), 0, 'the question was withdrawn');
    const exit = chat().locator('.card.tool[data-tool="plan_exit"]').last();
    await exit.locator('.status', { hasText: 'done' }).waitFor();
    assert.match((await exit.locator('details.result pre').textContent()) ?? '', /The user rejected the plan\. Their feedback: Not now/);
    await chat().locator('.msg.assistant', { hasText: 'Understood, no docs.' }).waitFor();

    await wb.command('Modus: Approve Plan');
    await wb.page.locator('.notification-toast', { hasText: 'No plan to approve' }).waitFor();
    assert.ok((await wb.notifications()).some((m) => /^Modus: No plan to approve: the plan state is normal/.test(m)));
    assert.deepEqual(wb.extensionErrors(), []);
  });

  step('after a reload the card shows the plan still waiting, with its own Approve, and the todos', async () => {
    await send('Plan the changelog');
    await card().locator('[data-approval] button.approve').waitFor();
    writeFileSync(script(), JSON.stringify(AFTER_RELOAD));
    await wb.open();
    await wb.showChat();
    await badge('pending approval');
    assert.equal(await card().locator('.plan-goal').textContent(), 'Write a changelog');
    assert.equal(await card().locator('[data-approval]').count(), 0, 'no question: that server is gone');
    assert.equal(await chat().locator('#todos .todos-count').textContent(), '2 of 3 done');
    await card().locator('.plan-decision button.approve').click();
    await badge('completed');
    await chat().locator('.msg.assistant', { hasText: 'All done.' }).waitFor();
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
