// The chat webview while a reply streams (issue 23, items 5, 6 and 8), in headless Chromium: only
// the streaming element is drawn again, finished turns are skipped while out of sight, "↓ Latest"
// when the user scrolled up; the composer's keys (Escape cancels, Up and Down bring messages back,
// Send reads Queue while a turn runs); and what a screen reader hears: "responding", the finished
// reply once, an approval at once with the focus on Approve.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Action } from '../src/protocol/view';
import { feed, launch, openChat, posted } from './browser';
import { stateAction, toWebview } from './actions';

const conversationId = 'conv-stream';
const up = (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId, ...u } as any });

/** A finished turn of `n` tool cards (read_file, completed). */
function oldTurn(n: number): Action[] {
  const cards = Array.from({ length: n }, (_, i) =>
    up({ kind: 'tool_call', turnId: 'old', agent: 'modus', toolCallId: `c${i}`, name: 'read_file', params: { path: `src/f${i}.py` }, status: 'completed', result: `line ${i}` }),
  );
  return [
    up({ kind: 'message', role: 'user', text: 'read everything' }),
    up({ kind: 'turn_started', turnId: 'old', agent: 'modus' }),
    ...cards,
    up({ kind: 'turn_ended', turnId: 'old', agent: 'modus', outcome: 'completed' }),
  ];
}

/** Records every text the live regions say, from now on. */
async function listen(page: Page) {
  await page.evaluate(() => {
    const w = window as any;
    w.__said = [];
    for (const id of ['announce', 'announce-alert']) {
      const region = document.getElementById(id)!;
      new MutationObserver(() => {
        if (region.textContent) w.__said.push(`${id === 'announce' ? 'polite' : 'assertive'}: ${region.textContent}`);
      }).observe(region, { childList: true, characterData: true, subtree: true });
    }
  });
}

const said = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).__said);

describe('chat webview: streaming and what a screen reader hears', () => {
  let browser: Browser;
  const open = async (actions: Action[], size = { width: 420, height: 600 }) => {
    const page = await openChat(browser, size);
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, ...actions]));
    return page;
  };

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('draws only the streaming reply again while it streams; the finished turn above is skipped out of sight', async () => {
    const page = await open(oldTurn(300));
    const cards = page.locator('.card.tool');
    assert.equal(await cards.count(), 300);
    await page.evaluate(() => document.querySelectorAll('.card.tool').forEach((c) => ((c as any).__kept = true)));
    await feed(page, toWebview([up({ kind: 'message', role: 'user', text: 'now explain' }), up({ kind: 'turn_started', turnId: 't', agent: 'modus' })]));
    const words = Array.from({ length: 400 }, (_, i) => `word${i} `);
    for (let i = 0; i < words.length; i += 50) {
      await feed(page, toWebview(words.slice(i, i + 50).map((text) => up({ kind: 'message_delta', turnId: 't', agent: 'modus', text }))));
    }
    assert.equal(await page.locator('.msg.assistant.streaming .text').textContent(), words.join(''));
    const kept = await page.evaluate(() => [...document.querySelectorAll('.card.tool')].filter((c) => (c as any).__kept).length);
    assert.equal(kept, 300, 'no tool card was drawn again');
    const old = page.locator('.turn[data-turn="old"]');
    assert.equal(await old.getAttribute('class'), 'turn done');
    assert.equal(await old.evaluate((e) => getComputedStyle(e).contentVisibility), 'auto');
    assert.equal(await page.locator('.turn[data-turn="t"]').getAttribute('class'), 'turn', 'the running turn is drawn');
    await page.close();
  });

  it('follows the bottom; scrolled up, "↓ Latest" appears when more comes, and a click goes there', async () => {
    const page = await open(oldTurn(40));
    const log = page.locator('#log');
    const latest = page.getByRole('button', { name: '↓ Latest' });
    const gap = () => log.evaluate((e) => e.scrollHeight - e.scrollTop - e.clientHeight);
    assert.ok((await gap()) < 40, 'at the bottom');
    await feed(page, toWebview([up({ kind: 'turn_started', turnId: 't', agent: 'modus' }), up({ kind: 'message_delta', turnId: 't', agent: 'modus', text: 'First.' })]));
    assert.ok((await gap()) < 40, 'still at the bottom: the log followed');
    assert.equal(await latest.isVisible(), false);

    await log.evaluate((e) => (e.scrollTop = 0));
    await feed(page, toWebview([up({ kind: 'message_delta', turnId: 't', agent: 'modus', text: '\nMore.\n'.repeat(20) })]));
    assert.equal(await log.evaluate((e) => e.scrollTop), 0, 'the user stays where they read');
    await latest.waitFor();
    await latest.click();
    assert.ok((await gap()) < 40);
    assert.equal(await latest.isVisible(), false);
    await page.close();
  });

  it('says "responding", then the finished reply once; the log is not a live region', async () => {
    const page = await open([]);
    assert.equal(await page.locator('#log').getAttribute('aria-live'), null);
    assert.equal(await page.locator('[aria-live]').count(), 2, 'one polite region, one assertive');
    await listen(page);
    await feed(page, toWebview([up({ kind: 'message', role: 'user', text: 'hi' }), up({ kind: 'turn_started', turnId: 't', agent: 'modus' })]));
    for (const text of ['Hello', ', ', 'Ada', '.']) await feed(page, toWebview([up({ kind: 'message_delta', turnId: 't', agent: 'modus', text })]));
    await feed(page, toWebview([
      up({ kind: 'message', turnId: 't', agent: 'modus', role: 'assistant', text: 'Hello, Ada.' }),
      up({ kind: 'turn_ended', turnId: 't', agent: 'modus', outcome: 'completed' }),
    ]));
    assert.deepEqual(await said(page), ['polite: modus is responding…', 'polite: modus: Hello, Ada.']);
    await page.close();
  });

  it('says an approval at once and moves the focus to Approve: three announcements in the turn', async () => {
    const page = await open([]);
    await listen(page);
    await page.locator('#input').focus();
    await feed(page, toWebview([
      up({ kind: 'message', role: 'user', text: 'write a.txt' }),
      up({ kind: 'turn_started', turnId: 't', agent: 'modus' }),
      up({ kind: 'tool_call', turnId: 't', agent: 'modus', toolCallId: 'w1', name: 'write_to_file', params: { path: 'a.txt' }, status: 'pending' }),
      {
        type: 'approval',
        id: 'ask-1',
        request: { kind: 'tool', title: 'Write a.txt?', detail: '+a', tool: 'write_to_file', params: { path: 'a.txt' }, toolCallId: 'w1' },
      },
    ]));
    const approve = page.getByRole('button', { name: 'Approve' });
    await approve.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Approve');
    await page.keyboard.press('Enter');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'approval'), [{ type: 'approval', id: 'ask-1', decision: 'approve' }]);
    await feed(page, toWebview([
      { type: 'approvalAnswered', id: 'ask-1', response: { decision: 'approve' } },
      up({ kind: 'tool_call', turnId: 't', agent: 'modus', toolCallId: 'w1', name: 'write_to_file', params: { path: 'a.txt' }, status: 'completed', result: 'written' }),
      up({ kind: 'message', turnId: 't', agent: 'modus', role: 'assistant', text: 'Wrote a.txt.' }),
      up({ kind: 'turn_ended', turnId: 't', agent: 'modus', outcome: 'completed' }),
    ]));
    assert.deepEqual(await said(page), ['polite: modus is responding…', 'assertive: Approval needed: Write a.txt?', 'polite: modus: Wrote a.txt.']);
    await page.close();
  });

  it('keys only: Escape cancels the running turn, Up brings back the earlier messages and Down the later; Send reads Queue meanwhile', async () => {
    const page = await open([
      up({ kind: 'message', role: 'user', text: 'first message' }),
      up({ kind: 'message', role: 'user', text: 'second\nof two lines' }),
    ]);
    const input = page.locator('#input');
    const send = page.locator('#send');
    await input.focus();
    assert.equal(await send.textContent(), 'Send');
    await page.keyboard.press('ArrowUp');
    assert.equal(await input.inputValue(), 'second\nof two lines');
    await page.keyboard.press('ArrowUp');
    assert.equal(await input.inputValue(), 'first message');
    await page.keyboard.press('ArrowUp');
    assert.equal(await input.inputValue(), 'first message', 'the oldest stays');
    await page.keyboard.press('ArrowDown');
    assert.equal(await input.inputValue(), 'second\nof two lines');
    await page.keyboard.press('ArrowDown');
    assert.equal(await input.inputValue(), '', 'past the newest: the empty box');
    await page.keyboard.type('draft');
    await page.keyboard.press('ArrowUp');
    assert.equal(await input.inputValue(), 'draft', 'a draft is not replaced');

    await feed(page, toWebview([up({ kind: 'turn_started', turnId: 't', agent: 'modus' })]));
    assert.equal(await send.textContent(), 'Queue');
    await page.keyboard.press('Escape');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'cancel'), [{ type: 'cancel' }]);
    await page.keyboard.press('Enter');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'send'), [{ type: 'send', text: 'draft' }]);
    await feed(page, toWebview([up({ kind: 'turn_ended', turnId: 't', agent: 'modus', outcome: 'cancelled' })]));
    assert.equal(await send.textContent(), 'Send');
    await page.keyboard.press('Escape');
    assert.equal((await posted(page)).filter((m) => m.type === 'cancel').length, 1, 'no turn runs: nothing to cancel');
    await page.close();
  });

  it('the palette\'s Focus command puts the focus in the message box', async () => {
    const page = await open([]);
    assert.notEqual(await page.evaluate(() => document.activeElement?.id), 'input');
    await feed(page, [{ type: 'focusComposer' }]);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'input');
    await page.close();
  });

  it('first run: no model configured, the empty chat offers to choose one; a test and a save go to the extension; the examples fill the box', async () => {
    const page = await open([stateAction(conversationId)]);
    const card = page.getByRole('region', { name: 'Set up a model' });
    await card.waitFor();
    await card.getByLabel('Provider').selectOption({ label: 'OpenAI-compatible server (Ollama, LM Studio, vLLM…)' });
    assert.equal(await card.getByLabel('Model').inputValue(), 'llama3.1');
    assert.equal(await card.getByLabel('Server address').inputValue(), 'http://localhost:11434/v1');
    assert.equal(await card.getByRole('button', { name: 'Set API Key' }).isVisible(), false, 'a local server takes no key');
    await card.getByLabel('Model').fill('qwen3');
    await card.getByRole('button', { name: 'Test Connection' }).click();
    await card.getByRole('button', { name: 'Save' }).click();
    const model = { provider: 'openai', model: 'qwen3', baseUrl: 'http://localhost:11434/v1' };
    assert.deepEqual((await posted(page)).filter((m) => ['checkModel', 'saveModel'].includes(m.type)), [{ type: 'checkModel', model }, { type: 'saveModel', model }]);
    await feed(page, toWebview([{ type: 'modelCheck', result: null }]));
    assert.equal(await card.getByRole('status').textContent(), 'Testing the connection…');
    await feed(page, toWebview([{ type: 'modelCheck', result: { ok: false, message: 'openai model qwen3 at http://localhost:11434/v1/: cannot connect (connection refused)', models: [] } }]));
    assert.equal(await card.getByRole('status').textContent(), 'openai model qwen3 at http://localhost:11434/v1/: cannot connect (connection refused)');
    await card.getByLabel('Provider').selectOption({ label: 'Anthropic' });
    await card.getByRole('button', { name: 'Set API Key' }).click();
    assert.equal((await posted(page)).filter((m) => m.type === 'setApiKey').length, 1);

    await feed(page, toWebview([{ type: 'setup', modelsSet: true }]));
    assert.equal(await card.isVisible(), false, 'a model is set: the card goes');
    const welcome = page.locator('#log .empty');
    assert.deepEqual(await welcome.locator('kbd').allTextContents(), ['Enter', 'Escape', '↑ / ↓', '@ and /', 'Ctrl+Alt+M', 'Ctrl+Alt+P']);
    await welcome.getByRole('button', { name: 'Explain what this project does and how it is laid out' }).click();
    assert.equal(await page.locator('#input').inputValue(), 'Explain what this project does and how it is laid out');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'input');

    await feed(page, toWebview([{ type: 'setup', open: true }]));
    assert.equal(await card.isVisible(), true, 'Modus: Set Up a Model opens it again');
    await card.getByRole('button', { name: 'Not now' }).click();
    assert.equal((await posted(page)).filter((m) => m.type === 'closeSetup').length, 1);
    await page.close();
  });

  it('message actions: Copy, Retry of a failed turn with its reason, Edit & resend ending the log with the new message and its reply', async () => {
    const page = await open([
      up({ kind: 'message', role: 'user', text: 'first question', messageId: 'm1' }),
      up({ kind: 'turn_started', turnId: 't1', agent: 'modus' }),
      up({ kind: 'message', turnId: 't1', agent: 'modus', role: 'assistant', text: 'First answer.', messageId: 'a1' }),
      up({ kind: 'turn_ended', turnId: 't1', agent: 'modus', outcome: 'completed' }),
      up({ kind: 'message', role: 'user', text: 'second question', messageId: 'm2' }),
      up({ kind: 'turn_started', turnId: 't2', agent: 'modus' }),
      up({ kind: 'message', turnId: 't2', agent: 'modus', role: 'system', text: 'The model request failed: HTTP 500: overloaded' }),
      up({ kind: 'turn_ended', turnId: 't2', agent: 'modus', outcome: 'failed', error: { type: 'ModelError', message: 'The model request failed: HTTP 500: overloaded' } }),
    ]);
    const failed = page.locator('.note.turn-failed');
    assert.equal(await failed.textContent(), 'modus: turn failed — The model request failed: HTTP 500: overloadedRetry');
    assert.equal(await page.locator('.msg.system').count(), 0, 'the reason is said once, in the note');
    await failed.getByRole('button', { name: 'Retry' }).click();
    await page.locator('.msg.assistant').getByRole('button', { name: 'Copy' }).click({ force: true });
    const user = page.locator('.msg.user', { hasText: 'first question' });
    await user.getByRole('button', { name: 'Edit' }).click({ force: true });
    const box = page.getByRole('textbox', { name: 'Edit the message' });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Edit the message');
    await box.fill('first question, better put');
    await page.getByLabel('Restore the files too').check();
    await page.getByRole('button', { name: 'Resend' }).click();
    const acts = (await posted(page)).filter((m) => ['retry', 'copy', 'edit'].includes(m.type));
    assert.deepEqual(acts, [
      { type: 'retry' },
      { type: 'copy', text: 'First answer.' },
      { type: 'edit', messageId: 'm1', text: 'first question, better put', files: true },
    ]);
    await feed(page, toWebview([
      up({ kind: 'conversation_cut', messageId: 'm1', messages: 6 }),
      up({ kind: 'message', role: 'user', text: 'first question, better put', messageId: 'm3' }),
      up({ kind: 'turn_started', turnId: 't3', agent: 'modus' }),
      up({ kind: 'message', turnId: 't3', agent: 'modus', role: 'assistant', text: 'A better answer.' }),
      up({ kind: 'turn_ended', turnId: 't3', agent: 'modus', outcome: 'completed' }),
    ]));
    const log = await page.locator('#log .msg').evaluateAll((ms) => ms.map((m) => m.querySelector('.text')?.textContent));
    assert.deepEqual(log, ['first question, better put', 'A better answer.']);
    assert.equal(await page.locator('.note.turn-failed').count(), 0);
    await page.close();
  });

  it('a message sent while a turn runs shows as queued until it goes in; Take back returns its text to the box', async () => {
    const page = await open([
      up({ kind: 'message', role: 'user', text: 'build it', messageId: 'm1' }),
      up({ kind: 'turn_started', turnId: 't1', agent: 'modus' }),
      up({ kind: 'message', role: 'user', text: 'and test it', messageId: 'm2', queued: true }),
      up({ kind: 'message', role: 'user', text: 'in Python', messageId: 'm3', queued: true }),
    ]);
    const queued = page.getByLabel('Queued messages');
    assert.deepEqual(await queued.locator('.queued-text').allTextContents(), ['and test it', 'in Python']);
    assert.equal(await page.locator('#log .msg.user').count(), 1, 'not in the conversation yet');
    await queued.locator('[data-message="m3"]').getByRole('button', { name: 'Take back' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'unqueue'), [{ type: 'unqueue', messageId: 'm3' }]);
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==';
    await feed(page, [...toWebview([up({ kind: 'unqueued', messageId: 'm3', text: 'in Python' })]), { type: 'fillComposer', text: 'in Python', images: [{ mimeType: 'image/png', data: png }] }]);
    assert.equal(await page.locator('#input').inputValue(), 'in Python');
    // its image is in the composer again, and goes with the message sent next
    assert.deepEqual(await page.locator('#attachments img.thumb').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).src)), [`data:image/png;base64,${png}`]);
    await page.locator('#input').press('Enter');
    const sent = (await posted(page)).filter((m) => m.type === 'send');
    assert.deepEqual(sent.at(-1), { type: 'send', text: 'in Python', images: [{ mimeType: 'image/png', data: png }] });
    assert.equal(await page.locator('#attachments img.thumb').count(), 0);
    await feed(page, toWebview([
      up({ kind: 'turn_ended', turnId: 't1', agent: 'modus', outcome: 'completed' }),
      up({ kind: 'message', role: 'user', text: 'and test it', messageId: 'm2' }),
    ]));
    assert.equal(await queued.isVisible(), false);
    assert.deepEqual(await page.locator('#log .msg.user .text').allTextContents(), ['build it', 'and test it']);
    await page.close();
  });

  it('a high-contrast theme: cards and messages get borders in the contrast colour, the focus an outline in the active one', async () => {
    const page = await open([up({ kind: 'message', role: 'user', text: 'hi' }), up({ kind: 'tool_call', toolCallId: 'r', name: 'read_file', params: { path: 'a.py' }, status: 'completed', result: 'x' })]);
    await page.evaluate(() => {
      document.body.classList.add('vscode-high-contrast');
      document.documentElement.style.setProperty('--vscode-contrastBorder', 'rgb(111, 195, 223)');
      document.documentElement.style.setProperty('--vscode-contrastActiveBorder', 'rgb(243, 133, 24)');
    });
    const border = (selector: string) => page.locator(selector).first().evaluate((e) => getComputedStyle(e).borderTopColor);
    assert.equal(await border('.card.tool'), 'rgb(111, 195, 223)');
    assert.equal(await border('.msg.user'), 'rgb(111, 195, 223)');
    await page.locator('#input').focus();
    await page.keyboard.press('Shift+Tab'); // a keyboard focus: focus-visible
    const outline = await page.evaluate(() => {
      const e = document.activeElement as HTMLElement;
      return [getComputedStyle(e).outlineColor, getComputedStyle(e).outlineWidth];
    });
    assert.deepEqual(outline, ['rgb(243, 133, 24)', '2px']);
    await page.close();
  });
});
