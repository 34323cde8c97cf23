// Images in a real VS Code (code-server 4.139, its Node extension host), driven from headless
// Chromium: a PNG pasted into the chat's composer shows as a thumbnail, goes with the message to
// the model (the scripted model's turn expects exactly one image, else the turn fails), shows as a
// thumbnail in the chat (its bytes fetched from the server), and a click on it opens it full size
// in an editor tab (VS Code's image preview of a temporary file).
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { after, before, describe } from 'node:test';
import { scriptedWorkbench, steps, Workbench } from './workbench';

/** A real PNG of 40×30 red pixels. */
function png(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (kind: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(kind, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const [w, h] = [40, 30];
  const header = Buffer.alloc(13);
  header.writeUInt32BE(w, 0);
  header.writeUInt32BE(h, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(w * 3, Buffer.from([255, 0, 0]))]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: h }, () => row)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

const PNG = png().toString('base64');
const SCRIPT = { turns: [{ text: 'A red rectangle.', expectImages: 1 }] };

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;

describe('Images in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;

  before(async () => {
    wb = await scriptedWorkbench({ codeServerDir: codeServerDir!, vsix: vsix!, script: SCRIPT });
  });
  after(async () => {
    await wb?.stop();
  });
  const step = steps(() => wb);

  step('a PNG pasted into the composer shows as a thumbnail and reaches the model with the message', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    await wb.showChat();
    await wb.pasteImage(PNG);
    const pending = wb.chat.locator('#attachments .attachment img.thumb');
    await pending.waitFor();
    assert.equal(await pending.getAttribute('src'), `data:image/png;base64,${PNG}`);
    await wb.send('What is in this screenshot?');
    // the scripted turn expects exactly one image: its reply shows only if the request carried it
    await wb.chat.locator('.msg.assistant:not(.streaming) .text', { hasText: 'A red rectangle.' }).waitFor({ timeout: 30_000 });
    assert.equal(await wb.chat.locator('.note.turn-failed, .turn.failed').count(), 0);
    assert.equal(await wb.chat.locator('#attachments').isHidden(), true);
  });

  step("the message's thumbnail shows the image, fetched from the server; a click opens it in an editor tab", async () => {
    const thumb = wb.chat.locator('.msg.user .images img.thumb');
    await thumb.waitFor();
    await wb.chat.locator(`.msg.user .images img.thumb[src="data:image/png;base64,${PNG}"]`).waitFor({ timeout: 15_000 });
    const size = await thumb.evaluate((img) => [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight]);
    assert.deepEqual(size, [40, 30]);
    await thumb.click();
    const tab = wb.page.locator('.tabs-container .tab', { hasText: /^img-[0-9a-f]{32}\.png/ });
    await tab.waitFor({ timeout: 15_000 });
    await wb.page.locator('.editor-group-container.active .editor-instance').waitFor();
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
