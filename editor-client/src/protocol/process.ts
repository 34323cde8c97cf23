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

  private lines(): string[] {
    return this.text
      .split(/\r?\n/)
      .map((l) => l.trimEnd())
      .filter((l) => l.trim());
  }

  /**
   * The line that says why: the last exception or error line (`ModuleNotFoundError: …`,
   * `/usr/bin/python3: No module named server`), else the last line that is not a log line of
   * the server's at DEBUG or INFO; undefined when there is none.
   */
  cause(): string | undefined {
    const lines = this.lines().map((l) => l.trim());
    const error = [...lines].reverse().find(isErrorLine);
    const line = error ?? [...lines].reverse().find((l) => !QUIET_LOG_LINE.test(l));
    if (!line) return undefined;
    return line.length > 300 ? line.slice(0, 299) + '…' : line;
  }

  /**
   * The last error the process wrote, as at most `max` lines: the end of its last traceback
   * (the innermost frames and the exception), or its last error line; none when it wrote no
   * error (a process killed while all was well said nothing about it).
   */
  errorLines(max = 6): string[] {
    const lines = this.lines();
    let last = lines.length - 1;
    while (last >= 0 && !isErrorLine(lines[last].trim())) last--;
    if (last < 0) return [];
    let first = last;
    while (first > 0 && first > last - max + 1 && !LOG_LINE.test(lines[first]) && !lines[first].startsWith('Traceback ')) first--;
    return lines.slice(first, last + 1).map((l) => (l.length > 300 ? l.slice(0, 299) + '…' : l));
  }
}

/** An exception, an error: a Python exception line, an ERROR or CRITICAL log line, `No module named`. */
function isErrorLine(line: string): boolean {
  return /^[\w.]*(Error|Exception)\b|No module named|: error:|^error:|^\S+ \S+ (ERROR|CRITICAL) /i.test(line);
}

/** A line of the server's log (`2026-12-02 03:52:27,685 INFO server.lsp.server: …`). */
const LOG_LINE = /^\d{4}-\d\d-\d\d [\d:,.]+ [A-Z]+ /;
const QUIET_LOG_LINE = /^\d{4}-\d\d-\d\d [\d:,.]+ (DEBUG|INFO) /;

/** How a process ended, as its `exit` event told. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** "killed by SIGKILL", "exited with code 1". */
export function describeExit(exit: ExitStatus | undefined): string {
  if (exit?.signal) return `killed by ${exit.signal}`;
  if (exit && exit.code !== null) return `exited with code ${exit.code}`;
  return 'exited';
}

export interface ServerProcess {
  child: ChildProcess;
  /** resolves when the process has exited and its stderr is read to the end */
  closed: Promise<void>;
  /** how it ended, once it has */
  exited: Promise<ExitStatus>;
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
    const exited = new Promise<ExitStatus>((done) => child.once('exit', (code, signal) => done({ code, signal })));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('spawn', () => resolve({ child, closed, exited }));
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
