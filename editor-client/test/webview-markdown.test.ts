// Markdown in the chat webview (headless Chromium, the bundled script under the real CSP): a
// scripted reply streamed in deltas, then final; its table, list and code fence as elements, the
// bait (raw HTML, a `javascript:` link) as text; a code block's Copy, Insert at Cursor and New
// File; paths in replies and tool cards as links once the extension says they are workspace files.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Action } from '../src/protocol/view';
import { feed, launch, openChat, posted } from './browser';
import { toWebview } from './actions';

const conversationId = 'conv-md';
const up = (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId, ...u } as any });

/** The scripted reply: a heading, a list, a table, a fence, the bait, a web link, paths. */
const REPLY = [
  '## The plan',
  '',
  'Three steps, in **order**:',
  '',
  '1. Read `src/app.py:2`',
  '2. Change `greet`',
  '3. Run the tests',
  '',
  '| file | lines |',
  '|:-----|------:|',
  '| src/app.py | 2 |',
  '| README.md | 1 |',
  '',
  '```python',
  'def greet(name):',
  '    return f"Hello, {name}"',
  '```',
  '',
  'Bait: <img src=x onerror="window.__pwned=1"> and [click me](javascript:window.__pwned=2) and',
  '![logo](https://example.com/logo.png).',
  '',
  'See [the docs](https://example.com/docs), src/app.py:2:5 and ../outside.txt:1.',
].join('\n');

/** Where the reply is cut into deltas: mid-table and inside the fence. */
const CUTS = [REPLY.indexOf('| README'), REPLY.indexOf('    return'), REPLY.length];

describe('chat webview: Markdown, code blocks, links into the editor', () => {
  let browser: Browser;
  let page: Page;
  const reply = () => page.locator('.msg.assistant .text');
  const asked = async () => (await posted(page)).filter((m) => m.type === 'resolvePaths').flatMap((m) => m.paths as string[]);
  /** what the webview posted of `type`, forgotten once read */
  const take = async (type: string) => {
    const got = (await posted(page)).filter((m) => m.type === type);
    await page.evaluate((t) => ((window as any).__posted = (window as any).__posted.filter((m: any) => m.type !== t)), type);
    return got;
  };

  before(async () => {
    browser = await launch();
    page = await openChat(browser, { width: 420, height: 1200 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, up({ kind: 'message', role: 'user', text: 'plan it' }), up({ kind: 'turn_started', turnId: 't', agent: 'modus' })]));
  });
  after(async () => {
    await browser?.close();
  });

  it('renders the reply as Markdown while it streams: a fence still open is code, not highlighted, no path asked about', async () => {
    await feed(page, toWebview([up({ kind: 'message_delta', turnId: 't', agent: 'modus', text: REPLY.slice(0, CUTS[0]) })]));
    assert.equal(await reply().locator('h4').textContent(), 'The plan');
    assert.deepEqual(await reply().locator('table th').allTextContents(), ['file', 'lines']);
    await reply().locator('h4').evaluate((h) => ((h as any).__kept = true));
    await feed(page, toWebview([up({ kind: 'message_delta', turnId: 't', agent: 'modus', text: REPLY.slice(CUTS[0], CUTS[1]) })]));
    assert.equal(await reply().locator('h4').evaluate((h) => (h as any).__kept), true, 'a finished block is kept, only the last ones drawn anew');
    assert.deepEqual(await reply().locator('table td').allTextContents(), ['src/app.py', '2', 'README.md', '1'], 'the table grew in place');
    const code = reply().locator('pre.md-code');
    assert.equal(await code.textContent(), 'def greet(name):', 'the open fence is code to the end');
    assert.equal(await code.locator('span').count(), 0, 'not highlighted while it streams');
    assert.equal(await reply().locator('.code-block button').count(), 0, 'no actions on code still coming');
    assert.equal(await page.locator('.msg.assistant.streaming').count(), 1);
    assert.deepEqual(await asked(), [], 'no path asked about while the reply streams');
  });

  it('the final reply: heading, list, table, highlighted code in the theme colours; the bait stays text', async () => {
    await feed(page, toWebview([up({ kind: 'message_delta', turnId: 't', agent: 'modus', text: REPLY.slice(CUTS[1]) }), up({ kind: 'message', turnId: 't', agent: 'modus', role: 'assistant', text: REPLY }), up({ kind: 'turn_ended', turnId: 't', agent: 'modus', outcome: 'completed' })]));
    await page.locator('.msg.assistant:not(.streaming)').waitFor();
    assert.equal(await reply().locator('p strong').textContent(), 'order');
    assert.deepEqual(await reply().locator('ol > li').allTextContents(), ['Read src/app.py:2', 'Change greet', 'Run the tests']);
    assert.deepEqual(await reply().locator('ol > li code').allTextContents(), ['src/app.py:2', 'greet']);
    const rows = await reply().locator('table tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => `${c.tagName.toLowerCase()}:${c.textContent}:${c.className}`)));
    assert.deepEqual(rows, [
      ['th:file:align-left', 'th:lines:align-right'],
      ['td:src/app.py:align-left', 'td:2:align-right'],
      ['td:README.md:align-left', 'td:1:align-right'],
    ]);
    const code = reply().locator('.code-block pre.md-code');
    assert.equal(await code.textContent(), 'def greet(name):\n    return f"Hello, {name}"');
    assert.equal(await reply().locator('.code-block .code-lang').textContent(), 'python');
    const keyword = code.locator('.hljs-keyword').first();
    assert.equal(await keyword.textContent(), 'def');
    assert.equal(await keyword.evaluate((e) => getComputedStyle(e).color), 'rgb(78, 148, 206)', "the theme's debugTokenExpression-boolean");
    assert.equal(await code.locator('.hljs-string').first().evaluate((e) => getComputedStyle(e).color), 'rgb(206, 145, 120)');
    // the bait: raw HTML, a javascript: link and an image, each shown as written
    const bait = reply().locator('p', { hasText: 'Bait:' });
    assert.equal(
      await bait.textContent(),
      'Bait: <img src=x onerror="window.__pwned=1"> and [click me](javascript:window.__pwned=2) and\n![logo](https://example.com/logo.png).',
    );
    assert.equal(await page.locator('#log img').count(), 0);
    assert.equal(await bait.locator('a').count(), 0);
    await bait.click();
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined);
    assert.deepEqual(await page.evaluate(() => (window as any).__cspViolations), []);
    assert.equal(await page.locator('#log [style], #log [href], #log [src]').count(), 0, 'no inline style, no href, no source');
  });

  it('a web link opens through the extension, http(s) only', async () => {
    const docs = reply().getByRole('link', { name: 'the docs' });
    assert.equal(await docs.getAttribute('title'), 'https://example.com/docs');
    await take('openLink');
    await docs.click();
    assert.deepEqual(await take('openLink'), [{ type: 'openLink', url: 'https://example.com/docs' }]);
  });

  it('paths become links once the extension says they are workspace files; others stay text; a click opens at the line', async () => {
    assert.deepEqual((await asked()).sort(), ['../outside.txt', 'README.md', 'src/app.py']);
    assert.equal(await reply().locator('.path-link').count(), 0, 'not links before the answer');
    await feed(page, [{ type: 'paths', paths: { 'src/app.py': 'src/app.py', 'README.md': 'README.md', '../outside.txt': null } }]);
    const links = reply().locator('.path-link');
    assert.deepEqual(await links.allTextContents(), ['src/app.py:2', 'src/app.py', 'README.md', 'src/app.py:2:5']);
    assert.equal(await reply().locator('ol > li .path-link > code').textContent(), 'src/app.py:2', 'a code span that is a path: the link holds it');
    assert.equal(await links.last().getAttribute('title'), 'Open src/app.py, line 2, column 5');
    const last = reply().locator('p', { hasText: 'See' });
    assert.equal(await last.textContent(), 'See the docs, src/app.py:2:5 and ../outside.txt:1.');
    assert.equal(await last.locator('a', { hasText: 'outside' }).count(), 0, 'outside the workspace: text');
    await take('openPath');
    await links.last().click();
    await links.first().focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await take('openPath'), [
      { type: 'openPath', path: 'src/app.py', line: 2, column: 5 },
      { type: 'openPath', path: 'src/app.py', line: 2 },
    ]);
  });

  it("a code block's Copy, Insert at Cursor and New File ask the extension, with the code and its language", async () => {
    const block = reply().locator('.code-block');
    const code = 'def greet(name):\n    return f"Hello, {name}"';
    await block.getByRole('button', { name: 'Copy' }).click();
    await block.getByRole('button', { name: 'Insert at Cursor' }).click();
    await block.getByRole('button', { name: 'New File' }).click();
    const sent = (await posted(page)).filter((m) => ['copyCode', 'insertCode', 'newFile'].includes(m.type));
    assert.deepEqual(sent, [
      { type: 'copyCode', code },
      { type: 'insertCode', code },
      { type: 'newFile', code, language: 'python' },
    ]);
  });

  it("tool cards: the call's path, paths in its result and error, attempt_completion's result as Markdown", async () => {
    await take('resolvePaths');
    await feed(
      page,
      toWebview([
        up({ kind: 'turn_started', turnId: 't2', agent: 'modus' }),
        up({ kind: 'tool_call', turnId: 't2', toolCallId: 'r', name: 'read_file', params: { path: 'src/app.py' }, status: 'completed', result: 'def greet(name): ...' }),
        up({ kind: 'tool_call', turnId: 't2', toolCallId: 's', name: 'search_files', params: { path: '.', regex: 'greet' }, status: 'completed', result: 'Found 1 result.\n\n# src/util.py\n   3 | greet()' }),
        up({ kind: 'tool_call', turnId: 't2', toolCallId: 'w', name: 'write_to_file', params: { path: '/etc/passwd' }, status: 'failed', error: { type: 'FileRestrictionError', message: 'Outside the workspace: /etc/passwd (see src/util.py:3)' } }),
        up({
          kind: 'tool_call',
          turnId: 't2',
          toolCallId: 'c',
          name: 'attempt_completion',
          params: { result: '**Done.**\n\n- renamed `greet` in src/app.py:1\n- <script>window.__pwned=3</script>' },
          status: 'completed',
        }),
      ]),
    );
    const completion = page.locator('.card.tool.completion .completion-text');
    await completion.waitFor();
    assert.equal(await completion.locator('strong').textContent(), 'Done.');
    assert.deepEqual(await completion.locator('li').allTextContents(), ['renamed greet in src/app.py:1', '<script>window.__pwned=3</script>']);
    // src/app.py is known: a link at once; the others are asked about
    assert.deepEqual(await completion.locator('.path-link').allTextContents(), ['src/app.py:1']);
    const read = page.locator('.card.tool[data-tool="read_file"] .tool-arg .path-link');
    assert.equal(await read.textContent(), 'src/app.py');
    assert.deepEqual((await asked()).sort(), ['.', '/etc/passwd', 'src/util.py']);
    await feed(page, [{ type: 'paths', paths: { 'src/util.py': 'src/util.py', '/etc/passwd': null, '.': null } }]);
    assert.equal(await page.locator('.card.tool[data-tool="search_files"] .result pre .path-link').textContent(), 'src/util.py');
    const failed = page.locator('.card.tool[data-tool="write_to_file"]');
    assert.equal(await failed.locator('.error-message .path-link').textContent(), 'src/util.py:3');
    assert.equal(await failed.locator('.tool-arg').textContent(), '/etc/passwd');
    assert.equal(await failed.locator('.tool-arg a').count(), 0, 'not a workspace file: text');
    await take('openPath');
    await read.click();
    assert.deepEqual(await take('openPath'), [{ type: 'openPath', path: 'src/app.py' }]);
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined);
    assert.equal(await page.locator('#log script').count(), 0);
  });
});
