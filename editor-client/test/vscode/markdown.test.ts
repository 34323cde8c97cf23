// Markdown in the chat of a real VS Code (code-server 4.139, its Node extension host), driven from
// headless Chromium as a user would: the scripted model's reply (a heading, a list, a table, a
// Python fence, raw HTML and a `javascript:` link as bait, paths) shows as Markdown with the bait
// as text; Insert at Cursor puts the code block into the open file (saved, the bytes on disk say
// so); a path:line:col link opens its file at that place, a path outside the workspace is no
// link; New File opens the code in an untitled Python editor.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// MODUS_MARKDOWN_SCREENSHOT=docs/markdown.png saves the reply, and beside it docs/markdown-insert.png
// (the code inserted) and docs/markdown-link.png (the file opened at the link's line).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const APP = 'def main():\n    print("hi")\n';
const FILES = {
  'src/app.py': APP,
  'src/util.py': '"""Helpers."""\ndef shout(text):\n    return text.upper()\n',
};
const CODE = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n';
const REPLY = [
  '## Greeting',
  '',
  'Add a **greeting** in two steps:',
  '',
  '1. Put `greet` into `src/app.py`',
  '2. Call it from `main`',
  '',
  '| file | change |',
  '|:-----|:-------|',
  '| src/app.py | add `greet` |',
  '| src/util.py | none |',
  '',
  '```python',
  CODE.trimEnd(),
  '```',
  '',
  'Not markup: <img src=x onerror="document.title=\'pwned\'"> and [run me](javascript:document.title=\'pwned\').',
  '',
  'The helper it may use is src/util.py:2:5; ../outside.txt stays where it is.',
].join('\n');
const SCRIPT = { turns: [{ text: REPLY }] };

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_MARKDOWN_SCREENSHOT;
const shot = (suffix: string) => screenshot!.replace(/\.png$/, `${suffix}.png`);

describe('Markdown, code blocks and links in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;

  before(async () => {
    wb = await scriptedWorkbench({ codeServerDir: codeServerDir!, vsix: vsix!, files: FILES, script: SCRIPT });
    // a file beside the workspace: a path to it is no link
    writeFileSync(join(wb.root, 'outside.txt'), 'not yours\n');
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);
  const reply = () => wb.chat.locator('.msg.assistant:not(.streaming) .text');
  const activeEditor = () => wb.page.locator('.editor-group-container.active .editor-instance');
  const activeTab = () => wb.page.locator('.editor-group-container.active .tabs-container .tab.active');
  const cursor = () => wb.page.locator('[id="status.editor.selection"]');

  step('the reply shows as Markdown: heading, list, table, highlighted code; raw HTML and the javascript: link stay text', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    // the file the code goes into, the cursor at its end
    await wb.openFile('app.py');
    await activeEditor().locator('.view-lines', { hasText: 'print' }).click();
    await wb.page.keyboard.press('Control+End');
    await wb.showChat();
    if (screenshot) {
      // the sidebar dragged wider, for the screenshots
      const sidebar = (await wb.chatElement.boundingBox())!;
      await wb.page.mouse.move(sidebar.x + sidebar.width + 2, sidebar.y + sidebar.height / 2);
      await wb.page.mouse.down();
      await wb.page.mouse.move(sidebar.x + sidebar.width + 140, sidebar.y + sidebar.height / 2, { steps: 5 });
      await wb.page.mouse.up();
    }
    await wb.send('How do I greet?');
    await reply().locator('.code-block').waitFor({ timeout: 30_000 });
    assert.equal(await reply().locator('h4').textContent(), 'Greeting');
    assert.deepEqual(await reply().locator('ol > li').allTextContents(), ['Put greet into src/app.py', 'Call it from main']);
    const rows = await reply().locator('table tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert.deepEqual(rows, [['file', 'change'], ['src/app.py', 'add greet'], ['src/util.py', 'none']]);
    const code = reply().locator('.code-block pre.md-code');
    assert.equal(await code.textContent(), CODE.trimEnd());
    assert.deepEqual(await code.locator('.hljs-keyword').allTextContents(), ['def', 'return']);
    const keyword = await code.locator('.hljs-keyword').first().evaluate((e) => getComputedStyle(e).color);
    const plain = await code.evaluate((e) => getComputedStyle(e).color);
    assert.notEqual(keyword, plain, 'keywords in a colour of the theme');
    const bait = reply().locator('p', { hasText: 'Not markup' });
    assert.equal(await bait.textContent(), 'Not markup: <img src=x onerror="document.title=\'pwned\'"> and [run me](javascript:document.title=\'pwned\').');
    assert.equal(await bait.locator('a, img').count(), 0);
    assert.equal(await wb.chat.locator('#log img').count(), 0);
    if (screenshot) await wb.page.screenshot({ path: screenshot });
  });

  step("a code block's Insert at Cursor puts the code at the cursor of the open file", async () => {
    await reply().locator('.code-block').getByRole('button', { name: 'Insert at Cursor' }).click();
    await activeEditor().locator('.view-lines', { hasText: 'def greet(name: str) -> str:' }).waitFor();
    assert.match((await activeTab().getAttribute('aria-label')) ?? '', /^app\.py/);
    await activeEditor().locator('.view-lines').click(); // the focus in the editor (the click left it in the chat)
    await wb.page.keyboard.press('Control+S');
    await activeTab().and(wb.page.locator(':not(.dirty)')).waitFor();
    assert.equal(readFileSync(join(wb.workspace, 'src', 'app.py'), 'utf8'), APP + CODE.trimEnd());
    if (screenshot) await wb.page.screenshot({ path: shot('-insert') });
  });

  step('a path:line:col link opens the file at that place; a path outside the workspace is no link', async () => {
    const link = reply().getByRole('link', { name: 'src/util.py:2:5' });
    assert.equal(await link.getAttribute('title'), 'Open src/util.py, line 2, column 5');
    assert.equal(await reply().locator('a', { hasText: 'outside' }).count(), 0);
    assert.equal(await reply().getByRole('link', { name: 'src/app.py' }).count(), 2, "the table's and the list's");
    await link.click();
    await activeTab().filter({ hasText: 'util.py' }).waitFor();
    await cursor().filter({ hasText: 'Ln 2, Col 5' }).waitFor();
    if (screenshot) await wb.page.screenshot({ path: shot('-link') });
  });

  step('New File opens the code in an untitled Python editor', async () => {
    await reply().locator('.code-block').getByRole('button', { name: 'New File' }).click();
    await activeTab().filter({ hasText: 'Untitled-1' }).waitFor();
    await activeEditor().locator('.view-lines', { hasText: 'def greet(name: str) -> str:' }).waitFor();
    await wb.page.locator('[id="status.editor.mode"]').filter({ hasText: 'Python' }).waitFor();
    assert.notEqual(await wb.chat.locator('body').evaluate(() => document.title), 'pwned', 'no bait ran in the webview');
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
