/**
 * `dpi local-deploy` with the nested stacks of a NotificationPipelineFleet: the REAL bundled handler against the
 * emulator, on fleet apps synthesized in-process.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { synthFleetApp } from './fleet-app';
import { tempDir } from './helpers';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath, LocalDeployResult, runLocalDeploy } from '../../src/local';
import { readAssembly } from '../../src/local/assembly';
import { fleetBucketOf } from '../../src/notifications/fleet-hash';

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) {
  throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' before the local-deploy tests (the test task bundles first)`);
}

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
let output: string[];
let n = 0;
const IDS = Array.from({ length: 14 }, (_, i) => 2001 + i);

async function admin(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
  return res.status === 204 ? undefined : res.json();
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emulator.stop();
});
beforeEach(async () => {
  await admin('POST', '/_emulator/reset');
  // The fleet's sellers, in the default token's account.
  await admin('POST', '/_emulator/fixtures', {
    remoteIdentities: IDS.map((id) => ({ id, account: 1001, name: `Seller ${id}`, remote_identity_type_id: 17, marketplaces: ['ATVPDKIKX0DER'] })),
  });
  tmp = tempDir();
  output = [];
});
afterEach(() => tmp.cleanup());

const stateFile = (): string => join(tmp.dir, 'state', 'local-state.json');

function synth(identities: number[]): string {
  n += 1;
  const outdir = join(tmp.dir, `cdk.out.${n}`);
  synthFleetApp(outdir, { identities, nestedStackCount: 3 });
  return outdir;
}

function run(app: string | undefined, destroy = false): Promise<LocalDeployResult> {
  return runLocalDeploy({
    app,
    destroy,
    emulatorUrl: emulator.url,
    stateFile: stateFile(),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    progress: (l) => output.push(l),
    output: (l) => output.push(l),
  });
}

const active107 = (): number[] => emulator.state().subscriptions.filter((x) => x.product === 107 && x.status === 'active').map((x) => x.id).sort();
const pipelineSpecific = (): string[] => emulator.state().cloud.filter((c) => !c.shared || c.pipelineId !== undefined).map((c) => `${c.kind}:${c.id}`);
const changedStacks = (r: LocalDeployResult): string[] => [...new Set(r.events.filter((e) => e.type !== 'AWS::CloudFormation::Stack').map((e) => e.stack))];
const requests = async (): Promise<Array<{ method: string; path: string }>> => (await admin('GET', '/_emulator/requests')) as Array<{ method: string; path: string }>;

test('deploy, add one identity, remove one, destroy: only one nested stack changes each time, and nothing is left', async () => {
  const twelve = IDS.slice(0, 12);
  const v1 = synth(twelve);
  // The assembly reader finds the nested stacks (file assets) behind the parent, each depending on it.
  const stacks = readAssembly(v1);
  expect(stacks.map((s) => s.nested ? 'nested' : s.stackName)).toEqual(['Fleet', 'nested', 'nested', 'nested']);
  expect(stacks.slice(1).every((s) => s.dependencyStackNames.includes('Fleet'))).toBe(true);

  const created = await run(v1);
  expect(created.success).toBe(true);
  expect(active107()).toHaveLength(12);
  expect(created.resources).toHaveLength(12);
  const stackOf = (id: number, r: LocalDeployResult): string => r.resources.find((x) => x.logicalId.startsWith(`Identity${id}`))!.stack;
  expect(new Set(created.resources.map((r) => r.stack)).size).toBe(3);
  // The nested stacks' pipelines used the parent's provider and a journal key that names the parent stack.
  const state = JSON.parse(readFileSync(stateFile(), 'utf8')) as { stacks: Array<{ stackName: string; parentStack?: string }>; resources: Record<string, { properties: Record<string, unknown> }> };
  expect(state.stacks.filter((s) => s.parentStack === 'Fleet')).toHaveLength(3);
  for (const r of Object.values(state.resources)) {
    expect(r.properties.ServiceToken).toMatch(/^arn:aws:lambda:us-east-1:123456789012:function:Fleet-DpiProviderframeworkonEvent/);
    expect(r.properties.JournalKey).toMatch(/^Fleet\/Sellers\/Pipelines[0-2]\/Identity20\d\d$/);
  }

  // One identity added: one nested stack changes, the others (and the parent) report no changes.
  await admin('DELETE', '/_emulator/requests');
  const added = await run(synth([...twelve, 2013]));
  expect(added.success).toBe(true);
  expect(changedStacks(added)).toEqual([stackOf(2013, added)]);
  expect(added.events.filter((e) => e.type !== 'AWS::CloudFormation::Stack').map((e) => `${e.status}:${e.logicalId.replace(/[0-9A-F]{8}$/, '')}`))
    .toEqual(['CREATE_IN_PROGRESS:Identity2013', 'CREATE_COMPLETE:Identity2013']);
  // The parent is updated with its changed nested stack (its template names the nested template), as CloudFormation
  // updates it; the other two nested stacks have no changes.
  expect(output.filter((l) => l.includes('(no changes)'))).toHaveLength(2);
  expect(added.events.filter((e) => e.stack === 'Fleet' && e.logicalId === 'Fleet').map((e) => e.status)).toEqual(['UPDATE_IN_PROGRESS', 'UPDATE_COMPLETE']);
  expect(active107()).toHaveLength(13);
  // Only the new pipeline's calls reached the service (no change to the others).
  const changing = (await requests()).filter((q) => q.method !== 'GET');
  expect(changing.length).toBeGreaterThan(0);
  expect(changing.length).toBeLessThanOrEqual(4);

  // One identity removed: its nested stack alone changes (a delete in the clean-up).
  const gone = twelve[4];
  const removed = await run(synth([...twelve, 2013].filter((id) => id !== gone)));
  expect(removed.success).toBe(true);
  expect(changedStacks(removed)).toEqual([stackOf(gone, created)]);
  expect(removed.events.filter((e) => e.type !== 'AWS::CloudFormation::Stack').map((e) => `${e.status}:${e.logicalId.replace(/[0-9A-F]{8}$/, '')}`))
    .toEqual([`DELETE_IN_PROGRESS:Identity${gone}`, `DELETE_COMPLETE:Identity${gone}`]);
  expect(active107()).toHaveLength(12);

  const destroyed = await run(undefined, true);
  expect(destroyed.success).toBe(true);
  expect(active107()).toEqual([]);
  expect(pipelineSpecific()).toEqual([]);
  expect(emulator.state().upstreamSubscriptions.filter((u) => u.pipelineId !== undefined && u.enabled)).toEqual([]);
  expect(existsSync(stateFile())).toBe(false);
  // Nested stacks are deleted before their parent.
  const stackDeletes = destroyed.events.filter((e) => e.type === 'AWS::CloudFormation::Stack' && e.status === 'DELETE_COMPLETE').map((e) => e.stack);
  expect(stackDeletes).toHaveLength(4);
  expect(stackDeletes[3]).toBe('Fleet');
});

test('a nested stack whose last identity leaves the app is deleted with its pipeline by the parent\'s update', async () => {
  // Two identities in different nested stacks.
  const a = IDS[0];
  const b = IDS.find((id) => fleetBucketOf(id, 3) !== fleetBucketOf(a, 3))!;
  const first = await run(synth([a, b]));
  expect(first.success).toBe(true);
  expect(active107()).toHaveLength(2);
  const stackOfB = first.resources.find((r) => r.logicalId.startsWith(`Identity${b}`))!.stack;

  const second = await run(synth([a]));
  expect(second.success).toBe(true);
  expect(second.events.map((e) => `${e.stack === stackOfB ? 'B' : e.stack}:${e.status}:${e.type}`)).toEqual([
    'B:DELETE_IN_PROGRESS:AWS::CloudFormation::Stack',
    'B:DELETE_IN_PROGRESS:Custom::DpiNotificationPipeline',
    'B:DELETE_COMPLETE:Custom::DpiNotificationPipeline',
    'B:DELETE_COMPLETE:AWS::CloudFormation::Stack',
  ]);
  expect(active107()).toHaveLength(1);
  expect(output.some((l) => l.includes('not in the app'))).toBe(false);
  const state = JSON.parse(readFileSync(stateFile(), 'utf8')) as { stacks: Array<{ stackName: string }> };
  expect(state.stacks.map((s) => s.stackName)).not.toContain(stackOfB);

  expect((await run(undefined, true)).success).toBe(true);
  expect(active107()).toEqual([]);
  expect(pipelineSpecific()).toEqual([]);
});

test('an identity the service refuses rolls back the whole nested-stack tree: nothing new is left, the deployed sellers untouched', async () => {
  const pipelines = (): number[] => emulator.state().pipelines.map((p) => p.remoteIdentityId).sort();
  const noFailedRollback = (r: LocalDeployResult): void => expect(r.events.filter((e) => /ROLLBACK_FAILED|DELETE_FAILED/.test(e.status))).toEqual([]);
  // A first deployment of ten sellers and one the service does not know: the whole fleet is rolled back.
  const refused = 9999;
  const first = await run(synth([...IDS.slice(0, 10), refused]));
  expect(first.success).toBe(false);
  noFailedRollback(first);
  expect(first.events.find((e) => e.stack === 'Fleet' && e.status === 'ROLLBACK_IN_PROGRESS')?.reason).toMatch(/^The following resource\(s\) failed: \[/);
  expect([pipelines(), active107(), pipelineSpecific()]).toEqual([[], [], []]);
  expect((JSON.parse(readFileSync(stateFile(), 'utf8')) as { stacks: unknown[] }).stacks).toEqual([]);

  // Ten sellers deployed; then four more with the refused one: the update of every nested stack is rolled back.
  const deployed = await run(synth(IDS.slice(0, 10)));
  expect(deployed.success).toBe(true);
  const before = { pipelines: pipelines(), subs: active107(), cloud: pipelineSpecific() };
  expect(before.pipelines).toEqual(IDS.slice(0, 10));
  const update = await run(synth([...IDS, refused]));
  expect(update.success).toBe(false);
  noFailedRollback(update);
  expect(update.events.filter((e) => e.type === 'AWS::CloudFormation::Stack' && e.stack === 'Fleet').pop()?.status).toBe('UPDATE_ROLLBACK_COMPLETE');
  expect({ pipelines: pipelines(), subs: active107(), cloud: pipelineSpecific() }).toEqual(before);
  expect(update.resources.map((r) => r.physicalId).sort()).toEqual(deployed.resources.map((r) => r.physicalId).sort());

  expect((await run(undefined, true)).success).toBe(true);
  expect([pipelines(), active107(), pipelineSpecific()]).toEqual([[], [], []]);
});

test('the assembly reader finds nested templates by their asset metadata (as the cdk CLI synthesizes) or by the asset manifest', () => {
  for (const context of [{ 'aws:cdk:enable-asset-metadata': true }, {}]) {
    n += 1;
    const outdir = join(tmp.dir, `cdk.out.${n}`);
    synthFleetApp(outdir, { identities: IDS.slice(0, 6), nestedStackCount: 2, context });
    const stacks = readAssembly(outdir);
    const parent = stacks[0];
    const withMetadata = Object.values(parent.template.Resources ?? {}).filter((r) => r.Type === 'AWS::CloudFormation::Stack' && r.Metadata?.['aws:asset:path']);
    expect(withMetadata).toHaveLength('aws:cdk:enable-asset-metadata' in context ? 2 : 0);
    const nested = stacks.filter((s) => s.nested);
    expect(nested).toHaveLength(2);
    for (const s of nested) {
      expect(s.templateFile).toMatch(/\.nested\.template\.json$/);
      expect(s.stackName).toBe(`Fleet-${s.nested!.logicalId}`);
      expect(Object.keys(s.nested!.parameters).some((p) => p.startsWith('referencetoFleetDpiProviderframeworkonEvent'))).toBe(true);
    }
    expect(nested.flatMap((s) => Object.values(s.template.Resources ?? {}).map((r) => r.Properties?.RemoteIdentityId)).sort())
      .toEqual(IDS.slice(0, 6).map(String));
  }
});
