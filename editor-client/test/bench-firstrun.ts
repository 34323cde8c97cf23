// Benchmark of the first run's set-up (issue 25): the steps the extension runs when the user clicks
// Set up Modus — the compiled src/envSetup.ts itself: the interpreter checked, `python -m venv`,
// `pip install` of the bundled wheel — into a new folder each time, with this machine's package
// index (pip's own configuration, as the extension leaves it) and offline from the bundled wheels
// (pip's configuration files unread, its index a closed port). The baseline of the same run:
// `python -m venv` alone. The bundle is made first, not timed (test/wheels.ts: the wheel of this
// checkout, and every dependency's wheel for linux-x64 and CPython 3.11). Run by bench/firstrun.py
// (`make bench`); prints a Markdown table and exits 1 when a target is missed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bundle, envPaths, readBundle, run, setUp, SetupStep } from '../src/envSetup';
import { BASE_PYTHON, modusBundle, offlineEnv } from './wheels';

const TARGET_ONLINE_S = 60;
const TARGET_OFFLINE_S = 20;

interface Timed {
  total: number;
  steps: Partial<Record<SetupStep, number>>;
}

async function timedSetUp(bundle: Bundle, env: NodeJS.ProcessEnv): Promise<Timed> {
  const storage = mkdtempSync(join(tmpdir(), 'modus-bench-env-'));
  const steps: Partial<Record<SetupStep, number>> = {};
  let step: SetupStep | undefined;
  let at = performance.now();
  const start = at;
  const mark = () => {
    const now = performance.now();
    if (step) steps[step] = (steps[step] ?? 0) + (now - at) / 1000;
    at = now;
  };
  try {
    await setUp({
      python: BASE_PYTHON,
      bundle,
      paths: envPaths(storage),
      env,
      progress: (p) => {
        if (p.step === step) return;
        mark();
        step = p.step;
      },
    });
    mark();
    return { total: (performance.now() - start) / 1000, steps };
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
}

async function venvAlone(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'modus-bench-venv-'));
  try {
    const start = performance.now();
    const r = await run(BASE_PYTHON, ['-m', 'venv', join(dir, 'env')]);
    if (r.code !== 0) throw new Error(`python -m venv failed: ${r.output}`);
    return (performance.now() - start) / 1000;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const s = (n: number | undefined) => (n === undefined ? '' : `${n.toFixed(1)} s`);

async function main(): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), 'modus-bench-firstrun-'));
  try {
    modusBundle(join(root, 'online'));
    modusBundle(join(root, 'offline'), { offline: true });
    const bundles = { online: readBundle(join(root, 'online'))!, offline: readBundle(join(root, 'offline'))! };
    const venv = await venvAlone();
    const withIndex = await timedSetUp(bundles.online, process.env);
    const offline = await timedSetUp(bundles.offline, offlineEnv());
    const okOnline = withIndex.total < TARGET_ONLINE_S;
    const okOffline = offline.total < TARGET_OFFLINE_S;
    console.log(`first-run set-up (Set up Modus: src/envSetup.ts's steps, Modus ${bundles.online.version}, ${BASE_PYTHON}); baseline: \`python -m venv\` alone, the same run`);
    console.log('| measure | baseline | Modus | ratio | target |');
    console.log('|---|---:|---:|---:|---|');
    console.log(`| set-up with a package index (pip's configuration), check + venv + pip install | ${s(venv)} | ${s(withIndex.total)} | ${(withIndex.total / venv).toFixed(1)}× | < ${TARGET_ONLINE_S} s ${okOnline ? 'ok' : 'MISSED'} |`);
    console.log(`| of which \`python -m venv\` / pip install | | ${s(withIndex.steps.venv)} / ${s(withIndex.steps.install)} | | |`);
    console.log(`| set-up offline from the bundled wheels (index unreachable) | ${s(venv)} | ${s(offline.total)} | ${(offline.total / venv).toFixed(1)}× | < ${TARGET_OFFLINE_S} s ${okOffline ? 'ok' : 'MISSED'} |`);
    console.log(`| of which \`python -m venv\` / pip install | | ${s(offline.steps.venv)} / ${s(offline.steps.install)} | | |`);
    return okOnline && okOffline ? 0 : 1;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
