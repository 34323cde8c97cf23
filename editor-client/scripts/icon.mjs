// Renders media/icon.png, the Marketplace's 128×128 icon, from media/modus.svg (the activity bar's
// glyph) in headless Chromium: the glyph in white on a rounded tile. `node scripts/icon.mjs`;
// CHROMIUM_PATH chooses the browser (default /usr/bin/chromium). The PNG is committed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { clientDir } from './python.mjs';

const glyph = readFileSync(join(clientDir, 'media', 'modus.svg'), 'utf8')
  .replace(/currentColor/g, '#ffffff')
  .replace(/width="24" height="24"/, 'width="96" height="96"');
const html = `<!doctype html><html><body style="margin:0;background:transparent">
<div style="width:128px;height:128px;border-radius:24px;display:flex;align-items:center;justify-content:center;
background:linear-gradient(135deg,#4f46e5,#0e7490)">${glyph}</div></body></html>`;

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium' });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
  await page.setContent(html);
  const out = join(clientDir, 'media', 'icon.png');
  await page.screenshot({ path: out, omitBackground: true });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
}
