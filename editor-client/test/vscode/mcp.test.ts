// The MCP section of the sidebar in a real VS Code (code-server 4.139, its Node extension host),
// driven from headless Chromium, with a real MCP server: the toolbox of the server's tests
// (tests/mcp_servers/toolbox.py, on the official SDK, over stdio), configured in the global
// $XDG_CONFIG_HOME/modus/mcp.json (a server of the user's own: started without asking). It shows
// before its first use, connects with the first turn, lists its tools, and Restart starts it anew
// (the toolbox notes each start in a marker file).
// Needs MODUS_CODE_SERVER_DIR (scripts/code-server.sh) and MODUS_VSIX; run by scripts/test.sh.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { modusPython, REPO_DIR } from '../server';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const SCRIPT = { turns: [{ thinking: 'The toolbox should be up by now.', text: 'Hello. The toolbox is at hand.' }] };
const TOOLS = ['echo', 'add', 'pid', 'crash', 'hang', 'flood'];

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;

describe('the MCP section in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;
  /** the toolbox writes a line there each time it starts */
  let folder = '';
  let marker = '';

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'modus-toolbox-'));
    marker = join(folder, 'starts.txt');
    const toolbox = { command: modusPython(), args: [join(REPO_DIR, 'tests', 'mcp_servers', 'toolbox.py'), 'toolbox'], env: { TOOLBOX_MARKER: marker } };
    wb = await scriptedWorkbench({
      codeServerDir: codeServerDir!,
      vsix: vsix!,
      config: { 'modus/mcp.json': JSON.stringify({ mcpServers: { toolbox } }) },
      script: SCRIPT,
    });
  });
  after(async () => {
    await wb?.stop();
    rmSync(folder, { recursive: true, force: true });
  });
  const step = steps(() => wb);
  const chat = () => wb.chat;
  const section = () => wb.chat.locator('#mcp');
  const server = () => section().locator('.mcp-server[data-server="toolbox"]');
  const starts = () => (existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n').length : 0);

  step('the section lists the toolbox; the first turn starts it: connected, with its tools (and the turn shows its thinking, folded)', async () => {
    await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 30_000 });
    await wb.showChat();
    await section().waitFor();
    await section().locator('summary').first().click();
    await server().waitFor();
    await wb.send('Hello');
    await chat().locator('.msg.assistant', { hasText: 'The toolbox is at hand.' }).waitFor();
    const thinking = chat().locator('details.msg.thinking'); // the model's thinking: folded above its words
    await thinking.locator('summary').click();
    assert.equal(await thinking.locator('.text').textContent(), 'The toolbox should be up by now.');
    await server().locator('.mcp-state', { hasText: 'connected' }).waitFor({ timeout: 30_000 });
    assert.equal(await section().locator('summary').first().textContent(), 'MCP servers 1 of 1 connected');
    assert.equal(await server().locator('.mcp-error').count(), 0);
    const summary = server().locator('.mcp-tools > summary');
    assert.match((await summary.textContent()) ?? '', /^\d+ tools/);
    await summary.click();
    const names = await server().locator('.mcp-tool .mcp-tool-name').allTextContents();
    for (const name of TOOLS) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    assert.equal(await server().locator('.mcp-tool', { hasText: 'echo' }).locator('.mcp-tool-description').textContent(), 'Say the text back.');
    assert.equal(starts(), 1);
  });

  step('Restart starts the toolbox anew: the button waits for the list, the server connects again', async () => {
    const restart = section().getByRole('button', { name: 'Restart toolbox' });
    await restart.click();
    await section().getByRole('button', { name: 'Restart toolbox' }).waitFor(); // the new list came
    await server().locator('.mcp-state', { hasText: 'connected' }).waitFor({ timeout: 30_000 });
    assert.equal(starts(), 2, 'a second process');
    assert.equal(await server().locator('.mcp-tools-list').isVisible(), true, 'the tools stay unfolded');
    assert.deepEqual(wb.extensionErrors(), []);
  });
});
