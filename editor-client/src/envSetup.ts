// Modus's own Python environment, set up by the extension (no `vscode` import: the unit tests and
// bench/firstrun.py run it with node). What the `.vsix` carries (`bundled/`: the Modus wheel, its
// manifest, and in an offline `.vsix` every dependency's wheel), where the environment lives (a
// virtual environment under the extension's global storage, a stamp file naming the version
// installed), and the steps: the interpreter checked (Python 3.11 or newer), `python -m venv`,
// `pip install` of the bundled wheel — its dependencies from the user's package index, with pip's
// own configuration and proxies (the environment passed through as it is), or, offline, from the
// bundled wheels alone — then the stamp written.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The oldest Python Modus runs on. */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export const PYTHON_DOWNLOAD_URL = 'https://www.python.org/downloads/';

/** What the `.vsix` carries in `bundled/` (see `readBundle`). */
export interface Bundle {
  /** the `bundled/` folder */
  dir: string;
  /** Modus's version, the wheel's */
  version: string;
  /** the Modus wheel, `bundled/modus-<version>-py3-none-any.whl` */
  wheel: string;
  /** every dependency's wheel is in `bundled/wheels/`: the install needs no package index */
  offline: boolean;
  /** `bundled/wheels/` (offline only) */
  wheels?: string;
  /** the protocol's version, the platform target, the Pythons the wheels are for: as the manifest says */
  protocol?: number;
  target?: string | null;
  pythons?: string[];
}

/**
 * The bundle in `<extensionPath>/bundled/`: its `manifest.json` (`{version, protocol, offline,
 * target, pythons}`) and the wheel it names; undefined when there is none (an extension built
 * from a checkout without `npm run package`: then the interpreter must have Modus itself).
 */
export function readBundle(extensionPath: string): Bundle | undefined {
  const dir = join(extensionPath, 'bundled');
  let manifest: { version?: unknown; protocol?: unknown; offline?: unknown; target?: unknown; pythons?: unknown };
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof manifest.version !== 'string') return undefined;
  const wheel = join(dir, `modus-${manifest.version}-py3-none-any.whl`);
  if (!existsSync(wheel)) return undefined;
  const offline = manifest.offline === true && existsSync(join(dir, 'wheels'));
  return {
    dir,
    version: manifest.version,
    wheel,
    offline,
    ...(offline ? { wheels: join(dir, 'wheels') } : {}),
    ...(typeof manifest.protocol === 'number' ? { protocol: manifest.protocol } : {}),
    ...(typeof manifest.target === 'string' || manifest.target === null ? { target: manifest.target as string | null } : {}),
    ...(Array.isArray(manifest.pythons) ? { pythons: manifest.pythons.map(String) } : {}),
  };
}

/** Where the private environment lives: `<storage>/env`, its python, and the stamp of the version installed. */
export interface EnvPaths {
  dir: string;
  python: string;
  stamp: string;
}

export function envPaths(storage: string, platform: NodeJS.Platform = process.platform): EnvPaths {
  const dir = join(storage, 'env');
  return {
    dir,
    python: platform === 'win32' ? join(dir, 'Scripts', 'python.exe') : join(dir, 'bin', 'python'),
    stamp: join(dir, 'modus-version'),
  };
}

/**
 * What the environment has, read cheaply (no process): `ready` (its python is there and the stamp,
 * written after a successful install, names `version`), `outdated` (set up for another version:
 * upgraded by itself), `missing` (never set up, or an install that did not end).
 */
export function envState(paths: EnvPaths, version: string): 'ready' | 'outdated' | 'missing' {
  if (!existsSync(paths.python)) return 'missing';
  let stamped: string;
  try {
    stamped = readFileSync(paths.stamp, 'utf8').trim();
  } catch {
    return 'missing';
  }
  return stamped === version ? 'ready' : stamped ? 'outdated' : 'missing';
}

/** The version the stamp names, if any. */
export function stampedVersion(paths: EnvPaths): string | undefined {
  try {
    return readFileSync(paths.stamp, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** `(3, 11)` (what `print(sys.version_info[:2])` prints) as [3, 11]; undefined when it is not that. */
export function parsePythonVersion(text: string): [number, number] | undefined {
  const m = /\(\s*(\d+)\s*,\s*(\d+)\s*\)/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

export function atLeast(version: readonly [number, number], min: readonly [number, number] = MIN_PYTHON): boolean {
  return version[0] > min[0] || (version[0] === min[0] && version[1] >= min[1]);
}

/** What a command did: its exit code (null: killed; -1: it could not be started) and its output. */
export interface RunResult {
  code: number | null;
  /** stdout and stderr, as they came */
  output: string;
  /** it could not be started (`ENOENT`: no such program) */
  spawnError?: NodeJS.ErrnoException;
}

/** How long a command asked to stop (SIGTERM) has before it is killed. */
const STOP_GRACE_MS = 3000;

/**
 * Runs `command args`, each line of its output (stdout and stderr) to `onLine` as it comes; an
 * aborted `signal` stops it (SIGTERM, then SIGKILL after a grace).
 */
export function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; onLine?: (line: string) => void; signal?: AbortSignal } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = '';
    let partial = '';
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    const stop = () => {
      child.kill('SIGTERM');
      setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), STOP_GRACE_MS).unref();
    };
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener('abort', stop, { once: true });
    child.on('close', () => options.signal?.removeEventListener('abort', stop));
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      if (!options.onLine) return;
      const lines = (partial + text).split(/\r?\n|\r/);
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) options.onLine(line);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (err: NodeJS.ErrnoException) => resolve({ code: -1, output, spawnError: err }));
    child.on('close', (code) => {
      if (partial.trim()) options.onLine?.(partial);
      resolve({ code, output });
    });
  });
}

/** What `python` is: its version, or why it cannot be used. */
export type PythonCheck =
  | { ok: true; version: [number, number] }
  | { ok: false; reason: 'missing'; message: string }
  | { ok: false; reason: 'old'; version: [number, number]; message: string }
  | { ok: false; reason: 'broken'; message: string };

export async function checkPython(python: string, env?: NodeJS.ProcessEnv): Promise<PythonCheck> {
  const r = await run(python, ['-c', 'import sys; print(sys.version_info[:2])'], { env });
  if (r.spawnError) return { ok: false, reason: 'missing', message: `No Python found: ${python} (${r.spawnError.code ?? r.spawnError.message})` };
  const version = r.code === 0 ? parsePythonVersion(r.output) : undefined;
  if (!version) return { ok: false, reason: 'broken', message: `${python} did not tell its version: ${lastLines(r.output, 3).join(' ') || `exit code ${r.code}`}` };
  if (!atLeast(version)) {
    return { ok: false, reason: 'old', version, message: `Modus needs Python ${MIN_PYTHON.join('.')} or newer; ${python} is Python ${version.join('.')}` };
  }
  return { ok: true, version };
}

/** The version of Modus installed in `python`'s environment (a process: use when the stamp cannot tell). */
export async function installedVersion(python: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  const r = await run(python, ['-c', "import importlib.metadata as m; print(m.version('modus'))"], { env });
  return r.code === 0 ? r.output.trim() || undefined : undefined;
}

/** The last `n` lines of an output that are not empty. */
export function lastLines(output: string, n: number): string[] {
  return output
    .split(/\r?\n|\r/)
    .filter((l) => l.trim())
    .slice(-n);
}

/** A step of the set-up, as the progress tells it. */
export type SetupStep = 'check' | 'venv' | 'install' | 'cancelled';

export interface SetupProgress {
  step: SetupStep;
  /** what it is doing: "Creating the environment…" */
  message: string;
  /** pip's current line, while it installs */
  line?: string;
}

/** A set-up that did not succeed: which step, in words, and the last lines of its output. */
export class SetupError extends Error {
  constructor(
    readonly step: SetupStep,
    message: string,
    /** the command's last lines (pip's own words) */
    readonly lines: string[] = [],
    /** the interpreter is missing or older than 3.11 */
    readonly python?: PythonCheck,
  ) {
    super(message);
  }
}

export interface SetupOptions {
  /** the interpreter the environment is created with (not needed to upgrade one that exists) */
  python: string;
  bundle: Bundle;
  paths: EnvPaths;
  /** the environment of the processes (default: this process's): pip's configuration, proxies */
  env?: NodeJS.ProcessEnv;
  progress?: (p: SetupProgress) => void;
  /** every line of every command, and the commands themselves (for the log) */
  log?: (line: string) => void;
  /** aborted: the command under way is stopped, and the set-up throws a SetupError of step `cancelled` */
  signal?: AbortSignal;
}

/** What a cancelled set-up says. */
export const CANCELLED = 'The set-up was cancelled.';

/** How many of the output's last lines a failure shows. */
const ERROR_LINES = 12;

/**
 * An offline bundle's wheels are for some Pythons only (`pythons`: "3.11", or "cp311"): why
 * `version` is not one of them, or undefined when it is (or the bundle does not say).
 */
export function offlineMismatch(bundle: Bundle, version: readonly [number, number]): string | undefined {
  if (!bundle.offline || !bundle.pythons?.length) return undefined;
  const dotted = version.join('.');
  if (bundle.pythons.some((p) => p === dotted || p === `cp${version.join('')}`)) return undefined;
  return `This offline Modus carries wheels for Python ${bundle.pythons.join(', ')}; the interpreter is Python ${dotted}`;
}

/** The pip command the set-up runs in the environment (index settings are pip's own, but offline). */
export function pipArgs(bundle: Bundle): string[] {
  const args = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input'];
  if (bundle.offline && bundle.wheels) args.push('--no-index', '--find-links', bundle.wheels);
  return [...args, bundle.wheel];
}

/**
 * Sets up (or upgrades) the environment: the interpreter checked, the environment created when it
 * is not there, the bundled wheel installed, the stamp written. Throws a SetupError.
 */
export async function setUp(o: SetupOptions): Promise<{ created: boolean }> {
  const log = o.log ?? (() => undefined);
  const progress = o.progress ?? (() => undefined);
  const env = { ...(o.env ?? process.env), PYTHONUNBUFFERED: '1' };
  const signal = o.signal;
  const cancelled = () => {
    if (signal?.aborted) throw new SetupError('cancelled', CANCELLED);
  };
  let created = false;
  cancelled();
  if (!existsSync(o.paths.python)) {
    progress({ step: 'check', message: `Checking ${o.python}…` });
    const check = await checkPython(o.python, env);
    cancelled();
    log(`modus: set-up: ${o.python}: ${check.ok ? `Python ${check.version.join('.')}` : check.message}`);
    if (!check.ok) throw new SetupError('check', check.message, [], check);
    const unfit = offlineMismatch(o.bundle, check.version);
    if (unfit) throw new SetupError('check', unfit);
    progress({ step: 'venv', message: 'Creating the environment…' });
    rmSync(o.paths.dir, { recursive: true, force: true }); // what an earlier attempt left
    log(`modus: set-up: $ ${o.python} -m venv ${o.paths.dir}`);
    const venv = await run(o.python, ['-m', 'venv', o.paths.dir], { env, onLine: log, signal });
    if (venv.code !== 0 || signal?.aborted) {
      rmSync(o.paths.dir, { recursive: true, force: true });
      cancelled();
      throw new SetupError('venv', `${o.python} -m venv failed (${venv.spawnError?.message ?? `exit code ${venv.code}`})`, lastLines(venv.output, ERROR_LINES));
    }
    created = true;
  }
  rmSync(o.paths.stamp, { force: true }); // an install that does not end leaves no stamp
  const what = `Installing Modus ${o.bundle.version} and its dependencies${o.bundle.offline ? ' (from the bundled wheels)' : ''}…`;
  progress({ step: 'install', message: what });
  const args = pipArgs(o.bundle);
  log(`modus: set-up: $ ${o.paths.python} ${args.join(' ')}`);
  const pip = await run(o.paths.python, args, {
    env,
    signal,
    onLine: (line) => {
      log(line);
      progress({ step: 'install', message: what, line: line.trim() });
    },
  });
  cancelled(); // the environment stays, without a stamp: the next set-up installs again
  if (pip.code !== 0) {
    throw new SetupError('install', `pip could not install Modus ${o.bundle.version} (${pip.spawnError?.message ?? `exit code ${pip.code}`})`, lastLines(pip.output, ERROR_LINES));
  }
  writeFileSync(o.paths.stamp, `${o.bundle.version}\n`);
  log(`modus: set-up: Modus ${o.bundle.version} is installed in ${o.paths.dir}`);
  return { created };
}
