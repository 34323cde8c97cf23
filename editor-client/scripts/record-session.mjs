// Records the demo session from the real server into test/fixtures/session.json: every action
// the chat view gets (mode list, state, modus/update notifications, approvals and answers).
// Needs `npm run compile-tests`. Interpreter: $MODUS_PYTHON, else ../.venv/bin/python.
import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientDir, repoDir } from './python.mjs';

const require = createRequire(import.meta.url);
const { ServerSession, DEMO_TURNS, DEMO_REQUEST } = require(join(clientDir, 'out', 'test', 'server.js'));

const out = process.argv[2] ?? join(clientDir, 'test', 'fixtures', 'session.json');
// The server's own demo script and request when present, else the tests' demo turns.
const demoScript = join(repoDir, 'server', 'demo', 'script.yaml');
const options = existsSync(demoScript)
  ? {
      files: { 'script.yaml': readFileSync(demoScript, 'utf8') },
      settings: { models: { default: { provider: 'scripted', script: 'script.yaml' } } },
    }
  : { turns: DEMO_TURNS };
const request = existsSync(demoScript) ? 'Build a tiny greeting app: design it first, then write the code.' : DEMO_REQUEST;
const session = await new ServerSession(options).start();
try {
  session.record({ type: 'modes', modes: await session.api.modes() });
  session.record({ type: 'state', state: await session.api.state() });
  await session.chat(request);
  const data = {
    source: 'recorded from the real server by scripts/record-session.mjs (the demo scenario of server/demo, every approval approved)',
    actions: session.actions,
  };
  writeFileSync(out, JSON.stringify(data, null, 1) + '\n');
  console.log(`wrote ${out}: ${session.actions.length} actions`);
} finally {
  await session.stop();
}
