// The chat webview in headless Chromium: the header's rules (the count, the list, a rule file
// opened) and the composer's /-completion of the slash commands (the keyboard, the hint).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { CommandInfo, RuleInfo } from '../src/protocol/generated';
import type { Action } from '../src/protocol/view';
import { completionRows, feed, launch, openChat, posted } from './browser';
import { stateAction, toWebview } from './actions';

const conversationId = 'conv-project';
const state = stateAction(conversationId);
const RULES: RuleInfo[] = [
  { path: 'AGENTS.md', format: 'agents', scope: 'always', active: true, tokens: 40 },
  { path: '.roo/rules-code/style.md', format: 'roo', scope: 'mode', modes: ['code'], active: true, tokens: 1200 },
  { path: '.modus/rules/python.md', format: 'modus', scope: 'paths', paths: ['src/**/*.py'], active: false, tokens: 9 },
  { path: '/home/me/.config/modus/rules/<b>me</b>.md', format: 'modus', scope: 'always', active: true, tokens: 3 },
];
const COMMANDS: CommandInfo[] = [
  { name: 'review', description: 'Review the <i>changes</i>', argumentHint: '<file>', source: 'workspace', path: '.claude/commands/review.md' },
  { name: 'release', source: 'global', path: '/home/me/.config/modus/commands/release.md' },
  { name: 'git:commit', description: 'Commit the staged changes', source: 'workspace', path: '.modus/commands/git/commit.md' },
];

describe('chat webview: the rules in the header and the /-completion of the commands', () => {
  let browser: Browser;
  const open = async (actions: Action[] = [], width = 420) => {
    const page = await openChat(browser, { width, height: 700 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, state, ...actions]));
    return page;
  };
  const rows = completionRows;

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('the header counts the rules that apply now; hidden without rule files', async () => {
    const page = await open();
    const count = page.locator('#rules');
    assert.equal(await count.isVisible(), false);
    await feed(page, toWebview([{ type: 'rules', rules: [] }]));
    assert.equal(await count.isVisible(), false, 'no rule file: nothing to tell');
    await feed(page, toWebview([{ type: 'rules', rules: RULES }]));
    assert.equal(await count.textContent(), '3 rules');
    assert.equal(await count.getAttribute('title'), '3 of 4 rules apply now: show the rule files');
    assert.equal(await count.getAttribute('aria-expanded'), 'false');
    await feed(page, toWebview([{ type: 'rules', rules: RULES.map((r) => ({ ...r, active: true })) }]));
    assert.equal(await count.textContent(), '4 rules', 'a conditional rule woke');
    await page.close();
  });

  it('a click lists every rule file, those that do not apply now marked, as text; a click on one opens it; Escape closes', async () => {
    const page = await open([{ type: 'rules', rules: RULES }]);
    const count = page.getByRole('button', { name: '3 of 4 rules apply now: show the rule files' });
    await count.click();
    const panel = page.getByRole('region', { name: 'Rules' });
    await panel.waitFor();
    assert.equal(await count.getAttribute('aria-expanded'), 'true');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'listRules'), [{ type: 'listRules' }], 'asked afresh');
    assert.equal(await panel.locator('.rules-title').textContent(), '3 of 4 rules apply now');
    const items = await panel.locator('.rule').evaluateAll((lis) =>
      lis.map((li) => `${li.classList.contains('inactive') ? '(off) ' : ''}${[...li.querySelector('button')!.children].map((c) => c.textContent).join(' | ')}`),
    );
    assert.deepEqual(items, [
      'AGENTS.md | always · agents · 40 tokens',
      '.roo/rules-code/style.md | in mode code · roo · 1,200 tokens',
      '(off) .modus/rules/python.md | not now | once the conversation touches src/**/*.py · modus · 9 tokens',
      '/home/me/.config/modus/rules/<b>me</b>.md | always · modus · 3 tokens',
    ]);
    assert.equal(await panel.locator('b').count(), 0, 'paths are text');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.startsWith('AGENTS.md')), true, 'the focus on the first file');
    const off = panel.getByRole('button', { name: /^\.modus\/rules\/python\.md, does not apply now/ });
    assert.equal(await off.count(), 1);

    await page.keyboard.press('Escape');
    assert.equal(await panel.isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'rules', 'the focus back on the count');

    await count.click();
    await panel.getByRole('button', { name: /^\.modus\/rules\/python\.md/ }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'openRule'), [{ type: 'openRule', path: '.modus/rules/python.md' }]);
    assert.equal(await panel.isVisible(), false, 'closed once a file opens');

    await count.click();
    await panel.waitFor();
    await page.locator('#log').click({ position: { x: 5, y: 300 } });
    assert.equal(await panel.isVisible(), false, 'a click elsewhere closes it');
    await page.close();
  });

  for (const width of [250, 300, 640]) {
    it(`fits the header in ${width}px with the rules count while a turn runs`, async () => {
      const running: Action = { type: 'update', update: { conversationId, kind: 'turn_started', turnId: 't9', agent: 'modus' } };
      const page = await open([{ type: 'rules', rules: RULES }, running], width);
      const controls = ['#mode', '#phase', '#busy', '#rules', '#cancel', '#history', '#new'];
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
      await page.locator('#rules').click();
      const panel = await page.locator('#rules-panel').boundingBox();
      assert.ok(panel && panel.x >= 0 && panel.x + panel.width <= width, `the list inside 0..${width}: ${JSON.stringify(panel)}`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width, 'no horizontal scrolling');
      await page.close();
    });
  }

  it('asks for the commands on focus; / at the start opens them with hint and description, typing filters, the arrows and Enter pick', async () => {
    const page = await open();
    const input = page.locator('#input');
    const list = page.getByRole('listbox', { name: 'Commands' });
    await input.focus();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'listCommands'), [{ type: 'listCommands' }]);
    await feed(page, toWebview([{ type: 'commands', commands: COMMANDS }]));
    await page.keyboard.type('/');
    await list.waitFor();
    assert.deepEqual(await rows(page), ['/review | <file> | Review the <i>changes</i> *', '/release | ', '/git:commit | Commit the staged changes']);
    assert.equal(await list.locator('i').count(), 0, 'descriptions are text');
    assert.equal(await input.getAttribute('aria-activedescendant'), 'command-0');
    assert.equal(await page.locator('#command-0').getAttribute('aria-label'), '/review, <file>, Review the <i>changes</i>');

    await page.keyboard.type('re');
    assert.deepEqual(await rows(page), ['/review | <file> | Review the <i>changes</i> *', '/release | ']);
    await page.keyboard.press('ArrowDown');
    assert.deepEqual(await rows(page), ['/review | <file> | Review the <i>changes</i>', '/release |  *']);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    assert.equal(await list.isVisible(), false);
    assert.equal(await input.inputValue(), '/review ');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'send'), [], 'Enter picked, it did not send');

    // the hint stays above the box while the arguments are typed; the box is described by it
    const hint = page.locator('#command-hint');
    assert.equal(await hint.textContent(), '/review <file> — Review the <i>changes</i>');
    assert.equal(await input.getAttribute('aria-describedby'), 'command-hint');
    await page.keyboard.type('src/app.py');
    assert.equal(await hint.isVisible(), true);
    await page.keyboard.press('Enter');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'send'), [{ type: 'send', text: '/review src/app.py' }]);
    assert.equal(await hint.isVisible(), false, 'gone with the text');
    assert.equal(await input.getAttribute('aria-describedby'), null);
    await page.close();
  });

  it('Escape closes the commands (they stay closed in that name), Tab and a click pick, / elsewhere or a path opens nothing; @ still completes agents', async () => {
    const page = await open([
      { type: 'commands', commands: COMMANDS },
      { type: 'agents', agents: { agents: [{ name: 'architect', topLevel: true, mode: 'architect', source: 'workspace' }], members: [] } },
    ]);
    const input = page.locator('#input');
    const list = page.locator('#mentions');
    await input.focus();
    await page.keyboard.type('/co');
    await list.waitFor();
    assert.deepEqual(await rows(page), ['/git:commit | Commit the staged changes *']);
    await page.keyboard.press('Escape');
    assert.equal(await list.isVisible(), false);
    await page.keyboard.type('m');
    assert.equal(await list.isVisible(), false, 'still closed while typing the same name');

    await input.fill('');
    await page.keyboard.type('/git');
    await page.keyboard.press('Tab');
    assert.equal(await input.inputValue(), '/git:commit ');
    assert.equal(await page.locator('#command-hint').textContent(), '/git:commit — Commit the staged changes');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'input', 'Tab picked; the focus stays');

    await input.fill('');
    await page.keyboard.type('/');
    await list.getByRole('option', { name: /^\/release/ }).click();
    assert.equal(await input.inputValue(), '/release ');
    assert.equal(await page.locator('#command-hint').textContent(), '/release');

    await input.fill('');
    await page.keyboard.type('see /re');
    assert.equal(await list.isVisible(), false, 'not at the start');
    await input.fill('');
    await page.keyboard.type('/usr/bin');
    assert.equal(await list.isVisible(), false, 'a path');
    await page.keyboard.type(' for @');
    await page.getByRole('listbox', { name: 'Agents and members' }).waitFor();
    assert.equal(await input.getAttribute('aria-activedescendant'), 'mention-0');
    await page.close();
  });
});
