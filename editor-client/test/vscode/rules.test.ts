// What a mode may do and what runs without asking, in a real VS Code (code-server 4.139, its Node
// extension host), driven from headless Chromium as a user would: the palette's mode picker tells
// a custom mode's MCP servers and command rules; "Always allow" on a command's approval shows the
// rule, then the diff of .modus/settings.json, writes it, and the same command is not asked again;
// a workspace's `yolo: true` waits for the user's trust (the server's warning names the command),
// "Modus: Trust Workspace Settings" applies it: the sidebar says yolo, a command runs unasked;
// the file edited again, the sidebar follows with no message sent.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const MODES = `customModes:
  - slug: reviewer
    name: Reviewer
    roleDefinition: You review the changes and run the read-only checks.
    description: Review changes
    groups:
      - read
      - [mcp, {servers: [docs]}]
      - [command, {allow: ["git log*", "git diff*"], deny: ["rm -rf *"]}]
`;
const run = (command: string) => ({ toolCalls: [{ name: 'execute_command', arguments: { command } }] });
const SCRIPT = {
  turns: [
    run('echo always'),
    { text: 'Ran it.' },
    run('echo always'),
    { text: 'Ran it again.' },
    { text: 'Noted.' },
    run('echo unasked'),
    { text: 'Ran it without asking.' },
  ],
};
const RULE = 'autoApprove.modes.code.command: "echo always"';

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;

describe('mode rules, always allow and trusted workspace settings in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;

  before(async () => {
    wb = await scriptedWorkbench({ codeServerDir: codeServerDir!, vsix: vsix!, files: { '.modus/modes.yaml': MODES }, script: SCRIPT });
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);
  const chat = () => wb.chat;
  const send = (text: string) => wb.send(text);
  const settingsFile = () => join(wb.workspace, '.modus', 'settings.json');

  step('the palette’s mode picker tells each mode’s MCP servers and command rules', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    await wb.showChat();
    await wb.command('Modus: Switch Mode');
    const row = (label: string) => wb.page.locator('.quick-input-list .monaco-list-row', { hasText: label });
    await row('Reviewer').waitFor();
    assert.match(
      (await row('Reviewer').textContent()) ?? '',
      /MCP: docs · commands: allow git log\*, git diff\*; deny rm -rf \* — Review changes/,
    );
    assert.match((await row('Architect').textContent()) ?? '', /all MCP servers · no commands/);
    assert.match((await row('Code').first().textContent()) ?? '', /all MCP servers · any command/);
    await wb.page.keyboard.press('Escape');
    // the sidebar's dropdown tells them too
    const option = chat().locator('#mode option[value="reviewer"]');
    assert.equal(await option.getAttribute('title'), 'Review changes\nMCP: docs · commands: allow git log*, git diff*; deny rm -rf *');
    assert.equal(await chat().locator('#mode').inputValue(), 'code', 'Escape switched nothing');
  });

  step('Always allow on a command: the rule on the card, the settings diff asked next, the file written, the same command not asked again', async () => {
    await send('Run echo always');
    const card = chat().locator('.card.tool[data-tool="execute_command"]').first();
    const approval = card.locator('[data-approval]').first();
    await approval.getByRole('button', { name: 'Always allow' }).waitFor({ timeout: 30_000 });
    assert.equal(await approval.locator('.always-rule code').textContent(), RULE);
    await approval.getByRole('button', { name: 'Always allow' }).click();

    // asked in the same card: the server gives it the call's toolCallId
    const diff = card.locator('.card.approval', { hasText: 'Always allow: write this rule to .modus/settings.json?' });
    await diff.waitFor();
    assert.deepEqual(await diff.locator('pre.diff .file').allTextContents(), ['--- /dev/null\n', '+++ b/.modus/settings.json\n'], 'a new file');
    assert.ok((await diff.locator('pre.diff .add').allTextContents()).some((l) => l.includes('"echo always"')));
    assert.deepEqual(await diff.getByRole('button').allTextContents(), ['Approve', 'Deny']);
    await diff.getByRole('button', { name: 'Approve' }).click();

    await chat().locator('.msg.assistant', { hasText: 'Ran it.' }).waitFor();
    assert.equal(await card.locator('.status').first().textContent(), 'done');
    assert.equal(await approval.locator('.decision').textContent(), 'Always allowed');
    assert.deepEqual(JSON.parse(readFileSync(settingsFile(), 'utf8')), { autoApprove: { modes: { code: { command: ['echo always'] } } } });

    await send('Once more');
    await chat().locator('.msg.assistant', { hasText: 'Ran it again.' }).waitFor();
    const again = chat().locator('.card.tool[data-tool="execute_command"]').nth(1);
    assert.equal(await again.locator('.status').first().textContent(), 'done');
    assert.equal(await again.locator('[data-approval]').count(), 0, 'not asked');
    assert.equal(await chat().locator('[data-approval] button').count(), 0, 'nothing waits for an answer');
  });

  step('a workspace’s yolo waits for the user’s trust; Modus: Trust Workspace Settings applies it and a command runs unasked', async () => {
    const settings = JSON.parse(readFileSync(settingsFile(), 'utf8'));
    writeFileSync(settingsFile(), JSON.stringify({ ...settings, yolo: true }, null, 2));
    await send('Did you see the settings?'); // the server reads the changed file before it answers
    await chat().locator('.msg.assistant', { hasText: 'Noted.' }).waitFor();
    await wb.page.locator('.notification-toast', { hasText: 'Modus: Trust Workspace Settings' }).first().waitFor();
    const warning = (await wb.notifications()).find((m) => m.includes('Trust Workspace Settings'));
    assert.match(warning ?? '', /settings\.json sets yolo, autoApprove: not applied until you trust this workspace's settings/);
    assert.equal(await chat().locator('#yolo').isVisible(), false, 'not yet');

    await wb.command('Modus: Trust Workspace Settings');
    await chat().locator('#yolo').waitFor();
    assert.equal(await chat().locator('#yolo').textContent(), 'YOLO: every action runs without asking.');
    await wb.page.locator('.notification-toast', { hasText: 'now apply' }).first().waitFor();
    assert.ok((await wb.notifications()).some((m) => m.includes("Modus: the workspace's settings (.modus/settings.json) now apply. yolo is on")));

    await send('Run echo unasked');
    await chat().locator('.msg.assistant', { hasText: 'Ran it without asking.' }).waitFor();
    const card = chat().locator('.card.tool[data-tool="execute_command"]', { hasText: 'echo unasked' });
    assert.equal(await card.locator('.status').first().textContent(), 'done');
    assert.equal(await card.locator('[data-approval]').count(), 0, 'not asked: yolo');
    assert.deepEqual(wb.extensionErrors(), []);
  });

  step('the settings file edited again: the sidebar follows at once, no message sent (state_changed)', async () => {
    const settings = JSON.parse(readFileSync(settingsFile(), 'utf8'));
    writeFileSync(settingsFile(), JSON.stringify({ ...settings, yolo: false }, null, 2));
    await chat().locator('#yolo').waitFor({ state: 'hidden' });
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
