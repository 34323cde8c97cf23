// The chat webview in headless Chromium, fed with a recorded session: what a user sees, and
// what clicking posts back to the extension.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Action } from '../src/protocol/view';
import { CLIENT_DIR, feed, launch, openChat, posted } from './browser';

const session: { actions: Action[] } = JSON.parse(
  readFileSync(join(CLIENT_DIR, 'test', 'fixtures', 'session.json'), 'utf8'),
);
const toWebview = (actions: Action[]) => actions.map((action) => ({ type: 'action', action }));

describe('chat webview (headless Chromium)', () => {
  let browser: Browser;
  let page: Page;

  before(async () => {
    browser = await launch();
    page = await openChat(browser);
    await feed(page, toWebview(session.actions));
  });
  after(async () => {
    await browser?.close();
  });

  it('shows the conversation: the user message and the streamed assistant text', async () => {
    const user = session.actions.find(
      (a) => a.type === 'update' && a.update.kind === 'message' && a.update.role === 'user',
    );
    assert.ok(user && user.type === 'update' && user.update.kind === 'message');
    await page.locator('.msg.user .text', { hasText: user.update.text }).first().waitFor();
    const assistant = await page.locator('.msg.assistant .text').allTextContents();
    assert.ok(assistant.length > 0, 'an assistant message is shown');
    assert.ok(assistant.every((t) => t.length > 0));
  });

  it('shows a FileRestrictionError as a red error card with the type and the message', async () => {
    const card = page.locator('.card.tool.has-error', { hasText: 'FileRestrictionError' }).first();
    await card.waitFor();
    assert.equal(await card.locator('.error-type').textContent(), 'FileRestrictionError');
    const message = await card.locator('.error-message').textContent();
    assert.match(message ?? '', /can only edit files matching pattern: \\\.md\$ \(Markdown files only\)\. Got: src\/app\.py/);
    assert.equal(await card.locator('.status').textContent(), 'failed');
    const color = await card.locator('.error-type').evaluate((e) => getComputedStyle(e).color);
    assert.equal(color, 'rgb(248, 81, 73)', 'the error type is in the theme error colour');
  });

  it('shows the current mode in the picker and the mode change in the log', async () => {
    const last = [...session.actions]
      .reverse()
      .find((a) => a.type === 'update' && a.update.kind === 'mode_changed');
    assert.ok(last && last.type === 'update' && last.update.kind === 'mode_changed');
    const slug = last.update.to;
    assert.equal(await page.locator('#mode').inputValue(), slug);
    await page.locator('.note.mode-change').first().waitFor();
    const notes = await page.locator('.note.mode-change').allTextContents();
    assert.ok(notes.some((n) => n.includes('Architect')), notes.join(' | '));
  });

  it('answers an approval card: Approve with feedback posts the decision', async () => {
    await feed(page, [
      {
        type: 'action',
        action: {
          type: 'approval',
          id: 'test-approval',
          request: {
            kind: 'tool',
            title: 'Write notes.md?',
            detail: '--- a/notes.md\n+++ b/notes.md\n@@ -0,0 +1 @@\n+hello\n',
            tool: 'write_to_file',
            params: { path: 'notes.md' },
          },
        },
      },
    ]);
    const card = page.locator('.card.approval[data-approval="test-approval"]');
    await card.waitFor();
    assert.equal(await card.locator('.approval-title').textContent(), 'Write notes.md?');
    assert.equal(await card.locator('pre.diff .add').filter({ hasText: '+hello' }).count(), 1);
    await card.locator('textarea.feedback').fill('fine, go ahead');
    await card.getByRole('button', { name: 'Approve' }).click();
    const answers = (await posted(page)).filter((m) => m.type === 'approval' && m.id === 'test-approval');
    assert.deepEqual(answers, [{ type: 'approval', id: 'test-approval', decision: 'approve', feedback: 'fine, go ahead' }]);
    // the extension echoes the answer; the card then shows the decision and no buttons
    await feed(page, [
      {
        type: 'action',
        action: { type: 'approvalAnswered', id: 'test-approval', response: { decision: 'approve', feedback: 'fine, go ahead' } },
      },
    ]);
    await card.locator('.decision.approve').waitFor();
    assert.equal(await card.locator('button').count(), 0);
  });

  it('Deny posts a deny decision without feedback', async () => {
    await feed(page, toWebview([{ type: 'approval', id: 'deny-me', request: { kind: 'switch_mode', title: 'Switch to Ask mode?', detail: '', from: 'code', to: 'ask' } }]));
    const card = page.locator('.card.approval[data-approval="deny-me"]');
    await card.getByRole('button', { name: 'Deny' }).click();
    const answers = (await posted(page)).filter((m) => m.type === 'approval' && m.id === 'deny-me');
    assert.deepEqual(answers, [{ type: 'approval', id: 'deny-me', decision: 'deny' }]);
  });

  it('sends the message box on Enter and switches mode from the picker', async () => {
    await page.locator('#input').fill('hello there');
    await page.locator('#input').press('Enter');
    await page.locator('#mode').selectOption('ask');
    const sent = (await posted(page)).filter((m) => m.type === 'send' || m.type === 'switchMode');
    assert.deepEqual(sent, [
      { type: 'send', text: 'hello there' },
      { type: 'switchMode', slug: 'ask' },
    ]);
    assert.equal(await page.locator('#input').inputValue(), '');
  });

  it('renders data as text, never as HTML, and breaks no CSP rule', async () => {
    const evil = '<img src=x onerror="window.__pwned=1"><b>bold</b>';
    await feed(page, toWebview([{ type: 'update', update: { conversationId: currentConversation(), kind: 'message', role: 'system', text: evil } }]));
    const sys = page.locator('.msg.system .text', { hasText: 'onerror' });
    await sys.waitFor();
    assert.equal(await sys.textContent(), evil);
    assert.equal(await page.locator('#log img, #log b').count(), 0);
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined);
    assert.deepEqual(await page.evaluate(() => (window as any).__cspViolations), []);
    // the CSP is in force: a script without the nonce does not run
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inline = 1';
      document.body.appendChild(s);
    });
    await page.waitForFunction(() => (window as any).__cspViolations.length > 0);
    assert.equal(await page.evaluate(() => (window as any).__inline), undefined);
    const inlineHandlers = await page.evaluate(
      () => [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
    );
    assert.equal(inlineHandlers, 0);
  });

  it('a snapshot restores the whole view (webview re-opened)', async () => {
    const page2 = await openChat(browser);
    const { replay } = await import('../src/protocol/view');
    await feed(page2, [{ type: 'snapshot', view: replay(session.actions) }]);
    await page2.locator('.card.tool.has-error .error-type').first().waitFor();
    const view = replay(session.actions);
    const messages = view.entries.filter((e) => ['user', 'assistant', 'system', 'error'].includes(e.type)).length;
    assert.equal(await page2.locator('.msg').count(), messages);
    assert.equal(await page2.locator('.card.tool').count(), view.entries.filter((e) => e.type === 'tool').length);
    await page2.close();
  });
});

function currentConversation(): string {
  for (const a of session.actions) if (a.type === 'update') return a.update.conversationId;
  return 'c1';
}
