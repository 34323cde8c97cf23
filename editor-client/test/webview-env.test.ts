// The chat webview in headless Chromium while Modus's own environment is not ready: the offer in
// place of the composer (Set up Modus), the set-up under way (the step, pip's current line), a
// failed install (pip's last lines as text, Retry, Show Log), no Python 3.11+ (Download Python);
// then the environment ready: the card goes, the composer is back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Action, EnvView } from '../src/protocol/view';
import { feed, launch, openChat, posted } from './browser';
import { toWebview } from './actions';

const env = (e: Partial<EnvView> & Pick<EnvView, 'state'>): Action => ({ type: 'env', env: { version: '0.1.0', offline: false, python: 'python3', ...e } });

describe('chat webview: Set up Modus', () => {
  let browser: Browser;
  let page: Page;
  const card = () => page.locator('#env');
  const buttons = () => card().locator('button:visible').allTextContents();

  before(async () => {
    browser = await launch();
    page = await openChat(browser, { width: 360, height: 700 });
  });
  after(async () => {
    await browser?.close();
  });

  it('offers Set up Modus in place of the composer; a click asks the extension', async () => {
    await feed(page, toWebview([env({ state: 'offer' })]));
    await card().waitFor();
    assert.equal(await card().locator('.env-title').textContent(), 'Set up Modus');
    assert.match((await card().locator('.env-note').textContent()) ?? '', /creates it with python3 .* installs Modus 0\.1\.0 into it, its dependencies from your package index/);
    assert.deepEqual(await buttons(), ['Set up Modus', 'Open Setting']);
    assert.equal(await page.locator('#composer').isVisible(), false);
    assert.equal(await page.locator('#starting').isVisible(), false);
    await card().locator('button', { hasText: 'Set up Modus' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'fixEnv'), [{ type: 'fixEnv', fix: 'setUp' }]);
    await feed(page, toWebview([env({ state: 'offer', offline: true })]));
    assert.match((await card().locator('.env-note').textContent()) ?? '', /from the wheels this extension carries \(no network needed\)/);
  });

  it("tells what it is doing and pip's current line", async () => {
    await feed(page, toWebview([env({ state: 'running', step: 'Installing Modus 0.1.0 and its dependencies…', line: 'Collecting pygls[ws]<3,>=2.1' })]));
    assert.equal(await card().locator('.env-title').textContent(), 'Setting up Modus 0.1.0…');
    assert.equal(await card().getByRole('status').textContent(), 'Installing Modus 0.1.0 and its dependencies…');
    assert.equal(await card().locator('.env-line').textContent(), 'Collecting pygls[ws]<3,>=2.1');
    assert.deepEqual(await buttons(), ['Cancel', 'Show Log']);
    await card().getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'fixEnv').at(-1), { type: 'fixEnv', fix: 'cancel' });
    await feed(page, toWebview([env({ state: 'running', upgradeFrom: '0.0.9', step: 'Upgrading Modus 0.0.9 to 0.1.0…' })]));
    assert.equal(await card().locator('.env-title').textContent(), 'Upgrading Modus to 0.1.0…');
    assert.equal(await card().locator('.env-line').isVisible(), false);
  });

  it("a failed install: pip's own words, as text, with Retry and Show Log", async () => {
    const lines = ['ERROR: Could not find a version that satisfies the requirement pygls[ws]<3,>=2.1 (from modus) (from versions: none)', 'ERROR: No matching distribution found for <b>pygls</b>'];
    await feed(page, toWebview([env({ state: 'failed', error: 'pip could not install Modus 0.1.0 (exit code 1)', lines })]));
    assert.equal(await card().locator('.env-title').textContent(), 'Modus could not be set up.');
    assert.equal(await card().locator('.env-lines').textContent(), lines.join('\n'));
    assert.equal(await card().locator('.env-lines b').count(), 0, 'text, not HTML');
    assert.deepEqual(await buttons(), ['Retry', 'Show Log']);
    await card().locator('button', { hasText: 'Show Log' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'fixEnv').pop(), { type: 'fixEnv', fix: 'showLog' });
  });

  it('no Python 3.11+: says what was found, and the download page', async () => {
    await feed(page, toWebview([env({ state: 'noPython', error: 'Modus needs Python 3.11 or newer; python3 is Python 3.9' })]));
    assert.equal(await card().locator('.env-title').textContent(), 'Modus needs Python 3.11 or newer.');
    assert.match((await card().locator('.env-note').textContent()) ?? '', /python3 is Python 3\.9\. Install Python 3\.11 or newer from python\.org/);
    assert.deepEqual(await buttons(), ['Download Python', 'Select Interpreter', 'Retry']);
    await card().locator('button', { hasText: 'Download Python' }).click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'fixEnv').pop(), { type: 'fixEnv', fix: 'download' });
  });

  it('ready: the card goes, the composer is back', async () => {
    await feed(page, toWebview([{ type: 'env', env: null }, { type: 'server', server: { status: 'running' } }]));
    assert.equal(await card().isVisible(), false);
    assert.equal(await page.locator('#composer').isVisible(), true);
  });
});
