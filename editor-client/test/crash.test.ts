// When the server stops by itself: how its end is told (the exit, the last error lines of a real
// process), the restarts' backoff and their limit on a given clock, and what the chat's view makes
// of a stop (no spinner, no open question, a note once it runs again).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Update } from '../src/protocol/generated';
import { describeExit, spawnServer, StderrTail } from '../src/protocol/process';
import { RESTARTS, Restarts } from '../src/protocol/restarts';
import { Action, describe as lines, replay } from '../src/protocol/view';
import { modusPython } from './server';

const C = 'conv-1';
const up = (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId: C, ...u } as Update });

const LOG = [
  '2026-12-02 03:52:27,685 INFO server.lsp.server: workspace /tmp/ws',
  '2026-12-02 03:52:28,001 INFO server.agent: turn started',
].join('\n');
const TRACEBACK = [
  '2026-12-02 03:53:00,120 ERROR server.lsp.run: the server failed',
  'Traceback (most recent call last):',
  '  File "/srv/server/lsp/run.py", line 80, in main',
  '    run()',
  '  File "/srv/server/state/store.py", line 12, in open',
  '    raise sqlite3.OperationalError("disk I/O error")',
  'sqlite3.OperationalError: disk I/O error',
].join('\n');

describe('how a stopped server is told', () => {
  it('names the signal or the exit code', () => {
    assert.equal(describeExit({ code: null, signal: 'SIGKILL' }), 'killed by SIGKILL');
    assert.equal(describeExit({ code: 1, signal: null }), 'exited with code 1');
    assert.equal(describeExit({ code: 0, signal: null }), 'exited with code 0');
    assert.equal(describeExit(undefined), 'exited');
  });

  it('quotes the end of the last traceback, never an INFO line', () => {
    const tail = new StderrTail();
    tail.push(LOG + '\n');
    assert.deepEqual(tail.errorLines(), [], 'a server killed while all was well wrote no error');
    assert.equal(tail.cause(), undefined, 'a log line at INFO says nothing of why');
    tail.push(TRACEBACK + '\n');
    assert.deepEqual(tail.errorLines(), TRACEBACK.split('\n').slice(1));
    assert.deepEqual(tail.errorLines(3), TRACEBACK.split('\n').slice(4));
    assert.equal(tail.cause(), 'sqlite3.OperationalError: disk I/O error');
    tail.push('2026-12-02 03:53:01,000 ERROR server.mcp: docs: the MCP server exited\n');
    assert.deepEqual(tail.errorLines(), ['2026-12-02 03:53:01,000 ERROR server.mcp: docs: the MCP server exited']);
  });

  it('of a real process: the exit code and its traceback, or the signal that killed it', async () => {
    // a `server` package of its own in the cwd: spawnServer runs `python -m server` there
    const dir = mkdtempSync(join(tmpdir(), 'modus-crash-'));
    mkdirSync(join(dir, 'server'));
    writeFileSync(join(dir, 'server', '__init__.py'), '');
    writeFileSync(
      join(dir, 'server', '__main__.py'),
      'import os, time\nif "CRASH" in os.environ:\n    raise RuntimeError("the state is gone")\ntime.sleep(60)\n',
    );
    const env = { PATH: process.env.PATH, CRASH: '1' };
    const failing = new StderrTail();
    const crashed = await spawnServer(modusPython(), { cwd: dir, env }, failing);
    assert.equal(describeExit(await crashed.exited), 'exited with code 1');
    await crashed.closed;
    assert.equal(failing.errorLines().at(-1), 'RuntimeError: the state is gone');
    assert.match(failing.errorLines()[0], /^Traceback|^ {2}File/);

    const quiet = new StderrTail();
    const running = await spawnServer(modusPython(), { cwd: dir, env: { PATH: process.env.PATH } }, quiet);
    running.child.kill('SIGKILL');
    assert.equal(describeExit(await running.exited), 'killed by SIGKILL');
    await running.closed;
    assert.deepEqual(quiet.errorLines(), []);
  });
});

describe('restarts after a stop', () => {
  it('wait 1, 2, 4, 8, 16 s; the sixth stop within 3 minutes is one too many', () => {
    let now = 0;
    const restarts = new Restarts(RESTARTS, () => now);
    const seen = [];
    for (let i = 0; i < 6; i++) {
      seen.push(restarts.stopped());
      now += 10_000; // each server ran 10 s
    }
    assert.deepEqual(seen, [
      { attempt: 1, of: 5, delayMs: 1000 },
      { attempt: 2, of: 5, delayMs: 2000 },
      { attempt: 3, of: 5, delayMs: 4000 },
      { attempt: 4, of: 5, delayMs: 8000 },
      { attempt: 5, of: 5, delayMs: 16000 },
      null,
    ]);
    assert.equal(restarts.window(), '3 minutes');
  });

  it('a stop long after the others starts the count again; so does a start the user asked for', () => {
    let now = 0;
    const restarts = new Restarts({ delaysMs: [5, 10], windowMs: 1000 }, () => now);
    assert.equal(restarts.stopped()?.delayMs, 5);
    now = 500;
    assert.equal(restarts.stopped()?.delayMs, 10);
    now = 1200; // the first stop is out of the window, the second still in
    assert.deepEqual(restarts.stopped(), { attempt: 2, of: 2, delayMs: 10 });
    assert.equal(restarts.stopped(), null);
    restarts.reset(); // Retry
    assert.deepEqual(restarts.stopped(), { attempt: 1, of: 2, delayMs: 5 });
    assert.equal(restarts.window(), '1 seconds');
  });
});

describe('the view when the server stops', () => {
  const running: Action[] = [
    { type: 'server', server: { status: 'running' } },
    up({ kind: 'turn_started', turnId: 't1', agent: 'modus' }),
    up({ kind: 'message', turnId: 't1', role: 'user', text: 'write it' }),
    up({ kind: 'message_delta', turnId: 't1', text: 'Writing' }),
    { type: 'approval', id: 'a1', request: { kind: 'tool', title: 'Create a.txt?', detail: '+x', tool: 'write_to_file', agent: 'modus' } },
  ];
  const stopped: Action = {
    type: 'server',
    server: { status: 'stopped', error: 'The Modus server stopped (killed by SIGKILL)', lines: [], restart: { attempt: 1, of: 5, delayMs: 1000 } },
  };

  it('no turn runs (the spinner stops), no stream stays open, no question stays asked', () => {
    const before = replay(running);
    assert.deepEqual(before.running, ['t1']);
    const view = replay([stopped], before);
    assert.deepEqual(view.running, []);
    assert.deepEqual(
      view.entries.map((e) => (e.type === 'assistant' ? [e.type, e.streaming] : e.type === 'approval' ? [e.type, e.status] : [e.type])),
      [['user'], ['assistant', false], ['approval', 'cancelled']],
    );
    assert.deepEqual(view.server, stopped.type === 'server' && stopped.server);
  });

  it('the same when it is restarted by hand; a server that runs changes nothing', () => {
    const view = replay([{ type: 'server', server: { status: 'starting' } }], replay(running));
    assert.deepEqual(view.running, []);
    const again = replay([{ type: 'server', server: { status: 'running' } }], view);
    assert.equal(again.entries, view.entries);
  });

  it('once it runs again the chat says so, after the conversation read again', () => {
    const view = replay([
      ...running,
      stopped,
      { type: 'server', server: { status: 'running' } },
      { type: 'history', conversationId: C, messages: [{ id: 'm1', role: 'user', text: 'write it', metadata: {} }] },
      { type: 'note', text: 'The Modus server stopped (killed by SIGKILL) and was started again.' },
    ]);
    assert.deepEqual(lines(view), ['user: write it', 'system: The Modus server stopped (killed by SIGKILL) and was started again.']);
  });
});
