/**
 * The subscription monitor (`index.monitor`) against the emulator: by default (no `Source` in the event, the input
 * of every monitor synthesized without `source`) it reads transactions only, even where the healthchecks listing is
 * served: the exact EMF lines (the same classification as `dpi status`); the cases where the listing would say
 * healthy and transactions alarm stay alarms by default; a subscription that cannot be read. The opt-in listing
 * source: monitor-healthchecks.test.ts.
 */
import { HandlerHarness, useHandlerHarness } from './helpers';
import { runDpi } from '../../src/cli/program';
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
/** The service calls of the run: method and path, without the token exchange and the account lookup (at most one). */
async function calls(): Promise<string[]> {
  const all = (await h.requests()).filter((x) => x.path !== '/auth/api/ref');
  expect(all.filter((x) => x.path === '/account').length).toBeLessThanOrEqual(1);
  return all.filter((x) => x.path !== '/account').map((x) => `${x.method} ${x.path.startsWith(HC_PREFIX) ? HC_PREFIX : x.path}`);
}

interface EmfDirective { Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }
interface Emf { _aws: { CloudWatchMetrics: EmfDirective[] }; [k: string]: unknown }

test('by default (no Source): EMF lines per payload and per subscription from the transactions, the same classification as dpi status; no listing call although it is served', async () => {
  const sub = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  await seed(sub);
  await h.clearRequests();
  const r = await monitor({ Connection: h.connection as never, Subscriptions: [{ id: sub, label: 'orders-us' }] });
  // One transaction page: the minimum; the healthchecks listing is not read unless asked for.
  expect(r).toEqual({ subscriptions: 1, failed: 0, calls: 1 });
  expect(await calls()).toEqual(['GET /service/transactions/tx']);
  expect(h.logs.some((l) => l.includes('"msg":"monitor run"') && l.includes('"healthchecks":"not asked"'))).toBe(true);

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

/** The subscription-level line of each subscription in the run, by ID. */
const totals = (): Record<string, Emf> => Object.fromEntries(lines.map((l) => JSON.parse(l) as Emf).filter((e) => !e.Payload)
  .map((e) => [e.SubscriptionId as string, e]));

test('do no harm: where the listing would say healthy, the default (transactions) still alarms; the opt-in listing differs as documented', async () => {
  const now = Math.floor(Date.now() / 1000);
  // A: a day in ERROR followed by a loaded day (the listing's latest is OK).
  const a = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  // B: three days of NO_DATA (each is an OK healthcheck; nothing loaded).
  const b = await h.subscribe(3001, 362, { marketplace_id: 'A1F83G8C2ARO7P' });
  // C: orders loaded (a healthcheck record); fees stuck in progress for a day (no healthcheck record of its own).
  const c = await h.subscribe(3001, 362, { marketplace_id: 'A1PA6795UKMFR9' });
  await h.admin('POST', '/tx', [
    { id: 'a1', subscription_id: Number(a), payload_name: 'orders', sender: 'zeroadmin', status: 'ERROR', timestamp: now - 90_000, attribution_date: day(2) },
    { id: 'a2', subscription_id: Number(a), payload_name: 'orders', sender: 'zeroadmin', status: 'PROCESSED', timestamp: now - 3_600, attribution_date: day(1) },
    ...[1, 2, 3].map((d) => ({
      id: `b${d}`, subscription_id: Number(b), payload_name: 'orders', sender: 'zeroadmin', status: 'NO_DATA', timestamp: now - d * 86_400 + 7_200, attribution_date: day(d),
    })),
    { id: 'c1', subscription_id: Number(c), payload_name: 'orders', sender: 'zeroadmin', status: 'PROCESSED', timestamp: now - 3_600, attribution_date: day(1) },
    { id: 'c2', subscription_id: Number(c), payload_name: 'fees', sender: 'ftpsync', status: 'IN_PROGRESS', timestamp: now - 80_000, attribution_date: day(1) },
  ]);
  const event = { Connection: h.connection as never, Subscriptions: [{ id: a }, { id: b }, { id: c }] };

  await h.clearRequests();
  expect(await monitor(event)).toEqual({ subscriptions: 3, failed: 0, calls: 3 });
  expect(await calls()).toEqual(Array(3).fill('GET /service/transactions/tx'));
  const byTx = totals();
  expect(Object.values(byTx).map((e) => e.Source)).toEqual(['transactions', 'transactions', 'transactions']);
  expect(byTx[a].ErrorRecords).toBe(1); // the ERROR record still counts
  expect(byTx[b].FreshnessHours).toBe(72); // nothing loaded in the window
  expect(byTx[c].InProgressRecords).toBe(1); // the fees payload is seen
  const feesLine = lines.map((l) => JSON.parse(l) as Emf).find((e) => e.SubscriptionId === c && e.Payload === 'fees');
  expect(feesLine).toMatchObject({ InProgressRecords: 1, FreshnessHours: 72 });

  // Opt-in (the construct's MonitorSource.HEALTHCHECKS): one listing call, and the documented differences.
  lines.length = 0;
  await h.clearRequests();
  expect(await monitor({ ...event, Source: 'HEALTHCHECKS' })).toEqual({ subscriptions: 3, failed: 0, calls: 1 });
  expect(await calls()).toEqual([`GET ${HC_PREFIX}`]);
  const byList = totals();
  expect(Object.values(byList).map((e) => e.Source)).toEqual(['healthchecks', 'healthchecks', 'healthchecks']);
  expect(byList[a].ErrorRecords).toBe(0);
  expect(byList[b].FreshnessHours as number).toBeLessThan(72);
  expect(lines.some((l) => (JSON.parse(l) as Emf).Payload === 'fees')).toBe(false);
});

test('an unknown Source, or TRANSACTIONS, reads transactions like no Source', async () => {
  const sub = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  await seed(sub);
  for (const Source of ['TRANSACTIONS', 'transactions', 'bogus']) {
    lines.length = 0;
    await h.clearRequests();
    const r = await monitor({ Connection: h.connection as never, Subscriptions: [{ id: sub }], Source });
    expect(r).toEqual({ subscriptions: 1, failed: 0, calls: 1 });
    expect([Source, await calls()]).toEqual([Source, ['GET /service/transactions/tx']]);
    expect([Source, totals()[sub].ErrorRecords]).toEqual([Source, 1]);
  }
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

test('a connection without usable addresses is refused: the run fails and publishes nothing', async () => {
  await expect(monitor({ Connection: {} as never, Subscriptions: [{ id: '1' }, { id: '2' }] })).rejects.toThrow('nothing was read or published');
  expect(lines).toEqual([]);
  expect(h.logs.join('\n')).toMatch(/monitor run refused.*Connection.BaseUrl is missing/);
});
