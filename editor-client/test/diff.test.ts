// A checkpoint's text from the file now and git's unified diff (src/protocol/diff.ts): each case
// diffed by the real git (`git diff --no-index`, as the server's `git diff-tree -p` writes hunks),
// then applied backwards.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkpointText, DiffError, reverseApply, splitLines } from '../src/protocol/diff';

const dir = mkdtempSync(join(tmpdir(), 'modus-diff-'));

/** git's unified diff from `before` to `after` (as bytes of UTF-8), with `context` lines around each change. */
function gitDiff(before: string, after: string, context = 3): string {
  writeFileSync(join(dir, 'a'), before);
  writeFileSync(join(dir, 'b'), after);
  const out = spawnSync('git', ['diff', '--no-index', '--no-color', '--no-ext-diff', '--no-textconv', `-U${context}`, 'a', 'b'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' },
  });
  assert.ok(out.status === 0 || out.status === 1, out.stderr);
  return out.stdout;
}

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join('');

/** [name, the checkpoint's text, the text now] */
const CASES: [string, string, string][] = [
  ['one line changed in the middle', 'a\nb\nc\n', 'a\nB\nc\n'],
  ['the first line changed', lines(10), lines(10).replace('line 1\n', 'first\n')],
  ['the last line changed', lines(10), lines(10).replace('line 10\n', 'last\n')],
  ['lines added at the start', lines(5), 'new 1\nnew 2\n' + lines(5)],
  ['lines added at the end', lines(5), lines(5) + 'new 1\nnew 2\n'],
  ['lines removed at the start', lines(8), lines(8).split('\n').slice(3).join('\n')],
  ['lines removed at the end', lines(8), lines(5)],
  ['two hunks far apart', lines(40), lines(40).replace('line 3\n', 'three\n').replace('line 35\n', 'thirty-five\nand more\n')],
  ['hunks close enough to merge', lines(20), lines(20).replace('line 5\n', 'five\n').replace('line 9\n', '')],
  ['every line replaced', lines(4), lines(6, 'other')],
  ['no line end at the end, then one', 'a\nb', 'a\nb\n'],
  ['a line end at the end, then none', 'a\nb\n', 'a\nb'],
  ['no line end at the end before and after, the last line changed', 'a\nb', 'a\nc'],
  ['no line end at the end before and after, another line changed', lines(9) + 'end', lines(9).replace('line 2\n', 'two\n') + 'end'],
  ['an empty file filled', '', 'hello\nworld\n'],
  ['a file emptied', 'hello\nworld\n', ''],
  ['one line without a line end, emptied', 'x', ''],
  ['CRLF line ends kept', 'a\r\nb\r\nc\r\n', 'a\r\nB\r\nc\r\n'],
  ['CRLF turned into LF', 'a\r\nb\r\n', 'a\nb\n'],
  ['lines that look like diff syntax', '+plus\n-minus\n\\ backslash\n@@ -1 +1 @@\n ctx\n', '+plus\n-MINUS\n\\ backslash\n@@ -9 +9 @@\n ctx\n'],
  ['empty and blank lines', 'a\n\n  \n\nb\n', 'a\n\n\t\n\nb\n\n'],
  ['unicode and a byte order mark', '\uFEFFgrüße 👋\nnaïve\n', '\uFEFFgrüße 👋\nnaive\nmore\n'],
];

describe('a checkpoint’s text from the diff since, applied backwards', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, before, now] of CASES) {
    it(name, () => {
      for (const context of [3, 0, 1]) {
        const diff = gitDiff(before, now, context);
        assert.equal(reverseApply(diff, now), before, `with ${context} lines of context:\n${diff}`);
      }
    });
  }

  it('many random edits, each diffed by git, come back to the text before', () => {
    let seed = 42; // a fixed sequence: the same cases every run
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const words = ['alpha', 'beta', '', 'gamma', '  indented', '+x', '-y', 'delta'];
    for (let round = 0; round < 60; round++) {
      const before = Array.from({ length: random(30) }, () => words[random(words.length)] + '\n');
      const now = [...before];
      for (let edits = random(5); edits >= 0; edits--) {
        const at = random(now.length + 1);
        const kind = random(3);
        if (kind === 0) now.splice(at, 0, `new ${round}\n`);
        else if (kind === 1) now.splice(at, 1);
        else now.splice(at, 1, `changed ${round}\n`);
      }
      const strip = (l: string[]) => (random(4) === 0 && l.length ? l.join('').slice(0, -1) : l.join(''));
      const [b, n] = [strip(before), strip(now)];
      if (b === n) continue; // no diff at all
      assert.equal(reverseApply(gitDiff(b, n), n), b, `round ${round}`);
    }
  });

  it('a file added since had no text then; a file deleted since comes from its diff alone', () => {
    const added = gitDiff('', 'new file\n');
    assert.equal(checkpointText({ path: 'n.txt', status: 'added', diff: added }, 'new file\n'), '');
    const deleted = gitDiff('was here\nand here\n', '');
    assert.equal(checkpointText({ path: 'd.txt', status: 'deleted', diff: deleted }, ''), 'was here\nand here\n');
    // what is on disk does not matter for a deleted file
    assert.equal(checkpointText({ path: 'd.txt', status: 'deleted', diff: deleted }, 'a new file of the same name\n'), 'was here\nand here\n');
    const modified = gitDiff('v1\n', 'v2\n');
    assert.equal(checkpointText({ path: 'm.txt', status: 'modified', diff: modified }, 'v2\n'), 'v1\n');
  });

  it('the server’s own diff headers (diff-tree: a/ and b/ prefixes, /dev/null, modes) are skipped', () => {
    const diff = [
      'diff --git a/src/app.py b/src/app.py',
      'old mode 100644',
      'new mode 100755',
      'index 3b18e51..f0e1a2c',
      '--- a/src/app.py',
      '+++ b/src/app.py',
      '@@ -1,2 +1,2 @@',
      ' def hello():',
      '-    return 1',
      '+    return 2',
      '',
    ].join('\n');
    assert.equal(reverseApply(diff, 'def hello():\n    return 2\n'), 'def hello():\n    return 1\n');
    // the executable bit alone: headers, no hunk, the same text
    const modeOnly = 'diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n';
    assert.equal(reverseApply(modeOnly, 'echo hi\n'), 'echo hi\n');
  });

  it('refuses what it cannot rebuild, saying why', () => {
    const binary = 'diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and b/img.png differ\n';
    assert.throws(() => reverseApply(binary, ''), (err: unknown) => err instanceof DiffError && /binary file/.test(err.message));
    const sentence = 'big.log: not compared, the file is now 6.0 MiB (over 5 MiB)\n';
    assert.throws(() => reverseApply(sentence, ''), { message: 'big.log: not compared, the file is now 6.0 MiB (over 5 MiB)' });
    // the file changed after the diff was made
    const diff = gitDiff('a\nb\nc\n', 'a\nB\nc\n');
    assert.throws(() => reverseApply(diff, 'a\nX\nc\n'), (err: unknown) => err instanceof DiffError && /line 2 differs/.test(err.message));
    assert.throws(() => reverseApply(diff, 'a\n'), /changed after the diff was made/);
    assert.throws(() => reverseApply(diff.split('\n').slice(0, -3).join('\n'), 'a\nB\nc\n'), /ends in the middle of a hunk/);
  });

  it('splits lines keeping their line ends', () => {
    assert.deepEqual(splitLines(''), []);
    assert.deepEqual(splitLines('a'), ['a']);
    assert.deepEqual(splitLines('a\n'), ['a\n']);
    assert.deepEqual(splitLines('a\r\n\nb'), ['a\r\n', '\n', 'b']);
  });
});
