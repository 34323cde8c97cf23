// `npm run package [-- --target <vs code target>] [-- --out <file.vsix>]`: the .vsix that carries
// the server. Builds the Modus wheel from the repository (pyproject.toml's version, which must be
// package.json's), puts it in bundled/, and with a target every dependency's wheel for that
// platform and CPython 3.11-3.13 in bundled/wheels/ (scripts/wheels.py), then runs vsce.
//
//   bundled/modus-<version>-py3-none-any.whl   always
//   bundled/manifest.json                      always: {version, protocol, offline, target, pythons}
//   bundled/wheels/*.whl                       with --target: `pip install --no-index
//                                              --find-links bundled/wheels bundled/modus-….whl`
//
// Writes modus.vsix, or modus-<target>.vsix. The Python is $MODUS_PYTHON, else ../.venv/bin/python,
// else python3; it builds with `python -m build` when it has it, else `pip wheel --no-deps`.
// vsce must package without a warning: one fails the build.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { clientDir, modusPython, repoDir } from './python.mjs';

const PYTHONS = ['3.11', '3.12', '3.13'];
/** vsce's targets that have a Python to run the server (`web` has none). */
const TARGETS = ['win32-x64', 'win32-arm64', 'linux-x64', 'linux-arm64', 'linux-armhf', 'darwin-x64', 'darwin-arm64', 'alpine-x64', 'alpine-arm64'];

function fail(message) {
  console.error(`package: ${message}`);
  process.exit(1);
}

function run(command, args, what, options = {}) {
  const done = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20, ...options });
  if (done.error) fail(`${what}: cannot run ${command}: ${done.error.message}`);
  if (done.status !== 0) fail(`${what} failed (${command} ${args.join(' ')}):\n${(done.stdout ?? '').slice(-4000)}${(done.stderr ?? '').slice(-4000)}`);
  return done;
}

function args(argv) {
  const out = { target: null, out: null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    const value = () => inline ?? argv[++i] ?? fail(`${flag} needs a value`);
    if (flag === '--target') out.target = value();
    else if (flag === '--out') out.out = resolve(value());
    else fail(`unknown argument ${argv[i]} (--target <${TARGETS.join('|')}>, --out <file.vsix>)`);
  }
  if (out.target !== null && !TARGETS.includes(out.target)) {
    fail(`'${out.target}' is no target Modus can run on: ${TARGETS.join(', ')}${out.target === 'web' ? ' (the web has no Python)' : ''}`);
  }
  return out;
}

/** [project] version of pyproject.toml: the one source of the version. */
function pyprojectVersion() {
  const text = readFileSync(join(repoDir, 'pyproject.toml'), 'utf8');
  const project = text.split(/^\[project\]\s*$/m)[1]?.split(/^\[/m)[0] ?? '';
  const found = project.match(/^version\s*=\s*"([^"]+)"/m);
  if (!found) fail('pyproject.toml has no [project] version');
  return found[1];
}

function protocolVersion() {
  const found = readFileSync(join(repoDir, 'protocol', 'names.py'), 'utf8').match(/^PROTOCOL_VERSION\s*=\s*(\d+)/m);
  if (!found) fail('protocol/names.py has no PROTOCOL_VERSION');
  return Number(found[1]);
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

function buildWheel(python, version) {
  const out = mkdtempSync(join(tmpdir(), 'modus-wheel-'));
  const hasBuild = spawnSync(python, ['-c', 'import build'], { stdio: 'ignore' }).status === 0;
  if (hasBuild) {
    // the sdist, then the wheel built from it: nothing stale of an earlier build/ gets in
    run(python, ['-m', 'build', '--outdir', out, repoDir], 'python -m build');
  } else {
    rmSync(join(repoDir, 'build'), { recursive: true, force: true }); // setuptools' scratch folder (git-ignored)
    run(python, ['-m', 'pip', 'wheel', '--quiet', '--no-deps', '--wheel-dir', out, repoDir], 'pip wheel');
  }
  const name = `modus-${version}-py3-none-any.whl`;
  if (!existsSync(join(out, name))) fail(`the build made ${readdirSync(out).join(', ') || 'nothing'}, not ${name}`);
  return { path: join(out, name), name, cleanup: () => rmSync(out, { recursive: true, force: true }) };
}

function main() {
  const { target, out: outArg } = args(process.argv.slice(2));
  const version = pyprojectVersion();
  const manifest = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8'));
  if (manifest.version !== version) {
    fail(`editor-client/package.json's version ${manifest.version} is not pyproject.toml's ${version} ` +
      `(pyproject.toml is the source: set package.json's "version" to "${version}", then npm install --package-lock-only)`);
  }
  const python = modusPython();
  const started = Date.now();

  const wheel = buildWheel(python, version);
  const bundled = join(clientDir, 'bundled');
  rmSync(bundled, { recursive: true, force: true });
  mkdirSync(bundled);
  copyFileSync(wheel.path, join(bundled, wheel.name));
  wheel.cleanup();
  console.log(`package: bundled/${wheel.name} (${mb(statSync(join(bundled, wheel.name)).size)})`);

  if (target) {
    const wheels = join(bundled, 'wheels');
    run(python, [join(clientDir, 'scripts', 'wheels.py'), '--target', target, '--dest', wheels, join(bundled, wheel.name)],
      `the wheels for ${target}`, { stdio: ['ignore', 'inherit', 'pipe'] });
    const files = readdirSync(wheels);
    const size = files.reduce((sum, f) => sum + statSync(join(wheels, f)).size, 0);
    console.log(`package: bundled/wheels/: ${files.length} wheels for ${target}, CPython ${PYTHONS.join(', ')} (${mb(size)})`);
  }
  const bundle = { version, protocol: protocolVersion(), offline: Boolean(target), target, pythons: PYTHONS };
  writeFileSync(join(bundled, 'manifest.json'), JSON.stringify(bundle, null, 2) + '\n');

  const out = outArg ?? join(clientDir, target ? `modus-${target}.vsix` : 'modus.vsix');
  const vsce = join(clientDir, 'node_modules', '.bin', process.platform === 'win32' ? 'vsce.cmd' : 'vsce');
  const packaged = run(vsce, ['package', '--no-dependencies', '--no-rewrite-relative-links', ...(target ? ['--target', target] : []), '--out', out],
    'vsce package', { cwd: clientDir });
  const said = `${packaged.stdout}\n${packaged.stderr}`;
  if (/WARNING/.test(said)) fail(`vsce warned:\n${said}`);

  // what the .vsix holds: the wheel, the manifest, and with a target the wheels
  const listed = run(python, ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', out], 'reading the .vsix').stdout.split('\n');
  for (const need of [`extension/bundled/${wheel.name}`, 'extension/bundled/manifest.json']) {
    if (!listed.includes(need)) fail(`${out} lacks ${need}`);
  }
  const inside = listed.filter((f) => f.startsWith('extension/bundled/wheels/')).length;
  if (Boolean(target) !== inside > 0) fail(`${out} holds ${inside} dependency wheels${target ? '' : ' without a target'}`);
  console.log(`package: ${out} (${mb(statSync(out).size)}${target ? `, ${target}, offline` : ''}) in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main();
