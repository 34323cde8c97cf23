// Starting the server process and telling, from what it printed, why it stopped. No `vscode`:
// the node tests run it against a real interpreter.
import { ChildProcess, spawn } from 'child_process';

/** The last lines a process wrote to stderr, kept to explain why it stopped. */
export class StderrTail {
  private text = '';
  constructor(private readonly limit = 16 * 1024) {}

  push(chunk: Buffer | string): void {
    this.text = (this.text + chunk.toString()).slice(-this.limit);
  }

  /**
   * The line that says why: the last exception or error line (`ModuleNotFoundError: …`,
   * `/usr/bin/python3: No module named server`), else the last line; undefined when silent.
   */
  cause(): string | undefined {
    const lines = this.text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter(Boolean);
    const error = [...lines].reverse().find((l) => /^[\w.]*(Error|Exception)\b|No module named|: error:|^error:/i.test(l));
    const line = error ?? lines[lines.length - 1];
    if (!line) return undefined;
    return line.length > 300 ? line.slice(0, 299) + '…' : line;
  }
}

export interface ServerProcess {
  child: ChildProcess;
  /** resolves when the process has exited and its stderr is read to the end */
  closed: Promise<void>;
}

/**
 * Spawns `python -m server` with piped stdio; resolves once it runs, rejects with a message
 * naming the interpreter when it cannot start (not found, not executable).
 */
export function spawnServer(
  python: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
  stderr: StderrTail,
): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-m', 'server'], { cwd: options.cwd, env: options.env, stdio: 'pipe' });
    const closed = new Promise<void>((done) => child.once('close', () => done()));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('spawn', () => resolve({ child, closed }));
    child.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ENOENT' ? 'not found' : err.code === 'EACCES' ? 'not executable' : err.message;
      reject(new Error(`${python}: ${why}`));
    });
  });
}

/** Resolves when `promise` settles (either way) or after `ms` milliseconds, whichever is first. */
export function within(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
