// The .vsix that `npm run package` writes carries the server: the Modus wheel of the extension's
// own version, and bundled/manifest.json saying what it is. $MODUS_VSIX is the .vsix to check
// (scripts/test.sh passes the one the real-VS-Code tests install); without it, one is packaged.
// Not in `npm test`'s glob (packaging takes about 20 s): scripts/test.sh runs it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { PROTOCOL_VERSION } from '../../src/protocol/generated';
import { CLIENT_DIR, modusPython } from '../server';

/** What the .vsix holds: its files, its package.json, the bundle's manifest, each bundled wheel's METADATA Version. */
const READ = `
import json, sys, zipfile, io
v = zipfile.ZipFile(sys.argv[1])
names = v.namelist()
versions = {}
for n in names:
    if n.startswith("extension/bundled/") and n.endswith(".whl") and "/wheels/" not in n:
        w = zipfile.ZipFile(io.BytesIO(v.read(n)))
        meta = next(m for m in w.namelist() if m.endswith(".dist-info/METADATA"))
        versions[n] = next(l.split(":", 1)[1].strip() for l in w.read(meta).decode().splitlines() if l.startswith("Version:"))
print(json.dumps({"names": names, "package": json.loads(v.read("extension/package.json")),
                  "manifest": json.loads(v.read("extension/bundled/manifest.json")), "versions": versions}))
`;

describe('the packaged .vsix', () => {
  let vsix = process.env.MODUS_VSIX ?? '';
  let scratch = '';
  after(() => scratch && rmSync(scratch, { recursive: true, force: true }));

  it("carries the Modus wheel of the extension's own version, and its manifest", { timeout: 300_000 }, () => {
    if (!vsix) {
      scratch = mkdtempSync(join(tmpdir(), 'modus-vsix-'));
      vsix = join(scratch, 'modus.vsix');
      const packaged = spawnSync(process.execPath, [join(CLIENT_DIR, 'scripts', 'package.mjs'), '--out', vsix], { cwd: CLIENT_DIR, encoding: 'utf8' });
      assert.equal(packaged.status, 0, packaged.stdout + packaged.stderr);
    }
    const read = spawnSync(modusPython(), ['-c', READ, vsix], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(read.status, 0, read.stderr);
    const { names, package: pkg, manifest, versions } = JSON.parse(read.stdout);
    const version = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')).version;
    assert.equal(pkg.version, version);
    const wheel = `extension/bundled/modus-${version}-py3-none-any.whl`;
    assert.deepEqual(versions, { [wheel]: version }, `the bundled wheels and their versions: ${JSON.stringify(versions)}`);
    assert.equal(manifest.version, version);
    assert.equal(manifest.protocol, PROTOCOL_VERSION);
    assert.deepEqual(manifest.pythons, ['3.11', '3.12', '3.13']);
    const wheels = names.filter((n: string) => n.startsWith('extension/bundled/wheels/'));
    assert.equal(manifest.offline, manifest.target !== null);
    assert.equal(wheels.length > 0, manifest.offline, `${wheels.length} dependency wheels, manifest ${JSON.stringify(manifest)}`);
    // what the Marketplace and Open VSX look for
    for (const file of ['extension/README.md', 'extension/changelog.md', 'extension/LICENSE.txt', 'extension/media/icon.png']) {
      assert.ok(names.includes(file) || names.includes(file.replace('README', 'readme')), `${file} is not in the .vsix`);
    }
    // every image the README shows is in the .vsix, where its relative link leads
    const readme = readFileSync(join(CLIENT_DIR, 'README.md'), 'utf8');
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    assert.ok(images.length > 0);
    for (const image of images) assert.ok(names.includes(`extension/${image}`), `README.md shows ${image}, which the .vsix lacks`);
  });
});
