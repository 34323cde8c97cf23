// The extension in a real VS Code (code-server 4.139 = VS Code 1.139, its real Node extension
// host), driven as a user would from headless Chromium: a failed start, the fix through the
// settings, the sidebar chat with an approval, the file on disk, the palette mode switch, the
// status bar, a FileRestrictionError card, cancelling a pending approval, the header at the
// sidebar's width, a reload that brings the conversation back, and the server killed (SIGKILL) twice:
// the chat says how it ended, it starts again by itself, the conversation is back, Enter sends, and
// only the turn that was running is told interrupted. The profile is a new user's: no model
// configured, the chat offers to set one up.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// MODUS_CRASH_SCREENSHOT=docs/crash.png saves the chat after the first kill and its restart;
// MODUS_SETUP_SCREENSHOT=docs/setup.png the workbench with the set-up card.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { modusPython } from '../server';
import { QUIET_SETTINGS, steps, Workbench } from './workbench';

const SCRIPT = {
  turns: [
    {
      text: "I'll write hello.txt.",
      toolCalls: [{ name: 'write_to_file', arguments: { path: 'hello.txt', content: 'Hello from Modus\nsecond line\n' } }],
    },
    { text: 'Wrote hello.txt.' },
    { toolCalls: [{ name: 'write_to_file', arguments: { path: 'src/app.py', content: "print('hi')\n" } }] },
    { text: 'Architect mode may only edit Markdown.' },
    { toolCalls: [{ name: 'write_to_file', arguments: { path: 'notes.md', content: '# Notes\n' } }] },
    { toolCalls: [{ name: 'plan_mode_respond', arguments: { response: 'Plan: add notes.md with a title.' } }] },
    { toolCalls: [{ name: 'write_to_file', arguments: { path: 'notes.md', content: '# Notes\n' } }] },
    { text: 'Notes written.' },
  ],
};

/** a 1×1 PNG, pasted into a queued message */
const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==';
const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_WORKBENCH_SCREENSHOT;
const setupShot = process.env.MODUS_SETUP_SCREENSHOT;
const crashScreenshot = process.env.MODUS_CRASH_SCREENSHOT;

describe('the extension in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;
  const settings = (pythonPath: string, model = true) => ({
    ...QUIET_SETTINGS, // autoSave off: the extension must save by itself
    'modus.pythonPath': pythonPath,
    ...(model ? { 'modus.models': { default: { provider: 'scripted', script: join(wb.workspace, '.script.json') } } } : {}),
  });

  before(async () => {
    wb = new Workbench({ codeServerDir: codeServerDir!, vsix: vsix!, files: { '.script.json': JSON.stringify(SCRIPT) } });
    // first a Python without the server: what a new user with the wrong interpreter gets
    wb.writeSettings(settings(process.env.MODUS_BARE_PYTHON ?? 'python3', false));
    await wb.start();
  });
  const step = steps(() => wb);
  after(async () => {
    await wb?.stop();
  });

  const chat = () => wb.chat;

  step('a failed start is one notification that names the cause, and the chat shows it in place of the composer', async () => {
    const toast = wb.page.locator('.notification-toast', { hasText: 'Modus' });
    await toast.first().waitFor({ timeout: 30_000 });
    const modus = (await wb.notifications()).filter((m) => /modus/i.test(m));
    assert.equal(modus.length, 1, `one notification: ${JSON.stringify(modus)}`);
    assert.match(modus[0], /No module named server/);
    await wb.showChat();
    const failed = chat().locator('#server');
    await failed.waitFor();
    assert.match((await failed.textContent()) ?? '', /No module named server/);
    assert.equal(await chat().locator('#composer').isVisible(), false, 'no composer while the server is down');
    assert.deepEqual(wb.extensionErrors(), [], 'no unhandled errors of the extension');
  });

  step('"Open Setting" shows modus.pythonPath, editable in the User settings; a change restarts the server', async () => {
    await chat().locator('#server button', { hasText: 'Open Setting' }).click();
    const input = wb.page.locator('.settings-editor .setting-item-contents[data-key="modus.pythonPath"] input');
    await input.waitFor();
    assert.equal(await input.isEditable(), true, 'not greyed out in a remote window');
    await input.fill(modusPython());
    await input.press('Enter');
    await chat().locator('#input').waitFor({ timeout: 30_000 });
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor();
    assert.equal(await chat().locator('#server').isVisible(), false);
    assert.match(readFileSync(join(wb.userData, 'User', 'settings.json'), 'utf8'), /"modus\.pythonPath": ".*python"/);
    await wb.page.keyboard.press('Escape'); // the settings editor is a modal over the workbench
    await wb.page.locator('.settings-editor').waitFor({ state: 'hidden' });
  });

  step('no model configured: the empty chat offers to set one up; Test Connection says what the server found', async () => {
    await wb.showChat();
    const card = chat().getByRole('region', { name: 'Set up a model' });
    await card.waitFor({ timeout: 30_000 });
    await card.getByLabel('Provider').selectOption({ label: 'OpenAI-compatible server (Ollama, LM Studio, vLLM…)' });
    await card.getByLabel('Server address').fill('http://127.0.0.1:9/v1'); // nothing listens there
    await card.getByRole('button', { name: 'Test Connection' }).click();
    await card.getByRole('status').filter({ hasText: 'cannot connect (connection refused)' }).waitFor({ timeout: 30_000 });
    assert.equal(await chat().locator('#log .empty kbd', { hasText: 'Escape' }).count(), 1, 'the keys to know, under the card');
    if (setupShot) await wb.page.screenshot({ path: setupShot });
    // the user writes modus.models by hand (read again with the window): the card goes
    wb.writeSettings(settings(modusPython()));
    await wb.open();
    await wb.showChat();
    await chat().locator('#input').waitFor({ timeout: 30_000 });
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    assert.equal(await card.isVisible(), false);
  });

  step('the chat streams a reply, an approved write lands on disk, saved, byte for byte', async () => {
    await wb.showChat();
    await wb.send('Write hello.txt please');
    const approval = chat().locator('[data-approval]').first();
    await approval.waitFor();
    await approval.locator('button.approve').click();
    await chat().locator('.msg.assistant', { hasText: 'Wrote hello.txt.' }).waitFor();
    // autoSave is off: the bytes on disk are there because the extension saved the document
    assert.equal(readFileSync(join(wb.workspace, 'hello.txt'), 'utf8'), 'Hello from Modus\nsecond line\n');
    const card = chat().locator('.card.tool[data-tool="write_to_file"]').first();
    assert.equal(await card.locator('.status').first().textContent(), 'done');
    const tab = await wb.openFile('hello.txt');
    assert.doesNotMatch((await tab.getAttribute('class')) ?? '', /\bdirty\b/, 'the edited document is saved');
    await wb.page.locator('.monaco-editor .view-lines', { hasText: 'Hello from Modus' }).waitFor();
  });

  step('the palette switches to Architect: the status bar and the chat follow', async () => {
    await wb.command('Modus: Switch Mode');
    await wb.pick('Architect');
    await wb.modeStatus.filter({ hasText: 'Architect' }).waitFor();
    assert.equal(await chat().locator('#mode').inputValue(), 'architect');
  });

  step('a .py write in Architect is a red FileRestrictionError card and nothing is written', async () => {
    await wb.send('Now the code');
    const card = chat().locator('.card.tool.has-error', { hasText: 'FileRestrictionError' });
    await card.waitFor();
    assert.match((await card.locator('.error-message').textContent()) ?? '', /src\/app\.py/);
    const color = await card.locator('.error-type').evaluate((e) => getComputedStyle(e).color);
    assert.notEqual(color, await chat().locator('body').evaluate((e) => getComputedStyle(e).color), 'in the error colour');
    await chat().locator('.msg.assistant', { hasText: 'Architect mode may only edit Markdown.' }).waitFor();
    assert.equal(existsSync(join(wb.workspace, 'src', 'app.py')), false);
  });

  step('while a turn waits for approval the header fits the sidebar, and Cancel ends it quietly', async () => {
    await wb.send('And the notes');
    const approval = chat().locator('[data-approval]').last();
    await approval.locator('button.approve').waitFor();
    const sidebar = (await wb.chatElement.boundingBox())!;
    assert.ok(sidebar.width < 400, `the default sidebar is narrow (${sidebar.width}px)`);
    for (const id of ['#mode', '#cancel', '#history', '#new']) {
      const box = await chat().locator(id).boundingBox(); // in page coordinates, as the sidebar's
      assert.ok(
        box && box.width > 0 && box.x >= sidebar.x && box.x + box.width <= sidebar.x + sidebar.width,
        `${id} is shown whole: ${JSON.stringify(box)} in ${JSON.stringify(sidebar)}`,
      );
    }
    assert.ok(
      await chat().locator('body').evaluate((b) => b.scrollWidth <= b.clientWidth),
      'the header does not overflow the sidebar',
    );
    if (screenshot) await wb.page.screenshot({ path: screenshot });
    await chat().locator('#cancel').click();
    await chat().locator('.note.turn-cancelled').waitFor();
    await approval.locator('button.approve').waitFor({ state: 'detached' });
    assert.equal(existsSync(join(wb.workspace, 'notes.md')), false);
    assert.doesNotMatch(wb.logs(), /Traceback|InvalidStateError/);
    assert.deepEqual(wb.extensionErrors(), []);
  });

  step('PLAN ⇄ ACT from the status bar, the palette, the keyboard and the badge; a plan answered, then carried out', async () => {
    const phaseStatus = wb.page.locator('[id="modus.modus.modus.phase"]');
    await phaseStatus.filter({ hasText: 'ACT' }).waitFor();
    await phaseStatus.click();
    await phaseStatus.filter({ hasText: 'PLAN' }).waitFor();
    const badge = chat().locator('#phase');
    await badge.filter({ hasText: 'PLAN' }).waitFor();
    assert.match((await badge.getAttribute('class')) ?? '', /\bplan\b/);
    await wb.command('Modus: Toggle Plan/Act');
    await phaseStatus.filter({ hasText: 'ACT' }).waitFor();
    await chat().locator('#log').click({ position: { x: 5, y: 5 } }); // the sidebar has the focus
    await wb.page.keyboard.press('Control+Alt+P');
    await phaseStatus.filter({ hasText: 'PLAN' }).waitFor();
    await badge.filter({ hasText: 'PLAN' }).waitFor();

    await wb.send('Plan the notes');
    await chat().locator('.msg.assistant', { hasText: 'Plan: add notes.md with a title.' }).waitFor();
    await chat().locator('#cancel').waitFor({ state: 'hidden' }); // the turn waits for the user
    assert.equal(await chat().locator('.card.tool[data-tool="plan_mode_respond"]').count(), 0, 'the response is a message, not a card');

    await badge.click(); // to ACT: the plan is carried out
    await phaseStatus.filter({ hasText: 'ACT' }).waitFor();
    const approval = chat().locator('.card.tool[data-tool="write_to_file"]').last().locator('[data-approval]');
    await approval.locator('button.approve').click();
    await chat().locator('.msg.assistant', { hasText: 'Notes written.' }).waitFor();
    assert.equal(readFileSync(join(wb.workspace, 'notes.md'), 'utf8'), '# Notes\n');
  });

  step('after a reload the chat shows the conversation again', async () => {
    await wb.open();
    await wb.showChat();
    await chat().locator('.msg.user', { hasText: 'Write hello.txt please' }).waitFor({ timeout: 30_000 });
    await chat().locator('.card.tool.has-error', { hasText: 'FileRestrictionError' }).waitFor();
    await chat().locator('.msg.assistant', { hasText: 'Plan: add notes.md with a title.' }).waitFor();
    await wb.modeStatus.filter({ hasText: 'Architect' }).waitFor();
    // the cancelled approval is not asked again, and the composer is back
    assert.equal(await chat().locator('[data-approval] button.approve').count(), 0);
    assert.ok(await chat().locator('#send').isEnabled());
  });

  step('New starts an empty conversation; the list brings the earlier one back', async () => {
    await chat().locator('#new').click();
    await chat().locator('.msg.user').first().waitFor({ state: 'detached' });
    await chat().locator('#history').click();
    const item = chat().locator('#conversations button.conversation', { hasText: 'Write hello.txt please' });
    await item.waitFor();
    assert.match((await item.textContent()) ?? '', /Architect/);
    await item.click();
    await chat().locator('.msg.user', { hasText: 'Write hello.txt please' }).waitFor();
    await chat().locator('.card.tool.has-error', { hasText: 'FileRestrictionError' }).waitFor();
    // the server keeps the choice: a reload shows the same conversation
    await wb.open();
    await wb.showChat();
    await chat().locator('.msg.user', { hasText: 'And the notes' }).waitFor({ timeout: 30_000 });
  });

  step('a denial with feedback reads as a sentence and the feedback, and the decided card loses the accent', async () => {
    // a new server since the reload: the script starts again at its first turn (hello.txt)
    await chat().locator('#mode').selectOption('code');
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor();
    await wb.send('Write hello.txt again');
    const card = chat().locator('.card.tool[data-tool="write_to_file"]').last();
    const approval = card.locator('[data-approval]');
    await approval.locator('button.deny').waitFor();
    const pendingBorder = await approval.evaluate((e) => getComputedStyle(e).borderLeftColor);
    await approval.locator('textarea.feedback').fill('Not now, thanks');
    await approval.locator('button.deny').click();
    await card.locator('.error-type', { hasText: 'Denied' }).waitFor();
    const text = (await card.textContent()) ?? '';
    assert.match(text, /The user denied this operation\./);
    assert.match(text, /Feedback: Not now, thanks/);
    assert.doesNotMatch(text, /<\/?feedback>/);
    const decided = card.locator('[data-approval]');
    assert.equal(await decided.evaluate((e) => getComputedStyle(e).borderLeftWidth), '1px');
    assert.notEqual(await decided.evaluate((e) => getComputedStyle(e).borderLeftColor), pendingBorder);
  });

  /** Kills the server of the page with SIGKILL; resolves with its pid once the chat says how it ended. */
  const killServer = async (): Promise<number> => {
    const pid = wb.serverPids().at(-1);
    assert.ok(pid, 'a server runs');
    process.kill(pid, 'SIGKILL');
    await chat().locator('#server .server-title', { hasText: 'The Modus server stopped (killed by SIGKILL).' }).waitFor({ timeout: 30_000 });
    return pid;
  };
  /** Types in the composer and sends with Enter, key by key, as a user does. */
  const typeAndEnter = async (text: string) => {
    await chat().locator('#input').click();
    await wb.page.keyboard.type(text);
    await wb.page.keyboard.press('Enter');
  };
  const replies = () => chat().locator('.msg.assistant', { hasText: 'Wrote hello.txt.' });
  const interrupted = () => chat().locator('.note.turn-interrupted', { hasText: 'The turn of modus was interrupted' });
  const restartedNote = 'The Modus server stopped (killed by SIGKILL) and was started again.';

  step('a kill -9 while a turn waits: told as a stop, the spinner stops, the question goes; it starts again by itself', async () => {
    await wb.send('Now the app');
    const approval = chat().locator('[data-approval]').last();
    await approval.locator('button.approve').waitFor();
    await chat().locator('#busy').waitFor();
    const killed = await killServer();
    const box = chat().locator('#server');
    assert.deepEqual(await box.locator('button:visible').allTextContents(), ['Show Log'], 'a crash is no failed start: no interpreter fixes');
    assert.equal(await chat().locator('#busy').isVisible(), false, 'the spinner stopped');
    assert.equal(await approval.locator('button.approve').count(), 0, 'the question went with the server');
    // no click: it starts again, and the conversation is read again
    await box.waitFor({ state: 'hidden', timeout: 30_000 });
    await chat().locator('#log .msg').last().filter({ hasText: restartedNote }).waitFor({ timeout: 30_000 });
    assert.notEqual(wb.serverPids().at(-1), killed);
    await chat().locator('.msg.user', { hasText: 'Now the app' }).waitFor();
    assert.equal(await interrupted().count(), 1, 'the turn that was running');
    assert.equal(existsSync(join(wb.workspace, 'src', 'app.py')), false);
    assert.deepEqual((await wb.notifications()).filter((m) => /did not start/.test(m)), [], 'no failed-start notification');
  });

  step('after the restart Enter sends: the message is answered as before', async () => {
    // a new server: the script starts again at its first turn (hello.txt)
    const wrote = await replies().count();
    await typeAndEnter('Write hello.txt once more');
    await chat().locator('.msg.user', { hasText: 'Write hello.txt once more' }).waitFor();
    assert.equal(await chat().locator('#input').inputValue(), '');
    await chat().locator('[data-approval] button.approve').last().click();
    await replies().nth(wrote).waitFor();
    await chat().locator('#busy').waitFor({ state: 'hidden' });
    if (crashScreenshot) await wb.page.screenshot({ path: crashScreenshot });
  });

  step('a kill -9 after a finished reply: started again, no turn told interrupted, Enter sends', async () => {
    // the script's third turn: src/app.py, then its last words
    const answers = () => chat().locator('.msg.assistant', { hasText: 'Architect mode may only edit Markdown.' });
    const answered = await answers().count();
    await typeAndEnter('Now the app, really');
    await chat().locator('[data-approval] button.approve').last().click();
    await answers().nth(answered).waitFor(); // killed as soon as the reply shows
    await killServer();
    await chat().locator('#server').waitFor({ state: 'hidden', timeout: 30_000 });
    // the conversation read again, then the note (the earlier one went with the reload)
    await chat().locator('#log .msg').last().filter({ hasText: restartedNote }).waitFor({ timeout: 30_000 });
    assert.equal(await chat().locator('.msg.system', { hasText: restartedNote }).count(), 1);
    await chat().locator('.msg.user', { hasText: 'Now the app, really' }).waitFor();
    await answers().nth(answered).waitFor();
    assert.equal(await interrupted().count(), 1, 'still only the turn killed while it ran');
    await typeAndEnter('Thanks');
    await chat().locator('.msg.user', { hasText: 'Thanks' }).waitFor();
    await chat().locator('#cancel').click(); // the script's first turn again: its question is not needed
    await chat().locator('.note.turn-cancelled').last().waitFor();
    assert.deepEqual(wb.extensionErrors(), []);
  });

  step("a cancelled turn's Retry runs it again; a message sent meanwhile is queued and taken back; Edit & resend cuts back and answers anew", async () => {
    // from an editor, Ctrl+Alt+M (Modus: Focus the Chat's Message Box) puts the focus in the chat's box
    await wb.openFile('hello.txt');
    await wb.page.keyboard.press('Control+Alt+M');
    await chat().locator('#input:focus').waitFor({ timeout: 10_000 });
    // the turn cancelled just before: Retry runs it again (the script's next turn answers)
    await chat().locator('.note.turn-cancelled').last().getByRole('button', { name: 'Retry' }).click();
    await chat().locator('#log > *').last().filter({ hasText: 'Wrote hello.txt.' }).waitFor({ timeout: 30_000 });
    assert.equal(await chat().locator('.note.turn-cancelled button.retry').count(), 0, 'Retry goes once the turn ran again');
    // Edit & resend "Thanks": the conversation is cut back there and the new words answered
    const thanks = chat().locator('.msg.user', { hasText: 'Thanks' }).last();
    await thanks.hover();
    await thanks.getByRole('button', { name: 'Edit' }).click();
    const box = chat().getByRole('textbox', { name: 'Edit the message' });
    await box.fill('Write the app after all');
    await box.press('Enter');
    const approval = chat().locator('[data-approval] button.approve').last();
    await approval.waitFor({ timeout: 30_000 });
    // while the turn waits, Send reads Queue: the message waits above the box, and comes back with
    // Take back, its pasted image with it
    await chat().locator('#send', { hasText: 'Queue' }).waitFor();
    await wb.pasteImage(TINY_PNG);
    await chat().locator('#attachments img.thumb').waitFor();
    await wb.send('and a test for it');
    const queued = chat().getByLabel('Queued messages');
    await queued.locator('.queued-text', { hasText: 'and a test for it' }).waitFor();
    assert.equal(await chat().locator('#attachments img.thumb').count(), 0, 'sent with the message');
    await queued.getByRole('button', { name: 'Take back' }).click();
    await queued.waitFor({ state: 'hidden' });
    assert.equal(await chat().locator('#input').inputValue(), 'and a test for it');
    assert.equal(await chat().locator('#attachments img.thumb').getAttribute('src'), `data:image/png;base64,${TINY_PNG}`);
    await chat().locator('#attachments button.remove').click();
    await chat().locator('#input').fill('');
    await approval.click();
    await chat().locator('#log > *').last().filter({ hasText: 'Architect mode may only edit Markdown.' }).waitFor({ timeout: 30_000 });
    const users = await chat().locator('#log .msg.user .text').allTextContents();
    assert.equal(users.at(-1), 'Write the app after all');
    assert.equal(users.includes('Thanks'), false, 'the edited message and what came after it left the chat');
    assert.equal(await chat().locator('.msg.user', { hasText: 'and a test for it' }).count(), 0, 'taken back: never sent');
  });

  step('Modus: Set Up a Model opens the card again; Save makes the model the default in the User settings', async () => {
    await wb.command('Modus: Set Up a Model');
    const card = chat().getByRole('region', { name: 'Set up a model' });
    await card.waitFor();
    await card.getByLabel('Provider').selectOption({ label: 'OpenAI-compatible server (Ollama, LM Studio, vLLM…)' });
    await card.getByLabel('Model').fill('qwen3');
    await card.getByRole('button', { name: 'Save' }).click();
    await card.waitFor({ state: 'hidden' });
    const saved = () => JSON.parse(readFileSync(join(wb.userData, 'User', 'settings.json'), 'utf8'))['modus.models'];
    await waitUntil(() => saved()?.default?.model === 'qwen3');
    assert.deepEqual(saved().default, { provider: 'openai', model: 'qwen3', baseUrl: 'http://localhost:11434/v1' });
  });
});

async function waitUntil(ok: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error('not within 10 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}
