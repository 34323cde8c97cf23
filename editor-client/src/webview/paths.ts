// Paths in a text: `src/app.py`, `src/app.py:12`, `src/app.py:12:5`, found without the DOM. A
// candidate is only a guess from its shape; the extension says which ones are files inside the
// workspace (see links.ts), and only those become links.

/** A place in a file: a path as written (relative to the workspace, or absolute), 1-based line and column. */
export interface PathRef {
  path: string;
  line?: number;
  column?: number;
}

/** A text cut into plain runs and runs that name a path. */
export type Run = { text: string; ref?: PathRef };

/** Extensions that make a bare name (no folder) a candidate: `README.md`, `app.py`. */
const BARE_EXTENSIONS = new Set(
  (
    'py pyi ipynb ts tsx js jsx mjs cjs json jsonc md mdx txt rst yaml yml toml ini cfg conf env lock ' +
    'rs go java kt kts scala c h cc cpp cxx hpp cs fs rb php pl lua r swift m mm dart ex exs erl hs ml clj ' +
    'html htm css scss sass less vue svelte astro xml svg sql graphql proto sh bash zsh fish ps1 bat cmd ' +
    'dockerfile gradle tf hcl csv tsv log diff patch'
  ).split(' '),
);

/** Longest path taken as a candidate: beyond it, a text is not a path. */
const MAX_PATH = 300;

// before: the start, a space or an opening mark; the path: `/`, `./`, `../` or `~/` perhaps, then
// segments of name characters (the last one not ending in a dot); then `:line` and `:line:column`
// perhaps; after: the end, a space, a closing mark or a sentence's punctuation.
const CANDIDATE =
  /(^|[\s([{"'`<>,;=|])((?:\.{0,2}\/|~\/)?(?:[\w@+\-.]+\/)*[\w@+\-.]*[\w@+\-])(?::(\d+)(?::(\d+))?)?(?=$|[\s)\]}"'`<>,;:.!?|])/g;

/** Whether `path` (as it matched) looks enough like a file to ask about it. */
function looksLikeFile(path: string, line: boolean): boolean {
  if (path.length > MAX_PATH) return false;
  const name = path.slice(path.lastIndexOf('/') + 1);
  const ext = /\.([A-Za-z][\w-]{0,11})$/.exec(name)?.[1];
  const folder = path.includes('/');
  if (folder) return !!ext || line;
  return !!ext && (BARE_EXTENSIONS.has(ext.toLowerCase()) || line);
}

/** The text cut into plain runs and candidate paths (with their line and column when written). */
export function splitPaths(text: string): Run[] {
  const runs: Run[] = [];
  let at = 0;
  for (const m of text.matchAll(CANDIDATE)) {
    const [, before, path, line, column] = m;
    if (!looksLikeFile(path, !!line)) continue;
    const start = m.index! + before.length;
    const end = m.index! + m[0].length;
    if (start > at) runs.push({ text: text.slice(at, start) });
    const ref: PathRef = { path };
    if (line) ref.line = Number(line);
    if (column) ref.column = Number(column);
    runs.push({ text: text.slice(start, end), ref });
    at = end;
  }
  if (at < text.length) runs.push({ text: text.slice(at) });
  return runs;
}

/**
 * A Markdown link's target as a place in a file: `src/app.py`, `src/app.py:12`, `src/app.py#L12`,
 * `src/app.py#L12C5` (GitHub's and VS Code's forms), percent-encoded or not. Null for anything
 * else (an anchor alone, a query, an empty target).
 */
export function hrefPath(href: string): PathRef | null {
  let target = href.trim();
  if (!target || target.startsWith('#') || target.includes('?')) return null;
  let line: string | undefined;
  let column: string | undefined;
  const hash = target.indexOf('#');
  if (hash >= 0) {
    const fragment = /^L(\d+)(?:C(\d+))?(?:-L?\d+(?:C\d+)?)?$/.exec(target.slice(hash + 1));
    if (!fragment) return null;
    [, line, column] = fragment;
    target = target.slice(0, hash);
  }
  try {
    target = decodeURIComponent(target);
  } catch {
    return null;
  }
  if (!line) {
    const suffix = /:(\d+)(?::(\d+))?$/.exec(target);
    if (suffix) {
      [, line, column] = suffix;
      target = target.slice(0, suffix.index);
    }
  }
  if (!target || target.length > MAX_PATH || /[\0\n]/.test(target)) return null;
  const ref: PathRef = { path: target };
  if (line) ref.line = Number(line);
  if (column) ref.column = Number(column);
  return ref;
}

/** How a place is said: `src/app.py`, `src/app.py, line 12`, `src/app.py, line 12, column 5`. */
export function describeRef(path: string, ref: PathRef): string {
  return path + (ref.line ? `, line ${ref.line}` + (ref.column ? `, column ${ref.column}` : '') : '');
}
