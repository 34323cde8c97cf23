// Checkpoints and what a task costs, in a real VS Code (code-server 4.139, its Node extension
// host), driven from headless Chromium as a user would: a scripted turn writes a file and edits
// another (edits approved by the settings); each tool card then offers Show diff (VS Code's diff
// editor: the file as the checkpoint held it, against the file now; a quick pick when several
// changed) and Restore; Restore files brings the edited file back, on disk and in its open editor,
// and Undo restore puts the edit back again; the header shows the task's tokens and cost from the
// scripted usage priced by the model's `pricing`, the breakdown by mode and phase on hover; a
// restore of the files and the conversation cuts the chat back and the next turn goes on.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// MODUS_CHECKPOINTS_SCREENSHOT=docs/checkpoints.png saves the workbench with a diff open and a
// card's Restore choices.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const GREETING = 'Hello, world\nSecond line\n';
const EDITED = 'Hello, Modus\nSecond line\n';
const NOTES = '# Notes\n\nWritten by Modus.\n';

const SCRIPT = {
  turns: [
    {
      text: "I'll write the notes and fix the greeting.",
      toolCalls: [
        { name: 'write_to_file', arguments: { path: 'notes.md', content: NOTES } },
        { name: 'search_and_replace', arguments: { path: 'greeting.txt', search: 'world', replace: 'Modus' } },
      ],
      usage: { inputTokens: 10_000, outputTokens: 300, cacheReadTokens: 2000 },
    },
    { text: 'Wrote notes.md and changed the greeting.', usage: { inputTokens: 12_000, outputTokens: 80 } },
    { text: 'About seven cents so far.', usage: { inputTokens: 3000, outputTokens: 120 } },
    { text: 'Starting over from there.', usage: { inputTokens: 1000, outputTokens: 10 } },
  ],
};
// USD per million tokens: turn 1 costs (10,000 × 3 + 300 × 15 + 2,000 × 0.3) / 10⁶ = $0.0351,
// turn 2 (12,000 × 3 + 80 × 15) / 10⁶ = $0.0372, turn 3 (3,000 × 3 + 120 × 15) / 10⁶ = $0.0108
const PRICING = { input: 3, output: 15, cacheRead: 0.3 };

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_CHECKPOINTS_SCREENSHOT;

describe('checkpoints, restores and usage in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;

  before(async () => {
    wb = await scriptedWorkbench({
      codeServerDir: codeServerDir!,
      vsix: vsix!,
      files: { 'greeting.txt': GREETING },
      script: SCRIPT,
      model: { pricing: PRICING },
      settings: {
        'workbench.editor.enablePreview': false, // the diff editors open beside the file's own
        'diffEditor.useInlineViewWhenSpaceIsLimited': false, // both sides, next to the sidebar
        'modus.autoApprove': { edit: true },
      },
    });
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);
  const chat = () => wb.chat;
  const send = (text: string) => wb.send(text);
  const card = (tool: string) => chat().locator(`.card.tool[data-tool="${tool}"]`);
  const disk = (path: string) => (existsSync(join(wb.workspace, path)) ? readFileSync(join(wb.workspace, path), 'utf8') : undefined);
  /** the editor tab whose label is `label` */
  const tab = (label: string) => wb.page.locator(`.tabs-container .tab[aria-label="${label}"]`);
  /** the tab of a diff editor titled `title` (its label adds the file: "<title> (greeting.txt)") */
  const diffTab = (title: string) => wb.page.locator(`.tabs-container .tab[aria-label^="${title} ("]`);
  /** the text the active editor shows */
  const activeEditor = () => wb.page.locator('.editor-group-container.active .editor-instance');
  const diffSide = (side: 'original' | 'modified') => activeEditor().locator(`.monaco-diff-editor .editor.${side} .view-lines`);

  step('a turn writes notes.md and edits greeting.txt (open in an editor); both cards offer Show diff and Restore', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    await wb.openFile('greeting.txt');
    await activeEditor().locator('.view-lines', { hasText: 'Hello, world' }).waitFor();
    await wb.showChat();
    await send('Write the notes and fix the greeting');
    await chat().locator('.msg.assistant', { hasText: 'Wrote notes.md and changed the greeting.' }).waitFor({ timeout: 30_000 });
    assert.equal(disk('notes.md'), NOTES);
    assert.equal(disk('greeting.txt'), EDITED);
    for (const tool of ['write_to_file', 'search_and_replace']) {
      const bar = card(tool).locator('.checkpoint');
      await bar.waitFor();
      assert.deepEqual(await bar.getByRole('button').allTextContents(), ['Show diff', 'Restore'], tool);
    }
  });

  step('Show diff opens the diff editor: the file before the call on the left, now on the right; several files: a quick pick', async () => {
    await card('search_and_replace').getByRole('button', { name: 'Show diff' }).click();
    await diffTab('greeting.txt (before search_and_replace ↔ now)').waitFor();
    await diffSide('original').filter({ hasText: 'Hello, world' }).waitFor();
    await diffSide('modified').filter({ hasText: 'Hello, Modus' }).waitFor();

    // before the first call both files were as they were: which one?
    await card('write_to_file').getByRole('button', { name: 'Show diff' }).click();
    const rows = wb.page.locator('.quick-input-list .monaco-list-row');
    await rows.filter({ hasText: 'notes.md' }).waitFor();
    const picks = await rows.evaluateAll((rs) => rs.map((r) => [r.querySelector('.label-name')?.textContent, r.querySelector('.label-description')?.textContent]));
    assert.deepEqual(picks, [['greeting.txt', 'modified'], ['notes.md', 'added']]);
    await wb.pick('notes.md');
    await diffTab('notes.md (before write_to_file ↔ now)').waitFor();
    await diffSide('modified').filter({ hasText: 'Written by Modus.' }).waitFor();
    assert.equal((await diffSide('original').textContent())?.trim(), '', 'notes.md did not exist then');
  });

  step('Restore files brings greeting.txt back, on disk and in its editor; Undo restore puts the edit back', async () => {
    const restoreCard = card('search_and_replace');
    await restoreCard.getByRole('button', { name: 'Restore', exact: true }).click();
    await restoreCard.getByRole('button', { name: 'Restore files', exact: true }).click();
    const note = chat().locator('.note.restore-note').last();
    await note.filter({ hasText: 'Restored 1 file: greeting.txt.' }).waitFor();
    assert.equal(disk('greeting.txt'), GREETING);
    assert.equal(disk('notes.md'), NOTES, 'written before that call: it stays');
    await tab('greeting.txt').click();
    await activeEditor().locator('.view-lines', { hasText: 'Hello, world' }).waitFor();
    assert.doesNotMatch((await tab('greeting.txt').getAttribute('class')) ?? '', /\bdirty\b/, 'restored through the editor, then saved');

    await note.getByRole('button', { name: 'Undo restore' }).click();
    await chat().locator('.note.restore-note', { hasText: 'Restore undone: put back 1 file: greeting.txt.' }).waitFor();
    assert.equal(await chat().locator('.note.restore-note').first().textContent(), 'Restored 1 file: greeting.txt (undone).');
    assert.equal(disk('greeting.txt'), EDITED);
    await activeEditor().locator('.view-lines', { hasText: 'Hello, Modus' }).waitFor();
    assert.doesNotMatch((await tab('greeting.txt').getAttribute('class')) ?? '', /\bdirty\b/);
    assert.deepEqual(wb.extensionErrors(), []);
  });

  step('the header shows the task’s tokens and cost, the breakdown by mode and phase on hover', async () => {
    const usage = chat().locator('#usage');
    assert.equal(await usage.locator('.usage-text').textContent(), '24.4k tokens · $0.07');
    await chat().locator('#mode').selectOption('architect');
    await wb.modeStatus.filter({ hasText: 'Architect' }).waitFor();
    await send('What did that cost?');
    await chat().locator('.msg.assistant', { hasText: 'About seven cents so far.' }).waitFor();
    await usage.locator('.usage-text', { hasText: '3.1k tokens · $0.01' }).waitFor();
    const tip = chat().locator('#usage-tip');
    await usage.hover();
    await tip.waitFor();
    assert.equal(await tip.locator('.usage-tip-title').first().textContent(), 'This task (Architect · ACT)');
    assert.equal(await tip.locator('.usage-tip-total').textContent(), '27.5k tokens · $0.08');
    const rows = await tip.locator('tr').evaluateAll((trs) => trs.map((tr) => tr.textContent));
    assert.deepEqual(rows, ['Code · ACT24.4k tokens · $0.07', 'Architect · ACT3.1k tokens · $0.01']);
    if (screenshot) {
      // the greeting's diff beside the chat, a card's Restore choices open, the cost in the header;
      // the sidebar dragged a little wider, for the Restore choices
      const sidebar = (await wb.chatElement.boundingBox())!;
      await wb.page.mouse.move(sidebar.x + sidebar.width + 2, sidebar.y + sidebar.height / 2);
      await wb.page.mouse.down();
      await wb.page.mouse.move(sidebar.x + sidebar.width + 80, sidebar.y + sidebar.height / 2, { steps: 5 });
      await wb.page.mouse.up();
      await card('search_and_replace').getByRole('button', { name: 'Show diff' }).click();
      await diffSide('modified').filter({ hasText: 'Hello, Modus' }).waitFor();
      await card('search_and_replace').getByRole('button', { name: 'Restore', exact: true }).click();
      await card('search_and_replace').locator('.restore-choices').waitFor();
      await usage.hover();
      await tip.waitFor();
      await wb.page.screenshot({ path: screenshot });
      await card('search_and_replace').getByRole('button', { name: 'Cancel' }).click();
    }
    await wb.page.mouse.move(640, 700);
    await tip.waitFor({ state: 'hidden' });
  });

  step('Restore files and conversation asks first, then cuts the chat back to before the call; the next turn goes on', async () => {
    const first = card('write_to_file');
    await first.getByRole('button', { name: 'Restore', exact: true }).click();
    await first.getByRole('button', { name: 'Restore files and conversation…' }).click();
    await first.getByRole('button', { name: 'Restore files and conversation', exact: true }).click();
    await chat().locator('.note.restore-note', { hasText: 'Restored the conversation and 2 files: greeting.txt, notes.md.' }).waitFor();
    assert.equal(disk('greeting.txt'), GREETING);
    assert.equal(disk('notes.md'), undefined, 'made by the call: gone');
    // the chat as the server keeps it now: the request and the reply that made the calls
    assert.equal(await chat().locator('.msg.assistant', { hasText: 'Wrote notes.md' }).count(), 0);
    assert.equal(await chat().locator('.msg.user', { hasText: 'What did that cost?' }).count(), 0);
    await chat().locator('.msg.user', { hasText: 'Write the notes and fix the greeting' }).waitFor();
    assert.equal(await first.locator('.status').textContent(), 'undone', 'the conversation no longer has the call');
    await send('Go on');
    await chat().locator('.msg.assistant', { hasText: 'Starting over from there.' }).waitFor();
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
