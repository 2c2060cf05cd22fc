/**
 * The subscription monitor reading the account's healthchecks listing once per run, when asked (`Source:
 * 'HEALTHCHECKS'`, the construct's `MonitorSource.HEALTHCHECKS`): the metrics of that source, the
 * fallback to transactions for a subscription without a healthcheck record and where the route answers 404 or
 * fails, and the service calls per run counted from the emulator's request log (50 subscriptions: 1 call vs 51).
 */
import { HandlerHarness, useHandlerHarness } from './helpers';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { monitor as runMonitor, setMetricSink } from '../../src/handler/monitor';

let h: HandlerHarness;

/** A run as its rule sends it: the function is bound to it (as the construct binds it). */
const monitor = (event: Parameters<typeof runMonitor>[0]): ReturnType<typeof runMonitor> => runMonitor(h.bindRun(event));
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

let lines: string[];
let restore: (line: string) => void;
beforeEach(() => {
  lines = [];
  restore = setMetricSink((l) => lines.push(l));
});
afterEach(() => setMetricSink(restore));

const HC_PREFIX = '/service/healthchecks/';
const TX = '/service/transactions/tx';
interface Emf { _aws: { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> }; [k: string]: unknown }
const emf = (): Emf[] => lines.map((l) => JSON.parse(l) as Emf);
const metricNames = (e: Emf): string[] => e._aws.CloudWatchMetrics[0].Metrics.map((m) => m.Name);

/** Service calls of the run by kind (the token exchange and the one account lookup, if any, left out). */
async function callCounts(): Promise<{ healthchecks: number; transactions: number; other: number }> {
  const all = (await h.requests()).filter((x) => x.path !== '/auth/api/ref');
  expect(all.filter((x) => x.path === '/account').length).toBeLessThanOrEqual(1);
  const rest = all.filter((x) => x.path !== '/account');
  const healthchecks = rest.filter((x) => x.path.startsWith(HC_PREFIX)).length;
  const transactions = rest.filter((x) => x.path === TX).length;
  return { healthchecks, transactions, other: rest.length - healthchecks - transactions };
}

async function seedSubscriptions(n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => 9500 + i);
  await h.admin('POST', '/fixtures', { subscriptions: ids.map((id) => ({ id, account: 1001, user: 2001, product: 3001, name: `s${id}` })) });
  const now = Math.floor(Date.now() / 1000);
  await h.admin('POST', '/tx', ids.map((id, i) => ({
    id: `t${id}`, subscription_id: id, payload_name: 'orders', sender: 'zeroadmin', status: i % 10 === 0 ? 'ERROR' : 'PROCESSED', timestamp: now - 600,
  })));
  return ids.map(String);
}

test('from the listing: ErrorRecords = payloads whose latest is ERROR, FreshnessHours from the latest OK, no InProgressRecords; one call', async () => {
  const sub = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  const now = Math.floor(Date.now() / 1000);
  await h.admin('POST', '/tx', [
    // orders: an ERROR, then a later load by another TX -> OK (latest), 30 minutes ago
    { id: 'o1', subscription_id: Number(sub), payload_name: 'orders', sender: 'zeroadmin', status: 'ERROR', timestamp: now - 7200 },
    { id: 'o2', subscription_id: Number(sub), payload_name: 'orders', sender: 'zeroadmin', status: 'PROCESSED', timestamp: now - 1800 },
    // fees: loaded, then an ERROR -> ERROR; still in progress after it (not known to the listing)
    { id: 'f1', subscription_id: Number(sub), payload_name: 'fees', sender: 'zeroadmin', status: 'PROCESSED', timestamp: now - 9000 },
    { id: 'f2', subscription_id: Number(sub), payload_name: 'fees', sender: 'zeroadmin', status: 'ERROR', timestamp: now - 3600 },
    { id: 'f3', subscription_id: Number(sub), payload_name: 'fees', sender: 'ftpsync', status: 'IN_PROGRESS', timestamp: now - 60 },
  ]);
  await h.clearRequests();
  const r = await monitor({ Connection: h.connection as never, Source: 'HEALTHCHECKS', Subscriptions: [{ id: sub, label: 'orders-us' }] });
  expect(r).toEqual({ subscriptions: 1, failed: 0, calls: 1 });
  expect(await callCounts()).toEqual({ healthchecks: 1, transactions: 0, other: 0 });

  const all = emf();
  expect(all.every((e) => e.Source === 'healthchecks' && e.SubscriptionId === sub)).toBe(true);
  const byPayload = Object.fromEntries(all.filter((e) => e.Payload).map((e) => [e.Payload as string, e]));
  expect(Object.keys(byPayload).sort()).toEqual(['fees', 'orders']);
  expect(byPayload.fees).toMatchObject({ ErrorRecords: 1, FreshnessHours: 72 });
  expect(byPayload.orders).toMatchObject({ ErrorRecords: 0 });
  expect(byPayload.orders.FreshnessHours as number).toBeGreaterThanOrEqual(0.4);
  expect(byPayload.orders.FreshnessHours as number).toBeLessThanOrEqual(0.6);
  for (const e of all) expect(e).not.toHaveProperty('InProgressRecords');
  const total = all.find((e) => !e.Payload)!;
  expect(total).toMatchObject({ ErrorRecords: 1, FreshnessHours: byPayload.orders.FreshnessHours, MonitorFailed: 0, MonitorCalls: 0 });
  expect(metricNames(total)).toEqual(['ErrorRecords', 'FreshnessHours', 'MonitorFailed', 'MonitorCalls']);
  expect(h.logs.some((l) => l.includes('"msg":"monitor run"') && l.includes('"fromHealthchecks":1'))).toBe(true);
  expect(lines.join('\n') + h.logs.join('\n')).not.toContain(DEFAULT_REFRESH_TOKEN);
});

test('a monitored subscription without a healthcheck record is read from its transactions; the others from the listing', async () => {
  const [withRecord] = await seedSubscriptions(1);
  const without = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  const now = Math.floor(Date.now() / 1000);
  // Only work in progress: no healthcheck record, but the transactions show it.
  await h.admin('POST', '/tx', { id: 'p1', subscription_id: Number(without), payload_name: 'orders', sender: 'supervisor', status: 'PROCESSING', timestamp: now - 60 });
  await h.clearRequests();
  const r = await monitor({ Connection: h.connection as never, Source: 'HEALTHCHECKS', Subscriptions: [{ id: withRecord }, { id: without }] });
  expect(r).toEqual({ subscriptions: 2, failed: 0, calls: 2 });
  expect(await callCounts()).toEqual({ healthchecks: 1, transactions: 1, other: 0 });
  const totals = emf().filter((e) => !e.Payload);
  expect(totals.map((e) => [e.SubscriptionId, e.Source, e.MonitorCalls])).toEqual([[withRecord, 'healthchecks', 0], [without, 'transactions', 1]]);
  expect(totals[1]).toMatchObject({ InProgressRecords: 1, ErrorRecords: 0, FreshnessHours: 72 });
});

test('a listing that fails (500) is a warning, and every subscription is read from its transactions', async () => {
  const ids = await seedSubscriptions(3);
  await h.admin('POST', '/faults', { pathPrefix: HC_PREFIX, status: 500, count: 1_000_000 });
  const r = await monitor({ Connection: h.connection as never, Source: 'HEALTHCHECKS', Subscriptions: ids.map((id) => ({ id })) });
  expect(r.failed).toBe(0);
  expect(emf().filter((e) => !e.Payload).map((e) => [e.Source, e.ErrorRecords])).toEqual([['transactions', 1], ['transactions', 0], ['transactions', 0]]);
  expect(h.logs.some((l) => l.includes('could not read the healthchecks listing'))).toBe(true);
});

test('calls per run, 50 monitored subscriptions: 1 listing call with the route, 1 + 50 without it; the same errors either way', async () => {
  const ids = await seedSubscriptions(50);
  const event = { Connection: h.connection as never, Source: 'HEALTHCHECKS', Subscriptions: ids.map((id) => ({ id })) };
  const errorsOf = (): string[] => emf().filter((e) => !e.Payload && (e.ErrorRecords as number) > 0).map((e) => e.SubscriptionId as string);

  await h.clearRequests();
  const withRoute = await monitor(event);
  const withCalls = await callCounts();
  const withErrors = errorsOf();
  expect(withRoute).toEqual({ subscriptions: 50, failed: 0, calls: 1 });
  expect(withCalls).toEqual({ healthchecks: 1, transactions: 0, other: 0 });

  lines.length = 0;
  await h.admin('POST', '/faults', { pathPrefix: HC_PREFIX, status: 404, count: 1_000_000 });
  await h.clearRequests();
  const withoutRoute = await monitor(event);
  const withoutCalls = await callCounts();
  expect(withoutRoute).toEqual({ subscriptions: 50, failed: 0, calls: 51 });
  expect(withoutCalls).toEqual({ healthchecks: 1, transactions: 50, other: 0 });
  expect(withoutCalls.transactions).toBeGreaterThanOrEqual(50);
  // Every 10th subscription has its only payload in ERROR: both sources say so.
  expect(withErrors).toEqual(ids.filter((_, i) => i % 10 === 0));
  expect(errorsOf()).toEqual(withErrors);
});
