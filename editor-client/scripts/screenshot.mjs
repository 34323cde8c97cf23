// Renders the chat webview in headless Chromium from the recorded session
// (test/fixtures/session.json) and saves docs/sidebar.png. Needs `npm run build && npm run compile-tests`.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientDir } from './python.mjs';

const require = createRequire(import.meta.url);
const { launch, openChat, feed } = require(join(clientDir, 'out', 'test', 'browser.js'));

const out = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? join(clientDir, 'docs', 'sidebar.png');
const session = JSON.parse(readFileSync(join(clientDir, 'test', 'fixtures', 'session.json'), 'utf8'));
const browser = await launch();
try {
  const page = await openChat(browser, { width: 440, height: 1000 });
  // The moment the last approval was asked: everything before it, the card still pending.
  const actions = session.actions;
  const lastAnswer = actions.map((a) => a.type).lastIndexOf('approvalAnswered');
  const shown = process.argv.includes('--all') || lastAnswer < 0 ? actions : actions.slice(0, lastAnswer);
  await feed(page, [{ type: 'actions', actions: shown }]);
  await page.waitForTimeout(200);
  // grow the viewport until the whole transcript fits (the log is the scrolling element)
  const overflow = await page.evaluate(() => {
    const log = document.getElementById('log');
    return log.scrollHeight - log.clientHeight;
  });
  if (overflow > 0) {
    await page.setViewportSize({ width: 440, height: 1000 + overflow });
    await page.waitForTimeout(100);
  }
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
}
