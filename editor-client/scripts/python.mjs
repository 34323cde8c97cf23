// The Python interpreter that runs the Modus server and `python -m protocol`:
// $MODUS_PYTHON, else ../.venv/bin/python (the repository's venv), else python3.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const repoDir = resolve(clientDir, '..');

export function modusPython() {
  if (process.env.MODUS_PYTHON) return process.env.MODUS_PYTHON;
  const venv = join(repoDir, '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}
