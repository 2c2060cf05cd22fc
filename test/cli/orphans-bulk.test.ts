/**
 * `dpi orphans` at fleet scale: its service reads are bulk. A journal of 300 and of 2,000 records (a fleet's unified
 * pipelines, plus subscriptions, history requests, order jobs and legacy pipelines; every stack gone) is judged against
 * the real emulator in both read modes with no rate limit, and the requests the emulator saw are counted: at most
 * 0.2 per journal record, exactly the count docs/cli.md states ("dpi orphans", calls per run), with a per-record GET
 * only for an ID its listing does not show, and the same verdicts and holdings as record-by-record reads would give.
 */
import { fakeCloudFormation } from './fake-cloudformation';
import { clearRequests, dpi, requests } from './helpers';
import { orphansSeams } from '../../src/cli/commands/orphans';
import { JOB_LISTING_IDS } from '../../src/cli/commands/orphans-holdings';
import { DpiClient, endpointsFromBase } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, ReadMode, RunningEmulator, startEmulator, SubscriptionFixture } from '../../src/emulator';
import { dynamoJournal, Journal } from '../../src/handler/journal';
import { JournalServer, startJournalServer } from '../../src/local/journal-server';

jest.setTimeout(300_000);

const HISTORY = '/service/history/production/history';
/** Records besides the fleet's pipelines: 5 subscriptions, 5 history requests, 5 order jobs, 5 legacy pipelines. */
const OTHERS = 20;
/** Fleet pipelines whose subscription is `invalid`, and whose subscription the service does not show at all. */
const INVALID = 5;
const ABSENT = ['990001', '990002'];

interface Listed { key: string; verdict: string; holds: string }
interface Report { orphans: Listed[]; retained: Listed[]; refused: Listed[] }

const fixture = (id: number, product: number, status = 'active'): SubscriptionFixture => ({
  id, account: 1001, user: 2001, product, status, date_start: '2026-01-01T00:00:00Z', remote_identity: 362, storage_group: 501,
});

/** A yesterday's date (a history request's day). */
const yesterday = (): string => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

interface Scenario {
  emu: RunningEmulator;
  server: JournalServer;
  /** Subscriptions of the connection's account (what the subscription listing pages over). */
  accountSubscriptions: number;
}

/** The service and the journal of `n` records (`n - OTHERS` fleet pipelines), every stack gone. */
async function scenario(reads: ReadMode, n: number): Promise<Scenario> {
  const pipelines = n - OTHERS;
  const fleetSubs = Array.from({ length: pipelines - ABSENT.length }, (_, i) => fixture(500_001 + i, 107, i < INVALID ? 'invalid' : 'active'));
  const orderSubs = Array.from({ length: 5 }, (_, i) => fixture(600_001 + i, 3001));
  const legacySubs = Array.from({ length: 5 }, (_, i) => fixture(700_001 + i, 86));
  const emu = await startEmulator({ host: '127.0.0.1', port: 0, reads, rateLimit: 'off', fixtures: { subscriptions: [...fleetSubs, ...orderSubs, ...legacySubs], historyMaxRequests: 10 } });
  const server = await startJournalServer().catch(async (e: unknown) => {
    await emu.stop();
    throw e;
  });
  try {
    await fill(emu, server, fleetSubs, orderSubs, legacySubs);
  } catch (e) {
    await server.stop();
    await emu.stop();
    throw e;
  }
  const accountSubscriptions = emu.state().subscriptions.filter((s) => s.account === 1001).length;
  return { emu, server, accountSubscriptions };
}

/** The journal's records (and the history requests they name). */
async function fill(emu: RunningEmulator, server: JournalServer, fleetSubs: SubscriptionFixture[], orderSubs: SubscriptionFixture[],
  legacySubs: SubscriptionFixture[]): Promise<void> {
  const journal: Journal = dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
  const client = new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });
  const creates: Array<() => Promise<unknown>> = [];
  const fleetIds = [...fleetSubs.map((s) => String(s.id)), ...ABSENT];
  fleetIds.forEach((sub, i) => creates.push(() => journal.create(`Fleet/Pipeline${i}`, 'active',
    { identity: String(10_000 + i), selection: { types: ['ORDER_CHANGE'], region: 'us-east-1' }, subscriptionId: sub }, `pipeline-${i}`)));
  for (const [i, s] of orderSubs.entries()) {
    const sub = String(s.id);
    const h = await client.history.create(sub, { dates: [yesterday()] });
    const job = emu.state().jobs.find((j) => j.subscription_id === s.id && j.is_primary)!;
    creates.push(
      () => journal.create(`App/Orders${i}`, 'active', { product: 3001, identity: '362', subscriptionId: sub }, sub),
      () => journal.create(`App/Backfill${i}`, 'active', { request: '[]', subscriptionId: sub }, String(h.id)),
      () => journal.create(`App/Reprocess${i}`, 'active', { primaryJobId: job.id, jobIds: [job.id], submitted: ['o-1', 'o-2'], subscriptionId: sub }, job.id),
    );
  }
  for (const [i, s] of legacySubs.entries()) {
    creates.push(() => journal.create(`App/Legacy${i}`, 'active',
      { identity: '364', applied: { queueArn: 'arn:aws:sqs:us-east-1:123456789012:legacy', types: ['ORDER_CHANGE'] } }, String(s.id)));
  }
  for (let i = 0; i < creates.length; i += 50) await Promise.all(creates.slice(i, i + 50).map((c) => c()));
}

beforeEach(() => {
  orphansSeams.cloudFormation = fakeCloudFormation([]);
  orphansSeams.stdinIsTTY = () => false;
});
afterEach(() => {
  orphansSeams.cloudFormation = undefined;
});

describe.each([['minimal' as ReadMode], ['vendor' as ReadMode]])('%s reads', (reads) => {
  test.each([[300], [2000]])('%i journal records: at most 0.2 requests per record, and the calls-per-run formula holds', async (n) => {
    const { emu, server, accountSubscriptions } = await scenario(reads, n);
    try {
      await clearRequests(emu);
      const r = await dpi(['orphans', '--endpoint', server.endpoint, '--region', 'us-east-1', '--json'],
        { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(1);
      expect(r.stdout).not.toContain(DEFAULT_REFRESH_TOKEN);
      const seen = await requests(emu);

      // The verdicts and holdings, as reads record by record would give them.
      const report = JSON.parse(r.stdout) as Report;
      expect([report.orphans.length, report.retained.length, report.refused.length]).toEqual([n - 5, 5, 0]);
      const holds = new Map([...report.orphans, ...report.retained].map((o) => [o.key, o.holds]));
      expect(holds.get('Fleet/Pipeline0')).toBe('nothing live (subscription invalid)');
      expect(holds.get(`Fleet/Pipeline${INVALID}`)).toBe('active pipeline: ORDER_CHANGE in us-east-1 (subscription active)');
      expect(holds.get(`Fleet/Pipeline${n - OTHERS - 1}`)).toBe('nothing live (subscription gone)');
      for (let i = 0; i < 5; i++) {
        expect(holds.get(`App/Orders${i}`)).toBe('subscription (product 3001) active, 1 open history request');
        expect(holds.get(`App/Backfill${i}`)).toBe('open history request (pending)');
        expect(holds.get(`App/Reprocess${i}`)).toBe('2 order IDs in 1 listed job (jobs have no delete: they end with the subscription)');
        expect(holds.get(`App/Legacy${i}`)).toBe('legacy pipeline subscription active');
      }

      // Reads only (and the token exchange); a subscription GET only for the IDs the listing does not show; no history
      // request read on its own (its subscription's listing shows it); one job listing for the 5 subscriptions.
      expect(seen.filter((x) => x.method !== 'GET').map((x) => `${x.method} ${x.path}`)).toEqual(['POST /auth/api/ref']);
      expect(seen.filter((x) => /^\/(v2\/)?sub\/\d+$/.test(x.path)).map((x) => x.path).sort()).toEqual(ABSENT.map((id) => `/sub/${id}`));
      expect(seen.filter((x) => x.path.startsWith(`${HISTORY}/`) && !x.path.startsWith(`${HISTORY}/status/`))).toEqual([]);
      const jobListings = seen.filter((x) => x.path === '/service/jobs/jobs');
      expect(jobListings).toHaveLength(Math.ceil(5 / JOB_LISTING_IDS));
      expect(jobListings[0].query.subscription_ids.split(',').sort()).toEqual(['600001', '600002', '600003', '600004', '600005']);
      const listingPages = seen.filter((x) => x.path === '/v2/sub');
      // Both read modes page lists (100 a page, the client's page_size).
      expect(listingPages).toHaveLength(Math.ceil(accountSubscriptions / 100));

      // docs/cli.md: 1 (token) + subscription listing pages + one GET per subscription the listing does not show + one
      // history listing per subscription whose history is read (5 subscriptions, with their 5 history requests; 5 legacy)
      // + one job listing per 100 subscriptions of order-jobs records.
      const formula = 1 + listingPages.length + ABSENT.length + 10 + Math.ceil(5 / JOB_LISTING_IDS);
      expect(seen).toHaveLength(formula);
      expect(seen.length / n).toBeLessThanOrEqual(0.2);
      // For the report: the measured count.
      process.stdout.write(`dpi orphans (${reads} reads): ${n} journal records, ${seen.length} service requests (${(seen.length / n).toFixed(3)} per record)\n`);
    } finally {
      await server.stop();
      await emu.stop();
    }
  });
});
