// Modus's own environment without VS Code (src/envSetup.ts): the version check, what the bundle
// and the stamp say, and the steps with a real python — a virtual environment created in a
// temporary folder, a small local wheel installed offline, an upgrade to the next version in the
// same environment, pip's own words when a dependency cannot be found, an interpreter too old.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  atLeast,
  CANCELLED,
  checkPython,
  envPaths,
  envState,
  installedVersion,
  lastLines,
  offlineMismatch,
  parsePythonVersion,
  pipArgs,
  readBundle,
  setUp,
  SetupError,
  SetupProgress,
} from '../src/envSetup';
import { BASE_PYTHON, offlineEnv, tinyWheel } from './wheels';

describe('the interpreter: Python 3.11 or newer', () => {
  it('reads what sys.version_info[:2] prints', () => {
    assert.deepEqual(parsePythonVersion('(3, 11)\n'), [3, 11]);
    assert.deepEqual(parsePythonVersion('(3,13)'), [3, 13]);
    assert.equal(parsePythonVersion('Python 3.11.7'), undefined);
    assert.equal(parsePythonVersion(''), undefined);
  });

  it('compares with 3.11', () => {
    const cases: [[number, number], boolean][] = [
      [[3, 11], true],
      [[3, 13], true],
      [[4, 0], true],
      [[3, 10], false],
      [[3, 9], false],
      [[2, 7], false],
    ];
    for (const [version, ok] of cases) assert.equal(atLeast(version), ok, version.join('.'));
  });

  it('checks a real interpreter, a missing one and an old one', async () => {
    const real = await checkPython(BASE_PYTHON);
    assert.equal(real.ok, true, JSON.stringify(real));
    const missing = await checkPython('/nonexistent/python3');
    assert.equal(missing.ok, false);
    assert.equal(!missing.ok && missing.reason, 'missing');
    const dir = mkdtempSync(join(tmpdir(), 'modus-oldpy-'));
    const old = join(dir, 'python');
    writeFileSync(old, '#!/bin/sh\necho "(3, 9)"\n');
    chmodSync(old, 0o755);
    const checked = await checkPython(old);
    assert.equal(!checked.ok && checked.reason, 'old');
    assert.match(!checked.ok ? checked.message : '', /needs Python 3\.11 or newer; .* is Python 3\.9/);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('the bundle and the stamp', () => {
  it('reads bundled/manifest.json and the wheel it names; none without them', () => {
    const ext = mkdtempSync(join(tmpdir(), 'modus-ext-'));
    assert.equal(readBundle(ext), undefined, 'no bundled/: a checkout build');
    mkdirSync(join(ext, 'bundled', 'wheels'), { recursive: true });
    writeFileSync(join(ext, 'bundled', 'manifest.json'), JSON.stringify({ version: '1.2.3', protocol: 4, offline: true, target: 'linux-x64', pythons: ['3.11', '3.12'] }));
    assert.equal(readBundle(ext), undefined, 'the manifest names a wheel that is not there');
    writeFileSync(join(ext, 'bundled', 'modus-1.2.3-py3-none-any.whl'), '');
    const bundle = readBundle(ext)!;
    assert.equal(bundle.version, '1.2.3');
    assert.equal(bundle.offline, true);
    assert.equal(bundle.wheels, join(ext, 'bundled', 'wheels'));
    assert.deepEqual([bundle.protocol, bundle.target, bundle.pythons], [4, 'linux-x64', ['3.11', '3.12']]);
    assert.deepEqual(pipArgs(bundle), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--no-index', '--find-links', bundle.wheels, bundle.wheel]);
    assert.equal(offlineMismatch(bundle, [3, 12]), undefined);
    assert.match(offlineMismatch(bundle, [3, 13]) ?? '', /wheels for Python 3\.11, 3\.12; the interpreter is Python 3\.13/);
    const online = { ...bundle, offline: false, wheels: undefined };
    assert.deepEqual(pipArgs(online), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', online.wheel], 'online: the index is pip\'s own');
    rmSync(ext, { recursive: true, force: true });
  });

  it('tells ready, outdated and missing from the stamp and the python, without a process', () => {
    const storage = mkdtempSync(join(tmpdir(), 'modus-storage-'));
    const paths = envPaths(storage, 'linux');
    assert.deepEqual(paths, { dir: join(storage, 'env'), python: join(storage, 'env', 'bin', 'python'), stamp: join(storage, 'env', 'modus-version') });
    assert.equal(envPaths(storage, 'win32').python, join(storage, 'env', 'Scripts', 'python.exe'));
    assert.equal(envState(paths, '0.1.0'), 'missing');
    mkdirSync(join(paths.dir, 'bin'), { recursive: true });
    writeFileSync(paths.python, '');
    assert.equal(envState(paths, '0.1.0'), 'missing', 'no stamp: an install that did not end');
    writeFileSync(paths.stamp, '0.1.0\n');
    assert.equal(envState(paths, '0.1.0'), 'ready');
    assert.equal(envState(paths, '0.2.0'), 'outdated');
    rmSync(paths.python);
    assert.equal(envState(paths, '0.1.0'), 'missing', 'the stamp without its python');
    rmSync(storage, { recursive: true, force: true });
  });

  it('keeps the last lines of an output', () => {
    assert.deepEqual(lastLines('a\n\nb\r\nc\n\n', 2), ['b', 'c']);
  });
});

describe('the steps with a real python: a venv in a temporary folder, a local wheel installed', () => {
  let root: string;
  const wheelsDir = () => join(root, 'wheels');
  const bundle = (version: string, extra: { requires?: string[] } = {}) => {
    const dir = join(root, `bundled-${version}`);
    return { dir, version, wheel: tinyWheel(dir, 'modus', version, { module: 'modus_tiny', ...extra }), offline: true, wheels: wheelsDir() };
  };
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'modus-envsetup-'));
    mkdirSync(wheelsDir());
    tinyWheel(wheelsDir(), 'modus-tiny-dep', '1.0.0');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('creates the environment and installs the wheel (its dependency from the bundled wheels, no index): the stamp names the version', async () => {
    const paths = envPaths(join(root, 'storage'));
    const seen: SetupProgress[] = [];
    const log: string[] = [];
    const result = await setUp({ python: BASE_PYTHON, bundle: bundle('0.1.0', { requires: ['modus-tiny-dep'] }), paths, env: offlineEnv(), progress: (p) => seen.push(p), log: (l) => log.push(l) });
    assert.equal(result.created, true);
    assert.deepEqual([...new Set(seen.map((p) => p.step))], ['check', 'venv', 'install']);
    assert.equal(seen.find((p) => p.step === 'venv')!.message, 'Creating the environment…');
    assert.equal(seen.find((p) => p.step === 'install')!.message, 'Installing Modus 0.1.0 and its dependencies (from the bundled wheels)…');
    assert.ok(seen.some((p) => p.step === 'install' && /modus-tiny-dep/.test(p.line ?? '')), "pip's lines come as progress");
    assert.ok(log.some((l) => /Successfully installed .*modus-0\.1\.0/.test(l)), log.join('\n'));
    assert.equal(readFileSync(paths.stamp, 'utf8'), '0.1.0\n');
    assert.equal(envState(paths, '0.1.0'), 'ready');
    assert.equal(await installedVersion(paths.python), '0.1.0');
  });

  it('upgrades that environment to the next version in place (no new venv)', async () => {
    const paths = envPaths(join(root, 'storage'));
    assert.equal(envState(paths, '0.2.0'), 'outdated');
    const seen: SetupProgress[] = [];
    const result = await setUp({ python: '/nonexistent/python3', bundle: bundle('0.2.0'), paths, env: offlineEnv(), progress: (p) => seen.push(p) });
    assert.equal(result.created, false);
    assert.ok(!seen.some((p) => p.step === 'venv'));
    assert.equal(envState(paths, '0.2.0'), 'ready');
    assert.equal(await installedVersion(paths.python), '0.2.0');
  });

  it("a dependency that cannot be found: pip's own words, no stamp", async () => {
    const paths = envPaths(join(root, 'storage'));
    await assert.rejects(
      setUp({ python: BASE_PYTHON, bundle: bundle('0.3.0', { requires: ['modus-not-there'] }), paths, env: offlineEnv() }),
      (err: unknown) => {
        assert.ok(err instanceof SetupError);
        assert.equal(err.step, 'install');
        assert.match(err.message, /pip could not install Modus 0\.3\.0/);
        assert.ok(err.lines.some((l) => /ERROR: .*modus-not-there/.test(l)), err.lines.join('\n'));
        return true;
      },
    );
    assert.equal(existsSync(paths.stamp), false);
    assert.equal(envState(paths, '0.2.0'), 'missing', 'a failed install leaves no stamp');
  });

  it('cancelled while pip installs: pip stopped, no stamp, the environment kept for the next set-up', async () => {
    const paths = envPaths(join(root, 'cancelled'));
    const cancel = new AbortController();
    const seen: string[] = [];
    await assert.rejects(
      setUp({
        python: BASE_PYTHON, bundle: bundle('0.4.0'), paths, env: offlineEnv(), signal: cancel.signal,
        progress: (p) => {
          seen.push(p.step);
          if (p.step === 'install') cancel.abort(); // pip has just been started
        },
      }),
      (err: unknown) => err instanceof SetupError && err.step === 'cancelled' && err.message === CANCELLED,
    );
    assert.deepEqual([...new Set(seen)], ['check', 'venv', 'install']);
    assert.equal(existsSync(paths.stamp), false);
    assert.equal(await installedVersion(paths.python), undefined, 'pip was stopped before it installed anything');
    const again = await setUp({ python: BASE_PYTHON, bundle: bundle('0.4.0'), paths, env: offlineEnv() });
    assert.equal(again.created, false, 'the environment made before is kept');
    assert.equal(envState(paths, '0.4.0'), 'ready');
  });

  it('cancelled before it starts: nothing is created', async () => {
    const paths = envPaths(join(root, 'never'));
    const cancel = new AbortController();
    cancel.abort();
    await assert.rejects(setUp({ python: BASE_PYTHON, bundle: bundle('0.4.0'), paths, env: offlineEnv(), signal: cancel.signal }), (err: unknown) => err instanceof SetupError && err.step === 'cancelled');
    assert.equal(existsSync(paths.dir), false);
  });

  it('an interpreter that is not there: nothing created', async () => {
    const paths = envPaths(join(root, 'nothing'));
    await assert.rejects(setUp({ python: '/nonexistent/python3', bundle: bundle('0.1.0'), paths, env: offlineEnv() }), (err: unknown) => {
      assert.ok(err instanceof SetupError);
      assert.equal(err.step, 'check');
      assert.equal(err.python?.ok === false && err.python.reason, 'missing');
      return true;
    });
    assert.equal(existsSync(paths.dir), false);
  });
});
