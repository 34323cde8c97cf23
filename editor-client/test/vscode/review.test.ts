// The editor in the loop, in a real VS Code (code-server): an edit's approval opens the diff
// editor (the file now ↔ the proposal); the user changes a line of the proposal and approves from
// the title bar, and the file is written as they left it, the model told. A tiny test extension
// stands in for a language server (an error on each `undefined_name` in a Python file): an edit
// that introduces one, approved from the chat's card, brings the problem into the tool's result,
// which is what the model's next request carries.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// MODUS_REVIEW_SCREENSHOT=docs/review.png saves the diff editor under review.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { CLIENT_DIR } from '../server';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const NOTES = '# Notes\n\nline one\nline two\n';
const SCRIPT = {
  turns: [
    { text: 'Rewriting the notes.', toolCalls: [{ name: 'write_to_file', arguments: { path: 'notes.md', content: NOTES } }] },
    { text: 'Saved.' },
    { text: 'Using it.', toolCalls: [{ name: 'write_to_file', arguments: { path: 'src/app.py', content: 'print(undefined_name)\n' } }] },
    { text: 'I will define it.' },
  ],
};

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_REVIEW_SCREENSHOT;

describe('Review before apply and the problems an edit caused, in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;

  before(async () => {
    wb = await scriptedWorkbench({
      codeServerDir: codeServerDir!,
      vsix: vsix!,
      extensions: [join(CLIENT_DIR, 'test', 'fixtures', 'problems-extension')],
      files: { 'notes.md': '# Notes\n\nold\n', 'src/app.py': 'print("hi")\n' },
      script: SCRIPT,
      settings: { 'modus.diagnostics': { delayMs: 500 } },
    });
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);
  const diffEditor = () => wb.page.locator('.editor-group-container.active .monaco-diff-editor');
  const diffTab = (name: string) => wb.page.locator('.tabs-container .tab', { hasText: name }).filter({ hasText: 'proposal' });
  const toolCard = () => wb.chat.locator('.card.tool[data-tool="write_to_file"]').last();

  step('an edit opens the diff editor; a line changed there and Approve in its title bar write the file as the user left it', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    await wb.showChat();
    await wb.send('Rewrite the notes');
    await diffTab('notes.md').waitFor({ timeout: 30_000 });
    const proposed = diffEditor().locator('.editor.modified');
    await proposed.locator('.view-line', { hasText: 'line two' }).click();
    await wb.page.keyboard.press('End');
    await wb.page.keyboard.press('Shift+Home');
    await wb.page.keyboard.type('line TWO, mine');
    await proposed.locator('.view-line', { hasText: 'line TWO, mine' }).waitFor();
    // the card in the chat asks too, and offers the review
    await toolCard().locator('[data-approval] button.review').waitFor();
    if (screenshot) await wb.page.screenshot({ path: screenshot });
    await wb.page.locator('.editor-group-container.active .editor-actions a.action-label[aria-label*="Approve Edit"]').click();
    await toolCard().locator('.decision.approve', { hasText: 'Approved with your changes' }).waitFor();
    await diffTab('notes.md').waitFor({ state: 'detached' });
    // the call's result comes once the edit is applied (and saved)
    await toolCard().locator('details.result pre', { hasText: 'The user edited' }).waitFor({ state: 'attached', timeout: 30_000 });
    assert.equal(readFileSync(join(wb.workspace, 'notes.md'), 'utf8'), '# Notes\n\nline one\nline TWO, mine\n');
    const result = await toolCard().locator('details.result pre').textContent();
    assert.equal(
      result,
      'The content was successfully saved to notes.md (4 lines).\n\nThe user edited your proposal before saving it:\n' +
        '--- a/notes.md\n+++ b/notes.md\n@@ -1,4 +1,4 @@\n # Notes\n \n line one\n-line two\n+line TWO, mine\n',
    );
  });

  step("an edit approved from the card that brings a language server's error: the tool's result tells the model", async () => {
    await wb.send('Print undefined_name');
    await diffTab('app.py').waitFor({ timeout: 30_000 });
    await toolCard().locator('[data-approval] button.approve').click();
    await diffTab('app.py').waitFor({ state: 'detached' });
    await toolCard().locator('details.result pre', { hasText: 'New problems' }).waitFor({ state: 'attached', timeout: 30_000 });
    const result = await toolCard().locator('details.result pre').textContent();
    assert.equal(
      result,
      'The content was successfully saved to src/app.py (1 line).\n\n' +
        'New problems after this edit:\nsrc/app.py:1:7 error: "undefined_name" is not defined (fake-lsp)',
    );
    assert.equal(readFileSync(join(wb.workspace, 'src', 'app.py'), 'utf8'), 'print(undefined_name)\n');
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
