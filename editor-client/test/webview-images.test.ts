// Images in the chat webview, in headless Chromium: a PNG pasted (and one dropped) into the
// composer shows as a thumbnail with a remove ×; Send posts the images with the text; a user
// message's stored images show as thumbnails, their bytes asked for once and shown when they
// come; a click on one asks to open it full size.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { feed, launch, openChat, posted } from './browser';
import { stateAction, toWebview, updateOf } from './actions';

const conversationId = 'conv-images';
const up = updateOf(conversationId);

// a 1×1 PNG
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** Pastes (or drops) files of these base64 contents into the composer, as the clipboard would. */
async function give(page: Page, how: 'paste' | 'drop', files: { name: string; type: string; data: string }[]) {
  await page.evaluate(
    ({ how, files }) => {
      const dt = new DataTransfer();
      for (const f of files) {
        const bytes = Uint8Array.from(atob(f.data), (ch) => ch.charCodeAt(0));
        dt.items.add(new File([bytes], f.name, { type: f.type }));
      }
      const input = document.getElementById('input')!;
      const event =
        how === 'paste'
          ? new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true })
          : new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
      input.dispatchEvent(event);
    },
    { how, files },
  );
}

describe('images in the chat webview (headless Chromium)', () => {
  let browser: Browser;
  let page: Page;

  before(async () => {
    browser = await launch();
    page = await openChat(browser);
    await feed(page, toWebview([{ type: 'server', server: { status: 'running' } }, stateAction(conversationId)]));
  });
  after(async () => {
    await browser?.close();
  });

  it('paste and drop put thumbnails in the composer; × removes one; Send posts the images with the text', async () => {
    await give(page, 'paste', [{ name: 'shot.png', type: 'image/png', data: PNG }]);
    await page.locator('#attachments .attachment img.thumb').first().waitFor();
    await give(page, 'drop', [{ name: 'other.png', type: 'image/png', data: PNG }, { name: 'notes.txt', type: 'text/plain', data: 'aGk=' }]);
    await page.locator('#attachments .attachment').nth(1).waitFor();
    await give(page, 'paste', [{ name: 'third.png', type: 'image/png', data: PNG }]);
    await page.locator('#attachments .attachment').nth(2).waitFor();
    assert.equal(await page.locator('#attachments .attachment img.thumb').first().getAttribute('src'), `data:image/png;base64,${PNG}`);
    await page.locator('#attachments .attachment').nth(1).locator('button.remove').click();
    assert.deepEqual(await page.locator('#attachments .attachment img').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).alt)), ['shot.png', 'third.png']);
    await page.locator('#input').fill('what is wrong here?');
    await page.locator('#input').press('Enter');
    const sent = (await posted(page)).filter((m) => m.type === 'send');
    assert.deepEqual(sent, [{ type: 'send', text: 'what is wrong here?', images: [{ mimeType: 'image/png', data: PNG }, { mimeType: 'image/png', data: PNG }] }]);
    assert.equal(await page.locator('#attachments').isHidden(), true, 'the composer is empty again');
  });

  it('an image alone is sent too; a type the server does not take is said, not sent', async () => {
    await give(page, 'paste', [{ name: 'anim.bmp', type: 'image/bmp', data: 'Qk0=' }]);
    await page.locator('#attachments .attachment-note', { hasText: 'only PNG, JPEG, WebP and GIF images' }).waitFor();
    await give(page, 'paste', [{ name: 'only.png', type: 'image/png', data: PNG }]);
    await page.locator('#attachments .attachment img.thumb').waitFor();
    await page.locator('#send').click();
    const sent = (await posted(page)).filter((m) => m.type === 'send');
    assert.deepEqual(sent.at(-1), { type: 'send', text: '', images: [{ mimeType: 'image/png', data: PNG }] });
  });

  it("a user message's images show as thumbnails, fetched once; a click asks to open one", async () => {
    const images = [{ id: 'img-aaa', mimeType: 'image/png' }];
    await feed(page, toWebview([up({ kind: 'message', role: 'user', text: 'look', messageId: 'msg-1', images })]));
    const thumb = page.locator('.msg.user .images img.thumb[data-image-id="img-aaa"]');
    await thumb.waitFor();
    await feed(page, toWebview([up({ kind: 'message', role: 'user', text: 'again', messageId: 'msg-2', images })]));
    await page.locator('.msg.user .images img.thumb').nth(1).waitFor();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'fetchImage'), [{ type: 'fetchImage', id: 'img-aaa' }]);
    await feed(page, [{ type: 'image', id: 'img-aaa', mimeType: 'image/png', data: PNG }]);
    assert.deepEqual(
      await page.locator('.msg.user .images img.thumb').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).src)),
      [`data:image/png;base64,${PNG}`, `data:image/png;base64,${PNG}`],
    );
    await thumb.first().click();
    assert.deepEqual((await posted(page)).filter((m) => m.type === 'openImage'), [{ type: 'openImage', id: 'img-aaa' }]);
    assert.deepEqual(await page.evaluate(() => (window as any).__cspViolations), []);
  });
});
