// The chat webview in headless Chromium, fed with a recorded session: what a user sees, and
// what clicking posts back to the extension.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { HistoryMessage } from '../src/protocol/generated';
import type { Action } from '../src/protocol/view';
import { stateAction, toWebview } from './actions';
import { CLIENT_DIR, completionRows, feed, launch, openChat, posted } from './browser';

const session: { actions: Action[] } = JSON.parse(
  readFileSync(join(CLIENT_DIR, 'test', 'fixtures', 'session.json'), 'utf8'),
);
describe('chat webview (headless Chromium)', () => {
  let browser: Browser;
  let page: Page;

  before(async () => {
    browser = await launch();
    page = await openChat(browser);
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, ...session.actions]));
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
      ...toWebview([
        {
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
      ]),
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
    await feed(page, toWebview([{ type: 'approvalAnswered', id: 'test-approval', response: { decision: 'approve', feedback: 'fine, go ahead' } }]));
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

  it('the phase badge follows phase_changed and a click asks to flip it', async () => {
    const badge = page.locator('#phase');
    await feed(page, toWebview([{ type: 'update', update: { conversationId: 'c-phase', kind: 'phase_changed', from: 'act', to: 'plan', taskId: 't-1', by: 'user' } }]));
    assert.equal(await badge.textContent(), 'PLAN');
    assert.match((await badge.getAttribute('class')) ?? '', /\bplan\b/);
    assert.equal(await badge.getAttribute('aria-label'), 'Phase: PLAN MODE (click to switch)');
    await badge.click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'togglePhase'), [{ type: 'togglePhase' }]);
    await feed(page, toWebview([{ type: 'update', update: { conversationId: 'c-phase', kind: 'phase_changed', from: 'plan', to: 'act', taskId: 't-2', by: 'user' } }]));
    assert.equal(await badge.textContent(), 'ACT');
    assert.doesNotMatch((await badge.getAttribute('class')) ?? '', /\bplan\b/);
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

describe('chat webview: header, conversation list, server status, approvals in tool cards', () => {
  let browser: Browser;
  const conversationId = currentConversation();
  const setup: Action[] = [
    ...session.actions.filter((a) => a.type === 'modes' || a.type === 'state'),
    { type: 'server', server: { status: 'running' } },
  ];
  const turnStarted: Action = {
    type: 'update',
    update: { conversationId, kind: 'turn_started', turnId: 'turn-now', agent: 'modus' },
  };
  const chat = async (width = 420, actions: Action[] = setup) => {
    const page = await openChat(browser, { width, height: 700 });
    await feed(page, toWebview(actions));
    return page;
  };

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  for (const width of [250, 300, 500]) {
    it(`fits the header in ${width}px while a turn runs`, async () => {
      const page = await chat(width, [...setup, turnStarted]);
      const names = ['Cancel', 'History', 'New conversation'];
      for (const name of names) await page.getByRole('button', { name, exact: true }).waitFor();
      const controls = ['#mode', '#phase', '#busy', '#cancel', '#history', '#new'];
      const boxes = [];
      for (const selector of controls) {
        const box = await page.locator(selector).boundingBox();
        assert.ok(box && box.width > 0, `${selector} is shown`);
        assert.ok(box.x >= 0 && box.x + box.width <= width, `${selector} lies inside 0..${width}: ${JSON.stringify(box)}`);
        boxes.push({ selector, ...box });
      }
      for (const a of boxes) {
        for (const b of boxes) {
          if (a === b) continue;
          const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
          assert.ok(apart, `${a.selector} and ${b.selector} overlap`);
        }
      }
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width, 'no horizontal scrolling');
      await page.close();
    });
  }

  it('History lists the conversations, opens one, closes on Escape and on the button', async () => {
    const page = await chat();
    const history = page.getByRole('button', { name: 'History', exact: true });
    const panel = page.locator('#conversations');
    await history.click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'listConversations'), [{ type: 'listConversations' }]);
    await panel.getByText('Loading…').waitFor();
    assert.equal(await history.getAttribute('aria-expanded'), 'true');

    const fiveMinutesAgo = new Date(Date.now() - 5.5 * 60_000).toISOString();
    const list = [
      { id: conversationId, title: 'Build a tiny greeting app', createdAt: fiveMinutesAgo, updatedAt: fiveMinutesAgo, mode: 'architect', messages: 12 },
      { id: 'conv-older', title: 'Fix the <b>tests</b>', createdAt: '2025-01-15T10:00:00Z', updatedAt: '2025-01-15T10:00:00Z', mode: 'code', messages: 3 },
    ];
    await feed(page, toWebview([{ type: 'conversations', conversations: list }]));
    const items = panel.locator('.conversation');
    assert.equal(await items.count(), 2);
    assert.equal(await items.nth(0).locator('.conversation-title').textContent(), 'Build a tiny greeting app');
    assert.match((await items.nth(0).textContent()) ?? '', /Architect.*5 min ago.*12 messages/);
    assert.equal(await items.nth(0).getAttribute('aria-current'), 'true');
    assert.equal(await items.nth(1).getAttribute('aria-current'), null);
    assert.equal(await items.nth(1).locator('.conversation-title').textContent(), 'Fix the <b>tests</b>');
    assert.match((await items.nth(1).textContent()) ?? '', /Code.*2025/);

    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'hidden' });
    assert.equal(await history.getAttribute('aria-expanded'), 'false');

    // open again: asked again; by keyboard, Enter on an item opens it and closes the list
    await history.click();
    await panel.getByText('Loading…').waitFor();
    await feed(page, toWebview([{ type: 'conversations', conversations: list }]));
    await items.nth(1).focus();
    await page.keyboard.press('Enter');
    await panel.waitFor({ state: 'hidden' });
    const asked = (await posted(page)).filter((m) => m.type === 'listConversations' || m.type === 'openConversation');
    assert.deepEqual(asked, [
      { type: 'listConversations' },
      { type: 'listConversations' },
      { type: 'openConversation', conversationId: 'conv-older' },
    ]);

    await history.click();
    await feed(page, toWebview([{ type: 'conversations', conversations: [] }]));
    await panel.getByText('No earlier conversations.').waitFor();
    await history.click();
    await panel.waitFor({ state: 'hidden' });
    await page.close();
  });

  it('replays a stored conversation: tool cards, mode changes, a denial with its feedback apart', async () => {
    const recorded: { messages: HistoryMessage[] } = JSON.parse(
      readFileSync(join(CLIENT_DIR, 'test', 'fixtures', 'history.json'), 'utf8'),
    );
    const page = await chat();
    await feed(page, toWebview([{ type: 'history', conversationId: 'conv-h', messages: recorded.messages }]));
    await page.locator('.card.tool').first().waitFor();
    assert.equal(await page.locator('.card.tool').count(), 6);
    assert.equal(await page.locator('.note.mode-change').count(), 2);
    const denied = page.locator('.card.tool', { hasText: 'denied' });
    assert.equal(await denied.locator('.error-type').textContent(), 'Denied');
    assert.equal(await denied.locator('.error-message').textContent(), 'The user denied this operation.');
    assert.equal(await denied.locator('.error-feedback').textContent(), 'Feedback: not there');
    assert.doesNotMatch((await denied.textContent()) ?? '', /feedback>/);
    await page.close();
  });

  it('shows an approval inside the tool card it gates, and a decided one without the pending accent', async () => {
    const page = await chat();
    const tool = (status: string): Action => ({
      type: 'update',
      update: { conversationId, kind: 'tool_call', turnId: 't', toolCallId: 'w1', name: 'write_to_file', params: { path: 'a.md' }, status } as any,
    });
    await feed(page, toWebview([
      tool('pending'),
      { type: 'approval', id: 'gated', request: { kind: 'tool', title: 'Create a.md?', detail: '+hi', tool: 'write_to_file', toolCallId: 'w1' } },
      { type: 'approval', id: 'alone', request: { kind: 'tool', title: 'Create b.md?', detail: '' } },
    ]));
    const card = page.locator('.card.tool[data-tool="write_to_file"]');
    const gated = card.locator('.card.approval[data-approval="gated"]');
    await gated.waitFor();
    assert.equal(await page.locator('#log > .card.approval[data-approval="alone"]').count(), 1);
    // below the card's head
    const order = await card.evaluate((c) => [...c.children].map((e) => e.className));
    assert.ok(order.indexOf('approvals') === order.indexOf('head') + 1, order.join(' | '));
    const border = (l: typeof gated) =>
      l.evaluate((e) => [getComputedStyle(e).borderLeftWidth, getComputedStyle(e).borderLeftColor]);
    assert.deepEqual(await border(gated), ['4px', 'rgb(0, 120, 212)']);

    await gated.locator('textarea.feedback').fill('sure');
    await gated.getByRole('button', { name: 'Approve' }).click();
    assert.deepEqual(
      (await posted(page)).filter((m) => m.type === 'approval'),
      [{ type: 'approval', id: 'gated', decision: 'approve', feedback: 'sure' }],
    );
    await feed(page, toWebview([
      { type: 'approvalAnswered', id: 'gated', response: { decision: 'approve', feedback: 'sure' } },
      { type: 'approvalCancelled', id: 'alone' },
      tool('completed'),
    ]));
    await card.locator('.status.completed').waitFor();
    await gated.locator('.decision.approve').waitFor();
    for (const decided of [gated, page.locator('[data-approval="alone"]')]) {
      const [width, color] = await border(decided);
      assert.equal(width, '1px');
      assert.notEqual(color, 'rgb(0, 120, 212)');
    }
    await page.close();
  });

  it('a denied tool shows the sentence and the feedback apart, without the tags', async () => {
    const page = await chat();
    await feed(page, toWebview([
      {
        type: 'update',
        update: {
          conversationId,
          kind: 'tool_call',
          turnId: 't',
          toolCallId: 'd1',
          name: 'write_to_file',
          params: { path: 'a.md' },
          status: 'failed',
          error: { type: 'Denied', message: 'The user denied this operation.\n<feedback>\nuse b.md\n</feedback>' },
        },
      },
    ]));
    const card = page.locator('.card.tool.has-error');
    await card.waitFor();
    assert.equal(await card.locator('.error-message').textContent(), 'The user denied this operation.');
    assert.equal(await card.locator('.error-feedback').textContent(), 'Feedback: use b.md');
    assert.doesNotMatch((await card.textContent()) ?? '', /feedback>/);
    await page.close();
  });

  it('before its script runs the composer takes no text and Send is off: nothing typed is lost', async () => {
    let early: { editable: boolean; sendOff: boolean; typed: string } | undefined;
    const slow = await openChat(browser, { width: 420, height: 600 }, async (p) => {
      const input = p.locator('#input');
      await input.waitFor({ state: 'attached' });
      await input.focus();
      await p.keyboard.type('lost?');
      early = { editable: await input.isEditable(), sendOff: await p.locator('#send').isDisabled(), typed: await input.inputValue() };
    });
    assert.deepEqual(early, { editable: false, sendOff: true, typed: '' });
    assert.equal(await slow.locator('#input').isEditable(), true);
    await slow.locator('#input').fill('now');
    assert.equal(await slow.locator('#input').inputValue(), 'now');
    await slow.close();
  });

  it('while the server starts, Send waits; when it failed, the composer gives way to the fixes', async () => {
    const page = await chat(420, []);
    const send = page.getByRole('button', { name: 'Send' });
    await page.getByText('Starting the Modus server…').waitFor();
    assert.equal(await send.isDisabled(), true);
    await page.locator('#input').fill('too early');
    await page.locator('#input').press('Enter');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'send'), []);
    assert.equal(await page.locator('#input').inputValue(), 'too early', 'the text stays');

    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }]));
    assert.equal(await send.isDisabled(), false);
    assert.equal(await page.getByText('Starting the Modus server…').isVisible(), false);

    const error = "No module named 'pygls' <script>";
    await feed(page, toWebview([{ type: 'server', server: { status: 'failed', error } }]));
    const panel = page.locator('#server');
    await panel.waitFor();
    assert.equal(await page.locator('#composer').isVisible(), false);
    assert.equal(await panel.locator('.server-error').textContent(), error);
    const fixes: [string, string][] = [
      ['Select Python Interpreter', 'pickInterpreter'],
      ['Open Setting', 'openSettings'],
      ['Show Install Command', 'showInstall'],
      ['Retry', 'restart'],
    ];
    for (const [name] of fixes) await panel.getByRole('button', { name, exact: true }).click();
    assert.deepEqual(
      (await posted(page)).filter((m) => m.type === 'fixServer'),
      fixes.map(([, fix]) => ({ type: 'fixServer', fix })),
    );
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }]));
    await page.locator('#composer').waitFor();
    assert.equal(await panel.isVisible(), false);
    await page.close();
  });
});

describe('chat webview: the plan card and the todo panel', () => {
  let browser: Browser;
  const conversationId = 'conv-plan';
  const PLAN = {
    summary: 'Rename b to beta',
    approach: 'Edit src/app.py',
    steps: [
      { id: '1', description: 'Rename `b` in src/app.py', files: ['src/app.py'], depends_on: [], verification: 'grep beta' },
      { id: '2', description: 'Run the tests <img src=x onerror="window.__pwned=1">', files: [], depends_on: ['1'], verification: 'echo ok' },
      { id: '3', description: 'Tell the user', files: [], depends_on: ['2'], verification: 'none' },
    ],
  };
  const MARKDOWN = [
    '# Plan: Rename b',
    '',
    'Status: pending approval',
    '',
    '## Approach',
    '',
    'Edit `src/app.py` <b>now</b>',
    '',
    '## Steps',
    '',
    '- [ ] 1. Rename `b` in src/app.py',
    '  - Verification: grep beta',
    '  - Result:',
    '    ```text',
    '    <script>window.__pwned=2</script>',
    '    ```',
    '- [x] 2. Run the tests',
    '',
  ].join('\n');
  const plan = (state: string, completedSteps: string[] = [], markdown?: string): Action => ({
    type: 'update',
    update: { conversationId, kind: 'plan', state, completedSteps, ...(state === 'planning' ? {} : { plan: PLAN }), ...(markdown ? { markdown } : {}) } as any,
  });
  const state = (planState: string, completedSteps: string[] = [], goal = 'Rename b <i>everywhere</i>'): Action =>
    stateAction(conversationId, {
      phase: planState === 'executing' ? 'act' : 'plan',
      plan: { state: planState as any, goal, scope: ['src/app.py'], planId: 'p1', ...(planState === 'planning' ? {} : { plan: PLAN }), completedSteps },
    });
  const todos = (items: [string, string, string?][]): Action => ({
    type: 'update',
    update: {
      conversationId,
      kind: 'todos',
      agent: 'modus',
      todos: items.map(([content, status, priority], i) => ({ id: `t${i + 1}`, content, status, priority: priority ?? 'medium' })),
    } as any,
  });
  const exitCall: Action = {
    type: 'update',
    update: { conversationId, kind: 'tool_call', turnId: 'turn', toolCallId: 'exit-1', name: 'plan_exit', params: { plan: PLAN }, status: 'running' },
  };
  const exitApproval: Action = {
    type: 'approval',
    id: 'plan-q',
    request: { kind: 'plan', title: 'Approve the plan: Rename b?', detail: MARKDOWN, tool: 'plan_exit', toolCallId: 'exit-1', agent: 'modus' },
  };
  const open = async (actions: Action[], width = 420) => {
    const page = await openChat(browser, { width, height: 800 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, ...actions]));
    return page;
  };

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('shows nothing without a plan or todos; drafting shows the goal, the badge and the scope, as text', async () => {
    const page = await open([state('normal')]);
    assert.equal(await page.locator('#plan').isVisible(), false);
    assert.equal(await page.locator('#todos').isVisible(), false);
    await feed(page, toWebview([plan('planning'), state('planning')]));
    const card = page.locator('#plan');
    await card.waitFor();
    assert.equal(await card.locator('.plan-goal').textContent(), 'Rename b <i>everywhere</i>');
    assert.equal(await card.locator('.plan-badge').textContent(), 'drafting');
    assert.equal(await card.locator('.plan-scope').textContent(), 'Scope: src/app.py');
    assert.equal(await card.locator('button').count(), 0);
    assert.equal(await card.locator('i').count(), 0);
    await page.close();
  });

  it('asks plan_exit’s question inside the card: the plan document, Approve / Reject / Revise with feedback; answered, it goes back to the tool card', async () => {
    const page = await open([state('planning'), exitCall, plan('awaiting_approval', [], MARKDOWN), state('awaiting_approval'), exitApproval]);
    const card = page.locator('#plan');
    const asked = card.locator('.card.approval[data-approval="plan-q"]');
    await asked.waitFor();
    assert.equal(await card.locator('.plan-badge').textContent(), 'pending approval');
    assert.equal(await page.locator('.card.tool[data-tool="plan_exit"] [data-approval]').count(), 0, 'not in the tool card while asked');
    assert.deepEqual(await asked.locator('.buttons button').allTextContents(), ['Approve', 'Reject', 'Revise']);
    // the markdown, read into elements: headings, code, boxes; the card's own copy is not repeated
    const doc = asked.locator('details.plan-doc');
    assert.equal(await doc.getAttribute('open'), '');
    assert.deepEqual(await doc.locator('h4').allTextContents(), ['Approach', 'Steps']);
    assert.equal(await doc.locator('p code').first().textContent(), 'src/app.py');
    assert.equal(await doc.locator('pre.md-code').textContent(), '<script>window.__pwned=2</script>');
    assert.deepEqual(await doc.locator('.md > ul > li.md-task > .md-mark').allTextContents(), ['☐', '☑']);
    assert.equal(await doc.locator('.md > ul > li.md-task.checked').textContent(), '☑2. Run the tests');
    assert.equal(await card.locator('details.plan-doc').count(), 1);
    assert.equal(await card.locator('.plan-decision').count(), 0, 'no second set of buttons');
    await asked.locator('textarea.feedback').fill('Also rename c');
    await asked.getByRole('button', { name: 'Revise' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'approval'), [
      { type: 'approval', id: 'plan-q', decision: 'revise', feedback: 'Also rename c' },
    ]);
    await feed(page, toWebview([{ type: 'approvalAnswered', id: 'plan-q', response: { decision: 'revise', feedback: 'Also rename c' } }, plan('planning', [], MARKDOWN.replace('pending approval', 'drafting'))]));
    await page.locator('.card.tool[data-tool="plan_exit"] [data-approval="plan-q"] .decision').waitFor();
    assert.equal(await card.locator('[data-approval]').count(), 0);
    assert.equal(await card.locator('.plan-badge').textContent(), 'drafting');
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined);
    await page.close();
  });

  it('without a question (after a reload) the card has its own Approve / Reject, which post a plan decision', async () => {
    const page = await open([state('awaiting_approval')]);
    const card = page.locator('#plan');
    await card.locator('.plan-decision').waitFor();
    assert.deepEqual(await card.locator('.plan-steps .step-mark').allTextContents(), ['○', '○', '○']);
    await card.locator('.plan-decision textarea').fill('  Not now  ');
    await card.getByRole('button', { name: 'Reject' }).click();
    assert.equal(await card.getByRole('button', { name: 'Approve' }).isDisabled(), true, 'one decision');
    const again = await open([state('awaiting_approval')]);
    await again.locator('#plan').getByRole('button', { name: 'Approve' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'planDecision'), [{ type: 'planDecision', decision: 'reject', feedback: 'Not now' }]);
    assert.deepEqual((await posted(again)).filter((m) => m.type === 'planDecision'), [{ type: 'planDecision', decision: 'approve' }]);
    await page.close();
    await again.close();
  });

  it('ticks the steps live while the plan runs, and ends completed with the outcome', async () => {
    const page = await open([exitCall, state('executing'), plan('executing', ['1'], MARKDOWN.replace('pending approval', 'step 2 of 3'))]);
    const card = page.locator('#plan');
    await card.locator('.step.done').waitFor();
    assert.equal(await card.locator('.plan-badge').textContent(), 'step 2 of 3');
    const stepRows = async () =>
      card.locator('.plan-steps li').evaluateAll((items) => items.map((li) => `${li.className}|${li.querySelector('.step-mark')!.textContent}`));
    assert.deepEqual(await stepRows(), ['step done|✓', 'step current|▶', 'step pending|○']);
    assert.equal(await card.locator('.step.current .step-text').textContent(), '2. Run the tests <img src=x onerror="window.__pwned=1">');
    assert.equal(await card.locator('.step.done .step-text code').textContent(), 'b');
    assert.equal(await card.locator('details.plan-doc').getAttribute('open'), null, 'the document is folded while the plan runs');
    assert.equal(await card.locator('button').count(), 0);
    await feed(page, toWebview([plan('executing', ['1', '2'])]));
    assert.deepEqual(await stepRows(), ['step done|✓', 'step done|✓', 'step current|▶']);
    await feed(page, toWebview([plan('normal', ['1', '2', '3'], '# Plan: Rename b\n\nStatus: completed\n\n## Outcome\n\n`beta` everywhere.\n\n## Summary\n\nx\n'), state('normal')]));
    assert.equal(await card.locator('.plan-badge').textContent(), 'completed');
    assert.equal(await card.locator('.md').first().textContent(), 'beta everywhere.');
    assert.match((await card.getAttribute('class')) ?? '', /state-completed/);
    assert.equal(await page.locator('#plan img, #plan script').count(), 0);
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined);
    assert.deepEqual(await page.evaluate(() => (window as any).__cspViolations), []);
    await page.close();
  });

  it('the todo panel: ✓ struck through, ▶ bold, ○ pending, the count, live updates, text as text', async () => {
    const page = await open([todos([['Rename <b>b</b>', 'in_progress', 'high'], ['Run the tests', 'pending'], ['Tell the user', 'pending']])]);
    const panel = page.locator('#todos');
    await panel.waitFor();
    assert.equal(await panel.locator('.todos-count').textContent(), '0 of 3 done');
    await feed(page, toWebview([todos([['Rename <b>b</b>', 'completed', 'high'], ['Run the tests', 'in_progress'], ['Tell the user', 'pending']])]));
    assert.equal(await panel.locator('.todos-count').textContent(), '1 of 3 done');
    const rows = await panel.locator('li').evaluateAll((items) =>
      items.map((li) => {
        const text = li.querySelector('.todo-text')!;
        const style = getComputedStyle(text);
        return [li.querySelector('.todo-mark')!.textContent, text.textContent, style.textDecorationLine, style.fontWeight];
      }),
    );
    assert.deepEqual(rows, [
      ['✓', 'Rename <b>b</b>', 'line-through', '400'],
      ['▶', 'Run the tests', 'none', '600'],
      ['○', 'Tell the user', 'none', '400'],
    ]);
    assert.equal(await panel.locator('.todo-priority').count(), 1);
    assert.equal(await panel.locator('b').count(), 0);
    // folded by the user, it stays folded across updates
    await panel.locator('summary').click();
    await feed(page, toWebview([todos([['Rename <b>b</b>', 'completed'], ['Run the tests', 'completed'], ['Tell the user', 'in_progress']])]));
    assert.equal(await panel.getAttribute('open'), null);
    assert.equal(await panel.locator('.todos-count').textContent(), '2 of 3 done');
    await page.close();
  });

  it('fits a 300px sidebar: the card, its question and the todos, nothing cut off or scrolling sideways', async () => {
    const long = 'src/a/very/long/path/to/some/deeply/nested/module_with_a_long_name.py';
    const page = await open(
      [
        state('awaiting_approval', [], `Refactor ${long}`),
        exitCall,
        plan('awaiting_approval', [], MARKDOWN.replace('src/app.py', long)),
        exitApproval,
        todos([[`Rename in ${long}`, 'in_progress'], ['Run the tests', 'pending']]),
      ],
      300,
    );
    await page.locator('#plan [data-approval]').waitFor();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 300, 'no horizontal scrolling');
    for (const selector of ['#plan .plan-goal', '#plan .plan-badge', '#plan button.approve', '#plan button.revise', '#todos li']) {
      const box = await page.locator(selector).first().boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 300, `${selector} inside 0..300: ${JSON.stringify(box)}`);
    }
    const log = await page.locator('#log').boundingBox();
    assert.ok(log && log.height > 100, `the log keeps room: ${JSON.stringify(log)}`);
    await page.close();
  });
});

describe('chat webview: several agents and the @-completion', () => {
  let browser: Browser;
  const conversationId = 'conv-agents';
  const agents: Action = {
    type: 'agents',
    agents: {
      agents: [
        { name: 'architect', topLevel: true, mode: 'architect', source: 'workspace' },
        { name: 'coder', topLevel: false, mode: 'code', source: 'workspace' },
      ],
      members: [{ handle: 'alice', name: 'Alice <b>Liddell</b>' }],
    },
  };
  const modes: Action = {
    type: 'modes',
    modes: {
      current: 'architect',
      modes: [
        { slug: 'architect', name: 'Architect', description: null, whenToUse: null, source: 'builtin', groups: [] },
        { slug: 'code', name: 'Code', description: null, whenToUse: null, source: 'builtin', groups: [] },
      ],
    },
  };
  const up = (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId, ...u } as any });
  const open = async (actions: Action[] = []) => {
    const page = await openChat(browser, { width: 360, height: 700 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, modes, ...actions]));
    return page;
  };
  /** the rows of the completion: name | kind | detail, and which is selected */
  const rows = completionRows;

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('asks for the agents when the composer gains focus; @ opens the list, typing filters it, the arrows and Enter pick', async () => {
    const page = await open();
    const input = page.locator('#input');
    const list = page.getByRole('listbox', { name: 'Agents and members' });
    await input.focus();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'listAgents'), [{ type: 'listAgents' }]);
    await feed(page, toWebview([agents]));
    assert.equal(await list.isVisible(), false);

    await page.keyboard.type('@');
    await list.waitFor();
    assert.deepEqual(await rows(page), [
      'architect | top-level | Architect *',
      'coder | subordinate | Code',
      'alice | member | Alice <b>Liddell</b>',
    ]);
    assert.equal(await list.locator('b').count(), 0, 'names are text');
    const active = async () => page.locator(`#${await input.getAttribute('aria-activedescendant')}`).textContent();
    assert.equal(await active(), 'architecttop-levelArchitect');

    await page.keyboard.type('A');
    assert.deepEqual(await rows(page), ['architect | top-level | Architect *', 'alice | member | Alice <b>Liddell</b>']);
    await page.keyboard.press('ArrowDown');
    assert.deepEqual(await rows(page), ['architect | top-level | Architect', 'alice | member | Alice <b>Liddell</b> *']);
    assert.match((await active()) ?? '', /^alice/);
    await page.keyboard.press('ArrowDown'); // round to the first
    await page.keyboard.press('ArrowUp');
    assert.match((await active()) ?? '', /^alice/);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    assert.equal(await list.isVisible(), false);
    assert.equal(await input.inputValue(), '@architect ');
    assert.equal(await input.getAttribute('aria-activedescendant'), null);
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'send'), [], 'Enter picked, it did not send');

    await page.keyboard.type('design the cache');
    await page.keyboard.press('Enter');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'send'), [{ type: 'send', text: '@architect design the cache' }]);
    await page.close();
  });

  it('Escape closes the list (it stays closed in that mention), Tab and a click pick, an address opens nothing', async () => {
    const page = await open([agents]);
    const input = page.locator('#input');
    const list = page.locator('#mentions');
    await input.focus();
    await page.keyboard.type('ask @co');
    await list.waitFor();
    assert.deepEqual(await rows(page), ['coder | subordinate | Code *']);
    await page.keyboard.press('Escape');
    assert.equal(await list.isVisible(), false);
    await page.keyboard.type('d');
    assert.equal(await list.isVisible(), false, 'still closed while typing the same mention');
    assert.equal(await input.inputValue(), 'ask @cod');

    await page.keyboard.type(' and @');
    await list.waitFor();
    await page.keyboard.type('c');
    await page.keyboard.press('Tab');
    assert.equal(await input.inputValue(), 'ask @cod and @coder ');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'input', 'Tab picked; the focus stays');

    await page.keyboard.type('or @');
    await list.getByRole('option', { name: /^alice/ }).click();
    assert.equal(await input.inputValue(), 'ask @cod and @coder or @alice ');
    assert.equal(await list.isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'input');

    await page.keyboard.type('mail sam@');
    assert.equal(await list.isVisible(), false, 'sam@ is an address');
    await page.keyboard.type(' @zz');
    assert.equal(await list.isVisible(), false, 'nothing matches');
    await page.close();
  });

  it("shows the model's thinking folded above its words, and unfolds it on a click", async () => {
    const page = await open([
      up({ kind: 'message', role: 'user', text: 'hi' }),
      up({ kind: 'turn_started', turnId: 't', agent: 'modus' }),
      up({ kind: 'thinking_delta', turnId: 't', agent: 'modus', text: 'The user wants a greeting.' }),
      up({ kind: 'message_delta', turnId: 't', agent: 'modus', text: 'Hello.' }),
    ]);
    const thinking = page.locator('details.msg.thinking');
    await thinking.waitFor();
    assert.equal(await thinking.getAttribute('open'), null, 'folded');
    assert.equal(await thinking.locator('.text').isVisible(), false);
    await thinking.locator('summary').click();
    assert.equal(await thinking.locator('.text').textContent(), 'The user wants a greeting.');
    assert.equal(await thinking.locator('.text').isVisible(), true);
    assert.deepEqual(await page.locator('.msg.assistant .text').allTextContents(), ['Hello.']);
    await page.close();
  });

  it('shows two agents streaming at once as two blocks, headed by the agent and who woke it; the refused mentions as a muted line', async () => {
    const page = await open([
      up({ kind: 'message', role: 'user', text: '@architect design the cache' }),
      up({ kind: 'turn_started', turnId: 'a', agent: 'architect' }),
      up({ kind: 'message_delta', turnId: 'a', agent: 'architect', text: 'An LRU ' }),
      up({ kind: 'turn_started', turnId: 'c', agent: 'coder', wokenBy: 'architect' }),
      up({ kind: 'message_delta', turnId: 'c', agent: 'coder', text: 'Reading ' }),
      up({ kind: 'message_delta', turnId: 'a', agent: 'architect', text: 'in front ' }),
      up({ kind: 'tool_call', turnId: 'c', agent: 'coder', toolCallId: 'r1', name: 'read_file', params: { path: 'store.py' }, status: 'running' }),
      up({ kind: 'message_delta', turnId: 'c', agent: 'coder', text: 'Built it, @architect.' }),
      up({ kind: 'message_delta', turnId: 'a', agent: 'architect', text: 'of the store.' }),
    ]);
    const turns = page.locator('#log > .turn');
    await turns.nth(1).waitFor();
    assert.equal(await turns.count(), 2);
    const architect = page.getByRole('group', { name: 'architect', exact: true });
    const coder = page.getByRole('group', { name: 'coder, woken by architect' });
    assert.equal(await architect.locator('.turn-head').textContent(), 'architect');
    assert.equal(await coder.locator('.turn-agent').textContent(), 'coder');
    assert.equal(await coder.locator('.woken-by').textContent(), 'woken by architect');
    assert.deepEqual(await architect.locator('.msg.assistant .text').allTextContents(), ['An LRU in front of the store.']);
    assert.deepEqual(await coder.locator('.msg.assistant .text').allTextContents(), ['Reading ', 'Built it, @architect.']);
    assert.equal(await coder.locator('.card.tool[data-tool="read_file"]').count(), 1, 'the tool card is in its turn');
    assert.equal(await page.locator('.msg.assistant .who').count(), 0, 'the block names the agent, once');

    await feed(page, toWebview([
      up({ kind: 'message', turnId: 'a', agent: 'architect', role: 'assistant', text: 'An LRU in front of the store. @coder, build it.' }),
      up({ kind: 'turn_ended', turnId: 'a', agent: 'architect', outcome: 'completed' }),
      up({ kind: 'message', turnId: 'c', agent: 'coder', role: 'system', text: 'Mentions not delivered: @architect (already in this chain).' }),
      up({ kind: 'turn_ended', turnId: 'c', agent: 'coder', outcome: 'completed' }),
    ]));
    assert.deepEqual(await architect.locator('.msg.assistant .text').allTextContents(), ['An LRU in front of the store. @coder, build it.']);
    const refused = coder.locator('.msg.system.mentions-refused');
    assert.equal(await refused.textContent(), 'Mentions not delivered: @architect (already in this chain).');
    assert.equal(await page.locator('.mentions-refused').count(), 1);
    const style = await refused.evaluate((e) => [getComputedStyle(e).color, getComputedStyle(e).fontStyle, e.closest('[role="alert"]')]);
    assert.deepEqual(style, ['rgb(157, 157, 157)', 'normal', null], 'muted, not an alert');
    await page.close();
  });
});

describe('chat webview: always allow, a stored conversation by turn, the mode rules, yolo, the MCP section', () => {
  let browser: Browser;
  const conversationId = 'conv-rules';
  const modes: Action = {
    type: 'modes',
    modes: {
      current: 'code',
      modes: [
        { slug: 'code', name: 'Code', description: 'Write code', whenToUse: null, source: 'builtin', groups: ['read', 'edit', 'command', 'mcp'] },
        {
          slug: 'reviewer',
          name: 'Reviewer',
          description: 'Review <b>changes</b>',
          whenToUse: null,
          source: 'project',
          groups: ['read', ['mcp', { servers: ['docs'] }], ['command', { allow: ['git log*', 'git diff*'], deny: ['rm -rf *'] }]],
        },
      ],
    },
  };
  const state = (yolo: boolean): Action => stateAction(conversationId, { yolo });
  const up = (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId, ...u } as any });
  const open = async (actions: Action[] = [], width = 360) => {
    const page = await openChat(browser, { width, height: 700 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, modes, state(false), ...actions]));
    return page;
  };
  const RULE = 'autoApprove.modes.code.command: "npm test"';

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('a command approval offers "Always allow" with its rule (muted, monospace); it answers approve + always', async () => {
    const page = await open([
      up({ kind: 'turn_started', turnId: 't', agent: 'modus' }),
      up({ kind: 'tool_call', turnId: 't', agent: 'modus', toolCallId: 'c1', name: 'execute_command', params: { command: 'npm test' }, status: 'pending' }),
      {
        type: 'approval',
        id: 'cmd',
        request: { kind: 'tool', title: 'Run a command?', detail: 'npm test', tool: 'execute_command', toolCallId: 'c1', agent: 'modus', alwaysAllow: RULE },
      },
      { type: 'approval', id: 'plain', request: { kind: 'tool', title: 'Run another?', detail: 'ls', tool: 'execute_command', agent: 'modus' } },
    ]);
    const card = page.locator('.card.tool[data-tool="execute_command"] [data-approval="cmd"]');
    await card.waitFor();
    assert.deepEqual(await card.getByRole('button').allTextContents(), ['Approve', 'Always allow', 'Deny']);
    const rule = card.locator('.always-rule');
    assert.equal(await rule.textContent(), `Always allow adds to .modus/settings.json: ${RULE}`);
    assert.equal(await rule.locator('code').textContent(), RULE);
    const always = card.getByRole('button', { name: 'Always allow' });
    assert.equal(await always.getAttribute('aria-describedby'), await rule.getAttribute('id'), 'the button is described by its rule');
    const [color, codeFont, bodyColor] = await rule.evaluate((e) => [
      getComputedStyle(e).color,
      getComputedStyle(e.querySelector('code')!).fontFamily,
      getComputedStyle(document.body).color,
    ]);
    assert.equal(color, 'rgb(157, 157, 157)', 'muted');
    assert.notEqual(color, bodyColor);
    assert.match(codeFont, /mono|Menlo|Consolas/i);
    // an approval without a rule offers no "Always allow"
    const plain = page.locator('[data-approval="plain"]');
    assert.deepEqual(await plain.getByRole('button').allTextContents(), ['Approve', 'Deny']);
    assert.equal(await plain.locator('.always-rule').count(), 0);

    await card.locator('textarea.feedback').fill('fine');
    await always.click();
    assert.deepEqual(
      (await posted(page)).filter((m) => m.type === 'approval'),
      [{ type: 'approval', id: 'cmd', decision: 'approve', feedback: 'fine', always: true }],
    );
    assert.equal(await card.getByRole('button', { name: 'Approve' }).isDisabled(), true, 'one answer');
    await feed(page, toWebview([{ type: 'approvalAnswered', id: 'cmd', response: { decision: 'approve', feedback: 'fine', always: true } }]));
    await card.locator('.decision.approve').waitFor();
    assert.equal(await card.locator('.decision').textContent(), 'Always allowed: fine');
    assert.equal(await card.locator('.always-rule code').textContent(), RULE, 'the rule stays, written');
    assert.equal(await card.locator('button').count(), 0);
    // a plain Approve leaves no rule on the card
    await plain.getByRole('button', { name: 'Approve' }).click();
    await feed(page, toWebview([{ type: 'approvalAnswered', id: 'plain', response: { decision: 'approve' } }]));
    assert.equal(await plain.locator('.decision').textContent(), 'Approved');
    assert.equal(await plain.locator('.always-rule').count(), 0);
    await page.close();
  });

  it('the settings file’s diff is asked next, in the turn, with its lines tinted like any edit', async () => {
    const diff = '--- a/.modus/settings.json\n+++ b/.modus/settings.json\n@@ -1 +1,9 @@\n-{"maxRetries": 2}\n\\ No newline at end of file\n+{\n+  "maxRetries": 2,\n+  "autoApprove": {}\n+}\n';
    const page = await open([
      up({ kind: 'turn_started', turnId: 't', agent: 'modus' }),
      {
        type: 'approval',
        id: 'diff',
        request: {
          kind: 'tool',
          title: 'Always allow: write this rule to .modus/settings.json?',
          detail: diff,
          tool: 'write_to_file',
          params: { path: '.modus/settings.json', content: '{}' },
          agent: 'modus',
        },
      },
    ]);
    const card = page.locator('.turn [data-approval="diff"]');
    await card.waitFor();
    assert.equal(await card.locator('.approval-title').textContent(), 'Always allow: write this rule to .modus/settings.json?');
    assert.deepEqual(await card.locator('pre.diff .file').allTextContents(), ['--- a/.modus/settings.json\n', '+++ b/.modus/settings.json\n']);
    assert.deepEqual(await card.locator('pre.diff .del').allTextContents(), ['-{"maxRetries": 2}\n']);
    assert.equal(await card.locator('pre.diff .add').count(), 4);
    assert.deepEqual(await card.getByRole('button').allTextContents(), ['Approve', 'Deny'], 'the rule is not offered again');
    await page.close();
  });

  it('a stored conversation shows a block per turn it names, "woken by" and the refused mentions from their metadata', async () => {
    const m = (role: string, text: string, agent: string | undefined, metadata: Record<string, unknown>) => ({ id: `m-${text}`, role, text, metadata, ...(agent ? { agent } : {}) });
    const page = await open([
      {
        type: 'history',
        conversationId,
        messages: [
          m('user', 'design it', undefined, {}),
          m('assistant', 'An LRU. @coder, build it.', 'architect', { turnId: 'ta' }),
          m('assistant', 'Built, @architect.', 'coder', { turnId: 'tc', wokenBy: 'architect' }),
          // the server's words may change: the metadata says what the message is
          m('system', 'Not delivered: @architect (already in this chain).', 'coder', {
            turnId: 'tc',
            wokenBy: 'architect',
            mentionsRefused: [{ mention: '@architect', reason: 'already in this chain' }],
          }),
          m('system', 'Mentions not delivered: none really.', 'coder', { turnId: 'tc', wokenBy: 'architect', mentionsRefused: [] }),
        ] as any,
      },
    ]);
    const coder = page.getByRole('group', { name: 'coder, woken by architect' });
    await coder.waitFor();
    assert.equal(await page.locator('#log > .turn').count(), 2);
    assert.equal(await coder.locator('.woken-by').textContent(), 'woken by architect');
    assert.deepEqual(await coder.locator('.msg.system.mentions-refused').allTextContents(), ['Not delivered: @architect (already in this chain).']);
    assert.equal(await coder.locator('.msg.system:not(.mentions-refused)').count(), 1);
    await page.close();
  });

  it('the mode dropdown tells each mode’s MCP servers and command rules', async () => {
    const page = await open();
    const select = page.locator('#mode');
    await select.locator('option[value="reviewer"]').waitFor({ state: 'attached' });
    assert.equal(
      await select.locator('option[value="reviewer"]').getAttribute('title'),
      'Review <b>changes</b>\nMCP: docs · commands: allow git log*, git diff*; deny rm -rf *',
    );
    assert.equal(await select.locator('option[value="code"]').getAttribute('title'), 'Write code\nall MCP servers · any command');
    assert.equal(await select.getAttribute('title'), 'Mode: Code (all MCP servers · any command)');
    await page.close();
  });

  it('yolo shows as a line under the header while the state says so', async () => {
    const page = await open([], 250);
    const yolo = page.locator('#yolo');
    assert.equal(await yolo.isVisible(), false);
    await feed(page, toWebview([state(true)]));
    await yolo.waitFor();
    assert.equal(await yolo.textContent(), 'YOLO: every action runs without asking.');
    const box = await yolo.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 250, JSON.stringify(box));
    await feed(page, toWebview([state(false)]));
    await yolo.waitFor({ state: 'hidden' });
    await page.close();
  });

  it('the MCP section: hidden without servers; each server’s state, its error, its tools folded, Restart', async () => {
    const page = await open([], 300);
    const section = page.locator('#mcp');
    assert.equal(await section.isVisible(), false, 'no list yet (or a server without MCP)');
    await feed(page, toWebview([{ type: 'mcp', servers: [] }]));
    assert.equal(await section.isVisible(), false, 'no server configured');
    assert.equal(await page.locator('#panels').isVisible(), false, 'no empty panel either');
    const servers = [
      {
        name: 'docs',
        state: 'connected',
        source: '/ws/.modus/mcp.json',
        tools: [{ name: 'search', description: 'Search the <b>docs</b>' }, { name: 'fetch' }],
        resources: [{ uri: 'docs://index', name: 'Index' }],
      },
      { name: 'github', state: 'starting', tools: [], resources: [] },
      { name: 'broken', state: 'failed', error: 'exited with code 1: ModuleNotFoundError: No module named mcp', tools: [], resources: [] },
      { name: 'off', state: 'disabled', error: 'Disabled in /ws/.modus/mcp.json.', tools: [], resources: [] },
    ];
    await feed(page, toWebview([{ type: 'mcp', servers } as any]));
    await section.waitFor();
    assert.equal(await section.locator('summary').first().textContent(), 'MCP servers 1 of 4 connected, 1 failed');
    assert.equal(await section.getAttribute('open'), null, 'folded at first');
    await section.locator('summary').first().click();
    const rows = await section.locator('.mcp-server').evaluateAll((items) =>
      items.map((li) => [
        li.querySelector('.mcp-name')!.textContent,
        li.querySelector('.mcp-state')!.textContent,
        li.querySelector('.mcp-error')?.textContent ?? '',
        li.querySelector('.mcp-tools > summary')?.textContent ?? li.querySelector('.mcp-tools-none')?.textContent ?? '',
      ]),
    );
    assert.deepEqual(rows, [
      ['docs', 'connected', '', '2 tools, 1 resource'],
      ['github', 'starting…', '', ''],
      ['broken', 'failed', 'exited with code 1: ModuleNotFoundError: No module named mcp', ''],
      ['off', 'disabled', 'Disabled in /ws/.modus/mcp.json.', ''],
    ]);
    const docs = section.locator('.mcp-server[data-server="docs"]');
    const tools = docs.locator('.mcp-tools-list');
    assert.equal(await tools.isVisible(), false, 'the tools are folded');
    await docs.locator('.mcp-tools > summary').click();
    assert.deepEqual(await tools.locator('li').evaluateAll((items) => items.map((li) => li.textContent)), ['searchSearch the <b>docs</b>', 'fetch', 'docs://indexIndex']);
    assert.equal(await section.locator('b').count(), 0, 'text, not HTML');
    const color = await section.locator('.mcp-server[data-server="broken"] .mcp-error').evaluate((e) => getComputedStyle(e).color);
    assert.equal(color, 'rgb(248, 81, 73)', 'a failure in the error colour');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 300, 'no horizontal scrolling');

    // Restart, by keyboard: posted once; the button waits (focused) for the next list
    const restart = section.getByRole('button', { name: 'Restart broken' });
    await restart.focus();
    await page.keyboard.press('Enter');
    const waiting = section.getByRole('button', { name: 'Restarting broken' });
    await waiting.waitFor();
    assert.equal(await waiting.getAttribute('aria-disabled'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Restarting broken', 'the focus stays');
    await page.keyboard.press('Enter'); // pressed again while it restarts: nothing more
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'mcpRestart'), [{ type: 'mcpRestart', name: 'broken' }]);
    // the server reports the restart (mcp_changed), then answers with the list
    const next = servers.map((s) => (s.name === 'broken' ? { ...s, state: 'connected', error: undefined, tools: [{ name: 'ping' }] } : s));
    await feed(page, toWebview([up({ kind: 'mcp_changed', servers: next })]));
    await section.getByRole('button', { name: 'Restart broken' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Restart broken');
    assert.equal(await section.locator('summary').first().textContent(), 'MCP servers 2 of 4 connected');
    assert.equal(await tools.isVisible(), true, 'an unfolded server stays unfolded');
    assert.equal(await section.getAttribute('open'), '', 'the section stays open');
    await feed(page, toWebview([{ type: 'mcp', servers: null }]));
    assert.equal(await section.isVisible(), false);
    assert.deepEqual(await page.evaluate(() => (window as any).__cspViolations), []);
    await page.close();
  });
});

describe('chat webview: checkpoints on tool cards, restores, tokens and cost in the header', () => {
  let browser: Browser;
  const conversationId = 'conv-ck';
  const modes: Action = {
    type: 'modes',
    modes: {
      current: 'code',
      modes: [
        { slug: 'code', name: 'Code', description: 'Write code', whenToUse: null, source: 'builtin', groups: ['read', 'edit', 'command'] },
        { slug: 'architect', name: 'Architect', description: 'Plan', whenToUse: null, source: 'builtin', groups: ['read'] },
      ],
    },
  };
  const state = stateAction(conversationId, { taskId: 'task-code' });
  const up = (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId, ...u } as any });
  const call = (toolCallId: string, name: string, path: string) =>
    up({ kind: 'tool_call', turnId: 't1', agent: 'modus', toolCallId, name, params: { path }, status: 'completed', result: 'ok' });
  const checkpoints: Action = {
    type: 'checkpoints',
    conversationId,
    checkpoints: [
      { id: 'k-start', conversationId, createdAt: '2025-01-01T00:00:00+00:00', label: "modus's turn starts" },
      { id: 'k-write', conversationId, toolCallId: 'c-write', createdAt: '2025-01-01T00:00:01+00:00', label: 'before write_to_file notes.md' },
    ],
  };
  const usage = (taskId: string, mode: string, phase: string, inputTokens: number, outputTokens: number, cost: number | null) =>
    up({ kind: 'usage', taskId, agent: 'modus', mode, phase, inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, cost });
  const open = async (actions: Action[] = [], width = 360) => {
    const page = await openChat(browser, { width, height: 700 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, modes, state, ...actions]));
    return page;
  };
  const conversation = [
    up({ kind: 'turn_started', turnId: 't1', agent: 'modus' }),
    call('c-read', 'read_file', 'a.txt'),
    call('c-write', 'write_to_file', 'notes.md'),
    up({ kind: 'turn_ended', turnId: 't1', agent: 'modus', outcome: 'completed' }),
    checkpoints,
  ];

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('a card with a checkpoint has Show diff and Restore; one without has neither', async () => {
    const page = await open(conversation);
    const write = page.locator('.card.tool[data-tool="write_to_file"]');
    await write.locator('.checkpoint').waitFor();
    assert.deepEqual(await write.locator('.checkpoint').getByRole('button').allTextContents(), ['Show diff', 'Restore']);
    assert.equal(await page.locator('.card.tool[data-tool="read_file"] .checkpoint').count(), 0);
    await write.getByRole('button', { name: 'Show diff' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'showDiff'), [{ type: 'showDiff', checkpointId: 'k-write', tool: 'write_to_file' }]);
    await page.close();
  });

  it('Restore opens its choices (files, files and conversation), by keyboard too; Escape and Cancel close them', async () => {
    const page = await open(conversation);
    const card = page.locator('.card.tool[data-tool="write_to_file"]');
    const restore = card.getByRole('button', { name: 'Restore', exact: true });
    assert.equal(await restore.getAttribute('aria-expanded'), 'false');
    await restore.click();
    const choices = card.getByRole('group', { name: 'Restore to just before this call' });
    await choices.waitFor();
    assert.equal(await restore.getAttribute('aria-expanded'), 'true');
    assert.equal(await restore.getAttribute('aria-controls'), await choices.getAttribute('id'));
    assert.deepEqual(await choices.getByRole('button').allTextContents(), ['Files', 'Files and conversation…', 'Cancel']);
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Restore files', 'the first choice has the focus');
    await page.keyboard.press('Escape');
    await choices.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Restore', 'back on Restore');
    await page.keyboard.press('Enter');
    await choices.getByRole('button', { name: 'Cancel' }).click();
    await choices.waitFor({ state: 'detached' });
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'restore'), [], 'nothing restored');
    await page.close();
  });

  it('Restore files posts the restore; the card waits; the note says what came back, with Undo restore', async () => {
    const page = await open(conversation);
    const card = page.locator('.card.tool[data-tool="write_to_file"]');
    await card.getByRole('button', { name: 'Restore', exact: true }).click();
    await card.getByRole('button', { name: 'Restore files', exact: true }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'restore'), [{ type: 'restore', checkpointId: 'k-write', what: 'files' }]);
    await feed(page, toWebview([{ type: 'restoreStarted', checkpointId: 'k-write' }]));
    const restore = card.locator('button.restore');
    assert.equal(await restore.textContent(), 'Restoring…');
    assert.equal(await restore.getAttribute('aria-disabled'), 'true');
    assert.equal(await card.locator('.restore-choices').count(), 0, 'the choices are closed');

    await feed(page, toWebview([{ type: 'restored', what: 'files', result: { restored: ['notes.md'], checkpoint: 'k-undo', conversationId } }]));
    const note = page.locator('.note.restore-note');
    await note.waitFor();
    assert.equal(await note.getAttribute('role'), 'status');
    assert.equal(await note.textContent(), 'Restored 1 file: notes.md.Undo restore');
    const muted = await note.evaluate((e) => getComputedStyle(e).color);
    assert.equal(muted, await page.locator('.note').first().evaluate((e) => getComputedStyle(e).color), 'muted like the other notes');
    assert.equal(await restore.textContent(), 'Restore');
    assert.equal(await restore.getAttribute('aria-disabled'), null);

    await note.getByRole('button', { name: 'Undo restore' }).click();
    const undo = (await posted(page)).filter((m) => m.type === 'undoRestore');
    assert.equal(undo.length, 1);
    assert.equal(undo[0].checkpointId, 'k-undo');
    await feed(page, toWebview([
      { type: 'restoreStarted', checkpointId: 'k-undo' },
      { type: 'restored', what: 'files', result: { restored: ['notes.md'], checkpoint: 'k-again', conversationId }, undoOf: undo[0].entryId },
    ]));
    assert.deepEqual(await page.locator('.note.restore-note').allTextContents(), ['Restored 1 file: notes.md (undone).', 'Restore undone: put back 1 file: notes.md.']);
    await page.close();
  });

  it('Files and conversation asks first: the messages after the call leave the chat', async () => {
    const page = await open(conversation);
    const card = page.locator('.card.tool[data-tool="write_to_file"]');
    await card.getByRole('button', { name: 'Restore', exact: true }).click();
    await card.getByRole('button', { name: 'Restore files and conversation…' }).click();
    const confirm = card.getByRole('group', { name: 'Restore files and conversation?' });
    await confirm.waitFor();
    assert.match((await confirm.textContent()) ?? '', /The messages after this call leave the chat and the agent forgets them/);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Restore files and conversation');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'restore'), [], 'not yet');
    await confirm.getByRole('button', { name: 'Restore files and conversation' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'restore'), [{ type: 'restore', checkpointId: 'k-write', what: 'both' }]);
    await page.close();
  });

  it('after a restore of the conversation, the calls it no longer has are muted cards marked undone, still with their checkpoint', async () => {
    const history: Action = {
      type: 'history',
      conversationId,
      restored: true,
      messages: [
        { id: 'm1', role: 'user', text: 'Write the notes', metadata: {} },
        {
          id: 'm2',
          role: 'assistant',
          text: 'Writing.',
          agent: 'modus',
          metadata: { turnId: 't1', toolCalls: [{ id: 'c-write', name: 'write_to_file', arguments: { path: 'notes.md' } }] },
        },
      ],
    };
    const page = await open([history, checkpoints]);
    const card = page.locator('.card.tool[data-tool="write_to_file"]');
    await card.locator('.undone-note').waitFor();
    assert.equal(await card.locator('.status').textContent(), 'undone');
    assert.equal(await card.locator('.undone-note').textContent(), 'The conversation was restored to just before this call: the agent no longer knows it.');
    assert.doesNotMatch((await card.getAttribute('class')) ?? '', /has-error/);
    assert.equal(await card.locator('.error').count(), 0);
    assert.deepEqual(await card.locator('.checkpoint').getByRole('button').allTextContents(), ['Show diff', 'Restore']);
    await page.close();
  });

  it('no restore while a turn runs (the server refuses it): Restore and Undo restore say why and do nothing', async () => {
    const page = await open([
      ...conversation,
      { type: 'restored', what: 'files', result: { restored: ['notes.md'], checkpoint: 'k-undo', conversationId } },
      up({ kind: 'turn_started', turnId: 't2', agent: 'modus' }),
    ]);
    const restore = page.locator('.card.tool[data-tool="write_to_file"] button.restore');
    await restore.waitFor();
    assert.equal(await restore.getAttribute('aria-disabled'), 'true');
    assert.equal(await restore.getAttribute('title'), 'Restore once the turn has ended');
    await restore.dispatchEvent('click'); // aria-disabled: focusable, but a click does nothing
    assert.equal(await page.locator('.restore-choices').count(), 0);
    const undo = page.getByRole('button', { name: 'Undo restore' });
    assert.equal(await undo.getAttribute('aria-disabled'), 'true');
    assert.equal(await undo.getAttribute('title'), 'Undo once the turn has ended');
    await undo.dispatchEvent('click');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'restore' || m.type === 'undoRestore'), [], 'nothing asked of the server');
    await feed(page, toWebview([up({ kind: 'turn_ended', turnId: 't2', agent: 'modus', outcome: 'completed' })]));
    assert.equal(await restore.getAttribute('aria-disabled'), null);
    assert.equal(await undo.getAttribute('aria-disabled'), null);
    await page.close();
  });

  it('the header shows the current task’s tokens and cost, the breakdown by mode and phase on hover and on focus', async () => {
    const page = await open();
    const box = page.locator('#usage');
    assert.equal(await box.isVisible(), false, 'nothing before a model request');
    await feed(page, toWebview([
      usage('task-arch', 'architect', 'plan', 4000, 100, 0.0135),
      usage('task-code', 'code', 'act', 10_000, 200, 0.033),
      usage('task-code', 'code', 'act', 2000, 100, 0.0075),
    ]));
    await box.waitFor();
    assert.equal(await box.locator('.usage-text').textContent(), '12.3k tokens · $0.04');
    assert.equal(await box.getAttribute('aria-label'), 'This task: 12.3k tokens · $0.04');
    const tip = page.locator('#usage-tip');
    assert.equal(await tip.isVisible(), false);
    await box.hover();
    await tip.waitFor();
    assert.equal(await tip.getAttribute('role'), 'tooltip');
    assert.equal(await box.getAttribute('aria-describedby'), 'usage-tip');
    assert.equal(await tip.locator('.usage-tip-title').first().textContent(), 'This task (Code · ACT)');
    assert.equal(await tip.locator('.usage-tip-kinds').textContent(), 'in 12k · out 300 · cache read 0 · cache write 0');
    assert.equal(await tip.locator('.usage-tip-total').textContent(), '16.4k tokens · $0.05');
    const rows = await tip.locator('tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert.deepEqual(rows, [
      ['Code · ACT', '12.3k tokens · $0.04'],
      ['Architect · PLAN', '4.1k tokens · $0.01'],
    ]);
    const inside = await tip.boundingBox();
    assert.ok(inside && inside.x >= 0 && inside.x + inside.width <= 360, `the tooltip stays in the sidebar: ${JSON.stringify(inside)}`);
    await page.mouse.move(5, 600);
    await tip.waitFor({ state: 'hidden' });
    // by keyboard: focus shows it, Escape hides it
    await box.focus();
    await tip.waitFor();
    await page.keyboard.press('Escape');
    await tip.waitFor({ state: 'hidden' });
    await page.close();
  });

  it('a task without a price shows “cost unknown”; a mode change starts the next task’s count', async () => {
    const page = await open([usage('task-code', 'code', 'act', 900, 50, null)]);
    const text = page.locator('#usage .usage-text');
    await text.waitFor();
    assert.equal(await text.textContent(), '950 tokens · cost unknown');
    await feed(page, toWebview([up({ kind: 'mode_changed', from: 'code', to: 'architect', by: 'user', taskId: 'task-arch' })]));
    assert.equal(await text.textContent(), '0 tokens · $0.00');
    await feed(page, toWebview([usage('task-arch', 'architect', 'act', 1000, 234, 0.002)]));
    assert.equal(await text.textContent(), '1.2k tokens · <$0.01');
    await page.close();
  });

  const fits = async (page: Page, width: number, ids: string[]) => {
    for (const id of ids) {
      const b = await page.locator(id).boundingBox();
      assert.ok(b && b.width > 0 && b.x >= 0 && b.x + b.width <= width, `${id} inside 0..${width}: ${JSON.stringify(b)}`);
    }
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width, 'no horizontal scrolling');
  };
  const running = up({ kind: 'turn_started', turnId: 't9', agent: 'modus' });
  const shown = (page: Page) => page.locator('#usage .usage-text span').evaluateAll((spans) => spans.filter((s) => getComputedStyle(s).display !== 'none').map((s) => s.textContent).join(''));

  const below = async (page: Page, id: string) => {
    const box = (await page.locator(id).boundingBox())!;
    const newBox = (await page.locator('#new').boundingBox())!;
    assert.ok(box.y >= newBox.y + newBox.height - 1, `${id} below the controls: ${JSON.stringify([box, newBox])}`);
  };

  it('in a wide panel (640px) the usage follows the controls, in the same row', async () => {
    const page = await open([running, usage('task-code', 'code', 'act', 123_456, 7890, 1.2345)], 640);
    await page.locator('#usage').waitFor();
    assert.equal(await shown(page), '131k tokens · $1.23');
    await fits(page, 640, ['#mode', '#phase', '#busy', '#usage', '#cancel', '#history', '#new']);
    const [usageBox, modeBox] = [(await page.locator('#usage').boundingBox())!, (await page.locator('#mode').boundingBox())!];
    assert.ok(usageBox.y < modeBox.y + modeBox.height, `in the row of the controls: ${JSON.stringify([usageBox, modeBox])}`);
    await page.close();
  });

  it('in a sidebar (300px) the usage has a row of its own under the controls, in full', async () => {
    const page = await open([running, usage('task-code', 'code', 'act', 123_456, 7890, 1.2345)], 300);
    await page.locator('#usage').waitFor();
    assert.equal(await shown(page), '131k tokens · $1.23');
    assert.equal(await page.locator('#usage').getAttribute('aria-label'), 'This task: 131k tokens · $1.23');
    await fits(page, 300, ['#mode', '#phase', '#busy', '#usage', '#cancel', '#history', '#new']);
    await below(page, '#usage');
    await feed(page, toWebview([usage('task-code', 'code', 'act', 1, 1, null)]));
    assert.equal(await shown(page), '131k tokens · cost unknown');
    await fits(page, 300, ['#mode', '#usage', '#cancel', '#history', '#new']);
    await page.close();
  });

  it('in a very narrow sidebar (250px) the usage has a row of its own under the controls; the tokens alone when the cost is unknown', async () => {
    const page = await open([running, usage('task-code', 'code', 'act', 123_456, 7890, 1.2345)], 250);
    await page.locator('#usage').waitFor();
    assert.equal(await shown(page), '131k tokens · $1.23');
    await fits(page, 250, ['#mode', '#phase', '#busy', '#usage', '#cancel', '#history', '#new']);
    await below(page, '#usage');
    await feed(page, toWebview([usage('task-code', 'code', 'act', 1, 1, null)]));
    assert.equal(await shown(page), '131k tokens');
    assert.equal(await page.locator('#usage').getAttribute('aria-label'), 'This task: 131k tokens · cost unknown', 'the whole of it for a screen reader');
    await page.close();
  });
});

describe('chat webview: the context bar', () => {
  let browser: Browser;
  const conversationId = 'conv-context';
  const state = (context?: { used?: number; window: number; threshold: number }): Action =>
    stateAction(conversationId, { taskId: 'task-code', ...(context ? { context } : {}) });
  const up = (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId, ...u } as any });
  const context = (used: number) => up({ kind: 'context', agent: 'modus', taskId: 'task-code', used, window: 200_000, threshold: 160_000 });
  const open = async (actions: Action[] = [], width = 420) => {
    const page = await openChat(browser, { width, height: 700 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, state({ window: 200_000, threshold: 160_000 }), ...actions]));
    return page;
  };
  const LABEL = 'Context: 12,345 of 200,000 tokens (6%). Condensed by itself at 160,000. Click to condense now.';
  /** the fill's and the mark's place in the meter, in % of its width */
  const meter = (page: Page) =>
    page.locator('#context .context-meter').evaluate((m) => {
      const box = m.getBoundingClientRect();
      const at = (selector: string) => m.querySelector(selector)!.getBoundingClientRect();
      const mark = at('.context-mark');
      return { fill: Math.round((at('.context-fill').width / box.width) * 100), mark: Math.round(((mark.left + mark.width / 2 - box.left) / box.width) * 100) };
    });

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('is hidden while the server tells no context window; before a request it shows the window alone', async () => {
    const page = await openChat(browser, { width: 420, height: 700 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, state()]));
    assert.equal(await page.locator('#context').isVisible(), false);
    await feed(page, toWebview([state({ window: 200_000, threshold: 160_000 })]));
    const bar = page.getByRole('button', { name: /^Context:/ });
    await bar.waitFor();
    assert.equal(await bar.locator('.context-text').textContent(), '— / 200k');
    assert.equal(
      await bar.getAttribute('aria-label'),
      'Context: no request yet; the window holds 200,000 tokens. Condensed by itself at 160,000. Click to condense now.',
    );
    assert.deepEqual(await meter(page), { fill: 0, mark: 80 });
    await page.close();
  });

  it('shows used / window beside the usage, a meter filled to the share used with a mark at the threshold; the label says it in full', async () => {
    const page = await open([
      up({ kind: 'usage', taskId: 'task-code', agent: 'modus', mode: 'code', phase: 'act', inputTokens: 12_000, outputTokens: 345, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0.04 }),
      context(12_345),
    ]);
    const bar = page.locator('#context');
    assert.equal(await bar.locator('.context-text').textContent(), '12.3k / 200k');
    assert.equal(await bar.getAttribute('aria-label'), LABEL);
    assert.equal(await bar.getAttribute('title'), LABEL);
    assert.deepEqual(await meter(page), { fill: 6, mark: 80 });
    const usage = (await page.locator('#usage').boundingBox())!;
    const box = (await bar.boundingBox())!;
    assert.ok(box.x >= usage.x + usage.width && Math.abs(box.y + box.height / 2 - (usage.y + usage.height / 2)) < 2, `beside the usage: ${JSON.stringify([usage, box])}`);
    const fill = () => bar.locator('.context-fill').evaluate((e) => getComputedStyle(e).backgroundColor);
    assert.equal(await fill(), 'rgb(0, 120, 212)');
    // past the threshold the next request condenses first: the fill warns
    await feed(page, toWebview([context(170_000)]));
    assert.equal(await bar.locator('.context-text').textContent(), '170k / 200k');
    assert.deepEqual(await meter(page), { fill: 85, mark: 80 });
    assert.equal(await fill(), 'rgb(204, 167, 0)');
    assert.deepEqual(await page.evaluate(() => (window as any).__cspViolations), [], 'the meter is placed without inline styles');
    await page.close();
  });

  it('a click (or Enter, or Space) asks to condense; the bar waits until the server answers, then shows what is left', async () => {
    const page = await open([context(12_345)]);
    const bar = page.getByRole('button', { name: LABEL });
    await bar.click();
    await bar.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Space');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'condense'), [{ type: 'condense' }, { type: 'condense' }, { type: 'condense' }]);

    await feed(page, toWebview([{ type: 'condenseStarted', conversationId }]));
    const busy = page.locator('#context');
    assert.equal(await busy.locator('.context-text').textContent(), 'condensing…');
    assert.equal(await busy.getAttribute('aria-busy'), 'true');
    assert.equal(await busy.getAttribute('aria-disabled'), 'true');
    assert.equal(await busy.getAttribute('aria-label'), 'Condensing the conversation…');
    await busy.dispatchEvent('click'); // aria-disabled: focusable, but a click does nothing
    assert.equal((await posted(page)).filter((m) => m.type === 'condense').length, 3, 'not asked again while it runs');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'context', 'the focus stays on the bar');

    await feed(page, toWebview([
      up({ kind: 'message', agent: 'modus', taskId: 'task-code', role: 'system', text: 'Condensed the conversation: 12,345 → 5,432 tokens.' }),
      up({ kind: 'condensed', agent: 'modus', taskId: 'task-code', before: 12_345, after: 5432 }),
      context(5432),
      { type: 'condenseEnded' },
    ]));
    assert.equal(await busy.locator('.context-text').textContent(), '5.4k / 200k');
    assert.equal(await busy.getAttribute('aria-busy'), null);
    assert.equal(await busy.getAttribute('aria-disabled'), null);
    assert.deepEqual(await page.locator('.msg.system .text').allTextContents(), ['Condensed the conversation: 12,345 → 5,432 tokens.']);
    await page.close();
  });

  it('when the server refuses (a turn is running), the chat shows its message and the bar is back', async () => {
    const refused = 'Could not condense: conversationId: a turn is running in conversation conv-context; cancel it first';
    const page = await open([context(12_345), { type: 'condenseStarted', conversationId }, { type: 'condenseFailed', text: refused }]);
    assert.deepEqual(await page.locator('.msg.client-error .text').allTextContents(), [refused]);
    const bar = page.locator('#context');
    assert.equal(await bar.locator('.context-text').textContent(), '12.3k / 200k');
    assert.equal(await bar.getAttribute('aria-busy'), null);
    await page.close();
  });

  const running = up({ kind: 'turn_started', turnId: 't9', agent: 'modus' });
  const usage = up({ kind: 'usage', taskId: 'task-code', agent: 'modus', mode: 'code', phase: 'act', inputTokens: 123_456, outputTokens: 7890, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 1.2345 });
  for (const [width, shown] of [[640, '12.3k / 200k'], [300, '12.3k / 200k'], [250, '12.3k']] as const) {
    it(`fits the header in ${width}px beside the usage while a turn runs (it shows ${shown})`, async () => {
      const page = await open([running, usage, context(12_345)], width);
      const bar = page.locator('#context');
      await bar.waitFor();
      const text = await bar.locator('.context-text span').evaluateAll((spans) => spans.filter((s) => getComputedStyle(s).display !== 'none').map((s) => s.textContent).join(''));
      assert.equal(text, shown);
      const controls = ['#mode', '#phase', '#busy', '#usage', '#context', '#cancel', '#history', '#new'];
      const boxes = [];
      for (const selector of controls) {
        const box = await page.locator(selector).boundingBox();
        assert.ok(box && box.width > 0 && box.x >= 0 && box.x + box.width <= width, `${selector} inside 0..${width}: ${JSON.stringify(box)}`);
        boxes.push({ selector, ...box });
      }
      for (const a of boxes) {
        for (const b of boxes) {
          const apart = a === b || a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
          assert.ok(apart, `${a.selector} and ${b.selector} overlap`);
        }
      }
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width, 'no horizontal scrolling');
      await page.close();
    });
  }
});
