// One request at a time (src/serial.ts): calls while one runs make exactly one more run after it,
// and a run that fails does not leave it stuck.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { oneAtATime } from '../src/serial';

describe('oneAtATime', () => {
  it('runs once more after the running one, however many calls came meanwhile', async () => {
    let runs = 0;
    let release: () => void = () => {};
    const refresh = oneAtATime(async () => {
      runs += 1;
      if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    const first = refresh();
    await Promise.all([refresh(), refresh(), refresh()]); // while the first waits: queued, not sent
    assert.equal(runs, 1);
    release();
    await first;
    assert.equal(runs, 2);
  });

  it('runs again after a run that threw', async () => {
    let runs = 0;
    const refresh = oneAtATime(async () => {
      runs += 1;
      if (runs === 1) throw new Error('the server went away');
    });
    await assert.rejects(refresh(), /went away/);
    await refresh();
    assert.equal(runs, 2);
  });
});
