// The context window in a real VS Code (code-server 4.139, its Node extension host), driven from
// headless Chromium as a user would: a scripted model with a small window (20,000 tokens; the
// system prompt alone takes about 4,800) whose turns report their tokens. The chat's header shows
// the context bar (used / window, before any request the window alone) beside the task's tokens
// and cost priced by the model's `pricing`; a click before any message says there is nothing to
// condense; a tool card offers its checkpoint's Show diff and Restore; a click on the bar
// condenses the conversation: the chat says so and the bar goes down;
// the palette's Modus: Condense the Conversation while a turn runs shows the server's refusal.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// MODUS_CONTEXT_SCREENSHOT=docs/context.png saves the workbench with the three together (the
// card's diff open beside the chat).
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { formatCount } from '../../src/protocol/usage';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const NOTES = '# Notes\n\nWritten by Modus.\n';

const SCRIPT = {
  turns: [
    {
      text: "I'll write the notes.",
      toolCalls: [{ name: 'write_to_file', arguments: { path: 'notes.md', content: NOTES } }],
      usage: { inputTokens: 6000, outputTokens: 20 },
    },
    { text: 'Wrote notes.md.', usage: { inputTokens: 6200, outputTokens: 120 } },
    { text: 'They are still there.', usage: { inputTokens: 6600, outputTokens: 40 } },
    // the summary the condensing asks for
    { text: 'The user asked for notes.md; it was written, and checked once.', usage: { inputTokens: 6700, outputTokens: 60 } },
    { toolCalls: [{ name: 'execute_command', arguments: { command: 'echo check' } }], usage: { inputTokens: 5000, outputTokens: 30 } },
    { text: 'Not run, then.', usage: { inputTokens: 5100, outputTokens: 10 } },
  ],
};
// USD per million tokens: turn 1 costs (6,000 × 3 + 20 × 15) / 10⁶ = $0.0183, turn 2
// (6,200 × 3 + 120 × 15) / 10⁶ = $0.0204
const PRICING = { input: 3, output: 15 };

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_CONTEXT_SCREENSHOT;

describe('the context window in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;

  before(async () => {
    wb = await scriptedWorkbench({
      codeServerDir: codeServerDir!,
      vsix: vsix!,
      script: SCRIPT,
      model: { contextWindow: 20_000, pricing: PRICING },
      settings: { 'modus.autoApprove': { edit: true } },
    });
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);
  const chat = () => wb.chat;
  const bar = () => chat().locator('#context');
  const barText = () => bar().locator('.context-text');

  step('before any request the context bar shows the model’s window alone; there is nothing to condense', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    await wb.showChat();
    await barText().filter({ hasText: '— / 20k' }).waitFor();
    assert.equal(
      await bar().getAttribute('aria-label'),
      'Context: no request yet; the window holds 20,000 tokens. Condensed by itself at 16,000. Click to condense now.',
    );
    await bar().click();
    const said = 'Modus: nothing to condense: the conversation has no messages yet.';
    await wb.page.locator('.notification-toast', { hasText: said }).waitFor();
    assert.deepEqual(await wb.notifications(), [said]);
  });

  step('after a turn: the tool card’s Show diff and Restore, the task’s tokens and cost, the bar at what the last request took', async () => {
    await wb.send('Write the notes');
    await chat().locator('.msg.assistant', { hasText: 'Wrote notes.md.' }).waitFor({ timeout: 30_000 });
    const checkpoint = chat().locator('.card.tool[data-tool="write_to_file"] .checkpoint');
    await checkpoint.waitFor();
    assert.deepEqual(await checkpoint.getByRole('button').allTextContents(), ['Show diff', 'Restore']);
    await chat().locator('#usage .usage-text', { hasText: '12.3k tokens · $0.04' }).waitFor();
    // the last request: 6,200 in and its 120 out
    await barText().filter({ hasText: '6.3k / 20k' }).waitFor();
    assert.equal(await bar().getAttribute('aria-label'), 'Context: 6,320 of 20,000 tokens (32%). Condensed by itself at 16,000. Click to condense now.');
    assert.equal(await bar().getAttribute('title'), await bar().getAttribute('aria-label'), 'the same words on hover');
  });

  step('a click on the bar condenses the conversation: the chat says so, the bar goes down', async () => {
    await wb.send('Check them again');
    await chat().locator('.msg.assistant', { hasText: 'They are still there.' }).waitFor();
    await barText().filter({ hasText: '6.6k / 20k' }).waitFor();
    await bar().click();
    const line = chat().locator('.msg.system', { hasText: 'Condensed the conversation:' });
    await line.waitFor();
    const text = (await line.textContent()) ?? '';
    const said = /^Condensed the conversation: ([\d,]+) → ([\d,]+) tokens\.$/.exec(text);
    assert.ok(said, text);
    const [before, after] = [said[1], said[2]].map((n) => Number(n.replace(/,/g, '')));
    assert.ok(after < before, `${after} < ${before}`);
    await barText().filter({ hasText: `${formatCount(after)} / 20k` }).waitFor();
    assert.equal(await bar().getAttribute('aria-busy'), null, 'done waiting');
    assert.deepEqual(wb.extensionErrors(), []);
    if (screenshot) {
      // the card's diff beside the chat
      await chat().locator('.card.tool[data-tool="write_to_file"]').getByRole('button', { name: 'Show diff' }).click();
      await wb.page.locator('.tabs-container .tab[aria-label^="notes.md (before write_to_file ↔ now)"]').waitFor();
      await wb.page.locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'Written by Modus.' }).waitFor();
      await wb.page.screenshot({ path: screenshot });
    }
  });

  step('Modus: Condense the Conversation while a turn runs: the chat shows the server’s refusal', async () => {
    await wb.send('Run the check');
    const approval = chat().locator('.card.tool[data-tool="execute_command"] [data-approval]');
    await approval.getByRole('button', { name: 'Deny' }).waitFor({ timeout: 30_000 });
    await wb.command('Modus: Condense the Conversation');
    const refused = chat().locator('.msg.client-error', { hasText: 'Could not condense:' });
    await refused.waitFor();
    assert.match((await refused.textContent()) ?? '', /^Could not condense: conversationId: a turn is running in conversation \S+; cancel it first$/);
    assert.equal(await bar().getAttribute('aria-busy'), null, 'the bar is back');
    await approval.getByRole('button', { name: 'Deny' }).click();
    await chat().locator('.msg.assistant', { hasText: 'Not run, then.' }).waitFor();
    assert.equal(await chat().locator('.msg.system', { hasText: 'Condensed the conversation:' }).count(), 1, 'condensed once');
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
