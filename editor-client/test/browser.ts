// Opens the chat webview in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core), served from a fake origin with the same HTML and CSP as in VS Code, with
// `acquireVsCodeApi` stubbed to record what the webview posts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Browser, chromium, Page } from 'playwright-core';
import type { Action } from '../src/protocol/view';
import { chatHtml, makeNonce } from '../src/webview/html';
import { toWebview } from './actions';

export const CLIENT_DIR = join(__dirname, '..', '..');
const ORIGIN = 'https://modus.test';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

const FILES: Record<string, [string, string]> = {
  '/dist/webview.js': ['dist/webview.js', 'text/javascript'],
  '/media/webview.css': ['media/webview.css', 'text/css'],
  '/theme.css': ['test/fixtures/vscode-dark.css', 'text/css'],
};

/**
 * `beforeScript`: run when the page asks for the webview's script, before it is served (the page
 * drawn up to its script tag, as a slow webview would show it).
 */
export async function openChat(browser: Browser, size = { width: 420, height: 900 }, beforeScript?: (page: Page) => Promise<void>): Promise<Page> {
  const page = await browser.newPage({ viewport: size, deviceScaleFactor: 1 });
  const html = chatHtml({
    cspSource: ORIGIN,
    nonce: makeNonce(),
    scriptUri: `${ORIGIN}/dist/webview.js`,
    styleUri: `${ORIGIN}/media/webview.css`,
  }).replace('<link rel="stylesheet"', `<link rel="stylesheet" href="${ORIGIN}/theme.css">\n<link rel="stylesheet"`);
  await page.route(`${ORIGIN}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === '/index.html') return route.fulfill({ body: html, contentType: 'text/html' });
    const file = FILES[path];
    if (!file) return route.fulfill({ status: 404, body: 'not found' });
    if (path === '/dist/webview.js') await beforeScript?.(page);
    return route.fulfill({ body: readFileSync(join(CLIENT_DIR, file[0])), contentType: file[1] });
  });
  await page.addInitScript(() => {
    const w = window as any;
    w.__posted = [];
    w.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.__cspViolations.push(e.violatedDirective));
    w.acquireVsCodeApi = () => ({
      postMessage: (m: unknown) => w.__posted.push(m),
      getState: () => undefined,
      setState: () => undefined,
    });
  });
  await page.goto(`${ORIGIN}/index.html`);
  await page.waitForFunction(() => (window as any).__posted.some((m: any) => m.type === 'ready'));
  return page;
}

/** Posts extension -> webview messages, as VS Code would, and waits for them to be drawn (the next frame). */
export async function feed(page: Page, messages: unknown[]): Promise<void> {
  await page.evaluate((ms) => {
    for (const m of ms) window.postMessage(m, '*');
  }, messages);
  await page.evaluate(() => new Promise((r) => setTimeout(() => requestAnimationFrame(() => setTimeout(r, 0)), 0)));
}

/** The rows of the composer's completion (@ or /): each row's parts joined by ` | `, ` *` on the selected one. */
export function completionRows(page: Page): Promise<string[]> {
  return page.locator('#mentions [role="option"]').evaluateAll((items) =>
    items.map((o) => `${[...o.children].map((c) => c.textContent).join(' | ')}${o.getAttribute('aria-selected') === 'true' ? ' *' : ''}`),
  );
}

export function posted(page: Page): Promise<any[]> {
  return page.evaluate(() => (window as any).__posted);
}

/**
 * A describe block's headless Chromium (launched before its tests, closed after them), and how
 * its tests open the chat: a running server, then `actions`.
 */
export function chatPages(size = { width: 420, height: 600 }): (actions: Action[], pageSize?: { width: number; height: number }) => Promise<Page> {
  let browser: Browser | undefined;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });
  return async (actions, pageSize = size) => {
    const page = await openChat(browser!, pageSize);
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, ...actions]));
    return page;
  };
}
