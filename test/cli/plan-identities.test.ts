/**
 * `dpi plan` flags each declared remote identity the service does not know or marks invalid (issue 36), from one
 * listing of the account's identities (`GET /sri`), in the table, `--json` and `--format markdown`; an unknown identity
 * fails the deploy, so it is shown first and `--fail-on failure` trips on it. With minimal reads (the specification's
 * `id` only) an invalid identity cannot be seen: the plan says once what it did not check.
 */
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { dpi, testNoSecretsPrinted } from './helpers';
import { Subscription } from '../../src';
import type { ReviewedEntry } from '../../src/cli/commands/plan-live';
import { EmulatorFixtures, ReadMode, RunningEmulator, startEmulator } from '../../src/emulator';
import { connectedStack, synthTinyApp } from '../local/apps';
import { tempDir } from '../local/helpers';

jest.setTimeout(120_000);

/** Identity 366: a seller whose authorization was revoked. */
const FIXTURES: EmulatorFixtures = {
  remoteIdentities: [{ id: 366, account: 1001, name: 'Revoked seller', remote_identity_type_id: 17, marketplaces: ['ATVPDKIKX0DER'], invalid_identity: 1 }],
};

interface PlanDoc {
  entries: ReviewedEntry[];
  live: { read: boolean; reason?: string; notes: string[]; identities: number };
  identities: Array<{ id: string; flag: string; resources: string[] }>;
}

let work: { dir: string; cleanup: () => void };
let app: string;
const emus = new Map<ReadMode, RunningEmulator>();

beforeAll(async () => {
  work = tempDir('dpi-plan-identities-');
  const a = new App({ outdir: join(work.dir, 'app') });
  const { stack, connection } = connectedStack(a, 'Ids');
  for (const [id, remoteIdentityId] of [['Known', 362], ['Revoked', 366], ['Unknown', 999]] as const) {
    new Subscription(stack, id, {
      connection, productId: 3001, storageGroupId: 501, remoteIdentityId, productParameters: { marketplace_id: 'ATVPDKIKX0DER' }, name: id,
    });
  }
  a.synth();
  app = join(work.dir, 'app');
  for (const reads of ['vendor', 'minimal'] as const) emus.set(reads, await startEmulator({ host: '127.0.0.1', port: 0, fixtures: FIXTURES, reads }));
});
afterAll(async () => {
  for (const e of emus.values()) await e.stop();
  work.cleanup();
});

/** Plans the app as a first deploy (no local-deploy state) against the emulator of `reads`. */
const plan = (reads: ReadMode, more: string[]) =>
  dpi(['plan', '--app', app, '--local', '--state', join(work.dir, 'none', 'state.json'), ...more], { emu: emus.get(reads)! });

const byPath = (doc: PlanDoc, path: string): ReviewedEntry => doc.entries.find((e) => e.constructPath === path)!;

test('vendor reads: the unknown identity and the invalid one are flagged in JSON, text and markdown; the unknown one first', async () => {
  const r = await plan('vendor', ['--json']);
  expect(r.code).toBe(0);
  const doc = JSON.parse(r.stdout) as PlanDoc;
  expect(doc.live).toMatchObject({ read: true, notes: [] });
  expect(byPath(doc, 'Ids/Known').live).toBeUndefined();
  expect(byPath(doc, 'Ids/Unknown').live).toEqual([expect.objectContaining({ kind: 'identity-unknown', risk: true, fails: true })]);
  expect(byPath(doc, 'Ids/Unknown').live![0].text).toMatch(/^remote identity 999 is not among the account's identities \(GET \/sri\)/);
  const revoked = byPath(doc, 'Ids/Revoked').live!;
  expect(revoked).toEqual([expect.objectContaining({ kind: 'identity-invalid', risk: true })]);
  expect(revoked[0].fails).toBeUndefined();
  expect(revoked[0].text).toMatch(/^remote identity 366 is marked invalid by the service \(invalid_identity, invalidated at \d{4}-/);
  expect(doc.identities).toEqual([
    { id: '366', flag: 'invalid', resources: ['Ids/Revoked'] },
    { id: '999', flag: 'unknown', resources: ['Ids/Unknown'] },
  ]);

  const text = await plan('vendor', []);
  expect(text.code).toBe(0);
  expect(text.stdout).toContain('live: remote identity 999 is not among the account\'s identities');
  expect(text.stdout).toContain('live: remote identity 366 is marked invalid by the service');
  expect(text.stdout).not.toContain('Note:');

  const md = (await plan('vendor', ['--format', 'markdown'])).stdout;
  expect(md.split('\n')[0]).toBe('## dpi plan: 3 create');
  const blocks = md.split('\n').filter((l) => l.startsWith('<details><summary><b>'));
  expect(blocks.map((l) => /<code>Ids\/(\w+)<\/code>/.exec(l)?.[1])).toEqual(['Unknown', 'Revoked', 'Known']);
  expect(blocks[0]).toContain('— remote identity 999 is unknown to the service</summary>');
  expect(blocks[1]).toContain('— remote identity 366 is marked invalid</summary>');
  expect(md.indexOf('### Creates (1)')).toBeGreaterThan(md.indexOf(blocks[1]));
});

test('an unknown identity trips --fail-on failure (the deploy would fail on it); other gates do not', async () => {
  const gate = await plan('vendor', ['--fail-on', 'failure']);
  expect(gate.code).toBe(1);
  expect(gate.stderr).toContain('--fail-on: 1 resource planned to failure');
  expect((await plan('vendor', ['--fail-on', 'replace,delete'])).code).toBe(0);
});

test('minimal reads: the unknown identity is still flagged, the invalid one cannot be seen, and the plan says so once', async () => {
  const doc = JSON.parse((await plan('minimal', ['--json'])).stdout) as PlanDoc;
  expect(byPath(doc, 'Ids/Unknown').live?.map((f) => f.kind)).toEqual(['identity-unknown']);
  expect(byPath(doc, 'Ids/Revoked').live).toBeUndefined();
  expect(doc.live.notes).toHaveLength(1);
  expect(doc.live.notes[0]).toMatch(/^live differences need the vendor's read fields: .* renames .* and invalidated identities \(invalid_identity, invalidated_at\) were not checked/);
  const text = (await plan('minimal', [])).stdout;
  expect(text.match(/Note: live differences need the vendor's read fields/g)).toHaveLength(1);
  const md = (await plan('minimal', ['--format', 'markdown'])).stdout;
  expect(md.match(/^> live differences need the vendor's read fields/gm)).toHaveLength(1);
});

test('--no-live and --from read nothing, and say so', async () => {
  const off = await plan('vendor', ['--no-live', '--format', 'markdown']);
  expect(off.stdout).toContain('**Live state:** not read (--no-live)');
  expect(off.stdout).not.toContain('<b>live:</b>');
  const from = await dpi(['plan', '--app', app, '--from', app, '--json'], { emu: emus.get('vendor')! });
  const doc = JSON.parse(from.stdout) as PlanDoc;
  expect(doc.live).toMatchObject({ read: false, reason: '--from compares two cloud assemblies offline' });
  expect(doc.entries.every((e) => e.live === undefined)).toBe(true);
  expect((await dpi(['plan', '--app', app, '--json', '--format', 'markdown'])).stderr).toContain('--json and --format markdown ask for different outputs');
});

test('--local with no service address: the embedded emulator on the local-deploy state is read, in the read mode asked', async () => {
  const tiny = synthTinyApp(join(work.dir, 'tiny', 'cdk.out'));
  const stateFile = join(work.dir, 'tiny', 'state.json');
  const deployed = await dpi(['local-deploy', '--app', tiny, '--state', stateFile]);
  expect(deployed.code).toBe(0);
  const args = ['plan', '--local', '--state', stateFile, '--app', tiny, '--json'];
  const vendor = await dpi([...args, '--reads', 'vendor']);
  expect(vendor.stderr).toBe('');
  const doc = JSON.parse(vendor.stdout) as PlanDoc;
  expect(doc.live).toMatchObject({ read: true, notes: [] });
  expect(doc.live.identities).toBeGreaterThanOrEqual(4);
  expect(doc.entries.length).toBeGreaterThan(0);
  expect(doc.entries.every((e) => e.action === 'no-change' && e.live === undefined)).toBe(true);
  // The default read mode is minimal: the note; and the state's lock was let go (a second run reads again).
  const minimal = JSON.parse((await dpi(args)).stdout) as PlanDoc;
  expect(minimal.live.read).toBe(true);
  expect(minimal.live.notes).toHaveLength(1);
});

testNoSecretsPrinted();
