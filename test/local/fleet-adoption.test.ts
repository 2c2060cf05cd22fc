/**
 * A NotificationPipelineFleet adopts existing unified pipelines (`existingSubscriptionId`): the REAL bundled handler
 * with `dpi local-deploy` against the embedded emulator, which already holds pipelines made directly through its API
 * (the unified POST and the product-107 subscription that stores its result, as the service's UI would). The deploy
 * makes no creating call. The emulator serves the spec's reads (no stored parameter read), so what the pipelines are
 * is not shown: without `rebuildOnAdoption` the deploy fails before any changing call and rolls back, leaving them as
 * they were; with it, exactly one unified PATCH per pipeline (plus the subscription update that stores its result).
 * The destroy releases them (adopted: RETAIN by default) and they stay active.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { connectedStack } from './apps';
import { pipelineSubscriptionBody, unifiedPipelineBody } from './hand-made';
import { tempDir } from './helpers';
import { AccountType, NotificationPipelineFleet, NotificationPipelineRoles, NotificationType } from '../../src';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath, LocalDeployResult, runLocalDeploy } from '../../src/local';

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' first`);
jest.setTimeout(120_000);

const ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-management`;
const EB_ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/service-spapi-firehose-role`;
const IDS = Array.from({ length: 8 }, (_, i) => 2101 + i);
/** Half the pipelines have a queue type (their queue delivery path is kept by the PATCH), half event-bus types only. */
const typesOf = (id: number): string[] => (id % 2 === 0 ? ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'] : ['ORDER_CHANGE']);

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
beforeAll(async () => {
  emulator = await startEmulator({ host: '127.0.0.1', port: 0 });
  tmp = tempDir();
});
afterAll(async () => {
  await emulator.stop();
  tmp.cleanup();
});

async function raw(method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300 && res.status !== 207) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A unified pipeline made through the service's endpoints: the unified POST and its product-107 subscription. */
async function handMade(token: string, identity: number): Promise<number> {
  const r = await raw('POST', `/service/sp/notifications-unified/${identity}`, unifiedPipelineBody({ types: typesOf(identity), role: ROLE, ebRole: EB_ROLE }), token);
  const sub = await raw('POST', '/v2/sub', pipelineSubscriptionBody(identity, r, `by hand ${identity}`), token);
  return Number(sub.data.id);
}

function synth(outdir: string, adopt: Map<number, number>, ids: readonly number[] = IDS, rebuild = true): string {
  const app = new App({ outdir });
  const { stack, connection } = connectedStack(app, 'Adopting');
  new NotificationPipelineFleet(stack, 'Sellers', {
    connection,
    roles: NotificationPipelineRoles.fromRoleArns(stack, 'ExistingRoles', { managementRoleArn: ROLE, eventBusRoleArn: EB_ROLE }),
    nestedStackCount: 3,
    identities: ids.map((id) => ({
      remoteIdentityId: id,
      accountType: AccountType.SELLER,
      notificationTypes: typesOf(id).map((t) => NotificationType.of(t)),
      existingSubscriptionId: adopt.get(id),
      rebuildOnAdoption: rebuild && adopt.has(id) ? true : undefined,
    })),
  });
  app.synth();
  return outdir;
}

function run(app: string | undefined, destroy = false): Promise<LocalDeployResult> {
  return runLocalDeploy({
    app,
    destroy,
    emulatorUrl: emulator.url,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    progress: () => undefined,
    output: () => undefined,
  });
}

interface Logged { method: string; path: string; status: number }
const requests = async (): Promise<Logged[]> => (await raw('GET', '/_emulator/requests')) as Logged[];
const changing = (log: Logged[]): string[] => log.filter((r) => r.method !== 'GET' && r.path !== '/auth/api/ref').map((r) => `${r.method} ${r.path}`);

test('a fleet adopts hand-made pipelines the reads do not show: refused without rebuildOnAdoption; with it no POST, one unified PATCH each; the destroy releases them and they stay active', async () => {
  await raw('POST', '/_emulator/fixtures', {
    remoteIdentities: IDS.map((id) => ({ id, account: 1001, name: `Seller ${id}`, remote_identity_type_id: 17, marketplaces: ['ATVPDKIKX0DER'] })),
  });
  const token = (await raw('POST', '/auth/api/ref', { data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } })).data.attributes.token;
  const adopt = new Map<number, number>();
  for (const id of IDS) adopt.set(id, await handMade(token, id));
  const pipelineOf = (): Map<number, string> => new Map(emulator.state().pipelines.map((p) => [p.remoteIdentityId, p.id]));
  const before = pipelineOf();
  expect(before.size).toBe(IDS.length);

  // Without rebuildOnAdoption: the reads do not show the pipelines, so each adoption fails before any change; the
  // rollback leaves every pipeline as it was and released (the next deploy may adopt them).
  await raw('DELETE', '/_emulator/requests');
  mkdirSync(join(tmp.dir, 'v0'), { recursive: true });
  const refused = await run(synth(join(tmp.dir, 'v0'), adopt, IDS, false));
  expect(refused.success).toBe(false);
  const reasons = refused.events.filter((e) => e.status === 'CREATE_FAILED' && e.type === 'Custom::DpiNotificationPipeline').map((e) => e.reason ?? '');
  // The first failure cancels its siblings (as CloudFormation does); every other reason is that cancellation.
  expect(reasons.filter((r) => r.includes('set rebuildOnAdoption: true to allow the rebuild')).length).toBeGreaterThan(0);
  expect(reasons.filter((r) => !r.includes('set rebuildOnAdoption: true') && r !== 'Resource creation cancelled')).toEqual([]);
  expect(changing(await requests())).toEqual([]);
  expect(pipelineOf()).toEqual(before);

  await raw('DELETE', '/_emulator/requests');
  mkdirSync(join(tmp.dir, 'v1'), { recursive: true });
  const deployed = await run(synth(join(tmp.dir, 'v1'), adopt));
  expect(deployed.error).toBeUndefined();
  expect(deployed.success).toBe(true);
  const log = await requests();
  // No creating call: the only POSTs are token refreshes.
  expect(log.filter((r) => r.method === 'POST' && r.path !== '/auth/api/ref')).toEqual([]);
  // Exactly one unified PATCH per pipeline, and the update of its subscription that stores the PATCH's result.
  const expected = IDS.flatMap((id) => [`PATCH /service/sp/notifications-unified/${id}/${adopt.get(id)}`, `PATCH /v2/sub/${adopt.get(id)}`]);
  expect(changing(log).sort()).toEqual(expected.sort());
  // The fleet's resources are the adopted subscriptions; no pipeline was added.
  const physical = deployed.resources.filter((r) => r.type === 'Custom::DpiNotificationPipeline').map((r) => Number(r.physicalId)).sort();
  expect(physical).toEqual([...adopt.values()].sort());
  // What the PATCH changed (the service's unified update): a pipeline with a queue type kept its delivery pipeline (same
  // pipeline); one with event-bus types only had its delivery resources cleaned up and recreated (a new pipeline record).
  const after = pipelineOf();
  expect(after.size).toBe(IDS.length);
  for (const id of IDS) {
    if (typesOf(id).includes('REPORT_PROCESSING_FINISHED')) expect(after.get(id)).toBe(before.get(id));
    else expect(after.get(id)).not.toBe(before.get(id));
  }

  // A second deploy of the same app: nothing to do.
  await raw('DELETE', '/_emulator/requests');
  mkdirSync(join(tmp.dir, 'v2'), { recursive: true });
  expect((await run(synth(join(tmp.dir, 'v2'), adopt))).success).toBe(true);
  expect(changing(await requests())).toEqual([]);

  // Dropping `existingSubscriptionId` of one identity (the fleet's default DESTROY then applies to it), then removing
  // the identity: the pipeline existed before the stack, so its Delete releases it (no changing call).
  const dropped = IDS[0];
  const without = new Map([...adopt].filter(([id]) => id !== dropped));
  await raw('DELETE', '/_emulator/requests');
  mkdirSync(join(tmp.dir, 'v3'), { recursive: true });
  const v3 = await run(synth(join(tmp.dir, 'v3'), without));
  expect(v3.error).toBeUndefined();
  expect(changing(await requests())).toEqual([]);
  await raw('DELETE', '/_emulator/requests');
  mkdirSync(join(tmp.dir, 'v4'), { recursive: true });
  const v4 = await run(synth(join(tmp.dir, 'v4'), without, IDS.slice(1)));
  expect(v4.error).toBeUndefined();
  expect(changing(await requests())).toEqual([]);
  expect(emulator.state().subscriptions.find((s) => s.id === adopt.get(dropped))?.status).toBe('active');
  expect(pipelineOf().get(dropped)).toBe(after.get(dropped));

  // Destroy: adopted pipelines default to RETAIN: released, no changing call, still active with their delivery resources.
  const cloudBefore = emulator.state().cloud.filter((c) => c.pipelineId !== undefined).map((c) => c.id).sort();
  await raw('DELETE', '/_emulator/requests');
  const destroyed = await run(undefined, true);
  expect(destroyed.success).toBe(true);
  expect(changing(await requests())).toEqual([]);
  expect(destroyed.events.filter((e) => e.type === 'Custom::DpiNotificationPipeline' && e.status === 'DELETE_COMPLETE')).toHaveLength(IDS.length - 1);
  const subs = emulator.state().subscriptions.filter((s) => [...adopt.values()].includes(s.id));
  expect(subs.map((s) => s.status)).toEqual(Array(IDS.length).fill('active'));
  expect(pipelineOf()).toEqual(after);
  expect(emulator.state().cloud.filter((c) => c.pipelineId !== undefined).map((c) => c.id).sort()).toEqual(cloudBefore);
});
