// A file as a checkpoint holds it, from the file now and git's unified diff from the checkpoint
// to now (`modus/checkpoints/diff`): the diff applied backwards. No `vscode`, no I/O.
import type { CheckpointFile } from './generated';

/** Why a checkpoint's text could not be rebuilt, for the user. */
export class DiffError extends Error {}

interface Hunk {
  /** where the hunk's new lines start in the file now (0-based) */
  newStart: number;
  /** the hunk's lines as the file now has them, and as the checkpoint had them (each with its line end) */
  newLines: string[];
  oldLines: string[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * The text of the file as the checkpoint held it: `file.diff` applied backwards to `current`,
 * the file's text now (empty for a file deleted since). A file added since had no text then.
 * Throws DiffError when the diff is not a text diff (a binary file, a file not compared) or
 * does not fit `current` (the file changed after the diff was made).
 */
export function checkpointText(file: CheckpointFile, current: string): string {
  if (file.status === 'added') return '';
  return reverseApply(file.diff, file.status === 'deleted' ? '' : current);
}

/** `current` with the hunks of git's unified diff `diff` undone: the text before the diff. */
export function reverseApply(diff: string, current: string): string {
  const hunks = parseHunks(diff);
  const lines = splitLines(current);
  const out: string[] = [];
  let at = 0; // the next line of `lines` to copy
  for (const hunk of hunks) {
    if (hunk.newStart < at || hunk.newStart + hunk.newLines.length > lines.length) {
      throw new DiffError('the file changed after the diff was made (a change falls outside it)');
    }
    out.push(...lines.slice(at, hunk.newStart));
    hunk.newLines.forEach((line, i) => {
      if (lines[hunk.newStart + i] !== line) {
        throw new DiffError(`the file changed after the diff was made (line ${hunk.newStart + i + 1} differs)`);
      }
    });
    out.push(...hunk.oldLines);
    at = hunk.newStart + hunk.newLines.length;
  }
  out.push(...lines.slice(at));
  return out.join('');
}

/** The text's lines, each with its line end ("\n"; a last line without one has none). */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The hunks of one file's unified diff, as git writes it (headers first, then `@@` hunks). */
function parseHunks(diff: string): Hunk[] {
  if (!/^(diff --git |--- )/.test(diff)) {
    // the server's sentence for a file it did not compare, e.g. "big.bin: not compared, the file is now too large"
    throw new DiffError(diff.trim() || 'the diff is empty');
  }
  const rows = diff.split('\n');
  if (rows[rows.length - 1] === '') rows.pop(); // the diff's own last line end
  if (rows.some((r) => r.startsWith('Binary files ') || r === 'GIT binary patch')) throw new DiffError('it is a binary file');
  const hunks: Hunk[] = [];
  let hunk: Hunk | null = null;
  let left = { old: 0, new: 0 }; // lines the current hunk still has
  let last: 'old' | 'new' | 'both' | null = null; // the side(s) of the line read last
  for (const row of rows) {
    const header = HUNK_HEADER.exec(row);
    if (header) {
      const newStart = Number(header[3]);
      const newCount = header[4] === undefined ? 1 : Number(header[4]);
      // an empty side names the line before it: the hunk's lines go after that one
      hunk = { newStart: newCount === 0 ? newStart : newStart - 1, newLines: [], oldLines: [] };
      hunks.push(hunk);
      left = { old: header[2] === undefined ? 1 : Number(header[2]), new: newCount };
      last = null;
      continue;
    }
    if (!hunk) continue; // the headers before the first hunk (diff --git, index, ---, +++, modes)
    const mark = row === '' ? ' ' : row[0]; // an empty context line, should a tool have trimmed its space
    const text = row.slice(1) + '\n';
    if (mark === '\\') {
      // "\ No newline at end of file": the line before it has no line end, on its side(s)
      if (last === 'old' || last === 'both') dropLineEnd(hunk.oldLines);
      if (last === 'new' || last === 'both') dropLineEnd(hunk.newLines);
      continue;
    }
    if (left.old === 0 && left.new === 0) {
      hunk = null; // past the hunk: the next file's headers (a type change is two sections)
      continue;
    }
    if (mark === ' ') {
      hunk.oldLines.push(text);
      hunk.newLines.push(text);
      left = { old: left.old - 1, new: left.new - 1 };
      last = 'both';
    } else if (mark === '-') {
      hunk.oldLines.push(text);
      left = { ...left, old: left.old - 1 };
      last = 'old';
    } else if (mark === '+') {
      hunk.newLines.push(text);
      left = { ...left, new: left.new - 1 };
      last = 'new';
    } else {
      throw new DiffError(`the diff has a line git does not write: ${JSON.stringify(row.slice(0, 40))}`);
    }
  }
  if (left.old !== 0 || left.new !== 0) throw new DiffError('the diff ends in the middle of a hunk');
  return hunks;
}

function dropLineEnd(lines: string[]): void {
  const i = lines.length - 1;
  if (i >= 0 && lines[i].endsWith('\n')) lines[i] = lines[i].slice(0, -1);
}
