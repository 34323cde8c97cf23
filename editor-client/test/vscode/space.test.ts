// A team space in a real VS Code (code-server, its Node extension host), driven from headless
// Chromium: a throwaway PostgreSQL cluster of the test's own (tests/pg_cluster.py), the
// workbench's Modus attached to it as alice, and a second Modus server attached as bob, driven
// over stdio as a plain JSON-RPC client (test/server.ts). The sidebar shows the space "team"
// connected and bob online; bob writes "@alice hello" in a space conversation; the workbench
// shows a notification naming bob, whose Open shows that conversation with bob's message under
// his name, and alice's own reply as "You".
// Needs MODUS_CODE_SERVER_DIR, MODUS_VSIX and PostgreSQL's initdb/pg_ctl (scripts/postgresql.sh).
// MODUS_SPACE_SCREENSHOT=path.png saves the workbench with the conversation (and path-notification.png
// with the notification).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { modusPython, REPO_DIR, ServerSession } from '../server';
import { scriptedWorkbench, steps, Workbench } from './workbench';

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const screenshot = process.env.MODUS_SPACE_SCREENSHOT;
const CONVERSATION = 'conv-team-vscode';
const HELLO = '@alice hello, the cache is in: have a look?';

/** Runs tests/pg_cluster.py's `call` in this repository's Python: a cluster in `folder`. */
function pgCluster(call: string, folder: string): string {
  const code = `import sys; from pathlib import Path; sys.path.insert(0, ${JSON.stringify(join(REPO_DIR, 'tests'))}); import pg_cluster; r = pg_cluster.${call}(Path(${JSON.stringify(folder)})); print(r or '')`;
  return execFileSync(modusPython(), ['-c', code], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

describe('a team space in a real VS Code (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  let wb: Workbench;
  let bob: ServerSession | undefined;
  let folder: string | undefined;
  let url = '';

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'modus-vscode-pg-'));
    url = pgCluster('cluster_url', folder);
    wb = await scriptedWorkbench({
      codeServerDir: codeServerDir!,
      vsix: vsix!,
      script: { turns: [{ text: 'Looking at it.' }, { text: 'Done.' }] },
      settings: {
        'modus.space': { url, name: 'team', member: 'alice', displayName: 'Alice' },
        'modus.members': [{ handle: 'bob', name: 'Bob' }],
      },
    });
  });
  after(async () => {
    await bob?.stop().catch(() => undefined);
    await wb?.stop();
    if (folder) pgCluster('stop', folder);
  });
  const step = steps(() => wb);
  const space = () => wb.chat.locator('#space');

  step('the sidebar shows the space "team", connected', async () => {
    await wb.showChat();
    await space().locator('.space-name', { hasText: 'team' }).waitFor({ timeout: 60_000 });
    await space().locator('.space-state.connected').waitFor({ timeout: 60_000 });
    assert.equal(await space().locator('.space-state').textContent(), 'connected');
  });

  step('a second server attaches as bob: the sidebar shows him online (within the 30 s refresh)', async () => {
    bob = await new ServerSession({
      turns: [{ text: 'Noted.' }, { text: 'Noted again.' }],
      settings: { space: { url, name: 'team', member: 'bob', displayName: 'Bob' }, members: [{ handle: 'alice', name: 'Alice' }] },
    }).start();
    const session = bob;
    await session.waitFor(
      () => session.updates.some((u) => u.kind === 'space_changed' && u.space.state === 'connected'),
      "bob's server connected to the space",
      60_000,
    );
    const online = space().locator('.space-member.online[data-handle="bob"]');
    await online.waitFor({ timeout: 45_000 });
    assert.match((await online.getAttribute('title')) ?? '', /^@bob .*: online$/);
  });

  step("bob writes @alice in a space conversation: a notification names him; Open shows the conversation, his message under his name", async () => {
    await bob!.api.send({ text: HELLO, conversationId: CONVERSATION });
    const toast = wb.page.locator('.notification-toast', { hasText: 'mentioned you' });
    await toast.waitFor({ timeout: 30_000 });
    const message = (await toast.locator('.notification-list-item-message').textContent()) ?? '';
    assert.match(message, /^Bob mentioned you: @alice hello, the cache is in: have a look\?$/);
    const open = toast.getByRole('button', { name: 'Open' });
    await open.waitFor();
    if (screenshot) {
      await wb.page.waitForTimeout(500); // the toast done sliding in
      await wb.page.screenshot({ path: screenshot.replace(/(\.png)?$/, '-notification.png') });
    }
    await open.click();
    const theirs = wb.chat.locator('.msg.user.colleague[data-member="bob"]');
    await theirs.waitFor({ timeout: 30_000 });
    assert.equal(await theirs.locator('.who').textContent(), 'Bob');
    assert.equal(await theirs.locator('.text').textContent(), HELLO);
    assert.equal(await theirs.getByRole('button', { name: 'Edit' }).count(), 0, "no Edit & resend of a colleague's message");
  });

  step('alice answers in the same conversation: her message is "You", and bob sees it live as alice\'s', async () => {
    const session = bob!;
    const seen = session.updates.length;
    await wb.send('On it.');
    const mine = wb.chat.locator('.msg.user:not(.colleague)', { hasText: 'On it.' });
    await mine.waitFor({ timeout: 30_000 });
    assert.equal(await mine.locator('.who').textContent(), 'You');
    await session.waitFor(
      () => session.updates.slice(seen).some((u) => u.kind === 'message' && u.role === 'user' && u.text === 'On it.' && u.member === 'alice'),
      "alice's message at bob's, with her handle",
      30_000,
    );
    if (screenshot) await wb.page.screenshot({ path: screenshot });
  });
});
