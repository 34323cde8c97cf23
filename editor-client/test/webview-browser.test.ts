// The chat webview in headless Chromium: a browser_action's card shows the page's screenshot,
// asked of the extension by its id (image → modus/chat/image) and drawn when the bytes come; the
// card says the action, the page's title and address; a screenshot that cannot be had says why;
// a stored conversation shows the screenshot of its calls again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { HistoryMessage } from '../src/protocol/generated';
import type { Action } from '../src/protocol/view';
import { stateAction, toWebview, updateOf } from './actions';
import { feed, launch, openChat, posted } from './browser';

const conversationId = 'conv-browser';
const update = updateOf(conversationId);
const turnId = 'turn-1';

/** A PNG of one colour, in base64: what a screenshot's bytes look like to the webview. */
async function png(page: Page, width: number, height: number, color: string): Promise<string> {
  return page.evaluate(
    ({ width, height, color }) => {
      const canvas = document.createElement('canvas');
      canvas.width = width;
      canvas.height = height;
      const g = canvas.getContext('2d')!;
      g.fillStyle = color;
      g.fillRect(0, 0, width, height);
      return canvas.toDataURL('image/png').split(',')[1];
    },
    { width, height, color },
  );
}

function call(id: string, params: Record<string, unknown>, status: string, extra: Record<string, unknown> = {}): Action {
  return update({ kind: 'tool_call', agent: 'modus', turnId, toolCallId: id, name: 'browser_action', params, status, ...extra });
}

describe('chat webview: the browser card', () => {
  let browser: Browser;
  const open = async (actions: Action[]) => {
    const page = await openChat(browser, { width: 420, height: 900 });
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, stateAction(conversationId), ...actions]));
    return page;
  };

  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('shows the screenshot of each action in its card, fetched once by its id', async () => {
    const launchParams = { action: 'launch', url: 'http://127.0.0.1:8000/' };
    const page = await open([
      update({ kind: 'turn_started', agent: 'modus', turnId }),
      call('c1', launchParams, 'pending'),
      call('c1', launchParams, 'running'),
      update({ kind: 'browser', agent: 'modus', turnId, toolCallId: 'c1', action: 'launch', url: 'http://127.0.0.1:8000/', title: 'Start page', screenshotId: 'img-1', width: 900, height: 600 }),
      call('c1', launchParams, 'completed', { result: 'Launched the browser at http://127.0.0.1:8000/.\nTitle: Start page', images: [{ id: 'img-1', mimeType: 'image/png' }] }),
      call('c2', { action: 'click', coordinate: '150,70' }, 'running'),
      update({ kind: 'browser', agent: 'modus', turnId, toolCallId: 'c2', action: 'click', url: 'http://127.0.0.1:8000/', title: 'Clicked', screenshotId: 'img-2', width: 900, height: 600 }),
      call('c2', { action: 'click', coordinate: '150,70' }, 'completed', { result: 'Clicked at 150,70.' }),
    ]);
    const cards = page.locator('.card.tool[data-tool="browser_action"]');
    assert.equal(await cards.count(), 2);
    assert.deepEqual(await cards.locator('.tool-arg').allTextContents(), ['launch http://127.0.0.1:8000/', 'click 150,70']);
    // the webview asks the extension for each image once, and waits for the bytes
    const asked = (await posted(page)).filter((m) => m.type === 'fetchImage');
    assert.deepEqual(asked, [{ type: 'fetchImage', id: 'img-1' }, { type: 'fetchImage', id: 'img-2' }]);
    const first = cards.nth(0).locator('figure.screenshot img');
    assert.equal(await first.getAttribute('alt'), 'Screenshot of Start page');
    assert.ok(await first.evaluate((img) => img.classList.contains('loading')));
    assert.deepEqual(await cards.nth(0).locator('figcaption').evaluate((c) => [...c.children].map((s) => s.textContent)), [
      'Start page',
      'http://127.0.0.1:8000/',
    ]);
    // the bytes come: the image is drawn in place, scaled to the card
    const red = await png(page, 900, 600, '#c00');
    const blue = await png(page, 900, 600, '#00c');
    await feed(page, [
      { type: 'image', id: 'img-1', mimeType: 'image/png', data: red },
      { type: 'image', id: 'img-2', mimeType: 'image/png', data: blue },
    ]);
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('figure.screenshot img')].every((i) => i.complete && i.naturalWidth > 0));
    const drawn = await cards.locator('figure.screenshot img').evaluateAll((imgs) =>
      (imgs as HTMLImageElement[]).map((i) => ({ w: i.naturalWidth, h: i.naturalHeight, shown: i.getBoundingClientRect().width, loading: i.classList.contains('loading') })),
    );
    assert.deepEqual(drawn.map(({ w, h, loading }) => ({ w, h, loading })), [{ w: 900, h: 600, loading: false }, { w: 900, h: 600, loading: false }]);
    assert.ok(drawn.every((d) => d.shown > 100 && d.shown <= 420), JSON.stringify(drawn));
    // the card's colour is the image's: the blue one is the click's
    const pixel = await cards.nth(1).locator('figure.screenshot img').evaluate((img: HTMLImageElement) => {
      const c = document.createElement('canvas');
      c.width = 1;
      c.height = 1;
      const g = c.getContext('2d')!;
      g.drawImage(img, 0, 0, 1, 1);
      return [...g.getImageData(0, 0, 1, 1).data.slice(0, 3)];
    });
    assert.deepEqual(pixel, [0, 0, 204]);
    // drawn again (another update), nothing is asked again
    await feed(page, toWebview([update({ kind: 'turn_ended', agent: 'modus', turnId, outcome: 'completed' })]));
    assert.equal((await posted(page)).filter((m) => m.type === 'fetchImage').length, 2);
    assert.deepEqual(await page.evaluate(() => (window as any).__cspViolations), []);
  });

  it('says why a screenshot could not be shown, and takes no type but an image for a data URL', async () => {
    const page = await open([
      call('c1', { action: 'launch', url: 'http://localhost:3000/' }, 'running'),
      update({ kind: 'browser', agent: 'modus', turnId, toolCallId: 'c1', action: 'launch', url: 'http://localhost:3000/', title: '', screenshotId: 'gone' }),
      call('c2', { action: 'hover', coordinate: '1,1' }, 'running'),
      update({ kind: 'browser', agent: 'modus', turnId, toolCallId: 'c2', action: 'hover', url: 'http://localhost:3000/', title: 'x', screenshotId: 'html' }),
    ]);
    await feed(page, [
      { type: 'image', id: 'gone', error: 'Unknown image: gone' },
      { type: 'image', id: 'html', mimeType: 'text/html', data: 'PHNjcmlwdD4=' },
    ]);
    const imgs = page.locator('figure.screenshot img');
    assert.equal(await imgs.nth(0).getAttribute('title'), 'The image could not be shown: Unknown image: gone');
    assert.equal(await imgs.nth(0).getAttribute('alt'), 'Screenshot of http://localhost:3000/');
    assert.equal(await imgs.nth(1).getAttribute('title'), 'The image could not be shown: not an image (text/html)');
    assert.equal(await imgs.nth(1).getAttribute('src'), null);
  });

  it('shows the screenshots of a stored conversation again', async () => {
    const messages: HistoryMessage[] = [
      { id: 'm1', role: 'user', text: 'look at the page', metadata: {} },
      {
        id: 'm2',
        role: 'assistant',
        agent: 'modus',
        text: '',
        metadata: { turnId, toolCalls: [{ id: 'c1', name: 'browser_action', arguments: { action: 'launch', url: 'http://127.0.0.1:8000/' } }] },
      },
      {
        id: 'm3',
        role: 'tool',
        text: 'Launched the browser at http://127.0.0.1:8000/.',
        metadata: { toolCallId: 'c1', name: 'browser_action', images: [{ id: 'img-9', mimeType: 'image/png' }] },
      },
    ];
    const page = await open([{ type: 'history', conversationId, messages }]);
    const img = page.locator('.card.tool[data-tool="browser_action"] figure.screenshot img');
    await img.waitFor();
    assert.equal(await img.getAttribute('data-image-id'), 'img-9');
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'fetchImage'), [{ type: 'fetchImage', id: 'img-9' }]);
  });

  it("shows the images another tool's result carries (read_file of an image) as thumbnails, live and from the history", async () => {
    const live = await open([
      update({ kind: 'tool_call', agent: 'modus', turnId, toolCallId: 'r1', name: 'read_file', params: { path: 'shot.png' }, status: 'pending' }),
      update({
        kind: 'tool_call', agent: 'modus', turnId, toolCallId: 'r1', name: 'read_file', params: { path: 'shot.png' }, status: 'completed',
        result: 'shot.png is an image (2x1 pixels).', images: [{ id: 'img-r', mimeType: 'image/png' }],
      }),
    ]);
    const thumb = live.locator('.card.tool[data-tool="read_file"] .images img.thumb');
    await thumb.waitFor();
    assert.equal(await thumb.getAttribute('data-image-id'), 'img-r');
    assert.equal(await live.locator('.card.tool[data-tool="read_file"] figure.screenshot').count(), 0);
    const messages: HistoryMessage[] = [
      { id: 'm1', role: 'user', text: 'read it', metadata: {} },
      { id: 'm2', role: 'assistant', agent: 'modus', text: '', metadata: { turnId, toolCalls: [{ id: 'r2', name: 'read_file', arguments: { path: 'shot.png' } }] } },
      { id: 'm3', role: 'tool', text: 'shot.png is an image.', metadata: { toolCallId: 'r2', name: 'read_file', images: [{ id: 'img-s', mimeType: 'image/png' }] } },
    ];
    const stored = await open([{ type: 'history', conversationId, messages }]);
    const again = stored.locator('.card.tool[data-tool="read_file"] .images img.thumb');
    await again.waitFor();
    assert.equal(await again.getAttribute('data-image-id'), 'img-s');
  });
});
