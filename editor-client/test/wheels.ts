// Wheels and bundles for the tests and the bench of Modus's own environment (src/envSetup.ts):
// a tiny wheel written by hand (a module and its dist-info), and the `bundled/` folder a packaged
// `.vsix` carries — the Modus wheel built from this checkout (`pip wheel --no-deps`), its
// manifest, and for an offline bundle every dependency's wheel (`pip download`) — as the
// packaging lays it out (bundled/modus-<version>-py3-none-any.whl, bundled/wheels/,
// bundled/manifest.json). Test helpers, not the product's packaging.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_DIR } from './server';

/** A Python 3.11+ without Modus to build with (the machine's `python3`). */
export const BASE_PYTHON = process.env.MODUS_BASE_PYTHON ?? 'python3';

const WHEEL_PY = String.raw`
import base64, hashlib, sys, zipfile
out, name, version, module, requires = sys.argv[1:6]
dist = f"{name.replace('-', '_')}-{version}.dist-info"
files = {
    f"{module}/__init__.py": f"VERSION = {version!r}\n",
    f"{dist}/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s" % (name, version, "".join(f"Requires-Dist: {r}\n" for r in requires.split(",") if r)),
    f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: modus-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(out, "w") as z:
    for path, text in files.items():
        data = text.encode()
        z.writestr(path, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    z.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
`;

/** A wheel `<name>-<version>-py3-none-any.whl` in `dir` with one module (`module`), requiring `requires`. */
export function tinyWheel(dir: string, name: string, version: string, options: { module?: string; requires?: string[] } = {}): string {
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${name.replace(/-/g, '_')}-${version}-py3-none-any.whl`);
  execFileSync(BASE_PYTHON, ['-c', WHEEL_PY, out, name, version, options.module ?? name.replace(/-/g, '_'), (options.requires ?? []).join(',')]);
  return out;
}

/** The Modus wheel of this checkout and the bundled/ layout, in `dir` (its `bundled/`); returns the bundled folder. */
export function modusBundle(dir: string, options: { offline?: boolean } = {}): string {
  const bundled = join(dir, 'bundled');
  mkdirSync(bundled, { recursive: true });
  let wheel = readdirSync(bundled).find((f) => /^modus-.*-py3-none-any\.whl$/.test(f));
  if (!wheel) {
    execFileSync(BASE_PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--disable-pip-version-check', '-q', '-w', bundled, REPO_DIR], { stdio: 'pipe' });
    wheel = readdirSync(bundled).find((f) => /^modus-.*-py3-none-any\.whl$/.test(f))!;
  }
  const version = /^modus-(.*)-py3-none-any\.whl$/.exec(wheel)![1];
  const wheels = join(bundled, 'wheels');
  if (options.offline && !existsSync(wheels)) {
    // the dependencies' wheels for linux-x64 and CPython 3.11, from this machine's package index
    execFileSync(
      BASE_PYTHON,
      ['-m', 'pip', 'download', '-q', '--disable-pip-version-check', '--only-binary=:all:', '--implementation', 'cp', '--python-version', '3.11',
        ...['manylinux_2_28_x86_64', 'manylinux_2_17_x86_64', 'manylinux2014_x86_64', 'linux_x86_64'].flatMap((p) => ['--platform', p]),
        '-d', wheels, join(bundled, wheel)],
      { stdio: 'pipe' },
    );
  }
  const manifest = { version, protocol: 1, offline: !!options.offline, target: options.offline ? 'linux-x64' : null, pythons: options.offline ? ['3.11'] : [] };
  writeFileSync(join(bundled, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return bundled;
}

/** An environment in which pip reaches no package index: its configuration files unread, its index a closed port, no proxy. */
export function offlineEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!/^(PIP_|https?_proxy$|all_proxy$|no_proxy$)/i.test(k)) out[k] = v;
  return { ...out, PIP_CONFIG_FILE: '/dev/null', PIP_INDEX_URL: 'http://127.0.0.1:9/simple', PIP_DISABLE_PIP_VERSION_CHECK: '1' };
}

const VSIX_PY = String.raw`
import json, os, sys, zipfile
src, dst, bundled = sys.argv[1:4]
with zipfile.ZipFile(src) as zin:
    if not bundled:
        try:
            print(zin.read("extension/bundled/manifest.json").decode())
        except KeyError:
            print("null")
        sys.exit(0)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if not item.filename.startswith("extension/bundled/"):
                zout.writestr(item, zin.read(item.filename))
        for root, _, files in os.walk(bundled):
            for name in sorted(files):
                path = os.path.join(root, name)
                zout.write(path, "extension/bundled/" + os.path.relpath(path, bundled).replace(os.sep, "/"),
                           zipfile.ZIP_STORED if name.endswith(".whl") else zipfile.ZIP_DEFLATED)
`;

/** What a `.vsix`'s bundled/manifest.json says (null: it carries no bundle). */
export function vsixManifest(vsix: string): { version: string; offline: boolean } | null {
  return JSON.parse(execFileSync(BASE_PYTHON, ['-c', VSIX_PY, vsix, '', ''], { encoding: 'utf8' }));
}

/**
 * A `.vsix` that carries the bundle: `vsix` itself when it carries one of the kind asked for (the
 * packaging's), else a copy at `out` with `bundled/` made here (modusBundle) in place of its own.
 */
export function vsixWithBundle(vsix: string, out: string, options: { offline?: boolean } = {}): string {
  const manifest = vsixManifest(vsix);
  if (manifest && manifest.offline === !!options.offline) return vsix;
  const work = join(out + '.d', options.offline ? 'offline' : 'online');
  const bundled = modusBundle(work, options);
  execFileSync(BASE_PYTHON, ['-c', VSIX_PY, vsix, out, bundled]);
  return out;
}
