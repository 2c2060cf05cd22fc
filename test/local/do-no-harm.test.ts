/**
 * "Do no harm": a service record is the stack's only when the lifecycle journal proves the resource made it, or the
 * user named it for adoption. Each scenario runs `dpi local-deploy` (in process, the bundled handler) against the
 * emulator, with records made beforehand the way the web UI makes them, and checks that those bystanders end exactly
 * as they began (status, name, product_parameters, storage group, identity, start date).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RemovalPolicy } from 'aws-cdk-lib';
import { failures, legacy, orders, physical, READS, Scene, stackStatus, synthApp } from './do-no-harm-apps';
import { Subscription } from '../../src';
import { RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath } from '../../src/local';

jest.setTimeout(60_000);

if (!existsSync(defaultHandlerPath())) throw new Error(`${defaultHandlerPath()} is missing: run 'npx projen bundle' first`);

let emu: RunningEmulator;
let work: string;
let s: Scene;
let n = 0;
/** The bystanders of the current test and what they were before the test's deploys. */
let by: { orders: number; paused: number; ads: number; storage: number };
let ids: number[];

beforeAll(async () => {
  // DPI_EMULATOR_PAGINATION=off: against a service that does not paginate (lists answer every record, no links or meta).
  emu = await startEmulator({ host: '127.0.0.1', port: 0, reads: READS, pagination: process.env.DPI_EMULATOR_PAGINATION !== 'off' });
  work = mkdtempSync(join(tmpdir(), 'dpi-do-no-harm-'));
});
afterAll(async () => {
  await emu.stop();
  rmSync(work, { recursive: true, force: true });
});
beforeEach(async () => {
  s = new Scene(emu, join(work, `t${++n}`));
  await s.admin('POST', '/reset');
  by = await s.uiBystanders();
  // 8601: the fixtures' legacy subscription (identity 364); 8701: another account's.
  ids = [by.orders, by.paused, by.ads, by.storage, 8601, 8701];
  await s.admin('DELETE', '/requests');
});

const app = (name: string, stack: string, declare: Parameters<typeof synthApp>[2]): string => synthApp(join(work, `app-${n}-${name}`), stack, declare);
/** Active product-3001 subscriptions made during the test (not a bystander nor a fixture). */
const newOrders = (status?: string): number[] => emu.state().subscriptions
  .filter((x) => x.product === 3001 && x.id > 8999 && !ids.includes(x.id) && (status === undefined || x.status === status)).map((x) => x.id).sort();
/** What a release cannot restore under the spec's reads: the name (no read shows it), so it stays as the adoption set it. */
const afterRelease = (before: ReturnType<Scene['kept']>, id: number, declaredName: string): ReturnType<Scene['kept']> =>
  (READS === 'vendor' ? before : before.map((x) => (x.id === id ? { ...x, name: declaredName } : x)));

test('1. adoption + rollback: the adopted subscription gets its name back and is released; the adopted legacy pipeline is not deleted', async () => {
  const before = s.kept(ids);
  const legacyBefore = s.legacyPipelines();
  const dir = app('adopt-fail', 'Adopter', (stack, connection) => {
    const adopted = orders(stack, connection, 'Adopted', { existingSubscriptionId: by.orders, name: 'orders (stack)' });
    const old = legacy(stack, connection);
    // Refused by the service's product record (inactive): fails after both adoptions are done.
    const retired = new Subscription(stack, 'Retired', { connection, productId: 3003, name: 'retired' });
    retired.node.addDependency(adopted, old);
  });
  const r = await s.deploy(dir);
  expect(r.success).toBe(false);
  expect(failures(r).join('\n')).toMatch(/CREATE_FAILED Retired.*3003/);
  expect(stackStatus(r, 'Adopter')).toBe('ROLLBACK_COMPLETE');
  const changing = await s.changing();
  // The adoption changed the name (so the rollback had something to give back), and nothing was created or deleted.
  expect(changing).toContain(`PATCH /v2/sub/${by.orders} 200`);
  expect(changing.filter((c) => c.startsWith('POST') || c.startsWith('DELETE'))).toEqual([]);
  expect(s.kept(ids)).toEqual(afterRelease(before, by.orders, 'orders (stack)'));
  expect(s.legacyPipelines()).toEqual(legacyBefore);
  expect(s.records(by.orders).map((x) => x.state)).toEqual(['released']);
  expect(s.records(8601).map((x) => x.state)).toEqual(['released']);
  if (READS === 'minimal') expect(JSON.stringify(s.records(by.orders)[0].doc.unrestored ?? [])).toContain('name');
  expect(newOrders()).toEqual([]);
});

test('2a. adoption + destroy: the adopted subscription and the legacy pipeline stay active (RETAIN by default), released', async () => {
  const before = s.kept(ids);
  const legacyBefore = s.legacyPipelines();
  const dir = app('adopt', 'Adopter', (stack, connection) => {
    orders(stack, connection, 'Adopted', { existingSubscriptionId: by.orders, name: 'orders (stack)' });
    legacy(stack, connection);
  });
  const r = await s.deploy(dir);
  expect(failures(r)).toEqual([]);
  expect(r.success).toBe(true);
  expect(emu.state().subscriptions.find((x) => x.id === by.orders)!.name).toBe('orders (stack)');
  const template = JSON.parse(readFileSync(join(dir, 'Adopter.template.json'), 'utf8')) as
    { Resources: Record<string, { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string }> };
  const custom = Object.values(template.Resources).filter((x) => x.Type.startsWith('Custom::Dpi'));
  // The construct side: RemovalPolicy rendered (retain for adoptions), DeletionPolicy Delete so the handler sees the Delete.
  expect(custom.map((x) => [x.Type, x.Properties.RemovalPolicy, x.DeletionPolicy ?? 'Delete'])).toEqual([
    ['Custom::DpiSubscription', 'retain', 'Delete'], ['Custom::DpiLegacyNotificationPipeline', 'retain', 'Delete'],
  ]);

  await s.admin('DELETE', '/requests');
  const d = await s.deploy(undefined, { destroy: true });
  expect(failures(d)).toEqual([]);
  expect(d.success).toBe(true);
  expect(d.events.filter((e) => e.status === 'DELETE_COMPLETE' && e.type.startsWith('Custom::')).map((e) => e.logicalId).sort()).toEqual([
    expect.stringMatching(/^Adopted/), expect.stringMatching(/^Legacy/),
  ]);
  expect((await s.changing()).filter((c) => !c.startsWith(`PATCH /v2/sub/${by.orders} `))).toEqual([]);
  expect(s.kept(ids)).toEqual(afterRelease(before, by.orders, 'orders (stack)'));
  expect(s.legacyPipelines()).toEqual(legacyBefore);
  expect(s.records(by.orders).map((x) => x.state)).toEqual(['released']);
  expect(s.records(8601).map((x) => x.state)).toEqual(['released']);
});

test('2b. adoption + destroy with removalPolicy DESTROY (the documented choice): the destroy ends both', async () => {
  const before = s.kept(ids);
  const dir = app('adopt-destroy', 'Adopter', (stack, connection) => {
    orders(stack, connection, 'Adopted', { existingSubscriptionId: by.orders, name: 'orders (stack)', removalPolicy: RemovalPolicy.DESTROY });
    legacy(stack, connection, { removalPolicy: RemovalPolicy.DESTROY });
  });
  const r = await s.deploy(dir);
  expect(failures(r)).toEqual([]);
  const d = await s.deploy(undefined, { destroy: true });
  expect(failures(d)).toEqual([]);
  expect(d.success).toBe(true);
  const after = s.kept(ids);
  expect(after.find((x) => x.id === by.orders)!.status).toBe('invalid');
  expect(after.find((x) => x.id === 8601)!.status).toBe('invalid');
  expect(s.legacyPipelines()).toEqual([]);
  expect((await s.changing()).filter((c) => c.startsWith('DELETE /service/sp/notifications/364/8601 '))).toHaveLength(1);
  // Every other bystander as it was.
  const others = (k: ReturnType<Scene['kept']>): ReturnType<Scene['kept']> => k.filter((x) => x.id !== by.orders && x.id !== 8601);
  expect(others(after)).toEqual(others(before));
  expect(s.records(by.orders).map((x) => x.state)).toEqual(['deleted']);
  expect(s.records(8601).map((x) => x.state)).toEqual(['deleted']);
});

test('2c. adoption + destroy with the embedded emulator (at another port for the destroy): the release still gives the name back', async () => {
  // The service of the embedded runs: emulator-state.json beside the state, with the web UI's records made first.
  const file = join(s.dir, 'emulator-state.json');
  mkdirSync(s.dir, { recursive: true });
  const service = async <T>(f: (x: Scene) => Promise<T> | T): Promise<T> => {
    // The web UI is another client of the service: its requests count in no window of the provider's.
    const e = await startEmulator({ host: '127.0.0.1', port: 0, reads: READS, stateFile: file, otherClients: true });
    try {
      return await f(new Scene(e, s.dir));
    } finally {
      await e.stop();
    }
  };
  const [mine, before] = await service(async (x) => {
    const b = await x.uiBystanders();
    return [b, x.kept([b.orders, b.paused, b.ads, b.storage, 8601])] as const;
  });
  const dir = app('adopt-embedded', 'Adopter', (stack, connection) => {
    orders(stack, connection, 'Adopted', { existingSubscriptionId: mine.orders, name: 'orders (stack)' });
    legacy(stack, connection);
  });
  const r = await s.deploy(dir, { embedded: true });
  expect(failures(r)).toEqual([]);
  expect(await service((x) => x.kept([mine.orders])[0].name)).toBe('orders (stack)');
  // The embedded emulator listens where the last run's did when it can: someone else takes that port, so the destroy
  // meets the service at another address.
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(Number(new URL(r.emulatorUrl!).port), '127.0.0.1', resolve));
  const d = await s.deploy(undefined, { destroy: true, embedded: true }).finally(() => new Promise((resolve) => squatter.close(resolve)));
  expect(failures(d)).toEqual([]);
  expect(d.emulatorUrl).not.toBe(r.emulatorUrl);
  expect(s.records(mine.orders).map((x) => x.state)).toEqual(['released']);
  // Under the spec's reads the name cannot be restored (no read showed it): the record must say so.
  if (READS === 'minimal') expect(JSON.stringify(s.records(mine.orders)[0].doc.unrestored ?? [])).toContain('name');
  expect(await service((x) => x.kept(before.map((k) => k.id)))).toEqual(afterRelease(before, mine.orders, 'orders (stack)'));
});

test('3. RETAIN + dpi orphans --fix: a released subscription is no orphan, --fix changes nothing, another stack adopts it', async () => {
  const before = s.kept(ids);
  const dir = app('retain', 'Keeper', (stack, connection) => {
    orders(stack, connection, 'Kept', { name: 'kept orders', removalPolicy: RemovalPolicy.RETAIN });
  });
  const r = await s.deploy(dir);
  expect(failures(r)).toEqual([]);
  const id = Number(physical(r, 'Kept'));
  const d = await s.deploy(undefined, { destroy: true });
  expect(failures(d)).toEqual([]);
  expect(d.success).toBe(true);
  // CloudFormation sends the Delete (DeletionPolicy Delete): the handler releases, no service call ends it.
  expect(d.events.some((e) => e.status === 'DELETE_COMPLETE' && e.logicalId.startsWith('Kept'))).toBe(true);
  expect(emu.state().subscriptions.find((x) => x.id === id)!.status).toBe('active');
  expect(s.records(id).map((x) => x.state)).toEqual(['released']);

  await s.admin('DELETE', '/requests');
  const service = JSON.stringify(emu.state().subscriptions);
  const listed = await s.dpi(['orphans', '--local', '--state', s.stateFile]);
  expect([listed.code, listed.stderr]).toEqual([0, '']);
  expect(listed.stdout).toMatch(/^no orphans: /);
  const fixed = await s.dpi(['orphans', '--local', '--state', s.stateFile, '--fix', '--yes']);
  expect([fixed.code, fixed.stdout, fixed.stderr]).toEqual([0, expect.stringMatching(/^no orphans: /), '']);
  expect(await s.changing()).toEqual([]);
  expect(JSON.stringify(emu.state().subscriptions)).toBe(service);
  expect(s.records(id).map((x) => x.state)).toEqual(['released']);

  // Another stack (same state file, same journal) adopts the released subscription.
  const again = app('adopt-released', 'Second', (stack, connection) => {
    orders(stack, connection, 'Again', { existingSubscriptionId: id, name: 'kept orders' });
  });
  const a = await s.deploy(again);
  expect(failures(a)).toEqual([]);
  expect(a.success).toBe(true);
  expect(physical(a, 'Again')).toBe(String(id));
  expect(s.journal().find((x) => x.pk === `claim#sub#${id}`)!.owner).toMatch(/^Second\/Again/);
  const d2 = await s.deploy(undefined, { destroy: true });
  expect(failures(d2)).toEqual([]);
  expect(emu.state().subscriptions.find((x) => x.id === id)!.status).toBe('active');
  expect(s.kept(ids)).toEqual(before);
});

test('4. an update that adds a parameter and stage IDs, then an unrelated failure: UPDATE_ROLLBACK_COMPLETE, the kept keys recorded and reported', async () => {
  const before = s.kept(ids);
  const v1 = app('v1', 'Params', (stack, connection) => {
    orders(stack, connection, 'Orders', { name: 'orders' });
  });
  const r1 = await s.deploy(v1);
  expect(failures(r1)).toEqual([]);
  const id = Number(physical(r1, 'Orders'));
  const v2 = app('v2', 'Params', (stack, connection) => {
    const o = orders(stack, connection, 'Orders', { name: 'orders', productParameters: { marketplace_id: 'ATVPDKIKX0DER', seller_note: 'n1' }, stageIds: [1001] });
    orders(stack, connection, 'Later', { name: 'later' }).node.addDependency(o);
  });
  // The Later subscription's POST is refused (after the Orders update was applied).
  await s.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 400, count: 1 });
  const r2 = await s.deploy(v2);
  await s.admin('DELETE', '/faults');
  expect(r2.success).toBe(false);
  expect(failures(r2).join('\n')).toMatch(/CREATE_FAILED Later/);
  expect(failures(r2).filter((f) => !f.startsWith('CREATE_FAILED Later'))).toEqual([]);
  expect(stackStatus(r2, 'Params')).toBe('UPDATE_ROLLBACK_COMPLETE');
  const sub = emu.state().subscriptions.find((x) => x.id === id)!;
  expect(sub.status).toBe('active');
  // The service keeps the added keys (a partial merge cannot remove them); the journal records them under `kept`.
  expect(sub.product_parameters).toMatchObject({ seller_note: 'n1', stage_ids: '[1001]' });
  const rec = s.records(id).filter((x) => x.state === 'active');
  expect(rec).toHaveLength(1);
  expect(rec[0].doc.kept).toEqual({ seller_note: 'n1', stage_ids: '[1001]' });
  const drift = await s.dpi(['drift', '--local', '--state', s.stateFile]);
  expect(drift.stderr).toBe('');
  expect(drift.stdout).toMatch(/productParameters\.seller_note \(kept by the service/);
  expect(drift.stdout).toMatch(/productParameters\.stage_ids \(kept by the service/);
  expect(newOrders()).toEqual([id]);
  expect(s.kept(ids)).toEqual(before);
  const d = await s.deploy(undefined, { destroy: true });
  expect(failures(d)).toEqual([]);
  expect(newOrders('active')).toEqual([]);
  expect(s.kept(ids)).toEqual(before);
});

test('5. a 403 on GET /sub/{id} during an update and a destroy: the operation fails naming the account; nothing is created or marked deleted', async () => {
  const before = s.kept(ids);
  const v = (name: string): string => app(name.replace(/ /g, '-'), 'Guarded', (stack, connection) => {
    orders(stack, connection, 'Orders', { name });
  });
  const r1 = await s.deploy(v('first name'));
  expect(failures(r1)).toEqual([]);
  const id = Number(physical(r1, 'Orders'));
  await s.admin('DELETE', '/requests');
  await s.admin('POST', '/faults', { method: 'GET', pathPrefix: `/sub/${id}`, status: 403, count: 1 });
  const r2 = await s.deploy(v('second name'));
  await s.admin('DELETE', '/faults');
  expect(r2.success).toBe(false);
  expect(stackStatus(r2, 'Guarded')).toBe('UPDATE_ROLLBACK_COMPLETE');
  expect(failures(r2).join('\n')).toMatch(/UPDATE_FAILED Orders.*403.*account 1001/);
  expect((await s.changing()).filter((c) => c.startsWith('POST'))).toEqual([]);
  expect(newOrders()).toEqual([id]);
  expect(emu.state().subscriptions.find((x) => x.id === id)!.name).toBe('first name');
  expect(s.records(id).map((x) => x.state)).toEqual(['active']);

  await s.admin('POST', '/faults', { method: 'GET', pathPrefix: `/sub/${id}`, status: 403, count: 50 });
  const d1 = await s.deploy(undefined, { destroy: true });
  await s.admin('DELETE', '/faults');
  expect(d1.success).toBe(false);
  expect(failures(d1).join('\n')).toMatch(/DELETE_FAILED Orders.*403.*account 1001/);
  expect(emu.state().subscriptions.find((x) => x.id === id)!.status).toBe('active');
  expect(s.records(id).map((x) => x.state)).toEqual(['active']);
  expect((await s.changing()).filter((c) => c.startsWith('POST') || c.startsWith(`PATCH /v2/sub/${id}`))).toEqual([]);

  const d2 = await s.deploy(undefined, { destroy: true });
  expect(failures(d2)).toEqual([]);
  expect(d2.success).toBe(true);
  expect(emu.state().subscriptions.find((x) => x.id === id)!.status).toBe('invalid');
  expect(s.records(id).map((x) => x.state)).toEqual(['deleted']);
  expect(s.kept(ids)).toEqual(before);
});

test.each([
  { count: 1, skip: 0 }, { count: 1, skip: 1 }, { count: 3, skip: 0 }, { count: 3, skip: 1 },
])('6. three concurrent creates of product 3001, POST /v2/sub answers lost (%o): each resource its own, the UI-made one untouched', async (fault) => {
  const before = s.kept(ids);
  const dir = app(`many-${fault.count}-${fault.skip}`, 'Many', (stack, connection) => {
    for (const name of ['One', 'Two', 'Three']) orders(stack, connection, name, { name: `orders ${name.toLowerCase()}` });
  });
  await s.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, ...fault });
  const r = await s.deploy(dir, { concurrency: 3 });
  const unused = ((await s.admin('GET', '/faults')) as { faults: Array<{ count?: number }> }).faults;
  await s.admin('DELETE', '/faults');
  const posts = await s.requests((x) => x.method === 'POST' && x.path === '/v2/sub');
  expect({ failures: failures(r), posts }).toEqual({ failures: [], posts });
  expect(r.success).toBe(true);
  // Every answer the fault could drop was lost (3 POSTs after `skip`), and the handler saw each loss.
  const lost = Math.min(fault.count, 3 - fault.skip);
  expect(unused.reduce((sum, f) => sum + (f.count ?? 1), 0)).toBe(fault.count - lost);
  expect(readFileSync(join(s.dir, 'handler.log'), 'utf8').split('\n').filter((l) => l.includes('the subscription create had no clear outcome')))
    .toHaveLength(lost);
  const made = ['One', 'Two', 'Three'].map((p) => Number(physical(r, p)));
  expect(new Set(made).size).toBe(3);
  expect(newOrders('active')).toEqual([...made].sort());
  expect(newOrders()).toEqual([...made].sort());
  // Each resource holds the subscription of its own name (the admin view shows what each POST sent).
  const names = made.map((id) => emu.state().subscriptions.find((x) => x.id === id)!.name);
  expect(names).toEqual(['orders one', 'orders two', 'orders three']);
  expect(made.map((id) => s.journal().find((x) => x.pk === `claim#sub#${id}`)?.owner?.replace(/[0-9A-F]{8}$/, ''))).toEqual([
    'Many/One', 'Many/Two', 'Many/Three',
  ]);
  expect(s.kept(ids)).toEqual(before);

  const d = await s.deploy(undefined, { destroy: true });
  expect(failures(d)).toEqual([]);
  expect(newOrders('active')).toEqual([]);
  expect(newOrders('invalid')).toEqual([...made].sort());
  expect(s.kept(ids)).toEqual(before);
});
