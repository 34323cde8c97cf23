// Several agents in a real VS Code (code-server 4.139, its Node extension host), driven from
// headless Chromium as a user would: the workspace's .modus/agents.yaml holds two scripted
// agents; @ in the sidebar's composer lists them, one is picked, the message goes out; the
// architect's answer names @coder, who is woken and answers in a block of its own ("woken by
// architect") and names @architect back, which the server refuses ("already in this chain": one
// muted line). Then both at once ("@architect @coder …"): two blocks streaming side by side, each
// its own text. A changed agents file shows up in the completion without a reload, and a reload
// shows the conversation again from the history.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// MODUS_AGENTS_SCREENSHOT=docs/agents.png saves the workbench with the two agents' conversation.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { modusPython } from '../server';
import { QUIET_SETTINGS, steps, Workbench } from './workbench';

const AGENTS = `agents:
  - name: architect
    mode: architect
    model: {provider: scripted, script: architect.yaml}
  - name: coder
    topLevel: false
    model: {provider: scripted, script: coder.yaml}
`;
const DESIGN = 'The cache: an LRU of 1,000 entries in front of the store, keyed by path. @coder, please build it.';
const READING = 'Reading the store first.';
const BUILT = 'Built the LRU in cache.py, 1,000 entries. @architect, have a look.';
const REVIEWED = 'Reviewed: the keys want a size bound too. @coder, note it.';
const TESTED = 'Reviewed: the tests pass, the hit rate is logged.';
const ARCHITECT = { turns: [{ text: DESIGN }, { text: REVIEWED }] };
const CODER = {
  turns: [{ text: READING, toolCalls: [{ name: 'read_file', arguments: { path: 'store.py' } }] }, { text: BUILT }, { text: TESTED }],
};
const REFUSED = 'Mentions not delivered: @architect (already in this chain).';
/** the user started both: the architect may not wake the coder */
const REFUSED_CODER = 'Mentions not delivered: @coder (already in this chain).';

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_AGENTS_SCREENSHOT;

describe('several agents in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;

  before(async () => {
    wb = new Workbench({
      codeServerDir: codeServerDir!,
      vsix: vsix!,
      files: {
        '.modus/agents.yaml': AGENTS,
        'architect.yaml': JSON.stringify(ARCHITECT),
        'coder.yaml': JSON.stringify(CODER),
        'store.py': 'def get(path):\n    return open(path).read()\n',
      },
    });
    wb.writeSettings({ ...QUIET_SETTINGS, 'modus.pythonPath': modusPython() });
    await wb.start();
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);

  const chat = () => wb.chat;
  const input = () => wb.chat.locator('#input');
  const list = () => wb.chat.locator('#mentions');
  /** the completion's rows: name | kind | mode (* the active one) */
  const rows = () =>
    list()
      .locator('[role="option"]')
      .evaluateAll((items) =>
        items.map((o) => `${[...o.children].map((c) => c.textContent).join(' | ')}${o.getAttribute('aria-selected') === 'true' ? ' *' : ''}`),
      );
  /** the turn blocks of the log: agent (woken by …): its messages */
  const blocks = () =>
    chat()
      .locator('#log > .turn')
      .evaluateAll((turns) =>
        turns.map((t) => `${t.querySelector('.turn-head')!.textContent} | ${[...t.querySelectorAll('.msg')].map((m) => (m.querySelector('.text') ?? m).textContent).join(' | ')}`),
      );

  step('@ in the sidebar composer lists both agents with their kind and mode; the keyboard picks one', async () => {
    await wb.modeStatus.filter({ hasText: 'Architect' }).waitFor({ timeout: 30_000 }); // the server is up: the first top-level agent's mode
    await wb.showChat();
    await input().click();
    await wb.page.keyboard.type('@');
    await list().waitFor();
    assert.deepEqual(await rows(), ['architect | top-level | Architect *', 'coder | subordinate | Code']);
    assert.equal(await list().getAttribute('role'), 'listbox');
    assert.equal(await input().getAttribute('aria-activedescendant'), 'mention-0');
    await wb.page.keyboard.press('ArrowDown');
    assert.deepEqual(await rows(), ['architect | top-level | Architect', 'coder | subordinate | Code *']);
    await wb.page.keyboard.press('ArrowUp');
    await wb.page.keyboard.press('Enter');
    await list().waitFor({ state: 'hidden' });
    assert.equal(await input().inputValue(), '@architect ');
  });

  step('"@architect design the cache": the architect answers and wakes the coder, in two blocks; the refused mention is one muted line', async () => {
    await wb.page.keyboard.type('design the cache');
    await wb.page.keyboard.press('Enter');
    await chat().locator('.msg.user', { hasText: '@architect design the cache' }).waitFor();
    const refused = chat().locator('.turn[data-agent="coder"] .msg.system.mentions-refused');
    await refused.waitFor({ timeout: 30_000 });
    assert.equal(await refused.textContent(), REFUSED);
    assert.equal(await chat().locator('.mentions-refused').count(), 1);
    assert.equal(await refused.evaluate((e) => getComputedStyle(e).fontStyle), 'normal');
    assert.deepEqual(await blocks(), [`architect | ${DESIGN}`, `coderwoken by architect | ${READING} | ${BUILT} | ${REFUSED}`]);
    const coder = chat().locator('.turn[data-agent="coder"]');
    assert.equal(await coder.locator('.woken-by').textContent(), 'woken by architect');
    assert.equal(await coder.locator('.card.tool[data-tool="read_file"] .status').textContent(), 'done', "the coder's tool card is in its block");
    await chat().locator('#busy').waitFor({ state: 'hidden' }); // both turns ended
    if (screenshot) {
      // the completion open on a follow-up, over the end of the conversation
      await input().click();
      await wb.page.keyboard.type('Thanks, @');
      await list().waitFor();
      await wb.page.screenshot({ path: screenshot });
      await wb.page.keyboard.press('Escape');
      await input().fill('');
    }
    assert.deepEqual(wb.extensionErrors(), []);
  });

  step('"@architect @coder review the cache": both at once, each in its own block', async () => {
    await input().fill('@architect @coder review the cache');
    await input().press('Enter');
    await chat().locator('#log > .turn').nth(3).waitFor();
    await chat().locator('.mentions-refused', { hasText: '@coder' }).waitFor({ timeout: 30_000 });
    await chat().locator('#busy').waitFor({ state: 'hidden' });
    const shown = await blocks();
    assert.equal(shown.length, 4);
    // which of the two speaks first is up to them
    assert.deepEqual(shown.slice(2).sort(), [`architect | ${REVIEWED} | ${REFUSED_CODER}`, `coder | ${TESTED}`]);
  });

  step('a changed agents file shows up in the completion when the composer is focused again, without a reload', async () => {
    writeFileSync(
      join(wb.workspace, '.modus', 'agents.yaml'),
      `${AGENTS}  - name: reviewer\n    topLevel: false\n    mode: ask\n`,
    );
    await chat().locator('#log').click(); // away from the composer
    await input().click();
    await wb.page.keyboard.type('@');
    await list().locator('[role="option"]', { hasText: 'reviewer' }).waitFor();
    assert.deepEqual(await rows(), ['architect | top-level | Architect *', 'coder | subordinate | Code', 'reviewer | subordinate | Ask']);
    await wb.page.keyboard.type('r');
    assert.deepEqual(await rows(), ['reviewer | subordinate | Ask *']);
    await list().locator('[role="option"]').click();
    assert.equal(await input().inputValue(), '@reviewer ');
    await input().fill('');
  });

  step('after a reload the conversation comes back from the history as it was: the typed message, a block per turn, who woke it, the muted line', async () => {
    await wb.open();
    await wb.showChat();
    await chat().locator('.msg.user', { hasText: '@architect design the cache' }).waitFor({ timeout: 30_000 });
    await chat().locator('.mentions-refused').nth(1).waitFor();
    // the history names each message's turn and who woke it
    const shown = await blocks();
    assert.deepEqual(shown.slice(0, 2), [`architect | ${DESIGN}`, `coderwoken by architect | ${READING} | ${BUILT} | ${REFUSED}`]);
    assert.equal(await chat().locator('.turn[data-agent="coder"] .woken-by').first().textContent(), 'woken by architect');
    assert.deepEqual(shown.slice(2).sort(), [`architect | ${REVIEWED} | ${REFUSED_CODER}`, `coder | ${TESTED}`]);
    assert.equal(await chat().locator('.turn[data-agent="coder"] .card.tool[data-tool="read_file"]').count(), 1);
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
