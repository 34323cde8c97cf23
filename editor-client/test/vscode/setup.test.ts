// One step from nothing to a chat (issue 25), in a real VS Code (code-server) with only the
// `.vsix` installed, no `modus.pythonPath`, and on the PATH a Python 3.11 without Modus (a fresh
// venv): the extension offers Set up Modus once (a notification, and the chat's card in place of
// the composer); a click creates Modus's own environment in the extension's global storage and
// installs the bundled wheel, the chat telling what it does; then the chat works. With pip's own
// configuration pointing at no index first: pip's words in the card, Retry and Show Log; then the
// configuration fixed and Retry. A reload with the stamp of an older version upgrades the
// environment by itself. And the offline `.vsix` (every dependency's wheel bundled) with the package
// index unreachable (pip's configuration files unread, its index a closed port, no proxy).
// Needs MODUS_CODE_SERVER_DIR and MODUS_VSIX (given none, the bundle is added to a copy:
// test/wheels.ts); MODUS_OFFLINE_VSIX is the offline one (`npm run package -- --target linux-x64`;
// else made from MODUS_VSIX the same way, with the wheels for CPython 3.11).
// MODUS_SETUP_SERVER_SCREENSHOT=docs/setup-server.png saves the chat's Set up Modus card.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe } from 'node:test';
import { installedVersion } from '../../src/envSetup';
import { BASE_PYTHON, offlineEnv, vsixManifest, vsixWithBundle } from '../wheels';
import { EXTENSION_ID, QUIET_SETTINGS, steps, Workbench } from './workbench';

const codeServerDir = process.env.MODUS_CODE_SERVER_DIR;
const vsix = process.env.MODUS_VSIX;
const shot = process.env.MODUS_SETUP_SERVER_SCREENSHOT;
const REPLY = 'Hello from the environment Modus set up.';
const SCRIPT = { turns: [{ text: REPLY }, { text: REPLY }] };

/** How long a set-up may take here (a busy 2-core machine; bench/firstrun.py times it). */
const SETUP_MS = 240_000;

/**
 * The environment of a user whose PATH has a Python 3.11 without Modus first (a fresh venv, made
 * without pip: an interpreter, not a Modus one) and nothing of this checkout's: no MODUS_PYTHON,
 * no virtual environment, no PYTHONPATH.
 */
function userEnv(root: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const bare = join(root, 'bare-python');
  if (!existsSync(bare)) execFileSync(BASE_PYTHON, ['-m', 'venv', '--without-pip', bare]);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!/^(MODUS_PYTHON|VIRTUAL_ENV|PYTHONPATH|PYTHONHOME|PYENV_VERSION)$/.test(k)) env[k] = v;
  env.PATH = [join(bare, 'bin'), ...(base.PATH ?? '').split(delimiter).filter((p) => !p.includes('.venv'))].join(delimiter);
  return env;
}

/** The extension's global storage (where its environment lives) in the workbench's user data. */
function storageOf(wb: Workbench): string {
  return join(wb.userData, 'User', 'globalStorage', EXTENSION_ID);
}

/** The texts the set-up card shows, as they come, until `done` holds. */
async function watchCard(wb: Workbench, done: () => Promise<boolean>, timeout = SETUP_MS): Promise<string[]> {
  const seen: string[] = [];
  const card = wb.chat.locator('#env');
  const start = Date.now();
  while (!(await done())) {
    if (Date.now() - start > timeout) throw new Error(`the set-up did not end; the card said: ${seen.join(' | ')}`);
    const text = await card.evaluate((e) => ((e as HTMLElement).hidden ? '' : [...e.querySelectorAll('.env-title, .env-step, .env-line')].map((c) => c.textContent).join(' / '))).catch(() => '');
    if (text && text !== seen[seen.length - 1]) seen.push(text);
    await new Promise((r) => setTimeout(r, 100));
  }
  return seen;
}

/** The Modus server processes' interpreters (their /proc exe links' targets, or argv[0]). */
function serverInterpreters(wb: Workbench): string[] {
  return wb.serverPids().map((pid) => {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    try {
      return `${argv0} -> ${readlinkSync(`/proc/${pid}/exe`)}`;
    } catch {
      return argv0;
    }
  });
}

describe('Set up Modus: from the .vsix alone to a chat (code-server)', { skip: !codeServerDir || !vsix ? 'MODUS_CODE_SERVER_DIR and MODUS_VSIX are not set' : false }, () => {
  after(() => {
    // what this file made besides the workbenches: the bare interpreter, pip's configuration, .vsix copies
    const root = join(tmpdir(), `modus-setup-${process.pid}`);
    for (const path of [`${root}-user`, `${root}-online.vsix`, `${root}-online.vsix.d`, `${root}-offline.vsix`, `${root}-offline.vsix.d`, join(tmpdir(), `modus-setup-pip-${process.pid}.conf`)]) {
      rmSync(path, { recursive: true, force: true });
    }
  });
  describe('with a package index (pip\'s own configuration): a failure in pip\'s words, Retry, the chat; an upgrade by itself', () => {
    let wb: Workbench;
    let pipConf: string;
    let online: string;
    before(async () => {
      const root = join(tmpdir(), `modus-setup-${process.pid}`);
      online = vsixWithBundle(vsix!, `${root}-online.vsix`);
      assert.ok(vsixManifest(online), 'the .vsix carries bundled/');
      pipConf = join(tmpdir(), `modus-setup-pip-${process.pid}.conf`);
      // pip's configuration, read by each pip: first no index at all (as a broken company mirror would)
      writeFileSync(pipConf, '[global]\nno-index = true\n');
      const env: NodeJS.ProcessEnv = { ...userEnv(`${root}-user`), PIP_CONFIG_FILE: pipConf };
      delete env.PIP_FIND_LINKS;
      wb = new Workbench({ codeServerDir: codeServerDir!, vsix: online, env, files: { '.script.json': JSON.stringify(SCRIPT) } });
      wb.writeSettings({ ...QUIET_SETTINGS, 'modus.models': { default: { provider: 'scripted', script: join(wb.workspace, '.script.json') } } });
      assert.equal(await installedVersion(join(`${root}-user`, 'bare-python', 'bin', 'python3')), undefined, 'the interpreter has no Modus');
      await wb.start();
    });
    const step = steps(() => wb);
    after(async () => {
      await wb?.stop();
    });

    step('one notification offers Set up Modus, and the chat shows it in place of the composer', async () => {
      const toast = wb.page.locator('.notification-toast', { hasText: 'Set up Modus' });
      await toast.first().waitFor({ timeout: 60_000 });
      const modus = (await wb.notifications()).filter((m) => /modus/i.test(m));
      assert.equal(modus.length, 1, `one notification: ${JSON.stringify(modus)}`);
      assert.match(modus[0], /Set up Modus creates one with python3 and installs Modus \d+\.\d+\.\d+ \(its dependencies from your package index\)/);
      await wb.showChat();
      const card = wb.chat.locator('#env');
      await card.waitFor();
      assert.equal(await card.getAttribute('data-state'), 'offer');
      assert.match((await card.textContent()) ?? '', /Set up Modus.*creates it with python3 in VS Code's storage for extensions/);
      assert.equal(await wb.chat.locator('#composer').isVisible(), false, 'no composer until Modus is set up');
      assert.equal(await wb.chat.locator('#starting').isVisible(), false);
      if (shot) await wb.page.screenshot({ path: shot });
      assert.deepEqual(wb.serverPids(), [], 'no server runs');
    });

    step("a click on Set up Modus: the environment is created; pip finds no index: its own words in the card, Retry and Show Log", async () => {
      await wb.chat.locator('#env button', { hasText: 'Set up Modus' }).click();
      const card = wb.chat.locator('#env');
      const seen = await watchCard(wb, async () => (await card.getAttribute('data-state')) === 'failed');
      assert.ok(seen.some((t) => /Creating the environment…/.test(t)), seen.join('\n'));
      assert.ok(seen.some((t) => /Installing Modus \d+\.\d+\.\d+ and its dependencies…/.test(t)), seen.join('\n'));
      assert.match((await card.locator('.env-title').textContent()) ?? '', /Modus could not be set up\./);
      const lines = (await card.locator('.env-lines').textContent()) ?? '';
      assert.match(lines, /ERROR: Could not find a version that satisfies the requirement/, "pip's own words");
      assert.deepEqual(await card.locator('.buttons button').allTextContents(), ['Retry', 'Show Log']);
      const toast = wb.page.locator('.notification-toast', { hasText: 'Modus could not be set up' });
      await toast.waitFor();
      assert.deepEqual((await toast.locator('.monaco-button').allTextContents()).filter((t) => t.trim()), ['Retry', 'Show Log']);
      await card.locator('button', { hasText: 'Show Log' }).click();
      await wb.page.locator('.part.panel .monaco-editor .view-lines', { hasText: 'ERROR: No matching distribution found' }).first().waitFor({ timeout: 30_000 });
      assert.equal(existsSync(join(storageOf(wb), 'env', 'modus-version')), false, 'no stamp after a failed install');
    });

    step('the configuration fixed, Retry: the progress, then a chat that works, its server run by the new environment', async () => {
      writeFileSync(pipConf, '[global]\n'); // the machine's own configuration (and PIP_* of its environment) apply again
      await wb.chat.locator('#env button', { hasText: 'Retry' }).click();
      const seen = await watchCard(wb, async () => wb.chat.locator('#input').isVisible());
      assert.ok(seen.some((t) => /Installing Modus \d+\.\d+\.\d+ and its dependencies… \/ \S/.test(t)), `pip's current line under the step: ${seen.join('\n')}`);
      assert.equal(seen.some((t) => /Creating the environment/.test(t)), false, 'the environment made before is kept');
      const stamp = readFileSync(join(storageOf(wb), 'env', 'modus-version'), 'utf8').trim();
      assert.equal(stamp, vsixManifest(online)!.version);
      await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 60_000 });
      await wb.send('Hello?');
      await wb.chat.locator('.msg.assistant', { hasText: REPLY }).waitFor({ timeout: 60_000 });
      const pythons = serverInterpreters(wb);
      assert.equal(pythons.length, 1, JSON.stringify(pythons));
      assert.ok(pythons[0].startsWith(join(storageOf(wb), 'env', 'bin', 'python')), JSON.stringify(pythons));
      assert.deepEqual(wb.extensionErrors(), [], 'no unhandled errors of the extension');
    });

    step('a reload with the stamp of an older Modus: the environment is upgraded by itself (no click), then the chat', async () => {
      const stampFile = join(storageOf(wb), 'env', 'modus-version');
      const stamp = () => (existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : ''); // none while pip runs
      writeFileSync(stampFile, '0.0.1\n');
      await wb.open();
      await wb.showChat();
      // The upgrade starts when the extension does, and (its dependencies there already) may be over
      // before the chat is drawn, or the chat drawn before the extension has read the stamp (the
      // composer shows until it has): the card, while it shows, says Upgrading, and the log says so.
      const seen = await watchCard(wb, async () => !['0.0.1', ''].includes(stamp()) && (await wb.chat.locator('#input').isVisible()));
      assert.ok(seen.every((t) => /Upgrading Modus to \d+\.\d+\.\d+…/.test(t)), seen.join('\n'));
      assert.match(wb.logs(), /modus: upgrading the environment \S+ from Modus 0\.0\.1 to \d+\.\d+\.\d+/);
      const modus = (await wb.notifications()).filter((m) => /Set up Modus/.test(m));
      assert.deepEqual(modus, [], 'nothing offered: an upgrade asks for no click');
      await wb.send('Still there?');
      await wb.chat.locator('.msg.assistant', { hasText: REPLY }).last().waitFor({ timeout: 60_000 });
      assert.deepEqual(wb.extensionErrors(), []);
    });
  });

  describe('offline: the offline .vsix with the package index unreachable', () => {
    let wb: Workbench;
    before(async () => {
      const root = join(tmpdir(), `modus-setup-${process.pid}`);
      const offline = process.env.MODUS_OFFLINE_VSIX ?? vsixWithBundle(vsix!, `${root}-offline.vsix`, { offline: true });
      assert.equal(vsixManifest(offline)?.offline, true, 'the offline .vsix says so');
      wb = new Workbench({ codeServerDir: codeServerDir!, vsix: offline, env: offlineEnv(userEnv(`${root}-user`)), files: { '.script.json': JSON.stringify(SCRIPT) } });
      wb.writeSettings({ ...QUIET_SETTINGS, 'modus.models': { default: { provider: 'scripted', script: join(wb.workspace, '.script.json') } } });
      await wb.start();
    });
    const step = steps(() => wb);
    after(async () => {
      await wb?.stop();
    });

    step('Set up Modus from the bundled wheels: the progress, Cancel, Set up Modus again, then a chat that works', async () => {
      await wb.page.locator('.notification-toast', { hasText: 'Set up Modus' }).first().waitFor({ timeout: 60_000 });
      await wb.showChat();
      const card = wb.chat.locator('#env');
      await card.waitFor();
      assert.match((await card.textContent()) ?? '', /from the wheels this extension carries \(no network needed\)/);
      await card.locator('button', { hasText: 'Set up Modus' }).click();
      // Cancel once pip has started: the offer again, no stamp; then Set up Modus goes through
      const first = await watchCard(wb, async () => /Installing Modus/.test((await card.locator('.env-step').textContent()) ?? ''));
      assert.ok(first.some((t) => /Creating the environment…/.test(t)), first.join('\n'));
      await card.locator('button', { hasText: 'Cancel' }).click();
      await wb.chat.locator('#env[data-state="offer"]').waitFor({ timeout: 30_000 });
      assert.equal(existsSync(join(storageOf(wb), 'env', 'modus-version')), false, 'no stamp after a cancelled install');
      assert.equal(await wb.chat.locator('#composer').isVisible(), false);
      await card.locator('button', { hasText: 'Set up Modus' }).click();
      const seen = await watchCard(wb, async () => wb.chat.locator('#input').isVisible());
      assert.equal(seen.some((t) => /Creating the environment/.test(t)), false, 'the environment made before is kept');
      assert.ok(seen.some((t) => /Installing Modus \d+\.\d+\.\d+ and its dependencies \(from the bundled wheels\)…/.test(t)), seen.join('\n'));
      await wb.modeStatus.filter({ hasText: 'Code' }).waitFor({ timeout: 60_000 });
      await wb.send('Hello offline?');
      await wb.chat.locator('.msg.assistant', { hasText: REPLY }).waitFor({ timeout: 60_000 });
      assert.ok(serverInterpreters(wb)[0]?.startsWith(join(storageOf(wb), 'env', 'bin', 'python')), JSON.stringify(serverInterpreters(wb)));
      assert.ok(readdirSync(join(storageOf(wb), 'env')).includes('modus-version'));
      assert.deepEqual(wb.extensionErrors(), []);
    });
  });
});
