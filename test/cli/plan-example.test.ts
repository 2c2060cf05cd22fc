/**
 * `dpi plan --local` end to end on the example app (examples/app.ts) against an emulator: each change is planned, then
 * deployed with `dpi local-deploy`'s runner; the plan names the right action and its calls are exactly the changing
 * calls the deploy then makes (the emulator's request log). A name change is an update in place, a notification-type
 * change that keeps a queue type too, one that removes every queue type a rebuild (naming the queue that goes away), a
 * product change a replacement (naming the subscription that becomes invalid); --fail-on replace gates on the last only.
 */
import { join } from 'node:path';
import { clearRequests, dpi, requests, testNoSecretsPrinted } from './helpers';
import { changingCalls, ExampleChange, synthExample, unmatchedCalls } from './plan-apps';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { DEFAULT_FIXTURES } from '../../src/emulator/default-fixtures';
import type { PlanEntry } from '../../src/handler/plan-types';
import { runLocalDeploy } from '../../src/local';
import { tempDir } from '../local/helpers';

jest.setTimeout(300_000);

const NEW_PRODUCT = 3004;
const SELLER_TYPES = 'ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE,REPORT_PROCESSING_FINISHED';
let emu: RunningEmulator;
let work: { dir: string; cleanup: () => void };
let step = 0;
const state = (): string => join(work.dir, 'state', 'local-state.json');

interface PlanDoc { entries: PlanEntry[]; summary: Record<string, number>; failures: number }

async function plan(app: string, extra: string[] = []): Promise<{ code: number; doc: PlanDoc; stderr: string }> {
  const r = await dpi(['plan', '--local', '--state', state(), '--app', app, '--json', ...extra]);
  return { code: r.code, doc: JSON.parse(r.stdout) as PlanDoc, stderr: r.stderr };
}

async function deploy(app: string): Promise<void> {
  const r = await runLocalDeploy({
    app,
    emulatorUrl: emu.url,
    stateFile: state(),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    pollIntervalMs: 20,
    progress: () => undefined,
    output: () => undefined,
  });
  expect(r.error).toBeUndefined();
  expect(r.events.filter((e) => e.status.endsWith('_FAILED')).map((e) => `${e.logicalId}: ${e.reason}`)).toEqual([]);
  expect(r.success).toBe(true);
}

/** Synthesizes the change, plans it, deploys it; returns the changed entries and the calls left unmatched on each side. */
interface Planned { changed: PlanEntry[]; doc: PlanDoc; unmatched: { planned: string[]; made: string[] } }

async function planThenDeploy(change: ExampleChange): Promise<Planned> {
  const app = synthExample(join(work.dir, `v${++step}`), { sellerTypes: SELLER_TYPES, ...change });
  const { code, doc, stderr } = await plan(app);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  await clearRequests(emu);
  await deploy(app);
  const made = changingCalls(await requests(emu));
  // Deployed: the same app plans no change.
  const again = await plan(app);
  expect(again.doc.entries.filter((e) => e.action !== 'no-change').map((e) => `${e.logicalId} ${e.action}`)).toEqual([]);
  return { changed: doc.entries.filter((e) => e.action !== 'no-change'), doc, unmatched: unmatchedCalls(doc.entries, made) };
}

beforeAll(async () => {
  work = tempDir('dpi-plan-example-');
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
  // Product 3004: a second orders product (as 3001, with the example's stages) for the product change.
  const orders = DEFAULT_FIXTURES.products!.find((p) => p.id === 3001)!;
  const res = await fetch(`${emu.url}/_emulator/fixtures`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      products: [{ ...orders, id: NEW_PRODUCT, name: 'Marketplace Orders v2' }],
      payloads: [1000, 1001, 1002].map((stage) => ({ id: `${NEW_PRODUCT}${stage}`, product: NEW_PRODUCT, name: `p${stage}`, stage_id: stage, enabled: true })),
    }),
  });
  expect(res.status).toBe(200);
  const app = synthExample(join(work.dir, 'v0'), { sellerTypes: SELLER_TYPES });
  // Before the first deploy every resource is a create, and the calls are the creates the deploy makes.
  const first = await plan(app);
  // No state yet: said on stderr (a mistyped --state would otherwise pass a gate as all creates).
  expect(first.stderr).toContain(`dpi plan: no local-deploy state at ${state()}: nothing is deployed there`);
  expect(first.doc.entries.length).toBe(5);
  expect(first.doc.entries.every((e) => e.action === 'create')).toBe(true);
  await clearRequests(emu);
  await deploy(app);
  expect(unmatchedCalls(first.doc.entries, changingCalls(await requests(emu)))).toEqual({ planned: [], made: [] });
});
afterAll(async () => {
  await emu.stop();
  work.cleanup();
});

test('a subscription name change is an update in place: one PATCH of the live subscription, nothing else', async () => {
  const { changed, unmatched } = await planThenDeploy({ ordersName: 'orders-us-renamed' });
  expect(changed.map((e) => [e.type, e.action])).toEqual([['Custom::DpiSubscription', 'update']]);
  expect(changed[0].changes.map((c) => c.prop)).toEqual(['name']);
  expect(changed[0].calls.map((c) => c.method)).toEqual(['PATCH']);
  expect(changed[0].calls[0].path).toBe(`/v2/sub/${changed[0].physicalId}`);
  expect(unmatched).toEqual({ planned: [], made: [] });
});

test('a notification-type change that keeps a queue type is an update in place', async () => {
  const { changed, unmatched } = await planThenDeploy({ ordersName: 'orders-us-renamed', sellerTypes: 'ORDER_CHANGE,REPORT_PROCESSING_FINISHED' });
  expect(changed.map((e) => [e.logicalId.replace(/[0-9A-F]{8}$/, ''), e.action])).toEqual([['SellerNotifications', 'update']]);
  expect(changed[0].changes.map((c) => c.prop)).toEqual(['notificationTypes']);
  expect(unmatched).toEqual({ planned: [], made: [] });
});

test('a notification-type change that removes every queue type is a rebuild, naming the queue that goes away', async () => {
  const { changed, unmatched } = await planThenDeploy({ ordersName: 'orders-us-renamed', sellerTypes: 'ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE' });
  expect(changed.map((e) => [e.logicalId.replace(/[0-9A-F]{8}$/, ''), e.action])).toEqual([['SellerNotifications', 'rebuild']]);
  expect(changed[0].effects.join('\n')).toMatch(/queue/);
  expect(changed[0].effects.join('\n')).toContain('362');
  expect(unmatched).toEqual({ planned: [], made: [] });
});

test('a product change is a replacement naming the subscription that becomes invalid; --fail-on replace gates on it alone', async () => {
  const before = synthExample(join(work.dir, 'gate-update'), { sellerTypes: 'ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE', ordersName: 'other-name' });
  const update = await dpi(['plan', '--local', '--state', state(), '--app', before, '--fail-on', 'replace']);
  expect(update.stdout).toMatch(/^\s+update\s/m);
  expect(update.code).toBe(0);

  const app = synthExample(join(work.dir, 'gate-replace'), { sellerTypes: 'ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE', ordersName: 'orders-us-renamed', ordersProduct: NEW_PRODUCT });
  const gate = await dpi(['plan', '--local', '--state', state(), '--app', app, '--fail-on', 'replace']);
  expect(gate.code).toBe(1);
  // The subscription and what is bound to it (its backfill and order jobs are made anew for the new subscription).
  expect(gate.stderr).toContain('--fail-on: 3 resources planned to replace');
  expect(gate.stdout).toMatch(/replace\s+MarketplaceData\/Orders\s/);
  expect(gate.stdout).toMatch(/replace\s+MarketplaceData\/OrdersBackfill\s/);
  // Bound to the live subscription (its ID is the emulator's: concurrent creates reach it in any order).
  const live = /MarketplaceData\/Orders\s+\(Subscription (\d+)\)/.exec(gate.stdout)?.[1];
  expect(live).toMatch(/^\d+$/);
  expect(gate.stdout).toContain(`subscription: ${live} -> {OrdersA9B65338.SubscriptionId after the deploy}`);
  expect(gate.stdout).toMatch(/Plan: 0 create, 0 update, 0 rebuild, 3 replace, 0 delete, 0 retain, 2 no-change/);
  const other = await dpi(['plan', '--local', '--state', state(), '--app', app, '--fail-on', 'delete,rebuild']);
  expect(other.code).toBe(0);
  const bad = await dpi(['plan', '--local', '--state', state(), '--app', app, '--fail-on', 'explode']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("--fail-on: 'explode' is not an action");

  const { changed, unmatched, doc } = await planThenDeploy({ sellerTypes: 'ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE', ordersName: 'orders-us-renamed', ordersProduct: NEW_PRODUCT });
  const orders = changed.find((e) => e.type === 'Custom::DpiSubscription')!;
  expect(orders.action).toBe('replace');
  expect(orders.constructPath).toBe('MarketplaceData/Orders');
  expect(orders.changes.map((c) => [c.prop, c.to, c.effect])).toContainEqual(['productId', String(NEW_PRODUCT), 'replace']);
  expect(orders.effects.join('\n')).toContain(`subscription ${orders.physicalId} becomes invalid`);
  expect(doc.summary.replace).toBe(3);
  // What references the subscription (the backfill and the order jobs) follows it: planned as the deploy handles it.
  expect(unmatched).toEqual({ planned: [], made: [] });
});

testNoSecretsPrinted();
