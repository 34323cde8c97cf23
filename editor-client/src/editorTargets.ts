// Where the sidebar's links and code blocks land, decided without `vscode` (the node tests use it):
// a path the chat names is a file inside a workspace folder, or it is nothing; a fence's
// language is one of VS Code's language ids, or plain text.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** A file of the workspace: its path (as the folder sees it, not resolved through links) and
 * its path relative to that folder, with `/`. */
export interface WorkspaceFile {
  file: string;
  relative: string;
}

/** Whether `child` is inside `parent` (not `parent` itself); both absolute and normalised. */
function inside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

async function realpath(p: string): Promise<string | null> {
  try {
    return await fs.realpath(p);
  } catch {
    return null;
  }
}

/**
 * `candidate` (relative to a workspace folder, or absolute) as a file inside one of `folders`
 * (absolute paths), the first folder that has it; null when it is no file there: absolute
 * elsewhere, `..` out of the folder, a symbolic link (itself or a folder on the way) that leads
 * out, a folder, or nothing at all.
 */
export async function workspaceFile(folders: readonly string[], candidate: string): Promise<WorkspaceFile | null> {
  if (typeof candidate !== 'string' || !candidate || candidate.length > 1024 || /[\0\n\r]/.test(candidate)) return null;
  if (candidate.startsWith('~')) return null; // the home folder's, never the workspace's
  for (const folder of folders) {
    const root = path.resolve(folder);
    const file = path.isAbsolute(candidate) ? path.normalize(candidate) : path.resolve(root, candidate);
    if (!inside(root, file)) continue;
    const [realRoot, realFile] = await Promise.all([realpath(root), realpath(file)]);
    if (!realRoot || !realFile || !inside(realRoot, realFile)) continue;
    try {
      if (!(await fs.stat(realFile)).isFile()) continue;
    } catch {
      continue;
    }
    return { file, relative: path.relative(root, file).split(path.sep).join('/') };
  }
  return null;
}

/** A fence's language names that are not VS Code's language ids. */
const FENCE_ALIASES: Record<string, string> = {
  py: 'python', python3: 'python', py3: 'python', gyp: 'python',
  js: 'javascript', node: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascriptreact',
  ts: 'typescript', mts: 'typescript', cts: 'typescript', tsx: 'typescriptreact',
  sh: 'shellscript', bash: 'shellscript', zsh: 'shellscript', shell: 'shellscript', console: 'shellscript', shellsession: 'shellscript',
  yml: 'yaml', md: 'markdown', rs: 'rust', rb: 'ruby', cs: 'csharp', 'c#': 'csharp', 'c++': 'cpp', cc: 'cpp', hpp: 'cpp', h: 'c',
  kt: 'kotlin', kts: 'kotlin', ps1: 'powershell', pwsh: 'powershell', ps: 'powershell', golang: 'go', docker: 'dockerfile',
  make: 'makefile', mk: 'makefile', text: 'plaintext', txt: 'plaintext', plain: 'plaintext', plaintext: 'plaintext',
  htm: 'html', svg: 'xml', patch: 'diff', jsonc: 'jsonc', json5: 'jsonc', toml: 'toml', tf: 'terraform', pl: 'perl', 'objective-c': 'objective-c', objc: 'objective-c',
};

/** The VS Code language id of a fence's language (`py` → `python`), when VS Code knows it (`known`), else `plaintext`. */
export function languageIdOf(fence: string | undefined, known: readonly string[]): string {
  const name = (fence ?? '').trim().toLowerCase();
  if (!name) return 'plaintext';
  const id = FENCE_ALIASES[name] ?? name;
  return known.includes(id) ? id : 'plaintext';
}
