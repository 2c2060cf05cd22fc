/**
 * The subscription monitor (`index.monitor`) against the emulator: seeded TX reports, the exact EMF lines from the
 * transactions (the healthchecks route answering 404: the same classification as `dpi status`) and from the
 * healthchecks listing, calls per run with and without the route, and a subscription that cannot be read.
 */
import { HandlerHarness, useHandlerHarness } from './helpers';
import { runDpi } from '../../src/cli/program';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { monitor, setMetricSink } from '../../src/handler/monitor';

let h: HandlerHarness;
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

const day = (ago: number): string => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);

async function seed(sub: string): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const reports = [
    // yesterday: orders loaded (root + loaded leaf), fees still in progress
    { id: 'r1', sender: 'scheduler', status: 'PROCESSED', timestamp: now - 900, attribution_date: day(1), children: ['r1-orders', 'r1-fees'] },
    { id: 'r1-orders', sender: 'zeroadmin', status: 'PROCESSED', timestamp: now - 600, parent: 'r1', payload_name: 'orders' },
    { id: 'r1-fees', sender: 'ftpsync', status: 'IN_PROGRESS', timestamp: now - 300, parent: 'r1', payload_name: 'fees' },
    // two days ago: fees in ERROR, orders loaded
    { id: 'r2-orders', sender: 'zeroadmin', status: 'PROCESSED', timestamp: now - 90_000, attribution_date: day(2), payload_name: 'orders' },
    { id: 'r2-fees', sender: 'zeroadmin', status: 'ERROR', timestamp: now - 89_000, attribution_date: day(2), payload_name: 'fees', error_code: 'E42', error_message: 'denied' },
  ];
  for (const r of reports) await h.admin('POST', '/tx', { subscription_id: Number(sub), ...r });
}

const HC_PREFIX = '/service/healthchecks/';
/** Makes the healthchecks route answer 404 (a service that does not serve it) until the next reset. */
async function withoutHealthchecks(): Promise<void> {
  await h.admin('POST', '/faults', { pathPrefix: HC_PREFIX, status: 404, count: 1_000_000 });
}
/** The service calls of the run: method and path, without the token exchange and the account lookup (at most one). */
async function calls(): Promise<string[]> {
  const all = (await h.requests()).filter((x) => x.path !== '/auth/api/ref');
  expect(all.filter((x) => x.path === '/account').length).toBeLessThanOrEqual(1);
  return all.filter((x) => x.path !== '/account').map((x) => `${x.method} ${x.path.startsWith(HC_PREFIX) ? HC_PREFIX : x.path}`);
}

interface EmfDirective { Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }
interface Emf { _aws: { CloudWatchMetrics: EmfDirective[] }; [k: string]: unknown }

test('without the healthchecks route: EMF lines per payload and per subscription from the transactions, the same classification as dpi status', async () => {
  const sub = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  await seed(sub);
  await withoutHealthchecks();
  await h.clearRequests();
  const r = await monitor({ Connection: h.connection as never, Subscriptions: [{ id: sub, label: 'orders-us' }] });
  // The listing's 404 and one transaction page: the minimum.
  expect(r).toEqual({ subscriptions: 1, failed: 0, calls: 2 });
  expect(await calls()).toEqual([`GET ${HC_PREFIX}`, 'GET /service/transactions/tx']);

  const emf = lines.map((l) => JSON.parse(l) as Emf);
  expect(emf).toHaveLength(3);
  for (const e of emf) {
    expect(e._aws.CloudWatchMetrics[0].Namespace).toBe('DataPipelineIntegration');
    expect(e.SubscriptionId).toBe(sub);
    expect(e.Source).toBe('transactions');
  }
  const byPayload = Object.fromEntries(emf.filter((e) => e.Payload).map((e) => [e.Payload as string, e]));
  expect(byPayload.fees).toMatchObject({ ErrorRecords: 1, InProgressRecords: 1, FreshnessHours: 72 });
  expect(byPayload.orders).toMatchObject({ ErrorRecords: 0, InProgressRecords: 0 });
  expect(byPayload.orders.FreshnessHours as number).toBeLessThanOrEqual(24);
  const total = emf.find((e) => !e.Payload)!;
  expect(total).toMatchObject({ ErrorRecords: 1, InProgressRecords: 1, MonitorFailed: 0, MonitorCalls: 1 });
  expect(total.FreshnessHours).toBe(byPayload.orders.FreshnessHours);
  expect(total._aws.CloudWatchMetrics[0].Dimensions).toEqual([['SubscriptionId']]);
  expect(total._aws.CloudWatchMetrics[0].Metrics.map((m) => m.Name))
    .toEqual(['ErrorRecords', 'InProgressRecords', 'FreshnessHours', 'MonitorFailed', 'MonitorCalls']);

  // dpi status over the same records: the same errors and in-progress records per payload.
  let out = '';
  const code = await runDpi(['status', '--subscription', sub, '--json'], {
    env: { DPI_BASE_URL: h.emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN },
    stdout: { write: (t: string) => { out += t; } },
    stderr: { write: () => undefined },
    isTTY: false,
  });
  expect(code).toBe(1); // a record in ERROR
  const cells = (JSON.parse(out) as { cells: Array<{ payload_name: string; counts: Record<string, number> }> }).cells;
  for (const payload of ['orders', 'fees']) {
    const mine = cells.filter((c) => c.payload_name === payload);
    expect([payload, byPayload[payload].ErrorRecords]).toEqual([payload, mine.reduce((n, c) => n + (c.counts.error ?? 0), 0)]);
    expect([payload, byPayload[payload].InProgressRecords])
      .toEqual([payload, mine.reduce((n, c) => n + (c.counts['in-progress'] ?? 0) + (c.counts.retrying ?? 0), 0)]);
  }
  // No secret in any metric line or log line.
  expect(lines.join('\n') + h.logs.join('\n')).not.toContain(DEFAULT_REFRESH_TOKEN);
});

test('a subscription that cannot be read is a MonitorFailed metric and a log line; the others are still read', async () => {
  const good = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  const r = await monitor({ Connection: h.connection as never, Subscriptions: [{ id: '999999' }, { id: good }] });
  expect(r.failed).toBe(1);
  const emf = lines.map((l) => JSON.parse(l) as Emf);
  expect(emf[0]).toMatchObject({ SubscriptionId: '999999', MonitorFailed: 1 });
  expect(emf.find((e) => e.SubscriptionId === good && !e.Payload)).toMatchObject({ MonitorFailed: 0, FreshnessHours: 72, ErrorRecords: 0 });
  expect(h.logs.some((l) => l.includes('the monitor could not read the subscription') && l.includes('999999'))).toBe(true);
});

test('a broken connection fails no run: every subscription is reported as failed', async () => {
  const r = await monitor({ Connection: {} as never, Subscriptions: [{ id: '1' }, { id: '2' }] });
  expect(r).toEqual({ subscriptions: 2, failed: 2, calls: 0 });
  expect(lines.map((l) => (JSON.parse(l) as Emf).MonitorFailed)).toEqual([1, 1]);
});
