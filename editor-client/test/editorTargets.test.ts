// Where the chat's links and code blocks land, on a real file system: a path is a link only to a
// file inside a workspace folder (not `..` out of it, not absolute elsewhere, not through a
// symbolic link that leads out); a fence's language as VS Code's language id.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { languageIdOf, workspaceFile } from '../src/editorTargets';

describe('workspace files the chat may open', () => {
  let root: string;
  let ws: string;
  let other: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'modus-targets-'));
    ws = join(root, 'ws');
    other = join(root, 'ws2');
    const outside = join(root, 'outside');
    for (const dir of [join(ws, 'src'), join(other, 'lib'), outside]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(ws, 'src', 'app.py'), 'print(1)\n');
    writeFileSync(join(ws, 'README.md'), '# hi\n');
    writeFileSync(join(other, 'lib', 'util.ts'), 'export {};\n');
    writeFileSync(join(outside, 'secret.txt'), 'no\n');
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'secret-link.txt'));
    symlinkSync(outside, join(ws, 'out-dir'));
    symlinkSync(join(ws, 'src', 'app.py'), join(ws, 'app-link.py'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('answers each path: a file inside a folder (relative or absolute), or nothing', async () => {
    const rows: [string, string | null][] = [
      ['src/app.py', 'src/app.py'],
      ['./src/app.py', 'src/app.py'],
      ['src/../README.md', 'README.md'],
      ['lib/util.ts', 'lib/util.ts'], // the second folder's
      ['app-link.py', 'app-link.py'], // a link that stays inside
      ['src/missing.py', null],
      ['src', null], // a folder
      ['../outside/secret.txt', null],
      ['src/../../outside/secret.txt', null],
      ['secret-link.txt', null], // a link out
      ['out-dir/secret.txt', null], // through a folder that links out
      ['~/secret.txt', null],
      ['', null],
      ['src/app.py\0', null],
    ];
    for (const [candidate, want] of rows) {
      const got = await workspaceFile([ws, other], candidate);
      assert.equal(got?.relative ?? null, want, candidate);
    }
    assert.deepEqual(await workspaceFile([ws, other], join(ws, 'src', 'app.py')), { file: join(ws, 'src', 'app.py'), relative: 'src/app.py' });
    assert.equal(await workspaceFile([ws], join(root, 'outside', 'secret.txt')), null, 'absolute, elsewhere');
    assert.equal(await workspaceFile([ws], ws), null, 'the folder itself');
    assert.equal(await workspaceFile([], 'src/app.py'), null, 'no folder open');
  });

  it("reads a fence's language as VS Code's language id, plain text when VS Code does not know it", () => {
    const known = ['python', 'typescript', 'shellscript', 'plaintext', 'yaml', 'rust', 'javascriptreact'];
    const rows: [string | undefined, string][] = [
      ['py', 'python'],
      ['Python', 'python'],
      ['ts', 'typescript'],
      ['bash', 'shellscript'],
      ['yml', 'yaml'],
      ['rs', 'rust'],
      ['jsx', 'javascriptreact'],
      ['cobol', 'plaintext'],
      ['', 'plaintext'],
      [undefined, 'plaintext'],
    ];
    for (const [fence, want] of rows) assert.equal(languageIdOf(fence, known), want, String(fence));
  });
});
