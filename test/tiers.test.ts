/**
 * The test tiers (projenrc/test-tiers.ts, CONTRIBUTING.md "Test tiers"): every test file is in exactly one tier, jest's
 * projects select exactly the files of their tier, and a unit-tier file starts no journal server, no handler harness,
 * no local deploy and no process.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Tier, tierOf } from '../projenrc/test-tiers';

const ROOT = join(__dirname, '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' || name === 'cdk.out' ? [] : testFiles(p);
    return p.endsWith('.test.ts') ? [relative(ROOT, p)] : [];
  }).sort();
}

const FILES = testFiles(join(ROOT, 'test'));
const TIERS: Tier[] = ['unit', 'integration', 'e2e'];

test('every test file is in a tier', () => {
  expect(FILES.length).toBeGreaterThan(100);
  expect(FILES.filter((f) => tierOf(f) === undefined)).toEqual([]);
});

test('each jest project selects exactly the files of its tier', () => {
  for (const tier of TIERS) {
    // The project's own selection, as `npm test` and the tiers' tasks make it.
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--listTests', '--json', '--selectProjects', tier],
      { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    expect(r.status).toBe(0);
    const listed = (JSON.parse(r.stdout) as string[]).map((f) => relative(ROOT, f)).sort();
    expect({ tier, files: listed }).toEqual({ tier, files: FILES.filter((f) => tierOf(f) === tier) });
  }
}, 120_000);

test('a unit-tier file starts no journal server, handler harness, local deploy or process', () => {
  const heavy = /\b(child_process|useJournalServer|startJournalServer|HandlerHarness|useHandlerHarness|runLocalDeploy|FaultLab)\b/;
  const offenders = FILES.filter((f) => tierOf(f) === 'unit' && f !== 'test/tiers.test.ts')
    .filter((f) => heavy.test(readFileSync(join(ROOT, f), 'utf8')));
  expect(offenders).toEqual([]);
});

test('the rule finds a heavy file (the check can fail)', () => {
  expect(tierOf('test/handler/subscription.test.ts')).toBe('integration');
  expect(tierOf('test/faults/faults.test.ts')).toBe('e2e');
  expect(tierOf('test/local/scale.test.ts')).toBe('e2e');
  expect(tierOf('test/cli/orphans-bulk.test.ts')).toBe('e2e');
  expect(tierOf('test/local/graph.test.ts')).toBe('unit');
  expect(tierOf('test/kinds/journal-tag.test.ts')).toBe('integration');
  expect(tierOf('test/elsewhere/x.test.ts')).toBeUndefined();
});

test('each test file has a temporary directory of its own (test/jest-environment.ts): a synth leaves nothing in /tmp', () => {
  expect(tmpdir()).toMatch(/\/dpi-test-[^/]+$/);
  const outdir = new App().outdir; // no outdir given: aws-cdk-lib makes a cdk.out* directory in os.tmpdir()
  expect(relative(tmpdir(), outdir)).toMatch(/^cdk\.out/);
  expect(statSync(outdir).isDirectory()).toBe(true);
});
