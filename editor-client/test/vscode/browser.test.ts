// The agent's browser in a real VS Code (code-server 4.139, its Node extension host), driven from
// headless Chromium as a user would: the scripted model opens a page this test serves on
// 127.0.0.1 (browser_action launch: approved in its card), clicks its button; each card shows the
// page's screenshot, fetched by the extension with modus/chat/image: the click's shows the page
// as the click left it (the button's colour changed), its caption the new title.
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
// MODUS_BROWSER_SCREENSHOT=docs/browser.png saves the chat with the cards.
import assert from 'node:assert/strict';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe } from 'node:test';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const PAGE = `<!doctype html><html><head><title>Before</title><style>
body { margin: 0; font: 24px sans-serif; background: #fff; }
button { position: absolute; left: 0; top: 0; width: 900px; height: 600px; border: 0; background: rgb(200, 0, 0); color: #fff; font-size: 48px; }
</style></head><body><button onclick="this.style.background='rgb(0, 0, 200)'; this.textContent='Clicked'; document.title='After'; console.log('clicked')">Click me</button></body></html>`;

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_BROWSER_SCREENSHOT;

describe("The agent's browser in a real VS Code (code-server)", { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;
  let site: Server;
  let url = '';
  const hits: string[] = [];

  before(async () => {
    site = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(PAGE);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    const call = (args: Record<string, unknown>) => ({ toolCalls: [{ name: 'browser_action', arguments: args }] });
    const script = {
      turns: [call({ action: 'launch', url }), call({ action: 'click', coordinate: '450,300' }), call({ action: 'close' }), { text: 'The button turned blue.' }],
    };
    wb = await scriptedWorkbench({ codeServerDir: codeServerDir!, vsix: vsix!, script });
  });
  after(async () => {
    await wb?.stop();
    site?.close();
  });
  const step = steps(() => wb);
  const cards = () => wb.chat.locator('.card.tool[data-tool="browser_action"]');

  step('launch asks in its card; approved, the page opens and its screenshot shows in the card', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    await wb.showChat();
    if (screenshot) {
      const sidebar = (await wb.chatElement.boundingBox())!;
      await wb.page.mouse.move(sidebar.x + sidebar.width + 2, sidebar.y + sidebar.height / 2);
      await wb.page.mouse.down();
      await wb.page.mouse.move(sidebar.x + sidebar.width + 160, sidebar.y + sidebar.height / 2, { steps: 5 });
      await wb.page.mouse.up();
    }
    await wb.send('Click the button on my page');
    const approval = cards().first().locator('[data-approval]');
    await approval.locator('button.approve').waitFor({ timeout: 30_000 });
    assert.match((await approval.textContent()) ?? '', new RegExp(`Open ${url.replace(/[.]/g, '\\.')} in a headless browser\\?`));
    await approval.locator('button.approve').click();
    const first = cards().first().locator('figure.screenshot img');
    await first.and(wb.chat.locator('img:not(.loading)')).waitFor({ timeout: 60_000 });
    assert.equal(await first.getAttribute('alt'), 'Screenshot of Before');
    assert.deepEqual(await cards().first().locator('figcaption span').allTextContents(), ['Before', url]);
  });

  step("the click's card shows the page as the click left it; close ends it", async () => {
    await wb.chat.locator('.msg.assistant .text', { hasText: 'The button turned blue.' }).waitFor({ timeout: 60_000 });
    assert.deepEqual(await cards().locator('.tool-arg').allTextContents(), [`launch ${url}`, 'click 450,300', 'close']);
    assert.deepEqual(await cards().locator('.status').allTextContents(), ['done', 'done', 'done']);
    const shots = cards().locator('figure.screenshot img');
    assert.equal(await shots.count(), 2, 'launch and click have a screenshot, close none');
    await wb.chat.locator('figure.screenshot img.loading').waitFor({ state: 'detached' });
    // each a PNG of the viewport (900x600), drawn: the launch's red, the click's blue
    const drawn = await shots.evaluateAll((imgs) =>
      (imgs as HTMLImageElement[]).map((img) => {
        const c = document.createElement('canvas');
        c.width = img.naturalWidth;
        c.height = img.naturalHeight;
        const g = c.getContext('2d')!;
        g.drawImage(img, 0, 0);
        // a pixel of the button, away from its text
        return { size: `${img.naturalWidth}x${img.naturalHeight}`, rgb: [...g.getImageData(20, 20, 1, 1).data.slice(0, 3)], src: img.src.slice(0, 22) };
      }),
    );
    assert.deepEqual(drawn, [
      { size: '900x600', rgb: [200, 0, 0], src: 'data:image/png;base64,' },
      { size: '900x600', rgb: [0, 0, 200], src: 'data:image/png;base64,' },
    ]);
    assert.deepEqual(await cards().nth(1).locator('figcaption span').allTextContents(), ['After', url]);
    await cards().nth(1).locator('details.result summary').click();
    assert.match((await cards().nth(1).locator('details.result pre').textContent()) ?? '', /Title: After\n[^]*\[log\] clicked/);
    assert.deepEqual(hits, ['/']);
    if (screenshot) await wb.page.screenshot({ path: screenshot });
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
